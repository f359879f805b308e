"""fastcredit score: a Parquet file or dataset of requests scored into Parquet
(fastcredit.scoring)."""
from __future__ import annotations

import os

from .. import _params
from .._output import OutputError, WriteError
from ..scoring import BATCH_ROWS
from .common import OUTPUTS, _add_option, _add_quiet, _message, _user_errors, _UserError

SLOTS = 4


def _add_config_arguments(p) -> None:
    """The options of a fastcredit.scoring.ScoreConfig."""
    _add_option(p, "--m", _params.ACTIONS, 5,
                "actions (query rewrites) per request: the number in the data (a larger "
                "one is refused)")
    p.add_argument("--rules", default="shapley",
                   help=f"comma-separated credit rules to output, from "
                        f"{', '.join(_params.RULE.values)} (default: shapley)")
    _add_option(p, "--slots", _params.SLOTS, SLOTS)
    _add_option(p, "--reserve", _params.RESERVE, 0.0)
    _add_option(p, "--capacity", _params.CAPACITY, None)
    _add_option(p, "--pricing", _params.PRICING, "first")
    _add_option(p, "--mode", _params.MODE, "filter")
    p.add_argument("--key", default="request_id",
                   help="request key column, copied to the output (default: request_id)")
    p.add_argument("--carry", default="",
                   help="comma-separated input columns copied to the output after the key "
                        "(default: none)")
    p.add_argument("--base", default=None,
                   help="base-advantage column: also output shaped per-action advantages")
    _add_option(p, "--shaping-rule", _params.RULE, "shapley", "credit rule the shaping uses")
    _add_option(p, "--beta", _params.SCORE_BETA, 1.0)
    _add_option(p, "--kappa", _params.KAPPA, 1.0)
    _add_option(p, "--normalize", _params.NORMALIZE, "std")


def add_parser(sub) -> None:
    score = sub.add_parser("score", help="score a Parquet file or dataset of requests",
                           description="Score the requests of a Parquet file or dataset "
                                       "(see fastcredit.scoring) into Parquet. Every page "
                                       "read is verified against its checksum (a file "
                                       "changed after it was written is refused, naming "
                                       "it); files written without checksums cannot be "
                                       "verified and are read as they are. Every page "
                                       "written carries a checksum.",
                           epilog=OUTPUTS)
    score.add_argument("input", help="Parquet file, directory or glob of requests")
    score.add_argument("output", help="Parquet file to write, or a directory (existing, or "
                                      "ending with /) for one file per input file; written "
                                      "atomically, never over an input")
    _add_config_arguments(score)
    _add_option(score, "--on-error", _params.ON_ERROR, "stop")
    _add_option(score, "--batch-rows", BATCH_ROWS, 65_536)
    _add_option(score, "--threads", _params.THREADS, None)
    _add_quiet(score)


def run(args) -> int:
    from ..scoring import ActionCountError, ScoreConfig, _pa, score_parquet
    _pa()   # without pyarrow: one line naming the extra, before anything else
    try:   # options first: an error here names the option, not the input
        config = ScoreConfig(m=args.m, rules=tuple(args.rules.split(",")), slots=args.slots,
                             reserve=args.reserve, capacity=args.capacity,
                             pricing=args.pricing, mode=args.mode, key=args.key,
                             carry=tuple(c for c in args.carry.split(",") if c),
                             base=args.base, shaping_rule=args.shaping_rule, beta=args.beta,
                             kappa=args.kappa, normalize=args.normalize, threads=args.threads)
    except (ValueError, TypeError) as err:   # the message starts with the field's name
        field = str(err).split(" ", 1)[0]
        flag = f"--{field.replace('_', '-')}: " if hasattr(args, field) else ""
        raise _UserError(f"{flag}{err}") from None
    if not os.path.lexists(args.input) and not any(c in args.input for c in "*?[") \
            and "://" not in args.input:
        raise _UserError(f"input {args.input!r} does not exist")
    try:
        summary = score_parquet(args.input, args.output, config, on_error=args.on_error,
                                batch_rows=args.batch_rows, progress=not args.quiet)
    except (OutputError, WriteError):   # the output's: they name it
        raise
    except ActionCountError as err:
        raise _UserError(f"--m {err.m} is more than the {err.present} actions present in "
                         f"input {args.input!r} (no candidate has an action above "
                         f"{err.present - 1}); use --m {err.present}") from None
    except _user_errors(ValueError, TypeError, OSError) as err:
        text = _message(err)
        if args.input not in text and args.output not in text:
            text = f"input {args.input!r}: {text}"
        raise _UserError(text) from None
    print(f"scored {summary.scored:,} of {summary.rows:,} requests in {summary.seconds:.2f} s "
          f"({summary.requests_per_second:,.0f} requests/s), skipped {summary.skipped:,}, "
          f"peak RSS {summary.peak_rss_bytes / 2**20:,.0f} MiB -> {args.output}")
    for row, reason in summary.errors[:10]:
        print(f"  skipped row {row}: {reason}")
    return 0


#: The errors of its files (its other user errors run() words itself).
ERRORS = (OSError,)
