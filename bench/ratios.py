"""Print the performance table: every kernel as a ratio to the physical limit
(streaming its input once) and to what users would run instead, measured in
this process, best of several repeats.

    python bench/ratios.py            # every family
    python bench/ratios.py tables     # some families

Each family contributes ``bench/ratios_<family>.py`` with a function
``rows() -> list[dict]`` using the COLUMNS below.
"""
from __future__ import annotations

import importlib
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from common import machine, table  # noqa: E402

COLUMNS = ["kernel", "case", "backend", "threads", "time", "x stream", "x alternative",
           "alternative", "target", "met"]


def families() -> list[str]:
    here = pathlib.Path(__file__).resolve().parent
    return sorted(p.stem[len("ratios_"):] for p in here.glob("ratios_*.py"))


def main(argv: list[str]) -> int:
    chosen = argv or families()
    unknown = sorted(set(chosen) - set(families()))
    if unknown:
        print(f"unknown families {unknown}; have {families()}", file=sys.stderr)
        return 2
    print(f"machine: {machine()}\n")
    for fam in chosen:
        rows = importlib.import_module(f"ratios_{fam}").rows()
        print(f"## {fam}\n")
        print(table(rows, COLUMNS))
        print(flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
