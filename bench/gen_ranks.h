/* SPDX-License-Identifier: MIT */
/*
 * gen_ranks: the job model (gen_model.c) and the writer of rank files (gen_ranks.c).
 * Times are ns on rank 0's clock ("true" time); each rank's file shifts them onto its
 * own clock and its own origin.
 */
#ifndef RTR_BENCH_GEN_RANKS_H
#define RTR_BENCH_GEN_RANKS_H

#include <stdint.h>

/* The job: the pattern of every iteration and the delays injected into it. */
struct gen_job {
	long ranks;
	long iterations;
	long barrier_every;   /* a Barrier after every k-th iteration's Allreduce; 0: none */
	int blocking;	      /* halo by Send/Recv; else Isend/Irecv/Waitall */
	int64_t compute_ns;   /* the "compute" region of every rank */
	int64_t region_ns;    /* the second region (region_name), on rank 0 */
	double region_growth; /* region time at rank r: region_ns * (1 + growth * r / (N - 1)) */
	const char *region_name;
	int64_t offset_step_ns; /* rank r's clock runs r * step ahead of rank 0's */
	long late_rank;		/* the late sender; -1: none */
	long late_iteration;
	int64_t late_ns;    /* its send to the right starts this after the receiver waits */
	long slow_rank;	    /* -1: none */
	double slow_factor; /* the slow rank's compute takes this many times longer */
	int ranks_per_host;
};

/* One rank's calls in one iteration (true ns). */
struct gen_flow {
	int64_t at; /* the flow's start (a send) or end (a receive) */
	long src, dst;
	int tag;
	int send; /* the flow starts here */
};

struct gen_halo_call {
	const char *name;
	int64_t begin, end;
	int peer, tag; /* -1: no such argument */
	int count;     /* a Waitall's requests; 0: none */
	struct gen_flow flows[2];
	int nflows;
};

#define GEN_HALO_MAX 5

struct gen_iteration {
	struct gen_halo_call halo[GEN_HALO_MAX];
	int nhalo;
	int64_t compute_begin, compute_end;
	int64_t region_begin, region_end;
	int64_t allreduce_enter; /* its leave comes from the job: gen_collective_leave() */
};

/* The iterations' base times and collective entries, one pass over every rank per
 * iteration (O(ranks x iterations) time, O(iterations) memory). 0 or -ENOMEM. */
int gen_model_init(const struct gen_job *job);
void gen_model_free(void);

/* Rank r's iteration i. */
void gen_model_iteration(const struct gen_job *job, long r, long i, struct gen_iteration *out);

/* When the last rank entered iteration i's Allreduce (or Barrier), and when rank r
 * leaves it. */
int64_t gen_allreduce_last_enter(long i);
int64_t gen_allreduce_leave(long r, long i);
int64_t gen_barrier_enter(long r, long i);
int64_t gen_barrier_last_enter(long i);
int64_t gen_barrier_leave(long r, long i);

/* The job's start (MPI_Init's end on every rank) and end (MPI_Finalize's start). */
int64_t gen_job_begin(void);
int64_t gen_job_end(long r);

/* A message's flow id, from (communicator, source, destination, tag, sequence). */
uint64_t gen_flow_id(long src, long dst, int tag, long seq);

#endif
