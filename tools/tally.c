/* SPDX-License-Identifier: MIT */
/*
 * The tally of a trace (see tally.h for what it sums): one streaming pass.
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
 * disjoint (FORMAT.md), and each thread's events are in order of start or in the
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
#include "tally.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Events of disorder tolerated on a thread (see the design above). */
#define WINDOW TALLY_WINDOW
/* Slices waiting in one thread's reorder heap before the earliest is released anyway. */
#define PENDING_MAX 4096
/* Completed slices waiting for a parent, per thread, before the older half is merged. */
#define UNCLAIMED_MAX TALLY_UNCLAIMED_MAX

static const char end_marker_name[] = "ringtrace: end";
static const char start_marker_name[] = "ringtrace: start";

const char *const tally_by_names[3] = {
	[BY_NAME] = "name", [BY_CAT] = "cat", [BY_THREAD] = "thread"};

int tally_parse_by(const char *s, enum tally_by *by)
{
	for (int i = 0; i < 3; i++) {
		if (strcmp(s, tally_by_names[i]) == 0) {
			*by = (enum tally_by)i;
			return 0;
		}
	}
	return -1;
}

#define END_KEY(id, key) key,
const char *const end_keys[END_NCOUNTS] = {END_COUNTS(END_KEY)};
#define AN_ROW(id, key, what) {key, what},
const struct anomaly_text anomalies[AN_COUNT] = {ANOMALIES(AN_ROW)};

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

/* A B not yet ended. */
struct open_b {
	int64_t ts;
	struct row *row;
	uint64_t name, cat; /* hashes: an E that does not match is counted */
};
/* ------------------------------------------------------------------- helpers */

/* FNV-1a: enough to tell names apart for the merging and the B/E match. */
static uint64_t hash_value(const struct trace_value *v)
{
	const unsigned char *p = (const unsigned char *)v->text;
	uint64_t h = 0xcbf29ce484222325u ^ (uint64_t)v->type;

	for (size_t i = 0; i < v->len; i++)
		h = (h ^ p[i]) * 0x100000001b3u;
	return h;
}

/* A value into a key: its type, length and bytes, so that no two values collide. */
static int key_add(struct buf *b, const struct trace_value *v)
{
	char t = (char)v->type;
	size_t len = v->type == TRACE_ABSENT ? 0 : v->len;

	return buf_putc(b, t) || buf_put(b, &len, sizeof(len)) || buf_put(b, v->text, len);
}

/* ------------------------------------------------------------- slice rows */

static struct row *row_for(struct tally *c, const struct trace_event *ev, int64_t pid, int64_t tid)
{
	struct row *row;
	bool created;

	c->key.len = 0;
	if (c->opt->by == BY_THREAD) {
		int64_t k[2] = {pid, tid};

		if (buf_put(&c->key, k, sizeof(k)))
			goto nomem;
	} else {
		const struct trace_value *v = c->opt->by == BY_NAME ? &ev->name : &ev->cat;
		struct trace_value absent = {TRACE_ABSENT, NULL, 0};

		/* Only a string names a row; anything else is "(none)". */
		if (key_add(&c->key, v->type == TRACE_STRING ? v : &absent))
			goto nomem;
	}
	row = table_get(&c->rows, c->key.p, c->key.len);
	/* A new row costs its sketch's bins too, once it has more than a few values. */
	if (row == NULL && !budget_take(&c->threads.budget, sizeof(*row) + c->key.len + 96 + 512)) {
		c->anomaly[AN_STATE_LIMIT]++;
		return NULL;
	}
	if (row == NULL)
		row = table_put(&c->rows, c->key.p, c->key.len, &created);
	else
		created = false;
	if (row == NULL)
		goto nomem;
	if (created) {
		row->pid = pid;
		row->tid = tid;
	}
	return row;
nomem:
	c->nomem = true;
	return NULL;
}

/* ------------------------------------------------------------- the heap */

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

	if (t->nheap == t->heap_cap) {
		size_t n = t->heap_cap ? t->heap_cap * 2
				       : 2; /* small: a million threads may each have one */
		struct pending *h = realloc(t->heap, n * sizeof(*h));

		if (h == NULL)
			return -1;
		t->heap = h;
		t->heap_cap = n;
	}
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

/* ------------------------------------------------------- the unclaimed stack */

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
	if (t->nu == t->ucap) {
		size_t n = t->ucap ? t->ucap * 2 : 2;

		u = realloc(t->u, n * sizeof(*u));
		if (u == NULL) {
			c->nomem = true;
			return;
		}
		t->u = u;
		t->ucap = n;
	}
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
static void release(struct tally *c, struct tally_thread *t, bool flush)
{
	while (t->nheap > 0 &&
	       (flush || t->nheap > PENDING_MAX || (t->has_mark && t->heap[0].end < t->mark))) {
		struct pending p = heap_pop(t);

		process(c, t, &p);
	}
}

/* A time point of the thread: it moves the mark once WINDOW more have come. */
static void time_point(struct tally_thread *t, int64_t ts)
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

static void note_span(struct tally *c, struct tally_thread *t, int64_t first, int64_t last)
{
	if (!t->has_span || first < t->first_ns)
		t->first_ns = first;
	if (!t->has_span || last > t->last_ns)
		t->last_ns = last;
	t->has_span = true;
	if (!c->has_time || first < c->first_ns)
		c->first_ns = first;
	if (!c->has_time || last > c->last_ns)
		c->last_ns = last;
	c->has_time = true;
}

/* A complete slice [start, end] of row on thread t. */
static void arrive(struct tally *c, struct tally_thread *t, int64_t start, int64_t end,
		   struct row *row, uint64_t name)
{
	struct pending p = {start, end, t->seq++, row, name};
	uint64_t dur = span_ns(start, end);

	if (sketch_add(&row->dur, dur) || heap_push(t, &p)) {
		c->nomem = true;
		return;
	}
	row->total += dur;
	t->slices++;
	c->slices++;
}

/* ----------------------------------------------------------------- events */

static void on_begin(struct tally *c, struct thread_state *th, struct tally_thread *t,
		     const struct trace_event *ev)
{
	struct open_b *b;
	struct row *row = row_for(c, ev, th->pid, th->tid);

	/* Past the state bound: counted as untracked, and its E ends nothing known. */
	if (row == NULL || t->untracked > 0 ||
	    !budget_take(&c->threads.budget, 2 * sizeof(struct open_b))) {
		if (row != NULL)
			c->anomaly[AN_STATE_LIMIT]++;
		t->untracked += !c->nomem;
		return;
	}
	if (t->depth == t->open_cap) {
		size_t n = t->open_cap ? t->open_cap * 2 : 8;

		b = realloc(t->open, n * sizeof(*b));
		if (b == NULL) {
			c->nomem = true;
			return;
		}
		t->open = b;
		t->open_cap = n;
	}
	b = &t->open[t->depth++];
	b->ts = ev->ts_ns;
	b->row = row;
	b->name = hash_value(&ev->name);
	b->cat = hash_value(&ev->cat);
}

static void on_end(struct tally *c, struct tally_thread *t, const struct trace_event *ev)
{
	struct open_b *b;

	if (t->untracked > 0) {
		t->untracked--;
		return;
	}
	if (t->depth == 0) {
		c->anomaly[AN_END_WITHOUT_BEGIN]++;
		return;
	}
	budget_give(&c->threads.budget, 2 * sizeof(struct open_b));
	b = &t->open[--t->depth];
	/* An E may leave out name and cat (Catapult matches by the stack); only one
	 * that names a different slice is counted. */
	if ((ev->name.type != TRACE_ABSENT && hash_value(&ev->name) != b->name) ||
	    (ev->cat.type != TRACE_ABSENT && hash_value(&ev->cat) != b->cat))
		c->anomaly[AN_END_MISMATCH]++;
	if (ev->ts_ns < b->ts) {
		c->anomaly[AN_NEGATIVE]++;
		return;
	}
	arrive(c, t, b->ts, ev->ts_ns, b->row, b->name);
}

static void on_complete(struct tally *c, struct thread_state *th, struct tally_thread *t,
			const struct trace_event *ev)
{
	struct row *row;

	if (!ev->has_dur) {
		c->anomaly[AN_NO_DUR]++;
		return;
	}
	if (ev->dur_ns < 0 || ev->ts_ns > INT64_MAX - ev->dur_ns) {
		c->anomaly[AN_NEGATIVE]++;
		return;
	}
	row = row_for(c, ev, th->pid, th->tid);
	if (row != NULL)
		arrive(c, t, ev->ts_ns, ev->ts_ns + ev->dur_ns, row, hash_value(&ev->name));
}

/* An event with a place on a thread: slices, and the time points of every other. */
static void on_thread_event(struct tally *c, const struct trace_event *ev)
{
	struct thread_state *th;
	struct tally_thread *t;
	int64_t last;

	if (!ev->has_ts) {
		if (ev->phase == 'B' || ev->phase == 'E' || ev->phase == 'X')
			c->anomaly[AN_NO_TS]++;
		return;
	}
	th = threads_of(&c->threads, ev);
	if (th == NULL && threads_refused(&c->threads)) {
		c->anomaly[AN_STATE_LIMIT]++;
		return;
	}
	if (th == NULL) {
		c->nomem = true;
		return;
	}
	t = thread_extra(th);
	last = ev->ts_ns;
	if (ev->phase == 'X' && ev->has_dur && ev->dur_ns > 0 && last <= INT64_MAX - ev->dur_ns)
		last += ev->dur_ns;
	note_span(c, t, ev->ts_ns, last);
	switch (ev->phase) {
	case 'B':
		on_begin(c, th, t, ev);
		break;
	case 'E':
		on_end(c, t, ev);
		break;
	case 'X':
		on_complete(c, th, t, ev);
		break;
	default:
		break;
	}
	time_point(t, ev->ts_ns);
	release(c, t, false);
}

static void on_async(struct tally *c, const struct trace_event *ev)
{
	struct async_open *o;
	int64_t start;

	if (ev->phase == 'n')
		return;
	if (!ev->has_ts) {
		c->anomaly[AN_NO_TS]++;
		return;
	}
	c->key.len = 0;
	if (key_add(&c->key, &ev->cat) || key_add(&c->key, &ev->id) ||
	    key_add(&c->key, &ev->name)) {
		c->nomem = true;
		return;
	}
	if (ev->phase == 'b') {
		o = table_put(&c->async_open, c->key.p, c->key.len, NULL);
		if (o == NULL) {
			c->nomem = true;
			return;
		}
		if (o->n == 0) {
			o->ts0 = ev->ts_ns;
		} else {
			if (o->n - 1 == o->cap) {
				uint32_t n = o->cap ? o->cap * 2 : 4;
				int64_t *m = realloc(o->more, n * sizeof(*m));

				if (m == NULL) {
					c->nomem = true;
					return;
				}
				o->more = m;
				o->cap = n;
			}
			o->more[o->n - 1] = ev->ts_ns;
		}
		o->n++;
		return;
	}
	o = table_get(&c->async_open, c->key.p, c->key.len);
	if (o == NULL || o->n == 0) {
		c->anomaly[AN_ASYNC_UNMATCHED]++;
		return;
	}
	/* The latest b of the key: same-key spans nest. */
	start = --o->n == 0 ? o->ts0 : o->more[o->n - 1];
	if (o->n == 0) {
		free(o->more);
		table_remove(&c->async_open, o);
	}
	if (ev->ts_ns < start) {
		c->anomaly[AN_NEGATIVE]++;
		return;
	}
	{
		struct trace_value absent = {TRACE_ABSENT, NULL, 0};
		struct async_row *row;
		uint64_t dur = span_ns(start, ev->ts_ns);

		c->key.len = 0;
		if (key_add(&c->key, ev->name.type == TRACE_STRING ? &ev->name : &absent)) {
			c->nomem = true;
			return;
		}
		row = table_put(&c->async_rows, c->key.p, c->key.len, NULL);
		if (row == NULL || sketch_add(&row->dur, dur)) {
			c->nomem = true;
			return;
		}
		row->total += dur;
		c->async_spans++;
	}
}

static void on_counter(struct tally *c, const struct trace_event *ev)
{
	for (size_t i = 0; i < ev->nargs; i++) {
		const struct trace_arg *a = &ev->arg[i];
		size_t name_len = ev->name.type == TRACE_STRING ? ev->name.len : 0;
		struct counter *k;
		bool created;
		double v;

		if (a->value.type != TRACE_NUMBER)
			continue;
		v = strtod(a->value.text, NULL);
		/* The series: the name's length, the name, the key (Perfetto: "<name> <key>"). */
		c->key.len = 0;
		if (buf_put(&c->key, &name_len, sizeof(name_len)) ||
		    buf_put(&c->key, ev->name.text, name_len) ||
		    buf_put(&c->key, a->key, a->key_len)) {
			c->nomem = true;
			return;
		}
		k = table_put(&c->counters, c->key.p, c->key.len, &created);
		if (k == NULL) {
			c->nomem = true;
			return;
		}
		if (created || v < k->min)
			k->min = v;
		if (created || v > k->max)
			k->max = v;
		k->samples++;
	}
}

static void on_metadata(struct tally *c, const struct trace_event *ev)
{
	const struct trace_value *a = trace_event_arg(ev, "name");
	int64_t pid, tid, k[2];
	struct label *l;
	char *copy;

	if (a == NULL || a->type != TRACE_STRING)
		return;
	trace_event_thread(ev, &pid, &tid);
	k[0] = pid;
	k[1] = tid;
	c->key.len = 0;
	if (trace_value_is(&ev->name, "process_name")) {
		if (buf_putc(&c->key, 'p') || buf_put(&c->key, k, sizeof(k[0])))
			goto nomem;
	} else if (trace_value_is(&ev->name, "thread_name")) {
		if (buf_putc(&c->key, 't') || buf_put(&c->key, k, sizeof(k)))
			goto nomem;
	} else {
		return;
	}
	l = table_put(&c->labels, c->key.p, c->key.len, NULL);
	copy = malloc(a->len + 1);
	if (l == NULL || copy == NULL) {
		free(copy);
		goto nomem;
	}
	memcpy(copy, a->text, a->len + 1);
	free(l->name); /* the last name given wins, as in the viewers */
	l->name = copy;
	l->len = a->len;
	return;
nomem:
	c->nomem = true;
}

static void on_instant(struct tally *c, const struct trace_event *ev)
{
	struct end_marker *m = &c->end;
	const struct trace_value *v;

	if (trace_value_is(&ev->name, start_marker_name)) {
		c->saw_start = true;
		return;
	}
	if (!trace_value_is(&ev->name, end_marker_name))
		return;
	/* The last one counts: a repair appends a final one after a provisional one. */
	memset(m, 0, sizeof(*m));
	m->seen = true;
	v = trace_event_arg(ev, "final");
	if (v != NULL && v->type == TRACE_BOOL) {
		m->has_final = true;
		m->final = strcmp(v->text, "true") == 0;
	}
	v = trace_event_arg(ev, "repaired");
	m->repaired = v != NULL && v->type == TRACE_BOOL && strcmp(v->text, "true") == 0;
	for (int i = 0; i < END_NCOUNTS; i++) {
		int64_t n;

		v = trace_event_arg(ev, end_keys[i]);
		if (v != NULL && v->type == TRACE_NUMBER &&
		    json_parse_i64(v->text, v->len, &n) == 0 && n >= 0) {
			m->has[i] = true;
			m->v[i] = (uint64_t)n;
		}
	}
}

static void on_event(struct tally *c, const struct trace_event *ev)
{
	/* Every event's thread counts (threads.h), an M event's or one without ts too. */
	if (threads_of(&c->threads, ev) == NULL && !threads_refused(&c->threads)) {
		c->nomem = true;
		return;
	}
	switch (ev->phase) {
	case 'B':
	case 'E':
	case 'X':
		on_thread_event(c, ev);
		return;
	case 'b':
	case 'e':
	case 'n':
		on_async(c, ev);
		break;
	case 'C':
		on_counter(c, ev);
		break;
	case 'M':
		on_metadata(c, ev);
		return;
	case 'i':
	case 'I':
		on_instant(c, ev);
		break;
	default:
		break;
	}
	/* Every event with a time is part of its thread's observed span. */
	if (ev->has_ts)
		on_thread_event(c, ev);
}

/* The end of the events: end what is open, release everything, sum the busy time. */
static void finish(struct tally *c)
{
	for (struct thread_state *th = threads_first(&c->threads); th != NULL;
	     th = threads_next(th)) {
		struct tally_thread *t = thread_extra(th);

		while (t->depth > 0 && !c->nomem) {
			struct open_b *b = &t->open[--t->depth];

			c->anomaly[AN_UNENDED]++;
			arrive(c, t, b->ts, t->last_ns > b->ts ? t->last_ns : b->ts, b->row,
			       b->name);
		}
		release(c, t, true);
		t->busy = 0;
		for (size_t i = 0; i < t->nu; i++)
			t->busy += t->u[i].cov;
	}
	for (struct async_open *o = table_first(&c->async_open); o != NULL; o = table_next(o))
		c->anomaly[AN_ASYNC_UNENDED] += o->n;
}

static void free_state(struct tally *c)
{
	for (struct thread_state *th = threads_first(&c->threads); th != NULL;
	     th = threads_next(th)) {
		struct tally_thread *t = thread_extra(th);

		free(t->open);
		free(t->heap);
		free(t->u);
	}
	threads_destroy(&c->threads);
	for (struct row *r = table_first(&c->rows); r != NULL; r = table_next(r))
		sketch_free(&r->dur);
	table_destroy(&c->rows);
	for (struct async_open *o = table_first(&c->async_open); o != NULL; o = table_next(o))
		free(o->more);
	table_destroy(&c->async_open);
	for (struct async_row *r = table_first(&c->async_rows); r != NULL; r = table_next(r))
		sketch_free(&r->dur);
	table_destroy(&c->async_rows);
	table_destroy(&c->counters);
	for (struct label *l = table_first(&c->labels); l != NULL; l = table_next(l))
		free(l->name);
	table_destroy(&c->labels);
	buf_free(&c->key);
}

int tally_read(struct tally *c, const struct tally_options *opt, const char *cmd, const char *path)
{
	struct trace_options ro = {
		.on_issue = cli_warn_issue, .ctx = &c->warnings, .progress = &c->bar};
	const struct trace_event *ev;
	const struct trace_status *st;

	memset(c, 0, sizeof(*c));
	c->opt = opt;
	c->file = c->warnings.file = path;
	c->warnings.max = 10;
	threads_init(&c->threads, sizeof(struct tally_thread));
	table_init(&c->rows, sizeof(struct row));
	table_init(&c->async_open, sizeof(struct async_open));
	table_init(&c->async_rows, sizeof(struct async_row));
	table_init(&c->counters, sizeof(struct counter));
	table_init(&c->labels, sizeof(struct label));
	progress_init(&c->bar, "reading");
	c->r = cli_open_trace(cmd, path, &ro);
	if (c->r == NULL)
		return CLI_ERROR;
	c->file = c->warnings.file = trace_name(c->r);
	while (!c->nomem && trace_next(c->r, &ev) == 1)
		on_event(c, ev);
	progress_finish(&c->bar);
	cli_warnings_done(&c->warnings);
	st = c->st = trace_status(c->r);
	if (!c->nomem)
		finish(c);
	if (c->nomem) {
		cli_error(cmd, "%s: out of memory", c->file);
		return CLI_ERROR;
	}
	if (cli_not_a_trace(cmd, c->file, st))
		return CLI_FINDINGS;
	if (st->error != TRACE_OK &&
	    (st->events == 0 || st->error == TRACE_ERR_IO || st->error == TRACE_ERR_NOMEM)) {
		/* Nothing to show, or the input failed rather than being malformed. */
		cli_error(cmd, "%s", st->message);
		return CLI_ERROR;
	}
	return CLI_OK;
}

void tally_destroy(struct tally *c)
{
	free_state(c);
	trace_close(c->r);
	c->r = NULL;
	c->st = NULL;
}

/* ------------------------------------------------------------------ labels */

/* A decoded string key: NULL for "(none)". */
const char *tally_key_string(const struct table *t, const void *value, size_t *len)
{
	size_t klen;
	const char *k = table_key(t, value, &klen);

	if (k[0] != (char)TRACE_STRING) {
		*len = 0;
		return NULL;
	}
	memcpy(len, k + 1, sizeof(*len));
	return k + 1 + sizeof(*len);
}

const struct label *tally_label(const struct tally *c, char kind, int64_t pid, int64_t tid)
{
	char k[1 + 2 * sizeof(int64_t)];

	k[0] = kind;
	memcpy(k + 1, &pid, sizeof(pid));
	memcpy(k + 1 + sizeof(pid), &tid, sizeof(tid));
	return table_get(&c->labels, k, kind == 'p' ? 1 + sizeof(pid) : sizeof(k));
}

/* "process / thread (pid/tid)", leaving out the names not given. */
int tally_thread_label(const struct tally *c, struct buf *b, int64_t pid, int64_t tid)
{
	const struct label *p = tally_label(c, 'p', pid, 0), *t = tally_label(c, 't', pid, tid);
	char num[64];

	b->len = 0;
	if (p != NULL && buf_put(b, p->name, p->len))
		return -1;
	if (p != NULL && t != NULL && buf_puts(b, " / "))
		return -1;
	if (t != NULL && buf_put(b, t->name, t->len))
		return -1;
	snprintf(num, sizeof(num), "%s(%" PRId64 "/%" PRId64 ")", p || t ? " " : "", pid, tid);
	return buf_puts(b, num) || buf_putc(b, '\0');
}
