/* SPDX-License-Identifier: MIT */
/* RTR_SCOPE from C: case 0 compiles, case 1 (a runtime name) must not (ctest). */
#include <ringtrace.h>

void use(const char *p);

void use(const char *p)
{
	(void)p;
#if RTR_CASE == 0
	RTR_SCOPE("c", "n");
#else
	static char buf[16]; /* a static array: a constant address, but not a literal */
	RTR_SCOPE("c", buf);
#endif
}
