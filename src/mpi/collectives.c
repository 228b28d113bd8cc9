/* SPDX-License-Identifier: MIT */
/*
 * The collectives: a slice each with this rank's bytes, the communicator's size and
 * the root (when there is one); no flows. The nonblocking ones are a slice for the
 * call that starts one; the Wait or Test that completes it is a slice of its own
 * (wait.c). rtr__mpi_coll_begin() also serves the calls that make communicators
 * (comm.c) and windows (onesided.c).
 */
#include "mpi/comm.h"
#include "mpi/mpi_internal.h"

#include <stdint.h>

static int64_t bytes_of_v(const int *counts, int n, MPI_Datatype dt)
{
	int64_t total = 0;

	for (int i = 0; counts != NULL && i < n; i++)
		total += counts[i];
	return total * rtr__mpi_bytes_of(1, dt);
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

/* The n-th collective call on comm from this rank (from 1; 0 when comm has no info),
 * counted whether or not the category is recorded, so that every member's count
 * stays equal (they call a communicator's collectives in the same order). */
static uint64_t next_seq(struct comm_info *c)
{
	uint64_t n;

	if (c == NULL)
		return 0;
	rtr__mpi_lock();
	n = ++c->collectives;
	rtr__mpi_unlock();
	return n;
}

/* The world rank of rank in c's group, or -1 (an intercommunicator's root is in the
 * other group). */
static int64_t world_rank_of(const struct comm_info *c, int rank)
{
	if (c == NULL || c->inter || rank < 0 || rank >= c->size)
		return -1;
	return c->world != NULL ? c->world[rank] : rank;
}

/* A collective slice: bytes (this rank's part), comm_size, comm (the id the flows
 * use), seq (the n-th collective on comm), root (-1: none) and root_world (its world
 * rank, when known: a report finds the root's file by it). */
struct rtr__mpi_coll_call rtr__mpi_coll_begin(const char *name, MPI_Comm comm, int64_t bytes,
					      int root)
{
	struct comm_info *c = rtr__mpi_info_of(comm);
	struct rtr__mpi_coll_call call = {name, c != NULL ? c->id : 0, next_seq(c), -1, 0};

	if (!rtr_category_enabled(CAT))
		return call;
	call.root_world = root >= 0 ? world_rank_of(c, root) : -1;
	call.recorded = 1;
	struct rtr_arg args[] = {
		rtr__mpi_arg_i64("bytes", bytes),
		rtr__mpi_arg_i64("comm_size", comm_size(comm)),
		{.key = "comm", .type = RTR_ARG_TYPE_U64, .v.u64 = call.comm},
		rtr__mpi_arg_i64("seq", (int64_t)call.seq),
		rtr__mpi_arg_i64("root", root),
		rtr__mpi_arg_i64("root_world", call.root_world),
	};
	rtr_begin_args(CAT, name, args, root < 0 ? 4 : call.root_world < 0 ? 5 : 6);
	return call;
}

/* ------------------------------------------------------------------------- */
/* The wrappers: COLL() in mpi_internal.h                                     */

COLL(Barrier, (MPI_Comm comm), 0, -1, comm, comm)
COLL_NB(Ibarrier, (MPI_Comm comm, MPI_Request *req), 0, -1, comm, req, comm, req)
COLL(Bcast, (void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm),
     rtr__mpi_bytes_of(count, dt), root, comm, buf, count, dt, root, comm)
COLL_NB(Ibcast, (void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Request *req),
	rtr__mpi_bytes_of(count, dt), root, comm, req, buf, count, dt, root, comm, req)
COLL(Reduce,
     (const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm),
     rtr__mpi_bytes_of(count, dt), root, comm, sbuf, rbuf, count, dt, op, root, comm)
COLL(Allreduce,
     (const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm),
     rtr__mpi_bytes_of(count, dt), -1, comm, sbuf, rbuf, count, dt, op, comm)
COLL_NB(Iallreduce,
	(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
	 MPI_Request *req),
	rtr__mpi_bytes_of(count, dt), -1, comm, req, sbuf, rbuf, count, dt, op, comm, req)
COLL(Scan, (const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm),
     rtr__mpi_bytes_of(count, dt), -1, comm, sbuf, rbuf, count, dt, op, comm)
COLL(Exscan, (const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm),
     rtr__mpi_bytes_of(count, dt), -1, comm, sbuf, rbuf, count, dt, op, comm)
COLL(Reduce_scatter,
     (const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype dt, MPI_Op op, MPI_Comm comm),
     bytes_of_v(rcounts, comm_size(comm), dt), -1, comm, sbuf, rbuf, rcounts, dt, op, comm)
COLL(Gather,
     (const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt,
      int root, MPI_Comm comm),
     rtr__mpi_bytes_of(scount, sdt), root, comm, sbuf, scount, sdt, rbuf, rcount, rdt, root, comm)
COLL(Gatherv,
     (const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, const int rcounts[],
      const int displs[], MPI_Datatype rdt, int root, MPI_Comm comm),
     rtr__mpi_bytes_of(scount, sdt), root, comm, sbuf, scount, sdt, rbuf, rcounts, displs, rdt,
     root, comm)
COLL(Scatter,
     (const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt,
      int root, MPI_Comm comm),
     rtr__mpi_bytes_of(rcount, rdt), root, comm, sbuf, scount, sdt, rbuf, rcount, rdt, root, comm)
COLL(Scatterv,
     (const void *sbuf, const int scounts[], const int displs[], MPI_Datatype sdt, void *rbuf,
      int rcount, MPI_Datatype rdt, int root, MPI_Comm comm),
     rtr__mpi_bytes_of(rcount, rdt), root, comm, sbuf, scounts, displs, sdt, rbuf, rcount, rdt,
     root, comm)
COLL(Allgather,
     (const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt,
      MPI_Comm comm),
     rtr__mpi_bytes_of(scount, sdt), -1, comm, sbuf, scount, sdt, rbuf, rcount, rdt, comm)
COLL(Allgatherv,
     (const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, const int rcounts[],
      const int displs[], MPI_Datatype rdt, MPI_Comm comm),
     rtr__mpi_bytes_of(scount, sdt), -1, comm, sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm)
COLL(Alltoall,
     (const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt,
      MPI_Comm comm),
     rtr__mpi_bytes_of(scount, sdt) * comm_size(comm), -1, comm, sbuf, scount, sdt, rbuf, rcount,
     rdt, comm)
COLL(Alltoallv,
     (const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype sdt, void *rbuf,
      const int rcounts[], const int rdispls[], MPI_Datatype rdt, MPI_Comm comm),
     bytes_of_v(scounts, comm_size(comm), sdt), -1, comm, sbuf, scounts, sdispls, sdt, rbuf,
     rcounts, rdispls, rdt, comm)

COLL(Reduce_scatter_block,
     (const void *sbuf, void *rbuf, int rcount, MPI_Datatype dt, MPI_Op op, MPI_Comm comm),
     rtr__mpi_bytes_of(rcount, dt) * comm_size(comm), -1, comm, sbuf, rbuf, rcount, dt, op, comm)
COLL(Alltoallw,
     (const void *sbuf, const int scounts[], const int sdispls[], const MPI_Datatype sdts[],
      void *rbuf, const int rcounts[], const int rdispls[], const MPI_Datatype rdts[],
      MPI_Comm comm),
     0, -1, comm, sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts, comm)

/* The nonblocking collectives: the slice is the call that starts one; the Wait or
 * Test that completes it is a slice of its own. */
COLL_NB(Ireduce,
	(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
	 MPI_Comm comm, MPI_Request *req),
	rtr__mpi_bytes_of(count, dt), root, comm, req, sbuf, rbuf, count, dt, op, root, comm, req)
COLL_NB(Iscan,
	(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
	 MPI_Request *req),
	rtr__mpi_bytes_of(count, dt), -1, comm, req, sbuf, rbuf, count, dt, op, comm, req)
COLL_NB(Iexscan,
	(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
	 MPI_Request *req),
	rtr__mpi_bytes_of(count, dt), -1, comm, req, sbuf, rbuf, count, dt, op, comm, req)
COLL_NB(Ireduce_scatter,
	(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype dt, MPI_Op op,
	 MPI_Comm comm, MPI_Request *req),
	bytes_of_v(rcounts, comm_size(comm), dt), -1, comm, req, sbuf, rbuf, rcounts, dt, op, comm,
	req)
COLL_NB(Ireduce_scatter_block,
	(const void *sbuf, void *rbuf, int rcount, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
	 MPI_Request *req),
	rtr__mpi_bytes_of(rcount, dt) * comm_size(comm), -1, comm, req, sbuf, rbuf, rcount, dt, op,
	comm, req)
COLL_NB(Igather,
	(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt,
	 int root, MPI_Comm comm, MPI_Request *req),
	rtr__mpi_bytes_of(scount, sdt), root, comm, req, sbuf, scount, sdt, rbuf, rcount, rdt, root,
	comm, req)
COLL_NB(Igatherv,
	(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, const int rcounts[],
	 const int displs[], MPI_Datatype rdt, int root, MPI_Comm comm, MPI_Request *req),
	rtr__mpi_bytes_of(scount, sdt), root, comm, req, sbuf, scount, sdt, rbuf, rcounts, displs,
	rdt, root, comm, req)
COLL_NB(Iscatter,
	(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt,
	 int root, MPI_Comm comm, MPI_Request *req),
	rtr__mpi_bytes_of(rcount, rdt), root, comm, req, sbuf, scount, sdt, rbuf, rcount, rdt, root,
	comm, req)
COLL_NB(Iscatterv,
	(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype sdt, void *rbuf,
	 int rcount, MPI_Datatype rdt, int root, MPI_Comm comm, MPI_Request *req),
	rtr__mpi_bytes_of(rcount, rdt), root, comm, req, sbuf, scounts, displs, sdt, rbuf, rcount,
	rdt, root, comm, req)
COLL_NB(Iallgather,
	(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt,
	 MPI_Comm comm, MPI_Request *req),
	rtr__mpi_bytes_of(scount, sdt), -1, comm, req, sbuf, scount, sdt, rbuf, rcount, rdt, comm,
	req)
COLL_NB(Iallgatherv,
	(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, const int rcounts[],
	 const int displs[], MPI_Datatype rdt, MPI_Comm comm, MPI_Request *req),
	rtr__mpi_bytes_of(scount, sdt), -1, comm, req, sbuf, scount, sdt, rbuf, rcounts, displs,
	rdt, comm, req)
COLL_NB(Ialltoall,
	(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt,
	 MPI_Comm comm, MPI_Request *req),
	rtr__mpi_bytes_of(scount, sdt) * comm_size(comm), -1, comm, req, sbuf, scount, sdt, rbuf,
	rcount, rdt, comm, req)
COLL_NB(Ialltoallv,
	(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype sdt, void *rbuf,
	 const int rcounts[], const int rdispls[], MPI_Datatype rdt, MPI_Comm comm,
	 MPI_Request *req),
	bytes_of_v(scounts, comm_size(comm), sdt), -1, comm, req, sbuf, scounts, sdispls, sdt, rbuf,
	rcounts, rdispls, rdt, comm, req)
COLL_NB(Ialltoallw,
	(const void *sbuf, const int scounts[], const int sdispls[], const MPI_Datatype sdts[],
	 void *rbuf, const int rcounts[], const int rdispls[], const MPI_Datatype rdts[],
	 MPI_Comm comm, MPI_Request *req),
	0, -1, comm, req, sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts, comm, req)

/* ------------------------------------------------------------------------- */
/* The wrappers that make communicators: collective calls too                 */

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
	rtr__mpi_coll_begin("MPI_Comm_dup", comm, 0, -1);
	int rc = PMPI_Comm_dup(comm, newcomm);
	if (rc == MPI_SUCCESS)
		rtr__mpi_comm_made(comm, -1, *newcomm);
	rtr_end(CAT, "MPI_Comm_dup");
	return rc;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
	rtr__mpi_coll_begin("MPI_Comm_split", comm, 0, -1);
	int rc = PMPI_Comm_split(comm, color, key, newcomm);
	if (rc == MPI_SUCCESS)
		rtr__mpi_comm_made(comm, color, *newcomm);
	rtr_end(CAT, "MPI_Comm_split");
	return rc;
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
	rtr__mpi_coll_begin("MPI_Comm_create", comm, 0, -1);
	int rc = PMPI_Comm_create(comm, group, newcomm);
	if (rc == MPI_SUCCESS)
		rtr__mpi_comm_made(comm, -2, *newcomm);
	rtr_end(CAT, "MPI_Comm_create");
	return rc;
}

int MPI_Comm_free(MPI_Comm *comm)
{
	rtr__mpi_coll_begin("MPI_Comm_free", *comm, 0, -1);
	int rc = PMPI_Comm_free(comm); /* the attribute's delete drops its info */
	rtr_end(CAT, "MPI_Comm_free");
	return rc;
}
