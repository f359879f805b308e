"""fastcredit.audit.protocol: the verdict order and its gates, precision lift,
dose matching, the MDE ladder and the confidence router, each against its
definition written out here and on hand-made cases with known answers."""
import math

import numpy as np
import pytest

import fastcredit as fc
from fastcredit.audit import protocol

RS = 1000   # bootstrap resamples: the intervals are compared bit for bit, not for width


def _trajectories(n_traj=120, length=8, seed=0):
    rng = np.random.default_rng(seed)
    off = np.arange(0, n_traj * length + 1, length)
    return rng, off, rng.normal(size=n_traj * length)


# --- the verdict order ----------------------------------------------------------------

def test_verdict_intervals_are_the_audit_statistics():
    rng, off, a = _trajectories()
    credit = a + rng.normal(size=a.size)
    base = a + 4 * rng.normal(size=a.size)
    v = fc.audit.audit_verdicts(credit, base, a, off, resamples=RS, seed=5)
    sig = fc.spearman_audit(credit, a, off, resamples=RS, seed=5)
    control = fc.within_spearman(fc.shuffle_within(credit, off, seed=5), a, off)
    baseline = fc.within_spearman(base, a, off)
    h1, h2, h3 = v.verdicts
    assert (h1.interval.estimate, h1.interval.low, h1.interval.high) == \
        (sig.median.estimate, sig.median.low, sig.median.high)
    for h, other in ((h2, control), (h3, baseline)):
        ci = fc.paired_bootstrap(sig.rho, other, resamples=RS, seed=5)
        assert (h.interval.estimate, h.interval.low, h.interval.high) == \
            (ci.estimate, ci.low, ci.high)
    np.testing.assert_array_equal(v.control_rho, control)
    assert [h.name for h in v.verdicts] == ["H1", "H2", "H3"]
    assert [h.status for h in v.verdicts] == ["supported"] * 3 and v.reached == 3
    assert v.n_scored == 120


def test_each_gate_stops_the_later_verdicts(monkeypatch):
    rng, off, a = _trajectories(seed=1)
    # H1 fails (anti-aligned credit: its interval lies below 0): nothing else is read
    v = fc.audit.audit_verdicts(-a, a, a, off, resamples=RS)
    assert [h.status for h in v.verdicts] == ["not supported", "not read", "not read"]
    assert v.verdicts[0].interval.high < 0 and v.verdicts[1].interval is None
    assert v.reached == 0
    # H3 fails: the baseline is the replay itself
    v = fc.audit.audit_verdicts(a + rng.normal(size=a.size), a, a, off, resamples=RS)
    assert [h.status for h in v.verdicts] == ["supported", "supported", "not supported"]
    assert v.reached == 2
    # H2 fails (the control's interval made to contain 0): H3 is not read
    real = protocol.paired_bootstrap
    calls = []

    def failing(*args, **kw):
        calls.append(1)
        ci = real(*args, **kw)
        return fc.BootstrapCI(ci.estimate, -1.0, ci.high, ci.level, ci.n, ci.replicates)

    monkeypatch.setattr(protocol, "paired_bootstrap", failing)
    v = fc.audit.audit_verdicts(a + rng.normal(size=a.size), a, a, off, resamples=RS)
    assert [h.status for h in v.verdicts] == ["supported", "not supported", "not read"]
    assert len(calls) == 1 and v.reached == 1


def test_verdicts_refuse_bad_input_by_name():
    _, off, a = _trajectories(n_traj=4)
    with pytest.raises(ValueError, match="baseline_credit"):
        fc.audit.audit_verdicts(a, a[:-1], a, off)
    with pytest.raises(ValueError, match="level"):
        fc.audit.audit_verdicts(a, a, a, off, level=1.0)


# --- precision lift -------------------------------------------------------------------

def test_precision_lift_counts():
    crit = np.array([1, 1, 0, 0, 0, 0, 1, 0], dtype=bool)
    f = np.array([1, 1, 1, 0, 0, 0, 0, 0], dtype=bool)
    c = np.array([1, 0, 1, 1, 0, 1, 0, 0], dtype=bool)
    p = fc.audit.precision_lift(f, c, crit)
    assert (p.hits, p.flagged, p.control_hits, p.control_flagged, p.critical) == (2, 3, 1, 4, 3)
    assert p.precision == 2 / 3 and p.control_precision == 1 / 4
    assert p.lift == (2 / 3) / (1 / 4) and p.difference == 2 / 3 - 1 / 4
    assert (p.precision_low, p.precision_high) == fc.wilson_interval(2, 3)
    assert (p.control_low, p.control_high) == fc.wilson_interval(1, 4)
    none = fc.audit.precision_lift(np.zeros(8, bool), c, crit)
    assert math.isnan(none.precision) and math.isnan(none.lift)
    blind = fc.audit.precision_lift(f, f, crit)
    assert blind.lift == 1.0
    zero_control = fc.audit.precision_lift(f, ~crit & c, crit)
    assert zero_control.lift == math.inf
    with pytest.raises(ValueError, match="control_flagged"):
        fc.audit.precision_lift(f, c[:-1], crit)
    with pytest.raises(ValueError, match="critical"):
        fc.audit.precision_lift(f, c, np.arange(8))


# --- dose ---------------------------------------------------------------------------------

def _ess_oracle(w):
    w = np.abs(np.asarray(w, dtype=float))
    return sum(w) ** 2 / sum(w * w) if sum(w * w) > 0 else math.nan


def test_effective_sample_size_known_values():
    ess = fc.audit.effective_sample_size([2., 2., 2., 0., 5., 0., 0., 0., -1., 1.],
                                         [0, 4, 5, 8, 8, 10])
    np.testing.assert_array_equal(ess[[0, 1, 4]], [36 / 12, 1.0, 2.0])
    assert np.isnan(ess[2]) and np.isnan(ess[3])        # all zero; empty
    rng = np.random.default_rng(3)
    x = rng.normal(size=300)
    off = np.sort(np.r_[0, rng.integers(0, 300, 40), 300])
    got = fc.audit.effective_sample_size(x, off)
    want = [_ess_oracle(x[a:b]) for a, b in zip(off[:-1], off[1:])]
    np.testing.assert_allclose(got, want, rtol=1e-13)
    assert np.isnan(fc.audit.effective_sample_size([1., np.nan], [0, 2])[0])


def test_dose_match_is_the_fewest_largest_steps_reaching_the_dose():
    rng = np.random.default_rng(4)
    length, n_traj = 7, 200
    off = np.arange(0, length * n_traj + 1, length)
    x = rng.normal(size=length * n_traj)
    ref = rng.normal(size=length * n_traj) ** 3          # more concentrated: a lower dose
    d = fc.audit.dose_match(x, ref, off)
    unmatched = 0
    for j in range(n_traj):
        a, b = off[j], off[j + 1]
        target = _ess_oracle(ref[a:b])
        order = sorted(range(length), key=lambda t: (-abs(x[a + t]), t))
        ess = [_ess_oracle([x[a + t] for t in order[:k]]) for k in range(1, length + 1)]
        assert all(e2 >= e1 - 1e-12 for e1, e2 in zip(ess, ess[1:]))   # never decreases
        k = next((k for k in range(1, length + 1) if ess[k - 1] >= target * (1 - 1e-12)),
                 length)
        assert d.kept[j] == k
        want = np.zeros(length)
        want[order[:k]] = x[a:b][order[:k]]
        np.testing.assert_array_equal(d.credit[a:b], want)
        assert d.target[j] == pytest.approx(target, rel=1e-13)
        unmatched += ess[-1] < target * (1 - 1e-12)
    assert d.unmatched == unmatched > 0
    # a reference more diffuse than the whole credit: kept whole, counted
    d = fc.audit.dose_match([5., 0., 0., 1.], [1., 1., 1., 1.], [0, 4])
    assert d.unmatched == 1 and d.kept.tolist() == [4]
    np.testing.assert_array_equal(d.credit, [5., 0., 0., 1.])
    with pytest.raises(ValueError, match="reference"):
        fc.audit.dose_match([1., 2.], [1., np.inf], [0, 2])


# --- MDE ladder and the zero arm ------------------------------------------------------------

def test_mde_ladder_formula():
    from scipy.stats import norm
    sizes = np.array([1, 10, 100, 1171])
    r = fc.audit.mde_ladder(sizes, sd=0.37, level=0.9, power=0.9)
    want = (norm.ppf(0.95) + norm.ppf(0.9)) * 0.37 / np.sqrt(sizes)
    np.testing.assert_allclose(r.mde, want, rtol=1e-13)
    # the textbook 2.8 standard errors at level 0.95, power 0.8
    assert fc.audit.mde_ladder([1]).mde[0] == pytest.approx(2.8016, abs=1e-4)
    with pytest.raises(ValueError, match="sizes"):
        fc.audit.mde_ladder([0, 10])
    with pytest.raises(ValueError, match="power"):
        fc.audit.mde_ladder([10], power=1.0)


def test_zero_arm_bound():
    b = fc.audit.zero_arm_bound(np.array([1, 3, 20]))
    assert b[1] == pytest.approx(0.632, abs=5e-4)                 # DESIGN: n = 3 excludes 0.632
    np.testing.assert_allclose((1 - b) ** np.array([1, 3, 20]), 0.05, rtol=1e-13)
    assert b[0] == pytest.approx(0.95, rel=1e-15)
    with pytest.raises(ValueError, match="replays"):
        fc.audit.zero_arm_bound(0)


# --- the router ---------------------------------------------------------------------------

def test_router_against_a_step_by_step_count():
    rng = np.random.default_rng(6)
    n = 500
    conf = rng.random(n)
    crit = rng.random(n) < 0.3
    flag = np.where(conf > 0.5, crit ^ (rng.random(n) < 0.1), rng.random(n) < 0.5)
    th = np.array([-np.inf, 0.1, 0.5, 0.9, np.inf])
    r = fc.audit.router_metrics(conf, flag, crit, thresholds=th, judge_cost=0.25)
    for i, t in enumerate(th):
        caught = flagged = routed = 0
        for s in range(n):
            to_judge = conf[s] < t
            routed += to_judge
            final = crit[s] if to_judge else flag[s]
            flagged += final
            caught += final and crit[s]
        assert r.routed[i] == routed and r.judge_cost[i] == routed * 0.25
        assert r.recall[i] == caught / crit.sum() and r.precision[i] == caught / flagged
        assert r.judge_share[i] == routed / n
    assert r.recall[-1] == 1.0 and r.precision[-1] == 1.0 and r.routed[0] == 0
    assert r.auto_recall == r.recall[0]
    none = fc.audit.router_metrics([0.5], [0], [0], thresholds=[0.0])
    assert math.isnan(none.recall[0]) and math.isnan(none.precision[0])
    with pytest.raises(ValueError, match="confidence"):
        fc.audit.router_metrics([np.nan], [0], [0], thresholds=[0.0])
    with pytest.raises(ValueError, match="judge_cost"):
        fc.audit.router_metrics([0.5], [0], [0], thresholds=[0.0], judge_cost=-1.0)
