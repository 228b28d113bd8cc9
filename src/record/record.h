/* SPDX-License-Identifier: MIT */
/*
 * The record format, for both sides: what a producer writes into its ring
 * (src/producer/) and what the writer reads back (src/writer/). Nothing else in the
 * library knows the layout of the continuation bytes. Here: the kind table, the
 * layout, the fixed-shape encoders and the framing checks, inline; encode.h: the
 * general path's encoder (inline, for events.c); record.c: the decoder.
 *
 * An event is one 32-byte header record (struct rtr__rec, include/ringtrace/emit.h),
 * then rec->ext continuation bytes in the records after it, rounded up to whole
 * records, published together. What the continuation holds depends on the kind:
 *
 * RTR__X_FIELDS, in this order, each part only when the header says so:
 *
 *	[u64 track]		the struct rtr_track *, when RTR__F_TRACK
 *	[u64 word]		when the kind has a word (the table below): a counter's
 *				value, a complete event's duration, a flow or async id,
 *				a memory event's device, a META value
 *	[u32 len][len bytes]	the name, when RTR__F_NAME_COPY
 *	[u8 type] x nargs	RTR_ARG_TYPE_*
 *	[u64 key][u64 value] x nargs	value: the number or bits; a static string's
 *				pointer; a copied string's length (UINT64_MAX: NULL);
 *				an array's or list's count; a value's length
 *	the blobs, in argument order: a copied string's bytes; an I64_ARRAY's
 *	count x i64; an I64_LISTS's count x u32 lengths, then their sum x i64; a
 *	STR_ARRAY's count x {u32 length (UINT32_MAX: NULL), the bytes}; a VALUE's
 *	bytes (<ringtrace/value.h>; read by record/value.h)
 *
 * RTR__X_FRAMES (stack samples): ext / 8 return addresses, u64 each, the first at
 * the first continuation record, so that a wrap of the ring falls between records.
 *
 * The kind table. RTR__RECORD_KINDS lists every kind once, in the order of the
 * RTR__K_* enum, which stays in the public emit.h because the inline event calls
 * write kinds themselves; the static asserts below tie the two together, so that a
 * kind added to one and not the other does not build. Adding a kind is one line in
 * the table (and its enum constant); the encoder and the decoder then agree on
 * whether it carries a word, and the JSON encoder on its phase letter.
 *
 * The writer never trusts a record (a program may scribble over its ring): a header
 * is framed (rtr__rec_framed()) before anything after it is read, and continuation
 * bytes that do not hold what the header says do not decode (rtr__rec_decode()).
 * The inline paths of emit.h write header-only events and one-word events (a word
 * in the first 8 bytes of the next record) by hand: the layout above, fixed by the
 * asserts at the end.
 */
#ifndef RTR_RECORD_H
#define RTR_RECORD_H

#include <ringtrace.h>

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * X(kind, phase, word, ext):
 *	kind	RTR__K_<kind>
 *	phase	the Trace Event phase of its line ('M': metadata; the writer adds an
 *		instant's scope, a flow end's binding, a memory event's counter)
 *	word	NONE, VALUE (a number), ID (shown as "id"), or UNLESS_COPY (a value,
 *		or with RTR__F_NAME_COPY a copied name in its place)
 *	ext	FIELDS or FRAMES: the continuation layout above
 */
#define RTR__RECORD_KINDS(X)               \
	X(BEGIN, 'B', NONE, FIELDS)        \
	X(END, 'E', NONE, FIELDS)          \
	X(INSTANT, 'i', NONE, FIELDS)      \
	X(COUNTER_I64, 'C', VALUE, FIELDS) \
	X(COUNTER_F64, 'C', VALUE, FIELDS) \
	X(COMPLETE, 'X', VALUE, FIELDS)    \
	X(SCOPE, 'X', NONE, FIELDS)        \
	X(THREAD_NAME, 'M', NONE, FIELDS)  \
	X(COUNTERS, 'C', NONE, FIELDS)     \
	X(FLOW_START, 's', ID, FIELDS)     \
	X(FLOW_STEP, 't', ID, FIELDS)      \
	X(FLOW_END, 'f', ID, FIELDS)       \
	X(ASYNC_BEGIN, 'b', ID, FIELDS)    \
	X(ASYNC_INSTANT, 'n', ID, FIELDS)  \
	X(ASYNC_END, 'e', ID, FIELDS)      \
	X(MEM_ALLOC, 'i', VALUE, FIELDS)   \
	X(MEM_FREE, 'i', VALUE, FIELDS)    \
	X(STACK, 'i', NONE, FRAMES)        \
	X(META, 'M', UNLESS_COPY, FIELDS)  \
	X(SLICE_ARG, 'E', NONE, FIELDS)

enum { RTR__W_NONE, RTR__W_VALUE, RTR__W_ID, RTR__W_UNLESS_COPY };
enum { RTR__X_FIELDS, RTR__X_FRAMES };

/* The table's own numbering: entry n is kind n. */
enum {
	RTR__KT_NONE_ = 0,
#define RTR__KT_(kind, ph, word, ext) RTR__KT_##kind,
	RTR__RECORD_KINDS(RTR__KT_)
#undef RTR__KT_
		RTR__KT_COUNT_
};

/* The table matches the enum, entry for entry, and covers it. */
#define RTR__KT_CHECK_(kind, ph, word, ext)                       \
	_Static_assert((int)RTR__KT_##kind == (int)RTR__K_##kind, \
		       "RTR__RECORD_KINDS is out of step with RTR__K_" #kind);
RTR__RECORD_KINDS(RTR__KT_CHECK_)
#undef RTR__KT_CHECK_
_Static_assert((int)RTR__KT_COUNT_ - 1 == (int)RTR__K_LAST,
	       "RTR__RECORD_KINDS must list every RTR__K_*");
_Static_assert(RTR__K_LAST < 64, "the kind masks below are 64 bits");

/* Kind masks from the table: bit k for kind k. Constant expressions, so that the
 * tests below fold where the kind is known and cost a shift where it is not. */
#define RTR__KMASK_(kind, ph, word, ext, want) \
	| ((uint64_t)(RTR__W_##word == RTR__W_##want) << RTR__K_##kind)
#define RTR__KM_VALUE_(k, p, w, x)  RTR__KMASK_(k, p, w, x, VALUE)
#define RTR__KM_ID_(k, p, w, x)	    RTR__KMASK_(k, p, w, x, ID)
#define RTR__KM_UNLESS_(k, p, w, x) RTR__KMASK_(k, p, w, x, UNLESS_COPY)
#define RTR__KM_FRAMES_(k, p, w, x) | ((uint64_t)(RTR__X_##x == RTR__X_FRAMES) << RTR__K_##k)
#define RTR__KINDS_VALUE	    (0 RTR__RECORD_KINDS(RTR__KM_VALUE_))
#define RTR__KINDS_ID		    (0 RTR__RECORD_KINDS(RTR__KM_ID_))
#define RTR__KINDS_UNLESS_COPY	    (0 RTR__RECORD_KINDS(RTR__KM_UNLESS_))
#define RTR__KINDS_FRAMES	    (0 RTR__RECORD_KINDS(RTR__KM_FRAMES_))

/* Continuation field sizes (the layout above). */
#define RTR__EXT_TRACK	  ((uint32_t)sizeof(uint64_t))
#define RTR__EXT_WORD	  ((uint32_t)sizeof(uint64_t))
#define RTR__EXT_NAME_LEN ((uint32_t)sizeof(uint32_t))
#define RTR__EXT_PAIR	  (2 * (uint32_t)sizeof(uint64_t))
#define RTR__EXT_ARG	  (1 + RTR__EXT_PAIR) /* its type byte and its pair */
/* Most continuation bytes one event has: every field at its largest, each blob at most
 * RTR_MAX_COPY bytes (the producer cuts them so). */
#define RTR__EXT_MAX                                                         \
	(RTR__EXT_TRACK + RTR__EXT_WORD + RTR__EXT_NAME_LEN + RTR_MAX_COPY + \
	 RTR_MAX_ARGS * RTR__EXT_ARG + RTR_MAX_ARGS * RTR_MAX_COPY)

#define RTR_REC_BYTES ((uint32_t)sizeof(struct rtr__rec))

/* Records one event of `ext` continuation bytes takes. */
static inline uint32_t rtr__rec_records(uint32_t ext)
{
	return 1 + (ext + RTR_REC_BYTES - 1) / RTR_REC_BYTES;
}

/* The phase letter of a known kind (1 .. RTR__K_LAST). */
static inline char rtr__kind_phase(unsigned kind)
{
	static const char phase[RTR__K_LAST + 1] = {
#define RTR__KP_(k, ph, word, ext) [RTR__K_##k] = ph,
		RTR__RECORD_KINDS(RTR__KP_)
#undef RTR__KP_
	};

	return phase[kind];
}

/* Whether an event of a known kind, with these flags, has a word in its continuation. */
static inline int rtr__kind_has_word(unsigned kind, unsigned flags)
{
	uint64_t bit = (uint64_t)1 << kind;

	return (RTR__KINDS_VALUE & bit) || (RTR__KINDS_ID & bit) ||
	       ((RTR__KINDS_UNLESS_COPY & bit) && !(flags & RTR__F_NAME_COPY));
}

/* Whether a known kind's word is an id (its line carries "id"). */
static inline int rtr__kind_has_id(unsigned kind)
{
	return (RTR__KINDS_ID >> kind) & 1;
}

/* Whether a known kind's continuation is stack frames (RTR__X_FRAMES). */
static inline int rtr__kind_frames(unsigned kind)
{
	return (RTR__KINDS_FRAMES >> kind) & 1;
}

/* ------------------------------------------------------------------------- */
/* Encoding (producers)                                                       */

/* An event as a producer call describes it; src/producer/events.c records it. */
struct rtr__ext_event {
	uint8_t kind;
	uint16_t flags;
	uint64_t ts;
	const char *cat;
	const char *name;	       /* copied when flags has RTR__F_NAME_COPY */
	uint64_t meta;		       /* RTR__K_META: what it sets, recorded in `a` */
	const struct rtr_track *track; /* with RTR__F_TRACK: the first continuation word */
	uint64_t word;		       /* when the kind has a word (rtr__kind_has_word()) */
	const struct rtr_arg *args;
	unsigned nargs;
};

/* What rtr__rec_measure() found: the sizes rtr__rec_put_ext() then writes. */
struct rtr__rec_plan {
	uint32_t ext;		      /* continuation bytes */
	unsigned nargs;		      /* the arguments kept: at most RTR_MAX_ARGS */
	uint32_t name_len;	      /* a copied name's bytes */
	uint64_t count[RTR_MAX_ARGS]; /* the pair's value of a blob argument */
	uint32_t blob[RTR_MAX_ARGS];  /* its bytes after the pairs */
};

/* What the header's `a` holds for e: its static name, its META what, or 0 (copied). */
static inline uint64_t rtr__rec_a(const struct rtr__ext_event *e)
{
	return e->kind == RTR__K_META	       ? e->meta
	       : (e->flags & RTR__F_NAME_COPY) ? 0
					       : (uintptr_t)e->name;
}

/* The header of e, which has `ext` continuation bytes and `nargs` arguments; a is
 * rtr__rec_a(e), which a caller may have taken before it reserved. */
static inline void rtr__rec_header(struct rtr__rec *rec, const struct rtr__ext_event *e, uint64_t a,
				   unsigned nargs, uint32_t ext)
{
	rec->ts = e->ts;
	rec->a = a;
	rec->b = (uintptr_t)e->cat;
	rec->kind = e->kind;
	rec->nargs = (uint8_t)nargs;
	rec->flags = e->flags;
	rec->ext = ext;
}

/* Whether every argument is a number or a static string: nothing to measure or copy
 * besides its pair. */
static inline bool rtr__rec_scalars_only(const struct rtr_arg *args, unsigned nargs)
{
	unsigned i = 0;

	while (i < nargs && args[i].type < RTR_ARG_TYPE_STR_COPY)
		i++;
	return i == nargs;
}

/* The pair's value of a number or static string argument. */
static inline uint64_t rtr__rec_scalar_value(const struct rtr_arg *a)
{
	uint64_t v = 0; /* an unknown type: written as null */

	if (a->type == RTR_ARG_TYPE_BOOL)
		v = a->v.b;
	else if (a->type >= RTR_ARG_TYPE_I64 && a->type <= RTR_ARG_TYPE_STR)
		memcpy(&v, &a->v, sizeof(v)); /* i64, u64, f64 bits or the pointer */
	return v;
}

/* Argument i of the nargs at p (their types) and pairs (their pairs). */
static inline void rtr__rec_put_scalar(char *p, char *pairs, unsigned i, const struct rtr_arg *a)
{
	uint64_t key = (uintptr_t)a->key, value = rtr__rec_scalar_value(a);

	p[i] = (char)a->type;
	memcpy(pairs + 16 * (size_t)i, &key, sizeof(key));
	memcpy(pairs + 16 * (size_t)i + 8, &value, sizeof(value));
}

/* Write the continuation of e, which has neither track nor copied name and whose
 * nargs arguments are scalars (rtr__rec_scalars_only()), to p: its word when it has
 * one (rtr__kind_has_word(), `word`), then the types and pairs. Contiguous, plain
 * stores: (word ? RTR__EXT_WORD : 0) + nargs * RTR__EXT_ARG bytes. */
static inline void rtr__rec_put_scalars(char *p, const struct rtr__ext_event *e, int word)
{
	unsigned nargs = e->nargs;

	if (word) {
		memcpy(p, &e->word, sizeof(e->word));
		p += sizeof(e->word);
	}
	char *pairs = p + nargs;
	for (unsigned i = 0; i < nargs; i++)
		rtr__rec_put_scalar(p, pairs, i, &e->args[i]);
}

/*
 * A call site whose arguments are the same at every one of its events (an
 * RTR__K_SCOPE or RTR__K_BEGIN with RTR__F_SITE_ARGS: the Kokkos tool's kernel, its
 * kind and device; the OMPT tool's parallel region, its code and function): they are
 * encoded once, as a continuation would hold them, and the writer takes them from
 * here, so each event is one record. Numbers and static strings only; the site and
 * its bytes live as long as an event may name it (the process's life).
 */
struct rtr__site_args {
	struct rtr_site site; /* first: the record's `a` is the site */
	const uint8_t *args;  /* nargs types, then nargs pairs */
	uint32_t nargs;
	uint32_t len; /* nargs * RTR__EXT_ARG */
};

/* Fills sa: the site {cat, name}, and its n scalar arguments (rtr__rec_scalars_only(),
 * at most RTR_MAX_ARGS) encoded into bytes, n * RTR__EXT_ARG of them. */
static inline void rtr__site_args_init(struct rtr__site_args *sa, const char *cat, const char *name,
				       const struct rtr_arg *args, unsigned n, uint8_t *bytes)
{
	struct rtr__ext_event e = {.args = args, .nargs = n};

	sa->site.cat = cat;
	sa->site.name = name;
	rtr__rec_put_scalars((char *)bytes, &e, 0);
	sa->args = bytes;
	sa->nargs = n;
	sa->len = n * RTR__EXT_ARG;
}

/* Measuring and writing an event of any shape: rtr__rec_measure() and
 * rtr__rec_put_ext(), inline in record/encode.h. */

/* Write n frames (RTR__X_FRAMES) into the records after `head` of a ring of mask + 1
 * records at slots, one plain copy per record. */
static inline void rtr__rec_put_frames(struct rtr__rec *slots, uint32_t mask, uint32_t head,
				       const void *const *frames, unsigned n)
{
	enum { PER_REC = RTR_REC_BYTES / sizeof(uint64_t) };

	for (unsigned i = 0; i < n; i += PER_REC) {
		uint64_t words[PER_REC];
		unsigned k = n - i < PER_REC ? n - i : PER_REC;
		for (unsigned j = 0; j < k; j++)
			words[j] = (uintptr_t)frames[i + j];
		memcpy(&slots[(head + 1 + i / PER_REC) & mask], words, k * sizeof(uint64_t));
	}
}

/* ------------------------------------------------------------------------- */
/* Decoding (the writer)                                                      */

/* A decoded view of an event's continuation bytes; pointers into them. */
struct rtr__rec_view {
	const struct rtr_track *track; /* with RTR__F_TRACK */
	uint64_t word;
	const char *name;
	uint32_t name_len;
	const uint8_t *types;
	const char *pairs; /* nargs x {u64 key, u64 value}, unaligned */
	const char *strings;
};

/*
 * Whether the header rec, with `left` records published from it on, frames an event
 * the writer can read: a known kind, at most RTR_MAX_ARGS arguments, and continuation
 * bytes within RTR__EXT_MAX and within what was published. Checked before anything of
 * the event is read past its header.
 */
static inline bool rtr__rec_framed(const struct rtr__rec *rec, uint32_t left)
{
	return rec->kind >= RTR__K_BEGIN && rec->kind <= RTR__K_LAST &&
	       rec->nargs <= RTR_MAX_ARGS && rec->ext <= RTR__EXT_MAX &&
	       rtr__rec_records(rec->ext) <= left;
}

/* Whether rec's continuation is one word and nothing else: the word is then the first
 * 8 bytes of the next record, read in place. */
static inline bool rtr__rec_one_word(const struct rtr__rec *rec)
{
	return rec->ext == RTR__EXT_WORD && rec->nargs == 0 &&
	       !(rec->flags & (RTR__F_NAME_COPY | RTR__F_TRACK));
}

/* Whether a framed FRAMES event's length holds whole frames, at most RTR_MAX_FRAMES. */
static inline bool rtr__rec_frames_ok(const struct rtr__rec *rec)
{
	return rec->ext % sizeof(uint64_t) == 0 && rec->ext <= RTR_MAX_FRAMES * sizeof(uint64_t);
}

/*
 * Decode the continuation bytes `ext` (rec->ext of them, contiguous) of a framed
 * FIELDS event into v. Returns false, having read nothing past ext, when they do not
 * hold what the header says: a length that runs past the end, a blob over the
 * producer's limits, or bytes left over.
 */
bool rtr__rec_decode(const struct rtr__rec *rec, const char *ext, struct rtr__rec_view *v);

/* The bytes of the blob of an argument (its pair's value `val`) at `blob`, `room` of
 * them readable; SIZE_MAX when the blob does not fit or breaks the producer's limits.
 * A decoded event's blobs fit: room SIZE_MAX then reads only what they take. */
size_t rtr__rec_blob_bytes(uint8_t type, uint64_t val, const char *blob, size_t room);

/* Argument i of a decoded event: its key (a static string's pointer), returns its
 * value (see the layout above). */
static inline uint64_t rtr__rec_arg(const struct rtr__rec_view *v, unsigned i, uint64_t *key)
{
	uint64_t val;

	memcpy(key, v->pairs + i * RTR__EXT_PAIR, sizeof(*key));
	memcpy(&val, v->pairs + i * RTR__EXT_PAIR + 8, sizeof(val));
	return val;
}

/* An unaligned u32 or i64 of a blob. */
static inline uint32_t rtr__rec_u32(const char *p)
{
	uint32_t x;

	memcpy(&x, p, sizeof(x));
	return x;
}

static inline int64_t rtr__rec_i64(const char *p)
{
	int64_t x;

	memcpy(&x, p, sizeof(x));
	return x;
}

/* The layout the inline paths of emit.h write by hand. */
_Static_assert(sizeof(struct rtr__rec) == 32, "a record is 32 bytes");
_Static_assert(offsetof(struct rtr__rec, ts) == 0,
	       "a one-word event's word is the next record's ts (rtr__emit_word())");
_Static_assert(RTR_MAX_FRAMES * sizeof(uint64_t) <= RTR__EXT_MAX, "frames fit RTR__EXT_MAX");

#endif
