/* SPDX-License-Identifier: MIT */
/*
 * The open slices and spans of `ringtrace split` across a cut (split.h): what
 * reopening one costs a piece, and the times at which a cut ends and reopens them.
 */
#include "split.h"

#include <stdlib.h>

uint64_t split_slice_cost(const struct open_slice *s)
{
	return close_cost(s->cat_len, s->name_len, 0);
}

/* What reopening s costs a piece: its B again (a new ts), and its E at the end. */
uint64_t split_reopen_cost(const struct open_slice *s)
{
	return s->json_len + 32 + split_slice_cost(s);
}

/*
 * The times of a cut on a thread (cut_times). Its B/E events must stay in time order in each piece
 * (Catapult does not sort them) and its slices must nest with its X events, which
 * other writers than the recorder put at their start, long before what they enclose:
 * an X of 10 s at 0 with a B at 1 s and its E at 9 s, cut between the two, must not be
 * closed at 10 s or reopened there (an E at 9 s would then go backward). So:
 *
 * - a slice is reopened at the thread's latest B or E, which every later B or E of the
 *   thread follows (a thread's events are in time order);
 * - open[i] is closed 1 ns after the latest of the thread's events other than X, and
 *   of the ends of the X events that began inside it (the recorder writes an X when it
 *   ends, inside the B around it), and never before what it encloses (innermost first,
 *   so each E is at or after the one before). An X that began before the slice
 *   encloses it and does not move its E.
 */
void split_note_plain_time(struct split_thread *st, const struct trace_event *ev)
{
	if (!ev->has_ts || ev->phase == 'X')
		return;
	if (!st->has_plain || ev->ts_ns > st->plain_ns)
		st->plain_ns = ev->ts_ns;
	st->has_plain = true;
	if ((ev->phase == 'B' || ev->phase == 'E') && (!st->has_be || ev->ts_ns > st->be_ns)) {
		st->be_ns = ev->ts_ns;
		st->has_be = true;
	}
}

/* A B was pushed: its own X ends start empty. 0 or -1. */
int split_level_pushed(struct thread_state *th, struct split_thread *st)
{
	int64_t *p = array_grow(st->inner_end, &st->inner_cap, th->depth, sizeof(*p), 8);

	if (p == NULL)
		return -1;
	st->inner_end = p;
	st->inner_end[th->depth - 1] = INT64_MIN;
	return 0;
}

/* The innermost open slice is about to end: what it enclosed, its parent does. */
void split_level_popping(const struct thread_state *th, struct split_thread *st)
{
	size_t d = th->depth;

	if (d >= 2 && st->inner_end[d - 1] > st->inner_end[d - 2])
		st->inner_end[d - 2] = st->inner_end[d - 1];
}

/* An X [start, end] on the thread: the innermost open slice it began inside. */
void split_level_x(const struct thread_state *th, struct split_thread *st, int64_t start,
		   int64_t end)
{
	for (size_t i = th->depth; i-- > 0;) {
		if (th->open[i].ts_ns <= start) {
			if (end > st->inner_end[i])
				st->inner_end[i] = end;
			return;
		}
	}
}

/* Where the thread's open slices are reopened in the next piece. */
bool split_reopen_time(const struct thread_state *th, const struct split_thread *st, int64_t *t)
{
	if (st->has_be)
		*t = st->be_ns;
	else if (th->has_time)
		*t = th->latest_ns;
	else
		return false;
	return true;
}

/* An async b, e or n: the spans open, to close and reopen them at a cut. */
int split_track_async(struct split *sp, const struct trace_event *ev)
{
	struct async_span *as;
	int change = carry_async(&sp->carry, ev, &as);

	if (change < 0)
		return nomem(sp);
	if (change == CARRY_ASYNC_OPENED) {
		sp->close_lines++;
		sp->close_bytes += close_cost(as->cat_len, as->name_len, as->id_len);
	} else if (change == CARRY_ASYNC_ENDED) {
		sp->close_lines--;
		sp->close_bytes -= close_cost(as->cat_len, as->name_len, as->id_len);
		if (as->depth == 0)
			carry_async_forget(&sp->carry, as);
	}
	return 0;
}
