/* SPDX-License-Identifier: MIT */
/*
 * Path patterns (path.c): how a trace file is named from RINGTRACE_FILE.
 */
#ifndef RTR_PATH_PATH_H
#define RTR_PATH_PATH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Expand %p %h %r %R %s %% of pattern into out (size bytes), %s as number (4 digits
 * at least), %r as 0 when rank < 0, %R as rank / 1000 (3 digits at least: 000 for
 * ranks 0-999, 001 for 1000-1999). 0, or -ENAMETOOLONG / -EINVAL (an unknown or
 * trailing '%', an empty pattern). */
int rtr__path_expand(char *out, size_t size, const char *pattern, pid_t pid, const char *host,
		     long rank, uint64_t number);

/* The pattern of numbered files (rotation, flight mode) into out: as given when it
 * has a %s; else with ".%s" before its first ".json" (trace.json.gz ->
 * trace.%s.json.gz) or ".pftrace" or ".perfetto-trace", or before a final ".gz", or at
 * the end. 0 or -ENAMETOOLONG. */
int rtr__path_number_pattern(char *out, size_t size, const char *pattern);

/* The name of a file of the whole job for the rank pattern into out: in the
 * pattern's directory above the first that holds an escape (the one every rank's file
 * is below), the file name with "job" for %r, %s and the '.' before it left out, the
 * other escapes as rank 0 (pid, host) expands them, and suffix for its trace suffix
 * (.json, .pftrace, .perfetto-trace, gzip'd or not; NULL: the suffix kept). The
 * manifest, suffix ".manifest.json": trace-%r.json -> trace-job.manifest.json,
 * run/%h/%R/t-%r.json -> run/t-job.manifest.json; the job profile, NULL:
 * prof-%r.json -> prof-job.json. "-job" before the suffix when the name has no %r. 0,
 * -EINVAL (a bad escape) or -ENAMETOOLONG. */
int rtr__path_job(char *out, size_t size, const char *pattern, pid_t pid, const char *host,
		  const char *suffix);

/* Create the missing directories above the file path (mkdir -p of its directory,
 * 0777 less the umask; one made meanwhile by another process is fine). 0, or -errno
 * with the directory that could not be made (or is not one) in failed. */
int rtr__path_make_dirs(const char *path, char *failed, size_t failed_size);

#endif
