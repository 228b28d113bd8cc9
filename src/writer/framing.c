/* SPDX-License-Identifier: MIT */
/*
 * The file around the lines: its head, the provisional close, the end marker, and the
 * chunks handed to the sink.
 *
 * The file is a bare JSON array, one event per line: "[", the start marker (the
 * origin and the configuration, what a merge needs), the process name, the events,
 * then the end marker with the totals and "]". Every chunk but the last ends in a
 * provisional end marker and "]", which the sink cuts off before it writes the next
 * chunk in their place. So a file between two writes (a killed run, or a reader
 * while the run goes on) is strict JSON with an end marker that says "final": false,
 * and one cut during a write ends after a whole line (out.h), which the repair rule
 * handles. A stream (a pipe) cannot be cut: it gets no provisional close. The head
 * and the end marker are this format's begin_file and end_file (json.c's table);
 * the chunk handling below calls the end through the table.
 *
 * A write error that cut the file for room (ENOSPC, EFBIG, EDQUOT) gets the end
 * marker back at the latest place the device takes it (rtr__out_close_after_error()).
 */
#include "writer/json.h"

#include "common/atomic.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

void rtr__out_report_error(struct rtr__writer *w)
{
	int err = rtr_atomic_load_relaxed(&w->out.sink.error);

	if (err != 0 && !w->out.error_reported) {
		w->out.error_reported = 1;
		if (err == -ETIMEDOUT) {
			fprintf(stderr,
				"ringtrace: writing %s: gave up after %u ms "
				"(RINGTRACE_STOP_TIMEOUT_MS); "
				"the events not written are counted as dropped\n",
				w->s.path, w->s.cfg.stop_timeout_ms);
			return;
		}
		fprintf(stderr,
			"ringtrace: writing %s failed: %s; the events not written are counted as "
			"dropped\n",
			w->s.path, strerror(-err));
	}
}

/*
 * Hand the chunk to the sink. Every chunk but the last ends in a provisional end
 * marker and "]", which the sink cuts off before it writes the next chunk in their
 * place. So a file between two writes (a killed run, or a reader while the run goes
 * on) is strict JSON with a window end that says "final": false; one cut during a
 * write ends after a whole line (see out_commit()), and the repair rule applies.
 */
void rtr__out_submit(struct rtr__writer *w)
{
	if (w->out.chunk->len == 0)
		return;
	if (w->out.flight != NULL && !w->out.snapshotting) {
		rtr__cut_keep_chunk(w); /* no file: the window keeps it, sets the limit */
		return;
	}
	w->out.chunk->keep = w->out.chunk->len;
	if (!w->out.finishing && w->out.provisional)
		w->fmt->end_file(w, 0);
	else
		w->out.chunk->keep = 0; /* all of it */
	rtr__sink_submit(&w->out.sink, w->out.chunk);
	w->out.chunk = rtr__sink_acquire(&w->out.sink);
	rtr__out_set_limit(w);
	rtr__out_report_error(w);
}

/*
 * The limit out_reserve() fills a chunk to. With rotation it is the segment's room
 * (what max_mb leaves, plus the slack out_reserve() keeps), so that the lines near
 * the segment's end go through rtr__out_full(), which ends the segment once they
 * fill it; otherwise, and while a cut writes its own lines, the chunk's size.
 */
void rtr__out_set_limit(struct rtr__writer *w)
{
	struct rtr__out *o = &w->out;
	uint64_t used = o->sink.text_offset, left;

	o->chunk_limit = RTR__CHUNK_BYTES;
	if (o->flight != NULL && !o->snapshotting) {
		/* a flight chunk: its prologue, then its share of the window (cut.c) */
		o->chunk_limit = o->chunk->prologue + o->chunk_target + PAGE_BYTES + TAIL_ROOM;
		if (o->chunk_limit > o->chunk_room)
			o->chunk_limit = o->chunk_room;
		return;
	}
	if (o->limit_bytes == UINT64_MAX || o->cutting)
		return;
	left = used < o->limit_bytes ? o->limit_bytes - used : 0;
	if (left + PAGE_BYTES + TAIL_ROOM < RTR__CHUNK_BYTES)
		o->chunk_limit = (size_t)left + PAGE_BYTES + TAIL_ROOM;
}

/* The longest line a segment keeps room for at its end (most are under 200 bytes). */
#define LINE_SLACK (16 * 1024)

void rtr__out_full(struct rtr__writer *w, size_t need)
{
	struct rtr__out *o = &w->out;
	size_t room = o->flight != NULL && !o->snapshotting ? o->chunk_room : RTR__CHUNK_BYTES;
	int segment = o->limit_bytes != UINT64_MAX && !o->cutting;
	int window = o->flight != NULL && !o->snapshotting && !o->cutting;

	/*
	 * need is the most the next line can take, far more than it does. So a segment
	 * (rotation) or a flight chunk ends once its lines fill it, and until then each
	 * line near its end gets room for itself alone and asks again. A segment ends
	 * with room for a line of LINE_SLACK and its closing lines, so that it stays
	 * within max_mb unless one line is longer. A segment holding no event goes on
	 * whatever its size (its one line must go somewhere).
	 */
	uint64_t fill = o->sink.text_offset + o->chunk->len;
	int seg_full = segment && fill + LINE_SLACK + rtr__cut_closing_bytes(w) >= o->limit_bytes;
	if (seg_full && o->encoded > o->file_events) {
		rtr__cut_rotate(w);
	} else if ((segment && !seg_full) ||
		   (window && o->chunk->len < o->chunk->prologue + o->chunk_target)) {
		if (o->chunk->len + need + PAGE_BYTES + TAIL_ROOM <= room) {
			o->chunk_limit = o->chunk->len + need + PAGE_BYTES + TAIL_ROOM;
			return;
		}
		rtr__out_submit(w);
	} else {
		rtr__out_submit(w);
	}
	/* this line goes in whatever the limit (and the next asks again) */
	if (o->chunk->len + need + PAGE_BYTES + TAIL_ROOM > o->chunk_limit)
		o->chunk_limit = o->chunk->len + need + PAGE_BYTES + TAIL_ROOM <= room
					 ? o->chunk->len + need + PAGE_BYTES + TAIL_ROOM
					 : room;
}

static char *put_escaped_str(char *p, const char *s)
{
	*p++ = '"';
	p = rtr__json_escape(p, s, strnlen(s, 1024));
	*p++ = '"';
	return p;
}

void rtr__json_begin_file(struct rtr__writer *w)
{
	const struct rtr__session *s = &w->s;
	char *p = out_reserve(w, 16384);

	p = PUT_LIT(p, "[\n");
	p = out_commit(w, p, 0); /* every line, even this one, is accounted for by itself */
	p = PUT_LIT(p, "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"ringtrace: start\",\"ts\":0");
	p = put_pid_tid(w, p, s->start_tid);
	p = PUT_LIT(p, ",\"args\":{\"origin_monotonic_ns\":\"");
	p = rtr__json_u64(p, s->origin_ns);
	p = PUT_LIT(p, "\",\"origin_realtime_ns\":\"");
	p = rtr__json_u64(p, s->origin_real_ns);
	p = PUT_LIT(p, "\",\"host\":");
	p = put_escaped_str(p, s->host);
	p = PUT_LIT(p, ",\"pid\":");
	p = rtr__json_u64(p, (uint64_t)s->pid);
	if (s->rank >= 0) {
		p = PUT_LIT(p, ",\"rank\":");
		p = rtr__json_u64(p, (uint64_t)s->rank);
	}
	if (s->world_size > 0) {
		p = PUT_LIT(p, ",\"world_size\":");
		p = rtr__json_u64(p, (uint64_t)s->world_size);
	}
	p = PUT_LIT(p, ",\"version\":\"" RTR_VERSION_STRING "\",\"clock\":");
	p = put_escaped_str(p, s->clock.kind == RTR_CLOCK_TSC ? "tsc" : "monotonic");
	p = PUT_LIT(p, ",\"io\":");
	p = put_escaped_str(p, rtr_io_name(w->out.sink.method));
	p = PUT_LIT(p, ",\"ring_bytes\":");
	p = rtr__json_u64(p, s->cfg.ring_bytes);
	p = PUT_LIT(p, ",\"on_full\":");
	p = put_escaped_str(p, s->cfg.on_full == RTR_ON_FULL_BLOCK ? "block" : "drop");
	p = PUT_LIT(p, ",\"flush_ms\":");
	p = rtr__json_u64(p, s->cfg.flush_ms);
	if (s->categories[0] != '\0') { /* the category filter: this trace holds only these */
		p = PUT_LIT(p, ",\"categories\":");
		p = put_escaped_str(p, s->categories);
	}
	p = PUT_LIT(p, ",\"compress\":");
	p = put_escaped_str(p, w->out.sink.gzip != NULL ? "gzip" : "none");
	p = PUT_LIT(p, ",\"cache_mb\":");
	p = rtr__json_u64(p, w->out.sink.cache_window >> 20);
	if (s->cfg.mode == RTR_MODE_FLIGHT) {
		p = PUT_LIT(p, ",\"mode\":\"flight\",\"flight_mb\":");
		p = rtr__json_u64(p, s->cfg.flight_mb);
		p = PUT_LIT(p, ",\"snapshot\":");
		p = rtr__json_u64(p, w->out.file_no);
	} else if (s->numbered) {
		p = PUT_LIT(p, ",\"segment\":");
		p = rtr__json_u64(p, w->out.file_no);
		if (s->cfg.max_mb > 0) {
			p = PUT_LIT(p, ",\"max_mb\":");
			p = rtr__json_u64(p, s->cfg.max_mb);
		}
		if (s->cfg.max_seconds > 0) {
			p = PUT_LIT(p, ",\"max_seconds\":");
			p = rtr__json_u64(p, s->cfg.max_seconds);
		}
	}
	p = PUT_LIT(p, "}},\n");
	p = out_commit(w, p, 0);
	p = PUT_LIT(p, "{\"ph\":\"M\",\"name\":\"process_name\"");
	p = put_pid_tid(w, p, s->pid);
	p = PUT_LIT(p, ",\"args\":{\"name\":");
	p = put_escaped_str(p, s->process_name);
	p = PUT_LIT(p, "}},\n");
	out_commit(w, p, 0);
	rtr__json_process_meta(w); /* the label and sort index, in every file */
}

/*
 * The closing lines: the end marker with the totals so far, then "]". final 0: the
 * provisional close at the end of a chunk (see rtr__out_submit()); it goes in the room
 * out_reserve() keeps free. "bytes" counts the JSON text that precedes the marker
 * (uncompressed in a .json.gz).
 */
void rtr__out_end_counts(struct rtr__writer *w, int final, struct rtr__end_counts *c)
{
	c->full = rtr_atomic_load_relaxed(&w->acct.st_dropped_full);
	c->large = rtr_atomic_load_relaxed(&w->acct.st_dropped_large);
	c->reentrant = rtr_atomic_load_relaxed(&w->acct.st_dropped_reentrant);
	c->corrupt = rtr_atomic_load_relaxed(&w->acct.st_dropped_corrupt);
	c->no_track = rtr_atomic_load_relaxed(&w->acct.st_dropped_no_track);
	c->failed = rtr_atomic_load_relaxed(&w->out.sink.events_failed);
	c->io = c->failed + rtr_atomic_load_relaxed(&w->acct.st_unwritten);
	c->dropped = c->full + c->large + c->reentrant + c->corrupt + c->no_track + c->io;
	c->bytes = w->out.sink.text_offset + w->out.chunk->len;
	/* this file's events: a segment's since it began, a snapshot's in its window */
	c->events = w->out.snapshotting ? w->out.snapshot_events
					: w->out.encoded - w->out.file_events -
						  (c->failed - w->out.file_failed);
	c->signal = final ? rtr_atomic_load_relaxed(&w->loop.signal)
			  : rtr_atomic_load_relaxed(&w->loop.flush_signal);
	c->block = w->s.cfg.on_full == RTR_ON_FULL_BLOCK;
	c->waited = rtr_atomic_load_relaxed(&w->acct.st_waited);
	c->waited_ns = rtr_atomic_load_relaxed(&w->acct.st_waited_ns);
}

void rtr__json_end_file(struct rtr__writer *w, int final)
{
	const struct rtr__session *s = &w->s;
	struct rtr__end_counts c;

	rtr__out_end_counts(w, final, &c);
	uint64_t full = c.full, large = c.large, reentrant = c.reentrant, corrupt = c.corrupt;
	uint64_t no_track = c.no_track, failed = c.failed, io = c.io, bytes = c.bytes;
	uint64_t events = c.events;
	uint32_t sig = c.signal;
	char *p = w->out.chunk->data + w->out.chunk->len;

	p = PUT_LIT(p, "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"ringtrace: end\",\"ts\":");
	p = rtr__json_us(p, rtr__writer_rel_ns(w, rtr__mono_ns()));
	p = put_pid_tid(w, p, s->start_tid);
	p = PUT_LIT(p, ",\"args\":{\"final\":");
	p = final ? PUT_LIT(p, "true") : PUT_LIT(p, "false");
	p = PUT_LIT(p, ",\"events\":");
	p = rtr__json_u64(p, events);
	if (sig != 0) {
		p = PUT_LIT(p, ",\"signal\":");
		p = rtr__json_u64(p, sig);
	}
	if (s->numbered) {
		int flight = s->cfg.mode == RTR_MODE_FLIGHT;
		p = flight ? PUT_LIT(p, ",\"snapshot\":") : PUT_LIT(p, ",\"segment\":");
		p = rtr__json_u64(p, w->out.file_no);
		if (!flight)
			p = w->out.continues && final ? PUT_LIT(p, ",\"continues\":true")
						      : PUT_LIT(p, ",\"continues\":false");
		p = PUT_LIT(p, ",\"events_session\":");
		p = rtr__json_u64(p, w->out.encoded - failed);
		p = PUT_LIT(p, ",\"continued\":");
		p = rtr__json_u64(p, w->out.continued);
		p = flight ? PUT_LIT(p, ",\"open\":") : PUT_LIT(p, ",\"cut\":");
		p = rtr__json_u64(p, final ? w->out.closed : 0);
		if (w->out.cut_lost != 0) {
			p = PUT_LIT(p, ",\"cut_lost\":");
			p = rtr__json_u64(p, w->out.cut_lost);
		}
		if (w->out.flight != NULL) {
			uint64_t evicted, sbytes;
			rtr__cut_flight_counts(w, &evicted, &sbytes);
			p = PUT_LIT(p, ",\"evicted\":");
			p = rtr__json_u64(p, evicted);
		}
	}
	p = PUT_LIT(p, ",\"dropped\":");
	p = rtr__json_u64(p, full + large + reentrant + corrupt + no_track + io);
	p = PUT_LIT(p, ",\"dropped_ring_full\":");
	p = rtr__json_u64(p, full);
	p = PUT_LIT(p, ",\"dropped_too_large\":");
	p = rtr__json_u64(p, large);
	p = PUT_LIT(p, ",\"dropped_io\":");
	p = rtr__json_u64(p, io);
	p = PUT_LIT(p, ",\"dropped_reentrant\":");
	p = rtr__json_u64(p, reentrant);
	p = PUT_LIT(p, ",\"dropped_corrupt\":");
	p = rtr__json_u64(p, corrupt);
	p = PUT_LIT(p, ",\"dropped_no_track\":");
	p = rtr__json_u64(p, no_track);
	p = PUT_LIT(p, ",\"args_cut\":");
	p = rtr__json_u64(p, rtr_atomic_load_relaxed(&w->acct.st_args_cut));
	p = PUT_LIT(p, ",\"threads\":");
	p = rtr__json_u64(p, rtr_atomic_load_relaxed(&w->acct.st_threads));
	if (c.block) { /* how long the producers waited for the writer */
		p = PUT_LIT(p, ",\"waited\":");
		p = rtr__json_u64(p, c.waited);
		p = PUT_LIT(p, ",\"waited_ns\":");
		p = rtr__json_u64(p, c.waited_ns);
	}
	if (w->json.mem.untracked != 0) { /* allocations left out of the memory totals */
		p = PUT_LIT(p, ",\"mem_untracked\":");
		p = rtr__json_u64(p, w->json.mem.untracked);
	}
	p = PUT_LIT(p, ",\"bytes\":");
	p = rtr__json_u64(p, bytes);
	p = PUT_LIT(p, "}}\n");
	p = out_commit(w, p, 0);
	p = PUT_LIT(p, "]\n");
	out_commit(w, p, 0);
}

/*
 * A write error (ENOSPC, EFBIG) cut the file: give it back its end marker and "]" so
 * that it loads without repair, at the latest place the device takes them (the sink
 * keeps the line ends before the cut; each one further back costs the events of the
 * lines after it, counted as lost to the error). A stream cannot be cut; a compressed
 * file is left to the repair rule.
 */
void rtr__out_close_after_error(struct rtr__writer *w)
{
	int err = rtr_atomic_load_relaxed(&w->out.sink.error);

	if ((err != -ENOSPC && err != -EFBIG && err != -EDQUOT) || !w->out.provisional ||
	    w->out.sink.gzip != NULL || w->out.chunk == NULL)
		return;
	rtr__sink_wait(&w->out.sink);
	for (unsigned i = 0; i < w->out.sink.nclose; i++) {
		uint64_t lost = w->out.sink.close_lost[i];
		uint64_t failed = rtr_atomic_load_relaxed(&w->out.sink.events_failed);

		/* The marker counts as rtr__sink_write_close() will, once it succeeds. */
		rtr_atomic_store_relaxed(&w->out.sink.events_failed, failed + lost);
		w->out.chunk->len = 0;
		w->out.chunk->nmeta = 0;
		w->out.sink.offset = w->out.sink.text_offset = w->out.sink.close_off[i];
		w->fmt->end_file(w, 1);
		rtr_atomic_store_relaxed(&w->out.sink.events_failed, failed);
		if (rtr__sink_write_close(&w->out.sink, i, w->out.chunk->data, w->out.chunk->len) ==
		    0)
			return;
	}
}
