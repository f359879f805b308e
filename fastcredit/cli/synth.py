"""fastcredit synth: synthetic sponsored-search requests written to Parquet."""
from __future__ import annotations

import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .. import _params, synthetic
from .._constants import RNG_MAX_RANGE, SYNTHETIC_MAX_INDEX
from .._output import AtomicOutput
from .._params import Integer
from .._progress import Stage
from .._validation import check_bool, check_int, check_memory, check_path
from .common import REQUESTS, _add_option, _add_quiet
from .demo import K, M

# (upper bounds: those of fastcredit.synthetic.sponsored_search)
CANDIDATES = Integer("k", 1, RNG_MAX_RANGE, "candidate ads per rewrite")
ROW_GROUP = Integer("row_group", 1, SYNTHETIC_MAX_INDEX, "requests per Parquet row group")
_CANDIDATE = "candidates.list.element."


def synthetic_parquet_options(schema) -> dict:
    """ParquetWriter options of :func:`write_synthetic`, chosen for writing
    speed. Measured with pyarrow 26 on 1,000,000 requests (83 million
    candidates): the writer takes 9.2 CPU seconds with pyarrow's defaults
    (a 1.6 GB file) and 4.4 with these (1.7 GB: only value compresses
    much). No dictionary pages (the doubles are nearly
    all distinct; the 50,000 ad ids would take a hash lookup per candidate),
    no statistics but the key's; ad_id delta-encoded and, like score and
    prerank (random doubles, which snappy shrinks by a few percent at a
    quarter more writing time), not compressed; snappy for the rest (value
    is mostly zeros). Leaves declared non-null (:func:`_required`) spare the
    writer validity bitmaps."""
    leaves = [f.name for f in schema if f.name != "candidates"]
    if schema.get_field_index("candidates") >= 0:
        leaves += [_CANDIDATE + f.name for f in schema.field("candidates").type.value_type]
    plain = {_CANDIDATE + name for name in ("ad_id", "score", "prerank")}
    return {"use_dictionary": False, "write_statistics": ["request_id"],
            "compression": {c: "none" if c in plain else "snappy" for c in leaves},
            "column_encoding": {c: "DELTA_BINARY_PACKED" for c in leaves
                                if c == _CANDIDATE + "ad_id"}}


def _required(schema):
    """``schema`` with every field, nested ones too, declared non-null: the
    generator makes no nulls, and the Parquet writer then keeps no validity
    bitmaps (10 % of its time). Casting to it copies nothing."""
    from ..scoring import _pa
    pa = _pa()

    def required(field):
        t = field.type
        if pa.types.is_struct(t):
            t = pa.struct([required(f) for f in t])
        elif pa.types.is_large_list(t):
            t = pa.large_list(required(t.value_field))
        elif pa.types.is_list(t):
            t = pa.list_(required(t.value_field))
        return field.with_type(t).with_nullable(False)

    return pa.schema([required(f) for f in schema])


def _synthetic_part(start: int, count: int, m: int, k: int, seed: int, base: bool,
                    threads):
    """Requests start .. start + count - 1 of the stream as an Arrow table."""
    from ..scoring import _pa, pools_to_arrow
    pools = synthetic.sponsored_search(count, m=m, k=k, seed=seed, start=start,
                                       threads=threads)
    table = pools_to_arrow(pools, first_key=start)
    if base:
        rng = np.random.default_rng([seed, 1 << 20, start])
        table = table.append_column("base_advantage", _pa().array(rng.normal(size=count)))
    return table


def write_synthetic(destination, n_requests: int, *, m: int = 5, k: int = 20, seed: int = 0,
                    row_group: int = 65_536, base: bool = True, progress: bool | None = None,
                    threads=None):
    """Write :func:`fastcredit.synthetic.sponsored_search` requests to one
    Parquet file in the ``candidates`` layout of fastcredit.scoring
    (:func:`~fastcredit.scoring.pools_to_arrow`), ``row_group`` requests per
    row group, generated row group by row group (bounded memory; the requests
    are those of one ``sponsored_search(n_requests, seed=seed)`` call), the
    next row group generated (on ``threads``) while one is written. With
    ``base`` a column ``base_advantage`` (standard normal, seeded) is added
    for shaping. Progress goes to stderr (``progress`` None: when it is a
    terminal). The file is written through
    :class:`fastcredit._output.AtomicOutput`: the destination is checked
    before any work, and complete or absent at the end. Returns
    ``destination``."""
    from ..scoring import _pa
    _pa()
    import pyarrow.parquet as pq
    destination = check_path(destination, "destination")
    n_requests = check_int(n_requests, "n_requests", lo=0, hi=SYNTHETIC_MAX_INDEX)
    row_group = ROW_GROUP.check(row_group)
    m, k = _params.ACTIONS.check(m, "m"), CANDIDATES.check(k)
    seed, threads = _params.SEED.check(seed), _params.THREADS.check(threads)
    base = check_bool(base, "base")
    if progress is not None:
        progress = check_bool(progress, "progress")
    # two row groups in memory (one generated while one is written), each of
    # up to m * k candidates per request of 4 float64/int64 columns
    rows = min(row_group, n_requests)
    check_memory(2 * rows * m * k * 4 * 8,
                 f"k = {k:,}, m = {m} and row_group = {row_group:,} (the candidates of two "
                 f"row groups of {rows:,} requests)")
    output = AtomicOutput(destination)
    show = sys.stderr.isatty() if progress is None else progress
    starts = range(0, max(n_requests, 1), row_group)

    def part(start):
        return _synthetic_part(start, min(row_group, n_requests - start), m, k, seed, base,
                               threads)

    with output as temp, \
            Stage("write requests", n_requests, sys.stderr if show else None,
                  unit="requests") as bar, \
            ThreadPoolExecutor(1, thread_name_prefix="fastcredit-synth") as ahead:
        writer = None
        try:
            coming = ahead.submit(part, starts[0])
            for i in range(len(starts)):
                table = coming.result()
                if i + 1 < len(starts):
                    coming = ahead.submit(part, starts[i + 1])
                if writer is None:
                    schema = _required(table.schema)
                    writer = pq.ParquetWriter(temp, schema, **synthetic_parquet_options(schema))
                writer.write_table(table.cast(schema), row_group_size=row_group)
                bar.advance(table.num_rows)
        finally:
            if writer is not None:
                writer.close()
    return destination


def add_parser(sub) -> None:
    synth = sub.add_parser("synth", help="write synthetic sponsored-search requests to Parquet",
                           description="Write synthetic sponsored-search requests "
                                       "(fastcredit.synthetic.sponsored_search) to one "
                                       "Parquet file in the candidates layout of "
                                       "fastcredit score.")
    synth.add_argument("output", help="Parquet file to write (atomically)")
    _add_option(synth, "--requests", REQUESTS, 1_000_000)
    _add_option(synth, "--m", _params.ACTIONS, M)
    _add_option(synth, "--k", CANDIDATES, K)
    _add_option(synth, "--seed", _params.SEED, 0)
    _add_option(synth, "--row-group", ROW_GROUP, 65_536)
    _add_option(synth, "--threads", _params.THREADS, None,
                "threads generating requests (default: all cores); the file is the same")
    _add_quiet(synth)


def run(args) -> int:
    t0 = time.perf_counter()
    write_synthetic(args.output, args.requests, m=args.m, k=args.k, seed=args.seed,
                    row_group=args.row_group, progress=not args.quiet, threads=args.threads)
    seconds = time.perf_counter() - t0
    print(f"wrote {args.requests:,} synthetic requests (m = {args.m}, k = {args.k}) to "
          f"{args.output} in {seconds:.1f} s ({args.requests / max(seconds, 1e-9):,.0f} "
          f"requests/s)")
    return 0


#: What synth's arguments can be refused with, besides OSError of its file.
ERRORS = (OSError, ValueError)
