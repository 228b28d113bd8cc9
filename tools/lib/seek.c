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

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

/* -------------------------------------------------------------------- glances */

/* The end of the JSON number at p (up to end): past its characters. */
static const char *number_end(const char *p, const char *end)
{
	while (p < end && ((*p >= '0' && *p <= '9') || *p == '.' || *p == '-' || *p == '+' ||
			   *p == 'e' || *p == 'E'))
		p++;
	return p;
}

/* The number at p (up to end), followed by ',' or '}', in ns into *ns, as
 * json_parse_us() reads it (its short form, the recorder's, inline); the byte after
 * it, or NULL when it is not one. */
static const char *glance_number(const char *p, const char *end, int64_t *ns)
{
	static const uint64_t scale[] = {1000, 100, 10, 1};
	const char *q = p;
	uint64_t v = 0, fraction = 0;
	unsigned digits = 0, decimals = 0;
	bool exact;

	for (; q < end && *q >= '0' && *q <= '9' && digits < 16; q++, digits++)
		v = v * 10 + (uint64_t)(*q - '0');
	if (digits >= 1 && digits <= 15 && (digits == 1 || *p != '0')) {
		bool whole = true;

		if (q < end && *q == '.') {
			for (q++; q < end && *q >= '0' && *q <= '9' && decimals < 4;
			     q++, decimals++)
				fraction = fraction * 10 + (uint64_t)(*q - '0');
			whole = decimals >= 1 && decimals <= 3;
		}
		if (whole && q < end && (*q == ',' || *q == '}')) {
			*ns = (int64_t)(v * 1000 + fraction * scale[decimals]);
			return q;
		}
	}
	q = number_end(p, end);
	if (q == p || q == end || (*q != ',' && *q != '}') ||
	    json_parse_us(p, (size_t)(q - p), ns, &exact) != 0)
		return NULL;
	return q;
}

/*
 * The first `,"ts":` in p[0 .. end), when no backslash, '{' or '[' comes before it: just
 * past its colon, else NULL. In valid JSON with no backslash before it every quote
 * opens or closes a string, so the `,"` can only begin a key, of the event itself when
 * no object or array was opened.
 */
static const char *find_ts(const char *p, const char *end)
{
#if defined(__SSE2__)
	while (end - p >= 16 + 5) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
		__m128i q = _mm_loadu_si128((const __m128i *)(const void *)(p + 1));
		unsigned comma = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(',')));
		unsigned quote = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(q, _mm_set1_epi8('"')));
		unsigned stop = (unsigned)_mm_movemask_epi8(
			_mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\\')),
						  _mm_cmpeq_epi8(v, _mm_set1_epi8('{'))),
				     _mm_cmpeq_epi8(v, _mm_set1_epi8('['))));
		unsigned cand = comma & quote;

		while (cand != 0) {
			unsigned i = (unsigned)__builtin_ctz(cand);

			if (stop & ((1u << i) - 1))
				return NULL;
			if (memcmp(p + i + 2, "ts\":", 4) == 0)
				return p + i + 6;
			cand &= cand - 1;
		}
		if (stop != 0)
			return NULL;
		p += 16;
	}
#endif
	for (; end - p >= 6; p++) {
		if (*p == '\\' || *p == '{' || *p == '[')
			return NULL;
		if (*p == ',' && memcmp(p + 1, "\"ts\":", 5) == 0)
			return p + 6;
	}
	return NULL;
}

int seek_glance(const char *line, size_t len, bool ts_wanted, struct seek_glance *g)
{
	const char *p = line, *end = line + len, *q;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	g->has_ts = false;
	if (end - p < 9 || memcmp(p, "{\"ph\":\"", 7) != 0 || p[8] != '"' || p[7] == '"' ||
	    p[7] == '\\')
		return 0;
	g->phase = p[7];
	if (g->phase == 'M' || !ts_wanted)
		return 1;
	q = find_ts(p + 8, end);
	if (q == NULL || (q = glance_number(q, end, &g->ts)) == NULL)
		return 0;
	g->has_ts = true;
	g->after_ts = q;
	g->end = end;
	return 1;
}

bool seek_glance_begins_after(const char *line, size_t len, int64_t t)
{
	const char *p = line, *end = line + len, *q;
	uint64_t whole = 0;
	unsigned digits = 0;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (t < 0 || end - p < 9 || memcmp(p, "{\"ph\":\"", 7) != 0 || p[8] != '"' ||
	    (q = find_ts(p + 8, end)) == NULL)
		return false;
	for (; q < end && *q >= '0' && *q <= '9' && digits < 16; q++, digits++)
		whole = whole * 10 + (uint64_t)(*q - '0');
	/* ts >= whole us, and whole > t / 1000 (floor) makes whole * 1000 > t */
	return digits >= 1 && digits < 16 && whole > (uint64_t)t / 1000;
}

int seek_glance_dur(const struct seek_glance *g, int64_t *dur)
{
	const char *q = g->after_ts;

	if (!g->has_ts || g->end - q <= 7 || memcmp(q, ",\"dur\":", 7) != 0 ||
	    glance_number(q + 7, g->end, dur) == NULL)
		return -1;
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

/* Does the line end in a comma (blanks after it aside)? */
static bool ends_in_comma(const char *line, size_t len)
{
	while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r' || line[len - 1] == ' '))
		len--;
	return len > 0 && line[len - 1] == ',';
}

/* Kept lines gathered for one write to the pipe. */
struct kept_out {
	char *p;
	size_t len;
};

static int kept_put(struct range_feed *f, struct kept_out *o, const char *p, size_t n)
{
	if (o->len + n > FEED_BLOCK) {
		if (o->len > 0 && write_all(f->wfd, o->p, o->len) != 0)
			return -1;
		o->len = 0;
		if (n > FEED_BLOCK)
			return write_all(f->wfd, p, n);
	}
	memcpy(o->p + o->len, p, n);
	o->len += n;
	return 0;
}

/*
 * Before the line at p passes: the run of passing lines before it [*run, p), then
 * what the keep function holds (range_held_fn), the run beginning again at p. 0 or -1.
 */
static int put_held(struct range_feed *f, struct kept_out *o, char **run, char *p)
{
	const char *held;
	size_t n = 0;

	if (f->held == NULL)
		return 0;
	f->held(f->keep_ctx, &held, &n);
	if (n == 0)
		return 0;
	if (p > *run && kept_put(f, o, *run, (size_t)(p - *run)) != 0)
		return -1;
	*run = p;
	return kept_put(f, o, held, n);
}

/*
 * The range through f->keep: each block's whole lines, the runs of kept ones gathered
 * and written a block at a time; a line longer than the block, and the range's last
 * line, always pass (what is held passes before them). 0, or -1 when the pipe or the
 * file failed.
 */
static int feed_kept(struct range_feed *f, char *buf, char *gather)
{
	struct kept_out o = {gather, 0};
	uint64_t off = f->from;
	size_t have = 0;
	bool in_long = false; /* inside a line longer than the block: it passes */

	while (off < f->to) {
		uint64_t want = f->to - off < FEED_BLOCK - have ? f->to - off : FEED_BLOCK - have;
		ssize_t n = read_at(f->fd, buf + have, (size_t)want, off, &f->bytes);
		char *p = buf, *run = buf, *end, *nl;

		if (n <= 0)
			break;
		off += (uint64_t)n;
		end = buf + have + n;
		while ((nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
			size_t len = (size_t)(nl + 1 - p);

			if (in_long) {
				in_long = false;
			} else if (!ends_in_comma(p, len) || f->keep(f->keep_ctx, p, len)) {
				if (put_held(f, &o, &run, p) != 0)
					return -1;
			} else {
				if (p > run && kept_put(f, &o, run, (size_t)(p - run)) != 0)
					return -1;
				run = nl + 1;
			}
			p = nl + 1;
		}
		if (p > run && kept_put(f, &o, run, (size_t)(p - run)) != 0)
			return -1;
		have = (size_t)(end - p);
		if (have == FEED_BLOCK) {
			run = buf;
			if (put_held(f, &o, &run, buf) != 0 || kept_put(f, &o, buf, have) != 0)
				return -1;
			in_long = true;
			have = 0;
		} else {
			memmove(buf, p, have);
		}
	}
	char *run = buf;

	if (put_held(f, &o, &run, buf) != 0 || (have > 0 && kept_put(f, &o, buf, have) != 0))
		return -1;
	return o.len > 0 ? write_all(f->wfd, o.p, o.len) : 0;
}

static void *feed_main(void *arg)
{
	struct range_feed *f = arg;
	char *buf = malloc(f->keep != NULL ? 2 * FEED_BLOCK : FEED_BLOCK);
	uint64_t off = f->from;
	sigset_t pipe_set;

	/* A reader that stops early closes the pipe: EPIPE here, not a SIGPIPE. */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, NULL);
	if (buf != NULL && (f->from == 0 || write_all(f->wfd, "[\n", 2) == 0)) {
		if (f->keep != NULL)
			feed_kept(f, buf, buf + FEED_BLOCK);
		while (f->keep == NULL && off < f->to) {
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
	return range_feed_open_kept(f, fd, from, to, NULL, NULL);
}

int range_feed_open_kept(struct range_feed *f, int fd, uint64_t from, uint64_t to,
			 range_keep_fn keep, void *ctx)
{
	return range_feed_open_held(f, fd, from, to, keep, NULL, ctx);
}

int range_feed_open_held(struct range_feed *f, int fd, uint64_t from, uint64_t to,
			 range_keep_fn keep, range_held_fn held, void *ctx)
{
	int p[2], err;

	memset(f, 0, sizeof(*f));
	f->keep = keep;
	f->held = held;
	f->keep_ctx = ctx;
	f->fd = fd;
	f->from = from;
	f->to = to;
	if (pipe2(p, O_CLOEXEC) != 0)
		return -errno;
	f->rfd = p[0];
	f->wfd = p[1];
	/* Room for a feed block and more in the pipe, so that the thread glancing at
	 * lines and the reader parsing the kept ones run side by side (the default 64 KiB
	 * where the system allows no more). */
	(void)fcntl(f->wfd, F_SETPIPE_SZ, (int)(1u << 20));
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
