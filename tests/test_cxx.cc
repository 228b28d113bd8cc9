/* SPDX-License-Identifier: MIT */
/*
 * The public header from C++: built with -Wall -Wextra -Wpedantic -Wold-style-cast
 * -Wzero-as-null-pointer-constant -Werror (C++11 and C++17), and the variadic calls
 * evaluate each argument once (see args_once.h).
 */
#include <ringtrace.h>
#include <ringtrace/value.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

/* C headers without extern "C" of their own */
extern "C" {
#include "test_util.h"
#include "trace_read.h"

#include <cmocka.h>
}

#define ARGS_ONCE_GROUP "cxx"
#include "args_once.h"

/* The argument macros as values and in arrays, and the scope, from C++. */
static void argument_macros_make_values(void **state)
{
	static const int64_t v[3] = {1, 2, 3};
	static const char *const strs[2] = {"a", "b"};
	int64_t n = 41;

	(void)state;
	struct rtr_arg a[] = {
		RTR_ARG_I64("i", ++n),	      RTR_ARG_U64("u", 7u),
		RTR_ARG_F64("f", 0.5f),	      RTR_ARG_BOOL("b", 1),
		RTR_ARG_STR("s", "x"),	      RTR_ARG_STR_COPY("c", nullptr),
		RTR_ARG_I64_ARRAY("a", v, 3), RTR_ARG_STR_ARRAY("t", strs, 2),
	};
	unsigned char bytes[32];
	struct rtr_value val;
	rtr_value_init(&val, bytes, sizeof(bytes));
	rtr_value_array(&val, 2);
	rtr_value_i64(&val, 1);
	rtr_value_str(&val, "x", 1);
	assert_false(val.cut);
	assert_int_equal(val.len, 5 + 9 + 6);
	struct rtr_arg value = RTR_ARG_VALUE("v", bytes, val.len);
	assert_int_equal(value.type, RTR_ARG_TYPE_VALUE);
	assert_ptr_equal(value.v.value.bytes, bytes);
	assert_int_equal(value.v.value.len, 20);
	assert_int_equal(n, 42);
	assert_int_equal(a[0].type, RTR_ARG_TYPE_I64);
	assert_int_equal(a[0].v.i64, 42);
	assert_int_equal(a[1].v.u64, 7);
	assert_true(a[2].v.f64 == 0.5);
	assert_true(a[3].v.b);
	assert_ptr_equal(a[6].v.i64s.v, v);
	assert_int_equal(a[6].v.i64s.n, 3);
	assert_ptr_equal(a[7].v.strs.v, strs);
	assert_int_equal(a[7].v.strs.n, 2);
	{
		RTR_SCOPE("cxx", "scope"); /* the recorder is off: nothing recorded */
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(argument_macros_make_values),
		cmocka_unit_test_teardown(variadic_calls_evaluate_each_argument_once_issue10,
					  tu_teardown),
	};
	tu_filter_from_env();
	return cmocka_run_group_tests_name("cxx", tests, NULL, NULL);
}
