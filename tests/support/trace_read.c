/* SPDX-License-Identifier: MIT */
/*
 * Streaming trace reader for the tests (see trace_read.h for the contract).
 *
 * An oracle apart from the tools: tools/source/trace.c is the one yajl pull (callback)
 * reader of the tree; this reader judges the library's and the tools' output with
 * yajl's tree API instead, one event at a time, so that the tests never judge a
 * tool with the tool's own parser.
 *
 * Design. The file is read in BLOCK_BYTES blocks, and each block goes to two places:
 *
 *   the validator  yajl_parse() with no callbacks, strict: it sees every byte of
 *                  the file (and the "]" a repair adds) and nothing else, so the
 *                  whole document is checked as one JSON text, framing and commas
 *                  included;
 *   the splitter   a byte scanner that follows strings, escapes and the nesting
 *                  depth, and cuts out each element of the top-level array. An
 *                  event's text, once its '}' has passed the validator, is parsed
 *                  on its own with yajl_tree_parse() and typed into a tt_event.
 *
 * Only the event being read is in memory (its text and its tree), so a 200 MB trace
 * costs a few hundred KiB in tt_foreach(); tt_load() keeps every event, for the small
 * traces of unit tests. The splitter hands bytes to the validator up to the point it
 * acts on (an event's end, a structural error, a TT_CHECK_ESCAPES violation), so
 * errors come in file order, as a single pass would give them.
 *
 * Numbers come from the tree as their text (yajl_tree keeps it), so nothing is
 * rounded through a double: ts and dur are parsed from the decimal text to integer
 * nanoseconds, integers keep their text and get int64/uint64 values when they fit.
 *
 * Strings with NUL. yajl_tree hands strings and keys over NUL-terminated, which
 * would cut a "\u0000" short. An event whose text has that escape is parsed with
 * each "\u0000" replaced by "\udbff\udfff" (U+10FFFF, a noncharacter), which is
 * turned back into a NUL byte when its strings are copied out; an event that also
 * holds U+10FFFF itself is refused rather than misread.
 *
 * Positions. Lines are counted by the splitter as it goes; a position behind it (a
 * validator error, which points past the offending token) is found by counting
 * again from the start of the file, which only happens once, on the error path.
 * Errors inside an event (types, duplicates, UTF-8) point at the event's '{'.
 *
 * Repair (TT_REPAIR). Before parsing, the tail of the file is read backwards from
 * the end to find the last '\n' and the last non-blank byte before it. If the file
 * does not end with its closing ']', the parse is limited to the bytes up to the end
 * of the last whole line, minus a trailing ',', and a final block "]" is fed after
 * them. The file is never loaded whole and never changed.
 *
 * Strictness. The validator runs with comments off, UTF-8 validation on and no
 * trailing garbage. yajl's UTF-8 check only counts continuation bytes, so every
 * decoded string and key is checked again here against RFC 3629, with a check of
 * its own (utf8_bad(), written apart from the library's on purpose: it judges the
 * library's escaper). TT_CHECK_ESCAPES is enforced by the splitter, which sees the
 * raw bytes and keeps its string and escape state across block borders.
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
#include <yajl/yajl_tree.h>

#include "common/jsontext.h"

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

/* U+10FFFF, standing in for a NUL byte while yajl_tree holds the event. */
#define NUL_MARK     "\xf4\x8f\xbf\xbf"
#define NUL_MARK_ESC "\\udbff\\udfff"

struct buf {
	char *p;
	size_t len, cap;
};

struct reader {
	const char *path;
	int flags;
	int fd;
	tt_visit_fn fn;
	void *fn_ctx;
	struct tt_trace *out; /* info of tt_foreach, or the target of tt_load */
	int keep;	      /* tt_load: move events into out->ev */
	size_t ev_cap;
	int stopped; /* the visitor asked to stop */
	int failed;  /* out->error is set */
	size_t count;

	/* The validator and how far it has been fed (a file offset). */
	yajl_handle h;
	uint64_t fed;

	/* The splitter: the block, the lines before the scan point, the nesting. */
	const unsigned char *blk;
	uint64_t blk_abs;
	size_t lines;
	uint64_t line_start;
	int depth;
	int top_open, top_closed;
	int top_scalar; /* the top level is not an array: enum val + 1 */
	int in_str, bs, hex_left;
	unsigned hex_val;
	uint64_t bs_at; /* file offset of the last backslash */

	/* The event being cut out: its text so far, where it starts, its NUL escapes. */
	struct buf text;
	uint64_t ev_abs;
	size_t ev_line;
	size_t ev_from; /* offset in blk where the event's bytes start */
	int ev_nul;
	struct tt_event ev;
	size_t args_cap;
	struct buf raw;
};

static int fail_abs(struct reader *r, uint64_t abs, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ------------------------------------------------------------------ positions */

/* Line and column (1-based, bytes) of file offset abs, counted from the start. */
static void where(struct reader *r, uint64_t abs, size_t *line, size_t *col)
{
	unsigned char buf[TAIL_BYTES];
	uint64_t off = 0, start = 0;
	size_t lines = 0;

	if (abs >= r->line_start) {
		*line = r->lines + 1;
		*col = (size_t)(abs - r->line_start) + 1;
		return;
	}
	while (off < abs) {
		size_t want = abs - off < sizeof(buf) ? (size_t)(abs - off) : sizeof(buf);
		ssize_t n = pread(r->fd, buf, want, (off_t)off);

		if (n <= 0)
			break;
		for (ssize_t k = 0; k < n; k++) {
			if (buf[k] == '\n') {
				lines++;
				start = off + (uint64_t)k + 1;
			}
		}
		off += (uint64_t)n;
	}
	*line = lines + 1;
	*col = (size_t)(abs - start) + 1;
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

/* Record an error at file offset abs; returns 0, for "return fail_abs(...)". */
static int fail_abs(struct reader *r, uint64_t abs, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(r, abs, fmt, ap);
	va_end(ap);
	return 0;
}

/* An error inside the event being typed: at its '{'. */
#define fail_ev(r, ...) fail_abs(r, (r)->ev_abs, __VA_ARGS__)

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
	return fail_ev(r, "out of memory");
}

/* ---------------------------------------------------------------- text helpers */

/* Room for n more bytes. 0 or -1. */
static int buf_reserve(struct buf *b, size_t n)
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
	return 0;
}

static int buf_put(struct buf *b, const void *p, size_t n)
{
	if (buf_reserve(b, n))
		return -1;
	if (n > 0)
		memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
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
	int up = 0;
	if (i < len && t[i] == '.') {
		for (i++; i < len && is_digit(t[i]) && dec < 3; i++) {
			frac = frac * 10 + (unsigned)(t[i] - '0');
			dec++;
		}
		if (dec == 0)
			return -1;
		/* More: a double's shortest text of a whole ns (the JSON writer's exact
		 * dur), ns.000xxx or ns.999xxx; anything else is finer than 1 ns. */
		size_t more = i;
		while (i < len && is_digit(t[i]))
			i++;
		if (i > more) {
			int zeros = i - more >= 3 && memcmp(t + more, "000", 3) == 0;
			int nines = i - more >= 3 && memcmp(t + more, "999", 3) == 0;
			if (!zeros && !nines) {
				*why = "has more than three decimals (finer than 1 ns)";
				return -1;
			}
			up = nines;
		}
	}
	if (i != len)
		return -1;
	for (; dec < 3; dec++)
		frac *= 10;
	if (v > (UINT64_MAX - frac) / 1000) {
		*why = "is too large for uint64 nanoseconds";
		return -1;
	}
	*ns = v * 1000 + frac + (uint64_t)up;
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

/* ------------------------------------------------------------ out of the tree */

static enum val val_of(yajl_val v)
{
	switch (v->type) {
	case yajl_t_string:
		return V_STRING;
	case yajl_t_number:
		return V_NUMBER;
	case yajl_t_object:
		return V_OBJECT;
	case yajl_t_array:
		return V_ARRAY;
	case yajl_t_true:
	case yajl_t_false:
		return V_BOOL;
	default:
		return V_NULL;
	}
}

/*
 * A string or key of the tree as the file has it: a copy, NUL-terminated, with the
 * NUL marks turned back into NUL bytes, *len its length; checked against RFC 3629.
 * NULL when out of memory or invalid (reported).
 */
static char *tree_str(struct reader *r, const char *s, size_t *len, const char *what)
{
	size_t n = strlen(s), bad;
	char *p = malloc(n + 1), *o = p;

	if (p == NULL) {
		oom(r);
		return NULL;
	}
	for (size_t i = 0; i < n;) {
		if (r->ev_nul && n - i >= 4 && memcmp(s + i, NUL_MARK, 4) == 0) {
			*o++ = '\0';
			i += 4;
		} else {
			*o++ = s[i++];
		}
	}
	*o = '\0';
	*len = (size_t)(o - p);
	bad = utf8_bad((const unsigned char *)p, *len);
	if (bad == *len)
		return p;
	fail_ev(r,
		"%s is not valid UTF-8: byte 0x%02x at byte %zu of %zu (overlong, "
		"surrogate, above U+10FFFF or cut sequence; a lone \\udc00..\\udfff "
		"escape decodes to one)",
		what, (unsigned char)p[bad], bad, *len);
	free(p);
	return NULL;
}

/* Check a string or key of the tree that is not kept: in place when it has no NUL
 * marks to turn back. 1, or 0 (reported). */
static int tree_check(struct reader *r, const char *s, const char *what)
{
	size_t len = strlen(s), bad;
	char *p;

	if (r->ev_nul) {
		p = tree_str(r, s, &len, what);
		free(p);
		return p != NULL;
	}
	bad = utf8_bad((const unsigned char *)s, len);
	if (bad == len)
		return 1;
	return fail_ev(r,
		       "%s is not valid UTF-8: byte 0x%02x at byte %zu of %zu (overlong, "
		       "surrogate, above U+10FFFF or cut sequence; a lone \\udc00..\\udfff "
		       "escape decodes to one)",
		       what, (unsigned char)s[bad], bad, len);
}

/* A JSON string, quoted, escaped as the writer escapes (trace_read.h, tt_arg.raw):
 * the library's escaper, on a string already checked to be valid UTF-8. */
static int buf_string(struct buf *b, const char *s, size_t len)
{
	if (buf_reserve(b, RTR_JSONTEXT_ESCAPE_BOUND(len) + 2))
		return -1;
	b->p[b->len++] = '"';
	b->len = (size_t)(rtr__jsontext_escape(b->p + b->len, s, len) - b->p);
	b->p[b->len++] = '"';
	return 0;
}

/*
 * v re-serialized compactly into r->raw (tt_arg.raw of an object or array arg):
 * no spaces, numbers as in the file, strings escaped as the writer does. 1, or 0
 * when out of memory or a string is invalid (reported).
 */
static int serialize(struct reader *r, yajl_val v)
{
	struct buf *b = &r->raw;
	char *s;
	size_t len;
	int err;

	switch (v->type) {
	case yajl_t_object:
		if (buf_put(b, "{", 1))
			return oom(r);
		for (size_t i = 0; i < v->u.object.len; i++) {
			s = tree_str(r, v->u.object.keys[i], &len, "a key");
			if (s == NULL)
				return 0;
			err = (i > 0 && buf_put(b, ",", 1)) || buf_string(b, s, len) ||
			      buf_put(b, ":", 1);
			free(s);
			if (err)
				return oom(r);
			if (!serialize(r, v->u.object.values[i]))
				return 0;
		}
		return buf_put(b, "}", 1) ? oom(r) : 1;
	case yajl_t_array:
		if (buf_put(b, "[", 1))
			return oom(r);
		for (size_t i = 0; i < v->u.array.len; i++) {
			if (i > 0 && buf_put(b, ",", 1))
				return oom(r);
			if (!serialize(r, v->u.array.values[i]))
				return 0;
		}
		return buf_put(b, "]", 1) ? oom(r) : 1;
	case yajl_t_string:
		s = tree_str(r, v->u.string, &len, "a string");
		if (s == NULL)
			return 0;
		err = buf_string(b, s, len);
		free(s);
		return err ? oom(r) : 1;
	case yajl_t_number:
		s = v->u.number.r;
		return buf_put(b, s, strlen(s)) ? oom(r) : 1;
	case yajl_t_true:
		return buf_put(b, "true", 4) ? oom(r) : 1;
	case yajl_t_false:
		return buf_put(b, "false", 5) ? oom(r) : 1;
	default:
		return buf_put(b, "null", 4) ? oom(r) : 1;
	}
}

/* Check every string and key inside v (the value of a key that is skipped). */
static int check_strings(struct reader *r, yajl_val v)
{
	if (v->type == yajl_t_object) {
		for (size_t i = 0; i < v->u.object.len; i++) {
			if (!tree_check(r, v->u.object.keys[i], "a key") ||
			    !check_strings(r, v->u.object.values[i]))
				return 0;
		}
	} else if (v->type == yajl_t_array) {
		for (size_t i = 0; i < v->u.array.len; i++) {
			if (!check_strings(r, v->u.array.values[i]))
				return 0;
		}
	} else if (v->type == yajl_t_string) {
		return tree_check(r, v->u.string, "a string");
	}
	return 1;
}

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
}

static enum key key_of(const char *k, size_t len)
{
	for (int i = K_PH; i <= K_ARGS; i++) {
		if (strlen(key_names[i]) == len && memcmp(key_names[i], k, len) == 0)
			return (enum key)i;
	}
	return K_OTHER;
}

static int field_type(struct reader *r, enum key k, enum val v, const char *want)
{
	return fail_ev(r, "\"%s\" is %s, not %s", key_names[k], val_names[v], want);
}

/* A string field's value into *dst (and its length into *len, if asked). */
static int field_str(struct reader *r, enum key k, yajl_val v, char **dst, size_t *len)
{
	size_t n;

	if (v->type != yajl_t_string)
		return field_type(r, k, val_of(v), "a string");
	*dst = tree_str(r, v->u.string, &n, "a string");
	if (len != NULL)
		*len = n;
	return *dst != NULL;
}

static int arg_value(struct reader *r, struct tt_arg *a, yajl_val v)
{
	const char *t;
	size_t len;

	switch (v->type) {
	case yajl_t_null:
		a->type = TT_NULL;
		return 1;
	case yajl_t_true:
	case yajl_t_false:
		a->type = TT_BOOL;
		a->b = v->type == yajl_t_true;
		return 1;
	case yajl_t_string:
		a->type = TT_STRING;
		a->s = tree_str(r, v->u.string, &a->s_len, "a string");
		return a->s != NULL;
	case yajl_t_object:
	case yajl_t_array:
		a->type = TT_OTHER;
		r->raw.len = 0;
		if (!serialize(r, v) || buf_put(&r->raw, "", 1))
			return r->failed ? 0 : oom(r);
		a->raw = strdup(r->raw.p);
		return a->raw != NULL ? 1 : oom(r);
	default:
		break;
	}
	t = v->u.number.r;
	len = strlen(t);
	a->raw = strdup(t);
	if (a->raw == NULL)
		return oom(r);
	if (is_integer_text(t, len)) {
		a->type = TT_INT;
		a->fits = parse_int(t, len, &a->i, &a->u);
	} else {
		a->type = TT_DOUBLE;
	}
	a->d = strtod(a->raw, NULL);
	return 1;
}

static int field_args(struct reader *r, yajl_val v)
{
	struct tt_event *e = &r->ev;

	if (v->type != yajl_t_object)
		return field_type(r, K_ARGS, val_of(v), "an object");
	e->has_args = 1;
	for (size_t i = 0; i < v->u.object.len; i++) {
		struct tt_arg *a;
		size_t len;
		char *key = tree_str(r, v->u.object.keys[i], &len, "a key");

		if (key == NULL)
			return 0;
		for (size_t j = 0; j < e->nargs; j++) {
			if (strcmp(e->args[j].key, key) == 0) {
				free(key);
				return fail_ev(r, "duplicate key \"%s\" in args", e->args[j].key);
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
		if (!arg_value(r, a, v->u.object.values[i]))
			return 0;
	}
	return 1;
}

/* The value v of the event's known key k. */
static int field(struct reader *r, enum key k, yajl_val v)
{
	struct tt_event *e = &r->ev;
	const char *t, *why;
	size_t len;
	uint64_t u = 0;
	int64_t i = 0;
	char *ph;

	switch (k) {
	case K_PH:
		if (!field_str(r, k, v, &ph, &len))
			return 0;
		if (len < 1 || len > 3 || memchr(ph, '\0', len) != NULL) {
			free(ph);
			return fail_ev(r, "\"ph\" must be 1 to 3 bytes, is %zu", len);
		}
		memcpy(e->ph, ph, len + 1);
		free(ph);
		return 1;
	case K_NAME:
		return field_str(r, k, v, &e->name, &e->name_len);
	case K_CAT:
		return field_str(r, k, v, &e->cat, &e->cat_len);
	case K_S:
		return field_str(r, k, v, &e->scope, NULL);
	case K_BP:
		return field_str(r, k, v, &e->bp, NULL);
	case K_ID:
		if (v->type == yajl_t_string) {
			e->id_type = TT_STRING;
			return field_str(r, k, v, &e->id, NULL);
		}
		if (v->type != yajl_t_number)
			return field_type(r, k, val_of(v), "a string or a number");
		t = v->u.number.r;
		e->id_type = is_integer_text(t, strlen(t)) ? TT_INT : TT_DOUBLE;
		e->id = strdup(t);
		return e->id != NULL ? 1 : oom(r);
	case K_TS:
	case K_DUR:
		if (v->type != yajl_t_number)
			return field_type(r, k, val_of(v), "a number");
		t = v->u.number.r;
		len = strlen(t);
		if (parse_us(t, len, &u, &why))
			return fail_ev(r, "\"%s\" %s %s", key_names[k], t, why);
		if (k == K_TS) {
			e->has_ts = 1;
			e->ts_ns = u;
		} else {
			e->has_dur = 1;
			e->dur_ns = u;
		}
		return 1;
	case K_PID:
	case K_TID:
		if (v->type != yajl_t_number)
			return field_type(r, k, val_of(v), "an integer");
		t = v->u.number.r;
		len = strlen(t);
		if (!is_integer_text(t, len) || !(parse_int(t, len, &i, &u) & TT_FITS_I64))
			return fail_ev(r, "\"%s\" %s is not an integer that fits int64",
				       key_names[k], t);
		if (k == K_PID) {
			e->has_pid = 1;
			e->pid = i;
		} else {
			e->has_tid = 1;
			e->tid = i;
		}
		return 1;
	case K_ARGS:
		return field_args(r, v);
	default:
		return check_strings(r, v);
	}
}

/* The event object o, parsed from its text, into r->ev. 1, or 0 (reported). */
static int event_of(struct reader *r, yajl_val o)
{
	unsigned seen = 0;

	r->ev.line = r->ev_line;
	for (size_t i = 0; i < o->u.object.len; i++) {
		const char *key = o->u.object.keys[i];
		enum key k;

		/* a NUL mark is never part of a known key's name */
		if (!tree_check(r, key, "a key"))
			return 0;
		k = key_of(key, strlen(key));
		r->ev.nkeys++;
		if (k != K_OTHER && (seen & (1u << k)))
			return fail_ev(r, "duplicate key \"%s\" in the event", key_names[k]);
		seen |= 1u << k;
		if (!field(r, k, o->u.object.values[i]))
			return 0;
	}
	return 1;
}

/* Hand the finished r->ev over: to the visitor, or into out->ev. 1, or 0 to stop. */
static int event_done(struct reader *r)
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
		return 1;
	}
	out->n = r->count;
	if (r->fn != NULL && r->fn(&r->ev, r->fn_ctx) != 0)
		r->stopped = 1;
	event_free(&r->ev);
	event_reset(r);
	return !r->stopped;
}

/*
 * An event's text with each "\u0000" escape replaced by NUL_MARK_ESC, into r->raw,
 * NUL-terminated. 1, or 0 when the event also holds U+10FFFF (reported) or out of
 * memory.
 */
static int mark_nuls(struct reader *r, const char *t, size_t len)
{
	int in_str = 0;

	r->raw.len = 0;
	if (memmem(t, len, NUL_MARK, 4) != NULL || strcasestr(t, "\\udbff\\udfff") != NULL)
		return fail_ev(r, "an event with both \\u0000 and U+10FFFF: the test reader "
				  "cannot tell them apart");
	for (size_t i = 0; i < len; i++) {
		if (in_str && t[i] == '\\') {
			if (len - i >= 6 && memcmp(t + i, "\\u0000", 6) == 0) {
				if (buf_put(&r->raw, NUL_MARK_ESC, 12))
					return oom(r);
				i += 5;
				continue;
			}
			if (buf_put(&r->raw, t + i, 2))
				return oom(r);
			i++;
			continue;
		}
		if (t[i] == '"')
			in_str = !in_str;
		if (buf_put(&r->raw, t + i, 1))
			return oom(r);
	}
	return buf_put(&r->raw, "", 1) ? oom(r) : 1;
}

/* The event whose text is in r->text: parse, type, hand over. 1, or 0 to stop. */
static int event_text_done(struct reader *r)
{
	char err[256];
	const char *text;
	yajl_val o;
	int ok;

	if (buf_put(&r->text, "", 1))
		return oom(r);
	text = r->text.p;
	if (r->ev_nul) {
		if (!mark_nuls(r, r->text.p, r->text.len - 1))
			return 0;
		text = r->raw.p;
	}
	err[0] = '\0';
	o = yajl_tree_parse(text, err, sizeof(err));
	if (o == NULL || o->type != yajl_t_object) {
		yajl_tree_free(o);
		return fail_ev(r, "yajl_tree_parse: %s", err[0] ? err : "not an object");
	}
	event_reset(r);
	ok = event_of(r, o);
	yajl_tree_free(o);
	if (!ok) {
		event_free(&r->ev);
		event_reset(r);
		return 0;
	}
	return event_done(r);
}

/* ------------------------------------------------------------------ validator */

/* Feed the validator the block's bytes up to file offset upto. 1, or 0 (reported). */
static int feed_to(struct reader *r, uint64_t upto)
{
	const unsigned char *p = r->blk + (r->fed - r->blk_abs);
	size_t len = (size_t)(upto - r->fed);
	uint64_t at = r->fed;
	unsigned char *msg;
	size_t n;

	if (len == 0)
		return 1;
	r->fed = upto;
	if (yajl_parse(r->h, p, len) == yajl_status_ok)
		return 1;
	msg = yajl_get_error(r->h, 0, NULL, 0);
	n = msg != NULL ? strlen((char *)msg) : 0;
	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' ' || msg[n - 1] == '.'))
		n--;
	fail_abs(r, at + yajl_get_bytes_consumed(r->h), "%.*s", (int)n,
		 msg != NULL ? (char *)msg : "parse error");
	if (msg != NULL)
		yajl_free_error(r->h, msg);
	return 0;
}

/* ------------------------------------------------------------------- splitter */

/* What a value starting with byte c is; -1 when c starts none (yajl says why). */
static int val_at(unsigned c)
{
	if (c == '"')
		return V_STRING;
	if (c == '-' || (c >= '0' && c <= '9'))
		return V_NUMBER;
	if (c == 't' || c == 'f')
		return V_BOOL;
	if (c == 'n')
		return V_NULL;
	return -1;
}

/* Can byte c continue a number or a literal (true, false, null)? */
static int is_token_byte(unsigned c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '.' || c == '+' ||
	       c == '-' || c == 'E';
}

/* TT_CHECK_ESCAPES: the violation that ends at file offset abs (exclusive). */
static int escape_violation(struct reader *r, uint64_t abs, uint64_t at, unsigned v)
{
	if (!feed_to(r, abs))
		return 0;
	if (v == 0x7f)
		return fail_abs(r, at,
				"raw 0x7F byte in a string (docs/format.md: escape it as \\u007f)");
	return fail_abs(r, at,
			"\\u%04x escape in a string (docs/format.md: non-ASCII is written as raw "
			"UTF-8, never as a \\u escape; a surrogate pair makes Perfetto reject "
			"the file)",
			v);
}

/* A byte inside a string. 1, or 0 on a TT_CHECK_ESCAPES violation (reported). */
static int string_byte(struct reader *r, unsigned c, uint64_t abs)
{
	if (r->hex_left > 0) {
		int h = rtr__jsontext_hex_value(c);

		if (h < 0) {
			r->hex_left = 0; /* a malformed escape: the validator reports it */
			return 1;
		}
		r->hex_val = r->hex_val * 16 + (unsigned)h;
		if (--r->hex_left > 0)
			return 1;
		if (r->hex_val == 0 && r->depth >= 2)
			r->ev_nul = 1;
		if ((r->flags & TT_CHECK_ESCAPES) && r->hex_val >= 0x80)
			return escape_violation(r, abs, r->bs_at, r->hex_val);
		return 1;
	}
	if (r->bs) {
		r->bs = 0;
		if (c == 'u') {
			r->hex_left = 4;
			r->hex_val = 0;
		}
		return 1;
	}
	if (c == '\\') {
		r->bs = 1;
		r->bs_at = abs;
	} else if (c == '"') {
		r->in_str = 0;
	} else if (c == 0x7f && (r->flags & TT_CHECK_ESCAPES)) {
		return escape_violation(r, abs, abs, 0x7f);
	}
	return 1;
}

/*
 * A value starting with byte c at abs where the top level (depth 0) or an element of
 * the top-level array (depth 1) begins. 1, or 0 when it is not what the format
 * allows (reported).
 */
static int value_start(struct reader *r, unsigned c, uint64_t abs)
{
	int v = val_at(c);

	if (r->depth == 0) {
		if (c == '[') {
			r->top_open = 1;
			r->depth = 1;
			return 1;
		}
		if (c == '{') {
			if (!feed_to(r, abs + 1))
				return 0;
			return fail_abs(r, abs + 1,
					"the top level is an object, not an array: only the "
					"bare-array form is read, not {\"traceEvents\":[...]}");
		}
		/* judged once the validator has seen the whole value */
		r->top_scalar = v >= 0 ? v + 1 : -1;
		return 1;
	}
	if (c == '{') {
		r->depth = 2;
		r->ev_abs = abs;
		r->ev_line = r->lines + 1;
		r->ev_from = (size_t)(abs - r->blk_abs);
		r->ev_nul = 0;
		r->text.len = 0;
		return 1;
	}
	if (!feed_to(r, abs + 1))
		return 0;
	if (c == '[')
		return fail_abs(r, abs + 1,
				"an element of the top-level array is an array, not an event "
				"object");
	if (v >= 0)
		return fail_abs(r, abs + 1,
				"an element of the top-level array is %s, not an event object",
				val_names[v]);
	return fail_abs(r, abs + 1, "unexpected byte 0x%02x", c); /* yajl should have */
}

/*
 * Split the block p[0 .. len) at file offset abs0, feeding the validator as it
 * goes. 0: go on, 1: stopped by the visitor, -1: error (reported).
 */
static int split(struct reader *r, const unsigned char *p, size_t len, uint64_t abs0)
{
	r->blk = p;
	r->blk_abs = abs0;
	r->fed = abs0;
	r->ev_from = 0;
	for (size_t k = 0; k < len; k++) {
		unsigned c = p[k];
		uint64_t abs = abs0 + k;

		if (c == '\n') {
			r->lines++;
			r->line_start = abs + 1;
		}
		if (r->in_str) {
			if (!string_byte(r, c, abs))
				return -1;
			continue;
		}
		if (r->top_scalar > 0 && (r->top_scalar - 1 == V_STRING || !is_token_byte(c))) {
			/* the top-level scalar has ended: judged once the validator has it */
			if (feed_to(r, abs))
				fail_abs(r, abs, "the top level is %s, not an array",
					 val_names[r->top_scalar - 1]);
			return -1;
		}
		if (r->top_scalar || r->top_closed || c == ' ' || c == '\t' || c == '\r' ||
		    c == '\n' || c == ',' || c == ':')
			continue; /* the validator judges what is left */
		if (c == '"')
			r->in_str = 1;
		if (r->depth >= 2) {
			if (c == '{' || c == '[') {
				r->depth++;
			} else if (c == '}' || c == ']') {
				if (--r->depth > 1)
					continue;
				/* the event's closing '}' */
				if (!feed_to(r, abs + 1) ||
				    buf_put(&r->text, p + r->ev_from, k + 1 - r->ev_from))
					return r->failed ? -1
							 : (fail_abs(r, abs, "out of memory"), -1);
				if (!event_text_done(r))
					return r->stopped ? 1 : -1;
			}
			continue;
		}
		if (r->depth == 1 && c == ']') {
			r->depth = 0;
			r->top_closed = 1;
			continue;
		}
		if (!value_start(r, c, abs))
			return -1;
	}
	if (r->depth >= 2 && buf_put(&r->text, p + r->ev_from, len - r->ev_from))
		return fail_abs(r, abs0 + len, "out of memory"), -1;
	return feed_to(r, abs0 + len) ? 0 : -1;
}

/* ------------------------------------------------------------------- driving */

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

/* Parse the file. 0: read to the end, 1: stopped, -1: error. */
static int run(struct reader *r)
{
	static const unsigned char close_text[] = "]";
	unsigned char *buf = NULL;
	uint64_t size, limit, done = 0;
	struct stat st;
	int closing = 0, rc = -1;

	r->fd = open(r->path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		fail_file(r, "cannot open", errno);
		return -1;
	}
	if (fstat(r->fd, &st) != 0) {
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
	if ((r->flags & TT_REPAIR) && plan_repair(r, r->fd, size, buf, &limit, &closing))
		goto out;
	r->h = yajl_alloc(NULL, NULL, NULL);
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
		ssize_t n = pread_full(r->fd, buf, want, done);

		if (n < 0) {
			fail_file(r, "read", errno);
			goto out;
		}
		if ((size_t)n < want) {
			fail_file(r, "file shrank while being read", 0);
			goto out;
		}
		rc = split(r, buf, want, done);
		if (rc != 0)
			goto out;
		done += want;
	}
	if (closing) {
		rc = split(r, close_text, 1, limit);
		if (rc != 0)
			goto out;
	}
	rc = -1;
	if (yajl_complete_parse(r->h) != yajl_status_ok) {
		uint64_t eof = closing ? limit + 1 : limit;

		if (r->top_open && !r->top_closed)
			fail_abs(r, eof,
				 "file is cut: it ends inside the top-level array, without the "
				 "closing ']' (%zu whole events before the cut; TT_REPAIR reads a "
				 "cut file)",
				 r->count);
		else if (!r->top_open && r->top_scalar == 0)
			fail_abs(r, eof, "no JSON value: the file is empty or blank");
		else
			fail_abs(r, eof, "premature end of file");
		goto out;
	}
	if (r->top_scalar > 0) {
		fail_abs(r, limit, "the top level is %s, not an array",
			 val_names[r->top_scalar - 1]);
		goto out;
	}
	r->out->complete = !closing;
	rc = 0;
out:
	if (r->h != NULL)
		yajl_free(r->h);
	free(buf);
	close(r->fd);
	return rc;
}

static void reader_free(struct reader *r)
{
	event_free(&r->ev);
	free(r->ev.args);
	free(r->text.p);
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
