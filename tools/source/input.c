/* SPDX-License-Identifier: MIT */
/*
 * The bytes of a trace input (see input.h).
 *
 * gzip: zlib with windowBits 15+32, reset after each member (Z_STREAM_END) so that
 * the next one, if any, starts where the last ended. A member that does not begin
 * with the magic's first byte ends the text: what is left is counted to the end of
 * the input and said (trailing). A member the input ends inside is a cut text, not
 * an error: inflate gave what it could.
 */
#include "input.h"

#include "progress.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int input_fail(struct input *in, enum trace_error error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int input_fail(struct input *in, enum trace_error error, const char *fmt, ...)
{
	va_list ap;

	in->error = error;
	va_start(ap, fmt);
	vsnprintf(in->message, sizeof(in->message), fmt, ap);
	va_end(ap);
	return -1;
}

int input_init(struct input *in, int fd, size_t raw_cap, size_t text_cap, struct progress *progress)
{
	memset(in, 0, sizeof(*in));
	in->fd = fd;
	in->progress = progress;
	in->raw_cap = raw_cap;
	in->text_cap = text_cap;
	in->raw = malloc(raw_cap);
	return in->raw != NULL ? 0 : -ENOMEM;
}

void input_free(struct input *in)
{
	if (in->zs_ready)
		inflateEnd(&in->zs);
	free(in->raw);
	free(in->out);
	in->raw = in->out = NULL;
}

static int read_raw(struct input *in, unsigned char *buf, size_t cap, size_t *got)
{
	*got = 0; /* on an error too: the callers' loops read it */
	for (;;) {
		ssize_t n = read(in->fd, buf, cap);

		if (n >= 0) {
			*got = (size_t)n;
			in->bytes += (uint64_t)n;
			progress_update(in->progress, in->bytes);
			return 0;
		}
		if (errno != EINTR)
			return input_fail(in, TRACE_ERR_IO, "read: %s", strerror(errno));
	}
}

/* Bytes after the last gzip member: count them to the end, and note what they were. */
static int gzip_trailing(struct input *in)
{
	uint64_t n = in->zs.avail_in, nonzero = 0;
	size_t got;

	for (uInt i = 0; i < in->zs.avail_in; i++)
		nonzero += in->zs.next_in[i] != 0;
	in->zs.avail_in = 0;
	for (;;) {
		if (read_raw(in, in->raw, in->raw_cap, &got))
			return -1;
		if (got == 0)
			break;
		n += got;
		for (size_t i = 0; i < got; i++)
			nonzero += in->raw[i] != 0;
	}
	in->raw_done = true;
	in->trailing = true;
	in->trailing_bytes = n;
	in->trailing_nonzero = nonzero > 0;
	return 0;
}

/* The next text of gzip input into dst[0 .. cap): its length, 0 at the end, -1. */
static ssize_t inflate_text(struct input *in, unsigned char *dst, size_t cap)
{
	for (;;) {
		size_t produced;
		int ret;

		if (in->zs.avail_in == 0) {
			size_t got;

			if (in->raw_done)
				break;
			if (read_raw(in, in->raw, in->raw_cap, &got))
				return -1;
			if (got == 0) {
				in->raw_done = true;
				break;
			}
			in->zs.next_in = in->raw;
			in->zs.avail_in = (uInt)got;
		}
		if (!in->member_open) {
			if (in->zs.next_in[0] != 0x1f) {
				if (gzip_trailing(in))
					return -1;
				break;
			}
			in->member_open = true;
			in->gzip_members++;
		}
		in->zs.next_out = dst;
		in->zs.avail_out = (uInt)cap;
		ret = inflate(&in->zs, Z_NO_FLUSH);
		produced = cap - in->zs.avail_out;
		if (ret == Z_STREAM_END) {
			/* One member done; the next one, if any, starts at next_in. */
			in->member_open = false;
			inflateReset(&in->zs);
		} else if (ret == Z_MEM_ERROR) {
			return input_fail(in, TRACE_ERR_NOMEM, "out of memory");
		} else if (ret != Z_OK && !(ret == Z_BUF_ERROR && in->zs.avail_in == 0)) {
			return input_fail(in, TRACE_ERR_GZIP,
					  "corrupt gzip data in member %llu (input byte %llu): %s",
					  (unsigned long long)in->gzip_members,
					  (unsigned long long)(in->bytes - in->zs.avail_in),
					  in->zs.msg != NULL ? in->zs.msg : "inflate failed");
		}
		if (produced > 0)
			return (ssize_t)produced;
	}
	if (in->member_open)
		in->gzip_cut = true;
	return 0;
}

/* The first block: at least want text bytes, unless the input is shorter. Enough raw
 * bytes are read to tell gzip, even from a pipe. 0, or -1. */
static int first_block(struct input *in, size_t want)
{
	size_t got = 0, more;

	in->started = true;
	do {
		if (read_raw(in, in->raw + got, in->raw_cap - got, &more))
			return -1;
		got += more;
	} while (more > 0 && got < 4);
	in->raw_done = more == 0;
	if (got >= 2 && in->raw[0] == 0x1f && in->raw[1] == 0x8b) {
		size_t have = 0;
		ssize_t n;

		in->gzip = true;
		if (inflateInit2(&in->zs, 15 + 32) != Z_OK)
			return input_fail(in, TRACE_ERR_NOMEM, "out of memory");
		in->zs_ready = true;
		in->out = malloc(in->text_cap);
		if (in->out == NULL)
			return input_fail(in, TRACE_ERR_NOMEM, "out of memory");
		in->zs.next_in = in->raw;
		in->zs.avail_in = (uInt)got;
		do {
			n = inflate_text(in, in->out + have, in->text_cap - have);
			if (n < 0 && have == 0)
				return -1;
			in->failed = n < 0; /* said after the text before it */
			have += n > 0 ? (size_t)n : 0;
		} while (n > 0 && have < want);
		in->block = in->out;
		in->len = have;
	} else {
		while (got < want && !in->raw_done) {
			if (read_raw(in, in->raw + got, in->raw_cap - got, &more)) {
				in->failed = true; /* said after the text before it */
				break;
			}
			got += more;
			in->raw_done = more == 0;
		}
		in->block = in->raw;
		in->len = got;
	}
	in->pos = 0;
	return 0;
}

/* The next block at hand, when the last one is all taken. 0, or -1. */
static int refill(struct input *in)
{
	ssize_t n;

	if (!in->started)
		return first_block(in, 1);
	if (in->failed)
		return -1;
	if (in->gzip) {
		n = inflate_text(in, in->out, in->text_cap);
	} else if (in->raw_done) {
		n = 0;
	} else {
		size_t got;

		if (read_raw(in, in->raw, in->raw_cap, &got))
			return -1;
		in->raw_done = got == 0;
		n = (ssize_t)got;
	}
	if (n < 0)
		return -1;
	in->block = in->gzip ? in->out : in->raw;
	in->len = (size_t)n;
	in->pos = 0;
	return 0;
}

int input_peek(struct input *in, size_t want, const unsigned char **p, size_t *len)
{
	if (!in->started && first_block(in, want < in->text_cap ? want : in->text_cap) != 0)
		return -1;
	*p = in->block + in->pos;
	*len = in->len - in->pos;
	return 0;
}

int input_next(struct input *in, unsigned char **p, size_t *len)
{
	if ((!in->started || in->pos == in->len) && refill(in) != 0)
		return -1;
	*p = in->block + in->pos;
	*len = in->len - in->pos;
	in->pos = in->len;
	return 0;
}

int input_read(struct input *in, void *dst, size_t cap, size_t *got)
{
	size_t n;

	if ((!in->started || in->pos == in->len) && refill(in) != 0)
		return -1;
	n = in->len - in->pos < cap ? in->len - in->pos : cap;
	memcpy(dst, in->block + in->pos, n);
	in->pos += n;
	*got = n;
	return 0;
}
