/* SPDX-License-Identifier: MIT */
/*
 * The aggregation behind `ringtrace stats` and `ringtrace diff`: one streaming pass
 * over a trace that sums its slices (X, and B/E pairs) per name, category or thread
 * (count, total, self time, and a quantile sketch of the durations), its async spans
 * per name, its counter series, its process and thread names and what the
 * recorder's end marker says it dropped. tally_nest.c opens with how self time is
 * found and what that assumes.
 *
 * State is per key, per thread, per open slice and per open async id, never per
 * event. Percentiles come from a sketch per key (sketch.h: within RTR__SKETCH_ALPHA);
 * count, total, self, min and max are exact integers of nanoseconds.
 *
 * Use: tally_init(), tally_read() a trace the caller opened, read the tables,
 * tally_destroy(), then close the reader. Nothing is printed: tally_read() returns
 * what went wrong, and the reader's status says why. Thread safety: none; one tally
 * per thread.
 */
#ifndef RTR_TOOLS_TALLY_H
#define RTR_TOOLS_TALLY_H

#include "common/names.h"
#include "common/sketch.h"
#include "json.h"
#include "table.h"
#include "tally_polls.h"
#include "threads.h"
#include "trace.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Events of disorder tolerated on a thread (see tally_nest.c). */
#define TALLY_WINDOW 16

/* What a slice row is keyed on. */
enum tally_by { BY_NAME, BY_CAT, BY_THREAD };

/* "name", "cat", "thread": the --by values, by enum tally_by. */
extern const char *const tally_by_names[3];

/* Parse a --by value. 0, or -1 when it is none of tally_by_names. */
int tally_parse_by(const char *s, enum tally_by *by);

/* The options stats and diff share. */
struct tally_options {
	enum tally_by by;
	uint64_t top; /* rows shown; 0: all */
	bool json;
};

/* The slices of one name, category or thread. */
struct row {
	uint64_t total, self;	/* ns */
	struct rtr__sketch dur; /* count, min and max exact */
	int64_t pid, tid;	/* BY_THREAD */
	uint32_t file;		/* BY_THREAD, in a sum of files (tally_sum.h) */
};

struct pending;
struct unclaimed;
struct open_b;

/* Per thread, after the shared thread_state (threads.h, whose B stack is not used:
 * it copies each B's strings, and the tally needs only hashes). */
struct tally_thread {
	struct open_b *open;
	size_t depth, open_cap;
	size_t untracked; /* B events past the state bound, innermost of all */
	struct pending *heap;
	size_t nheap, heap_cap;
	int64_t recent[TALLY_WINDOW]; /* time points of the last TALLY_WINDOW events */
	unsigned nrecent, recent_at;
	bool has_mark;
	int64_t mark;
	bool has_done; /* the last slice processed, to find late ones */
	int64_t done_start, done_end;
	struct unclaimed *u;
	size_t nu, ucap;
	uint64_t seq, slices;
	bool has_span;
	int64_t first_ns, last_ns; /* the thread's observed span */
	uint64_t busy;		   /* covered by top-level slices (after tally_read) */
};

/* A b with no e yet: the starts of the open ones under one (cat, id, name). */
struct async_open {
	int64_t ts0;
	int64_t *more; /* starts after the first, when the same key nests */
	uint32_t n, cap;
};

struct async_row {
	uint64_t total;
	struct rtr__sketch dur;
};

struct counter {
	uint64_t samples;
	double min, max;
};

struct label {
	char *name;
	size_t len;
};

#define END_COUNTS(X)                            \
	X(DROPPED, RTR__KEY_DROPPED)             \
	X(FULL, RTR__KEY_DROPPED_FULL)           \
	X(LARGE, RTR__KEY_DROPPED_LARGE)         \
	X(IO, RTR__KEY_DROPPED_IO)               \
	X(ARGS_CUT, RTR__KEY_ARGS_CUT)           \
	X(REENTRANT, RTR__KEY_DROPPED_REENTRANT) \
	X(CORRUPT, RTR__KEY_DROPPED_CORRUPT) X(NO_TRACK, RTR__KEY_DROPPED_NO_TRACK)
#define END_ENUM(id, key) END_##id,
enum { END_COUNTS(END_ENUM) END_NCOUNTS };
#undef END_ENUM

/* The end marker's arg keys, by END_*. */
extern const char *const end_keys[END_NCOUNTS];

/* The recorder's end marker: the last one in the file. */
struct end_marker {
	bool seen, has_final, final, repaired;
	bool has[END_NCOUNTS];
	uint64_t v[END_NCOUNTS];
};

/* Counts of things the tally read past; each gets a note. */
#define ANOMALIES(X)                                                                            \
	X(END_WITHOUT_BEGIN, "end_without_begin", "E without a B open on its thread (ignored)") \
	X(END_MISMATCH, "end_mismatch", "E whose name or cat is not its B's (it ends the B)")   \
	X(UNENDED, "unended", "B never ended (counted to the latest time on its thread)")       \
	X(NO_DUR, "no_dur", "X without a dur (ignored)")                                        \
	X(NEGATIVE, "negative", "slice with a negative duration (ignored)")                     \
	X(OVERLAP, "partial_overlap", "slice overlapping an earlier one partly (not nested)")   \
	X(LATE, "late", "slice too far out of order to nest (its self time is its time)")       \
	X(APPROX, "approx_self", "slice whose children's time was estimated (see --help)")      \
	X(ASYNC_UNMATCHED, "async_unmatched_end", "async e without its b (ignored)")            \
	X(ASYNC_UNENDED, "async_unended", "async b never ended (left out)")                     \
	X(NO_TS, "no_ts", "slice or async event without a numeric ts (ignored)")                \
	X(STATE_LIMIT, "state_limit",                                                           \
	  "event past the state bound of 1 M threads, names and open slices (24 MiB): not "     \
	  "counted")
#define AN_ENUM(id, key, what) AN_##id,
enum { ANOMALIES(AN_ENUM) AN_COUNT };
#undef AN_ENUM

/* Each anomaly's JSON key and its note, by AN_*. */
extern const struct anomaly_text {
	const char *key, *what;
} anomalies[AN_COUNT];

/* Completed slices waiting for a parent, per thread, before the older half is merged
 * (a warning names it). */
#define TALLY_UNCLAIMED_MAX 1024

struct tally {
	const struct tally_options *opt;
	const char *file;	       /* as messages name it: the reader's name */
	const struct trace_status *st; /* the reader's, final after tally_read() */
	struct threads threads;	       /* every event's thread (threads.h: TRACE_COUNTS_WHAT) */
	struct table rows;	       /* key (by opt->by) -> struct row */
	struct table async_open;       /* (cat, id, name) -> struct async_open */
	struct table async_rows;       /* name -> struct async_row */
	struct table counters;	       /* (name, series) -> struct counter */
	struct table labels;	       /* "p" pid or "t" pid tid -> struct label (M events) */
	struct tally_polls polls;      /* the folded polls (tally_polls.h) */
	struct buf key;
	struct end_marker end;
	bool saw_start;
	uint64_t slices, async_spans;
	uint64_t anomaly[AN_COUNT];
	bool has_time;
	int64_t first_ns, last_ns;
	bool nomem;
};

/* An empty tally, with its options (kept by pointer). */
void tally_init(struct tally *c, const struct tally_options *opt);

/* What tally_read() found. */
enum tally_result {
	TALLY_OK,	   /* c holds the trace; c->st->error may be set (malformed input:
			    * c holds the events before it; the caller says so) */
	TALLY_NOT_A_TRACE, /* JSON that is not a trace: c->st->not_a_trace says why */
	TALLY_NOMEM,	   /* out of memory */
	TALLY_UNREADABLE   /* the input failed, or nothing was readable: c->st->message */
};

/*
 * Read r (opened by the caller, who closes it after tally_destroy(): c->file and
 * c->st point into it) to its end into c, and at the end end the slices still open
 * at their thread's latest time. Returns an enum tally_result.
 */
int tally_read(struct tally *c, struct trace *r);

/* Frees what c holds (not the reader). */
void tally_destroy(struct tally *c);

/* end - start for end >= start, exact (in uint64: the difference of two int64 may
 * not fit in one). */
static inline uint64_t span_ns(int64_t start, int64_t end)
{
	return (uint64_t)end - (uint64_t)start;
}

/* The string a row of c->rows (BY_NAME, BY_CAT) or c->async_rows is keyed on, *len
 * its length; NULL for "(none)": the events had no string there. */
const char *tally_key_string(const struct table *t, const void *value, size_t *len);

/* The process ('p', tid ignored) or thread ('t') name the M events gave, or NULL. */
const struct label *tally_label(const struct tally *c, char kind, int64_t pid, int64_t tid);

/* "process / thread (pid/tid)" into b, NUL-terminated (b->len counts the NUL),
 * leaving out the names not given. 0 or -1. */
int tally_thread_label(const struct tally *c, struct buf *b, int64_t pid, int64_t tid);

#endif /* RTR_TOOLS_TALLY_H */
