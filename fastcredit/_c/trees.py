"""C backend of the trees family (csrc/trees.c); the same signatures as
fastcredit._numba.trees."""
import math

import numpy as np

from . import check, ffi, lib, offsets_refused, ptr

__all__ = ["actor_centered_credit", "allocation_pick", "allocation_tell_pick"]
# _tree and _finish (below) drive a user's environment: their Numba twins are
# fastcredit._jit.trees.tree and .finish (drivers of @njit functions, not
# kernels of fastcredit._numba.trees), so they stay out of the twins' list


def actor_centered_credit(q, pi, offsets, uniform, atol, actions, credit, baseline, sampled):
    bad = ffi.new("int64_t *")
    rc = lib.fc_actor_centered_credit(
        ptr(q), ffi.NULL if uniform else ptr(pi), ptr(offsets), offsets.shape[0] - 1,
        int(uniform), atol, ffi.NULL if actions is None else ptr(actions), ptr(credit),
        ptr(baseline), ffi.NULL if actions is None else ptr(sampled), bad)
    if rc > 0:
        return rc, int(bad[0])
    check(rc, "fc_actor_centered_credit",
          lambda: offsets_refused(offsets, 0, offsets.shape[0] - 1, None) or
          (f"offsets[0] = {offsets[0]} is not 0" if offsets[0] else None) or
          (f"atol = {atol} is negative or NaN" if not atol >= 0 else None))
    return 0, -1


def allocation_pick(rule, counts, sums, costs, c, c_tok, seed, step):
    choice = ffi.new("int64_t *")
    check(lib.fc_allocation_pick(rule, counts.shape[0], ptr(counts), ptr(sums), ptr(costs),
                                 c, c_tok, int(seed), step, choice), "fc_allocation_pick",
          lambda: _pick_refused(rule, counts))
    return int(choice[0])


def allocation_tell_pick(rule, counts, sums, costs, c, c_tok, seed, step, told, value):
    choice = ffi.new("int64_t *")
    check(lib.fc_allocation_tell_pick(rule, counts.shape[0], ptr(counts), ptr(sums), ptr(costs),
                                      c, c_tok, int(seed), step, told, value, choice),
          "fc_allocation_tell_pick", lambda: _tell_refused(rule, counts, told, value))
    return int(choice[0])


def _tell_refused(rule, counts, told, value):
    """The first condition of fc_allocation_tell_pick's checks that these
    arguments break, naming the argument."""
    if not -1 <= told < counts.shape[0]:
        return f"told = {told} is not -1 or an action"
    if told >= 0 and not math.isfinite(value):
        return f"value = {value} is not finite"
    if told >= 0 and counts[told] == 2**63 - 1:
        return f"counts[{told}] = 2**63 - 1 cannot take another trial"
    return _pick_refused(rule, counts)


def _pick_refused(rule, counts):
    """The first condition of fc_allocation_pick's checks that these
    arguments break, naming the argument."""
    # else no action's score equals the best one: a NaN score (sums, c, c_tok or costs)
    return _arguments_refused(rule, counts) or ("no action could be picked: a score is NaN "
                                                "(sums, c, c_tok or costs)")


def _arguments_refused(rule, counts):
    """The first of fc_allocation_pick's checks of rule and counts that they
    break, naming the argument (None if none)."""
    if not lib.FC_ALLOC_UNIFORM <= rule <= lib.FC_ALLOC_AGENT_UCT:
        return f"rule = {rule} is not an FC_ALLOC_* code"
    if not 1 <= counts.shape[0] <= lib.FC_RNG_MAX_RANGE:
        return f"{counts.shape[0]} actions is outside 1..{lib.FC_RNG_MAX_RANGE}"
    if (counts < 0).any():
        a = int(np.flatnonzero(counts < 0)[0])
        return f"counts[{a}] = {counts[a]} is negative"
    if int(counts.sum(dtype=object)) > 2**63 - 1:
        return "counts sum past 2**63 - 1"
    return None


# --- the whole tree over a user's @njit environment (fc_counterfactual_tree) ---

_CALLBACKS = {}


def _F64(arr):
    if arr.dtype != np.float64:
        raise TypeError(f"expected a float64 array, got {arr.dtype}")
    return ffi.from_buffer("double[]", arr)


def _I64(arr):
    if arr.dtype != np.int64:
        raise TypeError(f"expected an int64 array, got {arr.dtype}")
    return ffi.from_buffer("int64_t[]", arr)


def _callbacks(n_actions, step, utility, features, step_cost, n_features):
    """C function pointers to an environment's ``@njit`` functions (Numba
    ``@cfunc`` wrappers, compiled once per set of functions and d): the
    arguments of fc_counterfactual_tree's callbacks. The wrappers are kept
    alive here, with the pointers."""
    key = (n_actions, step, utility, features, step_cost, n_features)
    found = _CALLBACKS.get(key)
    if found is not None:
        return found[0]
    from numba import carray, cfunc, types
    i64, f64, ptr64 = types.int64, types.float64, types.CPointer(types.float64)
    d = int(n_features)

    @cfunc(i64(i64), nogil=True)
    def c_n_actions(s):
        return n_actions(s)

    @cfunc(i64(i64, i64, ptr64), nogil=True)
    def c_step(s, a, cost):
        nxt, x = step(s, a)
        cost[0] = x
        return nxt

    @cfunc(f64(i64), nogil=True)
    def c_utility(s):
        return utility(s)

    @cfunc(types.void(i64, i64, ptr64), nogil=True)
    def c_features(s, a, out):
        features(s, a, carray(out, (d,)))

    @cfunc(f64(i64, i64), nogil=True)
    def c_step_cost(s, a):
        return step_cost(s, a)

    wrappers = (c_n_actions, c_step, c_utility, c_features, c_step_cost)
    pointers = tuple(ffi.cast(t, w.address) for t, w in zip(
        ("fc_env_n_actions", "fc_env_step", "fc_env_utility", "fc_env_features",
         "fc_env_step_cost"), wrappers))
    _CALLBACKS[key] = (pointers, wrappers)
    return pointers


def _tree(n_actions, step, utility, features, step_cost, node_state, node_nact, node_cost,
         node_child, n_nodes, prefix, theta, rule, budget, c, c_tok, seed, use_cache, counts,
         sums, trial_action, trial_return, trial_executed, trial_reused, trial_cost, restore,
         pi):
    """fastcredit._jit.trees.tree in C (the same signature and status codes),
    and ``pi`` (max_actions,): the actor's probabilities at the visited
    state (its first n entries)."""
    fns = _callbacks(n_actions, step, utility, features, step_cost, theta.shape[0])
    # the arrays' dtypes are the engine's own (ptr looks the dtype up: ~0.5 us each)
    f, i = _F64, _I64
    rc = lib.fc_counterfactual_tree(
        *fns, theta.shape[0], node_child.shape[1], node_state.shape[0], i(node_state),
        i(node_nact), f(node_cost), i(node_child), i(n_nodes), i(prefix), prefix.shape[0],
        f(theta), int(rule), int(budget), float(c), float(c_tok), int(seed),
        int(bool(use_cache)), i(counts), f(sums), f(pi), i(trial_action), f(trial_return),
        f(trial_executed), f(trial_reused), f(trial_cost), f(restore))
    if rc >= 0:
        return rc
    check(rc, "fc_counterfactual_tree", lambda: None)


def _finish(counts, sums, pi, n, trial_action, trial_return, uniform, q, stderr, credit):
    """fastcredit._jit.trees.finish in C: returns the baseline."""
    out = ffi.new("double *")
    check(lib.fc_tree_finish(ptr(counts), ptr(sums), ptr(pi), int(n), ptr(trial_action),
                             ptr(trial_return), trial_action.shape[0], int(bool(uniform)),
                             ptr(q), ptr(stderr), ptr(credit), out), "fc_tree_finish",
          lambda: None)
    return float(out[0])
