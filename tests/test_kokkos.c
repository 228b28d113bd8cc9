/* SPDX-License-Identifier: MIT */
/*
 * The Kokkos tool, called as Kokkos calls it: first by tests/progs/kokkos_client.c,
 * which looks its callbacks up and calls them as a newer Kokkos would, with what
 * Kokkos never passes too (ends of ids never handed out, ends out of order, names at
 * one address that change, more open kernels than the tool tracks); always built.
 * Then under a real Kokkos program: tests/progs/kokkos_prog.cpp, built
 * against Debian's Kokkos (3.4, Serial), runs with KOKKOS_PROFILE_LIBRARY naming
 * libringtrace-kokkos.so and nothing else of ringtrace set (the tool starts the
 * recorder), or under `ringtrace record --kokkos`. Every event of category "kokkos"
 * in its trace is accounted for: each kernel, fence, region and deep copy with its
 * name, arguments, thread and nesting, as many as the program made; the deep copy
 * counter's values; the section's async spans; the instants; the program's
 * allocations. Then what finalize, and an exit without it, end: a region, a fence and
 * a section the program left open. And the same slices in Perfetto's format. The
 * program's cases are skipped where Debian's Kokkos was not found.
 */
#include "child.h"
#include "pf_read.h"
#include "test_util.h"

#include "kokkos/kokkos_names.h"
#include "writer/args.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

/* As in tests/progs/kokkos_prog.cpp. */
#define N	     1000
#define M	     250
#define STEPS	     3
#define SECTION_RUNS 2
#define DEVICE_ID    ((2u << 24) | 5u)

/* The program's own events of category "kokkos", Kokkos' metadata left out: 29
 * slices, 4 counter samples, 4 async events and 4 instants. */
#define PROGRAM_EVENTS 41

enum how { BY_ENV, BY_RECORD, BY_CLIENT };

static void run_prog(const char *mode, enum how how, const char *path)
{
	pid_t pid = tu_fork();
	if (pid == 0) {
		unsetenv("RINGTRACE_AUTOSTART");
		unsetenv("KOKKOS_TOOLS_LIBS");
		unsetenv("KOKKOS_PROFILE_LIBRARY");
		setenv("RINGTRACE_FILE", path, 1);
		if (how == BY_CLIENT) {
			setenv("KOKKOS_TOOLS_LIBS", RTR_TEST_LIBKOKKOS, 1);
			execl(RTR_TEST_KOKKOS_CLIENT, RTR_TEST_KOKKOS_CLIENT, mode, (char *)NULL);
		}
#if defined(RTR_TEST_KOKKOS_PROG)
		if (how == BY_ENV) {
			setenv("KOKKOS_PROFILE_LIBRARY", RTR_TEST_LIBKOKKOS, 1);
			execl(RTR_TEST_KOKKOS_PROG, RTR_TEST_KOKKOS_PROG, mode, (char *)NULL);
		} else {
			execl(RTR_TOOL, RTR_TOOL, "record", "-o", path, "--kokkos", "--",
			      RTR_TEST_KOKKOS_PROG, mode, (char *)NULL);
		}
#endif
		_exit(127);
	}
	tu_expect_exit_0(tu_wait_child(pid, TU_CHILD_TIMEOUT_S));
}

static void load(const char *mode, enum how how, struct tt_trace *t)
{
	char path[512];

	tu_own_file(path, sizeof(path), "kokkos", mode, ".json");
	run_prog(mode, how, path);
	if (tt_load(path, TT_CHECK_ESCAPES, t) != 0)
		fail_msg("%s", t->error);
	assert_true(t->complete);
	assert_int_equal(tu_arg_int(tu_end_marker(t), "dropped"), 0);
}

static int by_ts(const void *a, const void *b)
{
	const struct tt_event *x = *(const struct tt_event *const *)a;
	const struct tt_event *y = *(const struct tt_event *const *)b;
	return (x->ts_ns > y->ts_ns) - (x->ts_ns < y->ts_ns);
}

/* The events of category "kokkos" with phase ph and name `name`, by time, into out;
 * their number. */
static size_t events(const struct tt_trace *t, const char *ph, const char *name,
		     const struct tt_event **out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct tt_event *e = &t->ev[i];
		if (!tu_is(e->cat, "kokkos") || !tu_is(e->ph, ph) || !tu_is(e->name, name))
			continue;
		assert_true(n < max);
		out[n++] = e;
	}
	qsort(out, n, sizeof(out[0]), by_ts);
	return n;
}

/* The one slice named name; it is on tid. */
static const struct tt_event *slice(const struct tt_trace *t, const char *name, int64_t tid)
{
	const struct tt_event *e[2];
	if (events(t, "X", name, e, 2) != 1)
		fail_msg("not one slice %s", name);
	assert_int_equal(e[0]->tid, tid);
	return e[0];
}

static void assert_inside(const struct tt_event *in, const struct tt_event *out)
{
	if (in->tid != out->tid || in->ts_ns < out->ts_ns ||
	    in->ts_ns + in->dur_ns > out->ts_ns + out->dur_ns)
		fail_msg("%s (line %zu) is not inside %s (line %zu)", in->name, in->line, out->name,
			 out->line);
}

static const char *str_arg(const struct tt_event *e, const char *key)
{
	const struct tt_arg *a = tt_arg(e, key);
	if (a == NULL || a->type != TT_STRING)
		fail_msg("%s (line %zu): no string argument %s", e->name, e->line, key);
	return a->s;
}

/* A kernel's or a fence's three arguments. */
static void assert_span_args(const struct tt_event *e, const char *kind, const char *device,
			     int64_t device_id)
{
	assert_int_equal(e->nargs, 3);
	assert_string_equal(str_arg(e, "kind"), kind);
	assert_string_equal(str_arg(e, "device"), device);
	assert_int_equal(tu_arg_int(e, "device_id"), device_id);
}

/* Every event of category "kokkos" but Kokkos' own metadata. */
static size_t kokkos_events(const struct tt_trace *t)
{
	size_t n = 0;
	for (size_t i = 0; i < t->n; i++)
		n += tu_is(t->ev[i].cat, "kokkos") && !tu_is(t->ev[i].name, "kokkos metadata");
	return n;
}

/* As in tests/progs/kokkos_client.c. */
#define K4_DEVICE_ID ((2u << 24) | (1u << 17) | 3u)
#define ALPHA_BETA   3
#define OPEN_MAX     32
#define FILL_KERNELS 4000

/* The client's events of category "kokkos". */
#define CLIENT_EVENTS (1 + 1 + 2 * ALPHA_BETA + 1 + 1 + 1 + 2 + OPEN_MAX + 2 + 4)

static void kernels_of_a_newer_kokkos_and_what_kokkos_never_passes(void **state)
{
	struct tt_trace t = {0};
	const struct tt_event *e[64], *fa, *fb;
	char long_name[1025];
	(void)state;

	load("client", BY_CLIENT, &t);
	int64_t main_tid = t.ev[0].tid;
	assert_int_equal(events(&t, "i", "kokkos init", e, 64), 1);
	assert_int_equal(tu_arg_int(e[0], "interface_version"), 20240906);
	assert_int_equal(tu_arg_int(e[0], "devices"), 1);
	assert_span_args(slice(&t, "k4", main_tid), "parallel_reduce", "Cuda", K4_DEVICE_ID);
	/* one buffer, two names: each kernel has the name it had when it began */
	assert_int_equal(events(&t, "X", "alpha", e, 64), ALPHA_BETA + 1);
	size_t others = 0;
	for (size_t i = 0; i <= ALPHA_BETA; i++) {
		assert_span_args(e[i], "parallel_for", "Serial", 0);
		others += e[i]->tid != main_tid;
	}
	assert_int_equal(others, 1); /* the second thread's */
	assert_int_equal(events(&t, "X", "beta", e, 64), ALPHA_BETA);
	assert_span_args(slice(&t, "", main_tid), "parallel_for", "Serial", 0);
	memset(long_name, 'x', 1024);
	long_name[1024] = '\0';
	slice(&t, long_name, main_tid);
	/* fb, begun inside fa, ends with it */
	fa = slice(&t, "fa", main_tid);
	fb = slice(&t, "fb", main_tid);
	assert_span_args(fb, "fence", "Serial", 0);
	assert_inside(fb, fa);
	assert_int_equal(fb->ts_ns + fb->dur_ns, fa->ts_ns + fa->dur_ns);
	/* the innermost of OPEN_MAX + 1 is not recorded; the others nest */
	assert_int_equal(events(&t, "X", "deep", e, 64), OPEN_MAX);
	for (int i = 1; i < OPEN_MAX; i++)
		assert_inside(e[i], e[i - 1]);
	/* sections: s1 once; s2 twice, the second ended at finalize */
	assert_int_equal(events(&t, "b", "s1", e, 64), 1);
	assert_int_equal(events(&t, "e", "s1", e + 1, 63), 1);
	assert_string_equal(e[0]->id, e[1]->id);
	assert_int_equal(events(&t, "b", "s2", e, 64), 2);
	assert_int_equal(events(&t, "e", "s2", e + 2, 62), 2);
	for (int i = 1; i < 4; i++)
		assert_string_equal(e[i]->id, e[0]->id);
	assert_true(e[1]->ts_ns >= e[2]->ts_ns); /* started again after its stop */
	assert_int_equal(kokkos_events(&t), CLIENT_EVENTS);
	tt_free(&t);
}

/* When the tool's names are full: names known before keep theirs, a new kernel is
 * named by the full table (and has no arguments), a new region's name is copied, a
 * new metadata key is an argument of its own. */
static void names_past_a_full_table(void **state)
{
	struct tt_trace t = {0};
	const struct tt_event *e[8];
	size_t named = 0, unnamed = 0;
	(void)state;

	load("full-names", BY_CLIENT, &t);
	int64_t main_tid = t.ev[0].tid;
	assert_int_equal(events(&t, "X", "alpha", e, 8), 2);
	for (size_t i = 0; i < t.n; i++) {
		const struct tt_event *k = &t.ev[i];
		if (!tu_is(k->ph, "X") || k->tid != main_tid)
			continue;
		if (tu_is(k->name, "(kokkos: name table full)")) {
			assert_int_equal(k->nargs, 0);
			unnamed++;
		} else if (k->name != NULL && k->name[0] == 'k' && strlen(k->name) == 1024) {
			assert_span_args(k, "parallel_for", "Serial", 0);
			assert_int_equal(atoi(k->name + 1), named); /* in order, none missing */
			named++;
		}
	}
	/* the fill's kernels past the full table, and "new" */
	assert_true(named > 0 && unnamed >= 2);
	assert_int_equal(named + unnamed, FILL_KERNELS + 1);
	assert_int_equal(slice(&t, "region after full", main_tid)->nargs, 0);
	assert_int_equal(events(&t, "i", "kokkos metadata", e, 8), 1);
	assert_int_equal(e[0]->nargs, 2);
	assert_string_equal(str_arg(e[0], "key"), "new key");
	assert_string_equal(str_arg(e[0], "value"), "v");
	assert_int_equal(kokkos_events(&t), 1 + 2 + FILL_KERNELS + 1 + 1);
	tt_free(&t);
}

/* A kernel's interned site: one per name, kind and device id, its name the name's
 * text, its three arguments encoded in it as the writer reads them (writer/args.h).
 * Returns the entries it added to the table. */
static size_t kernels_are_interned_per_kind_and_device(void)
{
	char a[32];
	const char *key;

	snprintf(a, sizeof(a), "gemm");
	const struct rtr__kokkos_site *k = rtr__kokkos_site(a, RTR_KOKKOS_SCAN, K4_DEVICE_ID);
	assert_non_null(k);
	assert_ptr_equal(rtr__kokkos_site("gemm", RTR_KOKKOS_SCAN, K4_DEVICE_ID), k);
	assert_true(rtr__kokkos_site("gemm", RTR_KOKKOS_FOR, K4_DEVICE_ID) != k);
	assert_true(rtr__kokkos_site("gemm", RTR_KOKKOS_SCAN, 0) != k);
	assert_true(&rtr__kokkos_intern("gemm")->name != &k->sa.site.name);
	assert_string_equal(k->sa.site.name, "gemm");
	assert_string_equal(k->sa.site.cat, "kokkos");
	assert_int_equal(k->kind, RTR_KOKKOS_SCAN);
	assert_int_equal(k->device_id, K4_DEVICE_ID);
	struct rtr__args args = {k->sa.args, k->sa.nargs, k->sa.len};
	assert_int_equal(args.n, 3);
	assert_int_equal(args.len, 3 * RTR__EXT_ARG);
	assert_int_equal(args.types[0], RTR_ARG_TYPE_STR);
	assert_int_equal(args.types[2], RTR_ARG_TYPE_U64);
	assert_string_equal((const char *)(uintptr_t)rtr__args_get(&args, 0, &key),
			    "parallel_scan");
	assert_string_equal(key, "kind");
	assert_string_equal((const char *)(uintptr_t)rtr__args_get(&args, 1, &key), "Cuda");
	assert_string_equal(key, "device");
	assert_int_equal(rtr__args_get(&args, 2, &key), K4_DEVICE_ID);
	assert_string_equal(key, "device_id");
	assert_int_equal(rtr__kokkos_site("gemm", RTR_KOKKOS_NAME, 0)->sa.nargs, 0);
	/* a name of continuation bytes only, with a device id whose last byte would be
	 * one too: the name cut to nothing, the key kept whole */
	char bad[RTR_KOKKOS_MAX_NAME + 2];
	memset(bad, 0x80, sizeof(bad) - 1);
	bad[sizeof(bad) - 1] = '\0';
	k = rtr__kokkos_site(bad, RTR_KOKKOS_FENCE, 0x80000007u);
	assert_non_null(k);
	assert_string_equal(k->sa.site.name, "");
	assert_int_equal(k->kind, RTR_KOKKOS_FENCE);
	assert_int_equal(k->device_id, 0x80000007u);
	assert_ptr_equal(rtr__kokkos_site("", RTR_KOKKOS_FENCE, 0x80000007u), k);
	return 5; /* gemm as three kernels and a name, "" as a fence */
}

/* The names themselves (src/kokkos/kokkos_names.c, built into this test): one site per
 * text, NULL as "", a long name cut at a character boundary, kernels' sites, and a
 * bound on the names the table holds. */
static void names_are_interned_once_each(void **state)
{
	char a[32], b[32], big[RTR_KOKKOS_MAX_NAME + 8];
	(void)state;

	snprintf(a, sizeof(a), "axpy");
	snprintf(b, sizeof(b), "axpy");
	const struct rtr_site *s = rtr__kokkos_intern(a);
	assert_non_null(s);
	assert_ptr_equal(rtr__kokkos_intern(b), s);
	assert_string_equal(s->name, "axpy");
	assert_ptr_equal(s->cat, rtr__kokkos_cat);
	assert_string_equal(s->cat, "kokkos");
	assert_true(rtr__kokkos_intern("axpz") != s);
	assert_ptr_equal(rtr__kokkos_intern(NULL), rtr__kokkos_intern(""));
	/* a two-byte character across byte 1024: cut before it */
	memset(big, 'x', sizeof(big));
	big[RTR_KOKKOS_MAX_NAME - 1] = (char)0xc3;
	big[RTR_KOKKOS_MAX_NAME] = (char)0xa9;
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(strlen(rtr__kokkos_intern(big)->name), RTR_KOKKOS_MAX_NAME - 1);
	/* three quarters of the slots, then no new name; the known ones still */
	size_t n = 4; /* axpy, axpz, "", the long one */
	n += kernels_are_interned_per_kind_and_device();
	for (uint32_t i = 0; i < RTR_KOKKOS_NAME_SLOTS; i++) {
		char name[16];
		snprintf(name, sizeof(name), "n%u", i);
		if (rtr__kokkos_intern(name) == NULL)
			break;
		n++;
	}
	assert_int_equal(n, RTR_KOKKOS_NAME_SLOTS / 4 * 3);
	assert_null(rtr__kokkos_intern("one more"));
	assert_ptr_equal(rtr__kokkos_intern("axpy"), s);
}

#if defined(RTR_TEST_KOKKOS_PROG)

/* The kernels named name (kind), one inside each of the slices in[0 .. n). */
static void assert_kernels(const struct tt_trace *t, const char *name, const char *kind,
			   const struct tt_event *const *in, size_t n)
{
	const struct tt_event *e[8];
	assert_int_equal(events(t, "X", name, e, 8), n);
	for (size_t i = 0; i < n; i++) {
		assert_span_args(e[i], kind, "Serial", 0);
		assert_inside(e[i], in[i]);
	}
}

/* The regions, kernels and fences of the program's main part, on tid. */
static void check_slices(const struct tt_trace *t, int64_t tid)
{
	const struct tt_event *step[8], *outer = slice(t, "outer", tid);
	const struct tt_event *copies = slice(t, "copies", tid);

	assert_int_equal(events(t, "X", "step", step, 8), STEPS);
	for (int i = 0; i < STEPS; i++) {
		assert_inside(step[i], outer);
		assert_int_equal(step[i]->nargs, 0);
	}
	assert_inside(copies, outer);
	assert_true(copies->ts_ns >= step[STEPS - 1]->ts_ns + step[STEPS - 1]->dur_ns);
	assert_int_equal(outer->nargs, 0);
	assert_kernels(t, "fill", "parallel_for", step, STEPS);
	assert_kernels(t, "sum", "parallel_reduce", step, STEPS);
	assert_kernels(t, "prefix", "parallel_scan", step, STEPS);
	static const char *const views[] = {"a", "b", "c", "d"};
	for (int i = 0; i < 4; i++) {
		char name[64];
		snprintf(name, sizeof(name), "Kokkos::View::initialization [%s]", views[i]);
		const struct tt_event *init = slice(t, name, tid);
		assert_span_args(init, "parallel_for", "Serial", 0);
		assert_true(init->ts_ns + init->dur_ns <= outer->ts_ns);
	}
	const struct tt_event *fence = slice(t, "rt fence", tid);
	assert_span_args(fence, "fence", "Serial", 0);
	assert_true(fence->ts_ns >= outer->ts_ns + outer->dur_ns);
	assert_span_args(slice(t, "rt device fence", tid), "fence", "Cuda", DEVICE_ID);
}

/* The deep copies inside "copies", their counter, and the fill kernel of the last. */
static void check_copies(const struct tt_trace *t, int64_t tid)
{
	static const struct {
		const char *dst, *src;
		int64_t bytes;
	} want[] = {
		{"b", "a", 8 * N}, {"d", "c", 4 * M}, {"b", "a", 8 * N}, {"a", "Scalar", 8 * N}};
	const struct tt_event *copy[8], *sample[8];
	const struct tt_event *copies = slice(t, "copies", tid);
	int64_t total = 0;

	assert_int_equal(events(t, "X", "deep copy", copy, 8), 4);
	assert_int_equal(events(t, "C", "kokkos deep copy bytes", sample, 8), 4);
	for (int i = 0; i < 4; i++) {
		assert_inside(copy[i], copies);
		assert_int_equal(copy[i]->nargs, 5);
		assert_string_equal(str_arg(copy[i], "dst_space"), "Host");
		assert_string_equal(str_arg(copy[i], "dst"), want[i].dst);
		assert_string_equal(str_arg(copy[i], "src_space"), "Host");
		assert_string_equal(str_arg(copy[i], "src"), want[i].src);
		assert_int_equal(tu_arg_int(copy[i], "bytes"), want[i].bytes);
		total += want[i].bytes;
		assert_int_equal(sample[i]->nargs, 1);
		assert_int_equal(sample[i]->args[0].i, total);
		assert_true(sample[i]->ts_ns <= copy[i]->ts_ns); /* sampled as it begins */
		assert_true(i == 0 || sample[i]->ts_ns >= copy[i - 1]->ts_ns + copy[i - 1]->dur_ns);
	}
	const struct tt_event *fill = slice(t, "Kokkos::ViewFill-1D", tid);
	assert_span_args(fill, "parallel_for", "Serial", 0);
	assert_inside(fill, copy[3]);
}

/* The section's spans, with the kernels run inside them; the instants. */
static void check_sections_and_instants(const struct tt_trace *t, int64_t tid)
{
	const struct tt_event *b[4], *e[4], *in[4], *one[4];

	assert_int_equal(events(t, "b", "rt section", b, 4), SECTION_RUNS);
	assert_int_equal(events(t, "e", "rt section", e, 4), SECTION_RUNS);
	assert_int_equal(events(t, "X", "in section", in, 4), SECTION_RUNS);
	for (int i = 0; i < SECTION_RUNS; i++) {
		assert_non_null(b[i]->id);
		assert_string_equal(b[i]->id, b[0]->id); /* one section: one id */
		assert_string_equal(e[i]->id, b[0]->id);
		assert_true(b[i]->ts_ns <= in[i]->ts_ns);
		assert_true(in[i]->ts_ns + in[i]->dur_ns <= e[i]->ts_ns);
		assert_true(i == 0 || b[i]->ts_ns >= e[i - 1]->ts_ns);
		assert_span_args(in[i], "parallel_for", "Serial", 0);
		assert_int_equal(in[i]->tid, tid);
	}
	assert_int_equal(events(t, "i", "kokkos init", one, 4), 1);
	assert_int_equal(tu_arg_int(one[0], "interface_version"), 20210225);
	assert_int_equal(tu_arg_int(one[0], "load_sequence"), 0);
	assert_int_equal(tu_arg_int(one[0], "devices"), 0);
	assert_int_equal(events(t, "i", "rt event", one, 4), 1);
	assert_int_equal(one[0]->nargs, 0);
	assert_int_equal(events(t, "i", "dual view sync", one, 4), 1);
	assert_string_equal(str_arg(one[0], "view"), "dv");
	assert_true(tt_arg(one[0], "device")->type == TT_BOOL && tt_arg(one[0], "device")->b);
	assert_int_equal(events(t, "i", "dual view modify", one, 4), 1);
	assert_string_equal(str_arg(one[0], "view"), "dv");
	assert_true(tt_arg(one[0], "device")->type == TT_BOOL && !tt_arg(one[0], "device")->b);

	/* metadata: the program's two keys once each, and Kokkos' own */
	size_t n = 0, ours = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct tt_event *m = &t->ev[i];
		if (!tu_is(m->name, "kokkos metadata"))
			continue;
		assert_string_equal(m->ph, "i");
		assert_int_equal(m->nargs, 1);
		assert_int_equal(m->args[0].type, TT_STRING);
		if (tu_is(m->args[0].key, "ringtrace test"))
			ours += tu_is(m->args[0].s, "kokkos_prog");
		if (tu_is(m->args[0].key, "quoted"))
			ours += tu_is(m->args[0].s, "say \"hi\"");
		if (tu_is(m->args[0].key, "Kokkos Version"))
			assert_string_equal(m->args[0].s, "3.4.1");
		n++;
	}
	assert_int_equal(ours, 2);
	assert_true(n > 2);
}

/* The second thread's region and fence. */
static void check_worker(const struct tt_trace *t, int64_t main_tid)
{
	const struct tt_event *region[2], *fence[2];

	assert_int_equal(events(t, "X", "worker region", region, 2), 1);
	assert_int_equal(events(t, "X", "worker fence", fence, 2), 1);
	assert_true(region[0]->tid != main_tid);
	assert_inside(fence[0], region[0]);
	assert_span_args(fence[0], "fence", "Serial", 0);
}

/* The program's views: allocated and freed in host memory, each once (Kokkos' own
 * scratch memory besides). */
static void check_memory(const struct tt_trace *t)
{
	const struct tt_event *alloc[16];
	size_t nalloc = 0, doubles = 0, ints = 0, frees = 0;

	for (size_t i = 0; i < t->n; i++) {
		const struct tt_event *e = &t->ev[i];
		if (!tu_is(e->cat, "memory"))
			continue;
		assert_int_equal(tu_arg_int(e, "device"), -1);
		int64_t bytes = tu_arg_int(e, "bytes");
		if (tu_is(e->name, "alloc") && (bytes == 8 * N || bytes == 4 * M)) {
			doubles += bytes == 8 * N;
			ints += bytes == 4 * M;
			assert_true(nalloc < 16);
			alloc[nalloc++] = e;
		} else if (tu_is(e->name, "free")) {
			size_t k = 0;
			while (k < nalloc && !tu_is(str_arg(alloc[k], "addr"), str_arg(e, "addr")))
				k++;
			assert_true(k < nalloc);
			assert_int_equal(tu_arg_int(alloc[k], "bytes"), bytes);
			frees++;
		}
	}
	assert_int_equal(doubles, 2);
	assert_int_equal(ints, 2);
	assert_int_equal(frees, 4);
}

/* Every check of the program's events; returns their number. */
static size_t check_program(const struct tt_trace *t)
{
	int64_t main_tid = t->ev[0].tid; /* the start marker's: the tool starts it there */

	check_slices(t, main_tid);
	check_copies(t, main_tid);
	check_sections_and_instants(t, main_tid);
	check_worker(t, main_tid);
	check_memory(t);
	return PROGRAM_EVENTS;
}

static void kernels_regions_and_copies_are_slices_with_their_arguments(void **state)
{
	struct tt_trace t = {0};
	(void)state;

	load("full", BY_ENV, &t);
	assert_int_equal(kokkos_events(&t), check_program(&t));
	tt_free(&t);
}

static void ringtrace_record_kokkos_loads_the_tool(void **state)
{
	struct tt_trace t = {0};
	(void)state;

	load("full", BY_RECORD, &t);
	assert_int_equal(kokkos_events(&t), check_program(&t));
	tt_free(&t);
}

/* The region, fence and section the program left open: ended, the fence inside the
 * region, before the end marker. */
static size_t check_left_open(const struct tt_trace *t)
{
	int64_t main_tid = t->ev[0].tid;
	const struct tt_event *region = slice(t, "left open", main_tid);
	const struct tt_event *fence = slice(t, "open fence", main_tid), *b[2], *e[2];

	assert_int_equal(region->nargs, 0);
	assert_span_args(fence, "fence", "Serial", 0);
	assert_inside(fence, region);
	assert_int_equal(events(t, "b", "open section", b, 2), 1);
	assert_int_equal(events(t, "e", "open section", e, 2), 1);
	assert_string_equal(b[0]->id, e[0]->id);
	assert_true(e[0]->ts_ns >= b[0]->ts_ns);
	assert_true(region->ts_ns + region->dur_ns <= tu_end_marker(t)->ts_ns);
	assert_true(e[0]->ts_ns <= tu_end_marker(t)->ts_ns);
	return 4;
}

static void finalize_ends_what_is_still_open(void **state)
{
	struct tt_trace t = {0};
	(void)state;

	load("unfinished", BY_ENV, &t);
	assert_int_equal(kokkos_events(&t), check_program(&t) + check_left_open(&t));
	tt_free(&t);
}

static void an_exit_without_finalize_ends_what_is_still_open(void **state)
{
	struct tt_trace t = {0};
	(void)state;

	load("no-finalize", BY_ENV, &t);
	assert_int_equal(kokkos_events(&t), check_program(&t) + check_left_open(&t));
	tt_free(&t);
}

/* The BEGIN events of category "kokkos" named name, each with a kernel's arguments. */
static size_t pf_kernels(const struct pf_trace *t, const char *name, const char *kind,
			 const char *device)
{
	size_t n = 0;
	for (size_t i = 0; i < t->nevents; i++) {
		const struct pf_event *e = &t->events[i];
		if (e->type != 1 || strcmp(e->cat, "kokkos") != 0 || strcmp(e->name, name) != 0)
			continue;
		const struct pf_ann *k = pf_ann(e, "kind"), *d = pf_ann(e, "device");
		assert_non_null(k);
		assert_non_null(d);
		assert_string_equal(k->s, kind);
		assert_string_equal(d->s, device);
		assert_non_null(pf_ann(e, "device_id"));
		n++;
	}
	return n;
}

static void perfetto_output_has_the_same_slices(void **state)
{
	struct pf_trace t = {0};
	char path[512];
	(void)state;

	tu_own_file(path, sizeof(path), "kokkos", "full", ".pftrace");
	run_prog("full", BY_ENV, path);
	if (pf_read(path, &t, 0) != 0)
		fail_msg("%s", t.error);
	assert_int_equal(pf_kernels(&t, "fill", "parallel_for", "Serial"), STEPS);
	assert_int_equal(pf_kernels(&t, "sum", "parallel_reduce", "Serial"), STEPS);
	assert_int_equal(pf_kernels(&t, "prefix", "parallel_scan", "Serial"), STEPS);
	assert_int_equal(pf_kernels(&t, "rt device fence", "fence", "Cuda"), 1);
	size_t begins = 0, ends = 0;
	for (size_t i = 0; i < t.nevents; i++) {
		begins += t.events[i].type == 1 && strcmp(t.events[i].cat, "kokkos") == 0;
		ends += t.events[i].type == 2;
	}
	assert_int_equal(begins, 29 + SECTION_RUNS); /* the slices, and the section's spans */
	assert_int_equal(ends, begins);
	pf_free(&t);
}

#else /* no Kokkos found: the program's cases are skipped */

#define SKIPPED(name)                  \
	static void name(void **state) \
	{                              \
		(void)state;           \
		skip();                \
	}
SKIPPED(kernels_regions_and_copies_are_slices_with_their_arguments)
SKIPPED(ringtrace_record_kokkos_loads_the_tool)
SKIPPED(finalize_ends_what_is_still_open)
SKIPPED(an_exit_without_finalize_ends_what_is_still_open)
SKIPPED(perfetto_output_has_the_same_slices)

#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(kernels_of_a_newer_kokkos_and_what_kokkos_never_passes,
					  tu_teardown),
		cmocka_unit_test_teardown(names_past_a_full_table, tu_teardown),
		cmocka_unit_test(names_are_interned_once_each),
		cmocka_unit_test_teardown(
			kernels_regions_and_copies_are_slices_with_their_arguments, tu_teardown),
		cmocka_unit_test_teardown(ringtrace_record_kokkos_loads_the_tool, tu_teardown),
		cmocka_unit_test_teardown(finalize_ends_what_is_still_open, tu_teardown),
		cmocka_unit_test_teardown(an_exit_without_finalize_ends_what_is_still_open,
					  tu_teardown),
		cmocka_unit_test_teardown(perfetto_output_has_the_same_slices, tu_teardown),
	};
	tu_filter_from_env();
	return cmocka_run_group_tests_name("kokkos", tests, NULL, NULL);
}
