/* SPDX-License-Identifier: MIT */
/*
 * Signal names (signal_names.c): signal lists as the configuration gives them, and
 * the short name of a signal.
 */
#ifndef RTR_SESSION_SIGNAL_NAMES_H
#define RTR_SESSION_SIGNAL_NAMES_H

#include <stddef.h>
#include <stdint.h>

/* Signal numbers 1 .. 64, bit n - 1 for signal n. */
struct rtr__sigset {
	uint64_t mask;
};

/* Parse a comma-separated list of signal names (TERM, SIGTERM, case-blind) or numbers,
 * at most `max` of them, into *set. 0, or -EINVAL with the reason in why. */
int rtr__signals_parse(const char *spec, unsigned max, struct rtr__sigset *set, char *why,
		       size_t why_size);

/* The signal's short name ("TERM"), or NULL for one without. */
const char *rtr__signal_name(int sig);

#endif
