/* SPDX-License-Identifier: MIT */
/*
 * A .pftrace's packets as the JSON events the recorder writes
 * (docs/commands/ringtrace-convert.md): one compact JSON object per event, in the
 * recorder's key order, each with the packet it stands for. What `ringtrace convert
 * --to json` writes (pf_to_json(), pftrace.h) and what the other tools read a
 * .pftrace as (pf_source.c): one conversion, so that both say the same.
 *
 * Streaming: state is per track (its open slices, for the names of their ends), per
 * sequence (a BEGIN held back until the next event shows whether an END follows it
 * directly, to write one X) and per open flow; never per event. All of it is bounded
 * like the decoder's (threads.h's bound): a slice past it is still written, its END
 * then without a name. The M events of the descriptors before the first event are
 * held (at most 1 MiB of them) so that the start marker comes first, as the recorder
 * writes it.
 *
 * ts and dur are microseconds from the origin: the one set with pf_json_set_origin()
 * (a first pass found it), else the start marker's origin_monotonic_ns when it is
 * the first event with a time, else that event's time.
 *
 * Thread safety: a converter is used by one thread at a time.
 */
#ifndef RTR_TOOLS_SOURCE_PF_JSON_H
#define RTR_TOOLS_SOURCE_PF_JSON_H

#include "pftrace.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pf_json;

/*
 * Called for each event, in order: its JSON line[0 .. len) (no newline; valid during
 * the call) and the packet it stands for, by index and byte offset (a slice written
 * as one X: its BEGIN's). Returns 0, or nonzero to stop the conversion.
 */
typedef int (*pf_json_line_fn)(void *ctx, const char *line, size_t len, uint64_t packet,
			       uint64_t offset);

/* A converter handing its events to line. 0, or -ENOMEM. */
int pf_json_create(pf_json_line_fn line, void *ctx, struct pf_json **out);

/* ts from origin_ns (on the trace's primary clock) rather than from the first event. */
void pf_json_set_origin(struct pf_json *c, int64_t origin_ns);

/*
 * The events of one packet (some may be held back, see above). 0; -ENOMEM; -ECANCELED
 * once line returned nonzero. After an error, every later call returns it.
 */
int pf_json_packet(struct pf_json *c, const struct pf_packet *pk);

/* The end of the stream: the events held back. 0, or as pf_json_packet(). */
int pf_json_finish(struct pf_json *c);

/* The events handed to line so far. */
uint64_t pf_json_events(const struct pf_json *c);

void pf_json_free(struct pf_json *c);

/*
 * The origin pf_to_json() takes from a first pass: the start marker's
 * origin_monotonic_ns (on the primary clock) wherever it is, else the earliest time.
 * Feed it every packet; *has says whether one was found.
 */
struct pf_json_origin {
	bool has, marker;
	int64_t ns;
};

void pf_json_origin_packet(struct pf_json_origin *o, const struct pf_packet *pk);

#endif /* RTR_TOOLS_SOURCE_PF_JSON_H */
