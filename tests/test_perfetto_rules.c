/* SPDX-License-Identifier: MIT */
/*
 * Perfetto's own rules, kept by the perfetto format (docs/perfetto.md), read back by
 * the oracle (tests/support/pf_read.c, which rejects a ClockSnapshot that moves a
 * clock of its sequence backwards, as trace processor does): every timestamp equal to
 * what was recorded when the writer empties its intern table and a complete event
 * that began earlier comes first after it; counters carry their category on their
 * track's descriptor; a flight snapshot's window places every event at its time.
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(intern_reset_keeps_time),
	};
	return cmocka_run_group_tests_name("perfetto_rules", tests, NULL, NULL);
}
