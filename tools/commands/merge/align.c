/* SPDX-License-Identifier: MIT */
/*
 * The clocks of `ringtrace merge` (merge.h, "Clocks"): which one the merged file
 * uses, each input's map onto it (by clock sync measurements, or by origins), and an
 * event's times in the merged timeline, moves of the controlled logical clock
 * included.
 */
#include "merge.h"

#include "common/names.h"

#include <inttypes.h>
#include <string.h>

static bool has_origin(const struct input *in, enum clock_choice c)
{
	return c == CLOCK_MONO ? in->has_mono : in->has_real;
}

static uint64_t origin_of(const struct input *in, enum clock_choice c)
{
	return c == CLOCK_MONO ? in->mono : in->real;
}

/* The reference clock's time of an input's file time t (measured inputs). */
static bool sync_time(struct input *in, int64_t t, int64_t *ref)
{
	int64_t at;

	return add_i64(t, (int64_t)in->mono, &at) && add_i64(at, sync_offset(&in->sync, at), ref);
}

/* The origins of the inputs, without measurements: their shift onto the earliest. */
static void align_by_origins(struct merge *m, enum clock_choice c)
{
	size_t earliest = m->n;
	uint64_t min = 0;

	for (size_t i = 0; i < m->n; i++) {
		const struct input *in = &m->in[i];

		if (has_origin(in, c) && (earliest == m->n || origin_of(in, c) < min)) {
			earliest = i;
			min = origin_of(in, c);
		}
	}
	m->clock = earliest < m->n ? c : CLOCK_NONE;
	if (earliest < m->n) {
		const struct input *e = &m->in[earliest];

		m->has_origin_mono = e->has_mono && (c == CLOCK_MONO || m->host != NULL);
		m->origin_mono = e->mono;
		m->has_origin_real = e->has_real;
		m->origin_real = e->real;
	}
	for (size_t i = 0; i < m->n; i++) {
		struct input *in = &m->in[i];
		uint64_t shift;

		if (!has_origin(in, c))
			continue;
		shift = origin_of(in, c) - min;
		if (shift > (uint64_t)INT64_MAX / 4) {
			cli_note("merge",
				 "warning: %s starts %" PRIu64 " s after the earliest file: its "
				 "times are taken as they are, not aligned",
				 in->name, shift / 1000000000u);
			continue;
		}
		in->anchored = true;
		in->shift_ns = (int64_t)shift;
	}
}

/* With measurements: the measured inputs on the reference clock, the others placed
 * by their origins against the measured input of the lowest rank. false when no
 * input can be mapped. */
static bool align_by_syncs(struct merge *m, enum clock_choice c)
{
	struct input *anchor = NULL;
	int64_t base = INT64_MAX;

	for (size_t i = 0; i < m->n; i++) {
		struct input *in = &m->in[i];

		if (in->sync.n == 0)
			continue;
		if (anchor != NULL && in->sync.reference_rank != anchor->sync.reference_rank) {
			cli_note("merge",
				 "warning: %s measured its clock against rank %" PRId64
				 ", not %" PRId64 ": aligned by its origin instead",
				 in->name, in->sync.reference_rank, anchor->sync.reference_rank);
			in->sync.n = 0;
			continue;
		}
		/* Origins within half the range of int64 keep every difference of two in it. */
		if (in->mono > INT64_MAX / 2 || !sync_time(in, 0, &in->mapped_origin) ||
		    in->mapped_origin > INT64_MAX / 2 || in->mapped_origin < INT64_MIN / 2) {
			cli_note("merge",
				 "warning: %s: its clock sync measurements map it out of range: "
				 "aligned by its origin instead",
				 in->name);
			in->sync.n = 0;
			continue;
		}
		in->measured = in->has_mapped_origin = true;
		m->measured++;
		if (anchor == NULL || in->rank < anchor->rank)
			anchor = in;
	}
	if (anchor == NULL)
		return false;
	m->reference_rank = anchor->sync.reference_rank;
	for (size_t i = 0; i < m->n; i++) {
		struct input *in = &m->in[i];
		__int128 mapped;

		if (in->measured) {
			int64_t rtt, error;

			sync_bounds(&in->sync, &rtt, &error);
			m->max_rtt_ns = rtt > m->max_rtt_ns ? rtt : m->max_rtt_ns;
			m->max_error_ns = error > m->max_error_ns ? error : m->max_error_ns;
		} else if (has_origin(in, c) && has_origin(anchor, c)) {
			mapped = (__int128)origin_of(in, c) - origin_of(anchor, c) +
				 anchor->mapped_origin;
			if (mapped > INT64_MAX / 2 || mapped < INT64_MIN / 2) {
				cli_note("merge",
					 "warning: %s is too far from the other files: its times "
					 "are taken as they are, not aligned",
					 in->name);
				continue;
			}
			in->mapped_origin = (int64_t)mapped;
			in->has_mapped_origin = true;
		}
		if (in->has_mapped_origin && in->mapped_origin < base)
			base = in->mapped_origin;
	}
	m->clock = CLOCK_SYNC;
	m->has_origin_mono = base >= 0;
	m->origin_mono = (uint64_t)base;
	m->has_origin_real =
		anchor->has_real && (__int128)anchor->real - (anchor->mapped_origin - base) >= 0;
	m->origin_real = (uint64_t)((__int128)anchor->real - (anchor->mapped_origin - base));
	for (size_t i = 0; i < m->n; i++) {
		struct input *in = &m->in[i];

		if (!in->has_mapped_origin)
			continue;
		in->anchored = true;
		in->shift_ns = in->mapped_origin - base;
		if (in->measured)
			in->sync_base = (int64_t)in->mono - base;
	}
	return true;
}

/* Choose the clock, the common origin and each input's map onto it. */
void merge_align(struct merge *m)
{
	enum clock_choice c = m->clock;
	bool same_host = true, all_mono = true, any_sync = false;
	const char *host = NULL;

	for (size_t i = 0; i < m->n; i++) {
		const struct input *in = &m->in[i];

		if (in->host == NULL)
			same_host = false;
		else if (host == NULL)
			host = in->host;
		else if (strcmp(host, in->host) != 0)
			same_host = false;
		all_mono &= in->has_mono;
		any_sync |= in->sync.n > 0;
	}
	m->host = same_host ? host : NULL;
	/* One host: its CLOCK_MONOTONIC is one clock for all its processes, and exact.
	 * Several hosts (or some unnamed): only CLOCK_REALTIME is common to them. */
	m->fallback = same_host && all_mono ? CLOCK_MONO : CLOCK_REAL;
	if (c == CLOCK_SYNC && !any_sync)
		cli_note("merge", "warning: --clock sync, but no file has clock sync events: "
				  "aligned by the files' origins");
	if ((c == CLOCK_AUTO || c == CLOCK_SYNC) && any_sync && align_by_syncs(m, m->fallback))
		goto report;
	if (c == CLOCK_AUTO || c == CLOCK_SYNC)
		c = m->fallback;
	else if (c == CLOCK_MONO && !same_host)
		cli_note("merge", "warning: --clock monotonic, but the files are not all from one "
				  "host: their monotonic clocks have unrelated origins");
	m->fallback = c;
	align_by_origins(m, c);
report:
	for (size_t i = 0; i < m->n; i++) {
		const struct input *in = &m->in[i];

		if (!in->anchored && !has_origin(in, m->fallback))
			cli_note("merge",
				 "warning: %s has no %s: its times are taken as they are, not "
				 "aligned",
				 in->name,
				 !in->has_start		     ? "start marker"
				 : m->fallback == CLOCK_MONO ? RTR__KEY_ORIGIN_MONO
							     : RTR__KEY_ORIGIN_REAL);
	}
	if (m->clock == CLOCK_SYNC)
		cli_note("merge",
			 "clocks: %zu of %zu files mapped onto rank %" PRId64
			 "'s clock by their clock sync measurements (offsets right within %.3f "
			 "us; largest RTT %.3f us)%s",
			 m->measured, m->n, m->reference_rank, (double)m->max_error_ns / 1e3,
			 (double)m->max_rtt_ns / 1e3,
			 m->measured == m->n	     ? ""
			 : m->fallback == CLOCK_MONO ? "; the others by their monotonic origins"
						     : "; the others by their realtime origins");
}

/* An input's time t in the merged timeline, before any move; false out of range. */
bool merge_linear_time(struct input *in, int64_t t, int64_t *out)
{
	int64_t at, sum;

	if (!in->measured)
		return add_i64(t, in->shift_ns, out);
	return add_i64(t, (int64_t)in->mono, &at) && add_i64(t, in->sync_base, &sum) &&
	       add_i64(sum, sync_offset(&in->sync, at), out);
}

/* The moves of a thread of the input; created (zeroed: none yet) when asked. NULL:
 * none, or out of memory (then m->nomem). */
struct clc_thread *merge_moves_of(struct merge *m, struct input *in, int64_t pid, int64_t tid,
				  bool create)
{
	int64_t key[2] = {pid, tid};
	struct clc_thread *c;

	if (!create)
		return in->clc.count > 0 ? table_get(&in->clc, key, sizeof(key)) : NULL;
	c = table_put(&in->clc, key, sizeof(key), NULL);
	m->nomem |= c == NULL;
	return c;
}

/* A time of a thread of the input in the merged timeline, moves included. */
bool merge_thread_time(struct merge *m, struct input *in, int64_t pid, int64_t tid, int64_t t,
		       int64_t *linear, int64_t *out)
{
	const struct clc_thread *c = merge_moves_of(m, in, pid, tid, false);

	if (!merge_linear_time(in, t, linear))
		return false;
	return add_i64(*linear, c != NULL ? clc_move(c, *linear) : 0, out);
}

/* The head's times in the merged timeline, and its place in the merge (its time; an
 * X's end, since the recorder writes an X when it ends, which follows each file's own
 * order best; an event without a time stays where the input's last one was). */
void merge_place_head(struct merge *m, struct input *in)
{
	const struct trace_event *ev = in->head;
	int64_t pid, tid, end, lin_end, out_end;

	in->head_set_ts = in->head_set_dur = in->head_moved = in->released = false;
	in->head_timed = false;
	if (!ev->has_ts)
		return;
	trace_event_thread(ev, &pid, &tid);
	if (!merge_thread_time(m, in, pid, tid, ev->ts_ns, &in->head_linear, &in->head_ts)) {
		in->key = INT64_MAX; /* written as it is, last */
		return;
	}
	in->head_timed = true;
	/* Written again when moved, or inexact (more than three decimals), as Perfetto
	 * would round it. */
	in->head_set_ts = in->head_ts != ev->ts_ns || !ev->ts_exact;
	in->head_moved = in->head_ts != in->head_linear;
	in->key = in->head_ts;
	if (ev->phase == 'X' && ev->has_dur && ev->dur_ns > 0 &&
	    add_i64(ev->ts_ns, ev->dur_ns, &end) &&
	    merge_thread_time(m, in, pid, tid, end, &lin_end, &out_end) &&
	    !__builtin_sub_overflow(out_end, in->head_ts, &in->head_dur)) {
		/* a dur written for the ts it had may not add up with another */
		in->head_set_dur = in->head_dur != ev->dur_ns || in->head_set_ts || !ev->dur_exact;
		in->head_moved |= out_end != lin_end;
		in->key = out_end;
	}
}
