/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace report --json`: one document, schema_version 1
 * (docs/commands/ringtrace-report.md, "JSON"). Every time is integer nanoseconds.
 */
#include "job_report.h"
#include "report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t shown(unsigned top, size_t n)
{
	return top == 0 || top > n ? n : top;
}

static int kinds(struct buf *b, bool *first, const char *key, const uint64_t v[WAIT_KINDS])
{
	bool f = true;

	if (report_jkey(b, first, key) || buf_putc(b, '{'))
		return -1;
	for (int k = 0; k < WAIT_KINDS; k++)
		if (report_ju64(b, &f, wait_kind_names[k], v[k]))
			return -1;
	return buf_putc(b, '}');
}

/* Permille of each heat bin the rank spent in MPI (threads summed, so it can pass
 * 1000). */
uint64_t heat_permille(const struct job *j, const struct job_rank *r, int k)
{
	int64_t span = j->last - j->first;
	int64_t a = (int64_t)((__int128)k * span / HEAT_BINS),
		b = (int64_t)((__int128)(k + 1) * span / HEAT_BINS);

	return b > a ? (uint64_t)((__int128)r->heat[k] * 1000 / (b - a)) : 0;
}

static int rank_json(struct buf *b, const struct job *j, const struct job_rank *r)
{
	uint64_t span, mpi, comp, idle, js = job_span(j);
	bool f = true;

	job_rank_times(j, r, &span, &mpi, &comp, &idle);
	return buf_putc(b, '{') || report_ji64(b, &f, "rank", r->rank) ||
	       report_ji64(b, &f, "first_ns", r->first - j->first) ||
	       report_ju64(b, &f, "span_ns", span) || report_ju64(b, &f, "compute_ns", comp) ||
	       report_ju64(b, &f, "mpi_ns", mpi) || report_ju64(b, &f, "idle_ns", idle) ||
	       report_jf64(b, &f, "compute_share", js > 0 ? (double)comp / (double)js : 0) ||
	       report_jf64(b, &f, "mpi_share", js > 0 ? (double)mpi / (double)js : 0) ||
	       report_jf64(b, &f, "idle_share", js > 0 ? (double)idle / (double)js : 0) ||
	       kinds(b, &f, "waited_ns", r->waited) || kinds(b, &f, "caused_ns", r->caused) ||
	       buf_putc(b, '}');
}

static int ranks_json(struct buf *b, bool *first, const struct job *j)
{
	if (report_jkey(b, first, "ranks") || buf_putc(b, '['))
		return -1;
	for (size_t i = 0; i < j->nranks; i++)
		if ((i > 0 && buf_putc(b, ',')) || rank_json(b, j, &j->ranks[i]))
			return -1;
	return buf_putc(b, ']');
}

static int path_json(struct buf *b, const struct job *j, const struct job_path *p)
{
	bool f = true;
	double mean = j->nranks > 0 ? (double)p->sum / (double)j->nranks : 0;

	if (buf_putc(b, '{') || report_jkey(b, &f, "path") ||
	    report_jstr(b, p->name, strlen(p->name)) || report_ju64(b, &f, "calls", p->calls) ||
	    report_ju64(b, &f, "ranks", p->ranks) || report_ju64(b, &f, "sum_ns", p->sum) ||
	    report_ju64(b, &f, "min_ns", p->min) || report_jf64(b, &f, "mean_ns", mean) ||
	    report_ju64(b, &f, "max_ns", p->max) || report_ji64(b, &f, "max_rank", p->max_rank) ||
	    report_jf64(b, &f, "imbalance",
			p->sum > 0 ? (double)p->max * (double)j->nranks / (double)p->sum : 1.0) ||
	    report_ju64(b, &f, "cost_ns", path_cost(p, j->nranks)) ||
	    kinds(b, &f, "wait_ns", p->waits) || kinds(b, &f, "wait_count", p->wait_count))
		return -1;
	return buf_putc(b, '}');
}

static int paths_json(struct buf *b, bool *first, const struct job *j, const size_t *pv, size_t n)
{
	if (report_jkey(b, first, "paths") || buf_putc(b, '['))
		return -1;
	for (size_t i = 0; i < n; i++)
		if ((i > 0 && buf_putc(b, ',')) || path_json(b, j, &j->paths[pv[i]]))
			return -1;
	return buf_putc(b, ']');
}

static int waits_json(struct buf *b, bool *first, const struct job *j, size_t n)
{
	bool f = true;

	if (report_jkey(b, first, "wait_totals") || buf_putc(b, '{'))
		return -1;
	for (int k = 0; k < WAIT_KINDS; k++) {
		bool g = true;

		if (report_jkey(b, &f, wait_kind_names[k]) || buf_putc(b, '{') ||
		    report_ju64(b, &g, "ns", j->wait_total[k]) ||
		    report_ju64(b, &g, "count", j->wait_count[k]) || buf_putc(b, '}'))
			return -1;
	}
	if (buf_putc(b, '}') || report_jkey(b, first, "waits") || buf_putc(b, '['))
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct job_wait *w = &j->waits[i];
		const char *p = j->paths[w->path].name;

		f = true;
		if ((i > 0 && buf_putc(b, ',')) || buf_putc(b, '{') || report_jkey(b, &f, "kind") ||
		    report_jstr(b, wait_kind_names[w->kind], strlen(wait_kind_names[w->kind])) ||
		    report_jkey(b, &f, "path") || report_jstr(b, p, strlen(p)) ||
		    report_ji64(b, &f, "rank", w->rank) ||
		    report_ji64(b, &f, "cause_rank", w->cause) || report_ju64(b, &f, "ns", w->ns) ||
		    report_ju64(b, &f, "count", w->count) || buf_putc(b, '}'))
			return -1;
	}
	return buf_putc(b, ']');
}

static int heat_json(struct buf *b, bool *first, const struct job *j)
{
	bool f = true;

	if (report_jkey(b, first, "heatmap") || buf_putc(b, '{') ||
	    report_ju64(b, &f, "bins", HEAT_BINS) ||
	    report_jf64(b, &f, "bin_ns", (double)job_span(j) / HEAT_BINS) ||
	    report_jkey(b, &f, "mpi_permille") || buf_putc(b, '['))
		return -1;
	for (size_t i = 0; i < j->nranks; i++) {
		if ((i > 0 && buf_putc(b, ',')) || buf_putc(b, '['))
			return -1;
		for (int k = 0; k < HEAT_BINS; k++)
			if ((k > 0 && buf_putc(b, ',')) ||
			    buf_put_u64(b, heat_permille(j, &j->ranks[i], k)))
				return -1;
		if (buf_putc(b, ']'))
			return -1;
	}
	return buf_puts(b, "]}");
}

static int top_ranks_json(struct buf *b, bool *first, const struct job *j, const size_t *rk,
			  size_t n)
{
	if (report_jkey(b, first, "top_ranks") || buf_putc(b, '['))
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct job_rank *r = &j->ranks[rk[i]];
		bool f = true;

		if ((i > 0 && buf_putc(b, ',')) || buf_putc(b, '{') ||
		    report_ji64(b, &f, "rank", r->rank) ||
		    report_ju64(b, &f, "caused_ns", rank_caused(r)) ||
		    report_ju64(b, &f, "mpi_ns", r->mpi_ns) || buf_putc(b, '}'))
			return -1;
	}
	return buf_putc(b, ']');
}

/* "source", "profiles_left_out" and, from profiles, "note". */
static int source_json(struct buf *b, bool *f, const struct job *j)
{
	static const char *const names[] = {"traces", "profiles", "job_profile"};
	const char *s = names[j->source];

	if (report_jkey(b, f, "source") || report_jstr(b, s, strlen(s)) ||
	    report_ju64(b, f, "profiles_left_out", j->profiles_left_out))
		return -1;
	if (j->source == FROM_TRACES)
		return 0;
	s = job_source_line(j);
	return report_jkey(b, f, "note") || report_jstr(b, s, strlen(s)) ? -1 : 0;
}

int job_json(struct buf *b, const struct job *j, const struct report_options *o)
{
	size_t *pv = job_paths_by_cost(j), *rk = job_ranks_by_cost(j);
	bool f = true;
	int rc = -1;

	if (pv == NULL || rk == NULL)
		goto out;
	if (buf_putc(b, '{') || report_ju64(b, &f, "schema_version", 1) ||
	    report_ju64(b, &f, "files", j->nfiles) ||
	    report_ju64(b, &f, "measured_files", j->measured) ||
	    report_ji64(b, &f, "start_ns", j->first) ||
	    report_ju64(b, &f, "span_ns", job_span(j)) ||
	    report_ju64(b, &f, "messages", j->messages) ||
	    report_ju64(b, &f, "unmatched_message_ends", j->unmatched_ends) ||
	    report_ju64(b, &f, "collective_instances", j->instances) ||
	    report_ju64(b, &f, "flows_outside_calls", j->flows_outside_calls) ||
	    report_ju64(b, &f, "approximate_claims", j->approx) || source_json(b, &f, j) ||
	    ranks_json(b, &f, j) || waits_json(b, &f, j, shown(o->top, j->nwaits)) ||
	    paths_json(b, &f, j, pv, shown(o->top, j->npaths)) ||
	    top_ranks_json(b, &f, j, rk, shown(o->top, j->nranks)) || heat_json(b, &f, j) ||
	    buf_putc(b, '}'))
		goto out;
	rc = 0;
out:
	free(pv);
	free(rk);
	return rc;
}

int job_print_json(const struct job *j, const struct report_options *o)
{
	struct buf b = {0};
	int rc = job_json(&b, j, o);

	if (rc == 0 &&
	    (fwrite(b.p, 1, b.len, stdout) != b.len || putchar('\n') == EOF || fflush(stdout) != 0))
		rc = -1;
	buf_free(&b);
	return rc;
}
