/* SPDX-License-Identifier: MIT */
/*
 * Records into events (decode.c), as the drain frames them: the short paths of the
 * common events, inline in the drain's loop, and the general one.
 */
#ifndef RTR_WRITER_DECODE_H
#define RTR_WRITER_DECODE_H

#include "writer/event.h"
#include "writer/writer_internal.h"

/* Events the drain may add to a batch for one header beyond the batch's size: a fold
 * of polls before it (polls.h), and from the general path, a B that does not decode,
 * its folded argument events and its E alone. */
#define RTR__EVENTS_SLACK (3 + RTR_MAX_ARGS)

/* The batch's memory (struct rtr__drain), for the session. 0 or -ENOMEM. */
int rtr__events_init(struct rtr__writer *w);
void rtr__events_fini(struct rtr__writer *w);

/*
 * The event whose header is at record index pos of r, with `end`, the E folded into
 * it, and `args` argument events between them (end NULL: none), into ev[0]. Adds the
 * events it stands for to *events and returns 1. A header that does not decode is
 * left out, in w->drain.bad (the drain reports it), and the events folded with it are
 * decoded alone into ev[0..]: returns how many.
 */
uint32_t rtr__event_decode(struct rtr__writer *w, struct rtr__ring *r, uint32_t pos,
			   const struct rtr__rec *end, uint32_t args, struct rtr__event *ev,
			   uint64_t *events);

/* The fields every short path sets: a thread's event at its own time. */
static inline void rtr__decode_common(struct rtr__writer *w, const struct rtr__ring *r,
				      const struct rtr__rec *rec, uint32_t pos,
				      struct rtr__event *ev)
{
	ev->scope = RTR__SCOPE_THREAD;
	ev->flags = RTR__EVF_TIMELINE;
	ev->op = RTR__OP_NONE;
	ev->count = 1;
	ev->pos = pos;
	ev->name = (const char *)(uintptr_t)rec->a;
	ev->cat = (const char *)(uintptr_t)rec->b;
	ev->name_len = 0;
	ev->tid = r->tid;
	ev->ts = rtr__writer_ticks_ns(w, rec->ts);
	ev->dur = 0;
	ev->args.n = 0;
	ev->nmore = 0;
}

/* The common event: a leaf span, a B folded with its E, neither with flags or a
 * continuation. */
static inline void rtr__decode_span(struct rtr__writer *w, struct rtr__ring *r,
				    const struct rtr__rec *rec, uint32_t pos,
				    const struct rtr__rec *end, struct rtr__event *ev)
{
	rtr__decode_common(w, r, rec, pos, ev);
	ev->type = RTR__EV_SPAN;
	ev->count = 2;
	ev->ts = rtr__writer_begin_ns(w, r, rec->ts);
	ev->dur = rtr__writer_dur_ns(w, r, ev->ts, end->ts);
}

/* A leaf span whose B has arguments that are all numbers or static strings (one
 * integer, most often): its arguments are a view of the B's continuation. False,
 * having decided nothing, for any other. */
static inline bool rtr__decode_span_args(struct rtr__writer *w, struct rtr__ring *r,
					 const struct rtr__rec *rec, uint32_t pos,
					 const struct rtr__rec *end, struct rtr__event *ev)
{
	if (rec->flags != 0 || rec->nargs == 0 || rec->ext != rec->nargs * RTR__EXT_ARG)
		return false;
	const uint8_t *types = (const uint8_t *)rtr__ring_ext(r, pos, rec->ext, w->drain.scratch);
	for (unsigned i = 0; i < rec->nargs; i++)
		if (types[i] >= RTR_ARG_TYPE_STR_COPY) /* a blob: the general path measures it */
			return false;
	rtr__decode_span(w, r, rec, pos, end, ev);
	ev->args.types = types;
	ev->args.n = rec->nargs;
	ev->args.len = rec->ext;
	return true;
}

/*
 * The other common events: a B, an E, a thread instant or a call site's scope with
 * neither flags nor a continuation, an integer or double counter of one word. False,
 * having decided nothing, for any other (the general path then decodes it).
 */
static inline bool rtr__decode_plain(struct rtr__writer *w, struct rtr__ring *r,
				     const struct rtr__rec *rec, uint32_t pos,
				     struct rtr__event *ev)
{
	if (rec->flags != 0 || rec->nargs != 0)
		return false;
	if (rec->ext == RTR__EXT_WORD &&
	    (rec->kind == RTR__K_COUNTER_I64 || rec->kind == RTR__K_COUNTER_F64)) {
		rtr__decode_common(w, r, rec, pos, ev);
		ev->type = RTR__EV_COUNTER;
		ev->flags |= rec->kind == RTR__K_COUNTER_F64 ? RTR__EVF_DOUBLE : 0;
		ev->value = rtr__ring_rec(r, pos + 1)->ts; /* the word, read in place */
		return true;
	}
	if (rec->ext != 0)
		return false;
	switch (rec->kind) {
	case RTR__K_BEGIN:
		rtr__decode_common(w, r, rec, pos, ev);
		ev->type = RTR__EV_BEGIN;
		ev->ts = rtr__writer_begin_ns(w, r, rec->ts);
		ev->op = RTR__OP_PUSH | (w->drain.hold ? RTR__OP_PREPARE : 0); /* held */
		return true;
	case RTR__K_END:
		rtr__decode_common(w, r, rec, pos, ev);
		ev->type = RTR__EV_END;
		ev->op = RTR__OP_PREPARE | RTR__OP_POP;
		rtr__writer_note_end(r, 0, ev->ts);
		return true;
	case RTR__K_INSTANT:
		rtr__decode_common(w, r, rec, pos, ev);
		ev->type = RTR__EV_INSTANT;
		return true;
	case RTR__K_SCOPE: {
		const struct rtr_site *site = (const struct rtr_site *)(uintptr_t)rec->a;
		rtr__decode_common(w, r, rec, pos, ev);
		ev->type = RTR__EV_SPAN;
		ev->name = site->name;
		ev->cat = site->cat;
		ev->ts = rtr__writer_begin_ns(w, r, rec->ts);
		ev->dur = rtr__writer_dur_ns(w, r, ev->ts, rec->ts + rec->b);
		return true;
	}
	default:
		return false;
	}
}

#endif
