/* SPDX-License-Identifier: MIT */
/*
 * The record format's out-of-line halves (the layout: record.h): measuring and
 * writing an event of any shape, for the producer's general path, and decoding
 * continuation bytes, for the writer.
 *
 * Both sides go field by field in the same order, so the two functions at either end
 * of a field read alike. The producer's copy splits only at the ring's wrap, so
 * fixed-size fields become plain stores; the writer is handed the bytes contiguous
 * (rtr__ring_ext() copies a wrapped event whole) and never reads past them.
 */
#include "record/record.h"

#include "common/compiler.h"

#include <string.h>

/* ------------------------------------------------------------------------- */
/* Encoding                                                                   */

/*
 * The bytes an argument adds after the pairs, and the count its pair records. Arrays
 * are cut to whole values (whole lists) within RTR_MAX_COPY bytes, like strings.
 */
static uint32_t arg_blob(const struct rtr_arg *a, uint64_t *count)
{
	switch (a->type) {
	case RTR_ARG_TYPE_STR_COPY:
		if (a->v.str == NULL) {
			*count = UINT64_MAX;
			return 0;
		}
		*count = strnlen(a->v.str, RTR_MAX_COPY);
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

uint32_t rtr__rec_measure(const struct rtr__ext_event *e, struct rtr__rec_plan *plan)
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
 * ring unless they wrap past its last slot; put() copies straight into the slots and
 * splits only at the wrap.
 */
struct ext_cursor {
	char *base;	   /* the ring's first slot */
	size_t at;	   /* byte offset of the next byte from base */
	size_t ring_bytes; /* a power of two */
};

static inline void put(struct ext_cursor *c, const void *src, size_t len)
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
static void put_strings(struct ext_cursor *c, const char *const *items, uint64_t n)
{
	size_t bytes = 0;

	for (uint64_t k = 0; k < n; k++) {
		size_t room = RTR_MAX_COPY - bytes - sizeof(uint32_t);
		uint32_t len = UINT32_MAX;
		if (items[k] != NULL)
			len = (uint32_t)strnlen(items[k], room);
		put(c, &len, sizeof(len));
		if (items[k] != NULL)
			put(c, items[k], len);
		bytes += sizeof(uint32_t) + (items[k] != NULL ? len : 0);
	}
}

void rtr__rec_put_ext(char *base, size_t at, size_t ring_bytes, const struct rtr__ext_event *e,
		      const struct rtr__rec_plan *plan)
{
	struct ext_cursor c = {base, at, ring_bytes};
	unsigned nargs = plan->nargs;

	if (e->flags & RTR__F_TRACK) {
		uint64_t track = (uintptr_t)e->track;
		put(&c, &track, sizeof(track));
	}
	if (rtr__kind_has_word(e->kind, e->flags))
		put(&c, &e->word, sizeof(e->word));
	if (e->flags & RTR__F_NAME_COPY) {
		put(&c, &plan->name_len, sizeof(plan->name_len));
		put(&c, e->name, plan->name_len);
	}
	uint8_t types[RTR_MAX_ARGS];
	for (unsigned i = 0; i < nargs; i++)
		types[i] = (uint8_t)e->args[i].type;
	put(&c, types, nargs);
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
			pair[1] = plan->count[i];
			break;
		default:
			break; /* unknown type: written as null */
		}
		put(&c, pair, sizeof(pair));
	}
	for (unsigned i = 0; i < nargs; i++) {
		const struct rtr_arg *a = &e->args[i];
		if (plan->blob[i] == 0)
			continue;
		if (a->type == RTR_ARG_TYPE_I64_LISTS) {
			put(&c, a->v.i64s.lens, plan->count[i] * sizeof(uint32_t));
			put(&c, a->v.i64s.v, plan->blob[i] - plan->count[i] * sizeof(uint32_t));
		} else if (a->type == RTR_ARG_TYPE_STR_ARRAY) {
			put_strings(&c, a->v.strs.v, plan->count[i]);
		} else {
			put(&c,
			    a->type == RTR_ARG_TYPE_STR_COPY ? (const void *)a->v.str
							     : (const void *)a->v.i64s.v,
			    plan->blob[i]);
		}
	}
}

/* ------------------------------------------------------------------------- */
/* Decoding                                                                   */

/* The bytes of the blob of an argument (its pair's value `val`) at `blob`, `room` of
 * them readable; SIZE_MAX when the blob does not fit or breaks the producer's limits. */
static size_t blob_bytes(uint8_t type, uint64_t val, const char *blob, size_t room)
{
	size_t bytes = 0;

	switch (type) {
	case RTR_ARG_TYPE_STR_COPY:
		return val == UINT64_MAX ? 0 : val <= RTR_MAX_COPY ? (size_t)val : SIZE_MAX;
	case RTR_ARG_TYPE_I64_ARRAY:
		return val <= RTR_MAX_COPY / sizeof(int64_t) ? (size_t)val * sizeof(int64_t)
							     : SIZE_MAX;
	case RTR_ARG_TYPE_I64_LISTS:
		if (val > RTR_MAX_COPY / sizeof(uint32_t) || val * sizeof(uint32_t) > room)
			return SIZE_MAX;
		for (uint64_t k = 0; k < val; k++) {
			uint32_t len = rtr__rec_u32(blob + k * sizeof(len));
			bytes += sizeof(len) + (size_t)len * sizeof(int64_t);
			if (bytes > RTR_MAX_COPY)
				return SIZE_MAX;
		}
		return bytes;
	case RTR_ARG_TYPE_STR_ARRAY:
		for (uint64_t k = 0; k < val; k++) {
			uint32_t len;
			if (bytes + sizeof(len) > room || bytes + sizeof(len) > RTR_MAX_COPY)
				return SIZE_MAX;
			len = rtr__rec_u32(blob + bytes);
			bytes += sizeof(len) + (len == UINT32_MAX ? 0 : len);
			if (len != UINT32_MAX && bytes > RTR_MAX_COPY)
				return SIZE_MAX;
		}
		return bytes;
	default:
		return 0;
	}
}

bool rtr__rec_decode(const struct rtr__rec *rec, const char *ext, struct rtr__rec_view *v)
{
	size_t off = 0, len = rec->ext;

	memset(v, 0, sizeof(*v));
	if (rec->flags & RTR__F_TRACK) {
		uint64_t track;
		if (len - off < sizeof(track))
			return false;
		memcpy(&track, ext, sizeof(track));
		v->track = (const struct rtr_track *)(uintptr_t)track;
		off += sizeof(track);
	}
	if (rtr__kind_has_word(rec->kind, rec->flags)) {
		if (len - off < sizeof(v->word))
			return false;
		memcpy(&v->word, ext + off, sizeof(v->word));
		off += sizeof(v->word);
	}
	if (rec->flags & RTR__F_NAME_COPY) {
		if (len - off < sizeof(v->name_len))
			return false;
		memcpy(&v->name_len, ext + off, sizeof(v->name_len));
		off += sizeof(v->name_len);
		if (v->name_len > RTR_MAX_COPY || len - off < v->name_len)
			return false;
		v->name = ext + off;
		off += v->name_len;
	}
	if (len - off < (size_t)rec->nargs * RTR__EXT_ARG)
		return false;
	v->types = (const uint8_t *)ext + off;
	off += rec->nargs;
	v->pairs = ext + off;
	off += (size_t)rec->nargs * RTR__EXT_PAIR;
	v->strings = ext + off;
	for (unsigned i = 0; i < rec->nargs; i++) {
		uint64_t key, val = rtr__rec_arg(v, i, &key);
		size_t bytes = blob_bytes(v->types[i], val, ext + off, len - off);
		if (bytes > len - off)
			return false;
		off += bytes;
	}
	return off == len;
}
