/* SPDX-License-Identifier: MIT */
/*
 * The JSON encoder's shared pieces: text helpers, the head cache, the line bounds.
 * Do not include outside src/writer/ (json.c, json_meta.c, framing.c).
 */
#ifndef RTR_WRITER_JSON_ENCODER_H
#define RTR_WRITER_JSON_ENCODER_H

#include "common/jsontext.h"
#include "common/jsontext_num.h"
#include "writer/out.h"
#include "writer/writer_internal.h"

#include <string.h>

#define INTERN_ARENA ((size_t)4 << 20)
#define INTERN_SLOTS ((size_t)1 << 16)
#define HEAD_BITS    9 /* the head cache (struct rtr__head) has 1 << HEAD_BITS slots */
#define HEAD_SLOTS   ((size_t)1 << HEAD_BITS)
#define HEAD_TEXT    104u /* longest head kept there */
#define COPY_ESCAPED RTR_JSON_ESCAPE_BOUND(RTR_MAX_COPY)
/* Not a record kind: a B and its E folded into one X line (the drain's folding). */
#define K_SPAN 0x80u
/* Not a record kind: an argument's key, `"key":`, kept in the head cache. */
#define K_ARG_KEY 0x81u
/* Most bytes a line takes besides its strings and arguments. */
#define LINE_FIXED 192

/*
 * The head of an event line, `{"ph":"B","cat":"app","name":"span","ts":`, depends
 * only on the kind and the static strings the record points to: a name and a
 * category, or for RTR__K_SCOPE a call site. So the writer keeps recent heads whole,
 * direct-mapped by (kind, a, b): a hit is one fixed-size copy in place of two intern
 * lookups and four literals. Like the intern cache it trusts a static string never
 * to change, and it is emptied whenever the intern cache is and at each session's
 * start. Heads longer than HEAD_TEXT are encoded every time.
 */
struct rtr__head {
	uint64_t a, b; /* the record's a and b; b is 0 for RTR__K_SCOPE (a duration) */
	uint32_t kind; /* RTR__K_*, K_SPAN or K_ARG_KEY, or 0 for an empty slot */
	uint32_t len;
	char text[HEAD_TEXT]; /* copied in one fixed-size piece: the bytes after len are scratch */
};
_Static_assert(sizeof(struct rtr__head) == 128, "a head is two cache lines");

/* A cached head's text: one fixed-size copy, of as few bytes as take it. */
static inline char *put_head_text(char *p, const struct rtr__head *h)
{
	if (h->len <= 16) /* an argument's key, mostly */
		memcpy(p, h->text, 16);
	else if (h->len <= 48) /* a span's head with short names */
		memcpy(p, h->text, 48);
	else
		memcpy(p, h->text, HEAD_TEXT);
	return p + h->len;
}

static inline size_t head_slot(uint32_t kind, uint64_t a, uint64_t b)
{
	/* Fibonacci hashing: the top bits of the product depend on every bit of the key */
	uint64_t x = (a ^ (b * 0x9e3779b97f4a7c15ull) ^ kind) * 0x9e3779b97f4a7c15ull;

	return (size_t)(x >> (64 - HEAD_BITS));
}

#define PUT_LIT(p, lit) (memcpy((p), (lit), sizeof(lit) - 1), (p) + sizeof(lit) - 1)

static inline char *put(char *p, const char *s, size_t len)
{
	memcpy(p, s, len);
	return p + len;
}

static inline char *put_static(struct rtr__writer *w, char *p, const char *s)
{
	struct rtr__istr is = rtr__intern_static(&w->json.intern, s);

	return put(p, is.bytes, is.len);
}

static inline char *put_pid_tid(struct rtr__writer *w, char *p, int32_t tid)
{
	p = put(p, w->json.pid_tid, w->json.pid_tid_len);
	return rtr__json_u64(p, (uint64_t)(uint32_t)tid);
}

/* The thread's ids without the line's end, for lines that add arguments. */
static inline char *put_ids_open(struct rtr__writer *w, char *p)
{
	return put(p, w->json.ids, w->json.ids_len - (sizeof("},\n") - 1));
}

/* An event line's head, from `{"ph":` through `"ts":`, encoded afresh (json.c); kind
 * is rec->kind, or K_SPAN for a B written with its E. */
char *rtr__json_encode_head(struct rtr__writer *w, char *p, uint32_t kind,
			    const struct rtr__rec *rec, const struct rtr__rec_view *v);

/* An event line's head, from the head cache when it can (see struct rtr__head). */
static inline char *put_head(struct rtr__writer *w, char *p, uint32_t kind,
			     const struct rtr__rec *rec, const struct rtr__rec_view *v)
{
	if (RTR_UNLIKELY(rec->flags & RTR__F_NAME_COPY))
		return rtr__json_encode_head(w, p, kind, rec, v); /* a copied name: no static key */

	uint64_t b = kind == RTR__K_SCOPE ? 0 : rec->b;
	struct rtr__head *h = &w->json.heads[head_slot(kind, rec->a, b)];

	if (RTR_LIKELY(h->kind == kind && h->a == rec->a && h->b == b))
		return put_head_text(p, h);
	char *end = rtr__json_encode_head(w, p, kind, rec, v);
	size_t len = (size_t)(end - p);
	if (len <= HEAD_TEXT) {
		h->a = rec->a;
		h->b = b;
		h->kind = kind;
		h->len = (uint32_t)len;
		memcpy(h->text, p, len);
	}
	return end;
}

/* json_meta.c */

/* A thread_name line; `events` 1 when it records an rtr_thread_name() call. */
void rtr__json_thread_name(struct rtr__writer *w, const struct rtr__ring *r, const char *name,
			   size_t len, uint64_t events);
/* Give the ring the name rtr_thread_name() gave its thread (cut on a character). */
void rtr__ring_rename(struct rtr__ring *r, const char *name, size_t len);
/* The program's process label and sort index, once per file. */
void rtr__json_process_meta(struct rtr__writer *w);
/* An RTR__K_META record. False for an unknown `what`, having written nothing. */
bool rtr__json_meta_record(struct rtr__writer *w, const struct rtr__ring *r,
			   const struct rtr__rec *rec, const struct rtr__rec_view *v);
/* Name the track's process (once per file) and lane `k` (once per session). */
void rtr__json_track_meta(struct rtr__writer *w, struct rtr_track *t, unsigned k);
/* Kinds RTR__K_MEM_ALLOC .. RTR__K_STACK. word: a memory event's device. */
void rtr__json_memstack(struct rtr__writer *w, struct rtr__ring *r, const struct rtr__rec *rec,
			uint32_t pos, uint64_t word);
/* rtr__format.meta */
void rtr__json_meta(struct rtr__writer *w, const struct rtr__ring *r, int what, int64_t value);

#endif
