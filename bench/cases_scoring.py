"""Cases of batch scoring (fastcredit.scoring, fastcredit.dask): Parquet in,
Parquet out, against its own stages.

B synthetic requests (1,000,000; quick: 20,000; m = 5 x k = 20, ~1.6 KB of
Parquet each, written once into a temporary directory), four rules and
shaping (`--base`), both cores. The three stages are first timed each alone
on all cores, on the same data, in this process: pyarrow reading and decoding
the file (the reader's settings), the kernels on the same requests in memory
(replay, four rules, shaping) and pyarrow encoding and writing the output.
The end-to-end rows compare their wall time with the SUM of the stage rows
(the pipeline overlaps them: a sequential scorer is at best 1.0) and their
CPU time with the stages' CPU time (the pipeline's overhead, whatever the
load); "cores busy" = CPU time / wall time. On a machine shared with other
sessions Linux (autogroup) gives each session a share of the cores however
many threads it runs, so overlap shortens the wall time only as far as that
share allows: read the CPU ratio and the cores busy beside the wall ratio.

First `fastcredit synth` writing the B requests (issue 16's >= 500k req/s),
with the CPU time of its writing thread, and pyarrow's Parquet encoding of
the same row groups alone on one thread (a Parquet file is written by one
thread, so that cost per request bounds synth from above).

Then: Dask on a LocalCluster of 2 worker processes x 1 thread writing a
directory, against the single process (`x alternative` = Dask / single); the
peak RSS of a 10,000,000-request run (ten hard links to the file; full
bench only, in a subprocess: its VmHWM, as its ru_maxrss would include the
bench's own memory at the fork); and the decode cost of other input
layouts of the same candidates (decode only, all five fields, 200,000
requests; quick: 20,000; `x alternative` = layout / list<struct> with
nullable fields, the layout `fastcredit synth` wrote before it declared its
fields not null).
"""
from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

import fastcredit as fc
from common import Alternative, Case, Skipped, sci

RULES = ("shapley", "banzhaf", "singleton", "leave_one_out")
THREADS = 2
STAGE = "score_parquet"

#: Why these cases have no bare call (see bench/common.py's Case).
NO_BARE = ("n/a: a Parquet-to-Parquet pipeline (I/O, decoding, many kernels); its own "
           "stages are what its rows compare")


def _pa():
    try:
        import pyarrow  # noqa: F401
        import pyarrow.parquet as pq
    except ImportError:
        raise Skipped("pyarrow not installed") from None
    return pq


class _NoWarmup:
    """A run whose first call (the harness's warm-up) does nothing: each call
    of these cases reads or writes gigabytes, and the page cache is warm
    (``setup``, if any, runs then instead). Records the CPU time of this
    process beside the wall time of each call: ``cpu`` is the CPU time of the
    fastest call."""

    def __init__(self, fn, setup=None):
        self.fn = fn
        self.setup = setup
        self.calls = 0
        self.times = []

    def __call__(self, backend, threads):
        self.calls += 1
        if self.calls == 1:
            return None if self.setup is None else self.setup()
        wall, cpu = time.perf_counter(), time.process_time()
        out = self.fn(threads)
        self.times.append((time.perf_counter() - wall, time.process_time() - cpu))
        return out

    @property
    def cpu(self) -> float:
        return min(self.times)[1]


def _cpu(r) -> float:
    return r.case.run.cpu


def _workdir() -> str:
    path = tempfile.mkdtemp(prefix="fastcredit-bench-scoring-")
    atexit.register(shutil.rmtree, path, True)
    return path


def _config(threads):
    from fastcredit.scoring import ScoreConfig
    return ScoreConfig(rules=RULES, base="base_advantage", threads=threads)


def _read_stage(src, columns):
    """pyarrow reading and decoding the file as the scorer's reader does (the
    same Parquet columns: the candidate fields scoring uses)."""
    import pyarrow.parquet as pq
    from fastcredit import scoring
    f = pq.ParquetFile(src, pre_buffer=False, buffer_size=scoring._READ_BUFFER)
    rows = 0
    for batch in f.iter_batches(batch_size=scoring._DECODE_ROWS, use_threads=True,
                                columns=scoring._leaves(f, columns, _config(None))):
        rows += batch.num_rows
    return rows


def _kernel_stage(pools, base, threads):
    table = fc.auction_replay(pools, threads=threads)
    credit = {rule: getattr(fc, rule)(table, threads=threads) for rule in RULES}
    return fc.shape_advantages(base, credit["shapley"], threads=threads)


def _write_stage(table, dest, config):
    import pyarrow.parquet as pq
    from fastcredit import scoring
    with pq.ParquetWriter(dest, table.schema, **scoring._write_options(table.schema, config)) \
            as writer:
        writer.write_table(table, row_group_size=65_536)


def _end_to_end_cases(b, src, work):
    import pyarrow.parquet as pq
    from fastcredit import scoring
    label = f"{sci(b)} requests, 4 rules + base"
    columns = ["request_id", "candidates", "base_advantage"]
    pools = fc.synthetic.sponsored_search(b, seed=0)
    base = pq.read_table(src, columns=["base_advantage"]).column(0).to_numpy()
    dest = os.path.join(work, "scored.parquet")
    scoring.score_parquet(src, dest, _config(THREADS))  # the output the write stage writes
    scored = pq.read_table(dest)
    want = _kernel_stage(pools, base, THREADS)
    got = np.stack(scored.column("advantage").to_numpy(zero_copy_only=False))
    assert np.array_equal(got, want), "the scorer and the kernels disagree"
    stages = [f"stage alone: pyarrow read + decode ({os.path.getsize(src) / 2**30:.2f} GiB)",
              "stage alone: kernels in memory (replay, 4 rules, shaping)",
              "stage alone: pyarrow encode + write the output"]
    runs = [lambda t: _read_stage(src, columns),
            lambda t: _kernel_stage(pools, base, t),
            lambda t: _write_stage(scored, os.path.join(work, "written.parquet"), _config(t))]
    stage_runs = [_NoWarmup(fn) for fn in runs]
    for case, run in zip(stages, stage_runs):
        yield Case(STAGE, f"{label}, {case}", run, threads=(THREADS,),
                   backends=("auto",), repeats=3,
                   detail=lambda r: f"{b / r.t:,.0f} req/s, cpu {_cpu(r):.2f} s", bare=NO_BARE)

    def stage_sum(r):
        return sum(r.time_of(f"{label}, {case}", THREADS) for case in stages)

    def stage_cpu():
        return sum(run.cpu for run in stage_runs)

    def detail(r):
        return (f"{b / r.t:,.0f} req/s, {r.t / stage_sum(r):.2f}x the stages' wall, cpu "
                f"{_cpu(r):.2f} s = {_cpu(r) / stage_cpu():.2f}x theirs, "
                f"{_cpu(r) / r.t:.2f} cores busy")

    def met(r):
        ratio = r.t / stage_sum(r)
        rate = b / r.t
        return (f"{'yes' if ratio <= 1.2 else 'no'} ({ratio:.2f}x stages); "
                f"{'yes' if rate >= 150_000 else 'no'} ({rate:,.0f} req/s)")

    def score(pipeline):
        def run(threads):
            return scoring.score_parquet(src, dest, _config(threads), pipeline=pipeline,
                                         progress=False)
        return run

    for pipeline, text in [(True, "end to end, file -> file"),
                           (False, "end to end, pipeline=False (stages one after another)")]:
        yield Case(STAGE, f"{label}, {text}", _NoWarmup(score(pipeline)),
                   target="<= 1.2x stages, >= 150k req/s" if pipeline else "",
                   met=met if pipeline else None, detail=detail,
                   threads=(THREADS,), backends=("auto",), repeats=2, bare=NO_BARE)


def _dask_case(b, src, work):
    try:
        import distributed
    except ImportError:
        return
    import fastcredit.dask as fdask
    label = f"{sci(b)} requests, 4 rules + base"
    dest = os.path.join(work, "dask-out")

    def start():
        """The cluster, started on the warm-up call (cases are built ahead of
        running by bench/test_bench.py) and closed at exit."""
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=":0")
        client = distributed.Client(cluster)
        atexit.register(cluster.close)
        atexit.register(client.close)
        fdask.score_parquet(src, dest, _config(None))  # workers import and warm up

    def run(threads):
        return fdask.score_parquet(src, dest, _config(None))

    single = f"{label}, end to end, file -> file"

    def met(r):
        speed = r.earlier[STAGE, single, r.backend, THREADS] / r.t
        return f"{'yes' if speed >= 0.85 else 'no'} ({speed:.2f}x single process)"

    yield Case("fastcredit.dask.score_parquet", f"{label}, LocalCluster 2 workers x 1 thread",
               _NoWarmup(run, setup=start), target=">= 0.85x single process", met=met,
               detail=lambda r: f"{b / r.t:,.0f} req/s", threads=(THREADS,),
               backends=("auto",), repeats=2, bare=NO_BARE)


def _rss_case(src, work, copies=10):
    """Peak RSS of one process scoring ``copies`` hard links of the file."""
    pq = _pa()
    rows = pq.ParquetFile(src).metadata.num_rows * copies
    links = os.path.join(work, "ten")
    os.mkdir(links)
    for i in range(copies):
        os.link(src, os.path.join(links, f"part-{i}.parquet"))
    # ScoreSummary.peak_rss_bytes is VmHWM: the child's own ru_maxrss would
    # include this process's memory at the fork, which Linux keeps across exec
    script = (
        "import json, sys\n"
        "from fastcredit.scoring import ScoreConfig, score_parquet\n"
        f"config = ScoreConfig(rules={RULES!r}, base='base_advantage')\n"
        "s = score_parquet(sys.argv[1], sys.argv[2], config, progress=False)\n"
        "print(json.dumps({'rows': s.rows, 'seconds': s.seconds, 'rss': s.peak_rss_bytes}))\n")
    seen = {}

    def run(threads):
        out = subprocess.run([sys.executable, "-c", script, links,
                              os.path.join(work, "ten.parquet")],
                             check=True, capture_output=True, text=True).stdout
        seen.update(json.loads(out.splitlines()[-1]))
        os.unlink(os.path.join(work, "ten.parquet"))
        return seen

    def met(r):
        gib = seen["rss"] / 2**30
        return f"{'yes' if gib <= 1.5 else 'no'} ({gib:.2f} GiB)"

    yield Case(STAGE, f"{sci(rows)} requests (10 files), peak RSS of the process",
               _NoWarmup(run), target="peak RSS <= 1.5 GiB", met=met,
               detail=lambda r: f"{seen['rows'] / seen['seconds']:,.0f} req/s, "
                                f"{seen['rss'] / 2**30:.2f} GiB",
               threads=(THREADS,), backends=("auto",), repeats=1, bare=NO_BARE)


def _layouts(table):
    """The candidates of ``table`` in other layouts: {name: table}."""
    import pyarrow as pa
    cands = table.column("candidates").combine_chunks()
    values = cands.values
    names = [values.type.field(i).name for i in range(values.type.num_fields)]
    fields = {n: values.field(n) for n in names}
    offsets = cands.offsets
    key = table.column("request_id")

    def struct_list(nullable):
        item = pa.struct([pa.field(n, fields[n].type, nullable=nullable) for n in names])
        return pa.LargeListArray.from_arrays(offsets, pa.StructArray.from_arrays(
            list(fields.values()), fields=list(item))).cast(
            pa.large_list(pa.field("element", item, nullable=nullable)))

    def table_of(columns, nullable):
        return pa.Table.from_arrays(list(columns.values()), schema=pa.schema(
            [pa.field(n, c.type, nullable=nullable) for n, c in columns.items()]))

    per_field = {n: pa.LargeListArray.from_arrays(offsets, fields[n]).cast(
        pa.large_list(pa.field("element", fields[n].type, nullable=False))) for n in names}
    owner = np.repeat(np.arange(table.num_rows), np.diff(offsets.to_numpy()))
    return {
        "list<struct>, nullable fields": table_of(
            {"request_id": key, "candidates": struct_list(True)}, True),
        "list<struct>, fields not null (fastcredit synth)": table_of(
            {"request_id": key, "candidates": struct_list(False)}, False),
        "one list column per field, not null": table_of(
            {"request_id": key, **per_field}, False),
        "flat: one row per candidate (no lists), not null": table_of(
            {"request_id": pa.array(owner), **fields}, False),
    }


def _layout_cases(src, quick, work):
    import pyarrow as pa
    import pyarrow.parquet as pq
    from fastcredit import scoring
    n = 20_000 if quick else 200_000
    f = pq.ParquetFile(src)
    table = None
    for batch in f.iter_batches(batch_size=n, columns=["request_id", "candidates"]):
        table = pa.Table.from_batches([batch])
        break
    first = None
    for name, t in _layouts(table).items():
        path = os.path.join(work, f"layout-{len(os.listdir(work))}.parquet")
        pq.write_table(t, path, row_group_size=65_536)
        size = os.path.getsize(path)

        def decode(threads, path=path):
            reader = pq.ParquetFile(path, pre_buffer=False, buffer_size=scoring._READ_BUFFER)
            for _ in reader.iter_batches(batch_size=scoring._DECODE_ROWS, use_threads=True):
                pass

        if first is None:
            first = Alternative("decode of list<struct>, nullable fields",
                                lambda decode=decode: decode(THREADS), repeats=5)
        yield Case("decode layout", f"{sci(n)} requests, {name}", _NoWarmup(decode),
                   alternative=first, target="report", met=lambda r: "reported",
                   detail=lambda r, size=size: f"{size / 2**20:,.0f} MiB, "
                                               f"{n / r.t:,.0f} req/s",
                   threads=(THREADS,), backends=("auto",), repeats=5, bare=NO_BARE)


def _synth_cases(b, quick, work):
    """``fastcredit synth`` (write_synthetic) of the B requests, both cores,
    with the CPU time of its writing thread (the calling one: it encodes and
    writes while the next row group is generated on the others); then
    pyarrow's Parquet encoding alone of synth's row groups, with synth's
    writer options, into /dev/null on one thread: the per-request cost of the
    one serial stage, which bounds synth from above whatever the generator
    does (a file is written by one thread)."""
    import pyarrow.parquet as pq
    from fastcredit.cli.synth import _required, _synthetic_part, synthetic_parquet_options, \
        write_synthetic
    dest = os.path.join(work, "synth.parquet")
    writer_cpu = []

    def synth(threads):
        cpu = time.thread_time()
        write_synthetic(dest, b, seed=0, progress=False, threads=threads)
        writer_cpu.append(time.thread_time() - cpu)

    def met(r):
        rate = b / r.t
        return f"{'yes' if rate >= 500_000 else 'no'} ({rate:,.0f} req/s)"

    yield Case("fastcredit synth", f"{sci(b)} requests to one Parquet file",
               _NoWarmup(synth), target=">= 500k req/s", met=met,
               detail=lambda r: f"{b / r.t:,.0f} req/s, writing thread cpu "
                                f"{min(writer_cpu) / b * 1e6:.2f} us/request, process cpu "
                                f"{_cpu(r) / b * 1e6:.2f} us/request",
               threads=(THREADS,), backends=("auto",), repeats=2, bare=NO_BARE)

    n = 20_000 if quick else 262_144
    groups = [_synthetic_part(s, min(65_536, n - s), 5, 20, 0, True, THREADS)
              for s in range(0, n, 65_536)]
    schema = _required(groups[0].schema)
    groups = [g.cast(schema) for g in groups]

    def encode(backend, threads):
        with pq.ParquetWriter(os.devnull, schema, **synthetic_parquet_options(schema)) as w:
            for g in groups:
                w.write_table(g, row_group_size=65_536)

    yield Case("pyarrow Parquet encode", f"{sci(n)} requests of synth's row groups and "
               "options, to /dev/null", encode, threads=(1,), backends=("auto",), repeats=3,
               detail=lambda r: f"{r.t / n * 1e6:.2f} us/request: one writing thread "
                                f"writes at most {n / r.t:,.0f} req/s", bare=NO_BARE)


def cases(quick: bool):
    _pa()
    from fastcredit.cli import write_synthetic
    b = 20_000 if quick else 1_000_000
    work = _workdir()
    src = os.path.join(work, "requests.parquet")
    t0 = time.perf_counter()
    write_synthetic(src, b, seed=0, progress=False)
    print(f"(scoring: wrote {b:,} requests in {time.perf_counter() - t0:.0f} s)",
          file=sys.stderr)
    yield from _synth_cases(b, quick, work)
    yield from _end_to_end_cases(b, src, work)
    yield from _dask_case(b, src, work)
    yield from _layout_cases(src, quick, work)
    if not quick:
        yield from _rss_case(src, work)
