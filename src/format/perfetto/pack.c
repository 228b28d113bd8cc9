/* SPDX-License-Identifier: MIT */
/*
 * Compressed Perfetto packets (pack.h): a batch of packets as one TracePacket
 * {compressed_packets = zlib(batch)}, with libdeflate.
 */
#include "format/perfetto/pack.h"

#include "format/perfetto/proto.h"

#include <libdeflate.h>
#include <string.h>

/* libdeflate's fastest level: a span's packets (28 bytes) take under a nanosecond a
 * byte, and repeat enough that more effort buys little. */
#define LEVEL 1

/* The packet's key and length, and the field's key and length: varints of 1, 5, 2
 * and 5 bytes at most. */
#define HEAD_MAX 13

struct rtr__pf_packer *rtr__pf_packer_new(void)
{
	return (struct rtr__pf_packer *)libdeflate_alloc_compressor(LEVEL);
}

void rtr__pf_packer_free(struct rtr__pf_packer *pk)
{
	if (pk != NULL)
		libdeflate_free_compressor((struct libdeflate_compressor *)pk);
}

size_t rtr__pf_pack_bound(size_t n)
{
	return HEAD_MAX + libdeflate_zlib_compress_bound(NULL, n);
}

static size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static unsigned char *put_varint(unsigned char *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	return p;
}

size_t rtr__pf_pack(struct rtr__pf_packer *pk, const void *in, size_t n, void *out, size_t room)
{
	unsigned char *o = out;

	if (n == 0 || room <= HEAD_MAX)
		return 0;
	/* the stream after the most its head can take, then the head right before it */
	size_t z = libdeflate_zlib_compress((struct libdeflate_compressor *)pk, in, n, o + HEAD_MAX,
					    room - HEAD_MAX);
	if (z == 0)
		return 0; /* did not fit */
	const uint64_t field_key = (uint64_t)RTR__PF_PACKET_COMPRESSED_PACKETS << 3 | RTR__PB_LEN;
	size_t body = varint_len(field_key) + varint_len(z) + z;
	size_t head = 1 + varint_len(body) + varint_len(field_key) + varint_len(z);
	if (head + z >= n)
		return 0; /* no shorter: the packets go as they are */
	unsigned char *p = o + HEAD_MAX - head;
	*p++ = RTR__PF_TRACE_PACKET << 3 | RTR__PB_LEN;
	p = put_varint(p, body);
	p = put_varint(p, field_key);
	put_varint(p, z);
	memmove(o, o + HEAD_MAX - head, head + z);
	return head + z;
}

/* The batch, packed or as it is, to emit. */
static int batch_out(struct rtr__pf_batch *b)
{
	size_t n = b->len;
	size_t z;

	if (n == 0)
		return 0;
	b->len = 0;
	z = rtr__pf_pack(b->packer, b->in, n, b->out, rtr__pf_pack_bound(RTR__PF_BATCH_BYTES));
	if (z > 0) {
		b->packed++;
		return b->emit(b->ctx, b->out, z);
	}
	b->plain_bytes += n;
	return b->emit(b->ctx, b->in, n);
}

int rtr__pf_batch_add(struct rtr__pf_batch *b, const void *p, size_t n)
{
	int rc;

	if (b->len + n > RTR__PF_BATCH_BYTES && (rc = batch_out(b)) != 0)
		return rc;
	if (n > RTR__PF_BATCH_BYTES) { /* alone, as it is */
		b->plain_bytes += n;
		return b->emit(b->ctx, p, n);
	}
	memcpy(b->in + b->len, p, n);
	b->len += n;
	return 0;
}

int rtr__pf_batch_flush(struct rtr__pf_batch *b)
{
	return batch_out(b);
}
