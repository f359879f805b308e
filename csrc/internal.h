/*
 * internal.h - helpers shared by the kernels' .c files; not part of the C ABI
 * (fastcredit.h does not include it).
 */
#ifndef FASTCREDIT_INTERNAL_H
#define FASTCREDIT_INTERNAL_H

#include <stdint.h>
#include <string.h>

/* Hot kernels are compiled once per CPU generation and picked at load time,
 * so one build runs anywhere and still uses wide vectors where they exist. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
    defined(__linux__)
#define FC_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define FC_CLONES
#endif

/* Whether offsets[0..n_groups] indexes groups of a flat array: n_groups >= 0,
 * offsets[0] >= 0 and non-decreasing. offsets[0] may be non-zero so that a
 * thread's slice of a larger index passes as is; kernels that need more (a
 * zero start, an end within the values) check it themselves. */
static inline int csr_offsets_ok(const int64_t *offsets, int64_t n_groups)
{
    int64_t g;
    if (n_groups < 0 || !offsets || offsets[0] < 0) return 0;
    for (g = 0; g < n_groups; g++)
        if (offsets[g + 1] < offsets[g]) return 0;
    return 1;
}

/* The position of the lowest set bit of x (x != 0). */
static inline int ctz64(uint64_t x)
{
#if defined(__GNUC__)
    return __builtin_ctzll(x);
#else
    int c = 0;
    while (!(x & 1)) { x >>= 1; c++; }
    return c;
#endif
}

/* Small helpers of hot loops, forced inline so a caller compiled with a
 * constant argument gets a specialised copy. */
#if defined(__GNUC__)
#define FC_INLINE inline __attribute__((always_inline))
#else
#define FC_INLINE
#endif

/* Stack arrays read by 8-lane vectors: on a cache line, each 64-byte load
 * is one line, not two. */
#if defined(__GNUC__)
#define FC_LINE_ALIGNED __attribute__((aligned(64)))
#else
#define FC_LINE_ALIGNED
#endif

/* 8-wide vectors of doubles with GCC's vector extensions (GCC >= 9; each
 * target clone lowers them to its own instruction set). Kernels that use them
 * keep a portable loop for other compilers (define FC_NO_VECTOR_EXT to force
 * it). */
#if defined(__GNUC__) && __GNUC__ >= 9 && !defined(__clang__) && !defined(FC_NO_VECTOR_EXT)
#define FC_VECTOR_EXT 1
#pragma GCC diagnostic ignored "-Wpsabi"
typedef double v8d __attribute__((vector_size(64)));
typedef float v8f __attribute__((vector_size(32)));
typedef int64_t v8i __attribute__((vector_size(64)));

static FC_INLINE v8d load_f64(const double *p)
{
    v8d r;
    memcpy(&r, p, sizeof r);
    return r;
}

static FC_INLINE v8d load_f32(const float *p)
{
    v8f r;
    memcpy(&r, p, sizeof r);
    return __builtin_convertvector(r, v8d);
}
#endif

/* Paths that kernels choose by processor, as bits. A kernel takes one
 * where the processor has it and the tests have not switched it off, so
 * that the tests run every path on any machine (each kernel reads
 * fc_internal_paths() once per call) and the bench can say which ran. Not
 * part of the C ABI: build_ffi.py declares these to the cffi module alone.
 * FC_PATH_AVX512: functions compiled for x86-64-v4 alone and picked at run
 * time (not through FC_CLONES, whose clones the loader picks). GCC >= 12:
 * older ones know neither that target nor __builtin_cpu_supports of it. */
#define FC_PATH_AVX512 1
#if defined(FC_VECTOR_EXT) && __GNUC__ >= 12 && defined(__x86_64__) && defined(__linux__)
#define FC_AVX512_PATHS 1
#endif
/* The paths the kernels take now. */
int fc_internal_paths(void);
/* Lets the kernels take only the paths in `allowed` (all: ~0), until the
 * next call; returns the previous allowance. For tests: set it while no
 * kernel runs. */
int fc_internal_allow_paths(int allowed);

#endif
