/* SPDX-License-Identifier: MIT */
/*
 * The one-sided calls: a slice each; with a target, its peer (the target's rank in the
 * window's group, not translated to the world: a window has no info) and the origin's
 * bytes. Window creation is collective, a slice as collectives.c's. No flows.
 */
#include "mpi/mpi_internal.h"

#include <stdint.h>

static void rma_begin(const char *name, int target, int count, MPI_Datatype dt)
{
	if (!rtr_category_enabled(CAT))
		return;
	const struct rtr_arg args[] = {
		rtr__mpi_arg_i64("peer", target),
		rtr__mpi_arg_i64("bytes", rtr__mpi_bytes_of(count, dt)),
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
