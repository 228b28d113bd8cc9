/* SPDX-License-Identifier: MIT */
#include "mem.h"

#include <sys/mman.h>

void *rtr__mem_map(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void rtr__mem_unmap(void *p, size_t bytes)
{
	if (p != NULL)
		munmap(p, bytes);
}
