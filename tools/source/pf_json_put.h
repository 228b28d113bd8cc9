/* SPDX-License-Identifier: MIT */
/*
 * What the JSON events of a .pftrace are made of (pf_json.c): the debug annotations
 * as args, the place (pid, tid) of a track's events, and the keys every event
 * writes. Shared by pf_json.c and pf_json_put.c only.
 */
#ifndef RTR_TOOLS_SOURCE_PF_JSON_PUT_H
#define RTR_TOOLS_SOURCE_PF_JSON_PUT_H

#include "json.h"
#include "pftrace.h"

#include <stdbool.h>
#include <stdint.h>

/* The start marker's args that are 64-bit times ("origin_monotonic_ns", ...): written
 * as strings, as the recorder writes them (a double cannot hold them). */
#define PF_JSON_ORIGIN_PREFIX "origin_"

/* Where an event of a track goes in JSON. */
enum place_kind { PLACE_THREAD, PLACE_PROCESS, PLACE_COUNTER, PLACE_ASYNC, PLACE_GLOBAL };

struct place {
	enum place_kind kind;
	int64_t pid, tid;
};

/* Is s the string lit? */
bool pfj_str_is(struct pf_str s, const char *lit);

/* Where the events of track uuid (t as described, NULL when undeclared) go. */
struct place pfj_place_of(const struct pf_packet *pk, uint64_t uuid, const struct pf_track *t);

/* An event not on a thread's track at the pid and tid of the thread whose sequence
 * wrote it (its default track), as the recorder's JSON has it; else as it was. */
void pfj_place_on_writer(const struct pf_packet *pk, struct place *at);

/* The top-level annotations of ev as object members (the start marker's origins as
 * strings when start_marker). 0, or -1 out of memory. */
int pfj_put_args(struct buf *b, const struct pf_event *ev, bool start_marker);

/* ,"ts":..,"pid":..,"tid":.. 0, or -1. */
int pfj_put_where(struct buf *b, int64_t ts, const struct place *at);

/* ,"cat":..,"name":.. (each when present). 0, or -1. */
int pfj_put_names(struct buf *b, struct pf_str cat, struct pf_str name);

/* ,"ts":..,"id":"0x..","pid":..,"tid":.. (a flow's or an async span's, in the
 * recorder's order). 0, or -1. */
int pfj_put_where_id(struct buf *b, int64_t ts, uint64_t id, const struct place *at);

#endif /* RTR_TOOLS_SOURCE_PF_JSON_PUT_H */
