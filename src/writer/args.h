/* SPDX-License-Identifier: MIT */
/*
 * Arguments as the writer keeps them: a view of the bytes a producer recorded, for
 * an event (event.h), an open slice (slices.h), an open async span (async_open.h).
 */
#ifndef RTR_WRITER_ARGS_H
#define RTR_WRITER_ARGS_H

#include "record/record.h"

#include <stdint.h>
#include <string.h>

/*
 * Arguments as recorded: n types, then n pairs {u64 key, u64 value}, then the
 * blobs (record.h gives the layout), one run of `len` bytes from `types`. Keys and
 * RTR_ARG_TYPE_STR values are static strings' pointers.
 */
struct rtr__args {
	const uint8_t *types;
	uint32_t n;
	uint32_t len;
};

/* The pairs and the blobs of a. */
static inline const char *rtr__args_pairs(const struct rtr__args *a)
{
	return (const char *)a->types + a->n;
}

static inline const char *rtr__args_blobs(const struct rtr__args *a)
{
	return rtr__args_pairs(a) + (size_t)a->n * RTR__EXT_PAIR;
}

/* Argument i's key (a static string, or NULL), returns its value (record.h). */
static inline uint64_t rtr__args_get(const struct rtr__args *a, unsigned i, const char **key)
{
	uint64_t k, v;

	memcpy(&k, rtr__args_pairs(a) + (size_t)i * RTR__EXT_PAIR, sizeof(k));
	memcpy(&v, rtr__args_pairs(a) + (size_t)i * RTR__EXT_PAIR + 8, sizeof(v));
	*key = (const char *)(uintptr_t)k;
	return v;
}

/* The bytes an argument's blob takes at `blob` (0 for a number or a static string). */
static inline size_t rtr__args_blob_bytes(uint8_t type, uint64_t value, const char *blob)
{
	return rtr__rec_blob_bytes(type, value, blob, SIZE_MAX);
}

#endif
