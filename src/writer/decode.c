/* SPDX-License-Identifier: MIT */
/*
 * Records into events (event.h), once for every format.
 *
 * The drain frames a ring's records and folds B+E pairs; each event it finds becomes
 * one struct rtr__event here, as it finds it: its continuation decoded (record.h),
 * never trusted (a program may scribble over its ring: what does not decode is left
 * out and reported by the drain), its time converted to the trace clock, a track's
 * lane placed (lanes.c), a memory event's bytes in use taken from the live-allocation
 * table (memstack_writer.c). The common events, a folded leaf span and a header
 * without continuation or with one word, take the short paths of decode.h, inline in
 * the drain's loop; the rest come here.
 */
#include "writer/decode.h"

#include "common/mem.h"
#include "producer/tracks.h"
#include "writer/lanes.h"
#include "writer/polls.h"
#include "writer/slices.h"

#include <errno.h>
#include <string.h>

/* One event as the drain found it: its header at record index pos, and the E folded
 * into it (one event for both), or NULL; with an E, `args` argument events between
 * them (rtr_scope_arg_*: their arguments go with the pair; 0 without an E). */
struct rtr__drained {
	uint32_t pos;
	uint32_t args;
	const struct rtr__rec *end;
};

#define FOLDED_MAX (RTR__BATCH_EVENTS * RTR_MAX_ARGS)
#define EVENTS_MAX (RTR__BATCH_EVENTS + RTR__EVENTS_SLACK)
#define BAD_MAX	   (RTR__BATCH_EVENTS * (1 + RTR_MAX_ARGS)) /* a header, its folded events */

int rtr__events_init(struct rtr__writer *w)
{
	struct rtr__drain *d = &w->drain;

	d->events = rtr__mem_map(EVENTS_MAX * sizeof(*d->events));
	d->folded = rtr__mem_map(FOLDED_MAX * sizeof(*d->folded));
	d->added = rtr__mem_map(RTR__ADDED_LISTS * sizeof(*d->added));
	d->scratch = rtr__mem_map(RTR__EXT_MAX);
	d->bad = rtr__mem_map(BAD_MAX * sizeof(*d->bad));
	if (d->events == NULL || d->folded == NULL || d->added == NULL || d->scratch == NULL ||
	    d->bad == NULL || rtr__polls_init(w) != 0) {
		rtr__events_fini(w);
		return -ENOMEM;
	}
	return 0;
}

void rtr__events_fini(struct rtr__writer *w)
{
	struct rtr__drain *d = &w->drain;

	rtr__mem_unmap(d->events, EVENTS_MAX * sizeof(*d->events));
	rtr__mem_unmap(d->folded, FOLDED_MAX * sizeof(*d->folded));
	rtr__mem_unmap(d->added, RTR__ADDED_LISTS * sizeof(*d->added));
	rtr__mem_unmap(d->scratch, RTR__EXT_MAX);
	rtr__mem_unmap((void *)d->bad, BAD_MAX * sizeof(*d->bad));
	rtr__polls_fini(w);
	d->bad = NULL;
	d->events = NULL;
	d->folded = NULL;
	d->added = NULL;
	d->scratch = NULL;
}

/* ------------------------------------------------------------------------- */
/* Decoding                                                                   */

/*
 * The continuation of rec, at record index pos of r, into v, and its arguments' run
 * into args (n 0: none). False when it does not hold what the header says. A one-word
 * continuation is read in place; a stack sample's frames are read when written.
 */
static bool view_of(struct rtr__writer *w, struct rtr__ring *r, const struct rtr__rec *rec,
		    uint32_t pos, struct rtr__rec_view *v, struct rtr__args *args)
{
	args->n = 0;
	if (rec->ext == 0) {
		memset(v, 0, sizeof(*v));
		return true;
	}
	if (rtr__rec_one_word(rec)) {
		memset(v, 0, sizeof(*v));
		v->word = rtr__ring_rec(r, pos + 1)->ts;
		return true;
	}
	if (rtr__kind_frames(rec->kind)) {
		memset(v, 0, sizeof(*v));
		return rtr__rec_frames_ok(rec);
	}
	const char *ext = rtr__ring_ext(r, pos, rec->ext, w->drain.scratch);
	if (!rtr__rec_decode(rec, ext, v))
		return false;
	if (rec->nargs > 0) {
		args->types = v->types;
		args->n = rec->nargs;
		args->len = (uint32_t)(ext + rec->ext - (const char *)v->types);
	}
	return true;
}

/* ev on the lane of track t that its time (host ns) and, for a complete event, its
 * duration `dur` place it on. */
static void on_track(struct rtr__writer *w, struct rtr__event *ev, struct rtr_track *t, uint64_t ts,
		     int complete, uint64_t dur)
{
	uint64_t host = rtr__lane_host_ns(t, ts);
	unsigned k;

	if (complete) {
		uint64_t end = host + dur >= host ? host + dur : UINT64_MAX;
		k = rtr__lane_place(t, w->drain.session_id, host, end);
		ev->dur = end - host;
	} else {
		k = rtr__lane_at(t, host);
	}
	ev->flags |= RTR__EVF_TRACK;
	ev->x.track.track = t;
	ev->x.track.lane = k;
	ev->pid = t->pid;
	ev->tid = (int32_t)(t->tid + k);
	ev->ts = host;
}

/* The folded argument events of a B+E at record index `at`: their views into the
 * batch's pool. False when one does not decode. */
static bool fold_args(struct rtr__writer *w, struct rtr__ring *r, struct rtr__event *ev,
		      uint32_t at, uint32_t args, uint32_t *pool)
{
	ev->more = w->drain.folded + *pool;
	ev->nmore = 0;
	for (uint32_t i = 0; i < args; i++) {
		const struct rtr__rec *arg = rtr__ring_rec(r, at);
		struct rtr__rec_view v;
		struct rtr__args *a = &w->drain.folded[*pool + ev->nmore];
		if (!view_of(w, r, arg, at, &v, a))
			return false;
		if (a->n > 0)
			ev->nmore++;
		at += rtr__rec_records(arg->ext);
	}
	*pool += ev->nmore;
	return true;
}

/* An RTR__K_SCOPE: a call site's slice, from its start for its duration in ticks. */
static bool decode_scope(struct rtr__writer *w, struct rtr__ring *r, const struct rtr__rec *rec,
			 struct rtr__event *ev)
{
	ev->type = RTR__EV_SPAN;
	ev->dur = rtr__writer_dur_ns(w, r, ev->ts, rec->ts + rec->b);
	if (rec->flags & RTR__F_CODE_ADDR) { /* the instrument library's function */
		ev->flags |= RTR__EVF_CODE;
		ev->x.code.addr = rec->a;
		ev->name = NULL;
		ev->cat = "function";
		return true;
	}
	const struct rtr_site *site = (const struct rtr_site *)(uintptr_t)rec->a;
	ev->name = site->name; /* with RTR__F_SITE_ARGS, decode() set them so already */
	ev->cat = site->cat;
	return true;
}

/* The name, category and arguments of a B or a scope whose site holds them
 * (RTR__F_SITE_ARGS). False for any other kind, or arguments in the event too. */
static bool decode_site_args(const struct rtr__rec *rec, struct rtr__event *ev)
{
	const struct rtr__site_args *sa = (const struct rtr__site_args *)(uintptr_t)rec->a;
	if ((rec->kind != RTR__K_BEGIN && rec->kind != RTR__K_SCOPE) || rec->nargs != 0 ||
	    sa->nargs > RTR_MAX_ARGS)
		return false;
	ev->name = sa->site.name;
	ev->cat = sa->site.cat;
	ev->args.types = sa->args;
	ev->args.n = sa->nargs;
	ev->args.len = sa->len;
	return true;
}

/* The kind-specific part of decode(): ev has its name, category, time, view. */
static bool decode_kind(struct rtr__writer *w, struct rtr__ring *r, const struct rtr__drained *d,
			const struct rtr__rec *rec, const struct rtr__rec_view *v,
			struct rtr__event *ev, uint32_t *pool)
{
	switch (rec->kind) {
	case RTR__K_BEGIN:
		if (d->end == NULL) {
			ev->type = RTR__EV_BEGIN;
			ev->op = RTR__OP_PUSH | (w->drain.hold ? RTR__OP_PREPARE : 0);
			return true;
		}
		ev->type = RTR__EV_SPAN;
		ev->dur = rtr__writer_dur_ns(w, r, ev->ts, d->end->ts);
		ev->count = 2 + d->args;
		return d->args == 0 ||
		       fold_args(w, r, ev, d->pos + rtr__rec_records(rec->ext), d->args, pool);
	case RTR__K_END:
		ev->type = RTR__EV_END;
		ev->op = RTR__OP_PREPARE | RTR__OP_POP;
		rtr__writer_note_end(r, 0, ev->ts);
		if (rec->flags & RTR__F_POP)
			ev->flags |= RTR__EVF_POP;
		return true;
	case RTR__K_INSTANT:
		ev->type = RTR__EV_INSTANT;
		ev->scope = rec->flags & RTR__F_SCOPE_GLOBAL	? RTR__SCOPE_GLOBAL
			    : rec->flags & RTR__F_SCOPE_PROCESS ? RTR__SCOPE_PROCESS
								: RTR__SCOPE_THREAD;
		return true;
	case RTR__K_COUNTER_F64:
		ev->flags |= RTR__EVF_DOUBLE;
		/* fall through */
	case RTR__K_COUNTER_I64:
		ev->type = RTR__EV_COUNTER;
		return true;
	case RTR__K_COMPLETE:
		ev->type = RTR__EV_SPAN;
		if (!(rec->flags & RTR__F_TRACK))
			ev->dur = v->word;
		return true;
	case RTR__K_SCOPE:
		return decode_scope(w, r, rec, ev);
	case RTR__K_THREAD_NAME:
		ev->type = RTR__EV_THREAD_NAME;
		ev->op = RTR__OP_PREPARE; /* the ring takes the name before it is written */
		return v->name != NULL;
	case RTR__K_COUNTERS:
		ev->type = RTR__EV_COUNTERS;
		return true;
	case RTR__K_FLOW_START:
	case RTR__K_FLOW_STEP:
	case RTR__K_FLOW_END:
		ev->type = (uint8_t)(RTR__EV_FLOW_START + (rec->kind - RTR__K_FLOW_START));
		return true;
	case RTR__K_ASYNC_BEGIN:
	case RTR__K_ASYNC_INSTANT:
	case RTR__K_ASYNC_END:
		ev->type = (uint8_t)(RTR__EV_ASYNC_BEGIN + (rec->kind - RTR__K_ASYNC_BEGIN));
		ev->op = rec->kind == RTR__K_ASYNC_BEGIN ? RTR__OP_ASYNC_OPEN
			 : rec->kind == RTR__K_ASYNC_END ? RTR__OP_ASYNC_CLOSE
							 : RTR__OP_NONE;
		return true;
	case RTR__K_MEM_ALLOC:
	case RTR__K_MEM_FREE: {
		int64_t device = (int64_t)v->word;
		uint64_t bytes = rec->b;
		ev->type = rec->kind == RTR__K_MEM_ALLOC ? RTR__EV_MEM_ALLOC : RTR__EV_MEM_FREE;
		ev->x.mem.in_use =
			rec->kind == RTR__K_MEM_ALLOC
				? rtr__memstack_alloc(&w->mem, device, rec->a, bytes, rec->ts)
				: rtr__memstack_free(&w->mem, device, rec->a, &bytes, rec->ts);
		ev->x.mem.addr = rec->a;
		ev->x.mem.bytes = bytes;
		ev->x.mem.device = device;
		return true;
	}
	case RTR__K_STACK: {
		uint32_t n = rec->ext / (uint32_t)sizeof(uint64_t);
		ev->type = RTR__EV_STACK;
		ev->x.stack.n = n < RTR_MAX_FRAMES ? n : RTR_MAX_FRAMES;
		ev->x.stack.frames =
			n > 0 ? rtr__ring_ext(r, d->pos, n * sizeof(uint64_t), w->drain.scratch)
			      : NULL;
		return true;
	}
	case RTR__K_META:
		ev->value = v->word;
		switch (rec->a) {
		case RTR__META_PROCESS_LABEL:
			ev->type = RTR__EV_PROCESS_LABEL;
			return v->name != NULL; /* a label is a copied name */
		case RTR__META_PROCESS_SORT:
			ev->type = RTR__EV_PROCESS_SORT;
			return true;
		case RTR__META_THREAD_SORT:
			ev->type = RTR__EV_THREAD_SORT;
			return true;
		default:
			return false;
		}
	case RTR__K_SLICE_ARG:
		ev->type = RTR__EV_SKIP; /* nothing now: its arguments go on the slice's E */
		ev->op = RTR__OP_KEEP_ARG;
		return true;
	default:
		return false;
	}
}

/* The header at d->pos of r (with the E and arguments folded into it) into ev. False,
 * having left the batch's pools as they were, when it does not decode. */
static bool decode(struct rtr__writer *w, struct rtr__ring *r, const struct rtr__drained *d,
		   struct rtr__event *ev, uint32_t *pool)
{
	const struct rtr__rec *rec = rtr__ring_rec(r, d->pos);
	struct rtr__rec_view v;
	uint32_t pool0 = *pool;

	if (!view_of(w, r, rec, d->pos, &v, &ev->args))
		return false;
	if (RTR_UNLIKELY((rec->flags & RTR__F_NAME_COPY) && v.name == NULL))
		return false; /* a copied name without its bytes */
	ev->scope = RTR__SCOPE_THREAD;
	ev->flags = 0;
	ev->op = RTR__OP_NONE;
	ev->count = 1;
	ev->pos = d->pos;
	ev->cat = (const char *)(uintptr_t)rec->b;
	ev->tid = r->tid;
	ev->pid = 0;
	ev->dur = 0;
	ev->value = v.word;
	ev->more = NULL;
	ev->nmore = 0;
	if (rec->flags & RTR__F_NAME_COPY) {
		ev->flags = RTR__EVF_COPIED;
		ev->name = v.name;
		ev->name_len = v.name_len;
	} else {
		ev->name = (const char *)(uintptr_t)rec->a;
		ev->name_len = 0;
	}
	if (rec->flags & RTR__F_TS_NS) {
		ev->ts = rec->ts;
	} else if (!(rec->flags & RTR__F_TRACK)) {
		/* a slice's begin rounded up within its ns (rtr__clock_ns_up()) */
		ev->ts = rec->kind == RTR__K_BEGIN || rec->kind == RTR__K_SCOPE
				 ? rtr__writer_begin_ns(w, r, rec->ts)
				 : rtr__writer_ticks_ns(w, rec->ts);
		if (rec->kind != RTR__K_COMPLETE)
			ev->flags |= RTR__EVF_TIMELINE;
	}
	if (RTR_UNLIKELY(rec->flags & RTR__F_SITE_ARGS) && !decode_site_args(rec, ev))
		return false;
	if (RTR_UNLIKELY(rec->flags & RTR__F_TRACK))
		on_track(w, ev, (struct rtr_track *)(uintptr_t)v.track, rec->ts,
			 rec->kind == RTR__K_COMPLETE, v.word);
	if (!decode_kind(w, r, d, rec, &v, ev, pool)) {
		*pool = pool0;
		return false;
	}
	return true;
}

uint32_t rtr__event_decode(struct rtr__writer *w, struct rtr__ring *r, uint32_t pos,
			   const struct rtr__rec *end, uint32_t args, struct rtr__event *ev,
			   uint64_t *events)
{
	struct rtr__drained d = {pos, args, end};
	const struct rtr__rec *rec = rtr__ring_rec(r, pos);
	uint32_t k = 0;

	if (RTR_LIKELY(decode(w, r, &d, &ev[0], &w->drain.nfolded))) {
		*events += ev[0].count;
		return 1;
	}
	w->drain.bad[w->drain.nbad++] = rec;
	if (end == NULL)
		return 0;
	/* Then the events folded with it go alone: the argument events (kept for the
	 * open slice), then the E, which has no continuation. */
	pos += rtr__rec_records(rec->ext);
	for (uint32_t a = 0; a < args; a++) {
		struct rtr__drained one = {pos, 0, NULL};
		const struct rtr__rec *arg = rtr__ring_rec(r, pos);
		if (decode(w, r, &one, &ev[k], &w->drain.nfolded))
			*events += ev[k++].count;
		else
			w->drain.bad[w->drain.nbad++] = arg;
		pos += rtr__rec_records(arg->ext);
	}
	struct rtr__drained e = {pos, 0, NULL};
	if (decode(w, r, &e, &ev[k], &w->drain.nfolded))
		*events += ev[k++].count;
	return k;
}
