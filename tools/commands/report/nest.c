/* SPDX-License-Identifier: MIT */
/*
 * Call paths from slices written at their end: see nest.h.
 */
#include "nest.h"

#include "json.h"

#include <stdlib.h>
#include <string.h>

#define GROW(p, cap, need, first) array_grow((p), &(cap), (need), sizeof(*(p)), (first))

int nest_init(struct nest *n)
{
	memset(n, 0, sizeof(*n));
	table_init(&n->names, sizeof(uint32_t));
	table_init(&n->trie, sizeof(uint32_t));
	n->nodes = malloc(64 * sizeof(*n->nodes));
	if (n->nodes == NULL)
		return -1;
	n->nodes_cap = 64;
	n->nodes[0] = (struct trie_node){UINT32_MAX, UINT32_MAX};
	n->nnodes = 1;
	return 0;
}

void nest_free(struct nest *n)
{
	for (size_t i = 0; i < n->nnames; i++)
		free(n->names_v[i].text);
	free(n->names_v);
	table_destroy(&n->names);
	table_destroy(&n->trie);
	free(n->nodes);
	free(n->graft_gen);
	free(n->graft_to);
	for (size_t i = 0; i < n->nthreads; i++) {
		free(n->threads[i].entries);
		free(n->threads[i].times);
		free(n->threads[i].recs);
	}
	free(n->threads);
	memset(n, 0, sizeof(*n));
}

uint32_t nest_name(struct nest *n, const char *s, size_t len, bool mpi)
{
	bool created;
	uint32_t *id = table_put(&n->names, s, len, &created);
	struct nest_name *names;

	if (id == NULL)
		return UINT32_MAX;
	if (!created)
		return *id;
	names = GROW(n->names_v, n->names_cap, n->nnames + 1, 64);
	if (names == NULL)
		goto fail;
	n->names_v = names;
	n->names_v[n->nnames].text = text_dup(s, len);
	if (n->names_v[n->nnames].text == NULL)
		goto fail;
	n->names_v[n->nnames].mpi = mpi;
	*id = (uint32_t)n->nnames++;
	return *id;
fail:
	table_remove(&n->names, id);
	return UINT32_MAX;
}

uint32_t nest_node(struct nest *n, uint32_t parent, uint32_t name)
{
	uint32_t key[2] = {parent, name};
	bool created;
	uint32_t *id = table_put(&n->trie, key, sizeof(key), &created);
	struct trie_node *nodes;

	if (id == NULL)
		return UINT32_MAX;
	if (!created)
		return *id;
	nodes = GROW(n->nodes, n->nodes_cap, n->nnodes + 1, 64);
	if (nodes == NULL || n->nnodes >= (UINT32_MAX >> 4)) {
		table_remove(&n->trie, id);
		return UINT32_MAX;
	}
	n->nodes = nodes;
	n->nodes[n->nnodes] = (struct trie_node){parent, name};
	*id = (uint32_t)n->nnodes++;
	return *id;
}

struct nest_thread *nest_thread(struct nest *n, int64_t pid, int64_t tid)
{
	struct nest_thread *t;

	for (size_t i = n->nthreads; i-- > 0;)
		if (n->threads[i].tid == tid && n->threads[i].pid == pid)
			return &n->threads[i];
	t = GROW(n->threads, n->threads_cap, n->nthreads + 1, 8);
	if (t == NULL)
		return NULL;
	n->threads = t;
	t = &n->threads[n->nthreads++];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	return t;
}

/* The node of node's path with name in front (see nest.h); UINT32_MAX out of memory.
 * Memoized per claim (gen), as the items of one claim share their prefixes. */
static uint32_t graft(struct nest *n, uint32_t name, uint32_t node)
{
	uint32_t parent, to;

	if (node == 0)
		return nest_node(n, 0, name);
	if (n->graft_gen[node] == n->gen)
		return n->graft_to[node];
	parent = graft(n, name, n->nodes[node].parent);
	if (parent == UINT32_MAX)
		return UINT32_MAX;
	to = nest_node(n, parent, n->nodes[node].name);
	if (to == UINT32_MAX)
		return UINT32_MAX;
	n->graft_gen[node] = n->gen;
	n->graft_to[node] = to;
	return to;
}

static int by_node(const void *a, const void *b)
{
	const struct time_item *x = a, *y = b;

	return (x->node > y->node) - (x->node < y->node);
}

/* Sum the time items of th from first on by node; the rest move down. */
static void dedup_times(struct nest_thread *th, size_t first, size_t end)
{
	size_t out = first, removed;

	if (end - first < 2)
		return;
	qsort(th->times + first, end - first, sizeof(*th->times), by_node);
	for (size_t i = first; i < end; i++) {
		if (out > first && th->times[out - 1].node == th->times[i].node) {
			th->times[out - 1].ns += th->times[i].ns;
			th->times[out - 1].calls += th->times[i].calls;
		} else {
			th->times[out++] = th->times[i];
		}
	}
	removed = end - out;
	memmove(th->times + out, th->times + end, (th->ntimes - end) * sizeof(*th->times));
	th->ntimes -= removed;
	for (size_t i = 0; i < th->nentries; i++)
		if (th->entries[i].first_time >= end)
			th->entries[i].first_time -= removed;
}

/* Join the older half of th's pending entries into one (nest.h). */
static void join_older(struct nest_thread *th)
{
	size_t half = th->nentries / 2, end = th->entries[half].first_time;

	th->entries[0].end = th->entries[half - 1].end;
	memmove(th->entries + 1, th->entries + half, (th->nentries - half) * sizeof(*th->entries));
	th->nentries -= half - 1;
	dedup_times(th, th->entries[0].first_time, end);
}

/* A cache entry for every node there is, and a new generation: a claim's. */
static int graft_begin(struct nest *n)
{
	if (n->graft_cap < n->nnodes) {
		size_t cap = n->nnodes * 2;
		uint32_t *g = realloc(n->graft_gen, cap * sizeof(*g)), *t;

		if (g == NULL)
			return -1;
		n->graft_gen = g;
		t = realloc(n->graft_to, cap * sizeof(*t));
		if (t == NULL)
			return -1;
		n->graft_to = t;
		memset(g + n->graft_cap, 0, (cap - n->graft_cap) * sizeof(*g));
		n->graft_cap = cap;
	}
	if (++n->gen == UINT32_MAX) {
		memset(n->graft_gen, 0, n->graft_cap * sizeof(*n->graft_gen));
		n->gen = 1;
	}
	return 0;
}

int nest_slice(struct nest *n, struct nest_thread *th, int64_t ts, int64_t end, uint32_t name,
	       uint32_t *node)
{
	size_t i = th->nentries, first_time, first_rec;
	struct entry *e;
	struct time_item *t;

	while (i > 0 && (th->entries[i - 1].end > ts || th->entries[i - 1].ts >= ts)) {
		n->approx += th->entries[i - 1].ts < ts;
		i--;
	}
	first_time = i < th->nentries ? th->entries[i].first_time : th->ntimes;
	first_rec = i < th->nentries ? th->entries[i].first_rec : th->nrecs;
	if (i < th->nentries) {
		if (graft_begin(n))
			return -1;
		for (size_t k = first_time; k < th->ntimes; k++) {
			uint32_t to = graft(n, name, th->times[k].node);
			if (to == UINT32_MAX)
				return -1;
			th->times[k].node = to;
		}
		for (size_t k = first_rec; k < th->nrecs; k++) {
			uint32_t *at = n->rec_node(n->ctx, th->recs[k]);
			uint32_t to = graft(n, name, *at);
			if (to == UINT32_MAX)
				return -1;
			*at = to;
		}
	}
	*node = nest_node(n, 0, name);
	t = GROW(th->times, th->times_cap, th->ntimes + 1, 16);
	if (*node == UINT32_MAX || t == NULL)
		return -1;
	th->times = t;
	th->times[th->ntimes++] = (struct time_item){*node, 0, (uint64_t)(end - ts), 1};
	dedup_times(th, first_time, th->ntimes);
	th->nentries = i;
	e = GROW(th->entries, th->entries_cap, th->nentries + 1, 16);
	if (e == NULL)
		return -1;
	th->entries = e;
	th->entries[th->nentries++] = (struct entry){ts, end, first_time, first_rec};
	if (th->nentries > 2 * NEST_PENDING_MAX)
		join_older(th);
	return 0;
}

int nest_record(struct nest *n, struct nest_thread *th, uint32_t rec)
{
	uint32_t *r = GROW(th->recs, th->recs_cap, th->nrecs + 1, 16);

	(void)n;
	if (r == NULL)
		return -1;
	th->recs = r;
	th->recs[th->nrecs++] = rec;
	return 0;
}

char *nest_path_text(const struct nest *n, uint32_t node)
{
	size_t len = 0;
	char *s, *at;

	for (uint32_t k = node; k != 0; k = n->nodes[k].parent)
		len += strlen(n->names_v[n->nodes[k].name].text) + 1;
	s = malloc(len > 0 ? len : 1);
	if (s == NULL)
		return NULL;
	at = s + (len > 0 ? len - 1 : 0);
	*at = '\0';
	for (uint32_t k = node; k != 0; k = n->nodes[k].parent) {
		const char *name = n->names_v[n->nodes[k].name].text;
		size_t l = strlen(name);

		at -= l;
		memcpy(at, name, l);
		if (at > s)
			*--at = ';';
	}
	return s;
}
