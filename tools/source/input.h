/* SPDX-License-Identifier: MIT */
/*
 * The bytes of a trace input: a file or standard input, read(2) in blocks, inflated
 * when its first two bytes are the gzip magic (not its name). The recorder's files
 * of many concatenated gzip members read as one stream; bytes after the last member
 * are not read as text but counted and said (trailing); a member cut short ends the
 * stream (gzip_cut), as a cut file does. What the JSON reader takes as its text and
 * the .pftrace decoder as its stream; nothing needs to seek, so a pipe reads as a
 * file does, and the first bytes can be looked at (input_peek()) before they are
 * taken, for telling the format.
 *
 * Memory: the two buffers given to input_init(), never more.
 *
 * Thread safety: an input is used by one thread at a time.
 */
#ifndef RTR_TOOLS_SOURCE_INPUT_H
#define RTR_TOOLS_SOURCE_INPUT_H

#include "event.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

struct progress;

struct input {
	int fd;
	struct progress *progress; /* told the bytes read; may be NULL */
	unsigned char *raw;	   /* read(2)'s buffer, raw_cap bytes */
	unsigned char *out;	   /* inflate's, text_cap bytes, when gzip */
	size_t raw_cap, text_cap;
	z_stream zs;
	bool zs_ready, member_open;
	bool started;  /* the first block was read */
	bool raw_done; /* read(2) returned 0 */
	bool failed;   /* the error below, met while the first block was read */

	/* The block at hand: block[pos .. len) is not taken yet. */
	unsigned char *block;
	size_t len, pos;

	/* What it saw. */
	bool gzip;		 /* the input is gzip */
	bool gzip_cut;		 /* its last member was cut short */
	uint64_t gzip_members;	 /* members begun */
	uint64_t bytes;		 /* read from the file */
	bool trailing;		 /* bytes after the last gzip member, ignored: */
	uint64_t trailing_bytes; /* how many */
	bool trailing_nonzero;	 /* not all of them zero */

	/* Why input_next() or input_read() returned -1: TRACE_ERR_IO, _GZIP or _NOMEM. */
	enum trace_error error;
	char message[256];
};

/* Read fd (not closed by input_free()) through buffers of raw_cap and text_cap bytes
 * (text_cap at least the most input_peek() is asked for). 0, or -ENOMEM. */
int input_init(struct input *in, int fd, size_t raw_cap, size_t text_cap,
	       struct progress *progress);

void input_free(struct input *in);

/* The first text bytes, at least want of them unless the text is shorter, not taken:
 * the next input_next() or input_read() begins with them. 0, or -1. */
int input_peek(struct input *in, size_t want, const unsigned char **p, size_t *len);

/* The next block of text, taken (writable until the next call); *len 0 at the end.
 * 0, or -1 (error and message say why). */
int input_next(struct input *in, unsigned char **p, size_t *len);

/* Up to cap bytes of text into dst, taken; *got 0 at the end. 0, or -1. */
int input_read(struct input *in, void *dst, size_t cap, size_t *got);

#endif /* RTR_TOOLS_SOURCE_INPUT_H */
