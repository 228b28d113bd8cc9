/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace report`: the text for a terminal and what the three outputs share (the
 * per-rank times, the costs and orders of ranks and paths).
 */
#include "job_report.h"
#include "report.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t job_span(const struct job *j)
{
	return (uint64_t)(j->last - j->first);
}

void job_rank_times(const struct job *j, const struct job_rank *r, uint64_t *span, uint64_t *mpi,
		    uint64_t *compute, uint64_t *idle)
{
	*span = (uint64_t)(r->last - r->first);
	*mpi = r->mpi_ns < *span ? r->mpi_ns : *span;
	*compute = *span - *mpi;
	*idle = job_span(j) - *span;
}

uint64_t path_excess(const struct job_path *p, size_t nranks)
{
	uint64_t mean = nranks > 0 ? p->sum / nranks : 0;

	return p->max - mean;
}

uint64_t path_cost(const struct job_path *p, size_t nranks)
{
	uint64_t w = 0;

	for (int k = 0; k < WAIT_KINDS; k++)
		w += p->waits[k];
	return w + path_excess(p, nranks);
}

uint64_t rank_caused(const struct job_rank *r)
{
	uint64_t c = 0;

	for (int k = 0; k < WAIT_KINDS; k++)
		c += r->caused[k];
	return c;
}

/* The job by_cost() and by_caused() sort indexes of: set before each qsort; the
 * outputs run on one thread. */
static const struct job *order_job;

static int by_cost(const void *x, const void *y)
{
	const struct job_path *a = &order_job->paths[*(const size_t *)x];
	const struct job_path *b = &order_job->paths[*(const size_t *)y];
	uint64_t ca = path_cost(a, order_job->nranks), cb = path_cost(b, order_job->nranks);

	if (ca != cb)
		return ca < cb ? 1 : -1;
	return strcmp(a->name, b->name);
}

static int by_caused(const void *x, const void *y)
{
	const struct job_rank *a = &order_job->ranks[*(const size_t *)x];
	const struct job_rank *b = &order_job->ranks[*(const size_t *)y];
	uint64_t ca = rank_caused(a) + a->mpi_ns, cb = rank_caused(b) + b->mpi_ns;

	if (ca != cb)
		return ca < cb ? 1 : -1;
	return (a->rank > b->rank) - (a->rank < b->rank);
}

size_t *job_paths_by_cost(const struct job *j)
{
	size_t *v = malloc((j->npaths + 1) * sizeof(*v));

	if (v == NULL)
		return NULL;
	for (size_t i = 0; i < j->npaths; i++)
		v[i] = i;
	order_job = j;
	qsort(v, j->npaths, sizeof(*v), by_cost);
	return v;
}

size_t *job_ranks_by_cost(const struct job *j)
{
	size_t *v = malloc((j->nranks + 1) * sizeof(*v));

	if (v == NULL)
		return NULL;
	for (size_t i = 0; i < j->nranks; i++)
		v[i] = i;
	order_job = j;
	qsort(v, j->nranks, sizeof(*v), by_caused);
	return v;
}

static size_t shown(unsigned top, size_t n)
{
	return top == 0 || top > n ? n : top;
}

static double share(uint64_t part, uint64_t whole)
{
	return whole > 0 ? 100.0 * (double)part / (double)whole : 0;
}

static void print_ranks(const struct job *j, const struct report_options *o, const size_t *rk)
{
	char s[4][32];
	size_t n = shown(o->top, j->nranks);

	printf("\nranks%s: time on the job's span (%s)\n", n < j->nranks ? " costing the most" : "",
	       report_ns(s[0], sizeof(s[0]), job_span(j)));
	printf("%8s %10s %7s %10s %7s %10s %7s %10s %10s\n", "rank", "compute", "%", "mpi", "%",
	       "idle", "%", "waited", "caused");
	for (size_t i = 0; i < n; i++) {
		const struct job_rank *r = &j->ranks[rk[i]];
		uint64_t span, mpi, comp, idle, waited = 0;

		job_rank_times(j, r, &span, &mpi, &comp, &idle);
		for (int k = 0; k < WAIT_KINDS; k++)
			waited += r->waited[k];
		printf("%8" PRId64 " %10s %6.1f%% %10s %6.1f%% %10s %6.1f%% ", r->rank,
		       report_ns(s[0], sizeof(s[0]), comp), share(comp, job_span(j)),
		       report_ns(s[1], sizeof(s[1]), mpi), share(mpi, job_span(j)),
		       report_ns(s[2], sizeof(s[2]), idle), share(idle, job_span(j)));
		printf("%10s %10s\n", report_ns(s[3], sizeof(s[3]), waited),
		       report_ns(s[0], sizeof(s[0]), rank_caused(r)));
	}
}

static void print_waits(const struct job *j, const struct report_options *o)
{
	char s[2][32];
	size_t n = shown(o->top, j->nwaits);

	printf("\nwait states:");
	for (int k = 0; k < WAIT_KINDS; k++)
		printf(" %s %s (%" PRIu64 ")%s", wait_kind_names[k],
		       report_ns(s[0], sizeof(s[0]), j->wait_total[k]), j->wait_count[k],
		       k + 1 < WAIT_KINDS ? "," : "\n");
	if (n == 0)
		return;
	printf("%-14s %10s %8s %6s %6s  %s\n", "kind", "wait", "count", "rank", "cause",
	       "call path");
	for (size_t i = 0; i < n; i++) {
		const struct job_wait *w = &j->waits[i];
		const char *p = j->paths[w->path].name;

		printf("%-14s %10s %8" PRIu64 " %6" PRId64 " %6" PRId64 "  ",
		       wait_kind_names[w->kind], report_ns(s[0], sizeof(s[0]), w->ns), w->count,
		       w->rank, w->cause);
		report_clean(stdout, p, strlen(p));
		putchar('\n');
	}
}

static void print_paths(const struct job *j, const struct report_options *o, const size_t *pv)
{
	char s[5][32];
	size_t n = shown(o->top, j->npaths);

	printf("\ncall paths costing the most (wait at them + max - mean of their inclusive "
	       "time):\n");
	printf("%10s %10s %10s %10s %8s %9s  %s\n", "min", "mean", "max", "wait", "max rank",
	       "imbalance", "call path");
	for (size_t i = 0; i < n; i++) {
		const struct job_path *p = &j->paths[pv[i]];
		uint64_t w = 0, mean = j->nranks > 0 ? p->sum / j->nranks : 0;

		for (int k = 0; k < WAIT_KINDS; k++)
			w += p->waits[k];
		printf("%10s %10s %10s %10s %8" PRId64 " %9.3f  ",
		       report_ns(s[0], sizeof(s[0]), p->min), report_ns(s[1], sizeof(s[1]), mean),
		       report_ns(s[2], sizeof(s[2]), p->max), report_ns(s[3], sizeof(s[3]), w),
		       p->max_rank,
		       p->sum > 0 ? (double)p->max * (double)j->nranks / (double)p->sum : 1.0);
		report_clean(stdout, p->name, strlen(p->name));
		putchar('\n');
	}
}

const char *job_source_line(const struct job *j)
{
	if (j->source == FROM_PROFILES)
		return "only profiles given: wait states need traces; each rank's span is its "
		       "profile's, from its start";
	return "only a job profile given: wait states need traces, MPI time per rank the "
	       "ranks' profiles; the call paths are the job profile's";
}

int job_print_text(const struct job *j, const struct report_options *o)
{
	char s[32];
	size_t *pv = job_paths_by_cost(j), *rk = job_ranks_by_cost(j);

	if (pv == NULL || rk == NULL) {
		free(pv);
		free(rk);
		return -1;
	}
	printf("%zu file%s, %zu rank%s, %s on rank 0's clock (%zu file%s aligned by clock sync "
	       "measurements); %" PRIu64 " messages matched, %" PRIu64 " ends unmatched; %" PRIu64
	       " collective instances\n",
	       j->nfiles, j->nfiles == 1 ? "" : "s", j->nranks, j->nranks == 1 ? "" : "s",
	       report_ns(s, sizeof(s), job_span(j)), j->measured, j->measured == 1 ? "" : "s",
	       j->messages, j->unmatched_ends, j->instances);
	if (j->source != FROM_TRACES)
		printf("%s\n", job_source_line(j));
	if (j->profiles_left_out > 0)
		printf("%zu profile%s beside the traces left out: the traces answer\n",
		       j->profiles_left_out, j->profiles_left_out == 1 ? "" : "s");
	print_ranks(j, o, rk);
	print_waits(j, o);
	print_paths(j, o, pv);
	free(pv);
	free(rk);
	return fflush(stdout) == 0 && !ferror(stdout) ? 0 : -1;
}
