"""csrc/ under AddressSanitizer and UndefinedBehaviorSanitizer.

The C library is built with ``-fsanitize=address,undefined
-fno-sanitize-recover=all -g -O1`` (plus ``float-cast-overflow``, which
``undefined`` leaves out in GCC), once with GCC's vector extensions and once
with the portable loops (``-DFC_NO_VECTOR_EXT``), and linked with

* tests/c_abi_test.c: hand-made inputs for every kernel family with values
  derived in its comments, and FC_EINVAL on invalid arguments;
* tests/c_fuzz.c: a deterministic fuzz driver that builds random inputs
  inside each kernel's documented contract (and boundary-invalid ones) for
  every public kernel, with exactly sized heap arrays so any out-of-bounds
  access is reported, and checks the results against the documented
  definitions. A failing iteration prints ``c_fuzz 1 SEED FAMILY K`` to rerun
  it alone.

Any sanitizer report aborts the program, so the tests fail with its report.
LeakSanitizer runs too (``detect_leaks=1``: the fuzz driver frees everything,
and fc_auction_replay's workspace must be freed) when it works in this
environment; it does not under ptrace-restricted sandboxes (it needs to stop
the process's threads), and then the tests run with ``detect_leaks=0`` and say
so in their output. The tests skip only when the compiler has no sanitizer
runtimes (or the platform cannot run an instrumented program at all).

``KNOWN_DEFECTS`` lists inputs on which a kernel currently has undefined
behaviour or breaks its documented contract (``c_fuzz probe NAME``; the fuzz
loop avoids them). They are strict xfails: fixing csrc/ turns one into an
XPASS, and its entry then moves to ``FIXED_PROBES``, which must pass on both
builds.
"""
from __future__ import annotations

import concurrent.futures
import os
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
CSRC = ROOT / "csrc"
CC = shutil.which("gcc")

SANITIZE = ["-fsanitize=address,undefined", "-fsanitize=float-cast-overflow",
            "-fno-sanitize-recover=all", "-g", "-O1", "-fno-omit-frame-pointer"]
WARN = ["-Wall", "-Wextra", "-pedantic", "-Werror"]
VARIANTS = {"vector": [], "portable": ["-DFC_NO_VECTOR_EXT"]}

# Fuzz iterations per family and the fixed seed. 1500 iterations run in about
# 2 s per build; the sanitizer builds themselves (tables.c's target clones)
# take most of this module's time.
FUZZ_ITERATIONS = 1500
FUZZ_SEED = 20240601

UBSAN_OPTIONS = "print_stacktrace=1:halt_on_error=1"

KNOWN_DEFECTS: dict[str, str] = {}

# Probes of defects fixed since (c_fuzz's probe() keeps them): each must
# print "probe ok", i.e. the kernel refuses the input (m shifted by before it
# was checked, first_game / first_unit + count and the sum of the counts past
# INT64_MAX) or gives the documented result (the projection's tau nearest 0
# when zero weights leave a range of roots).
FIXED_PROBES = [
    "leave_one_out_negative_m", "leave_one_out_m64", "size_resolved_negative_m",
    "semivalue_partial_m63", "semivalue_partial_m64",
    "permutation_shapley_first_game_overflow", "sampling_permutations_first_unit_overflow",
    "allocation_counts_overflow", "project_box_zero_weights_unbounded",
    "project_box_zero_weight_tie_break", "project_box_zero_weight_flat_tail",
]

_PROBE_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "ok";
    volatile int big = INT_MAX;
    char *volatile p = malloc(8);
    p[0] = 1;
    if (!strcmp(mode, "ub")) big = big + argc;     /* signed integer overflow */
    if (strcmp(mode, "leak")) free(p); else p = 0; /* "leak": 8 bytes leaked */
    if (!strcmp(mode, "uaf")) big = p[0];          /* heap-use-after-free */
    printf("done %d\n", big > 0);
    return 0;
}
"""


def _run(cmd, env=None, timeout=600):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env,
                          timeout=timeout)


@pytest.fixture(scope="module")
def sanitizers(tmp_path_factory):
    """The runtime environment for instrumented programs; skips when the
    compiler lacks the sanitizer runtimes."""
    if CC is None:
        pytest.skip("gcc is not on PATH")
    work = tmp_path_factory.mktemp("sanitizer_probe")
    (work / "probe.c").write_text(_PROBE_C)
    exe = work / "probe"
    res = _run([CC, "-std=c99", *SANITIZE, work / "probe.c", "-o", exe])
    if res.returncode != 0:
        pytest.skip(f"{CC} cannot build with -fsanitize=address,undefined "
                    f"(no sanitizer runtimes?):\n{res.stderr}")
    env = dict(os.environ, UBSAN_OPTIONS=UBSAN_OPTIONS,
               ASAN_OPTIONS="detect_leaks=0:halt_on_error=1")
    res = _run([exe, "ok"], env=env)
    if res.returncode != 0:
        pytest.skip(f"an AddressSanitizer program cannot run here:\n{res.stderr}")
    # the instrumentation is live: both kinds of error are reported
    res = _run([exe, "uaf"], env=env)
    assert res.returncode != 0 and "heap-use-after-free" in res.stderr, res.stderr
    res = _run([exe, "ub"], env=env)
    assert res.returncode != 0 and "runtime error" in res.stderr, res.stderr
    # LeakSanitizer: a known 8-byte leak must be reported
    res = _run([exe, "leak"], env=dict(env, ASAN_OPTIONS="detect_leaks=1:halt_on_error=1"))
    leaks = res.returncode != 0 and "detected memory leaks" in res.stderr
    note = ("LeakSanitizer on" if leaks else
            "LeakSanitizer does not work here (detect_leaks=0):\n" + res.stderr[-500:])
    env["ASAN_OPTIONS"] = (f"detect_leaks={int(leaks)}:halt_on_error=1:"
                           "detect_stack_use_after_return=1:strict_string_checks=1")
    return {"env": env, "note": note}


@pytest.fixture(scope="module")
def builds(sanitizers, tmp_path_factory):
    """Both variants' instrumented c_abi_test and c_fuzz, compiled file by
    file over the available cores."""
    out = tmp_path_factory.mktemp("sanitizer_builds")
    jobs, links = [], {}
    for variant, defines in VARIANTS.items():
        objs = []
        for src in [*sorted(CSRC.glob("*.c")), ROOT / "tests" / "c_abi_test.c",
                    ROOT / "tests" / "c_fuzz.c"]:
            obj = out / f"{variant}-{src.stem}.o"
            warn = WARN if src.parent.name == "tests" else []
            jobs.append([CC, "-std=c99", *SANITIZE, *warn, *defines, "-I", CSRC, "-c", src,
                         "-o", obj])
            objs.append(obj)
        lib = [o for o in objs if not o.stem.endswith(("c_abi_test", "c_fuzz"))]
        for prog in ("c_abi_test", "c_fuzz"):
            exe = out / f"{variant}-{prog}"
            links[(variant, prog)] = (exe, [CC, *SANITIZE, out / f"{variant}-{prog}.o", *lib,
                                            "-lm", "-o", exe])
    jobs.sort(key=lambda cmd: "tables.c" not in str(cmd[-3]))  # the slowest first
    workers = max(2, os.cpu_count() or 2)
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        for cmd, res in zip(jobs, pool.map(_run, jobs)):
            assert res.returncode == 0, f"{' '.join(map(str, cmd))}\n{res.stderr}"
    for exe, cmd in links.values():
        res = _run(cmd)
        assert res.returncode == 0, res.stderr
    return {key: exe for key, (exe, _) in links.items()}


def _report(res, sanitizers):
    return (f"exit {res.returncode}; {sanitizers['note']}\n--- stdout\n{res.stdout[-6000:]}"
            f"\n--- stderr\n{res.stderr[-8000:]}")


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_c_abi_test_under_sanitizers(builds, sanitizers, variant):
    res = _run([builds[(variant, "c_abi_test")]], env=sanitizers["env"])
    assert res.returncode == 0 and res.stdout.strip() == "ok", _report(res, sanitizers)


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_fuzz_under_sanitizers(builds, sanitizers, variant):
    res = _run([builds[(variant, "c_fuzz")], FUZZ_ITERATIONS, FUZZ_SEED], env=sanitizers["env"])
    assert res.returncode == 0 and res.stdout.startswith("fuzz ok"), _report(res, sanitizers)
    print(res.stdout.strip(), "|", sanitizers["note"].splitlines()[0])


@pytest.mark.parametrize("probe", [
    pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=reason))
    for name, reason in KNOWN_DEFECTS.items()] or [
    pytest.param(None, marks=pytest.mark.skip(reason="no known defects"))])
def test_known_defect_probe(builds, sanitizers, probe):
    res = _run([builds[("vector", "c_fuzz")], "probe", probe], env=sanitizers["env"])
    assert res.returncode == 0 and res.stdout.strip() == "probe ok", _report(res, sanitizers)


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_fixed_defect_probes(builds, sanitizers, variant):
    for probe in FIXED_PROBES:
        res = _run([builds[(variant, "c_fuzz")], "probe", probe], env=sanitizers["env"])
        assert res.returncode == 0 and res.stdout.strip() == "probe ok", \
            f"probe {probe}: " + _report(res, sanitizers)
