/* SPDX-License-Identifier: MIT */
/*
 * What a cut writes. Every file of a session is a whole trace (files.c, flight.c):
 * what is open where a file ends, the threads' slices (slices.h) and the async spans
 * (async_open.h), ends there, at the thread's latest time written (a line with
 * "cut":true, or "open":true at a snapshot's end), and begins again where the next
 * file starts with the same arguments and "continued":true. So each file opens in a
 * viewer on its own, with every slice whole. The lines are the format's
 * (rtr__format.cut); what they say is here.
 *
 * The closing lines' bytes, for a segment's room (files.c), are kept as the open
 * slices and spans change (event.c, drain.c): rtr__cut_closing_bytes() costs nothing.
 */
#include "writer/cut.h"

#include "writer/drain.h"
#include "writer/format.h"
#include "writer/polls.h"
#include "writer/slices.h"

#include <string.h>

/* The latest time written on r's timeline, on the trace clock and not before the
 * origin: where a cut ends and begins again r's open slices. A snapshot shows them
 * open after the polls it shows pending (rtr__drain_polls()). */
static uint64_t ring_cut_ts(struct rtr__writer *w, struct rtr__ring *r, int what)
{
	uint64_t t = rtr__drain_cut_ns(w, r);

	if (what == RTR__CUT_OPEN && rtr__polls_end_ns(r) > t)
		t = rtr__polls_end_ns(r);
	return t > w->s.origin_ns ? t : w->s.origin_ns;
}

/* Whether r belongs to this session and has slices open. */
static int has_open(struct rtr__writer *w, struct rtr__ring *r)
{
	const struct rtr__reader *rd = rtr__reader_of(r);

	return rd->session == w->drain.session_id && rd->slices != NULL &&
	       (rd->slices->depth > 0 || rd->slices->overflow > 0);
}

/* The latest time written on any thread: where async spans end and begin again. */
static uint64_t latest_ts(struct rtr__writer *w, const struct rtr__ring_list *rings, int what)
{
	uint64_t latest = w->s.origin_ns;

	for (size_t i = 0; i < rings->n; i++) {
		struct rtr__ring *r = rings->v[i];
		if (rtr__reader_of(r)->session == w->drain.session_id) {
			uint64_t t = ring_cut_ts(w, r, what);
			latest = t > latest ? t : latest;
		}
	}
	return latest;
}

/* Level i of r's open slices as an event of type `type` at ts, named (its arguments
 * are the caller's). */
static void level_event(struct rtr__ring *r, const struct rtr__slices *s, uint32_t i, int type,
			uint64_t ts, struct rtr__event *ev)
{
	const struct rtr__open_slice *l = &s->level[i];

	memset(ev, 0, sizeof(*ev));
	ev->type = (uint8_t)type;
	ev->name = l->name;
	ev->cat = l->cat;
	ev->tid = r->tid;
	ev->ts = ts;
	if (l->name == NULL && l->copy_len != UINT32_MAX) {
		ev->flags = RTR__EVF_COPIED;
		ev->name = s->text + l->copy_off;
		ev->name_len = l->copy_len;
	}
}

/*
 * Level i ended at ts (what: RTR__CUT_END, RTR__CUT_OPEN): an E with the arguments
 * added so far, or, held, the whole slice with the B's arguments too, up to ts and
 * 1 ns more for each level it holds open: a slice that ended at ts inside it stays
 * inside it for a viewer that adds ts and dur as doubles, whose sums may differ by
 * a unit in the last place where the times are equal (speedscope then pairs the ends
 * wrongly).
 */
static int cut_end(struct rtr__writer *w, struct rtr__ring *r, uint32_t i, int what, uint64_t ts,
		   size_t *budget)
{
	const struct rtr__slices *s = rtr__reader_of(r)->slices;
	const struct rtr__open_slice *l = &s->level[i];
	struct rtr__event ev;

	if (!l->held) {
		level_event(r, s, i, RTR__EV_END, ts, &ev);
		ev.more = w->drain.added;
		ev.nmore = rtr__slices_added(s, i, w->drain.added, RTR_SLICES_ADDED_MAX);
		return w->fmt->cut(w, r, &ev, what, budget) ? 1 : -1;
	}
	uint64_t end = ts + (s->depth - i);
	level_event(r, s, i, RTR__EV_SPAN, l->ts, &ev);
	ev.dur = end > l->ts ? end - l->ts : 0;
	rtr__slices_bargs(s, i, &ev.args);
	ev.more = w->drain.added;
	ev.nmore = rtr__slices_added(s, i, w->drain.added, RTR_SLICES_ADDED_MAX);
	if (l->continued)
		rtr__slices_continued(&w->drain.added[ev.nmore++]);
	return w->fmt->cut(w, r, &ev, what, budget) ? 1 : -1;
}

/*
 * Level i begun again where a file begins, at ts: a B with the B's own arguments, or,
 * held, nothing yet: in a new segment its line will begin here, "continued"; in a
 * flight chunk (whose slices a snapshot begins from the window's first chunk) the
 * slice's line, when its E comes, holds all of it. Returns 1 when it is begun again
 * (a line, or a held slice's X to come), 0 when not, -1 when its line found no room.
 */
static int cut_begin(struct rtr__writer *w, struct rtr__ring *r, uint32_t i, uint64_t ts,
		     size_t *budget)
{
	struct rtr__slices *s = rtr__reader_of(r)->slices;
	struct rtr__open_slice *l = &s->level[i];
	struct rtr__event ev;

	if (l->held) {
		if (w->out.flight != NULL)
			return 0;
		l->ts = ts;
		l->continued = 1;
		return 1;
	}
	level_event(r, s, i, RTR__EV_BEGIN, ts, &ev);
	rtr__slices_bargs(s, i, &ev.args);
	return w->fmt->cut(w, r, &ev, RTR__CUT_BEGIN, budget) ? 1 : -1;
}

/* A held level's B, as recorded ("continued" when a cut began it again): the file
 * shows it open. */
static bool cut_held(struct rtr__writer *w, struct rtr__ring *r, uint32_t i, size_t *budget)
{
	const struct rtr__slices *s = rtr__reader_of(r)->slices;
	const struct rtr__open_slice *l = &s->level[i];
	struct rtr__event ev;

	if (!l->held)
		return true; /* in the file already */
	level_event(r, s, i, RTR__EV_BEGIN, l->ts, &ev);
	rtr__slices_bargs(s, i, &ev.args);
	return w->fmt->cut(w, r, &ev, l->continued ? RTR__CUT_BEGIN : RTR__CUT_HELD, budget);
}

/*
 * r's open slices ended (innermost first) or begun again (outermost first), at ts,
 * within *budget. Returns the levels done; *counted: those ended, or begun again.
 */
static uint64_t cut_ring(struct rtr__writer *w, struct rtr__ring *r, int what, uint64_t ts,
			 size_t *budget, uint64_t *counted)
{
	uint32_t depth = rtr__reader_of(r)->slices->depth;
	uint64_t done = 0;

	for (uint32_t k = 0; k < depth; k++) {
		int ok = what == RTR__CUT_BEGIN ? cut_begin(w, r, k, ts, budget)
						: cut_end(w, r, depth - 1 - k, what, ts, budget);
		if (ok < 0)
			break; /* the caller counts what is left */
		*counted += (uint64_t)ok;
		done++;
	}
	return done;
}

/* The open async spans ended (newest first) or begun again (oldest first). */
static uint64_t cut_async(struct rtr__writer *w, int what, uint64_t ts, size_t *budget)
{
	static const struct rtr__async_span *list[RTR_ASYNC_OPEN_MAX]; /* writer thread only */
	size_t n = rtr__async_open_list(&w->async, what == RTR__CUT_BEGIN ? 1 : -1, list);
	uint64_t lines = 0;

	for (size_t i = 0; i < n; i++) {
		struct rtr__async_desc d;
		struct rtr__event ev;
		rtr__async_open_desc(list[i], &d);
		memset(&ev, 0, sizeof(ev));
		ev.type = what == RTR__CUT_BEGIN ? RTR__EV_ASYNC_BEGIN : RTR__EV_ASYNC_END;
		ev.flags = (uint8_t)((d.copied ? RTR__EVF_COPIED : 0) |
				     (d.on_track ? RTR__EVF_TRACK : 0));
		ev.name = d.name;
		ev.name_len = d.name_len;
		ev.cat = d.cat;
		ev.value = d.id;
		ev.tid = d.tid;
		ev.pid = d.pid;
		ev.args = d.args;
		ev.ts = ts;
		if (!w->fmt->cut(w, NULL, &ev, what, budget))
			break;
		lines++;
	}
	return lines;
}

/*
 * End what is open (what: RTR__CUT_END, RTR__CUT_OPEN) or begin it again
 * (RTR__CUT_BEGIN), within `budget` bytes. Beginning, it names the threads first.
 * Returns the lines; what could not be written is counted in cut_lost (once, at the
 * end, for slices past the stack's depth).
 */
uint64_t rtr__cut_lines(struct rtr__writer *w, int what, size_t budget)
{
	if (what != RTR__CUT_BEGIN) /* the polls being folded first, in the file */
		rtr__drain_polls(w, what == RTR__CUT_OPEN);
	struct rtr__ring_list rings;
	size_t n = rtr__rings_list(&rings);
	uint64_t lines = 0;
	size_t start = w->out.chunk->len;

	for (size_t i = 0; i < n; i++) {
		struct rtr__ring *r = rings.v[i];
		if (!has_open(w, r))
			continue;
		const struct rtr__slices *s = rtr__reader_of(r)->slices;
		if (what == RTR__CUT_BEGIN && rtr__reader_of(r)->meta_file != w->out.file_id)
			rtr__drain_thread_meta(w, r, 0);
		size_t used = w->out.chunk->len - start; /* within one chunk while budgeted */
		size_t left = budget > used ? budget - used : 0;
		uint64_t k = cut_ring(w, r, what, ring_cut_ts(w, r, what), &left, &lines);
		if (what != RTR__CUT_BEGIN)
			w->out.cut_lost += s->depth - k + s->overflow;
	}
	size_t used = w->out.chunk->len - start;
	size_t left = budget > used ? budget - used : 0;
	lines += cut_async(w, what, latest_ts(w, &rings, what), &left);
	rtr__rings_list_done(&rings);
	if (what == RTR__CUT_BEGIN) {
		/* and the ring being drained, which may be midway through a batch */
		struct rtr__ring *cur = w->drain.current;
		if (cur != NULL && rtr__reader_of(cur)->session == w->drain.session_id &&
		    rtr__reader_of(cur)->meta_file != w->out.file_id)
			rtr__drain_thread_meta(w, cur, 0);
		rtr__event_rebegun(w); /* its X, if it was one, begins where the file does */
	}
	return lines;
}

/* The most a held level's B line takes: its strings escaped at six bytes a byte, its
 * arguments as JSON (the one format that holds B's), the rest of the line. */
static size_t held_bound(const struct rtr__slices *s, uint32_t i)
{
	const struct rtr__open_slice *l = &s->level[i];
	size_t name = l->name != NULL		  ? strnlen(l->name, RTR_MAX_COPY)
		      : l->copy_len != UINT32_MAX ? l->copy_len
						  : 0;
	size_t cat = l->cat != NULL ? strnlen(l->cat, RTR_MAX_COPY) : 0;
	struct rtr__args a;

	return 256 + 6 * (name + cat) +
	       (rtr__slices_bargs(s, i, &a) ? rtr__slices_json_bytes(&a) : 0);
}

/* r's held B's as lines, outermost first, within *budget bytes (SIZE_MAX: none).
 * Returns the held levels left out. */
static uint64_t show_held(struct rtr__writer *w, struct rtr__ring *r, size_t *budget)
{
	const struct rtr__slices *s = rtr__reader_of(r)->slices;
	uint64_t left_out = 0;

	for (uint32_t i = 0; i < s->depth; i++) {
		size_t need = held_bound(s, i) + PAGE_BYTES; /* and a page's padding */
		size_t any = SIZE_MAX, before = w->out.chunk->len;
		if (!s->level[i].held)
			continue;
		if (*budget != SIZE_MAX && need > *budget) {
			left_out++;
			continue;
		}
		cut_held(w, r, i, &any);
		if (*budget != SIZE_MAX)
			*budget -= w->out.chunk->len - before;
	}
	return left_out;
}

uint64_t rtr__cut_show_held(struct rtr__writer *w, struct rtr__ring *only, size_t budget)
{
	struct rtr__ring_list rings;
	uint64_t left_out = 0;

	if (!w->drain.hold)
		return 0;
	if (only != NULL)
		return has_open(w, only) ? show_held(w, only, &budget) : 0;
	size_t n = rtr__rings_list(&rings);
	for (size_t i = 0; i < n; i++)
		if (has_open(w, rings.v[i]))
			left_out += show_held(w, rings.v[i], &budget);
	rtr__rings_list_done(&rings);
	return left_out;
}

uint64_t rtr__cut_closing_bytes(struct rtr__writer *w)
{
	/* the end marker and "]", a page of padding (out_commit()), the open slices' and
	 * async spans' lines (struct rtr__out.closing) */
	return 1024 + PAGE_BYTES + w->out.closing;
}

uint64_t rtr__cut_end_open(struct rtr__writer *w, int what)
{
	return rtr__cut_lines(w, what, SIZE_MAX);
}
