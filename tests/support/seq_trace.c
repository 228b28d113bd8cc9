/* SPDX-License-Identifier: MIT */
/*
 * Traces of one counter "seq": see seq_trace.h.
 */
#include "seq_trace.h"

#include "test_util.h"

#include <ringtrace.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

void tu_record_seq(const char *cat, int64_t from, int64_t n)
{
	for (int64_t i = from; i < from + n; i++)
		rtr_counter_i64(cat, "seq", i);
}

/* The string arg key of e into out ("" when absent); 1 when it was a string. */
static int copy_str_arg(const struct tt_event *e, const char *key, char *out, size_t size)
{
	const struct tt_arg *a = tt_arg(e, key);

	snprintf(out, size, "%s", a != NULL && a->type == TT_STRING ? a->s : "");
	return a != NULL && a->type == TT_STRING;
}

static int visit_seq(const struct tt_event *e, void *ctx)
{
	struct tu_seq_walk *w = ctx;
	uint64_t n = w->n++;

	TU_WALK_CHECK(w, e, e->has_pid && e->pid == w->pid, "pid %" PRId64 ", want %" PRId64,
		      e->pid, w->pid);
	TU_WALK_CHECK(w, e, !w->end_seen, "event after the end marker");
	if (n == 0) {
		TU_WALK_CHECK(w, e,
			      tu_is(e->ph, "i") && tu_is(e->name, "ringtrace: start") &&
				      e->ts_ns == 0,
			      "first event is not the start marker");
		TU_WALK_CHECK(w, e, copy_str_arg(e, "io", w->io, sizeof(w->io)),
			      "start marker has no \"io\"");
		TU_WALK_CHECK(w, e, copy_str_arg(e, "compress", w->compress, sizeof(w->compress)),
			      "start marker has no \"compress\"");
		return 0;
	}
	if (n == 1) {
		TU_WALK_CHECK(w, e, tu_is(e->ph, "M") && tu_is(e->name, "process_name"),
			      "no process_name");
		return 0;
	}
	if (tu_is(e->ph, "M")) {
		TU_WALK_CHECK(w, e, tu_is(e->name, "thread_name"), "M %s", e->name);
		return 0;
	}
	if (tu_is(e->name, "ringtrace: end")) {
		const struct tt_arg *final = tt_arg(e, "final");
		TU_WALK_CHECK(w, e, final != NULL && final->type == TT_BOOL,
			      "end marker without a boolean \"final\"");
		w->end_seen = 1;
		w->end_final = final->b;
		w->end_events = tu_arg_int(e, "events");
		w->end_dropped = tu_arg_int(e, "dropped");
		w->end_io = tu_arg_int(e, "dropped_io");
		w->end_bytes = tu_arg_int(e, "bytes");
		return 0;
	}
	TU_WALK_CHECK(w, e, tu_is(e->ph, "C") && tu_is(e->name, "seq") && tu_is(e->cat, w->cat),
		      "%s %s", e->ph, e->name);
	TU_WALK_CHECK(w, e, tu_arg_int(e, "value") == w->next, "seq %" PRId64 ", want %" PRId64,
		      tu_arg_int(e, "value"), w->next);
	TU_WALK_CHECK(w, e, w->tid == 0 || e->tid == w->tid, "tid changed");
	w->tid = e->tid;
	w->next++;
	return 0;
}

struct tt_trace tu_seq_walk(const char *path, int flags, const char *cat, int64_t pid,
			    struct tu_seq_walk *w)
{
	memset(w, 0, sizeof(*w));
	w->cat = cat;
	w->pid = pid;
	return tu_walk(path, flags, visit_seq, w, w->err);
}
