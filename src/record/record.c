/* SPDX-License-Identifier: MIT */
/*
 * The record format's decoder, for the writer (the layout: record.h; its encoder
 * for the producer's general path: encode.h, inline there, as that path was in
 * events.c).
 *
 * It goes field by field in the order rtr__rec_put_ext() writes them, so the two
 * ends of a field read alike. The writer is handed the bytes contiguous
 * (rtr__ring_ext() copies a wrapped event whole) and never reads past them.
 */
#include "record/record.h"

#include "common/compiler.h"

#include <string.h>

/* ------------------------------------------------------------------------- */
/* Decoding                                                                   */

size_t rtr__rec_blob_bytes(uint8_t type, uint64_t val, const char *blob, size_t room)
{
	size_t bytes = 0;

	switch (type) {
	case RTR_ARG_TYPE_STR_COPY:
		return val == UINT64_MAX ? 0 : val <= RTR_MAX_COPY ? (size_t)val : SIZE_MAX;
	case RTR_ARG_TYPE_VALUE:
		return val <= RTR_MAX_COPY ? (size_t)val : SIZE_MAX;
	case RTR_ARG_TYPE_I64_ARRAY:
		return val <= RTR_MAX_COPY / sizeof(int64_t) ? (size_t)val * sizeof(int64_t)
							     : SIZE_MAX;
	case RTR_ARG_TYPE_I64_LISTS:
		if (val > RTR_MAX_COPY / sizeof(uint32_t) || val * sizeof(uint32_t) > room)
			return SIZE_MAX;
		for (uint64_t k = 0; k < val; k++) {
			uint32_t len = rtr__rec_u32(blob + k * sizeof(len));
			bytes += sizeof(len) + (size_t)len * sizeof(int64_t);
			if (bytes > RTR_MAX_COPY)
				return SIZE_MAX;
		}
		return bytes;
	case RTR_ARG_TYPE_STR_ARRAY:
		for (uint64_t k = 0; k < val; k++) {
			uint32_t len;
			if (bytes + sizeof(len) > room || bytes + sizeof(len) > RTR_MAX_COPY)
				return SIZE_MAX;
			len = rtr__rec_u32(blob + bytes);
			bytes += sizeof(len) + (len == UINT32_MAX ? 0 : len);
			if (len != UINT32_MAX && bytes > RTR_MAX_COPY)
				return SIZE_MAX;
		}
		return bytes;
	default:
		return 0;
	}
}

bool rtr__rec_decode(const struct rtr__rec *rec, const char *ext, struct rtr__rec_view *v)
{
	size_t off = 0, len = rec->ext;

	memset(v, 0, sizeof(*v));
	if (rec->flags & RTR__F_TRACK) {
		uint64_t track;
		if (len - off < sizeof(track))
			return false;
		memcpy(&track, ext, sizeof(track));
		v->track = (const struct rtr_track *)(uintptr_t)track;
		off += sizeof(track);
	}
	if (rtr__kind_has_word(rec->kind, rec->flags)) {
		if (len - off < sizeof(v->word))
			return false;
		memcpy(&v->word, ext + off, sizeof(v->word));
		off += sizeof(v->word);
	}
	if (rec->flags & RTR__F_NAME_COPY) {
		if (len - off < sizeof(v->name_len))
			return false;
		memcpy(&v->name_len, ext + off, sizeof(v->name_len));
		off += sizeof(v->name_len);
		if (v->name_len > RTR_MAX_COPY || len - off < v->name_len)
			return false;
		v->name = ext + off;
		off += v->name_len;
	}
	if (len - off < (size_t)rec->nargs * RTR__EXT_ARG)
		return false;
	v->types = (const uint8_t *)ext + off;
	off += rec->nargs;
	v->pairs = ext + off;
	off += (size_t)rec->nargs * RTR__EXT_PAIR;
	v->strings = ext + off;
	for (unsigned i = 0; i < rec->nargs; i++) {
		uint64_t key, val = rtr__rec_arg(v, i, &key);
		size_t bytes = rtr__rec_blob_bytes(v->types[i], val, ext + off, len - off);
		if (bytes > len - off)
			return false;
		off += bytes;
	}
	return off == len;
}
