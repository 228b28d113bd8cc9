/* SPDX-License-Identifier: MIT */
/*
 * The NVTX v3 injection interface, as this project's own declarations of the
 * published facts: the entry point a tool exports, the export table ids, the callback
 * modules and each callback's slot in its module, the event attributes' layout and
 * the values of its type fields. Nothing here comes from NVIDIA's files; the numbers
 * are the interface's (NVIDIA/NVTX, nvtxDetail/nvtxTypes.h and nvToolsExt.h).
 *
 * How a program attaches a tool: on its first NVTX call the program's copy of the
 * header dlopen()s the library named by NVTX_INJECTION64_PATH, calls its
 * InitializeInjectionNvtx2(get_export_table), and the tool asks get_export_table for
 * NVTX_ETID_CALLBACKS. That table's get_module_function_table(module, &table, &size)
 * hands out an array of `size` pointers to the program's function pointers, one per
 * slot (slot 0 unused); the tool stores its own function at *table[slot].
 */
#ifndef RTR_NVTX_ABI_H
#define RTR_NVTX_ABI_H

#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

/* Export table ids (the argument of the get_export_table function). */
enum {
	RTR_NVTX_ETID_CALLBACKS = 1,
	RTR_NVTX_ETID_VERSIONINFO = 3,
};

/* Callback modules. */
enum {
	RTR_NVTX_MODULE_CORE = 1,
	RTR_NVTX_MODULE_CUDA = 2,
	RTR_NVTX_MODULE_OPENCL = 3,
	RTR_NVTX_MODULE_CUDART = 4,
	RTR_NVTX_MODULE_CORE2 = 5,
	RTR_NVTX_MODULE_SYNC = 6,
};

/* Slots of the core module. */
enum {
	RTR_NVTX_CORE_MARK_EX = 1,
	RTR_NVTX_CORE_MARK_A = 2,
	RTR_NVTX_CORE_MARK_W = 3,
	RTR_NVTX_CORE_RANGE_START_EX = 4,
	RTR_NVTX_CORE_RANGE_START_A = 5,
	RTR_NVTX_CORE_RANGE_START_W = 6,
	RTR_NVTX_CORE_RANGE_END = 7,
	RTR_NVTX_CORE_RANGE_PUSH_EX = 8,
	RTR_NVTX_CORE_RANGE_PUSH_A = 9,
	RTR_NVTX_CORE_RANGE_PUSH_W = 10,
	RTR_NVTX_CORE_RANGE_POP = 11,
	RTR_NVTX_CORE_NAME_CATEGORY_A = 12,
	RTR_NVTX_CORE_NAME_CATEGORY_W = 13,
	RTR_NVTX_CORE_NAME_OS_THREAD_A = 14,
	RTR_NVTX_CORE_NAME_OS_THREAD_W = 15,
	RTR_NVTX_CORE_SLOTS = 16,
};

/* Slots of the core2 module (domains). */
enum {
	RTR_NVTX_CORE2_MARK_EX = 1,
	RTR_NVTX_CORE2_RANGE_START_EX = 2,
	RTR_NVTX_CORE2_RANGE_END = 3,
	RTR_NVTX_CORE2_RANGE_PUSH_EX = 4,
	RTR_NVTX_CORE2_RANGE_POP = 5,
	RTR_NVTX_CORE2_RESOURCE_CREATE = 6,
	RTR_NVTX_CORE2_RESOURCE_DESTROY = 7,
	RTR_NVTX_CORE2_NAME_CATEGORY_A = 8,
	RTR_NVTX_CORE2_NAME_CATEGORY_W = 9,
	RTR_NVTX_CORE2_REGISTER_STRING_A = 10,
	RTR_NVTX_CORE2_REGISTER_STRING_W = 11,
	RTR_NVTX_CORE2_DOMAIN_CREATE_A = 12,
	RTR_NVTX_CORE2_DOMAIN_CREATE_W = 13,
	RTR_NVTX_CORE2_DOMAIN_DESTROY = 14,
	RTR_NVTX_CORE2_INITIALIZE = 15,
	RTR_NVTX_CORE2_SLOTS = 16,
};

/* nvtxEventAttributes_t's type fields. */
enum {
	RTR_NVTX_COLOR_ARGB = 1,
};
enum {
	RTR_NVTX_PAYLOAD_U64 = 1,
	RTR_NVTX_PAYLOAD_I64 = 2,
	RTR_NVTX_PAYLOAD_DOUBLE = 3,
	RTR_NVTX_PAYLOAD_U32 = 4,
	RTR_NVTX_PAYLOAD_I32 = 5,
	RTR_NVTX_PAYLOAD_FLOAT = 6,
};
enum {
	RTR_NVTX_MESSAGE_ASCII = 1,
	RTR_NVTX_MESSAGE_UNICODE = 2, /* wchar_t */
	RTR_NVTX_MESSAGE_REGISTERED = 3,
};

/* The attributes of an Ex call, version 3 layout (48 bytes on LP64): `size` is the
 * caller's sizeof; the fields up to `message` are in every version that has them. */
struct rtr_nvtx_attributes {
	uint16_t version;
	uint16_t size;
	uint32_t category;
	int32_t color_type;
	uint32_t color;
	int32_t payload_type;
	int32_t reserved0;
	union {
		uint64_t u64;
		int64_t i64;
		double f64;
		uint32_t u32;
		int32_t i32;
		float f32;
	} payload;
	int32_t message_type;
	union {
		const char *ascii;
		const wchar_t *unicode;
		const void *registered; /* a handle the tool returned from RegisterString */
	} message;
};

/* The handles are the tool's own pointers (opaque to the program). */
typedef uint64_t rtr_nvtx_range_id;
typedef void (*rtr_nvtx_fn)(void);
typedef rtr_nvtx_fn **rtr_nvtx_table; /* array of pointers to the program's slots */

struct rtr_nvtx_callbacks_table {
	size_t struct_size;
	int (*get_module_function_table)(int module, rtr_nvtx_table *out_table,
					 unsigned int *out_size);
};

struct rtr_nvtx_version_table {
	size_t struct_size;
	uint32_t version;
	uint32_t reserved0;
	void (*set_injection_version)(uint32_t version);
};

typedef const void *(*rtr_nvtx_get_export_table_fn)(uint32_t export_table_id);

/* The entry point, under the name the program's header looks up; 1: attached. */
int InitializeInjectionNvtx2(rtr_nvtx_get_export_table_fn get_export_table);

#endif /* RTR_NVTX_ABI_H */
