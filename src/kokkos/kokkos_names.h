/* SPDX-License-Identifier: MIT */
/*
 * The Kokkos tool's names, interned once in a fixed arena so that no name is copied
 * into the ring (Kokkos passes each as a string that lives only for the call): region
 * and section names and metadata keys each as a call site {"kokkos", name} that events
 * carry by pointer (RTR_SCOPE's kind of site); kernels and fences once per name, kind
 * and device id, each as a site with its arguments (RTR__F_SITE_ARGS), so that their
 * events carry none.
 */
#ifndef RTR_KOKKOS_KOKKOS_NAMES_H
#define RTR_KOKKOS_KOKKOS_NAMES_H

#include "record/record.h"

#include <ringtrace.h>

#include <stddef.h>
#include <stdint.h>

/* "kokkos": the category of every event of the tool, one pointer for all of them. */
extern const char rtr__kokkos_cat[];

/* Bytes of the arena, and slots of its table (3/4 of them hold names at most). */
#define RTR_KOKKOS_ARENA_BYTES ((size_t)8 << 20)
#define RTR_KOKKOS_NAME_SLOTS  (1u << 16)
/* Longest name interned; a longer one is cut (at a UTF-8 character boundary). */
#define RTR_KOKKOS_MAX_NAME 1024

/* What a name is interned as: a kernel's or fence's kind (its argument `kind`), or a
 * plain name. */
enum rtr__kokkos_kind {
	RTR_KOKKOS_FOR,
	RTR_KOKKOS_REDUCE,
	RTR_KOKKOS_SCAN,
	RTR_KOKKOS_FENCE,
	RTR_KOKKOS_NAME,
};

/* A name as interned: its site, with no arguments for a plain name, and for a kernel
 * or fence the arguments kind ("parallel_for", ...), device (the device id's type:
 * "Serial", "OpenMP", "Cuda", ...) and device_id. */
struct rtr__kokkos_site {
	struct rtr__site_args sa;
	uint32_t device_id;
	uint8_t kind; /* enum rtr__kokkos_kind */
	uint8_t args[3 * RTR__EXT_ARG];
};

/*
 * The site of name s (NUL-terminated; NULL is "") as a kind (a plain name: device_id
 * 0), kept for the process's life, or NULL when the arena or its table is full. Any
 * thread, lock-free, never allocates: a first sighting takes arena bytes with one
 * atomic add and publishes them with one compare-and-swap; a name seen before costs
 * its hash and one compare.
 */
const struct rtr__kokkos_site *rtr__kokkos_site(const char *s, enum rtr__kokkos_kind kind,
						uint32_t device_id);

/* The site of a plain name, or NULL: rtr__kokkos_site(s, RTR_KOKKOS_NAME, 0). */
const struct rtr_site *rtr__kokkos_intern(const char *s);

#endif /* RTR_KOKKOS_KOKKOS_NAMES_H */
