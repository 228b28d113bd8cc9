/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace report`: the second reading (job_report.h). The first found the job's
 * span and each collective instance's last entry; with them each file, read again,
 * adds its own collective entries' waits (each member from its entry to the last
 * one's, at most its call's length: docs/commands/ringtrace-report.md) and shares its
 * fine bins of MPI time onto its rank's heat row. So no file's entries or bins are
 * held until the last file is in, whatever the number of ranks.
 *
 * The replay travels as bytes (spread_share() under MPI; the same bytes on one
 * process): a magic, the span, then the instances as (comm, seq, start, rank), each
 * number 8 bytes in native order, every length and time checked when read.
 */
#include "job_report.h"
#include "json.h"

#include <stdlib.h>
#include <string.h>

#define REPLAY_MAGIC 0x31796c7072727472ull /* "rtrrply1" */
/* Times are refused beyond this, so that no difference of two overflows. */
#define TIME_MAX (INT64_MAX / 4)

/* The job's span: its ranks' spans joined, as the finish joins them. */
static void job_span_of(const struct job_acc *a, int64_t *first, int64_t *last)
{
	*first = INT64_MAX, *last = INT64_MIN;
	for (const struct rank_acc *r = table_first(&a->ranks); r != NULL; r = table_next(r))
		if (r->has_time) {
			*first = r->first < *first ? r->first : *first;
			*last = r->last > *last ? r->last : *last;
		}
	if (*first > *last)
		*first = *last = 0;
}

bool acc_needs_replay(const struct job_acc *a)
{
	int64_t first, last;

	job_span_of(a, &first, &last);
	return a->ok > 0 && (last > first || a->insts.count > 0);
}

static int put(struct buf *b, uint64_t v)
{
	return buf_put(b, &v, sizeof(v));
}

int insts_pack(const struct job_acc *a, struct buf *out)
{
	if (put(out, a->insts.count))
		return -1;
	for (const struct coll_last *c = table_first(&a->insts); c != NULL; c = table_next(c))
		if (buf_put(out, table_key(&a->insts, c, &(size_t){0}), 2 * sizeof(uint64_t)) ||
		    put(out, (uint64_t)c->start) || put(out, (uint64_t)c->rank))
			return -1;
	return 0;
}

int replay_pack(const struct job_acc *a, struct buf *out)
{
	int64_t first, last;

	job_span_of(a, &first, &last);
	return put(out, REPLAY_MAGIC) || put(out, (uint64_t)first) || put(out, (uint64_t)last) ||
			       insts_pack(a, out)
		       ? -1
		       : 0;
}

static int64_t time_at(const unsigned char *p, bool *bad)
{
	int64_t t;

	memcpy(&t, p, sizeof(t));
	*bad |= t > TIME_MAX || t < -TIME_MAX;
	return t;
}

int replay_unpack(struct replay *r, const void *bytes, size_t len)
{
	const unsigned char *p = bytes;
	uint64_t magic, n;
	bool bad = false;

	table_init(&r->lasts, sizeof(struct coll_last));
	if (len < 4 * 8)
		return -2;
	memcpy(&magic, p, 8);
	r->first = time_at(p + 8, &bad);
	r->last = time_at(p + 16, &bad);
	memcpy(&n, p + 24, 8);
	if (bad || magic != REPLAY_MAGIC || r->last < r->first || n != (len - 4 * 8) / 32 ||
	    (len - 4 * 8) % 32 != 0)
		return -2;
	for (p += 4 * 8; n-- > 0; p += 32) {
		bool created;
		struct coll_last *c = table_put(&r->lasts, p, 2 * sizeof(uint64_t), &created);

		if (c == NULL)
			return -1;
		c->start = time_at(p + 16, &bad);
		memcpy(&c->rank, p + 24, sizeof(c->rank));
		if (bad || !created)
			return -2;
	}
	return 0;
}

void replay_free(struct replay *r)
{
	table_destroy(&r->lasts);
}

static int64_t heat_edge(const struct replay *r, int64_t k)
{
	return r->first + (int64_t)((__int128)k * (r->last - r->first) / HEAT_BINS);
}

/* A file's fine bins onto the heat row of the job span, each fine bin's time shared
 * by overlap. */
static void heat_of(uint64_t heat[HEAT_BINS], const struct replay *r, const struct rank_part *p)
{
	int64_t span = r->last - r->first;

	for (size_t i = 0; i < PART_BINS; i++) {
		int64_t a = p->bin_origin + (int64_t)i * p->bin_width, b = a + p->bin_width;

		if (p->bins[i] == 0)
			continue;
		for (int64_t t = a; t < b;) {
			int64_t k = (int64_t)((__int128)(t - r->first) * HEAT_BINS / span);
			int64_t edge, to;

			k = k < 0 ? 0 : k >= HEAT_BINS ? HEAT_BINS - 1 : k;
			/* bin k is [first + k * span / BINS, first + (k + 1) * span / BINS) */
			while (k < HEAT_BINS - 1 && heat_edge(r, k + 1) <= t)
				k++;
			edge = heat_edge(r, k + 1);
			to = edge < b && k < HEAT_BINS - 1 ? edge : b;
			heat[k] += (uint64_t)((__int128)p->bins[i] * (to - t) / p->bin_width);
			t = to;
		}
	}
}

/* Entry k's wait for its instance's last entry (0: none), and that entry. */
static uint64_t wait_of(const struct rank_part *p, size_t k, const struct replay *r,
			const struct coll_last **last)
{
	const struct coll_entry *c = &p->colls[k];
	uint64_t key[2] = {c->comm, c->seq};

	/* absent only when the file changed since the first reading */
	*last = table_get(&r->lasts, key, sizeof(key));
	if (!coll_waits(c, p->rank) || *last == NULL || (*last)->rank == NO_ENTRY)
		return 0;
	return capped_wait((*last)->start - c->start, c->end - c->start);
}

int acc_add_replay(struct job_acc *a, const struct rank_part *p, const struct replay *r)
{
	if (p->failed || p->profile != PART_TRACE)
		return 0;
	struct rank_acc *row = acc_rank(a, p->rank, NULL);

	if (row == NULL)
		return -1;
	a->replayed++;
	if (p->has_time && r->last > r->first)
		heat_of(row->heat, r, p);
	for (size_t k = 0; k < p->ncolls;) {
		static const int kinds[] = {
			[COLL_N_TO_N] = WAIT_COLLECTIVE,
			[COLL_BARRIER] = WAIT_BARRIER,
			[COLL_ONE_TO_N] = WAIT_LATE_BROADCAST,
			[COLL_N_TO_ONE] = WAIT_EARLY_REDUCE,
		};
		const struct coll_last *last, *l;
		size_t at = k; /* the entry waited for: the latest of a call's completions */
		uint64_t w = wait_of(p, k, r, &last), v;
		uint32_t id;

		/* a Wait that completed several nonblocking collectives waits once */
		for (k++; k < p->ncolls && (p->colls[k].flags & COLL_MORE); k++)
			if ((v = wait_of(p, k, r, &l)) > w)
				w = v, at = k, last = l;
		if (w == 0)
			continue;
		id = acc_path_id(a, p->paths[p->colls[at].path]);
		/* the causing rank's row, empty here, for the bytes' references (acc_pack.c) */
		if (id == UINT32_MAX || acc_rank(a, last->rank, NULL) == NULL ||
		    acc_add_wait(a, kinds[p->colls[at].kind], id, p->rank, last->rank, w, 1))
			return -1;
	}
	return 0;
}

size_t replay_trim(struct rank_part *p)
{
	uint32_t *index = calloc(p->npaths + 1, sizeof(*index));
	size_t bytes = sizeof(*p), kept = 0;

	free(p->msgs), p->msgs = NULL, p->nmsgs = 0;
	free(p->incl), p->incl = NULL;
	free(p->calls), p->calls = NULL;
	if (index == NULL) {
		/* every path kept: more bytes, the same answer */
		for (size_t i = 0; i < p->npaths; i++)
			bytes += strlen(p->paths[i]) + 1 + sizeof(uint32_t) + sizeof(char *);
		return bytes + p->ncolls * sizeof(*p->colls);
	}
	for (size_t k = 0; k < p->ncolls; k++)
		index[p->colls[k].path] = 1;
	for (size_t i = 0; i < p->npaths; i++) {
		if (!index[i]) {
			free(p->paths[i]);
			continue;
		}
		index[i] = (uint32_t)kept;
		bytes += strlen(p->paths[i]) + 1 + sizeof(uint32_t) + sizeof(char *);
		p->paths[kept++] = p->paths[i];
	}
	p->npaths = kept;
	for (size_t k = 0; k < p->ncolls; k++)
		p->colls[k].path = index[p->colls[k].path];
	free(index);
	if (p->ncolls > 0) {
		struct coll_entry *v = realloc(p->colls, p->ncolls * sizeof(*v));

		p->colls = v != NULL ? v : p->colls;
	}
	return bytes + p->ncolls * sizeof(*p->colls);
}
