/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace check`: a trace against the rules the viewers enforce (FORMAT.md), and
 * `--repair`, which completes a file cut short (repair.c).
 *
 * One pass over the events, with state per thread (open B slices, the last B/E
 * time, recently closed slices, flows waiting for a slice), per open async slice and
 * per open flow, never per event; so a file of any size is checked in bounded
 * memory. Byte-level string rules come from the reader (TRACE_READ_CHECK_STRINGS)
 * as issues, each mapped to a rule here.
 *
 * Not checked: partial overlap of X slices on a thread (they may come in any order
 * in the file, so finding one needs all of them at once).
 */
#include "cli.h"
#include "json.h"
#include "pftrace.h"
#include "progress.h"
#include "repair.h"
#include "table.h"
#include "threads.h"
#include "trace.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/*
 * X(id, name, what, why): what a rule finds, and why it matters: which consumer acts
 * on it, and how (FORMAT.md, and the importers' code where FORMAT.md is silent). A
 * finding is something a consumer acts on; what none acts on is a note (note()),
 * printed only with --notes and never in the exit status.
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
	  "none: every viewer decodes it; FORMAT.md asks for raw UTF-8")                           \
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
#define RULE_ROW(id, name, what, why)  {name, what, why},

enum rule { RULES(RULE_ENUM) RULE_COUNT };

static const struct {
	const char *name, *what, *why;
} rules[RULE_COUNT] = {RULES(RULE_ROW)};

static const enum rule issue_rules[TRACE_ISSUE_COUNT] = {
	[TRACE_ISSUE_BOM] = RULE_BOM,
	[TRACE_ISSUE_ZERO_BYTES] = RULE_ZERO_BYTES,
	[TRACE_ISSUE_TRAILING_COMMA] = RULE_TRAILING_COMMA,
	[TRACE_ISSUE_NOT_AN_EVENT] = RULE_NOT_AN_EVENT,
	[TRACE_ISSUE_NO_EVENTS_KEY] = RULE_EMPTY,
	[TRACE_ISSUE_GZIP_TRAILING] = RULE_GZIP,
	[TRACE_ISSUE_CONTROL_BYTE] = RULE_CONTROL_BYTE,
	[TRACE_ISSUE_INVALID_UTF8] = RULE_INVALID_UTF8,
	[TRACE_ISSUE_SURROGATE] = RULE_SURROGATE,
	[TRACE_ISSUE_UNICODE_ESCAPE] = RULE_UNICODE_ESCAPE,
	[TRACE_ISSUE_DUPLICATE_KEY] = RULE_DUPLICATE_KEY,
	[TRACE_ISSUE_EVENT_TOO_LARGE] = RULE_EVENT_SIZE,
};

/* Phases the viewers import, and the ones Perfetto leaves out (FORMAT.md "Phases"). */
#define KNOWN_PHASES	  "XBEiICbenstfM"
#define UNIMPORTED_PHASES "STFpNODc"

/* Slices closed lately on a thread, kept to place flow events written after them. */
#define RECENT_SLICES 16
/* Flow events waiting for a slice to enclose them, per thread, before the oldest is
 * reported anyway. */
#define MAX_PENDING_FLOWS 4096

#define TS_LIMIT_NS ((int64_t)1 << 53)
#define ID_LIMIT    ((int64_t)UINT32_MAX)

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

static void report(struct check *c, bool is_note, enum rule rule, uint64_t line, uint64_t col,
		   const char *fmt, va_list ap) __attribute__((format(printf, 6, 0)));

static void report(struct check *c, bool is_note, enum rule rule, uint64_t line, uint64_t col,
		   const char *fmt, va_list ap)
{
	uint64_t n = is_note ? ++c->notes[rule] : ++c->count[rule];

	if (is_note)
		c->total_notes++;
	else
		c->total++;
	if (c->opt->quiet || (is_note && !c->opt->notes))
		return;
	if (c->opt->max_per_rule > 0 && n > c->opt->max_per_rule) {
		if (n == c->opt->max_per_rule + 1)
			printf("%s: %s%s: more %s of this rule not shown (--max-per-rule 0 "
			       "shows all)\n",
			       c->file, is_note ? "note " : "", rules[rule].name,
			       is_note ? "notes" : "findings");
		return;
	}
	if (line > 0)
		printf("%s:%" PRIu64 ":%" PRIu64 ": %s%s: ", c->file, line, col,
		       is_note ? "note " : "", rules[rule].name);
	else
		printf("%s: %s%s: ", c->file, is_note ? "note " : "", rules[rule].name);
	vprintf(fmt, ap);
	putchar('\n');
}

static void finding(struct check *c, enum rule rule, uint64_t line, uint64_t col, const char *fmt,
		    ...) __attribute__((format(printf, 5, 6)));
static void note(struct check *c, enum rule rule, uint64_t line, uint64_t col, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Something a consumer acts on: printed, counted, exit status 1. */
static void finding(struct check *c, enum rule rule, uint64_t line, uint64_t col, const char *fmt,
		    ...)
{
	va_list ap;

	va_start(ap, fmt);
	report(c, false, rule, line, col, fmt, ap);
	va_end(ap);
}

/* Something no consumer acts on: printed with --notes only, never in the exit status. */
static void note(struct check *c, enum rule rule, uint64_t line, uint64_t col, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report(c, true, rule, line, col, fmt, ap);
	va_end(ap);
}

static void on_issue(void *ctx, const struct trace_issue *issue)
{
	struct check *c = ctx;

	enum rule rule = issue_rules[issue->kind];

	if (rule == RULE_UNICODE_ESCAPE)
		note(c, rule, issue->line, issue->col, "%s (every viewer decodes it)",
		     issue->message);
	else
		finding(c, rule, issue->line, issue->col, "%s", issue->message);
}

/* ------------------------------------------------------------ message helpers */

/* A value for a message: a string quoted and shortened, anything else as text. */
static const char *shown(char *buf, size_t size, const struct trace_value *v)
{
	size_t max = size - 8, n;

	if (v->type == TRACE_ABSENT)
		return "(none)";
	n = v->len < max ? v->len : max;
	/* Do not cut inside a UTF-8 sequence. */
	while (n < v->len && n > 0 && ((unsigned char)v->text[n] & 0xc0) == 0x80)
		n--;
	if (v->type == TRACE_STRING)
		snprintf(buf, size, "\"%.*s%s\"", (int)n, v->text, n < v->len ? "..." : "");
	else
		snprintf(buf, size, "%.*s%s", (int)n, v->text, n < v->len ? "..." : "");
	for (char *p = buf; *p != '\0'; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?'; /* nothing that moves a terminal's cursor */
	}
	return buf;
}

static const char *shown_str(char *buf, size_t size, const char *s, size_t len)
{
	struct trace_value v = {s != NULL ? TRACE_STRING : TRACE_ABSENT, s, len};

	return shown(buf, size, &v);
}

/* ns as microseconds, for messages. */
static const char *us(char *buf, int64_t ns)
{
	*json_put_us(buf, ns) = '\0';
	return buf;
}

/* Is the value the string s[0 .. len)? An absent value matches only s == NULL. */
static bool same_str(const struct trace_value *v, const char *s, size_t len)
{
	if (v->type != TRACE_STRING)
		return s == NULL;
	return s != NULL && v->len == len && memcmp(v->text, s, len) == 0;
}

/* ---------------------------------------------------------------- the fields */

static bool is_integer(const struct trace_value *v)
{
	int64_t i;

	return v->type == TRACE_NUMBER && json_parse_i64(v->text, v->len, &i) == 0;
}

static void check_id_field(struct check *c, const struct trace_event *ev, enum rule rule, bool has,
			   int64_t v, const struct trace_value *raw, const char *key)
{
	char b[96];

	if (raw->type == TRACE_ABSENT)
		finding(c, rule, ev->line, ev->col, "no \"%s\": the viewers need it on every event",
			key);
	else if (!has || v < 0 || v > ID_LIMIT)
		finding(c, rule, ev->line, ev->col,
			"\"%s\" %s is not an integer 0 .. 4294967295: Perfetto reads it as 0", key,
			shown(b, sizeof(b), raw));
}

static void check_time_field(struct check *c, const struct trace_event *ev,
			     const struct trace_value *raw, bool has, int64_t ns, bool is_ts)
{
	char b[96];
	const char *key = is_ts ? "ts" : "dur";

	if (raw->type == TRACE_ABSENT)
		return;
	if (raw->type != TRACE_NUMBER) {
		finding(c, RULE_FIELD_TYPE, ev->line, ev->col, "\"%s\" is %s, not a number", key,
			shown(b, sizeof(b), raw));
		return;
	}
	if (!has) {
		finding(c, RULE_TS_RANGE, ev->line, ev->col,
			"\"%s\" %s does not fit 64-bit nanoseconds", key, shown(b, sizeof(b), raw));
		return;
	}
	if (ns < 0)
		finding(c, is_ts ? RULE_NEGATIVE_TS : RULE_NEGATIVE_DUR, ev->line, ev->col,
			"\"%s\" %s is negative%s", key, shown(b, sizeof(b), raw),
			is_ts ? ": Perfetto drops the event"
			      : ": speedscope keeps the slice open to the end of the profile");
	else if (ns > TS_LIMIT_NS)
		finding(c, RULE_TS_RANGE, ev->line, ev->col,
			"\"%s\" %s is beyond 2^53 ns: the viewers' doubles lose nanoseconds (use "
			"a trace-relative origin)",
			key, shown(b, sizeof(b), raw));
}

static void check_fields(struct check *c, const struct trace_event *ev)
{
	static const char *const string_keys[] = {"name", "cat", "s", "bp"};
	const struct trace_value *string_values[] = {&ev->name, &ev->cat, &ev->s, &ev->bp};
	char b[96];

	if (ev->ph.type == TRACE_ABSENT)
		finding(c, RULE_PHASE, ev->line, ev->col, "an event without \"ph\"");
	else if (ev->ph.type != TRACE_STRING)
		finding(c, RULE_FIELD_TYPE, ev->line, ev->col, "\"ph\" is %s, not a string",
			shown(b, sizeof(b), &ev->ph));
	else if (ev->phase != '\0' && strchr(UNIMPORTED_PHASES, ev->phase) != NULL)
		finding(c, RULE_PHASE, ev->line, ev->col,
			"phase \"%c\" is not imported by Perfetto (legacy async S/T/F/p, object "
			"events N/O/D, clock sync c)",
			ev->phase);
	else if (ev->phase == '\0' || strchr(KNOWN_PHASES, ev->phase) == NULL)
		finding(c, RULE_PHASE, ev->line, ev->col, "unknown phase %s",
			shown(b, sizeof(b), &ev->ph));
	for (size_t i = 0; i < sizeof(string_keys) / sizeof(string_keys[0]); i++) {
		const struct trace_value *v = string_values[i];

		if (v->type != TRACE_ABSENT && v->type != TRACE_STRING)
			finding(c, RULE_FIELD_TYPE, ev->line, ev->col, "\"%s\" is %s, not a string",
				string_keys[i], shown(b, sizeof(b), v));
	}
	if (ev->args.type != TRACE_ABSENT && ev->args.type != TRACE_OBJECT)
		finding(c, RULE_FIELD_TYPE, ev->line, ev->col, "\"args\" is %s, not an object",
			shown(b, sizeof(b), &ev->args));
	if (ev->id.type != TRACE_ABSENT && ev->id.type != TRACE_STRING &&
	    ev->id.type != TRACE_NUMBER)
		finding(c, RULE_FIELD_TYPE, ev->line, ev->col,
			"\"id\" is %s, not a number or a string", shown(b, sizeof(b), &ev->id));
	check_id_field(c, ev, RULE_PID, ev->has_pid, ev->pid_num, &ev->pid, "pid");
	check_id_field(c, ev, RULE_TID, ev->has_tid, ev->tid_num, &ev->tid, "tid");
	if (ev->ts.type == TRACE_ABSENT && ev->phase != 'M')
		finding(c, RULE_MISSING_TS, ev->line, ev->col,
			"no \"ts\": every event but M needs one");
	check_time_field(c, ev, &ev->ts, ev->has_ts, ev->ts_ns, true);
	if (ev->dur.type == TRACE_ABSENT && ev->phase == 'X')
		finding(c, RULE_MISSING_DUR, ev->line, ev->col,
			"an X without \"dur\": the viewers drop it");
	check_time_field(c, ev, &ev->dur, ev->has_dur, ev->dur_ns, false);
}

/*
 * The end of an X, ts + dur (dur >= 0), checked: false, with a ts-range finding, when it
 * does not fit 64-bit nanoseconds. An end beyond 2^53 ns whose ts and dur are each
 * below it is a finding too (each beyond it is one already, in check_time_field()).
 */
static bool x_end(struct check *c, const struct trace_event *ev, int64_t *end)
{
	char t1[32], t2[32];

	if (__builtin_add_overflow(ev->ts_ns, ev->dur_ns, end)) {
		finding(c, RULE_TS_RANGE, ev->line, ev->col,
			"X at ts %s with dur %s ends beyond 64-bit nanoseconds: no viewer can "
			"place its end",
			us(t1, ev->ts_ns), us(t2, ev->dur_ns));
		return false;
	}
	if (*end > TS_LIMIT_NS && ev->ts_ns <= TS_LIMIT_NS && ev->dur_ns <= TS_LIMIT_NS)
		finding(c, RULE_TS_RANGE, ev->line, ev->col,
			"X at ts %s with dur %s ends beyond 2^53 ns: the viewers' doubles lose "
			"nanoseconds (use a trace-relative origin)",
			us(t1, ev->ts_ns), us(t2, ev->dur_ns));
	return true;
}

/* ----------------------------------------------------------- slices and flows */

/* A slice [start, end] closed on the thread: remember it, and place waiting flows. */
static void slice_closed(struct check_thread *ct, int64_t start, int64_t end)
{
	size_t kept = 0;
	unsigned i;

	for (size_t k = 0; k < ct->npending; k++) {
		if (ct->pending[k].next || ct->pending[k].ts_ns < start ||
		    ct->pending[k].ts_ns > end)
			ct->pending[kept++] = ct->pending[k];
	}
	ct->npending = kept;
	/* A slice inside the new one adds nothing: take its place. */
	for (i = 0; i < ct->nrecent; i++) {
		if (ct->recent[i].start >= start && ct->recent[i].end <= end)
			break;
	}
	if (i == ct->nrecent) {
		if (ct->nrecent < RECENT_SLICES) {
			ct->nrecent++;
		} else {
			i = ct->next_recent;
			ct->next_recent = (ct->next_recent + 1) % RECENT_SLICES;
		}
	}
	ct->recent[i].start = start;
	ct->recent[i].end = end;
}

/* A B or X began on the thread at start: it binds the waiting f events (without bp) at
 * or before start. Only the latest start matters, so nothing but it is kept. */
static void slice_began(struct check_thread *ct, int64_t start)
{
	size_t kept = 0;

	if (ct->has_begin && start <= ct->max_begin_ns)
		return;
	ct->has_begin = true;
	ct->max_begin_ns = start;
	for (size_t k = 0; k < ct->npending; k++) {
		if (!ct->pending[k].next || ct->pending[k].ts_ns > start)
			ct->pending[kept++] = ct->pending[k];
	}
	ct->npending = kept;
}

static bool enclosed(const struct thread_state *th, const struct check_thread *ct, int64_t ts)
{
	if (th->depth > 0 && th->open[0].ts_ns <= ts)
		return true;
	for (unsigned i = 0; i < ct->nrecent; i++) {
		if (ct->recent[i].start <= ts && ts <= ct->recent[i].end)
			return true;
	}
	return false;
}

static void report_pending(struct check *c, const struct thread_state *th,
			   const struct pending_flow *p)
{
	char t[32];

	if (p->next)
		finding(c, RULE_FLOW_OUTSIDE, p->line, p->col,
			"flow event \"f\" at ts %s without \"bp\":\"e\" has no slice beginning at "
			"or after it on thread %" PRId64 "/%" PRId64
			": Catapult and Perfetto bind such an f to the next slice that begins, and "
			"drop the flow without one",
			us(t, p->ts_ns), th->pid, th->tid);
	else
		finding(c, RULE_FLOW_OUTSIDE, p->line, p->col,
			"flow event \"%c\" at ts %s is not inside any slice on thread %" PRId64
			"/%" PRId64 ": Catapult and Perfetto bind it to the slice around it, and "
			"drop the flow without one",
			p->phase, us(t, p->ts_ns), th->pid, th->tid);
}

static void wait_for_slice(struct check *c, struct thread_state *th, struct check_thread *ct,
			   const struct trace_event *ev, bool next)
{
	if (ct->npending == MAX_PENDING_FLOWS) {
		report_pending(c, th, &ct->pending[0]);
		memmove(ct->pending, ct->pending + 1, (ct->npending - 1) * sizeof(ct->pending[0]));
		ct->npending--;
	}
	if (ct->npending == ct->pending_cap) {
		size_t n = ct->pending_cap ? ct->pending_cap * 2 : 8;
		struct pending_flow *p;

		/* Past the state bound the flow event is not kept (a state-limit). */
		if (!budget_take(&c->threads.budget, (n - ct->pending_cap) * sizeof(*p)))
			return;
		p = realloc(ct->pending, n * sizeof(*p));
		if (p == NULL) {
			c->nomem = true;
			return;
		}
		ct->pending = p;
		ct->pending_cap = n;
	}
	ct->pending[ct->npending++] =
		(struct pending_flow){ev->ts_ns, ev->line, ev->col, ev->phase, next};
}

static void check_begin(struct check *c, struct thread_state *th, const struct trace_event *ev)
{
	if (thread_push(th, ev) == -ENOMEM) /* -ENOSPC: untracked, a state-limit */
		c->nomem = true;
}

/* What the viewers do with an E that is not its B's (each seen loading such a file). */
static const char *mismatch_effect(const struct trace_event *ev, const struct open_slice *b)
{
	if (ev->name.type == TRACE_ABSENT && b->name != NULL)
		return "an E without a name makes the DevTools engine throw (nothing loads) and "
		       "speedscope keep the slice open; Catapult and Perfetto end the slice "
		       "silently";
	if (!same_str(&ev->name, b->name, b->name_len))
		return "speedscope does not end the slice (it stays open to the end of the "
		       "profile) and the DevTools engine logs \"Begin/End events mismatch\"; "
		       "Catapult and Perfetto end the slice silently";
	return "the DevTools engine logs \"Begin/End events mismatch\"; speedscope, Catapult "
	       "and Perfetto end the slice silently";
}

static void check_end(struct check *c, struct thread_state *th, struct check_thread *ct,
		      const struct trace_event *ev)
{
	struct open_slice *b = thread_top(th);
	char n1[96], c1[96], n2[96], c2[96];

	if (thread_untracked(th)) { /* its B was past the state bound */
		thread_pop(th);
		return;
	}
	/* Catapult merges an E's args into its slice and warns only about a key the B
	 * has too (speedscope matches the E anyway, with a warning that changes nothing). */
	for (size_t i = 0; b != NULL && ev->args.type == TRACE_OBJECT && i < ev->nargs; i++)
		if (slice_has_key(b, ev->arg[i].key, ev->arg[i].key_len)) {
			finding(c, RULE_ARGS_ON_END, ev->line, ev->col,
				"arg \"%.*s\" on both the B and its E: Catapult warns and keeps "
				"one",
				(int)(ev->arg[i].key_len < 64 ? ev->arg[i].key_len : 64),
				ev->arg[i].key);
			break;
		}
	if (b == NULL) {
		finding(c, RULE_END_WITHOUT_BEGIN, ev->line, ev->col,
			"E %s with no B open on thread %" PRId64 "/%" PRId64
			": speedscope and Catapult warn and drop it, Perfetto drops it",
			shown(n1, sizeof(n1), &ev->name), th->pid, th->tid);
		return;
	}
	if (!same_str(&ev->name, b->name, b->name_len) || !same_str(&ev->cat, b->cat, b->cat_len))
		finding(c, RULE_END_MISMATCH, ev->line, ev->col,
			"E %s (cat %s) ends B %s (cat %s) of line %" PRIu64 ": %s",
			shown(n1, sizeof(n1), &ev->name), shown(c1, sizeof(c1), &ev->cat),
			shown_str(n2, sizeof(n2), b->name, b->name_len),
			shown_str(c2, sizeof(c2), b->cat, b->cat_len), b->line,
			mismatch_effect(ev, b));
	if (ev->has_ts && b->ts_ns <= ev->ts_ns)
		slice_closed(ct, b->ts_ns, ev->ts_ns);
	thread_pop(th);
}

static void check_be_order(struct check *c, struct check_thread *ct, const struct trace_event *ev)
{
	char t1[32], t2[32];

	if (!ev->has_ts)
		return;
	if (ct->has_be && ev->ts_ns < ct->last_be_ns)
		finding(c, RULE_TS_ORDER, ev->line, ev->col,
			"%c at ts %s is before the B/E of line %" PRIu64
			" (ts %s) on its thread: Catapult does not sort B/E events",
			ev->phase, us(t1, ev->ts_ns), ct->last_be_line, us(t2, ct->last_be_ns));
	ct->has_be = true;
	ct->last_be_ns = ev->ts_ns;
	ct->last_be_line = ev->line;
}

/* Key bytes of a table: each part as its length, then its bytes. */
static int key_add(struct buf *k, const struct trace_value *v)
{
	uint64_t len = v->len;
	char type = (char)v->type;

	return buf_put(k, &type, 1) || buf_put(k, &len, sizeof(len)) || buf_put(k, v->text, v->len);
}

/* A hex string id as Perfetto parses it (base 16, "0x" optional): "0x1f", "8780d402". */
static bool is_hex_id(const struct trace_value *v)
{
	size_t i = 0;

	if (v->type != TRACE_STRING)
		return false;
	if (v->len > 2 && v->text[0] == '0' && (v->text[1] == 'x' || v->text[1] == 'X'))
		i = 2;
	if (i == v->len)
		return false;
	for (; i < v->len; i++) {
		char ch = v->text[i];

		if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') ||
		      (ch >= 'A' && ch <= 'F')))
			return false;
	}
	return true;
}

/* What a table entry costs beside its value and key (an estimate), for the state
 * bound (threads.h). */
#define ENTRY_COST 96

/* A new open flow's cost: as budget_give() gives it back when the flow ends. */
static uint64_t flow_cost(const struct check *c, const struct trace_event *ev)
{
	return sizeof(struct flow_state) + c->key.len +
	       (ev->name.type == TRACE_STRING ? ev->name.len : 0) +
	       (ev->cat.type == TRACE_STRING ? ev->cat.len : 0) + ENTRY_COST;
}

static char *dup_value(const struct trace_value *v)
{
	char *p;

	if (v->type != TRACE_STRING)
		return NULL;
	p = malloc(v->len + 1);
	if (p != NULL)
		memcpy(p, v->text, v->len + 1);
	return p;
}

static void check_flow(struct check *c, struct thread_state *th, struct check_thread *ct,
		       const struct trace_event *ev)
{
	struct flow_state *fs;
	bool created;
	char b1[96], b2[96], b3[96], b4[96];

	if (ev->phase == 'f' && !trace_value_is(&ev->bp, "e")) {
		if (ev->has_ts && !(ct->has_begin && ct->max_begin_ns >= ev->ts_ns))
			wait_for_slice(c, th, ct, ev, true);
	} else if (ev->has_ts && !enclosed(th, ct, ev->ts_ns)) {
		wait_for_slice(c, th, ct, ev, false);
	}
	if (ev->id.type == TRACE_ABSENT) {
		finding(c, RULE_FLOW_ID, ev->line, ev->col,
			"flow event \"%c\" without \"id\": Perfetto drops it", ev->phase);
		return;
	}
	if (!is_integer(&ev->id) && !is_hex_id(&ev->id))
		finding(c, RULE_FLOW_ID, ev->line, ev->col,
			"flow id %s is neither an integer nor a hex string (\"0x1f\", "
			"\"8780d402\"): Perfetto drops the event (flow_invalid_id)",
			shown(b1, sizeof(b1), &ev->id));
	c->key.len = 0;
	if (key_add(&c->key, &ev->id)) {
		c->nomem = true;
		return;
	}
	fs = table_get(&c->flows, c->key.p, c->key.len);
	if (fs == NULL && !budget_take(&c->threads.budget, flow_cost(c, ev)))
		return; /* not tracked: a state-limit */
	if (fs == NULL)
		fs = table_put(&c->flows, c->key.p, c->key.len, &created);
	else
		created = false;
	if (fs == NULL) {
		c->nomem = true;
		return;
	}
	if (created) {
		fs->name = dup_value(&ev->name);
		fs->cat = dup_value(&ev->cat);
		fs->name_len = fs->name != NULL ? ev->name.len : 0;
		fs->cat_len = fs->cat != NULL ? ev->cat.len : 0;
		fs->line = ev->line;
		fs->first_phase = ev->phase;
	} else if (!same_str(&ev->name, fs->name, fs->name_len) ||
		   !same_str(&ev->cat, fs->cat, fs->cat_len)) {
		finding(c, RULE_FLOW_MISMATCH, ev->line, ev->col,
			"flow \"%c\" %s (cat %s) of id %s, but its \"%c\" of line %" PRIu64
			" is %s (cat %s): Perfetto keys a flow on (id, cat, name) and does not "
			"join them",
			ev->phase, shown(b1, sizeof(b1), &ev->name),
			shown(b2, sizeof(b2), &ev->cat), shown(b3, sizeof(b3), &ev->id),
			fs->first_phase, fs->line,
			shown_str(b4, sizeof(b4), fs->name, fs->name_len),
			shown_str(b2, sizeof(b2), fs->cat, fs->cat_len));
	}
	fs->saw_s |= ev->phase == 's';
	fs->saw_f |= ev->phase == 'f';
	if (fs->saw_s && fs->saw_f) {
		budget_give(&c->threads.budget,
			    sizeof(*fs) + c->key.len + fs->name_len + fs->cat_len + ENTRY_COST);
		free(fs->name);
		free(fs->cat);
		table_remove(&c->flows, fs);
	}
}

static void check_async(struct check *c, const struct trace_event *ev)
{
	struct async_state *as;
	bool created;
	char b1[96], b2[96], b3[96];

	if (ev->cat.type != TRACE_STRING)
		finding(c, RULE_ASYNC_FIELDS, ev->line, ev->col,
			"async event \"%c\" without a string \"cat\"", ev->phase);
	if (ev->id.type == TRACE_ABSENT)
		finding(c, RULE_ASYNC_FIELDS, ev->line, ev->col,
			"async event \"%c\" without \"id\"", ev->phase);
	else if (ev->id.type == TRACE_NUMBER && !is_integer(&ev->id))
		finding(c, RULE_ASYNC_FIELDS, ev->line, ev->col,
			"async id %s is not an integer (a float id is refused)",
			shown(b1, sizeof(b1), &ev->id));
	if (ev->phase == 'n' || ev->cat.type != TRACE_STRING || ev->id.type == TRACE_ABSENT)
		return;
	c->key.len = 0;
	if (key_add(&c->key, &ev->cat) || key_add(&c->key, &ev->id) ||
	    key_add(&c->key, &ev->name)) {
		c->nomem = true;
		return;
	}
	if (ev->phase == 'e') {
		as = table_get(&c->async, c->key.p, c->key.len);
		if (as == NULL) {
			finding(c, RULE_ASYNC_UNMATCHED, ev->line, ev->col,
				"e %s (cat %s, id %s) without a b open: b and e match on cat, id "
				"and name",
				shown(b1, sizeof(b1), &ev->name), shown(b2, sizeof(b2), &ev->cat),
				shown(b3, sizeof(b3), &ev->id));
		} else if (--as->open == 0) {
			budget_give(&c->threads.budget, sizeof(*as) + c->key.len + ENTRY_COST);
			free(as->label);
			table_remove(&c->async, as);
		}
		return;
	}
	as = table_get(&c->async, c->key.p, c->key.len);
	if (as == NULL && !budget_take(&c->threads.budget, sizeof(*as) + c->key.len + ENTRY_COST))
		return; /* not tracked: a state-limit */
	if (as == NULL)
		as = table_put(&c->async, c->key.p, c->key.len, &created);
	else
		created = false;
	if (as == NULL) {
		c->nomem = true;
		return;
	}
	if (created) {
		char label[320];

		snprintf(label, sizeof(label), "%s (cat %s, id %s)",
			 shown(b1, sizeof(b1), &ev->name), shown(b2, sizeof(b2), &ev->cat),
			 shown(b3, sizeof(b3), &ev->id));
		as->label = strdup(label);
		as->line = ev->line;
		as->col = ev->col;
	}
	as->open++;
}

/* M names Catapult's importer (processMetadataEvent) handles without a warning, beyond
 * the four Perfetto reads too. */
static bool catapult_metadata(const struct trace_value *name)
{
	static const char *const names[] = {"process_labels", "process_uptime_seconds", "num_cpus",
					    "TraceConfig", "trace_buffer_overflowed"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (trace_value_is(name, names[i]))
			return true;
	}
	return false;
}

static void check_metadata(struct check *c, const struct trace_event *ev)
{
	const struct trace_value *a;
	char b[96];

	if (trace_value_is(&ev->name, "process_name") || trace_value_is(&ev->name, "thread_name")) {
		a = trace_event_arg(ev, "name");
		if (a == NULL || a->type != TRACE_STRING || a->len == 0)
			finding(c, RULE_METADATA, ev->line, ev->col,
				"M %s without a non-empty string args.name: Perfetto ignores "
				"it (the track keeps no name)",
				shown(b, sizeof(b), &ev->name));
	} else if (trace_value_is(&ev->name, "process_sort_index") ||
		   trace_value_is(&ev->name, "thread_sort_index")) {
		a = trace_event_arg(ev, "sort_index");
		if (a == NULL || !is_integer(a))
			finding(c, RULE_METADATA, ev->line, ev->col,
				"M %s without an integer args.sort_index: Perfetto ignores it (the "
				"tracks keep their default order)",
				shown(b, sizeof(b), &ev->name));
	} else if (catapult_metadata(&ev->name)) {
		note(c, RULE_METADATA, ev->line, ev->col,
		     "M %s: Catapult reads it, Perfetto ignores it, no viewer warns",
		     shown(b, sizeof(b), &ev->name));
	} else {
		finding(c, RULE_METADATA, ev->line, ev->col,
			"M %s: Catapult warns \"Unrecognized metadata name\" (Perfetto ignores it; "
			"it reads process_name, thread_name, process_sort_index and "
			"thread_sort_index)",
			shown(b, sizeof(b), &ev->name));
	}
}

static void check_counter(struct check *c, const struct trace_event *ev)
{
	char b[96];

	if (ev->nargs == 0) {
		finding(c, RULE_COUNTER_ARGS, ev->line, ev->col,
			"C %s without args: a counter needs at least one numeric series",
			shown(b, sizeof(b), &ev->name));
		return;
	}
	for (size_t i = 0; i < ev->nargs; i++) {
		if (ev->arg[i].value.type != TRACE_NUMBER) {
			finding(c, RULE_COUNTER_ARGS, ev->line, ev->col,
				"C %s: args.%s is %s, not a number", shown(b, sizeof(b), &ev->name),
				ev->arg[i].key,
				ev->arg[i].value.type == TRACE_STRING ? "a string"
								      : "not a number");
			return;
		}
	}
}

static void check_event(struct check *c, const struct trace_event *ev)
{
	struct thread_state *th = threads_of(&c->threads, ev);
	struct check_thread *ct;
	int64_t end;
	char b[96];

	if (th == NULL) {
		/* Past the state bound, a new thread's events are checked alone. */
		if (threads_refused(&c->threads))
			check_fields(c, ev);
		else
			c->nomem = true;
		return;
	}
	ct = thread_extra(th);
	check_fields(c, ev);
	switch (ev->phase) {
	case 'B':
		check_be_order(c, ct, ev);
		check_begin(c, th, ev);
		if (ev->has_ts)
			slice_began(ct, ev->ts_ns);
		break;
	case 'E':
		check_be_order(c, ct, ev);
		check_end(c, th, ct, ev);
		break;
	case 'X':
		if (ev->has_ts)
			slice_began(ct, ev->ts_ns);
		if (ev->has_ts && ev->has_dur && ev->dur_ns >= 0 && x_end(c, ev, &end))
			slice_closed(ct, ev->ts_ns, end);
		break;
	case 'i':
	case 'I':
		if (ev->s.type != TRACE_ABSENT && !trace_value_is(&ev->s, "g") &&
		    !trace_value_is(&ev->s, "p") && !trace_value_is(&ev->s, "t"))
			finding(c, RULE_INSTANT_SCOPE, ev->line, ev->col,
				"instant scope \"s\" %s is not \"g\", \"p\" or \"t\"",
				shown(b, sizeof(b), &ev->s));
		break;
	case 'C':
		check_counter(c, ev);
		break;
	case 'b':
	case 'e':
	case 'n':
		check_async(c, ev);
		break;
	case 's':
	case 't':
	case 'f':
		check_flow(c, th, ct, ev);
		break;
	case 'M':
		check_metadata(c, ev);
		break;
	default:
		break;
	}
}

/* What is still open when the events end. */
static void check_leftovers(struct check *c)
{
	char n[96], k[96];

	if (c->threads.budget.refused > 0)
		finding(c, RULE_STATE_LIMIT, 0, 0,
			"%" PRIu64 " threads, open slices, flows or async spans past the bound of "
			"%" PRIu64 " items or %" PRIu64
			" MiB were not kept: their events' nesting, "
			"flows and spans are not checked",
			c->threads.budget.refused, STATE_MAX_ITEMS, STATE_MAX_BYTES >> 20);

	for (struct thread_state *th = threads_first(&c->threads); th != NULL;
	     th = threads_next(th)) {
		struct check_thread *ct = thread_extra(th);

		for (size_t i = th->depth; i-- > 0;) {
			const struct open_slice *s = &th->open[i];

			finding(c, RULE_UNENDED, s->line, 1,
				"B %s (cat %s) on thread %" PRId64 "/%" PRId64
				" never ended: the viewers show \"did not end\"",
				shown_str(n, sizeof(n), s->name, s->name_len),
				shown_str(k, sizeof(k), s->cat, s->cat_len), th->pid, th->tid);
		}
		for (size_t i = 0; i < ct->npending; i++)
			report_pending(c, th, &ct->pending[i]);
	}
	for (struct async_state *as = table_first(&c->async); as != NULL; as = table_next(as))
		finding(c, RULE_ASYNC_UNMATCHED, as->line, as->col,
			"b %s never ended (%" PRIu64 " open)", as->label != NULL ? as->label : "",
			as->open);
}

/*
 * Perfetto's sniffer (GuessTraceType(), trace_type.cc): the first
 * kGuessTraceMaxLookahead bytes with all whitespace removed must begin {" or [{".
 * FORMAT.md says 128 bytes; Perfetto's source says 64. A byte-order mark is the bom
 * rule's: skipped here.
 */
#define SNIFF_BYTES 64

static bool sniffed_as_json(const struct trace_status *st)
{
	size_t i = st->head_len >= 3 && memcmp(st->head, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
	size_t end = i + SNIFF_BYTES < st->head_len ? i + SNIFF_BYTES : st->head_len;
	char got[3];
	size_t n = 0;

	for (; i < end && n < sizeof(got); i++) {
		unsigned char ch = st->head[i];

		if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r' && ch != '\v' && ch != '\f')
			got[n++] = (char)ch;
	}
	if (n >= 2 && got[0] == '{' && got[1] == '"')
		return true;
	return n == 3 && memcmp(got, "[{\"", 3) == 0;
}

/* The file as a whole, from the reader's status. */
static void check_file(struct check *c, const struct trace_status *st)
{
	if ((st->form == TRACE_FORM_ARRAY || st->form == TRACE_FORM_OBJECT) && st->events > 0 &&
	    !sniffed_as_json(st))
		finding(c, RULE_FILE_START, 1, 1,
			"the first %d bytes, blanks removed, do not begin %s: Perfetto's sniffer "
			"does not recognise the file as JSON",
			SNIFF_BYTES, st->form == TRACE_FORM_ARRAY ? "[{\"" : "{\"");
	if (st->cut && st->form == TRACE_FORM_OBJECT)
		finding(c, RULE_OBJECT_CUT, 0, 0,
			"the object form {\"traceEvents\":[...]} cut short: Perfetto and the "
			"others refuse the whole file");
	if (st->gzip_cut)
		finding(c, RULE_GZIP, 0, 0,
			"the last gzip member is cut short: its whole events were read");
	if (st->cut_in_event)
		finding(c, RULE_PARTIAL_EVENT, 0, 0,
			"the file ends inside an event (%" PRIu64
			" bytes, not read): Catapult and speedscope fail on it",
			st->cut_bytes);
	if (st->cut)
		finding(c, RULE_CUT, 0, 0,
			"the file ends after %" PRIu64
			" event%s without its closing ']': Perfetto, Catapult and speedscope "
			"load it, DevTools and JSON.parse do not ('ringtrace check --repair' "
			"completes it)",
			st->events, st->events == 1 ? "" : "s");
	if (st->events == 0 && (st->complete || st->cut) && c->count[RULE_EMPTY] == 0)
		finding(c, RULE_EMPTY, 0, 0, "no events: the viewers refuse an empty trace");
}

static void free_state(struct check *c)
{
	for (struct thread_state *th = threads_first(&c->threads); th != NULL;
	     th = threads_next(th))
		free(((struct check_thread *)thread_extra(th))->pending);
	threads_destroy(&c->threads);
	for (struct async_state *as = table_first(&c->async); as != NULL; as = table_next(as))
		free(as->label);
	table_destroy(&c->async);
	for (struct flow_state *fs = table_first(&c->flows); fs != NULL; fs = table_next(fs)) {
		free(fs->name);
		free(fs->cat);
	}
	table_destroy(&c->flows);
	buf_free(&c->key);
}

static void summary(const struct check *c, const struct trace_status *st, size_t threads,
		    bool stopped)
{
	static const char *const forms[] = {
		[TRACE_FORM_NONE] = "no JSON value",
		[TRACE_FORM_ARRAY] = "bare array",
		[TRACE_FORM_OBJECT] = "object form",
	};

	printf("%s: %" PRIu64 " event%s on %s%zu thread%s (" TRACE_COUNTS_WHAT "); %s%s", c->file,
	       st->events, st->events == 1 ? "" : "s", threads_count_floor(&c->threads), threads,
	       threads == 1 ? "" : "s", forms[st->form], st->gzip ? ", gzip" : "");
	if (stopped)
		printf(", read stopped at an error");
	else if (st->complete)
		printf(", complete");
	else if (st->cut)
		printf(", cut short");
	if (c->total == 0) {
		printf("; no findings");
	} else {
		printf("; %" PRIu64 " finding%s:", c->total, c->total == 1 ? "" : "s");
		for (int r = 0, n = 0; r < RULE_COUNT; r++) {
			if (c->count[r] > 0)
				printf("%s %s %" PRIu64, n++ > 0 ? "," : "", rules[r].name,
				       c->count[r]);
		}
	}
	if (c->opt->notes && c->total_notes > 0) {
		printf("; %" PRIu64 " note%s:", c->total_notes, c->total_notes == 1 ? "" : "s");
		for (int r = 0, n = 0; r < RULE_COUNT; r++) {
			if (c->notes[r] > 0)
				printf("%s %s %" PRIu64, n++ > 0 ? "," : "", rules[r].name,
				       c->notes[r]);
		}
	}
	putchar('\n');
}

/* Check one file. Returns the exit status for it. */
static int check_one(const char *path, const struct check_options *opt)
{
	struct progress bar;
	struct check c = {.opt = opt};
	struct trace_options ro = {.flags = TRACE_READ_CHECK_STRINGS,
				   .on_issue = on_issue,
				   .ctx = &c,
				   .progress = &bar};
	const struct trace_status *st;
	const struct trace_event *ev;
	struct trace *r;
	int rc, status;

	if (pf_sniff_path(path) == 1)
		return pf_check_file(path, opt->quiet, opt->notes, opt->max_per_rule,
				     cli_max_event_bytes());
	progress_init(&bar, "checking");
	r = cli_open_trace("check", path, &ro);
	if (r == NULL)
		return CLI_ERROR;
	c.file = trace_name(r);
	threads_init(&c.threads, sizeof(struct check_thread));
	table_init(&c.async, sizeof(struct async_state));
	table_init(&c.flows, sizeof(struct flow_state));
	while ((rc = trace_next(r, &ev)) == 1 && !c.nomem)
		check_event(&c, ev);
	progress_finish(&bar);
	st = trace_status(r);
	status = CLI_OK;
	if (c.nomem) {
		cli_error("check", "%s: out of memory", c.file);
		status = CLI_ERROR;
	} else if (rc < 0 && (st->error == TRACE_ERR_SYNTAX || st->error == TRACE_ERR_GZIP)) {
		finding(&c, st->error == TRACE_ERR_GZIP ? RULE_GZIP : RULE_JSON, st->line, st->col,
			"%s", st->what);
	} else if (rc < 0) {
		cli_error("check", "%s", st->message);
		status = CLI_ERROR;
	}
	if (status == CLI_OK) {
		if (rc == 0) {
			check_leftovers(&c);
			check_file(&c, st);
		}
		summary(&c, st, threads_count(&c.threads), rc < 0);
		status = c.total > 0 ? CLI_FINDINGS : CLI_OK;
	}
	free_state(&c);
	trace_close(r);
	return status;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: ringtrace check [options] FILE...\n"
		   "       ringtrace check --repair [-o OUT] FILE\n"
		   "\n"
		   "Reads each trace (.json or .json.gz; - is standard input) and reports what\n"
		   "the viewers would refuse or misread: one line per finding,\n"
		   "FILE:LINE:COL: RULE: message, then a summary line per file. A Perfetto\n"
		   "trace (.pftrace, plain or gzip, found by its bytes) is checked by the\n"
		   "protobuf rules instead: FILE:@OFFSET: RULE: packet N: message.\n"
		   "\n"
		   "With --repair, writes a complete copy of a FILE that was cut short instead:\n"
		   "the partial last event dropped, open B slices ended at the latest time of\n"
		   "their thread, an end marker that records the repair, the array closed.\n"
		   "\n"
		   "options:\n"
		   "  -q, --quiet            print only the summary line of each file\n"
		   "  -n, --max-per-rule N   print at most N findings of each rule (default 20;\n"
		   "                         0: all of them)\n"
		   "      --notes            print the notes too: what the rules see but no\n"
		   "                         viewer acts on (never in the exit status)\n"
		   "      --rules            list the rules, with why each matters, and exit\n"
		   "  -r, --repair           repair instead of checking (one FILE)\n"
		   "  -o, --output OUT       with --repair: where to write; gzip when OUT ends in\n"
		   "                         .gz; - for standard output (default: FILE with\n"
		   "                         .repaired before .json)\n"
		   "  -h, --help             this help\n"
		   "\n"
		   "exit status: 0 no findings (--repair: the copy is written), 1 findings,\n"
		   "2 usage error, unreadable input or failed output.\n");
}

int cmd_check(int argc, char **argv)
{
	enum { OPT_RULES = 256, OPT_NOTES };
	static const struct option longopts[] = {
		{"quiet", no_argument, NULL, 'q'},
		{"max-per-rule", required_argument, NULL, 'n'},
		{"rules", no_argument, NULL, OPT_RULES},
		{"notes", no_argument, NULL, OPT_NOTES},
		{"repair", no_argument, NULL, 'r'},
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct check_options opt = {.max_per_rule = 20};
	const char *output = NULL;
	bool repair = false;
	int ch, status = CLI_OK;

	while ((ch = getopt_long(argc, argv, "qn:ro:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'q':
			opt.quiet = true;
			break;
		case 'n':
			if (cli_parse_u64(optarg, &opt.max_per_rule))
				return cli_usage_error("check",
						       "--max-per-rule wants a number, not "
						       "'%s'",
						       optarg);
			break;
		case OPT_RULES:
			for (int r = 0; r < RULE_COUNT; r++)
				printf("%-19s %s\n%-19s   why: %s\n", rules[r].name, rules[r].what,
				       "", rules[r].why);
			pf_check_list_rules();
			return CLI_OK;
		case OPT_NOTES:
			opt.notes = true;
			break;
		case 'r':
			repair = true;
			break;
		case 'o':
			output = optarg;
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			return cli_usage_error("check", "unknown option");
		}
	}
	if (optind == argc)
		return cli_usage_error("check", "no FILE to check");
	if (repair) {
		if (argc - optind != 1)
			return cli_usage_error("check", "--repair takes one FILE");
		return repair_command(argv[optind], output);
	}
	if (output != NULL)
		return cli_usage_error("check", "-o goes with --repair");
	for (int i = optind; i < argc; i++) {
		int s = check_one(argv[i], &opt);

		if (s > status)
			status = s;
	}
	return status;
}
