/* SPDX-License-Identifier: MIT */
/*
 * The tally's tables summed over inputs (see tally_sum.h); the bytes form is in
 * tally_pack.c.
 */
#include "tally_sum.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* (file, pid, tid): a thread's key, as rows --by thread and the threads table use. */
#define THREAD_KEY_LEN (sizeof(uint32_t) + 2 * sizeof(int64_t))

static void thread_key(unsigned char *k, uint32_t file, int64_t pid, int64_t tid)
{
	memcpy(k, &file, sizeof(file));
	memcpy(k + sizeof(file), &pid, sizeof(pid));
	memcpy(k + sizeof(file) + sizeof(pid), &tid, sizeof(tid));
}

void tally_sum_init(struct tally_sum *s, enum tally_by by)
{
	memset(s, 0, sizeof(*s));
	s->by = by;
	table_init(&s->rows, sizeof(struct row));
	table_init(&s->threads, sizeof(struct sum_thread));
	table_init(&s->async_rows, sizeof(struct async_row));
	table_init(&s->counters, sizeof(struct counter));
	table_init(&s->labels, sizeof(struct label));
	tally_polls_init(&s->polls);
}

void tally_sum_destroy(struct tally_sum *s)
{
	for (struct row *r = table_first(&s->rows); r != NULL; r = table_next(r))
		rtr__sketch_free(&r->dur);
	for (struct async_row *r = table_first(&s->async_rows); r != NULL; r = table_next(r))
		rtr__sketch_free(&r->dur);
	for (struct label *l = table_first(&s->labels); l != NULL; l = table_next(l))
		free(l->name);
	table_destroy(&s->rows);
	table_destroy(&s->threads);
	table_destroy(&s->async_rows);
	table_destroy(&s->counters);
	table_destroy(&s->labels);
	tally_polls_destroy(&s->polls);
	buf_free(&s->names);
	buf_free(&s->name_at);
	buf_free(&s->warnings);
}

struct row *tally_sum_row(struct tally_sum *s, const void *key, size_t len)
{
	return table_put(&s->rows, key, len, NULL);
}

struct sum_thread *tally_sum_thread(struct tally_sum *s, uint32_t file, int64_t pid, int64_t tid)
{
	unsigned char k[THREAD_KEY_LEN];
	bool created;
	struct sum_thread *t;

	thread_key(k, file, pid, tid);
	t = table_put(&s->threads, k, sizeof(k), &created);
	if (t != NULL && created) {
		t->pid = pid;
		t->tid = tid;
		t->file = file;
	}
	return t;
}

static size_t label_key(unsigned char *k, char kind, uint32_t file, int64_t pid, int64_t tid)
{
	k[0] = (unsigned char)kind;
	thread_key(k + 1, file, pid, tid);
	return kind == 'p' ? 1 + sizeof(file) + sizeof(pid) : 1 + THREAD_KEY_LEN;
}

int tally_sum_set_label(struct tally_sum *s, char kind, uint32_t file, int64_t pid, int64_t tid,
			const char *name, size_t len)
{
	unsigned char k[1 + THREAD_KEY_LEN];
	struct label *l = table_put(&s->labels, k, label_key(k, kind, file, pid, tid), NULL);
	char *copy = malloc(len + 1);

	if (l == NULL || copy == NULL) {
		free(copy);
		return -1;
	}
	memcpy(copy, name, len);
	copy[len] = '\0';
	free(l->name); /* the last name given wins, as in the tally */
	l->name = copy;
	l->len = len;
	return 0;
}

const struct label *tally_sum_label(const struct tally_sum *s, char kind, uint32_t file,
				    int64_t pid, int64_t tid)
{
	unsigned char k[1 + THREAD_KEY_LEN];

	return table_get(&s->labels, k, label_key(k, kind, file, pid, tid));
}

const char *tally_sum_file_name(const struct tally_sum *s, uint32_t file)
{
	size_t at;

	if (file < s->first_file || (file - s->first_file) >= s->name_at.len / sizeof(at))
		return "";
	memcpy(&at, s->name_at.p + (file - s->first_file) * sizeof(at), sizeof(at));
	return s->names.p + at;
}

int tally_sum_index_names(struct tally_sum *s)
{
	s->name_at.len = 0;
	for (size_t at = 0; at < s->names.len; at += strlen(s->names.p + at) + 1)
		if (buf_put(&s->name_at, &at, sizeof(at)))
			return -1;
	return 0;
}

int tally_sum_thread_label(const struct tally_sum *s, struct buf *b, uint32_t file, int64_t pid,
			   int64_t tid)
{
	const struct label *p = tally_sum_label(s, 'p', file, pid, 0);
	const struct label *t = tally_sum_label(s, 't', file, pid, tid);
	char num[64];

	b->len = 0;
	if (s->files > 1 && (buf_puts(b, tally_sum_file_name(s, file)) || buf_puts(b, ": ")))
		return -1;
	if (p != NULL && buf_put(b, p->name, p->len))
		return -1;
	if (p != NULL && t != NULL && buf_puts(b, " / "))
		return -1;
	if (t != NULL && buf_put(b, t->name, t->len))
		return -1;
	snprintf(num, sizeof(num), "%s(%" PRId64 "/%" PRId64 ")", p || t ? " " : "", pid, tid);
	return buf_puts(b, num) || buf_putc(b, '\0');
}

int tally_sum_warn(struct tally_sum *s, const char *line)
{
	if (buf_put(&s->warnings, line, strlen(line) + 1))
		return -1;
	s->nwarnings++;
	return 0;
}

int tally_sum_add_nothing(struct tally_sum *s, uint32_t file, const char *name, int status)
{
	if (s->files == 0)
		s->first_file = file;
	s->files++;
	s->unread += status != 0;
	s->status = status > s->status ? status : s->status;
	return buf_put(&s->name_at, &s->names.len, sizeof(s->names.len)) ||
	       buf_put(&s->names, name, strlen(name) + 1);
}

/* The tally's thread names into the sum, keyed by file. */
static int add_labels(struct tally_sum *s, const struct tally *c, uint32_t file)
{
	for (const struct label *l = table_first(&c->labels); l != NULL; l = table_next(l)) {
		size_t len;
		const char *k = table_key(&c->labels, l, &len);
		int64_t pid = 0, tid = 0;

		memcpy(&pid, k + 1, sizeof(pid));
		if (k[0] == 't')
			memcpy(&tid, k + 1 + sizeof(pid), sizeof(tid));
		if (tally_sum_set_label(s, k[0], file, pid, tid, l->name, l->len))
			return -1;
	}
	return 0;
}

static int add_threads(struct tally_sum *s, const struct tally *c, uint32_t file)
{
	for (struct thread_state *th = threads_first(&c->threads); th != NULL;
	     th = threads_next(th)) {
		const struct tally_thread *t = thread_extra(th);
		struct sum_thread *st = tally_sum_thread(s, file, th->pid, th->tid);

		if (st == NULL)
			return -1;
		st->slices = t->slices;
		st->busy = t->busy;
		st->has_span = t->has_span;
		st->first_ns = t->first_ns;
		st->last_ns = t->last_ns;
	}
	return 0;
}

static int merge_row(struct row *into, const struct row *from)
{
	into->total += from->total;
	into->self += from->self;
	return rtr__sketch_merge(&into->dur, &from->dur);
}

static int add_rows(struct tally_sum *s, const struct tally *c, uint32_t file)
{
	for (const struct row *r = table_first(&c->rows); r != NULL; r = table_next(r)) {
		unsigned char tk[THREAD_KEY_LEN];
		size_t len;
		const void *k = table_key(&c->rows, r, &len);
		struct row *into;

		if (c->opt->by == BY_THREAD) {
			thread_key(tk, file, r->pid, r->tid);
			k = tk;
			len = sizeof(tk);
		}
		into = tally_sum_row(s, k, len);
		if (into == NULL || merge_row(into, r))
			return -1;
		into->pid = r->pid;
		into->tid = r->tid;
		into->file = file;
	}
	for (const struct async_row *r = table_first(&c->async_rows); r != NULL;
	     r = table_next(r)) {
		size_t len;
		const void *k = table_key(&c->async_rows, r, &len);
		struct async_row *into = table_put(&s->async_rows, k, len, NULL);

		if (into == NULL || rtr__sketch_merge(&into->dur, &r->dur))
			return -1;
		into->total += r->total;
	}
	return 0;
}

static void merge_counter(struct counter *into, const struct counter *from, bool created)
{
	if (created || from->min < into->min)
		into->min = from->min;
	if (created || from->max > into->max)
		into->max = from->max;
	into->samples += from->samples;
}

static int merge_counters(struct table *into, const struct table *from)
{
	for (const struct counter *k = table_first(from); k != NULL; k = table_next(k)) {
		size_t len;
		const void *key = table_key(from, k, &len);
		bool created;
		struct counter *c = table_put(into, key, len, &created);

		if (c == NULL)
			return -1;
		merge_counter(c, k, created);
	}
	return 0;
}

static int merge_polls(struct tally_polls *into, const struct tally_polls *from)
{
	for (const struct poll_row *r = table_first(&from->rows); r != NULL; r = table_next(r)) {
		size_t len;
		const void *key = table_key(&from->rows, r, &len);
		struct poll_row *p = table_put(&into->rows, key, len, NULL);

		if (p == NULL)
			return -1;
		p->calls += r->calls;
		p->alone_calls += r->alone_calls;
		p->alone_slices += r->alone_slices;
		p->alone_ns += r->alone_ns;
		p->alone_dur += r->alone_dur;
	}
	into->slices += from->slices;
	into->calls += from->calls;
	into->inside_ns += from->inside_ns;
	into->mixed_slices += from->mixed_slices;
	into->mixed_calls += from->mixed_calls;
	into->mixed_ns += from->mixed_ns;
	return 0;
}

/* One file's end marker, or a sum's, into a sum's. */
static void merge_end(struct tally_sum *into, const struct end_marker *m, uint64_t ends,
		      uint64_t finals)
{
	struct end_marker *e = &into->end;

	if (ends == 0)
		return;
	if (into->ends == 0) {
		*e = *m;
	} else {
		e->has_final = e->has_final && m->has_final;
		e->final = e->final && m->final;
		e->repaired = e->repaired || m->repaired;
		for (int i = 0; i < END_NCOUNTS; i++) {
			e->has[i] = e->has[i] || m->has[i];
			e->v[i] += m->v[i];
		}
	}
	into->ends += ends;
	into->ends_final += finals;
}

static void merge_time(struct tally_sum *into, bool has_time, int64_t first, int64_t last)
{
	if (!has_time)
		return;
	if (!into->has_time || first < into->first_ns)
		into->first_ns = first;
	if (!into->has_time || last > into->last_ns)
		into->last_ns = last;
	into->has_time = true;
}

int tally_sum_add_tally(struct tally_sum *s, const struct tally *c, uint32_t file, const char *name)
{
	if (s->files == 0) {
		s->st = *c->st;
		s->st.not_a_trace = NULL;
		s->st.what = NULL;
	}
	if (tally_sum_add_nothing(s, file, name, 0))
		return -1;
	s->events += c->st->events;
	s->errors += c->st->error != TRACE_OK;
	s->slices += c->slices;
	s->async_spans += c->async_spans;
	s->thread_count += threads_count(&c->threads);
	s->lost_threads = s->lost_threads || c->threads.lost_threads;
	for (int i = 0; i < AN_COUNT; i++)
		s->anomaly[i] += c->anomaly[i];
	merge_time(s, c->has_time, c->first_ns, c->last_ns);
	merge_end(s, &c->end, c->end.seen, c->end.seen && c->end.has_final && c->end.final);
	return add_rows(s, c, file) || add_threads(s, c, file) || add_labels(s, c, file) ||
			       merge_counters(&s->counters, &c->counters) ||
			       merge_polls(&s->polls, &c->polls)
		       ? -1
		       : 0;
}

static int merge_tables(struct tally_sum *into, const struct tally_sum *from)
{
	for (const struct row *r = table_first(&from->rows); r != NULL; r = table_next(r)) {
		size_t len;
		const void *k = table_key(&from->rows, r, &len);
		struct row *row = tally_sum_row(into, k, len);

		if (row == NULL || merge_row(row, r))
			return -1;
		row->pid = r->pid;
		row->tid = r->tid;
		row->file = r->file;
	}
	for (const struct async_row *r = table_first(&from->async_rows); r != NULL;
	     r = table_next(r)) {
		size_t len;
		const void *k = table_key(&from->async_rows, r, &len);
		struct async_row *row = table_put(&into->async_rows, k, len, NULL);

		if (row == NULL || rtr__sketch_merge(&row->dur, &r->dur))
			return -1;
		row->total += r->total;
	}
	for (const struct sum_thread *t = table_first(&from->threads); t != NULL;
	     t = table_next(t)) {
		struct sum_thread *th = tally_sum_thread(into, t->file, t->pid, t->tid);

		if (th == NULL)
			return -1;
		if (t->has_span && (!th->has_span || t->first_ns < th->first_ns))
			th->first_ns = t->first_ns;
		if (t->has_span && (!th->has_span || t->last_ns > th->last_ns))
			th->last_ns = t->last_ns;
		th->has_span = th->has_span || t->has_span;
		th->slices += t->slices;
		th->busy += t->busy;
	}
	for (const struct label *l = table_first(&from->labels); l != NULL; l = table_next(l)) {
		size_t len;
		const void *k = table_key(&from->labels, l, &len);
		struct label *to = table_put(&into->labels, k, len, NULL);
		char *copy = to != NULL ? strdup(l->name) : NULL;

		if (copy == NULL)
			return -1;
		free(to->name);
		to->name = copy;
		to->len = l->len;
	}
	return merge_counters(&into->counters, &from->counters) ||
			       merge_polls(&into->polls, &from->polls)
		       ? -1
		       : 0;
}

int tally_sum_merge(struct tally_sum *into, const struct tally_sum *from)
{
	if (from->files == 0)
		return 0;
	if (into->files == 0) {
		into->first_file = from->first_file;
		into->st = from->st;
	}
	into->files += from->files;
	into->profiles += from->profiles;
	into->unread += from->unread;
	into->status = from->status > into->status ? from->status : into->status;
	into->errors += from->errors;
	into->nwarnings += from->nwarnings;
	into->events += from->events;
	into->slices += from->slices;
	into->async_spans += from->async_spans;
	into->thread_count += from->thread_count;
	into->lost_threads = into->lost_threads || from->lost_threads;
	for (int i = 0; i < AN_COUNT; i++)
		into->anomaly[i] += from->anomaly[i];
	merge_time(into, from->has_time, from->first_ns, from->last_ns);
	merge_end(into, &from->end, from->ends, from->ends_final);
	for (size_t i = 0; i < from->name_at.len; i += sizeof(size_t)) {
		size_t at;

		memcpy(&at, from->name_at.p + i, sizeof(at));
		at += into->names.len;
		if (buf_put(&into->name_at, &at, sizeof(at)))
			return -1;
	}
	if ((from->names.len > 0 && buf_put(&into->names, from->names.p, from->names.len)) ||
	    (from->warnings.len > 0 &&
	     buf_put(&into->warnings, from->warnings.p, from->warnings.len)))
		return -1;
	return merge_tables(into, from);
}
