/* SPDX-License-Identifier: MIT */
/*
 * Manifests among a command's arguments (manifest.h): each argument that is a regular
 * file starting with '{' (after blanks), small enough to be one, is parsed with yajl's
 * tree; when its "type" is "ringtrace manifest" its "files" replace it. A trace is
 * never read whole here: an array starts with '[', a protobuf or gzip file with
 * neither, and a JSON object trace is larger than a manifest or is no manifest.
 */
#include "manifest.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yajl/yajl_tree.h>

#define MANIFEST_MAX_BYTES (256u << 20) /* 1,000,000 files at 256 bytes a line */
#define MANIFEST_SCHEMA	   1

/* The text of path when it may be a manifest (a regular file of at most the limit
 * whose first non-blank byte is '{'); NULL otherwise. */
static char *manifest_text(const char *path)
{
	struct stat st;
	FILE *f;
	int c;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > MANIFEST_MAX_BYTES ||
	    (f = fopen(path, "rb")) == NULL)
		return NULL;
	while ((c = getc(f)) == ' ' || c == '\n' || c == '\r' || c == '\t')
		;
	char *text = c == '{' ? malloc((size_t)st.st_size + 1) : NULL;
	size_t len = 0;
	if (text != NULL) {
		text[len++] = '{';
		len += fread(text + 1, 1, (size_t)st.st_size, f);
		text[len] = '\0';
	}
	fclose(f);
	return text;
}

static int push(struct manifest_files *out, char *path, long rank)
{
	char **more = path != NULL ? realloc(out->paths, (out->n + 2) * sizeof(*more)) : NULL;
	long *ranks = more != NULL ? realloc(out->ranks, (out->n + 1) * sizeof(*ranks)) : NULL;

	if (more != NULL)
		out->paths = more;
	if (ranks == NULL) {
		free(path);
		return -1;
	}
	out->ranks = ranks;
	out->ranks[out->n] = rank;
	out->paths[out->n++] = path;
	out->paths[out->n] = NULL;
	return 0;
}

/* entry's path, relative ones joined to the manifest's directory (dir_len bytes of
 * manifest, with its '/'), into a malloc'd string. */
static char *joined(const char *manifest, size_t dir_len, const char *path)
{
	size_t len = strlen(path);
	char *p = malloc(dir_len + len + 1);

	if (p == NULL)
		return NULL;
	if (path[0] == '/')
		dir_len = 0;
	memcpy(p, manifest, dir_len);
	memcpy(p + dir_len, path, len + 1);
	return p;
}

/* Its files into out; 1 when the text is no manifest; 0; -1 having said why. */
static int expand_one(const char *manifest, const char *text, struct manifest_files *out, char *why,
		      size_t why_size)
{
	const char *type_at[] = {"type", NULL}, *ver_at[] = {"schema_version", NULL},
		   *files_at[] = {"files", NULL}, *path_at[] = {"path", NULL},
		   *rank_at[] = {"rank", NULL};
	yajl_val top = yajl_tree_parse(text, NULL, 0);
	yajl_val type = top != NULL ? yajl_tree_get(top, type_at, yajl_t_string) : NULL;
	const char *type_name = type != NULL ? YAJL_GET_STRING(type) : NULL;
	const char *slash = strrchr(manifest, '/');
	size_t dir_len = slash != NULL ? (size_t)(slash - manifest) + 1 : 0;
	int rc = 0;

	if (type_name == NULL || strcmp(type_name, "ringtrace manifest") != 0) {
		yajl_tree_free(top);
		return 1;
	}
	yajl_val ver = yajl_tree_get(top, ver_at, yajl_t_number);
	yajl_val files = yajl_tree_get(top, files_at, yajl_t_array);
	if (ver == NULL || !YAJL_IS_INTEGER(ver) || YAJL_GET_INTEGER(ver) != MANIFEST_SCHEMA) {
		snprintf(why, why_size, "%s: a manifest of schema_version %lld, not %d", manifest,
			 ver != NULL && YAJL_IS_INTEGER(ver) ? (long long)YAJL_GET_INTEGER(ver)
							     : -1LL,
			 MANIFEST_SCHEMA);
		rc = -1;
	} else if (files == NULL) {
		snprintf(why, why_size, "%s: a manifest without \"files\"", manifest);
		rc = -1;
	}
	for (size_t i = 0; rc == 0 && i < YAJL_GET_ARRAY(files)->len; i++) {
		yajl_val entry = YAJL_GET_ARRAY(files)->values[i];
		yajl_val path = yajl_tree_get(entry, path_at, yajl_t_string);
		const char *name = path != NULL ? YAJL_GET_STRING(path) : NULL;
		yajl_val rank = yajl_tree_get(entry, rank_at, yajl_t_number);
		long r = rank != NULL && YAJL_IS_INTEGER(rank) ? (long)YAJL_GET_INTEGER(rank) : -1;
		if (name == NULL) {
			snprintf(why, why_size, "%s: file %zu of the manifest has no \"path\"",
				 manifest, i);
			rc = -1;
		} else if (push(out, joined(manifest, dir_len, name), r) != 0) {
			snprintf(why, why_size, "out of memory");
			rc = -1;
		}
	}
	yajl_tree_free(top);
	return rc;
}

int manifest_expand(char *const *args, size_t n, struct manifest_files *out, char *why,
		    size_t why_size)
{
	*out = (struct manifest_files){0};
	for (size_t i = 0; i < n; i++) {
		char *text = strcmp(args[i], "-") != 0 ? manifest_text(args[i]) : NULL;
		int rc = text != NULL ? expand_one(args[i], text, out, why, why_size) : 1;
		free(text);
		if (rc < 0)
			return -1;
		if (rc == 0)
			out->manifests++;
		else if (push(out, strdup(args[i]), -1) != 0)
			return snprintf(why, why_size, "out of memory"), -1;
	}
	return 0;
}

void manifest_files_free(struct manifest_files *out)
{
	for (size_t i = 0; i < out->n; i++)
		free(out->paths[i]);
	free(out->paths);
	free(out->ranks);
	*out = (struct manifest_files){0};
}
