/* SPDX-License-Identifier: MIT */
/*
 * Clock sync: a ping-pong with rank 0 on rtr__mpi.sync_comm. Rank 0 serves the ranks
 * in turn; rank r sends its clock t0, rank 0 answers with its clock o, r reads t1. o
 * was read between t0 and t1, so the offset (rank 0's clock - this one's) is within
 * [o - t1, o - t0]; each of the SYNC_ROUNDS rounds gives such an interval, and the
 * offset is in all of them: the estimate is the middle of their intersection, right
 * within half its width (error_ns). That is never worse than the round with the least
 * RTT alone (rtt_ns; its middle, right within rtt_ns / 2, is the estimate if the
 * intervals do not meet, as when a clock steps during the measurement), and much
 * better when the delays of the two ways differ from round to round. at_ns is the
 * middle of the measurement. The event is written with the format the merge reads
 * (docs/mpi.md, "Clock sync"); rank 0's own has offset 0. The Init and Finalize
 * wrappers measure at both ends of the run (init.c), rtr_mpi_sync() whenever the
 * program asks.
 */
#include "mpi/mpi_internal.h"

#include <ringtrace/mpi.h>

#include <errno.h>
#include <stdint.h>
#include <time.h>

#define SYNC_ROUNDS   50
#define SYNC_TAG      1
#define SYNC_GO_TAG   2
#define SYNC_DONE_TAG 3

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

int rtr__mpi_clock_sync(void)
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
	struct rtr__mpi_job job;
	int rc = rtr__mpi_clock_sync();

	/* with profiles, the job's so far (profile.c); every rank is here unless outside
	 * MPI_Init .. MPI_Finalize, which all of them are then */
	if (rc != -ENOTCONN && rtr__mpi_job_agree(&job))
		rtr__mpi_job_gather(&job, 0);
	return rc;
}
