/* SPDX-License-Identifier: MIT */
/*
 * Track placement: which lane of a track an event goes on, and what the lanes are
 * called. Independent of the output format; the encoder asks, then writes.
 *
 * A track (rtr_track_create(), src/producer/tracks.c) is a timeline of its own, such
 * as a GPU stream, whose events come with their own timestamps mapped to the host's
 * clock. Viewers nest the slices of one lane and drop or move one that partly
 * overlaps another; here such a slice moves to an overflow lane instead, visibly
 * named ("lane (2)") and sorted right after its lane. A complete event [start, end)
 * goes on the first lane where it nests inside, or comes after, every interval
 * still open there; events are expected in start order per lane, as devices report
 * them, and the last lane takes what fits nowhere. An instant or counter inside the
 * last complete event goes on that event's lane.
 *
 * The lane state lives in the track and belongs to the writer thread; it is set
 * back at each session's first event on the track (lanes_session).
 */
#include "writer/lanes.h"

#include <stdio.h>

unsigned rtr__lane_place(struct rtr_track *t, uint64_t session, uint64_t start, uint64_t end)
{
	if (t->lanes_session != session) {
		for (unsigned k = 0; k < RTR_TRACK_LANES; k++)
			t->lanes[k].depth = 0;
		t->lanes_session = session;
	}
	unsigned k = 0;
	for (; k < RTR_TRACK_LANES; k++) {
		struct rtr__lane *l = &t->lanes[k];
		while (l->depth > 0 && l->end[l->depth - 1] <= start)
			l->depth--; /* ended before this one starts */
		if (l->depth == 0 || end <= l->end[l->depth - 1])
			break;
	}
	if (k == RTR_TRACK_LANES)
		k = RTR_TRACK_LANES - 1;
	struct rtr__lane *l = &t->lanes[k];
	if (l->depth < RTR_LANE_DEPTH)
		l->end[l->depth++] = end;
	t->last_start = start;
	t->last_end = end;
	t->last_lane = k;
	return k;
}

unsigned rtr__lane_at(const struct rtr_track *t, uint64_t host)
{
	/* inside the last complete event: on its lane */
	return host >= t->last_start && host < t->last_end ? t->last_lane : 0;
}

uint64_t rtr__lane_host_ns(const struct rtr_track *t, uint64_t ts)
{
	/* relaxed: one value set by the program before these events */
	int64_t off = __atomic_load_n(&t->offset_ns, __ATOMIC_RELAXED);

	if (off < 0) {
		uint64_t back = -(uint64_t)off; /* unsigned: INT64_MIN's magnitude too */
		return ts > back ? ts - back : 0;
	}
	return ts + (uint64_t)off >= ts ? ts + (uint64_t)off : UINT64_MAX;
}

bool rtr__lane_claim_name(struct rtr_track *t, unsigned k, uint64_t session)
{
	if (t->lanes[k].named == session)
		return false;
	t->lanes[k].named = session;
	return true;
}

size_t rtr__lane_name(const struct rtr_track *t, unsigned k, char *buf, size_t size)
{
	int len = k == 0 ? snprintf(buf, size, "%s", t->lane)
			 : snprintf(buf, size, "%s (%u)", t->lane, k + 1);

	return len < 0 ? 0 : (size_t)len < size ? (size_t)len : size - 1;
}

int64_t rtr__lane_sort_index(const struct rtr_track *t, unsigned k)
{
	/* overflow lanes sort right after their lane */
	return (int64_t)t->lane_sort_index * RTR_TRACK_LANES + k;
}
