/* SPDX-License-Identifier: MIT */
/* What the recorder's modules share: the session, the writer's entry points. */
#ifndef RTR_RECORDER_H
#define RTR_RECORDER_H

#include "clock.h"
#include "filter.h"
#include <ringtrace.h>

#include <limits.h>
#include <sys/types.h>

/* Everything one recording (rtr_start .. rtr_stop) knows about itself. */
struct rtr__session {
	struct rtr_config cfg; /* string fields point into the buffers below */
	char path[PATH_MAX];   /* the expanded file path */
	char process_name[256];
	char host[256];
	int fd;
	pid_t pid;
	pid_t start_tid;
	long rank;	 /* -1 when unknown */
	long world_size; /* -1 when unknown */
	struct rtr__clock clock;
	uint64_t origin_ticks;	 /* the start marker's time, in ticks */
	uint64_t origin_ns;	 /* ... in CLOCK_MONOTONIC ns */
	uint64_t origin_real_ns; /* ... in CLOCK_REALTIME ns */

	/* The category filter as given ("" for none), and parsed. */
	char categories[RTR__FILTER_MAX_SPEC + 1];
	struct rtr__filter filter;
};

/* src/config.c */

/* Copy cfg into s (strings too), validated; expand the path pattern; resolve
 * RTR_COMPRESS_AUTO to NONE or GZIP by the path's suffix. 0 or -EINVAL. */
int rtr__session_config(struct rtr__session *s, const struct rtr_config *cfg);
/* Expand %p %h %r %% of pattern into out. 0, or -ENAMETOOLONG / -EINVAL. */
int rtr__path_expand(char *out, size_t size, const char *pattern, pid_t pid, const char *host,
		     long rank);
/* The rank of this process from the launcher's environment, or -1; world size too. */
long rtr__env_rank(long *world_size);

/* src/writer/writer.c — called by rtr_start/rtr_flush/rtr_stop under their lock. */

/* Write the file's head, start the writer thread. 0 or -errno (nothing left open). */
int rtr__writer_start(const struct rtr__session *s);
/* Everything recorded before is in the file; 0 or the first write error. */
int rtr__writer_flush(void);
/* Drain, write the end marker, join. 0 or the first write error. */
int rtr__writer_stop(void);
/* Counters of the running or last session. Any thread. */
void rtr__writer_stats(struct rtr_stats *out);

/* Wake the writer if it sleeps. Producers' slow path: cheap when it is awake. */
void rtr__writer_wake(void);

#endif
