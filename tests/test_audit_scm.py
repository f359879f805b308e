"""Contrastive effects and the commitment point on the synthetic agent SCMs
(fastcredit.synthetic) with a planted pivotal step."""
import numpy as np
import pytest

import fastcredit as fc
from fastcredit import synthetic


def resample_from_each_step(scm, replays):
    """outcomes[k, j]: replay j with steps [0, k) held factual, k onward resampled."""
    out = np.empty((scm.n_steps, replays))
    for k in range(scm.n_steps):
        held = np.uint64((1 << k) - 1)
        for j in range(replays):
            out[k, j] = scm.game(held, np.uint64(k * replays + j))
    return out


@pytest.mark.parametrize("pivot", [1, 3, 6])
def test_commitment_point_is_the_planted_pivot(pivot):
    # No recovery after derailing (r = 0): resampling at or before the pivot
    # can keep the run on track; from the step after it the failure is certain.
    scm = synthetic.pivotal_chain(8, pivot, q=0.2, r=0.0)
    outcomes = resample_from_each_step(scm, 300)
    ce = fc.contrastive_effects(outcomes, 1.0)
    assert ce.kind == "binary"
    assert ce.commitment_point == pivot
    exact = scm.table()[(1 << np.arange(8)) - 1] - 1.0
    assert np.all((ce.low <= exact) & (exact <= ce.high + 1e-12))
    assert np.all(ce.effect[pivot + 1:] == 0)


def test_and_failure_effect_matches_exact_table():
    # AND-failure of steps 0 and 1 (q = 0.3): resampling from step 0 fails
    # with probability 0.09, from step 1 with 0.3, from step 2 never rescues.
    scm = synthetic.and_failure(0.3)
    outcomes = resample_from_each_step(scm, 2000)
    ce = fc.contrastive_effects(outcomes, 1.0)
    np.testing.assert_allclose(scm.table()[[0, 1, 3]], [0.09, 0.3, 1.0])
    assert np.all(np.abs(ce.effect - (np.array([0.09, 0.3, 1.0]) - 1)) < 0.04)
    assert ce.commitment_point == 1
