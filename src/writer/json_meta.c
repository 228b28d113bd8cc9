/* SPDX-License-Identifier: MIT */
/*
 * The JSON encoder's other lines: metadata ("ph":"M": thread and process names,
 * labels, sort indices), the drop counter, memory events and stack samples.
 *
 * Metadata comes from three places: records (rtr_thread_name(), rtr_process_label(),
 * the sort indices: RTR__K_THREAD_NAME and RTR__K_META), the writer itself (a
 * thread's name from its ring when its first event does not name it, the drops so
 * far: rtr__format.meta), and tracks (a pseudo process and its lanes, named the first
 * time an event lands there, the lanes chosen by lanes.c). Lines the writer makes
 * count no event (out_commit(..., 0)), so that a write that fails partway still
 * knows how many recorded events landed.
 *
 * A memory event is two lines committed as one unit counting one event: an instant
 * on the thread and the device's bytes in use as a counter of the process; the
 * bytes come from the live-allocation table (memstack_writer.c), which also resolves
 * a stack sample's frames to names.
 */
#include "writer/json.h"

#include "common/atomic.h"
#include "producer/tracks.h"

#include <stdio.h>
#include <string.h>

/* An M line: {"ph":"M","name":<what>,"pid":P,"tid":T,"args":{<key>:<value>}}, the
 * value a string (len bytes, escaped here) or, with str NULL, the integer num. Counts
 * `events` (1: it is a recorded event, 0: the writer's own). */
static void put_meta_line(struct rtr__writer *w, uint64_t events, const char *what, uint32_t pid,
			  uint32_t tid, const char *key, const char *str, size_t len, int64_t num)
{
	char *p = out_reserve(w, LINE_FIXED + RTR_JSON_ESCAPE_BOUND(len));

	p = PUT_LIT(p, "{\"ph\":\"M\",\"name\":\"");
	p = put(p, what, strlen(what));
	p = PUT_LIT(p, "\",\"pid\":");
	p = rtr__json_u64(p, pid);
	p = PUT_LIT(p, ",\"tid\":");
	p = rtr__json_u64(p, tid);
	p = PUT_LIT(p, ",\"args\":{\"");
	p = put(p, key, strlen(key));
	p = PUT_LIT(p, "\":");
	if (str != NULL) {
		*p++ = '"';
		p = rtr__json_escape(p, str, len);
		*p++ = '"';
	} else {
		p = rtr__json_i64(p, num);
	}
	p = PUT_LIT(p, "}},\n");
	out_commit(w, p, events);
}

/* A thread_name line; `events` 1 when it records an rtr_thread_name() call. */
void rtr__json_thread_name(struct rtr__writer *w, const struct rtr__ring *r, const char *name,
			   size_t len, uint64_t events)
{
	char *p = out_reserve(w, LINE_FIXED + COPY_ESCAPED);

	p = PUT_LIT(p, "{\"ph\":\"M\",\"name\":\"thread_name\"");
	p = put_pid_tid(w, p, r->tid);
	p = PUT_LIT(p, ",\"args\":{\"name\":\"");
	p = rtr__json_escape(p, name, len);
	p = PUT_LIT(p, "\"}},\n");
	out_commit(w, p, events);
	if (events != 0 && name != r->name)
		rtr__ring_rename((struct rtr__ring *)(uintptr_t)r, name, len);
}

/* The ring's name is the writer's once the ring is made: the next file names the
 * thread with the name it has now. */
void rtr__ring_rename(struct rtr__ring *r, const char *name, size_t len)
{
	size_t n = len < sizeof(r->name) - 1 ? len : sizeof(r->name) - 1;

	if (n < len)
		while (n > 0 && ((unsigned char)name[n] & 0xc0) == 0x80)
			n--; /* not inside a character */
	memmove(r->name, name, n);
	r->name[n] = '\0';
}

/* The program's process label and sort index, once per file. */
void rtr__json_process_meta(struct rtr__writer *w)
{
	char label[RTR_NAME_MAX];
	int sort;

	w->json.process_meta_done = 1;
	int has_sort = rtr__process_meta(label, &sort);
	if (label[0] != '\0')
		put_meta_line(w, 0, "process_labels", (uint32_t)w->s.pid, (uint32_t)w->s.start_tid,
			      "labels", label, strlen(label), 0);
	if (has_sort)
		put_meta_line(w, 0, "process_sort_index", (uint32_t)w->s.pid,
			      (uint32_t)w->s.start_tid, "sort_index", NULL, 0, sort);
}

/* An RTR__K_META record: what the program set while recording. False for an unknown
 * `what`, having written nothing. */
bool rtr__json_meta_record(struct rtr__writer *w, const struct rtr__ring *r,
			   const struct rtr__rec *rec, const struct rtr__rec_view *v)
{
	uint32_t pid = (uint32_t)w->s.pid;

	if (rec->a == RTR__META_PROCESS_LABEL && v->name == NULL)
		return false; /* a label is a copied name */
	switch (rec->a) {
	case RTR__META_PROCESS_LABEL:
		put_meta_line(w, 1, "process_labels", pid, (uint32_t)r->tid, "labels", v->name,
			      v->name_len, 0);
		break;
	case RTR__META_PROCESS_SORT:
		put_meta_line(w, 1, "process_sort_index", pid, (uint32_t)r->tid, "sort_index", NULL,
			      0, (int64_t)v->word);
		break;
	case RTR__META_THREAD_SORT:
		put_meta_line(w, 1, "thread_sort_index", pid, (uint32_t)r->tid, "sort_index", NULL,
			      0, (int64_t)v->word);
		break;
	default:
		return false;
	}
	return true;
}

/* Name the track's process and lane `k`, once per file (rtr__out.file_id). */
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
static void encode_mem(struct rtr__writer *w, const struct rtr__rec *rec, uint64_t ts,
		       int64_t device)
{
	uint64_t bytes = rec->b, in_use;

	if (rec->kind == RTR__K_MEM_ALLOC)
		in_use = rtr__memstack_alloc(&w->json.mem, device, rec->a, bytes);
	else
		in_use = rtr__memstack_free(&w->json.mem, device, rec->a, &bytes);

	char *p = out_reserve(w, 2 * MEM_LINE_BOUND);
	p = PUT_LIT(p, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"memory\",\"name\":");
	p = rec->kind == RTR__K_MEM_ALLOC ? PUT_LIT(p, "\"alloc\",\"ts\":")
					  : PUT_LIT(p, "\"free\",\"ts\":");
	p = rtr__json_us(p, ts);
	p = put_ids_open(w, p);
	p = PUT_LIT(p, ",\"args\":{\"addr\":\"");
	p = rtr__memstack_hex(p, rec->a);
	p = PUT_LIT(p, "\",\"bytes\":");
	p = rtr__json_u64(p, bytes);
	p = PUT_LIT(p, ",\"device\":");
	p = rtr__json_i64(p, device);
	p = PUT_LIT(p, "}},\n");
	if (device == RTR_MEM_HOST) {
		p = PUT_LIT(p, "{\"ph\":\"C\",\"name\":\"memory host\",\"ts\":");
	} else {
		p = PUT_LIT(p, "{\"ph\":\"C\",\"name\":\"memory device ");
		p = rtr__json_i64(p, device);
		p = PUT_LIT(p, "\",\"ts\":");
	}
	p = rtr__json_us(p, ts);
	p = put_ids_open(w, p);
	p = PUT_LIT(p, ",\"args\":{\"bytes_in_use\":");
	p = rtr__json_u64(p, in_use);
	p = PUT_LIT(p, "}},\n");
	out_commit(w, p, 1);
}

/* A stack sample: a thread-scoped instant whose "stack" holds the frames' names. */
static void encode_stack(struct rtr__writer *w, struct rtr__ring *r, const struct rtr__rec *rec,
			 uint32_t pos, uint64_t ts)
{
	size_t n = rec->ext / sizeof(uint64_t);
	const char *frames = NULL;
	struct rtr__rec_view v;

	if (n > RTR_MAX_FRAMES)
		n = RTR_MAX_FRAMES; /* the producer never writes more: a bound for the line */
	if (n > 0)
		frames = rtr__ring_ext(r, pos, n * sizeof(uint64_t), w->json.scratch);
	memset(&v, 0, sizeof(v));

	char *p = out_reserve(w, LINE_FIXED + 2 * (size_t)RTR_INTERN_MAX_ESCAPED +
					 n * (RTR_SYM_MAX_ESCAPED + 3));
	p = put_head(w, p, RTR__K_STACK, rec, &v);
	p = rtr__json_us(p, ts);
	p = put_ids_open(w, p);
	p = PUT_LIT(p, ",\"args\":{\"stack\":[");
	for (size_t k = 0; k < n; k++) {
		uint64_t addr;
		size_t len;
		memcpy(&addr, frames + k * sizeof(addr), sizeof(addr));
		const char *text = rtr__memstack_symbol(&w->json.mem, addr, &len);
		if (k > 0)
			*p++ = ',';
		*p++ = '"';
		p = put(p, text, len);
		*p++ = '"';
	}
	p = PUT_LIT(p, "]}},\n");
	out_commit(w, p, 1);
}

/* Kinds RTR__K_MEM_ALLOC .. RTR__K_STACK. word: a memory event's device. */
void rtr__json_memstack(struct rtr__writer *w, struct rtr__ring *r, const struct rtr__rec *rec,
			uint32_t pos, uint64_t word)
{
	uint64_t ts = rtr__writer_rel_ns(w, rtr__writer_ticks_ns(w, rec->ts));

	if (rec->kind == RTR__K_STACK)
		encode_stack(w, r, rec, pos, ts);
	else
		encode_mem(w, rec, ts, (int64_t)word);
}

/* rtr__format.meta: the lines the writer makes about a thread. */
void rtr__json_meta(struct rtr__writer *w, const struct rtr__ring *r, int what, int64_t value)
{
	char *p;

	switch (what) {
	case RTR__WMETA_THREAD_NAME:
		rtr__json_thread_name(w, r, r->name, strnlen(r->name, sizeof(r->name)), 0);
		break;
	case RTR__WMETA_THREAD_SORT:
		put_meta_line(w, 0, "thread_sort_index", (uint32_t)w->s.pid, (uint32_t)r->tid,
			      "sort_index", NULL, 0, value);
		break;
	case RTR__WMETA_DROPS: /* a counter track: the session's running total */
		p = out_reserve(w, LINE_FIXED);
		p = PUT_LIT(p, "{\"ph\":\"C\",\"name\":\"ringtrace: dropped\",\"ts\":");
		p = rtr__json_us(p, rtr__writer_rel_ns(w, rtr__mono_ns()));
		p = put_pid_tid(w, p, r->tid);
		p = PUT_LIT(p, ",\"args\":{\"events\":");
		p = rtr__json_u64(p, (uint64_t)value);
		p = PUT_LIT(p, "}},\n");
		out_commit(w, p, 0);
		break;
	}
}
