/* SPDX-License-Identifier: MIT */
/*
 * Named-order atomics over the GCC builtins, so that `grep acquire` finds every
 * edge. Each use carries a comment naming its partner (A<n> pairs with R<n>).
 */
#ifndef RTR_ATOMIC_H
#define RTR_ATOMIC_H

#define rtr_atomic_load_relaxed(p)	  __atomic_load_n((p), __ATOMIC_RELAXED)
#define rtr_atomic_load_acquire(p)	  __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define rtr_atomic_store_relaxed(p, v)	  __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define rtr_atomic_store_release(p, v)	  __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define rtr_atomic_add_acq_rel(p, v)	  __atomic_add_fetch((p), (v), __ATOMIC_ACQ_REL)
#define rtr_atomic_exchange_acq_rel(p, v) __atomic_exchange_n((p), (v), __ATOMIC_ACQ_REL)
#define rtr_atomic_fence_seq_cst()	  __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define rtr_atomic_fence_acquire()	  __atomic_thread_fence(__ATOMIC_ACQUIRE)
#define rtr_atomic_fence_release()	  __atomic_thread_fence(__ATOMIC_RELEASE)

#endif
