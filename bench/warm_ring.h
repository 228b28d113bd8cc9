/* SPDX-License-Identifier: MIT */
/*
 * For the benches that time the producer (bench_itt, bench_kokkos, bench_nvtx,
 * bench_instrument, bench_omp_cost): one lap of the calling thread's ring in span
 * pairs, drained as it goes, before the timed runs. A page of the ring costs a page
 * fault the first time it is written (some 20 ns a span pair on the development VM),
 * so without the lap a run's figure depended on whether the ring had wrapped before
 * it: on the number of pairs and the order of the runs. RINGTRACE_RING_KB gives the
 * ring's size, as the benches set it before rtr_start(); nothing is dropped (a
 * quarter lap at a time, then a flush).
 */
#ifndef RTR_BENCH_WARM_RING_H
#define RTR_BENCH_WARM_RING_H

#include <ringtrace.h>

#include <stdlib.h>

__attribute__((no_instrument_function)) static inline void bench_warm_ring(void)
{
	const char *kb = getenv("RINGTRACE_RING_KB");
	long pairs = kb != NULL ? atol(kb) * 1024 / 64 : 0; /* two 32-byte records a pair */

	for (int quarter = 0; quarter < 4; quarter++) {
		for (long k = 0; k < pairs / 4; k++) {
			rtr_begin("bench", "warm");
			rtr_end("bench", "warm");
		}
		rtr_flush();
	}
}

#endif
