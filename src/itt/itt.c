/* SPDX-License-Identifier: MIT */
/*
 * libringtrace-itt.so: an ITT collector. A program that speaks ITT (through the
 * static part it links) finds it through INTEL_LIBITTNOTIFY64 and calls
 * __itt_api_init(), which stores our functions into the static part's table
 * (src/itt/itt_abi.h says how). From then on the program's ITT calls land here:
 *
 *	domains			categories (the domain's name)
 *	string handles		names, copied once and kept by pointer
 *	task_begin/task_end	slices on the calling thread; a task's id and its
 *				parent's, when given, as the arguments "id" and "parent"
 *	frame_begin/end_v3	async spans "frame" of the domain (a frame may end on
 *				another thread), matched by the frame's id or, without
 *				one, by the domain
 *	thread_set_name		rtr_thread_name(); from the OpenMP runtime's own static
 *				part (which names its threads), only a thread not named yet
 *	counters		counter samples, category the counter's domain ("itt"
 *				without one)
 *	pause/resume		nothing is recorded in between; recording goes on in the
 *				same file after
 *
 * It records through libringtrace.so, whose recorder runs when the program starts it
 * or RINGTRACE_AUTOSTART=1 (the collector never starts or stops it). Handles
 * (domains, strings, counters) live until the process exits, as ITT says; making
 * one takes a lock, recording never does.
 */
#include "itt/itt_abi.h"

#include "common/atomic.h"

#include <ringtrace.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

/* Tasks tracked per thread for pause/resume: a level begun while paused ends
 * unrecorded. Deeper levels end recorded when the recorder is not paused at their end. */
#define TRACKED_LEVELS 64

/* 1 between __itt_pause() and __itt_resume(). Relaxed everywhere: a flag, ordering
 * nothing; worst case an event on another thread racing the call lands on either side. */
static int paused;

/* A thread's open tasks: 16 bytes of static TLS, as the ring pointer (the collector
 * is dlopen()ed, where static TLS is scarce). */
struct tasks {
	uint32_t depth;
	uint64_t unrecorded; /* bit i: level i was begun while paused */
};
static __thread struct tasks tasks __attribute__((tls_model("initial-exec")));

/* The handles made here, each list under `handles`; creation is not a hot path. */
static pthread_mutex_t handles = PTHREAD_MUTEX_INITIALIZER;
static struct itt_domain *domains;
static struct itt_string_handle *strings;

struct itt_counter {
	const char *name;
	const char *cat;
	int type;      /* enum itt_metadata_type */
	int64_t value; /* what inc/dec count from; atomic add */
	struct itt_counter *next;
};
static struct itt_counter *counters;

static const char *cat_of(const struct itt_domain *d)
{
	return d != NULL && d->nameA != NULL ? d->nameA : "itt";
}

static bool recording(void)
{
	return !rtr_atomic_load_relaxed(&paused);
}

static struct itt_domain *domain_create(const char *name)
{
	struct itt_domain *d;

	if (name == NULL)
		return NULL;
	pthread_mutex_lock(&handles);
	for (d = domains; d != NULL; d = d->next)
		if (strcmp(d->nameA, name) == 0)
			break;
	if (d == NULL && (d = calloc(1, sizeof(*d))) != NULL) {
		d->nameA = strdup(name);
		if (d->nameA == NULL) {
			free(d);
			d = NULL;
		} else {
			d->flags = 1; /* on: the program's calls test it */
			d->next = domains;
			domains = d;
		}
	}
	pthread_mutex_unlock(&handles);
	return d;
}

static struct itt_string_handle *string_handle_create(const char *name)
{
	struct itt_string_handle *s;

	if (name == NULL)
		return NULL;
	pthread_mutex_lock(&handles);
	for (s = strings; s != NULL; s = s->next)
		if (strcmp(s->strA, name) == 0)
			break;
	if (s == NULL && (s = calloc(1, sizeof(*s))) != NULL) {
		s->strA = strdup(name);
		if (s->strA == NULL) {
			free(s);
			s = NULL;
		} else {
			s->next = strings;
			strings = s;
		}
	}
	pthread_mutex_unlock(&handles);
	return s;
}

static bool id_given(const struct itt_id *id)
{
	return id->d1 != 0 || id->d2 != 0 || id->d3 != 0;
}

static void task_begin(const struct itt_domain *d, struct itt_id id, struct itt_id parent,
		       struct itt_string_handle *name)
{
	uint32_t level = tasks.depth++;
	const char *n = name != NULL && name->strA != NULL ? name->strA : "task";

	if (__builtin_expect(!recording(), 0)) {
		if (level < TRACKED_LEVELS)
			tasks.unrecorded |= UINT64_C(1) << level;
		return;
	}
	if (level < TRACKED_LEVELS)
		tasks.unrecorded &= ~(UINT64_C(1) << level);
	if (__builtin_expect(!id_given(&id) && !id_given(&parent), 1)) {
		rtr_begin(cat_of(d), n);
		return;
	}
	struct rtr_arg args[2];
	unsigned nargs = 0;
	if (id_given(&id))
		args[nargs++] = RTR_ARG_U64("id", id.d1 != 0 ? id.d1 : id.d2);
	if (id_given(&parent))
		args[nargs++] = RTR_ARG_U64("parent", parent.d1 != 0 ? parent.d1 : parent.d2);
	rtr_begin_args(cat_of(d), n, args, nargs);
}

static void task_end(const struct itt_domain *d)
{
	if (__builtin_expect(tasks.depth == 0, 0))
		return; /* an end without a begin on this thread */
	uint32_t level = --tasks.depth;
	bool recorded = level < TRACKED_LEVELS ? !(tasks.unrecorded >> level & 1) : recording();
	if (recorded)
		rtr_pop(cat_of(d));
}

static uint64_t frame_id(const struct itt_domain *d, const struct itt_id *id)
{
	if (id != NULL && id_given(id))
		return id->d1 != 0 ? id->d1 : id->d2;
	return (uint64_t)(uintptr_t)d; /* frames without an id do not overlap in a domain */
}

static void frame_begin(const struct itt_domain *d, struct itt_id *id)
{
	if (recording())
		rtr_async_begin(cat_of(d), "frame", frame_id(d, id), NULL, 0);
}

static void frame_end(const struct itt_domain *d, struct itt_id *id)
{
	if (recording())
		rtr_async_end(cat_of(d), "frame", frame_id(d, id));
}

/* A metadata line, not an event: kept while paused, so that later events are named. */
static void thread_set_name(const char *name)
{
	if (name != NULL)
		rtr_thread_name(name);
}

/* The OpenMP runtime's own static part names its threads ("OMP Primary Thread #0" as
 * it starts, on the program's main thread): a name the program gave stays. */
static void runtime_thread_set_name(const char *name)
{
	if (name != NULL)
		rtr__thread_name_unless_named(name);
}

static struct itt_counter *counter_create_typed(const char *name, const char *domain,
						enum itt_metadata_type type)
{
	struct itt_counter *c;
	const char *cat = domain != NULL ? domain : "itt";

	if (name == NULL)
		return NULL;
	pthread_mutex_lock(&handles);
	for (c = counters; c != NULL; c = c->next)
		if (strcmp(c->name, name) == 0 && strcmp(c->cat, cat) == 0)
			break;
	if (c == NULL && (c = calloc(1, sizeof(*c))) != NULL) {
		c->name = strdup(name);
		c->cat = strdup(cat);
		if (c->name == NULL || c->cat == NULL) {
			free((void *)c->name);
			free((void *)c->cat);
			free(c);
			c = NULL;
		} else {
			c->type = type;
			c->next = counters;
			counters = c;
		}
	}
	pthread_mutex_unlock(&handles);
	return c;
}

static struct itt_counter *counter_create(const char *name, const char *domain)
{
	return counter_create_typed(name, domain, ITT_METADATA_U64);
}

static void counter_record(const struct itt_counter *c, int64_t value)
{
	if (recording())
		rtr_counter_i64(c->cat, c->name, value);
}

static void counter_set_value(struct itt_counter *c, void *value_ptr)
{
	if (c == NULL || value_ptr == NULL)
		return;
	int64_t v;
	switch (c->type) {
	case ITT_METADATA_S64:
		v = *(const int64_t *)value_ptr;
		break;
	case ITT_METADATA_U32:
		v = *(const uint32_t *)value_ptr;
		break;
	case ITT_METADATA_S32:
		v = *(const int32_t *)value_ptr;
		break;
	case ITT_METADATA_U16:
		v = *(const uint16_t *)value_ptr;
		break;
	case ITT_METADATA_S16:
		v = *(const int16_t *)value_ptr;
		break;
	case ITT_METADATA_FLOAT:
		if (recording())
			rtr_counter_f64(c->cat, c->name, *(const float *)value_ptr);
		return;
	case ITT_METADATA_DOUBLE:
		if (recording())
			rtr_counter_f64(c->cat, c->name, *(const double *)value_ptr);
		return;
	default: /* U64 and unknown */
		v = (int64_t) * (const uint64_t *)value_ptr;
		break;
	}
	/* Relaxed: the value inc/dec go on from; it orders nothing else */
	rtr_atomic_store_relaxed(&c->value, v);
	counter_record(c, v);
}

static void counter_add(struct itt_counter *c, int64_t delta)
{
	if (c != NULL)
		counter_record(c,
			       rtr_atomic_add_acq_rel(&c->value, delta)); /* orders nothing else */
}

static void counter_inc(struct itt_counter *c)
{
	counter_add(c, 1);
}

static void counter_dec(struct itt_counter *c)
{
	counter_add(c, -1);
}

static void counter_inc_delta(struct itt_counter *c, unsigned long long delta)
{
	counter_add(c, (int64_t)delta);
}

static void counter_dec_delta(struct itt_counter *c, unsigned long long delta)
{
	counter_add(c, -(int64_t)delta);
}

static void counter_destroy(struct itt_counter *c)
{
	(void)c; /* handles live until the process exits: one may still be in use */
}

static void pause_recording(void)
{
	rtr_atomic_store_relaxed(&paused, 1);
}

static void resume_recording(void)
{
	rtr_atomic_store_relaxed(&paused, 0);
}

/* The functions by the names of the static part's table. */
static const struct {
	const char *name;
	void (*fn)(void);
} implemented[] = {
#define FN(name, fn)                       \
	{                                  \
		name, (void (*)(void))(fn) \
	}
	FN("__itt_domain_create", domain_create),
	FN("__itt_string_handle_create", string_handle_create),
	FN("__itt_task_begin", task_begin),
	FN("__itt_task_end", task_end),
	FN("__itt_frame_begin_v3", frame_begin),
	FN("__itt_frame_end_v3", frame_end),
	FN("__itt_thread_set_name", thread_set_name),
	FN("__itt_counter_create", counter_create),
	FN("__itt_counter_create_typed", counter_create_typed),
	FN("__itt_counter_set_value", counter_set_value),
	FN("__itt_counter_inc", counter_inc),
	FN("__itt_counter_dec", counter_dec),
	FN("__itt_counter_inc_delta", counter_inc_delta),
	FN("__itt_counter_dec_delta", counter_dec_delta),
	FN("__itt_counter_destroy", counter_destroy),
	FN("__itt_pause", pause_recording),
	FN("__itt_resume", resume_recording),
#undef FN
};

/* Whether the static part of `global` is the OpenMP runtime's (LLVM's or Intel's, which
 * report through ITT themselves): the object that holds it defines __kmpc_fork_call. */
static bool in_openmp_runtime(const struct itt_global *global)
{
	Dl_info at, fork_at;
	if (dladdr(global, &at) == 0 || at.dli_fname == NULL || at.dli_fname[0] == '\0')
		return false; /* the program itself: dlopen() would not find it by name */
	void *h = dlopen(at.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
	if (h == NULL)
		return false;
	void *fork = dlsym(h, "__kmpc_fork_call"); /* maybe a dependency's */
	bool runtime =
		fork != NULL && dladdr(fork, &fork_at) != 0 && fork_at.dli_fbase == at.dli_fbase;
	dlclose(h);
	return runtime;
}

/* Called by each static part once, holding its own lock. Fills every entry of its
 * table: ours where we have the function, the static part's null stub elsewhere. */
EXPORT void __itt_api_init(struct itt_global *global, int init_groups);
EXPORT void __itt_api_init(struct itt_global *global, int init_groups)
{
	static const unsigned char magic[8] = RTR_ITT_MAGIC;

	(void)init_groups; /* every function we have is filled, whatever the groups */
	if (global == NULL || memcmp(global->magic, magic, sizeof(magic)) != 0 ||
	    global->api_list == NULL) {
		fprintf(stderr, "ringtrace: ITT: __itt_api_init given no ITT table; not "
				"recording ITT calls\n");
		return;
	}
	bool runtime = in_openmp_runtime(global);
	for (struct itt_api_info *e = global->api_list; e->name != NULL; e++) {
		void *fn = e->null_func;
		for (size_t i = 0; i < sizeof(implemented) / sizeof(implemented[0]); i++)
			if (strcmp(e->name, implemented[i].name) == 0)
				fn = (void *)implemented[i].fn;
		if (runtime && fn == (void *)thread_set_name)
			fn = (void *)runtime_thread_set_name;
		if (e->func_ptr != NULL)
			*e->func_ptr = fn;
	}
}
