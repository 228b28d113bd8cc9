/* SPDX-License-Identifier: MIT */
/*
 * Per-thread state of the tools (see threads.h). The key is the (pid, tid) pair as
 * 16 bytes; the value is a thread_state followed by the tool's extra bytes.
 */
#include "threads.h"

#include "json.h"

#include <errno.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

/* Where the extra bytes start: after the state, aligned for any type. */
#define EXTRA_OFFSET \
	((sizeof(struct thread_state) + alignof(max_align_t) - 1) & ~(alignof(max_align_t) - 1))

/* What a table entry costs beside its value: its allocation, links, key and slots
 * (table.c; an estimate a little above what malloc takes). */
#define ENTRY_OVERHEAD 96

/* An open slice's cost beside its strings: its place in the array (which may be half
 * empty) and the three allocations of its copies. */
#define SLICE_OVERHEAD (2 * sizeof(struct open_slice) + 3 * 32)

static uint64_t slice_bytes(const struct open_slice *s)
{
	return SLICE_OVERHEAD + s->name_len + s->cat_len + s->json_len;
}

/* What an open slice of ev will cost: slice_bytes() of it. */
static uint64_t push_cost(const struct trace_event *ev)
{
	return SLICE_OVERHEAD + (ev->name.type == TRACE_STRING ? ev->name.len : 0) +
	       (ev->cat.type == TRACE_STRING ? ev->cat.len : 0) + ev->json_len;
}

void threads_init(struct threads *t, size_t extra)
{
	memset(&t->budget, 0, sizeof(t->budget));
	t->refused = t->lost_threads = false;
	table_init(&t->map, EXTRA_OFFSET + extra);
	t->extra = extra;
	t->last = NULL;
}

static void slice_free(struct open_slice *s)
{
	free(s->name);
	free(s->cat);
	free(s->json);
}

void threads_destroy(struct threads *t)
{
	for (struct thread_state *th = table_first(&t->map); th != NULL; th = table_next(th)) {
		for (size_t i = 0; i < th->depth; i++)
			slice_free(&th->open[i]);
		free(th->open);
	}
	table_destroy(&t->map);
	t->last = NULL;
}

struct thread_state *threads_get(struct threads *t, int64_t pid, int64_t tid)
{
	int64_t key[2] = {pid, tid};
	bool created;
	struct thread_state *th;

	t->refused = false;
	if (t->last != NULL && t->last->pid == pid && t->last->tid == tid)
		return t->last;
	th = table_get(&t->map, key, sizeof(key));
	if (th == NULL) {
		if (!budget_take(&t->budget, EXTRA_OFFSET + t->extra + ENTRY_OVERHEAD)) {
			t->refused = t->lost_threads = true;
			return NULL;
		}
		th = table_put(&t->map, key, sizeof(key), &created);
		if (th != NULL) {
			th->pid = pid;
			th->tid = tid;
			th->budget = &t->budget;
		}
	}
	t->last = th;
	return th;
}

struct thread_state *threads_of(struct threads *t, const struct trace_event *ev)
{
	int64_t pid, tid;

	trace_event_thread(ev, &pid, &tid);
	return threads_get(t, pid, tid);
}

size_t threads_count(const struct threads *t)
{
	return t->map.count;
}

struct thread_state *threads_first(const struct threads *t)
{
	return table_first(&t->map);
}

struct thread_state *threads_next(const struct thread_state *th)
{
	return table_next(th);
}

void *thread_extra(struct thread_state *th)
{
	return (char *)th + EXTRA_OFFSET;
}

static uint64_t key_hash(const char *key, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)key[i]) * 0x100000001b3ull;
	return h;
}

bool slice_has_key(const struct open_slice *s, const char *key, size_t len)
{
	uint64_t h = key_hash(key, len);

	for (uint32_t i = 0; i < s->nkeys; i++)
		if (s->key_hash[i] == h)
			return true;
	return false;
}

int thread_push(struct thread_state *th, const struct trace_event *ev)
{
	struct open_slice *s;

	/* Inside an untracked slice, or past the bound: nothing is kept of it. */
	if (th->untracked > 0 || !budget_take(th->budget, push_cost(ev))) {
		if (th->untracked > 0)
			th->budget->refused++;
		th->untracked++;
		return -ENOSPC;
	}

	s = array_grow(th->open, &th->cap, th->depth + 1, sizeof(*s), 2);
	if (s == NULL) {
		budget_give(th->budget, push_cost(ev));
		return -ENOMEM;
	}
	th->open = s;
	s = &th->open[th->depth];
	memset(s, 0, sizeof(*s));
	s->name = trace_value_dup(&ev->name);
	s->cat = trace_value_dup(&ev->cat);
	s->json = text_dup(ev->json, ev->json_len);
	if ((s->name == NULL && ev->name.type == TRACE_STRING) ||
	    (s->cat == NULL && ev->cat.type == TRACE_STRING) || s->json == NULL) {
		slice_free(s);
		budget_give(th->budget, push_cost(ev));
		return -ENOMEM;
	}
	s->name_len = s->name != NULL ? ev->name.len : 0;
	s->cat_len = s->cat != NULL ? ev->cat.len : 0;
	s->json_len = ev->json_len;
	s->ts_ns = ev->ts_ns;
	s->line = ev->line;
	for (size_t i = 0; ev->args.type == TRACE_OBJECT && i < ev->nargs && i < OPEN_SLICE_KEYS;
	     i++)
		s->key_hash[s->nkeys++] = key_hash(ev->arg[i].key, ev->arg[i].key_len);
	th->depth++;
	return 0;
}

void thread_pop(struct thread_state *th)
{
	if (th->untracked > 0) {
		th->untracked--;
		return;
	}
	if (th->depth == 0)
		return;
	th->depth--;
	budget_give(th->budget, slice_bytes(&th->open[th->depth]));
	slice_free(&th->open[th->depth]);
}

struct open_slice *thread_top(struct thread_state *th)
{
	return th->depth > 0 ? &th->open[th->depth - 1] : NULL;
}

void thread_note_time(struct thread_state *th, const struct trace_event *ev)
{
	int64_t t;

	if (!ev->has_ts)
		return;
	t = ev->ts_ns;
	if (ev->phase == 'X' && ev->has_dur && ev->dur_ns > 0 && t <= INT64_MAX - ev->dur_ns)
		t += ev->dur_ns;
	if (!th->has_time || t > th->latest_ns) {
		th->latest_ns = t;
		th->has_time = true;
	}
}
