/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the integration tests: see test_util.h.
 */
#include "test_util.h"

#include <ringtrace.h>

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <liburing.h>

#define TU_MAX_OWNED 8

/* Heap blocks and files of the running test, released by tu_release(). */
static void *owned[TU_MAX_OWNED];
static char owned_files[TU_MAX_OWNED][4200];
static int nowned_files;

uint64_t tu_scaled(uint64_t n, uint64_t min)
{
	const char *env = getenv("RTR_TEST_SCALE");
	double f = TU_UNDER_SANITIZER ? 0.25 : 1.0;

	if (env != NULL && strtod(env, NULL) > 0)
		f = strtod(env, NULL);
	double v = (double)n * f;
	return v < (double)min ? min : (uint64_t)v;
}

uint64_t tu_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

const char *tu_tmpdir(void)
{
	const char *dir = getenv("RTR_TEST_TMPDIR");

	return dir ? dir : "/tmp";
}

void tu_temp_path(char *out, size_t size, const char *group, const char *name, const char *ext)
{
	snprintf(out, size, "%s/%s-%s-%d%s", tu_tmpdir(), group, name, (int)getpid(), ext);
	unlink(out);
}

void tu_own_file(char *out, size_t size, const char *group, const char *name, const char *ext)
{
	tu_temp_path(out, size, group, name, ext);
	for (int i = 0; i < nowned_files; i++)
		if (strcmp(owned_files[i], out) == 0)
			return;
	assert_true(nowned_files < TU_MAX_OWNED);
	snprintf(owned_files[nowned_files++], sizeof(owned_files[0]), "%s", out);
}

void *tu_own(size_t n, size_t size)
{
	for (size_t i = 0; i < TU_MAX_OWNED; i++) {
		if (owned[i] == NULL) {
			owned[i] = calloc(n, size);
			assert_non_null(owned[i]);
			return owned[i];
		}
	}
	fail_msg("too many owned blocks");
	return NULL;
}

void tu_release(void)
{
	for (int i = 0; i < nowned_files; i++)
		if (getenv("RTR_TEST_KEEP") == NULL)
			unlink(owned_files[i]);
	nowned_files = 0;
	for (size_t i = 0; i < TU_MAX_OWNED; i++) {
		free(owned[i]);
		owned[i] = NULL;
	}
}

int tu_teardown(void **state)
{
	(void)state;
	rtr_stop();
	tu_release();
	return 0;
}

void tu_start(const char *path, int io, int on_full, size_t ring_bytes)
{
	struct rtr_config cfg;

	rtr_config_init(&cfg);
	cfg.path = path;
	if (io != TU_IO_DEFAULT)
		cfg.io = io;
	cfg.on_full = on_full;
	cfg.ring_bytes = ring_bytes;
	assert_int_equal(rtr_start(&cfg), 0);
}

uint64_t tu_file_size(const char *path)
{
	struct stat sb;

	assert_int_equal(stat(path, &sb), 0);
	return (uint64_t)sb.st_size;
}

int tu_is(const char *s, const char *want)
{
	return s != NULL && strcmp(s, want) == 0;
}

int64_t tu_arg_int(const struct tt_event *e, const char *key)
{
	const struct tt_arg *a = tt_arg(e, key);

	return a != NULL && a->type == TT_INT && (a->fits & TT_FITS_I64) ? a->i : INT64_MIN;
}

struct tt_trace tu_walk(const char *path, int flags, tt_visit_fn fn, void *ctx, const char *err)
{
	struct tt_trace info;
	int rc = tt_foreach(path, flags, fn, ctx, &info);

	if (err[0] != '\0')
		fail_msg("%s: %s", path, err);
	if (rc != 0)
		fail_msg("%s", info.error);
	return info;
}

void tu_filter_from_env(void)
{
	const char *filter = getenv("RTR_TEST_FILTER");

	if (filter != NULL)
		cmocka_set_test_filter(filter);
}

size_t tu_events_of(const struct tt_trace *t, const struct tt_event **out, size_t max)
{
	size_t n = 0;

	for (size_t i = 1; i + 1 < t->n; i++) {
		if (strcmp(t->ev[i].ph, "M") == 0)
			continue;
		assert_true(n < max);
		out[n++] = &t->ev[i];
	}
	return n;
}

const struct tt_event *tu_end_marker(const struct tt_trace *t)
{
	assert_true(t->n > 0);
	const struct tt_event *last = &t->ev[t->n - 1];
	assert_non_null(last->name);
	assert_string_equal(last->name, "ringtrace: end");
	return last;
}

int tu_io_uring_works(void)
{
	struct io_uring ring;

	if (io_uring_queue_init(8, &ring, 0) < 0)
		return 0;
	io_uring_queue_exit(&ring);
	return 1;
}

const int tu_io_methods[2] = {RTR_IO_URING, RTR_IO_SYNC};

int tu_io_of(const void *prestate)
{
	assert_non_null(prestate); /* registered with TU_IO_CASES */
	return *(const int *)prestate;
}

void tu_skip_unless_io_works(int io)
{
	if (io == RTR_IO_URING && !tu_io_uring_works()) {
		print_message("io_uring cannot be set up here\n");
		skip();
	}
}

static char *trap_page;
static size_t trap_bytes;
static void (*trap_fn)(void);
static char trap_fill[64];
static size_t trap_fill_len;
static volatile sig_atomic_t trap_hits;
static struct sigaction trap_old;

static void on_trap(int sig, siginfo_t *si, void *uc)
{
	char *addr = si->si_addr;

	(void)uc;
	if (addr < trap_page || addr >= trap_page + trap_bytes) {
		signal(sig, SIG_DFL); /* a real crash: let it happen */
		return;
	}
	trap_hits++;
	trap_fn();
	mprotect(trap_page, trap_bytes, PROT_READ | PROT_WRITE);
	if (trap_fill_len > 0)
		memcpy(trap_page, trap_fill, trap_fill_len);
}

void *tu_trap_arm(void (*on_fault)(void), const void *fill, size_t len)
{
	struct sigaction sa;

	assert_true(len <= sizeof(trap_fill));
	if (len > 0)
		memcpy(trap_fill, fill, len);
	trap_fill_len = len;

	trap_bytes = (size_t)sysconf(_SC_PAGESIZE);
	trap_page = mmap(NULL, trap_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(trap_page != MAP_FAILED);
	trap_fn = on_fault;
	trap_hits = 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGSEGV, &sa, &trap_old), 0);
	return trap_page;
}

int tu_trap_hits(void)
{
	return trap_hits;
}

void tu_trap_disarm(void)
{
	sigaction(SIGSEGV, &trap_old, NULL);
	munmap(trap_page, trap_bytes);
	trap_page = NULL;
}

char *tu_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 4096, n = 0;
	char *p;

	if (f == NULL)
		fail_msg("cannot read %s: %s", path, strerror(errno));
	p = malloc(cap + 1);
	assert_non_null(p);
	for (;;) {
		size_t got = fread(p + n, 1, cap - n, f);

		n += got;
		if (n < cap)
			break;
		cap *= 2;
		p = realloc(p, cap + 1);
		assert_non_null(p);
	}
	fclose(f);
	p[n] = '\0';
	if (len != NULL)
		*len = n;
	return p;
}
