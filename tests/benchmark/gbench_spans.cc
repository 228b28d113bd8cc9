// SPDX-License-Identifier: MIT
// A Google Benchmark program recorded through <ringtrace/benchmark.hpp> (docs/benchmark.md):
// spans of known names in its benchmarks, one of them nested, one benchmark without
// spans. check_gbench.py runs it and reads its trace and its JSON output back.
#include <ringtrace/benchmark.hpp>

#include <cstring>
#include <vector>

static void BM_copy(::benchmark::State &state)
{
	std::vector<char> from(static_cast<std::size_t>(state.range(0)), 'x');
	std::vector<char> to(from.size());
	for (auto _ : state) {
		RINGTRACE_SCOPE("app", "step");
		{
			RINGTRACE_SCOPE("app", "copy");
			std::memcpy(to.data(), from.data(), from.size());
		}
		::benchmark::DoNotOptimize(to.data());
	}
}
BENCHMARK(BM_copy)->Arg(8)->Arg(64);

static void BM_sum(::benchmark::State &state)
{
	for (auto _ : state) {
		RINGTRACE_SCOPE("app", "sum");
		long s = 0;
		for (long i = 0; i < state.range(0); i++)
			s += i;
		::benchmark::DoNotOptimize(s);
	}
}
BENCHMARK(BM_sum)->Arg(16);

static void BM_plain(::benchmark::State &state)
{
	for (auto _ : state) {
		int x = 1;
		::benchmark::DoNotOptimize(x);
	}
}
BENCHMARK(BM_plain);

RINGTRACE_BENCHMARK_MAIN();
