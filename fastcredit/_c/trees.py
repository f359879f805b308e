"""C backend of the trees family (csrc/trees.c); the same signatures as
fastcredit._numba.trees."""
from . import check, ffi, lib, ptr

__all__ = ["actor_centered_credit", "allocation_pick"]


def actor_centered_credit(q, pi, offsets, uniform, credit, baseline):
    check(lib.fc_actor_centered_credit(ptr(q), ffi.NULL if uniform else ptr(pi), ptr(offsets),
                                       offsets.shape[0] - 1, int(uniform), ptr(credit),
                                       ptr(baseline)), "fc_actor_centered_credit")


def allocation_pick(rule, counts, sums, costs, c, c_tok, seed, step):
    choice = ffi.new("int64_t *")
    check(lib.fc_allocation_pick(rule, counts.shape[0], ptr(counts), ptr(sums), ptr(costs),
                                 c, c_tok, int(seed), step, choice), "fc_allocation_pick")
    return int(choice[0])
