/* SPDX-License-Identifier: MIT */
/*
 * The OMPT tool's sites (RTR__F_SITE_ARGS): a parallel region's, one per code address
 * and requested team size, with its arguments requested, code and (with the symbol
 * table) function; an implicit task's, one per index and team size, with index and
 * team_size. Each is made once, in a fixed arena (common/strtab.h), and found again
 * through a table of the ones seen last, so that such a slice's begin is one record,
 * with no argument stored and no symbol searched.
 */
#ifndef RTR_OMP_OMPT_SITES_H
#define RTR_OMP_OMPT_SITES_H

#include "record/record.h"

#include <stdint.h>

/* "omp", every event's category; the names of the slices begun at sites: one pointer
 * each, which their E's carry too. */
extern const char rtr__omp_cat[];
extern const char rtr__omp_parallel[];
extern const char rtr__omp_implicit_task[];

enum rtr__omp_site_kind {
	RTR_OMP_SITE_PARALLEL = 1, /* key: the code address; key2: the team size asked */
	RTR_OMP_SITE_IMPLICIT = 2, /* key: the index; key2: the team size */
};

struct rtr__omp_site {
	struct rtr__site_args sa;
	uint64_t key;
	uint32_t key2;
	uint8_t kind; /* enum rtr__omp_site_kind */
	uint8_t args[3 * RTR__EXT_ARG];
};

/*
 * The site of kind for key and key2, kept for the process's life, or NULL when the
 * arena or its table is full (the caller then records the arguments itself). Any
 * thread, lock-free, never allocates; a site seen lately costs a hash and compares.
 */
const struct rtr__omp_site *rtr__omp_site(enum rtr__omp_site_kind kind, uint64_t key,
					  uint32_t key2);

/* The name of the function holding code address addr, from the symbol table built at
 * the tool's start, or NULL (none found, or no table: built without libelf). */
const char *rtr__omp_function(uint64_t addr);

#endif /* RTR_OMP_OMPT_SITES_H */
