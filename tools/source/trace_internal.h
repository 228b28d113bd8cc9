/* SPDX-License-Identifier: MIT */
/*
 * The insides of a trace (trace.h), shared by the files of tools/source/ that read
 * one; not for the tools themselves. The design is in trace.c.
 *
 * Who does what:
 *   trace.c         the pull interface: open, sniff the input, hand out the queue
 *   input.c         the bytes of a file or standard input, plain or gzip
 *   json_text.c     the text in blocks and slices, NUL runs, positions, the queue,
 *                   how the input ended
 *   json_scan.c     the walk of the top level (yajl callbacks), the event array's
 *                   fast path and long events
 *   json_slow.c     the yajl path: feeding, its errors, events built from its tokens
 *   json_strings.c  the byte scanner of TRACE_READ_CHECK_STRINGS
 *   pf_source.c     a .pftrace as text: its packets' JSON events (pf_json.h), and
 *                   which packet each came from
 *
 * Functions shared between those files are tr_*; each returns what its comment at
 * the definition says. None is thread-safe: a trace is used by one thread at a time.
 */
#ifndef RTR_TOOLS_SOURCE_TRACE_INTERNAL_H
#define RTR_TOOLS_SOURCE_TRACE_INTERNAL_H

#include "event_parse.h"
#include "input.h"
#include "json.h"
#include "trace.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_parse.h>

#define SLICE_BYTES (16 * 1024) /* bounds the events queued at once */
/* The sizes under TRACE_READ_SMALL (a merge of many files holds a trace each). */
#define INPUT_BYTES	  (64 * 1024)
#define TEXT_BYTES	  (64 * 1024)
#define SMALL_INPUT_BYTES (16 * 1024)
#define SMALL_TEXT_BYTES  (16 * 1024)
#define SMALL_SLICE_BYTES (2 * 1024)

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
	const char *name; /* path, or "<stdin>" */
	struct trace_options opt;
	struct trace_status st;
	bool done;	     /* no more steps: the input ended, or an error */
	uint64_t non_events; /* elements of the event array that are not objects */
	bool failed;	     /* the error is in st */

	/* Input: the file's bytes (plain or gzip), or the JSON of a .pftrace's packets. */
	struct input in;
	bool started;	      /* the first block was asked for */
	bool sniffed;	      /* the format is known */
	struct pf_source *pf; /* a .pftrace's: its packets' JSON is the text */
	bool trailing_told;   /* the gzip trailer's issue was queued */
	size_t slice_bytes;   /* SLICE_BYTES or SMALL_SLICE_BYTES */

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

static inline bool is_blank(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* json_text.c */
void tr_locate(struct trace *r, uint64_t abs, uint64_t *line, uint64_t *col);
uint64_t tr_here(const struct trace *r);
void tr_fail(struct trace *r, enum trace_error kind, bool at, uint64_t abs, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
int tr_fail_nomem(struct trace *r);
struct item *tr_queue_push(struct trace *r);
int tr_make_issue(struct trace *r, struct item *it, enum trace_issue_kind kind, uint64_t line,
		  uint64_t col, const char *fmt, va_list ap) __attribute__((format(printf, 6, 0)));
int tr_queue_issue(struct trace *r, enum trace_issue_kind kind, uint64_t line, uint64_t col,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void tr_step(struct trace *r);

/* json_scan.c */
yajl_handle tr_parser_new(struct trace *r);
bool tr_recover_trailing_comma(struct trace *r, const unsigned char *p, size_t consumed);
int tr_resume_yajl(struct trace *r, enum fast_state at);
int tr_parse_text(struct trace *r, unsigned char *p, size_t len, uint64_t abs);

/* json_slow.c */
extern const size_t tr_field_offsets[TRACE_F_COUNT];
int tr_yajl_feed(struct trace *r, const unsigned char *p, size_t len, uint64_t abs, size_t *used);
void tr_building_reset(struct building *b);
void tr_building_free(struct building *b);
bool tr_level_push(struct level **lv, size_t *nlv, size_t *cap, char c);
int tr_event_begin(struct trace *r);
int tr_ev_open(struct trace *r, char c);
int tr_ev_close(struct trace *r, char c);
int tr_ev_key(struct trace *r, const unsigned char *k, size_t len);
int tr_ev_scalar(struct trace *r, enum trace_type t, const void *p, size_t len);

/* json_strings.c */
int tr_scan_and_feed(struct trace *r, unsigned char *p, size_t len, uint64_t abs);

/* trace.c */
int tr_read_text(struct trace *r, unsigned char **p, size_t *len);

/* pf_source.c: the text of a .pftrace read from r->in, for the JSON walk. */
int pf_source_open(struct trace *r);
void pf_source_free(struct pf_source *s);
/* The next block of its text (*len 0 at the end). 0, or -1 (r failed). */
int pf_source_text(struct trace *r, unsigned char **p, size_t *len);
/* The packet the event on text line `line` came from. false when not known. */
bool pf_source_place(struct trace *r, uint64_t line, uint64_t *packet, uint64_t *offset);
/* The events before text line `line` are handed out: where they came from is let go. */
void pf_source_forget(struct trace *r, uint64_t line);
/* The text was all read: how the .pftrace ended (cut, or the decoder's error) into
 * the status; the error, if any, fails r. */
void pf_source_end(struct trace *r);

#endif /* RTR_TOOLS_SOURCE_TRACE_INTERNAL_H */
