/* SPDX-License-Identifier: MIT */
/*
 * How `ringtrace window` reads its input (window.h, "How much is read"): in order,
 * or a plain file of one event per line in parts through range feeds (seek.h): its
 * head, a binary search for a line before the window, the lines until one past it,
 * and its tail.
 */
#include "window.h"

#include "seek.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void quiet_issue(void *ctx, const struct trace_issue *issue)
{
	(void)ctx;
	(void)issue;
}

/*
 * Read events from path (part PART_ALL: all of it; else a range feed's pipe) into the
 * window. stop: the time past which a body read stops. *stop_at gets the file offset
 * of the event it stopped at (base: the file offset of the pipe's first byte after its
 * "[\n"). 0, or -1 (out of memory, failed output: the window's own errors).
 */
int window_read_part(struct window *w, struct source *src, const char *path, enum part part,
		     uint64_t base, bool stop, uint64_t *stop_at)
{
	struct trace_options ro = {.on_issue = quiet_issue};
	const struct trace_event *ev;
	struct trace *r;
	int err = 0, rc;

	if (part == PART_ALL || part == PART_BODY) {
		ro.on_issue = cli_warn_issue;
		ro.ctx = &src->warnings;
	}
	r = cli_open_trace("window", path, &ro);
	if (r == NULL)
		return -1;
	while ((rc = trace_next(r, &ev)) == 1) {
		/* Past the window by more than the margin (by its start: other writers
		 * put an X at its start, and the recorder's long X are in the tail). */
		if (stop && w->has_origin && ev->has_ts && ev->ts_ns > w->to &&
		    ev->ts_ns - w->to > w->margin) {
			*stop_at = base + ev->offset - (base > 0 ? 2 : 0);
			break;
		}
		err = window_take(w, ev, part);
		if (err)
			break;
	}
	src->rc = rc;
	src->st = *trace_status(r);
	/* The status outlives the reader: its what points into the copy's message now
	 * (it pointed into the reader's, freed below, and cmd_window prints it). */
	if (src->st.what != NULL)
		src->st.what = src->st.message + (trace_status(r)->what - trace_status(r)->message);
	if (part == PART_ALL)
		src->bytes += src->st.input_bytes;
	trace_close(r);
	return err;
}

/* Read a range of the plain file through a feed. */
static int read_range(struct window *w, struct source *src, int fd, uint64_t from, uint64_t to,
		      enum part part, bool stop, uint64_t *stop_at)
{
	struct range_feed feed;
	int err = range_feed_open(&feed, fd, from, to);

	if (err != 0) {
		cli_error("window", "cannot read %s: %s", w->file, strerror(-err));
		return -1;
	}
	err = window_read_part(w, src, feed.path, part, from, stop, stop_at);
	range_feed_close(&feed);
	src->bytes += feed.bytes;
	return err;
}

/* Is the file at fd plain text that can be searched (a regular file, not gzip)? */
bool window_searchable(int fd, uint64_t *size)
{
	unsigned char magic[2];
	struct stat sb;

	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size < 0)
		return false;
	*size = (uint64_t)sb.st_size;
	if (pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b)
		return false;
	return true;
}

/*
 * The plain file in parts: head, a search, the body, the tail. *sequential is set when
 * the file turns out not to allow it (no line structure, no ts in its head): the
 * caller then reads it in order, nothing having been written.
 */
int window_read_searched(struct window *w, struct source *src, int fd, bool *sequential)
{
	uint64_t size = src->size, off = 0, stop_at = size, tail;
	int64_t target;

	*sequential = false;
	if (size <= HEAD_BYTES + TAIL_BYTES) {
		*sequential = true;
		return 0;
	}
	if (read_range(w, src, fd, 0, HEAD_BYTES, PART_HEAD, false, NULL))
		return -1;
	if (!w->has_origin) {
		*sequential = true;
		return 0;
	}
	target = w->from < INT64_MIN + w->margin ? INT64_MIN : w->from - w->margin;
	if (seek_before(fd, size, target, &off, &src->probes, &src->bytes) != 0) {
		*sequential = true;
		return 0;
	}
	src->searched = true;
	if (off <= HEAD_BYTES)
		off = 0; /* the window is near the start: read from it */
	if (read_range(w, src, fd, off, size, PART_BODY, true, &stop_at))
		return -1;
	if (src->rc < 0 || stop_at >= size)
		return 0;
	/* The tail, from a line start. */
	tail = size - TAIL_BYTES > stop_at ? size - TAIL_BYTES : stop_at;
	if (tail > stop_at) {
		struct seek_probe p;
		int rc = seek_probe(fd, size, tail, &p, &src->bytes);

		if (rc <= 0)
			return 0;
		tail = p.line;
	}
	return read_range(w, src, fd, tail, size, PART_TAIL, false, NULL);
}
