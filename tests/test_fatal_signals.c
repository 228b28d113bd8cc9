/* SPDX-License-Identifier: MIT */
/*
 * Fatal signals and the snapshot signal (cfg.signals, cfg.snapshot_signal): a
 * process killed by a signal it did not handle leaves a finished trace, then ends as
 * it would have; a handler of the program's is chained after a flush; rtr_stop()
 * puts back what the program had.
 *
 * Each case forks a child that starts the recorder with signals in its config,
 * records a known number of events (the last ones inside a slice left open), tells
 * the parent through a pipe, and is killed (or faults, or aborts). The parent checks
 * how the child ended, that the file is strict JSON with a final end marker naming
 * the signal, and that every event recorded before the signal is in it. Children
 * arm alarm(): a hang ends in SIGALRM, which fails the case, never the suite.
 */
#include <ringtrace.h>

#include "child.h"
#include "test_util.h"
#include "trace_read.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#if TU_UNDER_ASAN
/* SIGSEGV must reach the recorder's handler (and the default action after it), not
 * AddressSanitizer's report. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return TU_ASAN_OWN_SEGV;
}
#endif

#define CAT   "fatal"
#define KNOWN 500 /* events each child records before the signal */
/* A child's guard against a hang: half the parent's, so that the child's SIGALRM, not
 * the parent's kill, reports it. Never a measure of speed: a child is done in
 * milliseconds, yet a loaded 2-core machine under a sanitizer stalls it for seconds. */
#define ALARM_S	    (TU_CHILD_TIMEOUT_S / 2)
#define STOP_MS	    5000u
#define LOOP_BEFORE 1000 /* events the looping thread records before the kill */

static char path[4096];
static char copy_path[4096];

static void make_path(const char *name)
{
	tu_own_file(path, sizeof(path), "fatal", name, ".json");
}

/* ------------------------------------------------------------------------- */
/* The child's side                                                           */

static void child_start(const char *signals, const char *snapshot)
{
	struct rtr_config cfg;
	struct rlimit no_core = {0, 0};

	alarm(ALARM_S);
	setrlimit(RLIMIT_CORE, &no_core); /* WTERMSIG is checked, not the core */
	/* cmocka catches these to fail a test and go on to the next: the child's
	 * program has the default, or a handler of its own it sets itself */
	static const int caught[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGSYS, SIGABRT};
	for (size_t i = 0; i < sizeof(caught) / sizeof(caught[0]); i++)
		signal(caught[i], SIG_DFL);
	rtr_config_init(&cfg);
	cfg.path = path;
	cfg.signals = signals;
	cfg.snapshot_signal = snapshot;
	cfg.stop_timeout_ms = STOP_MS;
	cfg.ring_bytes = (size_t)4 << 20;
	if (rtr_start(&cfg) != 0)
		_exit(90);
}

/* A closed slice, then KNOWN instants with two arguments inside a slice left open. */
static void record_known(void)
{
	rtr_begin(CAT, "done");
	rtr_end(CAT, "done");
	rtr_begin(CAT, "open");
	for (int64_t i = 0; i < KNOWN; i++)
		rtr_instant_v(CAT, "known", RTR_ARG_I64("i", i), RTR_ARG_I64("sq", i * i));
}

static void tell_parent(int fd)
{
	if (write(fd, "r", 1) != 1)
		_exit(91);
}

/* Wait for the signal that ends the child; the alarm ends a hang. */
static _Noreturn void wait_for_the_end(void)
{
	for (;;)
		pause();
}

/* ------------------------------------------------------------------------- */
/* The parent's side                                                          */

struct child {
	pid_t pid;
	int fd; /* the child's end of the pipe writes; this one reads */
};

static struct child spawn(void (*body)(int fd))
{
	struct child c;
	int p[2];

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	c.pid = tu_fork();
	if (c.pid == 0) {
		close(p[0]);
		body(p[1]);
		_exit(0);
	}
	close(p[1]);
	c.fd = p[0];
	return c;
}

/* The child's "ready": its known events are recorded. */
static void wait_ready(struct child *c)
{
	struct pollfd pf = {c->fd, POLLIN, 0};
	char b;

	if (poll(&pf, 1, TU_CHILD_TIMEOUT_S * 1000) != 1 || read(c->fd, &b, 1) != 1) {
		kill(c->pid, SIGKILL);
		int st = tu_wait_child(c->pid, TU_CHILD_TIMEOUT_S);
		fail_msg("the child did not get ready (status %#x)", st);
	}
}

static int reap(struct child *c)
{
	int status = tu_wait_child(c->pid, TU_CHILD_TIMEOUT_S);

	close(c->fd);
	return status;
}

static void expect_killed_by(int status, int sig)
{
	if (!WIFSIGNALED(status) || WTERMSIG(status) != sig)
		fail_msg("child %s %d, expected to die of signal %d (%s)",
			 WIFEXITED(status) ? "exited with" : "died of signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), sig,
			 strsignal(sig));
}

/* What a walk of a trace found. */
struct walk {
	char err[256];
	int64_t known, loop, loop_last;
	int done_seen, open_seen, ends, end_final;
	/* "open": its X's start, end and "open" argument (1: true); or seen as a B */
	int open_x, open_marked, open_b;
	uint64_t open_start, open_end, first_known_ts;
	uint64_t open_latest; /* its thread's latest time before the X */
	int64_t tids[8];      /* the threads' latest times, for events of CAT */
	uint64_t latest[8];
	int ntids;
	int64_t end_signal, end_dropped; /* -1: no "signal" arg */
};

static int visit(const struct tt_event *e, void *ctx)
{
	struct walk *w = ctx;

	if (tu_is(e->cat, CAT) && e->has_ts) {
		int k = 0;
		while (k < w->ntids && w->tids[k] != e->tid)
			k++;
		TU_WALK_CHECK(w, e, k < 8, "more than 8 threads");
		if (k == w->ntids)
			w->tids[w->ntids++] = e->tid;
		if (e->ts_ns + e->dur_ns > w->latest[k])
			w->latest[k] = e->ts_ns + e->dur_ns;
	}
	if (tu_is(e->name, "known")) {
		int64_t i = tu_arg_int(e, "i");
		if (w->known == 0)
			w->first_known_ts = e->ts_ns;
		TU_WALK_CHECK(w, e, i == w->known, "known event %lld, expected %lld", (long long)i,
			      (long long)w->known);
		TU_WALK_CHECK(w, e, tu_arg_int(e, "sq") == i * i, "known event %lld: torn args",
			      (long long)i);
		w->known++;
	} else if (tu_is(e->name, "loop")) {
		int64_t i = tu_arg_int(e, "i");
		TU_WALK_CHECK(w, e, i > w->loop_last, "loop event %lld after %lld", (long long)i,
			      (long long)w->loop_last);
		TU_WALK_CHECK(w, e,
			      tu_arg_int(e, "i2") == 2 * i && tu_arg_int(e, "i3") == 3 * i &&
				      tt_arg(e, "s") != NULL && tu_is(tt_arg(e, "s")->s, "loop"),
			      "loop event %lld: torn args", (long long)i);
		w->loop_last = i;
		w->loop++;
	} else if (tu_is(e->name, "done")) {
		w->done_seen = 1;
	} else if (tu_is(e->name, "open")) {
		TU_WALK_CHECK(w, e, tu_is(e->ph, "X") || tu_is(e->ph, "B"), "open as %s", e->ph);
		TU_WALK_CHECK(w, e, !w->open_seen, "open twice");
		w->open_seen = 1;
		w->open_b = tu_is(e->ph, "B");
		w->open_x = tu_is(e->ph, "X");
		const struct tt_arg *open = tt_arg(e, "open");
		w->open_marked = open != NULL && open->type == TT_BOOL && open->b;
		w->open_start = e->ts_ns;
		w->open_end = e->ts_ns + e->dur_ns;
		for (int k = 0; k < w->ntids; k++)
			if (w->tids[k] == e->tid)
				w->open_latest = w->latest[k];
	} else if (tu_is(e->name, "ringtrace: end")) {
		const struct tt_arg *final = tt_arg(e, "final");
		const struct tt_arg *sig = tt_arg(e, "signal");
		w->ends++;
		w->end_final = final != NULL && final->type == TT_BOOL && final->b;
		w->end_signal = sig != NULL && sig->type == TT_INT ? sig->i : -1;
		w->end_dropped = tu_arg_int(e, "dropped");
	}
	return 0;
}

/* Walk the trace at p: it must be strict JSON and complete (its "]" in place). */
static void walk(const char *p, struct walk *w)
{
	memset(w, 0, sizeof(*w));
	w->loop_last = -1;
	struct tt_trace info = tu_walk(p, TT_CHECK_ESCAPES, visit, w, w->err);
	assert_true(info.complete);
}

/* The small traces through tt_load() too, and its end marker: tu_end_marker(). */
static void load_and_walk(const char *p, struct walk *w)
{
	struct tt_trace t = {0};

	if (tt_load(p, TT_CHECK_ESCAPES, &t) != 0)
		fail_msg("%s", t.error);
	assert_true(t.complete);
	const struct tt_event *end = tu_end_marker(&t);
	assert_non_null(tt_arg(end, "final"));
	tt_free(&t);
	walk(p, w);
}

/* The trace a signal finished: one end marker, final, every known event, both slices
 * (the one left open as an X marked "open", from its B to its thread's latest time),
 * the looping thread's events in order. */
static void check_finished(const struct walk *w, int64_t known)
{
	assert_int_equal(w->ends, 1);
	assert_true(w->end_final);
	assert_int_equal(w->known, known);
	if (known > 0) {
		assert_true(w->done_seen);
		assert_true(w->open_seen);
		assert_true(w->open_x);
		assert_true(w->open_marked);
		assert_true(w->open_start <= w->first_known_ts);
		assert_int_equal(w->open_end, w->open_latest);
	}
	if (w->loop > 0 && w->end_dropped == 0)
		assert_int_equal(w->loop_last + 1, w->loop); /* none missing */
}

/* The end marker names the signal. */
static void check_names_signal(const struct walk *w, int sig)
{
	assert_int_equal(w->end_signal, sig);
}

/* ------------------------------------------------------------------------- */
/* The default disposition: finished, then the default action                 */

static void term_child(int fd)
{
	child_start("TERM,INT,HUP", NULL);
	record_known();
	tell_parent(fd);
	wait_for_the_end();
}

static void sigterm_finishes_the_file_then_ends_the_process(void **state)
{
	(void)state;
	struct walk w;

	make_path("term");
	struct child c = spawn(term_child);
	wait_ready(&c);
	assert_int_equal(kill(c.pid, SIGTERM), 0);
	expect_killed_by(reap(&c), SIGTERM); /* a shell's status 143 */
	load_and_walk(path, &w);
	check_finished(&w, KNOWN);
	check_names_signal(&w, SIGTERM);
}

/* ------------------------------------------------------------------------- */
/* A signal while a thread is inside an event call                            */

static uint64_t loop_count; /* relaxed atomics: a progress count for the main thread */
static int loop_blocks_term;

static void *loop_main(void *arg)
{
	(void)arg;
	if (__atomic_load_n(&loop_blocks_term, __ATOMIC_RELAXED)) {
		sigset_t term;
		sigemptyset(&term);
		sigaddset(&term, SIGTERM);
		pthread_sigmask(SIG_BLOCK, &term, NULL); /* the main thread takes it */
	}
	for (int64_t i = 0;; i++) {
		struct rtr_arg a[4] = {RTR_ARG_I64("i", i), RTR_ARG_I64("i2", 2 * i),
				       RTR_ARG_I64("i3", 3 * i), RTR_ARG_STR_COPY("s", "loop")};
		rtr_instant_args(CAT, "loop", a, 4);
		__atomic_store_n(&loop_count, (uint64_t)i + 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static pthread_t start_loop(int blocks_term, uint64_t before)
{
	pthread_t t;

	__atomic_store_n(&loop_blocks_term, blocks_term, __ATOMIC_RELAXED);
	if (pthread_create(&t, NULL, loop_main, NULL) != 0)
		_exit(92);
	while (__atomic_load_n(&loop_count, __ATOMIC_RELAXED) < before)
		nanosleep(&(struct timespec){0, 100000}, NULL);
	return t;
}

static void loop_main_killed_child(int fd)
{
	child_start("TERM", NULL);
	record_known();
	start_loop(1, LOOP_BEFORE);
	tell_parent(fd);
	wait_for_the_end();
}

static void sigterm_while_another_thread_records(void **state)
{
	(void)state;
	struct walk w;

	make_path("loop-main");
	struct child c = spawn(loop_main_killed_child);
	wait_ready(&c);
	assert_int_equal(kill(c.pid, SIGTERM), 0);
	expect_killed_by(reap(&c), SIGTERM);
	walk(path, &w);
	check_finished(&w, KNOWN);
	assert_true(w.loop >= LOOP_BEFORE);
	check_names_signal(&w, SIGTERM);
}

static void loop_itself_killed_child(int fd)
{
	sigset_t term;

	child_start("TERM", NULL);
	record_known();
	pthread_t t = start_loop(0, LOOP_BEFORE);
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &term, NULL);
	tell_parent(fd);
	/* Most likely inside rtr_instant_args(): the handler runs there, on its ring. */
	pthread_kill(t, SIGTERM);
	wait_for_the_end();
}

static void sigterm_on_the_thread_inside_an_event_call(void **state)
{
	(void)state;
	struct walk w;

	make_path("loop-self");
	struct child c = spawn(loop_itself_killed_child);
	wait_ready(&c);
	expect_killed_by(reap(&c), SIGTERM);
	walk(path, &w);
	check_finished(&w, KNOWN);
	assert_true(w.loop >= LOOP_BEFORE);
	check_names_signal(&w, SIGTERM);
}

/* A writer busy with a large volume when the signal comes. */
static void volume_child(int fd)
{
	child_start("TERM", NULL);
	start_loop(1, tu_scaled(300000, 30000));
	tell_parent(fd);
	wait_for_the_end();
}

static void sigterm_while_the_writer_writes(void **state)
{
	(void)state;
	struct walk w;

	make_path("volume");
	struct child c = spawn(volume_child);
	wait_ready(&c);
	assert_int_equal(kill(c.pid, SIGTERM), 0);
	expect_killed_by(reap(&c), SIGTERM);
	walk(path, &w);
	check_finished(&w, 0);
	assert_true((uint64_t)w.loop >= tu_scaled(300000, 30000) || w.end_dropped > 0);
	print_message("%lld loop events in the file, %lld dropped\n", (long long)w.loop,
		      (long long)w.end_dropped);
	check_names_signal(&w, SIGTERM);
}

/* Two fatal signals on two threads at once: one finish, one end marker. */
static void two_signals_child(int fd)
{
	child_start("TERM,USR1", NULL);
	record_known();
	pthread_t t = start_loop(0, LOOP_BEFORE);
	tell_parent(fd);
	pthread_kill(t, SIGUSR1);
	raise(SIGTERM);
	wait_for_the_end();
}

static void two_fatal_signals_at_once_finish_once(void **state)
{
	(void)state;
	struct walk w;

	make_path("two");
	struct child c = spawn(two_signals_child);
	wait_ready(&c);
	int status = reap(&c);
	assert_true(WIFSIGNALED(status));
	int sig = WTERMSIG(status);
	if (sig != SIGTERM && sig != SIGUSR1)
		fail_msg("died of signal %d", sig);
	walk(path, &w);
	check_finished(&w, KNOWN);
	/* the file names the signal whose finish it was; the process may die of the
	 * other one, which waited for that finish */
	if (w.end_signal != SIGTERM && w.end_signal != SIGUSR1)
		fail_msg("the end marker names signal %lld", (long long)w.end_signal);
}

/* ------------------------------------------------------------------------- */
/* Crashes: a fault, abort()                                                  */

/* A real fault: the store goes to address 0 (UBSan's null check would report it
 * first and halt). */
__attribute__((noinline, no_sanitize("null"))) static void store_through(int *volatile *pp)
{
	**pp = 42;
}

static void segv_child(int fd)
{
	int *volatile p = NULL;

	child_start("TERM,SEGV,BUS,ABRT", NULL);
	record_known();
	tell_parent(fd);
	store_through(&p);
	_exit(93); /* the fault came back and ended the process, or this */
}

static void sigsegv_from_a_fault_finishes_the_file_then_crashes(void **state)
{
	(void)state;
	struct walk w;

	make_path("segv");
	struct child c = spawn(segv_child);
	wait_ready(&c);
	expect_killed_by(reap(&c), SIGSEGV);
	load_and_walk(path, &w);
	check_finished(&w, KNOWN);
	check_names_signal(&w, SIGSEGV);
}

static void sent_segv_child(int fd)
{
	child_start("SEGV", NULL);
	record_known();
	tell_parent(fd);
	wait_for_the_end();
}

/* kill -SEGV: no instruction to fault again; raised again instead. */
static void sigsegv_sent_is_raised_again(void **state)
{
	(void)state;
	struct walk w;

	make_path("segv-sent");
	struct child c = spawn(sent_segv_child);
	wait_ready(&c);
	assert_int_equal(kill(c.pid, SIGSEGV), 0);
	expect_killed_by(reap(&c), SIGSEGV);
	load_and_walk(path, &w);
	check_finished(&w, KNOWN);
	check_names_signal(&w, SIGSEGV);
}

static void abort_child(int fd)
{
	child_start("SEGV,ABRT", NULL);
	record_known();
	tell_parent(fd);
	abort();
}

static void sigabrt_from_abort_finishes_the_file(void **state)
{
	(void)state;
	struct walk w;

	make_path("abrt");
	struct child c = spawn(abort_child);
	wait_ready(&c);
	expect_killed_by(reap(&c), SIGABRT);
	load_and_walk(path, &w);
	check_finished(&w, KNOWN);
	check_names_signal(&w, SIGABRT);
}

/* ------------------------------------------------------------------------- */
/* A handler of the program's: flushed, then chained                          */

struct chain_report {
	int calls, sig, si_signo, si_code, has_uc;
	int copied; /* the handler copied the trace as it was when it ran */
	int start_rc, stop_rc;
	int restored; /* after rtr_stop(), the program's handler is in place again */
};

static volatile sig_atomic_t chain_calls;
static struct chain_report chain_rep;

/* Copy the trace as the handler finds it (async-signal-safe calls only). */
static int copy_trace(void)
{
	char buf[8192];
	int in = open(path, O_RDONLY | O_CLOEXEC);
	int out = open(copy_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ssize_t n;
	int ok = in >= 0 && out >= 0;

	while (ok && (n = read(in, buf, sizeof(buf))) > 0)
		ok = write(out, buf, (size_t)n) == n;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return ok;
}

static void program_handler(int sig, siginfo_t *si, void *uc)
{
	chain_rep.sig = sig;
	chain_rep.si_signo = si != NULL ? si->si_signo : -1;
	chain_rep.si_code = si != NULL ? si->si_code : -1;
	chain_rep.has_uc = uc != NULL;
	chain_rep.copied = copy_trace();
	chain_calls = chain_calls + 1;
}

static void chain_child(int fd)
{
	struct sigaction sa, now;
	sigset_t term, none;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = program_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL) != 0)
		_exit(94);
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &term, NULL); /* taken in sigsuspend() below */
	child_start("TERM", NULL);
	record_known();
	tell_parent(fd);
	sigemptyset(&none);
	while (chain_calls == 0)
		sigsuspend(&none);
	/* The program goes on: the recorder too. */
	for (int64_t i = KNOWN; i < 2 * KNOWN; i++)
		rtr_instant_v(CAT, "known", RTR_ARG_I64("i", i), RTR_ARG_I64("sq", i * i));
	rtr_end(CAT, "open");
	chain_rep.calls = chain_calls;
	chain_rep.stop_rc = rtr_stop();
	sigaction(SIGTERM, NULL, &now);
	chain_rep.restored = (now.sa_flags & SA_SIGINFO) && now.sa_sigaction == program_handler;
	if (write(fd, &chain_rep, sizeof(chain_rep)) != (ssize_t)sizeof(chain_rep))
		_exit(95);
	_exit(0);
}

static void program_handler_is_chained_after_a_flush(void **state)
{
	(void)state;
	struct chain_report rep;
	struct walk w;

	make_path("chain");
	tu_own_file(copy_path, sizeof(copy_path), "fatal", "chain", ".copy.json");
	struct child c = spawn(chain_child);
	wait_ready(&c);
	assert_int_equal(kill(c.pid, SIGTERM), 0);
	assert_int_equal(read(c.fd, &rep, sizeof(rep)), (ssize_t)sizeof(rep));
	tu_expect_exit_0(reap(&c));
	assert_int_equal(rep.calls, 1);
	assert_int_equal(rep.sig, SIGTERM);
	assert_int_equal(rep.si_signo, SIGTERM);
	assert_int_equal(rep.si_code, SI_USER); /* the same siginfo the kernel gave */
	assert_true(rep.has_uc);
	assert_true(rep.copied);
	assert_int_equal(rep.stop_rc, 0);
	assert_true(rep.restored);

	/* The program went on and stopped: a whole trace of everything. */
	load_and_walk(path, &w);
	assert_int_equal(w.ends, 1);
	assert_true(w.end_final);
	assert_int_equal(w.known, 2 * KNOWN);
	assert_true(w.open_x); /* ended by the program: one X, not marked open */
	assert_false(w.open_marked);
	uint64_t open_start = w.open_start;

	/* When its handler ran, the file was flushed: strict JSON, its provisional end
	 * marker after every known event, the slice still open there a B at its time. */
	load_and_walk(copy_path, &w);
	assert_int_equal(w.ends, 1);
	assert_false(w.end_final);
	assert_int_equal(w.known, KNOWN);
	assert_true(w.open_b);
	assert_int_equal(w.open_start, open_start);
	check_names_signal(&w, SIGTERM);
}

/* SA_RESETHAND: the program's handler once, then the default (and the finish). */
static volatile sig_atomic_t oneshot_calls;

static void oneshot_handler(int sig)
{
	(void)sig;
	oneshot_calls = oneshot_calls + 1;
}

static void oneshot_child(int fd)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = oneshot_handler;
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGHUP, &sa, NULL) != 0)
		_exit(94);
	child_start("HUP", NULL);
	record_known();
	raise(SIGHUP);
	if (oneshot_calls != 1)
		_exit(96);
	tell_parent(fd);
	raise(SIGHUP); /* now SIG_DFL: finished, and the process ends */
	_exit(97);
}

static void program_resethand_handler_runs_once(void **state)
{
	(void)state;
	struct walk w;

	make_path("oneshot");
	struct child c = spawn(oneshot_child);
	wait_ready(&c);
	expect_killed_by(reap(&c), SIGHUP);
	load_and_walk(path, &w);
	check_finished(&w, KNOWN);
	check_names_signal(&w, SIGHUP);
}

/* ------------------------------------------------------------------------- */
/* Left alone, put back                                                       */

static void ignored_child(int fd)
{
	struct sigaction now;
	char errlog[4200];

	snprintf(errlog, sizeof(errlog), "%s.stderr", path);
	int efd = open(errlog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (efd < 0 || dup2(efd, STDERR_FILENO) < 0)
		_exit(98);
	signal(SIGTERM, SIG_IGN);
	child_start("TERM", NULL);
	record_known();
	rtr_end(CAT, "open");
	raise(SIGTERM); /* ignored, as before */
	sigaction(SIGTERM, NULL, &now);
	if (now.sa_handler != SIG_IGN)
		_exit(99);
	if (rtr_stop() != 0)
		_exit(100);
	tell_parent(fd);
	_exit(0);
}

static void ignored_signal_is_left_alone(void **state)
{
	(void)state;
	struct walk w;
	char errlog[4200], line[512];
	int told = 0;

	make_path("ignored");
	snprintf(errlog, sizeof(errlog), "%s.stderr", path);
	struct child c = spawn(ignored_child);
	wait_ready(&c);
	tu_expect_exit_0(reap(&c));
	load_and_walk(path, &w);
	assert_true(w.end_final);
	assert_int_equal(w.known, KNOWN);
	assert_int_equal(w.end_signal, -1); /* a stop's end marker names no signal */
	FILE *f = fopen(errlog, "re");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL)
		told += strstr(line, "SIGTERM is ignored") != NULL;
	fclose(f);
	unlink(errlog);
	assert_int_equal(told, 1);
}

static void usr1_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
}

static void hup_handler(int sig)
{
	(void)sig;
}

static void term_replacement(int sig)
{
	(void)sig;
}

static void expect_same_action(int sig, const struct sigaction *was)
{
	struct sigaction now;

	assert_int_equal(sigaction(sig, NULL, &now), 0);
	assert_ptr_equal((void *)now.sa_handler, (void *)was->sa_handler);
	assert_int_equal(now.sa_flags, was->sa_flags);
	for (int s = 1; s < 32; s++)
		assert_int_equal(sigismember(&now.sa_mask, s), sigismember(&was->sa_mask, s));
}

static void stop_puts_back_the_programs_dispositions(void **state)
{
	(void)state;
	struct sigaction usr1, hup, term, was_usr1, was_hup, was_term, was_int, now;
	struct rtr_config cfg;

	memset(&usr1, 0, sizeof(usr1));
	usr1.sa_sigaction = usr1_handler;
	usr1.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&usr1.sa_mask);
	sigaddset(&usr1.sa_mask, SIGUSR2);
	memset(&hup, 0, sizeof(hup));
	hup.sa_handler = hup_handler;
	hup.sa_flags = SA_NODEFER;
	sigemptyset(&hup.sa_mask);
	memset(&term, 0, sizeof(term));
	term.sa_handler = SIG_DFL;
	sigemptyset(&term.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &usr1, &was_usr1), 0);
	assert_int_equal(sigaction(SIGHUP, &hup, &was_hup), 0);
	assert_int_equal(sigaction(SIGTERM, &term, &was_term), 0);
	assert_int_equal(sigaction(SIGINT, NULL, &was_int), 0);
	struct sigaction set_usr1, set_hup, set_term;
	sigaction(SIGUSR1, NULL, &set_usr1);
	sigaction(SIGHUP, NULL, &set_hup);
	sigaction(SIGTERM, NULL, &set_term);

	make_path("restore");
	rtr_config_init(&cfg);
	cfg.path = path;
	cfg.signals = "TERM,INT,HUP,USR1";
	assert_int_equal(rtr_start(&cfg), 0);
	assert_int_equal(sigaction(SIGUSR1, NULL, &now), 0);
	assert_true(now.sa_sigaction != usr1_handler); /* ours, chaining to it */
	assert_true(now.sa_flags & SA_RESTART);	       /* the program's flags kept */
	assert_true(sigismember(&now.sa_mask, SIGUSR2));
	assert_int_equal(sigaction(SIGHUP, NULL, &now), 0);
	assert_true(now.sa_flags & SA_NODEFER);
	assert_false(now.sa_flags & SA_RESTART);
	assert_int_equal(sigaction(SIGTERM, NULL, &now), 0);
	assert_true(now.sa_handler != SIG_DFL);
	/* The program replaces ours for SIGINT: the stop leaves its handler. */
	struct sigaction repl;
	memset(&repl, 0, sizeof(repl));
	repl.sa_handler = term_replacement;
	sigemptyset(&repl.sa_mask);
	assert_int_equal(sigaction(SIGINT, &repl, NULL), 0);
	struct sigaction set_int;
	sigaction(SIGINT, NULL, &set_int);
	assert_int_equal(rtr_stop(), 0);

	expect_same_action(SIGUSR1, &set_usr1);
	expect_same_action(SIGHUP, &set_hup);
	expect_same_action(SIGTERM, &set_term);
	expect_same_action(SIGINT, &set_int);

	sigaction(SIGUSR1, &was_usr1, NULL);
	sigaction(SIGHUP, &was_hup, NULL);
	sigaction(SIGTERM, &was_term, NULL);
	sigaction(SIGINT, &was_int, NULL);
}

/* A forked child has no session: the program's dispositions, its own course. */
static void fork_grandchild_child(int fd)
{
	struct sigaction now;

	child_start("TERM", NULL);
	record_known();
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0)
		_exit(101);
	if (pid == 0) {
		sigaction(SIGTERM, NULL, &now);
		if (now.sa_handler != SIG_DFL)
			_exit(102);
		raise(SIGTERM);
		_exit(103);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFSIGNALED(status) || WTERMSIG(status) != SIGTERM)
		_exit(104);
	tell_parent(fd);
	wait_for_the_end();
}

static void forked_child_takes_the_programs_course(void **state)
{
	(void)state;
	struct walk w;

	make_path("fork");
	struct child c = spawn(fork_grandchild_child);
	wait_ready(&c);
	assert_int_equal(kill(c.pid, SIGTERM), 0);
	expect_killed_by(reap(&c), SIGTERM);
	load_and_walk(path, &w);
	check_finished(&w, KNOWN); /* the child's death did not touch the parent's file */
	check_names_signal(&w, SIGTERM);
}

/* ------------------------------------------------------------------------- */
/* The snapshot signal                                                        */

static volatile sig_atomic_t usr2_calls;

static void usr2_handler(int sig)
{
	if (sig == SIGUSR2)
		usr2_calls = usr2_calls + 1;
}

struct snap_report {
	int calls, stop_rc, flushed;
};

/* Does the trace on disk hold every known event now (a flush or snapshot)? */
static int known_on_disk(void)
{
	struct tt_trace t = {0};
	int64_t n = 0;

	if (tt_load(path, TT_CHECK_ESCAPES, &t) == 0)
		for (size_t i = 0; i < t.n; i++)
			n += tu_is(t.ev[i].name, "known");
	tt_free(&t);
	return n == KNOWN;
}

static void snapshot_child(int fd)
{
	struct sigaction sa;
	struct snap_report rep = {0};
	struct rtr_config cfg;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = usr2_handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR2, &sa, NULL) != 0)
		_exit(94);
	alarm(ALARM_S);
	rtr_config_init(&cfg);
	cfg.path = path;
	cfg.snapshot_signal = "USR2";
	cfg.flush_ms = 60000; /* only the signal flushes */
	if (rtr_start(&cfg) != 0)
		_exit(90);
	record_known();
	raise(SIGUSR2);
	rep.calls = usr2_calls;
	/* Stream mode without rotation: the snapshot signal is a flush. Wait for it on
	 * the file, up to half the alarm (then the parent reports it not flushed). */
	uint64_t t0 = tu_mono_ns();
	while (!(rep.flushed = known_on_disk())) {
		if (tu_mono_ns() - t0 > ALARM_S / 2 * 1000000000ull)
			break;
		nanosleep(&(struct timespec){0, 5 * 1000 * 1000}, NULL);
	}
	rep.stop_rc = rtr_stop();
	if (write(fd, &rep, sizeof(rep)) != (ssize_t)sizeof(rep))
		_exit(95);
	_exit(0);
}

static void snapshot_signal_chains_and_never_ends_the_process(void **state)
{
	(void)state;
	struct snap_report rep;
	struct walk w;

	make_path("snapshot");
	struct child c = spawn(snapshot_child);
	assert_int_equal(read(c.fd, &rep, sizeof(rep)), (ssize_t)sizeof(rep));
	tu_expect_exit_0(reap(&c));
	assert_int_equal(rep.calls, 1);
	assert_int_equal(rep.stop_rc, 0);
	load_and_walk(path, &w);
	assert_true(w.end_final);
	assert_int_equal(w.known, KNOWN);
	/* Needs the writer's part: the snapshot signal flushes in stream mode. */
	assert_true(rep.flushed);
}

static void snapshot_default_child(int fd)
{
	struct rtr_config cfg;

	alarm(ALARM_S);
	signal(SIGUSR2, SIG_DFL);
	rtr_config_init(&cfg);
	cfg.path = path;
	cfg.snapshot_signal = "USR2";
	if (rtr_start(&cfg) != 0)
		_exit(90);
	record_known();
	raise(SIGUSR2); /* its default would end the process: not while ours */
	rtr_end(CAT, "open");
	if (rtr_stop() != 0)
		_exit(100);
	tell_parent(fd);
	_exit(0);
}

static void snapshot_signal_without_a_handler_does_not_kill(void **state)
{
	(void)state;
	struct walk w;

	make_path("snapshot-dfl");
	struct child c = spawn(snapshot_default_child);
	wait_ready(&c);
	tu_expect_exit_0(reap(&c));
	load_and_walk(path, &w);
	assert_true(w.end_final);
	assert_int_equal(w.known, KNOWN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(sigterm_finishes_the_file_then_ends_the_process,
					  tu_teardown),
		cmocka_unit_test_teardown(sigterm_while_another_thread_records, tu_teardown),
		cmocka_unit_test_teardown(sigterm_on_the_thread_inside_an_event_call, tu_teardown),
		cmocka_unit_test_teardown(sigterm_while_the_writer_writes, tu_teardown),
		cmocka_unit_test_teardown(two_fatal_signals_at_once_finish_once, tu_teardown),
		cmocka_unit_test_teardown(sigsegv_from_a_fault_finishes_the_file_then_crashes,
					  tu_teardown),
		cmocka_unit_test_teardown(sigsegv_sent_is_raised_again, tu_teardown),
		cmocka_unit_test_teardown(sigabrt_from_abort_finishes_the_file, tu_teardown),
		cmocka_unit_test_teardown(program_handler_is_chained_after_a_flush, tu_teardown),
		cmocka_unit_test_teardown(program_resethand_handler_runs_once, tu_teardown),
		cmocka_unit_test_teardown(ignored_signal_is_left_alone, tu_teardown),
		cmocka_unit_test_teardown(stop_puts_back_the_programs_dispositions, tu_teardown),
		cmocka_unit_test_teardown(forked_child_takes_the_programs_course, tu_teardown),
		cmocka_unit_test_teardown(snapshot_signal_chains_and_never_ends_the_process,
					  tu_teardown),
		cmocka_unit_test_teardown(snapshot_signal_without_a_handler_does_not_kill,
					  tu_teardown),
	};
	tu_filter_from_env();
	return cmocka_run_group_tests_name("fatal_signals", tests, NULL, NULL);
}
