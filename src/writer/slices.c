/* SPDX-License-Identifier: MIT */
/* The writer's stack of open slices per thread: see slices.h. */
#include "writer/slices.h"

#include "common/jsontext.h"
#include "record/value.h"

#include <ringtrace.h>

#include <stdlib.h>
#include <string.h>

/* A packed list in text: its count and bytes, then the bytes of struct rtr__args. */
struct packed {
	uint32_t n, len;
};

struct rtr__slices *rtr__slices_new(void)
{
	struct rtr__slices *s = malloc(sizeof(*s));

	if (s != NULL) {
		s->depth = 0;
		s->overflow = 0;
		s->text_len = 0;
		s->unused = 0;
	}
	return s;
}

void rtr__slices_free(struct rtr__slices *s)
{
	free(s);
}

/* Append a packed list of a to text; false when it does not fit. */
static bool put_list(struct rtr__slices *s, const struct rtr__args *a)
{
	struct packed h = {a->n, a->len};

	if (sizeof(h) + a->len > RTR_SLICES_TEXT - s->text_len)
		return false;
	memcpy(s->text + s->text_len, &h, sizeof(h));
	memcpy(s->text + s->text_len + sizeof(h), a->types, a->len);
	s->text_len += (uint32_t)(sizeof(h) + a->len);
	return true;
}

/* The list packed at text + off into out; returns the bytes it takes. */
static uint32_t get_list(const struct rtr__slices *s, uint32_t off, struct rtr__args *out)
{
	struct packed h;

	memcpy(&h, s->text + off, sizeof(h));
	out->types = (const uint8_t *)s->text + off + sizeof(h);
	out->n = h.n;
	out->len = h.len;
	return (uint32_t)sizeof(h) + h.len;
}

void rtr__slices_push(struct rtr__slices *s, const char *name, const char *cat, const char *copy,
		      uint32_t copy_len, const struct rtr__args *args)
{
	if (RTR_UNLIKELY(s->overflow > 0 || s->depth == RTR_SLICES_DEPTH)) {
		s->overflow++;
		return;
	}
	struct rtr__open_slice *l = &s->level[s->depth++];
	l->name = copy != NULL ? NULL : name;
	l->cat = cat;
	l->copy_off = s->text_len;
	l->copy_len = 0;
	if (copy != NULL && copy_len <= RTR_SLICES_TEXT - s->text_len) {
		memcpy(s->text + s->text_len, copy, copy_len);
		s->text_len += copy_len;
		l->copy_len = copy_len;
	} else if (copy != NULL) {
		l->copy_len = UINT32_MAX;
	}
	l->bargs_off = s->text_len;
	l->bargs_len = 0;
	if (args != NULL && args->n > 0 && put_list(s, args))
		l->bargs_len = s->text_len - l->bargs_off;
	l->args_off = s->text_len;
	l->args_kept = 0;
	l->args_json = 0;
	l->held = l->continued = 0;
	l->ts = 0;
}

void rtr__slices_continued(struct rtr__args *out)
{
	/* a packed list of one: its type, then its pair {key, value} */
	static uint8_t list[1 + RTR__EXT_PAIR]; /* writer thread only */
	static const char key[] = "continued";
	uint64_t k = (uint64_t)(uintptr_t)key, v = 1;

	list[0] = RTR_ARG_TYPE_BOOL;
	memcpy(list + 1, &k, sizeof(k));
	memcpy(list + 1 + sizeof(k), &v, sizeof(v));
	out->types = list;
	out->n = 1;
	out->len = (uint32_t)sizeof(list);
}

bool rtr__slices_hold(struct rtr__slices *s, const char *name, const char *cat, const char *copy,
		      uint32_t copy_len, const struct rtr__args *args, uint64_t ts)
{
	size_t need = (copy != NULL ? copy_len : 0) +
		      (args != NULL && args->n > 0 ? sizeof(struct packed) + args->len : 0);

	if (s->overflow > 0 || s->depth == RTR_SLICES_DEPTH || need > RTR_SLICES_TEXT - s->text_len)
		return false;
	rtr__slices_push(s, name, cat, copy, copy_len, args);
	s->level[s->depth - 1].held = 1;
	s->level[s->depth - 1].ts = ts;
	return true;
}

bool rtr__slices_bargs(const struct rtr__slices *s, uint32_t i, struct rtr__args *out)
{
	if (s->level[i].bargs_len == 0)
		return false;
	get_list(s, s->level[i].bargs_off, out);
	return true;
}

uint32_t rtr__slices_added(const struct rtr__slices *s, uint32_t i, struct rtr__args *out,
			   uint32_t max)
{
	const struct rtr__open_slice *l = &s->level[i];
	uint32_t end = i + 1 < s->depth ? s->level[i + 1].copy_off : s->text_len;
	uint32_t n = 0;

	for (uint32_t off = l->args_off; off < end && n < max && n < l->args_kept; n++)
		off += get_list(s, off, &out[n]);
	return n;
}

/*
 * The bytes a list of arguments takes as JSON text, `"key":value` each with a comma
 * between: the measure of RTR_MAX_SCOPE_ARG_BYTES (ringtrace.h), whatever the
 * output format.
 */
size_t rtr__slices_json_bytes(const struct rtr__args *a)
{
	static char tmp[RTR_JSONTEXT_ESCAPE_BOUND(RTR_MAX_COPY) + 64]; /* writer thread only */
	const char *blob = rtr__args_blobs(a);
	size_t bytes = a->n > 0 ? a->n - 1 : 0;

	for (unsigned i = 0; i < a->n; i++) {
		const char *key;
		uint64_t v = rtr__args_get(a, i, &key);
		size_t klen = key != NULL ? strnlen(key, RTR_MAX_COPY) : 0;
		char *p = tmp;
		bytes +=
			(size_t)(rtr__jsontext_escape(tmp, key != NULL ? key : "", klen) - tmp) + 3;
		switch (a->types[i]) {
		case RTR_ARG_TYPE_I64:
			p = rtr__jsontext_i64(tmp, (int64_t)v);
			break;
		case RTR_ARG_TYPE_U64:
			p = rtr__jsontext_u64(tmp, v);
			break;
		case RTR_ARG_TYPE_F64: {
			double d;
			memcpy(&d, &v, sizeof(d));
			p = rtr__jsontext_f64(tmp, d);
			break;
		}
		case RTR_ARG_TYPE_BOOL:
			p = tmp + (v ? 4 : 5);
			break;
		case RTR_ARG_TYPE_STR:
			p = v == 0 ? tmp + 4
				   : rtr__jsontext_escape(
					     tmp, (const char *)(uintptr_t)v,
					     strnlen((const char *)(uintptr_t)v, RTR_MAX_COPY)) +
					     2;
			break;
		case RTR_ARG_TYPE_STR_COPY:
			p = v == UINT64_MAX ? tmp + 4 : rtr__jsontext_escape(tmp, blob, v) + 2;
			break;
		case RTR_ARG_TYPE_VALUE:
			p = rtr__value_json(tmp, blob, v);
			break;
		default: /* arrays: scope arguments are never one; their recorded bytes */
			p = tmp + rtr__args_blob_bytes(a->types[i], v, blob) + 2;
			break;
		}
		bytes += (size_t)(p - tmp);
		blob += rtr__args_blob_bytes(a->types[i], v, blob);
	}
	return bytes;
}

bool rtr__slices_add(struct rtr__slices *s, const struct rtr__args *args)
{
	if (s == NULL || s->depth == 0 || s->overflow > 0)
		return false;
	struct rtr__open_slice *top = &s->level[s->depth - 1];
	size_t json = rtr__slices_json_bytes(args) + (top->args_kept > 0);

	if (top->args_json + json > RTR_MAX_SCOPE_ARG_BYTES || !put_list(s, args))
		return false;
	top->args_json += (uint32_t)json;
	top->args_kept++;
	return true;
}
