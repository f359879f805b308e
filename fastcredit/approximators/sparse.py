r"""SPEX (Kang et al. 2025): the sparse Fourier transform of a game from
subsampled evaluations, with BCH-coded singleton detection, compiled
(``fc.approximate(method="spex")`` and the drop-in ``fastcredit.shapiq.SPEX``).

The game is evaluated on ``N_GROUPS`` = 3 random b-dimensional subspaces,
each shifted by the rows of a *delay matrix*: a zero row, then the parity
part of the systematic generator of a binary BCH code of length 2^q - 1
correcting t errors (shortened to n message bits). A bin of a subsampled
Walsh-Hadamard transform that holds one Fourier coefficient k shows the
parity bits of k in the signs of its ratios across the delays, so finding k
(*singleton detection*) is decoding the word ``[0] * n + parity``: k is the
error pattern in the message part, found when |k| + (sign errors) <= t.
Detected singletons are peeled off every bin they fall in, and the bins
checked again, until nothing changes: sparse_transform's ``qsft.transform``
with shapiq's SPEX parameters ("multi-detect" peeling, residual energy
cutoff 0.9, Chase-2 soft decoding), the same estimator.

The codes are built in numpy (MATLAB's primitive polynomials, as galois',
so the codes and delays are sparse_transform's bit for bit); each round's
per-bin work (the energy test, the decoding with its Chase candidates, the
coefficient, the residual and the bin check) is the compiled ``spex_detect``
kernel (csrc/approximators.c, fastcredit._numba.approximators); the
subsampling, the transforms and the peeling of the detected coefficients are
numpy over whole arrays.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from .. import _parallel
from .._backend import kernels, resolve
from .._index_weights import _CARDINAL, weight_tables
from .._subsets import binomials, combination_rank, combinations
from .._validation import check_memory
from ..games import MAX_MASK_PLAYERS, TABLE, masks_to_bool
from .base import Evaluations, InteractionEstimate

#: MATLAB's default primitive polynomials of GF(2^q) (``gfprimdf``; bit i =
#: coefficient of x^i): the fields galois builds its BCH codes over
#: (``matlab_primitive_poly``), so that the codes (and the delays) are
#: sparse_transform's bit for bit.
_PRIMITIVE = {3: 11, 4: 19, 5: 37, 6: 67, 7: 137, 8: 285, 9: 529, 10: 1033, 11: 2053,
              12: 4179, 13: 8219, 14: 17475, 15: 32771, 16: 69643}


@functools.lru_cache(maxsize=None)
def _field(q: int) -> tuple[np.ndarray, np.ndarray]:
    """(gf_exp, gf_log) of GF(2^q): gf_exp[e] = alpha^e for e < 2 (2^q - 1)."""
    order = (1 << q) - 1
    gf_exp = np.zeros(2 * order, np.int32)
    gf_log = np.full(order + 1, -1, np.int32)
    x = 1
    for e in range(order):
        gf_exp[e] = x
        gf_log[x] = e
        x <<= 1
        if x >> q:
            x ^= _PRIMITIVE[q]
    gf_exp[order:] = gf_exp[:order]
    return gf_exp, gf_log


def _generator(q: int, t: int) -> int:
    """The narrow-sense BCH generator polynomial over GF(2) (bit i = x^i):
    the product of (x - alpha^e) over the cyclotomic cosets of 1..2t."""
    order = (1 << q) - 1
    gf_exp, gf_log = _field(q)
    roots = {(e << j) % order for e in range(1, 2 * t + 1) for j in range(q)}
    poly = [1]                       # ascending coefficients in GF(2^q)
    for e in sorted(roots):
        shifted = [0] + poly
        for i, c in enumerate(poly):
            if c:
                shifted[i] ^= int(gf_exp[gf_log[c] + e])
        poly = shifted
    assert all(c in (0, 1) for c in poly)
    return sum(c << i for i, c in enumerate(poly))


class BCHCode:
    """The shortened binary BCH code sparse_transform's ``BCH(n, t)`` is:
    the smallest 2^q - 1 whose t-error-correcting code has at least n message
    bits, shortened to n."""

    def __init__(self, n: int, t: int):
        q = max(3, int(np.ceil(np.log2(2 * t + 2))))
        while True:
            if q not in _PRIMITIVE:
                raise ValueError(f"SPEX: no BCH code for n = {n} players with t = {t} (the "
                                 f"field would be larger than GF(2^{max(_PRIMITIVE)}))")
            order = (1 << q) - 1
            generator = _generator(q, t) if 2 * t < order else (1 << order) - 1
            k = order - (generator.bit_length() - 1)
            if k >= n:
                break
            q += 1
        self.n, self.t, self.q, self.order, self.k, self.generator = n, t, q, order, k, generator
        self.parity_length = order - k
        self.gf_exp, self.gf_log = _field(q)

    def delay_matrix(self) -> np.ndarray:
        """(parity_length + 1, n) 0/1: a zero row, then parity bit p of
        message bit j (the coefficient of x^(parity_length - 1 - p) in
        x^(n - 1 - j + parity_length) mod g) in row p + 1."""
        r = self.parity_length
        delays = np.zeros((r + 1, self.n), np.int64)
        for j in range(self.n):
            rem = 1 << (self.n - 1 - j + r)
            for d in range(rem.bit_length() - 1, r - 1, -1):
                if rem >> d & 1:
                    rem ^= self.generator << (d - r)
            delays[1:, j] = [(rem >> (r - 1 - p)) & 1 for p in range(r)]
        return delays

    def decode(self, words: np.ndarray, backend=None) -> tuple[np.ndarray, np.ndarray]:
        """Hard-decision decoding of (n_words, n + parity_length) 0/1 words:
        (decoded words, n_errors with -1 for a failure)."""
        words = np.ascontiguousarray(words, dtype=np.uint8)
        decoded = np.empty_like(words)
        n_errors = np.empty(words.shape[0], np.int64)
        kernels("approximators", resolve("approximators.bch_decode", backend)).bch_decode(
            words, self.order, self.t, self.gf_exp, self.gf_log, decoded, n_errors)
        return decoded, n_errors


#: shapiq's SPEX parameters: subsampling groups, the residual energy a
#: singleton may leave (of its bin's), the noise cutoff of a bin's energy per
#: delay (sparse_transform's 1e-9 at noise_sd = 0), the peeling's rounds and
#: the rounds after which a run with nothing new peeled stops (trap_exit)
N_GROUPS = 3
ENERGY_CUTOFF = 0.9
NOISE_CUTOFF = 1e-9
MAX_ROUNDS = 100
STALL_ROUNDS = 15


def spex_code(n: int, t: int, budget: int) -> tuple[BCHCode, int]:
    """(the code, b) for n players within budget, as shapiq's SPEX: the
    largest b with N_GROUPS (parity bits + 1) 2^b <= budget; while that
    leaves b <= 2, t falls (to 2 at least). ValueError when even t = 2 leaves
    b <= 2."""
    while True:
        code = BCHCode(n, t)
        rows = N_GROUPS * (code.parity_length + 1)
        b = int(np.floor(np.log(budget / rows) / np.log(2)))
        if b > 2 or t <= 2:
            break
        t -= 1
    if b <= 2:
        raise ValueError("Insufficient budget to compute the transform. Increase the budget or "
                         "use a different approximator.")
    return code, b


def stream_subsampling(seed, game: int, n: int, b: int) -> np.ndarray:
    """(N_GROUPS, n, b) 0/1 subsampling matrices from the counter-based
    stream (seed, game): fc.approximate's, the same on every backend."""
    from .._numba.rng import fill, key
    words = np.empty(-(-N_GROUPS * n * b // 64), np.uint64)
    fill(np.uint64(key(np.uint64(seed), np.uint64(game))), np.uint64(0), words)
    bits = np.unpackbits(words.astype("<u8").view(np.uint8),
                         bitorder="little")[:N_GROUPS * n * b]
    return np.ascontiguousarray(bits.reshape(N_GROUPS, n, b))


def query_rows(subsampling: np.ndarray, delays: np.ndarray) -> np.ndarray:
    """(N_GROUPS, n_delays, 2^b, n) 0/1: the coalition (M_g l + d) mod 2 of
    point l (its b bits, the most significant first) of group g under delay
    d (sparse_transform's queries)."""
    b = subsampling.shape[2]
    points = (np.arange(1 << b)[:, None] >> np.arange(b - 1, -1, -1)) & 1
    out = []
    for m in subsampling:
        shifted = (points @ m.T.astype(np.int64)) & 1                  # (2^b, n)
        out.append(shifted[None, :, :].astype(np.uint8) ^ delays[:, None, :])
    return np.stack(out)


def walsh_hadamard(values: np.ndarray) -> np.ndarray:
    """U[..., j] = 2^-b sum_l (-1)^|j & l| values[..., l] over the last axis
    (2^b): sparse_transform's ``gwht`` (an FFT over b axes of length 2, each
    butterfly exact)."""
    lead, size = values.shape[:-1], values.shape[-1]
    x = np.ascontiguousarray(values, dtype=np.float64).reshape(-1, size)
    half = 1
    while half < size:
        x = x.reshape(x.shape[0], size // (2 * half), 2, half)
        x = np.stack([x[:, :, 0] + x[:, :, 1], x[:, :, 0] - x[:, :, 1]], axis=2)
        half *= 2
    return x.reshape(lead + (size,)) / size


def peel(u: np.ndarray, subsampling: np.ndarray, code: BCHCode, soft: bool = True,
         backend=None) -> tuple[np.ndarray, np.ndarray]:
    """The multi-detect peeling of the subsampled transforms ``u``
    (N_GROUPS, n_delays, 2^b; peeled in place): (frequencies (K, n) 0/1,
    their coefficients (K,)), each frequency once with the sum of what was
    peeled of it. Each round the kernel finds every bin's singleton; the
    singletons of one frequency found in several bins are averaged, then
    subtracted from its bin in every group, which are checked again; the
    run stops when no bin is left to check, after MAX_ROUNDS rounds, when
    STALL_ROUNDS rounds peeled no new frequency, or when 2^n peels were made
    (sparse_transform's bounds)."""
    impl = kernels("approximators", resolve("approximators.spex", backend))
    n_groups, n_delays, n_bins = u.shape
    n, b = subsampling.shape[1], subsampling.shape[2]
    delays = np.ascontiguousarray(code.delay_matrix(), dtype=np.uint8)
    to_check = np.ones((n_groups, n_bins), np.uint8)
    status = np.empty((n_groups, n_bins), np.uint8)
    found = np.empty((n_groups, n_bins, n), np.uint8)
    rho = np.empty((n_groups, n_bins))
    work = np.empty((code.t * (code.t + 1) // 2 + 3) * (n + n_delays - 1), np.uint8)
    place = 1 << np.arange(b - 1, -1, -1)
    delays_t = delays.T.astype(np.int64)
    groups = subsampling.astype(np.int64)
    peeled_k, peeled_value, seen, history, n_peels = [], [], set(), [], 0
    for round_ in range(MAX_ROUNDS):
        impl.spex_detect(u, subsampling, delays, code.order, code.t, code.gf_exp, code.gf_log,
                         soft, NOISE_CUTOFF, ENERGY_CUTOFF, to_check, status, found, rho, work)
        go_on = bool(to_check.any()) and not (
            round_ >= STALL_ROUNDS and history[-1] == history[-STALL_ROUNDS])
        singles = status.reshape(-1) == 2
        if singles.any():
            balls, at = np.unique(found.reshape(-1, n)[singles], axis=0, return_inverse=True)
            at = at.reshape(-1)
            value = np.bincount(at, weights=rho.reshape(-1)[singles]) / np.bincount(at)
            k = balls.astype(np.int64)
            signed = value[:, None] * (1 - 2 * ((k @ delays_t) & 1))      # (balls, delays)
            for g in range(n_groups):
                bins = ((k @ groups[g]) & 1) @ place
                np.subtract.at(u[g].T, bins, signed)
                to_check[g, bins] = 1
            peeled_k.append(balls)
            peeled_value.append(value)
            seen.update(map(bytes, balls))
            n_peels += len(balls)
        history.append(len(seen))
        if not go_on or n_peels >= 1 << n:
            break
    if not peeled_k:
        return np.zeros((0, n), np.uint8), np.zeros(0)
    k, at = np.unique(np.concatenate(peeled_k), axis=0, return_inverse=True)
    return k, np.bincount(at.reshape(-1), weights=np.concatenate(peeled_value))


def _keys(rows: np.ndarray) -> np.ndarray:
    """One comparable key per 0/1 row: a uint64 mask (bit i = player i) for
    n <= 64, else the packed bytes."""
    packed = np.packbits(rows, axis=1, bitorder="little")
    if rows.shape[1] <= 64:
        padded = np.zeros((rows.shape[0], 8), np.uint8)
        padded[:, :packed.shape[1]] = packed
        return padded.view("<u8").reshape(-1).astype(np.uint64)
    return np.ascontiguousarray(packed).view(np.dtype((np.void, packed.shape[1]))).reshape(-1)


@dataclass(frozen=True)
class SparseFourier:
    """A sparse Fourier transform: ``frequencies`` (K, n) 0/1 (each once),
    their ``coefficients`` (K,) (v(S) = sum_K f(K) (-1)^|S & K|), the
    evaluations spent, the queries answered (repeats of a deterministic
    game's coalitions included), the code's t and the subspaces' b."""

    frequencies: np.ndarray
    coefficients: np.ndarray
    n_evals: int
    n_queries: int
    t: int
    b: int


def sparse_fourier(evaluate, n: int, budget: int, subsampling, t: int = 5, soft: bool = True,
                   deterministic: bool = True, backend=None):
    """SPEX's sparse Fourier transform of a game on n players within budget.

    ``evaluate(rows, keys)``: the game's values on 0/1 rows (n_rows, n) whose
    keys are ``_keys(rows)``; ``subsampling(b)``: the (N_GROUPS, n, b) 0/1
    matrices. A deterministic game is evaluated once per distinct coalition
    (the queries repeat some: the empty coalition in every group), a
    stochastic one on every query. Returns :class:`SparseFourier`."""
    code, b = spex_code(n, t, budget)
    m = np.ascontiguousarray(subsampling(b), dtype=np.uint8)
    delays = code.delay_matrix().astype(np.uint8)
    rows = query_rows(m, delays).reshape(-1, n)
    keys = _keys(rows)
    if deterministic:
        distinct, first, at = np.unique(keys, return_index=True, return_inverse=True)
        values = np.asarray(evaluate(rows[first], distinct), dtype=np.float64)[at.reshape(-1)]
        spent = len(distinct)
    else:
        values = np.asarray(evaluate(rows, keys), dtype=np.float64)
        spent = len(rows)
    u = walsh_hadamard(values.reshape(N_GROUPS, code.parity_length + 1, 1 << b))
    k, coefficients = peel(u, m, code, soft, backend)
    return SparseFourier(k, coefficients, spent, len(rows), code.t, b)


def _by_width(frequencies):
    """(w, at, players) for each width w of the frequencies: ``at`` selects
    them, ``players`` (n_at, w) their players, each row ascending.
    ``frequencies``: uint64 masks (K,) (n <= 64: fc.approximate's, and
    ProxySPEX's trees') or 0/1 rows (K, n) (any n: SPEX's peeling)."""
    frequencies = np.asarray(frequencies)
    rows = (frequencies.astype(bool) if frequencies.ndim == 2
            else masks_to_bool(frequencies.astype(np.uint64), MAX_MASK_PLAYERS))
    widths = rows.sum(axis=1)
    for w in np.unique(widths).tolist():
        at = widths == w
        yield w, at, np.nonzero(rows[at])[1].reshape(int(at.sum()), w)


def fourier_to_moebius(frequencies, coefficients) -> dict:
    r"""{players tuple: Moebius coefficient} of a sparse Fourier transform
    (sparse_transform's ``fourier_to_mobius``, the form shapiq's
    ``_process_moebius`` takes):

    .. math:: a(U) = (-2)^{|U|} \sum_{K \supseteq U} f(K)

    ``frequencies``: uint64 masks (K,) or 0/1 rows (K, n) (:func:`_by_width`),
    each once; every subset of a frequency gets a term (zero sums kept)."""
    coefficients = np.asarray(coefficients, dtype=np.float64)
    subsets, terms = {}, {}
    for w, at, players in _by_width(frequencies):
        for s in range(w + 1):
            picks = combinations(w, s)
            n_terms = len(players) * len(picks)
            subsets.setdefault(s, []).append(players[:, picks].reshape(n_terms, s))
            terms.setdefault(s, []).append(np.repeat(coefficients[at] * (-2.0) ** s, len(picks)))
    out = {}
    for s in sorted(subsets):
        keys, at = np.unique(np.concatenate(subsets[s]), axis=0, return_inverse=True)
        sums = np.bincount(at.reshape(-1), weights=np.concatenate(terms[s]),
                           minlength=len(keys))
        out.update(zip(map(tuple, keys.tolist()), sums.tolist()))
    return out


def fourier_to_index(frequencies, coefficients, index: str, m: int, order: int,
                     empty: float | None = None):
    r"""The index's values of orders 0..order in fc.interactions' layout from
    a sparse Fourier transform, in one pass (no Moebius coefficients):

    .. math:: I(S) = \sum_{K \supseteq S} f(K)\, c(|S|, |K|), \quad
              c(s, w) = \sum_{u=s}^{w} \binom{w - s}{u - s} (-2)^u\, w_I(s, u)

    with w_I the index's Moebius weights (:math:`a(U) = (-2)^{|U|}
    \sum_{K \supseteq U} f(K)`). ``frequencies``: uint64 masks (K,) or 0/1
    rows (K, n) (:func:`_by_width`). values[0] is ``empty`` (default the
    transform's v(∅) = sum_K f(K)) unless the index has its own empty
    value."""
    coefficients = np.asarray(coefficients, dtype=np.float64)
    _, up, _, own_empty = weight_tables(index, m, order)
    binom = binomials(m, order)
    values = [np.zeros(math.comb(m, s)) for s in range(order + 1)]
    if not own_empty:
        values[0][0] = coefficients.sum() if empty is None else empty
    for w, at, players in _by_width(frequencies):
        # the frequencies of w players: each subset of s of them, at once
        for s in range(0 if own_empty else 1, min(order, w) + 1):
            factor = sum(math.comb(w - s, u - s) * (-2.0) ** u * up[s, u]
                         for u in range(s, w + 1))
            picks = combinations(w, s)
            ranks = combination_rank(players[:, picks], m, binom)
            np.add.at(values[s], ranks.reshape(-1),
                      np.repeat(coefficients[at] * factor, len(picks)))
    return values


def estimate(g, index: str, order: int, budget: int, seed, threads, t: int = 5,
             soft: bool = True) -> InteractionEstimate:
    """fc.approximate(method="spex") (arguments checked): one SPEX run per
    game (a batch of tables in threads) with the code of t errors (lowered
    as :func:`spex_code` says) and soft or hard decoding, NaN standard
    errors (the peeling gives none); a deterministic game whose 2**m
    coalitions fit in the budget is evaluated on all of them once and its
    index is exact."""
    from ..interactions import interactions
    m = g.m
    whole = bool(g.deterministic) and m <= 30 and budget >= 1 << m
    least = N_GROUPS * (BCHCode(m, 2).parity_length + 1) << 3
    if not whole and budget < least:
        raise ValueError(f"budget must be at least {least} for method='spex' on {m} players "
                         f"(3 subspaces of 2**3 points under each delay of the smallest code, "
                         f"t = 2), got {budget}")
    sizes = [math.comb(m, s) for s in range(order + 1)]
    n_games = g.value.shape[0] if g.kind == TABLE else 1
    values = np.empty((n_games, sum(sizes)))
    stderr = np.full((n_games, sum(sizes)), np.nan)
    evals = np.zeros(n_games, np.int64)
    queries = np.zeros(n_games, np.int64)
    backend = g.backend

    def work(lo, hi):
        for game in range(lo, hi):
            ev = Evaluations(g, game, seed)
            if whole:
                check_memory((1 << m) * 16, f"the whole table of the game (m = {m}), which "
                                            f"the budget {budget} covers")
                table = ev(np.arange(1 << m, dtype=np.uint64))
                exact = interactions(table, index, order, threads=1).values
                values[game] = np.concatenate([np.atleast_1d(x) for x in exact])
                stderr[game] = 0.0
            else:
                fourier = sparse_fourier(
                    lambda rows, keys: ev(keys), m, budget,
                    lambda b: stream_subsampling(seed, game, m, b), t, soft,
                    bool(g.deterministic), backend)
                values[game] = np.concatenate(fourier_to_index(
                    fourier.frequencies, fourier.coefficients, index, m, order))
                queries[game] = fourier.n_queries
            evals[game] = ev.n_evals

    if g.kind == TABLE:
        _parallel.run(work, n_games, threads)
    else:
        work(0, 1)
    lead = g.lead
    cuts = np.cumsum(sizes)[:-1]
    shaped = [x.reshape(lead + (-1,)) for x in np.split(values, cuts, axis=1)]
    errors = [x.reshape(lead + (-1,)) for x in np.split(stderr, cuts, axis=1)]
    return InteractionEstimate(index=index, order=order, m=m, values=tuple(shaped),
                               stderr=tuple(errors),
                               n_evals=int(evals[0]) if not lead else evals.reshape(lead),
                               n_samples=int(queries[0]) if not lead else queries.reshape(lead),
                               method="spex")


class Spex:
    """fc.approximate's method="spex" (its FASTEST key; :func:`estimate`)."""

    kernel = "approximators.spex"
    estimate = staticmethod(estimate)


#: method -> (its estimator, the indices it estimates: those with Moebius
#: weights, from the recovered Fourier coefficients)
SPARSE = {"spex": (Spex, tuple(_CARDINAL))}
