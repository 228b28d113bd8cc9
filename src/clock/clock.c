/* SPDX-License-Identifier: MIT */
/* Clock selection and TSC calibration. See clock.h. */
#include "clock/clock.h"

#include "common/atomic.h"
#include <ringtrace.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

RTR_API int rtr__clock_is_tsc;

/*
 * The clock of rtr_now_ns(): the newest segment, in one of four slots that the
 * publisher (rtr_start(), then the writer about once a second; never two at once:
 * the writer runs between them) fills in turn. A reader takes the slot of the
 * generation it reads and checks afterwards that the publisher has not come round
 * to that slot again (three publications later), so it never waits for a
 * publisher, which makes rtr_now_ns() safe in a signal handler, and never sees
 * the fields of two publications mixed. The fields are relaxed atomics: a reader
 * may read a slot while it is rewritten, and then retries.
 */
struct now_slot {
	int kind;
	uint64_t ticks, ns, ns_per_tick32;
};
static struct now_slot now_slots[4] = {{RTR_CLOCK_MONOTONIC, 0, 0, 0}};
static uint32_t now_gen; /* the generation published last; its slot is now_gen & 3 */
/* The largest value rtr_now_ns() returned on this thread. Per thread, not shared: a
 * shared maximum is a compare-and-swap on one cache line in every call from every
 * thread (it cost 5 ns more per call on one thread, and bounces the line between
 * threads that read the clock). */
static __thread uint64_t now_last __attribute__((tls_model("initial-exec")));
/* RINGTRACE_CLOCK_OFFSET_NS (clock.h), set by rtr__clock_setup() before it publishes;
 * relaxed: a thread that reads the clock while rtr_start() sets it sees the old or
 * the new offset, and in practice both are the same (the environment's value). */
static int64_t clock_offset;

static uint64_t raw_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t rtr__mono_ns(void)
{
	return raw_mono_ns() + (uint64_t)rtr_atomic_load_relaxed(&clock_offset);
}

uint64_t rtr__real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec +
	       (uint64_t)rtr_atomic_load_relaxed(&clock_offset);
}

/* Raw ticks: the offset is added where they become ns (rtr__clock_ns()). */
RTR_API uint64_t rtr__ticks_slow(void)
{
	return raw_mono_ns();
}

#if defined(__x86_64__)
static uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}
#endif

void rtr__clock_publish(const struct rtr__clock *c)
{
	/* relaxed: only the publisher stores it (see now_slots) */
	uint32_t gen = rtr_atomic_load_relaxed(&now_gen) + 1;
	struct now_slot *s = &now_slots[gen & 3];

	/* R1': the store of generation gen - 1 is visible before any byte of this
	 * slot's new fields: a reader that reads one of them (A1' in rtr_now_ns())
	 * then sees gen - 1 at least, and retries */
	rtr_atomic_fence_release();
	rtr_atomic_store_relaxed(&s->kind, c->kind);
	rtr_atomic_store_relaxed(&s->ticks, c->base_ticks);
	rtr_atomic_store_relaxed(&s->ns, c->base_ns);
	rtr_atomic_store_relaxed(&s->ns_per_tick32, c->ns_per_tick32);
	/* R1: pairs with A1 in rtr_now_ns(); the slot's fields are set */
	rtr_atomic_store_release(&now_gen, gen);
}

RTR_API uint64_t rtr_now_ns(void)
{
	uint64_t ns;

	for (;;) {
		/* A1: pairs with R1 in rtr__clock_publish(); the slot's fields are set */
		uint32_t gen = rtr_atomic_load_acquire(&now_gen);
		const struct now_slot *s = &now_slots[gen & 3];
		int kind = rtr_atomic_load_relaxed(&s->kind);
		uint64_t ticks = rtr_atomic_load_relaxed(&s->ticks);
		uint64_t base = rtr_atomic_load_relaxed(&s->ns);
		uint64_t rate = rtr_atomic_load_relaxed(&s->ns_per_tick32);
#if defined(__x86_64__)
		if (kind == RTR_CLOCK_TSC)
			ns = rtr__clock_seg_ns(ticks, base, rate, rdtsc());
		else
#endif
			ns = rtr__mono_ns();
		/* A1': pairs with R1' in rtr__clock_publish(); the fields were read
		 * before the generation is read again */
		rtr_atomic_fence_acquire();
		/* relaxed: ordered by the fence above */
		if (rtr_atomic_load_relaxed(&now_gen) - gen <= 2)
			break; /* the slot was not rewritten while we read it */
	}
	/*
	 * Never below a value this thread had before: a restart recalibrates or
	 * switches clocks, and a new segment may start a little lower than the old line
	 * had reached by the time a reader used it. (Across threads, values ordered by
	 * happens-before may step back by that much once, at such a restart: the
	 * calibration's error, microseconds at most.)
	 */
	if (ns < now_last)
		return now_last;
	now_last = ns;
	return ns;
}

RTR_API uint64_t rtr__ns_ticks(uint64_t ns)
{
	/* A1: pairs with R1 in rtr__clock_publish(); a torn read of a slot being
	 * rewritten gives a rate of a neighbouring segment, as good for a threshold */
	uint32_t gen = rtr_atomic_load_acquire(&now_gen);
	const struct now_slot *s = &now_slots[gen & 3];
	uint64_t rate = rtr_atomic_load_relaxed(&s->ns_per_tick32);

	if (rtr_atomic_load_relaxed(&s->kind) != RTR_CLOCK_TSC || rate == 0)
		return ns;
	/* ticks = ns * 2^32 / rate, without overflow for any ns below an hour or so */
	unsigned __int128 t = ((unsigned __int128)ns << 32) / rate;
	return t > UINT64_MAX ? UINT64_MAX : (uint64_t)t;
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
/* rdtsc after every earlier instruction: a pair taken by the writer is later than
 * the ticks of every record it has read (see rtr__clock_add_pair()). */
static uint64_t rdtsc_ordered(void)
{
	__asm__ __volatile__("lfence" ::: "memory");
	return rdtsc();
}

/* A (ticks, ns) pair taken as close together as the machine allows. */
static void sample(uint64_t *ticks, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 8; i++) {
		uint64_t t0 = rdtsc_ordered();
		uint64_t n = rtr__mono_ns();
		uint64_t t1 = rdtsc_ordered();
		if (i == 0 || t1 - t0 < best) {
			best = t1 - t0;
			*ticks = t0 + (t1 - t0) / 2;
			*ns = n;
		}
	}
}
#endif

void rtr__clock_setup(struct rtr__clock *c, int requested, int64_t offset_ns)
{
	memset(c, 0, sizeof(*c));
	c->kind = RTR_CLOCK_MONOTONIC;
	c->offset_ns = offset_ns;
	rtr_atomic_store_relaxed(&clock_offset, c->offset_ns); /* before sample() reads it */
#if defined(__x86_64__)
	int want_tsc =
		requested == RTR_CLOCK_TSC || (requested == RTR_CLOCK_AUTO && rtr__tsc_trusted());
	if (want_tsc && file_has_word("/proc/cpuinfo", "constant_tsc")) {
		uint64_t t0, n0, t1, n1;
		struct timespec pause = {0, 10 * 1000 * 1000};

		sample(&t0, &n0);
		nanosleep(&pause, NULL);
		sample(&t1, &n1);
		if (t1 > t0 && n1 > n0)
			rtr__clock_init_pairs(c, t0, n0, t1, n1);
	}
#else
	(void)requested;
#endif
	/* published to producers by R0 in rtr_start(), which follows */
	rtr_atomic_store_relaxed(&rtr__clock_is_tsc, c->kind == RTR_CLOCK_TSC);
}

/* The first re-pair comes soon, as the 10 ms calibration is the least precise; then
 * one a second. */
#define REPAIR_FIRST_NS (100 * 1000 * 1000u)
#define REPAIR_NS	(1000 * 1000 * 1000u)

static uint64_t rate32(uint64_t dns, uint64_t dticks)
{
	return (uint64_t)(((unsigned __int128)dns << 32) / dticks);
}

static void push_seg(struct rtr__clock *c, uint64_t ticks, uint64_t ns, uint64_t ns_per_tick32)
{
	struct rtr__clock_seg *s;

	if (c->nsegs < RTR__CLOCK_SEGS) {
		s = &c->seg[(c->first + c->nsegs++) % RTR__CLOCK_SEGS];
	} else { /* the oldest goes */
		s = &c->seg[c->first];
		c->first = (c->first + 1) % RTR__CLOCK_SEGS;
	}
	s->ticks = c->base_ticks = ticks;
	s->ns = c->base_ns = ns;
	s->ns_per_tick32 = c->ns_per_tick32 = ns_per_tick32;
}

void rtr__clock_init_pairs(struct rtr__clock *c, uint64_t t0, uint64_t n0, uint64_t t1, uint64_t n1)
{
	c->kind = RTR_CLOCK_TSC;
	c->nsegs = c->first = 0;
	push_seg(c, t1, n1, rate32(n1 - n0, t1 - t0));
	c->pair_ticks = t1;
	c->pair_ns = n1;
	c->repair_ns = n1 + REPAIR_FIRST_NS;
}

void rtr__clock_add_pair(struct rtr__clock *c, uint64_t ticks, uint64_t ns)
{
	if (c->kind != RTR_CLOCK_TSC || ticks <= c->pair_ticks || ns <= c->pair_ns)
		return; /* not later than the last pair on both clocks: no rate from it */
	uint64_t dticks = ticks - c->pair_ticks, dns = ns - c->pair_ns;
	uint64_t reached = rtr__clock_seg_ns(c->base_ticks, c->base_ns, c->ns_per_tick32, ticks);

	if (reached <= ns) {
		push_seg(c, ticks, ns, rate32(dns, dticks)); /* exact at the pair */
	} else {
		/* ahead by lead: start where the line is and take the lead back over the
		 * next interval of the same length, at most half of it */
		uint64_t lead = reached - ns;
		if (lead > dns / 2)
			lead = dns / 2;
		push_seg(c, ticks, reached, rate32(dns - lead, dticks));
	}
	c->pair_ticks = ticks;
	c->pair_ns = ns;
}

void rtr__clock_repair(struct rtr__clock *c, uint64_t now_ns)
{
#if defined(__x86_64__)
	uint64_t ticks, ns;

	if (c->kind != RTR_CLOCK_TSC || now_ns < c->repair_ns)
		return;
	sample(&ticks, &ns);
	rtr__clock_add_pair(c, ticks, ns);
	c->repair_ns = ns + REPAIR_NS;
	rtr__clock_publish(c);
#else
	(void)c;
	(void)now_ns;
#endif
}

uint64_t rtr__clock_ns_past(const struct rtr__clock *c, uint64_t ticks)
{
	/* the newest segment that starts at or below ticks, else the oldest: binary
	 * search over the ring of segments in order */
	uint32_t lo = 0, hi = c->nsegs; /* the answer is in [lo, hi) */

	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct rtr__clock_seg *s = &c->seg[(c->first + mid) % RTR__CLOCK_SEGS];
		if ((int64_t)(ticks - s->ticks) >= 0)
			lo = mid;
		else
			hi = mid;
	}
	const struct rtr__clock_seg *s = &c->seg[(c->first + lo) % RTR__CLOCK_SEGS];
	return rtr__clock_seg_ns(s->ticks, s->ns, s->ns_per_tick32, ticks);
}
