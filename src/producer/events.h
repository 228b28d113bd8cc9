/* SPDX-License-Identifier: MIT */
/*
 * Recording an event with continuation bytes (src/producer/events.c), for the calls in other
 * files: tracks, metadata, memory and stack samples.
 */
#ifndef RTR_EVENTS_H
#define RTR_EVENTS_H

#include <ringtrace.h>

struct rtr__ext_event {
	uint8_t kind;
	uint16_t flags;
	uint64_t ts;
	const char *cat;
	const char *name;	       /* copied when flags has RTR__F_NAME_COPY */
	uint64_t meta;		       /* RTR__K_META: what it sets, recorded in `a` */
	const struct rtr_track *track; /* with RTR__F_TRACK: the first continuation word */
	int has_word;		       /* a value, duration or id word follows */
	uint64_t word;
	const struct rtr_arg *args;
	unsigned nargs;
};

/* Record e on the calling thread. Returns whether it was recorded. */
bool rtr__emit_ext(const struct rtr__ext_event *e);

/* Copy the numeric arguments (I64, U64, F64, BOOL) of args into kept, in order;
 * returns how many (at most RTR_MAX_ARGS). A counter's series must be numbers. */
unsigned rtr__numeric_args(const struct rtr_arg *args, unsigned n,
			   struct rtr_arg kept[RTR_MAX_ARGS]);

#endif /* RTR_EVENTS_H */
