/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace split`: a trace cut into self-contained pieces under the viewers' limits
 * (chrome://tracing fails past about 256 MB or a million events, the Perfetto UI
 * near 2 GB), PREFIX-0001.json, PREFIX-0002.json, ..., each a complete, strict
 * bare array that `ringtrace check` passes.
 *
 * One streaming pass; events are copied in file order, and a piece is cut before the
 * event that would take it over the limit. Each piece:
 *
 * - begins with a start marker: the original's (origin, host, rank, ...) with
 *   "piece" and "ts_from" added, at the time the piece begins, so that a viewer does
 *   not stretch every piece back to 0 (and `merge` still finds the origin);
 * - repeats every M event seen so far (process and thread names, sort indexes,
 *   labels), the latest of each per process or thread, so that every lane is named;
 * - reopens the B slices the previous piece closed, outermost first, each with its
 *   original B (name, cat, args) at its thread's latest B or E (the innermost
 *   --max-reopen of a thread: the E events of the others are left out), and the
 *   async spans likewise (b events);
 * - holds the file's events from the cut on, X events in the piece where they appear;
 * - closes what is open at its end: an E per open B, innermost first, 1 ns after its
 *   thread's latest event other than an X and the end of every X begun inside it
 *   (see cut_times below), and an e per open async span after the latest time of all;
 * - ends with an end marker: piece number, its time range and counts (and, in the
 *   last piece, the original end marker's counts), then the closing ']'.
 *
 * Why the thread's own latest time, not one cut time for all threads: the recorder
 * drains each thread's ring in turn, so a file is in time order per thread but not
 * across threads; an E or a reopened B at a time another thread reached would go
 * backward against the thread's next events. A reopened span's b is at the span's own
 * latest time for the same reason.
 *
 * Flow events. `check` and the viewers bind a flow event to a slice around it on its
 * thread, and that slice must be in the same piece. The recorder writes a thread's X
 * when it ends, after the flow events inside it, and a track's flow ends just after
 * their X. So a flow event that nothing encloses yet is held back until the X or B
 * that encloses it (and then written just before it); held at a cut, it moves to the
 * next piece once, and is written anyway at the end of that one. And an X waits for
 * the next event: the flow events right after it that it encloses go into the same
 * piece as it. A flow whose s and f fall in two pieces stays joined: each piece up
 * to its f repeats its s (repeat_flows()), with the X around it or inside the
 * reopened B around it; at most MAX_OPEN_FLOWS are kept.
 *
 * Memory: state per thread (open slices, held flows), per open async span and per M
 * event kept; never per event.
 */
#include "carry.h"
#include "cli.h"
#include "json.h"
#include "merge_json.h"
#include "output.h"
#include "progress.h"
#include "table.h"
#include "threads.h"
#include "trace.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Open slices reopened per thread at a cut, by default (--max-reopen). */
#define DEFAULT_MAX_REOPEN 256

/* Recent slices per thread that place a flow event, as `check` keeps them. */
#define RECENT_SLICES 16
/* Flow events held per thread before the oldest is written anyway. */
#define MAX_HELD_FLOWS 4096
/* Room kept in each piece for its end marker. */
#define END_RESERVE 4096
/* What an E or e that closes a slice can take beyond its escaped strings (which take
 * at most 6 bytes per byte, as \u00XX). */
#define CLOSE_BYTES 128
#define MB	    1000000u
/* Flow events kept with the X before them. */
#define MAX_X_FLOWS 64
/* Flows begun and not ended that a cut repeats, in all (the oldest are forgotten). */
#define MAX_OPEN_FLOWS 256

/* What a flow event written encloses: an X (its JSON), the innermost open B of its
 * thread, or nothing known. */
struct flow_slice {
	const char *x;
	size_t x_len;
	bool by_b;
	uint64_t b_line; /* open_slice.line of that B */
};

/* The value of split.flows, under (cat, name, id): a flow whose s was written and whose
 * f was not yet, to repeat its s (and the X around it) in the next piece. */
struct open_flow {
	char *s, *x; /* the s event; the X around it, or NULL */
	size_t s_len, x_len;
	bool by_b;
	uint64_t b_line;
	int64_t pid, tid;
};

struct interval {
	int64_t start, end;
};

struct held_flow {
	char *json;
	size_t len;
	int64_t ts_ns;
	unsigned piece; /* the piece it was held in */
};

/* Per thread, after its thread_state (threads.h). */
struct split_thread {
	struct interval recent[RECENT_SLICES];
	unsigned nrecent, next_recent;
	struct held_flow *held;
	size_t nheld, held_cap;
	/* The outermost open slices not reopened in this piece (beyond --max-reopen):
	 * open[0 .. absent). Their E events are left out of it. */
	size_t absent;
	/* The X last written on the thread, to repeat it around a flow's s. */
	struct buf last_x;
	int64_t last_x_start, last_x_end;
	/* Times that place a cut's E and B events on the thread (see cut_times()): the
	 * latest B or E, the latest event other than an X, and per open slice the latest
	 * end of an X that began inside it (inner_end[i] for open[i]). */
	bool has_be, has_plain;
	int64_t be_ns, plain_ns;
	int64_t *inner_end;
	size_t inner_cap;
};

/*
 * An X not yet written, and the flow events right after it that it encloses: the
 * recorder writes a track's flow ends just after their X, so both go into one piece
 * (a flow in the next piece would have no slice around it there).
 */
struct pending_x {
	bool active;
	int64_t pid, tid, start, end;
	bool has_pid;
	struct buf json;	      /* the X, then each flow event */
	size_t ends[MAX_X_FLOWS + 1]; /* where each ends in json */
	int64_t flow_ts[MAX_X_FLOWS];
	size_t n; /* events in json, the X included */
};

struct split {
	const char *file;
	uint64_t max_events, max_bytes; /* 0: no limit */
	uint64_t max_reopen;		/* slices reopened per thread at a cut */
	uint64_t not_reopened, ends_left_out;
	char *prefix;
	bool gzip;

	struct threads threads;
	struct carry carry; /* names and async spans, for the next piece */
	struct buf line, args;
	bool nomem;

	/* The original's markers. */
	bool first_seen;
	bool has_start;
	struct buf start_json;
	bool has_ids;
	int64_t marker_pid, marker_tid;
	bool held_end; /* the last end marker seen, until an event after it */
	struct buf end_json, end_args;
	bool end_has_ts;
	int64_t end_ts;

	/* All pieces. */
	unsigned piece;
	struct output *out; /* the piece being written, or NULL */
	char *path;
	bool has_latest;
	int64_t latest; /* over the whole file so far */
	uint64_t events, closed, reopened, async_closed;
	bool warned_framing;

	struct pending_x px;

	struct table flows; /* struct open_flow */
	struct buf flow_key;
	uint64_t flows_repeated, flows_forgotten, flows_unbound;

	/* The piece being written. */
	uint64_t lines, bytes;
	uint64_t piece_events;
	uint64_t close_lines, close_bytes; /* what ending it now adds: E, e, held flows */
	int64_t ts_from, ts_to;
	uint64_t piece_closed, piece_async_closed;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: ringtrace split (--max-mb N | --max-events N) [-o PREFIX] [--gzip] "
		   "FILE\n"
		   "\n"
		   "Cuts the trace FILE (.json or .json.gz; - is standard input) into pieces\n"
		   "PREFIX-0001.json, PREFIX-0002.json, ... that each open alone in a viewer:\n"
		   "each begins with the start marker and the process and thread names seen so\n"
		   "far, reopens the slices open at its start, closes those open at its end, and\n"
		   "ends with an end marker. chrome://tracing fails past about 256 MB or a\n"
		   "million events; the Perfetto UI near 2 GB.\n"
		   "\n"
		   "options:\n"
		   "  -m, --max-mb N       at most N MB (10^6 bytes) of text per piece (before\n"
		   "                       gzip)\n"
		   "  -e, --max-events N   at most N events per piece, its markers, names and\n"
		   "                       closed and reopened slices included\n"
		   "  -r, --max-reopen N   slices reopened per thread at a cut, the innermost\n"
		   "                       (and never more than half a piece in all)\n"
		   "                       (default 256; the E of the others are left out)\n"
		   "  -o, --output PREFIX  where to write (default: FILE without .json or\n"
		   "                       .json.gz); a PREFIX ending in .gz (or .json.gz) writes\n"
		   "                       gzip\n"
		   "  -z, --gzip           write gzip pieces (PREFIX-0001.json.gz, ...)\n"
		   "  -h, --help           this help\n"
		   "\n"
		   "exit status: 0 written, 2 usage error, unreadable or malformed input (the\n"
		   "pieces then hold the events before the error), failed output.\n");
}

/* -------------------------------------------------------------- the output */

static int nomem(struct split *sp)
{
	sp->nomem = true;
	return -1;
}

static int write_line(struct split *sp, const char *json, size_t len)
{
	sp->lines++;
	sp->bytes += len + 2;
	return output_write(sp->out, json, len) || output_write(sp->out, ",\n", 2);
}

/* A time written in the piece. */
static void note_piece_time(struct split *sp, int64_t t)
{
	if (t > sp->ts_to)
		sp->ts_to = t;
}

/* A time of the input's events: the latest of them ends the open async spans. */
static void note_latest(struct split *sp, int64_t t)
{
	if (!sp->has_latest || t > sp->latest) {
		sp->latest = t;
		sp->has_latest = true;
	}
	note_piece_time(sp, t);
}

/* The end of an event in time: ts, or ts + dur for an X. */
static int64_t end_of(const struct trace_event *ev)
{
	int64_t t = ev->ts_ns;

	if (ev->phase == 'X' && ev->has_dur && ev->dur_ns > 0 && t <= INT64_MAX - ev->dur_ns)
		t += ev->dur_ns;
	return t;
}

/* An upper bound of the E or e line that closes a slice with these strings. */
static uint64_t close_cost(size_t cat_len, size_t name_len, size_t id_len)
{
	return CLOSE_BYTES + 6 * (uint64_t)(cat_len + name_len) + id_len;
}

/* Does an event of len bytes fit the piece, with what ending it then takes (a B or b
 * adds the E or e that may have to end it)? */
static bool fits(const struct split *sp, const struct trace_event *ev, uint64_t lines, uint64_t len)
{
	bool opens = ev->phase == 'B' || ev->phase == 'b';
	uint64_t close_lines = sp->close_lines + opens;
	uint64_t close_bytes = sp->close_bytes;

	if (opens)
		close_bytes += close_cost(ev->cat.len, ev->name.len, ev->id.len);
	if (sp->max_events > 0 && sp->lines + lines + close_lines + 1 > sp->max_events)
		return false;
	if (sp->max_bytes > 0 &&
	    sp->bytes + len + 2 * lines + close_bytes + END_RESERVE + 2 > sp->max_bytes)
		return false;
	return true;
}

/* -------------------------------------------------------------- the markers */

/* The marker args a piece adds: "piece":K,"ts_from":T,... into sp->args. */
static int piece_args(struct split *sp, bool end)
{
	struct buf *a = &sp->args;

	a->len = 0;
	if (buf_puts(a, "\"piece\":") || buf_put_u64(a, sp->piece) ||
	    buf_puts(a, ",\"ts_from\":") || buf_put_us(a, sp->ts_from))
		return -1;
	if (end && (buf_puts(a, ",\"ts_to\":") || buf_put_us(a, sp->ts_to) ||
		    buf_puts(a, ",\"piece_events\":") || buf_put_u64(a, sp->piece_events) ||
		    buf_puts(a, ",\"slices_closed\":") || buf_put_u64(a, sp->piece_closed) ||
		    buf_puts(a, ",\"async_closed\":") || buf_put_u64(a, sp->piece_async_closed)))
		return -1;
	return 0;
}

static int write_start_marker(struct split *sp)
{
	struct buf *b = &sp->line;

	if (piece_args(sp, false))
		return nomem(sp);
	b->len = 0;
	if (carry_start_marker(b, sp->has_start ? sp->start_json.p : NULL, sp->start_json.len,
			       sp->piece > 1, sp->ts_from, sp->marker_pid, sp->marker_tid,
			       sp->args.p, sp->args.len))
		return nomem(sp);
	return write_line(sp, b->p, b->len);
}

/* Keys of the original end marker that a piece's end marker writes itself. */
static bool own_end_key(const struct json_member *a)
{
	static const char *const keys[] = {"final",	   "piece",	    "ts_from",	   "ts_to",
					   "piece_events", "slices_closed", "async_closed"};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (json_member_is(a, keys[i]))
			return true;
	}
	return false;
}

/* The piece's end marker and the closing ']'; last: the original's counts too. */
static int write_end_marker(struct split *sp, bool last)
{
	struct buf *b = &sp->line;
	int64_t ts = sp->ts_to;
	bool original = last && sp->held_end;
	struct json_member a;
	size_t pos = 0;
	int err;

	if (original && sp->end_has_ts && sp->end_ts > ts)
		ts = sp->end_ts;
	if (piece_args(sp, true))
		return nomem(sp);
	b->len = 0;
	err = buf_puts(b, "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"" END_MARKER "\",\"ts\":") ||
	      buf_put_us(b, ts) || buf_puts(b, ",\"pid\":") || buf_put_i64(b, sp->marker_pid) ||
	      buf_puts(b, ",\"tid\":") || buf_put_i64(b, sp->marker_tid) ||
	      buf_puts(b, ",\"args\":{\"final\":true");
	while (!err && original && json_next_member(sp->end_args.p, sp->end_args.len, &pos, &a)) {
		if (own_end_key(&a))
			continue;
		err = buf_puts(b, ",\"") || buf_put(b, a.key, a.key_len) || buf_puts(b, "\":") ||
		      buf_put(b, a.value, a.value_len);
	}
	if (err || buf_putc(b, ',') || buf_put(b, sp->args.p, sp->args.len) || buf_puts(b, "}}"))
		return nomem(sp);
	sp->lines++;
	sp->bytes += b->len + 3;
	return output_write(sp->out, b->p, b->len) || output_puts(sp->out, "\n]\n");
}

/* ------------------------------------------------------------ flows, slices */

static void add_recent(struct split_thread *st, int64_t start, int64_t end)
{
	unsigned i;

	/* A slice inside the new one adds nothing: take its place. */
	for (i = 0; i < st->nrecent; i++) {
		if (st->recent[i].start >= start && st->recent[i].end <= end)
			break;
	}
	if (i == st->nrecent) {
		if (st->nrecent < RECENT_SLICES) {
			st->nrecent++;
		} else {
			i = st->next_recent;
			st->next_recent = (st->next_recent + 1) % RECENT_SLICES;
		}
	}
	st->recent[i].start = start;
	st->recent[i].end = end;
}

/* Would `check` find a slice around a flow event at ts on this thread? */
static bool enclosed(const struct thread_state *th, const struct split_thread *st, int64_t ts)
{
	if (th->depth > 0 && th->open[0].ts_ns <= ts)
		return true;
	for (unsigned i = 0; i < st->nrecent; i++) {
		if (st->recent[i].start <= ts && ts <= st->recent[i].end)
			return true;
	}
	return false;
}

static void forget_held(struct split *sp, struct split_thread *st, size_t i)
{
	sp->close_lines--;
	sp->close_bytes -= st->held[i].len + 2;
	free(st->held[i].json);
	memmove(st->held + i, st->held + i + 1, (st->nheld - i - 1) * sizeof(st->held[0]));
	st->nheld--;
}

static void free_flow(struct split *sp, struct open_flow *f)
{
	free(f->s);
	free(f->x);
	table_remove(&sp->flows, f);
}

/*
 * A flow event was written: an s begins a flow that a cut repeats (its s again in the
 * next piece, with the X around it, or inside the reopened B around it), an f ends
 * it. The key is the text of cat, name and id, as the viewers match them.
 */
static int flow_written(struct split *sp, const char *json, size_t len, const struct flow_slice *in)
{
	const char *ph = NULL;
	struct json_member m;
	struct open_flow *f;
	size_t pos = 0;
	bool created;

	sp->flow_key.len = 0;
	while (json_next_member(json, len, &pos, &m)) {
		if (json_member_is(&m, "ph")) {
			ph = m.value;
			continue;
		}
		if (!json_member_is(&m, "cat") && !json_member_is(&m, "name") &&
		    !json_member_is(&m, "id"))
			continue;
		if (buf_put(&sp->flow_key, m.key, m.key_len + 1) ||
		    buf_put(&sp->flow_key, m.value, m.value_len) || buf_putc(&sp->flow_key, 0))
			return nomem(sp);
	}
	if (ph == NULL || (ph[1] != 's' && ph[1] != 'f'))
		return 0;
	if (ph[1] == 'f') {
		f = table_get(&sp->flows, sp->flow_key.p, sp->flow_key.len);
		if (f != NULL)
			free_flow(sp, f);
		return 0;
	}
	if (in == NULL || (in->x == NULL && !in->by_b)) {
		sp->flows_unbound++;
		return 0;
	}
	f = table_put(&sp->flows, sp->flow_key.p, sp->flow_key.len, &created);
	if (f == NULL)
		return nomem(sp);
	free(f->s);
	free(f->x);
	memset(f, 0, sizeof(*f));
	f->s = carry_dup(json, len);
	f->s_len = len;
	if (in->x != NULL) {
		f->x = carry_dup(in->x, in->x_len);
		f->x_len = in->x_len;
	}
	f->by_b = in->x == NULL;
	f->b_line = in->b_line;
	if (f->s == NULL || (in->x != NULL && f->x == NULL))
		return nomem(sp);
	if (sp->flows.count > MAX_OPEN_FLOWS) {
		free_flow(sp, table_first(&sp->flows));
		sp->flows_forgotten++;
	}
	return 0;
}

/* The pid and tid of an event's compact JSON (0 when absent). */
static void json_thread(const char *json, size_t len, int64_t *pid, int64_t *tid)
{
	struct json_member m;
	size_t pos = 0;
	bool has_tid = false;

	*pid = *tid = 0;
	while (json_next_member(json, len, &pos, &m)) {
		if (json_member_is(&m, "pid"))
			(void)json_parse_i64(m.value, m.value_len, pid);
		else if (json_member_is(&m, "tid"))
			has_tid = json_parse_i64(m.value, m.value_len, tid) == 0;
	}
	if (!has_tid)
		*tid = *pid;
}

/* At the start of a piece: the s of each flow still open, with what encloses it. */
static int repeat_flows(struct split *sp)
{
	const char *prev_x = NULL;
	size_t prev_len = 0;

	for (struct open_flow *f = table_first(&sp->flows); f != NULL; f = table_next(f)) {
		if (f->x != NULL) {
			if (prev_x == NULL || prev_len != f->x_len ||
			    memcmp(prev_x, f->x, f->x_len) != 0) {
				if (write_line(sp, f->x, f->x_len))
					return -1;
			}
			prev_x = f->x;
			prev_len = f->x_len;
			if (write_line(sp, f->s, f->s_len))
				return -1;
		} else {
			int64_t pid, tid;
			struct thread_state *th;
			struct split_thread *st;
			const struct open_slice *b = NULL;

			json_thread(f->s, f->s_len, &pid, &tid);
			th = threads_get(&sp->threads, pid, tid);
			if (th == NULL)
				return nomem(sp);
			st = thread_extra(th);
			for (size_t i = st->absent; i < th->depth; i++) {
				if (th->open[i].line == f->b_line)
					b = &th->open[i];
			}
			if (b == NULL)
				continue; /* its slice ended: nothing to bind it to */
			{
				struct event_edit e = {
					.set_ts = true, .ts_ns = b->ts_ns, .duplicates = true};

				sp->line.len = 0;
				if (event_rewrite(&sp->line, f->s, f->s_len, &e))
					return nomem(sp);
				if (write_line(sp, sp->line.p, sp->line.len))
					return -1;
			}
		}
		sp->flows_repeated++;
	}
	return 0;
}

/* Write the held flow events of a thread that [start, end] encloses (or, with
 * all, those held since an earlier piece). */
static int release_flows(struct split *sp, struct split_thread *st, int64_t start, int64_t end,
			 bool all_old, const struct flow_slice *in)
{
	for (size_t i = 0; i < st->nheld;) {
		struct held_flow *h = &st->held[i];
		bool go = all_old ? h->piece < sp->piece : h->ts_ns >= start && h->ts_ns <= end;

		if (!go) {
			i++;
			continue;
		}
		if (write_line(sp, h->json, h->len) || flow_written(sp, h->json, h->len, in))
			return -1;
		sp->piece_events++;
		forget_held(sp, st, i);
	}
	return 0;
}

static int hold_flow(struct split *sp, struct split_thread *st, const struct trace_event *ev)
{
	struct held_flow *h;

	if (st->nheld == MAX_HELD_FLOWS) {
		/* Held too long for any slice to come: write the oldest as it is. */
		if (write_line(sp, st->held[0].json, st->held[0].len) ||
		    flow_written(sp, st->held[0].json, st->held[0].len, NULL))
			return -1;
		sp->piece_events++;
		forget_held(sp, st, 0);
	}
	if (st->nheld == st->held_cap) {
		size_t n = st->held_cap ? st->held_cap * 2 : 8;
		struct held_flow *p = realloc(st->held, n * sizeof(*p));

		if (p == NULL)
			return nomem(sp);
		st->held = p;
		st->held_cap = n;
	}
	h = &st->held[st->nheld];
	h->json = malloc(ev->json_len);
	if (h->json == NULL)
		return nomem(sp);
	memcpy(h->json, ev->json, ev->json_len);
	h->len = ev->json_len;
	h->ts_ns = ev->ts_ns;
	h->piece = sp->piece;
	st->nheld++;
	sp->close_lines++;
	sp->close_bytes += h->len + 2;
	return 0;
}

static uint64_t slice_cost(const struct open_slice *s)
{
	return close_cost(s->cat_len, s->name_len, 0);
}

/* What reopening s costs a piece: its B again (a new ts), and its E at the end. */
static uint64_t reopen_cost(const struct open_slice *s)
{
	return s->json_len + 32 + slice_cost(s);
}

/*
 * The times of a cut on a thread (cut_times). Its B/E events must stay in time order in each piece
 * (Catapult does not sort them) and its slices must nest with its X events, which
 * other writers than the recorder put at their start, long before what they enclose:
 * an X of 10 s at 0 with a B at 1 s and its E at 9 s, cut between the two, must not be
 * closed at 10 s or reopened there (an E at 9 s would then go backward). So:
 *
 * - a slice is reopened at the thread's latest B or E, which every later B or E of the
 *   thread follows (a thread's events are in time order);
 * - open[i] is closed 1 ns after the latest of the thread's events other than X, and
 *   of the ends of the X events that began inside it (the recorder writes an X when it
 *   ends, inside the B around it), and never before what it encloses (innermost first,
 *   so each E is at or after the one before). An X that began before the slice
 *   encloses it and does not move its E.
 */
static void note_plain_time(struct split_thread *st, const struct trace_event *ev)
{
	if (!ev->has_ts || ev->phase == 'X')
		return;
	if (!st->has_plain || ev->ts_ns > st->plain_ns)
		st->plain_ns = ev->ts_ns;
	st->has_plain = true;
	if ((ev->phase == 'B' || ev->phase == 'E') && (!st->has_be || ev->ts_ns > st->be_ns)) {
		st->be_ns = ev->ts_ns;
		st->has_be = true;
	}
}

/* A B was pushed: its own X ends start empty. 0 or -1. */
static int level_pushed(struct thread_state *th, struct split_thread *st)
{
	if (th->depth > st->inner_cap) {
		size_t n = st->inner_cap ? st->inner_cap * 2 : 8;
		int64_t *p = realloc(st->inner_end, n * sizeof(*p));

		if (p == NULL)
			return -1;
		st->inner_end = p;
		st->inner_cap = n;
	}
	st->inner_end[th->depth - 1] = INT64_MIN;
	return 0;
}

/* The innermost open slice is about to end: what it enclosed, its parent does. */
static void level_popping(const struct thread_state *th, struct split_thread *st)
{
	size_t d = th->depth;

	if (d >= 2 && st->inner_end[d - 1] > st->inner_end[d - 2])
		st->inner_end[d - 2] = st->inner_end[d - 1];
}

/* An X [start, end] on the thread: the innermost open slice it began inside. */
static void level_x(const struct thread_state *th, struct split_thread *st, int64_t start,
		    int64_t end)
{
	for (size_t i = th->depth; i-- > 0;) {
		if (th->open[i].ts_ns <= start) {
			if (end > st->inner_end[i])
				st->inner_end[i] = end;
			return;
		}
	}
}

/* Where the thread's open slices are reopened in the next piece. */
static bool reopen_time(const struct thread_state *th, const struct split_thread *st, int64_t *t)
{
	if (st->has_be)
		*t = st->be_ns;
	else if (th->has_time)
		*t = th->latest_ns;
	else
		return false;
	return true;
}

/* An async b, e or n: the spans open, to close and reopen them at a cut. */
static int track_async(struct split *sp, const struct trace_event *ev)
{
	struct async_span *as;
	int change = carry_async(&sp->carry, ev, &as);

	if (change < 0)
		return nomem(sp);
	if (change == CARRY_ASYNC_OPENED) {
		sp->close_lines++;
		sp->close_bytes += close_cost(as->cat_len, as->name_len, as->id_len);
	} else if (change == CARRY_ASYNC_ENDED) {
		sp->close_lines--;
		sp->close_bytes -= close_cost(as->cat_len, as->name_len, as->id_len);
		if (as->depth == 0)
			carry_async_forget(&sp->carry, as);
	}
	return 0;
}

/* ---------------------------------------------------------------- the pieces */

static int open_piece(struct split *sp, int64_t ts_from)
{
	char num[32];
	int err;

	sp->piece++;
	free(sp->path);
	snprintf(num, sizeof(num), "-%04u.json%s", sp->piece, sp->gzip ? ".gz" : "");
	sp->path = malloc(strlen(sp->prefix) + strlen(num) + 1);
	if (sp->path == NULL)
		return nomem(sp);
	strcpy(sp->path, sp->prefix);
	strcat(sp->path, num);
	err = output_open(sp->path, sp->gzip, &sp->out);
	if (err != 0) {
		cli_error("split", "cannot write %s: %s", sp->path, output_strerror(err));
		return -1;
	}
	sp->lines = 0;
	sp->bytes = 2;
	sp->piece_events = 0;
	sp->piece_closed = sp->piece_async_closed = 0;
	sp->ts_from = sp->ts_to = ts_from;
	return output_puts(sp->out, "[\n");
}

/* The start of a piece after the first: marker, names, the slices and spans that the
 * previous piece closed, reopened. */
static int begin_piece(struct split *sp, int64_t ts_from)
{
	struct buf *b = &sp->line;

	if (open_piece(sp, ts_from) || write_start_marker(sp))
		return -1;
	for (struct kept_event *mt = table_first(&sp->carry.meta); mt != NULL;
	     mt = table_next(mt)) {
		if (write_line(sp, mt->json, mt->len))
			return -1;
	}
	uint64_t room_lines = sp->max_events / 2, room_bytes = sp->max_bytes / 2;

	for (struct thread_state *th = threads_first(&sp->threads); th != NULL;
	     th = threads_next(th)) {
		struct split_thread *st = thread_extra(th);
		int64_t at = 0;
		bool has_at = reopen_time(th, st, &at);

		st->nrecent = st->next_recent = 0;
		/* The innermost max_reopen: a stack of unended B events (a hostile file,
		 * or one whose E were lost) would otherwise be repeated by every piece. */
		st->absent = th->depth > sp->max_reopen ? th->depth - sp->max_reopen : 0;
		/* And at most half a piece of them in all: many threads with a slice open
		 * each would otherwise fill every piece with them. The thread's innermost
		 * slices that fit are reopened, the rest left out like the above. */
		for (;;) {
			uint64_t lines = th->depth - st->absent, bytes = 0;

			for (size_t i = st->absent; i < th->depth; i++)
				bytes += reopen_cost(&th->open[i]);
			if ((sp->max_events == 0 || lines <= room_lines) &&
			    (sp->max_bytes == 0 || bytes <= room_bytes)) {
				room_lines -= sp->max_events > 0 ? lines : 0;
				room_bytes -= sp->max_bytes > 0 ? bytes : 0;
				break;
			}
			st->absent++;
		}
		sp->not_reopened += st->absent;
		for (size_t i = st->absent; i < th->depth; i++) {
			struct event_edit e = {.set_ts = has_at, .ts_ns = at, .duplicates = true};
			struct open_slice *s = &th->open[i];

			b->len = 0;
			if (event_rewrite(b, s->json, s->json_len, &e))
				return nomem(sp);
			if (write_line(sp, b->p, b->len))
				return -1;
			/* It begins here now: what encloses a flow in this piece, and the X
			 * events of the piece that it encloses. */
			if (has_at)
				s->ts_ns = at;
			st->inner_end[i] = INT64_MIN;
			sp->close_lines++;
			sp->close_bytes += slice_cost(s);
			sp->reopened++;
		}
	}
	for (struct async_span *as = table_first(&sp->carry.async); as != NULL;
	     as = table_next(as)) {
		for (size_t i = 0; i < as->depth; i++) {
			struct event_edit e = {
				.set_ts = true, .ts_ns = as->latest_ns, .duplicates = true};

			b->len = 0;
			if (event_rewrite(b, as->open[i].json, as->open[i].len, &e))
				return nomem(sp);
			if (write_line(sp, b->p, b->len))
				return -1;
			sp->close_lines++;
			sp->close_bytes += close_cost(as->cat_len, as->name_len, as->id_len);
		}
	}
	if (repeat_flows(sp))
		return -1;
	for (struct thread_state *th = threads_first(&sp->threads); th != NULL;
	     th = threads_next(th)) {
		struct split_thread *st = thread_extra(th);

		for (size_t i = 0; i < st->nheld; i++) {
			sp->close_lines++;
			sp->close_bytes += st->held[i].len + 2;
		}
	}
	return 0;
}

/*
 * End the piece: flows held since the previous piece, an E per open B (innermost
 * first, 1 ns after its thread's latest time), an e per open async span, the end
 * marker. At a cut the open state stays: the next piece reopens it. last: nothing
 * follows; what is open is ended only when close says so (the input was cut short),
 * else left as the original left it.
 */
static int end_piece(struct split *sp, bool last, bool close)
{
	struct buf *b = &sp->line;
	int64_t async_at = ns_after(sp->has_latest ? sp->latest : 0);

	for (struct thread_state *th = threads_first(&sp->threads); th != NULL;
	     th = threads_next(th)) {
		if (release_flows(sp, thread_extra(th), 0, 0, true, NULL))
			return -1;
	}
	for (struct thread_state *th = threads_first(&sp->threads); th != NULL;
	     th = threads_next(th)) {
		struct split_thread *st = thread_extra(th);
		int64_t run, at = 0;

		if (th->depth <= st->absent || !close)
			continue;
		run = st->has_plain ? st->plain_ns : th->open[th->depth - 1].ts_ns;
		for (size_t i = th->depth; i-- > st->absent;) {
			const struct open_slice *s = &th->open[i];

			if (st->inner_end[i] > run)
				run = st->inner_end[i];
			at = ns_after(run);
			b->len = 0;
			if (put_end_event(b, 'E', s->cat, s->cat_len, s->name, s->name_len, NULL, 0,
					  at, th->pid, th->tid))
				return nomem(sp);
			if (write_line(sp, b->p, b->len))
				return -1;
			sp->piece_closed++;
			sp->closed++;
		}
		note_piece_time(sp, at);
		if (last) {
			while (th->depth > 0)
				thread_pop(th);
			st->absent = 0;
		}
	}
	if (close) {
		for (struct async_span *as = table_first(&sp->carry.async); as != NULL;
		     as = table_next(as)) {
			for (size_t i = as->depth; i-- > 0;) {
				b->len = 0;
				if (put_end_event(b, 'e', as->cat, as->cat_len, as->name,
						  as->name_len, as->id, as->id_len, async_at,
						  as->pid, as->tid))
					return nomem(sp);
				if (write_line(sp, b->p, b->len))
					return -1;
				sp->piece_async_closed++;
				sp->async_closed++;
			}
			if (as->depth > 0)
				note_piece_time(sp, async_at);
		}
	}
	if (write_end_marker(sp, last))
		return -1;
	if (output_commit(sp->out) != 0) {
		cli_error("split", "%s", output_error(sp->out));
		return -1;
	}
	output_free(sp->out);
	sp->out = NULL;
	sp->close_lines = sp->close_bytes = 0;
	return 0;
}

/* Cut before the event ev: end this piece, begin the next at the cut. */
static int cut(struct split *sp, const struct trace_event *ev)
{
	int64_t from = ev->has_ts ? ev->ts_ns : sp->latest;

	if (end_piece(sp, false, true))
		return -1;
	for (struct thread_state *th = threads_first(&sp->threads); th != NULL;
	     th = threads_next(th)) {
		int64_t at;

		if (th->depth > 0 && reopen_time(th, thread_extra(th), &at) && at < from)
			from = at;
	}
	for (struct async_span *as = table_first(&sp->carry.async); as != NULL;
	     as = table_next(as)) {
		if (as->latest_ns < from)
			from = as->latest_ns;
	}
	if (begin_piece(sp, from))
		return -1;
	if (!sp->warned_framing && sp->max_events > 0 &&
	    sp->lines + 2 + sp->close_lines >= sp->max_events) {
		sp->warned_framing = true;
		cli_note("split",
			 "warning: %s: the names and open slices a piece repeats leave no room "
			 "under --max-events %" PRIu64 ": a piece holds one event at least",
			 sp->path, sp->max_events);
	} else if (!sp->warned_framing && sp->max_bytes > 0 &&
		   sp->bytes + sp->close_bytes + END_RESERVE >= sp->max_bytes) {
		sp->warned_framing = true;
		cli_note("split",
			 "warning: %s: the names and open slices a piece repeats leave no room "
			 "under --max-mb: a piece holds one event at least",
			 sp->path);
	}
	return 0;
}

/* Where the next events go (ev and lines - 1 more, len bytes in all): the first
 * piece, or a new one when they do not fit. */
static int place(struct split *sp, const struct trace_event *ev, uint64_t lines, uint64_t len)
{
	if (sp->out == NULL) {
		if (!sp->has_ids) {
			trace_event_thread(ev, &sp->marker_pid, &sp->marker_tid);
			sp->has_ids = true;
		}
		return open_piece(sp, ev->has_ts ? ev->ts_ns : 0) || write_start_marker(sp);
	}
	if (sp->piece_events > 0 && !fits(sp, ev, lines, len))
		return cut(sp, ev);
	return 0;
}

/* An event written as it is, counted as the input's. */
static int copy_event(struct split *sp, const struct trace_event *ev)
{
	sp->piece_events++;
	sp->events++;
	if (ev->has_ts)
		note_latest(sp, end_of(ev));
	return write_line(sp, ev->json, ev->json_len);
}

/* A held end marker with events after it: an ordinary event after all. */
static int write_held_end(struct split *sp)
{
	struct trace_event none = {0};

	sp->held_end = false;
	none.ts_ns = sp->latest;
	none.has_ts = sp->has_latest;
	if (sp->piece_events > 0 && !fits(sp, &none, 1, sp->end_json.len)) {
		if (cut(sp, &none))
			return -1;
	}
	sp->piece_events++;
	sp->events++;
	if (sp->end_has_ts)
		note_latest(sp, sp->end_ts);
	return write_line(sp, sp->end_json.p, sp->end_json.len);
}

static int hold_end(struct split *sp, const struct trace_event *ev)
{
	sp->held_end = true;
	sp->end_has_ts = ev->has_ts;
	sp->end_ts = ev->ts_ns;
	sp->end_json.len = sp->end_args.len = 0;
	if (buf_put(&sp->end_json, ev->json, ev->json_len) ||
	    (ev->args.type == TRACE_OBJECT && buf_put(&sp->end_args, ev->args.text, ev->args.len)))
		return nomem(sp);
	return 0;
}

static int defer_x(struct split *sp, const struct trace_event *ev)
{
	struct pending_x *px = &sp->px;

	px->active = true;
	px->has_pid = ev->has_pid;
	trace_event_thread(ev, &px->pid, &px->tid);
	px->start = ev->ts_ns;
	px->end = end_of(ev);
	px->json.len = 0;
	px->n = 1;
	if (buf_put(&px->json, ev->json, ev->json_len))
		return nomem(sp);
	px->ends[0] = px->json.len;
	return 0;
}

/* Is ev a flow event that the pending X encloses? */
static bool follows_x(const struct pending_x *px, const struct trace_event *ev)
{
	int64_t pid, tid;

	if ((ev->phase != 's' && ev->phase != 't' && ev->phase != 'f') || !ev->has_ts ||
	    ev->ts_ns < px->start || ev->ts_ns > px->end || px->n > MAX_X_FLOWS)
		return false;
	trace_event_thread(ev, &pid, &tid);
	return pid == px->pid && tid == px->tid;
}

static int add_to_x(struct split *sp, const struct trace_event *ev)
{
	struct pending_x *px = &sp->px;

	if (buf_put(&px->json, ev->json, ev->json_len))
		return nomem(sp);
	px->flow_ts[px->n - 1] = ev->ts_ns;
	px->ends[px->n++] = px->json.len;
	return 0;
}

/* Write the pending X and its flows, into a new piece when they do not fit. */
static int flush_x(struct split *sp)
{
	struct pending_x *px = &sp->px;
	struct trace_event x = {.phase = 'X'};
	struct flow_slice in = {0};
	struct thread_state *th;
	struct split_thread *st;

	if (!px->active)
		return 0;
	px->active = false;
	x.has_ts = x.has_dur = true;
	x.ts_ns = px->start;
	x.dur_ns = px->end - px->start;
	x.has_pid = px->has_pid;
	x.pid_num = px->pid;
	x.has_tid = true;
	x.tid_num = px->tid;
	if (place(sp, &x, px->n, px->json.len))
		return -1;
	th = threads_get(&sp->threads, px->pid, px->tid);
	if (th == NULL)
		return nomem(sp);
	st = thread_extra(th);
	thread_note_time(th, &x);
	level_x(th, st, px->start, px->end);
	in.x = px->json.p;
	in.x_len = px->ends[0];
	/* Flow events held for a slice: this one encloses them. */
	if (release_flows(sp, st, px->start, px->end, false, &in))
		return -1;
	add_recent(st, px->start, px->end);
	for (size_t i = 0; i < px->n; i++) {
		size_t from = i > 0 ? px->ends[i - 1] : 0;

		if (i > 0) {
			x.ts_ns = px->flow_ts[i - 1];
			x.has_dur = false;
			x.phase = 's';
			thread_note_time(th, &x);
			note_plain_time(st, &x);
		}
		sp->piece_events++;
		sp->events++;
		note_latest(sp, i == 0 ? px->end : px->flow_ts[i - 1]);
		if (write_line(sp, px->json.p + from, px->ends[i] - from) ||
		    (i > 0 && flow_written(sp, px->json.p + from, px->ends[i] - from, &in)))
			return -1;
	}
	/* The X that a flow event after it may be inside (repeated with its s). */
	st->last_x.len = 0;
	if (buf_put(&st->last_x, px->json.p, px->ends[0]))
		return nomem(sp);
	st->last_x_start = px->start;
	st->last_x_end = px->end;
	return 0;
}

static int take(struct split *sp, const struct trace_event *ev)
{
	struct thread_state *th;
	struct split_thread *st;

	if (!sp->first_seen) {
		sp->first_seen = true;
		if (is_marker(ev, START_MARKER)) {
			sp->has_start = true;
			trace_event_thread(ev, &sp->marker_pid, &sp->marker_tid);
			sp->has_ids = true;
			if (buf_put(&sp->start_json, ev->json, ev->json_len))
				return nomem(sp);
			return place(sp, ev, 0, 0);
		}
	}
	if (sp->px.active) {
		if (follows_x(&sp->px, ev))
			return add_to_x(sp, ev);
		if (flush_x(sp))
			return -1;
	}
	if (sp->held_end && write_held_end(sp))
		return -1;
	if (is_marker(ev, END_MARKER))
		return hold_end(sp, ev);
	if (ev->phase == 'X' && ev->has_ts && ev->has_dur && ev->dur_ns >= 0)
		return defer_x(sp, ev);
	if (place(sp, ev, 1, ev->json_len))
		return -1;
	th = threads_of(&sp->threads, ev);
	if (th == NULL && threads_refused(&sp->threads))
		return copy_event(sp, ev); /* past the state bound: not reopened at cuts */
	if (th == NULL)
		return nomem(sp);
	st = thread_extra(th);
	thread_note_time(th, ev);
	note_plain_time(st, ev);
	switch (ev->phase) {
	case 'B':
		if (copy_event(sp, ev))
			return -1;
		if (thread_push(th, ev) == -ENOMEM)
			return nomem(sp);
		if (thread_untracked(th))
			return 0;
		if (level_pushed(th, st) != 0)
			return nomem(sp);
		sp->close_lines++;
		sp->close_bytes += slice_cost(thread_top(th));
		if (th->depth == 1 && ev->has_ts) {
			struct flow_slice in = {.by_b = true, .b_line = thread_top(th)->line};

			return release_flows(sp, st, ev->ts_ns, INT64_MAX, false, &in);
		}
		return 0;
	case 'E':
		if (thread_untracked(th)) { /* its B was past the state bound */
			thread_pop(th);
			return copy_event(sp, ev);
		}
		if (th->depth > 0 && th->depth <= st->absent) {
			/* Its B is not in this piece: neither is it. */
			level_popping(th, st);
			thread_pop(th);
			st->absent--;
			sp->ends_left_out++;
			return 0;
		}
		if (th->depth > 0) {
			const struct open_slice *s = thread_top(th);

			sp->close_lines--;
			sp->close_bytes -= slice_cost(s);
			if (ev->has_ts && s->ts_ns <= ev->ts_ns)
				add_recent(st, s->ts_ns, ev->ts_ns);
			level_popping(th, st);
			thread_pop(th);
		}
		return copy_event(sp, ev);
	case 's':
	case 't':
	case 'f':
		if (ev->has_ts && !enclosed(th, st, ev->ts_ns)) {
			sp->events++;
			note_latest(sp, ev->ts_ns);
			return hold_flow(sp, st, ev);
		}
		{
			struct flow_slice in = {0};

			if (th->depth > 0 && ev->has_ts && th->open[0].ts_ns <= ev->ts_ns) {
				in.by_b = true;
				in.b_line = thread_top(th)->line;
			} else if (ev->has_ts && st->last_x.len > 0 &&
				   st->last_x_start <= ev->ts_ns && ev->ts_ns <= st->last_x_end) {
				in.x = st->last_x.p;
				in.x_len = st->last_x.len;
			}
			return copy_event(sp, ev) || flow_written(sp, ev->json, ev->json_len, &in);
		}
	case 'b':
	case 'e':
	case 'n':
		return track_async(sp, ev) || copy_event(sp, ev);
	case 'M':
		if (carry_meta(&sp->carry, ev))
			return nomem(sp);
		return copy_event(sp, ev);
	default:
		return copy_event(sp, ev);
	}
}

/* The input ended: the flows still held, the slices left open by a cut, the last
 * marker. */
static int finish(struct split *sp, bool cut_short)
{
	if (flush_x(sp))
		return -1;
	if (sp->out == NULL) {
		/* Only markers, or nothing at all: one piece of the markers. */
		struct trace_event none = {0};

		if (place(sp, &none, 0, 0))
			return -1;
	}
	for (struct thread_state *th = threads_first(&sp->threads); th != NULL;
	     th = threads_next(th)) {
		struct split_thread *st = thread_extra(th);

		while (st->nheld > 0) {
			if (write_line(sp, st->held[0].json, st->held[0].len) ||
			    flow_written(sp, st->held[0].json, st->held[0].len, NULL))
				return -1;
			sp->piece_events++;
			forget_held(sp, st, 0);
		}
	}
	return end_piece(sp, true, cut_short);
}

/* ---------------------------------------------------------------- the command */

static void free_split(struct split *sp)
{
	for (struct thread_state *th = threads_first(&sp->threads); th != NULL;
	     th = threads_next(th)) {
		struct split_thread *st = thread_extra(th);

		for (size_t i = 0; i < st->nheld; i++)
			free(st->held[i].json);
		free(st->held);
		free(st->inner_end);
		buf_free(&st->last_x);
	}
	threads_destroy(&sp->threads);
	carry_destroy(&sp->carry);
	for (struct open_flow *f = table_first(&sp->flows); f != NULL; f = table_next(f)) {
		free(f->s);
		free(f->x);
	}
	table_destroy(&sp->flows);
	buf_free(&sp->flow_key);
	buf_free(&sp->line);
	buf_free(&sp->args);
	buf_free(&sp->start_json);
	buf_free(&sp->end_json);
	buf_free(&sp->end_args);
	buf_free(&sp->px.json);
	output_free(sp->out);
	free(sp->path);
	free(sp->prefix);
}

static bool ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

/* PREFIX without .json, .json.gz or .gz (either of the last two means gzip). */
static char *make_prefix(const char *path, bool *gzip)
{
	size_t n = strlen(path);

	if (ends_with(path, n, ".json.gz")) {
		n -= 8;
		*gzip = true;
	} else if (ends_with(path, n, ".gz")) {
		n -= 3;
		*gzip = true;
	} else if (ends_with(path, n, ".json")) {
		n -= 5;
	}
	return carry_dup(path, n);
}

static int parse_limit(const char *opt, const char *arg, uint64_t *v, uint64_t unit)
{
	if (cli_parse_u64(arg, v) || *v == 0 || *v > UINT64_MAX / unit)
		return cli_usage_error("split", "%s wants a positive number, not '%s'", opt, arg);
	*v *= unit;
	return 0;
}

int cmd_split(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"max-mb", required_argument, NULL, 'm'},
		{"max-events", required_argument, NULL, 'e'},
		{"max-reopen", required_argument, NULL, 'r'},
		{"output", required_argument, NULL, 'o'},
		{"gzip", no_argument, NULL, 'z'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct cli_warnings warnings = {.max = 10};
	struct progress bar;
	struct trace_options ro = {.on_issue = cli_warn_issue, .ctx = &warnings, .progress = &bar};
	const struct trace_status *st;
	const struct trace_event *ev;
	struct split sp = {.max_reopen = DEFAULT_MAX_REOPEN};
	const char *output = NULL;
	bool gzip_opt = false;
	struct trace *r;
	int ch, rc, err = 0, status = CLI_OK;

	while ((ch = getopt_long(argc, argv, "m:e:r:o:zh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'm':
			if (parse_limit("--max-mb", optarg, &sp.max_bytes, MB))
				return CLI_ERROR;
			break;
		case 'e':
			if (parse_limit("--max-events", optarg, &sp.max_events, 1))
				return CLI_ERROR;
			break;
		case 'r':
			if (cli_parse_u64(optarg, &sp.max_reopen))
				return cli_usage_error(
					"split", "--max-reopen wants a number, not '%s'", optarg);
			break;
		case 'o':
			output = optarg;
			break;
		case 'z':
			gzip_opt = true;
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			return cli_usage_error("split", "unknown option");
		}
	}
	if (argc - optind != 1)
		return cli_usage_error("split",
				       argc == optind ? "no FILE to split" : "one FILE at a time");
	if (sp.max_bytes == 0 && sp.max_events == 0)
		return cli_usage_error("split", "no limit: --max-mb N or --max-events N");
	if (output == NULL && strcmp(argv[optind], "-") == 0)
		return cli_usage_error("split", "standard input needs -o PREFIX");
	if (output != NULL && strcmp(output, "-") == 0)
		return cli_usage_error("split", "pieces are files: -o PREFIX, not -");
	sp.prefix = make_prefix(output != NULL ? output : argv[optind], &sp.gzip);
	sp.gzip |= gzip_opt;
	if (sp.prefix == NULL) {
		cli_error("split", "out of memory");
		return CLI_ERROR;
	}
	progress_init(&bar, "splitting");
	r = cli_open_trace("split", argv[optind], &ro);
	if (r == NULL) {
		free(sp.prefix);
		return CLI_ERROR;
	}
	sp.file = warnings.file = trace_name(r);
	threads_init(&sp.threads, sizeof(struct split_thread));
	carry_init(&sp.carry);
	table_init(&sp.flows, sizeof(struct open_flow));
	while ((rc = trace_next(r, &ev)) == 1) {
		err = take(&sp, ev);
		if (err)
			break;
	}
	progress_finish(&bar);
	cli_warnings_done(&warnings);
	st = trace_status(r);
	if (!err && cli_not_a_trace("split", sp.file, st)) {
		status = CLI_FINDINGS; /* no piece written */
	} else if (!err && rc < 0 && st->events == 0) {
		/* Nothing read before the error: no trace here, so write nothing. */
		cli_error("split", "%s", st->message);
		status = CLI_ERROR;
	} else if (err || finish(&sp, st->cut || rc < 0)) {
		if (sp.nomem)
			cli_error("split", "out of memory");
		else if (sp.out != NULL && output_error(sp.out) != NULL)
			cli_error("split", "%s", output_error(sp.out));
		status = CLI_ERROR;
	} else {
		if (rc < 0) {
			cli_error("split", "%s", st->message);
			cli_error("split",
				  "the pieces hold the %" PRIu64 " events before the error",
				  st->events);
			status = CLI_ERROR;
		} else if (st->cut) {
			cli_note("split",
				 "warning: %s was cut short: the pieces hold its %" PRIu64
				 " whole events",
				 sp.file, st->events);
		}
		if (sp.flows_repeated > 0 || sp.flows_forgotten > 0)
			cli_note("split",
				 "note: %" PRIu64
				 " flow starts repeated after the cuts they crossed"
				 "%s",
				 sp.flows_repeated,
				 sp.flows_forgotten > 0
					 ? " (some flows left open forgotten: at most 256 "
					   "at once)"
					 : "");
		if (sp.not_reopened > 0)
			cli_note("split",
				 "note: %" PRIu64 " open slices beyond --max-reopen %" PRIu64
				 " per thread, or beyond half a piece in all, were not reopened at "
				 "the cuts, and %" PRIu64 " of their E events left out",
				 sp.not_reopened, sp.max_reopen, sp.ends_left_out);
		cli_note("split",
			 "wrote %u piece%s, %s-0001.json%s to %s: %" PRIu64 " events; %" PRIu64
			 " slices closed at the cuts and reopened",
			 sp.piece, sp.piece == 1 ? "" : "s", sp.prefix, sp.gzip ? ".gz" : "",
			 sp.path, sp.events, sp.reopened);
	}
	free_split(&sp);
	trace_close(r);
	return status;
}
