"""What the dashboard's loader reports, stage by stage: :class:`Progress`, passed to a :data:`Reporter`.

Loading has stages (:func:`~rpa_sim.tui.loading.open_source`, :meth:`~rpa_sim.tui.loading.Opened.model`,
:meth:`~rpa_sim.tui.loading.Opened.summary`); each reports to a callback, so that the screen shows how far
it is. No Textual here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

__all__ = ["Progress", "Reporter", "ignore_progress", "stage"]


@dataclass(frozen=True)
class Progress:
    """What the loader is doing: a ``stage`` and how far it is (``done`` of ``total`` ``unit``, total None
    when unknown); ``finished`` once the stage is over.

    >>> Progress("reading receipts.jsonl", 1200, 5000, "records").text
    'reading receipts.jsonl: 1,200 of 5,000 records'
    >>> Progress("sweeping", 2, 3, "policies", finished=True).text
    'sweeping: 3 policies'
    """

    stage: str
    done: int = 0
    total: int | None = None
    unit: str = ""
    finished: bool = False

    @property
    def text(self) -> str:
        if not self.unit:
            return self.stage
        if self.finished:
            return f"{self.stage}: {max(self.done, self.total or 0):,} {self.unit}"
        of = "" if self.total is None else f" of {self.total:,}"
        return f"{self.stage}: {self.done:,}{of} {self.unit}"


#: receives the loader's progress, from the thread that loads
Reporter = Callable[[Progress], None]


def ignore_progress(progress: Progress) -> None:
    """The reporter of a load nobody watches."""


@contextlib.contextmanager
def stage(report: Reporter, name: str, *, total: int | None = None, unit: str = "") -> Iterator[Callable[[], None]]:
    """Report stage ``name`` started, yield ``advance()``, report it finished."""
    done = 0
    report(Progress(name, 0, total, unit))

    def advance() -> None:
        nonlocal done
        done += 1
        report(Progress(name, done, total, unit))

    yield advance
    report(Progress(name, done, total, unit, finished=True))
