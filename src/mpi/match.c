/* SPDX-License-Identifier: MIT */
/*
 * The flow ids of point-to-point messages (see mpi_internal.h): each side numbers
 * the messages of a (communicator, source, destination, tag), the sender as it posts
 * its sends, the receiver in the order MPI matches its receives, and both hash the
 * same number into the same id. Here are the sequence numbers, the receives waiting
 * for theirs, and the table of pending receives (a receive's request until the Wait or
 * Test that completes it, where its flow ends). The wrappers that post are in p2p.c,
 * those that complete in wait.c.
 */
#include "mpi/comm.h"
#include "mpi/mpi_internal.h"

#include "common/atomic.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------- */
/* Sequence numbers and flow ids                                             */

struct seq_node {
	struct seq_node *next;
	uint64_t comm;
	uint64_t key; /* the hash of (comm, src, dst, tag): the flow ids' base */
	int src, dst, tag, recv;
	uint64_t next_seq;
};

/* The nodes are in rtr__mpi.seq_table, under the lock. */

/* The node of (comm, src, dst, tag) on one side; NULL when out of memory. */
static struct seq_node *seq_node_of(uint64_t comm, int src, int dst, int tag, int recv)
{
	uint64_t h = rtr__mpi_combine(rtr__mpi_combine(comm, (uint64_t)(uint32_t)src),
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
 * The caller holds the lock. A run of messages with one key, each side's usual
 * case, skips the hash and the bucket. */
static uint64_t next_flow_id_locked(uint64_t comm, int src, int dst, int tag, int recv)
{
	struct seq_node *n = rtr__mpi.seq_last[recv];

	if (n == NULL || n->comm != comm || n->src != src || n->dst != dst || n->tag != tag) {
		if ((n = seq_node_of(comm, src, dst, tag, recv)) == NULL)
			return 0;
		rtr__mpi.seq_last[recv] = n;
	}
	uint64_t id = rtr__mpi_combine(n->key, n->next_seq++);
	return id != 0 ? id : 1;
}

static uint64_t next_flow_id(uint64_t comm, int src, int dst, int tag, int recv)
{
	rtr__mpi_lock();
	uint64_t id = next_flow_id_locked(comm, src, dst, tag, recv);
	rtr__mpi_unlock();
	return id;
}

/* A send of (comm, dest, tag): its flow starts in the enclosing slice, which
 * p2p_begin() (p2p.c) recorded. */
void rtr__mpi_send_flow(const struct comm_info *c, int dest, int tag)
{
	if (c == NULL || c->inter || dest < 0)
		return;
	uint64_t id = next_flow_id(c->id, rtr__mpi.world_rank, rtr__mpi_to_world(c, dest), tag, 0);
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
	struct pending *next;	/* in its bucket of rtr__mpi.pending_table, or the spare list */
	struct pending *later;	/* in comm->unnumbered: the next receive posted */
	MPI_Request req;	/* NULL for a blocking receive's entry */
	struct comm_info *comm; /* one reference; NULL for an entry numbered at posting */
	uint64_t id;		/* the flow id once numbered; 0: no flow */
	int src, tag;		/* as posted, wildcards maybe; once known, the message's */
	int known;		/* src and tag are the message's */
	int numbered;
	/* a nonblocking collective's request (numbered, no flow): its call, or NULL */
	const struct rtr__mpi_coll_call *coll;
	struct rtr__mpi_coll_call call;
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
 * message of (src, tag). Under the lock, as the lists are. */
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
			   : next_flow_id_locked(c->id, rtr__mpi_to_world(c, e->src),
						 rtr__mpi.world_rank, e->tag, 1);
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
	rtr__mpi_lock();
	number_ready_locked(e->comm);
	int numbered = e->numbered;
	rtr__mpi_unlock();
	if (numbered)
		return;
	learn_blockers(e); /* not at MPI_THREAD_MULTIPLE, where the lock would be taken */
	rtr__mpi_lock();
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
	rtr__mpi_unlock();
}

/* A receive on c, posted now, has completed with a message of (source, tag) (a
 * blocking receive; or a matched probe, which matches as a receive posted then): its
 * flow id, 0 for none. */
uint64_t rtr__mpi_recv_number_now(struct comm_info *c, int source, int tag)
{
	struct pending e = {.comm = c, .src = source, .tag = tag, .known = 1};

	if (c == NULL || c->inter || source < 0)
		return 0;
	rtr__mpi_lock();
	int wait = c->unnumbered != NULL;
	if (wait)
		append_locked(c, &e);
	else
		number_locked(&e);
	rtr__mpi_unlock();
	if (wait)
		settle(&e);
	return e.id;
}

/* ------------------------------------------------------------------------- */
/* Pending receives: a receive's request until a Wait or Test completes it    */

/* The entries are in rtr__mpi.pending_table (and pending_spare, pending_count). */

static struct pending **pending_bucket(MPI_Request req)
{
	return &rtr__mpi.pending_table[rtr__mpi_handle_bits(&req, sizeof(req)) & (BUCKETS - 1)];
}

/* A new entry for req in the table; NULL without memory. Under the lock. */
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
	/* relaxed: the count's readers are ordered by the program, see rtr__mpi_complete_take() */
	rtr_atomic_store_relaxed(&rtr__mpi.pending_count, rtr__mpi.pending_count + 1);
	return p;
}

/* A receive's req on c from (source, tag) is pending (Irecv, a persistent receive's
 * start). Without memory it has no flow, but a named (source, tag) that nothing
 * blocks still takes its number, so that the next ones match. */
void rtr__mpi_pending_add(MPI_Request req, struct comm_info *c, int source, int tag)
{
	if (c == NULL || c->inter)
		return;
	rtr__mpi_lock();
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
	rtr__mpi_unlock();
}

/* An Imrecv's req, whose message a matched probe numbered (id, never 0). */
void rtr__mpi_pending_add_id(MPI_Request req, uint64_t id)
{
	rtr__mpi_lock();
	struct pending *p = pending_new_locked(req);
	if (p != NULL) {
		p->numbered = 1;
		p->id = id;
	}
	rtr__mpi_unlock();
}

/* A nonblocking collective's req: its completion says the call (rtr__mpi_done). */
void rtr__mpi_pending_add_coll(MPI_Request req, const struct rtr__mpi_coll_call *call)
{
	rtr__mpi_lock();
	struct pending *p = pending_new_locked(req);
	if (p != NULL) {
		p->numbered = 1;
		p->call = *call;
		p->coll = &p->call;
	}
	rtr__mpi_unlock();
}

/* v in decimal at to (20 bytes of room at least): its length. */
static size_t put_u64(char *to, uint64_t v)
{
	char rev[20];
	size_t n = 0;

	do
		rev[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	for (size_t i = 0; i < n; i++)
		to[i] = rev[n - 1 - i];
	return n;
}

/* One completed nonblocking collective into done, "NAME@COMM:SEQ[:ROOT_WORLD]" (by
 * hand: no printf in a wrapper). */
static void done_add(struct rtr__mpi_done *d, const struct rtr__mpi_coll_call *c)
{
	size_t name = strlen(c->name), at = d->len;

	/* the longest: a space, the name, '@', three numbers of 20 digits, two ':' */
	if (at + 1 + name + 1 + 3 * 20 + 2 >= sizeof(d->text)) {
		d->left_out++;
		return;
	}
	if (at > 0)
		d->text[at++] = ' ';
	memcpy(d->text + at, c->name, name);
	at += name;
	d->text[at++] = '@';
	at += put_u64(d->text + at, c->comm);
	d->text[at++] = ':';
	at += put_u64(d->text + at, c->seq);
	if (c->root_world >= 0) {
		d->text[at++] = ':';
		at += put_u64(d->text + at, (uint64_t)c->root_world);
	}
	d->text[at] = '\0';
	d->len = at;
}

void rtr__mpi_done_say(const struct rtr__mpi_done *d)
{
	if (d->len > 0)
		rtr_scope_arg_str_copy(CAT, "collectives", d->text);
	if (d->left_out > 0)
		rtr_scope_arg_i64(CAT, "collectives_left_out", d->left_out);
}

/* Take req's entry out of the table: the entry, or NULL if req has none. */
struct pending *rtr__mpi_pending_take(MPI_Request req)
{
	struct pending **b = pending_bucket(req), *p;

	rtr__mpi_lock();
	for (; (p = *b) != NULL; b = &p->next)
		if (p->req == req) {
			*b = p->next;
			/* relaxed: as in pending_new_locked() */
			rtr_atomic_store_relaxed(&rtr__mpi.pending_count,
						 rtr__mpi.pending_count - 1);
			break;
		}
	rtr__mpi_unlock();
	return p;
}

/* A taken entry is done with: out of its communicator's list if it is still there
 * (the receives it held back may go now), back to the spare list. */
void rtr__mpi_pending_release(struct pending *p)
{
	struct comm_info *c = p->comm;

	rtr__mpi_lock();
	if (!p->numbered) {
		unlist_locked(p);
		number_ready_locked(c);
	}
	p->next = rtr__mpi.pending_spare;
	rtr__mpi.pending_spare = p;
	rtr__mpi_unlock();
	if (c != NULL)
		rtr__mpi_info_unref(c);
}

/* The first half of a completion, for each request a call completed: take req's entry
 * and learn its message from st. Returns the entry when it has yet to be numbered
 * (rtr__mpi_complete_finish() then, once every request the call completed has been through
 * here: their messages are all known then); else ends its flow and returns NULL. */
struct pending *rtr__mpi_complete_take(MPI_Request req, const MPI_Status *st,
				       struct rtr__mpi_done *done)
{
	struct pending *p;
	int cancelled = 0;

	/* relaxed, without the lock: a receive adds its entry before it returns req, so
	 * before the program can pass req to a Wait or Test here (on any thread, ordered by
	 * the program), and only a completion takes it out; a count of 0 means req has
	 * none. Worst case another thread's entry makes it nonzero: we look in vain. */
	if (req == MPI_REQUEST_NULL || rtr_atomic_load_relaxed(&rtr__mpi.pending_count) == 0 ||
	    (p = rtr__mpi_pending_take(req)) == NULL)
		return NULL;
	if (p->coll != NULL) {
		done_add(done, p->coll);
		rtr__mpi_pending_release(p);
		return NULL;
	}
	PMPI_Test_cancelled(st, &cancelled);
	if (p->numbered || cancelled || st->MPI_SOURCE < 0) {
		if (p->numbered && !cancelled && p->id != 0 && st->MPI_SOURCE != MPI_PROC_NULL)
			rtr_flow_end(CAT, FLOW, p->id);
		rtr__mpi_pending_release(p);
		return NULL;
	}
	rtr__mpi_lock();
	p->src = st->MPI_SOURCE;
	p->tag = st->MPI_TAG;
	p->known = 1;
	rtr__mpi_unlock();
	return p;
}

void rtr__mpi_complete_finish(struct pending *p)
{
	settle(p);
	if (p->id != 0)
		rtr_flow_end(CAT, FLOW, p->id);
	rtr__mpi_pending_release(p);
}

/* A request completed with status, alone in its call: if it was a receive, its flow
 * ends here. */
void rtr__mpi_complete(MPI_Request req, const MPI_Status *st, struct rtr__mpi_done *done)
{
	struct pending *p = rtr__mpi_complete_take(req, st, done);

	if (p != NULL)
		rtr__mpi_complete_finish(p);
}

/* A blocking receive on c that completed with st. */
void rtr__mpi_recv_done(struct comm_info *c, const MPI_Status *st)
{
	uint64_t id;

	if (c == NULL || st->MPI_SOURCE < 0)
		return;
	id = rtr__mpi_recv_number_now(c, st->MPI_SOURCE, st->MPI_TAG);
	if (id != 0)
		rtr_flow_end(CAT, FLOW, id);
}
