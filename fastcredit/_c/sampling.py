"""C backend of the sampling family (csrc/sampling.c)."""
import numpy as np

from . import check, ffi, lib, ptr, suffix

__all__ = ["permutations", "permutation_shapley", "tree_permutations", "masked_rows",
           "background_mean", "affordable_pairs"]


def permutations(seed, game, first_unit, perms):
    check(lib.fc_sampling_permutations(int(seed), game, first_unit, perms.shape[0],
                                       perms.shape[1], ptr(perms)), "fc_sampling_permutations")


def permutation_shapley(v, seed, first_game, max_walks, budget, antithetic, cache_endpoints,
                        tol, min_samples, values, stderr, stats):
    f = "fc_permutation_shapley" + suffix(v)
    check(getattr(lib, f)(ptr(v), v.shape[0], v.shape[1].bit_length() - 1, int(seed),
                          first_game, max_walks, budget, int(antithetic), int(cache_endpoints),
                          tol, min_samples, ptr(values), ptr(stderr), ptr(stats)), f)


def tree_permutations(seed, game, first_unit, children, perms):
    check(lib.fc_sampling_tree_permutations(int(seed), game, first_unit, perms.shape[0],
                                            perms.shape[1], ptr(children), ptr(perms)),
          "fc_sampling_tree_permutations")


def masked_rows(background, xs, masks, owner, rows):
    check(lib.fc_masked_rows(ptr(background), background.shape[0], background.shape[1],
                             ptr(xs), xs.shape[0], ptr(masks), ptr(owner), masks.shape[0],
                             ptr(rows)), "fc_masked_rows",
          lambda: _masked_refused(background.shape[1], xs.shape[0], masks, owner))


def _masked_refused(m, n_x, masks, owner):
    """The first mask at or above 2**m, or owner outside [0, n_x), that
    fc_masked_rows refuses, named (None when none)."""
    beyond = masks >> np.uint64(m) if m < 64 else np.zeros_like(masks)
    bad = np.flatnonzero((beyond != 0) | (owner < 0) | (owner >= n_x))
    if not len(bad):
        return None
    c = bad[0]
    return (f"masks[{c}] = {masks[c]} is not below 2**{m}" if beyond[c] else
            f"owner[{c}] = {owner[c]} is not in [0, {n_x})")


def background_mean(outputs, weights, means):
    check(lib.fc_background_mean(ptr(outputs), outputs.shape[0], outputs.shape[1],
                                 outputs.shape[2], ffi.NULL if weights is None else ptr(weights),
                                 ptr(means)), "fc_background_mean",
          lambda: f"outputs must be (c, n_b >= 1, k >= 1), got shape {outputs.shape}")


def affordable_pairs(perms, max_evals, pairs, counts, masks):
    check(lib.fc_affordable_pairs(ptr(perms), perms.shape[0], perms.shape[1], perms.shape[2],
                                  max_evals, masks.shape[1], ptr(pairs), ptr(counts),
                                  ptr(masks)), "fc_affordable_pairs",
          lambda: "every order must be a permutation of 0..k-1")
