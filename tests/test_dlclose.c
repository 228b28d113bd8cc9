/* SPDX-License-Identifier: MIT */
/*
 * A host that loads libringtrace.so as a plugin (ctypes, cffi, dlopen'd
 * instrumentation) and unloads it: start, record from a thread that stays alive,
 * stop, dlclose(), then let the thread exit. Its ring's TLS destructor runs at that
 * exit, so the library's code must still be mapped.
 *
 * This program does not link the library: RTR_TEST_LIBRINGTRACE is the path of the
 * built shared object, and every call goes through dlsym(). The scenario runs in a
 * forked child, whose exit status the test checks; the parent then reads the trace.
 */
#include <ringtrace.h>

#include "trace_read.h"

#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define EVENTS 100

struct lib {
	void (*config_init)(struct rtr_config *);
	int (*start)(const struct rtr_config *);
	int (*stop)(void);
	void (*instant_copy)(const char *, const char *);
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int recorded, unloaded; /* under lock */
static struct lib lib;

static void *recording_thread(void *arg)
{
	char name[32];

	(void)arg;
	for (int i = 0; i < EVENTS; i++) {
		snprintf(name, sizeof(name), "dl-%d", i);
		lib.instant_copy("dl", name);
	}
	pthread_mutex_lock(&lock);
	recorded = 1;
	pthread_cond_broadcast(&cond);
	while (!unloaded)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	return NULL; /* the ring's TLS destructor runs now, after dlclose() */
}

/* The child: 0 when every step worked, else the number of the step that failed. */
static int run_child(const char *path)
{
	struct rtr_config cfg;
	pthread_t th;
	void *h = dlopen(RTR_TEST_LIBRINGTRACE, RTLD_NOW | RTLD_LOCAL);

	if (h == NULL) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	*(void **)&lib.config_init = dlsym(h, "rtr_config_init");
	*(void **)&lib.start = dlsym(h, "rtr_start");
	*(void **)&lib.stop = dlsym(h, "rtr_stop");
	*(void **)&lib.instant_copy = dlsym(h, "rtr_instant_copy");
	if (!lib.config_init || !lib.start || !lib.stop || !lib.instant_copy)
		return 2;
	lib.config_init(&cfg);
	cfg.path = path;
	if (lib.start(&cfg) != 0)
		return 3;
	if (pthread_create(&th, NULL, recording_thread, NULL) != 0)
		return 4;
	pthread_mutex_lock(&lock);
	while (!recorded)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	if (lib.stop() != 0)
		return 5;
	if (dlclose(h) != 0)
		return 6;
	pthread_mutex_lock(&lock);
	unloaded = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	if (pthread_join(th, NULL) != 0)
		return 7;
	return 0;
}

struct seen {
	int n;
	unsigned char got[EVENTS];
};

static int count_event(const struct tt_event *ev, void *ctx)
{
	struct seen *s = ctx;
	int i;

	if (ev->name == NULL || ev->cat == NULL || strcmp(ev->cat, "dl") != 0)
		return 0;
	if (sscanf(ev->name, "dl-%d", &i) == 1 && i >= 0 && i < EVENTS && !s->got[i]) {
		s->got[i] = 1;
		s->n++;
	}
	return 0;
}

static void thread_exits_after_dlclose_issue10(void **state)
{
	char path[4096];
	const char *dir = getenv("RTR_TEST_TMPDIR");
	struct tt_trace info;
	struct seen seen = {0};
	int status;

	(void)state;
	snprintf(path, sizeof(path), "%s/dlclose-%d.json", dir ? dir : "/tmp", (int)getpid());
	unlink(path);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* cmocka catches these in the parent's test; the child dies of them */
		signal(SIGSEGV, SIG_DFL);
		signal(SIGBUS, SIG_DFL);
		signal(SIGILL, SIG_DFL);
		_exit(run_child(path));
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		fail_msg("the child died of signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);

	int rc = tt_foreach(path, 0, count_event, &seen, &info);
	if (rc != 0)
		fail_msg("%s", info.error);
	assert_true(info.complete);
	assert_int_equal(seen.n, EVENTS);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(thread_exits_after_dlclose_issue10),
	};
	return cmocka_run_group_tests_name("dlclose", tests, NULL, NULL);
}
