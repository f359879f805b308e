"""Slow oracles computed straight from the definitions in docs/design.md.

No cleverness here: loops over coalitions, permutations and candidates, so a
disagreement with a kernel means the kernel is wrong. Every family adds its
oracles below its own heading.
"""
from __future__ import annotations

import functools
import itertools
import math
import struct

import numpy as np


def players(mask: int) -> list[int]:
    return [i for i in range(mask.bit_length()) if mask >> i & 1]


# --- tables -----------------------------------------------------------------

def semivalue(v, weights) -> np.ndarray:
    """phi_i = sum over S not containing i of w[|S|] (v(S+i) - v(S))."""
    v = np.asarray(v, dtype=np.float64)
    m = len(v).bit_length() - 1
    phi = np.zeros(m)
    for i in range(m):
        for s in range(1 << m):
            if not s >> i & 1:
                phi[i] += weights[bin(s).count("1")] * (v[s | 1 << i] - v[s])
    return phi


def shapley_by_orders(v) -> np.ndarray:
    """Shapley as the average marginal over all m! orders (m <= 7)."""
    v = np.asarray(v, dtype=np.float64)
    m = len(v).bit_length() - 1
    phi = np.zeros(m)
    for order in itertools.permutations(range(m)):
        s = 0
        for i in order:
            phi[i] += v[s | 1 << i] - v[s]
            s |= 1 << i
    return phi / math.factorial(m)


def shapley(v) -> np.ndarray:
    m = len(v).bit_length() - 1
    return semivalue(v, [math.factorial(k) * math.factorial(m - k - 1) / math.factorial(m)
                         for k in range(m)])


def banzhaf(v) -> np.ndarray:
    m = len(v).bit_length() - 1
    return semivalue(v, [1.0 / 2 ** (m - 1)] * m)


def singleton(v) -> np.ndarray:
    m = len(v).bit_length() - 1
    return np.array([v[1 << i] - v[0] for i in range(m)], dtype=np.float64)


def leave_one_out(v) -> np.ndarray:
    m = len(v).bit_length() - 1
    full = (1 << m) - 1
    return np.array([v[full] - v[full ^ 1 << i] for i in range(m)], dtype=np.float64)


def size_resolved(v) -> np.ndarray:
    """[i, k] = mean over |S| = k, i not in S, of v(S+i) - v(S)."""
    v = np.asarray(v, dtype=np.float64)
    m = len(v).bit_length() - 1
    out = np.zeros((m, m))
    for i in range(m):
        for k in range(m):
            diffs = [v[s | 1 << i] - v[s] for s in range(1 << m)
                     if not s >> i & 1 and bin(s).count("1") == k]
            out[i, k] = np.mean(diffs)
    return out


def pair_interactions(v) -> np.ndarray:
    v = np.asarray(v, dtype=np.float64)
    m = len(v).bit_length() - 1
    out = np.zeros((m, m))
    for i in range(m):
        for j in range(m):
            if i != j:
                out[i, j] = v[1 << i | 1 << j] - v[1 << i] - v[1 << j] + v[0]
    return out


def moebius(v) -> np.ndarray:
    """a(S) = sum over T subset of S of (-1)^|S - T| v(T)."""
    v = np.asarray(v, dtype=np.float64)
    a = np.zeros(len(v))
    for s in range(len(v)):
        for t in range(len(v)):
            if t & s == t:
                a[s] += (-1) ** bin(s & ~t).count("1") * v[t]
    return a


def from_moebius(a) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    return np.array([sum(a[t] for t in range(len(a)) if t & s == t) for s in range(len(a))])


def semivalue_matrix(m: int, weights) -> np.ndarray:
    """C[S, i] with phi = v @ C: w[|S|-1] if i in S, else -w[|S|] (the
    vectorised form of the definition; memory 2**m * m)."""
    masks = np.arange(1 << m)
    member = (masks[:, None] >> np.arange(m)) & 1
    size = member.sum(1)
    w = np.asarray(weights, dtype=np.float64)
    w_in = np.where(size > 0, w[np.maximum(size - 1, 0)], 0.0)
    w_out = np.where(size < m, w[np.minimum(size, m - 1)], 0.0)
    return np.where(member == 1, w_in[:, None], -w_out[:, None])


def moebius_matrix(m: int) -> np.ndarray:
    """M[S, T] = (-1)^|S - T| for T a subset of S, else 0: moebius(v) = M @ v
    and, with |M| (the subset indicator), from_moebius(a) = |M| @ a (the
    matrix form of the definitions; memory 4**m)."""
    masks = np.arange(1 << m)
    subset = (masks[None, :] & ~masks[:, None]) == 0
    sign = 1 - 2 * (np.bitwise_count(masks[:, None] & ~masks[None, :]).astype(int) & 1)
    return np.where(subset, sign, 0).astype(np.float64)


def hierarchy(clustering, m):
    """The tree of a partition (one union label per player) or of a linkage
    matrix (m - 1, 4), as nested lists whose leaves are tuples of players: a
    player alone, or the members of a cluster of negative distance (never
    split)."""
    z = np.asarray(clustering)
    if z.ndim == 1:
        return [[(i,) for i in range(m) if z[i] == label] for label in sorted(set(z.tolist()))]

    def node(k):
        if k < m:
            return (k,)
        row = z[k - m]
        parts = [node(int(row[0])), node(int(row[1]))]
        if row[2] < 0:
            return tuple(sorted(p for part in parts for p in flatten(part)))
        return parts

    def flatten(t):
        return list(t) if isinstance(t, tuple) else [p for c in t for p in flatten(c)]

    return node(2 * m - 2) if m > 1 else (0,)


def hierarchy_orders(tree):
    """Every order of the leaves of ``tree`` that keeps each node's leaves
    together: the children of each node in every order, each child's
    leaves one block."""
    if isinstance(tree, tuple):
        yield [tree]
        return
    for perm in itertools.permutations(tree):
        for blocks in itertools.product(*[list(hierarchy_orders(c)) for c in perm]):
            yield [leaf for block in blocks for leaf in block]


def owen(v, clustering) -> np.ndarray:
    """Owen (Winter) value by its definition: the average, over the orders of
    the hierarchy's leaves that keep every node together (each equally
    likely), of each leaf's marginal, shared equally by its players."""
    v = np.asarray(v, dtype=np.float64)
    m = len(v).bit_length() - 1
    phi = np.zeros(m)
    orders = list(hierarchy_orders(hierarchy(clustering, m)))
    for order in orders:
        s = 0
        for leaf in order:
            bits = sum(1 << p for p in leaf)
            for p in leaf:
                phi[p] += (v[s | bits] - v[s]) / len(leaf)
            s |= bits
    return phi / len(orders)


def per_game(fn, v) -> np.ndarray:
    """A one-table oracle ``fn`` over a batch of tables (..., 2**m), keeping
    the leading shape (an empty batch included)."""
    v = np.asarray(v, dtype=np.float64)
    flat = v.reshape(-1, v.shape[-1])
    shape = np.shape(fn(np.zeros(v.shape[-1])))
    res = np.array([fn(g) for g in flat]).reshape((flat.shape[0],) + shape)
    return res.reshape(v.shape[:-1] + shape)


# --- shaping ----------------------------------------------------------------

def project_box(u, lower, upper, weights=None, total=0.0) -> np.ndarray:
    """argmin sum w (z-u)^2/2 s.t. sum w z = total, lower <= z <= upper, by
    bisection on tau in z = clip(u - tau) until the bracket is 1e-15 wide
    (relative); one row. Where zero weights leave a whole interval of tau
    optimal, the tau of it nearest 0 (as documented)."""
    u = [float(x) for x in u]
    m = len(u)
    lo_b = np.broadcast_to(np.asarray(lower, dtype=np.float64), (m,))
    hi_b = np.broadcast_to(np.asarray(upper, dtype=np.float64), (m,))
    w = [1.0] * m if weights is None else [float(x) for x in weights]

    def z_of(tau):
        return [min(max(u[i] - tau, lo_b[i]), hi_b[i]) for i in range(m)]

    def f(tau):
        return sum(w[i] * z for i, z in enumerate(z_of(tau)))

    finite = [abs(x) for x in list(lo_b) + list(hi_b) if math.isfinite(x)]
    span = 1.0 + max(abs(x) for x in u) + max(finite, default=0.0) + abs(total)
    span /= min([x for x in w if x > 0], default=1.0)
    assert f(-4 * span) >= total >= f(4 * span)

    def end(last):
        """The least tau with f(tau) <= total, or (last) the greatest with
        f(tau) >= total: f is non-increasing, so the optimal tau form the
        interval between the two."""
        lo, hi = -4 * span, 4 * span
        while hi - lo > 1e-15 * max(1.0, abs(lo), abs(hi)):
            mid = 0.5 * (lo + hi)
            if f(mid) > total or (last and f(mid) == total):
                lo = mid
            else:
                hi = mid
        return 0.5 * (lo + hi)

    return np.array(z_of(min(max(0.0, end(False)), end(True))))


def group_advantages(rewards, groups, eps=1e-4, scale="group") -> np.ndarray:
    """(r - group mean) / (group sd, ddof 1, + eps); NaN -> 0; groups of one 0;
    a group holding an infinite reward has no mean: NaN."""
    r = [0.0 if math.isnan(x) else float(x) for x in rewards]
    out = np.zeros(len(r))
    with np.errstate(invalid="ignore"):     # an infinite reward: the batch has no sd
        batch_sd = float(np.std(r, ddof=1))
    for g in set(groups):
        idx = [j for j, x in enumerate(groups) if x == g]
        if len(idx) < 2:
            continue
        vals = [r[j] for j in idx]
        if any(math.isinf(x) for x in vals):
            out[idx] = math.nan
            continue
        mean = sum(vals) / len(vals)
        sd = math.sqrt(sum((x - mean) ** 2 for x in vals) / (len(vals) - 1))
        for j in idx:
            div = {"group": sd + eps, "batch": batch_sd + eps, "none": 1.0}[scale]
            out[j] = (r[j] - mean) / div
    return out


def token_advantages(base, action_adv, token_action, mask=None) -> np.ndarray:
    """Token t of sequence g: 0 if masked, base[g] if shared (-1), else
    action_adv[g, a]; float32."""
    ta = np.asarray(token_action)
    out = np.zeros(ta.shape, dtype=np.float32)
    for g in range(ta.shape[0]):
        for t in range(ta.shape[1]):
            if mask is not None and not mask[g][t]:
                continue
            a = int(ta[g, t])
            out[g, t] = base[g] if a == -1 else action_adv[g][a]
    return out


def shape_advantages(base, credit, beta, kappa, normalize="std", weights=None) -> np.ndarray:
    """One sequence: base + beta * z, z the projection (project_box, bounds
    +-kappa, total 0) of the centred credit divided by its population sd
    ("std") or its largest magnitude ("maxabs"), unless that is 0."""
    u = np.asarray(credit, dtype=np.float64)
    u = u - u.mean()
    spread = {"std": math.sqrt(np.mean(u * u)), "maxabs": np.abs(u).max(),
              "none": 1.0}[normalize]
    if spread > 0:
        u = u / spread
    return base + beta * project_box(u, -kappa, kappa, weights)


# --- rng (csrc/rng.h) --------------------------------------------------------

_MASK64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


def _mix64(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


class Stream:
    """The counter-based RNG of csrc/rng.h in plain Python integers."""

    def __init__(self, seed: int, item: int):
        self.state = _mix64(seed ^ _mix64((item + _GOLDEN) & _MASK64))

    def next(self) -> int:
        self.state = (self.state + _GOLDEN) & _MASK64
        return _mix64(self.state)

    def below(self, n: int) -> int:
        return ((self.next() >> 32) * n) >> 32


# --- audit ------------------------------------------------------------------

def index_pairs(seed: int, item: int, n: int) -> list:
    """n indices below n, two per draw of stream (seed, item): high 32 bits
    first, then low 32 bits, each as (bits * n) >> 32."""
    s = Stream(seed, item)
    out = []
    while len(out) < n:
        z = s.next()
        out += [((z >> 32) * n) >> 32, ((z & 0xFFFFFFFF) * n) >> 32]
    return out[:n]


def bootstrap_median(a, b, resamples: int, seed: int) -> np.ndarray:
    """Replicate r: the n indices of index_pairs(seed, r, n); np.median of the
    resampled a (minus that of b when b is given)."""
    a = np.asarray(a, dtype=np.float64)
    n = len(a)
    reps = np.empty(resamples)
    for r in range(resamples):
        idx = index_pairs(seed, r, n)
        reps[r] = np.median(a[idx]) - (np.median(np.asarray(b)[idx]) if b is not None else 0.0)
    return reps


def bootstrap_mean_diff(groups, b, resamples: int, seed: int) -> np.ndarray:
    """out[g, r] = mean of len(g) draws of group g - mean of len(b) draws of b,
    group g from stream (seed, g), group draws first in each replicate."""
    out = np.empty((len(groups), resamples))
    for g, a in enumerate(groups):
        s = Stream(seed, g)
        for r in range(resamples):
            ma = np.mean([a[s.below(len(a))] for _ in range(len(a))])
            mb = np.mean([b[s.below(len(b))] for _ in range(len(b))]) if len(b) else 0.0
            out[g, r] = ma - mb
    return out


def average_ranks(x) -> np.ndarray:
    """1-based ranks, ties sharing their mean rank, by counting."""
    x = list(x)
    return np.array([1 + sum(u < v for u in x) + (sum(u == v for u in x) - 1) / 2 for v in x])


def spearman(x, y) -> float:
    """Pearson correlation of the average ranks."""
    rx, ry = average_ranks(x), average_ranks(y)
    dx, dy = rx - rx.mean(), ry - ry.mean()
    return float((dx * dy).sum() / math.sqrt((dx * dx).sum() * (dy * dy).sum()))


def within_spearman(x, y, offsets, min_steps: int) -> np.ndarray:
    """Per group: NaN if short, non-finite or constant y; 0 if constant x."""
    out = []
    for a, b in zip(offsets[:-1], offsets[1:]):
        xs, ys = list(x[a:b]), list(y[a:b])
        if len(xs) < min_steps or not np.all(np.isfinite(xs + ys)) or len(set(ys)) == 1:
            out.append(math.nan)
        elif len(set(xs)) == 1:
            out.append(0.0)
        else:
            out.append(spearman(xs, ys))
    return np.array(out)


def fisher_yates(values, seed: int, item: int) -> list:
    """The uniform shuffle of one group from stream (seed, item)."""
    out = list(values)
    s = Stream(seed, item)
    for j in range(len(out) - 1, 0, -1):
        k = s.below(j + 1)
        out[j], out[k] = out[k], out[j]
    return out


def derangement(n: int, seed: int) -> list:
    """Fisher-Yates on stream (seed, attempt), restarted on a fixed point."""
    attempt = 0
    while True:
        s = Stream(seed, attempt)
        out = list(range(n))
        ok = True
        for j in range(n - 1, 0, -1):
            k = s.below(j + 1)
            out[j], out[k] = out[k], out[j]
            if out[j] == j:
                ok = False
                break
        if ok and out[0] != 0:
            return out
        attempt += 1


def replay_advantage(factual, alternative, alpha: float):
    """Lists of per-step outcome lists -> (A_replay, noise floor, resolution)."""
    adv, noise, res = [], [], []
    for f, a in zip(factual, alternative):
        adv.append(np.mean(f) - np.mean(a))
        noise.append(np.std(f, ddof=1) if len(f) > 1 else math.nan)
        # both arms pinned at the same bound of a binary outcome: all 0, or all 1
        pinned = any(all(x == edge for x in list(f) + list(a)) for edge in (0.0, 1.0))
        res.append(1 - alpha ** (1 / min(len(f), len(a))) if pinned else math.nan)
    return np.array(adv), np.array(noise), np.array(res)


def holm(p) -> np.ndarray:
    """Adjusted p of the j-th smallest: max over l <= j of (k - l + 1) p_(l), capped at 1."""
    p = list(p)
    k = len(p)
    order = sorted(range(k), key=lambda i: p[i])
    adj = [0.0] * k
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, (k - rank) * p[i])
        adj[i] = min(1.0, running)
    return np.array(adj)


def tied(x, atol: float) -> np.ndarray:
    """x with |x_i| <= atol as 0, then every value replaced by the smallest of
    its tie class: i ~ j when |x_i - x_j| <= atol, closed transitively."""
    x = [0.0 if abs(v) <= atol else float(v) for v in x]
    label = list(range(len(x)))
    changed = True
    while changed:
        changed = False
        for i in range(len(x)):
            for j in range(len(x)):
                if abs(x[i] - x[j]) <= atol and label[j] < label[i]:
                    label[i], changed = label[j], True
    return np.array([min(x[j] for j in range(len(x)) if label[j] == label[i])
                     for i in range(len(x))])


def alignment(c, r, atol: float = 0.0) -> dict:
    """The per-request statistics of fc.alignment for one request; with atol,
    signs, ranks, argmax and constancy are of the tied values."""
    c = np.asarray(c, dtype=np.float64) - np.mean(c)
    r = np.asarray(r, dtype=np.float64) - np.mean(r)
    cos_c, cos_r = c, r
    c, r = tied(c, atol), tied(r, atol)
    nz = [i for i in range(len(r)) if r[i] != 0]
    if not nz:
        cos = rho = sign_nz = math.nan
    elif not np.any(c):
        cos = rho = 0.0
    else:
        cos = float(cos_c @ cos_r / math.sqrt((cos_c @ cos_c) * (cos_r @ cos_r)))
        rho = spearman(c, r)
    if nz:
        sign_nz = sum(np.sign(c[i]) == np.sign(r[i]) for i in nz) / len(nz)
    return {"cosine": cos, "sign": float(np.mean(np.sign(c) == np.sign(r))),
            "sign_nonzero": sign_nz, "spearman": rho,
            "top": int(np.argmax(c)) == int(np.argmax(r))}


def edge_sign_agreement(v, ref):
    """Per |S| = k: (agreeing, total) over edges (S, i) with ref(S+i) != ref(S)."""
    m = v.shape[-1].bit_length() - 1
    hits, count = np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.int64)
    for g in range(v.shape[0]):
        for s in range(1 << m):
            for i in range(m):
                if s >> i & 1:
                    continue
                dr = ref[g, s | 1 << i] - ref[g, s]
                if dr != 0:
                    k = bin(s).count("1")
                    count[k] += 1
                    hits[k] += np.sign(v[g, s | 1 << i] - v[g, s]) == np.sign(dr)
    return hits, count


# --- sampling ---------------------------------------------------------------

def sampling_permutation(seed: int, game: int, unit: int, m: int) -> list[int]:
    """csrc/sampling.h: Fisher-Yates from the stream
    (rng_key(rng_key(seed, game), unit)), swap i with below(i + 1)."""
    stream = Stream(Stream(seed, game).state, unit)
    perm = list(range(m))
    for i in range(m - 1, 0, -1):
        j = stream.below(i + 1)
        perm[i], perm[j] = perm[j], perm[i]
    return perm


def tree_permutation(seed: int, game: int, unit: int, children) -> list[int]:
    """csrc/sampling.h: one bit per row of the tree (the top bit of a draw
    of stream (rng_key(rng_key(seed, game), unit)), rows from the root down
    to 0), row r's node lists its second child's players first when its bit
    is 1; the order is the root's list."""
    children = [tuple(int(c) for c in pair) for pair in children]
    m = len(children) + 1
    stream = Stream(Stream(seed, game).state, unit)
    swap = {r: stream.next() >> 63 for r in range(m - 2, -1, -1)}

    def players(node):
        if node < m:
            return [node]
        a, b = children[node - m]
        if swap[node - m]:
            a, b = b, a
        return players(a) + players(b)
    return players(2 * m - 2) if m > 1 else [0]


def masked_rows(background, xs, masks, owner) -> np.ndarray:
    """Each coalition's rows: background row b with x = xs[owner[c]] on the
    features in the coalition's mask, one value at a time."""
    n_b, m = background.shape
    rows = []
    for mask, o in zip(masks, owner):
        for b in range(n_b):
            rows.append([xs[o][j] if int(mask) >> j & 1 else background[b][j]
                         for j in range(m)])
    return np.array(rows, dtype=np.float64).reshape(-1, m)


def background_mean(outputs, weights=None) -> np.ndarray:
    """Each coalition's average over the background rows: sum over b in
    order (weighted, or divided by n_b)."""
    c, n_b, k = outputs.shape
    means = np.zeros((c, k))
    for i in range(c):
        for o in range(k):
            total = 0.0
            for b in range(n_b):
                total += outputs[i, b, o] * (1.0 if weights is None else weights[b])
            means[i, o] = total if weights is not None else total / n_b
    return means


def affordable_pairs(perms, max_evals: int):
    """For each row of orders (rows, pairs, k): (pairs, the coalitions in
    increasing order): pair by pair, its 2 (k - 1) coalitions (the prefixes
    of 1 .. k-1 players of the order and their complements) counted where
    first seen, as long as 2 + the distinct ones fit in max_evals; {} and N
    among the coalitions."""
    found = []
    for row in perms:
        k = len(row[0])
        full, seen, taken = (1 << k) - 1, set(), 0
        for order in row:
            prefixes = [sum(1 << int(p) for p in order[:j]) for j in range(1, k)]
            new = set(prefixes) | {full ^ s for s in prefixes}
            if 2 + len(seen | new) > max_evals:
                break
            seen |= new
            taken += 1
        found.append((taken, sorted(seen | {0, full})))
    return found


def walk_marginals(v, order) -> np.ndarray:
    """The marginal of each player along one order: v(P + i) - v(P)."""
    out = np.zeros(len(order))
    s = 0
    for i in order:
        out[i] = float(v[s | 1 << i]) - float(v[s])
        s |= 1 << i
    return out


def permutation_estimate(v, orders, antithetic: bool):
    """(values, stderr) of permutation sampling over the given orders: a
    sample is a walk's marginals, or the average of a walk and its reverse;
    values = mean, stderr = sample sd / sqrt(n)."""
    samples = []
    for order in orders:
        x = walk_marginals(v, order)
        if antithetic:
            x = 0.5 * (x + walk_marginals(v, order[::-1]))
        samples.append(x)
    samples = np.array(samples)
    n = len(samples)
    if n < 2:
        return samples.mean(0), np.full(samples.shape[1], np.inf)
    return samples.mean(0), samples.std(0, ddof=1) / math.sqrt(n)


def permutation_run(v, seed: int, game: int, walks: int, budget=None, antithetic=True,
                    cache=True, tol=0.0, min_samples=32, m=None) -> dict:
    """The fields of fc.permutation_shapley's estimate for table ``v``, game
    ``game`` of a batch, from its documented rules: sampling units (a walk,
    or a walk and its reverse) of sampling_permutation(seed, game, unit) run
    in order until ``walks`` walks ran, or the next unit's evaluations no
    longer fit in ``budget`` (truncated; a walk costs m - 1 evaluations when
    v({}) and v(N) are read once up front, else m + 1), or, once
    ``min_samples`` samples ran, every stderr is <= tol. ``v`` is a table, or
    any v[mask] of ``m`` players."""
    m = len(v).bit_length() - 1 if m is None else m
    unit_walks = 2 if antithetic else 1
    unit_cost = unit_walks * (m - 1 if cache else m + 1)
    fixed = 2 if cache else 0
    budget = math.inf if budget is None else budget
    orders, truncated = [], False
    while len(orders) < walks // unit_walks:
        if fixed + (len(orders) + 1) * unit_cost > budget:
            truncated = True
            break
        orders.append(sampling_permutation(seed, game, len(orders), m))
        if (tol > 0 and len(orders) >= min_samples
                and np.all(permutation_estimate(v, orders, antithetic)[1] <= tol)):
            break
    values, stderr = permutation_estimate(v, orders, antithetic)
    n = len(orders)
    return {"values": values, "stderr": stderr, "n_evals": fixed + n * unit_cost,
            "n_permutations": n * unit_walks, "n_samples": n, "truncated": truncated}


def scm_table(n_steps: int, q, outcome) -> np.ndarray:
    """v(S) = P(bad | S held factual) of a trajectory SCM by enumerating every
    bad/good pattern of the resampled steps: ``outcome(mask, pattern)`` says
    whether the run ends badly when the steps in mask keep their factual
    action and step j (not in mask) is bad iff bit j of pattern is set (a
    resampled step is bad with probability q[j])."""
    out = np.zeros(1 << n_steps)
    for mask in range(1 << n_steps):
        free = [j for j in range(n_steps) if not mask >> j & 1]
        for bits in itertools.product((0, 1), repeat=len(free)):
            p, pattern = 1.0, 0
            for j, b in zip(free, bits):
                p *= q[j] if b else 1.0 - q[j]
                pattern |= b << j
            out[mask] += p * outcome(mask, pattern)
    return out


def chain_scm_table(derails, q, r) -> np.ndarray:
    """v(S) of the pivotal-step chain by enumerating which resampled steps
    flip the run's state (derail w.p. q[j] when on track, recover w.p. r[j]
    when derailed); a held step derails iff derails[j], else keeps the state."""
    n = len(q)
    out = np.zeros(1 << n)
    for mask in range(1 << n):
        free = [j for j in range(n) if not mask >> j & 1]
        for flips in itertools.product((0, 1), repeat=len(free)):
            flip = dict(zip(free, flips))
            p, derailed = 1.0, False
            for j in range(n):
                if j not in flip:
                    derailed = derailed or bool(derails[j])
                    continue
                chance = r[j] if derailed else q[j]
                p *= chance if flip[j] else 1.0 - chance
                derailed = derailed != bool(flip[j])
            out[mask] += p * derailed
    return out


# --- auction ----------------------------------------------------------------

def auction_pool(actions, members):
    """Pool of the actions in ``members``: ``actions[i]`` lists action i's
    instances (ad_id, score, value, prerank). Dedup by ad_id keeps the
    highest-score instance (ties: lowest action, then first listed); the
    mask ORs the member actions that retrieved the ad.
    Returns {ad_id: [score, value, prerank, mask]}."""
    pool = {}
    for i in sorted(members):
        for ad, score, value, prerank in actions[i]:
            if ad not in pool:
                pool[ad] = [score, value, prerank, 0]
            elif score > pool[ad][0]:
                pool[ad][:3] = [score, value, prerank]
            pool[ad][3] |= 1 << i
    return pool


def auction_pipeline(pool, reserve, capacity, pricing):
    """Capacity -> rank -> reserve on a pool; returns the ranked
    [(ad_id, earnings if it wins, mask)]."""
    ads = list(pool)
    if capacity is not None:
        ads = sorted(ads, key=lambda a: (-pool[a][2], a))[:capacity]
    ranked = [a for a in sorted(ads, key=lambda a: (-pool[a][0], a)) if pool[a][0] >= reserve]
    result = []
    for q, a in enumerate(ranked):
        score, value, _, mask = pool[a]
        if pricing == "first":
            earn = value
        else:
            nxt = pool[ranked[q + 1]][0] if q + 1 < len(ranked) else reserve
            earn = min(score, max(reserve, nxt))
        result.append((a, earn, mask))
    return result


def auction_request(actions, slots, reserve=0.0, capacity=None, pricing="first",
                    mode="filter"):
    """(y, winners): the coalition table of one request and, per coalition,
    the winners' (ad_id, earnings) in rank order."""
    m = len(actions)
    y = np.zeros(1 << m)
    winners = [[] for _ in range(1 << m)]
    everything = auction_pipeline(auction_pool(actions, range(m)), reserve, capacity, pricing)
    for s in range(1, 1 << m):
        if mode == "rerun":
            ranked = auction_pipeline(auction_pool(actions, players(s)), reserve, capacity,
                                      pricing)
            chosen = ranked[:slots]
        else:
            chosen = [e for e in everything if e[2] & s][:slots]
        winners[s] = [(a, earn) for a, earn, _ in chosen]
        total = 0.0
        for _, earn in winners[s]:
            total += earn
        y[s] = total
    return y, winners


def auction_actions(offsets, ad_id, score, value, prerank, m, r):
    """Request r of CSR pools as the per-action instance lists of
    ``auction_request`` (prerank None: the score)."""
    pr = score if prerank is None else prerank
    return [[(int(ad_id[x]), float(score[x]), float(value[x]), float(pr[x]))
             for x in range(offsets[r * m + i], offsets[r * m + i + 1])] for i in range(m)]


# --- trees ------------------------------------------------------------------

def actor_centered_credit(q, pi, offsets, uniform=False):
    """credit(s, a) = Q(s, a) - sum_b pi(b|s) Q(s, b) (or the plain mean of
    Q over s's legal actions); returns (credit, baseline)."""
    credit, baseline = [], []
    for s in range(len(offsets) - 1):
        qs = [float(x) for x in q[offsets[s]:offsets[s + 1]]]
        if uniform:
            b = sum(qs) / len(qs) if qs else 0.0
        else:
            b = sum(float(p) * x for p, x in zip(pi[offsets[s]:offsets[s + 1]], qs))
        baseline.append(b)
        credit += [x - b for x in qs]
    return np.array(credit), np.array(baseline)


def allocation_pick(rule: str, counts, sums, costs, c: float, c_tok: float, seed: int,
                    step: int) -> int:
    """csrc/trees.h: the candidates are the actions with the fewest trials
    ("uniform"); the untried actions if any ("uct"; "agent_uct": the cheapest
    of them); else the argmax of sums/counts + c sqrt(log(N + 1) / counts),
    N = sum of counts (minus c_tok * costs for "agent_uct"). Ties (exact
    equality) go to tied candidate number below(#ties) of the stream
    (seed, step), counted in index order."""
    n = len(counts)
    penalty = [c_tok * float(costs[a]) if rule == "agent_uct" else 0.0 for a in range(n)]
    untried = [a for a in range(n) if counts[a] == 0]
    if rule == "uniform":
        candidates, score = range(n), [-float(x) for x in counts]
    elif untried:
        candidates, score = untried, [-p for p in penalty]
    else:
        log_total = math.log(float(sum(counts)) + 1.0)
        candidates = range(n)
        score = [float(sums[a]) / float(counts[a])
                 + c * math.sqrt(log_total / float(counts[a])) - penalty[a] for a in range(n)]
    best = max(score[a] for a in candidates)
    ties = [a for a in candidates if score[a] == best]
    return ties[Stream(seed, step).below(len(ties))]


# --- synthetic ----------------------------------------------------------------

def sponsored_search_catalogue(seed: int, catalogue: int, topics: int, bid_scale: float = 1.0):
    """(bid, ctr) of fc.synthetic.sponsored_search: per_topic = catalogue //
    topics; bid_scale x lognormal(0, 0.8) bids, then Beta(2, 10) click
    rates, of numpy.random.default_rng(seed)."""
    n = catalogue // topics * topics
    gen = np.random.default_rng(seed)
    bid = bid_scale * gen.lognormal(0.0, 0.8, n)
    return bid, gen.beta(2.0, 10.0, n)


# The generator's functions (csrc/synthetic.h): polynomials interpolating the
# documented functions at Chebyshev nodes, fitted here from their Taylor
# series in 60-digit decimal arithmetic (so the kernels' constants are checked
# against the documented fit), evaluated by Horner's rule in Python floats
# (IEEE doubles, no FMA), with the documented range reductions.

def _decimal_pi(digits: int):
    """pi to ``digits`` digits (the decimal module's recipe)."""
    from decimal import Decimal, localcontext
    with localcontext() as ctx:
        ctx.prec = digits + 2
        three = Decimal(3)
        lasts, t, s, n, na, d, da = 0, three, 3, 1, 0, 0, 24
        while s != lasts:
            lasts = s
            n, na = n + na, na + 8
            d, da = d + da, da + 32
            t = (t * n) / d
            s += t
    return s


def chebyshev_fit(series, lo, hi, degree: int) -> list[float]:
    """Coefficients c_0..c_degree (rounded to double) of the polynomial that
    equals sum_i series[i] x**i at the degree + 1 Chebyshev nodes
    (lo + hi)/2 + (hi - lo)/2 cos((2j + 1) pi / (2 degree + 2)) of [lo, hi],
    in 60-digit decimal arithmetic and an exact rational solve."""
    from decimal import Decimal, localcontext
    from fractions import Fraction
    with localcontext() as ctx:
        ctx.prec = 60
        pi = _decimal_pi(60)
        nodes = []
        for j in range(degree + 1):
            a = pi * (2 * j + 1) / (2 * degree + 2)
            cos_a = sum((-1) ** i * a ** (2 * i) / math.factorial(2 * i) for i in range(40))
            nodes.append((Decimal(lo) + Decimal(hi)) / 2 + (Decimal(hi) - Decimal(lo)) / 2 * cos_a)
        rows = [[Fraction(x) ** e for e in range(degree + 1)]
                + [Fraction(sum(c * x ** i for i, c in enumerate(series)))] for x in nodes]
    n = degree + 1
    for i in range(n):   # Gauss-Jordan elimination, exact
        p = next(r for r in range(i, n) if rows[r][i] != 0)
        rows[i], rows[p] = rows[p], rows[i]
        for r in range(n):
            if r != i and rows[r][i] != 0:
                q = rows[r][i] / rows[i][i]
                rows[r] = [x - q * y for x, y in zip(rows[r], rows[i])]
    return [float(rows[i][n] / rows[i][i]) for i in range(n)]


_SYNTH = {}


def synthetic_constants() -> dict:
    """The constants of csrc/synthetic.h, from their definitions: LN2_HI (ln 2
    cut to 32 significant bits), LN2_LO, INV_LN2 and the coefficient lists
    LOG (H), EXP (P), SIN (S) and COS (C)."""
    if not _SYNTH:
        from decimal import Decimal, localcontext
        with localcontext() as ctx:
            ctx.prec = 60
            half_pi, ln2, n = _decimal_pi(60) / 2, Decimal(2).ln(), 60
            w_max = (3 - 2 * Decimal(2).sqrt()) ** 2
            mantissa, exponent = math.frexp(float(ln2))
            ln2_hi = math.ldexp(math.floor(mantissa * 2 ** 32), exponent - 32)
            _SYNTH.update(
                LN2_HI=ln2_hi, LN2_LO=float(ln2 - Decimal(ln2_hi)), INV_LN2=float(1 / ln2),
                # (2 atanh(s) - 2 s) / s**3 in w = s**2
                LOG=chebyshev_fit([Decimal(2) / (2 * i + 3) for i in range(n)], 0,
                                  Decimal("1.0001") * w_max, 6),
                # (e**r - 1 - r) / r**2
                EXP=chebyshev_fit([Decimal(1) / math.factorial(i + 2) for i in range(n)],
                                  Decimal("-1.0001") * ln2 / 2, Decimal("1.0001") * ln2 / 2, 10),
                # sin(pi f / 2) / f and (cos(pi f / 2) - 1) / f**2 in y = f**2
                SIN=chebyshev_fit([(-1) ** i * half_pi ** (2 * i + 1) / math.factorial(2 * i + 1)
                                   for i in range(n)], 0, Decimal("0.25"), 6),
                COS=chebyshev_fit([(-1) ** i * half_pi ** (2 * i) / math.factorial(2 * i)
                                   for i in range(1, n)], 0, Decimal("0.25"), 6))
    return _SYNTH


def _horner(coefficients, x: float) -> float:
    """c_0 + x (c_1 + x (c_2 + ...)), one float operation at a time."""
    p = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        p = c + x * p
    return p


def _bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def _double(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits & _MASK64))[0]


def synthetic_log(x: float) -> float:
    """log x of csrc/synthetic.h: x = 2**k z with z in [c, 2 c), c the double
    nearest sqrt(2)/2 (subnormals scaled by 2**54 first); f = z - 1, s = f /
    (2 + f), log(1 + f) = 2 atanh(s) = f - (f**2/2 - s (f**2/2 + w H(w))),
    w = s**2; plus k ln 2 in two parts."""
    if not x > 0.0 or x == math.inf:
        return x if x != x or x == math.inf else (-math.inf if x == 0.0 else math.nan)
    K = synthetic_constants()
    e = 54 if x < 2.0 ** -1022 else 0
    ix = _bits(x * 2.0 ** e)
    k = ((ix - 0x3fe6a09e667f3bcd) & _MASK64) >> 52
    k = k - 4096 if k >= 2048 else k   # the signed top 12 bits
    z = _double(ix - (k << 52))
    dk = float(k - e)
    f = z - 1.0
    s = f / (2.0 + f)
    w = s * s
    r = w * _horner(K["LOG"], w)
    hfsq = 0.5 * f * f
    return dk * K["LN2_HI"] - ((hfsq - (s * (hfsq + r) + dk * K["LN2_LO"])) - f)


def synthetic_exp(x: float) -> float:
    """e**x of csrc/synthetic.h for |x| <= 708: x = k ln 2 + r, k the nearest
    integer to x / ln 2; e**r = 1 + (r + r**2 P(r))."""
    K = synthetic_constants()
    rounder = 1.5 * 2.0 ** 52
    kd = (x * K["INV_LN2"] + rounder) - rounder
    r = (x - kd * K["LN2_HI"]) - kd * K["LN2_LO"]
    return (1.0 + (r + r * r * _horner(K["EXP"], r))) * 2.0 ** int(kd)


def synthetic_sincos_2pi(u: float) -> tuple[float, float]:
    """(sin 2 pi u, cos 2 pi u) of csrc/synthetic.h for u in [0, 1]: 4 u = n + f
    with n the nearest integer; the sine and cosine of pi f / 2 by S and C,
    rotated by the quarter turns n."""
    K = synthetic_constants()
    rounder = 1.5 * 2.0 ** 52
    t = 4.0 * u
    n = (t + rounder) - rounder
    f = t - n
    y = f * f
    sin_f, cos_f = f * _horner(K["SIN"], y), 1.0 + y * _horner(K["COS"], y)
    return {0: (sin_f, cos_f), 1: (cos_f, -sin_f), 2: (-sin_f, -cos_f),
            3: (-cos_f, sin_f)}[int(n) % 4]


def sponsored_search_request(seed: int, q: int, m: int, k: int, empty: float, short: float,
                             topics: int, per_topic: int, bid, ctr, noise: float = 0.3,
                             value: str = "click"):
    """Request q of the sponsored-search stream of ``seed`` by the recipe of
    csrc/synthetic.h, one Python float operation at a time: (list lengths of
    its m rewrites, [(ad, score, value, prerank)] of its instances)."""
    def uniform(stream):
        return (stream.next() >> 11) * 2.0 ** -53

    shape, draws = Stream(seed, 3 * q), Stream(seed, 3 * q + 1)
    clicks = Stream(seed, 3 * q + 2).state
    lengths = []
    for _ in range(m):
        u = uniform(shape)
        if u < empty:
            lengths.append(0)
        elif u < empty + short:
            lengths.append(1 + shape.below(max(k // 2, 1)))
        else:
            lengths.append(k)
    u = uniform(draws)
    home = min(int(topics * u * u), topics - 1)
    instances = []
    for i in range(m):
        drift = draws.below(topics)
        keep = 0.5 + 0.45 * uniform(draws)
        for _ in range(lengths[i]):
            on_topic = uniform(draws) < keep
            u = uniform(draws)
            rank = min(int(per_topic * u * math.sqrt(u)), per_topic - 1)
            ad = (home if on_topic else drift) * per_topic + rank
            u1, u2 = uniform(draws), uniform(draws)
            radius = math.sqrt(-2.0 * synthetic_log(1.0 - u1))   # 1 - u1 is exact
            sin_u2, cos_u2 = synthetic_sincos_2pi(u2)
            z1, z2 = radius * cos_u2, radius * sin_u2
            pctr = min(float(ctr[ad]) * synthetic_exp(noise * z1) * (1.0 if on_topic else 0.4),
                       1.0)
            score = float(bid[ad]) * pctr
            click = Stream(0, 0)
            click.state = clicks ^ _mix64(ad)
            earned = (score if value == "expected"
                      else float(bid[ad]) if uniform(click) < float(ctr[ad]) else 0.0)
            instances.append((ad, score, earned, synthetic_log(score) + 0.5 * z2))
    return lengths, instances


# --- verl's GRPO outcome advantage (trainers) ----------------------------------

def verl_grpo_outcome(scores, index, epsilon=1e-6, norm_adv_by_std=True) -> np.ndarray:
    """verl's ``compute_grpo_outcome_advantage`` on per-row scores, from its
    definition: group by ``index``; a group of one has mean 0 and sd 1,
    larger groups their mean and unbiased sd; A = (s - mean) / (sd + eps),
    or s - mean without the sd."""
    scores = [float(x) for x in scores]
    out = np.zeros(len(scores))
    for label in set(index):
        rows = [j for j, x in enumerate(index) if x == label]
        vals = [scores[j] for j in rows]
        if len(vals) == 1:
            mean, sd = 0.0, 1.0
        else:
            mean = sum(vals) / len(vals)
            sd = math.sqrt(sum((x - mean) ** 2 for x in vals) / (len(vals) - 1))
        for j in rows:
            out[j] = (scores[j] - mean) / (sd + epsilon) if norm_adv_by_std else scores[j] - mean
    return out


def verl_multi_turn(scores, uid, session, turn, epsilon=1e-6, norm_adv_by_std=True):
    """verl v1's multi-turn GRPO: each session's final row (the first with the
    largest turn) enters ``verl_grpo_outcome`` grouped by uid; every row of
    the session gets its final row's advantage."""
    final = {}
    for j, (s, t) in enumerate(zip(session, turn)):
        if s not in final or turn[final[s]] < t:
            final[s] = j
    rows = list(final.values())
    adv = verl_grpo_outcome([scores[j] for j in rows], [uid[j] for j in rows],
                            epsilon, norm_adv_by_std)
    of_session = {s: adv[k] for k, s in enumerate(final)}
    return np.array([of_session[s] for s in session])


# --- interactions -------------------------------------------------------------
# Every index straight from its definition over coalitions (discrete
# derivatives, marginal contributions, weighted least squares); no Moebius
# weights, no shapiq. Results are lists over orders k = 0..order of arrays in
# itertools.combinations order.

def subsets(m: int, k: int) -> list[int]:
    """The masks of the k-subsets of range(m) in lexicographic order."""
    return [sum(1 << i for i in c) for c in itertools.combinations(range(m), k)]


def discrete_derivative(v, s_mask: int, t_mask: int) -> float:
    """Delta_S v(T) = sum over L subset of S of (-1)^|S - L| v(T + L)."""
    return sum((-1) ** bin(s_mask & ~sub).count("1") * v[t_mask | sub]
               for sub in range(s_mask + 1) if sub & s_mask == sub)


def cardinal_index(v, order: int, weight, empty=None) -> list:
    """I(S) = sum over T subset of N - S of weight(|S|, |T|) Delta_S v(T) for
    1 <= |S| <= order (and S empty unless ``empty`` gives its value)."""
    v = np.asarray(v, dtype=np.float64)
    m = len(v).bit_length() - 1
    full = (1 << m) - 1
    out = []
    for k in range(order + 1):
        row = []
        for s in subsets(m, k):
            if k == 0 and empty is not None:
                row.append(empty)
                continue
            rest = full & ~s
            row.append(sum(weight(k, bin(t).count("1")) * discrete_derivative(v, s, t)
                           for t in range(rest + 1) if t & rest == t))
        out.append(np.array(row))
    return out


def sii(v, order: int) -> list:
    """Shapley interaction index (Grabisch & Roubens 1999)."""
    m = len(v).bit_length() - 1
    return cardinal_index(v, order, lambda s, t: math.factorial(m - s - t) * math.factorial(t)
                          / math.factorial(m - s + 1))


def bii(v, order: int) -> list:
    m = len(v).bit_length() - 1
    return cardinal_index(v, order, lambda s, t: 0.5 ** (m - s))


def chii(v, order: int) -> list:
    """Chaining interaction index (Marichal & Roubens 1999); S empty: v(0)."""
    m = len(v).bit_length() - 1
    return cardinal_index(v, order, lambda s, t: s / ((s + t) * math.comb(m, s + t)),
                          empty=float(v[0]))


def co_moebius(v, order: int) -> list:
    """Delta_S v(N - S); S empty: v(0)."""
    m = len(v).bit_length() - 1
    return cardinal_index(v, order, lambda s, t: float(t == m - s), empty=float(v[0]))


def moebius_orders(v, order: int) -> list:
    """Delta_S v(empty) = a(S) (S empty: v(0))."""
    return cardinal_index(v, order, lambda s, t: float(t == 0), empty=float(v[0]))


def stii(v, order: int) -> list:
    """Shapley-Taylor (Sundararajan et al. 2020): a(S) below the top order;
    at |S| = order, sum over T subset of N - S of order / (m C(m-1, |T|))
    Delta_S v(T)."""
    m = len(v).bit_length() - 1
    low = moebius_orders(v, order)
    top = cardinal_index(v, order, lambda s, t: order / (m * math.comb(m - 1, t))
                         if s == order else 0.0)
    return low[:order] + [top[order]]


def bernoulli_numbers(n: int) -> list[float]:
    """B_0..B_n, B_1 = -1/2 (by the recurrence sum_j C(n+1, j) B_j = 0)."""
    b = [1.0]
    for j in range(1, n + 1):
        b.append(-sum(math.comb(j + 1, i) * b[i] for i in range(j)) / (j + 1))
    return b


def k_sii(v, order: int) -> list:
    """k-SII: SII aggregated (Bordt & von Luxburg 2023): for 1 <= |S| <=
    order, sum over T superset of S, |T| <= order, of B_{|T|-|S|} SII(T)."""
    m = len(v).bit_length() - 1
    base = sii(v, order)
    b = bernoulli_numbers(order)
    pos = {s: (k, p) for k in range(order + 1) for p, s in enumerate(subsets(m, k))}
    out = [np.array([float(v[0])])] + [np.zeros(math.comb(m, k)) for k in range(1, order + 1)]
    for t, (kt, pt) in pos.items():
        for s, (ks, ps) in pos.items():
            if ks >= 1 and s & t == s:
                out[ks][ps] += b[kt - ks] * base[kt][pt]
    return out


def _design(m: int, order: int, column):
    """Rows: coalitions 0..2**m-1; columns: the subsets of size <= order."""
    cols = [s for k in range(order + 1) for s in subsets(m, k)]
    return np.array([[column(c, s) for s in cols] for c in range(1 << m)], dtype=np.float64)


def _fit(design, target, weights, exact_rows):
    """argmin sum_rows weights (target - design beta)^2 subject to the rows in
    ``exact_rows`` fitted exactly (KKT system, solved by least squares for
    the minimum-norm solution when rank deficient)."""
    w = np.sqrt(weights)
    a = design * w[:, None]
    if not exact_rows:      # least squares on the weighted rows (no normal equations)
        return np.linalg.lstsq(a, target * w, rcond=None)[0]
    c = design[exact_rows]
    n, q = design.shape[1], len(exact_rows)
    kkt = np.block([[a.T @ a, c.T], [c, np.zeros((q, q))]])
    rhs = np.concatenate([a.T @ (target * w), target[exact_rows]])
    return np.linalg.lstsq(kkt, rhs, rcond=None)[0][:n]


def _split(beta, m: int, order: int) -> list:
    out, at = [], 0
    for k in range(order + 1):
        out.append(np.array(beta[at:at + math.comb(m, k)]))
        at += math.comb(m, k)
    return out


def _shapley_kernel(m: int) -> np.ndarray:
    size = np.array([bin(c).count("1") for c in range(1 << m)])
    w = np.zeros(1 << m)
    inner = (size > 0) & (size < m)
    w[inner] = [1.0 / ((m - 1) * math.comb(m - 2, int(k) - 1)) for k in size[inner]]
    return w


def fsii(v, order: int, penalty=None) -> list:
    """Faith-Shap (Tsai, Yeh & Ravikumar 2023): the coefficients of the
    k-additive game nearest v in the Shapley-kernel weighted squares, v(0)
    and v(N) fitted exactly (or, with ``penalty``, weighted by it); S empty:
    v(0)."""
    v = np.asarray(v, dtype=np.float64)
    m = len(v).bit_length() - 1
    design = _design(m, order, lambda c, s: float(c & s == s))
    weights, exact = _shapley_kernel(m), [0, (1 << m) - 1]
    if penalty is not None:
        weights[exact], exact = penalty, []
    out = _split(_fit(design, v, weights, exact), m, order)
    out[0] = np.array([v[0]])
    return out


def fbii(v, order: int) -> list:
    """Faith-Banzhaf: the same fit with uniform weights and no constraint."""
    v = np.asarray(v, dtype=np.float64)
    m = len(v).bit_length() - 1
    design = _design(m, order, lambda c, s: float(c & s == s))
    return _split(_fit(design, v, np.ones(1 << m), []), m, order)


def kadd_shap(v, order: int, penalty=None) -> list:
    """kADD-SHAP (Pelegrina, Duarte & Grabisch 2023): the Shapley-kernel fit
    of v - v(0) by the k-additive games written in the interaction basis,
    column S at coalition C = sum_{l=1}^{|C & S|} C(|C & S|, l) B_{|S|-l},
    v(N) fitted exactly (or weighted by ``penalty``); S empty: v(0)."""
    v = np.asarray(v, dtype=np.float64)
    m = len(v).bit_length() - 1
    b = bernoulli_numbers(order)

    def column(c, s):
        j, k = bin(c & s).count("1"), bin(s).count("1")
        return sum(math.comb(j, l) * b[k - l] for l in range(1, j + 1))

    design = _design(m, order, column)
    weights, exact = _shapley_kernel(m), [(1 << m) - 1]
    if penalty is not None:
        weights[exact], exact = penalty, []
    out = _split(_fit(design, v - v[0], weights, exact), m, order)
    out[0] = np.array([v[0]])
    return out


def generalized_value(v, order: int, weight) -> list:
    """sum over T subset of N - S of weight(|S|, |T|) (v(T + S) - v(T)) for
    1 <= |S| <= order; S empty: v(0)."""
    v = np.asarray(v, dtype=np.float64)
    m = len(v).bit_length() - 1
    full = (1 << m) - 1
    out = [np.array([v[0]])]
    for k in range(1, order + 1):
        row = []
        for s in subsets(m, k):
            rest = full & ~s
            row.append(sum(weight(k, bin(t).count("1")) * (v[t | s] - v[t])
                           for t in range(rest + 1) if t & rest == t))
        out.append(np.array(row))
    return out


def joint_sv_weights(m: int, order: int) -> list[float]:
    """q_t of the joint Shapley value (Harris, Pymar & Rowat 2022, eq. (4)),
    t = 0..m-1."""
    q = [1.0 / sum(math.comb(m, j) for j in range(1, order + 1))]
    for r in range(1, m):
        q.append(sum(math.comb(r, j) * q[j] for j in range(max(r - order, 0), r))
                 / sum(math.comb(m - r, j) for j in range(1, min(order, m - r) + 1)))
    return q


def interaction_index(v, index: str, order: int) -> list:
    """Any index of fc.interactions, by name, from its definition."""
    m = len(v).bit_length() - 1
    gv = {"SGV": lambda s, t: 1.0 / ((m - s + 1) * math.comb(m - s, t)),
          "BGV": lambda s, t: 0.5 ** (m - s),
          "CHGV": lambda s, t: s / ((s + t) * math.comb(m, s + t)),
          "IGV": lambda s, t: float(t == 0),
          "EGV": lambda s, t: float(t == m - s)}
    if index in gv:
        return generalized_value(v, order, gv[index])
    if index == "JointSV":
        q = joint_sv_weights(m, order)
        return generalized_value(v, order, lambda s, t: q[t])
    if index == "SV":
        return [np.array([float(v[0])]), sii(v, 1)[1]]
    if index == "BV":
        return bii(v, 1)
    return {"SII": sii, "BII": bii, "CHII": chii, "Co-Moebius": co_moebius,
            "Moebius": moebius_orders, "STII": stii, "k-SII": k_sii, "FSII": fsii,
            "FBII": fbii, "kADD-SHAP": kadd_shap}[index](v, order)


def egalitarian_least_core(v):
    """shapiq's ELC program (min ||x|| + e, x(S) + e >= v(S) - v(0) for S
    other than 0 and N, x(N) = v(N) - v(0), e >= 0) handed to SLSQP with
    exact gradients and a tight tolerance; returns (x, e)."""
    from scipy.optimize import minimize
    v = np.asarray(v, dtype=np.float64)
    m = len(v).bit_length() - 1
    d = v - v[0]
    rows = [[float(s >> i & 1) for i in range(m)] + [1.0] for s in range(1, (1 << m) - 1)]
    a = np.array(rows).reshape(-1, m + 1)
    b = d[1:-1]

    def norm_plus_e(z):
        return np.linalg.norm(z[:m]) + z[m]

    def gradient(z):
        n = np.linalg.norm(z[:m])
        return np.r_[z[:m] / n if n > 0 else np.zeros(m), 1.0]

    cons = [{"type": "ineq", "fun": lambda z: a @ z - b, "jac": lambda z: a},
            {"type": "eq", "fun": lambda z: np.array([z[:m].sum() - d[-1]]),
             "jac": lambda z: np.r_[np.ones(m), 0.0][None]}]
    start = np.r_[np.full(m, d[-1] / m), max(0.0, float(np.max(b - a[:, :m].sum(1) * d[-1] / m,
                                                                 initial=0.0)))]
    res = minimize(norm_plus_e, start, jac=gradient, constraints=cons,
                   bounds=[(None, None)] * m + [(0, None)], method="SLSQP",
                   options={"ftol": 1e-15, "maxiter": 2000})
    return res.x[:m], res.x[m]


# --- paired inference and the correlated-error null (issue 32) ------------------

def bootstrap_spearman_diff(x, y, z, resamples: int, seed: int) -> np.ndarray:
    """Replicate r: the n indices of index_pairs(seed, r, n); Spearman's rho
    (scipy.stats.spearmanr, average ranks) of the resampled (x, z) minus that
    of (y, z), a constant signal scoring 0 and a constant z NaN."""
    from scipy.stats import spearmanr
    x, y, z = (np.asarray(v, dtype=np.float64) for v in (x, y, z))
    out = np.empty(resamples)
    for r in range(resamples):
        idx = index_pairs(seed, r, len(x))
        xs, ys, zs = x[idx], y[idx], z[idx]
        if np.all(zs == zs[0]):
            out[r] = np.nan
            continue
        rho = [0.0 if np.all(s == s[0]) else spearmanr(s, zs)[0] for s in (xs, ys)]
        out[r] = rho[0] - rho[1]
    return out


def correlated_error_null(train, audit, worlds: int, seed: int, atol: float):
    """Per world w and request r (requests whose audit table varies, sd > 0):
    the world's training table audit_r + s_r (train_d - audit_d) / s_d built
    whole, donor d from Stream(seed, w).below(n - 1) (+1 when >= r), drawn
    for r = 0..n-1 in turn; then, from that table and audit_r: edge hits
    over the nonzero audit edges, pair hits and counts over the pairs
    nonzero under both, the cosine of the centred Shapley vectors (0 for a
    constant world credit, NaN for an audit credit within atol of constant),
    and the
    normalised strength sum |I_audit| / s_r. Returns
    (edge_hits, edge_count, pair_hits, pair_count, cosine, strength)."""
    train, audit = np.asarray(train, float), np.asarray(audit, float)
    m = audit.shape[1].bit_length() - 1
    keep = audit.std(axis=1) > 0
    t, a = train[keep], audit[keep]
    s = a.std(axis=1)
    n = t.shape[0]

    def sign(x):
        return 1 if x > atol else (-1 if x < -atol else 0)

    def edges(v):
        return [v[S | 1 << i] - v[S] for i in range(m) for S in range(1 << m) if not S >> i & 1]

    def pairs(v):
        return [v[(1 << i) | (1 << j)] - v[1 << i] - v[1 << j] + v[0]
                for i in range(m) for j in range(i + 1, m)]

    def centred_shapley(v):
        phi = shapley(v)
        return phi - phi.mean()

    ae = [[sign(x) for x in edges(a[r])] for r in range(n)]
    ap = [[sign(x) for x in pairs(a[r])] for r in range(n)]
    af = [centred_shapley(a[r]) for r in range(n)]
    af = [f if np.abs(f).max() > atol else np.zeros_like(f) for f in af]
    out = [np.zeros((worlds, n), dtype=np.int64) for _ in range(3)] + [np.zeros((worlds, n))]
    for w in range(worlds):
        st = Stream(seed, w)
        for r in range(n):
            d = st.below(n - 1)
            d += d >= r
            v = a[r] + s[r] * (t[d] - a[d]) / s[d]
            te = [sign(x) for x in edges(v)]
            tp = [sign(x) for x in pairs(v)]
            out[0][w, r] = sum(x == y != 0 for x, y in zip(te, ae[r]))
            out[1][w, r] = sum(x == y and x != 0 for x, y in zip(tp, ap[r]))
            out[2][w, r] = sum(x != 0 and y != 0 for x, y in zip(tp, ap[r]))
            f = centred_shapley(v)
            na, nt = float(af[r] @ af[r]), float(f @ f)
            out[3][w, r] = np.nan if na == 0 else (0.0 if nt == 0 else
                                                   float(f @ af[r]) / np.sqrt(nt * na))
    edge_count = np.array([sum(x != 0 for x in row) for row in ae])
    strength = np.array([sum(abs(x) for x in pairs(a[r])) for r in range(n)]) / s
    return out[0], edge_count, out[1], out[2], out[3], strength


# --- replay repeats (issue 32, item 1) ----------------------------------------

def replay_repeats(v, repeats: int, noise: float, seed: int, first: int = 0) -> np.ndarray:
    """The replay-noise model of csrc/synthetic.h (fc_synthetic_replay_repeats)
    in plain Python: repeat r of row b draws u1, u2 per nonempty coalition in
    mask order from the stream keyed by (key(seed, first + b), r); y(S) =
    v(S) + noise * sqrt(-2 log(1 - u1)) cos(2 pi u2), y(empty) = v(empty)."""
    v = np.asarray(v, dtype=np.float64)
    B, n = v.shape
    out = np.empty((B, repeats, n))
    for b in range(B):
        request = Stream(seed, first + b).state
        for r in range(repeats):
            s = Stream(request, r)
            out[b, r, 0] = v[b, 0]
            for mask in range(1, n):
                u1 = (s.next() >> 11) * 2.0 ** -53
                u2 = (s.next() >> 11) * 2.0 ** -53
                rho = math.sqrt(-2.0 * synthetic_log(1.0 - u1))
                out[b, r, mask] = v[b, mask] + noise * (rho * synthetic_sincos_2pi(u2)[1])
    return out


# --- approximators (fastcredit.approximate; csrc/approximators.h) ------------

def _approx_uniform(stream) -> float:
    return (stream.next() >> 11) * (1.0 / 9007199254740992.0)


def _approx_pick(stream, p, k) -> int:
    """Partial Fisher-Yates: k of the list p; their mask."""
    mask = 0
    for j in range(k):
        r = stream.below(len(p) - j)
        p[j], p[j + r] = p[j + r], p[j]
        mask |= 1 << p[j]
    return mask


def approx_sample(method, seed, game, u, m, sizes=None, cdf=None, anchors=None):
    """(coalitions, stratum) of sample u: svarm one coalition (stratum None),
    stratified and owen (S, S + i) and the slot of (player, stratum)."""
    s = Stream(Stream(seed, game).state, u)
    if method == "svarm":
        x = _approx_uniform(s)
        size = next((k for k, c in zip(sizes, cdf) if x < c), sizes[-1])
        return [_approx_pick(s, list(range(m)), size)], None
    i = u % m
    if method == "stratified":
        size = (u // m) % m
        mask = _approx_pick(s, [j for j in range(m) if j != i], size)
        return [mask, mask | 1 << i], i * m + size
    a = (u // m) % len(anchors)
    mask = 0
    for j in range(m):
        if j != i and _approx_uniform(s) < anchors[a]:
            mask |= 1 << j
    return [mask, mask | 1 << i], i * len(anchors) + a


def _approx_border(m, budget):
    """shapiq's border trick on the weights 1 / (l (m - l))."""
    sizes = list(range(1, m))
    w = [1.0 / (k * (m - k)) for k in sizes]
    w = [x / sum(w) for x in w]
    left = min(budget, 2.0 ** m) - 2
    computed = []
    while sizes:
        move = [k for k, x in zip(sizes, w) if left * x >= math.comb(m, k)]
        if not move:
            break
        computed += move
        left -= sum(math.comb(m, k) for k in move)
        keep = [j for j, k in enumerate(sizes) if k not in move]
        sizes, w = [sizes[j] for j in keep], [w[j] for j in keep]
        w = [x / sum(w) for x in w] if w else w
    return sorted(computed), sizes, w


def approx_run(v, method, budget, seed, game=0, index="SV", n_anchors=10) -> dict:
    """fc.approximate on one table from the definitions: a dict memo, samples
    in order until one's new coalitions exceed the budget left, stratum
    means and variances by the statistics module."""
    import statistics
    v = np.asarray(v, dtype=np.float64)
    m = len(v).bit_length() - 1
    anchors = [0.5] if n_anchors == 1 else list(np.linspace(0.0, 1.0, n_anchors))
    if budget >= 1 << m:
        if method == "owen":
            w = [sum(q ** k * (1 - q) ** (m - 1 - k) for q in anchors) / len(anchors)
                 for k in range(m)]
            values = semivalue(v, w)
        else:
            values = shapley(v) if index == "SV" else banzhaf(v)
        return {"values": values, "stderr": np.zeros(m), "n_evals": 1 << m, "base": v[0]}
    memo = {}

    def ev(mask):
        if mask not in memo:
            memo[mask] = float(v[mask])
        return memo[mask]

    strata = {}
    v0 = ev(0)
    if method == "svarm":
        computed, sizes, w = _approx_border(m, budget)
        cdf = list(np.cumsum(w))
        if cdf:
            cdf[-1] = 2.0
        fixed = [0, (1 << m) - 1] + [mask for k in computed for mask in subsets(m, k)]
        for mask in fixed:
            ev(mask)
        census = set([0, m] + computed)

        def put(mask):
            size = bin(mask).count("1")
            for i in range(m):
                strata.setdefault((i, size, mask >> i & 1), []).append(ev(mask) - v0)

        for mask in fixed:
            put(mask)
    else:
        sizes = cdf = None
    u = 0
    while sizes != [] and u < 64 * budget:
        coalitions, slot = approx_sample(method, seed, game, u, m, sizes, cdf, anchors)
        new = list(dict.fromkeys(c for c in coalitions if c not in memo))
        if len(new) > budget - len(memo):
            break
        if method == "svarm":
            put(coalitions[0])
        else:
            strata.setdefault(slot, []).append(ev(coalitions[1]) - ev(coalitions[0]))
        u += 1

    def var(xs):
        return statistics.variance(xs) if len(xs) > 1 else math.inf

    values, stderr = np.zeros(m), np.zeros(m)
    if method == "svarm":
        p = [1 / (m * math.comb(m - 1, t)) if index == "SV" else 2.0 ** (1 - m)
             for t in range(m)]
        for i in range(m):
            total = se = 0.0
            for size in range(m + 1):
                for inside in (0, 1):
                    xs = strata.get((i, size, inside))
                    coef = (math.comb(m - 1, size - 1) * p[size - 1] if inside and size
                            else -math.comb(m - 1, size) * p[size] if not inside and size < m
                            else 0.0)
                    if xs and coef:
                        total += coef * statistics.fmean(xs)
                        se += 0.0 if size in census else coef ** 2 * var(xs) / len(xs)
            values[i], stderr[i] = total, math.sqrt(se)
    else:
        k = m if method == "stratified" else len(anchors)
        one = ({0, m - 1} if method == "stratified"
               else {a for a, q in enumerate(anchors) if q in (0.0, 1.0)})
        for i in range(m):
            full = [(j, strata[i * k + j]) for j in range(k) if i * k + j in strata]
            values[i] = sum(statistics.fmean(xs) for _, xs in full) / len(full)
            stderr[i] = math.sqrt(sum(0.0 if j in one else var(xs) / len(xs)
                                      for j, xs in full)) / len(full)
    return {"values": values, "stderr": stderr, "n_evals": len(memo), "base": v0}


# --- regression approximators (fc.approximate's kernelshap, kernelshapiq, ...) ------

def _bernoulli_numbers(n):
    from fractions import Fraction
    b = [Fraction(1)]
    for j in range(1, n + 1):
        b.append(-sum(math.comb(j + 1, i) * b[i] for i in range(j)) / (j + 1))
    return b


def regression_design(method, m, order):
    """shapiq 1.4.1's regression problem from its definitions: (c(t, j)
    coefficients, kernels mu_t(s) per fitted stage, default size weights,
    whether KernelSHAP-IQ's stages are used)."""
    big = 1e8
    b = _bernoulli_numbers(order)
    c = np.zeros((order + 1, order + 1))
    for t in range(order + 1):
        for j in range(t + 1):
            if method in ("regression_fsii", "regression_fbii"):
                c[t, j] = t == j
            elif method == "kaddshap":
                c[t, j] = float(sum(math.comb(j, l) * b[t - l] for l in range(j + 1)))
            elif t:
                c[t, j] = float(sum(math.comb(j, l) * b[t - l] for l in range(1, j + 1)))
    staged = method in ("kernelshap", "kernelshapiq")

    def mu(t):
        if method == "regression_fbii":
            return [2.0 ** -m] * (m + 1)
        return [big if s < t or s > m - t else
                1 / ((m - 2 * t + 1) * math.comb(m - 2 * t, s - t)) for s in range(m + 1)]

    kernels = [mu(t) for t in (range(1, order + 1) if staged else [1])]
    if method == "regression_fbii":
        w = [math.comb(m, s) / 2 ** m for s in range(m + 1)]
    else:
        w = [big if s < order or s > m - order else 1 / (s * (m - s)) for s in range(m + 1)]
    return c, kernels, [x / sum(w) for x in w], staged


def regression_border(m, budget, weights):
    sizes = [s for s in range(1, m) if weights[s] > 0]
    left = min(budget, 2 + sum(math.comb(m, s) for s in sizes)) - 2
    w = [weights[s] for s in sizes]
    w = [x / sum(w) for x in w] if w else w
    computed = [0, m]
    while sizes:
        move = [s for s, x in zip(sizes, w) if left * x >= math.comb(m, s)]
        if not move:
            break
        computed += move
        left -= sum(math.comb(m, s) for s in move)
        keep = [j for j, s in enumerate(sizes) if s not in move]
        sizes, w = [sizes[j] for j in keep], [w[j] for j in keep]
        w = [x / sum(w) for x in w] if w else w
    return sorted(set(computed)), sizes, w


def regression_run(v, method, index, order, budget, seed, game=0, pairing=False) -> dict:
    """fc.approximate's regression methods on one table from the
    definitions: the census and the draws (approx_sample's svarm stream, a
    dict memo, a sample ends the run when its new coalitions pass the budget
    left), the dense weighted least squares (numpy.linalg.solve of each
    stage), the sandwich standard errors from the per-sample influence rows,
    k-SII by its Bernoulli aggregation."""
    v = np.asarray(v, dtype=np.float64)
    m = len(v).bit_length() - 1
    c, kernels, weights, staged = regression_design(method, m, order)
    full = (1 << m) - 1
    interactions_ = [tuple(p) for t in range(order + 1)
                     for p in itertools.combinations(range(m), t)]
    cols = [j for j, T in enumerate(interactions_) if np.any(c[len(T)] != 0)]

    def x_row(mask):
        return np.array([c[len(T), sum(mask >> i & 1 for i in T)] for T in
                         (interactions_[j] for j in cols)])

    memo = {}

    def ev(mask):
        if mask not in memo:
            memo[mask] = float(v[mask])
        return memo[mask]

    computed, sizes, probs = regression_border(m, budget, weights)
    census = [mask for s in computed for mask in (subsets(m, s) if 0 < s < m else
                                                  [0 if s == 0 else full])]
    for mask in census:
        ev(mask)
    v0 = memo[0]
    cdf = list(np.cumsum(probs))
    if cdf:
        cdf[-1] = 2.0
    units = []
    u = 0
    while sizes and u < 64 * budget:
        (mask,), _ = approx_sample("svarm", seed, game, u, m, sizes, cdf)
        unit = [mask, mask ^ full] if pairing else [mask]
        new = list(dict.fromkeys(x for x in unit if x not in memo))
        if len(new) > budget - len(memo):
            break
        for mask in unit:
            ev(mask)
        units.append(unit)
        u += 1
    prob = {s: p for s, p in zip(sizes, probs)}
    drawn = [x for unit in units for x in unit if bin(x).count("1") in prob]
    n = len(drawn)
    p = len(cols)

    def weight(mask, stage, sampled):
        s = bin(mask).count("1")
        if not sampled:
            return kernels[stage][s]
        return kernels[stage][s] * math.comb(m, s) / prob[s] if s in prob else 0.0

    stage_cols = ([[a for a, j in enumerate(cols) if len(interactions_[j]) == t]
                   for t in range(1, order + 1)] if staged else [list(range(p))])
    normal = []
    for stage in range(len(kernels)):
        a, h = np.zeros((p, p)), np.zeros(p)
        for mask in census:
            x = x_row(mask)
            a += weight(mask, stage, False) * np.outer(x, x)
            h += weight(mask, stage, False) * x * (memo[mask] - v0)
        for mask in drawn:
            x = x_row(mask)
            a += weight(mask, stage, True) / n * np.outer(x, x)
            h += weight(mask, stage, True) / n * x * (memo[mask] - v0)
        normal.append((a, h))
    phi = np.zeros(p)
    for t, block in enumerate(stage_cols):
        a, h = normal[t if staged else 0]
        done = [j for b in stage_cols[:t] for j in b]
        rhs = h[block] - a[np.ix_(block, done)] @ phi[done]
        phi[block] = np.linalg.solve(a[np.ix_(block, block)], rhs)
    # influence rows: psi_u per sample, stage by stage
    psi = np.zeros((len(units), p))
    for t, block in enumerate(stage_cols):
        a, _ = normal[t if staged else 0]
        upto = [j for b in stage_cols[:t + 1] for j in b]
        done = [j for b in stage_cols[:t] for j in b]
        for k, unit in enumerate(units):
            g = np.zeros(len(block))
            for mask in unit:
                x = x_row(mask)
                r = memo[mask] - v0 - x[upto] @ phi[upto]
                g += weight(mask, t if staged else 0, True) * r * x[block]
            g -= a[np.ix_(block, done)] @ psi[k, done]
            psi[k, block] = np.linalg.solve(a[np.ix_(block, block)], g)

    def layout(z, base):
        out = np.zeros(len(interactions_))
        out[cols] = z
        if method not in ("regression_fbii",):
            out[0] = base
        else:
            out[0] += base
        if index == "k-SII":
            b = _bernoulli_numbers(order)
            agg = out.copy()
            for j, S in enumerate(interactions_):
                if S:
                    agg[j] = sum(float(b[len(T) - len(S)]) * out[i]
                                 for i, T in enumerate(interactions_) if set(S) <= set(T))
            out = agg
        return out

    values = layout(phi, v0)
    if len(units) >= 2:
        infl = np.array([layout(row, 0.0) for row in psi])
        stderr = np.sqrt(np.var(infl, axis=0, ddof=1) * len(units)) / n
    else:
        stderr = np.full(len(interactions_), np.inf if units else 0.0)
    return {"values": values, "stderr": stderr, "n_evals": len(memo), "base": v0}


# --- Monte-Carlo interaction approximators (fc.approximate's shapiq, svarmiq) ----

@functools.lru_cache(maxsize=16)
def _linear_coefficients(index: str, m: int, order: int) -> tuple:
    """c[s][p, T]: the index of the p-th subset of size s as sum_T c v(T), read
    off the index of each one-coalition game (it is linear in v)."""
    coef = [np.zeros((math.comb(m, s), 1 << m)) for s in range(order + 1)]
    for t in range(1 << m):
        e = np.zeros(1 << m)
        e[t] = 1.0
        res = interaction_index(e, index, order)
        for s in range(1, order + 1):
            coef[s][:, t] = res[s]
    return tuple(coef)


def montecarlo_iq_run(v, method, index, order, budget, seed, game=0, pairing=False) -> dict:
    """fc.approximate's "shapiq" (SHAP-IQ) and "svarmiq" (SVARM-IQ) on one
    table from the definitions: the index as sum_T c(S, T) (v(T) - v0) with c
    read off one-coalition games; shapiq's default size weights and border
    trick (regression_border); the draws of approx_sample's svarm stream (a
    dict memo, a sample ends the run when its new coalitions pass the budget
    left); SHAP-IQ the census sum plus the mean of the importance-weighted
    draws, SVARM-IQ the stratum means by (S, T & S, |T|); k-SII aggregated
    from SII with the Bernoulli numbers (SHAP-IQ: k-SII's own coefficients,
    the aggregated ones, summed over the draws)."""
    import statistics
    v = np.asarray(v, dtype=np.float64)
    m = len(v).bit_length() - 1
    full = (1 << m) - 1
    base = "SII" if index == "k-SII" else index
    coef = _linear_coefficients(base, m, order)
    if index == "FBII":
        w = [math.comb(m, s) / 2 ** m for s in range(m + 1)]
    else:
        w = [1e8 if s < order or s > m - order else 1 / (s * (m - s)) for s in range(m + 1)]
    computed, sizes, probs = regression_border(m, budget, [x / sum(w) for x in w])
    memo = {}

    def ev(mask):
        if mask not in memo:
            memo[mask] = float(v[mask])
        return memo[mask]

    census = [mask for s in computed for mask in subsets(m, s)]
    for mask in census:
        ev(mask)
    v0 = memo[0]
    cdf = list(np.cumsum(probs))
    if cdf:
        cdf[-1] = 2.0
    units, u = [], 0
    while sizes and u < 64 * budget:
        (mask,), _ = approx_sample("svarm", seed, game, u, m, sizes, cdf)
        unit = [mask, mask ^ full] if pairing else [mask]
        if len(set(x for x in unit if x not in memo)) > budget - len(memo):
            break
        for x in unit:
            ev(x)
        units.append(unit)
        u += 1
    prob = dict(zip(sizes, probs))
    subsets_ = [S for s in range(1, order + 1) for S in subsets(m, s)]
    rows = [coef[s][p] for s in range(1, order + 1) for p in range(math.comb(m, s))]
    values, stderr = np.zeros(len(subsets_)), np.zeros(len(subsets_))
    size = [bin(x).count("1") for x in range(1 << m)]
    # SHAP-IQ estimates k-SII with k-SII's own coefficients (so every order
    # has its variance): sum over S' ⊇ S of B_{|S'|-|S|} c(S', T)
    folds_k_sii = index == "k-SII" and method == "shapiq"
    if folds_k_sii:
        b = [float(x) for x in _bernoulli_numbers(order)]
        rows = [sum(b[size[S2] - size[S]] * c2 for S2, c2 in zip(subsets_, rows) if S2 & S == S)
                for S in subsets_]
    for j, (S, c) in enumerate(zip(subsets_, rows)):
        if method == "shapiq":
            exact = sum(c[T] * (memo[T] - v0) for T in census)
            ys = [sum(c[T] * math.comb(m, size[T]) / prob[size[T]] * (memo[T] - v0)
                      for T in unit) for unit in units]
            n = len(ys) * (2 if pairing else 1)
            values[j] = exact + (sum(ys) / n if ys else 0.0)
            stderr[j] = (math.sqrt(statistics.variance(ys) * len(ys)) / n if len(ys) > 1
                         else math.inf if sizes else 0.0)
            continue
        strata = {}
        for T in census + [x for unit in units for x in unit]:
            strata.setdefault((T & S, size[T]), []).append(memo[T] - v0)
        s = size[S]
        total = se = 0.0
        for (pattern, t), xs in strata.items():
            # c(S, T) depends on |T & S| and |T| only: any T of the stratum
            weight = c[next(T for T in range(1 << m) if T & S == pattern and size[T] == t)]
            k = weight * math.comb(m - s, t - size[pattern])
            total += k * statistics.fmean(xs)
            if t not in computed and k:
                se += k * k * (statistics.variance(xs) if len(xs) > 1 else math.inf) / len(xs)
        values[j], stderr[j] = total, math.sqrt(se)
    cuts = np.cumsum([math.comb(m, s) for s in range(1, order + 1)])[:-1]
    vals, errs = np.split(values, cuts), np.split(stderr, cuts)
    if index == "k-SII" and not folds_k_sii:
        b = [float(x) for x in _bernoulli_numbers(order)]
        agg = [x.copy() for x in vals]
        for s in range(1, order):
            for p, S in enumerate(subsets(m, s)):
                agg[s - 1][p] = sum(b[size[T] - s] * vals[size[T] - 1][q]
                                    for t in range(s, order + 1)
                                    for q, T in enumerate(subsets(m, t)) if T & S == S)
            errs[s - 1][:] = np.nan
        vals = agg
    return {"values": [np.array([v0])] + vals, "stderr": [np.zeros(1)] + errs,
            "n_evals": len(memo), "base": v0}


def tree_fourier(split_feature, left_child, right_child, node_start, leaf_value,
                 leaf_start) -> dict:
    """{frequency mask: coefficient}: the Fourier transform of a sum of trees
    over binary features (x_f = 0 left), as shapiq 1.4.1's
    ``Sparse._lgboost_tree_to_fourier``: a leaf is the constant {(): value};
    a split node on f has (L(I) + R(I)) / 2 at I and (L(I) - R(I)) / 2 at
    I + f, over the union I of its children's frequencies; the trees summed,
    zero sums left out."""
    total = {}
    for k in range(len(node_start) - 1):
        first, leaf = int(node_start[k]), int(leaf_start[k])

        def coefficients(child):
            if child < 0:
                return {0: float(leaf_value[leaf - child - 1])}
            left = coefficients(int(left_child[first + child]))
            right = coefficients(int(right_child[first + child]))
            bit = 1 << int(split_feature[first + child])
            out = {}
            for i in set(left) | set(right):
                lv, rv = left.get(i, 0.0), right.get(i, 0.0)
                out[i] = (lv + rv) / 2
                out[i | bit] = (lv - rv) / 2
            return out

        root = -1 if node_start[k + 1] == first else 0
        for i, c in coefficients(root).items():
            total[i] = total.get(i, 0.0) + c
    return {i: c for i, c in total.items() if c != 0.0}


# --- SPEX (fc.approximate(method="spex"); csrc/approximators.h spex_detect) ------

def _k_smallest_partial_sums(arr, k):
    """sparse_transform's k_smallest_partial_sums_with_indices, as written."""
    import heapq
    h = []
    heapq.heappush(h, (0, [0] * len(arr)))
    for i in range(len(arr)):
        current_min = h[0][0]
        to_add = []
        for x in h:
            if len(h) < k or x[0] - arr[i] >= current_min:
                to_add.append((x[0] - arr[i], [x[1][j] if j != i else 1 for j in range(len(x[1]))]))
        for el in to_add:
            heapq.heappush(h, el)
        if len(h) > k:
            h = heapq.nlargest(k, h)[::-1]
    return list(h)


def spex_run(v, budget: int, seed: int, game: int = 0, t: int = 5) -> dict:
    """SPEX (shapiq 1.4.1's, soft decoding) on one table from the
    definitions: the code's t falls while b <= 2; three subsampling matrices
    (n, b) from stream (key(seed, game), 0), bit q of the flat (3, n, b)
    array = bit q % 64 of draw q // 64; queries (M l + d) mod 2 (l's bits,
    most significant first; d the delay rows: 0, then the code's parity
    rows, fastcredit's BCHCode, checked against galois elsewhere); the
    transform by scipy's FFT over b axes of 2, /2^b; sparse_transform's
    multi-detect peeling in complex arithmetic, its Chase-2 decoder with its
    heap, decoding by the nearest codeword within distance t (bounded
    distance: all 2^n codewords); the Fourier coefficients summed per
    frequency. Returns {"fourier": {mask: coefficient}, "n_evals": distinct
    coalitions, "table": the sparse game's 2^n values}."""
    import heapq
    import scipy.fft
    from fastcredit.approximators.sparse import BCHCode
    v = np.asarray(v, dtype=np.float64)
    n = len(v).bit_length() - 1
    while True:
        code = BCHCode(n, t)
        rows = 3 * (code.parity_length + 1)
        b = int(np.floor(np.log(budget / rows) / np.log(2)))
        if b > 2 or t <= 2:
            break
        t -= 1
    delays = np.array(code.delay_matrix(), dtype=np.int64)
    r = code.parity_length
    st = Stream(Stream(seed, game).state, 0)
    words = [st.next() for _ in range(-(-3 * n * b // 64))]
    flat = [(words[q // 64] >> (q % 64)) & 1 for q in range(3 * n * b)]
    ms = [np.array(flat[g * n * b:(g + 1) * n * b]).reshape(n, b) for g in range(3)]
    points = np.array(list(itertools.product([0, 1], repeat=b))).T       # (b, 2^b)
    seen, us = set(), []
    for m_ in ms:
        u = []
        for d in delays:
            coal = (m_ @ points + d[:, None]) % 2                              # (n, 2^b)
            masks = [sum(int(coal[i, l]) << i for i in range(n)) for l in range(1 << b)]
            seen.update(masks)
            u.append(scipy.fft.fftn(v[masks].reshape([2] * b)).reshape(-1) / 2 ** b)
        us.append(np.array(u))
    messages = np.array(list(itertools.product([0, 1], repeat=n)))
    codewords = np.concatenate([messages, messages @ delays[1:].T % 2], axis=1)

    def decode(word):
        dist = (codewords != np.asarray(word)).sum(axis=1)
        best = int(np.argmin(dist))
        return (messages[best], int(dist[best])) if dist[best] <= code.t else \
            (np.asarray(word)[:n], -1)

    def chase(parity):
        hard = (np.array(parity) < 0).astype(int)
        cw, errors = decode(np.concatenate([np.zeros(n, int), hard]))
        if errors != -1:
            return cw
        depth = code.t
        idx = np.array(heapq.nsmallest(depth, range(r), key=lambda i: abs(parity[i])))
        patterns = [p[1] for p in reversed(_k_smallest_partial_sums(
            [abs(parity[i]) for i in idx], depth * (depth + 1) // 2))]
        found = [(cw, errors)]
        for pos in patterns:
            err = np.zeros(r, int)
            err[idx] = pos
            cw2, e2 = decode(np.concatenate([np.zeros(n, int), (hard + err) % 2]))
            if e2 != -1 and all(not (f[0] == cw2).all() for f in found[1:]):
                found.append((cw2, e2))
        found.sort(key=lambda x: x[1])
        return found[0][0] if len(found) == 1 else found[1][0]

    omega = np.exp(2j * np.pi / 2)
    to_check = [[True] * (1 << b) for _ in range(3)]
    peeled, history, result = set(), [0] * 100, []
    for it in range(100):
        singletons = {}
        for g in range(3):
            for j in range(1 << b):
                col = us[g][:, j]
                if np.linalg.norm(col) ** 2 > 1e-9 * len(col) and to_check[g][j]:
                    k = np.array(chase(list(np.real(col / col[0])[1:])), dtype=int)
                    sig = omega ** (delays @ k)
                    rho = np.dot(np.conjugate(sig), col) / len(col)
                    res = col - rho * sig
                    j_bits = [(j >> (b - 1 - p)) & 1 for p in range(b)]
                    ok = (np.linalg.norm(res) ** 2 / np.linalg.norm(col) ** 2 < 0.9
                          and np.all(ms[g].T @ k % 2 == j_bits))
                    if ok:
                        singletons[(g, j)] = (k, rho)
                    else:
                        to_check[g][j] = False
                else:
                    to_check[g][j] = False
        go_on = any(any(row) for row in to_check)
        if it >= 15 and history[it - 1] == history[it - 15]:
            go_on = False
        values, counts = {}, {}
        for k, rho in singletons.values():
            ball = tuple(k)
            c = counts.get(ball, 0)
            values[ball] = (values[ball] * c + rho) / (c + 1) if c else rho
            counts[ball] = c + 1
        for ball, rho in values.items():
            k = np.array(ball)
            result.append((ball, rho))
            peeled.add(ball)
            for g in range(3):
                j = int("".join(str(x) for x in ms[g].T @ k % 2), 2)
                us[g][:, j] -= rho * omega ** (delays @ k)
                to_check[g][j] = True
        history[it] = len(peeled)
        if not go_on:
            break
    fourier = {}
    for ball, rho in result:
        mask = sum(1 << i for i, x in enumerate(ball) if x)
        fourier[mask] = fourier.get(mask, 0.0) + float(np.real(rho))
    table = np.array([sum(c * (-1) ** bin(s & mask).count("1") for mask, c in fourier.items())
                      for s in range(1 << n)])
    return {"fourier": fourier, "n_evals": len(seen), "table": table}
