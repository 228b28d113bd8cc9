/* SPDX-License-Identifier: MIT */
/*
 * Protobuf's wire format as the .pftrace decoder reads it (see pf_internal.h): by
 * hand, varints, fixed64, fixed32 and length-delimited fields; unknown fields of
 * every wire type are skipped, deprecated groups too. Whatever runs past the end of
 * its message is malformed, reported where it begins.
 */
#include "pf_internal.h"

#include <stdbool.h>
#include <stdint.h>

/* The first byte of a trace: TracePacket's key, field 1 length-delimited. */
#define PACKET_KEY (RTR__PF_TRACE_PACKET << 3 | RTR__PB_LEN)

/* A varint of the message: 1 and its value, -1 malformed (reported). */
int pb_varint_any(struct pf_decoder *d, struct pb *b, uint64_t *v)
{
	const uint8_t *start = b->p;
	uint64_t x = 0;

	for (unsigned i = 0; i < 10; i++) {
		if (b->p == b->end) {
			pfd_malformed(d, b->p, "a varint runs past the end of its message");
			return -1;
		}
		uint8_t c = *b->p++;

		x |= (uint64_t)(c & 0x7f) << (7 * i);
		if (!(c & 0x80)) {
			*v = x;
			return 1;
		}
	}
	pfd_malformed(d, start, "a varint over 10 bytes");
	return -1;
}

static int pb_skip_group(struct pf_decoder *d, struct pb *b, uint32_t num, unsigned depth);

int pb_next_any(struct pf_decoder *d, struct pb *b, struct field *f, unsigned depth)
{
	const uint8_t *at = b->p;
	uint64_t key, n;

	if (b->p == b->end)
		return 0;
	if (pb_varint(d, b, &key) < 0)
		return -1;
	f->num = (uint32_t)(key >> 3);
	f->wt = (unsigned)(key & 7);
	if (key >> 3 == 0 || key >> 3 > UINT32_MAX) {
		pfd_malformed(d, at, "field number 0 or over 2^32");
		return -1;
	}
	switch (f->wt) {
	case RTR__PB_VARINT:
		return pb_varint(d, b, &f->v);
	case RTR__PB_I64:
	case RTR__PB_I32:
		n = f->wt == RTR__PB_I64 ? 8 : 4;
		if ((uint64_t)(b->end - b->p) < n) {
			pfd_malformed(d, at, "a fixed-size field runs past the end of its message");
			return -1;
		}
		f->v = 0;
		for (unsigned i = 0; i < n; i++)
			f->v |= (uint64_t)b->p[i] << (8 * i);
		b->p += n;
		return 1;
	case RTR__PB_LEN:
		if (pb_varint(d, b, &n) < 0)
			return -1;
		if (n > (uint64_t)(b->end - b->p)) {
			pfd_malformed(d, at, "a length past the end of its message");
			return -1;
		}
		f->data = b->p;
		f->len = (size_t)n;
		b->p += n;
		return 1;
	case RTR__PB_SGROUP:
		return pb_skip_group(d, b, f->num, depth + 1) < 0 ? -1 : 1;
	default:
		pfd_malformed(d, at,
			      f->wt == RTR__PB_EGROUP ? "an end-group with no group"
						      : "bad wire type");
		return -1;
	}
}

/* A deprecated group, skipped to its end-group. */
static int pb_skip_group(struct pf_decoder *d, struct pb *b, uint32_t num, unsigned depth)
{
	struct field f;
	int rc;

	if (depth > PF_MAX_DEPTH) {
		pfd_malformed(d, b->p, "nesting over 64 levels");
		return -1;
	}
	for (;;) {
		const uint8_t *at = b->p;
		uint64_t key;

		if (b->p == b->end) {
			pfd_malformed(d, b->p, "a group runs past the end of its message");
			return -1;
		}
		if (pb_varint(d, b, &key) < 0)
			return -1;
		if ((key & 7) == RTR__PB_EGROUP) {
			if ((key >> 3) != num) {
				pfd_malformed(d, at, "an end-group of another group");
				return -1;
			}
			return 0;
		}
		b->p = at;
		rc = pb_next(d, b, &f, depth);
		if (rc <= 0)
			return -1;
	}
}

struct pb pb_sub(const struct field *f)
{
	return (struct pb){f->data, f->data + f->len};
}

/* The elements of a repeated scalar, packed (RTR__PB_LEN) or not; calls add for each. */
int pb_repeated(struct pf_decoder *d, const struct field *f, bool fixed64,
		int (*add)(struct pf_decoder *, uint64_t, void *), void *ctx)
{
	if (f->wt == RTR__PB_LEN) {
		struct pb b = pb_sub(f);

		while (b.p < b.end) {
			uint64_t v = 0;

			if (fixed64) {
				if (b.end - b.p < 8) {
					pfd_malformed(d, b.p,
						      "a packed fixed64 field not a multiple of 8");
					return -1;
				}
				for (unsigned i = 0; i < 8; i++)
					v |= (uint64_t)b.p[i] << (8 * i);
				b.p += 8;
			} else if (pb_varint(d, &b, &v) < 0) {
				return -1;
			}
			if (add(d, v, ctx) != 0)
				return -1;
		}
		return 0;
	}
	return add(d, f->v, ctx);
}

/* A well-formed message of exactly n bytes (its fields' framing only)? */
bool pb_plausible(const uint8_t *p, size_t n)
{
	size_t i = 0;

	while (i < n) {
		uint64_t key = 0, v = 0;
		unsigned k;

		for (k = 0; k < 10 && i < n; k++) {
			key |= (uint64_t)(p[i] & 0x7f) << (7 * k);
			if (!(p[i++] & 0x80))
				break;
		}
		if (k == 10 || (i == n && (p[i - 1] & 0x80)) || key >> 3 == 0)
			return false;
		switch (key & 7) {
		case RTR__PB_VARINT:
		case RTR__PB_LEN:
			for (k = 0; k < 10; k++) {
				if (i == n)
					return false;
				v |= (uint64_t)(p[i] & 0x7f) << (7 * k);
				if (!(p[i++] & 0x80))
					break;
			}
			if (k == 10)
				return false;
			if ((key & 7) == RTR__PB_LEN) {
				if (v > n - i)
					return false;
				i += (size_t)v;
			}
			break;
		case RTR__PB_I64:
			if (n - i < 8)
				return false;
			i += 8;
			break;
		case RTR__PB_I32:
			if (n - i < 4)
				return false;
			i += 4;
			break;
		default:
			return false;
		}
	}
	return true;
}

bool pf_sniff_bytes(const unsigned char *p, size_t n)
{
	uint64_t len = 0;
	size_t i = 1;
	unsigned k;

	if (n == 0 || p[0] != PACKET_KEY)
		return false;
	for (k = 0; k < 10 && i < n; k++) {
		len |= (uint64_t)(p[i] & 0x7f) << (7 * k);
		if (!(p[i++] & 0x80))
			break;
	}
	if (k < 10 && i <= n && !(p[i - 1] & 0x80) && len <= n - i)
		return pb_plausible(p + i, (size_t)len);
	/* The first packet is not all here: JSON after a newline is blanks, '[' or '{'. */
	return n < 2 || !(p[1] == ' ' || p[1] == '\t' || p[1] == '\n' || p[1] == '\r' ||
			  p[1] == '[' || p[1] == '{');
}
