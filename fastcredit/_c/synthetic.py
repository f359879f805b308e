"""C backend of the synthetic family (csrc/synthetic.c); same signatures as
fastcredit._numba.synthetic."""
from . import check, ffi, lib, ptr

__all__ = ["search_lengths", "search_fill", "replay_repeats"]


def search_lengths(seed, first, m, k, empty, short, lengths, start, stop):
    check(lib.fc_synthetic_search_lengths(seed, first, m, k, empty, short, ptr(lengths),
                                          start, stop), "fc_synthetic_search_lengths")


def search_fill(seed, first, m, topics, per_topic, bid, ctr, noise, expected_value, offsets,
                ad, score, value, prerank, start, stop):
    nonfinite = ffi.new("int64_t *")
    check(lib.fc_synthetic_search_fill(
        seed, first, m, topics, per_topic, ptr(bid), ptr(ctr), noise, expected_value,
        ptr(offsets), ad.shape[0],
        ptr(ad), ptr(score), ptr(value), ptr(prerank), start, stop, nonfinite),
        "fc_synthetic_search_fill")
    return int(nonfinite[0])


def replay_repeats(seed, first, m, tables, repeats, noise, out, start, stop):
    check(lib.fc_synthetic_replay_repeats(seed, first, m, ptr(tables), repeats, noise, ptr(out),
                                          start, stop), "fc_synthetic_replay_repeats")
