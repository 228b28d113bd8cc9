/* SPDX-License-Identifier: MIT */
/*
 * The rules of a thread's slices in `ringtrace check` (check.h): B/E events in order
 * and matched, the slices never ended, and the flow events that wait for a slice to
 * bind them (Catapult's and Perfetto's rules for where a flow event belongs).
 */
#include "check.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* A slice [start, end] closed on the thread: remember it, and place waiting flows. */
void check_slice_closed(struct check_thread *ct, int64_t start, int64_t end)
{
	size_t kept = 0;
	unsigned i;

	for (size_t k = 0; k < ct->npending; k++) {
		if (ct->pending[k].next || ct->pending[k].ts_ns < start ||
		    ct->pending[k].ts_ns > end)
			ct->pending[kept++] = ct->pending[k];
	}
	ct->npending = kept;
	/* A slice inside the new one adds nothing: take its place. */
	for (i = 0; i < ct->nrecent; i++) {
		if (ct->recent[i].start >= start && ct->recent[i].end <= end)
			break;
	}
	if (i == ct->nrecent) {
		if (ct->nrecent < RECENT_SLICES) {
			ct->nrecent++;
		} else {
			i = ct->next_recent;
			ct->next_recent = (ct->next_recent + 1) % RECENT_SLICES;
		}
	}
	ct->recent[i].start = start;
	ct->recent[i].end = end;
}

/* A B or X began on the thread at start: it binds the waiting f events (without bp) at
 * or before start. Only the latest start matters, so nothing but it is kept. */
void check_slice_began(struct check_thread *ct, int64_t start)
{
	size_t kept = 0;

	if (ct->has_begin && start <= ct->max_begin_ns)
		return;
	ct->has_begin = true;
	ct->max_begin_ns = start;
	for (size_t k = 0; k < ct->npending; k++) {
		if (!ct->pending[k].next || ct->pending[k].ts_ns > start)
			ct->pending[kept++] = ct->pending[k];
	}
	ct->npending = kept;
}

bool check_enclosed(const struct thread_state *th, const struct check_thread *ct, int64_t ts)
{
	if (th->depth > 0 && th->open[0].ts_ns <= ts)
		return true;
	for (unsigned i = 0; i < ct->nrecent; i++) {
		if (ct->recent[i].start <= ts && ts <= ct->recent[i].end)
			return true;
	}
	return false;
}

static void report_pending(struct check *c, const struct thread_state *th,
			   const struct pending_flow *p)
{
	char t[32];

	if (p->next)
		check_finding(
			c, RULE_FLOW_OUTSIDE, p->line, p->col,
			"flow event \"f\" at ts %s without \"bp\":\"e\" has no slice beginning at "
			"or after it on thread %" PRId64 "/%" PRId64
			": Catapult and Perfetto bind such an f to the next slice that begins, and "
			"drop the flow without one",
			check_us(t, p->ts_ns), th->pid, th->tid);
	else
		check_finding(
			c, RULE_FLOW_OUTSIDE, p->line, p->col,
			"flow event \"%c\" at ts %s is not inside any slice on thread %" PRId64
			"/%" PRId64 ": Catapult and Perfetto bind it to the slice around it, and "
			"drop the flow without one",
			p->phase, check_us(t, p->ts_ns), th->pid, th->tid);
}

void check_wait_for_slice(struct check *c, struct thread_state *th, struct check_thread *ct,
			  const struct trace_event *ev, bool next)
{
	if (ct->npending == MAX_PENDING_FLOWS) {
		report_pending(c, th, &ct->pending[0]);
		memmove(ct->pending, ct->pending + 1, (ct->npending - 1) * sizeof(ct->pending[0]));
		ct->npending--;
	}
	if (ct->npending == ct->pending_cap) {
		size_t n = ct->pending_cap ? ct->pending_cap * 2 : 8;
		struct pending_flow *p;

		/* Past the state bound the flow event is not kept (a state-limit). */
		if (!budget_take(&c->threads.budget, (n - ct->pending_cap) * sizeof(*p)))
			return;
		p = realloc(ct->pending, n * sizeof(*p));
		if (p == NULL) {
			c->nomem = true;
			return;
		}
		ct->pending = p;
		ct->pending_cap = n;
	}
	ct->pending[ct->npending++] =
		(struct pending_flow){ev->ts_ns, ev->line, ev->col, ev->phase, next};
}

void check_begin(struct check *c, struct thread_state *th, const struct trace_event *ev)
{
	if (thread_push(th, ev) == -ENOMEM) /* -ENOSPC: untracked, a state-limit */
		c->nomem = true;
}

/* What the viewers do with an E that is not its B's (each seen loading such a file). */
static const char *mismatch_effect(const struct trace_event *ev, const struct open_slice *b)
{
	if (ev->name.type == TRACE_ABSENT && b->name != NULL)
		return "an E without a name makes the DevTools engine throw (nothing loads) and "
		       "speedscope keep the slice open; Catapult and Perfetto end the slice "
		       "silently";
	if (!check_same_str(&ev->name, b->name, b->name_len))
		return "speedscope does not end the slice (it stays open to the end of the "
		       "profile) and the DevTools engine logs \"Begin/End events mismatch\"; "
		       "Catapult and Perfetto end the slice silently";
	return "the DevTools engine logs \"Begin/End events mismatch\"; speedscope, Catapult "
	       "and Perfetto end the slice silently";
}

void check_end(struct check *c, struct thread_state *th, struct check_thread *ct,
	       const struct trace_event *ev)
{
	struct open_slice *b = thread_top(th);
	char n1[96], c1[96], n2[96], c2[96];

	if (thread_untracked(th)) { /* its B was past the state bound */
		thread_pop(th);
		return;
	}
	/* Catapult merges an E's args into its slice and warns only about a key the B
	 * has too (speedscope matches the E anyway, with a warning that changes nothing). */
	for (size_t i = 0; b != NULL && ev->args.type == TRACE_OBJECT && i < ev->nargs; i++)
		if (slice_has_key(b, ev->arg[i].key, ev->arg[i].key_len)) {
			check_finding(
				c, RULE_ARGS_ON_END, ev->line, ev->col,
				"arg \"%.*s\" on both the B and its E: Catapult warns and keeps "
				"one",
				(int)(ev->arg[i].key_len < 64 ? ev->arg[i].key_len : 64),
				ev->arg[i].key);
			break;
		}
	if (b == NULL) {
		check_finding(c, RULE_END_WITHOUT_BEGIN, ev->line, ev->col,
			      "E %s with no B open on thread %" PRId64 "/%" PRId64
			      ": speedscope and Catapult warn and drop it, Perfetto drops it",
			      check_shown(n1, sizeof(n1), &ev->name), th->pid, th->tid);
		return;
	}
	if (!check_same_str(&ev->name, b->name, b->name_len) ||
	    !check_same_str(&ev->cat, b->cat, b->cat_len))
		check_finding(c, RULE_END_MISMATCH, ev->line, ev->col,
			      "E %s (cat %s) ends B %s (cat %s) of line %" PRIu64 ": %s",
			      check_shown(n1, sizeof(n1), &ev->name),
			      check_shown(c1, sizeof(c1), &ev->cat),
			      check_shown_str(n2, sizeof(n2), b->name, b->name_len),
			      check_shown_str(c2, sizeof(c2), b->cat, b->cat_len), b->line,
			      mismatch_effect(ev, b));
	if (ev->has_ts && b->ts_ns <= ev->ts_ns)
		check_slice_closed(ct, b->ts_ns, ev->ts_ns);
	thread_pop(th);
}

void check_be_order(struct check *c, struct check_thread *ct, const struct trace_event *ev)
{
	char t1[32], t2[32];

	if (!ev->has_ts)
		return;
	if (ct->has_be && ev->ts_ns < ct->last_be_ns)
		check_finding(c, RULE_TS_ORDER, ev->line, ev->col,
			      "%c at ts %s is before the B/E of line %" PRIu64
			      " (ts %s) on its thread: Catapult does not sort B/E events",
			      ev->phase, check_us(t1, ev->ts_ns), ct->last_be_line,
			      check_us(t2, ct->last_be_ns));
	ct->has_be = true;
	ct->last_be_ns = ev->ts_ns;
	ct->last_be_line = ev->line;
}

/* What is still open when the events end. */
void check_leftovers(struct check *c)
{
	char n[96], k[96];

	if (c->threads.budget.refused > 0)
		check_finding(c, RULE_STATE_LIMIT, 0, 0,
			      "%" PRIu64
			      " threads, open slices, flows or async spans past the bound of "
			      "%" PRIu64 " items or %" PRIu64
			      " MiB were not kept: their events' nesting, "
			      "flows and spans are not checked",
			      c->threads.budget.refused, STATE_MAX_ITEMS, STATE_MAX_BYTES >> 20);

	for (struct thread_state *th = threads_first(&c->threads); th != NULL;
	     th = threads_next(th)) {
		struct check_thread *ct = thread_extra(th);

		for (size_t i = th->depth; i-- > 0;) {
			const struct open_slice *s = &th->open[i];

			check_finding(c, RULE_UNENDED, s->line, 1,
				      "B %s (cat %s) on thread %" PRId64 "/%" PRId64
				      " never ended: the viewers show \"did not end\"",
				      check_shown_str(n, sizeof(n), s->name, s->name_len),
				      check_shown_str(k, sizeof(k), s->cat, s->cat_len), th->pid,
				      th->tid);
		}
		for (size_t i = 0; i < ct->npending; i++)
			report_pending(c, th, &ct->pending[i]);
	}
	for (struct async_state *as = table_first(&c->async); as != NULL; as = table_next(as))
		check_finding(c, RULE_ASYNC_UNMATCHED, as->line, as->col,
			      "b %s never ended (%" PRIu64 " open)",
			      as->label != NULL ? as->label : "", as->open);
}
