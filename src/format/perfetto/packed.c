/* SPDX-License-Identifier: MIT */
/*
 * The Perfetto format's packets packed in place: the chunk being filled holds them
 * plain as they are written (pf_commit(), pf.h), and each run of them, a batch of at
 * most RTR__PF_BATCH_BYTES, is replaced by one TracePacket {compressed_packets}
 * (pack.c) when the next event would take it past that, and when the chunk goes to
 * the sink or the flight window (rtr__format.seal). The chunk is then shorter and
 * holds the same events; a killed run's file ends after a whole batch, or inside the
 * one being written, which a reader drops like any cut packet.
 *
 * Not packed: the file's head (its start marker readable to any tool), the end
 * markers (the provisional one is cut off and written again), a flight chunk's
 * prologue (a snapshot copies what follows it), what the format did not write
 * itself in a row (a snapshot's copied lines), everything when the file is
 * gzip-compressed or RINGTRACE_PF_COMPRESS=0, and a batch written while the writer is
 * behind its producer (it waited or dropped for room since the last drain, or three
 * quarters of its ring wait): packing costs the writer about 1 ns a byte, which a
 * producer at full speed would otherwise spend waiting for room.
 */
#include "format/perfetto/pf.h"

#include <string.h>

void rtr__pf_seal(struct rtr__writer *w)
{
	struct rtr__pf *pf = pf_of(w);
	struct rtr__chunk *c = w->out.chunk;
	size_t from = pf->zmark;

	if (pf->packer == NULL || c != pf->zchunk || c->len != pf->zend || w->out.sink.gzip != NULL)
		goto done;
	/* the writer behind its producers: the batch goes plain rather than have them
	 * wait for the compressor (struct rtr__drain.behind) */
	if (w->drain.behind)
		goto done;
	/* a flight chunk's prologue stays as it is: only a window starting there has it */
	if (from < c->prologue && c->prologue <= pf->zend)
		from = c->prologue;
	size_t n = pf->zend - from;
	if (n == 0 || n > PF_ZBATCH_MAX)
		goto done;
	size_t z = rtr__pf_pack(pf->packer, c->data + from, n, pf->zbuf,
				rtr__pf_pack_bound(PF_ZBATCH_MAX));
	if (z > 0) {
		memcpy(c->data + from, pf->zbuf, z);
		c->len = from + z;
		/* its lines' ends (for a write that fails partway) no longer hold: such a
		 * write then counts none of its events as landed, as for gzip */
		c->nmeta = RTR_CHUNK_META_MAX + 1;
	}
done:
	pf->zchunk = c;
	pf->zmark = pf->zend = c->len;
}
