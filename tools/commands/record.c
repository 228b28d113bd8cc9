/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace record [options] -- PROG ARGS...`: run a program with the recorder and
 * the modules asked for loaded into it, as `nsys profile` or `uftrace record` do.
 *
 * Each module is a library beside libringtrace (found next to this binary: in the
 * build tree, or the installed lib directory) and reaches the program the way its
 * vendor's interface loads a tool: the MPI module and compiler instrumentation by
 * LD_PRELOAD, the OpenMP tool by OMP_TOOL_LIBRARIES, Kokkos by KOKKOS_TOOLS_LIBS and
 * the older KOKKOS_PROFILE_LIBRARY, NVTX by NVTX_INJECTION64_PATH, ITT by
 * INTEL_LIBITTNOTIFY64. The program's output, exit status and RINGTRACE_* variables
 * pass through; under `mpirun ... ringtrace record -- prog` each rank is recorded on
 * its own. Then it says where the trace is, its pattern expanded.
 */
#include "cli.h"

#include "common/launcher.h"
#include "common/names.h"
#include "path/path.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef RTR_TOOLS_LIBDIR
#define RTR_TOOLS_LIBDIR "lib" /* the install's, relative to its prefix */
#endif

#define CMD "record"

/* A module: its option, its library, the variable that loads it (NULL: LD_PRELOAD). */
struct module {
	const char *option;
	const char *lib;
	const char *var;
	const char *also; /* a second variable given the same path, or NULL */
	int autostart;	  /* the recorder must start at load (the MPI module: at MPI_Init) */
	const char *file; /* the module's default RINGTRACE_FILE, or NULL */
	int rank_name;	  /* the process is named "rank N" (the MPI module's name) */
	int on;
};

static struct module modules[] = {
	{"--mpi", "libringtrace-mpi.so", NULL, NULL, 0, "ringtrace-%r.json", 1, 0},
	{"--instrument", "libringtrace-instrument.so", NULL, NULL, 1, NULL, 0, 0},
	{"--omp", "libringtrace-omp.so", "OMP_TOOL_LIBRARIES", NULL, 1, NULL, 0, 0},
	{"--kokkos", "libringtrace-kokkos.so", "KOKKOS_TOOLS_LIBS", "KOKKOS_PROFILE_LIBRARY", 1,
	 NULL, 0, 0},
	{"--nvtx", "libringtrace-nvtx.so", "NVTX_INJECTION64_PATH", NULL, 1, NULL, 0, 0},
	{"--itt", "libringtrace-itt.so", "INTEL_LIBITTNOTIFY64", NULL, 1, NULL, 0, 0},
};

#define NMODULES (sizeof(modules) / sizeof(modules[0]))

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ringtrace record [options] [--] PROG [ARGS...]\n"
		"\n"
		"Run PROG with the recorder and the modules asked for, then say where the\n"
		"trace is. PROG's output, exit status and RINGTRACE_* variables pass\n"
		"through; under mpirun each rank is recorded on its own.\n"
		"\n"
		"options:\n"
		"  -o FILE, --output FILE  the trace (RINGTRACE_FILE; patterns %%p %%h %%r %%R)\n"
		"  --mpi                   MPI calls and messages (libringtrace-mpi, preloaded)\n"
		"  --omp                   OpenMP through OMPT (OMP_TOOL_LIBRARIES)\n"
		"  --kokkos                Kokkos kernels and regions (KOKKOS_TOOLS_LIBS)\n"
		"  --nvtx                  NVTX ranges and marks (NVTX_INJECTION64_PATH)\n"
		"  --itt                   ITT tasks and frames (INTEL_LIBITTNOTIFY64)\n"
		"  --instrument            functions of code built with -finstrument-functions\n"
		"  --flight MB             a flight recorder of MB MiB, written at exit\n"
		"  --libdir DIR            the modules' directory (default: beside ringtrace)\n"
		"  -h, --help              this text\n");
}

/* The directory of this binary, into dir. 0 or -1. */
static int self_dir(char *dir, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", dir, size - 1);

	if (n <= 0)
		return -1;
	dir[n] = '\0';
	char *slash = strrchr(dir, '/');
	if (slash == NULL)
		return -1;
	*slash = '\0';
	return 0;
}

/* The directory --libdir names, or NULL: the modules beside this binary. */
static const char *libdir;

/* Where lib is: --libdir, the build tree (beside tools/), the install's lib directory.
 * 0 with its path in out, or -1. */
static int find_lib(const char *lib, char *out, size_t size)
{
	const char *env = libdir;
	char dir[PATH_MAX];
	const char *rel[] = {"..", ("../" RTR_TOOLS_LIBDIR), "../lib"};
	struct stat st;

	if (env != NULL && *env != '\0') {
		if ((size_t)snprintf(out, size, "%s/%s", env, lib) < size && stat(out, &st) == 0)
			return 0;
		return -1;
	}
	if (self_dir(dir, sizeof(dir)) != 0)
		return -1;
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		char tmp[PATH_MAX];
		if ((size_t)snprintf(tmp, sizeof(tmp), "%s/%s/%s", dir, rel[i], lib) >=
			    sizeof(tmp) ||
		    realpath(tmp, out) == NULL || strlen(out) >= size)
			continue;
		if (stat(out, &st) == 0)
			return 0;
	}
	return -1;
}

/* Prepend path to LD_PRELOAD. 0 or -1. */
static int preload(const char *path)
{
	const char *old = getenv("LD_PRELOAD");
	size_t n = strlen(path) + (old != NULL ? strlen(old) + 1 : 0) + 1;
	char *v = malloc(n);

	if (v == NULL)
		return -1;
	snprintf(v, n, "%s%s%s", path, old != NULL && *old != '\0' ? ":" : "",
		 old != NULL ? old : "");
	int rc = setenv("LD_PRELOAD", v, 1);
	free(v);
	return rc;
}

/* The environment for the modules asked for. 0, or an exit status. */
static int set_modules(void)
{
	int autostart = 0;

	for (size_t i = 0; i < NMODULES; i++) {
		const struct module *m = &modules[i];
		char path[PATH_MAX];

		if (!m->on)
			continue;
		if (find_lib(m->lib, path, sizeof(path)) != 0) {
			cli_error(CMD,
				  "%s: %s not found beside this ringtrace (built without it? "
				  "--libdir names its directory)",
				  m->option, m->lib);
			return CLI_ERROR;
		}
		if (m->var == NULL ? preload(path) != 0
				   : setenv(m->var, path, 1) != 0 ||
					     (m->also != NULL && setenv(m->also, path, 1) != 0)) {
			cli_error(CMD, "%s: %s", m->option, strerror(errno));
			return CLI_ERROR;
		}
		autostart |= m->autostart;
		/* The MPI module's default file, ringtrace-%r.json, is then also the one of a
		 * session autostarted for the other modules (before MPI_Init), and the path
		 * said at the end. */
		const char *file = getenv("RINGTRACE_FILE");
		if (m->file != NULL && (file == NULL || *file == '\0') &&
		    setenv("RINGTRACE_FILE", m->file, 1) != 0)
			return CLI_ERROR;
		/* Likewise its process name, "rank N", unless RINGTRACE_PROCESS_NAME says */
		const char *name = getenv("RINGTRACE_PROCESS_NAME");
		char rank_name[32];
		long rank = rtr__launcher_rank();
		snprintf(rank_name, sizeof(rank_name), "rank %ld", rank);
		if (m->rank_name && rank >= 0 && (name == NULL || *name == '\0') &&
		    setenv("RINGTRACE_PROCESS_NAME", rank_name, 1) != 0)
			return CLI_ERROR;
	}
	if (autostart && setenv("RINGTRACE_AUTOSTART", "1", 0) != 0)
		return CLI_ERROR;
	return 0;
}

/* The trace's path as the recorder in process pid named it. */
static void say_where(pid_t pid)
{
	const char *pattern = getenv("RINGTRACE_FILE");
	char host[256], path[PATH_MAX];

	if (pattern == NULL || *pattern == '\0')
		pattern = "ringtrace-%p.json";
	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';
	if (strcmp(pattern, "-") == 0 || getenv("RINGTRACE_MODE") != NULL ||
	    getenv("RINGTRACE_MAX_MB") != NULL || getenv("RINGTRACE_MAX_SECONDS") != NULL ||
	    rtr__path_expand(path, sizeof(path), pattern, pid, host, rtr__launcher_rank(), 0) !=
		    0) {
		cli_note(CMD, "the trace: %s (the recorder names each file from it)", pattern);
		return;
	}
	struct stat st;
	if (stat(path, &st) != 0) {
		cli_note(CMD,
			 "no trace at %s: the program did not start the recorder (link it "
			 "with libringtrace, or ask for a module)",
			 path);
		return;
	}
	cli_note(CMD, "the trace: %s -- drag it onto https://ui.perfetto.dev", path);
}

/* Options up to the program; returns the index of PROG, or -1 after an error (*rc). */
static int parse(int argc, char **argv, int *rc)
{
	int i = 1;

	*rc = 0;
	for (; i < argc; i++) {
		const char *a = argv[i];
		size_t k;

		if (strcmp(a, "--") == 0)
			return i + 1 < argc ? i + 1
					    : (*rc = cli_usage_error(CMD, "no program"), -1);
		if (a[0] != '-')
			return i;
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			return -1;
		}
		if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0 ||
		    strcmp(a, "--flight") == 0 || strcmp(a, "--libdir") == 0) {
			if (++i >= argc) {
				*rc = cli_usage_error(CMD, "%s wants a value", a);
				return -1;
			}
			uint64_t mb;
			if (strcmp(a, "--libdir") == 0) {
				libdir = argv[i];
			} else if (strcmp(a, "--flight") != 0) {
				setenv("RINGTRACE_FILE", argv[i], 1);
			} else if (cli_parse_u64(argv[i], &mb) != 0 || mb == 0) {
				*rc = cli_usage_error(CMD, "--flight wants MiB, not '%s'", argv[i]);
				return -1;
			} else {
				setenv("RINGTRACE_MODE", "flight", 1);
				setenv("RINGTRACE_FLIGHT_MB", argv[i], 1);
			}
			continue;
		}
		for (k = 0; k < NMODULES && strcmp(a, modules[k].option) != 0; k++)
			;
		if (k == NMODULES) {
			*rc = cli_usage_error(CMD, "unknown option '%s'", a);
			return -1;
		}
		modules[k].on = 1;
	}
	*rc = cli_usage_error(CMD, "no program");
	return -1;
}

int cmd_record(int argc, char **argv)
{
	int rc, status;
	int prog = parse(argc, argv, &rc);

	if (prog < 0)
		return rc;
	rc = set_modules();
	if (rc != 0)
		return rc;
	pid_t pid = fork();
	if (pid < 0) {
		cli_error(CMD, "fork: %s", strerror(errno));
		return CLI_ERROR;
	}
	if (pid == 0) {
		execvp(argv[prog], argv + prog);
		cli_error(CMD, "%s: %s", argv[prog], strerror(errno));
		_exit(127);
	}
	/* the program's signals from the terminal reach it; this waits */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			cli_error(CMD, "waitpid: %s", strerror(errno));
			return CLI_ERROR;
		}
	if (!(WIFEXITED(status) && WEXITSTATUS(status) == 127))
		say_where(pid);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
