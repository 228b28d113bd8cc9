/* SPDX-License-Identifier: MIT */
/*
 * The MPI module, libringtrace-mpi.so (CMake target ringtrace::mpi): MPI calls as
 * slices through the PMPI profiling interface, point-to-point messages as flows
 * between rank files, and clock measurements against rank 0. Linked by the program or
 * preloaded under mpirun (LD_PRELOAD=libringtrace-mpi.so); docs/mpi.md says what it
 * records and the rules of its flow ids.
 */
#ifndef RINGTRACE_MPI_H
#define RINGTRACE_MPI_H

#include <ringtrace.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Measure this rank's clock offset to rank 0 now (a min-RTT ping-pong of 50 rounds on
 * the module's private duplicate of MPI_COMM_WORLD) and record it as one
 * "ringtrace: clock sync" event (format in docs/mpi.md). Collective over
 * MPI_COMM_WORLD: every rank calls it, from one thread each. Blocks for the
 * ping-pong: about 50 round trips per rank, rank 0 serving the ranks in turn. When
 * every rank keeps a profile, rank 0 then writes the job profile so far
 * (docs/profile.md), as MPI_Finalize writes the final one.
 * Returns 0, -ENOTCONN outside MPI_Init .. MPI_Finalize (or when MPI was initialized
 * without the module's wrappers), or -EIO when an MPI call of the ping-pong failed.
 */
RTR_API int rtr_mpi_sync(void);

#ifdef __cplusplus
}
#endif

#endif
