/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace check`: a trace against the rules the viewers enforce (docs/format.md),
 * and `--repair`, which completes a file cut short (repair.c here, lib/repair.c for
 * the repair itself).
 *
 * One pass over the events, with state per thread (open B slices, the last B/E
 * time, recently closed slices, flows waiting for a slice), per open async slice and
 * per open flow, never per event; so a file of any size is checked in bounded
 * memory. Byte-level string rules come from the reader (TRACE_READ_CHECK_STRINGS)
 * as issues, each mapped to a rule here.
 *
 * Not checked: partial overlap of X slices on a thread (they may come in any order
 * in the file, so finding one needs all of them at once).
 *
 * The files (this header holds what they share, and the rules):
 *   check.c     the command: its options, one file checked (the pass over its
 *               events, the file as a whole, the summary line);
 *   findings.c  the rules' table, and how a finding or a note is said;
 *   fields.c    the rules of an event's own fields: types, ids, times, phases,
 *               metadata, counters;
 *   slices.c    the rules of a thread's slices: B/E order and matching, unended
 *               slices, flow events bound to a slice;
 *   flows.c     the rules that match events across the file: flow and async ids;
 *   repair.c    --repair: the input and output opened, what was done said.
 */
#ifndef RTR_TOOLS_CHECK_H
#define RTR_TOOLS_CHECK_H

#include "json.h"
#include "table.h"
#include "threads.h"
#include "trace.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * X(id, name, what, why): what a rule finds, and why it matters: which consumer acts
 * on it, and how (docs/format.md, and the importers' code where docs/format.md is
 * silent). A finding is something a consumer acts on; what none acts on is a note
 * (check_note()), printed only with --notes and never in the exit status.
 */
#define RULES(X)                                                                                   \
	X(JSON, "json", "not strict JSON, or not a trace: the check stops there",                  \
	  "JSON.parse (DevTools) refuses the file; Perfetto fails on a malformed event")           \
	X(GZIP, "gzip", "corrupt or cut gzip data, or bytes after the last member",                \
	  "every viewer's gunzip stops there")                                                     \
	X(BOM, "bom", "a UTF-8 byte-order mark at the start",                                      \
	  "Perfetto's sniffer does not recognise the file as JSON")                                \
	X(FILE_START, "file-start", "the first 64 bytes, blanks removed, do not begin [{\"",       \
	  "Perfetto's sniffer (kGuessTraceMaxLookahead) does not recognise the file as JSON")      \
	X(EMPTY, "empty", "no events", "the viewers refuse an empty trace")                        \
	X(CUT, "cut", "ends without its closing ']': not strict JSON",                             \
	  "DevTools and JSON.parse refuse it (Perfetto, Catapult and speedscope load it)")         \
	X(PARTIAL_EVENT, "partial-event", "ends inside an event",                                  \
	  "Catapult and speedscope fail on it (Perfetto drops the event)")                         \
	X(OBJECT_CUT, "object-cut", "the object form {\"traceEvents\":[...]}, cut short",          \
	  "Perfetto refuses it (\"JSON trace file is incomplete\"), and so do the others")         \
	X(TRAILING_COMMA, "trailing-comma", "a comma before the closing ']'",                      \
	  "JSON.parse (DevTools) refuses the file")                                                \
	X(ZERO_BYTES, "zero-bytes", "NUL bytes in the text", "JSON.parse (DevTools) refuses them") \
	X(NOT_AN_EVENT, "not-an-event", "an element of the event array that is not an object",     \
	  "the importers expect an object; Catapult warns that it has no known phase")             \
	X(CONTROL_BYTE, "control-byte", "a raw control byte (0x00-0x1F, 0x7F) in a string",        \
	  "Catapult, DevTools and speedscope (JSON.parse) fail on the file")                       \
	X(INVALID_UTF8, "invalid-utf8", "a string that is not valid UTF-8",                        \
	  "the browser viewers decode it as U+FFFD, so names differ between viewers")              \
	X(SURROGATE, "surrogate-escape", "a \\uD800-\\uDFFF escape in a string",                   \
	  "Perfetto rejects the whole file (args: drops them)")                                    \
	X(UNICODE_ESCAPE, "unicode-escape", "non-ASCII written as a \\u escape (a note)",          \
	  "none: every viewer decodes it; docs/format.md asks for raw UTF-8")                      \
	X(DUPLICATE_KEY, "duplicate-key", "a known key twice in one event",                        \
	  "JSON.parse keeps the last one, a streaming importer may keep the first")                \
	X(STATE_LIMIT, "state-limit",                                                              \
	  "more open state (threads, open slices, flows, async spans) than the check keeps",       \
	  "none: the viewers keep it all; the check keeps at most 1 M items (24 MiB) so that its " \
	  "memory stays bounded, and what it did not keep is not checked")                         \
	X(EVENT_SIZE, "event-too-large",                                                           \
	  "an event over --max-event-mb (16 MiB unless told), not read",                           \
	  "none: the viewers read it; the tools skip it so that their memory stays bounded "       \
	  "(raise --max-event-mb to check it)")                                                    \
	X(FIELD_TYPE, "field-type", "a known key with a value of the wrong type",                  \
	  "Perfetto drops the event or the field; Catapult and DevTools misread it")               \
	X(PHASE, "phase", "ph missing, unknown, or not imported by Perfetto",                      \
	  "Perfetto skips the event; Catapult warns on an unknown phase")                          \
	X(MISSING_TS, "missing-ts", "an event other than M without ts",                            \
	  "Perfetto drops the event")                                                              \
	X(NEGATIVE_TS, "negative-ts", "a negative ts", "Perfetto's sorter drops the event")        \
	X(TS_RANGE, "ts-range", "ts, dur or ts + dur beyond 2^53 ns or 64 bits",                   \
	  "the viewers' doubles lose nanoseconds; beyond 64 bits Perfetto cannot hold it")         \
	X(MISSING_DUR, "missing-dur", "an X without dur", "Perfetto drops the event")              \
	X(NEGATIVE_DUR, "negative-dur", "a negative dur",                                          \
	  "speedscope keeps the slice open to the end of the profile")                             \
	X(PID, "pid", "pid missing, or not an integer 0 .. 2^32-1", "Perfetto reads it as 0")      \
	X(TID, "tid", "tid missing, or not an integer 0 .. 2^32-1",                                \
	  "Perfetto reads it as 0 (a missing tid: the pid)")                                       \
	X(TS_ORDER, "ts-order", "B/E timestamps going backward on a thread",                       \
	  "Catapult does not sort B/E (\"Timestamps are moving backward\")")                       \
	X(END_MISMATCH, "end-mismatch", "an E whose name or cat is not its B's",                   \
	  "speedscope drops the slice and the DevTools engine warns (an E without a name: "        \
	  "throws); Catapult and Perfetto end the slice silently")                                 \
	X(END_WITHOUT_BEGIN, "end-without-begin", "an E with no B open on its thread",             \
	  "speedscope and Catapult warn and drop it; Perfetto drops it")                           \
	X(ARGS_ON_END, "args-on-end", "an arg key on both a B and its E",                          \
	  "Catapult warns and keeps one (other E args it merges silently)")                        \
	X(UNENDED, "unended", "a B never ended", "the viewers show \"did not end\"")               \
	X(INSTANT_SCOPE, "instant-scope", "an instant whose s is not g, p or t",                   \
	  "Perfetto drops the event")                                                              \
	X(COUNTER_ARGS, "counter-args", "a C without args, or with args that are not numbers",     \
	  "Perfetto drops the event or the series")                                                \
	X(ASYNC_FIELDS, "async-fields", "b/e/n without cat, or without an integer or string id",   \
	  "Perfetto drops the event; b and e cannot be matched")                                   \
	X(ASYNC_UNMATCHED, "async-unmatched", "an e without its b, or a b never ended",            \
	  "Catapult warns; Perfetto drops the e or leaves the span open")                          \
	X(FLOW_ID, "flow-id", "s/t/f without an integer or hex-string id",                         \
	  "Perfetto drops the event (flow_invalid_id)")                                            \
	X(FLOW_MISMATCH, "flow-mismatch", "s/t/f of one id with different names or cats",          \
	  "Perfetto keys a flow on (id, cat, name) and does not join them")                        \
	X(FLOW_OUTSIDE, "flow-outside-slice",                                                      \
	  "s, t or f with bp:\"e\" not inside a slice on its thread; f without bp with no slice "  \
	  "beginning at or after it",                                                              \
	  "Catapult and Perfetto cannot bind it and drop the flow")                                \
	X(METADATA, "metadata", "an M event no viewer reads, or with bad args",                    \
	  "Catapult warns \"Unrecognized metadata name\" (a note for the names only it reads); "   \
	  "Perfetto ignores bad args")

#define RULE_ENUM(id, name, what, why) RULE_##id,

enum rule { RULES(RULE_ENUM) RULE_COUNT };

/* Slices closed lately on a thread, kept to place flow events written after them. */
#define RECENT_SLICES 16
/* Flow events waiting for a slice to enclose them, per thread, before the oldest is
 * reported anyway. */
#define MAX_PENDING_FLOWS 4096

/* What each rule finds, and why it matters, by enum rule (findings.c). */
extern const struct check_rule {
	const char *name, *what, *why;
} check_rules[RULE_COUNT];

struct check_options {
	uint64_t max_per_rule;
	bool quiet;
	bool notes; /* --notes: print the notes too */
};

struct interval {
	int64_t start, end;
};

/* A flow event no slice binds yet. Catapult and Perfetto bind s, t and an f with
 * "bp":"e" to the slice around it on its thread; an f without bp to the next slice that
 * begins on its thread at or after it (Catapult's findNextSliceAfter). */
struct pending_flow {
	int64_t ts_ns;
	uint64_t line, col;
	char phase;
	bool next; /* an f without bp: waits for a slice that begins at or after ts_ns */
};

/* Per thread, after the shared thread_state (threads.h). */
struct check_thread {
	bool has_be, has_begin;
	int64_t last_be_ns;
	int64_t max_begin_ns; /* the latest start of a B or X on the thread */
	uint64_t last_be_line;
	struct interval recent[RECENT_SLICES];
	unsigned nrecent, next_recent;
	struct pending_flow *pending;
	size_t npending, pending_cap;
};

struct async_state {
	uint64_t open;
	uint64_t line, col;
	char *label; /* "name" (cat "c", id 5), for the report */
};

struct flow_state {
	char *name, *cat; /* NULL when absent */
	size_t name_len, cat_len;
	uint64_t line;
	char first_phase;
	bool saw_s, saw_f;
};

struct check {
	const char *file;
	const struct check_options *opt;
	uint64_t count[RULE_COUNT], notes[RULE_COUNT]; /* findings and notes per rule */
	uint64_t total, total_notes;
	struct threads threads;
	struct table async, flows;
	struct buf key;
	bool nomem;
};

/* repair.c */

/*
 * `check --repair`: repair input ("-": standard input) into output (NULL: the
 * default name, see cli_default_output(); "-": standard output; gzip when it ends in
 * .gz), with a progress bar, the reader's warnings and a report on standard error.
 * Returns the exit status: CLI_OK, or CLI_ERROR.
 */
int check_repair(const char *input, const char *output);

/* findings.c */

/* Something a consumer acts on: printed, counted, exit status 1. */
void check_finding(struct check *c, enum rule rule, uint64_t line, uint64_t col, const char *fmt,
		   ...) __attribute__((format(printf, 5, 6)));

/* Something no consumer acts on: printed with --notes only, never in the exit status. */
void check_note(struct check *c, enum rule rule, uint64_t line, uint64_t col, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* The reader's issues (TRACE_READ_CHECK_STRINGS), each a finding or a note of its
 * rule: trace_options.on_issue, with the struct check. */
void check_on_issue(void *ctx, const struct trace_issue *issue);

/* A value for a message in buf: a string quoted and shortened, anything else as
 * text, nothing that moves a terminal's cursor. Returns buf. */
const char *check_shown(char *buf, size_t size, const struct trace_value *v);

/* The same for the string s[0 .. len) (NULL: absent). */
const char *check_shown_str(char *buf, size_t size, const char *s, size_t len);

/* ns as microseconds, for messages, in buf (32 bytes). */
const char *check_us(char *buf, int64_t ns);

/* Is the value the string s[0 .. len)? An absent value matches only s == NULL. */
bool check_same_str(const struct trace_value *v, const char *s, size_t len);

/* fields.c */

/* Is the value a JSON integer that fits int64? */
bool check_is_integer(const struct trace_value *v);

/* The fields every event has, by their types and ranges. */
void check_fields(struct check *c, const struct trace_event *ev);

/* The end of an X, checked (see fields.c). false when it does not fit. */
bool check_x_end(struct check *c, const struct trace_event *ev, int64_t *end);

/* An M event's name and args. */
void check_metadata(struct check *c, const struct trace_event *ev);

/* A C event's args. */
void check_counter(struct check *c, const struct trace_event *ev);

/* slices.c */

/* A slice [start, end] closed on the thread: remember it, and place waiting flows. */
void check_slice_closed(struct check_thread *ct, int64_t start, int64_t end);

/* A B or X began on the thread at start: it binds the waiting f events at or before it. */
void check_slice_began(struct check_thread *ct, int64_t start);

/* Is ts inside a slice of the thread, open or lately closed? */
bool check_enclosed(const struct thread_state *th, const struct check_thread *ct, int64_t ts);

/* A flow event no slice binds yet: it waits for one (next: an f without bp). */
void check_wait_for_slice(struct check *c, struct thread_state *th, struct check_thread *ct,
			  const struct trace_event *ev, bool next);

/* A B, an E, and the order of a thread's B/E events. */
void check_begin(struct check *c, struct thread_state *th, const struct trace_event *ev);
void check_end(struct check *c, struct thread_state *th, struct check_thread *ct,
	       const struct trace_event *ev);
void check_be_order(struct check *c, struct check_thread *ct, const struct trace_event *ev);

/* What is still open when the events end. */
void check_leftovers(struct check *c);

/* flows.c */

/* A flow event (s, t, f) and an async event (b, e, n). */
void check_flow(struct check *c, struct thread_state *th, struct check_thread *ct,
		const struct trace_event *ev);
void check_async(struct check *c, const struct trace_event *ev);

#endif /* RTR_TOOLS_CHECK_H */
