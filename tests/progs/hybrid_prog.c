/* SPDX-License-Identifier: MIT */
/*
 * A hybrid MPI + OpenMP program that also speaks NVTX, ITT and Kokkos' tools interface
 * and is built with -finstrument-functions (clang -fopenmp, so LLVM's runtime), for
 * tests/test_hybrid.c, which runs it under `mpirun -np 4 ringtrace record --mpi --omp
 * --nvtx --itt --kokkos --instrument` and counts in each rank's trace what this file
 * does:
 *
 *	main	MPI_Init_thread(FUNNELED); loads NVTX and ITT (nvtx_calls.h, itt_calls.h),
 *		names its thread "hybrid main" through NVTX; loads the Kokkos tool and
 *		initializes it as Kokkos 3.4's Kokkos::initialize() does (kokkos_calls.h:
 *		kokkosp_init_library, interface 20210225, no devices); STEPS times
 *		step(); then finalizes the tool (Kokkos::finalize()) and MPI_Finalize.
 *	step	NVTX push "step" (payload: the step's number) around the parts, each an
 *		instrumented function:
 *	  omp_part	a parallel region of OUTER threads, each pushing NVTX "outer body"
 *			around a nested region of INNER threads that each call leaf();
 *			then a region of TEAM threads: a `for` of LOOP_N iterations, an
 *			explicit barrier, a critical, and one thread creating TASKS tasks
 *			(each an ITT task "tile" in domain "hybrid") waited for with
 *			taskwait
 *	  mpi_part	an NVTX start/end range "exchange" around a ring exchange (Irecv
 *			from the left, Isend to the right, Waitall) and an Allreduce
 *	  kokkos_part	what Kokkos on its Serial backend (device id 0) reports of a
 *			solver's step, on the thread that launches: a region "kokkos
 *			step" holding parallel_for "axpy", a region "solve" (parallel_reduce
 *			"dot", a deep copy of COPY_BYTES from "x" to "x mirror", both in
 *			"Host") and fence "sync"; then a region of KK_TEAM threads whose
 *			master launches parallel_for "team axpy"
 *
 * The instrumented functions are main, step, omp_part, leaf, mpi_part and kokkos_part
 * (and the regions' bodies the compiler outlines); the NVTX, ITT and Kokkos helpers
 * are not.
 *
 * More parts go in `parts` below, each an instrumented function of the step; the
 * test's expectations of each part are a function of its own there.
 *
 * NVTX, ITT and Kokkos are loaded only where their variable names a tool (without, the
 * calls do nothing, as with the real headers and Kokkos). Exit status: 0; MPI_Abort with
 * 2 when the NVTX tool does not load, 3 the ITT collector, 4 when MPI lacks
 * MPI_THREAD_FUNNELED, 5 the Kokkos tool.
 */
#include "hybrid_shape.h"
#include "itt_calls.h"
#include "kokkos_calls.h"
#include "nvtx_calls.h"

#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile long sink;
static struct itt_domain *domain;
static struct itt_string_handle *tile;
static int rank, size;
static long loop_sum;

/* A function of its own on the inner teams' threads. */
__attribute__((noinline)) static void leaf(int i)
{
	sink += i;
}

static void omp_part(int step)
{
#pragma omp parallel num_threads(OUTER)
	{
		nvtx_push_a("outer body");
#pragma omp parallel num_threads(INNER)
		leaf(omp_get_thread_num());
		nvtx_pop();
	}

	long sum = 0;
#pragma omp parallel num_threads(TEAM)
	{
#pragma omp for reduction(+ : sum)
		for (int i = 0; i < LOOP_N; i++)
			sum += i + step;
#pragma omp barrier
#pragma omp critical
		sink += 1;
#pragma omp single
		{
			for (int t = 0; t < TASKS; t++) {
#pragma omp task
				{
					itt_begin(domain, itt_null_id, itt_null_id, tile);
					sink += t;
					itt_end(domain);
				}
			}
#pragma omp taskwait
		}
	}
	loop_sum = sum;
}

static void mpi_part(int step)
{
	long out = loop_sum + rank, in = -1, total = 0;
	MPI_Request req[2];

	rtr_nvtx_range_id range = nvtx_start_a("exchange");
	MPI_Irecv(&in, 1, MPI_LONG, (rank + size - 1) % size, step, MPI_COMM_WORLD, &req[0]);
	MPI_Isend(&out, 1, MPI_LONG, (rank + 1) % size, step, MPI_COMM_WORLD, &req[1]);
	MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
	MPI_Allreduce(&in, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	nvtx_end(range);
	sink += total;
}

/* Kokkos' calls, each made only where the tool is loaded, as Kokkos makes them. */
KOKKOS_NOINSTR static void kk_span(const char *kind, const char *name)
{
	if (kokkos_lib != NULL)
		kokkos_span(kind, name, 0); /* Serial, instance 0 */
}

KOKKOS_NOINSTR static void kk_push(const char *name)
{
	if (kokkos_lib != NULL)
		KOKKOS_FN(kokkosp_name_fn, "kokkosp_push_profile_region")(name);
}

KOKKOS_NOINSTR static void kk_pop(void)
{
	if (kokkos_lib != NULL)
		KOKKOS_FN(kokkosp_void_fn, "kokkosp_pop_profile_region")();
}

/* Kokkos::deep_copy(mirror, x) between Host views: reported around the copy. */
KOKKOS_NOINSTR static void kk_deep_copy(void *dst, const void *src, size_t bytes)
{
	struct kokkos_space_handle host = {"Host"};
	if (kokkos_lib != NULL)
		KOKKOS_FN(kokkosp_begin_deep_copy_fn, "kokkosp_begin_deep_copy")
	(host, "x mirror", dst, host, "x", src, bytes);
	memcpy(dst, src, bytes);
	if (kokkos_lib != NULL)
		KOKKOS_FN(kokkosp_void_fn, "kokkosp_end_deep_copy")();
}

static void kokkos_part(int step)
{
	static char x[COPY_BYTES], mirror[COPY_BYTES];

	kk_push("kokkos step");
	x[step] = (char)step;
	kk_span("parallel_for", "axpy");
	kk_push("solve");
	kk_span("parallel_reduce", "dot");
	kk_deep_copy(mirror, x, sizeof(x));
	kk_pop();
	kk_span("fence", "sync");
	kk_pop();
	/* a kernel launched inside an OpenMP region, by its master thread (Serial runs it
	 * on the thread that launches) */
#pragma omp parallel num_threads(KK_TEAM)
#pragma omp master
	kk_span("parallel_for", "team axpy");
	sink += mirror[step];
}

/* The parts of a step, in order. */
static void (*const parts[])(int step) = {omp_part, mpi_part, kokkos_part};

static void step(int s)
{
	struct rtr_nvtx_attributes a = nvtx_attr_init();
	a.payload_type = RTR_NVTX_PAYLOAD_U64;
	a.payload.u64 = (uint64_t)s;
	a.message_type = RTR_NVTX_MESSAGE_ASCII;
	a.message.ascii = "step";
	nvtx_push_ex(&a);
	for (size_t p = 0; p < sizeof(parts) / sizeof(parts[0]); p++)
		parts[p](s);
	nvtx_pop();
}

int main(int argc, char **argv)
{
	int provided = MPI_THREAD_SINGLE;

	MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
	if (provided < MPI_THREAD_FUNNELED) {
		fprintf(stderr, "hybrid_prog: MPI gives thread level %d\n", provided);
		MPI_Abort(MPI_COMM_WORLD, 4);
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	/* Each tool only where one is named: without, its calls do nothing. */
	const char *err = getenv("NVTX_INJECTION64_PATH") != NULL ? nvtx_load() : NULL;
	if (err != NULL) {
		fprintf(stderr, "hybrid_prog: NVTX: %s\n", err);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	int itt_err = getenv("INTEL_LIBITTNOTIFY64") != NULL ? itt_load() : 0;
	if (itt_err != 0) {
		fprintf(stderr, "hybrid_prog: ITT: step %d\n", itt_err);
		MPI_Abort(MPI_COMM_WORLD, 3);
	}
	nvtx_name_thread((uint32_t)gettid(), "hybrid main");
	if (itt_domain_create != NULL && itt_string_handle_create != NULL) {
		domain = itt_domain_create("hybrid");
		tile = itt_string_handle_create("tile");
	}
	const char *kk_err =
		getenv("KOKKOS_TOOLS_LIBS") != NULL || getenv("KOKKOS_PROFILE_LIBRARY") != NULL
			? kokkos_load()
			: NULL;
	if (kk_err != NULL) {
		fprintf(stderr, "hybrid_prog: Kokkos: %s\n", kk_err);
		MPI_Abort(MPI_COMM_WORLD, 5);
	}
	if (kokkos_lib != NULL) /* Kokkos::initialize(), after MPI's */
		KOKKOS_FN(kokkosp_init_fn, "kokkosp_init_library")
	(0, RTR_KOKKOS_INTERFACE_3_4, 0, NULL);
	omp_set_max_active_levels(2);
	for (int s = 0; s < STEPS; s++)
		step(s);
	if (kokkos_lib != NULL) /* Kokkos::finalize(), before MPI's */
		KOKKOS_FN(kokkosp_void_fn, "kokkosp_finalize_library")();
	MPI_Finalize();
	return 0;
}
