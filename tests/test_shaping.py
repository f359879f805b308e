import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fastcredit as fc
import reference as ref

from conftest import BACKENDS


def random_rows(rng, n, m, scale=2.0):
    return rng.normal(scale=scale, size=(n, m))


def kkt_violation(u, z, lower, upper, total, weights=None):
    """Largest violation of the optimality conditions of the weighted box
    projection: sum w z = total, lower <= z <= upper, and one tau with
    z_i = u_i - tau on free coordinates, u_i - tau >= upper_i where z is at
    the upper bound and <= lower_i where it is at the lower bound."""
    w = np.ones_like(u) if weights is None else weights
    lower, upper = np.broadcast_to(lower, u.shape), np.broadcast_to(upper, u.shape)
    scale = 1.0 + np.abs(u).max() + abs(total)
    worst = abs((w * z).sum() - total) / scale
    worst = max(worst, (lower - z).max() / scale, (z - upper).max() / scale)
    free = (z > lower) & (z < upper) & (w > 0)
    if free.any():
        taus = (u - z)[free]
        tau = taus.mean()
        worst = max(worst, np.ptp(taus) / scale)
        at_up = (z == upper) & (w > 0) & (lower < upper)
        at_lo = (z == lower) & (w > 0) & (lower < upper)
        worst = max(worst, ((upper - (u - tau))[at_up]).max(initial=0) / scale,
                    (((u - tau) - lower)[at_lo]).max(initial=0) / scale)
    return worst


@pytest.mark.parametrize("m", [1, 2, 5, 17, 64])
def test_projection_matches_bisection_reference(backend, rng, m):
    u = random_rows(rng, 40, m)
    kappa = rng.uniform(0.05, 2.0, size=40)
    total = rng.uniform(-1, 1, size=40) * m * kappa
    z = fc.project_zero_sum(u, kappa, total, backend=backend)
    assert_rows_match_reference(u, z, -kappa, kappa, total)


def lane_rows(rng, n, m, lo, hi):
    """n rows of m values for the projection onto [lo, hi] (per-row arrays)
    with sum z = total: most rows clip (the breakpoint segment is searched), rows 3 and 12
    clip nothing (u - tau is the answer), row 5 holds NaN (its lane is
    redone row by row and must come out all NaN)."""
    u = random_rows(rng, n, m)
    alpha = rng.uniform(0.05, 0.95, size=n)
    total = m * (alpha * lo + (1 - alpha) * hi)
    mid = total / m
    for r in (3, 12):   # spread small enough to stay inside the box around the mean
        half = 0.4 * min(mid[r] - lo[r], hi[r] - mid[r])
        u[r] = rng.uniform(-half, half, size=m) + 7.0
    u[5, m // 2] = np.nan
    return u, total


def assert_rows_match_reference(u, z, lo, hi, total, nan_rows=()):
    """Each row of z against the bisection oracle and the KKT conditions;
    rows in nan_rows must be all NaN."""
    for r in range(u.shape[0]):
        if r in nan_rows:
            assert np.isnan(z[r]).all(), f"row {r}"
            continue
        expect = ref.project_box(u[r], lo[r], hi[r], total=total[r])
        np.testing.assert_allclose(z[r], expect, rtol=0, atol=1e-12 * (1 + np.abs(u[r]).max()),
                                   err_msg=f"row {r}")
        assert kkt_violation(u[r], z[r], lo[r], hi[r], total[r]) < 1e-13, f"row {r}"


@pytest.mark.parametrize("m", range(1, 9))
def test_lanes_path_with_asymmetric_bounds_matches_reference(backend, rng, m, path):
    # csrc/shaping.c projects rows of m <= 8 with unit weights and one bound
    # pair per row 8 (AVX-512) or 4 at a time (shaping_lanes.inc, f at every
    # breakpoint); 19 rows = whole groups and a 3-row tail through
    # project_row. Scalar lower/upper (bounds
    # shared by every row) and per-row totals take that path; unequal
    # |lower| and |upper| catch a lane step that confuses the two.
    n = 19
    lo, hi = np.full(n, -0.3), np.full(n, 1.7)
    u, total = lane_rows(rng, n, m, lo, hi)
    z = fc.project_zero_sum(u, lower=-0.3, upper=1.7, total=total, backend=backend)
    assert_rows_match_reference(u, z, lo, hi, total, nan_rows=(5,))


@pytest.mark.parametrize("m", range(1, 9))
def test_lanes_path_with_per_row_asymmetric_bounds(backend, rng, m, path):
    # The C ABI's one-bound-pair-per-row form (bound_row_stride 1,
    # bound_col_stride 0: the lanes path), with a different asymmetric box
    # on every row; called on the twins directly since the public
    # lower/upper take per-coordinate bounds (per-row bounds there are
    # kappa, symmetric).
    from fastcredit._backend import kernels
    n = 19
    lo = -rng.uniform(0.05, 1.0, size=n)
    hi = rng.uniform(0.2, 2.5, size=n)
    u, total = lane_rows(rng, n, m, lo, hi)
    z = np.full((n, m), 99.0)
    kernels("shaping", backend).project_box(u, lo, hi, 1, 0, None, 0, total, 1, z)
    assert_rows_match_reference(u, z, lo, hi, total, nan_rows=(5,))
    # per-row symmetric boxes through the public API take the same path
    kappa = rng.uniform(0.1, 1.5, size=n)
    total = rng.uniform(-0.9, 0.9, size=n) * m * kappa
    z = fc.project_zero_sum(u, kappa, total, backend=backend)
    assert_rows_match_reference(u, z, -kappa, kappa, total, nan_rows=(5,))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("m", range(1, 10))
def test_lane_groups_and_row_path_agree_bit_for_bit(rng, m, dtype, path):
    # A row's result must not depend on where it falls: in a group of 8
    # (AVX-512, every path: conftest's `path`) or 4 lanes, in the tail projected row by row, or in the
    # Numba twin's blocks. Shifting the rows by one moves every row to
    # another lane or into the tail. Integer values make f hit total exactly
    # at breakpoints (the flat case) on some rows.
    n = 45
    kappa = rng.uniform(0.1, 1.5, size=n)
    total = rng.uniform(-0.9, 0.9, size=n) * m * kappa
    u = np.concatenate([rng.normal(size=(n - 15, m)),
                        rng.integers(-3, 4, size=(15, m)).astype(float)]).astype(dtype)
    total[-15:] = 0.0
    z = {b: fc.project_zero_sum(u, kappa, total, backend=b) for b in BACKENDS}
    for b in BACKENDS:
        np.testing.assert_array_equal(z[b], z[BACKENDS[0]], err_msg=b)
        shifted = fc.project_zero_sum(u[1:], kappa[1:], total[1:], backend=b)
        np.testing.assert_array_equal(shifted, z[b][1:], err_msg=b)


@pytest.mark.parametrize("m", [1, 3, 5, 8])
def test_lanes_keep_signed_zeros_bit_for_bit(rng, m, path):
    # assert_array_equal takes -0.0 == 0.0; the bit patterns must agree too,
    # in the lanes and row by row: kappa 0 (bounds -0.0 and +0.0) clips
    # everything to a zero whose sign comes from the select order, and rows
    # of +-0 and tiny values give zero results of either sign
    n = 27
    u = rng.choice([0.0, -0.0, 1e-310, -1e-310, 0.5, -0.5], size=(n, m))
    kappa = rng.choice([0.0, 0.25, 1.0], size=n)
    got = {}
    for b in BACKENDS:
        z = fc.project_zero_sum(u, kappa, backend=b)
        shifted = fc.project_zero_sum(u[3:], kappa[3:], backend=b)
        np.testing.assert_array_equal(shifted.view(np.int64), z[3:].view(np.int64), err_msg=b)
        got[b] = z.view(np.int64)
    for b in BACKENDS:
        np.testing.assert_array_equal(got[b], got[BACKENDS[0]], err_msg=b)


@pytest.mark.parametrize("m", [2, 5, 8])
def test_numba_lanes_take_any_layout_of_u(rng, m):
    # Users' jitted code may hand the Numba kernel a view for u: the lanes
    # then gather instead of moving whole rows, with the same bits
    from fastcredit._backend import kernels
    n = 21
    a = rng.normal(size=(n, m))
    lo, hi = np.full(n, -0.4), np.full(n, 0.9)
    total = rng.uniform(-0.3, 0.3, size=n) * m
    expect = np.empty((n, m))
    kernels("shaping", BACKENDS[0]).project_box(a, lo, hi, 1, 0, None, 0, total, 1, expect)
    for u in (np.repeat(a, 2, axis=1)[:, ::2], np.asfortranarray(a)):
        z = np.empty((n, m))
        kernels("shaping", "numba").project_box(u, lo, hi, 1, 0, None, 0, total, 1, z)
        np.testing.assert_array_equal(z.view(np.int64), expect.view(np.int64))


def test_general_bounds_and_weights_match_reference(backend, rng):
    n, m = 60, 7
    u = random_rows(rng, n, m)
    lower = -rng.uniform(0, 1.5, size=(n, m))
    upper = rng.uniform(0, 1.5, size=(n, m))
    weights = rng.integers(0, 6, size=(n, m)).astype(float)
    weights[:, 0] += 1   # keep every row's weight sum positive
    alpha = rng.uniform(0, 1, size=n)
    total = (alpha * (weights * lower).sum(1) + (1 - alpha) * (weights * upper).sum(1))
    z = fc.project_zero_sum(u, lower=lower, upper=upper, weights=weights, total=total,
                            backend=backend)
    for r in range(n):
        assert kkt_violation(u[r], z[r], lower[r], upper[r], total[r], weights[r]) < 1e-13
        active = weights[r] > 0
        expect = ref.project_box(u[r], lower[r], upper[r], weights[r], total[r])
        np.testing.assert_allclose(z[r][active], expect[active], atol=1e-12)


def test_simplex_projection(backend):
    # lower = 0, upper open, total = 1: the Euclidean projection onto the
    # probability simplex; [0.5, 1, 0] -> tau = 0.25 -> [0.25, 0.75, 0].
    z = fc.project_zero_sum([0.5, 1.0, 0.0], lower=0.0, total=1.0, backend=backend)
    np.testing.assert_allclose(z, [0.25, 0.75, 0.0], atol=1e-15)


@pytest.mark.parametrize("m", [5, 40])
def test_sorted_search_path(backend, rng, m):
    # sum(u) overflows to inf, so neither the fast path nor the Newton steps
    # run and the sorted breakpoint search (insertion sort for 10
    # breakpoints, qsort for 80) decides alone: the two huge coordinates sit
    # at +kappa and the rest is the projection of the others onto total -2.
    u = np.concatenate([[1e308, 1e308], rng.normal(size=m - 2)])
    z = fc.project_zero_sum(u, 1.0, backend=backend)
    assert z[0] == z[1] == 1.0
    np.testing.assert_allclose(z[2:], ref.project_box(u[2:], -1.0, 1.0, total=-2.0),
                               atol=1e-12)


def test_zero_weights(backend):
    # all weights 0 (e.g. a completion with no action tokens) with total 0:
    # every z is optimal; the projection then clips u (tau = 0).
    z = fc.project_zero_sum(np.array([[3.0, -0.5, 0.2]]), 1.0, weights=np.zeros(3),
                            backend=backend)
    np.testing.assert_array_equal(z, [[1.0, -0.5, 0.2]])
    # a zero-weight coordinate does not enter the sum constraint
    z = fc.project_zero_sum(np.array([[2.0, 1.0, 9.0]]), 5.0, weights=[1.0, 1.0, 0.0],
                            backend=backend)
    np.testing.assert_allclose(z[0, :2], [0.5, -0.5])
    assert z[0, 2] == 5.0


INF = np.inf

# Zero weights can leave a whole range of tau optimal (f = total on an
# interval where every coordinate of positive weight is clipped); z then
# differs only in the zero-weight coordinates, and the documented tau is the
# point of the range nearest 0 (csrc/shaping.h). (u, weights, lower, upper,
# total, z).
ZERO_WEIGHT_TIES = {
    # all weights 0, no bound: every tau is a root -> tau = 0, z = u
    "unbounded": ([0.0, 3.0], [0.0, 0.0], -INF, INF, 0.0, [0.0, 3.0]),
    # z_1 = 1 for every tau <= 4, the fast path's root -> tau = 0
    "half_line": ([0.0, 5.0], [0.0, 1.0], [-INF, 0.0], [INF, 1.0], 1.0, [0.0, 1.0]),
    # total at the lower end of its range: f = total for tau >= 2.9 (f at the
    # breakpoint 3 - 0.1 rounds above total) -> tau = 2.9
    "flat_tail": ([0.0, 3.0, -10.0], [0.0, 1.0, 1.0], [-INF, 0.1, 0.0], [INF, INF, 0.0], 0.1,
                  [-2.9, 0.1, 0.0]),
    # free intervals (-3, -2) and (4, 5): f = 0 + 1 on the gap [-2, 4] -> tau = 0
    "gap_around_0": ([-2.0, 5.0, 7.0], [1.0, 1.0, 0.0], [0.0, 0.0, -INF], [1.0, 1.0, INF], 1.0,
                     [0.0, 1.0, 7.0]),
    # the same shifted: the gap [3, 9] -> tau = 3
    "gap_right_of_0": ([3.0, 10.0, 7.0], [1.0, 1.0, 0.0], [0.0, 0.0, -INF], [1.0, 1.0, INF],
                       1.0, [0.0, 1.0, 4.0]),
    # the range is [-0.5, inf); the Newton steps settle one ulp below -0.5,
    # inside the free interval (-1.5, -0.5) of coordinate 3 -> tau = 0
    "newton_rounding": ([-1.25, -1.5, 3.25, 0.375, 1.0], [1.5, 0.75, 0.0, 1.5, 0.0],
                        [0.25, -0.625, -0.625, 0.875, 0.625], [1.5, 0.75, 0.875, 1.875, INF],
                        1.21875, [0.25, -0.625, 0.875, 0.875, 1.0]),
}


@pytest.mark.parametrize("case", list(ZERO_WEIGHT_TIES))
def test_zero_weight_ties_take_tau_nearest_0(backend, case):
    u, w, lo, hi, total, want = ZERO_WEIGHT_TIES[case]
    z = fc.project_zero_sum(np.array(u), lower=lo, upper=hi, weights=w, total=total,
                            backend=backend)
    np.testing.assert_allclose(z, want, rtol=0, atol=1e-15)
    np.testing.assert_allclose(z, ref.project_box(u, lo, hi, w, total), rtol=0, atol=1e-12)
    # the same row among others (row by row, no interplay), float32 u too
    rows = np.array([u] * 9)
    rows[4] = np.array(u) + 0.5
    many = fc.project_zero_sum(rows, lower=lo, upper=hi, weights=w, total=total,
                               backend=backend)
    np.testing.assert_array_equal(many[[0, 8]], [z, z])
    np.testing.assert_allclose(many[4], ref.project_box(rows[4], lo, hi, w, total), rtol=0,
                               atol=1e-12)
    if all(float(np.float32(x)) == x for x in u):
        np.testing.assert_array_equal(
            fc.project_zero_sum(np.array(u, dtype=np.float32), lower=lo, upper=hi, weights=w,
                                total=total, backend=backend), z)


DYADIC = st.integers(-40, 40).map(lambda k: k / 8)


@st.composite
def zero_weight_rows(draw):
    """A row with zero weights among others and infinite bounds, and a total
    at either end of its feasible range or inside it; every value a multiple
    of 1/8 and every weight of 1/4, so all sums are exact and the ranges of
    tau where f = total are the exact ones (for the oracle and the kernels
    alike)."""
    m = draw(st.integers(1, 7))
    u = [draw(DYADIC) for _ in range(m)]
    w = [draw(st.sampled_from([0.0, 0.0, 0.25, 1.0, 1.5, 3.0])) for _ in range(m)]
    lo, hi = [], []
    for _ in range(m):
        a = draw(st.one_of(st.just(-INF), DYADIC))
        lo.append(a)
        hi.append(draw(st.one_of(st.just(INF), DYADIC)) if a == -INF
                  else a + draw(st.sampled_from([0.0, 0.125, 0.5, 1.0, 2.5, INF])))
    low = sum(wi * a for wi, a in zip(w, lo) if wi > 0)
    high = sum(wi * b for wi, b in zip(w, hi) if wi > 0)
    where = draw(st.sampled_from(["low", "high", "inside"]))
    step = draw(st.integers(0, 8)) / 8
    if not any(wi > 0 for wi in w):
        total = 0.0
    elif math.isfinite(low) and math.isfinite(high):
        total = {"low": low, "high": high, "inside": low + step * (high - low)}[where]
    elif math.isfinite(low):
        total = low if where == "low" else low + 8 * step
    elif math.isfinite(high):
        total = high if where == "high" else high - 8 * step
    else:
        total = draw(DYADIC)
    return np.array(u), w, lo, hi, total


@settings(max_examples=150, deadline=None)
@given(zero_weight_rows())
def test_zero_weight_projection_property(row):
    u, w, lo, hi, total = row
    expect = ref.project_box(u, lo, hi, w, total)
    finite = [abs(x) for x in lo + hi if math.isfinite(x)]
    tol = 1e-9 * (1 + np.abs(u).max() + abs(total) + max(finite, default=0.0))
    z = {b: fc.project_zero_sum(u, lower=lo, upper=hi, weights=w, total=total, backend=b)
         for b in BACKENDS}
    for b in BACKENDS:
        np.testing.assert_allclose(z[b], expect, rtol=0, atol=tol, err_msg=b)
        np.testing.assert_array_equal(z[b], z[BACKENDS[0]], err_msg=b)


def test_per_coordinate_shared_bounds(backend):
    u = np.array([[2.0, -2.0, 0.0], [0.0, 0.0, 0.0]])
    z = fc.project_zero_sum(u, lower=[-1.0, -0.5, -3.0], upper=[0.5, 1.0, 3.0],
                            backend=backend)
    # row 0: tau = 0 clips coordinates 0 and 1 to 0.5 and -0.5, z2 = 0: sum 0.
    np.testing.assert_allclose(z, [[0.5, -0.5, 0.0], [0.0, 0.0, 0.0]], atol=1e-15)


def test_float32_input_is_widened(backend, rng):
    u = random_rows(rng, 50, 5).astype(np.float32)
    np.testing.assert_array_equal(fc.project_zero_sum(u, 0.6, backend=backend),
                                  fc.project_zero_sum(u.astype(np.float64), 0.6,
                                                      backend=backend))


def test_edge_cases(backend):
    p = lambda *a, **k: fc.project_zero_sum(*a, **k, backend=backend)  # noqa: E731
    assert np.array_equal(p(np.array([[3.0, -1.0, 7.0]]), 0.0), np.zeros((1, 3)))
    np.testing.assert_allclose(p(np.array([[5.0]]), 1.0, 0.25), [[0.25]])
    # ties: equal u share the total equally
    np.testing.assert_allclose(p(np.full((1, 4), 3.0), 1.0, 2.0), [[0.5] * 4])
    # everything clipped: total at the upper bound forces every z_i = kappa
    np.testing.assert_allclose(p(np.array([[-9.0, 0.0, 4.0]]), 0.5, 1.5), [[0.5] * 3])
    np.testing.assert_allclose(p(np.array([[-9.0, 0.0, 4.0]]), 0.5, -1.5), [[-0.5] * 3])
    # ties at the clipping boundary
    np.testing.assert_allclose(p(np.array([[1.0, 1.0, -1.0, -1.0]]), 1.0), [[1, 1, -1, -1]])
    np.testing.assert_allclose(p(np.array([[2.0, 2.0, -1.0, -1.0]]), 1.0), [[1, 1, -1, -1]])
    # kappa = inf: plain centering
    np.testing.assert_allclose(p(np.array([[1.0, 2.0, 6.0]]), np.inf), [[-2, -1, 3]])


@pytest.mark.parametrize("scale", [1e-300, 1e-150, 1e150, 1e300])
def test_huge_and_tiny_magnitudes_scale_exactly(backend, rng, scale):
    u = random_rows(rng, 30, 5)
    base = fc.project_zero_sum(u, 0.8, backend=backend)
    # multiplying by a power of two is exact, so the projection must commute
    s = 2.0 ** np.round(np.log2(scale))
    scaled = fc.project_zero_sum(u * s, 0.8 * s, backend=backend)
    np.testing.assert_allclose(scaled / s, base, rtol=1e-14, atol=1e-14)


def test_nan_row_propagates_alone(backend):
    u = np.array([[1.0, np.nan, 0.0], [1.0, -1.0, 3.0], [np.inf, 0.0, 0.0]])
    z = fc.project_zero_sum(u, 1.0, backend=backend)
    assert np.isnan(z[0]).all() and np.isnan(z[2]).all()
    np.testing.assert_allclose(z[1], [0.0, -1.0, 1.0], atol=1e-15)


def test_batch_shape_per_row_kappa_total_and_threads(backend, rng):
    u = rng.normal(size=(3, 40000, 5))
    kappa = rng.uniform(0.1, 1, size=(3, 40000))
    total = rng.uniform(-0.5, 0.5, size=(3, 40000)) * kappa
    one = fc.project_zero_sum(u, kappa, total, threads=1, backend=backend)
    two = fc.project_zero_sum(u, kappa, total, threads=2, backend=backend)
    assert one.shape == u.shape and np.array_equal(one, two)
    np.testing.assert_allclose(one.sum(-1), total, atol=1e-12)
    assert (np.abs(one) <= kappa[..., None]).all()
    out = np.empty_like(u)
    assert fc.project_zero_sum(u, kappa, total, out=out, backend=backend) is out


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=9),
       st.floats(0, 1e3), st.floats(-1, 1))
def test_kkt_property(u, kappa, frac):
    u = np.array(u)
    total = frac * kappa * len(u)
    for backend in BACKENDS:
        z = fc.project_zero_sum(u, kappa, total, backend=backend)
        assert kkt_violation(u, z, -kappa, kappa, total) < 1e-12


def test_projection_errors():
    u = np.zeros((4, 3))
    with pytest.raises(ValueError, match=r"kappa must be >= 0.*row 2"):
        fc.project_zero_sum(u, np.array([1.0, 1.0, -0.5, 1.0]))
    with pytest.raises(ValueError, match=r"infeasible projection at row 1"):
        fc.project_zero_sum(u, 1.0, np.array([0.0, 3.5, 0.0, 0.0]))
    with pytest.raises(ValueError, match=r"infeasible"):
        fc.project_zero_sum(u, lower=0.0, upper=1.0, total=-0.1)
    with pytest.raises(ValueError, match="lower <= upper"):
        fc.project_zero_sum(u, lower=[0.0, 2.0, 0.0], upper=1.0, total=1.0)
    with pytest.raises(ValueError, match="kappa or lower/upper, not both"):
        fc.project_zero_sum(u, 1.0, lower=0.0)
    with pytest.raises(TypeError, match="kappa or lower/upper"):
        fc.project_zero_sum(u)
    with pytest.raises(ValueError, match="kappa must be a scalar or have shape"):
        fc.project_zero_sum(u, np.ones(3))
    with pytest.raises(ValueError, match="weights must be finite and >= 0"):
        fc.project_zero_sum(u, 1.0, weights=[1.0, -1.0, 1.0])
    with pytest.raises(ValueError, match="weights must have shape"):
        fc.project_zero_sum(u, 1.0, weights=2.0)
    with pytest.raises(ValueError, match="total must be finite"):
        fc.project_zero_sum(u, 1.0, np.array([0, np.nan, 0, 0]))
    with pytest.raises(ValueError, match=r"u must have shape \(..., m\)"):
        fc.project_zero_sum(np.zeros((3, 0)), 1.0)
    with pytest.raises(TypeError, match="u must be a real"):
        fc.project_zero_sum(np.array(["a", "b"]), 1.0)
    with pytest.raises(TypeError, match="out must have dtype float64"):
        fc.project_zero_sum(u, 1.0, out=np.empty((4, 3), np.float32))
    with pytest.raises(ValueError, match="backend must be"):
        fc.project_zero_sum(u, 1.0, backend="gpu")


# --- group advantages -------------------------------------------------------

def test_group_advantages_trl_worked_example():
    # TRL GRPOTrainer: rewards viewed (-1, num_generations); advantages =
    # (r - mean) / (std + 1e-4) with torch's unbiased std. Group [1, 0]:
    # mean 0.5, std sqrt(0.5) = 0.70711, so +-0.5 / 0.70721 = +-0.70700.
    adv = fc.group_advantages(np.array([1.0, 0.0, 3.0, 3.0, 3.0, 3.0]), group_size=2)
    np.testing.assert_allclose(adv, [0.5 / (np.sqrt(0.5) + 1e-4), -0.5 / (np.sqrt(0.5) + 1e-4),
                                     0, 0, 0, 0], rtol=1e-15)


def test_group_advantages_match_reference(rng):
    r = rng.normal(size=24)
    r[[3, 10]] = np.nan
    ids = rng.integers(0, 7, size=24)
    for scale in ("group", "batch", "none"):
        np.testing.assert_allclose(fc.group_advantages(r, groups=ids, scale=scale),
                                   ref.group_advantages(r, list(ids), scale=scale),
                                   rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(fc.group_advantages(r, 4, eps=1e-6),
                               ref.group_advantages(r, list(np.arange(24) // 4), eps=1e-6),
                               rtol=1e-13)


@pytest.mark.parametrize("scale", ["group", "batch", "none"])
def test_an_infinite_reward_makes_its_group_nan(scale):
    """Issue 26, defect 6: with scale="none" the group [nan, 1] | [inf, 0]
    gave [-0.5, 0.5, nan, -inf], the finite member -inf, while the docstring
    says an infinite reward makes its group NaN; with scale="batch" the
    batch has no sd and every group of several is NaN."""
    got = fc.group_advantages(np.array([np.nan, 1, np.inf, 0]), 2, scale=scale)
    want = {"group": [-1 / (np.sqrt(0.5) + 1e-4) / 2, 1 / (np.sqrt(0.5) + 1e-4) / 2],
            "batch": [np.nan, np.nan], "none": [-0.5, 0.5]}[scale]
    np.testing.assert_allclose(got, want + [np.nan, np.nan], rtol=1e-15)
    # -inf, two infinities, an infinite reward alone (the singleton rule)
    r = np.array([np.nan, 1.0, np.inf, 0.0, -np.inf, 2.0, np.inf, np.inf, 4.0, 5.0, np.inf])
    ids = [0, 0, 1, 1, 2, 2, 3, 3, 5, 5, 4]
    got = fc.group_advantages(r, groups=ids, scale=scale)
    np.testing.assert_allclose(got, ref.group_advantages(r, ids, scale=scale), rtol=1e-13)
    assert np.isnan(got[2:8]).all() and got[10] == 0.0
    raw = fc.group_advantages(r, groups=ids, scale=scale, singleton="raw")
    assert np.isnan(raw[2:8]).all()
    # a reward alone, taken with mean 0 and sd 1: inf, unless the batch sd divides
    assert np.isnan(raw[10]) if scale == "batch" else raw[10] == np.inf


def grpo_by_definition(r, ids, scale, ddof, eps):
    """(r_j - mean of j's group) / (sd + eps), sd over j's group (scale
    "group") or the whole batch ("batch") with n - ddof in the denominator;
    0 for a group of one. Plain loops."""
    r = [float(x) for x in r]
    out = []
    n = len(r)
    batch_mean = sum(r) / n
    batch_sd = (sum((x - batch_mean) ** 2 for x in r) / (n - ddof)) ** 0.5
    for j in range(n):
        group = [r[k] for k in range(n) if ids[k] == ids[j]]
        if len(group) == 1:
            out.append(0.0)
            continue
        mean = sum(group) / len(group)
        sd = (sum((x - mean) ** 2 for x in group) / (len(group) - ddof)) ** 0.5
        out.append((r[j] - mean) / ((sd if scale == "group" else batch_sd) + eps))
    return np.array(out)


@pytest.mark.parametrize("scale", ["group", "batch"])
@pytest.mark.parametrize("ddof", [0, 1])
def test_group_advantages_ddof(scale, ddof):
    # groups [1, 0, 0, 3] (sd ddof 0: sqrt(1.5), ddof 1: sqrt(2)), [2, 4]
    # (1 or sqrt(2)) and [5] alone
    r = np.array([1.0, 0.0, 0.0, 3.0, 2.0, 4.0, 5.0])
    ids = [0, 0, 0, 0, 1, 1, 2]
    got = fc.group_advantages(r, groups=ids, scale=scale, ddof=ddof, eps=1e-3)
    np.testing.assert_allclose(got, grpo_by_definition(r, ids, scale, ddof, 1e-3), rtol=1e-14)
    if scale == "group":
        sd = np.sqrt(6.0 / (4 - ddof))
        np.testing.assert_allclose(got[:4], (r[:4] - 1.0) / (sd + 1e-3), rtol=1e-14)
    # consecutive groups (group_size) give the same as the ids
    sized = fc.group_advantages(r[:6], 2, scale=scale, ddof=ddof, eps=1e-3)
    np.testing.assert_allclose(sized, grpo_by_definition(r[:6], [0, 0, 1, 1, 2, 2], scale, ddof,
                                                         1e-3), rtol=1e-14)


def test_group_advantages_ddof_changes_the_scale():
    # ddof 0 divides by the population sd, ddof 1 by the sample sd: for a
    # group of two, 0.5 / 0.5 = 1 against 0.5 / sqrt(0.5) = 0.7071
    r = np.array([1.0, 0.0])
    np.testing.assert_allclose(fc.group_advantages(r, 2, ddof=0, eps=0.0), [1.0, -1.0],
                               rtol=1e-15)
    np.testing.assert_allclose(fc.group_advantages(r, 2, ddof=1, eps=0.0),
                               [np.sqrt(0.5), -np.sqrt(0.5)], rtol=1e-15)
    np.testing.assert_allclose(fc.group_advantages(r, 2, ddof=0, eps=0.0, scale="batch"),
                               [1.0, -1.0], rtol=1e-15)


@pytest.mark.parametrize("ddof, exc", [(2, ValueError), (-1, ValueError), (0.5, TypeError),
                                       (True, TypeError), ("1", TypeError), (None, TypeError)])
def test_group_advantages_rejects_bad_ddof(ddof, exc):
    with pytest.raises(exc, match="ddof"):
        fc.group_advantages(np.zeros(4), 2, ddof=ddof)


def test_group_of_one_and_nan():
    adv = fc.group_advantages([np.nan, 2.0, 0.0, 5.0], groups=[0, 0, 0, 9])
    assert adv[3] == 0.0
    # the NaN counts as 0: group [0, 2, 0] has mean 2/3 and sd 1.1547
    np.testing.assert_allclose(adv[:3], (np.array([0, 2, 0]) - 2 / 3) / (np.std([0, 2, 0], ddof=1)
                                                                          + 1e-4))


def test_group_advantages_errors():
    with pytest.raises(ValueError, match="not a multiple of group_size"):
        fc.group_advantages(np.zeros(5), 2)
    with pytest.raises(TypeError, match="exactly one of group_size and groups"):
        fc.group_advantages(np.zeros(4))
    with pytest.raises(ValueError, match=r"groups must have shape \(4,\)"):
        fc.group_advantages(np.zeros(4), groups=[0, 1])
    with pytest.raises(TypeError, match="groups must be an integer array"):
        fc.group_advantages(np.zeros(2), groups=[0.5, 1.0])
    with pytest.raises(ValueError, match="scale must be one of"):
        fc.group_advantages(np.zeros(4), 2, scale="std")
    with pytest.raises(ValueError, match=r"rewards must have shape \(N,\)"):
        fc.group_advantages(np.zeros((2, 2)), 2)
    with pytest.raises(ValueError, match="eps must be >= 0"):
        fc.group_advantages(np.zeros(4), 2, eps=-1.0)


# --- shaped and token advantages ---------------------------------------------

def test_shape_advantages_mean_preserving_and_bounded(backend, rng):
    base = rng.normal(size=200)
    credit = rng.normal(size=(200, 5)) * rng.uniform(0, 3, size=(200, 1))
    for normalize in ("std", "maxabs", "none"):
        adv = fc.shape_advantages(base, credit, beta=0.3, kappa=0.8, normalize=normalize,
                                  backend=backend)
        np.testing.assert_allclose(adv.mean(1), base, atol=1e-13)
        assert (np.abs(adv - base[:, None]) <= 0.3 * 0.8 + 1e-13).all()
        # order preserving: the projection is monotone in the credit
        assert (np.argsort(credit, 1, kind="stable")[:, -1]
                == np.argmax(adv + 1e-9 * credit, 1)).all()


def test_shape_advantages_hand_example(backend):
    # credit [2, 0, 1]: centered [1, -1, 0], population sd sqrt(2/3),
    # normalised [1.2247, -1.2247, 0] -> clipped to [1, -1, 0] by kappa = 1.
    adv = fc.shape_advantages(np.array([0.5]), np.array([[2.0, 0.0, 1.0]]), beta=0.1,
                              kappa=1.0, backend=backend)
    np.testing.assert_allclose(adv, [[0.6, 0.4, 0.5]], atol=1e-15)
    flat = fc.shape_advantages(np.array([0.5]), np.array([[1.0, 1.0, 1.0]]), backend=backend)
    np.testing.assert_array_equal(flat, [[0.5, 0.5, 0.5]])


@pytest.mark.parametrize("normalize", ["std", "maxabs", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_shape_advantages_nan_credit_gives_a_nan_row(backend, normalize, weighted):
    """Kills the mutant: NaN credit in shape_advantages replaced by 0 (its
    row's spread taken as 0, or the credit NaN-to-numbered) goes unnoticed:
    the row would get its base for every action. NaN in, NaN out (DESIGN):
    the row of a NaN credit is NaN in every action, the other rows are
    what they are without it."""
    base = np.array([0.5, -1.0, 2.0])
    credit = np.array([[2.0, 0.0, 1.0], [1.0, np.nan, 3.0], [0.0, 4.0, -1.0]])
    counts = np.array([[1.0, 2.0, 3.0]] * 3) if weighted else None
    adv = fc.shape_advantages(base, credit, beta=0.5, normalize=normalize,
                              token_counts=counts, backend=backend)
    assert np.isnan(adv[1]).all()
    keep = [0, 2]
    alone = fc.shape_advantages(base[keep], credit[keep], beta=0.5, normalize=normalize,
                                token_counts=None if counts is None else counts[keep],
                                backend=backend)
    np.testing.assert_array_equal(adv[keep], alone)
    assert not np.isnan(alone).any()


def _numpy_shaping(base, credit, beta, kappa, normalize, weights=None):
    """shape_advantages as NumPy passes around project_zero_sum (what it was
    before the pipeline moved into the kernel, issue 33)."""
    u = credit - credit.mean(axis=-1, keepdims=True, dtype=np.float64)
    if normalize != "none":
        spread = (np.sqrt((u * u).mean(axis=-1, keepdims=True)) if normalize == "std"
                  else np.abs(u).max(axis=-1, keepdims=True))
        with np.errstate(invalid="ignore", divide="ignore"):
            u = np.where(spread > 0, u / spread, np.where(np.isnan(spread), np.nan, 0.0))
    return base[..., None] + beta * fc.project_zero_sum(u, kappa, weights=weights)


@pytest.mark.parametrize("m", [1, 5, 9, 300])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("normalize", ["std", "maxabs", "none"])
def test_shape_advantages_kernel_pipeline_matches_numpy(backend, m, dtype, normalize):
    """The centring, scaling, projection and base + beta z run in one kernel
    over blocks of rows (several blocks and both thread splits here): the
    same values as the NumPy pipeline, bit for bit for m < 8 (NumPy sums
    longer rows pairwise: the last bits of the mean may differ), with the
    guards kept: a row with NaN or +-inf credit is NaN throughout, a
    constant row is its base, a spread that overflows to inf gives 0
    offsets, as NumPy's u / inf does."""
    rng = np.random.default_rng(m)
    n = 5000 if m < 100 else 40
    credit = rng.normal(size=(n, m)) * rng.uniform(0, 3, (n, 1))
    credit[3] = np.nan
    credit[7, 0] = np.inf
    credit[8, -1] = -np.inf
    credit[11] = 1.0
    if m > 1:    # (u * u).sum overflows in float64; float32 cannot hold 1e200
        big = 1e200 if dtype == np.float64 else 3e38
        credit[13, 0], credit[13, -1] = big, -big
    credit = credit.astype(dtype)
    base = rng.normal(size=n)
    with np.errstate(all="ignore"):
        want = _numpy_shaping(base, credit, 0.3, 0.8, normalize)
    for threads in (1, 2):
        got = fc.shape_advantages(base, credit, beta=0.3, kappa=0.8, normalize=normalize,
                                  threads=threads, backend=backend)
        if m < 8:
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)
    for row in (3, 7, 8):
        assert np.isnan(got[row]).all()
    np.testing.assert_array_equal(got[11], np.full(m, base[11]))
    assert not np.isnan(np.delete(got, [3, 7, 8], axis=0)).any()


def test_shape_advantages_checks_before_the_kernel(backend, monkeypatch):
    """Bad token counts are refused naming the argument before any kernel
    runs (the kernel does not check weights)."""
    from fastcredit._numba import shaping as numba_shaping
    from fastcredit._c import shaping as c_shaping

    def boom(*args):
        raise AssertionError("the kernel ran")

    for mod in (numba_shaping, c_shaping):
        monkeypatch.setattr(mod, "shape_advantages", boom)
    for bad in ([[1.0, -2.0, 1.0]], [[1.0, np.nan, 1.0]], [[1.0, np.inf, 1.0]]):
        with pytest.raises(ValueError, match="token_counts"):
            fc.shape_advantages(np.zeros(1), np.ones((1, 3)), token_counts=bad, backend=backend)
    with pytest.raises(ValueError, match="base"):
        fc.shape_advantages(np.zeros(2), np.ones((1, 3)), backend=backend)


def test_token_weighted_shaping_keeps_token_mean(backend, rng):
    G, T, m = 16, 64, 4
    ta = rng.integers(-1, m, size=(G, T))
    ta[:, :5] = 0           # action 0 always has more tokens than the others
    mask = rng.uniform(size=(G, T)) < 0.9
    base = rng.normal(size=G)
    credit = rng.normal(size=(G, m))
    counts = fc.token_counts(ta, m, mask)
    weighted = fc.shape_advantages(base, credit, beta=0.5, token_counts=counts, backend=backend)
    tok = fc.token_advantages(base, weighted, ta, mask, backend=backend).astype(np.float64)
    token_mean = tok.sum(1) / mask.sum(1)
    np.testing.assert_allclose(token_mean, base, atol=1e-6)
    plain = fc.shape_advantages(base, credit, beta=0.5, backend=backend)
    plain_tok = fc.token_advantages(base, plain, ta, mask, backend=backend).astype(np.float64)
    assert np.abs(plain_tok.sum(1) / mask.sum(1) - base).max() > 1e-3


def test_token_advantages_hand_example(backend):
    base = np.array([0.5, -2.0])
    action_adv = np.array([[1.0, -1.0], [3.0, 4.0]])
    ta = np.array([[-1, 0, 0, 1, -1], [1, 1, -1, 0, 0]])
    mask = np.array([[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]], dtype=bool)
    out = fc.token_advantages(base, action_adv, ta, mask, backend=backend)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [[0.5, 1, 1, -1, 0], [4, 4, -2, 3, 3]])


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint16, np.uint64])
def test_token_advantages_match_reference(backend, rng, dtype, path):
    G, T, m = 6, 50, 3
    ta = rng.integers(-1, m, size=(G, T))
    if np.dtype(dtype).kind == "u":
        ta = np.abs(ta)
    ta = ta.astype(dtype)
    base, adv = rng.normal(size=G), rng.normal(size=(G, m))
    mask = rng.integers(0, 2, size=(G, T))
    np.testing.assert_array_equal(fc.token_advantages(base, adv, ta, mask, backend=backend),
                                  ref.token_advantages(base, adv, ta, mask))
    np.testing.assert_array_equal(fc.token_advantages(base, adv, ta, backend=backend),
                                  ref.token_advantages(base, adv, ta))


def test_token_advantages_batch_shape_threads_and_out(backend, rng):
    ta = rng.integers(-1, 4, size=(2, 300, 1000)).astype(np.int32)
    base, adv = rng.normal(size=(2, 300)), rng.normal(size=(2, 300, 4))
    out = np.empty(ta.shape, np.float32)
    one = fc.token_advantages(base, adv, ta, threads=1, backend=backend)
    two = fc.token_advantages(base, adv, ta, threads=2, out=out, backend=backend)
    assert two is out and np.array_equal(one, two)
    np.testing.assert_array_equal(one[1, 7], ref.token_advantages(base[1, 7:8], adv[1, 7:8],
                                                                  ta[1, 7:8])[0])


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("m", [*range(0, 10), 15, 16])
def test_token_twins_write_the_same_bits(rng, m, dtype, path):
    # The Numba twin picks an id of -1 .. 6 by its low three bits (m < 8)
    # and takes a row with a bad id (ids 7, 8 or -9 share low bits with good
    # ones) again the way C does: the same return and the same bits in every
    # row written, up to and including the bad one, with and without a mask,
    # on every C path (AVX-512: a table of m + 1 <= 16 in one register)
    from fastcredit._backend import kernels
    G, T = 5, 37
    base, adv = rng.normal(size=G), rng.normal(size=(G, m))
    mask = rng.integers(0, 2, size=(G, T)).astype(np.uint8)
    for bad in (None, m, m + 1, max(m, 8), -2, -9, np.iinfo(dtype).max, np.iinfo(dtype).min):
        ta = rng.integers(-1, m, size=(G, T)).astype(dtype)
        if bad is not None:
            ta[2, 11] = bad
        got = {}
        for b in BACKENDS:
            for mk in (None, mask):
                out = np.full((G, T), 9.0, dtype=np.float32)
                pos = kernels("shaping", b).token_advantages(base, adv, ta, mk, out)
                got[b, mk is None] = (pos, out.view(np.int32))
        for key, (pos, out) in got.items():
            first = (BACKENDS[0], key[1])
            assert pos == got[first][0] == (-1 if bad is None else 2 * T + 11), key
            np.testing.assert_array_equal(out, got[first][1], err_msg=str((key, bad)))


def test_token_advantages_past_the_streaming_size(rng, path):
    # An output of 8 MiB or more takes the C kernel's non-temporal stores on
    # AVX-512 machines, from each row's first 64-byte boundary: rows of an
    # odd length into an output one float off alignment put the boundary at
    # every offset; the same bits as the reference and as the twin, and a
    # bad id in the last row reported at its place with the rows before it
    # written
    from fastcredit._backend import kernels
    G, T, m = 1031, 2053, 5
    ta = rng.integers(-1, m, size=(G, T)).astype(np.int32)
    base, adv = rng.normal(size=G), rng.normal(size=(G, m))
    mask = rng.integers(0, 2, size=(G, T)).astype(np.uint8)
    want = ref.token_advantages(base, adv, ta, mask)
    good = ta[-1, 7]
    ta[-1, 7] = m
    for b in BACKENDS:
        buf = np.full(G * T + 1, 9.0, dtype=np.float32)
        out = buf[1:].reshape(G, T)
        assert out.nbytes >= 8 * 2**20
        assert kernels("shaping", b).token_advantages(base, adv, ta, mask, out) == (G - 1) * T + 7
        np.testing.assert_array_equal(out[:-1], want[:-1], err_msg=b)
        assert buf[0] == 9.0
        ta[-1, 7] = good
        assert kernels("shaping", b).token_advantages(base, adv, ta, mask, out) == -1
        np.testing.assert_array_equal(out, want, err_msg=b)
        ta[-1, 7] = m


def test_token_advantages_errors(backend):
    base, adv = np.zeros(2), np.zeros((2, 3))
    ta = np.zeros((2, 400000), dtype=np.int64)
    ta[1, 123] = 3
    with pytest.raises(ValueError, match=r"got 3 at position \(1, 123\)"):
        fc.token_advantages(base, adv, ta, threads=2, backend=backend)
    ta[1, 123] = -2
    with pytest.raises(ValueError, match=r"action index in \[0, 3\)"):
        fc.token_advantages(base, adv, ta, backend=backend)
    ok = np.zeros((2, 5), dtype=np.int32)
    with pytest.raises(ValueError, match="action_adv must have shape"):
        fc.token_advantages(base, np.zeros((3, 3)), ok)
    with pytest.raises(ValueError, match="base must have shape"):
        fc.token_advantages(np.zeros(3), adv, ok)
    with pytest.raises(ValueError, match="mask must have token_action's shape"):
        fc.token_advantages(base, adv, ok, mask=np.ones((2, 4)))
    with pytest.raises(TypeError, match="token_action must be an integer array"):
        fc.token_advantages(base, adv, ok.astype(float))
    with pytest.raises(TypeError, match="out must have dtype float32"):
        fc.token_advantages(base, adv, ok, out=np.empty((2, 5)))
    with pytest.raises(TypeError, match="mask must be a bool or numeric"):
        fc.token_advantages(base, adv, ok, mask=np.full((2, 5), "x"))


def test_token_counts():
    ta = np.array([[-1, 0, 0, 1, -1, 2], [2, 2, 2, -1, -1, -1]])
    mask = np.array([[1, 1, 0, 1, 1, 1], [1, 1, 1, 1, 1, 1]])
    np.testing.assert_array_equal(fc.token_counts(ta, 3), [[2, 1, 1], [0, 0, 3]])
    np.testing.assert_array_equal(fc.token_counts(ta, 3, mask), [[1, 1, 1], [0, 0, 3]])
    with pytest.raises(ValueError, match="action index in"):
        fc.token_counts(ta, 2)


def test_shape_advantages_errors():
    with pytest.raises(ValueError, match="base must have shape"):
        fc.shape_advantages(np.zeros(3), np.zeros((2, 4)))
    with pytest.raises(ValueError, match="normalize must be one of"):
        fc.shape_advantages(np.zeros(2), np.zeros((2, 4)), normalize="l2")
    with pytest.raises(ValueError, match="kappa must be >= 0"):
        fc.shape_advantages(np.zeros(2), np.zeros((2, 4)), kappa=-1.0)
    with pytest.raises(ValueError, match="token_counts must have shape"):
        fc.shape_advantages(np.zeros(2), np.zeros((2, 4)), token_counts=np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"credit must have shape \(..., m\)"):
        fc.shape_advantages(np.zeros(2), np.zeros(()))
