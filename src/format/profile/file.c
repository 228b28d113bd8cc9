/* SPDX-License-Identifier: MIT */
/*
 * The profile's file, and the two ways a session has one:
 *
 * - RINGTRACE_MODE=profile: the session's format is rtr__profile_format, which writes
 *   no line (the walk keeps the writer's bookkeeping, nothing else), and the profile
 *   is the file at the session's path;
 * - RINGTRACE_PROFILE=1 beside a trace: the profile is `<trace path>.profile.json`.
 *
 * Either way the writer hands the profiler each batch before the format writes it,
 * and asks for the file where a trace's file is finished (the stop, a fatal signal, a
 * segment's end) and at a snapshot. The file is written whole under a new name and
 * renamed into place, so a reader never sees half of one; a pipe or a device at the
 * path gets the final profile alone, in place. A file that cannot be written is
 * reported once on stderr and counted (the stop returns the error).
 */
#include "format/profile/profile.h"

#include "common/mem.h"
#include "sink/trace_file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define PROFILE_SUFFIX ".profile.json"

static struct rtr__prof *prof_of(struct rtr__writer *w)
{
	return w->prof_state;
}

static int write_all(int fd, const char *data, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, data, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

int rtr__prof_write_file(const char *path, pid_t pid, const char *data, size_t len)
{
	char tmp[PATH_MAX];
	int fd, truncate, err;

	tmp[0] = '\0';
	err = rtr__trace_open(path, pid, 0, &fd, tmp, sizeof(tmp), &truncate);
	if (err != 0)
		return err;
	if (truncate && ftruncate(fd, 0) != 0)
		err = -errno;
	if (err == 0)
		err = write_all(fd, data, len);
	if (close(fd) != 0 && err == 0)
		err = -errno;
	if (tmp[0] != '\0') {
		if (err == 0 && rename(tmp, path) != 0)
			err = -errno;
		if (err != 0)
			unlink(tmp);
	}
	return err;
}

static int prof_init(struct rtr__writer *w)
{
	struct rtr__prof *p = rtr__mem_map(sizeof(*p));

	if (p == NULL)
		return -ENOMEM;
	if (rtr__prof_init(p, w->s.cfg.profile_depth, w->s.cfg.profile_nodes) != 0) {
		rtr__mem_unmap(p, sizeof(*p));
		return -ENOMEM;
	}
	p->is_format = w->fmt == &rtr__profile_format;
	w->prof_state = p;
	return 0;
}

static void prof_fini(struct rtr__writer *w, int how)
{
	struct rtr__prof *p = prof_of(w);

	w->prof_state = NULL;
	/* In a child after fork(), the aggregate may be mid-update (it grows as the
	 * writer runs): left mapped, copy-on-write, as the writer's memory tables. */
	if (p == NULL || how != RTR__FINI_ALL)
		return;
	rtr__prof_free(p);
	rtr__mem_unmap(p, sizeof(*p));
}

static void prof_batch(struct rtr__writer *w, const struct rtr__batch *b)
{
	rtr__prof_batch(w, prof_of(w), b);
}

/* Where the profile goes: path as given, else the session's file (the profile mode)
 * or beside it. 0, or -errno when there is no such path. */
static int profile_path(struct rtr__writer *w, const char *path, char *out, size_t size)
{
	int n;

	if (path != NULL)
		n = snprintf(out, size, "%s", path);
	else if (prof_of(w)->is_format)
		n = snprintf(out, size, "%s", w->s.path);
	else
		n = snprintf(out, size, "%s" PROFILE_SUFFIX, w->s.path);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static int prof_write(struct rtr__writer *w, const char *path, const char *reason, int final)
{
	struct rtr__prof *p = prof_of(w);
	struct rtr__prof_buf doc = {0};
	char where[PATH_MAX];
	int stream = w->out.sink.stream && path == NULL;
	int err;

	if (p == NULL)
		return -ENOMEM;
	if (p->frozen)
		return 0; /* written for MPI_Finalize, with the job profile (prof_export()) */
	if (stream && (!final || !p->is_format))
		return 0; /* a pipe takes one document, the last; none beside a piped trace */
	err = profile_path(w, path, where, sizeof(where));
	pthread_mutex_lock(&p->lock);
	if (err == 0)
		err = rtr__prof_document(w, p, &doc, reason, final, rtr__mono_ns());
	pthread_mutex_unlock(&p->lock);
	if (err == 0)
		err = stream ? write_all(w->s.fd, doc.data, doc.len)
			     : rtr__prof_write_file(where, w->s.pid, doc.data, doc.len);
	rtr__prof_buf_free(&doc);
	if (err != 0) {
		if (p->write_errors++ == 0)
			fprintf(stderr, "ringtrace: writing the profile %s failed: %s\n",
				stream ? w->s.path : where, strerror(-err));
		return err;
	}
	p->files++;
	return 0;
}

/*
 * The process's profile for the job profile (the MPI module at MPI_Finalize), the
 * open slices counted to now. With freeze, the process's own file is written now, from
 * the same moment, and nothing more is added to it or written: the session ends with
 * MPI_Finalize, and the rank's file then sums into the job profile exactly.
 */
static int prof_export(struct rtr__writer *w, char **data, size_t *len, size_t *cap, int freeze)
{
	struct rtr__prof *p = prof_of(w);
	struct rtr__prof_buf doc = {0}, out = {0};
	uint64_t end = rtr__mono_ns();
	char where[PATH_MAX];
	int err = 0, doc_err = 0;

	if (p == NULL)
		return -ENOMEM;
	pthread_mutex_lock(&p->lock);
	if (freeze && !p->frozen && (doc_err = profile_path(w, NULL, where, sizeof(where))) == 0)
		doc_err = rtr__prof_document(w, p, &doc, "finalize", 1, end);
	err = rtr__prof_export(w, p, &out, end);
	if (freeze && !p->frozen) {
		int stream = w->out.sink.stream;
		if (doc_err == 0 && !(stream && !p->is_format))
			doc_err = stream ? write_all(w->s.fd, doc.data, doc.len)
					 : rtr__prof_write_file(where, w->s.pid, doc.data, doc.len);
		p->frozen = 1;
		if (doc_err != 0 && p->write_errors++ == 0)
			fprintf(stderr, "ringtrace: writing the profile %s failed: %s\n", where,
				strerror(-doc_err));
	}
	pthread_mutex_unlock(&p->lock);
	rtr__prof_buf_free(&doc);
	if (err != 0) {
		rtr__prof_buf_free(&out);
		return err;
	}
	*data = out.data, *len = out.len, *cap = out.cap;
	return 0;
}

const struct rtr__profiler rtr__profiler = {
	.init = prof_init,
	.fini = prof_fini,
	.batch = prof_batch,
	.write = prof_write,
	.export = prof_export,
};

/* ------------------------------------------------------------------------- */
/* The format of RINGTRACE_MODE=profile: no lines                             */

static int none_init(struct rtr__writer *w)
{
	(void)w;
	return 0;
}

static void none_fini(struct rtr__writer *w, int how)
{
	(void)w, (void)how;
}

static void none_file(struct rtr__writer *w, const struct rtr__marker *m)
{
	(void)w, (void)m;
}

static void none_ring(struct rtr__writer *w, struct rtr__ring *r)
{
	(void)w, (void)r;
}

static void none_meta(struct rtr__writer *w, struct rtr__ring *r, int what, int64_t value)
{
	(void)w, (void)r, (void)what, (void)value;
}

/* The batch is in the profile already (prof_batch()): the walk keeps the writer's
 * bookkeeping of what is open; every event counts as written. */
static uint64_t none_events(struct rtr__writer *w, struct rtr__batch *b)
{
	uint64_t n = 0;

	for (struct rtr__event *ev = rtr__batch_first(w, b); ev != NULL;
	     ev = rtr__batch_next(w, b, ev))
		n += ev->count;
	return n;
}

static bool none_cut(struct rtr__writer *w, struct rtr__ring *r, const struct rtr__event *ev,
		     int what, size_t *budget)
{
	(void)w, (void)r, (void)ev, (void)what, (void)budget;
	return true;
}

const struct rtr__format rtr__profile_format = {
	.name = "profile",
	.pads_pages = 0,
	.holds_begins = 0,
	.init = none_init,
	.fini = none_fini,
	.begin_file = none_file,
	.end_file = none_file,
	.begin_ring = none_ring,
	.meta = none_meta,
	.events = none_events,
	.cut = none_cut,
};
