/* SPDX-License-Identifier: MIT */
/*
 * The event model beyond slices: scoped instants, counters with several series,
 * flows, async spans, array arguments and values of any JSON shape. Each test records through the
 * public API, parses the file back and compares every field the call put there.
 */
#include <ringtrace.h>
#include <ringtrace/value.h>

#include "producer/events.h"
#include "test_util.h"
#include "trace_read.h"

#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static char path[4096];

/* Record with `body`, then load the file: every event between the markers, and the
 * start marker's origin. */
static void record(const char *name, void (*body)(void), struct tt_trace *t)
{
	tu_own_file(path, sizeof(path), "events", name, ".json");
	tu_start(path, RTR_IO_AUTO, RTR_ON_FULL_BLOCK, 1 << 16);
	body();
	assert_int_equal(rtr_stop(), 0);
	if (tt_load(path, TT_CHECK_ESCAPES, t) != 0)
		fail_msg("%s", t->error);
	assert_true(t->complete);
}

static void record_scoped_instants(void)
{
	rtr_instant_scoped("app", "thread", RTR_INSTANT_THREAD, NULL, 0);
	rtr_instant_scoped("app", "process", RTR_INSTANT_PROCESS, NULL, 0);
	rtr_instant_scoped("app", "global", RTR_INSTANT_GLOBAL,
			   RTR__ARGV(RTR_ARG_STR("why", "checkpoint")), 1);
	rtr_instant_scoped("app", "process", RTR_INSTANT_PROCESS, NULL, 0); /* cached head */
	rtr_instant("app", "plain");
}

static void instants_carry_their_scope(void **state)
{
	(void)state;
	struct tt_trace t = {0};
	const struct tt_event *e[8];

	record("instants", record_scoped_instants, &t);
	assert_int_equal(tu_events_of(&t, e, 8), 5);
	static const char *const scope[] = {"t", "p", "g", "p", "t"};
	static const char *const name[] = {"thread", "process", "global", "process", "plain"};
	for (int i = 0; i < 5; i++) {
		assert_string_equal(e[i]->ph, "i");
		assert_string_equal(e[i]->scope, scope[i]);
		assert_string_equal(e[i]->name, name[i]);
		assert_string_equal(e[i]->cat, "app");
		assert_int_equal(e[i]->tid, gettid());
	}
	assert_int_equal(e[2]->nargs, 1);
	assert_string_equal(tt_arg(e[2], "why")->s, "checkpoint");
	assert_int_equal(tt_arg(tu_end_marker(&t), "events")->i, 5);
	tt_free(&t);
}

static void record_counters(void)
{
	rtr_counter_args("mem", "device",
			 RTR__ARGV(RTR_ARG_I64("used", 1 << 20), RTR_ARG_F64("cached", 0.5),
				   RTR_ARG_U64("peak", UINT64_C(1) << 40)),
			 3);
	/* a string is not a series: left out; a bool counts as 0 or 1 */
	rtr_counter_args("mem", "mixed",
			 RTR__ARGV(RTR_ARG_STR("label", "x"), RTR_ARG_BOOL("busy", true),
				   RTR_ARG_I64("free", -3)),
			 3);
	/* nothing numeric: nothing recorded */
	rtr_counter_args("mem", "none", RTR__ARGV(RTR_ARG_STR("label", "x")), 1);
	rtr_counter_args("mem", "null", NULL, 4);
}

static void counters_keep_every_numeric_series(void **state)
{
	(void)state;
	struct tt_trace t = {0};
	const struct tt_event *e[8];

	record("counters", record_counters, &t);
	assert_int_equal(tu_events_of(&t, e, 8), 2);
	assert_string_equal(e[0]->ph, "C");
	assert_string_equal(e[0]->name, "device");
	assert_int_equal(e[0]->nargs, 3);
	assert_int_equal(tt_arg(e[0], "used")->i, 1 << 20);
	assert_true(tt_arg(e[0], "cached")->d == 0.5);
	assert_int_equal(tt_arg(e[0], "peak")->u, UINT64_C(1) << 40);
	assert_string_equal(e[1]->name, "mixed");
	assert_int_equal(e[1]->nargs, 2);
	assert_int_equal(tt_arg(e[1], "busy")->type, TT_INT); /* a series is a number */
	assert_int_equal(tt_arg(e[1], "busy")->i, 1);
	assert_int_equal(tt_arg(e[1], "free")->i, -3);
	assert_null(tt_arg(e[1], "label"));
	assert_int_equal(tt_arg(tu_end_marker(&t), "events")->i, 2);
	tt_free(&t);
}

static uint64_t flow_ids[2];

static void record_flows(void)
{
	flow_ids[0] = rtr_flow_id();
	flow_ids[1] = UINT64_MAX;
	rtr_begin("host", "launch");
	rtr_flow_start("gpu", "kernel", flow_ids[0]);
	rtr_end("host", "launch");
	rtr_begin("host", "sync");
	rtr_flow_step("gpu", "kernel", flow_ids[0]);
	rtr_end("host", "sync");
	rtr_begin("gpu", "kernel");
	rtr_flow_end("gpu", "kernel", flow_ids[0]);
	rtr_flow_end("gpu", "max id", flow_ids[1]);
	rtr_end("gpu", "kernel");
}

static void flows_have_hex_ids_and_bind_to_the_enclosing_slice(void **state)
{
	(void)state;
	struct tt_trace t = {0};
	const struct tt_event *e[16];
	char want[32];

	record("flows", record_flows, &t);
	size_t n = tu_events_of(&t, e, 16);
	assert_int_equal(n, 7);
	/* s, X launch, t, X sync, f, f, X kernel: each slice one X, written at its end */
	static const char *const ph[] = {"s", "X", "t", "X", "f", "f", "X"};
	static const char *const slice[] = {"launch", "sync", "kernel"};
	for (size_t i = 0; i < n; i++)
		assert_string_equal(e[i]->ph, ph[i]);
	snprintf(want, sizeof(want), "0x%llx", (unsigned long long)flow_ids[0]);
	for (int i = 0, k = 0; i <= 4; i += 2, k++) {
		const struct tt_event *x = e[i == 4 ? 6 : i + 1];
		assert_string_equal(x->name, slice[k]);
		assert_string_equal(x->cat, k == 2 ? "gpu" : "host");
		assert_string_equal(e[i]->name, "kernel");
		assert_string_equal(e[i]->cat, "gpu");
		assert_int_equal(e[i]->id_type, TT_STRING);
		assert_string_equal(e[i]->id, want);
		/* inside its slice */
		assert_true(e[i]->ts_ns >= x->ts_ns);
		assert_true(e[i]->ts_ns <= x->ts_ns + x->dur_ns);
	}
	assert_true(e[5]->ts_ns >= e[6]->ts_ns && e[5]->ts_ns <= e[6]->ts_ns + e[6]->dur_ns);
	assert_true(e[3]->ts_ns >= e[1]->ts_ns + e[1]->dur_ns);
	assert_true(e[6]->ts_ns >= e[3]->ts_ns + e[3]->dur_ns);
	assert_null(e[0]->bp);
	assert_null(e[2]->bp);
	assert_string_equal(e[4]->bp, "e");
	assert_string_equal(e[5]->name, "max id");
	assert_string_equal(e[5]->bp, "e");
	assert_string_equal(e[5]->id, "0xffffffffffffffff");
	/* the id carries the process id above its 40 low bits, and is never 0 */
	assert_int_equal(flow_ids[0] >> 40, (uint64_t)getpid());
	assert_true((flow_ids[0] & ((UINT64_C(1) << 40) - 1)) != 0);
	tt_free(&t);
}

#define ID_THREADS 4
#define ID_EACH	   10000

static void *take_ids(void *arg)
{
	uint64_t *out = arg;

	for (int i = 0; i < ID_EACH; i++)
		out[i] = rtr_flow_id();
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static void flow_ids_are_unique_across_threads(void **state)
{
	(void)state;
	static uint64_t ids[ID_THREADS * ID_EACH];
	pthread_t th[ID_THREADS];

	for (int i = 0; i < ID_THREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, take_ids, &ids[i * ID_EACH]), 0);
	for (int i = 0; i < ID_THREADS; i++)
		pthread_join(th[i], NULL);
	qsort(ids, ID_THREADS * ID_EACH, sizeof(ids[0]), cmp_u64);
	for (size_t i = 1; i < ID_THREADS * ID_EACH; i++)
		assert_true(ids[i] != ids[i - 1]);
	assert_true(ids[0] != 0);
}

static void record_async(void)
{
	rtr_async_begin("net", "request", 0x2a, RTR__ARGV(RTR_ARG_STR("url", "/a")), 1);
	rtr_async_begin("net", "request", 0x2b, NULL, 0); /* overlaps the first */
	rtr_async_instant("net", "request", 0x2a, RTR__ARGV(RTR_ARG_I64("bytes", 512)), 1);
	rtr_async_end("net", "request", 0x2a);
	rtr_async_end("net", "request", 0x2b);
	rtr_async_begin(NULL, "no category", 7, NULL, 0);
	rtr_async_end(NULL, "no category", 7);
}

static void async_spans_match_on_category_id_and_name(void **state)
{
	(void)state;
	struct tt_trace t = {0};
	const struct tt_event *e[16];

	record("async", record_async, &t);
	assert_int_equal(tu_events_of(&t, e, 16), 7);
	static const char *const ph[] = {"b", "b", "n", "e", "e", "b", "e"};
	static const char *const id[] = {"0x2a", "0x2b", "0x2a", "0x2a", "0x2b", "0x7", "0x7"};
	for (int i = 0; i < 7; i++) {
		assert_string_equal(e[i]->ph, ph[i]);
		assert_string_equal(e[i]->id, id[i]);
		assert_true(e[i]->has_pid);
		assert_non_null(e[i]->cat); /* async events need one to match on */
		if (i > 0)
			assert_true(e[i]->ts_ns >= e[i - 1]->ts_ns);
	}
	assert_string_equal(e[0]->cat, "net");
	assert_string_equal(e[0]->name, "request");
	assert_string_equal(tt_arg(e[0], "url")->s, "/a");
	assert_int_equal(e[1]->nargs, 0);
	assert_int_equal(tt_arg(e[2], "bytes")->i, 512);
	assert_string_equal(e[5]->cat, "async");
	assert_string_equal(e[6]->cat, "async");
	tt_free(&t);
}

static int64_t big[600];

static void record_arrays(void)
{
	static const int64_t dims[] = {2, 3, 4, INT64_MIN, INT64_MAX};
	static const uint32_t lens[] = {2, 0, 3};
	static const char *const dtypes[] = {"float32", NULL, "q\"uote\n", "int64"};
	char runtime[16];

	for (int i = 0; i < 600; i++)
		big[i] = i - 300;
	snprintf(runtime, sizeof(runtime), "bf%d", 16);
	const char *names[] = {runtime};
	rtr_begin_v("op", "aten::mm", RTR_ARG_I64_LISTS("Input Dims", dims, lens, 3),
		    RTR_ARG_STR_ARRAY("Input type", dtypes, 4), RTR_ARG_I64_ARRAY("flat", dims, 5),
		    RTR_ARG_I64_ARRAY("empty", dims, 0), RTR_ARG_STR_ARRAY("copied", names, 1));
	runtime[0] = 'X'; /* recorded already: the file must not see this */
	rtr_end("op", "aten::mm");
	/* longer than RTR_MAX_COPY bytes: cut to whole values */
	rtr_instant_v("op", "big", RTR_ARG_I64_ARRAY("v", big, 600));
	rtr_instant_v("op", "null arrays", RTR_ARG_I64_ARRAY("a", NULL, 3),
		      RTR_ARG_STR_ARRAY("s", NULL, 2));
}

static void array_arguments_come_back_as_json_arrays(void **state)
{
	(void)state;
	struct tt_trace t = {0};
	const struct tt_event *e[8];

	record("arrays", record_arrays, &t);
	assert_int_equal(tu_events_of(&t, e, 8), 3);
	assert_string_equal(e[0]->ph, "X"); /* the B and its E, folded */
	assert_int_equal(e[0]->nargs, 5);
	assert_string_equal(tt_arg(e[0], "Input Dims")->raw,
			    "[[2,3],[],[4,-9223372036854775808,9223372036854775807]]");
	assert_string_equal(tt_arg(e[0], "Input type")->raw,
			    "[\"float32\",null,\"q\\\"uote\\n\",\"int64\"]");
	assert_string_equal(tt_arg(e[0], "flat")->raw,
			    "[2,3,4,-9223372036854775808,9223372036854775807]");
	assert_string_equal(tt_arg(e[0], "empty")->raw, "[]");
	assert_string_equal(tt_arg(e[0], "copied")->raw, "[\"bf16\"]");

	/* 4096 bytes hold 512 values */
	char want[8192], *p = want;
	p += sprintf(p, "[");
	for (int i = 0; i < 512; i++)
		p += sprintf(p, "%s%d", i ? "," : "", i - 300);
	sprintf(p, "]");
	assert_string_equal(tt_arg(e[1], "v")->raw, want);
	assert_string_equal(tt_arg(e[2], "a")->raw, "[]");
	assert_string_equal(tt_arg(e[2], "s")->raw, "[]");
	assert_int_equal(tt_arg(tu_end_marker(&t), "events")->i, 4);
	tt_free(&t);
}

static void record_null_names(void)
{
	rtr_instant_copy("app", NULL);
	rtr_begin_copy(NULL, NULL);
	rtr_end(NULL, NULL);
	rtr_complete_copy("app", NULL, rtr_now_ns(), 5);
	rtr_instant(NULL, NULL);
	rtr_instant_v("app", "null string", RTR_ARG_STR_COPY("s", NULL), RTR_ARG_STR("t", NULL));
}

/* NULL names are empty strings, NULL categories none; nothing reads through NULL
 * (the asan preset's UBSan checks the copies). */
static void null_names_are_recorded_as_empty_strings(void **state)
{
	(void)state;
	struct tt_trace t = {0};
	const struct tt_event *e[8];

	record("nullnames", record_null_names, &t);
	assert_int_equal(tu_events_of(&t, e, 8), 5);
	static const char *const ph[] = {"i", "X", "X", "i", "i"};
	for (int i = 0; i < 5; i++) {
		assert_string_equal(e[i]->ph, ph[i]);
		assert_string_equal(e[i]->name, i < 4 ? "" : "null string");
	}
	assert_string_equal(e[0]->cat, "app");
	assert_null(e[1]->cat); /* the slice begun and ended with NULL: one X */
	assert_true(e[1]->has_dur);
	assert_true(e[1]->ts_ns >= e[0]->ts_ns);
	assert_string_equal(e[2]->cat, "app");
	assert_int_equal(e[2]->dur_ns, 5);
	assert_null(e[3]->cat);
	assert_int_equal(tt_arg(e[4], "s")->type, TT_NULL);
	assert_int_equal(tt_arg(e[4], "t")->type, TT_NULL);
	tt_free(&t);
}

static const struct rtr_site kernel_site = {"kokkos", "axpy"};

/* A span ended by its id, as the Kokkos tool records one: nothing at its begin, one
 * record at its end with its start and duration in ticks (the clock is
 * CLOCK_MONOTONIC here, so ticks are nanoseconds), inside a slice that encloses it;
 * its arguments in the event, or the site's (RTR__F_SITE_ARGS). */
static void record_site_spans(void)
{
	char label[16];
	struct rtr_config cfg;
	static struct rtr__site_args with_args;
	static uint8_t bytes[4 * RTR__EXT_ARG];
	const struct rtr_arg site_args[] = {RTR_ARG_STR("kind", "parallel_scan"),
					    RTR_ARG_U64("device_id", UINT64_MAX),
					    RTR_ARG_I64("level", -3), RTR_ARG_BOOL("fenced", true)};

	rtr_config_init(&cfg);
	cfg.path = path;
	cfg.clock = RTR_CLOCK_MONOTONIC;
	assert_int_equal(rtr_start(&cfg), 0);
	rtr_begin("app", "outer");
	uint64_t t0 = rtr__ticks();
	while (rtr__ticks() < t0 + 5000)
		; /* the span's 5000 ns */
	snprintf(label, sizeof(label), "view %d", 7);
	struct rtr_arg args[] = {RTR_ARG_STR("kind", "parallel_for"),
				 RTR_ARG_U64("device_id", 1u << 24),
				 RTR_ARG_STR_COPY("label", label)};
	rtr__scope_args_at(&kernel_site, t0, 5000, args, 3);
	label[0] = 'X'; /* recorded already */
	rtr__scope_args_at(&kernel_site, rtr__ticks(), 0, NULL, 0);
	rtr__site_args_init(&with_args, "kokkos", "scan", site_args, 4, bytes);
	uint64_t t1 = rtr__ticks();
	while (rtr__ticks() < t1 + 700)
		; /* its 700 ns, inside "outer" */
	rtr__emit_flags(RTR__K_SCOPE, RTR__F_SITE_ARGS, t1, (uintptr_t)&with_args, 700);
	rtr_end("app", "outer");
	assert_int_equal(rtr_stop(), 0);
}

static void site_spans_ended_by_id_are_complete_slices_with_their_arguments(void **state)
{
	(void)state;
	struct tt_trace t = {0};
	const struct tt_event *e[8];

	tu_own_file(path, sizeof(path), "events", "site_spans", ".json");
	record_site_spans();
	if (tt_load(path, TT_CHECK_ESCAPES, &t) != 0)
		fail_msg("%s", t.error);
	assert_true(t.complete);
	assert_int_equal(tu_events_of(&t, e, 8), 4);
	for (int i = 0; i < 2; i++) {
		assert_string_equal(e[i]->ph, "X");
		assert_string_equal(e[i]->name, "axpy");
		assert_string_equal(e[i]->cat, "kokkos");
		assert_true(e[i]->ts_ns >= e[3]->ts_ns);
		assert_true(e[i]->ts_ns + e[i]->dur_ns <= e[3]->ts_ns + e[3]->dur_ns);
	}
	assert_int_equal(e[0]->dur_ns, 5000);
	assert_int_equal(e[0]->nargs, 3);
	assert_string_equal(tt_arg(e[0], "kind")->s, "parallel_for");
	assert_int_equal(tt_arg(e[0], "device_id")->i, 1 << 24);
	assert_string_equal(tt_arg(e[0], "label")->s, "view 7");
	assert_int_equal(e[1]->dur_ns, 0);
	assert_int_equal(e[1]->nargs, 0);
	assert_true(e[1]->ts_ns >= e[0]->ts_ns + e[0]->dur_ns);
	/* the site's arguments, each of its type */
	assert_string_equal(e[2]->name, "scan");
	assert_string_equal(e[2]->cat, "kokkos");
	assert_int_equal(e[2]->dur_ns, 700);
	assert_true(e[2]->ts_ns >= e[1]->ts_ns);
	assert_int_equal(e[2]->nargs, 4);
	assert_string_equal(tt_arg(e[2], "kind")->s, "parallel_scan");
	assert_string_equal(tt_arg(e[2], "device_id")->raw, "18446744073709551615");
	assert_int_equal(tt_arg(e[2], "level")->i, -3);
	assert_int_equal(tt_arg(e[2], "fenced")->type, TT_BOOL);
	assert_true(tt_arg(e[2], "fenced")->b);
	assert_string_equal(e[3]->name, "outer");
	assert_true(e[2]->ts_ns + e[2]->dur_ns <= e[3]->ts_ns + e[3]->dur_ns);
	assert_int_equal(tt_arg(tu_end_marker(&t), "events")->i, 5);
	tt_free(&t);
}

static const char region_name[] = "omp parallel";

/* Slices begun at a site that holds their arguments (RTR__F_SITE_ARGS), as the OMPT
 * tool begins its regions: ended by its E next (folded with it), around another slice
 * (held until its E), by rtr_pop(). */
static void record_site_begins(const char *file)
{
	struct rtr_config cfg;
	static struct rtr__site_args region;
	static uint8_t bytes[2 * RTR__EXT_ARG];
	const struct rtr_arg args[] = {RTR_ARG_U64("requested", 4),
				       RTR_ARG_STR("function", "solve")};

	rtr_config_init(&cfg);
	cfg.path = file;
	assert_int_equal(rtr_start(&cfg), 0);
	rtr__site_args_init(&region, "omp", region_name, args, 2, bytes);
	rtr__begin_site_args(&region);
	rtr_end("omp", region_name);
	rtr__begin_site_args(&region);
	rtr_begin("app", "inner");
	rtr_end("app", "inner");
	rtr_end("omp", region_name);
	rtr__begin_site_args(&region);
	rtr_pop("omp");
	assert_int_equal(rtr_stop(), 0);
}

static void assert_region_args(const struct tt_event *e)
{
	assert_string_equal(e->ph, "X");
	assert_string_equal(e->name, "omp parallel");
	assert_string_equal(e->cat, "omp");
	assert_int_equal(e->nargs, 2);
	assert_int_equal(tt_arg(e, "requested")->i, 4);
	assert_string_equal(tt_arg(e, "function")->s, "solve");
}

static void slices_begun_at_a_site_carry_its_arguments(void **state)
{
	(void)state;
	struct tt_trace t = {0};
	const struct tt_event *e[8];

	tu_own_file(path, sizeof(path), "events", "site_begins", ".json");
	record_site_begins(path);
	if (tt_load(path, TT_CHECK_ESCAPES, &t) != 0)
		fail_msg("%s", t.error);
	assert_true(t.complete);
	assert_int_equal(tu_events_of(&t, e, 8), 4);
	assert_region_args(e[0]);
	/* the B held until its E, written as one X after the slice inside it */
	assert_string_equal(e[1]->ph, "X");
	assert_string_equal(e[1]->name, "inner");
	assert_int_equal(e[1]->nargs, 0);
	assert_region_args(e[2]);
	assert_true(e[2]->ts_ns <= e[1]->ts_ns && e[2]->ts_ns >= e[0]->ts_ns + e[0]->dur_ns);
	assert_true(e[2]->ts_ns + e[2]->dur_ns >= e[1]->ts_ns + e[1]->dur_ns);
	assert_region_args(e[3]); /* its E a pop */
	assert_true(e[3]->ts_ns >= e[2]->ts_ns + e[2]->dur_ns);
	assert_int_equal(tt_arg(tu_end_marker(&t), "events")->i, 8);
	tt_free(&t);
}

/* Bytes of a value by hand: a tag, then a u32 or 8 bytes as given. */
static size_t hand(unsigned char *p, int tag, uint64_t x, size_t n)
{
	size_t at = 0;

	if (tag >= 0)
		p[at++] = (unsigned char)tag;
	memcpy(p + at, &x, n); /* little-endian: the low n bytes */
	return at + n;
}

static void record_values(void)
{
	unsigned char buf[512], deep[256], bad[6][32];
	static char strings[20000];
	struct rtr_value v;
	size_t n[6] = {0};

	rtr_value_init(&v, buf, sizeof(buf));
	rtr_value_object(&v, 5);
	rtr_value_key(&v, "shape", 5);
	rtr_value_array(&v, 3);
	rtr_value_i64(&v, INT64_MIN);
	rtr_value_u64(&v, UINT64_MAX);
	rtr_value_f64(&v, 0.1);
	rtr_value_key(&v, "q\"k", 3);
	rtr_value_str(&v, "a\0b\n", 4);
	rtr_value_key(&v, "empty", 5);
	rtr_value_array(&v, 2);
	rtr_value_array(&v, 0);
	rtr_value_object(&v, 0);
	rtr_value_key(&v, "odd", 3);
	rtr_value_array(&v, 4);
	rtr_value_null(&v);
	rtr_value_bool(&v, false);
	rtr_value_bool(&v, true);
	rtr_value_f64(&v, NAN);
	rtr_value_key(&v, "", 0);
	rtr_value_f64(&v, -0.0);
	assert_false(v.cut);
	rtr_instant_v("v", "shapes", RTR_ARG_VALUE("v", buf, v.len), RTR_ARG_I64("after", 7));

	/* 40 arrays deep: the 33rd is null */
	rtr_value_init(&v, deep, sizeof(deep));
	for (int i = 0; i < 40; i++)
		rtr_value_array(&v, 1);
	rtr_value_i64(&v, 1);
	/* 1000 strings of 10 bytes, 15000 bytes: cut at RTR_MAX_COPY */
	struct rtr_value many;
	static unsigned char many_buf[16000];
	rtr_value_init(&many, many_buf, sizeof(many_buf));
	rtr_value_array(&many, 1000);
	for (int i = 0; i < 1000; i++) {
		snprintf(strings + 10 * i, 11, "s%09d", i);
		rtr_value_str(&many, strings + 10 * i, 10);
	}
	assert_int_equal(many.len, 15005);
	rtr_instant_v("v", "limits", RTR_ARG_VALUE("deep", deep, v.len),
		      RTR_ARG_VALUE("many", many_buf, many.len), RTR_ARG_VALUE("none", NULL, 9),
		      RTR_ARG_VALUE("zero", many_buf, 0));

	/* hostile bytes: counts past the end, an unknown tag, a string longer than its
	 * bytes, a key without an item, a number cut short */
	n[0] = hand(bad[0], '[', 5, 4);
	n[0] += hand(bad[0] + n[0], 'i', 42, 8);
	n[0] += hand(bad[0] + n[0], 'Z', 0, 0);
	n[0] += hand(bad[0] + n[0], 'i', 43, 8);
	n[1] = hand(bad[1], 's', 1000, 4);
	memcpy(bad[1] + n[1], "abc", 3);
	n[1] += 3;
	n[2] = hand(bad[2], '{', 2, 4);
	n[2] += hand(bad[2] + n[2], -1, 1, 4);
	bad[2][n[2]++] = 'k';
	n[3] = hand(bad[3], 'd', 0, 3);
	n[4] = hand(bad[4], '{', 1, 4);
	n[4] += hand(bad[4] + n[4], -1, 9, 2);
	n[5] = hand(bad[5], 0, 0, 0);
	rtr_instant_v("v", "hostile", RTR_ARG_VALUE("a", bad[0], n[0]),
		      RTR_ARG_VALUE("b", bad[1], n[1]), RTR_ARG_VALUE("c", bad[2], n[2]),
		      RTR_ARG_VALUE("d", bad[3], n[3]), RTR_ARG_VALUE("e", bad[4], n[4]),
		      RTR_ARG_VALUE("f", bad[5], n[5]));
}

static void values_come_back_as_the_json_they_encode(void **state)
{
	(void)state;
	struct tt_trace t = {0};
	const struct tt_event *e[4];
	char want[20000], *p = want;

	record("values", record_values, &t);
	assert_int_equal(tu_events_of(&t, e, 4), 3);
	assert_string_equal(tt_arg(e[0], "v")->raw,
			    "{\"shape\":[-9223372036854775808,18446744073709551615,0.1],"
			    "\"q\\\"k\":\"a\\u0000b\\n\",\"empty\":[[],{}],"
			    "\"odd\":[null,false,true,null],\"\":-0}");
	assert_int_equal(tt_arg(e[0], "after")->i, 7);

	for (int i = 0; i < 32; i++)
		*p++ = '[';
	p += sprintf(p, "null");
	for (int i = 0; i < 32; i++)
		*p++ = ']';
	*p = 0;
	assert_string_equal(tt_arg(e[1], "deep")->raw, want);
	/* 4096 bytes: the head, 272 whole strings of 15 bytes, 6 bytes of the next */
	p = want;
	*p++ = '[';
	for (int i = 0; i < 272; i++)
		p += sprintf(p, "\"s%09d\",", i);
	sprintf(p, "\"s00000\"]");
	assert_string_equal(tt_arg(e[1], "many")->raw, want);
	assert_int_equal(tt_arg(e[1], "none")->type, TT_NULL);
	assert_int_equal(tt_arg(e[1], "zero")->type, TT_NULL);

	assert_string_equal(tt_arg(e[2], "a")->raw, "[42,null]");
	assert_string_equal(tt_arg(e[2], "b")->s, "abc");
	assert_string_equal(tt_arg(e[2], "c")->raw, "{\"k\":null}");
	assert_int_equal(tt_arg(e[2], "d")->type, TT_NULL);
	assert_string_equal(tt_arg(e[2], "e")->raw, "{}");
	assert_int_equal(tt_arg(e[2], "f")->type, TT_NULL);
	assert_int_equal(tt_arg(tu_end_marker(&t), "events")->i, 3);
	tt_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(instants_carry_their_scope, tu_teardown),
		cmocka_unit_test_teardown(null_names_are_recorded_as_empty_strings, tu_teardown),
		cmocka_unit_test_teardown(counters_keep_every_numeric_series, tu_teardown),
		cmocka_unit_test_teardown(flows_have_hex_ids_and_bind_to_the_enclosing_slice,
					  tu_teardown),
		cmocka_unit_test_teardown(flow_ids_are_unique_across_threads, tu_teardown),
		cmocka_unit_test_teardown(async_spans_match_on_category_id_and_name, tu_teardown),
		cmocka_unit_test_teardown(array_arguments_come_back_as_json_arrays, tu_teardown),
		cmocka_unit_test_teardown(values_come_back_as_the_json_they_encode, tu_teardown),
		cmocka_unit_test_teardown(slices_begun_at_a_site_carry_its_arguments, tu_teardown),
		cmocka_unit_test_teardown(
			site_spans_ended_by_id_are_complete_slices_with_their_arguments,
			tu_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
