/* SPDX-License-Identifier: MIT */
/*
 * Path patterns (path.c): how a trace file is named from RINGTRACE_FILE.
 */
#ifndef RTR_PATH_PATH_H
#define RTR_PATH_PATH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Expand %p %h %r %s %% of pattern into out (size bytes), %s as number (4 digits at
 * least), %r as 0 when rank < 0. 0, or -ENAMETOOLONG / -EINVAL (an unknown or
 * trailing '%', an empty pattern). */
int rtr__path_expand(char *out, size_t size, const char *pattern, pid_t pid, const char *host,
		     long rank, uint64_t number);

/* The pattern of numbered files (rotation, flight mode) into out: as given when it
 * has a %s; else with ".%s" before its first ".json" (trace.json.gz ->
 * trace.%s.json.gz) or ".pftrace" or ".perfetto-trace", or before a final ".gz", or at
 * the end. 0 or -ENAMETOOLONG. */
int rtr__path_number_pattern(char *out, size_t size, const char *pattern);

#endif
