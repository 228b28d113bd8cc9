/* SPDX-License-Identifier: MIT */
/*
 * RINGTRACE_INSTRUMENT_LINES=1: "file:line" of each instrumented function, from the
 * DWARF line tables, with libdw's dwfl over this process's own mappings. The writer
 * calls rtr__instrument_srcline() once per function (it caches the text), on its
 * thread only: dwfl is made on the first call and never touched by a producer.
 *
 * dwfl_getsrc() finds the compilation unit through .debug_aranges, which Clang does
 * not emit; libdw 0.188 then finds nothing. When it finds nothing, the CUs' own
 * address ranges (DW_AT_ranges, low/high_pc) of the address's module are read once
 * into a sorted table (empty for a module without DWARF), and the line is looked up
 * in the CU found there.
 */
#include "instrument/srcline.h"

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINSTR __attribute__((no_instrument_function))

static Dwfl *dwfl; /* the writer's; under lock (a restarted writer is another thread) */
static int dwfl_failed;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *debuginfo_path;

/* One address range of a compilation unit, module-relative (bias taken off). */
struct cu_range {
	Dwarf_Addr lo, hi;
	Dwarf_Die cu;
};

/* A module's CU ranges, sorted by lo; built on its first lookup that needs them. */
struct module_ranges {
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	struct cu_range *r;
	size_t n;
};

static struct module_ranges *modules;
static size_t nmodules;

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

NOINSTR static int by_lo(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Append every range of every CU of mod to m->r; 0, or -1 out of memory. */
NOINSTR static int read_cu_ranges(Dwfl_Module *mod, struct module_ranges *m)
{
	size_t cap = 0;
	Dwarf_Die *cu = NULL;

	while ((cu = dwfl_module_nextcu(mod, cu, &m->bias)) != NULL) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;
		while ((off = dwarf_ranges(cu, off, &base, &lo, &hi)) > 0) {
			if (m->n == cap) {
				size_t ncap = cap ? cap * 2 : 64;
				struct cu_range *nr = realloc(m->r, ncap * sizeof(*nr));
				if (nr == NULL)
					return -1;
				m->r = nr;
				cap = ncap;
			}
			m->r[m->n++] = (struct cu_range){lo, hi, *cu};
		}
	}
	qsort(m->r, m->n, sizeof(*m->r), by_lo);
	return 0;
}

/* The line at addr from the CU whose ranges hold it, where dwfl_getsrc() found none
 * (no .debug_aranges). */
NOINSTR static Dwarf_Line *line_by_cu_ranges(Dwarf_Addr addr)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, addr);
	struct module_ranges *m = NULL;

	if (mod == NULL)
		return NULL;
	for (size_t i = 0; i < nmodules && m == NULL; i++)
		m = modules[i].mod == mod ? &modules[i] : NULL;
	if (m == NULL) {
		struct module_ranges *nm = realloc(modules, (nmodules + 1) * sizeof(*nm));
		if (nm == NULL)
			return NULL;
		modules = nm;
		m = &modules[nmodules++];
		*m = (struct module_ranges){mod, 0, NULL, 0};
		if (read_cu_ranges(mod, m) != 0) {
			free(m->r);
			m->r = NULL;
			m->n = 0; /* kept, empty: not read again */
		}
	}
	Dwarf_Addr a = addr - m->bias;
	size_t lo = 0, hi = m->n; /* the last range with r.lo <= a is at lo - 1 */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->r[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || a >= m->r[lo - 1].hi)
		return NULL;
	return dwarf_getsrc_die(&m->r[lo - 1].cu, a);
}

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
		if (file == NULL) {
			Dwarf_Line *dl = line_by_cu_ranges((Dwarf_Addr)addr);
			file = dl != NULL && dwarf_lineno(dl, &lineno) == 0
				       ? dwarf_linesrc(dl, NULL, NULL)
				       : NULL;
		}
		if (file != NULL && lineno > 0) {
			int k = snprintf(out, cap, "%s:%d", file, lineno);
			n = k < 0 ? 0 : (size_t)k < cap ? (size_t)k : cap;
		}
	}
	pthread_mutex_unlock(&lock);
	return n;
}
