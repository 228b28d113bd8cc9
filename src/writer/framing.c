/* SPDX-License-Identifier: MIT */
/*
 * The file around the lines: the chunks handed to the sink, the provisional close,
 * the head and the end marker (written by the format, said by marker.c).
 *
 * Every chunk but the last ends in a provisional end marker (and, in JSON, the "]"
 * that closes the array, and before them the B's of the slices open and held: cut.c),
 * which the sink cuts off before it writes the next chunk in their place. So a file
 * between two writes (a killed run, or a reader while the run goes on) is a whole
 * trace with an end marker that says "final": false, and one cut during a write ends
 * after a whole line (out.h), which the repair rule handles.
 * A stream (a pipe) cannot be cut: it gets no provisional close.
 *
 * A write error that cut the file for room (ENOSPC, EFBIG, EDQUOT) gets the end
 * marker back at the latest place the device takes it (rtr__out_close_after_error()).
 */
#include "writer/framing.h"

#include "common/atomic.h"
#include "writer/cut.h"
#include "writer/format.h"
#include "writer/out.h"

#include <errno.h>

/* What the format holds back in the chunk, done (rtr__format.seal). */
void rtr__out_seal(struct rtr__writer *w)
{
	if (w->fmt->seal != NULL)
		w->fmt->seal(w);
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
	rtr__out_seal(w);
	if (w->out.chunk->len == 0)
		return;
	w->out.chunk->keep = w->out.chunk->len;
	if (!w->out.finishing && w->out.provisional) {
		/* the slices open now whose B's are held, in the room kept for them */
		w->out.in_tail = 1;
		w->out.held_unshown = rtr__cut_show_held(w, NULL, HELD_TAIL_BYTES);
		w->out.in_tail = 0;
		rtr__out_end_file(w, 0);
	} else
		w->out.chunk->keep = 0; /* all of it */
	rtr__sink_submit(&w->out.sink, w->out.chunk);
	w->out.chunk = rtr__sink_acquire(&w->out.sink);
	rtr__out_set_limit(w);
	rtr__out_report_error(w);
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

	rtr__out_seal(w); /* before the marker counts the bytes */
	rtr__marker_end(w, final, &m);
	w->fmt->end_file(w, &m);
}
