/* SPDX-License-Identifier: MIT */
/*
 * The flow events of `ringtrace split` (split.h, "Flow events"): each bound to a
 * slice in its own piece, held until one encloses it, and a flow that a cut crosses
 * joined again by repeating its s.
 */
#include "split.h"

#include <stdlib.h>
#include <string.h>

void split_add_recent(struct split_thread *st, int64_t start, int64_t end)
{
	unsigned i;

	/* A slice inside the new one adds nothing: take its place. */
	for (i = 0; i < st->nrecent; i++) {
		if (st->recent[i].start >= start && st->recent[i].end <= end)
			break;
	}
	if (i == st->nrecent) {
		if (st->nrecent < RECENT_SLICES) {
			st->nrecent++;
		} else {
			i = st->next_recent;
			st->next_recent = (st->next_recent + 1) % RECENT_SLICES;
		}
	}
	st->recent[i].start = start;
	st->recent[i].end = end;
}

/* Would `check` find a slice around a flow event at ts on this thread? */
bool split_enclosed(const struct thread_state *th, const struct split_thread *st, int64_t ts)
{
	if (th->depth > 0 && th->open[0].ts_ns <= ts)
		return true;
	for (unsigned i = 0; i < st->nrecent; i++) {
		if (st->recent[i].start <= ts && ts <= st->recent[i].end)
			return true;
	}
	return false;
}

void split_forget_held(struct split *sp, struct split_thread *st, size_t i)
{
	sp->close_lines--;
	sp->close_bytes -= st->held[i].len + 2;
	free(st->held[i].json);
	memmove(st->held + i, st->held + i + 1, (st->nheld - i - 1) * sizeof(st->held[0]));
	st->nheld--;
}

static void free_flow(struct split *sp, struct open_flow *f)
{
	free(f->s);
	free(f->x);
	table_remove(&sp->flows, f);
}

/*
 * A flow event was written: an s begins a flow that a cut repeats (its s again in the
 * next piece, with the X around it, or inside the reopened B around it), an f ends
 * it. The key is the text of cat, name and id, as the viewers match them.
 */
int split_flow_written(struct split *sp, const char *json, size_t len, const struct flow_slice *in)
{
	const char *ph = NULL;
	struct json_member m;
	struct open_flow *f;
	size_t pos = 0;
	bool created;

	sp->flow_key.len = 0;
	while (json_next_member(json, len, &pos, &m)) {
		if (json_member_is(&m, "ph")) {
			ph = m.value;
			continue;
		}
		if (!json_member_is(&m, "cat") && !json_member_is(&m, "name") &&
		    !json_member_is(&m, "id"))
			continue;
		if (buf_put(&sp->flow_key, m.key, m.key_len + 1) ||
		    buf_put(&sp->flow_key, m.value, m.value_len) || buf_putc(&sp->flow_key, 0))
			return nomem(sp);
	}
	if (ph == NULL || (ph[1] != 's' && ph[1] != 'f'))
		return 0;
	if (ph[1] == 'f') {
		f = table_get(&sp->flows, sp->flow_key.p, sp->flow_key.len);
		if (f != NULL)
			free_flow(sp, f);
		return 0;
	}
	if (in == NULL || (in->x == NULL && !in->by_b)) {
		sp->flows_unbound++;
		return 0;
	}
	f = table_put(&sp->flows, sp->flow_key.p, sp->flow_key.len, &created);
	if (f == NULL)
		return nomem(sp);
	free(f->s);
	free(f->x);
	memset(f, 0, sizeof(*f));
	f->s = text_dup(json, len);
	f->s_len = len;
	if (in->x != NULL) {
		f->x = text_dup(in->x, in->x_len);
		f->x_len = in->x_len;
	}
	f->by_b = in->x == NULL;
	f->b_line = in->b_line;
	if (f->s == NULL || (in->x != NULL && f->x == NULL))
		return nomem(sp);
	if (sp->flows.count > MAX_OPEN_FLOWS) {
		free_flow(sp, table_first(&sp->flows));
		sp->flows_forgotten++;
	}
	return 0;
}

/* The pid and tid of an event's compact JSON (0 when absent). */
static void json_thread(const char *json, size_t len, int64_t *pid, int64_t *tid)
{
	struct json_member m;
	size_t pos = 0;
	bool has_tid = false;

	*pid = *tid = 0;
	while (json_next_member(json, len, &pos, &m)) {
		if (json_member_is(&m, "pid"))
			(void)json_parse_i64(m.value, m.value_len, pid);
		else if (json_member_is(&m, "tid"))
			has_tid = json_parse_i64(m.value, m.value_len, tid) == 0;
	}
	if (!has_tid)
		*tid = *pid;
}

/* At the start of a piece: the s of each flow still open, with what encloses it. */
int split_repeat_flows(struct split *sp)
{
	const char *prev_x = NULL;
	size_t prev_len = 0;

	for (struct open_flow *f = table_first(&sp->flows); f != NULL; f = table_next(f)) {
		if (f->x != NULL) {
			if (prev_x == NULL || prev_len != f->x_len ||
			    memcmp(prev_x, f->x, f->x_len) != 0) {
				if (split_write_line(sp, f->x, f->x_len))
					return -1;
			}
			prev_x = f->x;
			prev_len = f->x_len;
			if (split_write_line(sp, f->s, f->s_len))
				return -1;
		} else {
			int64_t pid, tid;
			struct thread_state *th;
			struct split_thread *st;
			const struct open_slice *b = NULL;

			json_thread(f->s, f->s_len, &pid, &tid);
			th = threads_get(&sp->threads, pid, tid);
			if (th == NULL)
				return nomem(sp);
			st = thread_extra(th);
			for (size_t i = st->absent; i < th->depth; i++) {
				if (th->open[i].line == f->b_line)
					b = &th->open[i];
			}
			if (b == NULL)
				continue; /* its slice ended: nothing to bind it to */
			{
				struct event_edit e = {
					.set_ts = true, .ts_ns = b->ts_ns, .duplicates = true};

				sp->line.len = 0;
				if (event_rewrite(&sp->line, f->s, f->s_len, &e))
					return nomem(sp);
				if (split_write_line(sp, sp->line.p, sp->line.len))
					return -1;
			}
		}
		sp->flows_repeated++;
	}
	return 0;
}

/* Write the held flow events of a thread that [start, end] encloses (or, with
 * all, those held since an earlier piece). */
int split_release_flows(struct split *sp, struct split_thread *st, int64_t start, int64_t end,
			bool all_old, const struct flow_slice *in)
{
	for (size_t i = 0; i < st->nheld;) {
		struct held_flow *h = &st->held[i];
		bool go = all_old ? h->piece < sp->piece : h->ts_ns >= start && h->ts_ns <= end;

		if (!go) {
			i++;
			continue;
		}
		if (split_write_line(sp, h->json, h->len) ||
		    split_flow_written(sp, h->json, h->len, in))
			return -1;
		sp->piece_events++;
		split_forget_held(sp, st, i);
	}
	return 0;
}

int split_hold_flow(struct split *sp, struct split_thread *st, const struct trace_event *ev)
{
	struct held_flow *h;

	if (st->nheld == MAX_HELD_FLOWS) {
		/* Held too long for any slice to come: write the oldest as it is. */
		if (split_write_line(sp, st->held[0].json, st->held[0].len) ||
		    split_flow_written(sp, st->held[0].json, st->held[0].len, NULL))
			return -1;
		sp->piece_events++;
		split_forget_held(sp, st, 0);
	}
	h = array_grow(st->held, &st->held_cap, st->nheld + 1, sizeof(*h), 8);
	if (h == NULL)
		return nomem(sp);
	st->held = h;
	h = &st->held[st->nheld];
	h->json = malloc(ev->json_len);
	if (h->json == NULL)
		return nomem(sp);
	memcpy(h->json, ev->json, ev->json_len);
	h->len = ev->json_len;
	h->ts_ns = ev->ts_ns;
	h->piece = sp->piece;
	st->nheld++;
	sp->close_lines++;
	sp->close_bytes += h->len + 2;
	return 0;
}
