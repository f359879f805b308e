"""Malformed input at every tables entry point: a clear error naming the
argument, never a crash or a read out of bounds."""
import sys

import numpy as np
import pytest

import fastcredit as fc

KERNELS = [fc.shapley, fc.banzhaf, fc.singleton, fc.leave_one_out, fc.size_resolved,
           fc.pair_interactions, fc.moebius, fc.from_moebius,
           lambda v, **kw: fc.semivalue(v, np.ones(3), **kw)]  # the valid tables here have m = 3


@pytest.fixture(params=range(len(KERNELS)))
def kernel(request):
    return KERNELS[request.param]


def _table_arg(kernel) -> str:
    """The name of the kernel's table argument (from_moebius takes ``a``)."""
    return "a" if kernel is fc.from_moebius else "v"


@pytest.mark.parametrize("length", [0, 1, 3, 6, 12, 100])
def test_length_not_a_power_of_two(kernel, length):
    with pytest.raises(ValueError,
                       match=f"^{_table_arg(kernel)} must have a last axis of length 2\\*\\*m"):
        kernel(np.zeros((2, length)))


def test_scalar(kernel):
    with pytest.raises(ValueError, match="v"):
        kernel(np.float64(3.0))


def test_too_many_players_is_rejected_before_any_copy(kernel):
    huge = np.broadcast_to(np.zeros(1), (1 << 31,))  # 16 GiB if it were copied
    with pytest.raises(ValueError, match="m = 31 players"):
        kernel(huge)


@pytest.mark.parametrize("bad", [np.zeros(8, complex), np.array([None] * 8),
                                 np.array(["a"] * 8), np.zeros(8, np.float16)])
def test_wrong_dtype(kernel, bad):
    with pytest.raises(TypeError, match=f"^{_table_arg(kernel)} must be a real"):
        kernel(bad)


def test_integer_and_bool_tables_are_converted():
    v = np.array([0, 0, 0, 1])
    assert fc.shapley(v).tolist() == [0.5, 0.5]
    assert fc.shapley(v.astype(bool)).tolist() == [0.5, 0.5]


def test_bad_out(kernel):
    v = np.zeros((2, 8))
    good = kernel(v)
    with pytest.raises(ValueError, match="out must have shape"):
        kernel(v, out=np.empty((3,) + good.shape[1:]))
    with pytest.raises(TypeError, match="out must have dtype float64"):
        kernel(v, out=np.empty(good.shape, np.float32))
    with pytest.raises(TypeError, match="out must be a numpy array"):
        kernel(v, out=good.tolist())
    with pytest.raises(ValueError, match="out must be a writeable C-contiguous"):
        kernel(v, out=np.empty(good.shape[:-1] + (2 * good.shape[-1],))[..., ::2])
    ro = np.empty(good.shape)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="out must be a writeable"):
        kernel(v, out=ro)


@pytest.mark.parametrize("threads", [0, -1, 1.5, "2", True])
def test_bad_threads(kernel, threads):
    with pytest.raises((ValueError, TypeError), match="threads"):
        kernel(np.zeros((100, 8)), threads=threads)


@pytest.mark.parametrize("backend", ["C", "cuda", 1])
def test_unknown_backend(kernel, backend):
    with pytest.raises(ValueError, match="backend"):
        kernel(np.zeros(8), backend=backend)


def test_semivalue_weights():
    with pytest.raises(ValueError, match=r"weights must have shape \(3,\)"):
        fc.semivalue(np.zeros(8), [1.0, 2.0])
    with pytest.raises(TypeError, match="weights must be a real float64"):
        fc.semivalue(np.zeros(8), np.ones(3, complex))


@pytest.mark.parametrize("m", [0, 31, -2])
def test_weights_m_out_of_range(m):
    with pytest.raises(ValueError, match="m must be"):
        fc.shapley_weights(m)
    with pytest.raises(ValueError, match="m must be"):
        fc.banzhaf_weights(m)


class TestTableFromFunction:
    @pytest.mark.parametrize("m", [0, 31])
    def test_m_out_of_range(self, m):
        with pytest.raises(ValueError, match="m must be"):
            fc.table_from_function(lambda s: s * 0.0, m)

    def test_not_callable(self):
        with pytest.raises(TypeError, match="fn must be callable"):
            fc.table_from_function(np.zeros(8), 3)

    def test_wrong_shape_returned(self):
        with pytest.raises(ValueError, match=r"fn must return one value per coalition"):
            fc.table_from_function(lambda s: np.zeros(3), 3)

    def test_non_numeric_returned(self):
        with pytest.raises(TypeError, match="fn must return real numbers"):
            fc.table_from_function(lambda s: np.array(["x"] * len(s)), 2)

    def test_exception_surfaces_with_context(self):
        def boom(s):
            raise KeyError("lookup failed")
        with pytest.raises(RuntimeError, match="fn raised on coalitions 0..7") as info:
            fc.table_from_function(boom, 3)
        assert isinstance(info.value.__cause__, KeyError)

    def test_bad_options(self):
        with pytest.raises(ValueError, match="coalitions must be one of"):
            fc.table_from_function(lambda s: s * 0.0, 3, coalitions="list")
        with pytest.raises(ValueError, match="chunk must be >= 1"):
            fc.table_from_function(lambda s: s * 0.0, 3, chunk=0)


def test_masks_to_bool():
    assert fc.masks_to_bool(np.array([5, 0]), 3).tolist() == [[True, False, True],
                                                             [False, False, False]]
    assert fc.masks_to_bool(6, 3).tolist() == [False, True, True]
    with pytest.raises(TypeError, match="masks must be an integer array"):
        fc.masks_to_bool(np.array([1.5]), 3)
    with pytest.raises(ValueError, match="masks must be non-negative"):
        fc.masks_to_bool(np.array([-1]), 3)
    with pytest.raises(ValueError, match="m must be <= 64"):
        fc.masks_to_bool(np.array([1]), 65)


# --- regressions of the fuzz harness (tests/test_fuzz.py) --------------------

def test_from_moebius_names_its_argument():
    for bad, exc in (([[0.0, 1.0], [2.0]], ValueError), ("x", TypeError), (None, TypeError),
                     (np.zeros(3), ValueError), (np.zeros(4, complex), TypeError)):
        with pytest.raises(exc, match="^a "):
            fc.from_moebius(bad)


@pytest.mark.parametrize("call", [
    lambda: fc.masks_to_bool([[1, 2], [3]], 2),
    lambda: fc.games.bool_to_masks([[True, False], [True]]),
    lambda: fc.games.table_lookup([[0.0, 1.0], [1.0]], [[True]]),
    lambda: fc.games.table_lookup(np.zeros(4), [[True, False], [True]]),
])
def test_ragged_lists_are_named(call):
    with pytest.raises(ValueError, match="must be a rectangular array, got a ragged"):
        call()


def test_table_lookup_checks_table_and_coalitions():
    table = np.arange(4.0)
    assert fc.games.table_lookup(table, [[True, True], [False, True]]).tolist() == [3.0, 2.0]
    for bad, exc in ((np.zeros(3), ValueError), (np.zeros(0), ValueError),
                     (np.float64(1.0), ValueError), (table[None], ValueError),
                     (table.astype(complex), TypeError), (table.astype(str), TypeError),
                     (table.astype("m8[s]"), TypeError), (None, TypeError)):
        with pytest.raises(exc, match="^table "):
            fc.games.table_lookup(bad, [[True, False]])
    for bad in ([[True, False, True]], [True, False, True, False], np.zeros((2, 1), bool)):
        with pytest.raises(ValueError, match="^coalitions must be bool rows"):
            fc.games.table_lookup(table, bad)


def test_walk_cost_checks_its_arguments():
    assert fc.games.walk_cost(5, cache=True) == 4
    for m, exc in ((0, ValueError), (2**63, ValueError), (2.5, TypeError), ("3", TypeError),
                   (None, TypeError)):
        with pytest.raises(exc, match="^m must"):
            fc.games.walk_cost(m, cache=True)
    with pytest.raises(TypeError, match="^cache must be a bool"):
        fc.games.walk_cost(3, cache="yes")
    with pytest.raises(TypeError, match="^crn must be a bool"):
        fc.games.walk_cost(3, cache=True, crn=0.5)


def test_as_game_checks_kernels_and_max_table_players():
    with pytest.raises(TypeError, match="^kernels must be a dict"):
        fc.games.as_game(np.zeros(4), kernels=3)
    for bad, exc in ((30.5, TypeError), (2**64, ValueError), (-1, ValueError),
                     (0, ValueError), (True, TypeError), (None, TypeError)):
        with pytest.raises(exc, match="^max_table_players must"):
            fc.games.as_game(np.zeros(4), max_table_players=bad)


def test_token_counts_edges():
    assert fc.token_counts(np.zeros((4, 0), np.int64), 2).tolist() == [[0, 0]] * 4
    for m in (2**31, 2**40, 2**63, 2**64):
        with pytest.raises(ValueError, match="^m must be <="):
            fc.token_counts([[0]], m)
    with pytest.raises(ValueError, match="^mask must be a rectangular"):
        fc.token_counts([[0, 1], [1, 0]], 2, mask=[[1, 1], [1]])
    with pytest.raises(ValueError, match="^mask must be a rectangular"):
        fc.token_advantages(np.zeros(2), np.zeros((2, 2)), [[0, 1], [1, 0]],
                            mask=[[1, 1], [1]])


def test_actor_centered_credit_checks_eps_and_offsets():
    q, pi = [1.0, 0.0], [0.5, 0.5]
    for eps, exc in (("1e-08", TypeError), (1j, TypeError), (np.nan, ValueError),
                     (np.inf, ValueError), (-1.0, ValueError)):
        with pytest.raises(exc, match="^eps must"):
            fc.actor_centered_credit(q, pi, offsets=[0, 2], eps=eps)
    with pytest.raises(ValueError, match="^offsets must be a rectangular"):
        fc.actor_centered_credit(q, pi, offsets=[[0], [1, 2]])


@pytest.mark.parametrize("evaluate,exc,match", [
    (3, TypeError, "^evaluate must be callable"),
    (None, TypeError, "^evaluate must be callable"),
    (lambda a: None, TypeError, r"^evaluate\(\d+\) \(the value evaluate returned\)"),
    (lambda a: np.nan, ValueError, r"^evaluate\(\d+\) .* must be finite"),
    (lambda a: "x", TypeError, r"^evaluate\(\d+\)"),
    (lambda: 1.0, RuntimeError, "^evaluate raised on action"),
])
def test_run_checks_evaluate(evaluate, exc, match):
    for rule in (fc.UCT(3), fc.Uniform(3), fc.AgentUCT(3, costs=np.ones(3))):
        with pytest.raises(exc, match=match):
            rule.run(evaluate, budget=2)


def test_failure_scms_take_a_sequence_of_steps():
    for steps in (None, 1):
        for make in (fc.synthetic.and_failure, fc.synthetic.or_failure):
            with pytest.raises(TypeError, match="^steps must be a sequence"):
                make(steps=steps)


# refusals by available memory need Linux's MemAvailable
_MEMORY = pytest.mark.skipif(not sys.platform.startswith("linux"),
                             reason="needs /proc/meminfo")


@pytest.mark.parametrize("kwargs,match", [
    ({"topics": 2**31}, "topics = 2147483648"),
    pytest.param({"n_requests": 2**40}, "^n_requests = ", marks=_MEMORY),
    pytest.param({"k": 2**31}, "k = 2,147,483,648", marks=_MEMORY),
    pytest.param({"catalogue": 2**40}, "^catalogue = ", marks=_MEMORY),
    ({"catalogue": 2**63}, "^catalogue must be <="),
])
def test_sponsored_search_refuses_huge_sizes(kwargs, match):
    args = {"n_requests": 5, **kwargs}
    with pytest.raises(ValueError, match=match):
        fc.synthetic.sponsored_search(**args)


def test_huge_capacity_is_refused():
    pools = fc.synthetic.sponsored_search(3)
    for capacity in (2**63, 2**64):
        with pytest.raises(ValueError, match="^capacity must be <="):
            fc.auction_replay(pools, capacity=capacity)


def test_shapiq_adapters_check_their_arguments():
    shapiq = pytest.importorskip("fastcredit.shapiq")
    for bad in (3, None, "fn"):
        with pytest.raises(TypeError, match="^game must be callable"):
            shapiq.exact_values(bad, n_players=3)
    with pytest.raises(ValueError, match="^game must return one value per coalition"):
        shapiq.exact_values(lambda c: np.zeros(len(c) + 1), n_players=3)
    with pytest.raises(RuntimeError, match="^game raised"):
        shapiq.exact_values(lambda: 0.0, n_players=3)
    for n in (2**31, 2**64):
        with pytest.raises(ValueError, match="^n must be <= 4096"):
            shapiq.PermutationSamplingSV(n)
    for kwargs, exc, match in (({"threads": 1}, TypeError, "unexpected keyword argument"),
                               ({"max_order": 2}, ValueError, "^max_order must be 1"),
                               ({"antithetic": "no"}, TypeError, "^antithetic must"),
                               ({"random_state": -1}, ValueError, "^random_state must"),
                               ({"random_state": 1.5}, TypeError, "^random_state must")):
        with pytest.raises(exc, match=match):
            shapiq.PermutationSamplingSV(3, **kwargs)
    approx = shapiq.PermutationSamplingSV(3)
    with pytest.raises(TypeError, match="^game must be callable"):
        approx.approximate(10, None)
    with pytest.raises(TypeError, match="^game must return real numbers"):
        approx.approximate(10, lambda c: None)
    game = shapiq.TableGame(np.arange(8.0))
    with pytest.raises(ValueError, match="^coalitions must be bool rows"):
        game.value_function(np.ones((2, 4), bool))
    with pytest.raises(ValueError, match="^coalitions must be a rectangular"):
        game.value_function([[True, False, True], [True]])


def test_write_synthetic_checks_its_arguments(tmp_path):
    pytest.importorskip("pyarrow")
    from fastcredit.cli import compute_demo, main, write_synthetic
    path = tmp_path / "x.parquet"
    for kwargs, exc, match in (({"destination": 3}, TypeError, "^destination must be a path"),
                               ({"base": "no"}, TypeError, "^base must be a bool"),
                               ({"base": 0.5}, TypeError, "^base must be a bool"),
                               ({"row_group": 2**63}, ValueError, "^row_group must be <="),
                               ({"k": 2**64}, ValueError, "^k must be <=")):
        args = {"destination": path, "n_requests": 3, **kwargs}
        with pytest.raises(exc, match=match):
            write_synthetic(args.pop("destination"), args.pop("n_requests"), **args)
    assert not path.exists()
    for n, exc in ((0, ValueError), (-1, ValueError), (2.5, TypeError)):
        with pytest.raises(exc, match="^n_requests must"):
            compute_demo(n, 0)
    for option in ("--requests", "--k", "--row-group"):
        with pytest.raises(SystemExit) as info:
            main(["synth", str(path), option, str(2**64)])
        assert info.value.code == 2
