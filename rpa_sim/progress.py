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
from typing import Any, TextIO, TypeVar

__all__ = ["reporting", "stage", "track"]

Item = TypeVar("Item")

# The open Rich Progress of the running command, if any.
_ACTIVE: ContextVar[Any] = ContextVar("rpa_sim_progress", default=None)


def _ignore(amount: int = 1) -> None:
    """The ``advance`` of a stage nobody sees."""


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

    bars = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=Console(file=stream), transient=True,
                    redirect_stdout=False, redirect_stderr=False)
    token = _ACTIVE.set(bars)
    try:
        yield
    finally:
        _ACTIVE.reset(token)
        if bars.live.is_started:
            bars.stop()


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
    bars = _ACTIVE.get()
    if bars is None:
        yield _ignore
        return
    # The bars are on screen only while a stage runs: what a command prints between or after its
    # stages (results on stdout, messages on stderr) is never drawn over or erased by them.
    outermost = not bars.live.is_started
    task = bars.add_task(description, total=total)
    if outermost:
        bars.start()
    bars.refresh()  # shown at once, not at the next tick: a short stage is seen too

    def advance(amount: int = 1) -> None:
        bars.advance(task, amount)

    try:
        yield advance
    finally:
        bars.remove_task(task)
        if outermost:
            bars.stop()


def track(items: Iterable[Item], description: str, *, total: int | None = None) -> Iterator[Item]:
    """``items``, one by one, counted in a :func:`stage` named ``description``."""
    if _ACTIVE.get() is None:
        yield from items
        return
    with stage(description, total=total) as advance:
        for item in items:
            yield item
            advance(1)
