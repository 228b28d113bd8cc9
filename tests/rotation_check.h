/* SPDX-License-Identifier: MIT */
/*
 * The checks that test_rotation.c and test_flight.c share: the files of a numbered
 * session (segments, snapshots) found by glob and removed at teardown, and a known
 * workload whose every event can be predicted, so that the events of the files can be
 * compared one by one with what was recorded.
 *
 * The workload, on one thread:
 *
 *	b request (id 7, {req:7})              open across everything
 *	B outer {run:42, tag:"long"}            open across everything
 *	for i in 0 .. n:
 *		B step {i}
 *		B inner
 *		i tick {i, now: rtr_now_ns()}
 *		C level {value: i}
 *		B leaf, E leaf
 *		E inner
 *		E step
 *	E outer
 *	e request
 *
 * In JSON each slice is one X, written where its E is: per iteration the file holds
 * i tick, C level, X leaf, X inner, X step.
 *
 * Header-only (static functions): each test executable includes it once.
 */
#ifndef RTR_TESTS_ROTATION_CHECK_H
#define RTR_TESTS_ROTATION_CHECK_H

#include <ringtrace.h>

#include "test_util.h"
#include "trace_read.h"

#include <fcntl.h>
#include <glob.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define WL_PER_ITER 8
#define WL_HEAD	    2 /* b request, B outer */
#define WL_TAIL	    2 /* E outer, e request */

/* Events the workload records for n iterations. */
static inline uint64_t wl_events(uint64_t n)
{
	return WL_HEAD + WL_PER_ITER * n + WL_TAIL;
}

/* Record iterations [from, to) of the loop. */
static inline void wl_iterations(uint64_t from, uint64_t to)
{
	for (uint64_t i = from; i < to; i++) {
		rtr_begin_v("app", "step", RTR_ARG_I64("i", i));
		rtr_begin("app", "inner");
		rtr_instant_v("app", "tick", RTR_ARG_I64("i", i), RTR_ARG_U64("now", rtr_now_ns()));
		rtr_counter_i64("app", "level", (int64_t)i);
		rtr_begin("app", "leaf");
		rtr_end("app", "leaf");
		rtr_end("app", "inner");
		rtr_end("app", "step");
	}
}

static inline void wl_head(void)
{
	const struct rtr_arg req = RTR_ARG_I64("req", 7);

	rtr_async_begin("app", "request", 7, &req, 1);
	rtr_begin_v("app", "outer", RTR_ARG_I64("run", 42), RTR_ARG_STR("tag", "long"));
}

static inline void wl_tail(void)
{
	rtr_end("app", "outer");
	rtr_async_end("app", "request", 7);
}

/* One predicted event: phase, name, the iteration (or -1). */
struct wl_want {
	char ph;
	const char *name;
	int64_t i;
};

static inline struct wl_want wl_item(uint64_t k, uint64_t n)
{
	static const struct {
		char ph;
		const char *name;
	} loop[WL_PER_ITER] = {{'B', "step"}, {'B', "inner"}, {'i', "tick"},  {'C', "level"},
			       {'B', "leaf"}, {'E', "leaf"},  {'E', "inner"}, {'E', "step"}};
	struct wl_want w = {0, NULL, -1};

	if (k == 0)
		return (struct wl_want){'b', "request", -1};
	if (k == 1)
		return (struct wl_want){'B', "outer", -1};
	k -= WL_HEAD;
	if (k < WL_PER_ITER * n) {
		w.ph = loop[k % WL_PER_ITER].ph;
		w.name = loop[k % WL_PER_ITER].name;
		w.i = (int64_t)(k / WL_PER_ITER);
		return w;
	}
	k -= WL_PER_ITER * n;
	assert_true(k < WL_TAIL);
	return k == 0 ? (struct wl_want){'E', "outer", -1} : (struct wl_want){'e', "request", -1};
}

static inline int flag_true(const struct tt_event *e, const char *key)
{
	const struct tt_arg *a = tt_arg(e, key);

	return a != NULL && a->type == TT_BOOL && a->b;
}

/* Whether e's args are exactly those of w, plus `flag`:true and `flag2`:true for those
 * that are not NULL. */
static inline int wl_args_match2(const struct tt_event *e, const struct wl_want *w,
				 const char *flag, const char *flag2)
{
	size_t n = 0;

	if (w->ph == 'b') {
		n = 1;
		if (tu_arg_int(e, "req") != 7)
			return 0;
	} else if (w->ph == 'B' && strcmp(w->name, "outer") == 0) {
		const struct tt_arg *tag = tt_arg(e, "tag");
		n = 2;
		if (tu_arg_int(e, "run") != 42 || tag == NULL || tag->type != TT_STRING ||
		    strcmp(tag->s, "long") != 0)
			return 0;
	} else if (w->ph == 'B' && strcmp(w->name, "step") == 0) {
		n = 1;
		if (tu_arg_int(e, "i") != w->i)
			return 0;
	} else if (w->ph == 'i') {
		n = 2;
		if (tu_arg_int(e, "i") != w->i || tt_arg(e, "now") == NULL)
			return 0;
	} else if (w->ph == 'C') {
		n = 1;
		if (tu_arg_int(e, "value") != w->i)
			return 0;
	}
	if (flag != NULL) {
		n++;
		if (!flag_true(e, flag))
			return 0;
	}
	if (flag2 != NULL) {
		n++;
		if (!flag_true(e, flag2))
			return 0;
	}
	return e->nargs == n;
}

/* Whether e's args are exactly those of w, plus `flag`:true when flag is not NULL. */
static inline int wl_args_match(const struct tt_event *e, const struct wl_want *w, const char *flag)
{
	return wl_args_match2(e, w, flag, NULL);
}

/* The files of a session: prefix is the path pattern up to the number, suffix after it
 * (".json", ".json.gz"). */
struct wl_files {
	char prefix[4096];
	const char *suffix;
};

static inline void wl_file(const struct wl_files *f, unsigned no, char *out, size_t size)
{
	int n = snprintf(out, size, "%s.%04u%s", f->prefix, no, f->suffix);

	assert_true(n > 0 && (size_t)n < size);
}

/* The number of files whose name begins with the prefix; with `names`, each of them must
 * be one of the numbered files [first, first + count) and all of them must be there. */
static inline size_t wl_glob_count(const struct wl_files *f, unsigned first, unsigned count,
				   int names)
{
	char pat[4200], want[4200];
	glob_t g;
	size_t n;

	snprintf(pat, sizeof(pat), "%s*", f->prefix);
	int rc = glob(pat, 0, NULL, &g);
	if (rc == GLOB_NOMATCH)
		return 0;
	assert_int_equal(rc, 0);
	n = g.gl_pathc;
	if (names) {
		for (size_t i = 0; i < n; i++) {
			int found = 0;
			for (unsigned k = first; k < first + count && !found; k++) {
				wl_file(f, k, want, sizeof(want));
				found = strcmp(g.gl_pathv[i], want) == 0;
			}
			if (!found) {
				globfree(&g);
				fail_msg("unexpected file %s (want %s.%04u .. %04u%s)",
					 g.gl_pathv[i], f->prefix, first, first + count - 1,
					 f->suffix);
			}
		}
		assert_int_equal(n, count);
	}
	globfree(&g);
	return n;
}

/* Remove every file whose name begins with the prefix (unless RTR_TEST_KEEP is set). */
static inline void wl_glob_remove(const struct wl_files *f)
{
	char pat[4200];
	glob_t g;

	if (f->prefix[0] == '\0' || getenv("RTR_TEST_KEEP") != NULL)
		return;
	snprintf(pat, sizeof(pat), "%s*", f->prefix);
	if (glob(pat, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++)
			unlink(g.gl_pathv[i]);
		globfree(&g);
	}
}

/* VmRSS of this process in KiB. */
static inline uint64_t wl_rss_kib(void)
{
	FILE *fp = fopen("/proc/self/status", "r");
	char line[256];
	unsigned long kib = 0;

	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp) != NULL)
		if (sscanf(line, "VmRSS: %lu kB", &kib) == 1)
			break;
	fclose(fp);
	return kib;
}

/* Run rtr_config_init() with stderr in a file; return what it wrote there. */
static inline void wl_config_init_capture(struct rtr_config *cfg, const char *group, char *err,
					  size_t size)
{
	char tmp[4096];

	tu_own_file(tmp, sizeof(tmp), group, "stderr", ".txt");
	fflush(stderr);
	int saved = dup(2), fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(saved >= 0 && fd >= 0);
	dup2(fd, 2);
	close(fd);
	rtr_config_init(cfg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	FILE *fp = fopen(tmp, "r");
	assert_non_null(fp);
	size_t n = fread(err, 1, size - 1, fp);
	err[n] = '\0';
	fclose(fp);
}

/* Every test: the files of its session (named by the test, removed at teardown),
 * and an alarm so that nothing hangs. */
#define WL_ALARM_S (TU_UNDER_SANITIZER ? 300 : 60)

static struct wl_files files;

static int wl_setup(void **state)
{
	(void)state;
	files.prefix[0] = '\0';
	alarm(WL_ALARM_S);
	return 0;
}

static int wl_teardown(void **state)
{
	tu_teardown(state);
	wl_glob_remove(&files);
	files.prefix[0] = '\0';
	alarm(0);
	return 0;
}

#endif /* RTR_TESTS_ROTATION_CHECK_H */
