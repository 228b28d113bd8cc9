/* SPDX-License-Identifier: MIT */
/* The category filter: parsing, publishing, the cache-miss decision. See filter.h. */
#include "producer/filter.h"

#include "common/atomic.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

RTR_API __thread struct rtr__cat_slot rtr__tls_cat_cache[RTR__CAT_SLOTS]
	__attribute__((tls_model("initial-exec")));

/* The running session's filter. Written by rtr_start() only, read by lookups; every
 * access is a relaxed atomic (filter.h, "Races with rtr_start()"). */
static struct rtr__filter published;
/* The last filter epoch handed out; under rtr_start()'s lock. */
static uint32_t last_epoch;

/* Epochs run 1 .. 2^29 - 1 so that the state word stays a positive int. Worst case
 * after 2^29 filtered sessions: a decision cached that long ago, by a thread or call
 * site not used since, answers for a list it was not made under. */
#define MAX_EPOCH ((1u << 29) - 1)

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* s[0 .. len) without the blanks around it. */
static const char *trim(const char *s, size_t *len)
{
	while (*len > 0 && is_blank(s[0])) {
		s++;
		(*len)--;
	}
	while (*len > 0 && is_blank(s[*len - 1]))
		(*len)--;
	return s;
}

int rtr__filter_parse(const char *spec, struct rtr__filter *out, char *why, size_t why_size)
{
	memset(out, 0, sizeof(*out));
	if (spec == NULL || *spec == '\0')
		return 0;
	if (strnlen(spec, RTR__FILTER_MAX_SPEC + 1) > RTR__FILTER_MAX_SPEC) {
		snprintf(why, why_size, "longer than %d bytes", RTR__FILTER_MAX_SPEC);
		goto bad;
	}
	for (const char *p = spec;;) {
		size_t len = strcspn(p, ",");
		const char *next = p[len] == ',' ? p + len + 1 : NULL;
		unsigned k = out->n + 1; /* the name's place in the list, for messages */
		const char *name = trim(p, &len);
		int exclude = len > 0 && name[0] == '-';
		if (exclude) {
			len--;
			name = trim(name + 1, &len);
		}
		if (len == 0) {
			snprintf(why, why_size, "name %u is empty", k);
			goto bad;
		}
		if (len > RTR__FILTER_MAX_NAME) {
			snprintf(why, why_size, "name %u is longer than %d bytes", k,
				 RTR__FILTER_MAX_NAME);
			goto bad;
		}
		for (size_t i = 0; i < len; i++) {
			unsigned char c = (unsigned char)name[i];
			if (c == '*') {
				snprintf(why, why_size,
					 "name %u holds '*' (there are no wildcards)", k);
				goto bad;
			}
			if (c < 0x20 || c == 0x7f) {
				snprintf(why, why_size, "name %u holds a control byte", k);
				goto bad;
			}
		}
		if (out->n == RTR__FILTER_MAX_ENTRIES) {
			snprintf(why, why_size, "more than %d names", RTR__FILTER_MAX_ENTRIES);
			goto bad;
		}
		struct rtr__filter_entry *e = &out->entry[out->n++];
		e->len = (uint32_t)len;
		e->exclude = (uint32_t)exclude;
		memcpy(e->name, name, len);
		out->includes += !exclude;
		if (next == NULL)
			return 0;
		p = next;
	}
bad:
	memset(out, 0, sizeof(*out));
	return -EINVAL;
}

/* Whether entry e names part[0 .. len). Reads e through relaxed atomics: it may be
 * the published table while rtr_start() rewrites it (filter.h). */
static bool entry_names(const struct rtr__filter_entry *e, const char *part, size_t len)
{
	uint64_t name[RTR__FILTER_MAX_NAME / 8];

	if (len > RTR__FILTER_MAX_NAME || rtr_atomic_load_relaxed(&e->len) != len)
		return false;
	for (size_t w = 0; w * 8 < len; w++)
		name[w] = rtr_atomic_load_relaxed(&e->name[w]); /* see above */
	return memcmp(name, part, len) == 0;
}

/* Whether f records the single category part[0 .. len). */
static bool allows_part(const struct rtr__filter *f, const char *part, size_t len)
{
	/* relaxed: see entry_names(); n is never above RTR__FILTER_MAX_ENTRIES */
	uint32_t n = rtr_atomic_load_relaxed(&f->n);
	bool included = rtr_atomic_load_relaxed(&f->includes) == 0; /* relaxed: as n */

	for (uint32_t i = 0; i < n && i < RTR__FILTER_MAX_ENTRIES; i++) {
		const struct rtr__filter_entry *e = &f->entry[i];
		if (!entry_names(e, part, len))
			continue;
		if (rtr_atomic_load_relaxed(&e->exclude)) /* relaxed: as n */
			return false;
		included = true;
	}
	return included;
}

bool rtr__filter_allows(const struct rtr__filter *f, const char *cat)
{
	bool named = false; /* cat has a part that is not empty */

	for (const char *p = cat != NULL ? cat : "";;) {
		size_t len = strcspn(p, ",");
		size_t part_len = len;
		const char *part = trim(p, &part_len);
		if (part_len > 0) {
			named = true;
			if (allows_part(f, part, part_len))
				return true;
		}
		if (p[len] == '\0')
			break;
		p += len + 1;
	}
	return !named && allows_part(f, "", 0); /* "", ",": the empty category */
}

int rtr__filter_publish(const struct rtr__filter *f)
{
	/* relaxed stores: rtr_start()'s R0, which follows, publishes them to the
	 * producers that see this session; a straggler of the last one may read a mix */
	for (uint32_t i = 0; i < f->n; i++) {
		const struct rtr__filter_entry *src = &f->entry[i];
		struct rtr__filter_entry *dst = &published.entry[i];
		rtr_atomic_store_relaxed(&dst->len, src->len);
		rtr_atomic_store_relaxed(&dst->exclude, src->exclude);
		for (size_t w = 0; w < RTR__FILTER_MAX_NAME / 8; w++)
			rtr_atomic_store_relaxed(&dst->name[w], src->name[w]);
	}
	rtr_atomic_store_relaxed(&published.includes, f->includes);
	rtr_atomic_store_relaxed(&published.n, f->n);
	if (f->n == 0)
		return RTR__STATE_ALL;
	last_epoch = last_epoch >= MAX_EPOCH ? 1 : last_epoch + 1;
	return (int)(RTR__STATE_FILTERED | last_epoch << 2);
}

RTR_API bool rtr__cat_lookup(int state, const char *cat)
{
	bool recorded = rtr__filter_allows(&published, cat);
	struct rtr__cat_slot *slot = rtr__cat_slot_of(cat);

	slot->cat = cat;
	slot->decision = state | recorded;
	return recorded;
}

RTR_API bool rtr__site_lookup(int state, const struct rtr_site *site, int *decision)
{
	bool recorded = rtr__cat_cached(state, site->cat);

	/* relaxed: the word carries its own tag (state); other threads only compare it */
	rtr_atomic_store_relaxed(decision, state | recorded);
	return recorded;
}
