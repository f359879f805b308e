"""What the shap explainers share: the game of one explained row.

shap explains a row x of a tabular model f against a background data set B
(the masker's ``data``, n_b rows): a coalition S of the features keeps x's
values on S and takes each background row's values elsewhere, and

    v(S) = link( mean_b f(x_S, B_b,~S) )

(with ``linearize_link`` and a link other than the identity, shap instead
averages ``w_b * link(f)`` with weights w fitted on f(B) so that the
average of a model additive in link space stays additive; see
:func:`linearizing_weights`). Features whose masked value never differs from
the background (``np.isclose`` on every background row) cannot move v, get
value 0 and are left out of the game, so a row's game has 2**varying
coalitions, as in shap.

:class:`RowGame` evaluates that game: each distinct coalition once (a memo of
uint64 masks over the varying features), in model calls of ``batch_size``
coalitions (n_b masked rows each), every output of a multi-output model at
once. A model that raises is reported naming the model call; nothing of a
failed call is kept.
"""
from __future__ import annotations

import collections
import math

import numpy as np
import shap

from .._params import Integer
from .._validation import check_bool
from .._constants import MASKED_MAX_FEATURES
from ..sampling import _background_mean, _masked_rows

#: The kernels' backend: C, loaded in milliseconds (the cached Numba twins
#: take most of a second to load in a fresh process, longer than a row).
BACKEND = "c"

#: Masked rows (coalitions x background rows) per model call when shap's
#: ``batch_size`` is left at "auto": large enough that a model's per-call
#: cost is small, small enough that its temporaries stay in reused memory (a
#: NumPy model on 65,536 rows of 10 features ran 13x slower per row than on
#: 2,500-40,000, measured on AMD EPYC Zen 4: fresh pages for every temporary).
#: With the masked rows written into kept memory, 32,768 beat 16,384 (CPU
#: time, best of 4, 100 rows, AMD EPYC Zen 4): Permutation on GradientBoosting
#: 0.213 vs 0.227 s (outside the model 9.4 vs 10.8%), on the NumPy model of
#: bench/shap_vs.py 0.187 vs 0.195 s, Exact 0.248 vs 0.270 s, Kernel 0.424 vs
#: 0.461 s, Sampling equal; 65,536 was 4-5x slower on the NumPy model.
AUTO_BATCH_ROWS = 1 << 15
#: Most features of a row that may vary: coalitions are uint64 masks.
MAX_VARYING = 64

BATCH_SIZE = Integer("batch_size", 1, 2**62, "coalitions (each n_b masked rows) per model call",
                     none_ok=True)
MAX_EVALS = Integer("max_evals", 1, 2**62, "model evaluations (coalitions) per explained row")


def tabular_data(masker, name: str = "masker"):
    """(background float64 (n_b, m), column names of a DataFrame masker or
    None, clustering or None) of a shap Independent / Partition masker."""
    if not isinstance(masker, shap.maskers._tabular.Tabular):
        raise TypeError(f"{name} must be a background data matrix or a shap.maskers."
                        f"Independent / Partition masker, got {type(masker).__name__}")
    data = np.asarray(masker.data)
    if data.ndim != 2 or data.dtype.kind not in "biuf" or len(data) == 0:
        raise ValueError(f"{name}.data must be a non-empty numeric matrix (n_b, m), got "
                         f"shape {data.shape} and dtype {data.dtype}")
    columns = list(masker.feature_names) if getattr(masker, "output_dataframe", False) else None
    return data.astype(np.float64), columns, getattr(masker, "clustering", None)


def model_function(model):
    """The function a shap Explainer's model wrapper calls: shap's plain
    ``Model`` wrapper checks each output's type by name (about 0.1 ms a
    call) and copies it; here its inner model is called directly and a
    torch tensor's output converted as the wrapper converts it. Any other
    wrapper is called as it is."""
    if type(model) is not shap.models.Model:
        return model
    inner = model.inner_model

    def call(x):
        out = inner(x)
        if hasattr(out, "detach") and hasattr(out, "cpu"):      # a torch tensor
            out = out.cpu().detach().numpy()
        return out
    return call


def link_function(link):
    """The link as a NumPy function: shap's identity and logit links are
    Numba functions that would compile on first call (seconds); their NumPy
    forms are exact. Any other link is called as given."""
    if link is shap.links.identity:
        return None
    if link is shap.links.logit:
        return lambda p: np.log(p / (1.0 - p))
    if not callable(link):
        raise TypeError(f"link must be callable, got {type(link).__name__}")
    return link


def linearizing_weights(p: np.ndarray, link) -> np.ndarray:
    r"""Weights w (n_b, k) of the background outputs p (n_b, k) with
    :math:`\mathrm{mean}(w\,\mathrm{link}(p)) = \mathrm{link}(\mathrm{mean}\,p)`:
    the first-order Taylor expansion of the link at :math:`\bar p`
    (derivative by a forward difference of 1e-4, as shap takes it) divided
    by the link itself, rescaled to mean 1 (shap's ``link_reweighting``)."""
    center = p.mean(axis=0)
    at_center = link(center)
    slope = (link(center + 1e-4) - at_center) / 1e-4
    with np.errstate(divide="ignore", invalid="ignore"):
        w = slope * (p - center) / (link(p) - at_center)
    return w * (len(p) / w.sum(axis=0))


def differs(x: np.ndarray, background: np.ndarray, equal_nan: bool = False) -> np.ndarray:
    """Which features of each row x (..., m) differ from some background
    row, (..., m) bool: shap's ``~np.isclose(x, data)`` (|x - b| > 1e-8 +
    1e-5 |b|, infinities equal to themselves, NaN to nothing; to NaN too
    with ``equal_nan``, as the legacy explainers' ``np.allclose(...,
    equal_nan=True)``), without isclose's per-call overhead."""
    x = x[..., None, :]
    with np.errstate(invalid="ignore"):
        close = (x == background) | (np.isfinite(x) & np.isfinite(background) & (
            np.abs(x - background) <= 1e-8 + 1e-5 * np.abs(background)))
    if equal_nan:
        close |= np.isnan(x) & np.isnan(background)
    return ~close.all(axis=-2)


def differing(x: np.ndarray, background: np.ndarray, equal_nan: bool = False) -> np.ndarray:
    """The features of one row x (m,) that differ from some background row
    (:func:`differs`)."""
    return np.flatnonzero(differs(x, background, equal_nan))


def legacy_varying(explainer, x) -> np.ndarray:
    """The varying features of a legacy explainer's row x (1, m): shap's
    ``varying_groups``, computed at once for dense numeric data (shap calls
    np.allclose once per feature)."""
    data = explainer.data.data
    if (isinstance(x, np.ndarray) and isinstance(data, np.ndarray)
            and x.dtype.kind in "biuf" and data.dtype.kind in "biuf"):
        return differing(x.reshape(-1).astype(np.float64), data.astype(np.float64),
                         equal_nan=True)
    return np.asarray(explainer.varying_groups(x), dtype=np.int64)


def explainer_state(explainer):
    """((background float64, columns, clustering) of the masker, the model's
    function, the link as a NumPy function, linearize_link) of a shap
    Explainer, made once per (masker, model, link), not per row."""
    key = (explainer.masker, explainer.model, explainer.link, explainer.linearize_link)
    cached = getattr(explainer, "_fastcredit_state", None)
    if cached is None or any(a is not b for a, b in zip(cached[0], key)):
        cached = (key, tabular_data(explainer.masker), model_function(explainer.model),
                  link_function(explainer.link),
                  check_bool(bool(explainer.linearize_link), "linearize_link"))
        explainer._fastcredit_state = cached
    return cached[1:]


def background_of(explainer):
    """A shap Explainer's background (float64), None for a masker that is
    not tabular (explaining a row then says why)."""
    if not isinstance(explainer.masker, shap.maskers._tabular.Tabular):
        return None
    return explainer_state(explainer)[0][0]


class RowGame:
    """v(S) of one row x over its varying features, memoised by coalition.

    Parameters
    ----------
    model : callable
        The model on a matrix of masked rows (shap's Model wrapper, or a
        legacy explainer's ``model.f``).
    background : ndarray (n_b, m)
        The rows masked features are taken from.
    x : array_like (m,)
        The explained row.
    batch_size : int or None
        Coalitions per model call; None: as many as make AUTO_BATCH_ROWS
        masked rows.
    link : callable or None
        The link as a NumPy function (:func:`link_function`); None: identity.
    linearize : bool
        shap's ``linearize_link`` (weights fitted on f(B)).
    weights : ndarray (n_b,), optional
        Background row weights of the average (a legacy explainer's
        ``data.weights``, e.g. k-means summaries); None: equal.
    columns : list, optional
        Column names: the model is then given DataFrames.
    clustering : ndarray, optional
        The masker's cluster tree (Owen values), carried for the explainer.
    varying : array_like, optional
        The features that can move v; default: those differing (not
        ``np.isclose``) from some background row.
    """

    def __init__(self, model, background, x, batch_size, *, link=None, linearize=False,
                 weights=None, columns=None, clustering=None, varying=None):
        self.background, self.columns, self.clustering = background, columns, clustering
        n_b, m = background.shape
        x = np.asarray(x)
        if x.shape != (m,):
            raise ValueError(f"each explained row must have the background's {m} features, "
                             f"got shape {x.shape}")
        self.x = x
        self.model = model
        self.link = link
        self.linearize = linearize
        self.average = None if weights is None else np.asarray(weights, float) / np.sum(weights)
        batch_size = BATCH_SIZE.check(batch_size)
        self.batch_size = batch_size or max(1, AUTO_BATCH_ROWS // n_b)
        #: the features that can move v, in column order
        self.varying = (differing(self.x, background) if varying is None else
                        np.asarray(varying, dtype=np.int64))
        if len(self.varying) > MAX_VARYING:
            raise ValueError(f"a row with {len(self.varying)} features that differ from the "
                             f"background is beyond the {MAX_VARYING} fastcredit.shap takes")
        self.m = m
        self.k = len(self.varying)
        #: whether the masked rows are made by the compiled kernel: float64
        #: values and at most 64 features (masks over all of them are
        #: uint64); others (a legacy explainer's integer, string or object
        #: data, wider rows) by np.where, which keeps their dtype
        self.compiled = (background.dtype == np.float64 and x.dtype == np.float64
                         and m <= MASKED_MAX_FEATURES)
        self.weights = None
        self.keys = np.empty(0, dtype=np.uint64)
        self.vals = None
        self.n_evals = 0
        self.model_calls = 0

    @classmethod
    def of(cls, explainer, x, batch_size, varying=None):
        """The game of row x for a shap Explainer (model, masker, link);
        ``varying``: its varying features when known."""
        (background, columns, clustering), model, link, linearize = explainer_state(explainer)
        x = np.asarray(x)
        if x.dtype.kind not in "biuf":
            raise TypeError(f"the explained rows must be numeric, as the masker's data is; "
                            f"got dtype {x.dtype}")
        return cls(model, background, x.astype(np.float64), batch_size, link=link,
                   linearize=linearize, columns=columns, clustering=clustering,
                   varying=varying)

    def __len__(self):
        return self.m

    def values(self, masks) -> np.ndarray:
        """v of uint64 coalition masks (n,) over the varying features:
        (n,) + output shape; only coalitions not seen before reach the model."""
        if masks is self.keys:      # the plan's coalitions, as evaluate_rows kept them
            return self.vals
        masks = np.asarray(masks, dtype=np.uint64)
        if len(self.keys) == len(masks) and np.array_equal(self.keys, masks):
            return self.vals        # every coalition evaluated, asked for in order
        if len(self.keys):
            # the common case, every coalition known: one search, no sort
            pos = np.minimum(np.searchsorted(self.keys, masks), len(self.keys) - 1)
            if np.array_equal(self.keys[pos], masks):
                return self.vals[pos]
        need = np.unique(masks)
        if len(self.keys):
            pos = np.minimum(np.searchsorted(self.keys, need), len(self.keys) - 1)
            need = need[self.keys[pos] != need]
        if len(need):
            new = self._evaluate(need)
            if len(self.keys):
                keys = np.concatenate([self.keys, need])
                order = np.argsort(keys, kind="stable")
                self.keys, self.vals = keys[order], np.concatenate([self.vals, new])[order]
            else:       # np.unique's are sorted
                self.keys, self.vals = need, new
            self.n_evals += len(need)
        return self.vals[np.searchsorted(self.keys, masks)]

    def _evaluate(self, masks: np.ndarray) -> np.ndarray:
        """v of distinct new coalitions, in model calls of batch_size."""
        if self.weights is None and self.link is not None and self.linearize:
            # shap fits the weights on f(B), the outputs of the empty coalition
            empty = self._outputs(np.zeros(1, dtype=np.uint64))[0]
            self.weights = linearizing_weights(empty, self.link)
        parts = [self._reduce(self._outputs(masks[a:a + self.batch_size]))
                 for a in range(0, len(masks), self.batch_size)]
        return np.concatenate(parts)

    def full_masks(self, masks: np.ndarray) -> np.ndarray:
        """The coalitions as masks over all m features (uint64)."""
        if self.k == self.m:        # every feature varies: the same masks
            return masks
        bits = (masks[:, None] >> np.arange(self.k, dtype=np.uint64)) & np.uint64(1)
        return np.bitwise_or.reduce(bits << self.varying.astype(np.uint64), axis=1)

    def keep(self, masks: np.ndarray) -> np.ndarray:
        """Which features (c, m) the coalitions' masked rows take from x."""
        bits = ((masks[:, None] >> np.arange(self.k, dtype=np.uint64)) & np.uint64(1)) != 0
        keep = np.zeros((len(masks), self.m), dtype=bool)
        keep[:, self.varying] = bits
        return keep

    def masked(self, masks: np.ndarray) -> np.ndarray:
        """The masked rows (c n_b, m) of coalitions ``masks`` (compiled,
        fastcredit.sampling._masked_rows, where :attr:`compiled`)."""
        if self.compiled:
            return _masked_rows(self.background, self.x[None], self.full_masks(masks),
                                np.zeros(len(masks), dtype=np.int64), backend=BACKEND)
        return np.where(self.keep(masks)[:, None, :], self.x,
                        self.background).reshape(-1, self.m)

    def _outputs(self, masks: np.ndarray) -> np.ndarray:
        """Model outputs (c, n_b) + output shape of the coalitions' masked rows."""
        return model_outputs(self, self.masked(masks), f"model call "
                             f"{self.model_calls + 1} of this row")

    def _reduce(self, out: np.ndarray) -> np.ndarray:
        """Average over the background rows (compiled,
        fastcredit.sampling._background_mean), through the link."""
        if self.weights is not None:
            return (self.weights * self.link(out)).mean(axis=1)
        c, n_b = out.shape[:2]
        mean = _background_mean(out.reshape(c, n_b, -1), self.average,
                                backend=BACKEND).reshape((c,) + out.shape[2:])
        return mean if self.link is None else self.link(mean)

    def base_value(self) -> np.ndarray:
        """v({}) (output shape), read where the memo holds it (the first of
        its sorted keys), else evaluated."""
        if len(self.keys) and self.keys[0] == 0:
            return self.vals[0]
        return self.values(np.zeros(1, dtype=np.uint64))[0]

    def expand(self, values: np.ndarray) -> np.ndarray:
        """Values (..., k) of the varying features as (m,) + output shape,
        0 for the features that do not vary; ``values`` has the outputs on
        its leading axes (one row per output)."""
        out_shape = self.vals.shape[1:] if self.vals is not None else ()
        full = np.zeros((self.m,) + out_shape)
        # (outputs, k) -> (k, outputs): a transpose, not np.moveaxis (~10 us a row)
        full[self.varying] = values.reshape(math.prod(out_shape), self.k).T.reshape(
            (self.k,) + out_shape)
        return full

    def output_columns(self) -> int:
        """Number of outputs (1 for a single-output model)."""
        return int(np.prod(self.vals.shape[1:])) if self.vals is not None else 1

    def main_effects(self) -> np.ndarray:
        """v({i}) - v({}) of every feature, (m,) + output shape."""
        singles = np.left_shift(np.uint64(1), np.arange(self.k, dtype=np.uint64))
        effects = self.values(singles) - self.values(np.zeros(1, dtype=np.uint64))
        full = np.zeros((self.m,) + effects.shape[1:])
        full[self.varying] = effects
        return full


def model_outputs(game: RowGame, rows: np.ndarray, which: str) -> np.ndarray:
    """Model outputs (c, n_b) + output shape of the masked rows (c n_b, m)
    of c coalitions of ``game``'s model and background."""
    n_b, m = game.background.shape
    c = len(rows) // n_b
    inputs = rows
    if game.columns is not None:
        import pandas as pd
        inputs = pd.DataFrame(rows, columns=game.columns)
    try:
        out = game.model(inputs)
    except Exception as exc:
        raise RuntimeError(
            f"the model raised when called on {len(rows)} masked rows ({c} coalitions x "
            f"{n_b} background rows, {which}): {exc!r}") from exc
    game.model_calls += 1
    out = np.asarray(out)
    if out.ndim == 0 or len(out) != len(rows) or out.dtype.kind not in "biuf":
        raise ValueError(f"the model must return one real output (or a vector of "
                         f"outputs) per input row: given {len(rows)} rows it returned "
                         f"shape {out.shape} and dtype {out.dtype}")
    return np.asarray(out, dtype=np.float64).reshape((c, n_b) + out.shape[1:])


def evaluate_rows(games: list, masks: list, scratch: list | None = None) -> None:
    """Each fresh game (nothing evaluated yet) on its coalitions, the masked
    rows of several rows' games in one model call of at most ``batch_size``
    coalitions (the first game's), as one row's are: a model is called once
    per many cheap rows, not once per row. Each game's memo then holds its
    distinct coalitions and counts them, as :meth:`RowGame.values` would.
    Games that fit shap's linearizing weights on f(B) are evaluated one by
    one. ``scratch``, a list of one array or None, keeps the masked rows'
    memory from call to call (fresh pages for each call's rows cost as much
    as writing them: 97 vs 46 us for 1,500 coalitions of 10 x 10 values,
    AMD EPYC Zen 4); the model has returned, and its outputs been averaged,
    before the next call's rows are written there."""
    need = [np.asarray(mk, dtype=np.uint64) for mk in masks]
    # sorted and distinct already (the Permutation and Exact explainers' plans)
    # or made so
    need = [mk if (mk[1:] > mk[:-1]).all() else np.unique(mk) for mk in need]
    if not games or any(g.link is not None and g.linearize for g in games):
        for game, mk in zip(games, need):
            game.values(mk)
        return
    owner = np.repeat(np.arange(len(games)), [len(mk) for mk in need])
    compiled = all(g.compiled for g in games)
    if compiled:
        full = np.concatenate([g.full_masks(mk) for g, mk in zip(games, need)])
    else:
        keep = np.concatenate([g.keep(mk) for g, mk in zip(games, need)])
    xs = np.stack([g.x for g in games])
    background = games[0].background
    size = games[0].batch_size
    n_b, m = background.shape
    n = len(owner)
    if compiled and scratch is not None and (scratch[0] is None
                                             or len(scratch[0]) < min(size, n) * n_b):
        scratch[0] = np.empty((min(size, n) * n_b, m))
    buffer = None if scratch is None else scratch[0]
    parts = []
    for a in range(0, n, size):
        b = min(a + size, n)
        rows = (_masked_rows(background, xs, full[a:b], owner[a:b], out=buffer, backend=BACKEND)
                if compiled else np.where(keep[a:b, None, :], xs[owner[a:b], None, :],
                                          background).reshape(-1, m))
        which = f"rows {owner[a]}-{owner[b - 1]} of this batch of {len(games)}"
        parts.append(games[0]._reduce(model_outputs(games[0], rows, which)))
    vals = np.concatenate(parts)
    at = 0
    for game, mk in zip(games, need):
        game.keys, game.vals = mk, vals[at:at + len(mk)]
        game.n_evals += len(mk)
        at += len(mk)


class Lookahead:
    """The rows of one explainer call, explained ahead of shap's loop over
    them: the games of up to PLANNED rows at a time (``game(row,
    varying)``) and their plans (``plans(games)``, each ``(coalitions,
    data)``) are made in row order, and the coalitions of as many rows as
    fill one model call (the games' ``batch_size`` coalitions) are evaluated
    together (:func:`evaluate_rows`). ``take(x)`` hands the explainer the
    next row's (game, (coalitions, data)) when x is that row, else None (the
    explainer then makes its own). A plan that draws from NumPy's global
    generator draws in row order, as row by row."""

    #: Rows whose games and plans are made at once.
    PLANNED = 64
    #: Most values (rows x background rows x features) compared at once when
    #: the rows' varying features are found (:func:`differs`).
    COMPARED = 1 << 20

    def __init__(self, rows, game, plans, background=None, equal_nan=False):
        self.rows, self.game, self.plans = rows, game, plans
        self.background, self.equal_nan = background, equal_nan
        self.at = 0
        self.varies = np.empty((0, rows.shape[1]), dtype=bool)   # of rows[varies_at:]
        self.varies_at = 0
        self.ready = []
        self.pending = collections.deque()      # rows planned, not yet evaluated
        self.scratch = [None]                   # the masked rows' memory (evaluate_rows)

    @classmethod
    def of(cls, args, game, plans, background=None, equal_nan=False):
        """A lookahead over one numeric matrix (or DataFrame) of rows; None
        for any other input (shap's loop then runs row by row). With a
        ``background`` (n_b, m), the rows' varying features are found for
        many rows at once and handed to ``game(row, varying)``; else
        ``game(row, None)``."""
        if len(args) != 1:
            return None
        rows = args[0]
        if hasattr(rows, "to_numpy"):
            rows = rows.to_numpy()
        if not isinstance(rows, np.ndarray) or rows.ndim != 2 or rows.dtype.kind not in "biuf":
            return None
        return cls(rows, game, plans, background, equal_nan)

    def _varying(self, i: int):
        """Row i's varying features (None without a background)."""
        if self.background is None:
            return None
        if i >= self.varies_at + len(self.varies):
            n_b, m = self.background.shape
            chunk = max(1, self.COMPARED // (n_b * m))
            self.varies = differs(self.rows[i:i + chunk].astype(np.float64), self.background,
                                  self.equal_nan)
            self.varies_at = i
        return np.flatnonzero(self.varies[i - self.varies_at])

    def take(self, x):
        if not self.ready and (self.at < len(self.rows) or self.pending):
            self._prepare()
        if self.ready:
            planned, x = self.ready[0][0].x, np.asarray(x, dtype=np.float64).reshape(-1)
            if planned.shape == x.shape and (planned == x).all():
                return self.ready.pop(0)
        return None

    def _prepare(self):
        games, plans = [], []
        filled = 0
        while True:
            if not self.pending:
                if self.at == len(self.rows):
                    break
                stop = min(len(self.rows), self.at + self.PLANNED)
                made = [self.game(self.rows[i], self._varying(i)) for i in range(self.at, stop)]
                self.pending.extend(zip(made, self.plans(made)))
                self.at = stop
            game, plan = self.pending[0]
            # whole rows while they fit one call (a row larger than a call alone)
            if games and filled + len(plan[0]) > game.batch_size:
                break
            games.append(game)
            plans.append(plan)
            filled += len(plan[0])
            self.pending.popleft()
        evaluate_rows(games, [coalitions for coalitions, _ in plans], self.scratch)
        self.ready = list(zip(games, plans))


def output_names(explainer):
    """The model's output names, when shap's Model wrapper knows them."""
    return getattr(explainer.model, "output_names", None)
