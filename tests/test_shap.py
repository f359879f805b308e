"""fastcredit.shap: shap's explainers over fastcredit's kernels.

Oracles: shap's own ExactExplainer (deterministic, so equal to rounding),
fc.shapley of the full coalition table built here by brute force, closed
forms (a model with interactions of order <= 2), and counting models for
the budget and batching. Sampled values are checked against the exact ones
within their own standard errors (chance failure stated at each check).
"""
import itertools

import numpy as np
import pytest

shap = pytest.importorskip("shap")

import fastcredit as fc  # noqa: E402
from fastcredit.shap import (ExactExplainer, KernelExplainer, PermutationExplainer,  # noqa: E402
                             SamplingExplainer)

M = 6


@pytest.fixture(scope="module")
def data():
    rs = np.random.RandomState(7)
    return rs.randn(5, M), rs.randn(8, M), rs.randn(M)


def linear_pairs(w):
    def model(x):
        return x @ w + x[:, 0] * x[:, 1] + 0.5 * x[:, 2] * x[:, 3] * x[:, 4]
    return model


def two_outputs(w):
    f = linear_pairs(w)

    def model(x):
        p = 1.0 / (1.0 + np.exp(-f(x)))
        return np.stack([p, 1.0 - p], axis=1)
    return model


def probability(w):
    f = two_outputs(w)
    return lambda x: f(x)[:, 0]


def brute_table(model, x, background, link=lambda y: y):
    """v(S) of every mask S of x's features: mean over the background of the
    model on x_S with background values elsewhere, through the link."""
    m = len(x)
    table = []
    for mask in range(2**m):
        keep = np.array([(mask >> i) & 1 for i in range(m)], dtype=bool)
        rows = np.where(keep, x, background)
        table.append(link(np.mean(model(rows), axis=0)))
    return np.array(table)


class Counting:
    """A model that records every call's rows."""

    def __init__(self, model):
        self.model = model
        self.calls = []

    def __call__(self, x):
        self.calls.append(np.array(x))
        return self.model(x)

    @property
    def rows(self):
        return np.concatenate(self.calls)


# --- Exact: shap's own values -------------------------------------------------

@pytest.mark.parametrize("which", ["identity", "logit", "logit-plain", "two-outputs"])
@pytest.mark.parametrize("interactions", [1, True])
def test_exact_equals_shap_exact(data, which, interactions):
    X, B, w = data
    model = {"identity": linear_pairs(w), "two-outputs": two_outputs(w)}.get(which,
                                                                             probability(w))
    link = shap.links.logit if which.startswith("logit") else shap.links.identity
    kw = dict(link=link, linearize_link=which != "logit-plain")
    ours = ExactExplainer(model, B, **kw)(X, interactions=interactions, silent=True)
    theirs = shap.ExactExplainer(model, B, **kw)(X, interactions=interactions, silent=True)
    assert isinstance(ours, shap.Explanation)
    assert ours.values.shape == theirs.values.shape
    np.testing.assert_allclose(ours.values, theirs.values, rtol=0, atol=1e-9)
    np.testing.assert_allclose(ours.base_values, theirs.base_values, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(ours.data, theirs.data)
    assert list(ours.feature_names) == list(theirs.feature_names)


def test_exact_equals_shapley_of_the_brute_force_table(data):
    X, B, w = data
    model = two_outputs(w)
    ours = ExactExplainer(model, B)(X, silent=True)
    for r, x in enumerate(X):
        table = brute_table(model, x, B)               # (2**m, 2)
        np.testing.assert_allclose(ours.values[r], fc.shapley(table.T).T, atol=1e-12)
        np.testing.assert_allclose(ours.base_values[r], table[0], atol=1e-12)


def test_exact_logit_without_linearization_is_the_link_of_the_mean(data):
    X, B, w = data
    model = probability(w)
    ours = ExactExplainer(model, B, link=shap.links.logit, linearize_link=False)(X, silent=True)
    table = brute_table(model, X[0], B, link=lambda p: np.log(p / (1 - p)))
    np.testing.assert_allclose(ours.values[0], fc.shapley(table), atol=1e-10)


def test_exact_evaluates_only_the_varying_features(data):
    """Features equal to every background row get 0 and the table has
    2**varying coalitions: the model sees 2**3 coalitions of n_b rows."""
    X, B, w = data
    background = B.copy()
    background[:, [1, 4, 5]] = X[0, [1, 4, 5]]
    model = Counting(linear_pairs(w))
    exp = ExactExplainer(model, background)(X[:1], silent=True)
    assert np.all(exp.values[0, [1, 4, 5]] == 0)
    assert len(model.rows) == 2**3 * len(background)
    # the three varying features carry f(x) - E f(B)
    np.testing.assert_allclose(exp.values[0].sum() + exp.base_values[0],
                               linear_pairs(w)(X[:1])[0], atol=1e-12)


@pytest.mark.parametrize("cls", [PermutationExplainer, ExactExplainer])
def test_a_row_equal_to_the_background_has_zero_values(cls):
    """No feature varies: the game has one coalition and every value is 0."""
    background = np.tile([1.0, 2.0, 3.0], (4, 1))
    model = Counting(lambda x: x.sum(axis=1))
    exp = cls(model, background)(background[:2], silent=True)
    np.testing.assert_array_equal(exp.values, 0.0)
    np.testing.assert_array_equal(exp.base_values, 6.0)
    assert len(model.rows) == 2 * len(background)      # one coalition per row


def test_exact_interactions_closed_form():
    """For f = x0 x1 + x2 over a zero background, shap's interaction matrix
    splits the pair's term in half off the diagonal and has the main effects
    (v({i}) - v({})) on it."""
    model = lambda x: x[:, 0] * x[:, 1] + x[:, 2]       # noqa: E731
    x = np.array([[2.0, 3.0, 5.0]])
    inter = ExactExplainer(model, np.zeros((1, 3)))(x, interactions=True, silent=True).values[0]
    np.testing.assert_allclose(inter, [[0, 3, 0], [3, 0, 0], [0, 0, 5]], atol=1e-12)


def test_exact_refuses_a_short_budget(data):
    X, B, w = data
    with pytest.raises(ValueError, match="max_evals"):
        ExactExplainer(linear_pairs(w), B)(X[:1], max_evals=2**M - 1, silent=True)


@pytest.mark.parametrize("outputs", [1, 2])
def test_partition_masker_gives_shaps_owen_values(data, outputs):
    """A Partition masker's cluster tree: Exact and (with the table in the
    budget) Permutation equal shap's Exact, which computes the Owen values
    (fc.owen) over the tree, to rounding."""
    X, B, w = data
    model = linear_pairs(w) if outputs == 1 else two_outputs(w)
    masker = shap.maskers.Partition(B)
    theirs = shap.ExactExplainer(model, masker)(X, silent=True)
    for ours in (ExactExplainer(model, masker)(X, silent=True),
                 PermutationExplainer(model, masker, seed=0)(X, max_evals=2**M, silent=True)):
        assert ours.values.shape == theirs.values.shape
        np.testing.assert_allclose(ours.values, theirs.values, rtol=0, atol=1e-9)
        np.testing.assert_allclose(ours.base_values, theirs.base_values, atol=1e-12)


def test_partition_masker_evaluates_only_what_owen_reads(data):
    """The model sees each coalition fc.owen reads for the tree once, and
    no other (fc.owen_coalitions, fewer than 2**M); a budget below that
    count is refused by Exact (ValueError, as shap's), naming max_evals."""
    X, B, w = data
    masker = shap.maskers.Partition(B)
    reads = len(fc.owen_coalitions(masker.clustering, M))
    assert reads < 2**M
    model = Counting(linear_pairs(w))
    ExactExplainer(model, masker)(X[:1], max_evals=reads, silent=True)
    coalitions = np.isclose(model.rows.reshape(-1, len(B), M)[:, 0, :], X[0])
    assert len(coalitions) == reads == len({tuple(c) for c in coalitions})
    with pytest.raises(ValueError, match="max_evals"):
        ExactExplainer(linear_pairs(w), masker)(X[:1], max_evals=reads - 1, silent=True)


def tree_model(w):
    """Interactions across the clusters, so that Owen and Shapley differ."""
    f = linear_pairs(w)
    return lambda x: f(x) + np.sin(x[:, 0] * x[:, 5]) * x[:, 2]


def test_partition_masker_below_the_tree_budget_samples_tree_orders(data):
    """Below the coalitions of the tree's recursion the Permutation explainer
    samples antithetic pairs of orders that keep the clusters together: each
    row sees at most max_evals distinct coalitions, its values add up to
    f(x) - E f, the same seed gives the same values, and a budget at the
    tree's count gives the exact Owen values again."""
    X, B, w = data
    masker = shap.maskers.Partition(B)
    reads = len(fc.owen_coalitions(masker.clustering, M))
    model = Counting(tree_model(w))
    est = PermutationExplainer(model, masker, seed=4)(X, max_evals=reads - 1, error_bounds=True,
                                                      silent=True)
    rows = model.rows.reshape(-1, len(B), M)[:, 0, :]
    for x in X:
        coalitions = {tuple(c) for c in np.isclose(rows, x)[np.isclose(rows, x).any(axis=1)]}
        assert len(coalitions) <= reads - 1
    np.testing.assert_allclose(est.values.sum(1) + est.base_values, tree_model(w)(X), atol=1e-12)
    again = PermutationExplainer(tree_model(w), masker, seed=4)(X, max_evals=reads - 1,
                                                                silent=True)
    np.testing.assert_array_equal(again.values, est.values)
    owen = ExactExplainer(tree_model(w), masker)(X, silent=True).values
    assert np.abs(est.values - owen).max() > 1e-6          # sampled, not exact
    assert (est.error_std > 0).any()
    full = PermutationExplainer(tree_model(w), masker, seed=4)(X, max_evals=reads, silent=True)
    np.testing.assert_allclose(full.values, owen, rtol=0, atol=1e-12)


def test_partition_masker_tree_sampling_is_unbiased_for_owen(data):
    """The mean of 1,000 independent estimates (the same row explained 1,000
    times, each with its own seed, max_evals=20 of the tree's 40) is within 5
    standard errors of the exact Owen value for every feature: by chance
    outside with probability below 6 x 5.7e-7 = 3.4e-6 (normal limit of a
    mean of 1,000). Uniform orders (Shapley) would be detected: the Shapley
    and Owen values of this model differ by far more than 5 standard errors
    for some feature."""
    X, B, w = data
    masker = shap.maskers.Partition(B)
    model = tree_model(w)
    owen = ExactExplainer(model, masker)(X[:1], silent=True).values[0]
    est = PermutationExplainer(model, masker, seed=0)(np.repeat(X[:1], 1000, axis=0),
                                                      max_evals=20, silent=True).values
    mean, se = est.mean(axis=0), est.std(axis=0, ddof=1) / np.sqrt(len(est))
    assert (np.abs(mean - owen) <= 5 * se + 1e-12).all(), (mean - owen) / se
    shapley = ExactExplainer(model, B)(X[:1], silent=True).values[0]
    assert (np.abs(shapley - owen) > 20 * se + 1e-9).any()


def test_partition_masker_sampling_refuses_a_negative_distance(data):
    """fc.owen keeps a cluster of negative distance as one block, which tree
    orders do not: below the tree's budget that clustering is refused."""
    X, B, w = data
    masker = shap.maskers.Partition(B)
    masker.clustering = masker.clustering.copy()
    masker.clustering[0, 2] = -1.0
    with pytest.raises(NotImplementedError, match="distances"):
        PermutationExplainer(linear_pairs(w), masker)(X[:1], max_evals=20, silent=True)


def test_partition_masker_refusals(data):
    X, B, w = data
    masker = shap.maskers.Partition(B)
    with pytest.raises(NotImplementedError, match="interactions"):
        ExactExplainer(linear_pairs(w), masker)(X[:1], interactions=True, silent=True)


# --- Permutation ---------------------------------------------------------------

def test_rows_of_more_than_64_features_with_few_varying():
    """70 features of which 5 differ from the background: Permutation with
    every coalition in its budget, rows sharing model calls, equals Exact
    (the masked rows made by np.where: masks over all 70 do not fit uint64)."""
    rs = np.random.RandomState(5)
    B = np.tile(rs.randn(1, 70), (3, 1))
    X = np.tile(B[:1], (4, 1))
    vary = [0, 3, 40, 66, 69]
    B[:, vary] = rs.randn(3, 5)
    X[:, vary] = rs.randn(4, 5)
    model = lambda x: x[:, vary] @ np.arange(1.0, 6.0) + x[:, 0] * x[:, 69]  # noqa: E731
    exact = ExactExplainer(model, B)(X, silent=True)
    ours = PermutationExplainer(model, B, seed=0)(X, max_evals=32, silent=True)
    np.testing.assert_allclose(ours.values, exact.values, rtol=0, atol=1e-12)
    assert (ours.values[:, np.setdiff1d(np.arange(70), vary)] == 0).all()
    np.testing.assert_allclose(ours.values.sum(1) + ours.base_values, model(X), atol=1e-12)


def test_permutation_is_exact_for_second_order_models():
    """One antithetic pair of walks is exact for interactions of order <= 2
    (shap's own check): f = x0 x2 + x1 + x2 + x2 x3 over a zero background."""
    rs = np.random.RandomState(3)
    X = rs.randint(0, 2, size=(20, 12)).astype(float)
    model = lambda x: x[:, 0] * x[:, 2] + x[:, 1] + x[:, 2] + x[:, 2] * x[:, 3]  # noqa: E731
    values = PermutationExplainer(model, np.zeros((1, 12)), seed=0)(
        X, max_evals=50, silent=True).values
    expect = np.zeros_like(X)
    expect[:, 0] = X[:, 0] * X[:, 2] / 2
    expect[:, 2] = X[:, 0] * X[:, 2] / 2 + X[:, 2] + X[:, 2] * X[:, 3] / 2
    expect[:, 1] = X[:, 1]
    expect[:, 3] = X[:, 2] * X[:, 3] / 2
    np.testing.assert_allclose(values, expect, atol=1e-12)


def test_permutation_with_the_whole_table_in_budget_is_exact(data):
    X, B, w = data
    model = two_outputs(w)
    ours = PermutationExplainer(model, B, seed=1)(X, max_evals=2**M, silent=True)
    exact = ExactExplainer(model, B)(X, silent=True)
    np.testing.assert_allclose(ours.values, exact.values, atol=1e-12)
    assert ours.values.shape == (len(X), M, 2)


def test_permutation_sampled_within_its_error_bars():
    """Sampled values against the exact ones on 12 features (2**12 > the
    budget): within 6 standard errors for every feature and row (about 40
    pairs, t with 39 df: chance failure < 1e-6 per check), efficient (each
    walk's marginals sum to v(N) - v({})) and deterministic per seed. An
    antithetic pair is exact for terms of order <= 2, so only the features
    of the third-order term x2 x3 x4 have an error; a pair's average for
    them is 0 or 1/2 x2 x3 x4, so their sd is 0 by chance with probability
    below (2/3)**39 < 2e-7."""
    rs = np.random.RandomState(11)
    X, B, w = rs.randn(4, 12), rs.randn(6, 12), rs.randn(12)
    model = linear_pairs(w)
    exact = ExactExplainer(model, B)(X, silent=True).values
    est = PermutationExplainer(model, B, seed=5)(X, max_evals=900, error_bounds=True,
                                                 silent=True)
    assert np.all(est.error_std[:, 2:5] > 0)
    assert np.all(np.abs(est.values - exact) <= 6 * est.error_std + 1e-9)
    assert np.abs(est.values - exact).max() > 1e-6          # sampled, not exact
    np.testing.assert_allclose(est.values.sum(1) + est.base_values, model(X), atol=1e-12)
    again = PermutationExplainer(model, B, seed=5)(X, max_evals=900, silent=True)
    np.testing.assert_array_equal(est.values, again.values)
    other = PermutationExplainer(model, B, seed=6)(X, max_evals=900, silent=True)
    assert not np.array_equal(est.values, other.values)


@pytest.mark.parametrize("k, max_evals", [(3, 6), (5, 40), (10, 500), (16, 400), (30, 200)])
def test_affordable_pairs_is_the_plain_walk_over_pairs(k, max_evals):
    """The pairs each seed affords, found for several seeds at once (by a
    table of first appearances at k = 3..10, by a sort beyond), equal a
    plain walk: the sampler's pairs one at a time, each adding the distinct
    prefixes of its order and its reverse, while the coalitions seen (with
    {} and N) stay within max_evals, at most PAIRS_OVER_PLAIN times the
    pairs that fit without repeats (+1)."""
    from fastcredit._backend import kernels
    from fastcredit.shap.permutation import PAIRS_OVER_PLAIN, affordable_pairs

    seeds = [1, 2, 3, 2**61 + 5, 99]
    full = 2**k - 1
    most = min(max_evals, PAIRS_OVER_PLAIN * ((max_evals - 2) // (2 * (k - 1))) + 1)
    for seed, (pairs, masks) in zip(seeds, affordable_pairs(k, max_evals, seeds)):
        seen, walked = {0, full}, 0
        while walked < most:
            order = np.empty((1, k), dtype=np.int32)
            kernels("sampling", "c").permutations(np.uint64(seed), 0, walked, order)
            prefixes = set()
            for walk in (order[0], order[0][::-1]):
                mask = 0
                for player in walk[:-1]:
                    mask |= 1 << int(player)
                    prefixes.add(mask)
            if len(seen | prefixes) > max_evals:
                break
            seen |= prefixes
            walked += 1
        assert pairs == walked >= 1
        np.testing.assert_array_equal(masks, np.array(sorted(seen), dtype=np.uint64))


def test_permutation_budget_counts_distinct_coalitions(data):
    """The model sees each coalition of a row once, never more than
    max_evals of them, in calls of at most batch_size coalitions."""
    X, B, w = data
    for max_evals, batch_size in [(20, 3), (40, 7), (63, "auto")]:
        model = Counting(linear_pairs(w))
        PermutationExplainer(model, B, seed=2)(X[:1], max_evals=max_evals,
                                               batch_size=batch_size, silent=True)
        rows = model.rows
        assert len(rows) % len(B) == 0
        coalitions = rows.reshape(-1, len(B), M)
        keep = np.isclose(coalitions[:, 0, :], X[0])   # which features come from x
        n = len(coalitions)
        assert len({tuple(k) for k in keep}) == n       # each coalition once
        assert n <= max_evals
        assert n >= max_evals - 2 * (M - 1)             # the budget is spent to the last pair
        if batch_size != "auto":
            assert all(len(c) <= batch_size * len(B) for c in model.calls)


@pytest.mark.parametrize("cls, kwargs", [(PermutationExplainer, {"max_evals": 30}),
                                         (ExactExplainer, {})])
def test_rows_share_model_calls_and_give_each_row_its_own_values(data, cls, kwargs):
    """The rows of one call are evaluated several per model call, never more
    than batch_size coalitions a call, and each row's values are those of
    explaining it alone (the same seeds, drawn in row order)."""
    X, B, w = data
    X = np.concatenate([X, X[::-1] + 0.5])              # 10 rows
    seed = {"seed": 4} if cls is PermutationExplainer else {}
    model = Counting(linear_pairs(w))
    explainer = cls(model, B, **seed)
    before = len(model.calls)                           # shap's f(background)
    together = explainer(X, batch_size=150, silent=True, **kwargs)
    calls = model.calls[before:]
    assert len(calls) < len(X)
    assert all(len(c) <= 150 * len(B) for c in calls)
    # each row's coalitions once: 2**M of each row for Exact, <= max_evals sampled
    per_row = 2**M if cls is ExactExplainer else kwargs["max_evals"]
    assert sum(len(c) for c in calls) <= len(X) * per_row * len(B)
    alone = cls(linear_pairs(w), B, **seed)
    for r in range(len(X)):
        row = alone(X[r:r + 1], silent=True, **kwargs)
        np.testing.assert_array_equal(together.values[r], row.values[0])
        np.testing.assert_array_equal(together.base_values[r], row.base_values[0])


@pytest.mark.parametrize("which", ["permutation", "kernel"])
def test_more_rows_than_planned_at_once_give_each_row_its_own_values(which):
    """70 rows, more than the 64 a call plans at once: a few model calls in
    all, and each row's values those of explaining it alone (its seed drawn
    in row order from NumPy's global generator, as row by row)."""
    rs = np.random.RandomState(8)
    X, B, w = rs.randn(70, 8), rs.randn(4, 8), rs.randn(8)
    model = Counting(linear_pairs(w))
    if which == "permutation":
        together = PermutationExplainer(model, B, seed=3)(X, max_evals=60, silent=True).values
        one = PermutationExplainer(linear_pairs(w), B, seed=3)
        alone = [one(X[r:r + 1], max_evals=60, silent=True).values for r in range(len(X))]
    else:
        np.random.seed(3)
        together = KernelExplainer(model, B).shap_values(X, nsamples=60, l1_reg=False,
                                                         silent=True)
        np.random.seed(3)
        one = KernelExplainer(linear_pairs(w), B)
        alone = [one.shap_values(X[r:r + 1], nsamples=60, l1_reg=False, silent=True)
                 for r in range(len(X))]
    np.testing.assert_array_equal(together, np.concatenate(alone))
    assert len(model.calls) <= 5


def test_a_model_returning_torch_like_tensors(data):
    """shap's Model wrapper converts a torch tensor's output (cpu, detach,
    numpy); fastcredit.shap calls the model without the wrapper and converts
    it the same way: the values are those of the plain NumPy model."""
    X, B, w = data

    class Tensor:
        def __init__(self, values):
            self.values = values

        def cpu(self):
            return self

        def detach(self):
            return self

        def numpy(self):
            return self.values

    model = linear_pairs(w)
    wrapped = ExactExplainer(lambda x: Tensor(model(x)), B)(X, silent=True)
    np.testing.assert_array_equal(wrapped.values, ExactExplainer(model, B)(X, silent=True).values)


def test_permutation_main_effects_and_multi_output(data):
    X, B, w = data
    model = two_outputs(w)
    exp = PermutationExplainer(model, B, seed=0)(X, max_evals=30, main_effects=True,
                                                 silent=True)
    assert exp.values.shape == (len(X), M, 2) and exp.base_values.shape == (len(X), 2)
    for r, x in enumerate(X):
        table = brute_table(model, x, B)
        singles = table[[1 << i for i in range(M)]] - table[0]
        np.testing.assert_allclose(exp.main_effects[r], singles, atol=1e-12)
    np.testing.assert_allclose(exp.values.sum(1) + exp.base_values, model(X), atol=1e-12)


def test_independent_masker_and_dataframes(data):
    pd = pytest.importorskip("pandas")
    X, B, w = data
    names = [f"f{i}" for i in range(M)]
    seen = []

    def model(frame):
        seen.append(type(frame))
        return linear_pairs(w)(np.asarray(frame))

    masker = shap.maskers.Independent(pd.DataFrame(B, columns=names))
    exp = ExactExplainer(model, masker)(pd.DataFrame(X, columns=names), silent=True)
    assert set(seen) == {pd.DataFrame}
    assert list(exp.feature_names) == names
    plain = ExactExplainer(linear_pairs(w), shap.maskers.Independent(B))(X, silent=True)
    np.testing.assert_allclose(exp.values, plain.values, atol=1e-12)


def test_logit_link_values_are_additive_in_log_odds(data):
    X, B, w = data
    model = probability(w)
    exp = PermutationExplainer(model, B, link=shap.links.logit, seed=0)(X, max_evals=30,
                                                                       silent=True)
    p = model(X)
    np.testing.assert_allclose(exp.values.sum(1) + exp.base_values, np.log(p / (1 - p)),
                               atol=1e-9)


def test_default_call_arguments_as_shap_takes_them(data):
    """Keyword arguments of the constructor become the call's defaults."""
    X, B, w = data
    model = Counting(linear_pairs(w))
    PermutationExplainer(model, B, seed=0, max_evals=20)(X[:1], silent=True)
    assert len(model.rows) // len(B) <= 20


# --- Sampling (IME) --------------------------------------------------------------

def test_sampling_legacy_api_as_shap(data):
    """shap_values, expected_value and __call__ as shap's SamplingExplainer
    lays them out, single and two outputs; efficiency holds exactly (shap's
    correction of the sample mean's gap)."""
    X, B, w = data
    for model in (linear_pairs(w), two_outputs(w)):
        ours, theirs = SamplingExplainer(model, B), shap.SamplingExplainer(model, B)
        np.random.seed(0)
        v = ours.shap_values(X, nsamples=200, silent=True)
        np.random.seed(0)
        u = theirs.shap_values(X, nsamples=200, silent=True)
        assert np.shape(v) == np.shape(u)
        np.testing.assert_allclose(ours.expected_value, theirs.expected_value, atol=1e-12)
        np.testing.assert_allclose(np.sum(v, axis=1) + ours.expected_value, model(X),
                                   atol=1e-10)
        assert isinstance(ours(X[:2]), shap.Explanation)


def test_sampling_converges_to_the_exact_values(data):
    """The mean over 20 seeds is within 5 standard errors of that mean (the
    seeds' spread / sqrt(20); chance failure < 1e-4 per value, t with 19 df)
    of the exact values, and reruns with one seed agree."""
    X, B, w = data
    model = linear_pairs(w)
    exact = ExactExplainer(model, B)(X[:2], silent=True).values
    runs = []
    for seed in range(20):
        np.random.seed(seed)
        runs.append(SamplingExplainer(model, B).shap_values(X[:2], nsamples=300, silent=True))
    runs = np.array(runs)
    half = 5 * runs.std(axis=0, ddof=1) / np.sqrt(len(runs)) + 1e-9
    assert np.all(np.abs(runs.mean(axis=0) - exact) <= half)
    np.random.seed(3)
    again = SamplingExplainer(model, B).shap_values(X[:2], nsamples=300, silent=True)
    np.testing.assert_array_equal(again, runs[3])


def test_sampling_model_error_and_nsamples(data):
    X, B, w = data
    calls = {"n": 0}

    def breaks_later(x):
        calls["n"] += 1
        if calls["n"] > 2:
            raise ZeroDivisionError("boom")
        return linear_pairs(w)(x)

    with pytest.raises(RuntimeError, match="the model raised .* masked rows"):
        SamplingExplainer(breaks_later, B).shap_values(X[:1], nsamples=50, silent=True)
    with pytest.raises(ValueError, match="nsamples"):
        SamplingExplainer(linear_pairs(w), B).shap_values(X[:1], nsamples=0, silent=True)


# --- Kernel --------------------------------------------------------------------

def test_kernel_legacy_api_and_exact_when_enumerated(data):
    """shap's layout (single and two outputs, __call__), and with nsamples
    covering all 2**M - 2 coalitions the regression is exact: equal to
    shap's Kernel (then exact too) and to the Exact explainer."""
    X, B, w = data
    for model in (linear_pairs(w), two_outputs(w)):
        ours, theirs = KernelExplainer(model, B), shap.KernelExplainer(model, B)
        v = ours.shap_values(X, nsamples=2**M, silent=True)
        u = theirs.shap_values(X, nsamples=2**M, silent=True)
        assert np.shape(v) == np.shape(u)
        np.testing.assert_allclose(v, u, atol=1e-9)
        np.testing.assert_allclose(v, ExactExplainer(model, B)(X, silent=True).values,
                                   atol=1e-9)
        np.testing.assert_allclose(ours.expected_value, theirs.expected_value, atol=1e-12)
        assert isinstance(ours(X[:2], l1_reg=False), shap.Explanation)


def test_kernel_logit_link(data):
    X, B, w = data
    model = probability(w)
    v = KernelExplainer(model, B, link="logit").shap_values(X, nsamples=2**M, silent=True)
    u = shap.KernelExplainer(model, B, link="logit").shap_values(X, nsamples=2**M,
                                                                  silent=True)
    np.testing.assert_allclose(v, u, atol=1e-9)


def test_kernel_sampled_budget_and_error():
    """12 features, 300 samples: at most 302 distinct coalitions reach the
    model (each once), values near the exact ones (RMSE below the values'
    RMS / 4) and deterministic per np.random seed."""
    rs = np.random.RandomState(2)
    X, B, w = rs.randn(3, 12), rs.randn(5, 12), rs.randn(12)
    model = Counting(linear_pairs(w))
    np.random.seed(0)
    explainer = KernelExplainer(model, B)
    before = len(model.calls)               # shap's f(background) in the constructor
    v = explainer.shap_values(X[:1], nsamples=300, l1_reg=False, silent=True)
    rows = np.concatenate(model.calls[before:])
    coalitions = np.isclose(rows.reshape(-1, len(B), 12)[:, 0, :], X[0])
    assert len(coalitions) <= 302
    assert len({tuple(c) for c in coalitions}) == len(coalitions)
    exact = ExactExplainer(linear_pairs(w), B)(X[:1], silent=True).values
    assert np.sqrt(np.mean((v - exact) ** 2)) < np.sqrt(np.mean(exact ** 2)) / 4
    np.random.seed(0)
    again = KernelExplainer(linear_pairs(w), B).shap_values(X[:1], nsamples=300,
                                                            l1_reg=False, silent=True)
    np.testing.assert_array_equal(v, again)


@pytest.mark.parametrize("l1_reg", ["num_features(3)", "num_features(1)", "aic", "bic", 0.01,
                                    0.001])
def test_kernel_feature_selection_equals_shaps(data, l1_reg):
    """Every coalition sampled (shap is deterministic there), shap's l1_reg
    selectors: the same features kept and the same values as shap's
    KernelExplainer, one output and two (selected per output); the kept
    features carry f(x) - E f, the others are exactly 0 (all of them where
    the selector keeps none, as shap's), and num_features(r) keeps r."""
    X, B, w = data
    for model in (linear_pairs(w), two_outputs(w)):
        ours, theirs = KernelExplainer(model, B), shap.KernelExplainer(model, B)
        v = ours.shap_values(X, nsamples=2**M, l1_reg=l1_reg, silent=True)
        u = theirs.shap_values(X, nsamples=2**M, l1_reg=l1_reg, silent=True)
        np.testing.assert_array_equal(v != 0, u != 0)
        np.testing.assert_allclose(v, u, atol=1e-9)
        # efficiency where a feature is kept (a Lasso may keep none: all 0, as shap's)
        some = (v != 0).any(axis=1)
        assert some.all() or v.ndim == 3
        np.testing.assert_allclose((v.sum(1) + ours.expected_value)[some], model(X)[some],
                                   atol=1e-9)
        if isinstance(l1_reg, str) and l1_reg.startswith("num_features"):
            assert np.all((v != 0).sum(1) == int(l1_reg[13:-1]))
    # the selection changes the values: 3 of 6 features are not the Shapley values
    all_kept = KernelExplainer(linear_pairs(w), B).shap_values(X, nsamples=2**M, l1_reg=False,
                                                               silent=True)
    three = KernelExplainer(linear_pairs(w), B).shap_values(X, nsamples=2**M,
                                                            l1_reg="num_features(3)", silent=True)
    assert np.abs(all_kept - three).max() > 0.1


def test_kernel_default_l1_reg_beyond_ten_features_is_shaps():
    """12 varying features, every coalition sampled, l1_reg left at shap's
    default "num_features(10)": LARS keeps 10 of them in each row, the same
    10 as shap's, with shap's values (it was refused before)."""
    rs = np.random.RandomState(1)
    X, B, w = rs.randn(2, 12), rs.randn(5, 12), rs.randn(12)
    model = linear_pairs(w)
    v = KernelExplainer(model, B).shap_values(X, nsamples=2**12, silent=True)
    u = shap.KernelExplainer(model, B).shap_values(X, nsamples=2**12, silent=True)
    assert np.all((v != 0).sum(1) == 10)
    np.testing.assert_array_equal(v != 0, u != 0)
    np.testing.assert_allclose(v, u, atol=1e-9)


def test_kernel_selection_on_a_linear_model_is_exact():
    """shap's tests/explainers/test_kernel.py::test_linear: f = x0 + 2 x1 on
    3 features, num_features(2): LARS keeps x0 and x1 and the values are
    (x - mean x) * (1, 2, 0), x2's exactly 0 (Lundberg and Lee 2017,
    corollary 1)."""
    rs = np.random.RandomState(3)
    x = rs.normal(size=(40, 3))
    phi = KernelExplainer(lambda z: z[:, 0] + 2.0 * z[:, 1], x)(
        x, l1_reg="num_features(2)", silent=True).values
    np.testing.assert_allclose(phi, (x - x.mean(0)) * np.array([1.0, 2.0, 0.0]), atol=1e-12)
    assert np.all(phi[:, 2] == 0.0)


@pytest.mark.parametrize("m, nsamples", [(12, 30), (12, 300), (16, 9000)])
def test_kernel_sampled_equals_fc_approximate_on_the_row_game(m, nsamples):
    """No selection, each row's seed drawn from NumPy's global generator:
    the values are fc.approximate's KernelSHAP (pairing) on the row's game
    with that seed, to the 1e-6 of its efficiency held by the weight 1e8 on
    v(N) (here held exactly): the same sample, the same regression. 30
    samples of 12 features leave some features always drawn together (a
    singular regression: both give its least-norm solution); 9,000 of 16
    take more than the loop's first round of draws."""
    from fastcredit.shap._common import RowGame

    rs = np.random.RandomState(2)
    X, B, w = rs.randn(2, m), rs.randn(5, m), rs.randn(m)
    model = linear_pairs(w)
    np.random.seed(5)
    v = KernelExplainer(model, B).shap_values(X, nsamples=nsamples, l1_reg=False, silent=True)
    np.random.seed(5)
    for i in range(2):
        seed = int(np.random.randint(0, 2**62))
        game = RowGame(model, B, X[i], None)
        est = fc.approximate(fc.games.deterministic(game.values), m, "SV",
                             method="kernelshap", budget=nsamples + 2, seed=seed, pairing=True)
        np.testing.assert_allclose(v[i], est.values[1], atol=1e-5)


def test_kernel_selection_when_sampled_keeps_the_strong_features():
    """12 features of which 3 carry almost all the effect, 300 samples: the
    selected features only are nonzero (at most r for num_features(r)), the
    strong three among them, and each row sums to f(x) - E f exactly. "auto"
    is shap's AIC below 20% of the coalitions sampled (deprecated, warned),
    and no selection at 20% or more: there its values equal l1_reg=False's."""
    rs = np.random.RandomState(4)
    X, B = rs.randn(4, 12), rs.randn(6, 12)
    coef = np.r_[3.0, -4.0, 2.5, 0.01 * rs.randn(9)]

    def model(x):
        return x @ coef + 0.01 * x[:, 3] * x[:, 4]
    explainer = KernelExplainer(model, B)
    for l1_reg, most in (("num_features(4)", 4), ("aic", 12), ("bic", 12), (1e-4, 6)):
        phi = explainer.shap_values(X, nsamples=300, l1_reg=l1_reg, silent=True)
        kept = phi != 0
        assert np.all(kept[:, :3]) and np.all(kept.sum(1) <= most)
        np.testing.assert_allclose(phi.sum(1) + explainer.expected_value, model(X), atol=1e-9)
    np.random.seed(1)
    aic = explainer.shap_values(X, nsamples=300, l1_reg="aic", silent=True)
    np.random.seed(1)
    with pytest.warns(DeprecationWarning, match="auto"):
        auto = explainer.shap_values(X, nsamples=300, l1_reg="auto", silent=True)
    np.testing.assert_array_equal(auto, aic)
    small = KernelExplainer(lambda x: x @ coef[:4] + x[:, 0] * x[:, 1], B[:, :4])
    np.random.seed(1)
    plain = small.shap_values(X[:, :4], nsamples=10, l1_reg=False, silent=True)
    np.random.seed(1)
    with pytest.warns(DeprecationWarning, match="auto"):     # 10 of 14 coalitions
        auto = small.shap_values(X[:, :4], nsamples=10, l1_reg="auto", silent=True)
    np.testing.assert_array_equal(auto, plain)


@pytest.mark.parametrize("l1_reg, error", [("rank(3)", ValueError), ("num_features(0)", ValueError),
                                           (-0.5, ValueError), (np.nan, ValueError),
                                           ([1], TypeError)])
def test_kernel_bad_l1_reg_names_it(data, l1_reg, error):
    X, B, w = data
    with pytest.raises(error, match="l1_reg"):
        KernelExplainer(linear_pairs(w), B).shap_values(X[:1], nsamples=20, l1_reg=l1_reg,
                                                        silent=True)


# --- errors --------------------------------------------------------------------

@pytest.mark.parametrize("cls", [PermutationExplainer, ExactExplainer])
def test_a_model_that_raises_is_reported_naming_the_call(data, cls):
    X, B, w = data

    def broken(x):
        raise KeyError("no such column")

    with pytest.raises(RuntimeError, match="the model raised .* masked rows") as info:
        cls(broken, B)(X[:1], silent=True)
    assert isinstance(info.value.__cause__, KeyError)


def test_nothing_is_kept_from_a_failed_call(data):
    """A model that fails once and then works gives the values of a fresh run."""
    X, B, w = data
    good = linear_pairs(w)
    state = {"fail": True}

    def flaky(x):
        if state.pop("fail", False):
            raise RuntimeError("transient")
        return good(x)

    explainer = PermutationExplainer(flaky, B, seed=3)
    with pytest.raises(RuntimeError, match="model raised"):
        explainer(X[:1], max_evals=30, silent=True)
    np.random.seed(3)
    again = explainer(X[:1], max_evals=30, silent=True).values
    np.testing.assert_array_equal(
        again, PermutationExplainer(good, B, seed=3)(X[:1], max_evals=30, silent=True).values)


@pytest.mark.parametrize("cls,kwargs,match", [
    (PermutationExplainer, {"max_evals": 0}, "max_evals"),
    (PermutationExplainer, {"max_evals": 5}, "max_evals"),
    (PermutationExplainer, {"max_evals": 2.5}, "max_evals"),
    (PermutationExplainer, {"batch_size": 0}, "batch_size"),
    (ExactExplainer, {"batch_size": -1}, "batch_size"),
    (ExactExplainer, {"interactions": "pairs"}, "interactions"),
])
def test_bad_arguments_name_the_argument(data, cls, kwargs, match):
    X, B, w = data
    with pytest.raises((ValueError, TypeError), match=match):
        cls(linear_pairs(w), B)(X[:1], silent=True, **kwargs)


def test_interactions_beyond_pairs_refused(data):
    X, B, w = data
    with pytest.raises(NotImplementedError, match="interactions"):
        ExactExplainer(linear_pairs(w), B)(X[:1], interactions=3, silent=True)


def test_a_masker_fastcredit_does_not_take_is_refused(data):
    X, B, w = data
    with pytest.raises(TypeError, match="masker"):
        PermutationExplainer(linear_pairs(w), shap.maskers.Impute(B))(X[:1], silent=True)


def test_model_output_rows_checked(data):
    X, B, w = data
    with pytest.raises(ValueError, match="one real output"):
        ExactExplainer(lambda x: np.zeros(3), B)(X[:1], silent=True)


def test_inputs_are_not_modified(data):
    X, B, w = data
    X0, B0 = X.copy(), B.copy()
    PermutationExplainer(linear_pairs(w), B, seed=0)(X, max_evals=30, silent=True)
    ExactExplainer(linear_pairs(w), B)(X, interactions=True, silent=True)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(B, B0)


def test_varying_features_as_shap_finds_them():
    """fastcredit's test of which features differ from the background is
    shap's ~np.isclose(x, data) on every mix of equal, near, infinite and
    NaN entries."""
    from fastcredit.shap._common import differing
    rs = np.random.RandomState(0)
    entries = [0.0, 1.0, 1 + 1e-9, 1 + 1e-6, 1e-9, 2.0, np.inf, -np.inf, np.nan]
    for _ in range(3000):
        background, x = rs.choice(entries, size=(3, 4)), rs.choice(entries, size=4)
        np.testing.assert_array_equal(differing(x, background),
                                      np.flatnonzero(~np.isclose(x, background).all(axis=0)))
        # the legacy explainers' test, np.allclose(x_j, data[:, j], equal_nan=True)
        legacy = [j for j in range(4)
                  if not np.allclose(x[j], background[:, j], equal_nan=True)]
        np.testing.assert_array_equal(differing(x, background, equal_nan=True), legacy)


def test_pair_order_matches_combinations():
    """fc.interactions lays pairs out as itertools.combinations does, which
    the interaction matrix relies on (np.triu_indices)."""
    i, j = np.triu_indices(5, 1)
    assert list(zip(i.tolist(), j.tolist())) == list(itertools.combinations(range(5), 2))


@pytest.mark.parametrize("varying", [[], [2], [0, 3, 4], [0, 1, 2, 3, 4]])
def test_masked_rows_are_where_over_the_coalitions(varying):
    """A row's masked rows (the compiled kernel) are, bit for bit, np.where
    over which values come from x (infinities and NaN among the values), in
    mask order, for all coalitions and for a part of them; rows sharing a
    call take their own x's values."""
    from fastcredit.shap._common import RowGame, evaluate_rows
    rs = np.random.RandomState(len(varying))
    background, x = rs.randn(3, 5), rs.randn(5)
    background[0, 1], x[3] = np.nan, np.inf
    game = RowGame(None, background, x, None, varying=varying)
    masks = np.arange(2 ** len(varying), dtype=np.uint64)
    keep = np.zeros((len(masks), 5), dtype=bool)
    keep[:, varying] = (masks[:, None] >> np.arange(len(varying), dtype=np.uint64)) & 1
    want = np.where(keep[:, None, :], x, background).reshape(-1, 5)
    np.testing.assert_array_equal(game.masked(masks), want)
    np.testing.assert_array_equal(game.masked(masks[1:]), want[len(background):])
    # integer data (a legacy explainer's) and rows of more than 64 features
    # take np.where's path, which keeps the data's dtype
    for bg, row, vary in ((np.arange(15).reshape(3, 5), np.arange(5) + 7, varying),
                          (rs.randn(2, 70), rs.randn(70), [1, 64, 69])):
        game = RowGame(None, bg, row, None, varying=vary)
        some = np.arange(2 ** len(vary), dtype=np.uint64)[1:]
        kept = np.zeros((len(some), bg.shape[1]), dtype=bool)
        kept[:, vary] = (some[:, None] >> np.arange(len(vary), dtype=np.uint64)) & 1
        assert not game.compiled
        got = game.masked(some)
        assert got.dtype == bg.dtype
        np.testing.assert_array_equal(got, np.where(kept[:, None, :], row, bg).reshape(
            -1, bg.shape[1]))
    # two rows in one model call: each coalition's rows hold its own row's values
    seen = []
    model = lambda rows: seen.append(rows.copy()) or rows.sum(axis=1)  # noqa: E731
    games = [RowGame(model, background, x + shift, None, varying=varying) for shift in (0, 1)]
    evaluate_rows(games, [masks, masks])
    np.testing.assert_array_equal(seen[0], np.concatenate(
        [want, np.where(keep[:, None, :], x + 1, background).reshape(-1, 5)]))
