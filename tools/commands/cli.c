/* SPDX-License-Identifier: MIT */
/*
 * Shared parts of the subcommands (see cli.h).
 */
#include "cli.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void say(const char *cmd, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* One line, in one write where it fits: the lines of processes that share a stderr (the
 * ranks of `mpirun ... ringtrace record`, which mpirun gathers) stay whole. */
static void say(const char *cmd, const char *fmt, va_list ap)
{
	char line[8192];
	va_list again;
	int n = snprintf(line, sizeof(line), "ringtrace %s: ", cmd);

	va_copy(again, ap);
	int m = n < 0 || (size_t)n >= sizeof(line)
			? -1
			: vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, again);
	va_end(again);
	if (m >= 0 && (size_t)n + (size_t)m + 1 < sizeof(line)) {
		line[n + m] = '\n';
		fwrite(line, 1, (size_t)n + (size_t)m + 1, stderr); /* stderr: unbuffered */
		return;
	}
	fprintf(stderr, "ringtrace %s: ", cmd);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void cli_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(cmd, fmt, ap);
	va_end(ap);
}

void cli_note(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(cmd, fmt, ap);
	va_end(ap);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ringtrace %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'ringtrace %s --help'.\n", cmd);
	return CLI_ERROR;
}

int cli_parse_u64(const char *s, uint64_t *v)
{
	uint64_t n = 0;

	if (*s == '\0')
		return -1;
	for (; *s != '\0'; s++) {
		unsigned d = (unsigned)(*s - '0');

		if (*s < '0' || *s > '9' || n > (UINT64_MAX - d) / 10)
			return -1;
		n = n * 10 + d;
	}
	*v = n;
	return 0;
}

static bool ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

char *cli_default_output(const char *input, const char *tag)
{
	size_t n = strlen(input), stem = n;
	const char *ext = ".json";
	char *out;

	if (strcmp(input, "-") == 0)
		return strdup("-");
	if (ends_with(input, n, ".json.gz")) {
		stem = n - 8;
		ext = ".json.gz";
	} else if (ends_with(input, n, ".json")) {
		stem = n - 5;
	} else if (ends_with(input, n, ".gz")) {
		stem = n - 3;
		ext = ".json.gz";
	}
	out = malloc(stem + strlen(tag) + 10);
	if (out != NULL)
		sprintf(out, "%.*s.%s%s", (int)stem, input, tag, ext);
	return out;
}

/* --max-event-mb, in bytes; 0: the reader's default. */
static uint64_t max_event_bytes;

int cli_common_options(const char *cmd, int argc, char **argv)
{
	int out = 1;

	for (int i = 1; i < argc; i++) {
		const char *value = NULL;
		uint64_t mb;

		if (strcmp(argv[i], "--") == 0) {
			while (i < argc)
				argv[out++] = argv[i++];
			break;
		}
		if (strcmp(argv[i], "--max-event-mb") == 0) {
			if (i + 1 == argc) {
				cli_usage_error(cmd, "--max-event-mb needs a number");
				return -1;
			}
			value = argv[++i];
		} else if (strncmp(argv[i], "--max-event-mb=", 15) == 0) {
			value = argv[i] + 15;
		} else {
			argv[out++] = argv[i];
			continue;
		}
		if (cli_parse_u64(value, &mb) != 0 || mb == 0 || mb > ((uint64_t)1 << 20)) {
			cli_usage_error(cmd,
					"--max-event-mb: '%s' is not a number of MiB from 1 to "
					"1048576",
					value);
			return -1;
		}
		max_event_bytes = mb << 20;
	}
	argv[out] = NULL;
	return out;
}

uint64_t cli_max_event_bytes(void)
{
	return max_event_bytes;
}

struct trace *cli_open_trace(const char *cmd, const char *path, const struct trace_options *options)
{
	struct trace_options o = {0};
	struct trace *r;
	int err;

	if (options != NULL)
		o = *options;
	if (o.max_event_bytes == 0)
		o.max_event_bytes = max_event_bytes;
	err = trace_open(path, &o, &r);
	if (err != 0) {
		cli_error(cmd, "cannot read %s: %s", path, strerror(-err));
		return NULL;
	}
	return r;
}

void cli_warn_issue(void *ctx, const struct trace_issue *issue)
{
	struct cli_warnings *w = ctx;
	char where[4200];

	w->count++;
	if (w->shown >= w->max)
		return;
	w->shown++;
	fprintf(stderr, "%s: warning: %s\n",
		trace_issue_place(where, sizeof(where), w->file, issue), issue->message);
}

void cli_warnings_done(const struct cli_warnings *w)
{
	if (w->count > w->shown)
		fprintf(stderr, "%s: ... and %llu more warnings\n", w->file,
			(unsigned long long)(w->count - w->shown));
}

bool cli_not_a_trace(const char *cmd, const char *file, const struct trace_status *st)
{
	if (st->not_a_trace == NULL || st->error != TRACE_OK)
		return false;
	cli_error(cmd, "%s: not a trace: %s", file, st->not_a_trace);
	return true;
}
