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
 * complete file of everything before the error (and exit status 2).
 */
#ifndef RTR_TOOLS_REPAIR_H
#define RTR_TOOLS_REPAIR_H

/*
 * Repair input ("-": standard input) into output (NULL: the default name, see
 * cli_default_output(); "-": standard output; gzip when it ends in .gz). Reports on
 * standard error. Returns the exit status: CLI_OK, or CLI_ERROR.
 */
int repair_command(const char *input, const char *output);

#endif /* RTR_TOOLS_REPAIR_H */
