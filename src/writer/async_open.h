/* SPDX-License-Identifier: MIT */
/*
 * The async spans the writer has opened: every "b" line it wrote whose "e" line it
 * has not, so that a cut (a new segment, a snapshot, a signal) can end them where the
 * file ends and begin them again where the next one starts, as it does for the
 * threads' slices (slices.h).
 *
 * A span is kept as the text of its "b" line in two parts: the head up to "ts":, and
 * the rest after the timestamp up to the arguments (the id, pid and tid), plus the
 * arguments' own text; a cut writes the line again with another timestamp and a
 * flag added to the arguments. Keyed by (category, id), as viewers match them;
 * spans of one key nest, and an "e" ends the newest.
 *
 * Bounded: RTR_ASYNC_OPEN_MAX spans of RTR_ASYNC_LINE_MAX bytes. A span past the
 * count is not kept (counted in `untracked`); arguments past the bytes are left off
 * the copy (counted in `args_cut`). Memory is mapped at the first "b" line.
 * Writer thread only.
 */
#ifndef RTR_WRITER_ASYNC_OPEN_H
#define RTR_WRITER_ASYNC_OPEN_H

#include <stddef.h>
#include <stdint.h>

#define RTR_ASYNC_OPEN_MAX 1024
#define RTR_ASYNC_LINE_MAX 480

struct rtr__async_span {
	uint64_t cat, id; /* the key: the record's category pointer and id */
	uint64_t seq;	  /* order of opening; 0: a free slot */
	uint16_t head_len, rest_len, args_len;
	char text[RTR_ASYNC_LINE_MAX]; /* head, rest, args, one after the other */
};

struct rtr__async_open {
	struct rtr__async_span *slots; /* 2 * RTR_ASYNC_OPEN_MAX, open addressing */
	uint32_t count;
	uint64_t next_seq;
	uint64_t untracked; /* "b" lines not kept: the table was full */
	uint64_t args_cut;  /* kept without their arguments: too long */
	uint64_t lost;	    /* "e" lines that found no span (begun before the session) */
};

/* A "b" line was written: its head (through "ts":), rest (after the timestamp, up to
 * the arguments) and arguments (inside the braces; len 0 for none). */
void rtr__async_open_add(struct rtr__async_open *t, uint64_t cat, uint64_t id, const char *head,
			 size_t head_len, const char *rest, size_t rest_len, const char *args,
			 size_t args_len);
/* An "e" line was written: forget the newest span of the key. */
void rtr__async_open_end(struct rtr__async_open *t, uint64_t cat, uint64_t id);
/* The open spans, oldest first (order 1) or newest first (order -1): n of them into
 * out (at most RTR_ASYNC_OPEN_MAX). */
size_t rtr__async_open_list(const struct rtr__async_open *t, int order,
			    const struct rtr__async_span **out);
void rtr__async_open_free(struct rtr__async_open *t);

#endif
