/* SPDX-License-Identifier: MIT */
/*
 * A communicator's info, for the wrappers that take one (comm.c keeps them).
 */
#ifndef RTR_MPI_COMM_H
#define RTR_MPI_COMM_H

#include "mpi/mpi_internal.h"

/* The info of comm, made from its members when no wrapper made the communicator;
 * NULL for MPI_COMM_NULL or when MPI fails. */
static inline struct comm_info *rtr__mpi_info_of(MPI_Comm comm)
{
	return comm == MPI_COMM_WORLD ? &rtr__mpi.world_info : rtr__mpi_info_lookup(comm);
}

#endif
