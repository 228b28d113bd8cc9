/* SPDX-License-Identifier: MIT */
/*
 * The threads of a trace as a tool streams it: for each (pid, tid), the stack of B
 * slices still open and the latest time seen. check, repair (and split, which closes
 * and reopens slices at a cut, and stats, which needs the nesting) share it.
 *
 * State is per thread and per open slice, never per event. A tool that needs more
 * per thread asks for `extra` bytes with threads_init() and finds them with
 * thread_extra(), zero-filled when the thread is first seen.
 *
 * Threads are visited in the order they first appear in the file.
 *
 * Thread safety: none; one table per thread.
 */
#ifndef RTR_TOOLS_THREADS_H
#define RTR_TOOLS_THREADS_H

#include "budget.h"
#include "table.h"
#include "trace.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A B event not yet ended. Strings are copies, NUL-terminated. */
struct open_slice {
	char *name; /* NULL when the B had no string name */
	char *cat;  /* NULL when the B had no string cat */
	size_t name_len, cat_len;
	char *json; /* the B event as compact JSON, to write it again */
	size_t json_len;
	int64_t ts_ns;
	uint64_t line;
	/* Hashes of the B's first OPEN_SLICE_KEYS argument keys (an E's argument with one
	 * of them is what Catapult warns about: slice_has_key()). */
	uint32_t nkeys;
	uint64_t key_hash[8];
	/* A tool that holds the B's line to write one X at its E (merge): the time and pid
	 * the B would have been written with. */
	bool held, held_set_pid;
	int64_t held_ts, held_pid;
};
#define OPEN_SLICE_KEYS 8

/* Whether the open slice's B had argument `key` among its first OPEN_SLICE_KEYS. */
bool slice_has_key(const struct open_slice *s, const char *key, size_t len);

struct thread_state {
	int64_t pid, tid;
	struct open_slice *open; /* open[depth - 1] is the innermost */
	size_t depth, cap;
	size_t untracked; /* B slices opened past the state bound, innermost of all */
	struct state_budget *budget;
	bool has_time;
	int64_t latest_ns; /* the latest time seen: a ts, or the end of an X */
};

struct threads {
	struct table map;
	struct state_budget budget; /* a tool's other tables may share it */
	bool refused;		    /* the last lookup returned NULL for the bound */
	bool lost_threads;	    /* some thread was refused: threads_count() is a floor */
	size_t extra;
	struct thread_state *last; /* the thread of the previous lookup: events come in runs */
};

void threads_init(struct threads *t, size_t extra);

/* Frees every thread and its open slices (the extra bytes are the caller's). */
void threads_destroy(struct threads *t);

/* The thread (pid, tid), added when new. NULL when out of memory, or past the state
 * bound (then threads_refused() is true). */
struct thread_state *threads_get(struct threads *t, int64_t pid, int64_t tid);

/* The thread of ev (trace_event_thread()), added when new. NULL when out of memory. */
struct thread_state *threads_of(struct threads *t, const struct trace_event *ev);

/* Was the last NULL from threads_get() or threads_of() the state bound? */
static inline bool threads_refused(const struct threads *t)
{
	return t->refused;
}

/*
 * What the tools count as a trace's events and threads (check, stats and merge
 * alike, each output saying so with TRACE_COUNTS_WHAT):
 *   events   every element of the event array that is an object: the events the
 *            reader returns (trace_status.events), M events and the
 *            recorder's markers included;
 *   threads  the distinct (pid, tid) of those events, placed by trace_event_thread()
 *            (an M event's too: a thread that only has a name is a thread).
 * A tool counts threads by passing every event to threads_of(); threads_count() is
 * then the number.
 */
#define TRACE_COUNTS_WHAT "every event object, M included; distinct pid/tid"

/* The threads in the table. */
size_t threads_count(const struct threads *t);

/* "" or "at least ": the count is a floor when threads were refused for the bound. */
static inline const char *threads_count_floor(const struct threads *t)
{
	return t->lost_threads ? "at least " : "";
}

/* The first thread in order of appearance, or NULL; then the next, or NULL. */
struct thread_state *threads_first(const struct threads *t);
struct thread_state *threads_next(const struct thread_state *th);

/* The tool's own bytes of this thread. */
void *thread_extra(struct thread_state *th);

/* Open a slice for the B event ev (its name, cat, JSON and ts copied). 0, -ENOMEM,
 * or -ENOSPC past the state bound: the slice is then counted as untracked, and its
 * E (the next thread_pop()) ends it. */
int thread_push(struct thread_state *th, const struct trace_event *ev);

/* End the innermost open slice (an untracked one first); nothing when none is open. */
void thread_pop(struct thread_state *th);

/* Is the innermost open slice one past the state bound (nothing known of it)? */
static inline bool thread_untracked(const struct thread_state *th)
{
	return th->untracked > 0;
}

/* The innermost tracked open slice, or NULL. */
struct open_slice *thread_top(struct thread_state *th);

/* Move latest_ns forward to ev's ts, or the end of ev when it is an X. */
void thread_note_time(struct thread_state *th, const struct trace_event *ev);

#endif /* RTR_TOOLS_THREADS_H */
