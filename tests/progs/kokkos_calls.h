/* SPDX-License-Identifier: MIT */
/*
 * The Kokkos Tools interface as Kokkos calls a tool, without Kokkos, for the test
 * programs (kokkos_client.c, hybrid_prog.c): kokkos_load() dlopen()s the library
 * KOKKOS_TOOLS_LIBS names, or else KOKKOS_PROFILE_LIBRARY (as Kokkos 4 reads them),
 * RTLD_NOW | RTLD_GLOBAL as Kokkos does; KOKKOS_FN() looks a callback up by its
 * exported name (a program exits 2 when the tool lacks one); kokkos_span() begins and
 * ends a kernel or a fence by the id the begin hands back. Include it in one file of
 * a program.
 *
 * Nothing here is instrumented: a program built with -finstrument-functions counts
 * only its own functions.
 */
#ifndef RTR_TEST_KOKKOS_CALLS_H
#define RTR_TEST_KOKKOS_CALLS_H

#include "kokkos/kokkos_abi.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define KOKKOS_NOINSTR __attribute__((no_instrument_function, unused))

static void *kokkos_lib;

/* Load the tool the variables name. NULL, or what failed. */
KOKKOS_NOINSTR static const char *kokkos_load(void)
{
	const char *path = getenv("KOKKOS_TOOLS_LIBS");
	if (path == NULL)
		path = getenv("KOKKOS_PROFILE_LIBRARY");
	if (path == NULL)
		return "neither KOKKOS_TOOLS_LIBS nor KOKKOS_PROFILE_LIBRARY is set";
	kokkos_lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
	return kokkos_lib != NULL ? NULL : dlerror();
}

/* The tool's function `name`; exits 2 when it has none. */
KOKKOS_NOINSTR static void *kokkos_fn(const char *name)
{
	void *f = dlsym(kokkos_lib, name);
	if (f == NULL) {
		fprintf(stderr, "kokkos: the tool has no %s\n", name);
		exit(2);
	}
	return f;
}

#define KOKKOS_FN(type, name) ((type *)(uintptr_t)kokkos_fn(name))

/* A kernel or a fence as Kokkos reports one: kind "parallel_for", "parallel_reduce",
 * "parallel_scan" or "fence"; its begin hands back the id its end gives. */
KOKKOS_NOINSTR static void kokkos_span(const char *kind, const char *name, uint32_t device_id)
{
	char begin[48], end[48];
	uint64_t id = 0;

	snprintf(begin, sizeof(begin), "kokkosp_begin_%s", kind);
	snprintf(end, sizeof(end), "kokkosp_end_%s", kind);
	kokkosp_end_fn *end_fn = KOKKOS_FN(kokkosp_end_fn, end); /* looked up before it runs */
	KOKKOS_FN(kokkosp_begin_fn, begin)(name, device_id, &id);
	end_fn(id);
}

#endif
