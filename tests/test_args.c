/* SPDX-License-Identifier: MIT */
/* The variadic calls in C: each argument evaluated once (see args_once.h). */
#include <ringtrace.h>

#include "test_util.h"
#include "trace_read.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#define ARGS_ONCE_GROUP "args"
#include "args_once.h"

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(variadic_calls_evaluate_each_argument_once_issue10,
					  tu_teardown),
	};
	tu_filter_from_env();
	return cmocka_run_group_tests_name("args", tests, NULL, NULL);
}
