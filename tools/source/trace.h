/* SPDX-License-Identifier: MIT */
/*
 * One pull interface for every trace input: the one way the ringtrace tools read a
 * trace. trace_open() takes a path, or "-" for standard input (nothing needs to
 * seek: a pipe reads as a file does), and tells the format by the first bytes, never
 * the name; trace_next() hands out one event at a time (source/event.h), whatever
 * the format, with memory bounded by the largest single event (TRACE_MAX_EVENT_BYTES)
 * or packet, never by the file.
 *
 * Chrome Trace Event Format JSON:
 * - the bare-array form "[{...},{...}]" (what the recorder writes, one event per
 *   line) and the object form {"traceEvents":[...], "otherData":{...}, ...} (the
 *   events of "traceEvents"; the other top-level keys are skipped, or handed to
 *   on_top_level);
 * - plain text or gzip (found by its magic bytes, not the name), including the
 *   recorder's files of many concatenated members, one per written chunk;
 * - complete files and files cut short by a kill: every whole event is returned, a
 *   partial event at the cut is dropped and counted (a partial last line, or the
 *   part of a cut gzip member after its last whole event); the status says how the
 *   input ended.
 *
 * Strictness. The input must be strict JSON (RFC 8259, through yajl's parser):
 * the first syntax error ends the read with "FILE:LINE:COL: message" and every
 * event before it has been returned. Raw NUL bytes (a hole a crash left in a file)
 * are read as blanks and reported as an issue. A byte-order mark is skipped, and a
 * trailing comma before the final ']' accepted, both reported as issues. Strings
 * are returned as valid UTF-8: invalid sequences become U+FFFD.
 *
 * Perfetto's protobuf trace (.pftrace, plain or gzip; pftrace.h), recognised by its
 * first bytes after gzip (pf_sniff_bytes()): decoded packet by packet, each packet's
 * events being the JSON events `ringtrace convert` writes for it (pf_json.h), parsed
 * as above; no file is written and the input is read once. So its events are a
 * JSON trace's in every field; they say where they are by packet (event.h), and so
 * do its messages: malformed protobuf ends the read with "FILE: packet N at byte O:
 * what", after every event of the packets before it; a file that ends inside a packet
 * is cut (every whole packet's events returned; the status says where). The status
 * describes it as the bare array of those events (form, complete, events_closed);
 * ts is from the start marker's origin when it is the first event, else from the
 * first event's time (convert's origin when it reads from a pipe).
 *
 * Issues are things a reader can get past but a checker wants to hear about; they
 * go to the issue callback, in file order with the events. TRACE_READ_CHECK_STRINGS
 * adds the byte-level string rules of docs/format.md "Strings": raw control bytes (read
 * as blanks so that the parse goes on), invalid UTF-8, and \u escapes of non-ASCII
 * (surrogates above all). Without it a raw control byte is a syntax error.
 *
 * Lines and columns are 1-based; columns count bytes; both are of the text (after
 * gzip), as an editor would show the decompressed file.
 *
 * Thread safety: a trace is used by one thread at a time; distinct traces are
 * independent (no global state).
 */
#ifndef RTR_TOOLS_SOURCE_TRACE_H
#define RTR_TOOLS_SOURCE_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"

struct progress;

/* The largest event read by default, in text bytes (trace_options.max_event_bytes):
 * a larger one is skipped and reported (TRACE_ISSUE_EVENT_TOO_LARGE). */
#define TRACE_MAX_EVENT_BYTES ((uint64_t)16 << 20)

/* The deepest nesting of arrays and objects read. */
#define TRACE_MAX_DEPTH 512

/* Called for each issue, in file order with the events. */
typedef void (*trace_issue_fn)(void *ctx, const struct trace_issue *issue);

/*
 * Called for each top-level key of the object form other than "traceEvents", once
 * its value has been read: the value as compact JSON (like trace_event.json), or
 * json NULL when it is over max_event_bytes (len is then its size, not kept).
 */
typedef void (*trace_top_level_fn)(void *ctx, const char *key, size_t key_len, const char *json,
				   size_t len);

/* trace_options.flags */
#define TRACE_READ_CHECK_STRINGS 1u
/* Small buffers (a quarter of the input and text blocks, an eighth of the events
 * queued): for a tool that holds many readers at once, at some cost in speed. */
#define TRACE_READ_SMALL 2u
/* Every event through the full parser (yajl), none through the fast path: for tests
 * that compare the two. */
#define TRACE_READ_NO_FAST 4u

struct trace_options {
	unsigned flags;
	trace_issue_fn on_issue; /* may be NULL: issues are then only counted */
	void *ctx;
	struct progress *progress;	 /* may be NULL; told the input bytes read */
	uint64_t max_event_bytes;	 /* 0: TRACE_MAX_EVENT_BYTES */
	trace_top_level_fn on_top_level; /* may be NULL: the other keys are skipped */
	void *top_level_ctx;
};

enum trace_form { TRACE_FORM_NONE, TRACE_FORM_ARRAY, TRACE_FORM_OBJECT };

/* What the first bytes said the input is. */
enum trace_format { TRACE_FORMAT_JSON, TRACE_FORMAT_PFTRACE };

/* How the input looked and ended; final once trace_next() returned 0 or -1. */
struct trace_status {
	enum trace_format format; /* known once next() was called */
	enum trace_form form;
	bool complete;		 /* the JSON value closed, and only blanks followed */
	bool cut;		 /* the input ended inside the JSON value (a packet) */
	bool cut_in_event;	 /* ... inside an event (a packet), which was dropped */
	uint64_t cut_bytes;	 /* text bytes of that partial event (packet's bytes) */
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
	/* The error: "FILE:LINE:COL: what", "FILE: packet N at byte O: what" or "FILE:
	 * what". A .pftrace cut inside a packet, with no error, has the cut's here:
	 * "FILE: packet N at byte O: the file ends inside this packet (...)". */
	char message[512];
	const char *what;	 /* the "what" part of message */
	uint64_t line, col;	 /* where, or 0 when the error has no place in the text */
	bool in_packet;		 /* a .pftrace's error or cut, in packet: */
	uint64_t packet, offset; /* its index, and the byte offset (after gzip) */
};

struct trace;

/*
 * Open path ("-": standard input) for reading. options may be NULL. Returns 0 and
 * the trace in *out, or -errno (open failed, -EISDIR, or -ENOMEM); nothing is read
 * yet (the format is told by the first trace_next()). For a .pftrace,
 * max_event_bytes bounds its packets as well.
 */
int trace_open(const char *path, const struct trace_options *options, struct trace **out);

/*
 * The next event. Returns 1 with *ev set; 0 at the end of the events (whole or cut:
 * see the status); -1 on an error (status error and message say which; every event
 * before it has been returned). After 0 or -1 it keeps returning the same.
 */
int trace_next(struct trace *r, const struct trace_event **ev);

const struct trace_status *trace_status(const struct trace *r);

/* The path as given, or "<stdin>" for "-": what messages call the file. */
const char *trace_name(const struct trace *r);

/* Closes the file and frees the trace. r may be NULL. */
void trace_close(struct trace *r);

#endif /* RTR_TOOLS_SOURCE_TRACE_H */
