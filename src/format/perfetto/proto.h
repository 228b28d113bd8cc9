/* SPDX-License-Identifier: MIT */
/*
 * Perfetto's protobuf trace format: the field numbers and enum values that ringtrace
 * writes (src/format/perfetto/) and its tools read (tools/source/). One list, so that
 * the two sides cannot drift apart; the tests' own decoder (tests/support/pf_read.c)
 * keeps its numbers independently, as an outside check.
 *
 * Every number is a fact of Perfetto's published schema, protos/perfetto/trace/ in
 * google/perfetto: the message is named before each group, the field after the
 * prefix. Only what ringtrace writes or reads is here.
 */
#ifndef RTR_FORMAT_PERFETTO_PROTO_H
#define RTR_FORMAT_PERFETTO_PROTO_H

/* Wire types (protobuf encoding). */
enum {
	RTR__PB_VARINT = 0,
	RTR__PB_I64 = 1,
	RTR__PB_LEN = 2,
	RTR__PB_SGROUP = 3,
	RTR__PB_EGROUP = 4,
	RTR__PB_I32 = 5,
};

/* Trace */
enum { RTR__PF_TRACE_PACKET = 1 };

/* TracePacket (trace_packet.proto) */
enum {
	RTR__PF_PACKET_CLOCK_SNAPSHOT = 6,
	RTR__PF_PACKET_TIMESTAMP = 8,
	RTR__PF_PACKET_SEQUENCE_ID = 10, /* trusted_packet_sequence_id */
	RTR__PF_PACKET_TRACK_EVENT = 11,
	RTR__PF_PACKET_INTERNED_DATA = 12,
	RTR__PF_PACKET_SEQUENCE_FLAGS = 13,
	RTR__PF_PACKET_INCREMENTAL_STATE_CLEARED = 41,
	RTR__PF_PACKET_COMPRESSED_PACKETS = 50,
	RTR__PF_PACKET_TIMESTAMP_CLOCK_ID = 58,
	RTR__PF_PACKET_DEFAULTS = 59, /* trace_packet_defaults */
	RTR__PF_PACKET_TRACK_DESCRIPTOR = 60,
	RTR__PF_PACKET_FIRST_ON_SEQUENCE = 87, /* first_packet_on_sequence */
};

/* TracePacket.SequenceFlags */
enum {
	RTR__PF_SEQ_INCREMENTAL_STATE_CLEARED = 1,
	RTR__PF_SEQ_NEEDS_INCREMENTAL_STATE = 2,
};

/* TracePacketDefaults; TrackEventDefaults */
enum {
	RTR__PF_DEFAULTS_TIMESTAMP_CLOCK_ID = 58,
	RTR__PF_DEFAULTS_TRACK_EVENT = 11,
	RTR__PF_EVENT_DEFAULTS_TRACK_UUID = 11,
};

/* ClockSnapshot; ClockSnapshot.Clock */
enum {
	RTR__PF_SNAPSHOT_CLOCKS = 1,
	RTR__PF_SNAPSHOT_PRIMARY_TRACE_CLOCK = 2,
	RTR__PF_CLOCK_ID = 1,
	RTR__PF_CLOCK_TIMESTAMP = 2,
	RTR__PF_CLOCK_IS_INCREMENTAL = 3,
	RTR__PF_CLOCK_UNIT_MULTIPLIER_NS = 4,
};

/* BuiltinClock; ids 64..127 are sequence-scoped (ClockSnapshot.Clock) */
enum {
	RTR__PF_BUILTIN_REALTIME = 1,
	RTR__PF_BUILTIN_MONOTONIC = 3,
	RTR__PF_BUILTIN_BOOTTIME = 6,
	RTR__PF_CLOCK_SEQUENCE_FIRST = 64,
	RTR__PF_CLOCK_SEQUENCE_LAST = 127,
};

/* TrackDescriptor (track_descriptor.proto) */
enum {
	RTR__PF_TRACK_UUID = 1,
	RTR__PF_TRACK_NAME = 2,
	RTR__PF_TRACK_PROCESS = 3,
	RTR__PF_TRACK_THREAD = 4,
	RTR__PF_TRACK_PARENT_UUID = 5,
	RTR__PF_TRACK_COUNTER = 8,
	RTR__PF_TRACK_CHILD_ORDERING = 11,
	RTR__PF_TRACK_SIBLING_ORDER_RANK = 12,
	RTR__PF_CHILD_ORDERING_EXPLICIT = 3, /* TrackDescriptor.ChildTracksOrdering */
};

/* ProcessDescriptor */
enum {
	RTR__PF_PROCESS_PID = 1,
	RTR__PF_PROCESS_SORT_INDEX = 3, /* legacy_sort_index */
	RTR__PF_PROCESS_NAME = 6,
	RTR__PF_PROCESS_LABELS = 8,
};

/* ThreadDescriptor */
enum {
	RTR__PF_THREAD_PID = 1,
	RTR__PF_THREAD_TID = 2,
	RTR__PF_THREAD_SORT_INDEX = 3, /* legacy_sort_index */
	RTR__PF_THREAD_NAME = 5,
};

/* CounterDescriptor; CounterDescriptor.Unit */
enum {
	RTR__PF_COUNTER_TYPE = 1,
	RTR__PF_COUNTER_CATEGORIES = 2,
	RTR__PF_COUNTER_UNIT = 3,
	RTR__PF_COUNTER_UNIT_NAME = 6,
	RTR__PF_UNIT_TIME_NS = 1,
	RTR__PF_UNIT_COUNT = 2,
	RTR__PF_UNIT_SIZE_BYTES = 3,
};

/* TrackEvent (track_event.proto) */
enum {
	RTR__PF_EVENT_CATEGORY_IIDS = 3,
	RTR__PF_EVENT_DEBUG_ANNOTATIONS = 4,
	RTR__PF_EVENT_TYPE = 9,
	RTR__PF_EVENT_NAME_IID = 10,
	RTR__PF_EVENT_TRACK_UUID = 11,
	RTR__PF_EVENT_CATEGORIES = 22,
	RTR__PF_EVENT_NAME = 23,
	RTR__PF_EVENT_COUNTER_VALUE = 30,
	RTR__PF_EVENT_DOUBLE_COUNTER_VALUE = 44,
	RTR__PF_EVENT_FLOW_IDS = 47,
	RTR__PF_EVENT_TERMINATING_FLOW_IDS = 48,
};

/* TrackEvent.Type */
enum {
	RTR__PF_TYPE_UNSPECIFIED = 0,
	RTR__PF_TYPE_SLICE_BEGIN = 1,
	RTR__PF_TYPE_SLICE_END = 2,
	RTR__PF_TYPE_INSTANT = 3,
	RTR__PF_TYPE_COUNTER = 4,
};

/* DebugAnnotation (debug_annotation.proto) */
enum {
	RTR__PF_ANN_NAME_IID = 1,
	RTR__PF_ANN_BOOL = 2,
	RTR__PF_ANN_UINT = 3,
	RTR__PF_ANN_INT = 4,
	RTR__PF_ANN_DOUBLE = 5,
	RTR__PF_ANN_STRING = 6,
	RTR__PF_ANN_POINTER = 7,
	RTR__PF_ANN_NAME = 10,
	RTR__PF_ANN_DICT_ENTRIES = 11,
	RTR__PF_ANN_ARRAY_VALUES = 12,
	RTR__PF_ANN_STRING_IID = 17,
};

/* InternedData (interned_data.proto) and its entries: EventCategory, EventName,
 * DebugAnnotationName, InternedString all hold {iid = 1, name or str = 2}. */
enum {
	RTR__PF_INTERNED_CATEGORIES = 1,
	RTR__PF_INTERNED_NAMES = 2,
	RTR__PF_INTERNED_ANNOTATION_NAMES = 3,
	RTR__PF_INTERNED_STRINGS = 29, /* debug_annotation_string_values */
	RTR__PF_INTERNED_IID = 1,
	RTR__PF_INTERNED_NAME = 2,
};

#endif
