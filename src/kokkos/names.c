/* SPDX-License-Identifier: MIT */
/*
 * Interning for the Kokkos tool (names.h), in the modules' shared table
 * (common/strtab.h): each entry's head is the name's call site {"kokkos", name},
 * filled before the entry is published. Kernel names are long (a lambda's is its
 * mangled type), and a name is hashed on every miss of the tool's per-thread cache:
 * the table hashes a word at a time.
 */
#include "kokkos/names.h"

#include "common/strtab.h"

#include <stdint.h>
#include <string.h>

const char rtr__kokkos_cat[] = "kokkos";

static _Alignas(8) char arena[RTR_KOKKOS_ARENA_BYTES];
static const char *slots[RTR_KOKKOS_NAME_SLOTS];

/* The head of an entry: its site, the category and the interned bytes. */
static void site_init(void *head, const char *bytes)
{
	struct rtr_site *site = head;

	site->cat = rtr__kokkos_cat;
	site->name = bytes;
}

_Static_assert(sizeof(struct rtr_site) % 8 == 0, "a site heads an 8-byte aligned entry");

static struct rtr__strtab names =
	RTR__STRTAB(arena, slots, RTR_KOKKOS_MAX_NAME, sizeof(struct rtr_site), site_init);

const struct rtr_site *rtr__kokkos_intern(const char *s)
{
	if (s == NULL)
		s = "";
	const char *bytes = rtr__strtab_intern(&names, s, strnlen(s, RTR_KOKKOS_MAX_NAME + 1));
	return bytes != NULL ? rtr__strtab_head(&names, bytes) : NULL;
}
