"""fastcredit.shapiq.ExactComputer and exact_values against shapiq's own
ExactComputer on shapiq's own games (optional extra: skipped when shapiq is
not installed)."""
import warnings

import numpy as np
import pytest

shapiq = pytest.importorskip("shapiq")
synthetic = pytest.importorskip("shapiq_games.synthetic")

import fastcredit as fc  # noqa: E402
from fastcredit.shapiq import ExactComputer, TableGame, exact_values  # noqa: E402
from fastcredit.shapiq._common import combination_rank, binomials, powerset_masks  # noqa: E402

#: Indices computed by the tables kernels (fastcredit.shapley, banzhaf, moebius).
TABLE_INDICES = ("SV", "BV", "Moebius")
#: Indices computed by fastcredit.interactions.
KERNEL_INDICES = ("SII", "BII", "CHII", "Co-Moebius", "SGV", "BGV", "CHGV", "IGV", "EGV",
                  "k-SII", "STII", "FSII", "FBII", "kADD-SHAP", "JointSV")


class Counting:
    """A game that records the coalitions each call receives."""

    def __init__(self, game):
        self.game, self.calls = game, []
        self.n_players = game.n_players

    def __call__(self, rows):
        self.calls.append(np.array(rows, copy=True))
        return self.game(rows)


def games(n):
    yield "soum", synthetic.SOUM(n, n_basis_games=25, random_state=n)
    yield "dummy", synthetic.DummyGame(n, (0, n - 1) if n > 1 else ())
    yield "unanimity", synthetic.UnanimityGame(np.arange(n) % 2 == 0)
    yield "table", TableGame(np.random.default_rng(n).normal(size=1 << n))


def assert_same(got, want, rtol=1e-9):
    assert got.index == want.index
    assert (got.min_order, got.max_order, got.n_players) == (want.min_order, want.max_order,
                                                             want.n_players)
    assert got.estimated is want.estimated is False
    assert got.baseline_value == pytest.approx(want.baseline_value, rel=rtol, abs=rtol)
    # shapiq's k-SII aggregation leaves out interactions that come out exactly
    # 0, which depends on rounding: compare its values over both key sets
    if got.index != "k-SII":
        assert set(got.interaction_lookup) == set(want.interaction_lookup)
    keys = list(set(want.interaction_lookup) | set(got.interaction_lookup))
    scale = max(1.0, float(np.max(np.abs(want.values))))
    np.testing.assert_allclose([got[k] for k in keys], [want[k] for k in keys], rtol=rtol,
                               atol=rtol * scale)


def _pairs(indices, orders):
    for index in indices:
        for n in (1, 3, 5, 8):
            for order in orders:
                if order is None or order <= n:
                    yield index, n, order


@pytest.mark.parametrize("index,n,order", list(_pairs(TABLE_INDICES, (1, 2, None))))
def test_table_indices_equal_shapiq(index, n, order):
    for name, game in games(n):
        got = ExactComputer(game)(index, order)
        want = shapiq.ExactComputer(game)(index, order)
        assert_same(got, want), name
        assert got.interaction_lookup == want.interaction_lookup


@pytest.mark.parametrize("index,n,order", list(_pairs(KERNEL_INDICES, (1, 2, 3))))
def test_kernel_indices_equal_shapiq(index, n, order):
    for name, game in games(n):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")      # CHII's empty set; JointSV checksums
            got = ExactComputer(game)(index, order)
            want = shapiq.ExactComputer(game)(index, order)
        assert_same(got, want, rtol=1e-9), name


@pytest.mark.parametrize("n", [2, 4, 6])
def test_egalitarian_least_core_as_shapiq(n):
    """shapiq's ELC is SLSQP's optimum to about 1e-4 (see
    fastcredit.egalitarian_least_core); ours is the exact optimum, so: the
    same layout, values within 1e-3, and an objective ||x|| + e never above
    shapiq's."""
    game = synthetic.SOUM(n, n_basis_games=10, normalize=True, random_state=n)
    ours, theirs = ExactComputer(game), shapiq.ExactComputer(game)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, want = ours("ELC", 1), theirs("ELC", 1)
    assert (got.index, got.min_order, got.max_order, got.baseline_value, got.estimated) == (
        want.index, want.min_order, want.max_order, want.baseline_value, want.estimated)
    assert got.interaction_lookup == want.interaction_lookup
    np.testing.assert_allclose(got.values, want.values, atol=1e-3)
    objective = np.linalg.norm(got.values) + ours._elc_stability_subsidy
    assert objective <= np.linalg.norm(want.values) + theirs._elc_stability_subsidy + 1e-6


def test_the_game_is_evaluated_once_in_chunks_of_bool_rows():
    game = Counting(synthetic.SOUM(6, n_basis_games=10, random_state=0))
    computer = ExactComputer(game, 6)
    for index in ("SV", "BV", "Moebius"):
        computer(index, 1)
    rows = np.concatenate(game.calls)
    assert rows.dtype == bool and rows.shape == (64, 6)
    assert len(np.unique(fc.games.bool_to_masks(rows))) == 64
    theirs = shapiq.ExactComputer(game, 6)
    assert computer.game_values == pytest.approx(theirs.game_values)
    assert computer.coalition_lookup == theirs.coalition_lookup


def test_results_are_cached_and_copied_like_shapiq():
    computer = ExactComputer(synthetic.DummyGame(4, (1, 2)))
    first = computer("SV", 1)
    first.interactions[(0,)] = 99.0
    assert computer("SV", 1)[(0,)] == pytest.approx(0.25)


@pytest.mark.parametrize("index", TABLE_INDICES + KERNEL_INDICES[:-1])
def test_order_zero_is_shapiq_s_and_chii_warns_as_shapiq_does(index):
    """Order 0 (the empty interaction alone) as shapiq gives it; CHII warns
    that it is undefined there (shapiq 1.4.1's test_warning_cii). JointSV
    is left out: shapiq divides by zero at order 0, and so does ours."""
    game = TableGame(np.random.default_rng(4).normal(size=1 << 4))
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        want = shapiq.ExactComputer(game, n_players=4)(index, 0)
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        got = ExactComputer(game)(index, 0)
    assert_same(got, want)
    assert ([str(w.message) for w in ours if w.category is UserWarning]
            == [str(w.message) for w in theirs if w.category is UserWarning])
    if index == "CHII":
        assert any("CHII is not defined for the empty set" in str(w.message) for w in ours)


def test_errors_match_shapiq():
    game = synthetic.DummyGame(3, (1, 2))
    for cls in (ExactComputer, shapiq.ExactComputer):
        with pytest.raises(ValueError, match="Index or value not supported"):
            cls(game)("XYZ", 1)
        with pytest.raises(ValueError, match="n_players must be specified"):
            cls(lambda c: c.sum(1))
    for order in (-1, 4, 1.5):
        with pytest.raises((ValueError, TypeError), match="^order must"):
            ExactComputer(game)("STII", order)
    with pytest.raises(ValueError, match="^n_players must be <= 30"):
        ExactComputer(lambda c: c.sum(1), 31)
    with pytest.raises(TypeError, match="^game must be callable"):
        ExactComputer(3, 3)


def test_powerset_order_and_combination_rank_are_shapiq_s():
    from itertools import combinations
    from shapiq.utils.sets import powerset
    for n in (1, 4, 7):
        want = [sum(1 << i for i in s) for s in powerset(range(n))]
        assert powerset_masks(n).tolist() == want
        binom = binomials(n, n)
        for s in range(n + 1):
            combos = np.array(list(combinations(range(n), s)), dtype=np.int64).reshape(
                len(list(combinations(range(n), s))), s)
            assert combination_rank(combos, n, binom).tolist() == list(range(len(combos)))


def test_table_game_reads_the_table_by_bitmask(rng):
    v = rng.normal(size=16)
    game = TableGame(v)
    coalitions = np.array([[0, 0, 0, 0], [1, 0, 1, 0], [1, 1, 1, 1]], dtype=bool)
    assert game(coalitions).tolist() == [v[0], v[5], v[15]]
    assert game(np.array([1, 0, 1, 0], bool)).tolist() == [v[5]]
    with pytest.raises(ValueError, match="one table"):
        TableGame(np.zeros((2, 16)))


@pytest.mark.parametrize("m", [1, 3, 6, 9])
@pytest.mark.parametrize("index", ["SV", "BV"])
def test_exact_values_equal_shapiq_exact_computer(m, index, rng, backend):
    game = TableGame(rng.normal(size=1 << m))
    want = shapiq.ExactComputer(n_players=m, game=game)(index, 1)
    got = exact_values(game, index, backend=backend)
    assert got.interaction_lookup == want.interaction_lookup
    np.testing.assert_allclose(got.values, want.values, rtol=1e-10, atol=1e-12)
    assert got.baseline_value == pytest.approx(want.baseline_value)
    assert got.index == want.index and got.max_order == 1 and not got.estimated


def test_plain_callable_needs_n_players():
    f = lambda c: c.sum(1) ** 2.0  # noqa: E731
    assert exact_values(f, n_players=3).values.tolist() == [0.0, 3.0, 3.0, 3.0]
    with pytest.raises(ValueError, match="n_players is required"):
        exact_values(f)
    with pytest.raises(ValueError, match="index must be one of"):
        exact_values(f, "STII", n_players=3)
