/* SPDX-License-Identifier: MIT */
/*
 * Spread a per-file job over the cores of this machine and the ranks of an MPI job,
 * then merge the results in file order: how `stats` and `diff` (and any command that
 * reduces many files to one answer) read a job's thousand rank files.
 *
 * The caller describes a partial result (struct spread_ops): how to make an empty one,
 * read one file into it, merge a later one into an earlier one, and write one as bytes
 * and read it back. spread_run() then:
 *
 *   1. splits the files over the ranks when this process was started by a launcher
 *      (mpirun, srun: src/common/launcher.h) and the MPI plugin is there
 *      (libringtrace-tools-mpi.so, beside the libraries): rank r takes the r-th of K
 *      contiguous blocks of the files;
 *   2. reads its block on `jobs` threads, one file at a time each, every file into a
 *      partial of its own;
 *   3. merges the partials in file order as they complete (a file read early waits for
 *      the ones before it; at most 4 x jobs are held at once), so the result is the
 *      same at every `jobs`;
 *   4. under MPI, packs its partial into bytes, gathers them on rank 0, which merges
 *      them in rank order (= file order): the same result at every K.
 *
 * So the answer is identical at every jobs and K exactly when merge is associative and
 * keeps the order of the files (sums, sketches' buckets, tables in order of first
 * appearance are). Only rank 0 holds the result; the other ranks print nothing.
 *
 * Under a launcher without the plugin (built without MPI) one line (ops->say) says so on rank 0,
 * which then reads every file itself, and the other ranks do nothing: the same answer,
 * on one rank.
 *
 * Thread safety: ops->read runs on several threads at once, each with its own partial
 * and file (it must not touch shared state unlocked); init, merge, pack, unpack and
 * destroy run on one thread at a time.
 */
#ifndef RTR_TOOLS_SPREAD_H
#define RTR_TOOLS_SPREAD_H

#include "json.h"

#include <stdbool.h>
#include <stddef.h>

struct spread_ops {
	size_t size; /* bytes of a partial: spread_run() allocates them */
	/* Make an empty partial at p. 0 or -1 (out of memory). */
	int (*init)(void *ctx, void *p);
	/* Read file number index (path) into the empty partial p. A file that cannot be
	 * read is the partial's to record (and say): 0, or -1 to stop everything. */
	int (*read)(void *ctx, size_t index, const char *path, void *p);
	/* Merge from, whose files all come after into's, into into. 0 or -1. */
	int (*merge)(void *ctx, void *into, const void *from);
	/* Append p as bytes to out (MPI only). 0 or -1. */
	int (*pack)(void *ctx, const void *p, struct buf *out);
	/* Bytes of pack into the empty partial p (MPI only). 0 or -1. */
	int (*unpack)(void *ctx, const void *bytes, size_t len, void *p);
	void (*destroy)(void *ctx, void *p);
	/* Say line (no newline) to the person, or NULL: spread_run() prints nothing. */
	void (*say)(void *ctx, const char *line);
};

/* What spread_run() returns. */
enum spread_result {
	SPREAD_FAILED = -1, /* out of memory, a thread not started, or MPI failed (said) */
	SPREAD_ROOT = 0,    /* result holds every file: report it */
	SPREAD_OTHER = 1    /* another rank of the job holds it: report nothing */
};

/*
 * Run ops over files[0..n) on jobs threads (0: the online CPUs) and, under a
 * launcher, over the ranks of the job; merge into result, an empty partial made by
 * ops->init (always: destroy it whatever the return). Returns an enum spread_result.
 */
int spread_run(const struct spread_ops *ops, void *ctx, const char *const *files, size_t n,
	       unsigned jobs, void *result);

/*
 * After a spread_run(), for a command that reads its files a second time with what
 * the first reading found (report: a collective's last entry, the job's span): under
 * MPI, every rank of the job calls it, rank 0 with its bytes in b, and every rank
 * gets them in b (the others' b emptied first). Otherwise it does nothing. 0, or -1
 * (MPI failed, out of memory; b empty).
 */
int spread_share(struct buf *b);

/* Is this process one of several ranks that spread_run() spread over (so that every
 * one of them must call spread_share())? */
bool spread_is_rank(void);

/* The online CPUs (at least 1). */
unsigned spread_cpus(void);

/* The MPI plugin's interface (tools/mpi/spread_mpi.c), resolved by dlsym. */
#define SPREAD_MPI_PLUGIN "libringtrace-tools-mpi.so"
/* int f(int *rank, int *size): MPI_Init (once) and the world. 0 or -1. */
#define SPREAD_MPI_OPEN "rtr_tools_mpi_open"
/* int f(const void *bytes, size_t len, void **all, size_t *lens): gather every rank's
 * bytes on rank 0: all (malloc'ed, free() it) their concatenation in rank order, lens
 * (size entries, the caller's) each one's length; NULL elsewhere. 0 or -1. */
#define SPREAD_MPI_GATHER "rtr_tools_mpi_gather"
/* int f(void **bytes, size_t *len): rank 0's bytes to every rank: *bytes (the others'
 * malloc'ed, free() it; NULL when empty) and *len. 0 or -1. */
#define SPREAD_MPI_SHARE "rtr_tools_mpi_share"
/* void f(void): MPI_Finalize. */
#define SPREAD_MPI_CLOSE "rtr_tools_mpi_close"

#endif /* RTR_TOOLS_SPREAD_H */
