/* SPDX-License-Identifier: MIT */
/*
 * ringtrace — record timeline events from a running program and stream them to a
 * Chrome Trace Event Format file (Perfetto UI, chrome://tracing, DevTools, speedscope).
 *
 * One recorder per process. Start it, record from any thread, stop it:
 *
 *	rtr_start(NULL);                       defaults plus RINGTRACE_* environment
 *	rtr_begin("app", "solve");             a slice on the calling thread
 *	...
 *	rtr_end("app", "solve");
 *	{ RTR_SCOPE("app", "step"); ... }      a complete event covering a block
 *	rtr_stop();                            drain, finish the file, join the writer
 *
 * Event calls append one fixed-size record to the calling thread's own ring and
 * return: they never lock, allocate, format text or make a system call (a thread's
 * first event registers its ring, which may). A background writer thread turns
 * records into JSON and writes them to the file while the program runs.
 *
 * Strings passed as `cat`, `name` and argument keys must outlive the recorder
 * (string literals): the record keeps only the pointer. Names built at run time go
 * through the `_copy` calls, which copy the bytes into the ring.
 *
 * Every event call made before rtr_start() or after rtr_stop() is a no-op costing a
 * load and a branch. Compiling with -DRINGTRACE_DISABLE turns every call into nothing.
 */
#ifndef RINGTRACE_H
#define RINGTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RTR_VERSION_MAJOR  0
#define RTR_VERSION_MINOR  1
#define RTR_VERSION_PATCH  0
#define RTR_VERSION_STRING "0.1.0"
/* One number that orders versions: major * 10000 + minor * 100 + patch. */
#define RTR_VERSION_NUMBER (RTR_VERSION_MAJOR * 10000 + RTR_VERSION_MINOR * 100 + RTR_VERSION_PATCH)

/*
 * Growing the ABI. struct rtr_config, struct rtr_stats and struct rtr_track_desc
 * carry `size` and `version`. New fields are only ever appended; the library reads
 * (or, for the stats, writes) only the bytes the caller's size covers, and a field
 * past it takes its default. A size of 0 (a struct built with `= {0}` or designated
 * initializers) means the first layout. rtr_config_init(), RTR_TRACK_DESC_INIT() and
 * the rtr_stats_get() macro set the size; a caller never has to.
 *
 * The inline fast path (ringtrace/emit.h: struct rtr__ring, the record and its
 * kinds) is tied to the library by RTR__ABI: the symbols it references carry the
 * number (rtr__tls_ring_v1, rtr__active_v1), so a program built against another
 * layout fails to link instead of corrupting its rings. Bump RTR__ABI whenever that
 * layout or meaning changes; appending to the structs above needs no bump.
 */
#define RTR__ABI 1

#if defined(RTR_BUILDING_LIBRARY)
#define RTR_API __attribute__((visibility("default")))
#else
#define RTR_API
#endif

#ifndef RINGTRACE_DISABLE
/* Real prototypes; with RINGTRACE_DISABLE, ringtrace/emit.h defines empty inlines. */
#define RTR__DECL RTR_API
#else
#define RTR__DECL static inline
#endif

/* ------------------------------------------------------------------------- */
/* Configuration                                                              */

/* What a producer does when its ring is full. */
enum {
	RTR_ON_FULL_DROP = 0,  /* drop the event and count it (default): never slows the program */
	RTR_ON_FULL_BLOCK = 1, /* wait until the writer frees space: nothing is lost */
};

/* How the writer writes the file. */
enum {
	RTR_IO_AUTO = 0,  /* io_uring when the kernel allows it, else write(2) */
	RTR_IO_URING = 1, /* io_uring; rtr_start() fails with its error if unavailable */
	RTR_IO_SYNC = 2,  /* write(2) from the writer thread */
};

/* Where timestamps come from. */
enum {
	RTR_CLOCK_AUTO = 0,	 /* the TSC when the kernel trusts it, else CLOCK_MONOTONIC */
	RTR_CLOCK_MONOTONIC = 1, /* clock_gettime(CLOCK_MONOTONIC) */
	RTR_CLOCK_TSC = 2,	 /* rdtsc, calibrated against CLOCK_MONOTONIC (x86-64 only) */
};

/* Whether the file is compressed. */
enum {
	RTR_COMPRESS_AUTO = 0, /* gzip when the expanded path ends in ".gz", else none */
	RTR_COMPRESS_NONE = 1, /* plain JSON, whatever the path */
	RTR_COMPRESS_GZIP = 2, /* gzip, one member that every viewer reads, whatever the path */
	/* gzip, two members per write (libdeflate): faster, but only Perfetto among the
	 * viewers reads past the first member, which holds just the file's head */
	RTR_COMPRESS_GZIP_MEMBERS = 3,
};

/* What the writer does with the lines (docs/long-runs.md). */
enum {
	RTR_MODE_STREAM = 0, /* to the file as they come (default) */
	/* into a window in memory of the newest cfg.flight_mb MiB, written only by a
	 * snapshot (rtr_snapshot(), cfg.snapshot_signal, and rtr_stop()) */
	RTR_MODE_FLIGHT = 1,
	/* no events in the file: per thread a call-path tree of the slices (count, total,
	 * self, min, max, a percentile sketch) and the counters, written whole at the
	 * stop, a snapshot, a segment's end and a fatal signal (docs/profile.md) */
	RTR_MODE_PROFILE = 2,
};

/* The file's format. */
enum {
	/* Perfetto's protobuf when the expanded path ends in ".pftrace" or
	 * ".perfetto-trace" (before a ".gz"), else JSON */
	RTR_FORMAT_AUTO = 0,
	RTR_FORMAT_JSON = 1,	 /* Chrome Trace Event JSON, one event per line */
	RTR_FORMAT_PERFETTO = 2, /* Perfetto's TrackEvent protobuf (docs/perfetto.md) */
};

#define RTR_CONFIG_VERSION 5

struct rtr_config {
	/* sizeof(struct rtr_config) and RTR_CONFIG_VERSION, set by rtr_config_init(); 0
	 * means the first layout. Fields past size take their defaults (and environment). */
	uint32_t size;
	uint32_t version;
	/* File path pattern: %p pid, %h host name, %r rank (from SLURM/PMI/Open MPI/MPICH),
	 * %s the segment or snapshot number (rotation, flight mode), %% a percent sign. Default
	 * "ringtrace-%p.json". RINGTRACE_FILE. */
	const char *path;
	/* Bytes of ring per producer thread, rounded up to a power of two, 4 KiB .. 1 GiB.
	 * Default 1 MiB. RINGTRACE_RING_KB (in KiB). A thread keeps the ring it got at its
	 * first event, so after a restart only threads new to the recorder use a new size. */
	size_t ring_bytes;
	/* RTR_ON_FULL_DROP (default) or RTR_ON_FULL_BLOCK. RINGTRACE_ON_FULL=drop|block. */
	int on_full;
	/* The writer writes what it has at least this often, so a killed run loses at most
	 * this much. Default 100 ms, 1 .. 60000. RINGTRACE_FLUSH_MS. */
	unsigned flush_ms;
	/* RTR_IO_AUTO (default), RTR_IO_URING or RTR_IO_SYNC. RINGTRACE_IO=auto|uring|sync. */
	int io;
	/* Process name shown in viewers; NULL means the program's name. RINGTRACE_PROCESS_NAME. */
	const char *process_name;
	/* RTR_CLOCK_AUTO (default), RTR_CLOCK_MONOTONIC or RTR_CLOCK_TSC.
	 * RINGTRACE_CLOCK=auto|monotonic|tsc. */
	int clock;
	/* RTR_COMPRESS_AUTO (default: gzip for a path ending in ".gz"), RTR_COMPRESS_NONE,
	 * RTR_COMPRESS_GZIP or RTR_COMPRESS_GZIP_MEMBERS.
	 * RINGTRACE_COMPRESS=auto|none|gzip|gzip-members. */
	int compress;
	/* Categories to record; NULL or "" (default) records all. "app,mpi" records only
	 * these, "-debug,-verbose" all but these; mixed, a category is recorded when no
	 * plain name is given or one names it, and no minus name does. An event category
	 * that is itself a list ("gpu,copy") is recorded when one of its parts is. Names
	 * are compared exactly, blanks around them ignored; at most 32 names of 64 bytes,
	 * no '*'; a bad list makes rtr_start() return -EINVAL (in RINGTRACE_CATEGORIES it
	 * is reported on stderr and left out). Thread names and the start and end markers
	 * are never filtered. Filtered events are not recorded at all (not counted as
	 * dropped). A session keeps the list it started with. RINGTRACE_CATEGORIES. */
	const char *categories;
	/* Page cache the trace file keeps, in MiB. The writer has what it wrote written back
	 * and dropped from the page cache once the file has grown this far past it, so a
	 * long run does not fill the machine's memory with its trace and keeps its pace
	 * as the file grows. Regular files only. Default 64, rounded up to 8 MiB steps; 0
	 * leaves the pages to the kernel; at most 1048576. RINGTRACE_CACHE_MB. */
	unsigned cache_mb;
	/* How long rtr_flush() and rtr_stop() wait for the file, in ms. A file that blocks
	 * for good (a FIFO nobody reads, a hung NFS mount) then costs the program this
	 * much at most: past it, stop gives up on what is left (counted in
	 * events_dropped_io) and returns -ETIMEDOUT, flush returns -ETIMEDOUT. Default
	 * 10000; 0 waits forever; at most 3600000. RINGTRACE_STOP_TIMEOUT_MS. */
	unsigned stop_timeout_ms;
	/* Fields of version 2. */
	/* Rotation: start a new segment file when the current one holds this many MiB of
	 * JSON (uncompressed), and/or every max_seconds; 0 (default) for neither. Each
	 * segment is a whole trace: slices open at a cut end there and begin again in the
	 * next segment ("continued": true). The path's %s is the segment number (0000,
	 * 0001, ...); without one, ".%s" goes before the first ".json". 1 .. 1048576;
	 * RINGTRACE_MAX_MB. 1 .. 31536000; RINGTRACE_MAX_SECONDS. */
	unsigned max_mb;
	unsigned max_seconds;
	/* With rotation, keep only the newest `keep` segments: the writer deletes older
	 * ones. 0 (default) keeps all. RINGTRACE_KEEP. */
	unsigned keep;
	/* RTR_MODE_STREAM (default), RTR_MODE_FLIGHT or RTR_MODE_PROFILE.
	 * RINGTRACE_MODE=stream|flight|profile. */
	int mode;
	/* The flight window in MiB, 1 .. 65536; default 64. RINGTRACE_FLIGHT_MB. */
	unsigned flight_mb;
	/* Flight mode: rtr_stop() writes a last snapshot (1, default) or nothing (0).
	 * RINGTRACE_FLIGHT_AT_EXIT. */
	unsigned flight_at_exit;
	/* Signals that finish the file, then take their course: a comma-separated list of
	 * names (TERM, INT, HUP, QUIT, USR1, USR2, SEGV, BUS, ABRT, ILL, FPE, with or
	 * without SIG) or numbers. NULL (default): none. RINGTRACE_SIGNALS. */
	const char *signals;
	/* A signal that takes a snapshot (flight mode) or ends the segment and flushes
	 * (stream mode; a flush without rotation), e.g. "USR2". NULL (default): none.
	 * RINGTRACE_SNAPSHOT_SIGNAL. */
	const char *snapshot_signal;
	/* Fields of version 3. */
	/* RTR_FORMAT_AUTO (default), _JSON or _PERFETTO. RINGTRACE_FORMAT=auto|json|perfetto. */
	int format;
	/* Fields of version 4. */
	/* How long rtr_start() waits, in ms, for a reader to open the FIFO at path (a FIFO
	 * opened with no reader fails at once; `cat fifo > out &` may not have opened it
	 * yet). Past it, rtr_start() fails with -ENXIO, naming the FIFO on stderr.
	 * RTR_OPEN_TIMEOUT_STOP (default): as long as stop_timeout_ms; 0: not at all; at
	 * most 3600000. RINGTRACE_OPEN_TIMEOUT_MS. */
	unsigned open_timeout_ms;
	/* The perfetto format: its packets in zlib-compressed batches (TracePacket
	 * compressed_packets, at most 64 KiB of packets each), 1 (default), or plain, 0.
	 * Plain too when the file is gzip-compressed. RINGTRACE_PF_COMPRESS=0|1. */
	unsigned pf_compress;
	/* Fields of version 5. */
	/* Beside a trace, its profile too (docs/profile.md): `<path>.profile.json`, written
	 * when the trace's file is finished, at each segment's end and at a snapshot. 0
	 * (default) or 1. RINGTRACE_PROFILE. */
	unsigned profile;
	/* A profile's deepest call-path level; slices below it count in their ancestor.
	 * 1 .. 1024, default 64. RINGTRACE_PROFILE_DEPTH. */
	unsigned profile_depth;
	/* A profile's most call paths (nodes): a slice whose path is new past it counts in
	 * its parent ("unplaced"). 16 .. 16777216, default 100000. RINGTRACE_PROFILE_NODES. */
	unsigned profile_nodes;
};

/* rtr_config.open_timeout_ms: as long as stop_timeout_ms. */
#define RTR_OPEN_TIMEOUT_STOP 0xffffffffu

/*
 * Fill *cfg with the defaults, then apply the RINGTRACE_* environment variables,
 * and set size and version. A variable with a bad value is reported on stderr and
 * leaves the default.
 * Thread-safe; allocates nothing (string fields point into the environment).
 */
RTR__DECL void rtr_config_init(struct rtr_config *cfg);

/* ------------------------------------------------------------------------- */
/* Lifecycle                                                                  */

/*
 * Open the trace file, write its start marker and start the writer thread.
 * cfg NULL means rtr_config_init() defaults. The config is copied (strings too).
 * The path's missing directories are made first (mkdir -p, 0777 less the umask).
 * A regular file is written under a new name and renamed to the path once started
 * (a file there survives a failed start; one another user owns is replaced, never
 * written through); "-", "/dev/stdout" and "/dev/stderr" mean the inherited
 * descriptor; a FIFO, tty or device is written in place, in order.
 * Returns 0, or a negative errno: -EBUSY already started (or the last session's
 * writer is still stuck in its file after a timed-out stop), -EINVAL bad config,
 * the mkdir(2) error of a directory it cannot make (-ENOTDIR for a file in the way;
 * stderr names the directory), the open(2) or rename(2) error for the file (-ELOOP
 * for a symlink, -ENXIO for a FIFO with no reader), the io_uring error with
 * RTR_IO_URING, -ENOMEM. A failure is also reported once on stderr, with the path.
 * Call from one thread at a time, with rtr_stop(). A program that exits without
 * rtr_stop() still gets a finished file (an atexit handler stops the recorder).
 * When RINGTRACE_AUTOSTART=1 started the recorder as the library loaded, the first
 * call keeps that session (cfg is not applied) and returns 0; rtr_stop() then ends it.
 */
RTR__DECL int rtr_start(const struct rtr_config *cfg);

/*
 * Wait until every event recorded before the call (by any thread, as ordered by
 * happens-before) has been written to the file. Returns 0, the first write error
 * as a negative errno, -ETIMEDOUT after cfg.stop_timeout_ms, or 0 when the recorder
 * is not running. Any thread; it holds no lock while it waits (fork() and
 * rtr_stop() in other threads go on).
 */
RTR__DECL int rtr_flush(void);

/*
 * Stop recording: drain every ring, write the end marker and close the array, close
 * the file, join the writer. Returns 0, or the first write error as a negative errno
 * (the events that could not be written are counted as dropped); -ETIMEDOUT when the
 * file blocked past cfg.stop_timeout_ms (the rest is counted as dropped_io). After
 * ENOSPC or EFBIG the file still gets its end marker and "]" where the device takes
 * them. 0 when not running.
 * A later rtr_start() begins a new file.
 */
RTR__DECL int rtr_stop(void);

/*
 * Flight mode: write the window (the newest cfg.flight_mb MiB of lines) as a trace of
 * its own at path, or with path NULL at the configured pattern with %s the snapshot
 * number; every slice open at this moment ends there with "args":{"open":true}. The
 * recorder keeps recording. Returns once the file is complete on disk (written under
 * a new name and renamed): 0, or a negative errno (-ETIMEDOUT after
 * cfg.stop_timeout_ms). Stream mode with rotation: ends the current segment now
 * (path must be NULL; -EINVAL otherwise). Stream mode without rotation: -ENOTSUP.
 * -ENOTCONN when the recorder is not running. Any thread.
 */
RTR__DECL int rtr_snapshot(const char *path);

/* ------------------------------------------------------------------------- */
/* The profile so far                                                         */

/* One call path of the process's profile (docs/profile.md), its threads merged. */
struct rtr_profile_node {
	unsigned depth;	  /* 1 for a top-level slice, 2 for a slice inside one, ... */
	const char *name; /* NUL-terminated; valid during the callback only */
	const char *cat;  /* "" when none */
	uint64_t count;	  /* slices on this call path */
	uint64_t total_ns, self_ns, min_ns, max_ns;
	uint64_t p50_ns, p99_ns; /* the sketch's quantiles: within 1 %, exact up to 8 slices */
};

/* Called for each call path in preorder (a node, then the nodes inside it); a nonzero
 * return stops the walk and is returned by rtr_profile_walk(). */
typedef int (*rtr_profile_fn)(const struct rtr_profile_node *node, void *user);

/*
 * Walk the profile of the running session as it is now: every event recorded before
 * the call is counted (it waits for the writer, as rtr_flush()), slices still open
 * count up to now. The session must aggregate: RINGTRACE_MODE=profile or
 * RINGTRACE_PROFILE=1 (rtr_config.profile). Returns 0, fn's nonzero return,
 * -ENOTCONN when no session aggregates, -ENOMEM. Any thread; fn runs on the
 * caller's thread and holds no lock of the library (it may record events).
 */
RTR__DECL int rtr_profile_walk(rtr_profile_fn fn, void *user);

/* ------------------------------------------------------------------------- */
/* Statistics                                                                 */

struct rtr_stats {
	uint64_t events_recorded;	   /* events the program recorded in this session */
	uint64_t events_written;	   /* events in bytes the file accepted */
	uint64_t events_dropped;	   /* the sum of the events_dropped_* below */
	uint64_t events_dropped_full;	   /* dropped because a ring was full (drop mode) */
	uint64_t events_dropped_io;	   /* a write error, or a stop that timed out */
	uint64_t events_dropped_too_large; /* one event larger than half a ring */
	uint64_t bytes_written;		   /* bytes the file accepted (compressed, for gzip) */
	uint64_t threads;		   /* producer threads that recorded in this session */
	uint64_t writer_wakeups;	   /* times the writer woke up to drain */
	uint64_t events_args_cut; /* events recorded with only their first RTR_MAX_ARGS args */
	int io_method;		  /* RTR_IO_URING or RTR_IO_SYNC (0 when never started) */
	int clock;		  /* RTR_CLOCK_MONOTONIC or RTR_CLOCK_TSC */
	int write_error;	  /* first write error, negative errno, or 0 */
	int running;		  /* 1 between rtr_start() and rtr_stop() */
	/* JSON text in bytes_written: equal to it for plain output; for gzip, the text of
	 * the writes that landed whole (one cut by an error counts 0). */
	uint64_t bytes_uncompressed;
	/* An event call made inside another on the same thread (a signal handler that
	 * interrupted it): dropped, see "Signal handlers" in docs/api.md. */
	uint64_t events_dropped_reentrant;
	/* Records the writer found malformed (a ring overwritten by the program): skipped. */
	uint64_t events_dropped_corrupt;
	/* Events on a track rtr_track_create() could not make (NULL: RTR_MAX_TRACKS). */
	uint64_t events_dropped_no_track;
	/* Set by the library: the bytes of this struct it wrote, and RTR_STATS_VERSION.
	 * Fields added later go after these. */
	uint32_t size;
	uint32_t version;
	/* Fields of version 2. */
	/* Files finished: segments (rotation) or snapshots (flight mode); 0 for a single
	 * file. */
	uint64_t files;
	/* Flight mode: events that fell out of the window. They count as written (to the
	 * window), not as dropped. */
	uint64_t events_evicted;
	/* Fields of version 3. */
	/* Block mode (RTR_ON_FULL_BLOCK): events whose thread waited for the writer to
	 * free ring space, and the time they waited in all, in ns. 0 and 0 mean the
	 * writer kept up; drop mode drops instead (events_dropped_full). */
	uint64_t events_waited_full;
	uint64_t waited_ns;
};

#define RTR_STATS_VERSION 3

/*
 * Counters of the current session, or of the last one after rtr_stop(). While the
 * recorder runs, events_recorded may exceed written + dropped by what is still in
 * the rings; after rtr_stop() written + dropped == recorded exactly. Any thread.
 *
 * rtr_stats_get_sized() writes exactly `size` bytes at out: the counters it knows
 * that fit, zeros for any bytes past its own struct (fields of a newer header).
 * rtr_stats_get(out) passes sizeof(*out), so a caller never sets a size; the
 * function of that name (called as `(rtr_stats_get)(out)`, or from another language)
 * writes the first layout.
 */
RTR__DECL void rtr_stats_get_sized(struct rtr_stats *out, size_t size);
RTR__DECL void(rtr_stats_get)(struct rtr_stats *out);
#define rtr_stats_get(out) rtr_stats_get_sized((out), sizeof(*(out)))

/* The library's version as "major.minor.patch", and as RTR_VERSION_NUMBER counts it.
 * Equal to the header's RTR_VERSION_STRING / RTR_VERSION_NUMBER when the program
 * runs with the library it was built against. Any thread. */
RTR__DECL const char *rtr_version(void);
RTR__DECL unsigned rtr_version_number(void);

/* Name of an RTR_IO_* value ("io_uring", "write"), for printing. */
RTR__DECL const char *rtr_io_name(int io_method);

/* The file of the running session, or of the last one after rtr_stop(), with its
 * pattern expanded; "" before the first rtr_start(). Valid until the next
 * rtr_start(). Call from the thread that starts and stops the recorder. */
RTR__DECL const char *rtr_trace_path(void);

/* ------------------------------------------------------------------------- */
/* Arguments                                                                  */

enum {
	RTR_ARG_TYPE_I64 = 1,
	RTR_ARG_TYPE_U64 = 2,
	RTR_ARG_TYPE_F64 = 3,
	RTR_ARG_TYPE_BOOL = 4,
	RTR_ARG_TYPE_STR = 5,	    /* static string: the pointer is recorded */
	RTR_ARG_TYPE_STR_COPY = 6,  /* bytes copied into the ring at record time */
	RTR_ARG_TYPE_I64_ARRAY = 7, /* int64 values, copied: [1,2,3] */
	RTR_ARG_TYPE_I64_LISTS = 8, /* lists of int64, copied: [[2,3],[4]] (tensor shapes) */
	RTR_ARG_TYPE_STR_ARRAY = 9, /* static strings, the pointers copied: ["a","b"] */
	RTR_ARG_TYPE_VALUE = 10,    /* any JSON value, encoded (<ringtrace/value.h>), copied */
};

/* Most arguments one event carries; an event with more keeps the first RTR_MAX_ARGS and
 * is counted in rtr_stats.events_args_cut and in the trace's end marker. */
#define RTR_MAX_ARGS 16
/* Longest copied string (name, argument value); longer ones are cut at this many bytes. */
#define RTR_MAX_COPY 4096

struct rtr_arg {
	const char *key; /* static string */
	int type;	 /* RTR_ARG_TYPE_* */
	union {
		int64_t i64;
		uint64_t u64;
		double f64;
		bool b;
		const char *str;
		struct {
			const int64_t *v; /* I64_ARRAY: n values; I64_LISTS: the lists' values */
			const uint32_t *lens; /* I64_LISTS: n list lengths; else unused */
			uint32_t n;
		} i64s;
		struct {
			const char *const *v;
			uint32_t n;
		} strs;
		struct {
			const void *bytes; /* the encoding of <ringtrace/value.h> */
			uint32_t len;
		} value;
	} v;
};

/* A conversion that -Wold-style-cast accepts in C++. */
#ifdef __cplusplus
#define RTR__CAST(type, v) static_cast<type>(v)
#else
#define RTR__CAST(type, v) ((type)(v))
#endif

#ifdef __cplusplus
#define RTR__ARG(k, t, field, val)  \
	([&]() {                    \
		struct rtr_arg a_;  \
		a_.key = (k);       \
		a_.type = (t);      \
		a_.v.field = (val); \
		return a_;          \
	}())
#else
#define RTR__ARG(k, t, field, val) ((struct rtr_arg){.key = (k), .type = (t), .v.field = (val)})
#endif
#define RTR_ARG_I64(key, val)	   RTR__ARG(key, RTR_ARG_TYPE_I64, i64, RTR__CAST(int64_t, val))
#define RTR_ARG_U64(key, val)	   RTR__ARG(key, RTR_ARG_TYPE_U64, u64, RTR__CAST(uint64_t, val))
#define RTR_ARG_F64(key, val)	   RTR__ARG(key, RTR_ARG_TYPE_F64, f64, RTR__CAST(double, val))
#define RTR_ARG_BOOL(key, val)	   RTR__ARG(key, RTR_ARG_TYPE_BOOL, b, RTR__CAST(bool, val))
#define RTR_ARG_STR(key, val)	   RTR__ARG(key, RTR_ARG_TYPE_STR, str, (val))
#define RTR_ARG_STR_COPY(key, val) RTR__ARG(key, RTR_ARG_TYPE_STR_COPY, str, (val))
#ifdef __cplusplus
#define RTR__ARG_LIST(k_, t_, field, v_, ls, n_)        \
	([&]() {                                        \
		struct rtr_arg a_ = {};                 \
		a_.key = (k_);                          \
		a_.type = (t_);                         \
		a_.v.field.v = (v_);                    \
		a_.v.field.n = RTR__CAST(uint32_t, n_); \
		ls;                                     \
		return a_;                              \
	}())
#define RTR_ARG_I64_ARRAY(k_, v_, n_) RTR__ARG_LIST(k_, RTR_ARG_TYPE_I64_ARRAY, i64s, v_, , n_)
#define RTR_ARG_I64_LISTS(k_, v_, l_, n_) \
	RTR__ARG_LIST(k_, RTR_ARG_TYPE_I64_LISTS, i64s, v_, a_.v.i64s.lens = (l_), n_)
#define RTR_ARG_STR_ARRAY(k_, v_, n_) RTR__ARG_LIST(k_, RTR_ARG_TYPE_STR_ARRAY, strs, v_, , n_)
#define RTR_ARG_VALUE(k_, bytes_, len_)                     \
	([&]() {                                            \
		struct rtr_arg a_ = {};                     \
		a_.key = (k_);                              \
		a_.type = RTR_ARG_TYPE_VALUE;               \
		a_.v.value.bytes = (bytes_);                \
		a_.v.value.len = RTR__CAST(uint32_t, len_); \
		return a_;                                  \
	}())
#else
/* n_ int64 values at v_, copied into the ring: [v0,v1,...]. */
#define RTR_ARG_I64_ARRAY(k_, v_, n_)                     \
	((struct rtr_arg){.key = (k_),                    \
			  .type = RTR_ARG_TYPE_I64_ARRAY, \
			  .v.i64s = {(v_), NULL, (uint32_t)(n_)}})
/* n_ lists, list i holding l_[i] of the values at v_ in turn: [[2,3],[4]] for
 * v_ {2,3,4} and l_ {2,1}. Copied. */
#define RTR_ARG_I64_LISTS(k_, v_, l_, n_)                 \
	((struct rtr_arg){.key = (k_),                    \
			  .type = RTR_ARG_TYPE_I64_LISTS, \
			  .v.i64s = {(v_), (l_), (uint32_t)(n_)}})
/* n_ static strings at v_ (their pointers are copied): ["float32","int64"]. */
#define RTR_ARG_STR_ARRAY(k_, v_, n_) \
	((struct rtr_arg){            \
		.key = (k_), .type = RTR_ARG_TYPE_STR_ARRAY, .v.strs = {(v_), (uint32_t)(n_)}})
/* A JSON value of any shape, {"a":[1,null]}, as len_ bytes at bytes_ in the encoding
 * that <ringtrace/value.h> builds; copied, at most RTR_MAX_COPY bytes (a longer one is
 * cut there, its open arrays and objects closed). */
#define RTR_ARG_VALUE(k_, bytes_, len_) \
	((struct rtr_arg){              \
		.key = (k_), .type = RTR_ARG_TYPE_VALUE, .v.value = {(bytes_), (uint32_t)(len_)}})
#endif

/* ------------------------------------------------------------------------- */
/* Events                                                                     */

/* A call site: category and name, made once by the macros below. Static storage. */
struct rtr_site {
	const char *cat;
	const char *name;
};

/* Types and limits of the calls below; see each call for what they mean. */
/* Where an instant shows: on its thread (the default of rtr_instant), across its
 * process, or across the whole trace. */
enum {
	RTR_INSTANT_THREAD = 0,
	RTR_INSTANT_PROCESS = 1,
	RTR_INSTANT_GLOBAL = 2,
};

struct rtr_track;

struct rtr_track_desc {
	const char *process;	/* the pseudo-process, e.g. "GPU 0" (copied) */
	const char *lane;	/* the lane, e.g. "stream 7" (copied) */
	const char *label;	/* optional process label, e.g. "H100 80GB" (copied), or NULL */
	int process_sort_index; /* the process's place among processes (0: viewer's order) */
	int lane_sort_index;	/* the lane's place in its process (0: creation order) */
	/* sizeof(struct rtr_track_desc) and RTR_TRACK_DESC_VERSION, set by
	 * RTR_TRACK_DESC_INIT(); 0 (a desc built without it) means this first layout.
	 * Fields added later go after these. */
	uint32_t size;
	uint32_t version;
};

#define RTR_TRACK_DESC_VERSION 1
/* struct rtr_track_desc d = RTR_TRACK_DESC_INIT(.process = "GPU 0", .lane = "stream 7"); */
#define RTR_TRACK_DESC_INIT(...)                                                          \
	{                                                                                 \
		.size = sizeof(struct rtr_track_desc), .version = RTR_TRACK_DESC_VERSION, \
		__VA_ARGS__                                                               \
	}

#define RTR_MAX_TRACKS 1024
#define RTR_MEM_HOST   (-1) /* the device of host memory, for rtr_mem_alloc() */
#define RTR_MAX_FRAMES 64   /* most frames a stack sample keeps */

#ifndef RINGTRACE_DISABLE

/* Nanoseconds on the recorder's clock (CLOCK_MONOTONIC's time base), for
 * rtr_complete(). Any thread, a signal handler too; works whether or not the recorder
 * runs. Never less than a value it returned before on the same thread, across
 * restarts (which may recalibrate the clock) too. */
RTR_API uint64_t rtr_now_ns(void);

/* Name the calling thread in the trace (copied). Any thread, while recording. */
RTR_API void rtr_thread_name(const char *name);

/* Slow-path and argument-carrying calls: lock-free, allocation-free. */
RTR_API void rtr_begin_args(const char *cat, const char *name, const struct rtr_arg *args,
			    unsigned n);
RTR_API void rtr_instant_args(const char *cat, const char *name, const struct rtr_arg *args,
			      unsigned n);
RTR_API void rtr_complete_args(const char *cat, const char *name, uint64_t ts_ns, uint64_t dur_ns,
			       const struct rtr_arg *args, unsigned n);
RTR_API void rtr_begin_copy(const char *cat, const char *name);
RTR_API void rtr_instant_copy(const char *cat, const char *name);
RTR_API void rtr_complete_copy(const char *cat, const char *name, uint64_t ts_ns, uint64_t dur_ns);
RTR_API void rtr_counter_f64(const char *cat, const char *name, double value);

/*
 * Ending slices. rtr_end_copy() ends a slice begun with rtr_begin_copy(): it copies
 * the name too, so the caller's buffer may be freed once it returns (rtr_end() keeps
 * the pointer). rtr_pop() ends the innermost slice open on the calling thread,
 * whatever its name (push/pop style); cat is the slice's category, for the filter.
 * The writer writes the E with the name and category of the B it ends.
 */
RTR_API void rtr_end_copy(const char *cat, const char *name);
RTR_API void rtr_pop(const char *cat);
/* The calls of this section are there (ringtrace.hpp builds on them). */
#define RTR_HAVE_END_COPY	  1
#define RTR_HAVE_POP		  1
#define RTR_HAVE_SCOPE_ARGS	  1
#define RTR_HAVE_CATEGORY_ENABLED 1

/*
 * Arguments added to the innermost slice open on the calling thread (begun with
 * rtr_begin*), written on its end: on its E, with the other arguments of that end.
 * cat is that slice's category: when the filter left the slice out, the argument is
 * left out too. With no slice open the call records nothing. Keys are static strings;
 * rtr_scope_arg_str_copy() copies the value (at most RTR_MAX_COPY bytes). A slice
 * keeps at most RTR_MAX_SCOPE_ARG_BYTES of added arguments (as JSON text); one past
 * that is counted in events_args_cut and left out.
 */
RTR_API void rtr_scope_arg_i64(const char *cat, const char *key, int64_t value);
RTR_API void rtr_scope_arg_f64(const char *cat, const char *key, double value);
RTR_API void rtr_scope_arg_str_copy(const char *cat, const char *key, const char *value);
#define RTR_MAX_SCOPE_ARG_BYTES 8192

/* An instant with a scope (RTR_INSTANT_*) and optional arguments. */
RTR_API void rtr_instant_scoped(const char *cat, const char *name, int scope,
				const struct rtr_arg *args, unsigned n);

/* A counter with several series in one sample, one per argument: {"used":..,"cached":..}.
 * Numeric arguments only (I64, U64, F64, BOOL); others are left out, and a call with no
 * numeric argument records nothing. Each key is a series of the counter `name`. */
RTR_API void rtr_counter_args(const char *cat, const char *name, const struct rtr_arg *args,
			      unsigned n);

/*
 * Flows: arrows between slices, possibly on different threads. rtr_flow_start()
 * inside a slice starts the arrow at that slice, rtr_flow_step() inside later slices
 * passes through them, rtr_flow_end() ends it at the slice enclosing the call. All
 * three take the same cat, name and id. Ids are 64-bit, written as hex strings.
 */
RTR_API uint64_t rtr_flow_id(void); /* a new process-unique id; any thread, lock-free */
RTR_API void rtr_flow_start(const char *cat, const char *name, uint64_t id);
RTR_API void rtr_flow_step(const char *cat, const char *name, uint64_t id);
RTR_API void rtr_flow_end(const char *cat, const char *name, uint64_t id);

/*
 * Async spans: work that overlaps on one thread or moves between threads (requests,
 * transfers). A begin and an end match on (cat, id, name); instants in between mark
 * steps. Any thread may record any of the three. Ids are 64-bit, written as hex.
 */
RTR_API void rtr_async_begin(const char *cat, const char *name, uint64_t id,
			     const struct rtr_arg *args, unsigned n);
RTR_API void rtr_async_instant(const char *cat, const char *name, uint64_t id,
			       const struct rtr_arg *args, unsigned n);
RTR_API void rtr_async_end(const char *cat, const char *name, uint64_t id);

/* ------------------------------------------------------------------------- */
/* Tracks: lanes that are not the calling thread                              */

/*
 * A track is a named lane of a pseudo-process in the viewer: a device and its
 * streams ("GPU 0" / "stream 7"), a queue, a remote worker. Tracks with the same
 * process name share that process. Events on a track carry explicit timestamps in the
 * track's own clock, may be recorded from any thread, and go through the calling
 * thread's ring like any other event. Pseudo-process and lane ids never collide with
 * real pids and tids. A complete event that partly overlaps an earlier one on its lane
 * goes to an overflow lane of the same track ("stream 7 (2)"), so that viewers never
 * mis-nest or drop it.
 */

/* A new track, or the existing one with the same process and lane names; NULL when
 * desc or its names are NULL or RTR_MAX_TRACKS tracks exist. Tracks live until the
 * process exits. Any thread, at any time (not for the hot path: it takes a lock). */
RTR_API struct rtr_track *rtr_track_create(const struct rtr_track_desc *desc);

/*
 * The track's clock. Timestamps given for a track are nanoseconds in its own clock
 * domain; the writer maps them onto the trace's timeline (rtr_now_ns()) with the
 * track's mapping when it writes them: host = ts - track_ts + host_ns. Give one
 * (track_ts, host_ns) pair read at about the same moment, or an offset (host = ts +
 * offset_ns). Without either, track timestamps are rtr_now_ns() values. Set it
 * before recording on the track; a later change applies to what is not yet written.
 */
RTR_API void rtr_track_clock_pair(struct rtr_track *t, uint64_t track_ts, uint64_t host_ns);
RTR_API void rtr_track_clock_offset(struct rtr_track *t, int64_t offset_ns);

/* Events on a track: a complete event, an instant, a counter sample with one series
 * per numeric argument, and the ends of flows (see rtr_flow_start()). */
RTR_API void rtr_track_complete(struct rtr_track *t, const char *cat, const char *name, uint64_t ts,
				uint64_t dur, const struct rtr_arg *args, unsigned n);
RTR_API void rtr_track_instant(struct rtr_track *t, const char *cat, const char *name, uint64_t ts,
			       const struct rtr_arg *args, unsigned n);
RTR_API void rtr_track_counter(struct rtr_track *t, const char *cat, const char *name, uint64_t ts,
			       const struct rtr_arg *args, unsigned n);
RTR_API void rtr_track_flow_start(struct rtr_track *t, const char *cat, const char *name,
				  uint64_t ts, uint64_t id);
RTR_API void rtr_track_flow_end(struct rtr_track *t, const char *cat, const char *name, uint64_t ts,
				uint64_t id);

/* ------------------------------------------------------------------------- */
/* Process and thread metadata                                                */

/* A label shown with the process name (copied), and the process's place among the
 * processes of a merged trace. Any time; written at the next file's start too. */
RTR_API void rtr_process_label(const char *label);
RTR_API void rtr_process_sort_index(int index);
/* The calling thread's place among its process's threads. */
RTR_API void rtr_thread_sort_index(int index);

/* ------------------------------------------------------------------------- */
/* Memory and stack samples                                                   */

/*
 * An allocation or a free of `addr` on a device (RTR_MEM_HOST, or a device number).
 * Each is written as an instant with the address, bytes and device, and the writer
 * keeps a "bytes in use" counter per device from them, so the trace shows a memory
 * timeline without the program keeping a total ("memory host", "memory device N").
 * A free looks up its allocation's size (a free of an address never allocated in
 * this session counts 0 bytes, so a total never goes negative). Category "memory"
 * for the category filter. Any thread; lock-free and allocation-free like an event.
 */
RTR_API void rtr_mem_alloc(int device, const void *addr, uint64_t bytes);
RTR_API void rtr_mem_free(int device, const void *addr);

/*
 * A stack sample: an instant on the calling thread carrying a call stack, innermost
 * frame first, as code addresses the writer resolves to names (never on the calling
 * thread). rtr_stack_sample() takes frames the program captured; at most
 * RTR_MAX_FRAMES are kept. rtr_stack_sample_here() captures the caller's own stack
 * with backtrace(3), which walks unwind tables: far slower than an event, and not
 * async-signal-safe. Frames are copied; names are "symbol+0xoff" (exported symbols
 * only: link with -rdynamic to name the program's own), else "library+0xoff", else
 * "0xaddr". Any thread.
 */
RTR_API void rtr_stack_sample(const char *cat, const char *name, const void *const *frames,
			      unsigned n);
RTR_API void rtr_stack_sample_here(const char *cat, const char *name);

#endif /* !RINGTRACE_DISABLE */

#ifdef __cplusplus
}
#endif

/* The inline hot path is C: its casts and 0 pointers are not the caller's to see
 * under C++'s -Wold-style-cast and -Wzero-as-null-pointer-constant. */
#ifdef __cplusplus
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
#pragma GCC diagnostic ignored "-Wzero-as-null-pointer-constant"
#endif
#include "ringtrace/emit.h"
#ifdef __cplusplus
#pragma GCC diagnostic pop
#endif

/*
 * Variadic conveniences: rtr_begin_v("app", "load", RTR_ARG_I64("bytes", n), ...).
 * Each argument is evaluated exactly once. C builds one compound literal and counts
 * it with sizeof, which does not evaluate it; C++ builds one initializer list, whose
 * array lives to the end of the full expression, so past the call.
 */
#if defined(RINGTRACE_DISABLE)
#define rtr_begin_v(cat, name, ...)   RTR__UNUSED(cat, name, __VA_ARGS__)
#define rtr_instant_v(cat, name, ...) RTR__UNUSED(cat, name, __VA_ARGS__)
#define rtr_complete_v(cat, name, ts_ns, dur_ns, ...) \
	RTR__UNUSED(cat, name, ts_ns, dur_ns, __VA_ARGS__)
#elif defined(__cplusplus)
#include <initializer_list>
#define RTR__ARGV(...)		      (std::initializer_list<struct rtr_arg>{__VA_ARGS__}.begin())
typedef std::initializer_list<struct rtr_arg> rtr__arg_list;
static inline void rtr__begin_list(const char *cat, const char *name, rtr__arg_list a)
{
	rtr_begin_args(cat, name, a.begin(), static_cast<unsigned>(a.size()));
}
static inline void rtr__instant_list(const char *cat, const char *name, rtr__arg_list a)
{
	rtr_instant_args(cat, name, a.begin(), static_cast<unsigned>(a.size()));
}
static inline void rtr__complete_list(const char *cat, const char *name, uint64_t ts_ns,
				      uint64_t dur_ns, rtr__arg_list a)
{
	rtr_complete_args(cat, name, ts_ns, dur_ns, a.begin(), static_cast<unsigned>(a.size()));
}
#define rtr_begin_v(cat, name, ...)   rtr__begin_list(cat, name, {__VA_ARGS__})
#define rtr_instant_v(cat, name, ...) rtr__instant_list(cat, name, {__VA_ARGS__})
#define rtr_complete_v(cat, name, ts_ns, dur_ns, ...) \
	rtr__complete_list(cat, name, ts_ns, dur_ns, {__VA_ARGS__})
#else
#define RTR__ARGV(...) ((const struct rtr_arg[]){__VA_ARGS__})
#define RTR__ARGC(...) ((unsigned)(sizeof(RTR__ARGV(__VA_ARGS__)) / sizeof(struct rtr_arg)))
#define rtr_begin_v(cat, name, ...) \
	rtr_begin_args(cat, name, RTR__ARGV(__VA_ARGS__), RTR__ARGC(__VA_ARGS__))
#define rtr_instant_v(cat, name, ...) \
	rtr_instant_args(cat, name, RTR__ARGV(__VA_ARGS__), RTR__ARGC(__VA_ARGS__))
#define rtr_complete_v(cat, name, ts_ns, dur_ns, ...) \
	rtr_complete_args(cat, name, ts_ns, dur_ns, RTR__ARGV(__VA_ARGS__), RTR__ARGC(__VA_ARGS__))
#endif

#endif /* RINGTRACE_H */
