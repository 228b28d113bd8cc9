/* SPDX-License-Identifier: MIT */
/*
 * LTTng-UST tracepoint provider for the peers workload. A static span name is the
 * tracepoint itself (LTTng identifies an event by its provider:name in the metadata,
 * so a record carries only its header), as ringtrace's record carries a pointer to a
 * static name and OTF2's a region reference:
 *
 *	rtrpeer:span_begin	no payload
 *	rtrpeer:span_begin_i64	one int64_t field "i"
 *	rtrpeer:span_end	no payload
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER rtrpeer

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./lttng_tp.h"

#if !defined(PEERS_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define PEERS_LTTNG_TP_H

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(rtrpeer, span_begin, LTTNG_UST_TP_ARGS(), LTTNG_UST_TP_FIELDS())

LTTNG_UST_TRACEPOINT_EVENT(rtrpeer, span_begin_i64, LTTNG_UST_TP_ARGS(int64_t, i),
			   LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(int64_t, i, i)))

LTTNG_UST_TRACEPOINT_EVENT(rtrpeer, span_end, LTTNG_UST_TP_ARGS(), LTTNG_UST_TP_FIELDS())

#endif /* PEERS_LTTNG_TP_H */

#include <lttng/tracepoint-event.h>
