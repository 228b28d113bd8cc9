/* SPDX-License-Identifier: MIT */
/*
 * A runtime string where a literal is needed must not compile: compiled once per
 * RTR_CASE by ctest (tests/CMakeLists.txt), case 0 (literals only) expecting
 * success and every other case expecting the compiler to fail (WILL_FAIL).
 */
#include <ringtrace.hpp>

#include <string>

void use(const std::string &s);

void use(const std::string &s)
{
	const char *p = s.c_str();
	(void)p;
#if RTR_CASE == 0 /* the control: the same calls with literals and copies compile */
	RINGTRACE_SCOPE("c", "n", "k", p);
	RTR_SCOPE("c", "n");
	ringtrace::Scope sc("c", std::string_view(p));
	ringtrace::instant("c", "n", ringtrace::arg("k", 1));
#elif RTR_CASE == 1
	RINGTRACE_SCOPE("c", s.c_str()); /* a runtime name in the macro */
#elif RTR_CASE == 2
	RTR_SCOPE("c", s.c_str()); /* the C macro from C++ */
#elif RTR_CASE == 3
	ringtrace::Scope sc("c", p); /* a const char * name: say std::string_view(p) */
#elif RTR_CASE == 4
	RINGTRACE_SCOPE("c", "n", p, 1); /* a runtime key */
#elif RTR_CASE == 5
	ringtrace::instant(p, "n"); /* a runtime category */
#elif RTR_CASE == 6
	ringtrace::instant("c", "n", ringtrace::arg(p, 1)); /* a runtime key */
#elif RTR_CASE == 7
	RINGTRACE_SCOPE("c", "n", "k"); /* a key without its value */
#elif RTR_CASE == 8
	RINGTRACE_SCOPE(p, "n"); /* a runtime category in the macro */
#endif
}
