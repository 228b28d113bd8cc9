/* SPDX-License-Identifier: MIT */
/*
 * The tally of a trace (see tally.h for what it sums): one streaming pass. Each
 * event goes to its table here; a complete slice goes on to tally_nest.c, which
 * finds its parent and children for the self time (and says how, and what that
 * assumes).
 */
#include "tally.h"

#include "common/names.h"
#include "tally_nest.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* A name or cat into a row's key: only a string names a row; anything else is
 * "(none)", one row for all. */
static int key_add_row_name(struct buf *b, const struct trace_value *v)
{
	static const struct trace_value absent = {TRACE_ABSENT, NULL, 0};

	return trace_key_add(b, v->type == TRACE_STRING ? v : &absent);
}

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

		if (key_add_row_name(&c->key, v))
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
	b = array_grow(t->open, &t->open_cap, t->depth + 1, sizeof(*b), 8);
	if (b == NULL) {
		c->nomem = true;
		return;
	}
	t->open = b;
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
	tally_nest_arrive(c, t, b->ts, ev->ts_ns, b->row, b->name);
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
		tally_nest_arrive(c, t, ev->ts_ns, ev->ts_ns + ev->dur_ns, row,
				  hash_value(&ev->name));
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
		if (ev->nargs >= 2 && tally_polls_add(&c->polls, ev) != 0)
			c->nomem = true;
		break;
	default:
		break;
	}
	tally_nest_time_point(t, ev->ts_ns);
	tally_nest_release(c, t, false);
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
	if (trace_async_key(&c->key, ev)) {
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
		struct async_row *row;
		uint64_t dur = span_ns(start, ev->ts_ns);

		c->key.len = 0;
		if (key_add_row_name(&c->key, &ev->name)) {
			c->nomem = true;
			return;
		}
		row = table_put(&c->async_rows, c->key.p, c->key.len, NULL);
		if (row == NULL || rtr__sketch_add(&row->dur, dur)) {
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
	copy = trace_value_dup(a);
	if (l == NULL || copy == NULL) {
		free(copy);
		goto nomem;
	}
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

	if (trace_value_is(&ev->name, RTR__MARK_START)) {
		c->saw_start = true;
		return;
	}
	if (!trace_value_is(&ev->name, RTR__MARK_END))
		return;
	/* The last one counts: a repair appends a final one after a provisional one. */
	memset(m, 0, sizeof(*m));
	m->seen = true;
	v = trace_event_arg(ev, RTR__KEY_FINAL);
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
			tally_nest_arrive(c, t, b->ts, t->last_ns > b->ts ? t->last_ns : b->ts,
					  b->row, b->name);
		}
		tally_nest_release(c, t, true);
		t->busy = tally_nest_covered(t);
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
		rtr__sketch_free(&r->dur);
	table_destroy(&c->rows);
	for (struct async_open *o = table_first(&c->async_open); o != NULL; o = table_next(o))
		free(o->more);
	table_destroy(&c->async_open);
	for (struct async_row *r = table_first(&c->async_rows); r != NULL; r = table_next(r))
		rtr__sketch_free(&r->dur);
	table_destroy(&c->async_rows);
	table_destroy(&c->counters);
	tally_polls_destroy(&c->polls);
	for (struct label *l = table_first(&c->labels); l != NULL; l = table_next(l))
		free(l->name);
	table_destroy(&c->labels);
	buf_free(&c->key);
}

void tally_init(struct tally *c, const struct tally_options *opt)
{
	memset(c, 0, sizeof(*c));
	c->opt = opt;
	threads_init(&c->threads, sizeof(struct tally_thread));
	table_init(&c->rows, sizeof(struct row));
	table_init(&c->async_open, sizeof(struct async_open));
	table_init(&c->async_rows, sizeof(struct async_row));
	table_init(&c->counters, sizeof(struct counter));
	tally_polls_init(&c->polls);
	table_init(&c->labels, sizeof(struct label));
}

int tally_read(struct tally *c, struct trace *r)
{
	const struct trace_event *ev;
	const struct trace_status *st;

	c->file = trace_name(r);
	while (!c->nomem && trace_next(r, &ev) == 1)
		on_event(c, ev);
	st = c->st = trace_status(r);
	if (!c->nomem)
		finish(c);
	if (c->nomem)
		return TALLY_NOMEM;
	if (st->not_a_trace != NULL && st->error == TRACE_OK)
		return TALLY_NOT_A_TRACE;
	if (st->error != TRACE_OK &&
	    (st->events == 0 || st->error == TRACE_ERR_IO || st->error == TRACE_ERR_NOMEM))
		return TALLY_UNREADABLE; /* nothing to show, or the input failed */
	return TALLY_OK;
}

void tally_destroy(struct tally *c)
{
	free_state(c);
	c->st = NULL;
}

/* A decoded string key: NULL for "(none)". */
const char *tally_key_string(const struct table *t, const void *value, size_t *len)
{
	size_t klen;

	return trace_key_string(table_key(t, value, &klen), len);
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
