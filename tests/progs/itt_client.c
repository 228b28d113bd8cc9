/* SPDX-License-Identifier: MIT */
/*
 * A program that speaks ITT the way one built with the ITT static part does, without
 * that part (itt_calls.h: the collector found through INTEL_LIBITTNOTIFY64 and handed
 * the static part's table; the calls through the pointers it filled). It does not
 * link ringtrace.
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
#include "itt_calls.h"

#include <pthread.h>
#include <stdio.h>

static struct itt_domain *compute, *io;
static struct itt_string_handle *solve, *step, *read_h;

static struct itt_id frame77 = {77, 0, 0};
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int frame77_begun;

static void *worker(void *arg)
{
	(void)arg;
	itt_thread_set_name("itt worker");
	for (int i = 0; i < 4; i++) {
		itt_begin(io, itt_null_id, itt_null_id, read_h);
		itt_begin(compute, itt_null_id, itt_null_id, step);
		itt_end(compute);
		itt_end(io);
	}
	pthread_mutex_lock(&lock);
	while (!frame77_begun)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	itt_frame_end(compute, &frame77);
	return NULL;
}

int main(void)
{
	int err = itt_load();
	if (err != 0) {
		fprintf(stderr, "itt_client: loading the collector failed at step %d\n", err);
		return err;
	}
	if (itt_task_begin == NULL || itt_frame_end == NULL || itt_resume == NULL ||
	    itt_counter_dec == NULL)
		return 4;
	if (itt_sync_create != (void *)(uintptr_t)itt_null_stub || itt_detach != NULL)
		return 5; /* functions it lacks get the static part's null stub */

	itt_thread_set_name("itt main");
	compute = itt_domain_create("app.compute");
	io = itt_domain_create("app.io");
	if (compute == NULL || io == NULL || itt_domain_create("app.compute") != compute)
		return 6;
	solve = itt_string_handle_create("solve");
	step = itt_string_handle_create("step");
	read_h = itt_string_handle_create("read");
	if (solve == NULL || itt_string_handle_create("solve") != solve || step == solve)
		return 7;
	if (!compute->flags || !io->flags)
		return 8;

	pthread_t t;
	if (pthread_create(&t, NULL, worker, NULL) != 0)
		return 9;
	for (int i = 0; i < 3; i++) {
		itt_frame_begin(compute, NULL);
		itt_begin(compute, itt_null_id, itt_null_id, solve);
		itt_begin(compute, (struct itt_id){(unsigned long long)(11 + i), 0, 0},
			  (struct itt_id){100, 0, 0}, step);
		itt_end(compute);
		itt_end(compute);
		itt_frame_end(compute, NULL);
	}
	itt_frame_begin(compute, &frame77);
	pthread_mutex_lock(&lock);
	frame77_begun = 1;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&lock);
	pthread_join(t, NULL);

	struct itt_counter *depth = itt_counter_create("queue depth", "app.io");
	if (depth == NULL || itt_counter_create("queue depth", "app.io") != depth)
		return 10;
	uint64_t v = 5;
	itt_counter_set_value(depth, &v);
	itt_counter_inc(depth);
	itt_counter_inc_delta(depth, 10);
	itt_counter_dec(depth);

	struct itt_string_handle *ends_in = itt_string_handle_create("ends in pause");
	struct itt_string_handle *during = itt_string_handle_create("during pause");
	struct itt_string_handle *outer = itt_string_handle_create("outer");
	struct itt_string_handle *inner = itt_string_handle_create("inner paused");
	struct itt_string_handle *after = itt_string_handle_create("after resume");
	itt_begin(compute, itt_null_id, itt_null_id, ends_in);
	itt_begin(compute, itt_null_id, itt_null_id, outer);
	itt_pause();
	itt_begin(compute, itt_null_id, itt_null_id, during);
	itt_end(compute);
	v = 99;
	itt_counter_set_value(depth, &v);
	itt_frame_begin(io, NULL);
	itt_frame_end(io, NULL);
	itt_begin(compute, itt_null_id, itt_null_id, inner);
	itt_resume();
	itt_end(compute); /* inner paused */
	itt_end(compute); /* outer */
	itt_pause();
	itt_end(compute); /* ends in pause */
	itt_resume();
	itt_begin(compute, itt_null_id, itt_null_id, after);
	itt_end(compute);
	return 0;
}
