r"""The sparse Fourier transform of SPEX (Kang et al. 2025) over a compiled
BCH decoder.

SPEX subsamples the game on ``num_subsample`` random b-dimensional
subspaces, each shifted by the rows of a *delay matrix*: the parity part of
the systematic generator of a binary BCH code of length :math:`2^q - 1`
correcting t errors (shortened to n message bits), so that the signs of a
singleton bin's ratios across the delays are the parity bits of its
frequency k. Finding k (singleton detection) is decoding the received word
``[0] * n + parity``: k is the error pattern in the message part, found when
``|k| + (sign errors) <= t``. shapiq's ``sparse_transform`` does this with
``galois``' decoder, one Python-level call of ~40-60 ms per Chase candidate
(98% of SPEX's time at n = 16, budget 20,000, and ~30 s of ``galois``
compiling itself once per process); here the codes are built in numpy and
decoded by the compiled ``bch_decode`` kernel (syndromes, Berlekamp-Massey,
Chien search; csrc/approximators.c, fastcredit._numba.approximators), the
Chase candidates of one bin in one call. The subsampling and the peeling
stay ``sparse_transform``'s (about 1 s of the call).
"""
from __future__ import annotations

import functools

import numpy as np

from .._backend import kernels, resolve

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


def _chase_patterns(reliability: np.ndarray, count: int) -> list[list[int]]:
    """sparse_transform's Chase order: flip patterns of the least reliable
    bits, those of smallest summed reliability first (its own heap, called)."""
    from sparse_transform.qsft.utils.general import k_smallest_partial_sums_with_indices
    return [p[1] for p in reversed(k_smallest_partial_sums_with_indices(list(reliability),
                                                                        count))]


class ChaseDecoder:
    """sparse_transform's ``source_decoder`` (its soft, Chase-2
    maximum-likelihood BCH decoder) over the compiled kernel: called with a
    bin's real parity observations (negative = bit 1), returns
    (k as a (1, n) array, n_errors). The hard decision first; when it fails,
    the ``t (t + 1) / 2`` flip patterns of the t least reliable bits in one
    kernel call, and among the distinct messages decoded (the first of each),
    the one with the fewest corrected errors (the first on ties); the failed
    hard decision (k = 0, -1) when none decodes."""

    def __init__(self, code: BCHCode, chase_depth: int | None = None, backend=None):
        self.code = code
        self.chase_depth = code.t if chase_depth is None else chase_depth
        self.backend = backend

    def __call__(self, parity, **kwargs):
        parity = np.asarray(parity, dtype=float)
        n, depth = self.code.n, self.chase_depth
        word = np.zeros((1, n + parity.shape[0]), np.uint8)
        word[0, n:] = parity < 0
        decoded, n_errors = self.code.decode(word, self.backend)
        if n_errors[0] != -1:
            return decoded[:, :n], int(n_errors[0])
        least = np.argsort(np.abs(parity), kind="stable")[:depth]
        patterns = np.array(_chase_patterns(np.abs(parity[least]), depth * (depth + 1) // 2),
                            dtype=np.uint8)
        words = np.repeat(word, patterns.shape[0], axis=0)
        words[:, n + least] ^= patterns
        candidates, errors = self.code.decode(words, self.backend)
        best, seen = None, set()
        for c in np.flatnonzero(errors != -1):
            message = candidates[c, :n].tobytes()
            if message in seen:
                continue
            seen.add(message)
            if best is None or errors[c] < errors[best]:
                best = c
        if best is None:
            return decoded[:, :n], -1
        return candidates[best:best + 1, :n], int(errors[best])


def subsampled_signal(game, n: int, query_args: dict, delays: np.ndarray, rng):
    """sparse_transform's ``SubsampledSignal`` of ``game`` (0/1 rows -> values)
    with our delays and subsampling matrices drawn from ``rng``: its own
    sampling and transforms, no ``galois`` code built."""
    from sparse_transform.qsft.signals.input_signal_subsampled import SubsampledSignal

    class Signal(SubsampledSignal):
        def _set_Ms_and_Ds_qsft(self):
            self.Ms = [rng.integers(2, size=(n, self.query_args["b"]))
                       for _ in range(self.query_args["num_subsample"])]
            self.Ds = [[delays]] * len(self.Ms)

    return Signal(func=game, n=n, q=2, query_args=query_args)


def query_args(t: int) -> dict:
    """shapiq's SPEX sampling parameters (its ``query_args``)."""
    return {"query_method": "complex", "num_subsample": 3,
            "delays_method_source": "joint-coded", "subsampling_method": "qsft",
            "delays_method_channel": "identity-siso", "num_repeat": 1, "t": t}


def decoder_args(decoder_type: str) -> dict:
    """shapiq's SPEX decoding parameters (its ``decoder_args``), the source
    decoder set per call by :func:`sparse_fourier`."""
    return {"num_subsample": 3, "num_repeat": 1, "reconstruct_method_source": "coded",
            "peeling_method": "multi-detect",
            "reconstruct_method_channel": "identity-siso" if decoder_type == "soft"
            else "identity", "regress": "lasso", "res_energy_cutoff": 0.9}


def sparse_fourier(game, n: int, budget: int, rng, query: dict, decoder: dict,
                   decoder_type: str = "soft", backend=None):
    """SPEX's sparse Fourier transform of ``game`` (0/1 rows -> values) on n
    players within budget: ({frequency tuple: coefficient}, evaluations
    spent). As shapiq's, the code's correction t = ``query["t"]`` falls while
    the subspaces would have at most 4 points (b <= 2), and ``query`` /
    ``decoder`` are updated in place (t, b, the source decoder). ValueError
    when even t = 2 leaves b <= 2."""
    from sparse_transform.qsft.qsft import transform

    t = query["t"]
    while True:
        code = BCHCode(n, t)
        rows = query["num_subsample"] * (code.parity_length + 1)
        b = int(np.floor(np.log(budget / rows) / np.log(2)))
        if b > 2 or t <= 2:
            break
        t -= 1
    if b <= 2:
        raise ValueError("Insufficient budget to compute the transform. Increase the budget or "
                         "use a different approximator.")
    query["t"], query["b"], decoder["b"] = t, b, b
    if decoder_type == "soft":
        decoder["source_decoder"] = ChaseDecoder(code, backend=backend)
    else:
        def hard(parity, **kwargs):
            word = np.zeros((1, n + len(parity)), np.uint8)
            word[0, n:] = np.asarray(parity) == 1
            decoded, n_errors = code.decode(word, backend)
            return decoded[:, :n], int(n_errors[0])
        decoder["source_decoder"] = hard
    signal = subsampled_signal(game, n, query, code.delay_matrix(), rng)
    coefficients = {tuple(int(i) for i in np.flatnonzero(key)): float(np.real(value))
                    for key, value in transform(signal, **decoder).items()}
    return coefficients, rows * (1 << b)
