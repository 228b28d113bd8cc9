/* SPDX-License-Identifier: MIT */
/*
 * Streaming decoder of Perfetto's protobuf trace (.pftrace, docs/perfetto.md): the
 * TrackEvent protocol as ringtrace's writer and the Perfetto SDK write it.
 *
 * The file is a stream of TracePackets (field 1 of Trace, length-delimited). The
 * decoder reads it packet by packet through zlib (plain or gzip, found by its bytes),
 * never the whole file: memory is one packet (at most max_packet_bytes) and the
 * state of the sequences (interned strings, clocks, defaults) and tracks, bounded
 * as tools/base/budget.h bounds a tool's state. What comes past the bound is not kept
 * but reported (PF_ISSUE_STATE_LIMIT); references to what was not kept are then
 * not reported as unresolved.
 *
 * A packet of compressed_packets (a zlib stream of a Trace: trace_packet.proto) is
 * inflated (zlib) and its packets handed out in its place, each with the batch's
 * packet's byte offset, as trace processor reads it (nothing else of that packet).
 *
 * Each packet is handed out (pf_decoder_next()), or to a callback (pf_read_path()),
 * decoded: its timestamp resolved to
 * nanoseconds on the trace's primary clock (sequence-scoped clocks 64..127 of the
 * packet's sequence, incremental or not, through the builtin clock their
 * ClockSnapshot gives with them; builtin clocks through the latest snapshot that
 * relates them to the primary one), its interned names resolved (per sequence,
 * cleared by SEQ_INCREMENTAL_STATE_CLEARED), its track looked up.
 *
 * Wire decoding is by hand: varints, fixed64, fixed32, length-delimited fields;
 * unknown fields of every wire type are skipped (groups too). Malformed input
 * (a length past the end of its message, a varint over 10 bytes, wire type 6 or 7,
 * nesting over PF_MAX_DEPTH) ends the read with "packet N at byte O: what"; every
 * packet before it has been handed out. A file that ends inside a packet is cut,
 * not malformed: every whole packet before it is handed out and the status says
 * where the cut packet began.
 *
 * Thread safety: a decoder is used by one thread at a time; distinct decoders are
 * independent.
 */
#ifndef RTR_TOOLS_SOURCE_PFTRACE_H
#define RTR_TOOLS_SOURCE_PFTRACE_H

#include "format/perfetto/proto.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct input;

/* The deepest nesting of messages read (debug annotations inside annotations). */
#define PF_MAX_DEPTH 64

/* The largest packet read by default; a larger one is skipped and reported. */
#define PF_MAX_PACKET_BYTES ((uint64_t)16 << 20)

/* BuiltinClock values used by name (proto.h's). */
enum {
	PF_CLOCK_REALTIME = RTR__PF_BUILTIN_REALTIME,
	PF_CLOCK_MONOTONIC = RTR__PF_BUILTIN_MONOTONIC,
	PF_CLOCK_BOOTTIME = RTR__PF_BUILTIN_BOOTTIME
};

/* TrackEvent.Type (proto.h's) */
enum pf_event_type {
	PF_TYPE_UNSPECIFIED = RTR__PF_TYPE_UNSPECIFIED,
	PF_TYPE_SLICE_BEGIN = RTR__PF_TYPE_SLICE_BEGIN,
	PF_TYPE_SLICE_END = RTR__PF_TYPE_SLICE_END,
	PF_TYPE_INSTANT = RTR__PF_TYPE_INSTANT,
	PF_TYPE_COUNTER = RTR__PF_TYPE_COUNTER
};

/* A string of the input: not NUL-terminated; s NULL when absent. */
struct pf_str {
	const char *s;
	size_t len;
};

enum pf_track_kind { PF_TRACK_OTHER, PF_TRACK_PROCESS, PF_TRACK_THREAD, PF_TRACK_COUNTER };

/* A track as its latest TrackDescriptor described it. Strings are NUL-terminated
 * copies (NULL when absent). */
struct pf_track {
	uint64_t uuid, parent_uuid;
	bool has_parent;
	enum pf_track_kind kind;
	char *name;
	bool has_pid, has_tid;
	int32_t pid, tid;
	char *process_name, *thread_name;
	char *labels; /* process_labels joined with "," */
	bool has_sort_index;
	int32_t sort_index;
	bool has_rank; /* TrackDescriptor.sibling_order_rank */
	int32_t rank;
	uint32_t counter_unit; /* CounterDescriptor.unit */
	char *unit_name;
	char *categories;     /* CounterDescriptor.categories joined with "," */
	uint64_t descriptors; /* how many were read for it */
};

enum pf_arg_kind {
	PF_ARG_NULL, /* no value (a NULL string) */
	PF_ARG_BOOL,
	PF_ARG_UINT,
	PF_ARG_INT,
	PF_ARG_DOUBLE,
	PF_ARG_STRING,
	PF_ARG_POINTER,
	PF_ARG_ARRAY, /* the next `count` entries (with their own children) are its elements */
	PF_ARG_DICT   /* the next `count` entries are its members, named */
};

/* A debug annotation; an event's are in pre-order (a container, then its children). */
struct pf_arg {
	struct pf_str name; /* s NULL for an array element, or an unresolved name_iid */
	enum pf_arg_kind kind;
	bool b;
	uint64_t u; /* UINT, POINTER */
	int64_t i;
	double d;
	struct pf_str str;
	uint32_t count;
};

/* The entries of the annotation at args[i] with all its children: the next sibling
 * is at i + pf_arg_span(args, i). */
size_t pf_arg_span(const struct pf_arg *args, size_t i);

struct pf_event {
	enum pf_event_type type;
	struct pf_str name;	      /* inline or interned; s NULL when none */
	struct pf_str categories;     /* all of them, joined with ","; s NULL when none */
	uint64_t track_uuid;	      /* the event's, else the sequence's default, else 0 */
	const struct pf_track *track; /* NULL when not declared (or uuid 0) */
	bool has_counter, counter_is_double;
	int64_t counter_int;
	double counter_double;
	const uint64_t *flow_ids, *terminating_flow_ids;
	size_t nflow_ids, nterminating_flow_ids;
	const struct pf_arg *args; /* nargs entries in pre-order, ntop at the top level */
	size_t nargs, ntop;
};

struct pf_clock_value {
	uint32_t clock_id;
	uint64_t timestamp;
	bool is_incremental;
	uint64_t unit_multiplier_ns;
};

enum pf_packet_kind {
	PF_PACKET_OTHER,
	PF_PACKET_TRACK_EVENT,
	PF_PACKET_TRACK_DESCRIPTOR,
	PF_PACKET_CLOCK_SNAPSHOT
};

/* One packet, valid during the callback. */
struct pf_packet {
	uint64_t index;	 /* 0 for the first packet */
	uint64_t offset; /* byte offset of its tag in the stream (after gzip) */
	uint64_t size;	 /* its payload's bytes */
	uint32_t sequence_id;
	uint32_t sequence_flags;
	uint64_t sequence_track; /* the sequence's default track (a thread's), 0: none */
	bool first_packet_on_sequence;
	bool has_interned_data, has_defaults;
	bool has_timestamp;	/* the packet's own timestamp field */
	uint64_t timestamp_raw; /* as written (a delta on an incremental clock) */
	uint32_t clock_id;	/* the clock it is on: its own, the defaults', or BOOTTIME */
	bool has_time;		/* time_ns resolved */
	int64_t time_ns;	/* on the primary clock */
	enum pf_packet_kind kind;
	struct pf_event event;		     /* PF_PACKET_TRACK_EVENT */
	const struct pf_track *track;	     /* PF_PACKET_TRACK_DESCRIPTOR: as now described */
	const struct pf_clock_value *clocks; /* PF_PACKET_CLOCK_SNAPSHOT */
	size_t nclocks;
	uint32_t primary_clock; /* the trace's, once known (BOOTTIME until a snapshot says) */
	/* MONOTONIC on the primary clock: primary = monotonic + this (0 when the primary
	 * is MONOTONIC, or no snapshot related the two yet). */
	int64_t monotonic_offset;
	const void *tracks_; /* for pf_track_get() */
};

/* The track of uuid as described so far, or NULL: for a parent_uuid. */
const struct pf_track *pf_track_get(const struct pf_packet *p, uint64_t uuid);

enum pf_issue_kind {
	PF_ISSUE_UNRESOLVED_IID,       /* an iid not interned on the sequence */
	PF_ISSUE_NEEDS_NOT_CLEARED,    /* SEQ_NEEDS_INCREMENTAL_STATE on a never-cleared sequence */
	PF_ISSUE_STATE_BEFORE_CLEARED, /* interned data or defaults before the first clear */
	PF_ISSUE_UNDECLARED_TRACK,     /* a track_uuid used before its TrackDescriptor */
	PF_ISSUE_CLOCK_UNDEFINED,      /* a sequence clock (64..127) with no snapshot before */
	PF_ISSUE_CLOCK_BACKWARDS,      /* a sequence's ClockSnapshot moves a clock backwards */
	PF_ISSUE_PACKET_TOO_LARGE,     /* a packet over max_packet_bytes, skipped */
	PF_ISSUE_STATE_LIMIT,	       /* state past the bound, not kept */
	PF_ISSUE_COUNT
};

struct pf_issue {
	enum pf_issue_kind kind;
	uint64_t packet, offset; /* the packet's index and the byte offset of its tag */
	const char *message;	 /* one line, no file name or position */
};

typedef int (*pf_packet_fn)(void *ctx, const struct pf_packet *p); /* nonzero: stop */
typedef void (*pf_issue_fn)(void *ctx, const struct pf_issue *issue);

struct pf_options {
	pf_packet_fn on_packet;
	pf_issue_fn on_issue; /* may be NULL */
	void *ctx;
	uint64_t max_packet_bytes; /* 0: PF_MAX_PACKET_BYTES */
	size_t buffer_bytes;	   /* the packet buffer to begin with (it grows); 0: 256 KiB */
};

enum pf_error { PF_OK, PF_ERR_IO, PF_ERR_MALFORMED, PF_ERR_GZIP, PF_ERR_NOMEM, PF_ERR_STOPPED };

struct pf_status {
	uint64_t packets;      /* whole packets handed out (those of compressed batches too) */
	uint64_t batches;      /* packets of compressed_packets read (not handed out) */
	uint64_t track_events; /* of them, track events */
	uint64_t bytes;	       /* stream bytes read (after gzip) */
	bool gzip;	       /* the input was gzip */
	bool cut;	       /* the stream ended inside a packet */
	uint64_t cut_offset;   /* where that packet began */
	uint64_t cut_bytes;    /* how many of its bytes the file holds */
	uint64_t issues[PF_ISSUE_COUNT];
	uint64_t state_refused; /* items past the state bound */
	enum pf_error error;
	char message[256]; /* "packet N at byte O: what", or an I/O error */
	/* The error's packet (index, and byte offset of its tag), and for PF_ERR_MALFORMED
	 * where in it: the O of the message. */
	uint64_t error_packet, error_offset;
};

struct pf_decoder;

/*
 * A decoder of the stream in (input.h: a file's bytes, plain or gzip; read from
 * where it stands), with opt's issue callback and bound (opt may be NULL; its
 * on_packet is not called). 0 and the decoder in *out, or -ENOMEM.
 */
int pf_decoder_open(struct input *in, const struct pf_options *opt, struct pf_decoder **out);

/*
 * The next packet, valid until the next call. 1 with *pk set; 0 at the end of the
 * stream, whole or cut (see the status); -1 on an error (the status says which;
 * every packet before it was handed out). After 0 or -1 it keeps returning the same.
 */
int pf_decoder_next(struct pf_decoder *d, const struct pf_packet **pk);

/* The status so far; final once next() returned 0 or -1. */
const struct pf_status *pf_decoder_status(const struct pf_decoder *d);

/* Frees the decoder (not its input). d may be NULL. */
void pf_decoder_close(struct pf_decoder *d);

/*
 * Read the trace at path ("-": standard input) to its end, calling on_packet for each
 * packet. Returns 0 when the stream was read to its end (whole or cut: see the
 * status), -1 on an error (the status says which; every packet before it was handed
 * out).
 */
int pf_read_path(const char *path, const struct pf_options *opt, struct pf_status *st);

/* The same from an open descriptor, read from where it stands; fd stays open. */
int pf_read_fd(int fd, const struct pf_options *opt, struct pf_status *st);

/*
 * Is the file a Perfetto trace, by its first bytes after gzip (pf_sniff_bytes())? Only
 * a regular file is looked at, "-" too: a pipe or FIFO cannot be read twice. 1 yes, 0 no, -errno
 * when it cannot be opened.
 */
int pf_sniff_path(const char *path);

/* The same test on the first n bytes of a stream (after gzip): 0x0a, and a first
 * packet that is a well-formed message (a JSON file may begin with a newline too). */
bool pf_sniff_bytes(const unsigned char *p, size_t n);

/* The key of an issue for messages ("unresolved-iid", ...). */
const char *pf_issue_name(enum pf_issue_kind kind);

/*
 * Write the trace as the JSON the recorder writes (bare array, one event per line;
 * docs/commands/ringtrace-convert.md). write returns 0 or -1. The path is read twice
 * when it is a regular file (the first pass finds the origin: the start marker's
 * origin_monotonic_ns, else the earliest timestamp), once from a pipe (the origin:
 * the start marker when it is the first event, else the first timestamp). Returns
 * 0 or -1 (st says why; st->error PF_ERR_STOPPED: the write failed). *events gets
 * the JSON events written.
 */
int pf_to_json(const char *path, int (*write)(void *ctx, const void *p, size_t n), void *ctx,
	       const struct pf_options *opt, struct pf_status *st, uint64_t *events);

/*
 * `ringtrace check` of a Perfetto trace (commands/check/pftrace.c): findings in check's
 * format, then a summary line. Returns the exit status (CLI_OK, CLI_FINDINGS,
 * CLI_ERROR).
 */
int pf_check_file(const char *path, bool quiet, bool notes, uint64_t max_per_rule,
		  uint64_t max_packet_bytes);

/* The rules of pf_check_file(), for `ringtrace check --rules`. */
void pf_check_list_rules(void);

#endif /* RTR_TOOLS_SOURCE_PFTRACE_H */
