/*
 * internal.h - helpers shared by the kernels' .c files; not part of the C ABI
 * (fastcredit.h does not include it).
 */
#ifndef FASTCREDIT_INTERNAL_H
#define FASTCREDIT_INTERNAL_H

/* Hot kernels are compiled once per CPU generation and picked at load time,
 * so one build runs anywhere and still uses wide vectors where they exist. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
    defined(__linux__)
#define FC_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define FC_CLONES
#endif

/* Small helpers of hot loops, forced inline so a caller compiled with a
 * constant argument gets a specialised copy. */
#if defined(__GNUC__)
#define FC_INLINE inline __attribute__((always_inline))
#else
#define FC_INLINE
#endif

#endif
