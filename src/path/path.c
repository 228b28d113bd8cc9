/* SPDX-License-Identifier: MIT */
/*
 * Path patterns: RINGTRACE_FILE's %p (pid), %h (host), %r (rank), %s (the file's
 * number in a numbered series: segments, snapshots) and %%. The session expands the
 * first file's name; the writer each later segment's and snapshot's.
 */
#include "path/path.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

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
