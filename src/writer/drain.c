/* SPDX-License-Identifier: MIT */
/*
 * The drain: reading the rings. Knows records (record.h) and rings (ring.h), not the
 * output format, to which it hands a batch of decoded events at a time (event.c,
 * rtr__format.events).
 *
 * Each pass (rtr__drain_all()) takes a snapshot of the registered rings and drains
 * each in turn, a bounded batch per ring so one busy thread cannot starve the
 * others. A ring's records are read in place, framed one header at a time
 * (rtr__rec_framed()) before anything past the header is trusted, and handed back
 * to the producer every RELEASE_EVERY records, once the format has encoded them.
 *
 * Folding. A B whose E is the thread's next event, with the same static name and
 * category, goes to the format with its E as one event (an X line in JSON, the
 * same slice in every viewer in about half the bytes). Nothing is held back waiting for
 * an E, so folding never delays a line.
 *
 * Polls. A thread's consecutive polls (an MPI test or probe call that completed
 * nothing) are folded into one slice (polls.c), which goes to the format just before
 * the thread's next other event; what is pending when a pass ends stays pending.
 *
 * Malformed records (a program may scribble over its ring) are skipped and counted
 * as dropped_corrupt, the first reported on stderr: one that frames but does not
 * decode alone; one that does not frame with everything published after it, since
 * where the next event starts is unknown.
 *
 * Per ring and session the writer keeps its reader state in the ring (struct
 * rtr__reader): the producer's counters when the session began, so that a ring that
 * outlives a session starts the next one at zero, and what was consumed. A closed
 * ring found drained is folded into the session's totals and freed.
 */
#include "writer/drain.h"

#include "common/atomic.h"
#include "writer/account.h"
#include "writer/decode.h"
#include "writer/format.h"
#include "writer/polls.h"
#include "writer/slices.h"

#include <stdio.h>
#include <string.h>

#define RELEASE_EVERY 1024u /* records consumed before tail is handed back */

#define reader_of rtr__reader_of

static uint64_t ring_dropped(struct rtr__ring *r)
{
	/* producer-owned counters: a stale value only delays the report */
	return rtr_atomic_load_relaxed(&r->dropped_full) +
	       rtr_atomic_load_relaxed(&r->dropped_large) +
	       rtr_atomic_load_relaxed(&r->dropped_reentrant) +
	       rtr_atomic_load_relaxed(&r->dropped_no_track);
}

/*
 * The thread's name and sort index, once per file: every segment and every chunk of
 * the flight window names the threads it holds events of. A thread whose first event
 * names it needs no name from before. The name is the ring's (the latest that
 * rtr_thread_name() gave it: rtr__event_rename_ring(), event.c).
 */
void rtr__drain_thread_meta(struct rtr__writer *w, struct rtr__ring *r, int first_event_names)
{
	struct rtr__reader *rd = rtr__reader_attach(w, r);

	rd->meta_file = w->out.file_id;
	if (!first_event_names)
		w->fmt->meta(w, r, RTR__WMETA_THREAD_NAME, 0);
	/* relaxed: set by the owning thread; a late value is in the ring too */
	int sort = __atomic_load_n(&r->sort_index, __ATOMIC_RELAXED);
	if (sort != 0)
		w->fmt->meta(w, r, RTR__WMETA_THREAD_SORT, sort - 1);
	if (!rd->meta_done) {
		rd->meta_done = 1;
		w->drain.threads++;
	}
}

/* Show new drops: the session's running total, on r's thread. */
static void show_drops(struct rtr__writer *w, struct rtr__ring *r, struct rtr__reader *rd)
{
	uint64_t dropped = ring_dropped(r);

	if (dropped == rd->dropped_seen)
		return;
	w->drain.dropped_shown += dropped - rd->dropped_seen;
	rd->dropped_seen = dropped;
	w->fmt->meta(w, r, RTR__WMETA_DROPS, (int64_t)w->drain.dropped_shown);
}

/*
 * Skip `records` records of r from the malformed header rec, counted as
 * dropped_corrupt and reported once. unframed: rec's own length is not to be trusted,
 * so every published record is skipped, and how many events they held is known only
 * from the producer's count (exactly once the session has stopped: account.c).
 */
static RTR_COLD void skip_corrupt(struct rtr__writer *w, struct rtr__ring *r,
				  struct rtr__reader *rd, const struct rtr__rec *rec,
				  uint32_t records, int unframed)
{
	if (unframed) {
		rd->unframed = 1;
		/* producer-owned counter, relaxed: at most the event in flight too many */
		uint64_t published = rtr_atomic_load_relaxed(&r->events) - rd->base_events;
		rd->corrupt = published > rd->events ? published - rd->events : rd->corrupt;
	} else {
		rd->corrupt++;
	}
	if (w->drain.corrupt_reported)
		return;
	w->drain.corrupt_reported = 1;
	fprintf(stderr,
		"ringtrace: thread %d's ring holds a malformed record (kind %u, %u arguments, "
		"%u bytes after it); %u records skipped, their events counted as "
		"dropped_corrupt\n",
		(int)r->tid, rec->kind, rec->nargs, rec->ext, records);
}

/*
 * A B whose E is the thread's next event, with the same static name and category (or
 * a pop, rtr_pop(), which ends the innermost slice: this one), is written as one X
 * line: the same slice in every viewer (docs/format.md: X is preferred), in about
 * half the bytes of a B line and an E line. A leaf span recorded with
 * rtr_begin/rtr_end usually qualifies; an outer one, or a B whose E is not yet in
 * the ring, is written as a B and later an E. Nothing is held back waiting for an E,
 * so folding never delays a line. Arguments added to the slice in between
 * (rtr_scope_arg_*) fold with it, up to RTR_MAX_ARGS of them, so they go on the X.
 * Returns the E, or NULL. `next` is the record index after the B, `avail` how many
 * records from `tail` can be read.
 */
/* A B's static name as its E has it: `a`, or its site's name (RTR__F_SITE_ARGS). */
static inline uint64_t begin_name(const struct rtr__rec *begin)
{
	if (RTR_UNLIKELY(begin->flags & RTR__F_SITE_ARGS))
		return (uintptr_t)((const struct rtr_site *)(uintptr_t)begin->a)->name;
	return begin->a;
}

/* What span_end() found: the E, or NULL; the argument events before it, and their
 * records. */
struct span {
	const struct rtr__rec *end;
	uint32_t args, skip;
};

/* span_end() past a B followed by argument events: rare, out of line. */
static RTR_COLD struct span span_end_args(const struct rtr__ring *r, const struct rtr__rec *begin,
					  uint32_t tail, uint32_t next, uint32_t avail)
{
	struct span sp = {NULL, 0, 0};
	uint32_t at = next;
	const struct rtr__rec *e = rtr__ring_rec(r, at);

	for (; e->kind == RTR__K_SLICE_ARG; sp.args++) {
		if (sp.args == RTR_MAX_ARGS || !rtr__rec_framed(e, avail - (at - tail)))
			return (struct span){NULL, 0, 0};
		at += rtr__rec_records(e->ext);
		if (at - tail >= avail)
			return (struct span){NULL, 0, 0};
		e = rtr__ring_rec(r, at);
	}
	if (e->kind != RTR__K_END || e->ext != 0 ||
	    (e->flags != RTR__F_POP &&
	     (e->a != begin_name(begin) || e->b != begin->b || e->flags != 0)))
		return (struct span){NULL, 0, 0};
	sp.end = e;
	sp.skip = at - next;
	return sp;
}

static inline struct span span_end(const struct rtr__ring *r, const struct rtr__rec *begin,
				   uint32_t tail, uint32_t next, uint32_t avail)
{
	struct span sp = {NULL, 0, 0};

	if (begin->kind != RTR__K_BEGIN || (begin->flags & RTR__F_NAME_COPY) ||
	    next - tail >= avail)
		return sp;
	const struct rtr__rec *e = rtr__ring_rec(r, next);
	if (RTR_UNLIKELY(e->kind == RTR__K_SLICE_ARG))
		return span_end_args(r, begin, tail, next, avail);
	if (e->kind != RTR__K_END || e->a != begin_name(begin) || e->b != begin->b || e->ext != 0 ||
	    e->flags != 0) {
		/* a pop ends the innermost slice, which is this B */
		if (RTR_UNLIKELY(e->kind == RTR__K_END && e->ext == 0 && e->flags == RTR__F_POP))
			sp.end = e;
		return sp;
	}
	sp.end = e;
	return sp;
}

/* Where event ev ends on its thread's timeline: its E's time for a folded slice, a
 * scope or a held slice's X; 0 for one that has no time there (an argument kept for
 * its slice's E, an event on a track or at a given time). */
static inline uint64_t end_ns(const struct rtr__event *ev)
{
	if (!(ev->flags & RTR__EVF_TIMELINE) || (ev->op & ~RTR__OP_PREPARE) == RTR__OP_KEEP_ARG)
		return 0;
	return ev->type == RTR__EV_SPAN ? ev->ts + ev->dur : ev->ts;
}

/*
 * The batch is written: its latest time on the thread's timeline is where a cut would
 * end and begin again the thread's open slices, after every event written and before
 * every one to come. (Records come in the order they were made, but a scope's and a
 * held slice's come at their ends, with their begins: the latest of all ends.)
 */
static inline void note_last_ns(struct rtr__reader *rd, const struct rtr__batch *b)
{
	for (const struct rtr__event *ev = b->ev; ev < b->end; ev++) {
		uint64_t t = end_ns(ev);
		if (t > rd->last_ns)
			rd->last_ns = t;
	}
}

uint64_t rtr__drain_cut_ns(struct rtr__writer *w, struct rtr__ring *r)
{
	uint64_t t = rtr__reader_of(r)->last_ns;
	const struct rtr__batch *b = w->drain.batch;

	if (r != w->drain.current || b == NULL || b->cur == NULL)
		return t;
	/* A cut in the middle of a batch: before the event being written, after those
	 * written before it, whose ends may come in any order (a scope's record and a
	 * held slice's X come at their ends, with their begins) */
	const struct rtr__event *now = b->cur;
	for (const struct rtr__event *ev = b->ev; ev < now; ev++) {
		uint64_t e = end_ns(ev);
		if (e > t)
			t = e;
	}
	if (now != b->end && end_ns(now) != 0 && now->ts > t)
		t = now->ts;
	return t;
}

/* Write the batch of r's events b through the format: `expected` is what they stand
 * for. */
static void write_batch(struct rtr__writer *w, struct rtr__ring *r, struct rtr__reader *rd,
			struct rtr__batch *b, uint64_t expected)
{
	for (uint32_t i = 0; i < w->drain.nbad; i++) /* records that did not decode */
		skip_corrupt(w, r, rd, w->drain.bad[i],
			     rtr__ring_event_records(w->drain.bad[i]->ext), 0);
	w->drain.batch = b;
	if (w->prof != NULL) /* the events as decoded, before the format's walk changes them */
		w->prof->batch(w, b);
	uint64_t written = w->fmt->events(w, b);
	w->drain.batch = NULL;
	note_last_ns(rd, b);
	rd->events += written;
	if (RTR_UNLIKELY(written < expected)) {
		/* The format could not write what it was not handed (without memory for
		 * the ring's state): counted as malformed, reported once. */
		const struct rtr__event *ev = b->cur == NULL ? b->ev : b->cur + (b->cur != b->end);
		for (; ev < b->end; ev++) {
			const struct rtr__rec *rec = rtr__ring_rec(r, ev->pos);
			skip_corrupt(w, r, rd, rec, rtr__ring_event_records(rec->ext), 0);
			rd->corrupt += ev->count - 1;
		}
	}
}

/*
 * The event at pos (the E folded with it sp.end, with sp.args argument events) into
 * ev: the short paths first (decode.h), inline. Returns how many events it made,
 * adding what they stand for to *events.
 */
static inline uint32_t decode_one(struct rtr__writer *w, struct rtr__ring *r,
				  const struct rtr__rec *rec, uint32_t pos, const struct span *sp,
				  struct rtr__event *ev, uint64_t *events)
{
	if (sp->end != NULL && sp->args == 0) {
		if (RTR_LIKELY(rec->flags == 0 && rec->ext == 0)) {
			rtr__decode_span(w, r, rec, pos, sp->end, ev);
			*events += 2;
			return 1;
		}
		if (rtr__decode_span_args(w, r, rec, pos, sp->end, ev)) {
			*events += 2;
			return 1;
		}
	} else if (sp->end == NULL && rtr__decode_plain(w, r, rec, pos, ev)) {
		*events += 1;
		return 1;
	}
	return rtr__event_decode(w, r, pos, sp->end, sp->args, ev, events);
}

/* The poll rec at pos folded (polls.h): returns the events it made in ev (a fold that
 * was full), adding what they stand for to *events. One that does not decode is
 * skipped as malformed. */
static uint32_t fold_poll(struct rtr__writer *w, struct rtr__ring *r, struct rtr__reader *rd,
			  const struct rtr__rec *rec, uint32_t pos, struct rtr__event *ev,
			  uint64_t *events)
{
	int made = rtr__polls_add(w, r, rec, pos, ev, events);

	if (RTR_LIKELY(made >= 0))
		return (uint32_t)made;
	skip_corrupt(w, r, rd, rec, rtr__ring_event_records(rec->ext), 0);
	return 0;
}

/* r's fold of polls into ev, before the event at pos (the record it stands at in the
 * batch, for write_batch()). */
static RTR_COLD void take_polls(struct rtr__writer *w, struct rtr__ring *r, uint32_t pos,
				struct rtr__event *ev, uint64_t *events)
{
	rtr__polls_take(w, r, ev, 0, events);
	ev->pos = pos;
}

/* Drain up to `max` records of r. Returns the records consumed. */
static uint32_t drain_ring(struct rtr__writer *w, struct rtr__ring *r, uint32_t max)
{
	struct rtr__reader *rd = rtr__reader_attach(w, r);
	uint32_t avail = rtr__ring_readable(r);
	uint32_t tail = r->tail; /* own index; rtr__ring_consume() below moves it */
	uint32_t done = 0, released = 0;
	int polls = rtr__polls_pending(rd);

	if (avail == 0) {
		show_drops(w, r, rd);
		return 0;
	}
	/* behind its producer: it waited for room or dropped for want of it since the last
	 * look (relaxed: a count, it orders nothing), or three quarters of the ring wait */
	uint64_t pressed = rtr_atomic_load_relaxed(&r->waited_full) +
			   rtr_atomic_load_relaxed(&r->dropped_full);
	w->drain.behind = pressed != rd->pressed || avail > r->capacity / 4 * 3;
	rd->pressed = pressed;
	w->fmt->begin_ring(w, r);
	w->drain.current = r;
	if (rd->meta_file != w->out.file_id)
		rtr__drain_thread_meta(w, r, rtr__ring_rec(r, tail)->kind == RTR__K_THREAD_NAME);
	while (done < avail && done < max) {
		struct rtr__event *ev = w->drain.events;
		uint32_t n = 0;
		uint64_t events = 0;
		int unframed = 0;
		/* A batch: whole events, up to max, and to the next release of tail. */
		uint32_t lim = avail < max ? avail : max;

		if (lim - released > RELEASE_EVERY)
			lim = released + RELEASE_EVERY;
		w->drain.nbad = w->drain.nfolded = 0;
		while (n < RTR__BATCH_EVENTS && done < lim) {
			uint32_t pos = tail + done;
			const struct rtr__rec *rec = rtr__ring_rec(r, pos);
			if (RTR_UNLIKELY(!rtr__rec_framed(rec, avail - done))) {
				unframed = 1;
				if (polls) /* whole events: written before what is skipped */
					take_polls(w, r, pos, &ev[n++], &events);
				break;
			}
			uint32_t next = pos + rtr__ring_event_records(rec->ext);
			if (RTR_UNLIKELY(rtr__polls_is(rec))) {
				n += fold_poll(w, r, rd, rec, pos, &ev[n], &events);
				polls = rtr__polls_pending(rd);
				done = next - tail;
				continue;
			}
			if (RTR_UNLIKELY(polls)) { /* the thread's polls end before this */
				take_polls(w, r, pos, &ev[n++], &events);
				polls = 0;
			}
			struct span sp = span_end(r, rec, tail, next, avail);
			__builtin_prefetch(rtr__ring_rec(r, pos + 8));
			n += decode_one(w, r, rec, pos, &sp, &ev[n], &events);
			done = next - tail + sp.skip + (sp.end != NULL);
		}
		struct rtr__batch b = {r, ev, ev + n, NULL};
		if (n > 0 || w->drain.nbad > 0) /* not a batch of polls being folded */
			write_batch(w, r, rd, &b, events);
		if (RTR_UNLIKELY(unframed)) {
			/* Where the next event starts is unknown: skip what is published. */
			skip_corrupt(w, r, rd, rtr__ring_rec(r, tail + done), avail - done, 1);
			done = avail;
			break;
		}
		if (done - released >= RELEASE_EVERY) {
			rtr__ring_consume(r, done - released);
			released = done;
		}
	}
	rtr__ring_consume(r, done - released);
	show_drops(w, r, rd);
	return done;
}

/*
 * r's pending fold of polls written alone, outside the drain's batches (keep: see
 * rtr__drain_polls()). The format writes it as a batch of one event of r's, and the
 * ring being drained, if another, is the format's current one again after it.
 */
static void write_polls(struct rtr__writer *w, struct rtr__ring *r, int keep)
{
	struct rtr__reader *rd = reader_of(r);
	struct rtr__ring *current = w->drain.current;
	struct rtr__event ev;
	uint64_t events = 0;

	if (!rtr__polls_pending(rd))
		return;
	w->fmt->begin_ring(w, r);
	w->drain.current = r;
	if (rd->meta_file != w->out.file_id)
		rtr__drain_thread_meta(w, r, 0);
	rtr__polls_take(w, r, &ev, keep, &events);
	struct rtr__batch b = {r, &ev, &ev + 1, NULL};
	w->drain.batch = &b;
	if (w->prof != NULL && !keep) /* a fold kept going is written again, whole, later */
		w->prof->batch(w, &b);
	uint64_t written = w->fmt->events(w, &b);
	w->drain.batch = NULL;
	w->drain.current = current;
	if (current != NULL && current != r)
		w->fmt->begin_ring(w, current);
	if (keep)
		return;
	rd->events += written;
	rd->corrupt += events - (written < events ? written : events); /* not written */
	if (ev.ts + ev.dur > rd->last_ns)
		rd->last_ns = ev.ts + ev.dur;
}

void rtr__drain_polls(struct rtr__writer *w, int keep)
{
	if (w->drain.batch != NULL) /* a cut inside a format's batch: see polls.h */
		return;
	struct rtr__ring_list rings;
	size_t n = rtr__rings_list(&rings);
	for (size_t i = 0; i < n; i++)
		if (reader_of(rings.v[i])->session == w->drain.session_id)
			write_polls(w, rings.v[i], keep);
	rtr__rings_list_done(&rings);
}

/* Fold a drained, closed ring into the retired totals and free it. */
static void retire_ring(struct rtr__writer *w, struct rtr__ring *r)
{
	if (w->drain.current == r)
		w->drain.current = NULL;
	if (reader_of(r)->session == w->drain.session_id)
		write_polls(w, r, 0); /* the thread's last polls */
	rtr__account_ring(w, r, &w->acct.retired);
	if (reader_of(r)->session == w->drain.session_id) {
		if (w->drain.hold) /* what it left open, as it left it (cut.c) */
			w->drain.show_held(w, r, SIZE_MAX);
		w->out.closing -= rtr__slices_weight(reader_of(r)->slices); /* ended with it */
		rtr__slices_free(reader_of(r)->slices);
		rtr__polls_free(reader_of(r)->polls);
	}
	rtr__rings_free(r);
}

/* One pass over every ring. Returns the records consumed. */
uint64_t rtr__drain_all(struct rtr__writer *w, uint32_t batch)
{
	struct rtr__ring_list rings;
	size_t n = rtr__rings_list(&rings);
	uint64_t work = 0;

	for (size_t i = 0; i < n; i++) {
		struct rtr__ring *r = rings.v[i];
		/* closed first (A2), then the fill: a closed ring seen empty stays empty */
		int closed = rtr__ring_closed(r);
		work += drain_ring(w, r, batch);
		if (closed && rtr__ring_readable(r) == 0)
			retire_ring(w, r);
	}
	rtr__rings_list_done(&rings);
	return work;
}

void rtr__drain_free_slices(struct rtr__writer *w)
{
	struct rtr__ring_list rings;
	size_t n = rtr__rings_list(&rings);

	for (size_t i = 0; i < n; i++) {
		struct rtr__reader *rd = reader_of(rings.v[i]);
		if (rd->session == w->drain.session_id) {
			w->out.closing -= rtr__slices_weight(rd->slices);
			rtr__slices_free(rd->slices);
			rd->slices = NULL;
			rtr__polls_free(rd->polls);
			rd->polls = NULL;
		}
	}
	rtr__rings_list_done(&rings);
}
