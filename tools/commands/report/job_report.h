/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace report` (docs/commands/ringtrace-report.md): where a job's time went,
 * rank by rank, and which ranks waited for which, from the rank files of an MPI job.
 *
 * Three steps, so that the work can be spread over threads (and later MPI ranks):
 *	pass.c, nest.c	one file, streamed: its partial (struct rank_part): the rank's
 *			span and MPI time on the reference clock, the MPI share over
 *			time, inclusive time per call path, and what crosses files: the
 *			message endpoints and the collective entries (32 bytes each);
 *	merge.c		the partials in file order: the ranks, the call paths of the
 *			job and their imbalance;
 *	analyze.c	the wait states (messages matched by flow id, collectives by
 *			communicator and sequence number) and the heat map;
 *	report_text.c, report_json.c, report_html.c	the three outputs;
 *	report.c	the command, its inputs and its threads.
 *
 * Every sum is of integer nanoseconds, and partials are merged in file order, so the
 * answer is the same whatever the number of threads.
 *
 * Thread safety: a partial is built by one thread; the merge and the analysis run on
 * one thread after every pass has finished.
 */
#ifndef RTR_TOOLS_JOB_REPORT_H
#define RTR_TOOLS_JOB_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The fine bins of a file's MPI share over time, folded in pairs as the file grows. */
#define PART_BINS 1024
/* The bins of the job's span in the heat map. */
#define HEAT_BINS 100

/* What one MPI call's flow end holds (a message endpoint): 32 bytes. */
enum msg_flags {
	MSG_RECV = 1,	    /* the flow's end ("f"): the receive side; else the send */
	MSG_BLOCKING = 2,   /* Recv, Wait/Test, Mrecv, Sendrecv: a receive that blocks;
			       Send, Ssend, Sendrecv: a send that blocks */
	MSG_SAME_CALL = 4,  /* the same call as the endpoint before it in the file */
	MSG_FLAGS_SHIFT = 3 /* path << MSG_FLAGS_SHIFT | flags */
};

struct msg_end {
	uint64_t id;	     /* the flow id */
	int64_t start, end;  /* the call's slice, on the reference clock */
	uint32_t path_flags; /* path id << MSG_FLAGS_SHIFT | enum msg_flags */
	uint32_t part;	     /* the file's index (set by the merge) */
};

/* One rank's entry into an N-to-N collective or a barrier: 32 bytes. */
struct coll_entry {
	uint64_t comm;	    /* the communicator's id ("comm") */
	int64_t start, end; /* the call's slice, on the reference clock */
	uint32_t seq;	    /* the n-th collective on comm ("seq") */
	uint32_t path;	    /* the call's path id; the part's index after the merge */
};

_Static_assert(sizeof(struct msg_end) == 32, "a message endpoint is 32 bytes");
_Static_assert(sizeof(struct coll_entry) == 32, "a collective entry is 32 bytes");

/* The kinds of wait. */
enum wait_kind { WAIT_LATE_SENDER, WAIT_LATE_RECEIVER, WAIT_COLLECTIVE, WAIT_BARRIER, WAIT_KINDS };

extern const char *const wait_kind_names[WAIT_KINDS];

/* A file's partial: everything the merge needs of it. */
struct rank_part {
	size_t index;
	const char *path;
	bool has_rank;
	int64_t rank;	     /* the start marker's, else the file's index */
	bool measured;	     /* mapped by clock sync measurements (else by its origin) */
	bool has_time;	     /* it has events with a time */
	int64_t first, last; /* its span on the reference clock */
	uint64_t mpi_ns;     /* inside its outermost mpi slices, its threads summed */
	uint64_t events, slices, unmatched_flows, approx;

	int64_t bin_origin, bin_width; /* fine bins: MPI ns in [origin + i * width, ...) */
	uint64_t bins[PART_BINS];

	char **paths;	 /* call paths, "a;b;MPI_Recv", sorted */
	uint64_t *incl;	 /* inclusive ns per path */
	uint64_t *calls; /* slices per path */
	size_t npaths;

	struct msg_end *msgs;
	size_t nmsgs;
	struct coll_entry *colls;
	size_t ncolls;

	char error[512]; /* why the file could not be read; empty when fine */
	bool failed;
};

struct pass_options {
	uint64_t max_event_bytes;
};

/* Read the file at part->path (part->index set) into part. 0; -1 with part->error set
 * (the file cannot be read at all); -2 out of memory. */
int pass_file(struct rank_part *part, const struct pass_options *o);

void part_free(struct rank_part *part);

/* One rank of the job: its files' partials summed. */
struct job_rank {
	int64_t rank;
	int64_t first, last;
	uint64_t mpi_ns;
	uint64_t waited[WAIT_KINDS], caused[WAIT_KINDS];
	uint64_t heat[HEAT_BINS]; /* MPI ns per bin of the job span */
};

/* A call path of the job. */
struct job_path {
	char *name;
	uint64_t calls, sum, min, max; /* inclusive ns across ranks (min: 0 when a rank lacks it) */
	int64_t max_rank;
	uint64_t ranks; /* ranks that have it */
	uint64_t waits[WAIT_KINDS], wait_count[WAIT_KINDS];
};

/* One (kind, path, waiting rank, causing rank) of the waits. */
struct job_wait {
	int kind;
	uint32_t path;
	int64_t rank, cause;
	uint64_t ns, count;
};

struct job {
	struct rank_part *parts;
	size_t nparts;
	struct job_rank *ranks;
	size_t nranks;
	struct job_path *paths;
	size_t npaths;
	struct job_wait *waits;
	size_t nwaits;
	int64_t first, last; /* the job's span on the reference clock */
	uint64_t wait_total[WAIT_KINDS], wait_count[WAIT_KINDS];
	uint64_t messages, unmatched_ends, instances, incomplete_instances;
	size_t measured;
};

/* Merge the partials (in file order) into the job. 0, or -1 out of memory. */
int job_merge(struct job *j);

/* The wait states and the heat map. 0, or -1 out of memory. */
int job_analyze(struct job *j);

void job_free(struct job *j);

/* The rank index of a part's rank (ranks sorted). */
size_t job_rank_index(const struct job *j, int64_t rank);

/* Is this call (by its last name in a path) an N-to-N collective, a barrier? */
bool is_n_to_n(const char *name);
bool is_barrier(const char *name);

struct report_options {
	unsigned top;
	bool json;
	const char *html;
};

/* What the outputs share (text.c). */
uint64_t job_span(const struct job *j);
/* A rank's span, MPI time (at most its span), computation and idle time. */
void job_rank_times(const struct job *j, const struct job_rank *r, uint64_t *span, uint64_t *mpi,
		    uint64_t *compute, uint64_t *idle);
/* A path's max less its mean (the mean over every rank, rounded down). */
uint64_t path_excess(const struct job_path *p, size_t nranks);
/* What a path costs: the waits at it and its excess. */
uint64_t path_cost(const struct job_path *p, size_t nranks);
/* The waits a rank caused, all kinds. */
uint64_t rank_caused(const struct job_rank *r);
/* Indexes of the paths by cost, of the ranks by caused wait + MPI time, the largest
 * first (ties: by name, by rank); malloc'd, NULL out of memory. */
size_t *job_paths_by_cost(const struct job *j);
size_t *job_ranks_by_cost(const struct job *j);

/* The MPI time of a rank in heat bin k, in permille of the bin (threads summed). */
uint64_t heat_permille(const struct job *j, const struct job_rank *r, int k);

struct buf;
/* The --json document into b. 0, or -1 out of memory. */
int job_json(struct buf *b, const struct job *j, const struct report_options *o);

int job_print_text(const struct job *j, const struct report_options *o);
int job_print_json(const struct job *j, const struct report_options *o);
int job_write_html(const struct job *j, const struct report_options *o);

#endif /* RTR_TOOLS_JOB_REPORT_H */
