/* SPDX-License-Identifier: MIT */
/*
 * The events of `ringtrace window` (window.h): what comes before the window kept
 * (names, counters, open slices and spans), what is inside written (an X around it
 * clipped to it), the window's head written before its first event, and its end:
 * what is open, ended, and the end marker.
 */
#include "window.h"

#include "common/names.h"
#include "merge_json.h"
#include "output.h"

#include <errno.h>

/* The window in the file's ts, from the origin (the first ts read). */
static void set_origin(struct window *w, int64_t origin)
{
	w->has_origin = true;
	w->origin = w->absolute ? 0 : origin;
	w->from = w->from_rel > INT64_MAX - w->origin ? INT64_MAX : w->origin + w->from_rel;
	w->to = !w->to_set			    ? INT64_MAX
		: w->to_rel > INT64_MAX - w->origin ? INT64_MAX
						    : w->origin + w->to_rel;
}

/* The time of an event as the recorder writes it: its ts, or the end of an X. */
static int64_t end_of(const struct trace_event *ev)
{
	int64_t t = ev->ts_ns;

	if (ev->phase == 'X' && ev->has_dur && ev->dur_ns > 0 && t <= INT64_MAX - ev->dur_ns)
		t += ev->dur_ns;
	return t;
}

/* Where what is open at the end is ended: the window's end, or the latest time read
 * when the trace ends before it. */
static int64_t close_time(const struct window *w)
{
	int64_t t = w->has_latest && w->latest < w->to ? w->latest : w->to;

	return t < w->from ? w->from : t;
}

static int nomem(struct window *w)
{
	w->nomem = true;
	return -1;
}

static int write_line(struct window *w, const char *json, size_t len)
{
	return output_write(w->out, json, len) || output_write(w->out, ",\n", 2);
}

/* An event of the file written again at ts (a reopened B or b, a counter's value). */
static int write_at(struct window *w, const char *json, size_t len, int64_t ts)
{
	struct event_edit e = {.set_ts = true, .ts_ns = ts, .duplicates = true};

	w->line.len = 0;
	if (event_rewrite(&w->line, json, len, &e))
		return nomem(w);
	return write_line(w, w->line.p, w->line.len);
}

/* "window_from":F,"window_to":T into w->args (T: the window's end, when it has one). */
static int window_args(struct window *w, bool has_to, int64_t to)
{
	struct buf *a = &w->args;

	a->len = 0;
	return buf_puts(a, "\"window_from\":") || buf_put_us(a, w->from) ||
	       (has_to && (buf_puts(a, ",\"window_to\":") || buf_put_us(a, to)));
}

/* Before the window's first event: the start marker, the names, the counters. */
static int write_head(struct window *w)
{
	if (w->head_written)
		return 0;
	w->head_written = true;
	w->line.len = 0;
	if (window_args(w, w->to_set, w->to) ||
	    carry_start_marker(&w->line, w->has_start ? w->start_json.p : NULL, w->start_json.len,
			       true, w->from, w->marker_pid, w->marker_tid, w->args.p, w->args.len))
		return nomem(w);
	if (write_line(w, w->line.p, w->line.len))
		return -1;
	for (struct kept_event *k = table_first(&w->carry.meta); k != NULL; k = table_next(k)) {
		if (write_line(w, k->json, k->len))
			return -1;
	}
	for (struct kept_event *k = table_first(&w->carry.counters); k != NULL; k = table_next(k)) {
		if (write_at(w, k->json, k->len, w->from))
			return -1;
		w->counters++;
	}
	return 0;
}

/* The thread's slices opened before the window and not written yet, at its start. */
static int reopen_slices(struct window *w, struct thread_state *th)
{
	struct window_thread *wt = thread_extra(th);

	for (; wt->written < th->depth; wt->written++) {
		const struct open_slice *s = &th->open[wt->written];

		if (write_at(w, s->json, s->json_len, w->from))
			return -1;
		w->reopened++;
	}
	return 0;
}

/* The same for an async span's b events. */
static int reopen_span(struct window *w, struct async_span *as)
{
	for (; as->written < as->depth; as->written++) {
		if (write_at(w, as->open[as->written].json, as->open[as->written].len, w->from))
			return -1;
		w->async_reopened++;
	}
	return 0;
}

static int copy_event(struct window *w, const struct trace_event *ev)
{
	w->events++;
	return write_line(w, ev->json, ev->json_len);
}

/* An X that overlaps the window: clipped to it (unless --no-clip), or as it is. */
static int write_x(struct window *w, const struct trace_event *ev)
{
	int64_t start = ev->ts_ns, end = end_of(ev);
	struct event_edit e = {.duplicates = true};

	if (write_head(w))
		return -1;
	if (!w->clip || (start >= w->from && end <= w->to))
		return copy_event(w, ev);
	if (start < w->from)
		start = w->from;
	if (end > w->to)
		end = w->to;
	e.set_ts = e.set_dur = true;
	e.ts_ns = start;
	e.dur_ns = end - start;
	w->line.len = 0;
	if (event_rewrite(&w->line, ev->json, ev->json_len, &e))
		return nomem(w);
	w->clipped++;
	w->events++;
	return write_line(w, w->line.p, w->line.len);
}

static int write_end_marker(struct window *w)
{
	struct buf *b = &w->line;
	int64_t at = close_time(w);

	b->len = 0;
	if (window_args(w, true, at) ||
	    buf_puts(b, "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"" RTR__MARK_END "\",\"ts\":") ||
	    buf_put_us(b, at) || buf_puts(b, ",\"pid\":") || buf_put_i64(b, w->marker_pid) ||
	    buf_puts(b, ",\"tid\":") || buf_put_i64(b, w->marker_tid) ||
	    buf_puts(b, ",\"args\":{\"" RTR__KEY_FINAL "\":true,") ||
	    buf_put(b, w->args.p, w->args.len) || buf_puts(b, ",\"window_events\":") ||
	    buf_put_u64(b, w->events) || buf_puts(b, ",\"x_clipped\":") ||
	    buf_put_u64(b, w->clipped) || buf_puts(b, ",\"slices_reopened\":") ||
	    buf_put_u64(b, w->reopened) || buf_puts(b, ",\"slices_closed\":") ||
	    buf_put_u64(b, w->closed) || buf_puts(b, ",\"async_reopened\":") ||
	    buf_put_u64(b, w->async_reopened) || buf_puts(b, ",\"async_closed\":") ||
	    buf_put_u64(b, w->async_closed) || buf_puts(b, "}}"))
		return nomem(w);
	return output_write(w->out, b->p, b->len) || output_puts(w->out, "\n]\n");
}

/* The input is read: what is open, ended at the window's end; the end marker. */
int window_finish(struct window *w)
{
	int64_t at = close_time(w);
	struct buf *b = &w->line;

	if (!w->has_origin)
		set_origin(w, 0);
	if (write_head(w))
		return -1;
	for (struct thread_state *th = threads_first(&w->threads); th != NULL;
	     th = threads_next(th)) {
		if (reopen_slices(w, th))
			return -1;
		for (size_t i = th->depth; i-- > 0;) {
			const struct open_slice *s = &th->open[i];

			b->len = 0;
			if (put_end_event(b, 'E', s->cat, s->cat_len, s->name, s->name_len, NULL, 0,
					  at, th->pid, th->tid))
				return nomem(w);
			if (write_line(w, b->p, b->len))
				return -1;
			w->closed++;
		}
	}
	for (struct async_span *as = table_first(&w->carry.async); as != NULL;
	     as = table_next(as)) {
		if (reopen_span(w, as))
			return -1;
		for (size_t i = as->depth; i-- > 0;) {
			b->len = 0;
			if (put_end_event(b, 'e', as->cat, as->cat_len, as->name, as->name_len,
					  as->id, as->id_len, at, as->pid, as->tid))
				return nomem(w);
			if (write_line(w, b->p, b->len))
				return -1;
			w->async_closed++;
		}
	}
	return write_end_marker(w);
}

void window_note_glances(struct window *w, bool has_latest, int64_t latest, int64_t max_lag)
{
	if (has_latest && (!w->has_latest || latest > w->latest))
		w->latest = latest;
	w->has_latest |= has_latest;
	if (max_lag > w->max_lag)
		w->max_lag = max_lag;
}

static void note_time(struct window *w, const struct trace_event *ev)
{
	int64_t t = end_of(ev);

	if (!w->has_latest || t > w->latest)
		w->latest = t;
	w->has_latest = true;
	if (ev->phase == 'X')
		return;
	/* How far back in time the file went (X events aside: other writers put them
	 * at their start): more than the margin, and a search may have missed events. */
	if (!w->has_plain || ev->ts_ns > w->plain_max)
		w->plain_max = ev->ts_ns;
	w->has_plain = true;
	if (w->plain_max - ev->ts_ns > w->max_lag)
		w->max_lag = w->plain_max - ev->ts_ns;
}

static int take_slice(struct window *w, const struct trace_event *ev)
{
	struct thread_state *th = threads_of(&w->threads, ev);
	struct window_thread *wt;

	if (th == NULL)
		return nomem(w);
	wt = thread_extra(th);
	if (ev->ts_ns > w->to)
		return 0; /* after the window: its thread's later B and E are too */
	if (ev->phase == 'B') {
		if (ev->ts_ns >= w->from && (write_head(w) || reopen_slices(w, th)))
			return -1;
		if (thread_push(th, ev) == -ENOMEM)
			return nomem(w);
		if (thread_untracked(th))
			return 0; /* past the state bound (threads.h): neither it nor its E */
		if (ev->ts_ns < w->from)
			return 0; /* reopened when its thread's first event in the window comes */
		wt->written = th->depth;
		return copy_event(w, ev);
	}
	/* An E. */
	if (thread_untracked(th)) {
		thread_pop(th);
		return 0;
	}
	if (th->depth == 0) {
		if (ev->ts_ns >= w->from)
			w->ends_unknown++; /* its B is before what was read */
		return 0;
	}
	if (ev->ts_ns < w->from && wt->written < th->depth) {
		thread_pop(th); /* a slice that ended before the window */
		return 0;
	}
	if (write_head(w) || reopen_slices(w, th))
		return -1;
	thread_pop(th);
	wt->written--;
	if (ev->ts_ns < w->from)
		return write_at(w, ev->json, ev->json_len, w->from);
	return copy_event(w, ev);
}

static int take_async(struct window *w, const struct trace_event *ev)
{
	struct async_span *as;
	int change;

	if (ev->ts_ns > w->to)
		return 0;
	if (ev->ts_ns < w->from) {
		change = carry_async(&w->carry, ev, &as);
		if (change < 0)
			return nomem(w);
		if (change == CARRY_ASYNC_ENDED && as->depth == 0)
			carry_async_forget(&w->carry, as);
		return 0;
	}
	if (write_head(w))
		return -1;
	/* The span's b events from before the window first, then this event. */
	if (ev->cat.type == TRACE_STRING && ev->id.type != TRACE_ABSENT) {
		struct async_span *open;

		if (trace_async_key(&w->carry.key, ev))
			return nomem(w);
		open = table_get(&w->carry.async, w->carry.key.p, w->carry.key.len);
		if (open != NULL && reopen_span(w, open))
			return -1;
		if (ev->phase == 'e' && (open == NULL || open->depth == 0)) {
			w->async_unknown++; /* its b is before what was read */
			return 0;
		}
	}
	change = carry_async(&w->carry, ev, &as);
	if (change < 0)
		return nomem(w);
	if (change == CARRY_ASYNC_OPENED)
		as->written = as->depth;
	if (change == CARRY_ASYNC_ENDED && as->depth == 0)
		carry_async_forget(&w->carry, as);
	return copy_event(w, ev);
}

/* The first event: the start marker is kept, the origin is the first ts. */
static int take_first(struct window *w, const struct trace_event *ev)
{
	if (!w->has_ids) {
		trace_event_thread(ev, &w->marker_pid, &w->marker_tid);
		w->has_ids = true;
	}
	if (!w->first_seen) {
		w->first_seen = true;
		if (is_marker(ev, RTR__MARK_START)) {
			w->has_start = true;
			trace_event_thread(ev, &w->marker_pid, &w->marker_tid);
			if (buf_put(&w->start_json, ev->json, ev->json_len))
				return nomem(w);
		}
	}
	if (!w->has_origin && ev->has_ts)
		set_origin(w, ev->ts_ns);
	return 0;
}

int window_take(struct window *w, const struct trace_event *ev, enum part part)
{
	if (take_first(w, ev))
		return -1;
	if (is_marker(ev, RTR__MARK_START) || is_marker(ev, RTR__MARK_END))
		return 0; /* the window writes its own */
	if (ev->phase == 'M') {
		/* Wherever they come: the recorder names a thread before its first
		 * event, which for the main thread may be a run-long X written last. */
		if (!w->head_written || part == PART_HEAD)
			return carry_meta(&w->carry, ev) ? nomem(w) : 0;
		return copy_event(w, ev);
	}
	if (!ev->has_ts || part == PART_HEAD)
		return 0;
	note_time(w, ev);
	switch (ev->phase) {
	case 'X':
		if (!ev->has_dur || ev->dur_ns < 0)
			break; /* as an instant */
		if (ev->ts_ns > w->to || end_of(ev) < w->from)
			return 0;
		return write_x(w, ev);
	case 'B':
	case 'E':
		return take_slice(w, ev);
	case 'b':
	case 'e':
	case 'n':
		return take_async(w, ev);
	case 'C':
		if (ev->ts_ns < w->from)
			return carry_counter(&w->carry, ev) ? nomem(w) : 0;
		break;
	default:
		break;
	}
	if (ev->ts_ns < w->from || ev->ts_ns > w->to)
		return 0;
	if (write_head(w))
		return -1;
	{
		struct thread_state *th = threads_of(&w->threads, ev);

		/* The slices around it first: a flow event binds to them. */
		if (th == NULL)
			return nomem(w);
		if (reopen_slices(w, th))
			return -1;
	}
	return copy_event(w, ev);
}
