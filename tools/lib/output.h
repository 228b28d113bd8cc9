/* SPDX-License-Identifier: MIT */
/*
 * Where the tools write a trace: a file, or "-" for standard output, plain or gzip.
 *
 * A file is written under a temporary name in the same directory and renamed into
 * place by output_close(), so the path holds either its old content or the whole
 * new file, never a half-written one, and a tool may read and replace the same path
 * (`ringtrace check --repair -o t.json t.json`). output_free() before a commit
 * removes the temporary file. Never through a symbolic link (one to a pipe or a
 * character device, like /dev/stdout, excepted): see output.c.
 *
 * gzip output is a sequence of members, each ending after a whole line once about
 * GZIP_MEMBER_BYTES of text have gone in: the recorder's own layout, so a copy cut
 * short still holds every earlier member (zlib, level 1, as fast as the reading).
 *
 * Errors are sticky: after the first failed write every call returns -1, and
 * output_error() says what failed ("writing OUT: No space left on device").
 *
 * Thread safety: one output per thread.
 */
#ifndef RTR_TOOLS_OUTPUT_H
#define RTR_TOOLS_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GZIP_MEMBER_BYTES (4u << 20)

struct output;

/* Does path name gzip output (ends in ".gz")? */
bool output_path_is_gzip(const char *path);

struct output;
/* Is out written gzip-compressed? */
bool output_is_gzip(const struct output *out);

/*
 * Open path ("-": standard output) for writing, gzip when gzip is true. Returns 0
 * and the output in *out, or -errno (the temporary file could not be made).
 */
int output_open(const char *path, bool gzip, struct output **out);

/* What output_open()'s -errno means, for a message. */
const char *output_strerror(int err);

/* Append n bytes. 0, or -1 (see output_error()). */
int output_write(struct output *o, const void *p, size_t n);

/* Append a NUL-terminated string. 0 or -1. */
int output_puts(struct output *o, const char *s);

/* Text bytes written so far (before compression). */
uint64_t output_bytes(const struct output *o);

/* Flush, finish gzip, close and rename the file into place. 0, or -1 (see
 * output_error(); the temporary file is then removed by output_free()). */
int output_commit(struct output *o);

/* Free o; unless output_commit() succeeded, remove the temporary file. o may be
 * NULL. */
void output_free(struct output *o);

/* The first error ("writing OUT: No space left on device"), or NULL. */
const char *output_error(const struct output *o);

/* The path as given, or "<stdout>". */
const char *output_name(const struct output *o);

#endif /* RTR_TOOLS_OUTPUT_H */
