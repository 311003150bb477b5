"""The stream of review tasks a queue simulation runs on, and drawing one from settings.

A task is something a reviewer handles in one go: a document opened for
review, or one reviewed prediction. It has an arrival time, a handling time,
a deadline (the end of its patience), a confidence (for lowest-confidence
first) and the id of its document. Times are seconds from the start of the
simulation, a Monday at 00:00.

Examples
--------
>>> tasks = Tasks.from_arrays(arrival=[30.0, 10.0], handle=[60.0, 90.0], deadline=[100.0, math.inf])
>>> tasks.arrival.tolist(), tasks.handle.tolist(), tasks.document.tolist()
([10.0, 30.0], [90.0, 60.0], [1, 0])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rpa_sim.operate.queue.settings import Arrivals, Distribution, Handling, QueueSettings

__all__ = ["Tasks", "arrival_times", "draw_seconds", "handle_seconds", "generate_tasks"]

_HOUR = 3600.0


def _column(name: str, values: Sequence[float] | np.ndarray | None, size: int, fill: float) -> np.ndarray:
    if values is None:
        return np.full(size, fill)
    column = np.array(values, dtype=np.float64)
    if column.shape != (size,):
        raise ValueError(f"{name} must be a list of {size} numbers (one per task), got shape {column.shape}")
    return column


def _first_bad(name: str, column: np.ndarray, bad: np.ndarray, wanted: str) -> None:
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name}[{index}] must be {wanted}, got {float(column[index])!r}")


@dataclass(frozen=True)
class Tasks:
    """Review tasks in order of arrival (ties keep the order given); read-only numpy columns.

    Attributes
    ----------
    arrival : numpy.ndarray
        Seconds from the start, >= 0, non-decreasing.
    handle : numpy.ndarray
        Seconds of review, >= 0.
    deadline : numpy.ndarray
        The moment the task's patience ends (seconds from the start, at or
        after its arrival); ``inf`` for none.
    confidence : numpy.ndarray
        In [0, 1]; NaN when unknown.
    document : numpy.ndarray
        An integer id per task (by default its position as given).
    """

    arrival: np.ndarray
    handle: np.ndarray
    deadline: np.ndarray
    confidence: np.ndarray
    document: np.ndarray

    @classmethod
    def from_arrays(cls, *, arrival: Sequence[float] | np.ndarray, handle: Sequence[float] | np.ndarray,
                    deadline: Sequence[float] | np.ndarray | None = None,
                    confidence: Sequence[float] | np.ndarray | None = None,
                    document: Sequence[int] | np.ndarray | None = None) -> Tasks:
        """Checked tasks, sorted by arrival.

        Raises
        ------
        ValueError
            Naming the first bad value: a negative or non-finite arrival or
            handling time, a deadline before its arrival, a confidence
            outside [0, 1], columns of different lengths.
        """
        arrival = np.array(arrival, dtype=np.float64)
        if arrival.ndim != 1:
            raise ValueError(f"arrival must be a list of numbers, got shape {arrival.shape}")
        size = arrival.size
        handle = _column("handle", handle, size, math.nan)
        deadline = _column("deadline", deadline, size, math.inf)
        confidence = _column("confidence", confidence, size, math.nan)
        document = np.arange(size) if document is None else np.array(document)
        if document.shape != (size,) or (size and not np.issubdtype(document.dtype, np.integer)):
            raise ValueError(f"document must be a list of {size} integers (one per task), got {document.dtype} "
                             f"of shape {document.shape}")
        _first_bad("arrival", arrival, ~(np.isfinite(arrival) & (arrival >= 0)), "a finite number of seconds >= 0")
        _first_bad("handle", handle, ~(np.isfinite(handle) & (handle >= 0)), "a finite number of seconds >= 0")
        _first_bad("deadline", deadline, np.isnan(deadline) | (deadline < arrival), "at or after its arrival")
        _first_bad("confidence", confidence, (confidence < 0) | (confidence > 1), "in [0, 1] (or NaN: unknown)")
        order = np.argsort(arrival, kind="stable")
        columns = [column[order] for column in (arrival, handle, deadline, confidence, document.astype(np.int64))]
        for column in columns:
            column.flags.writeable = False
        return cls(*columns)

    def __len__(self) -> int:
        return int(self.arrival.size)


def arrival_times(arrivals: Arrivals, *, hours: float, rng: np.random.Generator) -> np.ndarray:
    """Arrival times (seconds, sorted) over ``hours``: the given times, or a Poisson stream.

    A rate that changes on the hour makes each hour's count Poisson with that
    hour's mean, spread uniformly over the hour: exactly a Poisson process
    with that piecewise-constant rate. A constant rate is the same with every
    hour alike. The last hour is cut at ``hours``.
    """
    if arrivals.times_seconds is not None:
        return np.sort(np.array(arrivals.times_seconds, dtype=np.float64))
    whole = math.ceil(hours)
    starts = np.arange(whole, dtype=np.float64) * _HOUR
    lengths = np.minimum(_HOUR, hours * _HOUR - starts)
    rates = np.array([arrivals.rate_at_hour(hour) for hour in range(whole)], dtype=np.float64) / _HOUR
    counts = rng.poisson(rates * lengths)
    offsets = rng.random(int(counts.sum()))
    return np.sort(np.repeat(starts, counts) + offsets * np.repeat(lengths, counts))


def draw_seconds(distribution: Distribution, *, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` independent durations from ``distribution``.

    The lognormal's parameters come from its mean ``m`` and coefficient of
    variation ``v``: ``sigma**2 = log(1 + v**2)``, ``mu = log(m) - sigma**2 / 2``.

    >>> draw = draw_seconds(Distribution(kind="lognormal", mean_seconds=180, cv=0.5), size=200_000,
    ...                     rng=np.random.default_rng(0))
    >>> round(draw.mean()), round(float(draw.std() / draw.mean()), 2)
    (180, 0.5)
    """
    if distribution.kind == "deterministic":
        return np.full(size, distribution.mean)
    if distribution.kind == "exponential":
        return rng.exponential(distribution.mean, size)
    if distribution.kind == "lognormal":
        assert distribution.cv is not None, "a lognormal distribution has cv (validated)"
        sigma2 = math.log1p(distribution.cv ** 2)
        return rng.lognormal(math.log(distribution.mean) - sigma2 / 2.0, math.sqrt(sigma2), size)
    return rng.choice(np.array(distribution.samples, dtype=np.float64), size)


def handle_seconds(handling: Handling, *, size: int, rng: np.random.Generator,
                   items: Sequence[int] | np.ndarray | None = None) -> np.ndarray:
    """Handling times of ``size`` tasks: ``per_task`` once plus ``per_item`` for each of a task's ``items``
    (one each when not given).

    >>> handling = Handling(per_task={"kind": "deterministic", "mean_seconds": 20},
    ...                     per_item={"kind": "deterministic", "mean_seconds": 6})
    >>> handle_seconds(handling, size=3, items=[1, 0, 4], rng=np.random.default_rng(0)).tolist()
    [26.0, 20.0, 44.0]
    """
    total = np.zeros(size)
    if handling.per_task is not None:
        total += draw_seconds(handling.per_task, size=size, rng=rng)
    if handling.per_item is not None:
        counts = np.ones(size, dtype=np.int64) if items is None else np.asarray(items, dtype=np.int64)
        if counts.shape != (size,) or (counts < 0).any():
            raise ValueError(f"items must be {size} counts >= 0 (one per task), got {counts.tolist()[:10]}")
        draws = draw_seconds(handling.per_item, size=int(counts.sum()), rng=rng)
        total += np.bincount(np.repeat(np.arange(size), counts), weights=draws, minlength=size)
    return total


def generate_tasks(settings: QueueSettings, *, rng: np.random.Generator) -> Tasks:
    """A task stream drawn from ``settings``: arrivals, then handling times, patience limits and
    confidences, in that order (so a seed gives the same stream).

    Without records behind the tasks, confidences are uniform on [0, 1].
    """
    arrival = arrival_times(settings.arrivals, hours=settings.hours, rng=rng)
    size = arrival.size
    handle = handle_seconds(settings.handling, size=size, rng=rng)
    patience = settings.patience
    if patience is None:
        deadline = np.full(size, math.inf)
    elif patience.distribution == "fixed":
        deadline = arrival + patience.seconds
    else:
        deadline = arrival + rng.exponential(patience.seconds, size)
    return Tasks.from_arrays(arrival=arrival, handle=handle, deadline=deadline, confidence=rng.random(size))
