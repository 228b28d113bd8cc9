/* SPDX-License-Identifier: MIT */
/*
 * The point-to-point wrappers: the sends (a flow starts in each), the receives (a flow
 * ends where each completes), the probes, the persistent requests (each MPI_Start is
 * the Isend or Irecv it stands for), the matched probes (the message is numbered when
 * the probe matches it) and Request_free. The numbering itself is match.c's; the Wait
 * and Test calls that complete a request are in wait.c.
 */
#include "mpi/comm.h"
#include "mpi/mpi_internal.h"

#include "common/atomic.h"

#include <stdint.h>
#include <stdlib.h>

/* A point-to-point slice on c: peer (as a world rank), tag, bytes; begun now, or at
 * `ticks` when not 0 (a probe that found a message: mpi_internal.h). Returns whether
 * the category is recorded (the slice's flow then goes with it). */
static int p2p_begin_at(const char *name, const struct comm_info *c, int peer, int tag, int count,
			MPI_Datatype dt, uint64_t ticks)
{
	if (!rtr_category_enabled(CAT))
		return 0;
	const struct rtr_arg args[] = {
		rtr__mpi_arg_i64("peer", rtr__mpi_to_world(c, peer)),
		rtr__mpi_arg_i64("tag", tag),
		rtr__mpi_arg_i64("bytes", rtr__mpi_bytes_of(count, dt)),
	};
	if (ticks != 0)
		rtr__begin_args_at(CAT, name, ticks, args, 3);
	else
		rtr_begin_args(CAT, name, args, 3);
	return 1;
}

static int p2p_begin(const char *name, const struct comm_info *c, int peer, int tag, int count,
		     MPI_Datatype dt)
{
	return p2p_begin_at(name, c, peer, tag, count, dt, 0);
}

/* ------------------------------------------------------------------------- */
/* Sends, receives, probes                                                    */

/* The blocking and the nonblocking sends, four modes each. */
#define SEND(mode)                                                                     \
	int MPI_##mode(const void *buf, int count, MPI_Datatype dt, int dest, int tag, \
		       MPI_Comm comm)                                                  \
	{                                                                              \
		const struct comm_info *c = rtr__mpi_info_of(comm);                    \
		if (p2p_begin("MPI_" #mode, c, dest, tag, count, dt))                  \
			rtr__mpi_send_flow(c, dest, tag);                              \
		int rc = PMPI_##mode(buf, count, dt, dest, tag, comm);                 \
		rtr_end(CAT, "MPI_" #mode);                                            \
		return rc;                                                             \
	}
#define ISEND(mode)                                                                    \
	int MPI_##mode(const void *buf, int count, MPI_Datatype dt, int dest, int tag, \
		       MPI_Comm comm, MPI_Request *req)                                \
	{                                                                              \
		const struct comm_info *c = rtr__mpi_info_of(comm);                    \
		if (p2p_begin("MPI_" #mode, c, dest, tag, count, dt))                  \
			rtr__mpi_send_flow(c, dest, tag);                              \
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

	struct comm_info *c = rtr__mpi_info_of(comm);

	p2p_begin("MPI_Recv", c, source, tag, count, dt);
	int rc = PMPI_Recv(buf, count, dt, source, tag, comm, st);
	if (rc == MPI_SUCCESS)
		rtr__mpi_recv_done(c, st);
	rtr_end(CAT, "MPI_Recv");
	return rc;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
	      MPI_Request *req)
{
	struct comm_info *c = rtr__mpi_info_of(comm);

	p2p_begin("MPI_Irecv", c, source, tag, count, dt);
	int rc = PMPI_Irecv(buf, count, dt, source, tag, comm, req);
	if (rc == MPI_SUCCESS && source != MPI_PROC_NULL)
		rtr__mpi_pending_add(*req, c, source, tag);
	rtr_end(CAT, "MPI_Irecv");
	return rc;
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype sdt, int dest, int stag, void *rbuf,
		 int rcount, MPI_Datatype rdt, int source, int rtag, MPI_Comm comm,
		 MPI_Status *status)
{
	MPI_Status local;
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;

	struct comm_info *c = rtr__mpi_info_of(comm);

	if (p2p_begin("MPI_Sendrecv", c, dest, stag, scount, sdt))
		rtr__mpi_send_flow(c, dest, stag);
	int rc = PMPI_Sendrecv(sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, source, rtag, comm,
			       st);
	if (rc == MPI_SUCCESS)
		rtr__mpi_recv_done(c, st);
	rtr_end(CAT, "MPI_Sendrecv");
	return rc;
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int stag, int source,
			 int rtag, MPI_Comm comm, MPI_Status *status)
{
	MPI_Status local;
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;

	struct comm_info *c = rtr__mpi_info_of(comm);

	if (p2p_begin("MPI_Sendrecv_replace", c, dest, stag, count, dt))
		rtr__mpi_send_flow(c, dest, stag);
	int rc = PMPI_Sendrecv_replace(buf, count, dt, dest, stag, source, rtag, comm, st);
	if (rc == MPI_SUCCESS)
		rtr__mpi_recv_done(c, st);
	rtr_end(CAT, "MPI_Sendrecv_replace");
	return rc;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
	if (rtr_category_enabled(CAT))
		p2p_begin("MPI_Probe", rtr__mpi_info_of(comm), source, tag, 0, MPI_DATATYPE_NULL);
	int rc = PMPI_Probe(source, tag, comm, status);
	rtr_end(CAT, "MPI_Probe");
	return rc;
}

/* A probe that found no message is a poll (mpi_internal.h), without arguments: its
 * peer and tag are those of the probe that finds one, as a rule. */
int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
	uint64_t t0 = rtr__mpi_poll_start();

	if (t0 == 0 && rtr_category_enabled(CAT))
		p2p_begin("MPI_Iprobe", rtr__mpi_info_of(comm), source, tag, 0, MPI_DATATYPE_NULL);
	int rc = PMPI_Iprobe(source, tag, comm, flag, status);
	if (t0 != 0) {
		if (rc == MPI_SUCCESS && !*flag) {
			rtr__mpi_poll("MPI_Iprobe", t0, -1);
			return rc;
		}
		p2p_begin_at("MPI_Iprobe", rtr__mpi_info_of(comm), source, tag, 0,
			     MPI_DATATYPE_NULL, t0);
	}
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

/* The entries are in rtr__mpi.persistent_table (and persistent_count), under the lock. */

static struct persistent **persistent_bucket(MPI_Request req)
{
	return &rtr__mpi.persistent_table[rtr__mpi_handle_bits(&req, sizeof(req)) & (BUCKETS - 1)];
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
	rtr__mpi_lock();
	c->refs++;
	struct persistent **b = persistent_bucket(req);
	p->next = *b;
	*b = p;
	/* relaxed: read by the program's own later calls on req, see persistent_get() */
	rtr_atomic_store_relaxed(&rtr__mpi.persistent_count, rtr__mpi.persistent_count + 1);
	rtr__mpi_unlock();
}

/* req's entry copied into *out: 1, or 0 when req is not a persistent request we made. */
static int persistent_get(MPI_Request req, struct persistent *out)
{
	struct persistent *p;

	/* relaxed, without the lock: req's init call added its entry before it returned
	 * req, as for pending_count in rtr__mpi_complete_take() */
	if (req == MPI_REQUEST_NULL || rtr_atomic_load_relaxed(&rtr__mpi.persistent_count) == 0)
		return 0;
	rtr__mpi_lock();
	for (p = *persistent_bucket(req); p != NULL && p->req != req; p = p->next)
		;
	if (p != NULL)
		*out = *p;
	rtr__mpi_unlock();
	return p != NULL;
}

static void persistent_drop(MPI_Request req)
{
	struct persistent **b, *p = NULL;

	if (rtr_atomic_load_relaxed(&rtr__mpi.persistent_count) == 0) /* relaxed: as above */
		return;
	rtr__mpi_lock();
	for (b = persistent_bucket(req); (p = *b) != NULL; b = &p->next)
		if (p->req == req) {
			*b = p->next;
			/* relaxed: as in persistent_add() */
			rtr_atomic_store_relaxed(&rtr__mpi.persistent_count,
						 rtr__mpi.persistent_count - 1);
			break;
		}
	rtr__mpi_unlock();
	if (p != NULL) {
		rtr__mpi_info_unref(p->comm);
		free(p);
	}
}

/* The init calls: a slice each (no message yet: each start is one). */
#define SEND_INIT(mode)                                                                       \
	int MPI_##mode##_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, \
			      MPI_Comm comm, MPI_Request *req)                                \
	{                                                                                     \
		struct comm_info *c = rtr__mpi_info_of(comm);                                 \
		p2p_begin("MPI_" #mode "_init", c, dest, tag, count, dt);                     \
		int rc = PMPI_##mode##_init(buf, count, dt, dest, tag, comm, req);            \
		if (rc == MPI_SUCCESS && dest >= 0)                                           \
			persistent_add(*req, c, dest, tag, 0, rtr__mpi_bytes_of(count, dt));  \
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
	struct comm_info *c = rtr__mpi_info_of(comm);

	p2p_begin("MPI_Recv_init", c, source, tag, count, dt);
	int rc = PMPI_Recv_init(buf, count, dt, source, tag, comm, req);
	if (rc == MPI_SUCCESS && source != MPI_PROC_NULL)
		persistent_add(*req, c, source, tag, 1, rtr__mpi_bytes_of(count, dt));
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
	rtr__mpi_send_flow(p->comm, p->peer, p->tag);
	return 0;
}

int MPI_Start(MPI_Request *req)
{
	struct persistent p;
	int known = persistent_get(*req, &p);

	if (known && rtr_category_enabled(CAT)) {
		const struct rtr_arg args[] = {
			rtr__mpi_arg_i64("peer", rtr__mpi_to_world(p.comm, p.peer)),
			rtr__mpi_arg_i64("tag", p.tag),
			rtr__mpi_arg_i64("bytes", p.bytes),
		};
		rtr_begin_args(CAT, "MPI_Start", args, 3);
	} else if (!known) {
		rtr__mpi_count_begin("MPI_Start", 1);
	}
	int recv = known && start_before(&p);
	int rc = PMPI_Start(req);
	if (rc == MPI_SUCCESS && recv)
		rtr__mpi_pending_add(*req, p.comm, p.peer, p.tag);
	rtr_end(CAT, "MPI_Start");
	return rc;
}

int MPI_Startall(int n, MPI_Request reqs[])
{
	struct persistent p;

	rtr__mpi_count_begin("MPI_Startall", n);
	for (int i = 0; i < n; i++)
		if (persistent_get(reqs[i], &p))
			start_before(&p);
	int rc = PMPI_Startall(n, reqs);
	/* Receives in array order: the order MPI starts them in, so the order they match. */
	for (int i = 0; rc == MPI_SUCCESS && i < n; i++)
		if (persistent_get(reqs[i], &p) && p.recv)
			rtr__mpi_pending_add(reqs[i], p.comm, p.peer, p.tag);
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

/* The entries are in rtr__mpi.matched_list, under the lock. */

/* A probe on c matched msg with status st: number the message now, as a receive
 * posted at this moment would be. */
static void matched_add(MPI_Message msg, struct comm_info *c, const MPI_Status *st)
{
	struct matched *m;

	if (msg == MPI_MESSAGE_NULL || msg == MPI_MESSAGE_NO_PROC || c == NULL || c->inter ||
	    st->MPI_SOURCE < 0 || (m = malloc(sizeof(*m))) == NULL)
		return;
	m->msg = msg;
	m->peer = rtr__mpi_to_world(c, st->MPI_SOURCE);
	m->tag = st->MPI_TAG;
	m->id = rtr__mpi_recv_number_now(c, st->MPI_SOURCE, st->MPI_TAG);
	rtr__mpi_lock();
	m->next = rtr__mpi.matched_list;
	rtr__mpi.matched_list = m;
	rtr__mpi_unlock();
}

/* msg's entry taken out into *out: 1, or 0 when the probe did not number it. */
static int matched_take(MPI_Message msg, struct matched *out)
{
	struct matched **b, *m = NULL;

	rtr__mpi_lock();
	for (b = &rtr__mpi.matched_list; (m = *b) != NULL; b = &m->next)
		if (m->msg == msg) {
			*b = m->next;
			*out = *m;
			break;
		}
	rtr__mpi_unlock();
	free(m);
	return m != NULL;
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *msg, MPI_Status *status)
{
	MPI_Status local;
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
	struct comm_info *c = rtr__mpi_info_of(comm);

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
	struct comm_info *c = rtr__mpi_info_of(comm);
	uint64_t t0 = rtr__mpi_poll_start();

	if (t0 == 0)
		p2p_begin("MPI_Improbe", c, source, tag, 0, MPI_DATATYPE_NULL);
	int rc = PMPI_Improbe(source, tag, comm, flag, msg, st);
	if (t0 != 0) {
		if (rc == MPI_SUCCESS && !*flag) {
			rtr__mpi_poll("MPI_Improbe", t0, -1);
			return rc;
		}
		p2p_begin_at("MPI_Improbe", c, source, tag, 0, MPI_DATATYPE_NULL, t0);
	}
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
		rtr__mpi_arg_i64("peer", known ? m->peer : MPI_ANY_SOURCE),
		rtr__mpi_arg_i64("tag", known ? m->tag : MPI_ANY_TAG),
		rtr__mpi_arg_i64("bytes", rtr__mpi_bytes_of(count, dt)),
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
		rtr__mpi_pending_add_id(*req, m.id);
	rtr_end(CAT, "MPI_Imrecv");
	return rc;
}

PLAIN(Cancel, (MPI_Request * req), req)
PLAIN(Request_get_status, (MPI_Request req, int *flag, MPI_Status *status), req, flag, status)

int MPI_Request_free(MPI_Request *req)
{
	struct pending *p = rtr__mpi_pending_take(*req);

	if (p != NULL)
		rtr__mpi_pending_release(p);
	persistent_drop(*req);
	return PMPI_Request_free(req);
}
