/* SPDX-License-Identifier: MIT */
/*
 * An MPI program with waits injected on purpose, for `ringtrace report`
 * (tests/tools/test_tools_report.c), run under mpirun -np 4 with the MPI module
 * preloaded:
 *   - rank 2 sleeps 50 ms before a barrier: ranks 0, 1 and 3 wait for it there;
 *   - then rank 1 sleeps 50 ms before it sends to rank 0, which is already in its
 *     MPI_Recv: a late sender;
 *   - rank 3 sleeps 50 ms before an MPI_Bcast whose root it is, on a communicator
 *     that numbers the ranks backwards (rank 3 is its rank 0): ranks 0, 1 and 2 wait
 *     for it, a late broadcast;
 *   - rank 1 sleeps 50 ms before an MPI_Reduce to rank 0, which waits for it: an
 *     early reduce;
 *   - rank 2 sleeps 50 ms before an MPI_Iallreduce that the others started at once
 *     and wait for in MPI_Wait: a wait at an N-to-N collective, in the Wait.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <time.h>

static void nap_ms(long ms)
{
	struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&t, &t) != 0)
		;
}

int main(int argc, char **argv)
{
	int rank, value = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 2)
		nap_ms(50);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 1) {
		nap_ms(50);
		value = 42;
		MPI_Send(&value, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
	} else if (rank == 0) {
		MPI_Recv(&value, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Comm backwards;
	int size, sum = 0;
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - rank, &backwards);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 3)
		nap_ms(50);
	MPI_Bcast(&sum, 1, MPI_INT, 0, backwards);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 1)
		nap_ms(50);
	MPI_Reduce(&rank, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Request req;
	if (rank == 2)
		nap_ms(50);
	MPI_Iallreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
	MPI_Wait(&req, MPI_STATUS_IGNORE);
	MPI_Comm_free(&backwards);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return value == 42 || rank > 1 ? 0 : 1;
}
