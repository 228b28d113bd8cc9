/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace window`: the part of a trace that overlaps a time window, as a
 * self-contained trace a viewer opens alone (a second out of a run of hours).
 *
 * What the window holds, in file order:
 *
 * - the start marker: the original's (or one made up) at the window's start, with
 *   window_from and window_to added (absolute ts, in us), so that a viewer does not
 *   stretch the window back to 0 and `merge` still finds the origin;
 * - every M event seen before the window (the latest of each kind per process or
 *   thread, carry.h), and each counter series' latest C before it, again at the
 *   window's start;
 * - every event with its ts inside [from, to], as it is; X events that overlap the
 *   window, clipped to it (--no-clip: whole); M events wherever they come;
 * - B slices open at `from`, reopened there (their B again, at `from`) just before the
 *   thread's first event in the window, and async spans likewise (their b);
 * - what is open at the end, ended at the window's end (E, innermost first; e);
 * - an end marker with the window's counts.
 *
 * Why clip: the viewers size their timeline to the events, so a whole X of an hour
 * around a window of a second would show the hour; a B/E slice open across the window
 * is ended at its edges too, and an X clipped the same way nests with it as before.
 *
 * How much is read. A gzip file, standard input, and `--exact` are read from the
 * start, in order, to the end: every name, every slice open at the window's start and
 * every X around it is found. A plain regular file of one event per line (what the
 * recorder writes) is read in parts (seek.h): its first MiB (the start marker, the
 * names written at the start, the origin), a binary search for a line before `from -
 * margin`, and from there to the end of the file every line that a glance at its
 * first keys (its phase, ts and an X's dur: seek_glance()) cannot rule out, on the
 * feed's thread; the reader parses only those. So the X of a slice around the window,
 * which the recorder writes when the slice ends (however late in the file), is found,
 * and the time goes to the lines that matter: those in the window, the names, and
 * before it the slices, spans and counters open or current at its start. What that
 * assumes, and what it misses when the assumption fails, is in
 * docs/commands/ringtrace-window.md; a warning says when the lines read were more out
 * of order than the margin.
 *
 * Memory: per thread (its open slices), per open async span, per M event and counter
 * series kept; never per event.
 *
 * The files (this header holds what they share):
 *   window.c  the command: its options, the input opened, what it says when done;
 *   read.c    the input read: in order, or a plain file in parts (its head, a
 *             search, the window's lines, its tail);
 *   held.c    counter values before the window held on the feed's thread, so that
 *             the reader parses only the last of each series;
 *   events.c  each event read: kept (names, counters, open slices and spans),
 *             written (inside the window; an X around it clipped), or passed over;
 *             and the window's start and end.
 */
#ifndef RTR_TOOLS_WINDOW_H
#define RTR_TOOLS_WINDOW_H

#include "carry.h"
#include "cli.h"
#include "json.h"
#include "threads.h"
#include "trace.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The head of a plain file, read whole; files up to HEAD_BYTES + TAIL_BYTES are read
 * in order. */
#define HEAD_BYTES (1u << 20)
#define TAIL_BYTES (1u << 20)
/* The default --margin: beyond the recorder's drain lag (its flush interval, 100 ms). */
#define DEFAULT_MARGIN_NS 250000000
#define NS_PER_S	  1000000000

/* Which part of the file an event comes from. */
enum part {
	PART_ALL,  /* read in order: everything counts */
	PART_HEAD, /* the first MiB: markers, names, the origin */
	PART_BODY  /* from before the window to the end, the lines that matter */
};

/* Per thread, after its thread_state: open[0 .. written) are in the output. */
struct window_thread {
	size_t written;
};

struct window {
	const char *file;
	/* The window as asked, from the origin; to_set false: to the end. */
	int64_t from_rel, to_rel;
	bool to_set, absolute, clip, exact;
	int64_t margin;

	/* The window in the file's ts, once the origin is known. */
	bool has_origin;
	int64_t origin, from, to;

	struct threads threads;
	struct carry carry;
	struct output *out;
	struct buf line, args;
	bool nomem;

	bool first_seen, has_start, has_ids, head_written;
	struct buf start_json;
	int64_t marker_pid, marker_tid;

	/* What was read. */
	bool has_latest;
	int64_t latest; /* the latest time read (an X's end included) */
	bool has_plain;
	int64_t plain_max, max_lag; /* events other than X: how far back one went */
	uint64_t ends_unknown;	    /* E events in the window whose B was not read */
	uint64_t async_unknown;	    /* e events in the window whose b was not read */

	/* What was written. */
	uint64_t events, clipped, reopened, closed, async_reopened, async_closed, counters;
};

struct source {
	struct cli_warnings warnings;
	uint64_t bytes; /* read from the file */
	unsigned probes;
	bool searched;
	uint64_t size;
	int rc;			/* of the last trace_next() */
	struct trace_status st; /* of the last reader */
};

/* Counter lines held on the feed's thread (held.c). */
struct held_counters {
	struct held_line *lines;
	size_t n, cap;
	uint64_t seq;
	struct buf out;
	bool failed; /* out of memory: held lines were lost */
};

/* held.c */

/* A C line before the window, glanced at (after_ts: just past its ts): held, true, or
 * false when it cannot be (it then passes in its place). */
bool window_hold_counter(struct held_counters *h, const char *line, size_t len,
			 const char *after_ts);

/* What is held, in file order, into *p, *n (valid until the next call); h empties. */
void window_held_lines(struct held_counters *h, const char **p, size_t *n);

void window_held_free(struct held_counters *h);

/* events.c */

/* An event of the given part of the file, into the window. 0, or -1 (out of memory,
 * failed output: w->nomem, or the output's error). */
int window_take(struct window *w, const struct trace_event *ev, enum part part);

/* The input is read: what is open, ended at the window's end; the end marker. 0 or
 * -1. */
int window_finish(struct window *w);

/* The times of the lines a search passed over as note_time() notes them: the latest
 * (when has_latest) and how far back they went. */
void window_note_glances(struct window *w, bool has_latest, int64_t latest, int64_t max_lag);

/* read.c */

/* Is the file at fd plain text that can be searched (a regular file, not gzip)? Its
 * size in *size. */
bool window_searchable(int fd, uint64_t *size);

/*
 * Read events from path (part PART_ALL: all of it; else a range feed's pipe) into the
 * window (see read.c). 0, or -1 (the input could not be opened: said; or the
 * window's own errors).
 */
int window_read_part(struct window *w, struct source *src, const char *path, enum part part);

/* The plain file at fd in parts: head, a search, then what matters to the end.
 * *sequential is set when the file turns out not to allow it: the caller then reads it
 * in order, nothing having been written. 0 or -1. */
int window_read_searched(struct window *w, struct source *src, int fd, bool *sequential);

#endif /* RTR_TOOLS_WINDOW_H */
