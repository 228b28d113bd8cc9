/* SPDX-License-Identifier: MIT */
/*
 * gen_ranks' job model: when each rank makes each call, on rank 0's clock (ns). Every
 * time is a pure function of (rank, iteration) and the iteration's base, so a rank's
 * file is written without holding any other rank's: a rank's halo depends on its two
 * neighbours' sends (computed again from the same functions), and the collectives that
 * end each iteration on when the last rank enters (one pass over the ranks per
 * iteration, kept: O(iterations) memory).
 *
 * Iteration i on rank r (Isend mode): Irecv from the left (tag 2), Irecv from the right
 * (tag 1), Isend to the left (tag 1), Isend to the right (tag 2), Waitall of the four
 * (ends once both messages arrived); compute; the region; Allreduce; a Barrier every
 * k-th iteration. Send mode: Send left, Send right (eager: they do not wait), Recv
 * from the left, Recv from the right.
 */
#include "gen_ranks.h"

#include <errno.h>
#include <stdlib.h>

#define LATENCY_NS	1500 /* a message's flight */
#define FLOW_IN_CALL_NS 400  /* a send's flow starts this far into its slice */
#define ALLREDUCE_NS	2000 /* from the last entry to the leave */
#define BARRIER_NS	1000
#define INIT_END_NS	1000000000LL /* every rank leaves MPI_Init here (+ skew) */
#define FIRST_ITERATION (INIT_END_NS + 100000)

static int64_t *base;	      /* iteration i's base: its halo starts at base + skew(r) */
static int64_t *last_enter;   /* the last rank's entry into iteration i's Allreduce */
static int64_t *barrier_last; /* the last rank's entry into its Barrier; 0: none */
static int64_t max_skew;
static long iterations;

/* Ranks leave a collective a little apart, as they do: up to 700 ns, less than the
 * 800 ns from a rank's send to the right to its own wait (Isend mode; 1100 ns with
 * Send/Recv), so that no message of the pattern itself is late. */
static int64_t skew(long r)
{
	return (int64_t)(r % 8) * 100;
}

static long left_of(const struct gen_job *job, long r)
{
	return (r + job->ranks - 1) % job->ranks;
}

static long right_of(const struct gen_job *job, long r)
{
	return (r + 1) % job->ranks;
}

static int has_barrier(const struct gen_job *job, long i)
{
	return job->barrier_every > 0 && (i + 1) % job->barrier_every == 0;
}

static int64_t halo_start(long r, long i)
{
	return base[i] + skew(r);
}

/* Where the receiver of r's send to the right starts waiting for it (without the
 * late send's delay: only the late rank sends late, and it is not its own right). */
static int64_t send_right_begin(const struct gen_job *job, long r, long i, int late);

static int64_t receive_from_left_begin(const struct gen_job *job, long r, long i)
{
	int64_t sr = send_right_begin(job, r, i, 0);

	return job->blocking
		       ? sr + 1100
		       : (halo_start(r, i) + 3000 > sr + 800 ? halo_start(r, i) + 3000 : sr + 800);
}

static int64_t send_right_begin(const struct gen_job *job, long r, long i, int late)
{
	int64_t h = halo_start(r, i);
	int64_t s = job->blocking ? h + 1100 : h + 2200;

	if (late && r == job->late_rank && i == job->late_iteration) {
		int64_t wait = receive_from_left_begin(job, right_of(job, r), i) + job->late_ns;
		s = wait > s ? wait : s;
	}
	return s;
}

static int64_t send_left_begin(const struct gen_job *job, long r, long i)
{
	return job->blocking ? halo_start(r, i) : halo_start(r, i) + 1400;
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/* A halo call; its flow from (send) or to (receive) peer with tag at flow_at, if >= 0. */
static struct gen_halo_call *call(struct gen_iteration *it, const char *name, int64_t begin,
				  int64_t end, long self, long peer, int tag, int64_t flow_at,
				  int send)
{
	struct gen_halo_call *c = &it->halo[it->nhalo++];

	*c = (struct gen_halo_call){
		.name = name, .begin = begin, .end = end, .peer = (int)peer, .tag = tag};
	if (flow_at >= 0)
		c->flows[c->nflows++] = (struct gen_flow){flow_at, send ? self : peer,
							  send ? peer : self, tag, send};
	return c;
}

/* The halo's calls; returns the end of the last. */
static int64_t halo(const struct gen_job *job, long r, long i, struct gen_iteration *it)
{
	long left = left_of(job, r), right = right_of(job, r);
	int64_t h = halo_start(r, i), sl = send_left_begin(job, r, i);
	int64_t sr = send_right_begin(job, r, i, 1);
	/* the message from the left is its send to the right (tag 2), and back */
	int64_t from_left = send_right_begin(job, left, i, 1) + FLOW_IN_CALL_NS + LATENCY_NS;
	int64_t from_right = send_left_begin(job, right, i) + FLOW_IN_CALL_NS + LATENCY_NS;

	it->nhalo = 0;
	if (job->blocking) {
		call(it, "MPI_Send", sl, sl + 1000, r, left, 1, sl + FLOW_IN_CALL_NS, 1);
		call(it, "MPI_Send", sr, sr + 1000, r, right, 2, sr + FLOW_IN_CALL_NS, 1);
		int64_t rl = sr + 1100, got = max64(rl, from_left);
		call(it, "MPI_Recv", rl, got + 300, r, left, 2, got + 100, 0);
		int64_t rr = got + 400, got_r = max64(rr, from_right);
		call(it, "MPI_Recv", rr, got_r + 300, r, right, 1, got_r + 100, 0);
		return got_r + 300;
	}
	call(it, "MPI_Irecv", h, h + 600, r, left, 2, -1, 0);
	call(it, "MPI_Irecv", h + 700, h + 1300, r, right, 1, -1, 0);
	call(it, "MPI_Isend", sl, sl + 700, r, left, 1, sl + FLOW_IN_CALL_NS, 1);
	call(it, "MPI_Isend", sr, sr + 700, r, right, 2, sr + FLOW_IN_CALL_NS, 1);
	int64_t w = max64(h + 3000, sr + 800);
	int64_t e = max64(w, max64(from_left, from_right)) + 500;
	/* the Waitall completes both receives: a flow end each, in time order */
	int64_t at_l = max64(w, from_left) + 100, at_r = max64(w, from_right) + 100;
	struct gen_halo_call *c = call(it, "MPI_Waitall", w, e, r, -1, -1, -1, 0);
	c->count = 4;
	struct gen_flow fl = {at_l, left, r, 2, 0}, fr = {at_r, right, r, 1, 0};
	c->flows[0] = at_l <= at_r ? fl : fr;
	c->flows[1] = at_l <= at_r ? fr : fl;
	c->nflows = 2;
	return e;
}

void gen_model_iteration(const struct gen_job *job, long r, long i, struct gen_iteration *out)
{
	int64_t e = halo(job, r, i, out);
	double c = (double)job->compute_ns * (r == job->slow_rank ? job->slow_factor : 1.0);
	double g = job->ranks > 1 ? job->region_growth * (double)r / (double)(job->ranks - 1) : 0;

	out->compute_begin = e + 100;
	out->compute_end = out->compute_begin + (int64_t)c;
	out->region_begin = out->compute_end + 100;
	out->region_end = out->region_begin + (int64_t)((double)job->region_ns * (1.0 + g));
	out->allreduce_enter = out->region_end + 100;
}

int gen_model_init(const struct gen_job *job)
{
	size_t n = (size_t)job->iterations + 1;
	struct gen_iteration it;

	base = calloc(n, sizeof(*base));
	last_enter = calloc(n, sizeof(*last_enter));
	barrier_last = calloc(n, sizeof(*barrier_last));
	if (base == NULL || last_enter == NULL || barrier_last == NULL) {
		gen_model_free();
		return -ENOMEM;
	}
	max_skew = skew(job->ranks < 8 ? job->ranks - 1 : 7);
	iterations = job->iterations;
	base[0] = FIRST_ITERATION;
	for (long i = 0; i < job->iterations; i++) {
		int64_t last = 0;
		for (long r = 0; r < job->ranks; r++) {
			gen_model_iteration(job, r, i, &it);
			last = max64(last, it.allreduce_enter);
		}
		last_enter[i] = last;
		int64_t leave = last + ALLREDUCE_NS + max_skew;
		if (has_barrier(job, i)) {
			barrier_last[i] = leave + 200;
			leave = barrier_last[i] + BARRIER_NS + max_skew;
		}
		base[i + 1] = leave + 100;
	}
	return 0;
}

void gen_model_free(void)
{
	free(base);
	free(last_enter);
	free(barrier_last);
	base = last_enter = barrier_last = NULL;
}

int64_t gen_allreduce_last_enter(long i)
{
	return last_enter[i];
}

int64_t gen_allreduce_leave(long r, long i)
{
	return last_enter[i] + ALLREDUCE_NS + skew(r);
}

int64_t gen_barrier_enter(long r, long i)
{
	return barrier_last[i] != 0 ? gen_allreduce_leave(r, i) + 200 : 0;
}

int64_t gen_barrier_last_enter(long i)
{
	return barrier_last[i];
}

int64_t gen_barrier_leave(long r, long i)
{
	return barrier_last[i] + BARRIER_NS + skew(r);
}

int64_t gen_job_begin(void)
{
	return INIT_END_NS;
}

int64_t gen_job_end(long r)
{
	return base[iterations] + skew(r);
}

uint64_t gen_flow_id(long src, long dst, int tag, long seq)
{
	/* splitmix64 over the tuple (communicator 1): ids that collide as rarely as the
	 * module's hashes do */
	uint64_t x = 1;
	const uint64_t parts[] = {(uint64_t)src, (uint64_t)dst, (uint64_t)tag, (uint64_t)seq};

	for (size_t k = 0; k < sizeof(parts) / sizeof(parts[0]); k++) {
		x += parts[k] + 0x9e3779b97f4a7c15ULL;
		x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
		x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
		x ^= x >> 31;
	}
	return x;
}
