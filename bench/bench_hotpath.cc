/* SPDX-License-Identifier: MIT */
/*
 * Hot path: what one event call costs the thread that makes it, with the recorder
 * running and its writer draining to a real file. Google Benchmark over the C API.
 *
 *	bench_hotpath --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
 *
 * Method. A drop-mode recorder with 8 MiB rings writes to /tmp/ringtrace-bench.json
 * (RINGTRACE_FILE, RINGTRACE_RING_KB and RINGTRACE_CLOCK apply). One benchmark
 * iteration is one burst of kBurst events on each thread, timed with CLOCK_MONOTONIC
 * around the burst alone. Then, untimed, the threads meet at a barrier, one of them
 * calls rtr_flush() so that the writer drains every ring into the file, and they meet
 * again. Timing is manual (UseManualTime + SetIterationTime): the flushes, barriers
 * and warm-up never count, and nothing is paused inside the timed loop (PauseTiming
 * costs more than the event). A burst fills at most 8 Ki of the ring's 256 Ki records,
 * far below the high-water mark, so the producer never waits for the writer or wakes
 * it: the figure is the hot path, not the writer's pace (bursts with the consumer
 * draining between them, as quill and NanoLog measure). The writer's sustained rate is
 * bench_e2e's figure. The writer still wakes on its flush timer, and it can run during
 * a burst. Two clock reads per burst add about 0.03 ns to each event.
 *
 * Warm rings. Ring memory is mapped lazily, so a ring's first lap would pay a page
 * fault every 128 records. Each thread writes one full lap, untimed, before its first
 * timed burst: the main thread once in main() (a thread keeps its ring across
 * restarts of the recorder), the extra threads of a threads:2 benchmark, which Google
 * Benchmark creates anew for every run, at the start of each run. Every run also
 * begins with one untimed burst of the call under test.
 *
 * Sessions. Setup restarts the recorder before every run of an event benchmark, so
 * the file holds one run (20 to 60 MB) rather than the whole suite (about 0.9 GB per
 * repetition), and each session's written + dropped = recorded is checked when it
 * stops. The stopped-recorder benchmarks run after rtr_stop(). The category filter's
 * benchmarks run in sessions that record only kFilterList: `instant_filtered_out` and
 * `RTR_SCOPE_filtered_out` call with a category it leaves out (nothing may be
 * recorded), `instant_filter_on_passing` with one it keeps; compare them with
 * `event/instant` and `event/RTR_SCOPE`, which run with no list. At the end, a line on
 * stderr sums every session, and the exit status is 1 if anything was dropped.
 *
 * Columns. `ns_per_event` is the cost of one event to the thread that records it: the
 * median over the run's bursts of burst time / kBurst (robust to the preemptions of a
 * shared VM), averaged over threads. `x_clock` is ns_per_event divided by one
 * rtr_now_ns(), the recorder's clock read, measured at startup in the same process
 * (median of 255 loops of kBurst reads; printed in the context lines). `dropped` is
 * the events dropped during the run's bursts (rtr_stats_get before and after; a fast
 * figure with drops is not a result). `Time` is Google Benchmark's own figure from
 * the manual times: the mean per event for one thread, and for N threads that mean
 * divided by N (time per event of the whole process). The CPU column includes the
 * untimed flushes and means nothing here.
 */
#include <ringtrace.h>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

namespace
{

constexpr unsigned kBurst = 2048;	/* events per thread per timed burst */
constexpr unsigned kBursts = 128;	/* timed bursts per thread per run */
constexpr size_t kRingBytes = 8u << 20; /* 256 Ki records of 32 bytes */
constexpr const char *kPath = "/tmp/ringtrace-bench.json";

struct rtr_config g_cfg;
uint32_t g_ring_records;       /* records in one ring, as the recorder rounds it */
double g_clock_ns;	       /* one rtr_now_ns(), measured at startup */
thread_local bool t_ring_warm; /* this thread has written a full lap of its ring */

/* Sums over every recorder session, checked when each one stops. */
struct rtr_stats g_total;
unsigned g_sessions;

uint64_t now_ns()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
inline uint64_t rdtsc()
{
	uint32_t lo, hi;

	/* the same instruction as rtr__ticks() in ringtrace/emit.h */
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}
#endif

inline void cpu_relax()
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/*
 * The threads of one run meet here between bursts. Spins (the bursts of all threads
 * end within microseconds of each other), then yields so that a waiting thread does
 * not keep the writer from a core while another thread flushes.
 */
struct barrier {
	std::atomic<unsigned> arrived{0};
	std::atomic<unsigned> generation{0};

	void wait(unsigned parties)
	{
		if (parties <= 1)
			return;
		unsigned gen = generation.load(std::memory_order_acquire);
		if (arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == parties) {
			arrived.store(0, std::memory_order_relaxed);
			/* pairs with the waiters' acquire: the reset count is visible first */
			generation.store(gen + 1, std::memory_order_release);
			return;
		}
		for (unsigned spins = 0; generation.load(std::memory_order_acquire) == gen;
		     spins++) {
			if (spins < 4096)
				cpu_relax();
			else
				std::this_thread::yield();
		}
	}
};

barrier g_barrier;

/* Stop the recorder if it runs, and add its session to the totals. */
void stop_recorder()
{
	struct rtr_stats s;

	rtr_stats_get(&s);
	if (!s.running)
		return;
	int err = rtr_stop();
	rtr_stats_get(&s);
	if (err != 0)
		fprintf(stderr, "bench_hotpath: rtr_stop: %s\n", strerror(-err));
	if (s.events_written + s.events_dropped != s.events_recorded)
		fprintf(stderr,
			"bench_hotpath: session %u: written %llu + dropped %llu != recorded %llu\n",
			g_sessions, (unsigned long long)s.events_written,
			(unsigned long long)s.events_dropped,
			(unsigned long long)s.events_recorded);
	g_total.events_recorded += s.events_recorded;
	g_total.events_written += s.events_written;
	g_total.events_dropped += s.events_dropped;
	g_total.bytes_written += s.bytes_written;
	g_sessions++;
}

void start_recorder()
{
	int err = rtr_start(&g_cfg);

	if (err != 0) {
		fprintf(stderr, "bench_hotpath: rtr_start(%s): %s\n", g_cfg.path, strerror(-err));
		exit(1);
	}
}

/* Setup of every event benchmark run: a running recorder with a new, empty file. */
void setup_restart(const benchmark::State &)
{
	stop_recorder();
	start_recorder();
}

/* Setup of the clock baselines: the recorder runs (rtr_now_ns() reads its clock). */
void setup_running(const benchmark::State &)
{
	struct rtr_stats s;

	rtr_stats_get(&s);
	if (!s.running)
		start_recorder();
}

void setup_stopped(const benchmark::State &)
{
	stop_recorder();
}

/* Setup of the category filter benchmarks: a new session that records only these. */
constexpr const char *kFilterList = "app,bench,mpi";

void setup_restart_filtered(const benchmark::State &)
{
	struct rtr_config cfg = g_cfg;

	stop_recorder();
	cfg.categories = kFilterList;
	int err = rtr_start(&cfg);
	if (err != 0) {
		fprintf(stderr, "bench_hotpath: rtr_start(%s): %s\n", cfg.path, strerror(-err));
		exit(1);
	}
}

/*
 * Write one full lap of the calling thread's ring, in pieces of an eighth of it with
 * a flush after each, so that every page of the ring is mapped before timing and
 * nothing is dropped. Untimed.
 */
void warm_ring()
{
	if (t_ring_warm)
		return;
	uint32_t piece = g_ring_records / 8;
	for (uint32_t done = 0; done <= g_ring_records; done += piece) {
		for (uint32_t i = 0; i < piece; i++)
			rtr_instant("bench", "warm-up");
		rtr_flush();
	}
	t_ring_warm = true;
}

/*
 * The harness of every benchmark: `burst()` makes kBurst events (or clock reads) on
 * the calling thread. With `recording`, the recorder must run: each thread warms its
 * ring, bursts are followed by a flush, and drops are counted. `kept` false: the
 * events are calls the category filter turns away, so none may be recorded.
 */
template <typename Burst>
void run_bursts(benchmark::State &state, bool recording, Burst burst, bool kept = true)
{
	const unsigned threads = (unsigned)state.threads();
	const bool lead = state.thread_index() == 0;
	struct rtr_stats before = {}, after = {};
	std::vector<double> per_event(kBursts); /* ns per event of each burst */
	unsigned n = 0;

	if (recording) {
		warm_ring();
		burst(); /* untimed: code, branch predictors, the writer's string cache */
	}
	g_barrier.wait(threads);
	if (lead && recording)
		rtr_flush();
	if (lead)
		rtr_stats_get(&before);
	g_barrier.wait(threads);

	for (auto _ : state) {
		uint64_t t0 = now_ns();
		burst();
		uint64_t t1 = now_ns();
		double ns = (double)(t1 - t0) / kBurst;
		state.SetIterationTime(ns * 1e-9);
		if (n < kBursts)
			per_event[n++] = ns;
		g_barrier.wait(threads);
		if (lead && recording)
			rtr_flush();
		g_barrier.wait(threads);
	}

	std::sort(per_event.begin(), per_event.begin() + n);
	double ns = n > 0 ? per_event[n / 2] : 0;
	state.counters["ns_per_event"] = benchmark::Counter(ns, benchmark::Counter::kAvgThreads);
	state.counters["x_clock"] =
		benchmark::Counter(ns / g_clock_ns, benchmark::Counter::kAvgThreads);
	double dropped = 0;
	if (lead) {
		rtr_stats_get(&after);
		dropped = (double)(after.events_dropped - before.events_dropped);
		uint64_t recorded = after.events_recorded - before.events_recorded;
		uint64_t expect = recording && kept ? (uint64_t)kBurst * kBursts * threads : 0;
		if (recorded != expect) {
			char msg[96];
			snprintf(msg, sizeof(msg), "recorded %llu events, expected %llu",
				 (unsigned long long)recorded, (unsigned long long)expect);
			state.SkipWithError(msg);
		}
	}
	state.counters["dropped"] = dropped;
}

/* ---- Baselines: the clock -------------------------------------------------- */

void BM_clock_rtr_now_ns(benchmark::State &state)
{
	run_bursts(state, false, [] {
		for (unsigned i = 0; i < kBurst; i++)
			benchmark::DoNotOptimize(rtr_now_ns());
	});
}

void BM_clock_gettime_monotonic(benchmark::State &state)
{
	run_bursts(state, false, [] {
		for (unsigned i = 0; i < kBurst; i++) {
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			benchmark::DoNotOptimize(ts);
		}
	});
}

#if defined(__x86_64__)
void BM_clock_rdtsc(benchmark::State &state)
{
	run_bursts(state, false, [] {
		for (unsigned i = 0; i < kBurst; i++)
			benchmark::DoNotOptimize(rdtsc());
	});
}
#endif

/* ---- Event calls, recorder running -------------------------------------- */

void BM_scope(benchmark::State &state)
{
	run_bursts(state, true, [] {
		for (unsigned i = 0; i < kBurst; i++) {
			RTR_SCOPE("bench", "scope");
		}
	});
}

/* rtr_begin + rtr_end: two events per pair. */
void BM_begin_end(benchmark::State &state)
{
	run_bursts(state, true, [] {
		for (unsigned i = 0; i < kBurst / 2; i++) {
			rtr_begin("bench", "span");
			rtr_end("bench", "span");
		}
	});
}

void BM_instant(benchmark::State &state)
{
	run_bursts(state, true, [] {
		for (unsigned i = 0; i < kBurst; i++)
			rtr_instant("bench", "instant");
	});
}

void BM_counter_i64(benchmark::State &state)
{
	run_bursts(state, true, [] {
		for (unsigned i = 0; i < kBurst; i++)
			rtr_counter_i64("bench", "counter", (int64_t)i);
	});
}

/* Explicit times; the clock reads that produce them are the caller's. */
void BM_complete(benchmark::State &state)
{
	uint64_t ts = rtr_now_ns();

	run_bursts(state, true, [&ts] {
		for (unsigned i = 0; i < kBurst; i++)
			rtr_complete("bench", "complete", ts + i, 1000);
		ts += kBurst;
	});
}

void BM_instant_args1(benchmark::State &state)
{
	run_bursts(state, true, [] {
		for (unsigned i = 0; i < kBurst; i++) {
			struct rtr_arg args[] = {RTR_ARG_I64("i", i)};
			rtr_instant_args("bench", "args1", args, 1);
		}
	});
}

void BM_instant_args4(benchmark::State &state)
{
	run_bursts(state, true, [] {
		for (unsigned i = 0; i < kBurst; i++) {
			struct rtr_arg args[] = {RTR_ARG_I64("a", i), RTR_ARG_I64("b", i + 1),
						 RTR_ARG_I64("c", i + 2), RTR_ARG_I64("d", i + 3)};
			rtr_instant_args("bench", "args4", args, 4);
		}
	});
}

/* A name of 32 bytes made at run time, copied into the ring by every call. */
void BM_instant_copy32(benchmark::State &state)
{
	char name[33];

	snprintf(name, sizeof(name), "runtime-name-thread-%012d", state.thread_index());
	if (strlen(name) != 32)
		abort();
	run_bursts(state, true, [&name] {
		for (unsigned i = 0; i < kBurst; i++)
			rtr_instant_copy("bench", name);
	});
}

/* ---- Category filter (setup_restart_filtered: the list kFilterList) ------ */

/* A category the list leaves out: the thread's cache of decisions answers. */
void BM_instant_filtered_out(benchmark::State &state)
{
	run_bursts(
		state, true,
		[] {
			for (unsigned i = 0; i < kBurst; i++)
				rtr_instant("debug", "instant");
		},
		false);
}

/* A scope whose category the list leaves out: its call site's cached decision answers. */
void BM_scope_filtered_out(benchmark::State &state)
{
	run_bursts(
		state, true,
		[] {
			for (unsigned i = 0; i < kBurst; i++) {
				RTR_SCOPE("debug", "scope");
			}
		},
		false);
}

/* A category the list keeps: the cache answers, then the event is recorded. */
void BM_instant_filter_on_passing(benchmark::State &state)
{
	run_bursts(state, true, [] {
		for (unsigned i = 0; i < kBurst; i++)
			rtr_instant("bench", "instant");
	});
}

/* ---- Baselines: the recorder stopped ---------------------------------- */

void BM_stopped_instant(benchmark::State &state)
{
	run_bursts(state, false, [] {
		for (unsigned i = 0; i < kBurst; i++)
			rtr_instant("bench", "instant");
	});
}

void BM_stopped_scope(benchmark::State &state)
{
	run_bursts(state, false, [] {
		for (unsigned i = 0; i < kBurst; i++) {
			RTR_SCOPE("bench", "scope");
		}
	});
}

/* Common settings: fixed bursts, manual time, the given Setup. */
benchmark::internal::Benchmark *burst_bench(benchmark::internal::Benchmark *b,
					    void (*setup)(const benchmark::State &))
{
	return b->Iterations(kBursts)->UseManualTime()->Setup(setup);
}

void register_all()
{
	burst_bench(benchmark::RegisterBenchmark("clock/rtr_now_ns", BM_clock_rtr_now_ns),
		    setup_running);
	burst_bench(benchmark::RegisterBenchmark("clock/clock_gettime_monotonic",
						 BM_clock_gettime_monotonic),
		    setup_running);
#if defined(__x86_64__)
	burst_bench(benchmark::RegisterBenchmark("clock/rdtsc", BM_clock_rdtsc), setup_running);
#endif

	struct {
		const char *name;
		void (*fn)(benchmark::State &);
	} events[] = {
		{"event/RTR_SCOPE", BM_scope},
		{"event/begin_end", BM_begin_end},
		{"event/instant", BM_instant},
		{"event/counter_i64", BM_counter_i64},
		{"event/complete", BM_complete},
		{"event/instant_args_1", BM_instant_args1},
		{"event/instant_args_4", BM_instant_args4},
		{"event/instant_copy_32B", BM_instant_copy32},
	};
	for (const auto &e : events)
		burst_bench(benchmark::RegisterBenchmark(e.name, e.fn), setup_restart)
			->Threads(1)
			->Threads(2);

	struct {
		const char *name;
		void (*fn)(benchmark::State &);
	} filtered[] = {
		{"event/instant_filtered_out", BM_instant_filtered_out},
		{"event/RTR_SCOPE_filtered_out", BM_scope_filtered_out},
		{"event/instant_filter_on_passing", BM_instant_filter_on_passing},
	};
	for (const auto &e : filtered)
		burst_bench(benchmark::RegisterBenchmark(e.name, e.fn), setup_restart_filtered)
			->Threads(1)
			->Threads(2);

	burst_bench(benchmark::RegisterBenchmark("stopped/instant", BM_stopped_instant),
		    setup_stopped);
	burst_bench(benchmark::RegisterBenchmark("stopped/RTR_SCOPE", BM_stopped_scope),
		    setup_stopped);
}

/*
 * One rtr_now_ns(): the median over 255 loops of kBurst reads, timed like the bursts.
 * Short loops and the median keep a preemption on a shared machine out of the figure.
 */
double measure_clock_ns()
{
	std::vector<double> per_read(255);

	for (double &ns : per_read) {
		uint64_t t0 = now_ns();
		for (unsigned i = 0; i < kBurst; i++)
			benchmark::DoNotOptimize(rtr_now_ns());
		uint64_t t1 = now_ns();
		ns = (double)(t1 - t0) / kBurst;
	}
	std::sort(per_read.begin(), per_read.end());
	return per_read[per_read.size() / 2];
}

} // namespace

int main(int argc, char **argv)
{
	rtr_config_init(&g_cfg);
	if (getenv("RINGTRACE_FILE") == nullptr)
		g_cfg.path = kPath;
	if (getenv("RINGTRACE_RING_KB") == nullptr)
		g_cfg.ring_bytes = kRingBytes;
	g_cfg.on_full = RTR_ON_FULL_DROP;
	g_ring_records = 128; /* as rtr__rings_configure() rounds */
	while ((size_t)g_ring_records * 32 < g_cfg.ring_bytes && g_ring_records < (1u << 25))
		g_ring_records <<= 1;
	if (g_ring_records < 8 * 4 * kBurst) {
		fprintf(stderr,
			"bench_hotpath: a ring of %u records is too small for bursts of %u\n",
			g_ring_records, kBurst);
		return 1;
	}

	benchmark::Initialize(&argc, argv);
	if (benchmark::ReportUnrecognizedArguments(argc, argv))
		return 1;

	start_recorder();
	warm_ring();
	g_clock_ns = measure_clock_ns();

	struct rtr_stats s;
	rtr_stats_get(&s);
	char buf[64];
	snprintf(buf, sizeof(buf), "%.2f", g_clock_ns);
	benchmark::AddCustomContext("rtr_now_ns ns (x_clock = 1)", buf);
	benchmark::AddCustomContext("recorder clock",
				    s.clock == RTR_CLOCK_TSC ? "tsc" : "clock_monotonic");
	benchmark::AddCustomContext("recorder io", rtr_io_name(s.io_method));
	benchmark::AddCustomContext("trace file", rtr_trace_path());
	snprintf(buf, sizeof(buf), "%u records (%zu KiB), drop mode", g_ring_records,
		 (size_t)g_ring_records * 32 / 1024);
	benchmark::AddCustomContext("ring", buf);
	snprintf(buf, sizeof(buf), "%u bursts of %u events per thread per run", kBursts, kBurst);
	benchmark::AddCustomContext("timing", buf);

	register_all();
	benchmark::RunSpecifiedBenchmarks();
	benchmark::Shutdown();
	stop_recorder();

	fprintf(stderr,
		"bench_hotpath: %u sessions: recorded %llu, written %llu, dropped %llu, %llu "
		"bytes\n",
		g_sessions, (unsigned long long)g_total.events_recorded,
		(unsigned long long)g_total.events_written,
		(unsigned long long)g_total.events_dropped,
		(unsigned long long)g_total.bytes_written);
	return g_total.events_dropped != 0;
}
