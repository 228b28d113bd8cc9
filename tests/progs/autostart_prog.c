/* SPDX-License-Identifier: MIT */
/*
 * An unmodified program for test_autostart: it does not link libringtrace, and runs
 * under LD_PRELOAD=libringtrace.so RINGTRACE_AUTOSTART=1. It finds the event calls
 * with dlsym(RTLD_DEFAULT) only to leave events the test can count (a program that
 * finds none records nothing and exits 3).
 *
 *	autostart_prog events N		N instants "as-<i>", then exit without rtr_stop()
 *	autostart_prog fork N		fork; the child records N instants and exits; the
 *					parent waits, then records N instants
 *	autostart_prog adopt N		rtr_start() == 0 (adopts), a second one -EBUSY, N
 *					instants, rtr_stop() == 0, N more (not recorded)
 *	autostart_prog module N		a module's start, rtr__start_module(), -EBUSY twice
 *					(it does not take the session over), N instants,
 *					then as adopt: rtr_start() == 0, N instants,
 *					rtr_stop() == 0, N more (not recorded)
 *
 * Exit status 0 when every call returned what it should, else the step that failed.
 */
#define _GNU_SOURCE
#include <ringtrace.h>

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void (*instant_copy)(const char *, const char *);
static int (*start)(const struct rtr_config *);
static int (*stop)(void);
static int (*start_module)(const struct rtr_config *);

static void record(int n, const char *prefix)
{
	char name[32];

	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s-%d", prefix, i);
		instant_copy("autostart", name);
	}
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	int n = atoi(argv[2]);
	*(void **)&instant_copy = dlsym(RTLD_DEFAULT, "rtr_instant_copy");
	*(void **)&start = dlsym(RTLD_DEFAULT, "rtr_start");
	*(void **)&stop = dlsym(RTLD_DEFAULT, "rtr_stop");
	*(void **)&start_module = dlsym(RTLD_DEFAULT, "rtr__start_module");
	if (instant_copy == NULL || start == NULL || stop == NULL || start_module == NULL)
		return 3;

	if (strcmp(argv[1], "events") == 0) {
		record(n, "as");
		return 0; /* the exit handler finishes the file */
	}
	if (strcmp(argv[1], "fork") == 0) {
		pid_t pid = fork();
		int status;
		if (pid < 0)
			return 4;
		if (pid == 0) {
			record(n, "child");
			exit(0); /* runs the exit handlers: nothing to finish here */
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			return 5;
		record(n, "as");
		return 0;
	}
	if (strcmp(argv[1], "module") == 0) {
		if (start_module(NULL) != -EBUSY || start_module(NULL) != -EBUSY)
			return 9;
		record(n, "module");
	}
	if (strcmp(argv[1], "adopt") == 0 || strcmp(argv[1], "module") == 0) {
		if (start(NULL) != 0)
			return 6;
		if (start(NULL) != -EBUSY)
			return 7;
		record(n, "as");
		if (stop() != 0)
			return 8;
		record(n, "late");
		return 0;
	}
	return 2;
}
