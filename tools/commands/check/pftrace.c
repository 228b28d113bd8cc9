/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace check` of a Perfetto trace (.pftrace): the rules of the protobuf form,
 * in check's format, one pass through the decoder (pftrace.h). State per track (its
 * open slices: a count) and the decoder's, never per packet.
 */
#include "pftrace.h"
#include "cli.h"
#include "common/names.h"
#include "table.h"
#include "threads.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define PF_RULES(X)                                                                                \
	X(MALFORMED, "packet-malformed",                                                           \
	  "malformed protobuf (a length past the end, a varint over 10 bytes, a bad wire type, "   \
	  "nesting too deep); the check stops there",                                              \
	  "Perfetto's trace processor stops at it: what follows is lost")                          \
	X(GZIP, "gzip", "corrupt gzip data", "every viewer's gunzip stops there")                  \
	X(CUT, "packet-cut", "the file ends inside a packet",                                      \
	  "Perfetto drops the partial packet; every whole one before it loads")                    \
	X(EMPTY, "empty", "no packets", "the viewers refuse an empty trace")                       \
	X(TOO_LARGE, "packet-too-large", "a packet over --max-event-mb (16 MiB unless told)",      \
	  "none: Perfetto reads it; the tools skip it so that their memory stays bounded")         \
	X(SEQUENCE_FLAGS, "sequence-flags",                                                        \
	  "SEQ_NEEDS_INCREMENTAL_STATE on a sequence never cleared; interned data or defaults "    \
	  "before the sequence is cleared",                                                        \
	  "Perfetto drops packets that need state the sequence never got (and state that came "    \
	  "before the clear)")                                                                     \
	X(UNRESOLVED_IID, "unresolved-iid",                                                        \
	  "a name_iid, category_iid, annotation name_iid or string_value_iid not interned on the " \
	  "sequence",                                                                              \
	  "Perfetto shows the event without the name, category or value")                          \
	X(UNDECLARED_TRACK, "undeclared-track",                                                    \
	  "a track_uuid used before its TrackDescriptor (uuid 0 and the default track are fine)",  \
	  "Perfetto cannot place the event on a process or thread")                                \
	X(CLOCK_UNDEFINED, "clock-undefined",                                                      \
	  "a timestamp on a sequence clock (64..127) no ClockSnapshot of the sequence defined "    \
	  "before",                                                                                \
	  "Perfetto cannot convert the time and drops the packet")                                 \
	X(CLOCK_BACKWARDS, "clock-backwards",                                                      \
	  "a ClockSnapshot of a sequence that moves one of its clocks backwards from the "         \
	  "sequence's snapshot before (once per sequence)",                                        \
	  "Perfetto rejects the snapshot (\"not monotonic\") and places the sequence's later "     \
	  "timestamps from the old value: at the wrong time")                                      \
	X(END_WITHOUT_BEGIN, "end-without-begin",                                                  \
	  "a SLICE_END with no SLICE_BEGIN open on its track", "Perfetto drops it")                \
	X(UNENDED, "unended", "a SLICE_BEGIN never ended (a note)",                                \
	  "none: Perfetto shows the slice to the end of the trace, as it does for a cut run")      \
	X(END_MARKER, "end-marker",                                                                \
	  "the end marker (\"" RTR__MARK_END                                                       \
	  "\") counts more events than the file holds before it",                                  \
	  "the recorder wrote them and they are missing: the trace shows less than what ran")      \
	X(STATE_LIMIT, "state-limit",                                                              \
	  "more state (sequences, interned strings, tracks, open slices) than the check keeps",    \
	  "none: the viewers keep it all; what the check did not keep is not checked")

#define PF_RULE_ENUM(id, name, what, why) PFR_##id,
#define PF_RULE_ROW(id, name, what, why)  {name, what, why},

enum pf_rule { PF_RULES(PF_RULE_ENUM) PFR_COUNT };

static const struct {
	const char *name, *what, *why;
} pf_rules[PFR_COUNT] = {PF_RULES(PF_RULE_ROW)};

static const enum pf_rule issue_rule[PF_ISSUE_COUNT] = {
	[PF_ISSUE_UNRESOLVED_IID] = PFR_UNRESOLVED_IID,
	[PF_ISSUE_NEEDS_NOT_CLEARED] = PFR_SEQUENCE_FLAGS,
	[PF_ISSUE_STATE_BEFORE_CLEARED] = PFR_SEQUENCE_FLAGS,
	[PF_ISSUE_UNDECLARED_TRACK] = PFR_UNDECLARED_TRACK,
	[PF_ISSUE_CLOCK_UNDEFINED] = PFR_CLOCK_UNDEFINED,
	[PF_ISSUE_CLOCK_BACKWARDS] = PFR_CLOCK_BACKWARDS,
	[PF_ISSUE_PACKET_TOO_LARGE] = PFR_TOO_LARGE,
	[PF_ISSUE_STATE_LIMIT] = PFR_STATE_LIMIT,
};

struct track_slices {
	uint64_t open;
	uint64_t first_packet, first_offset; /* the outermost open BEGIN */
};

struct pf_check {
	const char *file;
	bool quiet, notes;
	uint64_t max_per_rule;
	uint64_t count[PFR_COUNT], note_count[PFR_COUNT], total, total_notes;
	struct table slices;	/* track uuid -> struct track_slices */
	struct table sequences; /* sequence id -> char */
	struct state_budget budget;
	bool refused, nomem;
	uint64_t events; /* what an end marker counts: see count_event() */
	bool has_end_marker, end_final;
};

static void pf_report(struct pf_check *c, bool is_note, enum pf_rule rule, uint64_t packet,
		      uint64_t offset, bool placed, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));

static void pf_report(struct pf_check *c, bool is_note, enum pf_rule rule, uint64_t packet,
		      uint64_t offset, bool placed, const char *fmt, ...)
{
	uint64_t n = is_note ? ++c->note_count[rule] : ++c->count[rule];
	va_list ap;

	if (is_note)
		c->total_notes++;
	else
		c->total++;
	if (c->quiet || (is_note && !c->notes))
		return;
	if (c->max_per_rule > 0 && n > c->max_per_rule) {
		if (n == c->max_per_rule + 1)
			printf("%s: %s%s: more %s of this rule not shown (--max-per-rule 0 "
			       "shows all)\n",
			       c->file, is_note ? "note " : "", pf_rules[rule].name,
			       is_note ? "notes" : "findings");
		return;
	}
	if (placed)
		printf("%s:@%" PRIu64 ": %s%s: packet %" PRIu64 ": ", c->file, offset,
		       is_note ? "note " : "", pf_rules[rule].name, packet);
	else
		printf("%s: %s%s: ", c->file, is_note ? "note " : "", pf_rules[rule].name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void on_issue(void *ctx, const struct pf_issue *issue)
{
	struct pf_check *c = ctx;

	pf_report(c, false, issue_rule[issue->kind], issue->packet, issue->offset, true, "%s",
		  issue->message);
}

static bool str_is(struct pf_str s, const char *lit)
{
	return s.s != NULL && s.len == strlen(lit) && memcmp(s.s, lit, s.len) == 0;
}

/*
 * What an end marker's `events` can be compared with: the writer turns each event it
 * records into at least one packet (a span into two, rtr_counters into one per
 * series, a thread's new name into a descriptor), so the track events and
 * descriptors before the marker, its markers and its own counter tracks left out,
 * are an upper bound of the events they hold. A marker that counts more than that
 * lost events for sure; one that counts fewer is not told from the packets.
 */
static bool counted(const struct pf_event *ev)
{
	if (str_is(ev->name, RTR__MARK_START) || str_is(ev->name, RTR__MARK_END))
		return false;
	/* the writer's own counter tracks (RTR__COUNTER_EVENTS, ...): "ringtrace: *" */
	return !(ev->type == PF_TYPE_COUNTER && ev->track != NULL && ev->track->name != NULL &&
		 strncmp(ev->track->name, "ringtrace: ", 11) == 0);
}

static void end_marker(struct pf_check *c, const struct pf_packet *pk)
{
	const struct pf_event *ev = &pk->event;
	bool has_events = false, final = false;
	uint64_t events = 0;

	for (size_t i = 0, k = 0; k < ev->ntop; k++, i += pf_arg_span(ev->args, i)) {
		const struct pf_arg *a = &ev->args[i];

		if (str_is(a->name, RTR__KEY_EVENTS) &&
		    (a->kind == PF_ARG_UINT || a->kind == PF_ARG_INT)) {
			has_events = true;
			events = a->kind == PF_ARG_UINT ? a->u : (uint64_t)a->i;
		} else if (str_is(a->name, RTR__KEY_FINAL) && a->kind == PF_ARG_BOOL) {
			final = a->b;
		}
	}
	c->has_end_marker = true;
	c->end_final = final;
	if (has_events && events > c->events)
		pf_report(c, false, PFR_END_MARKER, pk->index, pk->offset, true,
			  "the %s end marker counts %" PRIu64
			  " events, the file holds at most %" PRIu64
			  " before it (a packet per event at least: track events and descriptors, "
			  "the markers and ringtrace's counters left out): at least %" PRIu64
			  " missing",
			  final ? "final" : "provisional", events, c->events, events - c->events);
}

static int on_packet(void *ctx, const struct pf_packet *pk)
{
	struct pf_check *c = ctx;
	const struct pf_event *ev = &pk->event;
	struct track_slices *ts;
	uint64_t uuid = ev->track_uuid;
	bool created;

	if (table_get(&c->sequences, &pk->sequence_id, sizeof(pk->sequence_id)) == NULL &&
	    budget_take(&c->budget, 144) &&
	    table_put(&c->sequences, &pk->sequence_id, sizeof(pk->sequence_id), NULL) == NULL)
		c->nomem = true;
	if (pk->kind == PF_PACKET_TRACK_DESCRIPTOR)
		c->events++;
	if (pk->kind != PF_PACKET_TRACK_EVENT)
		return c->nomem;
	if (counted(ev))
		c->events++;
	if (ev->type == PF_TYPE_INSTANT && str_is(ev->name, RTR__MARK_END))
		end_marker(c, pk);
	if (ev->type != PF_TYPE_SLICE_BEGIN && ev->type != PF_TYPE_SLICE_END)
		return c->nomem;
	ts = table_get(&c->slices, &uuid, sizeof(uuid));
	if (ts == NULL && ev->type == PF_TYPE_SLICE_BEGIN) {
		if (!budget_take(&c->budget, sizeof(*ts) + 144)) {
			if (!c->refused)
				pf_report(c, false, PFR_STATE_LIMIT, pk->index, pk->offset, true,
					  "more tracks with open slices than the check keeps (1 M "
					  "items, 24 MiB): the slices of the rest are not checked");
			c->refused = true;
			return 0;
		}
		ts = table_put(&c->slices, &uuid, sizeof(uuid), &created);
		if (ts == NULL)
			return c->nomem = true;
	}
	if (ev->type == PF_TYPE_SLICE_BEGIN) {
		if (ts->open++ == 0) {
			ts->first_packet = pk->index;
			ts->first_offset = pk->offset;
		}
	} else if (ts != NULL && ts->open > 0) {
		ts->open--;
	} else if (!c->refused) {
		pf_report(c, false, PFR_END_WITHOUT_BEGIN, pk->index, pk->offset, true,
			  "SLICE_END on track %" PRIu64 " (0x%" PRIx64
			  ") with no SLICE_BEGIN open on it: Perfetto drops it",
			  uuid, uuid);
	}
	return 0;
}

static void pf_summary(const struct pf_check *c, const struct pf_status *st, bool stopped)
{
	printf("%s: %" PRIu64 " packet%s (%" PRIu64 " track event%s) on %zu sequence%s; protobuf%s",
	       c->file, st->packets, st->packets == 1 ? "" : "s", st->track_events,
	       st->track_events == 1 ? "" : "s", c->sequences.count,
	       c->sequences.count == 1 ? "" : "s", st->gzip ? ", gzip" : "");
	if (st->batches > 0)
		printf(", %" PRIu64 " compressed batch%s", st->batches,
		       st->batches == 1 ? "" : "es");
	if (stopped)
		printf(", read stopped at an error");
	else if (st->cut)
		printf(", cut short");
	else
		printf(", complete");
	if (c->total == 0) {
		printf("; no findings");
	} else {
		printf("; %" PRIu64 " finding%s:", c->total, c->total == 1 ? "" : "s");
		for (int r = 0, n = 0; r < PFR_COUNT; r++)
			if (c->count[r] > 0)
				printf("%s %s %" PRIu64, n++ > 0 ? "," : "", pf_rules[r].name,
				       c->count[r]);
	}
	if (c->notes && c->total_notes > 0) {
		printf("; %" PRIu64 " note%s:", c->total_notes, c->total_notes == 1 ? "" : "s");
		for (int r = 0, n = 0; r < PFR_COUNT; r++)
			if (c->note_count[r] > 0)
				printf("%s %s %" PRIu64, n++ > 0 ? "," : "", pf_rules[r].name,
				       c->note_count[r]);
	}
	putchar('\n');
}

void pf_check_list_rules(void)
{
	printf("\nrules of a Perfetto protobuf trace (.pftrace):\n");
	for (int r = 0; r < PFR_COUNT; r++)
		printf("%-19s %s\n%-19s   why: %s\n", pf_rules[r].name, pf_rules[r].what, "",
		       pf_rules[r].why);
}

int pf_check_file(const char *path, bool quiet, bool notes, uint64_t max_per_rule,
		  uint64_t max_packet_bytes)
{
	struct pf_check c = {.file = strcmp(path, "-") == 0 ? "<stdin>" : path,
			     .quiet = quiet,
			     .notes = notes,
			     .max_per_rule = max_per_rule};
	struct pf_options o = {.on_packet = on_packet,
			       .on_issue = on_issue,
			       .ctx = &c,
			       .max_packet_bytes = max_packet_bytes};
	struct pf_status st;
	int rc, status = CLI_OK;

	table_init(&c.slices, sizeof(struct track_slices));
	table_init(&c.sequences, 1);
	rc = pf_read_path(path, &o, &st);
	if (c.nomem || st.error == PF_ERR_NOMEM) {
		cli_error("check", "%s: out of memory", c.file);
		status = CLI_ERROR;
	} else if (rc < 0 && (st.error == PF_ERR_MALFORMED || st.error == PF_ERR_GZIP)) {
		pf_report(&c, false, st.error == PF_ERR_GZIP ? PFR_GZIP : PFR_MALFORMED, 0, 0,
			  false, "%s", st.message);
	} else if (rc < 0) {
		cli_error("check", "cannot read %s: %s", c.file, st.message);
		status = CLI_ERROR;
	}
	if (status == CLI_OK) {
		if (rc == 0) {
			if (st.cut)
				pf_report(&c, false, PFR_CUT, st.packets, st.cut_offset, true,
					  "the file ends inside this packet (%" PRIu64
					  " bytes of it, not read): Perfetto drops it; the %" PRIu64
					  " packets before are whole",
					  st.cut_bytes, st.packets);
			if (st.packets == 0)
				pf_report(&c, false, PFR_EMPTY, 0, 0, false,
					  "no packets: the viewers refuse an empty trace");
			for (struct track_slices *ts = table_first(&c.slices); ts != NULL;
			     ts = table_next(ts)) {
				size_t len;
				const uint64_t *uuid = table_key(&c.slices, ts, &len);

				if (ts->open > 0)
					pf_report(&c, true, PFR_UNENDED, ts->first_packet,
						  ts->first_offset, true,
						  "%" PRIu64 " slice%s on track %" PRIu64
						  " (0x%" PRIx64
						  ") never ended, the outermost begun here: the "
						  "viewers show it to the end of the trace",
						  ts->open, ts->open == 1 ? "" : "s", *uuid, *uuid);
			}
			if (c.has_end_marker && !c.end_final)
				pf_report(&c, true, PFR_END_MARKER, 0, 0, false,
					  "the last end marker is provisional (final false): the "
					  "run did not close its trace");
		}
		pf_summary(&c, &st, rc < 0);
		status = c.total > 0 ? CLI_FINDINGS : CLI_OK;
	}
	table_destroy(&c.slices);
	table_destroy(&c.sequences);
	return status;
}
