/* SPDX-License-Identifier: MIT */
/*
 * rtr_profile_walk() (docs/api.md, "The profile so far"): slices of known times
 * recorded on two threads, the walk's nodes compared with them (preorder, depth, every
 * count and time, p50 and p99 against a sketch of the same values); a callback that
 * records and one that stops the walk; -ENOTCONN without a session or without the
 * aggregate.
 */
#include "common/sketch.h"
#include "test_util.h"

#include <ringtrace.h>

#include <errno.h>
#include <pthread.h>
#include <setjmp.h> /* cmocka */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#define MAX_SEEN 16

struct seen {
	unsigned n;
	struct rtr_profile_node node[MAX_SEEN];
	char name[MAX_SEEN][32], cat[MAX_SEEN][16];
	unsigned stop_after; /* 0: never */
	int record;	     /* record an instant from the callback */
};

static int keep(const struct rtr_profile_node *nd, void *user)
{
	struct seen *s = user;

	assert_true(s->n < MAX_SEEN);
	s->node[s->n] = *nd;
	snprintf(s->name[s->n], sizeof(s->name[0]), "%s", nd->name);
	snprintf(s->cat[s->n], sizeof(s->cat[0]), "%s", nd->cat);
	s->node[s->n].name = s->name[s->n];
	s->node[s->n].cat = s->cat[s->n];
	s->n++;
	if (s->record)
		rtr_instant("walk", "inside");
	return s->stop_after != 0 && s->n == s->stop_after ? 42 : 0;
}

static void start(const char *path, int beside_trace)
{
	struct rtr_config cfg;

	rtr_config_init(&cfg);
	cfg.path = path;
	cfg.on_full = RTR_ON_FULL_BLOCK;
	if (beside_trace)
		cfg.profile = 1;
	else
		cfg.mode = RTR_MODE_PROFILE;
	assert_int_equal(rtr_start(&cfg), 0);
}

/* Durations of the slices, in µs: "a" five times (exact quantiles), "b" twelve (the
 * sketch's buckets). */
static const uint64_t a_us[5] = {10, 20, 30, 40, 50};
static const uint64_t b_us[12] = {5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 400};

/* One "outer" of 2 ms holding the a's and the b's, from base. */
static void record_outer(uint64_t base)
{
	uint64_t at = base + 1000;

	for (int i = 0; i < 5; i++, at += 60000)
		rtr_complete("bench", "a", at, a_us[i] * 1000);
	for (int i = 0; i < 12; i++) {
		rtr_complete("bench", "b", at, b_us[i] * 1000);
		at += b_us[i] * 1000 + 1000; /* one after the other, never inside */
	}
	rtr_complete("bench", "outer", base, 2000000);
}

static void *other_thread(void *arg)
{
	record_outer(*(const uint64_t *)arg);
	return NULL;
}

static uint64_t quantile_of(const uint64_t *us, int n, int twice, unsigned per_10k)
{
	struct rtr__sketch q;

	rtr__sketch_init(&q);
	for (int k = 0; k <= twice; k++)
		for (int i = 0; i < n; i++)
			assert_int_equal(rtr__sketch_add(&q, us[i] * 1000), 0);
	uint64_t v = rtr__sketch_quantile(&q, per_10k);
	rtr__sketch_free(&q);
	return v;
}

static void expect_leaf(const struct rtr_profile_node *nd, const char *name, const uint64_t *us,
			int n)
{
	uint64_t sum = 0, min = UINT64_MAX, max = 0;

	for (int i = 0; i < n; i++) {
		sum += us[i] * 1000;
		min = us[i] * 1000 < min ? us[i] * 1000 : min;
		max = us[i] * 1000 > max ? us[i] * 1000 : max;
	}
	assert_string_equal(nd->name, name);
	assert_string_equal(nd->cat, "bench");
	assert_int_equal(nd->depth, 2);
	assert_int_equal(nd->count, 2 * (uint64_t)n); /* the two threads merged */
	assert_int_equal(nd->total_ns, 2 * sum);
	assert_int_equal(nd->self_ns, 2 * sum);
	assert_int_equal(nd->min_ns, min);
	assert_int_equal(nd->max_ns, max);
	assert_int_equal(nd->p50_ns, quantile_of(us, n, 1, 5000));
	assert_int_equal(nd->p99_ns, quantile_of(us, n, 1, 9900));
}

static void walk_known(int beside_trace)
{
	char path[512];
	struct seen s = {0};
	pthread_t t;

	tu_temp_path(path, sizeof(path), "profile_walk", beside_trace ? "beside" : "mode", "json");
	start(path, beside_trace);
	uint64_t base = rtr_now_ns();
	record_outer(base);
	uint64_t other = base + 5000000;
	assert_int_equal(pthread_create(&t, NULL, other_thread, &other), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(rtr_profile_walk(keep, &s), 0);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.node[0].name, "outer");
	assert_int_equal(s.node[0].depth, 1);
	assert_int_equal(s.node[0].count, 2);
	assert_int_equal(s.node[0].total_ns, 4000000);
	assert_int_equal(s.node[0].min_ns, 2000000);
	assert_int_equal(s.node[0].p50_ns, 2000000);
	assert_int_equal(s.node[0].p99_ns, 2000000);
	uint64_t children = 0;
	for (unsigned i = 1; i < 3; i++) {
		if (strcmp(s.node[i].name, "a") == 0)
			expect_leaf(&s.node[i], "a", a_us, 5);
		else
			expect_leaf(&s.node[i], "b", b_us, 12);
		children += s.node[i].total_ns;
	}
	assert_string_not_equal(s.node[1].name, s.node[2].name);
	assert_int_equal(s.node[0].self_ns, 4000000 - children);

	/* more slices: the walk counts what was recorded before it */
	record_outer(base + 10000000);
	struct seen again = {.record = 1, .stop_after = 2};
	assert_int_equal(rtr_profile_walk(keep, &again), 42); /* stopped at the second node */
	assert_int_equal(again.n, 2);
	assert_string_equal(again.node[0].name, "outer");
	assert_int_equal(again.node[0].count, 3);
	assert_int_equal(rtr_stop(), 0);
	assert_int_equal(rtr_profile_walk(keep, &s), -ENOTCONN);
}

static void test_walk_profile_mode(void **state)
{
	(void)state;
	walk_known(0);
}

static void test_walk_beside_trace(void **state)
{
	(void)state;
	walk_known(1);
}

static void test_walk_without_aggregate(void **state)
{
	char path[512];
	struct rtr_config cfg;
	struct seen s = {0};

	(void)state;
	assert_int_equal(rtr_profile_walk(keep, &s), -ENOTCONN); /* no session */
	tu_temp_path(path, sizeof(path), "profile_walk", "plain", "json");
	rtr_config_init(&cfg);
	cfg.path = path;
	cfg.profile = 0;
	cfg.mode = RTR_MODE_STREAM;
	assert_int_equal(rtr_start(&cfg), 0);
	rtr_complete("bench", "outer", rtr_now_ns(), 1000);
	assert_int_equal(rtr_profile_walk(keep, &s), -ENOTCONN); /* a trace alone */
	assert_int_equal(s.n, 0);
	assert_int_equal(rtr_stop(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_walk_profile_mode, tu_teardown),
		cmocka_unit_test_teardown(test_walk_beside_trace, tu_teardown),
		cmocka_unit_test_teardown(test_walk_without_aggregate, tu_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
