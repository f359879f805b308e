"""Print the performance table: every kernel as a ratio to the physical limit
(streaming its input once) and to what users would run instead, measured in
this process, best of several repeats; then the check of
``fastcredit._backend.FASTEST`` (both backends on the bench inputs, the winner
beside each entry) and the FASTEST keys no case measures.

    python bench/ratios.py              # every family (make bench)
    python bench/ratios.py tables       # some families
    python bench/ratios.py --quick      # small inputs, one repeat: checks every
                                        # case runs; the figures mean nothing
    python bench/ratios.py --help       # this text

The C rows of kernels that choose a path by processor name the one they
took, e.g. "c (avx512)".

FASTCREDIT_BENCH_QUICK=1 is the same as --quick. The cases are
``bench/cases_<family>.py`` (see bench/common.py). Exit status 1 when a
FASTEST key has no bench case.
"""
from __future__ import annotations

import sys

import common
from common import COLUMNS, VERDICT_COLUMNS, c_paths, machine, table
from fastcredit._backend import FASTEST


def main(argv: list[str]) -> int:
    if "--help" in argv or "-h" in argv:
        print(__doc__)
        return 0
    quick = "--quick" in argv or common.quick_from_env(False)
    chosen = [a for a in argv if a != "--quick"] or common.families()
    unknown = sorted(set(chosen) - set(common.families()))
    if unknown:
        print(f"unknown families {unknown}; have {common.families()}", file=sys.stderr)
        return 2
    print(f"machine: {machine()}")
    print(f"C paths: {c_paths()}\n")
    if quick:
        print("quick run: small inputs, one repeat; the figures are not the performance "
              "table\n")
    measured: dict = {}
    for fam in chosen:
        try:
            rows = common.run_cases(common.family_cases(fam, quick), quick, measured)
        except common.Skipped as why:
            rows = [{"kernel": fam, "case": str(why), "met": "skipped"}]
        print(f"## {fam}\n")
        print(table(rows, COLUMNS))
        print(flush=True)
    print("## backend choice (fastcredit._backend.FASTEST)\n")
    print(table(common.backend_choice_rows(measured), VERDICT_COLUMNS))
    missing, unknown = common.coverage(measured, chosen)
    print(f"\nFASTEST keys with no bench case: {', '.join(missing) or 'none'}")
    if unknown:
        print(f"bench keys FASTEST does not list: {', '.join(unknown)}")
    skipped = [k for k in FASTEST
               if k not in measured and k not in missing]
    if skipped:
        print(f"FASTEST keys of families not run: {', '.join(skipped)}")
    return 1 if missing or unknown else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
