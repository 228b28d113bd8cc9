/* SPDX-License-Identifier: MIT */
/*
 * An MPI program that knows nothing of ringtrace, for test_mpi (run under mpirun -np 4
 * with LD_PRELOAD=libringtrace-mpi.so). It prints nothing; its message pattern is
 * what test_mpi checks the flows of:
 *	- wildcards: ranks 1..3 send one message each to rank 0, tag = rank, which
 *	  receives them with MPI_ANY_SOURCE/MPI_ANY_TAG (blocking); after a barrier ranks 1..3 send
 *	  one more each that rank 0 takes with an Irecv(MPI_ANY_SOURCE) and MPI_Waitany;
 *	- the same tag in a row: rank 1 sends SAME messages of tag 7 to rank 2 (Send,
 *	  then Isend + Waitall), rank 2 takes them with Irecvs + Waitall and blocking Recvs;
 *	- a ring of Sendrecv, a Sendrecv_replace, an Issend completed by MPI_Test polling;
 *	- a communicator from MPI_Comm_split with a message inside it;
 *	- collectives: Barrier, Bcast, Reduce, Allreduce, Gather, Scatter, Allgather,
 *	  Alltoall, Scan, their v forms, Exscan, Reduce_scatter; Ibarrier, Ibcast and
 *	  Iallreduce completed by Testall and Waitsome;
 *	- an Ssend on a Comm_dup of the world, found by Iprobe polling (one more flow);
 *	- persistent requests around the ring (Send_init, Recv_init; Startall, Start);
 *	- matched probes: a wildcard Mprobe with Mrecv, Improbe polling with Imrecv;
 *	- the other nonblocking collectives (Ireduce ... Ireduce_scatter_block) under one
 *	  Waitall, Reduce_scatter_block, Alltoallw;
 *	- one-sided: Put, Get, Accumulate in Win_fence epochs, a Get under Win_lock; in an
 *	  allocated window under Win_lock_all, Rput, Win_flush, Fetch_and_op,
 *	  Compare_and_swap, Get_accumulate, Win_flush_all; a post-start-complete-wait
 *	  epoch.
 * `mpi_patterns order`: receives that MPI matches in another order than they complete
 * in. Rank 1 sends three messages of tag 15 to rank 0, which posts Irecv(MPI_ANY_SOURCE,
 * 15), Irecv(1, 15), Irecv(1, 15) and waits for them last to first: the wildcard has
 * the first message, though it completes last. Then two of tag 16, which rank 0 takes
 * with an Irecv(1, MPI_ANY_TAG) posted before a blocking Recv(1, 16) that completes
 * first, and a Wait for the Irecv after it.
 * `mpi_patterns kill`: rank 1 sends to rank 0, waits until its trace (RINGTRACE_FILE,
 * %r its rank) holds the MPI_Send (the writer's periodic flush; at most 20 s), and
 * kills itself with SIGKILL before MPI_Finalize.
 * `mpi_patterns polls`: rank 0 polls POLLS rounds of MPI_Testany (two receives from
 * rank 1, tags 20 and 22), MPI_Test (the first) and MPI_Iprobe (tag 23) while rank 1
 * waits for its go-ahead, so that none can complete; then sends the go-ahead (tag 19),
 * after which rank 1 sends tags 20, 22 and 23, and rank 0 polls with MPI_Testany until
 * both receives complete and with MPI_Iprobe until it finds the third, which it
 * receives with MPI_Recv.
 * `mpi_patterns threads`: at MPI_THREAD_MULTIPLE (exit 77 if MPI does not provide it),
 * ranks 2k and 2k + 1 exchange THREAD_ROUNDS messages in each of THREADS threads at
 * once, thread t on tag t: Irecv, Isend, then Waitall or two Waits, in turn.
 */
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SAME	      6
#define POLLS	      100
#define THREADS	      3
#define THREAD_ROUNDS 250

static int thread_peer;

static void *exchange(void *arg)
{
	int tag = (int)(long)arg, in = 0, out = tag;

	for (int i = 0; i < THREAD_ROUNDS; i++) {
		MPI_Request req[2];
		MPI_Irecv(&in, 1, MPI_INT, thread_peer, tag, MPI_COMM_WORLD, &req[0]);
		MPI_Isend(&out, 1, MPI_INT, thread_peer, tag, MPI_COMM_WORLD, &req[1]);
		if (i % 2 == 0) {
			MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
		} else {
			MPI_Wait(&req[1], MPI_STATUS_IGNORE);
			MPI_Wait(&req[0], MPI_STATUS_IGNORE);
		}
	}
	return NULL;
}

static int threads(int *argc, char ***argv)
{
	pthread_t th[THREADS];
	int provided, rank;

	MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
	if (provided < MPI_THREAD_MULTIPLE) {
		MPI_Finalize();
		return 77;
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	thread_peer = rank ^ 1;
	for (long t = 0; t < THREADS; t++)
		pthread_create(&th[t], NULL, exchange, (void *)t);
	for (int t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	MPI_Finalize();
	return 0;
}

/* `mpi_patterns polls`: see the top. */
static void polls(int rank)
{
	int v = 0, buf[2] = {0}, index, flag, done = 0;
	MPI_Request req[2];

	if (rank == 1) {
		MPI_Recv(&v, 1, MPI_INT, 0, 19, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		for (int tag = 20; tag <= 23; tag++)
			if (tag != 21)
				MPI_Send(&tag, 1, MPI_INT, 0, tag, MPI_COMM_WORLD);
	}
	if (rank != 0)
		return;
	MPI_Irecv(&buf[0], 1, MPI_INT, 1, 20, MPI_COMM_WORLD, &req[0]);
	MPI_Irecv(&buf[1], 1, MPI_INT, 1, 22, MPI_COMM_WORLD, &req[1]);
	for (int i = 0; i < POLLS; i++) {
		MPI_Testany(2, req, &index, &flag, MPI_STATUS_IGNORE);
		done |= flag;
		MPI_Test(&req[0], &flag, MPI_STATUS_IGNORE);
		done |= flag;
		MPI_Iprobe(1, 23, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
		done |= flag;
	}
	if (done) /* rank 1 has sent nothing yet */
		MPI_Abort(MPI_COMM_WORLD, 4);
	MPI_Send(&v, 1, MPI_INT, 1, 19, MPI_COMM_WORLD);
	while (done < 2) {
		MPI_Testany(2, req, &index, &flag, MPI_STATUS_IGNORE);
		done += flag && index != MPI_UNDEFINED;
	}
	for (flag = 0; !flag;)
		MPI_Iprobe(1, 23, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
	MPI_Recv(&v, 1, MPI_INT, 1, 23, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	if (buf[0] != 20 || buf[1] != 22 || v != 23)
		MPI_Abort(MPI_COMM_WORLD, 5);
}

/* Whether the file at path holds text. */
static int file_holds(const char *path, const char *text)
{
	static char buf[1 << 20];
	FILE *f = fopen(path, "r");
	size_t n;

	if (f == NULL)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strstr(buf, text) != NULL;
}

/* Until this rank's trace holds text, or 20 s have passed: the writer writes what was
 * recorded every 100 ms, but a loaded machine can keep it off the CPU for longer than
 * any fixed pause (test_mpi's check then fails, rather than this rank waiting on). */
static void wait_for_in_trace(int rank, const char *text)
{
	const char *pattern = getenv("RINGTRACE_FILE");
	const char *r = pattern != NULL ? strstr(pattern, "%r") : NULL;
	char path[4096];

	if (r == NULL)
		return;
	snprintf(path, sizeof(path), "%.*s%d%s", (int)(r - pattern), pattern, rank, r + 2);
	for (int i = 0; i < 2000 && !file_holds(path, text); i++)
		nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
}

int main(int argc, char **argv)
{
	int rank, size, v = 0, buf[16] = {0}, out[16] = {0};
	MPI_Status st;

	if (argc > 1 && strcmp(argv[1], "threads") == 0)
		return threads(&argc, &argv);
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	if (argc > 1 && strcmp(argv[1], "order") == 0) {
		if (rank == 1) {
			for (int i = 0; i < 3; i++)
				MPI_Send(&i, 1, MPI_INT, 0, 15, MPI_COMM_WORLD);
			for (int i = 0; i < 2; i++)
				MPI_Send(&i, 1, MPI_INT, 0, 16, MPI_COMM_WORLD);
		} else if (rank == 0) {
			MPI_Request req[3];
			MPI_Irecv(&buf[0], 1, MPI_INT, MPI_ANY_SOURCE, 15, MPI_COMM_WORLD, &req[0]);
			MPI_Irecv(&buf[1], 1, MPI_INT, 1, 15, MPI_COMM_WORLD, &req[1]);
			MPI_Irecv(&buf[2], 1, MPI_INT, 1, 15, MPI_COMM_WORLD, &req[2]);
			for (int i = 2; i >= 0; i--)
				MPI_Wait(&req[i], &st);
			MPI_Irecv(&buf[3], 1, MPI_INT, 1, MPI_ANY_TAG, MPI_COMM_WORLD, &req[0]);
			MPI_Recv(&v, 1, MPI_INT, 1, 16, MPI_COMM_WORLD, &st);
			MPI_Wait(&req[0], &st);
			/* what MPI did: the wildcards took the first of each tag */
			if (buf[0] != 0 || buf[1] != 1 || buf[2] != 2 || buf[3] != 0 || v != 1)
				MPI_Abort(MPI_COMM_WORLD, 3);
		}
		MPI_Finalize();
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "polls") == 0) {
		polls(rank);
		MPI_Finalize();
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "kill") == 0) {
		if (rank == 1) {
			MPI_Send(&rank, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
			wait_for_in_trace(rank, "\"name\":\"MPI_Send\"");
			raise(SIGKILL);
		}
		if (rank == 0)
			MPI_Recv(&v, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, &st);
		MPI_Barrier(MPI_COMM_WORLD); /* never completes: mpirun ends the job */
		MPI_Finalize();
		return 0;
	}

	/* wildcards */
	if (rank == 0) {
		for (int i = 1; i < size; i++)
			MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
		MPI_Barrier(MPI_COMM_WORLD); /* the tag 5 messages come after */
		MPI_Request req[3];
		for (int i = 0; i < size - 1; i++)
			MPI_Irecv(&buf[i], 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &req[i]);
		for (int i = 0; i < size - 1; i++) {
			int index;
			MPI_Waitany(size - 1, req, &index, &st);
		}
	} else {
		MPI_Send(&rank, 1, MPI_INT, 0, rank, MPI_COMM_WORLD);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Send(&rank, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
	}

	/* the same tag in a row, blocking and nonblocking on each side */
	if (rank == 1) {
		MPI_Request req[SAME / 2];
		for (int i = 0; i < SAME / 2; i++)
			MPI_Send(&i, 1, MPI_INT, 2, 7, MPI_COMM_WORLD);
		for (int i = 0; i < SAME / 2; i++)
			MPI_Isend(&out[i], 1, MPI_INT, 2, 7, MPI_COMM_WORLD, &req[i]);
		MPI_Waitall(SAME / 2, req, MPI_STATUSES_IGNORE);
	} else if (rank == 2) {
		MPI_Request req[SAME / 2];
		for (int i = 0; i < SAME / 2; i++)
			MPI_Irecv(&buf[i], 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &req[i]);
		MPI_Waitall(SAME / 2, req, MPI_STATUSES_IGNORE);
		for (int i = 0; i < SAME / 2; i++)
			MPI_Recv(&v, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	}

	/* a ring of Sendrecv, then Sendrecv_replace the other way */
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	MPI_Sendrecv(&rank, 1, MPI_INT, right, 9, &v, 1, MPI_INT, left, 9, MPI_COMM_WORLD, &st);
	MPI_Sendrecv_replace(&v, 1, MPI_INT, left, 10, right, 10, MPI_COMM_WORLD, &st);

	/* an Issend completed by polling, received after a probe */
	if (rank == 3) {
		MPI_Request req;
		int done = 0;
		MPI_Issend(&rank, 1, MPI_INT, 0, 11, MPI_COMM_WORLD, &req);
		while (!done)
			MPI_Test(&req, &done, MPI_STATUS_IGNORE);
	} else if (rank == 0) {
		MPI_Probe(3, 11, MPI_COMM_WORLD, &st);
		MPI_Recv(&v, 1, MPI_INT, 3, 11, MPI_COMM_WORLD, &st);
	}

	/* a message inside a communicator of its own: the odd and the even ranks */
	MPI_Comm half;
	int hrank;
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
	MPI_Comm_rank(half, &hrank);
	if (hrank == 0)
		MPI_Send(&rank, 1, MPI_INT, 1, 7, half);
	else if (hrank == 1)
		MPI_Recv(&v, 1, MPI_INT, 0, 7, half, &st);
	MPI_Comm_free(&half);

	/* collectives */
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Bcast(buf, 4, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Reduce(&rank, &v, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	MPI_Allreduce(&rank, &v, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Gather(&rank, 1, MPI_INT, buf, 1, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Scatter(buf, 1, MPI_INT, &v, 1, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Allgather(&rank, 1, MPI_INT, buf, 1, MPI_INT, MPI_COMM_WORLD);
	MPI_Alltoall(out, 1, MPI_INT, buf, 1, MPI_INT, MPI_COMM_WORLD);
	MPI_Scan(&rank, &v, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

	/* the v-collectives, Exscan, Reduce_scatter, the nonblocking collectives */
	int ones[4] = {1, 1, 1, 1}, displs[4] = {0, 1, 2, 3};
	MPI_Gatherv(&rank, 1, MPI_INT, buf, ones, displs, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Scatterv(buf, ones, displs, MPI_INT, &v, 1, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Allgatherv(&rank, 1, MPI_INT, buf, ones, displs, MPI_INT, MPI_COMM_WORLD);
	MPI_Alltoallv(out, ones, displs, MPI_INT, buf, ones, displs, MPI_INT, MPI_COMM_WORLD);
	MPI_Exscan(&rank, &v, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Reduce_scatter(out, &v, ones, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Request creq[3];
	int done = 0, outcount = 0, idx[3];
	MPI_Ibarrier(MPI_COMM_WORLD, &creq[0]);
	MPI_Ibcast(buf, 2, MPI_INT, 0, MPI_COMM_WORLD, &creq[1]);
	MPI_Iallreduce(&rank, &v, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &creq[2]);
	MPI_Testall(3, creq, &done, MPI_STATUSES_IGNORE);
	while (!done) {
		MPI_Waitsome(3, creq, &outcount, idx, MPI_STATUSES_IGNORE);
		done = outcount == MPI_UNDEFINED;
	}

	/* a synchronous send on a duplicate of the world, received with Iprobe polling */
	MPI_Comm dup;
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	if (rank == 0) {
		MPI_Ssend(&rank, 1, MPI_INT, 1, 12, dup);
	} else if (rank == 1) {
		int flag = 0;
		while (!flag)
			MPI_Iprobe(0, 12, dup, &flag, MPI_STATUS_IGNORE);
		MPI_Recv(&v, 1, MPI_INT, 0, 12, dup, MPI_STATUS_IGNORE);
	}
	MPI_Comm_free(&dup);

	/* persistent requests around the ring: two rounds of Startall, one of Start */
	MPI_Request preq[2];
	MPI_Send_init(&rank, 1, MPI_INT, right, 13, MPI_COMM_WORLD, &preq[0]);
	MPI_Recv_init(&v, 1, MPI_INT, left, 13, MPI_COMM_WORLD, &preq[1]);
	for (int i = 0; i < 2; i++) {
		MPI_Startall(2, preq);
		MPI_Waitall(2, preq, MPI_STATUSES_IGNORE);
	}
	MPI_Start(&preq[1]);
	MPI_Start(&preq[0]);
	MPI_Wait(&preq[0], MPI_STATUS_IGNORE);
	MPI_Wait(&preq[1], &st);
	MPI_Request_free(&preq[0]);
	MPI_Request_free(&preq[1]);

	/* matched probes: rank 2 sends two to rank 3, which takes the first with a
	 * wildcard Mprobe and Mrecv, the second with Improbe polling and Imrecv */
	if (rank == 2) {
		MPI_Send(&rank, 1, MPI_INT, 3, 14, MPI_COMM_WORLD);
		MPI_Send(&rank, 1, MPI_INT, 3, 14, MPI_COMM_WORLD);
	} else if (rank == 3) {
		MPI_Message msg;
		MPI_Request req;
		int flag = 0;
		MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &msg, &st);
		MPI_Mrecv(&v, 1, MPI_INT, &msg, &st);
		while (!flag)
			MPI_Improbe(2, 14, MPI_COMM_WORLD, &flag, &msg, &st);
		MPI_Imrecv(&v, 1, MPI_INT, &msg, &req);
		MPI_Wait(&req, &st);
	}

	/* the other nonblocking collectives, completed together; two more blocking */
	MPI_Request nreq[8];
	int nbuf[8][4];
	MPI_Ireduce(&rank, nbuf[0], 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, &nreq[0]);
	MPI_Ialltoall(out, 1, MPI_INT, nbuf[1], 1, MPI_INT, MPI_COMM_WORLD, &nreq[1]);
	MPI_Igather(&rank, 1, MPI_INT, nbuf[2], 1, MPI_INT, 0, MPI_COMM_WORLD, &nreq[2]);
	MPI_Iscatter(out, 1, MPI_INT, nbuf[3], 1, MPI_INT, 0, MPI_COMM_WORLD, &nreq[3]);
	MPI_Iallgather(&rank, 1, MPI_INT, nbuf[4], 1, MPI_INT, MPI_COMM_WORLD, &nreq[4]);
	MPI_Iscan(&rank, nbuf[5], 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &nreq[5]);
	MPI_Iexscan(&rank, nbuf[6], 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &nreq[6]);
	MPI_Ireduce_scatter_block(out, nbuf[7], 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &nreq[7]);
	MPI_Waitall(8, nreq, MPI_STATUSES_IGNORE);
	MPI_Reduce_scatter_block(out, &v, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Datatype ints[4] = {MPI_INT, MPI_INT, MPI_INT, MPI_INT};
	int byte_displs[4] = {0, sizeof(int), 2 * sizeof(int), 3 * sizeof(int)};
	MPI_Alltoallw(out, ones, byte_displs, ints, buf, ones, byte_displs, ints, MPI_COMM_WORLD);

	/* one-sided: fence epochs with Put, Get, Accumulate, then a lock epoch */
	int winbuf[4] = {0};
	MPI_Win win;
	MPI_Win_create(winbuf, sizeof(winbuf), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	MPI_Win_fence(0, win);
	MPI_Put(&rank, 1, MPI_INT, right, 0, 1, MPI_INT, win);
	MPI_Win_fence(0, win);
	MPI_Get(&v, 1, MPI_INT, left, 0, 1, MPI_INT, win);
	MPI_Win_fence(0, win);
	MPI_Accumulate(&rank, 1, MPI_INT, 0, 1, 1, MPI_INT, MPI_SUM, win);
	MPI_Win_fence(0, win);
	MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
	MPI_Get(&v, 1, MPI_INT, right, 2, 1, MPI_INT, win);
	MPI_Win_unlock(right, win);
	MPI_Win_free(&win);

	/* one-sided, the rest: request-based and atomic calls under lock_all; a
	 * post-start-complete-wait epoch (each rank is accessed by its left neighbour) */
	int *abuf, one = 1, old = 0, zero = 0;
	MPI_Request rreq;
	MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &abuf, &win);
	memset(abuf, 0, 4 * sizeof(int));
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock_all(0, win);
	MPI_Rput(&rank, 1, MPI_INT, right, 0, 1, MPI_INT, win, &rreq);
	MPI_Wait(&rreq, MPI_STATUS_IGNORE);
	MPI_Win_flush(right, win);
	MPI_Fetch_and_op(&one, &old, MPI_INT, 0, 1, MPI_SUM, win);
	MPI_Compare_and_swap(&one, &zero, &old, MPI_INT, right, 2, win);
	MPI_Get_accumulate(&one, 1, MPI_INT, &old, 1, MPI_INT, left, 3, 1, MPI_INT, MPI_SUM, win);
	MPI_Win_flush_all(win);
	MPI_Win_unlock_all(win);
	MPI_Group world_group, left_group, right_group;
	MPI_Comm_group(MPI_COMM_WORLD, &world_group);
	MPI_Group_incl(world_group, 1, &left, &left_group);
	MPI_Group_incl(world_group, 1, &right, &right_group);
	MPI_Win_post(left_group, 0, win);
	MPI_Win_start(right_group, 0, win);
	MPI_Put(&rank, 1, MPI_INT, right, 0, 1, MPI_INT, win);
	MPI_Win_complete(win);
	MPI_Win_wait(win);
	MPI_Group_free(&left_group);
	MPI_Group_free(&right_group);
	MPI_Group_free(&world_group);
	MPI_Win_free(&win);
	MPI_Finalize();
	return 0;
}
