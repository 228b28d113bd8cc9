/* SPDX-License-Identifier: MIT */
/*
 * Files over threads and ranks, merged in file order (see spread.h).
 *
 * Threads: each worker takes the next file number (under the lock), reads it into a
 * partial of its own without the lock, then files it in its slot and merges every
 * slot from the next one due onward that is ready, in order. A worker does not take a
 * file more than WINDOW files past the next one due, so at most WINDOW partials are
 * held whatever the number of files.
 */
#include "spread.h"

#include "common/launcher.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef RTR_TOOLS_LIBDIR
#define RTR_TOOLS_LIBDIR "lib" /* the install's, relative to its prefix */
#endif

/* The most partials held at once per worker. */
#define WINDOW_PER_JOB 4

unsigned spread_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > 1024 ? 1024 : (unsigned)n;
}

struct pool {
	const struct spread_ops *ops;
	void *ctx;
	const char *const *files;
	size_t first, n; /* this rank's files: [first, first + n) */
	size_t window;
	pthread_mutex_t lock;
	pthread_cond_t moved; /* the next one due moved on */
	size_t next_take;     /* the next file to take, from 0 (relative to first) */
	size_t next_merge;    /* the next file to merge */
	void **slot;	      /* slot[i % window]: file i's partial, read; NULL while not */
	void *result;
	bool failed;
};

static void *new_partial(struct pool *p)
{
	void *v = calloc(1, p->ops->size);

	if (v != NULL && p->ops->init(p->ctx, v) != 0) {
		free(v);
		v = NULL;
	}
	return v;
}

static void drop_partial(struct pool *p, void *v)
{
	if (v != NULL) {
		p->ops->destroy(p->ctx, v);
		free(v);
	}
}

/* Merge what is ready, in order. Under the lock. */
static void merge_ready(struct pool *p)
{
	bool moved = false;

	while (p->next_merge < p->n && p->slot[p->next_merge % p->window] != NULL) {
		void **s = &p->slot[p->next_merge % p->window];

		if (!p->failed && p->ops->merge(p->ctx, p->result, *s) != 0)
			p->failed = true;
		drop_partial(p, *s);
		*s = NULL;
		p->next_merge++;
		moved = true;
	}
	if (moved)
		pthread_cond_broadcast(&p->moved);
}

static void *worker(void *arg)
{
	struct pool *p = arg;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		size_t i;
		void *part;

		while (!p->failed && p->next_take < p->n &&
		       p->next_take >= p->next_merge + p->window)
			pthread_cond_wait(&p->moved, &p->lock);
		if (p->failed || p->next_take >= p->n)
			break;
		i = p->next_take++;
		pthread_mutex_unlock(&p->lock);
		part = new_partial(p);
		if (part != NULL &&
		    p->ops->read(p->ctx, p->first + i, p->files[p->first + i], part) != 0) {
			drop_partial(p, part);
			part = NULL;
		}
		pthread_mutex_lock(&p->lock);
		if (part == NULL) {
			p->failed = true;
			pthread_cond_broadcast(&p->moved);
			break;
		}
		p->slot[i % p->window] = part;
		merge_ready(p);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* This rank's files into result on jobs threads. 0 or -1. */
static int run_local(struct pool *p, unsigned jobs)
{
	pthread_t tid[1024];
	unsigned started = 0;

	if (jobs > p->n)
		jobs = p->n > 0 ? (unsigned)p->n : 1;
	if (jobs > 1024)
		jobs = 1024;
	p->window = (size_t)jobs * WINDOW_PER_JOB;
	p->slot = calloc(p->window, sizeof(*p->slot));
	if (p->slot == NULL)
		return -1;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->moved, NULL);
	/* the first worker is this thread: one job starts no thread */
	for (unsigned i = 1; i < jobs; i++) {
		if (pthread_create(&tid[started], NULL, worker, p) != 0)
			break;
		started++;
	}
	worker(p);
	for (unsigned i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	for (size_t i = 0; i < p->window; i++)
		drop_partial(p, p->slot[i]);
	free(p->slot);
	pthread_cond_destroy(&p->moved);
	pthread_mutex_destroy(&p->lock);
	return p->failed || p->next_merge < p->n ? -1 : 0;
}

/* ------------------------------------------------------------------- MPI */

struct mpi {
	void *dl;
	int (*open)(int *rank, int *size);
	int (*gather)(const void *bytes, size_t len, void **all, size_t *lens);
	int (*share)(void **bytes, size_t *len);
	void (*close)(void);
};

/* The plugin beside this binary's libraries: the build tree's, or the install's. */
static void *open_plugin(void)
{
	const char *rel[] = {"..", ("../" RTR_TOOLS_LIBDIR), "../lib"};
	char self[PATH_MAX], path[PATH_MAX + 64];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (len <= 0)
		return NULL;
	self[len] = '\0';
	slash = strrchr(self, '/');
	if (slash == NULL)
		return NULL;
	*slash = '\0';
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		void *dl;

		snprintf(path, sizeof(path), "%s/%s/%s", self, rel[i], SPREAD_MPI_PLUGIN);
		/* global: the MPI library's own components, loaded later, may need its symbols */
		if (access(path, R_OK) == 0 && (dl = dlopen(path, RTLD_NOW | RTLD_GLOBAL)) != NULL)
			return dl;
	}
	return NULL;
}

static int mpi_load(struct mpi *m)
{
	m->dl = open_plugin();
	if (m->dl == NULL)
		return -1;
	*(void **)&m->open = dlsym(m->dl, SPREAD_MPI_OPEN);
	*(void **)&m->gather = dlsym(m->dl, SPREAD_MPI_GATHER);
	*(void **)&m->share = dlsym(m->dl, SPREAD_MPI_SHARE);
	*(void **)&m->close = dlsym(m->dl, SPREAD_MPI_CLOSE);
	if (m->open == NULL || m->gather == NULL || m->share == NULL || m->close == NULL) {
		dlclose(m->dl);
		m->dl = NULL;
		return -1;
	}
	return 0;
}

/* Rank 0: every rank's bytes merged into result, in rank order. 0 or -1. */
static int mpi_reduce(const struct spread_ops *ops, void *ctx, struct mpi *m, int rank, int size,
		      bool failed, void *result)
{
	struct buf mine = {0};
	void *all = NULL;
	size_t *lens = calloc((size_t)size, sizeof(*lens));
	int err = failed || lens == NULL || ops->pack(ctx, result, &mine) != 0;

	/* every rank joins the gather, a failed one with no bytes, so that none waits */
	if (m->gather(err ? NULL : mine.p, err ? 0 : mine.len, &all, lens) != 0)
		err = -1;
	buf_free(&mine);
	if (rank == 0 && !err) {
		const char *at = all;

		ops->destroy(ctx, result);
		err = ops->init(ctx, result);
		for (int r = 0; r < size && !err; at += lens[r], r++) {
			void *part = calloc(1, ops->size);

			if (part == NULL || ops->init(ctx, part) != 0) {
				free(part);
				err = -1;
				break;
			}
			err = (lens[r] == 0 || ops->unpack(ctx, at, lens[r], part) != 0 ||
			       ops->merge(ctx, result, part) != 0);
			ops->destroy(ctx, part);
			free(part);
		}
	}
	free(all);
	free(lens);
	return err ? -1 : 0;
}

/* The job's MPI, opened by the first spread_run() under a launcher and closed at exit:
 * a command may spread several times (diff: once per side), MPI starts once. */
static struct mpi job;
static enum { JOB_UNKNOWN, JOB_NONE, JOB_MPI, JOB_ROOT_ONLY, JOB_ELSEWHERE } job_kind;
static int job_rank, job_size = 1;

static void job_close(void)
{
	job.close();
}

/* Find out once what this process is: alone, a rank of an MPI job, or a rank of a job
 * without the plugin (rank 0 does the work). */
static void job_open(const struct spread_ops *ops, void *ctx)
{
	long lrank = rtr__launcher_rank(), lsize = rtr__launcher_world_size();
	char line[256];

	if (job_kind != JOB_UNKNOWN)
		return;
	job_kind = JOB_NONE;
	if (lsize <= 1 || lrank < 0)
		return;
	if (mpi_load(&job) == 0 && job.open(&job_rank, &job_size) == 0) {
		job_kind = JOB_MPI;
		atexit(job_close);
		return;
	}
	/* the plugin stays loaded if it failed: MPI libraries do not like being unloaded */
	job_kind = lrank > 0 ? JOB_ELSEWHERE : JOB_ROOT_ONLY;
	snprintf(line, sizeof(line),
		 "started by a launcher, but the MPI plugin (%s) %s: rank 0 reads every file, "
		 "the other ranks nothing",
		 SPREAD_MPI_PLUGIN, job.dl == NULL ? "is not there" : "failed");
	if (job_kind == JOB_ROOT_ONLY && ops->say != NULL)
		ops->say(ctx, line);
}

int spread_run(const struct spread_ops *ops, void *ctx, const char *const *files, size_t n,
	       unsigned jobs, void *result)
{
	struct pool p = {.ops = ops, .ctx = ctx, .files = files, .n = n, .result = result};
	bool spread = false;
	int err;

	if (jobs == 0)
		jobs = spread_cpus();
	job_open(ops, ctx);
	if (job_kind == JOB_ELSEWHERE)
		return SPREAD_OTHER;
	spread = job_kind == JOB_MPI && job_size > 1;
	if (spread) {
		p.first = n * (size_t)job_rank / (size_t)job_size;
		p.n = n * (size_t)(job_rank + 1) / (size_t)job_size - p.first;
	}
	err = run_local(&p, jobs);
	/* a failed rank still joins the gather, with no bytes: rank 0 then fails */
	if (spread && mpi_reduce(ops, ctx, &job, job_rank, job_size, err != 0, result) != 0)
		err = -1;
	if (err != 0)
		return SPREAD_FAILED;
	return !spread || job_rank == 0 ? SPREAD_ROOT : SPREAD_OTHER;
}

bool spread_is_rank(void)
{
	return job_kind == JOB_MPI && job_size > 1;
}

int spread_share(struct buf *b)
{
	void *bytes = job_rank == 0 ? b->p : NULL;
	size_t len = job_rank == 0 ? b->len : 0;

	if (!spread_is_rank())
		return 0;
	if (job.share(&bytes, &len) != 0) {
		if (job_rank != 0)
			free(bytes);
		buf_free(b);
		return -1;
	}
	if (job_rank == 0)
		return 0;
	/* the bytes become b's: a buf is a malloc'ed pointer, its length and capacity */
	buf_free(b);
	b->p = bytes;
	b->len = b->cap = len;
	return 0;
}
