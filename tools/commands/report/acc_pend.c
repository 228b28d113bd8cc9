/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace report`: what crosses files, resolved as soon as it can be
 * (job_report.h; the definitions are docs/commands/ringtrace-report.md's).
 *
 * Messages: endpoints come in file order; one is paired with the oldest pending
 * endpoint of the other side with its flow id, else held. So the n-th send of an id
 * pairs with its n-th receive, as when every endpoint was sorted at the end (the MPI
 * module's ids name one message each). A late receiver's wait is the pair's alone; a
 * late sender's is the receiving call's: one that completes several messages waits
 * once, for the latest of their senders, when the last of them is paired.
 *
 * Collectives: of the entries of one (communicator, sequence number) that count
 * (coll_counts(): every one of an N-to-N collective or a barrier, the root's of a
 * 1-to-N, the others' of an N-to-1) only the last is kept (the latest start, the
 * lowest rank on a tie): the order the files come in does not change it. The waits,
 * from each waiting member's entry to that one, are the second reading's
 * (acc_replay.c).
 */
#include "job_report.h"
#include "json.h"

#include <stdlib.h>
#include <string.h>

struct late_group *acc_group(struct job_acc *a, uint32_t file, uint32_t group, bool *created)
{
	uint32_t key[2] = {file, group};

	return table_put(&a->groups, key, sizeof(key), created);
}

static const struct pend_end *q_at(const struct pend_q *q, uint32_t i)
{
	return q->cap == 0 ? &q->one : &q->v[i];
}

static int q_push(struct pend_q *q, const struct pend_end *e)
{
	if (q->n == 0 && q->cap == 0) {
		q->one = *e;
		q->n = 1;
		return 0;
	}
	if (q->cap == 0 || q->n == q->cap) {
		uint32_t cap = q->cap == 0 ? 4 : q->cap * 2;
		struct pend_end *v;

		if (q->n >= UINT32_MAX / 2)
			return -1;
		v = realloc(q->v, cap * sizeof(*v));
		if (v == NULL)
			return -1;
		if (q->cap == 0)
			v[0] = q->one;
		q->v = v;
		q->cap = cap;
	}
	q->v[q->n++] = *e;
	return 0;
}

static void q_pop(struct pend_q *q)
{
	if (q->cap > 0)
		memmove(q->v, q->v + 1, (q->n - 1) * sizeof(*q->v));
	q->n--;
}

/* A receiving call's late sender wait, once it is known. */
static int late_sender(struct job_acc *a, const struct pend_end *r, int64_t cause, uint64_t late)
{
	struct late_group *g;

	if (r->group == NO_GROUP)
		return late > 0
			       ? acc_add_wait(a, WAIT_LATE_SENDER, r->path, r->rank, cause, late, 1)
			       : 0;
	g = acc_group(a, r->file, r->group, NULL);
	if (g == NULL)
		return -1;
	if (!g->has_best || late > g->best_late || (late == g->best_late && r->pos < g->best_pos)) {
		g->has_best = true;
		g->best_late = late;
		g->best_pos = r->pos;
		g->rank = r->rank;
		g->cause = cause;
		g->path = r->path;
	}
	if (g->left > 0 && --g->left > 0)
		return 0;
	int rc = g->best_late > 0 ? acc_add_wait(a, WAIT_LATE_SENDER, g->path, g->rank, g->cause,
						 g->best_late, 1)
				  : 0;
	table_remove(&a->groups, g);
	return rc;
}

static int pair(struct job_acc *a, const struct pend_end *s, const struct pend_end *r)
{
	uint64_t w = capped_wait(r->start - s->start, s->end - s->start);
	uint64_t late = 0;

	a->messages++;
	if ((s->flags & MSG_BLOCKING) && w > 0 &&
	    acc_add_wait(a, WAIT_LATE_RECEIVER, s->path, s->rank, r->rank, w, 1))
		return -1;
	if (r->flags & MSG_BLOCKING)
		late = capped_wait(s->start - r->start, r->end - r->start);
	return late_sender(a, r, s->rank, late);
}

int acc_offer_end(struct job_acc *a, uint64_t id, const struct pend_end *e)
{
	bool created;
	struct pend_q *q = table_put(&a->pending, &id, sizeof(id), &created);
	struct pend_end other;

	if (q == NULL)
		return -1;
	if (created || (q_at(q, 0)->flags & MSG_RECV) == (e->flags & MSG_RECV)) {
		if (q_push(q, e) == 0)
			return 0;
		if (q->n == 0)
			table_remove(&a->pending, q);
		return -1;
	}
	other = *q_at(q, 0);
	q_pop(q);
	if (q->n == 0) {
		free(q->v);
		table_remove(&a->pending, q);
	}
	return e->flags & MSG_RECV ? pair(a, &other, e) : pair(a, e, &other);
}

int acc_offer_entry(struct job_acc *a, uint64_t comm, uint64_t seq, const struct coll_last *e)
{
	uint64_t key[2] = {comm, seq};
	bool created;
	struct coll_last *c = table_put(&a->insts, key, sizeof(key), &created);

	if (c == NULL)
		return -1;
	if (created)
		c->rank = NO_ENTRY;
	if (e->rank != NO_ENTRY && (c->rank == NO_ENTRY || e->start > c->start ||
				    (e->start == c->start && e->rank < c->rank)))
		*c = *e;
	return 0;
}

int acc_resolve_rest(struct job_acc *a)
{
	for (struct late_group *g = table_first(&a->groups); g != NULL; g = table_next(g))
		if (g->has_best && g->best_late > 0 &&
		    acc_add_wait(a, WAIT_LATE_SENDER, g->path, g->rank, g->cause, g->best_late, 1))
			return -1;
	return 0;
}
