/* SPDX-License-Identifier: MIT */
/*
 * libringtrace-kokkos.so: a Kokkos Tools library. Kokkos finds it through
 * KOKKOS_TOOLS_LIBS or KOKKOS_PROFILE_LIBRARY (src/kokkos/kokkos_abi.h says how) and
 * calls the kokkosp_* functions it exports; the tool records each call through
 * libringtrace.so, category "kokkos":
 *
 *	parallel_for/reduce/scan	a slice named by the kernel, args kind, device
 *					(the device type) and device_id
 *	fences				a slice named by the fence, args kind "fence",
 *					device, device_id
 *	profile regions			a slice named by the region, nested as pushed
 *	deep copies			a slice "deep copy", args dst_space, dst,
 *					src_space, src, bytes; a counter "kokkos deep copy
 *					bytes" (bytes copied so far)
 *	profile sections		an async span named by the section, id the
 *					section's id, one per start/stop
 *	metadata			an instant "kokkos metadata", args {key: value}
 *	events				an instant named by the event
 *	allocations			rtr_mem_alloc()/rtr_mem_free() (the memory counters)
 *	dual view sync/modify		an instant "dual view sync"/"dual view modify"
 *
 * Kernels and fences end by the id their begin handed back, not in stack order, so
 * each thread keeps a small table of its open ones (start time, interned site), and
 * the whole slice is one record at its end: a begin records nothing, an end one
 * 32-byte record (an end out of order ends the spans begun inside the one it ends
 * too, so that the thread's slices stay nested). Their names are interned once per
 * kind and device id (kokkos_names.c), each as a site that carries the slice's
 * arguments (RTR__F_SITE_ARGS), and found again through a per-thread cache keyed by
 * the name's address and checked by comparing the bytes, so a kernel's pair takes no
 * lock, allocates nothing, formats nothing and stores no argument.
 * Regions and deep copies end in stack order: B and E, on a per-thread stack that
 * says which were recorded.
 *
 * The recorder: kokkosp_init_library() starts it from the environment unless one runs
 * (RINGTRACE_AUTOSTART=1, which `ringtrace record --kokkos` sets, or the program's own
 * rtr_start()), as a module (rtr__start_module(): an autostarted session stays the
 * program's to adopt), and registers an exit handler after the recorder's, so that it runs
 * first. kokkosp_finalize_library() and that handler end whatever is open on their
 * thread (kernels, fences, regions, deep copies) and every section still started.
 * The library stays loaded once loaded (-z nodelete): its names, sites and handler
 * outlive a dlclose().
 */
#include "kokkos/kokkos_abi.h"
#include "kokkos/kokkos_names.h"

#include "common/atomic.h"
#include "common/compiler.h"
#include "producer/events.h"

#include <ringtrace.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define EXPORT __attribute__((visibility("default")))

#define CAT rtr__kokkos_cat

enum level_kind { LEVEL_REGION, LEVEL_COPY };

/* Kernels and fences open at once on a thread, and levels of regions and deep copies
 * tracked; past them, nothing is recorded of the deeper ones. */
#define MAX_SPANS   32
#define MAX_LEVELS  64
#define CACHE_SLOTS 64 /* a power of two */

/* A name that does not fit in the names' table (kokkos_names.h); a kernel's slice named so
 * has no arguments. */
static const struct rtr__site_args table_full = {
	.site = {rtr__kokkos_cat, "(kokkos: name table full)"}};

struct open_span {
	const struct rtr__site_args *site; /* NULL: not recorded (the recorder was off) */
	uint64_t start;			   /* rtr__ticks() */
	uint64_t id;			   /* what the begin handed back */
};

struct level {
	const char *name; /* the interned name its B has, or NULL: a copied one */
	uint8_t kind;	  /* enum level_kind */
	uint8_t recorded; /* its B was recorded: its E must be */
};

struct cached_site {
	const char *ptr; /* the address Kokkos passed */
	const struct rtr__kokkos_site *site;
};

/* A thread's state, made on its first callback and freed at its exit. Only that
 * thread reads or writes it. */
struct kk_thread {
	uint64_t last_id;   /* the ids it hands out: its number in the top 24 bits */
	uint32_t nspans;    /* open kernels and fences, innermost last */
	uint32_t depth;	    /* levels in use */
	uint32_t untracked; /* levels pushed past MAX_LEVELS */
	struct open_span spans[MAX_SPANS];
	struct level levels[MAX_LEVELS];
	struct cached_site cache[CACHE_SLOTS];
};

/* 8 bytes of static TLS, as the ring pointer: the tool is dlopen()ed, where static
 * TLS is scarce. */
static __thread struct kk_thread *self __attribute__((tls_model("initial-exec")));

static pthread_key_t thread_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static int key_ok;
/* Threads numbered from 1 as they first call; relaxed: only uniqueness matters. */
static uint64_t thread_count;
/* Bytes deep-copied so far; relaxed: a running sum, ordering nothing. */
static uint64_t copied_bytes;

static void thread_free(void *p)
{
	munmap(p, sizeof(struct kk_thread));
	self = NULL; /* a callback from a later destructor makes a new one */
}

static void make_key(void)
{
	key_ok = pthread_key_create(&thread_key, thread_free) == 0;
}

/* The calling thread's state, made now: one mmap per thread. NULL when that fails. */
static RTR_COLD struct kk_thread *thread_new(void)
{
	pthread_once(&key_once, make_key);
	if (!key_ok)
		return NULL;
	struct kk_thread *t =
		mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED)
		return NULL;
	uint64_t n = __atomic_add_fetch(&thread_count, 1, __ATOMIC_RELAXED);
	t->last_id = n << 40;
	if (pthread_setspecific(thread_key, t) != 0) {
		munmap(t, sizeof(*t));
		return NULL;
	}
	self = t;
	return t;
}

static inline struct kk_thread *thread_state(void)
{
	struct kk_thread *t = self;
	return RTR_LIKELY(t != NULL) ? t : thread_new();
}

/* ------------------------------------------------------------------------- */
/* Names                                                                      */

static RTR_COLD const struct rtr__kokkos_site *
site_miss(struct cached_site *c, const char *name, enum rtr__kokkos_kind kind, uint32_t device_id)
{
	const struct rtr__kokkos_site *site = rtr__kokkos_site(name, kind, device_id);
	if (site == NULL)
		return NULL;
	c->ptr = name;
	c->site = site;
	return site;
}

/* The site of name as a kind (kokkos_names.h), from the thread's cache when Kokkos passed the
 * same bytes at the same address before; NULL when the names' table is full. The C
 * library's strcmp compares a vector at a time: a begin is 99 instructions with it,
 * 170 with a byte loop over the first 16 bytes inline (callgrind, bench_kokkos). */
static inline const struct rtr__kokkos_site *site_of(struct kk_thread *t, const char *name,
						     enum rtr__kokkos_kind kind, uint32_t device_id)
{
	if (RTR_UNLIKELY(name == NULL))
		name = "";
	uint64_t h = ((uint64_t)(uintptr_t)name + kind) * UINT64_C(0x9e3779b97f4a7c15);
	struct cached_site *c = &t->cache[h >> (64 - 6)];
	const struct rtr__kokkos_site *site = c->site;
	if (RTR_LIKELY(c->ptr == name) && site->kind == kind && site->device_id == device_id &&
	    strcmp(name, site->sa.site.name) == 0)
		return site;
	return site_miss(c, name, kind, device_id);
}

_Static_assert(CACHE_SLOTS == 1 << 6, "site_of() takes 6 bits of the hash");

/* ------------------------------------------------------------------------- */
/* Kernels and fences: ended by id                                            */

static inline void span_begin(const char *name, uint32_t device_id, uint64_t *id,
			      enum rtr__kokkos_kind kind)
{
	struct kk_thread *t = thread_state();
	if (RTR_UNLIKELY(t == NULL || id == NULL)) {
		if (id != NULL)
			*id = 0; /* an id no end finds */
		return;
	}
	uint64_t k = ++t->last_id;
	*id = k;
	if (RTR_UNLIKELY(t->nspans == MAX_SPANS))
		return;
	struct open_span *s = &t->spans[t->nspans++];
	s->id = k;
	s->site = NULL;
	if (RTR_LIKELY(rtr_category_enabled(CAT))) {
		const struct rtr__kokkos_site *site = site_of(t, name, kind, device_id);
		s->site = RTR_LIKELY(site != NULL) ? &site->sa : &table_full;
		s->start = rtr__ticks(); /* last: the slice starts with the kernel */
	}
}

/* Record span s, ended at `end` (ticks): one record, as RTR_SCOPE writes, whose site
 * holds the arguments. */
static inline void span_record(const struct open_span *s, uint64_t end)
{
	if (s->site == NULL || RTR_UNLIKELY(!rtr__recording_cat(CAT)))
		return;
	uint64_t dur = end > s->start ? end - s->start : 0;
	rtr__emit_flags(RTR__K_SCOPE, RTR__F_SITE_ARGS, s->start, (uintptr_t)s->site, dur);
}

/* The open span ending with id when it is not the innermost (an end out of order), or
 * MAX_SPANS: none (begun on another thread, before the table had room, or ended
 * already). The spans begun inside it end with it, at `now`, so that the thread's
 * slices stay nested; their own ends find nothing later. */
static RTR_COLD uint32_t span_find(struct kk_thread *t, uint64_t id, uint64_t now)
{
	uint32_t i = t->nspans;
	while (i-- > 0)
		if (t->spans[i].id == id)
			break;
	if (i == UINT32_MAX)
		return MAX_SPANS;
	while (t->nspans > i + 1)
		span_record(&t->spans[--t->nspans], now);
	return i;
}

static inline void span_end(uint64_t id)
{
	uint64_t now = rtr__ticks(); /* first: the slice ends with the kernel */
	struct kk_thread *t = self;
	if (RTR_UNLIKELY(t == NULL || t->nspans == 0))
		return;
	uint32_t i = t->nspans - 1;
	if (RTR_UNLIKELY(t->spans[i].id != id) && (i = span_find(t, id, now)) == MAX_SPANS)
		return;
	span_record(&t->spans[i], now);
	t->nspans = i;
}

EXPORT kokkosp_begin_fn kokkosp_begin_parallel_for, kokkosp_begin_parallel_reduce,
	kokkosp_begin_parallel_scan, kokkosp_begin_fence;
EXPORT kokkosp_end_fn kokkosp_end_parallel_for, kokkosp_end_parallel_reduce,
	kokkosp_end_parallel_scan, kokkosp_end_fence;

void kokkosp_begin_parallel_for(const char *name, uint32_t device_id, uint64_t *id)
{
	span_begin(name, device_id, id, RTR_KOKKOS_FOR);
}

void kokkosp_end_parallel_for(uint64_t id)
{
	span_end(id);
}

void kokkosp_begin_parallel_reduce(const char *name, uint32_t device_id, uint64_t *id)
{
	span_begin(name, device_id, id, RTR_KOKKOS_REDUCE);
}

void kokkosp_end_parallel_reduce(uint64_t id)
{
	span_end(id);
}

void kokkosp_begin_parallel_scan(const char *name, uint32_t device_id, uint64_t *id)
{
	span_begin(name, device_id, id, RTR_KOKKOS_SCAN);
}

void kokkosp_end_parallel_scan(uint64_t id)
{
	span_end(id);
}

void kokkosp_begin_fence(const char *name, uint32_t device_id, uint64_t *id)
{
	span_begin(name, device_id, id, RTR_KOKKOS_FENCE);
}

void kokkosp_end_fence(uint64_t id)
{
	span_end(id);
}

/* ------------------------------------------------------------------------- */
/* Regions and deep copies: ended in stack order                              */

/* A new level of the thread's stack, or NULL past MAX_LEVELS (counted there). */
static struct level *level_push(struct kk_thread *t, enum level_kind kind)
{
	if (RTR_UNLIKELY(t->depth == MAX_LEVELS)) {
		t->untracked++;
		return NULL;
	}
	struct level *l = &t->levels[t->depth++];
	l->kind = (uint8_t)kind;
	l->name = NULL;
	l->recorded = rtr_category_enabled(CAT);
	return l;
}

static void level_end(const struct level *l)
{
	if (!l->recorded)
		return;
	if (l->name != NULL)
		rtr_end(CAT, l->name);
	else
		rtr_pop(CAT);
}

/* Ends the innermost level of `kind`, and the levels inside it first (a region popped
 * inside a deep copy, which Kokkos never does: those end with it). */
static void level_pop(enum level_kind kind)
{
	struct kk_thread *t = self;
	if (t == NULL)
		return;
	if (RTR_UNLIKELY(t->untracked > 0)) {
		t->untracked--;
		return;
	}
	uint32_t d = t->depth;
	while (d > 0 && t->levels[d - 1].kind != kind)
		d--;
	if (d == 0)
		return; /* none open: pushed before the tool was loaded */
	while (t->depth >= d)
		level_end(&t->levels[--t->depth]);
}

EXPORT kokkosp_name_fn kokkosp_push_profile_region;
EXPORT kokkosp_void_fn kokkosp_pop_profile_region;

void kokkosp_push_profile_region(const char *name)
{
	struct kk_thread *t = thread_state();
	struct level *l = t != NULL ? level_push(t, LEVEL_REGION) : NULL;
	if (l == NULL || !l->recorded)
		return;
	const struct rtr__kokkos_site *site = site_of(t, name, RTR_KOKKOS_NAME, 0);
	if (RTR_LIKELY(site != NULL)) {
		l->name = site->sa.site.name;
		rtr_begin(CAT, l->name);
	} else {
		rtr_begin_copy(CAT, name); /* ended by rtr_pop() */
	}
}

void kokkosp_pop_profile_region(void)
{
	level_pop(LEVEL_REGION);
}

/* A space's name as a C string: at most 63 bytes of the handle's, which need no NUL. */
static void space_name(const struct kokkos_space_handle *h, char out[64])
{
	size_t n = strnlen(h->name, sizeof(h->name) - 1);
	memcpy(out, h->name, n);
	out[n] = '\0';
}

EXPORT kokkosp_begin_deep_copy_fn kokkosp_begin_deep_copy;
EXPORT kokkosp_void_fn kokkosp_end_deep_copy;

void kokkosp_begin_deep_copy(struct kokkos_space_handle dst_space, const char *dst_label,
			     const void *dst_ptr, struct kokkos_space_handle src_space,
			     const char *src_label, const void *src_ptr, uint64_t bytes)
{
	(void)dst_ptr, (void)src_ptr;
	uint64_t total = __atomic_add_fetch(&copied_bytes, bytes, __ATOMIC_RELAXED);
	struct kk_thread *t = thread_state();
	struct level *l = t != NULL ? level_push(t, LEVEL_COPY) : NULL;
	if (l == NULL || !l->recorded)
		return;
	char dst[64], src[64];
	space_name(&dst_space, dst);
	space_name(&src_space, src);
	struct rtr_arg args[] = {RTR_ARG_STR_COPY("dst_space", dst),
				 RTR_ARG_STR_COPY("dst", dst_label),
				 RTR_ARG_STR_COPY("src_space", src),
				 RTR_ARG_STR_COPY("src", src_label), RTR_ARG_U64("bytes", bytes)};
	rtr_counter_i64(CAT, "kokkos deep copy bytes", (int64_t)total);
	l->name = "deep copy";
	rtr_begin_args(CAT, l->name, args, 5);
}

void kokkosp_end_deep_copy(void)
{
	level_pop(LEVEL_COPY);
}

/* ------------------------------------------------------------------------- */
/* Profile sections: async spans, started and stopped by id                  */

#define MAX_SECTIONS 4096

/* Sections by id (1 .. MAX_SECTIONS; ids are never reused). name is set once, before
 * the id is handed out; open counts the starts not yet stopped. */
static struct section {
	const char *name;
	int open;
} sections[MAX_SECTIONS + 1];
static uint32_t section_count; /* relaxed: only uniqueness matters */

static struct section *section_of(uint32_t id)
{
	if (id == 0 || id > MAX_SECTIONS)
		return NULL;
	struct section *s = &sections[id];
	/* A2: pairs with R2 in kokkosp_create_profile_section(); the name is set */
	return rtr_atomic_load_acquire(&s->name) != NULL ? s : NULL;
}

EXPORT kokkosp_create_section_fn kokkosp_create_profile_section;
EXPORT kokkosp_section_fn kokkosp_start_profile_section, kokkosp_stop_profile_section,
	kokkosp_destroy_profile_section;

void kokkosp_create_profile_section(const char *name, uint32_t *id)
{
	uint32_t k = __atomic_add_fetch(&section_count, 1, __ATOMIC_RELAXED);
	if (id == NULL)
		return;
	*id = k;
	if (k > MAX_SECTIONS)
		return; /* its start and stop record nothing */
	const struct rtr_site *site = rtr__kokkos_intern(name);
	/* R2: pairs with A2 in section_of(); any thread may start it once it has the id */
	rtr_atomic_store_release(&sections[k].name,
				 site != NULL ? site->name : table_full.site.name);
}

void kokkosp_start_profile_section(uint32_t id)
{
	struct section *s = section_of(id);
	if (s == NULL || !rtr_category_enabled(CAT))
		return;
	/* relaxed: a count of starts; the events carry the order */
	__atomic_add_fetch(&s->open, 1, __ATOMIC_RELAXED);
	rtr_async_begin(CAT, s->name, id, NULL, 0);
}

/* Takes one start of s back; false when none is open. */
static bool section_close(struct section *s)
{
	/* relaxed: as in kokkosp_start_profile_section() */
	int open = rtr_atomic_load_relaxed(&s->open);
	while (open > 0)
		if (__atomic_compare_exchange_n(&s->open, &open, open - 1, 1, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			return true;
	return false;
}

void kokkosp_stop_profile_section(uint32_t id)
{
	struct section *s = section_of(id);
	if (s != NULL && section_close(s))
		rtr_async_end(CAT, s->name, id);
}

void kokkosp_destroy_profile_section(uint32_t id)
{
	(void)id; /* ids are never reused: a stop after the destroy still ends its span */
}

static void sections_end_open(void)
{
	uint32_t n = rtr_atomic_load_relaxed(&section_count);
	for (uint32_t id = 1; id <= n && id <= MAX_SECTIONS; id++) {
		struct section *s = section_of(id);
		while (s != NULL && section_close(s))
			rtr_async_end(CAT, s->name, id);
	}
}

/* ------------------------------------------------------------------------- */
/* Instants, memory                                                           */

EXPORT kokkosp_metadata_fn kokkosp_declare_metadata;
EXPORT kokkosp_name_fn kokkosp_profile_event;
EXPORT kokkosp_dual_view_fn kokkosp_dual_view_sync, kokkosp_dual_view_modify;
EXPORT kokkosp_data_fn kokkosp_allocate_data, kokkosp_deallocate_data;

void kokkosp_declare_metadata(const char *key, const char *value)
{
	if (!rtr_category_enabled(CAT))
		return;
	const struct rtr_site *k = rtr__kokkos_intern(key); /* an argument's key is kept */
	struct rtr_arg args[] = {RTR_ARG_STR_COPY("key", key), RTR_ARG_STR_COPY("value", value)};
	if (k != NULL)
		args[1].key = k->name;
	rtr_instant_args(CAT, "kokkos metadata", k != NULL ? args + 1 : args, k != NULL ? 1 : 2);
}

void kokkosp_profile_event(const char *name)
{
	rtr_instant_copy(CAT, name);
}

static void dual_view(const char *what, const char *label, bool device)
{
	if (!rtr_category_enabled(CAT))
		return;
	struct rtr_arg args[] = {RTR_ARG_STR_COPY("view", label), RTR_ARG_BOOL("device", device)};
	rtr_instant_args(CAT, what, args, 2);
}

void kokkosp_dual_view_sync(const char *label, const void *ptr, bool to_device)
{
	(void)ptr;
	dual_view("dual view sync", label, to_device);
}

void kokkosp_dual_view_modify(const char *label, const void *ptr, bool on_device)
{
	(void)ptr;
	dual_view("dual view modify", label, on_device);
}

/* The memory counter of a space: host for the host's spaces (HostSpace, HBWSpace,
 * the devices' host-pinned and host USM spaces), else the device, taken as 0 (the
 * space names no device number). */
static int space_device(const struct kokkos_space_handle *h)
{
	char name[64];
	space_name(h, name);
	size_t n = strlen(name);
	if (strncmp(name, "Host", 4) == 0 || strncmp(name, "HBW", 3) == 0 ||
	    (n >= 10 && strcmp(name + n - 10, "HostPinned") == 0) ||
	    (n >= 7 && strcmp(name + n - 7, "HostUSM") == 0))
		return RTR_MEM_HOST;
	return 0;
}

void kokkosp_allocate_data(struct kokkos_space_handle space, const char *label, const void *ptr,
			   uint64_t bytes)
{
	(void)label;
	rtr_mem_alloc(space_device(&space), ptr, bytes);
}

void kokkosp_deallocate_data(struct kokkos_space_handle space, const char *label, const void *ptr,
			     uint64_t bytes)
{
	(void)label, (void)bytes;
	rtr_mem_free(space_device(&space), ptr);
}

/* ------------------------------------------------------------------------- */
/* The tool's life                                                            */

/* Ends what is open on the calling thread, innermost first, and every section. */
static void end_open(void)
{
	struct kk_thread *t = self;
	if (t != NULL) {
		uint64_t now = rtr__ticks();
		while (t->nspans > 0)
			span_record(&t->spans[--t->nspans], now);
		t->untracked = 0;
		while (t->depth > 0)
			level_end(&t->levels[--t->depth]);
	}
	sections_end_open();
}

/* Registered after the recorder's own exit handler: runs before it stops the recorder,
 * for a program that never calls Kokkos::finalize(). */
static void at_exit(void)
{
	end_open();
}

EXPORT kokkosp_init_fn kokkosp_init_library;
EXPORT kokkosp_void_fn kokkosp_finalize_library;
EXPORT kokkosp_tool_settings_fn kokkosp_request_tool_settings;
EXPORT kokkosp_tool_interface_fn kokkosp_provide_tool_programming_interface;
EXPORT void kokkosp_print_help(char *program);

void kokkosp_init_library(int load_seq, uint64_t interface_version, uint32_t ndevices,
			  struct kokkos_device_info *devices)
{
	static int handler_set;

	(void)devices;
	/* -EBUSY: the program's own session, or autostart's, goes on (left to the program) */
	rtr__start_module(NULL);
	/* relaxed: a flag that only this call reads */
	if (!__atomic_exchange_n(&handler_set, 1, __ATOMIC_RELAXED))
		atexit(at_exit);
	struct rtr_arg args[] = {RTR_ARG_U64("interface_version", interface_version),
				 RTR_ARG_I64("load_sequence", load_seq),
				 RTR_ARG_U64("devices", ndevices)};
	rtr_instant_args(CAT, "kokkos init", args, 3);
}

void kokkosp_finalize_library(void)
{
	end_open();
}

/* Kokkos fences the devices around each kernel's callbacks (its default, kept): a
 * kernel's slice then spans its run on the device, not only its launch. */
void kokkosp_request_tool_settings(uint32_t nsettings, struct kokkos_tool_settings *settings)
{
	if (nsettings >= 1 && settings != NULL)
		settings->requires_global_fencing = true;
}

void kokkosp_provide_tool_programming_interface(uint32_t nfunctions,
						struct kokkos_tool_interface iface)
{
	(void)nfunctions, (void)iface; /* the tool never fences on its own */
}

void kokkosp_print_help(char *program)
{
	(void)program;
	printf("libringtrace-kokkos: records Kokkos kernels, fences, regions, deep copies,\n"
	       "sections and metadata into a ringtrace trace; set RINGTRACE_FILE and the\n"
	       "other RINGTRACE_* variables to choose the file and the recording.\n");
}
