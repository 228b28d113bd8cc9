/* SPDX-License-Identifier: MIT */
/*
 * libringtrace-tools-mpi.so: the MPI step of the tools' spread (tools/lib/spread.h),
 * a plugin that the `ringtrace` command loads only when a launcher started it, so that
 * the command itself never links MPI. Its three functions are what spread.h names
 * (SPREAD_MPI_OPEN, _GATHER, _SHARE, _CLOSE): MPI_Init, a gather of byte strings of
 * any length on rank 0 (their lengths first, then each rank's bytes in pieces that fit
 * an int count), rank 0's bytes broadcast the same way, MPI_Finalize.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The largest piece sent at once: MPI counts are int. */
#define PIECE ((size_t)1 << 30)

__attribute__((visibility("default"))) int rtr_tools_mpi_open(int *rank, int *size);
__attribute__((visibility("default"))) int rtr_tools_mpi_gather(const void *bytes, size_t len,
								void **all, size_t *lens);
__attribute__((visibility("default"))) int rtr_tools_mpi_share(void **bytes, size_t *len);
__attribute__((visibility("default"))) void rtr_tools_mpi_close(void);

int rtr_tools_mpi_open(int *rank, int *size)
{
	int started = 0;

	if (MPI_Initialized(&started) != MPI_SUCCESS ||
	    (!started && MPI_Init(NULL, NULL) != MPI_SUCCESS))
		return -1;
	if (MPI_Comm_rank(MPI_COMM_WORLD, rank) != MPI_SUCCESS ||
	    MPI_Comm_size(MPI_COMM_WORLD, size) != MPI_SUCCESS)
		return -1;
	return 0;
}

int rtr_tools_mpi_gather(const void *bytes, size_t len, void **all, size_t *lens)
{
	int rank, size, err = 0;
	uint64_t mine = len, *got = NULL;
	uint64_t total = 0, base = 0;
	char *out = NULL;

	*all = NULL;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (rank == 0 && (got = calloc((size_t)size, sizeof(*got))) == NULL)
		MPI_Abort(MPI_COMM_WORLD, 2); /* the others would wait for ever */
	if (MPI_Gather(&mine, 1, MPI_UINT64_T, got, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD) !=
	    MPI_SUCCESS) {
		free(got);
		return -1;
	}
	if (rank != 0) {
		for (size_t at = 0; at < len; at += PIECE) {
			size_t n = len - at < PIECE ? len - at : PIECE;

			if (MPI_Send((const char *)bytes + at, (int)n, MPI_BYTE, 0, 0,
				     MPI_COMM_WORLD) != MPI_SUCCESS)
				return -1;
		}
		return 0;
	}
	for (int r = 0; r < size; r++)
		total += got[r];
	out = malloc(total > 0 ? total : 1);
	if (out == NULL)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (int r = 0; r < size; base += got[r], r++) {
		lens[r] = got[r];
		if (r == 0) {
			if (len > 0)
				memcpy(out, bytes, len);
			continue;
		}
		for (size_t done = 0; done < got[r]; done += PIECE) {
			size_t n = got[r] - done < PIECE ? got[r] - done : PIECE;

			if (MPI_Recv(out + base + done, (int)n, MPI_BYTE, r, 0, MPI_COMM_WORLD,
				     MPI_STATUS_IGNORE) != MPI_SUCCESS)
				err = -1;
		}
	}
	free(got);
	*all = out;
	return err;
}

int rtr_tools_mpi_share(void **bytes, size_t *len)
{
	int rank;
	uint64_t n = *len;
	char *at;

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (MPI_Bcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
		return -1;
	if (rank != 0) {
		*bytes = NULL;
		*len = 0;
		if (n == 0)
			return 0;
		if (n > SIZE_MAX || (*bytes = malloc((size_t)n)) == NULL)
			MPI_Abort(MPI_COMM_WORLD, 2); /* rank 0 would send to no one */
		*len = (size_t)n;
	}
	at = *bytes;
	for (uint64_t done = 0; done < n; done += PIECE) {
		size_t piece = n - done < PIECE ? (size_t)(n - done) : PIECE;

		if (MPI_Bcast(at + done, (int)piece, MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
			return -1;
	}
	return 0;
}

void rtr_tools_mpi_close(void)
{
	int done = 0;

	if (MPI_Finalized(&done) == MPI_SUCCESS && !done)
		MPI_Finalize();
}
