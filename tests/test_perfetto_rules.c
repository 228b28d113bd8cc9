/* SPDX-License-Identifier: MIT */
/*
 * Perfetto's own rules, kept by the perfetto format (docs/perfetto.md), read back by
 * the oracle (tests/support/pf_read.c, which rejects a ClockSnapshot that moves a
 * clock of its sequence backwards, as trace processor does): every timestamp equal to
 * what was recorded when the writer empties its intern table and a complete event
 * that began earlier comes first after it, in a flight snapshot's window, and in
 * segments whose cut came in the midst of an event; counters carry their category on
 * their track's descriptor.
 */
#include "pf_read.h"
#include "test_util.h"

#include <ringtrace.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

static void start_pf(const char *path)
{
	struct rtr_config cfg;

	rtr_config_init(&cfg);
	cfg.path = path;
	cfg.on_full = RTR_ON_FULL_BLOCK;
	assert_int_equal(rtr_start(&cfg), 0);
}

static void read_ok(const char *path, struct pf_trace *t)
{
	if (pf_read(path, t, 0) != 0)
		fail_msg("%s: %s", path, t->error);
}

/* The END closing the BEGIN b on its track (the next one, nesting counted). */
static const struct pf_event *end_of(const struct pf_trace *t, const struct pf_event *b)
{
	long depth = 0;

	for (const struct pf_event *e = b; e < t->events + t->nevents; e++) {
		if (e->track != b->track || (e->type != 1 && e->type != 2))
			continue;
		depth += e->type == 1 ? 1 : -1;
		if (depth == 0)
			return e;
	}
	return NULL;
}

/* Distinct static names: their pointers are the intern table's keys. */
#define NAMES 20000
static char names[NAMES][12];

#define ROUND 100

/*
 * Issue 26: the writer empties its intern table (16,384 strings) and clears every
 * sequence; the first event after, a complete event that began before the latest time
 * the sequence wrote, must not set the sequence's clock back. Rounds of a complete
 * event that began before the first round (before the sequence's first clock
 * snapshot), then ROUND spans at known times after "now", each round one
 * batch of the writer's (a flush between), so that a round begins the batch in which
 * the table is emptied: every timestamp read back is the one recorded.
 */
static void intern_reset_keeps_time(void **state)
{
	(void)state;
	char path[512];
	tu_temp_path(path, sizeof(path), "perfetto-rules", "reset", ".pftrace");
	for (int i = 0; i < NAMES; i++)
		snprintf(names[i], sizeof(names[i]), "n%d", i);
	start_pf(path);
	uint64_t t0s[NAMES / ROUND], lates_at[NAMES / ROUND];
	for (int r = 0; r < NAMES / ROUND; r++) {
		uint64_t t0 = rtr_now_ns();
		t0s[r] = t0;
		/* before every time written so far, the sequence's first clock snapshot too */
		lates_at[r] = t0s[0] - 1000 - (uint64_t)r;
		rtr_complete("app", "late", lates_at[r], 10);
		for (int i = 0; i < ROUND; i++)
			rtr_complete("app", names[r * ROUND + i], t0 + 2 * (uint64_t)i, 1);
		rtr_flush();
	}
	assert_int_equal(rtr_stop(), 0);

	struct pf_trace t;
	read_ok(path, &t);
	assert_true(t.cleared > 2); /* the table was emptied: the sequence cleared again */
	size_t lates = 0, spans = 0;
	for (size_t k = 0; k < t.nevents; k++) {
		const struct pf_event *b = &t.events[k];
		if (b->type != 1)
			continue;
		if (strcmp(b->name, "late") == 0) {
			assert_true(lates < NAMES / ROUND);
			assert_int_equal(b->ts, lates_at[lates]);
			assert_int_equal(end_of(&t, b)->ts, lates_at[lates] + 10);
			lates++;
		} else if (b->name[0] == 'n') {
			int i = atoi(b->name + 1);
			assert_int_equal(b->ts, t0s[i / ROUND] + 2 * (uint64_t)(i % ROUND));
			assert_int_equal(end_of(&t, b)->ts, b->ts + 1);
			spans++;
		}
	}
	assert_int_equal(lates, NAMES / ROUND);
	assert_int_equal(spans, NAMES);
	pf_free(&t);
	unlink(path);
}

/* The times of flight_window_keeps_time()'s steps. */
enum { SPANS = 600000 };
static uint64_t step_ts[SPANS];

/*
 * A flight snapshot's window: its chunks each begin again what was open (a prologue
 * that only a window starting there keeps) and clear the sequences they use. Slices
 * open across every chunk, and steps at known times (complete events, each followed by
 * an instant so that the thread's latest time moves on): every step of the window is
 * read back at the time recorded, whichever chunk it is in, inside the slices begun
 * again at the window's start and ended at its end.
 */
static void flight_window_keeps_time(void **state)
{
	(void)state;
	char dir[512], path[600], snap[700];
	tu_temp_path(dir, sizeof(dir), "perfetto-rules", "flight", "");
	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/fl.pftrace", dir);
	snprintf(snap, sizeof(snap), "%s/snap.pftrace", dir);
	struct rtr_config cfg;
	rtr_config_init(&cfg);
	cfg.path = path;
	cfg.on_full = RTR_ON_FULL_BLOCK;
	cfg.mode = RTR_MODE_FLIGHT;
	cfg.flight_mb = 1;
	cfg.flight_at_exit = 0;
	assert_int_equal(rtr_start(&cfg), 0);
	rtr_begin("app", "outer");
	rtr_begin("app", "inner");
	for (int i = 0; i < SPANS; i++) {
		step_ts[i] = rtr_now_ns();
		rtr_complete_args("app", "step", step_ts[i], 0,
				  (const struct rtr_arg[]){RTR_ARG_I64("i", i)}, 1);
		rtr_instant("app", "tick");
	}
	assert_int_equal(rtr_snapshot(snap), 0);
	assert_int_equal(rtr_stop(), 0);

	struct pf_trace t;
	read_ok(snap, &t);
	size_t steps = 0;
	uint64_t first = UINT64_MAX, last = 0;
	for (size_t k = 0; k < t.nevents; k++) {
		const struct pf_event *b = &t.events[k];
		if (b->type != 1 || strcmp(b->name, "step") != 0)
			continue;
		const struct pf_ann *i = pf_ann(b, "i");
		assert_non_null(i);
		assert_true(i->i >= 0 && i->i < SPANS);
		assert_int_equal(b->ts, step_ts[i->i]);
		assert_int_equal(end_of(&t, b)->ts, b->ts);
		first = b->ts < first ? b->ts : first;
		last = b->ts > last ? b->ts : last;
		steps++;
	}
	assert_true(steps > 1000 && steps < SPANS); /* 1 MiB holds the newest only */
	/* the slices open across the window begin again before it and end after it */
	for (int k = 0; k < 2; k++) {
		const char *name = k == 0 ? "outer" : "inner";
		const struct pf_event *b = NULL;
		for (size_t j = 0; j < t.nevents && b == NULL; j++)
			if (t.events[j].type == 1 && strcmp(t.events[j].name, name) == 0)
				b = &t.events[j];
		assert_non_null(b);
		assert_non_null(pf_ann(b, "continued"));
		assert_true(b->ts <= first);
		assert_true(end_of(&t, b)->ts >= last);
	}
	pf_free(&t);
	unlink(snap);
	rmdir(dir);
}

/*
 * Rotation with nothing open across the cuts: a segment fills up in the midst of an
 * event of a thread whose sequence the new segment has not cleared yet (no slice of
 * it was begun again there). Every segment reads back whole, every span at its time.
 */
static void rotation_mid_event(void **state)
{
	(void)state;
	char dir[512], path[600];
	tu_temp_path(dir, sizeof(dir), "perfetto-rules", "rot", "");
	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/r.pftrace", dir);
	struct rtr_config cfg;
	rtr_config_init(&cfg);
	cfg.path = path;
	cfg.on_full = RTR_ON_FULL_BLOCK;
	cfg.max_mb = 1;
	assert_int_equal(rtr_start(&cfg), 0);
	for (int i = 0; i < SPANS; i++) {
		step_ts[i] = rtr_now_ns();
		rtr_complete_args("app", "step", step_ts[i], 3,
				  (const struct rtr_arg[]){RTR_ARG_I64("i", i)}, 1);
		rtr_counter_i64("app", "i", i);
	}
	assert_int_equal(rtr_stop(), 0);
	size_t steps = 0, counters = 0;
	int files = 0;
	for (int k = 0;; k++, files++) {
		char seg[700];
		snprintf(seg, sizeof(seg), "%s/r.%04d.pftrace", dir, k);
		if (access(seg, F_OK) != 0)
			break;
		struct pf_trace t;
		read_ok(seg, &t);
		for (size_t j = 0; j < t.nevents; j++) {
			const struct pf_event *e = &t.events[j];
			if (e->type == 1 && strcmp(e->name, "step") == 0) {
				const struct pf_ann *i = pf_ann(e, "i");
				assert_non_null(i);
				assert_int_equal(e->ts, step_ts[i->i]);
				assert_int_equal(end_of(&t, e)->ts, e->ts + 3);
				steps++;
			} else if (e->type == 4 && e->has_counter == 1 &&
				   strcmp(pf_track(&t, e->track)->name, "i") == 0) {
				/* its category, on its track's descriptor */
				assert_string_equal(pf_track(&t, e->track)->categories, "app");
				counters++;
			}
		}
		pf_free(&t);
		unlink(seg);
	}
	rmdir(dir);
	assert_true(files > 2);
	assert_int_equal(steps, SPANS);
	assert_int_equal(counters, SPANS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(intern_reset_keeps_time),
		cmocka_unit_test(flight_window_keeps_time),
		cmocka_unit_test(rotation_mid_event),
	};
	return cmocka_run_group_tests_name("perfetto_rules", tests, NULL, NULL);
}
