/* SPDX-License-Identifier: MIT */
/*
 * The JSON format's other lines: metadata ("ph":"M": thread and process names,
 * labels, sort indices), the drop counter, memory events, stack samples, and the
 * lines of a cut.
 *
 * Metadata comes from three places: events (rtr_thread_name(), rtr_process_label(),
 * the sort indices), the writer itself (a thread's name from its ring when its first
 * event does not name it, the drops so far: rtr__format.meta), and tracks (a pseudo
 * process and its lanes, named the first time an event lands there in a file, the
 * lanes chosen by the writer). Lines the writer makes count no event (out_commit(...,
 * 0)), so that a write that fails partway still knows how many recorded events
 * landed.
 *
 * A memory event is two lines committed as one unit counting one event: an instant
 * on the thread and the device's bytes in use as a counter of the process.
 */
#include "format/json/json.h"
#include "format/json/text.h"

#include <stdio.h>
#include <string.h>

/* An M line: {"ph":"M","name":<what>,"pid":P,"tid":T,"args":{<key>:<value>}}, the
 * value a string (len bytes, escaped here) or, with str NULL, the integer num. Counts
 * `events` (1: it is a recorded event, 0: the writer's own). */
static void put_meta_line(struct rtr__writer *w, uint64_t events, const char *what, uint32_t pid,
			  uint32_t tid, const char *key, const char *str, size_t len, int64_t num)
{
	char *p = out_reserve(w, LINE_FIXED + RTR_JSONTEXT_ESCAPE_BOUND(len));

	p = PUT_LIT(p, "{\"ph\":\"M\",\"name\":\"");
	p = put(p, what, strlen(what));
	p = PUT_LIT(p, "\",\"pid\":");
	p = rtr__jsontext_u64(p, pid);
	p = PUT_LIT(p, ",\"tid\":");
	p = rtr__jsontext_u64(p, tid);
	p = PUT_LIT(p, ",\"args\":{\"");
	p = put(p, key, strlen(key));
	p = PUT_LIT(p, "\":");
	if (str != NULL) {
		*p++ = '"';
		p = rtr__jsontext_escape(p, str, len);
		*p++ = '"';
	} else {
		p = rtr__jsontext_i64(p, num);
	}
	p = PUT_LIT(p, "}},\n");
	out_commit(w, p, events);
}

/* A thread_name line; `events` 1 when it records an rtr_thread_name() call. */
static void thread_name(struct rtr__writer *w, const struct rtr__ring *r, const char *name,
			size_t len, uint64_t events)
{
	struct rtr__json *j = json_of(w);
	char *p = out_reserve(w, LINE_FIXED + RTR_JSONTEXT_ESCAPE_BOUND(RTR_MAX_COPY));

	p = PUT_LIT(p, "{\"ph\":\"M\",\"name\":\"thread_name\"");
	p = put_pid_tid(j, p, r->tid);
	p = PUT_LIT(p, ",\"args\":{\"name\":\"");
	p = rtr__jsontext_escape(p, name, len);
	p = PUT_LIT(p, "\"}},\n");
	out_commit(w, p, events);
}

void rtr__json_process_meta(struct rtr__writer *w)
{
	struct rtr__json *j = json_of(w);
	char label[RTR_NAME_MAX];
	int sort;

	j->prev_meta_file = j->process_meta_file;
	j->process_meta_file = w->out.file_id;
	int has_sort = rtr__process_meta(label, &sort);
	if (label[0] != '\0')
		put_meta_line(w, 0, "process_labels", (uint32_t)w->s.pid, (uint32_t)w->s.start_tid,
			      "labels", label, strlen(label), 0);
	if (has_sort)
		put_meta_line(w, 0, "process_sort_index", (uint32_t)w->s.pid,
			      (uint32_t)w->s.start_tid, "sort_index", NULL, 0, sort);
}

void rtr__json_track_meta(struct rtr__writer *w, struct rtr_track *t, unsigned k)
{
	const struct rtr__pseudo_process *pp = rtr__track_process(t);
	uint32_t tid = t->tid + k;

	if (rtr__track_process_claim(t, w->out.file_id)) {
		put_meta_line(w, 0, "process_name", pp->pid, tid, "name", pp->name,
			      strlen(pp->name), 0);
		if (pp->label[0] != '\0')
			put_meta_line(w, 0, "process_labels", pp->pid, tid, "labels", pp->label,
				      strlen(pp->label), 0);
		if (pp->sort_index != 0)
			put_meta_line(w, 0, "process_sort_index", pp->pid, tid, "sort_index", NULL,
				      0, pp->sort_index);
	}
	if (!rtr__lane_claim_name(t, k, w->out.file_id))
		return;
	char name[RTR_NAME_MAX + 16];
	size_t len = rtr__lane_name(t, k, name, sizeof(name));
	put_meta_line(w, 0, "thread_name", pp->pid, tid, "name", name, len, 0);
	/* overflow lanes sort right after their lane */
	put_meta_line(w, 0, "thread_sort_index", pp->pid, tid, "sort_index", NULL, 0,
		      rtr__lane_sort_index(t, k));
}

/* Most bytes of a memory line: about 110 of literals, a ts (24), the ids (45), an
 * address (18) and two numbers (20 each); rounded up. */
#define MEM_LINE_BOUND 320

/* An allocation or a free: an instant on the thread, then the device's bytes in use
 * as a counter of the process. The two lines are committed as one unit counting one
 * event, so a write that fails partway still knows which events landed. */
static void write_mem(struct rtr__writer *w, const struct rtr__event *ev)
{
	struct rtr__json *j = json_of(w);
	uint64_t ts = rel_ns(w, ev->ts);
	int64_t device = ev->x.mem.device;
	char *p = out_reserve(w, 2 * MEM_LINE_BOUND);

	p = PUT_LIT(p, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"memory\",\"name\":");
	p = ev->type == RTR__EV_MEM_ALLOC ? PUT_LIT(p, "\"alloc\",\"ts\":")
					  : PUT_LIT(p, "\"free\",\"ts\":");
	p = rtr__jsontext_us(p, ts);
	p = put_ids_open(j, p);
	p = PUT_LIT(p, ",\"args\":{\"addr\":\"");
	p = rtr__memstack_hex(p, ev->x.mem.addr);
	p = PUT_LIT(p, "\",\"bytes\":");
	p = rtr__jsontext_u64(p, ev->x.mem.bytes);
	p = PUT_LIT(p, ",\"device\":");
	p = rtr__jsontext_i64(p, device);
	p = PUT_LIT(p, "}},\n");
	if (device == RTR_MEM_HOST) {
		p = PUT_LIT(p, "{\"ph\":\"C\",\"name\":\"memory host\",\"ts\":");
	} else {
		p = PUT_LIT(p, "{\"ph\":\"C\",\"name\":\"memory device ");
		p = rtr__jsontext_i64(p, device);
		p = PUT_LIT(p, "\",\"ts\":");
	}
	p = rtr__jsontext_us(p, ts);
	p = put_ids_open(j, p);
	p = PUT_LIT(p, ",\"args\":{\"bytes_in_use\":");
	p = rtr__jsontext_u64(p, ev->x.mem.in_use);
	p = PUT_LIT(p, "}},\n");
	out_commit(w, p, ev->count);
}

/* A stack sample: a thread-scoped instant whose "stack" holds the frames' names. */
static void write_stack(struct rtr__writer *w, const struct rtr__event *ev)
{
	struct rtr__json *j = json_of(w);
	uint32_t n = ev->x.stack.n;
	char *p = out_reserve(w, LINE_FIXED + 2 * (size_t)RTR_INTERN_MAX_ESCAPED +
					 n * (RTR_SYM_MAX_ESCAPED + 3));

	p = put_head(w, p, ev);
	p = rtr__jsontext_us(p, rel_ns(w, ev->ts));
	p = put_ids_open(j, p);
	p = PUT_LIT(p, ",\"args\":{\"stack\":[");
	for (uint32_t k = 0; k < n; k++) {
		uint64_t addr;
		size_t len;
		memcpy(&addr, ev->x.stack.frames + k * sizeof(addr), sizeof(addr));
		const char *text = rtr__memstack_symbol(&w->mem, addr, &len);
		if (k > 0)
			*p++ = ',';
		*p++ = '"';
		p = rtr__jsontext_escape(p, text, len);
		*p++ = '"';
	}
	p = PUT_LIT(p, "]}},\n");
	out_commit(w, p, ev->count);
}

void rtr__json_other(struct rtr__writer *w, struct rtr__ring *r, const struct rtr__event *ev)
{
	uint32_t pid = (uint32_t)w->s.pid;

	switch (ev->type) {
	case RTR__EV_SKIP: /* its bytes go with the slice's E: it counts as written now */
		/* no room taken: a file that ends here must not count it in the next one */
		out_commit(w, w->out.chunk->data + w->out.chunk->len, ev->count);
		break;
	case RTR__EV_MEM_ALLOC:
	case RTR__EV_MEM_FREE:
		write_mem(w, ev);
		break;
	case RTR__EV_STACK:
		write_stack(w, ev);
		break;
	case RTR__EV_THREAD_NAME:
		thread_name(w, r, ev->name, ev->name_len, ev->count);
		break;
	case RTR__EV_PROCESS_LABEL:
		put_meta_line(w, ev->count, "process_labels", pid, (uint32_t)r->tid, "labels",
			      ev->name, ev->name_len, 0);
		break;
	case RTR__EV_PROCESS_SORT:
		put_meta_line(w, ev->count, "process_sort_index", pid, (uint32_t)r->tid,
			      "sort_index", NULL, 0, (int64_t)ev->value);
		break;
	case RTR__EV_THREAD_SORT:
		put_meta_line(w, ev->count, "thread_sort_index", pid, (uint32_t)r->tid,
			      "sort_index", NULL, 0, (int64_t)ev->value);
		break;
	}
}

void rtr__json_meta(struct rtr__writer *w, struct rtr__ring *r, int what, int64_t value)
{
	struct rtr__json *j = json_of(w);
	char *p;

	switch (what) {
	case RTR__WMETA_THREAD_NAME:
		thread_name(w, r, r->name, strnlen(r->name, sizeof(r->name)), 0);
		break;
	case RTR__WMETA_THREAD_SORT:
		put_meta_line(w, 0, "thread_sort_index", (uint32_t)w->s.pid, (uint32_t)r->tid,
			      "sort_index", NULL, 0, value);
		break;
	case RTR__WMETA_DROPS: /* a counter track: the session's running total */
		p = out_reserve(w, LINE_FIXED);
		p = PUT_LIT(p, "{\"ph\":\"C\",\"name\":\"" RTR__COUNTER_DROPPED "\",\"ts\":");
		p = rtr__jsontext_us(p, rel_ns(w, rtr__mono_ns()));
		p = put_pid_tid(j, p, r->tid);
		p = PUT_LIT(p, ",\"args\":{\"events\":");
		p = rtr__jsontext_u64(p, (uint64_t)value);
		p = PUT_LIT(p, "}},\n");
		out_commit(w, p, 0);
		break;
	}
}

/* The most a kept async span's line took (its head, id and ids): a cut's budget. */
#define ASYNC_LINE_MAX 480

/*
 * rtr__format.cut: a B, E or X of an open slice on r's thread, or an async span's b or
 * e, at ev->ts, with `"<mark>":true` after its arguments (none for a held B): a B's
 * own (begun again, or held), an E's added ones (ended), an X's own and added ones (a
 * held slice ended), an async span's own when begun again. The budget is
 * charged, as it always was, the most such a line takes besides its arguments, plus
 * the arguments' text.
 */
bool rtr__json_cut(struct rtr__writer *w, struct rtr__ring *r, const struct rtr__event *ev,
		   int what, size_t *budget)
{
	struct rtr__json *j = json_of(w);
	const char *mark = rtr__cut_mark(what);
	size_t mark_len = (mark != NULL ? strlen(mark) : 0) + sizeof("\"\":true") - 1;
	int async = r == NULL;
	size_t fixed = async ? ASYNC_LINE_MAX + mark_len + 64
			     : LINE_FIXED + 2 * (size_t)RTR_INTERN_MAX_ESCAPED +
				       RTR_JSONTEXT_ESCAPE_BOUND(RTR_MAX_COPY) + mark_len;
	size_t bound = fixed + args_bound(&ev->args);

	if (fixed > *budget)
		return false;
	for (uint32_t i = 0; i < ev->nmore; i++)
		bound += 1 + args_bound(&ev->more[i]);
	char *p = out_reserve(w, bound), *args0;
	p = rtr__json_encode_head(w, p, ev);
	p = rtr__jsontext_us(p, rel_ns(w, ev->ts));
	if (ev->type == RTR__EV_SPAN)
		p = put_dur(p, rel_ns(w, ev->ts), rel_ns(w, ev->ts + ev->dur), false);
	if (async) {
		p = put_hex_id(p, ev->value);
		p = PUT_LIT(p, ",\"pid\":");
		p = rtr__jsontext_u64(p,
				      (ev->flags & RTR__EVF_TRACK) ? ev->pid : (uint32_t)w->s.pid);
		p = PUT_LIT(p, ",\"tid\":");
		p = rtr__jsontext_u64(p, (uint32_t)ev->tid);
	} else {
		p = put_pid_tid(j, p, r->tid);
	}
	p = PUT_LIT(p, ",\"args\":{");
	args0 = p;
	int some = 0;
	if (ev->args.n > 0 && (!async || what == RTR__CUT_BEGIN)) {
		p = rtr__json_arg_list(w, p, &ev->args, 0);
		some = 1;
	}
	for (uint32_t i = 0; i < ev->nmore; i++) {
		if (some)
			*p++ = ',';
		p = rtr__json_arg_list(w, p, &ev->more[i], 0);
		some = 1;
	}
	size_t args_len = (size_t)(p - args0);
	if (!async && fixed + args_len > *budget)
		return false; /* nothing committed */
	*budget -= async ? fixed : fixed + args_len;
	if (mark != NULL) {
		if (some)
			*p++ = ',';
		*p++ = '"';
		p = put(p, mark, strlen(mark));
		p = PUT_LIT(p, "\":true");
		some = 1;
	}
	p = some ? PUT_LIT(p, "}},\n") : PUT_LIT(p - sizeof(",\"args\":{") + 1, "},\n");
	out_commit(w, p, 0);
	return true;
}
