"""``python -m fastcredit``: the fastcredit command line (fastcredit.cli)."""
import sys

from .cli import main

sys.exit(main())
