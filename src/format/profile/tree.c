/* SPDX-License-Identifier: MIT */
/*
 * The aggregate (profile.h): strings interned by content, the pool of nodes (one per
 * call path of a tree), per thread its slices (nest.c) and its loss, counters.
 *
 * Memory comes from the library's own mappings (the sketches' buckets from the heap,
 * as the tools').
 */
#include "format/profile/profile.h"

#include "common/mem.h"

#include <string.h>

#define STR_SLOTS0     4096u
#define NODE_SLOTS0    4096u
#define COUNTER_SLOTS  1024u
#define STR_ARENA0     ((size_t)64 << 10)
#define MAX_STRING_LEN 4096u

static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h ^ (h >> 29);
}

static uint64_t hash3(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t h =
		a * 0x9e3779b97f4a7c15ull ^ b * 0xc2b2ae3d27d4eb4full ^ c * 0x165667b19e3779f9ull;

	return h ^ (h >> 31);
}

void *rtr__prof_grow(void *old, size_t size, size_t n_old, size_t n_new)
{
	void *p = rtr__mem_map(size * n_new);

	if (p == NULL)
		return NULL;
	if (old != NULL) {
		memcpy(p, old, size * n_old);
		rtr__mem_unmap(old, size * n_old);
	}
	return p;
}

/* ------------------------------------------------------------------------- */
/* Strings                                                                    */

const char *rtr__prof_str(const struct rtr__prof *p, uint32_t id, uint32_t *len)
{
	*len = id == 0 ? 0 : p->str.len[id];
	return id == 0 ? "" : p->str.arena + p->str.off[id];
}

static int strings_rehash(struct rtr__prof_strings *t, uint32_t nslots)
{
	uint32_t *slots = rtr__mem_map(nslots * sizeof(*slots));

	if (slots == NULL)
		return -1;
	for (uint32_t id = 1; id < t->count; id++) {
		uint32_t k = (uint32_t)hash_bytes(t->arena + t->off[id], t->len[id]) & (nslots - 1);
		t->next[id] = slots[k];
		slots[k] = id;
	}
	rtr__mem_unmap(t->slots, t->nslots * sizeof(*t->slots));
	t->slots = slots;
	t->nslots = nslots;
	return 0;
}

static int strings_room(struct rtr__prof_strings *t, size_t bytes)
{
	if (t->count == t->cap) {
		uint32_t cap = t->cap * 2;
		uint32_t *off = rtr__prof_grow(t->off, sizeof(*off), t->cap, cap);
		uint32_t *len =
			off == NULL ? NULL : rtr__prof_grow(t->len, sizeof(*len), t->cap, cap);
		uint32_t *next =
			len == NULL ? NULL : rtr__prof_grow(t->next, sizeof(*next), t->cap, cap);
		if (next == NULL) /* what was grown is kept: the arrays only get larger */
			return -1;
		t->off = off, t->len = len, t->next = next, t->cap = cap;
		if (t->count > t->nslots && strings_rehash(t, t->nslots * 4) != 0)
			return -1;
	}
	if (t->arena_len + bytes > t->arena_cap) {
		size_t cap = t->arena_cap * 2;
		while (cap < t->arena_len + bytes)
			cap *= 2;
		char *arena = rtr__prof_grow(t->arena, 1, t->arena_cap, cap);
		if (arena == NULL)
			return -1;
		t->arena = arena;
		t->arena_cap = cap;
	}
	return 0;
}

uint32_t rtr__prof_intern(struct rtr__prof *p, const char *s, uint32_t len)
{
	struct rtr__prof_strings *t = &p->str;

	if (len > MAX_STRING_LEN)
		len = MAX_STRING_LEN;
	uint32_t k = (uint32_t)hash_bytes(s, len) & (t->nslots - 1);
	for (uint32_t id = t->slots[k]; id != 0; id = t->next[id])
		if (t->len[id] == len && memcmp(t->arena + t->off[id], s, len) == 0)
			return id;
	if (strings_room(t, len) != 0)
		return 0;
	k = (uint32_t)hash_bytes(s, len) & (t->nslots - 1); /* the table may have grown */
	uint32_t id = t->count++;
	memcpy(t->arena + t->arena_len, s, len);
	t->off[id] = (uint32_t)t->arena_len;
	t->len[id] = len;
	t->arena_len += len;
	t->next[id] = t->slots[k];
	t->slots[k] = id;
	return id;
}

/* A static string's id: its pointer cached in front of the content table. */
static uint32_t intern_static(struct rtr__prof *p, const char *s)
{
	if (s == NULL)
		return 0;
	uintptr_t k = ((uintptr_t)s >> 3) % (sizeof(p->str.cache) / sizeof(p->str.cache[0]));
	if (p->str.cache[k].ptr == s)
		return p->str.cache[k].id;
	uint32_t id = rtr__prof_intern(p, s, (uint32_t)strnlen(s, MAX_STRING_LEN));
	if (id != 0) {
		p->str.cache[k].ptr = s;
		p->str.cache[k].id = id;
	}
	return id;
}

static uint32_t event_name(struct rtr__writer *w, struct rtr__prof *p, const struct rtr__event *ev)
{
	if (ev->flags & RTR__EVF_CODE) { /* the instrument library's function, by address */
		const char *key = (const char *)(uintptr_t)ev->x.code.addr;
		uintptr_t k =
			((uintptr_t)key >> 3) % (sizeof(p->str.cache) / sizeof(p->str.cache[0]));
		if (p->str.cache[k].ptr == key)
			return p->str.cache[k].id;
		size_t len;
		const char *fn = rtr__memstack_function(&w->mem, ev->x.code.addr, &len);
		uint32_t id = rtr__prof_intern(p, fn, (uint32_t)len);
		if (id != 0) /* an address is no static string's: one cache serves both */
			p->str.cache[k].ptr = key, p->str.cache[k].id = id;
		return id;
	}
	if (ev->flags & RTR__EVF_COPIED)
		return rtr__prof_intern(p, ev->name, ev->name_len);
	return ev->name != NULL ? intern_static(p, ev->name) : rtr__prof_intern(p, "?", 1);
}

/* ------------------------------------------------------------------------- */
/* Nodes                                                                      */

static int nodes_room(struct rtr__prof *p)
{
	if (p->nnodes < p->nodes_cap)
		return 0;
	uint32_t cap = p->nodes_cap * 2;
	struct rtr__prof_node *n = rtr__prof_grow(p->nodes, sizeof(*n), p->nodes_cap, cap);
	if (n == NULL)
		return -1;
	p->nodes = n;
	p->nodes_cap = cap;
	if (p->nnodes >= p->nslots) { /* load at most 1 */
		uint32_t nslots = p->nslots * 4;
		uint32_t *slots = rtr__mem_map(nslots * sizeof(*slots));
		if (slots == NULL)
			return -1;
		for (uint32_t i = 0; i < nslots; i++)
			slots[i] = RTR__PROF_NONE;
		for (uint32_t i = 0; i < p->nnodes; i++) {
			struct rtr__prof_node *nd = &p->nodes[i];
			if (nd->parent == RTR__PROF_NONE)
				continue;
			uint32_t k = (uint32_t)hash3(nd->parent, nd->name, nd->cat) & (nslots - 1);
			nd->next = slots[k];
			slots[k] = i;
		}
		rtr__mem_unmap(p->node_slots, p->nslots * sizeof(*p->node_slots));
		p->node_slots = slots;
		p->nslots = nslots;
	}
	return 0;
}

static uint32_t node_new(struct rtr__prof *p, uint32_t parent, uint32_t name, uint32_t cat)
{
	if (parent != RTR__PROF_NONE && p->npaths >= p->node_limit)
		return RTR__PROF_NONE;
	if (p->free_node == RTR__PROF_NONE && nodes_room(p) != 0)
		return RTR__PROF_NONE;
	p->npaths += parent != RTR__PROF_NONE; /* a root is not a call path */
	uint32_t i = p->free_node;
	if (i != RTR__PROF_NONE)
		p->free_node = p->nodes[i].next; /* one given back (rtr__prof_drop()) */
	else
		i = p->nnodes++;
	struct rtr__prof_node *nd = &p->nodes[i];

	memset(nd, 0, sizeof(*nd));
	nd->parent = parent;
	nd->child = nd->sibling = nd->next = RTR__PROF_NONE;
	nd->name = name;
	nd->cat = cat;
	nd->min = UINT64_MAX;
	rtr__sketch_init(&nd->q);
	if (parent != RTR__PROF_NONE) {
		struct rtr__prof_node *up = &p->nodes[parent];
		nd->depth = up->depth + 1;
		nd->sibling = up->child;
		up->child = i;
	}
	return i;
}

/* Node i out of the hash table. */
static void unlink_node(struct rtr__prof *p, uint32_t i)
{
	const struct rtr__prof_node *nd = &p->nodes[i];
	uint32_t *at =
		&p->node_slots[(uint32_t)hash3(nd->parent, nd->name, nd->cat) & (p->nslots - 1)];

	while (*at != RTR__PROF_NONE && *at != i)
		at = &p->nodes[*at].next;
	if (*at == i)
		*at = nd->next;
}

void rtr__prof_drop(struct rtr__prof *p, uint32_t i)
{
	struct rtr__prof_node *nd = &p->nodes[i];

	for (uint32_t c = nd->child, next; c != RTR__PROF_NONE; c = next) {
		next = p->nodes[c].sibling;
		rtr__prof_drop(p, c);
	}
	nd = &p->nodes[i];
	if (nd->parent != RTR__PROF_NONE) {
		unlink_node(p, i);
		p->npaths--;
	}
	rtr__sketch_free(&nd->q);
	memset(nd, 0, sizeof(*nd));
	nd->parent = nd->child = nd->sibling = RTR__PROF_NONE;
	nd->next = p->free_node;
	p->free_node = i;
}

uint32_t rtr__prof_root(struct rtr__prof *p)
{
	return node_new(p, RTR__PROF_NONE, 0, 0);
}

uint32_t rtr__prof_child(struct rtr__prof *p, uint32_t parent, uint32_t name, uint32_t cat)
{
	uint32_t k = (uint32_t)hash3(parent, name, cat) & (p->nslots - 1);

	for (uint32_t i = p->node_slots[k]; i != RTR__PROF_NONE; i = p->nodes[i].next) {
		const struct rtr__prof_node *nd = &p->nodes[i];
		if (nd->parent == parent && nd->name == name && nd->cat == cat)
			return i;
	}
	uint32_t i = node_new(p, parent, name, cat);
	if (i == RTR__PROF_NONE)
		return i;
	k = (uint32_t)hash3(parent, name, cat) & (p->nslots - 1); /* the table may have grown */
	p->nodes[i].next = p->node_slots[k];
	p->node_slots[k] = i;
	return i;
}

void rtr__prof_add(struct rtr__prof_node *nd, uint64_t dur, uint64_t child_ns)
{
	nd->n++;
	nd->t += dur;
	nd->s += child_ns < dur ? dur - child_ns : 0;
	if (dur < nd->min)
		nd->min = dur;
	if (dur > nd->max)
		nd->max = dur;
	(void)rtr__sketch_add(&nd->q, dur); /* without memory: the quantiles miss it */
}

/* ------------------------------------------------------------------------- */
/* Threads                                                                    */

static struct rtr__prof_thread *thread_of(struct rtr__prof *p, int32_t tid)
{
	if (p->last_thread < p->nthreads && p->threads[p->last_thread].tid == tid)
		return &p->threads[p->last_thread];
	for (uint32_t i = 0; i < p->nthreads; i++) {
		if (p->threads[i].tid == tid) {
			p->last_thread = i;
			return &p->threads[i];
		}
	}
	if (p->nthreads == p->threads_cap) {
		uint32_t cap = p->threads_cap * 2;
		struct rtr__prof_thread *t =
			rtr__prof_grow(p->threads, sizeof(*t), p->threads_cap, cap);
		if (t == NULL)
			return NULL;
		p->threads = t;
		p->threads_cap = cap;
	}
	struct rtr__prof_thread *t = &p->threads[p->nthreads];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	if (rtr__prof_thread_init(p, t) != 0)
		return NULL;
	p->last_thread = p->nthreads++;
	return t;
}

/* ------------------------------------------------------------------------- */
/* Counters                                                                   */

/* A sample v of counter (tid, name, cat). */
static void counter_add(struct rtr__prof *p, int32_t tid, uint32_t name, uint32_t cat, double v)
{
	uint32_t k = (uint32_t)hash3((uint32_t)tid, name, cat) & (COUNTER_SLOTS - 1);
	uint32_t i = p->counter_slots[k];

	if (name == 0)
		return;
	while (i != RTR__PROF_NONE && !(p->counters[i].tid == tid && p->counters[i].name == name &&
					p->counters[i].cat == cat))
		i = p->counters[i].next;
	if (i == RTR__PROF_NONE) {
		if (p->ncounters == p->counters_cap) {
			uint32_t cap = p->counters_cap * 2;
			struct rtr__prof_counter *c =
				rtr__prof_grow(p->counters, sizeof(*c), p->counters_cap, cap);
			if (c == NULL)
				return;
			p->counters = c;
			p->counters_cap = cap;
		}
		i = p->ncounters++;
		p->counters[i] = (struct rtr__prof_counter){.tid = tid,
							    .name = name,
							    .cat = cat,
							    .next = p->counter_slots[k],
							    .min = v,
							    .max = v};
		p->counter_slots[k] = i;
	}
	struct rtr__prof_counter *c = &p->counters[i];
	c->samples++;
	c->min = v < c->min ? v : c->min;
	c->max = v > c->max ? v : c->max;
	c->sum += v;
	c->last = v;
}

static void counter_sample(struct rtr__writer *w, struct rtr__prof *p, const struct rtr__event *ev)
{
	double v;

	if (ev->flags & RTR__EVF_DOUBLE)
		memcpy(&v, &ev->value, sizeof(v));
	else
		v = (double)(int64_t)ev->value;
	counter_add(p, ev->tid, event_name(w, p, ev), intern_static(p, ev->cat), v);
}

/* A sample of several series (rtr_counter_args()): one counter "name key" each. */
static void counters_sample(struct rtr__prof *p, const struct rtr__event *ev)
{
	char text[512];
	size_t n = ev->flags & RTR__EVF_COPIED ? ev->name_len
		   : ev->name != NULL	       ? strnlen(ev->name, 256)
					       : 0;
	uint32_t cat = intern_static(p, ev->cat);

	if (n > 256)
		n = 256;
	memcpy(text, ev->name != NULL ? ev->name : "", n);
	text[n++] = ' ';
	for (uint32_t i = 0; i < ev->args.n; i++) {
		const char *key;
		uint64_t bits = rtr__args_get(&ev->args, i, &key);
		uint8_t type = ev->args.types[i];
		double v;
		if (key == NULL || type < RTR_ARG_TYPE_I64 || type > RTR_ARG_TYPE_BOOL)
			continue; /* not a number */
		if (type == RTR_ARG_TYPE_F64)
			memcpy(&v, &bits, sizeof(v));
		else
			v = type == RTR_ARG_TYPE_U64 ? (double)bits : (double)(int64_t)bits;
		size_t klen = strnlen(key, sizeof(text) - n);
		memcpy(text + n, key, klen);
		counter_add(p, ev->tid, rtr__prof_intern(p, text, (uint32_t)(n + klen)), cat, v);
	}
}

/* ------------------------------------------------------------------------- */
/* The feed                                                                   */

static void ring_account(struct rtr__prof *p, struct rtr__ring *r, uint64_t events)
{
	struct rtr__prof_thread *t = thread_of(p, r->tid);
	const struct rtr__reader *rd = rtr__reader_of(r);

	if (t == NULL)
		return;
	t->events += events;
	/* producer-owned counters, relaxed: the drops up to this batch */
	t->dropped = __atomic_load_n(&r->dropped_full, __ATOMIC_RELAXED) - rd->base_full +
		     __atomic_load_n(&r->dropped_large, __ATOMIC_RELAXED) - rd->base_large +
		     __atomic_load_n(&r->dropped_reentrant, __ATOMIC_RELAXED) - rd->base_reentrant +
		     __atomic_load_n(&r->dropped_no_track, __ATOMIC_RELAXED) - rd->base_no_track;
	if (r->name[0] != '\0')
		memcpy(t->name, r->name, sizeof(t->name));
}

void rtr__prof_batch(struct rtr__writer *w, struct rtr__prof *p, const struct rtr__batch *b)
{
	uint64_t events = 0;

	pthread_mutex_lock(&p->lock);
	for (const struct rtr__event *ev = b->ev; ev < b->end && !p->frozen; ev++) {
		events += ev->count;
		if (ev->type == RTR__EV_COUNTERS) {
			counters_sample(p, ev);
			continue;
		}
		if (ev->type != RTR__EV_BEGIN && ev->type != RTR__EV_END &&
		    ev->type != RTR__EV_SPAN && ev->type != RTR__EV_COUNTER)
			continue;
		if (ev->type == RTR__EV_COUNTER) {
			counter_sample(w, p, ev);
			continue;
		}
		struct rtr__prof_thread *t = thread_of(p, ev->tid);
		if (t == NULL)
			continue;
		if (ev->type == RTR__EV_END)
			rtr__prof_end(p, t, ev->ts);
		else if (ev->type == RTR__EV_BEGIN)
			rtr__prof_begin(p, t, event_name(w, p, ev), intern_static(p, ev->cat),
					ev->ts);
		else
			rtr__prof_complete(p, t, event_name(w, p, ev), intern_static(p, ev->cat),
					   ev->ts, ev->dur);
	}
	if (!p->frozen)
		ring_account(p, b->ring, events);
	pthread_mutex_unlock(&p->lock);
}

int rtr__prof_init(struct rtr__prof *p, unsigned depth_limit, uint32_t node_limit)
{
	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->lock, NULL);
	p->depth_limit = depth_limit;
	p->node_limit = node_limit;
	p->str.cap = 1024;
	p->str.arena_cap = STR_ARENA0;
	p->str.nslots = STR_SLOTS0;
	p->str.count = 1; /* id 0: no string */
	p->str.arena = rtr__mem_map(p->str.arena_cap);
	p->str.off = rtr__mem_map(p->str.cap * sizeof(uint32_t));
	p->str.len = rtr__mem_map(p->str.cap * sizeof(uint32_t));
	p->str.next = rtr__mem_map(p->str.cap * sizeof(uint32_t));
	p->str.slots = rtr__mem_map(p->str.nslots * sizeof(uint32_t));
	p->nodes_cap = 1024;
	p->free_node = RTR__PROF_NONE;
	p->nodes = rtr__mem_map(p->nodes_cap * sizeof(*p->nodes));
	p->nslots = NODE_SLOTS0;
	p->node_slots = rtr__mem_map(p->nslots * sizeof(uint32_t));
	p->threads_cap = 16;
	p->threads = rtr__mem_map(p->threads_cap * sizeof(*p->threads));
	p->counters_cap = 64;
	p->counters = rtr__mem_map(p->counters_cap * sizeof(*p->counters));
	p->counter_slots = rtr__mem_map(COUNTER_SLOTS * sizeof(uint32_t));
	if (p->str.arena == NULL || p->str.off == NULL || p->str.len == NULL ||
	    p->str.next == NULL || p->str.slots == NULL || p->nodes == NULL ||
	    p->node_slots == NULL || p->threads == NULL || p->counters == NULL ||
	    p->counter_slots == NULL) {
		rtr__prof_free(p);
		return -1;
	}
	for (uint32_t i = 0; i < p->nslots; i++)
		p->node_slots[i] = RTR__PROF_NONE;
	for (uint32_t i = 0; i < COUNTER_SLOTS; i++)
		p->counter_slots[i] = RTR__PROF_NONE;
	return 0;
}

void rtr__prof_free(struct rtr__prof *p)
{
	for (uint32_t i = 0; i < p->nnodes; i++)
		rtr__sketch_free(&p->nodes[i].q);
	for (uint32_t i = 0; i < p->nthreads; i++)
		rtr__prof_thread_free(p, &p->threads[i]);
	rtr__mem_unmap(p->str.arena, p->str.arena_cap);
	rtr__mem_unmap(p->str.off, p->str.cap * sizeof(uint32_t));
	rtr__mem_unmap(p->str.len, p->str.cap * sizeof(uint32_t));
	rtr__mem_unmap(p->str.next, p->str.cap * sizeof(uint32_t));
	rtr__mem_unmap(p->str.slots, p->str.nslots * sizeof(uint32_t));
	rtr__mem_unmap(p->nodes, p->nodes_cap * sizeof(*p->nodes));
	rtr__mem_unmap(p->node_slots, p->nslots * sizeof(uint32_t));
	rtr__mem_unmap(p->threads, p->threads_cap * sizeof(*p->threads));
	rtr__mem_unmap(p->counters, p->counters_cap * sizeof(*p->counters));
	rtr__mem_unmap(p->counter_slots, COUNTER_SLOTS * sizeof(uint32_t));
	pthread_mutex_destroy(&p->lock);
	memset(p, 0, sizeof(*p));
}
