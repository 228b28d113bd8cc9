/* SPDX-License-Identifier: MIT */
/* The intern cache: escaped once, found by pointer or content, reset when full. */
#include "format/json/intern.h"
#include "common/jsontext.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#define SMALL_ARENA (2 * (RTR_INTERN_MAX_ESCAPED + RTR_INTERN_MAX_INPUT))

static int setup_small(void **state)
{
	static struct rtr__intern in;

	assert_int_equal(rtr__intern_init(&in, SMALL_ARENA, 64), 0);
	*state = &in;
	return 0;
}

static int teardown(void **state)
{
	rtr__intern_destroy(*state);
	return 0;
}

static void assert_istr(struct rtr__istr got, const char *want)
{
	assert_int_equal(got.len, strlen(want));
	assert_memory_equal(got.bytes, want, got.len);
}

static void static_string_is_escaped_once_and_then_hit(void **state)
{
	struct rtr__intern *in = *state;
	static const char name[] = "say \"hi\"\n";

	assert_istr(rtr__intern_static(in, name), "say \\\"hi\\\"\\n");
	assert_int_equal(in->misses, 1);
	assert_istr(rtr__intern_static(in, name), "say \\\"hi\\\"\\n");
	assert_int_equal(in->hits, 1);
	assert_int_equal(in->misses, 1);
}

static void static_strings_are_told_apart_by_pointer(void **state)
{
	struct rtr__intern *in = *state;
	/* Same bytes at two addresses: two entries; the cache never reads them twice. */
	static const char a[] = "same";
	static char b[] = "same";

	assert_istr(rtr__intern_static(in, a), "same");
	assert_istr(rtr__intern_static(in, b), "same");
	assert_int_equal(in->misses, 2);
	assert_int_equal(in->count, 2);
}

static void copied_strings_are_found_by_content(void **state)
{
	struct rtr__intern *in = *state;
	char one[16], two[16];

	snprintf(one, sizeof(one), "step %d", 7);
	snprintf(two, sizeof(two), "step %d", 7);
	assert_istr(rtr__intern_bytes(in, one, strlen(one)), "step 7");
	assert_istr(rtr__intern_bytes(in, two, strlen(two)), "step 7");
	assert_int_equal(in->misses, 1);
	assert_int_equal(in->hits, 1);
	/* a prefix is a different string */
	assert_istr(rtr__intern_bytes(in, two, 4), "step");
	assert_int_equal(in->misses, 2);
	/* content with a NUL byte and invalid UTF-8 */
	assert_istr(rtr__intern_bytes(in, "a\0b\xff", 4), "a\\u0000b\xef\xbf\xbd");
}

static void long_static_string_is_cut_at_the_input_limit(void **state)
{
	struct rtr__intern *in = *state;
	static char big[RTR_INTERN_MAX_INPUT + 100];

	memset(big, 'x', sizeof(big) - 1);
	struct rtr__istr got = rtr__intern_static(in, big);
	assert_int_equal(got.len, RTR_INTERN_MAX_INPUT);
}

static void cache_resets_when_the_table_fills_and_keeps_answering(void **state)
{
	struct rtr__intern *in = *state;
	char names[200][16];

	/* 64 slots, reset at half: 200 distinct strings force several resets. */
	for (int i = 0; i < 200; i++) {
		snprintf(names[i], sizeof(names[i]), "name-%d", i);
		struct rtr__istr got = rtr__intern_bytes(in, names[i], strlen(names[i]));
		assert_istr(got, names[i]);
		assert_true(in->count <= 32);
	}
	assert_true(in->resets >= 5);
	/* after the resets, old strings are escaped again, correctly */
	assert_istr(rtr__intern_bytes(in, names[0], strlen(names[0])), "name-0");
}

static void cache_resets_when_the_arena_fills(void **state)
{
	struct rtr__intern *in = *state;
	static char big[4][RTR_INTERN_MAX_INPUT];

	for (int i = 0; i < 4; i++) {
		memset(big[i], '\x01', sizeof(big[i]) - 1); /* each byte escapes to 6 */
		big[i][sizeof(big[i]) - 1] = '\0';
	}
	uint64_t resets = in->resets;
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 4; i++) {
			struct rtr__istr got = rtr__intern_static(in, big[i]);
			assert_int_equal(got.len, (RTR_INTERN_MAX_INPUT - 1) * 6);
			assert_memory_equal(got.bytes, "\\u0001", 6);
			assert_true(in->arena_used <= in->arena_cap);
		}
	}
	assert_true(in->resets > resets);
}

static void init_refuses_a_cache_too_small_for_one_string(void **state)
{
	(void)state;
	struct rtr__intern in;

	assert_int_equal(rtr__intern_init(&in, 1024, 64), -22);
	assert_int_equal(rtr__intern_init(&in, SMALL_ARENA, 63), -22);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(static_string_is_escaped_once_and_then_hit,
						setup_small, teardown),
		cmocka_unit_test_setup_teardown(static_strings_are_told_apart_by_pointer,
						setup_small, teardown),
		cmocka_unit_test_setup_teardown(copied_strings_are_found_by_content, setup_small,
						teardown),
		cmocka_unit_test_setup_teardown(long_static_string_is_cut_at_the_input_limit,
						setup_small, teardown),
		cmocka_unit_test_setup_teardown(
			cache_resets_when_the_table_fills_and_keeps_answering, setup_small,
			teardown),
		cmocka_unit_test_setup_teardown(cache_resets_when_the_arena_fills, setup_small,
						teardown),
		cmocka_unit_test(init_refuses_a_cache_too_small_for_one_string),
	};
	return cmocka_run_group_tests_name("intern", tests, NULL, NULL);
}
