/* SPDX-License-Identifier: MIT */
/*
 * ITT as a program built with ITT's static part speaks it, without that part, for the
 * test programs (itt_client.c, hybrid_prog.c): the static part's pointers, each
 * starting at its init stub (here: NULL), in an api_list laid out as the static part's
 * (src/itt/itt_abi.h); itt_load() finds the collector through INTEL_LIBITTNOTIFY64,
 * dlopen()s it and calls its __itt_api_init() with that table; itt_begin()/itt_end()
 * call through the pointers as the program's ITT calls would (skipping a call when a
 * domain's flags are 0 or the pointer is empty). Include it in one file of a program.
 *
 * Nothing here is instrumented: a program built with -finstrument-functions counts
 * only its own functions.
 */
#ifndef RTR_TEST_ITT_CALLS_H
#define RTR_TEST_ITT_CALLS_H

#include "itt/itt_abi.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define ITT_NOINSTR __attribute__((no_instrument_function, unused))

static itt_domain_create_fn *itt_domain_create;
static itt_string_handle_create_fn *itt_string_handle_create;
static itt_task_begin_fn *itt_task_begin;
static itt_task_end_fn *itt_task_end;
static itt_frame_fn *itt_frame_begin, *itt_frame_end;
static itt_thread_set_name_fn *itt_thread_set_name;
static itt_counter_create_fn *itt_counter_create;
static itt_counter_set_value_fn *itt_counter_set_value;
static itt_counter_inc_fn *itt_counter_inc, *itt_counter_dec;
static itt_counter_delta_fn *itt_counter_inc_delta;
static itt_control_fn *itt_pause, *itt_resume, *itt_detach;
static void *itt_sync_create; /* a function the collector does not provide */

ITT_NOINSTR static void itt_null_stub(void)
{
}

#define ITT_ENTRY(name, ptr, null)                   \
	{                                            \
		name, (void **)&(ptr), NULL, null, 1 \
	}
static struct itt_api_info itt_api_list[] = {
	ITT_ENTRY("__itt_domain_create", itt_domain_create, NULL),
	ITT_ENTRY("__itt_string_handle_create", itt_string_handle_create, NULL),
	ITT_ENTRY("__itt_task_begin", itt_task_begin, NULL),
	ITT_ENTRY("__itt_task_end", itt_task_end, NULL),
	ITT_ENTRY("__itt_frame_begin_v3", itt_frame_begin, NULL),
	ITT_ENTRY("__itt_frame_end_v3", itt_frame_end, NULL),
	ITT_ENTRY("__itt_thread_set_name", itt_thread_set_name, NULL),
	ITT_ENTRY("__itt_counter_create", itt_counter_create, NULL),
	ITT_ENTRY("__itt_counter_set_value", itt_counter_set_value, NULL),
	ITT_ENTRY("__itt_counter_inc", itt_counter_inc, NULL),
	ITT_ENTRY("__itt_counter_dec", itt_counter_dec, NULL),
	ITT_ENTRY("__itt_counter_inc_delta", itt_counter_inc_delta, NULL),
	ITT_ENTRY("__itt_pause", itt_pause, NULL),
	ITT_ENTRY("__itt_resume", itt_resume, NULL),
	ITT_ENTRY("__itt_detach", itt_detach, NULL),
	ITT_ENTRY("__itt_sync_create", itt_sync_create, (void *)(uintptr_t)itt_null_stub),
	{NULL, NULL, NULL, NULL, 0},
};

static struct itt_global itt_global = {
	.magic = RTR_ITT_MAGIC,
	.version_major = 3,
	.version_minor = 0,
	.mutex = PTHREAD_MUTEX_INITIALIZER,
	.api_list = itt_api_list,
};

static const struct itt_id itt_null_id;

/* Load the collector INTEL_LIBITTNOTIFY64 names and let it fill the pointers, as the
 * static part does on a program's first ITT call. 0, or which step failed (1 no
 * variable, 2 dlopen, 3 no __itt_api_init). */
ITT_NOINSTR static int itt_load(void)
{
	const char *path = getenv("INTEL_LIBITTNOTIFY64");
	if (path == NULL)
		return 1;
	void *lib = dlopen(path, RTLD_LAZY);
	if (lib == NULL)
		return 2;
	/* The static part takes a library with __itt_api_init as a version-2 collector. */
	itt_api_init_fn *api_init = (itt_api_init_fn *)(uintptr_t)dlsym(lib, RTR_ITT_API_INIT_NAME);
	if (api_init == NULL)
		return 3;
	api_init(&itt_global, -1);
	itt_global.api_initialized = 1;
	return 0;
}

/* As the program's calls do: nothing when the domain is off or the pointer empty (or,
 * here, without a domain: no collector made it). */
ITT_NOINSTR static void itt_begin(const struct itt_domain *d, struct itt_id id,
				  struct itt_id parent, struct itt_string_handle *name)
{
	if (d != NULL && d->flags && itt_task_begin != NULL)
		itt_task_begin(d, id, parent, name);
}

ITT_NOINSTR static void itt_end(const struct itt_domain *d)
{
	if (d != NULL && d->flags && itt_task_end != NULL)
		itt_task_end(d);
}

#endif
