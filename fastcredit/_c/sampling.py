"""C backend of the sampling family (csrc/sampling.c)."""
from . import check, lib, ptr, suffix

__all__ = ["permutations", "permutation_shapley"]


def permutations(seed, game, first_unit, perms):
    check(lib.fc_sampling_permutations(int(seed), game, first_unit, perms.shape[0],
                                       perms.shape[1], ptr(perms)), "fc_sampling_permutations")


def permutation_shapley(v, seed, first_game, max_walks, budget, antithetic, cache_endpoints,
                        tol, min_samples, values, stderr, stats):
    f = "fc_permutation_shapley" + suffix(v)
    check(getattr(lib, f)(ptr(v), v.shape[0], v.shape[1].bit_length() - 1, int(seed),
                          first_game, max_walks, budget, int(antithetic), int(cache_endpoints),
                          tol, min_samples, ptr(values), ptr(stderr), ptr(stats)), f)
