"""Progress of the long stages of the command line and of batch scoring.

``with Stage(name, total, stream) as stage: ... stage.advance(n)`` times a
stage and reports its progress on ``stream`` (nothing when it is None):

* on a terminal, a tqdm bar with the rate and the time remaining, drawn
  once the stage has run for a second;
* anywhere else (a log file, a pipe), one plain line every ``interval``
  seconds (5) once the stage has run for a second, and a last line with the
  total time, so a log gets a few readable lines rather than a bar redrawn
  with carriage returns.
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

from tqdm import tqdm

DELAY = 1.0      # seconds a stage runs before any progress is shown
INTERVAL = 5.0   # seconds between two lines when the stream is not a terminal


def _is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):   # no isatty, or a closed file
        return False


def _rate(done: int, seconds: float, unit: str) -> str:
    return f"{done / seconds:,.0f}{' ' + unit if unit else ''}/s" if seconds > 0 else "-"


@dataclass
class Stage:
    """Wall time (``seconds``, set on exit) and work (``done`` items of
    ``total``) of one stage; progress on ``stream`` as the module says
    (never when ``stream`` is None). ``unit`` names the items in the rate."""
    name: str
    total: int
    stream: object = None
    unit: str = ""
    interval: float = INTERVAL
    seconds: float = 0.0
    done: int = 0
    _t0: float = field(default=0.0, repr=False)
    _drawn: float = field(default=0.0, repr=False)   # when the last plain line was written
    _bar: object = field(default=None, repr=False)

    def __enter__(self):
        sys.stdout.flush()   # what a command printed comes before the progress
        self._t0 = time.perf_counter()
        if self.stream is not None and _is_terminal(self.stream):
            self._bar = tqdm(total=self.total, desc=self.name, file=self.stream, delay=DELAY,
                             mininterval=0.2, unit=f" {self.unit}" if self.unit else "it",
                             # "12.3k requests/s"; items of no unit unscaled ("kit/s" is
                             # no unit a reader knows)
                             unit_scale=bool(self.unit), dynamic_ncols=True, leave=True)
        return self

    def _line(self, elapsed: float, last: bool = False) -> str:
        share = f"{100 * self.done / self.total:.1f} %" if self.total else "-"
        text = (f"  {self.name}: {self.done:,} of {self.total:,} ({share}), "
                f"{_rate(self.done, elapsed, self.unit)}")
        if last:
            return f"{text}, done in {tqdm.format_interval(elapsed)}"
        left = ((self.total - self.done) * elapsed / self.done if 0 < self.done <= self.total
                else None)
        eta = tqdm.format_interval(left) if left is not None else "?"
        return f"{text}, {tqdm.format_interval(elapsed)} elapsed, about {eta} left"

    def advance(self, n: int) -> None:
        self.done += n
        if self._bar is not None:
            self._bar.update(n)
        elif self.stream is not None:
            elapsed = time.perf_counter() - self._t0
            due = self._drawn + self.interval if self._drawn else DELAY
            if elapsed > due and self.done < self.total:   # the last line says "done"
                self._drawn = elapsed
                print(self._line(elapsed), file=self.stream, flush=True)

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self._t0
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        elif self._drawn and exc[0] is None:
            print(self._line(self.seconds, last=True), file=self.stream, flush=True)
        return False
