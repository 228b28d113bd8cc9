/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace report`: the job from everything merged (job_report.h). What still waits
 * is resolved; the ranks are sorted, with their heat rows; the call paths sorted by
 * their text, with per path the inclusive time on each rank (its files summed): min,
 * mean, max; the waits by (kind, path, rank, cause) summed into the ranks, paths and
 * totals.
 */
#include "job_report.h"
#include "json.h"

#include <stdlib.h>
#include <string.h>

const char *const wait_kind_names[WAIT_KINDS] = {
	[WAIT_LATE_SENDER] = "late_sender",	  [WAIT_LATE_RECEIVER] = "late_receiver",
	[WAIT_COLLECTIVE] = "collective",	  [WAIT_BARRIER] = "barrier",
	[WAIT_LATE_BROADCAST] = "late_broadcast", [WAIT_EARLY_REDUCE] = "early_reduce",
};

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

/* The index of a rank that is there, or SIZE_MAX. */
static size_t rank_at(const struct job *j, int64_t rank)
{
	size_t i = job_rank_index(j, rank);

	return i < j->nranks && j->ranks[i].rank == rank ? i : SIZE_MAX;
}

struct rank_ref {
	int64_t rank;
	struct rank_acc *r;
};

static int by_rank(const void *x, const void *y)
{
	int64_t a = ((const struct rank_ref *)x)->rank, b = ((const struct rank_ref *)y)->rank;

	return (a > b) - (a < b);
}

/* The ranks, sorted, with their spans; order[i] is rank i's accumulator. */
static int finish_ranks(struct job_acc *a, struct job *j, struct rank_acc ***order)
{
	struct rank_ref *v = malloc((a->ranks.count + 1) * sizeof(*v));
	struct rank_acc **o = malloc((a->ranks.count + 1) * sizeof(*o));
	size_t n = 0;

	j->ranks = calloc(a->ranks.count + 1, sizeof(*j->ranks));
	if (v == NULL || o == NULL || j->ranks == NULL) {
		free(v);
		free(o);
		return -1;
	}
	for (struct rank_acc *r = table_first(&a->ranks); r != NULL; r = table_next(r), n++) {
		memcpy(&v[n].rank, table_key(&a->ranks, r, &(size_t){0}), sizeof(v[n].rank));
		v[n].r = r;
	}
	qsort(v, n, sizeof(*v), by_rank);
	j->nranks = n;
	j->first = INT64_MAX, j->last = INT64_MIN;
	for (size_t i = 0; i < n; i++) {
		const struct rank_acc *r = v[i].r;

		o[i] = v[i].r;
		j->ranks[i].rank = v[i].rank;
		j->ranks[i].mpi_ns = r->mpi_ns;
		memcpy(j->ranks[i].heat, r->heat, sizeof(r->heat));
		if (r->has_time) {
			j->ranks[i].first = r->first, j->ranks[i].last = r->last;
			j->first = r->first < j->first ? r->first : j->first;
			j->last = r->last > j->last ? r->last : j->last;
		}
	}
	if (j->first > j->last)
		j->first = j->last = 0;
	for (size_t i = 0; i < n; i++)
		if (!o[i]->has_time)
			j->ranks[i].first = j->ranks[i].last = j->first;
	free(v);
	*order = o;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct job_path *)a)->name, ((const struct job_path *)b)->name);
}

/* The paths sorted by text; map[acc id] = the job's index. */
static int finish_paths(struct job_acc *a, struct job *j, uint32_t **map)
{
	j->paths = calloc(a->nnames + 1, sizeof(*j->paths));
	*map = malloc((a->nnames + 1) * sizeof(**map));
	if (j->paths == NULL || *map == NULL)
		return -1;
	for (size_t i = 0; i < a->nnames; i++) {
		j->paths[i].name = strdup(a->names[i]);
		if (j->paths[i].name == NULL)
			return -1;
		j->npaths++;
	}
	qsort(j->paths, j->npaths, sizeof(*j->paths), by_name);
	for (size_t i = 0; i < j->npaths; i++) {
		uint32_t *id = table_get(&a->paths, j->paths[i].name, strlen(j->paths[i].name) + 1);

		(*map)[*id] = (uint32_t)i;
	}
	return 0;
}

/* Per path, its inclusive time on each rank (files summed): min, max, sum; ranks in
 * ascending order, so a tie keeps the lower rank as the max. */
static int finish_inclusive(struct job *j, struct rank_acc **order, const uint32_t *map)
{
	uint64_t *v = calloc(j->npaths + 1, sizeof(*v));
	size_t *folded = calloc(j->npaths + 1, sizeof(*folded));

	if (v == NULL || folded == NULL) {
		free(v);
		free(folded);
		return -1;
	}
	for (size_t i = 0; i < j->npaths; i++)
		j->paths[i].min = UINT64_MAX, j->paths[i].max_rank = -1;
	for (size_t i = 0; i < j->nranks; i++) {
		const struct rank_acc *r = order[i];
		int64_t rank = j->ranks[i].rank;

		for (size_t k = 0; k < r->npt; k++) {
			v[map[r->pt[k].path]] += r->pt[k].incl;
			j->paths[map[r->pt[k].path]].calls += r->pt[k].calls;
		}
		for (size_t k = 0; k < r->npt; k++) {
			uint32_t g = map[r->pt[k].path];
			struct job_path *p = &j->paths[g];

			if (folded[g] == i + 1)
				continue; /* taken from an earlier file of the rank */
			folded[g] = i + 1;
			p->sum += v[g];
			p->ranks++;
			p->min = v[g] < p->min ? v[g] : p->min;
			if (p->max_rank < 0 || v[g] > p->max) {
				p->max = v[g];
				p->max_rank = rank;
			}
			v[g] = 0;
		}
	}
	for (size_t i = 0; i < j->npaths; i++)
		if (j->paths[i].ranks < j->nranks || j->paths[i].min == UINT64_MAX)
			j->paths[i].min = 0;
	free(v);
	free(folded);
	return 0;
}

static int by_wait(const void *x, const void *y)
{
	const struct job_wait *a = x, *b = y;

	if (a->ns != b->ns)
		return a->ns < b->ns ? 1 : -1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->path != b->path)
		return a->path < b->path ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return (a->cause > b->cause) - (a->cause < b->cause);
}

static int finish_waits(struct job_acc *a, struct job *j, const uint32_t *map)
{
	j->waits = malloc((a->waits.count + 1) * sizeof(*j->waits));
	if (j->waits == NULL)
		return -1;
	for (const struct job_wait *w = table_first(&a->waits); w != NULL; w = table_next(w)) {
		struct job_wait *o = &j->waits[j->nwaits];
		size_t r = rank_at(j, w->rank), c = rank_at(j, w->cause);

		if (r == SIZE_MAX || c == SIZE_MAX || w->kind < 0 || w->kind >= WAIT_KINDS ||
		    w->path >= a->nnames)
			continue; /* refused when unpacked: never here */
		*o = *w;
		o->path = map[w->path];
		j->wait_total[o->kind] += o->ns;
		j->wait_count[o->kind] += o->count;
		j->paths[o->path].waits[o->kind] += o->ns;
		j->paths[o->path].wait_count[o->kind] += o->count;
		j->ranks[r].waited[o->kind] += o->ns;
		j->ranks[c].caused[o->kind] += o->ns;
		j->nwaits++;
	}
	qsort(j->waits, j->nwaits, sizeof(*j->waits), by_wait);
	return 0;
}

/* A job profile's paths: their "r" as they are. */
static void finish_job_profile(const struct job_acc *a, struct job *j, const uint32_t *map)
{
	for (size_t i = 0; i < a->njp; i++) {
		const struct job_path_r *p = &a->jp[i];
		struct job_path *g = &j->paths[map[p->path]];

		g->calls = p->calls;
		g->sum = p->sum;
		g->min = p->r.min;
		g->max = p->r.max;
		g->max_rank = p->r.max_rank;
		g->ranks = p->r.with;
	}
}

/* No trace read: the process profiles, else the first job profile. */
static int finish_from_profiles(struct job_acc *a, struct job *j)
{
	int k = a->side[0] != NULL && a->side[0]->ok > 0 ? 0 : 1;
	size_t files = a->files;
	size_t left = k == 0 ? (a->side[1] != NULL ? a->side[1]->ok : 0) : a->side[1]->ok - 1;
	int rc = acc_finish(a->side[k], j);

	j->nfiles = files;
	j->source = k == 0 ? FROM_PROFILES : FROM_JOB_PROFILE;
	j->profiles_left_out = left;
	return rc;
}

int acc_finish(struct job_acc *a, struct job *j)
{
	struct rank_acc **order = NULL;
	uint32_t *map = NULL;
	int rc = -1;

	if (a->ok == 0 && acc_readable(a) > 0)
		return finish_from_profiles(a, j);
	memset(j, 0, sizeof(*j));
	for (int k = 0; k < 2; k++)
		j->profiles_left_out += a->side[k] != NULL ? a->side[k]->ok : 0;
	j->nfiles = a->files;
	j->measured = a->measured;
	j->flows_outside_calls = a->stray;
	j->approx = a->approx;
	if (acc_resolve_rest(a))
		return -1;
	j->messages = a->messages;
	j->instances = a->insts.count;
	for (const struct pend_q *q = table_first(&a->pending); q != NULL; q = table_next(q))
		j->unmatched_ends += q->n;
	if (finish_ranks(a, j, &order) || finish_paths(a, j, &map) ||
	    finish_inclusive(j, order, map) || finish_waits(a, j, map))
		goto out;
	finish_job_profile(a, j, map);
	rc = 0;
out:
	free(order);
	free(map);
	return rc;
}

void job_free(struct job *j)
{
	for (size_t i = 0; i < j->npaths; i++)
		free(j->paths[i].name);
	free(j->paths);
	free(j->ranks);
	free(j->waits);
}
