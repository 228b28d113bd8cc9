/* SPDX-License-Identifier: MIT */
/*
 * Flight mode: the window and its snapshots.
 *
 * Nothing goes to disk: full chunks go to the window, the newest flight_mb MiB of
 * them; the oldest are reused. Each chunk starts with a prologue, the lines that
 * begin again what is open at that moment (cut.c), and names its threads afresh (a
 * new file_id per chunk), so that a window starting at any chunk is complete. A
 * snapshot opens a file and a sink for it, and writes the head, the first chunk's
 * prologue, the chunks' lines, the current chunk's, the cut's lines ending what is
 * open now ("open":true) and the end marker; under a new name, renamed when complete,
 * so a snapshot file is never seen half written. It runs in the writer thread, which
 * meanwhile does not drain: about 0.1 s for a 64 MiB window.
 */
#include "writer/flight.h"

#include "common/atomic.h"
#include "common/mem.h"
#include "sink/trace_file.h"
#include "writer/account.h"
#include "writer/cut.h"
#include "writer/framing.h"
#include "writer/out.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* At most this much of a flight chunk goes to its prologue (what does not fit is
 * counted in cut_lost); a flight chunk has this much more room, so its lines have
 * the room of any chunk. */
#define PROLOGUE_MAX (RTR__CHUNK_BYTES / 4)
#define FLIGHT_CHUNK (RTR__CHUNK_BYTES + PROLOGUE_MAX)

struct rtr__flight {
	size_t window;		   /* bytes of lines kept: flight_mb MiB */
	size_t max_chunks;	   /* chunks ever made: the window's, and one being filled */
	size_t populate;	   /* bytes of a chunk its lines usually fill */
	size_t nmade;		   /* chunks made so far */
	struct rtr__chunk **kept;  /* max_chunks slots: the window, oldest at `first` */
	size_t first, nkept;	   /* ring of kept chunks */
	size_t kept_bytes;	   /* their lengths */
	struct rtr__chunk **spare; /* chunks to reuse */
	size_t nspare;
};

/* A chunk of the window, empty; NULL without memory. */
static struct rtr__chunk *flight_chunk(struct rtr__flight *f, uint64_t *evicted)
{
	struct rtr__chunk *c;

	if (f->nspare > 0) {
		c = f->spare[--f->nspare];
	} else if (f->nmade < f->max_chunks) {
		c = rtr__mem_map(sizeof(*c));
		if (c == NULL)
			return NULL;
		c->data = rtr__mem_map(FLIGHT_CHUNK);
		if (c->data == NULL) {
			rtr__mem_unmap(c, sizeof(*c));
			return NULL;
		}
#ifdef MADV_POPULATE_WRITE
		/* The part the lines fill, in one call: page by page, a first pass over the
		 * window cost a fault per 4 KiB (a quarter of the rate on a VM). Where the
		 * kernel refuses (before 5.14), the faults happen as before. */
		(void)madvise(c->data, f->populate, MADV_POPULATE_WRITE);
#endif
		f->nmade++;
	} else if (f->nkept > 0) {
		c = f->kept[f->first]; /* the oldest goes, whatever the bytes */
		f->first = (f->first + 1) % f->max_chunks;
		f->nkept--;
		f->kept_bytes -= c->len;
		*evicted += c->events;
	} else {
		return NULL;
	}
	c->len = c->keep = 0;
	c->events = 0;
	c->nmeta = 0;
	c->final = 0;
	c->prologue = 0;
	c->prologue_lines = 0;
	return c;
}

/* Open the next chunk: names afresh, then the prologue. */
static void flight_begin_chunk(struct rtr__writer *w)
{
	struct rtr__out *o = &w->out;

	rtr__out_new_file(w);
	o->cutting = 1;
	o->chunk_limit = FLIGHT_CHUNK;
	o->chunk->prologue_lines = rtr__cut_lines(w, RTR__CUT_BEGIN, PROLOGUE_MAX);
	o->chunk->prologue = o->chunk->len;
	o->cutting = 0;
	rtr__out_set_limit(w);
}

void rtr__flight_keep(struct rtr__writer *w)
{
	struct rtr__out *o = &w->out;
	struct rtr__flight *f = o->flight;
	struct rtr__chunk *c = o->chunk, *next;

	if (c->len <= c->prologue && c->events == 0) {
		return; /* nothing but its prologue: it stays the one being filled */
	}
	rtr__out_seal(w);
	/* In the window, then the oldest out until it holds flight_mb MiB at most. */
	f->kept[(f->first + f->nkept) % f->max_chunks] = c;
	f->nkept++;
	f->kept_bytes += c->len;
	while (f->nkept > 1 && f->kept_bytes > f->window) {
		struct rtr__chunk *old = f->kept[f->first];
		f->first = (f->first + 1) % f->max_chunks;
		f->nkept--;
		f->kept_bytes -= old->len;
		o->flight_evicted += old->events;
		f->spare[f->nspare++] = old;
	}
	next = flight_chunk(f, &o->flight_evicted);
	if (next == NULL) { /* no memory for a second chunk: reuse this one */
		f->nkept--;
		f->kept_bytes -= c->len;
		o->flight_evicted += c->events;
		c->len = c->events = 0;
		c->nmeta = 0;
		next = c;
	}
	o->chunk = next;
	flight_begin_chunk(w);
}

/* Copy len bytes of lines into the snapshot's chunks. */
static void put_raw(struct rtr__writer *w, const char *data, size_t len)
{
	struct rtr__out *o = &w->out;

	while (len > 0) {
		size_t room = RTR__CHUNK_BYTES - PAGE_BYTES - TAIL_ROOM - o->chunk->len;
		if (room == 0) {
			rtr__out_submit(w);
			continue;
		}
		size_t n = len < room ? len : room;
		memcpy(o->chunk->data + o->chunk->len, data, n);
		o->chunk->len += n;
		data += n;
		len -= n;
	}
}

/* Open the snapshot's file (want, or the pattern's number no) and a sink for it:
 * its path and the name it is written under (tmp, "" when in place). 0 or -errno,
 * said on stderr. */
static int open_snapshot(struct rtr__writer *w, const char *want, uint64_t no, char path[PATH_MAX],
			 char tmp[PATH_MAX], int *fd)
{
	struct rtr__out *o = &w->out;
	int truncate, err;

	tmp[0] = '\0';
	if (want != NULL && want[0] != '\0')
		err = (size_t)snprintf(path, PATH_MAX, "%s", want) >= PATH_MAX ? -ENAMETOOLONG : 0;
	else
		err = rtr__out_path(w, no, path, PATH_MAX);
	if (err == 0)
		err = rtr__trace_open(path, w->s.pid, 0, fd, tmp, PATH_MAX, &truncate);
	if (err == 0 && truncate && ftruncate(*fd, 0) != 0) {
		err = -errno;
		close(*fd);
	}
	if (err != 0) {
		fprintf(stderr, "ringtrace: cannot write the snapshot %s: %s\n", path,
			strerror(-err));
		return err;
	}
	size_t len = strlen(path);
	int gzip = w->s.cfg.compress == RTR_COMPRESS_GZIP_MEMBERS ||
		   (w->s.cfg.compress != RTR_COMPRESS_NONE && len >= 3 &&
		    strcmp(path + len - 3, ".gz") == 0);
	err = gzip ? rtr__sink_open_gzip(&o->sink, *fd, w->s.cfg.io, RTR__CHUNK_BYTES, RTR__NCHUNKS,
					 w->s.cfg.compress == RTR_COMPRESS_GZIP_MEMBERS)
		   : rtr__sink_open(&o->sink, *fd, w->s.cfg.io, RTR__CHUNK_BYTES, RTR__NCHUNKS);
	if (err != 0) {
		close(*fd);
		if (tmp[0] != '\0')
			unlink(tmp);
		fprintf(stderr, "ringtrace: cannot write the snapshot %s: %s\n", path,
			strerror(-err));
	}
	return err;
}

int rtr__flight_snapshot(struct rtr__writer *w, const char *want)
{
	struct rtr__out *o = &w->out;
	struct rtr__flight *f = o->flight;
	char path[PATH_MAX], tmp[PATH_MAX];
	uint64_t no = o->file_no;
	int fd, err;

	if (f == NULL)
		return -ENOTSUP;
	err = open_snapshot(w, want, no, path, tmp, &fd);
	if (err != 0)
		return err;

	/* From here the lines go to the snapshot's sink; the chunk being filled waits. */
	struct rtr__chunk *filling = o->chunk;
	uint64_t saved_id = o->file_id;
	o->snapshotting = 1;
	o->cutting = 1;
	o->finishing = 0;
	o->chunk = rtr__sink_acquire(&o->sink);
	o->chunk_limit = RTR__CHUNK_BYTES;
	o->continued = 0;
	o->snapshot_events = 0;
	rtr__out_new_file(w);
	rtr__out_begin_file(w);
	/* The window is flight_mb MiB with the chunk being filled: the oldest kept ones
	 * past that are left out (whole: each begins what was open at its start). */
	size_t skip = 0, bytes = f->kept_bytes + filling->len;
	uint64_t left_out = 0;
	while (skip < f->nkept && bytes > f->window) {
		const struct rtr__chunk *c = f->kept[(f->first + skip) % f->max_chunks];
		bytes -= c->len;
		left_out += c->events;
		skip++;
	}
	o->snapshot_evicted = o->flight_evicted + left_out;
	for (size_t i = skip; i <= f->nkept; i++) {
		const struct rtr__chunk *c =
			i < f->nkept ? f->kept[(f->first + i) % f->max_chunks] : filling;
		size_t from = i == skip ? 0 : c->prologue; /* the first begins what was open */
		if (i == skip)
			o->continued = c->prologue_lines; /* for the end marker */
		put_raw(w, c->data + from, c->len - from);
		o->snapshot_events += c->events;
	}
	o->closed = rtr__cut_lines(w, RTR__CUT_OPEN, SIZE_MAX);
	rtr__writer_account(w, 0);
	o->finishing = 1;
	out_reserve(w, 0);
	rtr__out_end_file(w, 1);
	o->chunk->final = 1;
	rtr__out_submit(w);
	err = rtr__sink_wait(&o->sink);
	o->snapshot_bytes += rtr_atomic_load_relaxed(&o->sink.bytes_written);
	rtr__sink_close(&o->sink);
	if (close(fd) != 0 && err == 0)
		err = -errno;
	if (err == 0 && tmp[0] != '\0' && rename(tmp, path) != 0)
		err = -errno;
	if (err != 0) {
		if (tmp[0] != '\0')
			unlink(tmp);
		fprintf(stderr, "ringtrace: writing the snapshot %s failed: %s\n", path,
			strerror(-err));
	}

	/* Back to the window (the closed sink keeps its results, no memory). */
	o->chunk = filling;
	o->file_id = saved_id;
	o->snapshotting = 0;
	o->cutting = 0;
	o->finishing = 0;
	o->file_no = no + 1;
	o->files++;
	rtr__out_set_limit(w);
	return err;
}

int rtr__flight_start(struct rtr__writer *w)
{
	struct rtr__out *o = &w->out;
	const struct rtr_config *cfg = &w->s.cfg;

	struct rtr__flight *f = rtr__mem_map(sizeof(*f));
	size_t max;
	if (f == NULL)
		return -ENOMEM;
	f->window = (size_t)cfg->flight_mb << 20;
	/* Chunks of a sixteenth of the window (64 KiB .. 1 MiB of lines): a snapshot
	 * leaves out whole chunks to stay within the window, so it holds at least
	 * fifteen sixteenths of it. */
	o->chunk_target = f->window / 16;
	if (o->chunk_target < ((size_t)64 << 10))
		o->chunk_target = (size_t)64 << 10;
	if (o->chunk_target > RTR__CHUNK_BYTES - PAGE_BYTES - TAIL_ROOM)
		o->chunk_target = RTR__CHUNK_BYTES - PAGE_BYTES - TAIL_ROOM;
	o->chunk_room = FLIGHT_CHUNK;
	f->populate = (o->chunk_target + ((size_t)16 << 10) + 4095) & ~(size_t)4095;
	max = f->window / o->chunk_target + 2; /* the window's, one filled, one spare */
	f->max_chunks = max;
	f->kept = rtr__mem_map(2 * max * sizeof(*f->kept));
	if (f->kept == NULL) {
		rtr__mem_unmap(f, sizeof(*f));
		return -ENOMEM;
	}
	f->spare = f->kept + max;
	o->flight = f;
	o->chunk = flight_chunk(f, &o->flight_evicted);
	if (o->chunk == NULL) {
		rtr__flight_fini(w, RTR__FINI_ALL);
		return -ENOMEM;
	}
	o->provisional = 0;
	flight_begin_chunk(w);
	return 0;
}

void rtr__flight_fini(struct rtr__writer *w, int how)
{
	struct rtr__flight *f = w->out.flight;

	w->out.flight = NULL;
	if (f == NULL || how == RTR__FINI_FORGET)
		return;
	for (size_t i = 0; i < f->nkept; i++) {
		struct rtr__chunk *c = f->kept[(f->first + i) % f->max_chunks];
		if (c != w->out.chunk)
			f->spare[f->nspare++] = c;
	}
	if (w->out.chunk != NULL && w->out.snapshotting == 0)
		f->spare[f->nspare++] = w->out.chunk;
	for (size_t i = 0; i < f->nspare; i++) {
		rtr__mem_unmap(f->spare[i]->data, FLIGHT_CHUNK);
		rtr__mem_unmap(f->spare[i], sizeof(*f->spare[i]));
	}
	rtr__mem_unmap(f->kept, 2 * f->max_chunks * sizeof(*f->kept));
	rtr__mem_unmap(f, sizeof(*f));
	w->out.chunk = NULL;
}
