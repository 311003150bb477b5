"""Progress bars on standard error, for the command line: Rich when stderr is a terminal, nothing otherwise.

A command opens :func:`reporting` once; inside it, :func:`stage` and
:func:`track` show what runs ("reading records", "sweeping", ...) with a
count or a bar. Library code calls :func:`stage` and :func:`track` freely:
without an open :func:`reporting` (a script, a test, a notebook) or when
stderr is not a terminal (a pipe, a log file, CI) they do nothing, and Rich
is not even imported. Bars are transient: on screen while their stage runs,
erased when it ends, so a terminal keeps only the command's output and messages.

Examples
--------
>>> import io
>>> with reporting(stream=io.StringIO()):  # not a terminal: silent
...     sum(track(range(4), "adding"))
6
>>> with stage("anything", total=3) as advance:  # no reporting open: a no-op
...     advance(3)
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol, TextIO, TypeVar

from rpa_sim.common.errors import escaped

__all__ = ["reporting", "listening", "StageEvent", "stage", "track"]

Item = TypeVar("Item")


@dataclass(frozen=True)
class StageEvent:
    """A change of a stage, as :func:`listening` passes it on: ``done`` of ``total`` (None when unknown)
    units; ``finished`` once the stage is over."""

    description: str
    done: int
    total: int | None
    finished: bool = False


class _Display(Protocol):
    """Where the stages of the running command go: Rich bars, or a listener."""

    def opened(self, description: str, total: int | None) -> Any: ...

    def advanced(self, task: Any, amount: int) -> None: ...

    def closed(self, task: Any) -> None: ...


# Where the stages of the running command go, if anywhere.
_ACTIVE: ContextVar[_Display | None] = ContextVar("rpa_sim_progress", default=None)


def _ignore(amount: int = 1) -> None:
    """The ``advance`` of a stage nobody sees."""


class _Bars:
    """Rich progress bars, on screen only while a stage runs: what a command prints between or after its
    stages (results on stdout, messages on stderr) is never drawn over or erased by them."""

    def __init__(self, bars: Any) -> None:
        self.bars = bars

    def opened(self, description: str, total: int | None) -> Any:
        # a description may hold a file's or a scenario's name: shown as plain text (no Rich markup), escaped as
        # messages are
        task = self.bars.add_task(escaped(description), total=total)
        if not self.bars.live.is_started:
            self.bars.start()
        self.bars.refresh()  # shown at once, not at the next tick: a short stage is seen too
        return task

    def advanced(self, task: Any, amount: int) -> None:
        self.bars.advance(task, amount)

    def closed(self, task: Any) -> None:
        self.bars.remove_task(task)
        if not self.bars.tasks:
            self.bars.stop()


class _Listener:
    """Stages as :class:`StageEvent` calls of a function."""

    def __init__(self, listener: Callable[[StageEvent], None]) -> None:
        self.listener = listener

    def opened(self, description: str, total: int | None) -> list[StageEvent]:
        # a one-item list: the stage's latest event, replaced as it advances
        event = StageEvent(description, 0, total)
        self.listener(event)
        return [event]

    def advanced(self, task: Any, amount: int) -> None:
        now = task[0]
        task[0] = StageEvent(now.description, now.done + amount, now.total)
        self.listener(task[0])

    def closed(self, task: Any) -> None:
        now = task[0]
        self.listener(StageEvent(now.description, now.done, now.total, finished=True))


@contextlib.contextmanager
def _showing(display: _Display) -> Iterator[None]:
    token = _ACTIVE.set(display)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


@contextlib.contextmanager
def reporting(*, stream: TextIO | None = None) -> Iterator[None]:
    """Show the stages opened inside as progress bars on ``stream`` (standard error) when it is a terminal.

    Parameters
    ----------
    stream : text stream, optional
        Where the bars go; ``sys.stderr`` by default. When it is not a
        terminal, nothing is shown and Rich is not imported.
    """
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    if isatty is None or not isatty():
        yield
        return
    from rich.console import Console  # noqa: PLC0415 (only for a terminal)
    from rich.progress import (  # noqa: PLC0415
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    bars = Progress(SpinnerColumn(), TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=Console(file=stream), transient=True,
                    redirect_stdout=False, redirect_stderr=False)
    try:
        with _showing(_Bars(bars)):
            yield
    finally:
        if bars.live.is_started:
            bars.stop()


def listening(listener: Callable[[StageEvent], None]) -> contextlib.AbstractContextManager[None]:
    """Pass the stages opened inside to ``listener`` (e.g. a dashboard's loading screen) instead of drawing bars.

    Examples
    --------
    >>> events = []
    >>> with listening(events.append):
    ...     sum(track(range(2), "adding"))
    1
    >>> [(e.description, e.done, e.finished) for e in events]
    [('adding', 0, False), ('adding', 1, False), ('adding', 2, False), ('adding', 2, True)]
    """
    return _showing(_Listener(listener))


@contextlib.contextmanager
def stage(description: str, *, total: int | None = None) -> Iterator[Callable[[int], None]]:
    """A step of the running command, shown while it lasts; yields ``advance(amount=1)``.

    Parameters
    ----------
    description : str
        What the step does, e.g. ``"sweeping"``.
    total : int, optional
        How many units the step has (a bar); unknown when omitted (a count).
    """
    display = _ACTIVE.get()
    if display is None:
        yield _ignore
        return
    task = display.opened(description, total)

    def advance(amount: int = 1) -> None:
        display.advanced(task, amount)

    try:
        yield advance
    finally:
        display.closed(task)


def track(items: Iterable[Item], description: str, *, total: int | None = None) -> Iterator[Item]:
    """``items``, one by one, counted in a :func:`stage` named ``description``."""
    if _ACTIVE.get() is None:
        yield from items
        return
    with stage(description, total=total) as advance:
        for item in items:
            yield item
            advance(1)
