"""C backend of the approximator family (csrc/approximators.c)."""
from . import check, lib, ptr

__all__ = ["draw_svarm", "draw_stratified", "draw_owen", "fold_pairs", "fold_svarm"]


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


def fold_svarm(masks, values, m, centre, count, first, s1, s2):
    check(lib.fc_approx_fold_svarm(ptr(masks), ptr(values), masks.shape[0], m, float(centre),
                                   ptr(count), ptr(first), ptr(s1), ptr(s2)),
          "fc_approx_fold_svarm")
