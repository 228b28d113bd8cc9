/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace diff A1 ... -- B1 ...`, several runs a side, and --calibrate.
 *
 * - The rank test (tools/lib/ranktest.c) against hand-computed values: U, the exact
 *   two-sided p-value of 5 against 5 (k / C(10, 5) = k / 252), ties, the normal
 *   approximation, the Hodges-Lehmann shift and Cliff's delta.
 * - Runs written as JSON traces with exact durations: an A/A pair of sides where
 *   nothing is significant (exit 0 under --fail-above 0); a side 10 % slower on one
 *   name found "slower" with p = 2/252, U = 25, Cliff's delta 1 and the gate failing;
 *   a count the same in every run of a side and different between the sides failing
 *   the gate whatever the timing; directories as sides; --calibrate's rate on runs
 *   whose splits are counted by hand; Markdown and JSON forms, the JSON validated
 *   against docs/diff-schema.json (python3-jsonschema, where installed).
 */
#include "json_tree.h"
#include "ranktest.h"
#include "tool_test.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

static void near(double got, double want, double tol)
{
	if (fabs(got - want) > tol)
		fail_msg("got %.12g, want %.12g (within %g)", got, want, tol);
}

/* ------------------------------------------------------------ rank test */

static void test_rank_exact(void **state)
{
	struct rank_test t;
	(void)state;

	/* all of B above all of A: U = 25, the two extreme subsets of 252 */
	{
		double a[] = {1, 2, 3, 4, 5}, b[] = {11, 12, 13, 14, 15};

		assert_int_equal(rank_test(a, 5, b, 5, &t), 0);
		near(t.u, 25, 0);
		near(t.p, 2.0 / 252, 1e-15);
		assert_true(t.exact);
		near(t.cliffs, 1, 0);
		near(t.shift, 10, 0); /* b - a = 10 + (j - i): its median 10 */
		assert_int_equal(rank_test(b, 5, a, 5, &t), 0);
		near(t.u, 0, 0);
		near(t.p, 2.0 / 252, 1e-15);
		near(t.cliffs, -1, 0);
		near(t.shift, -10, 0);
	}
	/* U of A = 2: P(U <= 2) = (1 + 1 + 2) / 252, two-sided 8/252 */
	{
		double a[] = {1, 2, 3, 5, 6}, b[] = {4, 7, 8, 9, 10};

		assert_int_equal(rank_test(a, 5, b, 5, &t), 0);
		near(t.u, 23, 0);
		near(t.p, 8.0 / 252, 1e-15);
		near(t.cliffs, (23.0 - 2.0) / 25, 1e-15);
	}
	/* U of A = 4: (1 + 1 + 2 + 3 + 5) / 252 a side, 24/252 */
	{
		double a[] = {1, 2, 4, 5, 7}, b[] = {3, 6, 8, 9, 10};

		assert_int_equal(rank_test(a, 5, b, 5, &t), 0);
		near(t.u, 21, 0);
		near(t.p, 24.0 / 252, 1e-15);
		/* b - a: the median of the 25 differences, counted by hand */
		near(t.shift, 4, 0);
	}
	/* 3 against 3 separated: 2 / C(6, 3) */
	{
		double a[] = {10, 20, 30}, b[] = {40, 50, 60};

		assert_int_equal(rank_test(a, 3, b, 3, &t), 0);
		near(t.p, 2.0 / 20, 1e-15);
	}
	/* ties: all equal, U half the pairs, p 1; one against one: p 1 */
	{
		double a[] = {7, 7, 7}, b[] = {7, 7, 7}, c[] = {1}, d[] = {2};

		assert_int_equal(rank_test(a, 3, b, 3, &t), 0);
		near(t.u, 4.5, 0);
		near(t.p, 1, 0);
		near(t.cliffs, 0, 0);
		near(t.shift, 0, 0);
		assert_int_equal(rank_test(c, 1, d, 1, &t), 0);
		near(t.u, 1, 0);
		near(t.p, 1, 0);
	}
	/* ties across the sides: A {1, 2, 2}, B {2, 3, 3}: 7 pairs b > a and 2 ties,
	 * U 8; mid-ranks 1, 3, 3, 3, 5.5, 5.5; W of B 14 against E 10.5: the subsets of 3
	 * with |W - 10.5| >= 3.5 are {1,3,3} (x3, W 7) and {3,5.5,5.5} (x3, W 14): 6 of 20 */
	{
		double a[] = {1, 2, 2}, b[] = {2, 3, 3};

		assert_int_equal(rank_test(a, 3, b, 3, &t), 0);
		near(t.u, 8, 0);
		near(t.p, 6.0 / 20, 1e-15);
		near(t.cliffs, 7.0 / 9, 1e-15);
	}
}

static void test_rank_normal(void **state)
{
	enum { N = 60 };
	double a[N], b[N];
	struct rank_test t;
	(void)state;

	for (int i = 0; i < N; i++) {
		a[i] = i;
		b[i] = i + 0.5; /* interleaved: U = N(N+1)/2 */
	}
	assert_int_equal(rank_test(a, N, b, N, &t), 0);
	assert_false(t.exact);
	near(t.u, N * (N + 1) / 2.0, 0);
	/* z = (|U - N^2/2| - 0.5) / sqrt(N^2 (2N + 1) / 12) */
	near(t.p, erfc((N / 2.0 - 0.5) / sqrt(N * N * (2.0 * N + 1) / 12) / sqrt(2)), 1e-12);
	{
		double m[] = {3, 1, 2, 4};

		near(rank_median(m, 4), 2.5, 0);
		near(rank_median(m, 3), 2, 0);
	}
}

/* ----------------------------------------------------------------- runs */

/* A run: "work" n slices of dur_us each (plus one of 3 dur_us, the median kept),
 * "call" calls slices of 5 us, and extra_name once when not NULL. */
static void write_run(const char *path, double dur_us, int calls, const char *extra_name)
{
	struct tool_text t = {0};
	double ts = 0;

	tool_text_printf(&t, "[");
	for (int i = 0; i < 9; i++, ts += 1000)
		tool_text_printf(&t,
				 "{\"ph\":\"X\",\"name\":\"work\",\"pid\":1,\"tid\":1,\"ts\":%.3f,"
				 "\"dur\":%.3f},",
				 ts, i == 8 ? 3 * dur_us : dur_us);
	for (int i = 0; i < calls; i++, ts += 1000)
		tool_text_printf(&t,
				 "{\"ph\":\"X\",\"name\":\"call\",\"pid\":1,\"tid\":1,\"ts\":%.3f,"
				 "\"dur\":5},",
				 ts);
	if (extra_name != NULL)
		tool_text_printf(&t,
				 "{\"ph\":\"X\",\"name\":\"%s\",\"pid\":1,\"tid\":1,\"ts\":%.3f,"
				 "\"dur\":1},",
				 extra_name, ts);
	tool_text_printf(&t, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":1,"
			     "\"args\":{\"name\":\"main\"}}]");
	tool_write(path, t.p, t.len);
	free(t.p);
}

/* Side dir (made) of 5 runs, run i's "work" median base_us * factor[i]. */
static void write_side(const char *dir, double base_us, const double *factor, int calls,
		       const char *extra)
{
	char path[8500];

	mkdir(dir, 0755);
	for (int i = 0; i < 5; i++) {
		snprintf(path, sizeof(path), "%s/run%d.json", dir, i);
		write_run(path, base_us * factor[i], calls, extra);
	}
}

/* The 5 run paths of a side. */
static void side_paths(const char *dir, char paths[5][4300])
{
	for (int i = 0; i < 5; i++)
		snprintf(paths[i], sizeof(paths[i]), "%s/run%d.json", dir, i);
}

static const double noise_a[5] = {1.00, 1.02, 0.98, 1.01, 0.99};
static const double noise_b[5] = {0.99, 1.01, 1.00, 0.98, 1.02};

/* Validate a JSON document against docs/diff-schema.json with python3-jsonschema,
 * where installed (exit 77 from the script: not installed). */
static void validate_schema(const char *json)
{
	char cmd[9000];
	const char *doc = tool_tmp("diff_runs_doc.json");
	int rc;

	tool_write(doc, json, strlen(json));
	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import sys, json\n"
		 "try:\n import jsonschema\nexcept ImportError:\n sys.exit(77)\n"
		 "s = json.load(open(sys.argv[1])); d = json.load(open(sys.argv[2]))\n"
		 "jsonschema.Draft202012Validator.check_schema(s)\n"
		 "jsonschema.validate(d, s, cls=jsonschema.Draft202012Validator)' "
		 "%s/../../docs/diff-schema.json %s 2>&1",
		 RTR_TOOLS_TEST_DIR_SRC, doc);
	rc = system(cmd);
	if (rc == -1 || !WIFEXITED(rc))
		fail_msg("python3 did not run");
	if (WEXITSTATUS(rc) == 77)
		print_message("python3-jsonschema not installed: schema not checked\n");
	else
		assert_int_equal(WEXITSTATUS(rc), 0);
}

/* `ringtrace diff args...` as JSON; the exit status wanted. */
static yajl_val run_doc(int status, const char **args)
{
	struct tool_run r;
	yajl_val doc;

	tool_runv(&r, NULL, NULL, args);
	if (r.status != status)
		fail_msg("diff: exit %d, want %d\n%s%s", r.status, status, r.out, r.err);
	validate_schema(r.out);
	doc = jt_parse(r.out, "diff --json");
	tool_run_free(&r);
	return doc;
}

static void test_runs_aa_and_shift(void **state)
{
	char dir_a[4200], dir_b[4200], dir_s[4200], a[5][4300], b[5][4300];
	(void)state;

	snprintf(dir_a, sizeof(dir_a), "%s", tool_tmp("diff_runs_a"));
	snprintf(dir_b, sizeof(dir_b), "%s", tool_tmp("diff_runs_b"));
	snprintf(dir_s, sizeof(dir_s), "%s", tool_tmp("diff_runs_slow"));
	write_side(dir_a, 100, noise_a, 3, NULL);
	write_side(dir_b, 100, noise_b, 3, NULL);
	write_side(dir_s, 110, noise_b, 3, NULL);
	side_paths(dir_a, a);
	side_paths(dir_b, b);
	/* A/A: nothing significant, the gate passes */
	{
		const char *args[] = {"diff", "--json", "--fail-above", "0",  a[0], a[1],
				      a[2],   a[3],	a[4],		"--", b[0], b[1],
				      b[2],   b[3],	b[4],		NULL};
		yajl_val doc = run_doc(0, args), w;

		assert_string_equal(jt_str(doc, "mode"), "runs");
		assert_int_equal(jt_int(doc, "schema_version"), 1);
		assert_int_equal(jt_int(jt_at(doc, "a"), "runs"), 5);
		assert_int_equal(jt_int(jt_at(doc, "b"), "runs"), 5);
		assert_int_equal(jt_int(jt_at(doc, "summary"), "slower"), 0);
		assert_int_equal(jt_int(jt_at(doc, "summary"), "faster"), 0);
		assert_int_equal(jt_int(jt_at(doc, "summary"), "count_changed"), 0);
		assert_false(YAJL_IS_TRUE(jt_at(doc, "failed")));
		w = jt_row(jt_array(doc, "rows"), "work", NULL);
		assert_string_equal(jt_str(w, "verdict"), "within noise");
		near(jt_double(jt_at(w, "a"), "median_ns"), 100000, 1000);
		assert_int_equal(jt_int(jt_at(w, "a"), "count"), 9);
		assert_true(jt_double(w, "p_value") > 0.3);
		w = jt_row(jt_array(doc, "rows"), "call", NULL);
		assert_int_equal(jt_int(jt_at(w, "b"), "count"), 3);
		assert_false(YAJL_IS_TRUE(jt_at(w, "count_changed")));
		yajl_tree_free(doc);
	}
	/* B 10 % slower: the directories as sides; found, and the gate fails */
	{
		const char *args[] = {"diff", "--json", "--fail-above", "5", dir_a, dir_s, NULL};
		yajl_val doc = run_doc(1, args), w;

		assert_int_equal(jt_int(jt_at(doc, "summary"), "slower"), 1);
		assert_int_equal(jt_int(doc, "failing"), 1);
		w = jt_row(jt_array(doc, "rows"), "work", NULL);
		assert_string_equal(jt_str(w, "verdict"), "slower");
		near(jt_double(w, "p_value"), 2.0 / 252, 1e-9);
		near(jt_double(w, "u"), 25, 0);
		near(jt_double(w, "cliffs_delta"), 1, 0);
		near(jt_double(w, "shift_pct"), 10, 2.5); /* within the sketch's buckets */
		assert_true(YAJL_IS_TRUE(jt_at(w, "fails")));
		assert_true(YAJL_IS_TRUE(jt_at(w, "exact")));
		/* a gate above the shift does not fail */
		yajl_tree_free(doc);
	}
	{
		const char *args[] = {"diff", "--json", "--fail-above", "20", dir_a, dir_s, NULL};
		yajl_val doc = run_doc(0, args);

		assert_int_equal(jt_int(jt_at(doc, "summary"), "slower"), 1);
		assert_int_equal(jt_int(doc, "failing"), 0);
		yajl_tree_free(doc);
	}
	/* a floor above the shift: not significant */
	{
		const char *args[] = {"diff", "--json", "--min-pct", "15", dir_a, dir_s, NULL};
		yajl_val doc = run_doc(0, args);

		assert_int_equal(jt_int(jt_at(doc, "summary"), "slower"), 0);
		yajl_tree_free(doc);
	}
}

static void test_runs_counts(void **state)
{
	char dir_a[4200], dir_c[4200], dir_v[4200];
	(void)state;

	snprintf(dir_a, sizeof(dir_a), "%s", tool_tmp("diff_runs_ca"));
	snprintf(dir_c, sizeof(dir_c), "%s", tool_tmp("diff_runs_cc"));
	snprintf(dir_v, sizeof(dir_v), "%s", tool_tmp("diff_runs_cv"));
	write_side(dir_a, 100, noise_a, 3, "setup");
	write_side(dir_c, 100, noise_b, 4, "teardown"); /* one call more, same times */
	/* "call" 3 then 4 calls: counts that vary within the side are not deterministic */
	write_side(dir_v, 100, noise_b, 3, NULL);
	{
		char last[8500];

		snprintf(last, sizeof(last), "%s/run4.json", dir_v);
		write_run(last, 100, 4, NULL);
	}
	{
		const char *args[] = {"diff", "--json", "--fail-above", "50", dir_a, dir_c, NULL};
		yajl_val doc = run_doc(1, args), w;

		assert_int_equal(jt_int(jt_at(doc, "summary"), "slower"), 0);
		assert_int_equal(jt_int(jt_at(doc, "summary"), "count_changed"), 3);
		assert_int_equal(jt_int(jt_at(doc, "summary"), "added"), 1);
		assert_int_equal(jt_int(jt_at(doc, "summary"), "removed"), 1);
		w = jt_row(jt_array(doc, "rows"), "call", NULL);
		assert_string_equal(jt_str(w, "verdict"), "count changed");
		assert_int_equal(jt_int(jt_at(w, "a"), "count"), 3);
		assert_int_equal(jt_int(jt_at(w, "b"), "count"), 4);
		assert_true(YAJL_IS_TRUE(jt_at(w, "fails")));
		w = jt_row(jt_array(doc, "rows"), "teardown", NULL);
		assert_string_equal(jt_str(w, "in"), "added");
		assert_string_equal(jt_str(w, "verdict"), "count changed");
		assert_true(YAJL_IS_NULL(jt_at(jt_at(w, "a"), "median_ns")));
		w = jt_row(jt_array(doc, "rows"), "work", NULL);
		assert_string_equal(jt_str(w, "verdict"), "within noise");
		assert_false(YAJL_IS_TRUE(jt_at(w, "fails")));
		yajl_tree_free(doc);
	}
	/* without --fail-above: reported, exit 0 */
	{
		const char *args[] = {"diff", "--json", dir_a, dir_c, NULL};
		yajl_val doc = run_doc(0, args);

		assert_int_equal(jt_int(jt_at(doc, "summary"), "count_changed"), 3);
		assert_false(YAJL_IS_TRUE(jt_at(doc, "failed")));
		yajl_tree_free(doc);
	}
	{
		const char *args[] = {"diff", "--json", "--fail-above", "0", dir_a, dir_v, NULL};
		yajl_val doc = run_doc(1, args), w;

		/* "setup" in every run of A, in none of B: a count change too */
		assert_int_equal(jt_int(doc, "failing"), 1);
		w = jt_row(jt_array(doc, "rows"), "setup", NULL);
		assert_string_equal(jt_str(w, "verdict"), "count changed");
		w = jt_row(jt_array(doc, "rows"), "call", NULL);
		assert_true(YAJL_IS_NULL(jt_at(jt_at(w, "b"), "count")));
		assert_string_equal(jt_str(w, "verdict"), "within noise");
		yajl_tree_free(doc);
	}
}

static void test_calibrate(void **state)
{
	char runs[4][4200];
	(void)state;

	/* 100, 100, 200, 200 us: of the 6 splits 2 against 2, {100,100} against
	 * {200,200} and its reverse have p = 2/6 (mid-ranks 1.5 1.5 3.5 3.5): at alpha 0.4
	 * two splits are alarms, one of them a regression */
	for (int i = 0; i < 4; i++) {
		char name[32];

		snprintf(name, sizeof(name), "diff_runs_cal%d.json", i);
		snprintf(runs[i], sizeof(runs[i]), "%s", tool_tmp(name));
		write_run(runs[i], i < 2 ? 100 : 200, 3, NULL);
	}
	{
		const char *args[] = {"diff",  "--calibrate", "--json", "--alpha", "0.4",
				      runs[0], runs[1],	      runs[2],	runs[3],   NULL};
		yajl_val doc = run_doc(0, args);

		assert_string_equal(jt_str(doc, "mode"), "calibrate");
		assert_int_equal(jt_int(doc, "splits"), 6);
		assert_true(YAJL_IS_TRUE(jt_at(doc, "all_splits")));
		assert_int_equal(jt_int(doc, "false_alarms"), 2);
		near(jt_double(doc, "false_alarm_pct"), 100.0 / 3, 1e-9);
		assert_int_equal(jt_int(doc, "key_comparisons"), 12); /* work and call */
		assert_int_equal(jt_int(doc, "key_false_alarms"), 2);
		yajl_tree_free(doc);
	}
	{
		const char *args[] = {"diff",  "--calibrate",  "--json", "--alpha",
				      "0.4",   "--fail-above", "0",	 runs[0],
				      runs[1], runs[2],	       runs[3],	 NULL};
		yajl_val doc = run_doc(0, args);

		assert_int_equal(jt_int(doc, "false_alarms"), 1);
		yajl_tree_free(doc);
	}
	/* at the defaults: 2 against 2 can never reach p 0.05 */
	{
		const char *args[] = {"diff",  "--calibrate", runs[0], runs[1],
				      runs[2], runs[3],	      NULL};
		struct tool_run r;

		tool_runv(&r, NULL, NULL, args);
		assert_int_equal(r.status, 0);
		assert_true(tool_has(r.out, "false alarms: 0 of 6 splits (0.0%)"));
		assert_true(tool_has(r.err, "2 runs against 2 can never reach p <= 0.05 (the "
					    "smallest p is 0.333)"));
		tool_run_free(&r);
	}
}

static void test_forms(void **state)
{
	char dir_a[4200], dir_s[4200], a0[4300], s0[4300];
	struct tool_run r;
	(void)state;

	snprintf(dir_a, sizeof(dir_a), "%s", tool_tmp("diff_runs_a"));
	snprintf(dir_s, sizeof(dir_s), "%s", tool_tmp("diff_runs_slow"));
	snprintf(a0, sizeof(a0), "%s/run0.json", dir_a);
	snprintf(s0, sizeof(s0), "%s/run0.json", dir_s);

	{
		const char *args[] = {"diff", "--format", "markdown", "--fail-above",
				      "5",    dir_a,	  dir_s,      NULL};

		tool_runv(&r, NULL, NULL, args);
		assert_int_equal(r.status, 1);
		assert_true(tool_has(r.out, "### ringtrace diff: **regression**"));
		assert_true(tool_has(r.out, "#### Significant changes"));
		/* the significant table first, the slowed name its one row */
		assert_true(strstr(r.out, "| `work` |") < strstr(r.out, "<details>"));
		assert_true(tool_has(r.out, "| 0.0079 | +1.00 | 9 | 9 | **fails** slower |"));
		assert_true(tool_has(r.err, "work (+"));
		tool_run_free(&r);
	}
	{
		const char *args[] = {"diff", dir_a, dir_s, NULL};

		tool_runv(&r, NULL, NULL, args);
		assert_int_equal(r.status, 0);
		assert_true(tool_has(r.out, "A: 5 runs from "));
		assert_true(tool_has(r.out, "1 significantly slower, 0 significantly faster"));
		assert_true(tool_has(r.out, "0.0079         9         9  slower         work"));
		tool_run_free(&r);
	}
	/* a name with '|' and '`' kept inside its Markdown cell */
	{
		char runs[8][4300];
		const char *args[16] = {"diff", "--format", "markdown"};
		size_t n = 3;

		for (int i = 0; i < 8; i++) {
			snprintf(runs[i], sizeof(runs[i]), "%s/pipe%d.json", dir_a, i);
			write_run(runs[i], 100, 3, "x|y`z");
			args[n++] = runs[i];
			if (i == 3)
				args[n++] = "--";
		}
		args[n] = NULL;
		tool_runv(&r, NULL, NULL, args);
		assert_int_equal(r.status, 0);
		assert_true(tool_has(r.out, "| `x\\|y'z` | 1.000 us | 1.000 us |"));
		tool_run_free(&r);
		for (int i = 0; i < 8; i++)
			unlink(runs[i]);
	}
	/* --json and --format json the same; bad --format a usage error */
	{
		const char *j1[] = {"diff", "--json", dir_a, dir_s, NULL};
		const char *j2[] = {"diff", "--format", "json", dir_a, dir_s, NULL};
		const char *bad[] = {"diff", "--format", "yaml", dir_a, dir_s, NULL};
		struct tool_run r2;

		tool_runv(&r, NULL, NULL, j1);
		tool_runv(&r2, NULL, NULL, j2);
		assert_string_equal(r.out, r2.out);
		tool_run_free(&r);
		tool_run_free(&r2);
		tool_runv(&r, NULL, NULL, bad);
		assert_int_equal(r.status, 2);
		tool_run_free(&r);
	}
	/* one run a side: the rule of one run against one, its document "single" */
	{
		const char *args[] = {"diff", "--json", a0, s0, NULL};
		yajl_val doc = run_doc(0, args);

		assert_string_equal(jt_str(doc, "mode"), "single");
		assert_string_equal(jt_str(doc, "verdict_metric"), "p50");
		yajl_tree_free(doc);
	}
	/* and its Markdown: the text table in a code block */
	{
		const char *args[] = {"diff", "--format", "markdown", a0, s0, NULL};

		tool_runv(&r, NULL, NULL, args);
		assert_int_equal(r.status, 0);
		assert_true(strncmp(r.out, "```\ndiff by name, B against A;", 30) == 0);
		assert_true(tool_has(r.out, "  work\n```\n") || tool_has(r.out, "  call\n```\n"));
		tool_run_free(&r);
	}
}

/* The schema refuses what it should: the check can fail. */
static void test_schema_refuses(void **state)
{
	char cmd[9000];
	const char *doc = tool_tmp("diff_runs_bad.json");
	const char *bad = "{\"schema_version\":2,\"mode\":\"runs\",\"by\":\"name\"}";
	int rc;
	(void)state;

	tool_write(doc, bad, strlen(bad));
	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import sys, json\n"
		 "try:\n import jsonschema\nexcept ImportError:\n sys.exit(77)\n"
		 "s = json.load(open(sys.argv[1])); d = json.load(open(sys.argv[2]))\n"
		 "sys.exit(0 if not jsonschema.Draft202012Validator(s).is_valid(d) else 1)' "
		 "%s/../../docs/diff-schema.json %s 2>&1",
		 RTR_TOOLS_TEST_DIR_SRC, doc);
	rc = system(cmd);
	assert_true(rc != -1 && WIFEXITED(rc));
	assert_true(WEXITSTATUS(rc) == 0 || WEXITSTATUS(rc) == 77);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rank_exact),	  cmocka_unit_test(test_rank_normal),
		cmocka_unit_test(test_runs_aa_and_shift), cmocka_unit_test(test_runs_counts),
		cmocka_unit_test(test_calibrate),	  cmocka_unit_test(test_forms),
		cmocka_unit_test(test_schema_refuses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
