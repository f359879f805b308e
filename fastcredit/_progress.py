"""Progress bars on stderr for the long stages of the command line and of
batch scoring: drawn only once a stage has run for more than a second."""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field


@dataclass
class Stage:
    """Wall time and work (items done of ``total``) of one stage; draws a
    progress bar with items/s on ``stream`` once the stage has run for more
    than a second (never when ``stream`` is None)."""
    name: str
    total: int
    stream: object = None
    seconds: float = 0.0
    done: int = 0
    _t0: float = field(default=0.0, repr=False)
    _drawn: float = field(default=0.0, repr=False)

    def __enter__(self):
        sys.stdout.flush()
        self._t0 = time.perf_counter()
        return self

    def advance(self, n: int) -> None:
        self.done += n
        now = time.perf_counter()
        if self.stream is not None and now - self._t0 > 1.0 and now - self._drawn > 0.2:
            self._drawn = now
            frac = self.done / max(self.total, 1)
            bar = "#" * int(30 * frac)
            rate = self.done / (now - self._t0)
            print(f"\r  {self.name:<24} [{bar:<30}] {100 * frac:5.1f} %  {rate:,.0f}/s ",
                  end="", file=self.stream, flush=True)

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self._t0
        if self._drawn:
            print(file=self.stream, flush=True)
        return False
