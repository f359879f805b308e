"""C backend of the trees family (csrc/trees.c); the same signatures as
fastcredit._numba.trees."""
import numpy as np

from . import check, ffi, lib, offsets_refused, ptr

__all__ = ["actor_centered_credit", "allocation_pick"]


def actor_centered_credit(q, pi, offsets, uniform, credit, baseline):
    check(lib.fc_actor_centered_credit(ptr(q), ffi.NULL if uniform else ptr(pi), ptr(offsets),
                                       offsets.shape[0] - 1, int(uniform), ptr(credit),
                                       ptr(baseline)), "fc_actor_centered_credit",
          lambda: offsets_refused(offsets, 0, offsets.shape[0] - 1, None) or
          (f"offsets[0] = {offsets[0]} is not 0" if offsets[0] else None))


def allocation_pick(rule, counts, sums, costs, c, c_tok, seed, step):
    choice = ffi.new("int64_t *")
    check(lib.fc_allocation_pick(rule, counts.shape[0], ptr(counts), ptr(sums), ptr(costs),
                                 c, c_tok, int(seed), step, choice), "fc_allocation_pick",
          lambda: _pick_refused(rule, counts))
    return int(choice[0])


def _pick_refused(rule, counts):
    """The first condition of fc_allocation_pick's checks that these
    arguments break, naming the argument."""
    if not lib.FC_ALLOC_UNIFORM <= rule <= lib.FC_ALLOC_AGENT_UCT:
        return f"rule = {rule} is not an FC_ALLOC_* code"
    if not 1 <= counts.shape[0] <= lib.FC_RNG_MAX_RANGE:
        return f"{counts.shape[0]} actions is outside 1..{lib.FC_RNG_MAX_RANGE}"
    if (counts < 0).any():
        a = int(np.flatnonzero(counts < 0)[0])
        return f"counts[{a}] = {counts[a]} is negative"
    if int(counts.sum(dtype=object)) > 2**63 - 1:
        return "counts sum past 2**63 - 1"
    # no action's score equals the best one: a NaN score (sums, c, c_tok or costs)
    return "no action could be picked: a score is NaN (sums, c, c_tok or costs)"
