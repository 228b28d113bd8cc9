/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace window`: the part of a trace that overlaps a time window, as a
 * self-contained trace a viewer opens alone (a second out of a run of hours).
 *
 * What the window holds, in file order:
 *
 * - the start marker: the original's (or one made up) at the window's start, with
 *   window_from and window_to added (absolute ts, in us), so that a viewer does not
 *   stretch the window back to 0 and `merge` still finds the origin;
 * - every M event seen before the window (the latest of each kind per process or
 *   thread, carry.h), and each counter series' latest C before it, again at the
 *   window's start;
 * - every event with its ts inside [from, to], as it is; X events that overlap the
 *   window, clipped to it (--no-clip: whole); M events wherever they come;
 * - B slices open at `from`, reopened there (their B again, at `from`) just before the
 *   thread's first event in the window, and async spans likewise (their b);
 * - what is open at the end, ended at the window's end (E, innermost first; e);
 * - an end marker with the window's counts.
 *
 * Why clip: the viewers size their timeline to the events, so a whole X of an hour
 * around a window of a second would show the hour; a B/E slice open across the window
 * is ended at its edges too, and an X clipped the same way nests with it as before.
 *
 * How much is read. A gzip file, standard input, and `--exact` are read from the
 * start, in order, to the end: every name, every slice open at the window's start and
 * every X around it is found. A plain regular file of one event per line (what the
 * recorder writes) is read in parts (seek.h): its first MiB (the start marker, the
 * names written at the start, the origin), a binary search for a line before `from -
 * margin`, the lines from there until one past `to + margin`, and the file's last MiB
 * (the long X events the recorder writes when they end: a run-long "main"). What that
 * assumes, and what it misses when the assumption fails, is in tools/README.md; a
 * warning says when the lines read were more out of order than the margin.
 *
 * Memory: per thread (its open slices), per open async span, per M event and counter
 * series kept; never per event.
 */
#include "carry.h"
#include "cli.h"
#include "json.h"
#include "merge_json.h"
#include "output.h"
#include "pftrace.h"
#include "seek.h"
#include "threads.h"
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The parts of a plain file read besides the window: its head and its tail. */
#define HEAD_BYTES (1u << 20)
#define TAIL_BYTES (1u << 20)
/* The default --margin: beyond the recorder's drain lag (its flush interval, 100 ms). */
#define DEFAULT_MARGIN_NS 250000000
#define NS_PER_S	  1000000000

/* Which part of the file an event comes from. */
enum part {
	PART_ALL,  /* read in order: everything counts */
	PART_HEAD, /* the first MiB: markers, names, the origin */
	PART_BODY, /* from before the window to after it */
	PART_TAIL  /* the last MiB: X events around the window */
};

/* Per thread, after its thread_state: open[0 .. written) are in the output. */
struct window_thread {
	size_t written;
};

struct window {
	const char *file;
	/* The window as asked, from the origin; to_set false: to the end. */
	int64_t from_rel, to_rel;
	bool to_set, absolute, clip, exact;
	int64_t margin;

	/* The window in the file's ts, once the origin is known. */
	bool has_origin;
	int64_t origin, from, to;

	struct threads threads;
	struct carry carry;
	struct output *out;
	struct buf line, args;
	bool nomem;

	bool first_seen, has_start, has_ids, head_written;
	struct buf start_json;
	int64_t marker_pid, marker_tid;

	/* What was read. */
	bool has_latest;
	int64_t latest; /* the latest time read (an X's end included) */
	bool has_plain;
	int64_t plain_max, max_lag; /* events other than X: how far back one went */
	uint64_t ends_unknown;	    /* E events in the window whose B was not read */
	uint64_t async_unknown;	    /* e events in the window whose b was not read */

	/* What was written. */
	uint64_t events, clipped, reopened, closed, async_reopened, async_closed, counters;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ringtrace window (--from T [--to T] | --to T | --around T --width W)\n"
		"                        [--absolute] [--no-clip] [--exact] [--margin T]\n"
		"                        [-o OUT] [--gzip] FILE\n"
		"\n"
		"Writes the part of the trace FILE (.json or .json.gz; - is standard input)\n"
		"that overlaps a time window, as a trace that opens alone in a viewer: the\n"
		"start marker and the names, the events inside the window, X events around it\n"
		"clipped to it, slices open at its start reopened there and those open at its\n"
		"end ended there, each counter's value at its start, an end marker.\n"
		"\n"
		"Times are a number and a unit, s, ms, us or ns (1.5s, 250ms), from the\n"
		"trace's start: the ts of its first event (the recorder's start marker, at 0).\n"
		"A plain file is searched (binary search on its lines, the recorder's one event\n"
		"per line), not read whole; gzip and standard input are read in order.\n"
		"\n"
		"options:\n"
		"  -f, --from T       the window's start (default: the trace's start)\n"
		"  -t, --to T         its end (default: the trace's end)\n"
		"  -a, --around T     the window's middle, with --width\n"
		"  -w, --width W      its width, with --around\n"
		"  -A, --absolute     times are ts values of the file, not from its start\n"
		"  -n, --no-clip      X events around the window whole, not clipped to it\n"
		"  -x, --exact        read a plain file in order too: every slice open at the\n"
		"                     window's start is found, at the reader's speed\n"
		"  -m, --margin T     how far before and after the window a search reads\n"
		"                     (default 250ms: the recorder writes threads' events up\n"
		"                     to its flush interval, 100 ms, out of order)\n"
		"  -o, --output OUT   where to write (default: FILE with .window before\n"
		"                     .json; standard output for standard input); gzip when\n"
		"                     OUT ends in .gz\n"
		"  -z, --gzip         write gzip\n"
		"  -h, --help         this help\n"
		"\n"
		"exit status: 0 written, 1 not a trace (nothing written), 2 usage error,\n"
		"unreadable or malformed input (the output then holds the window up to the\n"
		"error), failed output.\n");
}

/* -------------------------------------------------------------------- times */

/*
 * A time with its unit, "1.5s", "250ms", "20us", "7ns" (no sign), in ns. 0, or -1
 * when it is not one or does not fit int64 nanoseconds.
 */
static int parse_time(const char *s, int64_t *ns)
{
	static const struct {
		const char *unit;
		int64_t ns;
	} units[] = {{"s", NS_PER_S}, {"ms", 1000000}, {"us", 1000}, {"ns", 1}};
	uint64_t whole = 0, frac = 0, frac_scale = 1;
	const char *p = s;
	int64_t unit = 0;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (whole > (UINT64_MAX - 9) / 10)
			return -1;
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return -1;
		for (; *p >= '0' && *p <= '9'; p++) {
			if (frac_scale >= 1000000000000000000u)
				return -1; /* finer than any unit's ns */
			frac = frac * 10 + (uint64_t)(*p - '0');
			frac_scale *= 10;
		}
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(p, units[i].unit) == 0)
			unit = units[i].ns;
	}
	if (unit == 0 || whole > (uint64_t)INT64_MAX / (uint64_t)unit)
		return -1;
	whole *= (uint64_t)unit;
	/* frac / frac_scale of a unit, in whole ns (frac_scale <= 10^18, unit <= 10^9). */
	if (frac_scale > 1) {
		unsigned __int128 f = (unsigned __int128)frac * (uint64_t)unit / frac_scale;

		if ((unsigned __int128)frac * (uint64_t)unit % frac_scale != 0)
			return -1; /* finer than 1 ns */
		if (f > (uint64_t)INT64_MAX - whole)
			return -1;
		whole += (uint64_t)f;
	}
	*ns = (int64_t)whole;
	return 0;
}

/* The window in the file's ts, from the origin (the first ts read). */
static void set_origin(struct window *w, int64_t origin)
{
	w->has_origin = true;
	w->origin = w->absolute ? 0 : origin;
	w->from = w->from_rel > INT64_MAX - w->origin ? INT64_MAX : w->origin + w->from_rel;
	w->to = !w->to_set			    ? INT64_MAX
		: w->to_rel > INT64_MAX - w->origin ? INT64_MAX
						    : w->origin + w->to_rel;
}

/* The time of an event as the recorder writes it: its ts, or the end of an X. */
static int64_t end_of(const struct trace_event *ev)
{
	int64_t t = ev->ts_ns;

	if (ev->phase == 'X' && ev->has_dur && ev->dur_ns > 0 && t <= INT64_MAX - ev->dur_ns)
		t += ev->dur_ns;
	return t;
}

/* Where what is open at the end is ended: the window's end, or the latest time read
 * when the trace ends before it. */
static int64_t close_time(const struct window *w)
{
	int64_t t = w->has_latest && w->latest < w->to ? w->latest : w->to;

	return t < w->from ? w->from : t;
}

/* -------------------------------------------------------------- the output */

static int nomem(struct window *w)
{
	w->nomem = true;
	return -1;
}

static int write_line(struct window *w, const char *json, size_t len)
{
	return output_write(w->out, json, len) || output_write(w->out, ",\n", 2);
}

/* An event of the file written again at ts (a reopened B or b, a counter's value). */
static int write_at(struct window *w, const char *json, size_t len, int64_t ts)
{
	struct event_edit e = {.set_ts = true, .ts_ns = ts, .duplicates = true};

	w->line.len = 0;
	if (event_rewrite(&w->line, json, len, &e))
		return nomem(w);
	return write_line(w, w->line.p, w->line.len);
}

/* "window_from":F,"window_to":T into w->args (T: the window's end, when it has one). */
static int window_args(struct window *w, bool has_to, int64_t to)
{
	struct buf *a = &w->args;

	a->len = 0;
	return buf_puts(a, "\"window_from\":") || buf_put_us(a, w->from) ||
	       (has_to && (buf_puts(a, ",\"window_to\":") || buf_put_us(a, to)));
}

/* Before the window's first event: the start marker, the names, the counters. */
static int write_head(struct window *w)
{
	if (w->head_written)
		return 0;
	w->head_written = true;
	w->line.len = 0;
	if (window_args(w, w->to_set, w->to) ||
	    carry_start_marker(&w->line, w->has_start ? w->start_json.p : NULL, w->start_json.len,
			       true, w->from, w->marker_pid, w->marker_tid, w->args.p, w->args.len))
		return nomem(w);
	if (write_line(w, w->line.p, w->line.len))
		return -1;
	for (struct kept_event *k = table_first(&w->carry.meta); k != NULL; k = table_next(k)) {
		if (write_line(w, k->json, k->len))
			return -1;
	}
	for (struct kept_event *k = table_first(&w->carry.counters); k != NULL; k = table_next(k)) {
		if (write_at(w, k->json, k->len, w->from))
			return -1;
		w->counters++;
	}
	return 0;
}

/* The thread's slices opened before the window and not written yet, at its start. */
static int reopen_slices(struct window *w, struct thread_state *th)
{
	struct window_thread *wt = thread_extra(th);

	for (; wt->written < th->depth; wt->written++) {
		const struct open_slice *s = &th->open[wt->written];

		if (write_at(w, s->json, s->json_len, w->from))
			return -1;
		w->reopened++;
	}
	return 0;
}

/* The same for an async span's b events. */
static int reopen_span(struct window *w, struct async_span *as)
{
	for (; as->written < as->depth; as->written++) {
		if (write_at(w, as->open[as->written].json, as->open[as->written].len, w->from))
			return -1;
		w->async_reopened++;
	}
	return 0;
}

static int copy_event(struct window *w, const struct trace_event *ev)
{
	w->events++;
	return write_line(w, ev->json, ev->json_len);
}

/* An X that overlaps the window: clipped to it (unless --no-clip), or as it is. */
static int write_x(struct window *w, const struct trace_event *ev)
{
	int64_t start = ev->ts_ns, end = end_of(ev);
	struct event_edit e = {.duplicates = true};

	if (write_head(w))
		return -1;
	if (!w->clip || (start >= w->from && end <= w->to))
		return copy_event(w, ev);
	if (start < w->from)
		start = w->from;
	if (end > w->to)
		end = w->to;
	e.set_ts = e.set_dur = true;
	e.ts_ns = start;
	e.dur_ns = end - start;
	w->line.len = 0;
	if (event_rewrite(&w->line, ev->json, ev->json_len, &e))
		return nomem(w);
	w->clipped++;
	w->events++;
	return write_line(w, w->line.p, w->line.len);
}

static int write_end_marker(struct window *w)
{
	struct buf *b = &w->line;
	int64_t at = close_time(w);

	b->len = 0;
	if (window_args(w, true, at) ||
	    buf_puts(b, "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"" END_MARKER "\",\"ts\":") ||
	    buf_put_us(b, at) || buf_puts(b, ",\"pid\":") || buf_put_i64(b, w->marker_pid) ||
	    buf_puts(b, ",\"tid\":") || buf_put_i64(b, w->marker_tid) ||
	    buf_puts(b, ",\"args\":{\"final\":true,") || buf_put(b, w->args.p, w->args.len) ||
	    buf_puts(b, ",\"window_events\":") || buf_put_u64(b, w->events) ||
	    buf_puts(b, ",\"x_clipped\":") || buf_put_u64(b, w->clipped) ||
	    buf_puts(b, ",\"slices_reopened\":") || buf_put_u64(b, w->reopened) ||
	    buf_puts(b, ",\"slices_closed\":") || buf_put_u64(b, w->closed) ||
	    buf_puts(b, ",\"async_reopened\":") || buf_put_u64(b, w->async_reopened) ||
	    buf_puts(b, ",\"async_closed\":") || buf_put_u64(b, w->async_closed) ||
	    buf_puts(b, "}}"))
		return nomem(w);
	return output_write(w->out, b->p, b->len) || output_puts(w->out, "\n]\n");
}

/* The input is read: what is open, ended at the window's end; the end marker. */
static int finish(struct window *w)
{
	int64_t at = close_time(w);
	struct buf *b = &w->line;

	if (!w->has_origin)
		set_origin(w, 0);
	if (write_head(w))
		return -1;
	for (struct thread_state *th = threads_first(&w->threads); th != NULL;
	     th = threads_next(th)) {
		if (reopen_slices(w, th))
			return -1;
		for (size_t i = th->depth; i-- > 0;) {
			const struct open_slice *s = &th->open[i];

			b->len = 0;
			if (put_end_event(b, 'E', s->cat, s->cat_len, s->name, s->name_len, NULL, 0,
					  at, th->pid, th->tid))
				return nomem(w);
			if (write_line(w, b->p, b->len))
				return -1;
			w->closed++;
		}
	}
	for (struct async_span *as = table_first(&w->carry.async); as != NULL;
	     as = table_next(as)) {
		if (reopen_span(w, as))
			return -1;
		for (size_t i = as->depth; i-- > 0;) {
			b->len = 0;
			if (put_end_event(b, 'e', as->cat, as->cat_len, as->name, as->name_len,
					  as->id, as->id_len, at, as->pid, as->tid))
				return nomem(w);
			if (write_line(w, b->p, b->len))
				return -1;
			w->async_closed++;
		}
	}
	return write_end_marker(w);
}

/* ---------------------------------------------------------------- the events */

static void note_time(struct window *w, const struct trace_event *ev)
{
	int64_t t = end_of(ev);

	if (!w->has_latest || t > w->latest)
		w->latest = t;
	w->has_latest = true;
	if (ev->phase == 'X')
		return;
	/* How far back in time the file went (X events aside: other writers put them
	 * at their start): more than the margin, and a search may have missed events. */
	if (!w->has_plain || ev->ts_ns > w->plain_max)
		w->plain_max = ev->ts_ns;
	w->has_plain = true;
	if (w->plain_max - ev->ts_ns > w->max_lag)
		w->max_lag = w->plain_max - ev->ts_ns;
}

static int take_slice(struct window *w, const struct trace_event *ev)
{
	struct thread_state *th = threads_of(&w->threads, ev);
	struct window_thread *wt;

	if (th == NULL)
		return nomem(w);
	wt = thread_extra(th);
	if (ev->ts_ns > w->to)
		return 0; /* after the window: its thread's later B and E are too */
	if (ev->phase == 'B') {
		if (ev->ts_ns >= w->from && (write_head(w) || reopen_slices(w, th)))
			return -1;
		if (thread_push(th, ev) == -ENOMEM)
			return nomem(w);
		if (thread_untracked(th))
			return 0; /* past the state bound (threads.h): neither it nor its E */
		if (ev->ts_ns < w->from)
			return 0; /* reopened when its thread's first event in the window comes */
		wt->written = th->depth;
		return copy_event(w, ev);
	}
	/* An E. */
	if (thread_untracked(th)) {
		thread_pop(th);
		return 0;
	}
	if (th->depth == 0) {
		if (ev->ts_ns >= w->from)
			w->ends_unknown++; /* its B is before what was read */
		return 0;
	}
	if (ev->ts_ns < w->from && wt->written < th->depth) {
		thread_pop(th); /* a slice that ended before the window */
		return 0;
	}
	if (write_head(w) || reopen_slices(w, th))
		return -1;
	thread_pop(th);
	wt->written--;
	if (ev->ts_ns < w->from)
		return write_at(w, ev->json, ev->json_len, w->from);
	return copy_event(w, ev);
}

static int take_async(struct window *w, const struct trace_event *ev)
{
	struct async_span *as;
	int change;

	if (ev->ts_ns > w->to)
		return 0;
	if (ev->ts_ns < w->from) {
		change = carry_async(&w->carry, ev, &as);
		if (change < 0)
			return nomem(w);
		if (change == CARRY_ASYNC_ENDED && as->depth == 0)
			carry_async_forget(&w->carry, as);
		return 0;
	}
	if (write_head(w))
		return -1;
	/* The span's b events from before the window first, then this event. */
	if (ev->cat.type == TRACE_STRING && ev->id.type != TRACE_ABSENT) {
		struct async_span *open;

		w->carry.key.len = 0;
		if (carry_key_add(&w->carry.key, &ev->cat) ||
		    carry_key_add(&w->carry.key, &ev->id) ||
		    carry_key_add(&w->carry.key, &ev->name))
			return nomem(w);
		open = table_get(&w->carry.async, w->carry.key.p, w->carry.key.len);
		if (open != NULL && reopen_span(w, open))
			return -1;
		if (ev->phase == 'e' && (open == NULL || open->depth == 0)) {
			w->async_unknown++; /* its b is before what was read */
			return 0;
		}
	}
	change = carry_async(&w->carry, ev, &as);
	if (change < 0)
		return nomem(w);
	if (change == CARRY_ASYNC_OPENED)
		as->written = as->depth;
	if (change == CARRY_ASYNC_ENDED && as->depth == 0)
		carry_async_forget(&w->carry, as);
	return copy_event(w, ev);
}

/* The first event: the start marker is kept, the origin is the first ts. */
static int take_first(struct window *w, const struct trace_event *ev)
{
	if (!w->has_ids) {
		trace_event_thread(ev, &w->marker_pid, &w->marker_tid);
		w->has_ids = true;
	}
	if (!w->first_seen) {
		w->first_seen = true;
		if (is_marker(ev, START_MARKER)) {
			w->has_start = true;
			trace_event_thread(ev, &w->marker_pid, &w->marker_tid);
			if (buf_put(&w->start_json, ev->json, ev->json_len))
				return nomem(w);
		}
	}
	if (!w->has_origin && ev->has_ts)
		set_origin(w, ev->ts_ns);
	return 0;
}

static int take(struct window *w, const struct trace_event *ev, enum part part)
{
	if (take_first(w, ev))
		return -1;
	if (is_marker(ev, START_MARKER) || is_marker(ev, END_MARKER))
		return 0; /* the window writes its own */
	if (ev->phase == 'M') {
		/* In the tail too: the recorder names a thread before its first event,
		 * which for the main thread may be a run-long X written last. */
		if (!w->head_written || part == PART_HEAD)
			return carry_meta(&w->carry, ev) ? nomem(w) : 0;
		return copy_event(w, ev);
	}
	if (!ev->has_ts || part == PART_HEAD)
		return 0;
	if (part == PART_TAIL) {
		/* Long X events the recorder wrote when they ended, after the part read. */
		if (ev->phase == 'X' && ev->has_dur && ev->ts_ns <= w->to && end_of(ev) >= w->from)
			return write_x(w, ev);
		return 0;
	}
	note_time(w, ev);
	switch (ev->phase) {
	case 'X':
		if (!ev->has_dur || ev->dur_ns < 0)
			break; /* as an instant */
		if (ev->ts_ns > w->to || end_of(ev) < w->from)
			return 0;
		return write_x(w, ev);
	case 'B':
	case 'E':
		return take_slice(w, ev);
	case 'b':
	case 'e':
	case 'n':
		return take_async(w, ev);
	case 'C':
		if (ev->ts_ns < w->from)
			return carry_counter(&w->carry, ev) ? nomem(w) : 0;
		break;
	default:
		break;
	}
	if (ev->ts_ns < w->from || ev->ts_ns > w->to)
		return 0;
	if (write_head(w))
		return -1;
	{
		struct thread_state *th = threads_of(&w->threads, ev);

		/* The slices around it first: a flow event binds to them. */
		if (th == NULL)
			return nomem(w);
		if (reopen_slices(w, th))
			return -1;
	}
	return copy_event(w, ev);
}

/* ------------------------------------------------------------------ reading */

struct source {
	struct cli_warnings warnings;
	uint64_t bytes; /* read from the file */
	unsigned probes;
	bool searched;
	uint64_t size;
	int rc;			/* of the last trace_next() */
	struct trace_status st; /* of the last reader */
};

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
static int read_part(struct window *w, struct source *src, const char *path, enum part part,
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
		err = take(w, ev, part);
		if (err)
			break;
	}
	src->rc = rc;
	src->st = *trace_status(r);
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
	err = read_part(w, src, feed.path, part, from, stop, stop_at);
	range_feed_close(&feed);
	src->bytes += feed.bytes;
	return err;
}

/* Is the file at fd plain text that can be searched (a regular file, not gzip)? */
static bool searchable(int fd, uint64_t *size)
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
static int read_searched(struct window *w, struct source *src, int fd, bool *sequential)
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

/* ---------------------------------------------------------------- the command */

static void free_window(struct window *w)
{
	threads_destroy(&w->threads);
	carry_destroy(&w->carry);
	buf_free(&w->line);
	buf_free(&w->args);
	buf_free(&w->start_json);
	output_free(w->out);
}

static int time_option(const char *opt, const char *arg, int64_t *ns)
{
	if (parse_time(arg, ns) != 0)
		return cli_usage_error("window",
				       "%s wants a time with its unit (1.5s, 250ms, 20us, 7ns), "
				       "not '%s'",
				       opt, arg);
	return 0;
}

static void say_mb(char *out, size_t n, uint64_t bytes)
{
	snprintf(out, n, "%.1f MB", (double)bytes / 1e6);
}

int cmd_window(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"from", required_argument, NULL, 'f'},	  {"to", required_argument, NULL, 't'},
		{"around", required_argument, NULL, 'a'}, {"width", required_argument, NULL, 'w'},
		{"absolute", no_argument, NULL, 'A'},	  {"no-clip", no_argument, NULL, 'n'},
		{"exact", no_argument, NULL, 'x'},	  {"margin", required_argument, NULL, 'm'},
		{"output", required_argument, NULL, 'o'}, {"gzip", no_argument, NULL, 'z'},
		{"help", no_argument, NULL, 'h'},	  {NULL, 0, NULL, 0},
	};
	struct window w = {.clip = true, .margin = DEFAULT_MARGIN_NS};
	struct source src = {.warnings = {.max = 10}};
	bool from_set = false, around_set = false, width_set = false, gzip = false;
	bool sequential = true;
	int64_t around = 0, width = 0;
	const char *output = NULL;
	char *out_path = NULL;
	int ch, err = 0, status = CLI_OK, fd = -1;

	while ((ch = getopt_long(argc, argv, "f:t:a:w:Anxm:o:zh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'f':
			if (time_option("--from", optarg, &w.from_rel))
				return CLI_ERROR;
			from_set = true;
			break;
		case 't':
			if (time_option("--to", optarg, &w.to_rel))
				return CLI_ERROR;
			w.to_set = true;
			break;
		case 'a':
			if (time_option("--around", optarg, &around))
				return CLI_ERROR;
			around_set = true;
			break;
		case 'w':
			if (time_option("--width", optarg, &width))
				return CLI_ERROR;
			width_set = true;
			break;
		case 'A':
			w.absolute = true;
			break;
		case 'n':
			w.clip = false;
			break;
		case 'x':
			w.exact = true;
			break;
		case 'm':
			if (time_option("--margin", optarg, &w.margin))
				return CLI_ERROR;
			break;
		case 'o':
			output = optarg;
			break;
		case 'z':
			gzip = true;
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			return cli_usage_error("window", "unknown option");
		}
	}
	if (argc - optind != 1)
		return cli_usage_error("window",
				       argc == optind ? "no FILE to read" : "one FILE at a time");
	if (around_set != width_set)
		return cli_usage_error("window", "--around and --width go together");
	if (around_set && (from_set || w.to_set))
		return cli_usage_error("window", "--around/--width or --from/--to, not both");
	if (!around_set && !from_set && !w.to_set)
		return cli_usage_error(
			"window", "no window: --from T and/or --to T, or --around T --width W");
	if (around_set) {
		if (width == 0)
			return cli_usage_error("window", "--width wants a time above 0");
		w.from_rel = around > width / 2 ? around - width / 2 : 0;
		w.to_rel = around > INT64_MAX - (width - width / 2) ? INT64_MAX
								    : around + (width - width / 2);
		w.to_set = true;
	}
	if (w.to_set && w.to_rel < w.from_rel)
		return cli_usage_error("window", "the window ends before it begins");

	w.file = strcmp(argv[optind], "-") == 0 ? "<stdin>" : argv[optind];
	src.warnings.file = w.file;
	out_path = output != NULL ? strdup(output) : cli_default_output(argv[optind], "window");
	if (out_path == NULL) {
		cli_error("window", "out of memory");
		return CLI_ERROR;
	}
	if (strcmp(argv[optind], "-") != 0) {
		fd = open(argv[optind], O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			cli_error("window", "cannot read %s: %s", argv[optind], strerror(errno));
			free(out_path);
			return CLI_ERROR;
		}
		/* a .pftrace is read in order, through its JSON (cli_open_trace()) */
		sequential =
			w.exact || pf_sniff_path(argv[optind]) == 1 || !searchable(fd, &src.size);
	}
	err = output_open(out_path, gzip || output_path_is_gzip(out_path), &w.out);
	if (err != 0) {
		cli_error("window", "cannot write %s: %s", out_path, output_strerror(err));
		free(out_path);
		if (fd >= 0)
			close(fd);
		return CLI_ERROR;
	}
	threads_init(&w.threads, sizeof(struct window_thread));
	carry_init(&w.carry);
	err = output_puts(w.out, "[\n");
	if (!err && !sequential)
		err = read_searched(&w, &src, fd, &sequential);
	if (!err && sequential)
		err = read_part(&w, &src, argv[optind], PART_ALL, 0, false, NULL);
	cli_warnings_done(&src.warnings);
	if (!err && cli_not_a_trace("window", w.file, &src.st)) {
		status = CLI_FINDINGS; /* nothing written: the output is not committed */
	} else if (!err && src.rc < 0 && src.st.events == 0) {
		cli_error("window", "%s", src.st.message);
		status = CLI_ERROR;
	} else if (err || finish(&w) || output_commit(w.out) != 0) {
		if (w.nomem)
			cli_error("window", "out of memory");
		else if (output_error(w.out) != NULL)
			cli_error("window", "%s", output_error(w.out));
		status = CLI_ERROR;
	} else {
		char got[32], all[32];

		if (src.rc < 0) {
			cli_error("window", "%s: %s", w.file, src.st.what);
			cli_error("window", "the window holds what was before the error");
			status = CLI_ERROR;
		} else if (src.st.cut) {
			cli_note("window",
				 "warning: %s was cut short: the window holds its whole "
				 "events",
				 w.file);
		}
		if (w.ends_unknown + w.async_unknown > 0)
			cli_note("window",
				 "note: %" PRIu64 " E and %" PRIu64
				 " e events in the window end slices begun before the part of %s "
				 "that was read: left out (--exact reads all of it)",
				 w.ends_unknown, w.async_unknown, w.file);
		if (src.searched && w.max_lag > w.margin)
			cli_note("window",
				 "warning: %s goes back in time by up to %" PRId64
				 " ns between lines, more than --margin (%" PRId64
				 " ns): events of the window may be missing; use a larger "
				 "--margin, or --exact",
				 w.file, w.max_lag, w.margin);
		say_mb(got, sizeof(got), src.bytes);
		say_mb(all, sizeof(all), src.size);
		cli_note("window",
			 "wrote %s: %" PRIu64 " events (%" PRIu64 " X clipped), %" PRIu64
			 " slices reopened, %" PRIu64 " ended at the window's end; read %s%s%s%s",
			 output_name(w.out), w.events, w.clipped, w.reopened, w.closed, got,
			 src.size > 0 ? " of " : "", src.size > 0 ? all : "",
			 src.searched ? " (searched)" : " (in order)");
	}
	free_window(&w);
	free(out_path);
	if (fd >= 0)
		close(fd);
	return status;
}
