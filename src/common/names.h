/* SPDX-License-Identifier: MIT */
/*
 * The names of the trace's own events and the keys of their arguments: written by
 * the library (both formats, the MPI module) and read by the tools. One list, as
 * string-literal macros so that a format can paste them into its constant text.
 *
 * The start marker opens every file (the origin and the configuration: what a merge
 * and a reader need); the end marker closes it (the totals: events written, dropped
 * by reason, bytes). docs/format.md describes each key.
 */
#ifndef RTR_COMMON_NAMES_H
#define RTR_COMMON_NAMES_H

#define RTR__MARK_START	     "ringtrace: start"
#define RTR__MARK_END	     "ringtrace: end"
#define RTR__MARK_CLOCK_SYNC "ringtrace: clock sync" /* the MPI module's clock alignment */
/* The writer's own counter tracks. */
#define RTR__COUNTER_EVENTS  "ringtrace: events"
#define RTR__COUNTER_DROPPED "ringtrace: dropped"

/* The variables a launcher gives a rank its number in, in the order they are read: by
 * the recorder (%r, the start marker's rank), the MPI module and `ringtrace record`. */
#define RTR__LAUNCHER_RANK_VARS \
	"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID", "MV2_COMM_WORLD_RANK"

/* The start marker's keys. */
#define RTR__KEY_ORIGIN_MONO "origin_monotonic_ns" /* a string: may exceed 2^53 */
#define RTR__KEY_ORIGIN_REAL "origin_realtime_ns"
#define RTR__KEY_HOST	     "host"
#define RTR__KEY_PID	     "pid"
#define RTR__KEY_RANK	     "rank"
#define RTR__KEY_WORLD_SIZE  "world_size"
#define RTR__KEY_VERSION     "version"
#define RTR__KEY_FORMAT	     "format" /* only in a .pftrace: "perfetto" */
#define RTR__KEY_CLOCK	     "clock"
#define RTR__KEY_IO	     "io"
#define RTR__KEY_RING_BYTES  "ring_bytes"
#define RTR__KEY_ON_FULL     "on_full"
#define RTR__KEY_FLUSH_MS    "flush_ms"
#define RTR__KEY_CATEGORIES  "categories"
#define RTR__KEY_COMPRESS    "compress"
#define RTR__KEY_CACHE_MB    "cache_mb"
#define RTR__KEY_MODE	     "mode"
#define RTR__KEY_FLIGHT_MB   "flight_mb"
#define RTR__KEY_MAX_MB	     "max_mb"
#define RTR__KEY_MAX_SECONDS "max_seconds"
/* In both markers: the file's number in a numbered series. */
#define RTR__KEY_SNAPSHOT "snapshot"
#define RTR__KEY_SEGMENT  "segment"

/* The end marker's keys. */
#define RTR__KEY_FINAL		   "final"
#define RTR__KEY_EVENTS		   "events"
#define RTR__KEY_SIGNAL		   "signal"
#define RTR__KEY_CONTINUES	   "continues"
#define RTR__KEY_EVENTS_SESSION	   "events_session"
#define RTR__KEY_CONTINUED	   "continued"
#define RTR__KEY_OPEN		   "open"
#define RTR__KEY_CUT		   "cut"
#define RTR__KEY_CUT_LOST	   "cut_lost"
#define RTR__KEY_OPEN_UNSHOWN	   "open_unshown"
#define RTR__KEY_EVICTED	   "evicted"
#define RTR__KEY_DROPPED	   "dropped"
#define RTR__KEY_DROPPED_FULL	   "dropped_ring_full"
#define RTR__KEY_DROPPED_LARGE	   "dropped_too_large"
#define RTR__KEY_DROPPED_IO	   "dropped_io"
#define RTR__KEY_DROPPED_REENTRANT "dropped_reentrant"
#define RTR__KEY_DROPPED_CORRUPT   "dropped_corrupt"
#define RTR__KEY_DROPPED_NO_TRACK  "dropped_no_track"
#define RTR__KEY_ARGS_CUT	   "args_cut"
#define RTR__KEY_THREADS	   "threads"
#define RTR__KEY_WAITED		   "waited"
#define RTR__KEY_WAITED_NS	   "waited_ns"
#define RTR__KEY_MEM_UNTRACKED	   "mem_untracked"
#define RTR__KEY_BYTES		   "bytes"

/* A fold of polls (src/writer/polls.c): one slice for a thread's consecutive MPI test
 * and probe calls that completed nothing, named after the call, or RTR__POLLS_MIXED
 * when they were of several. Its arguments: the calls, "count" (the requests: the most
 * one call was given), the calls of each name (keyed by the name), the time inside
 * them. */
#define RTR__POLLS_MIXED  "MPI polls"
#define RTR__KEY_POLLS	  "polls"
#define RTR__KEY_POLL_NS  "poll_ns"
#define RTR__KEY_REQUESTS "count"

#endif
