/* SPDX-License-Identifier: MIT */
/*
 * The tracks of the .pftrace writer (see pf_write.h): processes and threads by pid
 * and tid, counter tracks by (pid, cat, name), async tracks by (pid, cat, id); each
 * with a uuid of its own and its TrackDescriptor, written before its first use and
 * again when an M event changes it. A process's descriptor and the other tracks' go
 * on the writer's sequence, a thread's on its own.
 */
#include "pf_write_internal.h"

#include "merge_json.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A process, a thread as ProcessDescriptor and ThreadDescriptor take them (int32). */
static int32_t id32(int64_t id)
{
	return (int32_t)(uint32_t)(uint64_t)id;
}

static void put_process(struct pf_writer *w, const struct pfw_process *p)
{
	uint32_t flags;
	size_t d, pd;

	pfw_begin(w);
	d = pfw_open(w, RTR__PF_PACKET_TRACK_DESCRIPTOR);
	pfw_put_uint(w, RTR__PF_TRACK_UUID, p->uuid);
	pd = pfw_open(w, RTR__PF_TRACK_PROCESS);
	pfw_put_uint(w, RTR__PF_PROCESS_PID, (uint64_t)(int64_t)p->pid);
	if (p->name != NULL)
		pfw_put_bytes(w, RTR__PF_PROCESS_NAME, p->name, strlen(p->name));
	if (p->labels != NULL)
		pfw_put_bytes(w, RTR__PF_PROCESS_LABELS, p->labels, strlen(p->labels));
	if (p->has_sort)
		pfw_put_uint(w, RTR__PF_PROCESS_SORT_INDEX, (uint64_t)(int64_t)p->sort);
	pfw_close(w, pd);
	pfw_close(w, d);
	flags = pfw_writer_flags(w);
	if (flags & RTR__PF_SEQ_INCREMENTAL_STATE_CLEARED)
		pfw_put_uint(w, RTR__PF_PACKET_FIRST_ON_SEQUENCE, 1);
	pfw_send(w, PFW_SEQ_WRITER, flags);
}

/* The process pid, declared when new; NULL past the state bound or out of memory. */
static struct pfw_process *process_of(struct pf_writer *w, int64_t pid)
{
	struct pfw_process *p = table_get(&w->processes, &pid, sizeof(pid));

	if (p != NULL || w->err != 0)
		return p;
	if (!budget_take(&w->budget, sizeof(*p) + PFW_ENTRY_COST))
		return NULL;
	p = table_put(&w->processes, &pid, sizeof(pid), NULL);
	if (p == NULL) {
		w->err = -ENOMEM;
		return NULL;
	}
	p->pid = id32(pid);
	p->uuid = pfw_claim_uuid(w, (uint64_t)(uint32_t)p->pid << 32, NULL);
	put_process(w, p);
	return p;
}

void pfw_put_thread(struct pf_writer *w, const struct pfw_thread *th, bool clear, bool first)
{
	size_t d, td;

	pfw_begin(w);
	d = pfw_open(w, RTR__PF_PACKET_TRACK_DESCRIPTOR);
	pfw_put_uint(w, RTR__PF_TRACK_UUID, th->uuid);
	pfw_put_uint(w, RTR__PF_TRACK_PARENT_UUID, th->process->uuid);
	td = pfw_open(w, RTR__PF_TRACK_THREAD);
	pfw_put_uint(w, RTR__PF_THREAD_PID, (uint64_t)(int64_t)th->pid);
	pfw_put_uint(w, RTR__PF_THREAD_TID, (uint64_t)(int64_t)th->tid);
	if (th->name != NULL)
		pfw_put_bytes(w, RTR__PF_THREAD_NAME, th->name, strlen(th->name));
	if (th->has_sort)
		pfw_put_uint(w, RTR__PF_THREAD_SORT_INDEX, (uint64_t)(int64_t)th->sort);
	pfw_close(w, td);
	pfw_close(w, d);
	if (clear) {
		size_t def = pfw_open(w, RTR__PF_PACKET_DEFAULTS), ted;

		pfw_put_uint(w, RTR__PF_DEFAULTS_TIMESTAMP_CLOCK_ID, PFW_DELTA_CLOCK);
		ted = pfw_open(w, RTR__PF_DEFAULTS_TRACK_EVENT);
		pfw_put_uint(w, RTR__PF_EVENT_DEFAULTS_TRACK_UUID, th->uuid);
		pfw_close(w, ted);
		pfw_close(w, def);
		if (first)
			pfw_put_uint(w, RTR__PF_PACKET_FIRST_ON_SEQUENCE, 1);
	}
	pfw_send(w, th->seq.id,
		 clear ? RTR__PF_SEQ_INCREMENTAL_STATE_CLEARED
		       : RTR__PF_SEQ_NEEDS_INCREMENTAL_STATE);
}

/* The thread (pid, tid), made with its process when new, its sequence not cleared yet;
 * NULL past the state bound or out of memory. */
static struct pfw_thread *thread_of(struct pf_writer *w, int64_t pid, int64_t tid)
{
	int64_t key[2] = {pid, tid};
	struct pfw_thread *th = table_get(&w->threads, key, sizeof(key));
	struct pfw_process *p;

	if (th != NULL || w->err != 0)
		return th;
	p = process_of(w, pid);
	if (p == NULL || !budget_take(&w->budget, sizeof(*th) + PFW_ENTRY_COST))
		return NULL;
	th = table_put(&w->threads, key, sizeof(key), NULL);
	if (th == NULL) {
		w->err = -ENOMEM;
		return NULL;
	}
	th->process = p;
	th->pid = id32(pid);
	th->tid = id32(tid);
	th->uuid = pfw_claim_uuid(w, (uint64_t)(uint32_t)th->pid << 32 | (uint32_t)th->tid, NULL);
	th->seq.id = ++w->next_seq;
	return th;
}

struct pfw_thread *pfw_thread(struct pf_writer *w, int64_t pid, int64_t tid)
{
	struct pfw_thread *th = thread_of(w, pid, tid);

	if (th != NULL)
		pfw_seq_ready(w, th);
	return th;
}

/* ------------------------------------------------------------- M events */

/* The string value of an M event's arg key, decoded into a new string; NULL when it
 * has none (or out of memory: w->err). */
static char *meta_string(struct pf_writer *w, const struct trace_event *ev, const char *key)
{
	size_t len;
	const char *v = pfw_arg(ev, key, &len);
	char *s;

	if (v == NULL || len < 2 || v[0] != '"')
		return NULL;
	w->text.len = 0;
	if (pfw_unescape(&w->text, v + 1, len - 2) != 0 ||
	    (s = text_dup(w->text.p, w->text.len)) == NULL) {
		w->err = -ENOMEM;
		return NULL;
	}
	return s;
}

/* The integer sort_index of an M event, as int32. */
static bool meta_sort(const struct trace_event *ev, int32_t *sort)
{
	size_t len;
	const char *v = pfw_arg(ev, "sort_index", &len);
	int64_t n;

	if (v == NULL || json_parse_i64(v, len, &n) != 0 || n < INT32_MIN || n > INT32_MAX)
		return false;
	*sort = (int32_t)n;
	return true;
}

static int meta_process(struct pf_writer *w, const struct trace_event *ev, int64_t pid)
{
	struct pfw_process *p;
	char *s = NULL;
	int32_t sort = 0;
	bool name = trace_value_is(&ev->name, "process_name");
	bool labels = trace_value_is(&ev->name, "process_labels");

	if (name || labels) {
		s = meta_string(w, ev, name ? "name" : "labels");
		if (s == NULL)
			return w->err != 0 ? 0 : 1;
	} else if (!meta_sort(ev, &sort)) {
		return 1;
	}
	p = process_of(w, pid);
	if (p == NULL) {
		free(s);
		w->counts.over_bound += w->err == 0;
		return 0;
	}
	if (name) {
		free(p->name);
		p->name = s;
	} else if (labels) {
		free(p->labels);
		p->labels = s;
	} else {
		p->has_sort = true;
		p->sort = sort;
	}
	put_process(w, p);
	return 0;
}

static int meta_thread(struct pf_writer *w, const struct trace_event *ev, int64_t pid, int64_t tid)
{
	struct pfw_thread *th;
	char *s = NULL;
	int32_t sort = 0;
	bool name = trace_value_is(&ev->name, "thread_name");

	if (name) {
		s = meta_string(w, ev, "name");
		if (s == NULL)
			return w->err != 0 ? 0 : 1;
	} else if (!meta_sort(ev, &sort)) {
		return 1;
	}
	th = thread_of(w, pid, tid);
	if (th == NULL) {
		free(s);
		w->counts.over_bound += w->err == 0;
		return 0;
	}
	if (name) {
		free(th->name);
		th->name = s;
	} else {
		th->has_sort = true;
		th->sort = sort;
	}
	/* a new sequence's first packet says it; else the descriptor again */
	if (th->seq.cleared && th->seq.epoch == w->epoch)
		pfw_put_thread(w, th, false, false);
	else
		pfw_seq_ready(w, th);
	return 0;
}

int pfw_meta(struct pf_writer *w, const struct trace_event *ev)
{
	int64_t pid, tid;

	trace_event_thread(ev, &pid, &tid);
	if (trace_value_is(&ev->name, "process_name") ||
	    trace_value_is(&ev->name, "process_labels") ||
	    trace_value_is(&ev->name, "process_sort_index"))
		return meta_process(w, ev, pid);
	if (trace_value_is(&ev->name, "thread_name") ||
	    trace_value_is(&ev->name, "thread_sort_index"))
		return meta_thread(w, ev, pid, tid);
	return 1;
}

/* ------------------------------------------------------------- other tracks */

/* FNV-1a of a key: where a track's uuid is looked for first when it has none. */
static uint64_t key_hash(const struct buf *key)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < key->len; i++)
		h = (h ^ (unsigned char)key->p[i]) * 0x100000001b3ull;
	return h;
}

/* A TrackDescriptor on the writer's sequence: a counter's (with its category) or an
 * async span's. */
static void put_track(struct pf_writer *w, uint64_t uuid, uint64_t parent, const char *name,
		      size_t len, bool counter, const struct trace_value *cat)
{
	size_t d;

	pfw_begin(w);
	d = pfw_open(w, RTR__PF_PACKET_TRACK_DESCRIPTOR);
	pfw_put_uint(w, RTR__PF_TRACK_UUID, uuid);
	pfw_put_uint(w, RTR__PF_TRACK_PARENT_UUID, parent);
	if (name != NULL)
		pfw_put_bytes(w, RTR__PF_TRACK_NAME, name, len);
	if (counter) {
		size_t c = pfw_open(w, RTR__PF_TRACK_COUNTER);

		if (cat != NULL && cat->type == TRACE_STRING)
			pfw_put_bytes(w, RTR__PF_COUNTER_CATEGORIES, cat->text, cat->len);
		pfw_close(w, c);
	}
	pfw_close(w, d);
	pfw_send(w, PFW_SEQ_WRITER, pfw_writer_flags(w));
}

/* A new track under key (w->key): NULL past the state bound or out of memory. */
static struct pfw_track *new_track(struct pf_writer *w, struct table *t)
{
	struct pfw_track *tr;

	if (!budget_take(&w->budget, sizeof(*tr) + w->key.len + PFW_ENTRY_COST))
		return NULL;
	tr = table_put(t, w->key.p, w->key.len, NULL);
	if (tr == NULL)
		w->err = -ENOMEM;
	return tr;
}

uint64_t pfw_counter_track(struct pf_writer *w, const struct pfw_thread *th,
			   const struct trace_value *cat, const char *name, size_t len)
{
	struct pfw_track *t;

	w->key.len = 0;
	if (buf_put(&w->key, &th->process->pid, sizeof(th->process->pid)) ||
	    trace_key_add(&w->key, cat) || buf_put(&w->key, name, len)) {
		w->err = -ENOMEM;
		return 0;
	}
	t = table_get(&w->counters, w->key.p, w->key.len);
	if (t != NULL)
		return t->uuid;
	t = new_track(w, &w->counters);
	if (t == NULL)
		return 0;
	t->uuid = pfw_claim_uuid(w, key_hash(&w->key), NULL);
	put_track(w, t->uuid, th->process->uuid, name, len, true, cat);
	return t->uuid;
}

struct pfw_track *pfw_async_track(struct pf_writer *w, const struct pfw_thread *th,
				  const struct trace_event *ev)
{
	int64_t ppid = th->process->pid;
	struct pfw_track *t;
	uint64_t want;

	w->key.len = 0;
	if (buf_put(&w->key, &th->process->pid, sizeof(th->process->pid)) ||
	    trace_key_add(&w->key, &ev->cat) || trace_key_add(&w->key, &ev->id)) {
		w->err = -ENOMEM;
		return NULL;
	}
	t = table_get(&w->asyncs, w->key.p, w->key.len);
	if (t != NULL)
		return t;
	t = new_track(w, &w->asyncs);
	if (t == NULL)
		return NULL;
	/* the id itself when it is free: a reader gives it back as the span's id */
	if (value_id_u64(&ev->id, &want) != 0)
		want = key_hash(&w->key);
	t->uuid = pfw_claim_uuid(w, want, &ppid);
	put_track(w, t->uuid, th->process->uuid,
		  ev->name.type == TRACE_STRING ? ev->name.text : NULL, ev->name.len, false, NULL);
	return t;
}

void pfw_async_done(struct pf_writer *w, struct pfw_track *t, int delta)
{
	size_t len;

	t->open += delta;
	if (t->open > 0)
		return;
	table_key(&w->asyncs, t, &len);
	budget_give(&w->budget, sizeof(*t) + len + PFW_ENTRY_COST);
	pfw_release_uuid(w, t->uuid);
	table_remove(&w->asyncs, t);
}

void pfw_tracks_free(struct pf_writer *w)
{
	for (struct pfw_process *p = table_first(&w->processes); p != NULL; p = table_next(p)) {
		free(p->name);
		free(p->labels);
	}
	for (struct pfw_thread *th = table_first(&w->threads); th != NULL; th = table_next(th)) {
		free(th->name);
		free(th->seq.sent);
	}
	table_destroy(&w->processes);
	table_destroy(&w->threads);
	table_destroy(&w->counters);
	table_destroy(&w->asyncs);
}
