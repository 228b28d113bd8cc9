/* SPDX-License-Identifier: MIT */
/*
 * The Kokkos tool's names: kernel, fence, region and section names and metadata keys,
 * interned once in a fixed arena, each as a call site {"kokkos", name} that events
 * carry by pointer (RTR_SCOPE's kind of site), so that no name is copied into the
 * ring. Kokkos passes each name as a string that lives only for the call.
 */
#ifndef RTR_KOKKOS_NAMES_H
#define RTR_KOKKOS_NAMES_H

#include <ringtrace.h>

#include <stddef.h>

/* "kokkos": the category of every event of the tool, one pointer for all of them. */
extern const char rtr__kokkos_cat[];

/* Bytes of the arena, and slots of its table (3/4 of them hold names at most). */
#define RTR_KOKKOS_ARENA_BYTES ((size_t)4 << 20)
#define RTR_KOKKOS_NAME_SLOTS  (1u << 16)
/* Longest name interned; a longer one is cut (at a UTF-8 character boundary). */
#define RTR_KOKKOS_MAX_NAME 1024

/*
 * The site of name s (NUL-terminated; NULL is ""), kept for the process's life, or
 * NULL when the arena or its table is full. Any thread, lock-free, never allocates:
 * a first sighting takes arena bytes with one atomic add and publishes them with one
 * compare-and-swap; a name seen before costs its hash and one compare.
 */
const struct rtr_site *rtr__kokkos_intern(const char *s);

#endif /* RTR_KOKKOS_NAMES_H */
