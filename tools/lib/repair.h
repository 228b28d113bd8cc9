/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace check --repair`: turns a trace cut short (a killed run; plain or gzip)
 * into a complete one, in one streaming pass:
 *
 * - every whole event is copied through (as compact JSON, one per line);
 * - a partial last event, or the part of a cut gzip member after its last whole
 *   event, is dropped;
 * - each B slice still open is ended by an E 1 ns after the latest time seen on its
 *   thread (the end of its last X included), innermost first;
 * - an end marker closes the trace: {"ph":"i","s":"g","name":"ringtrace: end",...,
 *   "args":{"final":true,"repaired":true,...}}, with the recorder's counts from a
 *   provisional end marker when the file had one, and "events" (kept, markers and
 *   M events not counted), "slices_closed", "partial_bytes_dropped";
 * - the array is closed: the result is strict JSON.
 *
 * A file that was already complete, with a final end marker and no slice left open,
 * is copied as it is. Input that turns out malformed part way still gives a
 * complete file of everything before the error.
 *
 * The caller opens the reader and the output and says what happened (the command's
 * side is tools/commands/check/repair.c); nothing here prints.
 */
#ifndef RTR_TOOLS_REPAIR_H
#define RTR_TOOLS_REPAIR_H

#include "output.h"
#include "trace.h"

#include <stdbool.h>
#include <stdint.h>

/* What a repair did, for its report. */
struct repair_result {
	bool kept;	    /* the input was complete: the copy holds it as it was */
	bool stopped;	    /* the read stopped at an error after some events (the
			     * reader's status says which): the copy holds them, completed */
	uint64_t closed;    /* open B slices ended */
	uint64_t untracked; /* open B slices past the state bound, left open */
	uint64_t refused;   /* threads or open slices past the state bound (threads.h) */
};

/*
 * Copy what r reads into out (opened by the caller, freed by it after), repaired,
 * and commit out. Returns 0 with *res filled; or, out not committed:
 *   -ENODATA  nothing was read before the reader's error (its status says which);
 *   -ENOMEM   out of memory;
 *   -EIO      writing failed (output_error() says why).
 */
int repair_trace(struct trace *r, struct output *out, struct repair_result *res);

#endif /* RTR_TOOLS_REPAIR_H */
