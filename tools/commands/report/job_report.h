/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace report` (docs/commands/ringtrace-report.md): where a job's time went,
 * rank by rank, and which ranks waited for which, from the rank files of an MPI job.
 *
 * Two readings of the files, each spread over threads and MPI ranks by spread.h:
 *	pass.c, nest.c	one file, streamed: its partial (struct rank_part): the rank's
 *			span and MPI time on the reference clock, the MPI share over
 *			time, inclusive time per call path, and what crosses files: the
 *			message endpoints and the collective entries;
 *	acc.c, acc_pend.c	the first reading: the job so far (struct job_acc),
 *			files added and merged in file order: a message is paired as
 *			soon as both of its ends are in; of each collective instance
 *			only its last entry is kept (acc_pack.c: as bytes, for the MPI
 *			step);
 *	acc_replay.c	the second reading, with what the first found (struct
 *			replay: the job's span, each instance's last entry, shared with
 *			every rank): each collective entry's wait, and each file's MPI
 *			share on the heat map's bins, so that no file's entries or bins
 *			are held until the last file is in (as Scalasca replays a trace);
 *	finish.c	the job (struct job): ranks and call paths sorted, imbalance,
 *			the late-sender groups still open resolved;
 *	report_text.c, report_json.c, report_html.c	the three outputs;
 *	report.c	the command, its inputs, the two spread_run()s.
 *
 * Memory: per rank its row (spans, its call paths' times, its heat row), per call
 * path its name, per (kind, path, rank, cause) a wait, per collective instance 16
 * bytes, the message endpoints whose partner is in a later file, and what the files
 * read at once hold: nothing grows with ranks times the job's length.
 *
 * Every sum is of integer nanoseconds, and partials are merged in file order, so the
 * answer is the same whatever the number of threads and of MPI ranks.
 *
 * Thread safety: a partial and an accumulator are built by one thread; merges and
 * the finish run on one thread at a time (spread.h).
 */
#ifndef RTR_TOOLS_JOB_REPORT_H
#define RTR_TOOLS_JOB_REPORT_H

#include "table.h"

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
	uint32_t part;	     /* the call's nest node while the file is read; then unused */
};

/* The collectives a report finds waits at (docs/commands/ringtrace-report.md). */
enum coll_kind {
	COLL_NONE,
	COLL_N_TO_N,   /* Allreduce, Allgather(v), Alltoall(v,w), Reduce_scatter(_block) */
	COLL_BARRIER,  /* Barrier */
	COLL_ONE_TO_N, /* Bcast, Scatter(v): the others wait for a late root */
	COLL_N_TO_ONE  /* Reduce, Gather(v): an early root waits for the others */
};

/* What kind of collective a call (by its name) is; a nonblocking one (MPI_Iallreduce)
 * is its blocking form's kind, with *started set. */
int coll_kind(const char *name, bool *started);

/* An entry's flags. */
enum coll_flags {
	COLL_START = 1, /* a nonblocking call that starts one: an entry, never a wait */
	COLL_DONE = 2,	/* the Wait or Test that completed one: a wait, never an entry */
	COLL_MORE = 4	/* a COLL_DONE after the first of its call (which waits once) */
};

/* One rank's entry into a collective of a kind above, or its completion: 40 bytes. */
struct coll_entry {
	uint64_t comm;	    /* the communicator's id ("comm") */
	int64_t start, end; /* the call's slice, on the reference clock */
	uint32_t seq;	    /* the n-th collective on comm ("seq") */
	uint32_t path;	    /* the call's path id */
	int32_t root;	    /* the root's world rank ("root_world"; -1: none) */
	uint16_t kind;	    /* enum coll_kind */
	uint16_t flags;	    /* enum coll_flags */
};

_Static_assert(sizeof(struct msg_end) == 32, "a message endpoint is 32 bytes");
_Static_assert(sizeof(struct coll_entry) == 40, "a collective entry is 40 bytes");

/* The kinds of wait. */
enum wait_kind {
	WAIT_LATE_SENDER,
	WAIT_LATE_RECEIVER,
	WAIT_COLLECTIVE,
	WAIT_BARRIER,
	WAIT_LATE_BROADCAST,
	WAIT_EARLY_REDUCE,
	WAIT_KINDS
};

extern const char *const wait_kind_names[WAIT_KINDS];

/* What a file is. */
enum part_kind { PART_TRACE, PART_PROFILE, PART_JOB_PROFILE };

/* A job profile's "r" of a call path: its inclusive time across the ranks. */
struct prof_path {
	uint64_t min, max;
	int64_t max_rank;
	uint64_t with; /* the ranks that ran it */
};

/* A job profile's rank: its span (end_ns - start_ns). */
struct prof_rank {
	int64_t rank, span;
};

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

	int profile;	      /* enum part_kind */
	struct prof_path *jp; /* a job profile's: per path (npaths) */
	struct prof_rank *jr; /* a job profile's ranks */
	size_t njr;

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

/* A profile's kept keys (profile.h's struct profile_doc json) into part, its path
 * set: 0; -1 malformed (part->error set, part->failed); -2 out of memory. */
struct buf;
int pass_profile(struct rank_part *part, const struct buf *json);

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
	size_t nfiles;
	struct job_rank *ranks;
	size_t nranks;
	struct job_path *paths;
	size_t npaths;
	struct job_wait *waits;
	size_t nwaits;
	int64_t first, last; /* the job's span on the reference clock */
	uint64_t wait_total[WAIT_KINDS], wait_count[WAIT_KINDS];
	uint64_t messages, unmatched_ends, instances;
	uint64_t flows_outside_calls, approx;
	size_t measured;
	int source;		  /* enum job_source */
	size_t profiles_left_out; /* profiles read but not used */
};

/* What the report is made of. */
enum job_source { FROM_TRACES, FROM_PROFILES, FROM_JOB_PROFILE };

void job_free(struct job *j);

/* ------------------------------------------------ the job so far (acc*.c) */

/* A message endpoint whose partner is not merged yet: 48 bytes. */
struct pend_end {
	int64_t start, end; /* the call's slice, on the reference clock */
	int64_t rank;
	uint32_t path;	/* the accumulator's path id */
	uint32_t flags; /* enum msg_flags */
	uint32_t file;	/* the file's index and */
	uint32_t group; /* its receiving call's number in the file (see late_group);
			   NO_GROUP: a call of one endpoint, or a send */
	uint32_t pos;	/* its place among its call's endpoints */
	uint32_t pad;
};
#define NO_GROUP UINT32_MAX

/* One flow id's pending endpoints, all of one side, in file order. */
struct pend_q {
	uint32_t n, cap;
	struct pend_end one; /* the only one while cap == 0 */
	struct pend_end *v;  /* cap > 0: all n */
};

/* A receiving call that completes several messages (a Waitall): it waits once, for
 * the latest of its senders, known when all its endpoints are paired (or at the end). */
struct late_group {
	uint32_t left; /* endpoints not paired yet */
	uint32_t best_pos;
	bool has_best; /* one is paired: best_* are its latest sender's */
	uint64_t best_late;
	int64_t rank, cause;
	uint32_t path;
};

/* A collective instance's entry that its members wait for, so far: of an N-to-N
 * collective or a barrier the latest entry, of a 1-to-N one the root's, of an N-to-1
 * one the latest of the others' (the lowest rank on a tie); rank NO_ENTRY while none
 * is in (a rooted instance whose root's file, or whose others' files, are not read). */
struct coll_last {
	int64_t start, rank;
};
#define NO_ENTRY INT64_MIN

/* Does a rank's entry count for its instance's coll_last? Does it wait for it? */
bool coll_counts(const struct coll_entry *c, int64_t rank);
bool coll_waits(const struct coll_entry *c, int64_t rank);

/* One call path's inclusive time on a rank (its files summed). */
struct path_time {
	uint32_t path;
	uint64_t incl, calls;
};

struct rank_acc {
	bool has_time;
	int64_t first, last;
	uint64_t mpi_ns;
	struct path_time *pt; /* its paths, by id, each once (its files summed) */
	size_t npt, cap;
	uint64_t heat[HEAT_BINS]; /* the second reading's: MPI ns per bin of the job span */
};

struct wait_key {
	int64_t kind;
	int64_t path;
	int64_t rank, cause;
};

struct job_acc {
	size_t files, ok, measured;
	uint64_t stray, approx, messages;
	uint64_t replayed;  /* the second reading's traces read */
	struct table paths; /* name with its NUL -> uint32_t id, in order of appearance */
	const char **names; /* id -> name (the table's key) */
	size_t nnames, names_cap;
	struct table ranks;   /* int64_t rank -> struct rank_acc */
	struct table waits;   /* struct wait_key -> struct job_wait (path: an id here) */
	struct table pending; /* uint64_t flow id -> struct pend_q */
	struct table groups;  /* uint32_t file, group -> struct late_group */
	struct table insts;   /* uint64_t comm, seq -> struct coll_last */
	/* the profiles, apart until the finish knows whether any trace was read: the
	 * process profiles' job so far, the job profiles' (NULL until one comes) */
	struct job_acc *side[2];
	struct job_path_r *jp; /* a job profile's paths (in side[1]: the first one's) */
	size_t njp, jp_cap;
};

/* A job profile's call path. */
struct job_path_r {
	uint32_t path;
	uint64_t calls, sum;
	struct prof_path r;
};

/* An empty accumulator. 0, or -1 out of memory. */
int acc_init(struct job_acc *a);
void acc_destroy(struct job_acc *a);
/* The files read, traces and profiles. */
size_t acc_readable(const struct job_acc *a);
/* Add one file's partial (the files come in order). 0, or -1 out of memory. */
int acc_add_part(struct job_acc *a, const struct rank_part *part);
/* Merge from, whose files all come after into's. 0, or -1 out of memory. */
int acc_merge(struct job_acc *into, const struct job_acc *from);
/* As bytes (native order, for the MPI step), and back into an empty accumulator:
 * 0, -1 out of memory, -2 malformed (every length and reference is checked). */
struct buf;
int acc_pack(const struct job_acc *a, struct buf *out);
int acc_unpack(struct job_acc *a, const void *bytes, size_t len);
/* The job from everything merged, both readings: the late-sender groups still open
 * are resolved, pairs never made are unmatched ends. a is spent. 0, or -1 out of
 * memory. */
int acc_finish(struct job_acc *a, struct job *j);

/* What acc.c shares with acc_pend.c and acc_pack.c. */
uint32_t acc_path_id(struct job_acc *a, const char *name);
struct rank_acc *acc_rank(struct job_acc *a, int64_t rank, bool *created);
int acc_add_wait(struct job_acc *a, int kind, uint32_t path, int64_t rank, int64_t cause,
		 uint64_t ns, uint64_t count);
/* An endpoint offered in file order: paired with the oldest of the other side, or
 * held. 0 or -1. */
int acc_offer_end(struct job_acc *a, uint64_t id, const struct pend_end *e);
/* A collective entry: kept as its instance's last entry when it is the latest so
 * far (rank NO_ENTRY: the instance only made). 0 or -1. */
int acc_offer_entry(struct job_acc *a, uint64_t comm, uint64_t seq, const struct coll_last *e);
/* Resolve what still waits (acc_finish's first step). 0 or -1. */
int acc_resolve_rest(struct job_acc *a);
/* A late_group, added (zeroed) when absent. */
struct late_group *acc_group(struct job_acc *a, uint32_t file, uint32_t group, bool *created);
/* ------------------------------------------- the second reading (acc_replay.c) */

/* What the first reading found that the second needs. */
struct replay {
	int64_t first, last; /* the job's span (first == last: no heat map) */
	struct table lasts;  /* uint64_t comm, seq -> struct coll_last */
};

/* Does the first reading's job (merged) need a second reading? */
bool acc_needs_replay(const struct job_acc *a);
/* The first reading's replay as bytes (for spread_share()), and back into r (made
 * here: replay_free() it whatever the return). 0, -1 out of memory, -2 malformed. */
int replay_pack(const struct job_acc *a, struct buf *out);
/* The instances' last entries as bytes: their count, then each (comm, seq, start,
 * rank), 8 bytes each in native order (acc_pack.c's and replay_pack()'s). 0 or -1. */
int insts_pack(const struct job_acc *a, struct buf *out);
int replay_unpack(struct replay *r, const void *bytes, size_t len);
void replay_free(struct replay *r);
/* A file's partial, read again (or kept by replay_trim()), into the accumulator a of
 * the second reading: its collective entries' waits, its MPI share on its rank's heat
 * row. 0 or -1 out of memory. */
int acc_add_replay(struct job_acc *a, const struct rank_part *p, const struct replay *r);
/* Trim a trace's partial, added in the first reading, to what acc_add_replay() takes
 * (its rank, fine bins, collective entries and their paths), so that the second
 * reading may take it instead of the file while it fits in the bytes set aside for
 * that. The bytes it then holds. */
size_t replay_trim(struct rank_part *p);

/* Wait by min(late, dur), 0 when either is not positive. */
uint64_t capped_wait(int64_t late, int64_t dur);

/* The rank index of a part's rank (ranks sorted). */
size_t job_rank_index(const struct job *j, int64_t rank);

struct report_options {
	unsigned top;
	bool json;
	const char *html;
	size_t hold; /* bytes of the first reading kept for the second (--hold) */
};

/* What the outputs share (text.c). */
/* The one line that says what a report of profiles lacks. */
const char *job_source_line(const struct job *j);
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
