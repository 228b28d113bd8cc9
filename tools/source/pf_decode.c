/* SPDX-License-Identifier: MIT */
/*
 * The .pftrace decoder (see pftrace.h): the stream in packets, and each packet's
 * fields to the files that read them (pf_state.c, pf_tracks.c, pf_event.c).
 *
 * The stream is field 1 of Trace, repeated: each packet's key and length are read
 * from the input (input.c: plain or gzip) into a buffer that grows to the largest
 * packet read (at most max_packet bytes), and the packet is decoded there, whole.
 * Fields of Trace other than packets are skipped, a packet over the bound too (and
 * reported). pf_decoder_next() hands out one packet at a time; the callback form
 * (pf_read_fd(), pf_read_path()) is a loop over it.
 */
#include "pf_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* The decoder's buffers: the input's, and the packet buffer to begin with. */
#define RAW_BYTES    (128 << 10)
#define TEXT_BYTES   (128 << 10)
#define PACKET_BYTES (256 << 10)

/* ------------------------------------------------------------ reporting */

void pfd_fail(struct pf_decoder *d, enum pf_error e, const char *fmt, ...)
{
	va_list ap;

	if (d->failed)
		return;
	d->failed = true;
	d->st.error = e;
	va_start(ap, fmt);
	vsnprintf(d->st.message, sizeof(d->st.message), fmt, ap);
	va_end(ap);
	d->st.error_packet = d->packet_index;
	d->st.error_offset = d->packet_offset;
}

void pfd_malformed(struct pf_decoder *d, const uint8_t *p, const char *what)
{
	uint64_t at = d->packet_offset + (uint64_t)(p - d->packet_base);
	bool first = !d->failed;

	pfd_fail(d, PF_ERR_MALFORMED, "packet %" PRIu64 " at byte %" PRIu64 ": %s", d->packet_index,
		 at, what);
	if (first)
		d->st.error_offset = at;
}

void pfd_issue(struct pf_decoder *d, enum pf_issue_kind kind, const char *fmt, ...)
{
	char msg[320];
	va_list ap;

	d->st.issues[kind]++;
	if (d->opt.on_issue == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	d->opt.on_issue(d->opt.ctx, &(struct pf_issue){.kind = kind,
						       .packet = d->packet_index,
						       .offset = d->packet_offset,
						       .message = msg});
}

bool pfd_take(struct pf_decoder *d, uint64_t bytes)
{
	if (budget_take(&d->budget, bytes))
		return true;
	d->st.state_refused++;
	if (!d->refused)
		pfd_issue(d, PF_ISSUE_STATE_LIMIT,
			  "more state (interned strings, tracks, sequences) than the decoder keeps "
			  "(1 M items, 24 MiB): the rest is not kept, and references to it are not "
			  "checked");
	d->refused = true;
	return false;
}

const char *pf_issue_name(enum pf_issue_kind kind)
{
	static const char *const names[PF_ISSUE_COUNT] = {
		[PF_ISSUE_UNRESOLVED_IID] = "unresolved-iid",
		[PF_ISSUE_NEEDS_NOT_CLEARED] = "sequence-flags",
		[PF_ISSUE_STATE_BEFORE_CLEARED] = "sequence-flags",
		[PF_ISSUE_UNDECLARED_TRACK] = "undeclared-track",
		[PF_ISSUE_CLOCK_UNDEFINED] = "clock-undefined",
		[PF_ISSUE_CLOCK_BACKWARDS] = "clock-backwards",
		[PF_ISSUE_PACKET_TOO_LARGE] = "packet-too-large",
		[PF_ISSUE_STATE_LIMIT] = "state-limit",
	};
	return kind < PF_ISSUE_COUNT ? names[kind] : "?";
}

/* ---------------------------------------------------------------- packets */

/* The fields of a packet that the others are read after. */
struct packet_fields {
	struct field te, tdesc, snap, interned, defaults, batch;
	bool has_clock, has_batch;
};

/* A varint field of the packet. */
static void packet_scalar(struct pf_packet *pk, struct packet_fields *pf, const struct field *f)
{
	switch (f->num) {
	case RTR__PF_PACKET_TIMESTAMP:
		pk->has_timestamp = true;
		pk->timestamp_raw = f->v;
		break;
	case RTR__PF_PACKET_TIMESTAMP_CLOCK_ID:
		pf->has_clock = true;
		pk->clock_id = (uint32_t)f->v;
		break;
	case RTR__PF_PACKET_SEQUENCE_ID:
		pk->sequence_id = (uint32_t)f->v;
		break;
	case RTR__PF_PACKET_SEQUENCE_FLAGS:
		pk->sequence_flags = (uint32_t)f->v;
		break;
	case RTR__PF_PACKET_FIRST_ON_SEQUENCE:
		pk->first_packet_on_sequence = f->v != 0;
		break;
	default:
		break;
	}
}

/* A message field of the packet: kept to be read once the scalars are known. */
static void packet_message(struct pf_packet *pk, struct packet_fields *pf, const struct field *f)
{
	switch (f->num) {
	case RTR__PF_PACKET_TRACK_EVENT:
		pf->te = *f;
		pk->kind = PF_PACKET_TRACK_EVENT;
		break;
	case RTR__PF_PACKET_TRACK_DESCRIPTOR:
		pf->tdesc = *f;
		pk->kind = PF_PACKET_TRACK_DESCRIPTOR;
		break;
	case RTR__PF_PACKET_CLOCK_SNAPSHOT:
		pf->snap = *f;
		pk->kind = PF_PACKET_CLOCK_SNAPSHOT;
		break;
	case RTR__PF_PACKET_INTERNED_DATA:
		pf->interned = *f;
		pk->has_interned_data = true;
		break;
	case RTR__PF_PACKET_DEFAULTS:
		pf->defaults = *f;
		pk->has_defaults = true;
		break;
	case RTR__PF_PACKET_COMPRESSED_PACKETS:
		pf->batch = *f;
		pf->has_batch = true;
		break;
	default:
		break;
	}
}

/* The packet's own fields into pk, its messages into pf. 0, or -1. */
static int read_fields(struct pf_decoder *d, const uint8_t *p, size_t len, struct pf_packet *pk,
		       struct packet_fields *pf)
{
	struct pb b = {p, p + len};
	struct field f;
	int rc;

	while ((rc = pb_next(d, &b, &f, 1)) == 1) {
		if (f.wt == RTR__PB_VARINT)
			packet_scalar(pk, pf, &f);
		else if (f.wt == RTR__PB_LEN)
			packet_message(pk, pf, &f);
	}
	return rc < 0 ? -1 : 0;
}

/* What a packet is before its fields are read. */
static const struct pf_packet empty_packet;

/*
 * A compressed batch (the field f of the current packet) inflated in front of what
 * is left of the batch being read, if any (a batch in a batch): d->inner. 0, or -1
 * (corrupt, or past the packet bound: reported, and the batch is skipped).
 */
static int inflate_batch(struct pf_decoder *d, const struct field *f)
{
	size_t rest = d->inner_len - d->inner_pos, len = 0, cap = rest + 4 * f->len + 4096;
	uint8_t *out = malloc(cap);
	z_stream z;
	int rc;

	memset(&z, 0, sizeof(z));
	if (out == NULL || inflateInit(&z) != Z_OK) { /* zlib's format, as trace processor */
		free(out);
		pfd_fail(d, PF_ERR_NOMEM, "out of memory");
		return -1;
	}
	z.next_in = (Bytef *)(uintptr_t)f->data;
	z.avail_in = (uInt)f->len;
	for (rc = Z_OK; rc == Z_OK;) {
		if (len + rest == cap) {
			uint8_t *p = cap < d->max_packet ? realloc(out, 2 * cap) : NULL;
			if (p == NULL)
				break;
			out = p;
			cap *= 2;
		}
		z.next_out = out + len;
		z.avail_out = (uInt)(cap - rest - len);
		rc = inflate(&z, Z_NO_FLUSH);
		len = (size_t)(z.next_out - out);
	}
	inflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(out);
		if (rc == Z_OK) { /* out of room: the bound, or memory */
			pfd_issue(d, PF_ISSUE_PACKET_TOO_LARGE,
				  "a compressed batch of over %" PRIu64
				  " bytes inflated: skipped, not read",
				  d->max_packet);
			return 0;
		}
		pfd_malformed(d, f->data, "compressed_packets: not a whole zlib stream");
		return -1;
	}
	if (rest > 0)
		memcpy(out + len, d->inner + d->inner_pos, rest);
	free(d->inner);
	d->inner = out;
	d->inner_cap = cap;
	d->inner_pos = 0;
	d->inner_len = len + rest;
	d->st.batches++;
	return 0;
}

/* The packet p[0 .. len) into d->pk. 0, 1 when it was a compressed batch (its packets
 * come next, from d->inner), or -1. */
static int read_packet(struct pf_decoder *d, const uint8_t *p, size_t len)
{
	struct pf_packet *pk = &d->pk;
	struct packet_fields pf = {0};
	struct sequence *s;

	/* Copied from a constant, not a compound literal: compilers clear that with a
	 * string instruction whose start-up cost was 9% of `ringtrace check`. */
	*pk = empty_packet;
	pk->index = d->packet_index;
	pk->offset = d->packet_offset;
	pk->size = len;
	pk->tracks_ = &d->tracks;
	if (read_fields(d, p, len, pk, &pf) < 0)
		return -1;
	if (pf.has_batch) /* read in its place, nothing else of it (trace processor's rule) */
		return inflate_batch(d, &pf.batch) < 0 ? -1 : 1;
	s = pfd_sequence(d, pk->sequence_id);
	if (d->failed)
		return -1;
	if (s != NULL)
		pfd_sequence_flags(d, s, pk);
	if (pk->has_defaults && pfd_read_defaults(d, s, &pf.defaults) < 0)
		return -1;
	if (pk->has_interned_data && pfd_read_interned(d, s, &pf.interned) < 0)
		return -1;
	if (s != NULL && s->has_default_track)
		pk->sequence_track = s->default_track;
	if (!pf.has_clock)
		pk->clock_id = s != NULL && s->has_default_clock ? s->default_clock
								 : RTR__PF_BUILTIN_BOOTTIME;
	if (pk->kind == PF_PACKET_CLOCK_SNAPSHOT && pfd_read_clock_snapshot(d, s, &pf.snap, pk) < 0)
		return -1;
	if (!d->has_primary && pk->has_timestamp) {
		d->has_primary = true; /* no snapshot before: Perfetto's default */
		d->primary = RTR__PF_BUILTIN_BOOTTIME;
	}
	pk->primary_clock = d->has_primary ? d->primary : RTR__PF_BUILTIN_BOOTTIME;
	if (pk->primary_clock != RTR__PF_BUILTIN_MONOTONIC &&
	    d->clock_known[RTR__PF_BUILTIN_MONOTONIC])
		pk->monotonic_offset = d->clock_offset[RTR__PF_BUILTIN_MONOTONIC];
	pfd_resolve_time(d, s, pk);
	if (pk->kind == PF_PACKET_TRACK_DESCRIPTOR && pfd_read_descriptor(d, &pf.tdesc, pk) < 0)
		return -1;
	if (pk->kind == PF_PACKET_TRACK_EVENT) {
		if (pfd_read_track_event(d, s, &pf.te, pk) < 0)
			return -1;
		d->st.track_events++;
	}
	d->st.packets++;
	return 0;
}

/* ------------------------------------------------------------------ input */

/* At least n bytes at buf[pos], unless the input ends first. 0, or -1 on an error. */
static int fill(struct pf_decoder *d, size_t n)
{
	if (d->len - d->pos >= n || d->eof)
		return 0;
	if (d->pos > 0) {
		memmove(d->buf, d->buf + d->pos, d->len - d->pos);
		d->len -= d->pos;
		d->pos = 0;
	}
	if (n > d->cap) {
		size_t cap = d->cap;
		uint8_t *p;

		while (cap < n)
			cap *= 2;
		p = realloc(d->buf, cap);
		if (p == NULL) {
			pfd_fail(d, PF_ERR_NOMEM, "out of memory");
			return -1;
		}
		d->buf = p;
		d->cap = cap;
	}
	while (d->len < n) {
		size_t got;

		if (input_read(d->in, d->buf + d->len, d->cap - d->len, &got) != 0) {
			pfd_fail(d,
				 d->in->error == TRACE_ERR_GZIP	   ? PF_ERR_GZIP
				 : d->in->error == TRACE_ERR_NOMEM ? PF_ERR_NOMEM
								   : PF_ERR_IO,
				 "%s", d->in->message);
			return -1;
		}
		if (got == 0) {
			d->eof = true; /* a cut gzip member too: a cut stream */
			return 0;
		}
		d->len += got;
	}
	return 0;
}

/* A varint of the outer stream at buf[pos + *at]: 1, 0 when the input ends in it,
 * -1 malformed. */
static int outer_varint(struct pf_decoder *d, size_t *at, uint64_t *v)
{
	uint64_t x = 0;

	for (unsigned i = 0; i < 10; i++) {
		if (fill(d, *at + 1) < 0)
			return -1;
		if (d->len - d->pos < *at + 1)
			return 0;
		uint8_t c = d->buf[d->pos + (*at)++];

		x |= (uint64_t)(c & 0x7f) << (7 * i);
		if (!(c & 0x80)) {
			*v = x;
			return 1;
		}
	}
	d->packet_base = d->buf + d->pos;
	pfd_malformed(d, d->buf + d->pos + *at, "a varint over 10 bytes");
	return -1;
}

/* The stream ends inside the field that began at packet_offset. */
static void set_cut(struct pf_decoder *d)
{
	d->st.cut = true;
	d->st.cut_offset = d->packet_offset;
	d->st.cut_bytes = d->len - d->pos;
}

/* Skip n bytes of the stream (a packet over the bound). 1, 0 when cut, -1. */
static int skip_bytes(struct pf_decoder *d, uint64_t n)
{
	while (n > 0) {
		size_t have = d->len - d->pos, k;

		if (have == 0) {
			if (fill(d, 1) < 0)
				return -1;
			if (d->len == d->pos)
				return 0;
			continue;
		}
		k = have < n ? have : (size_t)n;
		d->pos += k;
		d->offset += k;
		n -= k;
	}
	return 1;
}

/* A field of Trace that is not a packet, or a packet over the bound, of len bytes
 * after its at bytes of key and length: skipped. 1, 0 when the stream ends in it, -1. */
static int skip_field(struct pf_decoder *d, size_t at, uint64_t len)
{
	int rc;

	d->pos += at;
	d->offset += at;
	rc = skip_bytes(d, len);
	if (rc == 0) {
		d->st.cut = true;
		d->st.cut_offset = d->packet_offset;
	}
	return rc;
}

/* The key and length of the next field of Trace: 1, 0 at the end or a cut, -1. */
static int read_head(struct pf_decoder *d, size_t *at, uint64_t *key, uint64_t *len)
{
	unsigned wt;
	int rc;

	*at = 0;
	*len = 0;
	rc = outer_varint(d, at, key);
	if (rc <= 0)
		goto cut_or_fail;
	wt = (unsigned)(*key & 7);
	if (wt == RTR__PB_LEN || wt == RTR__PB_VARINT) {
		rc = outer_varint(d, at, len);
		if (rc <= 0)
			goto cut_or_fail;
		if (wt == RTR__PB_VARINT)
			*len = 0;
	} else if (wt == RTR__PB_I64 || wt == RTR__PB_I32) {
		*len = wt == RTR__PB_I64 ? 8 : 4;
	} else {
		d->packet_base = d->buf + d->pos;
		pfd_malformed(d, d->buf + d->pos, "bad wire type at the top level");
		return -1;
	}
	return 1;
cut_or_fail:
	if (rc == 0)
		set_cut(d);
	return rc;
}

/* The next packet of the compressed batch being read into d->pk: 1, 0 when it held
 * none (other fields, skipped), -1 malformed. */
static int next_inner(struct pf_decoder *d)
{
	struct pb b = {d->inner + d->inner_pos, d->inner + d->inner_len};
	struct field f;
	int rc;

	d->packet_offset = d->batch_offset;
	d->packet_base = b.p;
	d->packet_index = d->st.packets;
	rc = pb_next(d, &b, &f, 1);
	if (rc < 0)
		return -1;
	d->inner_pos = (size_t)(b.p - d->inner);
	if (rc == 0 || f.num != RTR__PF_TRACE_PACKET || f.wt != RTR__PB_LEN)
		return 0;
	d->packet_base = f.data;
	rc = read_packet(d, f.data, f.len);
	return rc < 0 ? -1 : rc == 1 ? 0 : 1;
}

/* The next packet into d->pk: 1, 0 at the end of the stream (whole or cut), -1. */
static int next_packet(struct pf_decoder *d)
{
	for (;;) {
		size_t at;
		uint64_t key, len;
		int rc;

		if (d->inner_pos < d->inner_len) {
			rc = next_inner(d);
			if (rc != 0)
				return rc;
			continue;
		}
		if (fill(d, 1) < 0)
			return -1;
		if (d->len == d->pos)
			return 0; /* the end, between packets */
		d->packet_offset = d->offset;
		d->packet_index = d->st.packets;
		rc = read_head(d, &at, &key, &len);
		if (rc <= 0)
			return rc;
		if ((key & 7) != RTR__PB_LEN || (key >> 3) != RTR__PF_TRACE_PACKET) {
			rc = skip_field(d, at, len); /* not a packet */
			if (rc <= 0)
				return rc;
			continue;
		}
		if (len > d->max_packet) {
			pfd_issue(d, PF_ISSUE_PACKET_TOO_LARGE,
				  "a packet of %" PRIu64 " bytes, over the bound (%" PRIu64
				  " bytes): skipped, not read",
				  len, d->max_packet);
			rc = skip_field(d, at, len);
			if (rc <= 0)
				return rc;
			d->st.packets++;
			continue;
		}
		if (fill(d, at + (size_t)len) < 0)
			return -1;
		if (d->len - d->pos < at + len) {
			set_cut(d);
			return 0;
		}
		d->packet_base = d->buf + d->pos;
		d->batch_offset = d->offset;
		rc = read_packet(d, d->buf + d->pos + at, (size_t)len);
		if (rc < 0)
			return -1;
		/* Past it now: its bytes stay in buf until the next fill(). */
		d->pos += at + (size_t)len;
		d->offset += at + len;
		d->st.bytes = d->offset;
		if (rc == 0)
			return 1;
	}
}

/* ------------------------------------------------------------------ public */

int pf_decoder_open(struct input *in, const struct pf_options *opt, struct pf_decoder **out)
{
	struct pf_decoder *d = calloc(1, sizeof(*d));

	*out = NULL;
	if (d == NULL)
		return -ENOMEM;
	if (opt != NULL)
		d->opt = *opt;
	d->in = in;
	d->max_packet = d->opt.max_packet_bytes > 0 ? d->opt.max_packet_bytes : PF_MAX_PACKET_BYTES;
	d->cap = d->opt.buffer_bytes > 0 ? d->opt.buffer_bytes : PACKET_BYTES;
	d->buf = malloc(d->cap);
	table_init(&d->sequences, sizeof(struct sequence));
	table_init(&d->tracks, sizeof(struct pf_track));
	if (d->buf == NULL) {
		pf_decoder_close(d);
		return -ENOMEM;
	}
	*out = d;
	return 0;
}

int pf_decoder_next(struct pf_decoder *d, const struct pf_packet **pk)
{
	int rc;

	if (d->done)
		return d->failed ? -1 : 0;
	rc = next_packet(d);
	if (d->failed)
		rc = -1;
	if (rc <= 0) {
		d->done = true;
		d->st.bytes = d->offset + (d->st.cut ? d->st.cut_bytes : 0);
		d->st.gzip = d->in->gzip;
		return rc;
	}
	*pk = &d->pk;
	return 1;
}

const struct pf_status *pf_decoder_status(const struct pf_decoder *d)
{
	return &d->st;
}

void pf_decoder_close(struct pf_decoder *d)
{
	if (d == NULL)
		return;
	pfd_sequences_free(d);
	pfd_tracks_free(d);
	if (d->in == &d->own)
		input_free(&d->own);
	free(d->buf);
	free(d->inner);
	free(d->args);
	free(d->flows);
	free(d->clocks);
	free(d->cats);
	free(d);
}

int pf_read_fd(int fd, const struct pf_options *opt, struct pf_status *st)
{
	struct pf_decoder *d;
	const struct pf_packet *pk;
	int rc;

	memset(st, 0, sizeof(*st));
	if (pf_decoder_open(NULL, opt, &d) != 0 ||
	    input_init(&d->own, fd, RAW_BYTES, TEXT_BYTES, NULL) != 0) {
		if (d != NULL)
			pf_decoder_close(d);
		st->error = PF_ERR_NOMEM;
		snprintf(st->message, sizeof(st->message), "out of memory");
		return -1;
	}
	d->in = &d->own;
	while ((rc = pf_decoder_next(d, &pk)) == 1) {
		if (opt->on_packet != NULL && opt->on_packet(opt->ctx, pk) != 0) {
			pfd_fail(d, PF_ERR_STOPPED, "stopped");
			rc = -1;
			break;
		}
	}
	d->st.bytes = d->offset + (d->st.cut ? d->st.cut_bytes : 0);
	d->st.gzip = d->in->gzip;
	*st = d->st;
	pf_decoder_close(d);
	return rc;
}

int pf_read_path(const char *path, const struct pf_options *opt, struct pf_status *st)
{
	int fd, rc;

	if (strcmp(path, "-") == 0)
		return pf_read_fd(STDIN_FILENO, opt, st);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		memset(st, 0, sizeof(*st));
		st->error = PF_ERR_IO;
		snprintf(st->message, sizeof(st->message), "%s", strerror(errno));
		return -1;
	}
	rc = pf_read_fd(fd, opt, st);
	close(fd);
	return rc;
}
int pf_sniff_path(const char *path)
{
	struct stat sb;
	unsigned char head[4096];
	int fd, got = 0, dupfd;
	off_t here = 0;
	gzFile gz;

	if (strcmp(path, "-") == 0) {
		fd = STDIN_FILENO;
		if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))
			return 0;
		here = lseek(fd, 0, SEEK_CUR);
		if (here < 0)
			return 0;
	} else {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		/* Only a regular file can be read twice: a pipe or FIFO (a tool's own feed
		 * too) would lose what the sniffing read. A directory: the reader says why. */
		if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
			close(fd);
			return 0;
		}
	}
	dupfd = dup(fd);
	gz = dupfd >= 0 ? gzdopen(dupfd, "rb") : NULL;
	if (gz == NULL) {
		if (dupfd >= 0)
			close(dupfd);
	} else {
		got = gzread(gz, head, sizeof(head));
		gzclose(gz);
	}
	if (fd == STDIN_FILENO)
		lseek(fd, here, SEEK_SET);
	else
		close(fd);
	return got > 0 && pf_sniff_bytes(head, (size_t)got);
}
