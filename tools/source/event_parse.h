/* SPDX-License-Identifier: MIT */
/*
 * The reader's fast path: one event object of plain JSON, parsed in one pass.
 *
 * "Plain" is what the recorder writes and most events of most traces are: strings
 * without escapes, control bytes or DEL, valid UTF-8, nesting at most
 * EVENT_PARSE_MAX_DEPTH deep, no known top-level key twice. For such text the
 * decoded value of every string is its raw bytes and the compact JSON of the event
 * is its bytes with the blanks between tokens removed, so the reader can hand out
 * the event with one copy and no re-serialisation.
 *
 * Anything else is not decided here: EVENT_PARSE_SLOW sends the event to the full
 * parser (yajl), which decodes escapes, replaces invalid UTF-8 and reports errors
 * with their places. The fast path never accepts what strict JSON (RFC 8259)
 * rejects.
 *
 * Thread safety: no global state.
 */
#ifndef RTR_TOOLS_EVENT_PARSE_H
#define RTR_TOOLS_EVENT_PARSE_H

#include <stdbool.h>
#include <stddef.h>

#include "event.h"

/* Deeper events go to the full parser (which allows TRACE_MAX_DEPTH). */
#define EVENT_PARSE_MAX_DEPTH 64

/* A value in the event's text: offsets from its '{'; a string's are inside its quotes. */
struct event_ref {
	enum trace_type type;
	size_t off, len;
};

struct event_ref_arg {
	struct event_ref key, value;
};

struct event_parse {
	struct event_ref field[TRACE_F_COUNT]; /* TRACE_ABSENT when not in the event */
	/* ts, dur (in ns) and pid, tid as json_parse_us() and json_parse_i64() read them,
	 * when they are numbers of the short form (has_number): at most 15 digits before
	 * the point, at most 3 after it (ts, dur; none for pid, tid), no exponent. */
	bool has_number[TRACE_F_COUNT];
	int64_t number[TRACE_F_COUNT];
	struct event_ref_arg *arg; /* the top-level keys of an object "args" */
	size_t nargs, args_cap;
	bool blanks; /* blanks between tokens: the compact JSON must drop them */
	size_t len;  /* bytes of the event, '{' to '}' included */
};

enum event_parse_result {
	EVENT_PARSE_DONE, /* a plain event of len bytes */
	EVENT_PARSE_MORE, /* the text ends inside the event: nothing is decided yet */
	EVENT_PARSE_SLOW  /* not plain, not JSON, or out of memory: for the full parser */
};

/* Parse the event at p[0] == '{' from p[0 .. len). e keeps its arg array between
 * calls; event_parse_free() releases it. */
enum event_parse_result event_parse(struct event_parse *e, const unsigned char *p, size_t len);

void event_parse_free(struct event_parse *e);

/*
 * Copy plain JSON text (no escapes: event_parse() said DONE) dropping the blanks
 * between tokens. dst has room for len bytes; returns the bytes written.
 */
size_t event_parse_compact(char *dst, const unsigned char *src, size_t len);

#endif /* RTR_TOOLS_EVENT_PARSE_H */
