/* SPDX-License-Identifier: MIT */
/*
 * The ring on its own: producer calls from <ringtrace.h> against a consumer played
 * by the test, with no writer thread. The recorder is switched on by hand.
 */
#include "ring/ring.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define RING_BYTES 4096u
#define RECORDS	   (RING_BYTES / RTR_REC_BYTES)

static int on(void **state, int policy)
{
	(void)state;
	rtr__rings_configure(RING_BYTES, policy);
	__atomic_store_n(&rtr__active, 1, __ATOMIC_RELEASE);
	return 0;
}

static int setup_drop(void **state)
{
	return on(state, RTR_ON_FULL_DROP);
}

static int setup_block(void **state)
{
	return on(state, RTR_ON_FULL_BLOCK);
}

static int teardown(void **state)
{
	(void)state;
	__atomic_store_n(&rtr__active, 0, __ATOMIC_RELEASE);
	return 0;
}

/* The calling thread's ring, made by a first event and emptied. */
static struct rtr__ring *my_ring(void)
{
	rtr_instant("t", "first");
	struct rtr__ring *r = rtr__tls_ring;
	assert_non_null(r);
	rtr__ring_consume(r, rtr__ring_readable(r));
	return r;
}

static const struct rtr__rec *peek(struct rtr__ring *r, uint32_t i)
{
	return &r->slots[(r->tail + i) & r->mask];
}

static void new_ring_is_empty_after_consume(void **state)
{
	(void)state;
	struct rtr__ring *r = my_ring();

	assert_int_equal(rtr__ring_readable(r), 0);
	assert_int_equal(r->capacity, RECORDS);
	assert_int_equal(r->mask, RECORDS - 1);
	assert_int_equal(r->tid, gettid());
}

static void records_keep_kind_names_and_order(void **state)
{
	(void)state;
	struct rtr__ring *r = my_ring();
	static const char cat[] = "cat", a[] = "a", b[] = "b";

	rtr_begin(cat, a);
	rtr_instant(cat, b);
	rtr_end(cat, a);
	assert_int_equal(rtr__ring_readable(r), 3);
	assert_int_equal(peek(r, 0)->kind, RTR__K_BEGIN);
	assert_ptr_equal((const char *)(uintptr_t)peek(r, 0)->a, a);
	assert_ptr_equal((const char *)(uintptr_t)peek(r, 0)->b, cat);
	assert_int_equal(peek(r, 1)->kind, RTR__K_INSTANT);
	assert_ptr_equal((const char *)(uintptr_t)peek(r, 1)->a, b);
	assert_int_equal(peek(r, 2)->kind, RTR__K_END);
	assert_true(peek(r, 0)->ts <= peek(r, 1)->ts);
	assert_true(peek(r, 1)->ts <= peek(r, 2)->ts);
	rtr__ring_consume(r, 3);
	assert_int_equal(rtr__ring_readable(r), 0);
}

static void push_drops_and_counts_when_full(void **state)
{
	(void)state;
	struct rtr__ring *r = my_ring();
	uint64_t dropped = r->dropped_full;

	for (uint32_t i = 0; i < RECORDS; i++)
		rtr_instant("t", "fill");
	assert_int_equal(rtr__ring_readable(r), RECORDS);
	assert_int_equal(r->dropped_full, dropped);
	rtr_instant("t", "one too many");
	rtr_counter_i64("t", "two too many", 7);
	assert_int_equal(rtr__ring_readable(r), RECORDS);
	assert_int_equal(r->dropped_full, dropped + 2);
	/* one record freed: a one-record event fits, a two-record one does not */
	rtr__ring_consume(r, 1);
	rtr_counter_i64("t", "still too big", 7);
	assert_int_equal(r->dropped_full, dropped + 3);
	rtr_instant("t", "fits");
	assert_int_equal(r->dropped_full, dropped + 3);
	rtr__ring_consume(r, rtr__ring_readable(r));
}

static void continuation_bytes_survive_wrap_around(void **state)
{
	(void)state;
	struct rtr__ring *r = my_ring();
	char name[200];

	/* Walk the head around the ring several times with events of varying size,
	 * so continuation bytes straddle the end of the slot array at every offset. */
	for (int round = 0; round < 3 * (int)RECORDS; round++) {
		size_t len = (size_t)(round * 7) % sizeof(name);
		for (size_t i = 0; i < len; i++)
			name[i] = (char)('a' + (round + (int)i) % 26);
		name[len] = '\0';
		if (len == sizeof(name) - 1)
			continue;
		rtr_instant_copy("t", name);
		assert_int_equal(rtr__ring_readable(r), rtr__ring_event_records(4 + (uint32_t)len));
		const struct rtr__rec *rec = peek(r, 0);
		assert_int_equal(rec->kind, RTR__K_INSTANT);
		assert_int_equal(rec->flags & RTR__F_NAME_COPY, RTR__F_NAME_COPY);
		assert_int_equal(rec->ext, 4 + len);
		uint32_t got_len;
		char scratch[sizeof(got_len) + sizeof(name)];
		const char *ext = rtr__ring_ext(r, r->tail, rec->ext, scratch);
		memcpy(&got_len, ext, sizeof(got_len));
		assert_int_equal(got_len, len);
		assert_memory_equal(ext + sizeof(got_len), name, len);
		rtr__ring_consume(r, rtr__ring_event_records(rec->ext));
	}
}

static void arguments_are_laid_out_as_documented(void **state)
{
	(void)state;
	struct rtr__ring *r = my_ring();
	static const char k1[] = "i", k2[] = "s";
	struct rtr_arg args[] = {RTR_ARG_I64(k1, -5), RTR_ARG_STR_COPY(k2, "xyz")};

	rtr_begin_args("t", "with args", args, 2);
	const struct rtr__rec *rec = peek(r, 0);
	assert_int_equal(rec->nargs, 2);
	assert_int_equal(rec->ext, 2 + 2 * 16 + 3);
	uint8_t types[2];
	uint64_t pairs[4];
	char bytes[3], scratch[2 + sizeof(pairs) + 3];
	const char *ext = rtr__ring_ext(r, r->tail, rec->ext, scratch);
	memcpy(types, ext, 2);
	memcpy(pairs, ext + 2, sizeof(pairs));
	memcpy(bytes, ext + 2 + sizeof(pairs), 3);
	assert_int_equal(types[0], RTR_ARG_TYPE_I64);
	assert_int_equal(types[1], RTR_ARG_TYPE_STR_COPY);
	assert_ptr_equal((const char *)(uintptr_t)pairs[0], k1);
	assert_int_equal((int64_t)pairs[1], -5);
	assert_ptr_equal((const char *)(uintptr_t)pairs[2], k2);
	assert_int_equal(pairs[3], 3);
	assert_memory_equal(bytes, "xyz", 3);
	rtr__ring_consume(r, rtr__ring_readable(r));
}

static void end_of_a_dropped_begin_is_dropped_too(void **state)
{
	(void)state;
	struct rtr__ring *r = my_ring();
	uint64_t dropped = r->dropped_full;

	for (uint32_t i = 0; i < RECORDS; i++)
		rtr_instant("t", "fill");
	rtr_begin("t", "lost"); /* ring full: dropped */
	assert_int_equal(r->dropped_full, dropped + 1);
	rtr__ring_consume(r, rtr__ring_readable(r));

	rtr_begin("t", "inner");
	rtr_end("t", "inner");
	rtr_end("t", "lost"); /* its B is gone: so is it, and it counts */
	assert_int_equal(r->dropped_full, dropped + 2);
	assert_int_equal(rtr__ring_readable(r), 2);
	assert_int_equal(peek(r, 0)->kind, RTR__K_BEGIN);
	assert_int_equal(peek(r, 1)->kind, RTR__K_END);
	assert_string_equal((const char *)(uintptr_t)peek(r, 1)->a, "inner");
	rtr__ring_consume(r, 2);

	/* an E without any B is the program's business: written */
	rtr_end("t", "unmatched");
	assert_int_equal(rtr__ring_readable(r), 1);
	assert_int_equal(r->depth, 0);
	assert_int_equal(r->dropped_begins, 0);
	rtr__ring_consume(r, 1);
}

static void end_lost_on_a_full_ring_dooms_the_enclosing_ends(void **state)
{
	(void)state;
	struct rtr__ring *r = my_ring();
	uint64_t dropped = r->dropped_full;

	rtr_begin("t", "outer");
	rtr_begin("t", "inner");
	while (rtr__ring_readable(r) < RECORDS)
		rtr_instant("t", "fill");
	rtr_end("t", "inner"); /* ring full: dropped, its B stays open in the viewer */
	assert_int_equal(r->dropped_full, dropped + 1);
	rtr__ring_consume(r, rtr__ring_readable(r));

	/* A pair inside still nests whole under the open B. */
	rtr_begin("t", "later");
	rtr_end("t", "later");
	assert_int_equal(rtr__ring_readable(r), 2);
	/* The outer E would end "inner" in a viewer: it goes too, and counts. */
	rtr_end("t", "outer");
	assert_int_equal(rtr__ring_readable(r), 2);
	assert_int_equal(r->dropped_full, dropped + 2);
	assert_int_equal(r->depth, 0);
	assert_int_equal(r->dropped_begins, 0);
	rtr__ring_consume(r, 2);
}

static void event_inside_an_event_call_is_dropped_as_reentrant(void **state)
{
	(void)state;
	struct rtr__ring *r = my_ring();
	uint64_t reentrant = r->dropped_reentrant, events = r->events;

	/* What a signal handler finds when it interrupts an event call on its thread. */
	r->busy = 1;
	rtr_instant("t", "nested");
	rtr_counter_i64("t", "nested", 1);
	rtr_instant_v("t", "nested", RTR_ARG_I64("a", 1), RTR_ARG_STR_COPY("s", "x"));
	rtr_begin("t", "nested slice"); /* dropped: its E is doomed */
	rtr_end("t", "nested slice");
	r->busy = 0;
	assert_int_equal(rtr__ring_readable(r), 0);
	assert_int_equal(r->events, events);
	assert_int_equal(r->dropped_reentrant, reentrant + 5);
	assert_int_equal(r->depth, 0);
	assert_int_equal(r->dropped_begins, 0);

	rtr_instant("t", "after");
	assert_int_equal(rtr__ring_readable(r), 1);
	assert_int_equal(r->busy, 0);
	rtr__ring_consume(r, 1);
}

static void high_water_mark_is_tested_on_the_published_fill(void **state)
{
	(void)state;
	struct rtr__ring *r = my_ring();

	while (rtr__ring_readable(r) < r->hwm)
		rtr_instant("t", "fill");
	assert_int_equal(r->limit, r->hwm);
	/* This event carries the fill over the mark, unpublished yet: the writer would
	 * not see it over, so the producer must look again at its next event. */
	rtr_instant("t", "crosses");
	assert_true(rtr__ring_over_mark(r, rtr__ring_readable(r)));
	assert_int_equal(r->limit, r->hwm);
	/* Now the published fill is over: the writer is woken and the limit rises. */
	rtr_instant("t", "over");
	assert_int_equal(r->limit, r->capacity);
	rtr__ring_consume(r, rtr__ring_readable(r));
}

static void event_larger_than_half_the_ring_is_dropped_as_too_large(void **state)
{
	(void)state;
	struct rtr__ring *r = my_ring();
	char big[RING_BYTES];
	uint64_t before = r->dropped_large;

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	rtr_instant_copy("t", big);
	assert_int_equal(r->dropped_large, before + 1);
	assert_int_equal(rtr__ring_readable(r), 0);
}

static void calls_while_off_record_nothing(void **state)
{
	(void)state;
	struct rtr__ring *r = my_ring();

	__atomic_store_n(&rtr__active, 0, __ATOMIC_RELEASE);
	rtr_begin("t", "off");
	rtr_counter_i64("t", "off", 1);
	rtr_instant_copy("t", "off");
	{
		RTR_SCOPE("t", "off");
	}
	__atomic_store_n(&rtr__active, 1, __ATOMIC_RELEASE);
	assert_int_equal(rtr__ring_readable(r), 0);
}

/* A producer and a consumer thread through a small ring in block mode. */
#define SPSC_EVENTS 200000

static void *produce(void *arg)
{
	(void)arg;
	for (int64_t i = 0; i < SPSC_EVENTS; i++) {
		if (i % 3 == 0)
			rtr_counter_i64("t", "seq", i);
		else
			rtr_complete("t", "seq", (uint64_t)i, (uint64_t)i * 2);
	}
	rtr_instant("t", "done");
	return rtr__tls_ring;
}

static void concurrent_producer_and_consumer_lose_and_reorder_nothing(void **state)
{
	(void)state;
	pthread_t t;
	struct rtr__ring *r = NULL;
	struct rtr__ring_list rings;

	assert_int_equal(pthread_create(&t, NULL, produce, NULL), 0);
	int64_t expect = 0;
	while (expect <= SPSC_EVENTS) {
		if (r == NULL) {
			/* find the producer's ring: the one not ours and not closed */
			size_t n = rtr__rings_list(&rings);
			for (size_t i = 0; i < n; i++)
				if (rings.v[i]->tid != gettid() &&
				    !__atomic_load_n(&rings.v[i]->closed, __ATOMIC_ACQUIRE))
					r = rings.v[i];
			rtr__rings_list_done(&rings);
			continue;
		}
		uint32_t avail = rtr__ring_readable(r);
		uint32_t done = 0;
		while (done < avail) {
			const struct rtr__rec *rec = &r->slots[(r->tail + done) & r->mask];
			if (expect == SPSC_EVENTS) {
				assert_int_equal(rec->kind, RTR__K_INSTANT);
			} else if (expect % 3 == 0) {
				assert_int_equal(rec->kind, RTR__K_COUNTER_I64);
				assert_int_equal(r->slots[(r->tail + done + 1) & r->mask].ts,
						 expect);
			} else {
				assert_int_equal(rec->kind, RTR__K_COMPLETE);
				assert_int_equal(rec->ts, expect);
				assert_int_equal(r->slots[(r->tail + done + 1) & r->mask].ts,
						 expect * 2);
			}
			expect++;
			done += rtr__ring_event_records(rec->ext);
		}
		rtr__ring_consume(r, done);
	}
	void *ring;
	pthread_join(t, &ring);
	assert_ptr_equal(ring, r);
	assert_int_equal(r->dropped_full, 0);
	assert_int_equal(r->events, SPSC_EVENTS + 1);
	/* the producer exited: its ring is closed, and the test frees it */
	assert_true(rtr__ring_closed(r));
	assert_int_equal(rtr__ring_readable(r), 0);
	rtr__rings_free(r);
}

static void *exit_after_one_event(void *arg)
{
	(void)arg;
	rtr_instant("t", "bye");
	return rtr__tls_ring;
}

static void thread_exit_closes_the_ring_after_its_last_event(void **state)
{
	(void)state;
	pthread_t t;
	void *ring;

	assert_int_equal(pthread_create(&t, NULL, exit_after_one_event, NULL), 0);
	pthread_join(t, &ring);
	struct rtr__ring *r = ring;
	assert_true(rtr__ring_closed(r));
	assert_int_equal(rtr__ring_readable(r), 1);
	rtr__ring_consume(r, 1);
	rtr__rings_free(r);
}

/* The writer is not linked in as a thread here; the ring's wake-up hook is a no-op. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(new_ring_is_empty_after_consume, setup_drop,
						teardown),
		cmocka_unit_test_setup_teardown(records_keep_kind_names_and_order, setup_drop,
						teardown),
		cmocka_unit_test_setup_teardown(push_drops_and_counts_when_full, setup_drop,
						teardown),
		cmocka_unit_test_setup_teardown(continuation_bytes_survive_wrap_around, setup_drop,
						teardown),
		cmocka_unit_test_setup_teardown(arguments_are_laid_out_as_documented, setup_drop,
						teardown),
		cmocka_unit_test_setup_teardown(end_of_a_dropped_begin_is_dropped_too, setup_drop,
						teardown),
		cmocka_unit_test_setup_teardown(end_lost_on_a_full_ring_dooms_the_enclosing_ends,
						setup_drop, teardown),
		cmocka_unit_test_setup_teardown(event_inside_an_event_call_is_dropped_as_reentrant,
						setup_drop, teardown),
		cmocka_unit_test_setup_teardown(high_water_mark_is_tested_on_the_published_fill,
						setup_drop, teardown),
		cmocka_unit_test_setup_teardown(
			event_larger_than_half_the_ring_is_dropped_as_too_large, setup_drop,
			teardown),
		cmocka_unit_test_setup_teardown(calls_while_off_record_nothing, setup_drop,
						teardown),
		cmocka_unit_test_setup_teardown(
			concurrent_producer_and_consumer_lose_and_reorder_nothing, setup_block,
			teardown),
		cmocka_unit_test_setup_teardown(thread_exit_closes_the_ring_after_its_last_event,
						setup_drop, teardown),
	};
	return cmocka_run_group_tests_name("ring", tests, NULL, NULL);
}
