/* SPDX-License-Identifier: MIT */
/*
 * A tally sum as bytes and back (tally_sum.h), for the MPI step of stats and diff:
 * the same build on every rank, so numbers go in native byte order. The layout: a
 * magic, the scalars, then each table as a count and its entries (key, then the
 * value's fields); a sketch as its count, zeros, extremes, the buckets that hold
 * values and the values kept as they are. Every length is checked when read.
 */
#include "tally_sum.h"

#include <stdlib.h>
#include <string.h>

#define PACK_MAGIC 0x31736d7573727472u /* "rtrsums1" */

/* ------------------------------------------------------------------ writing */

static int put_u64(struct buf *b, uint64_t v)
{
	return buf_put(b, &v, sizeof(v));
}

static int put_bytes(struct buf *b, const void *p, size_t len)
{
	return put_u64(b, len) || (len > 0 && buf_put(b, p, len));
}

static int put_sketch(struct buf *b, const struct rtr__sketch *s)
{
	uint32_t first = 0, last = 0;
	bool any = rtr__sketch_used(s, &first, &last);

	if (put_u64(b, s->count) || put_u64(b, s->zeros) || put_u64(b, s->min) ||
	    put_u64(b, s->max) || put_u64(b, any ? (uint64_t)(s->lo + (int32_t)first) : 0) ||
	    put_bytes(b, any ? s->bins + first : NULL,
		      any ? (last - first + 1) * sizeof(uint64_t) : 0))
		return -1;
	for (uint64_t i = 0; i < s->count && i < RTR__SKETCH_EXACT; i++)
		if (put_u64(b, s->exact[i]))
			return -1;
	return 0;
}

/* Each entry of t: its key, then what put_value writes of its value. */
static int put_table(struct buf *b, const struct table *t,
		     int (*put_value)(struct buf *b, const void *v))
{
	if (put_u64(b, t->count))
		return -1;
	for (const void *v = table_first(t); v != NULL; v = table_next(v)) {
		size_t len;
		const void *k = table_key(t, v, &len);

		if (put_bytes(b, k, len) || put_value(b, v))
			return -1;
	}
	return 0;
}

static int put_row(struct buf *b, const void *v)
{
	const struct row *r = v;

	return put_u64(b, r->total) || put_u64(b, r->self) || put_u64(b, (uint64_t)r->pid) ||
	       put_u64(b, (uint64_t)r->tid) || put_u64(b, r->file) || put_sketch(b, &r->dur);
}

static int put_async(struct buf *b, const void *v)
{
	const struct async_row *r = v;

	return put_u64(b, r->total) || put_sketch(b, &r->dur);
}

static int put_thread(struct buf *b, const void *v)
{
	const struct sum_thread *t = v;

	return put_u64(b, (uint64_t)t->pid) || put_u64(b, (uint64_t)t->tid) ||
	       put_u64(b, t->file) || put_u64(b, t->has_span) || put_u64(b, t->slices) ||
	       put_u64(b, t->busy) || put_u64(b, (uint64_t)t->first_ns) ||
	       put_u64(b, (uint64_t)t->last_ns);
}

static int put_counter(struct buf *b, const void *v)
{
	return buf_put(b, v, sizeof(struct counter));
}

static int put_label(struct buf *b, const void *v)
{
	const struct label *l = v;

	return put_bytes(b, l->name, l->len);
}

static int put_poll(struct buf *b, const void *v)
{
	return buf_put(b, v, sizeof(struct poll_row));
}

int tally_sum_pack(const struct tally_sum *s, struct buf *out)
{
	struct trace_status st = s->st;
	const struct tally_polls *p = &s->polls;

	st.not_a_trace = NULL;
	st.what = NULL;
	return put_u64(out, PACK_MAGIC) || put_u64(out, s->by) || put_u64(out, s->files) ||
	       put_u64(out, s->first_file) || put_u64(out, s->profiles) ||
	       put_u64(out, s->unread) || put_u64(out, (uint64_t)s->status) ||
	       put_u64(out, s->errors) || buf_put(out, &st, sizeof(st)) ||
	       put_bytes(out, s->names.p, s->names.len) ||
	       put_bytes(out, s->warnings.p, s->warnings.len) || put_u64(out, s->nwarnings) ||
	       buf_put(out, &s->end, sizeof(s->end)) || put_u64(out, s->ends) ||
	       put_u64(out, s->ends_final) || put_u64(out, s->events) || put_u64(out, s->slices) ||
	       put_u64(out, s->async_spans) || put_u64(out, s->thread_count) ||
	       buf_put(out, s->anomaly, sizeof(s->anomaly)) || put_u64(out, s->lost_threads) ||
	       put_u64(out, s->has_time) || put_u64(out, (uint64_t)s->first_ns) ||
	       put_u64(out, (uint64_t)s->last_ns) || put_u64(out, p->slices) ||
	       put_u64(out, p->calls) || put_u64(out, p->inside_ns) ||
	       put_u64(out, p->mixed_slices) || put_u64(out, p->mixed_calls) ||
	       put_u64(out, p->mixed_ns) || put_table(out, &s->rows, put_row) ||
	       put_table(out, &s->async_rows, put_async) ||
	       put_table(out, &s->threads, put_thread) ||
	       put_table(out, &s->counters, put_counter) || put_table(out, &s->labels, put_label) ||
	       put_table(out, &p->rows, put_poll);
}

/* ------------------------------------------------------------------ reading */

struct in {
	const unsigned char *p, *end;
	int err; /* -1 out of memory, -2 malformed */
};

static uint64_t get_u64(struct in *in)
{
	uint64_t v = 0;

	if ((size_t)(in->end - in->p) < sizeof(v)) {
		in->err = in->err ? in->err : -2;
		return 0;
	}
	memcpy(&v, in->p, sizeof(v));
	in->p += sizeof(v);
	return v;
}

/* n raw bytes; NULL when they are not there. */
static const void *get_raw(struct in *in, uint64_t n)
{
	const void *p = in->p;

	if ((uint64_t)(in->end - in->p) < n) {
		in->err = in->err ? in->err : -2;
		return NULL;
	}
	in->p += n;
	return p;
}

static const void *get_bytes(struct in *in, size_t *len)
{
	uint64_t n = get_u64(in);
	const void *p = get_raw(in, n);

	*len = p != NULL ? (size_t)n : 0;
	return p;
}

static void get_sketch(struct in *in, struct rtr__sketch *s)
{
	uint64_t count = get_u64(in), zeros = get_u64(in), min = get_u64(in), max = get_u64(in);
	uint64_t first = get_u64(in);
	size_t len;
	const void *bins = get_bytes(in, &len);
	uint64_t counts[RTR__SKETCH_BUCKETS];
	int err;

	if (in->err || len % sizeof(uint64_t) != 0 ||
	    len / sizeof(uint64_t) > RTR__SKETCH_BUCKETS || first >= RTR__SKETCH_BUCKETS) {
		in->err = in->err ? in->err : -2;
		return;
	}
	memcpy(counts, bins, len);
	err = rtr__sketch_load(s, zeros, (int32_t)first, counts, (uint32_t)(len / sizeof(uint64_t)),
			       min, max);
	if (err != 0 || s->count != count) {
		in->err = err == -1 ? -1 : -2;
		return;
	}
	for (uint64_t i = 0; i < count && i < RTR__SKETCH_EXACT; i++)
		s->exact[i] = get_u64(in);
}

static void get_row(struct in *in, void *v)
{
	struct row *r = v;

	r->total = get_u64(in);
	r->self = get_u64(in);
	r->pid = (int64_t)get_u64(in);
	r->tid = (int64_t)get_u64(in);
	r->file = (uint32_t)get_u64(in);
	if (r->dur.count == 0)
		get_sketch(in, &r->dur);
	else
		in->err = in->err ? in->err : -2; /* a key twice */
}

static void get_async(struct in *in, void *v)
{
	struct async_row *r = v;

	r->total = get_u64(in);
	if (r->dur.count == 0)
		get_sketch(in, &r->dur);
	else
		in->err = in->err ? in->err : -2;
}

static void get_thread(struct in *in, void *v)
{
	struct sum_thread *t = v;

	t->pid = (int64_t)get_u64(in);
	t->tid = (int64_t)get_u64(in);
	t->file = (uint32_t)get_u64(in);
	t->has_span = get_u64(in) != 0;
	t->slices = get_u64(in);
	t->busy = get_u64(in);
	t->first_ns = (int64_t)get_u64(in);
	t->last_ns = (int64_t)get_u64(in);
}

static void get_counter(struct in *in, void *v)
{
	const void *p = get_raw(in, sizeof(struct counter));

	if (p != NULL)
		memcpy(v, p, sizeof(struct counter));
}

static void get_label(struct in *in, void *v)
{
	struct label *l = v;
	size_t len;
	const char *p = get_bytes(in, &len);

	if (p == NULL || l->name != NULL) {
		in->err = in->err ? in->err : -2;
		return;
	}
	l->name = malloc(len + 1);
	if (l->name == NULL) {
		in->err = -1;
		return;
	}
	memcpy(l->name, p, len);
	l->name[len] = '\0';
	l->len = len;
}

static void get_poll(struct in *in, void *v)
{
	const void *p = get_raw(in, sizeof(struct poll_row));

	if (p != NULL)
		memcpy(v, p, sizeof(struct poll_row));
}

static void get_table(struct in *in, struct table *t, void (*get_value)(struct in *in, void *v))
{
	uint64_t n = get_u64(in);

	for (uint64_t i = 0; i < n && in->err == 0; i++) {
		size_t len;
		const void *k = get_bytes(in, &len);
		void *v = k != NULL ? table_put(t, k, len, NULL) : NULL;

		if (k != NULL && v == NULL)
			in->err = -1;
		if (v != NULL)
			get_value(in, v);
	}
}

static int get_text(struct in *in, struct buf *b)
{
	size_t len;
	const char *p = get_bytes(in, &len);

	if (p == NULL || (len > 0 && p[len - 1] != '\0'))
		return in->err = in->err ? in->err : -2;
	return len > 0 && buf_put(b, p, len) ? (in->err = -1) : 0;
}

int tally_sum_unpack(struct tally_sum *s, const void *bytes, size_t len)
{
	struct in in = {bytes, (const unsigned char *)bytes + len, 0};
	struct tally_polls *p = &s->polls;
	const void *raw;

	if (get_u64(&in) != PACK_MAGIC || get_u64(&in) != (uint64_t)s->by)
		return -2;
	s->files = get_u64(&in);
	s->first_file = (uint32_t)get_u64(&in);
	s->profiles = get_u64(&in);
	s->unread = get_u64(&in);
	s->status = (int)get_u64(&in);
	s->errors = get_u64(&in);
	if ((raw = get_raw(&in, sizeof(s->st))) != NULL)
		memcpy(&s->st, raw, sizeof(s->st));
	s->st.message[sizeof(s->st.message) - 1] = '\0';
	s->st.not_a_trace = NULL;
	s->st.what = NULL;
	if (get_text(&in, &s->names) || get_text(&in, &s->warnings))
		return in.err;
	if (tally_sum_index_names(s))
		return -1;
	s->nwarnings = get_u64(&in);
	if ((raw = get_raw(&in, sizeof(s->end))) != NULL)
		memcpy(&s->end, raw, sizeof(s->end));
	s->ends = get_u64(&in);
	s->ends_final = get_u64(&in);
	s->events = get_u64(&in);
	s->slices = get_u64(&in);
	s->async_spans = get_u64(&in);
	s->thread_count = get_u64(&in);
	if ((raw = get_raw(&in, sizeof(s->anomaly))) != NULL)
		memcpy(s->anomaly, raw, sizeof(s->anomaly));
	s->lost_threads = get_u64(&in) != 0;
	s->has_time = get_u64(&in) != 0;
	s->first_ns = (int64_t)get_u64(&in);
	s->last_ns = (int64_t)get_u64(&in);
	p->slices = get_u64(&in);
	p->calls = get_u64(&in);
	p->inside_ns = get_u64(&in);
	p->mixed_slices = get_u64(&in);
	p->mixed_calls = get_u64(&in);
	p->mixed_ns = get_u64(&in);
	get_table(&in, &s->rows, get_row);
	get_table(&in, &s->async_rows, get_async);
	get_table(&in, &s->threads, get_thread);
	get_table(&in, &s->counters, get_counter);
	get_table(&in, &s->labels, get_label);
	get_table(&in, &p->rows, get_poll);
	if (in.err == 0 && in.p != in.end)
		in.err = -2;
	return in.err;
}
