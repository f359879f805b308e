"""C backend of the auction family (csrc/auction.c); same signature as
fastcredit._numba.auction.replay."""
from . import check, ffi, lib, ptr

__all__ = ["replay"]


def replay(offsets, ad_id, score, value, prerank, m, start, stop, slots, reserve, capacity,
           pricing, mode, out, win_ad, win_earn):
    win = win_ad.shape[1] == out.shape[1]
    check(lib.fc_auction_replay(
        ptr(offsets), ptr(ad_id), ptr(score), ptr(value),
        ptr(prerank) if prerank.shape[0] else ffi.NULL, score.shape[0], out.shape[0], m,
        start, stop, slots, reserve, capacity, pricing, mode, ptr(out),
        ptr(win_ad) if win else ffi.NULL, ptr(win_earn) if win else ffi.NULL),
        "fc_auction_replay")
