/* SPDX-License-Identifier: MIT */
/*
 * A halo exchange on a ring of ranks, traced by the MPI module: each rank holds a
 * strip of a 1-D heat equation, swaps its edge cells with both neighbours by
 * nonblocking sends and receives, relaxes its strip, and agrees on the residual with
 * an MPI_Allreduce, each step. The program knows nothing of tracing except one
 * optional rtr_mpi_sync() halfway (a clock measurement the merge can use) and a
 * "compute" slice; the MPI calls are recorded by libringtrace-mpi, linked in here (or
 * preloaded into a program that does not link it).
 *
 *	mpirun -np 4 ./mpi_halo [STEPS]		writes ringtrace-0.json .. ringtrace-3.json
 */
#include <ringtrace.h>
#include <ringtrace/mpi.h>

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define CELLS 4096
#define TAG_L 1 /* the cell sent to the left neighbour */
#define TAG_R 2 /* the cell sent to the right neighbour */

int main(int argc, char **argv)
{
	int rank, size, steps = argc > 1 ? atoi(argv[1]) : 20;
	static double u[CELLS + 2], v[CELLS + 2];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int left = (rank + size - 1) % size, right = (rank + 1) % size;
	for (int i = 0; i < CELLS + 2; i++)
		u[i] = rank == 0 && i == CELLS / 2 ? 1000.0 : 0.0;

	double residual = 0;
	for (int step = 0; step < steps; step++) {
		MPI_Request req[4];

		/* the ghost cells u[0] and u[CELLS + 1] come from the neighbours */
		MPI_Irecv(&u[0], 1, MPI_DOUBLE, left, TAG_R, MPI_COMM_WORLD, &req[0]);
		MPI_Irecv(&u[CELLS + 1], 1, MPI_DOUBLE, right, TAG_L, MPI_COMM_WORLD, &req[1]);
		MPI_Isend(&u[1], 1, MPI_DOUBLE, left, TAG_L, MPI_COMM_WORLD, &req[2]);
		MPI_Isend(&u[CELLS], 1, MPI_DOUBLE, right, TAG_R, MPI_COMM_WORLD, &req[3]);
		MPI_Waitall(4, req, MPI_STATUSES_IGNORE);

		rtr_begin("app", "compute");
		double local = 0;
		for (int rep = 0; rep < 8; rep++) {
			for (int i = 1; i <= CELLS; i++)
				v[i] = u[i] + 0.25 * (u[i - 1] - 2 * u[i] + u[i + 1]);
			for (int i = 1; i <= CELLS; i++) {
				local += fabs(v[i] - u[i]);
				u[i] = v[i];
			}
		}
		rtr_end("app", "compute");
		MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		if (step == steps / 2)
			rtr_mpi_sync();
	}
	if (rank == 0)
		printf("mpi_halo: %d ranks, %d steps, residual %.6g\n", size, steps, residual);
	MPI_Finalize();
	return 0;
}
