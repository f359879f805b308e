/*
 * rng.h - the counter-based random numbers every sampling kernel uses
 * (part of fastcredit.h). Reproduced bit for bit by fastcredit/_numba/rng.py.
 *
 * A stream is keyed by (seed, item): state = mix64(seed ^ mix64(item)), and
 * draw c of the stream is mix64(state + (c + 1) * GOLDEN) (SplitMix64). The
 * same seed and item give the same numbers on every backend and any thread
 * count, with no global state.
 */
#ifndef FASTCREDIT_RNG_H
#define FASTCREDIT_RNG_H

#include <stdint.h>

/* Fills out[0..n) with draws 0..n-1 of the stream (seed, item). */
int fc_rng_fill(uint64_t seed, uint64_t item, int64_t n, uint64_t *out);

#define FC_RNG_GOLDEN 0x9E3779B97F4A7C15ULL

static inline uint64_t fc_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* The stream state for (seed, item). */
static inline uint64_t fc_rng_key(uint64_t seed, uint64_t item)
{
    return fc_mix64(seed ^ fc_mix64(item + FC_RNG_GOLDEN));
}

/* Next 64 random bits; advances *state. */
static inline uint64_t fc_rng_next(uint64_t *state)
{
    *state += FC_RNG_GOLDEN;
    return fc_mix64(*state);
}

/* Uniform double in [0, 1) with 53 random bits. */
static inline double fc_rng_uniform(uint64_t *state)
{
    return (double)(fc_rng_next(state) >> 11) * (1.0 / 9007199254740992.0);
}

/* Largest n fc_rng_below takes (2^32): it scales 32 random bits. */
#define FC_RNG_MAX_RANGE 4294967296

/* Integer in [0, n) for 1 <= n <= FC_RNG_MAX_RANGE (multiply-shift; bias
 * below n / 2^32). */
static inline uint64_t fc_rng_below(uint64_t *state, uint64_t n)
{
    return ((fc_rng_next(state) >> 32) * n) >> 32;
}

#endif
