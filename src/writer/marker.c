/* SPDX-License-Identifier: MIT */
/*
 * What the markers say. Every file opens with a start marker (the origin and the
 * configuration: what a merge and a reader need) and closes with an end marker (the
 * totals: events written, dropped by reason, bytes); a provisional end marker closes
 * every chunk until the next one replaces it. The keys are names.h's, listed here
 * once for every format, in the order the formats write them.
 */
#include "writer/format.h"

#include "common/atomic.h"
#include "writer/out.h"

static void put_num(struct rtr__marker *m, const char *key, uint64_t num)
{
	m->kv[m->n++] = (struct rtr__kv){key, RTR__KV_U64, NULL, num};
}

static void put_text_num(struct rtr__marker *m, const char *key, uint64_t num)
{
	m->kv[m->n++] = (struct rtr__kv){key, RTR__KV_U64_TEXT, NULL, num};
}

static void put_str(struct rtr__marker *m, const char *key, const char *str)
{
	m->kv[m->n++] = (struct rtr__kv){key, RTR__KV_STR, str, 0};
}

static void put_bool(struct rtr__marker *m, const char *key, int b)
{
	m->kv[m->n++] = (struct rtr__kv){key, RTR__KV_BOOL, NULL, b != 0};
}

void rtr__marker_start(struct rtr__writer *w, struct rtr__marker *m)
{
	const struct rtr__session *s = &w->s;

	m->name = RTR__MARK_START;
	m->ts = s->origin_ns;
	m->final = 0;
	m->events = m->dropped = 0;
	m->n = 0;
	put_text_num(m, RTR__KEY_ORIGIN_MONO, s->origin_ns);
	put_text_num(m, RTR__KEY_ORIGIN_REAL, s->origin_real_ns);
	put_str(m, RTR__KEY_HOST, s->host);
	put_num(m, RTR__KEY_PID, (uint64_t)s->pid);
	if (s->rank >= 0)
		put_num(m, RTR__KEY_RANK, (uint64_t)s->rank);
	if (s->world_size > 0)
		put_num(m, RTR__KEY_WORLD_SIZE, (uint64_t)s->world_size);
	put_str(m, RTR__KEY_VERSION, RTR_VERSION_STRING);
	put_str(m, RTR__KEY_CLOCK, s->clock.kind == RTR_CLOCK_TSC ? "tsc" : "monotonic");
	put_str(m, RTR__KEY_IO, rtr_io_name(w->out.sink.method));
	put_num(m, RTR__KEY_RING_BYTES, s->cfg.ring_bytes);
	put_str(m, RTR__KEY_ON_FULL, s->cfg.on_full == RTR_ON_FULL_BLOCK ? "block" : "drop");
	put_num(m, RTR__KEY_FLUSH_MS, s->cfg.flush_ms);
	if (s->categories[0] != '\0') /* the category filter: this trace holds only these */
		put_str(m, RTR__KEY_CATEGORIES, s->categories);
	put_str(m, RTR__KEY_COMPRESS, w->out.sink.gzip != NULL ? "gzip" : "none");
	put_num(m, RTR__KEY_CACHE_MB, w->out.sink.cache_window >> 20);
	if (s->cfg.mode == RTR_MODE_FLIGHT) {
		put_str(m, RTR__KEY_MODE, "flight");
		put_num(m, RTR__KEY_FLIGHT_MB, s->cfg.flight_mb);
		put_num(m, RTR__KEY_SNAPSHOT, w->out.file_no);
	} else if (s->numbered) {
		put_num(m, RTR__KEY_SEGMENT, w->out.file_no);
		if (s->cfg.max_mb > 0)
			put_num(m, RTR__KEY_MAX_MB, s->cfg.max_mb);
		if (s->cfg.max_seconds > 0)
			put_num(m, RTR__KEY_MAX_SECONDS, s->cfg.max_seconds);
	}
}

/*
 * The end marker: the totals so far. "events" counts this file's (a segment's since
 * it began, a snapshot's in its window); "bytes" the text before the marker
 * (uncompressed in a .json.gz).
 */
void rtr__marker_end(struct rtr__writer *w, int final, struct rtr__marker *m)
{
	const struct rtr__session *s = &w->s;
	const struct rtr__out *o = &w->out;
	/* the counters published after the last pass: relaxed, the writer's own */
	uint64_t full = rtr_atomic_load_relaxed(&w->acct.st_dropped_full);
	uint64_t large = rtr_atomic_load_relaxed(&w->acct.st_dropped_large);
	uint64_t reentrant = rtr_atomic_load_relaxed(&w->acct.st_dropped_reentrant);
	uint64_t corrupt = rtr_atomic_load_relaxed(&w->acct.st_dropped_corrupt);
	uint64_t no_track = rtr_atomic_load_relaxed(&w->acct.st_dropped_no_track);
	uint64_t failed = rtr_atomic_load_relaxed(&o->sink.events_failed);
	uint64_t io = failed + rtr_atomic_load_relaxed(&w->acct.st_unwritten);
	uint32_t sig = final ? rtr_atomic_load_relaxed(&w->loop.signal)
			     : rtr_atomic_load_relaxed(&w->loop.flush_signal);

	m->name = RTR__MARK_END;
	m->ts = rtr__mono_ns();
	m->final = final;
	m->events = o->snapshotting ? o->snapshot_events
				    : o->encoded - o->file_events - (failed - o->file_failed);
	m->dropped = full + large + reentrant + corrupt + no_track + io;
	m->n = 0;
	put_bool(m, RTR__KEY_FINAL, final);
	put_num(m, RTR__KEY_EVENTS, m->events);
	if (sig != 0)
		put_num(m, RTR__KEY_SIGNAL, sig);
	if (s->numbered) {
		int flight = s->cfg.mode == RTR_MODE_FLIGHT;
		put_num(m, flight ? RTR__KEY_SNAPSHOT : RTR__KEY_SEGMENT, o->file_no);
		if (!flight)
			put_bool(m, RTR__KEY_CONTINUES, o->continues && final);
		put_num(m, RTR__KEY_EVENTS_SESSION, o->encoded - failed);
		put_num(m, RTR__KEY_CONTINUED, o->continued);
		put_num(m, flight ? RTR__KEY_OPEN : RTR__KEY_CUT, final ? o->closed : 0);
		if (o->cut_lost != 0)
			put_num(m, RTR__KEY_CUT_LOST, o->cut_lost);
		if (o->flight != NULL)
			put_num(m, RTR__KEY_EVICTED, rtr__flight_evicted(o));
	}
	if (!final && o->held_unshown != 0) /* open slices this close could not show */
		put_num(m, RTR__KEY_OPEN_UNSHOWN, o->held_unshown);
	put_num(m, RTR__KEY_DROPPED, m->dropped);
	put_num(m, RTR__KEY_DROPPED_FULL, full);
	put_num(m, RTR__KEY_DROPPED_LARGE, large);
	put_num(m, RTR__KEY_DROPPED_IO, io);
	put_num(m, RTR__KEY_DROPPED_REENTRANT, reentrant);
	put_num(m, RTR__KEY_DROPPED_CORRUPT, corrupt);
	put_num(m, RTR__KEY_DROPPED_NO_TRACK, no_track);
	put_num(m, RTR__KEY_ARGS_CUT, rtr_atomic_load_relaxed(&w->acct.st_args_cut));
	put_num(m, RTR__KEY_THREADS, rtr_atomic_load_relaxed(&w->acct.st_threads));
	if (s->cfg.on_full == RTR_ON_FULL_BLOCK) { /* how long the producers waited */
		put_num(m, RTR__KEY_WAITED, rtr_atomic_load_relaxed(&w->acct.st_waited));
		put_num(m, RTR__KEY_WAITED_NS, rtr_atomic_load_relaxed(&w->acct.st_waited_ns));
	}
	if (w->mem.untracked != 0) /* allocations left out of the memory totals */
		put_num(m, RTR__KEY_MEM_UNTRACKED, w->mem.untracked);
	put_num(m, RTR__KEY_BYTES, o->sink.text_offset + o->chunk->len);
}
