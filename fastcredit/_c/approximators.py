"""C backend of the approximator family (csrc/approximators.c)."""
import numpy as np

from . import check, lib, ptr

__all__ = ["draw_svarm", "draw_stratified", "draw_owen", "fold_pairs"]


def draw_svarm(seed, game, first, m, sizes, cdf, masks):
    check(lib.fc_approx_draw_svarm(int(seed), int(game), first, masks.shape[0], m, ptr(sizes),
                                   ptr(cdf), sizes.shape[0], ptr(masks)),
          "fc_approx_draw_svarm")


def draw_stratified(seed, game, first, m, masks, slots):
    check(lib.fc_approx_draw_stratified(int(seed), int(game), first, slots.shape[0], m,
                                        ptr(masks), ptr(slots)), "fc_approx_draw_stratified")


def draw_owen(seed, game, first, m, anchors, masks, slots):
    check(lib.fc_approx_draw_owen(int(seed), int(game), first, slots.shape[0], m, ptr(anchors),
                                  anchors.shape[0], ptr(masks), ptr(slots)),
          "fc_approx_draw_owen")


def fold_pairs(values, slots, count, first, s1, s2):
    check(lib.fc_approx_fold_pairs(ptr(values), ptr(slots), slots.shape[0], count.shape[0],
                                   ptr(count), ptr(first), ptr(s1), ptr(s2)),
          "fc_approx_fold_pairs")


# --- Monte-Carlo interaction estimators (SVARM-IQ, SHAP-IQ) ---------------------

__all__ += ["fold_svarmiq", "fold_shapiq"]


def fold_svarmiq(masks, values, m, centre, members, sizes, order, count, first, s1, s2):
    if members.shape != (sizes.shape[0], order) or values.shape != masks.shape:
        raise ValueError("fold_svarmiq: members must be (n_subsets, order) and values match "
                         "masks")
    if count.shape[0] < (sizes.shape[0] << order) * (m + 1):
        raise ValueError("fold_svarmiq: the moments must hold every stratum")
    check(lib.fc_approx_fold_svarmiq(ptr(masks), ptr(values), masks.shape[0], m, float(centre),
                                     ptr(members), ptr(sizes), sizes.shape[0], order,
                                     ptr(count), ptr(first), ptr(s1), ptr(s2)),
          "fc_approx_fold_svarmiq")


def fold_shapiq(masks, values, m, centre, members, sizes, order, weights, count, first, s1,
                s2):
    if masks.ndim != 2 or values.shape != masks.shape:
        raise ValueError("fold_shapiq: masks and values must be (n_units, per_unit)")
    if members.shape != (sizes.shape[0], order) or count.shape[0] < sizes.shape[0]:
        raise ValueError("fold_shapiq: members must be (n_subsets, order), a moment per "
                         "subset")
    if weights.shape[0] < (order + 1) * (m + 1) * (order + 1):
        raise ValueError("fold_shapiq: weights must be (order + 1, m + 1, order + 1)")
    check(lib.fc_approx_fold_shapiq(ptr(masks), ptr(values), masks.shape[0], masks.shape[1], m,
                                    float(centre), ptr(members), ptr(sizes), sizes.shape[0],
                                    order, ptr(weights), ptr(count), ptr(first), ptr(s1),
                                    ptr(s2)), "fc_approx_fold_shapiq")


# --- regression estimators ------------------------------------------------------

__all__ += ["fold_regression", "fold_scores", "cholesky_solve"]

def fold_regression(masks, values, centre, weights, columns, column_sizes, coef, work_x,
                    work_i, gram, moment):
    check(lib.fc_approx_fold_regression(
        ptr(masks), ptr(values), masks.shape[0], weights.shape[1] - 1, float(centre),
        ptr(weights), weights.shape[0], ptr(columns), ptr(column_sizes), columns.shape[0],
        ptr(coef), coef.shape[0] - 1, ptr(work_x), ptr(work_i), ptr(gram), ptr(moment)),
        "fc_approx_fold_regression")


def fold_scores(masks, values, centre, weights, columns, column_sizes, coef, phi, reach,
                work_x, work_i, work_g, work_fit, scores_sq, scores):
    check(lib.fc_approx_fold_scores(
        ptr(masks), ptr(values), masks.shape[0], masks.shape[1], weights.shape[1] - 1,
        float(centre), ptr(weights), weights.shape[0], ptr(columns), ptr(column_sizes),
        columns.shape[0], ptr(coef), coef.shape[0] - 1, ptr(phi), ptr(reach), ptr(work_x),
        ptr(work_i), ptr(work_g), ptr(work_fit), ptr(scores_sq), ptr(scores)),
        "fc_approx_fold_scores")


def cholesky_solve(a, rhs, info):
    check(lib.fc_approx_cholesky_solve(ptr(a), a.shape[0], ptr(rhs), rhs.shape[0], ptr(info)),
          "fc_approx_cholesky_solve")


# --- sparse transform (SPEX): binary BCH decoding --------------------------------

__all__ += ["bch_decode"]


def bch_decode(received, order, t, gf_exp, gf_log, decoded, n_errors):
    if received.ndim != 2 or received.dtype != np.uint8 or not received.flags.c_contiguous:
        raise ValueError("bch_decode: received must be a C-contiguous (n_words, length) uint8 "
                         "array")
    if decoded.shape != received.shape or decoded.dtype != np.uint8 \
            or not decoded.flags.c_contiguous:
        raise ValueError("bch_decode: decoded must be a C-contiguous uint8 array shaped like "
                         "received")
    if n_errors.shape != (received.shape[0],) or n_errors.dtype != np.int64:
        raise ValueError("bch_decode: n_errors must be (n_words,) int64")
    if gf_exp.dtype != np.int32 or gf_exp.shape[0] < 2 * order \
            or gf_log.dtype != np.int32 or gf_log.shape[0] < order + 1:
        raise ValueError("bch_decode: gf_exp must be (2 * order,) and gf_log (order + 1,) "
                         "int32")
    check(lib.fc_approx_bch_decode(ptr(received), received.shape[0], received.shape[1],
                                   int(order), int(t), ptr(gf_exp), ptr(gf_log), ptr(decoded),
                                   ptr(n_errors)), "fc_approx_bch_decode")


__all__ += ["spex_detect"]


def spex_detect(u, subsampling, delays, order, t, gf_exp, gf_log, soft, cutoff, energy_cutoff,
                to_check, status, k, rho, work):
    if u.ndim != 3 or u.dtype != np.float64 or not u.flags.c_contiguous:
        raise ValueError("spex_detect: u must be a C-contiguous (n_groups, n_delays, n_bins) "
                         "float64 array")
    n_groups, n_delays, n_bins = u.shape
    if subsampling.ndim != 3 or subsampling.shape[0] != n_groups or subsampling.dtype != np.uint8 \
            or not subsampling.flags.c_contiguous or n_bins != 1 << subsampling.shape[2]:
        raise ValueError("spex_detect: subsampling must be C-contiguous (n_groups, n, b) uint8 "
                         "with n_bins = 2**b")
    n, b = subsampling.shape[1], subsampling.shape[2]
    if delays.shape != (n_delays, n) or delays.dtype != np.uint8 \
            or not delays.flags.c_contiguous:
        raise ValueError("spex_detect: delays must be C-contiguous (n_delays, n) uint8")
    for name, a, dtype in (("to_check", to_check, np.uint8), ("status", status, np.uint8),
                           ("rho", rho, np.float64)):
        if a.shape != (n_groups, n_bins) or a.dtype != dtype or not a.flags.c_contiguous:
            raise ValueError(f"spex_detect: {name} must be C-contiguous (n_groups, n_bins) "
                             f"{np.dtype(dtype).name}")
    if k.shape != (n_groups, n_bins, n) or k.dtype != np.uint8 or not k.flags.c_contiguous:
        raise ValueError("spex_detect: k must be C-contiguous (n_groups, n_bins, n) uint8")
    length = n + n_delays - 1
    if work.dtype != np.uint8 or work.ndim != 1 or \
            work.shape[0] < (t * (t + 1) // 2 + 3) * length:
        raise ValueError("spex_detect: work must be (t (t + 1) / 2 + 3) (n + n_delays - 1) "
                         "uint8")
    if gf_exp.dtype != np.int32 or gf_exp.shape[0] < 2 * order \
            or gf_log.dtype != np.int32 or gf_log.shape[0] < order + 1:
        raise ValueError("spex_detect: gf_exp must be (2 * order,) and gf_log (order + 1,) "
                         "int32")
    check(lib.fc_approx_spex_detect(ptr(u), n_groups, n_delays, b, ptr(subsampling),
                                    ptr(delays), n, int(order), int(t), ptr(gf_exp),
                                    ptr(gf_log), int(bool(soft)), float(cutoff),
                                    float(energy_cutoff), ptr(to_check), ptr(status), ptr(k),
                                    ptr(rho), ptr(work)), "fc_approx_spex_detect")


# --- ProxySPEX: the Fourier coefficients of a fitted tree ensemble (csrc/proxyspex.c) ---

__all__ += ["tree_fourier"]


def tree_fourier(split_feature, left_child, right_child, node_start, leaf_value, leaf_start, m,
                 slots, masks, values, counts):
    n_trees = node_start.shape[0] - 1
    if n_trees < 0 or leaf_start.shape[0] != n_trees + 1:
        raise ValueError("tree_fourier: node_start and leaf_start must be (n_trees + 1,)")
    if int(node_start[-1]) > min(split_feature.shape[0], left_child.shape[0],
                                 right_child.shape[0]) or int(leaf_start[-1]) > \
            leaf_value.shape[0]:
        raise ValueError("tree_fourier: the offsets pass the end of the node or leaf arrays")
    if masks.shape[0] != values.shape[0] or counts.shape[0] != 2:
        raise ValueError("tree_fourier: masks and values must be alike, counts (2,)")
    check(lib.fc_approx_tree_fourier(
        ptr(split_feature), ptr(left_child), ptr(right_child), ptr(node_start), ptr(leaf_value),
        ptr(leaf_start), n_trees, m, ptr(slots), slots.shape[0], ptr(masks), ptr(values),
        masks.shape[0], ptr(counts[:1]), ptr(counts[1:])), "fc_approx_tree_fourier")
