/* SPDX-License-Identifier: MIT */
/*
 * The text of a trace, as the JSON reader walks it (see trace.c for the design):
 * blocks from the input, slices of them to the parsers, NUL runs read as blanks,
 * lines and columns counted lazily, the queue of events and issues, and how the
 * input ended.
 */
#include "trace_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ positions */

/* Count the lines of the block up to block offset off. */
static void advance(struct trace *r, size_t off)
{
	if (off > r->len)
		off = r->len;
	while (r->counted < off) {
		const unsigned char *nl = memchr(r->text + r->counted, '\n', off - r->counted);
		size_t end = nl != NULL ? (size_t)(nl - r->text) : off;

		/* Raw '\n' inside strings that the scanner rewrote still end lines. */
		while (r->patched_seen < r->npatched && r->patched_nl[r->patched_seen] < end) {
			r->lines++;
			r->line_start = r->text_abs + r->patched_nl[r->patched_seen] + 1;
			r->patched_seen++;
		}
		if (nl == NULL) {
			r->counted = off;
			break;
		}
		r->lines++;
		r->counted = end + 1;
		r->line_start = r->text_abs + r->counted;
	}
}

/*
 * Line and column of text offset abs in the block, counting from block offset from,
 * where lines and start describe the line count there; moves nothing.
 */
static void count_from(const struct trace *r, size_t from, uint64_t lines, uint64_t start,
		       uint64_t abs, uint64_t *line, uint64_t *col)
{
	size_t to = (size_t)(abs - r->text_abs), k = from;
	const unsigned char *nl;

	if (to > r->len)
		to = r->len;
	while (k < to && (nl = memchr(r->text + k, '\n', to - k)) != NULL) {
		lines++;
		k = (size_t)(nl - r->text) + 1;
		start = r->text_abs + k;
	}
	for (size_t i = 0; i < r->npatched; i++) {
		size_t at = r->patched_nl[i];

		if (at >= from && at < to) {
			lines++;
			if (r->text_abs + at + 1 > start)
				start = r->text_abs + at + 1;
		}
	}
	*line = lines + 1;
	*col = abs >= start ? abs - start + 1 : 1;
}

/* Line and column of text offset abs inside a long event that yajl parses from its
 * own copy (its bytes may be from blocks gone by). */
static void locate_in_long(const struct long_event *e, uint64_t abs, uint64_t *line, uint64_t *col)
{
	size_t to = (size_t)(abs - e->abs), k = 0, start = 0;
	const char *nl;
	uint64_t lines = 0;

	while (k < to && (nl = memchr(e->text.p + k, '\n', to - k)) != NULL) {
		lines++;
		k = (size_t)(nl - e->text.p) + 1;
		start = k;
	}
	*line = e->line + lines;
	*col = lines == 0 ? e->col + to : to - start + 1;
}

/* Line and column of text offset abs; moves the lazy count forward when it can. */
void tr_locate(struct trace *r, uint64_t abs, uint64_t *line, uint64_t *col)
{
	if (r->lng.feeding && abs >= r->lng.abs && abs - r->lng.abs <= r->lng.text.len) {
		locate_in_long(&r->lng, abs, line, col);
	} else if (abs >= r->text_abs + r->counted) {
		advance(r, (size_t)(abs - r->text_abs));
		*line = r->lines + 1;
		*col = abs >= r->line_start ? abs - r->line_start + 1 : 1;
	} else if (abs >= r->line_start) {
		*line = r->lines + 1;
		*col = abs - r->line_start + 1;
	} else {
		/* Out of order (rare): count again from the start of the block. */
		count_from(r, 0, r->lines_at_blk, r->line_start_at_blk, abs, line, col);
	}
}

/* Text offset just past the token yajl is handing to the current callback. */
uint64_t tr_here(const struct trace *r)
{
	if (r->finishing)
		return r->st.text_bytes;
	return r->feed_abs + yajl_get_bytes_consumed(r->h);
}

/* ----------------------------------------------------------------- reporting */

void tr_fail(struct trace *r, enum trace_error kind, bool at, uint64_t abs, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	if (r->failed)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->st.line = r->st.col = 0;
	if (at) {
		tr_locate(r, abs, &r->st.line, &r->st.col);
		/* a .pftrace's text is its events' JSON: the place is their packet */
		if (r->pf != NULL && pf_source_place(r, r->st.line, &r->st.packet, &r->st.offset)) {
			r->st.in_packet = true;
			r->st.line = r->st.col = 0;
		}
	}
	trace_place_format(r->st.message, sizeof(r->st.message), r->name, r->st.line, r->st.col,
			   r->st.in_packet, r->st.packet, r->st.offset);
	snprintf(r->st.message + strlen(r->st.message),
		 sizeof(r->st.message) - strlen(r->st.message), ": ");
	r->st.what = r->st.message + strlen(r->st.message);
	snprintf(r->st.message + strlen(r->st.message),
		 sizeof(r->st.message) - strlen(r->st.message), "%s", msg);
	r->st.error = kind;
	r->failed = true;
}

int tr_fail_nomem(struct trace *r)
{
	tr_fail(r, TRACE_ERR_NOMEM, false, 0, "out of memory");
	return 0;
}

struct item *tr_queue_push(struct trace *r)
{
	struct item *q = array_grow(r->q, &r->q_cap, r->q_len + 1, sizeof(*q), 64);

	if (q == NULL)
		return NULL;
	r->q = q;
	return &r->q[r->q_len++];
}

int tr_make_issue(struct trace *r, struct item *it, enum trace_issue_kind kind, uint64_t line,
		  uint64_t col, const char *fmt, va_list ap)
{
	char msg[400];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	it->mem = strdup(msg);
	if (it->mem == NULL)
		return tr_fail_nomem(r);
	it->kind = ITEM_ISSUE;
	it->u.issue =
		(struct trace_issue){.kind = kind, .line = line, .col = col, .message = it->mem};
	return 1;
}

/* Queue an issue; returns 1, or 0 when out of memory (so a callback can cancel). */
int tr_queue_issue(struct trace *r, enum trace_issue_kind kind, uint64_t line, uint64_t col,
		   const char *fmt, ...)
{
	struct item *it = tr_queue_push(r);
	va_list ap;
	int ok;

	if (it == NULL)
		return tr_fail_nomem(r);
	va_start(ap, fmt);
	ok = tr_make_issue(r, it, kind, line, col, fmt, ap);
	va_end(ap);
	if (!ok)
		r->q_len--;
	return ok;
}

/* The next text block into text/len; 0, or -1 on error. len 0: the input ended. */
static int next_block(struct trace *r)
{
	unsigned char *p = NULL;
	size_t n = 0;

	advance(r, r->len); /* the block is done: count the rest of its lines */
	r->text_abs += r->len;
	r->len = r->pos = 0;
	r->started = true;
	if (tr_read_text(r, &p, &n) != 0)
		return -1;
	r->text = p;
	r->len = n;
	r->counted = 0;
	r->lines_at_blk = r->lines;
	r->line_start_at_blk = r->line_start;
	r->npatched = r->patched_seen = 0;
	if (r->text_abs < sizeof(r->st.head)) {
		size_t take = sizeof(r->st.head) - (size_t)r->text_abs;

		if (take > r->len)
			take = r->len;
		memcpy(r->st.head + r->text_abs, r->text, take);
		r->st.head_len = (size_t)r->text_abs + take;
	}
	r->st.text_bytes += r->len;
	if (r->text_abs == 0 && r->len >= 3 && memcmp(r->text, "\xef\xbb\xbf", 3) == 0) {
		r->pos = 3;
		if (!tr_queue_issue(
			    r, TRACE_ISSUE_BOM, 1, 1,
			    "a UTF-8 byte-order mark: Perfetto does not recognise the file as "
			    "JSON"))
			return -1;
	}
	return 0;
}

/* The input ended: decide how. */
static void finish(struct trace *r)
{
	struct trace_status *st = &r->st;

	r->done = true;
	if (r->zero_run) {
		r->zero_run = false;
		if (!tr_queue_issue(
			    r, TRACE_ISSUE_ZERO_BYTES, r->zero_line, r->zero_col,
			    "%llu NUL bytes at the end (a hole a crash left?), read as blanks",
			    (unsigned long long)r->zero_len))
			return;
	}
	if (r->fast == FAST_LONG && !r->lng.skip) {
		/* yajl reads the cut event as it would have: what it finds in it (a key
		 * twice, a syntax error) is reported as for any other. */
		size_t used;
		int rc = tr_resume_yajl(r, r->lng.resume);

		r->lng.feeding = true;
		if (rc == 0)
			rc = tr_yajl_feed(r, (unsigned char *)r->lng.text.p, r->lng.text.len,
					  r->lng.abs, &used);
		r->lng.feeding = false;
		if (rc != 0)
			return;
	}
	if (r->depth == 0) {
		/* Flush yajl: a lone top-level number only ends with the input. */
		r->finishing = true;
		if (yajl_complete_parse(r->h) != yajl_status_ok && !r->failed && r->top_started)
			tr_fail(r, TRACE_ERR_SYNTAX, false, 0, "invalid JSON at the end");
		r->finishing = false;
		if (r->failed)
			return;
		if (!r->top_started) {
			tr_fail(r, TRACE_ERR_SYNTAX, false, 0, "%s",
				st->text_bytes == 0 ? "empty: no JSON in it"
						    : "blank: no JSON in it");
			return;
		}
		st->complete = true;
		if (st->form == TRACE_FORM_OBJECT && !r->saw_events_key) {
			st->not_a_trace = "an object without \"traceEvents\"";
			tr_queue_issue(r, TRACE_ISSUE_NO_EVENTS_KEY, 1, 1,
				       "an object without \"traceEvents\": no events");
		} else if (st->events == 0 && r->non_events > 0) {
			st->not_a_trace = "an array of values none of which is an event object";
		}
		return;
	}
	st->cut = true;
	if (r->b.active) {
		st->cut_in_event = true;
		st->cut_bytes = st->text_bytes - r->b.offset;
		tr_building_reset(&r->b);
	} else if (r->fast == FAST_LONG) {
		st->cut_in_event = true;
		st->cut_bytes = st->text_bytes - r->lng.abs;
	}
}

/* The input ended: decide how, a .pftrace's decoder having the last word. */
static void end(struct trace *r)
{
	finish(r);
	if (r->pf != NULL && !r->failed)
		pf_source_end(r);
}

static int feed_text(struct trace *r, unsigned char *p, size_t len, uint64_t abs)
{
	if (r->opt.flags & TRACE_READ_CHECK_STRINGS)
		return tr_scan_and_feed(r, p, len, abs);
	return tr_parse_text(r, p, len, abs);
}

/*
 * Feed a slice, reading NUL bytes as blanks: no JSON has them, and a crash can leave
 * a hole of them in a file. Each run is reported once, when it ends, after the
 * events before it; the text before a run is parsed first, so that its position is
 * counted in order.
 */
static int feed_slice(struct trace *r, unsigned char *p, size_t len, uint64_t abs)
{
	size_t k = 0;

	while (k < len) {
		const unsigned char *z = r->zero_run ? p + k : memchr(p + k, 0, len - k);
		size_t start = z != NULL ? (size_t)(z - p) : len, end = start;

		if (start > k && feed_text(r, p + k, start - k, abs + k) != 0)
			return -1;
		if (z == NULL)
			break;
		if (!r->zero_run) {
			r->zero_run = true;
			r->zero_len = 0;
			tr_locate(r, abs + start, &r->zero_line, &r->zero_col);
		}
		while (end < len && p[end] == 0)
			p[end++] = ' ';
		r->zero_len += end - start;
		if (feed_text(r, p + start, end - start, abs + start) != 0)
			return -1;
		if (end < len) {
			r->zero_run = false;
			if (!tr_queue_issue(r, TRACE_ISSUE_ZERO_BYTES, r->zero_line, r->zero_col,
					    "%llu NUL bytes (a hole a crash left?), read as blanks",
					    (unsigned long long)r->zero_len))
				return -1;
		}
		k = end;
	}
	return 0;
}

/* One step of work: parse a slice, read a block, or finish. A token that has run on
 * for TRACE_MAX_EVENT_BYTES without a callback is yajl buffering one huge value (a
 * slice ending in a blank is between tokens, or inside a string: let it pass). */
void tr_step(struct trace *r)
{
	if (r->pos < r->len) {
		size_t n = r->len - r->pos < r->slice_bytes ? r->len - r->pos : r->slice_bytes;
		unsigned char *p = r->text + r->pos;
		uint64_t abs = r->text_abs + r->pos, end;
		int rc;

		rc = feed_slice(r, p, n, abs);
		r->pos += n;
		end = r->text_abs + r->pos;
		if (rc == 0 && r->b.active && end - r->b.offset > r->max_event)
			tr_fail(r, TRACE_ERR_LIMIT, true, r->b.offset, "an event over %llu MiB",
				(unsigned long long)(r->max_event >> 20));
		else if (rc == 0 && r->fast == FAST_OFF && end - r->last_token > r->max_event &&
			 !is_blank(p[n - 1]))
			tr_fail(r, TRACE_ERR_LIMIT, true, r->last_token,
				"a single JSON value over %llu MiB",
				(unsigned long long)(r->max_event >> 20));
		if (r->failed)
			r->done = true;
		return;
	}
	if (r->len > 0 || !r->started) {
		if (next_block(r) != 0)
			r->done = true;
		else if (r->len == 0)
			end(r);
		return;
	}
	end(r);
}
