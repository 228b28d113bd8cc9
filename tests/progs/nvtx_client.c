/* SPDX-License-Identifier: MIT */
/*
 * A program that speaks NVTX the way the NVTX v3 header does, without the header:
 * it keeps one function pointer per slot of the core and core2 modules, loads the
 * library named by NVTX_INJECTION64_PATH, hands its InitializeInjectionNvtx2 an
 * export-table function whose callbacks table gives out those slots, and then calls
 * through the slots the tool filled (an empty slot is a call that does nothing, as in
 * the header). tests/test_nvtx.c runs it and checks the trace; bench/nvtx.c times it.
 *
 * What it does (the test's expectations follow it):
 *   main: names itself "nvtx main", names category 7 "io" and, in domain "physics",
 *	category 1 "solver"; starts HANDOFFS ranges "handoff" for the workers to end;
 *	pushes "physics step" (registered) in the domain with payload u64 42; marks.
 *   WORKERS threads "worker N": ITERS times push "outer" (A) > "inner wide é" (W) >
 *	"ex" (Ex: color, category 7, payload of type 1 + i % 6); pops them; ends the
 *	handoff ranges given to them.
 */
#include "nvtx/nvtx_abi.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WORKERS	 2
#define ITERS	 10
#define HANDOFFS 4

static rtr_nvtx_fn core[RTR_NVTX_CORE_SLOTS];
static rtr_nvtx_fn core2[RTR_NVTX_CORE2_SLOTS];
static rtr_nvtx_fn *core_table[RTR_NVTX_CORE_SLOTS];
static rtr_nvtx_fn *core2_table[RTR_NVTX_CORE2_SLOTS];

static int get_module(int module, rtr_nvtx_table *out, unsigned int *size)
{
	rtr_nvtx_fn **t = module == RTR_NVTX_MODULE_CORE    ? core_table
			  : module == RTR_NVTX_MODULE_CORE2 ? core2_table
							    : NULL;
	if (t == NULL)
		return 0;
	for (unsigned i = 1; i < RTR_NVTX_CORE_SLOTS; i++) /* slot 0 is unused */
		t[i] = module == RTR_NVTX_MODULE_CORE ? &core[i] : &core2[i];
	*out = t;
	*size = RTR_NVTX_CORE_SLOTS;
	return 1;
}

static const struct rtr_nvtx_callbacks_table callbacks = {sizeof(callbacks), get_module};

static const void *get_export_table(uint32_t id)
{
	return id == RTR_NVTX_ETID_CALLBACKS ? &callbacks : NULL;
}

/* The calls, as the header's wrappers make them: through the slot when filled. */
#define CALL(table, slot, type, ...) \
	((table)[slot] != NULL ? ((type)(void (*)(void))(table)[slot])(__VA_ARGS__) : 0)
typedef const struct rtr_nvtx_attributes attrs;
#define push_a(m)   CALL(core, RTR_NVTX_CORE_RANGE_PUSH_A, int (*)(const char *), m)
#define push_w(m)   CALL(core, RTR_NVTX_CORE_RANGE_PUSH_W, int (*)(const wchar_t *), m)
#define push_ex(a)  CALL(core, RTR_NVTX_CORE_RANGE_PUSH_EX, int (*)(attrs *), a)
#define pop()	    CALL(core, RTR_NVTX_CORE_RANGE_POP, int (*)(void), )
#define start_a(m)  CALL(core, RTR_NVTX_CORE_RANGE_START_A, rtr_nvtx_range_id (*)(const char *), m)
#define start_ex(a) CALL(core, RTR_NVTX_CORE_RANGE_START_EX, rtr_nvtx_range_id (*)(attrs *), a)
#define end(id)	    CALL(core, RTR_NVTX_CORE_RANGE_END, int (*)(rtr_nvtx_range_id), id)
#define mark_a(m)   CALL(core, RTR_NVTX_CORE_MARK_A, int (*)(const char *), m)
#define mark_w(m)   CALL(core, RTR_NVTX_CORE_MARK_W, int (*)(const wchar_t *), m)
#define mark_ex(a)  CALL(core, RTR_NVTX_CORE_MARK_EX, int (*)(attrs *), a)
#define name_thread(t, n) \
	CALL(core, RTR_NVTX_CORE_NAME_OS_THREAD_A, int (*)(uint32_t, const char *), t, n)
#define name_cat(c, n) \
	CALL(core, RTR_NVTX_CORE_NAME_CATEGORY_A, int (*)(uint32_t, const char *), c, n)
#define d_create(n) CALL(core2, RTR_NVTX_CORE2_DOMAIN_CREATE_A, const void *(*)(const char *), n)
#define d_register(d, s)                                                                           \
	CALL(core2, RTR_NVTX_CORE2_REGISTER_STRING_A, const void *(*)(const void *, const char *), \
	     d, s)
#define d_name_cat(d, c, n)                                                                        \
	CALL(core2, RTR_NVTX_CORE2_NAME_CATEGORY_A, int (*)(const void *, uint32_t, const char *), \
	     d, c, n)
#define d_push_ex(d, a) \
	CALL(core2, RTR_NVTX_CORE2_RANGE_PUSH_EX, int (*)(const void *, attrs *), d, a)
#define d_pop(d)	CALL(core2, RTR_NVTX_CORE2_RANGE_POP, int (*)(const void *), d)
#define d_mark_ex(d, a) CALL(core2, RTR_NVTX_CORE2_MARK_EX, int (*)(const void *, attrs *), d, a)
#define d_start_ex(d, a)                                                                         \
	CALL(core2, RTR_NVTX_CORE2_RANGE_START_EX, rtr_nvtx_range_id (*)(const void *, attrs *), \
	     d, a)
#define d_end(d, id) \
	CALL(core2, RTR_NVTX_CORE2_RANGE_END, int (*)(const void *, rtr_nvtx_range_id), d, id)

static struct rtr_nvtx_attributes attr_init(void)
{
	struct rtr_nvtx_attributes a;
	memset(&a, 0, sizeof(a));
	a.version = 3;
	a.size = (uint16_t)sizeof(a);
	return a;
}

static rtr_nvtx_range_id handoff[HANDOFFS];
static pthread_barrier_t started;

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "nvtx_client: %s\n", what);
		exit(3);
	}
}

static void *worker(void *arg)
{
	int w = (int)(intptr_t)arg;
	char name[32];
	snprintf(name, sizeof(name), "worker %d", w);
	name_thread((uint32_t)gettid(), name);
	for (int i = 0; i < ITERS; i++) {
		struct rtr_nvtx_attributes a = attr_init();
		a.color_type = 1;
		a.color = 0xff00ff00u;
		a.category = 7;
		a.payload_type = 1 + i % 6;
		switch (a.payload_type) {
		case 1:
			a.payload.u64 = 18446744073709551615u;
			break;
		case 2:
			a.payload.i64 = -i;
			break;
		case 3:
			a.payload.f64 = 0.5 + i;
			break;
		case 4:
			a.payload.u32 = 4000000000u;
			break;
		case 5:
			a.payload.i32 = -2 * i;
			break;
		default:
			a.payload.f32 = 0.25f;
			break;
		}
		a.message_type = RTR_NVTX_MESSAGE_ASCII;
		a.message.ascii = "ex";
		check(push_a("outer") == 0, "push level 0");
		check(push_w(L"inner wide \u00e9") == 1, "push level 1");
		check(push_ex(&a) == 2, "push level 2");
		check(pop() == 2 && pop() == 1 && pop() == 0, "pop levels");
	}
	check(pop() < 0, "pop with nothing open");
	pthread_barrier_wait(&started);
	for (int k = w; k < HANDOFFS; k += WORKERS)
		end(handoff[k]);
	return NULL;
}

int main(void)
{
	const char *path = getenv("NVTX_INJECTION64_PATH");
	check(path != NULL, "NVTX_INJECTION64_PATH unset");
	void *lib = dlopen(path, RTLD_LAZY);
	check(lib != NULL, dlerror());
	int (*init)(rtr_nvtx_get_export_table_fn) =
		(int (*)(rtr_nvtx_get_export_table_fn))dlsym(lib, "InitializeInjectionNvtx2");
	check(init != NULL && init(get_export_table) == 1, "InitializeInjectionNvtx2");

	name_thread((uint32_t)gettid(), "nvtx main");
	name_cat(7, "io");
	const void *physics = d_create("physics");
	d_name_cat(physics, 1, "solver");
	const void *step = d_register(physics, "physics step");
	check(step != NULL && step == d_register(physics, "physics step"), "registered once");

	pthread_barrier_init(&started, NULL, WORKERS + 1);
	pthread_t t[WORKERS];
	for (int w = 0; w < WORKERS; w++)
		pthread_create(&t[w], NULL, worker, (void *)(intptr_t)w);
	for (int k = 0; k < HANDOFFS; k++)
		handoff[k] = start_a("handoff");
	pthread_barrier_wait(&started);

	struct rtr_nvtx_attributes a = attr_init();
	a.category = 1;
	a.payload_type = 1;
	a.payload.u64 = 42;
	a.message_type = RTR_NVTX_MESSAGE_REGISTERED;
	a.message.registered = step;
	check(d_push_ex(physics, &a) == 0, "domain push level");
	rtr_nvtx_range_id id = d_start_ex(physics, &a);
	d_end(physics, id);
	check(d_pop(physics) == 0, "domain pop level");

	mark_a("mark a");
	mark_w(L"mark w");
	struct rtr_nvtx_attributes m = attr_init();
	m.payload_type = 5;
	m.payload.i32 = -5;
	m.message_type = RTR_NVTX_MESSAGE_ASCII;
	m.message.ascii = "mark ex";
	mark_ex(&m);
	m.message.ascii = "domain mark";
	d_mark_ex(physics, &m);
	start_ex(&m); /* never ended: an open async span at the end */

	for (int w = 0; w < WORKERS; w++)
		pthread_join(t[w], NULL);
	return 0;
}
