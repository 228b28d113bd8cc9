/* SPDX-License-Identifier: MIT */
/*
 * Polls folded: what polls.h says. A poll's record is read here, not by the decoder:
 * its time and duration are ticks (the producer read the clock as for a B and an E,
 * so the fold lines up with its neighbours to the nanosecond), and it becomes part of
 * an event, not one. The fold's arguments are a run of the layout the formats read
 * (args.h), built here: the keys are static strings, the call names among them.
 */
#include "writer/polls.h"

#include "common/mem.h"
#include "common/names.h"
#include "writer/event.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define ARGS_MAX  (3 + RTR__POLL_NAMES) /* polls, count, the names, poll_ns */
#define RUN_BYTES (ARGS_MAX * RTR__EXT_ARG)
/* A run per event of a batch a fold may be taken into (the drain takes one only while
 * the batch has room), and one for a fold written alone (a cut, a flush, the stop). */
#define RUNS (RTR__BATCH_EVENTS + 1)

int rtr__polls_init(struct rtr__writer *w)
{
	w->drain.poll_args = rtr__mem_map((size_t)RUNS * RUN_BYTES);
	return w->drain.poll_args != NULL ? 0 : -ENOMEM;
}

void rtr__polls_fini(struct rtr__writer *w)
{
	rtr__mem_unmap(w->drain.poll_args, (size_t)RUNS * RUN_BYTES);
	w->drain.poll_args = NULL;
}

void rtr__polls_free(struct rtr__poll_fold *f)
{
	free(f);
}

uint64_t rtr__polls_end_ns(const struct rtr__ring *r)
{
	const struct rtr__reader *rd = rtr__reader_of((struct rtr__ring *)r);

	return rtr__polls_pending(rd) ? rd->polls->end_ns : 0;
}

/* One poll as recorded: its name and category, times on the trace clock, requests. */
struct poll {
	const char *name, *cat;
	uint64_t start_ns, end_ns;
	int64_t count; /* -1: none */
};

/* The poll rec at record index pos of r into p. False when it is not one as
 * rtr__poll_args() records it: a static name, a duration, at most one number. */
static bool poll_of(struct rtr__writer *w, const struct rtr__ring *r, const struct rtr__rec *rec,
		    uint32_t pos, struct poll *p)
{
	if (rec->kind != RTR__K_COMPLETE || rec->flags != RTR__F_POLL || rec->a == 0 ||
	    rec->nargs > 1 || rec->ext != RTR__EXT_WORD + rec->nargs * RTR__EXT_ARG)
		return false;
	const char *ext = rtr__ring_ext(r, pos, rec->ext, w->drain.scratch);
	uint64_t dur, count = 0;
	memcpy(&dur, ext, sizeof(dur));
	p->count = -1;
	if (rec->nargs == 1) {
		uint8_t type = (uint8_t)ext[RTR__EXT_WORD];
		if (type != RTR_ARG_TYPE_I64 && type != RTR_ARG_TYPE_U64)
			return false;
		memcpy(&count, ext + RTR__EXT_WORD + 1 + sizeof(uint64_t), sizeof(count));
		p->count = (int64_t)count < 0 ? 0 : (int64_t)count;
	}
	p->name = (const char *)(uintptr_t)rec->a;
	p->cat = (const char *)(uintptr_t)rec->b;
	p->start_ns = rtr__writer_ticks_ns(w, rec->ts);
	p->end_ns = rtr__writer_ticks_ns(w, rec->ts + dur);
	if (p->end_ns < p->start_ns)
		p->end_ns = p->start_ns;
	return true;
}

/* Which of f's names p's is, or RTR__POLL_NAMES when it is none of them. The same
 * text may be two literals: compared by pointer, then by text. */
static uint32_t name_index(const struct rtr__poll_fold *f, const char *name)
{
	for (uint32_t i = 0; i < f->nnames; i++)
		if (f->name[i] == name)
			return i;
	for (uint32_t i = 0; i < f->nnames; i++)
		if (strcmp(f->name[i], name) == 0)
			return i;
	return RTR__POLL_NAMES;
}

/* Whether f can take p: the same category, a name it counts or room for one. */
static bool fold_takes(const struct rtr__poll_fold *f, const struct poll *p)
{
	if (f->polls == 0)
		return true;
	return f->polls < UINT32_MAX && f->cat == p->cat &&
	       (f->nnames < RTR__POLL_NAMES || name_index(f, p->name) < RTR__POLL_NAMES);
}

static void fold_in(struct rtr__poll_fold *f, const struct poll *p, uint32_t pos)
{
	if (f->polls == 0) {
		memset(f, 0, sizeof(*f));
		f->cat = p->cat;
		f->first_ns = p->start_ns;
		f->count = -1;
	}
	uint32_t i = name_index(f, p->name);
	if (i == RTR__POLL_NAMES) {
		i = f->nnames++;
		f->name[i] = p->name;
	}
	f->calls[i]++;
	f->polls++;
	f->pos = pos;
	f->end_ns = p->end_ns > f->end_ns ? p->end_ns : f->end_ns;
	f->poll_ns += p->end_ns - p->start_ns;
	if (p->count > f->count)
		f->count = p->count;
}

static void put_arg(uint8_t *types, char *pairs, uint32_t i, const char *key, uint64_t value)
{
	uint64_t k = (uintptr_t)key;

	types[i] = RTR_ARG_TYPE_I64;
	memcpy(pairs + (size_t)i * RTR__EXT_PAIR, &k, sizeof(k));
	memcpy(pairs + (size_t)i * RTR__EXT_PAIR + 8, &value, sizeof(value));
}

/* f as one slice of r's thread into ev, its arguments into the run `run`: counting
 * `count` recorded events. */
static void fold_event(const struct rtr__poll_fold *f, const struct rtr__ring *r,
		       struct rtr__event *ev, char *run, uint32_t count)
{
	uint32_t n = 2 + (f->count >= 0) + f->nnames, i = 0;
	uint8_t *types = (uint8_t *)run;
	char *pairs = run + n;

	memset(ev, 0, sizeof(*ev));
	ev->type = RTR__EV_SPAN;
	ev->scope = RTR__SCOPE_THREAD;
	ev->flags = RTR__EVF_TIMELINE;
	ev->op = RTR__OP_NONE;
	ev->count = count;
	ev->pos = f->pos;
	ev->name = f->nnames == 1 ? f->name[0] : RTR__POLLS_MIXED;
	ev->cat = f->cat;
	ev->tid = r->tid;
	ev->ts = f->first_ns;
	ev->dur = f->end_ns - f->first_ns;
	put_arg(types, pairs, i++, RTR__KEY_POLLS, f->polls);
	if (f->count >= 0)
		put_arg(types, pairs, i++, RTR__KEY_REQUESTS, (uint64_t)f->count);
	for (uint32_t k = 0; k < f->nnames; k++)
		put_arg(types, pairs, i++, f->name[k], f->calls[k]);
	put_arg(types, pairs, i++, RTR__KEY_POLL_NS, f->poll_ns);
	ev->args.types = types;
	ev->args.n = n;
	ev->args.len = n * RTR__EXT_ARG;
}

/* The run of arguments for event ev: its own when it is one of the batch's. */
static char *run_of(struct rtr__writer *w, const struct rtr__event *ev)
{
	uintptr_t at = (uintptr_t)ev, first = (uintptr_t)w->drain.events;
	size_t i = at >= first ? (at - first) / sizeof(*ev) : RUNS - 1;

	return w->drain.poll_args + (i < RUNS - 1 ? i : RUNS - 1) * RUN_BYTES;
}

void rtr__polls_take(struct rtr__writer *w, struct rtr__ring *r, struct rtr__event *ev, int keep,
		     uint64_t *events)
{
	struct rtr__poll_fold *f = rtr__reader_of(r)->polls;

	fold_event(f, r, ev, run_of(w, ev), keep ? 0 : f->polls);
	if (keep)
		return;
	*events += f->polls;
	f->polls = 0;
}

int rtr__polls_add(struct rtr__writer *w, struct rtr__ring *r, const struct rtr__rec *rec,
		   uint32_t pos, struct rtr__event *ev, uint64_t *events)
{
	struct rtr__reader *rd = rtr__reader_of(r);
	struct poll p;
	int made = 0;

	if (!poll_of(w, r, rec, pos, &p))
		return -1;
	if (RTR_UNLIKELY(rd->polls == NULL) &&
	    (rd->polls = calloc(1, sizeof(*rd->polls))) == NULL) {
		/* No memory for a fold: the poll is a slice of its own. */
		struct rtr__poll_fold one = {.polls = 0};
		fold_in(&one, &p, pos);
		fold_event(&one, r, ev, run_of(w, ev), 1);
		*events += 1;
		return 1;
	}
	if (!fold_takes(rd->polls, &p)) {
		rtr__polls_take(w, r, ev, 0, events);
		ev->pos = pos; /* in the batch (the last poll may be of an earlier pass) */
		made = 1;
	}
	fold_in(rd->polls, &p, pos);
	return made;
}
