/* SPDX-License-Identifier: MIT */
/*
 * The .pftrace writer (see pf_write.h): the packet being made and the one sink every
 * packet leaves by, the intern table, the sequences' clocks, the file's head.
 */
#include "pf_write_internal.h"

#include "common/names.h"
#include "merge_json.h"
#include "output.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void fail(struct pf_writer *w, int err)
{
	if (w->err == 0)
		w->err = err;
}

/* ------------------------------------------------------------- packets */

/* Room for n more bytes in the packet: where they go, or NULL (failed). */
static char *room(struct pf_writer *w, size_t n)
{
	if (w->err != 0)
		return NULL;
	if (w->pkt.cap - w->pkt.len < n && buf_grow(&w->pkt, n) != 0) {
		fail(w, -ENOMEM);
		return NULL;
	}
	return w->pkt.p + w->pkt.len;
}

static void advance(struct pf_writer *w, const char *end)
{
	w->pkt.len = (size_t)(end - w->pkt.p);
}

/* Room kept before a packet's fields for its key and length (a 32-bit length's
 * varint at most), so that the framed packet is one run of bytes. */
#define HEAD_ROOM 6

void pfw_begin(struct pf_writer *w)
{
	w->pkt.len = 0;
	w->npend = 0;
	if (room(w, HEAD_ROOM) != NULL)
		w->pkt.len = HEAD_ROOM;
}

void pfw_put_uint(struct pf_writer *w, unsigned field, uint64_t v)
{
	char *p = room(w, 20);

	if (p != NULL)
		advance(w, pb_uint(p, field, v));
}

void pfw_put_fixed64(struct pf_writer *w, unsigned field, uint64_t v)
{
	char *p = room(w, 16);

	if (p != NULL)
		advance(w, pb_fixed64(p, field, v));
}

void pfw_put_bytes(struct pf_writer *w, unsigned field, const char *s, size_t len)
{
	char *p = room(w, len + 16);

	if (p != NULL)
		advance(w, pb_bytes(p, field, s, len));
}

size_t pfw_open(struct pf_writer *w, unsigned field)
{
	char *p = room(w, 8);
	size_t at;

	if (p == NULL)
		return 0;
	p = pb_tag(p, field, RTR__PB_LEN);
	at = (size_t)(p - w->pkt.p);
	w->pkt.len = at + 1; /* a one-byte length, moved up at the close if it needs more */
	return at;
}

void pfw_close(struct pf_writer *w, size_t at)
{
	size_t len = w->pkt.len - (at + 1), n;
	char tmp[10];

	if (w->err != 0)
		return;
	if (len < 0x80) {
		w->pkt.p[at] = (char)len;
		return;
	}
	n = (size_t)(pb_varint(tmp, len) - tmp);
	if (room(w, n) == NULL)
		return;
	memmove(w->pkt.p + at + n, w->pkt.p + at + 1, len);
	memcpy(w->pkt.p + at, tmp, n);
	w->pkt.len += n - 1;
}

/*
 * Every packet of the file leaves here, whole: its Trace field 1 key, its length and
 * its fields, p[0 .. n). The one place to batch packets into
 * TracePacket.compressed_packets (and pf_writer_finish() the place to flush the last
 * batch).
 */
static void sink_packet(struct pf_writer *w, const char *p, size_t n)
{
	if (w->err != 0)
		return;
	if ((w->batch.packer != NULL ? rtr__pf_batch_add(&w->batch, p, n)
				     : output_write(w->out, p, n)) != 0) {
		fail(w, -EIO);
		return;
	}
	w->counts.packets++;
}

/* rtr__pf_batch.emit: a batch, packed or as it was, to the output. */
static int emit_batch(void *ctx, const void *p, size_t n)
{
	return output_write(((struct pf_writer *)ctx)->out, p, n);
}

/* The packet made (its fields after HEAD_ROOM) framed in place and sent. */
static void frame_and_sink(struct pf_writer *w)
{
	char head[HEAD_ROOM + 4];
	size_t len, n;

	if (w->err != 0 || w->pkt.len < HEAD_ROOM)
		return;
	len = w->pkt.len - HEAD_ROOM;
	n = (size_t)(pb_varint(pb_tag(head, RTR__PF_TRACE_PACKET, RTR__PB_LEN), len) - head);
	memcpy(w->pkt.p + HEAD_ROOM - n, head, n);
	sink_packet(w, w->pkt.p + HEAD_ROOM - n, len + n);
}

void pfw_send(struct pf_writer *w, uint32_t seq, uint32_t flags)
{
	if (w->npend > 0) {
		size_t data = pfw_open(w, RTR__PF_PACKET_INTERNED_DATA);

		for (size_t i = 0; i < w->npend; i++) {
			const struct pfw_pending *s = &w->pend[i];
			size_t e = pfw_open(w, s->field);

			pfw_put_uint(w, RTR__PF_INTERNED_IID, s->iid);
			pfw_put_bytes(w, RTR__PF_INTERNED_NAME, s->s, s->len);
			pfw_close(w, e);
		}
		pfw_close(w, data);
		w->npend = 0;
	}
	pfw_put_uint(w, RTR__PF_PACKET_SEQUENCE_ID, seq);
	if (flags != 0)
		pfw_put_uint(w, RTR__PF_PACKET_SEQUENCE_FLAGS, flags);
	frame_and_sink(w);
	w->pkt.len = 0;
}

uint32_t pfw_writer_flags(struct pf_writer *w)
{
	if (w->writer_cleared)
		return RTR__PF_SEQ_NEEDS_INCREMENTAL_STATE;
	w->writer_cleared = true;
	return RTR__PF_SEQ_INCREMENTAL_STATE_CLEARED;
}

/* ------------------------------------------------------------- interning */

uint32_t pfw_iid(struct pf_writer *w, struct pfw_seq *seq, uint32_t field, const char *s,
		 size_t len)
{
	uint32_t *iid;
	size_t word, klen;

	w->key.len = 0;
	if (w->err != 0 || buf_putc(&w->key, (char)field) || buf_put(&w->key, s, len)) {
		fail(w, -ENOMEM);
		return 0;
	}
	iid = table_get(&w->strings, w->key.p, w->key.len);
	if (iid == NULL) {
		/* Full: inline until the next event empties the table. */
		if (w->strings.count >= PFW_STRINGS_MAX ||
		    w->string_bytes + len > PFW_STRINGS_BYTES)
			return 0;
		iid = table_put(&w->strings, w->key.p, w->key.len, NULL);
		if (iid == NULL) {
			fail(w, -ENOMEM);
			return 0;
		}
		*iid = ++w->next_iid;
		w->string_bytes += len + 32;
	}
	word = *iid >> 6;
	if (word >= seq->words) {
		size_t words = seq->words != 0 ? seq->words : 4;
		uint64_t *sent;

		while (words <= word)
			words *= 2;
		sent = realloc(seq->sent, words * sizeof(*sent));
		if (sent == NULL) {
			fail(w, -ENOMEM);
			return 0;
		}
		memset(sent + seq->words, 0, (words - seq->words) * sizeof(*sent));
		seq->sent = sent;
		seq->words = words;
	}
	if (seq->sent[word] >> (*iid & 63) & 1)
		return *iid;
	struct pfw_pending *pend =
		array_grow(w->pend, &w->pend_cap, w->npend + 1, sizeof(*pend), 16);
	if (pend == NULL) {
		fail(w, -ENOMEM);
		return 0;
	}
	w->pend = pend;
	seq->sent[word] |= (uint64_t)1 << (*iid & 63);
	pend[w->npend++] = (struct pfw_pending){
		field, *iid, (const char *)table_key(&w->strings, iid, &klen) + 1, len};
	return *iid;
}

void pfw_intern_room(struct pf_writer *w)
{
	if (w->strings.count < PFW_STRINGS_MAX &&
	    w->string_bytes + 2 * PFW_INTERN_NAME_MAX <= PFW_STRINGS_BYTES)
		return;
	/* Every sequence is cleared before its next packet (pfw_seq_ready()). */
	table_destroy(&w->strings);
	table_init(&w->strings, sizeof(uint32_t));
	w->string_bytes = 0;
	w->next_iid = 0;
	w->epoch++;
}

/* ------------------------------------------------------------- clocks */

/* A ClockSnapshot of clock 64 of seq at t (with the primary clock at t). */
static void put_seq_snapshot(struct pf_writer *w, struct pfw_seq *seq, uint64_t t)
{
	size_t cs, c;

	pfw_begin(w);
	cs = pfw_open(w, RTR__PF_PACKET_CLOCK_SNAPSHOT);
	c = pfw_open(w, RTR__PF_SNAPSHOT_CLOCKS);
	pfw_put_uint(w, RTR__PF_CLOCK_ID, w->clock);
	pfw_put_uint(w, RTR__PF_CLOCK_TIMESTAMP, t);
	pfw_close(w, c);
	c = pfw_open(w, RTR__PF_SNAPSHOT_CLOCKS);
	pfw_put_uint(w, RTR__PF_CLOCK_ID, PFW_DELTA_CLOCK);
	pfw_put_uint(w, RTR__PF_CLOCK_TIMESTAMP, t);
	pfw_put_uint(w, RTR__PF_CLOCK_IS_INCREMENTAL, 1);
	pfw_close(w, c);
	pfw_close(w, cs);
	pfw_send(w, seq->id, RTR__PF_SEQ_NEEDS_INCREMENTAL_STATE);
	seq->has_clock = true;
	seq->last = t;
}

void pfw_clock_for(struct pf_writer *w, struct pfw_seq *seq, uint64_t t)
{
	if (!seq->has_clock)
		put_seq_snapshot(w, seq, t);
}

void pfw_time(struct pf_writer *w, struct pfw_seq *seq, uint64_t t)
{
	if (seq->has_clock && t >= seq->last) {
		pfw_put_uint(w, RTR__PF_PACKET_TIMESTAMP, t - seq->last);
		seq->last = t;
		return;
	}
	/* before the sequence's latest: absolute, clock 64 left where it was */
	pfw_put_uint(w, RTR__PF_PACKET_TIMESTAMP, t);
	pfw_put_uint(w, RTR__PF_PACKET_TIMESTAMP_CLOCK_ID, w->clock);
}

void pfw_seq_ready(struct pf_writer *w, struct pfw_thread *th)
{
	struct pfw_seq *seq = &th->seq;
	bool first = !seq->cleared;

	if (seq->cleared && seq->epoch == w->epoch)
		return;
	if (seq->words > 0)
		memset(seq->sent, 0, seq->words * sizeof(*seq->sent));
	seq->cleared = true;
	seq->epoch = w->epoch;
	pfw_put_thread(w, th, true, first);
	/* Clock 64 again, at the latest time the sequence has written: never earlier. */
	if (seq->has_clock)
		put_seq_snapshot(w, seq, seq->last);
}

/* An origin of the start marker, in range as a time on the primary clock. */
static bool origin_of(const struct trace_event *ev, const char *key, uint64_t *ns)
{
	size_t len;
	const char *v = pfw_arg(ev, key, &len);
	struct trace_value tv = {TRACE_STRING, v != NULL ? v + 1 : NULL, v != NULL ? len - 2 : 0};

	return v != NULL && len >= 2 && v[0] == '"' && value_u64(&tv, ns) == 0 &&
	       *ns <= (uint64_t)INT64_MAX;
}

void pfw_start(struct pf_writer *w, const struct trace_event *ev)
{
	uint64_t mono = 0, real = 0;
	bool has_mono = false, has_real = false;
	uint32_t flags;
	size_t cs, c;

	w->started = true;
	if (ev->phase == 'i' && trace_value_is(&ev->name, RTR__MARK_START)) {
		has_mono = origin_of(ev, RTR__KEY_ORIGIN_MONO, &mono);
		has_real = origin_of(ev, RTR__KEY_ORIGIN_REAL, &real);
		w->origin_marker = true;
	}
	/* ts 0 is the origin: MONOTONIC's, else REALTIME's (a merge across hosts), else 0 */
	w->clock = has_mono || !has_real ? RTR__PF_BUILTIN_MONOTONIC : RTR__PF_BUILTIN_REALTIME;
	w->base = (int64_t)(has_mono ? mono : real);
	pfw_begin(w);
	cs = pfw_open(w, RTR__PF_PACKET_CLOCK_SNAPSHOT);
	c = pfw_open(w, RTR__PF_SNAPSHOT_CLOCKS);
	pfw_put_uint(w, RTR__PF_CLOCK_ID, w->clock);
	pfw_put_uint(w, RTR__PF_CLOCK_TIMESTAMP, (uint64_t)w->base);
	pfw_close(w, c);
	if (has_mono && has_real) { /* read together by the earliest input: related */
		c = pfw_open(w, RTR__PF_SNAPSHOT_CLOCKS);
		pfw_put_uint(w, RTR__PF_CLOCK_ID, RTR__PF_BUILTIN_REALTIME);
		pfw_put_uint(w, RTR__PF_CLOCK_TIMESTAMP, real);
		pfw_close(w, c);
	}
	pfw_put_uint(w, RTR__PF_SNAPSHOT_PRIMARY_TRACE_CLOCK, w->clock);
	pfw_close(w, cs);
	flags = pfw_writer_flags(w);
	if (flags & RTR__PF_SEQ_INCREMENTAL_STATE_CLEARED)
		pfw_put_uint(w, RTR__PF_PACKET_FIRST_ON_SEQUENCE, 1);
	pfw_send(w, PFW_SEQ_WRITER, flags);
}

/* ------------------------------------------------------------- uuids */

uint64_t pfw_claim_uuid(struct pf_writer *w, uint64_t want, const int64_t *lane_pid)
{
	for (;;) {
		uint64_t low = want & 0xffffffffu;
		/* what a reader takes for a lane of a ringtrace track (source/pf_json_put.c) */
		bool lane = lane_pid != NULL && want >> 32 == (uint64_t)*lane_pid && low > 0 &&
			    (*lane_pid >= 0x40000000 || low < 0x40000000u);

		if (want != 0 && !lane && table_get(&w->uuids, &want, sizeof(want)) == NULL)
			break;
		/* the next candidate: an LCG of full period, so the walk ends */
		want = want * 0x5851f42d4c957f2dull + 0x14057b7ef767814full;
	}
	if (table_put(&w->uuids, &want, sizeof(want), NULL) == NULL) {
		fail(w, -ENOMEM);
		return 0;
	}
	return want;
}

void pfw_release_uuid(struct pf_writer *w, uint64_t uuid)
{
	char *v = table_get(&w->uuids, &uuid, sizeof(uuid));

	if (v != NULL)
		table_remove(&w->uuids, v);
}

/* ------------------------------------------------------------- public */

int pf_writer_create(struct output *out, struct pf_writer **wp)
{
	struct pf_writer *w = calloc(1, sizeof(*w));

	*wp = NULL;
	if (w == NULL)
		return -ENOMEM;
	w->out = out;
	const char *plain = getenv("RINGTRACE_PF_COMPRESS"); /* "0": plain, as the library's */
	if (!output_is_gzip(out) && (plain == NULL || strcmp(plain, "0") != 0)) {
		w->batch.packer = rtr__pf_packer_new();
		w->batch.in = malloc(RTR__PF_BATCH_BYTES);
		w->batch.out = malloc(rtr__pf_pack_bound(RTR__PF_BATCH_BYTES));
		w->batch.emit = emit_batch;
		w->batch.ctx = w;
		if (w->batch.packer == NULL || w->batch.in == NULL || w->batch.out == NULL) {
			pf_writer_free(w);
			return -ENOMEM;
		}
	}
	w->epoch = 1;
	w->next_seq = PFW_SEQ_WRITER;
	table_init(&w->strings, sizeof(uint32_t));
	table_init(&w->processes, sizeof(struct pfw_process));
	table_init(&w->threads, sizeof(struct pfw_thread));
	table_init(&w->counters, sizeof(struct pfw_track));
	table_init(&w->asyncs, sizeof(struct pfw_track));
	table_init(&w->uuids, 1);
	*wp = w;
	return 0;
}

int pf_writer_event(struct pf_writer *w, const struct trace_event *ev)
{
	if (w->err != 0)
		return -1;
	pfw_intern_room(w);
	pfw_event(w, ev);
	return w->err != 0 ? -1 : 0;
}

int pf_writer_json(struct pf_writer *w, const char *json, size_t len)
{
	if (w->err != 0)
		return -1;
	if (len == 0 || json[0] != '{') { /* not an event: never one of merge's lines */
		w->counts.no_place++;
		return 0;
	}
	if (pfw_parse_event(json, len, &w->ev, &w->ev_text) != 0) {
		fail(w, -ENOMEM);
		return -1;
	}
	return pf_writer_event(w, &w->ev);
}

int pf_writer_finish(struct pf_writer *w)
{
	if (w->err == 0 && w->batch.packer != NULL && rtr__pf_batch_flush(&w->batch) != 0)
		fail(w, -EIO);
	return w->err != 0 ? -1 : 0;
}

const struct pf_writer_counts *pf_writer_counts(const struct pf_writer *w)
{
	return &w->counts;
}

bool pf_writer_nomem(const struct pf_writer *w)
{
	return w->err == -ENOMEM;
}

void pf_writer_free(struct pf_writer *w)
{
	if (w == NULL)
		return;
	pfw_tracks_free(w);
	rtr__pf_packer_free(w->batch.packer);
	free(w->batch.in);
	free(w->batch.out);
	table_destroy(&w->strings);
	table_destroy(&w->uuids);
	buf_free(&w->pkt);
	buf_free(&w->key);
	buf_free(&w->text);
	buf_free(&w->name);
	buf_free(&w->ev_text);
	free(w->pend);
	free(w);
}

bool pf_path_is_pftrace(const char *path)
{
	static const char *const ext[] = {".pftrace", ".perfetto-trace"};
	size_t n = strlen(path);

	if (n >= 3 && strcmp(path + n - 3, ".gz") == 0)
		n -= 3;
	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		size_t k = strlen(ext[i]);

		if (n >= k && strncmp(path + n - k, ext[i], k) == 0)
			return true;
	}
	return false;
}
