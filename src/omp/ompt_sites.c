/* SPDX-License-Identifier: MIT */
/*
 * The OMPT tool's sites (ompt_sites.h), in the modules' shared table
 * (common/strtab.h). An entry's bytes are its key: the kind (1 byte), key (8) and
 * key2 (4), as in memory; its head is its struct rtr__omp_site, filled before the
 * entry is published. In front of the table, `recent` keeps a pointer to the site
 * last found at each of its slots: one load and three compares find a site again.
 */
#include "omp/ompt_sites.h"

#include "common/strtab.h"

#if defined(RTR_HAVE_SYMTAB)
#include "instrument/symtab.h"
#endif

#include <string.h>

const char rtr__omp_cat[] = "omp";
const char rtr__omp_parallel[] = "omp parallel";
const char rtr__omp_implicit_task[] = "omp implicit task";

#define KEY 13 /* kind, key, key2 */

const char *rtr__omp_function(uint64_t addr)
{
#if defined(RTR_HAVE_SYMTAB)
	/* a lock-free search of the table built at the tool's start; code loaded since
	 * is not in it and keeps only its address */
	const struct rtr__symtab *t = rtr__symtab_current();
	const struct rtr__sym *sym = t != NULL ? rtr__symtab_find(t, addr) : NULL;
	return sym != NULL ? t->names + sym->name : NULL; /* tables are never freed */
#else
	(void)addr;
	return NULL;
#endif
}

static void site_init(void *head, const char *bytes)
{
	struct rtr__omp_site *s = head;
	struct rtr_arg args[3];
	unsigned n;

	s->kind = (uint8_t)bytes[0];
	memcpy(&s->key, bytes + 1, sizeof(s->key));
	memcpy(&s->key2, bytes + 9, sizeof(s->key2));
	if (s->kind == RTR_OMP_SITE_PARALLEL) {
		args[0] = (struct rtr_arg)RTR_ARG_U64("requested", s->key2);
		args[1] = (struct rtr_arg)RTR_ARG_U64(rtr__arg_key_code, s->key);
		const char *function = rtr__omp_function(s->key);
		args[2] = (struct rtr_arg)RTR_ARG_STR("function", function);
		n = function != NULL ? 3 : 2;
		rtr__site_args_init(&s->sa, rtr__omp_cat, rtr__omp_parallel, args, n, s->args);
	} else {
		args[0] = (struct rtr_arg)RTR_ARG_U64("index", s->key);
		args[1] = (struct rtr_arg)RTR_ARG_U64("team_size", s->key2);
		rtr__site_args_init(&s->sa, rtr__omp_cat, rtr__omp_implicit_task, args, 2, s->args);
	}
}

_Static_assert(sizeof(struct rtr__omp_site) % 8 == 0, "a site heads an 8-byte aligned entry");

static _Alignas(8) char arena[(size_t)1 << 20];
static const char *slots[1u << 14];
static struct rtr__strtab sites =
	RTR__STRTAB(arena, slots, KEY, sizeof(struct rtr__omp_site), site_init);

#define RECENT_SLOTS 256
static const struct rtr__omp_site *recent[RECENT_SLOTS];

_Static_assert(RECENT_SLOTS == 1 << 8, "rtr__omp_site() takes 8 bits of the hash");

const struct rtr__omp_site *rtr__omp_site(enum rtr__omp_site_kind kind, uint64_t key, uint32_t key2)
{
	uint64_t h = (key ^ ((uint64_t)key2 << 32 | kind)) * UINT64_C(0x9e3779b97f4a7c15);
	const struct rtr__omp_site **slot = &recent[h >> (64 - 8)];
	/* A3: pairs with R3 below; a site seen is a site made (the table's own release
	 * published it to the thread that stored it here) */
	const struct rtr__omp_site *s = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (RTR__LIKELY(s != NULL) && s->key == key && s->key2 == key2 && s->kind == kind)
		return s;
	char bytes[KEY];
	bytes[0] = (char)kind;
	memcpy(bytes + 1, &key, sizeof(key));
	memcpy(bytes + 9, &key2, sizeof(key2));
	const char *entry = rtr__strtab_intern(&sites, bytes, KEY);
	if (entry == NULL)
		return NULL;
	s = rtr__strtab_head(&sites, entry);
	/* R3: pairs with A3 above */
	__atomic_store_n(slot, s, __ATOMIC_RELEASE);
	return s;
}
