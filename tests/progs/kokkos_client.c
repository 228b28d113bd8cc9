/* SPDX-License-Identifier: MIT */
/*
 * A program that calls the Kokkos tool the way Kokkos does, without Kokkos: it
 * dlopen()s the library KOKKOS_TOOLS_LIBS names, looks each callback up by its name
 * and calls it (kokkos_calls.h), as a newer Kokkos (4.x: a later interface version, a device, the
 * tool settings and programming interface, device ids with a device number) would,
 * and with what Kokkos never passes. It does not link ringtrace. tests/test_kokkos.c
 * checks the trace; what it does:
 *
 *	init (interface 20240906, 1 device), settings (fencing asked: exit 1 if not),
 *	the programming interface (by value)
 *	kernel "k4" on device id K4_DEVICE_ID (Cuda, device 1, instance 3)
 *	"alpha" then "beta" from one buffer at one address, ALPHA_BETA times each
 *	a kernel named by a NULL pointer, and one of LONG_NAME bytes (cut to 1024)
 *	fences "fa" { "fb" }, "fa" ended first: "fb" ends with it, its own end later
 *	finds nothing; ends of ids never handed out (0 and 12345)
 *	a pop and a deep copy end with nothing open
 *	OPEN_MAX + 1 kernels "deep" open at once: the innermost is not recorded
 *	sections "s1" and "s2" overlapping; a stop of an id never created; a second
 *	stop of s1; a start of s2 left open at finalize
 *	a second thread running kernel "alpha" from its own buffer, which exits after
 *	finalize and a dlclose() of the library (its state freed by the library's code)
 *
 * With argv[1] "full-names", instead: init; kernel "alpha"; FILL_SECTIONS sections
 * and FILL_KERNELS kernels with distinct names of 1024 bytes, more than the tool's
 * 8 MiB of names hold (sections record nothing; the kernels past the full table are
 * named by it); kernels "alpha" (known: still named) and "new" (not: named by the full
 * table), region "region after full" (copied), metadata "new key" = "v".
 * Exit status: 0, or the number of the check that failed here.
 */
#include "kokkos_calls.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define K4_DEVICE_ID  ((2u << 24) | (1u << 17) | 3u)
#define ALPHA_BETA    3
#define LONG_NAME     2000
#define OPEN_MAX      32
#define FILL_SECTIONS 4096
#define FILL_KERNELS  4000

static void kernel(const char *name)
{
	kokkos_span("parallel_for", name, 0);
}

/* The worker records, then waits until the library is finalized and closed: its
 * thread's state is freed as it exits, by the library's code, which must still be
 * mapped (-z nodelete). */
static pthread_barrier_t recorded, closed;

static void *worker(void *arg)
{
	char name[16];
	(void)arg;
	snprintf(name, sizeof(name), "alpha");
	kernel(name);
	pthread_barrier_wait(&recorded);
	pthread_barrier_wait(&closed);
	return NULL;
}

static void fence_now(uint32_t device_id)
{
	(void)device_id;
}

static int settings_and_kernels(void)
{
	struct kokkos_device_info dev = {0};
	struct kokkos_tool_settings settings = {0};
	struct kokkos_tool_interface iface = {fence_now, {0}};
	uint64_t id = 0;

	KOKKOS_FN(kokkosp_init_fn, "kokkosp_init_library")(0, UINT64_C(20240906), 1, &dev);
	KOKKOS_FN(kokkosp_tool_settings_fn, "kokkosp_request_tool_settings")(1, &settings);
	if (!settings.requires_global_fencing)
		return 1;
	KOKKOS_FN(kokkosp_tool_interface_fn, "kokkosp_provide_tool_programming_interface")
	(1, iface);
	KOKKOS_FN(kokkosp_begin_fn, "kokkosp_begin_parallel_reduce")("k4", K4_DEVICE_ID, &id);
	KOKKOS_FN(kokkosp_end_fn, "kokkosp_end_parallel_reduce")(id);

	char buf[16];
	for (int i = 0; i < ALPHA_BETA; i++) {
		strcpy(buf, "alpha");
		kernel(buf);
		strcpy(buf, "beta");
		kernel(buf);
	}
	kernel(NULL);
	char *long_name = malloc(LONG_NAME + 1);
	if (long_name == NULL)
		return 2;
	memset(long_name, 'x', LONG_NAME);
	long_name[LONG_NAME] = '\0';
	kernel(long_name);
	free(long_name);
	return 0;
}

static int out_of_order(void)
{
	uint64_t fa = 0, fb = 0, deep[OPEN_MAX + 1];

	KOKKOS_FN(kokkosp_begin_fn, "kokkosp_begin_fence")("fa", 0, &fa);
	KOKKOS_FN(kokkosp_begin_fn, "kokkosp_begin_fence")("fb", 0, &fb);
	if (fa == fb || fa == 0 || fb == 0)
		return 3;
	KOKKOS_FN(kokkosp_end_fn, "kokkosp_end_fence")(fa);
	KOKKOS_FN(kokkosp_end_fn, "kokkosp_end_fence")(fb);
	KOKKOS_FN(kokkosp_end_fn, "kokkosp_end_fence")(0);
	KOKKOS_FN(kokkosp_end_fn, "kokkosp_end_parallel_scan")(12345);
	KOKKOS_FN(kokkosp_void_fn, "kokkosp_pop_profile_region")();
	KOKKOS_FN(kokkosp_void_fn, "kokkosp_end_deep_copy")();
	for (int i = 0; i <= OPEN_MAX; i++)
		KOKKOS_FN(kokkosp_begin_fn, "kokkosp_begin_parallel_for")("deep", 0, &deep[i]);
	for (int i = OPEN_MAX; i >= 0; i--)
		KOKKOS_FN(kokkosp_end_fn, "kokkosp_end_parallel_for")(deep[i]);
	return 0;
}

static int sections(void)
{
	uint32_t s1 = 0, s2 = 0;
	kokkosp_section_fn *start = KOKKOS_FN(kokkosp_section_fn, "kokkosp_start_profile_section");
	kokkosp_section_fn *stop = KOKKOS_FN(kokkosp_section_fn, "kokkosp_stop_profile_section");

	KOKKOS_FN(kokkosp_create_section_fn, "kokkosp_create_profile_section")("s1", &s1);
	KOKKOS_FN(kokkosp_create_section_fn, "kokkosp_create_profile_section")("s2", &s2);
	if (s1 == s2 || s1 == 0 || s2 == 0)
		return 4;
	start(s1);
	start(s2);
	stop(s1);
	stop(s2);
	stop(s1);
	stop(99999);
	KOKKOS_FN(kokkosp_section_fn, "kokkosp_destroy_profile_section")(s1);
	start(s2);
	return 0;
}

/* Fills the tool's names with 1024-byte names, about 1,140 bytes each in its arena:
 * sections (at most 4,096 ids), then kernels. */
static void full_names(void)
{
	static char name[1025];
	uint32_t id = 0;

	KOKKOS_FN(kokkosp_init_fn, "kokkosp_init_library")(0, RTR_KOKKOS_INTERFACE_3_4, 0, NULL);
	kernel("alpha");
	for (int i = 0; i < FILL_SECTIONS; i++) {
		snprintf(name, sizeof(name), "%04d%01020d", i, 0);
		KOKKOS_FN(kokkosp_create_section_fn, "kokkosp_create_profile_section")(name, &id);
	}
	for (int i = 0; i < FILL_KERNELS; i++) {
		snprintf(name, sizeof(name), "k%04d-%01018d", i, 0);
		kernel(name);
	}
	kernel("alpha");
	kernel("new");
	KOKKOS_FN(kokkosp_name_fn, "kokkosp_push_profile_region")("region after full");
	KOKKOS_FN(kokkosp_void_fn, "kokkosp_pop_profile_region")();
	KOKKOS_FN(kokkosp_metadata_fn, "kokkosp_declare_metadata")("new key", "v");
	KOKKOS_FN(kokkosp_void_fn, "kokkosp_finalize_library")();
}

int main(int argc, char **argv)
{
	const char *err = kokkos_load();
	pthread_t t;
	int rc;

	if (err != NULL) {
		fprintf(stderr, "kokkos_client: %s\n", err);
		return 2;
	}
	if (argc > 1 && strcmp(argv[1], "full-names") == 0) {
		full_names();
		return 0;
	}
	if ((rc = settings_and_kernels()) != 0 || (rc = out_of_order()) != 0 ||
	    (rc = sections()) != 0)
		return rc;
	if (pthread_barrier_init(&recorded, NULL, 2) != 0 ||
	    pthread_barrier_init(&closed, NULL, 2) != 0 ||
	    pthread_create(&t, NULL, worker, NULL) != 0)
		return 5;
	pthread_barrier_wait(&recorded);
	KOKKOS_FN(kokkosp_void_fn, "kokkosp_finalize_library")();
	dlclose(kokkos_lib);
	pthread_barrier_wait(&closed);
	return pthread_join(t, NULL) != 0 ? 6 : 0;
}
