/* SPDX-License-Identifier: MIT */
/*
 * Threads come and go: thousands of short-lived threads, threads that outlive a
 * session or exit between sessions, and fork(). Every event of every thread must be
 * in the file of its own session and process, and no ring may outlive its thread by
 * more than one session (rings are anonymous mappings of ring_bytes: a leak shows as
 * growth of VmSize).
 *
 * Sizes scale with RTR_TEST_SCALE (a factor, default 1; 0.25 under a sanitizer).
 */
#include <ringtrace.h>

#include "child.h"
#include "test_util.h"
#include "trace_read.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#if TU_UNDER_TSAN
/* The fork test's child starts the writer thread: allowed, with this. */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
	return "die_after_fork=0";
}
#endif

#define CAT	       "threads"
#define STACK_BYTES    ((size_t)256 << 10)
#define LEAK_SLACK_KIB ((uint64_t)16 << 10) /* 16 MiB */

/* Tells the fork test's helper thread to stop. */
static int helper_stop;

/* Stops the fork test's helper thread first, then tu_teardown(). */
static int teardown(void **state)
{
	__atomic_store_n(&helper_stop, 1, __ATOMIC_RELEASE);
	return tu_teardown(state);
}

/* A file of the running test: the teardown removes it, pass or fail (set
 * RTR_TEST_KEEP=1 to keep it for a look). */
static void make_path(char *out, size_t size, const char *name)
{
	tu_own_file(out, size, "threads", name, ".json");
}

/* Start in block mode, with the I/O method the environment gives. */
static void start(const char *p, size_t ring_bytes)
{
	tu_start(p, TU_IO_DEFAULT, RTR_ON_FULL_BLOCK, ring_bytes);
}

/* VmSize of this process in KiB. */
static uint64_t vm_size_kib(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	uint64_t kib = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmSize: %" SCNu64, &kib) == 1)
			break;
	fclose(f);
	assert_true(kib > 0);
	return kib;
}

static void spawn(pthread_t *th, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;

	assert_int_equal(pthread_attr_init(&attr), 0);
	assert_int_equal(pthread_attr_setstacksize(&attr, STACK_BYTES), 0);
	assert_int_equal(pthread_create(th, &attr, fn, arg), 0);
	pthread_attr_destroy(&attr);
}

static const char *arg_str(const struct tt_event *e, const char *key)
{
	const struct tt_arg *a = tt_arg(e, key);

	return a != NULL && a->type == TT_STRING ? a->s : NULL;
}

/* What every walk keeps: the error, the count, the end marker's args. */
struct frame {
	char err[512];
	uint64_t n;
	int64_t pid;
	int end_seen;
	int64_t end_events, end_dropped, end_threads;
};

/* The markers every file has, and the pid of every event: returns -1 when e was a
 * marker, 1 on a failed check, 0 for an event the caller checks. */
static int visit_frame(struct frame *w, const struct tt_event *e)
{
	TU_WALK_CHECK(w, e, e->has_pid && e->pid == w->pid, "pid %" PRId64 ", want %" PRId64,
		      e->pid, w->pid);
	TU_WALK_CHECK(w, e, !w->end_seen, "event after the end marker");
	if (w->n == 0) {
		TU_WALK_CHECK(w, e,
			      tu_is(e->ph, "i") && tu_is(e->name, "ringtrace: start") &&
				      e->ts_ns == 0,
			      "first event is not the start marker");
		TU_WALK_CHECK(w, e, tu_arg_int(e, "pid") == w->pid, "start marker pid arg");
		TU_WALK_CHECK(w, e, e->tid == w->pid, "start marker tid %" PRId64, e->tid);
		return -1;
	}
	if (w->n == 1) {
		TU_WALK_CHECK(w, e, tu_is(e->ph, "M") && tu_is(e->name, "process_name"),
			      "no process_name");
		return -1;
	}
	if (tu_is(e->name, "ringtrace: end")) {
		w->end_seen = 1;
		w->end_events = tu_arg_int(e, "events");
		w->end_dropped = tu_arg_int(e, "dropped");
		w->end_threads = tu_arg_int(e, "threads");
		return -1;
	}
	TU_WALK_CHECK(w, e, !tu_is(e->name, "ringtrace: dropped"), "drops in block mode");
	return 0;
}

static void walk(const char *p, tt_visit_fn fn, struct frame *w)
{
	struct tt_trace info = tu_walk(p, TT_CHECK_ESCAPES, fn, w, w->err);

	assert_true(info.complete);
	assert_false(info.repaired);
	assert_true(w->end_seen);
}

/* ------------------------------------------------------------------------- */
/* Thread churn                                                               */

struct churn_thread {
	int idx;
	int64_t tid;
};

/* Name, then three events that each carry the index. */
static void *churn_main(void *arg)
{
	struct churn_thread *c = arg;
	char name[32], bye[32];

	c->tid = gettid();
	snprintf(name, sizeof(name), "churn-%04d", c->idx);
	snprintf(bye, sizeof(bye), "bye-%04d", c->idx);
	rtr_thread_name(name);
	struct rtr_arg a[] = {RTR_ARG_I64("idx", c->idx)};
	rtr_instant_args(CAT, "hello", a, 1);
	rtr_counter_i64(CAT, "idx", c->idx);
	rtr_instant_copy(CAT, bye);
	return NULL;
}

/* n threads, at most `at_once` alive at a time. */
static void churn(struct churn_thread *c, int n, int at_once)
{
	pthread_t th[64];

	assert_true(at_once <= 64);
	for (int base = 0; base < n; base += at_once) {
		int k = n - base < at_once ? n - base : at_once;
		for (int i = 0; i < k; i++) {
			c[base + i].idx = base + i;
			spawn(&th[i], churn_main, &c[base + i]);
		}
		for (int i = 0; i < k; i++)
			assert_int_equal(pthread_join(th[i], NULL), 0);
	}
}

struct churn_state {
	int idx;
	int named, hello, counter, bye;
};

struct churn_walk {
	struct frame f; /* first: WALK_CHECK writes f.err through the cast */
	int n;
	int64_t *sorted_tids; /* the threads' tids, ascending */
	int *idx_of;	      /* sorted position -> thread index */
	struct churn_state *st;
	uint64_t plain;
};

static int find_thread(const struct churn_walk *w, int64_t tid)
{
	int lo = 0, hi = w->n - 1;

	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;
		if (w->sorted_tids[mid] == tid)
			return w->idx_of[mid];
		if (w->sorted_tids[mid] < tid)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

static int visit_churn(const struct tt_event *e, void *ctx)
{
	struct churn_walk *w = ctx;
	int r = visit_frame(&w->f, e);

	w->f.n++;
	if (r != 0)
		return r > 0;
	int idx = find_thread(w, e->tid);
	TU_WALK_CHECK(&w->f, e, idx >= 0, "%s %s from unknown tid %" PRId64, e->ph, e->name,
		      e->tid);
	struct churn_state *s = &w->st[idx];
	char want[32];
	if (tu_is(e->ph, "M")) {
		snprintf(want, sizeof(want), "churn-%04d", idx);
		TU_WALK_CHECK(&w->f, e,
			      tu_is(e->name, "thread_name") && tu_is(arg_str(e, "name"), want),
			      "tid %" PRId64 ": M %s %s, want thread_name %s", e->tid, e->name,
			      arg_str(e, "name"), want);
		TU_WALK_CHECK(&w->f, e, s->hello == 0, "thread_name after the thread's events");
		s->named++;
		return 0;
	}
	TU_WALK_CHECK(&w->f, e, s->named > 0, "thread %d: event before its thread_name", idx);
	w->plain++;
	if (tu_is(e->ph, "i") && tu_is(e->name, "hello")) {
		TU_WALK_CHECK(&w->f, e,
			      tu_arg_int(e, "idx") == idx && s->hello == 0 && s->counter == 0,
			      "thread %d: hello idx %" PRId64, idx, tu_arg_int(e, "idx"));
		s->hello++;
	} else if (tu_is(e->ph, "C") && tu_is(e->name, "idx")) {
		TU_WALK_CHECK(&w->f, e,
			      tu_arg_int(e, "value") == idx && s->hello == 1 && s->counter == 0,
			      "thread %d: counter %" PRId64, idx, tu_arg_int(e, "value"));
		s->counter++;
	} else {
		snprintf(want, sizeof(want), "bye-%04d", idx);
		TU_WALK_CHECK(&w->f, e,
			      tu_is(e->ph, "i") && tu_is(e->name, want) && s->counter == 1 &&
				      s->bye == 0,
			      "thread %d: %s %s", idx, e->ph, e->name);
		s->bye++;
	}
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Every churn thread's events exactly once, in order, under its own name. */
static void check_churn_file(const char *p, const struct churn_thread *c, int n)
{
	struct churn_walk w;
	int64_t(*pairs)[2] = tu_own((size_t)n, sizeof(*pairs));

	memset(&w, 0, sizeof(w));
	w.f.pid = getpid();
	w.n = n;
	w.sorted_tids = tu_own((size_t)n, sizeof(int64_t));
	w.idx_of = tu_own((size_t)n, sizeof(int));
	w.st = tu_own((size_t)n, sizeof(*w.st));
	for (int i = 0; i < n; i++) {
		pairs[i][0] = c[i].tid;
		pairs[i][1] = i;
	}
	qsort(pairs, (size_t)n, sizeof(*pairs), cmp_i64);
	for (int i = 0; i < n; i++) {
		w.sorted_tids[i] = pairs[i][0];
		w.idx_of[i] = (int)pairs[i][1];
		/* the kernel does not reuse a tid within one run of a few thousand */
		if (i > 0)
			assert_true(w.sorted_tids[i] != w.sorted_tids[i - 1]);
	}
	walk(p, visit_churn, &w.f);
	for (int i = 0; i < n; i++) {
		if (w.st[i].named < 1 || w.st[i].hello != 1 || w.st[i].counter != 1 ||
		    w.st[i].bye != 1)
			fail_msg("thread %d: named %d hello %d counter %d bye %d", i, w.st[i].named,
				 w.st[i].hello, w.st[i].counter, w.st[i].bye);
	}
	assert_int_equal(w.plain, (uint64_t)n * 3);
	assert_int_equal(w.f.end_events, (int64_t)n * 4);
	assert_int_equal(w.f.end_dropped, 0);
	assert_int_equal(w.f.end_threads, n);
}

static void thread_churn_keeps_every_event_and_leaks_no_ring(void **state)
{
	(void)state;
	char p[4096];
	int n = (int)tu_scaled(2000, 400);
	struct churn_thread *c = tu_own((size_t)n, sizeof(*c));
	struct rtr_stats st;

	make_path(p, sizeof(p), "churn");

	/* Warm-up: thread stacks cached, writer started once, the registry array grown. */
	start(p, (size_t)64 << 10);
	churn(c, 64, 16);
	assert_int_equal(rtr_stop(), 0);
	uint64_t before = vm_size_kib();

	start(p, (size_t)64 << 10);
	churn(c, n, 16);
	assert_int_equal(rtr_stop(), 0);
	uint64_t after = vm_size_kib();
	print_message("VmSize %" PRIu64 " KiB -> %" PRIu64 " KiB over %d threads\n", before, after,
		      n);
	/* a leaked ring is 68 KiB here: n of them would add n * 68 KiB */
	assert_true(after <= before + LEAK_SLACK_KIB);

	rtr_stats_get(&st);
	assert_int_equal(st.events_recorded, (uint64_t)n * 4);
	assert_int_equal(st.events_written, (uint64_t)n * 4);
	assert_int_equal(st.events_dropped, 0);
	assert_int_equal(st.threads, (uint64_t)n);
	check_churn_file(p, c, n);
}

/* ------------------------------------------------------------------------- */
/* Threads that exit while another fills chunks                               */

/*
 * A drain pass walks every ring, retiring those whose threads exited; a chunk it
 * fills ends in a provisional close that walks every ring again for its held slices.
 * Each walk needs its own list of the rings: with one shared list, the inner walk
 * rewrote it shorter under the outer one, which then met rings it had already freed.
 * The order that shows it: rings are listed newest first, so per round, threads that
 * wait ("old"), then a thread that records without pause ("busy", filling a chunk a
 * pass), then more threads that wait ("young"); old and young exit together, and the
 * pass that retires the young reaches busy, fills a chunk, then reaches the old.
 */
#define ROUND_WAITERS 16

struct round {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int go;	   /* the waiters may exit, busy may record */
	int ready; /* waiters that recorded */
	int64_t busy_tid;
	uint64_t spans;
};

struct waiter {
	struct round *r;
	int idx;
	int64_t tid;
};

static void *waiter_main(void *arg)
{
	struct waiter *wt = arg;
	struct round *r = wt->r;
	struct rtr_arg a[] = {RTR_ARG_I64("idx", wt->idx)};

	wt->tid = gettid();
	rtr_instant_args(CAT, "waiter", a, 1);
	pthread_mutex_lock(&r->lock);
	r->ready++;
	pthread_cond_broadcast(&r->cond);
	while (!r->go)
		pthread_cond_wait(&r->cond, &r->lock);
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

/* Its ring made (the outer slice, held open: every provisional close shows it), it
 * waits for the waiters' exit, then records BUSY_SPANS spans as fast as it can: a
 * few chunks, over the passes that retire the waiters. */
#define BUSY_SPANS 30000

static void *busy_main(void *arg)
{
	struct round *r = arg;

	r->busy_tid = gettid();
	rtr_begin(CAT, "outer");
	pthread_mutex_lock(&r->lock);
	while (!r->go)
		pthread_cond_wait(&r->cond, &r->lock);
	pthread_mutex_unlock(&r->lock);
	for (r->spans = 0; r->spans < BUSY_SPANS; r->spans++) {
		rtr_begin(CAT, "span");
		rtr_end(CAT, "span");
	}
	rtr_end(CAT, "outer");
	return NULL;
}

/* ROUND_WAITERS more waiters, w[i] numbered idx + i; returns when they recorded. */
static void spawn_waiters(struct round *r, struct waiter *w, pthread_t *th, int idx)
{
	int want = r->ready + ROUND_WAITERS; /* only this thread spawns */

	for (int i = 0; i < ROUND_WAITERS; i++) {
		w[i] = (struct waiter){.r = r, .idx = idx + i};
		spawn(&th[i], waiter_main, &w[i]);
	}
	pthread_mutex_lock(&r->lock);
	while (r->ready < want)
		pthread_cond_wait(&r->cond, &r->lock);
	pthread_mutex_unlock(&r->lock);
}

struct rounds_walk {
	struct frame f; /* first: WALK_CHECK writes f.err through the cast */
	const struct waiter *w;
	int waiters;
	int *seen;
	const int64_t *busy_tid;
	int rounds;
	uint64_t spans, outer;
};

static int visit_rounds(const struct tt_event *e, void *ctx)
{
	struct rounds_walk *rw = ctx;
	int r = visit_frame(&rw->f, e);

	rw->f.n++;
	if (r != 0)
		return r > 0;
	if (tu_is(e->ph, "M"))
		return 0;
	for (int i = 0; i < rw->rounds; i++) {
		if (e->tid != rw->busy_tid[i])
			continue;
		rw->spans += tu_is(e->ph, "X") && tu_is(e->name, "span");
		rw->outer += tu_is(e->ph, "X") && tu_is(e->name, "outer");
		return 0;
	}
	int64_t idx = tu_arg_int(e, "idx");
	TU_WALK_CHECK(&rw->f, e, tu_is(e->name, "waiter") && idx >= 0 && idx < rw->waiters,
		      "%s %s: not a waiter's", e->ph, e->name);
	TU_WALK_CHECK(&rw->f, e, e->tid == rw->w[idx].tid && rw->seen[idx] == 0,
		      "waiter %" PRId64 " twice, or on tid %" PRId64, idx, e->tid);
	rw->seen[idx]++;
	return 0;
}

static void threads_exit_while_another_fills_chunks(void **state)
{
	(void)state;
	enum { ROUNDS = 16 };
	const int waiters = ROUNDS * 2 * ROUND_WAITERS;
	char p[4096];
	struct waiter *w = tu_own((size_t)waiters, sizeof(*w));
	int64_t busy_tid[ROUNDS];
	uint64_t spans = 0;

	make_path(p, sizeof(p), "rounds");
	start(p, (size_t)1 << 20);
	for (int k = 0; k < ROUNDS; k++) {
		struct round r = {.lock = PTHREAD_MUTEX_INITIALIZER,
				  .cond = PTHREAD_COND_INITIALIZER};
		struct waiter *mine = &w[k * 2 * ROUND_WAITERS];
		pthread_t old[ROUND_WAITERS], young[ROUND_WAITERS], busy;

		spawn_waiters(&r, mine, old, k * 2 * ROUND_WAITERS);
		spawn(&busy, busy_main, &r);
		spawn_waiters(&r, mine + ROUND_WAITERS, young,
			      k * 2 * ROUND_WAITERS + ROUND_WAITERS);
		pthread_mutex_lock(&r.lock);
		r.go = 1;
		pthread_cond_broadcast(&r.cond);
		pthread_mutex_unlock(&r.lock);
		for (int i = 0; i < ROUND_WAITERS; i++) {
			assert_int_equal(pthread_join(old[i], NULL), 0);
			assert_int_equal(pthread_join(young[i], NULL), 0);
		}
		assert_int_equal(pthread_join(busy, NULL), 0);
		busy_tid[k] = r.busy_tid;
		spans += r.spans;
	}
	assert_int_equal(rtr_stop(), 0);
	print_message("%d rounds: %" PRIu64 " spans\n", ROUNDS, spans);

	struct rounds_walk rw = {.f.pid = getpid(),
				 .w = w,
				 .waiters = waiters,
				 .seen = tu_own((size_t)waiters, sizeof(int)),
				 .busy_tid = busy_tid,
				 .rounds = ROUNDS};
	walk(p, visit_rounds, &rw.f);
	for (int i = 0; i < waiters; i++)
		if (rw.seen[i] != 1)
			fail_msg("waiter %d: %d events", i, rw.seen[i]);
	assert_int_equal(rw.spans, spans);
	assert_int_equal(rw.outer, ROUNDS);
	/* per waiter one instant; per busy thread a B and an E a span, and the outer */
	assert_int_equal(rw.f.end_events, (int64_t)(waiters + 2 * spans + 2 * ROUNDS));
	assert_int_equal(rw.f.end_dropped, 0);
	assert_int_equal(rw.f.end_threads, waiters + ROUNDS);
}

/* ------------------------------------------------------------------------- */
/* Threads across sessions                                                    */

static pthread_barrier_t all_alive;

static void *alive_main(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&all_alive);
	return NULL;
}

/* Have n threads alive at once, so that the C library's cache of thread stacks is
 * as large before the measured run as after it. */
static void warm_stacks(int n)
{
	pthread_t th[128];

	assert_true(n <= 128);
	assert_int_equal(pthread_barrier_init(&all_alive, NULL, (unsigned)n + 1), 0);
	for (int i = 0; i < n; i++)
		spawn(&th[i], alive_main, NULL);
	pthread_barrier_wait(&all_alive);
	for (int i = 0; i < n; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	pthread_barrier_destroy(&all_alive);
}

struct gate {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int step; /* what the threads may do next */
	int done; /* threads that finished the current step */
};

static struct gate gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};

static void gate_arrive_and_wait(int step)
{
	pthread_mutex_lock(&gate.lock);
	gate.done++;
	pthread_cond_broadcast(&gate.cond);
	while (gate.step < step)
		pthread_cond_wait(&gate.cond, &gate.lock);
	pthread_mutex_unlock(&gate.lock);
}

static void gate_wait_done(int n)
{
	pthread_mutex_lock(&gate.lock);
	while (gate.done < n)
		pthread_cond_wait(&gate.cond, &gate.lock);
	gate.done = 0;
	pthread_mutex_unlock(&gate.lock);
}

static void gate_open(int step)
{
	pthread_mutex_lock(&gate.lock);
	gate.step = step;
	pthread_cond_broadcast(&gate.cond);
	pthread_mutex_unlock(&gate.lock);
}

#define PARKED	   64
#define LONG_LIVED 4
#define LONG_SEQ   1000

struct session_thread {
	int idx;
	int64_t tid;
};

/* Records in session A, then exits while the recorder is stopped. */
static void *parked_main(void *arg)
{
	struct session_thread *t = arg;
	char name[32];

	t->tid = gettid();
	snprintf(name, sizeof(name), "parked-%d", t->idx);
	rtr_thread_name(name);
	rtr_instant(CAT, "in A");
	gate_arrive_and_wait(1);	   /* A stops */
	rtr_instant(CAT, "while stopped"); /* ignored */
	return NULL;
}

/* Records in session A, again while stopped (ignored), then in B, and exits in B. */
static void *long_lived_main(void *arg)
{
	struct session_thread *t = arg;
	char name[32];

	t->tid = gettid();
	snprintf(name, sizeof(name), "long-%d", t->idx);
	rtr_thread_name(name);
	for (int i = 0; i < LONG_SEQ; i++)
		rtr_counter_i64(CAT, "a", i);
	gate_arrive_and_wait(1); /* A stops */
	rtr_instant(CAT, "while stopped");
	gate_arrive_and_wait(2); /* B starts */
	for (int i = 0; i < LONG_SEQ; i++)
		rtr_counter_i64(CAT, "b", i);
	return NULL;
}

struct session_walk {
	struct frame f;
	const struct session_thread *parked, *long_lived;
	int session; /* 'A' or 'B' */
	int parked_events[PARKED];
	int long_next[LONG_LIVED];
	int long_named[LONG_LIVED];
	uint64_t plain;
};

static int visit_session(const struct tt_event *e, void *ctx)
{
	struct session_walk *w = ctx;
	int r = visit_frame(&w->f, e);

	w->f.n++;
	if (r != 0)
		return r > 0;
	for (int i = 0; i < PARKED; i++) {
		if (e->tid != w->parked[i].tid)
			continue;
		TU_WALK_CHECK(&w->f, e, w->session == 'A', "parked thread %d in session B", i);
		if (tu_is(e->ph, "M"))
			return 0;
		TU_WALK_CHECK(&w->f, e, tu_is(e->ph, "i") && tu_is(e->name, "in A"), "parked: %s",
			      e->name);
		w->parked_events[i]++;
		w->plain++;
		return 0;
	}
	for (int i = 0; i < LONG_LIVED; i++) {
		char want[32];
		if (e->tid != w->long_lived[i].tid)
			continue;
		if (tu_is(e->ph, "M")) {
			snprintf(want, sizeof(want), "long-%d", i);
			TU_WALK_CHECK(&w->f, e, tu_is(arg_str(e, "name"), want), "long-lived name");
			TU_WALK_CHECK(&w->f, e, w->long_next[i] == 0, "name after events");
			w->long_named[i]++;
			return 0;
		}
		const char *want_name = w->session == 'A' ? "a" : "b";
		TU_WALK_CHECK(&w->f, e, tu_is(e->ph, "C") && tu_is(e->name, want_name),
			      "long-lived %d: %s %s in session %c", i, e->ph, e->name, w->session);
		TU_WALK_CHECK(&w->f, e, tu_arg_int(e, "value") == w->long_next[i],
			      "long-lived seq");
		w->long_next[i]++;
		w->plain++;
		return 0;
	}
	TU_WALK_CHECK(&w->f, e, 0, "%s %s from unknown tid %" PRId64, e->ph, e->name, e->tid);
	return 1;
}

static void threads_that_exit_while_stopped_are_freed_by_the_next_session(void **state)
{
	(void)state;
	char pa[4096], pb[4096];
	struct session_thread parked[PARKED], long_lived[LONG_LIVED];
	pthread_t th_parked[PARKED], th_long[LONG_LIVED];
	struct churn_thread c[16];
	struct rtr_stats st;
	const size_t ring = (size_t)1 << 20; /* PARKED leaked rings would be 64 MiB */

	make_path(pa, sizeof(pa), "session-a");
	make_path(pb, sizeof(pb), "session-b");
	/* Warm-up, as in the churn test. */
	start(pa, ring);
	churn(c, 16, 16);
	assert_int_equal(rtr_stop(), 0);
	warm_stacks(PARKED + LONG_LIVED);
	uint64_t before = vm_size_kib();

	gate.step = 0;
	gate.done = 0;
	start(pa, ring);
	for (int i = 0; i < PARKED; i++) {
		parked[i].idx = i;
		spawn(&th_parked[i], parked_main, &parked[i]);
	}
	for (int i = 0; i < LONG_LIVED; i++) {
		long_lived[i].idx = i;
		spawn(&th_long[i], long_lived_main, &long_lived[i]);
	}
	gate_wait_done(PARKED + LONG_LIVED);
	assert_int_equal(rtr_stop(), 0);
	rtr_stats_get(&st);
	assert_int_equal(st.events_recorded, PARKED * 2 + LONG_LIVED * (LONG_SEQ + 1));
	assert_int_equal(st.events_written, st.events_recorded);
	assert_int_equal(st.threads, PARKED + LONG_LIVED);

	/* Stopped: the parked threads exit; the long-lived ones record (nothing). */
	gate_open(1);
	for (int i = 0; i < PARKED; i++)
		assert_int_equal(pthread_join(th_parked[i], NULL), 0);
	gate_wait_done(LONG_LIVED);
	print_message("VmSize %" PRIu64 " KiB with %d rings of exited threads waiting\n",
		      vm_size_kib(), PARKED);

	start(pb, ring);
	gate_open(2);
	for (int i = 0; i < LONG_LIVED; i++)
		assert_int_equal(pthread_join(th_long[i], NULL), 0);
	assert_int_equal(rtr_stop(), 0);
	uint64_t after = vm_size_kib();
	print_message("VmSize %" PRIu64 " KiB -> %" PRIu64 " KiB\n", before, after);
	assert_true(after <= before + LEAK_SLACK_KIB);

	rtr_stats_get(&st);
	assert_int_equal(st.events_recorded, LONG_LIVED * LONG_SEQ);
	assert_int_equal(st.events_written, LONG_LIVED * LONG_SEQ);
	assert_int_equal(st.events_dropped, 0);
	assert_int_equal(st.threads, LONG_LIVED);

	struct session_walk *w = tu_own(2, sizeof(*w));
	for (int s = 0; s < 2; s++) {
		w[s].f.pid = getpid();
		w[s].parked = parked;
		w[s].long_lived = long_lived;
		w[s].session = s == 0 ? 'A' : 'B';
		walk(s == 0 ? pa : pb, visit_session, &w[s].f);
		for (int i = 0; i < LONG_LIVED; i++) {
			assert_int_equal(w[s].long_next[i], LONG_SEQ);
			/* a thread gets its name in every session it records in */
			assert_true(w[s].long_named[i] >= 1);
		}
	}
	for (int i = 0; i < PARKED; i++)
		assert_int_equal(w[0].parked_events[i], 1);
	assert_int_equal(w[0].plain, PARKED + LONG_LIVED * LONG_SEQ);
	assert_int_equal(w[0].f.end_events, PARKED * 2 + LONG_LIVED * (LONG_SEQ + 1));
	assert_int_equal(w[1].plain, LONG_LIVED * LONG_SEQ);
	assert_int_equal(w[1].f.end_events, LONG_LIVED * LONG_SEQ);
	assert_int_equal(w[1].f.end_threads, LONG_LIVED);
}

/* ------------------------------------------------------------------------- */
/* fork                                                                       */

#define CHILD_MAIN_EVENTS   100
#define CHILD_THREAD_EVENTS 100
#define PARENT_MAIN_EVENTS  50

static int64_t helper_count;
static int helper_running;

/* Counter "helper" 0, 1, 2, ... until told to stop. */
static void *helper_main(void *arg)
{
	int64_t *tid = arg;
	int64_t i = 0;

	*tid = gettid();
	while (!__atomic_load_n(&helper_stop, __ATOMIC_ACQUIRE)) {
		rtr_counter_i64(CAT, "helper", i++);
		if (i == 1000)
			__atomic_store_n(&helper_running, 1, __ATOMIC_RELEASE);
		if ((i & 1023) == 0)
			sched_yield();
	}
	__atomic_store_n(&helper_count, i, __ATOMIC_RELEASE);
	return NULL;
}

static void *child_thread_main(void *arg)
{
	(void)arg;
	for (int i = 0; i < CHILD_THREAD_EVENTS; i++)
		rtr_counter_i64(CAT, "child thread", i);
	return NULL;
}

/* In the child: its own session. Exit codes name the failed step. */
static void fork_child(const char *child_path)
{
	struct rtr_config cfg;
	struct rtr_stats st;
	pthread_t th;

	rtr_instant(CAT, "child before start"); /* recorder off in the child: ignored */
	rtr_config_init(&cfg);
	cfg.path = child_path;
	cfg.on_full = RTR_ON_FULL_BLOCK;
	cfg.ring_bytes = (size_t)64 << 10;
	if (rtr_start(&cfg) != 0)
		_exit(10);
	for (int i = 0; i < CHILD_MAIN_EVENTS; i++) {
		struct rtr_arg a[] = {RTR_ARG_I64("i", i)};
		rtr_instant_args(CAT, "in child", a, 1);
	}
	if (pthread_create(&th, NULL, child_thread_main, NULL) != 0 || pthread_join(th, NULL) != 0)
		_exit(11);
	if (rtr_stop() != 0)
		_exit(12);
	rtr_stats_get(&st);
	if (st.events_recorded != CHILD_MAIN_EVENTS + CHILD_THREAD_EVENTS)
		_exit(13);
	if (st.events_written != st.events_recorded || st.events_dropped != 0)
		_exit(14);
	if (st.threads != 2)
		_exit(15);
	_exit(0);
}

struct fork_walk {
	struct frame f;
	int child; /* walking the child's file */
	int64_t main_tid, helper_tid;
	int main_before, main_after, child_main, child_thread, child_thread_next;
	int64_t helper_next;
	int64_t child_wrong_tid;
};

static int visit_fork(const struct tt_event *e, void *ctx)
{
	struct fork_walk *w = ctx;
	int r = visit_frame(&w->f, e);

	w->f.n++;
	if (r != 0)
		return r > 0;
	if (tu_is(e->ph, "M")) {
		TU_WALK_CHECK(&w->f, e, tu_is(e->name, "thread_name"), "M %s", e->name);
		return 0;
	}
	if (w->child) {
		if (tu_is(e->name, "in child")) {
			/* the forking thread is the child's main thread: tid == child pid
			 * (checked last, after everything else) */
			if (e->tid != w->f.pid)
				w->child_wrong_tid = e->tid;
			TU_WALK_CHECK(&w->f, e, tu_arg_int(e, "i") == w->child_main, "child seq");
			w->child_main++;
			return 0;
		}
		TU_WALK_CHECK(&w->f, e, tu_is(e->ph, "C") && tu_is(e->name, "child thread"),
			      "parent's event %s %s in the child's file", e->ph, e->name);
		TU_WALK_CHECK(&w->f, e,
			      e->tid != w->f.pid && e->tid != w->main_tid &&
				      e->tid != w->helper_tid,
			      "child thread tid %" PRId64, e->tid);
		TU_WALK_CHECK(&w->f, e, tu_arg_int(e, "value") == w->child_thread,
			      "child thread seq");
		w->child_thread++;
		return 0;
	}
	if (e->tid == w->helper_tid) {
		TU_WALK_CHECK(&w->f, e, tu_is(e->ph, "C") && tu_is(e->name, "helper"),
			      "helper event");
		TU_WALK_CHECK(&w->f, e, tu_arg_int(e, "value") == w->helper_next,
			      "helper seq %" PRId64 ", want %" PRId64, tu_arg_int(e, "value"),
			      w->helper_next);
		w->helper_next++;
		return 0;
	}
	TU_WALK_CHECK(&w->f, e, e->tid == w->main_tid, "%s %s from tid %" PRId64, e->ph, e->name,
		      e->tid);
	if (tu_is(e->name, "parent before fork")) {
		TU_WALK_CHECK(&w->f, e, w->main_after == 0, "order");
		w->main_before++;
	} else {
		TU_WALK_CHECK(&w->f, e, tu_is(e->name, "parent after fork"),
			      "%s in the parent's file", e->name);
		w->main_after++;
	}
	return 0;
}

static void fork_gives_each_process_its_own_complete_file(void **state)
{
	(void)state;
	char pp[4096], pc[4096];
	pthread_t helper;
	int64_t helper_tid = 0;
	struct rtr_stats st;

	make_path(pp, sizeof(pp), "fork-parent");
	make_path(pc, sizeof(pc), "fork-child");
	__atomic_store_n(&helper_stop, 0, __ATOMIC_RELEASE);
	start(pp, (size_t)64 << 10);
	__atomic_store_n(&helper_running, 0, __ATOMIC_RELEASE);
	assert_int_equal(pthread_create(&helper, NULL, helper_main, &helper_tid), 0);
	/* Fork while it records, not while it starts: a sanitizer's thread start-up
	 * takes the sanitizer's allocator lock, which a fork would leave held in the
	 * child. */
	while (!__atomic_load_n(&helper_running, __ATOMIC_ACQUIRE))
		sched_yield();
	for (int i = 0; i < PARENT_MAIN_EVENTS; i++)
		rtr_instant(CAT, "parent before fork");

	pid_t pid = tu_fork();
	if (pid == 0)
		fork_child(pc); /* does not return */

	for (int i = 0; i < PARENT_MAIN_EVENTS; i++)
		rtr_instant(CAT, "parent after fork");
	int status = tu_wait_child(pid, TU_CHILD_TIMEOUT_S);
	__atomic_store_n(&helper_stop, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(helper, NULL), 0);
	assert_int_equal(rtr_stop(), 0);
	tu_expect_exit_0(status);

	int64_t helpers = __atomic_load_n(&helper_count, __ATOMIC_ACQUIRE);
	rtr_stats_get(&st);
	assert_int_equal(st.events_recorded, (uint64_t)(2 * PARENT_MAIN_EVENTS + helpers));
	assert_int_equal(st.events_written, st.events_recorded);

	struct fork_walk w;
	memset(&w, 0, sizeof(w));
	w.f.pid = getpid();
	w.main_tid = gettid();
	w.helper_tid = helper_tid;
	walk(pp, visit_fork, &w.f);
	assert_int_equal(w.main_before, PARENT_MAIN_EVENTS);
	assert_int_equal(w.main_after, PARENT_MAIN_EVENTS);
	assert_int_equal(w.helper_next, helpers);
	assert_int_equal(w.f.end_events, 2 * PARENT_MAIN_EVENTS + helpers);

	memset(&w, 0, sizeof(w));
	w.f.pid = pid;
	w.child = 1;
	w.main_tid = gettid();
	w.helper_tid = helper_tid;
	walk(pc, visit_fork, &w.f);
	assert_int_equal(w.child_main, CHILD_MAIN_EVENTS);
	assert_int_equal(w.child_thread, CHILD_THREAD_EVENTS);
	assert_int_equal(w.f.end_events, CHILD_MAIN_EVENTS + CHILD_THREAD_EVENTS);
	assert_int_equal(w.f.end_threads, 2);
	if (w.child_wrong_tid != 0)
		fail_msg("the child's main thread (tid %d) recorded with tid %" PRId64
			 ", the tid its ring had in the parent",
			 (int)pid, w.child_wrong_tid);
}

/* Every test leaves the recorder stopped and frees what it owns, pass or fail. */
#define TEST(f) cmocka_unit_test_teardown(f, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		TEST(thread_churn_keeps_every_event_and_leaks_no_ring),
		TEST(threads_exit_while_another_fills_chunks),
		TEST(threads_that_exit_while_stopped_are_freed_by_the_next_session),
		TEST(fork_gives_each_process_its_own_complete_file),
	};

	tu_filter_from_env();
	return cmocka_run_group_tests_name("threads", tests, NULL, NULL);
}
