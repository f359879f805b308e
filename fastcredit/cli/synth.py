"""fastcredit synth: synthetic sponsored-search requests written to Parquet."""
from __future__ import annotations

import contextlib
import os
import shutil
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .. import _params, synthetic
from .._constants import RNG_MAX_RANGE, SYNTHETIC_MAX_INDEX
from .._output import AtomicOutput, OutputError, check_output, writing
from .._params import Integer
from .._progress import Stage
from .._validation import check_bool, check_int, check_memory, check_path
from .common import OUTPUTS, REQUESTS, _add_option, _add_quiet
from .demo import K, M

# (upper bounds: those of fastcredit.synthetic.sponsored_search)
CANDIDATES = Integer("k", 1, RNG_MAX_RANGE, "candidate ads per rewrite")
ROW_GROUP = Integer("row_group", 1, SYNTHETIC_MAX_INDEX, "requests per Parquet row group")
_CANDIDATE = "candidates.list.element."

# Bytes of the file write_synthetic writes, measured with pyarrow 26 (the
# options of synthetic_parquet_options, the generator's default preset, the
# only one it writes) on runs of 0 to 20,000 requests, m = 1 to 16, k = 1 to
# 5,000 and row groups of 1 to 65,536 requests: 1,216 to 1,355 bytes of
# schema and footer; 15.6 to 19.4 bytes per candidate slot (m x k: a rewrite
# retrieves k ads, fewer in 20 % of them; the most at k = 1, whose lists are
# shortest); about 12 bytes per request (key, base advantage, list
# offsets); 790 to 925 bytes per row group. Each rounded up, so that the
# estimate is above every file measured: by 9 % (m = 16, k = 1) to 52 % (a
# few requests), 25 % for the default m and k.
_FILE_BYTES, _SLOT_BYTES, _REQUEST_BYTES, _ROW_GROUP_BYTES = 2_048, 21, 16, 1_024


def synthetic_parquet_options(schema) -> dict:
    """ParquetWriter options of :func:`write_synthetic`, chosen for writing
    speed. Measured with pyarrow 26 on 1,000,000 requests (83 million
    candidates): the writer takes 9.2 CPU seconds with pyarrow's defaults
    (a 1.6 GB file) and 4.4 with these (1.7 GB: only value compresses
    much). No dictionary pages (the doubles are nearly
    all distinct; the 50,000 ad ids would take a hash lookup per candidate),
    no statistics but the key's and the action's (which let ``fastcredit
    score`` refuse a wrong ``--m`` before any work); ad_id delta-encoded and, like score and
    prerank (random doubles, which snappy shrinks by a few percent at a
    quarter more writing time), not compressed; snappy for the rest (value
    is mostly zeros). Leaves declared non-null (:func:`_required`) spare the
    writer validity bitmaps. Every page carries its CRC-32 checksum (4
    bytes a page), so that a reader verifying them (``fastcredit score``)
    refuses a file changed after it was written."""
    leaves = [f.name for f in schema if f.name != "candidates"]
    if schema.get_field_index("candidates") >= 0:
        leaves += [_CANDIDATE + f.name for f in schema.field("candidates").type.value_type]
    plain = {_CANDIDATE + name for name in ("ad_id", "score", "prerank")}
    return {"use_dictionary": False, "write_statistics": ["request_id", _CANDIDATE + "action"],
            "write_page_checksum": True,
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


def synthetic_bytes(n_requests: int, *, m: int = 5, k: int = 20,
                    row_group: int = 65_536) -> int:
    """An estimate, from above, of the size in bytes of the file
    :func:`write_synthetic` writes for these arguments: 2,048 + (16 + 21 m
    k) per request + 1,024 per row group. The files measured were 8 to 34 %
    smaller (20 % for m = 5, k = 20: 1.7 kB a request)."""
    row_groups = -(-n_requests // row_group)
    return (_FILE_BYTES + n_requests * (_REQUEST_BYTES + _SLOT_BYTES * m * k)
            + row_groups * _ROW_GROUP_BYTES)


def _size(nbytes: float) -> str:
    """``nbytes`` in decimal units: '1.7 GB'."""
    for unit in ("bytes", "kB", "MB", "GB", "TB", "PB", "EB", "ZB"):
        if nbytes < 1000:
            break
        nbytes /= 1000
    return f"{nbytes:,.0f} {unit}" if unit == "bytes" else f"{nbytes:,.1f} {unit}"


def _check_space(path: str, size: int, what: str) -> None:
    """Refuse (OutputError) a file of ``size`` bytes, estimated for ``what``
    (the requests asked for), that would not fit in the space free on the
    file system of ``path``: a run must not fill the disk. While it is
    written, a file ``path`` replaces keeps its space."""
    free = shutil.disk_usage(os.path.dirname(path)).free
    if size > free:
        raise OutputError(f"{what} would write about {_size(size)} to {path!r}, more than the "
                          f"{_size(free)} free on its file system")


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
    before any work, and complete or absent at the end; a file larger (by
    :func:`synthetic_bytes`, an estimate from above) than the space free
    where it goes is refused before any work (OutputError), and an error of
    writing (a full disk) is an OSError naming the destination. Returns
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
    _check_space(output.destination,
                 synthetic_bytes(n_requests, m=m, k=k, row_group=row_group),
                 f"n_requests = {n_requests:,}")
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
                    with writing(destination):
                        writer = pq.ParquetWriter(temp, schema,
                                                  **synthetic_parquet_options(schema))
                with writing(destination):
                    writer.write_table(table.cast(schema), row_group_size=row_group)
                bar.advance(table.num_rows)
            with writing(destination):
                writer.close()
        except BaseException:
            if writer is not None:   # the file is discarded: no footer, nor its error
                with contextlib.suppress(Exception):
                    writer.close()
            raise
    return destination


def add_parser(sub) -> None:
    synth = sub.add_parser("synth", help="write synthetic sponsored-search requests to Parquet",
                           description="Write synthetic sponsored-search requests "
                                       "(fastcredit.synthetic.sponsored_search) to one "
                                       "Parquet file in the candidates layout of "
                                       "fastcredit score, every page with its checksum; "
                                       "the size it will write is said before writing.",
                           epilog=OUTPUTS)
    synth.add_argument("output", help="Parquet file to write (atomically)")
    _add_option(synth, "--requests", REQUESTS, 1_000_000,
                f"number of requests; each takes up to about 16 + 21 x m x k bytes of the "
                f"file ({_size(_REQUEST_BYTES + _SLOT_BYTES * M * K)} with the default m and "
                f"k), and a file that would not fit in the space free on its file system is "
                f"refused before any work")
    _add_option(synth, "--m", _params.ACTIONS, M)
    _add_option(synth, "--k", CANDIDATES, K)
    _add_option(synth, "--seed", _params.SEED, 0)
    _add_option(synth, "--row-group", ROW_GROUP, 65_536)
    _add_option(synth, "--threads", _params.THREADS, None,
                "threads generating requests (default: all cores); the file is the same")
    _add_quiet(synth)


def run(args) -> int:
    from ..scoring import _pa
    _pa()   # without pyarrow: one line naming the extra, before anything else
    # checked here too, so that a refusal names the option and the size is
    # said before the work (write_synthetic checks the same for its callers)
    size = synthetic_bytes(args.requests, m=args.m, k=args.k, row_group=args.row_group)
    _check_space(check_output(args.output), size, f"--requests {args.requests:,}")
    if not args.quiet:
        print(f"fastcredit synth: writing {args.requests:,} requests, about {_size(size)}, to "
              f"{args.output}", file=sys.stderr, flush=True)
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
