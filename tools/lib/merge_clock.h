/* SPDX-License-Identifier: MIT */
/*
 * The clocks of `ringtrace merge`: the clock sync measurements of MPI ranks (README,
 * "Clock sync"), the piecewise-linear map of a rank's clock onto the reference
 * rank's that they give, and the controlled logical clock that restores the order of
 * a message whose receive still comes before its send after that map.
 *
 * Measurements. The MPI module writes one "ringtrace: clock sync" event per
 * measurement: at_ns (this rank's clock, absolute), offset_ns (reference - this, at
 * at_ns), error_ns (the offset is right within it) and rtt_ns (the least round
 * trip; files without error_ns are right within rtt_ns / 2). They are found before
 * the merge by a scan of the raw text for their name (gzip undone by zlib), which
 * runs at the speed of memmem rather than of the JSON reader, and parsed from the
 * line around each hit: the recorder and the tools write one event per line.
 *
 * The map. Between two measurements the offset is interpolated linearly, so a drift
 * of the rank's clock is followed; before the first and after the last it is that
 * measurement's. A measurement that would make the clock run faster or slower than
 * Linux ever slews CLOCK_MONOTONIC (MAX_SLEW_PPM, beyond what the error bounds of
 * the two explain) is an outlier and dropped, the one of the two with the larger error;
 * so the map stays monotonic. More than MAX_SYNCS measurements are thinned, keeping
 * the better of each pair, so a rank that syncs every second for a week costs the
 * same memory as one that syncs a thousand times.
 *
 * The controlled logical clock (Scalasca's CLC, forward amortization only). When a
 * message's receive on thread T is at r but its send at s > r - l (l: the minimum
 * latency), T's events from r on are moved forward: by the jump d = s + l - r at r,
 * then less and less, d - (t - r) / CLC_DECAY at t, until the move is 0. The move is
 * a function of time, so the begin and end of one slice, and a slice and the events
 * inside it, keep their order whatever order the lines come in; and t + move(t)
 * never decreases, so durations shrink by at most 1 / CLC_DECAY while a move lasts.
 * A later jump is made only where it is larger than what is left of the earlier
 * one, and then it is the larger for ever after (same slope): the move at t is that
 * of the latest jump at or before t, found from the newest. CLC_JUMPS jumps are kept
 * per thread; a time before the oldest kept gets no move, which can only move a
 * slice's begin less than its children's, never reverse an order.
 *
 * Thread safety: none; one merge per thread.
 */
#ifndef RTR_TOOLS_MERGE_CLOCK_H
#define RTR_TOOLS_MERGE_CLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest rate at which Linux slews CLOCK_MONOTONIC (adjtimex), in ppm: a pair
 * of measurements implying more is an outlier. */
#define MAX_SLEW_PPM 500

/* Measurements kept per rank before they are thinned. */
#define MAX_SYNCS 1024

/* A move decays by 1 ns per CLC_DECAY ns of the thread's time after its jump. */
#define CLC_DECAY 10

/* Jumps kept per thread. */
#define CLC_JUMPS 256

struct clock_sync {
	int64_t at_ns;	   /* the rank's clock, absolute */
	int64_t offset_ns; /* reference clock - the rank's, at at_ns */
	int64_t rtt_ns;	   /* the least round-trip time of the measurement */
	int64_t error_ns;  /* the offset is right within this (rtt_ns / 2 at worst) */
};

struct sync_set {
	struct clock_sync *m; /* in time order once sync_finish() ran */
	size_t n, cap;
	int64_t reference_rank; /* of the first usable measurement */
	uint64_t found;		/* events of this rank found */
	uint64_t unusable;	/* malformed, another reference rank, not after the last */
	uint64_t outliers;	/* dropped by sync_finish() */
	uint64_t thinned;	/* dropped to stay within MAX_SYNCS */
	size_t cursor;		/* where sync_offset() looked last */
};

/*
 * Scan the trace at path for the clock sync events of rank into s (which starts
 * zeroed). 0; -1 when the file cannot be read (errno-style message in err); -2 out
 * of memory.
 */
int sync_scan(const char *path, int64_t rank, struct sync_set *s, char *err, size_t err_len);

struct trace;

/*
 * The same from the events of an open trace (a Perfetto trace, whose text is not
 * JSON): each event's JSON is the line. A trace that stops at malformed input keeps
 * what was found before it. Returns as sync_scan().
 */
int sync_scan_trace(struct trace *t, int64_t rank, struct sync_set *s, char *err, size_t err_len);

/* Add the measurements of from (the same process: another segment of its trace) to
 * into, in time order, dropping repeats. 0, or -1 out of memory. */
int sync_pool(struct sync_set *into, const struct sync_set *from);

/* A copy of from into the empty to. 0, or -1 out of memory. */
int sync_copy(struct sync_set *to, const struct sync_set *from);

/* Drop the outliers (see above). */
void sync_finish(struct sync_set *s);

/* The offset at the rank's absolute time at (s->n > 0). */
int64_t sync_offset(struct sync_set *s, int64_t at);

/* The largest RTT and the largest error bound of the kept measurements. */
void sync_bounds(const struct sync_set *s, int64_t *max_rtt, int64_t *max_error);

/* The drift between the first and the last measurement, in parts per billion. */
int64_t sync_drift_ppb(const struct sync_set *s);

void sync_free(struct sync_set *s);

/* The jumps of one thread. */
struct clc_thread {
	int64_t at[CLC_JUMPS], jump[CLC_JUMPS];
	unsigned n, newest;
};

/* The move of the thread's time t (0 when it has no jump at or before t). */
int64_t clc_move(const struct clc_thread *c, int64_t t);

/* Make the move at t at least need (need > clc_move(c, t)); t not before the newest
 * jump (a jump at an earlier t is made at the newest's). */
void clc_jump(struct clc_thread *c, int64_t t, int64_t need);

#endif /* RTR_TOOLS_MERGE_CLOCK_H */
