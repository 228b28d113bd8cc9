/* SPDX-License-Identifier: MIT */
/*
 * The category filter: which categories a session records.
 *
 * A filter is a list such as "app,mpi" (record only these) or "-debug,-verbose" (all
 * but these); both kinds may be mixed: a category is recorded when the list has no
 * plain entry or names it, and no minus entry names it. An event whose category is
 * itself a comma-separated list ("gpu,copy", as Chrome writes them) is recorded when
 * one of its parts would be.
 *
 * How the hot path asks (ringtrace/emit.h, rtr__recording_cat()). rtr_start() parses
 * the list into a fixed table (rtr__filter_parse, at configuration time) and
 * publishes it (rtr__filter_publish) before the state word rtr__active, which then
 * carries a "filter present" bit and the session's filter epoch. With no filter
 * the word is 1 and an event call pays nothing new. With one, each thread keeps a
 * small direct-mapped cache of decisions keyed by the category pointer and tagged
 * with the state word; a miss (rtr__cat_lookup) compares the string against the
 * table. RTR_SCOPE caches its decision in its call site, tagged the same way. The
 * epoch is new at every start, so a decision made under another session never
 * matches.
 *
 * Races with rtr_start(). The table is only written by rtr_start(), before its R0,
 * and read by lookups after A0; a producer that loaded the previous session's state
 * may still be looking up while the table is rewritten. Every access to the published
 * table is therefore a relaxed atomic. Worst case: that producer decides its one
 * racing event from a mix of the two lists, and the decision is cached under the old
 * epoch, which never returns; the event itself lands in the new session, as any event
 * racing with a restart does.
 */
#ifndef RTR_FILTER_H
#define RTR_FILTER_H

#include <ringtrace.h>

#include <stddef.h>
#include <stdint.h>

#define RTR__FILTER_MAX_ENTRIES 32   /* names in one list */
#define RTR__FILTER_MAX_NAME	64   /* bytes in one name */
#define RTR__FILTER_MAX_SPEC	1024 /* bytes in the whole list, without the NUL */

struct rtr__filter_entry {
	uint32_t len;				 /* bytes of name */
	uint32_t exclude;			 /* 1: a minus entry */
	uint64_t name[RTR__FILTER_MAX_NAME / 8]; /* the bytes, zero-padded */
};

struct rtr__filter {
	uint32_t n;	   /* entries; 0: no filter, every category is recorded */
	uint32_t includes; /* entries without a minus */
	struct rtr__filter_entry entry[RTR__FILTER_MAX_ENTRIES];
};

/*
 * Parse spec into *out. NULL or "" is no filter. Spaces and tabs around names are
 * ignored. Returns 0, or -EINVAL and a reason in why (why_size bytes) for an empty
 * name, a lone '-', a name over RTR__FILTER_MAX_NAME bytes or holding '*' (there are
 * no wildcards) or a control byte, more than RTR__FILTER_MAX_ENTRIES names, or a list
 * over RTR__FILTER_MAX_SPEC bytes. Any thread; no allocation.
 */
int rtr__filter_parse(const char *spec, struct rtr__filter *out, char *why, size_t why_size);

/* Whether f records events of category cat (NULL counts as ""). Any thread. */
bool rtr__filter_allows(const struct rtr__filter *f, const char *cat);

/*
 * Make f the filter of the session rtr_start() is about to start, and return the
 * state word that rtr_start() then stores into rtr__active with release:
 * RTR__STATE_ALL when f has no entry, else RTR__STATE_FILTERED with a new epoch. Call
 * from rtr_start(), under its lock, while rtr__active is 0.
 */
int rtr__filter_publish(const struct rtr__filter *f);

#endif
