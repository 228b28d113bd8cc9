/* SPDX-License-Identifier: MIT */
/*
 * An MPI program for test_mpi_profile (mpirun -np 4, linked with libringtrace-mpi):
 * slices of known times on every rank, nested, in threads, around MPI calls.
 *	- "solve" (rtr_complete(), 1000 (rank + 1) ns, 5 times), inside it "kernel"
 *	  (300 ns, then 200 ns: parent first);
 *	- 10 "step" slices (B/E), each around an MPI_Allreduce and a "local" slice;
 *	- a second thread's "worker" slice (50 ns, 3 times) and a counter "load";
 *	- `imbalance`: "imbalanced" (rtr_complete()), 3,000,000 ns on rank 2 and
 *	  1,000,000 on the others; "balanced", 500,000 on every rank; "only_rank_1",
 *	  100 ns on rank 1 alone.
 * `sync`: as `imbalance`, with rtr_mpi_sync() before the imbalanced part; rank 0 then
 * moves the job profile so far (RINGTRACE_FILE with "job" for "%r") to that path with
 * ".sync" appended.
 * `timing`: rank 0 prints how long MPI_Finalize took, in ns (for bench figures).
 */
#define _POSIX_C_SOURCE 200809L
#include <ringtrace.h>
#include <ringtrace/mpi.h>

#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Slices given times ahead of now: nothing else may begin before they end (a trace
 * nests slices by time). */
static void wait_past(uint64_t ns)
{
	while (rtr_now_ns() <= ns)
		;
}

static void *worker(void *arg)
{
	uint64_t base = rtr_now_ns();
	(void)arg;
	for (uint64_t i = 0; i < 3; i++)
		rtr_complete("app", "worker", base + i * 100, 50);
	wait_past(base + 300);
	rtr_counter_i64("app", "load", 7);
	return NULL;
}

int main(int argc, char **argv)
{
	int rank, size;
	const char *mode = argc > 1 ? argv[1] : "work";

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	uint64_t base = rtr_now_ns();
	for (uint64_t i = 0; i < 5; i++) {
		uint64_t t = base + i * 10000;
		rtr_complete("app", "solve", t, 1000 * (uint64_t)(rank + 1));
		rtr_complete("app", "kernel", t + 100, 300);
		rtr_complete("app", "kernel", t + 500, 200);
	}
	wait_past(base + 50000);
	for (int i = 0; i < 10; i++) {
		int in = rank + i, out = 0;
		rtr_begin("app", "step");
		MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		rtr_begin("app", "local");
		rtr_end("app", "local");
		rtr_end("app", "step");
	}
	pthread_t th;
	pthread_create(&th, NULL, worker, NULL);
	pthread_join(th, NULL);
	if (strcmp(mode, "sync") == 0) {
		const char *pattern = getenv("RINGTRACE_FILE");
		const char *at = pattern != NULL ? strstr(pattern, "%r") : NULL;
		char job[4200], to[4300];

		if (rtr_mpi_sync() != 0)
			return 1;
		if (rank == 0 && at != NULL) {
			snprintf(job, sizeof(job), "%.*sjob%s", (int)(at - pattern), pattern,
				 at + 2);
			snprintf(to, sizeof(to), "%s.sync", job);
			if (rename(job, to) != 0)
				return 1;
		}
	}
	if (strcmp(mode, "imbalance") == 0 || strcmp(mode, "sync") == 0) {
		base = rtr_now_ns();
		rtr_complete("app", "imbalanced", base, rank == 2 ? 3000000 : 1000000);
		rtr_complete("app", "balanced", base + 4000000, 500000);
		if (rank == 1)
			rtr_complete("app", "only_rank_1", base + 5000000, 100);
		wait_past(base + 5000200);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	MPI_Finalize();
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (strcmp(mode, "timing") == 0 && rank == 0)
		printf("finalize_ns %lld\n",
		       (long long)(b.tv_sec - a.tv_sec) * 1000000000ll + (b.tv_nsec - a.tv_nsec));
	return 0;
}
