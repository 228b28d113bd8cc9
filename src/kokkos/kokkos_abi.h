/* SPDX-License-Identifier: MIT */
/*
 * The Kokkos Tools interface a tool library implements, as the published interface
 * (Kokkos_Profiling_C_Interface.h, Kokkos 3.x and 4.x) fixes it on Linux x86-64 and
 * AArch64: the structures passed by value or by pointer, the device id's bits, and
 * the functions' types. Written from the interface's facts (names, layouts, values);
 * nothing here is its text.
 *
 * How a tool is found: Kokkos::initialize() reads KOKKOS_TOOLS_LIBS (Kokkos 4 and the
 * last 3.x; they still read the older KOKKOS_PROFILE_LIBRARY, with a warning) or
 * KOKKOS_PROFILE_LIBRARY alone (older versions, Debian's 3.4 among them), dlopen()s the
 * first library it names (RTLD_NOW | RTLD_GLOBAL) and looks up each callback by its
 * exported name ("kokkosp_begin_parallel_for", ...); a name the library does not
 * export is a callback Kokkos never makes. Then it calls kokkosp_init_library(),
 * and, when they are exported, kokkosp_request_tool_settings() and
 * kokkosp_provide_tool_programming_interface(); kokkosp_finalize_library() from
 * Kokkos::finalize().
 */
#ifndef RTR_KOKKOS_ABI_H
#define RTR_KOKKOS_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The interface version kokkosp_init_library() is given: 20210225 from Kokkos 3.4
 * (a date; later versions give later dates). */
#define RTR_KOKKOS_INTERFACE_3_4 UINT64_C(20210225)

/* A memory space's name ("Host", "Cuda", "CudaUVM", "HIP", ...), passed by value; the
 * bytes after the name may be anything, and a 64-byte name has no NUL. */
struct kokkos_space_handle {
	char name[64];
};

/* kokkosp_init_library()'s devices: devInfoCount of them (Kokkos passes 0 and NULL). */
struct kokkos_device_info {
	size_t device_id;
};

/* What kokkosp_request_tool_settings() may change: 256 bytes, the first whether Kokkos
 * fences the device before and after each callback of a kernel (true unless the tool
 * clears it; Kokkos sets it before the call). */
struct kokkos_tool_settings {
	bool requires_global_fencing;
	bool padding[255];
};

/* What kokkosp_provide_tool_programming_interface() hands the tool, by value: 32
 * function pointers, the first a fence the tool may call on a device id. */
struct kokkos_tool_interface {
	void (*fence)(uint32_t device_id);
	void (*padding[31])(void);
};

/*
 * The device id of a kernel or a fence (uint32_t): the top 8 bits are the device
 * type, in both Kokkos 3 and 4. The low 24 bits are the execution space instance in
 * Kokkos 3; Kokkos 4 splits them into a device number (7 bits) and the instance (the
 * low 17 bits).
 */
#define RTR_KOKKOS_DEVICE_TYPE_SHIFT 24
#define RTR_KOKKOS_DEVICE_NUM_SHIFT  17
#define RTR_KOKKOS_DEVICE_NUM_MASK   0x7fu
#define RTR_KOKKOS_INSTANCE_MASK     0x1ffffu

/* The device types, by their number in the top 8 bits. */
enum kokkos_device_type {
	KOKKOS_DEVICE_SERIAL = 0,
	KOKKOS_DEVICE_OPENMP = 1,
	KOKKOS_DEVICE_CUDA = 2,
	KOKKOS_DEVICE_HIP = 3,
	KOKKOS_DEVICE_OPENMPTARGET = 4,
	KOKKOS_DEVICE_HPX = 5,
	KOKKOS_DEVICE_THREADS = 6,
	KOKKOS_DEVICE_SYCL = 7,
	KOKKOS_DEVICE_OPENACC = 8, /* Kokkos 4 */
};

/* The callbacks' types, for the test and bench programs that call them as Kokkos does. */
typedef void kokkosp_init_fn(int load_seq, uint64_t interface_version, uint32_t ndevices,
			     struct kokkos_device_info *devices);
typedef void kokkosp_void_fn(void);
typedef void kokkosp_begin_fn(const char *name, uint32_t device_id, uint64_t *id);
typedef void kokkosp_end_fn(uint64_t id);
typedef void kokkosp_name_fn(const char *name);
typedef void kokkosp_data_fn(struct kokkos_space_handle space, const char *label, const void *ptr,
			     uint64_t bytes);
typedef void kokkosp_begin_deep_copy_fn(struct kokkos_space_handle dst_space, const char *dst_label,
					const void *dst_ptr, struct kokkos_space_handle src_space,
					const char *src_label, const void *src_ptr, uint64_t bytes);
typedef void kokkosp_create_section_fn(const char *name, uint32_t *id);
typedef void kokkosp_section_fn(uint32_t id);
typedef void kokkosp_metadata_fn(const char *key, const char *value);
typedef void kokkosp_dual_view_fn(const char *label, const void *ptr, bool device);
typedef void kokkosp_tool_settings_fn(uint32_t nsettings, struct kokkos_tool_settings *settings);
typedef void kokkosp_tool_interface_fn(uint32_t nfunctions, struct kokkos_tool_interface iface);

#endif /* RTR_KOKKOS_ABI_H */
