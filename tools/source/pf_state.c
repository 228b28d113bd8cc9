/* SPDX-License-Identifier: MIT */
/*
 * The sequences of a .pftrace (see pf_internal.h): per trusted_packet_sequence_id,
 * its interned strings (event names, categories, annotation names, string values;
 * cleared by SEQ_INCREMENTAL_STATE_CLEARED), its trace_packet_defaults, and its
 * clocks. A packet's timestamp is resolved here to nanoseconds on the trace's
 * primary clock: a sequence clock through the builtin clock its ClockSnapshot read
 * with it (an incremental one adding up its deltas), a builtin clock through the
 * latest snapshot that relates it to the primary one. State past the bound is not
 * kept (pfd_take()).
 */
#include "pf_internal.h"

#include "json.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char *const intern_what[IN_COUNT] = {"event name", "category", "debug annotation name",
						  "string value"};

/* ------------------------------------------------------------------ state */

struct sequence *pfd_sequence(struct pf_decoder *d, uint32_t id)
{
	struct sequence *s = table_get(&d->sequences, &id, sizeof(id));
	bool created;

	if (s != NULL)
		return s;
	if (!pfd_take(d, sizeof(*s) + PF_ENTRY_COST))
		return NULL;
	s = table_put(&d->sequences, &id, sizeof(id), &created);
	if (s == NULL) {
		pfd_fail(d, PF_ERR_NOMEM, "out of memory");
		return NULL;
	}
	for (int i = 0; i < IN_COUNT; i++)
		table_init(&s->interned[i], sizeof(struct interned));
	return s;
}

static void interned_clear(struct pf_decoder *d, struct sequence *s)
{
	for (int i = 0; i < IN_COUNT; i++) {
		for (struct interned *in = table_first(&s->interned[i]); in != NULL;
		     in = table_next(in)) {
			budget_give(&d->budget, in->len + PF_ENTRY_COST);
			free(in->s);
		}
		table_destroy(&s->interned[i]);
		table_init(&s->interned[i], sizeof(struct interned));
	}
}

/* The sequence flags of packet pk on its sequence s: a clear drops the interned
 * strings and the defaults; state needed or given before any clear is reported, once
 * per sequence. */
void pfd_sequence_flags(struct pf_decoder *d, struct sequence *s, const struct pf_packet *pk)
{
	if (pk->sequence_flags & RTR__PF_SEQ_INCREMENTAL_STATE_CLEARED) {
		interned_clear(d, s);
		s->cleared = true;
		/* Perfetto resets the defaults with the incremental state. */
		s->has_default_clock = s->has_default_track = false;
	} else if ((pk->sequence_flags & RTR__PF_SEQ_NEEDS_INCREMENTAL_STATE) && !s->cleared &&
		   !s->needs_reported) {
		s->needs_reported = true;
		pfd_issue(d, PF_ISSUE_NEEDS_NOT_CLEARED,
			  "SEQ_NEEDS_INCREMENTAL_STATE on sequence %" PRIu32
			  ", never cleared (SEQ_INCREMENTAL_STATE_CLEARED) before: Perfetto "
			  "drops the packet (said once: the same for the sequence's later "
			  "ones)",
			  pk->sequence_id);
	}
	if ((pk->has_interned_data || pk->has_defaults) && !s->cleared && !s->state_reported) {
		s->state_reported = true;
		pfd_issue(d, PF_ISSUE_STATE_BEFORE_CLEARED,
			  "%s on sequence %" PRIu32
			  " before it was cleared (SEQ_INCREMENTAL_STATE_CLEARED): Perfetto "
			  "may not keep it",
			  pk->has_interned_data ? "interned data" : "trace_packet_defaults",
			  pk->sequence_id);
	}
}

static void intern(struct pf_decoder *d, struct sequence *s, int which, uint64_t iid,
		   const uint8_t *str, size_t len)
{
	struct interned *in = table_get(&s->interned[which], &iid, sizeof(iid));
	char *copy;

	if (in == NULL) {
		if (!pfd_take(d, len + PF_ENTRY_COST))
			return;
		in = table_put(&s->interned[which], &iid, sizeof(iid), NULL);
	} else {
		budget_give(&d->budget, in->len + PF_ENTRY_COST);
		if (!pfd_take(d, len + PF_ENTRY_COST)) {
			free(in->s);
			table_remove(&s->interned[which], in);
			return;
		}
		free(in->s);
		in->s = NULL;
	}
	copy = text_dup(str, len);
	if (in == NULL || copy == NULL) {
		free(copy);
		pfd_fail(d, PF_ERR_NOMEM, "out of memory");
		return;
	}
	in->s = copy;
	in->len = len;
}

/* The interned string, or s NULL (reported as unresolved unless state was refused). */
struct pf_str pfd_lookup(struct pf_decoder *d, struct sequence *s, uint32_t seq_id, int which,
			 uint64_t iid)
{
	struct interned *in = s != NULL ? table_get(&s->interned[which], &iid, sizeof(iid)) : NULL;

	if (in != NULL)
		return (struct pf_str){in->s, in->len};
	if (!d->refused)
		pfd_issue(d, PF_ISSUE_UNRESOLVED_IID,
			  "%s iid %" PRIu64 " is not interned on sequence %" PRIu32
			  " (since its last clear): Perfetto shows the event without it",
			  intern_what[which], iid, seq_id);
	return (struct pf_str){NULL, 0};
}

/* The strings of an InternedData message: {iid = 1, name or str = 2}. */
static int read_interned_entry(struct pf_decoder *d, struct sequence *s, int which,
			       const struct field *entry, unsigned depth)
{
	struct pb b = pb_sub(entry);
	struct field f;
	uint64_t iid = 0;
	const uint8_t *str = NULL;
	size_t len = 0;
	int rc;

	while ((rc = pb_next(d, &b, &f, depth)) == 1) {
		if (f.num == RTR__PF_INTERNED_IID && f.wt == RTR__PB_VARINT)
			iid = f.v;
		else if (f.num == RTR__PF_INTERNED_NAME && f.wt == RTR__PB_LEN) {
			str = f.data;
			len = f.len;
		}
	}
	if (rc < 0)
		return -1;
	if (s != NULL)
		intern(d, s, which, iid, str != NULL ? str : (const uint8_t *)"", len);
	return 0;
}

int pfd_read_interned(struct pf_decoder *d, struct sequence *s, const struct field *msg)
{
	struct pb b = pb_sub(msg);
	struct field f;
	int rc;

	while ((rc = pb_next(d, &b, &f, 2)) == 1) {
		int which = f.num == RTR__PF_INTERNED_CATEGORIES	 ? IN_CATEGORIES
			    : f.num == RTR__PF_INTERNED_NAMES		 ? IN_NAMES
			    : f.num == RTR__PF_INTERNED_ANNOTATION_NAMES ? IN_ANNOTATION_NAMES
			    : f.num == RTR__PF_INTERNED_STRINGS		 ? IN_STRINGS
									 : -1;

		if (which >= 0 && f.wt == RTR__PB_LEN &&
		    read_interned_entry(d, s, which, &f, 3) < 0)
			return -1;
		if (d->failed)
			return -1;
	}
	return rc;
}

int pfd_read_defaults(struct pf_decoder *d, struct sequence *s, const struct field *msg)
{
	struct pb b = pb_sub(msg), eb;
	struct field f, g;
	int rc;

	while ((rc = pb_next(d, &b, &f, 2)) == 1) {
		if (f.num == RTR__PF_DEFAULTS_TIMESTAMP_CLOCK_ID && f.wt == RTR__PB_VARINT &&
		    s != NULL) {
			s->has_default_clock = true;
			s->default_clock = (uint32_t)f.v;
		} else if (f.num == RTR__PF_DEFAULTS_TRACK_EVENT && f.wt == RTR__PB_LEN) {
			eb = pb_sub(&f);
			while ((rc = pb_next(d, &eb, &g, 3)) == 1) {
				if (g.num == RTR__PF_EVENT_DEFAULTS_TRACK_UUID &&
				    g.wt == RTR__PB_VARINT && s != NULL) {
					s->has_default_track = true;
					s->default_track = g.v;
				}
			}
			if (rc < 0)
				return -1;
		}
	}
	return rc;
}

/* The snapshot's clocks (d->clocks) against the sequence's last snapshot: trace
 * processor rejects one that moves a clock backwards (for the trace's clock, "not
 * monotonic") and keeps converting the sequence's deltas from the old value. Reported
 * once per sequence; the decoder takes the new values, as the writer meant them. */
static void snapshot_order(struct pf_decoder *d, struct sequence *s, const struct pf_packet *pk)
{
	if (s->snap_last == NULL) {
		if (!pfd_take(d, PF_SNAP_CLOCKS * sizeof(*s->snap_last)))
			return;
		s->snap_last = calloc(PF_SNAP_CLOCKS, sizeof(*s->snap_last));
		if (s->snap_last == NULL) {
			pfd_fail(d, PF_ERR_NOMEM, "out of memory");
			return;
		}
	}
	for (size_t i = 0; i < d->nclocks; i++) {
		const struct pf_clock_value *c = &d->clocks[i];
		uint32_t id = c->clock_id;
		uint64_t bit = (uint64_t)1 << (id & 63);

		if (id >= PF_SNAP_CLOCKS)
			continue;
		if ((s->snap_known[id >> 6] & bit) && c->timestamp < s->snap_last[id] &&
		    !s->backwards_reported) {
			s->backwards_reported = true;
			pfd_issue(d, PF_ISSUE_CLOCK_BACKWARDS,
				  "ClockSnapshot on sequence %" PRIu32 " moves clock %" PRIu32
				  " backwards, from %" PRIu64 " to %" PRIu64
				  ": Perfetto rejects it and places the sequence's later "
				  "timestamps from the old value (said once per sequence)",
				  pk->sequence_id, id, s->snap_last[id], c->timestamp);
		}
		s->snap_known[id >> 6] |= bit;
		s->snap_last[id] = c->timestamp;
	}
}

int pfd_read_clock_snapshot(struct pf_decoder *d, struct sequence *s, const struct field *msg,
			    struct pf_packet *pk)
{
	struct pb b = pb_sub(msg);
	struct field f, g;
	int rc;
	bool has_primary = false;
	uint32_t primary = RTR__PF_BUILTIN_BOOTTIME;

	d->nclocks = 0;
	while ((rc = pb_next(d, &b, &f, 2)) == 1) {
		if (f.num == RTR__PF_SNAPSHOT_PRIMARY_TRACE_CLOCK && f.wt == RTR__PB_VARINT) {
			has_primary = true;
			primary = (uint32_t)f.v;
		} else if (f.num == RTR__PF_SNAPSHOT_CLOCKS && f.wt == RTR__PB_LEN) {
			struct pb cb = pb_sub(&f);
			struct pf_clock_value c = {.unit_multiplier_ns = 1};

			while ((rc = pb_next(d, &cb, &g, 3)) == 1) {
				if (g.wt != RTR__PB_VARINT)
					continue;
				if (g.num == RTR__PF_CLOCK_ID)
					c.clock_id = (uint32_t)g.v;
				else if (g.num == RTR__PF_CLOCK_TIMESTAMP)
					c.timestamp = g.v;
				else if (g.num == RTR__PF_CLOCK_IS_INCREMENTAL)
					c.is_incremental = g.v != 0;
				else if (g.num == RTR__PF_CLOCK_UNIT_MULTIPLIER_NS && g.v > 0)
					c.unit_multiplier_ns = g.v;
			}
			if (rc < 0)
				return -1;
			struct pf_clock_value *clocks = array_grow(d->clocks, &d->clocks_cap,
								   d->nclocks + 1, sizeof(c), 16);
			if (clocks == NULL) {
				pfd_fail(d, PF_ERR_NOMEM, "out of memory");
				return -1;
			}
			d->clocks = clocks;
			d->clocks[d->nclocks++] = c;
		}
	}
	if (rc < 0)
		return -1;
	if (!d->has_primary) {
		d->has_primary = true;
		d->primary = has_primary ? primary : RTR__PF_BUILTIN_BOOTTIME;
	}
	if (s != NULL)
		snapshot_order(d, s, pk);
	if (d->failed)
		return -1;
	/* The builtin clocks against the primary one, as read together. */
	const struct pf_clock_value *prim = NULL, *ref = NULL;

	for (size_t i = 0; i < d->nclocks; i++) {
		if (d->clocks[i].clock_id == d->primary)
			prim = &d->clocks[i];
		if (d->clocks[i].clock_id < PF_BUILTIN_CLOCKS && ref == NULL)
			ref = &d->clocks[i];
	}
	if (prim != NULL)
		ref = prim;
	for (size_t i = 0; i < d->nclocks && prim != NULL; i++) {
		const struct pf_clock_value *c = &d->clocks[i];

		if (c->clock_id < PF_BUILTIN_CLOCKS) {
			d->clock_known[c->clock_id] = true;
			d->clock_offset[c->clock_id] =
				(int64_t)(prim->timestamp * prim->unit_multiplier_ns) -
				(int64_t)(c->timestamp * c->unit_multiplier_ns);
		}
	}
	/* Sequence clocks: through the builtin clock read with them. */
	for (size_t i = 0; i < d->nclocks && s != NULL; i++) {
		const struct pf_clock_value *c = &d->clocks[i];

		if (c->clock_id < RTR__PF_CLOCK_SEQUENCE_FIRST ||
		    c->clock_id > RTR__PF_CLOCK_SEQUENCE_LAST || ref == NULL)
			continue;
		if (s->clocks == NULL) {
			if (!pfd_take(d, PF_SEQUENCE_CLOCKS * sizeof(*s->clocks)))
				continue;
			s->clocks = calloc(PF_SEQUENCE_CLOCKS, sizeof(*s->clocks));
			if (s->clocks == NULL) {
				pfd_fail(d, PF_ERR_NOMEM, "out of memory");
				return -1;
			}
		}
		s->clocks[c->clock_id - RTR__PF_CLOCK_SEQUENCE_FIRST] = (struct seq_clock){
			.defined = true,
			.incremental = c->is_incremental,
			.ref_clock = ref->clock_id,
			.ref_ns = (int64_t)(ref->timestamp * ref->unit_multiplier_ns),
			.snap_units = c->timestamp,
			.cur_units = c->timestamp,
			.multiplier = c->unit_multiplier_ns,
		};
	}
	pk->clocks = d->clocks;
	pk->nclocks = d->nclocks;
	return 0;
}

/* The packet's time on the primary clock, when it can be placed. */
void pfd_resolve_time(struct pf_decoder *d, struct sequence *s, struct pf_packet *pk)
{
	uint32_t clock = pk->clock_id;
	int64_t ns;

	if (!pk->has_timestamp)
		return;
	if (clock >= RTR__PF_CLOCK_SEQUENCE_FIRST && clock <= RTR__PF_CLOCK_SEQUENCE_LAST) {
		struct seq_clock *c = s != NULL && s->clocks != NULL
					      ? &s->clocks[clock - RTR__PF_CLOCK_SEQUENCE_FIRST]
					      : NULL;

		if (c == NULL || !c->defined) {
			if (s != NULL && !s->clock_reported)
				pfd_issue(
					d, PF_ISSUE_CLOCK_UNDEFINED,
					"timestamp on clock %" PRIu32 " of sequence %" PRIu32
					", which no ClockSnapshot on the sequence defined before: "
					"Perfetto drops the packet (said once per sequence)",
					clock, pk->sequence_id);
			if (s != NULL)
				s->clock_reported = true;
			return;
		}
		if (c->incremental) {
			c->cur_units += pk->timestamp_raw;
			ns = c->ref_ns + (int64_t)((c->cur_units - c->snap_units) * c->multiplier);
		} else {
			ns = c->ref_ns +
			     (int64_t)((pk->timestamp_raw - c->snap_units) * c->multiplier);
		}
		clock = c->ref_clock;
	} else {
		ns = (int64_t)pk->timestamp_raw;
	}
	if (clock < PF_BUILTIN_CLOCKS && clock != d->primary && d->clock_known[clock])
		ns += d->clock_offset[clock];
	pk->has_time = true;
	pk->time_ns = ns;
}

void pfd_sequences_free(struct pf_decoder *d)
{
	for (struct sequence *s = table_first(&d->sequences); s != NULL; s = table_next(s)) {
		for (int i = 0; i < IN_COUNT; i++) {
			for (struct interned *in = table_first(&s->interned[i]); in != NULL;
			     in = table_next(in))
				free(in->s);
			table_destroy(&s->interned[i]);
		}
		free(s->clocks);
		free(s->snap_last);
	}
	table_destroy(&d->sequences);
}
