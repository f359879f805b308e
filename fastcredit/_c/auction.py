"""C backend of the auction family (csrc/auction.c); same signature as
fastcredit._numba.auction.replay."""
import math

from . import check, ffi, lib, offsets_refused, ptr

__all__ = ["replay"]


def replay(offsets, ad_id, score, value, prerank, m, start, stop, slots, reserve, capacity,
           pricing, mode, out, win_ad, win_earn):
    win = win_ad.shape[1] == out.shape[1]
    n_values, n_requests = score.shape[0], out.shape[0]
    check(lib.fc_auction_replay(
        ptr(offsets), ptr(ad_id), ptr(score), ptr(value),
        ptr(prerank) if prerank.shape[0] else ffi.NULL, n_values, n_requests, m,
        start, stop, slots, reserve, capacity, pricing, mode, ptr(out),
        ptr(win_ad) if win else ffi.NULL, ptr(win_earn) if win else ffi.NULL),
        "fc_auction_replay",
        lambda: _refused(offsets, n_values, n_requests, m, start, stop, slots, reserve,
                         capacity, pricing, mode))


def _refused(offsets, n_values, n_requests, m, start, stop, slots, reserve, capacity, pricing,
             mode):
    """The first condition of fc_auction_replay's argument check that these
    arguments break, naming the argument (the pointers are never NULL here)."""
    if not 1 <= m <= lib.FC_AUCTION_MAX_ACTIONS:
        return f"m = {m} is outside 1..{lib.FC_AUCTION_MAX_ACTIONS}"
    if not 0 <= start <= stop <= n_requests:
        return f"start = {start} and stop = {stop} are not a range of the {n_requests} requests"
    if slots < 1 or slots > (2**63 - 1) // 4 >> m:
        return f"slots = {slots} is outside 1..{(2**63 - 1) // 4 >> m} for m = {m}"
    if capacity < 0:
        return f"capacity = {capacity} is negative"
    if math.isnan(reserve):
        return "reserve is NaN"
    if pricing not in (lib.FC_PRICING_FIRST, lib.FC_PRICING_GSP):
        return f"pricing = {pricing} is not an FC_PRICING_* code"
    if mode not in (lib.FC_MODE_FILTER, lib.FC_MODE_RERUN):
        return f"mode = {mode} is not an FC_MODE_* code"
    if start < stop:
        return offsets_refused(offsets, start * m, stop * m, n_values, values="instances")
    return None
