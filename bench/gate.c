/* SPDX-License-Identifier: MIT */
/*
 * The benchmark behind the gate's proof (bench/gate.sh, bench/RESULTS.md): a loop of
 * work units, each four named spans of different costs (parse, compute, encode,
 * checksum), recorded with ringtrace. `--slow NAME:PCT` makes span NAME do PCT % more
 * work (more rounds of the same calibrated loop), a known slowdown to detect.
 *
 *   bench_gate [--out FILE] [--units N] [--slow NAME:PCT] [--seed N]
 */
#include <ringtrace.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The spans and their work in rounds of the loop (a round is about 1 ns). */
static struct {
	const char *name;
	double rounds;
} spans[] = {
	{"parse", 4000},
	{"compute", 30000},
	{"encode", 12000},
	{"checksum", 8000},
};
#define NSPANS (sizeof(spans) / sizeof(spans[0]))

/* A dependent chain the compiler cannot fold: one multiply-add a round. */
static uint64_t work(uint64_t x, long rounds)
{
	for (long i = 0; i < rounds; i++)
		x = x * 6364136223846793005u + (uint64_t)i;
	return x;
}

static int slow_down(const char *arg)
{
	const char *colon = strchr(arg, ':');
	char *end;
	double pct;

	if (colon == NULL)
		return -1;
	pct = strtod(colon + 1, &end);
	if (*end != '\0' || pct < 0)
		return -1;
	for (size_t i = 0; i < NSPANS; i++) {
		if (strlen(spans[i].name) == (size_t)(colon - arg) &&
		    strncmp(spans[i].name, arg, (size_t)(colon - arg)) == 0) {
			spans[i].rounds *= 1 + pct / 100;
			return 0;
		}
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct rtr_config cfg;
	long units = 2000;
	uint64_t x = 1;
	int err;

	rtr_config_init(&cfg);
	cfg.path = "gate.json";
	cfg.on_full = RTR_ON_FULL_BLOCK;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--out") == 0) {
			cfg.path = argv[i + 1];
		} else if (strcmp(argv[i], "--units") == 0) {
			units = atol(argv[i + 1]);
		} else if (strcmp(argv[i], "--seed") == 0) {
			x = strtoull(argv[i + 1], NULL, 10) | 1;
		} else if (strcmp(argv[i], "--slow") == 0) {
			if (slow_down(argv[i + 1]) != 0) {
				fprintf(stderr, "bench_gate: --slow wants NAME:PCT, NAME one of "
						"parse, compute, encode, checksum\n");
				return 2;
			}
		} else {
			fprintf(stderr, "bench_gate: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	if (units < 1) {
		fprintf(stderr, "bench_gate: --units wants a positive number\n");
		return 2;
	}
	err = rtr_start(&cfg);
	if (err != 0) {
		fprintf(stderr, "bench_gate: rtr_start failed (%d)\n", err);
		return 1;
	}
	rtr_begin("gate", "setup");
	x = work(x, 100000);
	rtr_end("gate", "setup");
	for (long u = 0; u < units; u++) {
		rtr_begin("gate", "unit");
		for (size_t s = 0; s < NSPANS; s++) {
			rtr_begin("gate", spans[s].name);
			x = work(x, (long)spans[s].rounds);
			rtr_end("gate", spans[s].name);
		}
		rtr_end("gate", "unit");
	}
	err = rtr_stop();
	/* the result, so that the work is not dead code */
	if (getenv("BENCH_GATE_VERBOSE") != NULL)
		printf("%llx\n", (unsigned long long)x);
	return err != 0;
}
