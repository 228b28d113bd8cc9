/* SPDX-License-Identifier: MIT */
/*
 * The slices the writer has opened on a thread: every B line it wrote whose E line it
 * has not, innermost last. A viewer matches an E with the innermost open B of its
 * thread, and this stack is the same thing seen from the writer, so it knows what an E
 * ends without the producer saying: rtr_pop() records an E with no name, and the
 * writer gives it the name and category of the B on top. Arguments added to an open
 * slice (rtr_scope_arg_*) wait here, encoded, until its E is written. A B's own
 * arguments are kept too, encoded, so that a cut (cut.c) can end each open slice
 * where a file ends and begin it again, with the same arguments, where the next
 * one starts.
 *
 * Bounded: RTR_SLICES_DEPTH levels, and RTR_SLICES_TEXT bytes for copied names and
 * waiting arguments together. Levels opened past the depth are counted (`overflow`)
 * and known only by that count: an E that pops one is written as recorded (a pop then
 * has no name). An argument that finds no room is cut and counted.
 *
 * Writer thread only. Made at a thread's first B line, freed with its ring or at the
 * session's end.
 */
#ifndef RTR_WRITER_SLICES_H
#define RTR_WRITER_SLICES_H

#include "common/compiler.h"

#include <stddef.h>
#include <stdint.h>

#define RTR_SLICES_DEPTH 128
#define RTR_SLICES_TEXT	 (16 * 1024)

struct rtr__open_slice {
	uint64_t name;	    /* the B's static name (its record's a); 0 when copied */
	uint64_t cat;	    /* the B's category (its record's b) */
	uint32_t copy_off;  /* a copied name's raw bytes in text */
	uint32_t copy_len;  /* ... and their count; UINT32_MAX: the name did not fit */
	uint32_t bargs_off; /* the B's own arguments' text, `"k":v,...` */
	uint32_t bargs_len; /* ... its length; 0: none, or they did not fit */
	uint32_t args_off;  /* this level's waiting arguments start here in text */
	uint32_t args_kept; /* how many of them */
};

struct rtr__slices {
	uint32_t depth;	   /* levels in level[] */
	uint32_t overflow; /* levels open beyond RTR_SLICES_DEPTH */
	uint32_t text_len;
	uint32_t unused;
	struct rtr__open_slice level[RTR_SLICES_DEPTH];
	char text[RTR_SLICES_TEXT];
};

/* A new, empty stack, or NULL without memory (the writer then does without). */
struct rtr__slices *rtr__slices_new(void);
void rtr__slices_free(struct rtr__slices *s);

/* A B line with a copied name or arguments (out of line: slices.c): name and cat as
 * rtr__slices_push(), bargs its arguments' text (bargs_len 0: none). Counts a level
 * past the depth. */
void rtr__slices_push_full(struct rtr__slices *s, uint64_t name, uint64_t cat, const char *copy,
			   uint32_t copy_len, const char *bargs, size_t bargs_len);

/* A B line was written: name/cat from its record, copy/copy_len its copied name (or
 * NULL). */
static inline void rtr__slices_push(struct rtr__slices *s, uint64_t name, uint64_t cat,
				    const char *copy, uint32_t copy_len)
{
	if (RTR_UNLIKELY(s->overflow > 0 || s->depth == RTR_SLICES_DEPTH)) {
		s->overflow++;
		return;
	}
	if (RTR_UNLIKELY(copy != NULL)) {
		rtr__slices_push_full(s, 0, cat, copy, copy_len, NULL, 0);
		return;
	}
	struct rtr__open_slice *l = &s->level[s->depth++];
	l->name = name;
	l->cat = cat;
	l->copy_off = s->text_len;
	l->copy_len = 0;
	l->bargs_off = s->text_len;
	l->bargs_len = 0;
	l->args_off = s->text_len;
	l->args_kept = 0;
}

/* The innermost open slice, or NULL (none open, or one past the depth). */
static inline const struct rtr__open_slice *rtr__slices_top(const struct rtr__slices *s)
{
	return s != NULL && s->depth > 0 && s->overflow == 0 ? &s->level[s->depth - 1] : NULL;
}

/* The waiting arguments of the innermost slice, as `"k":v,"k2":v2` (len 0: none). */
static inline const char *rtr__slices_args(const struct rtr__slices *s, size_t *len)
{
	const struct rtr__open_slice *top = rtr__slices_top(s);

	*len = top != NULL ? s->text_len - top->args_off : 0;
	return top != NULL ? s->text + top->args_off : NULL;
}

/* The same for bytes kept as they are, with nothing between two (a protobuf
 * encoding's repeated fields). */
int rtr__slices_add_raw(struct rtr__slices *s, const char *bytes, size_t len);

/* An E line was written: forget the innermost slice. */
static inline void rtr__slices_pop(struct rtr__slices *s)
{
	if (RTR_UNLIKELY(s->overflow > 0)) {
		s->overflow--;
		return;
	}
	if (s->depth == 0)
		return; /* an E with no B: the viewer judges it */
	/* what this level kept, its name and arguments, is the end of text */
	s->text_len = s->level[--s->depth].copy_off;
}

/* Keep one argument for the innermost slice's E: its JSON text `"k":v`. Returns
 * false when it cannot be kept (no slice open, or no room): the caller counts it. */
int rtr__slices_add_arg(struct rtr__slices *s, const char *json, size_t len);

#endif
