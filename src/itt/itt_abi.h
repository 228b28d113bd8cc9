/* SPDX-License-Identifier: MIT */
/*
 * The ITT (Instrumentation and Tracing Technology) collector ABI, as the published
 * interface fixes it on Linux x86-64 and AArch64: the structures the static part that
 * applications link hands a collector, the handles the application holds, and the
 * names under which the static part looks the collector's functions up. Written from
 * the published headers' facts (names, layouts, values); nothing here is their text.
 *
 * How a collector is found: the static part reads INTEL_LIBITTNOTIFY64 (a path),
 * dlopen()s it, and, when the library exports __itt_api_init, calls it once with its
 * struct itt_global and the groups it wants. The collector walks global->api_list
 * (ended by an entry whose name is NULL) and stores its function into *func_ptr of
 * each entry whose name it implements. Each static part linked into the process
 * (one per module built with it) has its own itt_global and calls __itt_api_init.
 */
#ifndef RTR_ITT_ABI_H
#define RTR_ITT_ABI_H

#include <pthread.h>
#include <stdint.h>

/* The first 8 bytes of struct itt_global. */
#define RTR_ITT_MAGIC                                          \
	{                                                      \
		0xED, 0xAB, 0xAB, 0xEC, 0x0D, 0xEE, 0xDA, 0x30 \
	}

/* The one entry point the collector exports; the static part resolves it by name. */
#define RTR_ITT_API_INIT_NAME "__itt_api_init"

/* One function of the API: its exported name ("__itt_task_begin"), where the static
 * part keeps its pointer, the static part's own stubs, and the API group it is in. */
struct itt_api_info {
	const char *name;
	void **func_ptr;
	void *init_func;
	void *null_func; /* what to store for a function the collector lacks (may be NULL) */
	int group;
};

/* The static part's descriptor, packed to 8 (natural alignment on LP64). Only the
 * fields up to api_list are read here; the rest is listed for the layout. */
struct itt_global {
	unsigned char magic[8];
	unsigned long version_major;
	unsigned long version_minor;
	unsigned long version_build;
	volatile long api_initialized;
	volatile long mutex_initialized;
	volatile long atomic_counter;
	pthread_mutex_t mutex;
	void *lib;
	void *error_handler;
	const char **dll_path_ptr;
	struct itt_api_info *api_list;
	struct itt_global *next;
	void *thread_list;
	struct itt_domain *domain_list;
	struct itt_string_handle *string_list;
	int state;
	void *counter_list;
	unsigned int ipt_collect_events;
	void *histogram_list;
};

/* A domain. The application's calls test flags (0: the domain is off) before calling
 * the collector; the static part may make domains itself, so a collector reads nameA
 * from whatever domain it is given. */
struct itt_domain {
	volatile int flags;
	const char *nameA;
	void *nameW; /* wide name: Windows only */
	int extra1;
	void *extra2;
	struct itt_domain *next;
};

/* An interned string: made once, passed by pointer afterwards. */
struct itt_string_handle {
	const char *strA;
	void *strW;
	int extra1;
	void *extra2;
	struct itt_string_handle *next;
};

/* A task or frame id, passed by value; all zero is "no id" (__itt_null). An id made
 * from an address has it in d1 and the caller's extra value in d2. */
struct itt_id {
	unsigned long long d1, d2, d3;
};

/* The value types of a typed counter (counter_create gives U64). */
enum itt_metadata_type {
	ITT_METADATA_UNKNOWN = 0,
	ITT_METADATA_U64,
	ITT_METADATA_S64,
	ITT_METADATA_U32,
	ITT_METADATA_S32,
	ITT_METADATA_U16,
	ITT_METADATA_S16,
	ITT_METADATA_FLOAT,
	ITT_METADATA_DOUBLE,
};

/* A counter handle: opaque to the application. */
struct itt_counter;

/* The functions this collector provides, as the application calls them (no calling
 * convention attribute on Linux), under their api_list names. */
typedef void itt_api_init_fn(struct itt_global *global, int init_groups);
typedef struct itt_domain *itt_domain_create_fn(const char *name); /* __itt_domain_create */
typedef struct itt_string_handle *
itt_string_handle_create_fn(const char *name); /* __itt_string_handle_create */
typedef void itt_task_begin_fn(const struct itt_domain *domain, struct itt_id id,
			       struct itt_id parent,
			       struct itt_string_handle *name); /* __itt_task_begin */
typedef void itt_task_end_fn(const struct itt_domain *domain);	/* __itt_task_end */
typedef void itt_frame_fn(const struct itt_domain *domain,
			  struct itt_id *id); /* __itt_frame_begin_v3, __itt_frame_end_v3 */
typedef void itt_thread_set_name_fn(const char *name); /* __itt_thread_set_name */
typedef struct itt_counter *itt_counter_create_fn(const char *name,
						  const char *domain); /* __itt_counter_create */
typedef struct itt_counter *
itt_counter_create_typed_fn(const char *name, const char *domain,
			    enum itt_metadata_type type); /* __itt_counter_create_typed */
typedef void itt_counter_set_value_fn(struct itt_counter *c,
				      void *value_ptr); /* __itt_counter_set_value */
typedef void itt_counter_inc_fn(struct itt_counter *c); /* __itt_counter_inc, _dec */
typedef void
itt_counter_delta_fn(struct itt_counter *c,
		     unsigned long long delta); /* __itt_counter_inc_delta, _dec_delta */
typedef void itt_counter_destroy_fn(struct itt_counter *c); /* __itt_counter_destroy */
typedef void itt_control_fn(void); /* __itt_pause, __itt_resume, __itt_detach */

#endif /* RTR_ITT_ABI_H */
