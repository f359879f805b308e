/* paths.c - the paths that kernels choose by processor (internal.h). */
#include "internal.h"

/* All paths unless a test switches some off. Written only while no kernel
 * runs (a test between its calls), so a plain int serves. */
static int allowed = ~0;

int fc_internal_paths(void)
{
    int have = 0;
#ifdef FC_AVX512_PATHS
    have |= __builtin_cpu_supports("x86-64-v4") ? FC_PATH_AVX512 : 0;
#endif
    return have & allowed;
}

int fc_internal_allow_paths(int paths)
{
    const int before = allowed;
    allowed = paths;
    return before;
}
