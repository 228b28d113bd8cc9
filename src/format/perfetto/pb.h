/* SPDX-License-Identifier: MIT */
/*
 * Protobuf's wire format, written by hand: what the Perfetto format needs of it.
 * Varints, fixed64, length-delimited fields; a message is written with a one-byte
 * length and moved up in the rare case its body is 128 bytes or more (pb_close()),
 * so a small message costs what its fields do.
 */
#ifndef RTR_FORMAT_PERFETTO_PB_H
#define RTR_FORMAT_PERFETTO_PB_H

#include "common/compiler.h"
#include "common/jsontext.h"
#include "format/perfetto/proto.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PF_STR_MAX 1024u /* a string is cut to this many bytes (UTF-8 kept whole) */

static inline char *pb_varint(char *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (char)v;
	return p;
}

static inline char *pb_tag(char *p, unsigned field, unsigned wt)
{
	return pb_varint(p, (uint64_t)field << 3 | wt);
}

static inline char *pb_uint(char *p, unsigned field, uint64_t v)
{
	return pb_varint(pb_tag(p, field, RTR__PB_VARINT), v);
}

static inline char *pb_fixed64(char *p, unsigned field, uint64_t v)
{
	p = pb_tag(p, field, RTR__PB_I64);
	memcpy(p, &v, sizeof(v)); /* little-endian, as the wire format */
	return p + sizeof(v);
}

static inline char *pb_bytes(char *p, unsigned field, const char *s, size_t len)
{
	p = pb_varint(pb_tag(p, field, RTR__PB_LEN), len);
	memcpy(p, s, len);
	return p + len;
}

/* A string field: the bytes repaired to UTF-8 (a protobuf string must be), cut to
 * PF_STR_MAX. Writes at most 3 * PF_STR_MAX + 4 bytes. */
static inline char *pb_string(char *p, unsigned field, const char *s, size_t len)
{
	if (len > PF_STR_MAX)
		len = PF_STR_MAX;
	if (RTR_LIKELY(rtr__jsontext_utf8_valid(s, len) == len))
		return pb_bytes(p, field, s, len);
	size_t bad = 0;
	char *len_at = pb_tag(p, field, RTR__PB_LEN);
	char *body = len_at + 2; /* PF_STR_MAX * 3 < 2^14: a two-byte length */
	char *end = rtr__jsontext_utf8_repair(body, s, len, &bad);
	size_t n = (size_t)(end - body);
	len_at[0] = (char)(n | 0x80);
	len_at[1] = (char)(n >> 7);
	return end;
}

/* A message field: the tag and a one-byte length; pb_close() sets the length. */
static inline char *pb_open(char *p, unsigned field, char **len_at)
{
	p = pb_tag(p, field, RTR__PB_LEN);
	*len_at = p;
	return p + 1;
}

static inline char *pb_close(char *len_at, char *end)
{
	size_t len = (size_t)(end - (len_at + 1));

	if (RTR_LIKELY(len < 0x80)) {
		*len_at = (char)len;
		return end;
	}
	char tmp[10];
	size_t n = (size_t)(pb_varint(tmp, len) - tmp);
	memmove(len_at + n, len_at + 1, len);
	memcpy(len_at, tmp, n);
	return end + n - 1;
}

/* A packet of the trace: the tag and its length's byte; pkt_end() closes it. */
static inline char *pkt_begin(char *p, char **len_at)
{
	return pb_open(p, RTR__PF_TRACE_PACKET, len_at);
}

static inline char *pkt_end(char *len_at, char *p)
{
	return pb_close(len_at, p);
}

#endif
