/* SPDX-License-Identifier: MIT */
/*
 * The MPI module: MPI calls as slices, messages as flows, clock measurements.
 *
 * Each wrapper MPI_X records a slice "MPI_X" in category "mpi" around PMPI_X
 * (rtr_begin_args()/rtr_end(), so the slice is there while the call blocks) with its
 * arguments: peer (a world rank; MPI_ANY_SOURCE -1, MPI_PROC_NULL -2 as Open MPI numbers
 * them), tag, bytes (count times the type's size), comm_size, root, count (requests).
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
 * Clock sync: see clock_sync().
 */
#include <ringtrace.h>
#include <ringtrace/mpi.h>

#include "common/atomic.h"

#include <errno.h>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CAT	      "mpi"
#define FLOW	      "message"
#define SYNC_ROUNDS   50
#define SYNC_TAG      1
#define SYNC_GO_TAG   2
#define SYNC_DONE_TAG 3
#define TYPE_SLOTS    128  /* of the datatype sizes' table: a power of two */
#define BUCKETS	      4096 /* of each hash table: chained, a power of two */

/* ------------------------------------------------------------------------- */
/* Communicators                                                              */

struct pending;
struct persistent;
struct matched;
struct seq_node;

struct comm_info {
	uint64_t id;
	uint64_t made;		    /* communicators made from this one so far (tables_lock) */
	int size;		    /* of the (local) group */
	int inter;		    /* an intercommunicator: no flows */
	int *world;		    /* rank in the communicator -> world rank; NULL for the world */
	unsigned refs;		    /* the attribute, and each pending receive (tables_lock) */
	struct pending *unnumbered; /* receives waiting for their number (tables_lock) */
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
	/* Taken by tables_lock() around the tables and the infos' counts, only while
	 * `multithreaded`. */
	pthread_mutex_t lock;
	/* 1 until after_init() sets it from MPI_Query_thread(), before any
	 * other thread may call MPI; then read-only: plain. */
	int multithreaded;

	/* MPI_COMM_WORLD's info. size: after_init(), then read-only; made, refs and
	 * unnumbered: the wrappers, under the lock. */
	struct comm_info world_info;
	/* The infos' attribute key: after_init() creates it, the Finalize wrapper sets it
	 * back to MPI_KEYVAL_INVALID. */
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

	/*
	 * The sizes of the predefined C datatypes, asked once by after_init(): open
	 * addressing on the handle's bits, at most a third full. Any other type is asked
	 * of MPI at each call (a derived type's handle, once freed, can come back as
	 * another type). Written before any other thread may call MPI, then read-only:
	 * plain.
	 */
	struct rtr__mpi_type_size type_sizes[TYPE_SLOTS];

	/* The sequence numbers, under the lock. Nodes are never freed. */
	struct seq_node *seq_table[BUCKETS];
	struct seq_node *seq_last[2]; /* of the last send [0] and receive [1] numbered */

	/* The pending receives, under the lock. Entries are reused, never freed: as
	 * many as receives were ever pending at once. */
	struct pending *pending_table[BUCKETS];
	struct pending *pending_spare; /* unused entries, linked by next */
	/* Entries in pending_table: stored under the lock, read without it by
	 * complete(). */
	unsigned long pending_count;

	/* The persistent requests, under the lock, like the pending table. */
	struct persistent *persistent_table[BUCKETS];
	/* Entries: stored under the lock, read without it (a request is the program's). */
	unsigned long persistent_count;

	/* The matched probes, under the lock; few: probed, not yet received. */
	struct matched *matched_list;
};

static struct rtr__mpi_state rtr__mpi = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.multithreaded = 1,
	.world_info = {.id = 1, .refs = 1},
	.keyval = MPI_KEYVAL_INVALID,
	.sync_comm = MPI_COMM_NULL,
	.world_rank = -1,
	.env_rank = -1,
};

static void tables_lock(void)
{
	if (rtr__mpi.multithreaded)
		pthread_mutex_lock(&rtr__mpi.lock);
}

static void tables_unlock(void)
{
	if (rtr__mpi.multithreaded)
		pthread_mutex_unlock(&rtr__mpi.lock);
}

static uint64_t mix(uint64_t x)
{
	/* splitmix64's finalizer */
	x ^= x >> 30;
	x *= UINT64_C(0xbf58476d1ce4e5b9);
	x ^= x >> 27;
	x *= UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

/* h and v into one hash, order-sensitive (unlike h ^ v: no two inputs cancel). */
static uint64_t combine(uint64_t h, uint64_t v)
{
	return mix(h * UINT64_C(0x9e3779b97f4a7c15) + v + UINT64_C(0x632be59bd9b4e019));
}

static void info_unref(struct comm_info *c)
{
	int last;

	tables_lock();
	last = --c->refs == 0;
	tables_unlock();
	if (last && c != &rtr__mpi.world_info) {
		free(c->world);
		free(c);
	}
}

static int info_delete(MPI_Comm comm, int key, void *value, void *extra)
{
	(void)comm;
	(void)key;
	(void)extra;
	info_unref(value);
	return MPI_SUCCESS;
}

/* A new info for comm with the given id, attached to it; NULL when MPI fails. */
static struct comm_info *info_attach(MPI_Comm comm, uint64_t id)
{
	struct comm_info *c = calloc(1, sizeof(*c));
	MPI_Group group, world_group;

	if (c == NULL)
		return NULL;
	c->id = id;
	c->refs = 1;
	PMPI_Comm_test_inter(comm, &c->inter);
	PMPI_Comm_size(comm, &c->size);
	c->world = malloc((size_t)c->size * 2 * sizeof(int));
	if (c->world == NULL || PMPI_Comm_group(comm, &group) != MPI_SUCCESS) {
		free(c->world);
		free(c);
		return NULL;
	}
	int *ranks = c->world + c->size;
	for (int i = 0; i < c->size; i++)
		ranks[i] = i;
	PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
	PMPI_Group_translate_ranks(group, c->size, ranks, world_group, c->world);
	PMPI_Group_free(&group);
	PMPI_Group_free(&world_group);
	if (rtr__mpi.keyval != MPI_KEYVAL_INVALID)
		PMPI_Comm_set_attr(comm, rtr__mpi.keyval, c);
	return c;
}

/* info_of() of any communicator but the world. */
static struct comm_info *info_lookup(MPI_Comm comm)
{
	struct comm_info *c = NULL;
	int flag = 0;

	if (comm == MPI_COMM_NULL || rtr__mpi.keyval == MPI_KEYVAL_INVALID)
		return NULL;
	if (PMPI_Comm_get_attr(comm, rtr__mpi.keyval, &c, &flag) != MPI_SUCCESS || !flag) {
		c = info_attach(comm, 0);
		if (c == NULL)
			return NULL;
		uint64_t h = UINT64_C(0x6d656d62657273); /* "members" */
		for (int i = 0; i < c->size; i++)
			h = combine(h, (uint64_t)(uint32_t)c->world[i]);
		c->id = h;
	}
	return c;
}

/* The info of comm, made from its members when no wrapper made the communicator;
 * NULL for MPI_COMM_NULL or when MPI fails. */
static inline struct comm_info *info_of(MPI_Comm comm)
{
	return comm == MPI_COMM_WORLD ? &rtr__mpi.world_info : info_lookup(comm);
}

static int to_world(const struct comm_info *c, int rank)
{
	if (rank < 0 || c == NULL)
		return rank; /* MPI_ANY_SOURCE, MPI_PROC_NULL */
	if (c->world == NULL)
		return rank;
	return rank < c->size ? c->world[rank] : -1;
}

/* The id of a communicator made from parent (Comm_dup, _split, _create), equal on
 * its ranks: see the top of the file. */
static uint64_t derived_id(MPI_Comm parent, int color)
{
	struct comm_info *p = info_of(parent);
	uint64_t n;

	if (p == NULL)
		return 0;
	tables_lock();
	n = p->made++;
	tables_unlock();
	return combine(combine(p->id, n), (uint64_t)(uint32_t)color);
}

/* ------------------------------------------------------------------------- */
/* Sequence numbers and flow ids                                             */

struct seq_node {
	struct seq_node *next;
	uint64_t comm;
	uint64_t key; /* the hash of (comm, src, dst, tag): the flow ids' base */
	int src, dst, tag, recv;
	uint64_t next_seq;
};

/* The node of (comm, src, dst, tag) on one side; NULL when out of memory. */
static struct seq_node *seq_node_of(uint64_t comm, int src, int dst, int tag, int recv)
{
	uint64_t h = combine(combine(comm, (uint64_t)(uint32_t)src),
			     (uint64_t)(uint32_t)dst << 32 | (uint32_t)tag);
	struct seq_node **b = &rtr__mpi.seq_table[h & (BUCKETS - 1)], *n;

	for (n = *b; n != NULL; n = n->next)
		if (n->comm == comm && n->src == src && n->dst == dst && n->tag == tag &&
		    n->recv == recv)
			return n;
	if ((n = calloc(1, sizeof(*n))) == NULL)
		return NULL;
	n->comm = comm;
	n->key = h;
	n->src = src;
	n->dst = dst;
	n->tag = tag;
	n->recv = recv;
	n->next = *b;
	*b = n;
	return n;
}

/* The next sequence number of (comm, src, dst, tag) on the sending (recv 0) or
 * receiving (1) side, and the flow id it gives; 0 when out of memory (no flow then).
 * The caller holds tables_lock. A run of messages with one key, each side's usual
 * case, skips the hash and the bucket. */
static uint64_t next_flow_id_locked(uint64_t comm, int src, int dst, int tag, int recv)
{
	struct seq_node *n = rtr__mpi.seq_last[recv];

	if (n == NULL || n->comm != comm || n->src != src || n->dst != dst || n->tag != tag) {
		if ((n = seq_node_of(comm, src, dst, tag, recv)) == NULL)
			return 0;
		rtr__mpi.seq_last[recv] = n;
	}
	uint64_t id = combine(n->key, n->next_seq++);
	return id != 0 ? id : 1;
}

static uint64_t next_flow_id(uint64_t comm, int src, int dst, int tag, int recv)
{
	tables_lock();
	uint64_t id = next_flow_id_locked(comm, src, dst, tag, recv);
	tables_unlock();
	return id;
}

/* A send of (comm, dest, tag): its flow starts in the enclosing slice, which
 * p2p_begin() recorded. */
static void send_flow(const struct comm_info *c, int dest, int tag)
{
	if (c == NULL || c->inter || dest < 0)
		return;
	uint64_t id = next_flow_id(c->id, rtr__mpi.world_rank, to_world(c, dest), tag, 0);
	if (id != 0)
		rtr_flow_start(CAT, FLOW, id);
}

/* ------------------------------------------------------------------------- */
/* Receives: numbered in the order MPI matches them                           */

/*
 * Among the receives of a communicator that take a message of one (source, tag), MPI
 * matches them in the order they were posted, so that is the order they are numbered
 * in. A receive that names its source and tag is numbered when it is posted, unless
 * an earlier receive of its communicator is still unnumbered and could take such a
 * message: a wildcard whose message is not known yet, or a receive waiting behind one.
 * Those wait in the communicator's list, in posting order, and each is numbered as
 * soon as its message is known and nothing unnumbered before it could take one like
 * it. A wildcard's message is known at its completion, or earlier, when a receive
 * posted after it completes first: a wildcard that MPI matched before that receive's
 * message, as it must have had it taken one of the same (source, tag), has usually
 * completed too, and MPI_Request_get_status() gives its status without completing it.
 * A receive that completes while a wildcard before it that could have taken its
 * message is still unknown (not complete, or at MPI_THREAD_MULTIPLE, where another
 * thread may free the wildcard's request meanwhile) takes its number then.
 */
struct pending {
	struct pending *next;	/* in its bucket of pending_table, or the spare list */
	struct pending *later;	/* in comm->unnumbered: the next receive posted */
	MPI_Request req;	/* NULL for a blocking receive's entry */
	struct comm_info *comm; /* one reference; NULL for an entry numbered at posting */
	uint64_t id;		/* the flow id once numbered; 0: no flow */
	int src, tag;		/* as posted, wildcards maybe; once known, the message's */
	int known;		/* src and tag are the message's */
	int numbered;
};

/* Whether receive e could take a message of (src, tag). */
static int could_take(const struct pending *e, int src, int tag)
{
	if (e->known)
		return e->src == src && e->tag == tag;
	return (e->src == MPI_ANY_SOURCE || e->src == src) &&
	       (e->tag == MPI_ANY_TAG || e->tag == tag);
}

/* Whether an unnumbered receive of c posted before `upto` (NULL: any) could take a
 * message of (src, tag). Under tables_lock, as the lists are. */
static int blocked_locked(const struct comm_info *c, const struct pending *upto, int src, int tag)
{
	for (const struct pending *e = c->unnumbered; e != NULL && e != upto; e = e->later)
		if (could_take(e, src, tag))
			return 1;
	return 0;
}

static void append_locked(struct comm_info *c, struct pending *e)
{
	struct pending **l = &c->unnumbered;

	while (*l != NULL)
		l = &(*l)->later;
	e->later = NULL;
	*l = e;
}

static void unlist_locked(struct pending *e)
{
	struct pending **l = &e->comm->unnumbered;

	while (*l != NULL && *l != e)
		l = &(*l)->later;
	if (*l == e)
		*l = e->later;
	e->later = NULL;
}

/* e takes the next number of its message's (comm, source, tag). */
static void number_locked(struct pending *e)
{
	const struct comm_info *c = e->comm;

	e->numbered = 1;
	e->id = e->src < 0 ? 0
			   : next_flow_id_locked(c->id, to_world(c, e->src), rtr__mpi.world_rank,
						 e->tag, 1);
}

/* Number, in posting order, each receive of c whose message is known and that nothing
 * unnumbered before it could take a message like. Taking one out can free only those
 * after it, so one pass does. */
static void number_ready_locked(struct comm_info *c)
{
	struct pending **l = &c->unnumbered;

	while (*l != NULL) {
		struct pending *e = *l;
		if (e->known && !blocked_locked(c, e, e->src, e->tag)) {
			number_locked(e);
			*l = e->later;
			e->later = NULL;
		} else {
			l = &e->later;
		}
	}
}

/* Ask MPI for the message of each unknown wildcard before e that could take e's (see
 * the top of this part). A wildcard found cancelled takes nothing: numbered, no flow. */
static void learn_blockers(struct pending *e)
{
	struct pending *w, *next;

	if (rtr__mpi.multithreaded)
		return;
	for (w = e->comm->unnumbered; w != NULL && w != e; w = next) {
		MPI_Status st;
		int flag = 0, cancelled = 0;
		next = w->later;
		if (w->known || !could_take(w, e->src, e->tag) ||
		    PMPI_Request_get_status(w->req, &flag, &st) != MPI_SUCCESS || !flag)
			continue;
		PMPI_Test_cancelled(&st, &cancelled);
		if (cancelled || st.MPI_SOURCE < 0) {
			unlist_locked(w);
			w->numbered = 1;
			w->id = 0;
		} else {
			w->src = st.MPI_SOURCE;
			w->tag = st.MPI_TAG;
			w->known = 1;
		}
	}
}

/* e, whose message is known, completes now: its number, at the latest now. */
static void settle(struct pending *e)
{
	tables_lock();
	number_ready_locked(e->comm);
	int numbered = e->numbered;
	tables_unlock();
	if (numbered)
		return;
	learn_blockers(e); /* not at MPI_THREAD_MULTIPLE, where tables_lock would be taken */
	tables_lock();
	number_ready_locked(e->comm);
	if (!e->numbered) {
		/* Held back by a wildcard still unknown: taken to have had another message.
		 * The receives of e's (source, tag) before it go first, in order. */
		struct pending *x, *next;
		for (x = e->comm->unnumbered; x != NULL && x != e; x = next) {
			next = x->later;
			if (x->known && x->src == e->src && x->tag == e->tag) {
				unlist_locked(x);
				number_locked(x);
			}
		}
		unlist_locked(e);
		number_locked(e);
	}
	tables_unlock();
}

/* A receive on c, posted now, has completed with a message of (source, tag) (a
 * blocking receive; or a matched probe, which matches as a receive posted then): its
 * flow id, 0 for none. */
static uint64_t recv_number_now(struct comm_info *c, int source, int tag)
{
	struct pending e = {.comm = c, .src = source, .tag = tag, .known = 1};

	if (c == NULL || c->inter || source < 0)
		return 0;
	tables_lock();
	int wait = c->unnumbered != NULL;
	if (wait)
		append_locked(c, &e);
	else
		number_locked(&e);
	tables_unlock();
	if (wait)
		settle(&e);
	return e.id;
}

/* ------------------------------------------------------------------------- */
/* Pending receives: a receive's request until a Wait or Test completes it    */

/* The bits of an MPI handle (a pointer in Open MPI, an int in MPICH) as a hash key. */
static uint64_t handle_bits(const void *h, size_t size)
{
	uint64_t k = 0;

	memcpy(&k, h, size < sizeof(k) ? size : sizeof(k));
	return mix(k);
}

static struct pending **pending_bucket(MPI_Request req)
{
	return &rtr__mpi.pending_table[handle_bits(&req, sizeof(req)) & (BUCKETS - 1)];
}

/* A new entry for req in the table; NULL without memory. Under tables_lock. */
static struct pending *pending_new_locked(MPI_Request req)
{
	struct pending **b = pending_bucket(req), *p;

	if ((p = rtr__mpi.pending_spare) != NULL)
		rtr__mpi.pending_spare = p->next;
	else
		p = malloc(sizeof(*p)); /* more receives pending than ever before */
	if (p == NULL)
		return NULL;
	memset(p, 0, sizeof(*p));
	p->req = req;
	p->next = *b;
	*b = p;
	/* relaxed: the count's readers are ordered by the program, see complete() */
	rtr_atomic_store_relaxed(&rtr__mpi.pending_count, rtr__mpi.pending_count + 1);
	return p;
}

/* A receive's req on c from (source, tag) is pending (Irecv, a persistent receive's
 * start). Without memory it has no flow, but a named (source, tag) that nothing
 * blocks still takes its number, so that the next ones match. */
static void pending_add(MPI_Request req, struct comm_info *c, int source, int tag)
{
	if (c == NULL || c->inter)
		return;
	tables_lock();
	struct pending *p = pending_new_locked(req), tmp;
	int known = source != MPI_ANY_SOURCE && tag != MPI_ANY_TAG;
	if (p == NULL)
		p = &tmp; /* numbered below if it can be, then forgotten */
	p->comm = c;
	p->src = source;
	p->tag = tag;
	p->known = known;
	if (known && !blocked_locked(c, NULL, source, tag)) {
		number_locked(p);
		p->comm = NULL; /* numbered: its completion needs no info */
	} else if (p != &tmp) {
		c->refs++;
		append_locked(c, p);
	}
	tables_unlock();
}

/* An Imrecv's req, whose message a matched probe numbered (id, never 0). */
static void pending_add_id(MPI_Request req, uint64_t id)
{
	tables_lock();
	struct pending *p = pending_new_locked(req);
	if (p != NULL) {
		p->numbered = 1;
		p->id = id;
	}
	tables_unlock();
}

/* Take req's entry out of the table: the entry, or NULL if req has none. */
static struct pending *pending_take(MPI_Request req)
{
	struct pending **b = pending_bucket(req), *p;

	tables_lock();
	for (; (p = *b) != NULL; b = &p->next)
		if (p->req == req) {
			*b = p->next;
			/* relaxed: as in pending_new_locked() */
			rtr_atomic_store_relaxed(&rtr__mpi.pending_count,
						 rtr__mpi.pending_count - 1);
			break;
		}
	tables_unlock();
	return p;
}

/* A taken entry is done with: out of its communicator's list if it is still there
 * (the receives it held back may go now), back to the spare list. */
static void pending_release(struct pending *p)
{
	struct comm_info *c = p->comm;

	tables_lock();
	if (!p->numbered) {
		unlist_locked(p);
		number_ready_locked(c);
	}
	p->next = rtr__mpi.pending_spare;
	rtr__mpi.pending_spare = p;
	tables_unlock();
	if (c != NULL)
		info_unref(c);
}

/* The first half of a completion, for each request a call completed: take req's entry
 * and learn its message from st. Returns the entry when it has yet to be numbered
 * (complete_finish() then, once every request the call completed has been through
 * here: their messages are all known then); else ends its flow and returns NULL. */
static struct pending *complete_take(MPI_Request req, const MPI_Status *st)
{
	struct pending *p;
	int cancelled = 0;

	/* relaxed, without the lock: a receive adds its entry before it returns req, so
	 * before the program can pass req to a Wait or Test here (on any thread, ordered by
	 * the program), and only a completion takes it out; a count of 0 means req has
	 * none. Worst case another thread's entry makes it nonzero: we look in vain. */
	if (req == MPI_REQUEST_NULL || rtr_atomic_load_relaxed(&rtr__mpi.pending_count) == 0 ||
	    (p = pending_take(req)) == NULL)
		return NULL;
	PMPI_Test_cancelled(st, &cancelled);
	if (p->numbered || cancelled || st->MPI_SOURCE < 0) {
		if (p->numbered && !cancelled && p->id != 0 && st->MPI_SOURCE != MPI_PROC_NULL)
			rtr_flow_end(CAT, FLOW, p->id);
		pending_release(p);
		return NULL;
	}
	tables_lock();
	p->src = st->MPI_SOURCE;
	p->tag = st->MPI_TAG;
	p->known = 1;
	tables_unlock();
	return p;
}

static void complete_finish(struct pending *p)
{
	settle(p);
	if (p->id != 0)
		rtr_flow_end(CAT, FLOW, p->id);
	pending_release(p);
}

/* A request completed with status, alone in its call: if it was a receive, its flow
 * ends here. */
static void complete(MPI_Request req, const MPI_Status *st)
{
	struct pending *p = complete_take(req, st);

	if (p != NULL)
		complete_finish(p);
}

/* A blocking receive on c that completed with st. */
static void recv_done(struct comm_info *c, const MPI_Status *st)
{
	uint64_t id;

	if (c == NULL || st->MPI_SOURCE < 0)
		return;
	id = recv_number_now(c, st->MPI_SOURCE, st->MPI_TAG);
	if (id != 0)
		rtr_flow_end(CAT, FLOW, id);
}

/* ------------------------------------------------------------------------- */
/* Slices                                                                     */

static unsigned type_hash(MPI_Datatype dt)
{
	uint64_t k = 0;

	memcpy(&k, &dt, sizeof(dt) < sizeof(k) ? sizeof(dt) : sizeof(k));
	return (unsigned)((k * UINT64_C(0x9e3779b97f4a7c15)) >> 57); /* Fibonacci: 7 bits */
}

/* The slot of dt, or the empty one where it would go. */
static unsigned type_slot(MPI_Datatype dt)
{
	unsigned i = type_hash(dt);

	while (rtr__mpi.type_sizes[i].used && rtr__mpi.type_sizes[i].dt != dt)
		i = (i + 1) & (TYPE_SLOTS - 1);
	return i;
}

static void type_sizes_init(void)
{
	/* clang-format off */
	const MPI_Datatype predefined[] = {
		MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE,
		MPI_WCHAR, MPI_SHORT, MPI_UNSIGNED_SHORT, MPI_INT,
		MPI_UNSIGNED, MPI_LONG, MPI_UNSIGNED_LONG, MPI_LONG_LONG,
		MPI_UNSIGNED_LONG_LONG, MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE,
		MPI_C_BOOL, MPI_INT8_T, MPI_INT16_T, MPI_INT32_T,
		MPI_INT64_T, MPI_UINT8_T, MPI_UINT16_T, MPI_UINT32_T,
		MPI_UINT64_T, MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX, MPI_AINT,
		MPI_OFFSET, MPI_COUNT, MPI_PACKED, MPI_FLOAT_INT,
		MPI_DOUBLE_INT, MPI_LONG_INT, MPI_2INT, MPI_SHORT_INT,
		MPI_LONG_DOUBLE_INT
	};
	/* clang-format on */
	int size;

	for (size_t i = 0; i < sizeof(predefined) / sizeof(predefined[0]); i++) {
		MPI_Datatype dt = predefined[i];
		if (dt == MPI_DATATYPE_NULL || PMPI_Type_size(dt, &size) != MPI_SUCCESS)
			continue;
		unsigned slot = type_slot(dt); /* an alias listed twice finds its own slot */
		rtr__mpi.type_sizes[slot].dt = dt;
		rtr__mpi.type_sizes[slot].size = size;
		rtr__mpi.type_sizes[slot].used = 1;
	}
}

/* RTR_ARG_I64() with only the fields an integer argument has: the compound literal
 * also zeroes the rest of the union (a rep stos on each wrapper's three). */
static inline struct rtr_arg arg_i64(const char *key, int64_t value)
{
	struct rtr_arg a;

	a.key = key;
	a.type = RTR_ARG_TYPE_I64;
	a.v.i64 = value;
	return a;
}

static int64_t bytes_of(int count, MPI_Datatype dt)
{
	unsigned slot = type_slot(dt);
	int size = rtr__mpi.type_sizes[slot].size;

	if (!rtr__mpi.type_sizes[slot].used &&
	    (dt == MPI_DATATYPE_NULL || PMPI_Type_size(dt, &size) != MPI_SUCCESS))
		return 0;
	return (int64_t)count * size;
}

static int64_t bytes_of_v(const int *counts, int n, MPI_Datatype dt)
{
	int64_t total = 0;

	for (int i = 0; counts != NULL && i < n; i++)
		total += counts[i];
	return total * bytes_of(1, dt);
}

static int comm_size(MPI_Comm comm)
{
	int n = 0;

	if (comm == MPI_COMM_WORLD && rtr__mpi.world_info.size > 0)
		return rtr__mpi.world_info.size; /* set by after_init() */
	if (comm != MPI_COMM_NULL)
		PMPI_Comm_size(comm, &n);
	return n;
}

/* A point-to-point slice on c: peer (as a world rank), tag, bytes. Returns whether the
 * category is recorded (the slice's flow then goes with it). */
static int p2p_begin(const char *name, const struct comm_info *c, int peer, int tag, int count,
		     MPI_Datatype dt)
{
	if (!rtr_category_enabled(CAT))
		return 0;
	const struct rtr_arg args[] = {
		arg_i64("peer", to_world(c, peer)),
		arg_i64("tag", tag),
		arg_i64("bytes", bytes_of(count, dt)),
	};
	rtr_begin_args(CAT, name, args, 3);
	return 1;
}

/* A collective slice: bytes (this rank's part), comm_size, root (-1: none). */
static void coll_begin(const char *name, MPI_Comm comm, int64_t bytes, int root)
{
	if (!rtr_category_enabled(CAT))
		return;
	const struct rtr_arg args[] = {
		arg_i64("bytes", bytes),
		arg_i64("comm_size", comm_size(comm)),
		arg_i64("root", root),
	};
	rtr_begin_args(CAT, name, args, root >= 0 ? 3 : 2);
}

static void count_begin(const char *name, int count)
{
	const struct rtr_arg args[] = {arg_i64("count", count)};

	rtr_begin_args(CAT, name, args, 1);
}

/* ------------------------------------------------------------------------- */
/* Clock sync                                                                 */

/*
 * A ping-pong with rank 0 on sync_comm. Rank 0 serves the ranks in turn; rank r
 * sends its clock t0, rank 0 answers with its clock o, r reads t1. o was read between
 * t0 and t1, so the offset (rank 0's clock - this one's) is within [o - t1, o - t0];
 * each of the SYNC_ROUNDS rounds gives such an interval, and the offset is in all of
 * them: the estimate is the middle of their intersection, right within half its
 * width (error_ns). That is never worse than the round with the least RTT alone
 * (rtt_ns; its middle, right within rtt_ns / 2, is the estimate if the intervals do
 * not meet, as when a clock steps during the measurement), and much better when the
 * delays of the two ways differ from round to round. at_ns is the middle of the
 * measurement. The event is written with the format the merge reads (README, "Clock
 * sync"); rank 0's own has offset 0.
 */
/*
 * Wait for a message from rank 0 with tag (its go, or the end of the measurement),
 * sleeping: ranks spinning in MPI_Recv while two others measure would take the CPUs
 * from them when ranks outnumber cores, and every preemption inside a round widens
 * its interval. So each rank waits for its turn asleep, and after it until every
 * rank has had its turn.
 */
static int wait_for(int tag)
{
	const struct timespec nap = {0, 50000};
	int flag = 0, err = MPI_SUCCESS;
	char byte;

	while (err == MPI_SUCCESS && !flag) {
		err = PMPI_Iprobe(0, tag, rtr__mpi.sync_comm, &flag, MPI_STATUS_IGNORE);
		if (err == MPI_SUCCESS && !flag)
			nanosleep(&nap, NULL);
	}
	if (err == MPI_SUCCESS)
		err = PMPI_Recv(&byte, 1, MPI_CHAR, 0, tag, rtr__mpi.sync_comm, MPI_STATUS_IGNORE);
	return err;
}

static int clock_sync(void)
{
	int64_t at = 0, offset = 0, rtt = 0, error = 0;
	int err = 0;

	if (!rtr__mpi.initialized || rtr__mpi.sync_comm == MPI_COMM_NULL)
		return -ENOTCONN;
	if (rtr__mpi.world_rank == 0) {
		for (int r = 1; r < rtr__mpi.world_size && err == 0; r++) {
			char go = 1;
			err = PMPI_Send(&go, 1, MPI_CHAR, r, SYNC_GO_TAG, rtr__mpi.sync_comm);
			for (int i = 0; i < SYNC_ROUNDS && err == 0; i++) {
				uint64_t t;
				err = PMPI_Recv(&t, 1, MPI_UINT64_T, r, SYNC_TAG,
						rtr__mpi.sync_comm, MPI_STATUS_IGNORE);
				t = rtr_now_ns();
				if (err == MPI_SUCCESS)
					err = PMPI_Send(&t, 1, MPI_UINT64_T, r, SYNC_TAG,
							rtr__mpi.sync_comm);
			}
		}
		at = (int64_t)rtr_now_ns();
		for (int r = 1; r < rtr__mpi.world_size && err == 0; r++) {
			char done = 1;
			err = PMPI_Send(&done, 1, MPI_CHAR, r, SYNC_DONE_TAG, rtr__mpi.sync_comm);
		}
	} else {
		int64_t best = INT64_MAX, best_offset = 0, lo = INT64_MIN, hi = INT64_MAX;
		uint64_t first = 0, last = 0;
		err = wait_for(SYNC_GO_TAG);
		for (int i = 0; i < SYNC_ROUNDS && err == 0; i++) {
			uint64_t t0 = rtr_now_ns(), ref = 0;
			err = PMPI_Send(&t0, 1, MPI_UINT64_T, 0, SYNC_TAG, rtr__mpi.sync_comm);
			if (err == MPI_SUCCESS)
				err = PMPI_Recv(&ref, 1, MPI_UINT64_T, 0, SYNC_TAG,
						rtr__mpi.sync_comm, MPI_STATUS_IGNORE);
			uint64_t t1 = rtr_now_ns();
			if (err != MPI_SUCCESS)
				break;
			first = i == 0 ? t0 : first;
			last = t1;
			int64_t low = (int64_t)(ref - t1), high = (int64_t)(ref - t0);
			lo = low > lo ? low : lo;
			hi = high < hi ? high : hi;
			if ((int64_t)(t1 - t0) < best) {
				best = (int64_t)(t1 - t0);
				best_offset = (int64_t)(ref - (t0 + (t1 - t0) / 2));
			}
		}
		if (err == MPI_SUCCESS)
			err = wait_for(SYNC_DONE_TAG);
		at = (int64_t)(first + (last - first) / 2);
		rtt = best;
		if (lo <= hi) {
			offset = lo + (hi - lo) / 2;
			error = (hi - lo + 1) / 2;
		} else {
			offset = best_offset;
			error = (best + 1) / 2;
		}
	}
	if (err != MPI_SUCCESS)
		return -EIO;
	const struct rtr_arg args[] = {
		RTR_ARG_I64("reference_rank", 0),   RTR_ARG_I64("rank", rtr__mpi.world_rank),
		RTR_ARG_I64("at_ns", at),	    RTR_ARG_I64("offset_ns", offset),
		RTR_ARG_I64("error_ns", error),	    RTR_ARG_I64("rtt_ns", rtt),
		RTR_ARG_I64("rounds", SYNC_ROUNDS),
	};
	rtr_instant_scoped("ringtrace", "ringtrace: clock sync", RTR_INSTANT_PROCESS, args, 7);
	return 0;
}

RTR_API int rtr_mpi_sync(void)
{
	return clock_sync();
}

/* ------------------------------------------------------------------------- */
/* Init and Finalize                                                          */

/* The rank the launcher gives (the recorder reads the same variables for %r). */
static long launcher_rank(void)
{
	static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
					   "SLURM_PROCID", "MV2_COMM_WORLD_RANK"};

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i]);
		char *end;
		if (v != NULL && *v != '\0') {
			long r = strtol(v, &end, 10);
			if (*end == '\0' && r >= 0)
				return r;
		}
	}
	return -1;
}

/* Before PMPI_Init: the recorder, unless the program runs one already. */
static void before_init(void)
{
	struct rtr_config cfg;

	rtr_config_init(&cfg);
	if (getenv("RINGTRACE_FILE") == NULL || *getenv("RINGTRACE_FILE") == '\0')
		cfg.path = "ringtrace-%r.json";
	rtr__mpi.env_rank = launcher_rank();
	if (rtr__mpi.env_rank >= 0 && (cfg.process_name == NULL || *cfg.process_name == '\0')) {
		snprintf(rtr__mpi.process_name, sizeof(rtr__mpi.process_name), "rank %ld",
			 rtr__mpi.env_rank);
		cfg.process_name = rtr__mpi.process_name;
	}
	rtr__mpi.started_here = rtr_start(&cfg) == 0; /* -EBUSY: the program's own session */
}

static void after_init(void)
{
	PMPI_Comm_rank(MPI_COMM_WORLD, &rtr__mpi.world_rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &rtr__mpi.world_size);
	rtr__mpi.world_info.size = rtr__mpi.world_size;
	int level = MPI_THREAD_MULTIPLE;
	PMPI_Query_thread(&level);
	rtr__mpi.multithreaded = level == MPI_THREAD_MULTIPLE;
	type_sizes_init();
	PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, info_delete, &rtr__mpi.keyval, NULL);
	PMPI_Comm_dup(MPI_COMM_WORLD, &rtr__mpi.sync_comm);
	rtr_process_sort_index(rtr__mpi.world_rank);
	if (rtr__mpi.env_rank != rtr__mpi.world_rank || !rtr__mpi.started_here) {
		char label[32];
		snprintf(label, sizeof(label), "rank %d", rtr__mpi.world_rank);
		rtr_process_label(label);
	}
	rtr__mpi.initialized = 1;
	clock_sync();
}

int MPI_Init(int *argc, char ***argv)
{
	before_init();
	rtr_begin(CAT, "MPI_Init");
	int rc = PMPI_Init(argc, argv);
	rtr_end(CAT, "MPI_Init");
	if (rc == MPI_SUCCESS)
		after_init();
	return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	before_init();
	rtr_begin(CAT, "MPI_Init_thread");
	int rc = PMPI_Init_thread(argc, argv, required, provided);
	rtr_end(CAT, "MPI_Init_thread");
	if (rc == MPI_SUCCESS)
		after_init();
	return rc;
}

int MPI_Finalize(void)
{
	if (rtr__mpi.initialized) {
		clock_sync();
		PMPI_Comm_free(&rtr__mpi.sync_comm);
		rtr__mpi.initialized = 0;
	}
	rtr_begin(CAT, "MPI_Finalize");
	int rc = PMPI_Finalize();
	rtr_end(CAT, "MPI_Finalize");
	rtr__mpi.keyval = MPI_KEYVAL_INVALID;
	if (rtr__mpi.started_here) {
		rtr__mpi.started_here = 0;
		rtr_stop();
	}
	return rc;
}

/* ------------------------------------------------------------------------- */
/* Point to point                                                             */

/* The blocking and the nonblocking sends, four modes each. */
#define SEND(mode)                                                                     \
	int MPI_##mode(const void *buf, int count, MPI_Datatype dt, int dest, int tag, \
		       MPI_Comm comm)                                                  \
	{                                                                              \
		const struct comm_info *c = info_of(comm);                             \
		if (p2p_begin("MPI_" #mode, c, dest, tag, count, dt))                  \
			send_flow(c, dest, tag);                                       \
		int rc = PMPI_##mode(buf, count, dt, dest, tag, comm);                 \
		rtr_end(CAT, "MPI_" #mode);                                            \
		return rc;                                                             \
	}
#define ISEND(mode)                                                                    \
	int MPI_##mode(const void *buf, int count, MPI_Datatype dt, int dest, int tag, \
		       MPI_Comm comm, MPI_Request *req)                                \
	{                                                                              \
		const struct comm_info *c = info_of(comm);                             \
		if (p2p_begin("MPI_" #mode, c, dest, tag, count, dt))                  \
			send_flow(c, dest, tag);                                       \
		int rc = PMPI_##mode(buf, count, dt, dest, tag, comm, req);            \
		rtr_end(CAT, "MPI_" #mode);                                            \
		return rc;                                                             \
	}
SEND(Send)
SEND(Ssend)
SEND(Bsend)
SEND(Rsend)
ISEND(Isend)
ISEND(Issend)
ISEND(Ibsend)
ISEND(Irsend)

int MPI_Recv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
	     MPI_Status *status)
{
	MPI_Status local;
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;

	struct comm_info *c = info_of(comm);

	p2p_begin("MPI_Recv", c, source, tag, count, dt);
	int rc = PMPI_Recv(buf, count, dt, source, tag, comm, st);
	if (rc == MPI_SUCCESS)
		recv_done(c, st);
	rtr_end(CAT, "MPI_Recv");
	return rc;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
	      MPI_Request *req)
{
	struct comm_info *c = info_of(comm);

	p2p_begin("MPI_Irecv", c, source, tag, count, dt);
	int rc = PMPI_Irecv(buf, count, dt, source, tag, comm, req);
	if (rc == MPI_SUCCESS && source != MPI_PROC_NULL)
		pending_add(*req, c, source, tag);
	rtr_end(CAT, "MPI_Irecv");
	return rc;
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype sdt, int dest, int stag, void *rbuf,
		 int rcount, MPI_Datatype rdt, int source, int rtag, MPI_Comm comm,
		 MPI_Status *status)
{
	MPI_Status local;
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;

	struct comm_info *c = info_of(comm);

	if (p2p_begin("MPI_Sendrecv", c, dest, stag, scount, sdt))
		send_flow(c, dest, stag);
	int rc = PMPI_Sendrecv(sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, source, rtag, comm,
			       st);
	if (rc == MPI_SUCCESS)
		recv_done(c, st);
	rtr_end(CAT, "MPI_Sendrecv");
	return rc;
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int stag, int source,
			 int rtag, MPI_Comm comm, MPI_Status *status)
{
	MPI_Status local;
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;

	struct comm_info *c = info_of(comm);

	if (p2p_begin("MPI_Sendrecv_replace", c, dest, stag, count, dt))
		send_flow(c, dest, stag);
	int rc = PMPI_Sendrecv_replace(buf, count, dt, dest, stag, source, rtag, comm, st);
	if (rc == MPI_SUCCESS)
		recv_done(c, st);
	rtr_end(CAT, "MPI_Sendrecv_replace");
	return rc;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
	if (rtr_category_enabled(CAT))
		p2p_begin("MPI_Probe", info_of(comm), source, tag, 0, MPI_DATATYPE_NULL);
	int rc = PMPI_Probe(source, tag, comm, status);
	rtr_end(CAT, "MPI_Probe");
	return rc;
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
	if (rtr_category_enabled(CAT))
		p2p_begin("MPI_Iprobe", info_of(comm), source, tag, 0, MPI_DATATYPE_NULL);
	int rc = PMPI_Iprobe(source, tag, comm, flag, status);
	rtr_end(CAT, "MPI_Iprobe");
	return rc;
}

/* ------------------------------------------------------------------------- */
/* Persistent requests: what each MPI_Start begins                            */

/* A persistent request, from its init call to its MPI_Request_free. */
struct persistent {
	struct persistent *next;
	MPI_Request req;
	struct comm_info *comm; /* one reference */
	int peer, tag, recv;	/* as the init call gave them; recv: MPI_Recv_init */
	int64_t bytes;
};

static struct persistent **persistent_bucket(MPI_Request req)
{
	return &rtr__mpi.persistent_table[handle_bits(&req, sizeof(req)) & (BUCKETS - 1)];
}

/* The init call made req: remember what each start of it sends or receives. */
static void persistent_add(MPI_Request req, struct comm_info *c, int peer, int tag, int recv,
			   int64_t bytes)
{
	struct persistent *p;

	if (c == NULL || c->inter || (p = malloc(sizeof(*p))) == NULL)
		return; /* no flows for it, as for an intercommunicator */
	p->req = req;
	p->comm = c;
	p->peer = peer;
	p->tag = tag;
	p->recv = recv;
	p->bytes = bytes;
	tables_lock();
	c->refs++;
	struct persistent **b = persistent_bucket(req);
	p->next = *b;
	*b = p;
	/* relaxed: read by the program's own later calls on req, see persistent_get() */
	rtr_atomic_store_relaxed(&rtr__mpi.persistent_count, rtr__mpi.persistent_count + 1);
	tables_unlock();
}

/* req's entry copied into *out: 1, or 0 when req is not a persistent request we made. */
static int persistent_get(MPI_Request req, struct persistent *out)
{
	struct persistent *p;

	/* relaxed, without the lock: req's init call added its entry before it returned
	 * req, as for pending_count in complete() */
	if (req == MPI_REQUEST_NULL || rtr_atomic_load_relaxed(&rtr__mpi.persistent_count) == 0)
		return 0;
	tables_lock();
	for (p = *persistent_bucket(req); p != NULL && p->req != req; p = p->next)
		;
	if (p != NULL)
		*out = *p;
	tables_unlock();
	return p != NULL;
}

static void persistent_drop(MPI_Request req)
{
	struct persistent **b, *p = NULL;

	if (rtr_atomic_load_relaxed(&rtr__mpi.persistent_count) == 0) /* relaxed: as above */
		return;
	tables_lock();
	for (b = persistent_bucket(req); (p = *b) != NULL; b = &p->next)
		if (p->req == req) {
			*b = p->next;
			/* relaxed: as in persistent_add() */
			rtr_atomic_store_relaxed(&rtr__mpi.persistent_count,
						 rtr__mpi.persistent_count - 1);
			break;
		}
	tables_unlock();
	if (p != NULL) {
		info_unref(p->comm);
		free(p);
	}
}

/* The init calls: a slice each (no message yet: each start is one). */
#define SEND_INIT(mode)                                                                       \
	int MPI_##mode##_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, \
			      MPI_Comm comm, MPI_Request *req)                                \
	{                                                                                     \
		struct comm_info *c = info_of(comm);                                          \
		p2p_begin("MPI_" #mode "_init", c, dest, tag, count, dt);                     \
		int rc = PMPI_##mode##_init(buf, count, dt, dest, tag, comm, req);            \
		if (rc == MPI_SUCCESS && dest >= 0)                                           \
			persistent_add(*req, c, dest, tag, 0, bytes_of(count, dt));           \
		rtr_end(CAT, "MPI_" #mode "_init");                                           \
		return rc;                                                                    \
	}
SEND_INIT(Send)
SEND_INIT(Ssend)
SEND_INIT(Bsend)
SEND_INIT(Rsend)

int MPI_Recv_init(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
		  MPI_Request *req)
{
	struct comm_info *c = info_of(comm);

	p2p_begin("MPI_Recv_init", c, source, tag, count, dt);
	int rc = PMPI_Recv_init(buf, count, dt, source, tag, comm, req);
	if (rc == MPI_SUCCESS && source != MPI_PROC_NULL)
		persistent_add(*req, c, source, tag, 1, bytes_of(count, dt));
	rtr_end(CAT, "MPI_Recv_init");
	return rc;
}

/* Before a start of p: a send's message is numbered and its flow starts in the
 * enclosing slice, as for an Isend. Returns whether p is a receive, to be numbered
 * after the start. */
static int start_before(const struct persistent *p)
{
	if (p->recv)
		return 1;
	send_flow(p->comm, p->peer, p->tag);
	return 0;
}

int MPI_Start(MPI_Request *req)
{
	struct persistent p;
	int known = persistent_get(*req, &p);

	if (known && rtr_category_enabled(CAT)) {
		const struct rtr_arg args[] = {
			arg_i64("peer", to_world(p.comm, p.peer)),
			arg_i64("tag", p.tag),
			arg_i64("bytes", p.bytes),
		};
		rtr_begin_args(CAT, "MPI_Start", args, 3);
	} else if (!known) {
		count_begin("MPI_Start", 1);
	}
	int recv = known && start_before(&p);
	int rc = PMPI_Start(req);
	if (rc == MPI_SUCCESS && recv)
		pending_add(*req, p.comm, p.peer, p.tag);
	rtr_end(CAT, "MPI_Start");
	return rc;
}

int MPI_Startall(int n, MPI_Request reqs[])
{
	struct persistent p;

	count_begin("MPI_Startall", n);
	for (int i = 0; i < n; i++)
		if (persistent_get(reqs[i], &p))
			start_before(&p);
	int rc = PMPI_Startall(n, reqs);
	/* Receives in array order: the order MPI starts them in, so the order they match. */
	for (int i = 0; rc == MPI_SUCCESS && i < n; i++)
		if (persistent_get(reqs[i], &p) && p.recv)
			pending_add(reqs[i], p.comm, p.peer, p.tag);
	rtr_end(CAT, "MPI_Startall");
	return rc;
}

/* ------------------------------------------------------------------------- */
/* Matched probes: the message is numbered when the probe matches it          */

struct matched {
	struct matched *next;
	MPI_Message msg;
	uint64_t id;
	int peer, tag; /* the world source and tag, for the receive's slice */
};

/* A probe on c matched msg with status st: number the message now, as a receive
 * posted at this moment would be. */
static void matched_add(MPI_Message msg, struct comm_info *c, const MPI_Status *st)
{
	struct matched *m;

	if (msg == MPI_MESSAGE_NULL || msg == MPI_MESSAGE_NO_PROC || c == NULL || c->inter ||
	    st->MPI_SOURCE < 0 || (m = malloc(sizeof(*m))) == NULL)
		return;
	m->msg = msg;
	m->peer = to_world(c, st->MPI_SOURCE);
	m->tag = st->MPI_TAG;
	m->id = recv_number_now(c, st->MPI_SOURCE, st->MPI_TAG);
	tables_lock();
	m->next = rtr__mpi.matched_list;
	rtr__mpi.matched_list = m;
	tables_unlock();
}

/* msg's entry taken out into *out: 1, or 0 when the probe did not number it. */
static int matched_take(MPI_Message msg, struct matched *out)
{
	struct matched **b, *m = NULL;

	tables_lock();
	for (b = &rtr__mpi.matched_list; (m = *b) != NULL; b = &m->next)
		if (m->msg == msg) {
			*b = m->next;
			*out = *m;
			break;
		}
	tables_unlock();
	free(m);
	return m != NULL;
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *msg, MPI_Status *status)
{
	MPI_Status local;
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
	struct comm_info *c = info_of(comm);

	p2p_begin("MPI_Mprobe", c, source, tag, 0, MPI_DATATYPE_NULL);
	int rc = PMPI_Mprobe(source, tag, comm, msg, st);
	if (rc == MPI_SUCCESS)
		matched_add(*msg, c, st);
	rtr_end(CAT, "MPI_Mprobe");
	return rc;
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *msg, MPI_Status *status)
{
	MPI_Status local;
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
	struct comm_info *c = info_of(comm);

	p2p_begin("MPI_Improbe", c, source, tag, 0, MPI_DATATYPE_NULL);
	int rc = PMPI_Improbe(source, tag, comm, flag, msg, st);
	if (rc == MPI_SUCCESS && *flag)
		matched_add(*msg, c, st);
	rtr_end(CAT, "MPI_Improbe");
	return rc;
}

/* The slice of a receive of a probed message: its source and tag, when numbered. */
static void mrecv_begin(const char *name, const struct matched *m, int known, int count,
			MPI_Datatype dt)
{
	if (!rtr_category_enabled(CAT))
		return;
	const struct rtr_arg args[] = {
		arg_i64("peer", known ? m->peer : MPI_ANY_SOURCE),
		arg_i64("tag", known ? m->tag : MPI_ANY_TAG),
		arg_i64("bytes", bytes_of(count, dt)),
	};
	rtr_begin_args(CAT, name, args, 3);
}

int MPI_Mrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *msg, MPI_Status *status)
{
	struct matched m = {.id = 0};
	int known = matched_take(*msg, &m);

	mrecv_begin("MPI_Mrecv", &m, known, count, dt);
	int rc = PMPI_Mrecv(buf, count, dt, msg, status);
	if (rc == MPI_SUCCESS && known && m.id != 0)
		rtr_flow_end(CAT, FLOW, m.id);
	rtr_end(CAT, "MPI_Mrecv");
	return rc;
}

int MPI_Imrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *msg, MPI_Request *req)
{
	struct matched m = {.id = 0};
	int known = matched_take(*msg, &m);

	mrecv_begin("MPI_Imrecv", &m, known, count, dt);
	int rc = PMPI_Imrecv(buf, count, dt, msg, req);
	if (rc == MPI_SUCCESS && known && m.id != 0)
		pending_add_id(*req, m.id);
	rtr_end(CAT, "MPI_Imrecv");
	return rc;
}

/* Calls that are a slice and nothing more. */
#define PLAIN(fn, params, ...)                   \
	int MPI_##fn params                      \
	{                                        \
		rtr_begin(CAT, "MPI_" #fn);      \
		int rc = PMPI_##fn(__VA_ARGS__); \
		rtr_end(CAT, "MPI_" #fn);        \
		return rc;                       \
	}

PLAIN(Cancel, (MPI_Request * req), req)
PLAIN(Request_get_status, (MPI_Request req, int *flag, MPI_Status *status), req, flag, status)

int MPI_Request_free(MPI_Request *req)
{
	struct pending *p = pending_take(*req);

	if (p != NULL)
		pending_release(p);
	persistent_drop(*req);
	return PMPI_Request_free(req);
}

/* ------------------------------------------------------------------------- */
/* Wait and test                                                              */

/* Copies of the handles (MPI sets completed ones to MPI_REQUEST_NULL) and statuses
 * (the caller's may be MPI_STATUSES_IGNORE): on the stack for up to 64 requests. */
struct reqs {
	MPI_Request *h;
	MPI_Status *st;
	struct pending **taken; /* complete_take()'s entries, for complete_many() */
	MPI_Request h_local[64];
	MPI_Status st_local[64];
	struct pending *taken_local[64];
};

static void reqs_fini(struct reqs *r, MPI_Status *statuses)
{
	if (r->h != r->h_local)
		free(r->h);
	if (r->st != r->st_local && r->st != statuses)
		free(r->st);
	if (r->taken != r->taken_local)
		free(r->taken);
}

/* 0, or -1 without memory (then nothing is held). */
static int reqs_init(struct reqs *r, int n, const MPI_Request *reqs, MPI_Status *statuses)
{
	size_t big = n <= 64 ? 0 : (size_t)n;

	r->h = big == 0 ? r->h_local : malloc(big * sizeof(MPI_Request));
	r->st = statuses != MPI_STATUSES_IGNORE ? statuses
		: big == 0			? r->st_local
						: malloc(big * sizeof(MPI_Status));
	r->taken = big == 0 ? r->taken_local : malloc(big * sizeof(struct pending *));
	if (r->h == NULL || r->st == NULL || r->taken == NULL) {
		reqs_fini(r, statuses);
		return -1;
	}
	memcpy(r->h, reqs, (size_t)n * sizeof(MPI_Request));
	return 0;
}

/* The requests one call completed: the k-th of `done` is r->h[index[k]] (index NULL:
 * k) with status r->st[k]. Every message is learnt before any is numbered, so that a
 * wildcard completed here holds back the receives after it, whatever the order of
 * the array. */
static void complete_many(struct reqs *r, int done, const int *index)
{
	for (int k = 0; k < done; k++)
		r->taken[k] = complete_take(r->h[index != NULL ? index[k] : k], &r->st[k]);
	for (int k = 0; k < done; k++)
		if (r->taken[k] != NULL)
			complete_finish(r->taken[k]);
}

/* Whether no receive is pending: then none of the requests a Wait or Test is given
 * can complete one, and it needs no copies (relaxed: see complete()). */
static int none_pending(void)
{
	return rtr_atomic_load_relaxed(&rtr__mpi.pending_count) == 0;
}

int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
	MPI_Status local;
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
	MPI_Request h = *req;

	count_begin("MPI_Wait", 1);
	int rc = PMPI_Wait(req, st);
	if (rc == MPI_SUCCESS)
		complete(h, st);
	rtr_end(CAT, "MPI_Wait");
	return rc;
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
	MPI_Status local;
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
	MPI_Request h = *req;

	count_begin("MPI_Test", 1);
	int rc = PMPI_Test(req, flag, st);
	if (rc == MPI_SUCCESS && *flag)
		complete(h, st);
	rtr_end(CAT, "MPI_Test");
	return rc;
}

/* Waitall and Testall; Waitany and Testany; Waitsome and Testsome: one body each. */
static int all(const char *name, int n, MPI_Request *reqs, int *flag, MPI_Status *statuses)
{
	struct reqs r;
	int rc, done = 1;

	count_begin(name, n);
	if (none_pending() || reqs_init(&r, n, reqs, statuses) != 0) {
		rc = flag == NULL ? PMPI_Waitall(n, reqs, statuses)
				  : PMPI_Testall(n, reqs, flag, statuses);
	} else {
		rc = flag == NULL ? PMPI_Waitall(n, reqs, r.st)
				  : PMPI_Testall(n, reqs, &done, r.st);
		if (flag != NULL)
			*flag = done;
		/* A request in error has no message: its handle is left out (NULL). */
		for (int i = 0; done && rc != MPI_SUCCESS && i < n; i++)
			if (r.st[i].MPI_ERROR != MPI_SUCCESS)
				r.h[i] = MPI_REQUEST_NULL;
		if (done)
			complete_many(&r, n, NULL);
		reqs_fini(&r, statuses);
	}
	rtr_end(CAT, name);
	return rc;
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[])
{
	return all("MPI_Waitall", n, reqs, NULL, statuses);
}

int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
	return all("MPI_Testall", n, reqs, flag, statuses);
}

static int any(const char *name, int n, MPI_Request *reqs, int *index, int *flag,
	       MPI_Status *status)
{
	MPI_Status local;
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
	struct reqs r;
	int rc, done = 1;

	count_begin(name, n);
	if (none_pending() || reqs_init(&r, n, reqs, MPI_STATUSES_IGNORE) != 0) {
		rc = flag == NULL ? PMPI_Waitany(n, reqs, index, status)
				  : PMPI_Testany(n, reqs, index, flag, status);
	} else {
		rc = flag == NULL ? PMPI_Waitany(n, reqs, index, st)
				  : PMPI_Testany(n, reqs, index, &done, st);
		if (flag != NULL)
			*flag = done;
		if (rc == MPI_SUCCESS && done && *index != MPI_UNDEFINED)
			complete(r.h[*index], st);
		reqs_fini(&r, MPI_STATUSES_IGNORE);
	}
	rtr_end(CAT, name);
	return rc;
}

int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status)
{
	return any("MPI_Waitany", n, reqs, index, NULL, status);
}

int MPI_Testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
	return any("MPI_Testany", n, reqs, index, flag, status);
}

static int some(const char *name, int n, MPI_Request *reqs, int *outcount, int *indices,
		MPI_Status *statuses, int test)
{
	struct reqs r;
	int rc;

	count_begin(name, n);
	if (none_pending() || reqs_init(&r, n, reqs, statuses) != 0) {
		rc = test ? PMPI_Testsome(n, reqs, outcount, indices, statuses)
			  : PMPI_Waitsome(n, reqs, outcount, indices, statuses);
	} else {
		rc = test ? PMPI_Testsome(n, reqs, outcount, indices, r.st)
			  : PMPI_Waitsome(n, reqs, outcount, indices, r.st);
		for (int i = 0; *outcount != MPI_UNDEFINED && rc != MPI_SUCCESS && i < *outcount;
		     i++)
			if (r.st[i].MPI_ERROR != MPI_SUCCESS)
				r.h[indices[i]] = MPI_REQUEST_NULL;
		if (*outcount != MPI_UNDEFINED)
			complete_many(&r, *outcount, indices);
		reqs_fini(&r, statuses);
	}
	rtr_end(CAT, name);
	return rc;
}

int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
	return some("MPI_Waitsome", n, reqs, outcount, indices, statuses, 0);
}

int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
	return some("MPI_Testsome", n, reqs, outcount, indices, statuses, 1);
}

/* ------------------------------------------------------------------------- */
/* Collectives                                                                */

/* One wrapper: the slice name, the parameter list, the bytes, the root (-1: none),
 * the communicator, and the arguments passed on. */
#define COLL(fn, params, bytes, root, comm, ...)           \
	int MPI_##fn params                                \
	{                                                  \
		coll_begin("MPI_" #fn, comm, bytes, root); \
		int rc = PMPI_##fn(__VA_ARGS__);           \
		rtr_end(CAT, "MPI_" #fn);                  \
		return rc;                                 \
	}

COLL(Barrier, (MPI_Comm comm), 0, -1, comm, comm)
COLL(Ibarrier, (MPI_Comm comm, MPI_Request *req), 0, -1, comm, comm, req)
COLL(Bcast, (void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm), bytes_of(count, dt),
     root, comm, buf, count, dt, root, comm)
COLL(Ibcast, (void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Request *req),
     bytes_of(count, dt), root, comm, buf, count, dt, root, comm, req)
COLL(Reduce,
     (const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm),
     bytes_of(count, dt), root, comm, sbuf, rbuf, count, dt, op, root, comm)
COLL(Allreduce,
     (const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm),
     bytes_of(count, dt), -1, comm, sbuf, rbuf, count, dt, op, comm)
COLL(Iallreduce,
     (const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
      MPI_Request *req),
     bytes_of(count, dt), -1, comm, sbuf, rbuf, count, dt, op, comm, req)
COLL(Scan, (const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm),
     bytes_of(count, dt), -1, comm, sbuf, rbuf, count, dt, op, comm)
COLL(Exscan, (const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm),
     bytes_of(count, dt), -1, comm, sbuf, rbuf, count, dt, op, comm)
COLL(Reduce_scatter,
     (const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype dt, MPI_Op op, MPI_Comm comm),
     bytes_of_v(rcounts, comm_size(comm), dt), -1, comm, sbuf, rbuf, rcounts, dt, op, comm)
COLL(Gather,
     (const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt,
      int root, MPI_Comm comm),
     bytes_of(scount, sdt), root, comm, sbuf, scount, sdt, rbuf, rcount, rdt, root, comm)
COLL(Gatherv,
     (const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, const int rcounts[],
      const int displs[], MPI_Datatype rdt, int root, MPI_Comm comm),
     bytes_of(scount, sdt), root, comm, sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, comm)
COLL(Scatter,
     (const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt,
      int root, MPI_Comm comm),
     bytes_of(rcount, rdt), root, comm, sbuf, scount, sdt, rbuf, rcount, rdt, root, comm)
COLL(Scatterv,
     (const void *sbuf, const int scounts[], const int displs[], MPI_Datatype sdt, void *rbuf,
      int rcount, MPI_Datatype rdt, int root, MPI_Comm comm),
     bytes_of(rcount, rdt), root, comm, sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, comm)
COLL(Allgather,
     (const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt,
      MPI_Comm comm),
     bytes_of(scount, sdt), -1, comm, sbuf, scount, sdt, rbuf, rcount, rdt, comm)
COLL(Allgatherv,
     (const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, const int rcounts[],
      const int displs[], MPI_Datatype rdt, MPI_Comm comm),
     bytes_of(scount, sdt), -1, comm, sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm)
COLL(Alltoall,
     (const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt,
      MPI_Comm comm),
     bytes_of(scount, sdt) * comm_size(comm), -1, comm, sbuf, scount, sdt, rbuf, rcount, rdt, comm)
COLL(Alltoallv,
     (const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype sdt, void *rbuf,
      const int rcounts[], const int rdispls[], MPI_Datatype rdt, MPI_Comm comm),
     bytes_of_v(scounts, comm_size(comm), sdt), -1, comm, sbuf, scounts, sdispls, sdt, rbuf,
     rcounts, rdispls, rdt, comm)

COLL(Reduce_scatter_block,
     (const void *sbuf, void *rbuf, int rcount, MPI_Datatype dt, MPI_Op op, MPI_Comm comm),
     bytes_of(rcount, dt) * comm_size(comm), -1, comm, sbuf, rbuf, rcount, dt, op, comm)
COLL(Alltoallw,
     (const void *sbuf, const int scounts[], const int sdispls[], const MPI_Datatype sdts[],
      void *rbuf, const int rcounts[], const int rdispls[], const MPI_Datatype rdts[],
      MPI_Comm comm),
     0, -1, comm, sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts, comm)

/* The nonblocking collectives: the slice is the call that starts one; the Wait or
 * Test that completes it is a slice of its own. */
COLL(Ireduce,
     (const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm,
      MPI_Request *req),
     bytes_of(count, dt), root, comm, sbuf, rbuf, count, dt, op, root, comm, req)
COLL(Iscan,
     (const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
      MPI_Request *req),
     bytes_of(count, dt), -1, comm, sbuf, rbuf, count, dt, op, comm, req)
COLL(Iexscan,
     (const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
      MPI_Request *req),
     bytes_of(count, dt), -1, comm, sbuf, rbuf, count, dt, op, comm, req)
COLL(Ireduce_scatter,
     (const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
      MPI_Request *req),
     bytes_of_v(rcounts, comm_size(comm), dt), -1, comm, sbuf, rbuf, rcounts, dt, op, comm, req)
COLL(Ireduce_scatter_block,
     (const void *sbuf, void *rbuf, int rcount, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
      MPI_Request *req),
     bytes_of(rcount, dt) * comm_size(comm), -1, comm, sbuf, rbuf, rcount, dt, op, comm, req)
COLL(Igather,
     (const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt,
      int root, MPI_Comm comm, MPI_Request *req),
     bytes_of(scount, sdt), root, comm, sbuf, scount, sdt, rbuf, rcount, rdt, root, comm, req)
COLL(Igatherv,
     (const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, const int rcounts[],
      const int displs[], MPI_Datatype rdt, int root, MPI_Comm comm, MPI_Request *req),
     bytes_of(scount, sdt), root, comm, sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, comm,
     req)
COLL(Iscatter,
     (const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt,
      int root, MPI_Comm comm, MPI_Request *req),
     bytes_of(rcount, rdt), root, comm, sbuf, scount, sdt, rbuf, rcount, rdt, root, comm, req)
COLL(Iscatterv,
     (const void *sbuf, const int scounts[], const int displs[], MPI_Datatype sdt, void *rbuf,
      int rcount, MPI_Datatype rdt, int root, MPI_Comm comm, MPI_Request *req),
     bytes_of(rcount, rdt), root, comm, sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, comm,
     req)
COLL(Iallgather,
     (const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt,
      MPI_Comm comm, MPI_Request *req),
     bytes_of(scount, sdt), -1, comm, sbuf, scount, sdt, rbuf, rcount, rdt, comm, req)
COLL(Iallgatherv,
     (const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, const int rcounts[],
      const int displs[], MPI_Datatype rdt, MPI_Comm comm, MPI_Request *req),
     bytes_of(scount, sdt), -1, comm, sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm, req)
COLL(Ialltoall,
     (const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt,
      MPI_Comm comm, MPI_Request *req),
     bytes_of(scount, sdt) * comm_size(comm), -1, comm, sbuf, scount, sdt, rbuf, rcount, rdt, comm,
     req)
COLL(Ialltoallv,
     (const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype sdt, void *rbuf,
      const int rcounts[], const int rdispls[], MPI_Datatype rdt, MPI_Comm comm, MPI_Request *req),
     bytes_of_v(scounts, comm_size(comm), sdt), -1, comm, sbuf, scounts, sdispls, sdt, rbuf,
     rcounts, rdispls, rdt, comm, req)
COLL(Ialltoallw,
     (const void *sbuf, const int scounts[], const int sdispls[], const MPI_Datatype sdts[],
      void *rbuf, const int rcounts[], const int rdispls[], const MPI_Datatype rdts[],
      MPI_Comm comm, MPI_Request *req),
     0, -1, comm, sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts, comm, req)

/* ------------------------------------------------------------------------- */
/* One-sided: the peer is the target's rank in the window's group             */

static void rma_begin(const char *name, int target, int count, MPI_Datatype dt)
{
	if (!rtr_category_enabled(CAT))
		return;
	const struct rtr_arg args[] = {
		arg_i64("peer", target),
		arg_i64("bytes", bytes_of(count, dt)),
	};
	rtr_begin_args(CAT, name, args, 2);
}

int MPI_Put(const void *obuf, int ocount, MPI_Datatype odt, int target, MPI_Aint tdisp, int tcount,
	    MPI_Datatype tdt, MPI_Win win)
{
	rma_begin("MPI_Put", target, ocount, odt);
	int rc = PMPI_Put(obuf, ocount, odt, target, tdisp, tcount, tdt, win);
	rtr_end(CAT, "MPI_Put");
	return rc;
}

int MPI_Get(void *obuf, int ocount, MPI_Datatype odt, int target, MPI_Aint tdisp, int tcount,
	    MPI_Datatype tdt, MPI_Win win)
{
	rma_begin("MPI_Get", target, ocount, odt);
	int rc = PMPI_Get(obuf, ocount, odt, target, tdisp, tcount, tdt, win);
	rtr_end(CAT, "MPI_Get");
	return rc;
}

int MPI_Accumulate(const void *obuf, int ocount, MPI_Datatype odt, int target, MPI_Aint tdisp,
		   int tcount, MPI_Datatype tdt, MPI_Op op, MPI_Win win)
{
	rma_begin("MPI_Accumulate", target, ocount, odt);
	int rc = PMPI_Accumulate(obuf, ocount, odt, target, tdisp, tcount, tdt, op, win);
	rtr_end(CAT, "MPI_Accumulate");
	return rc;
}

int MPI_Win_fence(int assert_, MPI_Win win)
{
	rtr_begin(CAT, "MPI_Win_fence");
	int rc = PMPI_Win_fence(assert_, win);
	rtr_end(CAT, "MPI_Win_fence");
	return rc;
}

int MPI_Win_lock(int type, int target, int assert_, MPI_Win win)
{
	rma_begin("MPI_Win_lock", target, 0, MPI_DATATYPE_NULL);
	int rc = PMPI_Win_lock(type, target, assert_, win);
	rtr_end(CAT, "MPI_Win_lock");
	return rc;
}

int MPI_Win_unlock(int target, MPI_Win win)
{
	rma_begin("MPI_Win_unlock", target, 0, MPI_DATATYPE_NULL);
	int rc = PMPI_Win_unlock(target, win);
	rtr_end(CAT, "MPI_Win_unlock");
	return rc;
}

/* The other one-sided calls: with a target, the peer and the origin's bytes. */
#define RMA(fn, params, target, count, dt, ...)           \
	int MPI_##fn params                               \
	{                                                 \
		rma_begin("MPI_" #fn, target, count, dt); \
		int rc = PMPI_##fn(__VA_ARGS__);          \
		rtr_end(CAT, "MPI_" #fn);                 \
		return rc;                                \
	}

RMA(Rput,
    (const void *obuf, int ocount, MPI_Datatype odt, int target, MPI_Aint tdisp, int tcount,
     MPI_Datatype tdt, MPI_Win win, MPI_Request *req),
    target, ocount, odt, obuf, ocount, odt, target, tdisp, tcount, tdt, win, req)
RMA(Rget,
    (void *obuf, int ocount, MPI_Datatype odt, int target, MPI_Aint tdisp, int tcount,
     MPI_Datatype tdt, MPI_Win win, MPI_Request *req),
    target, ocount, odt, obuf, ocount, odt, target, tdisp, tcount, tdt, win, req)
RMA(Raccumulate,
    (const void *obuf, int ocount, MPI_Datatype odt, int target, MPI_Aint tdisp, int tcount,
     MPI_Datatype tdt, MPI_Op op, MPI_Win win, MPI_Request *req),
    target, ocount, odt, obuf, ocount, odt, target, tdisp, tcount, tdt, op, win, req)
RMA(Get_accumulate,
    (const void *obuf, int ocount, MPI_Datatype odt, void *rbuf, int rcount, MPI_Datatype rdt,
     int target, MPI_Aint tdisp, int tcount, MPI_Datatype tdt, MPI_Op op, MPI_Win win),
    target, ocount, odt, obuf, ocount, odt, rbuf, rcount, rdt, target, tdisp, tcount, tdt, op, win)
RMA(Rget_accumulate,
    (const void *obuf, int ocount, MPI_Datatype odt, void *rbuf, int rcount, MPI_Datatype rdt,
     int target, MPI_Aint tdisp, int tcount, MPI_Datatype tdt, MPI_Op op, MPI_Win win,
     MPI_Request *req),
    target, ocount, odt, obuf, ocount, odt, rbuf, rcount, rdt, target, tdisp, tcount, tdt, op, win,
    req)
RMA(Fetch_and_op,
    (const void *obuf, void *rbuf, MPI_Datatype dt, int target, MPI_Aint tdisp, MPI_Op op,
     MPI_Win win),
    target, 1, dt, obuf, rbuf, dt, target, tdisp, op, win)
RMA(Compare_and_swap,
    (const void *obuf, const void *cbuf, void *rbuf, MPI_Datatype dt, int target, MPI_Aint tdisp,
     MPI_Win win),
    target, 1, dt, obuf, cbuf, rbuf, dt, target, tdisp, win)
RMA(Win_flush, (int target, MPI_Win win), target, 0, MPI_DATATYPE_NULL, target, win)
RMA(Win_flush_local, (int target, MPI_Win win), target, 0, MPI_DATATYPE_NULL, target, win)

PLAIN(Win_flush_all, (MPI_Win win), win)
PLAIN(Win_flush_local_all, (MPI_Win win), win)
PLAIN(Win_sync, (MPI_Win win), win)
PLAIN(Win_lock_all, (int assert_, MPI_Win win), assert_, win)
PLAIN(Win_unlock_all, (MPI_Win win), win)
PLAIN(Win_post, (MPI_Group group, int assert_, MPI_Win win), group, assert_, win)
PLAIN(Win_start, (MPI_Group group, int assert_, MPI_Win win), group, assert_, win)
PLAIN(Win_complete, (MPI_Win win), win)
PLAIN(Win_wait, (MPI_Win win), win)
PLAIN(Win_test, (MPI_Win win, int *flag), win, flag)
PLAIN(Win_free, (MPI_Win * win), win)

/* Window creation is collective over comm: bytes is this rank's part of the window. */
COLL(Win_create,
     (void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win),
     (int64_t)size, -1, comm, base, size, disp_unit, info, comm, win)
COLL(Win_allocate,
     (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *base, MPI_Win *win),
     (int64_t)size, -1, comm, size, disp_unit, info, comm, base, win)
COLL(Win_allocate_shared,
     (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *base, MPI_Win *win),
     (int64_t)size, -1, comm, size, disp_unit, info, comm, base, win)
COLL(Win_create_dynamic, (MPI_Info info, MPI_Comm comm, MPI_Win *win), 0, -1, comm, info, comm, win)

/* ------------------------------------------------------------------------- */
/* Communicators                                                              */

/* After a wrapper made newcomm from parent: its id (see the top of the file). The id
 * is drawn on every rank of parent, also those that get MPI_COMM_NULL, so that the
 * parent's count stays equal on all of them. */
static void made(MPI_Comm parent, int color, MPI_Comm newcomm)
{
	uint64_t id = derived_id(parent, color);

	if (newcomm != MPI_COMM_NULL && rtr__mpi.keyval != MPI_KEYVAL_INVALID)
		info_attach(newcomm, id);
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
	coll_begin("MPI_Comm_dup", comm, 0, -1);
	int rc = PMPI_Comm_dup(comm, newcomm);
	if (rc == MPI_SUCCESS)
		made(comm, -1, *newcomm);
	rtr_end(CAT, "MPI_Comm_dup");
	return rc;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
	coll_begin("MPI_Comm_split", comm, 0, -1);
	int rc = PMPI_Comm_split(comm, color, key, newcomm);
	if (rc == MPI_SUCCESS)
		made(comm, color, *newcomm);
	rtr_end(CAT, "MPI_Comm_split");
	return rc;
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
	coll_begin("MPI_Comm_create", comm, 0, -1);
	int rc = PMPI_Comm_create(comm, group, newcomm);
	if (rc == MPI_SUCCESS)
		made(comm, -2, *newcomm);
	rtr_end(CAT, "MPI_Comm_create");
	return rc;
}

int MPI_Comm_free(MPI_Comm *comm)
{
	coll_begin("MPI_Comm_free", *comm, 0, -1);
	int rc = PMPI_Comm_free(comm); /* the attribute's delete drops its info */
	rtr_end(CAT, "MPI_Comm_free");
	return rc;
}
