"""What the commands share: options built from the parameter declarations
(fastcredit._params), and a command's user errors."""
from __future__ import annotations

import argparse
import os
import sys

from .._constants import SYNTHETIC_MAX_INDEX
from .._params import Integer, Real

# Parameters of the command line that fastcredit._params does not declare
# (here those of more than one command; the others with their command).
# Upper bounds: those of fastcredit.synthetic.sponsored_search, whose stream
# holds 2**60 requests and whose rewrites retrieve at most 2**32 ads.
REQUESTS = Integer("requests", 1, SYNTHETIC_MAX_INDEX, "number of requests")

_READ = {Integer: (int, "an integer"), Real: (float, "a real number")}

#: The --help epilog of the commands that write files (fastcredit._output).
OUTPUTS = ("Outputs are written to a hidden temporary file beside them, named after the "
           "output and the process id (.out.parquet.fastcredit-12345.tmp), renamed into place "
           "when complete and removed on an error, SIGTERM, SIGINT or SIGHUP. A run killed by "
           "SIGKILL (or a crash) leaves its temporary, and the previous output as it was; the "
           "next run writing the same output removes the temporary once that process is "
           "gone, or delete it by hand.")


def _add_option(parser, flag: str, declared, default, text: str | None = None) -> None:
    """Add the option ``flag`` built from the declaration ``declared`` (see
    fastcredit._params): its values as choices, a type that reads the text and
    checks it with ``declared.check`` (a refusal is an argparse error, exit
    status 2), and help text (``text``, else the declaration's) with the
    default shown."""
    dest = flag.lstrip("-").replace("-", "_")
    read, kind = _READ.get(type(declared), (str, "a string"))

    def parse(value: str):
        try:
            value = read(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{dest} must be {kind}, got {value!r}") from None
        try:
            return declared.check(value, dest)
        except (TypeError, ValueError) as err:
            raise argparse.ArgumentTypeError(str(err)) from None

    text = text or declared.help
    if default is not None:
        text += f" (default: {default:,})" if type(default) is int else f" (default: {default})"
    parser.add_argument(flag, type=parse, default=default,
                        choices=getattr(declared, "values", None), help=text.replace("%", "%%"))


def _add_quiet(p) -> None:
    p.add_argument("--quiet", "-q", action="store_true",
                   help="no progress output (results and errors are still printed)")


class _UserError(Exception):
    """A user error of a command: its message is the one line printed."""


def _one_line(text: str) -> str:
    return " ".join(line.strip() for line in str(text).splitlines() if line.strip())


def _message(err: BaseException) -> str:
    """One line saying what went wrong, naming the file an OSError names."""
    if isinstance(err, OSError) and err.strerror and err.filename is not None:
        return f"{err.strerror}: {os.fspath(err.filename)!r}"
    return _one_line(str(err) or type(err).__name__)


def _user_errors(*types) -> tuple:
    """``types`` and pyarrow's own exceptions when pyarrow is loaded."""
    pyarrow = sys.modules.get("pyarrow")
    return types + ((pyarrow.ArrowException,) if pyarrow is not None else ())

