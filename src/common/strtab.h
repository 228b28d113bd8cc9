/* SPDX-License-Identifier: MIT */
/*
 * A table of interned strings for the modules that hear names from a runtime (NVTX,
 * Kokkos): each distinct string copied once into a fixed arena and kept for the
 * process's life, so that events carry it by pointer and nothing is copied into the
 * ring. Any thread, lock-free, never allocating.
 *
 * An entry, 8-byte aligned in the arena: the owner's head (`head` bytes: a call site,
 * say, filled by `init` before the entry is published), the hash and the length, then
 * the bytes and a NUL. A slot of the open-addressing table points at an entry's bytes.
 * A first sighting takes arena bytes with one atomic add and publishes them into a
 * free slot with one compare-and-swap: a reader that sees the pointer sees the entry.
 * Two threads that first see the same string at once may both take bytes; the
 * loser's stay unused. Slots are probed in triangular steps (h + i(i+1)/2), which
 * visit every slot of a power-of-two table without piling up near three quarters
 * full, and at most 3/4 of the slots are ever used.
 */
#ifndef RTR_COMMON_STRTAB_H
#define RTR_COMMON_STRTAB_H

#include <stddef.h>
#include <stdint.h>

/* Bytes between an entry's head and its string: the hash (8), the length (4), 4 unused. */
#define RTR__STRTAB_META 16

struct rtr__strtab {
	char *arena; /* arena_bytes, 8-byte aligned; offset 0 stays unused */
	size_t arena_bytes;
	const char **slots; /* nslots (a power of two) */
	uint32_t nslots;
	uint32_t max_len; /* longer strings are cut, at a UTF-8 character boundary */
	size_t head;	  /* the owner's bytes before each entry, a multiple of 8 */
	void (*init)(void *head, const char *bytes); /* fills them; NULL: none */
	size_t used;				     /* arena bytes handed out (atomic add) */
	uint32_t entries;			     /* published; a bound, relaxed */
};

/* A table over static storage: `arena` a char array aligned to 8, `slots` an array. */
#define RTR__STRTAB(arena_, slots_, max_len_, head_, init_)                                        \
	{                                                                                          \
		.arena = (arena_), .arena_bytes = sizeof(arena_), .slots = (slots_),               \
		.nslots = (uint32_t)(sizeof(slots_) / sizeof((slots_)[0])), .max_len = (max_len_), \
		.head = (head_), .init = (init_), .used = 8                                        \
	}

/* The length of the len bytes at s cut to at most max, before a UTF-8 character that
 * would cross it (s has a byte at max when len > max). */
static inline size_t rtr__strtab_cut(const char *s, size_t len, size_t max)
{
	if (len <= max)
		return len;
	len = max;
	while (len > 0 && ((uint8_t)s[len] & 0xC0) == 0x80)
		len--; /* s[len] continues a character: cut before that character */
	return len;
}

/* The interned copy of the len bytes at s (cut past max_len: rtr__strtab_cut()), or
 * NULL when the arena or the table is full. */
const char *rtr__strtab_intern(struct rtr__strtab *t, const char *s, size_t len);

/* The owner's head of an interned string. */
static inline void *rtr__strtab_head(const struct rtr__strtab *t, const char *interned)
{
	return (void *)(uintptr_t)(interned - RTR__STRTAB_META - t->head);
}

#endif /* RTR_COMMON_STRTAB_H */
