"""The catalogue behind tests/test_fuzz.py.

1. **Discovery.** Every public callable: the names in ``__all__`` of fastcredit
   and of each public submodule (a module without ``__all__``: its
   non-underscore names defined there), skipping modules, constants, exception
   classes and result classes (dataclasses with required fields); classes
   that validate (``Pools``, ``UCT``, ``ScoreConfig``, ...) are constructors,
   and public methods of public classes are targets too.
2. **A valid call** of each, from ``inspect.signature`` and the table of
   valid examples keyed by *parameter name* (``EXAMPLES``; an entry may look at
   the sibling parameters through ``Ctx.has``). ``OVERRIDES`` (by
   ``target.param``) and ``BASE`` (optional parameters a call needs) exist for
   the few names that mean different things. A new public function needs no
   edit here when its required parameters have entries.
3. **The malformed catalogue**, generated per parameter from its valid value
   (dtypes, shapes, strides, read-only, unaligned, byte order, non-finite
   values, out-of-range and huge integers, wrong types, unknown options, bad
   callables and paths) plus call-level variants: two parameters sharing one
   array, or interleaved in one buffer, or overlapping by one element (the
   answer of their copies: inputs are never written); ``out=`` aliasing or
   partly overlapping an input, or the buffer of an input the function
   converts on the way in (another dtype, a strided view), which must be
   refused with that input unchanged. Each variant says what is acceptable
   (``Case.expect``):

   * ``refuse``: a ValueError/TypeError naming the parameter;
   * ``equal``: that, or success equal to the call on the repaired input;
   * ``any``: that, or success (a valid input for all we know);

   and for every outcome: no crash, no other exception type, no hang, inputs
   not modified, ``out`` returned when given, no NaN from finite input where
   the valid call has none.
4. **Workers.** Cases run in long-lived subprocesses (``python
   tests/fuzz_catalogue.py --worker``) fed over a pipe, one target group at a
   time, under an address-space limit (a huge allocation is a MemoryError, not
   a swapped machine); a worker killed by a signal is a crash of the case it
   was running, and it is restarted for the rest.
"""
from __future__ import annotations

import contextlib
import dataclasses
import importlib
import inspect
import io
import math
import os
import pathlib
import pickle
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import traceback
import types
from typing import Callable

import numpy as np

HERE = pathlib.Path(__file__).resolve()

PUBLIC_MODULES = ("fastcredit", "fastcredit.audit", "fastcredit.synthetic", "fastcredit.games",
                  "fastcredit.learning", "fastcredit.replay", "fastcredit.treesearch",
                  "fastcredit.scoring", "fastcredit.dask", "fastcredit.shapiq", "fastcredit.cli",
                  "fastcredit.trl")

# Public callables discovered (so the discovery test sees them covered) but
# given no cases, with the reason. A trainer needs a model, a dataset and a
# trainer config per call; tests/test_trl.py builds it on a tiny model, and
# its own options are CreditShaping's, fuzzed here.
NOT_FUZZED = {"fastcredit.trl.CreditGRPOTrainer":
              "a TRL GRPOTrainer (model, datasets, config): tests/test_trl.py; its options "
              "are fastcredit.trl.CreditShaping's",
              "fastcredit.treesearch.RunLedger":
              "a record the engine returns (its fields default to zero so that a run's "
              "ledger starts from RunLedger()); its add_tree is fuzzed"}

# --------------------------------------------------------------------------
# 1. discovery
# --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Target:
    """A public callable: a function, a class constructor or a method."""

    name: str                 # "fastcredit.shapley", "fastcredit.UCT", "fastcredit.UCT.tell"
    kind: str                 # "function" | "class" | "method"
    owner: str | None = None  # a method's class, by its target-style name
    bound: bool = False       # a classmethod/staticmethod: no instance needed

    @property
    def cls_name(self) -> str | None:
        return self.owner.rsplit(".", 1)[1] if self.owner else None


# A module without __all__ whose public interface is narrower than its
# non-underscore names: the command line's helpers (compute_demo, report_demo,
# DemoResult, ...) are the implementation of ``main``.
PUBLIC_WITHOUT_ALL = {"fastcredit.cli": ("main", "write_synthetic")}


def public_names(module) -> list[str]:
    names = getattr(module, "__all__", None)
    if names is None and module.__name__ in PUBLIC_WITHOUT_ALL:
        names = PUBLIC_WITHOUT_ALL[module.__name__]
    if names is None:
        names = sorted(n for n, obj in vars(module).items() if not n.startswith("_")
                       and getattr(obj, "__module__", None) == module.__name__)
    return list(names)


# Dataclasses with required fields that users build and that validate them
# (not records the library returns): constructors to fuzz.
CONSTRUCTORS = {"Agent", "Resample", "ForceAction", "ReplaceObservation", "EditContext",
                "SwapPolicy", "Compose"}


def _is_result_class(cls) -> bool:
    """A record the library returns: a dataclass with required fields. (A
    dataclass whose every field has a default, like ScoreConfig, is a
    configuration users build, and a constructor to fuzz, as are the
    CONSTRUCTORS.)"""
    if not dataclasses.is_dataclass(cls):
        return False
    if cls.__name__ in CONSTRUCTORS and cls.__module__.startswith("fastcredit."):
        return False
    return any(f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
               for f in dataclasses.fields(cls))


def _public_methods(cls):
    seen, out = set(), []
    for klass in cls.__mro__:
        if not klass.__module__.startswith("fastcredit"):
            continue
        for name, attr in vars(klass).items():
            if name.startswith("_") or name in seen:
                continue
            if isinstance(attr, (classmethod, staticmethod)):
                seen.add(name)
                out.append((name, attr.__func__, True))
            elif inspect.isfunction(attr):
                seen.add(name)
                out.append((name, attr, False))
    return out


def discover(skipped: dict | None = None) -> dict[str, Target]:
    """name -> Target for every public callable, each object under the first
    name it is found by (``fastcredit.alignment``, not ``fastcredit.audit.alignment``)."""
    seen, targets = set(), {}
    for modname in PUBLIC_MODULES:
        try:
            module = importlib.import_module(modname)
        except ImportError as exc:           # an optional extra that is not installed
            if skipped is not None:
                skipped[modname] = repr(exc)
            continue
        for name in public_names(module):
            obj = getattr(module, name)
            if isinstance(obj, types.ModuleType) or not callable(obj) or id(obj) in seen:
                continue
            if isinstance(obj, type) and issubclass(obj, BaseException):
                continue
            seen.add(id(obj))
            qual = f"{modname}.{name}"
            if not isinstance(obj, type):
                targets[qual] = Target(qual, "function")
                continue
            if not _is_result_class(obj):
                targets[qual] = Target(qual, "class")
            for mname, fn, bound in _public_methods(obj):
                if id(fn) not in seen:
                    seen.add(id(fn))
                    targets[f"{qual}.{mname}"] = Target(f"{qual}.{mname}", "method", qual, bound)
    return targets


def resolve(dotted: str):
    """The object named by a dotted path (module prefix, then attributes)."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        if i == len(parts) and i > 1:
            # a package's function that shadows its submodule of the same name
            # (fastcredit.interactions) is what the name means
            obj = getattr(importlib.import_module(".".join(parts[:-1])), parts[-1], obj)
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)


def parameters(target: Target) -> list[inspect.Parameter]:
    """The target's named parameters (no self, *args, **kwargs)."""
    if target.kind == "method":
        fn = resolve(target.name)
        sig = inspect.signature(fn)     # bound for classmethods; has self otherwise
        params = list(sig.parameters.values())
        if not target.bound and not inspect.ismethod(fn):
            params = params[1:]
    else:
        params = list(inspect.signature(resolve(target.name)).parameters.values())
    return [p for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


# --------------------------------------------------------------------------
# 2. valid examples, keyed by parameter name
# --------------------------------------------------------------------------

B, M = 4, 3                      # 4 games / rows / requests of m = 3 players / actions
OFF12 = [0, 4, 8, 12]            # 3 groups of 4 over 12 flat values


class Ctx:
    """What an example may look at: the target, its parameter names, a scratch
    directory (fresh paths come from ``path``)."""

    def __init__(self, target: Target, params, tmp: pathlib.Path):
        self.target = target
        self.params = tuple(params)
        self.tmp = tmp
        self._n = 0

    def has(self, *names) -> bool:
        return any(n in self.params for n in names)

    def path(self, stem: str, suffix: str) -> str:
        self._n += 1
        return str(self.tmp / f"{stem}-{os.getpid()}-{self._n}{suffix}")

    def shared(self, key, make):
        """A file made once per scratch directory (an input parquet file)."""
        path = self.tmp / key
        if not path.exists():
            make(str(path))
        return str(path)


@dataclasses.dataclass
class With:
    """A valid value that needs other parameters set with it."""

    value: object
    also: dict


def _rng(k):
    return np.random.default_rng(7000 + k)


def _table(ctx=None):
    return _rng(1).normal(size=(B, 1 << M))


def _table1(ctx=None):
    return _rng(2).normal(size=1 << M)


def _vec12(k):
    return _rng(k).normal(size=12)


def _policy12(ctx=None):
    p = _rng(5).uniform(0.1, 1.0, size=12).reshape(3, 4)
    return (p / p.sum(1, keepdims=True)).reshape(-1)


POOL = dict(offsets=[0, 2, 3, 3, 5, 6, 8], ad_id=[1, 2, 1, 3, 2, 4, 1, 5],
            score=[3.0, 1.0, 2.5, 2.0, 1.5, 0.5, 2.2, 0.7],
            value=[1.0, 0.5, 1.0, 2.0, 0.3, 0.4, 1.1, 0.2],
            prerank=[0.3, 0.1, 0.2, 0.9, 0.5, 0.4, 0.8, 0.6])
PADDED_ID = [[[1, 2], [1, -1], [-1, -1]], [[3, 2], [4, -1], [1, 5]]]


def _padded(field):
    base = {"score": 1.0, "value": 0.5, "prerank": 0.1}[field]
    return base + np.arange(12, dtype=np.float64).reshape(2, 3, 2) / 10.0


def _pool_field(field):
    def make(ctx):
        if ctx.has("offsets"):
            return np.array(POOL[field], dtype=np.int64 if field == "ad_id" else np.float64)
        return np.array(PADDED_ID) if field == "ad_id" else _padded(field)
    return make


def _pools(ctx=None):
    import fastcredit as fc
    return fc.Pools(POOL["offsets"], POOL["ad_id"], POOL["score"], POOL["value"], m=M)


def mask_game(masks):
    """A vectorised game on uint64 masks (what table_from_function takes)."""
    masks = np.asarray(masks, dtype=np.uint64)
    return np.bitwise_count(masks).astype(np.float64) ** 2 + 0.1 * masks.astype(np.float64)


def bool_game(rows):
    """A vectorised game on bool coalition rows (n, m) (what shapiq games are)."""
    rows = np.asarray(rows)
    w = np.arange(1, rows.shape[-1] + 1, dtype=np.float64)
    return (rows * w).sum(-1) ** 1.5


def evaluate_fn(action):
    return 0.25 * float(action) + 0.5


def _parquet_source(ctx):
    from fastcredit.cli import write_synthetic
    return ctx.shared("requests.parquet", lambda p: write_synthetic(p, 6, m=M, k=4, seed=1,
                                                                     progress=False))


def _toy_values(ctx=None):
    """Set values of the 2 requests of M rewrites of POOL: rewrite 0 carries
    all the value."""
    return np.tile((np.arange(1 << M) & 1).astype(np.float64), (2, 1))


def _toy_features(ctx=None):
    return np.tile(np.eye(M)[:, :2], (2, 1, 1))


def _learning_task(ctx=None):
    from fastcredit import learning
    return learning.LearningTask.from_pools(_pools())


def _benchmark_result(ctx=None):
    from fastcredit import learning
    return learning.benchmark(_pools(), credits=("broadcast", "shapley"), m=1, runs=2, steps=2,
                              eval_samples=4)


def _demo_result(ctx):
    from fastcredit.cli import compute_demo
    return compute_demo(10, 0)


# --- counterfactual trees (fastcredit.treesearch) and the tree benchmark ---------
_MEMO: dict = {}


def _workflow_env(ctx=None):
    """The retrieval workflow as a JitEnvironment, one per worker: a prefix
    cache must be given with the environment it belongs to, and the trees
    compile once per environment."""
    if "env" not in _MEMO:
        from fastcredit.learning import workflow
        _MEMO["env"] = workflow.environment()
    return _MEMO["env"]


def _workflow_root(ctx=None):
    from fastcredit.learning import workflow
    return workflow.root(kind=1, level=2)


def _workflow_theta(ctx=None):
    from fastcredit.learning import workflow
    return _rng(40).normal(scale=0.5, size=workflow.N_FEATURES)


def _workflow_actor(ctx=None):
    import fastcredit as fc
    return fc.SoftmaxActor(_workflow_theta())


def _prefix_cache(ctx=None):
    import fastcredit as fc
    return fc.PrefixCache(_workflow_env(), _workflow_root())


def _workflow_fn(name):
    def make(ctx):
        from fastcredit.learning import workflow
        return getattr(workflow, name)
    return make


def _tree_benchmark_result(ctx=None):
    from fastcredit import learning
    return learning.tree_benchmark(methods=("asct_uct", "return"), runs=2, updates=2,
                                   episodes=2, budget=3, k=2, checkpoints=(1,))


def _ppo(field):
    """Six decision records of d = 3 features over at most 4 legal actions."""
    def make(ctx):
        rng = _rng(41)
        legal = np.array([2, 4, 3, 1, 4, 2])
        values = {"theta": rng.normal(scale=0.3, size=3),
                  "features": rng.normal(size=(6, 4, 3)),
                  "n_legal": legal, "actions": np.array([1, 0, 2, 0, 3, 1]),
                  "behaviour": np.array([0.5, 0.2, 0.4, 1.0, 0.3, 0.6]),
                  "advantages": rng.normal(size=6)}
        return values[field]
    return make


# --- causal agent replay (fastcredit.replay) -----------------------------------
def replay_policy(history, rng):
    """A random binary action from the step's stream."""
    return int(rng.integers(2))


def replay_tools(action, history, rng):
    return 10 * int(action) + history.step


def replay_outcome(trajectory) -> float:
    """A failure: two or more of the (three) actions were 1."""
    return float(sum(trajectory.actions) >= 2)


def replay_edit(history):
    import dataclasses as dc
    return dc.replace(history, initial="edited")


def _agent(ctx=None):
    from fastcredit.replay import Agent
    return Agent(replay_policy, replay_tools, replay_outcome, initial="task", max_steps=3)


def _record(ctx=None):
    from fastcredit.replay import record
    return record(_agent(), seed=3)


EXAMPLES: dict[str, object] = {
    # tables and games
    "v": lambda c: _table(),
    "train": lambda c: _table(),
    "audit": lambda c: _table() + _rng(23).normal(size=(B, 1 << M)) * 0.3,
    "a": lambda c: _vec12(3) if c.has("b") else _table(),
    "b": lambda c: _vec12(4),
    "weights": lambda c: np.array([1.0, 2.0, 0.5]),
    "m": M,
    "masks": lambda c: np.arange(1 << M),
    # a linkage matrix of the M = 3 players: 1 and 2 join, then 0
    "clustering": lambda c: np.array([[1.0, 2.0, 0.5, 2.0], [0.0, 3.0, 1.0, 3.0]]),
    # interactions
    "index": "SII",
    "order": 2,
    "penalty": 1e8,
    "k": 2,
    "players": lambda c: np.array([[0, 1], [1, 2], [0, 2]]),
    "fn": lambda c: mask_game,
    "game": lambda c: bool_game if c.has("n_players") else _table(),
    "coalitions": lambda c: np.array([[0, 0, 0], [1, 0, 1], [1, 1, 1], [0, 1, 0], [1, 1, 0]],
                                     dtype=bool),
    "table": lambda c: _table1(),
    "permutations": 64,
    "budget": 20,
    "tol": 0.05,
    "cache": True,
    "n_players": M,
    "random_state": 0,
    # auction
    "pools": _pools,
    "offsets": lambda c: np.array(POOL["offsets"] if c.has("ad_id") else OFF12),
    "ad_id": _pool_field("ad_id"),
    "score": _pool_field("score"),
    "value": lambda c: _pool_field("value")(c) if c.has("ad_id") else 0.5,
    "prerank": _pool_field("prerank"),
    "capacity": 2,
    # shaping
    "rewards": lambda c: np.array([1.0, 0.0, 0.5, 0.2, 0.9, 0.1, 0.3, 0.3]),
    "group_size": 4,
    "groups": lambda c: With(np.array([2, 0, 1, 0, 2, 1, 3, 3]), {"group_size": None}),
    # multi-turn sessions inside the group_size = 4 groups of "rewards"
    "sessions": lambda c: np.array([0, 0, 1, 1, 2, 2, 3, 3]),
    "turns": lambda c: With(np.array([0, 1, 1, 0, 0, 1, 0, 2]),
                            {"sessions": np.array([0, 0, 1, 1, 2, 2, 3, 3])}),
    "u": lambda c: _rng(6).normal(size=(B, M)),
    "kappa": 1.0,
    "lower": lambda c: With(np.array([-1.0, -2.0, -0.5]), {"kappa": None}),
    "upper": lambda c: With(np.array([1.0, 2.0, 0.5]), {"kappa": None}),
    "base": lambda c: np.array([0.5, -0.2, 0.1, 0.0]),
    "credit": lambda c: _vec12(7) if c.has("offsets") else _rng(8).normal(size=(B, M)),
    "reference": lambda c: _table() + _rng(9).normal(size=(B, 1 << M)) * 0.3 if c.has("v")
    else _rng(10).normal(size=(B, M)),
    "token_counts": lambda c: np.array([[1.0, 2, 3], [3, 1, 1], [2, 2, 0], [0, 4, 1]]),
    "action_adv": lambda c: _rng(11).normal(size=(B, M)),
    "token_action": lambda c: np.array([[-1, 0, 0, 1, 2, -1], [0, 1, 1, 2, -1, -1],
                                        [2, 2, -1, 0, 1, 1], [-1, -1, 0, 0, 0, 1]]),
    "mask": lambda c: np.array([[1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1],
                                [0, 1, 1, 1, 1, 1]], dtype=bool),
    # trees
    "n_actions": M,
    "costs": lambda c: np.array([0.0, 1.0, 2.0]),
    "q": lambda c: _vec12(12) if c.has("offsets") else 0.3,
    "pi": _policy12,
    "actions": lambda c: np.array([0, 1, 3]),
    "action": 1,
    "cost": 0.5,
    "evaluate": lambda c: evaluate_fn,
    # audit
    "a_replay": lambda c: _vec12(13),
    "x": lambda c: _vec12(14),
    "values": lambda c: _vec12(15),
    "resampled": lambda c: _rng(16).uniform(size=(3, 5)),
    "observed": 0.7,
    "n": 5,
    "successes": 3, "successes1": 3, "n1": 5, "successes2": 1, "n2": 5,
    "pvalues": lambda c: np.array([0.01, 0.04, 0.03, 0.5]),
    "factual": lambda c: _rng(17).uniform(size=(3, 4)),
    "alternative": lambda c: _rng(18).uniform(size=(3, 4)),
    "factual_offsets": lambda c: With(np.array(OFF12), {"factual": _vec12(19)}),
    "alternative_offsets": lambda c: With(np.array(OFF12), {"alternative": _vec12(20)}),
    # synthetic, integrations, command line
    "n_requests": 10,
    "threshold": 2,
    "seed": 0,
    "threads": 1,
    "backend": "c",
    "pairs": lambda c: __import__("fastcredit").pair_interactions(_table()),
    "result": _demo_result,
    "stream": lambda c: io.StringIO(),
    "batch": lambda c: __import__("fastcredit.scoring").scoring.pools_to_arrow(_pools()),
    "config": lambda c: __import__("fastcredit.scoring").scoring.ScoreConfig(m=M),
    "source": _parquet_source,
    "data": _parquet_source,
    "destination": lambda c: c.path("out", ".parquet"),
    # learning
    "task": _learning_task,
    "features": _toy_features,
    "policy": lambda c: __import__("fastcredit.learning").learning.Policy.initial(
        _learning_task()),
    "logits": lambda c: _rng(23).normal(size=(B, 5)),
    "argv": lambda c: ["synth", c.path("synth", ".parquet"), "--requests", "3", "--m", "3",
                       "--k", "4", "--seed", "1", "--row-group", "2"],
    # issue 32 (fastcredit.audit.paired, null)
    "first": lambda c: np.array([1, 1, 0, 1, 0, 0, 1, 1, 0, 1]),
    "second": lambda c: np.array([1, 0, 0, 1, 1, 0, 0, 1, 0, 0]),
    "y": lambda c: _vec12(31),
    "z": lambda c: _vec12(32),
    "covariates": lambda c: _vec12(33),
    "scores": lambda c: _rng(34).normal(size=(3, 8)),
    "worlds": 20,
    # issue 32 (fastcredit.audit.protocol): 12 steps in 3 trajectories of 4 (OFF12)
    "baseline_credit": lambda c: _vec12(35),
    "flagged": lambda c: np.array([1, 0, 0, 0, 0, 1, 0, 0, 1, 1, 0, 0], dtype=bool),
    "control_flagged": lambda c: np.array([0, 1, 0, 0, 1, 0, 0, 0, 0, 1, 0, 1], dtype=bool),
    "critical": lambda c: np.array([1, 0, 0, 1, 0, 1, 0, 0, 1, 0, 0, 0], dtype=bool),
    "confidence": lambda c: _rng(36).uniform(size=12),
    "thresholds": lambda c: np.array([0.0, 0.3, 0.7, 1.0]),
    "judge_cost": 2.0,
    "sizes": lambda c: np.array([10, 100, 1000]),
    "replays": lambda c: np.array([1, 3, 10]),
    "sd": 0.5,
    "power": 0.8,
    # issue 32 (fastcredit.audit.repeats): R = 4 noisy replays of each table
    "repeated": lambda c: _table()[:, None, :] + _rng(37).normal(size=(B, 4, 1 << M)) * 0.3,
    # counterfactual trees: the retrieval workflow (fastcredit.learning.workflow)
    "env": _workflow_env,
    "root": _workflow_root,
    "state": _workflow_root,
    "prefix": lambda c: np.array([0, 1]),
    "prefixes": lambda c: [[], [0, 1]],
    "actor": _workflow_actor,
    "theta": _workflow_theta,
    "max_actions": 5,
    "n_features": 50,
    "t": 2,
    "q_hat": lambda c: np.array([0.5, np.nan, 1.5, -0.2]),
    "utility": lambda c: np.array([1.0, -0.5, 2.0]),
    # PPO on decision records
    "n_legal": _ppo("n_legal"),
    "behaviour": _ppo("behaviour"),
    "advantages": _ppo("advantages"),
    # causal agent replay
    "agent": _agent,
    "record": _record,
    "intervention": lambda c: __import__("fastcredit.replay").replay.Resample(1),
    "edit": lambda c: replay_edit,
}

# Where one name means something else, by "target.param".
OVERRIDES: dict[str, object] = {
    "fastcredit.interactions.index": "FSII",     # the index that takes a penalty
    "fastcredit.shapiq.TableGame.v": lambda c: _table1(),
    "fastcredit.shapiq.PermutationSamplingSV.approximate.game": lambda c: bool_game,
    "fastcredit.shapiq.PermutationSamplingSII.approximate.game": lambda c: bool_game,
    "fastcredit.shapiq.PermutationSamplingSTII.approximate.game": lambda c: bool_game,
    "fastcredit.shapiq.KernelSHAP.approximate.game": lambda c: bool_game,
    # the approximator family (issue 27): values of order 1; shapiq's drop-ins over it
    "fastcredit.approximate.index": "SV",
    "fastcredit.approximate.order": 1,
    "fastcredit.shapiq.SVARM.approximate.game": lambda c: bool_game,
    "fastcredit.shapiq.StratifiedSamplingSV.approximate.game": lambda c: bool_game,
    "fastcredit.shapiq.OwenSamplingSV.approximate.game": lambda c: bool_game,
    "fastcredit.shapiq.SHAPIQ.approximate.game": lambda c: bool_game,
    "fastcredit.shapiq.SVARMIQ.approximate.game": lambda c: bool_game,
    "fastcredit.shapiq.UnbiasedKernelSHAP.approximate.game": lambda c: bool_game,
    "fastcredit.shapiq.SHAPIQ.index": "k-SII",
    "fastcredit.shapiq.SVARMIQ.index": "k-SII",
    "fastcredit.shapiq.SHAPIQ.max_order": 2,
    "fastcredit.shapiq.SVARMIQ.max_order": 2,
    "fastcredit.shapiq.SVARM.index": "SV",
    # the regression group's drop-ins (k-SII / SII at order 2 by default)
    "fastcredit.shapiq.KernelSHAPIQ.approximate.game": lambda c: bool_game,
    "fastcredit.shapiq.InconsistentKernelSHAPIQ.approximate.game": lambda c: bool_game,
    "fastcredit.shapiq.kADDSHAP.approximate.game": lambda c: bool_game,
    "fastcredit.shapiq.RegressionFSII.approximate.game": lambda c: bool_game,
    "fastcredit.shapiq.RegressionFBII.approximate.game": lambda c: bool_game,
    "fastcredit.shapiq.KernelSHAPIQ.index": "k-SII",
    "fastcredit.shapiq.InconsistentKernelSHAPIQ.index": "k-SII",
    "fastcredit.shapiq.KernelSHAPIQ.max_order": 2,
    "fastcredit.shapiq.InconsistentKernelSHAPIQ.max_order": 2,
    "fastcredit.shapiq.kADDSHAP.max_order": 2,
    "fastcredit.shapiq.RegressionFSII.max_order": 2,
    "fastcredit.shapiq.RegressionFBII.max_order": 2,
    "fastcredit.shapiq.SPEX.approximate.game": lambda c: bool_game,
    "fastcredit.shapiq.SPEX.approximate.budget": 2000,
    "fastcredit.shapiq.SPEX.max_order": 2,
    "fastcredit.shapiq.ProxySPEX.approximate.game": lambda c: bool_game,
    "fastcredit.shapiq.ProxySPEX.approximate.budget": 8,
    "fastcredit.shapiq.ProxySPEX.max_order": 2,
    "fastcredit.shapiq.ExactComputer.game": lambda c: bool_game,
    "fastcredit.shapiq.PermutationSamplingSII.index": "SII",
    "fastcredit.shapiq.PermutationSamplingSTII.max_order": 2,
    "fastcredit.shapiq.PermutationSamplingSTII.approximate.budget": 40,
    "fastcredit.shapiq.PermutationSamplingSII.approximate.budget": 40,
    "fastcredit.dask.score_parquet.destination": lambda c: c.path("scored", ".dir"),
    # per completion of the (4, 6) "mask": None or (token_action, credit); m varies
    "fastcredit.trl.CreditShaping.advantages.credits": lambda c: [
        (np.array([-1, 0, 0, 1, 2, -1]), np.array([0.5, 2.0, -1.0])), None,
        (np.array([1, 1, 0]), np.array([1.0, 3.0])),
        (np.array([0, 1, 2, 3, 0, -1]), np.array([0.1, 0.2, 0.3, 0.4]))],
    "fastcredit.trl.CreditShaping.credit_rule": "shapley",
    "fastcredit.scoring.ScoreConfig.base": "base_advantage",
    "fastcredit.contrastive_effects.offsets":
        lambda c: With(np.array(OFF12), {"resampled": _rng(21).uniform(size=12)}),
    "fastcredit.learning.LearningTask.values": _toy_values,
    "fastcredit.learning.LearningTask.requests.start": 0,
    "fastcredit.learning.LearningTask.requests.stop": 1,
    "fastcredit.learning.plackett_luce.weights": lambda c: _rng(24).normal(size=(B, 2)),
    # the ranked actions of each row (EXAMPLES' "order" is an interaction order)
    "fastcredit.learning.plackett_luce.order": lambda c: np.array([[4, 0], [1, 2], [3, 4],
                                                                  [0, 1]]),
    "fastcredit.learning.train_policy.m": 1,
    "fastcredit.learning.train_policy.steps": 2,
    "fastcredit.learning.train_policy.batch": 2,
    "fastcredit.learning.policy_value.m": 1,
    "fastcredit.learning.benchmark.m": 1,
    "fastcredit.learning.benchmark.steps": 2,
    "fastcredit.learning.benchmark.runs": 1,
    "fastcredit.learning.benchmark.eval_samples": 4,
    "fastcredit.learning.benchmark_pools.rewrites": 4,
    "fastcredit.learning.Policy.after.updates": 1,
    # issue 32: the paired tests take a 2 x 2 table of counts
    "fastcredit.mcnemar.table": lambda c: np.array([[5, 3], [1, 6]]),
    "fastcredit.paired_proportion_interval.table": lambda c: np.array([[5, 3], [1, 6]]),
    # dose matching: the reference is per-step credit over the same trajectories
    "fastcredit.dose_match.reference": lambda c: _vec12(37),
    # the counterfactual-tree engine: "n_actions", "step", "utility", "features",
    # "cost", "q" and "pi" mean other things elsewhere
    "fastcredit.JitEnvironment.n_actions": _workflow_fn("n_actions"),
    "fastcredit.JitEnvironment.step": _workflow_fn("step"),
    "fastcredit.JitEnvironment.utility": _workflow_fn("utility"),
    "fastcredit.JitEnvironment.features": _workflow_fn("features"),
    "fastcredit.JitEnvironment.step_cost": _workflow_fn("step_cost"),
    "fastcredit.counterfactual_tree.cache": _prefix_cache,
    "fastcredit.treesearch.monte_carlo_value.cache": _prefix_cache,
    "fastcredit.treesearch.monte_carlo_value.k": 4,
    "fastcredit.treesearch.j_search.q": lambda c: np.array([1.0, 0.0, 2.0, 0.5]),
    "fastcredit.treesearch.j_search.pi": lambda c: np.array([0.1, 0.2, 0.3, 0.4]),
    "fastcredit.treesearch.centring_sign_flips.q": lambda c: np.array([0.0, 3.0, 5.0, 1.0]),
    "fastcredit.treesearch.centring_sign_flips.pi": lambda c: np.array([0.1, 0.1, 0.6, 0.2]),
    "fastcredit.treesearch.cost_adjusted_value.cost": lambda c: np.array([10.0, 0.0, 4.0]),
    "fastcredit.treesearch.repeatability.repeats": 3,
    "fastcredit.treesearch.RunLedger.add_tree.ledger": lambda c: __import__(
        "fastcredit").counterfactual_tree(_workflow_env(), _workflow_root(), budget=6).ledger,
    # PPO: "theta", "features" and "actions" mean other things elsewhere
    "fastcredit.learning.ppo_objective.theta": _ppo("theta"),
    "fastcredit.learning.ppo_objective.features": _ppo("features"),
    "fastcredit.learning.ppo_objective.actions": _ppo("actions"),
    "fastcredit.learning.ppo_update.theta": _ppo("theta"),
    "fastcredit.learning.ppo_update.features": _ppo("features"),
    "fastcredit.learning.ppo_update.actions": _ppo("actions"),
    "fastcredit.learning.ppo_update.epochs": 2,
    # the tree benchmark at a size that runs in milliseconds (its default: ~50 s)
    "fastcredit.learning.tree_benchmark.methods": ("asct_uct", "return"),
    "fastcredit.learning.tree_benchmark.runs": 1,
    "fastcredit.learning.tree_benchmark.updates": 2,
    "fastcredit.learning.tree_benchmark.episodes": 1,
    "fastcredit.learning.tree_benchmark.budget": 3,
    "fastcredit.learning.tree_benchmark.k": 2,
    "fastcredit.learning.tree_benchmark.checkpoints": (1,),
    # causal agent replay: actions and observations are any values (strings
    # here: a string is never a malformed one); "policy", "env" and "steps"
    # mean other things elsewhere
    "fastcredit.replay.Agent.policy": lambda c: replay_policy,
    "fastcredit.replay.Agent.env": lambda c: replay_tools,
    "fastcredit.replay.Agent.outcome": lambda c: replay_outcome,
    "fastcredit.replay.Agent.initial": "task",
    "fastcredit.replay.History.then.action": "search",
    "fastcredit.replay.History.then.observation": "found",
    "fastcredit.replay.Resample.step": 1,
    "fastcredit.replay.ForceAction.step": 1,
    "fastcredit.replay.ForceAction.action": "escalate",
    "fastcredit.replay.ReplaceObservation.step": 1,
    "fastcredit.replay.ReplaceObservation.observation": "timeout",
    "fastcredit.replay.EditContext.step": 1,
    "fastcredit.replay.SwapPolicy.step": 1,
    "fastcredit.replay.SwapPolicy.policy": lambda c: replay_policy,
    "fastcredit.replay.Hold.steps": (0, 2),
    "fastcredit.replay.Compose.parts": lambda c: (
        __import__("fastcredit.replay").replay.Resample(1),
        __import__("fastcredit.replay").replay.ForceAction(2, "escalate")),
    "fastcredit.replay.shapley.permutations": 8,
    # the outcome range (permutation_shapley's bounds take stochastic games only)
    "fastcredit.replay.shapley.bounds": (0.0, 1.0),
    "fastcredit.replay.StepGame.bounds": (0.0, 1.0),
    "fastcredit.replay.contrastive.samples": 6,
    "fastcredit.replay.contrastive.resamples": 200,
}

# Optional parameters the valid call needs.
BASE: dict[str, tuple] = {
    "fastcredit.interactions": ("index",),
    "fastcredit.Pools": ("m",),
    "fastcredit.group_advantages": ("group_size",),
    "fastcredit.project_zero_sum": ("kappa",),
    "fastcredit.actor_centered_credit": ("pi", "offsets"),
    "fastcredit.shapiq.exact_values": ("n_players",),
    "fastcredit.shapiq.ExactComputer": ("n_players",),
    "fastcredit.cli.main": ("argv",),
    # the example requests have M actions: the default ScoreConfig (m = 5) is refused
    "fastcredit.scoring.score_parquet": ("config",),
    "fastcredit.dask.score": ("config",),
    "fastcredit.dask.score_parquet": ("config",),
    "fastcredit.learning.train_policy": ("m", "steps", "batch"),
    "fastcredit.learning.policy_value": ("m",),
    "fastcredit.learning.benchmark": ("m", "steps", "runs", "eval_samples"),
    "fastcredit.counterfactual_tree": ("root", "prefix", "actor"),
    "fastcredit.decision_records": ("actor",),
    "fastcredit.treesearch.monte_carlo_value": ("root", "prefix", "actor", "k"),
    "fastcredit.treesearch.exact_q": ("prefix", "actor"),
    "fastcredit.treesearch.repeatability": ("actor", "repeats"),
    "fastcredit.learning.ppo_update": ("epochs",),
    "fastcredit.learning.tree_benchmark": ("methods", "runs", "updates", "episodes", "budget",
                                           "k", "checkpoints"),
    "fastcredit.replay.Agent": ("initial",),
    "fastcredit.replay.Hold": ("steps",),
    "fastcredit.replay.shapley": ("permutations",),
    "fastcredit.replay.contrastive": ("samples", "resamples"),
}

# An instance for the methods of a class, by class name.
INSTANCES: dict[str, Callable] = {
    "AgentUCT": lambda c: __import__("fastcredit").AgentUCT(M, [0.0, 1.0, 2.0], seed=0),
    "UCT": lambda c: __import__("fastcredit").UCT(M, seed=0),
    "Uniform": lambda c: __import__("fastcredit").Uniform(M, seed=0),
    "ShapleyEstimate": lambda c: __import__("fastcredit").permutation_shapley(
        _table(), permutations=64, backend="c"),
    "BootstrapCI": lambda c: __import__("fastcredit").bootstrap_median(_vec12(22),
                                                                       resamples=500),
    "TrajectorySCM": lambda c: __import__("fastcredit.synthetic").synthetic.and_failure(),
    # seeded: the harness compares a call with the same call on repaired input
    "PermutationSamplingSV": lambda c: resolve("fastcredit.shapiq.PermutationSamplingSV")(
        M, random_state=0),
    "PermutationSamplingSII": lambda c: resolve("fastcredit.shapiq.PermutationSamplingSII")(
        M, random_state=0),
    "PermutationSamplingSTII": lambda c: resolve("fastcredit.shapiq.PermutationSamplingSTII")(
        M, 2, random_state=0),
    "KernelSHAP": lambda c: resolve("fastcredit.shapiq.KernelSHAP")(M, random_state=0),
    "SVARM": lambda c: resolve("fastcredit.shapiq.SVARM")(M, random_state=0),
    "SHAPIQ": lambda c: resolve("fastcredit.shapiq.SHAPIQ")(M, random_state=0),
    "SVARMIQ": lambda c: resolve("fastcredit.shapiq.SVARMIQ")(M, random_state=0),
    "UnbiasedKernelSHAP": lambda c: resolve("fastcredit.shapiq.UnbiasedKernelSHAP")(
        M, random_state=0),
    "StratifiedSamplingSV": lambda c: resolve("fastcredit.shapiq.StratifiedSamplingSV")(
        M, random_state=0),
    "KernelSHAPIQ": lambda c: resolve("fastcredit.shapiq.KernelSHAPIQ")(M, random_state=0),
    "InconsistentKernelSHAPIQ": lambda c: resolve(
        "fastcredit.shapiq.InconsistentKernelSHAPIQ")(M, random_state=0),
    "kADDSHAP": lambda c: resolve("fastcredit.shapiq.kADDSHAP")(M, random_state=0),
    "RegressionFSII": lambda c: resolve("fastcredit.shapiq.RegressionFSII")(M, random_state=0),
    "RegressionFBII": lambda c: resolve("fastcredit.shapiq.RegressionFBII")(M, random_state=0),
    "SPEX": lambda c: resolve("fastcredit.shapiq.SPEX")(n=M, max_order=2, random_state=0),
    "ProxySPEX": lambda c: resolve("fastcredit.shapiq.ProxySPEX")(n=M, max_order=2,
                                                                  random_state=0),
    "OwenSamplingSV": lambda c: resolve("fastcredit.shapiq.OwenSamplingSV")(M,
                                                                            random_state=0),
    "TableGame": lambda c: resolve("fastcredit.shapiq.TableGame")(_table1()),
    "DemoResult": _demo_result,
    "CreditShaping": lambda c: resolve("fastcredit.trl.CreditShaping")(),
    "LearningTask": _learning_task,
    "Policy": lambda c: __import__("fastcredit.learning").learning.train_policy(
        __import__("fastcredit.learning").learning.LearningTask(_toy_values(), _toy_features()),
        m=1, steps=2, batch=2, evaluator="rerun"),
    "BenchmarkResult": _benchmark_result,
    "JitEnvironment": _workflow_env,
    "PrefixCache": _prefix_cache,
    "SoftmaxActor": _workflow_actor,
    "TreeBenchmarkResult": _tree_benchmark_result,
    "RunLedger": lambda c: __import__("fastcredit.treesearch").treesearch.RunLedger(3, 3.0),
    "History": lambda c: __import__("fastcredit.replay").replay.History("task", (1,), (10,)),
    "StepGame": lambda c: __import__("fastcredit.replay").replay.StepGame(_record(), seed=1),
}

# Parameters whose objects a call may legitimately change.
MUTABLE = {"out", "stream", "progress", "destination"}
# Parameters naming files; OSError naming the path is an acceptable refusal.
PATHS = {"source", "destination", "data"}
# Result fields that differ between identical calls.
VOLATILE = {"seconds", "peak_rss_bytes", "started", "times", "game_id"}
# Result fields documented to be NaN for valid input.
NAN_FIELDS = {"resolution"}
# Counts of work, not of memory (by name or "target.param"): a huge one is a
# long run, not a defect, so huge values are not tried.
WORK_COUNTS = {"permutations", "budget", "fastcredit.cli.write_synthetic.n_requests",
               "steps", "runs", "group", "samples", "eval_samples",
               "fastcredit.learning.benchmark_pools.n_requests"}
# Targets documented to return NaN for degenerate but finite input (short or
# constant trajectories, constant references): no NaN check on their results
# beyond comparisons with a repaired input.
NAN_DOCUMENTED = {"fastcredit.alignment", "fastcredit.alignment_controls",
                  "fastcredit.within_spearman", "fastcredit.spearman_audit",
                  "fastcredit.audit_controls", "fastcredit.evaluator_fidelity",
                  "fastcredit.replay_advantage", "fastcredit.contrastive_effects",
                  "fastcredit.ShapleyEstimate.ci", "fastcredit.BootstrapCI.pvalue",
                  "fastcredit.interaction_distribution", "fastcredit.edge_agreement",
                  "fastcredit.pair_agreement", "fastcredit.calibration",
                  "fastcredit.size_agreement", "fastcredit.rule_agreement",
                  # an empty magnitude bin, a request with no nonzero credit: NaN
                  "fastcredit.fidelity_by_magnitude", "fastcredit.split_half_consistency",
                  "fastcredit.noise_scale",   # the sd of no requests: NaN
                  # a statistic with an empty denominator (every edge within atol)
                  "fastcredit.correlated_error_null"}
# Documented equivalents: an error about "target.param" may name these instead.
EQUIVALENT = {"fastcredit.token_counts.m": ("token_action",)}
# Where one parameter name has another documented range (lo, hi, finite, choices).
RANGE_OVERRIDES = {"fastcredit.project_zero_sum.kappa": (0.0, None, False, None),
                   "fastcredit.derangement.n": (2, 2**32, True, None),
                   "fastcredit.shapiq.exact_values.index": (None, None, True, ("SV", "BV")),
                   "fastcredit.subset_players.k": (0, None, True, None),
                   # _params.PPO_UPDATES is the tree benchmark's (>= 1); a Policy after 0
                   # updates is the initial one
                   "fastcredit.learning.Policy.after.updates": (0, None, True, None),
                   # _params.TREE_BUDGET is a tree's (>= 1 trial); an allocator's run
                   # may spend none
                   "fastcredit.AgentUCT.run.budget": (0, None, True, None)}


def _declarations() -> dict:
    """name -> (lo, hi, finite, choices) from the _params declarations and the
    module-level ones of the public modules; ranges of a shared name are
    merged (m: 1..30 tables, 1..16 auction, 1..4096 functions)."""
    from fastcredit import _params
    mods = [_params]
    for name in ("fastcredit.games", "fastcredit.scoring", "fastcredit.cli"):
        try:
            mods.append(importlib.import_module(name))
        except ImportError:
            pass
    out = {}
    for mod in mods:
        for decl in vars(mod).values():
            if isinstance(decl, (_params.Integer, _params.Real)):
                lo, hi = decl.lo, decl.hi
                fin = getattr(decl, "finite", True)
                choices = None
                if decl.name in out:   # a number of one function, an option of another (kind)
                    plo, phi, pfin, choices = out[decl.name]
                    lo = None if lo is None or plo is None else min(lo, plo)
                    hi = None if hi is None or phi is None else max(hi, phi)
                    fin = fin and pfin
                out[decl.name] = (lo, hi, fin, choices)
            elif isinstance(decl, _params.Options):
                prev = out.get(decl.name, (None, None, True, ()))[3] or ()
                out[decl.name] = (None, None, True, tuple(prev) + tuple(decl.values))
    return out


# Documented ranges of parameters that _params does not declare (docstrings).
RANGES = {
    "level": (0.0, 1.0, True, None), "alpha": (0.0, 1.0, True, None),
    "eps": (0.0, None, True, None), "atol": (0.0, None, True, None),
    "resamples": (1, None, True, None), "min_steps": (2, None, True, None),
    "n": (1, None, True, None), "n_actions": (1, 2**32, True, None),
    "c": (0.0, None, True, None), "c_tok": (0.0, None, True, None),
    "cost": (0.0, None, True, None), "value": (None, None, True, None),
    "budget": (0, 2**62, True, None), "permutations": (1, 2**62, True, None),
    "tol": (0.0, None, True, None), "min_samples": (2, None, True, None),
    "chunk": (1, None, True, None), "ddof": (0, 1, True, None),
    "group_size": (1, None, True, None), "n_requests": (0, None, True, None),
    "start": (0, 2**60, True, None), "catalogue": (1, None, True, None),
    "topics": (1, None, True, None), "empty": (0.0, 1.0, True, None),
    "short": (0.0, 1.0, True, None), "n_steps": (1, 64, True, None),
    "noise": (0.0, 16.0, True, None), "bid_scale": (0.0, None, True, None),
    "pivot": (0, 63, True, None), "threshold": (0, None, True, None),
    "stream": (0, None, True, None), "action": (0, None, True, None),
    "successes": (0, None, True, None), "successes1": (0, None, True, None),
    "successes2": (0, None, True, None), "n1": (1, None, True, None),
    "n2": (1, None, True, None), "null": (None, None, True, None),
    "first_row": (0, None, True, None), "max_errors_kept": (0, None, True, None),
    "n_players": (1, 30, True, None), "max_table_players": (1, 30, True, None),
    "total": (None, None, True, None),
    "index": (None, None, True, ("SV", "BV")),
    "rules": (None, None, True, ("shapley", "banzhaf", "singleton", "leave_one_out")),
    "shaping_rule": (None, None, True, ("shapley", "banzhaf", "singleton", "leave_one_out")),
    "credits": (None, None, True, ("broadcast", "singleton", "leave_one_out", "banzhaf",
                                   "shapley")),
    "eval_samples": (1, 1 << 16, True, None), "stop": (0, None, True, None),
    "updates": (0, None, True, None),
}


_DECL = None


def declared(name, target: str | None = None):
    global _DECL
    if _DECL is None:
        _DECL = {**RANGES, **_declarations()}
    if target and f"{target}.{name}" in RANGE_OVERRIDES:
        return RANGE_OVERRIDES[f"{target}.{name}"]
    return _DECL.get(name)


# --------------------------------------------------------------------------
# 3. the catalogue
# --------------------------------------------------------------------------

REFUSE, EQUAL, ANY, VALID = "refuse", "equal", "any", "valid"
_MISSING = object()


class FuzzUserError(Exception):
    """Raised by the catalogue's misbehaving user callables."""


@dataclasses.dataclass
class Variant:
    name: str
    expect: str
    make: Callable            # valid value -> malformed value
    repair: Callable | None = None   # malformed value -> the value it stands for
    tol: str = "exact"        # "exact" | "f32" | "f16"
    nonfinite: bool = False   # puts NaN/inf into the input
    allow: tuple = ()         # extra acceptable exception types
    reshapes: bool = False    # changes a shape: an error may name the parameter it
    #                           no longer matches (weights for a longer v)


@dataclasses.dataclass
class Case:
    id: str
    target: Target
    param: str | None
    variant: Variant | None
    backend: str | None = None
    kind: str = "param"       # "valid" | "example" | "param" | "alias" | "out"
    other: str | None = None  # the second parameter of alias/out cases
    overlap: str = ""         # out: "same" | "partial" | a CONVERTED label;
    #                           alias: "" (one array) | "interleaved" | "overlapping"


def _copy(x):
    if isinstance(x, np.ndarray):
        return x.copy()
    if isinstance(x, list):
        return [_copy(y) for y in x]
    return x


def _insert(x, value):
    y = np.array(x, dtype=np.float64 if x.dtype.kind in "biu" else x.dtype, copy=True)
    if y.size:
        y.flat[y.size // 2] = value
    return y


def _set_int(x, value, dtype=None):
    y = np.array(x, dtype=dtype or x.dtype, copy=True)
    if y.size:
        y.flat[y.size // 2] = value
    return y


def _strided(x):
    big = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), dtype=x.dtype) if x.ndim else None
    if big is None:
        return x.copy()
    big[..., ::2] = x
    return big[..., ::2]


def place(value, stride, out_shape=(), out_dtype=None, out_at=0):
    """``value`` copied into a fresh buffer one element every ``stride``
    bytes from byte 0 (a C-order view, contiguous when ``stride`` is its
    itemsize), and with ``out_dtype`` a C-contiguous ``out`` of
    ``out_shape`` at byte ``out_at`` of the same buffer: (input, out or None)."""
    value = np.asarray(value)
    n_out = math.prod(out_shape) * np.dtype(out_dtype).itemsize if out_dtype else 0
    raw = np.zeros(max(value.size * stride, out_at + n_out) + 8, dtype=np.uint8)
    strides = [stride] * value.ndim
    for i in range(value.ndim - 2, -1, -1):
        strides[i] = strides[i + 1] * value.shape[i + 1]
    inp = np.ndarray(value.shape, value.dtype, buffer=raw, strides=strides)
    inp[...] = value
    out = np.ndarray(out_shape, out_dtype, buffer=raw, offset=out_at) if out_dtype else None
    return inp, out


def converted(x):
    """(label, value, stride): ``x`` as a function converts it on the way in,
    laid out by :func:`place` (each an input whose memory a converted copy
    no longer shows): another dtype, contiguous, and x itself every other
    element."""
    kind = x.dtype.kind
    other = {"f": [("float32", x.astype(np.float32)), ("int64", np.round(x * 2).astype(np.int64))],
             "i": [("int32", x.astype(np.int32))], "u": [("int32", x.astype(np.int32))],
             "b": [("uint8", x.astype(np.uint8))]}.get(kind, [])
    return [(label, y, y.itemsize) for label, y in other] + [("strided", x, 2 * x.itemsize)]


def share(a, b, how):
    """Arrays a and b (one dtype) in one buffer, (a view, b view) with their
    values: every other element each ("interleaved": disjoint, extents
    overlapping), or b starting on a's last element ("overlapping": b's first
    value becomes a's last)."""
    na, nb = a.size, b.size
    if how == "interleaved":
        buf = np.zeros(2 * max(na, nb), dtype=a.dtype)
        av, bv = buf[0::2][:na].reshape(a.shape), buf[1::2][:nb].reshape(b.shape)
    else:
        buf = np.zeros(na + nb - 1, dtype=a.dtype)
        av, bv = buf[:na].reshape(a.shape), buf[na - 1:].reshape(b.shape)
    bv[...] = b
    av[...] = a
    return av, bv


def _reversed(x):
    if not x.ndim:
        return x.copy()
    return np.ascontiguousarray(x[..., ::-1])[..., ::-1]


def _readonly(x):
    y = x.copy()
    y.flags.writeable = False
    return y


def _unaligned(x):
    buf = np.zeros(x.nbytes + x.itemsize, dtype=np.uint8)
    y = buf[1:x.nbytes + 1].view(x.dtype).reshape(x.shape)
    y[...] = x
    return y


def _zero_stride(x):
    return np.broadcast_to(x[..., :1], x.shape)


def _ragged(x):
    rows = x.reshape(-1).tolist()
    return [rows[:1], rows[:2]] if len(rows) >= 2 else [[0.0], [0.0, 1.0]]


def _in_range(value, d) -> bool | None:
    """Whether a number is allowed by declaration d; None when unknown."""
    if d is None:
        return None
    lo, hi, finite, _ = d
    if isinstance(value, float) and math.isnan(value):
        return False
    if isinstance(value, float) and math.isinf(value):
        if finite:
            return False
        return True
    if lo is not None and value < lo:
        return False
    if hi is not None and value > hi:
        return False
    return True


def _range_expect(name, value, target=None):
    """(expect, allowed extra exceptions): refuse when the declaration
    excludes value, any when it allows it or nothing is declared; None to skip
    (a huge count of work). A huge size within a declared upper bound may run
    out of memory (MemoryError) honestly; an unbounded one must be refused."""
    d = declared(name, target)
    ok = _in_range(value, d)
    huge = isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) >= 2**31
    if huge and (name in WORK_COUNTS or f"{target}.{name}" in WORK_COUNTS):
        return None, ()
    if ok is False:
        return REFUSE, ()
    if huge and ok and d[1] is not None:
        return ANY, (MemoryError,)
    return ANY, ()


def scalar_variants(name, x, target=None) -> list[Variant]:
    """Variants of a bool, int, float or string parameter."""
    V = Variant
    out = []
    if isinstance(x, (bool, np.bool_)):
        x = bool(x)
        out += [V("int", EQUAL, lambda v: int(v), lambda v: bool(v)),
                V("numpy-bool", EQUAL, lambda v: np.bool_(v), lambda v: bool(v)),
                V("str", REFUSE, lambda v: "no" if v else "yes"),
                V("float", REFUSE, lambda v: 0.5),
                V("none", ANY, lambda v: None),
                V("array", EQUAL, lambda v: np.array([v]), lambda v: bool(v[0]))]
        return out
    if isinstance(x, (int, np.integer)):
        x = int(x)
        out += [V("float-integral", EQUAL, lambda v: float(v), lambda v: int(v)),
                V("float-fraction", REFUSE, lambda v: v + 0.5),
                V("numpy-int64", EQUAL, lambda v: np.int64(v), lambda v: int(v)),
                V("numpy-0d", EQUAL, lambda v: np.array(v), lambda v: int(v)),
                V("bool", EQUAL, lambda v: bool(v), lambda v: int(v)),
                V("str", REFUSE, lambda v: str(v)),
                V("complex", REFUSE, lambda v: complex(v, 1)),
                V("nan", REFUSE, lambda v: float("nan"), nonfinite=True),
                V("none", ANY, lambda v: None),
                V("list", ANY, lambda v: [v])]
        if 0 <= x < 256:
            out.append(V("numpy-uint8", EQUAL, lambda v: np.uint8(v), lambda v: int(v)))
        for label, val in (("-1", -1), ("0", 0), ("2**31", 2**31), ("2**40", 2**40),
                           ("2**63", 2**63), ("2**64", 2**64), ("-2**63-1", -2**63 - 1)):
            if val == x:
                continue
            exp, allow = _range_expect(name, val, target)
            if exp:
                out.append(V(f"int{label}", exp, lambda v, val=val: val, allow=allow))
        return out
    if isinstance(x, (float, np.floating)):
        x = float(x)
        out += [V("numpy-float32", EQUAL, lambda v: np.float32(v),
                  lambda v: float(v), tol="f32"),
                V("numpy-0d", EQUAL, lambda v: np.array(v), lambda v: float(v)),
                V("str", REFUSE, lambda v: str(v)),
                V("complex", REFUSE, lambda v: complex(v, 1)),
                V("bool", EQUAL, lambda v: bool(v), lambda v: float(v)),
                V("none", ANY, lambda v: None),
                V("list", ANY, lambda v: [v])]
        if math.isfinite(x) and x == int(x):
            out.append(V("int", EQUAL, lambda v: int(v), lambda v: float(v)))
        for label, val in (("nan", float("nan")), ("inf", float("inf")),
                           ("-inf", float("-inf")), ("-1", -1.0), ("0", 0.0), ("1", 1.0),
                           ("1e308", 1e308), ("-1e308", -1e308), ("tiny", 5e-324)):
            if val == x:
                continue
            exp, allow = _range_expect(name, val, target)
            if exp:
                out.append(V(f"float{label}", exp, lambda v, val=val: val, allow=allow,
                             nonfinite=not math.isfinite(val)))
        return out
    if isinstance(x, str):
        d = declared(name, target)
        choice = bool(d and d[3])
        exp = REFUSE if choice else ANY
        out += [V("unknown", exp, lambda v: "x"),
                V("empty", exp, lambda v: ""),
                V("swapcase", EQUAL if choice else ANY, lambda v: v.swapcase(),
                  lambda v: v.swapcase()),
                V("int", exp, lambda v: 3),
                V("bytes", EQUAL if choice else ANY, lambda v: v.encode(), lambda v: v.decode()),
                V("list", exp, lambda v: [v]),
                V("none", ANY, lambda v: None),
                V("numpy-str", EQUAL, lambda v: np.str_(v), lambda v: str(v))]
        return out
    return out


# Integer parameters that are labels, where strings are labels too.
LABEL_PARAMETERS = ("groups", "sessions")


def array_variants(name, x: np.ndarray) -> list[Variant]:
    V = Variant
    kind = x.dtype.kind
    out = [V("list", EQUAL, lambda v: v.tolist(), lambda v: np.array(v)),
           V("strided", EQUAL, _strided, np.ascontiguousarray),
           V("reversed-view", EQUAL, _reversed, np.ascontiguousarray),
           V("readonly", EQUAL, _readonly, np.array),
           V("unaligned", EQUAL, _unaligned, np.array),
           V("big-endian", EQUAL, lambda v: v.astype(v.dtype.newbyteorder(">")),
             lambda v: v.astype(v.dtype.newbyteorder("="))),
           V("object", EQUAL, lambda v: v.astype(object), lambda v: v.astype(x.dtype)),
           # group and session labels may be strings (verl's uid): the same partition
           V("str", EQUAL if name in LABEL_PARAMETERS else REFUSE, lambda v: v.astype(str),
             lambda v: v.astype(x.dtype)),
           V("complex", REFUSE, lambda v: v.astype(complex) + 1j),
           V("0d", ANY, lambda v: np.asarray(v.reshape(-1)[0] if v.size else 0), reshapes=True),
           V("scalar", ANY, lambda v: v.reshape(-1)[0].item() if v.size else 0, reshapes=True),
           V("empty", ANY, lambda v: v[..., :0], reshapes=True),
           V("trailing-axis", ANY, lambda v: v[..., None], reshapes=True),
           V("leading-axis", ANY, lambda v: v[None], reshapes=True),
           V("shorter", ANY, lambda v: v[..., :-1], reshapes=True),
           V("longer", ANY, lambda v: np.concatenate([v, v[..., :1]], axis=-1), reshapes=True),
           V("none", ANY, lambda v: None),
           V("text", REFUSE, lambda v: "x"),
           V("ragged", REFUSE, _ragged)]
    if x.ndim >= 2:
        out += [V("fortran", EQUAL, np.asfortranarray, np.ascontiguousarray),
                V("flattened", ANY, lambda v: v.reshape(-1), reshapes=True),
                V("empty-rows", ANY, lambda v: v[:0], reshapes=True)]
    if x.ndim >= 1 and x.size > 1:
        out.append(V("zero-stride", EQUAL, _zero_stride, np.array))
    if kind == "f":
        out += [V("float32", EQUAL, lambda v: v.astype(np.float32),
                  lambda v: v.astype(np.float64), tol="f32"),
                V("float16", EQUAL, lambda v: v.astype(np.float16),
                  lambda v: v.astype(np.float64), tol="f16"),
                V("longdouble", EQUAL, lambda v: v.astype(np.longdouble),
                  lambda v: v.astype(np.float64)),
                V("int64", EQUAL, lambda v: np.round(v * 2).astype(np.int64),
                  lambda v: v.astype(np.float64)),
                V("bool", EQUAL, lambda v: v > 0, lambda v: v.astype(np.float64)),
                V("timedelta", REFUSE, lambda v: np.round(v).astype("m8[s]")),
                V("nan", ANY, lambda v: _insert(v, np.nan), nonfinite=True),
                V("inf", ANY, lambda v: _insert(v, np.inf), nonfinite=True),
                V("-inf", ANY, lambda v: _insert(v, -np.inf), nonfinite=True),
                V("huge-values", ANY, lambda v: v * 1e307, nonfinite=True)]  # overflows
    elif kind in "iu":
        nonneg = x.size == 0 or x.min() >= 0
        out += [V("int32", EQUAL, lambda v: v.astype(np.int32), lambda v: v.astype(x.dtype)),
                V("float", EQUAL, lambda v: v.astype(np.float64), lambda v: v.astype(x.dtype)),
                V("float-fraction", REFUSE, lambda v: v + 0.5),
                V("float-nan", REFUSE, lambda v: _insert(v, np.nan), nonfinite=True),
                V("bool", EQUAL, lambda v: v != 0, lambda v: v.astype(x.dtype)),
                V("negative", ANY, lambda v: _set_int(v, -1)),
                V("huge", ANY, lambda v: _set_int(v, 2**62, np.int64)),
                V("uint64-max", ANY, lambda v: _set_int(np.abs(v), 2**64 - 1, np.uint64))]
        if nonneg:
            out.append(V("uint64", EQUAL, lambda v: v.astype(np.uint64),
                         lambda v: v.astype(x.dtype)))
            if x.size == 0 or x.max() < 128:
                out.append(V("int8", EQUAL, lambda v: v.astype(np.int8),
                             lambda v: v.astype(x.dtype)))
    elif kind == "b":
        out += [V("int", EQUAL, lambda v: v.astype(np.int64), lambda v: v.astype(bool)),
                V("float", EQUAL, lambda v: v.astype(np.float64), lambda v: v.astype(bool)),
                V("twos", ANY, lambda v: v.astype(np.int64) * 2)]
    if name in ("v", "a", "game", "table", "reference") and x.shape[-1:] == (1 << M,):
        # a huge table must be refused from its shape, before anything is copied
        out.append(V("huge-table", ANY, lambda v: np.broadcast_to(np.zeros(1), (1 << 31,))))
    return out


def _array_of(items) -> np.ndarray:
    """A sequence as a 1-d array: an object array when the items are ragged
    (pairs of arrays, None)."""
    try:
        return np.array(items)
    except ValueError:
        arr = np.empty(len(items), dtype=object)
        for i, item in enumerate(items):
            arr[i] = item
        return arr


def sequence_variants(name, x, target=None) -> list[Variant]:
    V = Variant
    strs = all(isinstance(e, str) for e in x)
    d = declared(name, target)
    choices = bool(d and d[3])
    first = x[0] if len(x) else ("x" if strs else 0)
    out = [V("list", EQUAL, lambda v: list(v), lambda v: tuple(v)),
           V("array", EQUAL, _array_of, lambda v: tuple(v.tolist())),
           V("empty", ANY, lambda v: ()),
           V("none", ANY, lambda v: None),
           V("duplicate", ANY, lambda v: tuple(v) + tuple(v[:1]))]
    if strs:
        exp = REFUSE if choices else ANY
        out += [V("bare-str", exp, lambda v: first),
                V("unknown", exp, lambda v: ("x",)),
                V("int-element", REFUSE, lambda v: (3,))]
    else:
        out += [V("bare-int", ANY, lambda v: first),
                V("negative", ANY, lambda v: (-1,)),
                V("huge", ANY, lambda v: (2**64,)),
                V("fraction", REFUSE, lambda v: (0.5,)),
                V("str-element", REFUSE, lambda v: ("0",))]
    return out


def _like(result, fill):
    """``fill`` in the shape of a valid result (a scalar for a scalar)."""
    return fill if np.ndim(result) == 0 else np.full(np.shape(result), fill)


def _raises(*a, **k):
    raise FuzzUserError("boom")


def callable_variants(name, fn) -> list[Variant]:
    V = Variant
    return [V("not-callable", REFUSE, lambda f: 3),
            V("str", REFUSE, lambda f: "fn"),
            V("none", ANY, lambda f: None),
            V("raises", ANY, lambda f: _raises, allow=(RuntimeError, FuzzUserError)),
            V("returns-nan", ANY, lambda f: lambda *a: _like(f(*a), np.nan), nonfinite=True),
            V("returns-str", ANY, lambda f: lambda *a: _like(f(*a), "x")),
            V("returns-wrong-length", ANY,
              lambda f: lambda *a: np.append(np.atleast_1d(f(*a)), 0.0)),
            V("returns-none", ANY, lambda f: lambda *a: None),
            V("no-arguments", ANY, lambda f: lambda: 0.0,
              allow=(RuntimeError,))]


def path_variants(name, path) -> list[Variant]:
    V = Variant
    return [V("pathlib", EQUAL, pathlib.Path, str),
            V("missing", ANY, lambda p: str(pathlib.Path(p).parent / "no-such-dir" / "x.parquet"),
              allow=(OSError,)),
            V("directory", ANY, lambda p: tempfile.mkdtemp(dir=pathlib.Path(p).parent),
              allow=(OSError,)),
            V("not-parquet", ANY, _junk_file, allow=(OSError,)),
            V("none", ANY, lambda p: None),
            V("int", REFUSE, lambda p: 3)]


def _junk_file(p):
    junk = pathlib.Path(p).parent / f"junk-{os.getpid()}.parquet"
    junk.write_text("not a parquet file\n")
    return str(junk)


def object_variants(name, obj) -> list[Variant]:
    """A fastcredit object (Pools, ScoreConfig) or another object."""
    V = Variant
    ours = type(obj).__module__.startswith("fastcredit")
    exp = REFUSE if ours else ANY
    out = [V("none", ANY, lambda o: None),
           V("int", exp, lambda o: 3),
           V("str", exp, lambda o: "x"),
           V("dict", exp, lambda o: {}),
           V("object", exp, lambda o: object())]
    if type(obj).__name__ == "Pools":
        out.append(V("duck", REFUSE, lambda o: types.SimpleNamespace(
            **{s: getattr(o, s) for s in type(o).__slots__}, n_requests=o.n_requests)))
        out.append(V("no-requests", ANY, lambda o: type(o)([0], [], [], [], m=o.m)))
    return out


def none_default_variants(name) -> list[Variant]:
    """An optional parameter (default None) with no example."""
    V = Variant
    return [V("int", ANY, lambda o: 3), V("str", ANY, lambda o: "x"),
            V("object", ANY, lambda o: object())]


def argv_variants(name, argv) -> list[Variant]:
    """Each option value of a command line replaced; an unknown option."""
    V = Variant
    out = [V("unknown-option", ANY, lambda a: a + ["--bogus", "1"]),
           V("no-command", ANY, lambda a: []),
           V("unknown-command", ANY, lambda a: ["bogus"] + a[1:])]
    for i, tok in enumerate(argv):
        if tok.startswith("--") and i + 1 < len(argv):
            for bad in ("x", "-1", "0", "1.5", str(2**64), "nan", ""):
                out.append(V(f"{tok[2:]}={bad or 'empty'}", ANY,
                             lambda a, i=i, bad=bad: a[:i + 1] + [bad] + a[i + 2:]))
    return out


def variants_for(name, x, target=None) -> list[Variant]:
    if name == "argv":
        return argv_variants(name, x)
    if name in PATHS or (isinstance(x, str) and x.endswith((".parquet", ".npz"))):
        return path_variants(name, x)
    if x is None:
        return none_default_variants(name)
    if isinstance(x, np.ndarray):
        return array_variants(name, x)
    if isinstance(x, (bool, int, float, str, np.generic)):
        return scalar_variants(name, x, target)
    if isinstance(x, (tuple, list)):
        return sequence_variants(name, x, target)
    if callable(x) and not isinstance(x, type):
        return callable_variants(name, x)
    return object_variants(name, x)


def is_huge(case_id: str) -> bool:
    """Cases that would allocate terabytes without the workers' address-space
    limit (set on Linux only)."""
    return any(tag in case_id for tag in ("2**31", "2**40", "huge-table"))


# Variants re-run with backend="numba" (compiling is the main cost: a sample).
NUMBA_SAMPLE = ("float32", "strided", "nan", "empty", "int64")


class Plan:
    """The cases of every target, or why a target has no valid call."""

    def __init__(self, targets: dict[str, Target], tmp: pathlib.Path):
        self.targets = targets
        self.cases: dict[str, Case] = {}
        self.by_target: dict[str, list[str]] = {}
        self.missing: dict[str, str] = {}
        for t in targets.values():
            if t.name in NOT_FUZZED:
                continue
            try:
                cases = build_cases(t, tmp)
            except MissingExample as exc:
                self.missing[t.name] = str(exc)
                continue
            except Exception as exc:   # an example that no longer fits the signature
                self.missing[t.name] = f"{t.name}: building its valid call failed: {exc!r}"
                continue
            self.by_target[t.name] = [c.id for c in cases]
            for c in cases:
                assert c.id not in self.cases, c.id
                self.cases[c.id] = c


class MissingExample(Exception):
    pass


def _example(target: Target, p: inspect.Parameter, ctx: Ctx, required: bool):
    """The valid value of p for target (_MISSING when there is none)."""
    for key in (f"{target.name}.{p.name}",):
        if key in OVERRIDES:
            ex = OVERRIDES[key]
            return ex(ctx) if callable(ex) and not isinstance(ex, type) else ex
    default_none = p.default is None
    if (required or default_none or p.name == "backend") and p.name in EXAMPLES:
        ex = EXAMPLES[p.name]
        return ex(ctx) if callable(ex) and not isinstance(ex, type) else ex
    if required:
        return _MISSING
    return p.default


def base_call(target: Target, ctx: Ctx) -> dict:
    """kwargs of the valid call: required parameters and BASE extras (plus
    backend='c' where there is a backend)."""
    kwargs = {}
    for p in parameters(target):
        required = p.default is inspect.Parameter.empty
        if required or p.name in BASE.get(target.name, ()) or p.name == "backend":
            val = _example(target, p, ctx, True)
            if val is _MISSING:
                raise MissingExample(f"{target.name}: no valid example for required "
                                     f"parameter {p.name!r}: add EXAMPLES[{p.name!r}] (or "
                                     f"OVERRIDES[{target.name + '.' + p.name!r}]) in "
                                     f"tests/fuzz_catalogue.py")
            if isinstance(val, With):
                kwargs.update(val.also)
                val = val.value
            kwargs[p.name] = val
    return kwargs


def valid_value(target: Target, p: inspect.Parameter, ctx: Ctx, base: dict):
    """(value, companions) of p: the base value, an example, or the default."""
    if p.name in base:
        return base[p.name], {}
    val = _example(target, p, ctx, False)
    if isinstance(val, With):
        return val.value, dict(val.also)
    return val, {}


def build_cases(target: Target, tmp: pathlib.Path) -> list[Case]:
    params = parameters(target)
    ctx = Ctx(target, [p.name for p in params], tmp)
    if target.kind == "method" and not target.bound and target.cls_name not in INSTANCES:
        raise MissingExample(f"{target.name}: no instance of {target.cls_name}: add "
                             f"INSTANCES[{target.cls_name!r}] in tests/fuzz_catalogue.py")
    base = base_call(target, ctx)
    has_backend = "backend" in ctx.params
    fn = resolve(target.name)
    # a predicate (-> bool) answers for any input: nothing is malformed for it
    predicate = getattr(inspect.signature(fn), "return_annotation", None) in (bool, "bool")
    cases = [Case(f"{target.name}:valid", target, None, None, kind="valid")]
    if has_backend:
        cases.append(Case(f"{target.name}:valid@numba", target, None, None, backend="numba",
                          kind="valid"))
    arrays, pools = {}, []
    for p in params:
        value, also = valid_value(target, p, ctx, base)
        if p.name not in base and p.default is None and value is not None:
            cases.append(Case(f"{target.name}:{p.name}=example", target, p.name, None,
                              kind="example"))
        if isinstance(value, np.ndarray):
            arrays[p.name] = value
        if type(value).__name__ == "Pools":
            pools.append(p.name)
        if p.name == "out" and value is None:
            variants = out_variants()
        else:
            variants = variants_for(p.name, value, target.name)
        for v in variants:
            if predicate and v.expect == REFUSE:
                v = dataclasses.replace(v, expect=ANY)
            cases.append(Case(f"{target.name}:{p.name}:{v.name}", target, p.name, v))
            if has_backend and p.name != "backend" and v.name in NUMBA_SAMPLE:
                cases.append(Case(f"{target.name}:{p.name}:{v.name}@numba", target, p.name, v,
                                  backend="numba"))
    # one array passed for two parameters, or two sharing one buffer; out= on
    # top of an input or of the caller's buffer of a converted input
    names = sorted(arrays)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            if arrays[a].dtype != arrays[b].dtype or not arrays[a].size or not arrays[b].size:
                continue
            if arrays[a].shape == arrays[b].shape:
                cases.append(Case(f"{target.name}:alias:{b}={a}", target, b, None,
                                  kind="alias", other=a))
            for how in ("interleaved", "overlapping"):
                cases.append(Case(f"{target.name}:alias-{how}:{b}={a}", target, b, None,
                                  kind="alias", other=a, overlap=how))
    if "out" in ctx.params:
        for a in names:
            if a == "out":
                continue
            overlaps = ("same", "partial") if arrays[a].dtype == np.float64 else ()
            overlaps += tuple(label for label, _, _ in converted(arrays[a]))
            for overlap in overlaps:
                cases.append(Case(f"{target.name}:out:{overlap}-as-{a}", target, "out", None,
                                  kind="out", other=a, overlap=overlap))
        for a in pools:
            for field in POOL:
                cases.append(Case(f"{target.name}:out:held-{field}-as-{a}", target, "out", None,
                                  kind="out", other=a, overlap=f"held-{field}"))
    return cases


def out_variants() -> list[Variant]:
    """out= variants, made from the valid result in the worker (docs/design.md: out
    must be of the result's dtype, C-contiguous, writeable and of its exact shape)."""
    V = Variant
    other = lambda r: np.float32 if r.dtype == np.float64 else np.float64  # noqa: E731
    return [V("other-float", REFUSE, lambda r: np.zeros(r.shape, other(r))),
            V("int64", REFUSE,   # int32 where the result is int64 (a derangement's)
              lambda r: np.zeros(r.shape, np.int32 if r.dtype == np.int64 else np.int64)),
            V("wrong-shape", REFUSE, lambda r: np.zeros(r.shape + (1,), r.dtype)),
            V("flat", REFUSE, lambda r: np.zeros(r.size + 1, r.dtype)),
            V("readonly", REFUSE, lambda r: _readonly(np.zeros_like(r))),
            V("list", REFUSE, lambda r: np.zeros_like(r).tolist()),
            V("strided", EQUAL, lambda r: _strided(np.zeros_like(r))),
            V("fortran", EQUAL, lambda r: np.asfortranarray(np.zeros_like(r))),
            V("unaligned", EQUAL, lambda r: _unaligned(np.zeros_like(r))),
            V("correct", EQUAL, lambda r: np.full_like(r, np.nan))]


# --------------------------------------------------------------------------
# 4. running one case (in a worker)
# --------------------------------------------------------------------------

def normalize(x, depth=0):
    """A comparable, picklable form of a result."""
    if depth > 6:
        return "<deep>"
    if isinstance(x, np.ndarray):
        return x.copy() if x.dtype.kind != "O" else [normalize(e, depth + 1) for e in x.ravel()]
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, str):
        return _SCRATCH.sub(r"\1", x)
    if isinstance(x, pathlib.PurePath):
        return _SCRATCH.sub(r"\1", str(x))
    if x is None or isinstance(x, (bool, int, float, bytes, complex)):
        return x
    if isinstance(x, (list, tuple)):
        return [normalize(e, depth + 1) for e in x]
    if isinstance(x, dict):
        return {str(k): normalize(v, depth + 1) for k, v in x.items() if k not in VOLATILE}
    name = type(x).__name__
    if name == "TrajectorySCM":
        return {"name": x.name, "n_steps": x.n_steps,
                "table": x.table() if x.n_steps <= 12 else None}
    if dataclasses.is_dataclass(x):
        return {f.name: normalize(getattr(x, f.name), depth + 1)
                for f in dataclasses.fields(x) if f.name not in VOLATILE}
    if name in ("Table", "RecordBatch"):
        return normalize(x.to_pydict(), depth + 1)
    if name == "DataFrame" and hasattr(x, "compute"):
        return normalize(x.compute(), depth + 1)
    if name == "DataFrame":
        return normalize({c: [normalize(v, depth + 2) for v in x[c].tolist()] for c in x.columns},
                         depth + 1)
    if name == "InteractionValues":
        return {"values": np.asarray(x.values), "baseline": x.baseline_value,
                "estimated": x.estimated}
    if isinstance(x, io.StringIO):
        return x.getvalue()
    if hasattr(type(x), "__slots__") and type(x).__module__.startswith("fastcredit"):
        return {s: normalize(getattr(x, s), depth + 1) for s in type(x).__slots__}
    if hasattr(x, "__dict__") and type(x).__module__.startswith("fastcredit"):
        return {k: normalize(v, depth + 1) for k, v in vars(x).items()
                if not callable(v) and not isinstance(v, types.ModuleType)
                and not k.startswith("__") and k not in VOLATILE}
    if callable(x):
        return "<callable>"
    return f"<{type(x).__module__}.{name}>"


# scratch file names differ between a call and its reference: compare without them
_SCRATCH = re.compile(r"/[^/\s']*fastcredit-fuzz-[^/\s']*/(?:[\w.-]*/)*?([a-z]+)-\d+-\d+")

TOL = {"exact": (1e-9, 1e-12), "f32": (1e-5, 1e-6), "f16": (2e-2, 2e-2)}


def difference(a, b, tol="exact", path="result") -> str | None:
    """Where normalized results a and b differ (None when they agree)."""
    rtol, atol = TOL[tol]
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
            return f"{path}: {type(a).__name__} vs {type(b).__name__}"
        if a.shape != b.shape:
            return f"{path}: shape {a.shape} vs {b.shape}"
        if a.dtype.kind in "fc" or b.dtype.kind in "fc":
            af, bf = a.astype(np.complex128 if "c" in a.dtype.kind + b.dtype.kind else
                              np.float64), b.astype(np.float64 if b.dtype.kind != "c" else
                                                    np.complex128)
            nan_a, nan_b = np.isnan(af), np.isnan(bf)
            if (nan_a != nan_b).any():
                i = np.flatnonzero((nan_a != nan_b).ravel())[0]
                return (f"{path}: NaN at flat index {i} in one only "
                        f"({af.ravel()[i]} vs {bf.ravel()[i]})")
            with np.errstate(invalid="ignore"):
                ok = nan_a | (af == bf) | (np.abs(af - bf) <= atol + rtol * np.abs(bf))
            if not ok.all():
                i = np.flatnonzero(~ok.ravel())[0]
                return f"{path}: {af.ravel()[i]!r} vs {bf.ravel()[i]!r} at flat index {i}"
            return None
        if not np.array_equal(a, b):
            return f"{path}: {a.ravel()[:6]} vs {b.ravel()[:6]}"
        return None
    if isinstance(a, float) and isinstance(b, (int, float)) or \
            isinstance(b, float) and isinstance(a, (int, float)):
        if math.isnan(a) and math.isnan(b):
            return None
        if math.isnan(a) != math.isnan(b) or abs(a - b) > atol + rtol * abs(b):
            return f"{path}: {a!r} vs {b!r}"
        return None
    if type(a) is not type(b):
        return f"{path}: {type(a).__name__} vs {type(b).__name__}"
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: length {len(a)} vs {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = difference(x, y, tol, f"{path}[{i}]")
            if d:
                return d
        return None
    if isinstance(a, dict):
        if set(a) != set(b):
            return f"{path}: keys {sorted(a)} vs {sorted(b)}"
        for k in a:
            d = difference(a[k], b[k], tol, f"{path}.{k}")
            if d:
                return d
        return None
    return None if a == b else f"{path}: {a!r} vs {b!r}"


def has_nan(x, path="result") -> str | None:
    if isinstance(x, np.ndarray) and x.dtype.kind in "fc":
        return path if np.isnan(x).any() else None
    if isinstance(x, float):
        return path if math.isnan(x) else None
    if isinstance(x, list):
        for i, e in enumerate(x):
            r = has_nan(e, f"{path}[{i}]")
            if r:
                return r
    if isinstance(x, dict):
        for k, e in x.items():
            if k in NAN_FIELDS:
                continue
            r = has_nan(e, f"{path}.{k}")
            if r:
                return r
    return None


def fingerprint(x, depth=0):
    """What must not change in an input."""
    if depth > 4:
        return None
    if isinstance(x, np.ndarray):
        if x.size > 1 << 20:   # a huge (broadcast) input: a sample, never a copy
            return ("nd", x.dtype.str, x.shape, np.asarray(x.flat[:4096]).tobytes())
        return ("nd", x.dtype.str, x.shape, x.tobytes() if x.dtype.kind != "O" else
                repr(x.tolist()))
    if isinstance(x, (list, tuple)):
        return [fingerprint(e, depth + 1) for e in x]
    if isinstance(x, dict):
        return {k: fingerprint(v, depth + 1) for k, v in x.items()}
    if type(x).__name__ == "Pools":
        return {s: fingerprint(getattr(x, s), depth + 1) for s in type(x).__slots__}
    if isinstance(x, float):
        return ("float", x.hex())
    if isinstance(x, complex):
        return ("complex", repr(x))
    if isinstance(x, (int, str, bool, type(None))):
        return x
    if isinstance(x, np.generic):
        return ("np", repr(x))
    return None


def mentions(message: str, name: str) -> bool:
    if len(name) == 1:
        pat = (rf"(?<![\w.]){re.escape(name)}(?=\s*(?:must|=|\[|has|and|,|:|\(|\)|is\b|"
               rf"values|<|>|'|\"))")
    else:
        pat = rf"(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])"
    return re.search(pat, message) is not None


class Runner:
    """Builds and runs the cases of one target (inside a worker)."""

    def __init__(self, target: Target, tmp: pathlib.Path):
        self.target = target
        self.tmp = tmp
        self.params = parameters(target)
        self.pmap = {p.name: p for p in self.params}
        self.ctx = Ctx(target, list(self.pmap), tmp)
        self.cases = {c.id: c for c in build_cases(target, tmp)}
        self._valid = {}

    # -- calling ------------------------------------------------------------
    def call(self, kwargs):
        """(result to compare, returned object) of one call; methods return
        (their result, the instance after the call)."""
        t = self.target
        if t.kind == "method":
            if t.bound:
                fn = resolve(t.name)
                self_obj = None
            else:
                self_obj = INSTANCES[t.cls_name](self.ctx)
                fn = getattr(self_obj, t.name.rsplit(".", 1)[1])
        else:
            fn, self_obj = resolve(t.name), None
        pos = [kwargs.pop(p.name) for p in self.params
               if p.kind == p.POSITIONAL_ONLY and p.name in kwargs]
        res = fn(*pos, **kwargs)
        if self_obj is not None:
            return [normalize(res), normalize(self_obj)], res
        return normalize(res), res

    def base(self, backend=None):
        kwargs = base_call(self.target, self.ctx)
        if backend and "backend" in kwargs:
            kwargs["backend"] = backend
        return kwargs

    def valid_result(self, backend=None):
        """The normalized result of the valid call (cached)."""
        key = backend or "c"
        if key not in self._valid:
            self._valid[key] = self.call(self.base(backend))
        return self._valid[key]

    # -- one case -----------------------------------------------------------
    def build(self, case: Case):
        """(kwargs, reference kwargs or None, variant value, expect, names)."""
        kw = self.base(case.backend)
        names = (case.param,) if case.param else ()
        names += EQUIVALENT.get(f"{self.target.name}.{case.param}", ())
        if case.kind == "valid":
            return kw, None, VALID, names
        p = self.pmap.get(case.param)
        if case.kind == "example":
            value, also = valid_value(self.target, p, self.ctx, kw)
            kw.update(also)
            kw[case.param] = value
            return kw, None, VALID, names
        if case.kind == "alias":
            ref = self.base(case.backend)
            for d in (kw, ref):
                self._fill(d, case.param, case.other)
            if case.overlap:
                kw[case.other], kw[case.param] = share(kw[case.other], kw[case.param],
                                                       case.overlap)
                ref[case.other], ref[case.param] = kw[case.other].copy(), kw[case.param].copy()
            else:
                kw[case.param] = kw[case.other]
                ref[case.param] = _copy(ref[case.other])
            return kw, ref, EQUAL, (case.param, case.other)
        if case.kind == "out":
            normal, raw = self.valid_result(case.backend)
            if not isinstance(raw, np.ndarray):
                return None, None, None, ()
            if case.overlap.startswith("held-"):
                # out over a caller's array a Pools was built from: refused
                # while the Pools reads it, else the answer of a separate out
                field = case.overlap[len("held-"):]
                arrays = {k: np.array(x, dtype=np.int64 if k in ("offsets", "ad_id") else
                                      np.float64) for k, x in POOL.items()}
                held, kw["out"] = place(arrays[field], arrays[field].itemsize, raw.shape,
                                        raw.dtype)
                ref = self.base(case.backend)
                kw[case.other] = type(ref[case.other])(**{**arrays, field: held}, m=M)
                ref[case.other] = type(ref[case.other])(**arrays, m=M)
                return kw, ref, EQUAL, ("out", case.other)
            if case.overlap not in ("same", "partial"):
                # out over the caller's buffer of a converted input: refused
                self._fill(kw, case.other)
                value, stride = {label: (y, st) for label, y, st in
                                 converted(np.asarray(kw[case.other]))}[case.overlap]
                kw[case.other], kw["out"] = place(value, stride, raw.shape, raw.dtype)
                return kw, None, REFUSE, ("out", case.other)
            ref = self.base(case.backend)
            for d in (kw, ref):
                self._fill(d, case.other)
            src = kw[case.other]
            if src.shape != raw.shape or raw.dtype != np.float64:
                return None, None, None, ()
            if case.overlap == "same":
                kw["out"] = src
            else:
                buf = np.empty(src.size + 1)
                inp = buf[:src.size].reshape(src.shape)
                inp[...] = src
                kw[case.other] = inp
                kw["out"] = buf[1:].reshape(src.shape)
            return kw, ref, EQUAL, ("out", case.other)
        v = case.variant
        if case.param == "out" and self.pmap["out"].default is None and "out" not in kw:
            normal, raw = self.valid_result(case.backend)
            if not isinstance(raw, np.ndarray):
                return None, None, None, ()
            kw["out"] = v.make(raw)
            ref = self.base(case.backend) if v.expect != REFUSE else None
            return kw, ref, v.expect, names
        value, also = valid_value(self.target, p, self.ctx, kw)
        kw.update(also)
        names = names + tuple(also)
        kw[case.param] = v.make(value)
        if v.reshapes:
            names = names + tuple(k for k, x in kw.items()
                                  if isinstance(x, (np.ndarray, list, tuple)) and k != case.param)
        ref = None
        if v.expect == EQUAL:
            ref = self.base(case.backend)
            value2, also2 = valid_value(self.target, p, self.ctx, ref)
            ref.update(also2)
            ref[case.param] = v.repair(v.make(value2))
        return kw, ref, v.expect, names

    def _fill(self, kw, *names):
        """Set optional parameters (and their companions) to their examples."""
        for name in names:
            if name not in kw:
                value, also = valid_value(self.target, self.pmap[name], self.ctx, kw)
                kw.update(also)
                kw[name] = value

    def run(self, case_id: str) -> tuple[bool, str]:
        case = self.cases.get(case_id)
        if case is None:
            return False, f"unknown case {case_id} (catalogue differs between processes)"
        try:
            kwargs, ref, expect, names = self.build(case)
        except Exception as exc:
            return False, f"could not build the case: {exc!r}\n{traceback.format_exc(limit=4)}"
        if kwargs is None:
            return True, "not applicable"
        protected = {k: fingerprint(v) for k, v in kwargs.items() if k not in MUTABLE
                     and not (case.overlap in ("same", "partial") and k == case.other)}
        argv_stderr = io.StringIO()
        try:
            with contextlib.redirect_stderr(argv_stderr), contextlib.redirect_stdout(io.StringIO()):
                normal, raw = self.call(dict(kwargs))
        except BaseException as exc:  # noqa: B902 - SystemExit, KeyboardInterrupt too
            if isinstance(exc, KeyboardInterrupt):
                raise
            return self.judge_error(case, exc, expect, names, argv_stderr.getvalue(), kwargs)
        for k, fp in protected.items():
            if fingerprint(kwargs[k]) != fp:
                return False, f"modified its input {k!r}"
        if "out" in kwargs and isinstance(kwargs["out"], np.ndarray) and \
                isinstance(raw, np.ndarray) and raw is not kwargs["out"]:
            return False, "returned a new array instead of out"
        if expect == VALID:
            if case.kind == "valid" and not case.param:
                where = has_nan(normal)
                if where:
                    return False, f"NaN in {where} from the valid (finite) input"
            return True, "ok"
        if expect == REFUSE:
            return False, f"accepted a malformed {case.param} ({_describe(kwargs.get(case.param))})"
        if expect == EQUAL:
            try:
                with contextlib.redirect_stderr(io.StringIO()), \
                        contextlib.redirect_stdout(io.StringIO()):
                    ref_normal, _ = self.call(dict(ref))
            except BaseException as exc:  # noqa: B902
                return False, (f"accepted {case.param} = {_describe(kwargs.get(case.param))} "
                               f"although the repaired input is refused ({exc!r})")
            tol = case.variant.tol if case.variant else "exact"
            d = difference(normal, ref_normal, tol)
            if d:
                return False, f"result differs from the repaired input's: {d}"
            return True, "ok"
        # ANY: accepted; flag NaN from finite input where the valid call had none
        nonfinite = bool(case.variant and case.variant.nonfinite)
        if not nonfinite and self.target.name not in NAN_DOCUMENTED:
            try:
                valid_normal, _ = self.valid_result(case.backend)
            except BaseException:  # noqa: B902 - the valid call is judged by its own case
                valid_normal = None
            if valid_normal is not None and not has_nan(valid_normal) and _finite_args(kwargs):
                where = has_nan(normal)
                if where:
                    return False, (f"NaN in {where} from finite input ({case.param} = "
                                   f"{_describe(kwargs.get(case.param))})")
        return True, "ok"

    def judge_error(self, case, exc, expect, names, stderr, kwargs):
        msg = str(exc)
        label = f"{type(exc).__name__}: {msg[:300]}"
        if expect == VALID:
            return False, f"the valid call raised {label}\n{_tb(exc)}"
        if case.param == "argv" and not isinstance(exc, SystemExit):
            return False, f"a traceback instead of an exit status: {label}\n{_tb(exc)}"
        if isinstance(exc, SystemExit):
            # the command line: exit status 2 (usage) or 1 (input), one line on stderr
            code = exc.code
            if code in (1, 2) and stderr.strip() and "Traceback" not in stderr:
                return True, f"exit {code}"
            return False, f"SystemExit({code!r}) with stderr {stderr[-300:]!r}"
        allowed = (ValueError, TypeError) + (case.variant.allow if case.variant else ())
        if not isinstance(exc, allowed):
            return False, f"{label} (not a ValueError/TypeError)\n{_tb(exc)}"
        if isinstance(exc, FuzzUserError):
            return True, "user error propagated"
        if isinstance(exc, MemoryError):
            return True, "out of memory on a size within its declared bound"
        if case.param in PATHS or isinstance(kwargs.get(case.param), (str, pathlib.PurePath)):
            # a file problem may name the file instead of the parameter
            value = str(kwargs.get(case.param))
            if len(value) > 3 and (value in msg or value in str(getattr(exc, "filename", ""))):
                return True, label
        if any(mentions(msg, n) for n in names if n):
            return True, label
        return False, f"{label} (names none of {', '.join(n for n in names if n)})\n{_tb(exc)}"


def _finite_args(kwargs) -> bool:
    for v in kwargs.values():
        if isinstance(v, np.ndarray) and v.dtype.kind in "fc":
            sample = np.asarray(v.flat[:4096]) if v.size > 1 << 20 else v
            if not np.isfinite(sample).all():
                return False
        elif isinstance(v, float) and not math.isfinite(v):
            return False
    return True


def _describe(x) -> str:
    if isinstance(x, np.ndarray):
        flags = "" if x.flags.c_contiguous else " non-contiguous"
        return f"array{x.shape} {x.dtype}{flags}"
    r = repr(x)
    return r if len(r) < 60 else r[:57] + "..."


def _tb(exc) -> str:
    frames = traceback.extract_tb(exc.__traceback__)[-3:]
    return "".join(traceback.format_list(frames)).rstrip()


# --------------------------------------------------------------------------
# toys for the harness's self-test: each misbehaves in one known way
# --------------------------------------------------------------------------

def toy_good(v, *, out=None):
    """Row sums of a coalition table, validated like the library does."""
    from fastcredit._validation import coalition_table, output
    flat, m, lead = coalition_table(v)
    res = output(out, lead, inputs={"v": (v, flat)})
    res.reshape(-1)[...] = flat.sum(-1)
    return res


def toy_checks_the_copy(v, *, out=None):
    """Checks out= against the converted table only, so an out over the
    caller's int64 or strided table is accepted and overwrites it."""
    from fastcredit._validation import coalition_table, output
    flat, m, lead = coalition_table(v)
    res = output(out, lead, inputs={"v": flat})
    res.reshape(-1)[...] = flat.sum(-1)
    return res


def toy_crash(v):
    """Dies by a signal on a non-contiguous table."""
    if isinstance(v, np.ndarray) and not v.flags.c_contiguous:
        os.abort()
    return toy_good(v)


def toy_ignores_strides(v):
    """Reads a strided view's memory as if it were contiguous."""
    if isinstance(v, np.ndarray) and v.base is not None and not v.flags.c_contiguous:
        return np.asarray(v.base).reshape(-1)[:v.size].reshape(v.shape).sum(-1)
    return toy_good(v)


def toy_modifies(v):
    """Sorts its input in place."""
    if isinstance(v, np.ndarray) and v.flags.writeable and v.ndim:
        v.sort(axis=-1)
    return toy_good(v)


def toy_unnamed(v):
    """Refuses float32 with a message naming nothing."""
    if getattr(v, "dtype", None) == np.float32:
        raise ValueError("bad input")
    return toy_good(v)


def toy_index_error(v):
    """An IndexError from an unchecked empty table."""
    return np.asarray(v)[..., 0] + toy_good(v)


def toy_nan(v):
    """NaN from a finite table with a NaN inserted elsewhere... and for ints."""
    res = toy_good(v)
    if getattr(v, "dtype", None) == np.int64:
        res[...] = np.nan
    return res


TOYS = {"toy_good": (), "toy_crash": ("crash",), "toy_ignores_strides": ("differs",),
        "toy_modifies": ("modified",), "toy_unnamed": ("names none",),
        "toy_index_error": ("IndexError",), "toy_nan": ("NaN",),
        "toy_checks_the_copy": ("modified",)}


# --------------------------------------------------------------------------
# 5. workers
# --------------------------------------------------------------------------

ADDRESS_SPACE = 6 << 30      # a worker's virtual memory limit
CASE_TIMEOUT = 20.0          # seconds a case may run (a hang otherwise)
FIRST_TIMEOUT = 90.0         # the first case of a group: imports and Numba compiles


def _send(fh, obj):
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    fh.write(struct.pack("!Q", len(data)) + data)
    fh.flush()


def _recv_exact(fh, n):
    chunks = []
    while n:
        b = fh.read(n)
        if not b:
            return None
        chunks.append(b)
        n -= len(b)
    return b"".join(chunks)


def _recv(fh):
    head = _recv_exact(fh, 8)
    if head is None:
        return None
    data = _recv_exact(fh, struct.unpack("!Q", head)[0])
    return None if data is None else pickle.loads(data)


def worker_main():
    """Run cases sent over stdin; report over the original stdout."""
    proto = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    sys.stdout = open(os.devnull, "w")
    try:
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    except (ImportError, ValueError, OSError):
        pass
    import warnings
    warnings.simplefilter("ignore")
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="fastcredit-fuzz-",
                                        dir=os.environ.get("FASTCREDIT_FUZZ_TMP")))
    runners = {}
    try:
        while True:
            msg = _recv(sys.stdin.buffer)
            if msg is None:
                break
            target, ids = msg
            for cid in ids:
                _send(proto, ("start", cid))
                try:
                    if target.name not in runners:
                        runners[target.name] = Runner(target, tmp)
                    ok, text = runners[target.name].run(cid)
                except Exception as exc:   # the harness itself failed on this case
                    ok, text = False, f"harness error: {exc!r}\n{traceback.format_exc(limit=5)}"
                _send(proto, ("done", cid, ok, text))
            _send(proto, ("idle",))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class Worker:
    def __init__(self, index: int, log_dir: pathlib.Path):
        self.log = log_dir / f"worker-{index}.stderr"
        self.proc = None

    def start(self):
        # scratch files under the run's directory, removed even when a worker is killed
        env = dict(os.environ, MALLOC_ARENA_MAX="2", PYTHONFAULTHANDLER="1",
                   FASTCREDIT_FUZZ_TMP=str(self.log.parent))
        # unbuffered: select() on the pipe must see every message (a buffered
        # reader could hold the next one while select waits on the fd)
        self.proc = subprocess.Popen([sys.executable, str(HERE), "--worker"], bufsize=0,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=open(self.log, "ab"), env=env, cwd=str(HERE.parent))

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def stop(self):
        if self.proc is not None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=10)
            except Exception:
                self.kill()

    def read(self, timeout):
        """The next message, "timeout", or None when the worker died."""
        fd = self.proc.stdout.fileno()
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            return "timeout"
        return _recv(self.proc.stdout)

    def stderr_tail(self, n=1500):
        try:
            return self.log.read_bytes()[-n:].decode(errors="replace")
        except OSError:
            return ""


def run_cases(jobs: list[tuple[Target, list[str], int | None]], n_workers: int = 2,
              progress: Callable | None = None) -> dict[str, tuple[bool, str]]:
    """Run [(target, case ids, lane)] on n_workers subprocesses (a job with a
    lane runs on that worker only: the integrations share one worker's
    imports); case id -> (ok, text)."""
    results: dict[str, tuple[bool, str]] = {}
    queue = list(jobs)
    lock = threading.Lock()
    log_dir = pathlib.Path(tempfile.mkdtemp(prefix="fastcredit-fuzz-logs-"))

    def next_job(index):
        with lock:
            for i, (target, ids, lane) in enumerate(queue):
                if lane is None or lane % n_workers == index:
                    return queue.pop(i)[:2]
        return None

    def drive(index):
        w = Worker(index, log_dir)
        try:
            while (job := next_job(index)) is not None:
                target, pending = job[0], list(job[1])
                while pending:
                    if not w.alive():
                        w.start()
                    try:
                        _send(w.proc.stdin, (target, pending))
                    except (BrokenPipeError, OSError):
                        w.kill()
                        continue
                    current, first = None, True
                    while True:
                        slow = first or (current or "").endswith((":valid", ":valid@numba"))
                        limit = FIRST_TIMEOUT if slow else CASE_TIMEOUT
                        msg = w.read(limit)
                        if msg == "timeout" or msg is None:
                            if msg == "timeout":
                                w.kill()
                                text = f"hang: no answer within {limit:.0f} s"
                            else:
                                code = w.proc.wait()
                                sig = signal.Signals(-code).name if code < 0 else f"exit {code}"
                                text = (f"crash: the worker died ({sig}) running this case\n"
                                        f"{w.stderr_tail()}")
                            with lock:
                                left = [c for c in pending if c not in results]
                                if current is None or current in results:
                                    current = left[0] if left else None
                                if current is not None:
                                    results[current] = (False, text)
                                pending = [c for c in pending if c not in results]
                            break
                        if msg[0] == "start":
                            current = msg[1]
                        elif msg[0] == "done":
                            first, current = False, None
                            with lock:
                                results[msg[1]] = (msg[2], msg[3])
                            if progress:
                                progress(msg[1])
                        elif msg[0] == "idle":
                            pending = []
                            break
        finally:
            w.stop()

    threads = [threading.Thread(target=drive, args=(i,), daemon=True) for i in range(n_workers)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    shutil.rmtree(log_dir, ignore_errors=True)
    return results


if __name__ == "__main__" and "--worker" in sys.argv:
    # run as the module (not __main__), so pickled Targets and cases are one class
    sys.path.insert(0, str(HERE.parent))
    import fuzz_catalogue
    fuzz_catalogue.worker_main()
