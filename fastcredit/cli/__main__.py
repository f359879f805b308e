"""``python -m fastcredit.cli``: the fastcredit command line."""
import sys

from .parser import main

sys.exit(main())
