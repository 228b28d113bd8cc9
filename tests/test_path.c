/* SPDX-License-Identifier: MIT */
/*
 * Path patterns (src/path/path.c): the escapes, %R among them; the job manifest's name;
 * the missing directories made at the start (nested, existing, made by many threads
 * at once, and the clear error when one cannot be made: the start fails, naming it,
 * and the program runs on).
 */
#include <ringtrace.h>

#include "path/path.h"
#include "test_util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
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

static void expand(const char *pattern, long rank, uint64_t number, const char *want)
{
	char out[256];

	assert_int_equal(rtr__path_expand(out, sizeof(out), pattern, 42, "node7", rank, number), 0);
	assert_string_equal(out, want);
}

static void escapes_expand(void **state)
{
	(void)state;
	expand("t-%p-%h-%r.json", 3, 0, "t-42-node7-3.json");
	expand("t.%s.json", 0, 12, "t.0012.json");
	expand("100%%-%r", -1, 0, "100%-0");
	/* %R: the rank / 1000, three digits at least */
	expand("%R", 0, 0, "000");
	expand("%R", 999, 0, "000");
	expand("%R", 1000, 0, "001");
	expand("%R", 12345, 0, "012");
	expand("%R", 1234567, 0, "1234");
	expand("%R", -1, 0, "000");
	expand("trace/%h/%R/rank-%r.json", 4321, 0, "trace/node7/004/rank-4321.json");

	char out[16];
	assert_int_equal(rtr__path_expand(out, sizeof(out), "t-%q", 1, "h", 0, 0), -EINVAL);
	assert_int_equal(rtr__path_expand(out, sizeof(out), "t-%", 1, "h", 0, 0), -EINVAL);
	assert_int_equal(rtr__path_expand(out, sizeof(out), "", 1, "h", 0, 0), -EINVAL);
	assert_int_equal(rtr__path_expand(out, sizeof(out), "%R/%R/%R/%R/%R", 1, "h", 0, 0),
			 -ENAMETOOLONG);
}

static void manifest(const char *pattern, const char *want)
{
	char out[256];

	assert_int_equal(rtr__path_job(out, sizeof(out), pattern, 42, "node7", ".manifest.json"),
			 0);
	assert_string_equal(out, want);
}

static void job_files_are_named_after_the_pattern(void **state)
{
	(void)state;
	manifest("trace-%r.json", "trace-job.manifest.json");
	manifest("ringtrace-%r.json", "ringtrace-job.manifest.json");
	manifest("run/%h/%R/t-%r.json", "run/t-job.manifest.json");
	manifest("/scratch/j1/%R/t-%r.json.gz", "/scratch/j1/t-job.manifest.json");
	manifest("out/t-%r.pftrace", "out/t-job.manifest.json");
	manifest("t-%r.perfetto-trace.gz", "t-job.manifest.json");
	manifest("t-%r.%s.json", "t-job.manifest.json");
	manifest("t-%h-%r.json", "t-node7-job.manifest.json");
	manifest("a/b/t-%p.json", "a/b/t-42-job.manifest.json");
	manifest("t-%r", "t-job.manifest.json");

	/* the job profile's name: the same place, the pattern's own suffix kept */
	char job[256];
	static const char *const job_names[][2] = {
		{"prof-%r.json", "prof-job.json"},
		{"run/%h/%R/p-%r.json", "run/p-job.json"},
		{"t-%r.%s.json.gz", "t-job.json.gz"},
		{"t.json", "t-job.json"},
		{"p-%r", "p-job"},
	};
	for (size_t i = 0; i < sizeof(job_names) / sizeof(job_names[0]); i++) {
		assert_int_equal(
			rtr__path_job(job, sizeof(job), job_names[i][0], 42, "node7", NULL), 0);
		assert_string_equal(job, job_names[i][1]);
	}

	char out[16];
	assert_int_equal(rtr__path_job(out, sizeof(out), "t-%q.json", 1, "h", ".manifest.json"),
			 -EINVAL);
	assert_int_equal(
		rtr__path_job(out, sizeof(out), "a-long-name-%r.json", 1, "h", ".manifest.json"),
		-ENAMETOOLONG);
}

static char base[PATH_MAX - 256]; /* room for the names below */

static int setup(void **state)
{
	(void)state;
	tu_temp_path(base, sizeof(base), "path", "dirs", "");
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(mkdir(base, 0755), 0);
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	chmod(base, 0755);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	if (getenv("RTR_TEST_KEEP") == NULL && system(cmd) != 0)
		return -1;
	return tu_teardown(state);
}

static int is_dir(const char *path, mode_t *mode)
{
	struct stat st;

	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
		return 0;
	*mode = st.st_mode & 07777;
	return 1;
}

static void nested_directories_are_made_with_the_umask(void **state)
{
	(void)state;
	char path[PATH_MAX], dir[PATH_MAX], failed[PATH_MAX] = "";
	mode_t mode, old = umask(027);

	snprintf(path, sizeof(path), "%s/a/b/c/t.json", base);
	assert_int_equal(rtr__path_make_dirs(path, failed, sizeof(failed)), 0);
	umask(old);
	const char *levels[] = {"a", "a/b", "a/b/c"};
	for (size_t i = 0; i < 3; i++) {
		snprintf(dir, sizeof(dir), "%s/%s", base, levels[i]);
		assert_true(is_dir(dir, &mode));
		assert_int_equal(mode, 0750);
	}
	/* there already: nothing to do */
	assert_int_equal(rtr__path_make_dirs(path, failed, sizeof(failed)), 0);
	assert_string_equal(failed, "");
	/* a name with no directory, and the root's */
	assert_int_equal(rtr__path_make_dirs("t.json", failed, sizeof(failed)), 0);
	assert_int_equal(rtr__path_make_dirs("/t.json", failed, sizeof(failed)), 0);
}

static void *make_same(void *path)
{
	char failed[PATH_MAX];

	return (void *)(intptr_t)rtr__path_make_dirs(path, failed, sizeof(failed));
}

static void many_threads_make_the_same_directories(void **state)
{
	(void)state;
	char path[PATH_MAX];
	pthread_t t[16];
	mode_t mode;

	snprintf(path, sizeof(path), "%s/x/y/z/w/t-%%r.json", base);
	for (int i = 0; i < 16; i++)
		assert_int_equal(pthread_create(&t[i], NULL, make_same, path), 0);
	for (int i = 0; i < 16; i++) {
		void *rc;
		assert_int_equal(pthread_join(t[i], &rc), 0);
		assert_int_equal((intptr_t)rc, 0);
	}
	snprintf(path, sizeof(path), "%s/x/y/z/w", base);
	assert_true(is_dir(path, &mode));
}

static void a_file_in_the_way_is_named(void **state)
{
	(void)state;
	char path[PATH_MAX], file[PATH_MAX], failed[PATH_MAX] = "";

	snprintf(file, sizeof(file), "%s/plain", base);
	int fd = open(file, O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(fd >= 0);
	close(fd);
	snprintf(path, sizeof(path), "%s/plain/sub/t.json", base);
	assert_int_equal(rtr__path_make_dirs(path, failed, sizeof(failed)), -ENOTDIR);
	assert_string_equal(failed, file);
}

/* A directory that cannot be made: one in a read-only directory (root may write
 * anywhere: then one in /sys, where nobody may make one). */
static void unwritable(char *path, size_t size, char *dir, size_t dir_size)
{
	if (geteuid() == 0) {
		snprintf(dir, dir_size, "/sys/ringtrace-test-%ld", (long)getpid());
	} else {
		snprintf(dir, dir_size, "%s/ro/sub", base);
		char ro[PATH_MAX];
		snprintf(ro, sizeof(ro), "%s/ro", base);
		assert_int_equal(mkdir(ro, 0555), 0);
	}
	assert_true((size_t)snprintf(path, size, "%s/deeper/t.json", dir) < size);
}

static void start_fails_naming_the_directory_it_cannot_make(void **state)
{
	(void)state;
	char path[PATH_MAX], dir[PATH_MAX], errfile[PATH_MAX];
	struct rtr_config cfg;

	unwritable(path, sizeof(path), dir, sizeof(dir));
	snprintf(errfile, sizeof(errfile), "%s/stderr.txt", base);
	fflush(stderr);
	int saved = dup(2), fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(saved >= 0 && fd >= 0);
	dup2(fd, 2);
	rtr_config_init(&cfg);
	cfg.path = path;
	int err = rtr_start(&cfg);
	/* the program runs on, untraced: its calls do nothing */
	rtr_begin("app", "work");
	rtr_end("app", "work");
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(fd);
	assert_true(err == -EACCES || err == -EPERM || err == -EROFS);
	char *said = tu_own(4096, 1);
	fd = open(errfile, O_RDONLY);
	assert_true(fd >= 0);
	assert_true(read(fd, said, 4095) > 0);
	close(fd);
	char want[PATH_MAX + 64];
	snprintf(want, sizeof(want), "ringtrace: cannot create the directory %s: ", dir);
	assert_non_null(strstr(said, want));
	struct stat st;
	assert_int_not_equal(stat(path, &st), 0);
}

static void start_makes_the_directories_and_records(void **state)
{
	(void)state;
	char path[PATH_MAX];
	struct rtr_config cfg;
	struct tt_trace t;

	snprintf(path, sizeof(path), "%s/run/%%h/%%R/t-%%p.json", base);
	rtr_config_init(&cfg);
	cfg.path = path;
	assert_int_equal(rtr_start(&cfg), 0);
	rtr_begin("app", "work");
	rtr_end("app", "work");
	assert_int_equal(rtr_stop(), 0);
	char host[256], file[PATH_MAX + 300];
	assert_int_equal(gethostname(host, sizeof(host)), 0);
	host[sizeof(host) - 1] = '\0';
	snprintf(file, sizeof(file), "%s/run/%s/000/t-%ld.json", base, host, (long)getpid());
	assert_int_equal(tt_load(file, 0, &t), 0);
	assert_true(t.complete);
	size_t work = 0;
	for (size_t i = 0; i < t.n; i++)
		work += t.ev[i].name != NULL && strcmp(t.ev[i].name, "work") == 0;
	assert_int_equal(work, 1);
	tt_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(escapes_expand),
		cmocka_unit_test(job_files_are_named_after_the_pattern),
		cmocka_unit_test_setup_teardown(nested_directories_are_made_with_the_umask, setup,
						teardown),
		cmocka_unit_test_setup_teardown(many_threads_make_the_same_directories, setup,
						teardown),
		cmocka_unit_test_setup_teardown(a_file_in_the_way_is_named, setup, teardown),
		cmocka_unit_test_setup_teardown(start_fails_naming_the_directory_it_cannot_make,
						setup, teardown),
		cmocka_unit_test_setup_teardown(start_makes_the_directories_and_records, setup,
						teardown),
	};
	return cmocka_run_group_tests_name("path", tests, NULL, NULL);
}
