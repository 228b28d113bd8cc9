/* SPDX-License-Identifier: MIT */
/*
 * Each event of the input of `ringtrace split` (split.h): copied into the piece it
 * fits, an X held with the flow events right after it, the last end marker held
 * until an event after it shows it was not the last, the open slices and spans
 * tracked for the cuts.
 */
#include "split.h"

#include "common/names.h"
#include "output.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A time of the input's events: the latest of them ends the open async spans. */
static void note_latest(struct split *sp, int64_t t)
{
	if (!sp->has_latest || t > sp->latest) {
		sp->latest = t;
		sp->has_latest = true;
	}
	split_note_piece_time(sp, t);
}

/* The end of an event in time: ts, or ts + dur for an X. */
static int64_t end_of(const struct trace_event *ev)
{
	int64_t t = ev->ts_ns;

	if (ev->phase == 'X' && ev->has_dur && ev->dur_ns > 0 && t <= INT64_MAX - ev->dur_ns)
		t += ev->dur_ns;
	return t;
}

/* An event written as it is, counted as the input's. */
static int copy_event(struct split *sp, const struct trace_event *ev)
{
	sp->piece_events++;
	sp->events++;
	if (ev->has_ts)
		note_latest(sp, end_of(ev));
	return split_write_line(sp, ev->json, ev->json_len);
}

/* A held end marker with events after it: an ordinary event after all. */
static int write_held_end(struct split *sp)
{
	struct trace_event none = {0};

	sp->held_end = false;
	none.ts_ns = sp->latest;
	none.has_ts = sp->has_latest;
	if (sp->piece_events > 0 && !split_fits(sp, &none, 1, sp->end_json.len)) {
		if (split_cut(sp, &none))
			return -1;
	}
	sp->piece_events++;
	sp->events++;
	if (sp->end_has_ts)
		note_latest(sp, sp->end_ts);
	return split_write_line(sp, sp->end_json.p, sp->end_json.len);
}

static int hold_end(struct split *sp, const struct trace_event *ev)
{
	sp->held_end = true;
	sp->end_has_ts = ev->has_ts;
	sp->end_ts = ev->ts_ns;
	sp->end_json.len = sp->end_args.len = 0;
	if (buf_put(&sp->end_json, ev->json, ev->json_len) ||
	    (ev->args.type == TRACE_OBJECT && buf_put(&sp->end_args, ev->args.text, ev->args.len)))
		return nomem(sp);
	return 0;
}

static int defer_x(struct split *sp, const struct trace_event *ev)
{
	struct pending_x *px = &sp->px;

	px->active = true;
	px->has_pid = ev->has_pid;
	trace_event_thread(ev, &px->pid, &px->tid);
	px->start = ev->ts_ns;
	px->end = end_of(ev);
	px->json.len = 0;
	px->n = 1;
	if (buf_put(&px->json, ev->json, ev->json_len))
		return nomem(sp);
	px->ends[0] = px->json.len;
	return 0;
}

/* Is ev a flow event that the pending X encloses? */
static bool follows_x(const struct pending_x *px, const struct trace_event *ev)
{
	int64_t pid, tid;

	if ((ev->phase != 's' && ev->phase != 't' && ev->phase != 'f') || !ev->has_ts ||
	    ev->ts_ns < px->start || ev->ts_ns > px->end || px->n > MAX_X_FLOWS)
		return false;
	trace_event_thread(ev, &pid, &tid);
	return pid == px->pid && tid == px->tid;
}

static int add_to_x(struct split *sp, const struct trace_event *ev)
{
	struct pending_x *px = &sp->px;

	if (buf_put(&px->json, ev->json, ev->json_len))
		return nomem(sp);
	px->flow_ts[px->n - 1] = ev->ts_ns;
	px->ends[px->n++] = px->json.len;
	return 0;
}

/* Write the pending X and its flows, into a new piece when they do not fit. */
static int flush_x(struct split *sp)
{
	struct pending_x *px = &sp->px;
	struct trace_event x = {.phase = 'X'};
	struct flow_slice in = {0};
	struct thread_state *th;
	struct split_thread *st;

	if (!px->active)
		return 0;
	px->active = false;
	x.has_ts = x.has_dur = true;
	x.ts_ns = px->start;
	x.dur_ns = px->end - px->start;
	x.has_pid = px->has_pid;
	x.pid_num = px->pid;
	x.has_tid = true;
	x.tid_num = px->tid;
	if (split_place(sp, &x, px->n, px->json.len))
		return -1;
	th = threads_get(&sp->threads, px->pid, px->tid);
	if (th == NULL)
		return nomem(sp);
	st = thread_extra(th);
	thread_note_time(th, &x);
	split_level_x(th, st, px->start, px->end);
	in.x = px->json.p;
	in.x_len = px->ends[0];
	/* Flow events held for a slice: this one encloses them. */
	if (split_release_flows(sp, st, px->start, px->end, false, &in))
		return -1;
	split_add_recent(st, px->start, px->end);
	for (size_t i = 0; i < px->n; i++) {
		size_t from = i > 0 ? px->ends[i - 1] : 0;

		if (i > 0) {
			x.ts_ns = px->flow_ts[i - 1];
			x.has_dur = false;
			x.phase = 's';
			thread_note_time(th, &x);
			split_note_plain_time(st, &x);
		}
		sp->piece_events++;
		sp->events++;
		note_latest(sp, i == 0 ? px->end : px->flow_ts[i - 1]);
		if (split_write_line(sp, px->json.p + from, px->ends[i] - from) ||
		    (i > 0 && split_flow_written(sp, px->json.p + from, px->ends[i] - from, &in)))
			return -1;
	}
	/* The X that a flow event after it may be inside (repeated with its s). */
	st->last_x.len = 0;
	if (buf_put(&st->last_x, px->json.p, px->ends[0]))
		return nomem(sp);
	st->last_x_start = px->start;
	st->last_x_end = px->end;
	return 0;
}

/* A B: copied, and its slice open (reopened at the cuts, and binding the flow events
 * held for a slice). */
static int take_begin(struct split *sp, struct thread_state *th, struct split_thread *st,
		      const struct trace_event *ev)
{
	if (copy_event(sp, ev))
		return -1;
	if (thread_push(th, ev) == -ENOMEM)
		return nomem(sp);
	if (thread_untracked(th))
		return 0;
	if (split_level_pushed(th, st) != 0)
		return nomem(sp);
	sp->close_lines++;
	sp->close_bytes += split_slice_cost(thread_top(th));
	if (th->depth == 1 && ev->has_ts) {
		struct flow_slice in = {.by_b = true, .b_line = thread_top(th)->line};

		return split_release_flows(sp, st, ev->ts_ns, INT64_MAX, false, &in);
	}
	return 0;
}

/* An E: copied, unless its B is not in this piece (beyond --max-reopen). */
static int take_end(struct split *sp, struct thread_state *th, struct split_thread *st,
		    const struct trace_event *ev)
{
	if (thread_untracked(th)) { /* its B was past the state bound */
		thread_pop(th);
		return copy_event(sp, ev);
	}
	if (th->depth > 0 && th->depth <= st->absent) {
		/* Its B is not in this piece: neither is it. */
		split_level_popping(th, st);
		thread_pop(th);
		st->absent--;
		sp->ends_left_out++;
		return 0;
	}
	if (th->depth > 0) {
		const struct open_slice *s = thread_top(th);

		sp->close_lines--;
		sp->close_bytes -= split_slice_cost(s);
		if (ev->has_ts && s->ts_ns <= ev->ts_ns)
			split_add_recent(st, s->ts_ns, ev->ts_ns);
		split_level_popping(th, st);
		thread_pop(th);
	}
	return copy_event(sp, ev);
}

/* An s, t or f: held until a slice encloses it, or copied with what encloses it. */
static int take_flow(struct split *sp, struct thread_state *th, struct split_thread *st,
		     const struct trace_event *ev)
{
	struct flow_slice in = {0};

	if (ev->has_ts && !split_enclosed(th, st, ev->ts_ns)) {
		sp->events++;
		note_latest(sp, ev->ts_ns);
		return split_hold_flow(sp, st, ev);
	}
	if (th->depth > 0 && ev->has_ts && th->open[0].ts_ns <= ev->ts_ns) {
		in.by_b = true;
		in.b_line = thread_top(th)->line;
	} else if (ev->has_ts && st->last_x.len > 0 && st->last_x_start <= ev->ts_ns &&
		   ev->ts_ns <= st->last_x_end) {
		in.x = st->last_x.p;
		in.x_len = st->last_x.len;
	}
	return copy_event(sp, ev) || split_flow_written(sp, ev->json, ev->json_len, &in);
}

int split_take(struct split *sp, const struct trace_event *ev)
{
	struct thread_state *th;
	struct split_thread *st;

	if (!sp->first_seen) {
		sp->first_seen = true;
		if (is_marker(ev, RTR__MARK_START)) {
			sp->has_start = true;
			trace_event_thread(ev, &sp->marker_pid, &sp->marker_tid);
			sp->has_ids = true;
			if (buf_put(&sp->start_json, ev->json, ev->json_len))
				return nomem(sp);
			return split_place(sp, ev, 0, 0);
		}
	}
	if (sp->px.active) {
		if (follows_x(&sp->px, ev))
			return add_to_x(sp, ev);
		if (flush_x(sp))
			return -1;
	}
	if (sp->held_end && write_held_end(sp))
		return -1;
	if (is_marker(ev, RTR__MARK_END))
		return hold_end(sp, ev);
	if (ev->phase == 'X' && ev->has_ts && ev->has_dur && ev->dur_ns >= 0)
		return defer_x(sp, ev);
	if (split_place(sp, ev, 1, ev->json_len))
		return -1;
	th = threads_of(&sp->threads, ev);
	if (th == NULL && threads_refused(&sp->threads))
		return copy_event(sp, ev); /* past the state bound: not reopened at cuts */
	if (th == NULL)
		return nomem(sp);
	st = thread_extra(th);
	thread_note_time(th, ev);
	split_note_plain_time(st, ev);
	switch (ev->phase) {
	case 'B':
		return take_begin(sp, th, st, ev);
	case 'E':
		return take_end(sp, th, st, ev);
	case 's':
	case 't':
	case 'f':
		return take_flow(sp, th, st, ev);
	case 'b':
	case 'e':
	case 'n':
		return split_track_async(sp, ev) || copy_event(sp, ev);
	case 'M':
		if (carry_meta(&sp->carry, ev))
			return nomem(sp);
		return copy_event(sp, ev);
	default:
		return copy_event(sp, ev);
	}
}

/* The input ended: the flows still held, the slices left open by a cut, the last
 * marker. */
int split_finish(struct split *sp, bool cut_short)
{
	if (flush_x(sp))
		return -1;
	if (sp->out == NULL) {
		/* Only markers, or nothing at all: one piece of the markers. */
		struct trace_event none = {0};

		if (split_place(sp, &none, 0, 0))
			return -1;
	}
	for (struct thread_state *th = threads_first(&sp->threads); th != NULL;
	     th = threads_next(th)) {
		struct split_thread *st = thread_extra(th);

		while (st->nheld > 0) {
			if (split_write_line(sp, st->held[0].json, st->held[0].len) ||
			    split_flow_written(sp, st->held[0].json, st->held[0].len, NULL))
				return -1;
			sp->piece_events++;
			split_forget_held(sp, st, 0);
		}
	}
	return split_end_piece(sp, true, cut_short);
}
