/* SPDX-License-Identifier: MIT */
/*
 * One exported definition of each inline event call, for programs that cannot use
 * the header's inline versions (other languages through an FFI, dlsym).
 */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#define RTR_EXPORT_HOT
#include <ringtrace.h>
