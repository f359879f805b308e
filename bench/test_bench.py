"""pytest-benchmark front end over the cases of bench/ratios.py: one benchmark
per case, backend and thread count, the same for its bare call (the kernels
called directly), and one per alternative.

    pytest bench/test_bench.py --benchmark-only            # small inputs
    FASTCREDIT_BENCH_QUICK=0 pytest bench/test_bench.py    # the full sizes

Every family's inputs are built at collection, so the full sizes need a few
GB of memory; bench/ratios.py builds them one family at a time.
"""
import pytest

import common

QUICK = common.quick_from_env(True)


def _cases():
    for family in common.families():
        try:
            yield from ((family, case) for case in common.family_cases(family, QUICK))
        except common.Skipped:
            pass


CASES = list(_cases())


def _id(family, case):
    return f"{family}/{case.kernel}/{case.case}"


_KERNELS = {}
for _family, _case in CASES:
    if _case.measure is not None:    # fresh-process timings: bench/ratios.py only
        continue
    for _backend, _threads in _case.runs():
        _id_ = f"{_id(_family, _case)}/{_backend}/{_threads}t"
        _KERNELS.setdefault(_id_, pytest.param(_case, _backend, _threads, id=_id_))


@pytest.mark.parametrize("case,backend,threads", list(_KERNELS.values()))
def test_kernel(benchmark, case, backend, threads):
    benchmark(case.call, backend, threads)


@pytest.mark.parametrize("case,backend,threads",
                         [p for p in _KERNELS.values() if callable(p.values[0].bare)])
def test_bare(benchmark, case, backend, threads):
    benchmark(case.bare_call(backend, threads))


def test_every_case_has_a_bare_call_or_a_reason():
    # issue 33: every row prints its public call beside its bare kernel calls
    missing = [_id(family, case) for family, case in CASES if case.bare is None]
    assert not missing, f"cases with neither a bare call nor a reason: {missing}"
    measured = [_id(family, case) for family, case in CASES
                if case.measure is not None and callable(case.bare)]
    assert not measured, f"fresh-process cases cannot have a bare call: {measured}"


_ALTERNATIVES = {}
for _family, _case in CASES:
    if _case.alternative is not None and _case.alternative.fn is not None:
        _ALTERNATIVES.setdefault(id(_case.alternative),
                                 pytest.param(_case.alternative,
                                              id=f"{_id(_family, _case)}/{_case.alternative.name}"))


@pytest.mark.parametrize("alternative", list(_ALTERNATIVES.values()))
def test_alternative(benchmark, alternative):
    benchmark(alternative.fn)
