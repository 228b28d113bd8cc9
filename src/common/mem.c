/* SPDX-License-Identifier: MIT */
#include "mem.h"

#include <sys/mman.h>

/*
 * LeakSanitizer scans the heap, stacks and globals for pointers, not anonymous
 * mappings: a heap block that only a ring's reader state points to (the writer's
 * stack of a thread's open slices) would be reported as leaked while the session
 * runs. Under a sanitizer the mappings are declared as roots to scan.
 */
#if defined(__SANITIZE_ADDRESS__)
#define RTR_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(leak_sanitizer)
#define RTR_LSAN 1
#endif
#endif

#ifdef RTR_LSAN
#include <sanitizer/lsan_interface.h>
#endif

void *rtr__mem_map(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
#ifdef RTR_LSAN
	__lsan_register_root_region(p, bytes);
#endif
	return p;
}

void rtr__mem_unmap(void *p, size_t bytes)
{
	if (p == NULL)
		return;
#ifdef RTR_LSAN
	__lsan_unregister_root_region(p, bytes);
#endif
	munmap(p, bytes);
}
