/* SPDX-License-Identifier: MIT */
/*
 * The library's own memory: page-granular mappings, never the host program's heap.
 *
 * Why not mimalloc: Debian's libmimalloc.so exports malloc and free, so linking it
 * replaces the allocator of the whole host program. Everything the recorder keeps
 * (rings, output chunks, the intern cache) is large, long-lived and page-shaped, so
 * anonymous mappings fit it exactly and leave the host's heap untouched.
 */
#ifndef RTR_MEM_H
#define RTR_MEM_H

#include <stddef.h>

/* Zeroed, page-aligned memory of at least `bytes`; NULL on failure. Any thread. */
void *rtr__mem_map(size_t bytes);
/* Return memory from rtr__mem_map(); `bytes` as passed to it. NULL is ignored. */
void rtr__mem_unmap(void *p, size_t bytes);

#endif
