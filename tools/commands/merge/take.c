/* SPDX-License-Identifier: MIT */
/*
 * One event of `ringtrace merge` taken (merge.h): written with its pid, times and ids
 * made the merged file's; an input's end marker held until it is known to be its last;
 * the slices a cut input left open ended; and what each input's end says.
 */
#include "merge.h"

#include "common/names.h"
#include "output.h"

#include <errno.h>
#include <inttypes.h>

int merge_write_line(struct merge *m, const char *json, size_t len)
{
	if (m->pf != NULL) {
		if (pf_writer_json(m->pf, json, len) == 0)
			return 0;
		m->nomem |= pf_writer_nomem(m->pf);
		return -1;
	}
	return output_write(m->out, json, len) || output_write(m->out, ",\n", 2);
}

int merge_write_last(struct merge *m, const char *json, size_t len)
{
	if (m->pf != NULL)
		return merge_write_line(m, json, len) || pf_writer_finish(m->pf);
	return output_write(m->out, json, len) || output_puts(m->out, "\n]\n");
}

static void note_time(struct merge *m, int64_t t)
{
	if (!m->has_latest || t > m->latest) {
		m->latest = t;
		m->has_latest = true;
	}
}

static int hold_end(struct merge *m, struct input *in, const struct trace_event *ev)
{
	const struct trace_value *final = trace_event_arg(ev, RTR__KEY_FINAL);

	in->held = true;
	in->held_has_ts = ev->has_ts;
	in->held_ts = ev->ts_ns;
	in->held_has_pid = ev->has_pid;
	in->held_pid = ev->pid_num;
	in->end_final = final != NULL && final->type == TRACE_BOOL && final->text[0] == 't';
	in->held_json.len = in->end_args.len = 0;
	if (buf_put(&in->held_json, ev->json, ev->json_len) ||
	    (ev->args.type == TRACE_OBJECT &&
	     buf_put(&in->end_args, ev->args.text, ev->args.len))) {
		m->nomem = true;
		return -1;
	}
	return 0;
}

/* A held end marker with events after it: an ordinary event after all. */
static int write_held(struct merge *m, struct input *in)
{
	struct event_edit e = {.duplicates = true}; /* rare: no need to know */
	struct pid_map *pm;

	in->held = false;
	if (in->held_has_pid) {
		pm = merge_pid_of(m, in, in->held_pid);
		if (pm == NULL)
			return -1;
		e.set_pid = pm->remapped;
		e.pid = pm->pid;
	}
	if (in->held_has_ts && merge_linear_time(in, in->held_ts, &e.ts_ns)) {
		e.set_ts = true;
		note_time(m, e.ts_ns);
	}
	m->line.len = 0;
	if (event_rewrite(&m->line, in->held_json.p, in->held_json.len, &e)) {
		m->nomem = true;
		return -1;
	}
	return merge_write_line(m, m->line.p, m->line.len);
}

/* The event taken was moved by the alignment or a message's correction. */
static void count_moved(struct merge *m, struct input *in)
{
	if (in->head_moved) {
		in->moved_events++;
		m->moved_events++;
	}
}

/*
 * The held B s as one X, from the time it was taken at to end_ns (its E's, or where a
 * cut input's slices end), with the B's arguments: a slice is one line, so that no
 * viewer pairs a B with another thread's E (Chrome DevTools pairs them on one stack,
 * in file order).
 */
static int write_held_slice(struct merge *m, const struct open_slice *s, int64_t end_ns)
{
	int64_t dur;

	if (end_ns <= s->held_ts || __builtin_sub_overflow(end_ns, s->held_ts, &dur))
		dur = end_ns > s->held_ts ? INT64_MAX : 0; /* times at the ends of int64 */
	struct event_edit e = {
		.set_ts = true,
		.ts_ns = s->held_ts,
		.set_pid = s->held_set_pid,
		.pid = s->held_pid,
		.ph = "\"X\"",
		.add_dur = true,
		.dur_ns = dur,
		.duplicates = true,
	};

	m->line.len = 0;
	if (event_rewrite(&m->line, s->json, s->json_len, &e)) {
		m->nomem = true;
		return -1;
	}
	return merge_write_line(m, m->line.p, m->line.len);
}

/* The held B s as it was recorded: an open slice the merged file shows open. */
static int write_held_begin(struct merge *m, const struct open_slice *s)
{
	struct event_edit e = {.set_ts = true,
			       .ts_ns = s->held_ts,
			       .set_pid = s->held_set_pid,
			       .pid = s->held_pid,
			       .duplicates = true};

	m->line.len = 0;
	if (event_rewrite(&m->line, s->json, s->json_len, &e)) {
		m->nomem = true;
		return -1;
	}
	return merge_write_line(m, m->line.p, m->line.len);
}

/*
 * An E whose B is held: the slice's X in its place (an E with arguments of its own
 * gets the B and itself written as they are instead, its arguments kept). 1 when it
 * was the E of a held B (written), 0 when not, -1 on error.
 */
static int end_held(struct merge *m, struct input *in, const struct trace_event *ev)
{
	struct thread_state *th = threads_of(&in->threads, ev);
	struct open_slice *s = th != NULL && !thread_untracked(th) ? thread_top(th) : NULL;

	if (s == NULL || !s->held)
		return 0;
	s->held = false;
	if (ev->nargs > 0)
		return write_held_begin(m, s) ? -1 : 0; /* then the E, as it is */
	count_moved(m, in);
	if (write_held_slice(m, s, in->head_ts))
		return -1;
	thread_note_time(th, ev);
	thread_pop(th);
	if (ev->has_ts)
		note_time(m, in->key);
	m->written++;
	in->events++;
	return 1;
}

/* Open B slices and latest times per thread: what ends a cut input's slices. A B
 * pushed and known is in->pushed (merge_take() holds it). */
static int track_thread(struct merge *m, struct input *in, const struct trace_event *ev)
{
	struct thread_state *th = threads_of(&in->threads, ev);

	in->pushed = NULL;
	if (th == NULL && threads_refused(&in->threads))
		return 0; /* past the state bound: its slices are not ended at a cut */
	if (th == NULL) {
		m->nomem = true;
		return -1;
	}
	thread_note_time(th, ev);
	if (ev->phase == 'B') {
		int err = thread_push(th, ev);
		if (err == -ENOMEM) {
			m->nomem = true;
			return -1;
		}
		if (err == 0 && ev->has_ts && in->head_timed)
			in->pushed = thread_top(th);
	} else if (ev->phase == 'E') {
		thread_pop(th);
	}
	return 0;
}

/* An event with its edits into a Perfetto output: the event itself, its edited fields
 * replaced (what event_rewrite() does to its text). */
static int put_edited(struct merge *m, const struct trace_event *ev, const struct event_edit *e)
{
	struct trace_event c = *ev;

	if (e->set_ts) {
		c.has_ts = true;
		c.ts_ns = e->ts_ns;
	}
	if (e->set_dur) {
		c.has_dur = true;
		c.dur_ns = e->dur_ns;
	}
	if (e->set_pid) {
		c.has_pid = true;
		c.pid_num = e->pid;
	}
	if (e->id != NULL) /* a number, or a "0x..." string (no escapes) */
		c.id = e->id[0] == '"'
			       ? (struct trace_value){TRACE_STRING, e->id + 1, e->id_len - 2}
			       : (struct trace_value){TRACE_NUMBER, e->id, e->id_len};
	if (e->args != NULL)
		c.args = (struct trace_value){TRACE_OBJECT, e->args, e->args_len};
	if (pf_writer_event(m->pf, &c) == 0)
		return 0;
	m->nomem |= pf_writer_nomem(m->pf);
	return -1;
}

int merge_take(struct merge *m, struct input *in, const struct trace_event *ev)
{
	struct event_edit e = {.duplicates = ev->duplicates != 0};
	struct pid_map *pm = NULL;

	if (in->held && write_held(m, in))
		return -1;
	if (is_marker(ev, RTR__MARK_END)) {
		/* Its thread counts (threads.h); its time does not end the cut slices. */
		if (threads_of(&in->threads, ev) == NULL && !threads_refused(&in->threads)) {
			m->nomem = true;
			return -1;
		}
		return hold_end(m, in, ev);
	}
	if (ev->phase == 'E') {
		int done = end_held(m, in, ev);
		if (done != 0)
			return done < 0 ? -1 : 0;
	}
	if (track_thread(m, in, ev))
		return -1;
	if (ev->has_pid) {
		pm = merge_pid_of(m, in, ev->pid_num);
		if (pm == NULL)
			return -1;
		e.set_pid = pm->remapped;
		e.pid = pm->pid;
		if (ev->phase != 'M' && !pm->seen_event) {
			pm->seen_event = true;
			if (merge_name_process(m, in, pm, ev->pid_num))
				return -1;
		}
	}
	if (merge_is_message(in, ev) &&
	    (ev->phase == 'f' ? merge_take_receive(m, in, ev) : merge_take_send(m, in, ev)))
		return -1;
	e.set_ts = in->head_set_ts;
	e.ts_ns = in->head_ts;
	e.set_dur = in->head_set_dur;
	e.dur_ns = in->head_dur;
	count_moved(m, in);
	switch (ev->phase) {
	case 'M':
		if (pm != NULL && merge_meta_args(m, in, pm, ev, &e))
			return -1;
		break;
	case 's':
	case 't':
	case 'f':
	case 'b':
	case 'e':
	case 'n':
		if (merge_map_id(m, in, ev, &e))
			return -1;
		break;
	default:
		break;
	}
	if (ev->has_ts)
		note_time(m, in->key);
	if (ev->phase != 'M')
		m->written++;
	in->events++;
	if (in->pushed != NULL && m->pf == NULL) { /* a B: held until its E, as one X */
		in->pushed->held = true;
		in->pushed->held_ts = e.ts_ns;
		in->pushed->held_set_pid = e.set_pid;
		in->pushed->held_pid = e.pid;
		return 0;
	}
	if (m->pf != NULL)
		return put_edited(m, ev, &e);
	m->line.len = 0;
	if (event_rewrite(&m->line, ev->json, ev->json_len, &e)) {
		m->nomem = true;
		return -1;
	}
	return merge_write_line(m, m->line.p, m->line.len);
}

/* The slices a cut input left open: an E each, innermost first, 1 ns after the latest
 * time of its thread (after the end of its last X, as `check --repair` does). */
static int close_slices(struct merge *m, struct input *in)
{
	for (struct thread_state *th = threads_first(&in->threads); th != NULL;
	     th = threads_next(th)) {
		th->untracked = 0; /* past the state bound: not known, left open */
		while (th->depth > 0) {
			const struct open_slice *s = thread_top(th);
			int64_t t = th->has_time ? th->latest_ns : s->ts_ns, linear, ts = t;
			struct pid_map *pm = merge_pid_of(m, in, th->pid);

			if (pm == NULL)
				return -1;
			if (t < INT64_MAX &&
			    !merge_thread_time(m, in, th->pid, th->tid, t + 1, &linear, &ts))
				ts = t;
			m->line.len = 0;
			if (s->held) {
				if (write_held_slice(m, s, ts))
					return -1;
			} else {
				if (put_end_event(&m->line, 'E', s->cat, s->cat_len, s->name,
						  s->name_len, NULL, 0, ts, pm->pid, th->tid)) {
					m->nomem = true;
					return -1;
				}
				if (merge_write_line(m, m->line.p, m->line.len))
					return -1;
			}
			note_time(m, ts);
			in->slices_closed++;
			m->closed++;
			m->written++;
			thread_pop(th);
		}
	}
	return 0;
}

/* The held B's of a whole input's slices left open: as recorded, outermost first. */
static int show_held(struct merge *m, struct input *in)
{
	for (struct thread_state *th = threads_first(&in->threads); th != NULL;
	     th = threads_next(th))
		for (size_t i = 0; i < th->depth; i++)
			if (th->open[i].held && write_held_begin(m, &th->open[i]))
				return -1;
	return 0;
}

/* An input has no more events: how did it end? */
int merge_finish_input(struct merge *m, struct input *in)
{
	const struct trace_status *st = trace_status(in->r);
	int64_t t;

	cli_warnings_done(&in->warnings);
	in->end_seen = in->held;
	in->held = false;
	/* The input's window ends at its end marker: so does the merged one. */
	if (in->end_seen && in->held_has_ts && merge_linear_time(in, in->held_ts, &t))
		note_time(m, t);
	if (in->rc < 0)
		cli_error("merge", "%s", st->message);
	if (st->cut || in->rc < 0) {
		if (close_slices(m, in))
			return -1;
		cli_note("merge",
			 "warning: %s %s: merged its %" PRIu64 " whole events%s, %" PRIu64
			 " open slice%s ended",
			 in->name, in->rc < 0 ? "stopped at an error" : "was cut short", st->events,
			 st->cut_in_event ? " (a partial last event dropped)" : "",
			 in->slices_closed, in->slices_closed == 1 ? "" : "s");
	} else {
		if (st->events == 0)
			cli_note("merge", "warning: %s has no events", in->name);
		if (show_held(m, in))
			return -1;
	}
	return 0;
}
