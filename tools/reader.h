/* SPDX-License-Identifier: MIT */
/*
 * Streaming reader of trace files: the one way the ringtrace tools read a trace.
 *
 * It reads Chrome Trace Event Format JSON event by event, whatever the file's size,
 * with memory bounded by the largest single event (TRACE_MAX_EVENT_BYTES) and never
 * by the file:
 *
 * - the bare-array form "[{...},{...}]" (what the recorder writes, one event per
 *   line) and the object form {"traceEvents":[...], "otherData":{...}, ...} (the
 *   events of "traceEvents"; the other top-level keys are skipped, or handed to
 *   on_top_level);
 * - plain text or gzip (found by its magic bytes, not the name), including the
 *   recorder's files of many concatenated members, one per written chunk;
 * - complete files and files cut short by a kill: every whole event is returned, a
 *   partial event at the cut is dropped and counted (a partial last line, or the
 *   part of a cut gzip member after its last whole event); the status says how the
 *   input ended;
 * - a path, or "-" for standard input (nothing needs to seek).
 *
 * Strictness. The input must be strict JSON (RFC 8259, through yajl's parser):
 * the first syntax error ends the read with "FILE:LINE:COL: message" and every
 * event before it has been returned. Raw NUL bytes (a hole a crash left in a file)
 * are read as blanks and reported as an issue. A byte-order mark is skipped, and a
 * trailing comma before the final ']' accepted, both reported as issues. Strings
 * are returned as valid UTF-8: invalid sequences become U+FFFD.
 *
 * Issues are things a reader can get past but a checker wants to hear about; they
 * go to the issue callback, in file order with the events. TRACE_READ_CHECK_STRINGS
 * adds the byte-level string rules of FORMAT.md "Strings": raw control bytes (read
 * as blanks so that the parse goes on), invalid UTF-8, and \u escapes of non-ASCII
 * (surrogates above all). Without it a raw control byte is a syntax error.
 *
 * Lines and columns are 1-based; columns count bytes; both are of the text (after
 * gzip), as an editor would show the decompressed file.
 *
 * Thread safety: a reader is used by one thread at a time; distinct readers are
 * independent (no global state).
 */
#ifndef RTR_TOOLS_READER_H
#define RTR_TOOLS_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct progress;

/* The largest event read by default, in text bytes (trace_reader_options.max_event_bytes):
 * a larger one is skipped and reported (TRACE_ISSUE_EVENT_TOO_LARGE). */
#define TRACE_MAX_EVENT_BYTES ((uint64_t)16 << 20)

/* The deepest nesting of arrays and objects read. */
#define TRACE_MAX_DEPTH 512

enum trace_type {
	TRACE_ABSENT, /* the key is not in the event */
	TRACE_NULL,
	TRACE_BOOL,
	TRACE_NUMBER,
	TRACE_STRING,
	TRACE_OBJECT,
	TRACE_ARRAY
};

/*
 * A value of the event. text is NUL-terminated and owned by the event:
 *   TRACE_STRING   the decoded string, valid UTF-8 (it may hold NUL: use len)
 *   TRACE_NUMBER   the number exactly as written ("1234.567", "1e3")
 *   TRACE_NULL, TRACE_BOOL   "null", "true", "false"
 *   TRACE_OBJECT, TRACE_ARRAY   the value as compact JSON (see trace_event.json)
 *   TRACE_ABSENT   NULL, len 0
 */
struct trace_value {
	enum trace_type type;
	const char *text;
	size_t len;
};

/* One top-level key of an event's "args", in file order. */
struct trace_arg {
	const char *key; /* decoded, NUL-terminated */
	size_t key_len;
	struct trace_value value;
};

/* The known top-level keys of an event, as bits of trace_event.duplicates. */
enum trace_field {
	TRACE_F_PH,
	TRACE_F_NAME,
	TRACE_F_CAT,
	TRACE_F_TS,
	TRACE_F_DUR,
	TRACE_F_PID,
	TRACE_F_TID,
	TRACE_F_ID,
	TRACE_F_S,
	TRACE_F_BP,
	TRACE_F_ARGS,
	TRACE_F_COUNT
};

/*
 * One event, valid until the next trace_reader_next() or trace_reader_close(). The
 * known keys are typed as found in the file (a "pid":"12" is a TRACE_STRING pid);
 * a known key seen twice keeps its last value and sets its bit in duplicates.
 */
struct trace_event {
	struct trace_value ph, name, cat, ts, dur, pid, tid, id, s, bp, args;
	char phase; /* ph when it is a one-byte string, else '\0' */

	/* Numbers decoded from ts, dur, pid, tid when they are JSON numbers: */
	bool has_ts, ts_exact; /* ts_exact: at most three decimals, no exponent */
	int64_t ts_ns;	       /* json_parse_us(): exact, or llround(us * 1000) */
	bool has_dur, dur_exact;
	int64_t dur_ns;
	bool has_pid, has_tid; /* pid, tid are integers that fit int64: */
	int64_t pid_num, tid_num;

	const struct trace_arg *arg; /* the top-level keys of args, when an object */
	size_t nargs;

	/*
	 * The whole event as compact JSON: keys in file order, no blanks, numbers as
	 * written, strings escaped as json_put_string() does. What a tool writes to
	 * copy the event through.
	 */
	const char *json;
	size_t json_len;

	uint64_t line, col; /* where its '{' is */
	uint64_t offset;    /* text offset of its '{' */
	uint64_t index;	    /* 0 for the first event of the file */
	unsigned duplicates;
};

enum trace_issue_kind {
	TRACE_ISSUE_BOM,	     /* a UTF-8 byte-order mark at the start (skipped) */
	TRACE_ISSUE_ZERO_BYTES,	     /* a run of NUL bytes (read as blanks) */
	TRACE_ISSUE_TRAILING_COMMA,  /* ",]" closing the event array */
	TRACE_ISSUE_NOT_AN_EVENT,    /* an element of the event array is not an object */
	TRACE_ISSUE_NO_EVENTS_KEY,   /* an object without "traceEvents" */
	TRACE_ISSUE_GZIP_TRAILING,   /* bytes after the last gzip member (ignored) */
	TRACE_ISSUE_CONTROL_BYTE,    /* a raw 0x00-0x1F or 0x7F byte in a string */
	TRACE_ISSUE_INVALID_UTF8,    /* bytes in a string that are not UTF-8 */
	TRACE_ISSUE_SURROGATE,	     /* a \uD800-\uDFFF escape */
	TRACE_ISSUE_UNICODE_ESCAPE,  /* a \u escape of other non-ASCII */
	TRACE_ISSUE_DUPLICATE_KEY,   /* a known key twice in one event */
	TRACE_ISSUE_EVENT_TOO_LARGE, /* an event over max_event_bytes (skipped, not parsed) */
	TRACE_ISSUE_COUNT
};

struct trace_issue {
	enum trace_issue_kind kind;
	uint64_t line, col;
	const char *message; /* one line, no file name or position */
};

/* Called for each issue, in file order with the events. */
typedef void (*trace_issue_fn)(void *ctx, const struct trace_issue *issue);

/*
 * Called for each top-level key of the object form other than "traceEvents", once
 * its value has been read: the value as compact JSON (like trace_event.json), or
 * json NULL when it is over max_event_bytes (len is then its size, not kept).
 */
typedef void (*trace_top_level_fn)(void *ctx, const char *key, size_t key_len, const char *json,
				   size_t len);

/* trace_reader_options.flags */
#define TRACE_READ_CHECK_STRINGS 1u
/* Small buffers (a quarter of the input and text blocks, an eighth of the events
 * queued): for a tool that holds many readers at once, at some cost in speed. */
#define TRACE_READ_SMALL 2u
/* Every event through the full parser (yajl), none through the fast path: for tests
 * that compare the two. */
#define TRACE_READ_NO_FAST 4u

struct trace_reader_options {
	unsigned flags;
	trace_issue_fn on_issue; /* may be NULL: issues are then only counted */
	void *ctx;
	struct progress *progress;	 /* may be NULL; told the input bytes read */
	uint64_t max_event_bytes;	 /* 0: TRACE_MAX_EVENT_BYTES */
	trace_top_level_fn on_top_level; /* may be NULL: the other keys are skipped */
	void *top_level_ctx;
};

enum trace_form { TRACE_FORM_NONE, TRACE_FORM_ARRAY, TRACE_FORM_OBJECT };

enum trace_error {
	TRACE_OK,
	TRACE_ERR_IO,	  /* open or read failed */
	TRACE_ERR_SYNTAX, /* not JSON, or not a trace (the input is at fault) */
	TRACE_ERR_GZIP,	  /* corrupt gzip data */
	TRACE_ERR_LIMIT,  /* a value outside the events over max_event_bytes, or nesting
			     over TRACE_MAX_DEPTH */
	TRACE_ERR_NOMEM
};

/* How the input looked and ended; final once trace_reader_next() returned 0 or -1. */
struct trace_reader_status {
	enum trace_form form;
	bool complete;		 /* the JSON value closed, and only blanks followed */
	bool cut;		 /* the input ended inside the JSON value */
	bool cut_in_event;	 /* ... inside an event, which was dropped */
	uint64_t cut_bytes;	 /* text bytes of that partial event */
	bool events_closed;	 /* the event array's ']' was read */
	bool gzip;		 /* the input was gzip */
	bool gzip_cut;		 /* the last gzip member was cut short */
	uint64_t gzip_members;	 /* members begun */
	uint64_t events;	 /* events returned */
	uint64_t events_skipped; /* events over max_event_bytes, skipped */
	uint64_t issues;	 /* issues reported */
	uint64_t input_bytes;	 /* bytes read from the file */
	uint64_t text_bytes;	 /* text bytes read (after gzip) */
	uint64_t input_size;	 /* of a regular file, else 0 */
	unsigned char head[128]; /* the first text bytes, for sniffing rules */
	size_t head_len;
	/* Final: the input is JSON but not a trace (an object without "traceEvents", or
	 * an array of values none of which is an event object), and why; NULL if not. */
	const char *not_a_trace;
	enum trace_error error; /* TRACE_OK unless next() returned -1 */
	char message[512];	/* the error: "FILE:LINE:COL: what" or "FILE: what" */
	const char *what;	/* the "what" part of message */
	uint64_t line, col;	/* where, or 0 when the error has no place */
};

struct trace_reader;

/*
 * Open path ("-": standard input) for reading. options may be NULL. Returns 0 and
 * the reader in *out, or -errno (open failed, or -ENOMEM); nothing is read yet.
 */
int trace_reader_open(const char *path, const struct trace_reader_options *options,
		      struct trace_reader **out);

/*
 * The next event. Returns 1 with *ev set; 0 at the end of the events (whole or cut:
 * see the status); -1 on an error (status error and message say which; every event
 * before it has been returned). After 0 or -1 it keeps returning the same.
 */
int trace_reader_next(struct trace_reader *r, const struct trace_event **ev);

const struct trace_reader_status *trace_reader_status(const struct trace_reader *r);

/* The path as given, or "<stdin>" for "-": what messages call the file. */
const char *trace_reader_name(const struct trace_reader *r);

/* What messages call the file from now on (a copy): a tool that reads a file through
 * a converted copy names the original. 0 or -ENOMEM. */
int trace_reader_set_name(struct trace_reader *r, const char *name);

/* Closes the file and frees the reader. r may be NULL. */
void trace_reader_close(struct trace_reader *r);

/* The top-level arg named key (NUL-terminated), or NULL. */
const struct trace_value *trace_event_arg(const struct trace_event *ev, const char *key);

/* Is v the string s (NUL-terminated)? */
bool trace_value_is(const struct trace_value *v, const char *s);

/*
 * The thread of an event as the viewers place it: pid when it is an integer, else 0;
 * tid when it is an integer, else the pid (Perfetto's rule for a missing tid).
 */
void trace_event_thread(const struct trace_event *ev, int64_t *pid, int64_t *tid);

#endif /* RTR_TOOLS_READER_H */
