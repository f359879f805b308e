/* rng.c - see rng.h. */
#include "fastcredit.h"

int fc_rng_fill(uint64_t seed, uint64_t item, int64_t n, uint64_t *out)
{
    uint64_t state = fc_rng_key(seed, item);
    int64_t j;
    if (n < 0 || (n > 0 && !out)) return FC_EINVAL;
    for (j = 0; j < n; j++) out[j] = fc_rng_next(&state);
    return FC_OK;
}
