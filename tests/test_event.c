/* SPDX-License-Identifier: MIT */
/*
 * The writer's seam between records and formats: a batch of one ring's records
 * decoded into format-neutral events (writer/decode.c), walked by a format with
 * rtr__batch_first/next(), which keeps the open slices in step with the events written;
 * and the drain handing a format whole batches, one call each.
 *
 * The events are recorded by the public calls into the calling thread's ring, with
 * the recorder marked active but no writer thread: the test plays the writer.
 */
#include "ring/ring.h"
#include "writer/decode.h"
#include "writer/drain.h"
#include "writer/event.h"
#include "writer/format.h"
#include "writer/slices.h"

#include <ringtrace.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static struct rtr__writer W;

static int setup(void **state)
{
	(void)state;
	memset(&W, 0, sizeof(W));
	W.s.pid = getpid();
	W.drain.session_id = 1000 + (uint64_t)rand(); /* a session of its own */
	assert_int_equal(rtr__events_init(&W), 0);
	rtr__rings_configure(64 * 1024, RTR_ON_FULL_DROP);
	__atomic_store_n(&rtr__active, 1, __ATOMIC_RELEASE);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	__atomic_store_n(&rtr__active, 0, __ATOMIC_RELEASE);
	struct rtr__ring *r = rtr__tls_ring;
	if (r != NULL) {
		rtr__ring_consume(r, rtr__ring_readable(r));
		if (rtr__reader_of(r)->session == W.drain.session_id)
			rtr__slices_free(rtr__reader_of(r)->slices);
		memset(r->reader, 0, sizeof(r->reader));
	}
	rtr__events_fini(&W);
	return 0;
}

/* The calling thread's ring, emptied, with reader state of this test's session. */
static struct rtr__ring *my_ring(void)
{
	rtr_instant("t", "first");
	struct rtr__ring *r = rtr__tls_ring;
	assert_non_null(r);
	rtr__ring_consume(r, rtr__ring_readable(r));
	memset(r->reader, 0, sizeof(r->reader));
	rtr__reader_of(r)->session = W.drain.session_id;
	return r;
}

/* The record index of the event after `pos`. */
static uint32_t next_pos(struct rtr__ring *r, uint32_t pos)
{
	return pos + rtr__rec_records(rtr__ring_rec(r, pos)->ext);
}

/* Every event of r decoded alone (none folded) through the general path into b;
 * returns the events they stand for. */
static uint64_t decode_alone(struct rtr__ring *r, struct rtr__batch *b)
{
	uint32_t pos = r->tail, end = r->tail + rtr__ring_readable(r), n = 0;
	uint64_t events = 0;

	W.drain.nbad = W.drain.nfolded = 0;
	for (; pos != end; pos = next_pos(r, pos))
		n += rtr__event_decode(&W, r, pos, NULL, 0, &W.drain.events[n], &events);
	*b = (struct rtr__batch){r, W.drain.events, W.drain.events + n, NULL};
	return events;
}

static void folded_span_is_one_event_with_its_duration(void **state)
{
	(void)state;
	struct rtr__ring *r = my_ring();
	static const char cat[] = "app", name[] = "leaf";
	struct rtr__batch b = {NULL, W.drain.events, W.drain.events, NULL};
	struct rtr__event fast;

	rtr_begin(cat, name);
	rtr_end(cat, name);
	uint32_t pos = r->tail;
	uint64_t events = 0;
	W.drain.nbad = W.drain.nfolded = 0;
	assert_int_equal(
		rtr__event_decode(&W, r, pos, rtr__ring_rec(r, pos + 1), 0, &b.ev[0], &events), 1);
	assert_int_equal(events, 2);
	assert_int_equal(W.drain.nbad, 0);
	const struct rtr__event *ev = &b.ev[0];
	assert_int_equal(ev->type, RTR__EV_SPAN);
	assert_ptr_equal(ev->name, name); /* the static string itself: a cache key */
	assert_ptr_equal(ev->cat, cat);
	assert_int_equal(ev->count, 2);
	assert_int_equal(ev->flags, RTR__EVF_TIMELINE);
	assert_int_equal(ev->tid, r->tid);
	/* ticks are CLOCK_MONOTONIC ns here (no TSC calibrated) */
	assert_int_equal(ev->ts, rtr__ring_rec(r, pos)->ts);
	assert_int_equal(ev->ts + ev->dur, rtr__ring_rec(r, pos + 1)->ts);
	/* the drain's short path makes the same event */
	rtr__decode_span(&W, r, rtr__ring_rec(r, pos), pos, rtr__ring_rec(r, pos + 1), &fast);
	assert_int_equal(fast.type, ev->type);
	assert_ptr_equal(fast.name, ev->name);
	assert_ptr_equal(fast.cat, ev->cat);
	assert_int_equal(fast.flags, ev->flags);
	assert_int_equal(fast.count, ev->count);
	assert_int_equal(fast.ts, ev->ts);
	assert_int_equal(fast.dur, ev->dur);
	assert_int_equal(fast.args.n, 0);
	assert_int_equal(fast.nmore, 0);
}

/* A scope's record at ring position pos given a begin and a length in ticks (ns here). */
static void scope_at(struct rtr__ring *r, uint32_t pos, uint64_t begin, uint64_t len)
{
	struct rtr__rec *rec = &r->rslots[pos & r->rmask]; /* this test's own record */

	assert_int_equal(rec->kind, RTR__K_SCOPE);
	rec->ts = begin;
	rec->b = len;
}

/*
 * A begin in the nanosecond a slice of the ring ended in is moved 1 ns later, as it
 * was recorded after that end; not past a slice that also began in that nanosecond:
 * that one is inside it (a scope is recorded at its end, after what it holds), and
 * moving the begin would leave its child outside.
 */
static void a_begin_moves_past_an_earlier_end_not_past_a_slice_it_holds(void **state)
{
	(void)state;
	struct rtr__ring *r = my_ring();
	struct rtr__batch b;
	const uint64_t t = 1000000;

	{
		RTR_SCOPE("app", "before");
	}
	{
		RTR_SCOPE("app", "child");
	}
	{
		RTR_SCOPE("app", "parent");
	}
	{
		RTR_SCOPE("app", "after");
	}
	uint32_t p0 = r->tail, p1 = next_pos(r, p0), p2 = next_pos(r, p1), p3 = next_pos(r, p2);
	scope_at(r, p0, t - 10, 5); /* ends 5 ns before the child and parent begin */
	scope_at(r, p1, t, 0);	    /* the child: begins and ends in the parent's first ns */
	scope_at(r, p2, t, 10);
	scope_at(r, p3, t + 10, 3); /* begins as the parent ends: after it */
	decode_alone(r, &b);
	const struct rtr__event *ev = b.ev;
	assert_int_equal(b.end - b.ev, 4);
	assert_int_equal(ev[1].ts, t);
	assert_int_equal(ev[1].dur, 0);
	assert_int_equal(ev[2].ts, t); /* not moved past its child */
	assert_int_equal(ev[2].dur, 10);
	assert_true(ev[1].ts >= ev[2].ts && ev[1].ts + ev[1].dur <= ev[2].ts + ev[2].dur);
	assert_int_equal(ev[3].ts, t + 11); /* moved past the parent's end */
	assert_int_equal(ev[3].dur, 2);
}

static void arguments_and_copied_names_are_views_of_the_record(void **state)
{
	(void)state;
	struct rtr__ring *r = my_ring();
	struct rtr__batch b;
	char name[] = "copied name";
	struct rtr_arg args[] = {RTR_ARG_I64("n", -42), RTR_ARG_STR_COPY("s", "text \"q\""),
				 RTR_ARG_F64("f", 2.5)};

	rtr_instant_args("app", "with args", args, 3);
	rtr_instant_copy("app", name);
	memset(name, 'x', sizeof(name) - 1); /* the record holds its own copy */
	assert_int_equal(decode_alone(r, &b), 2);
	assert_int_equal(b.end - b.ev, 2);
	const struct rtr__event *a = &b.ev[0], *c = &b.ev[1];

	assert_int_equal(a->type, RTR__EV_INSTANT);
	assert_int_equal(a->scope, RTR__SCOPE_THREAD);
	assert_string_equal(a->name, "with args");
	assert_int_equal(a->args.n, 3);
	const char *key;
	assert_int_equal((int64_t)rtr__args_get(&a->args, 0, &key), -42);
	assert_string_equal(key, "n");
	assert_int_equal(a->args.types[1], RTR_ARG_TYPE_STR_COPY);
	assert_int_equal(rtr__args_get(&a->args, 1, &key), 8);
	assert_memory_equal(rtr__args_blobs(&a->args), "text \"q\"", 8);
	uint64_t bits = rtr__args_get(&a->args, 2, &key);
	double f;
	memcpy(&f, &bits, sizeof(f));
	assert_true(f == 2.5);

	assert_int_equal(c->flags & RTR__EVF_COPIED, RTR__EVF_COPIED);
	assert_int_equal(c->name_len, sizeof(name) - 1);
	assert_memory_equal(c->name, "copied name", c->name_len);
}

/* A format's walk, remembering each event's name when it is handed out and the
 * depth of the thread's open slices then. */
static uint32_t walk(struct rtr__batch *b, const char **names, uint32_t *depth, uint32_t max)
{
	struct rtr__event *ev;
	uint32_t n = 0;

	for (ev = rtr__batch_first(&W, b); ev != NULL && n < max; ev = rtr__batch_next(&W, b, ev)) {
		const struct rtr__slices *s = rtr__reader_of(b->ring)->slices;
		names[n] = ev->name;
		depth[n++] = s != NULL ? s->depth : 0;
	}
	return n;
}

static void a_pop_is_named_by_the_slice_it_ends_when_its_turn_comes(void **state)
{
	(void)state;
	struct rtr__ring *r = my_ring();
	struct rtr__batch b;
	const char *names[8];
	uint32_t depth[8];

	rtr_begin("app", "outer");
	rtr_begin("app", "inner");
	rtr_pop("app");
	rtr_pop("app");
	assert_int_equal(decode_alone(r, &b), 4);
	assert_int_equal(b.end - b.ev, 4);
	assert_null(b.ev[2].name); /* a pop names nothing until it is written */
	assert_int_equal(walk(&b, names, depth, 8), 4);
	/* each event sees the slices of those written before it */
	assert_int_equal(depth[0], 0);
	assert_int_equal(depth[1], 1);
	assert_int_equal(depth[2], 2);
	assert_int_equal(depth[3], 1);
	assert_string_equal(names[2], "inner");
	assert_string_equal(names[3], "outer");
	assert_int_equal(rtr__reader_of(r)->slices->depth, 0); /* the last one written too */
}

static void arguments_added_to_a_slice_go_on_its_end(void **state)
{
	(void)state;
	struct rtr__ring *r = my_ring();
	struct rtr__batch b;
	struct rtr__event *ev;

	rtr_begin("app", "work");
	rtr_scope_arg_i64("app", "items", 7);
	rtr_scope_arg_str_copy("app", "status", "done");
	rtr_end("app", "work");
	assert_int_equal(decode_alone(r, &b), 4);
	assert_int_equal(b.ev[1].type, RTR__EV_SKIP);
	for (ev = rtr__batch_first(&W, &b); ev != NULL && ev->type != RTR__EV_END;
	     ev = rtr__batch_next(&W, &b, ev))
		;
	assert_non_null(ev);
	assert_int_equal(ev->nmore, 2);
	const char *key;
	assert_int_equal(rtr__args_get(&ev->more[0], 0, &key), 7);
	assert_string_equal(key, "items");
	assert_int_equal(rtr__args_get(&ev->more[1], 0, &key), 4);
	assert_string_equal(key, "status");
	assert_memory_equal(rtr__args_blobs(&ev->more[1]), "done", 4);
	assert_null(rtr__batch_next(&W, &b, ev));
}

static void a_record_that_does_not_decode_is_left_out_and_reported(void **state)
{
	(void)state;
	struct rtr__ring *r = my_ring();
	struct rtr__batch b;
	struct rtr_arg args[] = {RTR_ARG_STR_COPY("s", "abc")};

	rtr_instant("app", "before");
	rtr_instant_args("app", "scribbled", args, 1);
	rtr_instant("app", "after");
	/* the copied string's length now runs past the record's bytes */
	uint32_t second = next_pos(r, r->tail);
	struct rtr__rec *rec = &r->slots[second & r->mask];
	char *ext = (char *)&r->slots[(second + 1) & r->mask];
	uint64_t len = 1000;
	memcpy(ext + 1 + 8, &len, sizeof(len));
	assert_int_equal(decode_alone(r, &b), 2);
	assert_int_equal(b.end - b.ev, 2);
	assert_string_equal(b.ev[0].name, "before");
	assert_string_equal(b.ev[1].name, "after");
	assert_int_equal(W.drain.nbad, 1);
	assert_ptr_equal(W.drain.bad[0], rec);
}

static void a_track_event_is_placed_on_a_lane_at_host_time(void **state)
{
	(void)state;
	struct rtr__ring *r = my_ring();
	struct rtr_track_desc desc = RTR_TRACK_DESC_INIT(.process = "GPU 9", .lane = "stream 1");
	struct rtr_track *t = rtr_track_create(&desc);
	struct rtr__batch b;

	assert_non_null(t);
	rtr_track_clock_offset(t, 1000);
	rtr_track_complete(t, "gpu", "kernel", 5000, 300, NULL, 0);
	rtr_track_complete(t, "gpu", "overlap", 5100, 400, NULL, 0); /* past the first's end */
	assert_int_equal(decode_alone(r, &b), 2);
	assert_int_equal(b.ev[0].type, RTR__EV_SPAN);
	assert_int_equal(b.ev[0].flags & RTR__EVF_TRACK, RTR__EVF_TRACK);
	assert_int_equal(b.ev[0].ts, 6000);
	assert_int_equal(b.ev[0].dur, 300);
	assert_int_equal(b.ev[0].x.track.lane, 0);
	assert_int_equal(b.ev[1].x.track.lane, 1); /* it partly overlaps: an overflow lane */
	assert_int_equal(b.ev[0].pid, t->pid);
	assert_int_equal(b.ev[1].tid, (int32_t)(t->tid + 1));
}

/* ------------------------------------------------------------------------- */
/* The drain and a format: one call per batch                                 */

static uint64_t calls, seen, order_ok;

static uint64_t count_events(struct rtr__writer *w, struct rtr__batch *b)
{
	struct rtr__event *ev;
	uint64_t events = 0;

	calls++;
	for (ev = rtr__batch_first(w, b); ev != NULL; ev = rtr__batch_next(w, b, ev)) {
		/* the events come in the order recorded: "e0", "e1", ... */
		char want[16];
		snprintf(want, sizeof(want), "e%llu", (unsigned long long)seen);
		order_ok +=
			ev->flags & RTR__EVF_COPIED ? memcmp(ev->name, want, ev->name_len) == 0 : 0;
		seen++;
		events += ev->count;
	}
	return events;
}

static void no_ring(struct rtr__writer *w, struct rtr__ring *r)
{
	(void)w;
	(void)r;
}

static void no_meta(struct rtr__writer *w, struct rtr__ring *r, int what, int64_t value)
{
	(void)w;
	(void)r;
	(void)what;
	(void)value;
}

static const struct rtr__format counting = {
	.name = "counting",
	.begin_ring = no_ring,
	.meta = no_meta,
	.events = count_events,
};

static void the_drain_hands_a_format_whole_batches(void **state)
{
	(void)state;
	struct rtr__ring *r = my_ring();
	const unsigned n = 1000; /* 1000 one-record events: 8 batches of at most 128 */

	for (unsigned i = 0; i < n; i++) {
		char name[16];
		snprintf(name, sizeof(name), "e%u", i);
		rtr_instant_copy("app", name);
	}
	W.fmt = &counting;
	W.out.file_id = 1;
	rtr__reader_of(r)->meta_file = 1; /* named already: no meta lines */
	calls = seen = order_ok = 0;
	uint64_t records = rtr__drain_all(&W, UINT32_MAX);
	assert_true(records >= n);
	assert_int_equal(seen, n);
	assert_int_equal(order_ok, n);
	assert_int_equal(calls, (n + RTR__BATCH_EVENTS - 1) / RTR__BATCH_EVENTS);
	assert_int_equal(rtr__reader_of(r)->events, n);
	assert_int_equal(rtr__ring_readable(r), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			a_begin_moves_past_an_earlier_end_not_past_a_slice_it_holds, setup,
			teardown),
		cmocka_unit_test_setup_teardown(folded_span_is_one_event_with_its_duration, setup,
						teardown),
		cmocka_unit_test_setup_teardown(arguments_and_copied_names_are_views_of_the_record,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			a_pop_is_named_by_the_slice_it_ends_when_its_turn_comes, setup, teardown),
		cmocka_unit_test_setup_teardown(arguments_added_to_a_slice_go_on_its_end, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			a_record_that_does_not_decode_is_left_out_and_reported, setup, teardown),
		cmocka_unit_test_setup_teardown(a_track_event_is_placed_on_a_lane_at_host_time,
						setup, teardown),
		cmocka_unit_test_setup_teardown(the_drain_hands_a_format_whole_batches, setup,
						teardown),
	};

	return cmocka_run_group_tests_name("event", tests, NULL, NULL);
}
