"""The fastcredit command line: the parser of every command, and main."""
from __future__ import annotations

import argparse
import os
import sys

from .._output import OutputError, WriteError
from . import demo, learn, learn_trees, score, synth, warm
from .common import _message, _one_line, _user_errors, _UserError

#: command -> its module (add_parser, run, ERRORS: what its arguments can be
#: refused with besides UserError, the library naming the argument; anything
#: else is a bug and keeps its traceback)
COMMANDS = {"demo": demo, "score": score, "synth": synth, "learn": learn,
            "learn-trees": learn_trees, "warm": warm}


#: What the ImportError of a missing optional extra says (``pip install
#: 'fastcredit[parquet]'``): a command stopped by one prints it in one line.
_EXTRA = "pip install 'fastcredit["


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr, exit status 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {_one_line(message)} (see {self.prog} --help)\n")


def _stdout_gone() -> None:
    """stdout is a closed pipe (``fastcredit demo | head``): send what is
    left to /dev/null so that exiting does not fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _parser() -> argparse.ArgumentParser:
    from .. import __version__
    from . import __doc__ as text
    intro, commands, demo_text = text.split("\n\n", 2)
    parser = _Parser(prog="fastcredit", description=f"{intro} {commands}")
    parser.add_argument("--version", action="version", version=f"fastcredit {__version__}",
                        help="print fastcredit's version and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="command",
                                help="what to do (fastcredit COMMAND --help tells more)")
    demo.add_parser(sub, demo_text)
    for command in (score, synth, warm, learn, learn_trees):
        command.add_parser(sub)
    return parser


def main(argv=None) -> int:
    """Run the command line; returns the exit status: 0, 2 for a user error
    (one line on stderr: ``fastcredit COMMAND: message``), 130 when
    interrupted, 141 when stdout is a closed pipe."""
    try:
        args = _parser().parse_args(argv)
    except KeyboardInterrupt:   # before a command is known
        print("fastcredit: interrupted", file=sys.stderr)
        return 130
    command = COMMANDS[args.command]
    try:
        status = command.run(args)
        sys.stdout.flush()   # a closed pipe shows here, not at exit
        return status
    except BrokenPipeError:
        _stdout_gone()
        return 141
    except KeyboardInterrupt:
        print(f"fastcredit {args.command}: interrupted", file=sys.stderr)
        return 130
    except (_UserError, OutputError, WriteError) as err:
        print(f"fastcredit {args.command}: {_one_line(err)}", file=sys.stderr)
        return 2
    except _user_errors(*command.ERRORS) as err:
        print(f"fastcredit {args.command}: {_message(err)}", file=sys.stderr)
        return 2
    except ImportError as err:   # an optional extra the command needs is not installed
        if _EXTRA not in str(err):
            raise
        print(f"fastcredit {args.command}: {_one_line(err)}", file=sys.stderr)
        return 2

