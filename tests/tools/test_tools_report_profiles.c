/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace report` of profiles (docs/profile.md), written here with exact values,
 * and its --json read back with yajl (json_tree.h): process profiles give each rank's
 * span, MPI time (the outermost `mpi` nodes, threads summed) and the imbalance per
 * call path; a job profile its "r" per call path as it is; either says in one line
 * that wait states need traces; traces beside profiles answer and the profiles are
 * counted as left out. The same bytes at -j 1 and 2 and under mpirun -np 2 and 4. And
 * a real job (mpirun -np 4 of tests/progs/report_waits.c, RINGTRACE_PROFILE=1 beside
 * its traces): the rank profiles give the traces' MPI time per rank and imbalance per
 * call path (within 1 %), the job profile exactly the rank profiles' call paths.
 */
#include "json_tree.h"
#include "tool_test.h"

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

#define RANKS 4
#define MS    1000000LL /* ns */

/* Per rank, ms: its span, main;compute, MPI_Allreduce (outermost mpi) and the mpi
 * node inside it, and a second thread's helper;MPI_Barrier. */
static const long long span[RANKS] = {1000, 1000, 900, 1000};
static const long long compute[RANKS] = {600, 800, 500, 700};
static const long long allreduce[RANKS] = {300, 100, 350, 250};
static const long long inner[RANKS] = {100, 40, 10, 0};
static const long long barrier[RANKS] = {50, 0, 20, 10};

static void write_profile(const char *path, int r)
{
	char text[4096], in[256] = "", second[512] = "";

	if (inner[r] > 0)
		snprintf(in, sizeof(in),
			 ",\"calls\":[{\"name\":\"wait\",\"cat\":\"mpi\",\"n\":1,\"t\":%lld}]",
			 inner[r] * MS);
	if (barrier[r] > 0)
		snprintf(second, sizeof(second),
			 ",{\"tid\":2,\"events\":2,\"dropped\":0,\"calls\":[{\"name\":\"helper\","
			 "\"cat\":\"app\",\"n\":1,\"t\":%lld,\"calls\":[{\"name\":\"MPI_Barrier\","
			 "\"cat\":\"mpi\",\"n\":1,\"t\":%lld}]}]}",
			 barrier[r] * MS, barrier[r] * MS);
	snprintf(text, sizeof(text),
		 "{\"schema_version\":1,\"type\":\"ringtrace-profile\",\"scope\":\"process\","
		 "\"library\":\"ringtrace 0\",\"host\":\"h\",\"pid\":%d,\"rank\":%d,\"world\":4,"
		 "\"clock\":\"tsc\",\"start_ns\":0,\"end_ns\":%lld,\"final\":true,\"reason\":"
		 "\"finalize\",\"events\":9,\"dropped\":0,\"threads\":[{\"tid\":1,\"events\":7,"
		 "\"dropped\":0,\"calls\":[{\"name\":\"main\",\"cat\":\"app\",\"n\":1,\"t\":%lld,"
		 "\"calls\":[{\"name\":\"compute\",\"cat\":\"app\",\"n\":2,\"t\":%lld},"
		 "{\"name\":\"MPI_Allreduce\",\"cat\":\"mpi\",\"n\":3,\"t\":%lld%s}]}]}%s],"
		 "\"counters\":[]}\n",
		 100 + r, r, span[r] * MS, span[r] * MS, compute[r] * MS, allreduce[r] * MS, in,
		 second);
	tool_write(path, text, strlen(text));
}

/* The job profile of the same ranks, as the MPI module reduces it. */
static void write_job_profile(const char *path)
{
	char text[4096];

	snprintf(text, sizeof(text),
		 "{\"schema_version\":1,\"type\":\"ringtrace-profile\",\"scope\":\"job\","
		 "\"pid\":null,\"rank\":null,\"world\":4,\"start_ns\":0,\"end_ns\":%lld,"
		 "\"final\":true,\"reason\":\"finalize\",\"events\":36,\"dropped\":0,\"ranks\":["
		 "{\"rank\":0,\"start_ns\":0,\"end_ns\":%lld},{\"rank\":1,\"start_ns\":5,"
		 "\"end_ns\":%lld},{\"rank\":2,\"start_ns\":0,\"end_ns\":%lld},{\"rank\":3,"
		 "\"start_ns\":0,\"end_ns\":%lld}],\"calls\":[{\"name\":\"main\",\"cat\":\"app\","
		 "\"n\":4,\"t\":%lld,\"r\":{\"min\":%lld,\"mean\":975000000,\"max\":%lld,"
		 "\"max_rank\":0,\"with\":4,\"imbalance\":1.0256},\"calls\":[{\"name\":\"compute\","
		 "\"cat\":\"app\",\"n\":8,\"t\":%lld,\"r\":{\"min\":%lld,\"mean\":650000000,"
		 "\"max\":%lld,\"max_rank\":1,\"with\":3,\"imbalance\":1.23}}]}]}\n",
		 1000 * MS, 1000 * MS, 1000 * MS + 5, 900 * MS, 1000 * MS, 3900 * MS, 900 * MS,
		 1000 * MS, 2600 * MS, 0LL, 800 * MS);
	tool_write(path, text, strlen(text));
}

static char files[RANKS + 2][4200];

static void write_files(void)
{
	const char *dir = tool_tmp("report-prof");

	mkdir(dir, 0755);
	for (int r = 0; r < RANKS; r++) {
		snprintf(files[r], sizeof(files[r]), "%s/prof-%d.json", dir, r);
		write_profile(files[r], r);
	}
	snprintf(files[RANKS], sizeof(files[RANKS]), "%s/prof-job.json", dir);
	write_job_profile(files[RANKS]);
	snprintf(files[RANKS + 1], sizeof(files[RANKS + 1]), "%s/trace.json", dir);
	tool_write(
		files[RANKS + 1],
		"{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"work\",\"cat\":\"app\",\"ts\":0,"
		"\"dur\":1000,\"pid\":1,\"tid\":1}]}\n",
		strlen("{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"work\",\"cat\":\"app\",\"ts\":0,"
		       "\"dur\":1000,\"pid\":1,\"tid\":1}]}\n"));
}

/* report -j jobs --json --top 0 of files[from..to). */
static char *report(const char *jobs, int from, int to)
{
	struct tool_run r;
	const char *args[16] = {"report", "-j", jobs, "--top", "0", "--json"};
	size_t n = 6;
	char *out;

	for (int i = from; i < to; i++)
		args[n++] = files[i];
	args[n] = NULL;
	tool_runv(&r, NULL, NULL, args);
	if (r.status != 0)
		fail_msg("report: status %d: %s", r.status, r.err);
	out = r.out;
	r.out = NULL;
	tool_run_free(&r);
	return out;
}

static yajl_val path_row(yajl_val doc, const char *path)
{
	return jt_row_by(jt_array(doc, "paths"), "path", path, NULL);
}

static void expect_path(yajl_val doc, const char *path, long long calls, long long sum,
			long long min, long long max, long long max_rank, long long ranks)
{
	yajl_val p = path_row(doc, path);

	assert_int_equal(jt_int(p, "calls"), calls);
	assert_int_equal(jt_int(p, "sum_ns"), sum);
	assert_int_equal(jt_int(p, "min_ns"), min);
	assert_int_equal(jt_int(p, "max_ns"), max);
	assert_int_equal(jt_int(p, "max_rank"), max_rank);
	assert_int_equal(jt_int(p, "ranks"), ranks);
	assert_true(jt_double(p, "imbalance") == (double)max / (double)(sum / RANKS));
}

/* Process profiles, the job profile beside them left out. */
static void process_profiles_give_ranks_and_imbalance(void **state)
{
	char *one, *two;
	yajl_val doc, ranks;

	(void)state;
	write_files();
	one = report("1", 0, RANKS + 1);
	two = report("2", 0, RANKS + 1);
	assert_string_equal(one, two);
	doc = jt_parse(one, "report --json of profiles");
	assert_string_equal(jt_str(doc, "source"), "profiles");
	assert_true(strstr(jt_str(doc, "note"), "wait states need traces") != NULL);
	assert_int_equal(jt_int(doc, "profiles_left_out"), 1);
	assert_int_equal(jt_int(doc, "files"), RANKS + 1);
	assert_int_equal(jt_int(doc, "span_ns"), 1000 * MS);
	assert_int_equal(YAJL_GET_ARRAY(jt_array(doc, "waits"))->len, 0);
	ranks = jt_array(doc, "ranks");
	assert_int_equal(YAJL_GET_ARRAY(ranks)->len, RANKS);
	for (int r = 0; r < RANKS; r++) {
		yajl_val k = YAJL_GET_ARRAY(ranks)->values[r];

		assert_int_equal(jt_int(k, "rank"), r);
		assert_int_equal(jt_int(k, "span_ns"), span[r] * MS);
		assert_int_equal(jt_int(k, "mpi_ns"), (allreduce[r] + barrier[r]) * MS);
		assert_int_equal(jt_int(k, "compute_ns"),
				 (span[r] - allreduce[r] - barrier[r]) * MS);
		assert_int_equal(jt_int(k, "idle_ns"), (1000 - span[r]) * MS);
	}
	expect_path(doc, "main;compute", 8, 2600 * MS, 500 * MS, 800 * MS, 1, 4);
	expect_path(doc, "main;MPI_Allreduce", 12, 1000 * MS, 100 * MS, 350 * MS, 2, 4);
	expect_path(doc, "main;MPI_Allreduce;wait", 3, 150 * MS, 0, 100 * MS, 0, 3);
	expect_path(doc, "helper;MPI_Barrier", 3, 80 * MS, 0, 50 * MS, 0, 3);
	yajl_tree_free(doc);
#ifdef RTR_MPIEXEC
	for (int np = 2; np <= 4; np += 2) {
		char *k = tool_mpirun_report(RTR_MPIEXEC, np, files, RANKS + 1);

		assert_string_equal(one, k);
		free(k);
	}
#endif
	free(one);
	free(two);
}

/* The job profile alone: its "r" per call path, the ranks' spans. */
static void a_job_profile_gives_its_imbalance(void **state)
{
	char *one;
	yajl_val doc, ranks;

	(void)state;
	write_files();
	one = report("1", RANKS, RANKS + 1);
	doc = jt_parse(one, "report --json of a job profile");
	assert_string_equal(jt_str(doc, "source"), "job_profile");
	assert_true(strstr(jt_str(doc, "note"), "wait states need traces") != NULL);
	assert_int_equal(jt_int(doc, "profiles_left_out"), 0);
	ranks = jt_array(doc, "ranks");
	assert_int_equal(YAJL_GET_ARRAY(ranks)->len, RANKS);
	for (int r = 0; r < RANKS; r++) {
		yajl_val k = YAJL_GET_ARRAY(ranks)->values[r];

		assert_int_equal(jt_int(k, "rank"), r);
		assert_int_equal(jt_int(k, "span_ns"), span[r] * MS);
		assert_int_equal(jt_int(k, "mpi_ns"), 0);
	}
	expect_path(doc, "main;compute", 8, 2600 * MS, 0, 800 * MS, 1, 3);
	expect_path(doc, "main", 4, 3900 * MS, 900 * MS, 1000 * MS, 0, 4);
	yajl_tree_free(doc);
	free(one);
}

/* A trace beside the profiles answers; the profiles are counted as left out. */
static void traces_beside_profiles_answer(void **state)
{
	char *one;
	yajl_val doc;

	(void)state;
	write_files();
	one = report("2", 0, RANKS + 2);
	doc = jt_parse(one, "report --json of a trace and profiles");
	assert_string_equal(jt_str(doc, "source"), "traces");
	const char *note[] = {"note", NULL};
	assert_null(yajl_tree_get(doc, note, yajl_t_any));
	assert_int_equal(jt_int(doc, "profiles_left_out"), RANKS + 1);
	assert_int_equal(jt_int(doc, "files"), RANKS + 2);
	assert_int_equal(YAJL_GET_ARRAY(jt_array(doc, "ranks"))->len, 1);
	assert_int_equal(YAJL_GET_ARRAY(jt_array(doc, "paths"))->len, 1);
	assert_string_equal(jt_str(path_row(doc, "work"), "path"), "work");
	yajl_tree_free(doc);
	free(one);
}

/* A trace without slices (an instant alone) is a rank with no call path. */
static void a_trace_without_slices_is_a_rank(void **state)
{
	static const char text[] = "{\"traceEvents\":[{\"ph\":\"i\",\"name\":\"mark\","
				   "\"ts\":0,\"pid\":1,\"tid\":1,\"s\":\"t\"}]}\n";
	yajl_val doc;
	char *one;

	(void)state;
	write_files();
	tool_write(files[RANKS + 1], text, strlen(text));
	one = report("1", RANKS + 1, RANKS + 2);
	doc = jt_parse(one, "report --json of a trace without slices");
	assert_int_equal(YAJL_GET_ARRAY(jt_array(doc, "ranks"))->len, 1);
	assert_int_equal(YAJL_GET_ARRAY(jt_array(doc, "paths"))->len, 0);
	yajl_tree_free(doc);
	free(one);
}

#if defined(RTR_MPIEXEC) && defined(RTR_REPORT_WAITS)
static yajl_val report_doc(const char *what, char (*inputs)[4300], int n)
{
	struct tool_run r;
	const char *args[16] = {"report", "--top", "0", "--json"};
	yajl_val doc;

	for (int i = 0; i < n; i++)
		args[4 + i] = inputs[i];
	args[4 + n] = NULL;
	tool_runv(&r, NULL, NULL, args);
	if (r.status != 0)
		fail_msg("report of %s: status %d: %s", what, r.status, r.err);
	doc = jt_parse(r.out, what);
	tool_run_free(&r);
	return doc;
}

static void near(double a, double b, const char *what)
{
	if (a < b * 0.99 || a > b * 1.01)
		fail_msg("%s: %.0f against the traces' %.0f", what, a, b);
}

/* The rank profiles against the traces; the job profile against the rank profiles. */
static void compare_real(yajl_val traces, yajl_val procs, yajl_val job)
{
	yajl_val pr = jt_array(procs, "paths");

	for (int r = 0; r < RANKS; r++)
		near((double)jt_int(YAJL_GET_ARRAY(jt_array(procs, "ranks"))->values[r], "mpi_ns"),
		     (double)jt_int(YAJL_GET_ARRAY(jt_array(traces, "ranks"))->values[r], "mpi_ns"),
		     "a rank's MPI time");
	assert_true(YAJL_GET_ARRAY(pr)->len > 3);
	for (size_t i = 0; i < YAJL_GET_ARRAY(pr)->len; i++) {
		yajl_val p = YAJL_GET_ARRAY(pr)->values[i];
		const char *name = jt_str(p, "path");
		yajl_val t = path_row(traces, name), j = path_row(job, name);

		assert_int_equal(jt_int(p, "calls"), jt_int(t, "calls"));
		near((double)jt_int(p, "sum_ns"), (double)jt_int(t, "sum_ns"), name);
		near(jt_double(p, "imbalance"), jt_double(t, "imbalance"), name);
		if (jt_double(t, "imbalance") > 1.1)
			assert_int_equal(jt_int(p, "max_rank"), jt_int(t, "max_rank"));
		assert_int_equal(jt_int(j, "calls"), jt_int(p, "calls"));
		assert_int_equal(jt_int(j, "sum_ns"), jt_int(p, "sum_ns"));
		assert_int_equal(jt_int(j, "min_ns"), jt_int(p, "min_ns"));
		assert_int_equal(jt_int(j, "max_ns"), jt_int(p, "max_ns"));
		assert_int_equal(jt_int(j, "max_rank"), jt_int(p, "max_rank"));
		assert_int_equal(jt_int(j, "ranks"), jt_int(p, "ranks"));
	}
	/* the injected waits: rank 0's receive, rank 2 behind at a barrier */
	assert_true(jt_double(path_row(procs, "MPI_Recv"), "imbalance") > 3.9);
	assert_int_equal(jt_int(path_row(procs, "MPI_Recv"), "max_rank"), 0);
}

static void real_profiles_match_the_traces(void **state)
{
	char dir[4200], cmd[20000], in[2 * RANKS + 1][4300];
	yajl_val traces, procs, job, all;

	(void)state;
	snprintf(dir, sizeof(dir), "%s", tool_tmp("report-realprof"));
	mkdir(dir, 0755);
	snprintf(cmd, sizeof(cmd),
		 "%s --allow-run-as-root --oversubscribe -np 4 --timeout 60 -x "
		 "'RINGTRACE_FILE=%s/w-%%r.json' -x RINGTRACE_PROFILE=1 -x 'LD_PRELOAD=%s' '%s'",
		 RTR_MPIEXEC, dir, RTR_MPI_LIB, RTR_REPORT_WAITS);
	assert_int_equal(system(cmd), 0);
	for (int r = 0; r < RANKS; r++) {
		snprintf(in[r], sizeof(in[r]), "%s/w-%d.json", dir, r);
		snprintf(in[RANKS + r], sizeof(in[r]), "%s/w-%d.json.profile.json", dir, r);
	}
	snprintf(in[2 * RANKS], sizeof(in[0]), "%s/w-job.json.profile.json", dir);
	traces = report_doc("the traces", in, RANKS);
	procs = report_doc("the rank profiles", in + RANKS, RANKS);
	job = report_doc("the job profile", in + 2 * RANKS, 1);
	all = report_doc("traces and profiles", in, 2 * RANKS + 1);
	assert_string_equal(jt_str(procs, "source"), "profiles");
	assert_string_equal(jt_str(job, "source"), "job_profile");
	assert_string_equal(jt_str(all, "source"), "traces");
	assert_int_equal(jt_int(all, "profiles_left_out"), RANKS + 1);
	jt_expect_same(jt_at(all, "waits"), jt_at(traces, "waits"));
	compare_real(traces, procs, job);
	yajl_tree_free(traces);
	yajl_tree_free(procs);
	yajl_tree_free(job);
	yajl_tree_free(all);
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(process_profiles_give_ranks_and_imbalance),
		cmocka_unit_test(a_job_profile_gives_its_imbalance),
		cmocka_unit_test(traces_beside_profiles_answer),
		cmocka_unit_test(a_trace_without_slices_is_a_rank),
#if defined(RTR_MPIEXEC) && defined(RTR_REPORT_WAITS)
		cmocka_unit_test(real_profiles_match_the_traces),
#endif
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
