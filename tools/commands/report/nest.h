/* SPDX-License-Identifier: MIT */
/*
 * Call paths from slices written at their end (report's pass over one file).
 *
 * The recorder writes a slice (X) when it ends, so a slice's children come before it
 * in the file and its parent after it. Each thread keeps a stack of pending entries:
 * slices (with what they hold) whose parent has not come yet, in the order they
 * ended. A slice that comes claims the pending entries that ended after it began: they
 * become its children, and the paths of what they hold get its name in front. Paths
 * are nodes of a trie of names (parent, name), relative to the pending entry that
 * holds them until the thread's top-level slices are known at the end of the file.
 *
 * What an entry holds: time items (a path node, its inclusive ns and slice count,
 * one per distinct path: summed as they are claimed) and record items (an MPI call's
 * message endpoint or collective entry, whose path node is rewritten at each claim).
 * When more than NEST_PENDING_MAX entries wait on a thread, the older half is joined
 * into one: a parent that later begins inside that joined run claims all of it (and
 * is counted as approximate), as `stats` does for self time.
 *
 * Thread safety: one nest per thread.
 */
#ifndef RTR_TOOLS_REPORT_NEST_H
#define RTR_TOOLS_REPORT_NEST_H

#include "table.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NEST_PENDING_MAX 256

struct time_item {
	uint32_t node;
	uint32_t unused;
	uint64_t ns, calls;
};

struct entry {
	int64_t ts, end;
	size_t first_time, first_rec;
};

/* A record item: an index into the pass's message endpoints, or (with this bit) its
 * collective entries. */
#define REC_COLL (UINT32_C(1) << 31)

struct nest_thread {
	int64_t pid, tid;
	struct entry *entries;
	size_t nentries, entries_cap;
	struct time_item *times;
	size_t ntimes, times_cap;
	uint32_t *recs;
	size_t nrecs, recs_cap;
};

struct trie_node {
	uint32_t parent, name;
};

struct nest_name {
	char *text;
	bool mpi;
};

struct nest {
	struct table names; /* name -> uint32 id */
	struct nest_name *names_v;
	size_t nnames, names_cap;
	struct table trie; /* (parent, name) -> uint32 node */
	struct trie_node *nodes;
	size_t nnodes, nodes_cap;
	uint32_t *graft_gen, *graft_to;
	size_t graft_cap;
	uint32_t gen;
	struct nest_thread *threads;
	size_t nthreads, threads_cap;
	uint64_t approx; /* claims that split a joined run */
	/* Where a record's node is, to rewrite it at a claim (pass.c sets these). */
	uint32_t *(*rec_node)(void *ctx, uint32_t rec);
	void *ctx;
};

int nest_init(struct nest *n);
void nest_free(struct nest *n);

/* The id of a name (interned); UINT32_MAX when out of memory. mpi: the name is an
 * MPI call's (kept as the first category seen with it). */
uint32_t nest_name(struct nest *n, const char *s, size_t len, bool mpi);

/* The trie node (parent, name); UINT32_MAX when out of memory. Node 0 is the root. */
uint32_t nest_node(struct nest *n, uint32_t parent, uint32_t name);

struct nest_thread *nest_thread(struct nest *n, int64_t pid, int64_t tid);

/* A slice [ts, end] named name came on th: it claims its children and becomes a
 * pending entry. Its own node (name under the root) in *node. 0, or -1 out of memory. */
int nest_slice(struct nest *n, struct nest_thread *th, int64_t ts, int64_t end, uint32_t name,
	       uint32_t *node);

/* A record held by th's newest entry (the slice just given to nest_slice()). */
int nest_record(struct nest *n, struct nest_thread *th, uint32_t rec);

/* The path of node as text, names joined by ';' (malloc'd), or NULL. */
char *nest_path_text(const struct nest *n, uint32_t node);

#endif /* RTR_TOOLS_REPORT_NEST_H */
