/* SPDX-License-Identifier: MIT */
/* Clock selection and TSC calibration. See clock.h. */
#include "clock.h"

#include "common/atomic.h"
#include <ringtrace.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

RTR_API int rtr__clock_is_tsc;
struct rtr__clock rtr__clock_current = {RTR_CLOCK_MONOTONIC, 0, 0, 0};

uint64_t rtr__mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t rtr__real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

RTR_API uint64_t rtr__ticks_slow(void)
{
	return rtr__mono_ns();
}

RTR_API uint64_t rtr_now_ns(void)
{
	return rtr__clock_ns(&rtr__clock_current, rtr__ticks());
}

static int file_has_word(const char *path, const char *word)
{
	FILE *f = fopen(path, "re");
	char line[4096];
	int found = 0;

	if (f == NULL)
		return 0;
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		for (char *tok = strtok(line, " \t\n:"); tok != NULL; tok = strtok(NULL, " \t\n:"))
			if (strcmp(tok, word) == 0)
				found = 1;
	}
	fclose(f);
	return found;
}

int rtr__tsc_trusted(void)
{
#if defined(__x86_64__)
	return file_has_word("/sys/devices/system/clocksource/clocksource0/current_clocksource",
			     "tsc") &&
	       file_has_word("/proc/cpuinfo", "constant_tsc") &&
	       file_has_word("/proc/cpuinfo", "nonstop_tsc");
#else
	return 0;
#endif
}

#if defined(__x86_64__)
static uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/* A (ticks, ns) pair taken as close together as the machine allows. */
static void sample(uint64_t *ticks, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 8; i++) {
		uint64_t t0 = rdtsc();
		uint64_t n = rtr__mono_ns();
		uint64_t t1 = rdtsc();
		if (i == 0 || t1 - t0 < best) {
			best = t1 - t0;
			*ticks = t0 + (t1 - t0) / 2;
			*ns = n;
		}
	}
}
#endif

void rtr__clock_setup(struct rtr__clock *c, int requested)
{
	memset(c, 0, sizeof(*c));
	c->kind = RTR_CLOCK_MONOTONIC;
#if defined(__x86_64__)
	int want_tsc =
		requested == RTR_CLOCK_TSC || (requested == RTR_CLOCK_AUTO && rtr__tsc_trusted());
	if (want_tsc && file_has_word("/proc/cpuinfo", "constant_tsc")) {
		uint64_t t0, n0, t1, n1;
		struct timespec pause = {0, 10 * 1000 * 1000};

		sample(&t0, &n0);
		nanosleep(&pause, NULL);
		sample(&t1, &n1);
		if (t1 > t0 && n1 > n0) {
			c->kind = RTR_CLOCK_TSC;
			c->base_ticks = t1;
			c->base_ns = n1;
			c->ns_per_tick32 =
				(uint64_t)(((unsigned __int128)(n1 - n0) << 32) / (t1 - t0));
		}
	}
#else
	(void)requested;
#endif
	/* published to producers by R0 in rtr_start(), which follows */
	rtr_atomic_store_relaxed(&rtr__clock_is_tsc, c->kind == RTR_CLOCK_TSC);
}
