/* SPDX-License-Identifier: MIT */
/*
 * The job profile at MPI_Finalize, and of the job so far at rtr_mpi_sync()
 * (docs/profile.md, "The job profile"), when the
 * session keeps a profile (RINGTRACE_MODE=profile, or RINGTRACE_PROFILE=1 beside a
 * trace): every rank's profile, its threads merged, gathered to rank 0 on the
 * module's private communicator (sizes, then the bytes: MPI_Gather and MPI_Gatherv),
 * which merges them and writes the job profile at the rank pattern with "job" for the
 * rank. First the ranks agree that all of them keep a profile (an MPI_Allreduce):
 * one that does not (another configuration) makes every rank skip it rather than
 * leave the others waiting. A rank whose export is empty (no memory) sends nothing
 * and counts as a rank without any call path.
 *
 * When the module started the session (it ends right after PMPI_Finalize), the rank's
 * own profile is written from the same moment as its export and is final: each rank
 * file then sums into the job profile exactly. MPI_Finalize's own slice ends once the
 * ranks agree, before the export (init.c), in a trace beside the profile too, so that
 * it is the same slice in both: the export, the gather and PMPI_Finalize's own work
 * come after it.
 */
#include "mpi/mpi_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Rank 0: the gathered exports merged and written. */
static void write_job(const char *path, const int *lens, const char *all, uint64_t began)
{
	int world = rtr__mpi.world_size;
	const char **data = calloc((size_t)world, sizeof(*data));
	size_t *sizes = calloc((size_t)world, sizeof(*sizes));
	size_t at = 0;

	if (data == NULL || sizes == NULL) {
		fprintf(stderr, "ringtrace: the job profile %s: out of memory\n", path);
		free(data);
		free(sizes);
		return;
	}
	for (int r = 0; r < world; r++) {
		data[r] = all + at;
		sizes[r] = (size_t)lens[r];
		at += (size_t)lens[r];
	}
	int err = rtr__profile_job_write(path, world, data, sizes, began);
	if (err != 0)
		fprintf(stderr, "ringtrace: writing the job profile %s failed: %s\n", path,
			strerror(-err));
	free(data);
	free(sizes);
}

int rtr__mpi_job_agree(struct rtr__mpi_job *job)
{
	int mine, all = 0;

	memset(job, 0, sizeof(*job));
	job->began = mono_ns();
	mine = rtr__profile_job_path(job->path, sizeof(job->path)) == 0;
	if (PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, rtr__mpi.sync_comm) != MPI_SUCCESS ||
	    !all) {
		if (mine && rtr__mpi.world_rank == 0)
			fprintf(stderr,
				"ringtrace: no job profile: not every rank keeps a profile\n");
		return 0;
	}
	job->on = 1;
	return 1;
}

void rtr__mpi_job_gather(struct rtr__mpi_job *job, int final)
{
	int rank = rtr__mpi.world_rank, world = rtr__mpi.world_size;
	MPI_Comm comm = rtr__mpi.sync_comm;
	int my_len;
	int *lens = rank == 0 ? calloc((size_t)world, sizeof(int)) : NULL;
	int *displs = rank == 0 ? calloc((size_t)world, sizeof(int)) : NULL;
	char *gathered = NULL;
	int ok = rank != 0 || (lens != NULL && displs != NULL);

	if (!job->on)
		return;
	if (rtr__profile_export(&job->data, &job->len, &job->cap, final && rtr__mpi.started_here) !=
		    0 ||
	    job->len > INT_MAX)
		job->len = 0; /* this rank counts as one without any call path */
	my_len = (int)job->len;
	/* rank 0 out of memory still takes part, receiving nothing */
	PMPI_Gather(&my_len, 1, MPI_INT, ok ? lens : NULL, ok ? 1 : 0, MPI_INT, 0, comm);
	if (rank == 0 && ok) {
		long long total = 0;
		for (int r = 0; r < world; r++) {
			if (total + lens[r] > INT_MAX)
				lens[r] = 0; /* past what one Gatherv holds: left out */
			displs[r] = (int)total;
			total += lens[r];
		}
		gathered = malloc(total > 0 ? (size_t)total : 1);
		ok = gathered != NULL;
	}
	PMPI_Gatherv(job->data, my_len, MPI_BYTE, gathered, ok ? lens : NULL, ok ? displs : NULL,
		     MPI_BYTE, 0, comm);
	if (rank == 0 && ok)
		write_job(job->path, lens, gathered, job->began);
	else if (rank == 0)
		fprintf(stderr, "ringtrace: the job profile %s: out of memory\n", job->path);
	free(gathered);
	free(lens);
	free(displs);
	if (job->data != NULL)
		rtr__profile_free(job->data, job->cap);
	job->data = NULL;
}
