/* SPDX-License-Identifier: MIT */
/*
 * The slices the writer has opened on a thread: every B it wrote whose E it has not,
 * innermost last. A viewer matches an E with the innermost open B of its thread, and
 * this stack is the same thing seen from the writer, so it knows what an E ends
 * without the producer saying: rtr_pop() records an E with no name, and the writer
 * gives it the name and category of the B on top. Arguments added to an open slice
 * (rtr_scope_arg_*) wait here until its E is written. A B's own arguments are kept
 * too, so that a cut (cut.c) can end each open slice where a file ends and begin it
 * again, with the same arguments, where the next one starts.
 *
 * A format that writes a slice as one line (JSON's X: struct rtr__format.holds_begins)
 * has its B held here instead of written: the level keeps the B's time, and its E
 * becomes the whole slice (event.c). Chrome DevTools pairs B and E lines on one stack
 * across every thread, in file order, so B/E lines of two threads that interleave
 * pair wrongly there; one X per slice cannot. A held B goes out as a line only where
 * the file must show it still open: a provisional close, a thread that exits, a stop
 * (cut.c). A B that cannot be held whole (past the depth, a name or arguments that
 * find no room) is written as recorded, and its E then ends it as an E.
 *
 * Everything is kept as recorded, in no output format: names as static strings'
 * pointers or copied bytes, arguments as packed lists (rtr__slices_args_at()), which
 * the format encodes when it writes the E or the cut's lines.
 *
 * Bounded: RTR_SLICES_DEPTH levels, and RTR_SLICES_TEXT bytes for copied names and
 * arguments together; a slice's added arguments take at most RTR_MAX_SCOPE_ARG_BYTES
 * measured as JSON text, as ringtrace.h promises. Levels opened past the depth are
 * counted (`overflow`) and known only by that count: an E that pops one is written as
 * recorded (a pop then has no name). An argument that finds no room is cut and
 * counted; a B's arguments that find none are not begun again after a cut.
 *
 * Writer thread only. Made at a thread's first B, freed with its ring or at the
 * session's end.
 */
#ifndef RTR_WRITER_SLICES_H
#define RTR_WRITER_SLICES_H

#include "common/compiler.h"
#include "writer/args.h"

#include <stddef.h>
#include <stdint.h>

#define RTR_SLICES_DEPTH 128
#define RTR_SLICES_TEXT	 (16 * 1024)
/* Most argument lists added to one slice that its E carries. */
#define RTR_SLICES_ADDED_MAX 512
/* The lists an E or a cut's line carries: the added ones, the E's own, "continued". */
#define RTR__ADDED_LISTS (RTR_SLICES_ADDED_MAX + 2)

struct rtr__open_slice {
	const char *name;   /* the B's static name; NULL when copied */
	const char *cat;    /* the B's category */
	uint32_t copy_off;  /* a copied name's bytes in text */
	uint32_t copy_len;  /* ... and their count; UINT32_MAX: the name did not fit */
	uint32_t bargs_off; /* the B's own arguments, one packed list */
	uint32_t bargs_len; /* ... its bytes; 0: none, or they did not fit */
	uint32_t args_off;  /* this level's added arguments start here in text */
	uint32_t args_kept; /* how many lists */
	uint32_t args_json; /* their bytes as JSON text, with a comma between two */
	uint8_t held;	    /* its B is not in the file: its E writes the whole slice */
	uint8_t continued;  /* held since a cut began it again in this file */
	uint16_t unused;
	uint64_t ts; /* ns on the trace clock: its B's, or the cut's that began it again */
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

/* A B was written: its static name or copied name (copy, copy_len), its category,
 * its own arguments (args->n 0: none). Counts a level past the depth. */
void rtr__slices_push(struct rtr__slices *s, const char *name, const char *cat, const char *copy,
		      uint32_t copy_len, const struct rtr__args *args);

/* The innermost open slice, or NULL (none open, or one past the depth). */
static inline const struct rtr__open_slice *rtr__slices_top(const struct rtr__slices *s)
{
	return s != NULL && s->depth > 0 && s->overflow == 0 ? &s->level[s->depth - 1] : NULL;
}

/* Level i's added arguments: up to `max` lists into out; returns how many. */
uint32_t rtr__slices_added(const struct rtr__slices *s, uint32_t i, struct rtr__args *out,
			   uint32_t max);

/* Level i's own arguments into out; false when it has none. */
bool rtr__slices_bargs(const struct rtr__slices *s, uint32_t i, struct rtr__args *out);

/* Keep a list of arguments for the innermost slice's E. Returns false when it cannot
 * be kept (no slice open, or no room): the caller counts it. */
bool rtr__slices_add(struct rtr__slices *s, const struct rtr__args *args);

/* A B to hold (its line not written): rtr__slices_push() at time ts, if the level
 * keeps all of it (within the depth, its name and arguments in text). False, having
 * done nothing, when it cannot: the B is then written. */
bool rtr__slices_hold(struct rtr__slices *s, const char *name, const char *cat, const char *copy,
		      uint32_t copy_len, const struct rtr__args *args, uint64_t ts);

/* rtr__slices_push() of the common B, inline: a static name, no arguments. False,
 * having done nothing, when the push is not that simple (past the depth). */
static inline bool rtr__slices_push_plain(struct rtr__slices *s, const char *name, const char *cat)
{
	if (RTR_UNLIKELY(s->overflow > 0 || s->depth == RTR_SLICES_DEPTH))
		return false;
	struct rtr__open_slice *l = &s->level[s->depth++];
	l->name = name;
	l->cat = cat;
	l->copy_off = l->bargs_off = l->args_off = s->text_len;
	l->copy_len = l->bargs_len = l->args_kept = l->args_json = 0;
	l->held = l->continued = 0;
	l->ts = 0;
	return true;
}

/* The bytes a list of arguments takes as JSON text, `"key":value` with a comma between
 * two: the measure of RTR_MAX_SCOPE_ARG_BYTES, whatever the output format. */
size_t rtr__slices_json_bytes(const struct rtr__args *a);

/* The list of one argument, "continued": true, that a held slice begun again by a cut
 * carries on its line (a static list: valid for the session). */
void rtr__slices_continued(struct rtr__args *out);

/* Whether level i's name is known: a static string, or copied bytes that fit. */
static inline bool rtr__slices_named(const struct rtr__open_slice *l)
{
	return l->name != NULL || l->copy_len != UINT32_MAX;
}

/* An E was written: forget the innermost slice. */
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

/* The fixed part of the line that ends an open slice, at most (its E: ids, time). */
#define RTR_SLICES_LINE_WEIGHT 192

/* What the lines ending s's open slices would take at most, for a segment's room
 * (files.c): a line's fixed part each, and the copied names and arguments. */
static inline uint64_t rtr__slices_weight(const struct rtr__slices *s)
{
	return s != NULL ? (uint64_t)s->depth * RTR_SLICES_LINE_WEIGHT + s->text_len : 0;
}

#endif
