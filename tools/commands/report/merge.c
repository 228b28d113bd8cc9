/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace report`: the partials of the files, merged in file order (job_report.h).
 * The job's call paths are the union of the files', sorted by their text; the ranks
 * are the start markers' ranks, sorted (the segments of one rank are summed).
 */
#include "job_report.h"
#include "json.h"
#include "table.h"

#include <stdlib.h>
#include <string.h>

const char *const wait_kind_names[WAIT_KINDS] = {
	[WAIT_LATE_SENDER] = "late_sender",
	[WAIT_LATE_RECEIVER] = "late_receiver",
	[WAIT_COLLECTIVE] = "collective",
	[WAIT_BARRIER] = "barrier",
};

static int by_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct job_path *)a)->name, ((const struct job_path *)b)->name);
}

size_t job_rank_index(const struct job *j, int64_t rank)
{
	size_t lo = 0, hi = j->nranks;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (j->ranks[mid].rank < rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The ranks, sorted, and each one's span and MPI time. */
static int merge_ranks(struct job *j)
{
	int64_t *r = malloc((j->nparts + 1) * sizeof(*r));
	size_t n = 0;

	if (r == NULL)
		return -1;
	for (size_t i = 0; i < j->nparts; i++)
		if (!j->parts[i].failed)
			r[n++] = j->parts[i].rank;
	qsort(r, n, sizeof(*r), by_i64);
	j->ranks = calloc(n + 1, sizeof(*j->ranks));
	if (j->ranks == NULL) {
		free(r);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (j->nranks == 0 || j->ranks[j->nranks - 1].rank != r[i])
			j->ranks[j->nranks++].rank = r[i];
	free(r);
	for (size_t i = 0; i < j->nranks; i++)
		j->ranks[i].first = INT64_MAX, j->ranks[i].last = INT64_MIN;
	j->first = INT64_MAX;
	j->last = INT64_MIN;
	for (size_t i = 0; i < j->nparts; i++) {
		const struct rank_part *p = &j->parts[i];
		struct job_rank *k;

		if (p->failed || !p->has_time)
			continue;
		k = &j->ranks[job_rank_index(j, p->rank)];
		k->first = p->first < k->first ? p->first : k->first;
		k->last = p->last > k->last ? p->last : k->last;
		k->mpi_ns += p->mpi_ns;
		j->first = p->first < j->first ? p->first : j->first;
		j->last = p->last > j->last ? p->last : j->last;
		j->measured += p->measured;
	}
	if (j->first > j->last)
		j->first = j->last = 0;
	for (size_t i = 0; i < j->nranks; i++)
		if (j->ranks[i].first > j->ranks[i].last)
			j->ranks[i].first = j->ranks[i].last = j->first;
	return 0;
}

/* The union of the files' paths, sorted; each file's path ids become the job's. */
static int merge_paths(struct job *j, uint32_t **local)
{
	struct table t;
	size_t n = 0;
	int rc = -1;

	table_init(&t, sizeof(uint32_t));
	for (size_t i = 0; i < j->nparts; i++)
		for (size_t k = 0; k < j->parts[i].npaths; k++) {
			const char *s = j->parts[i].paths[k];
			bool created;

			if (table_put(&t, s, strlen(s), &created) == NULL)
				goto out;
			n += created;
		}
	j->paths = calloc(n + 1, sizeof(*j->paths));
	if (j->paths == NULL)
		goto out;
	for (uint32_t *v = table_first(&t); v != NULL; v = table_next(v)) {
		size_t len;
		const char *key = table_key(&t, v, &len);

		j->paths[j->npaths].name = text_dup(key, len);
		if (j->paths[j->npaths++].name == NULL)
			goto out;
	}
	qsort(j->paths, j->npaths, sizeof(*j->paths), by_name);
	for (size_t i = 0; i < j->npaths; i++)
		*(uint32_t *)table_get(&t, j->paths[i].name, strlen(j->paths[i].name)) =
			(uint32_t)i;
	for (size_t i = 0; i < j->nparts; i++) {
		struct rank_part *p = &j->parts[i];

		local[i] = malloc((p->npaths + 1) * sizeof(uint32_t));
		if (local[i] == NULL)
			goto out;
		for (size_t k = 0; k < p->npaths; k++)
			local[i][k] = *(uint32_t *)table_get(&t, p->paths[k], strlen(p->paths[k]));
		for (size_t k = 0; k < p->nmsgs; k++) {
			uint32_t f = p->msgs[k].path_flags;

			p->msgs[k].path_flags = local[i][f >> MSG_FLAGS_SHIFT] << MSG_FLAGS_SHIFT |
						(f & ((1u << MSG_FLAGS_SHIFT) - 1));
		}
		for (size_t k = 0; k < p->ncolls; k++)
			p->colls[k].path = local[i][p->colls[k].path];
	}
	rc = 0;
out:
	table_destroy(&t);
	return rc;
}

/* The parts by_rank_then_index() sorts indexes of: set before the qsort; the merge
 * runs on one thread. */
static const struct rank_part *sorted_parts;

static int by_rank_then_index(const void *x, const void *y)
{
	size_t a = *(const size_t *)x, b = *(const size_t *)y;
	int64_t ra = sorted_parts[a].rank, rb = sorted_parts[b].rank;

	if (ra != rb)
		return ra < rb ? -1 : 1;
	return (a > b) - (a < b);
}

/* Fold one rank's inclusive time of each of its paths into the paths' min, max, sum
 * (ranks come in ascending order: a tie keeps the lower rank as the max). */
static void fold_rank(struct job *j, int64_t rank, const size_t *order, size_t n, uint32_t **local,
		      uint64_t *v, size_t *folded)
{
	for (size_t k = 0; k < n; k++) {
		const struct rank_part *p = &j->parts[order[k]];

		for (size_t q = 0; q < p->npaths; q++) {
			v[local[order[k]][q]] += p->incl[q];
			j->paths[local[order[k]][q]].calls += p->calls[q];
		}
	}
	for (size_t k = 0; k < n; k++) {
		const struct rank_part *p = &j->parts[order[k]];

		for (size_t q = 0; q < p->npaths; q++) {
			uint32_t g = local[order[k]][q];
			struct job_path *jp = &j->paths[g];

			if (folded[g] == (size_t)rank + 1)
				continue; /* taken from an earlier segment of the rank */
			folded[g] = (size_t)rank + 1;
			jp->sum += v[g];
			jp->ranks++;
			jp->min = v[g] < jp->min ? v[g] : jp->min;
			if (jp->max_rank < 0 || v[g] > jp->max) {
				jp->max = v[g];
				jp->max_rank = rank;
			}
			v[g] = 0;
		}
	}
}

/* Per path, its inclusive time on each rank (segments summed): min, max, sum. */
static int merge_inclusive(struct job *j, uint32_t **local)
{
	uint64_t *v = calloc(j->npaths + 1, sizeof(*v));
	size_t *folded = calloc(j->npaths + 1, sizeof(*folded));
	size_t *order = malloc((j->nparts + 1) * sizeof(*order));
	size_t n = 0;

	if (v == NULL || order == NULL || folded == NULL) {
		free(v);
		free(folded);
		free(order);
		return -1;
	}
	for (size_t i = 0; i < j->npaths; i++)
		j->paths[i].min = UINT64_MAX, j->paths[i].max_rank = -1;
	/* the parts by rank, then file order */
	for (size_t i = 0; i < j->nparts; i++)
		if (!j->parts[i].failed)
			order[n++] = i;
	sorted_parts = j->parts;
	qsort(order, n, sizeof(*order), by_rank_then_index);
	for (size_t at = 0; at < n;) {
		size_t end = at;
		int64_t rank = j->parts[order[at]].rank;

		while (end < n && j->parts[order[end]].rank == rank)
			end++;
		fold_rank(j, rank, order + at, end - at, local, v, folded);
		at = end;
	}
	for (size_t i = 0; i < j->npaths; i++)
		if (j->paths[i].ranks < j->nranks || j->paths[i].min == UINT64_MAX)
			j->paths[i].min = 0;
	free(v);
	free(folded);
	free(order);
	return 0;
}

int job_merge(struct job *j)
{
	uint32_t **local = calloc(j->nparts + 1, sizeof(*local));
	int rc = -1;

	if (local == NULL)
		return -1;
	if (merge_ranks(j) == 0 && merge_paths(j, local) == 0 && merge_inclusive(j, local) == 0)
		rc = 0;
	for (size_t i = 0; i < j->nparts; i++)
		free(local[i]);
	free(local);
	return rc;
}

void job_free(struct job *j)
{
	for (size_t i = 0; i < j->nparts; i++)
		part_free(&j->parts[i]);
	for (size_t i = 0; i < j->npaths; i++)
		free(j->paths[i].name);
	free(j->paths);
	free(j->ranks);
	free(j->waits);
}
