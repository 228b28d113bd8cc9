/* SPDX-License-Identifier: MIT */
/*
 * The file around the lines: the chunks handed to the sink, the provisional close,
 * the head and the end marker (written by the format, said by marker.c).
 *
 * Every chunk but the last ends in a provisional end marker (and, in JSON, the "]"
 * that closes the array), which the sink cuts off before it writes the next chunk
 * in their place. So a file between two writes (a killed run, or a reader while the
 * run goes on) is a whole trace with an end marker that says "final": false, and one
 * cut during a write ends after a whole line (out.h), which the repair rule handles.
 * A stream (a pipe) cannot be cut: it gets no provisional close.
 *
 * A write error that cut the file for room (ENOSPC, EFBIG, EDQUOT) gets the end
 * marker back at the latest place the device takes it (rtr__out_close_after_error()).
 */
#include "writer/format.h"

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
		rtr__out_end_file(w, 0);
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
		rtr__out_end_file(w, 1);
		rtr_atomic_store_relaxed(&w->out.sink.events_failed, failed);
		if (rtr__sink_write_close(&w->out.sink, i, w->out.chunk->data, w->out.chunk->len) ==
		    0)
			return;
	}
}

void rtr__out_begin_file(struct rtr__writer *w)
{
	struct rtr__marker m;

	rtr__marker_start(w, &m);
	w->fmt->begin_file(w, &m);
}

void rtr__out_end_file(struct rtr__writer *w, int final)
{
	struct rtr__marker m;

	rtr__marker_end(w, final, &m);
	w->fmt->end_file(w, &m);
}
