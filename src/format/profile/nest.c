/* SPDX-License-Identifier: MIT */
/*
 * Slices nested into call paths, whatever order they come in (profile.h).
 *
 * A B and its E come in the order they happened, but a scope (RTR_SCOPE, the C++
 * scopes, an instrumented function) is one record at its end: its children come
 * before it, and which slice is a child of which is known only when the parent comes.
 * So a thread's slices wait as instances (name, category, begin, end, their children)
 * until their parent is known:
 *
 * - a slice that ends takes as its children the instances waiting on its level that
 *   began at or after it began (a scope: those recorded before it inside it; a B's E:
 *   everything since the B); a complete slice that lies inside the one just before it
 *   on its level (rtr_complete() of a parent, then of its children) goes into it;
 * - a B's E makes the B's instance of everything inside it, which then waits on the
 *   level of the slices open around it;
 * - when the instances fill their room (INST_ROOM per thread), those of each level are
 *   added into that level's aggregate: a node of the pool outside any tree, with the
 *   earliest begin it holds, that a slice ending later takes whole as its children
 *   when it began before all of it (as the instances it would have taken), and that is
 *   otherwise shown where it waits. Memory stays bounded; a slice that began in the
 *   middle of an aggregate (rare: it would need the same level's slices before and
 *   inside it to have filled the room) leaves it where it is.
 *
 * A file shows a thread's tree as it is now: its aggregates and instances where they
 * wait, the B's still open as slices up to the file's time (rtr__prof_show()). Nothing
 * of that changes the thread's state: a later slice still takes its children.
 */
#include "format/profile/profile.h"

#include "common/mem.h"

#include <string.h>

#define INST_ROOM (1u << 14) /* instances waiting per thread */

static uint64_t dur_of(uint64_t ts, uint64_t end)
{
	return end > ts ? end - ts : 0;
}

/* The instance arena and the waiting list: room for one more each. */
static int inst_room(struct rtr__prof_thread *t)
{
	if (t->ninst == t->inst_cap) {
		uint32_t cap = t->inst_cap == 0 ? 256 : t->inst_cap * 2;
		struct rtr__prof_inst *v = rtr__prof_grow(t->inst, sizeof(*v), t->inst_cap, cap);
		uint32_t *top;

		if (v == NULL)
			return -1;
		t->inst = v; /* grown alone is fine: inst_cap stays until both are */
		top = rtr__prof_grow(t->top, sizeof(*top), t->inst_cap, cap);
		if (top == NULL)
			return -1;
		t->top = top, t->inst_cap = cap;
	}
	return 0;
}

/* The first instance waiting on the innermost level (the open B's, or the thread's). */
static uint32_t level_mark(const struct rtr__prof_thread *t)
{
	return t->depth > 0 ? t->frames[t->depth - 1].mark : 0;
}

/* An instance from ts to end with no children, no siblings and no aggregate yet. */
static struct rtr__prof_inst inst_alone(uint32_t name, uint32_t cat, uint64_t ts, uint64_t end)
{
	return (struct rtr__prof_inst){.name = name,
				       .cat = cat,
				       .ts = ts,
				       .end = end,
				       .child = RTR__PROF_NONE,
				       .last = RTR__PROF_NONE,
				       .sibling = RTR__PROF_NONE,
				       .agg = RTR__PROF_NONE};
}

/* A new instance from ts to end taking the waiting ones from cut on as its children,
 * and the level's aggregates that began inside it when it took all the rest. */
static uint32_t inst_new(struct rtr__prof *p, struct rtr__prof_thread *t, uint32_t name,
			 uint32_t cat, uint64_t ts, uint64_t end, uint32_t cut)
{
	uint32_t i = t->ninst++;
	struct rtr__prof_inst *in = &t->inst[i];
	struct rtr__prof_level *lv = &t->levels[t->depth];

	*in = inst_alone(name, cat, ts, end);
	for (uint32_t k = cut; k < t->ntop; k++) {
		uint32_t c = t->top[k];
		if (in->child == RTR__PROF_NONE)
			in->child = c;
		else
			t->inst[in->last].sibling = c;
		in->last = c;
	}
	uint32_t j = lv->n;
	while (cut == level_mark(t) && j > 0 && lv->a[j - 1].first >= ts)
		j--;
	for (uint32_t k = j; k < lv->n; k++) /* chained, oldest first */
		p->nodes[lv->a[k].node].sibling =
			k + 1 < lv->n ? lv->a[k + 1].node : RTR__PROF_NONE;
	if (j < lv->n)
		in->agg = lv->a[j].node;
	lv->n = j;
	t->ntop = cut;
	return i;
}

/* A complete slice: its children are the waiting instances that began inside it, or
 * it is a child of the one just before it when it lies inside that one. */
static void complete(struct rtr__prof *p, struct rtr__prof_thread *t, uint32_t name, uint32_t cat,
		     uint64_t ts, uint64_t end)
{
	uint32_t mark = level_mark(t), cut = t->ntop;

	while (cut > mark && t->inst[t->top[cut - 1]].ts >= ts &&
	       t->inst[t->top[cut - 1]].end <= end)
		cut--;
	if (cut == t->ntop && cut > mark) { /* nothing inside it: inside the last one? */
		uint32_t x = t->top[cut - 1];
		struct rtr__prof_inst *up = &t->inst[x];
		if (up->ts <= ts && end <= up->end) {
			while (up->last != RTR__PROF_NONE && t->inst[up->last].ts <= ts &&
			       end <= t->inst[up->last].end)
				x = up->last, up = &t->inst[x];
			uint32_t i = t->ninst++;
			t->inst[i] = inst_alone(name, cat, ts, end);
			up = &t->inst[x];
			if (up->child == RTR__PROF_NONE)
				up->child = i;
			else
				t->inst[up->last].sibling = i;
			up->last = i;
			return;
		}
	}
	uint32_t i = inst_new(p, t, name, cat, ts, end, cut);
	t->top[t->ntop++] = i;
}

/* ------------------------------------------------------------------------- */
/* Instances and aggregates into a tree                                       */

/* id of p's strings as into's (the same when into is p). */
static uint32_t str_in(const struct rtr__prof *p, uint32_t id, struct rtr__prof *into)
{
	uint32_t len;
	const char *s;

	if (into == p || id == 0)
		return id;
	s = rtr__prof_str(p, id, &len);
	return rtr__prof_intern(into, s, len);
}

static uint32_t child_in(const struct rtr__prof *p, struct rtr__prof *into, uint32_t parent,
			 uint32_t name, uint32_t cat)
{
	uint32_t n = str_in(p, name, into), c = str_in(p, cat, into);

	return n == 0 ? RTR__PROF_NONE : rtr__prof_child(into, parent, n, c);
}

/* The tree under p's node `from` added under into's node parent at depth: the time of
 * its direct children placed (for parent's self). */
static uint64_t agg_into(const struct rtr__prof *p, uint32_t from, struct rtr__prof *into,
			 uint32_t parent, uint32_t depth)
{
	uint64_t placed = 0;

	for (uint32_t c = p->nodes[from].child; c != RTR__PROF_NONE; c = p->nodes[c].sibling) {
		if (p->nodes[c].n == 0)
			continue;
		if (depth > p->depth_limit) {
			into->deeper += p->nodes[c].n;
			continue;
		}
		uint32_t j = child_in(p, into, parent, p->nodes[c].name, p->nodes[c].cat);
		if (j == RTR__PROF_NONE) {
			into->unplaced += p->nodes[c].n;
			continue;
		}
		/* after child_in(): into may be p, whose pool may have moved */
		const struct rtr__prof_node *src = &p->nodes[c];
		struct rtr__prof_node *dst = &into->nodes[j];
		dst->n += src->n, dst->t += src->t, dst->s += src->s;
		dst->min = src->min < dst->min ? src->min : dst->min;
		dst->max = src->max > dst->max ? src->max : dst->max;
		(void)rtr__sketch_merge(&dst->q, &src->q); /* without memory: quantiles miss it */
		placed += src->t;
		/* its children: their time is out of its self, unless they are kept out */
		(void)agg_into(p, c, into, j, depth + 1);
		if (depth + 1 > p->depth_limit)
			for (uint32_t g = src->child; g != RTR__PROF_NONE; g = p->nodes[g].sibling)
				into->nodes[j].s += p->nodes[g].t;
	}
	return placed;
}

static void count_deeper(const struct rtr__prof_thread *t, uint32_t x, struct rtr__prof *into)
{
	for (; x != RTR__PROF_NONE; x = t->inst[x].sibling) {
		into->deeper++;
		count_deeper(t, t->inst[x].child, into);
	}
}

/* Instance x of t (what it took too) under into's node parent at depth. Returns its
 * time when placed, 0 when past the depth limit (its time stays its parent's self). */
static uint64_t inst_into(const struct rtr__prof *p, const struct rtr__prof_thread *t, uint32_t x,
			  struct rtr__prof *into, uint32_t parent, uint32_t depth)
{
	const struct rtr__prof_inst *in = &t->inst[x];
	uint64_t dur = dur_of(in->ts, in->end), kids = 0;

	if (depth > p->depth_limit) {
		into->deeper++;
		count_deeper(t, in->child, into);
		return 0;
	}
	uint32_t node = child_in(p, into, parent, in->name, in->cat);
	if (node == RTR__PROF_NONE) {
		into->unplaced++;
		return 0;
	}
	for (uint32_t c = in->child; c != RTR__PROF_NONE; c = t->inst[c].sibling)
		kids += inst_into(p, t, c, into, node, depth + 1);
	for (uint32_t a = in->agg; a != RTR__PROF_NONE; a = p->nodes[a].sibling)
		kids += agg_into(p, a, into, node, depth + 1);
	rtr__prof_add(&into->nodes[node], dur, kids);
	return dur;
}

/* The aggregates instance x and those inside it took, given back (they are folded). */
static void drop_taken(struct rtr__prof *p, const struct rtr__prof_thread *t, uint32_t x)
{
	for (; x != RTR__PROF_NONE; x = t->inst[x].sibling) {
		for (uint32_t a = t->inst[x].agg, next; a != RTR__PROF_NONE; a = next) {
			next = p->nodes[a].sibling;
			rtr__prof_drop(p, a);
		}
		drop_taken(p, t, t->inst[x].child);
	}
}

/* The aggregate of level lv an instance beginning a run (of one name) or going on
 * with one goes to: a new one while the level has room for it. */
static struct rtr__prof_agg *agg_for(struct rtr__prof *p, struct rtr__prof_level *lv, int run)
{
	if ((run || lv->n == 0) && lv->n < RTR__PROF_AGGS) {
		uint32_t node = rtr__prof_root(p);
		if (node == RTR__PROF_NONE)
			return lv->n > 0 ? &lv->a[lv->n - 1] : NULL;
		lv->a[lv->n] = (struct rtr__prof_agg){node, UINT64_MAX};
		return &lv->a[lv->n++];
	}
	return &lv->a[lv->n - 1];
}

/*
 * The room is full: the instances of each level into its aggregates, a new one for
 * each run of one name (so that a slice that ends later takes those that began inside
 * it: `outer` 4 times, then `long` around 40,000 `tick`s) while the level has room for
 * one, else into its newest.
 */
static void fold_waiting(struct rtr__prof *p, struct rtr__prof_thread *t)
{
	for (uint32_t k = 0; k <= t->depth; k++) {
		uint32_t from = k == 0 ? 0 : t->frames[k - 1].mark;
		uint32_t to = k < t->depth ? t->frames[k].mark : t->ntop;
		struct rtr__prof_level *lv = &t->levels[k];
		for (uint32_t i = from; i < to; i++) {
			const struct rtr__prof_inst *in = &t->inst[t->top[i]];
			int run = in->name != lv->last_name || in->cat != lv->last_cat;
			struct rtr__prof_agg *agg = agg_for(p, lv, run);
			lv->last_name = in->name, lv->last_cat = in->cat;
			if (agg == NULL) { /* without memory: counted, lost */
				p->unplaced++;
				continue;
			}
			agg->first = in->ts < agg->first ? in->ts : agg->first;
			(void)inst_into(p, t, t->top[i], p, agg->node, k + 1);
			uint32_t x = t->top[i];
			uint32_t keep = t->inst[x].sibling;
			t->inst[x].sibling = RTR__PROF_NONE; /* it alone */
			drop_taken(p, t, x);
			t->inst[x].sibling = keep;
		}
	}
	t->ninst = t->ntop = 0;
	for (uint32_t k = 0; k < t->depth; k++)
		t->frames[k].mark = 0;
}

/* ------------------------------------------------------------------------- */
/* The feed                                                                   */

void rtr__prof_begin(struct rtr__prof *p, struct rtr__prof_thread *t, uint32_t name, uint32_t cat,
		     uint64_t ts)
{
	(void)p;
	if (t->depth == p->depth_limit || t->extra > 0) {
		t->extra++; /* past the frames kept: in its ancestor, counted as deeper */
		p->deeper++;
		return;
	}
	t->frames[t->depth++] = (struct rtr__prof_frame){name, cat, t->ntop, ts};
	memset(&t->levels[t->depth], 0, sizeof(t->levels[t->depth]));
}

void rtr__prof_end(struct rtr__prof *p, struct rtr__prof_thread *t, uint64_t ts)
{
	if (t->extra > 0) {
		t->extra--;
		return;
	}
	if (t->depth == 0)
		return; /* an E whose B came before the session */
	if (t->ninst + 1 >= INST_ROOM || inst_room(t) != 0)
		fold_waiting(p, t);
	if (inst_room(t) != 0)
		return;
	const struct rtr__prof_frame *f = &t->frames[t->depth - 1];
	/* everything on its level is inside it: its instances, its aggregate */
	uint32_t i = inst_new(p, t, f->name, f->cat, f->begin, ts, f->mark);
	t->depth--;
	t->top[t->ntop++] = i;
}

void rtr__prof_complete(struct rtr__prof *p, struct rtr__prof_thread *t, uint32_t name,
			uint32_t cat, uint64_t ts, uint64_t dur)
{
	uint64_t end = ts + dur < ts ? UINT64_MAX : ts + dur;

	if (t->ninst + 1 >= INST_ROOM || inst_room(t) != 0)
		fold_waiting(p, t);
	if (inst_room(t) != 0) {
		p->unplaced++;
		return;
	}
	complete(p, t, name, cat, ts, end);
	/* Past three quarters of the room, fold as soon as a slice has just taken its
	 * children: nothing then waits for a parent still to come (a scope's children
	 * come just before it), where a fold when the room is full may take a child
	 * away from the parent that comes next. */
	if (t->ninst >= INST_ROOM / 4 * 3 && t->ntop > level_mark(t) &&
	    t->inst[t->top[t->ntop - 1]].child != RTR__PROF_NONE)
		fold_waiting(p, t);
}

/* Level k of t as it is now under into's node parent at depth: its aggregate, its
 * instances, and the B open on it up to end_ns with what is inside. Returns the time
 * placed directly under parent. */
static uint64_t show_level(const struct rtr__prof *p, const struct rtr__prof_thread *t, uint32_t k,
			   struct rtr__prof *into, uint32_t parent, uint32_t depth, uint64_t end_ns)
{
	uint32_t from = k == 0 ? 0 : t->frames[k - 1].mark;
	uint32_t to = k < t->depth ? t->frames[k].mark : t->ntop;
	uint64_t placed = 0;

	for (uint32_t a = 0; a < t->levels[k].n; a++)
		placed += agg_into(p, t->levels[k].a[a].node, into, parent, depth);
	for (uint32_t i = from; i < to; i++)
		placed += inst_into(p, t, t->top[i], into, parent, depth);
	if (k == t->depth)
		return placed;
	const struct rtr__prof_frame *f = &t->frames[k];
	if (depth > p->depth_limit) {
		into->deeper++;
		return placed;
	}
	uint32_t node = child_in(p, into, parent, f->name, f->cat);
	if (node == RTR__PROF_NONE) {
		into->unplaced++;
		return placed;
	}
	uint64_t dur = dur_of(f->begin, end_ns);
	uint64_t kids = show_level(p, t, k + 1, into, node, depth + 1, end_ns);
	rtr__prof_add(&into->nodes[node], dur, kids);
	return placed + dur;
}

void rtr__prof_show(const struct rtr__prof *p, const struct rtr__prof_thread *t,
		    struct rtr__prof *into, uint32_t root, uint64_t end_ns)
{
	(void)show_level(p, t, 0, into, root, 1, end_ns);
}

int rtr__prof_thread_init(struct rtr__prof *p, struct rtr__prof_thread *t)
{
	t->frames = rtr__mem_map(p->depth_limit * sizeof(*t->frames));
	t->levels = rtr__mem_map((p->depth_limit + 1) * sizeof(*t->levels));
	if (t->frames == NULL || t->levels == NULL) {
		rtr__prof_thread_free(p, t);
		return -1;
	}
	return 0;
}

void rtr__prof_thread_free(struct rtr__prof *p, struct rtr__prof_thread *t)
{
	rtr__mem_unmap(t->frames, p->depth_limit * sizeof(*t->frames));
	rtr__mem_unmap(t->levels, (p->depth_limit + 1) * sizeof(*t->levels));
	rtr__mem_unmap(t->inst, t->inst_cap * sizeof(*t->inst));
	rtr__mem_unmap(t->top, t->inst_cap * sizeof(*t->top));
	t->frames = NULL, t->levels = NULL, t->inst = NULL, t->top = NULL;
}
