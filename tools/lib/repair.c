/* SPDX-License-Identifier: MIT */
/*
 * Repair of a cut trace (see repair.h for what it produces).
 *
 * Events go straight from the reader to the output, except an end marker: it is
 * held back until the next event shows it was not the last (then it is written as
 * it was) or the input ends (then it is the provisional marker of a killed run, and
 * the repaired marker takes its place and its counts). Per thread, the open B
 * slices and the latest time are kept (threads.h), nothing per event.
 */
#include "repair.h"

#include "common/names.h"
#include "json.h"
#include "threads.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Args of a held end marker that the repaired one writes anew. */
static const char *const rewritten_args[] = {
	RTR__KEY_FINAL, "repaired",	 RTR__KEY_EVENTS,
	RTR__KEY_BYTES, "slices_closed", "partial_bytes_dropped",
};

struct held_marker {
	bool present, final, has_ts, has_ids;
	struct buf json;
	struct buf args; /* its other args, each as "key":value, */
	int64_t ts_ns, pid, tid;
};

struct repair {
	struct output *out;
	struct threads threads;
	struct held_marker held;
	bool has_ids; /* the start marker's, else the first event's */
	bool ids_from_start;
	int64_t pid, tid;
	bool has_time;
	int64_t latest_ns; /* over the whole file */
	uint64_t lines;	   /* event lines written */
	uint64_t events;   /* of them, not markers and not M */
	uint64_t closed;
	uint64_t untracked; /* open slices past the state bound, left open */
	struct buf line;
	bool nomem;
};

static bool is_marker(const struct trace_event *ev, const char *name)
{
	return ev->phase == 'i' && trace_value_is(&ev->name, name);
}

static bool rewritten(const struct trace_arg *a)
{
	for (size_t i = 0; i < sizeof(rewritten_args) / sizeof(rewritten_args[0]); i++) {
		if (a->key_len == strlen(rewritten_args[i]) &&
		    memcmp(a->key, rewritten_args[i], a->key_len) == 0)
			return true;
	}
	return false;
}

static int write_line(struct repair *rp, const char *json, size_t len)
{
	rp->lines++;
	return output_write(rp->out, json, len) || output_write(rp->out, ",\n", 2);
}

static int hold_marker(struct repair *rp, const struct trace_event *ev)
{
	struct held_marker *h = &rp->held;
	const struct trace_value *final = trace_event_arg(ev, RTR__KEY_FINAL);

	h->present = true;
	h->final = final != NULL && final->type == TRACE_BOOL && strcmp(final->text, "true") == 0;
	h->has_ts = ev->has_ts;
	h->ts_ns = ev->ts_ns;
	h->has_ids = ev->has_pid && ev->has_tid;
	h->pid = ev->pid_num;
	h->tid = ev->tid_num;
	h->json.len = h->args.len = 0;
	if (buf_put(&h->json, ev->json, ev->json_len))
		return -1;
	for (size_t i = 0; i < ev->nargs; i++) {
		const struct trace_arg *a = &ev->arg[i];

		if (rewritten(a))
			continue;
		if (json_put_string(&h->args, a->key, a->key_len) < 0 || buf_putc(&h->args, ':'))
			return -1;
		if (a->value.type == TRACE_STRING
			    ? json_put_string(&h->args, a->value.text, a->value.len) < 0
			    : buf_put(&h->args, a->value.text, a->value.len))
			return -1;
		if (buf_putc(&h->args, ','))
			return -1;
	}
	return 0;
}

static void note_time(struct repair *rp, const struct thread_state *th)
{
	if (th->has_time && (!rp->has_time || th->latest_ns > rp->latest_ns)) {
		rp->latest_ns = th->latest_ns;
		rp->has_time = true;
	}
}

/* One event of the input. 0, or -1 when the output failed or memory ran out. */
static int take_event(struct repair *rp, const struct trace_event *ev)
{
	struct thread_state *th;

	if (rp->held.present) {
		/* A marker with events after it was not the last: keep it as it was. */
		rp->held.present = false;
		if (write_line(rp, rp->held.json.p, rp->held.json.len))
			return -1;
	}
	if (is_marker(ev, RTR__MARK_END)) {
		if (hold_marker(rp, ev)) {
			rp->nomem = true;
			return -1;
		}
		return 0;
	}
	if (is_marker(ev, RTR__MARK_START) && !rp->ids_from_start && ev->has_pid && ev->has_tid) {
		rp->ids_from_start = rp->has_ids = true;
		rp->pid = ev->pid_num;
		rp->tid = ev->tid_num;
	} else if (!rp->has_ids && ev->has_pid) {
		rp->has_ids = true;
		trace_event_thread(ev, &rp->pid, &rp->tid);
	}
	if (!is_marker(ev, RTR__MARK_START) && ev->phase != 'M')
		rp->events++;
	th = threads_of(&rp->threads, ev);
	if (th == NULL && threads_refused(&rp->threads)) /* past the state bound: as it is */
		return write_line(rp, ev->json, ev->json_len);
	if (th == NULL) {
		rp->nomem = true;
		return -1;
	}
	thread_note_time(th, ev);
	note_time(rp, th);
	if (ev->phase == 'B' && thread_push(th, ev) == -ENOMEM) {
		rp->nomem = true;
		return -1;
	}
	if (ev->phase == 'E')
		thread_pop(th);
	return write_line(rp, ev->json, ev->json_len);
}

/* End every open slice: an E per slice, innermost first, at the thread's latest time. */
static int close_slices(struct repair *rp)
{
	struct buf *b = &rp->line;

	for (struct thread_state *th = threads_first(&rp->threads); th != NULL;
	     th = threads_next(th)) {
		/* Slices past the state bound are not known: they stay open. */
		rp->untracked += th->untracked;
		th->untracked = 0;
		while (th->depth > 0) {
			const struct open_slice *s = thread_top(th);
			/* 1 ns after the latest time: a viewer that adds ts + dur in doubles
			 * (speedscope) could otherwise see an X end after this E. */
			int64_t ts = ns_after(th->has_time ? th->latest_ns : s->ts_ns);
			int err;

			b->len = 0;
			err = buf_puts(b, "{\"ph\":\"E\"");
			if (!err && s->cat != NULL)
				err = buf_puts(b, ",\"cat\":") ||
				      json_put_string(b, s->cat, s->cat_len) < 0;
			if (!err && s->name != NULL)
				err = buf_puts(b, ",\"name\":") ||
				      json_put_string(b, s->name, s->name_len) < 0;
			err = err || buf_puts(b, ",\"ts\":") || buf_put_us(b, ts) ||
			      buf_puts(b, ",\"pid\":") || buf_put_i64(b, th->pid) ||
			      buf_puts(b, ",\"tid\":") || buf_put_i64(b, th->tid) ||
			      buf_putc(b, '}');
			if (err) {
				rp->nomem = true;
				return -1;
			}
			if (write_line(rp, b->p, b->len))
				return -1;
			if (!rp->has_time || ts > rp->latest_ns) {
				rp->latest_ns = ts;
				rp->has_time = true;
			}
			rp->closed++;
			thread_pop(th);
		}
	}
	return 0;
}

/* The repaired end marker, without its trailing comma. */
static int compose_marker(struct repair *rp, uint64_t dropped)
{
	const struct held_marker *h = &rp->held;
	struct buf *b = &rp->line;
	int64_t ts = rp->has_time ? rp->latest_ns : 0;
	int64_t pid = rp->has_ids ? rp->pid : h->has_ids ? h->pid : 0;
	int64_t tid = rp->has_ids ? rp->tid : h->has_ids ? h->tid : 0;

	if (h->present && h->has_ts && h->ts_ns > ts)
		ts = h->ts_ns;
	if (!rp->ids_from_start && h->present && h->has_ids) {
		pid = h->pid;
		tid = h->tid;
	}
	b->len = 0;
	return buf_puts(b, "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"" RTR__MARK_END "\",\"ts\":") ||
	       buf_put_us(b, ts) || buf_puts(b, ",\"pid\":") || buf_put_i64(b, pid) ||
	       buf_puts(b, ",\"tid\":") || buf_put_i64(b, tid) ||
	       buf_puts(b, ",\"args\":{\"" RTR__KEY_FINAL "\":true,\"repaired\":true,") ||
	       (h->present && buf_put(b, h->args.p, h->args.len)) ||
	       buf_puts(b, "\"" RTR__KEY_EVENTS "\":") || buf_put_u64(b, rp->events) ||
	       buf_puts(b, ",\"slices_closed\":") || buf_put_u64(b, rp->closed) ||
	       buf_puts(b, ",\"partial_bytes_dropped\":") || buf_put_u64(b, dropped) ||
	       buf_puts(b, "}}");
}

/* Close the output: open slices, the end marker, ']'. 0 or -1. */
static int finish_output(struct repair *rp, const struct trace_status *st, bool *kept)
{
	const struct held_marker *h = &rp->held;

	if (close_slices(rp))
		return -1;
	*kept = st->complete && rp->closed == 0 && h->present && h->final;
	if (*kept) {
		rp->lines++;
		return output_write(rp->out, h->json.p, h->json.len) ||
		       output_puts(rp->out, "\n]\n");
	}
	if (compose_marker(rp, st->cut_bytes)) {
		rp->nomem = true;
		return -1;
	}
	rp->lines++;
	return output_write(rp->out, rp->line.p, rp->line.len) || output_puts(rp->out, "\n]\n");
}

static void free_repair(struct repair *rp)
{
	threads_destroy(&rp->threads);
	buf_free(&rp->held.json);
	buf_free(&rp->held.args);
	buf_free(&rp->line);
}

int repair_trace(struct trace *r, struct output *out, struct repair_result *res)
{
	struct repair rp = {.out = out};
	const struct trace_status *st;
	const struct trace_event *ev;
	bool kept = false;
	int rc, err = 0;

	threads_init(&rp.threads, 0);
	if (output_puts(out, "[\n") == 0) {
		while ((rc = trace_next(r, &ev)) == 1) {
			if (take_event(&rp, ev))
				break;
		}
	} else {
		rc = 0;
	}
	st = trace_status(r);
	if (rc < 0 && st->events == 0)
		err = -ENODATA; /* nothing read before the error: no trace here to complete */
	else if (rc == 1 || finish_output(&rp, st, &kept) || output_commit(out))
		err = rp.nomem ? -ENOMEM : -EIO;
	*res = (struct repair_result){.kept = kept,
				      .stopped = rc < 0,
				      .closed = rp.closed,
				      .untracked = rp.untracked,
				      .refused = rp.threads.budget.refused};
	free_repair(&rp);
	return err;
}
