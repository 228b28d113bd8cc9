/* SPDX-License-Identifier: MIT */
/* ELF symbol tables of the loaded objects, with libelf. See symtab.h. */
#include "instrument/symtab.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINSTR __attribute__((no_instrument_function))

static const struct rtr__symtab *current; /* published with release (R0) */
static pthread_mutex_t build_lock = PTHREAD_MUTEX_INITIALIZER;

struct build {
	struct rtr__sym *syms;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
	unsigned long long adds;
	int first;
};

NOINSTR const struct rtr__symtab *rtr__symtab_current(void)
{
	/* A0: pairs with R0 in publish(); the table's arrays are filled */
	return __atomic_load_n(&current, __ATOMIC_ACQUIRE);
}

NOINSTR static int add_sym(struct build *b, uint64_t start, uint64_t size, const char *name)
{
	size_t len = strlen(name);

	if (len == 0 || len > UINT32_MAX / 2)
		return 0;
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 4096;
		struct rtr__sym *s = realloc(b->syms, cap * sizeof(*s));
		if (s == NULL)
			return -1;
		b->syms = s;
		b->cap = cap;
	}
	if (b->names_cap - b->names_len < len + 1) {
		size_t cap = b->names_cap ? 2 * b->names_cap : (size_t)1 << 16;
		while (cap - b->names_len < len + 1)
			cap *= 2;
		if (cap > UINT32_MAX)
			return -1;
		char *p = realloc(b->names, cap);
		if (p == NULL)
			return -1;
		b->names = p;
		b->names_cap = cap;
	}
	memcpy(b->names + b->names_len, name, len + 1);
	b->syms[b->n++] = (struct rtr__sym){start, size, (uint32_t)b->names_len, (uint32_t)len};
	b->names_len += len + 1;
	return 0;
}

/* The functions of one object's file, at bias. The .symtab when it has one (static
 * functions too), else .dynsym; a stripped object without either adds nothing. */
NOINSTR static int add_object(struct build *b, const char *path, uint64_t bias)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int err = 0;

	if (fd < 0)
		return 0; /* the vDSO, an object deleted since: left unnamed */
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e == NULL || elf_kind(e) != ELF_K_ELF) {
		elf_end(e);
		close(fd);
		return 0;
	}
	Elf_Scn *want = NULL, *scn = NULL;
	GElf_Shdr sh;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		if (gelf_getshdr(scn, &sh) == NULL)
			continue;
		if (sh.sh_type == SHT_SYMTAB) {
			want = scn;
			break;
		}
		if (sh.sh_type == SHT_DYNSYM && want == NULL)
			want = scn;
	}
	Elf_Data *data;
	if (want != NULL && gelf_getshdr(want, &sh) != NULL && sh.sh_entsize != 0 &&
	    (data = elf_getdata(want, NULL)) != NULL) {
		size_t count = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < count && err == 0; i++) {
			GElf_Sym sym;
			if (gelf_getsym(data, (int)i, &sym) == NULL)
				continue;
			int type = GELF_ST_TYPE(sym.st_info);
			if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
			    sym.st_shndx == SHN_UNDEF || sym.st_value == 0)
				continue;
			const char *name = elf_strptr(e, sh.sh_link, sym.st_name);
			if (name != NULL)
				err = add_sym(b, bias + sym.st_value, sym.st_size, name);
		}
	}
	elf_end(e);
	close(fd);
	return err;
}

NOINSTR static int add_loaded(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct build *b = arg;
	const char *path = info->dlpi_name;

	(void)size;
	b->adds = info->dlpi_adds;
	if (b->first) { /* the program itself, listed first with an empty name */
		b->first = 0;
		if (path == NULL || path[0] == '\0')
			path = "/proc/self/exe";
	}
	if (path == NULL || path[0] == '\0')
		return 0;
	return add_object(b, path, info->dlpi_addr) != 0;
}

NOINSTR static int by_start(const void *x, const void *y)
{
	const struct rtr__sym *a = x, *b = y;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	/* at one address, the sized one first, then the shorter name (an alias such as
	 * __libc_malloc / malloc keeps the plainer one by length order, stably enough) */
	if ((a->size == 0) != (b->size == 0))
		return a->size == 0 ? 1 : -1;
	return a->name_len < b->name_len ? -1 : a->name_len > b->name_len;
}

NOINSTR static int count_only(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(unsigned long long *)arg = info->dlpi_adds;
	return 1; /* the first object carries the count */
}

NOINSTR const struct rtr__symtab *rtr__symtab_refresh(void)
{
	const struct rtr__symtab *t;
	unsigned long long adds = 0;

	pthread_mutex_lock(&build_lock);
	t = rtr__symtab_current();
	dl_iterate_phdr(count_only, &adds);
	if (t != NULL && t->adds == adds)
		goto out;
	if (elf_version(EV_CURRENT) == EV_NONE)
		goto out;
	struct build b = {.first = 1};
	if (dl_iterate_phdr(add_loaded, &b) != 0 || b.n == 0) {
		free(b.syms);
		free(b.names);
		goto out;
	}
	qsort(b.syms, b.n, sizeof(*b.syms), by_start);
	size_t k = 0; /* one symbol per address */
	for (size_t i = 0; i < b.n; i++)
		if (k == 0 || b.syms[k - 1].start != b.syms[i].start)
			b.syms[k++] = b.syms[i];
	struct rtr__symtab *nt = malloc(sizeof(*nt));
	if (nt == NULL) {
		free(b.syms);
		free(b.names);
		goto out;
	}
	*nt = (struct rtr__symtab){b.syms, k, b.names, adds};
	/* R0: pairs with A0 in rtr__symtab_current(); the old table stays (see symtab.h) */
	__atomic_store_n(&current, nt, __ATOMIC_RELEASE);
	t = nt;
out:
	pthread_mutex_unlock(&build_lock);
	return t;
}

NOINSTR const struct rtr__sym *rtr__symtab_find(const struct rtr__symtab *t, uint64_t addr)
{
	size_t lo = 0, hi;

	if (t == NULL || t->n == 0 || addr < t->syms[0].start)
		return NULL;
	hi = t->n; /* the last symbol with start <= addr is in [lo, hi) */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->syms[mid].start <= addr)
			lo = mid;
		else
			hi = mid;
	}
	const struct rtr__sym *s = &t->syms[lo];
	if (s->size != 0 ? addr - s->start < s->size : addr == s->start)
		return s;
	return NULL;
}
