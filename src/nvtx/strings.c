/* SPDX-License-Identifier: MIT */
/*
 * The NVTX module's strings (strings.h): interned in the modules' shared table
 * (common/strtab.h) over this file's arena, whose offsets name a range's strings in
 * its id; and wide strings made UTF-8.
 */
#include "nvtx/strings.h"

#include "common/strtab.h"

#include <string.h>

static _Alignas(8) char arena[RTR_NVTX_ARENA_BYTES];
static const char *slots[1u << 14]; /* some 12,000 names: 3/4 of the slots */
static struct rtr__strtab names = RTR__STRTAB(arena, slots, RTR_NVTX_MAX_STRING, 0, NULL);

const char *rtr__nvtx_intern(const char *s, size_t len)
{
	return rtr__strtab_intern(&names, s, len);
}

uint32_t rtr__nvtx_offset(const char *interned)
{
	if (interned < arena + RTR__STRTAB_META || interned >= arena + RTR_NVTX_ARENA_BYTES)
		return 0;
	return (uint32_t)(interned - arena);
}

const char *rtr__nvtx_at(uint32_t offset)
{
	return offset == 0 ? NULL : arena + offset;
}

size_t rtr__nvtx_utf8(const wchar_t *s, char *out, size_t cap)
{
	size_t n = 0;
	for (; *s != 0; s++) {
		uint32_t c = (uint32_t)*s;
		if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
			c = 0xFFFD; /* not a character: the replacement character */
		size_t k = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
		if (n + k + 1 > cap)
			break;
		if (k == 1) {
			out[n] = (char)c;
		} else {
			for (size_t j = k - 1; j > 0; j--, c >>= 6)
				out[n + j] = (char)(0x80 | (c & 0x3F));
			out[n] = (char)((k == 2 ? 0xC0 : k == 3 ? 0xE0 : 0xF0) | c);
		}
		n += k;
	}
	out[n] = '\0';
	return n;
}
