"""How many reviewers a queue of review tasks needs: the smallest team meeting the targets.

The figures of :mod:`rpa_sim.operate.queue.erlang` improve as reviewers are
added (service level up; mean wait and abandonment down), so the smallest
team meeting every target is found by counting up from a team that cannot
be enough, carrying the Erlang B recursion from one count to the next.

Examples
--------
The worked example: 200 tasks an hour of 180 s (10 erlangs), 80% answered
within 20 s:

>>> plan = required_reviewers(arrivals_per_hour=200, handle_seconds=180, answer_within_seconds=20,
...                           service_level=0.8)
>>> plan.reviewers, round(plan.figures.service_level, 4)
(14, 0.8884)
>>> scheduled_reviewers(14, shrinkage=0.3)
20
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from rpa_sim.operate.queue.checks import positive, queue_inputs
from rpa_sim.operate.queue.erlang import QueueFigures, figures_at, log_inverse_erlang_b

__all__ = ["StaffingPlan", "required_reviewers", "reviewers_on_floor", "scheduled_reviewers"]

# floor(12 * (1 - 0.25)) must be 9 although 0.75 * 12 may come out as 8.999999999999998
_ROUNDING_SLACK = 1e-9


@dataclass(frozen=True)
class StaffingPlan:
    """The smallest team meeting the targets, and its figures.

    Attributes
    ----------
    reviewers : int
        Reviewers needed on the floor.
    figures : QueueFigures
        The queue with that many reviewers.
    service_level, max_mean_wait_seconds, max_abandon_rate : float or None
        The targets it was sized for (None: not a target).
    """

    reviewers: int
    figures: QueueFigures
    service_level: float | None
    max_mean_wait_seconds: float | None
    max_abandon_rate: float | None

    def meets(self, figures: QueueFigures) -> bool:
        """Whether ``figures`` meet every target."""
        return _meets(figures, self.service_level, self.max_mean_wait_seconds, self.max_abandon_rate)


def _meets(figures: QueueFigures, service_level: float | None, max_mean_wait: float | None,
           max_abandon: float | None) -> bool:
    if not figures.stable:
        return False
    wait = figures.mean_wait_seconds  # known for a stable queue
    return ((service_level is None or figures.service_level >= service_level)
            and (max_mean_wait is None or (wait is not None and wait <= max_mean_wait))
            and (max_abandon is None or figures.p_abandon <= max_abandon))


def _share(name: str, value: float | None, *, closed_high: bool) -> float | None:
    if value is None:
        return None
    high_ok = value <= 1 if closed_high else value < 1
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (value > 0 and high_ok):
        raise ValueError(f"{name} must be a number in (0, {'1]' if closed_high else '1)'}, got {value!r}")
    return float(value)


def required_reviewers(*, arrivals_per_hour: float, handle_seconds: float, answer_within_seconds: float,
                       service_level: float | None = None, max_mean_wait_seconds: float | None = None,
                       max_abandon_rate: float | None = None,
                       patience_seconds: float | None = None) -> StaffingPlan:
    """The fewest reviewers whose queue (Erlang C, or Erlang A with ``patience_seconds``) meets every target.

    Parameters
    ----------
    arrivals_per_hour, handle_seconds, answer_within_seconds, patience_seconds
        The queue, as for :func:`~rpa_sim.operate.queue.erlang.queue_figures`.
    service_level : float, optional
        Least share of all tasks answered within ``answer_within_seconds``,
        in (0, 1).
    max_mean_wait_seconds : float, optional
        Largest mean wait of the reviewed tasks, > 0.
    max_abandon_rate : float, optional
        Largest share of tasks leaving unreviewed, in (0, 1]; needs
        ``patience_seconds`` (without it nobody abandons).

    Returns
    -------
    StaffingPlan

    Raises
    ------
    ValueError
        Without any target, or for an input out of range (quoted).

    Notes
    -----
    The count starts where no smaller team can do: above the load for
    Erlang C (below it the queue has no steady state); for Erlang A at
    ``load * service_level`` and ``load * (1 - max_abandon_rate)``, since
    ``c`` reviewers serve at most ``c / load`` of the tasks.
    """
    rate, handle, within = queue_inputs(arrivals_per_hour, handle_seconds, answer_within_seconds)
    patience = None if patience_seconds is None else positive("patience_seconds", patience_seconds)
    service_level = _share("service_level", service_level, closed_high=False)
    max_abandon_rate = _share("max_abandon_rate", max_abandon_rate, closed_high=True)
    if max_mean_wait_seconds is not None:
        max_mean_wait_seconds = positive("max_mean_wait_seconds", max_mean_wait_seconds)
    if service_level is None and max_mean_wait_seconds is None and max_abandon_rate is None:
        raise ValueError("staffing needs a target: service_level, max_mean_wait_seconds or max_abandon_rate")
    if max_abandon_rate is not None and patience is None:
        raise ValueError(f"max_abandon_rate {max_abandon_rate!r} needs patience_seconds: without patience no task "
                         f"abandons")
    load = rate * handle
    if patience is None:
        reviewers = math.floor(load) + 1
    else:
        bound = max(service_level or 0.0, 1.0 - (max_abandon_rate if max_abandon_rate is not None else 1.0))
        reviewers = max(1, math.floor(load * bound))
    log_inverse_b = log_inverse_erlang_b(load, reviewers)
    while True:
        figures = figures_at(rate=rate, handle=handle, reviewers=reviewers, within=within, patience=patience,
                             log_inverse_b=log_inverse_b, arrivals_per_hour=arrivals_per_hour)
        if _meets(figures, service_level, max_mean_wait_seconds, max_abandon_rate):
            return StaffingPlan(reviewers=reviewers, figures=figures, service_level=service_level,
                                max_mean_wait_seconds=max_mean_wait_seconds, max_abandon_rate=max_abandon_rate)
        log_inverse_b = log_inverse_erlang_b(load, reviewers + 1, start=(reviewers, log_inverse_b))
        reviewers += 1


def _shrinkage(value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value < 1.0:
        raise ValueError(f"shrinkage must be a share in [0, 1), got {value!r}")
    return float(value)


def reviewers_on_floor(scheduled: int, *, shrinkage: float) -> int:
    """Reviewers actually reviewing when ``scheduled`` are on the plan and a share ``shrinkage`` is away
    (breaks, absence, training): rounded down, so a plan never counts on part of a person.

    >>> reviewers_on_floor(10, shrinkage=0.3), reviewers_on_floor(12, shrinkage=0.25)
    (7, 9)
    """
    return math.floor(scheduled * (1.0 - _shrinkage(shrinkage)) + _ROUNDING_SLACK)


def scheduled_reviewers(on_floor: int, *, shrinkage: float) -> int:
    """The fewest reviewers to schedule so that ``on_floor`` are reviewing after ``shrinkage``.

    >>> scheduled_reviewers(7, shrinkage=0.3), scheduled_reviewers(9, shrinkage=0.25)
    (10, 12)
    """
    scheduled = math.floor(on_floor / (1.0 - _shrinkage(shrinkage)))
    while reviewers_on_floor(scheduled, shrinkage=shrinkage) < on_floor:
        scheduled += 1
    return scheduled
