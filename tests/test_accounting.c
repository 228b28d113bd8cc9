/* SPDX-License-Identifier: MIT */
/*
 * The session's totals are exact: recorded = written + dropped, in rtr_stats_get()
 * and in the end marker, however the session ends. Threads that keep recording while
 * rtr_stop() runs; records the writer cannot trust (a program that scribbles over its
 * ring), which are skipped and counted, never followed; events on a track that could
 * not be made.
 */
#include <ringtrace.h>

#include "ring/ring.h"
#include "test_util.h"
#include "trace_read.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#if TU_UNDER_ASAN
/* The test's own SIGSEGV handler must run (see the stuck event below). */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return TU_ASAN_OWN_SEGV;
}
#endif

#define CAT "accounting"

static char path[4096];

static void make_path(const char *name)
{
	tu_own_file(path, sizeof(path), "accounting", name, ".json");
}

/* Events in the file besides markers and metadata; an X line counts two when it
 * folds a B and its E (its args then say nothing of it: rings write them so). */
struct count_walk {
	char err[256];
	uint64_t events;
	const struct tt_event *end;
	int64_t end_events, end_dropped, end_corrupt, end_no_track;
	int end_has_waited;
	int64_t end_waited, end_waited_ns;
	int64_t named[5];
};

static const char *const names[5] = {"before", "after", "good", "lost track", "stuck"};

static int visit_count(const struct tt_event *e, void *ctx)
{
	struct count_walk *w = ctx;

	if (tu_is(e->name, "ringtrace: end")) {
		w->end_events = tu_arg_int(e, "events");
		w->end_dropped = tu_arg_int(e, "dropped");
		w->end_corrupt = tu_arg_int(e, "dropped_corrupt");
		w->end_no_track = tu_arg_int(e, "dropped_no_track");
		w->end_has_waited = tt_arg(e, "waited") != NULL;
		if (w->end_has_waited) {
			w->end_waited = tu_arg_int(e, "waited");
			w->end_waited_ns = tu_arg_int(e, "waited_ns");
		}
		return 0;
	}
	if (tu_is(e->ph, "M") || tu_is(e->name, "ringtrace: start") ||
	    tu_is(e->name, "ringtrace: dropped"))
		return 0;
	/* a slice recorded as rtr_begin + rtr_end and written as one X line */
	w->events += tu_is(e->ph, "X") && tu_is(e->name, "span") ? 2 : 1;
	for (int i = 0; i < 5; i++)
		w->named[i] += tu_is(e->name, names[i]);
	return 0;
}

/* Walk the file and check it against the session's stats; returns the walk. */
static struct count_walk check_file(const struct rtr_stats *st)
{
	struct count_walk w;

	memset(&w, 0, sizeof(w));
	struct tt_trace info = tu_walk(path, TT_CHECK_ESCAPES, visit_count, &w, w.err);
	assert_true(info.complete);
	assert_int_equal(st->events_recorded, st->events_written + st->events_dropped);
	assert_int_equal(w.events, st->events_written);
	assert_int_equal(w.end_events, (int64_t)st->events_written);
	assert_int_equal(w.end_dropped, (int64_t)st->events_dropped);
	assert_int_equal(w.end_corrupt, (int64_t)st->events_dropped_corrupt);
	assert_int_equal(w.end_no_track, (int64_t)st->events_dropped_no_track);
	if (w.end_has_waited) {
		assert_int_equal(w.end_waited, (int64_t)st->events_waited_full);
		assert_int_equal(w.end_waited_ns, (int64_t)st->waited_ns);
	}
	return w;
}

/* ------------------------------------------------------------------------- */
/* Threads recording through the stop                                         */

#define RACERS 3

static int racers_go;

static void *racer_main(void *arg)
{
	uint64_t i = 0;
	struct rtr_track *track = arg;

	while (__atomic_load_n(&racers_go, __ATOMIC_ACQUIRE)) {
		rtr_begin(CAT, "span");
		rtr_end(CAT, "span");
		rtr_counter_i64(CAT, "i", (int64_t)i);
		rtr_instant_v(CAT, "args", RTR_ARG_I64("i", i), RTR_ARG_STR_COPY("s", "abc"));
		if ((i & 63) == 0)
			rtr_track_instant(track, CAT, "on track", rtr_now_ns(), NULL, 0);
		i++;
	}
	return NULL;
}

static void stop_while_threads_record_keeps_totals_exact(void **state)
{
	(void)state;
	int rounds = (int)tu_scaled(12, 4);
	struct rtr_track_desc desc = {.process = "accounting", .lane = "lane"};
	struct rtr_track *track = rtr_track_create(&desc);

	assert_non_null(track);
	make_path("race");
	for (int round = 0; round < rounds; round++) {
		pthread_t th[RACERS];
		struct rtr_stats st;
		struct timespec run = {0, (2 + round % 5) * 1000 * 1000};

		/* Small rings in drop mode: drops race the stop too. */
		tu_start(path, TU_IO_DEFAULT, RTR_ON_FULL_DROP, 1 << 14);
		__atomic_store_n(&racers_go, 1, __ATOMIC_RELEASE);
		for (int i = 0; i < RACERS; i++)
			assert_int_equal(pthread_create(&th[i], NULL, racer_main, track), 0);
		nanosleep(&run, NULL);
		assert_int_equal(rtr_stop(), 0); /* the racers go on, into a stopped recorder */
		rtr_stats_get(&st);
		__atomic_store_n(&racers_go, 0, __ATOMIC_RELEASE);
		for (int i = 0; i < RACERS; i++)
			pthread_join(th[i], NULL);
		struct rtr_stats later;
		rtr_stats_get(&later);
		assert_memory_equal(&st, &later, sizeof(st)); /* nothing moved after the stop */
		assert_int_equal(st.events_dropped_corrupt, 0);
		assert_int_equal(st.events_dropped_io, 0);
		check_file(&st);
	}
}

/*
 * An event call held inside its reserved window while rtr_stop() runs: its argument
 * array sits on a page the test made unreadable, so the copy faults, and the SIGSEGV
 * handler waits until a third thread lets it go, 100 ms into the stop. The stop must
 * wait for it (it began while the recorder ran) and write it.
 */
static const int64_t *stuck_page;
static int stuck_in, stuck_go; /* atomics: handler <-> test */

static void hold_until_released(void)
{
	__atomic_store_n(&stuck_in, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&stuck_go, __ATOMIC_ACQUIRE)) {
		struct timespec ts = {0, 1000 * 1000};
		nanosleep(&ts, NULL);
	}
}

static void *stuck_main(void *arg)
{
	(void)arg;
	rtr_instant_v(CAT, "stuck", RTR_ARG_I64_ARRAY("v", stuck_page, 2), RTR_ARG_I64("n", 2));
	return NULL;
}

static void *release_main(void *arg)
{
	struct timespec ts = {0, 100 * 1000 * 1000};

	(void)arg;
	nanosleep(&ts, NULL);
	__atomic_store_n(&stuck_go, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void stop_waits_for_an_event_call_in_progress(void **state)
{
	(void)state;
	pthread_t stuck, release;
	struct rtr_stats st;

	stuck_in = stuck_go = 0;
	stuck_page = tu_trap_arm(hold_until_released, NULL, 0);
	make_path("stuck");
	tu_start(path, TU_IO_DEFAULT, RTR_ON_FULL_BLOCK, 1 << 16);
	rtr_instant(CAT, "before");
	assert_int_equal(pthread_create(&stuck, NULL, stuck_main, NULL), 0);
	while (!__atomic_load_n(&stuck_in, __ATOMIC_ACQUIRE))
		sched_yield();
	assert_int_equal(pthread_create(&release, NULL, release_main, NULL), 0);
	assert_int_equal(rtr_stop(), 0);
	pthread_join(release, NULL);
	pthread_join(stuck, NULL);
	assert_int_equal(tu_trap_hits(), 1);
	tu_trap_disarm();

	rtr_stats_get(&st);
	assert_int_equal(st.events_recorded, 2);
	assert_int_equal(st.events_written, 2);
	assert_int_equal(st.events_dropped, 0);
	struct count_walk w = check_file(&st);
	assert_int_equal(w.named[0], 1);
	assert_int_equal(w.named[4], 1);
}

/* ------------------------------------------------------------------------- */
/* Records the writer must not trust                                          */

/* stderr into a file while fn runs; returns what was written there (static). */
static const char *stderr_of(void (*fn)(void))
{
	static char text[4096];
	char err_path[4096];

	tu_own_file(err_path, sizeof(err_path), "accounting", "stderr", ".txt");
	int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	fflush(stderr);
	int saved = dup(2);
	dup2(fd, 2);
	close(fd);
	fn();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	FILE *f = fopen(err_path, "re");
	assert_non_null(f);
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	return text;
}

/* Publish one header record as the calling thread's next event, as is. */
static void publish_raw(const struct rtr__rec *raw, const void *ext, uint32_t ext_bytes)
{
	uint32_t nrec = 1 + (ext_bytes + RTR_REC_BYTES - 1) / RTR_REC_BYTES, head;
	struct rtr__ring *r = rtr__reserve(nrec, &head);

	assert_non_null(r);
	r->slots[head & r->mask] = *raw;
	for (uint32_t i = 0; i < ext_bytes; i++)
		((char *)&r->slots[(head + 1 + i / RTR_REC_BYTES) & r->mask])[i % RTR_REC_BYTES] =
			((const char *)ext)[i];
	rtr__publish(r, head, nrec);
}

static void record_unframed(void)
{
	/* A length past anything published: where the next event starts is unknown. */
	struct rtr__rec bad = {.ts = 1, .a = 0, .b = 0, .kind = RTR__K_INSTANT, .ext = 1u << 30};
	/* An unknown kind. */
	struct rtr__rec unknown = {.ts = 1, .kind = 0xee};

	tu_start(path, TU_IO_DEFAULT, RTR_ON_FULL_BLOCK, 1 << 16);
	rtr_instant(CAT, "before");
	assert_int_equal(rtr_flush(), 0);
	publish_raw(&bad, NULL, 0);
	assert_int_equal(rtr_flush(), 0);
	publish_raw(&unknown, NULL, 0);
	assert_int_equal(rtr_flush(), 0);
	rtr_instant(CAT, "after");
	assert_int_equal(rtr_stop(), 0);
}

static void unframed_record_is_skipped_counted_and_reported_once(void **state)
{
	(void)state;
	struct rtr_stats st;

	make_path("unframed");
	const char *err = stderr_of(record_unframed);
	rtr_stats_get(&st);
	assert_non_null(strstr(err, "malformed record"));
	assert_null(strstr(strstr(err, "malformed record") + 1, "malformed record"));
	assert_int_equal(st.events_dropped_corrupt, 2);
	assert_int_equal(st.events_recorded, 4);
	struct count_walk w = check_file(&st);
	assert_int_equal(w.events, 2);
	assert_int_equal(w.named[0], 1);
	assert_int_equal(w.named[1], 1);
}

static void record_bad_contents(void)
{
	static const char key[] = "k";
	uint64_t pair[2] = {(uintptr_t)key, 100}; /* a copied string of 100 bytes ... */
	char ext[1 + sizeof(pair)];
	/* ... that is not there */
	struct rtr__rec bad = {.ts = 1,
			       .a = (uintptr_t) "bad",
			       .b = (uintptr_t)CAT,
			       .kind = RTR__K_INSTANT,
			       .nargs = 1,
			       .ext = sizeof(ext)};
	/* A copied name longer than its event. */
	uint32_t name_len = 999;
	struct rtr__rec long_name = {.ts = 1,
				     .kind = RTR__K_INSTANT,
				     .flags = RTR__F_NAME_COPY,
				     .ext = sizeof(name_len)};

	ext[0] = RTR_ARG_TYPE_STR_COPY;
	memcpy(ext + 1, pair, sizeof(pair));
	tu_start(path, TU_IO_DEFAULT, RTR_ON_FULL_BLOCK, 1 << 16);
	rtr_instant(CAT, "good");
	publish_raw(&bad, ext, sizeof(ext));
	rtr_instant(CAT, "good"); /* framed by the bad one's length: read as usual */
	publish_raw(&long_name, &name_len, sizeof(name_len));
	rtr_instant_v(CAT, "good", RTR_ARG_STR_COPY("s", "fine"));
	assert_int_equal(rtr_stop(), 0);
}

static void record_with_bad_contents_is_skipped_alone(void **state)
{
	(void)state;
	struct rtr_stats st;

	make_path("contents");
	const char *err = stderr_of(record_bad_contents);
	rtr_stats_get(&st);
	assert_non_null(strstr(err, "malformed record"));
	assert_int_equal(st.events_dropped_corrupt, 2);
	assert_int_equal(st.events_recorded, 5);
	struct count_walk w = check_file(&st);
	assert_int_equal(w.named[2], 3);
}

/* ------------------------------------------------------------------------- */
/* Tracks that could not be made                                              */

static void events_on_a_missing_track_are_counted(void **state)
{
	(void)state;
	struct rtr_stats st;
	struct rtr_arg arg = RTR_ARG_I64("v", 1);

	make_path("notrack");
	tu_start(path, TU_IO_DEFAULT, RTR_ON_FULL_BLOCK, 1 << 16);
	rtr_track_complete(NULL, CAT, "lost track", 1, 2, NULL, 0);
	rtr_track_instant(NULL, CAT, "lost track", 1, NULL, 0);
	rtr_track_counter(NULL, CAT, "lost track", 1, &arg, 1);
	rtr_track_flow_start(NULL, CAT, "lost track", 1, 7);
	rtr_track_flow_end(NULL, CAT, "lost track", 1, 7);
	rtr_instant(CAT, "good");
	assert_int_equal(rtr_stop(), 0);
	rtr_stats_get(&st);
	assert_int_equal(st.events_dropped_no_track, 5);
	assert_int_equal(st.events_recorded, 6);
	assert_int_equal(st.events_written, 1);
	struct count_walk w = check_file(&st);
	assert_int_equal(w.named[3], 0);
}

/* ------------------------------------------------------------------------- */
/* Block mode's waits                                                         */

/* A ring of 128 records fills long before the writer wakes: the producer waits, and
 * how often and how long is counted, in the stats and the end marker. */
static void record_spans_in_a_small_ring(const char *name, int on_full, struct rtr_stats *st)
{
	make_path(name);
	tu_start(path, TU_IO_DEFAULT, on_full, 1 << 12);
	for (int i = 0; i < 100000; i++) {
		rtr_begin(CAT, "span");
		rtr_end(CAT, "span");
	}
	assert_int_equal(rtr_stop(), 0);
	rtr_stats_get(st);
}

static void block_mode_counts_its_waits(void **state)
{
	(void)state;
	struct rtr_stats st;

	record_spans_in_a_small_ring("waits", RTR_ON_FULL_BLOCK, &st);
	assert_int_equal(st.version, RTR_STATS_VERSION);
	assert_int_equal(st.events_dropped, 0);
	assert_int_equal(st.events_written, 200000);
	assert_true(st.events_waited_full > 0);
	assert_true(st.events_waited_full <= st.events_recorded);
	assert_true(st.waited_ns >= st.events_waited_full); /* each wait took some time */
	struct count_walk w = check_file(&st);
	assert_true(w.end_has_waited);

	/* drop mode drops instead, and says nothing of waits */
	record_spans_in_a_small_ring("nowaits", RTR_ON_FULL_DROP, &st);
	assert_int_equal(st.events_waited_full, 0);
	assert_int_equal(st.waited_ns, 0);
	w = check_file(&st);
	assert_false(w.end_has_waited);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(stop_while_threads_record_keeps_totals_exact,
					  tu_teardown),
		cmocka_unit_test_teardown(stop_waits_for_an_event_call_in_progress, tu_teardown),
		cmocka_unit_test_teardown(unframed_record_is_skipped_counted_and_reported_once,
					  tu_teardown),
		cmocka_unit_test_teardown(record_with_bad_contents_is_skipped_alone, tu_teardown),
		cmocka_unit_test_teardown(events_on_a_missing_track_are_counted, tu_teardown),
		cmocka_unit_test_teardown(block_mode_counts_its_waits, tu_teardown),
	};
	tu_filter_from_env();
	return cmocka_run_group_tests_name("accounting", tests, NULL, NULL);
}
