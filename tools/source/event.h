/* SPDX-License-Identifier: MIT */
/*
 * The tools' event model: one event read from any input, whatever its format.
 *
 * An event is what the Chrome Trace Event Format calls one: the known keys typed as
 * found ("ph", "name", "cat", "ts", "dur", "pid", "tid", "id", "s", "bp", "args"),
 * the numbers the tools compute with decoded from them, the top-level args, and the
 * whole event as compact JSON (what a tool writes to copy it through). An event of a
 * JSON file is its text, parsed; an event of a Perfetto trace (.pftrace) is the JSON
 * event the recorder would have written for it (source/pf_json.c), parsed the same
 * way, so that the tools see one model and never the format.
 *
 * Where an event or an issue is: a JSON input's line and column (1-based; columns
 * count bytes of the text after gzip), or a .pftrace's packet (its index, 0 for the
 * first, and the byte offset of its tag in the stream after gzip).
 * trace_place_format() writes either the way messages give it: "FILE:LINE:COL" or
 * "FILE: packet N at byte O".
 *
 * Thread safety: plain data, and functions that touch only what they are given.
 */
#ifndef RTR_TOOLS_SOURCE_EVENT_H
#define RTR_TOOLS_SOURCE_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* The key of each known field: "ph", "name", ... */
extern const char *const trace_field_names[TRACE_F_COUNT];

/*
 * One event, valid until the next trace_next() or trace_close() (trace.h). The
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

	/*
	 * Where it is. JSON: line and col of its '{', offset the text offset of it. A
	 * .pftrace (in_packet): packet is the index of the packet it came from (a slice
	 * written as one X: its BEGIN's) and offset that packet's byte offset in the
	 * stream, what messages give; line and col are those of the event in the JSON
	 * `ringtrace convert` writes of the file (one event per line from line 2),
	 * numbering the events as a JSON file's lines do.
	 */
	uint64_t line, col;
	uint64_t offset;
	bool in_packet;
	uint64_t packet;
	uint64_t index; /* 0 for the first event of the file */
	unsigned duplicates;
};

/* Why reading stopped (struct trace_status, trace.h), from the bytes up (input.h). */
enum trace_error {
	TRACE_OK,
	TRACE_ERR_IO,	  /* open or read failed */
	TRACE_ERR_SYNTAX, /* not JSON, or not a trace (the input is at fault) */
	TRACE_ERR_GZIP,	  /* corrupt gzip data */
	TRACE_ERR_LIMIT,  /* a value outside the events over max_event_bytes, or nesting
			     over TRACE_MAX_DEPTH */
	TRACE_ERR_NOMEM
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

/* Something a reader gets past but a checker wants to hear about. */
struct trace_issue {
	enum trace_issue_kind kind;
	uint64_t line, col; /* JSON; 0 when it has no place in the text */
	bool in_packet;	    /* a .pftrace: where is packet and offset */
	uint64_t packet, offset;
	const char *message; /* one line, no file name or position */
};

struct buf; /* base/json.h */

/*
 * Append v to the key of a hash table: its type (a byte), its length (a size_t), then
 * its bytes, so that no two values collide (an absent value has a length of 0). The
 * keys of one table are all built with it. 0, or -1 when out of memory.
 */
int trace_key_add(struct buf *key, const struct trace_value *v);

/* The string a key begins with, when trace_key_add() put a string value first; *len
 * its length. NULL (and 0) when that value is not a string. */
const char *trace_key_string(const char *key, size_t *len);

/* The key of an async span as the viewers match its b, n and e: (cat, id, name), each
 * by trace_key_add(); key is emptied first. 0 or -1. */
int trace_async_key(struct buf *key, const struct trace_event *ev);

/* A NUL-terminated copy of a string value (malloc'd), or NULL for any other type or
 * when out of memory. */
char *trace_value_dup(const struct trace_value *v);

/* The top-level arg named key (NUL-terminated), or NULL. */
const struct trace_value *trace_event_arg(const struct trace_event *ev, const char *key);

/* Is v the string s (NUL-terminated)? */
bool trace_value_is(const struct trace_value *v, const char *s);

/*
 * The thread of an event as the viewers place it: pid when it is an integer, else 0;
 * tid when it is an integer, else the pid (Perfetto's rule for a missing tid).
 */
void trace_event_thread(const struct trace_event *ev, int64_t *pid, int64_t *tid);

/* ev's phase and the numbers of its ts, dur, pid and tid, from their values' text
 * (the readers do this; a tool that fills an event itself calls it). */
void trace_event_numbers(struct trace_event *ev);

/*
 * Where something is, the way messages begin: "FILE:LINE:COL" (line > 0), "FILE:
 * packet N at byte O" (in_packet), else "FILE". Written into out (NUL-terminated,
 * truncated to size); returns out.
 */
char *trace_place_format(char *out, size_t size, const char *file, uint64_t line, uint64_t col,
			 bool in_packet, uint64_t packet, uint64_t offset);

/* The same for an issue's place. */
char *trace_issue_place(char *out, size_t size, const char *file, const struct trace_issue *issue);

#endif /* RTR_TOOLS_SOURCE_EVENT_H */
