/* SPDX-License-Identifier: MIT */
/*
 * NVTX as a program's copy of the NVTX v3 header speaks it, without the header, for
 * the test programs (nvtx_client.c, hybrid_prog.c): one function pointer per slot of
 * the core and core2 modules; nvtx_load() loads the library named by
 * NVTX_INJECTION64_PATH and hands its InitializeInjectionNvtx2 an export-table
 * function whose callbacks table gives out those slots; the nvtx_* macros call through
 * the slots the tool filled (an empty slot is a call that does nothing, as in the
 * header). Include it in one file of a program: its slots are that file's.
 *
 * Nothing here is instrumented: a program built with -finstrument-functions counts
 * only its own functions.
 */
#ifndef RTR_TEST_NVTX_CALLS_H
#define RTR_TEST_NVTX_CALLS_H

#include "nvtx/nvtx_abi.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#define NVTX_NOINSTR __attribute__((no_instrument_function, unused))

static rtr_nvtx_fn nvtx_core[RTR_NVTX_CORE_SLOTS];
static rtr_nvtx_fn nvtx_core2[RTR_NVTX_CORE2_SLOTS];
static rtr_nvtx_fn *nvtx_core_table[RTR_NVTX_CORE_SLOTS];
static rtr_nvtx_fn *nvtx_core2_table[RTR_NVTX_CORE2_SLOTS];

NVTX_NOINSTR static int nvtx_get_module(int module, rtr_nvtx_table *out, unsigned int *size)
{
	rtr_nvtx_fn **t = module == RTR_NVTX_MODULE_CORE    ? nvtx_core_table
			  : module == RTR_NVTX_MODULE_CORE2 ? nvtx_core2_table
							    : NULL;
	if (t == NULL)
		return 0;
	for (unsigned i = 1; i < RTR_NVTX_CORE_SLOTS; i++) /* slot 0 is unused */
		t[i] = module == RTR_NVTX_MODULE_CORE ? &nvtx_core[i] : &nvtx_core2[i];
	*out = t;
	*size = RTR_NVTX_CORE_SLOTS;
	return 1;
}

static const struct rtr_nvtx_callbacks_table nvtx_callbacks = {sizeof(nvtx_callbacks),
							       nvtx_get_module};

NVTX_NOINSTR static const void *nvtx_get_export_table(uint32_t id)
{
	return id == RTR_NVTX_ETID_CALLBACKS ? &nvtx_callbacks : NULL;
}

/* Load the tool NVTX_INJECTION64_PATH names and let it fill the slots, as the header
 * does on a program's first NVTX call. NULL, or what failed. */
NVTX_NOINSTR static const char *nvtx_load(void)
{
	const char *path = getenv("NVTX_INJECTION64_PATH");
	if (path == NULL)
		return "NVTX_INJECTION64_PATH unset";
	void *lib = dlopen(path, RTLD_LAZY);
	if (lib == NULL)
		return dlerror();
	int (*init)(rtr_nvtx_get_export_table_fn) =
		(int (*)(rtr_nvtx_get_export_table_fn))dlsym(lib, "InitializeInjectionNvtx2");
	if (init == NULL || init(nvtx_get_export_table) != 1)
		return "InitializeInjectionNvtx2";
	return NULL;
}

/* The calls, as the header's wrappers make them: through the slot when filled. */
#define NVTX_CALL(table, slot, type, ...) \
	((table)[slot] != NULL ? ((type)(void (*)(void))(table)[slot])(__VA_ARGS__) : 0)
typedef const struct rtr_nvtx_attributes nvtx_attrs;
#define nvtx_push_a(m)	NVTX_CALL(nvtx_core, RTR_NVTX_CORE_RANGE_PUSH_A, int (*)(const char *), m)
#define nvtx_push_w(m)	NVTX_CALL(nvtx_core, RTR_NVTX_CORE_RANGE_PUSH_W, int (*)(const wchar_t *), m)
#define nvtx_push_ex(a) NVTX_CALL(nvtx_core, RTR_NVTX_CORE_RANGE_PUSH_EX, int (*)(nvtx_attrs *), a)
#define nvtx_pop()	NVTX_CALL(nvtx_core, RTR_NVTX_CORE_RANGE_POP, int (*)(void), )
#define nvtx_start_a(m) \
	NVTX_CALL(nvtx_core, RTR_NVTX_CORE_RANGE_START_A, rtr_nvtx_range_id (*)(const char *), m)
#define nvtx_start_ex(a) \
	NVTX_CALL(nvtx_core, RTR_NVTX_CORE_RANGE_START_EX, rtr_nvtx_range_id (*)(nvtx_attrs *), a)
#define nvtx_end(id)	NVTX_CALL(nvtx_core, RTR_NVTX_CORE_RANGE_END, int (*)(rtr_nvtx_range_id), id)
#define nvtx_mark_a(m)	NVTX_CALL(nvtx_core, RTR_NVTX_CORE_MARK_A, int (*)(const char *), m)
#define nvtx_mark_w(m)	NVTX_CALL(nvtx_core, RTR_NVTX_CORE_MARK_W, int (*)(const wchar_t *), m)
#define nvtx_mark_ex(a) NVTX_CALL(nvtx_core, RTR_NVTX_CORE_MARK_EX, int (*)(nvtx_attrs *), a)
#define nvtx_name_thread(t, n) \
	NVTX_CALL(nvtx_core, RTR_NVTX_CORE_NAME_OS_THREAD_A, int (*)(uint32_t, const char *), t, n)
#define nvtx_name_cat(c, n) \
	NVTX_CALL(nvtx_core, RTR_NVTX_CORE_NAME_CATEGORY_A, int (*)(uint32_t, const char *), c, n)
#define nvtx_domain_create(n) \
	NVTX_CALL(nvtx_core2, RTR_NVTX_CORE2_DOMAIN_CREATE_A, const void *(*)(const char *), n)
#define nvtx_domain_register(d, s)                              \
	NVTX_CALL(nvtx_core2, RTR_NVTX_CORE2_REGISTER_STRING_A, \
		  const void *(*)(const void *, const char *), d, s)
#define nvtx_domain_name_cat(d, c, n)                         \
	NVTX_CALL(nvtx_core2, RTR_NVTX_CORE2_NAME_CATEGORY_A, \
		  int (*)(const void *, uint32_t, const char *), d, c, n)
#define nvtx_domain_push_ex(d, a)                                                                \
	NVTX_CALL(nvtx_core2, RTR_NVTX_CORE2_RANGE_PUSH_EX, int (*)(const void *, nvtx_attrs *), \
		  d, a)
#define nvtx_domain_pop(d) NVTX_CALL(nvtx_core2, RTR_NVTX_CORE2_RANGE_POP, int (*)(const void *), d)
#define nvtx_domain_mark_ex(d, a) \
	NVTX_CALL(nvtx_core2, RTR_NVTX_CORE2_MARK_EX, int (*)(const void *, nvtx_attrs *), d, a)
#define nvtx_domain_start_ex(d, a)                           \
	NVTX_CALL(nvtx_core2, RTR_NVTX_CORE2_RANGE_START_EX, \
		  rtr_nvtx_range_id (*)(const void *, nvtx_attrs *), d, a)
#define nvtx_domain_end(d, id)                                                                    \
	NVTX_CALL(nvtx_core2, RTR_NVTX_CORE2_RANGE_END, int (*)(const void *, rtr_nvtx_range_id), \
		  d, id)

/* Event attributes of the version-3 layout, everything else zero. */
NVTX_NOINSTR static struct rtr_nvtx_attributes nvtx_attr_init(void)
{
	struct rtr_nvtx_attributes a;
	memset(&a, 0, sizeof(a));
	a.version = 3;
	a.size = (uint16_t)sizeof(a);
	return a;
}

#endif
