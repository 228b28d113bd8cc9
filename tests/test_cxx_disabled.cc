/* SPDX-License-Identifier: MIT */
/*
 * RINGTRACE_DISABLE from C++, built with the strict C++ warnings and -Werror and
 * without the library: every call compiles, records nothing and evaluates none of
 * its arguments, and a variable used only for tracing draws no warning.
 */
#include <ringtrace.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

extern "C" {
#include <cmocka.h> /* no extern "C" of its own */
}

static int evaluated;

static int64_t count_evaluation()
{
	return ++evaluated;
}

static void every_call_compiles_to_nothing(void **state)
{
	(void)state;
	struct rtr_config cfg;
	struct rtr_stats st;
	int only_traced = 7;
	int64_t v[2] = {1, 2};

	rtr_config_init(&cfg);
	assert_int_equal(rtr_start(&cfg), 0);
	{
		RTR_SCOPE("c", "scope");
	}
	rtr_begin("c", "n");
	rtr_end("c", "n");
	rtr_instant("c", "n");
	rtr_counter_i64("c", "n", count_evaluation());
	rtr_complete("c", "n", rtr_now_ns(), static_cast<uint64_t>(count_evaluation()));
	rtr_begin_v("c", "n", RTR_ARG_I64("k", only_traced), RTR_ARG_I64("e", count_evaluation()));
	rtr_instant_v("c", "n", RTR_ARG_STR_COPY("s", "x"), RTR_ARG_I64_ARRAY("a", v, 2));
	rtr_complete_v("c", "n", 0, 1, RTR_ARG_BOOL("b", count_evaluation()));
	rtr_instant_copy("c", "n");
	struct rtr_track *t = rtr_track_create(nullptr);
	rtr_track_instant(t, "c", "n", 0, nullptr, 0);
	assert_int_equal(rtr_stop(), 0);
	rtr_stats_get(&st);
	assert_int_equal(st.events_recorded, 0);
	assert_null(t);
	assert_int_equal(evaluated, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_call_compiles_to_nothing),
	};
	return cmocka_run_group_tests_name("cxx_disabled", tests, NULL, NULL);
}
