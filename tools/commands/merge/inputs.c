/* SPDX-License-Identifier: MIT */
/*
 * The inputs of `ringtrace merge` (merge.h): each opened, its start marker read
 * before anything is written, the segments of one rotated trace grouped into one
 * process, and the clock sync measurements of the ranks scanned.
 */
#include "merge.h"

#include "common/names.h"
#include "pftrace.h"
#include "progress.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Inputs beyond which each reader takes small buffers. */
#define MANY_INPUTS 64

/* Take what the merge needs from an input's start marker. 0, or -1 out of memory. */
static int read_start_marker(struct input *in, const struct trace_event *ev)
{
	const struct trace_value *v;
	uint64_t u;
	int64_t i;

	in->has_start = true;
	v = trace_event_arg(ev, RTR__KEY_ORIGIN_MONO);
	in->has_mono = v != NULL && value_u64(v, &in->mono) == 0;
	v = trace_event_arg(ev, RTR__KEY_ORIGIN_REAL);
	in->has_real = v != NULL && value_u64(v, &in->real) == 0;
	v = trace_event_arg(ev, RTR__KEY_RANK);
	if (v != NULL && v->type == TRACE_NUMBER && json_parse_i64(v->text, v->len, &i) == 0 &&
	    i >= 0) {
		in->has_rank = true;
		in->rank = i;
	}
	v = trace_event_arg(ev, RTR__KEY_SEGMENT);
	in->has_segment = v != NULL && value_u64(v, &in->segment) == 0;
	v = trace_event_arg(ev, RTR__KEY_HOST);
	if (v != NULL && v->type == TRACE_STRING && v->len > 0) {
		in->host = trace_value_dup(v);
		if (in->host == NULL)
			return -1;
	}
	v = trace_event_arg(ev, RTR__KEY_PID);
	if (ev->has_pid) {
		in->has_main = true;
		in->main_pid = ev->pid_num;
	} else if (v != NULL && value_u64(v, &u) == 0 && u <= UINT32_MAX) {
		in->has_main = true;
		in->main_pid = (int64_t)u;
	}
	in->main_tid = ev->has_tid ? ev->tid_num : in->main_pid;
	return 0;
}

/* Pull the next event of an input into head; NULL at its end. */
void merge_advance(struct input *in)
{
	in->rc = trace_next(in->r, &in->head);
	if (in->rc != 1)
		in->head = NULL;
}

/* Open every input and read its start marker. 0, or -1 (reported). */
int merge_open_inputs(struct merge *m, char **paths, size_t n)
{
	m->in = calloc(n, sizeof(*m->in));
	if (m->in == NULL) {
		cli_error("merge", "out of memory");
		return -1;
	}
	m->n = n;
	for (size_t i = 0; i < n; i++) {
		struct input *in = &m->in[i];
		struct trace_options ro = {.on_issue = cli_warn_issue,
					   .ctx = &in->warnings,
					   .flags = n > MANY_INPUTS ? TRACE_READ_SMALL : 0};

		in->index = i;
		in->path = paths[i];
		in->warnings.max = 10;
		table_init(&in->pids, sizeof(struct pid_map));
		table_init(&in->ids, sizeof(struct id_map));
		table_init(&in->clc, sizeof(struct clc_thread));
		threads_init(&in->threads, 0);
		in->r = cli_open_trace("merge", paths[i], &ro);
		if (in->r == NULL)
			return -1;
		in->name = trace_name(in->r);
		in->warnings.file = in->name;
		progress_total(m->bar, trace_status(in->r)->input_size);
	}
	for (size_t i = 0; i < n; i++) {
		struct input *in = &m->in[i];

		merge_advance(in);
		if (in->head != NULL && is_marker(in->head, RTR__MARK_START)) {
			/* Its thread counts (threads.h), though merge writes its own marker. */
			if ((threads_of(&in->threads, in->head) == NULL &&
			     !threads_refused(&in->threads)) ||
			    read_start_marker(in, in->head)) {
				cli_error("merge", "out of memory");
				return -1;
			}
			merge_advance(in);
		}
		if (!in->has_main && in->head != NULL && in->head->has_pid) {
			in->has_main = true;
			in->main_pid = in->head->pid_num;
			in->main_tid = in->head->has_tid ? in->head->tid_num : in->main_pid;
		}
	}
	return 0;
}

/* Is b another segment of a's rotated trace (the same origin, host, pid and rank in
 * its start marker, another segment number)? Not a copy of the same file, nor a
 * flight-mode snapshot (snapshots overlap): those stay processes of their own. */
static bool same_process(const struct input *a, const struct input *b)
{
	return a->has_segment && b->has_segment && a->segment != b->segment && a->has_mono &&
	       b->has_mono && a->mono == b->mono && a->has_main && b->has_main &&
	       a->main_pid == b->main_pid && a->has_rank == b->has_rank &&
	       (!a->has_rank || a->rank == b->rank) && (a->host == NULL) == (b->host == NULL) &&
	       (a->host == NULL || strcmp(a->host, b->host) == 0);
}

/* Each input's process: the first input of the same process. 0, or -1 out of memory. */
int merge_group_processes(struct merge *m)
{
	struct table first; /* (mono, pid) -> index + 1 of the first input with them */
	int err = 0;

	table_init(&first, sizeof(size_t));
	for (size_t i = 0; i < m->n && !err; i++) {
		struct input *in = &m->in[i];
		int64_t key[2] = {(int64_t)in->mono, in->main_pid};
		size_t *f;

		in->process = i;
		if (!in->has_segment || !in->has_mono || !in->has_main)
			continue;
		f = table_put(&first, key, sizeof(key), NULL);
		if (f == NULL)
			err = -1;
		else if (*f == 0)
			*f = i + 1;
		else if (same_process(&m->in[*f - 1], in))
			in->process = *f - 1;
	}
	table_destroy(&first);
	return err;
}

/* Read every ranked input's clock sync measurements (not standard input's: it
 * cannot be read twice). 0, or -1 out of memory (reported). */
int merge_scan_syncs(struct merge *m)
{
	for (size_t i = 0; i < m->n; i++) {
		struct input *in = &m->in[i];
		char err[256];
		int rc;

		if (!in->has_rank || !in->has_mono || in->mono > INT64_MAX)
			continue;
		if (strcmp(in->path, "-") == 0) {
			cli_note("merge",
				 "warning: standard input is read once: its clock sync events (if "
				 "any) are not used");
			continue;
		}
		if (pf_sniff_path(in->path) == 1) {
			/* a Perfetto trace: its measurements from its events, read once more */
			struct trace_options o = {.max_event_bytes = cli_max_event_bytes()};
			struct trace *t;
			int e = trace_open(in->path, &o, &t);

			if (e != 0) {
				snprintf(err, sizeof(err), "%s", strerror(-e));
				rc = -1;
			} else {
				rc = sync_scan_trace(t, in->rank, &in->sync, err, sizeof(err));
				trace_close(t);
			}
		} else {
			rc = sync_scan(in->path, in->rank, &in->sync, err, sizeof(err));
		}
		if (rc == -2) {
			cli_error("merge", "out of memory");
			return -1;
		}
		if (rc == -1) {
			cli_note("merge", "warning: %s: clock sync events not read: %s", in->name,
				 err);
			in->sync.n = 0;
		}
	}
	/* The segments of one process share their measurements. */
	for (size_t i = 0; i < m->n; i++) {
		struct input *in = &m->in[i];

		if (in->process != i && sync_pool(&m->in[in->process].sync, &in->sync)) {
			cli_error("merge", "out of memory");
			return -1;
		}
	}
	for (size_t i = 0; i < m->n; i++) {
		struct input *in = &m->in[i];

		if (in->process == i) {
			sync_finish(&in->sync);
		} else {
			sync_free(&in->sync);
			if (sync_copy(&in->sync, &m->in[in->process].sync)) {
				cli_error("merge", "out of memory");
				return -1;
			}
			continue;
		}
		if (in->sync.unusable + in->sync.outliers > 0)
			cli_note("merge",
				 "warning: %s: %" PRIu64 " of %" PRIu64
				 " clock sync measurements not used (%" PRIu64
				 " malformed or out of order, %" PRIu64 " outliers)",
				 in->name, in->sync.unusable + in->sync.outliers, in->sync.found,
				 in->sync.unusable, in->sync.outliers);
	}
	return 0;
}
