/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the recorder's integration tests (test_recorder, test_stress,
 * test_threads, test_faults): sanitizer detection, the RTR_TEST_SCALE factor, trace
 * paths under RTR_TEST_TMPDIR, the heap blocks and files a test owns until its
 * teardown, starting the recorder, walking a trace with tt_foreach(), and tests run
 * once per I/O method (TU_IO_CASES). Forked children: child.h.
 *
 * Functions that check something fail the running cmocka test (fail_msg(), the
 * assert_* macros): call them from a test, or from a forked child that is ready to
 * die by cmocka's longjmp. The owned blocks and files are process-wide state of the
 * running test: not thread-safe, for the test's main thread only.
 */
#ifndef RTR_TESTS_TEST_UTIL_H
#define RTR_TESTS_TEST_UTIL_H

#include "trace_read.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* TU_UNDER_SANITIZER: 1 when built with AddressSanitizer or ThreadSanitizer, else 0. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TU_UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TU_UNDER_SANITIZER 1
#endif
#endif
#ifndef TU_UNDER_SANITIZER
#define TU_UNDER_SANITIZER 0
#endif

/* TU_UNDER_TSAN: 1 when built with ThreadSanitizer, else 0. */
#if defined(__SANITIZE_THREAD__)
#define TU_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TU_UNDER_TSAN 1
#endif
#endif
#ifndef TU_UNDER_TSAN
#define TU_UNDER_TSAN 0
#endif

/* TU_UNDER_ASAN: 1 when built with AddressSanitizer, else 0. */
#if defined(__SANITIZE_ADDRESS__)
#define TU_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TU_UNDER_ASAN 1
#endif
#endif
#ifndef TU_UNDER_ASAN
#define TU_UNDER_ASAN 0
#endif

/* tu_start(): keep the I/O method rtr_config_init() chose (RINGTRACE_IO or auto). */
#define TU_IO_DEFAULT (-1)

/*
 * In a tt_visit_fn: unless cond holds, write "line N: " and the printf-style message
 * into (w)->err, a char array, and return 1 (stop the walk). Pass the same err to
 * tu_walk(), which then fails the test with it.
 */
#define TU_WALK_CHECK(w, ev, cond, ...)                                                          \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			int k_ = snprintf((w)->err, sizeof((w)->err), "line %zu: ", (ev)->line); \
			snprintf((w)->err + k_, sizeof((w)->err) - (size_t)k_, __VA_ARGS__);     \
			return 1;                                                                \
		}                                                                                \
	} while (0)

/* n scaled by RTR_TEST_SCALE (a factor > 0; default 1, 0.25 under a sanitizer), at
 * least min. */
uint64_t tu_scaled(uint64_t n, uint64_t min);

/* CLOCK_MONOTONIC in ns: the system's clock, for a test's deadlines and for bounds
 * on the recorder's (rtr_now_ns()), which may be offset or run on the TSC. */
uint64_t tu_mono_ns(void);

/* The directory for test files: $RTR_TEST_TMPDIR, or /tmp when it is unset. */
const char *tu_tmpdir(void);

/* Write "<tu_tmpdir()>/<group>-<name>-<pid><ext>" into out (size bytes) and remove
 * any file already at that path. The caller removes the file. */
void tu_temp_path(char *out, size_t size, const char *group, const char *name, const char *ext);

/* tu_temp_path(), and the file belongs to the running test: tu_release() removes it.
 * At most 8 distinct paths per test; the same path again is not counted twice. */
void tu_own_file(char *out, size_t size, const char *group, const char *name, const char *ext);

/* n zeroed elements of size bytes that belong to the running test: tu_release()
 * frees them. At most 8 per test; never returns NULL (fails the test instead). */
void *tu_own(size_t n, size_t size);

/* Remove the running test's files (kept when RTR_TEST_KEEP is set, for a look) and
 * free its blocks. Safe to call when the test owns nothing. */
void tu_release(void);

/* A cmocka teardown: stop the recorder, then tu_release(). Every test that uses it
 * leaves the recorder stopped and its files and blocks freed, pass or fail (fail_msg()
 * jumps out of the test, maybe with the recorder still running). Returns 0. */
int tu_teardown(void **state);

/* Start the recorder on path with the given I/O method (or TU_IO_DEFAULT), on_full
 * policy and ring size, every other setting as rtr_config_init() gives it; fails the
 * test unless rtr_start() returns 0. */
void tu_start(const char *path, int io, int on_full, size_t ring_bytes);

/* Size in bytes of the file at path; fails the test if stat() fails. */
uint64_t tu_file_size(const char *path);

/* 1 when s is not NULL and equals want, else 0. */
int tu_is(const char *s, const char *want);

/* The integer arg key of e when it is there and fits int64_t, else INT64_MIN. */
int64_t tu_arg_int(const struct tt_event *e, const char *key);

/* tt_foreach(path, flags, fn, ctx): fails the test with "path: err" when the visitor
 * left a message in err (see TU_WALK_CHECK), or with the reader's error when the walk
 * failed otherwise. Returns the trace info; completeness is the caller's to check. */
struct tt_trace tu_walk(const char *path, int flags, tt_visit_fn fn, void *ctx, const char *err);

/* Run only the tests that match $RTR_TEST_FILTER (cmocka's filter syntax), when it is
 * set. Call before cmocka_run_group_tests*(). */
void tu_filter_from_env(void);

/* The events of a loaded trace other than its first and last (the markers) and the
 * M metadata, in file order, into out (at most max: more fails the test). */
size_t tu_events_of(const struct tt_trace *t, const struct tt_event **out, size_t max);

/* The trace's last event, which must be the end marker (else the test fails). */
const struct tt_event *tu_end_marker(const struct tt_trace *t);

/* Whether this process may set up an io_uring (a kernel or seccomp may refuse). */
int tu_io_uring_works(void);

/*
 * One test body, run once per I/O method: TU_IO_CASES(f, setup, teardown) in a
 * CMUnitTest array registers f twice, as "f_with_io_uring" and "f_with_write", with
 * the method (RTR_IO_URING, RTR_IO_SYNC) as its prestate: cmocka hands it to the
 * setup in *state or, without a setup, to the test. Read it with tu_io_of(), and call
 * tu_skip_unless_io_works() in the test before the method is used.
 */
/* clang-format off */
#define TU_IO_CASES(f, setup, teardown)                                               \
	{#f "_with_io_uring", f, setup, teardown, (void *)&tu_io_methods[0]},         \
	{#f "_with_write", f, setup, teardown, (void *)&tu_io_methods[1]}
/* clang-format on */
extern const int tu_io_methods[2];

/* The method a TU_IO_CASES case runs with, from its prestate. */
int tu_io_of(const void *prestate);

/* skip() the running test when io is RTR_IO_URING and this process cannot set one
 * up (old kernel, seccomp, io_uring_disabled), saying so. */
void tu_skip_unless_io_works(int io);

/*
 * A page that faults when first touched, to run code at a chosen point inside a
 * library call: an event call that copies an argument array from the page faults
 * inside its reserved window. The SIGSEGV handler calls on_fault() on the faulting
 * thread, then makes the page readable and writable, copies the len bytes at fill to
 * its start (zeros after them) and returns, so the access goes on. One trap at a time; a fault
 * elsewhere crashes as usual. Under AddressSanitizer the test must let its own handler run: define
 * __asan_default_options() to return TU_ASAN_OWN_SEGV.
 */
#define TU_ASAN_OWN_SEGV "allow_user_segv_handler=1:handle_segv=0"
/* Arm the trap; returns the page (fails the test if it cannot). */
void *tu_trap_arm(void (*on_fault)(void), const void *fill, size_t len);
/* Faults taken since tu_trap_arm(). */
int tu_trap_hits(void);
/* Restore the SIGSEGV handler and unmap the page. */
void tu_trap_disarm(void);

/* The whole file (a pipe too), NUL-terminated; *len (may be NULL) gets its length.
 * Fails the test when it cannot be read. */
char *tu_read_file(const char *path, size_t *len);

#endif /* RTR_TESTS_TEST_UTIL_H */
