"""shap's PermutationExplainer over fastcredit's permutation sampler."""
from __future__ import annotations

from typing import Any

import numpy as np
import shap

from .._backend import kernels
from .._constants import STATS
from .._params import SEED
from .._validation import check_bool
from ..games import deterministic
from ..sampling import _UNLIMITED as UNLIMITED
from ..sampling import _affordable_pairs, _tree_permutations, permutation_shapley
from ..tables import owen, owen_coalitions, shapley
from ._common import BACKEND, MAX_EVALS, Lookahead, RowGame, background_of, output_names

__all__ = ["PermutationExplainer"]

#: Most antithetic pairs one budget may buy, over those it buys when no two
#: walks share a coalition.
PAIRS_OVER_PLAIN = 4
#: Most masks (rows x each row's capacity) one call of the compiled
#: affordable_pairs writes.
PLANNED_MASKS = 1 << 20
#: Most varying features whose sampled walks run compiled over a table of
#: the row's game (2**k entries per output).
MAX_TABLE_FEATURES = 20
#: Most features of a masker with a clustering (fc.owen takes a table over
#: all of them, 2**m entries per output).
MAX_OWEN_FEATURES = 20


def _auto_batch(batch_size):
    """shap's "auto" batch size, kept for fastcredit to size (None)."""
    return None if isinstance(batch_size, str) and batch_size == "auto" else batch_size


def exact_shapley(game: RowGame) -> np.ndarray:
    """Shapley values (outputs..., k) of the varying features from all
    2**k coalitions (one table per output, fc.shapley)."""
    table = game.values(np.arange(2**game.k, dtype=np.uint64))
    if game.k == 0:
        return np.zeros((game.output_columns(), 0))
    return shapley(table.reshape(2**game.k, -1).T, backend=BACKEND)


def owen_needs(game: RowGame) -> tuple[np.ndarray, np.ndarray]:
    """(masks over all m features that fc.owen reads for the masker's tree,
    their varying parts): the model sees each distinct varying part once
    (features that do not vary cannot move v)."""
    full = owen_coalitions(game.clustering, game.m)
    bits = (full[:, None] >> game.varying.astype(np.uint64)) & np.uint64(1)
    return full, np.bitwise_or.reduce(bits << np.arange(game.k, dtype=np.uint64), axis=1)


def owen_cost(game: RowGame) -> int:
    """Model evaluations (distinct coalitions) the Owen values take."""
    return len(np.unique(owen_needs(game)[1]))


def owen_values(game: RowGame) -> np.ndarray:
    """Owen values (outputs..., m) over the masker's cluster tree
    (fc.owen), the game evaluated only at the coalitions fc.owen reads
    (fc.owen_coalitions: O(m**2) for a balanced binary tree); the rest of
    the table is never read."""
    full, varying_part = owen_needs(game)
    values = game.values(varying_part).reshape(len(full), -1)
    table = np.zeros((values.shape[1], 2**game.m))
    table[:, full.astype(np.int64)] = values.T
    return owen(table, game.clustering, backend=BACKEND)


def uniform_orders(seed, out: np.ndarray) -> None:
    """out (n, k) int32 := the sampler's first n uniform orders of k
    features for ``seed`` (fastcredit.sampling's stream)."""
    kernels("sampling", BACKEND).permutations(seed, 0, 0, out)


def tree_children(game: RowGame) -> np.ndarray:
    """The nodes (m - 1, 2) each row of the masker's linkage matrix joins;
    NotImplementedError for a clustering whose orders are not sampled here
    (a partition, or a cluster of negative distance, which fc.owen keeps as
    one block)."""
    z = np.asarray(game.clustering, dtype=np.float64)
    if z.shape != (game.m - 1, 4) or not (z[:, 2] >= 0).all():
        raise NotImplementedError(
            "fastcredit.shap.PermutationExplainer samples the orders of a binary cluster tree "
            f"(a linkage matrix of shape ({game.m - 1}, 4), distances >= 0); this masker's "
            f"clustering (shape {z.shape}) is not one")
    return z[:, :2].astype(np.int64)


def tree_orders(game: RowGame, children: np.ndarray):
    """A function (seed, out) that writes into out (n, k) int32 the first n
    orders of the row's varying features that keep every cluster of the tree
    together (the compiled tree sampler over all m features, each order
    restricted to the varying ones: a feature that does not vary adds
    nothing to any coalition, so the restricted walk has the same
    marginals)."""
    position = np.full(game.m, -1, dtype=np.int32)
    position[game.varying] = np.arange(game.k, dtype=np.int32)

    def orders(seed, out):
        mapped = position[_tree_permutations(children, seed, len(out), backend=BACKEND)]
        out[:] = mapped[mapped >= 0].reshape(out.shape)
    return orders


def affordable_pairs(k: int, max_evals: int, seeds,
                     orders=uniform_orders) -> list[tuple[int, np.ndarray]]:
    """For each seed, (pairs, masks): how many of the sampler's antithetic
    pairs for that seed fit in max_evals distinct coalitions, and those
    coalitions.

    The sampler draws pair p's order from the counter-based stream at unit
    p (``orders(seed, out)`` writes the first len(out): fastcredit.sampling's
    uniform orders, or :func:`tree_orders`), so its walks are known before it
    runs: the first pairs' orders are laid out here, and the compiled
    ``sampling.affordable_pairs`` walks them, counting each coalition where
    it first appears, and takes the longest run of pairs whose distinct
    coalitions (with v({}) and v(N)) fit (~2.4 us a row at k = 10, budget
    500, against ~20 us of NumPy that laid out and sorted every prefix,
    AMD EPYC Zen 4). Evaluating those in one pass lets
    the model run in few large calls. Pairs that repeat earlier coalitions
    cost less than 2 (k - 1); at most PAIRS_OVER_PLAIN times the pairs the
    budget buys without repeats are considered, twice the plain count first,
    more only for the seeds where all of those fit (the first pairs'
    coalitions do not depend on how many are laid out). The masks are
    sorted.
    """
    seeds = [np.uint64(seed) for seed in seeds]
    width = 2 * (k - 1)
    plain = (max_evals - 2) // width
    most = min(max_evals, PAIRS_OVER_PLAIN * plain + 1)
    candidates = min(most, 2 * plain + 1)
    found = [None] * len(seeds)
    todo = np.arange(len(seeds))
    while len(todo):
        # rows per kernel call: their masks (rows x capacity) stay within PLANNED_MASKS
        capacity = min(max_evals, 2 + width * candidates)
        step = max(1, PLANNED_MASKS // capacity)
        for start in range(0, len(todo), step):
            part = todo[start:start + step]
            perms = np.empty((len(part), candidates, k), dtype=np.int32)
            for i, row in enumerate(part):
                orders(seeds[row], perms[i])
            pairs, counts, masks = _affordable_pairs(perms, max_evals, backend=BACKEND)
            for i in np.flatnonzero((pairs < candidates) | (candidates == most)):
                found[part[i]] = (int(pairs[i]), masks[i, :counts[i]])
        todo = np.array([row for row in todo if found[row] is None], dtype=np.int64)
        candidates = min(most, 2 * candidates)
    return found


def sampled_shapley(game: RowGame, pairs: int, masks: np.ndarray, seed: int):
    """(values, stderr), each (outputs, k), by antithetic permutation
    sampling: the walks of the sampler's first ``pairs`` antithetic pairs
    for ``seed``, whose coalitions are ``masks`` (:func:`affordable_pairs`),
    evaluated first in batch_size model calls; every output's estimate then
    walks the same permutations (one seed) on them."""
    k = game.k
    evaluated = game.values(masks).reshape(len(masks), -1)
    n_out = evaluated.shape[1]
    values = np.empty((n_out, k))
    stderr = np.empty((n_out, k))
    if k <= MAX_TABLE_FEATURES:
        # the walks run compiled over a table of the row's game holding the
        # coalitions evaluated (the pairs' walks read those only; the rest
        # stays 0, never read): the same arithmetic, in the same order, as
        # the Python walks below
        table = np.zeros((n_out, 2**k))
        table[:, masks.astype(np.int64)] = evaluated.T
        stats = np.zeros((1, STATS), dtype=np.int64)
        walks = kernels("sampling", BACKEND).permutation_shapley
        for j in range(n_out):
            walks(table[j:j + 1], seed, 0, 2 * pairs, UNLIMITED, True, False, 0.0, 2,
                  values[j:j + 1], stderr[j:j + 1], stats)
        return values, stderr
    for j in range(n_out):
        column = deterministic(lambda masks, j=j: game.values(masks).reshape(len(masks), -1)[:, j])
        # cache=False: the game's own memo holds every coalition already, and
        # the walks' prefixes (v({}) and v(N) included) are looked up there once
        est = permutation_shapley(column, k, permutations=2 * pairs, cache=False, seed=seed,
                                  backend=BACKEND)
        values[j], stderr[j] = est.values, est.stderr
    return values, stderr


def walked_shapley(game: RowGame, perms: np.ndarray):
    """(values, stderr), each (outputs, k): the antithetic walks along the
    orders ``perms`` (pairs, k) and their reverses over the row's game (every
    prefix evaluated already), each pair's average marginals one sample; the
    mean over pairs and its standard error (sd over sqrt(pairs), inf for one
    pair)."""
    pairs, k = perms.shape
    bits = np.left_shift(np.uint64(1), perms.astype(np.uint64))
    forward = np.bitwise_or.accumulate(bits, axis=1)
    backward = np.bitwise_or.accumulate(bits[:, ::-1], axis=1)
    empty = np.zeros((pairs, 1), dtype=np.uint64)
    masks = np.concatenate([empty, forward, empty, backward], axis=1)       # (pairs, 2 (k + 1))
    v = game.values(masks.reshape(-1)).reshape(pairs, 2, k + 1, -1)
    steps = np.diff(v, axis=2)                      # (pairs, 2, k, outputs): walk order
    marginals = np.empty_like(steps)
    np.put_along_axis(marginals[:, 0], perms[:, :, None], steps[:, 0], axis=1)
    np.put_along_axis(marginals[:, 1], perms[:, ::-1, None], steps[:, 1], axis=1)
    samples = marginals.mean(axis=1)                # (pairs, k, outputs)
    values = samples.mean(axis=0).T
    if pairs == 1:
        return values, np.full_like(values, np.inf)
    return values, (samples.std(axis=0, ddof=1) / np.sqrt(pairs)).T


class PermutationExplainer(shap.PermutationExplainer):
    """shap's ``PermutationExplainer`` over :func:`fastcredit.permutation_shapley`.

    Same constructor, call signature and result (shap's ``Explanation``) as
    ``shap.PermutationExplainer``; for each row the game v(S) over the
    features that differ from the background (see
    :mod:`fastcredit.shap._common`) is sampled with antithetic permutations
    (each order walked with its reverse, as shap does), where

    - ``max_evals`` counts model evaluations: distinct coalitions of the row,
      each evaluated once (shap re-evaluates v({}) and v(N) on every walk and
      any coalition two walks share), so the same budget buys more walks;
      v({}) and v(N) cost 2, each antithetic pair at most 2 (k - 1) for k
      varying features, and a pair starts only when that fits. When all 2**k
      coalitions fit in the budget they are all evaluated and the values are
      exact (:func:`fastcredit.shapley`);
    - model calls take ``batch_size`` coalitions (n_b masked rows each;
      "auto": about 32,768 masked rows per call);
    - ``error_bounds=True`` reports in ``error_std`` the standard error of
      each value (the sd of the antithetic pairs over sqrt(pairs); 0 where
      exact);
    - ``main_effects=True`` reports v({i}) - v({}) of each feature (shap's
      Explainer.__call__ hands its rows an empty list for the flag, so shap
      never computes them there);
    - results are deterministic per ``seed`` (each row's permutations are
      drawn from NumPy's global generator, which the constructor seeds as
      shap's does).

    With a masker that has a clustering (``shap.maskers.Partition``) the
    values are Owen values over its cluster tree, as shap's estimate
    converges to: computed exactly (:func:`fastcredit.owen`) when
    ``max_evals`` covers the coalitions the tree's recursion reads (O(m**2)
    for a balanced binary tree, up to 20 features), else sampled as shap
    samples them: antithetic pairs of orders that keep every cluster
    together (at each node of the tree its two branches in a uniformly
    random order, drawn by a compiled kernel from the row's seed), whose
    mean marginal is the Owen value, within ``max_evals`` distinct
    coalitions as above.

    Parameters
    ----------
    model : callable
        The model: a matrix of masked rows (n, m) -> outputs (n,) or (n, k).
    masker : array_like, DataFrame or shap.maskers.Independent / Partition
        The background data (a matrix becomes ``shap.maskers.Independent``,
        as shap makes it).
    link : callable
        ``shap.links.identity`` (default) or ``shap.links.logit``.
    linearize_link : bool
        shap's linearization of a non-identity link (default True).
    feature_names : list of str, optional
    seed : int, optional
        Seeds NumPy's global generator, which each row's permutations are
        drawn from (as shap's). Other keyword arguments become the defaults
        of the call's (``max_evals``, ``batch_size``, ...), as in shap.

    Examples
    --------
    >>> import numpy as np, fastcredit.shap as fs
    >>> rs = np.random.RandomState(0)
    >>> X, background = rs.randn(3, 8), rs.randn(5, 8)
    >>> model = lambda x: x.sum(axis=1) + x[:, 0] * x[:, 1] * x[:, 2]
    >>> exp = fs.PermutationExplainer(model, background, seed=0)(X, max_evals=100, silent=True)
    >>> exp.values.shape
    (3, 8)
    >>> bool(np.allclose(exp.values.sum(1) + exp.base_values, model(X)))
    True
    """

    def __call__(self, *args: Any, max_evals: Any = 500, main_effects: bool = False,
                 error_bounds: bool = False, batch_size: Any = "auto", outputs: Any = None,
                 silent: bool = False, **kwargs: Any):
        self._main_effects = check_bool(main_effects, "main_effects")
        batch_size = _auto_batch(batch_size)
        # the rows' coalitions evaluated ahead, several rows per model call
        self._ahead = Lookahead.of(
            args, lambda row, varying: RowGame.of(self, row, batch_size, varying),
            lambda games: self._plans(games, max_evals), background=background_of(self))
        try:
            return super().__call__(*args, max_evals=max_evals, main_effects=main_effects,
                                    error_bounds=error_bounds, batch_size=batch_size,
                                    outputs=outputs, silent=silent, **kwargs)
        finally:
            self._ahead = None

    @staticmethod
    def _plans(games, max_evals) -> list:
        """For each row's game, (the coalitions its values read, (how, seed,
        pairs, orders)): "owen" (a clustering whose tree's coalitions fit in
        max_evals), "exact" (no clustering, all 2**k fit), "sampled"
        (uniform orders) or "tree" (orders that keep the clusters together,
        ``orders`` draws them). A sampled row's seed is drawn from NumPy's
        global generator here, in row order, and the antithetic pairs it
        affords are found for the rows of each k together (a tree's, row by
        row)."""
        if isinstance(max_evals, str) and max_evals == "auto":
            max_evals = 10 * 2 * games[0].m     # shap's: 10 antithetic pairs
        max_evals = MAX_EVALS.check(max_evals)
        plans = [None] * len(games)
        sampled = {}                            # k -> [(row, seed)]
        for i, game in enumerate(games):
            k = game.k
            tree = game.clustering is not None
            if tree and game.m <= MAX_OWEN_FEATURES and owen_cost(game) <= max_evals:
                plans[i] = owen_needs(game)[1], ("owen", None, 0, None)
            elif (not tree or k <= 1) and 2**k <= max_evals:
                # (a tree's orders of one feature are all orders: Owen = Shapley)
                plans[i] = np.arange(2**k, dtype=np.uint64), ("exact", None, 0, None)
            elif max_evals < 2 * k:
                raise ValueError(f"max_evals={max_evals} is too low for the Permutation "
                                 f"explainer: one antithetic pair of walks over the {k} "
                                 f"varying features needs {2 * k} model evaluations")
            elif tree:
                orders = tree_orders(game, tree_children(game))
                seed = SEED.check(int(np.random.randint(0, 2**62)))
                (pairs, masks), = affordable_pairs(k, max_evals, [seed], orders)
                plans[i] = masks, ("tree", seed, pairs, orders)
            else:
                seed = SEED.check(int(np.random.randint(0, 2**62)))
                sampled.setdefault(k, []).append((i, seed))
        for k, rows in sampled.items():
            found = affordable_pairs(k, max_evals, [seed for _, seed in rows])
            for (i, seed), (pairs, masks) in zip(rows, found):
                plans[i] = masks, ("sampled", seed, pairs, None)
        return plans

    def explain_row(self, *row_args, max_evals, main_effects, error_bounds, batch_size,
                    outputs, silent, **kwargs):
        if len(row_args) != 1:
            raise TypeError(f"fastcredit.shap explains one tabular input, got {len(row_args)}")
        ahead = getattr(self, "_ahead", None)
        taken = None if ahead is None else ahead.take(row_args[0])
        if taken is None:
            game = RowGame.of(self, row_args[0], batch_size)
            taken = game, self._plans([game], max_evals)[0]
        game, (masks, (how, seed, pairs, orders)) = taken
        if how == "owen":
            values = np.moveaxis(owen_values(game), -1, 0).reshape(
                (game.m,) + game.vals.shape[1:])
            return self._row(game, values, np.zeros_like(values) if error_bounds else None)
        if how == "exact":
            values = exact_shapley(game)
            stderr = np.zeros_like(values)
        elif how == "tree":
            perms = np.empty((pairs, game.k), dtype=np.int32)
            orders(seed, perms)
            values, stderr = walked_shapley(game, perms)
        else:
            values, stderr = sampled_shapley(game, pairs, masks, seed)
        return self._row(game, game.expand(values),
                         game.expand(stderr) if error_bounds else None)

    def _row(self, game, values, error_std):
        """The row's result as shap's Explainer.__call__ collects it."""
        return {
            "values": values,
            # v({}) was among the coalitions evaluated
            "expected_values": game.base_value(),
            "mask_shapes": [game.x.shape],
            "main_effects": game.main_effects() if getattr(self, "_main_effects", False) else None,
            "clustering": game.clustering,
            "error_std": error_std,
            "output_names": output_names(self),
        }
