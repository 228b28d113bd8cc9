/* SPDX-License-Identifier: MIT */
/*
 * The pieces of `ringtrace split` (split.h): what fits in one, its start and end
 * markers, and its beginning and its end at a cut: the names repeated, the open
 * slices and spans reopened, and closed again at the end.
 */
#include "split.h"

#include "cli.h"
#include "common/names.h"
#include "output.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int split_write_line(struct split *sp, const char *json, size_t len)
{
	sp->lines++;
	sp->bytes += len + 2;
	return output_write(sp->out, json, len) || output_write(sp->out, ",\n", 2);
}

/* A time written in the piece. */
void split_note_piece_time(struct split *sp, int64_t t)
{
	if (t > sp->ts_to)
		sp->ts_to = t;
}

/* Does an event of len bytes fit the piece, with what ending it then takes (a B or b
 * adds the E or e that may have to end it)? */
bool split_fits(const struct split *sp, const struct trace_event *ev, uint64_t lines, uint64_t len)
{
	bool opens = ev->phase == 'B' || ev->phase == 'b';
	uint64_t close_lines = sp->close_lines + opens;
	uint64_t close_bytes = sp->close_bytes;

	if (opens)
		close_bytes += close_cost(ev->cat.len, ev->name.len, ev->id.len);
	if (sp->max_events > 0 && sp->lines + lines + close_lines + 1 > sp->max_events)
		return false;
	if (sp->max_bytes > 0 &&
	    sp->bytes + len + 2 * lines + close_bytes + END_RESERVE + 2 > sp->max_bytes)
		return false;
	return true;
}

/* The marker args a piece adds: "piece":K,"ts_from":T,... into sp->args. */
static int piece_args(struct split *sp, bool end)
{
	struct buf *a = &sp->args;

	a->len = 0;
	if (buf_puts(a, "\"piece\":") || buf_put_u64(a, sp->piece) ||
	    buf_puts(a, ",\"ts_from\":") || buf_put_us(a, sp->ts_from))
		return -1;
	if (end && (buf_puts(a, ",\"ts_to\":") || buf_put_us(a, sp->ts_to) ||
		    buf_puts(a, ",\"piece_events\":") || buf_put_u64(a, sp->piece_events) ||
		    buf_puts(a, ",\"slices_closed\":") || buf_put_u64(a, sp->piece_closed) ||
		    buf_puts(a, ",\"async_closed\":") || buf_put_u64(a, sp->piece_async_closed)))
		return -1;
	return 0;
}

static int write_start_marker(struct split *sp)
{
	struct buf *b = &sp->line;

	if (piece_args(sp, false))
		return nomem(sp);
	b->len = 0;
	if (carry_start_marker(b, sp->has_start ? sp->start_json.p : NULL, sp->start_json.len,
			       sp->piece > 1, sp->ts_from, sp->marker_pid, sp->marker_tid,
			       sp->args.p, sp->args.len))
		return nomem(sp);
	return split_write_line(sp, b->p, b->len);
}

/* Keys of the original end marker that a piece's end marker writes itself. */
static bool own_end_key(const struct json_member *a)
{
	static const char *const keys[] = {RTR__KEY_FINAL, "piece",	    "ts_from",	   "ts_to",
					   "piece_events", "slices_closed", "async_closed"};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (json_member_is(a, keys[i]))
			return true;
	}
	return false;
}

/* The piece's end marker and the closing ']'; last: the original's counts too. */
static int write_end_marker(struct split *sp, bool last)
{
	struct buf *b = &sp->line;
	int64_t ts = sp->ts_to;
	bool original = last && sp->held_end;
	struct json_member a;
	size_t pos = 0;
	int err;

	if (original && sp->end_has_ts && sp->end_ts > ts)
		ts = sp->end_ts;
	if (piece_args(sp, true))
		return nomem(sp);
	b->len = 0;
	err = buf_puts(b, "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"" RTR__MARK_END "\",\"ts\":") ||
	      buf_put_us(b, ts) || buf_puts(b, ",\"pid\":") || buf_put_i64(b, sp->marker_pid) ||
	      buf_puts(b, ",\"tid\":") || buf_put_i64(b, sp->marker_tid) ||
	      buf_puts(b, ",\"args\":{\"" RTR__KEY_FINAL "\":true");
	while (!err && original && json_next_member(sp->end_args.p, sp->end_args.len, &pos, &a)) {
		if (own_end_key(&a))
			continue;
		err = buf_puts(b, ",\"") || buf_put(b, a.key, a.key_len) || buf_puts(b, "\":") ||
		      buf_put(b, a.value, a.value_len);
	}
	if (err || buf_putc(b, ',') || buf_put(b, sp->args.p, sp->args.len) || buf_puts(b, "}}"))
		return nomem(sp);
	sp->lines++;
	sp->bytes += b->len + 3;
	return output_write(sp->out, b->p, b->len) || output_puts(sp->out, "\n]\n");
}

static int open_piece(struct split *sp, int64_t ts_from)
{
	char num[32];
	int err;

	sp->piece++;
	free(sp->path);
	snprintf(num, sizeof(num), "-%04u.json%s", sp->piece, sp->gzip ? ".gz" : "");
	sp->path = malloc(strlen(sp->prefix) + strlen(num) + 1);
	if (sp->path == NULL)
		return nomem(sp);
	strcpy(sp->path, sp->prefix);
	strcat(sp->path, num);
	err = output_open(sp->path, sp->gzip, &sp->out);
	if (err != 0) {
		cli_error("split", "cannot write %s: %s", sp->path, output_strerror(err));
		return -1;
	}
	sp->lines = 0;
	sp->bytes = 2;
	sp->piece_events = 0;
	sp->piece_closed = sp->piece_async_closed = 0;
	sp->ts_from = sp->ts_to = ts_from;
	return output_puts(sp->out, "[\n");
}

/* The start of a piece after the first: marker, names, the slices and spans that the
 * previous piece closed, reopened. */
static int begin_piece(struct split *sp, int64_t ts_from)
{
	struct buf *b = &sp->line;

	if (open_piece(sp, ts_from) || write_start_marker(sp))
		return -1;
	for (struct kept_event *mt = table_first(&sp->carry.meta); mt != NULL;
	     mt = table_next(mt)) {
		if (split_write_line(sp, mt->json, mt->len))
			return -1;
	}
	uint64_t room_lines = sp->max_events / 2, room_bytes = sp->max_bytes / 2;

	for (struct thread_state *th = threads_first(&sp->threads); th != NULL;
	     th = threads_next(th)) {
		struct split_thread *st = thread_extra(th);
		int64_t at = 0;
		bool has_at = split_reopen_time(th, st, &at);

		st->nrecent = st->next_recent = 0;
		/* The innermost max_reopen: a stack of unended B events (a hostile file,
		 * or one whose E were lost) would otherwise be repeated by every piece. */
		st->absent = th->depth > sp->max_reopen ? th->depth - sp->max_reopen : 0;
		/* And at most half a piece of them in all: many threads with a slice open
		 * each would otherwise fill every piece with them. The thread's innermost
		 * slices that fit are reopened, the rest left out like the above. */
		for (;;) {
			uint64_t lines = th->depth - st->absent, bytes = 0;

			for (size_t i = st->absent; i < th->depth; i++)
				bytes += split_reopen_cost(&th->open[i]);
			if ((sp->max_events == 0 || lines <= room_lines) &&
			    (sp->max_bytes == 0 || bytes <= room_bytes)) {
				room_lines -= sp->max_events > 0 ? lines : 0;
				room_bytes -= sp->max_bytes > 0 ? bytes : 0;
				break;
			}
			st->absent++;
		}
		sp->not_reopened += st->absent;
		for (size_t i = st->absent; i < th->depth; i++) {
			struct event_edit e = {.set_ts = has_at, .ts_ns = at, .duplicates = true};
			struct open_slice *s = &th->open[i];

			b->len = 0;
			if (event_rewrite(b, s->json, s->json_len, &e))
				return nomem(sp);
			if (split_write_line(sp, b->p, b->len))
				return -1;
			/* It begins here now: what encloses a flow in this piece, and the X
			 * events of the piece that it encloses. */
			if (has_at)
				s->ts_ns = at;
			st->inner_end[i] = INT64_MIN;
			sp->close_lines++;
			sp->close_bytes += split_slice_cost(s);
			sp->reopened++;
		}
	}
	for (struct async_span *as = table_first(&sp->carry.async); as != NULL;
	     as = table_next(as)) {
		for (size_t i = 0; i < as->depth; i++) {
			struct event_edit e = {
				.set_ts = true, .ts_ns = as->latest_ns, .duplicates = true};

			b->len = 0;
			if (event_rewrite(b, as->open[i].json, as->open[i].len, &e))
				return nomem(sp);
			if (split_write_line(sp, b->p, b->len))
				return -1;
			sp->close_lines++;
			sp->close_bytes += close_cost(as->cat_len, as->name_len, as->id_len);
		}
	}
	if (split_repeat_flows(sp))
		return -1;
	for (struct thread_state *th = threads_first(&sp->threads); th != NULL;
	     th = threads_next(th)) {
		struct split_thread *st = thread_extra(th);

		for (size_t i = 0; i < st->nheld; i++) {
			sp->close_lines++;
			sp->close_bytes += st->held[i].len + 2;
		}
	}
	return 0;
}

/*
 * End the piece: flows held since the previous piece, an E per open B (innermost
 * first, 1 ns after its thread's latest time), an e per open async span, the end
 * marker. At a cut the open state stays: the next piece reopens it. last: nothing
 * follows; what is open is ended only when close says so (the input was cut short),
 * else left as the original left it.
 */
int split_end_piece(struct split *sp, bool last, bool close)
{
	struct buf *b = &sp->line;
	int64_t async_at = ns_after(sp->has_latest ? sp->latest : 0);

	for (struct thread_state *th = threads_first(&sp->threads); th != NULL;
	     th = threads_next(th)) {
		if (split_release_flows(sp, thread_extra(th), 0, 0, true, NULL))
			return -1;
	}
	for (struct thread_state *th = threads_first(&sp->threads); th != NULL;
	     th = threads_next(th)) {
		struct split_thread *st = thread_extra(th);
		int64_t run, at = 0;

		if (th->depth <= st->absent || !close)
			continue;
		run = st->has_plain ? st->plain_ns : th->open[th->depth - 1].ts_ns;
		for (size_t i = th->depth; i-- > st->absent;) {
			const struct open_slice *s = &th->open[i];

			if (st->inner_end[i] > run)
				run = st->inner_end[i];
			at = ns_after(run);
			b->len = 0;
			if (put_end_event(b, 'E', s->cat, s->cat_len, s->name, s->name_len, NULL, 0,
					  at, th->pid, th->tid))
				return nomem(sp);
			if (split_write_line(sp, b->p, b->len))
				return -1;
			sp->piece_closed++;
			sp->closed++;
		}
		split_note_piece_time(sp, at);
		if (last) {
			while (th->depth > 0)
				thread_pop(th);
			st->absent = 0;
		}
	}
	if (close) {
		for (struct async_span *as = table_first(&sp->carry.async); as != NULL;
		     as = table_next(as)) {
			for (size_t i = as->depth; i-- > 0;) {
				b->len = 0;
				if (put_end_event(b, 'e', as->cat, as->cat_len, as->name,
						  as->name_len, as->id, as->id_len, async_at,
						  as->pid, as->tid))
					return nomem(sp);
				if (split_write_line(sp, b->p, b->len))
					return -1;
				sp->piece_async_closed++;
				sp->async_closed++;
			}
			if (as->depth > 0)
				split_note_piece_time(sp, async_at);
		}
	}
	if (write_end_marker(sp, last))
		return -1;
	if (output_commit(sp->out) != 0) {
		cli_error("split", "%s", output_error(sp->out));
		return -1;
	}
	output_free(sp->out);
	sp->out = NULL;
	sp->close_lines = sp->close_bytes = 0;
	return 0;
}

/* Cut before the event ev: end this piece, begin the next at the cut. */
int split_cut(struct split *sp, const struct trace_event *ev)
{
	int64_t from = ev->has_ts ? ev->ts_ns : sp->latest;

	if (split_end_piece(sp, false, true))
		return -1;
	for (struct thread_state *th = threads_first(&sp->threads); th != NULL;
	     th = threads_next(th)) {
		int64_t at;

		if (th->depth > 0 && split_reopen_time(th, thread_extra(th), &at) && at < from)
			from = at;
	}
	for (struct async_span *as = table_first(&sp->carry.async); as != NULL;
	     as = table_next(as)) {
		if (as->latest_ns < from)
			from = as->latest_ns;
	}
	if (begin_piece(sp, from))
		return -1;
	if (!sp->warned_framing && sp->max_events > 0 &&
	    sp->lines + 2 + sp->close_lines >= sp->max_events) {
		sp->warned_framing = true;
		cli_note("split",
			 "warning: %s: the names and open slices a piece repeats leave no room "
			 "under --max-events %" PRIu64 ": a piece holds one event at least",
			 sp->path, sp->max_events);
	} else if (!sp->warned_framing && sp->max_bytes > 0 &&
		   sp->bytes + sp->close_bytes + END_RESERVE >= sp->max_bytes) {
		sp->warned_framing = true;
		cli_note("split",
			 "warning: %s: the names and open slices a piece repeats leave no room "
			 "under --max-mb: a piece holds one event at least",
			 sp->path);
	}
	return 0;
}

/* Where the next events go (ev and lines - 1 more, len bytes in all): the first
 * piece, or a new one when they do not fit. */
int split_place(struct split *sp, const struct trace_event *ev, uint64_t lines, uint64_t len)
{
	if (sp->out == NULL) {
		if (!sp->has_ids) {
			trace_event_thread(ev, &sp->marker_pid, &sp->marker_tid);
			sp->has_ids = true;
		}
		return open_piece(sp, ev->has_ts ? ev->ts_ns : 0) || write_start_marker(sp);
	}
	if (sp->piece_events > 0 && !split_fits(sp, ev, lines, len))
		return split_cut(sp, ev);
	return 0;
}
