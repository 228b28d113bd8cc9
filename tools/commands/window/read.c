/* SPDX-License-Identifier: MIT */
/*
 * How `ringtrace window` reads its input (window.h, "How much is read"): in order,
 * or a plain file of one event per line in parts through range feeds (seek.h): its
 * head, a binary search for a line before the window, and from there to the end the
 * lines a glance cannot rule out, through the reader.
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
 * window. 0, or -1 (out of memory, failed output: the window's own errors).
 */
int window_read_part(struct window *w, struct source *src, const char *path, enum part part)
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

/* A body of at least this many bytes is glanced at by two threads (read_body()). */
#define SPLIT_BYTES (16u << 20)

/* What the feed's thread noted of the lines it turned down, as note_time() would have
 * (events.c), for the window to take once the feed is closed. */
struct glances {
	int64_t from, to, margin;
	bool has_latest, has_plain;
	int64_t latest, plain_max, max_lag;
	bool past; /* a line begun more than the margin after the window was seen */
	struct held_counters held;
};

static void glance_time(struct glances *gl, const struct seek_glance *g, int64_t end)
{
	if (!gl->has_latest || end > gl->latest)
		gl->latest = end;
	gl->has_latest = true;
	if (g->phase == 'X')
		return;
	if (!gl->has_plain || g->ts > gl->plain_max)
		gl->plain_max = g->ts;
	gl->has_plain = true;
	if (gl->plain_max - g->ts > gl->max_lag)
		gl->max_lag = gl->plain_max - g->ts;
	if (g->ts > gl->to && g->ts - gl->to > gl->margin)
		gl->past = true;
}

/*
 * Does a line matter to the window (range_keep_fn, on the feed's thread)? One that a
 * glance cannot read does. Of the others only those window_take() would act on: M
 * anywhere; nothing that begins after the window; before it, the slices, async spans
 * and counters open or current at its start and the X that reach into it. A marker
 * after the window passes (the window writes its own, and notes no time of theirs)
 * until a line begun after the window was seen. Once a line more than the margin past
 * the window was seen, the lines are in time order to within the margin (the search's
 * assumption): only an X (the recorder writes it when it ends) can still begin inside
 * the window, and a glance at the others' phase is enough (an instant there, a
 * marker too, is past the window and changes nothing).
 */
static bool window_keeps(void *ctx, const char *line, size_t len)
{
	struct glances *gl = ctx;
	struct seek_glance g;
	int64_t end, dur;
	bool has_dur;

	if (gl->past) {
		if (!seek_glance(line, len, false, &g) || g.phase == 'M')
			return true;
		if (g.phase != 'X' || seek_glance_begins_after(line, len, gl->to))
			return false; /* (its end is past the window too: latest is past it) */
	}
	if (!seek_glance(line, len, true, &g) || !g.has_ts)
		return true;
	/* A marker's time is not noted: it matters only while no line begun after the
	 * window was (then where the window's open slices end depends on it). */
	if (g.phase == 'i' && g.ts > gl->to && !(gl->has_latest && gl->latest > gl->to) &&
	    memmem(line, len, "ringtrace: ", 11) != NULL)
		return true;
	if (g.ts > gl->to) {
		glance_time(gl, &g, g.ts); /* an X's end is later still: past the window too */
		return false;
	}
	has_dur = g.phase == 'X' && seek_glance_dur(&g, &dur) == 0;
	end = g.ts;
	if (has_dur && dur > 0 && g.ts <= INT64_MAX - dur)
		end += dur;
	glance_time(gl, &g, end);
	if (g.ts >= gl->from)
		return true;
	switch (g.phase) {
	case 'X': /* whole when its dur is not where a glance looks */
		return !has_dur || (dur >= 0 && end >= gl->from);
	case 'C': /* the last of a series' values before the window is what it needs */
		return !window_hold_counter(&gl->held, line, len, g.after_ts);
	case 'B':
	case 'E':
	case 'b':
	case 'e':
	case 'n':
		return true;
	default:
		return false;
	}
}

static void window_held(void *ctx, const char **p, size_t *n)
{
	window_held_lines(&((struct glances *)ctx)->held, p, n);
}

/* Read a range of the plain file through a feed (keeping only what window_keeps()
 * keeps when gl is given). */
static int read_range(struct window *w, struct source *src, int fd, uint64_t from, uint64_t to,
		      enum part part, struct glances *gl)
{
	struct range_feed feed;
	int err = gl != NULL
			  ? range_feed_open_held(&feed, fd, from, to, window_keeps, window_held, gl)
			  : range_feed_open(&feed, fd, from, to);

	if (err != 0) {
		cli_error("window", "cannot read %s: %s", w->file, strerror(-err));
		return -1;
	}
	err = window_read_part(w, src, feed.path, part);
	range_feed_close(&feed);
	src->bytes += feed.bytes;
	if (gl != NULL && gl->held.failed && !err) {
		w->nomem = true; /* a series would begin with an older value */
		err = -1;
	}
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
 * From off to the end of the file, through window_keeps(). Most of it is past the
 * window, where a glance rules out nearly every line: a second feed glances at the
 * far half meanwhile, with glances of its own (a glance needs nothing of the lines
 * before it but what it notes: the latest time, how far back lines went, both merged
 * after), its kept lines read after the first half's, so that the reader takes them
 * in file order. 0 or -1.
 */
static int read_body(struct window *w, struct source *src, int fd, uint64_t off, struct glances *gl)
{
	struct glances far = {.from = gl->from, .to = gl->to, .margin = gl->margin};
	uint64_t size = src->size;
	struct range_feed feed;
	struct seek_probe p;
	int err;

	if (size - off < SPLIT_BYTES ||
	    seek_probe(fd, size, off + (size - off) / 2, &p, &src->bytes) != 1)
		return read_range(w, src, fd, off, size, PART_BODY, gl);
	err = range_feed_open_held(&feed, fd, p.line, size, window_keeps, window_held, &far);
	if (err != 0) {
		cli_error("window", "cannot read %s: %s", w->file, strerror(-err));
		return -1;
	}
	err = read_range(w, src, fd, off, p.line, PART_BODY, gl);
	if (!err && src->rc >= 0)
		err = window_read_part(w, src, feed.path, PART_BODY);
	range_feed_close(&feed);
	src->bytes += feed.bytes;
	if (far.held.failed && !err) {
		w->nomem = true;
		err = -1;
	}
	window_held_free(&far.held);
	window_note_glances(w, far.has_latest, far.latest, far.max_lag);
	return err;
}

/*
 * The plain file in parts: head, a search, then from there to the end what a glance
 * cannot rule out. *sequential is set when the file turns out not to allow it (no line
 * structure, no ts in its head): the caller then reads it in order, nothing having
 * been written.
 */
int window_read_searched(struct window *w, struct source *src, int fd, bool *sequential)
{
	uint64_t size = src->size, off = 0;
	struct glances gl = {0};
	int64_t target;
	int err;

	*sequential = false;
	if (size <= HEAD_BYTES + TAIL_BYTES) {
		*sequential = true;
		return 0;
	}
	if (read_range(w, src, fd, 0, HEAD_BYTES, PART_HEAD, NULL))
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
	gl.from = w->from;
	gl.to = w->to;
	gl.margin = w->margin;
	err = read_body(w, src, fd, off, &gl);
	window_held_free(&gl.held);
	if (err)
		return -1;
	window_note_glances(w, gl.has_latest, gl.latest, gl.max_lag);
	return 0;
}
