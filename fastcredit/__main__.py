"""``python -m fastcredit`` and the ``fastcredit`` console script: the
command line (fastcredit.cli).

The console script points here, not at fastcredit.cli, because importing
the command line loads numpy, the kernels and pyarrow (most of a second):
an interrupt while they load is answered here, as every later one is by
fastcredit.cli.main, with one line and status 130. ``import fastcredit``
itself loads nothing (its names are imported on first use), so only the
interpreter's own start-up (a few tens of milliseconds) comes before this.
"""
import sys


def main() -> int:
    try:
        from .cli import main as command_line
        return command_line()
    except KeyboardInterrupt:
        print("fastcredit: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
