/* SPDX-License-Identifier: MIT */
/*
 * Built with -DRINGTRACE_DISABLE -Werror and without the library: every call
 * compiles, records nothing and evaluates none of its arguments, and a variable used
 * only for tracing draws no warning.
 */
#include <ringtrace.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

static int evaluated;

/* External, so that clang does not drop it for being named only where unevaluated. */
int64_t count_evaluation(void);
int64_t count_evaluation(void)
{
	return ++evaluated;
}

static void every_call_compiles_to_nothing(void **state)
{
	(void)state;
	struct rtr_config cfg;
	struct rtr_stats st;
	int only_traced = 7;

	cfg.path = "/nonexistent/dir/never-created.json";
	rtr_config_init(&cfg);
	assert_null(cfg.path);
	assert_int_equal(rtr_start(&cfg), 0);
	rtr_thread_name("t");
	{
		RTR_SCOPE("c", "scope");
	}
	rtr_begin("c", "n");
	rtr_end("c", "n");
	rtr_instant("c", "n");
	rtr_counter_i64("c", "n", count_evaluation());
	rtr_counter_f64("c", "n", (double)count_evaluation());
	rtr_complete("c", "n", rtr_now_ns(), (uint64_t)count_evaluation());
	rtr_begin_v("c", "n", RTR_ARG_I64("k", only_traced), RTR_ARG_I64("e", count_evaluation()));
	rtr_instant_v("c", "n", RTR_ARG_STR_COPY("s", "x"));
	rtr_complete_v("c", "n", 0, 1, RTR_ARG_BOOL("b", true));
	rtr_begin_copy("c", "n");
	rtr_instant_copy("c", "n");
	rtr_complete_copy("c", "n", 0, 1);
	assert_int_equal(rtr_flush(), 0);
	assert_int_equal(rtr_stop(), 0);
	rtr_stats_get(&st);
	assert_int_equal(st.events_recorded, 0);
	assert_int_equal(st.running, 0);
	assert_int_equal(rtr_now_ns(), 0);
	assert_string_equal(rtr_trace_path(), "");
	assert_int_equal(evaluated, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_call_compiles_to_nothing),
	};
	return cmocka_run_group_tests_name("disabled", tests, NULL, NULL);
}
