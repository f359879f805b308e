"""``python -m fastcredit`` and the ``fastcredit`` console script: the
command line (fastcredit.cli).

The console script points here, not at fastcredit.cli, because importing
the command line loads numpy, the kernels and pyarrow (most of a second):
an interrupt while they load (held until they have loaded: see
fastcredit._interrupts) is answered here, as every later one is by
fastcredit.cli.main, with one line and status 130. ``import fastcredit``
itself loads nothing (its names are imported on first use), so only the
interpreter's own start-up (a few tens of milliseconds) comes before this.
"""
import sys

from ._interrupts import interrupts_deferred


def main() -> int:
    try:
        with interrupts_deferred():
            from .cli import main as command_line
        return command_line()
    except KeyboardInterrupt:
        print("fastcredit: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
