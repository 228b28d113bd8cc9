/* SPDX-License-Identifier: MIT */
/* Interned strings for the modules: see strtab.h. */
#include "common/strtab.h"

#include "common/atomic.h"

#include <string.h>

#define MAX_PROBES 64
#define ENTRY_META RTR__STRTAB_META

static uint64_t mix(uint64_t h, uint64_t w)
{
	h = (h ^ w) * UINT64_C(0xbf58476d1ce4e5b9);
	return h ^ (h >> 31);
}

/* Eight bytes a step (a name is hashed on every lookup that misses a module's own
 * cache), then a finalizer that lets every bit reach the low bits the table uses. */
static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = len * UINT64_C(0x9e3779b97f4a7c15), w;
	size_t i = 0;

	for (; i + sizeof(w) <= len; i += sizeof(w)) {
		memcpy(&w, s + i, sizeof(w));
		h = mix(h, w);
	}
	if (i < len) {
		w = 0;
		memcpy(&w, s + i, len - i);
		h = mix(h, w);
	}
	h = (h ^ (h >> 29)) * UINT64_C(0x94d049bb133111eb);
	return h ^ (h >> 32);
}

static int entry_is(const char *bytes, uint64_t h, const char *s, size_t len)
{
	uint64_t eh;
	uint32_t elen;

	memcpy(&eh, bytes - ENTRY_META, sizeof(eh));
	memcpy(&elen, bytes - ENTRY_META + 8, sizeof(elen));
	return eh == h && elen == len && memcmp(bytes, s, len) == 0;
}

static char *entry_new(struct rtr__strtab *t, uint64_t h, const char *s, size_t len)
{
	size_t need = (t->head + ENTRY_META + len + 1 + 7) & ~(size_t)7;
	/* Relaxed: the add only hands out disjoint bytes; the entry is published by the
	 * release of the slot's compare-and-swap. */
	size_t at = __atomic_fetch_add(&t->used, need, __ATOMIC_RELAXED);
	if (at + need > t->arena_bytes)
		return NULL;
	char *bytes = t->arena + at + t->head + ENTRY_META;
	uint32_t len32 = (uint32_t)len;
	memcpy(bytes - ENTRY_META, &h, sizeof(h));
	memcpy(bytes - ENTRY_META + 8, &len32, sizeof(len32));
	memcpy(bytes, s, len);
	bytes[len] = '\0';
	if (t->init != NULL)
		t->init(t->arena + at, bytes);
	return bytes;
}

const char *rtr__strtab_intern(struct rtr__strtab *t, const char *s, size_t len)
{
	len = rtr__strtab_cut(s, len, t->max_len);
	uint64_t h = hash_bytes(s, len);
	char *mine = NULL;
	uint64_t at = h;
	for (uint32_t i = 0; i < MAX_PROBES; at += ++i) {
		const char **slot = &t->slots[at & (t->nslots - 1)];
		/* A1: pairs with R1 below; an entry seen is an entry written */
		const char *e = rtr_atomic_load_acquire(slot);
		if (e == NULL) {
			if (mine == NULL && (rtr_atomic_load_relaxed(&t->entries) >=
						     t->nslots / 4 * 3 || /* bound */
					     (mine = entry_new(t, h, s, len)) == NULL))
				return NULL;
			/* R1: publishes the entry (pairs with A1, and with the acquire of a
			 * failed exchange, which loads the winner into e) */
			if (__atomic_compare_exchange_n(slot, &e, mine, 0, __ATOMIC_RELEASE,
							__ATOMIC_ACQUIRE)) {
				/* relaxed: a bound, ordering nothing (threads that
				 * publish at once may pass it by one each) */
				__atomic_add_fetch(&t->entries, 1, __ATOMIC_RELAXED);
				return mine;
			}
		}
		if (entry_is(e, h, s, len))
			return e;
	}
	return NULL;
}
