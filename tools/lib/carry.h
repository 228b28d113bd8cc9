/* SPDX-License-Identifier: MIT */
/*
 * What a part of a trace carries over from the events before it, so that it opens
 * alone in a viewer: `split` writes it at the start of every piece, `window` at the
 * start of the window.
 *
 * - Names: the latest M event of each kind per process (process_name,
 *   process_sort_index, process_labels) or per thread (thread_name,
 *   thread_sort_index, anything else), so that every lane is named.
 * - Async spans: the b events of the spans still open, under (cat, id, name), as the
 *   viewers match them, so that a part can reopen them (b written again at its start)
 *   and close them (an e at its end).
 * - Counters: the latest C event per (pid, name), so that a window can begin each
 *   series with the value it had (a C written again at the window's start).
 * - The start marker written again at another time, with args added (both tools).
 *
 * (Open B slices are per thread: threads.h keeps them.)
 *
 * Memory: per kind of M event per process or thread, per open async span, per counter
 * series; never per event.
 *
 * Thread safety: none; one carry per thread.
 */
#ifndef RTR_TOOLS_CARRY_H
#define RTR_TOOLS_CARRY_H

#include "json.h"
#include "table.h"
#include "trace.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An event kept to be written again: its compact JSON, a copy. */
struct kept_event {
	char *json;
	size_t len;
	int64_t ts_ns; /* counters: the sample's time */
};

/* The value of carry.async, under (cat, id, name). */
struct async_span {
	struct kept_event *open; /* the b events not yet ended, outermost first */
	size_t depth, cap;
	size_t written;	   /* window: open[0 .. written) are in the output */
	int64_t latest_ns; /* of its b, n and e events */
	int64_t pid, tid;
	char *cat, *name, *id; /* id as JSON text */
	size_t cat_len, name_len, id_len;
};

struct carry {
	struct table meta;     /* struct kept_event: the latest M of its kind */
	struct table async;    /* struct async_span */
	struct table counters; /* struct kept_event: the latest C of its (pid, name) */
	struct buf key;
};

void carry_init(struct carry *c);
void carry_destroy(struct carry *c);

/* Keep ev, an M event, as the latest of its kind for its process or thread. 0 or -1
 * (out of memory). */
int carry_meta(struct carry *c, const struct trace_event *ev);

/* Keep ev, a C event, as the latest of its series group (pid, name). 0 or -1. */
int carry_counter(struct carry *c, const struct trace_event *ev);

/* What carry_async() did with an event. */
enum carry_async_change {
	CARRY_ASYNC_NONE,   /* not a span the viewers match, or an e/n of none open */
	CARRY_ASYNC_OPENED, /* a b: the span's depth went up */
	CARRY_ASYNC_ENDED,  /* an e: its innermost b ended */
	CARRY_ASYNC_SEEN    /* an n of an open span: its latest time moved */
};

/*
 * An async b, e or n: the spans open, to reopen and close them. *span gets the span
 * (NULL with CARRY_ASYNC_NONE). A span whose depth fell to 0 stays in the table until
 * carry_async_forget(), so that the caller can still read it. Returns the change, or
 * -1 when out of memory.
 */
int carry_async(struct carry *c, const struct trace_event *ev, struct async_span **span);

/* Remove a span (from carry_async() or the table) and free what it holds. */
void carry_async_forget(struct carry *c, struct async_span *as);

/*
 * Append the start marker for a part of the trace: the original's compact JSON
 * orig[0 .. orig_len) (NULL: a marker made up at pid/tid) with members[0 ..
 * members_len) ("\"k\":v,...", no braces) added to its args, at ts_ns when set_ts (the
 * made-up one always is). 0 or -1.
 */
int carry_start_marker(struct buf *b, const char *orig, size_t orig_len, bool set_ts, int64_t ts_ns,
		       int64_t pid, int64_t tid, const char *members, size_t members_len);

#endif /* RTR_TOOLS_CARRY_H */
