/* SPDX-License-Identifier: MIT */
/*
 * Interning for the NVTX module (strings.h). The arena holds entries
 * [u32 hash][u32 len][bytes][NUL], 8-byte aligned; a slot of an open-addressing table
 * points at an entry's bytes. An entry is written by the one thread that reserved its
 * bytes, and then published into a free slot by compare-and-swap: a reader that sees
 * the pointer sees the bytes. Entries are never removed, so a pointer once returned
 * stays valid; two threads that first see the same string at once may both reserve
 * bytes, and the loser's are left unused (worst case: a few bytes of the arena).
 */
#include "nvtx/strings.h"

#include "common/atomic.h"

#include <string.h>

#define TABLE_SLOTS (1u << 14) /* at most 3/4 used: MAX_PROBES bounds a lookup */
#define MAX_PROBES  64
#define ENTRY_HEAD  8

static _Alignas(8) char arena[RTR_NVTX_ARENA_BYTES];
static size_t arena_used = ENTRY_HEAD; /* offset 0 stays unused: it means "none" */
static const char *table[TABLE_SLOTS];

/* Eight bytes a step (a push hashes its name every call), then a finalizer that
 * lets every input bit reach the low bits the table uses (a product alone carries
 * them only upwards). */
static uint32_t hash_bytes(const char *s, size_t len)
{
	const uint64_t k = 0x9E3779B97F4A7C15u;
	uint64_t h = len * k;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, s + i, 8);
		h = (h ^ w) * k;
		h ^= h >> 32;
	}
	if (i < len) {
		uint64_t w = 0;
		for (size_t j = 0; i + j < len; j++) /* not memcpy: a call, for a few bytes */
			w |= (uint64_t)(uint8_t)s[i + j] << (8 * j);
		h = (h ^ w) * k;
	}
	h ^= h >> 33; /* the 64-bit finalizer of MurmurHash3 (its published constants) */
	h *= 0xFF51AFD7ED558CCDu;
	h ^= h >> 33;
	h *= 0xC4CEB9FE1A85EC53u;
	h ^= h >> 33;
	return (uint32_t)h;
}

static int entry_is(const char *entry, uint32_t h, const char *s, size_t len)
{
	uint32_t head[2];
	memcpy(head, entry - ENTRY_HEAD, sizeof(head));
	if (head[0] != h || head[1] != len)
		return 0;
	if (len > 32)
		return memcmp(entry, s, len) == 0;
	for (size_t i = 0; i < len; i++) /* a name: shorter than a call to memcmp */
		if (entry[i] != s[i])
			return 0;
	return 1;
}

static char *entry_new(uint32_t h, const char *s, size_t len)
{
	size_t need = (ENTRY_HEAD + len + 1 + 7) & ~(size_t)7;
	/* Relaxed: the add only hands out disjoint bytes; the bytes are published by the
	 * release of the slot's compare-and-swap. */
	size_t at = __atomic_fetch_add(&arena_used, need, __ATOMIC_RELAXED);
	if (at + need > RTR_NVTX_ARENA_BYTES)
		return NULL;
	uint32_t head[2] = {h, (uint32_t)len};
	memcpy(arena + at, head, sizeof(head));
	memcpy(arena + at + ENTRY_HEAD, s, len);
	arena[at + ENTRY_HEAD + len] = '\0';
	return arena + at + ENTRY_HEAD;
}

const char *rtr__nvtx_intern(const char *s, size_t len)
{
	if (len > RTR_NVTX_MAX_STRING) {
		len = RTR_NVTX_MAX_STRING;
		while (len > 0 && ((uint8_t)s[len] & 0xC0) == 0x80)
			len--; /* s[len] continues a character: cut before that character */
	}
	uint32_t h = hash_bytes(s, len);
	char *mine = NULL;
	/* triangular steps (h + i(i+1)/2): they visit every slot of a power-of-two table,
	 * and do not pile up into the long runs consecutive slots make near 3/4 full */
	uint32_t at = h;
	for (uint32_t i = 0; i < MAX_PROBES; at += ++i) {
		const char **slot = &table[at & (TABLE_SLOTS - 1)];
		/* A1: pairs with R1 below; an entry seen is an entry written */
		const char *entry = rtr_atomic_load_acquire(slot);
		if (entry == NULL) {
			if (mine == NULL && (mine = entry_new(h, s, len)) == NULL)
				return NULL;
			/* R1: publishes the entry's bytes (pairs with A1, and with the
			 * acquire of a failed exchange) */
			if (__atomic_compare_exchange_n(slot, &entry, mine, 0, __ATOMIC_RELEASE,
							__ATOMIC_ACQUIRE))
				return mine;
		}
		if (entry_is(entry, h, s, len))
			return entry;
	}
	return NULL;
}

uint32_t rtr__nvtx_offset(const char *interned)
{
	if (interned < arena + ENTRY_HEAD || interned >= arena + RTR_NVTX_ARENA_BYTES)
		return 0;
	return (uint32_t)(interned - arena);
}

const char *rtr__nvtx_at(uint32_t offset)
{
	return offset == 0 ? NULL : arena + offset;
}

size_t rtr__nvtx_utf8(const wchar_t *s, char *out, size_t cap)
{
	size_t n = 0;
	for (; *s != 0; s++) {
		uint32_t c = (uint32_t)*s;
		if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
			c = 0xFFFD; /* not a character: the replacement character */
		size_t k = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
		if (n + k + 1 > cap)
			break;
		if (k == 1) {
			out[n] = (char)c;
		} else {
			for (size_t j = k - 1; j > 0; j--, c >>= 6)
				out[n + j] = (char)(0x80 | (c & 0x3F));
			out[n] = (char)((k == 2 ? 0xC0 : k == 3 ? 0xE0 : 0xF0) | c);
		}
		n += k;
	}
	out[n] = '\0';
	return n;
}
