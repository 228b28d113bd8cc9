/* SPDX-License-Identifier: MIT */
/*
 * RINGTRACE_INSTRUMENT_LINES=1: "file:line" of each instrumented function, from the
 * DWARF line tables, with libdw's dwfl over this process's own mappings. The writer
 * calls rtr__instrument_srcline() once per function (it caches the text), on its
 * thread only: dwfl is made on the first call and never touched by a producer.
 */
#include "instrument/srcline.h"

#include <elfutils/libdwfl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define NOINSTR __attribute__((no_instrument_function))

static Dwfl *dwfl; /* the writer's; under lock (a restarted writer is another thread) */
static int dwfl_failed;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *debuginfo_path;

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

NOINSTR size_t rtr__instrument_srcline(uint64_t addr, char *out, size_t cap)
{
	size_t n = 0;

	pthread_mutex_lock(&lock);
	if (dwfl == NULL && !dwfl_failed) {
		dwfl = dwfl_begin(&callbacks);
		if (dwfl == NULL || dwfl_linux_proc_report(dwfl, getpid()) != 0 ||
		    dwfl_report_end(dwfl, NULL, NULL) != 0) {
			dwfl_end(dwfl);
			dwfl = NULL;
			dwfl_failed = 1;
		}
	}
	if (dwfl != NULL) {
		Dwfl_Line *line = dwfl_getsrc(dwfl, (Dwarf_Addr)addr);
		int lineno = 0;
		const char *file =
			line != NULL ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
		if (file != NULL && lineno > 0) {
			int k = snprintf(out, cap, "%s:%d", file, lineno);
			n = k < 0 ? 0 : (size_t)k < cap ? (size_t)k : cap;
		}
	}
	pthread_mutex_unlock(&lock);
	return n;
}
