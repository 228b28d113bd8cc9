/* SPDX-License-Identifier: MIT */
/*
 * The MPI module: MPI calls as slices, messages as flows, clock measurements.
 *
 * Each wrapper MPI_X records a slice "MPI_X" in category "mpi" around PMPI_X
 * (rtr_begin_args()/rtr_end(), so the slice is there while the call blocks) with its
 * arguments: peer (a world rank; MPI_ANY_SOURCE -1, MPI_PROC_NULL -2 as Open MPI numbers
 * them), tag, bytes (count times the type's size), comm_size, root, count (requests).
 * A test or probe call that completes nothing is a poll instead: one record, which
 * the writer folds with the thread's polls around it (rtr__mpi_poll_start() below).
 *
 * Flows. A point-to-point message is a flow "message" from the send's slice
 * (rtr_flow_start()) to the slice where the receive completes (rtr_flow_end(): the
 * Recv, or the Wait/Test that completes an Irecv). Both ends compute the same id,
 * with no exchange, from
 *	(communicator id, world source, world destination, tag, sequence number)
 * where the sequence number counts the messages of that (comm, source, destination,
 * tag) in order. MPI's non-overtaking rule makes the n-th such send match the n-th
 * such receive, so the sender numbers its sends when it posts them (Send, Isend...),
 * and the receiver numbers its receives in the order MPI matches them, which is the
 * order they were posted in among those that take a message of that (comm, source,
 * tag) (see "Receives" below):
 *	- a receive that names its source and tag: when it is posted (Recv, Irecv),
 *	  unless an earlier wildcard receive still pending could take such a message;
 *	  then as soon as that wildcard's message is known;
 *	- a receive with MPI_ANY_SOURCE or MPI_ANY_TAG: once its message is known, from
 *	  the status of its completion (or of MPI_Request_get_status, when a receive
 *	  posted after it completes first);
 *	- a persistent request: at each MPI_Start/MPI_Startall, as the Isend or Irecv
 *	  it stands for;
 *	- a message found by a matched probe (Mprobe, Improbe): when the probe matches it,
 *	  as a receive posted then; its flow ends at the Mrecv or the Imrecv's completion.
 * Limits: a receive that completes while an earlier wildcard that could have taken
 * its message is still incomplete (a large message under way, or at
 * MPI_THREAD_MULTIPLE, where the wildcard's request is not looked at) is numbered as
 * if the wildcard had another message; when the messages of one (comm, destination,
 * tag) are sent from several threads at once (MPI orders them by the order the calls
 * happen, which may differ from the order this module numbers them in); for
 * cancelled sends; and for intercommunicators, which get slices but no flows.
 *
 * Communicator ids are equal on all ranks of a communicator without communication:
 * MPI_COMM_WORLD is 1; a communicator made by the Comm_dup, Comm_split and
 * Comm_create wrappers gets hash(parent id, how many communicators the parent had made
 * before, color), as the ranks create communicators from a parent in the same order
 * (MPI's rule for collectives); any other (Cart_create, made before MPI_Init returned,
 * ...) gets a hash of its members' world ranks, which two communicators over the same
 * group share (their sequence numbers then count together, and the rule above holds
 * only while their messages interleave alike on both sides).
 *
 * Clock sync: see clocksync.c.
 *
 * The module's rooms, one family each; do not include this header outside src/mpi/.
 *
 *	mpi_internal.h	what they share: the state (struct rtr__mpi_state), the lock,
 *			the hashes, a communicator's info, the slices' arguments
 *	init.c		MPI_Init and MPI_Finalize: the recorder's start and stop, the
 *			rank's name, the state's one instance
 *	comm.c		communicator infos and ids
 *	match.c		the flow ids: sequence numbers, receives numbered in the order
 *			MPI matches them, the pending receives and their completion
 *	p2p.c		the point-to-point wrappers: sends, receives, probes, persistent
 *			requests, matched probes, Request_free
 *	wait.c		Wait and Test, of one request, all, any or some: the receives
 *			they complete
 *	collectives.c	the collectives, and Comm_dup, _split, _create, _free
 *	onesided.c	the one-sided calls and the windows
 *	clocksync.c	the clock measurement against rank 0, rtr_mpi_sync()
 *	manifest.c	the job's manifest, gathered to rank 0 at MPI_Finalize
 *	profile.c	the job profile at MPI_Finalize: the ranks' profiles to rank 0
 *
 * Every file-scope variable of the module is a field of struct rtr__mpi_state, whose
 * one instance is rtr__mpi; each field's comment says who writes it and when.
 */
#ifndef RTR_MPI_INTERNAL_H
#define RTR_MPI_INTERNAL_H

#include <ringtrace.h>

#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

/* The module's MPI_* wrappers are its interface (default visibility, no version
 * script): what the files share is hidden from the program. */
#define RTR_MPI_HIDDEN __attribute__((visibility("hidden")))

#define CAT	   "mpi"
#define FLOW	   "message"
#define BUCKETS	   4096 /* of each hash table: chained, a power of two */
#define TYPE_SLOTS 128	/* of the datatype sizes' table: a power of two */

/* ------------------------------------------------------------------------- */
/* The state                                                                  */

struct pending;
struct persistent;
struct matched;
struct seq_node;

/* A communicator's info: its attribute (see comm.c), and one reference from each
 * receive or persistent request on it that match.c or p2p.c holds. */
struct comm_info {
	uint64_t id;
	uint64_t made;	      /* communicators made from this one so far (under the lock) */
	uint64_t collectives; /* collective calls on it so far: their `seq` (under the lock) */
	int size;	      /* of the (local) group */
	int inter;	      /* an intercommunicator: no flows */
	int *world;	      /* rank in the communicator -> world rank; NULL for the world */
	unsigned refs;	      /* the attribute, and each pending receive (under the lock) */
	struct pending *unnumbered; /* receives waiting for their number (under the lock) */
};

/* A predefined datatype's size, a slot of rtr__mpi.type_sizes. */
struct rtr__mpi_type_size {
	MPI_Datatype dt;
	int size;
	int used;
};

/*
 * The module's state, every one of its file-scope variables.
 *
 * The tables (from seq_table on) and the infos' counts are under `lock` only while
 * MPI may be called from several threads at once: at MPI_THREAD_MULTIPLE, or before
 * the Init wrapper has asked (MPI initialized without it). At the lower levels one
 * thread at a time calls MPI (FUNNELED: the main thread; SERIALIZED: the program
 * orders the calls of its threads), and the wrappers touch the tables only inside MPI
 * calls, so the program's own order is theirs too.
 */
struct rtr__mpi_state {
	/* Taken by rtr__mpi_lock() around the tables and the infos' counts, only while
	 * `multithreaded`. */
	pthread_mutex_t lock;
	/* 1 until after_init() (init.c) sets it from MPI_Query_thread(), before any
	 * other thread may call MPI; then read-only: plain. */
	int multithreaded;

	/* MPI_COMM_WORLD's info. size: after_init(), then read-only; made, refs and
	 * unnumbered: comm.c and match.c, under the lock. */
	struct comm_info world_info;
	/* The infos' attribute key: after_init() creates it, the Finalize wrapper sets it
	 * back to MPI_KEYVAL_INVALID; read by comm.c. */
	int keyval;
	/* A private duplicate of the world for the clock measurement, so that the
	 * program's messages never match its own: after_init() makes it, the Finalize
	 * wrapper frees it. */
	MPI_Comm sync_comm;
	/* after_init(), then read-only; -1 and 0 before. */
	int world_rank, world_size;
	/* Between the Init and Finalize wrappers: set by after_init(), cleared by the
	 * Finalize wrapper; read by rtr_mpi_sync(). */
	int initialized;
	/* The Init wrapper started the recorder (before_init()): Finalize stops it. */
	int started_here;
	/* before_init(): the recorder's process name, "rank N", when it has none. */
	char process_name[32];
	/* before_init(): the rank the launcher gives, -1 without one. */
	long env_rank;
	/* RINGTRACE_MPI_POLLS=all: every test and probe call is a slice (else those that
	 * complete nothing are polls, folded by the writer). before_init(), then
	 * read-only: plain. */
	int polls_all;

	/*
	 * The sizes of the predefined C datatypes, asked once by after_init(): open
	 * addressing on the handle's bits, at most a third full. Any other type is asked
	 * of MPI at each call (a derived type's handle, once freed, can come back as
	 * another type). Written before any other thread may call MPI, then read-only:
	 * plain.
	 */
	struct rtr__mpi_type_size type_sizes[TYPE_SLOTS];

	/* match.c's sequence numbers, under the lock. Nodes are never freed. */
	struct seq_node *seq_table[BUCKETS];
	struct seq_node *seq_last[2]; /* of the last send [0] and receive [1] numbered */

	/* match.c's pending receives, under the lock. Entries are reused, never freed: as
	 * many as receives were ever pending at once. */
	struct pending *pending_table[BUCKETS];
	struct pending *pending_spare; /* unused entries, linked by next */
	/* Entries in pending_table: stored under the lock, read without it by
	 * rtr__mpi_complete_take() and wait.c. */
	unsigned long pending_count;

	/* p2p.c's persistent requests, under the lock, like the pending table. */
	struct persistent *persistent_table[BUCKETS];
	/* Entries: stored under the lock, read without it (a request is the program's). */
	unsigned long persistent_count;

	/* p2p.c's matched probes, under the lock; few: probed, not yet received. */
	struct matched *matched_list;
};

/* The one instance, in init.c. */
RTR_MPI_HIDDEN extern struct rtr__mpi_state rtr__mpi;

static inline void rtr__mpi_lock(void)
{
	if (rtr__mpi.multithreaded)
		pthread_mutex_lock(&rtr__mpi.lock);
}

static inline void rtr__mpi_unlock(void)
{
	if (rtr__mpi.multithreaded)
		pthread_mutex_unlock(&rtr__mpi.lock);
}

static inline uint64_t rtr__mpi_mix(uint64_t x)
{
	/* splitmix64's finalizer */
	x ^= x >> 30;
	x *= UINT64_C(0xbf58476d1ce4e5b9);
	x ^= x >> 27;
	x *= UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

/* h and v into one hash, order-sensitive (unlike h ^ v: no two inputs cancel). */
static inline uint64_t rtr__mpi_combine(uint64_t h, uint64_t v)
{
	return rtr__mpi_mix(h * UINT64_C(0x9e3779b97f4a7c15) + v + UINT64_C(0x632be59bd9b4e019));
}

/* The bits of an MPI handle (a pointer in Open MPI, an int in MPICH) as a hash key. */
static inline uint64_t rtr__mpi_handle_bits(const void *h, size_t size)
{
	uint64_t k = 0;

	memcpy(&k, h, size < sizeof(k) ? size : sizeof(k));
	return rtr__mpi_mix(k);
}

/* ------------------------------------------------------------------------- */
/* Communicators (comm.c)                                                     */

/* rtr__mpi_info_of() of any communicator but the world. */
RTR_MPI_HIDDEN struct comm_info *rtr__mpi_info_lookup(MPI_Comm comm);
/* After a wrapper made newcomm from parent: give it its id (comm.c). */
RTR_MPI_HIDDEN void rtr__mpi_comm_made(MPI_Comm parent, int color, MPI_Comm newcomm);
/* Drop one reference to c; the last frees it (never the world's). */
RTR_MPI_HIDDEN void rtr__mpi_info_unref(struct comm_info *c);
/* The attribute's delete callback: drops the attribute's reference. */
RTR_MPI_HIDDEN int rtr__mpi_info_delete(MPI_Comm comm, int key, void *value, void *extra);

static inline int rtr__mpi_to_world(const struct comm_info *c, int rank)
{
	if (rank < 0 || c == NULL)
		return rank; /* MPI_ANY_SOURCE, MPI_PROC_NULL */
	if (c->world == NULL)
		return rank;
	return rank < c->size ? c->world[rank] : -1;
}

/* ------------------------------------------------------------------------- */
/* Flow ids and receives (match.c)                                            */

/* A send's flow start, in the slice its wrapper began. */
RTR_MPI_HIDDEN void rtr__mpi_send_flow(const struct comm_info *c, int dest, int tag);
/* A receive posted now that completed with a message of (source, tag): its flow id. */
RTR_MPI_HIDDEN uint64_t rtr__mpi_recv_number_now(struct comm_info *c, int source, int tag);
/* A blocking receive completed with st: its flow ends here. */
RTR_MPI_HIDDEN void rtr__mpi_recv_done(struct comm_info *c, const MPI_Status *st);
/* A receive's request is pending (Irecv, a persistent receive's start, Imrecv). */
RTR_MPI_HIDDEN void rtr__mpi_pending_add(MPI_Request req, struct comm_info *c, int source, int tag);
RTR_MPI_HIDDEN void rtr__mpi_pending_add_id(MPI_Request req, uint64_t id);
/* A pending receive's entry out of the table, and done with (Request_free). */
RTR_MPI_HIDDEN struct pending *rtr__mpi_pending_take(MPI_Request req);
RTR_MPI_HIDDEN void rtr__mpi_pending_release(struct pending *p);
/* The nonblocking collectives one Wait or Test completed, said on its slice as the
 * argument "collectives" (rtr__mpi_done_say(), before its end): a space between
 * entries "NAME@COMM:SEQ" or, with a root, "NAME@COMM:SEQ:ROOT_WORLD" (the starting
 * call's name and the comm, seq and root_world args of its slice); what does not fit
 * is counted in "collectives_left_out". */
struct rtr__mpi_done {
	char text[512];
	size_t len;
	int64_t left_out;
};
RTR_MPI_HIDDEN void rtr__mpi_done_say(const struct rtr__mpi_done *d);
/* Empty (the text is not cleared: a wrapper's stack, every Wait and Test). */
static inline void rtr__mpi_done_init(struct rtr__mpi_done *d)
{
	d->len = 0;
	d->left_out = 0;
}
/* A nonblocking collective's call (collectives.c): what rtr__mpi_coll_begin() gave
 * its slice. */
struct rtr__mpi_coll_call {
	const char *name;
	uint64_t comm, seq;
	int64_t root_world;
	int recorded; /* its slice is recorded: the completion is said too */
};
/* A nonblocking collective's request is pending until a Wait or Test completes it. */
RTR_MPI_HIDDEN void rtr__mpi_pending_add_coll(MPI_Request req,
					      const struct rtr__mpi_coll_call *call);
/* Completions (wait.c): of one request, or of several in two passes, each request
 * taken first and the entries still unnumbered finished after; the nonblocking
 * collectives completed go to done. */
RTR_MPI_HIDDEN struct pending *rtr__mpi_complete_take(MPI_Request req, const MPI_Status *st,
						      struct rtr__mpi_done *done);
RTR_MPI_HIDDEN void rtr__mpi_complete_finish(struct pending *p);
RTR_MPI_HIDDEN void rtr__mpi_complete(MPI_Request req, const MPI_Status *st,
				      struct rtr__mpi_done *done);

/* ------------------------------------------------------------------------- */
/* Slices                                                                     */

static inline unsigned rtr__mpi_type_hash(MPI_Datatype dt)
{
	uint64_t k = 0;

	memcpy(&k, &dt, sizeof(dt) < sizeof(k) ? sizeof(dt) : sizeof(k));
	return (unsigned)((k * UINT64_C(0x9e3779b97f4a7c15)) >> 57); /* Fibonacci: 7 bits */
}

/* The slot of dt, or the empty one where it would go. */
static inline unsigned rtr__mpi_type_slot(MPI_Datatype dt)
{
	unsigned i = rtr__mpi_type_hash(dt);

	while (rtr__mpi.type_sizes[i].used && rtr__mpi.type_sizes[i].dt != dt)
		i = (i + 1) & (TYPE_SLOTS - 1);
	return i;
}

/* RTR_ARG_I64() with only the fields an integer argument has: the compound literal
 * also zeroes the rest of the union (a rep stos on each wrapper's three). */
static inline struct rtr_arg rtr__mpi_arg_i64(const char *key, int64_t value)
{
	struct rtr_arg a;

	a.key = key;
	a.type = RTR_ARG_TYPE_I64;
	a.v.i64 = value;
	return a;
}

static inline int64_t rtr__mpi_bytes_of(int count, MPI_Datatype dt)
{
	unsigned slot = rtr__mpi_type_slot(dt);
	int size = rtr__mpi.type_sizes[slot].size;

	if (!rtr__mpi.type_sizes[slot].used &&
	    (dt == MPI_DATATYPE_NULL || PMPI_Type_size(dt, &size) != MPI_SUCCESS))
		return 0;
	return (int64_t)count * size;
}

static inline void rtr__mpi_count_begin(const char *name, int count)
{
	const struct rtr_arg args[] = {rtr__mpi_arg_i64("count", count)};

	rtr_begin_args(CAT, name, args, 1);
}

static inline void rtr__mpi_count_begin_at(const char *name, int count, uint64_t ticks)
{
	const struct rtr_arg args[] = {rtr__mpi_arg_i64("count", count)};

	rtr__begin_args_at(CAT, name, ticks, args, 1);
}

/*
 * Test and probe calls (wait.c, p2p.c). One that completes nothing is a poll: one
 * record (rtr__poll_args(), with its count of requests; a probe's has none), which the
 * writer folds with the thread's polls next to it into one slice. One that completes
 * something is a slice as any call's, begun at the time the call began, once the call
 * has told (rtr__begin_args_at()). Before the call, rtr__mpi_poll_start(): that time,
 * or 0 when the call is a slice from its start as any other's (the caller begins it):
 * RINGTRACE_MPI_POLLS=all, or the category is not recorded.
 */
static inline uint64_t rtr__mpi_poll_start(void)
{
	if (RTR__LIKELY(!rtr__mpi.polls_all) && rtr_category_enabled(CAT))
		return rtr__ticks();
	return 0;
}

/* A call that completed nothing, begun at t0 (not 0): count its requests, -1 none. */
static inline void rtr__mpi_poll(const char *name, uint64_t t0, int count)
{
	const struct rtr_arg args[] = {rtr__mpi_arg_i64("count", count)};

	rtr__poll_args(CAT, name, t0, rtr__ticks() - t0, args, count >= 0 ? 1 : 0);
}

/* After a test call of `count` requests begun at t0 (rtr__mpi_poll_start()): 1 when
 * it completed nothing (`done` 0) and is recorded as a poll, nothing more to record;
 * else 0, its slice begun, to be ended by the caller after what it completed. */
static inline int rtr__mpi_polled(const char *name, int count, uint64_t t0, int done)
{
	if (t0 == 0)
		return 0;
	if (!done) {
		rtr__mpi_poll(name, t0, count);
		return 1;
	}
	rtr__mpi_count_begin_at(name, count, t0);
	return 0;
}

/* A collective slice (collectives.c); what its args say. */
RTR_MPI_HIDDEN struct rtr__mpi_coll_call rtr__mpi_coll_begin(const char *name, MPI_Comm comm,
							     int64_t bytes, int root);

/* Calls that are a slice and nothing more (p2p.c, onesided.c). */
#define PLAIN(fn, params, ...)                   \
	int MPI_##fn params                      \
	{                                        \
		rtr_begin(CAT, "MPI_" #fn);      \
		int rc = PMPI_##fn(__VA_ARGS__); \
		rtr_end(CAT, "MPI_" #fn);        \
		return rc;                       \
	}

/* A collective's wrapper (collectives.c, and onesided.c's window creation): the
 * slice name, the parameter list, the bytes, the root (-1: none), the communicator, and
 * the arguments passed on. */
#define COLL(fn, params, bytes, root, comm, ...)                    \
	int MPI_##fn params                                         \
	{                                                           \
		rtr__mpi_coll_begin("MPI_" #fn, comm, bytes, root); \
		int rc = PMPI_##fn(__VA_ARGS__);                    \
		rtr_end(CAT, "MPI_" #fn);                           \
		return rc;                                          \
	}

/* A nonblocking collective's wrapper: as COLL(), and its request (req) pending. */
#define COLL_NB(fn, params, bytes, root, comm, req, ...)                    \
	int MPI_##fn params                                                 \
	{                                                                   \
		struct rtr__mpi_coll_call call =                            \
			rtr__mpi_coll_begin("MPI_" #fn, comm, bytes, root); \
		int rc = PMPI_##fn(__VA_ARGS__);                            \
		if (rc == MPI_SUCCESS && call.recorded)                     \
			rtr__mpi_pending_add_coll(*(req), &call);           \
		rtr_end(CAT, "MPI_" #fn);                                   \
		return rc;                                                  \
	}

/* ------------------------------------------------------------------------- */
/* Clock sync (clocksync.c)                                                   */

RTR_MPI_HIDDEN int rtr__mpi_clock_sync(void);
/* profile.c: the job profile at MPI_Finalize and rtr_mpi_sync(). Agree: the ranks find
 * whether all keep a profile (1; 0: none is made); gather: this rank's profile is
 * exported (final: frozen when the module started the session, at MPI_Finalize) and
 * gathered to rank 0, which writes the job profile. Both collective on sync_comm. */
struct rtr__mpi_job {
	int on;
	char path[4096];
	char *data;
	size_t len, cap;
	uint64_t began;
};
RTR_MPI_HIDDEN int rtr__mpi_job_agree(struct rtr__mpi_job *job);
RTR_MPI_HIDDEN void rtr__mpi_job_gather(struct rtr__mpi_job *job, int final);

/* manifest.c: every rank's files listed by rank 0 (collective over the world, on
 * sync_comm; from the Finalize wrapper). */
RTR_MPI_HIDDEN void rtr__mpi_manifest(void);

#endif
