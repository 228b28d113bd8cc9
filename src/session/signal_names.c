/* SPDX-License-Identifier: MIT */
/*
 * Signal names: the lists of RINGTRACE_SIGNALS and RINGTRACE_SNAPSHOT_SIGNAL read
 * into sets, and a signal's short name for messages. No state; any thread, and
 * rtr__signal_name() from a signal handler (it only reads a constant table).
 */
#include "session/signal_names.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct {
	const char *name;
	int sig;
} names[] = {
	{"HUP", SIGHUP},       {"INT", SIGINT},	  {"QUIT", SIGQUIT}, {"ILL", SIGILL},
	{"TRAP", SIGTRAP},     {"ABRT", SIGABRT}, {"BUS", SIGBUS},   {"FPE", SIGFPE},
	{"USR1", SIGUSR1},     {"SEGV", SIGSEGV}, {"USR2", SIGUSR2}, {"PIPE", SIGPIPE},
	{"ALRM", SIGALRM},     {"TERM", SIGTERM}, {"XCPU", SIGXCPU}, {"XFSZ", SIGXFSZ},
	{"VTALRM", SIGVTALRM}, {"PROF", SIGPROF}, {"SYS", SIGSYS},   {"PWR", SIGPWR},
};

const char *rtr__signal_name(int sig)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].sig == sig)
			return names[i].name;
	return NULL;
}

/* One signal of a list: a name (with or without SIG) or a number. 0 if none. */
static int parse_one(const char *word, size_t len)
{
	char buf[16];

	if (len == 0 || len >= sizeof(buf))
		return 0;
	memcpy(buf, word, len);
	buf[len] = '\0';
	if (isdigit((unsigned char)buf[0])) {
		char *end;
		long n = strtol(buf, &end, 10);
		return *end == '\0' && n >= 1 && n <= 64 ? (int)n : 0;
	}
	const char *name = strncasecmp(buf, "SIG", 3) == 0 ? buf + 3 : buf;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcasecmp(name, names[i].name) == 0)
			return names[i].sig;
	return 0;
}

int rtr__signals_parse(const char *spec, unsigned max, struct rtr__sigset *set, char *why,
		       size_t why_size)
{
	unsigned n = 0;

	set->mask = 0;
	for (const char *p = spec; *p != '\0';) {
		while (*p == ' ' || *p == '\t')
			p++;
		size_t len = strcspn(p, ", \t");
		int sig = parse_one(p, len);
		if (sig == 0) {
			snprintf(why, why_size, "\"%.*s\" is not a signal",
				 (int)(len < 32 ? len : 32), p);
			return -EINVAL;
		}
		if (sig == SIGKILL || sig == SIGSTOP) {
			snprintf(why, why_size, "%s cannot be handled",
				 sig == SIGKILL ? "KILL" : "STOP");
			return -EINVAL;
		}
		if (++n > max) {
			snprintf(why, why_size, "at most %u signal%s", max, max == 1 ? "" : "s");
			return -EINVAL;
		}
		set->mask |= (uint64_t)1 << (sig - 1);
		p += len;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == ',')
			p++;
	}
	if (n == 0) {
		snprintf(why, why_size, "no signal named");
		return -EINVAL;
	}
	return 0;
}
