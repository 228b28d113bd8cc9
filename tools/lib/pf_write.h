/* SPDX-License-Identifier: MIT */
/*
 * A Perfetto trace (.pftrace, docs/perfetto.md) written from the tools' events
 * (source/event.h): what `ringtrace merge -o job.pftrace` and `ringtrace convert --to
 * pftrace` write. The encoding is the library's (src/format/perfetto/), so that every
 * reader of ringtrace's .pftrace reads it, and `convert --to json` gives back the
 * JSON it was made from, up to the differences listed in
 * docs/commands/ringtrace-convert.md ("To Perfetto").
 *
 * Layout. Sequence 1 holds the file's ClockSnapshot, the processes' descriptors and
 * the counter and async tracks' descriptors. Each thread (pid, tid) of the events has
 * a sequence of its own (2, 3, ... in order of appearance), cleared by its first
 * packet, its thread's descriptor with trace_packet_defaults (its track, clock 64);
 * every event of that thread goes on it, those on other tracks (a counter, an async
 * span, a process instant) with their track_uuid. Timestamps are deltas on clock 64
 * (incremental, on the primary clock, set by a ClockSnapshot once per sequence); a
 * packet earlier than its sequence's latest is absolute on the primary clock, which
 * is MONOTONIC, or REALTIME when the start marker has only a real-time origin.
 * Times are the start marker's origin plus ts, so a reader finds ts again.
 *
 * Events. B, E and X are SLICE_BEGIN / SLICE_END (an X both, the END right after its
 * BEGIN, which a reader makes one X again); i is an INSTANT on the thread, or on the
 * process track for "s":"p" and "g"; C one COUNTER per series on a counter track of
 * (pid, cat, name) ("name key" for each key of several), the category on the track's
 * CounterDescriptor.categories and on the event; s, t, f an INSTANT with flow_ids or
 * terminating_flow_ids; b, n, e on an async track of (pid, cat, id); M events
 * (process_name, process_labels, process_sort_index, thread_name,
 * thread_sort_index) their track's descriptor, written again with every change.
 * Args are debug annotations (ints, uints, doubles, bools, strings, null, nested
 * arrays and dicts). Event names, categories, annotation names and short string
 * values are interned per sequence: one table, iids shared by every sequence, each
 * sequence sending a string once (a bitmap); when the table fills it is emptied and
 * each sequence is cleared again before its next packet, a new ClockSnapshot then
 * at the sequence's latest time, never earlier. Other phases (P, O, N, D, S, T, F,
 * ...), and events without a time, have no place in the format: they are counted.
 *
 * Every packet leaves through one function (pf_write.c, sink_packet()): the place
 * where packets would be batched into compressed_packets.
 *
 * Memory: the intern table (bounded), and state per process, thread and counter
 * track, and per open async span, within the state budget (budget.h); an event
 * whose track is past it is counted, not written.
 *
 * Thread safety: a writer is used by one thread at a time.
 */
#ifndef RTR_TOOLS_PF_WRITE_H
#define RTR_TOOLS_PF_WRITE_H

#include "event.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct output;
struct pf_writer;

/* What a writer did with the events it was given. */
struct pf_writer_counts {
	uint64_t events;     /* written */
	uint64_t packets;    /* packets written */
	uint64_t no_place;   /* of a phase the format has no place for */
	uint64_t no_time;    /* without ts (other than M), or out of the clock's range */
	uint64_t over_bound; /* on a track past the state bound */
	char phases[24];     /* the phases of no_place, NUL-terminated (the first few) */
};

/* A writer into out (opened by the caller, committed by the caller). 0, or -ENOMEM. */
int pf_writer_create(struct output *out, struct pf_writer **w);

/* Write one event. 0, or -1: out of memory (pf_writer_nomem()) or the output failed
 * (output_error()); then every later call returns -1. */
int pf_writer_event(struct pf_writer *w, const struct trace_event *ev);

/* The same for an event given as its compact JSON, as trace_event.json is (merge's
 * lines). */
int pf_writer_json(struct pf_writer *w, const char *json, size_t len);

/* The end of the events: nothing is held back, so only errors are left to say. 0 or
 * -1. */
int pf_writer_finish(struct pf_writer *w);

const struct pf_writer_counts *pf_writer_counts(const struct pf_writer *w);

/* Did the writer run out of memory (rather than the output fail)? */
bool pf_writer_nomem(const struct pf_writer *w);

void pf_writer_free(struct pf_writer *w);

/* Does path name a Perfetto trace: .pftrace or .perfetto-trace, with or without .gz? */
bool pf_path_is_pftrace(const char *path);

#endif /* RTR_TOOLS_PF_WRITE_H */
