/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace stats`: where the time went, from one streaming pass over a trace.
 *
 * Per name (or category, or thread): count, total, self time, mean, p50, p99, max of
 * the slices (X, and B/E pairs); per thread, the share of its observed span covered
 * by top-level slices; async spans (b/e) by name; counter series; and what the
 * recorder's end marker says it dropped. State is per name, per thread, per open
 * slice and per open async id, never per event (see the bounds below).
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
 *
 * Percentiles come from a sketch per name (sketch.h: within 1 %); count, total,
 * self, min, max and mean are exact integers of nanoseconds.
 */
#include "cli.h"
#include "json.h"
#include "progress.h"
#include "reader.h"
#include "sketch.h"
#include "table.h"
#include "threads.h"

#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Events of disorder tolerated on a thread (see the design above). */
#define WINDOW 16
/* Slices waiting in one thread's reorder heap before the earliest is released anyway. */
#define PENDING_MAX 4096
/* Completed slices waiting for a parent, per thread, before the older half is merged. */
#define UNCLAIMED_MAX 1024

/* end - start for end >= start, exact (in uint64: the difference of two int64 may
 * not fit in one). */
static uint64_t span_ns(int64_t start, int64_t end)
{
	return (uint64_t)end - (uint64_t)start;
}

static const char end_marker_name[] = "ringtrace: end";
static const char start_marker_name[] = "ringtrace: start";

enum by { BY_NAME, BY_CAT, BY_THREAD };

static const char *const by_names[] = {
	[BY_NAME] = "name", [BY_CAT] = "cat", [BY_THREAD] = "thread"};

struct stats_options {
	enum by by;
	uint64_t top; /* rows shown; 0: all */
	bool json;
};

/* The slices of one name, category or thread. */
struct row {
	uint64_t total, self; /* ns */
	struct sketch dur;    /* count, min and max exact */
	int64_t pid, tid;     /* BY_THREAD */
};

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

/* Per thread, after the shared thread_state (threads.h, whose B stack is not used:
 * it copies each B's strings, and stats needs only hashes). */
struct sthread {
	struct open_b *open;
	size_t depth, open_cap;
	struct pending *heap;
	size_t nheap, heap_cap;
	int64_t recent[WINDOW]; /* time points of the last WINDOW events */
	unsigned nrecent, recent_at;
	bool has_mark;
	int64_t mark;
	bool has_done; /* the last slice processed, to find late ones */
	int64_t done_start, done_end;
	struct unclaimed *u;
	size_t nu, ucap;
	uint64_t seq, slices;
	bool has_span;
	int64_t first_ns, last_ns;
	uint64_t busy;
};

/* A b with no e yet: the starts of the open ones under one (cat, id, name). */
struct async_open {
	int64_t ts0;
	int64_t *more; /* starts after the first, when the same key nests */
	uint32_t n, cap;
};

struct async_row {
	uint64_t total;
	struct sketch dur;
};

struct counter {
	uint64_t samples;
	double min, max;
};

struct label {
	char *name;
	size_t len;
};

#define END_COUNTS(X)                     \
	X(DROPPED, "dropped")             \
	X(FULL, "dropped_ring_full")      \
	X(LARGE, "dropped_too_large")     \
	X(IO, "dropped_io")               \
	X(ARGS_CUT, "args_cut")           \
	X(REENTRANT, "dropped_reentrant") \
	X(CORRUPT, "dropped_corrupt") X(NO_TRACK, "dropped_no_track")
#define END_ENUM(id, key) END_##id,
#define END_KEY(id, key)  key,
enum { END_COUNTS(END_ENUM) END_NCOUNTS };
static const char *const end_keys[END_NCOUNTS] = {END_COUNTS(END_KEY)};

struct end_marker {
	bool seen, has_final, final, repaired;
	bool has[END_NCOUNTS];
	uint64_t v[END_NCOUNTS];
};

/* Counts of things the stats read past; each gets a note. */
#define ANOMALIES(X)                                                                            \
	X(END_WITHOUT_BEGIN, "end_without_begin", "E without a B open on its thread (ignored)") \
	X(END_MISMATCH, "end_mismatch", "E whose name or cat is not its B's (it ends the B)")   \
	X(UNENDED, "unended", "B never ended (counted to the latest time on its thread)")       \
	X(NO_DUR, "no_dur", "X without a dur (ignored)")                                        \
	X(NEGATIVE, "negative", "slice with a negative duration (ignored)")                     \
	X(OVERLAP, "partial_overlap", "slice overlapping an earlier one partly (not nested)")   \
	X(LATE, "late", "slice too far out of order to nest (its self time is its time)")       \
	X(APPROX, "approx_self", "slice whose children's time was estimated (see --help)")      \
	X(ASYNC_UNMATCHED, "async_unmatched_end", "async e without its b (ignored)")            \
	X(ASYNC_UNENDED, "async_unended", "async b never ended (left out)")                     \
	X(NO_TS, "no_ts", "slice or async event without a numeric ts (ignored)")
#define AN_ENUM(id, key, what) AN_##id,
#define AN_ROW(id, key, what)  {key, what},
enum { ANOMALIES(AN_ENUM) AN_COUNT };
static const struct {
	const char *key, *what;
} anomalies[AN_COUNT] = {ANOMALIES(AN_ROW)};

struct stats {
	const struct stats_options *opt;
	const char *file;
	struct threads threads;
	struct table rows;	 /* key (by opt->by) -> struct row */
	struct table async_open; /* (cat, id, name) -> struct async_open */
	struct table async_rows; /* name -> struct async_row */
	struct table counters;	 /* (name, series) -> struct counter */
	struct table labels;	 /* "p" pid or "t" pid tid -> struct label (M events) */
	struct buf key;
	struct end_marker end;
	bool saw_start;
	uint64_t slices, async_spans;
	uint64_t anomaly[AN_COUNT];
	bool has_time;
	int64_t first_ns, last_ns;
	bool nomem;
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

static struct row *row_for(struct stats *c, const struct trace_event *ev, int64_t pid, int64_t tid)
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
	row = table_put(&c->rows, c->key.p, c->key.len, &created);
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

static int heap_push(struct sthread *t, const struct pending *p)
{
	size_t i;

	if (t->nheap == t->heap_cap) {
		size_t n = t->heap_cap ? t->heap_cap * 2 : 16;
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

static struct pending heap_pop(struct sthread *t)
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
static void compress(struct sthread *t)
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
static void process(struct stats *c, struct sthread *t, const struct pending *p)
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
		size_t n = t->ucap ? t->ucap * 2 : 16;

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
static void release(struct stats *c, struct sthread *t, bool flush)
{
	while (t->nheap > 0 &&
	       (flush || t->nheap > PENDING_MAX || (t->has_mark && t->heap[0].end < t->mark))) {
		struct pending p = heap_pop(t);

		process(c, t, &p);
	}
}

/* A time point of the thread: it moves the mark once WINDOW more have come. */
static void time_point(struct sthread *t, int64_t ts)
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

static void note_span(struct stats *c, struct sthread *t, int64_t first, int64_t last)
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
static void arrive(struct stats *c, struct sthread *t, int64_t start, int64_t end, struct row *row,
		   uint64_t name)
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

static void on_begin(struct stats *c, struct thread_state *th, struct sthread *t,
		     const struct trace_event *ev)
{
	struct open_b *b;
	struct row *row = row_for(c, ev, th->pid, th->tid);

	if (row == NULL)
		return;
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

static void on_end(struct stats *c, struct sthread *t, const struct trace_event *ev)
{
	struct open_b *b;

	if (t->depth == 0) {
		c->anomaly[AN_END_WITHOUT_BEGIN]++;
		return;
	}
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

static void on_complete(struct stats *c, struct thread_state *th, struct sthread *t,
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
static void on_thread_event(struct stats *c, const struct trace_event *ev)
{
	struct thread_state *th;
	struct sthread *t;
	int64_t last;

	if (!ev->has_ts) {
		if (ev->phase == 'B' || ev->phase == 'E' || ev->phase == 'X')
			c->anomaly[AN_NO_TS]++;
		return;
	}
	th = threads_of(&c->threads, ev);
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

static void on_async(struct stats *c, const struct trace_event *ev)
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

static void on_counter(struct stats *c, const struct trace_event *ev)
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

static void on_metadata(struct stats *c, const struct trace_event *ev)
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

static void on_instant(struct stats *c, const struct trace_event *ev)
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

static void on_event(struct stats *c, const struct trace_event *ev)
{
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
static void finish(struct stats *c)
{
	for (struct thread_state *th = threads_first(&c->threads); th != NULL;
	     th = threads_next(th)) {
		struct sthread *t = thread_extra(th);

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

static void free_state(struct stats *c)
{
	for (struct thread_state *th = threads_first(&c->threads); th != NULL;
	     th = threads_next(th)) {
		struct sthread *t = thread_extra(th);

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

/* ------------------------------------------------------------------ report */

/* A decoded string key: NULL for "(none)". */
static const char *key_string(const struct table *t, const void *value, size_t *len)
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

static const struct label *label_of(const struct stats *c, char kind, int64_t pid, int64_t tid)
{
	char k[1 + 2 * sizeof(int64_t)];

	k[0] = kind;
	memcpy(k + 1, &pid, sizeof(pid));
	memcpy(k + 1 + sizeof(pid), &tid, sizeof(tid));
	return table_get(&c->labels, k, kind == 'p' ? 1 + sizeof(pid) : sizeof(k));
}

/* "process / thread (pid/tid)", leaving out the names not given. */
static int thread_label(const struct stats *c, struct buf *b, int64_t pid, int64_t tid)
{
	const struct label *p = label_of(c, 'p', pid, 0), *t = label_of(c, 't', pid, tid);
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

/* Text for a terminal: no byte that moves the cursor. */
static void put_clean(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];

		putchar(ch < 0x20 || ch == 0x7f ? '?' : ch);
	}
}

/* ns for people: "812 ns", "1.234 us", "12.35 ms", "123.5 s", four digits at most. */
static const char *human_ns(char *out, size_t size, uint64_t ns)
{
	static const char *const units[] = {"ns", "us", "ms", "s"};
	double v = (double)ns;
	int u = 0;

	if (ns < 1000) {
		snprintf(out, size, "%" PRIu64 " ns", ns);
		return out;
	}
	while (u < 3 && v >= 999.95) {
		v /= 1000;
		u++;
	}
	snprintf(out, size,
		 v >= 99.995   ? "%.1f %s"
		 : v >= 9.9995 ? "%.2f %s"
			       : "%.3f %s",
		 v, units[u]);
	return out;
}

/* A value to sort, with its place in the file: ties keep the order of first
 * appearance (qsort is not stable), so that a report does not change from run to run. */
struct ranked {
	void *v;
	uint64_t key; /* the larger, the earlier */
	size_t at;
};

static int by_rank(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? 1 : -1;
	return (x->at > y->at) - (x->at < y->at);
}

static uint64_t row_rank(const void *v)
{
	return ((const struct row *)v)->total;
}

static uint64_t async_rank(const void *v)
{
	return ((const struct async_row *)v)->total;
}

/* The values of a table by rank, the largest first (*n of them); NULL when empty or out
 * of memory. Each v[i].v is a value of the table. */
static struct ranked *sorted(const struct table *t, uint64_t (*rank)(const void *), size_t *n)
{
	struct ranked *v = t->count > 0 ? malloc(t->count * sizeof(*v)) : NULL;
	size_t i = 0;

	*n = 0;
	if (v == NULL)
		return NULL;
	for (void *p = table_first(t); p != NULL; p = table_next(p), i++)
		v[i] = (struct ranked){p, rank(p), i};
	qsort(v, i, sizeof(*v), by_rank);
	*n = i;
	return v;
}

/* Threads with slices, busiest first. */
static struct ranked *busy_threads(const struct stats *c, size_t *n)
{
	size_t cap = c->threads.map.count, i = 0, at = 0;
	struct ranked *v = cap > 0 ? malloc(cap * sizeof(*v)) : NULL;

	*n = 0;
	if (v == NULL)
		return NULL;
	for (struct thread_state *th = threads_first(&c->threads); th != NULL;
	     th = threads_next(th), at++) {
		const struct sthread *t = thread_extra(th);

		if (t->slices > 0)
			v[i++] = (struct ranked){th, t->busy, at};
	}
	qsort(v, i, sizeof(*v), by_rank);
	*n = i;
	return v;
}

static size_t shown_rows(const struct stats *c, size_t n)
{
	return c->opt->top == 0 || c->opt->top > n ? n : (size_t)c->opt->top;
}

static uint64_t mean_of(uint64_t total, uint64_t count)
{
	return count == 0 ? 0 : total / count + (total % count * 2 >= count ? 1 : 0);
}

/* The warnings about the file as a whole, one line each, into lines (NUL-separated). */
static int file_warnings(const struct stats *c, const struct trace_reader_status *st,
			 struct buf *lines, size_t *count)
{
	char w[1024];
	int n = 0;

	*count = 0;
#define WARN(...)                                     \
	do {                                          \
		snprintf(w, sizeof(w), __VA_ARGS__);  \
		if (buf_put(lines, w, strlen(w) + 1)) \
			return -1;                    \
		n++;                                  \
	} while (0)
	if (st->error != TRACE_OK)
		WARN("the read stopped at an error (%s): these stats cover the %" PRIu64
		     " events before it",
		     st->message, st->events);
	if (st->cut_in_event)
		WARN("the file ends inside an event (%" PRIu64 " bytes, left out)", st->cut_bytes);
	if (st->cut)
		WARN("the file is cut short (no closing ']'): these stats cover its %" PRIu64
		     " whole events",
		     st->events);
	if (st->gzip_cut)
		WARN("the last gzip member is cut short");
	if (c->end.seen && c->end.has_final && !c->end.final)
		WARN("the end marker says final:false: the run did not stop cleanly, and its "
		     "counts are as of the recorder's last write");
	else if (!c->end.seen && c->saw_start && st->error == TRACE_OK)
		WARN("no end marker: the recorder did not finish the file (killed?), so what it "
		     "dropped is unknown");
	if (c->anomaly[AN_LATE] > 0)
		WARN("%" PRIu64 " slices came too far out of order to be nested: their self time "
		     "counts as their whole time, and their parents' self time is too high",
		     c->anomaly[AN_LATE]);
	if (c->anomaly[AN_APPROX] > 0)
		WARN("%" PRIu64 " slices have an estimated self time: a parent arrived after more "
		     "than %d of its thread's slices and began inside a merged run of them",
		     c->anomaly[AN_APPROX], UNCLAIMED_MAX);
#undef WARN
	*count = (size_t)n;
	return 0;
}

/* ----------------------------------------------------------- human report */

static void print_header(const struct stats *c, const struct trace_reader_status *st,
			 size_t nthreads, const struct buf *warnings, size_t nwarnings)
{
	const char *w = warnings->p;
	static const char *const forms[] = {
		[TRACE_FORM_NONE] = "no JSON value",
		[TRACE_FORM_ARRAY] = "bare array",
		[TRACE_FORM_OBJECT] = "object form",
	};
	char b[32];

	printf("%s: %" PRIu64 " event%s on %zu thread%s", c->file, st->events,
	       st->events == 1 ? "" : "s", nthreads, nthreads == 1 ? "" : "s");
	if (c->has_time)
		printf(", %s from first to last",
		       human_ns(b, sizeof(b), span_ns(c->first_ns, c->last_ns)));
	printf("; %s%s, %s\n", forms[st->form], st->gzip ? ", gzip" : "",
	       st->error != TRACE_OK ? "read stopped at an error"
	       : st->complete	     ? "complete"
	       : st->cut	     ? "cut short"
				     : "ended");
	if (c->end.seen) {
		const struct end_marker *m = &c->end;

		printf("recorder: dropped %" PRIu64 " (ring full %" PRIu64 ", too large %" PRIu64
		       ", I/O %" PRIu64,
		       m->v[END_DROPPED], m->v[END_FULL], m->v[END_LARGE], m->v[END_IO]);
		/* reasons newer files have: shown when they happened */
		if (m->v[END_REENTRANT] != 0)
			printf(", reentrant %" PRIu64, m->v[END_REENTRANT]);
		if (m->v[END_CORRUPT] != 0)
			printf(", corrupt %" PRIu64, m->v[END_CORRUPT]);
		if (m->v[END_NO_TRACK] != 0)
			printf(", no track %" PRIu64, m->v[END_NO_TRACK]);
		printf("), args cut %" PRIu64 "; end marker %s%s\n", m->v[END_ARGS_CUT],
		       !m->has_final ? "without final"
		       : m->final    ? "final"
				     : "not final",
		       m->repaired ? ", repaired" : "");
	} else {
		printf("recorder: no end marker, so no counts of dropped events\n");
	}
	for (size_t i = 0; i < nwarnings; i++, w += strlen(w) + 1)
		printf("warning: %s\n", w);
}

static void print_slices(const struct stats *c)
{
	static const char *const nones[] = {[BY_NAME] = "(no name)", [BY_CAT] = "(no cat)"};
	char s[7][32];
	struct buf label = {0};
	size_t n, shown;
	struct ranked *rows = sorted(&c->rows, row_rank, &n);

	shown = shown_rows(c, n);
	printf("\nslices by %s: %" PRIu64 " slice%s, %zu %s (percentiles within %g%%)\n",
	       by_names[c->opt->by], c->slices, c->slices == 1 ? "" : "s", n,
	       c->opt->by == BY_NAME  ? (n == 1 ? "name" : "names")
	       : c->opt->by == BY_CAT ? (n == 1 ? "category" : "categories")
				      : (n == 1 ? "thread" : "threads"),
	       SKETCH_ALPHA * 100);
	if (shown < n)
		printf("(the top %zu by total; --top 0 shows all)\n", shown);
	if (n == 0) {
		free(rows);
		return;
	}
	printf("%10s %10s %10s %10s %10s %10s %10s  %s\n", "count", "total", "self", "mean", "p50",
	       "p99", "max", by_names[c->opt->by]);
	for (size_t i = 0; i < shown; i++) {
		const struct row *r = rows[i].v;

		printf("%10" PRIu64 " %10s %10s %10s %10s %10s %10s  ", r->dur.count,
		       human_ns(s[0], sizeof(s[0]), r->total),
		       human_ns(s[1], sizeof(s[1]), r->self),
		       human_ns(s[2], sizeof(s[2]), mean_of(r->total, r->dur.count)),
		       human_ns(s[3], sizeof(s[3]), sketch_quantile(&r->dur, 5000)),
		       human_ns(s[4], sizeof(s[4]), sketch_quantile(&r->dur, 9900)),
		       human_ns(s[5], sizeof(s[5]), r->dur.max));
		if (c->opt->by == BY_THREAD) {
			if (thread_label(c, &label, r->pid, r->tid) == 0)
				put_clean(label.p, label.len - 1);
		} else {
			size_t len;
			const char *k = key_string(&c->rows, r, &len);

			if (k != NULL)
				put_clean(k, len);
			else
				fputs(nones[c->opt->by], stdout);
		}
		putchar('\n');
	}
	buf_free(&label);
	free(rows);
}

static void print_threads(const struct stats *c)
{
	char s[2][32];
	struct buf label = {0};
	size_t n, shown;
	struct ranked *v = busy_threads(c, &n);

	if (n == 0) {
		free(v);
		return;
	}
	shown = shown_rows(c, n);
	printf("\nbusy share by thread: top-level slices over the span from its first to its "
	       "last event\n");
	if (shown < n)
		printf("(the %zu busiest of %zu; --top 0 shows all)\n", shown, n);
	printf("%10s %10s %7s  %s\n", "busy", "span", "share", "thread");
	for (size_t i = 0; i < shown; i++) {
		struct thread_state *th = v[i].v;
		const struct sthread *t = thread_extra(th);
		uint64_t span = span_ns(t->first_ns, t->last_ns);

		printf("%10s %10s ", human_ns(s[0], sizeof(s[0]), t->busy),
		       human_ns(s[1], sizeof(s[1]), span));
		if (span > 0)
			printf("%6.1f%%  ", 100.0 * (double)t->busy / (double)span);
		else
			printf("%7s  ", "-");
		if (thread_label(c, &label, th->pid, th->tid) == 0)
			put_clean(label.p, label.len - 1);
		putchar('\n');
	}
	buf_free(&label);
	free(v);
}

static void print_async(const struct stats *c)
{
	char s[5][32];
	size_t n, shown;
	struct ranked *rows = sorted(&c->async_rows, async_rank, &n);

	if (n == 0) {
		free(rows);
		return;
	}
	shown = shown_rows(c, n);
	printf("\nasync spans by name: %" PRIu64 " span%s (b/e matched on cat, id and name), %zu "
	       "name%s\n",
	       c->async_spans, c->async_spans == 1 ? "" : "s", n, n == 1 ? "" : "s");
	if (shown < n)
		printf("(showing %zu; --top 0 shows all)\n", shown);
	printf("%10s %10s %10s %10s %10s %10s  %s\n", "count", "total", "mean", "p50", "p99", "max",
	       "name");
	for (size_t i = 0; i < shown; i++) {
		const struct async_row *r = rows[i].v;
		size_t len;
		const char *k = key_string(&c->async_rows, r, &len);

		printf("%10" PRIu64 " %10s %10s %10s %10s %10s  ", r->dur.count,
		       human_ns(s[0], sizeof(s[0]), r->total),
		       human_ns(s[1], sizeof(s[1]), mean_of(r->total, r->dur.count)),
		       human_ns(s[2], sizeof(s[2]), sketch_quantile(&r->dur, 5000)),
		       human_ns(s[3], sizeof(s[3]), sketch_quantile(&r->dur, 9900)),
		       human_ns(s[4], sizeof(s[4]), r->dur.max));
		if (k != NULL)
			put_clean(k, len);
		else
			fputs("(no name)", stdout);
		putchar('\n');
	}
	free(rows);
}

/* The name and series of a counter's key. */
static void counter_key(const struct table *t, const struct counter *k, const char **name,
			size_t *name_len, const char **series, size_t *series_len)
{
	size_t len;
	const char *p = table_key(t, k, &len);

	memcpy(name_len, p, sizeof(*name_len));
	*name = p + sizeof(*name_len);
	*series = *name + *name_len;
	*series_len = len - sizeof(*name_len) - *name_len;
}

static void print_counters(const struct stats *c)
{
	size_t n = c->counters.count, shown = shown_rows(c, n), i = 0;

	if (n == 0)
		return;
	printf("\ncounters: %zu series\n", n);
	if (shown < n)
		printf("(the first %zu in file order; --top 0 shows all)\n", shown);
	printf("%10s %14s %14s  %s\n", "samples", "min", "max", "series");
	for (const struct counter *k = table_first(&c->counters); k != NULL && i < shown;
	     k = table_next(k), i++) {
		const char *name, *series;
		size_t name_len, series_len;

		counter_key(&c->counters, k, &name, &name_len, &series, &series_len);
		printf("%10" PRIu64 " %14.6g %14.6g  ", k->samples, k->min, k->max);
		put_clean(name, name_len);
		putchar(' ');
		put_clean(series, series_len);
		putchar('\n');
	}
}

static void print_notes(const struct stats *c)
{
	bool any = false;

	for (int i = 0; i < AN_COUNT; i++) {
		if (c->anomaly[i] == 0 || i == AN_LATE || i == AN_APPROX)
			continue; /* those two are warnings */
		if (!any)
			printf("\nnotes:\n");
		any = true;
		printf("  %" PRIu64 " %s\n", c->anomaly[i], anomalies[i].what);
	}
}

/* ------------------------------------------------------------ JSON report */

static int jstr(struct buf *b, const char *s, size_t len)
{
	return json_put_string(b, s, len) < 0 ? -1 : 0;
}

static int jkey(struct buf *b, bool *first, const char *key)
{
	if (!*first && buf_putc(b, ','))
		return -1;
	*first = false;
	return jstr(b, key, strlen(key)) || buf_putc(b, ':');
}

static int ju64(struct buf *b, bool *first, const char *key, uint64_t v)
{
	return jkey(b, first, key) || buf_put_u64(b, v);
}

static int ji64(struct buf *b, bool *first, const char *key, int64_t v)
{
	return jkey(b, first, key) || buf_put_i64(b, v);
}

static int jbool(struct buf *b, bool *first, const char *key, bool v)
{
	return jkey(b, first, key) || buf_puts(b, v ? "true" : "false");
}

static int jdouble(struct buf *b, bool *first, const char *key, double v)
{
	char num[40];

	/* the shortest text that reads back as v; "null" for NaN and infinities */
	return jkey(b, first, key) || buf_put(b, num, (size_t)(rtr__json_f64(num, v) - num));
}

static int jsketch(struct buf *b, bool *first, uint64_t total, const struct sketch *s)
{
	return ju64(b, first, "count", s->count) || ju64(b, first, "total_ns", total) ||
	       ju64(b, first, "mean_ns", mean_of(total, s->count)) ||
	       ju64(b, first, "min_ns", s->min) ||
	       ju64(b, first, "p50_ns", sketch_quantile(s, 5000)) ||
	       ju64(b, first, "p99_ns", sketch_quantile(s, 9900)) ||
	       ju64(b, first, "max_ns", s->max);
}

static int json_rows(const struct stats *c, struct buf *b)
{
	struct buf label = {0};
	size_t n, shown;
	struct ranked *rows = sorted(&c->rows, row_rank, &n);
	bool top = true;
	int err;

	if (c->rows.count > 0 && rows == NULL)
		return -1;
	shown = shown_rows(c, n);
	err = buf_puts(b, "\"slices\":{") || ju64(b, &top, "count", c->slices) ||
	      ju64(b, &top, "keys", n) || jkey(b, &top, "rows") || buf_putc(b, '[');
	for (size_t i = 0; i < shown && !err; i++) {
		const struct row *r = rows[i].v;
		bool first = true;

		err = (i > 0 && buf_putc(b, ',')) || buf_putc(b, '{') || jkey(b, &first, "key");
		if (err)
			break;
		if (c->opt->by == BY_THREAD) {
			err = thread_label(c, &label, r->pid, r->tid) ||
			      jstr(b, label.p, label.len - 1) || ji64(b, &first, "pid", r->pid) ||
			      ji64(b, &first, "tid", r->tid);
		} else {
			size_t len;
			const char *k = key_string(&c->rows, r, &len);

			err = k != NULL ? jstr(b, k, len) : buf_puts(b, "null");
		}
		err = err || jsketch(b, &first, r->total, &r->dur) ||
		      ju64(b, &first, "self_ns", r->self) || buf_putc(b, '}');
	}
	err = err || buf_puts(b, "]}");
	buf_free(&label);
	free(rows);
	return err ? -1 : 0;
}

static int json_threads(const struct stats *c, struct buf *b)
{
	struct buf label = {0};
	size_t n, shown;
	struct ranked *v = busy_threads(c, &n);
	int err;

	if (c->threads.map.count > 0 && v == NULL)
		return -1;
	shown = shown_rows(c, n);
	err = buf_puts(b, "\"threads\":[");
	for (size_t i = 0; i < shown && !err; i++) {
		struct thread_state *th = v[i].v;
		const struct sthread *t = thread_extra(th);
		const struct label *p = label_of(c, 'p', th->pid, 0);
		const struct label *tl = label_of(c, 't', th->pid, th->tid);
		uint64_t span = span_ns(t->first_ns, t->last_ns);
		bool first = true;

		err = (i > 0 && buf_putc(b, ',')) || buf_putc(b, '{') ||
		      ji64(b, &first, "pid", th->pid) || ji64(b, &first, "tid", th->tid) ||
		      jkey(b, &first, "process_name") ||
		      (p != NULL ? jstr(b, p->name, p->len) : buf_puts(b, "null")) ||
		      jkey(b, &first, "thread_name") ||
		      (tl != NULL ? jstr(b, tl->name, tl->len) : buf_puts(b, "null")) ||
		      thread_label(c, &label, th->pid, th->tid) || jkey(b, &first, "label") ||
		      jstr(b, label.p, label.len - 1) || ju64(b, &first, "slices", t->slices) ||
		      ji64(b, &first, "first_ns", t->first_ns) ||
		      ji64(b, &first, "last_ns", t->last_ns) || ju64(b, &first, "span_ns", span) ||
		      ju64(b, &first, "busy_ns", t->busy) ||
		      (span > 0 ? jdouble(b, &first, "busy_share", (double)t->busy / (double)span)
				: jkey(b, &first, "busy_share") || buf_puts(b, "null")) ||
		      buf_putc(b, '}');
	}
	err = err || buf_putc(b, ']');
	buf_free(&label);
	free(v);
	return err ? -1 : 0;
}

static int json_async(const struct stats *c, struct buf *b)
{
	size_t n, shown;
	struct ranked *rows = sorted(&c->async_rows, async_rank, &n);
	bool top = true;
	int err;

	if (c->async_rows.count > 0 && rows == NULL)
		return -1;
	shown = shown_rows(c, n);
	err = buf_puts(b, "\"async\":{") || ju64(b, &top, "count", c->async_spans) ||
	      ju64(b, &top, "names", n) || jkey(b, &top, "rows") || buf_putc(b, '[');
	for (size_t i = 0; i < shown && !err; i++) {
		size_t len;
		const struct async_row *r = rows[i].v;
		const char *k = key_string(&c->async_rows, r, &len);
		bool first = true;

		err = (i > 0 && buf_putc(b, ',')) || buf_putc(b, '{') || jkey(b, &first, "name") ||
		      (k != NULL ? jstr(b, k, len) : buf_puts(b, "null")) ||
		      jsketch(b, &first, r->total, &r->dur) || buf_putc(b, '}');
	}
	err = err || buf_puts(b, "]}");
	free(rows);
	return err ? -1 : 0;
}

static int json_counters(const struct stats *c, struct buf *b)
{
	size_t shown = shown_rows(c, c->counters.count), i = 0;
	int err = buf_puts(b, "\"counters\":[");

	for (const struct counter *k = table_first(&c->counters); k != NULL && i < shown && !err;
	     k = table_next(k), i++) {
		const char *name, *series;
		size_t name_len, series_len;
		bool first = true;

		counter_key(&c->counters, k, &name, &name_len, &series, &series_len);
		err = (i > 0 && buf_putc(b, ',')) || buf_putc(b, '{') || jkey(b, &first, "name") ||
		      jstr(b, name, name_len) || jkey(b, &first, "series") ||
		      jstr(b, series, series_len) || ju64(b, &first, "samples", k->samples) ||
		      jdouble(b, &first, "min", k->min) || jdouble(b, &first, "max", k->max) ||
		      buf_putc(b, '}');
	}
	return err || buf_putc(b, ']') ? -1 : 0;
}

static int json_report(const struct stats *c, const struct trace_reader_status *st, size_t nthreads,
		       const struct buf *warnings, size_t nwarnings)
{
	static const char *const forms[] = {
		[TRACE_FORM_NONE] = "none",
		[TRACE_FORM_ARRAY] = "array",
		[TRACE_FORM_OBJECT] = "object",
	};
	struct buf b = {0};
	bool first = true, f2;
	const char *w = warnings->p;
	int err;

	err = buf_putc(&b, '{') || jkey(&b, &first, "file") || jstr(&b, c->file, strlen(c->file)) ||
	      jkey(&b, &first, "by") || buf_putc(&b, '"') || buf_puts(&b, by_names[c->opt->by]) ||
	      buf_putc(&b, '"') || jdouble(&b, &first, "relative_error", SKETCH_ALPHA) ||
	      ju64(&b, &first, "events", st->events) ||
	      ju64(&b, &first, "thread_count", nthreads) || jkey(&b, &first, "form") ||
	      buf_putc(&b, '"') || buf_puts(&b, forms[st->form]) || buf_putc(&b, '"') ||
	      jbool(&b, &first, "gzip", st->gzip) || jbool(&b, &first, "complete", st->complete) ||
	      jbool(&b, &first, "cut", st->cut) ||
	      ju64(&b, &first, "partial_event_bytes", st->cut_in_event ? st->cut_bytes : 0) ||
	      jkey(&b, &first, "error") ||
	      (st->error != TRACE_OK ? jstr(&b, st->message, strlen(st->message))
				     : buf_puts(&b, "null"));
	if (!err && c->has_time)
		err = ji64(&b, &first, "first_ns", c->first_ns) ||
		      ji64(&b, &first, "last_ns", c->last_ns) ||
		      ju64(&b, &first, "span_ns", span_ns(c->first_ns, c->last_ns));
	else if (!err)
		err = buf_puts(&b, ",\"first_ns\":null,\"last_ns\":null,\"span_ns\":null");
	err = err || jkey(&b, &first, "recorder");
	if (!err && c->end.seen) {
		f2 = true;
		err = buf_putc(&b, '{') || jkey(&b, &f2, "final") ||
		      buf_puts(&b, !c->end.has_final ? "null"
				   : c->end.final    ? "true"
						     : "false") ||
		      jbool(&b, &f2, "repaired", c->end.repaired);
		for (int i = 0; i < END_NCOUNTS && !err; i++)
			err = c->end.has[i] ? ju64(&b, &f2, end_keys[i], c->end.v[i])
					    : jkey(&b, &f2, end_keys[i]) || buf_puts(&b, "null");
		err = err || buf_putc(&b, '}');
	} else if (!err) {
		err = buf_puts(&b, "null");
	}
	err = err || jkey(&b, &first, "warnings") || buf_putc(&b, '[');
	for (size_t i = 0; i < nwarnings && !err; i++, w += strlen(w) + 1)
		err = (i > 0 && buf_putc(&b, ',')) || jstr(&b, w, strlen(w));
	err = err || buf_puts(&b, "],") || json_rows(c, &b) || buf_putc(&b, ',') ||
	      json_threads(c, &b) || buf_putc(&b, ',') || json_async(c, &b) || buf_putc(&b, ',') ||
	      json_counters(c, &b) || buf_puts(&b, ",\"anomalies\":{");
	f2 = true;
	for (int i = 0; i < AN_COUNT && !err; i++)
		err = ju64(&b, &f2, anomalies[i].key, c->anomaly[i]);
	err = err || buf_puts(&b, "}}\n");
	if (!err)
		fwrite(b.p, 1, b.len, stdout);
	buf_free(&b);
	return err ? -1 : 0;
}

/* --------------------------------------------------------------- command */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ringtrace stats [--by name|cat|thread] [--top N] [--json] FILE\n"
		"\n"
		"Reads the trace FILE (.json or .json.gz; - is standard input) in one pass and\n"
		"prints where the time went:\n"
		"  - slices (X, and B/E pairs) by name, category or thread: count, total,\n"
		"    self time (total less the time of direct children on the same thread),\n"
		"    mean, p50, p99 and max; sorted by total;\n"
		"  - per thread, the share of its span (first to last event) covered by\n"
		"    top-level slices;\n"
		"  - async spans (b/e, matched on cat, id and name) by name; counter series;\n"
		"  - what the recorder's end marker says it dropped, and a warning when the\n"
		"    file is cut short or the marker says final:false.\n"
		"\n"
		"Percentiles are within 1%% (a DDSketch per name); the other numbers are exact.\n"
		"X events may come in any order the writers use (start order, or the\n"
		"recorder's: each X when it ends); slices too far out of order to nest are\n"
		"counted in a warning.\n"
		"\n"
		"options:\n"
		"  -b, --by KEY      name (the default), cat or thread\n"
		"  -n, --top N       rows per table (default 20; 0: all), --json included\n"
		"  -j, --json        one JSON document, times in integer nanoseconds\n"
		"  -h, --help        this help\n"
		"\n"
		"exit status: 0 stats of the whole file (cut short included: a warning says\n"
		"so), 1 stats of the part before malformed input, 2 usage error, unreadable\n"
		"input or nothing readable.\n");
}

static int stats_file(const char *path, const struct stats_options *opt)
{
	struct progress bar;
	struct cli_warnings warnings = {.max = 10};
	struct trace_reader_options ro = {
		.on_issue = cli_warn_issue, .ctx = &warnings, .progress = &bar};
	struct stats c = {.opt = opt};
	const struct trace_reader_status *st;
	const struct trace_event *ev;
	struct trace_reader *r;
	struct buf wlines = {0};
	size_t nthreads = 0, nwarnings = 0;
	int rc, status = CLI_OK;

	progress_init(&bar, "reading");
	r = cli_open_trace("stats", path, &ro);
	if (r == NULL)
		return CLI_ERROR;
	c.file = warnings.file = trace_reader_name(r);
	threads_init(&c.threads, sizeof(struct sthread));
	table_init(&c.rows, sizeof(struct row));
	table_init(&c.async_open, sizeof(struct async_open));
	table_init(&c.async_rows, sizeof(struct async_row));
	table_init(&c.counters, sizeof(struct counter));
	table_init(&c.labels, sizeof(struct label));
	while (!c.nomem && (rc = trace_reader_next(r, &ev)) == 1)
		on_event(&c, ev);
	progress_finish(&bar);
	cli_warnings_done(&warnings);
	st = trace_reader_status(r);
	if (!c.nomem)
		finish(&c);
	nthreads = c.threads.map.count;
	if (c.nomem) {
		cli_error("stats", "%s: out of memory", c.file);
		status = CLI_ERROR;
	} else if (cli_not_a_trace("stats", c.file, st)) {
		status = CLI_FINDINGS;
	} else if (st->error != TRACE_OK &&
		   (st->events == 0 || st->error == TRACE_ERR_IO || st->error == TRACE_ERR_NOMEM)) {
		/* Nothing to show, or the input failed rather than being malformed. */
		cli_error("stats", "%s", st->message);
		status = CLI_ERROR;
	} else if (file_warnings(&c, st, &wlines, &nwarnings) != 0) {
		cli_error("stats", "out of memory");
		status = CLI_ERROR;
	} else {
		if (opt->json) {
			if (json_report(&c, st, nthreads, &wlines, nwarnings) != 0) {
				cli_error("stats", "out of memory");
				status = CLI_ERROR;
			}
		} else {
			print_header(&c, st, nthreads, &wlines, nwarnings);
			print_slices(&c);
			print_threads(&c);
			print_async(&c);
			print_counters(&c);
			print_notes(&c);
		}
		if (status == CLI_OK && st->error != TRACE_OK) {
			cli_error("stats", "%s", st->message);
			status = CLI_FINDINGS;
		}
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		cli_error("stats", "writing the report failed");
		status = CLI_ERROR;
	}
	buf_free(&wlines);
	free_state(&c);
	trace_reader_close(r);
	return status;
}

int cmd_stats(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"by", required_argument, NULL, 'b'},
		{"top", required_argument, NULL, 'n'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct stats_options opt = {.by = BY_NAME, .top = 20};
	int ch;

	while ((ch = getopt_long(argc, argv, "b:n:jh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'b':
			if (strcmp(optarg, "name") == 0)
				opt.by = BY_NAME;
			else if (strcmp(optarg, "cat") == 0)
				opt.by = BY_CAT;
			else if (strcmp(optarg, "thread") == 0)
				opt.by = BY_THREAD;
			else
				return cli_usage_error("stats",
						       "--by wants name, cat or thread, not '%s'",
						       optarg);
			break;
		case 'n':
			if (cli_parse_u64(optarg, &opt.top))
				return cli_usage_error("stats", "--top wants a number, not '%s'",
						       optarg);
			break;
		case 'j':
			opt.json = true;
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			return cli_usage_error("stats", "unknown option");
		}
	}
	if (argc - optind != 1)
		return cli_usage_error("stats",
				       argc == optind ? "no FILE to read" : "one FILE at a time");
	return stats_file(argv[optind], &opt);
}
