/* SPDX-License-Identifier: MIT */
/*
 * libringtrace-nvtx: an NVTX v3 injection library (NVTX_INJECTION64_PATH). The
 * program's NVTX header calls InitializeInjectionNvtx2() once; we fill the core and
 * core2 modules' slots (nvtx_abi.h) with the functions below, which record through
 * libringtrace:
 *
 *	RangePush*, RangePop	a slice (rtr_begin_args / rtr_pop) on the calling thread
 *	RangeStart*, RangeEnd	an async span (rtr_async_begin/end); may end anywhere
 *	Mark*			an instant on the calling thread
 *	NameOsThread*		rtr_thread_name, when the id is the calling thread's
 *	NameCategory*		the name an Ex call's category argument shows
 *	DomainCreate*		a domain: its name is the category of its events
 *	RegisterString*		the handle is the interned string itself
 *
 * Names (messages) are interned once (strings.h), so each event carries its name and
 * category by pointer: no copy into the ring, no allocation, no lock. An Ex call's
 * attributes become arguments: "color" (ARGB), "category" (its name, or the number
 * when unnamed) and "payload" (typed as given). Events outside a domain have the
 * category "nvtx". A range id holds its name's and category's arena offsets and a
 * counter, so RangeEnd needs no table. When the arena is full, a push or mark copies
 * its name into the ring instead, and a start/end range is named "range".
 */
#include <ringtrace.h>

#include "common/atomic.h"
#include "nvtx/nvtx_abi.h"
#include "nvtx/strings.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_CAT    "nvtx"
#define UNNAMED_RANGE  "range"
#define UNNAMED_MARK   "mark"
#define CATEGORY_SLOTS 1024u
#define RTR_NVTX_API   __attribute__((visibility("default")))

/* ------------------------------------------------------------------------- */
/* Categories: (domain, id) -> name                                           */

struct category_name {
	const char *domain;
	uint32_t id;
	const char *name;
};

static struct category_name *categories[CATEGORY_SLOTS];
static pthread_mutex_t categories_lock = PTHREAD_MUTEX_INITIALIZER; /* writers only */

static uint32_t category_hash(const char *domain, uint32_t id)
{
	return (uint32_t)(((uintptr_t)domain >> 3) * 0x9E3779B1u) ^ (id * 0x85EBCA6Bu);
}

static const char *category_name(const char *domain, uint32_t id)
{
	uint32_t h = category_hash(domain, id);
	for (uint32_t i = 0; i < CATEGORY_SLOTS; i++) {
		/* A2: pairs with R2 in name_category(): a name seen is a name written */
		struct category_name *c =
			rtr_atomic_load_acquire(&categories[(h + i) & (CATEGORY_SLOTS - 1)]);
		if (c == NULL)
			return NULL;
		if (c->domain == domain && c->id == id)
			return c->name;
	}
	return NULL;
}

/* Not a hot path: one lock for the writers, readers never wait. A renamed category
 * gets a new entry in the slot; the old one is left for readers that hold it. */
static void name_category(const char *domain, uint32_t id, const char *name)
{
	struct category_name *c = malloc(sizeof(*c));
	if (c == NULL || name == NULL) {
		free(c);
		return;
	}
	c->domain = domain;
	c->id = id;
	c->name = rtr__nvtx_intern(name, strlen(name));
	if (c->name == NULL)
		c->name = strdup(name);
	if (c->name == NULL) {
		free(c);
		return;
	}
	uint32_t h = category_hash(domain, id);
	pthread_mutex_lock(&categories_lock);
	for (uint32_t i = 0; i < CATEGORY_SLOTS; i++) {
		struct category_name **slot = &categories[(h + i) & (CATEGORY_SLOTS - 1)];
		struct category_name *old =
			rtr_atomic_load_relaxed(slot); /* writers hold the lock */
		if (old == NULL || (old->domain == domain && old->id == id)) {
			/* R2: publishes c's fields (pairs with A2) */
			rtr_atomic_store_release(slot, c);
			c = NULL;
			break;
		}
	}
	pthread_mutex_unlock(&categories_lock);
	free(c); /* the table was full: the category stays a number */
}

/* ------------------------------------------------------------------------- */
/* Messages and attributes                                                    */

static const char *cat_of(const void *domain)
{
	return domain != NULL ? (const char *)domain : DEFAULT_CAT;
}

/*
 * The names this thread interned last, by the caller's pointer: a program pushes the
 * same literals over and over. A hit still compares the bytes (the caller's buffer
 * may hold another name now), but skips measuring, hashing and probing the table.
 * Four entries of static TLS: little enough for a library loaded with dlopen().
 */
#define RECENT_NAMES 4

struct recent_name {
	const char *caller;
	const char *interned;
};

static __thread struct recent_name recent[RECENT_NAMES] __attribute__((tls_model("initial-exec")));

static const char *intern_ascii(const char *s)
{
	if (s == NULL)
		return NULL;
	struct recent_name *r = &recent[((uintptr_t)s >> 3) & (RECENT_NAMES - 1)];
	if (r->caller == s) {
		const char *e = r->interned;
		size_t i = 0;
		while (e[i] == s[i] && e[i] != '\0')
			i++;
		if (e[i] == s[i]) /* both ended */
			return e;
	}
	const char *e = rtr__nvtx_intern(s, strlen(s));
	if (e != NULL) { /* a name cut to the longest kept never hits: it ends first */
		r->caller = s;
		r->interned = e;
	}
	return e;
}

static const char *intern_wide(const wchar_t *s)
{
	char utf8[RTR_NVTX_MAX_STRING + 8];
	if (s == NULL)
		return NULL;
	size_t n = rtr__nvtx_utf8(s, utf8, sizeof(utf8));
	return rtr__nvtx_intern(utf8, n);
}

/* An Ex call's message, interned; NULL when it has none (or the arena is full: then
 * *copy is the caller's string to copy, when it is ASCII). */
static const char *attr_message(const struct rtr_nvtx_attributes *a, const char **copy)
{
	*copy = NULL;
	switch (a->message_type) {
	case RTR_NVTX_MESSAGE_ASCII: {
		const char *s = intern_ascii(a->message.ascii);
		if (s == NULL)
			*copy = a->message.ascii;
		return s;
	}
	case RTR_NVTX_MESSAGE_UNICODE:
		return intern_wide(a->message.unicode);
	case RTR_NVTX_MESSAGE_REGISTERED:
		return (const char *)a->message.registered;
	default:
		return NULL;
	}
}

/* An Ex call's color, category and payload as arguments into args[3]; returns how many. */
static unsigned attr_args(const struct rtr_nvtx_attributes *a, const char *domain,
			  struct rtr_arg *args)
{
	unsigned n = 0;
	if (a->color_type == RTR_NVTX_COLOR_ARGB)
		args[n++] = RTR_ARG_U64("color", a->color);
	if (a->category != 0) {
		const char *name = category_name(domain, a->category);
		args[n++] = name != NULL ? RTR_ARG_STR("category", name)
					 : RTR_ARG_U64("category", a->category);
	}
	switch (a->payload_type) {
	case RTR_NVTX_PAYLOAD_U64:
		args[n++] = RTR_ARG_U64("payload", a->payload.u64);
		break;
	case RTR_NVTX_PAYLOAD_I64:
		args[n++] = RTR_ARG_I64("payload", a->payload.i64);
		break;
	case RTR_NVTX_PAYLOAD_DOUBLE:
		args[n++] = RTR_ARG_F64("payload", a->payload.f64);
		break;
	case RTR_NVTX_PAYLOAD_U32:
		args[n++] = RTR_ARG_U64("payload", a->payload.u32);
		break;
	case RTR_NVTX_PAYLOAD_I32:
		args[n++] = RTR_ARG_I64("payload", a->payload.i32);
		break;
	case RTR_NVTX_PAYLOAD_FLOAT:
		args[n++] = RTR_ARG_F64("payload", a->payload.f32);
		break;
	default:
		break;
	}
	return n;
}

/* ------------------------------------------------------------------------- */
/* Push and pop                                                               */

/* Ranges open on this thread (all domains): the level NVTX returns. */
static __thread int push_depth __attribute__((tls_model("initial-exec")));

static int push_named(const char *cat, const char *name, const char *copy,
		      const struct rtr_arg *args, unsigned n)
{
	if (name != NULL)
		rtr_begin_args(cat, name, args, n);
	else if (copy != NULL)
		rtr_begin_copy(cat, copy); /* arena full: named, without the arguments */
	else
		rtr_begin_args(cat, UNNAMED_RANGE, args, n);
	return push_depth++;
}

static int pop_in(const char *cat)
{
	if (push_depth <= 0)
		return -1; /* nothing of ours open on this thread */
	rtr_pop(cat);
	return --push_depth;
}

static int push_ex(const void *domain, const struct rtr_nvtx_attributes *a)
{
	struct rtr_arg args[3];
	const char *copy;
	if (a == NULL)
		return push_named(cat_of(domain), UNNAMED_RANGE, NULL, NULL, 0);
	const char *name = attr_message(a, &copy);
	unsigned n = attr_args(a, domain, args);
	return push_named(cat_of(domain), name, copy, args, n);
}

static int range_push_a(const char *message)
{
	return push_named(DEFAULT_CAT, intern_ascii(message), message, NULL, 0);
}

static int range_push_w(const wchar_t *message)
{
	return push_named(DEFAULT_CAT, intern_wide(message), NULL, NULL, 0);
}

static int range_push_ex(const struct rtr_nvtx_attributes *a)
{
	return push_ex(NULL, a);
}

static int range_pop(void)
{
	return pop_in(DEFAULT_CAT);
}

static int domain_range_push_ex(const void *domain, const struct rtr_nvtx_attributes *a)
{
	return push_ex(domain, a);
}

static int domain_range_pop(const void *domain)
{
	return pop_in(cat_of(domain));
}

/* ------------------------------------------------------------------------- */
/* Start and end                                                              */

static uint64_t range_counter; /* the ids' low bits: a different id for each start */

/* [counter: 24][category offset: 20][name offset: 20]; offset 0: the fallback name. */
static rtr_nvtx_range_id start_named(const char *cat, const char *name, const struct rtr_arg *args,
				     unsigned n)
{
	/* Relaxed: only the value matters, no other memory is ordered by it */
	uint64_t count = __atomic_add_fetch(&range_counter, 1, __ATOMIC_RELAXED);
	uint64_t name_off = rtr__nvtx_offset(name);
	uint64_t cat_off = rtr__nvtx_offset(cat);
	rtr_nvtx_range_id id = (count << (2 * RTR_NVTX_OFFSET_BITS)) |
			       (cat_off << RTR_NVTX_OFFSET_BITS) | name_off;
	rtr_async_begin(cat_off != 0 ? cat : DEFAULT_CAT, name_off != 0 ? name : UNNAMED_RANGE, id,
			args, n);
	return id;
}

static void range_end(rtr_nvtx_range_id id)
{
	uint32_t mask = (1u << RTR_NVTX_OFFSET_BITS) - 1;
	const char *name = rtr__nvtx_at((uint32_t)id & mask);
	const char *cat = rtr__nvtx_at((uint32_t)(id >> RTR_NVTX_OFFSET_BITS) & mask);
	rtr_async_end(cat != NULL ? cat : DEFAULT_CAT, name != NULL ? name : UNNAMED_RANGE, id);
}

static rtr_nvtx_range_id start_ex(const void *domain, const struct rtr_nvtx_attributes *a)
{
	struct rtr_arg args[3];
	const char *copy;
	if (a == NULL)
		return start_named(cat_of(domain), NULL, NULL, 0);
	const char *name = attr_message(a, &copy);
	unsigned n = attr_args(a, domain, args);
	return start_named(cat_of(domain), name, args, n);
}

static rtr_nvtx_range_id range_start_a(const char *message)
{
	return start_named(DEFAULT_CAT, intern_ascii(message), NULL, 0);
}

static rtr_nvtx_range_id range_start_w(const wchar_t *message)
{
	return start_named(DEFAULT_CAT, intern_wide(message), NULL, 0);
}

static rtr_nvtx_range_id range_start_ex(const struct rtr_nvtx_attributes *a)
{
	return start_ex(NULL, a);
}

static rtr_nvtx_range_id domain_range_start_ex(const void *domain,
					       const struct rtr_nvtx_attributes *a)
{
	return start_ex(domain, a);
}

static void domain_range_end(const void *domain, rtr_nvtx_range_id id)
{
	(void)domain; /* the id holds the category */
	range_end(id);
}

/* ------------------------------------------------------------------------- */
/* Marks                                                                      */

static void mark_named(const char *cat, const char *name, const char *copy,
		       const struct rtr_arg *args, unsigned n)
{
	if (name != NULL)
		rtr_instant_args(cat, name, args, n);
	else if (copy != NULL)
		rtr_instant_copy(cat, copy);
	else
		rtr_instant_args(cat, UNNAMED_MARK, args, n);
}

static void mark_ex_in(const void *domain, const struct rtr_nvtx_attributes *a)
{
	struct rtr_arg args[3];
	const char *copy = NULL;
	const char *name = a != NULL ? attr_message(a, &copy) : NULL;
	unsigned n = a != NULL ? attr_args(a, domain, args) : 0;
	mark_named(cat_of(domain), name, copy, args, n);
}

static void mark_ex(const struct rtr_nvtx_attributes *a)
{
	mark_ex_in(NULL, a);
}

static void mark_a(const char *message)
{
	mark_named(DEFAULT_CAT, intern_ascii(message), message, NULL, 0);
}

static void mark_w(const wchar_t *message)
{
	mark_named(DEFAULT_CAT, intern_wide(message), NULL, NULL, 0);
}

static void domain_mark_ex(const void *domain, const struct rtr_nvtx_attributes *a)
{
	mark_ex_in(domain, a);
}

/* ------------------------------------------------------------------------- */
/* Names, domains, registered strings                                         */

static void name_category_a(uint32_t id, const char *name)
{
	name_category(NULL, id, name);
}

static void name_category_w(uint32_t id, const wchar_t *name)
{
	name_category(NULL, id, intern_wide(name));
}

static void domain_name_category_a(const void *domain, uint32_t id, const char *name)
{
	name_category(domain, id, name);
}

static void domain_name_category_w(const void *domain, uint32_t id, const wchar_t *name)
{
	name_category(domain, id, intern_wide(name));
}

/* NVTX names any OS thread; the recorder names the calling one, so a name for
 * another thread is left out. */
static void name_os_thread_a(uint32_t tid, const char *name)
{
	if (name != NULL && tid == (uint32_t)gettid())
		rtr_thread_name(name);
}

static void name_os_thread_w(uint32_t tid, const wchar_t *name)
{
	char utf8[RTR_NVTX_MAX_STRING + 8];
	if (name != NULL && tid == (uint32_t)gettid()) {
		rtr__nvtx_utf8(name, utf8, sizeof(utf8));
		rtr_thread_name(utf8);
	}
}

/* A string kept for the process's life: interned, or (arena full) a copy. */
static const void *keep_string(const char *s)
{
	if (s == NULL)
		return NULL;
	const char *kept = rtr__nvtx_intern(s, strlen(s));
	return kept != NULL ? kept : strdup(s);
}

static const void *keep_wide(const wchar_t *s)
{
	char utf8[RTR_NVTX_MAX_STRING + 8];
	if (s == NULL)
		return NULL;
	rtr__nvtx_utf8(s, utf8, sizeof(utf8));
	return keep_string(utf8);
}

/* A domain's handle is its interned name: events carry it as their category. */
static const void *domain_create_a(const char *name)
{
	return keep_string(name != NULL ? name : DEFAULT_CAT);
}

static const void *domain_create_w(const wchar_t *name)
{
	return name != NULL ? keep_wide(name) : keep_string(DEFAULT_CAT);
}

static void domain_destroy(const void *domain)
{
	(void)domain; /* events recorded still name it: the name stays */
}

static const void *domain_register_string_a(const void *domain, const char *s)
{
	(void)domain;
	return keep_string(s);
}

static const void *domain_register_string_w(const void *domain, const wchar_t *s)
{
	(void)domain;
	return keep_wide(s);
}

static void initialize(const void *reserved)
{
	(void)reserved;
}

/* ------------------------------------------------------------------------- */
/* Attaching                                                                  */

struct slot_fill {
	unsigned slot;
	rtr_nvtx_fn fn;
};

#define FILL(slot, fn)                                    \
	{                                                 \
		(slot), (rtr_nvtx_fn)(void (*)(void))(fn) \
	}

static const struct slot_fill core_slots[] = {
	FILL(RTR_NVTX_CORE_MARK_EX, mark_ex),
	FILL(RTR_NVTX_CORE_MARK_A, mark_a),
	FILL(RTR_NVTX_CORE_MARK_W, mark_w),
	FILL(RTR_NVTX_CORE_RANGE_START_EX, range_start_ex),
	FILL(RTR_NVTX_CORE_RANGE_START_A, range_start_a),
	FILL(RTR_NVTX_CORE_RANGE_START_W, range_start_w),
	FILL(RTR_NVTX_CORE_RANGE_END, range_end),
	FILL(RTR_NVTX_CORE_RANGE_PUSH_EX, range_push_ex),
	FILL(RTR_NVTX_CORE_RANGE_PUSH_A, range_push_a),
	FILL(RTR_NVTX_CORE_RANGE_PUSH_W, range_push_w),
	FILL(RTR_NVTX_CORE_RANGE_POP, range_pop),
	FILL(RTR_NVTX_CORE_NAME_CATEGORY_A, name_category_a),
	FILL(RTR_NVTX_CORE_NAME_CATEGORY_W, name_category_w),
	FILL(RTR_NVTX_CORE_NAME_OS_THREAD_A, name_os_thread_a),
	FILL(RTR_NVTX_CORE_NAME_OS_THREAD_W, name_os_thread_w),
};

static const struct slot_fill core2_slots[] = {
	FILL(RTR_NVTX_CORE2_MARK_EX, domain_mark_ex),
	FILL(RTR_NVTX_CORE2_RANGE_START_EX, domain_range_start_ex),
	FILL(RTR_NVTX_CORE2_RANGE_END, domain_range_end),
	FILL(RTR_NVTX_CORE2_RANGE_PUSH_EX, domain_range_push_ex),
	FILL(RTR_NVTX_CORE2_RANGE_POP, domain_range_pop),
	FILL(RTR_NVTX_CORE2_NAME_CATEGORY_A, domain_name_category_a),
	FILL(RTR_NVTX_CORE2_NAME_CATEGORY_W, domain_name_category_w),
	FILL(RTR_NVTX_CORE2_REGISTER_STRING_A, domain_register_string_a),
	FILL(RTR_NVTX_CORE2_REGISTER_STRING_W, domain_register_string_w),
	FILL(RTR_NVTX_CORE2_DOMAIN_CREATE_A, domain_create_a),
	FILL(RTR_NVTX_CORE2_DOMAIN_CREATE_W, domain_create_w),
	FILL(RTR_NVTX_CORE2_DOMAIN_DESTROY, domain_destroy),
	FILL(RTR_NVTX_CORE2_INITIALIZE, initialize),
};

/* Fill the module's slots the program has; 0 when it hands out no table. */
static int fill_module(const struct rtr_nvtx_callbacks_table *cb, int module,
		       const struct slot_fill *fills, size_t nfills)
{
	rtr_nvtx_table table = NULL;
	unsigned int size = 0;
	if (!cb->get_module_function_table(module, &table, &size) || table == NULL)
		return 0;
	for (size_t i = 0; i < nfills; i++)
		if (fills[i].slot < size && table[fills[i].slot] != NULL)
			*table[fills[i].slot] = fills[i].fn;
	return 1;
}

RTR_NVTX_API int InitializeInjectionNvtx2(rtr_nvtx_get_export_table_fn get_export_table)
{
	if (get_export_table == NULL)
		return 0;
	const struct rtr_nvtx_callbacks_table *cb = get_export_table(RTR_NVTX_ETID_CALLBACKS);
	if (cb == NULL || cb->struct_size < sizeof(*cb) || cb->get_module_function_table == NULL)
		return 0;
	if (!fill_module(cb, RTR_NVTX_MODULE_CORE, core_slots,
			 sizeof(core_slots) / sizeof(core_slots[0])))
		return 0;
	/* A program whose NVTX has no domains still gets the core calls. */
	fill_module(cb, RTR_NVTX_MODULE_CORE2, core2_slots,
		    sizeof(core2_slots) / sizeof(core2_slots[0]));
	return 1;
}
