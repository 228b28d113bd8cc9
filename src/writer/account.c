/* SPDX-License-Identifier: MIT */
/*
 * The session's accounting. A ring's producer counts events and drops; the writer
 * counts what it consumed (drain.c's reader state). After every pass the totals are
 * published for rtr_stats_get() and for the end marker (marker.c); after the stop's
 * wait no ring changes, and recorded = written + dropped holds exactly.
 */
#include "writer/account.h"

#include "common/atomic.h"
#include "writer/out.h"
#include "writer/polls.h"
#include "writer/slices.h"

#include <string.h>

/* The one writer (loop.c). */
extern struct rtr__writer rtr__the_writer;

/* Give a ring its reader state for this session. Rings made before the session
 * began start from their counters at that moment. */
struct rtr__reader *rtr__reader_attach(struct rtr__writer *w, struct rtr__ring *r)
{
	struct rtr__reader *rd = rtr__reader_of(r);

	if (RTR_LIKELY(rd->session == w->drain.session_id))
		return rd;
	/* A stack left by an earlier session is freed at its end; one still here is a
	 * copy in a child after fork(), of memory the child owns. */
	rtr__slices_free(rd->slices);
	rtr__polls_free(rd->polls);
	memset(rd, 0, sizeof(*rd));
	rd->session = w->drain.session_id;
	if (r->id <= w->drain.first_ring_id) {
		rd->base_events = rtr_atomic_load_relaxed(&r->events);
		rd->base_full = rtr_atomic_load_relaxed(&r->dropped_full);
		rd->base_large = rtr_atomic_load_relaxed(&r->dropped_large);
		rd->base_reentrant = rtr_atomic_load_relaxed(&r->dropped_reentrant);
		rd->base_no_track = rtr_atomic_load_relaxed(&r->dropped_no_track);
		rd->base_args_cut = rtr_atomic_load_relaxed(&r->args_cut);
		rd->base_waited = rtr_atomic_load_relaxed(&r->waited_full);
		rd->base_waited_ns = rtr_atomic_load_relaxed(&r->waited_ns);
		rd->dropped_seen =
			rd->base_full + rd->base_large + rd->base_reentrant + rd->base_no_track;
	}
	return rd;
}

/*
 * Add ring r's share of the session to t: the producer's counters since the session
 * began, and what the writer consumed. A ring whose framing broke counts as corrupt
 * what the producer published and the writer did not encode; exact once the ring is
 * drained after the stop's wait (then nothing else is in it).
 */
void rtr__account_ring(struct rtr__writer *w, struct rtr__ring *r, struct rtr__totals *t)
{
	struct rtr__reader *rd = rtr__reader_attach(w, r);
	/* producer-owned counters, relaxed: a stale value is one pass old */
	uint64_t events = rtr_atomic_load_relaxed(&r->events) - rd->base_events;

	t->events += events;
	t->full += rtr_atomic_load_relaxed(&r->dropped_full) - rd->base_full;
	t->large += rtr_atomic_load_relaxed(&r->dropped_large) - rd->base_large;
	t->reentrant += rtr_atomic_load_relaxed(&r->dropped_reentrant) - rd->base_reentrant;
	t->no_track += rtr_atomic_load_relaxed(&r->dropped_no_track) - rd->base_no_track;
	t->args_cut += rtr_atomic_load_relaxed(&r->args_cut) - rd->base_args_cut + rd->args_lost;
	t->waited += rtr_atomic_load_relaxed(&r->waited_full) - rd->base_waited;
	t->waited_ns += rtr_atomic_load_relaxed(&r->waited_ns) - rd->base_waited_ns;
	t->consumed += rd->events;
	if (rd->unframed && rtr__ring_readable(r) == 0 && events >= rd->events)
		rd->corrupt = events - rd->events;
	t->corrupt += rd->corrupt;
}

/*
 * Publish the session's counters for rtr_stats_get() and the end marker:
 *	recorded = published + dropped by producers (full, too large, reentrant, no track)
 *	published = consumed (encoded: written or lost to I/O) + corrupt + unwritten
 * where unwritten is what a stop left in the rings (final: after the stop's wait, so
 * the identity recorded = written + dropped holds exactly, see ring.h).
 */
void rtr__writer_account(struct rtr__writer *w, int final)
{
	struct rtr__ring_list rings;
	size_t n = rtr__rings_list(&rings);
	struct rtr__totals t = w->acct.retired;

	for (size_t i = 0; i < n; i++)
		rtr__account_ring(w, rings.v[i], &t);
	rtr__rings_list_done(&rings);
	t.reentrant += rtr__rings_reentrant_unattached() - w->acct.base_unattached;
	/* stats: relaxed; readers accept a value one pass old */
	rtr_atomic_store_relaxed(&w->acct.st_recorded,
				 t.events + t.full + t.large + t.reentrant + t.no_track);
	rtr_atomic_store_relaxed(&w->acct.st_dropped_full, t.full);
	rtr_atomic_store_relaxed(&w->acct.st_dropped_large, t.large);
	rtr_atomic_store_relaxed(&w->acct.st_dropped_reentrant, t.reentrant);
	rtr_atomic_store_relaxed(&w->acct.st_dropped_no_track, t.no_track);
	rtr_atomic_store_relaxed(&w->acct.st_dropped_corrupt, t.corrupt);
	rtr_atomic_store_relaxed(&w->acct.st_args_cut, t.args_cut);
	rtr_atomic_store_relaxed(&w->acct.st_waited, t.waited);
	rtr_atomic_store_relaxed(&w->acct.st_waited_ns, t.waited_ns);
	rtr_atomic_store_relaxed(&w->acct.st_threads, w->drain.threads);
	rtr_atomic_store_relaxed(&w->acct.st_files, w->out.files);
	if (w->out.flight != NULL) {
		rtr_atomic_store_relaxed(&w->acct.st_evicted, rtr__flight_evicted(&w->out));
		rtr_atomic_store_relaxed(&w->acct.st_snapshot_bytes, w->out.snapshot_bytes);
		rtr_atomic_store_relaxed(&w->acct.st_flight_written, t.consumed);
	}
	if (final && t.events > t.consumed + t.corrupt)
		rtr_atomic_store_relaxed(&w->acct.st_unwritten, t.events - t.consumed - t.corrupt);
}

uint64_t rtr__writer_segment(void)
{
	/* relaxed: a number stored by the writer alone; after an rtr_flush() (whose
	 * handshake orders the writer's work before its return) the current one, else
	 * worst case one segment old */
	return rtr_atomic_load_relaxed(&rtr__the_writer.acct.st_segment);
}

void rtr__writer_stats(struct rtr_stats *out)
{
	struct rtr__writer *w = &rtr__the_writer;

	memset(out, 0, sizeof(*out));
	/* every field: relaxed, a snapshot at most one writer pass old */
	out->events_recorded = rtr_atomic_load_relaxed(&w->acct.st_recorded);
	out->events_dropped_full = rtr_atomic_load_relaxed(&w->acct.st_dropped_full);
	out->events_dropped_too_large = rtr_atomic_load_relaxed(&w->acct.st_dropped_large);
	out->events_dropped_io = rtr_atomic_load_relaxed(&w->out.sink.events_failed) +
				 rtr_atomic_load_relaxed(&w->acct.st_unwritten);
	out->events_written = rtr_atomic_load_relaxed(&w->out.sink.events_written);
	out->files = rtr_atomic_load_relaxed(&w->acct.st_files);
	out->events_evicted = rtr_atomic_load_relaxed(&w->acct.st_evicted);
	if (rtr_atomic_load_relaxed(&w->acct.st_flight)) {
		/* written to the window; the sink is a snapshot's */
		out->events_dropped_io = rtr_atomic_load_relaxed(&w->acct.st_unwritten);
		out->events_written = rtr_atomic_load_relaxed(&w->acct.st_flight_written);
	}
	out->events_dropped_reentrant = rtr_atomic_load_relaxed(&w->acct.st_dropped_reentrant);
	out->events_dropped_corrupt = rtr_atomic_load_relaxed(&w->acct.st_dropped_corrupt);
	out->events_dropped_no_track = rtr_atomic_load_relaxed(&w->acct.st_dropped_no_track);
	out->events_dropped = out->events_dropped_full + out->events_dropped_too_large +
			      out->events_dropped_io + out->events_dropped_reentrant +
			      out->events_dropped_corrupt + out->events_dropped_no_track;
	out->bytes_written = rtr_atomic_load_relaxed(&w->acct.st_flight)
				     ? rtr_atomic_load_relaxed(&w->acct.st_snapshot_bytes)
				     : rtr_atomic_load_relaxed(&w->out.sink.bytes_written);
	out->events_args_cut = rtr_atomic_load_relaxed(&w->acct.st_args_cut);
	out->events_waited_full = rtr_atomic_load_relaxed(&w->acct.st_waited);
	out->waited_ns = rtr_atomic_load_relaxed(&w->acct.st_waited_ns);
	out->threads = rtr_atomic_load_relaxed(&w->acct.st_threads);
	out->writer_wakeups = rtr_atomic_load_relaxed(&w->acct.st_wakeups);
	out->io_method = rtr_atomic_load_relaxed(&w->acct.st_io);
	out->clock = rtr_atomic_load_relaxed(&w->acct.st_clock);
	out->write_error = rtr_atomic_load_relaxed(&w->out.sink.error);
	out->bytes_uncompressed = rtr_atomic_load_relaxed(&w->acct.st_flight)
					  ? out->bytes_written
					  : rtr_atomic_load_relaxed(&w->out.sink.bytes_text);
}
