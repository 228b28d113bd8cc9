/* SPDX-License-Identifier: MIT */
/*
 * Compressed Perfetto packets: whole TracePackets in, one TracePacket out whose only
 * field is `compressed_packets`, a zlib stream of them (trace_packet.proto: "a
 * serialized Trace", inflated and read in place of the packet by trace processor).
 * libdeflate's zlib format, level 1.
 *
 * For the Perfetto format (src/format/perfetto/, which packs a chunk's packets in
 * place, batch by batch) and for the tools that write a .pftrace (they link the
 * object library rtr_pf_pack): no writer, no allocation but the compressor's own
 * (libdeflate's, from malloc: libdeflate 1.14 takes no allocator per compressor),
 * buffers from the caller.
 *
 * A batch is at most RTR__PF_BATCH_BYTES of packets before compression, so that a
 * run killed mid-write keeps every batch but the one being written: a file cut
 * inside a compressed packet loses that packet's batch, like any cut packet.
 *
 * Thread safety: a packer is used by one thread at a time.
 */
#ifndef RTR_FORMAT_PERFETTO_PACK_H
#define RTR_FORMAT_PERFETTO_PACK_H

#include <stddef.h>
#include <stdint.h>

/* Bytes of packets a batch holds at most before it is packed. */
#define RTR__PF_BATCH_BYTES ((size_t)64 << 10)

struct rtr__pf_packer;

/* A packer (libdeflate's compressor, level 1); NULL without memory. */
struct rtr__pf_packer *rtr__pf_packer_new(void);
void rtr__pf_packer_free(struct rtr__pf_packer *pk);

/* The most bytes rtr__pf_pack() writes for n bytes of packets. */
size_t rtr__pf_pack_bound(size_t n);

/*
 * The packets in[0 .. n) (whole TracePackets, each with its Trace field 1 key and
 * length) as one packet carrying them compressed, at out (room bytes; at least
 * rtr__pf_pack_bound(n) makes it always fit). Returns its length, or 0 when it would
 * not be shorter than the packets or does not fit: then the packets go as they are.
 */
size_t rtr__pf_pack(struct rtr__pf_packer *pk, const void *in, size_t n, void *out, size_t room);

/*
 * A batcher for a writer of whole packets (the tools): packets are added to the
 * batch; when the next would take it past RTR__PF_BATCH_BYTES, or on
 * rtr__pf_batch_flush(), the batch is packed (or left plain, see rtr__pf_pack()) and
 * handed to emit. The buffers are the caller's: in of RTR__PF_BATCH_BYTES, out of
 * rtr__pf_pack_bound(RTR__PF_BATCH_BYTES).
 */
typedef int (*rtr__pf_emit_fn)(void *ctx, const void *p, size_t n); /* 0, or nonzero: failed */

struct rtr__pf_batch {
	struct rtr__pf_packer *packer;
	char *in, *out;
	size_t len;	      /* bytes of packets in in */
	uint64_t packed;      /* batches handed out compressed */
	uint64_t plain_bytes; /* bytes handed out as they were */
	rtr__pf_emit_fn emit;
	void *ctx;
};

/*
 * Add one whole packet p[0 .. n). A packet over RTR__PF_BATCH_BYTES goes out alone,
 * as it is, after the batch before it. Returns 0, or emit's nonzero result.
 */
int rtr__pf_batch_add(struct rtr__pf_batch *b, const void *p, size_t n);

/* Hand out what the batch holds. 0, or emit's nonzero result. */
int rtr__pf_batch_flush(struct rtr__pf_batch *b);

#endif
