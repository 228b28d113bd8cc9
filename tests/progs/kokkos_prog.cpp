// SPDX-License-Identifier: MIT
//
// A Kokkos program (Serial backend, Debian's Kokkos) that knows nothing of ringtrace:
// run with KOKKOS_PROFILE_LIBRARY (or KOKKOS_TOOLS_LIBS) naming libringtrace-kokkos.so,
// what it does is recorded. tests/test_kokkos.c checks every item, by these numbers:
//
//	metadata "ringtrace test" = "kokkos_prog", "quoted" = say "hi"
//	views a, b (N doubles), c, d (M ints): each allocated and initialized by Kokkos
//	region "outer" { STEPS x region "step" { parallel_for "fill",
//		parallel_reduce "sum", parallel_scan "prefix" },
//		region "copies" { deep copies b <- a, d <- c, b <- a, a <- 0.5 (a scalar,
//		which Kokkos fills with a kernel inside the copy) } }
//	fence "rt fence" (through Kokkos::Tools, as newer Kokkos reports its own fences)
//	around Kokkos::fence(), and fence "rt device fence" on device id DEVICE_ID
//	section "rt section" started and stopped SECTION_RUNS times, a parallel_for
//	"in section" inside each; event "rt event"; dual view sync and modify of "dv"
//	a second thread: region "worker region" { fence "worker fence" }
//
// argv[1] "unfinished": then region "left open" { fence "open fence" } and section
// "open section" started, none ended, before Kokkos::finalize(); "no-finalize": the
// same, and the program returns without Kokkos::finalize().
// Exit status 0, or 1 when a result is wrong.
#include <Kokkos_Core.hpp>
#include <Kokkos_Profiling_ProfileSection.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>

namespace
{

constexpr int N = 1000;
constexpr int M = 250;
constexpr int STEPS = 3;
constexpr int SECTION_RUNS = 2;
constexpr uint32_t DEVICE_ID = (2u << 24) | 5u; // Cuda, instance 5

void worker()
{
	uint64_t fence = 0;
	Kokkos::Profiling::pushRegion("worker region");
	Kokkos::Tools::beginFence("worker fence", 0, &fence);
	Kokkos::Tools::endFence(fence);
	Kokkos::Profiling::popRegion();
}

void leave_open()
{
	uint64_t fence = 0;
	uint32_t section = 0;
	Kokkos::Profiling::pushRegion("left open");
	Kokkos::Tools::beginFence("open fence", 0, &fence);
	Kokkos::Profiling::createProfileSection("open section", &section);
	Kokkos::Profiling::startSection(section);
}

bool run()
{
	Kokkos::View<double *> a("a", N), b("b", N);
	Kokkos::View<int *> c("c", M), d("d", M);
	double total = 0;

	Kokkos::Profiling::pushRegion("outer");
	for (int s = 0; s < STEPS; s++) {
		Kokkos::Profiling::pushRegion("step");
		Kokkos::parallel_for(
			"fill", N, KOKKOS_LAMBDA(int i) { a(i) = i + s; });
		double sum = 0;
		Kokkos::parallel_reduce(
			"sum", N, KOKKOS_LAMBDA(int i, double &x) { x += a(i); }, sum);
		Kokkos::parallel_scan(
			"prefix", N, KOKKOS_LAMBDA(int i, double &x, bool final) {
				x += a(i);
				if (final)
					b(i) = x;
			});
		total += sum;
		Kokkos::Profiling::popRegion();
	}
	Kokkos::Profiling::pushRegion("copies");
	Kokkos::deep_copy(b, a);
	Kokkos::deep_copy(d, c);
	Kokkos::deep_copy(b, a);
	Kokkos::deep_copy(a, 0.5);
	Kokkos::Profiling::popRegion();
	Kokkos::Profiling::popRegion();

	uint64_t fence = 0;
	Kokkos::Tools::beginFence(
		"rt fence", Kokkos::Tools::Experimental::device_id(Kokkos::DefaultExecutionSpace()),
		&fence);
	Kokkos::fence();
	Kokkos::Tools::endFence(fence);
	Kokkos::Tools::beginFence("rt device fence", DEVICE_ID, &fence);
	Kokkos::Tools::endFence(fence);

	{
		Kokkos::Profiling::ProfilingSection section("rt section");
		for (int k = 0; k < SECTION_RUNS; k++) {
			section.start();
			Kokkos::parallel_for(
				"in section", N, KOKKOS_LAMBDA(int i) { a(i) += 1; });
			section.stop();
		}
	}
	Kokkos::Profiling::markEvent("rt event");
	Kokkos::Tools::syncDualView("dv", a.data(), true);
	Kokkos::Tools::modifyDualView("dv", a.data(), false);

	std::thread t(worker);
	t.join();

	// sum over steps s of sum_i (i + s), and a's last values
	double want = STEPS * (N * (N - 1) / 2.0) + N * (STEPS * (STEPS - 1) / 2.0);
	return total == want && a(N - 1) == 0.5 + SECTION_RUNS; // a is in HostSpace
}

} // namespace

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	bool unfinished = std::strcmp(mode, "unfinished") == 0;
	bool no_finalize = std::strcmp(mode, "no-finalize") == 0;

	Kokkos::initialize(argc, argv);
	Kokkos::Tools::declareMetadata("ringtrace test", "kokkos_prog");
	Kokkos::Tools::declareMetadata("quoted", "say \"hi\"");
	bool ok = run();
	if (!ok)
		std::fprintf(stderr, "kokkos_prog: wrong results\n");
	if (unfinished || no_finalize)
		leave_open();
	if (no_finalize)
		return ok ? 0 : 1;
	Kokkos::finalize();
	return ok ? 0 : 1;
}
