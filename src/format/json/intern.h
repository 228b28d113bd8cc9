/* SPDX-License-Identifier: MIT */
/*
 * The intern cache: strings escaped once, copied as bytes ever after.
 *
 * Static strings (names, categories, keys the program passes as literals) are
 * looked up by pointer; copied strings (names built at run time) by content. The
 * first lookup validates and escapes the bytes (common/jsontext.h) into an arena; later ones
 * return the cached escaped body. The cache has a fixed size: when the arena or the
 * table fills up it is reset (emptied) rather than grown, so memory stays bounded
 * however many distinct strings a run uses. A reset invalidates every result handed
 * out before it: copy a result's bytes before the next lookup. Writer thread only.
 */
#ifndef RTR_WRITER_INTERN_H
#define RTR_WRITER_INTERN_H

#include <stddef.h>
#include <stdint.h>

/* Longest input a string is cut to before escaping (a name of a static string). */
#define RTR_INTERN_MAX_INPUT 4096
/* Most bytes one escaped string takes. */
#define RTR_INTERN_MAX_ESCAPED (RTR_INTERN_MAX_INPUT * 6)

struct rtr__istr {
	const char *bytes; /* escaped body, no quotes; valid until the next lookup */
	size_t len;
};

struct rtr__intern_slot;

struct rtr__intern {
	struct rtr__intern_slot *slots;
	size_t nslots; /* power of two */
	size_t count;  /* slots in use; reset at half of nslots */
	char *arena;
	size_t arena_cap;
	size_t arena_used;
	uint64_t resets; /* times the cache was emptied */
	uint64_t hits;
	uint64_t misses;
};

/* A cache of at most arena_bytes of escaped text (>= 2 * RTR_INTERN_MAX_ESCAPED)
 * and nslots entries (power of two). Returns 0 or -ENOMEM. */
int rtr__intern_init(struct rtr__intern *in, size_t arena_bytes, size_t nslots);
void rtr__intern_destroy(struct rtr__intern *in);

/* The escaped body of the NUL-terminated static string s (cut at
 * RTR_INTERN_MAX_INPUT bytes), cached by pointer. s must not be NULL. */
struct rtr__istr rtr__intern_static(struct rtr__intern *in, const char *s);

/* The escaped body of len bytes at s, cached by content. len <= RTR_INTERN_MAX_INPUT. */
struct rtr__istr rtr__intern_bytes(struct rtr__intern *in, const char *s, size_t len);

#endif
