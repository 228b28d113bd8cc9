/* SPDX-License-Identifier: MIT */
/*
 * Memory events and stack samples. Each test records through the public API, parses
 * the file back and compares exact values: every allocation and free as an instant
 * with its address, bytes and device, each followed by the device's bytes-in-use
 * counter; every stack sample as an instant whose frames resolve to the functions
 * they point into.
 *
 * The functions whose addresses the stack tests resolve are not static: dladdr(3)
 * sees only dynamic symbols, which the test has because it links with -rdynamic.
 */
#include <ringtrace.h>

#include "test_util.h"
#include "trace_read.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static char path[4096];

/* Record with `body` in session `name`; the file is in `path`. */
static void record_only(const char *name, void (*body)(void))
{
	tu_own_file(path, sizeof(path), "memstack", name, ".json");
	tu_start(path, RTR_IO_AUTO, RTR_ON_FULL_BLOCK, 1 << 16);
	body();
	assert_int_equal(rtr_stop(), 0);
}

/* record_only(), then load the file. */
static void record(const char *name, void (*body)(void), struct tt_trace *t)
{
	record_only(name, body);
	if (tt_load(path, TT_CHECK_ESCAPES, t) != 0)
		fail_msg("%s", t->error);
	assert_true(t->complete);
}

static void check_counter_name(const struct tt_event *c, int device)
{
	char want[64];

	if (device == RTR_MEM_HOST)
		snprintf(want, sizeof(want), "memory host");
	else
		snprintf(want, sizeof(want), "memory device %d", device);
	assert_string_equal(c->name, want);
}

/*
 * e[0] is the instant of an allocation or free ("alloc" or "free") of addr on device
 * with `bytes`, and e[1] the device's counter at `in_use`, at the same moment.
 */
static void check_mem(const struct tt_event *const *e, const char *what, int device, uintptr_t addr,
		      uint64_t bytes, uint64_t in_use)
{
	char hex[32];

	assert_string_equal(e[0]->ph, "i");
	assert_string_equal(e[0]->scope, "t");
	assert_string_equal(e[0]->cat, "memory");
	assert_string_equal(e[0]->name, what);
	assert_int_equal(e[0]->tid, gettid());
	assert_int_equal(e[0]->pid, getpid());
	assert_int_equal(e[0]->nargs, 3);
	snprintf(hex, sizeof(hex), "0x%lx", (unsigned long)addr);
	assert_int_equal(tt_arg(e[0], "addr")->type, TT_STRING);
	assert_string_equal(tt_arg(e[0], "addr")->s, hex);
	assert_int_equal(tt_arg(e[0], "bytes")->u, bytes);
	assert_int_equal(tu_arg_int(e[0], "device"), device);

	assert_string_equal(e[1]->ph, "C");
	check_counter_name(e[1], device);
	assert_int_equal(e[1]->ts_ns, e[0]->ts_ns);
	assert_int_equal(e[1]->pid, getpid());
	assert_int_equal(e[1]->nargs, 1);
	assert_int_equal(tt_arg(e[1], "bytes_in_use")->type, TT_INT);
	assert_int_equal(tt_arg(e[1], "bytes_in_use")->u, in_use);
}

/* Addresses as a device allocator would hand them out: aligned, equal low bits. */
#define DEV_A  ((uintptr_t)0x7f0000200000)
#define DEV_B  ((uintptr_t)0x7f0000400000)
#define HOST_A ((uintptr_t)0x55aa00001000)

static void record_two_devices_and_host(void)
{
	rtr_mem_alloc(0, (const void *)DEV_A, 4096);
	rtr_mem_alloc(1, (const void *)DEV_A, 100); /* same address, other device */
	rtr_mem_alloc(RTR_MEM_HOST, (const void *)HOST_A, 64);
	rtr_mem_alloc(0, (const void *)DEV_B, UINT64_C(3) << 32);
	rtr_mem_free(0, (const void *)DEV_A);
	rtr_mem_free(1, (const void *)DEV_A);
	rtr_mem_free(RTR_MEM_HOST, (const void *)HOST_A);
	rtr_mem_alloc(1, (const void *)DEV_B, 7);
	rtr_mem_free(0, (const void *)DEV_B);
}

static void totals_run_per_device(void **state)
{
	(void)state;
	struct tt_trace t = {0};
	const struct tt_event *e[32];

	record("devices", record_two_devices_and_host, &t);
	assert_int_equal(tu_events_of(&t, e, 32), 18);
	check_mem(e + 0, "alloc", 0, DEV_A, 4096, 4096);
	check_mem(e + 2, "alloc", 1, DEV_A, 100, 100);
	check_mem(e + 4, "alloc", RTR_MEM_HOST, HOST_A, 64, 64);
	check_mem(e + 6, "alloc", 0, DEV_B, UINT64_C(3) << 32, (UINT64_C(3) << 32) + 4096);
	check_mem(e + 8, "free", 0, DEV_A, 4096, UINT64_C(3) << 32);
	check_mem(e + 10, "free", 1, DEV_A, 100, 0);
	check_mem(e + 12, "free", RTR_MEM_HOST, HOST_A, 64, 0);
	check_mem(e + 14, "alloc", 1, DEV_B, 7, 7);
	check_mem(e + 16, "free", 0, DEV_B, UINT64_C(3) << 32, 0);
	for (int i = 2; i < 18; i += 2)
		assert_true(e[i]->ts_ns >= e[i - 2]->ts_ns);
	/* the counters are the writer's own lines: only the nine calls are events */
	assert_int_equal(tt_arg(tu_end_marker(&t), "events")->i, 9);
	assert_null(tt_arg(tu_end_marker(&t), "mem_untracked"));
	tt_free(&t);
}

static void record_unknown_frees(void)
{
	rtr_mem_alloc(0, (const void *)DEV_A, 10);
	rtr_mem_free(0, (const void *)DEV_B);		/* never allocated */
	rtr_mem_free(2, (const void *)DEV_A);		/* a device never seen */
	rtr_mem_free(0, (const void *)DEV_A);		/* the real one */
	rtr_mem_free(0, (const void *)DEV_A);		/* twice */
	rtr_mem_alloc(0, (const void *)DEV_A, 5);	/* reused */
	rtr_mem_alloc(0, (const void *)DEV_A, 8);	/* again, its free not seen */
	rtr_mem_free(RTR_MEM_HOST, (const void *)NULL); /* free(NULL) */
}

static void frees_of_unknown_addresses_count_zero(void **state)
{
	(void)state;
	struct tt_trace t = {0};
	const struct tt_event *e[32];

	record("unknown", record_unknown_frees, &t);
	assert_int_equal(tu_events_of(&t, e, 32), 16);
	check_mem(e + 0, "alloc", 0, DEV_A, 10, 10);
	check_mem(e + 2, "free", 0, DEV_B, 0, 10);
	check_mem(e + 4, "free", 2, DEV_A, 0, 0);
	check_mem(e + 6, "free", 0, DEV_A, 10, 0);
	check_mem(e + 8, "free", 0, DEV_A, 0, 0); /* never below zero */
	check_mem(e + 10, "alloc", 0, DEV_A, 5, 5);
	check_mem(e + 12, "alloc", 0, DEV_A, 8, 8); /* replaces the 5 */
	check_mem(e + 14, "free", RTR_MEM_HOST, 0, 0, 0);
	tt_free(&t);
}

/*
 * An allocation on one thread and its free on another right after: the writer drains
 * one ring after another, so the free may be read first. Both orders of the rings:
 * the allocating thread's ring older than the freeing one's, then younger.
 */
struct handoff {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int allocated;
	uintptr_t addr;
};

static void *free_when_allocated(void *arg)
{
	struct handoff *h = arg;

	rtr_instant("app", "freer ready"); /* its ring exists from here */
	pthread_mutex_lock(&h->lock);
	while (!h->allocated)
		pthread_cond_wait(&h->cond, &h->lock);
	pthread_mutex_unlock(&h->lock);
	rtr_mem_free(0, (const void *)h->addr);
	return NULL;
}

static void *allocate(void *arg)
{
	struct handoff *h = arg;

	rtr_mem_alloc(0, (const void *)h->addr, 4096);
	pthread_mutex_lock(&h->lock);
	h->allocated = 1;
	pthread_cond_signal(&h->cond);
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

static void handoff(uintptr_t addr, int freer_first)
{
	struct handoff h = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, addr};
	pthread_t freer, allocator;

	if (freer_first) {
		assert_int_equal(pthread_create(&freer, NULL, free_when_allocated, &h), 0);
		usleep(1000); /* its ring registered first, most often */
		assert_int_equal(pthread_create(&allocator, NULL, allocate, &h), 0);
	} else {
		assert_int_equal(pthread_create(&allocator, NULL, allocate, &h), 0);
		pthread_join(allocator, NULL);
		assert_int_equal(pthread_create(&freer, NULL, free_when_allocated, &h), 0);
	}
	pthread_join(freer, NULL);
	if (freer_first)
		pthread_join(allocator, NULL);
}

static void record_handoffs(void)
{
	for (int round = 0; round < 8; round++)
		handoff(DEV_A + (uintptr_t)round * 4096, round & 1);
	assert_int_equal(rtr_flush(), 0);	  /* every round read, in whatever order */
	rtr_mem_alloc(0, (const void *)DEV_B, 7); /* so the total is 7 */
}

static int by_ts(const void *a, const void *b)
{
	const struct tt_event *x = *(const struct tt_event *const *)a;
	const struct tt_event *y = *(const struct tt_event *const *)b;
	return (x->ts_ns > y->ts_ns) - (x->ts_ns < y->ts_ns);
}

static void a_free_drained_before_its_allocation_still_ends_it(void **state)
{
	(void)state;
	struct tt_trace t = {0};
	const struct tt_event *e[64], *counters[64];
	size_t n, nc = 0;

	record("handoff", record_handoffs, &t);
	n = tu_events_of(&t, e, 64);
	for (size_t i = 0; i < n; i++) {
		if (!tu_is(e[i]->ph, "C"))
			continue;
		check_counter_name(e[i], 0);
		counters[nc++] = e[i];
	}
	assert_int_equal(nc, 17); /* 8 allocations, 8 frees, the last allocation */
	/* The totals between are the sums in the order the rings were read (another
	 * round's allocation may count until its free is read), but no allocation stays
	 * counted once its free is read, whichever came first. */
	qsort(counters, nc, sizeof(counters[0]), by_ts);
	for (size_t i = 0; i < 16; i++)
		assert_int_equal(tt_arg(counters[i], "bytes_in_use")->u % 4096, 0);
	assert_int_equal(tt_arg(counters[16], "bytes_in_use")->u, 7);
	tt_free(&t);
}

static void record_first_session(void)
{
	rtr_mem_alloc(0, (const void *)DEV_A, 500); /* never freed in this session */
}

static void record_second_session(void)
{
	rtr_mem_free(0, (const void *)DEV_A); /* the last session's: unknown here */
	rtr_mem_alloc(0, (const void *)DEV_B, 7);
}

static void totals_start_at_zero_in_each_session(void **state)
{
	(void)state;
	struct tt_trace t = {0};
	const struct tt_event *e[8];

	record("session1", record_first_session, &t);
	assert_int_equal(tu_events_of(&t, e, 8), 2);
	check_mem(e, "alloc", 0, DEV_A, 500, 500);
	tt_free(&t);

	record("session2", record_second_session, &t);
	assert_int_equal(tu_events_of(&t, e, 8), 4);
	check_mem(e + 0, "free", 0, DEV_A, 0, 0);
	check_mem(e + 2, "alloc", 0, DEV_B, 7, 7);
	tt_free(&t);
}

#define MANY_DEVICES 300 /* more than the writer keeps totals for (256) */

static void record_many_devices(void)
{
	for (int d = 0; d < MANY_DEVICES; d++)
		rtr_mem_alloc(d, (const void *)DEV_A, 1000 + (uint64_t)d);
	for (int d = 0; d < MANY_DEVICES; d++)
		rtr_mem_free(d, (const void *)DEV_A);
}

static void allocations_beyond_the_bounds_are_counted_untracked(void **state)
{
	(void)state;
	struct tt_trace t = {0};
	const struct tt_event *e[4 * MANY_DEVICES];

	record("bounds", record_many_devices, &t);
	assert_int_equal(tu_events_of(&t, e, 4 * MANY_DEVICES), 4 * MANY_DEVICES);
	for (int d = 0; d < MANY_DEVICES; d++) {
		int tracked = d < 256;
		uint64_t bytes = 1000 + (uint64_t)d;
		/* the instant keeps its bytes; an untracked one has no total, and its free
		 * finds nothing */
		check_mem(e + 2 * d, "alloc", d, DEV_A, bytes, tracked ? bytes : 0);
		check_mem(e + 2 * (MANY_DEVICES + d), "free", d, DEV_A, tracked ? bytes : 0, 0);
	}
	assert_int_equal(tu_arg_int(tu_end_marker(&t), "mem_untracked"), MANY_DEVICES - 256);
	tt_free(&t);
}

/* ------------------------------------------------------------------------- */
/* Many threads                                                               */

#define MEM_THREADS 8
#define MEM_DEVICES 3 /* the host, device 0 and device 1 */

static uint64_t per_thread; /* allocations each thread makes in each round */

static int device_of_thread(int i)
{
	return i % MEM_DEVICES == 2 ? RTR_MEM_HOST : i % MEM_DEVICES;
}

/* Thread i's k-th address: distinct across threads on one device, with the equal low
 * bits of real allocations; its size follows from it, so a free can be checked. */
static uintptr_t thread_addr(int i, uint64_t k)
{
	return ((uintptr_t)0x7f00 << 32) + ((uintptr_t)i << 36) + (uintptr_t)(k << 8);
}

static uint64_t size_of_addr(uintptr_t addr)
{
	return ((addr >> 8) & 0xffff) * 3 + ((addr >> 36) & 0xf) + 1;
}

/* Allocate a round, free every other one, allocate a second round, free the first
 * round's rest: the live set churns through growth and deletion. Returns (via arg)
 * the bytes still live at the end: the second round's. */
static void *churn(void *arg)
{
	int i = (int)(intptr_t)arg;
	int dev = device_of_thread(i);
	uint64_t n = per_thread;

	for (uint64_t k = 0; k < n; k++)
		rtr_mem_alloc(dev, (const void *)thread_addr(i, k),
			      size_of_addr(thread_addr(i, k)));
	for (uint64_t k = 0; k < n; k += 2)
		rtr_mem_free(dev, (const void *)thread_addr(i, k));
	for (uint64_t k = n; k < 2 * n; k++)
		rtr_mem_alloc(dev, (const void *)thread_addr(i, k),
			      size_of_addr(thread_addr(i, k)));
	for (uint64_t k = 1; k < n; k += 2)
		rtr_mem_free(dev, (const void *)thread_addr(i, k));
	return NULL;
}

static void record_threads(void)
{
	pthread_t th[MEM_THREADS];

	for (int i = 0; i < MEM_THREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, churn, (void *)(intptr_t)i), 0);
	for (int i = 0; i < MEM_THREADS; i++)
		pthread_join(th[i], NULL);
}

struct walk {
	char err[256];
	uint64_t last[MEM_DEVICES]; /* the last counter of each device */
	uint64_t allocs, frees, counters;
	int after_free; /* the previous line was a free: its counter follows */
};

static int slot_of(const char *counter)
{
	if (strcmp(counter, "memory host") == 0)
		return 2;
	if (strcmp(counter, "memory device 0") == 0)
		return 0;
	if (strcmp(counter, "memory device 1") == 0)
		return 1;
	return -1;
}

static int visit_threads(const struct tt_event *ev, void *ctx)
{
	struct walk *w = ctx;

	if (tu_is(ev->ph, "C")) {
		int s = slot_of(ev->name);
		TU_WALK_CHECK(w, ev, s >= 0, "counter %s", ev->name);
		const struct tt_arg *a = tt_arg(ev, "bytes_in_use");
		TU_WALK_CHECK(w, ev, a != NULL && a->type == TT_INT, "no bytes_in_use");
		w->last[s] = a->u;
		w->counters++;
		return 0;
	}
	if (!tu_is(ev->cat, "memory"))
		return 0;
	const struct tt_arg *addr = tt_arg(ev, "addr");
	TU_WALK_CHECK(w, ev, addr != NULL && addr->type == TT_STRING, "no addr");
	uintptr_t a = (uintptr_t)strtoull(addr->s, NULL, 16);
	int64_t bytes = tu_arg_int(ev, "bytes");
	/* every free finds its allocation's size: the table never loses one */
	TU_WALK_CHECK(w, ev, bytes == (int64_t)size_of_addr(a), "%s of %s: %lld bytes", ev->name,
		      addr->s, (long long)bytes);
	if (tu_is(ev->name, "alloc"))
		w->allocs++;
	else
		w->frees++;
	return 0;
}

static void totals_are_exact_with_many_threads(void **state)
{
	(void)state;
	struct walk w = {0};
	uint64_t want[MEM_DEVICES] = {0};

	per_thread = tu_scaled(6000, 600) & ~(uint64_t)1;
	record_only("threads", record_threads);
	struct tt_trace info = tu_walk(path, 0, visit_threads, &w, w.err);
	assert_true(info.complete);

	for (int i = 0; i < MEM_THREADS; i++) {
		int dev = device_of_thread(i);
		int s = dev == RTR_MEM_HOST ? 2 : dev;
		for (uint64_t k = per_thread; k < 2 * per_thread; k++)
			want[s] += size_of_addr(thread_addr(i, k));
	}
	for (int s = 0; s < MEM_DEVICES; s++)
		assert_int_equal(w.last[s], want[s]);
	assert_int_equal(w.allocs, MEM_THREADS * 2 * per_thread);
	assert_int_equal(w.frees, MEM_THREADS * per_thread);
	assert_int_equal(w.counters, w.allocs + w.frees);
}

/* ------------------------------------------------------------------------- */
/* Stack samples                                                              */

/* Functions whose addresses the samples carry; noinline and not static, so that each
 * has its own dynamic symbol. The volatile store keeps them distinct. */
static _Thread_local volatile int memstack_sink; /* per thread: the workers race otherwise */
__attribute__((noinline)) void memstack_frame_leaf(void);
__attribute__((noinline)) void memstack_frame_mid(void);
__attribute__((noinline)) void memstack_frame_root(void);
__attribute__((noinline)) void memstack_capture_here(void);

__attribute__((noinline)) void memstack_frame_leaf(void)
{
	memstack_sink = 1;
}

__attribute__((noinline)) void memstack_frame_mid(void)
{
	memstack_sink = 2;
}

__attribute__((noinline)) void memstack_frame_root(void)
{
	memstack_sink = 3;
}

/* A function name longer than a frame's text may be (258 bytes): cut, the offset kept. */
#define CAT3_(a, b, c) a##b##c
#define CAT3(a, b, c)  CAT3_(a, b, c)
#define LONG_FN                                                                                      \
	CAT3(memstack_long_,                                                                         \
	     CAT3(abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghij,  \
		  abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghij,  \
		  abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghij), \
	     _end)
__attribute__((noinline)) void LONG_FN(void);
__attribute__((noinline)) void LONG_FN(void)
{
	memstack_sink = 4;
}

static const void *code(void (*fn)(void))
{
	return (const void *)(uintptr_t)fn;
}

/*
 * The strings of a JSON array of strings as the reader re-serializes it (raw), into
 * out[0 .. max): each unescaped far enough for the tests (\" and \\), NUL-terminated
 * in buf. Returns how many.
 */
static size_t split_frames(const char *raw, char *buf, size_t buf_size, char **out, size_t max)
{
	size_t n = 0, at = 0;
	const char *p = raw;

	assert_true(*p++ == '[');
	while (*p == '"') {
		assert_true(n < max);
		out[n++] = buf + at;
		for (p++; *p != '"'; p++) {
			if (*p == '\\')
				p++;
			assert_true(at + 1 < buf_size);
			buf[at++] = *p;
		}
		buf[at++] = '\0';
		p++;
		if (*p == ',')
			p++;
	}
	assert_true(*p == ']');
	return n;
}

static int starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void record_known_frames(void)
{
	const void *frames[] = {code(memstack_frame_leaf),
				(const char *)code(memstack_frame_mid) + 3,
				code(memstack_frame_root), (const void *)(uintptr_t)0x10};
	const void *twice[] = {code(memstack_frame_leaf), code(memstack_frame_leaf)};
	const void *long_fn[] = {code(LONG_FN)};

	rtr_stack_sample("prof", "sample", frames, 4);
	rtr_stack_sample("prof", "cached", twice, 2); /* the second resolution is a lookup */
	rtr_stack_sample("prof", "long", long_fn, 1);
	rtr_stack_sample("prof", "empty", NULL, 0);
}

static void samples_resolve_known_addresses(void **state)
{
	(void)state;
	struct tt_trace t = {0};
	const struct tt_event *e[8];
	char buf[8192], *f[RTR_MAX_FRAMES + 1];

	record("known", record_known_frames, &t);
	assert_int_equal(tu_events_of(&t, e, 8), 4);
	for (int i = 0; i < 4; i++) {
		assert_string_equal(e[i]->ph, "i");
		assert_string_equal(e[i]->scope, "t");
		assert_string_equal(e[i]->cat, "prof");
		assert_int_equal(e[i]->tid, gettid());
		assert_int_equal(e[i]->nargs, 1);
		assert_int_equal(tt_arg(e[i], "stack")->type, TT_OTHER);
	}
	assert_string_equal(e[0]->name, "sample");
	assert_int_equal(split_frames(tt_arg(e[0], "stack")->raw, buf, sizeof(buf), f, 8), 4);
	assert_string_equal(f[0], "memstack_frame_leaf+0x0");
	assert_string_equal(f[1], "memstack_frame_mid+0x3");
	assert_string_equal(f[2], "memstack_frame_root+0x0");
	assert_string_equal(f[3], "0x10"); /* in no loaded object */

	assert_string_equal(tt_arg(e[1], "stack")->raw,
			    "[\"memstack_frame_leaf+0x0\",\"memstack_frame_leaf+0x0\"]");

	/* cut to 256 bytes with the offset kept */
	assert_int_equal(split_frames(tt_arg(e[2], "stack")->raw, buf, sizeof(buf), f, 8), 1);
	assert_int_equal(strlen(f[0]), 256);
	assert_true(starts_with(f[0], "memstack_long_abcdefghij"));
	assert_string_equal(f[0] + 256 - 4, "+0x0");

	assert_string_equal(tt_arg(e[3], "stack")->raw, "[]");
	assert_int_equal(tt_arg(tu_end_marker(&t), "events")->i, 4);
	tt_free(&t);
}

static void record_too_many_frames(void)
{
	const void *frames[RTR_MAX_FRAMES + 36];

	for (size_t i = 0; i < RTR_MAX_FRAMES + 36; i++)
		frames[i] = (const char *)code(memstack_frame_leaf) + i;
	rtr_stack_sample("prof", "deep", frames, RTR_MAX_FRAMES + 36);
}

static void samples_keep_at_most_max_frames(void **state)
{
	(void)state;
	struct tt_trace t = {0};
	const struct tt_event *e[4];
	char buf[16384], *f[RTR_MAX_FRAMES + 1], want[64];

	record("deep", record_too_many_frames, &t);
	assert_int_equal(tu_events_of(&t, e, 4), 1);
	assert_int_equal(
		split_frames(tt_arg(e[0], "stack")->raw, buf, sizeof(buf), f, RTR_MAX_FRAMES + 1),
		RTR_MAX_FRAMES);
	for (int i = 0; i < RTR_MAX_FRAMES; i++) {
		/* past the leaf's end the address is in another symbol: only the first few */
		if (i < 4) {
			snprintf(want, sizeof(want), "memstack_frame_leaf+0x%x", i);
			assert_string_equal(f[i], want);
		}
	}
	tt_free(&t);
}

__attribute__((noinline)) void memstack_capture_here(void)
{
	rtr_stack_sample_here("prof", "here");
	memstack_sink = 5; /* after the call: not a tail call, so this frame stays */
}

static void record_here(void)
{
	memstack_capture_here();
	memstack_sink = 6;
}

static void sample_here_starts_at_its_caller(void **state)
{
	(void)state;
	struct tt_trace t = {0};
	const struct tt_event *e[4];
	char buf[65536], *f[RTR_MAX_FRAMES + 1];

	record("here", record_here, &t);
	assert_int_equal(tu_events_of(&t, e, 4), 1);
	assert_string_equal(e[0]->name, "here");
	size_t n =
		split_frames(tt_arg(e[0], "stack")->raw, buf, sizeof(buf), f, RTR_MAX_FRAMES + 1);
	assert_true(n >= 2 && n <= RTR_MAX_FRAMES);
	/* innermost first, rtr_stack_sample_here() itself left out */
	if (!starts_with(f[0], "memstack_capture_here+0x"))
		fail_msg("first frame %s", f[0]);
	for (size_t i = 0; i < n; i++)
		assert_false(starts_with(f[i], "rtr_stack_sample_here+"));
	tt_free(&t);
}

/* A profiler-like trace: slices on two threads, memory and stacks inside them. This is
 * the trace to give the viewers (RTR_TEST_KEEP=1, then /work/shared/viewers/check). */
static void *worker(void *arg)
{
	int dev = (int)(intptr_t)arg;

	rtr_thread_name(dev == 0 ? "worker 0" : "worker 1");
	for (int step = 0; step < 4; step++) {
		rtr_begin("app", "step");
		rtr_mem_alloc(dev, (const void *)(DEV_A + (uintptr_t)step * 4096), 4096);
		rtr_mem_alloc(RTR_MEM_HOST, (const void *)(HOST_A + (uintptr_t)step * 64), 64);
		memstack_capture_here();
		rtr_mem_free(RTR_MEM_HOST, (const void *)(HOST_A + (uintptr_t)step * 64));
		rtr_end("app", "step");
	}
	return NULL;
}

static void record_profile(void)
{
	pthread_t th[2];

	rtr_begin("app", "main");
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	rtr_end("app", "main");
}

static void profile_with_slices_memory_and_stacks(void **state)
{
	(void)state;
	struct tt_trace t = {0};
	uint64_t instants = 0, counters = 0, stacks = 0, host_last = UINT64_MAX;

	record("profile", record_profile, &t);
	for (size_t i = 0; i < t.n; i++) {
		const struct tt_event *ev = &t.ev[i];
		if (tu_is(ev->cat, "memory"))
			instants++;
		else if (tu_is(ev->cat, "prof"))
			stacks++;
		else if (tu_is(ev->ph, "C") && ev->name != NULL && starts_with(ev->name, "memory "))
			counters++;
		if (tu_is(ev->name, "memory host"))
			host_last = tt_arg(ev, "bytes_in_use")->u;
	}
	assert_int_equal(instants, 2 * 4 * 3);
	assert_int_equal(counters, instants);
	assert_int_equal(stacks, 2 * 4);
	assert_int_equal(host_last, 0); /* every host block was freed */
	tt_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(totals_run_per_device, tu_teardown),
		cmocka_unit_test_teardown(frees_of_unknown_addresses_count_zero, tu_teardown),
		cmocka_unit_test_teardown(a_free_drained_before_its_allocation_still_ends_it,
					  tu_teardown),
		cmocka_unit_test_teardown(totals_start_at_zero_in_each_session, tu_teardown),
		cmocka_unit_test_teardown(allocations_beyond_the_bounds_are_counted_untracked,
					  tu_teardown),
		cmocka_unit_test_teardown(totals_are_exact_with_many_threads, tu_teardown),
		cmocka_unit_test_teardown(samples_resolve_known_addresses, tu_teardown),
		cmocka_unit_test_teardown(samples_keep_at_most_max_frames, tu_teardown),
		cmocka_unit_test_teardown(sample_here_starts_at_its_caller, tu_teardown),
		cmocka_unit_test_teardown(profile_with_slices_memory_and_stacks, tu_teardown),
	};

	tu_filter_from_env();
	return cmocka_run_group_tests_name("memstack", tests, NULL, NULL);
}
