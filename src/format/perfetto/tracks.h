/* SPDX-License-Identifier: MIT */
/*
 * Sequences and tracks of the Perfetto format (tracks.c): a sequence ready for a
 * packet in the file being written.
 */
#ifndef RTR_FORMAT_PERFETTO_TRACKS_H
#define RTR_FORMAT_PERFETTO_TRACKS_H

#include "format/perfetto/pf.h"

/* Make seq's state valid in this file before a packet of r's (tracks.c's
 * rtr__pf_seq_clear() when the file or the intern table changed). */
static inline void seq_ready(struct rtr__writer *w, struct rtr__ring *r, struct rtr__pf_seq *seq)
{
	if (RTR_LIKELY(seq->file_id == w->out.file_id && seq->epoch == pf_of(w)->epoch))
		return;
	rtr__pf_seq_clear(w, r, seq);
}

/* Room for `need` bytes of r's packets on seq (out_reserve()), seq ready in the file
 * the room is in: a chunk that fills up may end the file and begin the next, in the
 * midst of an event. */
static inline char *seq_reserve(struct rtr__writer *w, struct rtr__ring *r, struct rtr__pf_seq *seq,
				size_t need)
{
	char *p = out_reserve(w, need);

	while (RTR_UNLIKELY(seq->file_id != w->out.file_id || seq->epoch != pf_of(w)->epoch)) {
		rtr__pf_seq_clear(w, r, seq);
		p = out_reserve(w, need);
	}
	return p;
}

#endif
