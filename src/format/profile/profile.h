/* SPDX-License-Identifier: MIT */
/*
 * Profiles: the writer's events aggregated into call-path trees instead of lines
 * (docs/profile.md). Its rooms:
 *
 *	tree.c		the aggregate: strings, the pool of nodes (one per call path of
 *			a tree), threads, counters; fed a batch of events at a time
 *	nest.c		a thread's slices nested into call paths whatever order they
 *			come in (a scope comes after its children), in bounded memory
 *	text.c		the aggregate as the profile's JSON document
 *	job.c		the export of a process's profile (its threads merged) and the
 *			job profile: the ranks' exports merged, written by rank 0
 *	file.c		the format of RINGTRACE_MODE=profile (no lines: the profile is
 *			written whole), the profiler beside a trace (RINGTRACE_PROFILE=1),
 *			the file written under a new name and renamed into place
 *
 * Why one pool of nodes: a node is found by (parent, name, category) in one hash
 * table, and a file is written by a walk from a root: the aggregates of nest.c are
 * trees of the pool, and a file shows each thread in a pool of its own. Names are
 * interned by content (a static string's pointer is cached in front), so the same
 * name recorded through two pointers, or copied, is one node.
 *
 * The writer thread feeds the aggregate and writes the file; the MPI module's export
 * (rtr__profile_export()) runs on the program's thread: the aggregate's lock orders
 * them.
 */
#ifndef RTR_FORMAT_PROFILE_H
#define RTR_FORMAT_PROFILE_H

#include "common/sketch.h"
#include "writer/format.h"

#include <pthread.h>
#include <ringtrace.h>
#include <stdint.h>

#define RTR__PROF_NONE UINT32_MAX

/* One call path: a node of a thread's tree. */
struct rtr__prof_node {
	uint32_t parent, child, sibling; /* RTR__PROF_NONE: none; a root's parent is none */
	uint32_t next;			 /* the hash chain */
	uint32_t name, cat;		 /* string ids (0: none) */
	uint32_t depth;			 /* 0 for a thread's root */
	uint32_t unused;
	uint64_t n, t, s, min, max; /* slices, total ns, self ns, one slice's least and most */
	struct rtr__sketch q;
};

/* A slice that ended on a thread, waiting for its parent (nest.c). */
struct rtr__prof_inst {
	uint32_t name, cat;
	uint32_t child, last, sibling; /* what it took (first, last), the next on its list */
	uint32_t agg;		       /* an aggregate it took (a node of the pool), or none */
	uint64_t ts, end;
};

/* A B open on a thread: the instances waiting from mark on are inside it. */
struct rtr__prof_frame {
	uint32_t name, cat;
	uint32_t mark;
	uint64_t begin;
};

/* A level's instances folded when the room was full: a root of the pool (more chained
 * by its sibling once a slice takes them), the earliest begin in it. */
struct rtr__prof_agg {
	uint32_t node;
	uint64_t first;
};

#define RTR__PROF_AGGS 8 /* aggregates a level keeps apart, oldest first */

struct rtr__prof_level {
	uint32_t n;
	uint32_t last_name, last_cat; /* the last instance folded on it */
	struct rtr__prof_agg a[RTR__PROF_AGGS];
};

struct rtr__prof_thread {
	int32_t tid;
	uint32_t depth;		  /* B's open, in frames */
	uint64_t events, dropped; /* recorded on the thread's ring; dropped by its producer */
	uint32_t extra;		  /* B's open past the depth limit */
	uint32_t ninst, ntop, inst_cap;
	struct rtr__prof_frame *frames; /* depth_limit */
	struct rtr__prof_level *levels; /* depth_limit + 1: the aggregates of each level */
	struct rtr__prof_inst *inst;	/* inst_cap */
	uint32_t *top;			/* the instances waiting, oldest first (inst_cap) */
	char name[64];
};

struct rtr__prof_counter {
	int32_t tid;
	uint32_t name, cat;
	uint32_t next;
	uint64_t samples;
	double min, max, sum, last;
};

/* Strings by content: bytes in an arena, ids into offsets. */
struct rtr__prof_strings {
	char *arena;
	size_t arena_len, arena_cap;
	uint32_t *off, *len, *next; /* per id (id 0 unused) */
	uint32_t count, cap;
	uint32_t *slots; /* hash of content -> first id */
	uint32_t nslots;
	struct {
		const char *ptr;
		uint32_t id;
	} cache[1024]; /* a static string's pointer -> its id */
};

struct rtr__prof {
	pthread_mutex_t lock; /* the aggregate: the writer's feed against an export */
	unsigned depth_limit;
	uint32_t node_limit;
	uint64_t deeper;   /* slices past the depth limit, counted in their ancestor */
	uint64_t unplaced; /* slices whose call path found no node (node_limit) */
	struct rtr__prof_strings str;
	struct rtr__prof_node *nodes;
	uint32_t nnodes, nodes_cap;
	uint32_t npaths;      /* nodes but the roots: the call paths, at most node_limit */
	uint32_t free_node;   /* nodes given back, chained by next; RTR__PROF_NONE: none */
	uint32_t *node_slots; /* hash of (parent, name, cat) -> first node */
	uint32_t nslots;
	struct rtr__prof_thread *threads;
	uint32_t nthreads, threads_cap;
	uint32_t last_thread; /* the thread looked up last */
	struct rtr__prof_counter *counters;
	uint32_t ncounters, counters_cap;
	uint32_t *counter_slots; /* 1024 */
	uint64_t files;		 /* profiles written */
	uint64_t write_errors;	 /* profiles that could not be written */
	int is_format;		 /* the session's format: the file is the profile */
	int frozen;		 /* written for MPI_Finalize: nothing more is added or written */
};

/* tree.c */
int rtr__prof_init(struct rtr__prof *p, unsigned depth_limit, uint32_t node_limit);
void rtr__prof_free(struct rtr__prof *p);
/* A batch of ring r's events, before the format writes them (their names as decoded). */
void rtr__prof_batch(struct rtr__writer *w, struct rtr__prof *p, const struct rtr__batch *b);
/* The string of id (its bytes and length). */
const char *rtr__prof_str(const struct rtr__prof *p, uint32_t id, uint32_t *len);

/* A mapped array (common/mem.h) of n_old elements of size grown to n_new, the old one
 * copied and unmapped. NULL without memory (the old one kept). */
void *rtr__prof_grow(void *old, size_t size, size_t n_old, size_t n_new);
/* Intern len bytes: the id, 0 when the table is full. */
uint32_t rtr__prof_intern(struct rtr__prof *p, const char *s, uint32_t len);
/* The node of (parent, name, cat), made when new: RTR__PROF_NONE at node_limit. */
uint32_t rtr__prof_child(struct rtr__prof *p, uint32_t parent, uint32_t name, uint32_t cat);
/* A new root (parent none). RTR__PROF_NONE without memory. */
uint32_t rtr__prof_root(struct rtr__prof *p);
/* Give back root i and its tree (its nodes are reused). */
void rtr__prof_drop(struct rtr__prof *p, uint32_t i);
/* A slice of node ended: dur ns, of which child_ns in its direct children. */
void rtr__prof_add(struct rtr__prof_node *nd, uint64_t dur, uint64_t child_ns);

/* nest.c: a thread's slices as they come (string ids of p), its state made and freed
 * with the thread; its tree as it is now under into's node root, the B's open counted
 * up to end_ns (into may be p's copy for a file: nothing of t changes). */
void rtr__prof_begin(struct rtr__prof *p, struct rtr__prof_thread *t, uint32_t name, uint32_t cat,
		     uint64_t ts);
void rtr__prof_end(struct rtr__prof *p, struct rtr__prof_thread *t, uint64_t ts);
void rtr__prof_complete(struct rtr__prof *p, struct rtr__prof_thread *t, uint32_t name,
			uint32_t cat, uint64_t ts, uint64_t dur);
void rtr__prof_show(const struct rtr__prof *p, const struct rtr__prof_thread *t,
		    struct rtr__prof *into, uint32_t root, uint64_t end_ns);
int rtr__prof_thread_init(struct rtr__prof *p, struct rtr__prof_thread *t);
void rtr__prof_thread_free(struct rtr__prof *p, struct rtr__prof_thread *t);

/* text.c: a growing buffer of text. */
struct rtr__prof_buf {
	char *data;
	size_t len, cap;
	int failed; /* out of memory: the text is cut */
};
/* Room for need more bytes at the end: the cursor, or NULL (failed set). */
char *rtr__prof_reserve(struct rtr__prof_buf *b, size_t need);
void rtr__prof_buf_free(struct rtr__prof_buf *b);
/* A node's keys after its name ("cat", n, t, s, min, max, q), without its children. */
char *rtr__prof_node_keys(char *cur, const struct rtr__prof *p, const struct rtr__prof_node *nd);
/* The most rtr__prof_node_keys() writes for nd. */
size_t rtr__prof_node_bound(const struct rtr__prof *p, const struct rtr__prof_node *nd);
/* A counter's figures at cur, ",\"samples\":...,\"last\":...}" (at most 160 bytes), the
 * object's close included: the rank's and the job's profiles write them alike. */
char *rtr__prof_counter_figures(char *cur, const struct rtr__prof_counter *c);
/* The process's profile document into out: the reason, whether it is final. */
int rtr__prof_document(struct rtr__writer *w, struct rtr__prof *p, struct rtr__prof_buf *out,
		       const char *reason, int final, uint64_t end_ns);

/* job.c: the process's profile with its threads merged, as the job profile's merge
 * reads it, the B's open counted to end_ns. 0 or -ENOMEM. */
int rtr__prof_export(struct rtr__writer *w, struct rtr__prof *p, struct rtr__prof_buf *out,
		     uint64_t end_ns);
/* Rank 0: the world ranks' exports (data[r], len[r] bytes; 0: none) merged, written at
 * path as the job profile; began_ns when the reduction began (CLOCK_MONOTONIC, as the
 * system has it), for its reduce_ns. 0 or -errno (-EINVAL: an export is malformed). */
int rtr__prof_job_write(const char *path, pid_t pid, int world, const char *const *data,
			const size_t *len, uint64_t began_ns);

/* The export's layout (job.c writes it; job.c's merge and walk.c read it). */
struct rtr__prof_export_head {
	uint32_t magic, version;
	int64_t rank, pid;
	uint64_t events, dropped, end_ns, deeper, unplaced;
	uint32_t depth_limit, node_limit, nnodes, ncounters, host_len, tsc;
	/* then the host's bytes, nnodes nodes in preorder, ncounters counters */
};

struct rtr__prof_export_node {
	uint32_t depth, name_len, cat_len, nbins;
	int32_t lo;
	uint32_t nexact;
	uint64_t n, t, s, min, max, q_count, q_zeros, q_min, q_max;
	/* then exact[nexact], bins[nbins], the name's bytes, the category's */
};

/* An export node's sketch, its header only (its exact values and buckets follow the
 * node, maybe unaligned: the caller copies them in). */
static inline struct rtr__sketch rtr__prof_export_sketch(const struct rtr__prof_export_node *e)
{
	return (struct rtr__sketch){.count = e->q_count,
				    .zeros = e->q_zeros,
				    .min = e->q_min,
				    .max = e->q_max,
				    .lo = e->lo,
				    .nbins = e->nbins};
}

/* walk.c: each node of an export (len bytes at data) to fn, in preorder, with its p50
 * and p99 (rtr_profile_walk()). 0, fn's nonzero return, -EINVAL (malformed), -ENOMEM. */
int rtr__prof_export_walk(const char *data, size_t len, rtr_profile_fn fn, void *user);

/* file.c: write len bytes as the file at path (a new name renamed into place; a pipe
 * or a device in place). 0 or -errno. */
int rtr__prof_write_file(const char *path, pid_t pid, const char *data, size_t len);

#endif
