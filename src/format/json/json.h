/* SPDX-License-Identifier: MIT */
/*
 * The JSON format: Chrome's Trace Event Format, the bare-array form, one event per
 * line (docs/format.md). Its rooms:
 *
 *	events.c	the batch of events: one line each, the common ones on short paths
 *	text.c		an event's head and arguments, the head cache (text.h)
 *	lines.c		the other lines: metadata, memory, stack samples, track names,
 *			the writer's own lines about a thread, a cut's lines
 *	file.c		the file around the lines: "[", the markers, "]"; the format's
 *			table (struct rtr__format) and its state
 *	intern.c	the intern cache: strings escaped once, copied as bytes ever after
 *
 * and this header, what they share: the state, the head cache, the text helpers.
 * Only the writer's format.h is included: this format knows events, not records.
 */
#ifndef RTR_FORMAT_JSON_H
#define RTR_FORMAT_JSON_H

#include "common/jsontext.h"
#include "common/jsontext_num.h"
#include "format/json/intern.h"
#include "writer/format.h"

#include <string.h>

#define HEAD_BITS  9 /* the head cache (struct rtr__json_head) has 1 << HEAD_BITS slots */
#define HEAD_SLOTS ((size_t)1 << HEAD_BITS)
#define HEAD_TEXT  104u /* longest head kept there */
/* Not an event type: an argument's key, `"key":`, kept in the head cache. */
#define KEY_ARG_KEY 0xffu
/* Most bytes a line takes besides its strings and arguments. */
#define LINE_FIXED 192
/* Most bytes one argument takes besides its blob's escaping: key, value, punctuation
 * (a segment's room is given a line at a time by these bounds: out.c). */
#define ARG_BOUND (RTR_INTERN_MAX_ESCAPED + RTR_JSONTEXT_ESCAPE_BOUND(RTR_MAX_COPY) + 40)

/*
 * The head of an event line, `{"ph":"B","cat":"app","name":"span","ts":`, depends
 * only on the event's type (and an instant's scope) and the static strings of its
 * name and category, or the code address of a function's slice. So the format keeps
 * recent heads whole, direct-mapped by (key, a, b): a hit is one fixed-size copy in
 * place of two intern lookups and four literals. Like the intern cache it trusts a
 * static string never to change, and it is emptied whenever the intern cache is and
 * at each session's start. Heads longer than HEAD_TEXT are encoded every time.
 */
struct rtr__json_head {
	uint64_t a, b; /* the name's pointer (a function's address), the category's */
	uint32_t key;  /* head_key(), or KEY_ARG_KEY; 0 for an empty slot */
	uint32_t len;
	char text[HEAD_TEXT]; /* copied in one fixed-size piece: the bytes after len are scratch */
};
_Static_assert(sizeof(struct rtr__json_head) == 128, "a head is two cache lines");

/* The format's session state (w->fmt_state). */
struct rtr__json {
	struct rtr__intern intern;
	struct rtr__json_head *heads; /* HEAD_SLOTS */
	uint64_t heads_epoch;	      /* intern.resets when the heads were last emptied */
	char pid_tid[48];	      /* ,"pid":P,"tid": */
	size_t pid_tid_len;
	int64_t ids_tid; /* tid whose ids ends the lines now; -1: none */
	size_t ids_len;
	/* ,"pid":P,"tid":T},\n for ids_tid, copied whole: at most 25 bytes of pid_tid,
	 * 20 that rtr__jsontext_u64() may write and the 3 of the end */
	char ids[48];
	/* the latest event's ts in whole microseconds, as text: events close in time
	 * share it, or all of it but the last two digits (rtr__jsontext_us_near()) */
	struct rtr__jsontext_us_cache ts_text;
	/* The files the process label and sort index are in: the latest, and the one
	 * before it (a snapshot is a file written while the window's goes on). */
	uint64_t process_meta_file, prev_meta_file;
};

static inline struct rtr__json *json_of(struct rtr__writer *w)
{
	return (struct rtr__json *)w->fmt_state;
}

#define PUT_LIT(p, lit) (memcpy((p), (lit), sizeof(lit) - 1), (p) + sizeof(lit) - 1)

static inline char *put(char *p, const char *s, size_t len)
{
	memcpy(p, s, len);
	return p + len;
}

static inline char *put_static(struct rtr__json *j, char *p, const char *s)
{
	struct rtr__istr is = rtr__intern_static(&j->intern, s);

	return put(p, is.bytes, is.len);
}

/* `"` s `"`, escaped (at most 1024 bytes of s). */
static inline char *put_escaped_str(char *p, const char *s)
{
	*p++ = '"';
	p = rtr__jsontext_escape(p, s, strnlen(s, 1024));
	*p++ = '"';
	return p;
}

static inline char *put_pid_tid(struct rtr__json *j, char *p, int32_t tid)
{
	p = put(p, j->pid_tid, j->pid_tid_len);
	return rtr__jsontext_u64(p, (uint64_t)(uint32_t)tid);
}

/* `0x` and the hex digits of an id, quoted: viewers take ids as strings or integers,
 * and a 64-bit integer would lose bits in a JavaScript viewer. */
static inline char *put_hex_id(char *p, uint64_t id)
{
	static const char digits[] = "0123456789abcdef";
	int shift = 60;

	p = PUT_LIT(p, ",\"id\":\"0x");
	while (shift > 0 && ((id >> shift) & 0xf) == 0)
		shift -= 4;
	for (; shift >= 0; shift -= 4)
		*p++ = digits[(id >> shift) & 0xf];
	*p++ = '"';
	return p;
}

/* The thread's ids without the line's end, for lines that add arguments. */
static inline char *put_ids_open(struct rtr__json *j, char *p)
{
	return put(p, j->ids, j->ids_len - (sizeof("},\n") - 1));
}

/* The trace's JSON times are microseconds from its origin. */
static inline uint64_t rel_ns(struct rtr__writer *w, uint64_t ns)
{
	return rtr__writer_rel_ns(w, ns);
}

/* lines.c */

/* The line of an event that is not a common one: metadata, memory, a stack sample.
 * Committed. */
void rtr__json_other(struct rtr__writer *w, struct rtr__ring *r, const struct rtr__event *ev);
/* Name the track's process (once per file) and the lane `k` (once per file). */
void rtr__json_track_meta(struct rtr__writer *w, struct rtr_track *t, unsigned k);
/* The program's process label and sort index, once per file. */
void rtr__json_process_meta(struct rtr__writer *w);
/* rtr__format.meta and rtr__format.cut */
void rtr__json_meta(struct rtr__writer *w, struct rtr__ring *r, int what, int64_t value);
bool rtr__json_cut(struct rtr__writer *w, struct rtr__ring *r, const struct rtr__event *ev,
		   int what, size_t *budget);

/* events.c: rtr__format.events and begin_ring */
uint64_t rtr__json_events(struct rtr__writer *w, struct rtr__batch *b);
void rtr__json_begin_ring(struct rtr__writer *w, struct rtr__ring *r);

#endif
