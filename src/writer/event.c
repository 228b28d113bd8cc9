/* SPDX-License-Identifier: MIT */
/*
 * The bookkeeping that follows the lines a format writes (event.h).
 *
 * The walk (rtr__batch_first/next()) calls rtr__event_prepare() before an event that
 * needs it is written (an E: the slice it ends, for its name when it is a pop and for
 * the arguments added to it, or all of it when its B was held; a B that may be held;
 * a thread's name: the ring takes it) and
 * rtr__event_written() after one that changes what is open (slices.h, async_open.h).
 * So the open slices and async spans are always those of the lines written, whenever
 * a cut looks at them, and so are the bytes their closing lines would take (struct
 * rtr__out.closing, a segment's room).
 */
#include "writer/event.h"

#include "writer/out.h"
#include "writer/slices.h"
#include "writer/writer_internal.h"

#include <string.h>

void rtr__event_rename_ring(struct rtr__ring *r, const char *name, size_t len)
{
	size_t n = len < sizeof(r->name) - 1 ? len : sizeof(r->name) - 1;

	if (n < len)
		while (n > 0 && ((unsigned char)name[n] & 0xc0) == 0x80)
			n--; /* not inside a character */
	memmove(r->name, name, n);
	r->name[n] = '\0';
}

/* A B, when B's are held (slices.h): kept whole in its thread's open slices instead
 * of written (it counts as written now), or, when it cannot be, left to be written. */
static void hold_begin(struct rtr__writer *w, struct rtr__batch *b, struct rtr__event *ev)
{
	struct rtr__reader *rd = rtr__reader_of(b->ring);
	int copied = (ev->flags & RTR__EVF_COPIED) != 0;

	if (!(ev->flags & RTR__EVF_TIMELINE))
		return; /* on a track's lane: its own timeline, not the thread's stack */
	if (rd->slices == NULL && (rd->slices = rtr__slices_new()) == NULL)
		return;
	uint64_t before = rtr__slices_weight(rd->slices);
	if (!rtr__slices_hold(rd->slices, copied ? NULL : ev->name, ev->cat,
			      copied ? ev->name : NULL, ev->name_len, &ev->args, ev->ts))
		return;
	ev->type = RTR__EV_SKIP;
	ev->op = RTR__OP_NONE;
	rtr__event_closing(w, before, rtr__slices_weight(rd->slices));
}

/* An E of a held slice becomes the whole slice: from the B's time to its own (kept in
 * value), with the B's name and arguments, then the arguments added to it and the E's
 * own (kept in w->drain.held_own, for rtr__event_rebegun()). */
static void end_held(struct rtr__writer *w, struct rtr__batch *b, struct rtr__event *ev)
{
	if (ev->type == RTR__EV_END) {
		w->drain.held_own = ev->args;
		ev->value = ev->ts;
	}
	const struct rtr__slices *open = rtr__reader_of(b->ring)->slices;
	const struct rtr__open_slice *top = &open->level[open->depth - 1];
	struct rtr__args own = w->drain.held_own;
	uint64_t end = ev->value;
	uint32_t n;

	ev->type = RTR__EV_SPAN;
	ev->flags = RTR__EVF_TIMELINE | RTR__EVF_HELD;
	ev->tid = b->ring->tid;
	ev->ts = top->ts;
	ev->dur = end > top->ts ? end - top->ts : 0;
	ev->name = top->name;
	ev->cat = top->cat;
	if (top->name == NULL) {
		ev->flags |= RTR__EVF_COPIED;
		ev->name = open->text + top->copy_off;
		ev->name_len = top->copy_len;
	}
	if (!rtr__slices_bargs(open, open->depth - 1, &ev->args))
		ev->args.n = 0;
	n = rtr__slices_added(open, open->depth - 1, w->drain.added, RTR_SLICES_ADDED_MAX);
	if (own.n > 0)
		w->drain.added[n++] = own;
	if (top->continued)
		rtr__slices_continued(&w->drain.added[n++]);
	ev->more = n > 0 ? w->drain.added : NULL;
	ev->nmore = n;
}

void rtr__event_rebegun(struct rtr__writer *w)
{
	struct rtr__batch *b = (struct rtr__batch *)w->drain.batch;

	if (b != NULL && b->cur != NULL && b->cur != b->end && (b->cur->flags & RTR__EVF_HELD))
		end_held(w, b, b->cur);
}

void rtr__event_prepare(struct rtr__writer *w, struct rtr__batch *b, struct rtr__event *ev)
{
	if (ev->type == RTR__EV_BEGIN) {
		hold_begin(w, b, ev);
		return;
	}
	if (ev->type == RTR__EV_THREAD_NAME) {
		/* The ring's name is the writer's once the ring is made: the next file names
		 * the thread with the name it has now. */
		rtr__event_rename_ring(b->ring, ev->name, ev->name_len);
		return;
	}
	/* An E: it ends the innermost open slice, whose arguments added so far go on it;
	 * a pop has that slice's name and category. */
	const struct rtr__slices *open = rtr__reader_of(b->ring)->slices;
	const struct rtr__open_slice *top = rtr__slices_top(open);

	if (top != NULL && top->held) {
		end_held(w, b, ev);
		return;
	}
	if (ev->flags & RTR__EVF_POP) {
		ev->name = top != NULL ? top->name : NULL;
		if (top != NULL)
			ev->cat = top->cat;
		if (top != NULL && top->name == NULL && top->copy_len != UINT32_MAX) {
			ev->flags |= RTR__EVF_COPIED;
			ev->name = open->text + top->copy_off;
			ev->name_len = top->copy_len;
		}
	}
	if (top != NULL && top->args_kept > 0) {
		ev->more = w->drain.added;
		ev->nmore = rtr__slices_added(open, open->depth - 1, w->drain.added,
					      RTR_SLICES_ADDED_MAX);
	}
}

void rtr__event_written(struct rtr__writer *w, struct rtr__batch *b, const struct rtr__event *ev)
{
	struct rtr__reader *rd = rtr__reader_of(b->ring);
	int copied = (ev->flags & RTR__EVF_COPIED) != 0;
	uint64_t open = rtr__slices_weight(rd->slices);
	uint32_t spans = w->async.count;

	switch (ev->op & ~RTR__OP_PREPARE) {
	case RTR__OP_PUSH:
		if (rd->slices == NULL && (rd->slices = rtr__slices_new()) == NULL)
			return; /* without memory: pops go unnamed, added arguments are cut */
		rtr__slices_push(rd->slices, copied ? NULL : ev->name, ev->cat,
				 copied ? ev->name : NULL, ev->name_len, &ev->args);
		break;
	case RTR__OP_POP:
		if (rd->slices != NULL)
			rtr__slices_pop(rd->slices);
		break;
	case RTR__OP_KEEP_ARG:
		if (ev->args.n != 1 || !rtr__slices_add(rd->slices, &ev->args))
			rd->args_lost++;
		break;
	case RTR__OP_ASYNC_OPEN: {
		struct rtr__async_desc d = {
			.cat = ev->cat,
			.id = ev->value,
			.name = ev->name,
			.name_len = ev->name_len,
			.copied = copied,
			.on_track = (ev->flags & RTR__EVF_TRACK) != 0,
			.tid = ev->tid,
			.pid = ev->pid,
			.args = ev->args,
		};
		rtr__async_open_add(&w->async, &d);
		break;
	}
	case RTR__OP_ASYNC_CLOSE:
		rtr__async_open_end(&w->async, ev->cat, ev->value);
		break;
	}
	rtr__event_closing(w, open + (uint64_t)spans * RTR_ASYNC_WEIGHT,
			   rtr__slices_weight(rd->slices) +
				   (uint64_t)w->async.count * RTR_ASYNC_WEIGHT);
}
