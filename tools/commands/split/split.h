/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace split`: a trace cut into self-contained pieces under the viewers' limits
 * (chrome://tracing fails past about 256 MB or a million events, the Perfetto UI
 * near 2 GB), PREFIX-0001.json, PREFIX-0002.json, ..., each a complete, strict
 * bare array that `ringtrace check` passes.
 *
 * One streaming pass; events are copied in file order, and a piece is cut before the
 * event that would take it over the limit. Each piece:
 *
 * - begins with a start marker: the original's (origin, host, rank, ...) with
 *   "piece" and "ts_from" added, at the time the piece begins, so that a viewer does
 *   not stretch every piece back to 0 (and `merge` still finds the origin);
 * - repeats every M event seen so far (process and thread names, sort indexes,
 *   labels), the latest of each per process or thread, so that every lane is named;
 * - reopens the B slices the previous piece closed, outermost first, each with its
 *   original B (name, cat, args) at its thread's latest B or E (the innermost
 *   --max-reopen of a thread: the E events of the others are left out), and the
 *   async spans likewise (b events);
 * - holds the file's events from the cut on, X events in the piece where they appear;
 * - closes what is open at its end: an E per open B, innermost first, 1 ns after its
 *   thread's latest event other than an X and the end of every X begun inside it
 *   (see slices.c), and an e per open async span after the latest time of all;
 * - ends with an end marker: piece number, its time range and counts (and, in the
 *   last piece, the original end marker's counts), then the closing ']'.
 *
 * Why the thread's own latest time, not one cut time for all threads: the recorder
 * drains each thread's ring in turn, so a file is in time order per thread but not
 * across threads; an E or a reopened B at a time another thread reached would go
 * backward against the thread's next events. A reopened span's b is at the span's own
 * latest time for the same reason.
 *
 * Flow events. `check` and the viewers bind a flow event to a slice around it on its
 * thread, and that slice must be in the same piece. The recorder writes a thread's X
 * when it ends, after the flow events inside it, and a track's flow ends just after
 * their X. So a flow event that nothing encloses yet is held back until the X or B
 * that encloses it (and then written just before it); held at a cut, it moves to the
 * next piece once, and is written anyway at the end of that one. And an X waits for
 * the next event: the flow events right after it that it encloses go into the same
 * piece as it. A flow whose s and f fall in two pieces stays joined: each piece up
 * to its f repeats its s (split_repeat_flows()), with the X around it or inside the
 * reopened B around it; at most MAX_OPEN_FLOWS are kept.
 *
 * Memory: state per thread (open slices, held flows), per open async span and per M
 * event kept; never per event.
 *
 * The files (this header holds what they share):
 *   split.c   the command: options, the prefix, what it says when done;
 *   take.c    each event of the input placed: copied, held (an X and its flows, an
 *             end marker), or tracked (open slices and spans);
 *   pieces.c  the pieces: what fits, their markers, their beginning (names, the
 *             slices and spans reopened) and their end (what is open, closed);
 *   slices.c  the open slices across a cut: what reopening costs, where a cut's E
 *             and B events go (the cut times), the async spans;
 *   flows.c   flow events bound to a slice in the same piece: held until one
 *             encloses them, and repeated after a cut.
 */
#ifndef RTR_TOOLS_SPLIT_H
#define RTR_TOOLS_SPLIT_H

#include "carry.h"
#include "json.h"
#include "merge_json.h"
#include "table.h"
#include "threads.h"
#include "trace.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Recent slices per thread that place a flow event, as `check` keeps them. */
#define RECENT_SLICES 16
/* Flow events held per thread before the oldest is written anyway. */
#define MAX_HELD_FLOWS 4096
/* Room kept in each piece for its end marker. */
#define END_RESERVE 4096
/* What an E or e that closes a slice can take beyond its escaped strings (which take
 * at most 6 bytes per byte, as \u00XX). */
#define CLOSE_BYTES 128
#define MB	    1000000u
/* Flow events kept with the X before them. */
#define MAX_X_FLOWS 64
/* Flows begun and not ended that a cut repeats, in all (the oldest are forgotten). */
#define MAX_OPEN_FLOWS 256

/* What a flow event written encloses: an X (its JSON), the innermost open B of its
 * thread, or nothing known. */
struct flow_slice {
	const char *x;
	size_t x_len;
	bool by_b;
	uint64_t b_line; /* open_slice.line of that B */
};

/* The value of split.flows, under (cat, name, id): a flow whose s was written and whose
 * f was not yet, to repeat its s (and the X around it) in the next piece. */
struct open_flow {
	char *s, *x; /* the s event; the X around it, or NULL */
	size_t s_len, x_len;
	bool by_b;
	uint64_t b_line;
	int64_t pid, tid;
};

struct interval {
	int64_t start, end;
};

struct held_flow {
	char *json;
	size_t len;
	int64_t ts_ns;
	unsigned piece; /* the piece it was held in */
};

/* Per thread, after its thread_state (threads.h). */
struct split_thread {
	struct interval recent[RECENT_SLICES];
	unsigned nrecent, next_recent;
	struct held_flow *held;
	size_t nheld, held_cap;
	/* The outermost open slices not reopened in this piece (beyond --max-reopen):
	 * open[0 .. absent). Their E events are left out of it. */
	size_t absent;
	/* The X last written on the thread, to repeat it around a flow's s. */
	struct buf last_x;
	int64_t last_x_start, last_x_end;
	/* Times that place a cut's E and B events on the thread (see slices.c): the
	 * latest B or E, the latest event other than an X, and per open slice the latest
	 * end of an X that began inside it (inner_end[i] for open[i]). */
	bool has_be, has_plain;
	int64_t be_ns, plain_ns;
	int64_t *inner_end;
	size_t inner_cap;
};

/*
 * An X not yet written, and the flow events right after it that it encloses: the
 * recorder writes a track's flow ends just after their X, so both go into one piece
 * (a flow in the next piece would have no slice around it there).
 */
struct pending_x {
	bool active;
	int64_t pid, tid, start, end;
	bool has_pid;
	struct buf json;	      /* the X, then each flow event */
	size_t ends[MAX_X_FLOWS + 1]; /* where each ends in json */
	int64_t flow_ts[MAX_X_FLOWS];
	size_t n; /* events in json, the X included */
};

struct split {
	const char *file;
	uint64_t max_events, max_bytes; /* 0: no limit */
	uint64_t max_reopen;		/* slices reopened per thread at a cut */
	uint64_t not_reopened, ends_left_out;
	char *prefix;
	bool gzip;

	struct threads threads;
	struct carry carry; /* names and async spans, for the next piece */
	struct buf line, args;
	bool nomem;

	/* The original's markers. */
	bool first_seen;
	bool has_start;
	struct buf start_json;
	bool has_ids;
	int64_t marker_pid, marker_tid;
	bool held_end; /* the last end marker seen, until an event after it */
	struct buf end_json, end_args;
	bool end_has_ts;
	int64_t end_ts;

	/* All pieces. */
	unsigned piece;
	struct output *out; /* the piece being written, or NULL */
	char *path;
	bool has_latest;
	int64_t latest; /* over the whole file so far */
	uint64_t events, closed, reopened, async_closed;
	bool warned_framing;

	struct pending_x px;

	struct table flows; /* struct open_flow */
	struct buf flow_key;
	uint64_t flows_repeated, flows_forgotten, flows_unbound;

	/* The piece being written. */
	uint64_t lines, bytes;
	uint64_t piece_events;
	uint64_t close_lines, close_bytes; /* what ending it now adds: E, e, held flows */
	int64_t ts_from, ts_to;
	uint64_t piece_closed, piece_async_closed;
};

/* Out of memory: noted, and -1. */
static inline int nomem(struct split *sp)
{
	sp->nomem = true;
	return -1;
}

/* An upper bound of the E or e line that closes a slice with these strings. */
static inline uint64_t close_cost(size_t cat_len, size_t name_len, size_t id_len)
{
	return CLOSE_BYTES + 6 * (uint64_t)(cat_len + name_len) + id_len;
}

/* take.c */

/* One event of the input, into the pieces. 0 or -1 (sp->nomem, or the output's
 * error). */
int split_take(struct split *sp, const struct trace_event *ev);

/* The input ended: the flows still held, the slices left open by a cut, the last
 * marker; cut_short: what is open is ended. 0 or -1. */
int split_finish(struct split *sp, bool cut_short);

/* pieces.c */

/* One line of the piece, and its comma. 0 or -1. */
int split_write_line(struct split *sp, const char *json, size_t len);

/* A time written in the piece. */
void split_note_piece_time(struct split *sp, int64_t t);

/* Does an event of len bytes fit the piece, with what ending it then takes? */
bool split_fits(const struct split *sp, const struct trace_event *ev, uint64_t lines, uint64_t len);

/* Where the next events go (ev and lines - 1 more, len bytes in all): the first
 * piece, or a new one when they do not fit. 0 or -1. */
int split_place(struct split *sp, const struct trace_event *ev, uint64_t lines, uint64_t len);

/* Cut before the event ev: end this piece, begin the next at the cut. 0 or -1. */
int split_cut(struct split *sp, const struct trace_event *ev);

/* End the piece (see pieces.c). 0 or -1. */
int split_end_piece(struct split *sp, bool last, bool close);

/* slices.c */

/* What a slice's E costs a piece, and what reopening it costs. */
uint64_t split_slice_cost(const struct open_slice *s);
uint64_t split_reopen_cost(const struct open_slice *s);

/* An event's time, for the cut times of its thread. */
void split_note_plain_time(struct split_thread *st, const struct trace_event *ev);

/* A B was pushed: its own X ends start empty. 0 or -1. */
int split_level_pushed(struct thread_state *th, struct split_thread *st);

/* The innermost open slice is about to end: what it enclosed, its parent does. */
void split_level_popping(const struct thread_state *th, struct split_thread *st);

/* An X [start, end] on the thread: the innermost open slice it began inside. */
void split_level_x(const struct thread_state *th, struct split_thread *st, int64_t start,
		   int64_t end);

/* Where the thread's open slices are reopened in the next piece; false: nowhere known. */
bool split_reopen_time(const struct thread_state *th, const struct split_thread *st, int64_t *t);

/* An async b, e or n: the spans open, to close and reopen them at a cut. 0 or -1. */
int split_track_async(struct split *sp, const struct trace_event *ev);

/* flows.c */

/* A slice [start, end] closed on the thread: kept to place the flow events after it. */
void split_add_recent(struct split_thread *st, int64_t start, int64_t end);

/* Would `check` find a slice around a flow event at ts on this thread? */
bool split_enclosed(const struct thread_state *th, const struct split_thread *st, int64_t ts);

/* Drop the held flow event i of a thread (written, or given up). */
void split_forget_held(struct split *sp, struct split_thread *st, size_t i);

/* A flow event was written, inside in (NULL: nothing known). 0 or -1. */
int split_flow_written(struct split *sp, const char *json, size_t len, const struct flow_slice *in);

/* Hold a flow event that nothing encloses yet. 0 or -1. */
int split_hold_flow(struct split *sp, struct split_thread *st, const struct trace_event *ev);

/* Write the held flow events of a thread that [start, end] encloses (or, with all_old,
 * those held since an earlier piece). 0 or -1. */
int split_release_flows(struct split *sp, struct split_thread *st, int64_t start, int64_t end,
			bool all_old, const struct flow_slice *in);

/* At the start of a piece: the s of each flow still open, with what encloses it. 0 or
 * -1. */
int split_repeat_flows(struct split *sp);

#endif /* RTR_TOOLS_SPLIT_H */
