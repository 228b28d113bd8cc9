/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace merge`: one timeline from the trace files of several processes or MPI
 * ranks, streamed.
 *
 * Order. A k-way merge: one pull reader per input, and each step writes the input
 * whose next event is the earliest (its end for an X, since the recorder writes an X
 * when it ends, so that key follows each file's own order best). Each input's events
 * keep their file order, so every B/E sequence of a thread stays as it was (Catapult
 * does not sort them); the output is interleaved by time only as well as the inputs
 * are sorted, which is enough: the viewers sort, and a later `split` of the merged
 * file then cuts it into time windows across all ranks instead of rank after rank.
 * Memory is one pending event and one reader per input, never per event; with more
 * inputs than the open-files soft limit allows, the limit is raised (up to the hard
 * one).
 *
 * Clocks. Each file's times are relative to its own origin, which its start marker
 * records as absolute CLOCK_MONOTONIC and CLOCK_REALTIME nanoseconds.
 *  - MPI ranks that measured their clock against a reference rank (the MPI module's
 *    "ringtrace: clock sync" events, merge_clock.h) are mapped onto the reference's
 *    clock, piecewise linearly between their measurements, so that drift is
 *    followed (--clock sync; what auto takes when any file has measurements). A
 *    file without them is placed by its origins against the measured file of the
 *    lowest rank: on CLOCK_MONOTONIC from one host, else CLOCK_REALTIME.
 *  - Without measurements, the merged file uses the earliest input's origin: every
 *    time is shifted by (its origin - the earliest). CLOCK_MONOTONIC is one clock for
 *    every process of a host and exact, so auto takes it when all inputs name the
 *    same host; across hosts only CLOCK_REALTIME is shared (as well as NTP agrees).
 * Times are mapped in integer nanoseconds and written again with at most three
 * decimals; the merged origin is the earliest mapped file origin. An input without
 * a start marker keeps its times as they are.
 *
 * Messages. A flow of the MPI module (category "mpi" in a file with a rank; its id
 * is kept across files, below) is a message: its "f" must not come before its "s". Each "s" is
 * remembered (per message in flight, never per message) until its "f" is taken; an input whose next
 * event is an "f" whose "s" has not been taken yet waits outside the merge until it is (or until
 * the merge is STALL_NS past it, or nothing else is left: its send is then not among the inputs). A
 * receive still before its send (plus --min-latency) after the clock map moves its thread forward
 * by the controlled logical clock (merge_clock.h), and the counts go to standard error and the end
 * marker: messages, receives before their send after the map (violations), messages and events
 * moved, the largest move.
 *
 * Segments. The files of one rotated trace (start markers with the same origin,
 * host, pid and rank, and different "segment" numbers) are one process: they share
 * their output pids and their clock sync measurements, so that a segment without a
 * measurement of its own is mapped like the others.
 *
 * Processes. pids are made collision-free. Each output pid is claimed by one (input,
 * pid) pair the first time it is seen; the inputs' own pids (their start markers')
 * are claimed first, in command-line order, so they stay as they are unless two
 * inputs share one (two containers, or the same track pseudo-pids). A pid some other
 * input claimed first is remapped to a free id in a plane of its own, pid + k * 2^24
 * (k = the input's position), for every event and M event of that input; tids stay,
 * since the viewers key threads by (pid, tid) and the pids now differ. Every process
 * is named "rank R · host · original name" (the file's name when it has no rank),
 * and gets a process_sort_index of rank * 1024 (+ its own index, for pseudo-processes)
 * so that ranks appear in order.
 *
 * Flow and async ids. The viewers match them across the whole trace. Two kinds of
 * id are the same in every file and kept as they are, so that a flow from one rank
 * to another stays joined: the ids of flows in category "mpi" of a file with a rank
 * (the MPI module's message ids, a hash of communicator, ranks, tag and sequence
 * number that both ends compute), and the ids made by rtr_flow_id(), which hold the
 * pid of their process in their top 24 bits, when those bits name exactly one
 * input's pid. Every other id (hand-written files, ids of two inputs with the same
 * pid) is private to its input: it is replaced by a fresh small id, the same for
 * every event of that input with that id while its flow or async span is open.
 * State is per open flow and async span (capped; see MAX_IDS).
 *
 * Markers. The inputs' start markers are read before anything is written and left
 * out; one merged start marker at 0 carries the common origin, the clock used and
 * each input's origin, rank, host, pid and shift. Each input's last end marker is left
 * out too; the merged end marker sums their counts and lists each input's final flag.
 * A cut input gives its whole events, its open B slices ended 1 ns after its
 * thread's latest time (as `check --repair` does), and a warning.
 *
 * The files, along the data flow (this header holds what they share):
 *   merge.c      the command: options, the open-files limit, the summary;
 *   inputs.c     each input opened, its start marker read, rotated segments grouped,
 *                clock sync measurements scanned;
 *   align.c      the clock chosen and each input's map onto it; an event's times in
 *                the merged timeline;
 *   processes.c  labels, pids made collision-free, process names and sort indexes,
 *                flow and async ids kept apart;
 *   order.c      the k-way merge: the heap of inputs by their head, the receives
 *                waiting for their send, the loop;
 *   take.c       each event written (edited), end markers held, a cut input's open
 *                slices ended;
 *   markers.c    the merged start and end markers.
 */
#ifndef RTR_TOOLS_MERGE_H
#define RTR_TOOLS_MERGE_H

#include "cli.h"
#include "json.h"
#include "merge_clock.h"
#include "merge_json.h"
#include "pf_write.h"
#include "table.h"
#include "threads.h"
#include "trace.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Flow and async ids remembered per input before the oldest are forgotten: what a
 * file whose flows never end costs at most (about 100 bytes each: 25 MiB). */
#define MAX_IDS (1u << 18)

/* How far past a receive the merge goes looking for its send. */
#define STALL_NS ((int64_t)1000000000)

enum clock_choice { CLOCK_AUTO, CLOCK_MONO, CLOCK_REAL, CLOCK_SYNC, CLOCK_NONE };

/* "auto", "monotonic", ...: the --clock values, by enum clock_choice. */
extern const char *const merge_clock_names[];

/* The value of input.pids, under the original pid. */
struct pid_map {
	int64_t pid; /* in the output */
	bool remapped;
	bool main;	  /* the input's own process */
	bool seen_event;  /* an event other than M was written for it */
	bool named;	  /* a process_name was written for it */
	bool sorted;	  /* a process_sort_index was written for it */
	int64_t own_sort; /* the input's own process_sort_index, if has_own_sort */
	bool has_own_sort;
};

/* The value of merge.claims, under the output pid: who has it. */
struct claim {
	size_t input;
	int64_t pid;
};

/* The value of merge.sends, under a message's flow id: its send's times. */
struct send {
	int64_t linear_ns; /* after the clock map */
	int64_t ts_ns;	   /* as written (moved too, when its thread was) */
	bool timed;	   /* it had a time in range */
};

/* The value of input.ids, under (kind, type, id text): a private id's replacement. */
struct id_map {
	uint64_t id;
	int64_t open; /* async: b minus e */
	bool saw_s, saw_f;
};

struct input {
	size_t index;
	const char *path;
	const char *name; /* for messages */
	struct trace *r;
	struct cli_warnings warnings;
	const struct trace_event *head; /* the next event, or NULL when done */
	int64_t key;			/* its place in the merge */
	int rc;				/* the reader's last return */

	/* From the start marker. */
	bool has_start, has_mono, has_real, has_rank, has_main, has_segment;
	uint64_t segment; /* of a rotated trace (its start marker's "segment") */
	uint64_t mono, real;
	int64_t rank;
	char *host;
	int64_t main_pid, main_tid;
	char *label; /* "rank 3 · node12" */
	int64_t order;
	bool anchored;
	int64_t shift_ns;      /* merged time - file time, unless measured */
	size_t process;	       /* the first input of the same process (rotated segments) */
	struct sync_set sync;  /* its process's clock sync measurements */
	bool measured;	       /* mapped by them */
	int64_t sync_base;     /* merged time = file time + sync_base + offset */
	int64_t mapped_origin; /* its time 0 on the reference clock, absolute */
	bool has_mapped_origin;

	/* The head event's place: its times in the merged timeline. */
	bool head_set_ts, head_set_dur, head_moved, head_timed;
	int64_t head_ts, head_dur, head_linear;
	bool released;	       /* its "f" no longer waits for its send */
	size_t pos, stall_pos; /* in the ready and the waiting heap */
	struct table clc;      /* (pid, tid) -> struct clc_thread: threads with moves */
	uint64_t moved_events;

	struct table pids; /* original pid -> struct pid_map */
	struct pid_map *last_map;
	int64_t last_pid;
	struct table ids;	/* private flow and async ids */
	struct threads threads; /* open B slices and latest times, for a cut input */

	/* The last end marker seen, held until an event after it shows it was not the
	 * input's last (it is then written as an ordinary event). */
	bool held;
	struct buf held_json;
	bool held_has_ts, held_has_pid;
	int64_t held_ts, held_pid;
	bool end_seen, end_final;
	struct buf end_args; /* the input's last end marker's args */

	uint64_t events;
	struct open_slice *pushed; /* the B just taken, when known: held (take.c) */
	uint64_t slices_closed;
};

/* Heaps of input indexes by key (ties: command-line order); each input knows its
 * place in each (input.pos, input.stall_pos). */
struct heap {
	size_t *a, n;
	bool waiting;
};

struct merge {
	struct input *in;
	size_t n;
	enum clock_choice clock;
	uint64_t origin_mono, origin_real; /* of the earliest input */
	bool has_origin_mono, has_origin_real;
	const char *host; /* when every input names this one */
	struct output *out;
	struct pf_writer *pf; /* a Perfetto output (pf_write.h): the lines go there */
	struct progress *bar;
	struct buf line, text, args;
	struct table claims; /* output pid -> struct claim */
	struct table tags;   /* rtr_flow_id() tag -> inputs with that pid */
	uint64_t next_id;
	bool has_latest;
	int64_t latest;
	uint64_t written; /* event lines, markers and M events not counted */
	uint64_t closed;
	int64_t marker_pid, marker_tid;
	struct heap ready;	    /* inputs whose head can be taken, by key */
	struct heap wait;	    /* inputs whose head waits for its send, by key */
	struct buf key;		    /* of the message tables */
	struct table sends;	    /* message id -> struct send, until its receive */
	struct table waiters;	    /* message id -> input index */
	enum clock_choice fallback; /* the origins used for files without measurements */
	bool correct;		    /* apply the controlled logical clock */
	int64_t min_latency_ns;
	int64_t reference_rank, max_rtt_ns, max_error_ns;
	size_t measured; /* inputs mapped by measurements */
	uint64_t messages, violations, corrected, moved_events, unmatched, forgotten;
	int64_t max_move_ns;
	bool nomem;
};

/* a + b, or false when it does not fit. */
static inline bool add_i64(int64_t a, int64_t b, int64_t *sum)
{
	return !__builtin_add_overflow(a, b, sum);
}

/* inputs.c */

/* Open every input and read its start marker. 0, or -1 (reported). */
int merge_open_inputs(struct merge *m, char **paths, size_t n);

/* Pull the next event of an input into head; NULL at its end. */
void merge_advance(struct input *in);

/* Each input's process: the first input of the same process. 0, or -1 out of memory. */
int merge_group_processes(struct merge *m);

/* Read every ranked input's clock sync measurements (not standard input's: it
 * cannot be read twice). 0, or -1 out of memory (reported). */
int merge_scan_syncs(struct merge *m);

/* align.c */

/* Choose the clock, the common origin and each input's map onto it (warnings
 * reported). */
void merge_align(struct merge *m);

/* An input's time t in the merged timeline, before any move; false out of range. */
bool merge_linear_time(struct input *in, int64_t t, int64_t *out);

/* The moves of a thread of the input; created (zeroed: none yet) when asked. NULL:
 * none, or out of memory (then m->nomem). */
struct clc_thread *merge_moves_of(struct merge *m, struct input *in, int64_t pid, int64_t tid,
				  bool create);

/* A time of a thread of the input in the merged timeline, moves included. */
bool merge_thread_time(struct merge *m, struct input *in, int64_t pid, int64_t tid, int64_t t,
		       int64_t *linear, int64_t *out);

/* The head's times in the merged timeline, and its place in the merge. */
void merge_place_head(struct merge *m, struct input *in);

/* processes.c */

/* Each input's label ("rank 3 · node12") and place among the processes. 0 or -1. */
int merge_make_labels(struct merge *m);

/* The inputs' own pids first, in command-line order: they stay unless two share one.
 * 0 or -1. */
int merge_claim_main_pids(struct merge *m);

/* The output pid of an input's pid, claimed the first time. NULL when out of memory. */
struct pid_map *merge_pid_of(struct merge *m, struct input *in, int64_t pid);

/* Before the first event of a process that the input did not name (or sort) first. */
int merge_name_process(struct merge *m, struct input *in, struct pid_map *pm, int64_t pid);

/* The args of an input's process_name or process_sort_index, made the merge's. */
int merge_meta_args(struct merge *m, struct input *in, struct pid_map *pm,
		    const struct trace_event *ev, struct event_edit *e);

/* A flow or async id of an input: kept when global, else its private replacement. */
int merge_map_id(struct merge *m, struct input *in, const struct trace_event *ev,
		 struct event_edit *e);

/* order.c */

/* Is the event a message's send or receive? */
bool merge_is_message(const struct input *in, const struct trace_event *ev);

/* A send is taken: remembered until its receive, which may be waiting for it. */
int merge_take_send(struct merge *m, struct input *in, const struct trace_event *ev);

/* A receive is taken: after its send, its thread moved forward if it must be. */
int merge_take_receive(struct merge *m, struct input *in, const struct trace_event *ev);

/* The merge itself: every input's events, in order, written. 0 or -1. */
int merge_run(struct merge *m);

/* take.c */

/* One event line of the output, and its comma (or the event into a Perfetto
 * output). 0 or -1. */
int merge_write_line(struct merge *m, const char *json, size_t len);

/* The last line of the output, and the end of it. 0 or -1. */
int merge_write_last(struct merge *m, const char *json, size_t len);

/* Write the input's head event, edited for the merged file. 0 or -1. */
int merge_take(struct merge *m, struct input *in, const struct trace_event *ev);

/* An input has no more events: how did it end? 0 or -1. */
int merge_finish_input(struct merge *m, struct input *in);

/* markers.c */

/* The merged start marker, before every event. 0 or -1. */
int merge_write_start(struct merge *m);

/* The merged end marker and the closing ']'. 0 or -1. */
int merge_write_end(struct merge *m);

#endif /* RTR_TOOLS_MERGE_H */
