/* SPDX-License-Identifier: MIT */
/*
 * The chunk being filled, a line at a time: for the writer and the formats.
 *
 * A line is reserved (out_reserve(): the most it can take), written at the cursor,
 * then committed (out_commit()). A chunk only ever holds whole lines, and chunks
 * reach the file in order, so a file cut by a kill ends after a whole line (or
 * inside the last one written, which the repair rule drops). Every chunk keeps
 * TAIL_ROOM free for the closing lines (out.c), and the chunk remembers where
 * lines that are not events end, so that a write that fails partway can tell how
 * many events landed.
 */
#ifndef RTR_WRITER_OUT_H
#define RTR_WRITER_OUT_H

#include "writer/writer_internal.h"

#include <string.h>

/* A new file begins: its id (struct rtr__out.file_id), unique in the process. */
void rtr__out_new_file(struct rtr__writer *w);
/* out_reserve() found no room for `need` bytes: the session's files decide (the hook
 * struct rtr__out.full, set by files.c). */
void rtr__out_full(struct rtr__writer *w, size_t need);
/* The chunk's limit for out_reserve(): the chunk's size, a segment's room, or a
 * flight chunk's share of the window. */
void rtr__out_set_limit(struct rtr__writer *w);
/* A write error on stderr, once per session. */
void rtr__out_report_error(struct rtr__writer *w);
/* The path of the session's file number no (a segment or a snapshot). 0 or -errno. */
int rtr__out_path(struct rtr__writer *w, uint64_t no, char *out, size_t size);

/* Events that fell out of the flight window and are in no snapshot: while a snapshot
 * is written, those it does not hold. */
static inline uint64_t rtr__flight_evicted(const struct rtr__out *o)
{
	return o->snapshotting ? o->snapshot_evicted : o->flight_evicted;
}

#define PAGE_BYTES 4096u /* lines are kept from crossing file pages (out_commit()) */
/* Kept free in every chunk for the closing lines: the end marker and "]", a page of
 * padding, and the held slices' B's of a provisional close (cut.c). */
#define HELD_TAIL_BYTES (16 * 1024)
#define TAIL_ROOM	(1024 + 2 * PAGE_BYTES + HELD_TAIL_BYTES)

/* Room for `need` more bytes in the current chunk; returns the cursor. */
static inline char *out_reserve(struct rtr__writer *w, size_t need)
{
	struct rtr__out *o = &w->out;

	if (RTR_UNLIKELY(o->chunk->len + need + PAGE_BYTES + TAIL_ROOM > o->chunk_limit))
		rtr__out_full(w, need);
	return o->chunk->data + o->chunk->len;
}

/* Close a line: an event's (events 1) or another (events 0), whose end the chunk
 * remembers so that a partly failed write can tell how many events landed. Returns
 * the cursor for the next line: the line may have moved. */
static inline char *out_commit(struct rtr__writer *w, char *end, uint64_t events)
{
	struct rtr__out *o = &w->out;
	struct rtr__chunk *c = o->chunk;
	size_t start = c->len, len = (size_t)(end - (c->data + start));
	/* The chunk lands at the sink's offset. A kill stops a write at a page boundary
	 * of the file, so a line that would cross one starts on the next page instead,
	 * after spaces (JSON whitespace): a killed run's file then ends after a whole
	 * line, which every viewer loads. Costs about half a line per 4 KiB. Compressed
	 * output has no such pages (sink_gzip.c). */
	size_t room = PAGE_BYTES - (size_t)((o->sink.offset + start) & (PAGE_BYTES - 1));

	if (RTR_UNLIKELY(len > room) && len <= PAGE_BYTES && o->sink.gzip == NULL &&
	    o->provisional && o->pads_pages) { /* a stream has no pages to keep lines in */
		memmove(c->data + start + room, c->data + start, len);
		memset(c->data + start, ' ', room);
		start += room;
	}
	c->len = start + len;
	c->events += events;
	o->encoded += events;
	if (events == 0 && c->nmeta++ < RTR_CHUNK_META_MAX)
		c->meta_end[c->nmeta - 1] = (uint32_t)c->len;
	return c->data + c->len; /* where the next line goes */
}

#endif
