"""Backend registry and dispatch shared by every kernel family.

Each family ``F`` has interchangeable implementations with the same signatures
in ``fastcredit._c.F`` (cffi bindings of csrc/) and ``fastcredit._numba.F``
(``@njit`` kernels). The public module ``fastcredit.F`` validates arguments
and calls ``kernels(F, backend)``.

``backend=None`` picks, per kernel, the backend listed in ``FASTEST``, except
that a Numba winner is taken only once the Numba kernels are warm (compiled
ahead by ``fastcredit warm``, see fastcredit._warm): a kernel Numba has not
compiled yet would cost seconds of compiling, more than it can win, so until
then it runs on C, compiled at install. The table is measured, not guessed:
``python bench/ratios.py`` times both backends of every kernel on the
benchmark inputs and prints the winner next to the entry here; update the
entry when the bench says otherwise. The environment variable
``FASTCREDIT_BACKEND`` ("c" or "numba") overrides the choice for every
kernel.
"""
from __future__ import annotations

import functools
import os

from ._params import BACKEND
from ._warm import is_warm

BACKENDS = BACKEND.values

#: kernel -> backend that ran fastest on the bench (see bench/ratios.py).
FASTEST: dict[str, str] = {
    "tables.semivalue": "c",
    "tables.gather": "c",
    "tables.size_resolved": "numba",
    "tables.moebius": "numba",
    "tables.owen": "c",
    "interactions.graded": "numba",
    "auction.replay": "c",
    "sampling.tables": "numba",
    "sampling.permutations": "c",
    "sampling.tree_permutations": "c",
    "sampling.masked_rows": "c",
    "sampling.background_mean": "numba",
    "sampling.affordable_pairs": "c",
    "audit.bootstrap_median": "c",
    "audit.bootstrap_mean_diff": "c",
    "audit.spearman": "c",
    "audit.alignment": "c",
    "audit.shuffle": "c",
    "audit.derangement": "c",
    "audit.replay_advantage": "c",
    "audit.bootstrap_spearman_diff": "c",
    "audit.null_worlds": "c",
    "shaping.project": "c",
    "shaping.tokens": "c",
    "trees.credit": "c",
    "trees.allocation": "numba",
    "synthetic.sponsored_search": "c",
    "synthetic.replay_repeats": "c",
    # the approximator family: one key per method (its draw and fold kernels)
    "approximators.stratified": "c",
    "approximators.owen": "c",
    "approximators.shapiq": "c",
    "approximators.svarmiq": "numba",
    # the regression methods (draw_svarm + fold_regression)
    "approximators.kernelshap": "c",
    "approximators.kernelshapiq": "c",
    "approximators.inconsistent_kernelshapiq": "c",
    "approximators.kaddshap": "c",
    "approximators.regression_fsii": "c",
    "approximators.regression_fbii": "c",
    # SPEX: its per-bin singleton detection (spex_detect) between numpy rounds
    "approximators.spex": "c",
    # ProxySPEX: the trees' Fourier coefficients (tree_fourier) and its draws
    "approximators.proxyspex": "c",
}


@functools.cache
def _importable(backend: str) -> bool:
    try:
        if backend == "c":
            from . import _cffi  # noqa: F401
        else:
            import numba  # noqa: F401
    except ImportError:
        return False
    return True


def available_backends() -> tuple[str, ...]:
    """The kernel backends that can run here.

    "c" once the C extension is compiled (it is, in a wheel or after
    ``pip install -e .``), "numba" when numba imports. ``backend=None`` in the
    kernel families picks, per kernel, the faster of these (see
    :mod:`fastcredit._backend`).

    Returns
    -------
    tuple of str
        A subset of ``("c", "numba")``, in that order.

    Examples
    --------
    >>> import fastcredit as fc
    >>> set(fc.available_backends()) <= {"c", "numba"}
    True
    >>> "c" in fc.available_backends()          # the compiled extension loads
    True
    """
    return tuple(b for b in BACKENDS if _importable(b))


#: The environment variable that overrides the choice of every kernel.
ENV_BACKEND = "FASTCREDIT_BACKEND"
# It is read on every resolution, so that setting it at run time (os.environ,
# pytest's monkeypatch.setenv) takes effect. Its usual absence is seen in
# os.environ's own dict of encoded names, which those writes update: a miss of
# os.environ.get raises and catches KeyError inside (~0.7 us a resolution
# against ~40 ns here, AMD EPYC Zen 4).
_ENV_KEY = getattr(os.environ, "encodekey", str)(ENV_BACKEND)


def _env_backend() -> str | None:
    """FASTCREDIT_BACKEND's value, None when it is not set."""
    data = getattr(os.environ, "_data", None)
    if data is not None and _ENV_KEY not in data:
        return None
    return os.environ.get(ENV_BACKEND)


def resolve(kernel: str, backend: str | None) -> str:
    """The backend to run ``kernel`` ("family.name") on: ``backend`` checked
    against :data:`fastcredit._params.BACKEND`, or, for None, the environment
    override or the measured winner in ``FASTEST`` (Numba only when warm)."""
    if backend is None:
        backend = _env_backend()
        if not backend:
            backend = FASTEST.get(kernel, "c")
            if backend == "numba" and not is_warm():
                backend = "c"
        if backend not in BACKENDS:
            raise ValueError(f"FASTCREDIT_BACKEND must be 'c' or 'numba', got {backend!r}")
        if not _importable(backend):
            others = available_backends()
            if not others:
                raise RuntimeError("no fastcredit backend is available: build the C "
                                   "extension (pip install .) or install numba")
            backend = others[0]
        return backend
    if not _importable(BACKEND.check(backend)):
        raise ValueError(f"backend={backend!r} is not available here "
                         f"(available: {available_backends()})")
    return backend


@functools.cache
def _twins(backend: str) -> dict:
    """family -> the module of ``backend``'s kernels. Imported on first use,
    so the C extension is loaded, or Numba imported, only when asked for."""
    if backend == "c":
        from ._c import (approximators, auction, audit, interactions, sampling, shaping,
                         synthetic, tables, trees)
    else:
        from ._numba import (approximators, auction, audit, interactions, sampling, shaping,
                             synthetic, tables, trees)
    return {"approximators": approximators, "auction": auction, "audit": audit,
            "interactions": interactions, "sampling": sampling, "shaping": shaping,
            "synthetic": synthetic, "tables": tables, "trees": trees}


#: The kernel families; each has a twin module in fastcredit._c and fastcredit._numba.
FAMILIES = ("approximators", "auction", "audit", "interactions", "sampling", "shaping",
            "synthetic", "tables", "trees")


def kernels(family: str, backend: str):
    """The module holding ``family``'s kernels for a resolved backend."""
    return _twins(backend)[family]
