/* SPDX-License-Identifier: MIT */
/*
 * The rank and world size a launcher (mpirun, srun, ...) gives a process in its
 * environment: read alike by the recorder (%r, the start marker), the MPI module and
 * `ringtrace record`. Not for a signal handler (getenv).
 */
#ifndef RTR_COMMON_LAUNCHER_H
#define RTR_COMMON_LAUNCHER_H

#include "common/names.h"

#include <stddef.h>
#include <stdlib.h>

/* The first of vars[0..n) that holds a whole number >= min; -1 when none does. */
static inline long rtr__launcher_number(const char *const *vars, size_t n, long min)
{
	for (size_t i = 0; i < n; i++) {
		const char *v = getenv(vars[i]);
		char *end;
		if (v != NULL && *v != '\0') {
			long r = strtol(v, &end, 10);
			if (*end == '\0' && r >= min)
				return r;
		}
	}
	return -1;
}

/* The launcher's rank for this process, or -1. */
static inline long rtr__launcher_rank(void)
{
	static const char *const vars[] = {RTR__LAUNCHER_RANK_VARS};

	return rtr__launcher_number(vars, sizeof(vars) / sizeof(vars[0]), 0);
}

/* The launcher's world size, or -1. */
static inline long rtr__launcher_world_size(void)
{
	static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS",
					   "MV2_COMM_WORLD_SIZE"};

	return rtr__launcher_number(vars, sizeof(vars) / sizeof(vars[0]), 1);
}

#endif
