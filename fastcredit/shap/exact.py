"""shap's ExactExplainer over fastcredit's exact table kernels."""
from __future__ import annotations

from typing import Any

import numpy as np
import shap

from .._validation import check_bool
from ..interactions import interactions as exact_interactions
from ._common import MAX_EVALS, Lookahead, RowGame, background_of, output_names
from .permutation import (BACKEND, MAX_OWEN_FEATURES, _auto_batch, exact_shapley, owen_cost,
                          owen_needs, owen_values)

__all__ = ["ExactExplainer"]

#: Most varying features of a row the Exact explainer enumerates (2**k
#: coalitions, each n_b model rows).
MAX_EXACT_FEATURES = 30


def _interaction_order(interactions) -> int:
    """shap's ``interactions``: False or 1 for values, True or 2 for pairs."""
    if isinstance(interactions, (bool, np.bool_)):
        return 2 if interactions else 1
    if isinstance(interactions, (int, np.integer)) and interactions >= 1:
        if interactions > 2:
            raise NotImplementedError("the Exact explainer computes interactions of order 2 "
                                      f"at most (as shap's), got interactions={interactions}")
        return int(interactions)
    raise ValueError(f"interactions must be False/1 (values) or True/2 (pairwise "
                     f"interactions), got {interactions!r}")


def pair_values(game: RowGame) -> np.ndarray:
    r"""shap's exact interaction matrix (m, m) + output shape: off the
    diagonal, :math:`\sum_{T \ni i, j} a(T) / (|T| (|T| - 1))` (a the
    Moebius coefficients), which is half the Shapley-Taylor index of order 2
    (:func:`fastcredit.interactions` "STII"); its weights
    :math:`t!(k-t-1)!/k!` on the discrete second derivatives
    :math:`\Delta_{ij}(T)` sum to exactly these; on the diagonal the main
    effects v({i}) - v({})."""
    k = game.k
    table = game.values(np.arange(2**k, dtype=np.uint64)).reshape(2**k, -1).T
    main = game.main_effects()
    full = np.zeros((game.m,) + main.shape)
    if k >= 2:
        # (outputs, C(k, 2))
        pairs = exact_interactions(table, "STII", order=2, backend=BACKEND).values[2] / 2.0
        i, j = np.triu_indices(k, 1)
        block = np.zeros((k, k, table.shape[0]))
        block[i, j] = block[j, i] = pairs.T
        out_shape = main.shape[1:]
        block = block.reshape((k, k) + out_shape)
        full[np.ix_(game.varying, game.varying)] = block
    idx = np.arange(game.m)
    full[idx, idx] = main
    return full


class ExactExplainer(shap.ExactExplainer):
    """shap's ``ExactExplainer`` over :func:`fastcredit.shapley`.

    Same constructor, call signature and result (shap's ``Explanation``) as
    ``shap.ExactExplainer``: for each row all 2**k coalitions of the k
    features that differ from the background are evaluated, in model calls
    of ``batch_size`` coalitions ("auto": about 32,768 masked rows per
    call), and the Shapley values come from the table
    (:func:`fastcredit.shapley`, compiled and cached: no compilation on the
    first call); ``interactions=True`` (or 2) gives shap's pairwise
    interaction matrix (see :func:`pair_values`). ``max_evals`` below 2**k
    is refused as shap refuses it; ``main_effects=True`` reports
    v({i}) - v({}) (which shap's own call path drops). With a masker that
    has a clustering (``shap.maskers.Partition``) the values are the Owen
    values over its cluster tree, as shap's (:func:`fastcredit.owen`), from
    the coalitions the tree's recursion reads
    (:func:`fastcredit.owen_coalitions`), which ``max_evals`` must cover.

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

    Examples
    --------
    >>> import numpy as np, fastcredit.shap as fs
    >>> X, background = np.array([[1.0, 2.0, 3.0]]), np.zeros((1, 3))
    >>> model = lambda x: x[:, 0] * x[:, 1] + x[:, 2]
    >>> fs.ExactExplainer(model, background)(X, silent=True).values
    array([[1., 1., 3.]])
    >>> fs.ExactExplainer(model, background)(X, interactions=True, silent=True).values[0]
    array([[0., 1., 0.],
           [1., 0., 0.],
           [0., 0., 3.]])
    """

    def __call__(self, *args: Any, max_evals: Any = 100000, main_effects: bool = False,
                 error_bounds: bool = False, batch_size: Any = "auto",
                 interactions: Any = 1, silent: bool = False):
        self._main_effects = check_bool(main_effects, "main_effects")
        batch_size = _auto_batch(batch_size)
        order = _interaction_order(interactions)
        # the rows' coalitions evaluated ahead, several rows per model call
        self._ahead = Lookahead.of(
            args, lambda row, varying: RowGame.of(self, row, batch_size, varying),
            lambda games: [(self._coalitions(game, max_evals, order), None) for game in games],
            background=background_of(self))
        try:
            return super().__call__(*args, max_evals=max_evals, main_effects=main_effects,
                                    error_bounds=error_bounds, batch_size=batch_size,
                                    interactions=interactions, silent=silent)
        finally:
            self._ahead = None

    def explain_row(self, *row_args, max_evals, main_effects, error_bounds, batch_size,
                    outputs, interactions, silent):
        if len(row_args) != 1:
            raise TypeError(f"fastcredit.shap explains one tabular input, got {len(row_args)}")
        order = _interaction_order(interactions)
        ahead = getattr(self, "_ahead", None)
        taken = None if ahead is None else ahead.take(row_args[0])
        if taken is None:
            game = RowGame.of(self, row_args[0], batch_size)
            self._coalitions(game, max_evals, order)
        else:
            game = taken[0]
        if game.clustering is not None:
            values = np.moveaxis(owen_values(game), -1, 0).reshape(
                (game.m,) + game.vals.shape[1:])
        elif order == 2:
            values = pair_values(game)
        else:
            values = game.expand(exact_shapley(game))
        expected = game.base_value()
        return {
            "values": values,
            "expected_values": expected,
            "mask_shapes": [game.x.shape],
            "main_effects": game.main_effects() if getattr(self, "_main_effects", False) else None,
            "clustering": game.clustering,
            "output_names": output_names(self),
        }

    @staticmethod
    def _coalitions(game: RowGame, max_evals, order: int) -> np.ndarray:
        """The coalitions the row's values read (all 2**k, or those of the
        cluster tree's recursion), checked against the explainer's limits
        and max_evals."""
        if game.clustering is not None and (order == 2 or game.m > MAX_OWEN_FEATURES):
            raise NotImplementedError(
                f"fastcredit.shap.ExactExplainer computes Owen values for a masker with a "
                f"clustering for up to {MAX_OWEN_FEATURES} features, and no interactions")
        k = game.k
        if k > MAX_EXACT_FEATURES:
            raise ValueError(f"a row with {k} varying features is beyond the "
                             f"{MAX_EXACT_FEATURES} the Exact explainer enumerates")
        if max_evals is not None and not (isinstance(max_evals, str) and max_evals == "auto"):
            needed = 2**k if game.clustering is None else owen_cost(game)
            if MAX_EVALS.check(max_evals) < needed:
                raise ValueError(f"max_evals={max_evals} is too low: the Exact explainer "
                                 f"evaluates {needed} coalitions of this row")
        if game.clustering is not None:
            return owen_needs(game)[1]
        return np.arange(2**k, dtype=np.uint64)
