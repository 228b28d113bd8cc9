/* SPDX-License-Identifier: MIT */
/*
 * The chunk being filled: its limit (a segment's room, a flight chunk's share of the
 * window), what happens when it is full (the session's files decide: the hook
 * struct rtr__out.full), the file's id, write errors on stderr. The lines themselves
 * are written with out.h; the file around them is framing.c's.
 */
#include "writer/out.h"

#include "common/atomic.h"
#include "path/path.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static uint64_t file_ids;

void rtr__out_new_file(struct rtr__writer *w)
{
	/* unique in the process: the session's id and a count */
	w->out.file_id = (w->drain.session_id << 32) | (++file_ids & 0xffffffffu);
}

int rtr__out_path(struct rtr__writer *w, uint64_t no, char *out, size_t size)
{
	return rtr__path_expand(out, size, w->s.pattern, w->s.pid, w->s.host, w->s.rank, no);
}

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
 * The limit out_reserve() fills a chunk to. With rotation it is the segment's room
 * (what max_mb leaves less the lines that would close it now, LINE_SLACK and the
 * closing lines, plus the slack out_reserve() keeps), so that the lines near the
 * segment's end go through rtr__out_full(), which ends the segment once they fill it;
 * otherwise, and while a cut writes its own lines, the chunk's size.
 */
void rtr__out_set_limit(struct rtr__writer *w)
{
	struct rtr__out *o = &w->out;
	uint64_t used = o->sink.text_offset, left;

	o->chunk_limit = RTR__CHUNK_BYTES;
	if (o->flight != NULL && !o->snapshotting) {
		/* a flight chunk: its prologue, then its share of the window (flight.c) */
		o->chunk_limit = o->chunk->prologue + o->chunk_target + PAGE_BYTES + TAIL_ROOM;
		if (o->chunk_limit > o->chunk_room)
			o->chunk_limit = o->chunk_room;
		return;
	}
	if (o->limit_bytes == UINT64_MAX || o->cutting)
		return;
	uint64_t closing = LINE_SLACK + 1024 + PAGE_BYTES + o->closing; /* cut.c */
	left = used + closing < o->limit_bytes ? o->limit_bytes - used - closing : 0;
	if (left + PAGE_BYTES + TAIL_ROOM < RTR__CHUNK_BYTES)
		o->chunk_limit = (size_t)left + PAGE_BYTES + TAIL_ROOM;
}

void rtr__out_full(struct rtr__writer *w, size_t need)
{
	if (w->out.in_tail)
		return;	      /* a provisional close: within TAIL_ROOM, each line's room checked */
	w->out.full(w, need); /* the session's files decide (files.c) */
}
