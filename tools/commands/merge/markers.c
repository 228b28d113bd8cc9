/* SPDX-License-Identifier: MIT */
/*
 * The markers of `ringtrace merge` (merge.h, "Markers"): one start marker with the
 * common origin and each input's place, one end marker with the inputs' counts summed.
 */
#include "merge.h"

#include "common/names.h"

#include <string.h>

static int put_origin(struct buf *b, const char *key, uint64_t v)
{
	return buf_putc(b, ',') || buf_put_key(b, key) || buf_putc(b, '"') || buf_put_u64(b, v) ||
	       buf_putc(b, '"');
}

int merge_write_start(struct merge *m)
{
	struct buf *b = &m->line;
	int64_t rtt = 0, error = 0;
	int err;

	b->len = 0;
	err = buf_puts(b, "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"" RTR__MARK_START
			  "\",\"ts\":0,\"pid\":") ||
	      buf_put_i64(b, m->marker_pid) || buf_puts(b, ",\"tid\":") ||
	      buf_put_i64(b, m->marker_tid) || buf_puts(b, ",\"args\":{\"merged_from\":") ||
	      buf_put_u64(b, m->n) || buf_puts(b, ",\"clock\":\"") ||
	      buf_puts(b, merge_clock_names[m->clock]) || buf_putc(b, '"');
	if (!err && m->has_origin_mono)
		err = put_origin(b, RTR__KEY_ORIGIN_MONO, m->origin_mono);
	if (!err && m->has_origin_real)
		err = put_origin(b, RTR__KEY_ORIGIN_REAL, m->origin_real);
	if (!err && m->host != NULL)
		err = buf_puts(b, ",\"host\":") || json_put_string(b, m->host, strlen(m->host)) < 0;
	if (!err && m->clock == CLOCK_SYNC)
		err = buf_puts(b, ",\"reference_rank\":") || buf_put_i64(b, m->reference_rank) ||
		      buf_puts(b, ",\"max_error_ns\":") || buf_put_i64(b, m->max_error_ns) ||
		      buf_puts(b, ",\"max_rtt_ns\":") || buf_put_i64(b, m->max_rtt_ns);
	err = err || buf_puts(b, ",\"inputs\":[");
	for (size_t i = 0; i < m->n && !err; i++) {
		const struct input *in = &m->in[i];
		const struct pid_map *pm =
			in->has_main ? table_get(&in->pids, &in->main_pid, sizeof(in->main_pid))
				     : NULL;

		err = (i > 0 && buf_putc(b, ',')) || buf_puts(b, "{\"file\":") ||
		      json_put_string(b, in->name, strlen(in->name)) < 0;
		if (!err && in->has_rank)
			err = buf_puts(b, ",\"rank\":") || buf_put_i64(b, in->rank);
		if (!err && in->host != NULL)
			err = buf_puts(b, ",\"host\":") ||
			      json_put_string(b, in->host, strlen(in->host)) < 0;
		if (!err && pm != NULL)
			err = buf_puts(b, ",\"pid\":") || buf_put_i64(b, in->main_pid) ||
			      buf_puts(b, ",\"merged_pid\":") || buf_put_i64(b, pm->pid);
		if (!err && in->has_mono)
			err = put_origin(b, RTR__KEY_ORIGIN_MONO, in->mono);
		if (!err && in->has_real)
			err = put_origin(b, RTR__KEY_ORIGIN_REAL, in->real);
		if (!err)
			err = in->anchored ? buf_puts(b, ",\"shift_ns\":") ||
						     buf_put_i64(b, in->shift_ns)
					   : buf_puts(b, ",\"aligned\":false");
		if (!err && in->anchored)
			err = buf_puts(b, ",\"aligned_by\":\"") ||
			      buf_puts(b, in->measured		      ? "clock sync"
					  : m->fallback == CLOCK_MONO ? RTR__KEY_ORIGIN_MONO
								      : RTR__KEY_ORIGIN_REAL) ||
			      buf_putc(b, '"');
		if (in->measured)
			sync_bounds(&in->sync, &rtt, &error);
		if (!err && in->measured)
			err = buf_puts(b, ",\"clock_syncs\":") || buf_put_u64(b, in->sync.n) ||
			      buf_puts(b, ",\"offset_ns\":") ||
			      buf_put_i64(b, in->sync.m[0].offset_ns) ||
			      buf_puts(b, ",\"drift_ppb\":") ||
			      buf_put_i64(b, sync_drift_ppb(&in->sync)) ||
			      buf_puts(b, ",\"max_error_ns\":") || buf_put_i64(b, error) ||
			      buf_puts(b, ",\"max_rtt_ns\":") || buf_put_i64(b, rtt);
		err = err || buf_putc(b, '}');
	}
	if (err || buf_puts(b, "]}}")) {
		m->nomem = true;
		return -1;
	}
	return merge_write_line(m, b->p, b->len);
}

/* Keys of the inputs' end markers that the merged one writes itself. */
static bool own_end_key(const struct json_member *a)
{
	return json_member_is(a, RTR__KEY_FINAL) || json_member_is(a, "merged_from") ||
	       json_member_is(a, "merged_events") || json_member_is(a, "slices_closed") ||
	       json_member_is(a, "messages") || json_member_is(a, "inputs");
}

/* The inputs' end-marker counts, summed key by key in order of appearance. */
static int put_sums(struct merge *m, struct buf *b)
{
	struct table sums;
	int err = 0;

	table_init(&sums, sizeof(int64_t));
	for (size_t i = 0; i < m->n && !err; i++) {
		const struct input *in = &m->in[i];
		struct json_member a;
		size_t pos = 0;

		if (!in->end_seen)
			continue;
		while (!err && json_next_member(in->end_args.p, in->end_args.len, &pos, &a)) {
			int64_t v, *sum;

			if (own_end_key(&a) || json_parse_i64(a.value, a.value_len, &v) != 0)
				continue;
			sum = table_put(&sums, a.key, a.key_len, NULL);
			if (sum == NULL)
				err = -1;
			else
				*sum += v;
		}
	}
	for (int64_t *sum = table_first(&sums); sum != NULL && !err; sum = table_next(sum)) {
		size_t len;
		const char *key = table_key(&sums, sum, &len);

		err = buf_puts(b, ",\"") || buf_put(b, key, len) || buf_puts(b, "\":") ||
		      buf_put_i64(b, *sum);
	}
	table_destroy(&sums);
	return err;
}

/* The messages' counts: ,"messages":{...}. */
static int put_messages(struct merge *m, struct buf *b)
{
	return buf_puts(b, ",\"messages\":{\"joined\":") || buf_put_u64(b, m->messages) ||
	       buf_puts(b, ",\"violations\":") || buf_put_u64(b, m->violations) ||
	       buf_puts(b, ",\"corrected\":") || buf_put_u64(b, m->corrected) ||
	       buf_puts(b, ",\"moved_events\":") || buf_put_u64(b, m->moved_events) ||
	       buf_puts(b, ",\"max_move_ns\":") || buf_put_i64(b, m->max_move_ns) ||
	       buf_puts(b, ",\"min_latency_ns\":") || buf_put_i64(b, m->min_latency_ns) ||
	       buf_puts(b, ",\"receives_without_send\":") || buf_put_u64(b, m->unmatched) ||
	       buf_puts(b, ",\"sends_without_receive\":") ||
	       buf_put_u64(b, m->sends.count + m->forgotten) || buf_putc(b, '}');
}

int merge_write_end(struct merge *m)
{
	struct buf *b = &m->line;
	int err;

	b->len = 0;
	err = buf_puts(b, "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"" RTR__MARK_END "\",\"ts\":") ||
	      buf_put_us(b, m->has_latest && m->latest > 0 ? m->latest : 0) ||
	      buf_puts(b, ",\"pid\":") || buf_put_i64(b, m->marker_pid) ||
	      buf_puts(b, ",\"tid\":") || buf_put_i64(b, m->marker_tid) ||
	      buf_puts(b, ",\"args\":{\"" RTR__KEY_FINAL "\":true,\"merged_from\":") ||
	      buf_put_u64(b, m->n) || put_sums(m, b) || buf_puts(b, ",\"merged_events\":") ||
	      buf_put_u64(b, m->written) || buf_puts(b, ",\"slices_closed\":") ||
	      buf_put_u64(b, m->closed) || put_messages(m, b) || buf_puts(b, ",\"inputs\":[");
	for (size_t i = 0; i < m->n && !err; i++) {
		const struct input *in = &m->in[i];
		const struct trace_status *st = trace_status(in->r);

		err = (i > 0 && buf_putc(b, ',')) || buf_puts(b, "{\"file\":") ||
		      json_put_string(b, in->name, strlen(in->name)) < 0 ||
		      buf_puts(b, ",\"" RTR__KEY_FINAL "\":") ||
		      buf_puts(b, in->end_seen && in->end_final ? "true" : "false") ||
		      buf_puts(b, ",\"cut\":") || buf_puts(b, st->cut ? "true" : "false") ||
		      buf_puts(b, ",\"events\":") || buf_put_u64(b, in->events) ||
		      (in->moved_events > 0 &&
		       (buf_puts(b, ",\"moved_events\":") || buf_put_u64(b, in->moved_events))) ||
		      buf_putc(b, '}');
	}
	if (err || buf_puts(b, "]}}")) {
		m->nomem = true;
		return -1;
	}
	return merge_write_last(m, b->p, b->len);
}
