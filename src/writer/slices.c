/* SPDX-License-Identifier: MIT */
/* The writer's stack of open slices per thread: see slices.h. */
#include "writer/slices.h"

#include <ringtrace.h>

#include <stdlib.h>
#include <string.h>

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

void rtr__slices_push_full(struct rtr__slices *s, uint64_t name, uint64_t cat, const char *copy,
			   uint32_t copy_len, const char *bargs, size_t bargs_len)
{
	if (s->overflow > 0 || s->depth == RTR_SLICES_DEPTH) {
		s->overflow++;
		return;
	}
	struct rtr__open_slice *l = &s->level[s->depth++];
	l->name = copy != NULL ? 0 : name;
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
	if (bargs_len > 0 && bargs_len <= RTR_SLICES_TEXT - s->text_len) {
		memcpy(s->text + s->text_len, bargs, bargs_len);
		s->text_len += (uint32_t)bargs_len;
		l->bargs_len = (uint32_t)bargs_len;
	}
	l->args_off = s->text_len;
	l->args_kept = 0;
}

static int add_arg(struct rtr__slices *s, const char *json, size_t len, int sep)
{
	if (s == NULL || s->depth == 0 || s->overflow > 0)
		return 0;
	struct rtr__open_slice *top = &s->level[s->depth - 1];
	size_t comma = sep && top->args_kept > 0;
	size_t kept = s->text_len - top->args_off;

	if (kept + comma + len > RTR_MAX_SCOPE_ARG_BYTES ||
	    comma + len > RTR_SLICES_TEXT - s->text_len)
		return 0;
	if (comma)
		s->text[s->text_len++] = ',';
	memcpy(s->text + s->text_len, json, len);
	s->text_len += (uint32_t)len;
	top->args_kept++;
	return 1;
}

int rtr__slices_add_arg(struct rtr__slices *s, const char *json, size_t len)
{
	return add_arg(s, json, len, 1);
}

int rtr__slices_add_raw(struct rtr__slices *s, const char *bytes, size_t len)
{
	return add_arg(s, bytes, len, 0);
}
