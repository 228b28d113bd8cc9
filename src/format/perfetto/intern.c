/* SPDX-License-Identifier: MIT */
/*
 * Interned strings of the Perfetto format: one table, looked up by (kind, pointer) —
 * a static string's, or a function's code address — whose iids every sequence
 * shares (pf.h says how a sequence learns them). Bounded: emptied at half its slots
 * or arena, between packets only (rtr__pf_begin_ring()); past that a string is
 * written inline.
 */
#include "format/perfetto/pf.h"

#include <string.h>

static size_t slot_of(uint64_t key, uint32_t kind)
{
	uint64_t x = (key ^ ((uint64_t)kind << 56)) * 0x9e3779b97f4a7c15ull;

	return (size_t)(x >> 48) & (PF_SLOTS - 1);
}

void rtr__pf_intern_reset(struct rtr__pf *pf)
{
	memset(pf->slots, 0, PF_SLOTS * sizeof(*pf->slots));
	pf->nslots_used = 0;
	pf->arena_used = 0;
	pf->epoch++;
}

struct rtr__pf_slot *rtr__pf_intern(struct rtr__pf *pf, uint32_t kind, uint64_t key, const char *s,
				    size_t len)
{
	size_t i = slot_of(key, kind);

	for (;;) {
		struct rtr__pf_slot *sl = &pf->slots[i];
		if (RTR_LIKELY(sl->key == key && sl->kind == kind))
			return sl;
		if (sl->key == 0)
			break;
		i = (i + 1) & (PF_SLOTS - 1);
	}
	if (pf->nslots_used >= PF_SLOTS / 2 || pf->arena_used + 3 * PF_STR_MAX > PF_ARENA)
		return NULL;
	if (len == RTR__PF_LEN_UNKNOWN)
		len = strnlen(s, PF_STR_MAX);
	if (len > PF_STR_MAX)
		len = PF_STR_MAX;
	size_t bad = 0;
	char *start = pf->arena + pf->arena_used;
	char *end = rtr__jsontext_utf8_repair(start, s, len, &bad);
	struct rtr__pf_slot *sl = &pf->slots[i];
	sl->key = key;
	sl->kind = kind;
	sl->iid = (uint32_t)++pf->nslots_used;
	sl->off = (uint32_t)pf->arena_used;
	sl->len = (uint32_t)(end - start);
	pf->arena_used += sl->len;
	return sl;
}

char *rtr__pf_put_interned(struct rtr__pf *pf, char *p, const struct pf_pending *pend)
{
	char *len_at, *entry;

	if (pend->n == 0)
		return p;
	p = pb_open(p, RTR__PF_PACKET_INTERNED_DATA, &len_at);
	for (unsigned i = 0; i < pend->n; i++) {
		const struct rtr__pf_slot *sl = pend->slot[i];
		p = pb_open(p, sl->kind, &entry);
		p = pb_uint(p, RTR__PF_INTERNED_IID, sl->iid);
		p = pb_bytes(p, RTR__PF_INTERNED_NAME, pf->arena + sl->off, sl->len);
		p = pb_close(entry, p);
	}
	return pb_close(len_at, p);
}
