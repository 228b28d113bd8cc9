/* SPDX-License-Identifier: MIT */
/*
 * Track placement, independent of the format (lanes.c).
 */
#ifndef RTR_WRITER_LANES_H
#define RTR_WRITER_LANES_H

#include "producer/tracks.h"
#include <stdbool.h>

/* The lane of a complete event [start, end) on track t (placing it there), of an
 * event at `host` otherwise (the last complete event's lane if inside it, else 0). */
unsigned rtr__lane_place(struct rtr_track *t, uint64_t session, uint64_t start, uint64_t end);
unsigned rtr__lane_at(const struct rtr_track *t, uint64_t host);
/* Host nanoseconds of a track timestamp: its clock mapping, clamped. */
uint64_t rtr__lane_host_ns(const struct rtr_track *t, uint64_t ts);
/* Whether lane k of t still needs its name in file `file` (then it has it). */
bool rtr__lane_claim_name(struct rtr_track *t, unsigned k, uint64_t file);
/* Lane k's shown name into buf (size bytes); returns its length. Its sort index. */
size_t rtr__lane_name(const struct rtr_track *t, unsigned k, char *buf, size_t size);
int64_t rtr__lane_sort_index(const struct rtr_track *t, unsigned k);

#endif
