"""Agreement of set credit with reference credit, request by request, and
of an evaluator's coalition tables with a reference evaluator's.

Per request, a credit vector (m,) is compared with a reference credit
vector, both centred within the request.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .. import _parallel
from .._backend import kernels, resolve
from .._params import ATOL
from .._validation import check_bool, float64_array
from ..tables import size_resolved
from .spearman import _MIN_GROUPS_PER_THREAD

__all__ = ["Alignment", "Fidelity", "alignment", "evaluator_fidelity"]


@dataclasses.dataclass(frozen=True)
class Alignment:
    """Per-request agreement of credit vectors with a reference.

    Per-request arrays have the leading shape of the input; NaN marks a
    request where the statistic is undefined (constant reference).

    Attributes
    ----------
    cosine : ndarray
        Cosine of the centred vectors (0 when the credit is constant).
    sign : ndarray
        Fraction of the m components whose centred signs agree.
    sign_nonzero : ndarray
        The same over the components where the centred reference is nonzero.
    spearman : ndarray
        Spearman correlation (average ranks for ties; 0 when the credit is
        constant).
    top : ndarray of bool
        Whether the top action (first argmax) is the same.
    median_cosine, mean_sign, mean_sign_nonzero, median_spearman, top_rate : float
        Summaries over the requests where each is defined.
    n_defined : int
        Requests with a non-constant reference.

    Examples
    --------
    >>> import fastcredit as fc
    >>> al = fc.alignment([[3., 1., 2.], [1., 2., 3.]], [[2., 0., 1.], [0., 0., 0.]])
    >>> al.top, al.n_defined, round(al.median_cosine, 6)
    (array([ True, False]), 1, 1.0)
    """
    cosine: np.ndarray
    sign: np.ndarray
    sign_nonzero: np.ndarray
    spearman: np.ndarray
    top: np.ndarray
    median_cosine: float
    mean_sign: float
    mean_sign_nonzero: float
    median_spearman: float
    top_rate: float
    n_defined: int


def _summary(fn, x) -> float:
    """``fn`` over the defined (not NaN) entries of ``x``; NaN if none is."""
    x = x[~np.isnan(x)]
    return float(fn(x)) if x.size else float("nan")


def alignment(credit, reference, *, center=True, atol=0.0, threads=None,
              backend=None) -> Alignment:
    r"""How well credit vectors agree with reference credit, request by request.

    With :math:`c, r` the credit and reference vectors of a request, each
    centred within the request (:math:`c - \bar c`) when ``center``:

    * cosine :math:`c \cdot r / (\lVert c \rVert \lVert r \rVert)`
      (the Pearson correlation when centred);
    * sign agreement :math:`\frac1m \sum_i [\operatorname{sign} c_i = \operatorname{sign} r_i]`,
      and the same over the components with :math:`r_i \ne 0` only;
    * Spearman correlation of c and r;
    * top-action agreement :math:`\arg\max c = \arg\max r`.

    A request whose (centred) reference is constant has no direction to agree
    with: its cosine, Spearman and nonzero-sign agreement are NaN. A constant
    credit vector scores 0 on cosine and Spearman.

    Ties and zeros are exact unless ``atol`` > 0 says how far apart two
    values may be and still be equal (credit computed two ways agrees only
    up to rounding: 0.1 + 0.2 is not 0.3). Then, within each request after
    centring, a component with :math:`|x_i| \le` atol is zero (its sign is
    0, and a vector of such components is constant), and values at most
    atol apart, chained in sorted order, are tied: they share their average
    rank in Spearman, and the top action is the first of the top tied values.
    The cosine of a non-constant pair is of the values themselves. So when a
    request's distinct (centred) values, and 0, are more than 2 atol apart,
    moving each value by at most atol / 2 changes only the cosine, and that
    continuously.

    Parameters
    ----------
    credit, reference : array_like, shape (..., m), m >= 2
        float64 or float32; the same shape.
    center : bool
        Centre each vector within its request first (default True).
    atol : float >= 0
        Tie tolerance, in the units of both credit and reference (default
        0: exact equality).
    threads : int, optional
        Threads to split the Spearman correlations over (default all cores).
    backend : {None, "c", "numba"}
        None picks the faster one (see :mod:`fastcredit._backend`).

    Returns
    -------
    Alignment
        The per-request statistics and their summaries.

    Raises
    ------
    ValueError
        If ``credit`` and ``reference`` differ in shape or have a last axis
        shorter than 2, ``atol`` is negative, NaN or infinite, ``threads <
        1``, or ``backend`` is not None, "c" or "numba" or is not available.
    TypeError
        If ``credit`` or ``reference`` is not a real array,
        ``center`` is not a bool, ``atol`` not a real number or ``threads``
        not an integer.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> al = fc.alignment([[3., 1., 2.], [0., 0., 1.]], [[2., 0., 1.], [1., 0., 0.]])
    >>> al.cosine, al.top
    (array([ 1. , -0.5]), array([ True, False]))
    >>> credit, reference = [0.3, 0.1 + 0.2, 0.0], [1.0, 1.0, 0.0]
    >>> fc.alignment(credit, reference).top, fc.alignment(credit, reference, atol=1e-12).top
    (array(False), array(True))
    """
    c = float64_array(credit, "credit")
    r = float64_array(reference, "reference")
    if c.shape != r.shape:
        raise ValueError(f"credit and reference must have the same shape, got {c.shape} and "
                         f"{r.shape}")
    if c.ndim == 0 or c.shape[-1] < 2:
        raise ValueError(f"credit must have shape (..., m) with m >= 2, got {c.shape}")
    center = check_bool(center, "center")
    atol = ATOL.check(atol)
    lead, m = c.shape[:-1], c.shape[-1]
    c = np.ascontiguousarray(c.reshape(-1, m))
    r = np.ascontiguousarray(r.reshape(-1, m))
    n = c.shape[0]
    cosine, sign, sign_nonzero, rho = np.empty((4, n))
    top, defined = np.empty((2, n), dtype=bool)
    impl = kernels("audit", resolve("audit.alignment", backend))

    def part(a, b):
        # one pass over the rows; work and idx: the per-thread scratch
        # fc_alignment_rows asks for (csrc/audit.h)
        impl.alignment_rows(c[a:b], r[a:b], center, atol, np.empty(5 * m),
                            np.empty(m, dtype=np.int64), cosine[a:b], sign[a:b],
                            sign_nonzero[a:b], rho[a:b], top[a:b], defined[a:b])

    _parallel.run(part, n, _parallel.n_threads(threads), min_items=_MIN_GROUPS_PER_THREAD)
    return _summarised(lead, cosine, sign, sign_nonzero, rho, top, defined)


def _summarised(lead, cosine, sign, sign_nonzero, rho, top, defined) -> Alignment:
    """The Alignment of the kernels' per-request results (flat, n requests),
    shaped ``lead``, with their summaries."""
    n = top.shape[0]
    return Alignment(cosine.reshape(lead), sign.reshape(lead), sign_nonzero.reshape(lead),
                     rho.reshape(lead), top.reshape(lead),
                     median_cosine=_summary(np.median, cosine),
                     mean_sign=_summary(np.mean, sign),
                     mean_sign_nonzero=_summary(np.mean, sign_nonzero),
                     median_spearman=_summary(np.median, rho),
                     top_rate=float(np.count_nonzero(top)) / n if n else float("nan"),
                     n_defined=int(np.count_nonzero(defined)))


@dataclasses.dataclass(frozen=True)
class Fidelity:
    """Agreement of an evaluator's coalition tables with reference tables.

    Attributes
    ----------
    pair_sign : float
        Fraction of pairs i < j (over all requests) whose pair interactions
        I_ij = v(ij) - v(i) - v(j) + v(0) have the same sign (-, 0, +):
        :func:`~fastcredit.audit.pair_agreement` with ``over="all"``.
    pair_sign_nonzero : float
        The same over the pairs with a nonzero reference interaction
        (``over="audit_nonzero"``).
    edge_sign : ndarray (m,)
        ``[k]``: over insertion edges (S, i), i not in S, ``|S| = k``, where the
        reference marginal v(S+i) - v(S) is nonzero, the fraction whose
        marginals have the same sign (NaN when there is no such edge): the
        ``by_size`` of :func:`~fastcredit.audit.edge_agreement` (its
        default ``over="audit_nonzero"``, the paper's denominator).
    edge_count : ndarray (m,) int64
        The number of such edges per k (its ``count_by_size``).
    size_resolved : tuple of Alignment, one per k = 0..m-1
        The size-resolved credit (the m-vector of mean marginals into
        coalitions of size k, :func:`fastcredit.size_resolved`) compared
        like credit vectors.

    Examples
    --------
    >>> import fastcredit as fc
    >>> fid = fc.evaluator_fidelity([0., 1., 1., 1.], [0., 1., 1., 3.])
    >>> fid.pair_sign_nonzero, fid.edge_count.tolist(), len(fid.size_resolved)
    (0.0, [2, 2], 2)
    """
    pair_sign: float
    pair_sign_nonzero: float
    edge_sign: np.ndarray
    edge_count: np.ndarray
    size_resolved: tuple


def evaluator_fidelity(v, reference, *, atol=1e-9, threads=None, backend=None) -> Fidelity:
    r"""How faithfully one evaluator's coalition tables reproduce another's.

    For the same requests scored by two evaluators (e.g. auction replay with
    ``mode="filter"`` against ``mode="rerun"``), compares pair-interaction
    signs, insertion-edge signs :math:`\operatorname{sign}(v(S+i) - v(S))`
    stratified by :math:`|S|` over the edges the reference moves, and the
    size-resolved credit per :math:`|S|`. The sign statistics are those of
    :func:`~fastcredit.audit.edge_agreement` and
    :func:`~fastcredit.audit.pair_agreement` (``v`` as train, ``reference``
    as audit), computed by them: one definition of each.

    Parameters
    ----------
    v, reference : array_like, shape (..., 2**m), 2 <= m <= 16
        Coalition tables of the same requests; ``reference`` is the trusted
        evaluator.
    atol : float
        Signs: a marginal or interaction with :math:`|x| \le` atol is 0
        (the default of the study's functions).
    threads : int, optional
        Threads for the pair interactions, size-resolved credit and Spearman
        correlations (default all cores).
    backend : {None, "c", "numba"}
        None picks the faster one (see :mod:`fastcredit._backend`).

    Returns
    -------
    Fidelity
        Pair-sign, edge-sign and size-resolved agreement of ``v`` with
        ``reference``.

    Raises
    ------
    ValueError
        If ``v`` or ``reference`` has no last axis of length 2**m with
        2 <= m <= 16, the two differ in shape, ``atol`` is negative, NaN or
        infinite, ``threads < 1``, or ``backend`` is not None, "c" or
        "numba" or is not available.
    TypeError
        If ``v`` or ``reference`` is not a real array, ``atol``
        is not a real number or ``threads`` not an integer.

    Examples
    --------
    >>> import fastcredit as fc, numpy as np
    >>> v = np.array([0., 1., 1., 3.])           # complements
    >>> fc.evaluator_fidelity(v, v).pair_sign
    1.0
    >>> fc.evaluator_fidelity(np.array([0., 1., 1., 1.]), v).pair_sign   # substitutes
    0.0
    >>> fc.evaluator_fidelity(np.array([0., 1., 1., 1.]), v).edge_sign.tolist()
    [1.0, 0.0]
    """
    from .study import edge_agreement, pair_agreement, _pair
    a, ref, m = _pair(v, reference, names=("v", "reference"))
    edges = edge_agreement(a, ref, atol=atol)
    pair_all = pair_agreement(a, ref, over="all", atol=atol, threads=threads, backend=backend)
    pair_nz = pair_agreement(a, ref, over="audit_nonzero", atol=atol, threads=threads,
                             backend=backend)
    sa = size_resolved(a, threads=threads, backend=backend)
    sr = size_resolved(ref, threads=threads, backend=backend)
    per_size = tuple(alignment(np.ascontiguousarray(sa[:, :, k]),
                               np.ascontiguousarray(sr[:, :, k]), threads=threads,
                               backend=backend) for k in range(m))
    return Fidelity(pair_all.rate, pair_nz.rate, edges.by_size, edges.count_by_size, per_size)
