/* SPDX-License-Identifier: MIT */
/*
 * Event calls from signal handlers. A handler that records on a thread that was itself
 * inside an event call must neither overwrite that event nor corrupt the ring: its
 * event is dropped and counted as reentrant, everything else comes back exact.
 *
 * The first test makes the nesting certain: the interrupted call copies an argument
 * array out of a page the test has made unreadable, so the copy, inside the call's
 * reserved window, faults; the SIGSEGV handler records, opens the page and returns,
 * and the copy goes on. The second sends SIGUSR1 every few microseconds to a thread
 * that records 4-argument events, as a sampling profiler would.
 */
#include <ringtrace.h>

#include "test_util.h"
#include "trace_read.h"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#if TU_UNDER_ASAN
/* The test's own SIGSEGV handler must run: it opens the page and the copy goes on. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return TU_ASAN_OWN_SEGV;
}
#endif

#define CAT "signals"

static char path[4096];

static void make_path(const char *name)
{
	tu_own_file(path, sizeof(path), "signals", name, ".json");
}

static void load(struct tt_trace *t)
{
	if (tt_load(path, TT_CHECK_ESCAPES, t) != 0)
		fail_msg("%s", t->error);
	assert_true(t->complete);
}

/* The events of t as tu_events_of() gives them, less the drop counter's samples;
 * *last_dropped gets the counter's last value (the session's drops shown), or 0. */
static size_t events_less_drops(const struct tt_trace *t, const struct tt_event **out, size_t max,
				int64_t *last_dropped)
{
	const struct tt_event *all[16];
	size_t n = tu_events_of(t, all, 16), k = 0;

	*last_dropped = 0;
	for (size_t i = 0; i < n; i++) {
		if (tu_is(all[i]->name, "ringtrace: dropped")) {
			*last_dropped = tu_arg_int(all[i], "events");
			continue;
		}
		assert_true(k < max);
		out[k++] = all[i];
	}
	return k;
}

/* Every count the session gives agrees: stats, end marker, events in the file. */
static void check_totals(const struct tt_trace *t, const struct rtr_stats *st, size_t in_file)
{
	const struct tt_event *end = tu_end_marker(t);

	assert_int_equal(st->events_recorded, st->events_written + st->events_dropped);
	assert_int_equal(st->events_written, in_file);
	assert_int_equal(tt_arg(end, "events")->i, (int64_t)st->events_written);
	assert_int_equal(tt_arg(end, "dropped")->i, (int64_t)st->events_dropped);
	assert_int_equal(tt_arg(end, "dropped_reentrant")->i,
			 (int64_t)st->events_dropped_reentrant);
	assert_int_equal(tt_arg(end, "dropped_corrupt")->i, 0);
}

/* ------------------------------------------------------------------------- */
/* A handler inside an event call, for certain                                */

static void record_in_handler(void)
{
	rtr_instant_v(CAT, "in handler", RTR_ARG_I64("a", 1), RTR_ARG_I64("b", 2),
		      RTR_ARG_I64("c", 3), RTR_ARG_I64("d", 4));
	rtr_begin(CAT, "handler slice");
	rtr_end(CAT, "handler slice");
}

static void handler_inside_an_event_call_is_dropped_and_counted(void **state)
{
	(void)state;
	struct tt_trace t = {0};
	struct rtr_stats st;
	const struct tt_event *e[8];
	static const int64_t fill[] = {10, -20, 30};

	const int64_t *values = tu_trap_arm(record_in_handler, fill, sizeof(fill));
	make_path("trap");
	tu_start(path, TU_IO_DEFAULT, RTR_ON_FULL_BLOCK, 1 << 16);
	rtr_begin(CAT, "outer");
	rtr_instant_v(CAT, "copies", RTR_ARG_I64_ARRAY("v", values, 3), RTR_ARG_I64("n", 3));
	rtr_end(CAT, "outer");
	assert_int_equal(rtr_stop(), 0);
	assert_int_equal(tu_trap_hits(), 1);
	tu_trap_disarm();

	rtr_stats_get(&st);
	/* the handler's instant, its B, and the E that went with the B */
	assert_int_equal(st.events_dropped_reentrant, 3);
	assert_int_equal(st.events_dropped, 3);
	assert_int_equal(st.events_recorded, 6);
	load(&t);
	int64_t shown;
	size_t n = events_less_drops(&t, e, 8, &shown);
	assert_int_equal(n, 2);
	assert_int_equal(shown, 3);   /* the drops are on the timeline too */
	check_totals(&t, &st, n + 1); /* "outer" is one X line for two events */
	assert_string_equal(e[0]->ph, "i");
	assert_string_equal(e[0]->name, "copies");
	assert_string_equal(tt_arg(e[0], "v")->raw, "[10,-20,30]");
	assert_int_equal(tu_arg_int(e[0], "n"), 3);
	assert_string_equal(e[1]->ph, "X");
	assert_string_equal(e[1]->name, "outer");
	assert_true(e[1]->ts_ns <= e[0]->ts_ns);
	assert_true(e[1]->ts_ns + e[1]->dur_ns >= e[0]->ts_ns);
	tt_free(&t);
}

/* An E lost inside an event call leaves its B open: the enclosing E must go too. */
static void end_in_handler(void)
{
	rtr_end(CAT, "inner"); /* the program's E, from a handler: dropped */
}

static void end_lost_in_a_handler_drops_the_enclosing_end(void **state)
{
	(void)state;
	struct tt_trace t = {0};
	struct rtr_stats st;
	const struct tt_event *e[8];

	const int64_t *values = tu_trap_arm(end_in_handler, NULL, 0);
	make_path("trap-end");
	tu_start(path, TU_IO_DEFAULT, RTR_ON_FULL_BLOCK, 1 << 16);
	rtr_begin(CAT, "outer");
	rtr_begin(CAT, "inner");
	rtr_instant_v(CAT, "copies", RTR_ARG_I64_ARRAY("v", values, 2));
	rtr_begin(CAT, "after");
	rtr_end(CAT, "after");
	rtr_end(CAT, "outer"); /* would end "inner" in a viewer: dropped */
	assert_int_equal(rtr_stop(), 0);
	assert_int_equal(tu_trap_hits(), 1);
	tu_trap_disarm();

	rtr_stats_get(&st);
	assert_int_equal(st.events_dropped_reentrant, 2);
	load(&t);
	int64_t shown;
	size_t n = events_less_drops(&t, e, 8, &shown);
	assert_int_equal(n, 4);
	assert_int_equal(shown, 2);
	check_totals(&t, &st, 4 + 1); /* "after" is one X line for two events */
	/* outer and inner never end: the stop shows them open, as B lines at the end */
	assert_string_equal(e[0]->name, "copies");
	assert_string_equal(tt_arg(e[0], "v")->raw, "[0,0]");
	assert_string_equal(e[1]->name, "after");
	assert_string_equal(e[1]->ph, "X");
	assert_string_equal(e[2]->name, "outer");
	assert_string_equal(e[2]->ph, "B");
	assert_string_equal(e[3]->name, "inner");
	assert_string_equal(e[3]->ph, "B");
	assert_true(e[2]->ts_ns <= e[3]->ts_ns);
	assert_true(e[3]->ts_ns <= e[0]->ts_ns);
	assert_true(e[0]->ts_ns <= e[1]->ts_ns);
	tt_free(&t);
}

/* ------------------------------------------------------------------------- */
/* A sampling signal every few microseconds                                   */

static pthread_t target;
static int kicker_stop;
static uint64_t kicks;
/* Touched only on the target thread (the handler runs there). */
static volatile uint64_t handler_calls;

static void on_usr1(int sig)
{
	(void)sig;
	int64_t k = (int64_t)++handler_calls;

	rtr_instant_v(CAT, "sample", RTR_ARG_I64("k", k), RTR_ARG_I64("k2", 2 * k),
		      RTR_ARG_I64("k3", 3 * k), RTR_ARG_STR_COPY("from", "handler"));
}

static void spin_ns(uint64_t ns)
{
	uint64_t a = tu_mono_ns();

	while (tu_mono_ns() - a < ns)
		;
}

static void *kicker_main(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&kicker_stop, __ATOMIC_ACQUIRE)) {
		pthread_kill(target, SIGUSR1);
		kicks++;
		spin_ns(2000);
	}
	return NULL;
}

struct sample_walk {
	char err[256];
	int64_t main_seen, samples, depth;
	char open[8][16];
};

static int visit_sample(const struct tt_event *e, void *ctx)
{
	struct sample_walk *w = ctx;

	if (tu_is(e->name, "sample")) {
		int64_t k = tu_arg_int(e, "k");
		TU_WALK_CHECK(w, e,
			      k > 0 && tu_arg_int(e, "k2") == 2 * k && tu_arg_int(e, "k3") == 3 * k,
			      "a sample with torn arguments");
		TU_WALK_CHECK(w, e, tt_arg(e, "from") && tu_is(tt_arg(e, "from")->s, "handler"),
			      "a sample without its string");
		w->samples++;
	} else if (tu_is(e->name, "main")) {
		int64_t i = tu_arg_int(e, "i");
		TU_WALK_CHECK(w, e, i == w->main_seen, "main event %lld, expected %lld",
			      (long long)i, (long long)w->main_seen);
		TU_WALK_CHECK(w, e, tu_arg_int(e, "i2") == 2 * i && tu_arg_int(e, "i3") == 3 * i,
			      "a main event with torn arguments");
		TU_WALK_CHECK(w, e, tt_arg(e, "from") && tu_is(tt_arg(e, "from")->s, "main"),
			      "a main event without its string");
		w->main_seen++;
	} else if (tu_is(e->ph, "B")) {
		TU_WALK_CHECK(w, e, w->depth < 8, "too deep");
		snprintf(w->open[w->depth++], sizeof(w->open[0]), "%s", e->name);
	} else if (tu_is(e->ph, "E")) {
		TU_WALK_CHECK(w, e, w->depth > 0 && tu_is(e->name, w->open[w->depth - 1]),
			      "an E that ends the wrong slice");
		w->depth--;
	}
	return 0;
}

static void sampling_signal_on_a_recording_thread_loses_nothing_silently(void **state)
{
	(void)state;
	struct sigaction sa, old;
	pthread_t kicker;
	struct rtr_stats st;
	struct sample_walk w;
	uint64_t n = tu_scaled(200000, 20000);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
	handler_calls = 0;
	kicks = 0;
	kicker_stop = 0;
	target = pthread_self();

	make_path("sampled");
	tu_start(path, TU_IO_DEFAULT, RTR_ON_FULL_BLOCK, 1 << 20);
	assert_int_equal(pthread_create(&kicker, NULL, kicker_main, NULL), 0);
	for (uint64_t i = 0; i < n; i++) {
		/* some work between events, so that samples land in and out of calls */
		for (volatile int k = 0; k < 100; k++)
			;
		rtr_begin(CAT, "step");
		rtr_instant_v(CAT, "main", RTR_ARG_I64("i", i), RTR_ARG_I64("i2", 2 * i),
			      RTR_ARG_I64("i3", 3 * i), RTR_ARG_STR_COPY("from", "main"));
		rtr_end(CAT, "step");
	}
	__atomic_store_n(&kicker_stop, 1, __ATOMIC_RELEASE);
	pthread_join(kicker, NULL);
	/* Signals still pending arrive before the stop, on this thread. */
	sigset_t usr1;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	assert_int_equal(rtr_stop(), 0);
	pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
	sigaction(SIGUSR1, &old, NULL);

	rtr_stats_get(&st);
	memset(&w, 0, sizeof(w));
	struct tt_trace info = tu_walk(path, TT_CHECK_ESCAPES, visit_sample, &w, w.err);
	assert_true(info.complete);
	print_message("%llu kicks, %llu handler calls, %llu reentrant drops\n",
		      (unsigned long long)kicks, (unsigned long long)handler_calls,
		      (unsigned long long)st.events_dropped_reentrant);
	assert_int_equal(w.main_seen, (int64_t)n);
	assert_int_equal(w.depth, 0);
	/* Block mode: a sample is either in the file or counted as reentrant. */
	assert_int_equal((uint64_t)w.samples + st.events_dropped_reentrant, handler_calls);
	assert_int_equal(st.events_dropped, st.events_dropped_reentrant);
	assert_int_equal(st.events_recorded, st.events_written + st.events_dropped);
	assert_int_equal(st.events_recorded, 3 * n + handler_calls);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(handler_inside_an_event_call_is_dropped_and_counted,
					  tu_teardown),
		cmocka_unit_test_teardown(end_lost_in_a_handler_drops_the_enclosing_end,
					  tu_teardown),
		cmocka_unit_test_teardown(
			sampling_signal_on_a_recording_thread_loses_nothing_silently, tu_teardown),
	};
	tu_filter_from_env();
	return cmocka_run_group_tests_name("signals", tests, NULL, NULL);
}
