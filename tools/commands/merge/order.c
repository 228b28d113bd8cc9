/* SPDX-License-Identifier: MIT */
/*
 * The order of `ringtrace merge` (merge.h, "Order" and "Messages"): a heap of the
 * inputs by the key of their next event, a second one of the inputs whose next event
 * is a receive waiting for its send, and the loop that takes the earliest.
 */
#include "merge.h"

#include "progress.h"

#include <stdlib.h>

/* Events between two progress updates. */
#define PROGRESS_EVERY 65536

static size_t *place_in(struct merge *m, const struct heap *h, size_t i)
{
	return h->waiting ? &m->in[i].stall_pos : &m->in[i].pos;
}

static bool before(const struct merge *m, size_t a, size_t b)
{
	const struct input *x = &m->in[a], *y = &m->in[b];

	return x->key < y->key || (x->key == y->key && a < b);
}

static void heap_set(struct merge *m, struct heap *h, size_t at, size_t input)
{
	h->a[at] = input;
	*place_in(m, h, input) = at;
}

static void heap_fix(struct merge *m, struct heap *h, size_t i)
{
	size_t x = h->a[i];

	while (i > 0 && before(m, x, h->a[(i - 1) / 2])) {
		heap_set(m, h, i, h->a[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, min = l;

		if (l >= h->n)
			break;
		if (r < h->n && before(m, h->a[r], h->a[l]))
			min = r;
		if (!before(m, h->a[min], x))
			break;
		heap_set(m, h, i, h->a[min]);
		i = min;
	}
	heap_set(m, h, i, x);
}

static void heap_push(struct merge *m, struct heap *h, size_t input)
{
	heap_set(m, h, h->n++, input);
	heap_fix(m, h, h->n - 1);
}

static size_t heap_remove(struct merge *m, struct heap *h, size_t at)
{
	size_t input = h->a[at];

	if (at != --h->n) {
		heap_set(m, h, at, h->a[h->n]);
		heap_fix(m, h, at);
	}
	return input;
}

/* The key of a message's tables: the id's type and text. NULL when out of memory. */
static const struct buf *message_key(struct merge *m, const struct trace_event *ev)
{
	m->key.len = 0;
	if (buf_putc(&m->key, (char)ev->id.type) || buf_put(&m->key, ev->id.text, ev->id.len)) {
		m->nomem = true;
		return NULL;
	}
	return &m->key;
}

/* Is the event a message's send or receive? */
bool merge_is_message(const struct input *in, const struct trace_event *ev)
{
	/* The MPI module's: a message always goes from one rank's file to another's (or
	 * to itself, send first). Not the other kept ids: a flow between two threads of
	 * one process may have its f written before its s (the writer drains one
	 * thread's ring after the other), and waiting for it would hold the file back. */
	return (ev->phase == 's' || ev->phase == 'f') && ev->id.type != TRACE_ABSENT &&
	       in->has_rank && trace_value_is(&ev->cat, "mpi");
}

/* Into the merge: or to wait, when its head is a receive whose send is still to come. */
static void enqueue(struct merge *m, struct input *in)
{
	const struct buf *key;
	size_t *waiter;
	bool created;

	if (in->released || !merge_is_message(in, in->head) || in->head->phase != 'f' ||
	    (key = message_key(m, in->head)) == NULL ||
	    table_get(&m->sends, key->p, key->len) != NULL) {
		heap_push(m, &m->ready, in->index);
		return;
	}
	waiter = table_put(&m->waiters, key->p, key->len, &created);
	if (waiter == NULL || !created) {
		/* Out of memory, or a second receive of one id: no wait. */
		m->nomem |= waiter == NULL;
		heap_push(m, &m->ready, in->index);
		return;
	}
	*waiter = in->index;
	heap_push(m, &m->wait, in->index);
}

/* A waiting input back into the merge, its send taken or not to be found. */
static void release(struct merge *m, struct input *in, bool found)
{
	const struct buf *key = message_key(m, in->head);
	size_t *waiter = key != NULL ? table_get(&m->waiters, key->p, key->len) : NULL;

	if (waiter != NULL)
		table_remove(&m->waiters, waiter);
	heap_remove(m, &m->wait, in->stall_pos);
	in->released = !found;
	heap_push(m, &m->ready, in->index);
}

/* A send is taken: remembered until its receive, which may be waiting for it. */
int merge_take_send(struct merge *m, struct input *in, const struct trace_event *ev)
{
	const struct buf *key = message_key(m, ev);
	struct send *s;
	size_t *waiter;

	if (key == NULL || (s = table_put(&m->sends, key->p, key->len, NULL)) == NULL) {
		m->nomem = true;
		return -1;
	}
	s->linear_ns = in->head_linear;
	s->ts_ns = in->head_ts;
	s->timed = in->head_timed;
	waiter = table_get(&m->waiters, key->p, key->len);
	if (waiter != NULL)
		release(m, &m->in[*waiter], true);
	if (m->sends.count > MAX_IDS) {
		table_remove(&m->sends, table_first(&m->sends)); /* the oldest */
		m->forgotten++;
	}
	return 0;
}

/* A receive is taken: after its send (if the send is in the merge), and after it by
 * the minimum latency, its thread moved forward if it must be. */
int merge_take_receive(struct merge *m, struct input *in, const struct trace_event *ev)
{
	const struct buf *key = message_key(m, ev);
	struct send *s = key != NULL ? table_get(&m->sends, key->p, key->len) : NULL;
	struct clc_thread *c;
	int64_t pid, tid, want, jump;

	if (key == NULL)
		return -1;
	if (s == NULL) {
		m->unmatched++;
		return 0;
	}
	m->messages++;
	if (!in->head_timed || !s->timed) {
		table_remove(&m->sends, s); /* a time out of range: nothing to compare */
		return 0;
	}
	m->violations += in->head_linear < s->linear_ns;
	if (m->correct && (__int128)in->head_ts - s->ts_ns < m->min_latency_ns &&
	    add_i64(s->ts_ns, m->min_latency_ns, &want) &&
	    !__builtin_sub_overflow(want, in->head_linear, &jump)) {
		trace_event_thread(ev, &pid, &tid);
		c = merge_moves_of(m, in, pid, tid, true);
		if (c == NULL)
			return -1;
		clc_jump(c, in->head_linear, jump);
		if (jump > m->max_move_ns)
			m->max_move_ns = jump;
		in->head_ts = in->key = want;
		in->head_set_ts = in->head_moved = true;
		m->corrected++;
	}
	table_remove(&m->sends, s);
	return 0;
}

static void update_progress(struct merge *m)
{
	uint64_t bytes = 0;

	for (size_t i = 0; i < m->n; i++)
		bytes += trace_status(m->in[i].r)->input_bytes;
	progress_update(m->bar, bytes);
}

/* Is the oldest waiting receive too far behind the merge to hope for its send? */
static bool give_up_waiting(const struct merge *m)
{
	if (m->wait.n == 0)
		return false;
	if (m->ready.n == 0)
		return true;
	return (__int128)m->in[m->ready.a[0]].key - m->in[m->wait.a[0]].key > STALL_NS;
}

int merge_run(struct merge *m)
{
	uint64_t steps = 0;

	m->ready.a = malloc(m->n * sizeof(*m->ready.a));
	m->wait.a = malloc(m->n * sizeof(*m->wait.a));
	m->wait.waiting = true;
	if (m->ready.a == NULL || m->wait.a == NULL) {
		m->nomem = true;
		return -1;
	}
	for (size_t i = 0; i < m->n; i++) {
		struct input *in = &m->in[i];

		in->key = INT64_MIN;
		if (in->head == NULL) {
			if (merge_finish_input(m, in))
				return -1;
			continue;
		}
		merge_place_head(m, in);
		enqueue(m, in);
	}
	for (;;) {
		struct input *in;

		while (give_up_waiting(m))
			release(m, &m->in[m->wait.a[0]], false);
		if (m->ready.n == 0)
			break;
		in = &m->in[heap_remove(m, &m->ready, 0)];
		if (merge_take(m, in, in->head))
			return -1;
		merge_advance(in);
		if (in->head != NULL) {
			merge_place_head(m, in);
			enqueue(m, in);
		} else if (merge_finish_input(m, in)) {
			return -1;
		}
		if (m->nomem)
			return -1;
		if (++steps % PROGRESS_EVERY == 0)
			update_progress(m);
	}
	return 0;
}
