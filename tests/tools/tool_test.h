/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the tool tests: run the `ringtrace` executable and capture what it
 * says, paths of test data and scratch files, whole-file reads and writes, and gzip
 * made and undone with zlib (independently of the tool's own code).
 *
 * Functions fail the running cmocka test when something they need fails. Not
 * thread-safe: for a test's main thread.
 */
#ifndef RTR_TESTS_TOOL_TEST_H
#define RTR_TESTS_TOOL_TEST_H

#include "test_util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* TT_SANITIZED: 1 when built with a sanitizer (slower, more memory). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TT_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TT_SANITIZED 1
#endif
#endif
#ifndef TT_SANITIZED
#define TT_SANITIZED 0
#endif

/* TT_TSAN: 1 under ThreadSanitizer, where the single-threaded tool gains nothing
 * from being run many times: the tests run it fewer times there. */
#if defined(__SANITIZE_THREAD__)
#define TT_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TT_TSAN 1
#endif
#endif
#ifndef TT_TSAN
#define TT_TSAN 0
#endif

struct tool_run {
	int status;	 /* exit status; 128 + the signal when killed */
	char *out, *err; /* what it wrote, NUL-terminated */
	size_t out_len;
	long maxrss_kib; /* peak resident memory */
};

/* The most arguments a run takes (a merge of a thousand files). */
#define TOOL_MAX_ARGS 1100

/*
 * Run `ringtrace ARGS...` (a NULL-terminated list) with standard input from in_path
 * (NULL: /dev/null) and standard output into a file, or into out_path when it is
 * not NULL (then r->out is empty). Waits for it.
 */
void tool_run_to(struct tool_run *r, const char *in_path, const char *out_path, ...)
	__attribute__((sentinel));

/* The same with the arguments in a NULL-terminated array. */
void tool_runv(struct tool_run *r, const char *in_path, const char *out_path,
	       const char *const *args);
#define tool_run(r, in_path, ...) tool_run_to(r, in_path, NULL, __VA_ARGS__)

void tool_run_free(struct tool_run *r);

/* Standard output of `MPIEXEC --allow-run-as-root --oversubscribe -np NP --timeout 60
 * ringtrace report --json --top 0 FILES` (files[0..n)), malloc'd; the test fails when
 * it does not exit 0. */
char *tool_mpirun_report(const char *mpiexec, int np, char (*files)[4200], int n);

/* A file of the test data (tests/tools/REL); the result lives until 8 more calls. */
const char *tool_data(const char *rel);

/* A scratch path in the build tree, unique to this process; removed first if there.
 * The result lives until 8 more calls. */
const char *tool_tmp(const char *name);

void tool_write(const char *path, const void *p, size_t len);

/* Does text hold needle? */
bool tool_has(const char *text, const char *needle);

/* Where a gzip member ends: in the text, and in the compressed bytes. */
struct gz_member {
	size_t text_end, gz_end;
};

/*
 * text compressed as gzip members, each ending at the end of a line once it holds
 * member_bytes (the recorder's layout). Returns the bytes (malloc'd), *out_len their
 * count; members (may be NULL; room for max) where each member ends, *count (may be
 * NULL) how many there are.
 */
unsigned char *tool_gzip(const void *text, size_t len, size_t member_bytes, size_t *out_len,
			 struct gz_member *members, size_t max, size_t *count);

/* A gzip file of one or more members, inflated; NUL-terminated. */
char *tool_gunzip(const char *path, size_t *len);

/* The files of the corpus of broken inputs (corpus/EXPECT), one path of up to 4200
 * bytes each, at most max (more fails the test). */
size_t tool_corpus_files(char paths[][4200], size_t max);

/* What a tool wrote at path from a broken input: exit 0 or 2 (naming the input), or
 * 1 with "not a trace" and nothing written; never a crash; whatever it wrote is a
 * strict JSON array (then removed). */
void tool_expect_strict_or_absent(const char *path, const struct tool_run *r, const char *input);

/* A growing text for generated inputs; free(p) when done. */
struct tool_text {
	char *p;
	size_t len, cap;
};

/* Append to t, printf-style. */
void tool_text_printf(struct tool_text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

struct tt_trace;

/* Load path with tests/support/trace_read.c, strictly: it must be complete JSON. */
void tool_load_strict(const char *path, struct tt_trace *t);

/* `ringtrace check path` exits 0 and finds nothing. */
void tool_expect_no_findings(const char *path);

#endif /* RTR_TESTS_TOOL_TEST_H */
