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
static uint64_t latest_ts(struct rtr__writer *w, size_t n, int what)
{
	uint64_t latest = w->s.origin_ns;

	for (size_t i = 0; i < n; i++) {
		struct rtr__ring *r = w->drain.rings[i];
		if (rtr__reader_of(r)->session == w->drain.session_id) {
			uint64_t t = ring_cut_ts(w, r, what);
			latest = t > latest ? t : latest;
		}
	}
	return latest;
}

/*
 * r's open slices ended (innermost first, with the arguments added so far) or begun
 * again (outermost first, with the B's own arguments), at ts, within *budget.
 * Returns the lines.
 */
static uint64_t cut_ring(struct rtr__writer *w, struct rtr__ring *r, int what, uint64_t ts,
			 size_t *budget)
{
	const struct rtr__slices *s = rtr__reader_of(r)->slices;
	uint64_t lines = 0;

	for (uint32_t k = 0; k < s->depth; k++) {
		uint32_t i = what == RTR__CUT_BEGIN ? k : s->depth - 1 - k;
		const struct rtr__open_slice *l = &s->level[i];
		struct rtr__event ev;
		memset(&ev, 0, sizeof(ev));
		ev.type = what == RTR__CUT_BEGIN ? RTR__EV_BEGIN : RTR__EV_END;
		ev.count = 0;
		ev.name = l->name;
		ev.cat = l->cat;
		ev.tid = r->tid;
		ev.ts = ts;
		if (l->name == NULL && l->copy_len != UINT32_MAX) {
			ev.flags = RTR__EVF_COPIED;
			ev.name = s->text + l->copy_off;
			ev.name_len = l->copy_len;
		}
		if (what == RTR__CUT_BEGIN) {
			rtr__slices_bargs(s, i, &ev.args);
		} else {
			ev.more = w->drain.added;
			ev.nmore = rtr__slices_added(s, i, w->drain.added, RTR_SLICES_ADDED_MAX);
		}
		if (!w->fmt->cut(w, r, &ev, what, budget))
			break; /* the caller counts what is left */
		lines++;
	}
	return lines;
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
	size_t n = rtr__rings_snapshot(&w->drain.rings, &w->drain.rings_cap);
	uint64_t lines = 0;
	size_t start = w->out.chunk->len;

	for (size_t i = 0; i < n; i++) {
		struct rtr__ring *r = w->drain.rings[i];
		if (!has_open(w, r))
			continue;
		const struct rtr__slices *s = rtr__reader_of(r)->slices;
		if (what == RTR__CUT_BEGIN && rtr__reader_of(r)->meta_file != w->out.file_id)
			rtr__drain_thread_meta(w, r, 0);
		size_t used = w->out.chunk->len - start; /* within one chunk while budgeted */
		size_t left = budget > used ? budget - used : 0;
		uint64_t k = cut_ring(w, r, what, ring_cut_ts(w, r, what), &left);
		lines += k;
		if (what != RTR__CUT_BEGIN)
			w->out.cut_lost += s->depth - k + s->overflow;
	}
	size_t used = w->out.chunk->len - start;
	size_t left = budget > used ? budget - used : 0;
	lines += cut_async(w, what, latest_ts(w, n, what), &left);
	if (what == RTR__CUT_BEGIN) {
		/* and the ring being drained, which may be midway through a batch */
		struct rtr__ring *cur = w->drain.current;
		if (cur != NULL && rtr__reader_of(cur)->session == w->drain.session_id &&
		    rtr__reader_of(cur)->meta_file != w->out.file_id)
			rtr__drain_thread_meta(w, cur, 0);
	}
	return lines;
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
