/* SPDX-License-Identifier: MIT */
/*
 * Opening a trace file: the first one at rtr_start(), each later segment and
 * snapshot from the writer. Safe against what may already be at the path (below).
 */
#include "sink/trace_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Paths that name the descriptor the program inherited rather than a file. */
static int inherited_fd(const char *path)
{
	if (strcmp(path, "-") == 0 || strcmp(path, "/dev/stdout") == 0)
		return STDOUT_FILENO;
	if (strcmp(path, "/dev/stderr") == 0)
		return STDERR_FILENO;
	return -1;
}

/*
 * Open s->path for writing: s->fd, and s->tmp_path when rtr_start() renames it there.
 *
 * "-", /dev/stdout, /dev/stderr: a copy of the inherited descriptor, so that stop
 * closes ours only. (They are symlinks to /proc/self/fd/N, which O_NOFOLLOW refuses.)
 *
 * Something that is there and is not a regular file (a FIFO, a tty, /dev/null) is
 * opened in place, O_NONBLOCK: a FIFO with no reader is ENXIO, not an open() that
 * never returns while holding the lifecycle lock; it is tried again for wait_ms (and
 * O_NOCTTY: a tty must not become the program's controlling terminal).
 *
 * A regular file is never written in place: the trace goes to a new file beside it,
 * created 0644 less the umask, which replaces the path by rename() once the start
 * cannot fail. So a failed start leaves a file that was there byte for byte, and a
 * file another user made at the path (root tracing into a shared directory) is
 * replaced, never written through with that user's owner and mode. Every open is
 * O_NOFOLLOW: a symlink at the path is ELOOP, and rename() replaces a link planted
 * meanwhile instead of following it. One exception: a file of our own in a directory
 * where we may not create one is written in place, truncated only once the start is
 * certain.
 */
/*
 * Open something that is there and is not a regular file, O_NONBLOCK; a FIFO that has
 * no reader yet (ENXIO) is tried again, more slowly each time, for wait_ms at most (0:
 * not again), so that a reader started just before the program has time to open it.
 */
static int open_in_place(const char *path, unsigned wait_ms)
{
	const int flags = O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
	uint64_t waited_us = 0, step_us = 200;
	struct stat st;
	int fd;

	while ((fd = open(path, flags)) < 0 && errno == ENXIO &&
	       waited_us < (uint64_t)wait_ms * 1000 && stat(path, &st) == 0 &&
	       S_ISFIFO(st.st_mode)) {
		struct timespec nap = {0, (long)step_us * 1000};
		nanosleep(&nap, NULL);
		waited_us += step_us;
		step_us = step_us < 50000 ? step_us * 2 : step_us;
	}
	return fd;
}

int rtr__trace_open(const char *path, pid_t pid, unsigned wait_ms, int *fd_out, char *tmp_path,
		    size_t tmp_size, int *truncate)
{
	int std = inherited_fd(path);
	struct stat st;
	int fd, err = 0, ours = 0;

	tmp_path[0] = '\0';
	*truncate = 0;
	if (std >= 0) {
		*fd_out = fcntl(std, F_DUPFD_CLOEXEC, 3);
		return *fd_out < 0 ? -errno : 0;
	}
	fd = open_in_place(path, wait_ms);
	if (fd >= 0) {
		if (fstat(fd, &st) != 0) {
			err = -errno;
			close(fd);
			return err;
		}
		if (!S_ISREG(st.st_mode)) {
			*fd_out = fd;
			return 0;
		}
		ours = st.st_uid == geteuid();
		close(fd);
	} else if (errno != ENOENT) {
		return -errno;
	}
	for (unsigned i = 0;; i++) {
		if ((size_t)snprintf(tmp_path, tmp_size, "%s.%ld-%u.tmp", path, (long)pid, i) >=
		    tmp_size) {
			tmp_path[0] = '\0';
			return -ENAMETOOLONG;
		}
		fd = open(tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (fd >= 0)
			break;
		if (errno != EEXIST || i == 99) {
			err = -errno;
			tmp_path[0] = '\0';
			break;
		}
	}
	if (fd >= 0) {
		*fd_out = fd;
		return 0;
	}
	/* A directory we may not create in, holding a file of ours: write that in place,
	 * cut to 0 only once the start is certain (rtr__writer_start()). */
	if (!ours || (err != -EACCES && err != -EPERM && err != -EROFS))
		return err;
	fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	*fd_out = fd;
	*truncate = 1;
	return 0;
}
