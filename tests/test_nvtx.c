/* SPDX-License-Identifier: MIT */
/*
 * The NVTX injection library: tests/progs/nvtx_client (which calls through the
 * injection ABI as the NVTX header does) runs with NVTX_INJECTION64_PATH naming
 * libringtrace-nvtx.so and RINGTRACE_AUTOSTART=1; every slice, async span, instant,
 * thread name, category and argument it caused is read back and compared. And the
 * module's interning and UTF-8 conversion, as units.
 */
#include "child.h"
#include "test_util.h"

#include "nvtx/strings.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define WORKERS	 2 /* as in tests/progs/nvtx_client.c */
#define ITERS	 10
#define HANDOFFS 4

static int64_t tid_named(const struct tt_trace *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct tt_event *e = &t->ev[i];
		if (tu_is(e->ph, "M") && tu_is(e->name, "thread_name") &&
		    tu_is(tt_arg(e, "name")->s, name))
			return e->tid;
	}
	fail_msg("no thread named %s", name);
	return -1;
}

static int inside(const struct tt_event *in, const struct tt_event *out)
{
	return in->ts_ns >= out->ts_ns && in->ts_ns + in->dur_ns <= out->ts_ns + out->dur_ns;
}

/* The "ex" slice of iteration i: color, category "io", and its payload's type. */
static void check_ex_args(const struct tt_event *e, int i)
{
	assert_int_equal(e->nargs, 3);
	assert_string_equal(tt_arg(e, "color")->raw, "4278255360");
	assert_string_equal(tt_arg(e, "category")->s, "io");
	const struct tt_arg *p = tt_arg(e, "payload");
	char want[32];
	switch (1 + i % 6) {
	case 1:
		snprintf(want, sizeof(want), "18446744073709551615");
		break;
	case 2:
		snprintf(want, sizeof(want), "%d", -i);
		break;
	case 4:
		snprintf(want, sizeof(want), "4000000000");
		break;
	case 5:
		snprintf(want, sizeof(want), "%d", -2 * i);
		break;
	case 3:
		assert_true(p->d == 0.5 + i);
		return;
	default:
		assert_true(p->d == 0.25);
		return;
	}
	assert_string_equal(p->raw, want);
}

/* A worker's slices: ITERS times outer > inner > ex, in that order of time. */
static void check_worker(const struct tt_trace *t, int64_t tid)
{
	const struct tt_event *outer[ITERS], *inner[ITERS], *ex[ITERS];
	int n_outer = 0, n_inner = 0, n_ex = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct tt_event *e = &t->ev[i];
		if (e->tid != tid || tu_is(e->ph, "M"))
			continue;
		if (tu_is(e->ph, "e")) {
			assert_string_equal(e->name, "handoff");
			continue;
		}
		assert_string_equal(e->ph, "X");
		assert_string_equal(e->cat, "nvtx");
		if (tu_is(e->name, "outer") && n_outer < ITERS)
			outer[n_outer++] = e;
		else if (tu_is(e->name, "inner wide \xc3\xa9") && n_inner < ITERS)
			inner[n_inner++] = e;
		else if (tu_is(e->name, "ex") && n_ex < ITERS)
			ex[n_ex++] = e;
		else
			fail_msg("unexpected slice %s on tid %lld", e->name, (long long)tid);
	}
	assert_int_equal(n_outer, ITERS);
	assert_int_equal(n_inner, ITERS);
	assert_int_equal(n_ex, ITERS);
	for (int i = 0; i < ITERS; i++) { /* each is written at its end: in order */
		assert_false(outer[i]->has_args && outer[i]->nargs != 0);
		assert_false(inner[i]->has_args && inner[i]->nargs != 0);
		assert_true(inside(inner[i], outer[i]));
		assert_true(inside(ex[i], inner[i]));
		if (i > 0)
			assert_true(outer[i]->ts_ns >= outer[i - 1]->ts_ns + outer[i - 1]->dur_ns);
		check_ex_args(ex[i], i);
	}
}

static void run_client(struct tt_trace *t, const char *name)
{
	char path[512];
	tu_own_file(path, sizeof(path), "nvtx", name, ".json");
	pid_t pid = tu_fork();
	if (pid == 0) {
		setenv("NVTX_INJECTION64_PATH", RTR_TEST_LIBNVTX, 1);
		setenv("RINGTRACE_FILE", path, 1);
		setenv("RINGTRACE_AUTOSTART", "1", 1);
		execl(RTR_TEST_NVTX_CLIENT, RTR_TEST_NVTX_CLIENT, (char *)NULL);
		_exit(127);
	}
	tu_expect_exit_0(tu_wait_child(pid, TU_CHILD_TIMEOUT_S));
	if (tt_load(path, 0, t) != 0)
		fail_msg("%s", t->error);
	assert_true(t->complete);
	const struct tt_event *end = tu_end_marker(t);
	assert_string_equal(end->name, "ringtrace: end");
	assert_int_equal(tu_arg_int(end, "dropped"), 0);
}

static void client_calls_are_recorded(void **state)
{
	(void)state;
	struct tt_trace t;
	run_client(&t, "client");
	int64_t main_tid = tid_named(&t, "nvtx main");
	int64_t worker_tid[WORKERS] = {tid_named(&t, "worker 0"), tid_named(&t, "worker 1")};
	for (int w = 0; w < WORKERS; w++)
		check_worker(&t, worker_tid[w]);

	/* Start/end: begun on main, ended by worker k % WORKERS, ids distinct. */
	const char *handoff_id[HANDOFFS];
	int begins = 0, ends = 0, marks = 0, domain_x = 0, domain_b = 0, domain_e = 0;
	int open_b = 0;
	char reused[8] = "";
	const struct tt_event *step_x = NULL, *step_b = NULL, *step_e = NULL;
	for (size_t i = 0; i < t.n; i++) {
		const struct tt_event *e = &t.ev[i];
		if (e->tid != main_tid || tu_is(e->ph, "M") || e->cat == NULL)
			continue;
		if (tu_is(e->name, "handoff")) {
			assert_string_equal(e->ph, "b");
			assert_string_equal(e->cat, "nvtx");
			assert_true(begins < HANDOFFS);
			for (int k = 0; k < begins; k++)
				assert_string_not_equal(handoff_id[k], e->id);
			handoff_id[begins++] = e->id;
		} else if (tu_is(e->name, "physics step")) {
			assert_string_equal(e->cat, "physics");
			if (tu_is(e->ph, "X"))
				step_x = e, domain_x++;
			else if (tu_is(e->ph, "b"))
				step_b = e, domain_b++;
			else if (tu_is(e->ph, "e"))
				step_e = e, domain_e++;
			else
				fail_msg("physics step as %s", e->ph);
		} else if (tu_is(e->ph, "i")) {
			marks++;
			if (tu_is(e->name, "mark a") || tu_is(e->name, "mark w")) {
				assert_string_equal(e->cat, "nvtx");
				assert_false(e->has_args && e->nargs != 0);
			} else if (tu_is(e->name, "mark ex") || tu_is(e->name, "domain mark")) {
				assert_string_equal(e->cat,
						    tu_is(e->name, "mark ex") ? "nvtx" : "physics");
				assert_int_equal(e->nargs, 1);
				assert_int_equal(tu_arg_int(e, "payload"), -5);
			} else {
				fail_msg("unexpected mark %s", e->name);
			}
		} else if (tu_is(e->ph, "X") && strncmp(e->name, "reuse ", 6) == 0) {
			assert_true(strlen(reused) < 3 && strlen(e->name) == 7);
			reused[strlen(reused)] = e->name[6]; /* in the order they ended */
		} else if (tu_is(e->ph, "b") && tu_is(e->name, "domain mark")) {
			assert_string_equal(e->cat, "nvtx"); /* the start that never ends */
			assert_int_equal(tu_arg_int(e, "payload"), -5);
			open_b++;
		} else {
			fail_msg("unexpected %s %s on main", e->ph, e->name);
		}
	}
	assert_int_equal(begins, HANDOFFS);
	assert_int_equal(marks, 4);
	assert_int_equal(open_b, 1);
	assert_string_equal(reused, "aba"); /* one buffer, rewritten: three names */
	assert_int_equal(domain_x, 1);
	assert_int_equal(domain_b, 1);
	assert_int_equal(domain_e, 1);
	/* the domain's slice and async span: registered name, category named, payload */
	assert_string_equal(tt_arg(step_x, "category")->s, "solver");
	assert_int_equal(tu_arg_int(step_x, "payload"), 42);
	assert_string_equal(tt_arg(step_b, "category")->s, "solver");
	assert_int_equal(tu_arg_int(step_b, "payload"), 42);
	assert_string_equal(step_b->id, step_e->id);
	assert_true(step_b->ts_ns >= step_x->ts_ns &&
		    step_e->ts_ns <= step_x->ts_ns + step_x->dur_ns);

	for (size_t i = 0; i < t.n; i++) {
		const struct tt_event *e = &t.ev[i];
		if (!tu_is(e->ph, "e") || !tu_is(e->name, "handoff"))
			continue;
		int k = 0;
		while (k < begins && strcmp(handoff_id[k], e->id) != 0)
			k++;
		assert_true(k < begins);
		assert_int_equal(e->tid, worker_tid[k % WORKERS]);
		ends++;
	}
	assert_int_equal(ends, HANDOFFS);
	tt_free(&t);
}

static void strings_are_interned_once(void **state)
{
	(void)state;
	const char *a = rtr__nvtx_intern("alpha", 5);
	assert_non_null(a);
	assert_string_equal(a, "alpha");
	assert_ptr_equal(rtr__nvtx_intern("alphabet", 5), a); /* len bytes only */
	const char *b = rtr__nvtx_intern("beta", 4);
	assert_ptr_not_equal(a, b);
	assert_ptr_equal(rtr__nvtx_at(rtr__nvtx_offset(b)), b);
	assert_int_equal(rtr__nvtx_offset("beta"), 0); /* not interned */

	char many[16];
	for (int i = 0; i < 2000; i++) {
		int n = snprintf(many, sizeof(many), "name %d", i);
		const char *s = rtr__nvtx_intern(many, (size_t)n);
		assert_non_null(s);
		assert_string_equal(s, many);
		assert_ptr_equal(rtr__nvtx_intern(many, (size_t)n), s);
	}

	/* a long string is cut before a character that would straddle the limit */
	char *longs = malloc(RTR_NVTX_MAX_STRING + 4);
	memset(longs, 'x', RTR_NVTX_MAX_STRING - 1);
	memcpy(longs + RTR_NVTX_MAX_STRING - 1, "\xc3\xa9yz", 4);
	const char *cut = rtr__nvtx_intern(longs, RTR_NVTX_MAX_STRING + 3);
	assert_int_equal(strlen(cut), RTR_NVTX_MAX_STRING - 1);
	free(longs);
}

/* The table takes names up to three quarters full: 9,000 more beside the 2,500 of the
 * other cases (16,384 slots), each found again at the same copy. */
static void table_takes_names_to_three_quarters(void **state)
{
	(void)state;
	enum { FILL = 9000 };
	const char **got = calloc(FILL, sizeof(*got));
	char name[32];

	assert_non_null(got);
	for (int i = 0; i < FILL; i++) {
		int n = snprintf(name, sizeof(name), "fill %d", i);
		got[i] = rtr__nvtx_intern(name, (size_t)n);
		if (got[i] == NULL)
			fail_msg("name %d of %d not interned", i, FILL);
	}
	for (int i = 0; i < FILL; i++) {
		int n = snprintf(name, sizeof(name), "fill %d", i);
		assert_ptr_equal(rtr__nvtx_intern(name, (size_t)n), got[i]);
	}
	free(got);
}

#define RACE_NAMES 500

struct race {
	pthread_barrier_t *go;
	const char *got[RACE_NAMES];
};

static void *intern_race(void *arg)
{
	struct race *r = arg;
	char name[32];
	pthread_barrier_wait(r->go);
	for (int i = 0; i < RACE_NAMES; i++) {
		int n = snprintf(name, sizeof(name), "race %d", i);
		r->got[i] = rtr__nvtx_intern(name, (size_t)n);
	}
	return NULL;
}

/* Two threads that first see the same names at once get the same pointers. */
static void racing_threads_share_one_copy(void **state)
{
	(void)state;
	pthread_barrier_t go;
	struct race r[2];
	pthread_t t[2];
	pthread_barrier_init(&go, NULL, 2);
	for (int k = 0; k < 2; k++) {
		r[k].go = &go;
		assert_int_equal(pthread_create(&t[k], NULL, intern_race, &r[k]), 0);
	}
	for (int k = 0; k < 2; k++)
		pthread_join(t[k], NULL);
	pthread_barrier_destroy(&go);
	char name[32];
	for (int i = 0; i < RACE_NAMES; i++) {
		snprintf(name, sizeof(name), "race %d", i);
		assert_non_null(r[0].got[i]);
		assert_ptr_equal(r[0].got[i], r[1].got[i]);
		assert_string_equal(r[0].got[i], name);
	}
}

static void wide_strings_become_utf8(void **state)
{
	(void)state;
	char out[32];
	assert_int_equal(rtr__nvtx_utf8(L"a\u00e9\u20ac\U0001F600", out, sizeof(out)), 10);
	assert_string_equal(out, "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	const wchar_t bad[] = {0xD800, 0x110000, 0};
	assert_int_equal(rtr__nvtx_utf8(bad, out, sizeof(out)), 6);
	assert_string_equal(out, "\xef\xbf\xbd\xef\xbf\xbd");
	/* cut at a character when out is too small */
	assert_int_equal(rtr__nvtx_utf8(L"ab\u20ac", out, 5), 2);
	assert_string_equal(out, "ab");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(client_calls_are_recorded, tu_teardown),
		cmocka_unit_test(strings_are_interned_once),
		cmocka_unit_test(table_takes_names_to_three_quarters),
		cmocka_unit_test(racing_threads_share_one_copy),
		cmocka_unit_test(wide_strings_become_utf8),
	};

	tu_filter_from_env();
	return cmocka_run_group_tests_name("nvtx", tests, NULL, NULL);
}
