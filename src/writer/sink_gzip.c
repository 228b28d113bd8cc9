/* SPDX-License-Identifier: MIT */
/*
 * Compressed output (.json.gz): each submitted text chunk becomes gzip members in a
 * pool chunk, compressed by libdeflate at level 1 in the writer thread.
 *
 * Members. The kept lines of a chunk, text[0, keep), become one member; the
 * provisional tail, text[keep, len) (the end marker and "]", see writer.c), a second
 * one right after it. The pool chunk keeps the first member only, so the sink cuts
 * the second off (ftruncate) before the next chunk goes in its place, exactly as it
 * cuts a plain tail. gzip(1), zlib and Perfetto read concatenated members as one
 * stream, so between two writes the file is a complete multi-member gzip of a strict
 * JSON document; a kill during a write leaves whole members and then a cut one, and
 * every reader gets the text up to the last whole member, which ends after a whole
 * line. That is also the accounting: a member cut short counts none of its events
 * as written (rtr__sink_complete()).
 *
 * Why whole-buffer members and not one zlib stream: a member is complete on its own,
 * so no state spans chunks and a cut costs at most one chunk; and libdeflate's level
 * 1 compresses JSON at about 600 MB/s on the development machine, about ten times
 * zlib's streaming deflate at level 6, which would cap the writer near 0.3 million
 * events/s. Ratio on the e2e mix: about 10.
 *
 * Memory. The text chunk and the pool come from rtr__mem_map() like every other
 * buffer. The compressor (about 200 KiB at level 1 with libdeflate 1.14) is the one
 * object from malloc(): libdeflate 1.14 (Debian 12) takes its allocator only through
 * libdeflate_set_memory_allocator(), which is process-wide and may only be called
 * while no compressor exists anywhere in the process, so a library cannot call it
 * without breaking a host program that uses libdeflate itself. The per-compressor
 * allocator (libdeflate_alloc_compressor_ex()) came with libdeflate 1.19. It is
 * allocated once per session, at start, never on the way of an event.
 */
#include "writer/sink.h"

#include <errno.h>

#include <libdeflate.h>

#include "common/mem.h"

#define LEVEL 1

size_t rtr__sink_gzip_bound(size_t text_bytes)
{
	/* NULL: the bound for any compressor. Two members: the split costs at most one
	 * more member's overhead. */
	return libdeflate_gzip_compress_bound(NULL, text_bytes) +
	       libdeflate_gzip_compress_bound(NULL, 0);
}

int rtr__sink_gzip_open(struct rtr__sink *s)
{
	struct rtr__chunk *t = &s->chunks[s->nchunks];

	t->data = rtr__mem_map(s->chunk_bytes);
	if (t->data == NULL)
		return -ENOMEM;
	t->index = s->nchunks;
	s->gzip = libdeflate_alloc_compressor(LEVEL);
	if (s->gzip == NULL) {
		rtr__mem_unmap(t->data, s->chunk_bytes);
		t->data = NULL;
		return -ENOMEM;
	}
	s->text = t;
	return 0;
}

struct rtr__chunk *rtr__sink_gzip_deflate(struct rtr__sink *s, struct rtr__chunk *t)
{
	struct rtr__chunk *z = rtr__sink_take(s);
	size_t head, tail = 0;

	if (z == NULL) { /* cannot happen: the writer holds no pool chunk */
		rtr__sink_complete(s, t, -ENOBUFS);
		return NULL;
	}
	head = libdeflate_gzip_compress(s->gzip, t->data, t->keep, z->data, s->buf_bytes);
	if (head == 0) { /* cannot happen: buf_bytes is libdeflate's bound */
		z->busy = RTR__CHUNK_FREE;
		rtr__sink_complete(s, t, -EOVERFLOW);
		return NULL;
	}
	if (t->keep < t->len)
		tail = libdeflate_gzip_compress(s->gzip, t->data + t->keep, t->len - t->keep,
						z->data + head, s->buf_bytes - head);
	/* tail 0 (no room, cannot happen): this write goes without a provisional close */
	z->len = head + tail;
	z->keep = head;
	z->gzip = 1;
	z->keep_text = t->keep;
	z->events = t->events;
	t->busy = RTR__CHUNK_FREE;
	return z;
}

void rtr__sink_gzip_close(struct rtr__sink *s)
{
	if (s->text != NULL) {
		rtr__mem_unmap(s->text->data, s->chunk_bytes);
		s->text->data = NULL;
		s->text = NULL;
	}
	if (s->gzip != NULL)
		libdeflate_free_compressor(s->gzip);
	s->gzip = NULL;
}
