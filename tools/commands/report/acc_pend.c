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
 * Collectives: the entries of one (communicator, sequence number) are held until
 * comm_size of them are in, then resolved: each member waits from its entry to the
 * last member's entry (the lowest rank on a tie, then the earliest in file order).
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

static const char *last_name(const char *path)
{
	const char *s = strrchr(path, ';');

	return s != NULL ? s + 1 : path;
}

/* One instance: each member waits from its entry to the last member's entry. */
static int resolve(struct job_acc *a, const struct coll_inst *c)
{
	const struct coll_member *last = &c->m[0];

	a->instances++;
	for (uint32_t k = 1; k < c->n; k++) {
		const struct coll_member *e = &c->m[k];

		if (e->start > last->start || (e->start == last->start && e->rank < last->rank))
			last = e;
	}
	for (uint32_t k = 0; k < c->n; k++) {
		const struct coll_member *e = &c->m[k];
		uint64_t w = capped_wait(last->start - e->start, e->end - e->start);
		int kind =
			is_barrier(last_name(a->names[e->path])) ? WAIT_BARRIER : WAIT_COLLECTIVE;

		if (w > 0 && acc_add_wait(a, kind, e->path, e->rank, last->rank, w, 1))
			return -1;
	}
	return 0;
}

int acc_offer_member(struct job_acc *a, uint64_t comm, uint64_t seq, uint32_t size,
		     const struct coll_member *m)
{
	uint64_t key[2] = {comm, seq};
	bool created;
	struct coll_inst *c = table_put(&a->insts, key, sizeof(key), &created);
	int rc;

	if (c == NULL)
		return -1;
	if (created)
		c->size = size;
	if (c->n == c->cap) {
		/* doubling, up to the communicator's size: a file holds one member of each */
		uint32_t cap = c->cap == 0 ? 4 : c->cap * 2;

		if (c->size > c->n && cap > c->size)
			cap = c->size;
		struct coll_member *v =
			c->n < UINT32_MAX / 2 ? realloc(c->m, cap * sizeof(*v)) : NULL;

		if (v == NULL) {
			if (c->n == 0)
				table_remove(&a->insts, c);
			return -1;
		}
		c->m = v;
		c->cap = cap;
	}
	c->m[c->n++] = *m;
	if (c->size == 0 || c->n < c->size)
		return 0;
	rc = resolve(a, c);
	free(c->m);
	table_remove(&a->insts, c);
	return rc;
}

int acc_resolve_rest(struct job_acc *a)
{
	for (struct late_group *g = table_first(&a->groups); g != NULL; g = table_next(g))
		if (g->has_best && g->best_late > 0 &&
		    acc_add_wait(a, WAIT_LATE_SENDER, g->path, g->rank, g->cause, g->best_late, 1))
			return -1;
	for (struct coll_inst *c = table_first(&a->insts); c != NULL; c = table_next(c))
		if (resolve(a, c))
			return -1;
	return 0;
}
