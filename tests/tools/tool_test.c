/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the tool tests (see tool_test.h).
 */
#include "tool_test.h"
#include "json_tree.h"
#include "trace_read.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

extern char **environ;

static char ring[8][4096];
static unsigned ring_next;

static char *next_slot(void)
{
	return ring[ring_next++ % 8];
}

const char *tool_data(const char *rel)
{
	char *p = next_slot();

	snprintf(p, sizeof(ring[0]), "%s/%s", RTR_TOOLS_TEST_DIR, rel);
	return p;
}

char *tool_mpirun_report(const char *mpiexec, int np, char (*files)[4200], int n)
{
	char cmd[40000], *out;
	const char *to = tool_tmp("mpirun-report.out");
	size_t len = (size_t)snprintf(cmd, sizeof(cmd),
				      "%s --allow-run-as-root --oversubscribe -np %d --timeout 60 "
				      "'%s' report --json --top 0",
				      mpiexec, np, RTR_TOOL_PATH);

	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(cmd + len, sizeof(cmd) - len, " '%s'", files[i]);
	snprintf(cmd + len, sizeof(cmd) - len, " > '%s'", to);
	assert_int_equal(system(cmd), 0);
	out = tu_read_file(to, NULL);
	assert_non_null(out);
	unlink(to);
	return out;
}

const char *tool_tmp(const char *name)
{
	char *p = next_slot();

	snprintf(p, sizeof(ring[0]), "%s/tools-%d-%s", RTR_TOOLS_TMP_DIR, (int)getpid(), name);
	unlink(p);
	return p;
}

void tool_write(const char *path, const void *p, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (f == NULL)
		fail_msg("cannot write %s: %s", path, strerror(errno));
	assert_int_equal(fwrite(p, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

bool tool_has(const char *text, const char *needle)
{
	return text != NULL && strstr(text, needle) != NULL;
}

void tool_runv(struct tool_run *r, const char *in_path, const char *out_path,
	       const char *const *args)
{
	char out_file[4096], err_file[4096];
	char *argv[TOOL_MAX_ARGS + 2];
	posix_spawn_file_actions_t fa;
	struct rusage ru;
	size_t n = 0;
	pid_t pid;
	int status, rc;

	memset(r, 0, sizeof(*r));
	snprintf(out_file, sizeof(out_file), "%s/tools-%d-run.out", RTR_TOOLS_TMP_DIR,
		 (int)getpid());
	snprintf(err_file, sizeof(err_file), "%s/tools-%d-run.err", RTR_TOOLS_TMP_DIR,
		 (int)getpid());
	argv[n++] = (char *)RTR_TOOL_PATH;
	for (; args[n - 1] != NULL; n++) {
		assert_true(n <= TOOL_MAX_ARGS);
		argv[n] = (char *)args[n - 1];
	}
	argv[n] = NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, in_path != NULL ? in_path : "/dev/null", O_RDONLY,
					 0);
	posix_spawn_file_actions_addopen(&fa, 1, out_path != NULL ? out_path : out_file,
					 O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_addopen(&fa, 2, err_file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	rc = posix_spawn(&pid, RTR_TOOL_PATH, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0)
		fail_msg("cannot run %s: %s", RTR_TOOL_PATH, strerror(rc));
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR)
			fail_msg("wait4: %s", strerror(errno));
	}
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	r->maxrss_kib = ru.ru_maxrss;
	r->out = out_path != NULL ? calloc(1, 1) : tu_read_file(out_file, &r->out_len);
	r->err = tu_read_file(err_file, NULL);
	unlink(out_file);
	unlink(err_file);
	if (r->status >= 128)
		fail_msg("ringtrace was killed by signal %d; stderr:\n%s", r->status - 128, r->err);
}

void tool_run_to(struct tool_run *r, const char *in_path, const char *out_path, ...)
{
	const char *args[64];
	size_t n = 0;
	va_list ap;

	va_start(ap, out_path);
	do {
		assert_true(n < 64);
		args[n] = va_arg(ap, const char *);
	} while (args[n++] != NULL);
	va_end(ap);
	tool_runv(r, in_path, out_path, args);
}

void tool_run_free(struct tool_run *r)
{
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof(*r));
}

unsigned char *tool_gzip(const void *text, size_t len, size_t member_bytes, size_t *out_len,
			 struct gz_member *members, size_t max, size_t *count_out)
{
	const char *t = text;
	size_t cap = len + len / 8 + 1024, n = 0, pos = 0, count = 0;
	unsigned char *out = malloc(cap);

	assert_non_null(out);
	while (pos < len) {
		size_t end = pos + member_bytes < len ? pos + member_bytes : len;
		z_stream zs;

		while (end < len && t[end - 1] != '\n')
			end++;
		memset(&zs, 0, sizeof(zs));
		assert_int_equal(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY),
				 Z_OK);
		zs.next_in = (Bytef *)(uintptr_t)(t + pos);
		zs.avail_in = (uInt)(end - pos);
		for (;;) {
			int ret;

			if (cap - n < 65536) {
				cap *= 2;
				out = realloc(out, cap);
				assert_non_null(out);
			}
			zs.next_out = out + n;
			zs.avail_out = (uInt)(cap - n);
			ret = deflate(&zs, Z_FINISH);
			n = cap - zs.avail_out;
			if (ret == Z_STREAM_END)
				break;
			assert_int_equal(ret, Z_OK);
		}
		deflateEnd(&zs);
		if (members != NULL && count < max) {
			members[count].text_end = end;
			members[count].gz_end = n;
		}
		count++;
		pos = end;
	}
	*out_len = n;
	if (count_out != NULL)
		*count_out = count;
	return out;
}

char *tool_gunzip(const char *path, size_t *len)
{
	size_t in_len, cap = 1 << 16, n = 0;
	unsigned char *in = (unsigned char *)tu_read_file(path, &in_len);
	char *out = malloc(cap + 1);
	z_stream zs;

	assert_non_null(out);
	memset(&zs, 0, sizeof(zs));
	assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = in;
	zs.avail_in = (uInt)in_len;
	for (int ret = Z_OK; zs.avail_in > 0 || ret != Z_STREAM_END;) {
		if (zs.avail_in == 0)
			fail_msg("%s: the last gzip member is cut short", path);

		if (cap - n < 4096) {
			cap *= 2;
			out = realloc(out, cap + 1);
			assert_non_null(out);
		}
		zs.next_out = (Bytef *)out + n;
		zs.avail_out = (uInt)(cap - n);
		ret = inflate(&zs, Z_NO_FLUSH);
		n = cap - zs.avail_out;
		if (ret == Z_STREAM_END)
			assert_int_equal(inflateReset(&zs), Z_OK);
		else if (ret != Z_OK)
			fail_msg("%s: not whole gzip (%d)", path, ret);
	}
	inflateEnd(&zs);
	free(in);
	out[n] = '\0';
	if (len != NULL)
		*len = n;
	return out;
}

/* The corpus of broken inputs (tests/tools/corpus/EXPECT), one path per call. */
size_t tool_corpus_files(char paths[][4200], size_t max)
{
	char *manifest = tu_read_file(tool_data("corpus/EXPECT"), NULL);
	size_t n = 0;

	for (char *save = NULL, *line = strtok_r(manifest, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		char name[256];

		if (line[0] == '#' || sscanf(line, "%255s", name) != 1)
			continue;
		assert_true(n < max);
		snprintf(paths[n++], 4200, "%s%s", tool_data("corpus/"), name);
	}
	free(manifest);
	return n;
}

/* What a tool wrote from a broken input: exit 0 or 2 (naming the input), or 1 with
 * "not a trace" and nothing written; never a crash; whatever it wrote is strict
 * JSON. */
void tool_expect_strict_or_absent(const char *path, const struct tool_run *r, const char *input)
{
	char what[8600], *text;
	yajl_val v;

	if (r->status == 1 && tool_has(r->err, input) && tool_has(r->err, "not a trace")) {
		/* JSON that is not a trace: said, and nothing written. */
		if (access(path, F_OK) == 0)
			fail_msg("%s: not a trace, but %s was written", input, path);
		return;
	}
	if (r->status != 0 && r->status != 2)
		fail_msg("%s: exit status %d\n%s", input, r->status, r->err);
	if (r->status == 2 && !tool_has(r->err, input) && !tool_has(r->err, "usage"))
		fail_msg("%s: exit 2 without naming the file:\n%s", input, r->err);
	if (access(path, F_OK) != 0) {
		if (r->status == 0)
			fail_msg("%s: exit 0 but nothing written", input);
		return;
	}
	text = tu_read_file(path, NULL);
	snprintf(what, sizeof(what), "%s: %s", input, path);
	v = jt_parse(text, what);
	assert_true(YAJL_IS_ARRAY(v));
	yajl_tree_free(v);
	free(text);
	unlink(path);
}

void tool_text_printf(struct tool_text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->p == NULL) {
		t->cap = 4096;
		t->p = malloc(t->cap);
		assert_non_null(t->p);
	}
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
		va_end(ap);
		assert_true(n >= 0);
		if ((size_t)n < t->cap - t->len)
			break;
		t->cap = t->cap * 2 + (size_t)n;
		t->p = realloc(t->p, t->cap);
		assert_non_null(t->p);
	}
	t->len += (size_t)n;
}

void tool_load_strict(const char *path, struct tt_trace *t)
{
	if (tt_load(path, TT_CHECK_ESCAPES, t) != 0)
		fail_msg("%s", t->error);
	assert_true(t->complete);
}

void tool_expect_no_findings(const char *path)
{
	struct tool_run r;

	tool_run(&r, NULL, "check", path, NULL);
	if (r.status != 0 || !tool_has(r.out, "no findings"))
		fail_msg("check %s: exit %d\n%s%s", path, r.status, r.out, r.err);
	tool_run_free(&r);
}
