/* SPDX-License-Identifier: MIT */
/*
 * A job's manifest (docs/mpi.md, "The job's manifest") where a command takes trace
 * files: manifest_expand() turns an argument list in which manifests appear into the
 * files they list, so that `merge`, `window` and `report` take a manifest as they take
 * a glob. A manifest is known by its content, a JSON object whose "type" is "ringtrace
 * manifest", never by its name; any other argument is left as it is (a trace, "-").
 *
 * Thread safety: none needed; no state.
 */
#ifndef RTR_TOOLS_MANIFEST_H
#define RTR_TOOLS_MANIFEST_H

#include <stddef.h>

/* The files to read: the arguments, each manifest replaced by its files. */
struct manifest_files {
	char **paths; /* n paths, then NULL; each malloc'd */
	long *ranks;  /* each path's rank in its manifest; -1: an argument as given */
	size_t n;
	size_t manifests; /* the manifests among the arguments */
};

/*
 * args[0 .. n) into out, in order, each manifest among them replaced by the files it
 * lists in its order (by rank, then segment), a relative path joined to the
 * manifest's directory. 0, or -1 with why (why_size bytes) saying why for the
 * command to print: "job.manifest.json: a manifest of schema_version 2, not 1", one
 * without "files", an entry without "path", "out of memory". A listed file that is
 * missing is the command's to report when it opens it. manifest_files_free() out
 * after either.
 */
int manifest_expand(char *const *args, size_t n, struct manifest_files *out, char *why,
		    size_t why_size);

void manifest_files_free(struct manifest_files *out);

#endif
