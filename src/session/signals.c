/* SPDX-License-Identifier: MIT */
/*
 * Signals the recorder handles for the program: see signals.h.
 *
 * The table. rtr__signals_install() reads the program's disposition of each signal
 * into slots[] and only then installs ours; slots[] is not written again until the
 * next install, so a handler reads it without a lock. A fatal signal the program
 * left at SIG_DFL is finished and re-raised; one with a handler of the program's is
 * flushed and chained, and ours is installed with that handler's mask, SA_RESTART and
 * SA_NODEFER, so the program's handler runs as the kernel would have run it (the
 * flush before it is reentrant). SA_RESETHAND is ours to play: the first delivery
 * calls the program's handler, later ones find SIG_DFL (the trace is then finished).
 * Always SA_ONSTACK: a SIGSEGV of a stack overflow runs on the program's
 * sigaltstack, if it has one.
 *
 * Who may act. The handlers act for the session only while `armed` is set and the
 * process is the one that installed them: a child after fork() has no writer, and
 * until its fork handler puts the program's dispositions back, ours only pass the
 * signal on (chain, or take the default course).
 *
 * One finish. Several threads may take fatal signals at once; an exchange on
 * `finishing` lets one of them finish the file. The others wait for it, bounded by
 * its own wait, then take their default course; by then the first has ended the
 * process, as a rule.
 *
 * Everything a handler calls is async-signal-safe: sigaction, pthread_sigmask,
 * raise, nanosleep, getpid, write, and the writer's signal entry points (atomics and
 * futexes). No lock, no malloc, no stdio; errno is saved and restored.
 */
#include "session/signals.h"

#include "common/atomic.h"
#include "session/signal_names.h"
#include "writer/writer.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------------- */
/* The handlers                                                               */

#define MAX_SIG 64

struct slot {
	struct sigaction prog; /* the program's disposition at install; install only */
	uint32_t reset;	       /* its SA_RESETHAND handler had its one call (exchange) */
};

static struct slot slots[MAX_SIG + 1];
static uint64_t installed; /* signals that have ours; under the lifecycle lock */
static uint64_t told;	   /* signals said on stderr to be left alone; same */
/* Written by install before R1, read by the handlers after A1. */
static pid_t owner;
static unsigned finish_ms;
static sigset_t fatal_set;
static uint32_t armed;	   /* the handlers act for the session (R1/A1) */
static uint32_t finishing; /* a fatal handler has the finish: no second one */
static uint32_t finished;  /* ... and it is over (R2/A2) */

static void on_fatal(int sig, siginfo_t *si, void *uc);
static void on_snapshot(int sig, siginfo_t *si, void *uc);

static int is_default(const struct sigaction *sa)
{
	return sa->sa_handler == SIG_DFL; /* sa_sigaction shares the storage */
}

static int is_ignored(const struct sigaction *sa)
{
	return sa->sa_handler == SIG_IGN;
}

static int is_ours(const struct sigaction *sa)
{
	return (sa->sa_flags & SA_SIGINFO) &&
	       (sa->sa_sigaction == on_fatal || sa->sa_sigaction == on_snapshot);
}

/* Is the default action of sig to end the process (not to ignore it, or stop)? */
static int ends_process(int sig)
{
	switch (sig) {
	case SIGCHLD:
	case SIGCONT:
	case SIGURG:
	case SIGWINCH:
	case SIGTSTP:
	case SIGTTIN:
	case SIGTTOU:
		return 0;
	default:
		return 1;
	}
}

/* A fault of the interrupted instruction, which faults again when the handler
 * returns? si_code > 0 comes from the kernel (SI_USER, SI_QUEUE, SI_TKILL are <= 0);
 * a memory error reported ahead of use (BUS_MCEERR_AO) is no instruction's. */
static int from_fault(int sig, const siginfo_t *si)
{
	if (sig != SIGSEGV && sig != SIGBUS && sig != SIGILL && sig != SIGFPE)
		return 0;
	return si != NULL && si->si_code > 0 && !(sig == SIGBUS && si->si_code == BUS_MCEERR_AO);
}

/* "ringtrace: SIG<name><what>" on stderr, in one write. */
static void say(int sig, const char *what)
{
	const char *name = rtr__signal_name(sig);
	char buf[160];
	size_t n = 0;

	for (const char *p = "ringtrace: SIG"; *p != '\0'; p++)
		buf[n++] = *p;
	for (const char *p = name != NULL ? name : "?"; *p != '\0'; p++)
		buf[n++] = *p;
	for (const char *p = what; *p != '\0' && n < sizeof(buf); p++)
		buf[n++] = *p;
	ssize_t r = write(STDERR_FILENO, buf, n);
	(void)r; /* nothing to do about it in a handler */
}

/* Do the handlers act for a session of this process? Call first: it orders the
 * reads of the table after install's writes. */
static int live(void)
{
	/* A1: pairs with R1 in rtr__signals_install(); slots[], owner, finish_ms are set */
	return rtr_atomic_load_acquire(&armed) && owner == getpid();
}

/* What the program's disposition of sig is at this delivery: its SA_RESETHAND
 * handler gets one call (one delivery of several at once, as the kernel resets the
 * disposition under its lock), SIG_DFL from then on. */
static void program_action(int sig, struct sigaction *out)
{
	struct slot *s = &slots[sig];

	*out = s->prog;
	if ((out->sa_flags & SA_RESETHAND) && !is_default(out) && !is_ignored(out) &&
	    rtr_atomic_exchange_acq_rel(&s->reset, 1) != 0) { /* a flag; nothing behind it */
		out->sa_handler = SIG_DFL;
		out->sa_flags = 0;
	}
}

static void call_program(int sig, siginfo_t *si, void *uc, const struct sigaction *prog)
{
	if (prog->sa_flags & SA_SIGINFO)
		prog->sa_sigaction(sig, si, uc);
	else
		prog->sa_handler(sig);
}

/* Let sig take its default course: SIG_DFL back, then a fault returns to the
 * instruction, which faults again (the core shows where); a signal that was sent is
 * raised again and unblocked here, and the process ends inside this call. */
static void take_default(int sig, const siginfo_t *si)
{
	struct sigaction dfl;
	sigset_t one;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	if (from_fault(sig, si))
		return;
	raise(sig); /* pending: the handler blocks it */
	sigemptyset(&one);
	sigaddset(&one, sig);
	pthread_sigmask(SIG_UNBLOCK, &one, NULL);
}

/* Another thread is finishing: wait until it is done, as long as it may wait itself
 * and a second more (0: as long as it takes, as the stop timeout 0 says). */
static void wait_finished(void)
{
	uint64_t limit_ms = finish_ms == 0 ? UINT64_MAX : (uint64_t)finish_ms + 1000u;
	const struct timespec ms = {0, 1000000};

	for (uint64_t waited = 0; waited < limit_ms; waited++) {
		/* A2: pairs with R2 in finish() */
		if (rtr_atomic_load_acquire(&finished))
			return;
		nanosleep(&ms, NULL);
	}
}

/* Finish the file for sig: the recorder off, the writer's end marker naming sig, at
 * most finish_ms. Once per process; a second caller waits for the first. */
static void finish(int sig)
{
	/* acq_rel: one of the threads that take a fatal signal at once gets 0 */
	if (rtr_atomic_exchange_acq_rel(&finishing, 1) != 0) {
		wait_finished();
		return;
	}
	/* R0: pairs with A0 in rtr__recording(), as in rtr_stop(); producers see the
	 * recorder off, the writer drains what came before */
	rtr_atomic_store_release(&rtr__active, 0);
	/* This thread's ring is not waited for: the signal may have stopped it inside
	 * an event call, which cannot go on before we return. */
	if (rtr__writer_signal_finish(sig, finish_ms, rtr__tls_ring) == 0)
		say(sig, ": the trace was not finished within the stop timeout\n");
	/* R2: pairs with A2 in wait_finished(); the writer is done with the file */
	rtr_atomic_store_release(&finished, 1);
}

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
	int saved_errno = errno;
	int ours = live();
	struct sigaction prog;

	program_action(sig, &prog);
	if (is_default(&prog)) {
		/* No other fatal signal on this thread from here (a program's SA_NODEFER
		 * included): it would wait for the finish it interrupted. */
		pthread_sigmask(SIG_BLOCK, &fatal_set, NULL);
		if (ours)
			finish(sig);
		take_default(sig, si); /* the process ends, or the fault comes again */
	} else if (!is_ignored(&prog)) {
		/* The program's handler decides, and the process may go on: the trace is
		 * flushed (its provisional end marker naming sig), not finished. Not while
		 * a finish is under way: that ends the process anyway. */
		if (ours && !rtr_atomic_load_relaxed(&finishing)) /* relaxed: a hint */
			rtr__writer_signal_flush(sig, finish_ms);
		call_program(sig, si, uc, &prog);
	}
	errno = saved_errno;
}

static void on_snapshot(int sig, siginfo_t *si, void *uc)
{
	int saved_errno = errno;
	int ours = live();
	struct sigaction prog;

	program_action(sig, &prog);
	if (ours)
		rtr__writer_signal_snapshot(); /* wakes the writer; returns at once */
	if (!is_default(&prog) && !is_ignored(&prog))
		call_program(sig, si, uc, &prog);
	else if (!ours && is_default(&prog))
		take_default(sig, si); /* no session here: the program's course */
	errno = saved_errno;
}

/* Say once per process, on stderr, that sig is left alone and why. */
static void tell(int sig, const char *why)
{
	uint64_t bit = (uint64_t)1 << (sig - 1);
	const char *name = rtr__signal_name(sig);

	if (told & bit)
		return;
	told |= bit;
	if (name != NULL)
		fprintf(stderr, "ringtrace: SIG%s %s; the trace is not finished at it\n", name,
			why);
	else
		fprintf(stderr, "ringtrace: signal %d %s; the trace is not finished at it\n", sig,
			why);
}

/* Ours over the program's disposition of sig (slots[sig].prog). */
static int install_one(int sig, void (*fn)(int, siginfo_t *, void *))
{
	const struct sigaction *prog = &slots[sig].prog;
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fn;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	if (is_default(prog) || is_ignored(prog)) {
		/* Nothing of the program's runs: its system calls restart, as before. A
		 * finish is not interrupted by another fatal signal. */
		sa.sa_flags |= SA_RESTART;
		if (fn == on_fatal)
			sa.sa_mask = fatal_set;
		else
			sigemptyset(&sa.sa_mask);
	} else {
		/* The program's handler runs under the mask and flags it asked for. */
		sa.sa_flags |= prog->sa_flags & (SA_RESTART | SA_NODEFER);
		sa.sa_mask = prog->sa_mask;
	}
	return sigaction(sig, &sa, NULL) == 0 ? 0 : -errno;
}

/* Put the program's disposition of sig back, unless it has replaced ours. */
static void put_back(int sig)
{
	struct sigaction cur, put;

	if (sigaction(sig, NULL, &cur) != 0 || !is_ours(&cur))
		return; /* the program set its own meanwhile: that stays */
	put = slots[sig].prog;
	/* relaxed: the handlers that set it are over or pass the signal on */
	if ((put.sa_flags & SA_RESETHAND) && rtr_atomic_load_relaxed(&slots[sig].reset)) {
		put.sa_handler = SIG_DFL; /* the kernel would have reset it by now */
		put.sa_flags = 0;
	}
	sigaction(sig, &put, NULL);
}

int rtr__signals_install(struct rtr__sigset fatal, int snapshot_sig, unsigned timeout_ms)
{
	uint64_t snap = snapshot_sig > 0 ? (uint64_t)1 << (snapshot_sig - 1) : 0;
	uint64_t want = fatal.mask & ~snap, done = 0;
	int err = 0;

	if (installed != 0)
		rtr__signals_uninstall();
	if ((want | snap) == 0)
		return 0;
	sigemptyset(&fatal_set);
	for (int sig = 1; sig <= MAX_SIG; sig++) {
		uint64_t bit = (uint64_t)1 << (sig - 1);
		struct sigaction cur;
		if (!((want | snap) & bit))
			continue;
		if (sigaction(sig, NULL, &cur) != 0)
			return -errno;
		if (!is_ours(&cur)) /* else slots[] has the program's from before */
			slots[sig].prog = cur;
		rtr_atomic_store_relaxed(&slots[sig].reset, 0); /* before R1 */
		if (!(want & bit))
			continue;
		if (is_ignored(&slots[sig].prog)) {
			tell(sig, "is ignored by the program");
			want &= ~bit;
		} else if (!ends_process(sig)) {
			tell(sig, "does not end the process");
			want &= ~bit;
		} else {
			sigaddset(&fatal_set, sig);
		}
	}
	owner = getpid();
	finish_ms = timeout_ms;
	/* relaxed: before R1, as the table */
	rtr_atomic_store_relaxed(&finishing, 0);
	rtr_atomic_store_relaxed(&finished, 0);
	/* R1: pairs with A1 in live(); the table above is complete before a handler of
	 * ours can run (each is installed after this) */
	rtr_atomic_store_release(&armed, 1);
	for (int sig = 1; sig <= MAX_SIG && err == 0; sig++) {
		uint64_t bit = (uint64_t)1 << (sig - 1);
		if ((want | snap) & bit) {
			err = install_one(sig, (want & bit) ? on_fatal : on_snapshot);
			if (err == 0)
				done |= bit;
		}
	}
	installed = done;
	if (err != 0)
		rtr__signals_uninstall(); /* nothing installed */
	return err;
}

void rtr__signals_uninstall(void)
{
	for (int sig = 1; sig <= MAX_SIG; sig++)
		if (installed & ((uint64_t)1 << (sig - 1)))
			put_back(sig);
	installed = 0;
	/* R1': pairs with A1 in live(); a handler delivered before the put back and
	 * running now passes the signal on */
	rtr_atomic_store_release(&armed, 0);
}
