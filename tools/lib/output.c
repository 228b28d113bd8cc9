/* SPDX-License-Identifier: MIT */
/*
 * Trace output of the tools (see output.h for the contract).
 *
 * Text is gathered in a BUFFER_BYTES buffer and written with write(2) when it
 * fills; for gzip it goes through deflate into the same kind of buffer instead.
 * A member ends at the end of a write that ends a line once GZIP_MEMBER_BYTES have
 * gone into it: the tools write whole lines, so members end on line boundaries.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define BUFFER_BYTES (256 * 1024)

struct output {
	char *path;  /* as given; NULL for standard output */
	char *final; /* the path, for the rename; NULL: written directly */
	char *tmp;   /* the temporary file, until renamed onto final */
	int fd;
	bool gzip;
	z_stream zs;
	bool zs_ready;
	uint64_t member_in; /* text bytes in the current gzip member */
	uint64_t bytes;
	unsigned char *buf; /* text (plain) or compressed bytes (gzip) */
	size_t len;
	char error[512];
};

static void set_error(struct output *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void set_error(struct output *o, const char *fmt, ...)
{
	va_list ap;

	if (o->error[0] != '\0')
		return;
	va_start(ap, fmt);
	vsnprintf(o->error, sizeof(o->error), fmt, ap);
	va_end(ap);
}

bool output_is_gzip(const struct output *out)
{
	return out->gzip;
}

bool output_path_is_gzip(const char *path)
{
	size_t n = strlen(path);

	return n > 3 && strcmp(path + n - 3, ".gz") == 0;
}

const char *output_name(const struct output *o)
{
	return o->path != NULL ? o->path : "<stdout>";
}

const char *output_error(const struct output *o)
{
	return o->error[0] != '\0' ? o->error : NULL;
}

uint64_t output_bytes(const struct output *o)
{
	return o->bytes;
}

/*
 * Where to write path. The tools never write through a symbolic link: a link
 * planted at an output's name (FILE.repaired.json, a piece of a split) would make
 * them replace whatever it points to.
 *  - A link to a FIFO or a character device (/dev/stdout, a pipe, /dev/null) is
 *    written into as it is; a link to anything else is refused (-ELOOP).
 *  - A FIFO or a character device is written into: renaming onto it would replace
 *    it. Any other file that is not regular is refused.
 *  - A regular file, or a new one, is written under a temporary name in the same
 *    directory (O_EXCL, by mkostemp) and renamed onto the path by output_commit():
 *    rename replaces a link put there meanwhile, never what it points to; and a
 *    reader of the same file keeps the old content until the new one is whole.
 */
static int open_target(struct output *o)
{
	struct stat sb;
	size_t n;
	mode_t mask;

	if (lstat(o->path, &sb) == 0) {
		bool link = S_ISLNK(sb.st_mode);

		if (link && stat(o->path, &sb) != 0)
			return -ELOOP; /* a dangling link: creating its target is writing through */
		if (S_ISFIFO(sb.st_mode) || S_ISCHR(sb.st_mode)) {
			o->fd = open(o->path, O_WRONLY | O_CLOEXEC | O_TRUNC);
			return o->fd >= 0 ? 0 : -errno;
		}
		if (link)
			return -ELOOP;
		if (!S_ISREG(sb.st_mode))
			return S_ISDIR(sb.st_mode) ? -EISDIR : -EINVAL;
	}
	o->final = strdup(o->path);
	if (o->final == NULL)
		return -ENOMEM;
	n = strlen(o->final);
	o->tmp = malloc(n + 16);
	if (o->tmp == NULL)
		return -ENOMEM;
	memcpy(o->tmp, o->final, n);
	memcpy(o->tmp + n, ".tmp.XXXXXX", 12);
	o->fd = mkostemp(o->tmp, O_CLOEXEC);
	if (o->fd < 0) {
		int err = errno;

		free(o->tmp);
		o->tmp = NULL;
		return -err;
	}
	mask = umask(0);
	umask(mask);
	/* mkostemp() makes it 0600; if this fails the file keeps that, which is safe. */
	(void)fchmod(o->fd, 0666 & ~mask);
	return 0;
}

const char *output_strerror(int err)
{
	if (err == -ELOOP)
		return "it is a symbolic link, and the tools do not write through one (name the "
		       "file itself, or remove the link)";
	return strerror(-err);
}

int output_open(const char *path, bool gzip, struct output **out)
{
	struct output *o = calloc(1, sizeof(*o));
	int err;

	*out = NULL;
	if (o == NULL)
		return -ENOMEM;
	o->fd = -1;
	o->gzip = gzip;
	o->buf = malloc(BUFFER_BYTES);
	if (o->buf == NULL) {
		output_free(o);
		return -ENOMEM;
	}
	if (strcmp(path, "-") == 0) {
		o->fd = STDOUT_FILENO;
	} else {
		o->path = strdup(path);
		if (o->path == NULL) {
			output_free(o);
			return -ENOMEM;
		}
		err = open_target(o);
		if (err != 0) {
			output_free(o);
			return err;
		}
	}
	if (gzip) {
		/* windowBits 15 + 16: a gzip wrapper; level 1 keeps pace with the reading. */
		if (deflateInit2(&o->zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
			output_free(o);
			return -ENOMEM;
		}
		o->zs_ready = true;
	}
	*out = o;
	return 0;
}

static int write_all(struct output *o, const unsigned char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(o->fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			set_error(o, "writing %s: %s", output_name(o), strerror(errno));
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int flush_buf(struct output *o)
{
	int rc = write_all(o, o->buf, o->len);

	o->len = 0;
	return rc;
}

/* Run deflate over the input set in o->zs until it is all taken (or the member ends). */
static int deflate_run(struct output *o, int flush)
{
	for (;;) {
		int ret;

		o->zs.next_out = o->buf + o->len;
		o->zs.avail_out = (uInt)(BUFFER_BYTES - o->len);
		ret = deflate(&o->zs, flush);
		o->len = BUFFER_BYTES - o->zs.avail_out;
		if (ret == Z_STREAM_ERROR) {
			set_error(o, "compressing %s: zlib stream error", output_name(o));
			return -1;
		}
		if (o->len == BUFFER_BYTES && flush_buf(o))
			return -1;
		if (flush == Z_FINISH ? ret == Z_STREAM_END : o->zs.avail_in == 0)
			return 0;
	}
}

static int end_member(struct output *o)
{
	if (deflate_run(o, Z_FINISH))
		return -1;
	deflateReset(&o->zs);
	o->member_in = 0;
	return 0;
}

int output_write(struct output *o, const void *p, size_t n)
{
	bool line_end = n > 0 && ((const char *)p)[n - 1] == '\n';

	if (o->error[0] != '\0')
		return -1;
	o->bytes += n;
	if (!o->gzip) {
		if (n >= BUFFER_BYTES) {
			if (flush_buf(o))
				return -1;
			return write_all(o, p, n);
		}
		if (BUFFER_BYTES - o->len < n && flush_buf(o))
			return -1;
		memcpy(o->buf + o->len, p, n);
		o->len += n;
		return 0;
	}
	while (n > 0) {
		/* zlib counts in uInt: hand it at most 1 GiB at a time. */
		size_t take = n < (1u << 30) ? n : (1u << 30);

		o->zs.next_in = (Bytef *)(uintptr_t)p;
		o->zs.avail_in = (uInt)take;
		if (deflate_run(o, Z_NO_FLUSH))
			return -1;
		o->member_in += take;
		p = (const char *)p + take;
		n -= take;
	}
	if (o->member_in >= GZIP_MEMBER_BYTES && line_end)
		return end_member(o);
	return 0;
}

int output_puts(struct output *o, const char *s)
{
	return output_write(o, s, strlen(s));
}

int output_commit(struct output *o)
{
	if (o->error[0] != '\0')
		return -1;
	if (o->gzip && (o->member_in > 0 || o->bytes == 0) && end_member(o))
		return -1;
	if (flush_buf(o))
		return -1;
	if (o->tmp == NULL) {
		return 0;
	}
	if (close(o->fd) != 0) {
		o->fd = -1;
		set_error(o, "writing %s: %s", o->path, strerror(errno));
		return -1;
	}
	o->fd = -1;
	if (rename(o->tmp, o->final) != 0) {
		set_error(o, "renaming %s to %s: %s", o->tmp, o->final, strerror(errno));
		return -1;
	}
	free(o->tmp);
	o->tmp = NULL;
	return 0;
}

void output_free(struct output *o)
{
	if (o == NULL)
		return;
	if (o->path != NULL && o->fd >= 0)
		close(o->fd);
	if (o->tmp != NULL)
		unlink(o->tmp);
	if (o->zs_ready)
		deflateEnd(&o->zs);
	free(o->tmp);
	free(o->final);
	free(o->path);
	free(o->buf);
	free(o);
}
