/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: rtr__jsontext_escape() alone. Any bytes (NULs too: the escaper takes
 * a length) must give a string body that, quoted, is strict JSON (fuzz_check.h),
 * decodes to the input with each maximal ill-formed subpart replaced by U+FFFD, and
 * stays within RTR_JSONTEXT_ESCAPE_BOUND().
 */
#include "common/jsontext.h"

#include "fuzz_check.h"

#include <stddef.h>
#include <stdint.h>

#define MAX_INPUT 65536

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char out[2 + RTR_JSONTEXT_ESCAPE_BOUND(MAX_INPUT) + 16];
	static char arena_bytes[4 * MAX_INPUT + 4096];
	struct jarena arena = {arena_bytes, 0, sizeof(arena_bytes)};

	if (size > MAX_INPUT)
		return -1; /* not added to the corpus */
	out[0] = '"';
	char *end = rtr__jsontext_escape(out + 1, (const char *)data, size);
	size_t len = (size_t)(end - (out + 1));
	if (len > RTR_JSONTEXT_ESCAPE_BOUND(size))
		FUZZ_FAIL("%zu bytes out for %zu in: above the bound", len, size);
	*end++ = '"';
	const struct jnode *v = json_parse(&arena, out, (size_t)(end - out));
	expect_str(v, (const char *)data, size, "escaped");
	return 0;
}
