/* SPDX-License-Identifier: MIT */
/*
 * Streaming trace reader for the tests (see trace_read.h for the contract).
 *
 * Design. The file is read in BLOCK_BYTES blocks and each block goes through
 * yajl_parse(); nothing else holds the file. The callbacks run a small state machine
 * on the nesting depth:
 *
 *   depth 0   outside everything: only '[' is accepted
 *   depth 1   inside the top-level array: only '{' (an event) is accepted
 *   depth 2   inside an event: keys select a field, values fill it
 *   depth 3   inside the event's "args" (in_args): keys make tt_args; a scalar value
 *             fills the arg, an object or array value is re-serialized into the arg's
 *             raw text (the cap stack) until it closes
 *   deeper    a value of an unknown top-level key: skipped
 *
 * When an event's object closes it is handed to the visitor and freed (tt_foreach),
 * or moved into the growing array (tt_load). Numbers come only through yajl's
 * yajl_number callback, as their text, so nothing is rounded through a double: ts
 * and dur are parsed from the decimal text to integer nanoseconds, integers keep
 * their text and get int64/uint64 values when they fit.
 *
 * Positions. yajl_parse() restarts its byte count at each block and, inside a
 * callback, yajl_get_bytes_consumed() is the offset just past the current token in
 * the current block (yajl_do_parse sets hand->bytesConsumed = 0 and the lexer moves
 * it token by token). The '{' of an event is one byte before that. Lines are counted
 * lazily: `scan` is how far into the block '\n' bytes have been counted, and every
 * position asked for moves it forward with memchr, so each byte is looked at once.
 * yajl_complete_parse() parses a private " " to flush the last token; a callback or
 * error in that call is placed at the end of the input.
 *
 * Repair (TT_REPAIR). Before parsing, the tail of the file is read backwards from
 * the end to find the last '\n' and the last non-blank byte before it. If the file
 * does not end with its closing ']', the parse is limited to the bytes up to the end
 * of the last whole line, minus a trailing ',', and a final block "]" is fed after
 * them. The file is never loaded whole and never changed.
 *
 * Strictness. yajl runs with comments off, UTF-8 validation on and no trailing
 * garbage. yajl's UTF-8 check only counts continuation bytes, so every string and
 * key is checked again here against RFC 3629. TT_CHECK_ESCAPES adds a byte scanner
 * over the raw blocks that tracks string and escape state across block borders.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "trace_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_parse.h>

#define BLOCK_BYTES (64 * 1024)
#define TAIL_BYTES  4096

enum key {
	K_NONE,
	K_PH,
	K_NAME,
	K_CAT,
	K_S,
	K_ID,
	K_BP,
	K_TS,
	K_DUR,
	K_PID,
	K_TID,
	K_ARGS,
	K_OTHER
};

static const char *const key_names[] = {
	[K_PH] = "ph",	 [K_NAME] = "name", [K_CAT] = "cat",   [K_S] = "s",
	[K_ID] = "id",	 [K_BP] = "bp",	    [K_TS] = "ts",     [K_DUR] = "dur",
	[K_PID] = "pid", [K_TID] = "tid",   [K_ARGS] = "args",
};

/* What a value turned out to be, for "is X, not Y" messages. */
enum val { V_NULL, V_BOOL, V_NUMBER, V_STRING, V_OBJECT, V_ARRAY };

static const char *const val_names[] = {
	[V_NULL] = "null",	 [V_BOOL] = "a boolean",   [V_NUMBER] = "a number",
	[V_STRING] = "a string", [V_OBJECT] = "an object", [V_ARRAY] = "an array",
};

struct buf {
	char *p;
	size_t len, cap;
};

/* One open container of an arg value being re-serialized. */
struct cap_level {
	char type;  /* '{' or '[' */
	char first; /* nothing written in it yet */
};

struct reader {
	const char *path;
	int flags;
	yajl_handle h;
	tt_visit_fn fn;
	void *fn_ctx;
	struct tt_trace *out; /* info of tt_foreach, or the target of tt_load */
	int keep;	      /* tt_load: move events into out->ev */
	size_t ev_cap;
	int stopped; /* the visitor asked to stop */
	int failed;  /* out->error is set */

	/* Position: the block yajl is parsing and how far its lines are counted. */
	const unsigned char *blk;
	size_t blk_len;
	uint64_t blk_abs;    /* file offset of blk[0] */
	size_t scan;	     /* '\n' counted in blk[0 .. scan) */
	size_t lines;	     /* '\n' bytes before blk + scan */
	uint64_t line_start; /* file offset of the current line's first byte */
	int finishing;	     /* inside yajl_complete_parse() */

	/* Structure. */
	int depth;
	int top_open, top_closed;
	enum key key;  /* the pending top-level key of the event */
	unsigned seen; /* known keys seen in this event, 1u << enum key */
	int in_args;
	struct tt_event ev;
	size_t args_cap;
	struct cap_level *cap;
	size_t ncap, cap_cap;
	struct buf raw;

	/* TT_CHECK_ESCAPES scanner state, carried across blocks. */
	int es_str, es_bs, es_u;
	unsigned es_val;
	uint64_t es_at; /* file offset of the last backslash */
	size_t count;
};

static int fail_abs(struct reader *r, uint64_t abs, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail_here(struct reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ------------------------------------------------------------------ positions */

/* Count the '\n' bytes of the current block up to off. */
static void advance(struct reader *r, size_t off)
{
	if (off > r->blk_len)
		off = r->blk_len;
	while (r->scan < off) {
		const unsigned char *nl = memchr(r->blk + r->scan, '\n', off - r->scan);

		if (nl == NULL) {
			r->scan = off;
			break;
		}
		r->lines++;
		r->scan = (size_t)(nl - r->blk) + 1;
		r->line_start = r->blk_abs + r->scan;
	}
}

/* Line and column (1-based, bytes) of file offset abs, which must not lie before the
 * line being counted. */
static void where(struct reader *r, uint64_t abs, size_t *line, size_t *col)
{
	if (abs >= r->blk_abs)
		advance(r, (size_t)(abs - r->blk_abs));
	*line = r->lines + 1;
	*col = abs >= r->line_start ? (size_t)(abs - r->line_start) + 1 : 1;
}

/* File offset just past the token yajl is handing to a callback. */
static uint64_t here(struct reader *r)
{
	if (r->finishing)
		return r->blk_abs + r->blk_len;
	return r->blk_abs + yajl_get_bytes_consumed(r->h);
}

static void vfail(struct reader *r, uint64_t abs, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

static void vfail(struct reader *r, uint64_t abs, const char *fmt, va_list ap)
{
	char msg[400];
	size_t line, col;

	if (r->failed)
		return;
	where(r, abs, &line, &col);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	snprintf(r->out->error, sizeof(r->out->error), "%s:%zu:%zu: %s", r->path, line, col, msg);
	r->failed = 1;
}

/* Record an error at file offset abs; returns 0 so that a callback can cancel. */
static int fail_abs(struct reader *r, uint64_t abs, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(r, abs, fmt, ap);
	va_end(ap);
	return 0;
}

/* Record an error at the token being handed to the current callback. */
static int fail_here(struct reader *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(r, here(r), fmt, ap);
	va_end(ap);
	return 0;
}

/* An error that has no position (open, read, size). */
static void fail_file(struct reader *r, const char *what, int err)
{
	if (r->failed)
		return;
	snprintf(r->out->error, sizeof(r->out->error), "%s: %s%s%s", r->path, what, err ? ": " : "",
		 err ? strerror(err) : "");
	r->failed = 1;
}

static int oom(struct reader *r)
{
	return fail_here(r, "out of memory");
}

/* ---------------------------------------------------------------- text helpers */

static char *dupn(const void *s, size_t len)
{
	char *p = malloc(len + 1);

	if (p == NULL)
		return NULL;
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

/* Index of the first byte of s that is not part of valid UTF-8 (RFC 3629: shortest
 * form, no surrogates, at most U+10FFFF), or len when all of it is valid. */
static size_t utf8_bad(const unsigned char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		unsigned c = s[i], lo = 0x80, hi = 0xbf;
		size_t n;

		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			n = 1;
		} else if (c == 0xe0) {
			n = 2;
			lo = 0xa0;
		} else if ((c >= 0xe1 && c <= 0xec) || c == 0xee || c == 0xef) {
			n = 2;
		} else if (c == 0xed) {
			n = 2;
			hi = 0x9f; /* ED A0..BF would be a surrogate */
		} else if (c == 0xf0) {
			n = 3;
			lo = 0x90;
		} else if (c >= 0xf1 && c <= 0xf3) {
			n = 3;
		} else if (c == 0xf4) {
			n = 3;
			hi = 0x8f;
		} else {
			return i;
		}
		if (len - i <= n || s[i + 1] < lo || s[i + 1] > hi)
			return i;
		for (size_t k = 2; k <= n; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return i;
		}
		i += n + 1;
	}
	return len;
}

static int check_utf8(struct reader *r, const unsigned char *s, size_t len, const char *what)
{
	size_t bad = utf8_bad(s, len);

	if (bad == len)
		return 1;
	return fail_here(r,
			 "%s is not valid UTF-8: byte 0x%02x at byte %zu of %zu (overlong, "
			 "surrogate, above U+10FFFF or cut sequence; a lone \\udc00..\\udfff "
			 "escape decodes to one)",
			 what, s[bad], bad, len);
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Like tt_parse_us(), with the reason for a refusal. */
static int parse_us(const char *t, size_t len, uint64_t *ns, const char **why)
{
	uint64_t v = 0, frac = 0;
	size_t i = 0;
	int dec = 0;

	*why = "is not a JSON number";
	if (len == 0)
		return -1;
	if (t[0] == '-') {
		*why = "is negative";
		return -1;
	}
	if (memchr(t, 'e', len) != NULL || memchr(t, 'E', len) != NULL) {
		*why = "is in exponent form";
		return -1;
	}
	if (t[0] == '0' && len > 1 && is_digit(t[1]))
		return -1;
	for (; i < len && is_digit(t[i]); i++) {
		unsigned d = (unsigned)(t[i] - '0');

		if (v > (UINT64_MAX - d) / 10) {
			*why = "is too large for uint64 nanoseconds";
			return -1;
		}
		v = v * 10 + d;
	}
	if (i == 0)
		return -1;
	if (i < len && t[i] == '.') {
		for (i++; i < len && is_digit(t[i]); i++) {
			if (dec == 3) {
				*why = "has more than three decimals (finer than 1 ns)";
				return -1;
			}
			frac = frac * 10 + (unsigned)(t[i] - '0');
			dec++;
		}
		if (dec == 0)
			return -1;
	}
	if (i != len)
		return -1;
	for (; dec < 3; dec++)
		frac *= 10;
	if (v > (UINT64_MAX - frac) / 1000) {
		*why = "is too large for uint64 nanoseconds";
		return -1;
	}
	*ns = v * 1000 + frac;
	return 0;
}

int tt_parse_us(const char *text, size_t len, uint64_t *ns)
{
	const char *why;

	return parse_us(text, len, ns, &why);
}

/* Integer text (JSON syntax, checked by yajl) to int64/uint64; returns TT_FITS_*. */
static unsigned parse_int(const char *t, size_t len, int64_t *i, uint64_t *u)
{
	size_t k = t[0] == '-';
	int neg = (int)k;
	uint64_t v = 0;
	unsigned fits = 0;

	for (; k < len; k++) {
		unsigned d = (unsigned)(t[k] - '0');

		if (v > (UINT64_MAX - d) / 10)
			return 0;
		v = v * 10 + d;
	}
	if (!neg) {
		*u = v;
		fits |= TT_FITS_U64;
		if (v <= (uint64_t)INT64_MAX) {
			*i = (int64_t)v;
			fits |= TT_FITS_I64;
		}
	} else {
		if (v <= (uint64_t)INT64_MAX) {
			*i = -(int64_t)v;
			fits |= TT_FITS_I64;
		} else if (v == (uint64_t)INT64_MAX + 1) {
			*i = INT64_MIN;
			fits |= TT_FITS_I64;
		}
		if (v == 0) {
			*u = 0;
			fits |= TT_FITS_U64;
		}
	}
	return fits;
}

static int is_integer_text(const char *t, size_t len)
{
	return memchr(t, '.', len) == NULL && memchr(t, 'e', len) == NULL &&
	       memchr(t, 'E', len) == NULL;
}

/* ------------------------------------------------------------- re-serializing */

static int buf_put(struct buf *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *np;

		while (cap < b->len + n)
			cap *= 2;
		np = realloc(b->p, cap);
		if (np == NULL)
			return -1;
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}

/* A JSON string, quoted, escaped as the writer escapes (trace_read.h, tt_arg.raw). */
static int buf_string(struct buf *b, const unsigned char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";

	if (buf_put(b, "\"", 1))
		return -1;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = s[i];
		char e[6] = {'\\', 0, 0, 0, 0, 0};
		size_t n = 2;

		switch (c) {
		case '"':
			e[1] = '"';
			break;
		case '\\':
			e[1] = '\\';
			break;
		case '\b':
			e[1] = 'b';
			break;
		case '\f':
			e[1] = 'f';
			break;
		case '\n':
			e[1] = 'n';
			break;
		case '\r':
			e[1] = 'r';
			break;
		case '\t':
			e[1] = 't';
			break;
		default:
			if (c >= 0x20 && c != 0x7f) {
				if (buf_put(b, &s[i], 1))
					return -1;
				continue;
			}
			memcpy(e + 1, "u00", 3);
			e[4] = hex[c >> 4];
			e[5] = hex[c & 15];
			n = 6;
		}
		if (buf_put(b, e, n))
			return -1;
	}
	return buf_put(b, "\"", 1);
}

static struct tt_arg *cur_arg(struct reader *r)
{
	return &r->ev.args[r->ev.nargs - 1];
}

/* Separator before a value inside the captured container (keys write their own). */
static int cap_prefix(struct reader *r)
{
	struct cap_level *top = &r->cap[r->ncap - 1];

	if (top->type == '[') {
		if (!top->first && buf_put(&r->raw, ",", 1))
			return -1;
		top->first = 0;
	}
	return 0;
}

static int cap_open(struct reader *r, char c)
{
	if (r->ncap > 0 && cap_prefix(r))
		return oom(r);
	if (r->ncap == r->cap_cap) {
		size_t n = r->cap_cap ? r->cap_cap * 2 : 16;
		struct cap_level *p = realloc(r->cap, n * sizeof(*p));

		if (p == NULL)
			return oom(r);
		r->cap = p;
		r->cap_cap = n;
	}
	r->cap[r->ncap].type = c;
	r->cap[r->ncap].first = 1;
	r->ncap++;
	if (buf_put(&r->raw, &c, 1))
		return oom(r);
	return 1;
}

static int cap_close(struct reader *r, char c)
{
	struct tt_arg *a;

	if (buf_put(&r->raw, &c, 1))
		return oom(r);
	if (--r->ncap > 0)
		return 1;
	a = cur_arg(r);
	a->raw = dupn(r->raw.p, r->raw.len);
	r->raw.len = 0;
	return a->raw != NULL ? 1 : oom(r);
}

static int cap_key(struct reader *r, const unsigned char *k, size_t len)
{
	struct cap_level *top = &r->cap[r->ncap - 1];

	if (!top->first && buf_put(&r->raw, ",", 1))
		return oom(r);
	top->first = 0;
	if (buf_string(&r->raw, k, len) || buf_put(&r->raw, ":", 1))
		return oom(r);
	return 1;
}

static int cap_scalar(struct reader *r, enum val v, const void *p, size_t len)
{
	int err;

	if (cap_prefix(r))
		return oom(r);
	if (v == V_STRING)
		err = buf_string(&r->raw, p, len);
	else
		err = buf_put(&r->raw, p, len);
	return err ? oom(r) : 1;
}

/* -------------------------------------------------------------------- events */

static void event_free(struct tt_event *e)
{
	free(e->name);
	free(e->cat);
	free(e->scope);
	free(e->id);
	free(e->bp);
	for (size_t i = 0; i < e->nargs; i++) {
		free(e->args[i].key);
		free(e->args[i].s);
		free(e->args[i].raw);
	}
}

/* Empty the reader's event, keeping its args array for the next one. */
static void event_reset(struct reader *r)
{
	struct tt_arg *args = r->ev.args;

	memset(&r->ev, 0, sizeof(r->ev));
	r->ev.args = args;
	r->key = K_NONE;
	r->seen = 0;
	r->in_args = 0;
}

static int event_begin(struct reader *r)
{
	uint64_t end = here(r);
	size_t line, col;

	event_reset(r);
	/* The '{' token is one byte, just before the offset yajl reports. */
	where(r, end > r->blk_abs ? end - 1 : end, &line, &col);
	r->ev.line = line;
	return 1;
}

static int event_end(struct reader *r)
{
	struct tt_trace *out = r->out;

	r->count++;
	if (r->keep) {
		if (out->n == r->ev_cap) {
			size_t n = r->ev_cap ? r->ev_cap * 2 : 1024;
			struct tt_event *p = realloc(out->ev, n * sizeof(*p));

			if (p == NULL)
				return oom(r);
			out->ev = p;
			r->ev_cap = n;
		}
		/* The event's args array moves with it. */
		if (r->ev.nargs == 0) {
			free(r->ev.args);
			r->ev.args = NULL;
		}
		out->ev[out->n++] = r->ev;
		memset(&r->ev, 0, sizeof(r->ev));
		r->args_cap = 0;
		event_reset(r);
		return 1;
	}
	out->n = r->count;
	if (r->fn != NULL && r->fn(&r->ev, r->fn_ctx) != 0)
		r->stopped = 1;
	event_free(&r->ev);
	event_reset(r);
	return !r->stopped;
}

static enum key key_of(const unsigned char *k, size_t len)
{
	for (int i = K_PH; i <= K_ARGS; i++) {
		if (strlen(key_names[i]) == len && memcmp(key_names[i], k, len) == 0)
			return (enum key)i;
	}
	return K_OTHER;
}

static int field_key(struct reader *r, const unsigned char *k, size_t len)
{
	r->key = key_of(k, len);
	r->ev.nkeys++;
	if (r->key == K_OTHER)
		return 1;
	if (r->seen & (1u << r->key))
		return fail_here(r, "duplicate key \"%s\" in the event", key_names[r->key]);
	r->seen |= 1u << r->key;
	return 1;
}

static int field_type(struct reader *r, enum val v, const char *want)
{
	return fail_here(r, "\"%s\" is %s, not %s", key_names[r->key], val_names[v], want);
}

static int set_str(struct reader *r, char **dst, const void *p, size_t len)
{
	*dst = dupn(p, len);
	return *dst != NULL ? 1 : oom(r);
}

/* A scalar value of a top-level key of the event. p/len: string bytes or number text. */
static int field_scalar(struct reader *r, enum val v, const void *p, size_t len)
{
	struct tt_event *e = &r->ev;
	uint64_t u = 0;
	const char *why;

	switch (r->key) {
	case K_PH:
		if (v != V_STRING)
			return field_type(r, v, "a string");
		if (len < 1 || len > 3 || memchr(p, '\0', len) != NULL)
			return fail_here(r, "\"ph\" must be 1 to 3 bytes, is %zu", len);
		memcpy(e->ph, p, len);
		e->ph[len] = '\0';
		return 1;
	case K_NAME:
		if (v != V_STRING)
			return field_type(r, v, "a string");
		e->name_len = len;
		return set_str(r, &e->name, p, len);
	case K_CAT:
		if (v != V_STRING)
			return field_type(r, v, "a string");
		e->cat_len = len;
		return set_str(r, &e->cat, p, len);
	case K_S:
		if (v != V_STRING)
			return field_type(r, v, "a string");
		return set_str(r, &e->scope, p, len);
	case K_BP:
		if (v != V_STRING)
			return field_type(r, v, "a string");
		return set_str(r, &e->bp, p, len);
	case K_ID:
		if (v == V_STRING)
			e->id_type = TT_STRING;
		else if (v == V_NUMBER)
			e->id_type = is_integer_text(p, len) ? TT_INT : TT_DOUBLE;
		else
			return field_type(r, v, "a string or a number");
		return set_str(r, &e->id, p, len);
	case K_TS:
	case K_DUR:
		if (v != V_NUMBER)
			return field_type(r, v, "a number");
		if (parse_us(p, len, &u, &why))
			return fail_here(r, "\"%s\" %.*s %s", key_names[r->key], (int)len,
					 (const char *)p, why);
		if (r->key == K_TS) {
			e->has_ts = 1;
			e->ts_ns = u;
		} else {
			e->has_dur = 1;
			e->dur_ns = u;
		}
		return 1;
	case K_PID:
	case K_TID: {
		int64_t i = 0;

		if (v != V_NUMBER)
			return field_type(r, v, "an integer");
		if (!is_integer_text(p, len) || !(parse_int(p, len, &i, &u) & TT_FITS_I64))
			return fail_here(r, "\"%s\" %.*s is not an integer that fits int64",
					 key_names[r->key], (int)len, (const char *)p);
		if (r->key == K_PID) {
			e->has_pid = 1;
			e->pid = i;
		} else {
			e->has_tid = 1;
			e->tid = i;
		}
		return 1;
	}
	case K_ARGS:
		return field_type(r, v, "an object");
	default:
		return 1;
	}
}

/* An object or array opening as the value of a top-level key of the event. */
static int field_container(struct reader *r, char c)
{
	enum val v = c == '{' ? V_OBJECT : V_ARRAY;

	switch (r->key) {
	case K_ARGS:
		if (c != '{')
			return field_type(r, v, "an object");
		r->in_args = 1;
		r->ev.has_args = 1;
		return 1;
	case K_OTHER:
		return 1;
	case K_ID:
		return field_type(r, v, "a string or a number");
	case K_TS:
	case K_DUR:
		return field_type(r, v, "a number");
	case K_PID:
	case K_TID:
		return field_type(r, v, "an integer");
	default:
		return field_type(r, v, "a string");
	}
}

static int arg_key(struct reader *r, const unsigned char *k, size_t len)
{
	struct tt_event *e = &r->ev;
	struct tt_arg *a;
	char *key = dupn(k, len);

	if (key == NULL)
		return oom(r);
	for (size_t i = 0; i < e->nargs; i++) {
		if (strcmp(e->args[i].key, key) == 0) {
			free(key);
			return fail_here(r, "duplicate key \"%s\" in args", e->args[i].key);
		}
	}
	if (e->nargs == r->args_cap) {
		size_t n = r->args_cap ? r->args_cap * 2 : 8;
		struct tt_arg *p = realloc(e->args, n * sizeof(*p));

		if (p == NULL) {
			free(key);
			return oom(r);
		}
		e->args = p;
		r->args_cap = n;
	}
	a = &e->args[e->nargs++];
	memset(a, 0, sizeof(*a));
	a->key = key;
	return 1;
}

static int arg_scalar(struct reader *r, enum val v, int b, const void *p, size_t len)
{
	struct tt_arg *a = cur_arg(r);

	switch (v) {
	case V_NULL:
		a->type = TT_NULL;
		return 1;
	case V_BOOL:
		a->type = TT_BOOL;
		a->b = b;
		return 1;
	case V_STRING:
		a->type = TT_STRING;
		a->s_len = len;
		return set_str(r, &a->s, p, len);
	default:
		break;
	}
	if (set_str(r, &a->raw, p, len) == 0)
		return 0;
	if (is_integer_text(p, len)) {
		a->type = TT_INT;
		a->fits = parse_int(p, len, &a->i, &a->u);
	} else {
		a->type = TT_DOUBLE;
	}
	a->d = strtod(a->raw, NULL);
	return 1;
}

/* ----------------------------------------------------------- yajl callbacks */

static int on_scalar(struct reader *r, enum val v, int b, const void *p, size_t len)
{
	if (v == V_STRING && !check_utf8(r, p, len, "a string"))
		return 0;
	if (r->ncap > 0)
		return cap_scalar(r, v, p, len);
	switch (r->depth) {
	case 0:
		return fail_here(r, "the top level is %s, not an array", val_names[v]);
	case 1:
		return fail_here(r, "an element of the top-level array is %s, not an event object",
				 val_names[v]);
	case 2:
		return field_scalar(r, v, p, len);
	case 3:
		if (r->in_args)
			return arg_scalar(r, v, b, p, len);
		return 1;
	default:
		return 1;
	}
}

static int cb_null(void *ctx)
{
	return on_scalar(ctx, V_NULL, 0, "null", 4);
}

static int cb_bool(void *ctx, int b)
{
	return on_scalar(ctx, V_BOOL, b, b ? "true" : "false", b ? 4 : 5);
}

static int cb_number(void *ctx, const char *s, size_t len)
{
	return on_scalar(ctx, V_NUMBER, 0, s, len);
}

static int cb_string(void *ctx, const unsigned char *s, size_t len)
{
	return on_scalar(ctx, V_STRING, 0, s, len);
}

static int on_start(struct reader *r, char c)
{
	int d = r->depth++;

	if (r->ncap > 0)
		return cap_open(r, c);
	switch (d) {
	case 0:
		if (c == '[') {
			r->top_open = 1;
			return 1;
		}
		return fail_here(r, "the top level is an object, not an array: only the bare-array "
				    "form is read, not {\"traceEvents\":[...]}");
	case 1:
		if (c == '[')
			return fail_here(r, "an element of the top-level array is an array, not an "
					    "event object");
		return event_begin(r);
	case 2:
		return field_container(r, c);
	case 3:
		if (r->in_args) {
			cur_arg(r)->type = TT_OTHER;
			return cap_open(r, c);
		}
		return 1;
	default:
		return 1;
	}
}

static int on_end(struct reader *r, char c)
{
	int d = --r->depth;

	if (r->ncap > 0)
		return cap_close(r, c);
	switch (d) {
	case 0:
		r->top_closed = 1;
		return 1;
	case 1:
		return event_end(r);
	case 2:
		r->in_args = 0;
		return 1;
	default:
		return 1;
	}
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
	struct reader *r = ctx;

	if (!check_utf8(r, k, len, "a key"))
		return 0;
	if (r->ncap > 0)
		return cap_key(r, k, len);
	if (r->depth == 2)
		return field_key(r, k, len);
	if (r->depth == 3 && r->in_args)
		return arg_key(r, k, len);
	return 1;
}

static const yajl_callbacks callbacks = {
	.yajl_null = cb_null,
	.yajl_boolean = cb_bool,
	.yajl_number = cb_number,
	.yajl_string = cb_string,
	.yajl_start_map = cb_start_map,
	.yajl_map_key = cb_map_key,
	.yajl_end_map = cb_end_map,
	.yajl_start_array = cb_start_array,
	.yajl_end_array = cb_end_array,
};

/* ------------------------------------------------------------ escapes check */

static int hex_val(unsigned c)
{
	if (c >= '0' && c <= '9')
		return (int)(c - '0');
	if (c >= 'a' && c <= 'f')
		return (int)(c - 'a' + 10);
	if (c >= 'A' && c <= 'F')
		return (int)(c - 'A' + 10);
	return -1;
}

/*
 * TT_CHECK_ESCAPES over one raw block. Returns the offset in p where a violation is
 * complete (es_at is then the file offset of its first byte), or len. Malformed
 * escapes are left to yajl, which sees the same bytes.
 */
static size_t esc_scan(struct reader *r, const unsigned char *p, size_t len)
{
	for (size_t k = 0; k < len; k++) {
		unsigned c = p[k];

		if (!r->es_str) {
			if (c == '"')
				r->es_str = 1;
			continue;
		}
		if (r->es_u > 0) {
			int h = hex_val(c);

			if (h < 0) {
				r->es_u = 0;
				continue;
			}
			r->es_val = r->es_val * 16 + (unsigned)h;
			if (--r->es_u == 0 && r->es_val >= 0x80)
				return k;
			continue;
		}
		if (r->es_bs) {
			r->es_bs = 0;
			if (c == 'u') {
				r->es_u = 4;
				r->es_val = 0;
			}
			continue;
		}
		if (c == '\\') {
			r->es_bs = 1;
			r->es_at = r->blk_abs + k;
		} else if (c == '"') {
			r->es_str = 0;
		} else if (c == 0x7f) {
			r->es_at = r->blk_abs + k;
			r->es_val = 0x7f;
			return k;
		}
	}
	return len;
}

/* ------------------------------------------------------------------- driving */

/* Feed p[0 .. len) as the current block. 0: go on, 1: stopped by the visitor,
 * -1: error (reported). */
static int feed(struct reader *r, const unsigned char *p, size_t len)
{
	yajl_status st = yajl_parse(r->h, p, len);
	unsigned char *msg;
	size_t n;

	if (st == yajl_status_ok)
		return 0;
	if (st == yajl_status_client_canceled) {
		if (r->stopped)
			return 1;
		if (!r->failed)
			fail_here(r, "parse canceled");
		return -1;
	}
	msg = yajl_get_error(r->h, 0, NULL, 0);
	n = msg != NULL ? strlen((char *)msg) : 0;
	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' ' || msg[n - 1] == '.'))
		n--;
	fail_abs(r, r->blk_abs + yajl_get_bytes_consumed(r->h), "%.*s", (int)n,
		 msg != NULL ? (char *)msg : "parse error");
	if (msg != NULL)
		yajl_free_error(r->h, msg);
	return -1;
}

static ssize_t pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, (char *)buf + got, len - got, (off_t)(off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

static int is_blank(unsigned c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/*
 * The last offset before end whose byte is '\n' (want_nl) or is not blank
 * (!want_nl); -1 if none, -2 on a read error.
 */
static int64_t rfind(int fd, uint64_t end, int want_nl, unsigned char *byte)
{
	unsigned char buf[TAIL_BYTES];

	while (end > 0) {
		size_t n = end < sizeof(buf) ? (size_t)end : sizeof(buf);
		uint64_t off = end - n;

		if (pread_full(fd, buf, n, off) != (ssize_t)n) {
			if (errno == 0)
				errno = EIO; /* the file shrank under us */
			return -2;
		}
		for (size_t k = n; k-- > 0;) {
			if (want_nl ? buf[k] == '\n' : !is_blank(buf[k])) {
				*byte = buf[k];
				return (int64_t)(off + k);
			}
		}
		end = off;
	}
	return -1;
}

/*
 * Is the unterminated last line file[start .. end), whose last non-blank byte is ']',
 * the closing line of a complete file? Yes when "[" + line is valid JSON: "]" alone,
 * or a last event followed by "]". A partial event that happens to end in ']' is not.
 */
static int last_line_closes(int fd, uint64_t start, uint64_t end, unsigned char *buf)
{
	yajl_handle h = yajl_alloc(NULL, NULL, NULL);
	int ok = h != NULL;

	if (ok)
		ok = yajl_parse(h, (const unsigned char *)"[", 1) == yajl_status_ok;
	while (ok && start < end) {
		size_t n = end - start < BLOCK_BYTES ? (size_t)(end - start) : BLOCK_BYTES;

		ok = pread_full(fd, buf, n, start) == (ssize_t)n &&
		     yajl_parse(h, buf, n) == yajl_status_ok;
		start += n;
	}
	if (ok)
		ok = yajl_complete_parse(h) == yajl_status_ok;
	if (h != NULL)
		yajl_free(h);
	return ok;
}

/*
 * TT_REPAIR: decide, from the tail of the file, how many bytes to parse (*limit) and
 * whether to close the array after them (*closing). 0 or -1 (reported).
 */
static int plan_repair(struct reader *r, int fd, uint64_t size, unsigned char *buf, uint64_t *limit,
		       int *closing)
{
	unsigned char c = 0, last = 0;
	int64_t nl, p, lastp;
	uint64_t tail;

	*limit = size;
	*closing = 0;
	errno = 0;
	nl = rfind(fd, size, 1, &c);
	if (nl == -2)
		goto read_error;
	tail = (uint64_t)(nl + 1); /* 0 when there is no '\n' */
	lastp = rfind(fd, size, 0, &last);
	if (lastp == -2)
		goto read_error;
	if (lastp < 0) {
		fail_file(r, "empty file (nothing but blanks): nothing to repair", 0);
		return -1;
	}
	if ((uint64_t)lastp < tail) {
		/* The file ends with whole lines: complete if the last byte is ']'. */
		if (last == ']')
			return 0;
		p = lastp;
		c = last;
	} else {
		/* An unterminated last line. */
		if (last == ']' && last_line_closes(fd, tail, (uint64_t)lastp + 1, buf))
			return 0;
		if (nl < 0) {
			fail_file(r, "cut inside its first line: nothing to repair", 0);
			return -1;
		}
		p = rfind(fd, tail, 0, &c);
		if (p == -2)
			goto read_error;
		if (p < 0) {
			fail_file(r, "only a partial line after blank lines: nothing to repair", 0);
			return -1;
		}
	}
	*limit = c == ',' ? (uint64_t)p : (uint64_t)p + 1;
	*closing = 1;
	r->out->repaired = 1;
	return 0;

read_error:
	fail_file(r, "read", errno);
	return -1;
}

static void report_escape(struct reader *r)
{
	if (r->es_val == 0x7f)
		fail_abs(r, r->es_at,
			 "raw 0x7F byte in a string (FORMAT.md: escape it as \\u007f)");
	else
		fail_abs(r, r->es_at,
			 "\\u%04x escape in a string (FORMAT.md: non-ASCII is written as raw "
			 "UTF-8, never as a \\u escape; a surrogate pair makes Perfetto reject "
			 "the file)",
			 r->es_val);
}

/* Parse the file into the callbacks. 0: read to the end, 1: stopped, -1: error. */
static int run(struct reader *r)
{
	static const unsigned char close_text[] = "]";
	unsigned char *buf = NULL;
	uint64_t size, limit, done = 0;
	struct stat st;
	int closing = 0, rc = -1, fd;

	fd = open(r->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fail_file(r, "cannot open", errno);
		return -1;
	}
	if (fstat(fd, &st) != 0) {
		fail_file(r, "fstat", errno);
		goto out;
	}
	size = (uint64_t)st.st_size;
	limit = size;
	buf = malloc(BLOCK_BYTES);
	if (buf == NULL) {
		fail_file(r, "out of memory", 0);
		goto out;
	}
	if ((r->flags & TT_REPAIR) && plan_repair(r, fd, size, buf, &limit, &closing))
		goto out;
	r->h = yajl_alloc(&callbacks, NULL, r);
	if (r->h == NULL) {
		fail_file(r, "out of memory", 0);
		goto out;
	}
	/* Strict JSON. These are yajl's defaults; set anyway so that they are visible. */
	yajl_config(r->h, yajl_allow_comments, 0);
	yajl_config(r->h, yajl_dont_validate_strings, 0);
	yajl_config(r->h, yajl_allow_trailing_garbage, 0);
	yajl_config(r->h, yajl_allow_multiple_values, 0);
	yajl_config(r->h, yajl_allow_partial_values, 0);

	while (done < limit) {
		size_t want = limit - done < BLOCK_BYTES ? (size_t)(limit - done) : BLOCK_BYTES;
		ssize_t n = pread_full(fd, buf, want, done);
		size_t bad;

		if (n < 0) {
			fail_file(r, "read", errno);
			goto out;
		}
		if ((size_t)n < want) {
			fail_file(r, "file shrank while being read", 0);
			goto out;
		}
		r->blk = buf;
		r->blk_len = want;
		r->blk_abs = done;
		r->scan = 0;
		bad = (r->flags & TT_CHECK_ESCAPES) ? esc_scan(r, buf, want) : want;
		rc = feed(r, buf, bad);
		if (rc != 0)
			goto out;
		if (bad < want) {
			report_escape(r);
			rc = -1;
			goto out;
		}
		advance(r, want);
		done += want;
	}
	if (closing) {
		r->blk = close_text;
		r->blk_len = 1;
		r->blk_abs = limit;
		r->scan = 0;
		rc = feed(r, close_text, 1);
		if (rc != 0)
			goto out;
	}
	rc = -1;
	r->finishing = 1;
	if (yajl_complete_parse(r->h) != yajl_status_ok) {
		uint64_t eof = r->blk_abs + r->blk_len;

		if (r->failed)
			goto out;
		if (r->top_open && !r->top_closed)
			fail_abs(r, eof,
				 "file is cut: it ends inside the top-level array, without the "
				 "closing ']' (%zu whole events before the cut; TT_REPAIR reads a "
				 "cut file)",
				 r->count);
		else if (!r->top_open)
			fail_abs(r, eof, "no JSON value: the file is empty or blank");
		else
			fail_abs(r, eof, "premature end of file");
		goto out;
	}
	r->out->complete = !closing;
	rc = 0;
out:
	if (r->h != NULL)
		yajl_free(r->h);
	free(buf);
	close(fd);
	return rc;
}

static void reader_free(struct reader *r)
{
	event_free(&r->ev);
	free(r->ev.args);
	free(r->cap);
	free(r->raw.p);
}

/* ------------------------------------------------------------------- public */

int tt_foreach(const char *path, int flags, tt_visit_fn fn, void *ctx, struct tt_trace *info)
{
	struct tt_trace local;
	struct reader r;
	int rc;

	if (info == NULL)
		info = &local;
	memset(info, 0, sizeof(*info));
	memset(&r, 0, sizeof(r));
	r.path = path;
	r.flags = flags;
	r.fn = fn;
	r.fn_ctx = ctx;
	r.out = info;
	rc = run(&r);
	info->n = r.count;
	reader_free(&r);
	return rc;
}

int tt_load(const char *path, int flags, struct tt_trace *out)
{
	struct reader r;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&r, 0, sizeof(r));
	r.path = path;
	r.flags = flags;
	r.out = out;
	r.keep = 1;
	rc = run(&r);
	reader_free(&r);
	return rc == 0 ? 0 : -1;
}

void tt_free(struct tt_trace *t)
{
	for (size_t i = 0; i < t->n; i++) {
		event_free(&t->ev[i]);
		free(t->ev[i].args);
	}
	free(t->ev);
	memset(t, 0, sizeof(*t));
}

const struct tt_arg *tt_arg(const struct tt_event *e, const char *key)
{
	for (size_t i = 0; i < e->nargs; i++) {
		if (strcmp(e->args[i].key, key) == 0)
			return &e->args[i];
	}
	return NULL;
}
