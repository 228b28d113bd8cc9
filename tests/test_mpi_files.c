/* SPDX-License-Identifier: MIT */
/*
 * A job's files under mpirun -np 4 (examples/mpi_halo with the MPI module):
 * RINGTRACE_FILE=DIR/%h/%R/t-%r.json puts each rank's file in its host's and its
 * thousand's directory, made by the recorder; rank 0's manifest DIR/t-job.manifest.json
 * lists exactly those files (rank, host, pid as each file's start marker says, the
 * path relative to DIR); `ringtrace merge MANIFEST` writes what the merge of the four
 * files writes. With rotation, the manifest lists every rank's segments, each once.
 */
#include <ringtrace.h>

#include "child.h"
#include "test_util.h"

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include <cmocka.h>

#define RANKS	  4
#define TIMEOUT_S 60

static char dir[PATH_MAX - 512]; /* room for the names below */
static char host[256];

static int setup(void **state)
{
	char cmd[PATH_MAX];

	(void)state;
	tu_temp_path(dir, sizeof(dir), "mpi", "files", "");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(gethostname(host, sizeof(host)), 0);
	host[sizeof(host) - 1] = '\0';
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return getenv("RTR_TEST_KEEP") != NULL || system(cmd) == 0 ? 0 : -1;
}

/* mpi_halo STEPS under mpirun -np RANKS with RINGTRACE_FILE=DIR/%h/%R/t-%r.json and
 * env (NULL: none) passed on too. */
static void run_halo(const char *steps, const char *env)
{
	char file_env[PATH_MAX];
	const char *argv[] = {RTR_MPIEXEC,
			      "--allow-run-as-root",
			      "--oversubscribe",
			      "-np",
			      "4",
			      "--timeout",
			      "50",
			      "-x",
			      file_env,
			      "-x",
			      env != NULL ? env : "RINGTRACE_FLUSH_MS=100",
			      RTR_EXAMPLE_MPI_HALO,
			      steps,
			      NULL};

	snprintf(file_env, sizeof(file_env), "RINGTRACE_FILE=%s/%%h/%%R/t-%%r.json", dir);
	pid_t pid = tu_fork();
	if (pid == 0) {
		execv(RTR_MPIEXEC, (char *const *)argv);
		_exit(127);
	}
	tu_expect_exit_0(tu_wait_child(pid, TIMEOUT_S));
}

static void run_tool(const char *const *argv)
{
	pid_t pid = tu_fork();
	if (pid == 0) {
		execv(RTR_TOOL, (char *const *)argv);
		_exit(127);
	}
	tu_expect_exit_0(tu_wait_child(pid, TIMEOUT_S));
}

static yajl_val manifest(void)
{
	char path[PATH_MAX], err[256];

	snprintf(path, sizeof(path), "%s/t-job.manifest.json", dir);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char *text = tu_own(1 << 20, 1);
	size_t len = fread(text, 1, (1 << 20) - 1, f);
	fclose(f);
	text[len] = '\0';
	yajl_val m = yajl_tree_parse(text, err, sizeof(err));
	if (m == NULL)
		fail_msg("%s: %s", path, err);
	return m;
}

static yajl_val at(yajl_val v, const char *key, yajl_type type)
{
	const char *p[] = {key, NULL};
	yajl_val found = yajl_tree_get(v, p, type);

	if (found == NULL)
		fail_msg("no %s", key);
	return found;
}

/* The start marker's pid of the trace at path. */
static int64_t pid_of(const char *path)
{
	struct tt_trace t;

	assert_int_equal(tt_load(path, 0, &t), 0);
	assert_true(t.complete);
	assert_true(t.n > 0 && t.ev[0].name != NULL);
	assert_string_equal(t.ev[0].name, "ringtrace: start");
	int64_t pid = t.ev[0].pid;
	tt_free(&t);
	return pid;
}

static void files_spread_over_directories_and_the_manifest_lists_them(void **state)
{
	(void)state;
	char files[RANKS][PATH_MAX], want[PATH_MAX], path[PATH_MAX];
	struct stat st;

	run_halo("20", NULL);
	yajl_val m = manifest();
	assert_string_equal(YAJL_GET_STRING(at(m, "type", yajl_t_string)), "ringtrace manifest");
	assert_int_equal(YAJL_GET_INTEGER(at(m, "schema_version", yajl_t_number)), 1);
	assert_int_equal(YAJL_GET_INTEGER(at(m, "world_size", yajl_t_number)), RANKS);
	yajl_val list = at(m, "files", yajl_t_array);
	assert_int_equal(YAJL_GET_ARRAY(list)->len, RANKS);
	for (int r = 0; r < RANKS; r++) {
		yajl_val e = YAJL_GET_ARRAY(list)->values[r];
		snprintf(files[r], sizeof(files[r]), "%s/%s/000/t-%d.json", dir, host, r);
		assert_int_equal(stat(files[r], &st), 0);
		snprintf(want, sizeof(want), "%s/000/t-%d.json", host, r);
		assert_int_equal(YAJL_GET_INTEGER(at(e, "rank", yajl_t_number)), r);
		assert_string_equal(YAJL_GET_STRING(at(e, "host", yajl_t_string)), host);
		assert_string_equal(YAJL_GET_STRING(at(e, "path", yajl_t_string)), want);
		assert_int_equal(YAJL_GET_INTEGER(at(e, "pid", yajl_t_number)), pid_of(files[r]));
	}
	yajl_tree_free(m);

	/* the merge of the manifest is the merge of the files */
	char by_files[PATH_MAX], by_manifest[PATH_MAX];
	snprintf(by_files, sizeof(by_files), "%s/by-files.json", dir);
	snprintf(by_manifest, sizeof(by_manifest), "%s/by-manifest.json", dir);
	snprintf(path, sizeof(path), "%s/t-job.manifest.json", dir);
	const char *merge_files[] = {RTR_TOOL, "merge",	 "-o",	   by_files, files[0],
				     files[1], files[2], files[3], NULL};
	const char *merge_manifest[] = {RTR_TOOL, "merge", "-o", by_manifest, path, NULL};
	run_tool(merge_files);
	run_tool(merge_manifest);
	uint64_t size = tu_file_size(by_files);
	assert_int_equal(size, tu_file_size(by_manifest));
	char *a = tu_own(size + 1, 1), *b = tu_own(size + 1, 1);
	FILE *fa = fopen(by_files, "r"), *fb = fopen(by_manifest, "r");
	assert_true(fa != NULL && fb != NULL);
	assert_int_equal(fread(a, 1, size, fa), size);
	assert_int_equal(fread(b, 1, size, fb), size);
	fclose(fa);
	fclose(fb);
	assert_memory_equal(a, b, size);
}

static void with_rotation_every_segment_is_listed_once(void **state)
{
	(void)state;
	char path[PATH_MAX], want[PATH_MAX];
	struct stat st;
	int segments[RANKS] = {0};

	/* 1 MiB segments of some 2 MB a rank */
	run_halo("4000", "RINGTRACE_MAX_MB=1");
	yajl_val m = manifest();
	yajl_val list = at(m, "files", yajl_t_array);
	for (size_t i = 0; i < YAJL_GET_ARRAY(list)->len; i++) {
		yajl_val e = YAJL_GET_ARRAY(list)->values[i];
		long long r = YAJL_GET_INTEGER(at(e, "rank", yajl_t_number));
		long long seg = YAJL_GET_INTEGER(at(e, "segment", yajl_t_number));
		assert_true(r >= 0 && r < RANKS);
		/* by rank, then segment, from 0 */
		assert_int_equal(seg, segments[r]);
		assert_true(i == 0 || r >= YAJL_GET_INTEGER(at(YAJL_GET_ARRAY(list)->values[i - 1],
							       "rank", yajl_t_number)));
		snprintf(want, sizeof(want), "%s/000/t-%lld.%04lld.json", host, r, seg);
		assert_string_equal(YAJL_GET_STRING(at(e, "path", yajl_t_string)), want);
		assert_true((size_t)snprintf(path, sizeof(path), "%s/%s", dir, want) <
			    sizeof(path));
		assert_int_equal(stat(path, &st), 0);
		segments[r]++;
	}
	for (int r = 0; r < RANKS; r++) {
		assert_true(segments[r] >= 2);
		/* no segment on disk that it does not list */
		snprintf(path, sizeof(path), "%s/%s/000/t-%d.%04d.json", dir, host, r, segments[r]);
		assert_int_not_equal(stat(path, &st), 0);
	}
	yajl_tree_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			files_spread_over_directories_and_the_manifest_lists_them, setup, teardown),
		cmocka_unit_test_setup_teardown(with_rotation_every_segment_is_listed_once, setup,
						teardown),
	};
	return cmocka_run_group_tests_name("mpi_files", tests, NULL, NULL);
}
