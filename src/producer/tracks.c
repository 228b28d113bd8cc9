/* SPDX-License-Identifier: MIT */
/*
 * Tracks and process metadata: the tables (see tracks.h) and the calls that record
 * on a track. Making a track takes a lock; recording on one does not.
 */
#include "producer/tracks.h"

#include "common/compiler.h"
#include "producer/events.h"
#include "ring/ring.h"

#include <pthread.h>
#include <stddef.h>
#include <string.h>

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rtr_track tracks[RTR_MAX_TRACKS];
static unsigned ntracks; /* under table_lock */
static struct rtr__pseudo_process processes[RTR_MAX_TRACKS];
static unsigned nprocesses; /* under table_lock */

/* The program's own process metadata; under table_lock. */
static char process_label[RTR_NAME_MAX];
static int process_sort_index, process_sort_set;

static void copy_name(char dst[RTR_NAME_MAX], const char *src)
{
	strncpy(dst, src != NULL ? src : "", RTR_NAME_MAX - 1);
	dst[RTR_NAME_MAX - 1] = '\0';
}

/* Names compare as the table keeps them: cut to RTR_NAME_MAX - 1 bytes. */
static int same_name(const char *kept, const char *given)
{
	return strncmp(kept, given, RTR_NAME_MAX - 1) == 0;
}

/* The first layout of struct rtr_track_desc, the one a size of 0 stands for. */
#define DESC_V1_SIZE (offsetof(struct rtr_track_desc, version) + sizeof(uint32_t))

RTR_API struct rtr_track *rtr_track_create(const struct rtr_track_desc *given)
{
	struct rtr_track_desc copy = {0};
	const struct rtr_track_desc *desc = &copy;
	struct rtr_track *t = NULL;

	if (given == NULL)
		return NULL;
	/* Read only what the caller's size covers; fields past it stay 0, their default. */
	size_t n = given->size < DESC_V1_SIZE ? DESC_V1_SIZE : given->size;
	memcpy(&copy, given, n < sizeof(copy) ? n : sizeof(copy));
	if (desc->process == NULL || desc->lane == NULL)
		return NULL;
	pthread_mutex_lock(&table_lock);
	unsigned p = 0;
	while (p < nprocesses && !same_name(processes[p].name, desc->process))
		p++;
	for (unsigned i = 0; i < ntracks; i++) {
		if (tracks[i].process == p && p < nprocesses &&
		    same_name(tracks[i].lane, desc->lane)) {
			t = &tracks[i];
			goto out;
		}
	}
	if (ntracks == RTR_MAX_TRACKS)
		goto out;
	if (p == nprocesses) {
		struct rtr__pseudo_process *pp = &processes[nprocesses++];
		pp->pid = RTR_PSEUDO_ID_BASE + p + 1;
		copy_name(pp->name, desc->process);
		copy_name(pp->label, desc->label);
		pp->sort_index = desc->process_sort_index;
	} else if (desc->label != NULL && processes[p].label[0] == '\0') {
		copy_name(processes[p].label, desc->label);
	}
	t = &tracks[ntracks];
	t->pid = processes[p].pid;
	/* lanes of track i: ids base + (i + 1) * RTR_TRACK_LANES + k, clear of the pids */
	t->tid = RTR_PSEUDO_ID_BASE + (ntracks + 1) * RTR_TRACK_LANES;
	t->process = p;
	t->lane_sort_index = desc->lane_sort_index != 0 ? desc->lane_sort_index : (int)ntracks + 1;
	copy_name(t->lane, desc->lane);
	ntracks++;
out:
	pthread_mutex_unlock(&table_lock);
	return t;
}

const struct rtr__pseudo_process *rtr__track_process(const struct rtr_track *t)
{
	return &processes[t->process]; /* entries never move or change once made */
}

int rtr__track_process_claim(const struct rtr_track *t, uint64_t session)
{
	struct rtr__pseudo_process *p = &processes[t->process];

	if (p->named_session == session)
		return 0;
	p->named_session = session;
	return 1;
}

RTR_API void rtr_track_clock_pair(struct rtr_track *t, uint64_t track_ts, uint64_t host_ns)
{
	if (t != NULL)
		/* relaxed: one value the writer reads whole; it orders nothing */
		__atomic_store_n(&t->offset_ns, (int64_t)(host_ns - track_ts), __ATOMIC_RELAXED);
}

RTR_API void rtr_track_clock_offset(struct rtr_track *t, int64_t offset_ns)
{
	if (t != NULL)
		/* relaxed: as in rtr_track_clock_pair() */
		__atomic_store_n(&t->offset_ns, offset_ns, __ATOMIC_RELAXED);
}

/* An event on a track that rtr_track_create() could not make: counted, not lost. */
static RTR_COLD void count_no_track(void)
{
	struct rtr__ring *r = rtr__tls_ring;

	if (r == NULL && (r = rtr__ring_attach()) == NULL)
		return;
	/* relaxed, one instruction: a count the writer sums, that a signal handler on
	 * this thread may add to at the same time */
	__atomic_fetch_add(&r->dropped_no_track, 1, __ATOMIC_RELAXED);
}

static void on_track(const struct rtr_track *t, uint8_t kind, const char *cat, const char *name,
		     uint64_t ts, uint64_t word, const struct rtr_arg *args, unsigned n)
{
	if (RTR_LIKELY(!rtr__recording_cat(cat)))
		return;
	if (RTR_UNLIKELY(t == NULL)) {
		count_no_track();
		return;
	}
	struct rtr__ext_event e = {.kind = kind,
				   .flags = RTR__F_TS_NS | RTR__F_TRACK,
				   .ts = ts,
				   .cat = cat,
				   .name = name,
				   .track = t,
				   .word = word,
				   .args = args,
				   .nargs = n};
	rtr__emit_ext(&e);
}

RTR_API void rtr_track_complete(struct rtr_track *t, const char *cat, const char *name, uint64_t ts,
				uint64_t dur, const struct rtr_arg *args, unsigned n)
{
	on_track(t, RTR__K_COMPLETE, cat, name, ts, dur, args, n);
}

RTR_API void rtr_track_instant(struct rtr_track *t, const char *cat, const char *name, uint64_t ts,
			       const struct rtr_arg *args, unsigned n)
{
	on_track(t, RTR__K_INSTANT, cat, name, ts, 0, args, n);
}

RTR_API void rtr_track_counter(struct rtr_track *t, const char *cat, const char *name, uint64_t ts,
			       const struct rtr_arg *args, unsigned n)
{
	if (RTR_LIKELY(!rtr__recording_cat(cat)))
		return; /* before copying the arguments */
	struct rtr_arg kept[RTR_MAX_ARGS];
	unsigned k = rtr__numeric_args(args, n, kept);

	if (k > 0)
		on_track(t, RTR__K_COUNTERS, cat, name, ts, 0, kept, k);
}

RTR_API void rtr_track_flow_start(struct rtr_track *t, const char *cat, const char *name,
				  uint64_t ts, uint64_t id)
{
	on_track(t, RTR__K_FLOW_START, cat, name, ts, id, NULL, 0);
}

RTR_API void rtr_track_flow_end(struct rtr_track *t, const char *cat, const char *name, uint64_t ts,
				uint64_t id)
{
	on_track(t, RTR__K_FLOW_END, cat, name, ts, id, NULL, 0);
}

/* ------------------------------------------------------------------------- */
/* Process and thread metadata                                                */

static void record_meta(uint64_t what, const char *copy, uint64_t word)
{
	if (!rtr__recording())
		return;
	struct rtr__ext_event e = {.kind = RTR__K_META,
				   .flags = copy != NULL ? RTR__F_NAME_COPY : 0,
				   .ts = rtr__ticks(),
				   .name = copy,
				   .meta = what,
				   .word = word};
	rtr__emit_ext(&e);
}

RTR_API void rtr_process_label(const char *label)
{
	if (label == NULL)
		return;
	pthread_mutex_lock(&table_lock);
	copy_name(process_label, label);
	pthread_mutex_unlock(&table_lock);
	record_meta(RTR__META_PROCESS_LABEL, label, 0);
}

RTR_API void rtr_process_sort_index(int index)
{
	pthread_mutex_lock(&table_lock);
	process_sort_index = index;
	process_sort_set = 1;
	pthread_mutex_unlock(&table_lock);
	record_meta(RTR__META_PROCESS_SORT, NULL, (uint64_t)(int64_t)index);
}

RTR_API void rtr_thread_sort_index(int index)
{
	/* Kept for the thread's ring, made now or later, so that every file has it. */
	rtr__tls_thread_sort = index + 1;
	if (rtr__tls_ring != NULL)
		/* relaxed: the writer reads it when a session first meets the ring; the
		 * record below carries the value in order for the running session */
		__atomic_store_n(&rtr__tls_ring->sort_index, index + 1, __ATOMIC_RELAXED);
	record_meta(RTR__META_THREAD_SORT, NULL, (uint64_t)(int64_t)index);
}

int rtr__process_meta(char label[RTR_NAME_MAX], int *sort_index)
{
	pthread_mutex_lock(&table_lock);
	memcpy(label, process_label, RTR_NAME_MAX);
	*sort_index = process_sort_index;
	int set = process_sort_set;
	pthread_mutex_unlock(&table_lock);
	return set;
}
