/* SPDX-License-Identifier: MIT */
/*
 * The JSON format's events: one Trace Event line each, ending in ",\n" (the file's
 * bare-array form, file.c).
 *
 * Before a line is written the format reserves the most it can take; strings come
 * from the intern cache, already escaped, and are copied with memcpy. Most lines take
 * their head, up to the timestamp, whole from the head cache (struct rtr__json_head,
 * json.h), and their end, the pid and tid, from a copy made once per thread
 * (use_ids()). Everything per event is a direct call or inline here; only the batch
 * comes through the format's table. The commonest event, a leaf span, skips the look
 * at every type (write_span()); metadata, memory events and stack samples are
 * lines.c's. A line's ts is written from the last one's digits when they share them
 * (rtr__jsontext_us_near()).
 */
#include "format/json/json.h"
#include "format/json/text.h"

#include <stdio.h>
#include <string.h>

/* End the lines of thread tid with j->ids from now on. */
static inline void use_ids(struct rtr__json *j, int32_t tid)
{
	if (RTR_LIKELY(j->ids_tid == tid))
		return;
	char *p = put_pid_tid(j, j->ids, tid);
	p = PUT_LIT(p, "},\n");
	j->ids_len = (size_t)(p - j->ids);
	j->ids_tid = tid;
}

/* ,"pid":P,"tid":T},\n for an event on a track's lane, into ids; returns its length. */
static size_t lane_ids(const struct rtr__event *ev, char ids[48])
{
	char *p = PUT_LIT(ids, ",\"pid\":");
	p = rtr__jsontext_u64(p, ev->pid);
	p = PUT_LIT(p, ",\"tid\":");
	p = rtr__jsontext_u64(p, (uint32_t)ev->tid);
	p = PUT_LIT(p, "},\n");
	return (size_t)(p - ids);
}

/* Whether an event's value is an id ("id"). */
static inline bool has_id(const struct rtr__event *ev)
{
	return ev->type >= RTR__EV_FLOW_START && ev->type <= RTR__EV_ASYNC_END;
}

/* The arguments of a line, before its end: its own, then the more lists (an X's
 * folded, an E's added), then a function's source line; nothing when none. */
static char *put_line_args(struct rtr__writer *w, char *p, const struct rtr__event *ev)
{
	size_t src_len = 0;
	const char *src = NULL;

	if (RTR_UNLIKELY(ev->flags & RTR__EVF_CODE)) /* RINGTRACE_INSTRUMENT_LINES */
		src = rtr__memstack_srcline(&w->mem, ev->x.code.addr, &src_len);
	if (ev->args.n == 0 && ev->nmore == 0 && src_len == 0)
		return p;
	p -= sizeof("},\n") - 1; /* the arguments go before the line's end */
	p = PUT_LIT(p, ",\"args\":{");
	int first = 1;
	if (ev->args.n > 0) {
		p = rtr__json_arg_list(w, p, &ev->args, ev->type == RTR__EV_COUNTERS);
		first = 0;
	}
	for (uint32_t i = 0; i < ev->nmore; i++) {
		if (!first)
			*p++ = ',';
		p = rtr__json_arg_list(w, p, &ev->more[i], 0);
		first = 0;
	}
	if (src_len > 0) {
		p = PUT_LIT(p, "\"src\":\"");
		p = rtr__jsontext_escape(p, src, src_len);
		*p++ = '"';
	}
	return PUT_LIT(p, "}},\n");
}

/* The most a line of ev takes. */
static size_t line_bound(const struct rtr__event *ev)
{
	size_t bound = LINE_FIXED + 2 * (size_t)RTR_INTERN_MAX_ESCAPED + args_bound(&ev->args);

	for (uint32_t i = 0; i < ev->nmore; i++)
		bound += 1 + args_bound(&ev->more[i]);
	return bound;
}

/* Whether the X ev ends at the very time of the next event of its batch, or with a
 * slice next to it that ends then too (put_dur()): the one before it, or the one after
 * it that holds it (a slice is written at its end, so the slice around one that ends
 * with it comes next: both sums must be that time, not only the outer one's). At
 * either end of the batch the neighbour is in another batch, unseen: taken as a tie
 * (its dur exact only where three decimals miss the end; twice a batch). */
static inline bool ends_at_next(const struct rtr__batch *b, const struct rtr__event *ev)
{
	uint64_t end = ev->ts + ev->dur;

	if (RTR_UNLIKELY(ev + 1 == b->end || ev == b->ev))
		return true;
	return ev[1].ts == end || (ev[1].type == RTR__EV_SPAN && ev[1].ts + ev[1].dur == end) ||
	       (ev[-1].type == RTR__EV_SPAN && ev[-1].ts + ev[-1].dur == end);
}

/* A slice, an instant, a counter, a flow or an async event: its line. */
static void write_event(struct rtr__writer *w, struct rtr__json *j, const struct rtr__event *ev,
			bool tie)
{
	const char *ids = j->ids;
	size_t ids_len = j->ids_len;
	char track_ids[48];

	if (RTR_UNLIKELY(ev->flags & RTR__EVF_TRACK)) {
		rtr__json_track_meta(w, ev->x.track.track, ev->x.track.lane);
		ids_len = lane_ids(ev, track_ids);
		ids = track_ids;
	}
	char *p = out_reserve(w, line_bound(ev));
	uint64_t ts = rel_ns(w, ev->ts);
	p = put_head(w, p, ev);
	p = rtr__jsontext_us_near(p, ts, &j->ts_text);
	if (has_id(ev)) {
		p = put_hex_id(p, ev->value);
	} else if (ev->type == RTR__EV_SPAN) {
		/* the end, clamped like the start, so dur is exact inside the window */
		p = put_dur(p, ts, rel_ns(w, ev->ts + ev->dur), tie);
	}
	memcpy(p, ids, sizeof(j->ids));
	p += ids_len; /* the line ends here unless it has arguments */
	if (ev->type == RTR__EV_COUNTER) {
		p -= sizeof("},\n") - 1; /* the value goes before the line's end */
		p = PUT_LIT(p, ",\"args\":{\"value\":");
		p = (ev->flags & RTR__EVF_DOUBLE) ? rtr__json_f64_bits(p, ev->value)
						  : rtr__jsontext_i64_inline(p, (int64_t)ev->value);
		p = PUT_LIT(p, "}},\n");
	} else {
		p = put_line_args(w, p, ev);
	}
	out_commit(w, p, ev->count);
}

/* The common events: a leaf span on the thread's timeline with no copied name, no
 * track, and no arguments or one integer. */
static inline bool plain_span(const struct rtr__event *ev)
{
	return ev->type == RTR__EV_SPAN && ev->flags == RTR__EVF_TIMELINE && ev->nmore == 0 &&
	       (ev->args.n == 0 || (ev->args.n == 1 && ev->args.types[0] <= RTR_ARG_TYPE_U64 &&
				    ev->args.types[0] >= RTR_ARG_TYPE_I64));
}

/* A plain_span()'s line: what write_event() writes for it, without its look at every
 * type. */
static inline void write_span(struct rtr__writer *w, struct rtr__json *j,
			      const struct rtr__event *ev, bool tie)
{
	char *p = out_reserve(w, LINE_FIXED + 2 * (size_t)RTR_INTERN_MAX_ESCAPED + ARG_BOUND);
	uint64_t ts = rel_ns(w, ev->ts);

	p = put_head_keyed(w, p, ev, 1u + RTR__EV_SPAN); /* head_key() of a plain span */
	p = rtr__jsontext_us_near(p, ts, &j->ts_text);
	p = put_dur(p, ts, rel_ns(w, ev->ts + ev->dur), tie);
	memcpy(p, j->ids, sizeof(j->ids));
	p += j->ids_len;
	if (ev->args.n == 1) {
		const char *key;
		uint64_t val = rtr__args_get(&ev->args, 0, &key);
		p -= sizeof("},\n") - 1; /* the argument goes before the line's end */
		p = PUT_LIT(p, ",\"args\":{");
		p = put_arg_key(w, p, key);
		if (ev->args.types[0] == RTR_ARG_TYPE_I64)
			p = rtr__jsontext_i64_inline(p, (int64_t)val);
		else if (RTR_UNLIKELY(key == rtr__arg_key_code)) /* the OMPT tool's */
			p = rtr__json_code_value(w, p, val);
		else
			p = rtr__jsontext_u64_inline(p, val);
		p = PUT_LIT(p, "}},\n");
	}
	out_commit(w, p, ev->count);
}

/* The other common events: a B, an E or an instant on the thread's timeline with no
 * copied name and no arguments. Its line is its head, ts and ids. */
static inline bool plain_mark(const struct rtr__event *ev)
{
	return (ev->type == RTR__EV_BEGIN || ev->type == RTR__EV_END ||
		ev->type == RTR__EV_INSTANT) &&
	       ev->flags == RTR__EVF_TIMELINE && ev->args.n == 0 && ev->nmore == 0;
}

static inline void write_mark(struct rtr__writer *w, struct rtr__json *j,
			      const struct rtr__event *ev)
{
	char *p = out_reserve(w, LINE_FIXED + 2 * (size_t)RTR_INTERN_MAX_ESCAPED);

	p = put_head(w, p, ev);
	p = rtr__jsontext_us_near(p, rel_ns(w, ev->ts), &j->ts_text);
	memcpy(p, j->ids, sizeof(j->ids));
	p += j->ids_len;
	out_commit(w, p, ev->count);
}

uint64_t rtr__json_events(struct rtr__writer *w, struct rtr__batch *b)
{
	struct rtr__json *j = json_of(w);
	struct rtr__event *ev;
	uint64_t events = 0;

	for (ev = rtr__batch_first(w, b); ev != NULL; ev = rtr__batch_next(w, b, ev)) {
		events += ev->count;
		if (RTR_LIKELY(plain_span(ev)))
			write_span(w, j, ev, ends_at_next(b, ev));
		else if (plain_mark(ev))
			write_mark(w, j, ev);
		else if (RTR_LIKELY(ev->type <= RTR__EV_ASYNC_END && ev->type != RTR__EV_SKIP))
			write_event(w, j, ev, ev->type == RTR__EV_SPAN && ends_at_next(b, ev));
		else
			rtr__json_other(w, b->ring, ev);
	}
	return events;
}

void rtr__json_begin_ring(struct rtr__writer *w, struct rtr__ring *r)
{
	struct rtr__json *j = json_of(w);

	use_ids(j, r->tid);
	if (RTR_UNLIKELY(j->process_meta_file != w->out.file_id &&
			 j->prev_meta_file != w->out.file_id))
		rtr__json_process_meta(w);
	if (RTR_UNLIKELY(j->heads_epoch != j->intern.resets)) {
		/* the intern cache was emptied: so are the heads, a batch later at most */
		memset(j->heads, 0, HEAD_SLOTS * sizeof(*j->heads));
		j->heads_epoch = j->intern.resets;
	}
}
