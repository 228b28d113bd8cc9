/* SPDX-License-Identifier: MIT */
/*
 * Sinks: how output chunks reach the file. Do not include outside src/writer/.
 *
 * The writer fills a chunk with whole lines, submits it, and takes the next free one.
 * Chunks are written back to back at explicit file offsets, and reach the file one
 * after the other in submission order, so a program killed at any moment leaves a
 * prefix of the trace with no hole. Two methods produce identical bytes:
 *
 *   io_uring  nchunks registered buffers; several writes in flight while the writer
 *             formats the next chunk, ordered by IOSQE_IO_DRAIN; short writes
 *             resubmitted for the remainder (sink_uring.c says why and what it costs).
 *   write(2)  pwrite(2) loop in the writer thread (io_uring unavailable: old kernel,
 *             seccomp, io_uring_disabled sysctl; or RINGTRACE_IO=sync).
 *   streams   a pipe, FIFO, tty or device: write(2) in order, whichever method was
 *             asked for, never cut, waiting in poll() so that a stop can give up.
 *
 * Compression (rtr__sink_open_gzip(), sink_gzip.c). The writer fills one text chunk
 * instead of pool chunks; submit compresses it, in the writer thread, into a pool
 * chunk and writes that: by default the next part of one deflate stream, then the
 * provisional tail as a final stored block and the gzip trailer; with members, one
 * gzip member for the kept lines and a second for the provisional tail. Either way
 * the compressed provisional tail is cut off like a plain one.
 *
 * Page cache (rtr__sink_cache_window()). Left alone, a trace's pages stay in the page
 * cache after they are written: a long run fills memory with them, and the kernel
 * takes fresh pages for each new part of the file (on a VM that returns free memory
 * to its host, a fresh page is a fault to the host: a write(2) loop took 2 s of CPU
 * per GB there, against 0.2 s in recycled pages). So for a regular file the sink starts
 * writeback of each 8 MiB step once the file has grown half a window past it, and
 * drops the step from the page cache once the file has grown a whole window past it;
 * the kernel then hands the freed pages to the next writes. A file under half a window
 * gets no hint at all. With io_uring both run in the kernel's workers on a small ring of
 * their own (a slow disk holds them up, never the writes); with write(2) the writer
 * makes the calls itself, without waiting for the disk.
 *
 * A write error (ENOSPC, EFBIG, EIO, ...) is kept as the sink's first error. From then
 * on nothing more is written: the events of the failed chunk and of every later one
 * are counted in events_failed, so the writer never blocks or crashes on a bad disk.
 *
 * One thread at a time calls these functions (the writer thread; open and close may
 * come from rtr_start()/rtr_stop() around it); the counters are stored with relaxed
 * atomics so that rtr_stats_get() may read them from any thread.
 */
#ifndef RTR_WRITER_SINK_H
#define RTR_WRITER_SINK_H

#include <stddef.h>
#include <stdint.h>

struct rtr__gzip;

/* Lines of a chunk that are not events, whose ends a chunk remembers. */
#define RTR_CHUNK_META_MAX 256

struct rtr__chunk {
	char *data; /* buf_bytes (the text chunk: chunk_bytes) of page-aligned memory */
	size_t len; /* bytes filled by the writer */
	/*
	 * Bytes that stay in the file, <= len (0 means all of len). The rest is a
	 * provisional tail: written, then cut off (ftruncate) once the writes before it
	 * are done and just before the next chunk is written in its place. So the file
	 * is, at every moment, either closed by that tail or cut after a whole line or
	 * inside the line being written: never a new line torn over an old tail.
	 */
	size_t keep;
	uint64_t events; /* events encoded in it: written or failed with it */
	/*
	 * Lines that are not events (markers, metadata, drop counters): how many, and
	 * where the first RTR_CHUNK_META_MAX of them end. When a write fails partway, the
	 * events in the whole lines that reached the file still count as written.
	 */
	uint32_t nmeta;
	uint32_t meta_end[RTR_CHUNK_META_MAX];
	/*
	 * The last chunk of the file (the writer is finishing): a compressed stream ends
	 * with it. Set by the writer before submit.
	 */
	int final;
	/* Flight mode (cut.c): the bytes at its start that only a window beginning with
	 * this chunk writes (what was open when it began), and their lines. */
	size_t prologue;
	uint64_t prologue_lines;
	/* Sink-private. */
	/*
	 * Compressed: data[0, keep) holds keep_text bytes of text (a gzip member, or the
	 * next part of the one deflate stream). A partial write counts no event landed:
	 * what a cut member or stream still gives a reader is not counted.
	 */
	int gzip;
	size_t keep_text;
	uint64_t offset; /* file offset of data[0] */
	size_t done;	 /* bytes already written */
	unsigned index;	 /* registered buffer index (= position in s->chunks) */
	int busy;	 /* RTR__CHUNK_*: free, held by the writer, or being written */
};

/* Values of rtr__chunk.busy. */
enum {
	RTR__CHUNK_FREE = 0,	/* in the pool: rtr__sink_acquire() may return it */
	RTR__CHUNK_HELD = 1,	/* returned by rtr__sink_acquire(), not yet submitted */
	RTR__CHUNK_WRITING = 2, /* submitted; the method owns it until the write completes */
};

/* Places kept after a failed write to close the file at (rtr__sink.close_off). */
#define RTR__SINK_CLOSE_POINTS 24

struct rtr__sink_ops;

struct rtr__sink {
	int fd;
	int method;			 /* RTR_IO_URING or RTR_IO_SYNC */
	const struct rtr__sink_ops *ops; /* the method's (NULL until open) */
	size_t chunk_bytes;		 /* capacity of a chunk the writer fills */
	size_t buf_bytes; /* capacity of a pool chunk: chunk_bytes, or a gzip bound of it */
	unsigned nchunks; /* pool chunks */
	struct rtr__chunk *chunks; /* nchunks, then the text chunk when compressing */
	struct rtr__chunk *text;   /* compressing: the one chunk the writer fills; else NULL */
	struct rtr__gzip *gzip;	   /* compressing: the compressor (sink_gzip.c); else NULL */
	uint64_t offset; /* file offset of the next submission; stops moving at the first error */
	uint64_t end;	 /* end of the file as written: offset + a provisional tail */
	uint64_t text_offset; /* uncompressed bytes before the next submission (= offset plain) */
	/* Page cache: bytes of the file's written end that stay cached (0: no hints), and
	 * how far writeback was started and the pages dropped, in RTR__SINK_CACHE_STEPs. */
	uint64_t cache_window;
	uint64_t cache_flushed;
	uint64_t cache_dropped;
	uint64_t written_end; /* the kept bytes of every completed write end here */
	uint64_t file_bytes;  /* bytes_written when this file began (rtr__sink_reopen()) */
	/*
	 * A stream: a pipe, FIFO, tty, socket or device, or a regular file we were handed
	 * at a position other than 0 or in O_APPEND. Written in order with write(2), never
	 * cut (no provisional tail, no ftruncate), no page cache hints; whichever method
	 * was asked for (sink_sync.c says why). nonblock: its fd is O_NONBLOCK (a FIFO or
	 * device we opened ourselves), so a full pipe is EAGAIN and we wait in poll().
	 */
	int stream;
	int nonblock;
	/*
	 * Set by the writer, read by the sink while it waits for the file: nonzero means
	 * give up (the stop timeout passed). The write in progress and every later one
	 * then fail with -ETIMEDOUT. NULL: wait as long as it takes.
	 */
	const uint32_t *cancel;
	/*
	 * After a failed write, where the file can still be closed: offsets just after a
	 * whole kept line that landed, newest first, and the events in the lines that
	 * landed after each (they go if the file is cut there). From the failure that
	 * left the file shortest. Plain regular files only (see rtr__sink_write_close()).
	 */
	unsigned nclose;
	uint64_t close_off[RTR__SINK_CLOSE_POINTS];
	uint64_t close_lost[RTR__SINK_CLOSE_POINTS];

	/*
	 * Results. Only the writer thread stores them, with rtr_atomic_store_relaxed();
	 * any thread may read them with rtr_atomic_load_relaxed(). They stay readable
	 * after rtr__sink_close().
	 */
	uint64_t bytes_written;	 /* bytes the file accepted, partial chunks included */
	uint64_t bytes_text;	 /* text those bytes hold: = bytes_written, or whole members' */
	uint64_t events_written; /* events of chunks written in full */
	uint64_t events_failed;	 /* events of chunks not written in full */
	int error;		 /* first write error as -errno, or 0 */

	void *impl; /* method-private state (io_uring: the ring) */
};

/*
 * Prepare to write to fd (opened by the caller, positioned at 0). io is RTR_IO_AUTO
 * (io_uring, else write(2)), RTR_IO_URING (io_uring or fail) or RTR_IO_SYNC. Takes
 * chunk_bytes (a multiple of the page size) x nchunks from rtr__mem_map().
 * Returns 0, or -errno (-ENOMEM; io_uring's setup error for RTR_IO_URING).
 */
int rtr__sink_open(struct rtr__sink *s, int fd, int io, size_t chunk_bytes, unsigned nchunks);

/*
 * rtr__sink_open(), writing gzip: acquire hands out one text chunk of chunk_bytes,
 * and submit compresses it (level 1) into pool chunks of buf_bytes, a little more
 * than chunk_bytes (incompressible text grows). members 0: one gzip member for the
 * whole file (zlib); 1: two members per chunk (libdeflate). Returns 0, or -errno as
 * rtr__sink_open() (-ENOMEM also when the compressor cannot be allocated).
 */
int rtr__sink_open_gzip(struct rtr__sink *s, int fd, int io, size_t chunk_bytes, unsigned nchunks,
			int members);

/* Page cache hints for a regular file (see the top): keep about `window` bytes behind
 * the written end cached, rounded up to RTR__SINK_CACHE_STEP; 0 (the default) gives none. */
#define RTR__SINK_CACHE_STEP ((uint64_t)8 << 20)
void rtr__sink_cache_window(struct rtr__sink *s, uint64_t window);

/* An empty chunk (len 0, events 0), waiting for a write to complete when every chunk
 * is in flight (io_uring). Never NULL while the caller holds fewer than nchunks chunks;
 * NULL when it holds them all (a bug: nothing could ever free one). Compressing, the
 * text chunk: NULL while the caller holds it. */
struct rtr__chunk *rtr__sink_acquire(struct rtr__sink *s);

/* Write c->len bytes after everything submitted before; c returns to the free pool
 * when done. A chunk with len 0 is simply released. */
void rtr__sink_submit(struct rtr__sink *s, struct rtr__chunk *c);

/* Wait until every submitted chunk is written (or failed). Returns the first error
 * (-errno) or 0. */
int rtr__sink_wait(struct rtr__sink *s);

/* Wait, then release everything the sink holds. Does not close fd. A chunk still
 * held (acquired, not submitted) is dropped uncounted. The results stay readable. */
void rtr__sink_close(struct rtr__sink *s);

/* The parts of open that take time and that a sink can do without: io_uring's buffer
 * registration and its page cache hint ring. Call once, after open, when the file's
 * head is written; waits for what is in flight first. */
void rtr__sink_setup(struct rtr__sink *s);

/* In a child after fork(): let go of everything the sink holds (memory, the io_uring
 * fds) without waiting for anything or writing a byte: the parent's writes are the
 * parent's. Does not close fd. */
void rtr__sink_forget(struct rtr__sink *s);

/* Latch err as the sink's error, with no chunk (a writeback error reported by a page
 * cache hint). The first error stays. */
void rtr__sink_fail(struct rtr__sink *s, int err);

/*
 * Close a file that a write error cut short (ENOSPC, EFBIG): cut it at close_off[i]
 * and write text there (the end marker and "]"), with pwrite(2) whatever the method,
 * after everything in flight. Returns 0, and counts the close_lost[i] events as
 * failed and the bytes as the file's; or -errno, the file then cut somewhere after
 * close_off[i] (try i + 1). Nothing in flight may remain.
 */
int rtr__sink_write_close(struct rtr__sink *s, unsigned i, const char *text, size_t len);

/*
 * Rotation: go on in another file, fd (opened by the caller, positioned at 0), after
 * everything submitted so far is written (the caller then closes the old one). The
 * file's offsets and page cache hints start again; a compressed sink starts a new
 * gzip stream; the results and a latched error go on. 0, or -errno (the old file's
 * last error: fd is not taken).
 */
int rtr__sink_reopen(struct rtr__sink *s, int fd);
/* Start a new gzip stream in the next chunk (sink_gzip.c). */
void rtr__sink_gzip_restart(struct rtr__sink *s);

/* Whether the sink should stop waiting for the file (s->cancel). */
int rtr__sink_cancelled(const struct rtr__sink *s);

/*
 * Between sink.c and its methods (sink_uring.c, sink_sync.c); nothing else calls these.
 *
 * sink.c owns the pool and the bookkeeping: it hands out chunks, gives each submitted
 * chunk its offset, and marks it RTR__CHUNK_WRITING before passing it to the method,
 * through the method's table. A method reports every byte the file accepts with
 * rtr__sink_wrote() and finishes every chunk it was given exactly once with
 * rtr__sink_complete() (pool.c).
 */

/* A method: how chunks reach the file. */
struct rtr__sink_ops {
	/* Start writing c (c->done bytes already written); io_uring returns without
	 * waiting, write(2) writes it in full (or fails) first. */
	void (*write)(struct rtr__sink *s, struct rtr__chunk *c);
	/* Handle the completions that are ready; with wait, block until at least one
	 * arrives (returns at once when nothing is in flight). */
	void (*reap)(struct rtr__sink *s, int wait);
	/* Whether any chunk is still being written. */
	int (*busy)(const struct rtr__sink *s);
	/* Start writeback of [off, off + len) (drop 0), or drop those pages from the page
	 * cache (drop 1). Returns whether it was queued: 0 when too many hints are still
	 * in flight (the caller tries later). */
	int (*hint)(struct rtr__sink *s, uint64_t off, uint64_t len, int drop);
	/* Wait for every hint in flight. */
	void (*hints_wait)(struct rtr__sink *s);
	/* The slow part of the setup (rtr__sink_setup()); tear down (nothing in flight);
	 * drop without waiting (rtr__sink_forget()). */
	void (*setup)(struct rtr__sink *s);
	void (*close)(struct rtr__sink *s);
	void (*forget)(struct rtr__sink *s);
};

/* sink_uring.c: io_uring; open sets up a ring for s->chunks (s->impl) and returns 0,
 * or io_uring's setup error. sink_sync.c: write(2), always there. */
extern const struct rtr__sink_ops rtr__sink_uring_ops;
extern const struct rtr__sink_ops rtr__sink_sync_ops;
int rtr__sink_uring_open(struct rtr__sink *s);

/* pool.c */

/* Count n bytes the file accepted. */
void rtr__sink_wrote(struct rtr__sink *s, const struct rtr__chunk *c, size_t n);
/* Finish c: err 0 counts its events written; else failed, and err (-errno) becomes the
 * sink's error unless one is latched already. c returns to the pool. */
void rtr__sink_complete(struct rtr__sink *s, struct rtr__chunk *c, int err);
/* A hint's result: a writeback error (EIO, ENOSPC, EDQUOT) is a write error like any
 * other and latches; a hint the file system refuses (EINVAL, ESPIPE, ...) is nothing. */
void rtr__sink_hint_result(struct rtr__sink *s, int res);
/* Add n to a counter only the writer thread stores. */
void rtr__sink_count(uint64_t *ctr, uint64_t n);
/* Hand c out empty, HELD. */
struct rtr__chunk *rtr__sink_hold(struct rtr__chunk *c);
/* The page cache hints the file's written end calls for (sink.h); 0 when the method
 * had too many in flight to take the rest (the next completion tries again). */
int rtr__sink_cache_trim(struct rtr__sink *s);

/* Most bytes text_bytes of text take compressed, in either layout, however it is
 * split into kept text and a provisional tail. */
size_t rtr__sink_gzip_bound(size_t text_bytes);
/* Set up s->gzip and the text chunk (s->chunks[nchunks]); 0 or -ENOMEM. */
int rtr__sink_gzip_open(struct rtr__sink *s, int members);
/* Compress text chunk t (keep set) into a pool chunk, which is returned HELD, and
 * free t; NULL when t failed instead (counted, t freed). */
struct rtr__chunk *rtr__sink_gzip_deflate(struct rtr__sink *s, struct rtr__chunk *t);
/* Free what rtr__sink_gzip_open() set up; nothing when it set up nothing. */
void rtr__sink_gzip_close(struct rtr__sink *s);
/* A free pool chunk, HELD and emptied, waiting for io_uring as acquire does; NULL when
 * none can come free. */
struct rtr__chunk *rtr__sink_take(struct rtr__sink *s);

#endif
