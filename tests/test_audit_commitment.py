"""The commitment point's two rules (issue 32, item 6): the default
(last step whose effect interval lies below 0) and CAR's literal rule (last
step whose interval excludes 0), on hand-made effects with known answers."""
import numpy as np
import pytest

import fastcredit as fc


def steps(*bad_counts, n=100):
    """Per step, n binary outcomes with the given number of bad ones."""
    return np.array([[1] * k + [0] * (n - k) for k in bad_counts])


@pytest.mark.parametrize("bad,observed,negative,excludes", [
    ((20, 30, 50), 0.5, 1, 1),       # rescues at 0 and 1; step 2 no effect
    ((20, 90, 50), 0.5, 0, 1),       # step 1 significantly worse: only the literal rule names it
    ((50, 50, 50), 0.5, None, None),  # no effect anywhere
    ((90, 95, 20), 0.5, 2, 2),       # worse early, rescue at the end: both name step 2
    ((60, 80, 90), 0.5, None, 2),    # only harm: no rescue, the literal rule names the last
])
def test_the_two_rules_on_known_effects(bad, observed, negative, excludes):
    y = steps(*bad)
    got = fc.contrastive_effects(y, observed)
    assert got.rule == "negative" and got.commitment_point == negative
    lit = fc.contrastive_effects(y, observed, rule="excludes_zero")
    assert lit.rule == "excludes_zero" and lit.commitment_point == excludes
    np.testing.assert_array_equal(got.low, lit.low)
    below = np.flatnonzero(got.high < 0)
    either = np.flatnonzero((got.high < 0) | (got.low > 0))
    assert negative == (int(below[-1]) if below.size else None)
    assert excludes == (int(either[-1]) if either.size else None)


def test_unknown_rule_is_refused_by_name():
    with pytest.raises(ValueError, match="rule"):
        fc.contrastive_effects(steps(20), 0.5, rule="last")
