"""Bench of the counterfactual-tree engine (fastcredit.treesearch), issue 30's targets:

* one tree of B = 48 trials on the @njit workflow (depth 6, 5 actions per
  state), compiled engine: target <= 50 us (the public call; the
  environment's bound search, fastcredit._jit.trees.bound, called on a
  prepared trie; and the same 100 times inside one compiled loop, the
  kernel without Numba's dispatch);
* a Python environment's harness overhead per executed step: the Python
  engine on a trivial Python environment (step, n_actions, utility doing
  nothing but integer arithmetic) minus those functions' own time:
  target <= 5 us;
* prefix reuse on the tree benchmark's episodes: executed steps with the
  cache / without: target <= 0.5, and the ledger against an independent
  count of the environment's steps.

python bench/trees_engine.py
"""
import platform
import time

import numpy as np
from numba import njit

import fastcredit.treesearch as ts
from fastcredit._jit import trees as jt
from fastcredit.learning import workflow as W


def best(fn, repeat=7, number=200):
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(number):
            fn()
        out.append((time.perf_counter() - t) / number)
    return min(out)


class Trivial:
    """Depth 6, 5 actions; states are ints, steps cost 1."""
    n_features = 1

    def n_actions(self, s):
        return 0 if s >= 6 * 8 else 5

    def step(self, s, a):
        return s + 8, 1.0

    def utility(self, s):
        return 1.0


class TrivialBatched(Trivial):
    def step_batch(self, states, actions):
        return [s + 8 for s in states], [1.0] * len(states)


def main():
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), platform.processor())
    print(f"machine: {cpu}")
    env = W.environment()
    root = W.root(1, 2)
    actor = ts.SoftmaxActor(np.random.default_rng(0).normal(scale=0.5, size=W.N_FEATURES))
    ts.counterfactual_tree(env, root, [], actor, budget=48)      # compile
    search = jt.bound(env.n_actions, env.step, env.utility, env.features, env.step_cost)
    n = env.max_actions
    bufs = (np.zeros(n, np.int64), np.zeros(48, np.int64), np.zeros((5, n)), np.zeros((4, 48)),
            np.zeros(4), np.zeros(2, np.int64))
    empty = np.zeros(0, np.int64)

    @njit(nogil=True)
    def loop(times, node_state, node_nact, node_cost, node_child, n_nodes, theta, code,
             a, b, c, d, e, f):
        for _ in range(times):
            n_nodes[0] = 1
            search(node_state, node_nact, node_cost, node_child, n_nodes, empty, theta, code,
                   48, 1.0, 0.05, np.uint64(0), True, False, a, b, c, d, e, f)

    for rule in ts.ALLOCATORS:
        pub = best(lambda: ts.counterfactual_tree(env, root, [], actor, budget=48, rule=rule))
        cache = ts.PrefixCache(env, root, capacity=1 << 12)
        code = {"uniform": 0, "uct": 1, "agent_uct": 2}[rule]

        def bare():
            cache.n_nodes[0] = 1      # a fresh trie: the root only
            search(*cache.arrays(), empty, actor.theta, code, 48, 1.0, 0.05, np.uint64(0),
                   True, False, *bufs)
        bare()
        kern = best(bare)
        loop(1, *cache.arrays(), actor.theta, code, *bufs)
        inner = best(lambda: loop(100, *cache.arrays(), actor.theta, code, *bufs),
                     number=5) / 100
        print(f"tree B=48 depth 6 x 5 actions, {rule:<9}: public {pub * 1e6:6.1f} us, "
              f"compiled call {kern * 1e6:5.1f} us, in a compiled loop {inner * 1e6:5.1f} us "
              f"(target <= 50 us)")
    # the C twin (fc_counterfactual_tree over @cfunc pointers), AgentUCT
    from fastcredit._c import trees as ct
    cache = ts.PrefixCache(env, root, capacity=1 << 12)
    cargs = (np.zeros(n, np.int64), np.zeros(n), np.zeros(48, np.int64), np.zeros(48),
             np.zeros(48), np.zeros(48), np.zeros(48), np.zeros(3), np.zeros(n))

    def c_call():
        cache.n_nodes[0] = 1
        ct._tree(env.n_actions, env.step, env.utility, env.features, env.step_cost,
                *cache.arrays(), empty, actor.theta, 2, 48, 1.0, 0.05, np.uint64(0), True,
                *cargs)
    c_call()
    ts.counterfactual_tree(env, root, [], actor, budget=48, rule="agent_uct", backend="c")
    pub = best(lambda: ts.counterfactual_tree(env, root, [], actor, budget=48,
                                              rule="agent_uct", backend="c"))
    print(f"tree B=48 depth 6 x 5 actions, agent_uct, C twin: public {pub * 1e6:6.1f} us, "
          f"C call {best(c_call) * 1e6:5.1f} us")
    # the Python harness: the whole tree on a trivial environment, per executed step
    triv = Trivial()
    res = ts.counterfactual_tree(triv, 0, budget=48, use_cache=False)
    steps = res.ledger.executed
    t_tree = best(lambda: ts.counterfactual_tree(triv, 0, budget=48, use_cache=False),
                  repeat=5, number=20)
    t_env = best(lambda: [(triv.step(0, 1), triv.n_actions(8)) for _ in range(steps)] +
                 [triv.utility(0) for _ in range(48)], repeat=5, number=20)
    print(f"Python harness: {(t_tree - t_env) / steps * 1e6:.2f} us per executed step over "
          f"the environment's own {t_env / steps * 1e6:.2f} us ({steps} steps per tree; "
          f"target <= 5 us)")
    # the same with step_batch (uniform rule: one call per round of the 48 trials)
    batched = TrivialBatched()
    t_batch = best(lambda: ts.counterfactual_tree(batched, 0, budget=48, use_cache=False),
                   repeat=5, number=20)
    t_benv = best(lambda: [batched.step_batch([0] * 48, [1] * 48) for _ in range(6)] +
                  [(batched.n_actions(8), batched.utility(0)) for _ in range(steps)],
                  repeat=5, number=20)
    print(f"Python harness with step_batch: {(t_batch - t_benv) / steps * 1e6:.2f} us per "
          f"executed step over the environment's own {t_benv / steps * 1e6:.2f} us")
    # prefix reuse on the benchmark's episodes
    for credit, rule in (("asct", "uniform"), ("asct", "agent_uct"), ("vine", "uniform")):
        on = off = None
        count = {}
        for use_cache in (True, False):
            counted = _Counting(env.python())
            led = ts.RunLedger()
            for e, r in enumerate(W.sample_roots(32, seed=1)):
                led = led + ts.decision_records(counted, int(r), actor, credit=credit,
                                                rule=rule, budget=10, k=10, seed=e,
                                                use_cache=use_cache).ledger
            count[use_cache] = counted.steps
            if use_cache:
                on = led
            else:
                off = led
        ratio = on.executed / off.executed
        print(f"prefix reuse, {credit}/{rule:<9} (32 episodes): executed {on.executed} with "
              f"the cache vs {off.executed} without = {ratio:.2f}x (target <= 0.5); ledger "
              f"== count: {on.executed + on.actor_executed == count[True]} and "
              f"{off.executed + off.actor_executed == count[False]}")


class _Counting:
    def __init__(self, env):
        self.env, self.steps, self.n_features = env, 0, env.n_features

    def step(self, s, a):
        self.steps += 1
        return self.env.step(s, a)

    def __getattr__(self, name):
        return getattr(self.env, name)


if __name__ == "__main__":
    main()
