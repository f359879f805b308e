"""fc.owen: the Owen value over a partition or a cluster tree.

Against the definition (the average over the orders that keep the hierarchy
together, tests/reference.py), the closed formula of a partition, its
axioms (efficiency, the quotient game, Shapley for one union or all
singletons), shap's PartitionExplainer with a budget that splits every
cluster, and the refusals of bad clusterings.
"""
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import fastcredit as fc

import reference as ref
from conftest import BACKENDS

finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)


def tol(v):
    return 1e-9 * max(1.0, float(np.abs(v).max()))


@st.composite
def partitioned_games(draw, max_m=7):
    m = draw(st.integers(1, max_m))
    v = draw(arrays(np.float64, 1 << m, elements=finite))
    labels = draw(st.lists(st.integers(-2, 3), min_size=m, max_size=m))
    return v, np.array(labels)


@st.composite
def trees(draw, m):
    """A random linkage matrix of m players (random joins of the live
    nodes, random distances)."""
    live, rows = list(range(m)), []
    size = {i: 1 for i in range(m)}
    for k in range(m - 1):
        a, b = draw(st.permutations(live))[:2]
        live = [x for x in live if x not in (a, b)] + [m + k]
        size[m + k] = size[a] + size[b]
        rows.append([a, b, draw(st.floats(0.0, 5.0)), size[m + k]])
    return np.array(rows, dtype=float).reshape(m - 1, 4)


@st.composite
def tree_games(draw, max_m=6):
    m = draw(st.integers(1, max_m))
    return draw(arrays(np.float64, 1 << m, elements=finite)), draw(trees(m))


def owen_closed_formula(v, labels):
    """The partition's closed formula: the sum over R of other unions and T
    of i's union-mates of the two Shapley weights times i's marginal."""
    m = len(v).bit_length() - 1
    unions = [[p for p in range(m) if labels[p] == u] for u in sorted(set(labels))]
    mask = [sum(1 << p for p in u) for u in unions]
    n_unions = len(unions)

    def weight(s, n):
        return math.factorial(s) * math.factorial(n - s - 1) / math.factorial(n)

    phi = np.zeros(m)
    for k, members in enumerate(unions):
        others = [j for j in range(n_unions) if j != k]
        for i in members:
            mates = [p for p in members if p != i]
            for r in range(len(others) + 1):
                for rs in itertools.combinations(others, r):
                    for t in range(len(mates) + 1):
                        for ts in itertools.combinations(mates, t):
                            s = sum(mask[j] for j in rs) | sum(1 << p for p in ts)
                            phi[i] += (weight(r, n_unions) * weight(t, len(members))
                                       * (v[s | 1 << i] - v[s]))
    return phi


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=40, deadline=None)
@given(partitioned_games())
def test_partition_matches_the_definition_and_the_closed_formula(backend, game):
    v, labels = game
    got = fc.owen(v, labels, backend=backend)
    np.testing.assert_allclose(got, ref.owen(v, labels), atol=tol(v), rtol=0)
    np.testing.assert_allclose(got, owen_closed_formula(v, labels), atol=tol(v), rtol=0)


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=40, deadline=None)
@given(tree_games())
def test_tree_matches_the_definition(backend, game):
    v, z = game
    np.testing.assert_allclose(fc.owen(v, z, backend=backend), ref.owen(v, z), atol=tol(v),
                               rtol=0)


@settings(max_examples=40, deadline=None)
@given(partitioned_games(max_m=8))
def test_efficiency_and_the_quotient_game(game):
    v, labels = game
    m = len(v).bit_length() - 1
    phi = fc.owen(v, labels)
    assert phi.sum() == pytest.approx(v[-1] - v[0], abs=tol(v))
    # union u's credit is its Shapley value in the game of the unions
    names = sorted(set(labels.tolist()))
    unions = [sum(1 << p for p in range(m) if labels[p] == u) for u in names]
    quotient = np.array([v[sum(unions[j] for j in range(len(names)) if r >> j & 1)]
                         for r in range(1 << len(names))])
    by_union = [phi[labels == u].sum() for u in names]
    np.testing.assert_allclose(by_union, fc.shapley(quotient), atol=tol(v), rtol=0)


@settings(max_examples=30, deadline=None)
@given(tree_games(max_m=8))
def test_tree_is_efficient_and_each_cluster_gets_its_quotient_share(game):
    """Efficiency, and at the root the two branches split v(N) - v(0) as
    the two-player Shapley value of the game of the branches."""
    v, z = game
    m = len(v).bit_length() - 1
    phi = fc.owen(v, z)
    assert phi.sum() == pytest.approx(v[-1] - v[0], abs=tol(v))
    if m > 1:
        left = ref.hierarchy(np.asarray(z), m)[0]
        members = [p for p in range(m) if any(p in leaf for leaf in _leaves(left))]
        a = sum(1 << p for p in members)
        full = (1 << m) - 1
        want = 0.5 * (v[a] - v[0]) + 0.5 * (v[full] - v[full ^ a])
        assert phi[members].sum() == pytest.approx(want, abs=tol(v))


def _leaves(tree):
    return [tree] if isinstance(tree, tuple) else [x for c in tree for x in _leaves(c)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_union_or_all_singletons_is_shapley(backend):
    v = np.random.default_rng(0).normal(size=(3, 2, 256))
    for labels in (np.zeros(8, dtype=int), np.arange(8), [5] * 8):
        np.testing.assert_allclose(fc.owen(v, labels, backend=backend), fc.shapley(v),
                                   atol=1e-12, rtol=0)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_batches_float32_and_threads(backend, dtype):
    """A (2, 3) batch of m = 7 games: each game as it is alone, float32 as
    its float64 widening, the same bits for 1 and 2 threads."""
    rng = np.random.default_rng(1)
    v = rng.normal(size=(2, 3, 128)).astype(dtype)
    from scipy.cluster.hierarchy import linkage
    for clustering in ([0, 1, 0, 2, 1, 0, 2], linkage(rng.normal(size=(7, 2)))):
        got = fc.owen(v, clustering, backend=backend, threads=1)
        assert got.shape == (2, 3, 7) and got.dtype == np.float64
        np.testing.assert_array_equal(fc.owen(v, clustering, backend=backend, threads=2), got)
        for idx in np.ndindex(2, 3):
            np.testing.assert_array_equal(fc.owen(v[idx], clustering, backend=backend),
                                          got[idx])
            np.testing.assert_allclose(got[idx], ref.owen(v[idx], clustering), atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_game_has_the_same_bits_in_any_block_of_games(backend):
    """The kernels walk blocks of games together (16 games of m = 11): 37
    games, so blocks end mid-batch, each game as it is alone."""
    v = np.random.default_rng(5).normal(size=(37, 1 << 11))
    labels = [0, 1, 2, 0, 1, 2, 0, 1, 2, 3, 3]
    got = fc.owen(v, labels, backend=backend, threads=1)
    for g in (0, 15, 16, 31, 32, 36):
        np.testing.assert_array_equal(fc.owen(v[g], labels, backend=backend), got[g])
    np.testing.assert_array_equal(fc.owen(v[15:33], labels, backend=backend), got[15:33])


def test_an_unsplit_cluster_shares_its_marginal_equally():
    """A cluster of negative distance (shap's marker of a cluster never to be
    split) enters as one block: with {1, 2} unsplit, m = 3 has the two
    orders (0, {1,2}) and ({1,2}, 0)."""
    v = np.array([0.0, 1.0, 2.0, 4.0, 3.0, 5.0, 9.0, 10.0])
    z = np.array([[1, 2, -1.0, 2], [0, 3, 1.0, 3]])
    block = 0.5 * (v[6] - v[0]) + 0.5 * (v[7] - v[1])
    first = 0.5 * (v[1] - v[0]) + 0.5 * (v[7] - v[6])
    np.testing.assert_allclose(fc.owen(v, z), [first, block / 2, block / 2], atol=1e-15)


def test_inputs_are_not_modified_and_out_is_used():
    v = np.random.default_rng(2).normal(size=(4, 32))
    z = np.array([[0, 1, 0.5, 2], [2, 3, 0.6, 2], [5, 6, 1.0, 4], [4, 7, 2.0, 5]])
    v0, z0 = v.copy(), z.copy()
    out = np.empty((4, 5))
    assert fc.owen(v, z, out=out) is out
    np.testing.assert_array_equal(v, v0)
    np.testing.assert_array_equal(z, z0)
    np.testing.assert_array_equal(out, fc.owen(v, z))


def test_out_overlapping_an_input_is_refused():
    v = np.random.default_rng(3).normal(size=(4, 8))
    with pytest.raises(ValueError, match="out.*v"):
        fc.owen(v, [0, 1, 1], out=v.reshape(-1)[:12].reshape(4, 3))
    buf = np.zeros(11)
    z = buf[:8].reshape(2, 4)
    z[:] = LINKAGE
    with pytest.raises(ValueError, match="out.*clustering"):
        fc.owen(v[0], z, out=buf[6:9])
    np.testing.assert_array_equal(z, LINKAGE)


LINKAGE = [[1, 2, 0.5, 2], [0, 3, 1.0, 3]]


@pytest.mark.parametrize("clustering, match", [
    ([0, 1], r"partition must give the union of each of the m = 3 players"),
    ([[0, 1, 2]], r"shape \(2, 4\)"),
    (np.zeros((2, 2, 4)), r"partition, shape \(3,\), or a linkage matrix"),
    ([[1, 2, 0.5, 2]], r"shape \(2, 4\)"),
    ([[1, 2, np.nan, 2], [0, 3, 1.0, 3]], "finite"),
    ([[1, 2.5, 0.5, 2], [0, 3, 1.0, 3]], "must be integers"),
    ([[1, 1, 0.5, 2], [0, 3, 1.0, 3]], "joins node 1 with itself"),
    ([[1, 2, 0.5, 2], [0, 4, 1.0, 3]], "neither a player nor an earlier row"),
    ([[1, 2, 0.5, 2], [-1, 3, 1.0, 3]], "neither a player nor an earlier row"),
    ([[1, 2, 0.5, 2], [2, 3, 1.0, 3]], "joins node 2 twice"),
    ([[1, 2, 0.5, 3], [0, 3, 1.0, 3]], r"clustering\[0, 3\] = 3 is not the size"),
])
def test_bad_clusterings_are_refused_naming_clustering(clustering, match):
    v = np.zeros(8)
    with pytest.raises(ValueError, match=match) as info:
        fc.owen(v, clustering)
    assert "clustering" in str(info.value)


@pytest.mark.parametrize("labels", [[0.0, 1.0, 1.0], [True, False, True], ["a", "b", "b"]])
def test_a_partition_must_be_integers(labels):
    with pytest.raises(TypeError, match="clustering"):
        fc.owen(np.zeros(8), labels)


@pytest.mark.skipif("c" not in BACKENDS, reason="the C backend is not built")
def test_the_c_binding_refuses_a_plan_it_would_read_past():
    from fastcredit._c import tables as c_tables
    from fastcredit.tables import _owen_plan
    v = np.zeros((1, 8))
    plan = list(_owen_plan(LINKAGE, 3))
    short = plan.copy()
    short[3] = plan[3][:-1]
    with pytest.raises(ValueError, match="items must be"):
        c_tables.owen(v, *short, np.empty((1, 3)))
    bad = [p.copy() for p in plan]
    bad[3][0] = 1 << 3          # a mask past the table of 3 players
    with pytest.raises(ValueError, match=r"items\[0\] = 8 is not a mask"):
        c_tables.owen(v, *bad, np.empty((1, 3)))


def test_equals_shap_partition_explainer_with_a_full_budget():
    """shap's PartitionExplainer with max_evals enough to split every cluster
    (its owen recursion, fixed_context None) on a model with interactions,
    against fc.owen of the table of the same masked model (the mean over
    the background rows, features outside S taken from the background)."""
    shap = pytest.importorskip("shap")
    from scipy.cluster.hierarchy import linkage
    rng = np.random.default_rng(4)
    m = 6
    background, x = rng.normal(size=(5, m)), rng.normal(size=(3, m))
    w = rng.normal(size=(m, m))

    def model(rows):
        return np.tanh(rows @ w).sum(1) + rows[:, 0] * rows[:, 1] * rows[:, 2]

    z = linkage(rng.normal(size=(m, 4)))
    explainer = shap.PartitionExplainer(model, shap.maskers.Partition(background, clustering=z))
    values = explainer(x, max_evals=10_000, silent=True).values
    masks = (np.arange(1 << m)[:, None] >> np.arange(m) & 1).astype(bool)
    for row in range(len(x)):
        v = np.array([model(np.where(mask, x[row], background)).mean() for mask in masks])
        np.testing.assert_allclose(fc.owen(v, z), values[row], atol=1e-12, rtol=0)
        assert np.abs(fc.shapley(v) - values[row]).max() > 1e-3   # a case where they differ


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=30, deadline=None)
@given(st.one_of(tree_games(max_m=8), partitioned_games(max_m=8)))
def test_owen_reads_only_owen_coalitions(backend, game):
    """NaN everywhere but the listed coalitions changes nothing; NaN at any
    one listed coalition (other than a constant term) reaches the result."""
    v, clustering = game
    m = len(v).bit_length() - 1
    masks = fc.owen_coalitions(clustering, m)
    assert masks.dtype == np.uint64 and (np.diff(masks.astype(np.int64)) > 0).all()
    assert masks[0] == 0 and masks[-1] == (1 << m) - 1
    sparse = np.full_like(v, np.nan)
    sparse[masks] = v[masks]
    np.testing.assert_array_equal(fc.owen(sparse, clustering, backend=backend),
                                  fc.owen(v, clustering, backend=backend))
    poked = v.copy()
    poked[masks[len(masks) // 2]] = np.nan
    assert np.isnan(fc.owen(poked, clustering, backend=backend)).any()


def test_owen_coalitions_of_a_balanced_tree_and_of_singletons():
    z = np.array([[0, 1, 1.0, 2], [2, 3, 1.0, 2], [4, 5, 2.0, 4]])
    # players 0 and 1 read the subsets of {0, 1}, alone or with {2, 3}
    # (0-3, 12-15); players 2 and 3 the subsets of {2, 3}, alone or with
    # {0, 1} (0, 4, 8, 12, 3, 7, 11, 15)
    assert fc.owen_coalitions(z, 4).tolist() == [0, 1, 2, 3, 4, 7, 8, 11, 12, 13, 14, 15]
    assert fc.owen_coalitions(np.arange(5), 5).tolist() == list(range(32))
    with pytest.raises(ValueError, match="clustering"):
        fc.owen_coalitions(z, 5)
    with pytest.raises(ValueError, match="m"):
        fc.owen_coalitions([0], 0)
