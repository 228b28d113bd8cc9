/* SPDX-License-Identifier: MIT */
/*
 * The examples from the field (examples/gpu_timeline.c, examples/training_step.c),
 * run as the programs they are, each writing its trace into the test's directory.
 * The traces are parsed back and checked for what each example says it shows: the
 * GPU lanes and their names, flows from host launches to device work, the overflow
 * lane, the memory counter returning to zero; operator shapes and dtypes, counters
 * per step, the global checkpoint instant, the prefetch async spans, the workers.
 *
 * The binaries come from the build: RTR_EXAMPLE_GPU_TIMELINE and
 * RTR_EXAMPLE_TRAINING_STEP (tests/CMakeLists.txt). Without examples in the build,
 * the tests skip.
 */
#include "child.h"
#include "test_util.h"
#include "trace_read.h"

#include <fcntl.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <cmocka.h>

#define GPU_ITERATIONS 3
#define GPU_KERNELS    5 /* per iteration, kernels[] in gpu_timeline.c */
#define TRAINING_STEPS 5
#define CHECKPOINTS    2 /* after step 4 (CHECKPOINT_EVERY) and after the last */
#define MAX_LANE_NAMES 32

static char path[4096];
static struct tt_trace trace;

/* Run `bin arg` with its trace at path (a file of the running test), wait for it to
 * exit 0, and load the trace into `trace`. */
static void run_example(const char *bin, const char *arg, const char *name)
{
	char *argv[] = {(char *)bin, (char *)arg, NULL};
	posix_spawn_file_actions_t actions;
	pid_t pid;

	tu_own_file(path, sizeof(path), "examples", name, ".json");
	/* Block mode: nothing dropped, so every count below is exact. Plain JSON and no
	 * category filter, whatever the caller's environment says. */
	setenv("RINGTRACE_FILE", path, 1);
	setenv("RINGTRACE_ON_FULL", "block", 1);
	setenv("RINGTRACE_COMPRESS", "none", 1);
	unsetenv("RINGTRACE_CATEGORIES");
	assert_int_equal(posix_spawn_file_actions_init(&actions), 0);
	/* The example's summary is for people; the test reads the trace. */
	assert_int_equal(
		posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0),
		0);
	int rc = posix_spawn(&pid, bin, &actions, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&actions);
	unsetenv("RINGTRACE_FILE");
	if (rc != 0)
		fail_msg("cannot run %s: %s", bin, strerror(rc));
	tu_expect_exit_0(tu_wait_child(pid, TU_CHILD_TIMEOUT_S));

	memset(&trace, 0, sizeof(trace));
	if (tt_load(path, TT_CHECK_ESCAPES, &trace) != 0)
		fail_msg("%s", trace.error);
	assert_true(trace.complete);
	assert_string_equal(trace.ev[0].name, "ringtrace: start");
	const struct tt_event *end = &trace.ev[trace.n - 1];
	assert_string_equal(end->name, "ringtrace: end");
	assert_int_equal(tu_arg_int(end, "dropped"), 0);
}

static int teardown(void **state)
{
	tt_free(&trace);
	memset(&trace, 0, sizeof(trace));
	return tu_teardown(state);
}

static int is(const struct tt_event *e, const char *ph, const char *name)
{
	return strcmp(e->ph, ph) == 0 && tu_is(e->name, name);
}

/* A slice: a B, or an X (a B and its E the writer folded into one line). */
static int is_slice(const struct tt_event *e, const char *name)
{
	return (is(e, "B", name) || is(e, "X", name));
}

static size_t count(const char *ph, const char *name)
{
	size_t n = 0;

	for (size_t i = 0; i < trace.n; i++)
		n += is(&trace.ev[i], ph, name);
	return n;
}

static size_t count_slices(const char *name)
{
	size_t n = 0;

	for (size_t i = 0; i < trace.n; i++)
		n += is_slice(&trace.ev[i], name);
	return n;
}

/* The M event `what` for pid (any tid when tid < 0) whose `key` is the string want
 * (any value when want is NULL), or NULL. */
static const struct tt_event *meta(const char *what, int64_t pid, int64_t tid, const char *key,
				   const char *want)
{
	for (size_t i = 0; i < trace.n; i++) {
		const struct tt_event *e = &trace.ev[i];
		if (!is(e, "M", what) || e->pid != pid || (tid >= 0 && e->tid != tid))
			continue;
		const struct tt_arg *a = tt_arg(e, key);
		if (a != NULL && (want == NULL || tu_is(a->s, want)))
			return e;
	}
	return NULL;
}

/* The tid named `name` in pid, or -1. */
static int64_t tid_named(int64_t pid, const char *name)
{
	const struct tt_event *m = meta("thread_name", pid, -1, "name", name);

	return m != NULL ? m->tid : -1;
}

static double arg_number(const struct tt_event *e, const char *key)
{
	const struct tt_arg *a = tt_arg(e, key);

	if (a == NULL || (a->type != TT_INT && a->type != TT_DOUBLE))
		fail_msg("line %zu: no number %s", e->line, key);
	return a->d;
}

static const char *arg_raw(const struct tt_event *e, const char *key)
{
	const struct tt_arg *a = tt_arg(e, key);

	if (a == NULL || a->raw == NULL)
		fail_msg("line %zu: no %s", e->line, key);
	return a->raw;
}

/* ------------------------------------------------------------------------- */
/* gpu_timeline                                                               */

static void gpu_lanes_are_named_in_the_gpu_process(int64_t host, int64_t gpu)
{
	static const char *const lanes[] = {"stream 1", "stream 2", "stream 3", "copy",
					    "stream 1 (2)"};

	assert_non_null(meta("process_labels", gpu, -1, "labels", "SimGPU 80 SM (simulated)"));
	const struct tt_event *gpu_sort = meta("process_sort_index", gpu, -1, "sort_index", NULL);
	const struct tt_event *host_sort = meta("process_sort_index", host, -1, "sort_index", NULL);
	assert_non_null(gpu_sort);
	assert_non_null(host_sort);
	assert_true(tt_arg(gpu_sort, "sort_index")->i > tt_arg(host_sort, "sort_index")->i);
	int64_t prev_sort = INT64_MIN;
	for (size_t i = 0; i < sizeof(lanes) / sizeof(lanes[0]); i++) {
		int64_t tid = tid_named(gpu, lanes[i]);
		if (tid < 0)
			fail_msg("no lane \"%s\" in GPU 0", lanes[i]);
		/* the streams in order, then the copy lane; the overflow lane just after
		 * its own */
		const struct tt_event *s = meta("thread_sort_index", gpu, tid, "sort_index", NULL);
		assert_non_null(s);
		if (i < 4)
			assert_true(tt_arg(s, "sort_index")->i > prev_sort);
		prev_sort = tt_arg(s, "sort_index")->i;
	}
	assert_non_null(meta("thread_name", host, host, "name", "main"));
	assert_non_null(meta("thread_name", host, -1, "name", "profiler callback"));
}

/* Every kernel and copy has one flow end, at its own start on its own lane, and the
 * flow began on the host inside the launch that queued it. */
static void flows_join_launches_to_device_work(int64_t host, int64_t gpu, uint64_t end_ts)
{
	size_t kernels = 0, copies = 0, flows = 0;

	for (size_t i = 0; i < trace.n; i++) {
		const struct tt_event *x = &trace.ev[i];
		if (strcmp(x->ph, "X") != 0 || x->pid != gpu)
			continue;
		int kernel = tu_is(x->cat, "kernel");
		assert_true(kernel || tu_is(x->cat, "memcpy"));
		kernels += kernel;
		copies += !kernel;
		/* the device clock, a day ahead of the host's, mapped onto the trace */
		assert_true(x->ts_ns + x->dur_ns <= end_ts);

		const struct tt_event *f = NULL;
		for (size_t j = 0; j < trace.n; j++) {
			const struct tt_event *e = &trace.ev[j];
			if (is(e, "f", "launch") && e->pid == gpu && e->tid == x->tid &&
			    e->ts_ns == x->ts_ns) {
				assert_null(f); /* one flow per kernel */
				f = e;
			}
		}
		if (f == NULL)
			fail_msg("line %zu: %s has no flow end", x->line, x->name);
		assert_string_equal(f->cat, x->cat);
		assert_string_equal(f->bp, "e");
		assert_non_null(f->id);

		const struct tt_event *s = NULL;
		size_t s_at = 0;
		for (size_t j = 0; j < trace.n; j++) {
			const struct tt_event *e = &trace.ev[j];
			if (is(e, "s", "launch") && tu_is(e->id, f->id)) {
				assert_null(s);
				s = e;
				s_at = j;
			}
		}
		if (s == NULL)
			fail_msg("line %zu: flow %s has no start", f->line, f->id);
		assert_string_equal(s->cat, f->cat);
		assert_int_equal(s->pid, host);
		assert_int_equal(s->tid, host);
		/* the main thread's event after it is the launch slice's X (file order is
		 * its record order, an X at its end), which holds it */
		const struct tt_event *launch = NULL;
		for (size_t j = s_at + 1; j < trace.n; j++)
			if (trace.ev[j].pid == host && trace.ev[j].tid == host &&
			    strcmp(trace.ev[j].ph, "M") != 0) {
				launch = &trace.ev[j];
				break;
			}
		assert_non_null(launch);
		assert_true(is(launch, "X", kernel ? "launchKernel" : "memcpyAsync"));
		assert_true(launch->ts_ns <= s->ts_ns);
		assert_true(launch->ts_ns + launch->dur_ns >= s->ts_ns);
		flows++;
	}
	assert_int_equal(kernels, GPU_ITERATIONS * GPU_KERNELS);
	assert_int_equal(copies, 1 + 2 * GPU_ITERATIONS); /* the weights, then in and out */
	assert_int_equal(flows, kernels + copies);
	assert_int_equal(count("s", "launch"), flows);
	assert_int_equal(count("f", "launch"), flows);
}

static void kernels_and_copies_carry_their_arguments(int64_t gpu)
{
	int64_t copy_lane = tid_named(gpu, "copy");
	size_t htod = 0, dtoh = 0, gemms = 0;

	for (size_t i = 0; i < trace.n; i++) {
		const struct tt_event *x = &trace.ev[i];
		if (strcmp(x->ph, "X") != 0 || x->pid != gpu)
			continue;
		if (tu_is(x->cat, "memcpy")) {
			assert_int_equal(x->tid, copy_lane);
			const char *dir = tt_arg(x, "direction")->s;
			assert_true(tu_is(dir, "HtoD") || tu_is(dir, "DtoH"));
			htod += tu_is(dir, "HtoD");
			dtoh += tu_is(dir, "DtoH");
			assert_true(tu_arg_int(x, "bytes") > 0);
			continue;
		}
		/* a kernel of stream N is on lane "stream N" or one of its overflow lanes */
		char lane[32];
		snprintf(lane, sizeof(lane), "stream %d", (int)tu_arg_int(x, "stream"));
		const struct tt_event *name = meta("thread_name", gpu, x->tid, "name", NULL);
		assert_non_null(name);
		assert_memory_equal(tt_arg(name, "name")->s, lane, strlen(lane));
		assert_true(tu_arg_int(x, "registers per thread") > 0);
		if (tu_is(x->name, "gemm_128x64_nt")) {
			assert_string_equal(arg_raw(x, "grid"), "[16,8,1]");
			assert_string_equal(arg_raw(x, "block"), "[128,1,1]");
			assert_int_equal(tu_arg_int(x, "warps"), 16 * 8 * 4);
			gemms++;
		}
	}
	assert_int_equal(gemms, GPU_ITERATIONS);
	assert_int_equal(htod, 1 + GPU_ITERATIONS);
	assert_int_equal(dtoh, GPU_ITERATIONS);
}

/* The kernel the profiler reports early starts inside the one before it on stream 1
 * and ends after it: it is on the overflow lane, the earlier one on the lane. */
static void the_skewed_kernel_is_on_the_overflow_lane(int64_t gpu)
{
	int64_t lane = tid_named(gpu, "stream 1"), overflow = tid_named(gpu, "stream 1 (2)");
	const struct tt_event *over = NULL, *prev = NULL;

	for (size_t i = 0; i < trace.n; i++) {
		const struct tt_event *x = &trace.ev[i];
		if (strcmp(x->ph, "X") != 0 || x->pid != gpu)
			continue;
		if (x->tid == overflow) {
			assert_null(over); /* only the one */
			over = x;
		}
	}
	assert_non_null(over);
	assert_string_equal(over->name, "bias_add_relu");
	for (size_t i = 0; i < trace.n; i++) {
		const struct tt_event *x = &trace.ev[i];
		if (strcmp(x->ph, "X") == 0 && x->pid == gpu && x->tid == lane &&
		    x->ts_ns < over->ts_ns && (prev == NULL || x->ts_ns > prev->ts_ns))
			prev = x;
	}
	assert_non_null(prev);
	assert_string_equal(prev->name, "gemm_128x64_nt");
	assert_true(over->ts_ns < prev->ts_ns + prev->dur_ns);
	assert_true(over->ts_ns + over->dur_ns > prev->ts_ns + prev->dur_ns);
}

/* Device memory rises with each allocation and returns to 0 when all is freed; the
 * occupancy counter is on the GPU. */
static void counters_track_memory_and_occupancy(int64_t host, int64_t gpu)
{
	const struct tt_event *last = NULL;
	double peak = 0;
	size_t samples = 0;

	for (size_t i = 0; i < trace.n; i++) {
		const struct tt_event *e = &trace.ev[i];
		if (!is(e, "C", "memory device 0"))
			continue;
		assert_int_equal(e->pid, host);
		double v = arg_number(e, "bytes_in_use");
		peak = v > peak ? v : peak;
		last = e;
		samples++;
	}
	assert_non_null(last);
	/* weights 1 MiB, two 64 KiB buffers, and a 256 KiB workspace at a time */
	assert_true(peak == (1024 + 64 + 64 + 256) * 1024);
	assert_true(arg_number(last, "bytes_in_use") == 0);
	assert_int_equal(samples, 2 * (3 + GPU_ITERATIONS));
	assert_int_equal(count("i", "alloc"), 3 + GPU_ITERATIONS);
	assert_int_equal(count("i", "free"), 3 + GPU_ITERATIONS);

	size_t occupancy = 0;
	for (size_t i = 0; i < trace.n; i++) {
		const struct tt_event *e = &trace.ev[i];
		if (!is(e, "C", "SM occupancy"))
			continue;
		assert_int_equal(e->pid, gpu);
		double pct = arg_number(e, "percent");
		assert_true(pct >= 0 && pct <= 100);
		occupancy++;
	}
	assert_int_equal(occupancy, 2 * GPU_ITERATIONS * GPU_KERNELS); /* at each start, end */
}

static void gpu_timeline_shows_launches_lanes_flows_and_memory(void **state)
{
	(void)state;
#ifndef RTR_EXAMPLE_GPU_TIMELINE
	skip();
#else
	char arg[16];

	snprintf(arg, sizeof(arg), "%d", GPU_ITERATIONS);
	run_example(RTR_EXAMPLE_GPU_TIMELINE, arg, "gpu");
	int64_t host = trace.ev[0].pid, gpu = -1;
	for (size_t i = 0; gpu < 0 && i < trace.n; i++)
		if (is(&trace.ev[i], "M", "process_name") &&
		    tu_is(tt_arg(&trace.ev[i], "name")->s, "GPU 0"))
			gpu = trace.ev[i].pid;
	if (gpu < 0)
		fail_msg("no process named \"GPU 0\"");
	assert_true(gpu != host);

	gpu_lanes_are_named_in_the_gpu_process(host, gpu);
	flows_join_launches_to_device_work(host, gpu, trace.ev[trace.n - 1].ts_ns);
	kernels_and_copies_carry_their_arguments(gpu);
	the_skewed_kernel_is_on_the_overflow_lane(gpu);
	counters_track_memory_and_occupancy(host, gpu);
	assert_int_equal(count_slices("iteration"), GPU_ITERATIONS);
	assert_true(count_slices("activity buffer") >= 2); /* delivered in batches */
#endif
}

/* ------------------------------------------------------------------------- */
/* training_step                                                              */

static void operators_carry_shapes_and_dtypes(void)
{
	const struct tt_event *linear = NULL, *addmm = NULL;

	for (size_t i = 0; i < trace.n && (linear == NULL || addmm == NULL); i++) {
		const struct tt_event *e = &trace.ev[i];
		if (linear == NULL && is_slice(e, "aten::linear"))
			linear = e;
		if (addmm == NULL && is_slice(e, "aten::addmm"))
			addmm = e;
	}
	assert_non_null(linear);
	assert_non_null(addmm);
	assert_string_equal(linear->cat, "op");
	assert_string_equal(arg_raw(linear, "Input Dims"), "[[32,512],[256,512],[256]]");
	assert_string_equal(arg_raw(addmm, "Input Dims"), "[[256],[32,512],[512,256]]");
	assert_string_equal(arg_raw(addmm, "Input type"), "[\"float\",\"float\",\"float\"]");
	/* nested: the addmm inside the linear */
	assert_true(addmm->ts_ns >= linear->ts_ns);
	assert_int_equal(addmm->tid, linear->tid);

	const struct tt_event *ce = NULL, *nll_back = NULL;
	for (size_t i = 0; i < trace.n; i++) {
		if (ce == NULL && is_slice(&trace.ev[i], "aten::cross_entropy_loss"))
			ce = &trace.ev[i];
		if (nll_back == NULL && is_slice(&trace.ev[i], "aten::nll_loss_backward"))
			nll_back = &trace.ev[i];
	}
	assert_non_null(ce);
	assert_non_null(nll_back);
	assert_string_equal(arg_raw(ce, "Input type"), "[\"float\",\"long\"]");
	/* a scalar input has the shape [] */
	assert_string_equal(arg_raw(nll_back, "Input Dims"), "[[],[32,10],[32]]");

	assert_int_equal(count_slices("train step"), TRAINING_STEPS);
	assert_int_equal(count_slices("forward"), TRAINING_STEPS);
	assert_int_equal(count_slices("backward"), TRAINING_STEPS);
	assert_int_equal(count_slices("optimizer step"), TRAINING_STEPS);
	assert_int_equal(count_slices("aten::linear"), 2 * TRAINING_STEPS);
	assert_int_equal(count_slices("AddmmBackward0"), 2 * TRAINING_STEPS);
	assert_int_equal(count_slices("aten::add_"), 4 * TRAINING_STEPS);
}

static void counters_come_once_per_step(void)
{
	static const char *const step_time[] = {"data wait", "forward", "backward", "optimizer"};
	double first_loss = 0, last_loss = 0;
	size_t losses = 0;

	for (size_t i = 0; i < trace.n; i++) {
		const struct tt_event *e = &trace.ev[i];
		if (is(e, "C", "loss")) {
			last_loss = arg_number(e, "loss");
			if (losses++ == 0)
				first_loss = last_loss;
		} else if (is(e, "C", "learning rate")) {
			double lr = arg_number(e, "lr");
			assert_true(lr > 0 && lr <= 0.05);
		} else if (is(e, "C", "throughput")) {
			assert_true(arg_number(e, "tokens/s") > 0);
		} else if (is(e, "C", "step time (ms)")) {
			assert_int_equal(e->nargs, 4);
			for (int k = 0; k < 4; k++)
				assert_true(arg_number(e, step_time[k]) >= 0);
		}
	}
	assert_int_equal(losses, TRAINING_STEPS);
	assert_int_equal(count("C", "learning rate"), TRAINING_STEPS);
	assert_int_equal(count("C", "throughput"), TRAINING_STEPS);
	assert_int_equal(count("C", "step time (ms)"), TRAINING_STEPS);
	/* it learns: from about ln(10), chance for ten classes, downwards */
	assert_true(first_loss > 2.0 && first_loss < 2.6);
	assert_true(last_loss < first_loss);
}

static void checkpoints_are_global_instants(void)
{
	static const int64_t steps[CHECKPOINTS] = {4, TRAINING_STEPS};
	size_t n = 0;

	for (size_t i = 0; i < trace.n; i++) {
		const struct tt_event *e = &trace.ev[i];
		if (!is(e, "i", "checkpoint"))
			continue;
		assert_true(n < CHECKPOINTS);
		assert_string_equal(e->scope, "g");
		assert_string_equal(e->cat, "io");
		assert_int_equal(tu_arg_int(e, "step"), steps[n]);
		n++;
	}
	assert_int_equal(n, CHECKPOINTS);
}

/* One begin and one end per batch, matching on (cat, id, name), the end after the
 * begin; the loader's "ready" instant in between. */
static void prefetches_are_async_spans_that_pair_up(void)
{
	int64_t main_tid = trace.ev[0].tid;
	size_t begins = 0;

	for (size_t i = 0; i < trace.n; i++) {
		const struct tt_event *b = &trace.ev[i];
		if (!is(b, "b", "prefetch"))
			continue;
		assert_string_equal(b->cat, "dataloader");
		assert_int_equal(b->tid, main_tid);
		const struct tt_event *e = NULL, *n = NULL;
		for (size_t j = 0; j < trace.n; j++) {
			const struct tt_event *x = &trace.ev[j];
			if (!tu_is(x->name, "prefetch") || !tu_is(x->cat, b->cat) ||
			    !tu_is(x->id, b->id))
				continue;
			if (strcmp(x->ph, "e") == 0) {
				assert_null(e);
				e = x;
			} else if (strcmp(x->ph, "n") == 0) {
				assert_null(n);
				n = x;
			}
		}
		if (e == NULL)
			fail_msg("line %zu: prefetch %s never ends", b->line, b->id);
		assert_non_null(n);
		assert_true(n->tid != main_tid); /* marked by the loader */
		assert_true(b->ts_ns <= n->ts_ns);
		assert_true(b->ts_ns <= e->ts_ns);
		begins++;
	}
	assert_int_equal(begins, TRAINING_STEPS);
	assert_int_equal(count("e", "prefetch"), TRAINING_STEPS);
}

static void workers_are_named_ordered_and_linked(void)
{
	static const char *const names[] = {"main", "data loader", "gradient all-reduce"};
	int64_t pid = trace.ev[0].pid;
	int64_t tids[3];

	for (int i = 0; i < 3; i++) {
		tids[i] = tid_named(pid, names[i]);
		if (tids[i] < 0)
			fail_msg("no thread named \"%s\"", names[i]);
		const struct tt_event *s =
			meta("thread_sort_index", pid, tids[i], "sort_index", NULL);
		assert_non_null(s);
		assert_int_equal(tt_arg(s, "sort_index")->i, i);
	}
	assert_int_equal(tids[0], pid);
	const struct tt_event *label = meta("process_labels", pid, -1, "labels", NULL);
	assert_non_null(label);
	assert_non_null(strstr(tt_arg(label, "labels")->s, "rank 0"));

	/* each gradient bucket: handed off on main, reduced on the all-reduce thread */
	size_t flows = 0;
	for (size_t i = 0; i < trace.n; i++) {
		const struct tt_event *s = &trace.ev[i];
		if (!is(s, "s", "gradient bucket"))
			continue;
		assert_int_equal(s->tid, tids[0]);
		const struct tt_event *f = NULL;
		for (size_t j = 0; j < trace.n; j++)
			if (is(&trace.ev[j], "f", "gradient bucket") &&
			    tu_is(trace.ev[j].id, s->id))
				f = &trace.ev[j];
		assert_non_null(f);
		assert_int_equal(f->tid, tids[2]);
		assert_string_equal(f->bp, "e");
		flows++;
	}
	assert_int_equal(flows, 2 * TRAINING_STEPS);
	assert_int_equal(count_slices("all_reduce"), 2 * TRAINING_STEPS);
	assert_int_equal(count_slices("load batch"), TRAINING_STEPS);
}

static void training_step_shows_operators_counters_checkpoints_and_workers(void **state)
{
	(void)state;
#ifndef RTR_EXAMPLE_TRAINING_STEP
	skip();
#else
	char arg[16];

	snprintf(arg, sizeof(arg), "%d", TRAINING_STEPS);
	run_example(RTR_EXAMPLE_TRAINING_STEP, arg, "training");
	operators_carry_shapes_and_dtypes();
	counters_come_once_per_step();
	checkpoints_are_global_instants();
	prefetches_are_async_spans_that_pair_up();
	workers_are_named_ordered_and_linked();
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(gpu_timeline_shows_launches_lanes_flows_and_memory,
					  teardown),
		cmocka_unit_test_teardown(
			training_step_shows_operators_counters_checkpoints_and_workers, teardown),
	};

	tu_filter_from_env();
	return cmocka_run_group_tests_name("examples", tests, NULL, NULL);
}
