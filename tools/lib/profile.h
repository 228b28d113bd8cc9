/* SPDX-License-Identifier: MIT */
/*
 * A profile (docs/profile.md, schema_version 1) read into the tables a trace gives
 * (tally_sum.h), so that `stats` and `diff` read it as they read a trace.
 *
 * Found by content, never by name: the trace reader reads any JSON object and hands
 * its top-level keys to profile_on_top_level() (trace_options.on_top_level); an
 * object whose "type" is "ringtrace-profile" is a profile. Its keys of the schema are
 * kept (each value at most the reader's TRACE_MAX_EVENT_BYTES, all of them at most
 * PROFILE_MAX_BYTES) and parsed as one tree (yajl).
 *
 * What a profile gives, per call-path node: its name and category, count, total, self
 * and the sketch of one slice's time, so rows by name or category are the sums over
 * every node of that name (as a trace's are over every slice); rows by thread and the
 * busy share per thread (the top-level nodes' total over the profile's start_ns to
 * end_ns: a profile has no per thread span) for a process profile; counters (samples,
 * min, max) as the series "NAME value", as a trace's counter events make them; the
 * loss accounting as an end marker's dropped count. A job profile (scope "job") has
 * one tree merged over every rank's threads: no thread rows, said in a warning.
 *
 * Hostile input: every value's type and range is checked, call paths nest at most
 * PROFILE_MAX_DEPTH, a node's sketch must hold its n values; what does not fit is
 * a clear message, never a crash or a partial table.
 *
 * Thread safety: none; one document per thread.
 */
#ifndef RTR_TOOLS_PROFILE_H
#define RTR_TOOLS_PROFILE_H

#include "json.h"
#include "tally_sum.h"

#include <stdbool.h>
#include <stddef.h>

/* The deepest call path read (the recorder's depth limit is far below; a call path
 * takes two levels of JSON, and the reader stops at TRACE_MAX_DEPTH). */
#define PROFILE_MAX_DEPTH 128
/* The most bytes of top-level values kept from one document. */
#define PROFILE_MAX_BYTES ((size_t)256 << 20)

/* What a JSON object's top-level keys said: the profile's, kept until the end. */
struct profile_doc {
	struct buf json; /* {"key":value,...} of the schema's keys */
	bool is_profile; /* "type" is "ringtrace-profile" */
	bool too_large;	 /* a value over the reader's bound, or PROFILE_MAX_BYTES in all */
};

/* Zero-filled is empty too. */
void profile_doc_init(struct profile_doc *d);
void profile_doc_destroy(struct profile_doc *d);

/* A trace_top_level_fn: ctx is the struct profile_doc. */
void profile_on_top_level(void *ctx, const char *key, size_t key_len, const char *json, size_t len);

/*
 * The profile d into s, an empty sum, as input number file called name; st is the
 * reader's status of it (copied into s). Returns 0; -1 out of memory; -2 the profile
 * is malformed or unsupported: why in msg (msg_size bytes, "NAME: profile: what").
 */
int profile_sum(struct profile_doc *d, const struct trace_status *st, struct tally_sum *s,
		uint32_t file, const char *name, char *msg, size_t msg_size);

#endif /* RTR_TOOLS_PROFILE_H */
