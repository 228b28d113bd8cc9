/* SPDX-License-Identifier: MIT */
/*
 * A profile read into a tally sum (see profile.h for what maps to what).
 */
#include "profile.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#define PROFILE_TYPE "ringtrace-profile"

/* The keys of the schema, kept; any other is skipped. */
static const char *const kept[] = {
	"schema_version", "type",  "scope",    "pid",	 "rank",    "world",	   "start_ns",
	"end_ns",	  "final", "reason",   "events", "dropped", "depth_limit", "deeper",
	"threads",	  "calls", "counters", "ranks",	 "host",
};

void profile_doc_init(struct profile_doc *d)
{
	memset(d, 0, sizeof(*d));
}

void profile_doc_destroy(struct profile_doc *d)
{
	buf_free(&d->json);
}

void profile_on_top_level(void *ctx, const char *key, size_t key_len, const char *json, size_t len)
{
	struct profile_doc *d = ctx;
	bool keep = false;

	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]) && !keep; i++)
		keep = strlen(kept[i]) == key_len && memcmp(kept[i], key, key_len) == 0;
	if (!keep)
		return;
	if (key_len == 4 && memcmp(key, "type", 4) == 0 && json != NULL)
		d->is_profile = len == strlen("\"" PROFILE_TYPE "\"") &&
				memcmp(json, "\"" PROFILE_TYPE "\"", len) == 0;
	if (json == NULL || d->json.len + key_len + len + 8 > PROFILE_MAX_BYTES) {
		d->too_large = true;
		return;
	}
	/* the key is the reader's, already valid: written back as a JSON string */
	if (buf_putc(&d->json, d->json.len == 0 ? '{' : ',') ||
	    json_put_string(&d->json, key, key_len) < 0 || buf_putc(&d->json, ':') ||
	    buf_put(&d->json, json, len))
		d->too_large = true; /* out of memory: the same answer, nothing to read */
}

/* ------------------------------------------------------------------ reading */

struct reader {
	struct tally_sum *s;
	uint32_t file;
	int64_t pid, tid;
	struct sum_thread *thread; /* NULL for a job profile */
	struct buf key;
	char *msg;
	size_t msg_size;
	const char *name;
	int err;
};

static int fail(struct reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct reader *r, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (r->err != 0)
		return r->err;
	n = snprintf(r->msg, r->msg_size, "%s: profile: ", r->name);
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < r->msg_size)
		vsnprintf(r->msg + n, r->msg_size - (size_t)n, fmt, ap);
	va_end(ap);
	return r->err = -2;
}

static yajl_val member(yajl_val obj, const char *key)
{
	if (!YAJL_IS_OBJECT(obj))
		return NULL;
	for (size_t i = 0; i < obj->u.object.len; i++)
		if (strcmp(obj->u.object.keys[i], key) == 0)
			return obj->u.object.values[i];
	return NULL;
}

/* A whole number >= 0 under key: 0 when it is one, else -2 (said); *v = dflt when it is
 * absent and not required. */
static int get_u64(struct reader *r, yajl_val obj, const char *key, bool required, uint64_t dflt,
		   uint64_t *v)
{
	yajl_val x = member(obj, key);

	if (x == NULL && !required) {
		*v = dflt;
		return 0;
	}
	if (x == NULL)
		return fail(r, "\"%s\" is missing", key);
	if (!YAJL_IS_INTEGER(x) || YAJL_GET_INTEGER(x) < 0)
		return fail(r, "\"%s\" is not a whole number of at least 0", key);
	*v = (uint64_t)YAJL_GET_INTEGER(x);
	return 0;
}

/* The string under key, or NULL when absent (not a string: said, r->err set). */
static const char *get_str(struct reader *r, yajl_val obj, const char *key)
{
	yajl_val x = member(obj, key);

	if (x == NULL)
		return NULL;
	if (!YAJL_IS_STRING(x)) {
		fail(r, "\"%s\" is not a string", key);
		return NULL;
	}
	return YAJL_GET_STRING(x);
}

/* A sketch left out (docs/profile.md): n <= 3 values, which n, t, min and max say: min;
 * min and max; min, max and t - min - max. */
static int implied_sketch(struct reader *r, uint64_t n, uint64_t t, uint64_t min, uint64_t max,
			  struct rtr__sketch *s)
{
	if (n > 3)
		return fail(r, "a call path of %llu slices without its sketch \"q\"",
			    (unsigned long long)n);
	if (n == 0)
		return 0;
	if ((n == 1 && (min != max || t != min)) || (n == 2 && t != min + max) ||
	    (n == 3 && (t < min + max || t - min - max < min || t - min - max > max)))
		return fail(r,
			    "a call path of %llu slices without its sketch \"q\", whose "
			    "total, min and max disagree",
			    (unsigned long long)n);
	if (rtr__sketch_add(s, min) || (n >= 2 && rtr__sketch_add(s, max)) ||
	    (n == 3 && rtr__sketch_add(s, t - min - max)))
		return r->err = -1;
	return 0;
}

/* A node's sketch "q" into s, checked against its n, min and max (and t, when it is
 * left out). */
static int load_sketch(struct reader *r, yajl_val node, uint64_t n, uint64_t t, uint64_t min,
		       uint64_t max, struct rtr__sketch *s)
{
	yajl_val q = member(node, "q"), v, b;
	uint64_t zeros, first, counts[RTR__SKETCH_BUCKETS];
	int err;

	if (q == NULL)
		return implied_sketch(r, n, t, min, max, s);
	if ((v = member(q, "v")) != NULL) {
		if (!YAJL_IS_ARRAY(v) || v->u.array.len > RTR__SKETCH_EXACT)
			return fail(r, "a sketch's \"v\" is not an array of at most %d values",
				    RTR__SKETCH_EXACT);
		for (size_t i = 0; i < v->u.array.len; i++) {
			yajl_val x = v->u.array.values[i];

			if (!YAJL_IS_INTEGER(x) || YAJL_GET_INTEGER(x) < 0)
				return fail(r, "a sketch's value is not a whole number");
			if (rtr__sketch_add(s, (uint64_t)YAJL_GET_INTEGER(x)))
				return r->err = -1;
		}
	} else {
		b = member(q, "b");
		if (get_u64(r, q, "z", false, 0, &zeros) || get_u64(r, q, "i", true, 0, &first))
			return r->err;
		if (!YAJL_IS_ARRAY(b) || b->u.array.len > RTR__SKETCH_BUCKETS ||
		    first > RTR__SKETCH_BUCKETS)
			return fail(r, "a sketch's \"b\" is not an array of at most %d buckets",
				    RTR__SKETCH_BUCKETS);
		for (size_t i = 0; i < b->u.array.len; i++) {
			yajl_val x = b->u.array.values[i];

			if (!YAJL_IS_INTEGER(x) || YAJL_GET_INTEGER(x) < 0)
				return fail(r, "a sketch's bucket is not a whole number");
			counts[i] = (uint64_t)YAJL_GET_INTEGER(x);
		}
		err = rtr__sketch_load(s, zeros, (int32_t)first, counts, (uint32_t)b->u.array.len,
				       min, max);
		if (err == -1)
			return r->err = -1;
		if (err != 0)
			return fail(r, "a sketch's buckets do not fit (past the last bucket, or "
				       "against its min and max)");
	}
	if (s->count != n)
		return fail(r, "a sketch holds %llu values, its call path %llu slices",
			    (unsigned long long)s->count, (unsigned long long)n);
	if (n > 0 && (s->min != min || s->max != max) && member(q, "v") != NULL)
		return fail(r, "a sketch's values disagree with its min and max");
	return 0;
}

/* The row of node: by name, category or thread. NULL when out of memory or malformed. */
static struct row *row_of(struct reader *r, const char *name, const char *cat)
{
	struct trace_value v = {TRACE_ABSENT, NULL, 0};
	const char *k = r->s->by == BY_NAME ? name : cat;
	struct row *row;

	r->key.len = 0;
	if (r->s->by == BY_THREAD) {
		if (buf_put(&r->key, &r->file, sizeof(r->file)) ||
		    buf_put(&r->key, &r->pid, sizeof(r->pid)) ||
		    buf_put(&r->key, &r->tid, sizeof(r->tid)))
			goto nomem;
	} else {
		/* An empty category is left out of a profile: the trace's "cat":"" */
		if (k != NULL && *k != '\0')
			v = (struct trace_value){TRACE_STRING, k, strlen(k)};
		else
			v = (struct trace_value){TRACE_STRING, "", 0};
		if (trace_key_add(&r->key, &v))
			goto nomem;
	}
	row = tally_sum_row(r->s, r->key.p, r->key.len);
	if (row == NULL)
		goto nomem;
	row->pid = r->pid;
	row->tid = r->tid;
	row->file = r->file;
	return row;
nomem:
	r->err = -1;
	return NULL;
}

static int read_calls(struct reader *r, yajl_val calls, unsigned depth, uint64_t *total);

static int read_node(struct reader *r, yajl_val node, unsigned depth, uint64_t *t_out)
{
	uint64_t n, t, s, min, max, children = 0;
	const char *name = get_str(r, node, "name"), *cat = get_str(r, node, "cat");
	struct rtr__sketch q;
	struct row *row;

	if (r->err)
		return r->err;
	if (!YAJL_IS_OBJECT(node) || name == NULL)
		return fail(r, "a call path node is not an object with a \"name\"");
	if (get_u64(r, node, "n", true, 0, &n) || get_u64(r, node, "t", true, 0, &t) ||
	    get_u64(r, node, "s", true, 0, &s) || get_u64(r, node, "min", n > 0, 0, &min) ||
	    get_u64(r, node, "max", n > 0, 0, &max))
		return r->err;
	if (s > t || (n > 0 && min > max))
		return fail(r, "call path '%s': self over total, or min over max", name);
	rtr__sketch_init(&q);
	if (load_sketch(r, node, n, t, min, max, &q) == 0 && (row = row_of(r, name, cat)) != NULL) {
		row->total += t;
		row->self += s;
		if (rtr__sketch_merge(&row->dur, &q))
			r->err = -1;
		r->s->slices += n;
		if (r->thread != NULL)
			r->thread->slices += n;
	}
	rtr__sketch_free(&q);
	if (r->err == 0 && member(node, "calls") != NULL)
		read_calls(r, member(node, "calls"), depth + 1, &children);
	*t_out = t;
	return r->err;
}

static int read_calls(struct reader *r, yajl_val calls, unsigned depth, uint64_t *total)
{
	if (depth >= PROFILE_MAX_DEPTH)
		return fail(r, "call paths nest deeper than %d", PROFILE_MAX_DEPTH);
	if (!YAJL_IS_ARRAY(calls))
		return fail(r, "\"calls\" is not an array");
	*total = 0;
	for (size_t i = 0; i < calls->u.array.len && r->err == 0; i++) {
		uint64_t t = 0;

		read_node(r, calls->u.array.values[i], depth, &t);
		*total += t;
	}
	return r->err;
}

static int read_threads(struct reader *r, yajl_val threads, bool has_span, int64_t start,
			int64_t end)
{
	if (!YAJL_IS_ARRAY(threads))
		return fail(r, "\"threads\" is not an array");
	for (size_t i = 0; i < threads->u.array.len && r->err == 0; i++) {
		yajl_val th = threads->u.array.values[i], tid = member(th, "tid");
		const char *name = get_str(r, th, "name");
		uint64_t busy = 0;

		if (!YAJL_IS_INTEGER(tid))
			return fail(r, "a thread without a whole number \"tid\"");
		r->tid = YAJL_GET_INTEGER(tid);
		r->thread = tally_sum_thread(r->s, r->file, r->pid, r->tid);
		if (r->thread == NULL)
			return r->err = -1;
		if (name != NULL &&
		    tally_sum_set_label(r->s, 't', r->file, r->pid, r->tid, name, strlen(name)))
			return r->err = -1;
		if (member(th, "calls") != NULL && read_calls(r, member(th, "calls"), 0, &busy))
			return r->err;
		r->thread->busy += busy;
		r->thread->has_span = has_span;
		r->thread->first_ns = start;
		r->thread->last_ns = end;
		r->s->thread_count++;
	}
	return r->err;
}

static int read_counters(struct reader *r, yajl_val counters)
{
	if (!YAJL_IS_ARRAY(counters))
		return fail(r, "\"counters\" is not an array");
	for (size_t i = 0; i < counters->u.array.len && r->err == 0; i++) {
		yajl_val k = counters->u.array.values[i], min = member(k, "min"),
			 max = member(k, "max");
		const char *name = get_str(r, k, "name");
		size_t len = name != NULL ? strlen(name) : 0;
		uint64_t samples;
		struct counter *c;
		bool created;

		if (r->err || get_u64(r, k, "samples", true, 0, &samples))
			return r->err;
		if (!YAJL_IS_NUMBER(min) || !YAJL_IS_NUMBER(max))
			return fail(r, "a counter without a numeric min and max");
		/* the series as a trace's counter event makes it: the name, then "value" */
		r->key.len = 0;
		if (buf_put(&r->key, &len, sizeof(len)) ||
		    (len > 0 && buf_put(&r->key, name, len)) || buf_puts(&r->key, "value"))
			return r->err = -1;
		c = table_put(&r->s->counters, r->key.p, r->key.len, &created);
		if (c == NULL)
			return r->err = -1;
		if (created || YAJL_GET_DOUBLE(min) < c->min)
			c->min = YAJL_GET_DOUBLE(min);
		if (created || YAJL_GET_DOUBLE(max) > c->max)
			c->max = YAJL_GET_DOUBLE(max);
		c->samples += samples;
	}
	return r->err;
}

/* The header: version, scope, span, loss accounting. */
static int read_header(struct reader *r, yajl_val doc, bool *job)
{
	const char *scope = get_str(r, doc, "scope");
	yajl_val pid = member(doc, "pid"), fin = member(doc, "final");
	uint64_t version, events, dropped, start, end, deeper;
	struct end_marker *m = &r->s->end;

	if (get_u64(r, doc, "schema_version", true, 0, &version))
		return r->err;
	if (version != 1)
		return fail(r, "schema_version %llu (this tool reads 1)",
			    (unsigned long long)version);
	if (scope == NULL || (strcmp(scope, "process") != 0 && strcmp(scope, "job") != 0))
		return fail(r, "\"scope\" is neither \"process\" nor \"job\"");
	*job = strcmp(scope, "job") == 0;
	r->pid = YAJL_IS_INTEGER(pid) ? YAJL_GET_INTEGER(pid) : 0;
	if (get_u64(r, doc, "events", false, 0, &events) ||
	    get_u64(r, doc, "dropped", false, 0, &dropped) ||
	    get_u64(r, doc, "start_ns", false, 0, &start) ||
	    get_u64(r, doc, "end_ns", false, start, &end) ||
	    get_u64(r, doc, "deeper", false, 0, &deeper))
		return r->err;
	if (end < start || start > INT64_MAX || end > INT64_MAX)
		return fail(r, "end_ns before start_ns");
	r->s->events = events;
	r->s->has_time = member(doc, "start_ns") != NULL;
	r->s->first_ns = (int64_t)start;
	r->s->last_ns = (int64_t)end;
	memset(m, 0, sizeof(*m));
	m->seen = true;
	m->has_final = YAJL_IS_TRUE(fin) || YAJL_IS_FALSE(fin);
	m->final = YAJL_IS_TRUE(fin);
	m->has[END_DROPPED] = member(doc, "dropped") != NULL;
	m->v[END_DROPPED] = dropped;
	r->s->ends = 1;
	r->s->ends_final = m->has_final && m->final;
	if (deeper > 0) {
		char w[256];

		snprintf(w, sizeof(w),
			 "%s: %llu slices below the profile's depth limit are counted in their "
			 "ancestor at the limit",
			 r->name, (unsigned long long)deeper);
		if (tally_sum_warn(r->s, w))
			return r->err = -1;
	}
	return 0;
}

static int read_doc(struct reader *r, yajl_val doc)
{
	bool job = false;
	uint64_t busy;

	if (read_header(r, doc, &job))
		return r->err;
	if (job) {
		char w[256];

		if (member(doc, "calls") != NULL && read_calls(r, member(doc, "calls"), 0, &busy))
			return r->err;
		snprintf(w, sizeof(w),
			 "%s is a job profile: its call paths are merged over every rank's "
			 "threads, so it has no threads%s",
			 r->name, r->s->by == BY_THREAD ? " (no rows --by thread)" : "");
		if (r->s->by == BY_THREAD) {
			/* its rows are keyed by no thread: none */
			for (struct row *row = table_first(&r->s->rows); row != NULL;) {
				struct row *next = table_next(row);

				rtr__sketch_free(&row->dur);
				table_remove(&r->s->rows, row);
				row = next;
			}
		}
		return tally_sum_warn(r->s, w) ? (r->err = -1) : 0;
	}
	if (member(doc, "threads") != NULL &&
	    read_threads(r, member(doc, "threads"), r->s->has_time, r->s->first_ns, r->s->last_ns))
		return r->err;
	if (member(doc, "counters") != NULL)
		read_counters(r, member(doc, "counters"));
	return r->err;
}

int profile_sum(struct profile_doc *d, const struct trace_status *st, struct tally_sum *s,
		uint32_t file, const char *name, char *msg, size_t msg_size)
{
	struct reader r = {.s = s, .file = file, .msg = msg, .msg_size = msg_size, .name = name};
	char err[256];
	yajl_val doc;

	if (tally_sum_add_nothing(s, file, name, 0))
		return -1;
	s->profiles = 1;
	s->st = *st;
	s->st.not_a_trace = NULL;
	s->st.what = NULL;
	if (d->too_large)
		return fail(&r, "larger than this tool reads (%zu MiB)", PROFILE_MAX_BYTES >> 20);
	if (buf_putc(&d->json, '}') || buf_putc(&d->json, '\0'))
		return -1;
	doc = yajl_tree_parse(d->json.p, err, sizeof(err));
	d->json.len -= 2;
	if (doc == NULL)
		return fail(&r, "%s", err);
	read_doc(&r, doc);
	yajl_tree_free(doc);
	buf_free(&r.key);
	return r.err;
}
