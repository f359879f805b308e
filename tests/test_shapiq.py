"""The shapiq adapter against shapiq's own ExactComputer (optional extra:
skipped when shapiq is not installed)."""
import numpy as np
import pytest

shapiq = pytest.importorskip("shapiq")

import fastcredit as fc  # noqa: E402
from fastcredit.shapiq import PermutationSamplingSV, TableGame, exact_values  # noqa: E402


def test_table_game_reads_the_table_by_bitmask(rng):
    v = rng.normal(size=16)
    game = TableGame(v)
    coalitions = np.array([[0, 0, 0, 0], [1, 0, 1, 0], [1, 1, 1, 1]], dtype=bool)
    assert game(coalitions).tolist() == [v[0], v[5], v[15]]
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


def test_approximator_converges_and_reports_its_budget(rng):
    m = 8
    table = rng.normal(size=1 << m)
    exact = fc.shapley(table)
    approx = PermutationSamplingSV(m, random_state=5)
    iv = approx.approximate(30_000, TableGame(table))
    est = approx.last_estimate
    assert iv.estimated and iv.estimation_budget <= 30_000
    assert iv.values[0] == pytest.approx(table[0])
    # within 5 standard errors of the truth, and the error bars are not vacuous
    assert np.all(np.abs(iv.values[1:] - exact) <= 5 * est.stderr + 1e-12)
    assert est.stderr.max() < 0.1 * np.abs(exact).max()
    # same seed, same answer; another seed, another sample
    again = PermutationSamplingSV(m, random_state=5).approximate(30_000, TableGame(table))
    assert np.array_equal(again.values, iv.values)
    other = PermutationSamplingSV(m, random_state=6).approximate(30_000, TableGame(table))
    assert not np.array_equal(other.values, iv.values)


def test_approximator_rejects_bad_budget(rng):
    with pytest.raises(ValueError, match="budget"):
        PermutationSamplingSV(4).approximate(1, TableGame(rng.normal(size=16)))
