/* SPDX-License-Identifier: MIT */
/*
 * Interning for the Kokkos tool (kokkos_names.h), in the modules' shared table
 * (common/strtab.h). An entry's bytes are its key: the kind (1 byte) and the device id
 * (4, as in memory), then the name, whose NUL ends the entry; its head is its struct
 * rtr__kokkos_site, filled before the entry is published, whose site names the name
 * in place. Kernel names are long (a lambda's is its mangled type), and a name is
 * hashed on every miss of the tool's per-thread cache: the table hashes a word at a
 * time.
 */
#include "kokkos/kokkos_names.h"

#include "kokkos/kokkos_abi.h"

#include "common/strtab.h"

#include <stdint.h>
#include <string.h>

const char rtr__kokkos_cat[] = "kokkos";

#define KEY 5 /* the kind and device id before an entry's name */

static const char *const kinds[] = {
	[RTR_KOKKOS_FOR] = "parallel_for",
	[RTR_KOKKOS_REDUCE] = "parallel_reduce",
	[RTR_KOKKOS_SCAN] = "parallel_scan",
	[RTR_KOKKOS_FENCE] = "fence",
};

static const char *const device_types[] = {
	[KOKKOS_DEVICE_SERIAL] = "Serial",
	[KOKKOS_DEVICE_OPENMP] = "OpenMP",
	[KOKKOS_DEVICE_CUDA] = "Cuda",
	[KOKKOS_DEVICE_HIP] = "HIP",
	[KOKKOS_DEVICE_OPENMPTARGET] = "OpenMPTarget",
	[KOKKOS_DEVICE_HPX] = "HPX",
	[KOKKOS_DEVICE_THREADS] = "Threads",
	[KOKKOS_DEVICE_SYCL] = "SYCL",
	[KOKKOS_DEVICE_OPENACC] = "OpenACC",
};

static const char *device_type(uint32_t device_id)
{
	uint32_t type = device_id >> RTR_KOKKOS_DEVICE_TYPE_SHIFT;
	return type < sizeof(device_types) / sizeof(device_types[0]) ? device_types[type]
								     : "unknown";
}

static void site_init(void *head, const char *bytes)
{
	struct rtr__kokkos_site *k = head;

	k->kind = (uint8_t)bytes[0];
	memcpy(&k->device_id, bytes + 1, sizeof(k->device_id));
	if (k->kind == RTR_KOKKOS_NAME) {
		rtr__site_args_init(&k->sa, rtr__kokkos_cat, bytes + KEY, NULL, 0, k->args);
		return;
	}
	struct rtr_arg args[] = {RTR_ARG_STR("kind", kinds[k->kind]),
				 RTR_ARG_STR("device", device_type(k->device_id)),
				 RTR_ARG_U64("device_id", k->device_id)};
	rtr__site_args_init(&k->sa, rtr__kokkos_cat, bytes + KEY, args, 3, k->args);
}

_Static_assert(sizeof(struct rtr__kokkos_site) % 8 == 0, "a site heads an 8-byte aligned entry");

static _Alignas(8) char arena[RTR_KOKKOS_ARENA_BYTES];
static const char *slots[RTR_KOKKOS_NAME_SLOTS];
static struct rtr__strtab names = RTR__STRTAB(arena, slots, KEY + RTR_KOKKOS_MAX_NAME,
					      sizeof(struct rtr__kokkos_site), site_init);

const struct rtr__kokkos_site *rtr__kokkos_site(const char *s, enum rtr__kokkos_kind kind,
						uint32_t device_id)
{
	char key[KEY + RTR_KOKKOS_MAX_NAME];

	if (s == NULL)
		s = "";
	/* cut here, not by the table: a cut there could reach back into the key */
	size_t len = rtr__strtab_cut(s, strnlen(s, RTR_KOKKOS_MAX_NAME + 1), RTR_KOKKOS_MAX_NAME);
	key[0] = (char)kind;
	memcpy(key + 1, &device_id, sizeof(device_id));
	memcpy(key + KEY, s, len);
	const char *bytes = rtr__strtab_intern(&names, key, KEY + len);
	return bytes != NULL ? rtr__strtab_head(&names, bytes) : NULL;
}

const struct rtr_site *rtr__kokkos_intern(const char *s)
{
	const struct rtr__kokkos_site *k = rtr__kokkos_site(s, RTR_KOKKOS_NAME, 0);
	return k != NULL ? &k->sa.site : NULL;
}
