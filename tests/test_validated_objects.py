"""Objects that validate once and are trusted afterwards own what they hold
(issue 26, defect 2), and allocations sized by an argument are checked
before they are made (defect 3)."""
import array
import pickle

import numpy as np
import pytest

import fastcredit as fc
from fastcredit import _validation

from conftest import BACKENDS

needs_c = pytest.mark.skipif("c" not in BACKENDS, reason="needs the C backend")


def pools_data():
    """Two requests of two actions; ad 3 and ad 4 compete in request 1."""
    return dict(offsets=np.array([0, 1, 2, 2, 4]), ad_id=np.array([1, 2, 3, 4]),
                score=np.array([1.0, 2.0, 3.0, 4.0]), value=np.ones(4),
                prerank=np.array([4.0, 3.0, 2.0, 1.0]))


def replay(pools, backend, **kw):
    return fc.auction_replay(pools, slots=2, backend=backend, **{"pricing": "gsp", **kw})


# --- Pools ---------------------------------------------------------------------

@pytest.mark.parametrize("change", [
    ("offsets", 4, 50),           # the reproducer: Numba read past the arrays, C refused
    ("score", slice(None), np.nan),   # replayed into all-zero tables
    ("value", 3, 100.0),
    ("ad_id", 3, 3),              # a duplicate ad where there was none
    ("prerank", 2, -5.0),         # with capacity 1, request 1 keeps the other ad
])
def test_pools_ignore_changes_to_the_callers_arrays(backend, change):
    """Mutant: Pools stores read-only views of the caller's arrays (the code
    before issue 26): every change below reaches the replay."""
    name, where, new = change
    data = pools_data()
    pools = fc.Pools(data["offsets"], data["ad_id"], data["score"], data["value"], m=2,
                     prerank=data["prerank"])
    fresh = fc.Pools(m=2, **pools_data())
    data[name][where] = new
    for kw in ({}, {"capacity": 1}, {"mode": "rerun"}, {"pricing": "first"}):
        np.testing.assert_array_equal(replay(pools, backend, **kw), replay(fresh, backend, **kw))
    np.testing.assert_array_equal(getattr(pools, name), getattr(fresh, name))


def test_pools_arrays_cannot_be_made_writeable():
    """Mutant: the stored views are read-only but their memory is not (NumPy
    then lets a view be made writeable again), or an unpickled Pools holds
    writeable arrays."""
    pools = fc.Pools(m=2, **pools_data())
    for p in (pools, pickle.loads(pickle.dumps(pools))):
        for name in ("offsets", "ad_id", "score", "value", "prerank"):
            arr = getattr(p, name)
            with pytest.raises(ValueError, match="WRITEABLE"):
                arr.flags.writeable = True
            assert not arr.base.flags.writeable
    np.testing.assert_array_equal(replay(pickle.loads(pickle.dumps(pools)), None),
                                  replay(pools, None))


def test_pools_copy_only_what_the_caller_can_reach():
    """Mutants: ownership decided by `arr is given` (keeps a view of the
    caller's array, or of a buffer such as array.array), by `arr.base is
    None` (keeps the array an __array__ object hands over), or a copy of
    every array (a second copy of one validation already converted)."""
    from fastcredit._validation import owned
    given = np.arange(4.0)
    assert not np.shares_memory(owned(given, given, "x"), given)
    assert not np.shares_memory(owned(given.view(), given, "x"), given)
    buf = array.array("d", [1.0, 2.0])
    got = owned(np.asarray(buf), buf, "x")
    buf[0] = 9.0
    assert got[0] == 1.0
    class Holder:   # hands NumPy its own array, as pandas can
        data = np.arange(4.0)

        def __array__(self, dtype=None, copy=None):
            return self.data

    holder = Holder()
    got = owned(np.asarray(holder), holder, "x")
    holder.data[0] = 9.0
    assert got[0] == 0.0
    converted = np.asarray(np.arange(4, dtype=np.float32), dtype=np.float64)
    assert owned(converted, np.arange(4, dtype=np.float32), "x") is converted
    listed = np.asarray([1.0, 2.0])
    assert owned(listed, [1.0, 2.0], "x") is listed


@needs_c
def test_c_refusal_names_the_argument():
    """Mutant: the binding raises 'rejected its arguments (code -1)', naming
    nothing (the code before issue 26)."""
    from fastcredit._c import auction, check, lib
    d = pools_data()
    out, none = np.empty((2, 4)), (np.empty((1, 1, 1), dtype=np.int64), np.empty((1, 1, 1)))

    def call(offsets):
        auction.replay(offsets, d["ad_id"], d["score"], d["value"], np.empty(0), 2, 0, 2, 2,
                       0.0, 0, lib.FC_PRICING_GSP, lib.FC_MODE_FILTER, out, *none)

    with pytest.raises(ValueError, match=r"offsets\[4\] = 50 is past the end of the 4 "):
        call(np.array([0, 1, 2, 2, 50]))
    with pytest.raises(ValueError, match=r"offsets must be non-decreasing: offsets\[1\] = 3 > "
                                         r"offsets\[2\] = 1"):
        call(np.array([0, 3, 1, 2, 4]))
    with pytest.raises(MemoryError, match="fc_x could not allocate its workspace"):
        check(lib.FC_ENOMEM, "fc_x")


@needs_c
def test_c_refusal_names_the_argument_trees():
    """Mutant: as above, for the trees family's two functions."""
    from fastcredit._c import trees
    with pytest.raises(ValueError, match=r"counts\[1\] = -1 is negative"):
        trees.allocation_pick(1, np.array([1, -1]), np.zeros(2), np.zeros(2), 1.0, 0.0, 0, 0)
    with pytest.raises(ValueError, match=r"offsets\[0\] = 1 is not 0"):
        trees.actor_centered_credit(np.zeros(3), None, np.array([1, 2, 3]), True, 0.0, None,
                                    np.empty(3), np.empty(2), None)
    with pytest.raises(ValueError, match=r"atol = -1.0 is negative or NaN"):
        trees.actor_centered_credit(np.zeros(3), None, np.array([0, 2, 3]), True, -1.0, None,
                                    np.empty(3), np.empty(2), None)


# --- the allocation rules ------------------------------------------------------

def test_allocators_state_is_not_the_callers(backend):
    """Mutant: counts and sums are the rule's own arrays (the code before
    issue 26): writing into them changed the next picks (Numba) or made the
    C kernel refuse; attributes could be reassigned."""
    def told(rule):
        for a in (0, 1, 1, 2):
            rule.tell(a, float(a))
        return rule

    rule = told(fc.UCT(3, c=0.5, seed=2, backend=backend))
    twin = told(fc.UCT(3, c=0.5, seed=2, backend=backend))
    rule.counts[:] = -1
    rule.sums[:] = np.nan
    assert [rule.ask() for _ in range(8)] == [twin.ask() for _ in range(8)]
    assert rule.counts.tolist() == [1, 2, 1]
    for name, value in (("n_actions", 5), ("counts", np.zeros(3)), ("sums", np.zeros(3)),
                        ("seed", 1)):
        with pytest.raises(AttributeError):
            setattr(rule, name, value)


def test_allocator_nan_score_is_refused(backend):
    """Mutant: the Numba kernel's -1 (no action) returned by ask() as an
    action (the code before issue 26: C refused, Numba answered -1)."""
    rule = fc.AgentUCT(2, costs=[1e308, 0.0], c=1e308, c_tok=10.0, backend=backend)
    rule.tell(0, 0.0)
    for _ in range(24):
        rule.tell(1, 0.0)
    # action 0: c * sqrt(log 26) overflows to inf, c_tok * 1e308 too: inf - inf
    with pytest.raises(ValueError, match="a score is NaN"):
        rule.ask()


# --- learning tasks and SCMs ---------------------------------------------------

def test_learning_task_owns_its_arrays():
    """Mutant: LearningTask keeps the caller's values and features (the code
    before issue 26): NaN written after the finite check reached training."""
    v = np.tile(np.array([0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0]), (4, 1))
    f = np.tile(np.eye(3), (4, 1, 1))
    task = fc.learning.LearningTask(v, f)
    fresh = fc.learning.LearningTask(v.copy(), f.copy())
    v[:] = np.nan
    f[:] = 0.0
    kw = dict(m=1, steps=5, batch=4, evaluator="rerun")
    np.testing.assert_array_equal(fc.learning.train_policy(task, **kw).theta,
                                  fc.learning.train_policy(fresh, **kw).theta)
    assert np.isfinite(task.values).all()
    with pytest.raises(ValueError, match="WRITEABLE"):
        task.values.flags.writeable = True
    with pytest.raises(AttributeError, match="immutable"):
        task.values = v
    again = pickle.loads(pickle.dumps(task))
    assert not again.values.flags.writeable and not again.features.flags.writeable


@pytest.mark.parametrize("make", [
    lambda q: fc.synthetic.and_failure(q),
    lambda q: fc.synthetic.or_failure(q),
    lambda q: fc.synthetic.threshold_trajectory(3, q=q),
    lambda q: fc.synthetic.pivotal_chain(3, 1, q=q, r=q),
])
def test_scm_keeps_its_own_probabilities(make):
    """Mutant: the SCM's game and table read the caller's q (and r) array,
    checked in [0, 1] once (the code before issue 26)."""
    q = np.array([0.3, 0.2, 0.4])
    scm = make(q)
    expected = make(q.copy()).table()
    q[:] = 5.0
    np.testing.assert_array_equal(scm.table(), expected)


# --- allocations checked before they are made ----------------------------------

def test_auction_winners_refuses_what_cannot_fit():
    """Mutant: the winners' arrays allocated unchecked: NumPy's MemoryError
    'Unable to allocate 512 GiB' (the code before issue 26)."""
    pools = fc.Pools(np.zeros(17, dtype=np.int64), np.zeros(0, dtype=np.int64), [], [], m=16)
    with pytest.raises(ValueError, match=r"slots = 1,048,576 .* needs 1024\.0 GiB, more than"):
        fc.auction_winners(pools, slots=2**20)


def test_train_policy_refuses_a_history_that_cannot_fit():
    """Mutant: the weights after each of `steps` updates allocated unchecked
    (2**24 steps x 2**20 features: NumPy's MemoryError)."""
    task = fc.learning.LearningTask(np.zeros((1, 4)), np.ones((1, 2, 2**20)))
    with pytest.raises(ValueError, match=r"steps = 16,777,216 .* needs .* GiB, more than"):
        fc.learning.train_policy(task, m=1, steps=2**24, batch=1, group=2, evaluator="rerun")


def test_scm_table_is_checked(monkeypatch):
    """Mutant: the exact table (8 * 2**n_steps bytes) allocated unchecked."""
    monkeypatch.setattr(_validation, "_available_memory", lambda: 64 << 20)
    with pytest.raises(ValueError, match="the exact table of 24 steps needs 0.1 GiB"):
        fc.synthetic.and_failure(0.3, n_steps=24).table()


def test_derangement_refuses_what_cannot_fit(monkeypatch):
    """Mutant: the permutation of n = 2**32 (32 GiB) allocated unchecked:
    NumPy's MemoryError, or the machine thrashing, instead of an error
    naming n."""
    monkeypatch.setattr(_validation, "_available_memory", lambda: 16 << 30)
    with pytest.raises(ValueError, match=r"n = 4,294,967,296 .* needs 32\.0 GiB, more than"):
        fc.derangement(2**32)
