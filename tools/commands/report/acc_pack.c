/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace report`: the job so far as bytes and back (job_report.h), for the MPI
 * step: the same build on every rank, so numbers go in native byte order, each as 8
 * bytes. The layout: a magic, the counters, then each list as a count and its items:
 * the call paths' names, the ranks (with their path times and heat rows), the waits,
 * the late-sender groups, the pending endpoints (per flow id), the collective
 * instances' last entries, a job profile's paths, then the profiles' accumulators
 * (each flagged, in the same layout). Every count, length, time, kind and
 * reference to a path or a rank is checked when read: malformed bytes give -2.
 */
#include "job_report.h"
#include "json.h"

#include <stdlib.h>
#include <string.h>

#define PACK_MAGIC 0x32706572727472ull /* "rtrrep2" */
/* Times are refused beyond this, so that no difference of two overflows. */
#define TIME_MAX (INT64_MAX / 4)

static int put(struct buf *b, uint64_t v)
{
	return buf_put(b, &v, sizeof(v));
}

static int put_ranks(struct buf *b, const struct job_acc *a)
{
	if (put(b, a->ranks.count))
		return -1;
	for (const struct rank_acc *r = table_first(&a->ranks); r != NULL; r = table_next(r)) {
		int64_t rank;

		memcpy(&rank, table_key(&a->ranks, r, &(size_t){0}), sizeof(rank));
		if (put(b, (uint64_t)rank) || put(b, r->has_time) || put(b, (uint64_t)r->first) ||
		    put(b, (uint64_t)r->last) || put(b, r->mpi_ns) || put(b, r->npt))
			return -1;
		for (size_t k = 0; k < r->npt; k++)
			if (put(b, r->pt[k].path) || put(b, r->pt[k].incl) ||
			    put(b, r->pt[k].calls))
				return -1;
		if (buf_put(b, r->heat, sizeof(r->heat)))
			return -1;
	}
	return 0;
}

static int put_waits(struct buf *b, const struct job_acc *a)
{
	if (put(b, a->waits.count))
		return -1;
	for (const struct job_wait *w = table_first(&a->waits); w != NULL; w = table_next(w))
		if (put(b, (uint64_t)w->kind) || put(b, w->path) || put(b, (uint64_t)w->rank) ||
		    put(b, (uint64_t)w->cause) || put(b, w->ns) || put(b, w->count))
			return -1;
	return 0;
}

static int put_pending(struct buf *b, const struct job_acc *a)
{
	if (put(b, a->groups.count))
		return -1;
	for (const struct late_group *g = table_first(&a->groups); g != NULL; g = table_next(g)) {
		uint32_t key[2];

		memcpy(key, table_key(&a->groups, g, &(size_t){0}), sizeof(key));
		if (put(b, key[0]) || put(b, key[1]) || put(b, g->left) || put(b, g->best_pos) ||
		    put(b, g->has_best) || put(b, g->best_late) || put(b, (uint64_t)g->rank) ||
		    put(b, (uint64_t)g->cause) || put(b, g->path))
			return -1;
	}
	if (put(b, a->pending.count))
		return -1;
	for (const struct pend_q *q = table_first(&a->pending); q != NULL; q = table_next(q)) {
		if (buf_put(b, table_key(&a->pending, q, &(size_t){0}), sizeof(uint64_t)) ||
		    put(b, q->n))
			return -1;
		for (uint32_t i = 0; i < q->n; i++) {
			const struct pend_end *e = q->cap == 0 ? &q->one : &q->v[i];

			if (put(b, (uint64_t)e->start) || put(b, (uint64_t)e->end) ||
			    put(b, (uint64_t)e->rank) || put(b, e->path) || put(b, e->flags) ||
			    put(b, e->file) || put(b, e->group) || put(b, e->pos))
				return -1;
		}
	}
	return insts_pack(a, b);
}

static int put_profiles(struct buf *b, const struct job_acc *a)
{
	if (put(b, a->njp))
		return -1;
	for (size_t i = 0; i < a->njp; i++) {
		const struct job_path_r *p = &a->jp[i];

		if (put(b, p->path) || put(b, p->calls) || put(b, p->sum) || put(b, p->r.min) ||
		    put(b, p->r.max) || put(b, (uint64_t)p->r.max_rank) || put(b, p->r.with))
			return -1;
	}
	for (int k = 0; k < 2; k++)
		if (put(b, a->side[k] != NULL) || (a->side[k] != NULL && acc_pack(a->side[k], b)))
			return -1;
	return 0;
}

int acc_pack(const struct job_acc *a, struct buf *b)
{
	if (put(b, PACK_MAGIC) || put(b, a->files) || put(b, a->ok) || put(b, a->measured) ||
	    put(b, a->stray) || put(b, a->approx) || put(b, a->messages) || put(b, a->replayed) ||
	    put(b, a->nnames))
		return -1;
	for (size_t i = 0; i < a->nnames; i++) {
		size_t len = strlen(a->names[i]);

		if (put(b, len) || buf_put(b, a->names[i], len))
			return -1;
	}
	return put_ranks(b, a) || put_waits(b, a) || put_pending(b, a) || put_profiles(b, a) ? -1
											     : 0;
}

/* ------------------------------------------------------------------ reading */

struct in {
	const unsigned char *p, *end;
	struct job_acc *a;
	int err; /* -1 out of memory, -2 malformed */
};

static void bad(struct in *in)
{
	in->err = in->err ? in->err : -2;
}

static uint64_t get(struct in *in)
{
	uint64_t v = 0;

	if (in->err || (size_t)(in->end - in->p) < sizeof(v)) {
		bad(in);
		return 0;
	}
	memcpy(&v, in->p, sizeof(v));
	in->p += sizeof(v);
	return v;
}

/* A count of items of at least item bytes each that the bytes left can hold. */
static uint64_t get_count(struct in *in, size_t item)
{
	uint64_t n = get(in);

	if (n > (uint64_t)(in->end - in->p) / item) {
		bad(in);
		return 0;
	}
	return n;
}

static int64_t get_time(struct in *in)
{
	int64_t t = (int64_t)get(in);

	if (t > TIME_MAX || t < -TIME_MAX)
		bad(in);
	return t;
}

static uint32_t get_u32(struct in *in, uint64_t below)
{
	uint64_t v = get(in);

	if (v >= below)
		bad(in);
	return in->err ? 0 : (uint32_t)v;
}

static uint32_t get_path(struct in *in)
{
	return get_u32(in, in->a->nnames);
}

/* A rank that the ranks read before hold. */
static int64_t get_rank(struct in *in)
{
	int64_t r = (int64_t)get(in);

	if (!in->err && table_get(&in->a->ranks, &r, sizeof(r)) == NULL)
		bad(in);
	return r;
}

static void fail(struct in *in, int rc)
{
	if (rc && !in->err)
		in->err = -1;
}

static void get_names(struct in *in)
{
	uint64_t n = get_count(in, 8);

	for (uint64_t i = 0; i < n && !in->err; i++) {
		uint64_t len = get_count(in, 1);
		char *s;

		if (in->err || memchr(in->p, '\0', len) != NULL ||
		    table_get(&in->a->paths, in->p, len) != NULL) {
			bad(in);
			return;
		}
		s = malloc(len + 1);
		if (s == NULL) {
			fail(in, -1);
			return;
		}
		memcpy(s, in->p, len);
		s[len] = '\0';
		in->p += len;
		if (table_get(&in->a->paths, s, len + 1) != NULL)
			bad(in);
		else
			fail(in, acc_path_id(in->a, s) == UINT32_MAX);
		free(s);
	}
}

static void get_ranks(struct in *in)
{
	uint64_t n = get_count(in, 6 * 8 + HEAT_BINS * 8);

	for (uint64_t i = 0; i < n && !in->err; i++) {
		int64_t rank = (int64_t)get(in);
		bool created;
		struct rank_acc *r = acc_rank(in->a, rank, &created);
		uint64_t npt;

		if (r == NULL) {
			fail(in, -1);
			return;
		}
		r->has_time = get(in) != 0;
		r->first = get_time(in), r->last = get_time(in);
		r->mpi_ns = get(in);
		npt = get_count(in, 3 * 8);
		if (!created || r->first > r->last)
			bad(in);
		if (in->err)
			return;
		r->pt = malloc((npt + 1) * sizeof(*r->pt));
		if (r->pt == NULL) {
			fail(in, -1);
			return;
		}
		r->cap = npt + 1;
		for (; r->npt < npt && !in->err; r->npt++) {
			r->pt[r->npt].path = get_path(in);
			r->pt[r->npt].incl = get(in), r->pt[r->npt].calls = get(in);
			/* sorted by id, each once, as rank_times() keeps them */
			if (r->npt > 0 && r->pt[r->npt].path <= r->pt[r->npt - 1].path)
				bad(in);
		}
		for (int k = 0; k < HEAT_BINS; k++)
			r->heat[k] = get(in);
	}
}

static void get_waits(struct in *in)
{
	uint64_t n = get_count(in, 6 * 8);

	for (uint64_t i = 0; i < n && !in->err; i++) {
		int kind = (int)get_u32(in, WAIT_KINDS);
		uint32_t path = get_path(in);
		int64_t rank = get_rank(in), cause = get_rank(in);
		uint64_t ns = get(in), count = get(in);

		if (!in->err)
			fail(in, acc_add_wait(in->a, kind, path, rank, cause, ns, count));
	}
}

static void get_groups(struct in *in)
{
	uint64_t n = get_count(in, 9 * 8);

	for (uint64_t i = 0; i < n && !in->err; i++) {
		uint32_t file = get_u32(in, UINT32_MAX), group = get_u32(in, UINT32_MAX);
		struct late_group g = {0};
		bool created;
		struct late_group *t;

		g.left = get_u32(in, UINT32_MAX);
		g.best_pos = get_u32(in, UINT32_MAX);
		g.has_best = get(in) != 0;
		g.best_late = get(in);
		g.rank = get_rank(in), g.cause = get_rank(in);
		g.path = get_path(in);
		if (in->err)
			return;
		t = acc_group(in->a, file, group, &created);
		if (t == NULL) {
			fail(in, -1);
			return;
		}
		if (!created)
			bad(in);
		*t = g;
	}
}

static void get_pending(struct in *in)
{
	uint64_t n = get_count(in, 2 * 8);

	for (uint64_t i = 0; i < n && !in->err; i++) {
		uint64_t id = get(in), ne = get_count(in, 8 * 8);

		if (ne == 0 || table_get(&in->a->pending, &id, sizeof(id)) != NULL)
			bad(in);
		for (uint64_t k = 0; k < ne && !in->err; k++) {
			struct pend_end e = {0};

			e.start = get_time(in), e.end = get_time(in);
			e.rank = get_rank(in);
			e.path = get_path(in);
			e.flags = get_u32(in, 1u << MSG_FLAGS_SHIFT);
			e.file = get_u32(in, UINT32_MAX);
			e.group = (uint32_t)get(in);
			e.pos = get_u32(in, UINT32_MAX);
			if (!in->err)
				fail(in, acc_offer_end(in->a, id, &e));
		}
	}
}

static void get_insts(struct in *in)
{
	uint64_t n = get_count(in, 4 * 8);

	for (uint64_t i = 0; i < n && !in->err; i++) {
		uint64_t key[2];
		struct coll_last e;

		key[0] = get(in), key[1] = get(in);
		e.start = get_time(in);
		/* a rank that the ranks read before hold, or none yet */
		e.rank = (int64_t)get(in);
		if (!in->err && e.rank != NO_ENTRY &&
		    table_get(&in->a->ranks, &e.rank, sizeof(e.rank)) == NULL)
			bad(in);
		if (!in->err && table_get(&in->a->insts, key, sizeof(key)) != NULL)
			bad(in);
		if (!in->err)
			fail(in, acc_offer_entry(in->a, key[0], key[1], &e));
	}
}

static void get_jp(struct in *in)
{
	uint64_t n = get_count(in, 7 * 8);

	for (uint64_t i = 0; i < n && !in->err; i++) {
		struct job_path_r p;

		p.path = get_path(in);
		p.calls = get(in), p.sum = get(in);
		p.r.min = get(in), p.r.max = get(in);
		p.r.max_rank = (int64_t)get(in); /* a number shown, nothing indexed by it */
		p.r.with = get(in);
		if (in->err)
			return;
		struct job_path_r *v =
			array_grow(in->a->jp, &in->a->jp_cap, in->a->njp + 1, sizeof(*v), 16);
		if (v == NULL) {
			fail(in, -1);
			return;
		}
		in->a->jp = v;
		in->a->jp[in->a->njp++] = p;
	}
}

/* One accumulator; its sides (depth 0 only: a side has none). */
static void get_acc(struct in *in, struct job_acc *a, int depth)
{
	in->a = a;
	if (get(in) != PACK_MAGIC) {
		bad(in);
		return;
	}
	a->files = get(in), a->ok = get(in), a->measured = get(in);
	a->stray = get(in), a->approx = get(in);
	a->messages = get(in), a->replayed = get(in);
	get_names(in);
	get_ranks(in);
	get_waits(in);
	get_groups(in);
	get_pending(in);
	get_insts(in);
	get_jp(in);
	for (int k = 0; k < 2 && !in->err; k++) {
		if (get(in) == 0)
			continue;
		if (depth > 0) {
			bad(in);
			return;
		}
		a->side[k] = malloc(sizeof(*a->side[k]));
		if (a->side[k] == NULL || acc_init(a->side[k])) {
			free(a->side[k]);
			a->side[k] = NULL;
			fail(in, -1);
			return;
		}
		get_acc(in, a->side[k], depth + 1);
		in->a = a;
	}
}

int acc_unpack(struct job_acc *a, const void *bytes, size_t len)
{
	struct in in = {bytes, (const unsigned char *)bytes + len, a, 0};

	get_acc(&in, a, 0);
	if (!in.err && in.p != in.end)
		bad(&in);
	return in.err;
}
