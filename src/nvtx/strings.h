/* SPDX-License-Identifier: MIT */
/*
 * The NVTX module's strings: names, domains and registered strings interned once, in
 * a fixed arena, so that events carry them by pointer (no copy into the ring), and
 * a range's name and category fit in its 64-bit id as arena offsets.
 */
#ifndef RTR_NVTX_STRINGS_H
#define RTR_NVTX_STRINGS_H

#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

/* Bytes of the arena; an offset into it fits in RTR_NVTX_OFFSET_BITS. */
#define RTR_NVTX_OFFSET_BITS 20
#define RTR_NVTX_ARENA_BYTES ((size_t)1 << RTR_NVTX_OFFSET_BITS)
/* Longest string interned; a longer one is cut (at a UTF-8 boundary). */
#define RTR_NVTX_MAX_STRING 1024

/* The interned copy of the len bytes at s (NUL-terminated, kept for the process's
 * life), or NULL when the arena or its table is full. Any thread, lock-free, never
 * allocates: a first sighting takes arena bytes with one atomic add and publishes
 * them with one compare-and-swap. */
const char *rtr__nvtx_intern(const char *s, size_t len);

/* The arena offset of an interned string (never 0), or 0 for any other pointer. */
uint32_t rtr__nvtx_offset(const char *interned);
/* The interned string at an offset rtr__nvtx_offset() gave, or NULL for 0. */
const char *rtr__nvtx_at(uint32_t offset);

/* s (wide, UTF-32) as UTF-8 NUL-terminated into out (cap bytes, cap >= 5); returns
 * the bytes written, cut at a character boundary when out is too small. */
size_t rtr__nvtx_utf8(const wchar_t *s, char *out, size_t cap);

#endif /* RTR_NVTX_STRINGS_H */
