/* SPDX-License-Identifier: MIT */
/*
 * The instrument library's symbol table: every function of every loaded object, from
 * the ELF symbol tables (.symtab, which holds static functions too, else .dynsym),
 * read with libelf from the objects' files as dl_iterate_phdr() lists them, sorted by
 * address.
 *
 * A table is immutable once published: lookups (producers deciding a filter, the
 * writer naming a function) read it without a lock, from any thread and from a signal
 * handler. A rebuild (the writer's, when an address is not found and objects were
 * loaded since) publishes a new table and keeps the old one: a reader may still be in
 * it. Tables are made with malloc (libelf uses it too), never on a producer's path.
 */
#ifndef RTR_INSTRUMENT_SYMTAB_H
#define RTR_INSTRUMENT_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

struct rtr__sym {
	uint64_t start;
	uint64_t size; /* 0: unknown, up to the next symbol */
	uint32_t name; /* offset in the table's names */
	uint32_t name_len;
};

struct rtr__symtab {
	const struct rtr__sym *syms; /* by start, one per address */
	size_t n;
	const char *names;
	unsigned long long adds; /* dl_iterate_phdr()'s load count it was built at */
};

/* The table now published, or NULL before the first build. Any thread. */
const struct rtr__symtab *rtr__symtab_current(void);

/* Build a table of the objects loaded now and publish it, unless one is published
 * that was built at the same load count. Returns the published table (the last one
 * when the build failed), or NULL. Not from a signal handler; serialized inside. */
const struct rtr__symtab *rtr__symtab_refresh(void);

/* The function of t that contains addr, or NULL. Async-signal-safe. */
const struct rtr__sym *rtr__symtab_find(const struct rtr__symtab *t, uint64_t addr);

#endif
