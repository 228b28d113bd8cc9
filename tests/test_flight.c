/* SPDX-License-Identifier: MIT */
/*
 * The flight recorder: a window of the newest flight_mb MiB of lines in
 * memory, nothing on disk until a snapshot; rtr_snapshot() with a path and with the
 * numbered pattern, the last snapshot at rtr_stop() (or none), what is open at the
 * window's start and at the snapshot, the counts, the memory, and the environment.
 * Every snapshot is parsed back strictly and its events compared with what was
 * recorded (the workload of rotation_check.h).
 */
#include "rotation_check.h"

#include <errno.h>
#include <pthread.h>

#define MIB ((uint64_t)1 << 20)
static char path[4096];

/* The pattern <tmp>/flight-<name>-<pid>.json in path; its snapshots are
 * <prefix>.NNNN.json. */
static void name_files(const char *name)
{
	tu_temp_path(path, sizeof(path), "flight", name, ".json");
	snprintf(files.prefix, sizeof(files.prefix), "%.*s", (int)(strlen(path) - 5), path);
	files.suffix = ".json";
	wl_glob_remove(&files);
}

static void config(struct rtr_config *cfg, unsigned flight_mb, unsigned at_exit)
{
	rtr_config_init(cfg);
	cfg->path = path;
	cfg->on_full = RTR_ON_FULL_BLOCK;
	cfg->ring_bytes = 1 << 20;
	cfg->mode = RTR_MODE_FLIGHT;
	cfg->flight_mb = flight_mb;
	cfg->flight_at_exit = at_exit;
}

/* ------------------------------------------------------------------------- */
/* A snapshot, read back                                                      */

#define MAX_TIDS 4

struct thread_lines {
	int64_t tid;
	uint64_t last_ts; /* its latest time: an event's, an X's end */
	uint64_t lines;	  /* before the "open" ones */
	uint64_t open_x;  /* "open" X lines so far, innermost first */
	int named;
};

struct snap {
	struct tt_trace t;
	struct thread_lines th[MAX_TIDS];
	size_t nth;
	uint64_t events;	       /* real events: an X its E, and its B unless continued */
	uint64_t unsure;	       /* Bs begun before the window's first line: held, they
					* count in the chunk they came in, out or in */
	uint64_t conts;		       /* lines with "continued" */
	uint64_t opens;		       /* lines with "open" */
	int64_t marker_conts;	       /* the end marker's "continued" */
	int64_t first_tick, last_tick; /* the ticks' i, contiguous */
	uint64_t ticks;
	int async_open;
	uint64_t window_start; /* the first line's time */
	int has_start;
	const struct tt_event *last_real; /* the last real event */
};

static struct thread_lines *thread_of(struct snap *s, int64_t tid)
{
	for (size_t i = 0; i < s->nth; i++)
		if (s->th[i].tid == tid)
			return &s->th[i];
	assert_true(s->nth < MAX_TIDS);
	memset(&s->th[s->nth], 0, sizeof(s->th[0]));
	s->th[s->nth].tid = tid;
	return &s->th[s->nth++];
}

/* An X's B: counted by the window when it begins inside it; one that began before
 * the window's first line was counted in the chunk it came in, which may have fallen
 * out. */
static void count_begin(struct snap *s, const struct tt_event *x)
{
	if (x->ts_ns >= s->window_start)
		s->events++;
	else
		s->unsure++;
}

/*
 * Load the snapshot at p and check what holds for every snapshot: strict JSON, the
 * flight start marker (snapshot no), each thread named before its lines, the async
 * span begun again ("continued") before every event, each slice one X where its E is
 * (no B or E lines), one that began before the window "continued" and the others
 * within it, the thread's times never going backwards (an X's at its end), the lines
 * with "open" after every event (an X from its start to its thread's latest time), the
 * ticks contiguous, and the end marker's counts ("continued" only kept in
 * marker_conts). The caller frees s->t.
 */
static void load_snapshot(struct snap *s, const char *p, uint64_t no)
{
	int phase = 0;

	memset(s, 0, sizeof(*s));
	s->first_tick = s->last_tick = -1;
	if (tt_load(p, TT_CHECK_ESCAPES, &s->t) != 0)
		fail_msg("%s", s->t.error);
	assert_true(s->t.complete);
	assert_true(s->t.n >= 3);
	const struct tt_event *start = &s->t.ev[0];
	assert_true(tu_is(start->name, "ringtrace: start"));
	const struct tt_arg *mode = tt_arg(start, "mode");
	assert_non_null(mode);
	assert_string_equal(mode->s, "flight");
	assert_int_equal(tu_arg_int(start, "snapshot"), no);
	for (size_t k = 1; k + 1 < s->t.n; k++) {
		const struct tt_event *e = &s->t.ev[k];
		if (strcmp(e->ph, "M") == 0) {
			if (tu_is(e->name, "thread_name"))
				thread_of(s, e->tid)->named = 1;
			continue;
		}
		struct thread_lines *th = thread_of(s, e->tid);
		assert_true(th->named);
		if (strcmp(e->ph, "B") == 0 || strcmp(e->ph, "E") == 0)
			fail_msg("%s:%zu: %s %s: a slice is one X", p, e->line, e->ph, e->name);
		int cont = flag_true(e, "continued"), open = flag_true(e, "open");
		int x = strcmp(e->ph, "X") == 0;
		uint64_t end = x ? e->ts_ns + e->dur_ns : e->ts_ns;
		s->conts += cont;
		if (!s->has_start && !open) {
			s->window_start = e->ts_ns;
			s->has_start = 1;
		}
		/* a slice is one X, written where it ended: one that began before the
		 * window and ended inside it is there whole, from its own begin */
		if (x && !cont && !open && s->has_start && end < s->window_start)
			fail_msg("%s:%zu: X %s ends at %lu, before the window (%lu)", p, e->line,
				 e->name, (unsigned long)end, (unsigned long)s->window_start);
		if (open) {
			phase = 3;
			s->opens++;
			/* (a thread with no line in the window: its latest time fell out) an X
			 * 1 ns more for each level it holds open, its own included */
			uint64_t want = th->last_ts + (x ? ++th->open_x : 0);
			if (th->lines > 0 && end != want)
				fail_msg("%s:%zu: open %s ends at %lu, not at its thread's latest "
					 "time %lu",
					 p, e->line, e->name, (unsigned long)end,
					 (unsigned long)th->last_ts);
			if (x && !cont) /* its B, held, counted in the chunk it came in */
				count_begin(s, e);
			else {
				assert_string_equal(e->ph, "e");
				assert_true(s->async_open);
				assert_int_equal(e->nargs, 1); /* {"open":true} */
				s->async_open = 0;
			}
			continue;
		}
		if (cont && !x) { /* the async span, begun again */
			assert_true(phase <= 1);
			phase = 1;
			assert_string_equal(e->ph, "b");
			assert_false(s->async_open);
			s->async_open = 1;
		} else {
			assert_true(phase <= 2);
			phase = 2;
			s->events++;
			if (x && !cont)
				count_begin(s, e);
			s->last_real = e;
			if (strcmp(e->ph, "b") == 0) {
				assert_false(s->async_open);
				s->async_open = 1;
			} else if (strcmp(e->ph, "e") == 0) {
				assert_true(s->async_open);
				s->async_open = 0;
			}
		}
		if (end < th->last_ts)
			fail_msg("%s:%zu: %s %s at %lu, before %lu on its thread", p, e->line,
				 e->ph, e->name, (unsigned long)end, (unsigned long)th->last_ts);
		th->last_ts = end;
		th->lines++;
		if (strcmp(e->ph, "i") == 0 && tu_is(e->name, "tick")) {
			int64_t i = tu_arg_int(e, "i");
			if (s->last_tick >= 0 && i != s->last_tick + 1)
				fail_msg("%s:%zu: tick %ld after %ld", p, e->line, (long)i,
					 (long)s->last_tick);
			if (s->first_tick < 0)
				s->first_tick = i;
			s->last_tick = i;
			s->ticks++;
		}
	}
	assert_false(s->async_open);
	const struct tt_event *end = tu_end_marker(&s->t);
	assert_true(flag_true(end, "final"));
	assert_int_equal(tu_arg_int(end, "snapshot"), no);
	int64_t events = tu_arg_int(end, "events");
	if (events < (int64_t)s->events || events > (int64_t)(s->events + s->unsure))
		fail_msg("%s: %ld events, want %lu and at most %lu more begun before the window", p,
			 (long)events, (unsigned long)s->events, (unsigned long)s->unsure);
	s->marker_conts = tu_arg_int(end, "continued"); /* checked by its own test */
	assert_int_equal(tu_arg_int(end, "open"), s->opens);
	assert_int_equal(tu_arg_int(end, "dropped"), 0);
}

/* The line with phase ph and name, with "continued" or "open" as flag, on tid. */
static const struct tt_event *find_line(const struct snap *s, const char *ph, const char *name,
					const char *flag, int64_t tid)
{
	for (size_t k = 1; k + 1 < s->t.n; k++) {
		const struct tt_event *e = &s->t.ev[k];
		if (strcmp(e->ph, ph) == 0 && tu_is(e->name, name) && e->tid == tid &&
		    (flag == NULL ? !flag_true(e, "continued") && !flag_true(e, "open")
				  : flag_true(e, flag)))
			return e;
	}
	return NULL;
}

/* ------------------------------------------------------------------------- */
/* Tests                                                                      */

struct holder {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int began, released;
	int64_t tid;
};

/* Begins a slice with arguments, says so, waits until released, ends it. */
static void *hold_a_slice(void *arg)
{
	struct holder *h = arg;

	rtr_begin_v("app", "held", RTR_ARG_STR("who", "worker"), RTR_ARG_I64("n", 99));
	pthread_mutex_lock(&h->lock);
	h->tid = gettid();
	h->began = 1;
	pthread_cond_broadcast(&h->cond);
	while (!h->released)
		pthread_cond_wait(&h->cond, &h->lock);
	pthread_mutex_unlock(&h->lock);
	rtr_end("app", "held");
	return NULL;
}

/*
 * flight_mb = 2 and ten times that recorded, while another thread sits in a slice:
 * the snapshot holds the newest lines within the window, the slice begun again (its
 * begin fell out) and ended as open, and the counts add up; memory stays near the
 * window.
 */
static void snapshot_holds_the_newest_window_and_ends_what_is_open(void **state)
{
	(void)state;
	struct rtr_config cfg;
	struct rtr_stats st;
	struct snap s;
	struct holder h = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0};
	pthread_t th;
	char snap[4200];
	uint64_t n = tu_scaled(30000, 12000); /* ~700 bytes an iteration: 20 MB */

	name_files("window");
	snprintf(snap, sizeof(snap), "%s.snap.json", files.prefix);
	config(&cfg, 2, 0);
	uint64_t rss0 = wl_rss_kib();
	assert_int_equal(rtr_start(&cfg), 0);
	assert_int_equal(wl_glob_count(&files, 0, 0, 0), 0); /* nothing on disk */
	assert_int_equal(pthread_create(&th, NULL, hold_a_slice, &h), 0);
	pthread_mutex_lock(&h.lock);
	while (!h.began)
		pthread_cond_wait(&h.cond, &h.lock);
	pthread_mutex_unlock(&h.lock);

	wl_head();
	wl_iterations(0, n);
	rtr_instant_v("app", "last", RTR_ARG_I64("i", n));
	assert_int_equal(rtr_flush(), 0);
	uint64_t rss1 = wl_rss_kib();
	/* recorded so far: the workload's head and loop, "last", and "held"'s B */
	uint64_t recorded = wl_events(n) - WL_TAIL + 2;
	rtr_stats_get(&st);
	assert_int_equal(st.events_recorded, recorded);
	assert_int_equal(st.events_dropped, 0);
	assert_int_equal(wl_glob_count(&files, 0, 0, 0), 0);

	assert_int_equal(rtr_snapshot(snap), 0);
	/* complete when it returns: under its name, no temp file beside it */
	assert_int_equal(wl_glob_count(&files, 0, 0, 0), 1);
	uint64_t size = tu_file_size(snap);

	pthread_mutex_lock(&h.lock);
	h.released = 1;
	pthread_cond_broadcast(&h.cond);
	pthread_mutex_unlock(&h.lock);
	assert_int_equal(pthread_join(th, NULL), 0);
	wl_tail();
	assert_int_equal(rtr_stop(), 0);
	rtr_stats_get(&st);
	assert_int_equal(st.events_dropped, 0);
	assert_int_equal(st.events_recorded, recorded + 1 + WL_TAIL);
	assert_int_equal(st.events_written, st.events_recorded);
	assert_int_equal(st.files, 1);
	assert_int_equal(wl_glob_count(&files, 0, 0, 0), 1); /* flight_at_exit = 0 */

	load_snapshot(&s, snap, 0);
	if (!(size > 2 * MIB - 256 * 1024))
		fail_msg("snapshot %llu bytes",
			 (unsigned long long)size); /* the window is full; its bound: below */
	/* the newest: "last" ends it, the ticks before it run up to the end, the oldest
	 * fell out */
	assert_non_null(s.last_real);
	assert_true(tu_is(s.last_real->name, "last"));
	assert_int_equal(tu_arg_int(s.last_real, "i"), n);
	assert_int_equal(s.last_tick, n - 1);
	assert_true(s.first_tick > 0);
	assert_true(s.ticks * WL_PER_ITER * 90 > 2 * MIB); /* most of the window is events */

	/* the held slice: begun before the window, one X from its own begin (its B was
	 * held, never in a chunk that fell out), with its arguments, ended as open;
	 * nothing else of it */
	const struct tt_event *x = find_line(&s, "X", "held", "open", h.tid);
	assert_non_null(x);
	assert_false(flag_true(x, "continued"));
	assert_true(tu_is(tt_arg(x, "who") ? tt_arg(x, "who")->s : NULL, "worker"));
	assert_int_equal(tu_arg_int(x, "n"), 99);
	assert_int_equal(x->nargs, 3);
	assert_null(find_line(&s, "X", "held", NULL, h.tid));
	/* and the main thread's outer slice and the async span, the same way */
	x = find_line(&s, "X", "outer", "open", getpid());
	assert_non_null(x);
	assert_false(flag_true(x, "continued"));
	assert_int_equal(tu_arg_int(x, "run"), 42);
	assert_int_equal(x->nargs, 3);
	const struct tt_event *b = find_line(&s, "b", "request", "continued", getpid());
	assert_non_null(b);
	assert_int_equal(tu_arg_int(b, "req"), 7);
	assert_non_null(find_line(&s, "e", "request", "open", getpid()));
	assert_true(s.opens >= 3);

	/* what fell out and what is in add up to what was recorded */
	const struct tt_event *end = tu_end_marker(&s.t);
	int64_t evicted = tu_arg_int(end, "evicted");
	assert_true(evicted > 0);
	assert_int_equal((uint64_t)evicted + s.events, recorded);
	/* The session's count is the window's (what fell out of it by the stop); a
	 * snapshot also leaves out the oldest chunk still held when the window and the
	 * chunk being filled together pass flight_mb, so the two need not order. */
	assert_true(st.events_evicted > 0);

	/* memory: the window, the chunk being filled, two rings, a few MiB more */
	if (!TU_UNDER_SANITIZER) {
		uint64_t grown = rss1 > rss0 ? (rss1 - rss0) / 1024 : 0;
		if (grown > 2 + 1 + 2 + 4)
			fail_msg("VmRSS grew by %lu MiB for a 2 MiB window", (unsigned long)grown);
	}
	tt_free(&s.t);
}

/* Record `mib` MiB of the workload in flight mode (flight_mb 1) with a thread holding a
 * slice since before, and snapshot to files.prefix.snap.json; returns its size. */
static uint64_t overflow_and_snapshot(struct snap *s, uint64_t mib)
{
	struct rtr_config cfg;
	struct holder h = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0};
	pthread_t th;
	char snap[4200];
	uint64_t n = mib * MIB / 700;

	snprintf(snap, sizeof(snap), "%s.snap.json", files.prefix);
	config(&cfg, 1, 0);
	assert_int_equal(rtr_start(&cfg), 0);
	assert_int_equal(pthread_create(&th, NULL, hold_a_slice, &h), 0);
	pthread_mutex_lock(&h.lock);
	while (!h.began)
		pthread_cond_wait(&h.cond, &h.lock);
	pthread_mutex_unlock(&h.lock);
	wl_head();
	wl_iterations(0, n);
	assert_int_equal(rtr_snapshot(snap), 0);
	pthread_mutex_lock(&h.lock);
	h.released = 1;
	pthread_cond_broadcast(&h.cond);
	pthread_mutex_unlock(&h.lock);
	assert_int_equal(pthread_join(th, NULL), 0);
	wl_tail();
	assert_int_equal(rtr_stop(), 0);
	load_snapshot(s, snap, 0);
	return tu_file_size(snap);
}

/* The window is the newest flight_mb MiB of lines: a snapshot holds that, its head,
 * the lines that begin again what was open and the closing lines, no more. */
static void snapshot_is_at_most_the_window(void **state)
{
	(void)state;
	struct snap s;

	name_files("bound");
	uint64_t size = overflow_and_snapshot(&s, 10);
	tt_free(&s.t);
	if (size > MIB + 16 * 1024)
		fail_msg("snapshot of a 1 MiB window: %lu bytes, more than 1 MiB + 16 KiB",
			 (unsigned long)size);
}

/* The end marker's "continued" counts the lines of what was open at the window's start
 * and begun again there (the async span; a slice's B is held, never in a chunk, so its
 * X, written where it ends, holds it whole and is not "continued"), as a segment's
 * does. */
static void snapshot_end_marker_counts_the_continued_lines(void **state)
{
	(void)state;
	struct snap s;

	name_files("continued");
	overflow_and_snapshot(&s, 4);
	int64_t marker = s.marker_conts;
	uint64_t lines = s.conts;
	tt_free(&s.t);
	assert_true(lines >= 1); /* request at least */
	if ((uint64_t)marker != lines)
		fail_msg("end marker \"continued\": %ld, the snapshot has %lu such lines",
			 (long)marker, (unsigned long)lines);
}

/* Snapshots at the pattern are numbered from 0000; rtr_stop() writes the last one. */
static void snapshots_are_numbered_and_stop_writes_the_last(void **state)
{
	(void)state;
	struct rtr_config cfg;
	struct rtr_stats st;
	struct snap s;
	char file[4200];

	name_files("numbering");
	config(&cfg, 4, 1);
	assert_int_equal(rtr_start(&cfg), 0);
	assert_int_equal(wl_glob_count(&files, 0, 0, 0), 0);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(errno, ENOENT);
	for (unsigned no = 0; no < 3; no++) {
		for (int k = 0; k < 10; k++)
			rtr_instant_v("app", "tick", RTR_ARG_I64("i", 10 * no + (unsigned)k));
		if (no < 2) {
			assert_int_equal(rtr_snapshot(NULL), 0);
			wl_glob_count(&files, 0, no + 1, 1);
		}
	}
	assert_int_equal(rtr_stop(), 0);
	rtr_stats_get(&st);
	assert_int_equal(st.files, 3);
	assert_int_equal(st.events_written, 30);
	assert_int_equal(st.events_evicted, 0);
	wl_glob_count(&files, 0, 3, 1);
	for (unsigned no = 0; no < 3; no++) {
		wl_file(&files, no, file, sizeof(file));
		load_snapshot(&s, file, no);
		/* the window holds everything so far */
		assert_int_equal(s.events, 10 * (no + 1));
		assert_int_equal(s.first_tick, 0);
		assert_int_equal(s.last_tick, 10 * no + 9);
		assert_int_equal(s.conts, 0);
		assert_int_equal(s.opens, 0);
		assert_int_equal(tu_arg_int(tu_end_marker(&s.t), "evicted"), 0);
		tt_free(&s.t);
	}

	/* flight_at_exit = 0: nothing */
	wl_glob_remove(&files);
	name_files("noexit");
	config(&cfg, 4, 0);
	assert_int_equal(rtr_start(&cfg), 0);
	rtr_instant("app", "tick");
	assert_int_equal(rtr_stop(), 0);
	rtr_stats_get(&st);
	assert_int_equal(st.files, 0);
	assert_int_equal(st.events_written, 1);
	assert_int_equal(wl_glob_count(&files, 0, 0, 0), 0);
}

static void environment_sets_flight_mode_and_a_bad_value_keeps_the_default(void **state)
{
	(void)state;
	struct rtr_config cfg;
	char err[4096];

	setenv("RINGTRACE_MODE", "flight", 1);
	setenv("RINGTRACE_FLIGHT_MB", "3", 1);
	setenv("RINGTRACE_FLIGHT_AT_EXIT", "0", 1);
	wl_config_init_capture(&cfg, "flight", err, sizeof(err));
	assert_int_equal(cfg.mode, RTR_MODE_FLIGHT);
	assert_int_equal(cfg.flight_mb, 3);
	assert_int_equal(cfg.flight_at_exit, 0);
	assert_string_equal(err, "");

	setenv("RINGTRACE_MODE", "airplane", 1);
	setenv("RINGTRACE_FLIGHT_MB", "0", 1);
	setenv("RINGTRACE_FLIGHT_AT_EXIT", "2", 1);
	wl_config_init_capture(&cfg, "flight", err, sizeof(err));
	unsetenv("RINGTRACE_MODE");
	unsetenv("RINGTRACE_FLIGHT_MB");
	unsetenv("RINGTRACE_FLIGHT_AT_EXIT");
	assert_int_equal(cfg.mode, RTR_MODE_STREAM);
	assert_int_equal(cfg.flight_mb, 64);
	assert_int_equal(cfg.flight_at_exit, 1);
	assert_non_null(strstr(err, "RINGTRACE_MODE=\"airplane\""));
	assert_non_null(strstr(err, "RINGTRACE_FLIGHT_MB=\"0\""));
	assert_non_null(strstr(err, "RINGTRACE_FLIGHT_AT_EXIT=\"2\""));

	/* the defaults without the environment */
	wl_config_init_capture(&cfg, "flight", err, sizeof(err));
	assert_int_equal(cfg.mode, RTR_MODE_STREAM);
	assert_int_equal(cfg.flight_mb, 64);
	assert_int_equal(cfg.flight_at_exit, 1);
	assert_string_equal(err, "");
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, wl_setup, wl_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		TEST(snapshot_holds_the_newest_window_and_ends_what_is_open),
		TEST(snapshot_is_at_most_the_window),
		TEST(snapshot_end_marker_counts_the_continued_lines),
		TEST(snapshots_are_numbered_and_stop_writes_the_last),
		TEST(environment_sets_flight_mode_and_a_bad_value_keeps_the_default),
	};

	tu_filter_from_env();
	return cmocka_run_group_tests_name("flight", tests, NULL, NULL);
}
