/* SPDX-License-Identifier: MIT */
/*
 * Tracks (lanes of pseudo-processes) and the process metadata the program sets.
 *
 * A track is made once, under a lock, in a fixed table, and lives until the process
 * exits: records keep a pointer to it. Producers read nothing of it but its address;
 * the clock mapping is written by the program and read by the writer (relaxed: it is
 * one value, set before the events that use it). Everything under "writer" is the
 * writer thread's alone.
 */
#ifndef RTR_TRACKS_H
#define RTR_TRACKS_H

#include <ringtrace.h>

/* Lanes per track: the lane itself and the overflow lanes that take complete
 * events partly overlapping an earlier one. */
#define RTR_TRACK_LANES 8
/* Open intervals remembered per lane (nesting depth). */
#define RTR_LANE_DEPTH 32
/* Pseudo ids start here: above any Linux pid or tid (pid_max <= 2^22). */
#define RTR_PSEUDO_ID_BASE 0x40000000u
#define RTR_NAME_MAX	   64

struct rtr__lane {
	uint64_t end[RTR_LANE_DEPTH]; /* ends of the open intervals, outermost first */
	uint32_t depth;
	uint64_t named; /* session whose file names this lane */
};

struct rtr_track {
	uint32_t pid;	     /* pseudo-process id, shared by tracks of one process */
	uint32_t tid;	     /* lane id; overflow lane k is tid + k */
	uint32_t process;    /* index in the process table */
	int lane_sort_index; /* 0: creation order */
	char lane[RTR_NAME_MAX];
	int64_t offset_ns; /* host = ts + offset_ns; relaxed, set by the program */

	/* writer */
	struct rtr__lane lanes[RTR_TRACK_LANES];
	uint64_t lanes_session;	       /* session the lane stacks belong to */
	uint64_t last_start, last_end; /* the last complete event placed, host ns */
	unsigned last_lane;
};

struct rtr__pseudo_process {
	uint32_t pid;
	int sort_index;
	char name[RTR_NAME_MAX];
	char label[RTR_NAME_MAX];
	uint64_t named_session; /* writer: session whose file names this process */
};

/* The process table entry of a track. */
const struct rtr__pseudo_process *rtr__track_process(const struct rtr_track *t);
/* Writer: mark the process of t named in `session`; returns whether it was not. */
int rtr__track_process_claim(const struct rtr_track *t, uint64_t session);

/* What RTR__K_META records set (their `a`). */
enum {
	RTR__META_PROCESS_LABEL = 1, /* ext: the copied label */
	RTR__META_PROCESS_SORT = 2,  /* ext: the index */
	RTR__META_THREAD_SORT = 3,   /* ext: the index */
};

/* The program's process label and sort index, for the start of each file. `label`
 * gets "" when none was set; returns whether a sort index was set. Writer. */
int rtr__process_meta(char label[RTR_NAME_MAX], int *sort_index);

#endif /* RTR_TRACKS_H */
