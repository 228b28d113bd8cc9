/* SPDX-License-Identifier: MIT */
/*
 * Path patterns: RINGTRACE_FILE's %p (pid), %h (host), %r (rank), %R (rank / 1000,
 * three digits at least), %s (the file's number in a numbered series: segments,
 * snapshots) and %%. The session expands the first file's name and creates its
 * missing directories; the writer expands each later segment's and snapshot's.
 */
#include "path/path.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int rtr__path_expand(char *out, size_t size, const char *pattern, pid_t pid, const char *host,
		     long rank, uint64_t number)
{
	size_t o = 0;

	if (pattern == NULL || *pattern == '\0')
		return -EINVAL;
	for (const char *p = pattern; *p != '\0'; p++) {
		char num[24];
		const char *piece = num;
		if (*p != '%') {
			num[0] = *p;
			num[1] = '\0';
		} else {
			switch (*++p) {
			case 'p':
				snprintf(num, sizeof(num), "%ld", (long)pid);
				break;
			case 'h':
				piece = host;
				break;
			case 'r':
				snprintf(num, sizeof(num), "%ld", rank < 0 ? 0L : rank);
				break;
			case 'R':
				snprintf(num, sizeof(num), "%03ld", rank < 0 ? 0L : rank / 1000);
				break;
			case 's':
				snprintf(num, sizeof(num), "%04llu", (unsigned long long)number);
				break;
			case '%':
				num[0] = '%';
				num[1] = '\0';
				break;
			default:
				return -EINVAL; /* unknown or trailing '%' */
			}
		}
		size_t len = strlen(piece);
		if (o + len >= size)
			return -ENAMETOOLONG;
		memcpy(out + o, piece, len);
		o += len;
	}
	out[o] = '\0';
	return 0;
}

/* Whether pattern has a %s (not a %%s). */
static int has_number(const char *pattern)
{
	for (const char *p = pattern; *p != '\0'; p++)
		if (*p == '%' && *++p == 's')
			return 1;
		else if (*p == '\0')
			break;
	return 0;
}

int rtr__path_number_pattern(char *out, size_t size, const char *pattern)
{
	const char *at = strstr(pattern, ".json");

	if (at == NULL)
		at = strstr(pattern, ".pftrace");
	if (at == NULL)
		at = strstr(pattern, ".perfetto-trace");
	size_t len = strlen(pattern);

	if (has_number(pattern))
		at = pattern + len, len = 0;
	else if (at == NULL)
		at = len >= 3 && strcmp(pattern + len - 3, ".gz") == 0 ? pattern + len - 3
								       : pattern + len;
	size_t head = (size_t)(at - pattern);
	int n = snprintf(out, size, "%.*s%s%s", (int)head, pattern, len == 0 ? "" : ".%s", at);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* The suffixes a manifest's name drops (longest first where one ends another). */
static const char *const trace_suffixes[] = {
	".perfetto-trace.gz", ".perfetto-trace", ".pftrace.gz", ".pftrace", ".json.gz", ".json",
};

int rtr__path_job(char *out, size_t size, const char *pattern, pid_t pid, const char *host,
		  const char *suffix)
{
	const char *kept = "";

	char name[PATH_MAX], stem[PATH_MAX];
	size_t o = 0, dir = 0;
	int job = 0;

	if (pattern == NULL || *pattern == '\0')
		return -EINVAL;
	/* the directories before the first that holds an escape: every rank's below it */
	for (const char *q = pattern; *q != '\0' && *q != '%'; q++)
		if (*q == '/')
			dir = (size_t)(q - pattern) + 1;
	const char *base = strrchr(pattern, '/') != NULL ? strrchr(pattern, '/') + 1 : pattern;
	/* the file name's pattern with "job" for %r, %s (and a '.' before it) left out */
	const char *p;
	for (p = base; *p != '\0' && o + 4 < sizeof(name); p++) {
		if (p[0] == '%' && p[1] == 'r') {
			memcpy(name + o, "job", 3);
			o += 3;
			job = 1;
			p++;
		} else if (p[0] == '%' && p[1] == 's') {
			if (o > 0 && name[o - 1] == '.')
				o--;
			p++;
		} else {
			name[o++] = *p;
			if (p[0] == '%' && p[1] != '\0')
				name[o++] = *++p; /* another escape, %% included: expanded below */
		}
	}
	if (*p != '\0')
		return -ENAMETOOLONG;
	name[o] = '\0';
	int err = rtr__path_expand(stem, sizeof(stem), name, pid, host, 0, 0);
	if (err != 0)
		return err;
	o = strlen(stem);
	for (size_t i = 0; i < sizeof(trace_suffixes) / sizeof(trace_suffixes[0]); i++) {
		size_t len = strlen(trace_suffixes[i]);
		if (o > len && strcmp(stem + o - len, trace_suffixes[i]) == 0) {
			kept = trace_suffixes[i];
			stem[o -= len] = '\0';
			break;
		}
	}
	int n = snprintf(out, size, "%.*s%s%s%s", (int)dir, pattern, stem, job ? "" : "-job",
			 suffix != NULL ? suffix : kept);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int rtr__path_make_dirs(const char *path, char *failed, size_t failed_size)
{
	char dir[PATH_MAX];
	size_t len = strlen(path);

	if (len >= sizeof(dir))
		return -ENAMETOOLONG;
	memcpy(dir, path, len + 1);
	char *slash = strrchr(dir, '/');
	if (slash == NULL || slash == dir)
		return 0; /* the working directory or the root: there */
	*slash = '\0';
	/* each level from the top: one there (made meanwhile by another rank: EEXIST)
	 * must be a directory */
	for (char *p = dir + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char was = *p;
		*p = '\0';
		struct stat st;
		if (mkdir(dir, 0777) != 0) {
			int err = -errno;
			if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
				snprintf(failed, failed_size, "%s", dir);
				return err == -EEXIST ? -ENOTDIR : err;
			}
		}
		*p = was;
		if (was == '\0')
			break;
	}
	return 0;
}
