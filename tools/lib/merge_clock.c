/* SPDX-License-Identifier: MIT */
/*
 * The clocks of `ringtrace merge` (see merge_clock.h).
 */
#include "merge_clock.h"
#include "json.h"
#include "trace.h"

#include "common/names.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* The scan's buffer; a line longer than half of it is skipped (no event of ours is). */
#define SCAN_BYTES (1u << 20)

static const char needle[] = "\"name\":\"" RTR__MARK_CLOCK_SYNC "\"";

/* The integer after "key": in line[0 .. len), into *v. 0, or -1 when absent. */
static int int_after(const char *line, size_t len, const char *key, int64_t *v)
{
	char pattern[32], digits[24];
	size_t plen = (size_t)snprintf(pattern, sizeof(pattern), "\"%s\":", key), n = 0;
	const char *p = memmem(line, len, pattern, plen), *end = line + len;
	char *stop;

	if (p == NULL)
		return -1;
	for (p += plen;
	     p < end && n < sizeof(digits) - 1 && (*p == '-' || (*p >= '0' && *p <= '9')); p++)
		digits[n++] = *p;
	digits[n] = '\0';
	if (n == 0)
		return -1;
	errno = 0;
	*v = strtoll(digits, &stop, 10);
	return errno != 0 || *stop != '\0' ? -1 : 0;
}

static int add(struct sync_set *s, const struct clock_sync *c)
{
	if (s->n == MAX_SYNCS) {
		/* Thin: the better (smaller error) of each pair. */
		size_t k = 0;

		for (size_t i = 0; i + 1 < s->n; i += 2)
			s->m[k++] =
				s->m[i].error_ns <= s->m[i + 1].error_ns ? s->m[i] : s->m[i + 1];
		s->thinned += s->n - k;
		s->n = k;
	}
	struct clock_sync *m = array_grow(s->m, &s->cap, s->n + 1, sizeof(*m), 16);

	if (m == NULL)
		return -1;
	s->m = m;
	s->m[s->n++] = *c;
	return 0;
}

/* One line holding the needle: a measurement of rank, or not. 0, or -1 out of memory. */
static int take_line(struct sync_set *s, int64_t rank, const char *line, size_t len)
{
	struct clock_sync c;
	int64_t r, ref, rounds;

	if (memmem(line, len, "\"cat\":\"ringtrace\"", 17) == NULL ||
	    int_after(line, len, "rank", &r) != 0 || r != rank)
		return 0;
	s->found++;
	if (int_after(line, len, "reference_rank", &ref) != 0 ||
	    int_after(line, len, "at_ns", &c.at_ns) != 0 ||
	    int_after(line, len, "offset_ns", &c.offset_ns) != 0 ||
	    int_after(line, len, "rtt_ns", &c.rtt_ns) != 0 ||
	    int_after(line, len, "rounds", &rounds) != 0 || rounds < 1 || c.rtt_ns < 0 ||
	    c.rtt_ns > INT64_MAX / 2 ||
	    (s->n > 0 && (ref != s->reference_rank || c.at_ns <= s->m[s->n - 1].at_ns))) {
		s->unusable++;
		return 0;
	}
	if (int_after(line, len, "error_ns", &c.error_ns) != 0 || c.error_ns < 0)
		c.error_ns = (c.rtt_ns + 1) / 2;
	s->reference_rank = ref;
	return add(s, &c);
}

int sync_scan(const char *path, int64_t rank, struct sync_set *s, char *err, size_t err_len)
{
	gzFile f = gzopen(path, "rb");
	char *buf;
	size_t have = 0;
	bool skipping = false; /* inside a line too long to keep */
	int rc = 0;

	if (f == NULL) {
		snprintf(err, err_len, "%s", strerror(errno != 0 ? errno : ENOMEM));
		return -1;
	}
	buf = malloc(SCAN_BYTES);
	if (buf == NULL) {
		gzclose(f);
		return -2;
	}
	gzbuffer(f, 256u << 10);
	for (;;) {
		int got = gzread(f, buf + have, (unsigned)(SCAN_BYTES - have));
		const char *p, *hit, *end, *last_nl;

		if (got < 0) {
			int zerr;
			const char *msg = gzerror(f, &zerr);

			snprintf(err, err_len, "%s", zerr == Z_ERRNO ? strerror(errno) : msg);
			rc = -1;
			break;
		}
		have += (size_t)got;
		end = buf + have;
		p = buf;
		if (skipping) {
			const char *nl = memchr(buf, '\n', have);

			if (nl == NULL) {
				have = 0;
				if (got == 0)
					break;
				continue;
			}
			skipping = false;
			p = nl + 1;
		}
		/* Whole lines: up to the last newline, or everything at the end of the file. */
		last_nl = got == 0 ? end : memrchr(p, '\n', (size_t)(end - p));
		if (last_nl == NULL)
			last_nl = p;
		while ((hit = memmem(p, (size_t)(last_nl - p), needle, sizeof(needle) - 1)) !=
		       NULL) {
			const char *from = memrchr(p, '\n', (size_t)(hit - p));
			const char *to = memchr(hit, '\n', (size_t)(end - hit));

			from = from != NULL ? from + 1 : p;
			if (to == NULL)
				to = end;
			if (take_line(s, rank, from, (size_t)(to - from))) {
				rc = -2;
				break;
			}
			p = to;
		}
		if (rc != 0 || got == 0)
			break;
		/* Keep the partial line for the next read, unless it is too long. */
		p = last_nl < end && *last_nl == '\n' ? last_nl + 1 : last_nl;
		have = (size_t)(end - p);
		if (have > SCAN_BYTES / 2) {
			skipping = true;
			have = 0;
		} else {
			memmove(buf, p, have);
		}
	}
	free(buf);
	gzclose(f);
	return rc;
}

int sync_scan_trace(struct trace *t, int64_t rank, struct sync_set *s, char *err, size_t err_len)
{
	const struct trace_status *st;
	const struct trace_event *ev;
	int rc;

	while ((rc = trace_next(t, &ev)) == 1) {
		if (memmem(ev->json, ev->json_len, needle, sizeof(needle) - 1) != NULL &&
		    take_line(s, rank, ev->json, ev->json_len))
			return -2;
	}
	st = trace_status(t);
	if (rc < 0 && st->error == TRACE_ERR_NOMEM)
		return -2;
	if (rc < 0 && (st->error == TRACE_ERR_IO || st->error == TRACE_ERR_GZIP)) {
		snprintf(err, err_len, "%s", st->what);
		return -1;
	}
	return 0;
}

static int by_time(const void *a, const void *b)
{
	const struct clock_sync *x = a, *y = b;

	return (x->at_ns > y->at_ns) - (x->at_ns < y->at_ns);
}

int sync_pool(struct sync_set *into, const struct sync_set *from)
{
	struct clock_sync *all;
	size_t n = into->n + from->n;

	if (from->n == 0)
		return 0;
	all = malloc(n * sizeof(*all));
	if (all == NULL)
		return -1;
	memcpy(all, into->m, into->n * sizeof(*all));
	memcpy(all + into->n, from->m, from->n * sizeof(*all));
	qsort(all, n, sizeof(*all), by_time);
	if (into->n == 0)
		into->reference_rank = from->reference_rank;
	into->found += from->found;
	into->unusable += from->unusable;
	into->thinned += from->thinned;
	into->n = 0;
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && all[i].at_ns == all[i - 1].at_ns)
			continue; /* the same file given twice */
		if (add(into, &all[i])) {
			free(all);
			return -1;
		}
	}
	free(all);
	return 0;
}

int sync_copy(struct sync_set *to, const struct sync_set *from)
{
	*to = *from;
	to->m = NULL;
	to->cap = 0;
	if (from->n == 0)
		return 0;
	to->m = malloc(from->n * sizeof(*to->m));
	if (to->m == NULL)
		return -1;
	memcpy(to->m, from->m, from->n * sizeof(*to->m));
	to->cap = from->n;
	return 0;
}

/* Do a and b disagree by more than a slew and their RTT bounds explain? */
static bool outlier_pair(const struct clock_sync *a, const struct clock_sync *b)
{
	__int128 dt = (__int128)b->at_ns - a->at_ns;
	__int128 doff = (__int128)b->offset_ns - a->offset_ns;
	__int128 noise = (__int128)a->error_ns + b->error_ns;

	if (doff < 0)
		doff = -doff;
	/* Beyond the slew (and noise), or so far that the map would run backwards. */
	return doff > dt * MAX_SLEW_PPM / 1000000 + noise || 2 * doff >= dt;
}

void sync_finish(struct sync_set *s)
{
	bool again = true;

	while (again && s->n > 1) {
		again = false;
		for (size_t i = 0; i + 1 < s->n; i++) {
			size_t drop;

			if (!outlier_pair(&s->m[i], &s->m[i + 1]))
				continue;
			drop = s->m[i].error_ns > s->m[i + 1].error_ns ? i : i + 1;
			memmove(&s->m[drop], &s->m[drop + 1], (s->n - drop - 1) * sizeof(*s->m));
			s->n--;
			s->outliers++;
			again = true;
			break;
		}
	}
	s->cursor = 0;
}

int64_t sync_offset(struct sync_set *s, int64_t at)
{
	const struct clock_sync *a, *b;
	size_t i = s->cursor;

	if (s->n == 1 || at <= s->m[0].at_ns)
		return s->m[0].offset_ns;
	if (at >= s->m[s->n - 1].at_ns)
		return s->m[s->n - 1].offset_ns;
	/* The segment [m[i], m[i + 1]) holding at; near the last one looked at. */
	if (i + 1 >= s->n)
		i = s->n - 2;
	while (i > 0 && at < s->m[i].at_ns)
		i--;
	while (at >= s->m[i + 1].at_ns)
		i++;
	s->cursor = i;
	a = &s->m[i];
	b = &s->m[i + 1];
	return a->offset_ns + (int64_t)(((__int128)b->offset_ns - a->offset_ns) * (at - a->at_ns) /
					(b->at_ns - a->at_ns));
}

void sync_bounds(const struct sync_set *s, int64_t *max_rtt, int64_t *max_error)
{
	*max_rtt = *max_error = 0;
	for (size_t i = 0; i < s->n; i++) {
		if (s->m[i].rtt_ns > *max_rtt)
			*max_rtt = s->m[i].rtt_ns;
		if (s->m[i].error_ns > *max_error)
			*max_error = s->m[i].error_ns;
	}
}

int64_t sync_drift_ppb(const struct sync_set *s)
{
	const struct clock_sync *a = &s->m[0], *b = &s->m[s->n - 1];

	if (s->n < 2)
		return 0;
	return (int64_t)(((__int128)b->offset_ns - a->offset_ns) * 1000000000 /
			 (b->at_ns - a->at_ns));
}

void sync_free(struct sync_set *s)
{
	free(s->m);
	s->m = NULL;
	s->n = s->cap = 0;
}

/* ----------------------------------------------------------------------- clc */

int64_t clc_move(const struct clc_thread *c, int64_t t)
{
	unsigned i = c->newest;

	for (unsigned k = 0; k < c->n; k++, i = (i + CLC_JUMPS - 1) % CLC_JUMPS) {
		if (c->at[i] <= t) {
			int64_t left = c->jump[i] - (t - c->at[i]) / CLC_DECAY;

			return left > 0 ? left : 0;
		}
	}
	return 0;
}

void clc_jump(struct clc_thread *c, int64_t t, int64_t need)
{
	if (c->n > 0 && t <= c->at[c->newest]) {
		/* Not after the newest jump: that one is made at least as large. */
		if (need > c->jump[c->newest])
			c->jump[c->newest] = need;
		return;
	}
	c->newest = c->n == 0 ? 0 : (c->newest + 1) % CLC_JUMPS;
	c->at[c->newest] = t;
	c->jump[c->newest] = need;
	if (c->n < CLC_JUMPS)
		c->n++;
}
