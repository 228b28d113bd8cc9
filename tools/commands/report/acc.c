/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace report`: the job so far (struct job_acc, job_report.h). A file's partial
 * is added to it, and accumulators of consecutive blocks of files are merged, always
 * in file order: call paths get ids in order of appearance (sorted by name only at the
 * finish), ranks and waits are summed, and the message endpoints and collective
 * entries go to acc_pend.c, which pairs the messages as soon as both ends are in and
 * keeps each collective instance's last entry (the first reading, job_report.h).
 */
#include "job_report.h"
#include "json.h"

#include <stdlib.h>
#include <string.h>

#define GROW(p, cap, need, first) array_grow((p), &(cap), (need), sizeof(*(p)), (first))

int acc_init(struct job_acc *a)
{
	memset(a, 0, sizeof(*a));
	table_init(&a->paths, sizeof(uint32_t));
	table_init(&a->ranks, sizeof(struct rank_acc));
	table_init(&a->waits, sizeof(struct job_wait));
	table_init(&a->pending, sizeof(struct pend_q));
	table_init(&a->groups, sizeof(struct late_group));
	table_init(&a->insts, sizeof(struct coll_last));
	return 0;
}

void acc_destroy(struct job_acc *a)
{
	for (int k = 0; k < 2; k++)
		if (a->side[k] != NULL) {
			acc_destroy(a->side[k]);
			free(a->side[k]);
		}
	free(a->jp);
	for (struct rank_acc *r = table_first(&a->ranks); r != NULL; r = table_next(r))
		free(r->pt);
	for (struct pend_q *q = table_first(&a->pending); q != NULL; q = table_next(q))
		free(q->v);
	table_destroy(&a->paths);
	table_destroy(&a->ranks);
	table_destroy(&a->waits);
	table_destroy(&a->pending);
	table_destroy(&a->groups);
	table_destroy(&a->insts);
	free(a->names);
	memset(a, 0, sizeof(*a));
}

uint64_t capped_wait(int64_t late, int64_t dur)
{
	if (late <= 0 || dur <= 0)
		return 0;
	return (uint64_t)(late < dur ? late : dur);
}

uint32_t acc_path_id(struct job_acc *a, const char *name)
{
	bool created;
	uint32_t *id = table_put(&a->paths, name, strlen(name) + 1, &created);

	if (id == NULL)
		return UINT32_MAX;
	if (created) {
		const char **n = GROW(a->names, a->names_cap, a->nnames + 1, 64);

		if (n == NULL || a->nnames >= UINT32_MAX) {
			table_remove(&a->paths, id);
			return UINT32_MAX;
		}
		a->names = n;
		*id = (uint32_t)a->nnames;
		a->names[a->nnames++] = table_key(&a->paths, id, &(size_t){0});
	}
	return *id;
}

struct rank_acc *acc_rank(struct job_acc *a, int64_t rank, bool *created)
{
	return table_put(&a->ranks, &rank, sizeof(rank), created);
}

int acc_add_wait(struct job_acc *a, int kind, uint32_t path, int64_t rank, int64_t cause,
		 uint64_t ns, uint64_t count)
{
	struct wait_key key = {kind, path, rank, cause};
	struct job_wait *w = table_put(&a->waits, &key, sizeof(key), NULL);

	if (w == NULL)
		return -1;
	w->kind = kind;
	w->path = path;
	w->rank = rank;
	w->cause = cause;
	w->ns += ns;
	w->count += count;
	return 0;
}

static int by_path(const void *x, const void *y)
{
	uint32_t a = ((const struct path_time *)x)->path, b = ((const struct path_time *)y)->path;

	return (a > b) - (a < b);
}

/* Fold n path times (distinct ids, mapped through map, NULL: as they are) into a
 * rank's, kept sorted by id, each once: a rank of many segments holds each path once. */
static int rank_times(struct rank_acc *r, const struct path_time *pt, size_t n, const uint32_t *map)
{
	struct path_time *add, *v;
	size_t i = 0, k = 0, out = 0;

	if (n == 0)
		return 0;
	add = malloc(n * sizeof(*add));
	v = add != NULL ? malloc((r->npt + n) * sizeof(*v)) : NULL;
	if (v == NULL) {
		free(add);
		return -1;
	}
	for (size_t q = 0; q < n; q++) {
		add[q] = pt[q];
		add[q].path = map != NULL ? map[pt[q].path] : pt[q].path;
	}
	qsort(add, n, sizeof(*add), by_path);
	while (i < r->npt || k < n) {
		if (k == n || (i < r->npt && r->pt[i].path < add[k].path)) {
			v[out++] = r->pt[i++];
		} else if (i == r->npt || add[k].path < r->pt[i].path) {
			v[out++] = add[k++];
		} else {
			v[out] = r->pt[i++];
			v[out].incl += add[k].incl;
			v[out++].calls += add[k++].calls;
		}
	}
	free(add);
	free(r->pt);
	r->pt = v;
	r->npt = out;
	r->cap = out;
	return 0;
}

/* Fold a rank's span and MPI time into r. */
static void rank_span(struct rank_acc *r, bool has_time, int64_t first, int64_t last, uint64_t mpi)
{
	if (!has_time)
		return;
	r->first = r->has_time && r->first < first ? r->first : first;
	r->last = r->has_time && r->last > last ? r->last : last;
	r->has_time = true;
	r->mpi_ns += mpi;
}

/* The file's endpoints, in file order; a receiving call of several endpoints (as
 * analyze used to group them: consecutive receive ends of the same call) is a group. */
static int add_msgs(struct job_acc *a, const struct rank_part *p, const uint32_t *map)
{
	uint32_t groups = 0;

	for (size_t i = 0; i < p->nmsgs;) {
		const struct msg_end *m = &p->msgs[i];
		size_t end = i + 1;

		if (m->path_flags & MSG_RECV)
			while (end < p->nmsgs && (p->msgs[end].path_flags & MSG_SAME_CALL) &&
			       (p->msgs[end].path_flags & MSG_RECV))
				end++;
		uint32_t group = end - i > 1 ? groups++ : NO_GROUP;
		if (group != NO_GROUP) {
			struct late_group *g = acc_group(a, (uint32_t)p->index, group, NULL);

			if (g == NULL)
				return -1;
			g->left = (uint32_t)(end - i);
			/* ranks and path known in every block's bytes until the best is set */
			g->rank = g->cause = p->rank;
			g->path = map[m->path_flags >> MSG_FLAGS_SHIFT];
		}
		for (size_t k = i; k < end; k++) {
			uint32_t f = p->msgs[k].path_flags;
			struct pend_end e = {
				.start = p->msgs[k].start,
				.end = p->msgs[k].end,
				.rank = p->rank,
				.path = map[f >> MSG_FLAGS_SHIFT],
				.flags = f & ((1u << MSG_FLAGS_SHIFT) - 1),
				.file = (uint32_t)p->index,
				.group = group,
				.pos = (uint32_t)(k - i),
			};

			if (acc_offer_end(a, p->msgs[k].id, &e))
				return -1;
		}
		i = end;
	}
	return 0;
}

size_t acc_readable(const struct job_acc *a)
{
	size_t n = a->ok;

	for (int k = 0; k < 2; k++)
		n += a->side[k] != NULL ? a->side[k]->ok : 0;
	return n;
}

/* The side of the process profiles (0) or the job profiles (1), made when absent. */
static struct job_acc *acc_side(struct job_acc *a, int k)
{
	if (a->side[k] == NULL) {
		a->side[k] = malloc(sizeof(*a->side[k]));
		if (a->side[k] == NULL || acc_init(a->side[k])) {
			free(a->side[k]);
			a->side[k] = NULL;
		}
	}
	return a->side[k];
}

static int add_jp(struct job_acc *a, const struct job_path_r *p, const uint32_t *map)
{
	struct job_path_r *v = GROW(a->jp, a->jp_cap, a->njp + 1, 16);

	if (v == NULL)
		return -1;
	a->jp = v;
	a->jp[a->njp] = *p;
	if (map != NULL)
		a->jp[a->njp].path = map[p->path];
	a->njp++;
	return 0;
}

/* A job profile: its ranks' spans and its paths' "r"; only the first one's. */
static int add_job_profile(struct job_acc *a, const struct rank_part *p)
{
	a->files++;
	if (a->ok++ > 0)
		return 0; /* left out: said by the finish */
	for (size_t i = 0; i < p->njr; i++) {
		struct rank_acc *r = acc_rank(a, p->jr[i].rank, NULL);

		if (r == NULL)
			return -1;
		rank_span(r, true, 0, p->jr[i].span, 0);
	}
	for (size_t k = 0; k < p->npaths; k++) {
		uint32_t id = acc_path_id(a, p->paths[k]);
		struct job_path_r jp = {id, p->calls[k], p->incl[k], p->jp[k]};

		if (id == UINT32_MAX || add_jp(a, &jp, NULL))
			return -1;
	}
	return 0;
}

int acc_add_part(struct job_acc *a, const struct rank_part *p)
{
	uint32_t *map;
	struct path_time *pt;
	struct rank_acc *r;
	int rc = -1;

	if (!p->failed && p->profile != PART_TRACE) {
		struct job_acc *s = acc_side(a, p->profile == PART_PROFILE ? 0 : 1);

		if (s == NULL)
			return -1;
		a->files++;
		if (p->profile == PART_JOB_PROFILE)
			return add_job_profile(s, p);
		a = s; /* a process profile: as a trace without messages, in its side */
	}
	a->files++;
	if (p->failed)
		return 0;
	a->ok++;
	a->stray += p->unmatched_flows;
	a->approx += p->approx;
	a->measured += p->has_time && p->measured;
	r = acc_rank(a, p->rank, NULL);
	map = malloc((p->npaths + 1) * sizeof(*map));
	pt = malloc((p->npaths + 1) * sizeof(*pt));
	if (r == NULL || map == NULL || pt == NULL)
		goto out;
	for (size_t k = 0; k < p->npaths; k++) {
		map[k] = acc_path_id(a, p->paths[k]);
		if (map[k] == UINT32_MAX)
			goto out;
		pt[k] = (struct path_time){map[k], p->incl[k], p->calls[k]};
	}
	rank_span(r, p->has_time, p->first, p->last, p->mpi_ns);
	if (rank_times(r, pt, p->npaths, NULL) || add_msgs(a, p, map))
		goto out;
	for (size_t k = 0; k < p->ncolls; k++) {
		const struct coll_entry *c = &p->colls[k];
		/* the others' entries make the instance; only these count */
		struct coll_last e = {c->start, coll_counts(c, p->rank) ? p->rank : NO_ENTRY};

		if (acc_offer_entry(a, c->comm, c->seq, &e))
			goto out;
	}
	rc = 0;
out:
	free(map);
	free(pt);
	return rc;
}

/* from's paths in into: map[from id] = into id. */
static uint32_t *merge_paths(struct job_acc *into, const struct job_acc *from)
{
	uint32_t *map = malloc((from->nnames + 1) * sizeof(*map));

	if (map == NULL)
		return NULL;
	for (size_t i = 0; i < from->nnames; i++) {
		map[i] = acc_path_id(into, from->names[i]);
		if (map[i] == UINT32_MAX) {
			free(map);
			return NULL;
		}
	}
	return map;
}

static int merge_ranks_waits(struct job_acc *into, const struct job_acc *from, const uint32_t *map)
{
	for (const struct rank_acc *f = table_first(&from->ranks); f != NULL; f = table_next(f)) {
		const int64_t *rank = table_key(&from->ranks, f, &(size_t){0});
		int64_t key;
		struct rank_acc *r;

		memcpy(&key, rank, sizeof(key));
		r = acc_rank(into, key, NULL);
		if (r == NULL)
			return -1;
		rank_span(r, f->has_time, f->first, f->last, f->mpi_ns);
		if (rank_times(r, f->pt, f->npt, map))
			return -1;
		for (int k = 0; k < HEAT_BINS; k++)
			r->heat[k] += f->heat[k];
	}
	for (const struct job_wait *w = table_first(&from->waits); w != NULL; w = table_next(w))
		if (acc_add_wait(into, w->kind, map[w->path], w->rank, w->cause, w->ns, w->count))
			return -1;
	return 0;
}

/* from's groups, then its pending endpoints, offered in file order, and its
 * collective instances' last entries. */
static int merge_pending(struct job_acc *into, const struct job_acc *from, const uint32_t *map)
{
	for (const struct late_group *g = table_first(&from->groups); g != NULL;
	     g = table_next(g)) {
		uint32_t key[2];
		struct late_group *t;

		memcpy(key, table_key(&from->groups, g, &(size_t){0}), sizeof(key));
		t = acc_group(into, key[0], key[1], NULL);
		if (t == NULL)
			return -1;
		*t = *g;
		t->path = map[g->path];
	}
	for (const struct pend_q *q = table_first(&from->pending); q != NULL; q = table_next(q)) {
		uint64_t id;

		memcpy(&id, table_key(&from->pending, q, &(size_t){0}), sizeof(id));
		for (uint32_t i = 0; i < q->n; i++) {
			struct pend_end e = q->cap == 0 ? q->one : q->v[i];

			e.path = map[e.path];
			if (acc_offer_end(into, id, &e))
				return -1;
		}
	}
	for (const struct coll_last *c = table_first(&from->insts); c != NULL; c = table_next(c)) {
		uint64_t key[2];

		memcpy(key, table_key(&from->insts, c, &(size_t){0}), sizeof(key));
		if (acc_offer_entry(into, key[0], key[1], c))
			return -1;
	}
	return 0;
}

static int merge_sides(struct job_acc *into, const struct job_acc *from)
{
	for (int k = 0; k < 2; k++) {
		struct job_acc *s;

		if (from->side[k] == NULL)
			continue;
		s = acc_side(into, k);
		if (s == NULL)
			return -1;
		if (k == 1 && s->ok > 0) {
			/* the first job profile is taken; the later ones are counted */
			s->files += from->side[k]->files;
			s->ok += from->side[k]->ok;
		} else if (acc_merge(s, from->side[k])) {
			return -1;
		}
	}
	return 0;
}

int acc_merge(struct job_acc *into, const struct job_acc *from)
{
	uint32_t *map = merge_paths(into, from);
	int rc = -1;

	if (map == NULL || merge_sides(into, from)) {
		free(map);
		return -1;
	}
	for (size_t i = 0; i < from->njp; i++)
		if (add_jp(into, &from->jp[i], map)) {
			free(map);
			return -1;
		}
	into->files += from->files;
	into->ok += from->ok;
	into->measured += from->measured;
	into->stray += from->stray;
	into->approx += from->approx;
	into->messages += from->messages;
	into->replayed += from->replayed;
	if (merge_ranks_waits(into, from, map) == 0 && merge_pending(into, from, map) == 0)
		rc = 0;
	free(map);
	return rc;
}
