/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace diff A B` end to end.
 *
 * - Two traces the library records, with durations the test sets exactly
 *   (rtr_complete with explicit times): "kernel" twice as slow in B with a tight
 *   spread, "io" the same durations in another order, "setup" only in A, "teardown"
 *   only in B. The --json document, parsed back with yajl's tree API, holds the
 *   exact counts and totals, p50 ratios within the sketches' error, the verdicts, and
 *   the exit statuses with and without --fail-above follow them; the table for
 *   people is in order of regression.
 * - JSON files of a noisy name 5 % slower in B but well within its own spread:
 *   "within noise", and --fail-above 1 does not fail on it; threads of different
 *   pids matched by their name.
 * - Usage errors, JSON that is not a trace, malformed input, help.
 */
#include <ringtrace.h>

#include "common/sketch.h"
#include "json_tree.h"
#include "tool_test.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define N_KERNEL 100
#define N_IO	 100

/* ------------------------------------------------------------- JSON helpers */

/* The row of key in the diff document, and its place in the rows. */
static yajl_val row(yajl_val doc, const char *key, size_t *place)
{
	return jt_row(jt_array(doc, "rows"), key, place);
}

/* Run `ringtrace diff --json --top 0 [a1] [a2] A B`; the exit status wanted. */
static yajl_val run_json(int status, const char *a, const char *b, const char *a1, const char *a2)
{
	const char *args[10] = {"diff", "--json", "--top", "0"};
	size_t n = 4;
	struct tool_run r;
	yajl_val doc;

	if (a1 != NULL)
		args[n++] = a1;
	if (a2 != NULL)
		args[n++] = a2;
	args[n++] = a;
	args[n++] = b;
	args[n] = NULL;
	tool_runv(&r, NULL, NULL, args);
	if (r.status != status)
		fail_msg("diff %s %s: exit %d, want %d\n%s%s", a, b, r.status, status, r.out,
			 r.err);
	doc = jt_parse(r.out, "diff --json");
	tool_run_free(&r);
	return doc;
}

static int run_status(const char *a, const char *b, const char *a1, const char *a2)
{
	const char *args[8] = {"diff"};
	size_t n = 1;
	struct tool_run r;
	int status;

	if (a1 != NULL)
		args[n++] = a1;
	if (a2 != NULL)
		args[n++] = a2;
	args[n++] = a;
	args[n++] = b;
	args[n] = NULL;
	tool_runv(&r, NULL, NULL, args);
	status = r.status;
	tool_run_free(&r);
	return status;
}

/* ------------------------------------------------------- recorded traces */

/* Durations in ns: kernel 1.000 to 1.004 ms in A, twice that in B; io 50 to 149 us,
 * the same values in both, in another order. */
static uint64_t kernel_ns(int i, int side)
{
	return (1000000u + (uint64_t)(i % 5) * 1000u) * (side == 0 ? 1u : 2u);
}

static uint64_t io_ns(int i, int side)
{
	int k = side == 0 ? i : (i * 37) % N_IO; /* 37 is prime to 100: a permutation */

	return 50000u + (uint64_t)k * 1000u;
}

static void record(const char *path, int side)
{
	struct rtr_config cfg;
	uint64_t t;

	rtr_config_init(&cfg);
	cfg.path = path;
	cfg.on_full = RTR_ON_FULL_BLOCK;
	assert_int_equal(rtr_start(&cfg), 0);
	rtr_thread_name("bench");
	t = rtr_now_ns();
	if (side == 0) {
		rtr_complete("app", "setup", t, 3000);
		t += 4000;
	}
	for (int i = 0; i < N_KERNEL; i++) {
		rtr_complete("gpu", "kernel", t, kernel_ns(i, side));
		t += kernel_ns(i, side) + 1000;
		rtr_complete("io", "io", t, io_ns(i, side));
		t += io_ns(i, side) + 1000;
	}
	if (side == 1)
		rtr_complete("app", "teardown", t, 7000);
	assert_int_equal(rtr_stop(), 0);
}

struct pair {
	char a[4200], b[4200];
};

static int record_pair(void **state)
{
	static struct pair p;

	snprintf(p.a, sizeof(p.a), "%s", tool_tmp("diff.a.json"));
	snprintf(p.b, sizeof(p.b), "%s", tool_tmp("diff.b.json"));
	record(p.a, 0);
	record(p.b, 1);
	*state = &p;
	return 0;
}

static int remove_pair(void **state)
{
	struct pair *p = *state;

	unlink(p->a);
	unlink(p->b);
	return 0;
}

/* The exact nearest-rank p50 of n values v(i). */
static uint64_t exact_p50(uint64_t (*v)(int, int), int n, int side)
{
	uint64_t *x = malloc((size_t)n * sizeof(*x)), r;

	assert_non_null(x);
	for (int i = 0; i < n; i++)
		x[i] = v(i, side);
	for (int i = 1; i < n; i++) { /* insertion sort: n is small */
		uint64_t k = x[i];
		int j = i - 1;

		for (; j >= 0 && x[j] > k; j--)
			x[j + 1] = x[j];
		x[j + 1] = k;
	}
	r = x[(n + 1) / 2 - 1];
	free(x);
	return r;
}

static uint64_t sum(uint64_t (*v)(int, int), int n, int side)
{
	uint64_t s = 0;

	for (int i = 0; i < n; i++)
		s += v(i, side);
	return s;
}

/* A sketched p50 is within RTR__SKETCH_ALPHA of the exact one (plus half a ns). */
static void expect_near(long long got, uint64_t exact)
{
	double lo = (double)exact * (1 - RTR__SKETCH_ALPHA) - 1,
	       hi = (double)exact * (1 + RTR__SKETCH_ALPHA) + 1;

	if ((double)got < lo || (double)got > hi)
		fail_msg("%lld is not within %g of %llu", got, RTR__SKETCH_ALPHA,
			 (unsigned long long)exact);
}

static void recorded_regression_is_found(void **state)
{
	struct pair *p = *state;
	yajl_val doc = run_json(0, p->a, p->b, NULL, NULL), k, io, s;
	double lo = 2.0 * (1 - RTR__SKETCH_ALPHA) / (1 + RTR__SKETCH_ALPHA);
	double hi = 2.0 * (1 + RTR__SKETCH_ALPHA) / (1 - RTR__SKETCH_ALPHA);
	size_t place;

	assert_string_equal(jt_str(doc, "by"), "name");
	assert_string_equal(jt_str(doc, "verdict_metric"), "p50");
	assert_true(YAJL_IS_NULL(jt_at(doc, "fail_above_pct")));
	assert_true(YAJL_IS_FALSE(jt_at(doc, "failed")));
	assert_int_equal(jt_int(doc, "keys"), 4);
	assert_int_equal(jt_int(jt_at(doc, "a"), "slices"), 2 * N_KERNEL + 1);
	assert_int_equal(jt_int(jt_at(doc, "b"), "slices"), 2 * N_KERNEL + 1);
	s = jt_at(doc, "summary");
	assert_int_equal(jt_int(s, "both"), 2);
	assert_int_equal(jt_int(s, "slower"), 1);
	assert_int_equal(jt_int(s, "faster"), 0);
	assert_int_equal(jt_int(s, "within_noise"), 1);
	assert_int_equal(jt_int(s, "added"), 1);
	assert_int_equal(jt_int(s, "removed"), 1);

	/* kernel: exact counts and totals, the ratios, significant; the first row */
	k = row(doc, "kernel", &place);
	assert_int_equal(place, 0);
	assert_string_equal(jt_str(k, "in"), "both");
	assert_int_equal(jt_int(jt_at(k, "a"), "count"), N_KERNEL);
	assert_int_equal(jt_int(jt_at(k, "b"), "count"), N_KERNEL);
	assert_int_equal(jt_int(jt_at(k, "a"), "total_ns"), (long long)sum(kernel_ns, N_KERNEL, 0));
	assert_int_equal(jt_int(jt_at(k, "b"), "total_ns"), (long long)sum(kernel_ns, N_KERNEL, 1));
	assert_int_equal(jt_int(jt_at(k, "a"), "min_ns"), 1000000);
	assert_int_equal(jt_int(jt_at(k, "b"), "max_ns"), 2008000);
	expect_near(jt_int(jt_at(k, "a"), "p50_ns"), exact_p50(kernel_ns, N_KERNEL, 0));
	expect_near(jt_int(jt_at(k, "b"), "p50_ns"), exact_p50(kernel_ns, N_KERNEL, 1));
	assert_true(jt_double(k, "p50_ratio") >= lo && jt_double(k, "p50_ratio") <= hi);
	assert_true(jt_double(k, "total_ratio") == 2.0); /* exact: every B is twice its A */
	assert_true(YAJL_IS_TRUE(jt_at(k, "significant")));
	assert_string_equal(jt_str(k, "verdict"), "significant");
	assert_true(YAJL_IS_FALSE(jt_at(k, "fails")));
	/* a tight spread: far below the change */
	assert_true(jt_int(jt_at(k, "b"), "spread_ns") < 100000);

	/* io: the same durations in another order: the same sketch */
	io = row(doc, "io", &place);
	assert_int_equal(place, 1);
	assert_int_equal(jt_int(jt_at(io, "a"), "total_ns"), (long long)sum(io_ns, N_IO, 0));
	assert_int_equal(jt_int(jt_at(io, "b"), "total_ns"), (long long)sum(io_ns, N_IO, 0));
	assert_true(jt_double(io, "p50_ratio") == 1.0);
	assert_true(jt_double(io, "total_ratio") == 1.0);
	assert_int_equal(jt_int(jt_at(io, "a"), "p50_ns"), jt_int(jt_at(io, "b"), "p50_ns"));
	assert_true(YAJL_IS_FALSE(jt_at(io, "significant")));
	assert_string_equal(jt_str(io, "verdict"), "within noise");

	/* one side only */
	k = row(doc, "teardown", &place);
	assert_int_equal(place, 2);
	assert_string_equal(jt_str(k, "in"), "added");
	assert_string_equal(jt_str(k, "verdict"), "added");
	assert_true(YAJL_IS_NULL(jt_at(k, "a")));
	assert_int_equal(jt_int(jt_at(k, "b"), "total_ns"), 7000);
	assert_true(YAJL_IS_NULL(jt_at(k, "p50_ratio")));
	assert_true(YAJL_IS_NULL(jt_at(k, "significant")));
	k = row(doc, "setup", &place);
	assert_int_equal(place, 3);
	assert_string_equal(jt_str(k, "verdict"), "removed");
	assert_true(YAJL_IS_NULL(jt_at(k, "b")));
	assert_int_equal(jt_int(jt_at(k, "a"), "count"), 1);
	assert_int_equal(jt_int(jt_at(k, "a"), "p50_ns"), 3000);
	yajl_tree_free(doc);
}

static void fail_above_gates_on_significant_regressions(void **state)
{
	struct pair *p = *state;
	struct tool_run r;
	yajl_val doc;

	/* +100 %: fails above 50, not above 150; B against A never (it got faster) */
	assert_int_equal(run_status(p->a, p->b, NULL, NULL), 0);
	assert_int_equal(run_status(p->a, p->b, "--fail-above", "50"), 1);
	assert_int_equal(run_status(p->a, p->b, "--fail-above", "99.5"), 1);
	assert_int_equal(run_status(p->a, p->b, "--fail-above", "150"), 0);
	assert_int_equal(run_status(p->b, p->a, "--fail-above", "0"), 0);
	assert_int_equal(run_status(p->a, p->a, "--fail-above", "0"), 0);

	doc = run_json(1, p->a, p->b, "--fail-above", "50");
	assert_true(jt_double(doc, "fail_above_pct") == 50.0);
	assert_true(YAJL_IS_TRUE(jt_at(doc, "failed")));
	assert_int_equal(jt_int(doc, "failing"), 1);
	assert_true(YAJL_IS_TRUE(jt_at(row(doc, "kernel", NULL), "fails")));
	assert_true(YAJL_IS_FALSE(jt_at(row(doc, "io", NULL), "fails")));
	yajl_tree_free(doc);

	/* it says which key failed, and by how much */
	tool_run(&r, NULL, "diff", "--fail-above", "50", p->a, p->b, NULL);
	assert_int_equal(r.status, 1);
	assert_true(tool_has(r.err, "1 key got slower by more than 50% (p50) and the change is "
				    "significant: kernel (+"));
	tool_run_free(&r);

	/* B against A: kernel is significantly faster */
	doc = run_json(0, p->b, p->a, "--fail-above", "0");
	assert_int_equal(jt_int(jt_at(doc, "summary"), "faster"), 1);
	assert_int_equal(jt_int(jt_at(doc, "summary"), "slower"), 0);
	assert_string_equal(jt_str(row(doc, "kernel", NULL), "verdict"), "significant");
	yajl_tree_free(doc);
}

/* The table for people: aligned, by regression, the verdicts spelled out. */
static void table_is_sorted_by_regression(void **state)
{
	struct pair *p = *state;
	struct tool_run r;
	const char *k, *io, *added, *removed;

	tool_run(&r, NULL, "diff", p->a, p->b, NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	assert_true(tool_has(r.out, "diff by name, B against A"));
	assert_true(tool_has(r.out, "verdict on p50: significant when |p50 B - p50 A| exceeds "
				    "both sides' p25-p75 spread"));
	assert_true(tool_has(r.out, "2 keys in both: 1 significantly slower, 0 significantly "
				    "faster, 1 within noise; 1 added, 1 removed\n"));
	assert_true(tool_has(r.out, "p50 B/A"));
	k = strstr(r.out, "significant   kernel\n");
	io = strstr(r.out, "within noise  io\n");
	added = strstr(r.out, "added         teardown\n");
	removed = strstr(r.out, "removed       setup\n");
	assert_non_null(k);
	assert_non_null(io);
	assert_non_null(added);
	assert_non_null(removed);
	assert_true(k < io && io < added && added < removed);
	/* kernel's row: counts, totals (A's kernel: 100.2 ms), the total ratio */
	assert_true(tool_has(r.out, "      100       100   100.2 ms   200.4 ms"));
	assert_true(tool_has(r.out, "   2.000  significant   kernel\n"));
	tool_run_free(&r);

	/* --top 1: one row; the summary still counts every key */
	tool_run(&r, NULL, "diff", "--top", "1", p->a, p->b, NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "kernel\n"));
	assert_null(strstr(r.out, "  io\n"));
	assert_true(tool_has(r.out, "(the top 1 of 4 by regression; --top 0 shows all)"));
	tool_run_free(&r);
}

static void by_cat_compares_categories(void **state)
{
	struct pair *p = *state;
	yajl_val doc = run_json(0, p->a, p->b, "--by", "cat");

	assert_string_equal(jt_str(doc, "by"), "cat");
	/* gpu, io, and app (setup in A, teardown in B: in both, 3 us against 7 us) */
	assert_int_equal(jt_int(doc, "keys"), 3);
	assert_string_equal(jt_str(row(doc, "gpu", NULL), "verdict"), "significant");
	assert_string_equal(jt_str(row(doc, "io", NULL), "verdict"), "within noise");
	assert_int_equal(jt_int(jt_at(row(doc, "app", NULL), "a"), "total_ns"), 3000);
	assert_int_equal(jt_int(jt_at(row(doc, "app", NULL), "b"), "total_ns"), 7000);
	yajl_tree_free(doc);
}

/* ------------------------------------------------------------- noisy files */

/* A deterministic spread of n durations, 50 to 150 us, scaled by per_1000 / 1000. */
static void write_noisy(const char *path, int pid, unsigned seed, unsigned per_1000)
{
	struct tool_text t = {0};
	uint64_t x = seed, ts = 0;

	tool_text_printf(&t,
			 "[\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,"
			 "\"args\":{\"name\":\"worker\"}},\n",
			 pid, pid + 1);
	for (int i = 0; i < 400; i++) {
		uint64_t dur;

		x = x * 6364136223846793005u + 1442695040888963407u;
		dur = (50000u + (x >> 33) % 100001u) * per_1000 / 1000u;
		tool_text_printf(
			&t,
			"{\"ph\":\"X\",\"name\":\"noisy\",\"ts\":%llu.%03llu,\"dur\":%llu.%03llu,"
			"\"pid\":%d,\"tid\":%d},\n",
			(unsigned long long)(ts / 1000), (unsigned long long)(ts % 1000),
			(unsigned long long)(dur / 1000), (unsigned long long)(dur % 1000), pid,
			pid + 1);
		ts += dur + 1000;
	}
	tool_text_printf(&t,
			 "{\"ph\":\"X\",\"name\":\"end\",\"ts\":%llu,\"dur\":1,\"pid\":%d,"
			 "\"tid\":%d}\n]\n",
			 (unsigned long long)(ts / 1000 + 1), pid, pid + 1);
	tool_write(path, t.p, t.len);
	free(t.p);
}

static void noisy_but_unchanged_is_within_noise(void **state)
{
	char a[4200], b[4200];
	yajl_val doc, r;

	(void)state;
	snprintf(a, sizeof(a), "%s", tool_tmp("noisy.a.json"));
	snprintf(b, sizeof(b), "%s", tool_tmp("noisy.b.json"));
	/* other samples of the same spread, B 5 % slower: far less than its p25-p75 */
	write_noisy(a, 100, 1, 1000);
	write_noisy(b, 200, 2, 1050);
	doc = run_json(0, a, b, "--fail-above", "1");
	r = row(doc, "noisy", NULL);
	assert_int_equal(jt_int(jt_at(r, "a"), "count"), 400);
	assert_int_equal(jt_int(jt_at(r, "b"), "count"), 400);
	assert_true(jt_double(r, "p50_ratio") > 1.0); /* slower, by more than 1 % ... */
	assert_true(jt_double(r, "p50_ratio") < 1.2);
	assert_true(jt_int(jt_at(r, "a"), "spread_ns") > 30000); /* ... but within the spread */
	assert_true(YAJL_IS_FALSE(jt_at(r, "significant")));
	assert_string_equal(jt_str(r, "verdict"), "within noise");
	assert_true(YAJL_IS_FALSE(jt_at(r, "fails")));
	assert_true(YAJL_IS_FALSE(jt_at(doc, "failed")));
	yajl_tree_free(doc);

	/* by thread: pids differ, the thread's name matches them */
	doc = run_json(0, a, b, "--by", "thread");
	assert_int_equal(jt_int(doc, "keys"), 1);
	r = row(doc, "worker", NULL);
	assert_string_equal(jt_str(r, "in"), "both");
	assert_int_equal(jt_int(jt_at(r, "a"), "count"), 401);
	yajl_tree_free(doc);

	/* the same spread moved by 3x its width is significant */
	write_noisy(b, 200, 2, 4000);
	assert_int_equal(run_status(a, b, "--fail-above", "1"), 1);
	unlink(a);
	unlink(b);
}

/* -------------------------------------------------------------- errors */

static void usage_errors_and_bad_inputs(void **state)
{
	const char *good = tool_data("data/good.json");
	struct tool_run r;

	(void)state;
	tool_run(&r, NULL, "diff", NULL);
	assert_int_equal(r.status, 2);
	assert_true(tool_has(r.err, "two FILEs"));
	tool_run_free(&r);
	tool_run(&r, NULL, "diff", good, NULL);
	assert_int_equal(r.status, 2);
	tool_run_free(&r);
	tool_run(&r, NULL, "diff", good, good, good, NULL);
	assert_int_equal(r.status, 2);
	tool_run_free(&r);
	assert_int_equal(run_status(good, good, "--by", "phase"), 2);
	assert_int_equal(run_status(good, good, "--fail-above", "-5"), 2);
	assert_int_equal(run_status(good, good, "--fail-above", "ten"), 2);
	assert_int_equal(run_status(good, good, "--top", "x"), 2);
	assert_int_equal(run_status(good, good, "--bogus", NULL), 2);
	assert_int_equal(run_status("-", "-", NULL, NULL), 2);
	assert_int_equal(run_status(good, "/nonexistent/b.json", NULL, NULL), 2);

	/* JSON that is not a trace: exit 1, said so, nothing printed */
	tool_run(&r, NULL, "diff", good, tool_data("corpus/no_trace_events.json"), NULL);
	assert_int_equal(r.status, 1);
	assert_true(tool_has(r.err, "not a trace"));
	assert_string_equal(r.out, "");
	tool_run_free(&r);
	tool_run(&r, NULL, "diff", tool_data("corpus/no_trace_events.json"), good, NULL);
	assert_int_equal(r.status, 1);
	assert_true(tool_has(r.err, "not a trace"));
	tool_run_free(&r);

	/* malformed partway: no comparison of half a file */
	tool_run(&r, NULL, "diff", good, tool_data("corpus/syntax_mid.json"), NULL);
	assert_int_equal(r.status, 2);
	assert_true(tool_has(r.err, "diff compares whole files"));
	assert_string_equal(r.out, "");
	tool_run_free(&r);

	/* a file against itself: every key within noise, ratios 1 */
	{
		yajl_val doc = run_json(0, good, good, NULL, NULL);
		yajl_val a = jt_array(doc, "rows");

		assert_true(a->u.array.len > 0);
		for (size_t i = 0; i < a->u.array.len; i++) {
			assert_string_equal(jt_str(a->u.array.values[i], "verdict"),
					    "within noise");
			assert_true(jt_double(a->u.array.values[i], "p50_ratio") == 1.0);
		}
		yajl_tree_free(doc);
	}

	/* help, both ways */
	tool_run(&r, NULL, "help", "diff", NULL);
	assert_int_equal(r.status, 0);
	assert_true(tool_has(r.out, "usage: ringtrace diff [options] A B"));
	assert_true(tool_has(r.out, "ringtrace diff [options] A1 A2 ... -- B1 B2 ..."));
	assert_true(tool_has(r.out, "ringtrace diff --calibrate [options] R1 R2 ... Rn"));
	tool_run_free(&r);
	tool_run(&r, NULL, "--help", NULL);
	assert_true(tool_has(r.out, "  diff "));
	tool_run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(recorded_regression_is_found, record_pair,
						remove_pair),
		cmocka_unit_test_setup_teardown(fail_above_gates_on_significant_regressions,
						record_pair, remove_pair),
		cmocka_unit_test_setup_teardown(table_is_sorted_by_regression, record_pair,
						remove_pair),
		cmocka_unit_test_setup_teardown(by_cat_compares_categories, record_pair,
						remove_pair),
		cmocka_unit_test(noisy_but_unchanged_is_within_noise),
		cmocka_unit_test(usage_errors_and_bad_inputs),
	};

	return cmocka_run_group_tests_name("tools_diff", tests, NULL, NULL);
}
