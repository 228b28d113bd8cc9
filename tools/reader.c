/* SPDX-License-Identifier: MIT */
/*
 * Streaming trace reader (see reader.h for the contract).
 *
 * Design. Bytes flow one way: input -> text -> yajl -> events -> queue -> caller.
 *
 *   input   read(2) in INPUT_BYTES blocks from the file or standard input;
 *   text    the same bytes, or their inflation when the first two bytes are the gzip
 *           magic (zlib, windowBits 15+32, reset after each member so that the
 *           recorder's concatenated members read as one text);
 *   yajl    the callback parser, fed SLICE_BYTES at a time;
 *   events  the callbacks build one event: its compact JSON (every token
 *           re-serialised as it arrives) and the values of the known keys and of
 *           the top-level args (copied, NUL-terminated);
 *   queue   a finished event is copied into one allocation and queued; the caller
 *           pulls from the queue, and the next slice is parsed only when it is
 *           empty. So memory holds one slice's events and one partial event.
 *
 * A pull interface over a push parser: several readers can be pulled side by side
 * (a merge), and a caller may stop whenever it likes.
 *
 * The fast path. Inside the event array, yajl is stopped (a callback's 0) and the
 * text goes to fast_feed(): it skips the blanks and commas between elements itself
 * and gives each event to event_parse(), which reads a plain event (no escapes,
 * valid UTF-8: what the recorder writes) in one pass and without re-serialising
 * it. Whatever it does not take (escapes, a syntax error, an element that is not an
 * object, a known key twice) goes back to yajl: a fresh parser is put in the
 * array's state by a muted synthetic prefix ("[{}," and the like) and parses from
 * that byte, with its exact messages and places; it stops again at the end of the
 * next event. So both parsers hand out the same events and issues, which
 * tests/tools/test_tools_reader_fast.c checks on every corpus file and at every
 * cut of generated ones.
 *
 * Long events. An event that does not end within the text at hand is found by a
 * byte scan (strings and nesting only, linear whatever its size) and copied until
 * it ends, then parsed whole, fast or by yajl (positions then come from the copy:
 * locate_in_long()). One over max_event_bytes is not copied but skipped, and
 * reported; so yajl never buffers more than the limit, and no token is lexed again
 * and again as it grows (yajl restarts a token that spans its buffers).
 *
 * Positions. Inside a callback yajl_get_bytes_consumed() is the offset just past
 * the current token within the buffer given to yajl_parse(); feed_abs is that
 * buffer's text offset. Lines are counted lazily: `counted` is how far into the
 * text block '\n' bytes have been counted, and each position asked for moves it
 * forward with memchr, so each byte is looked at once. Positions asked for out of
 * order (rare: issues) are counted again from the start of the block without
 * moving anything.
 *
 * The end. A cut is the input ending while yajl is inside the top-level value: the
 * events finished so far were queued, the partial one is dropped. A cut inside a
 * gzip member is the same thing seen one layer down: inflate gave what it could.
 *
 * Recoveries. NUL bytes are rewritten to blanks as each slice is fed (feed_slice()),
 * after the text before them has been parsed, so that their issue keeps its place.
 * ",]" makes yajl fail; a fresh parser is put in the state after the array by a
 * muted synthetic prefix, and parsing goes on (recover_trailing_comma()).
 *
 * String rules (TRACE_READ_CHECK_STRINGS). A byte scanner runs over each slice just
 * ahead of yajl, tracking strings and escapes across slice borders with its own line
 * count. At each finding it first feeds yajl everything before it, so that the
 * issue is queued after the events that precede it. A raw control byte is rewritten
 * to a blank before yajl sees it (a raw '\n' so rewritten is remembered, so that
 * the lazy line count still sees it).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "trace.h"

#include "event_parse.h"
#include "json.h"
#include "progress.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>

#define INPUT_BYTES (64 * 1024)
#define TEXT_BYTES  (64 * 1024)
#define SLICE_BYTES (16 * 1024) /* bounds the events queued at once */
/* The sizes under TRACE_READ_SMALL (a merge of many files holds a reader each). */
#define SMALL_INPUT_BYTES (16 * 1024)
#define SMALL_TEXT_BYTES  (16 * 1024)
#define SMALL_SLICE_BYTES (2 * 1024)

static const size_t field_offsets[TRACE_F_COUNT] = {
	[TRACE_F_PH] = offsetof(struct trace_event, ph),
	[TRACE_F_NAME] = offsetof(struct trace_event, name),
	[TRACE_F_CAT] = offsetof(struct trace_event, cat),
	[TRACE_F_TS] = offsetof(struct trace_event, ts),
	[TRACE_F_DUR] = offsetof(struct trace_event, dur),
	[TRACE_F_PID] = offsetof(struct trace_event, pid),
	[TRACE_F_TID] = offsetof(struct trace_event, tid),
	[TRACE_F_ID] = offsetof(struct trace_event, id),
	[TRACE_F_S] = offsetof(struct trace_event, s),
	[TRACE_F_BP] = offsetof(struct trace_event, bp),
	[TRACE_F_ARGS] = offsetof(struct trace_event, args),
};

static const char *const type_names[] = {
	[TRACE_ABSENT] = "absent",   [TRACE_NULL] = "null",	  [TRACE_BOOL] = "a boolean",
	[TRACE_NUMBER] = "a number", [TRACE_STRING] = "a string", [TRACE_OBJECT] = "an object",
	[TRACE_ARRAY] = "an array",
};

/* A value being collected: its text lives in building.strs. */
struct value_ref {
	enum trace_type type;
	size_t off, len;
};

struct arg_ref {
	size_t key_off, key_len;
	struct value_ref value;
};

/* One open container of the event being re-serialised. */
struct level {
	char type;  /* '{' or '[' */
	bool first; /* nothing written in it yet */
};

/* The event being parsed. */
struct building {
	bool active;
	uint64_t offset, line, col;
	struct buf json; /* compact JSON so far */
	struct buf strs; /* the values, each NUL-terminated */
	struct value_ref field[TRACE_F_COUNT];
	struct arg_ref *args;
	size_t nargs, args_cap;
	struct level *lv;
	size_t nlv, lv_cap;
	int field_key;		       /* the current top-level key: enum trace_field, or -1 */
	bool args_open;		       /* inside the object value of "args" */
	size_t value_start, arg_start; /* json offsets where the current values began */
	unsigned seen, dups;
};

enum item_kind { ITEM_EVENT, ITEM_ISSUE };

struct item {
	enum item_kind kind;
	void *mem; /* the event's text, or the issue's message */
	union {
		struct trace_event ev;
		struct trace_issue issue;
	} u;
};

/* Where the fast path is in the event array (FAST_OFF: yajl parses). */
enum fast_state { FAST_OFF, FAST_FIRST, FAST_AFTER, FAST_NEXT, FAST_LONG };

/* An event longer than the text at hand: its bounds are found by a byte scan (linear
 * whatever its size), its text kept until it is whole, or only counted when it is
 * over the limit. */
struct long_event {
	struct buf text;
	uint64_t abs, line, col; /* of its '{' */
	uint64_t len;		 /* bytes so far */
	unsigned depth;
	bool in_str, esc;
	bool skip;		/* over the limit: not kept */
	enum fast_state resume; /* where the event began: FAST_FIRST or FAST_NEXT */
	bool feeding;		/* yajl is parsing text: positions come from it */
};

/* The byte scanner of TRACE_READ_CHECK_STRINGS; its state spans slices. */
struct scanner {
	bool in_str, esc;
	bool bad_utf8, bad_byte; /* this string has had its invalid-utf8 / control-byte issue */
	int hex_left;		 /* hex digits still expected in a \u escape */
	unsigned hex_val;
	uint64_t esc_abs; /* text offset of the escape's backslash */
	bool high;	  /* a \uD800..\uDBFF escape waits for its low half */
	unsigned high_val;
	uint64_t high_abs, high_end;
	unsigned need;	 /* continuation bytes still expected of a UTF-8 sequence */
	unsigned lo, hi; /* range of the next one */
	unsigned lead;	 /* the sequence's first byte */
	uint64_t seq_abs;
	uint64_t lines, line_start; /* its own count of the raw text */
};

struct trace {
	char *path;
	const char *name; /* path, or "<stdin>", or display */
	char *display;	  /* trace_set_name() */
	struct trace_options opt;
	struct trace_status st;
	bool done;	     /* no more steps: the input ended, or an error */
	uint64_t non_events; /* elements of the event array that are not objects */
	bool failed;	     /* the error is in st */

	/* Input. */
	int fd;
	bool input_done; /* read(2) returned 0 */
	bool sniffed;
	unsigned char *in;
	size_t input_bytes, text_bytes, slice_bytes; /* INPUT_BYTES... or SMALL_... */
	z_stream zs;
	bool zs_ready, member_open;
	unsigned char *out;

	/* The text block: text[pos .. len) is still to be parsed. */
	unsigned char *text;
	size_t len, pos;
	uint64_t text_abs; /* text offset of text[0] */

	/* Lines of the block (see the design note). */
	size_t counted;
	uint64_t lines, line_start;
	uint64_t lines_at_blk, line_start_at_blk;
	size_t *patched_nl; /* block offsets of raw '\n' rewritten to blanks */
	size_t npatched, patched_cap, patched_seen;

	/* NUL bytes read as blanks. */
	bool zero_run;
	uint64_t zero_len, zero_line, zero_col;

	/* Parsing. */
	yajl_handle h;
	uint64_t feed_abs;     /* text offset of the buffer yajl is parsing */
	uint64_t last_token;   /* text offset just past the last token a callback saw */
	bool finishing;	       /* inside yajl_complete_parse() */
	bool muted;	       /* feeding a synthetic prefix after a trailing comma */
	unsigned depth;	       /* open containers */
	unsigned events_depth; /* depth directly inside the event array; 0 outside it */
	bool top_started, top_closed;
	bool key_is_events; /* the pending top-level key of the object form is traceEvents */
	bool saw_events_key;
	struct building b;
	struct scanner sc;
	struct item pend[4]; /* issues the scanner found at the current byte */
	unsigned npend;

	/* A top-level value of the object form being copied for on_top_level. */
	struct capture {
		bool active, over;
		struct buf key, json;
		struct level *lv;
		size_t nlv, lv_cap;
		uint64_t bytes;
	} cap;

	/* The fast path (see the design note). */
	enum fast_state fast;
	bool fast_ok;	    /* the fast path may take over (not TRACE_READ_NO_FAST) */
	bool yield_to_fast; /* a callback stopped yajl for the fast path */
	uint64_t max_event; /* bytes */
	struct event_parse ep;
	struct long_event lng;

	/* Memory of the plain events queued (fast_commit()), reset when the queue is
	 * empty: one allocation for the events of a slice instead of one each. An item's
	 * mem is NULL when its event is here. */
	char *arena;
	size_t arena_used, arena_cap;

	/* Queue of finished events and issues. */
	struct item *q;
	size_t q_len, q_head, q_cap;
	void *handed; /* memory of the event last returned */
};

static void fail(struct trace *r, enum trace_error kind, bool at, uint64_t abs, const char *fmt,
		 ...) __attribute__((format(printf, 5, 6)));
static int queue_issue(struct trace *r, enum trace_issue_kind kind, uint64_t line, uint64_t col,
		       const char *fmt, ...) __attribute__((format(printf, 5, 6)));

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
static void locate(struct trace *r, uint64_t abs, uint64_t *line, uint64_t *col)
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
static uint64_t here(const struct trace *r)
{
	if (r->finishing)
		return r->st.text_bytes;
	return r->feed_abs + yajl_get_bytes_consumed(r->h);
}

/* ----------------------------------------------------------------- reporting */

static void fail(struct trace *r, enum trace_error kind, bool at, uint64_t abs, const char *fmt,
		 ...)
{
	char msg[400];
	va_list ap;

	if (r->failed)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->st.line = r->st.col = 0;
	if (at)
		locate(r, abs, &r->st.line, &r->st.col);
	if (at)
		snprintf(r->st.message, sizeof(r->st.message), "%s:%llu:%llu: ", r->name,
			 (unsigned long long)r->st.line, (unsigned long long)r->st.col);
	else
		snprintf(r->st.message, sizeof(r->st.message), "%s: ", r->name);
	r->st.what = r->st.message + strlen(r->st.message);
	snprintf(r->st.message + strlen(r->st.message),
		 sizeof(r->st.message) - strlen(r->st.message), "%s", msg);
	r->st.error = kind;
	r->failed = true;
}

static int fail_nomem(struct trace *r)
{
	fail(r, TRACE_ERR_NOMEM, false, 0, "out of memory");
	return 0;
}

static struct item *queue_push(struct trace *r)
{
	if (r->q_len == r->q_cap) {
		size_t n = r->q_cap ? r->q_cap * 2 : 64;
		struct item *q = realloc(r->q, n * sizeof(*q));

		if (q == NULL)
			return NULL;
		r->q = q;
		r->q_cap = n;
	}
	return &r->q[r->q_len++];
}

static int make_issue(struct trace *r, struct item *it, enum trace_issue_kind kind, uint64_t line,
		      uint64_t col, const char *fmt, va_list ap)
	__attribute__((format(printf, 6, 0)));

static int make_issue(struct trace *r, struct item *it, enum trace_issue_kind kind, uint64_t line,
		      uint64_t col, const char *fmt, va_list ap)
{
	char msg[400];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	it->mem = strdup(msg);
	if (it->mem == NULL)
		return fail_nomem(r);
	it->kind = ITEM_ISSUE;
	it->u.issue =
		(struct trace_issue){.kind = kind, .line = line, .col = col, .message = it->mem};
	return 1;
}

/* Queue an issue; returns 1, or 0 when out of memory (so a callback can cancel). */
static int queue_issue(struct trace *r, enum trace_issue_kind kind, uint64_t line, uint64_t col,
		       const char *fmt, ...)
{
	struct item *it = queue_push(r);
	va_list ap;
	int ok;

	if (it == NULL)
		return fail_nomem(r);
	va_start(ap, fmt);
	ok = make_issue(r, it, kind, line, col, fmt, ap);
	va_end(ap);
	if (!ok)
		r->q_len--;
	return ok;
}

/* ------------------------------------------------------------ building events */

static void building_reset(struct building *b)
{
	b->active = false;
	b->json.len = 0;
	b->strs.len = 0;
	b->nargs = 0;
	b->nlv = 0;
	b->field_key = -1;
	b->args_open = false;
	b->seen = 0;
	b->dups = 0;
	memset(b->field, 0, sizeof(b->field));
}

static void building_free(struct building *b)
{
	buf_free(&b->json);
	buf_free(&b->strs);
	free(b->args);
	free(b->lv);
}

/* Separator before a value: only arrays need one (keys write their own). */
static int ser_sep(struct building *b)
{
	struct level *top;

	if (b->nlv == 0)
		return 0;
	top = &b->lv[b->nlv - 1];
	if (top->type == '[') {
		if (!top->first && buf_putc(&b->json, ','))
			return -1;
		top->first = false;
	}
	return 0;
}

/* Copy a value's text into strs, NUL-terminated; strings made valid UTF-8. */
static int store_value(struct building *b, struct value_ref *v, enum trace_type type, const void *p,
		       size_t len)
{
	size_t off = b->strs.len;

	if (type == TRACE_STRING) {
		if (utf8_put_valid(&b->strs, p, len) < 0)
			return -1;
	} else if (buf_put(&b->strs, p, len)) {
		return -1;
	}
	v->type = type;
	v->off = off;
	v->len = b->strs.len - off;
	return buf_putc(&b->strs, '\0');
}

/* The known key k names, or -1. Every key of every event comes here: compare the
 * length and first byte before the bytes. */
static int field_lookup(const unsigned char *k, size_t len)
{
	static const unsigned char lengths[TRACE_F_COUNT] = {
		[TRACE_F_PH] = 2,  [TRACE_F_NAME] = 4, [TRACE_F_CAT] = 3,  [TRACE_F_TS] = 2,
		[TRACE_F_DUR] = 3, [TRACE_F_PID] = 3,  [TRACE_F_TID] = 3,  [TRACE_F_ID] = 2,
		[TRACE_F_S] = 1,   [TRACE_F_BP] = 2,   [TRACE_F_ARGS] = 4,
	};

	for (int f = 0; f < TRACE_F_COUNT; f++) {
		if (lengths[f] == len && trace_field_names[f][0] == (char)k[0] &&
		    memcmp(trace_field_names[f], k, len) == 0)
			return f;
	}
	return -1;
}

/* Open a container of type c on a stack of levels. false when out of memory. */
static bool level_push(struct level **lv, size_t *nlv, size_t *cap, char c)
{
	if (*nlv == *cap) {
		size_t n = *cap ? *cap * 2 : 16;
		struct level *p = realloc(*lv, n * sizeof(*p));

		if (p == NULL)
			return false;
		*lv = p;
		*cap = n;
	}
	(*lv)[*nlv].type = c;
	(*lv)[*nlv].first = true;
	(*nlv)++;
	return true;
}

static int event_begin(struct trace *r)
{
	struct building *b = &r->b;
	uint64_t at = here(r) - 1; /* the '{' is one byte, just before the offset */

	building_reset(b);
	b->active = true;
	b->offset = at;
	locate(r, at, &b->line, &b->col);
	if (!level_push(&b->lv, &b->nlv, &b->lv_cap, '{'))
		return fail_nomem(r);
	return buf_putc(&b->json, '{') ? fail_nomem(r) : 1;
}

/* The phase and the numbers of ts, dur, pid and tid, from their text. */
static void event_numbers(struct trace_event *ev)
{
	ev->phase = ev->ph.type == TRACE_STRING && ev->ph.len == 1 ? ev->ph.text[0] : '\0';
	if (ev->ts.type == TRACE_NUMBER)
		ev->has_ts = json_parse_us(ev->ts.text, ev->ts.len, &ev->ts_ns, &ev->ts_exact) == 0;
	if (ev->dur.type == TRACE_NUMBER)
		ev->has_dur =
			json_parse_us(ev->dur.text, ev->dur.len, &ev->dur_ns, &ev->dur_exact) == 0;
	if (ev->pid.type == TRACE_NUMBER)
		ev->has_pid = json_parse_i64(ev->pid.text, ev->pid.len, &ev->pid_num) == 0;
	if (ev->tid.type == TRACE_NUMBER)
		ev->has_tid = json_parse_i64(ev->tid.text, ev->tid.len, &ev->tid_num) == 0;
}

/* The event's object closed: copy it into one allocation and queue it. */
static int event_commit(struct trace *r)
{
	struct building *b = &r->b;
	size_t args_bytes = b->nargs * sizeof(struct trace_arg);
	char *mem = malloc(args_bytes + b->json.len + 1 + b->strs.len);
	struct trace_arg *args = (void *)mem;
	char *json, *strs;
	struct trace_event *ev;
	struct item *it;

	if (mem == NULL)
		return fail_nomem(r);
	json = mem + args_bytes;
	memcpy(json, b->json.p, b->json.len);
	json[b->json.len] = '\0';
	strs = json + b->json.len + 1;
	if (b->strs.len > 0)
		memcpy(strs, b->strs.p, b->strs.len);
	it = queue_push(r);
	if (it == NULL) {
		free(mem);
		return fail_nomem(r);
	}
	it->kind = ITEM_EVENT;
	it->mem = mem;
	ev = &it->u.ev;
	memset(ev, 0, sizeof(*ev));
	for (int f = 0; f < TRACE_F_COUNT; f++) {
		struct trace_value *v = (void *)((char *)ev + field_offsets[f]);

		v->type = b->field[f].type;
		if (v->type != TRACE_ABSENT) {
			v->text = strs + b->field[f].off;
			v->len = b->field[f].len;
		}
	}
	for (size_t i = 0; i < b->nargs; i++) {
		args[i].key = strs + b->args[i].key_off;
		args[i].key_len = b->args[i].key_len;
		args[i].value.type = b->args[i].value.type;
		args[i].value.text = strs + b->args[i].value.off;
		args[i].value.len = b->args[i].value.len;
	}
	ev->arg = b->nargs > 0 ? args : NULL;
	ev->nargs = b->nargs;
	event_numbers(ev);
	ev->json = json;
	ev->json_len = b->json.len;
	ev->line = b->line;
	ev->col = b->col;
	ev->offset = b->offset;
	ev->duplicates = b->dups;
	building_reset(b);
	return 1;
}

static int ev_open(struct trace *r, char c)
{
	struct building *b = &r->b;
	size_t n = b->nlv;

	if (ser_sep(b))
		return fail_nomem(r);
	if (n == 1) {
		b->value_start = b->json.len;
		if (b->field_key == TRACE_F_ARGS && c == '{') {
			b->args_open = true;
			b->nargs = 0;
		}
	} else if (n == 2 && b->args_open) {
		b->arg_start = b->json.len;
	}
	if (!level_push(&b->lv, &b->nlv, &b->lv_cap, c))
		return fail_nomem(r);
	return buf_putc(&b->json, c) ? fail_nomem(r) : 1;
}

static int ev_close(struct trace *r, char c)
{
	struct building *b = &r->b;
	enum trace_type t = c == '}' ? TRACE_OBJECT : TRACE_ARRAY;

	if (buf_putc(&b->json, c))
		return fail_nomem(r);
	b->nlv--;
	if (b->nlv == 0)
		return event_commit(r);
	if (b->nlv == 1) {
		if (b->field_key >= 0 &&
		    store_value(b, &b->field[b->field_key], t, b->json.p + b->value_start,
				b->json.len - b->value_start))
			return fail_nomem(r);
		if (b->field_key == TRACE_F_ARGS)
			b->args_open = false;
	} else if (b->nlv == 2 && b->args_open) {
		if (store_value(b, &b->args[b->nargs - 1].value, t, b->json.p + b->arg_start,
				b->json.len - b->arg_start))
			return fail_nomem(r);
	}
	return 1;
}

static int ev_key(struct trace *r, const unsigned char *k, size_t len)
{
	struct building *b = &r->b;
	struct level *top = &b->lv[b->nlv - 1];

	if (!top->first && buf_putc(&b->json, ','))
		return fail_nomem(r);
	top->first = false;
	if (json_put_string(&b->json, k, len) < 0 || buf_putc(&b->json, ':'))
		return fail_nomem(r);
	if (b->nlv == 1) {
		b->field_key = field_lookup(k, len);
		if (b->field_key >= 0) {
			unsigned bit = 1u << b->field_key;

			if (b->seen & bit) {
				uint64_t line, col;

				b->dups |= bit;
				locate(r, here(r), &line, &col);
				if (!queue_issue(r, TRACE_ISSUE_DUPLICATE_KEY, line, col,
						 "\"%s\" twice in one event: readers keep "
						 "different ones",
						 trace_field_names[b->field_key]))
					return 0;
			}
			b->seen |= bit;
		}
	} else if (b->nlv == 2 && b->args_open) {
		struct arg_ref *a;
		struct value_ref key;

		if (b->nargs == b->args_cap) {
			size_t n = b->args_cap ? b->args_cap * 2 : 8;
			struct arg_ref *p = realloc(b->args, n * sizeof(*p));

			if (p == NULL)
				return fail_nomem(r);
			b->args = p;
			b->args_cap = n;
		}
		if (store_value(b, &key, TRACE_STRING, k, len))
			return fail_nomem(r);
		a = &b->args[b->nargs++];
		a->key_off = key.off;
		a->key_len = key.len;
		memset(&a->value, 0, sizeof(a->value));
	}
	return 1;
}

static int ev_scalar(struct trace *r, enum trace_type t, const void *p, size_t len)
{
	struct building *b = &r->b;
	int err;

	if (ser_sep(b))
		return fail_nomem(r);
	if (t == TRACE_STRING)
		err = json_put_string(&b->json, p, len) < 0;
	else
		err = buf_put(&b->json, p, len);
	if (err)
		return fail_nomem(r);
	if (b->nlv == 1 && b->field_key >= 0)
		err = store_value(b, &b->field[b->field_key], t, p, len);
	else if (b->nlv == 2 && b->args_open)
		err = store_value(b, &b->args[b->nargs - 1].value, t, p, len);
	return err ? fail_nomem(r) : 1;
}

/* ----------------------------------------------------------- yajl callbacks */

/* ------------------------------------------------- top-level values copied */

static void capture_start(struct trace *r, const unsigned char *k, size_t len)
{
	struct capture *c = &r->cap;

	c->active = true;
	c->over = false;
	c->nlv = 0;
	c->bytes = 0;
	c->key.len = c->json.len = 0;
	if (buf_put(&c->key, k, len) || buf_putc(&c->key, '\0'))
		c->over = true; /* reported as not kept */
}

/* Text of the value: kept up to the limit, then only counted. */
static void capture_put(struct trace *r, const void *p, size_t len, bool string)
{
	struct capture *c = &r->cap;
	size_t before = c->json.len;

	if (!c->over &&
	    (string ? json_put_string(&c->json, p, len) < 0 : buf_put(&c->json, p, len)))
		c->over = true;
	c->bytes += c->over ? len : c->json.len - before;
	if (!c->over && c->json.len > r->max_event)
		c->over = true;
	if (c->over)
		buf_free(&c->json);
}

/* The separator before a value in an array, or before a key in an object. */
static void capture_sep(struct trace *r)
{
	struct capture *c = &r->cap;

	if (c->nlv == 0)
		return;
	if (!c->lv[c->nlv - 1].first)
		capture_put(r, ",", 1, false);
	c->lv[c->nlv - 1].first = false;
}

static void capture_done(struct trace *r)
{
	struct capture *c = &r->cap;

	c->active = false;
	if (!c->over && buf_putc(&c->json, '\0') == 0)
		c->json.len--; /* NUL-terminated, not counted */
	else
		c->over = true;
	r->opt.on_top_level(r->opt.top_level_ctx, c->key.p != NULL ? c->key.p : "",
			    c->key.len > 0 ? c->key.len - 1 : 0, c->over ? NULL : c->json.p,
			    c->over ? c->bytes : c->json.len);
	if (c->json.cap > (1u << 20))
		buf_free(&c->json);
}

static int capture_open(struct trace *r, char ch)
{
	struct capture *c = &r->cap;

	if (c->lv[c->nlv - 1].type == '[')
		capture_sep(r);
	capture_put(r, &ch, 1, false);
	return level_push(&c->lv, &c->nlv, &c->lv_cap, ch) ? 1 : fail_nomem(r);
}

static int not_an_event(struct trace *r, enum trace_type t)
{
	uint64_t line, col;

	locate(r, here(r), &line, &col);
	r->non_events++;
	return queue_issue(r, TRACE_ISSUE_NOT_AN_EVENT, line, col,
			   "an element of the event array is %s, not an event object (skipped)",
			   type_names[t]);
}

static int on_scalar(struct trace *r, enum trace_type t, const void *p, size_t len)
{
	if (r->muted)
		return 1;
	r->last_token = here(r);
	if (r->b.active)
		return ev_scalar(r, t, p, len);
	if (r->cap.active) {
		if (r->cap.nlv > 0 && r->cap.lv[r->cap.nlv - 1].type == '[')
			capture_sep(r);
		capture_put(r, p, len, t == TRACE_STRING);
		if (r->cap.nlv == 0)
			capture_done(r);
		return 1;
	}
	if (r->depth == 0) {
		fail(r, TRACE_ERR_SYNTAX, true, here(r),
		     "the top level is %s, not an array of events or an object with "
		     "\"traceEvents\"",
		     type_names[t]);
		return 0;
	}
	if (r->events_depth != 0 && r->depth == r->events_depth)
		return not_an_event(r, t);
	if (r->key_is_events && r->depth == 1) {
		fail(r, TRACE_ERR_SYNTAX, true, here(r), "\"traceEvents\" is %s, not an array",
		     type_names[t]);
		return 0;
	}
	return 1;
}

static int cb_null(void *ctx)
{
	return on_scalar(ctx, TRACE_NULL, "null", 4);
}

static int cb_boolean(void *ctx, int v)
{
	return on_scalar(ctx, TRACE_BOOL, v ? "true" : "false", v ? 4 : 5);
}

static int cb_number(void *ctx, const char *s, size_t len)
{
	return on_scalar(ctx, TRACE_NUMBER, s, len);
}

static int cb_string(void *ctx, const unsigned char *s, size_t len)
{
	return on_scalar(ctx, TRACE_STRING, s, len);
}

/*
 * In the event array, between elements: stop yajl there (a callback's 0) so that
 * the fast path takes the text from just past this token, in state at.
 */
static int yield_to_fast(struct trace *r, enum fast_state at)
{
	if (!r->fast_ok)
		return 1;
	r->fast = at;
	r->yield_to_fast = true;
	return 0;
}

static int on_start(struct trace *r, char c)
{
	unsigned d = r->depth;

	if (r->muted)
		return 1;
	r->last_token = here(r);
	if (d >= TRACE_MAX_DEPTH) {
		fail(r, TRACE_ERR_LIMIT, true, here(r), "nested deeper than %d levels",
		     TRACE_MAX_DEPTH);
		return 0;
	}
	r->depth++;
	if (r->b.active)
		return ev_open(r, c);
	if (r->cap.active) {
		if (r->cap.nlv == 0) {
			/* The value itself: no separator before it. */
			capture_put(r, &c, 1, false);
			return level_push(&r->cap.lv, &r->cap.nlv, &r->cap.lv_cap, c)
				       ? 1
				       : fail_nomem(r);
		}
		return capture_open(r, c);
	}
	if (d == 0) {
		r->top_started = true;
		r->st.form = c == '[' ? TRACE_FORM_ARRAY : TRACE_FORM_OBJECT;
		if (c != '[')
			return 1;
		r->events_depth = 1;
		return yield_to_fast(r, FAST_FIRST);
	}
	if (r->events_depth != 0 && d == r->events_depth) {
		if (c == '{')
			return event_begin(r);
		return not_an_event(r, TRACE_ARRAY);
	}
	if (r->key_is_events && d == 1) {
		r->key_is_events = false;
		if (c == '[') {
			r->events_depth = 2;
			return yield_to_fast(r, FAST_FIRST);
		}
		fail(r, TRACE_ERR_SYNTAX, true, here(r),
		     "\"traceEvents\" is an object, not an array");
		return 0;
	}
	return 1;
}

static int on_end(struct trace *r, char c)
{
	if (r->muted)
		return 1;
	r->last_token = here(r);
	r->depth--;
	if (r->cap.active) {
		capture_put(r, &c, 1, false);
		if (--r->cap.nlv == 0)
			capture_done(r);
		return 1;
	}
	if (r->b.active) {
		if (!ev_close(r, c))
			return 0;
		return !r->b.active && r->depth == r->events_depth ? yield_to_fast(r, FAST_AFTER)
								   : 1;
	}
	if (r->events_depth != 0 && r->depth == r->events_depth - 1) {
		r->events_depth = 0;
		r->st.events_closed = true;
	}
	if (r->depth == 0)
		r->top_closed = true;
	return 1;
}

static int cb_start_map(void *ctx)
{
	return on_start(ctx, '{');
}

static int cb_end_map(void *ctx)
{
	return on_end(ctx, '}');
}

static int cb_start_array(void *ctx)
{
	return on_start(ctx, '[');
}

static int cb_end_array(void *ctx)
{
	return on_end(ctx, ']');
}

static int cb_map_key(void *ctx, const unsigned char *k, size_t len)
{
	struct trace *r = ctx;

	if (r->muted)
		return 1;
	r->last_token = here(r);
	if (r->b.active)
		return ev_key(r, k, len);
	if (r->cap.active) {
		capture_sep(r);
		capture_put(r, k, len, true);
		capture_put(r, ":", 1, false);
		return 1;
	}
	if (r->depth == 1) {
		r->key_is_events = len == 11 && memcmp(k, "traceEvents", 11) == 0;
		r->saw_events_key |= r->key_is_events;
		if (!r->key_is_events && r->opt.on_top_level != NULL)
			capture_start(r, k, len);
	}
	return 1;
}

static const yajl_callbacks callbacks = {
	.yajl_null = cb_null,
	.yajl_boolean = cb_boolean,
	.yajl_number = cb_number,
	.yajl_string = cb_string,
	.yajl_start_map = cb_start_map,
	.yajl_map_key = cb_map_key,
	.yajl_end_map = cb_end_map,
	.yajl_start_array = cb_start_array,
	.yajl_end_array = cb_end_array,
};

static yajl_handle parser_new(struct trace *r)
{
	yajl_handle h = yajl_alloc(&callbacks, NULL, r);

	if (h == NULL)
		return NULL;
	/* Strict JSON: yajl's defaults, set anyway so that they are visible. Strings are
	 * not validated by yajl: its check is weaker than RFC 3629; the scanner or
	 * utf8_put_valid() does it properly. */
	yajl_config(h, yajl_allow_comments, 0);
	yajl_config(h, yajl_dont_validate_strings, 1);
	yajl_config(h, yajl_allow_trailing_garbage, 0);
	yajl_config(h, yajl_allow_multiple_values, 0);
	yajl_config(h, yajl_allow_partial_values, 0);
	return h;
}

/* ------------------------------------------------------------------- feeding */

/*
 * A fresh parser in the state after the event array's ']', put there by a muted
 * synthetic prefix; parsing goes on with the text after the ']'. false when out of
 * memory.
 */
static bool resume_after_events(struct trace *r)
{
	static const char array_prefix[] = "[]", object_prefix[] = "{\"\":[]";
	const char *prefix = r->events_depth == 1 ? array_prefix : object_prefix;
	yajl_handle h = parser_new(r);

	if (h == NULL)
		return false;
	if (r->h != NULL)
		yajl_free(r->h);
	r->h = h;
	r->muted = true;
	yajl_parse(h, (const unsigned char *)prefix, strlen(prefix));
	r->muted = false;
	r->depth--;
	r->events_depth = 0;
	r->st.events_closed = true;
	if (r->depth == 0)
		r->top_closed = true;
	return true;
}

static int queue_trailing_comma(struct trace *r, uint64_t abs)
{
	uint64_t line, col;

	locate(r, abs, &line, &col);
	return queue_issue(r, TRACE_ISSUE_TRAILING_COMMA, line, col,
			   "a comma before the closing ']': not strict JSON (DevTools and "
			   "JSON.parse refuse it)");
}

/*
 * ",]" closing the event array: the one syntax error the reader gets past, because
 * writers that close a bare array by hand make it. Parsing goes on after ']'.
 */
static bool recover_trailing_comma(struct trace *r, const unsigned char *p, size_t consumed)
{
	if (r->events_depth == 0 || r->depth != r->events_depth || r->b.active || consumed == 0 ||
	    p[consumed - 1] != ']')
		return false;
	if (!resume_after_events(r))
		return false;
	return queue_trailing_comma(r, r->feed_abs + consumed - 1);
}

static bool is_blank(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* A short, printable excerpt of the text at p for an error message. */
static void excerpt(char *out, size_t size, const unsigned char *p, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len && n + 1 < size && i < 24; i++)
		out[n++] = p[i] >= 0x20 && p[i] < 0x7f ? (char)p[i] : '?';
	out[n] = '\0';
}

/*
 * Feed text p[0 .. len), at text offset abs, to yajl. 0, or -1 (r->failed). *used
 * is how much yajl took: all of it, or less when it stopped for the fast path.
 */
static int yajl_feed(struct trace *r, const unsigned char *p, size_t len, uint64_t abs,
		     size_t *used)
{
	size_t total = len;

	*used = total;
	while (len > 0) {
		yajl_status st;
		size_t consumed;
		unsigned char *msg;
		char near[32];
		size_t n, at;

		r->feed_abs = abs;
		st = yajl_parse(r->h, p, len);
		if (st == yajl_status_ok)
			return 0;
		if (r->failed)
			return -1;
		consumed = yajl_get_bytes_consumed(r->h);
		if (r->yield_to_fast) {
			/* A parser stopped by a callback cannot go on: a new one is made with
			 * the state it needs when yajl takes over again. */
			r->yield_to_fast = false;
			yajl_free(r->h);
			r->h = NULL;
			*used = total - len + consumed;
			return 0;
		}
		if (st == yajl_status_error && recover_trailing_comma(r, p, consumed)) {
			p += consumed;
			len -= consumed;
			abs += consumed;
			continue;
		}
		if (r->failed)
			return -1;
		msg = yajl_get_error(r->h, 0, NULL, 0);
		n = msg != NULL ? strlen((char *)msg) : 0;
		while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' ' || msg[n - 1] == '.'))
			n--;
		/*
		 * Where the error is: a bad byte inside a string is where yajl stopped; for
		 * "I expect ',' or '}'" yajl steps back into the token; otherwise it stops
		 * just past it. Then back to the start of the token.
		 */
		if (msg != NULL && strstr((char *)msg, "inside string") != NULL) {
			at = consumed;
		} else {
			at = msg != NULL && strstr((char *)msg, "I expect ',' or '}'") != NULL
				     ? consumed
			     : consumed > 0 ? consumed - 1
					    : 0;
			while (at > 0 && at <= len && !is_blank(p[at - 1]) &&
			       strchr(",:{}[]", p[at - 1]) == NULL)
				at--;
		}
		if (at > len)
			at = len;
		excerpt(near, sizeof(near), p + at, len - at);
		fail(r, TRACE_ERR_SYNTAX, true, abs + at, "invalid JSON: %.*s, near `%s`", (int)n,
		     msg != NULL ? (char *)msg : "error", near);
		if (msg != NULL)
			yajl_free_error(r->h, msg);
		return -1;
	}
	return 0;
}

/* ----------------------------------------------------------------- fast path */

/* yajl takes over in the event array, in state at (FAST_FIRST, _AFTER or _NEXT): a
 * fresh parser put there by a muted synthetic prefix. 0, or -1 when out of memory. */
static int resume_yajl(struct trace *r, enum fast_state at)
{
	static const char *const array_prefix[] = {
		[FAST_FIRST] = "[", [FAST_AFTER] = "[{}", [FAST_NEXT] = "[{},"};
	static const char *const object_prefix[] = {
		[FAST_FIRST] = "{\"\":[", [FAST_AFTER] = "{\"\":[{}", [FAST_NEXT] = "{\"\":[{},"};
	const char *prefix = (r->events_depth == 1 ? array_prefix : object_prefix)[at];
	yajl_handle h = parser_new(r);

	if (h == NULL) {
		fail_nomem(r);
		return -1;
	}
	r->h = h;
	r->muted = true;
	yajl_parse(h, (const unsigned char *)prefix, strlen(prefix));
	r->muted = false;
	r->fast = FAST_OFF;
	return 0;
}

/* A value of a plain event into strs, NUL-terminated; returns the next free byte. */
static char *fast_value(const struct event_parse *e, const unsigned char *p,
			const struct event_ref *ref, char *strs, struct trace_value *v)
{
	bool container = ref->type == TRACE_OBJECT || ref->type == TRACE_ARRAY;

	v->type = ref->type;
	v->text = strs;
	if (container && e->blanks) {
		v->len = event_parse_compact(strs, p + ref->off, ref->len);
	} else {
		memcpy(strs, p + ref->off, ref->len);
		v->len = ref->len;
	}
	strs[v->len] = '\0';
	return strs + v->len + 1;
}

/* The plain event event_parse() read at p (text offset abs): copied into one
 * allocation, as event_commit() does for yajl's, and queued. 1, or 0 (out of memory). */
static int fast_commit(struct trace *r, const unsigned char *p, uint64_t abs, uint64_t line,
		       uint64_t col)
{
	const struct event_parse *e = &r->ep;
	size_t args_bytes = e->nargs * sizeof(struct trace_arg), strs_bytes = 0;
	struct trace_event *ev;
	struct trace_arg *args;
	struct item *it;
	char *mem, *json, *strs;

	for (int f = 0; f < TRACE_F_COUNT; f++)
		strs_bytes += e->field[f].type != TRACE_ABSENT ? e->field[f].len + 1 : 0;
	for (size_t i = 0; i < e->nargs; i++)
		strs_bytes += e->arg[i].key.len + 1 + e->arg[i].value.len + 1;
	size_t size = args_bytes + e->len + 1 + strs_bytes;
	bool in_arena = r->arena != NULL && size <= r->arena_cap - r->arena_used;

	mem = in_arena ? r->arena + r->arena_used : malloc(size);
	it = mem != NULL ? queue_push(r) : NULL;
	if (it == NULL) {
		if (!in_arena)
			free(mem);
		return fail_nomem(r);
	}
	if (in_arena) /* the next one aligned for its args */
		r->arena_used += (size + 7) & ~(size_t)7;
	it->kind = ITEM_EVENT;
	it->mem = in_arena ? NULL : mem;
	ev = &it->u.ev;
	memset(ev, 0, sizeof(*ev));
	args = (void *)mem;
	json = mem + args_bytes;
	if (e->blanks) {
		ev->json_len = event_parse_compact(json, p, e->len);
	} else {
		memcpy(json, p, e->len);
		ev->json_len = e->len;
	}
	json[ev->json_len] = '\0';
	ev->json = json;
	strs = json + ev->json_len + 1;
	for (int f = 0; f < TRACE_F_COUNT; f++) {
		if (e->field[f].type != TRACE_ABSENT)
			strs = fast_value(e, p, &e->field[f], strs,
					  (void *)((char *)ev + field_offsets[f]));
	}
	for (size_t i = 0; i < e->nargs; i++) {
		struct trace_value key;

		strs = fast_value(e, p, &e->arg[i].key, strs, &key);
		args[i].key = key.text;
		args[i].key_len = key.len;
		strs = fast_value(e, p, &e->arg[i].value, strs, &args[i].value);
	}
	ev->arg = e->nargs > 0 ? args : NULL;
	ev->nargs = e->nargs;
	event_numbers(ev);
	ev->line = line;
	ev->col = col;
	ev->offset = abs;
	return 1;
}

/* Scan a long event's bytes for its end: the bytes taken, up to its closing brace. */
static size_t long_scan(struct long_event *e, const unsigned char *p, size_t len, bool *closed)
{
	for (size_t i = 0; i < len; i++) {
		unsigned c = p[i];

		if (e->in_str) {
			if (e->esc)
				e->esc = false;
			else if (c == '\\')
				e->esc = true;
			else if (c == '"')
				e->in_str = false;
		} else if (c == '"') {
			e->in_str = true;
		} else if (c == '{' || c == '[') {
			e->depth++;
		} else if ((c == '}' || c == ']') && --e->depth == 0) {
			*closed = true;
			return i + 1;
		}
	}
	*closed = false;
	return len;
}

/* Does the event at p[0] end within p[0 .. len)? One that does not goes the long
 * way even when it is for yajl, so that yajl never holds more than the limit. */
static bool ends_here(const unsigned char *p, size_t len)
{
	struct long_event probe = {.depth = 0};
	bool closed;

	long_scan(&probe, p, len, &closed);
	return closed;
}

static void long_begin(struct trace *r, uint64_t abs)
{
	struct long_event *e = &r->lng;

	e->abs = abs;
	locate(r, abs, &e->line, &e->col);
	e->text.len = 0;
	e->len = 0;
	e->depth = 0;
	e->in_str = e->esc = e->skip = false;
	e->resume = r->fast;
	r->fast = FAST_LONG;
}

/* The whole long event, kept in lng.text, to yajl: it is not plain. 0 or -1. */
static int long_to_yajl(struct trace *r)
{
	struct long_event *e = &r->lng;
	size_t used;
	int rc;

	if (resume_yajl(r, e->resume) != 0)
		return -1;
	e->feeding = true;
	rc = yajl_feed(r, (unsigned char *)e->text.p, e->text.len, e->abs, &used);
	if (rc == 0 && used < e->text.len) {
		/* yajl ended the event before the scan did: let it read the rest itself. */
		bool fast_ok = r->fast_ok;

		r->fast_ok = false;
		rc = resume_yajl(r, FAST_AFTER);
		if (rc == 0)
			rc = yajl_feed(r, (unsigned char *)e->text.p + used, e->text.len - used,
				       e->abs + used, &used);
		r->fast_ok = fast_ok;
	}
	e->feeding = false;
	return rc;
}

/*
 * More of a long event, from p[0 .. len): the bytes taken (up to its end), or
 * SIZE_MAX on an error. When it ends it is parsed (fast, or by yajl), or reported as
 * too large, and the state moves on.
 */
static size_t long_feed(struct trace *r, const unsigned char *p, size_t len)
{
	struct long_event *e = &r->lng;
	bool closed;
	size_t n = long_scan(e, p, len, &closed);

	if (!e->skip && e->len + n > r->max_event) {
		e->skip = true;
		buf_free(&e->text);
	} else if (!e->skip && buf_put(&e->text, p, n)) {
		fail_nomem(r);
		return SIZE_MAX;
	}
	e->len += n;
	if (!closed)
		return n;
	r->fast = FAST_AFTER;
	if (e->skip) {
		r->st.events_skipped++;
		if (!queue_issue(r, TRACE_ISSUE_EVENT_TOO_LARGE, e->line, e->col,
				 "an event of %llu bytes, over the limit of %llu bytes: skipped, "
				 "not read",
				 (unsigned long long)e->len, (unsigned long long)r->max_event))
			return SIZE_MAX;
	} else if (event_parse(&r->ep, (const unsigned char *)e->text.p, e->text.len) ==
			   EVENT_PARSE_DONE &&
		   r->ep.len == e->text.len) {
		if (!fast_commit(r, (const unsigned char *)e->text.p, e->abs, e->line, e->col))
			return SIZE_MAX;
	} else if (long_to_yajl(r) != 0) {
		return SIZE_MAX;
	}
	/* Hand a large buffer back rather than hold it for the rest of the file. */
	if (e->text.cap > (1u << 20))
		buf_free(&e->text);
	e->text.len = 0;
	return n;
}

/*
 * The fast path over text p[0 .. len) at abs: the events of the event array, the
 * blanks and commas between them, its closing ']'. *used < len where yajl takes
 * over: after the ']', and at anything the fast path does not take (an element
 * that is not a plain event, a syntax error), from the state it is in. 0 or -1.
 */
static int fast_feed(struct trace *r, unsigned char *p, size_t len, uint64_t abs, size_t *used)
{
	size_t k = 0;

	while (k < len && r->fast != FAST_OFF) {
		unsigned char c = p[k];

		if (r->fast == FAST_LONG) {
			size_t n = long_feed(r, p + k, len - k);

			if (n == SIZE_MAX)
				return -1;
			k += n;
		} else if (is_blank(c)) {
			k++;
		} else if (c == ',' && r->fast == FAST_AFTER) {
			r->fast = FAST_NEXT;
			k++;
		} else if (c == ']') {
			if (r->fast == FAST_NEXT && !queue_trailing_comma(r, abs + k))
				return -1;
			if (!resume_after_events(r)) {
				fail_nomem(r);
				return -1;
			}
			r->fast = FAST_OFF;
			k++;
		} else if (c == '{' && r->fast != FAST_AFTER) {
			enum event_parse_result rc = event_parse(&r->ep, p + k, len - k);
			uint64_t line, col;

			if (rc == EVENT_PARSE_DONE) {
				locate(r, abs + k, &line, &col);
				if (!fast_commit(r, p + k, abs + k, line, col))
					return -1;
				k += r->ep.len;
				r->fast = FAST_AFTER;
			} else if (rc == EVENT_PARSE_MORE || !ends_here(p + k, len - k)) {
				long_begin(r, abs + k);
			} else if (resume_yajl(r, r->fast) != 0) {
				return -1;
			}
		} else if (resume_yajl(r, r->fast) != 0) {
			return -1;
		}
	}
	r->last_token = abs + k;
	*used = k;
	return 0;
}

/* Text to whichever parser has it now, until all of it is parsed. 0 or -1. */
static int parse_text(struct trace *r, unsigned char *p, size_t len, uint64_t abs)
{
	while (len > 0) {
		size_t used;
		int rc = r->fast != FAST_OFF ? fast_feed(r, p, len, abs, &used)
					     : yajl_feed(r, p, len, abs, &used);

		if (rc != 0)
			return -1;
		p += used;
		len -= used;
		abs += used;
	}
	return 0;
}

/* ------------------------------------------------------------- the scanner */

static int scan_issue(struct trace *r, enum trace_issue_kind kind, uint64_t abs, const char *fmt,
		      ...) __attribute__((format(printf, 4, 5)));

/* Hold an issue the scanner found until yajl has parsed the text before it. */
static int scan_issue(struct trace *r, enum trace_issue_kind kind, uint64_t abs, const char *fmt,
		      ...)
{
	const struct scanner *sc = &r->sc;
	uint64_t col = abs >= sc->line_start ? abs - sc->line_start + 1 : 1;
	va_list ap;
	int ok;

	if (r->npend == sizeof(r->pend) / sizeof(r->pend[0]))
		return 1; /* cannot happen: at most three per byte */
	va_start(ap, fmt);
	ok = make_issue(r, &r->pend[r->npend], kind, sc->lines + 1, col, fmt, ap);
	va_end(ap);
	r->npend += (unsigned)ok;
	return ok;
}

/* Invalid UTF-8 starting with byte lead at abs: one issue per string. */
static int scan_bad_utf8(struct trace *r, uint64_t abs, unsigned lead)
{
	if (r->sc.bad_utf8)
		return 1;
	r->sc.bad_utf8 = true;
	return scan_issue(r, TRACE_ISSUE_INVALID_UTF8, abs,
			  "invalid UTF-8 in a string, from byte 0x%02x (a stray, overlong, "
			  "surrogate or cut sequence): write U+FFFD in its place",
			  lead);
}

static int scan_lone_high(struct trace *r)
{
	r->sc.high = false;
	return scan_issue(r, TRACE_ISSUE_SURROGATE, r->sc.high_abs,
			  "lone surrogate escape \\u%04x in a string: not a character, and "
			  "Perfetto rejects the whole file",
			  r->sc.high_val);
}

/* A \u escape has been read completely; end is the offset just past it. */
static int scan_escape(struct trace *r, uint64_t end)
{
	struct scanner *sc = &r->sc;
	unsigned v = sc->hex_val;

	if (sc->high) {
		if (v >= 0xdc00 && v <= 0xdfff && sc->esc_abs == sc->high_end) {
			unsigned cp = 0x10000 + ((sc->high_val - 0xd800) << 10) + (v - 0xdc00);

			sc->high = false;
			return scan_issue(r, TRACE_ISSUE_SURROGATE, sc->high_abs,
					  "surrogate pair \\u%04x\\u%04x (U+%04X) in a string: "
					  "Perfetto rejects the whole file; write the character as "
					  "raw UTF-8",
					  sc->high_val, v, cp);
		}
		if (!scan_lone_high(r))
			return 0;
	}
	if (v >= 0xd800 && v <= 0xdbff) {
		sc->high = true;
		sc->high_val = v;
		sc->high_abs = sc->esc_abs;
		sc->high_end = end;
		return 1;
	}
	if (v >= 0xdc00 && v <= 0xdfff)
		return scan_issue(r, TRACE_ISSUE_SURROGATE, sc->esc_abs,
				  "lone surrogate escape \\u%04x in a string: not a character, and "
				  "Perfetto rejects the whole file",
				  v);
	if (v >= 0x80)
		return scan_issue(r, TRACE_ISSUE_UNICODE_ESCAPE, sc->esc_abs,
				  "\\u%04x escape of non-ASCII U+%04X in a string: write it as raw "
				  "UTF-8",
				  v, v);
	return 1;
}

static int remember_patched_newline(struct trace *r, uint64_t abs)
{
	if (r->npatched == r->patched_cap) {
		size_t n = r->patched_cap ? r->patched_cap * 2 : 16;
		size_t *p = realloc(r->patched_nl, n * sizeof(*p));

		if (p == NULL)
			return fail_nomem(r);
		r->patched_nl = p;
		r->patched_cap = n;
	}
	r->patched_nl[r->npatched++] = (size_t)(abs - r->text_abs);
	return 1;
}

/* A string byte that is neither part of an escape nor a continuation byte. */
static int scan_string_byte(struct trace *r, unsigned char *p, uint64_t abs)
{
	struct scanner *sc = &r->sc;
	unsigned c = *p;

	if (c == '\\') {
		/* A waiting high surrogate is settled when this escape is complete. */
		sc->esc = true;
		sc->esc_abs = abs;
		return 1;
	}
	if (sc->high && !scan_lone_high(r))
		return 0;
	if (c == '"') {
		sc->in_str = false;
		return 1;
	}
	if (c < 0x20 || c == 0x7f) {
		/* One issue per string is enough to find it. */
		if (!sc->bad_byte &&
		    !scan_issue(r, TRACE_ISSUE_CONTROL_BYTE, abs,
				"raw control byte 0x%02x in a string: Catapult, "
				"DevTools and speedscope reject it; write it escaped "
				"(\\u%04x)",
				c, c))
			return 0;
		sc->bad_byte = true;
		if (c == '\n') {
			sc->lines++;
			sc->line_start = abs + 1;
			if (!remember_patched_newline(r, abs))
				return 0;
		}
		if (c != 0x7f)
			*p = ' '; /* so that yajl reads on */
		return 1;
	}
	if (c >= 0x80) {
		if (!rtr__json_utf8_lead((unsigned char)c, &sc->need, &sc->lo, &sc->hi))
			return scan_bad_utf8(r, abs, c);
		sc->lead = c;
		sc->seq_abs = abs;
	}
	return 1;
}

/* Scan byte *p at text offset abs (it may be rewritten). 1, or 0 when out of memory. */
static int scan_byte(struct trace *r, unsigned char *p, uint64_t abs)
{
	struct scanner *sc = &r->sc;
	unsigned c = *p;

	if (!sc->in_str) {
		if (c == '"') {
			sc->in_str = true;
			sc->bad_utf8 = sc->bad_byte = false;
		} else if (c == '\n') {
			sc->lines++;
			sc->line_start = abs + 1;
		}
		return 1;
	}
	if (sc->need > 0) {
		if (c >= sc->lo && c <= sc->hi) {
			sc->need--;
			sc->lo = 0x80;
			sc->hi = 0xbf;
			return 1;
		}
		sc->need = 0;
		if (!scan_bad_utf8(r, sc->seq_abs, sc->lead))
			return 0;
	}
	if (sc->hex_left > 0) {
		int h = rtr__json_hex_value(c);

		if (h >= 0) {
			sc->hex_val = sc->hex_val * 16 + (unsigned)h;
			if (--sc->hex_left == 0)
				return scan_escape(r, abs + 1);
			return 1;
		}
		sc->hex_left = 0; /* a malformed escape: yajl reports it */
	}
	if (sc->esc) {
		sc->esc = false;
		if (c == 'u') {
			sc->hex_left = 4;
			sc->hex_val = 0;
		}
		return 1;
	}
	return scan_string_byte(r, p, abs);
}

/*
 * The first byte at or after k that the scanner must look at: outside strings a
 * quote or a newline, inside a string in its plain state anything but printable
 * ASCII, the quote and the backslash. Most bytes of a trace are skipped here.
 */
static size_t scan_skip(const struct scanner *sc, const unsigned char *p, size_t k, size_t len)
{
	if (!sc->in_str) {
		while (k < len && p[k] != '"' && p[k] != '\n')
			k++;
	} else if (sc->need == 0 && sc->hex_left == 0 && !sc->esc && !sc->high) {
		while (k < len && p[k] >= 0x20 && p[k] < 0x7f && p[k] != '"' && p[k] != '\\')
			k++;
	}
	return k;
}

/*
 * Feed a slice through the scanner. Before an issue is queued, yajl gets the text
 * up to the byte that raised it, so that the issue follows the events before it.
 */
static int scan_and_feed(struct trace *r, unsigned char *p, size_t len, uint64_t abs)
{
	size_t seg = 0;

	for (size_t k = 0; k < len; k++) {
		k = scan_skip(&r->sc, p, k, len);
		if (k == len)
			break;
		if (!scan_byte(r, p + k, abs + k))
			goto fail;
		if (r->npend == 0)
			continue;
		if (parse_text(r, p + seg, k - seg, abs + seg) != 0)
			goto fail;
		for (unsigned i = 0; i < r->npend; i++) {
			struct item *it = queue_push(r);

			if (it == NULL) {
				fail_nomem(r);
				goto fail;
			}
			*it = r->pend[i];
			r->pend[i].mem = NULL;
		}
		r->npend = 0;
		seg = k;
	}
	return parse_text(r, p + seg, len - seg, abs + seg);
fail:
	for (unsigned i = 0; i < r->npend; i++)
		free(r->pend[i].mem);
	r->npend = 0;
	return -1;
}

/* ------------------------------------------------------------------- input */

static int read_input(struct trace *r, unsigned char *buf, size_t cap, size_t *got)
{
	for (;;) {
		ssize_t n = read(r->fd, buf, cap);

		if (n >= 0) {
			*got = (size_t)n;
			r->st.input_bytes += (uint64_t)n;
			progress_update(r->opt.progress, r->st.input_bytes);
			return 0;
		}
		if (errno != EINTR) {
			fail(r, TRACE_ERR_IO, false, 0, "read: %s", strerror(errno));
			return -1;
		}
	}
}

/* Bytes after the last gzip member: count them to the end, and say what they were. */
static int gzip_trailing(struct trace *r)
{
	uint64_t n = r->zs.avail_in, nonzero = 0;
	size_t got;

	for (uInt i = 0; i < r->zs.avail_in; i++)
		nonzero += r->zs.next_in[i] != 0;
	r->zs.avail_in = 0;
	for (;;) {
		if (read_input(r, r->in, r->input_bytes, &got))
			return -1;
		if (got == 0)
			break;
		n += got;
		for (size_t i = 0; i < got; i++)
			nonzero += r->in[i] != 0;
	}
	r->input_done = true;
	if (!queue_issue(r, TRACE_ISSUE_GZIP_TRAILING, 0, 0,
			 "%llu bytes after the last gzip member (%s), ignored",
			 (unsigned long long)n, nonzero ? "not a gzip member" : "all zero"))
		return -1;
	return 0;
}

/* The next text from gzip input into r->out; its length, 0 at the end, -1 on error. */
static ssize_t inflate_text(struct trace *r)
{
	for (;;) {
		size_t produced;
		int ret;

		if (r->zs.avail_in == 0) {
			size_t got;

			if (r->input_done)
				break;
			if (read_input(r, r->in, r->input_bytes, &got))
				return -1;
			if (got == 0) {
				r->input_done = true;
				break;
			}
			r->zs.next_in = r->in;
			r->zs.avail_in = (uInt)got;
		}
		if (!r->member_open) {
			if (r->zs.next_in[0] != 0x1f) {
				if (gzip_trailing(r))
					return -1;
				break;
			}
			r->member_open = true;
			r->st.gzip_members++;
		}
		r->zs.next_out = r->out;
		r->zs.avail_out = (uInt)r->text_bytes;
		ret = inflate(&r->zs, Z_NO_FLUSH);
		produced = r->text_bytes - r->zs.avail_out;
		if (ret == Z_STREAM_END) {
			/* One member done; the next one, if any, starts at next_in. */
			r->member_open = false;
			inflateReset(&r->zs);
		} else if (ret == Z_MEM_ERROR) {
			fail_nomem(r);
			return -1;
		} else if (ret != Z_OK && !(ret == Z_BUF_ERROR && r->zs.avail_in == 0)) {
			fail(r, TRACE_ERR_GZIP, false, 0,
			     "corrupt gzip data in member %llu (input byte %llu): %s",
			     (unsigned long long)r->st.gzip_members,
			     (unsigned long long)(r->st.input_bytes - r->zs.avail_in),
			     r->zs.msg != NULL ? r->zs.msg : "inflate failed");
			return -1;
		}
		if (produced > 0)
			return (ssize_t)produced;
	}
	if (r->member_open)
		r->st.gzip_cut = true;
	return 0;
}

/* The next text block into text/len; 0, or -1 on error. len 0: the input ended. */
static int next_block(struct trace *r)
{
	ssize_t n;

	advance(r, r->len); /* the block is done: count the rest of its lines */
	r->text_abs += r->len;
	r->len = r->pos = 0;
	if (!r->sniffed) {
		size_t got = 0, more;

		r->sniffed = true;
		/* Enough bytes to tell gzip and a byte-order mark, even from a pipe. */
		do {
			if (read_input(r, r->in + got, r->input_bytes - got, &more))
				return -1;
			got += more;
		} while (more > 0 && got < 4);
		r->input_done = more == 0;
		if (got >= 2 && r->in[0] == 0x1f && r->in[1] == 0x8b) {
			r->st.gzip = true;
			if (inflateInit2(&r->zs, 15 + 32) != Z_OK) {
				fail_nomem(r);
				return -1;
			}
			r->zs_ready = true;
			r->out = malloc(r->text_bytes);
			if (r->out == NULL) {
				fail_nomem(r);
				return -1;
			}
			r->zs.next_in = r->in;
			r->zs.avail_in = (uInt)got;
			n = inflate_text(r);
		} else {
			n = (ssize_t)got;
		}
	} else if (r->st.gzip) {
		n = inflate_text(r);
	} else if (r->input_done) {
		n = 0;
	} else {
		size_t got;

		if (read_input(r, r->in, r->input_bytes, &got))
			return -1;
		r->input_done = got == 0;
		n = (ssize_t)got;
	}
	if (n < 0)
		return -1;
	r->text = r->st.gzip ? r->out : r->in;
	r->len = (size_t)n;
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
		if (!queue_issue(r, TRACE_ISSUE_BOM, 1, 1,
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
		if (!queue_issue(r, TRACE_ISSUE_ZERO_BYTES, r->zero_line, r->zero_col,
				 "%llu NUL bytes at the end (a hole a crash left?), read as blanks",
				 (unsigned long long)r->zero_len))
			return;
	}
	if (r->fast == FAST_LONG && !r->lng.skip) {
		/* yajl reads the cut event as it would have: what it finds in it (a key
		 * twice, a syntax error) is reported as for any other. */
		size_t used;
		int rc = resume_yajl(r, r->lng.resume);

		r->lng.feeding = true;
		if (rc == 0)
			rc = yajl_feed(r, (unsigned char *)r->lng.text.p, r->lng.text.len,
				       r->lng.abs, &used);
		r->lng.feeding = false;
		if (rc != 0)
			return;
	}
	if (r->depth == 0) {
		/* Flush yajl: a lone top-level number only ends with the input. */
		r->finishing = true;
		if (yajl_complete_parse(r->h) != yajl_status_ok && !r->failed && r->top_started)
			fail(r, TRACE_ERR_SYNTAX, false, 0, "invalid JSON at the end");
		r->finishing = false;
		if (r->failed)
			return;
		if (!r->top_started) {
			fail(r, TRACE_ERR_SYNTAX, false, 0, "%s",
			     st->text_bytes == 0 ? "empty: no JSON in it" : "blank: no JSON in it");
			return;
		}
		st->complete = true;
		if (st->form == TRACE_FORM_OBJECT && !r->saw_events_key) {
			st->not_a_trace = "an object without \"traceEvents\"";
			queue_issue(r, TRACE_ISSUE_NO_EVENTS_KEY, 1, 1,
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
		building_reset(&r->b);
	} else if (r->fast == FAST_LONG) {
		st->cut_in_event = true;
		st->cut_bytes = st->text_bytes - r->lng.abs;
	}
}

static int feed_text(struct trace *r, unsigned char *p, size_t len, uint64_t abs)
{
	if (r->opt.flags & TRACE_READ_CHECK_STRINGS)
		return scan_and_feed(r, p, len, abs);
	return parse_text(r, p, len, abs);
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
			locate(r, abs + start, &r->zero_line, &r->zero_col);
		}
		while (end < len && p[end] == 0)
			p[end++] = ' ';
		r->zero_len += end - start;
		if (feed_text(r, p + start, end - start, abs + start) != 0)
			return -1;
		if (end < len) {
			r->zero_run = false;
			if (!queue_issue(r, TRACE_ISSUE_ZERO_BYTES, r->zero_line, r->zero_col,
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
static void step(struct trace *r)
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
			fail(r, TRACE_ERR_LIMIT, true, r->b.offset, "an event over %llu MiB",
			     (unsigned long long)(r->max_event >> 20));
		else if (rc == 0 && r->fast == FAST_OFF && end - r->last_token > r->max_event &&
			 !is_blank(p[n - 1]))
			fail(r, TRACE_ERR_LIMIT, true, r->last_token,
			     "a single JSON value over %llu MiB",
			     (unsigned long long)(r->max_event >> 20));
		if (r->failed)
			r->done = true;
		return;
	}
	if (r->len > 0 || !r->sniffed) {
		if (next_block(r) != 0)
			r->done = true;
		else if (r->len == 0)
			finish(r);
		return;
	}
	finish(r);
}

/* ------------------------------------------------------------------ public */

int trace_open(const char *path, const struct trace_options *options, struct trace **out)
{
	struct trace *r = calloc(1, sizeof(*r));
	struct stat sb;
	int err;

	*out = NULL;
	if (r == NULL)
		return -ENOMEM;
	if (options != NULL)
		r->opt = *options;
	r->path = strdup(path);
	if (r->opt.flags & TRACE_READ_SMALL) {
		r->input_bytes = SMALL_INPUT_BYTES;
		r->text_bytes = SMALL_TEXT_BYTES;
		r->slice_bytes = SMALL_SLICE_BYTES;
	} else {
		r->input_bytes = INPUT_BYTES;
		r->text_bytes = TEXT_BYTES;
		r->slice_bytes = SLICE_BYTES;
	}
	r->fast_ok = !(r->opt.flags & TRACE_READ_NO_FAST);
	r->max_event = r->opt.max_event_bytes > 0 ? r->opt.max_event_bytes : TRACE_MAX_EVENT_BYTES;
	r->in = malloc(r->input_bytes);
	r->arena_cap = 4 * r->slice_bytes;
	r->arena = malloc(r->arena_cap);
	r->h = parser_new(r);
	r->b.field_key = -1;
	if (r->path == NULL || r->in == NULL || r->h == NULL) {
		trace_close(r);
		return -ENOMEM;
	}
	if (strcmp(path, "-") == 0) {
		r->name = "<stdin>";
		r->fd = STDIN_FILENO;
	} else {
		r->name = r->path;
		r->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (r->fd < 0) {
			err = errno;
			r->fd = -1;
			trace_close(r);
			return -err;
		}
	}
	if (fstat(r->fd, &sb) == 0) {
		if (S_ISDIR(sb.st_mode)) {
			trace_close(r);
			return -EISDIR;
		}
		if (S_ISREG(sb.st_mode))
			r->st.input_size = (uint64_t)sb.st_size;
	}
	progress_total(r->opt.progress, r->st.input_size);
	*out = r;
	return 0;
}

int trace_next(struct trace *r, const struct trace_event **ev)
{
	free(r->handed);
	r->handed = NULL;
	for (;;) {
		while (r->q_head < r->q_len) {
			struct item *it = &r->q[r->q_head++];

			if (it->kind == ITEM_ISSUE) {
				r->st.issues++;
				if (r->opt.on_issue != NULL)
					r->opt.on_issue(r->opt.ctx, &it->u.issue);
				free(it->mem);
				continue;
			}
			r->handed = it->mem;
			it->u.ev.index = r->st.events++;
			*ev = &it->u.ev;
			return 1;
		}
		r->q_head = r->q_len = 0;
		r->arena_used = 0; /* the last event handed out was released above */
		if (r->done)
			return r->failed ? -1 : 0;
		step(r);
	}
}

const struct trace_status *trace_status(const struct trace *r)
{
	return &r->st;
}

const char *trace_name(const struct trace *r)
{
	return r->name;
}

int trace_set_name(struct trace *r, const char *name)
{
	char *copy = strdup(name);

	if (copy == NULL)
		return -ENOMEM;
	free(r->display);
	r->display = copy;
	r->name = copy;
	return 0;
}

void trace_close(struct trace *r)
{
	if (r == NULL)
		return;
	free(r->display);
	for (size_t i = r->q_head; i < r->q_len; i++)
		free(r->q[i].mem);
	free(r->q);
	free(r->handed);
	if (r->h != NULL)
		yajl_free(r->h);
	if (r->zs_ready)
		inflateEnd(&r->zs);
	if (r->fd > STDIN_FILENO)
		close(r->fd);
	building_free(&r->b);
	event_parse_free(&r->ep);
	buf_free(&r->lng.text);
	free(r->arena);
	buf_free(&r->cap.key);
	buf_free(&r->cap.json);
	free(r->cap.lv);
	free(r->patched_nl);
	free(r->in);
	free(r->out);
	free(r->path);
	free(r);
}
