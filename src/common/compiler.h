/* SPDX-License-Identifier: MIT */
/* Compiler conveniences shared by every library file. */
#ifndef RTR_COMPILER_H
#define RTR_COMPILER_H

#define RTR_LIKELY(x)	__builtin_expect(!!(x), 1)
#define RTR_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define RTR_COLD	__attribute__((cold, noinline))
#define RTR_INLINE	inline __attribute__((always_inline))

#endif
