/* SPDX-License-Identifier: MIT */
/*
 * ringtrace/benchmark.hpp — Google Benchmark programs recorded by ringtrace
 * (docs/benchmark.md). One line in place of BENCHMARK_MAIN():
 *
 *	#include <ringtrace/benchmark.hpp>
 *	RINGTRACE_BENCHMARK_MAIN();
 *
 * or, in a program's own main:
 *
 *	ringtrace::benchmark::initialize(&argc, argv);   // before benchmark::Initialize's flags
 *	if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
 *	ringtrace::benchmark::run_specified_benchmarks(); // for benchmark::RunSpecifiedBenchmarks()
 *	ringtrace::benchmark::shutdown();                 // rtr_stop(), benchmark::Shutdown()
 *
 * `--ringtrace=FILE` (taken out of argv before Google Benchmark sees it) starts the
 * recorder on FILE with its profile beside it (RINGTRACE_PROFILE=1); without it, a
 * RINGTRACE_FILE in the environment does the same, and with neither nothing is recorded
 * and the output is Google Benchmark's own. Each benchmark is then a slice (category
 * "benchmark", named as Google Benchmark names it: BM_copy/64) from the end of the
 * previous benchmark's report to its own report, so the program's spans of its runs
 * (setup, the runs that size the iteration count, the timed runs) nest in it, with its
 * arguments, iterations, real and cpu time as arguments. Each call path inside it gives
 * user counters in Google Benchmark's output (console and JSON, on stdout and in
 * --benchmark_out; a CSV file is Google Benchmark's own, without them):
 * `NAME.n` (spans), `NAME.p50_ns`, `NAME.p99_ns`, NAME the span's name (a nested
 * span's path joined by '>').
 *
 * Nothing runs inside the timed iterations but the program's own spans: the slice is
 * recorded and the profile read (rtr_profile_walk()) when Google Benchmark reports.
 * Google Benchmark >= 1.9: define RINGTRACE_BENCHMARK_PROFILER_MANAGER before including
 * this header to have its extra untimed profiling pass marked too (a slice "profiling
 * pass" inside the benchmark's). Needs C++17 and <benchmark/benchmark.h>.
 */
#ifndef RINGTRACE_BENCHMARK_HPP
#define RINGTRACE_BENCHMARK_HPP

#include <benchmark/benchmark.h>
#include <ringtrace.hpp>

#include <cstdlib>
#include <cstring>
#include <forward_list>
#include <memory>
#include <string>
#include <vector>

namespace ringtrace
{
namespace benchmark
{
namespace detail
{

/* One call path of the profile, as rtr_profile_walk() gives it. */
struct path_stats {
	unsigned depth;
	std::string name;
	uint64_t count, p50_ns, p99_ns;
};

inline int keep_node(const rtr_profile_node *nd, void *user)
{
	static_cast<std::vector<path_stats> *>(user)->push_back(
		{nd->depth, nd->name, nd->count, nd->p50_ns, nd->p99_ns});
	return 0;
}

/* What the reporters share: the slice's begin, the names recorded (kept by pointer
 * until the process ends, as the writer reads them later), the runs last augmented. */
struct state {
	bool recording = false, started_here = false;
	uint64_t since_ns = 0;
	std::forward_list<std::string> names;
	uint64_t dropped = 0;	/* rtr_stats' events_dropped at the last report */
	std::string last_slice; /* the benchmark whose slice was recorded last */
	const void *last_in = nullptr;
	std::vector<::benchmark::BenchmarkReporter::Run> last_out;
	std::string out_path, out_format = "json";
};

inline state &the_state()
{
	static state *s = new state; /* never freed: its names outlive the session */
	return *s;
}

/* The counters of the benchmark named name: its call paths' below its node. */
inline void add_counters(::benchmark::UserCounters &counters, const std::string &name)
{
	std::vector<path_stats> nodes;
	if (rtr_profile_walk(keep_node, &nodes) != 0)
		return; /* no aggregate: no counters */
	std::vector<std::string> path;
	for (std::size_t i = 0; i < nodes.size(); i++) {
		if (nodes[i].name != name)
			continue;
		unsigned top = nodes[i].depth;
		for (std::size_t k = i + 1; k < nodes.size() && nodes[k].depth > top; k++) {
			path.resize(nodes[k].depth - top - 1);
			path.push_back(nodes[k].name);
			std::string key;
			for (const std::string &p : path)
				key += (key.empty() ? "" : ">") + p;
			counters[key + ".n"] = static_cast<double>(nodes[k].count);
			counters[key + ".p50_ns"] = static_cast<double>(nodes[k].p50_ns);
			counters[key + ".p99_ns"] = static_cast<double>(nodes[k].p99_ns);
		}
		return; /* the first node of that name */
	}
}

/* The benchmark's slice, from the last report to now, with its runs' figures. */
inline void record_slice(state &s, const std::vector<::benchmark::BenchmarkReporter::Run> &runs)
{
	uint64_t now = rtr_now_ns();
	rtr_flush(); /* the rings drained: room for the slice whatever the runs left */
	uint64_t iterations = 0;
	double real = 0, cpu = 0;
	for (const auto &r : runs) {
		iterations += static_cast<uint64_t>(r.iterations);
		real += r.GetAdjustedRealTime() / static_cast<double>(runs.size());
		cpu += r.GetAdjustedCPUTime() / static_cast<double>(runs.size());
	}
	static const char *const units[] = {"ns", "us", "ms", "s"};
	const auto &first = runs.front();
	s.names.push_front(first.run_name.str());
	rtr_arg a[7] = {};
	a[0].key = "args", a[0].type = RTR_ARG_TYPE_STR_COPY;
	a[0].v.str = first.run_name.args.c_str();
	a[1].key = "iterations", a[1].type = RTR_ARG_TYPE_U64, a[1].v.u64 = iterations;
	a[2].key = "real_time", a[2].type = RTR_ARG_TYPE_F64, a[2].v.f64 = real;
	a[3].key = "cpu_time", a[3].type = RTR_ARG_TYPE_F64, a[3].v.f64 = cpu;
	a[4].key = "time_unit", a[4].type = RTR_ARG_TYPE_STR;
	a[4].v.str = units[static_cast<unsigned>(first.time_unit) & 3];
	a[5].key = "threads", a[5].type = RTR_ARG_TYPE_I64, a[5].v.i64 = first.threads;
	a[6].key = "repetitions", a[6].type = RTR_ARG_TYPE_U64,
	a[6].v.u64 = first.repetitions > 0 ? static_cast<uint64_t>(first.repetitions) : runs.size();
	rtr_complete_args("benchmark", s.names.front().c_str(), s.since_ns, now - s.since_ns, a, 7);
}

/* The runs with their counters; the first reporter to see a report records its slice. */
inline const std::vector<::benchmark::BenchmarkReporter::Run> &
augment(const std::vector<::benchmark::BenchmarkReporter::Run> &runs, bool display)
{
	state &s = the_state();
	if (!display && &runs == s.last_in)
		return s.last_out; /* the display reporter did it for this report */
	s.last_in = &runs;
	s.last_out = runs;
	if (runs.empty())
		return s.last_out;
	using Run = ::benchmark::BenchmarkReporter::Run;
	std::string name = runs.front().run_name.str();
	bool timed = runs.front().run_type == Run::RT_Iteration;
	/* the timed runs' report; the aggregates' alone with --benchmark_report_aggregates_only */
	bool record = display && (timed || s.last_slice != name);
	if (record && timed) {
		record_slice(s, runs);
	} else if (record) {
		std::vector<Run> median(1, runs.front());
		for (const Run &r : runs)
			if (r.aggregate_name == "median")
				median[0] = r;
		record_slice(s, median);
	}
	if (record)
		s.last_slice = name;
	rtr_stats st{};
	rtr_stats_get(&st);
	for (auto &r : s.last_out) {
		if (r.run_type == Run::RT_Aggregate && r.aggregate_name != "mean" &&
		    r.aggregate_name != "median")
			continue; /* a stddev or cv of a count is not the count */
		add_counters(r.counters, r.run_name.str());
		if (record) /* events lost in this benchmark: its counts are short by them */
			r.counters["ringtrace.dropped"] =
				static_cast<double>(st.events_dropped - s.dropped);
	}
	if (record)
		s.dropped = st.events_dropped;
	return s.last_out;
}

/* A reporter around Google Benchmark's own: the same output, with the counters. */
class reporter : public ::benchmark::BenchmarkReporter
{
      public:
	reporter(::benchmark::BenchmarkReporter *inner, bool display)
	    : inner_(inner), display_(display)
	{
	}
	bool ReportContext(const Context &context) override
	{
		inner_->SetOutputStream(&GetOutputStream()); /* as the library set ours */
		inner_->SetErrorStream(&GetErrorStream());
		bool ok = inner_->ReportContext(context);
		the_state().since_ns = rtr_now_ns();
		return ok;
	}
	void ReportRuns(const std::vector<Run> &runs) override
	{
		inner_->ReportRuns(augment(runs, display_));
		if (display_)
			the_state().since_ns = rtr_now_ns(); /* the next benchmark begins */
	}
	void Finalize() override
	{
		inner_->Finalize();
	}

      private:
	::benchmark::BenchmarkReporter *inner_;
	bool display_;
};

#if defined(RINGTRACE_BENCHMARK_PROFILER_MANAGER)
/* Google Benchmark >= 1.9: its untimed profiling pass, marked. */
class profiler : public ::benchmark::ProfilerManager
{
      public:
	void AfterSetupStart() override
	{
		rtr_begin("benchmark", "profiling pass");
	}
	void BeforeTeardownStop() override
	{
		rtr_end("benchmark", "profiling pass");
	}
};
#endif

/* The value of --NAME=VALUE in arg, or nullptr. */
inline const char *flag_value(const char *arg, const char *name)
{
	std::size_t n = std::strlen(name);
	if (std::strncmp(arg, "--", 2) != 0 || std::strncmp(arg + 2, name, n) != 0 ||
	    arg[2 + n] != '=')
		return nullptr;
	return arg + 3 + n;
}

} // namespace detail

/*
 * Take --ringtrace=FILE out of argv, start the recorder (on FILE, or on RINGTRACE_FILE
 * from the environment; with the profile beside the trace), then
 * benchmark::Initialize(argc, argv). 0, or rtr_start()'s negative errno (reported on
 * stderr by the library; the benchmarks then run unrecorded).
 */
inline int initialize(int *argc, char **argv)
{
	detail::state &s = detail::the_state();
	const char *file = nullptr;
	int kept = 0;
	for (int i = 0; i < *argc; i++) {
		const char *v = i > 0 ? detail::flag_value(argv[i], "ringtrace") : nullptr;
		if (v != nullptr) {
			file = v;
			continue;
		}
		if (const char *o = detail::flag_value(argv[i], "benchmark_out"))
			s.out_path = o;
		if (const char *f = detail::flag_value(argv[i], "benchmark_out_format"))
			s.out_format = f;
		argv[kept++] = argv[i];
	}
	if (kept < *argc)
		argv[kept] = nullptr; /* as main's argv ends */
	*argc = kept;
	int err = 0;
	if (file == nullptr)
		file = std::getenv("RINGTRACE_FILE");
	if (file != nullptr && *file != '\0') {
		rtr_config cfg;
		rtr_config_init(&cfg);
		cfg.path = file;
		if (cfg.mode != RTR_MODE_PROFILE)
			cfg.profile = 1;
		err = rtr_start(&cfg);
		s.recording = err == 0;
		s.started_here = err == 0;
	}
	::benchmark::Initialize(argc, argv);
	return err;
}

/* benchmark::RunSpecifiedBenchmarks() with the recording reporters (Google Benchmark's
 * own reporters, as its flags choose, inside). The matching benchmarks' count. */
inline std::size_t run_specified_benchmarks()
{
	detail::state &s = detail::the_state();
	if (!s.recording)
		return ::benchmark::RunSpecifiedBenchmarks();
#if defined(RINGTRACE_BENCHMARK_PROFILER_MANAGER)
	static detail::profiler prof;
	::benchmark::RegisterProfilerManager(&prof);
#endif
	detail::reporter display(::benchmark::CreateDefaultDisplayReporter(), true);
	if (s.out_path.empty() || (s.out_format != "json" && s.out_format != "console"))
		return ::benchmark::RunSpecifiedBenchmarks(&display); /* csv: the library's own */
	std::unique_ptr<::benchmark::BenchmarkReporter> file_inner;
	if (s.out_format == "console")
		file_inner.reset(
			new ::benchmark::ConsoleReporter(::benchmark::ConsoleReporter::OO_None));
	else
		file_inner.reset(new ::benchmark::JSONReporter);
	detail::reporter to_file(file_inner.get(), false);
	return ::benchmark::RunSpecifiedBenchmarks(&display, &to_file);
}

/* The recorder stopped (when initialize() started it), then benchmark::Shutdown(). */
inline void shutdown()
{
	detail::state &s = detail::the_state();
	if (s.started_here)
		rtr_stop();
	s.recording = s.started_here = false;
	::benchmark::Shutdown();
}

} // namespace benchmark
} // namespace ringtrace

#define RINGTRACE_BENCHMARK_MAIN()                                        \
	int main(int argc, char **argv)                                   \
	{                                                                 \
		ringtrace::benchmark::initialize(&argc, argv);            \
		if (::benchmark::ReportUnrecognizedArguments(argc, argv)) \
			return 1;                                         \
		ringtrace::benchmark::run_specified_benchmarks();         \
		ringtrace::benchmark::shutdown();                         \
		return 0;                                                 \
	}                                                                 \
	int main(int, char **)

#endif /* RINGTRACE_BENCHMARK_HPP */
