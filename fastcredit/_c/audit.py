"""C backend of the audit family (csrc/audit.c); the same signatures as
fastcredit._numba.audit."""
from . import check, ffi, lib, ptr

__all__ = ["bootstrap_median", "bootstrap_mean_diff", "percentile_interval", "spearman_groups", "alignment_rows",
           "shuffle_groups", "derangement", "replay_advantage", "bootstrap_spearman_diff",
           "null_worlds"]


def _opt(arr):
    """A pointer, or NULL for an empty array (an absent optional input)."""
    return ptr(arr) if arr.shape[0] else ffi.NULL


def bootstrap_median(sorted_a, order_a, sorted_b, order_b, seed, start, stop, counts, out):
    check(lib.fc_bootstrap_median(ptr(sorted_a), ptr(order_a), _opt(sorted_b), _opt(order_b),
                                  sorted_a.shape[0], int(seed), start, stop, ptr(counts),
                                  ptr(out)), "fc_bootstrap_median")


def bootstrap_mean_diff(offsets, a_values, b_values, resamples, seed, first_item, out):
    check(lib.fc_bootstrap_mean_diff(ptr(offsets), ptr(a_values), offsets.shape[0] - 1,
                                     _opt(b_values), b_values.shape[0], resamples, int(seed),
                                     int(first_item), ptr(out)), "fc_bootstrap_mean_diff")


def percentile_interval(reps, shift, q_low, q_high, low, high):
    check(lib.fc_percentile_interval(ptr(reps), reps.shape[0], reps.shape[1], shift, q_low,
                                     q_high, ptr(low), ptr(high)), "fc_percentile_interval")


def spearman_groups(offsets, x, y, min_len, idx, ranks, rho, status):
    check(lib.fc_spearman_groups(ptr(offsets), offsets.shape[0] - 1, ptr(x), ptr(y), min_len,
                                 ptr(idx), ptr(ranks), ptr(rho),
                                 ffi.from_buffer("int8_t[]", status)), "fc_spearman_groups")


def _alignment_refused(credit, atol, work, idx) -> str | None:
    """What fc_alignment_rows refuses, naming the argument (None: nothing)."""
    if credit.shape[1] < 2:
        return f"credit must have m >= 2 columns, got {credit.shape[1]}"
    if not 0.0 <= atol < float("inf"):
        return f"atol must be finite and >= 0, got {atol}"
    if work.shape[0] < 5 * credit.shape[1] or idx.shape[0] < credit.shape[1]:
        return f"work and idx must hold 5 m and m = {credit.shape[1]} entries"
    return None


def alignment_rows(credit, reference, center, atol, work, idx, cosine, sign, sign_nonzero,
                   spearman, top, defined):
    check(lib.fc_alignment_rows(credit.shape[0], credit.shape[1], ptr(credit), ptr(reference),
                                bool(center), atol, ptr(work), ptr(idx), ptr(cosine), ptr(sign),
                                ptr(sign_nonzero), ptr(spearman),
                                ffi.from_buffer("uint8_t[]", top),
                                ffi.from_buffer("uint8_t[]", defined)),
          "fc_alignment_rows", lambda: _alignment_refused(credit, atol, work, idx))


def shuffle_groups(offsets, x, seed, first_item, out):
    check(lib.fc_shuffle_groups(ptr(offsets), offsets.shape[0] - 1, ptr(x), int(seed),
                                int(first_item), ptr(out)), "fc_shuffle_groups")


def derangement(n, seed, out):
    check(lib.fc_derangement(n, int(seed), ptr(out)), "fc_derangement")


def replay_advantage(f_offsets, f_values, a_offsets, a_values, alpha, threshold, advantage,
                     noise, resolution, critical):
    bad = ffi.new("int64_t *")
    rc = lib.fc_replay_advantage(ptr(f_offsets), ptr(f_values), ptr(a_offsets), ptr(a_values),
                                 f_offsets.shape[0] - 1, alpha, threshold, ptr(advantage),
                                 ptr(noise), ptr(resolution),
                                 ffi.from_buffer("uint8_t[]", critical), bad)
    if bad[0] >= 0:
        return int(bad[0])
    check(rc, "fc_replay_advantage")
    return -1


def bootstrap_spearman_diff(sorted_x, order_x, sorted_y, order_y, sorted_z, order_z, seed,
                            start, stop, counts, ranks, out):
    check(lib.fc_bootstrap_spearman_diff(ptr(sorted_x), ptr(order_x), ptr(sorted_y),
                                         ptr(order_y), ptr(sorted_z), ptr(order_z),
                                         sorted_x.shape[0], int(seed), start, stop, ptr(counts),
                                         ptr(ranks), ptr(out)), "fc_bootstrap_spearman_diff")


def null_worlds(scale, edge_audit, edge_sign, edge_resid, pair_audit, pair_sign, pair_resid,
                phi_audit, phi_resid, atol, seed, start, stop, edge_hits, pair_hits, pair_count,
                cosine):
    i8 = lambda a: ffi.from_buffer("int8_t[]", a)   # noqa: E731
    check(lib.fc_null_worlds(scale.shape[0], edge_audit.shape[1], pair_audit.shape[1],
                             phi_audit.shape[1], ptr(scale), ptr(edge_audit), i8(edge_sign),
                             ptr(edge_resid), ptr(pair_audit), i8(pair_sign), ptr(pair_resid),
                             ptr(phi_audit), ptr(phi_resid), atol, int(seed), start, stop,
                             ptr(edge_hits), ptr(pair_hits), ptr(pair_count), ptr(cosine)),
          "fc_null_worlds")
