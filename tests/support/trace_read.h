/* SPDX-License-Identifier: MIT */
/*
 * Streaming reader of the traces ringtrace writes, for the tests.
 *
 * The input is the bare-array form of docs/format.md "The JSON the library writes":
 * "[\n", then one event object per line, each ending ",\n"; a clean file ends with a
 * last event without a comma, then "]\n". The reader is an oracle apart from the
 * tools' reader (tools/source/, yajl's callback parser): the whole file goes through
 * yajl_parse() without callbacks, as one strict JSON text, in 64 KiB blocks, and each
 * event is cut out and parsed on its own with yajl's tree API (yajl_tree_parse()).
 * Only the event being read is in memory, so a 200 MB trace costs a few hundred KiB
 * in tt_foreach(). tt_load() keeps every event, for the small traces of unit tests.
 *
 * Strict by default: the whole file must be one JSON array of objects (the object
 * form {"traceEvents":[...]} is refused), comments and trailing garbage are errors,
 * and every string and key must be valid UTF-8 (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF; stricter than yajl's own check, which it also
 * runs). A file without its closing ']' is an error that says it was cut, unless
 * TT_REPAIR is given.
 *
 * Known fields are typed as they are read, and a wrong type is an error that names
 * the field: ph (a string of 1 to 3 bytes), name, cat, s, bp (strings), id (string
 * or number, kept as text), ts and dur (exact microseconds, see tt_parse_us()),
 * pid and tid (integers that fit int64), args (an object). Any other top-level key
 * is counted in nkeys and otherwise skipped. A known key seen twice in one event, or
 * an args key seen twice, is an error.
 *
 * Errors are "path:line:col: message" in tt_trace.error, line and column 1-based,
 * the column in bytes: a syntax error at or just past the offending token (yajl's
 * errors point past it), an error inside an event (a type, a duplicate key, invalid
 * UTF-8) at the event's '{', a cut file at the end. Errors without a place (open, read, a file that
 * cannot be repaired) are "path: message".
 *
 * Thread safety: no global state; calls on distinct tt_trace structs may run at the
 * same time. Nothing here is async-signal-safe.
 */
#ifndef RTR_TESTS_TRACE_READ_H
#define RTR_TESTS_TRACE_READ_H

#include <stddef.h>
#include <stdint.h>

enum tt_type {
	TT_NULL,
	TT_BOOL,
	TT_INT,
	TT_DOUBLE,
	TT_STRING,
	TT_OTHER /* array or object */
};

/* tt_arg.fits: which C types hold a TT_INT exactly. */
#define TT_FITS_I64 1u
#define TT_FITS_U64 2u

/*
 * One top-level key of an event's "args". All strings are NUL-terminated and owned
 * by the event.
 */
struct tt_arg {
	char *key;
	enum tt_type type;
	int b;	   /* TT_BOOL */
	int64_t i; /* TT_INT, when fits & TT_FITS_I64 */
	double d;  /* TT_INT and TT_DOUBLE, by strtod() of raw (C locale assumed) */
	char *s;   /* TT_STRING, decoded; may hold NUL bytes (\u0000), see s_len */
	/*
	 * TT_INT/TT_DOUBLE: the number's text exactly as in the file, so integers
	 * beyond 2^53 and exact decimals survive. TT_OTHER: the value re-serialized
	 * compactly (no spaces; numbers as in the file; strings escaped as the writer
	 * does: \" \\ \b \f \n \r \t, other bytes below 0x20 and 0x7F as \u00xx,
	 * non-ASCII raw). NULL for the other types.
	 */
	char *raw;
	/* Beyond the base API: */
	size_t s_len;  /* bytes in s, without the terminating NUL */
	uint64_t u;    /* TT_INT, when fits & TT_FITS_U64 (18446744073709551615 fits) */
	unsigned fits; /* TT_INT: TT_FITS_I64 | TT_FITS_U64, or 0 when neither holds it */
};

struct tt_event {
	char ph[4]; /* "" when the event has no "ph" */
	char *name; /* NULL when absent, as for cat, scope, id and bp */
	char *cat;
	char *scope; /* "s" */
	char *id;    /* id as text, if any: a string decoded, a number as in the file */
	char *bp;
	int has_ts;
	uint64_t ts_ns; /* ts parsed exactly from its decimal text, see tt_parse_us() */
	int has_dur;
	uint64_t dur_ns;
	int has_pid, has_tid;
	int64_t pid, tid;
	size_t nargs;
	struct tt_arg *args; /* top-level keys of "args" in file order */
	size_t line;	     /* 1-based line of the file where the event's '{' is */
	size_t nkeys;	     /* number of top-level keys of the event object */
	/* Beyond the base API: */
	int has_args;	      /* "args" was present (it may be {}) */
	enum tt_type id_type; /* TT_STRING or TT_INT/TT_DOUBLE when id != NULL */
	size_t name_len;      /* bytes in name (it may hold \u0000), 0 when absent */
	size_t cat_len;
};

struct tt_trace {
	size_t n;	     /* events read (tt_foreach: visited) */
	struct tt_event *ev; /* tt_load() only; NULL from tt_foreach() */
	int complete;	     /* the file was strict JSON ending with ']' */
	int repaired;	     /* TT_REPAIR cut the file and closed the array */
	char error[512];     /* "" or "path:line:col: message" */
};

/*
 * Flags.
 *
 * TT_REPAIR: read a file cut short the way the check tool repairs it: drop a partial
 * last line (the text after the last '\n'), drop a trailing "," (whitespace and a
 * ",\n" alike) and close the array with "]". The cut point is found from the tail of
 * the file before parsing, so memory stays bounded. A complete file is read
 * unchanged (repaired = 0). A last line without '\n' counts as complete only when it
 * is "]", or when it ends in ']' and "[" + line is itself valid JSON (say "{...}]").
 * A file cut inside its first line cannot be repaired.
 *
 * TT_CHECK_ESCAPES: also enforce docs/format.md "Strings" on the raw text: a \u escape
 * only for code points below U+0080 (so never a surrogate pair, never escaped
 * non-ASCII), and no raw 0x7F byte inside a string.
 */
#define TT_REPAIR	 1
#define TT_CHECK_ESCAPES 2

/* Called once per event in file order; return nonzero to stop the walk. */
typedef int (*tt_visit_fn)(const struct tt_event *ev, void *ctx);

/*
 * Reads the trace at path and calls fn for each event. The event and all it points
 * to are valid only during the call. info (may be NULL) gets complete, repaired,
 * error and n = events visited; its ev stays NULL.
 *
 * Returns 0 when the whole file was read, 1 when fn stopped the walk (complete is
 * then 0, the rest of the file unread), -1 on an open/read/parse error, a cut file
 * without TT_REPAIR, or out of memory (info->error says which; events before the
 * error were visited).
 */
int tt_foreach(const char *path, int flags, tt_visit_fn fn, void *ctx, struct tt_trace *info);

/*
 * Reads every event of the trace at path into out->ev[0 .. out->n). Returns 0, or -1
 * with out->error set; on error out->ev still holds the events read before it. Call
 * tt_free(out) after either.
 */
int tt_load(const char *path, int flags, struct tt_trace *out);

/* Frees what tt_load() put in t and zeroes it. t may be zeroed or already freed. */
void tt_free(struct tt_trace *t);

/* The arg named key in e (first match), or NULL if absent. */
const struct tt_arg *tt_arg(const struct tt_event *e, const char *key);

/*
 * Microseconds in JSON decimal text to exact nanoseconds: "1234.567" -> 1234567,
 * "1.5" -> 1500, "0" -> 0, "0.001" -> 1, "2.4139999999970314" -> 2414 (the shortest
 * text of a double within a millionth of a ns of a whole one, as an X's dur may be
 * written). len bytes at text (no NUL needed). Returns 0, or -1 for a negative
 * number, an exponent form, decimals finer than 1 ns,
 * anything that is not a JSON number, or a value above UINT64_MAX ns. For args that
 * carry times: tt_parse_us(a->raw, strlen(a->raw), &ns).
 */
int tt_parse_us(const char *text, size_t len, uint64_t *ns);

#endif /* RTR_TESTS_TRACE_READ_H */
