/* SPDX-License-Identifier: MIT */
/*
 * Profile mode (docs/profile.md): slices of known times recorded, the profile read
 * back with yajl's tree API, every count, total, self, min, max and the sketch
 * compared with what was recorded; the depth and node limits, counters, drops, a
 * snapshot and a segment's profile, the profile beside a trace against the trace's
 * own slices, and the size of a profile of 10,000 call paths.
 */
#include "child.h"
#include "common/sketch.h"
#include "json_tree.h"
#include "test_util.h"

#include <ringtrace.h>

#include <errno.h>
#include <pthread.h>
#include <setjmp.h> /* cmocka */
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#if TU_UNDER_TSAN
/* test_fork's child starts the writer thread: allowed, with this. */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
	return "die_after_fork=0";
}
#endif

static void start_profile(const char *path, unsigned depth, unsigned nodes)
{
	struct rtr_config cfg;

	rtr_config_init(&cfg);
	cfg.path = path;
	cfg.mode = RTR_MODE_PROFILE;
	cfg.on_full = RTR_ON_FULL_BLOCK;
	cfg.ring_bytes = (size_t)4 << 20;
	if (depth > 0)
		cfg.profile_depth = depth;
	if (nodes > 0)
		cfg.profile_nodes = nodes;
	assert_int_equal(rtr_start(&cfg), 0);
}

/* The node named name in the array calls (a "calls" list), failing when absent. */
static yajl_val call(yajl_val calls, const char *name)
{
	assert_non_null(calls);
	for (size_t i = 0; i < calls->u.array.len; i++)
		if (strcmp(jt_str(calls->u.array.values[i], "name"), name) == 0)
			return calls->u.array.values[i];
	fail_msg("no call path %s", name);
	return NULL;
}

static yajl_val calls_of(yajl_val node)
{
	return jt_array(node, "calls");
}

/* The thread of the profile with this tid. */
static yajl_val thread_of(yajl_val doc, long long tid)
{
	yajl_val threads = jt_array(doc, "threads");

	for (size_t i = 0; i < threads->u.array.len; i++)
		if (jt_int(threads->u.array.values[i], "tid") == tid)
			return threads->u.array.values[i];
	fail_msg("no thread %lld", tid);
	return NULL;
}

static void expect_node(yajl_val nd, long long n, long long t, long long s, long long min,
			long long max)
{
	assert_int_equal(jt_int(nd, "n"), n);
	assert_int_equal(jt_int(nd, "t"), t);
	assert_int_equal(jt_int(nd, "s"), s);
	assert_int_equal(jt_int(nd, "min"), min);
	assert_int_equal(jt_int(nd, "max"), max);
}

/* The sketch q of nd as a sketch: its values, or its buckets; without q (n <= 3) the
 * values n, t, min and max say. */
static void read_sketch(yajl_val nd, struct rtr__sketch *out)
{
	yajl_val q = yajl_tree_get(nd, (const char *[]){"q", NULL}, yajl_t_object);
	uint64_t n = (uint64_t)jt_int(nd, "n"), t = (uint64_t)jt_int(nd, "t");
	uint64_t min = (uint64_t)jt_int(nd, "min"), max = (uint64_t)jt_int(nd, "max");

	rtr__sketch_init(out);
	if (q == NULL) {
		assert_true(n >= 1 && n <= 3);
		assert_int_equal(rtr__sketch_add(out, min), 0);
		if (n >= 2)
			assert_int_equal(rtr__sketch_add(out, max), 0);
		if (n == 3)
			assert_int_equal(rtr__sketch_add(out, t - min - max), 0);
		return;
	}
	if (yajl_tree_get(q, (const char *[]){"v", NULL}, yajl_t_array) != NULL) {
		yajl_val v = jt_array(q, "v");
		for (size_t i = 0; i < v->u.array.len; i++)
			assert_int_equal(rtr__sketch_add(out, (uint64_t)YAJL_GET_INTEGER(
								      v->u.array.values[i])),
					 0);
		return;
	}
	yajl_val b = jt_array(q, "b");
	out->zeros = (uint64_t)jt_int(q, "z");
	out->lo = (int32_t)jt_int(q, "i");
	out->nbins = (uint32_t)b->u.array.len;
	out->bins = calloc(out->nbins, sizeof(uint64_t));
	out->count = out->zeros;
	for (size_t i = 0; i < b->u.array.len; i++) {
		out->bins[i] = (uint64_t)YAJL_GET_INTEGER(b->u.array.values[i]);
		out->count += out->bins[i];
	}
	out->min = (uint64_t)jt_int(nd, "min");
	out->max = (uint64_t)jt_int(nd, "max");
}

/* Complete slices of exact times, nested parent first; B/E slices nested; counters. */
static void test_known_slices(void **state)
{
	char path[512];
	(void)state;
	tu_own_file(path, sizeof(path), "profile", "known", ".json");
	start_profile(path, 0, 0);

	uint64_t base = rtr_now_ns() + 1000;
	rtr_complete("app", "outer", base, 1000);
	rtr_complete("app", "inner", base + 100, 200);
	rtr_complete("app", "inner", base + 400, 300);
	rtr_complete("app", "outer", base + 2000, 500);
	rtr_complete("app", "inner", base + 2100, 100);
	for (uint64_t i = 0; i < 100; i++) /* durations 1 .. 100 */
		rtr_complete("app", "many", base + 10000 + i * 1000, i + 1);
	for (int i = 0; i < 3; i++) {
		rtr_begin("app", "loop");
		for (int k = 0; k < 4; k++) {
			rtr_begin("app", "step");
			rtr_end("app", "step");
		}
		rtr_end("app", "loop");
	}
	rtr_counter_i64("mem", "rss", 5);
	rtr_counter_i64("mem", "rss", 9);
	rtr_counter_i64("mem", "rss", 1);
	rtr_counter_f64("mem", "ratio", 0.5);
	const struct rtr_arg series[] = {RTR_ARG_I64("used", 10), RTR_ARG_F64("share", 0.25)};
	rtr_counter_args("mem", "mix", series, 2);
	assert_int_equal(rtr_stop(), 0);

	yajl_val doc = jt_parse_file(path);
	assert_int_equal(jt_int(doc, "schema_version"), 1);
	assert_string_equal(jt_str(doc, "type"), "ringtrace-profile");
	assert_string_equal(jt_str(doc, "scope"), "process");
	assert_string_equal(jt_str(doc, "reason"), "stop");
	assert_true(YAJL_IS_TRUE(jt_at(doc, "final")));
	assert_int_equal(jt_int(doc, "pid"), getpid());
	assert_int_equal(jt_int(doc, "depth_limit"), 64);
	assert_int_equal(jt_int(doc, "deeper"), 0);
	assert_int_equal(jt_int(doc, "dropped"), 0);
	yajl_val th = thread_of(doc, gettid());
	yajl_val calls = calls_of(th);

	yajl_val outer = call(calls, "outer");
	assert_string_equal(jt_str(outer, "cat"), "app");
	expect_node(outer, 2, 1500, 900, 500, 1000);
	yajl_val inner = call(calls_of(outer), "inner");
	expect_node(inner, 3, 600, 600, 100, 300);
	struct rtr__sketch q;
	read_sketch(inner, &q);
	assert_int_equal(q.count, 3);
	assert_int_equal(rtr__sketch_quantile(&q, 5000), 200);
	assert_int_equal(rtr__sketch_quantile(&q, 10000), 300);
	rtr__sketch_free(&q);

	yajl_val many = call(calls, "many");
	expect_node(many, 100, 5050, 5050, 1, 100);
	read_sketch(many, &q);
	struct rtr__sketch ref;
	rtr__sketch_init(&ref);
	for (uint64_t v = 1; v <= 100; v++)
		assert_int_equal(rtr__sketch_add(&ref, v), 0);
	assert_int_equal(q.count, 100);
	for (unsigned p = 100; p <= 10000; p += 100) /* the same buckets: the same answers */
		assert_int_equal(rtr__sketch_quantile(&q, p), rtr__sketch_quantile(&ref, p));
	uint64_t p50 = rtr__sketch_quantile(&q, 5000), p99 = rtr__sketch_quantile(&q, 9900);
	assert_true(p50 >= 49 && p50 <= 51); /* exact 50, within 1 % and its rounding */
	assert_true(p99 >= 98 && p99 <= 100);
	rtr__sketch_free(&q);
	rtr__sketch_free(&ref);

	yajl_val loop = call(calls, "loop");
	yajl_val step = call(calls_of(loop), "step");
	assert_int_equal(jt_int(loop, "n"), 3);
	assert_int_equal(jt_int(step, "n"), 12);
	assert_int_equal(jt_int(loop, "s"), jt_int(loop, "t") - jt_int(step, "t"));
	assert_int_equal(jt_int(step, "s"), jt_int(step, "t"));
	assert_true(jt_int(loop, "min") <= jt_int(loop, "max"));
	assert_true(jt_int(loop, "min") * 3 <= jt_int(loop, "t"));
	assert_true(jt_int(loop, "max") * 3 >= jt_int(loop, "t"));
	read_sketch(step, &q);
	assert_int_equal(q.count, 12);
	rtr__sketch_free(&q);

	/* events: 105 completes, 3 * (2 + 4 * 2) B/E, 5 counter samples */
	assert_int_equal(jt_int(th, "events"), 105 + 30 + 5);
	assert_int_equal(jt_int(doc, "events"), 105 + 30 + 5);
	assert_int_equal(jt_int(th, "dropped"), 0);

	yajl_val counters = jt_array(doc, "counters");
	int seen = 0;
	for (size_t i = 0; i < counters->u.array.len; i++) {
		yajl_val c = counters->u.array.values[i];
		assert_string_equal(jt_str(c, "cat"), "mem");
		assert_int_equal(jt_int(c, "tid"), gettid());
		if (strcmp(jt_str(c, "name"), "rss") == 0) {
			assert_int_equal(jt_int(c, "samples"), 3);
			assert_true(jt_double(c, "min") == 1 && jt_double(c, "max") == 9);
			assert_true(jt_double(c, "mean") == 5 && jt_double(c, "last") == 1);
			seen |= 1;
		} else if (strcmp(jt_str(c, "name"), "mix used") == 0) {
			assert_int_equal(jt_int(c, "samples"), 1);
			assert_true(jt_double(c, "last") == 10 && jt_double(c, "mean") == 10);
			seen |= 4;
		} else if (strcmp(jt_str(c, "name"), "mix share") == 0) {
			assert_true(jt_double(c, "last") == 0.25 && jt_double(c, "min") == 0.25);
			seen |= 8;
		} else {
			assert_string_equal(jt_str(c, "name"), "ratio");
			assert_int_equal(jt_int(c, "samples"), 1);
			assert_true(jt_double(c, "min") == 0.5 && jt_double(c, "last") == 0.5);
			seen |= 2;
		}
	}
	assert_int_equal(seen, 15);
	yajl_tree_free(doc);
}

/* Slices below the depth limit count in their ancestor at the limit. */
static void test_depth_limit(void **state)
{
	char path[512];
	(void)state;
	tu_own_file(path, sizeof(path), "profile", "depth", ".json");
	start_profile(path, 3, 0);
	uint64_t base = rtr_now_ns() + 1000;
	for (int i = 0; i < 2; i++) {
		rtr_begin("app", "a");
		rtr_begin("app", "b");
		rtr_begin("app", "c");
		rtr_begin("app", "d");
		rtr_begin("app", "e");
		rtr_end("app", "e");
		rtr_end("app", "d");
		rtr_complete("app", "leaf", base + (uint64_t)i, 1); /* below the limit too */
		rtr_end("app", "c");
		rtr_end("app", "b");
		rtr_end("app", "a");
	}
	assert_int_equal(rtr_stop(), 0);

	yajl_val doc = jt_parse_file(path);
	assert_int_equal(jt_int(doc, "depth_limit"), 3);
	assert_int_equal(jt_int(doc, "deeper"), 6);
	yajl_val a = call(calls_of(thread_of(doc, gettid())), "a");
	yajl_val b = call(calls_of(a), "b");
	yajl_val c = call(calls_of(b), "c");
	assert_int_equal(jt_int(c, "n"), 2);
	assert_int_equal(jt_int(c, "s"), jt_int(c, "t")); /* d and e are in it */
	assert_null(yajl_tree_get(c, (const char *[]){"calls", NULL}, yajl_t_array));
	assert_int_equal(jt_int(b, "s"), jt_int(b, "t") - jt_int(c, "t"));
	yajl_tree_free(doc);
}

/* Past the node limit a new call path counts in its parent, as "unplaced". */
static void test_node_limit(void **state)
{
	char path[512], name[32];
	(void)state;
	tu_own_file(path, sizeof(path), "profile", "nodes", ".json");
	start_profile(path, 0, 16);
	rtr_begin("app", "top");
	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "path_%02d", i);
		rtr_begin_copy("app", name);
		rtr_end_copy("app", name);
	}
	rtr_end("app", "top");
	assert_int_equal(rtr_stop(), 0);

	yajl_val doc = jt_parse_file(path);
	assert_int_equal(jt_int(doc, "node_limit"), 16);
	yajl_val top = call(calls_of(thread_of(doc, gettid())), "top");
	size_t kept = calls_of(top)->u.array.len;
	assert_int_equal(kept, 15); /* 16 nodes: top and 15 children */
	assert_int_equal(jt_int(doc, "unplaced"), 40 - 15);
	yajl_tree_free(doc);
}

/* A snapshot: the profile so far, with the slice still open counted to its end. */
static void test_snapshot(void **state)
{
	char path[512], snap[512];
	(void)state;
	tu_own_file(path, sizeof(path), "profile", "snapfinal", ".json");
	tu_own_file(snap, sizeof(snap), "profile", "snap", ".json");
	start_profile(path, 0, 0);
	uint64_t base = rtr_now_ns() + 1000;
	rtr_begin("app", "open");
	rtr_complete("app", "done", base, 10);
	assert_int_equal(rtr_snapshot(snap), 0);
	rtr_complete("app", "done", base + 100, 30);
	rtr_end("app", "open");
	assert_int_equal(rtr_stop(), 0);

	yajl_val doc = jt_parse_file(snap);
	assert_string_equal(jt_str(doc, "reason"), "snapshot");
	assert_true(YAJL_IS_FALSE(jt_at(doc, "final")));
	yajl_val open = call(calls_of(thread_of(doc, gettid())), "open");
	assert_int_equal(jt_int(open, "n"), 1);
	assert_true(jt_int(open, "t") > 0);
	assert_true(jt_int(open, "t") <= jt_int(doc, "end_ns"));
	expect_node(call(calls_of(open), "done"), 1, 10, 10, 10, 10);
	yajl_tree_free(doc);

	doc = jt_parse_file(path);
	assert_string_equal(jt_str(doc, "reason"), "stop");
	open = call(calls_of(thread_of(doc, gettid())), "open");
	assert_int_equal(jt_int(open, "n"), 1);
	expect_node(call(calls_of(open), "done"), 2, 40, 40, 10, 30);
	yajl_tree_free(doc);
}

/* With rotation, a segment's end writes the profile so far at the segment's path. */
static void test_rotation(void **state)
{
	char pattern[512], seg0[512], seg1[512];
	struct rtr_config cfg;
	(void)state;
	tu_own_file(pattern, sizeof(pattern), "profile", "rot-%s", ".json");
	tu_own_file(seg0, sizeof(seg0), "profile", "rot-0000", ".json");
	tu_own_file(seg1, sizeof(seg1), "profile", "rot-0001", ".json");
	rtr_config_init(&cfg);
	cfg.path = pattern;
	cfg.mode = RTR_MODE_PROFILE;
	cfg.max_seconds = 3600; /* rotating: a snapshot ends the segment */
	assert_int_equal(rtr_start(&cfg), 0);
	uint64_t base = rtr_now_ns() + 1000;
	rtr_complete("app", "work", base, 7);
	assert_int_equal(rtr_snapshot(NULL), 0);
	rtr_complete("app", "work", base + 100, 5);
	assert_int_equal(rtr_stop(), 0);

	yajl_val doc = jt_parse_file(seg0);
	assert_string_equal(jt_str(doc, "reason"), "rotation");
	assert_true(YAJL_IS_FALSE(jt_at(doc, "final")));
	expect_node(call(calls_of(thread_of(doc, gettid())), "work"), 1, 7, 7, 7, 7);
	yajl_tree_free(doc);
	doc = jt_parse_file(seg1);
	assert_string_equal(jt_str(doc, "reason"), "stop");
	expect_node(call(calls_of(thread_of(doc, gettid())), "work"), 2, 12, 12, 5, 7);
	yajl_tree_free(doc);
}

/* A little work, so that slices last a while and nest without ties. */
static volatile unsigned spun;

static void spin(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		spun += i;
}

/* A call path's count and total, from the trace or the profile. */
struct path_sum {
	char path[256];
	uint64_t n, t;
};

static struct path_sum *path_find(struct path_sum *v, size_t *nv, size_t cap, const char *path)
{
	for (size_t i = 0; i < *nv; i++)
		if (strcmp(v[i].path, path) == 0)
			return &v[i];
	assert_true(*nv < cap);
	snprintf(v[*nv].path, sizeof(v[*nv].path), "%s", path);
	return &v[(*nv)++];
}

static int by_start(const void *a, const void *b)
{
	const struct tt_event *x = *(const struct tt_event *const *)a;
	const struct tt_event *y = *(const struct tt_event *const *)b;

	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	return x->dur_ns > y->dur_ns ? -1 : x->dur_ns < y->dur_ns;
}

/* The trace's X slices of thread tid nested by time into call paths "a/b/c". */
static size_t trace_paths(const char *path, int64_t tid, struct path_sum *v, size_t cap)
{
	struct tt_trace tr;
	size_t n = 0, nv = 0, depth = 0;

	assert_int_equal(tt_load(path, 0, &tr), 0);
	const struct tt_event **xs = calloc(tr.n, sizeof(*xs));
	assert_non_null(xs);
	for (size_t i = 0; i < tr.n; i++)
		if (strcmp(tr.ev[i].ph, "X") == 0 && tr.ev[i].tid == tid)
			xs[n++] = &tr.ev[i];
	qsort(xs, n, sizeof(*xs), by_start);
	const struct tt_event *stack[64];
	for (size_t i = 0; i < n; i++) {
		const struct tt_event *e = xs[i];
		while (depth > 0 && !(e->ts_ns >= stack[depth - 1]->ts_ns &&
				      e->ts_ns + e->dur_ns <=
					      stack[depth - 1]->ts_ns + stack[depth - 1]->dur_ns))
			depth--;
		assert_true(depth < 64);
		stack[depth++] = e;
		char p[256] = "";
		for (size_t d = 0; d < depth; d++)
			snprintf(p + strlen(p), sizeof(p) - strlen(p), "/%s", stack[d]->name);
		struct path_sum *ps = path_find(v, &nv, cap, p);
		ps->n++;
		ps->t += e->dur_ns;
	}
	free(xs);
	tt_free(&tr);
	return nv;
}

/* The profile's nodes under calls, as call paths below prefix. */
static void profile_paths(yajl_val calls, const char *prefix, struct path_sum *v, size_t *nv,
			  size_t cap)
{
	for (size_t i = 0; calls != NULL && i < calls->u.array.len; i++) {
		yajl_val nd = calls->u.array.values[i];
		char p[256];
		snprintf(p, sizeof(p), "%s/%s", prefix, jt_str(nd, "name"));
		struct path_sum *ps = path_find(v, nv, cap, p);
		ps->n += (uint64_t)jt_int(nd, "n");
		ps->t += (uint64_t)jt_int(nd, "t");
		profile_paths(yajl_tree_get(nd, (const char *[]){"calls", NULL}, yajl_t_array), p,
			      v, nv, cap);
	}
}

/* RINGTRACE_PROFILE=1 beside a JSON trace: per call path the trace's count, and its
 * total within 1 %. */
static void test_beside_trace(void **state)
{
	char path[512], prof[600], name[32];
	struct rtr_config cfg;
	(void)state;
	tu_own_file(path, sizeof(path), "profile", "beside", ".json");
	snprintf(prof, sizeof(prof), "%s.profile.json", path);
	rtr_config_init(&cfg);
	cfg.path = path;
	cfg.profile = 1;
	cfg.on_full = RTR_ON_FULL_BLOCK;
	assert_int_equal(rtr_start(&cfg), 0);
	for (int i = 0; i < 20; i++) {
		rtr_begin("app", "iteration");
		for (int k = 0; k < 3; k++) {
			snprintf(name, sizeof(name), "kernel_%d", k);
			rtr_begin_copy("gpu", name);
			spin(2000 + 500 * (unsigned)k);
			if (k == 1) {
				rtr_begin("app", "inner");
				spin(1000);
				rtr_end("app", "inner");
			}
			rtr_end_copy("gpu", name);
		}
		spin(1000);
		rtr_end("app", "iteration");
	}
	assert_int_equal(rtr_stop(), 0);

	struct path_sum *tr = calloc(64, sizeof(*tr)), *pr = calloc(64, sizeof(*pr));
	size_t ntr = trace_paths(path, gettid(), tr, 64), npr = 0;
	yajl_val doc = jt_parse_file(prof);
	assert_string_equal(jt_str(doc, "reason"), "stop");
	profile_paths(calls_of(thread_of(doc, gettid())), "", pr, &npr, 64);
	assert_int_equal(ntr, 5); /* iteration, its kernels, inner */
	assert_int_equal(npr, ntr);
	for (size_t i = 0; i < ntr; i++) {
		struct path_sum *p = path_find(pr, &npr, 64, tr[i].path);
		assert_int_equal(p->n, tr[i].n);
		double diff = (double)p->t - (double)tr[i].t;
		assert_true(diff * diff <= 1e-4 * (double)tr[i].t * (double)tr[i].t);
	}
	assert_int_equal(npr, ntr); /* path_find() made none */
	free(tr);
	free(pr);
	yajl_tree_free(doc);
	unlink(prof);
}

/* 10,100 call paths (100 of ~20-character names, 100 under each), 3 calls each: the
 * file stays within 1 MiB. */
static void test_size(void **state)
{
	char path[512], outer[32], inner[32];
	(void)state;
	tu_own_file(path, sizeof(path), "profile", "size", ".json");
	start_profile(path, 0, 0);
	for (int call = 0; call < 3; call++) {
		for (int a = 0; a < 100; a++) {
			snprintf(outer, sizeof(outer), "solver_phase_%03d_run", a);
			rtr_begin_copy("app", outer);
			for (int b = 0; b < 100; b++) {
				snprintf(inner, sizeof(inner), "compute_kernel_%03d", b);
				rtr_begin_copy("app", inner);
				spin(3000 + 1000 * (unsigned)call);
				rtr_end_copy("app", inner);
			}
			rtr_end_copy("app", outer);
		}
	}
	assert_int_equal(rtr_stop(), 0);

	yajl_val doc = jt_parse_file(path);
	yajl_val calls = calls_of(thread_of(doc, gettid()));
	size_t paths = calls->u.array.len;
	for (size_t i = 0; i < calls->u.array.len; i++) {
		yajl_val kids = calls_of(calls->u.array.values[i]);
		paths += kids->u.array.len;
		for (size_t k = 0; k < kids->u.array.len; k++)
			assert_int_equal(jt_int(kids->u.array.values[k], "n"), 3);
	}
	assert_int_equal(paths, 10100);
	uint64_t size = tu_file_size(path);
	printf("profile of %zu call paths: %llu bytes\n", paths, (unsigned long long)size);
	assert_true(size <= ((uint64_t)1 << 20));
	yajl_tree_free(doc);
}

/* On a thread of its own, whose ring this session makes with the session's 4 KiB (the
 * test's own thread keeps the ring an earlier test's session made, of the default
 * size, which a writer could keep up with): 200000 ticks. */
static void *drop_ticks(void *arg)
{
	uint64_t base = rtr_now_ns();

	*(pid_t *)arg = gettid();
	for (uint64_t i = 0; i < 200000; i++)
		rtr_complete("app", "tick", base + i, 1);
	return NULL;
}

/* Drops: the profile's counts are those of the stats, per thread and in all. */
static void test_drops(void **state)
{
	char path[512];
	struct rtr_config cfg;
	struct rtr_stats st;
	(void)state;
	tu_own_file(path, sizeof(path), "profile", "drops", ".json");
	rtr_config_init(&cfg);
	cfg.path = path;
	cfg.mode = RTR_MODE_PROFILE;
	cfg.on_full = RTR_ON_FULL_DROP;
	cfg.ring_bytes = 4096;
	cfg.flush_ms = 1000;
	assert_int_equal(rtr_start(&cfg), 0);
	pthread_t t;
	pid_t tid;
	assert_int_equal(pthread_create(&t, NULL, drop_ticks, &tid), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(rtr_stop(), 0);
	rtr_stats_get(&st);

	yajl_val doc = jt_parse_file(path);
	yajl_val th = thread_of(doc, tid);
	long long ticks = jt_int(call(calls_of(th), "tick"), "n");
	assert_true(st.events_dropped > 0); /* a 4 KiB ring cannot keep up */
	assert_int_equal(jt_int(doc, "dropped"), st.events_dropped);
	assert_int_equal(jt_int(th, "dropped"), st.events_dropped);
	assert_int_equal(jt_int(doc, "events"), st.events_recorded - st.events_dropped);
	assert_int_equal(ticks + jt_int(th, "dropped"), 200000);
	yajl_tree_free(doc);
}

/* A child that records and ends in `how`: 0 returns from main without rtr_stop() (the
 * exit handler), 1 takes SIGTERM (RINGTRACE_SIGNALS), 2 stops with a 4 KiB file size
 * limit (the profile cannot be written: the stop says so). */
static void child_ends(const char *path, int how)
{
	struct rtr_config cfg;

	rtr_config_init(&cfg);
	cfg.path = path;
	cfg.mode = RTR_MODE_PROFILE;
	cfg.signals = "TERM";
	if (rtr_start(&cfg) != 0)
		_exit(30);
	rtr_begin("app", "main");
	for (int i = 0; i < 100; i++) {
		char name[32];
		snprintf(name, sizeof(name), "a_rather_long_name_%02d", i);
		rtr_complete_copy("app", name, rtr_now_ns(), 5);
	}
	if (how == 1)
		raise(SIGTERM);
	if (how == 2) {
		struct rlimit lim = {4096, 4096};
		signal(SIGXFSZ, SIG_IGN);
		setrlimit(RLIMIT_FSIZE, &lim);
		_exit(rtr_stop() == -EFBIG ? 0 : 33);
	}
	exit(0); /* the exit handler stops the recorder */
}

static void test_endings(void **state)
{
	char path[512];
	(void)state;
	for (int how = 0; how < 3; how++) {
		char name[16];
		snprintf(name, sizeof(name), "end%d", how);
		tu_own_file(path, sizeof(path), "profile", name, ".json");
		pid_t pid = tu_fork();
		if (pid == 0)
			child_ends(path, how);
		int status = tu_wait_child(pid, TU_CHILD_TIMEOUT_S);
		if (how == 1) {
			assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
		} else {
			tu_expect_exit_0(status);
		}
		if (how == 2) {
			assert_int_equal(tu_file_size(path), 0); /* the rename never happened */
			continue;
		}
		yajl_val doc = jt_parse_file(path);
		assert_string_equal(jt_str(doc, "reason"), how == 1 ? "signal" : "stop");
		assert_true(YAJL_IS_TRUE(jt_at(doc, "final")));
		assert_int_equal(jt_int(doc, "pid"), pid);
		yajl_val main_node = call(calls_of(thread_of(doc, pid)), "main");
		assert_int_equal(jt_int(main_node, "n"), 1); /* open: counted to the end */
		assert_int_equal(calls_of(main_node)->u.array.len, 100);
		expect_node(call(calls_of(main_node), "a_rather_long_name_42"), 1, 5, 5, 5, 5);
		yajl_tree_free(doc);
	}
}

/* fork(): the child records to its own profile (%p), the parent's is its own. */
static void test_fork(void **state)
{
	char pattern[512], mine[512], theirs[512];
	(void)state;
	tu_own_file(pattern, sizeof(pattern), "profile", "fork-%p", ".json");
	start_profile(pattern, 0, 0);
	snprintf(mine, sizeof(mine), "%s", rtr_trace_path());
	uint64_t base = rtr_now_ns();
	rtr_complete("app", "before_fork", base, 11);
	pid_t pid = tu_fork();
	if (pid == 0) {
		struct rtr_config cfg;
		rtr_config_init(&cfg);
		cfg.path = pattern;
		cfg.mode = RTR_MODE_PROFILE;
		if (rtr_start(&cfg) != 0)
			_exit(30);
		rtr_complete("app", "in_child", rtr_now_ns(), 22);
		_exit(rtr_stop() == 0 ? 0 : 31);
	}
	tu_expect_exit_0(tu_wait_child(pid, TU_CHILD_TIMEOUT_S));
	rtr_complete("app", "in_parent", base + 100, 33);
	assert_int_equal(rtr_stop(), 0);

	yajl_val doc = jt_parse_file(mine);
	yajl_val calls = calls_of(thread_of(doc, gettid()));
	expect_node(call(calls, "before_fork"), 1, 11, 11, 11, 11);
	expect_node(call(calls, "in_parent"), 1, 33, 33, 33, 33);
	assert_int_equal(calls->u.array.len, 2);
	yajl_tree_free(doc);
	snprintf(theirs, sizeof(theirs), "%s", mine);
	char *at = strstr(theirs, "fork-");
	assert_non_null(at);
	snprintf(at, sizeof(theirs) - (size_t)(at - theirs), "fork-%d-%d.json", (int)pid,
		 (int)getpid());
	doc = jt_parse_file(theirs);
	assert_int_equal(jt_int(doc, "pid"), pid);
	calls = calls_of(thread_of(doc, pid));
	assert_int_equal(calls->u.array.len, 1);
	expect_node(call(calls, "in_child"), 1, 22, 22, 22, 22);
	yajl_tree_free(doc);
	unlink(mine);
	unlink(theirs);
}

static void scope_leaf(int k)
{
	RTR_SCOPE("app", "leaf");
	spin(100 + (unsigned)k);
}

static void scope_middle(void)
{
	RTR_SCOPE("app", "middle");
	scope_leaf(0);
	rtr_begin("mpi", "MPI_Send"); /* a B/E inside scopes */
	scope_leaf(1);
	rtr_end("mpi", "MPI_Send");
	scope_leaf(2);
}

/* Scopes are one record at their end, after their children: they nest all the same,
 * with B/E slices inside them; and past the room for waiting slices (16,384) an outer
 * scope still takes the slices inside it. */
static void test_scopes(void **state)
{
	char path[512];
	(void)state;
	tu_own_file(path, sizeof(path), "profile", "scopes", ".json");
	start_profile(path, 0, 0);
	for (int i = 0; i < 4; i++) {
		RTR_SCOPE("app", "outer");
		scope_middle();
		scope_middle();
	}
	{
		RTR_SCOPE("app", "long");
		for (int i = 0; i < 40000; i++) {
			RTR_SCOPE("app", "tick");
		}
	}
	assert_int_equal(rtr_stop(), 0);

	yajl_val doc = jt_parse_file(path);
	yajl_val calls = calls_of(thread_of(doc, gettid()));
	assert_int_equal(calls->u.array.len, 2);
	yajl_val outer = call(calls, "outer");
	assert_int_equal(jt_int(outer, "n"), 4);
	assert_int_equal(calls_of(outer)->u.array.len, 1);
	yajl_val middle = call(calls_of(outer), "middle");
	assert_int_equal(jt_int(middle, "n"), 8);
	yajl_val leaf = call(calls_of(middle), "leaf");
	yajl_val send = call(calls_of(middle), "MPI_Send");
	yajl_val inner = call(calls_of(send), "leaf");
	assert_int_equal(jt_int(leaf, "n"), 16);
	assert_int_equal(jt_int(send, "n"), 8);
	assert_int_equal(jt_int(inner, "n"), 8);
	assert_int_equal(jt_int(send, "s"), jt_int(send, "t") - jt_int(inner, "t"));
	assert_int_equal(jt_int(middle, "s"),
			 jt_int(middle, "t") - jt_int(leaf, "t") - jt_int(send, "t"));
	assert_int_equal(jt_int(outer, "s"), jt_int(outer, "t") - jt_int(middle, "t"));
	yajl_val lng = call(calls, "long");
	yajl_val tick = call(calls_of(lng), "tick");
	assert_int_equal(jt_int(lng, "n"), 1);
	assert_int_equal(jt_int(tick, "n"), 40000);
	assert_int_equal(jt_int(lng, "s"), jt_int(lng, "t") - jt_int(tick, "t"));
	yajl_tree_free(doc);
}

/* Many scopes, each around one other (a loop's step around its copy): the room for
 * waiting slices fills again and again, and no fold takes a copy away from the step
 * that comes just after it (it used to, past the level's eight aggregates: 11 of
 * 300,000 copies were left at the top). */
static void test_scope_pairs_past_the_room(void **state)
{
	char path[512];
	(void)state;
	tu_own_file(path, sizeof(path), "profile", "pairs", ".json");
	start_profile(path, 0, 0);
	for (int i = 0; i < 300000; i++) {
		RTR_SCOPE("app", "step");
		{
			RTR_SCOPE("app", "copy");
		}
	}
	assert_int_equal(rtr_stop(), 0);

	yajl_val doc = jt_parse_file(path);
	yajl_val calls = calls_of(thread_of(doc, gettid()));
	assert_int_equal(calls->u.array.len, 1);
	yajl_val step = call(calls, "step");
	assert_int_equal(jt_int(step, "n"), 300000);
	assert_int_equal(calls_of(step)->u.array.len, 1);
	assert_int_equal(jt_int(call(calls_of(step), "copy"), "n"), 300000);
	yajl_tree_free(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_known_slices, tu_teardown),
		cmocka_unit_test_teardown(test_depth_limit, tu_teardown),
		cmocka_unit_test_teardown(test_node_limit, tu_teardown),
		cmocka_unit_test_teardown(test_snapshot, tu_teardown),
		cmocka_unit_test_teardown(test_rotation, tu_teardown),
		cmocka_unit_test_teardown(test_beside_trace, tu_teardown),
		cmocka_unit_test_teardown(test_size, tu_teardown),
		cmocka_unit_test_teardown(test_drops, tu_teardown),
		cmocka_unit_test_teardown(test_endings, tu_teardown),
		cmocka_unit_test_teardown(test_fork, tu_teardown),
		cmocka_unit_test_teardown(test_scopes, tu_teardown),
		cmocka_unit_test_teardown(test_scope_pairs_past_the_room, tu_teardown),
	};

	tu_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
