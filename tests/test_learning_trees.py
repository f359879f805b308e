"""fastcredit.learning's tree side: PPO on decision records (gradient
against central finite differences) and the tree benchmark."""
from __future__ import annotations

import numpy as np
import pytest

from fastcredit import learning as L
from fastcredit.learning import ppo


def _records(seed=0, n=12, a=4, d=3):
    rng = np.random.default_rng(seed)
    f = rng.normal(size=(n, a, d))
    legal = rng.integers(2, a + 1, n)
    act = np.array([rng.integers(0, k) for k in legal])
    mu = rng.uniform(0.2, 0.9, n)
    adv = rng.normal(size=n)
    return f, legal, act, mu, adv


@pytest.mark.parametrize("seed", range(4))
def test_ppo_gradient_against_finite_differences(seed):
    f, legal, act, mu, adv = _records(seed)
    theta = np.random.default_rng(seed + 10).normal(scale=0.3, size=3)
    # a clip wide enough that no ratio sits on a kink, and one that clips some
    for clip in (1.0, 0.2):
        _, g = ppo.ppo_objective(theta, f, legal, act, mu, adv, clip=clip)
        h = 1e-6
        fd = np.array([(ppo.ppo_objective(theta + h * e, f, legal, act, mu, adv, clip=clip)[0]
                        - ppo.ppo_objective(theta - h * e, f, legal, act, mu, adv,
                                            clip=clip)[0]) / (2 * h) for e in np.eye(3)])
        np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-8)


def test_ppo_leaves_nan_advantages_out_and_ascends():
    f, legal, act, mu, adv = _records(1)
    adv2 = adv.copy()
    adv2[3] = np.nan
    keep = np.arange(12) != 3
    v1 = ppo.ppo_objective(np.zeros(3), f, legal, act, mu, adv2)
    v2 = ppo.ppo_objective(np.zeros(3), f[keep], legal[keep], act[keep], mu[keep], adv[keep])
    assert v1[0] == v2[0] and np.array_equal(v1[1], v2[1])
    theta = ppo.ppo_update(np.zeros(3), f, legal, act, mu, adv, epochs=3, lr=0.01)
    assert ppo.ppo_objective(theta, f, legal, act, mu, adv)[0] > \
        ppo.ppo_objective(np.zeros(3), f, legal, act, mu, adv)[0]


@pytest.mark.parametrize("bad,name", [(dict(clip=2.0), "clip"), (dict(epochs=0), "epochs"),
                                      (dict(lr=-1.0), "lr")])
def test_ppo_bad_input_by_name(bad, name):
    f, legal, act, mu, adv = _records()
    with pytest.raises(ValueError, match=name):
        ppo.ppo_update(np.zeros(3), f, legal, act, mu, adv, **bad)
    with pytest.raises(ValueError, match="behaviour"):
        ppo.ppo_objective(np.zeros(3), f, legal, act, mu * 0, adv)
    with pytest.raises(ValueError, match="actions"):
        ppo.ppo_objective(np.zeros(3), f, legal, act + 5, mu, adv)


def test_tree_benchmark_runs_and_is_reproducible():
    kw = dict(methods=("asct_agent_uct", "vine", "return"), runs=1, updates=3, episodes=4,
              budget=6, k=6, seed=5)
    a, b = L.tree_benchmark(**kw), L.tree_benchmark(**kw)
    for m in kw["methods"]:
        np.testing.assert_array_equal(a.curves[m], b.curves[m])
        np.testing.assert_array_equal(a.aux_cost[m], b.aux_cost[m])
    assert a.aux_cost["return"][0] == 0 and a.aux_cost["vine"][0] > 0
    # the cache changes the ledger only
    c = L.tree_benchmark(**kw, use_cache=False)
    for m in kw["methods"]:
        np.testing.assert_array_equal(a.curves[m], c.curves[m])
    assert a.aux_executed["vine"][0] <= 0.5 * c.aux_executed["vine"][0]
    assert "initial actor" in a.table()
    with pytest.raises(ValueError, match="methods"):
        L.tree_benchmark(methods=("ppo",))


def test_learn_trees_command(capsys):
    from fastcredit.cli import main
    assert main(["learn-trees", "--methods", "return,asct_uniform", "--runs", "1",
                 "--updates", "2", "--episodes", "3", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "asct_uniform" in out and "initial actor" in out
    assert main(["learn-trees", "--methods", "ppo"]) == 2
    assert "--methods" in capsys.readouterr().err


@pytest.mark.parametrize("bad", ["no", 0.5, None])
def test_tree_benchmark_use_cache_is_a_bool(bad):
    """bool(use_cache) took "no" and 0.5 as True (found by tests/test_fuzz.py)."""
    with pytest.raises(TypeError, match="use_cache"):
        L.tree_benchmark(methods=("return",), runs=1, updates=1, episodes=1, use_cache=bad)


@pytest.mark.parametrize("flag,declared", [("--runs", "RUNS"), ("--updates", "PPO_UPDATES"),
                                           ("--episodes", "EPISODES"),
                                           ("--budget", "TREE_BUDGET"),
                                           ("--k", "CONTINUATIONS")])
def test_learn_trees_options_are_the_declared_ones(capsys, flag, declared):
    """learn-trees' bounds are fastcredit._params' (the library's): one past
    the declared maximum is refused with exit status 2 naming the option."""
    from fastcredit import _params
    from fastcredit.cli import main
    hi = getattr(_params, declared).hi
    for args, name in (([flag, str(hi + 1)], flag.lstrip("-")), (["--c-tok", "-1"], "c_tok")):
        with pytest.raises(SystemExit) as exit_:
            main(["learn-trees", "--methods", "return", *args])
        assert exit_.value.code == 2
        assert name in capsys.readouterr().err
