/* SPDX-License-Identifier: MIT */
/*
 * The nesting of a thread's slices, for the tally's self time (see tally.h; the
 * events come in through tally.c).
 *
 * Self time needs the nesting, and X events may come in any order: the recorder
 * writes an X when its scope ends (children before their parent), other tools in
 * order of start (parent first), and B/E pairs are in order of time. So each
 * thread's slices go through a reorder buffer, and come out in post-order:
 *
 *   arrival   an X, or a B/E pair at its E, enters the thread's heap, ordered by
 *             (end, start descending, arrival), so that a child comes before its
 *             parent (of two identical intervals the later arrival is the parent:
 *             the recorder's nested scopes and B/E pairs both arrive inner first).
 *   release   a slice leaves the heap once its end is before the thread's mark, the
 *             latest time point (the ts of any event; the start of an X) seen more
 *             than WINDOW events ago. A later slice then cannot end before it, in
 *             either order the files use: in start order a later slice starts (so
 *             ends) after the mark; in the recorder's order it ends after the time at
 *             which it is written, which is after every earlier time point. WINDOW
 *             allows that much disorder besides. At the end of the file all leave.
 *   claim     a released slice S claims the completed slices not yet claimed (the
 *             "unclaimed" stack, disjoint and in order of time) that start at or
 *             after its start: they are its direct children, because anything that
 *             ends before S and starts within it is nested in it, and the children's
 *             own descendants were claimed by them. self(S) = dur(S) - their durations;
 *             S then waits on the stack for its own parent.
 *
 * What is assumed, and what happens otherwise. Slices on a thread nest or are
 * disjoint (docs/format.md), and each thread's events are in order of start or in the
 * recorder's order, give or take WINDOW events. A slice that breaks this (released
 * before a slice that should come before it) is "late": it is counted in full, but
 * claims nothing and is claimed by nothing (its self time is its time), and a warning
 * counts them. A partial overlap is counted too (the later slice is then not a
 * child). Unended B slices at the end (a cut file) end at their thread's latest time.
 *
 * Bounds. Per thread: the heap holds the slices not yet released (the open ancestors
 * of the current time and the last WINDOW arrivals; never more than PENDING_MAX, past
 * which the earliest is released anyway), and the unclaimed stack the completed
 * slices waiting for a parent. That stack grows with the children of a parent not
 * seen yet (the recorder writes a long RTR_SCOPE("main") last), so past UNCLAIMED_MAX
 * entries its older half is merged: runs of one name first (the children of a loop),
 * then pairs. A merged run keeps its total, so a parent that claims it whole (the
 * usual case) gets an exact self time; one whose start falls inside a merged run
 * claims a share of it by time, and the slices so estimated are counted in a warning.
 */
#include "tally_nest.h"

#include <stdlib.h>
#include <string.h>

/* Events of disorder tolerated on a thread (see the design above). */
#define WINDOW TALLY_WINDOW
/* Slices waiting in one thread's reorder heap before the earliest is released anyway. */
#define PENDING_MAX 4096
/* Completed slices waiting for a parent, per thread, before the older half is merged. */
#define UNCLAIMED_MAX TALLY_UNCLAIMED_MAX

/* A slice in a thread's reorder heap. */
struct pending {
	int64_t start, end;
	uint64_t seq; /* arrival order on the thread */
	struct row *row;
	uint64_t name; /* hash of the name: the runs merged on the unclaimed stack */
};

/* A completed slice no parent has claimed (yet), or a merged run of such siblings. */
struct unclaimed {
	int64_t start, end;
	uint64_t dur;  /* the sum of the members' durations */
	uint64_t cov;  /* what the members add to the union of the thread's slices */
	uint64_t name; /* the members' name hash, when !mixed */
	uint32_t n;    /* members */
	bool mixed;    /* members of different names */
};

/* Does a come out of the heap before b? (end, start descending, arrival) */
static bool before(const struct pending *a, const struct pending *b)
{
	if (a->end != b->end)
		return a->end < b->end;
	if (a->start != b->start)
		return a->start > b->start;
	return a->seq < b->seq;
}

static int heap_push(struct tally_thread *t, const struct pending *p)
{
	size_t i;

	/* from 2: a million threads may each have one */
	struct pending *h = array_grow(t->heap, &t->heap_cap, t->nheap + 1, sizeof(*h), 2);

	if (h == NULL)
		return -1;
	t->heap = h;
	for (i = t->nheap++; i > 0; i = (i - 1) / 2) {
		struct pending *parent = &t->heap[(i - 1) / 2];

		if (!before(p, parent))
			break;
		t->heap[i] = *parent;
	}
	t->heap[i] = *p;
	return 0;
}

static struct pending heap_pop(struct tally_thread *t)
{
	struct pending top = t->heap[0], last = t->heap[--t->nheap];
	size_t i = 0, n = t->nheap;

	for (;;) {
		size_t k = 2 * i + 1;

		if (k >= n)
			break;
		if (k + 1 < n && before(&t->heap[k + 1], &t->heap[k]))
			k++;
		if (!before(&t->heap[k], &last))
			break;
		t->heap[i] = t->heap[k];
		i = k;
	}
	if (n > 0)
		t->heap[i] = last;
	return top;
}

static void merge_into(struct unclaimed *a, const struct unclaimed *b)
{
	a->mixed = a->mixed || b->mixed || a->name != b->name;
	a->end = b->end;
	a->dur += b->dur;
	a->cov += b->cov;
	a->n += b->n;
}

/* Merge the older half: runs of one name, then pairs if that did not free enough. */
static void compress(struct tally_thread *t)
{
	size_t half = t->nu / 2, w = 0;

	for (size_t i = 0; i < half; i++) {
		struct unclaimed *prev = w > 0 ? &t->u[w - 1] : NULL;

		if (prev != NULL && !prev->mixed && !t->u[i].mixed && prev->name == t->u[i].name)
			merge_into(prev, &t->u[i]);
		else
			t->u[w++] = t->u[i];
	}
	if (w > half / 2) {
		size_t w2 = 0;

		for (size_t i = 0; i < w; i += 2, w2++) {
			t->u[w2] = t->u[i];
			if (i + 1 < w)
				merge_into(&t->u[w2], &t->u[i + 1]);
		}
		w = w2;
	}
	memmove(t->u + w, t->u + half, (t->nu - half) * sizeof(t->u[0]));
	t->nu = w + t->nu - half;
}

/* A slice out of the heap, in post-order: claim its children, then wait for a parent. */
static void process(struct tally *c, struct tally_thread *t, const struct pending *p)
{
	uint64_t dur = span_ns(p->start, p->end), child = 0;
	struct unclaimed *u, *top;
	int64_t covered_to;

	if (t->has_done &&
	    (p->end < t->done_end || (p->end == t->done_end && p->start > t->done_start))) {
		/* Out of post-order: its children and parent were settled without it. */
		c->anomaly[AN_LATE]++;
		p->row->self += dur;
		return;
	}
	t->has_done = true;
	t->done_start = p->start;
	t->done_end = p->end;
	while (t->nu > 0) {
		top = &t->u[t->nu - 1];
		if (top->start >= p->start) {
			child += top->dur;
			t->nu--;
			continue;
		}
		if (top->end > p->start) {
			if (top->n > 1) {
				/* p starts inside a merged run: claim the share of the run's time
				 * that lies in p. An estimate, counted. */
				double f = (double)(top->end - p->start) /
					   (double)(top->end - top->start);
				uint64_t part = (uint64_t)((double)top->dur * f + 0.5);
				uint64_t cpart = (uint64_t)((double)top->cov * f + 0.5);

				part = part > top->dur ? top->dur : part;
				cpart = cpart > top->cov ? top->cov : cpart;
				child += part;
				top->dur -= part;
				top->cov -= cpart;
				top->end = p->start;
				c->anomaly[AN_APPROX]++;
			} else {
				c->anomaly[AN_OVERLAP]++;
			}
		}
		break;
	}
	if (child > dur) {
		c->anomaly[AN_OVERLAP]++; /* children overlapping one another */
		child = dur;
	}
	p->row->self += dur - child;
	u = array_grow(t->u, &t->ucap, t->nu + 1, sizeof(*u), 2);
	if (u == NULL) {
		c->nomem = true;
		return;
	}
	t->u = u;
	covered_to = t->nu > 0 && t->u[t->nu - 1].end > p->start ? t->u[t->nu - 1].end : p->start;
	u = &t->u[t->nu++];
	u->start = p->start;
	u->end = p->end;
	u->dur = dur;
	u->cov = covered_to < p->end ? span_ns(covered_to, p->end) : 0;
	u->name = p->name;
	u->n = 1;
	u->mixed = false;
	if (t->nu > UNCLAIMED_MAX)
		compress(t);
}

/* Release what no later slice can precede; everything when flush. */
void tally_nest_release(struct tally *c, struct tally_thread *t, bool flush)
{
	while (t->nheap > 0 &&
	       (flush || t->nheap > PENDING_MAX || (t->has_mark && t->heap[0].end < t->mark))) {
		struct pending p = heap_pop(t);

		process(c, t, &p);
	}
}

/* A time point of the thread: it moves the mark once WINDOW more have come. */
void tally_nest_time_point(struct tally_thread *t, int64_t ts)
{
	if (t->nrecent == WINDOW) {
		int64_t old = t->recent[t->recent_at];

		if (!t->has_mark || old > t->mark) {
			t->mark = old;
			t->has_mark = true;
		}
	} else {
		t->nrecent++;
	}
	t->recent[t->recent_at] = ts;
	t->recent_at = (t->recent_at + 1) % WINDOW;
}

/* A complete slice [start, end] of row on thread t. */
void tally_nest_arrive(struct tally *c, struct tally_thread *t, int64_t start, int64_t end,
		       struct row *row, uint64_t name)
{
	struct pending p = {start, end, t->seq++, row, name};
	uint64_t dur = span_ns(start, end);

	if (rtr__sketch_add(&row->dur, dur) || heap_push(t, &p)) {
		c->nomem = true;
		return;
	}
	row->total += dur;
	t->slices++;
	c->slices++;
}

uint64_t tally_nest_covered(const struct tally_thread *t)
{
	uint64_t busy = 0;

	for (size_t i = 0; i < t->nu; i++)
		busy += t->u[i].cov;
	return busy;
}
