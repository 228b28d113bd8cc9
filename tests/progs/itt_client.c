/* SPDX-License-Identifier: MIT */
/*
 * A program that speaks ITT the way one built with the ITT static part does, without
 * that part: it finds the collector through INTEL_LIBITTNOTIFY64, dlopen()s it, calls
 * its __itt_api_init() with a table laid out as the static part's (src/itt/itt_abi.h),
 * then calls through the pointers the collector filled, as the program's ITT calls
 * would (skipping a call when a domain's flags are 0). It does not link ringtrace.
 *
 * What it does, for tests/test_itt.c (which checks every item):
 *	main thread "itt main": 3 x solve{ step(id 11+i, parent 100) }, each in a frame of
 *	domain app.compute without an id
 *	thread "itt worker": 4 x read{ step } (read in app.io, step in app.compute)
 *	a frame with id 77 begun on main, ended on the worker
 *	counter "queue depth" (domain app.io): 5, 6, 16, 15
 *	pause: "ends in pause" begun before, ended inside (recorded); inside: "during
 *	pause" (a task), a counter sample 99, a frame; "outer" begun before and ended after
 *	holds "inner paused" begun inside, ended after (not recorded); after resume:
 *	"after resume"
 * Exit status: 0, or the number of the check that failed here.
 */
#include "itt/itt_abi.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The static part's pointers, each starting at its init stub (here: NULL). */
static itt_domain_create_fn *domain_create;
static itt_string_handle_create_fn *string_handle_create;
static itt_task_begin_fn *task_begin;
static itt_task_end_fn *task_end;
static itt_frame_fn *frame_begin, *frame_end;
static itt_thread_set_name_fn *thread_set_name;
static itt_counter_create_fn *counter_create;
static itt_counter_set_value_fn *counter_set_value;
static itt_counter_inc_fn *counter_inc, *counter_dec;
static itt_counter_delta_fn *counter_inc_delta;
static itt_control_fn *itt_pause, *itt_resume, *itt_detach;
static void *sync_create; /* a function the collector does not provide */

static void null_stub(void)
{
}

#define ENTRY(name, ptr, null)                       \
	{                                            \
		name, (void **)&(ptr), NULL, null, 1 \
	}
static struct itt_api_info api_list[] = {
	ENTRY("__itt_domain_create", domain_create, NULL),
	ENTRY("__itt_string_handle_create", string_handle_create, NULL),
	ENTRY("__itt_task_begin", task_begin, NULL),
	ENTRY("__itt_task_end", task_end, NULL),
	ENTRY("__itt_frame_begin_v3", frame_begin, NULL),
	ENTRY("__itt_frame_end_v3", frame_end, NULL),
	ENTRY("__itt_thread_set_name", thread_set_name, NULL),
	ENTRY("__itt_counter_create", counter_create, NULL),
	ENTRY("__itt_counter_set_value", counter_set_value, NULL),
	ENTRY("__itt_counter_inc", counter_inc, NULL),
	ENTRY("__itt_counter_dec", counter_dec, NULL),
	ENTRY("__itt_counter_inc_delta", counter_inc_delta, NULL),
	ENTRY("__itt_pause", itt_pause, NULL),
	ENTRY("__itt_resume", itt_resume, NULL),
	ENTRY("__itt_detach", itt_detach, NULL),
	ENTRY("__itt_sync_create", sync_create, (void *)(uintptr_t)null_stub),
	{NULL, NULL, NULL, NULL, 0},
};

static struct itt_global global = {
	.magic = RTR_ITT_MAGIC,
	.version_major = 3,
	.version_minor = 0,
	.mutex = PTHREAD_MUTEX_INITIALIZER,
	.api_list = api_list,
};

static const struct itt_id null_id;
static struct itt_domain *compute, *io;
static struct itt_string_handle *solve, *step, *read_h;

/* As the program's calls do: nothing when the domain is off or the pointer empty. */
static void begin(const struct itt_domain *d, struct itt_id id, struct itt_id parent,
		  struct itt_string_handle *name)
{
	if (d->flags && task_begin != NULL)
		task_begin(d, id, parent, name);
}

static void end(const struct itt_domain *d)
{
	if (d->flags && task_end != NULL)
		task_end(d);
}

static struct itt_id frame77 = {77, 0, 0};
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int frame77_begun;

static void *worker(void *arg)
{
	(void)arg;
	thread_set_name("itt worker");
	for (int i = 0; i < 4; i++) {
		begin(io, null_id, null_id, read_h);
		begin(compute, null_id, null_id, step);
		end(compute);
		end(io);
	}
	pthread_mutex_lock(&lock);
	while (!frame77_begun)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	frame_end(compute, &frame77);
	return NULL;
}

int main(void)
{
	const char *path = getenv("INTEL_LIBITTNOTIFY64");
	if (path == NULL)
		return 1;
	void *lib = dlopen(path, RTLD_LAZY);
	if (lib == NULL) {
		fprintf(stderr, "%s\n", dlerror());
		return 2;
	}
	/* The static part takes a library with __itt_api_init as a version-2 collector. */
	itt_api_init_fn *api_init = (itt_api_init_fn *)(uintptr_t)dlsym(lib, RTR_ITT_API_INIT_NAME);
	if (api_init == NULL)
		return 3;
	api_init(&global, -1);
	global.api_initialized = 1;
	if (task_begin == NULL || frame_end == NULL || itt_resume == NULL || counter_dec == NULL)
		return 4;
	if (sync_create != (void *)(uintptr_t)null_stub || itt_detach != NULL)
		return 5; /* functions it lacks get the static part's null stub */

	thread_set_name("itt main");
	compute = domain_create("app.compute");
	io = domain_create("app.io");
	if (compute == NULL || io == NULL || domain_create("app.compute") != compute)
		return 6;
	solve = string_handle_create("solve");
	step = string_handle_create("step");
	read_h = string_handle_create("read");
	if (solve == NULL || string_handle_create("solve") != solve || step == solve)
		return 7;
	if (!compute->flags || !io->flags)
		return 8;

	pthread_t t;
	if (pthread_create(&t, NULL, worker, NULL) != 0)
		return 9;
	for (int i = 0; i < 3; i++) {
		frame_begin(compute, NULL);
		begin(compute, null_id, null_id, solve);
		begin(compute, (struct itt_id){(unsigned long long)(11 + i), 0, 0},
		      (struct itt_id){100, 0, 0}, step);
		end(compute);
		end(compute);
		frame_end(compute, NULL);
	}
	frame_begin(compute, &frame77);
	pthread_mutex_lock(&lock);
	frame77_begun = 1;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&lock);
	pthread_join(t, NULL);

	struct itt_counter *depth = counter_create("queue depth", "app.io");
	if (depth == NULL || counter_create("queue depth", "app.io") != depth)
		return 10;
	uint64_t v = 5;
	counter_set_value(depth, &v);
	counter_inc(depth);
	counter_inc_delta(depth, 10);
	counter_dec(depth);

	struct itt_string_handle *ends_in = string_handle_create("ends in pause");
	struct itt_string_handle *during = string_handle_create("during pause");
	struct itt_string_handle *outer = string_handle_create("outer");
	struct itt_string_handle *inner = string_handle_create("inner paused");
	struct itt_string_handle *after = string_handle_create("after resume");
	begin(compute, null_id, null_id, ends_in);
	begin(compute, null_id, null_id, outer);
	itt_pause();
	begin(compute, null_id, null_id, during);
	end(compute);
	v = 99;
	counter_set_value(depth, &v);
	frame_begin(io, NULL);
	frame_end(io, NULL);
	begin(compute, null_id, null_id, inner);
	itt_resume();
	end(compute); /* inner paused */
	end(compute); /* outer */
	itt_pause();
	end(compute); /* ends in pause */
	itt_resume();
	begin(compute, null_id, null_id, after);
	end(compute);
	return 0;
}
