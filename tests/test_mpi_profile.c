/* SPDX-License-Identifier: MIT */
/*
 * The job profile (docs/profile.md, "The job profile") under mpirun -np 4, with
 * tests/mpi_profile_prog.c (linked with the MPI module): in profile mode, the job
 * profile is the sum of the rank profiles, call path by call path (counts, totals,
 * self, min, max exact) and its across-ranks figures follow from the ranks' totals;
 * a rank that does three times the work in a region is its max_rank, with the
 * imbalance that says so; beside traces (RINGTRACE_PROFILE=1), the job profile
 * against the rank traces' slices (counts exact, totals within 1 %); rtr_mpi_sync()
 * writes the job profile so far; ranks that do not all keep a profile write no job
 * profile, and do not hang.
 */
#include "json_tree.h"
#include "test_util.h"

#include "child.h"

#include <ringtrace.h>

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define RANKS	  4
#define TIMEOUT_S 120
#define MAX_PATHS 256

/* mpirun -np RANKS [-x env]... RTR_MPI_PROFILE_PROG mode, RINGTRACE_FILE=pattern
 * (prefix-%r<suffix>); sh: run through `sh -c script prog mode` instead. Returns the
 * wait status. */
static int run(const char *pattern, const char *env, const char *mode, const char *sh)
{
	char env_file[4200], np[8];
	const char *argv[32] = {RTR_MPIEXEC, "--allow-run-as-root", "--oversubscribe", "-np"};
	int n = 4;

	snprintf(env_file, sizeof(env_file), "RINGTRACE_FILE=%s", pattern);
	snprintf(np, sizeof(np), "%d", RANKS);
	argv[n++] = np;
	argv[n++] = "--timeout"; /* mpirun ends a hung job itself */
	argv[n++] = "100";
	argv[n++] = "-x";
	argv[n++] = env_file;
	if (env != NULL) {
		argv[n++] = "-x";
		argv[n++] = env;
	}
	if (sh != NULL) {
		argv[n++] = "/bin/sh";
		argv[n++] = "-c";
		argv[n++] = sh;
	}
	argv[n++] = RTR_MPI_PROFILE_PROG;
	argv[n++] = mode;
	argv[n] = NULL;
	pid_t pid = tu_fork();
	if (pid == 0) {
		execv(RTR_MPIEXEC, (char *const *)argv);
		_exit(127);
	}
	return tu_wait_child(pid, TIMEOUT_S);
}

/* A call path's figures, summed. */
struct path_sum {
	char path[512];
	uint64_t n, t, s, min, max, q_count;
	uint64_t rank_t[RANKS]; /* its total on each rank */
	int ranks;		/* bit r: rank r has it */
};

struct paths {
	struct path_sum v[MAX_PATHS];
	size_t n;
};

static struct path_sum *find(struct paths *ps, const char *path, int make)
{
	for (size_t i = 0; i < ps->n; i++)
		if (strcmp(ps->v[i].path, path) == 0)
			return &ps->v[i];
	if (!make)
		fail_msg("no call path %s", path);
	assert_true(ps->n < MAX_PATHS);
	struct path_sum *p = &ps->v[ps->n++];
	memset(p, 0, sizeof(*p));
	snprintf(p->path, sizeof(p->path), "%s", path);
	p->min = UINT64_MAX;
	return p;
}

/* The values a sketch q counts: its list, its buckets and zeros; absent: n. */
static uint64_t q_count(yajl_val nd)
{
	yajl_val q = yajl_tree_get(nd, (const char *[]){"q", NULL}, yajl_t_object);

	if (q == NULL)
		return (uint64_t)jt_int(nd, "n");
	yajl_val v = yajl_tree_get(q, (const char *[]){"v", NULL}, yajl_t_array);
	if (v != NULL)
		return v->u.array.len;
	yajl_val b = jt_array(q, "b");
	uint64_t c = (uint64_t)jt_int(q, "z");
	for (size_t i = 0; i < b->u.array.len; i++)
		c += (uint64_t)YAJL_GET_INTEGER(b->u.array.values[i]);
	return c;
}

/* The nodes under calls (may be NULL) added to ps as paths below prefix, for rank. */
static void add_calls(struct paths *ps, yajl_val calls, const char *prefix, int rank)
{
	for (size_t i = 0; calls != NULL && i < calls->u.array.len; i++) {
		yajl_val nd = calls->u.array.values[i];
		char path[512];
		snprintf(path, sizeof(path), "%s/%s:%s", prefix, jt_str(nd, "cat"),
			 jt_str(nd, "name"));
		struct path_sum *p = find(ps, path, 1);
		uint64_t min = (uint64_t)jt_int(nd, "min"), max = (uint64_t)jt_int(nd, "max");
		p->n += (uint64_t)jt_int(nd, "n");
		p->t += (uint64_t)jt_int(nd, "t");
		p->s += (uint64_t)jt_int(nd, "s");
		p->min = min < p->min ? min : p->min;
		p->max = max > p->max ? max : p->max;
		p->q_count += q_count(nd);
		if (rank >= 0) {
			p->rank_t[rank] += (uint64_t)jt_int(nd, "t");
			p->ranks |= 1 << rank;
		}
		add_calls(ps, yajl_tree_get(nd, (const char *[]){"calls", NULL}, yajl_t_array),
			  path, rank);
	}
}

static yajl_val calls_of(yajl_val v)
{
	return yajl_tree_get(v, (const char *[]){"calls", NULL}, yajl_t_array);
}

/* Every job node against the ranks' sums: figures, sketch counts, across ranks. */
static void check_job_node(yajl_val nd, const struct path_sum *want)
{
	yajl_val r = jt_at(nd, "r");
	uint64_t max = 0, min = UINT64_MAX, sum = 0;
	int with = 0, max_rank = 0;

	assert_int_equal(jt_int(nd, "n"), want->n);
	assert_int_equal(jt_int(nd, "t"), want->t);
	assert_int_equal(jt_int(nd, "s"), want->s);
	assert_int_equal(jt_int(nd, "min"), want->min);
	assert_int_equal(jt_int(nd, "max"), want->max);
	assert_int_equal(q_count(nd), want->n);
	for (int k = 0; k < RANKS; k++) {
		uint64_t t = want->rank_t[k];
		with += (want->ranks >> k) & 1;
		sum += t;
		min = t < min ? t : min;
		if (t > max)
			max = t, max_rank = k;
	}
	assert_int_equal(jt_int(r, "with"), with);
	assert_int_equal(jt_int(r, "min"), min);
	assert_int_equal(jt_int(r, "max"), max);
	assert_int_equal(jt_int(r, "max_rank"), max_rank);
	double mean = (double)sum / RANKS;
	assert_true(fabs(jt_double(r, "mean") - mean) <= 1e-9 * mean);
	double imb = mean > 0 ? (double)max / mean : 1;
	assert_true(fabs(jt_double(r, "imbalance") - imb) <= 1e-9 * imb);
	assert_true(jt_double(r, "imbalance") >= 1);
}

static void walk_job(yajl_val calls, const char *prefix, struct paths *want, size_t *seen)
{
	for (size_t i = 0; calls != NULL && i < calls->u.array.len; i++) {
		yajl_val nd = calls->u.array.values[i];
		char path[512];
		snprintf(path, sizeof(path), "%s/%s:%s", prefix, jt_str(nd, "cat"),
			 jt_str(nd, "name"));
		check_job_node(nd, find(want, path, 0));
		++*seen;
		walk_job(calls_of(nd), path, want, seen);
	}
}

/* The job profile node at path (cat:name/...), from its calls. */
/* The top-level node name of a job profile's calls, or NULL. */
static yajl_val job_node_or_null(yajl_val calls, const char *name)
{
	for (size_t i = 0; calls != NULL && i < calls->u.array.len; i++)
		if (strcmp(jt_str(calls->u.array.values[i], "name"), name) == 0)
			return calls->u.array.values[i];
	return NULL;
}

static yajl_val job_node(yajl_val calls, const char *name)
{
	for (size_t i = 0; calls != NULL && i < calls->u.array.len; i++)
		if (strcmp(jt_str(calls->u.array.values[i], "name"), name) == 0)
			return calls->u.array.values[i];
	fail_msg("no %s in the job profile", name);
	return NULL;
}

static void profile_mode_job_is_the_sum_of_the_ranks(void **state)
{
	char prefix[4000], pattern[4100], file[4200], job[4200];
	struct paths *want = tu_own(1, sizeof(*want));
	(void)state;

	tu_temp_path(prefix, sizeof(prefix), "mpiprof", "prof", "");
	snprintf(pattern, sizeof(pattern), "%s-%%r.json", prefix);
	snprintf(job, sizeof(job), "%s-job.json", prefix);
	tu_expect_exit_0(run(pattern, "RINGTRACE_MODE=profile", "imbalance", NULL));

	uint64_t events = 0;
	for (int r = 0; r < RANKS; r++) {
		snprintf(file, sizeof(file), "%s-%d.json", prefix, r);
		yajl_val doc = jt_parse_file(file);
		assert_string_equal(jt_str(doc, "reason"), "finalize");
		assert_int_equal(jt_int(doc, "rank"), r);
		assert_int_equal(jt_int(doc, "world"), RANKS);
		events += (uint64_t)jt_int(doc, "events");
		yajl_val threads = jt_array(doc, "threads");
		assert_int_equal(threads->u.array.len, 2); /* main and the worker */
		for (size_t i = 0; i < threads->u.array.len; i++)
			add_calls(want, calls_of(threads->u.array.values[i]), "", r);
		yajl_tree_free(doc);
		unlink(file);
	}
	yajl_val doc = jt_parse_file(job);
	assert_string_equal(jt_str(doc, "scope"), "job");
	assert_int_equal(jt_int(doc, "world"), RANKS);
	assert_true(YAJL_IS_NULL(jt_at(doc, "rank")) && YAJL_IS_NULL(jt_at(doc, "pid")));
	assert_int_equal(jt_int(doc, "events"), events);
	assert_int_equal(jt_array(doc, "ranks")->u.array.len, RANKS);
	size_t seen = 0;
	walk_job(jt_array(doc, "calls"), "", want, &seen);
	assert_int_equal(seen, want->n); /* and every rank's path is there */

	/* rank 2 does three times the work: 3,000,000 ns against 1,000,000 */
	yajl_val r = jt_at(job_node(jt_array(doc, "calls"), "imbalanced"), "r");
	assert_int_equal(jt_int(r, "max_rank"), 2);
	assert_int_equal(jt_int(r, "max"), 3000000);
	assert_int_equal(jt_int(r, "min"), 1000000);
	assert_true(jt_double(r, "mean") == 1500000 && jt_double(r, "imbalance") == 2);
	r = jt_at(job_node(jt_array(doc, "calls"), "balanced"), "r");
	assert_true(jt_double(r, "imbalance") == 1);
	r = jt_at(job_node(jt_array(doc, "calls"), "only_rank_1"), "r");
	assert_int_equal(jt_int(r, "with"), 1);
	assert_int_equal(jt_int(r, "min"), 0);
	assert_int_equal(jt_int(r, "max_rank"), 1);
	assert_true(jt_double(r, "imbalance") == 4);
	yajl_val solve = job_node(jt_array(doc, "calls"), "solve");
	assert_int_equal(jt_int(solve, "t"), 5 * (1000 + 2000 + 3000 + 4000));
	assert_int_equal(jt_int(job_node(calls_of(solve), "kernel"), "n"), 4 * 10);
	yajl_val counters = jt_array(doc, "counters");
	assert_int_equal(counters->u.array.len, 1);
	assert_int_equal(jt_int(counters->u.array.values[0], "samples"), RANKS);
	assert_true(jt_double(counters->u.array.values[0], "mean") == 7);
	yajl_tree_free(doc);
	unlink(job);
}

static int by_start(const void *a, const void *b)
{
	const struct tt_event *x = *(const struct tt_event *const *)a;
	const struct tt_event *y = *(const struct tt_event *const *)b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	return x->dur_ns > y->dur_ns ? -1 : x->dur_ns < y->dur_ns;
}

/* A rank trace's X slices nested by time, per thread, into ps's call paths. */
static void add_trace(struct paths *ps, const char *file)
{
	struct tt_trace tr;
	size_t n = 0, depth = 0;

	if (tt_load(file, 0, &tr) != 0)
		fail_msg("%s: %s", file, tr.error);
	const struct tt_event **xs = calloc(tr.n, sizeof(*xs)), *stack[64];
	assert_non_null(xs);
	for (size_t i = 0; i < tr.n; i++)
		if (strcmp(tr.ev[i].ph, "X") == 0)
			xs[n++] = &tr.ev[i];
	qsort(xs, n, sizeof(*xs), by_start);
	for (size_t i = 0; i < n; i++) {
		const struct tt_event *e = xs[i];
		while (depth > 0 &&
		       !(stack[depth - 1]->tid == e->tid && e->ts_ns >= stack[depth - 1]->ts_ns &&
			 e->ts_ns + e->dur_ns <=
				 stack[depth - 1]->ts_ns + stack[depth - 1]->dur_ns))
			depth--;
		assert_true(depth < 64);
		stack[depth++] = e;
		char path[512] = "";
		for (size_t d = 0; d < depth; d++)
			snprintf(path + strlen(path), sizeof(path) - strlen(path), "/%s:%s",
				 stack[d]->cat, stack[d]->name);
		struct path_sum *p = find(ps, path, 1);
		p->n++;
		p->t += e->dur_ns;
	}
	free(xs);
	tt_free(&tr);
}

/* RINGTRACE_PROFILE=1: the rank traces and `<trace>.profile.json` beside each; the job
 * profile at the trace pattern with "job" for the rank, .profile.json after it. */
static void beside_traces_job_profile_matches_the_traces(void **state)
{
	char prefix[4000], pattern[4100], file[4200], job[4200];
	struct paths *want = tu_own(1, sizeof(*want)), *got = tu_own(1, sizeof(*got));
	(void)state;

	tu_temp_path(prefix, sizeof(prefix), "mpiprof", "trace", "");
	snprintf(pattern, sizeof(pattern), "%s-%%r.json", prefix);
	snprintf(job, sizeof(job), "%s-job.json.profile.json", prefix);
	tu_expect_exit_0(run(pattern, "RINGTRACE_PROFILE=1", "imbalance", NULL));
	for (int r = 0; r < RANKS; r++) {
		snprintf(file, sizeof(file), "%s-%d.json", prefix, r);
		add_trace(want, file);
		unlink(file);
		snprintf(file, sizeof(file), "%s-%d.json.profile.json", prefix, r);
		yajl_val doc = jt_parse_file(file);
		assert_string_equal(jt_str(doc, "reason"), "finalize");
		yajl_tree_free(doc);
		unlink(file);
	}
	yajl_val doc = jt_parse_file(job);
	add_calls(got, jt_array(doc, "calls"), "", -1);
	assert_int_equal(got->n, want->n);
	for (size_t i = 0; i < want->n; i++) {
		const struct path_sum *w = &want->v[i], *g = find(got, w->path, 0);
		assert_int_equal(g->n, w->n);
		double diff = (double)g->t - (double)w->t;
		if (fabs(diff) > 0.01 * (double)w->t)
			fail_msg("%s: %llu ns in the job profile, %llu in the traces", w->path,
				 (unsigned long long)g->t, (unsigned long long)w->t);
	}
	yajl_tree_free(doc);
	unlink(job);
}

/* rtr_mpi_sync() in the middle: the job profile so far holds the steps and none of
 * what came after (the imbalanced regions), which the final one, at MPI_Finalize,
 * holds too. */
static void a_sync_writes_the_job_profile_so_far(void **state)
{
	char prefix[4000], pattern[4100], file[4200], job[4200], sync[4300];
	(void)state;

	tu_temp_path(prefix, sizeof(prefix), "mpiprof", "sync", "");
	snprintf(pattern, sizeof(pattern), "%s-%%r.json", prefix);
	snprintf(job, sizeof(job), "%s-job.json", prefix);
	snprintf(sync, sizeof(sync), "%s.sync", job);
	tu_expect_exit_0(run(pattern, "RINGTRACE_MODE=profile", "sync", NULL));
	for (int k = 0; k < 2; k++) {
		yajl_val doc = jt_parse_file(k == 0 ? sync : job);
		yajl_val calls = jt_array(doc, "calls");

		assert_string_equal(jt_str(doc, "scope"), "job");
		assert_int_equal(jt_int(doc, "world"), RANKS);
		assert_int_equal(jt_array(doc, "ranks")->u.array.len, RANKS);
		assert_int_equal(jt_int(job_node(calls, "step"), "n"), 10 * RANKS);
		assert_int_equal(jt_int(job_node(calls, "solve"), "t"),
				 5 * (1000 + 2000 + 3000 + 4000));
		/* after the sync: only in the final one */
		if (k == 0)
			assert_null(job_node_or_null(calls, "imbalanced"));
		else
			assert_int_equal(jt_int(jt_at(job_node(calls, "imbalanced"), "r"), "max"),
					 3000000);
		yajl_tree_free(doc);
	}
	unlink(sync);
	unlink(job);
	for (int r = 0; r < RANKS; r++) {
		snprintf(file, sizeof(file), "%s-%d.json", prefix, r);
		unlink(file);
	}
}

/* Rank 1 keeps no profile: no job profile, and MPI_Finalize returns on every rank. */
static void ranks_without_a_profile_write_no_job_profile(void **state)
{
	char prefix[4000], pattern[4100], file[4200], job[4200];
	(void)state;

	tu_temp_path(prefix, sizeof(prefix), "mpiprof", "mixed", "");
	snprintf(pattern, sizeof(pattern), "%s-%%r.json", prefix);
	snprintf(job, sizeof(job), "%s-job.json", prefix);
	unlink(job);
	tu_expect_exit_0(run(pattern, "RINGTRACE_MODE=profile", "work",
			     "[ \"$OMPI_COMM_WORLD_RANK\" = 1 ] && export RINGTRACE_MODE=stream; "
			     "exec \"$0\" \"$@\""));
	assert_int_equal(access(job, F_OK), -1);
	for (int r = 0; r < RANKS; r++) {
		snprintf(file, sizeof(file), "%s-%d.json", prefix, r);
		yajl_val doc = jt_parse_file(file); /* a profile, or rank 1's trace: whole */
		yajl_tree_free(doc);
		unlink(file);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(profile_mode_job_is_the_sum_of_the_ranks, tu_teardown),
		cmocka_unit_test_teardown(beside_traces_job_profile_matches_the_traces,
					  tu_teardown),
		cmocka_unit_test_teardown(a_sync_writes_the_job_profile_so_far, tu_teardown),
		cmocka_unit_test_teardown(ranks_without_a_profile_write_no_job_profile,
					  tu_teardown),
	};

	tu_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
