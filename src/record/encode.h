/* SPDX-License-Identifier: MIT */
/*
 * The record format's encoder for events of any shape: measure, then write field by
 * field (the layout: record.h). Inline, for src/producer/events.c's general path
 * only, which it was part of: a copied name or string costs no call more than it
 * did. The decoder that reads the same fields back is record.c's.
 *
 * The producer's copy splits only at the ring's wrap, so fixed-size fields become
 * plain stores.
 */
#ifndef RTR_RECORD_ENCODE_H
#define RTR_RECORD_ENCODE_H

#include "common/compiler.h"
#include "record/record.h"

#include <string.h>

/*
 * The bytes an argument adds after the pairs, and the count its pair records. Arrays
 * are cut to whole values (whole lists) within RTR_MAX_COPY bytes, like strings.
 */
static inline uint32_t arg_blob(const struct rtr_arg *a, uint64_t *count)
{
	switch (a->type) {
	case RTR_ARG_TYPE_STR_COPY:
		if (a->v.str == NULL) {
			*count = UINT64_MAX;
			return 0;
		}
		*count = strnlen(a->v.str, RTR_MAX_COPY);
		return (uint32_t)*count;
	case RTR_ARG_TYPE_VALUE: /* cut mid-item if need be: the writer closes it */
		*count = a->v.value.bytes == NULL	 ? 0
			 : a->v.value.len > RTR_MAX_COPY ? RTR_MAX_COPY
							 : a->v.value.len;
		return (uint32_t)*count;
	case RTR_ARG_TYPE_I64_ARRAY:
		*count = a->v.i64s.v == NULL ? 0 : a->v.i64s.n;
		if (*count > RTR_MAX_COPY / sizeof(int64_t))
			*count = RTR_MAX_COPY / sizeof(int64_t);
		return (uint32_t)(*count * sizeof(int64_t));
	case RTR_ARG_TYPE_STR_ARRAY: {
		size_t bytes = 0, items = 0;
		for (; a->v.strs.v != NULL && items < a->v.strs.n; items++) {
			size_t room = RTR_MAX_COPY - bytes;
			if (room < sizeof(uint32_t))
				break;
			const char *item = a->v.strs.v[items];
			bytes += sizeof(uint32_t) +
				 (item != NULL ? strnlen(item, room - sizeof(uint32_t)) : 0);
		}
		*count = items;
		return (uint32_t)bytes;
	}
	case RTR_ARG_TYPE_I64_LISTS: {
		size_t bytes = 0, lists = 0;
		if (a->v.i64s.lens != NULL && (a->v.i64s.v != NULL || a->v.i64s.n == 0)) {
			for (; lists < a->v.i64s.n; lists++) {
				size_t more =
					sizeof(uint32_t) + a->v.i64s.lens[lists] * sizeof(int64_t);
				if (bytes + more > RTR_MAX_COPY)
					break;
				bytes += more;
			}
		}
		*count = lists;
		return (uint32_t)bytes;
	}
	default:
		*count = 0;
		return 0;
	}
}

static RTR_INLINE uint32_t rtr__rec_measure(const struct rtr__ext_event *e,
					    struct rtr__rec_plan *plan)
{
	unsigned nargs = e->nargs < RTR_MAX_ARGS ? e->nargs : RTR_MAX_ARGS;
	uint32_t ext = (rtr__kind_has_word(e->kind, e->flags) ? RTR__EXT_WORD : 0) +
		       ((e->flags & RTR__F_TRACK) ? RTR__EXT_TRACK : 0);

	if (e->args == NULL)
		nargs = 0;
	plan->name_len = 0;
	if (e->flags & RTR__F_NAME_COPY) {
		plan->name_len = e->name != NULL ? (uint32_t)strnlen(e->name, RTR_MAX_COPY) : 0;
		ext += RTR__EXT_NAME_LEN + plan->name_len;
	}
	ext += nargs * RTR__EXT_ARG;
	for (unsigned i = 0; i < nargs; i++) {
		plan->count[i] = 0;
		plan->blob[i] = 0;
		if (e->args[i].type >= RTR_ARG_TYPE_STR_COPY)
			ext += plan->blob[i] = arg_blob(&e->args[i], &plan->count[i]);
	}
	plan->nargs = nargs;
	plan->ext = ext;
	return ext;
}

/*
 * Where the next continuation byte goes. The bytes of one event are contiguous in the
 * ring unless they wrap past its last slot; ext_put() copies straight into the slots and
 * splits only at the wrap.
 */
struct rtr__ext_cursor {
	char *base;	   /* the ring's first slot */
	size_t at;	   /* byte offset of the next byte from base */
	size_t ring_bytes; /* a power of two */
};

static inline void ext_put(struct rtr__ext_cursor *c, const void *src, size_t len)
{
	if (len == 0)
		return; /* src may be NULL then: memcpy must not see it */
	if (RTR_LIKELY(c->at + len <= c->ring_bytes)) {
		memcpy(c->base + c->at, src, len);
		c->at += len;
		return;
	}
	size_t first = c->ring_bytes - c->at;
	memcpy(c->base + c->at, src, first);
	memcpy(c->base, (const char *)src + first, len - first);
	c->at = len - first;
}

/* A STR_ARRAY's items, measured the same way as arg_blob() did. */
static inline void put_strings(struct rtr__ext_cursor *c, const char *const *items, uint64_t n)
{
	size_t bytes = 0;

	for (uint64_t k = 0; k < n; k++) {
		size_t room = RTR_MAX_COPY - bytes - sizeof(uint32_t);
		uint32_t len = UINT32_MAX;
		if (items[k] != NULL)
			len = (uint32_t)strnlen(items[k], room);
		ext_put(c, &len, sizeof(len));
		if (items[k] != NULL)
			ext_put(c, items[k], len);
		bytes += sizeof(uint32_t) + (items[k] != NULL ? len : 0);
	}
}

static RTR_INLINE void rtr__rec_put_ext(char *base, size_t at, size_t ring_bytes,
					const struct rtr__ext_event *e,
					const struct rtr__rec_plan *plan)
{
	struct rtr__ext_cursor c = {base, at, ring_bytes};
	unsigned nargs = plan->nargs;

	if (e->flags & RTR__F_TRACK) {
		uint64_t track = (uintptr_t)e->track;
		ext_put(&c, &track, sizeof(track));
	}
	if (rtr__kind_has_word(e->kind, e->flags))
		ext_put(&c, &e->word, sizeof(e->word));
	if (e->flags & RTR__F_NAME_COPY) {
		ext_put(&c, &plan->name_len, sizeof(plan->name_len));
		ext_put(&c, e->name, plan->name_len);
	}
	uint8_t types[RTR_MAX_ARGS];
	for (unsigned i = 0; i < nargs; i++)
		types[i] = (uint8_t)e->args[i].type;
	ext_put(&c, types, nargs);
	for (unsigned i = 0; i < nargs; i++) {
		const struct rtr_arg *a = &e->args[i];
		uint64_t pair[2] = {(uintptr_t)a->key, 0};
		switch (a->type) {
		case RTR_ARG_TYPE_I64:
		case RTR_ARG_TYPE_U64:
		case RTR_ARG_TYPE_F64:
			memcpy(&pair[1], &a->v, sizeof(pair[1]));
			break;
		case RTR_ARG_TYPE_BOOL:
			pair[1] = a->v.b;
			break;
		case RTR_ARG_TYPE_STR:
			pair[1] = (uintptr_t)a->v.str;
			break;
		case RTR_ARG_TYPE_STR_COPY:
		case RTR_ARG_TYPE_I64_ARRAY:
		case RTR_ARG_TYPE_I64_LISTS:
		case RTR_ARG_TYPE_STR_ARRAY:
		case RTR_ARG_TYPE_VALUE:
			pair[1] = plan->count[i];
			break;
		default:
			break; /* unknown type: written as null */
		}
		ext_put(&c, pair, sizeof(pair));
	}
	for (unsigned i = 0; i < nargs; i++) {
		const struct rtr_arg *a = &e->args[i];
		if (plan->blob[i] == 0)
			continue;
		if (a->type == RTR_ARG_TYPE_I64_LISTS) {
			ext_put(&c, a->v.i64s.lens, plan->count[i] * sizeof(uint32_t));
			ext_put(&c, a->v.i64s.v, plan->blob[i] - plan->count[i] * sizeof(uint32_t));
		} else if (a->type == RTR_ARG_TYPE_STR_ARRAY) {
			put_strings(&c, a->v.strs.v, plan->count[i]);
		} else {
			const void *bytes =
				a->type == RTR_ARG_TYPE_STR_COPY ? (const void *)a->v.str
				: a->type == RTR_ARG_TYPE_VALUE	 ? a->v.value.bytes
								 : (const void *)a->v.i64s.v;
			ext_put(&c, bytes, plan->blob[i]);
		}
	}
}

#endif
