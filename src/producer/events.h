/* SPDX-License-Identifier: MIT */
/*
 * Recording an event with continuation bytes (src/producer/events.c), for the calls in other
 * files: tracks, metadata, memory and stack samples. The event's description, struct
 * rtr__ext_event, is the record format's (src/record/record.h).
 */
#ifndef RTR_EVENTS_H
#define RTR_EVENTS_H

#include "record/record.h"

/* Record e on the calling thread. Returns whether it was recorded. */
bool rtr__emit_ext(const struct rtr__ext_event *e);

/* Copy the numeric arguments (I64, U64, F64, BOOL) of args into kept, in order;
 * returns how many (at most RTR_MAX_ARGS). A counter's series must be numbers. */
unsigned rtr__numeric_args(const struct rtr_arg *args, unsigned n,
			   struct rtr_arg kept[RTR_MAX_ARGS]);

#endif /* RTR_EVENTS_H */
