"""shapiq's explainers on fastcredit's classes: :func:`use`.

shapiq's explainers (``shapiq.Explainer``, ``TabularExplainer``,
``AgnosticExplainer``, ...) take an approximator three ways: an instance
(``approximator=fastcredit.shapiq.SVARM(n)``, which works as it is: every
class of :mod:`fastcredit.shapiq` is a subclass of shapiq's class of the same
name), a configuration name (``"svarm"``, ``"regression"``, ...), or
``"auto"``, where shapiq picks a class itself from the index, the order and
the number of players. The last two look the class up by name in shapiq's
own modules; :func:`use` puts fastcredit's classes there, so shapiq's
explainers (and anything else in shapiq that builds one of these classes,
such as ``Game.exact_values``) build fastcredit's instead, with shapiq's
choice of class unchanged.

Replacing classes in shapiq's modules rather than subclassing the
explainers keeps every shapiq explainer, present and future, and every
other place shapiq constructs an approximator or an ExactComputer, on one
switch; the explainers themselves stay shapiq's own code.
"""
from __future__ import annotations

import sys

import shapiq  # noqa: F401  (its modules, explainers' configurations included, loaded)

__all__ = ["use", "Swapped"]


def _replacements() -> list:
    """(fastcredit's class, the shapiq class it replaces) for every class of
    fastcredit.shapiq that subclasses a shapiq class of its own name."""
    package = sys.modules[__package__]
    pairs = []
    for name in package.__all__:
        cls = getattr(package, name)
        if not isinstance(cls, type):
            continue
        for base in cls.__mro__[1:]:
            if base.__name__ == name and base.__module__.split(".")[0] == "shapiq":
                pairs.append((cls, base))
                break
    return pairs


class Swapped:
    """fastcredit's classes in place of shapiq's, until :meth:`restore`
    (or the end of a ``with`` block)."""

    def __init__(self):
        originals = {id(theirs): ours for ours, theirs in _replacements()}
        self._undo = []             # (namespace dict, key, shapiq's class)
        # every module of shapiq that holds one of the classes (where it is
        # defined, the packages that re-export it, the explainers' imports),
        # and the dicts of classes in them (the explainers' configurations)
        for name, module in list(sys.modules.items()):
            if name.split(".")[0] != "shapiq" or module is None:
                continue
            self._swap(vars(module), originals, depth=2)

    def _swap(self, namespace: dict, originals: dict, depth: int) -> None:
        for key, value in list(namespace.items()):
            ours = originals.get(id(value))
            if ours is not None:
                self._undo.append((namespace, key, value))
                namespace[key] = ours
            elif depth and type(value) is dict:
                self._swap(value, originals, depth - 1)

    def restore(self) -> None:
        """Put shapiq's classes back (once; later calls do nothing)."""
        while self._undo:
            namespace, key, theirs = self._undo.pop()
            namespace[key] = theirs

    def __enter__(self) -> Swapped:
        return self

    def __exit__(self, *exc) -> None:
        self.restore()


def use() -> Swapped:
    """Make shapiq build fastcredit's classes wherever it builds its own.

    Every class of :mod:`fastcredit.shapiq` that replaces a shapiq class of
    the same name (``ExactComputer``, ``KernelSHAP``, ``SVARM``, ...) is put
    in its place in every shapiq module that holds it, and in shapiq's
    explainer configurations (the classes behind ``approximator="auto"``,
    ``"svarm"``, ``"regression"``, ...). shapiq's classes that fastcredit
    does not replace stay shapiq's.

    Returns
    -------
    Swapped
        The swap, in force from this call: ``restore()`` undoes it, and so
        does leaving it as a context manager (``with use(): ...``).

    Examples
    --------
    >>> import numpy as np, shapiq
    >>> import fastcredit.shapiq as fs
    >>> game = lambda rows: rows.sum(axis=1) ** 2.0
    >>> with fs.use():
    ...     explainer = shapiq.AgnosticExplainer(game, n_players=5, index="SV", max_order=1)
    >>> type(explainer.approximator).__module__
    'fastcredit.shapiq.kernelshap'
    >>> type(shapiq.AgnosticExplainer(game, n_players=5, index="SV",
    ...                               max_order=1).approximator).__module__
    'shapiq.approximator.regression.kernelshap'
    """
    return Swapped()
