/* SPDX-License-Identifier: MIT */
/*
 * Where a time is in a plain trace of one event per line, and a reader over a range of
 * it (see seek.h).
 */
#include "seek.h"

#include "json.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROBE_BLOCK  (64u << 10)
#define PROBE_LINES  64
#define SEARCH_GRAIN (64u << 10)
#define FEED_BLOCK   (256u << 10)

/* The number after the first `"key":` in line[0 .. len), in ns. 0 or -1. */
static int line_number(const char *line, size_t len, const char *key, int64_t *ns)
{
	size_t klen = strlen(key);
	const char *p = memmem(line, len, key, klen), *end = line + len, *q;
	bool exact;

	if (p == NULL)
		return -1;
	p += klen;
	for (q = p; q < end && (strchr("0123456789.-+eE", *q) != NULL && *q != '\0'); q++)
		;
	return q > p ? json_parse_us(p, (size_t)(q - p), ns, &exact) : -1;
}

/* The time of the line line[0 .. len), or -1 when it has no "ts". */
static int line_time(const char *line, size_t len, int64_t *t)
{
	int64_t dur;

	if (line_number(line, len, "\"ts\":", t) != 0)
		return -1;
	if (memmem(line, len, "\"ph\":\"X\"", 8) != NULL &&
	    line_number(line, len, "\"dur\":", &dur) == 0 && dur > 0 && *t <= INT64_MAX - dur)
		*t += dur;
	return 0;
}

/* pread all of n bytes unless the file ends. The count, or -1. */
static ssize_t read_at(int fd, char *buf, size_t n, uint64_t off, uint64_t *bytes)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = pread(fd, buf + got, n - got, (off_t)(off + got));

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		if (k == 0)
			break;
		got += (size_t)k;
	}
	*bytes += got;
	return (ssize_t)got;
}

int seek_probe(int fd, uint64_t size, uint64_t off, struct seek_probe *p, uint64_t *bytes)
{
	size_t cap = PROBE_BLOCK;
	char *buf = malloc(cap);
	/* A line start at off counts: look for the '\n' before it. */
	uint64_t at = off > 0 ? off - 1 : 0;
	bool partial = off > 0;
	int rc = 0, lines = 0;

	if (buf == NULL)
		return -1;
	while (at < size && lines < PROBE_LINES) {
		ssize_t n = read_at(fd, buf, cap, at, bytes);
		char *nl;

		if (n <= 0) {
			rc = n < 0 ? -1 : 0;
			break;
		}
		nl = memchr(buf, '\n', (size_t)n);
		if (nl == NULL && (size_t)n == cap) {
			/* A line longer than the block: a bigger one, up to SEEK_MAX_LINE. */
			char *q = cap < SEEK_MAX_LINE ? realloc(buf, cap * 2) : NULL;

			if (q == NULL) {
				rc = -1;
				break;
			}
			buf = q;
			cap *= 2;
			continue;
		}
		if (partial) {
			if (nl == NULL)
				break; /* the file ends in this line */
			at += (uint64_t)(nl - buf) + 1;
			partial = false;
			continue;
		}
		/* The whole lines of the block, one after another. */
		for (char *line = buf; lines < PROBE_LINES;) {
			size_t left = (size_t)(buf + n - line);

			nl = memchr(line, '\n', left);
			if (nl == NULL && (size_t)n == cap)
				break; /* crosses the block's end: read again from it */
			if (nl == NULL)
				nl = buf + n; /* the last line, without its '\n' */
			if (*line == '{' && line_time(line, (size_t)(nl - line), &p->time) == 0) {
				p->line = at + (uint64_t)(line - buf);
				rc = 1;
				goto done;
			}
			lines++;
			line = nl + 1;
			if (line >= buf + n) {
				if ((size_t)n < cap)
					goto done; /* the end of the file */
				break;
			}
		}
		if (lines >= PROBE_LINES)
			break;
		/* at: the start of the first line not yet looked at. */
		{
			char *last = memrchr(buf, '\n', (size_t)n);

			at += (uint64_t)(last - buf) + 1;
		}
	}
done:
	free(buf);
	return rc;
}

int seek_before(int fd, uint64_t size, int64_t target, uint64_t *off, unsigned *probes,
		uint64_t *bytes)
{
	uint64_t lo = 0, hi = size;

	*off = 0;
	while (hi - lo > SEARCH_GRAIN) {
		uint64_t mid = lo + (hi - lo) / 2;
		struct seek_probe p;
		int rc = seek_probe(fd, size, mid, &p, bytes);

		(*probes)++;
		if (rc < 0)
			return -1;
		if (rc == 0 || p.line >= hi) {
			hi = mid;
		} else if (p.time < target) {
			lo = p.line;
			*off = p.line;
		} else {
			hi = mid;
		}
	}
	return 0;
}

/* ---------------------------------------------------------------- range feeds */

static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t k = write(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static void *feed_main(void *arg)
{
	struct range_feed *f = arg;
	char *buf = malloc(FEED_BLOCK);
	uint64_t off = f->from;
	sigset_t pipe_set;

	/* A reader that stops early closes the pipe: EPIPE here, not a SIGPIPE. */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, NULL);
	if (buf != NULL && (f->from == 0 || write_all(f->wfd, "[\n", 2) == 0)) {
		while (off < f->to) {
			uint64_t want = f->to - off < FEED_BLOCK ? f->to - off : FEED_BLOCK;
			ssize_t n = read_at(f->fd, buf, (size_t)want, off, &f->bytes);

			if (n <= 0 || write_all(f->wfd, buf, (size_t)n) != 0)
				break;
			off += (uint64_t)n;
		}
	}
	free(buf);
	close(f->wfd);
	return NULL;
}

int range_feed_open(struct range_feed *f, int fd, uint64_t from, uint64_t to)
{
	int p[2], err;

	memset(f, 0, sizeof(*f));
	f->fd = fd;
	f->from = from;
	f->to = to;
	if (pipe2(p, O_CLOEXEC) != 0)
		return -errno;
	f->rfd = p[0];
	f->wfd = p[1];
	snprintf(f->path, sizeof(f->path), "/dev/fd/%d", f->rfd);
	err = pthread_create(&f->thread, NULL, feed_main, f);
	if (err != 0) {
		close(p[0]);
		close(p[1]);
		return -err;
	}
	f->started = true;
	return 0;
}

void range_feed_close(struct range_feed *f)
{
	if (f->rfd >= 0)
		close(f->rfd);
	f->rfd = -1;
	if (f->started)
		pthread_join(f->thread, NULL);
	f->started = false;
}
