/* SPDX-License-Identifier: MIT */
/*
 * Cost of an NVTX push/pop pair through libringtrace-nvtx against a bare span, in one
 * run:
 *
 *	plain	an empty loop body: the loop's own cost, subtracted below
 *	span	rtr_begin() + rtr_end() (the bare span, a static name)
 *	nvtx	nvtxRangePushA("span") + nvtxRangePop(), called through the slots the
 *		injection library filled, as a program's NVTX header calls them
 *	ex	nvtxRangePushEx (ASCII message, color, category, i64 payload) + pop
 *	args	rtr_begin_args() with the three arguments ex records + rtr_end()
 *
 *	NVTX_INJECTION64_PATH=build/release/libringtrace-nvtx.so bench_nvtx [N] [REPS]
 *
 * The recorder runs in drop mode with a ring that holds two repetitions' records
 * and the writer asleep (woken by a flush between repetitions), as in
 * bench/instrument.c, so the figures are the producer's cost. Prints one line: ns
 * per pair of each (the median of REPS, minus plain's), the ratios nvtx/span and
 * ex/args, and the events dropped (0 expected).
 */
#define _GNU_SOURCE
#include <ringtrace.h>

#include "warm_ring.h"

#include "nvtx/nvtx_abi.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static rtr_nvtx_fn core[RTR_NVTX_CORE_SLOTS];
static rtr_nvtx_fn *core_table[RTR_NVTX_CORE_SLOTS];

static int get_module(int module, rtr_nvtx_table *out, unsigned int *size)
{
	if (module != RTR_NVTX_MODULE_CORE)
		return 0;
	for (unsigned i = 1; i < RTR_NVTX_CORE_SLOTS; i++)
		core_table[i] = &core[i];
	*out = core_table;
	*size = RTR_NVTX_CORE_SLOTS;
	return 1;
}

static const struct rtr_nvtx_callbacks_table callbacks = {sizeof(callbacks), get_module};

static const void *get_export_table(uint32_t id)
{
	return id == RTR_NVTX_ETID_CALLBACKS ? &callbacks : NULL;
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double run(int which, long n)
{
	int (*push_a)(const char *) =
		(int (*)(const char *))(void (*)(void))core[RTR_NVTX_CORE_RANGE_PUSH_A];
	int (*push_ex)(const struct rtr_nvtx_attributes *) =
		(int (*)(const struct rtr_nvtx_attributes *))(
			void (*)(void))core[RTR_NVTX_CORE_RANGE_PUSH_EX];
	int (*pop)(void) = (int (*)(void))(void (*)(void))core[RTR_NVTX_CORE_RANGE_POP];
	struct rtr_nvtx_attributes a;
	memset(&a, 0, sizeof(a));
	a.version = 3;
	a.size = (uint16_t)sizeof(a);
	a.color_type = RTR_NVTX_COLOR_ARGB;
	a.color = 0xff0000ffu;
	a.category = 3;
	a.payload_type = RTR_NVTX_PAYLOAD_I64;
	a.message_type = RTR_NVTX_MESSAGE_ASCII;
	a.message.ascii = "span";
	double t0 = now_ns();
	for (long i = 0; i < n; i++) {
		__asm__ volatile("" ::: "memory");
		if (which == 1) {
			rtr_begin("bench", "span");
			rtr_end("bench", "span");
		} else if (which == 2) {
			push_a("span");
			pop();
		} else if (which == 3) {
			a.payload.i64 = i;
			push_ex(&a);
			pop();
		} else if (which == 4) {
			struct rtr_arg args[3] = {RTR_ARG_U64("color", 0xff0000ffu),
						  RTR_ARG_U64("category", 3),
						  RTR_ARG_I64("payload", i)};
			rtr_begin_args("bench", "span", args, 3);
			rtr_end("bench", "span");
		}
	}
	return (now_ns() - t0) / (double)n;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	int reps = argc > 2 ? atoi(argv[2]) : 9;
	const char *lib_path = getenv("NVTX_INJECTION64_PATH");
	struct rtr_config cfg;
	struct rtr_stats st;

	if (reps < 1 || reps > 99 || lib_path == NULL) {
		fprintf(stderr, "usage: NVTX_INJECTION64_PATH=libringtrace-nvtx.so %s [N] [REPS]\n",
			argv[0]);
		return 2;
	}
	void *lib = dlopen(lib_path, RTLD_NOW);
	int (*init)(rtr_nvtx_get_export_table_fn) =
		lib != NULL ? (int (*)(rtr_nvtx_get_export_table_fn))dlsym(
				      lib, "InitializeInjectionNvtx2")
			    : NULL;
	if (init == NULL || init(get_export_table) != 1 || core[RTR_NVTX_CORE_RANGE_POP] == NULL) {
		fprintf(stderr, "bench_nvtx: %s does not attach\n", lib_path);
		return 1;
	}
	setenv("RINGTRACE_RING_KB", "131072", 0); /* two repetitions' records */
	setenv("RINGTRACE_FLUSH_MS", "60000", 0); /* the writer sleeps while we measure */
	rtr_config_init(&cfg);
	if (getenv("RINGTRACE_FILE") == NULL)
		cfg.path = "/tmp/bench-nvtx-%p.json";
	if (rtr_start(&cfg) != 0)
		return 1;
	bench_warm_ring(); /* the timed runs on touched pages */
	double ns[5][99];
	for (int r = 0; r < reps; r++) {
		for (int w = 0; w < 5; w++) {
			ns[w][r] = run(w, n);
			rtr_flush();
		}
	}
	double med[5];
	for (int w = 0; w < 5; w++) {
		qsort(ns[w], (size_t)reps, sizeof(double), cmp_double);
		med[w] = ns[w][reps / 2];
	}
	rtr_stats_get(&st);
	rtr_stop();
	double span = med[1] - med[0], nvtx = med[2] - med[0], ex = med[3] - med[0];
	double args = med[4] - med[0];
	printf("pairs=%ld plain_ns=%.2f span_ns=%.2f nvtx_ns=%.2f args_ns=%.2f ex_ns=%.2f "
	       "nvtx/span=%.2f ex/args=%.2f dropped=%llu\n",
	       n, med[0], span, nvtx, args, ex, nvtx / span, ex / args,
	       (unsigned long long)st.events_dropped);
	if (getenv("RTR_BENCH_KEEP") == NULL)
		remove(rtr_trace_path());
	return 0;
}
