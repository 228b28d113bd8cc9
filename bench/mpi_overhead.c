/* SPDX-License-Identifier: MIT */
/*
 * The MPI module's cost per wrapped call beside a bare rtr_begin()+rtr_end() pair, in
 * one run (issue 13: at most 2x). One rank (mpirun -np 1, or run it directly as a
 * singleton), linked with libringtrace-mpi; ITER rounds of each, best of 5 passes:
 *	bare	rtr_begin + rtr_end
 *	pmpi	PMPI_Irecv + PMPI_Isend + PMPI_Waitall(2) to itself (no wrapper)
 *	mpi	MPI_Irecv + MPI_Isend + MPI_Waitall(2): the same through the wrappers,
 *		3 slices, a flow start and end, the pending-receive table
 *	events	the PMPI sequence with the wrappers' events recorded around it directly
 *		(3 slices with their arguments, a flow start and end): what the
 *		wrappers cannot cost less than, without their tables and lookups
 * The wrapper cost per call is (mpi - pmpi) / 3, printed as a multiple of bare; the
 * events' cost, (events - pmpi) / 3, likewise on a second line.
 *
 *	mpirun -np 1 build/bench/bench_mpi_overhead [ITER]
 */
#include <ringtrace.h>

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* The wrappers' events for the sequence, recorded directly (flow id: any). Not
 * inlined, so that a profile (callgrind) shows its cost apart. */
__attribute__((noinline)) static void events(int *v, int *w, uint64_t id)
{
	const struct rtr_arg p2p[] = {RTR_ARG_I64("peer", 0), RTR_ARG_I64("tag", 1),
				      RTR_ARG_I64("bytes", (int64_t)sizeof(int))};
	const struct rtr_arg count[] = {RTR_ARG_I64("count", 2)};
	MPI_Request r[2];

	rtr_begin_args("bench", "Irecv", p2p, 3);
	PMPI_Irecv(v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &r[0]);
	rtr_end("bench", "Irecv");
	rtr_begin_args("bench", "Isend", p2p, 3);
	rtr_flow_start("bench", "message", id);
	PMPI_Isend(w, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &r[1]);
	rtr_end("bench", "Isend");
	rtr_begin_args("bench", "Waitall", count, 1);
	PMPI_Waitall(2, r, MPI_STATUSES_IGNORE);
	rtr_flow_end("bench", "message", id);
	rtr_end("bench", "Waitall");
}

static double best_ns(int which, long iter)
{
	double best = 1e30;
	int v = 0, w = 0;

	for (int pass = 0; pass < 5; pass++) {
		uint64_t t0 = rtr_now_ns();
		for (long i = 0; i < iter; i++) {
			MPI_Request r[2];
			if (which == 0) {
				rtr_begin("bench", "bare");
				rtr_end("bench", "bare");
			} else if (which == 1) {
				PMPI_Irecv(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &r[0]);
				PMPI_Isend(&w, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &r[1]);
				PMPI_Waitall(2, r, MPI_STATUSES_IGNORE);
			} else if (which == 2) {
				MPI_Irecv(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &r[0]);
				MPI_Isend(&w, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &r[1]);
				MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
			} else {
				events(&v, &w, (uint64_t)i + 1);
			}
		}
		double ns = (double)(rtr_now_ns() - t0) / (double)iter;
		if (ns < best)
			best = ns;
	}
	return best;
}

int main(int argc, char **argv)
{
	long iter = argc > 1 ? atol(argv[1]) : 20000;

	MPI_Init(&argc, &argv);
	double bare = best_ns(0, iter), pmpi = best_ns(1, iter), mpi = best_ns(2, iter);
	double direct = best_ns(3, iter);
	double per_call = (mpi - pmpi) / 3, per_events = (direct - pmpi) / 3;
	printf("bare begin+end %.1f ns; Irecv+Isend+Waitall: PMPI %.1f ns, wrapped %.1f ns; "
	       "wrapper cost %.1f ns per call = %.2fx bare\n",
	       bare, pmpi, mpi, per_call, per_call / bare);
	printf("the same events recorded directly: %.1f ns; %.1f ns per call = %.2fx bare\n",
	       direct, per_events, per_events / bare);
	MPI_Finalize();
	return 0;
}
