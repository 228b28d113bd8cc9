/* SPDX-License-Identifier: MIT */
/*
 * The JSON file around the lines, and the format's table.
 *
 * The file is a bare JSON array, one event per line: "[", the start marker (the
 * origin and the configuration, what a merge needs), the process name, the events,
 * then the end marker with the totals and "]". The writer closes every chunk but the
 * last with a provisional end marker and "]" (out.c), so a file between two writes
 * is strict JSON, and one cut during a write ends after a whole line. Why the bare
 * array and not {"traceEvents":[...]}: it is the form every viewer loads when the
 * closing "]" is missing (docs/format.md).
 */
#include "format/json/json.h"

#include "common/mem.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define INTERN_ARENA ((size_t)4 << 20)
#define INTERN_SLOTS ((size_t)1 << 16)

/* A marker's arguments: `"key":value,...`, without the braces. */
static char *put_marker_args(char *p, const struct rtr__marker *m)
{
	for (unsigned i = 0; i < m->n; i++) {
		const struct rtr__kv *kv = &m->kv[i];
		if (i > 0)
			*p++ = ',';
		p = put_escaped_str(p, kv->key);
		*p++ = ':';
		switch (kv->type) {
		case RTR__KV_U64:
			p = rtr__jsontext_u64(p, kv->num);
			break;
		case RTR__KV_U64_TEXT: /* past 2^53: a viewer's double would round it */
			*p++ = '"';
			p = rtr__jsontext_u64(p, kv->num);
			*p++ = '"';
			break;
		case RTR__KV_STR:
			p = put_escaped_str(p, kv->str);
			break;
		case RTR__KV_BOOL:
			p = kv->num ? PUT_LIT(p, "true") : PUT_LIT(p, "false");
			break;
		}
	}
	return p;
}

/* rtr__format.begin_file: "[", the start marker at the origin (ts 0), the process's
 * name, label and sort index. */
static void json_begin_file(struct rtr__writer *w, const struct rtr__marker *start)
{
	struct rtr__json *j = json_of(w);
	const struct rtr__session *s = &w->s;
	char *p = out_reserve(w, 16384);

	j->ids_tid = -1;
	p = PUT_LIT(p, "[\n");
	p = out_commit(w, p, 0); /* every line, even this one, is accounted for by itself */
	p = PUT_LIT(p, "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"" RTR__MARK_START "\",\"ts\":0");
	p = put_pid_tid(j, p, s->start_tid);
	p = PUT_LIT(p, ",\"args\":{");
	p = put_marker_args(p, start);
	p = PUT_LIT(p, "}},\n");
	p = out_commit(w, p, 0);
	p = PUT_LIT(p, "{\"ph\":\"M\",\"name\":\"process_name\"");
	p = put_pid_tid(j, p, s->pid);
	p = PUT_LIT(p, ",\"args\":{\"name\":");
	p = put_escaped_str(p, s->process_name);
	p = PUT_LIT(p, "}},\n");
	out_commit(w, p, 0);
	rtr__json_process_meta(w); /* the label and sort index, in every file */
}

/* rtr__format.end_file: the end marker, then "]": the file is strict JSON. */
static void json_end_file(struct rtr__writer *w, const struct rtr__marker *end)
{
	struct rtr__json *j = json_of(w);
	char *p = w->out.chunk->data + w->out.chunk->len;

	p = PUT_LIT(p, "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"" RTR__MARK_END "\",\"ts\":");
	p = rtr__jsontext_us(p, rel_ns(w, end->ts));
	p = put_pid_tid(j, p, w->s.start_tid);
	p = PUT_LIT(p, ",\"args\":{");
	p = put_marker_args(p, end);
	p = PUT_LIT(p, "}}\n");
	p = out_commit(w, p, 0);
	p = PUT_LIT(p, "]\n");
	out_commit(w, p, 0);
}

static int json_init(struct rtr__writer *w)
{
	struct rtr__json *j = rtr__mem_map(sizeof(*j));
	int err;

	if (j == NULL)
		return -ENOMEM;
	j->pid_tid_len = (size_t)snprintf(j->pid_tid, sizeof(j->pid_tid),
					  ",\"pid\":%ld,\"tid\":", (long)w->s.pid);
	j->ids_tid = -1;
	err = rtr__intern_init(&j->intern, INTERN_ARENA, INTERN_SLOTS);
	if (err != 0) {
		rtr__mem_unmap(j, sizeof(*j));
		return err;
	}
	j->heads_epoch = j->intern.resets;
	j->heads = rtr__mem_map(HEAD_SLOTS * sizeof(*j->heads));
	if (j->heads == NULL) {
		rtr__intern_destroy(&j->intern);
		rtr__mem_unmap(j, sizeof(*j));
		return -ENOMEM;
	}
	w->fmt_state = j;
	return 0;
}

static void json_fini(struct rtr__writer *w, int how)
{
	struct rtr__json *j = json_of(w);

	w->fmt_state = NULL;
	if (j == NULL || how == RTR__FINI_FORGET)
		return; /* the parent's writer may be freeing it */
	rtr__mem_unmap(j->heads, HEAD_SLOTS * sizeof(*j->heads));
	rtr__intern_destroy(&j->intern);
	rtr__mem_unmap(j, sizeof(*j));
}

const struct rtr__format rtr__json_format = {
	.name = "json",
	.pads_pages = 1,
	.holds_begins = 1,
	.init = json_init,
	.fini = json_fini,
	.begin_file = json_begin_file,
	.end_file = json_end_file,
	.begin_ring = rtr__json_begin_ring,
	.meta = rtr__json_meta,
	.events = rtr__json_events,
	.cut = rtr__json_cut,
};
