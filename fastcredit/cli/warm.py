"""fastcredit warm: every cached Numba kernel compiled ahead of time
(fastcredit._warm)."""
from __future__ import annotations

import sys

from .common import _add_quiet


def add_parser(sub) -> None:
    warm = sub.add_parser("warm", help="compile and cache every Numba kernel ahead of time",
                          description="Compile every Numba kernel and cache it on disk, so no "
                                      "later process waits for the compiler; until then "
                                      "backend=None runs every kernel on the C backend.")
    _add_quiet(warm)


def run(args) -> int:
    from .._warm import warm
    if not args.quiet:
        print("compiling and caching every Numba kernel (backend=None uses Numba where it "
              "measured faster once they are warm):")
    seconds = warm(stream=None if args.quiet else sys.stdout)
    print(f"{len(seconds)} kernels warm in {sum(seconds.values()):.1f} s")
    return 0


#: An unwritable cache is the user's to fix.
ERRORS = (OSError,)
