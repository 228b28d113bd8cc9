/* SPDX-License-Identifier: MIT */
/*
 * Wait and Test, of one request, all, any or some: a slice each (count: the
 * requests), and for each request it completes that was a pending receive, the end of
 * its flow (match.c); the nonblocking collectives it completes are its argument
 * "collectives" (struct rtr__mpi_done). A test that completes nothing is a poll, one record that
 * the writer folds with the thread's polls around it (mpi_internal.h). A call with several copies
 * the handles first, as MPI sets the completed ones to MPI_REQUEST_NULL, unless no receive is
 * pending at all.
 */
#include "mpi/mpi_internal.h"

#include "common/atomic.h"

#include <stdlib.h>
#include <string.h>

/* Copies of the handles (MPI sets completed ones to MPI_REQUEST_NULL) and statuses
 * (the caller's may be MPI_STATUSES_IGNORE): on the stack for up to 64 requests. */
struct reqs {
	MPI_Request *h;
	MPI_Status *st;
	struct pending **taken; /* rtr__mpi_complete_take()'s entries, for complete_many() */
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
static void complete_many(struct reqs *r, int done, const int *index, struct rtr__mpi_done *colls)
{
	for (int k = 0; k < done; k++)
		r->taken[k] = rtr__mpi_complete_take(r->h[index != NULL ? index[k] : k], &r->st[k],
						     colls);
	for (int k = 0; k < done; k++)
		if (r->taken[k] != NULL)
			rtr__mpi_complete_finish(r->taken[k]);
}

/* Whether no receive is pending: then none of the requests a Wait or Test is given
 * can complete one, and it needs no copies (relaxed: see rtr__mpi_complete_take()). */
static int none_pending(void)
{
	return rtr_atomic_load_relaxed(&rtr__mpi.pending_count) == 0;
}

/* Whether a Waitsome or Testsome's outcount says it completed a request (none active:
 * MPI_UNDEFINED). */
static int some_done(int outcount)
{
	return outcount != 0 && outcount != MPI_UNDEFINED;
}

int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
	MPI_Status local;
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
	MPI_Request h = *req;
	struct rtr__mpi_done colls;

	rtr__mpi_done_init(&colls);
	rtr__mpi_count_begin("MPI_Wait", 1);
	int rc = PMPI_Wait(req, st);
	if (rc == MPI_SUCCESS)
		rtr__mpi_complete(h, st, &colls);
	rtr__mpi_done_say(&colls);
	rtr_end(CAT, "MPI_Wait");
	return rc;
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
	MPI_Status local;
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
	MPI_Request h = *req;
	uint64_t t0 = rtr__mpi_poll_start();
	struct rtr__mpi_done colls;

	if (t0 == 0)
		rtr__mpi_count_begin("MPI_Test", 1);
	int rc = PMPI_Test(req, flag, st);
	if (rtr__mpi_polled("MPI_Test", 1, t0, rc != MPI_SUCCESS || *flag))
		return rc;
	rtr__mpi_done_init(&colls);
	if (rc == MPI_SUCCESS && *flag)
		rtr__mpi_complete(h, st, &colls);
	rtr__mpi_done_say(&colls);
	rtr_end(CAT, "MPI_Test");
	return rc;
}

/* Waitall and Testall; Waitany and Testany; Waitsome and Testsome: one body each. A
 * test that completes nothing is a poll (rtr__mpi_polled()); an error is not. */
static int all(const char *name, int n, MPI_Request *reqs, int *flag, MPI_Status *statuses)
{
	struct reqs r;
	struct rtr__mpi_done colls;
	int rc, done = 1;
	uint64_t t0 = flag != NULL ? rtr__mpi_poll_start() : 0;

	rtr__mpi_done_init(&colls);
	if (t0 == 0)
		rtr__mpi_count_begin(name, n);
	if (none_pending() || reqs_init(&r, n, reqs, statuses) != 0) {
		rc = flag == NULL ? PMPI_Waitall(n, reqs, statuses)
				  : PMPI_Testall(n, reqs, flag, statuses);
		if (rtr__mpi_polled(name, n, t0, flag == NULL || rc != MPI_SUCCESS || *flag))
			return rc;
	} else {
		rc = flag == NULL ? PMPI_Waitall(n, reqs, r.st)
				  : PMPI_Testall(n, reqs, &done, r.st);
		if (flag != NULL)
			*flag = done;
		if (rtr__mpi_polled(name, n, t0, rc != MPI_SUCCESS || done)) {
			reqs_fini(&r, statuses);
			return rc;
		}
		/* A request in error has no message: its handle is left out (NULL). */
		for (int i = 0; done && rc != MPI_SUCCESS && i < n; i++)
			if (r.st[i].MPI_ERROR != MPI_SUCCESS)
				r.h[i] = MPI_REQUEST_NULL;
		if (done)
			complete_many(&r, n, NULL, &colls);
		reqs_fini(&r, statuses);
	}
	rtr__mpi_done_say(&colls);
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
	struct rtr__mpi_done colls;
	int rc, done = 1;
	uint64_t t0 = flag != NULL ? rtr__mpi_poll_start() : 0;

	rtr__mpi_done_init(&colls);
	if (t0 == 0)
		rtr__mpi_count_begin(name, n);
	if (none_pending() || reqs_init(&r, n, reqs, MPI_STATUSES_IGNORE) != 0) {
		rc = flag == NULL ? PMPI_Waitany(n, reqs, index, status)
				  : PMPI_Testany(n, reqs, index, flag, status);
		if (rtr__mpi_polled(name, n, t0,
				    flag == NULL || rc != MPI_SUCCESS ||
					    (*flag && *index != MPI_UNDEFINED)))
			return rc;
	} else {
		rc = flag == NULL ? PMPI_Waitany(n, reqs, index, st)
				  : PMPI_Testany(n, reqs, index, &done, st);
		if (flag != NULL)
			*flag = done;
		if (rtr__mpi_polled(name, n, t0,
				    rc != MPI_SUCCESS || (done && *index != MPI_UNDEFINED))) {
			reqs_fini(&r, MPI_STATUSES_IGNORE);
			return rc;
		}
		if (rc == MPI_SUCCESS && done && *index != MPI_UNDEFINED)
			rtr__mpi_complete(r.h[*index], st, &colls);
		reqs_fini(&r, MPI_STATUSES_IGNORE);
	}
	rtr__mpi_done_say(&colls);
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
	struct rtr__mpi_done colls;
	int rc;
	uint64_t t0 = test ? rtr__mpi_poll_start() : 0;

	rtr__mpi_done_init(&colls);
	if (t0 == 0)
		rtr__mpi_count_begin(name, n);
	if (none_pending() || reqs_init(&r, n, reqs, statuses) != 0) {
		rc = test ? PMPI_Testsome(n, reqs, outcount, indices, statuses)
			  : PMPI_Waitsome(n, reqs, outcount, indices, statuses);
		if (rtr__mpi_polled(name, n, t0, rc != MPI_SUCCESS || some_done(*outcount)))
			return rc;
	} else {
		rc = test ? PMPI_Testsome(n, reqs, outcount, indices, r.st)
			  : PMPI_Waitsome(n, reqs, outcount, indices, r.st);
		if (rtr__mpi_polled(name, n, t0, rc != MPI_SUCCESS || some_done(*outcount))) {
			reqs_fini(&r, statuses);
			return rc;
		}
		for (int i = 0; *outcount != MPI_UNDEFINED && rc != MPI_SUCCESS && i < *outcount;
		     i++)
			if (r.st[i].MPI_ERROR != MPI_SUCCESS)
				r.h[indices[i]] = MPI_REQUEST_NULL;
		if (*outcount != MPI_UNDEFINED)
			complete_many(&r, *outcount, indices, &colls);
		reqs_fini(&r, statuses);
	}
	rtr__mpi_done_say(&colls);
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
