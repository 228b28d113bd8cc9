/* SPDX-License-Identifier: MIT */
/*
 * Interning for the Kokkos tool (names.h). The arena holds entries, 8-byte aligned:
 * the site, the name's hash and length, then its bytes and a NUL; a slot of an
 * open-addressing table points at an entry. An entry is written by the one thread that
 * reserved its bytes, then published into a free slot by compare-and-swap: a reader
 * that sees the pointer sees the entry. Entries are never removed, so a site once
 * returned stays valid; two threads that first see the same name at once may both
 * reserve bytes, and the loser's are left unused (worst case: a name's bytes).
 *
 * The hash reads the name a word at a time: kernel names are long (a lambda's is its
 * mangled type), and a name is hashed on every miss of the tool's per-thread cache.
 */
#include "kokkos/names.h"

#include "common/atomic.h"

#include <stdint.h>
#include <string.h>

#define MAX_PROBES  64
#define MAX_ENTRIES (RTR_KOKKOS_NAME_SLOTS / 4 * 3) /* a lookup then ends in a few probes */

struct entry {
	struct rtr_site site; /* site.name points at bytes */
	uint64_t hash;
	uint32_t len;
	char bytes[];
};

const char rtr__kokkos_cat[] = "kokkos";

static _Alignas(8) char arena[RTR_KOKKOS_ARENA_BYTES];
static size_t arena_used;
static struct entry *table[RTR_KOKKOS_NAME_SLOTS];
/* Entries published; relaxed: a bound, ordering nothing. Threads that publish at once
 * may pass it by one each. */
static uint32_t entries;

static uint64_t mix(uint64_t h, uint64_t w)
{
	h = (h ^ w) * UINT64_C(0xbf58476d1ce4e5b9);
	return h ^ (h >> 31);
}

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

static struct entry *entry_new(uint64_t h, const char *s, size_t len)
{
	size_t need = (sizeof(struct entry) + len + 1 + 7) & ~(size_t)7;
	/* Relaxed: the add only hands out disjoint bytes; the entry is published by the
	 * release of the slot's compare-and-swap. */
	size_t at = __atomic_fetch_add(&arena_used, need, __ATOMIC_RELAXED);
	if (at + need > RTR_KOKKOS_ARENA_BYTES)
		return NULL;
	struct entry *e = (struct entry *)(void *)(arena + at);
	e->hash = h;
	e->len = (uint32_t)len;
	memcpy(e->bytes, s, len);
	e->bytes[len] = '\0';
	e->site.cat = rtr__kokkos_cat;
	e->site.name = e->bytes;
	return e;
}

const struct rtr_site *rtr__kokkos_intern(const char *s)
{
	if (s == NULL)
		s = "";
	size_t len = strnlen(s, RTR_KOKKOS_MAX_NAME + 1);
	if (len > RTR_KOKKOS_MAX_NAME) {
		len = RTR_KOKKOS_MAX_NAME;
		while (len > 0 && ((uint8_t)s[len] & 0xC0) == 0x80)
			len--; /* s[len] continues a character: cut before that character */
	}
	uint64_t h = hash_bytes(s, len);
	struct entry *mine = NULL;
	/* triangular steps (h + i(i+1)/2): they visit every slot of a power-of-two
	 * table and do not pile up as consecutive ones do at three quarters full */
	uint64_t at = h;
	for (uint32_t i = 0; i < MAX_PROBES; at += ++i) {
		struct entry **slot = &table[at & (RTR_KOKKOS_NAME_SLOTS - 1)];
		/* A1: pairs with R1 below; an entry seen is an entry written */
		struct entry *e = rtr_atomic_load_acquire(slot);
		if (e == NULL) {
			if (mine == NULL && (rtr_atomic_load_relaxed(&entries) >= MAX_ENTRIES ||
					     (mine = entry_new(h, s, len)) == NULL))
				return NULL;
			/* R1: publishes the entry (pairs with A1, and with the acquire of a
			 * failed exchange, which loads the winner into e) */
			if (__atomic_compare_exchange_n(slot, &e, mine, 0, __ATOMIC_RELEASE,
							__ATOMIC_ACQUIRE)) {
				__atomic_add_fetch(&entries, 1, __ATOMIC_RELAXED);
				return &mine->site;
			}
		}
		if (e->hash == h && e->len == len && memcmp(e->bytes, s, len) == 0)
			return &e->site;
	}
	return NULL;
}
