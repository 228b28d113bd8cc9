/* SPDX-License-Identifier: MIT */
/*
 * Compressed output (.json.gz): each submitted text chunk is compressed, in the writer
 * thread, into a pool chunk. Two layouts (RTR_COMPRESS_GZIP, RTR_COMPRESS_GZIP_MEMBERS).
 *
 * One member (the default). The whole file is one gzip member: a header written once,
 * then one raw deflate stream (zlib, level 1) that continues from chunk to chunk, then
 * the trailer. Why one member: speedscope (pako 1.x) and chrome://tracing (Catapult)
 * inflate only the first member of a gzip file, so a file of many members shows them
 * an empty trace; a single member is what every viewer reads.
 *
 * Each chunk's kept lines, text[0, keep), are deflated with Z_SYNC_FLUSH: the output
 * ends on a byte boundary with no block marked final, so the next chunk's output
 * simply follows it in the file. The provisional close, text[keep, len) (the end
 * marker and "]": framing.c, format/json/file.c), is never fed to the compressor,
 * whose history must not hold text that is cut off again: it goes after the kept
 * part as a final stored block written by hand (BFINAL 1, BTYPE 00, LEN, NLEN, the
 * bytes), then the trailer: CRC-32 and length of the kept text so far plus this
 * tail. So between two writes the file is a complete member of strict JSON. The pool
 * chunk keeps the deflate output only; the sink cuts the stored block and trailer
 * off (ftruncate) before the next chunk goes in their place, exactly as it cuts a
 * plain tail. The last chunk (writer finishing, chunk->final) ends the stream with
 * Z_FINISH and the real trailer.
 *
 * A kill during a write leaves a stream cut in the middle: zlib-based readers (gzip -dc
 * with its "unexpected end of file", the tools' reader) get the text up to the cut,
 * which may end inside a line; the repair rule (docs/format.md, "A killed run") drops
 * that line. The accounting stays conservative: a chunk whose compressed bytes did
 * not all land counts none of its events as written (rtr__sink_complete()).
 *
 * Members (RINGTRACE_COMPRESS=gzip-members). The kept lines of a chunk become one
 * member of their own and the provisional close a second one, both by libdeflate at
 * level 1 (about 600 MB/s on JSON on the development machine, faster than zlib's
 * streaming level 1); the second is cut off like the stored tail above. gzip(1), zlib
 * and Perfetto read concatenated members as one stream; speedscope and Catapult read
 * only the first, which holds just the file's head. A member is complete on its own,
 * so a cut file reads up to its last whole member, which ends after a whole line.
 *
 * Memory. The text chunk, the pool and the state below come from rtr__mem_map() like
 * every other buffer, and so does zlib's deflate state (about 260 KiB at level 1,
 * through z_alloc()). libdeflate's compressor (about 200 KiB, members only) is the one
 * object from malloc(): libdeflate 1.14 (Debian 12) takes its allocator only through
 * libdeflate_set_memory_allocator(), which is process-wide and may only be called
 * while no compressor exists anywhere in the process, so a library cannot call it
 * without breaking a host program that uses libdeflate itself (the per-compressor
 * libdeflate_alloc_compressor_ex() came with 1.19). Both are allocated once per
 * session, at start, never on the way of an event.
 */
#include "sink/sink.h"

#include <errno.h>
#include <string.h>

#include <libdeflate.h>
#include <zlib.h>

#include "common/mem.h"

#define LEVEL 1

/* Stored-block LEN is 16 bits: a provisional close must be shorter (it is ~400 B). */
#define STORED_MAX 65535u
/* Header (10) and trailer (8) of a gzip member, and the stored block's own 5 bytes. */
#define GZ_HEAD	    10u
#define GZ_TRAILER  8u
#define STORED_HEAD 5u

struct rtr__gzip {
	struct libdeflate_compressor *members; /* gzip-members; NULL in one-member mode */
	z_stream zs;			       /* one member: the continuing raw deflate */
	int zs_ready;			       /* deflateInit2() succeeded: deflateEnd() due */
	int started;			       /* the gzip header is in a chunk already */
	int finished;			       /* Z_FINISH done: nothing may follow */
	uint32_t crc;			       /* CRC-32 of all text deflated so far */
	uint32_t isize;			       /* its length, mod 2^32 (gzip's ISIZE) */
};

/*
 * zlib's allocator. By default zlib takes its deflate state (window, hash chains,
 * pending buffer) from the host program's malloc(); these callbacks give it the
 * library's own mappings instead, so the recorder never touches the host's heap.
 * zfree passes no size and munmap() needs one, so each block starts with a header
 * that remembers it (16 bytes, keeping the block 16-byte aligned). zlib allocates a
 * handful of blocks once per session, so a mapping each costs nothing.
 */
#define Z_HEADER 16u

static voidpf z_alloc(voidpf opaque, uInt items, uInt size)
{
	size_t bytes;
	unsigned char *p;

	(void)opaque;
	if (__builtin_mul_overflow((size_t)items, (size_t)size, &bytes) ||
	    __builtin_add_overflow(bytes, (size_t)Z_HEADER, &bytes))
		return Z_NULL;
	p = rtr__mem_map(bytes);
	if (p == NULL)
		return Z_NULL;
	memcpy(p, &bytes, sizeof(bytes));
	return p + Z_HEADER;
}

static void z_free(voidpf opaque, voidpf address)
{
	unsigned char *p;
	size_t bytes;

	(void)opaque;
	if (address == Z_NULL)
		return;
	p = (unsigned char *)address - Z_HEADER;
	memcpy(&bytes, p, sizeof(bytes));
	rtr__mem_unmap(p, bytes);
}

size_t rtr__sink_gzip_bound(size_t text_bytes)
{
	/* Members: NULL is the bound for any compressor; the split costs at most one more
	 * member's overhead. */
	size_t members = libdeflate_gzip_compress_bound(NULL, text_bytes) +
			 libdeflate_gzip_compress_bound(NULL, 0);
	/* One member: deflate falls back to stored blocks (5 bytes per at most 64 KiB) when
	 * that is smaller, so an eighth more is plenty, with the sync flush's empty stored
	 * block, the header, the stored tail's head and the trailer. */
	size_t one = text_bytes + text_bytes / 8 + GZ_HEAD + 2 * STORED_HEAD + GZ_TRAILER + 64;

	return members > one ? members : one;
}

int rtr__sink_gzip_open(struct rtr__sink *s, int members)
{
	struct rtr__chunk *t = &s->chunks[s->nchunks];
	struct rtr__gzip *g;

	t->data = rtr__mem_map(s->chunk_bytes);
	g = rtr__mem_map(sizeof(*g));
	if (t->data == NULL || g == NULL)
		goto fail;
	t->index = s->nchunks;
	s->text = t;
	s->gzip = g;
	if (members) {
		g->members = libdeflate_alloc_compressor(LEVEL);
		if (g->members == NULL)
			goto fail;
		return 0;
	}
	g->zs.zalloc = z_alloc;
	g->zs.zfree = z_free;
	g->zs.opaque = Z_NULL;
	/* -15: raw deflate, 32 KiB window; the gzip framing is ours (header, trailer,
	 * stored tail). memLevel 8 is zlib's default. */
	if (deflateInit2(&g->zs, LEVEL, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		goto fail;
	g->zs_ready = 1;
	g->crc = (uint32_t)crc32(0L, Z_NULL, 0);
	return 0;
fail:
	rtr__mem_unmap(t->data, s->chunk_bytes);
	t->data = NULL;
	rtr__mem_unmap(g, sizeof(*g));
	s->text = NULL;
	s->gzip = NULL;
	return -ENOMEM;
}

static unsigned char *put_le32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
	return p + 4;
}

/* Deflate n bytes of text to out (room bytes) with flush; the bytes written, or 0 when
 * zlib fails or the output does not fit (cannot happen: room is the bound). */
static size_t deflate_text(struct rtr__gzip *g, const char *text, size_t n, unsigned char *out,
			   size_t room, int flush)
{
	int ret;

	g->zs.next_in = (Bytef *)(uintptr_t)text;
	g->zs.avail_in = (uInt)n;
	g->zs.next_out = out;
	g->zs.avail_out = (uInt)room;
	ret = deflate(&g->zs, flush);
	/* With room to spare the flush is complete: all input taken, output not full. */
	if (flush == Z_FINISH ? ret != Z_STREAM_END
			      : ret != Z_OK || g->zs.avail_in != 0 || g->zs.avail_out == 0)
		return 0;
	g->crc = (uint32_t)crc32(g->crc, (const Bytef *)text, (uInt)n);
	g->isize += (uint32_t)n;
	return room - g->zs.avail_out;
}

/* One member: t's text into z. Returns 0 or -errno. */
static int one_member(struct rtr__sink *s, struct rtr__chunk *t, struct rtr__chunk *z)
{
	static const unsigned char head[GZ_HEAD] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 3};
	struct rtr__gzip *g = s->gzip;
	unsigned char *p = (unsigned char *)z->data, *end = p + s->buf_bytes;
	size_t tail = t->len - t->keep, n;

	if (g->finished)
		return -EINVAL; /* a chunk after the last: a bug in the caller */
	if (!g->started) {
		/* mtime 0 (none), XFL 4 (fastest), OS 3 (Unix), as zlib writes it */
		memcpy(p, head, sizeof(head));
		p += sizeof(head);
		g->started = 1;
	}
	if (t->final) {
		/* The last chunk: all of it, then the stream's end and the real trailer. */
		n = deflate_text(g, t->data, t->len, p, (size_t)(end - p) - GZ_TRAILER, Z_FINISH);
		if (n == 0)
			return -EOVERFLOW;
		g->finished = 1;
		p = put_le32(p + n, g->crc);
		p = put_le32(p, g->isize);
		z->len = z->keep = (size_t)(p - (unsigned char *)z->data);
		z->keep_text = t->len;
		return 0;
	}
	/* An empty input with Z_SYNC_FLUSH after a flush is Z_BUF_ERROR: nothing to do. */
	if (t->keep > 0) {
		n = deflate_text(g, t->data, t->keep, p, (size_t)(end - p), Z_SYNC_FLUSH);
		if (n == 0)
			return -EOVERFLOW;
		p += n;
	}
	z->keep = (size_t)(p - (unsigned char *)z->data);
	z->keep_text = t->keep;
	/* The provisional close: a final stored block outside the compressor's history,
	 * and a trailer over the text with it. Without room (cannot happen) this write
	 * goes without a provisional close. */
	if (tail > 0 && tail <= STORED_MAX &&
	    (size_t)(end - p) >= STORED_HEAD + tail + GZ_TRAILER) {
		uint16_t len = (uint16_t)tail, nlen = (uint16_t)~len;
		p[0] = 1; /* BFINAL 1, BTYPE 00 (stored); the rest of the byte is padding */
		p[1] = (unsigned char)len;
		p[2] = (unsigned char)(len >> 8);
		p[3] = (unsigned char)nlen;
		p[4] = (unsigned char)(nlen >> 8);
		memcpy(p + STORED_HEAD, t->data + t->keep, tail);
		p += STORED_HEAD + tail;
		p = put_le32(p,
			     (uint32_t)crc32(g->crc, (const Bytef *)t->data + t->keep, (uInt)tail));
		p = put_le32(p, g->isize + (uint32_t)tail);
	}
	z->len = (size_t)(p - (unsigned char *)z->data);
	return 0;
}

/* Members: t's kept text into one member of z, its tail into a second. */
static int two_members(struct rtr__sink *s, struct rtr__chunk *t, struct rtr__chunk *z)
{
	struct libdeflate_compressor *c = s->gzip->members;
	size_t head, tail = 0;

	head = libdeflate_gzip_compress(c, t->data, t->keep, z->data, s->buf_bytes);
	if (head == 0) /* cannot happen: buf_bytes is libdeflate's bound */
		return -EOVERFLOW;
	if (t->keep < t->len)
		tail = libdeflate_gzip_compress(c, t->data + t->keep, t->len - t->keep,
						z->data + head, s->buf_bytes - head);
	/* tail 0 (no room, cannot happen): this write goes without a provisional close */
	z->len = head + tail;
	z->keep = head;
	z->keep_text = t->keep;
	return 0;
}

struct rtr__chunk *rtr__sink_gzip_deflate(struct rtr__sink *s, struct rtr__chunk *t)
{
	struct rtr__chunk *z = rtr__sink_take(s);
	int err;

	if (z == NULL) { /* cannot happen: the writer holds no pool chunk */
		rtr__sink_complete(s, t, -ENOBUFS);
		return NULL;
	}
	err = s->gzip->members != NULL ? two_members(s, t, z) : one_member(s, t, z);
	if (err != 0) {
		/* The stream may have taken part of the text: nothing may follow it. */
		z->busy = RTR__CHUNK_FREE;
		rtr__sink_complete(s, t, err);
		return NULL;
	}
	z->gzip = 1;
	z->events = t->events;
	t->busy = RTR__CHUNK_FREE;
	return z;
}

void rtr__sink_gzip_restart(struct rtr__sink *s)
{
	struct rtr__gzip *g = s->gzip;

	if (g->zs_ready)
		deflateReset(&g->zs);
	g->started = 0;
	g->finished = 0;
	g->crc = (uint32_t)crc32(0L, Z_NULL, 0);
	g->isize = 0;
}

void rtr__sink_gzip_close(struct rtr__sink *s)
{
	struct rtr__gzip *g = s->gzip;

	if (s->text != NULL) {
		rtr__mem_unmap(s->text->data, s->chunk_bytes);
		s->text->data = NULL;
		s->text = NULL;
	}
	if (g != NULL) {
		if (g->members != NULL)
			libdeflate_free_compressor(g->members);
		if (g->zs_ready)
			deflateEnd(&g->zs);
		rtr__mem_unmap(g, sizeof(*g));
	}
	s->gzip = NULL;
}
