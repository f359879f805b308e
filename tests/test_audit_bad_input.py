"""Every audit entry point rejects malformed input with an error naming the
argument, before any kernel writes a result (replay_advantage's kernel
checks its offsets' order in its first pass, and the public call names the
argument on its refusal); the C functions reject it too."""
import numpy as np
import pytest

import fastcredit as fc
from fastcredit._c import ffi, lib

X = np.arange(10.0)


@pytest.mark.parametrize("call,exc,match", [
    (lambda: fc.bootstrap_median(X.reshape(2, 5)), ValueError, "x must be one-dimensional"),
    (lambda: fc.bootstrap_median([1.0]), ValueError, "at least 2 items"),
    (lambda: fc.bootstrap_median([1.0, np.nan, np.nan]), ValueError, "at least 2 items"),
    (lambda: fc.bootstrap_median(X, resamples=0), ValueError, "resamples must be >= 1"),
    (lambda: fc.bootstrap_median(X, level=1.0), ValueError, "level must be in"),
    (lambda: fc.bootstrap_median(X, seed=-1), ValueError, "seed must be >= 0"),
    (lambda: fc.bootstrap_median(X, seed=1.5), TypeError, "seed must be an integer"),
    (lambda: fc.bootstrap_median(X.astype(complex)), TypeError, "x must be a real"),
    (lambda: fc.bootstrap_median(X, backend="fortran"), ValueError, "backend must be"),
    (lambda: fc.bootstrap_median(X, threads=0), ValueError, "threads must be >= 1"),
    (lambda: fc.paired_bootstrap(X, X[:9]), ValueError, "a and b must be paired"),
    (lambda: fc.alignment(np.ones((3, 4)), np.ones((3, 5))), ValueError, "same shape"),
    (lambda: fc.alignment(np.ones((3, 1)), np.ones((3, 1))), ValueError, "m >= 2"),
    (lambda: fc.alignment(np.ones(3), np.ones(3), center=1), TypeError, "center must be"),
    (lambda: fc.alignment(np.ones(3), np.ones(3), atol=-1.0), ValueError, "atol must be >= 0"),
    (lambda: fc.evaluator_fidelity(np.ones(8), np.ones(4)), ValueError, "same shape"),
    (lambda: fc.evaluator_fidelity(np.ones(6), np.ones(6)), ValueError, "2 <= m <= 16"),
    (lambda: fc.evaluator_fidelity(np.ones(2), np.ones(2)), ValueError, "2 <= m <= 16"),
    (lambda: fc.replay_advantage(X, X), ValueError, "factual must be 2-D"),
    (lambda: fc.replay_advantage(X, X, factual_offsets=[0, 5, 9], alternative_offsets=[0, 5, 10]),
     ValueError, r"factual_offsets\[-1\] must equal"),
    (lambda: fc.replay_advantage(X, X, factual_offsets=[0, 6, 5, 10],
                                 alternative_offsets=[0, 2, 5, 10]),
     ValueError, "factual_offsets must be non-decreasing: step 1"),
    (lambda: fc.replay_advantage(X, X, factual_offsets=[0, 5, 5, 10],
                                 alternative_offsets=[0, 2, 5, 10]),
     ValueError, "factual: step 1 has no values"),
    (lambda: fc.replay_advantage(X, X, factual_offsets=[0, 5, 10], alternative_offsets=[0, 10]),
     ValueError, "same steps"),
    (lambda: fc.replay_advantage(X, X, factual_offsets=[0.0, 10.0], alternative_offsets=[0, 10]),
     TypeError, "factual_offsets must be an integer array"),
    (lambda: fc.replay_advantage(np.ones((2, 2)), np.ones((2, 2)), alpha=1.0), ValueError,
     "alpha must be in"),
    (lambda: fc.replay_advantage(np.ones((2, 2)), np.ones((2, 2)), threshold=-1), ValueError,
     "threshold must be >= 0"),
    (lambda: fc.within_spearman(X, X[:9], [0, 9]), ValueError, "same length"),
    (lambda: fc.within_spearman(X, X, [0, 5, 9]), ValueError, r"offsets\[-1\] must equal"),
    (lambda: fc.within_spearman(X, X, [1, 5, 10]), ValueError, r"offsets\[0\] must be 0"),
    (lambda: fc.within_spearman(X, X, [0]), ValueError, "at least 2 entries"),
    (lambda: fc.within_spearman(X, X, [[0, 10]]), ValueError, "offsets must be one-dim"),
    (lambda: fc.within_spearman(X, X, [0, 10], min_steps=1), ValueError, "min_steps must be"),
    (lambda: fc.spearman_audit(X, X, [0, 10]), ValueError, "a_replay: 1 of 1 trajectories"),
    (lambda: fc.shuffle_within(X, [0, 4, 10], out=np.empty(9)), ValueError, "out must have"),
    (lambda: fc.shuffle_within(X, [0, 4, 10], out=np.empty(10, np.float32)), TypeError,
     "out must have dtype"),
    (lambda: fc.shuffle_within(X, [0, 4, 10], out=X), ValueError, "must not overlap"),
    (lambda: fc.shuffle_within(X, [0, 4, 10], stream=-1), ValueError, "stream must be"),
    (lambda: fc.shuffle_within(X, [0, 4, 10], stream=2**63), ValueError, "below 2\\*\\*64"),
    (lambda: fc.derangement(1), ValueError, "n must be >= 2"),
    (lambda: fc.derangement(2**32 + 1), ValueError, "n must be <="),
    (lambda: fc.derangement(2.0), TypeError, "n must be an integer"),
    (lambda: fc.audit_controls(X, X, [0, 10], controls=["placebo"]), ValueError,
     "controls must be one of"),
    (lambda: fc.alignment_controls(np.ones((3, 1)), np.ones((3, 1))), ValueError, "m >= 2"),
    (lambda: fc.alignment_controls(np.ones((1, 3)), np.ones((1, 3)), controls=["derangement"]),
     ValueError, "at least 2 groups"),
    (lambda: fc.audit_controls(X, X, [0, 10], controls="shuffle"), TypeError,
     "sequence of control names"),
    # regressions of the fuzz harness (tests/test_fuzz.py)
    (lambda: fc.bootstrap_median([]), ValueError, "^x: the bootstrap needs at least 2"),
    (lambda: fc.paired_bootstrap([1.0], [2.0]), ValueError, "^a and b"),
    *[(lambda r=r: f(r), ValueError, "resamples")
      for r in (2**31, 2**40, 2**63, 2**64)
      for f in (lambda r: fc.bootstrap_median(X, resamples=r),
                lambda r: fc.paired_bootstrap(X, X, resamples=r),
                lambda r: fc.spearman_audit(X, X, [0, 5, 10], resamples=r),
                lambda r: fc.audit_controls(X, X, [0, 5, 10], resamples=r),
                lambda r: fc.contrastive_effects(np.ones((2, 3)) / 2, 0.5, resamples=r))],
    (lambda: fc.within_spearman(X, X, [0, 10], min_steps=2**63), ValueError,
     "min_steps must be <="),
    (lambda: fc.spearman_audit(X, X, [0, 5, 10], min_steps=2**40), ValueError,
     "0 of 2 trajectories .* fewer than min_steps"),
    (lambda: fc.audit_controls(X, np.zeros(10), [0, 5, 10]), ValueError,
     "^a_replay: 0 of 2 .* 2 a constant a_replay"),
    (lambda: fc.audit_controls(X, X, [0, 10], controls=None), TypeError,
     "controls must be a sequence"),
    (lambda: fc.alignment_controls(np.ones((3, 2)), np.ones((3, 2)), controls=None), TypeError,
     "controls must be a sequence"),
    (lambda: fc.alignment_controls(np.ones((0, 3)), np.ones((0, 3))), ValueError,
     "^credit must have shape .* n_requests >= 1"),
    (lambda: fc.evaluator_fidelity(np.broadcast_to(np.zeros(1), (1 << 31,)), np.zeros(8)),
     ValueError, r"^v must have a last axis of length 2\*\*m"),
    (lambda: fc.evaluator_fidelity(*[np.broadcast_to(np.zeros(1), (1 << 31,))] * 2),
     ValueError, "2 <= m <= 16"),
    (lambda: fc.holm([]), ValueError, "at least one"),
    (lambda: fc.holm([0.1, 1.2]), ValueError, "pvalues must lie in"),
    (lambda: fc.holm([0.1, np.nan]), ValueError, "pvalues must lie in"),
    (lambda: fc.holm([0.1], alpha=0), ValueError, "alpha must be in"),
    (lambda: fc.wilson_interval(5, 4), ValueError, "successes <= n"),
    (lambda: fc.wilson_interval(0, 0), ValueError, "n >= 1"),
    (lambda: fc.wilson_interval("a", 3), TypeError, "successes must be real"),
    (lambda: fc.newcombe_interval(1, 2, 3, 2), ValueError, "successes2 <= n2"),
    (lambda: fc.contrastive_effects(np.full((2, 3), 0.5), 1.0, kind="binary"), ValueError,
     "all 0 or 1"),
    (lambda: fc.contrastive_effects(np.ones((2, 3)), 1.0, kind="exact"), ValueError,
     "kind must be one of"),
    (lambda: fc.contrastive_effects(X, 1.0, offsets=[0, 0, 10]), ValueError,
     "resampled: step 0 has no values"),
    (lambda: fc.contrastive_effects(np.ones((2, 3)), []), ValueError, "observed must be"),
    (lambda: fc.contrastive_effects(np.ones((2, 3)), np.ones((2, 2))), ValueError,
     "observed must be"),
    (lambda: fc.contrastive_effects(np.ones(3), 1.0), ValueError, "resampled must be 2-D"),
])
def test_rejected(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_nan_handling_is_as_documented():
    # replay advantages propagate NaN outcomes
    ra = fc.replay_advantage([[1.0, np.nan], [1.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]])
    assert np.isnan(ra.advantage[0]) and not ra.critical[0] and ra.advantage[1] == 0.5
    # trajectories with NaN are excluded and counted, not silently scored
    audit = fc.spearman_audit([1, 2, 3, 4, np.nan, 1, 2, 3, 1, 2, 3, 4.0],
                              [1, 2, 3, 4, 5, 1, 2, 3, 4, 1, 2, 3.0], [0, 5, 9, 12],
                              min_steps=3, resamples=10)
    assert audit.n_nonfinite == 1 and audit.median.n == 2


def test_c_functions_reject_bad_arguments():
    d = np.zeros(4)
    i = np.zeros(4, dtype=np.int64)
    dp, ip = ffi.from_buffer("double[]", d), ffi.from_buffer("int64_t[]", i)
    bad_off = ffi.from_buffer("int64_t[]", np.array([0, 3, 2], dtype=np.int64))
    s = ffi.from_buffer("int8_t[]", np.zeros(4, np.int8))
    cp = ffi.from_buffer("int32_t[]", np.zeros(4, np.int32))
    assert lib.fc_bootstrap_median(dp, ip, ffi.NULL, ffi.NULL, 0, 0, 0, 1, cp, dp) == lib.FC_EINVAL
    assert lib.fc_bootstrap_median(dp, ip, ffi.NULL, ffi.NULL, 2, 0, 3, 1, cp, dp) == lib.FC_EINVAL
    assert lib.fc_bootstrap_median(dp, ip, ffi.NULL, ffi.NULL, 2**31, 0, 0, 1, cp,
                                   dp) == lib.FC_EINVAL
    assert lib.fc_spearman_groups(bad_off, 2, dp, dp, 2, ip, dp, dp, s) == lib.FC_EINVAL
    assert lib.fc_spearman_groups(ip, 1, dp, dp, 1, ip, dp, dp, s) == lib.FC_EINVAL
    assert lib.fc_shuffle_groups(bad_off, 2, dp, 0, 0, dp) == lib.FC_EINVAL
    assert lib.fc_derangement(1, 0, ip) == lib.FC_EINVAL
    assert lib.fc_bootstrap_mean_diff(ip, dp, 1, ffi.NULL, 0, 5, 0, 0, dp) == lib.FC_EINVAL
    up = ffi.from_buffer("uint8_t[]", np.zeros(4, np.uint8))
    bad = ffi.new("int64_t *")
    assert lib.fc_replay_advantage(ip, dp, ip, dp, 1, 0.05, 0.0, dp, dp, dp, up,
                                   bad) == lib.FC_EINVAL and bad[0] == 0
    one = ffi.from_buffer("int64_t[]", np.array([0, 1], dtype=np.int64))
    assert lib.fc_replay_advantage(one, dp, one, dp, 1, 1.5, 0.0, dp, dp, dp, up,
                                   bad) == lib.FC_EINVAL and bad[0] == -1
    assert lib.fc_replay_advantage(one, dp, one, dp, 1, 0.5, -1.0, dp, dp, dp, up,
                                   bad) == lib.FC_EINVAL and bad[0] == -1
