/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace report`: the wait states and the heat map, from the merged partials
 * (job_report.h; the definitions are docs/commands/ringtrace-report.md's).
 *
 * Messages: every endpoint of the job in file order, sorted by (flow id, side,
 * position); the n-th send of an id pairs with its n-th receive. Collectives: every
 * entry sorted by (communicator, sequence number, rank): one instance per
 * (communicator, sequence number).
 */
#include "job_report.h"
#include "table.h"

#include <stdlib.h>
#include <string.h>

struct wait_key {
	int64_t kind;
	int64_t path;
	int64_t rank, cause;
};

struct analysis {
	struct job *j;
	struct table waits; /* wait_key -> struct job_wait */
	const struct msg_end *all;
	size_t nall;
};

static int add_wait(struct analysis *a, int kind, uint32_t path, int64_t rank, int64_t cause,
		    uint64_t ns)
{
	struct job *j = a->j;
	struct wait_key key = {kind, path, rank, cause};
	struct job_wait *w = table_put(&a->waits, &key, sizeof(key), NULL);

	if (w == NULL)
		return -1;
	w->kind = kind;
	w->path = path;
	w->rank = rank;
	w->cause = cause;
	w->ns += ns;
	w->count++;
	j->wait_total[kind] += ns;
	j->wait_count[kind]++;
	j->paths[path].waits[kind] += ns;
	j->paths[path].wait_count[kind]++;
	j->ranks[job_rank_index(j, rank)].waited[kind] += ns;
	j->ranks[job_rank_index(j, cause)].caused[kind] += ns;
	return 0;
}

/* The endpoints by_flow() sorts positions of: set before each qsort; the analysis
 * runs on one thread. */
static const struct msg_end *sort_base;

static int by_flow(const void *x, const void *y)
{
	const struct msg_end *a = &sort_base[*(const size_t *)x],
			     *b = &sort_base[*(const size_t *)y];
	unsigned ra = a->path_flags & MSG_RECV, rb = b->path_flags & MSG_RECV;
	size_t pa = *(const size_t *)x, pb = *(const size_t *)y;

	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	if (ra != rb)
		return ra < rb ? -1 : 1;
	return (pa > pb) - (pa < pb);
}

static uint64_t capped(int64_t late, int64_t dur)
{
	if (late <= 0 || dur <= 0)
		return 0;
	return (uint64_t)(late < dur ? late : dur);
}

static int64_t rank_of(const struct analysis *a, const struct msg_end *m)
{
	return a->j->parts[m->part].rank;
}

/* Pair the endpoints; the late sender's wait of each receive (partner[] the send's
 * position, or SIZE_MAX), and the late receivers. */
static int pair_messages(struct analysis *a, size_t *partner, uint64_t *late)
{
	struct job *j = a->j;
	size_t *order = malloc((a->nall + 1) * sizeof(*order));

	if (order == NULL)
		return -1;
	for (size_t i = 0; i < a->nall; i++)
		order[i] = i, partner[i] = SIZE_MAX, late[i] = 0;
	sort_base = a->all;
	qsort(order, a->nall, sizeof(*order), by_flow);
	for (size_t i = 0; i < a->nall;) {
		size_t end = i, sends, recvs;

		while (end < a->nall && a->all[order[end]].id == a->all[order[i]].id)
			end++;
		for (sends = i; sends < end && !(a->all[order[sends]].path_flags & MSG_RECV);)
			sends++;
		recvs = sends;
		sends -= i;
		size_t nrecv = end - recvs, pairs = sends < nrecv ? sends : nrecv;
		j->unmatched_ends += (sends + nrecv) - 2 * pairs;
		j->messages += pairs;
		for (size_t k = 0; k < pairs; k++) {
			size_t s = order[i + k], r = order[recvs + k];
			const struct msg_end *ms = &a->all[s], *mr = &a->all[r];

			partner[r] = s;
			if (mr->path_flags & MSG_BLOCKING)
				late[r] = capped(ms->start - mr->start, mr->end - mr->start);
			uint64_t w = capped(mr->start - ms->start, ms->end - ms->start);
			if ((ms->path_flags & MSG_BLOCKING) && w > 0 &&
			    add_wait(a, WAIT_LATE_RECEIVER, ms->path_flags >> MSG_FLAGS_SHIFT,
				     rank_of(a, ms), rank_of(a, mr), w) != 0) {
				free(order);
				return -1;
			}
		}
		i = end;
	}
	free(order);
	return 0;
}

/* The late senders: one wait per receiving call (a call that completes several
 * messages waits for the latest of their senders). */
static int late_senders(struct analysis *a, const size_t *partner, const uint64_t *late)
{
	for (size_t i = 0; i < a->nall;) {
		size_t end = i + 1, worst = i;

		if (!(a->all[i].path_flags & MSG_RECV)) {
			i++;
			continue;
		}
		while (end < a->nall && (a->all[end].path_flags & MSG_SAME_CALL) &&
		       (a->all[end].path_flags & MSG_RECV) && a->all[end].part == a->all[i].part)
			end++;
		for (size_t k = i; k < end; k++)
			if (partner[k] != SIZE_MAX &&
			    (partner[worst] == SIZE_MAX || late[k] > late[worst]))
				worst = k;
		if (partner[worst] != SIZE_MAX && late[worst] > 0 &&
		    add_wait(a, WAIT_LATE_SENDER, a->all[worst].path_flags >> MSG_FLAGS_SHIFT,
			     rank_of(a, &a->all[worst]), rank_of(a, &a->all[partner[worst]]),
			     late[worst]))
			return -1;
		i = end;
	}
	return 0;
}

static int messages(struct analysis *a)
{
	struct job *j = a->j;
	size_t n = 0;
	struct msg_end *all;
	size_t *partner;
	uint64_t *late;
	int rc = -1;

	for (size_t i = 0; i < j->nparts; i++)
		n += j->parts[i].nmsgs;
	all = malloc((n + 1) * sizeof(*all));
	partner = malloc((n + 1) * sizeof(*partner));
	late = malloc((n + 1) * sizeof(*late));
	if (all == NULL || partner == NULL || late == NULL)
		goto out;
	n = 0;
	for (size_t i = 0; i < j->nparts; i++) {
		if (j->parts[i].nmsgs > 0)
			memcpy(all + n, j->parts[i].msgs, j->parts[i].nmsgs * sizeof(*all));
		n += j->parts[i].nmsgs;
	}
	a->all = all;
	a->nall = n;
	if (pair_messages(a, partner, late) == 0 && late_senders(a, partner, late) == 0)
		rc = 0;
out:
	free(all);
	free(partner);
	free(late);
	return rc;
}

struct coll_ref {
	uint64_t comm;
	uint32_t seq;
	int64_t rank;
	size_t part, at;
};

static int by_instance(const void *x, const void *y)
{
	const struct coll_ref *a = x, *b = y;

	if (a->comm != b->comm)
		return a->comm < b->comm ? -1 : 1;
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->part != b->part)
		return a->part < b->part ? -1 : 1;
	return (a->at > b->at) - (a->at < b->at);
}

static const char *last_name(const char *path)
{
	const char *s = strrchr(path, ';');

	return s != NULL ? s + 1 : path;
}

/* One instance: each member waits from its entry to the last member's entry. */
static int instance(struct analysis *a, const struct coll_ref *v, size_t n)
{
	struct job *j = a->j;
	const struct coll_entry *last = &j->parts[v[0].part].colls[v[0].at];
	int64_t last_rank = v[0].rank;

	j->instances++;
	for (size_t k = 1; k < n; k++) {
		const struct coll_entry *e = &j->parts[v[k].part].colls[v[k].at];

		if (e->start > last->start) {
			last = e;
			last_rank = v[k].rank;
		}
	}
	for (size_t k = 0; k < n; k++) {
		const struct coll_entry *e = &j->parts[v[k].part].colls[v[k].at];
		uint64_t w = capped(last->start - e->start, e->end - e->start);
		int kind = is_barrier(last_name(j->paths[e->path].name)) ? WAIT_BARRIER
									 : WAIT_COLLECTIVE;

		if (w > 0 && add_wait(a, kind, e->path, v[k].rank, last_rank, w))
			return -1;
	}
	return 0;
}

static int collectives(struct analysis *a)
{
	struct job *j = a->j;
	size_t n = 0;
	struct coll_ref *v;
	int rc = 0;

	for (size_t i = 0; i < j->nparts; i++)
		n += j->parts[i].ncolls;
	v = malloc((n + 1) * sizeof(*v));
	if (v == NULL)
		return -1;
	n = 0;
	for (size_t i = 0; i < j->nparts; i++)
		for (size_t k = 0; k < j->parts[i].ncolls; k++) {
			const struct coll_entry *e = &j->parts[i].colls[k];

			v[n++] = (struct coll_ref){e->comm, e->seq, j->parts[i].rank, i, k};
		}
	qsort(v, n, sizeof(*v), by_instance);
	for (size_t i = 0; i < n && rc == 0;) {
		size_t end = i + 1;

		while (end < n && v[end].comm == v[i].comm && v[end].seq == v[i].seq)
			end++;
		rc = instance(a, v + i, end - i);
		i = end;
	}
	free(v);
	return rc;
}

static int64_t heat_edge(const struct job *j, int64_t k)
{
	return j->first + (int64_t)((__int128)k * (j->last - j->first) / HEAT_BINS);
}

/* A file's fine bins onto the heat map's bins of the job span, each fine bin's time
 * shared by overlap. */
static void heat_of(struct job *j, const struct rank_part *p)
{
	struct job_rank *r = &j->ranks[job_rank_index(j, p->rank)];
	int64_t span = j->last - j->first;

	if (!p->has_time || span <= 0)
		return;
	for (size_t i = 0; i < PART_BINS; i++) {
		int64_t a = p->bin_origin + (int64_t)i * p->bin_width, b = a + p->bin_width;

		if (p->bins[i] == 0)
			continue;
		for (int64_t t = a; t < b;) {
			int64_t k = (int64_t)((__int128)(t - j->first) * HEAT_BINS / span);
			int64_t edge, to;

			k = k < 0 ? 0 : k >= HEAT_BINS ? HEAT_BINS - 1 : k;
			/* bin k is [first + k * span / BINS, first + (k + 1) * span / BINS) */
			while (k < HEAT_BINS - 1 && heat_edge(j, k + 1) <= t)
				k++;
			edge = heat_edge(j, k + 1);
			to = edge < b && k < HEAT_BINS - 1 ? edge : b;
			r->heat[k] += (uint64_t)((__int128)p->bins[i] * (to - t) / p->bin_width);
			t = to;
		}
	}
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

int job_analyze(struct job *j)
{
	struct analysis a = {.j = j};
	int rc = -1;

	table_init(&a.waits, sizeof(struct job_wait));
	for (size_t i = 0; i < j->nparts; i++)
		if (!j->parts[i].failed)
			heat_of(j, &j->parts[i]);
	if (messages(&a) || collectives(&a))
		goto out;
	j->waits = malloc((a.waits.count + 1) * sizeof(*j->waits));
	if (j->waits == NULL)
		goto out;
	for (struct job_wait *w = table_first(&a.waits); w != NULL; w = table_next(w))
		j->waits[j->nwaits++] = *w;
	qsort(j->waits, j->nwaits, sizeof(*j->waits), by_wait);
	rc = 0;
out:
	table_destroy(&a.waits);
	return rc;
}
