/* SPDX-License-Identifier: MIT */
/*
 * What keeps the inputs of `ringtrace merge` apart (merge.h, "Processes" and "Flow
 * and async ids"): their labels, pids made collision-free, the processes named and
 * sorted by rank, and the flow and async ids that are private to an input replaced.
 */
#include "merge.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* The distance between the planes remapped pids go to: above every real pid (at
 * most 2^22 on Linux), so a remapped pid keeps the original in its low bits. */
#define PID_PLANE ((int64_t)1 << 24)

/* The tag rtr_flow_id() puts in an id: the low 24 bits of the pid, in bits 40..63. */
#define ID_TAG_SHIFT 40
#define PID_TAG_MASK 0xffffffu

/* Pseudo-process ids of tracks start here: they are not pids to show. */
#define PSEUDO_PID_BASE 0x40000000

/* Sort indexes: rank * SORT_STRIDE, plus the process's own place within the rank. */
#define SORT_STRIDE 1024

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash != NULL ? slash + 1 : path;
}

/* Each input's label ("rank 3 · node12") and place among the processes. 0 or -1. */
int merge_make_labels(struct merge *m)
{
	int64_t max_rank = -1;

	for (size_t i = 0; i < m->n; i++) {
		if (m->in[i].has_rank && m->in[i].rank > max_rank)
			max_rank = m->in[i].rank;
	}
	for (size_t i = 0; i < m->n; i++) {
		struct input *in = &m->in[i];
		struct buf b = {0};
		char num[32];
		int err;

		/* Files without a rank follow the ranks, in command-line order. */
		in->order = in->has_rank ? in->rank : max_rank + 1 + (int64_t)i;
		if (in->has_rank) {
			snprintf(num, sizeof(num), "rank %" PRId64, in->rank);
			err = buf_puts(&b, num);
		} else {
			err = buf_puts(&b, base_name(in->name));
		}
		if (!err && in->host != NULL)
			err = buf_puts(&b, " \xc2\xb7 ") || buf_puts(&b, in->host);
		err = err || buf_putc(&b, '\0');
		if (err) {
			buf_free(&b);
			return -1;
		}
		in->label = b.p;
	}
	return 0;
}

static bool claimed(const struct merge *m, int64_t pid)
{
	return table_get(&m->claims, &pid, sizeof(pid)) != NULL;
}

/* A pid nobody has claimed, for the input's pid that someone has. */
static int64_t free_pid(const struct merge *m, const struct input *in, int64_t pid)
{
	uint64_t low = (uint64_t)pid & INT32_MAX;
	uint64_t k = in->index > 0 ? in->index : 1;

	/* First the input's own plane, pid + k * 2^24 (mod 2^31: Perfetto's pids are
	 * int32, and a .pftrace keeps them), so that the original still shows in the low
	 * bits; then the next planes. */
	for (unsigned tries = 0; tries < 256; tries++, k++) {
		int64_t cand = (int64_t)((low + k * (uint64_t)PID_PLANE) & INT32_MAX);

		if (cand != 0 && !claimed(m, cand))
			return cand;
	}
	for (int64_t cand = INT32_MAX;; cand--) {
		if (!claimed(m, cand))
			return cand; /* ends: the claims are finite */
	}
}

/* The output pid of an input's pid, claimed the first time. NULL when out of memory. */
struct pid_map *merge_pid_of(struct merge *m, struct input *in, int64_t pid)
{
	struct pid_map *pm;
	struct claim *c;
	bool created;

	if (in->last_map != NULL && in->last_pid == pid)
		return in->last_map;
	pm = table_put(&in->pids, &pid, sizeof(pid), &created);
	if (pm == NULL) {
		m->nomem = true;
		return NULL;
	}
	if (created) {
		pm->main = in->has_main && pid == in->main_pid;
		const struct pid_map *first =
			in->process != in->index
				? table_get(&m->in[in->process].pids, &pid, sizeof(pid))
				: NULL;

		/* Another segment of a process: the pids its first segment was given. */
		c = table_get(&m->claims, &pid, sizeof(pid));
		if (first != NULL) {
			pm->pid = first->pid;
		} else if (c != NULL && c->pid == pid && m->in[c->input].process == in->process) {
			pm->pid = pid;
		} else {
			pm->pid = c != NULL ? free_pid(m, in, pid) : pid;
			c = table_put(&m->claims, &pm->pid, sizeof(pm->pid), NULL);
			if (c == NULL) {
				m->nomem = true;
				return NULL;
			}
			c->input = in->index;
			c->pid = pid;
		}
		pm->remapped = pm->pid != pid;
	}
	in->last_map = pm;
	in->last_pid = pid;
	return pm;
}

/* The inputs' own pids first, in command-line order: they stay unless two share one. */
int merge_claim_main_pids(struct merge *m)
{
	for (size_t i = 0; i < m->n; i++) {
		struct input *in = &m->in[i];
		uint64_t tag;
		size_t *count;

		if (!in->has_main)
			continue;
		if (merge_pid_of(m, in, in->main_pid) == NULL)
			return -1;
		if (in->process != i)
			continue; /* its process is counted once */
		tag = (uint64_t)in->main_pid & PID_TAG_MASK;
		count = table_put(&m->tags, &tag, sizeof(tag), NULL);
		if (count == NULL)
			return -1;
		(*count)++;
	}
	return 0;
}

/* The name of a process: "rank 3 · node12 · solver". Appended, unquoted, to b. */
static int process_name(struct buf *b, const struct input *in, const struct pid_map *pm,
			int64_t pid, const struct trace_value *name)
{
	char num[48];
	int err = buf_puts(b, in->label);

	/* The MPI module names a rank's process "rank R": the label says it already. */
	if (name != NULL && in->has_rank) {
		snprintf(num, sizeof(num), "rank %" PRId64, in->rank);
		if (trace_value_is(name, num))
			name = NULL;
	}
	if (name != NULL && name->type == TRACE_STRING && name->len > 0) {
		err = err || buf_puts(b, " \xc2\xb7 ") || buf_put(b, name->text, name->len);
	} else if (!pm->main) {
		snprintf(num, sizeof(num), " \xc2\xb7 pid %" PRId64, pid);
		err = err || buf_puts(b, num);
		return err;
	}
	/* A remapped real pid: the original, to line the process up with top and perf. */
	if (pm->remapped && pid >= 0 && pid < PSEUDO_PID_BASE) {
		snprintf(num, sizeof(num), " (was pid %" PRId64 ")", pid);
		err = err || buf_puts(b, num);
	}
	return err;
}

/* Ranks in order; within one, the input's own process first, then the others by
 * their own sort index. */
static int64_t sort_index(const struct input *in, const struct pid_map *pm)
{
	int64_t sub = pm->main ? 0 : 1;

	if (pm->has_own_sort)
		sub = 1 + (pm->own_sort < 0		    ? 0
			   : pm->own_sort > SORT_STRIDE - 2 ? SORT_STRIDE - 2
							    : pm->own_sort);
	return in->order * SORT_STRIDE + sub;
}

/* An M event of ours: {"ph":"M","name":WHAT,"pid":P,"tid":P,"args":{KEY:VALUE}}. */
static int put_meta(struct merge *m, const char *what, int64_t pid, const char *key,
		    const char *value, size_t value_len)
{
	struct buf *b = &m->line;

	b->len = 0;
	if (buf_puts(b, "{\"ph\":\"M\",\"name\":\"") || buf_puts(b, what) ||
	    buf_puts(b, "\",\"pid\":") || buf_put_i64(b, pid) || buf_puts(b, ",\"tid\":") ||
	    buf_put_i64(b, pid) || buf_puts(b, ",\"args\":{") || buf_put_key(b, key) ||
	    buf_put(b, value, value_len) || buf_puts(b, "}}")) {
		m->nomem = true;
		return -1;
	}
	return merge_write_line(m, b->p, b->len);
}

/* Before the first event of a process that the input did not name (or sort) first. */
int merge_name_process(struct merge *m, struct input *in, struct pid_map *pm, int64_t pid)
{
	struct buf *t = &m->text;

	if (!pm->named) {
		pm->named = true;
		m->args.len = 0;
		t->len = 0;
		if (process_name(t, in, pm, pid, NULL) ||
		    json_put_string(&m->args, t->p, t->len) < 0) {
			m->nomem = true;
			return -1;
		}
		if (put_meta(m, "process_name", pm->pid, "name", m->args.p, m->args.len))
			return -1;
	}
	if (!pm->sorted) {
		pm->sorted = true;
		m->args.len = 0;
		if (buf_put_i64(&m->args, sort_index(in, pm))) {
			m->nomem = true;
			return -1;
		}
		if (put_meta(m, "process_sort_index", pm->pid, "sort_index", m->args.p,
			     m->args.len))
			return -1;
	}
	return 0;
}

/* The args of an input's process_name or process_sort_index, made the merge's. */
int merge_meta_args(struct merge *m, struct input *in, struct pid_map *pm,
		    const struct trace_event *ev, struct event_edit *e)
{
	struct buf *t = &m->text;
	int err;

	t->len = 0;
	m->args.len = 0;
	if (trace_value_is(&ev->name, "process_name")) {
		struct buf quoted = {0};

		pm->named = true;
		err = process_name(t, in, pm, ev->pid_num, trace_event_arg(ev, "name")) ||
		      json_put_string(&quoted, t->p, t->len) < 0 ||
		      args_with(&m->args, ev, "name", quoted.p, quoted.len);
		buf_free(&quoted);
	} else if (trace_value_is(&ev->name, "process_sort_index")) {
		const struct trace_value *v = trace_event_arg(ev, "sort_index");
		int64_t own;

		if (v != NULL && v->type == TRACE_NUMBER &&
		    json_parse_i64(v->text, v->len, &own) == 0) {
			pm->has_own_sort = true;
			pm->own_sort = own;
		}
		pm->sorted = true;
		err = buf_put_i64(t, sort_index(in, pm)) ||
		      args_with(&m->args, ev, "sort_index", t->p, t->len);
	} else {
		return 0;
	}
	if (err) {
		m->nomem = true;
		return -1;
	}
	e->args = m->args.p;
	e->args_len = m->args.len;
	return 0;
}

/* Is the id one rtr_flow_id() made in exactly one of the inputs' processes? */
static bool global_id(const struct merge *m, const struct trace_value *id)
{
	uint64_t v, tag;
	const size_t *count;

	if (value_id_u64(id, &v) != 0)
		return false;
	tag = v >> ID_TAG_SHIFT;
	if (tag == 0)
		return false;
	count = table_get(&m->tags, &tag, sizeof(tag));
	return count != NULL && *count == 1;
}

/* Is the event's id the same in every input, and kept? The MPI module's message ids,
 * and the global ids of rtr_flow_id(). */
static bool kept_id(const struct merge *m, const struct input *in, const struct trace_event *ev)
{
	bool flow = ev->phase == 's' || ev->phase == 't' || ev->phase == 'f';

	if (ev->id.type == TRACE_ABSENT)
		return false;
	return (flow && in->has_rank && trace_value_is(&ev->cat, "mpi")) || global_id(m, &ev->id);
}

/* A flow or async id of an input: kept when global, else its private replacement. */
int merge_map_id(struct merge *m, struct input *in, const struct trace_event *ev,
		 struct event_edit *e)
{
	bool flow = ev->phase == 's' || ev->phase == 't' || ev->phase == 'f';
	struct id_map *im;
	bool created;
	char type = (char)ev->id.type, kind = flow ? 'f' : 'a';
	char tmp[24];

	if (ev->id.type == TRACE_ABSENT || kept_id(m, in, ev))
		return 0;
	m->text.len = 0;
	if (buf_putc(&m->text, kind) || buf_putc(&m->text, type) ||
	    buf_put(&m->text, ev->id.text, ev->id.len))
		goto nomem;
	im = table_put(&in->ids, m->text.p, m->text.len, &created);
	if (im == NULL)
		goto nomem;
	if (created) {
		im->id = ++m->next_id;
		if (in->ids.count > MAX_IDS)
			table_remove(&in->ids, table_first(&in->ids)); /* the oldest */
	}
	/* Same kind of value as before: the viewers accept an integer or a hex string. */
	m->args.len = 0;
	if (ev->id.type == TRACE_NUMBER) {
		if (buf_put_u64(&m->args, im->id))
			goto nomem;
	} else {
		snprintf(tmp, sizeof(tmp), "\"0x%" PRIx64 "\"", im->id);
		if (buf_puts(&m->args, tmp))
			goto nomem;
	}
	e->id = m->args.p;
	e->id_len = m->args.len;
	/* Forget the id once its flow or span is over: a later one may reuse it. */
	if (flow) {
		im->saw_s |= ev->phase == 's';
		im->saw_f |= ev->phase == 'f';
		if (im->saw_s && im->saw_f)
			table_remove(&in->ids, im);
	} else if (ev->phase != 'n') {
		im->open += ev->phase == 'b' ? 1 : -1;
		if (im->open == 0)
			table_remove(&in->ids, im);
	}
	return 0;
nomem:
	m->nomem = true;
	return -1;
}
