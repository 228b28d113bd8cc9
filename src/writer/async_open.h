/* SPDX-License-Identifier: MIT */
/*
 * The async spans the writer has opened: every "b" it wrote whose "e" it has not, so
 * that a cut (a new segment, a snapshot, a signal) can end them where the file ends
 * and begin them again where the next one starts, as it does for the threads' slices
 * (slices.h).
 *
 * A span is kept as recorded, in no output format: its category and id (the key, as
 * viewers match them), its name (a static string's pointer, or the copied bytes), the
 * thread or lane it was on, and its arguments as a packed list. Spans of one key nest,
 * and an "e" ends the newest.
 *
 * Bounded: RTR_ASYNC_OPEN_MAX spans of RTR_ASYNC_TEXT_MAX bytes of copied name and
 * arguments. A span past the count, or whose copied name does not fit, is not kept
 * (counted in `untracked`); arguments past the bytes are left off the copy (counted
 * in `args_cut`). Memory is mapped at the first "b". Writer thread only.
 */
#ifndef RTR_WRITER_ASYNC_OPEN_H
#define RTR_WRITER_ASYNC_OPEN_H

#include "writer/args.h"

#include <stddef.h>
#include <stdint.h>

#define RTR_ASYNC_OPEN_MAX 1024
#define RTR_ASYNC_TEXT_MAX 448
/* What the line ending an open span would take at most, for a segment's room. */
#define RTR_ASYNC_WEIGHT (RTR_ASYNC_TEXT_MAX + 96)

/* An async span as its "b" was written. */
struct rtr__async_desc {
	const char *cat; /* the key: the category's pointer and the id */
	uint64_t id;
	const char *name;  /* a static string, or copied bytes */
	uint32_t name_len; /* with copied */
	int copied;
	int on_track; /* tid and pid are a track's lane's */
	int32_t tid;
	uint32_t pid;
	struct rtr__args args; /* its own (n 0: none) */
};

struct rtr__async_span {
	const char *cat;
	uint64_t id;
	uint64_t seq;	  /* order of opening; 0: a free slot */
	const char *name; /* static; NULL when copied into text */
	int32_t tid;
	uint32_t pid;
	uint8_t copied, on_track;
	uint16_t name_len, args_len; /* the copied name, then the packed arguments, in text */
	char text[RTR_ASYNC_TEXT_MAX];
};

struct rtr__async_open {
	struct rtr__async_span *slots; /* 2 * RTR_ASYNC_OPEN_MAX, open addressing */
	uint32_t count;
	uint64_t next_seq;
	uint64_t untracked; /* "b" not kept: the table was full */
	uint64_t args_cut;  /* kept without their arguments: too long */
	uint64_t lost;	    /* "e" that found no span (begun before the session) */
};

/* A "b" was written. */
void rtr__async_open_add(struct rtr__async_open *t, const struct rtr__async_desc *d);
/* An "e" was written: forget the newest span of the key. */
void rtr__async_open_end(struct rtr__async_open *t, const char *cat, uint64_t id);
/* The open spans, oldest first (order 1) or newest first (order -1): n of them into
 * out (at most RTR_ASYNC_OPEN_MAX). */
size_t rtr__async_open_list(const struct rtr__async_open *t, int order,
			    const struct rtr__async_span **out);
/* Span s as its "b" described it; the name's and arguments' views point into s. */
void rtr__async_open_desc(const struct rtr__async_span *s, struct rtr__async_desc *d);
void rtr__async_open_free(struct rtr__async_open *t);

#endif
