/* SPDX-License-Identifier: MIT */
/*
 * The insides of the .pftrace decoder (pftrace.h), shared by its files; not for the
 * tools themselves.
 *
 * Who does what:
 *   pf_decode.c  the decoder: the stream in packets, a packet's fields, errors and
 *                issues, the pull interface and the callback one over it
 *   pf_wire.c    protobuf's wire format: varints, fields, groups, packed repeats
 *   pf_state.c   the sequences: interned strings, defaults, clocks and timestamps
 *   pf_tracks.c  TrackDescriptors
 *   pf_event.c   TrackEvents and their debug annotations
 *
 * Field numbers and enum values are Perfetto's, from format/perfetto/proto.h, the
 * list the writer uses too. Functions shared between the files are pfd_* (the
 * decoder) and pb_* (the wire); none is thread-safe: a decoder is used by one thread
 * at a time.
 */
#ifndef RTR_TOOLS_SOURCE_PF_INTERNAL_H
#define RTR_TOOLS_SOURCE_PF_INTERNAL_H

#include "budget.h"
#include "format/perfetto/proto.h"
#include "input.h"
#include "json.h"
#include "pftrace.h"
#include "table.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What an item of state costs against the bound: a table entry and its header
 * (threads.c's ENTRY_OVERHEAD), the value, malloc's own overhead for a copied string. */
#define PF_ENTRY_COST 144

/* Builtin clocks are the ids below the sequence-scoped ones. */
#define PF_BUILTIN_CLOCKS  RTR__PF_CLOCK_SEQUENCE_FIRST
#define PF_SEQUENCE_CLOCKS (RTR__PF_CLOCK_SEQUENCE_LAST - RTR__PF_CLOCK_SEQUENCE_FIRST + 1)

/* The interned tables of a sequence (InternedData's fields). */
enum { IN_NAMES, IN_CATEGORIES, IN_ANNOTATION_NAMES, IN_STRINGS, IN_COUNT };

/* A sequence-scoped clock as its latest ClockSnapshot defined it. */
struct seq_clock {
	bool defined, incremental;
	uint32_t ref_clock; /* the builtin clock the snapshot read with it */
	int64_t ref_ns;	    /* that clock's value then */
	uint64_t snap_units, cur_units, multiplier;
};

struct sequence {
	bool cleared; /* SEQ_INCREMENTAL_STATE_CLEARED seen */
	/* Said once per sequence: the packets after share the fault. */
	bool needs_reported, state_reported, clock_reported;
	bool has_default_clock, has_default_track;
	uint32_t default_clock;
	uint64_t default_track;
	struct table interned[IN_COUNT]; /* iid -> struct interned */
	struct seq_clock *clocks;	 /* [PF_SEQUENCE_CLOCKS], with the first sequence clock */
	/* Each clock's value in the sequence's last ClockSnapshot that had it (ids below
	 * PF_SNAP_CLOCKS; snap_known the bitmap), with the first snapshot: trace
	 * processor rejects a snapshot that moves one backwards. */
	uint64_t *snap_last;
	uint64_t snap_known[2];
	bool backwards_reported;
};

#define PF_SNAP_CLOCKS 128

struct interned {
	char *s;
	size_t len;
};

/* A message being read: its bytes from p to end. */
struct pb {
	const uint8_t *p, *end;
};

/* A field of it: which, its wire type, and its value. */
struct field {
	uint32_t num;
	unsigned wt;
	uint64_t v; /* varint, fixed64, fixed32 */
	const uint8_t *data;
	size_t len; /* RTR__PB_LEN */
};

struct pf_decoder {
	struct pf_options opt;
	struct pf_status st;
	struct input *in; /* the stream */
	struct input own; /* in, when the decoder opened it (pf_read_fd()) */
	uint8_t *buf;
	size_t cap, pos, len; /* buf[pos .. len) is unread */
	bool eof;
	uint64_t offset; /* stream offset of buf[pos] */
	uint64_t max_packet;

	const uint8_t *packet_base; /* the current packet, for error offsets */
	uint64_t packet_offset, packet_index;
	bool failed, done;
	struct pf_packet pk; /* the packet handed out last */
	/* The packets of a compressed batch (compressed_packets), inflated: read from
	 * inner[inner_pos .. inner_len) before the stream's next packet. */
	uint8_t *inner;
	size_t inner_cap, inner_pos, inner_len;
	uint64_t batch_offset; /* the stream offset of the batch's packet */

	struct table sequences; /* uint32 id -> struct sequence */
	struct table tracks;	/* uint64 uuid -> struct pf_track */
	struct state_budget budget;
	bool refused;

	/* builtin clock -> primary: primary = clock + offset */
	int64_t clock_offset[PF_BUILTIN_CLOCKS];
	bool clock_known[PF_BUILTIN_CLOCKS];
	bool has_primary;
	uint32_t primary;

	struct pf_arg *args;
	size_t nargs, args_cap;
	uint64_t *flows;
	size_t nflows, flows_cap;
	struct pf_clock_value *clocks;
	size_t nclocks, clocks_cap;
	char *cats;
	size_t cats_len, cats_cap;
};

/* pf_decode.c: the first error ends the read (later ones are not kept). */
void pfd_fail(struct pf_decoder *d, enum pf_error e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Malformed input at p inside the current packet: "packet N at byte O: what". */
void pfd_malformed(struct pf_decoder *d, const uint8_t *p, const char *what);
void pfd_issue(struct pf_decoder *d, enum pf_issue_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Take bytes of state from the bound: false (reported once) when past it. */
bool pfd_take(struct pf_decoder *d, uint64_t bytes);

/* pf_wire.c: 1 with a value, 0 at the end of the message, -1 malformed (reported).
 * The forms of any length, and the inline short paths below for the common one-byte
 * keys and values: every field of every packet comes through here. */
int pb_varint_any(struct pf_decoder *d, struct pb *b, uint64_t *v);
int pb_next_any(struct pf_decoder *d, struct pb *b, struct field *f, unsigned depth);

static inline int pb_varint(struct pf_decoder *d, struct pb *b, uint64_t *v)
{
	if (__builtin_expect(b->p < b->end && *b->p < 0x80, 1)) {
		*v = *b->p++;
		return 1;
	}
	return pb_varint_any(d, b, v);
}

static inline int pb_next(struct pf_decoder *d, struct pb *b, struct field *f, unsigned depth)
{
	const uint8_t *p = b->p;

	/* a one-byte key (field 1-15) and a one-byte varint or length */
	if (b->end - p >= 2 && p[0] >= 8 && p[0] < 0x80 && p[1] < 0x80) {
		unsigned wt = p[0] & 7;
		if (wt == RTR__PB_VARINT) {
			f->num = p[0] >> 3;
			f->wt = wt;
			f->v = p[1];
			b->p = p + 2;
			return 1;
		}
		if (wt == RTR__PB_LEN && p[1] <= b->end - (p + 2)) {
			f->num = p[0] >> 3;
			f->wt = wt;
			f->data = p + 2;
			f->len = p[1];
			b->p = p + 2 + p[1];
			return 1;
		}
	}
	return pb_next_any(d, b, f, depth);
}
/* The bytes of a length-delimited field, as a message. */
struct pb pb_sub(const struct field *f);
/* The elements of a repeated scalar, packed or not; add for each. 0, or -1. */
int pb_repeated(struct pf_decoder *d, const struct field *f, bool fixed64,
		int (*add)(struct pf_decoder *, uint64_t, void *), void *ctx);
/* Is p[0 .. n) a well-formed message (its fields' framing only)? */
bool pb_plausible(const uint8_t *p, size_t n);

/* pf_state.c */
struct sequence *pfd_sequence(struct pf_decoder *d, uint32_t id);
void pfd_sequence_flags(struct pf_decoder *d, struct sequence *s, const struct pf_packet *pk);
struct pf_str pfd_lookup(struct pf_decoder *d, struct sequence *s, uint32_t seq_id, int which,
			 uint64_t iid);
int pfd_read_interned(struct pf_decoder *d, struct sequence *s, const struct field *msg);
int pfd_read_defaults(struct pf_decoder *d, struct sequence *s, const struct field *msg);
int pfd_read_clock_snapshot(struct pf_decoder *d, struct sequence *s, const struct field *msg,
			    struct pf_packet *pk);
void pfd_resolve_time(struct pf_decoder *d, struct sequence *s, struct pf_packet *pk);
void pfd_sequences_free(struct pf_decoder *d);

/* pf_tracks.c */
int pfd_read_descriptor(struct pf_decoder *d, const struct field *msg, struct pf_packet *pk);
void pfd_tracks_free(struct pf_decoder *d);

/* pf_event.c */
int pfd_read_track_event(struct pf_decoder *d, struct sequence *s, const struct field *msg,
			 struct pf_packet *pk);

#endif /* RTR_TOOLS_SOURCE_PF_INTERNAL_H */
