/* SPDX-License-Identifier: MIT */
/*
 * The job's manifest (docs/mpi.md, "The job's manifest"): at MPI_Finalize every rank
 * sends rank 0 one line per file its session wrote (rank, host, pid, the path relative
 * to the manifest's directory when below it, the segment when there are several),
 * and rank 0 writes them in rank order at the name rtr__path_job() gives the
 * pattern, through a new file and rename(). On the module's private duplicate of the
 * world, before it is freed; every rank takes part, one whose recorder is not running
 * with no line.
 */
#include "mpi/mpi_internal.h"

#include "path/path.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define MAX_FILES 100000 /* a rank's files listed at most (segments kept) */

/* The path pattern the Init wrapper started the recorder with. */
static const char *pattern_of(void)
{
	const char *v = getenv("RINGTRACE_FILE");

	return v != NULL && *v != '\0' ? v : "ringtrace-%r.json";
}

/* path made absolute (the working directory before a relative one). */
static int absolute(const char *path, char *out, size_t size)
{
	char cwd[PATH_MAX];
	int n;

	if (path[0] == '/')
		n = snprintf(out, size, "%s", path);
	else if (getcwd(cwd, sizeof(cwd)) == NULL)
		return -errno;
	else
		n = snprintf(out, size, "%s/%s", cwd,
			     path[0] == '.' && path[1] == '/' ? path + 2 : path);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* s as a JSON string's content: '"' and '\' escaped, control bytes as \u00XX. */
static void put_escaped(FILE *f, const char *s)
{
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
}

/* This rank's lines, each ",\n{...}", into a malloc'd text (*len bytes); NULL with
 * *len 0 when it has none. dir: the manifest's directory, absolute, with its '/'. */
static char *rank_lines(const char *dir, int *len)
{
	char path[PATH_MAX], abs[PATH_MAX], host[256];
	size_t size = 0, dir_len = strlen(dir);
	char *text = NULL;
	uint64_t n = 0;

	*len = 0;
	/* what was recorded is in its segment: the writer is up to a flush interval
	 * behind, and would begin segments after the list */
	rtr_flush();
	while (n < MAX_FILES && rtr__session_file(n, path, sizeof(path)) == 0)
		n++;
	if (n == 0 || gethostname(host, sizeof(host)) != 0)
		return NULL;
	host[sizeof(host) - 1] = '\0';
	FILE *f = open_memstream(&text, &size);
	if (f == NULL)
		return NULL;
	for (uint64_t i = 0; i < n; i++) {
		if (rtr__session_file(i, path, sizeof(path)) != 0 ||
		    absolute(path, abs, sizeof(abs)) != 0)
			continue;
		const char *shown = strncmp(abs, dir, dir_len) == 0 ? abs + dir_len : abs;
		fprintf(f, ",\n{\"rank\":%d,\"host\":\"", rtr__mpi.world_rank);
		put_escaped(f, host);
		fprintf(f, "\",\"pid\":%ld,\"path\":\"", (long)getpid());
		put_escaped(f, shown);
		if (n > 1)
			fprintf(f, "\",\"segment\":%llu}", (unsigned long long)i);
		else
			fputs("\"}", f);
	}
	if (fclose(f) != 0 || size > INT32_MAX) {
		free(text);
		return NULL;
	}
	*len = (int)size;
	return text;
}

/* Rank 0: the manifest at path, its files' lines gathered in text (len bytes). */
static void write_manifest(const char *path, const char *text, size_t len)
{
	char tmp[PATH_MAX + 32], failed[PATH_MAX] = "";
	int err = rtr__path_make_dirs(path, failed, sizeof(failed));
	FILE *f = NULL;

	if (err == 0 && snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid()) < 0)
		err = -EINVAL;
	int fd = err == 0 ? open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644) : -1;
	if (err == 0 && (fd < 0 || (f = fdopen(fd, "w")) == NULL)) {
		err = -errno;
		if (fd >= 0)
			close(fd);
	}
	if (f != NULL) {
		fputs("{\"schema_version\":1,\"type\":\"ringtrace manifest\",\"pattern\":\"", f);
		put_escaped(f, pattern_of());
		fprintf(f, "\",\"world_size\":%d,\"files\":[", rtr__mpi.world_size);
		if (len > 1)
			fwrite(text + 1, 1, len - 1, f); /* the first line's ',' left out */
		fputs("\n]}\n", f);
		err = ferror(f) ? -EIO : 0;
		if (fclose(f) != 0 && err == 0)
			err = -errno;
		if (err == 0 && rename(tmp, path) != 0)
			err = -errno;
		if (err != 0)
			unlink(tmp);
	}
	if (err != 0)
		fprintf(stderr, "ringtrace: cannot write the job's manifest %s: %s%s%s\n", path,
			strerror(-err), failed[0] != '\0' ? ": cannot create the directory " : "",
			failed);
}

void rtr__mpi_manifest(void)
{
	char name[PATH_MAX], abs[PATH_MAX], host[256] = "";
	MPI_Comm comm = rtr__mpi.sync_comm;
	int me = rtr__mpi.world_rank, n = rtr__mpi.world_size, len = 0, ok = 1;
	char *lines = NULL, *all = NULL;
	int *lens = NULL, *at = NULL;

	gethostname(host, sizeof(host) - 1);
	/* rank 0's name for it, and its directory, made absolute alike on every rank */
	if (rtr__path_job(name, sizeof(name), pattern_of(), getpid(), host, ".manifest.json") ==
		    0 &&
	    absolute(name, abs, sizeof(abs)) == 0) {
		*(strrchr(abs, '/') + 1) = '\0';
		lines = rank_lines(abs, &len);
	}
	if (me == 0) {
		lens = calloc((size_t)n, sizeof(*lens));
		at = calloc((size_t)n, sizeof(*at));
		ok = lens != NULL && at != NULL;
	}
	/* a rank 0 without room receives nothing: every rank learns it first */
	PMPI_Bcast(&ok, 1, MPI_INT, 0, comm);
	if (ok)
		PMPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, comm);
	size_t total = 0;
	if (ok && me == 0) {
		for (int r = 0; r < n; r++) {
			at[r] = (int)total;
			total += (size_t)lens[r];
		}
		ok = total <= INT32_MAX && (all = malloc(total + 1)) != NULL;
	}
	PMPI_Bcast(&ok, 1, MPI_INT, 0, comm);
	if (ok)
		PMPI_Gatherv(lines != NULL ? lines : "", len, MPI_CHAR, all, lens, at, MPI_CHAR, 0,
			     comm);
	if (ok && me == 0 && total > 0)
		write_manifest(name, all, total);
	else if (!ok && me == 0)
		fprintf(stderr, "ringtrace: no memory for the job's manifest of %d ranks\n", n);
	free(all);
	free(at);
	free(lens);
	free(lines);
}
