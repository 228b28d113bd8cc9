/* SPDX-License-Identifier: MIT */
/*
 * A program that speaks NVTX the way the NVTX v3 header does, without the header
 * (nvtx_calls.h: the slots, loading the library NVTX_INJECTION64_PATH names, the calls
 * through the slots the tool filled). tests/test_nvtx.c runs it and checks the trace;
 * bench/nvtx.c makes the same calls.
 *
 * What it does (the test's expectations follow it):
 *   main: names itself "nvtx main", names category 7 "io" and, in domain "physics",
 *	category 1 "solver"; starts HANDOFFS ranges "handoff" for the workers to end;
 *	pushes "physics step" (registered) in the domain with payload u64 42; marks;
 *	pushes "reuse a", "reuse b", "reuse a" from one buffer rewritten between them.
 *   WORKERS threads "worker N": ITERS times push "outer" (A) > "inner wide é" (W) >
 *	"ex" (Ex: color, category 7, payload of type 1 + i % 6); pops them; ends the
 *	handoff ranges given to them.
 */
#include "nvtx_calls.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WORKERS	 2
#define ITERS	 10
#define HANDOFFS 4

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
	nvtx_name_thread((uint32_t)gettid(), name);
	for (int i = 0; i < ITERS; i++) {
		struct rtr_nvtx_attributes a = nvtx_attr_init();
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
		check(nvtx_push_a("outer") == 0, "push level 0");
		check(nvtx_push_w(L"inner wide \u00e9") == 1, "push level 1");
		check(nvtx_push_ex(&a) == 2, "push level 2");
		check(nvtx_pop() == 2 && nvtx_pop() == 1 && nvtx_pop() == 0, "pop levels");
	}
	check(nvtx_pop() < 0, "pop with nothing open");
	pthread_barrier_wait(&started);
	for (int k = w; k < HANDOFFS; k += WORKERS)
		nvtx_end(handoff[k]);
	return NULL;
}

int main(void)
{
	const char *err = nvtx_load();
	check(err == NULL, err);

	nvtx_name_thread((uint32_t)gettid(), "nvtx main");
	nvtx_name_cat(7, "io");
	const void *physics = nvtx_domain_create("physics");
	nvtx_domain_name_cat(physics, 1, "solver");
	const void *step = nvtx_domain_register(physics, "physics step");
	check(step != NULL && step == nvtx_domain_register(physics, "physics step"),
	      "registered once");

	pthread_barrier_init(&started, NULL, WORKERS + 1);
	pthread_t t[WORKERS];
	for (int w = 0; w < WORKERS; w++)
		pthread_create(&t[w], NULL, worker, (void *)(intptr_t)w);
	for (int k = 0; k < HANDOFFS; k++)
		handoff[k] = nvtx_start_a("handoff");
	pthread_barrier_wait(&started);

	struct rtr_nvtx_attributes a = nvtx_attr_init();
	a.category = 1;
	a.payload_type = 1;
	a.payload.u64 = 42;
	a.message_type = RTR_NVTX_MESSAGE_REGISTERED;
	a.message.registered = step;
	check(nvtx_domain_push_ex(physics, &a) == 0, "domain push level");
	rtr_nvtx_range_id id = nvtx_domain_start_ex(physics, &a);
	nvtx_domain_end(physics, id);
	check(nvtx_domain_pop(physics) == 0, "domain pop level");

	nvtx_mark_a("mark a");
	nvtx_mark_w(L"mark w");
	struct rtr_nvtx_attributes m = nvtx_attr_init();
	m.payload_type = 5;
	m.payload.i32 = -5;
	m.message_type = RTR_NVTX_MESSAGE_ASCII;
	m.message.ascii = "mark ex";
	nvtx_mark_ex(&m);
	m.message.ascii = "domain mark";
	nvtx_domain_mark_ex(physics, &m);
	nvtx_start_ex(&m); /* never ended: an open async span at the end */

	/* one buffer, three names: the tool must not take a name by its address */
	char reuse[16];
	for (int i = 0; i < 3; i++) {
		snprintf(reuse, sizeof(reuse), "reuse %c", i == 1 ? 'b' : 'a');
		check(nvtx_push_a(reuse) == 0, "reuse push");
		check(nvtx_pop() == 0, "reuse pop");
	}

	for (int w = 0; w < WORKERS; w++)
		pthread_join(t[w], NULL);
	return 0;
}
