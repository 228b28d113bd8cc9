/* SPDX-License-Identifier: MIT */
/*
 * Interned strings of the Perfetto format (intern.c): a string's iid on a sequence.
 */
#ifndef RTR_FORMAT_PERFETTO_INTERN_H
#define RTR_FORMAT_PERFETTO_INTERN_H

#include "format/perfetto/pf.h"

/* The iid of a string for seq, queued in pend when the sequence has not had it; 0 when
 * it cannot be interned (then written inline). */
static inline uint32_t iid_of(struct rtr__pf *pf, struct rtr__pf_seq *seq, struct pf_pending *pend,
			      uint32_t kind, uint64_t key, const char *s, size_t len)
{
	struct rtr__pf_slot *sl = rtr__pf_intern(pf, kind, key, s, len);

	if (RTR_UNLIKELY(sl == NULL || pend->n == PF_PENDING))
		return 0;
	uint64_t bit = (uint64_t)1 << (sl->iid & 63);
	if (RTR_UNLIKELY(!(seq->sent[sl->iid >> 6] & bit))) {
		seq->sent[sl->iid >> 6] |= bit;
		pend->slot[pend->n++] = sl;
	}
	return sl->iid;
}

/* A static string's iid: measured only the first time the table sees it. */
static inline uint32_t iid_static(struct rtr__pf *pf, struct rtr__pf_seq *seq,
				  struct pf_pending *pend, uint32_t kind, const char *s)
{
	return iid_of(pf, seq, pend, kind, (uintptr_t)s, s, RTR__PF_LEN_UNKNOWN);
}

#endif
