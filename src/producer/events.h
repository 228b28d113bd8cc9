/* SPDX-License-Identifier: MIT */
/*
 * Recording an event with continuation bytes (src/producer/events.c), for the calls in other
 * files: tracks, metadata, memory and stack samples; and a slice begun at a site that
 * holds its arguments, for the modules. The event's description, struct
 * rtr__ext_event, is the record format's (src/record/record.h).
 */
#ifndef RTR_EVENTS_H
#define RTR_EVENTS_H

#include "common/compiler.h"
#include "record/record.h"
#include "ring/ring.h"

/*
 * The usual argument event, numbers and static strings with nothing else to copy,
 * as plain stores: no per-field wrap check, no measuring pass. Returns whether it was
 * recorded, or -1, having published nothing, when its bytes would wrap past the
 * ring's last slot; the general path (rtr__emit_ext()) then splits them.
 */
static RTR_INLINE int rtr__emit_scalars(const struct rtr__ext_event *e)
{
	/* Taken before the reserve, which may call out: known constants at most calls. */
	const int word = rtr__kind_has_word(e->kind, e->flags);
	const uint64_t a = rtr__rec_a(e);
	uint32_t ext = (word ? RTR__EXT_WORD : 0) + e->nargs * RTR__EXT_ARG;
	uint32_t nrec = rtr__ring_event_records(ext);
	uint32_t head;
	struct rtr__ring *r = rtr__reserve(nrec, &head);

	if (RTR_UNLIKELY(r == NULL))
		return 0;
	if (RTR_UNLIKELY(((head + 1) & r->mask) + nrec - 1 > r->mask + 1)) {
		rtr__unreserve(r); /* the general path reserves again */
		return -1;
	}
	rtr__rec_header(&r->slots[head & r->mask], e, a, e->nargs, ext);
	rtr__rec_put_scalars((char *)&r->slots[(head + 1) & r->mask], e, word);
	rtr__publish(r, head, nrec);
	return 1;
}

/* Begin a slice of site sa on the calling thread, as rtr_begin() does: one record. Its
 * E is rtr_end(sa->site.cat, sa->site.name), or rtr_pop(sa->site.cat). */
static inline void rtr__begin_site_args(const struct rtr__site_args *sa)
{
	if (RTR__LIKELY(rtr__recording_cat(sa->site.cat)))
		rtr__begin_done(rtr__emit_flags(RTR__K_BEGIN, RTR__F_SITE_ARGS, rtr__ticks(),
						(uintptr_t)sa, (uintptr_t)sa->site.cat));
}

/* Record e on the calling thread. Returns whether it was recorded. */
bool rtr__emit_ext(const struct rtr__ext_event *e);

/* Copy the numeric arguments (I64, U64, F64, BOOL) of args into kept, in order;
 * returns how many (at most RTR_MAX_ARGS). A counter's series must be numbers. */
unsigned rtr__numeric_args(const struct rtr_arg *args, unsigned n,
			   struct rtr_arg kept[RTR_MAX_ARGS]);

#endif /* RTR_EVENTS_H */
