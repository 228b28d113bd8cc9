/* SPDX-License-Identifier: MIT */
/*
 * ringtrace.hpp with RINGTRACE_DISABLE, built without the library: the macros
 * evaluate none of their arguments, a variable used only for tracing draws no
 * warning, and the classes and functions do nothing.
 */
#include <ringtrace.hpp>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <string>

extern "C" {
#include <cmocka.h> /* no extern "C" of its own */
}

static int evaluated;

static int count_evaluation()
{
	return ++evaluated;
}

static void every_call_compiles_to_nothing(void **state)
{
	(void)state;
	int only_traced = 7;
	std::string s = "x";

	ringtrace::Session session(ringtrace::Config()
					   .path("unused.json")
					   .rotate(16, 60, 3)
					   .flight(8)
					   .signals("TERM")
					   .snapshot_signal(std::string("USR2")));
	assert_int_equal(session.snapshot(), 0);
	{
		RINGTRACE_SCOPE("c", "scope");
		RINGTRACE_SCOPE("c", "args", "k", only_traced, "e", count_evaluation());
		RINGTRACE_INSTANT("c", "i", "e", count_evaluation());
		ringtrace::Scope a("c", "n");
		ringtrace::Scope b("c", s);
		a.add("k", 1);
		a.add("f", 0.5);
		a.add("s", s);
		ringtrace::end("c", s);
		ringtrace::instant("c", "n", ringtrace::arg("k", 1));
		ringtrace::counter("c", "n", 1);
		ringtrace::flow_start("c", "n", ringtrace::flow_id());
		ringtrace::thread_name(s);
	}
	assert_false(static_cast<bool>(session));
	assert_false(ringtrace::enabled("c"));
	assert_int_equal(session.stop(), 0);
	assert_int_equal(evaluated, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_call_compiles_to_nothing),
	};
	return cmocka_run_group_tests_name("cxx_api_disabled", tests, NULL, NULL);
}
