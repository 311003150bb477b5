"""Settings of a review operation, as validated models (pydantic v2).

They describe what the queue simulation (:mod:`rpa_sim.operate.queue.simulation`)
runs: how tasks arrive, how long they take, who reviews them when, in which
order, how long a task may wait, and what is measured. A scenario's
``operations:`` section can reuse them. Times of day are hours from midnight
(``8.5`` is 08:30); durations are seconds, horizons hours. Day 0 of a
simulation is a Monday and starts at midnight.

Examples
--------
>>> settings = QueueSettings(
...     arrivals={"hourly": [0] * 8 + [120] * 10 + [0] * 6},
...     handling={"per_task": {"kind": "lognormal", "mean_seconds": 180, "cv": 0.8}},
...     reviewers={"shifts": [{"start_hour": 8, "end_hour": 13, "reviewers": 8},
...                           {"start_hour": 13, "end_hour": 18, "reviewers": 6}], "shrinkage": 0.2},
...     patience={"seconds": 7200, "on_expiry": "release"},
...     answer_within_seconds=3600, hours=24 * 7)
>>> settings.reviewers.on_floor()
[(8.0, 13.0, 6), (13.0, 18.0, 4)]
"""

from __future__ import annotations

import itertools
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, field_validator, model_validator

from rpa_sim.common import limits
from rpa_sim.common.validation import StrictModel
from rpa_sim.operate.queue.staffing import reviewers_on_floor

__all__ = ["Distribution", "Handling", "Shift", "Reviewers", "Arrivals", "Patience", "QueueSettings",
           "DISCIPLINES"]

DISCIPLINES = ("fcfs", "edf", "lowest_confidence")
"""First come first served; earliest deadline first; lowest confidence first."""

_Seconds = Annotated[float, Field(gt=0.0, allow_inf_nan=False)]
_Rate = Annotated[float, Field(ge=0.0, allow_inf_nan=False)]
_Hour = Annotated[float, Field(ge=0.0, le=24.0, allow_inf_nan=False)]
_HOURS_IN_DAY = 24
_Team = Annotated[int, BeforeValidator(limits.size_check(
    "reviewers", most=limits.MOST_REVIEWERS, limited_by="the Erlang recursion runs once per reviewer")), Field(ge=1)]


def _clock(hour: float) -> str:
    """
    >>> _clock(8.5), _clock(24)
    ('08:30', '24:00')
    """
    minutes = round(hour * 60)
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


class Distribution(StrictModel):
    """A duration's distribution, in seconds.

    ``deterministic`` (always ``mean_seconds``), ``exponential`` (mean
    ``mean_seconds``), ``lognormal`` (mean ``mean_seconds``, coefficient of
    variation ``cv`` = standard deviation / mean) or ``empirical`` (drawn
    with replacement from ``samples``).
    """

    kind: Literal["deterministic", "exponential", "lognormal", "empirical"]
    mean_seconds: _Seconds | None = None
    cv: Annotated[float, Field(gt=0.0, allow_inf_nan=False)] | None = None
    samples: list[_Seconds] | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _fields_of_kind(self) -> Distribution:
        if self.kind == "empirical":
            if self.samples is None:
                raise ValueError("an empirical distribution needs samples (seconds)")
            if self.mean_seconds is not None or self.cv is not None:
                raise ValueError("an empirical distribution takes samples only, not mean_seconds or cv")
            return self
        if self.mean_seconds is None:
            raise ValueError(f"a {self.kind} distribution needs mean_seconds")
        if self.samples is not None:
            raise ValueError(f"samples go with kind empirical, not {self.kind}")
        if (self.cv is None) != (self.kind != "lognormal"):
            raise ValueError("a lognormal distribution needs cv (standard deviation / mean)" if self.cv is None
                             else f"cv {self.cv!r} applies to kind lognormal only, not {self.kind}")
        return self

    @property
    def mean(self) -> float:
        """The mean, in seconds.

        >>> Distribution(kind="empirical", samples=[60, 120]).mean
        90.0
        """
        if self.samples is not None:
            return sum(self.samples) / len(self.samples)
        assert self.mean_seconds is not None, "every kind but empirical has mean_seconds (validated)"
        return self.mean_seconds


class Handling(StrictModel):
    """How long a task takes: ``per_task`` once, plus ``per_item`` for each item it holds.

    A document opened for review costs ``per_task`` (opening it) plus
    ``per_item`` for each reviewed prediction in it; a task of the queue
    alone is ``per_task``.
    """

    per_task: Distribution | None = None
    per_item: Distribution | None = None

    @model_validator(mode="after")
    def _something(self) -> Handling:
        if self.per_task is None and self.per_item is None:
            raise ValueError("handling needs per_task, per_item or both")
        return self


class Shift(StrictModel):
    """``reviewers`` scheduled every day from ``start_hour`` to ``end_hour`` (hours from midnight)."""

    start_hour: _Hour
    end_hour: _Hour
    reviewers: _Team

    @model_validator(mode="after")
    def _ordered(self) -> Shift:
        if self.end_hour <= self.start_hour:
            raise ValueError(f"a shift ends after it starts, got start_hour {self.start_hour:g} and end_hour "
                             f"{self.end_hour:g} (split a night shift at midnight: one to 24, one from 0)")
        return self

    @property
    def hours(self) -> str:
        """``08:00-16:00``."""
        return f"{_clock(self.start_hour)}-{_clock(self.end_hour)}"


class Reviewers(StrictModel):
    """Who reviews: a ``count`` on the floor all day, or ``shifts``; ``shrinkage`` of them away.

    ``shifts`` cover each stretch of the day at most once (two teams at the
    same hours are one shift with their sum); hours without a shift have no
    reviewer, which is allowed: tasks arriving then wait for the next shift,
    and the simulation warns that some did. ``shrinkage`` is the share of scheduled reviewers
    not reviewing (breaks, absence); the reviewers on the floor are the
    scheduled ones times ``1 - shrinkage``, rounded down, and must be at
    least one in every shift.
    """

    count: _Team | None = None
    shifts: list[Shift] | None = Field(default=None, min_length=1)
    shrinkage: Annotated[float, Field(ge=0.0, lt=1.0)] = 0.0

    @model_validator(mode="after")
    def _one_plan(self) -> Reviewers:
        if (self.count is None) == (self.shifts is None):
            raise ValueError("reviewers needs exactly one of count or shifts")
        shifts = sorted(self.shifts or [], key=lambda shift: shift.start_hour)
        for before, after in itertools.pairwise(shifts):
            if after.start_hour < before.end_hour:
                raise ValueError(f"shifts {before.hours} and {after.hours} overlap: give each stretch of the day "
                                 f"once, with everyone on it (two teams at once are one shift with their sum)")
        for shift in shifts or [Shift(start_hour=0, end_hour=24, reviewers=self.count)]:
            if reviewers_on_floor(shift.reviewers, shrinkage=self.shrinkage) < 1:
                raise ValueError(f"{shift.reviewers} scheduled reviewer{'s' if shift.reviewers > 1 else ''} "
                                 f"{'from ' + shift.hours + ' ' if self.shifts else ''}with shrinkage "
                                 f"{self.shrinkage:g} leave nobody on the floor")
        return self

    def on_floor(self) -> list[tuple[float, float, int]]:
        """``(start_hour, end_hour, reviewers on the floor)`` of each shift, in the order of the day."""
        shifts = self.shifts or [Shift(start_hour=0, end_hour=24, reviewers=self.count)]
        return [(shift.start_hour, shift.end_hour, reviewers_on_floor(shift.reviewers, shrinkage=self.shrinkage))
                for shift in sorted(shifts, key=lambda shift: shift.start_hour)]


def _profile(values: list[float], where: str) -> list[float]:
    if len(values) != _HOURS_IN_DAY:
        raise ValueError(f"{where} needs 24 values (arrivals in each hour from 00:00), got {len(values)}: {values}")
    return values


class Arrivals(StrictModel):
    """How tasks arrive: exactly one of

    - ``per_hour``: a constant rate (a Poisson stream);
    - ``hourly``: 24 rates, arrivals per hour in each hour of the day from
      00:00 (a Poisson stream whose rate changes on the hour);
    - ``weekly``: 7 such profiles, Monday first;
    - ``times_seconds``: the arrival times themselves, seconds from the start.
    """

    per_hour: _Rate | None = None
    hourly: list[_Rate] | None = None
    weekly: list[list[_Rate]] | None = None
    times_seconds: list[Annotated[float, Field(ge=0.0, allow_inf_nan=False)]] | None = None

    @field_validator("hourly")
    @classmethod
    def _day(cls, values: list[float] | None) -> list[float] | None:
        return None if values is None else _profile(values, "an hourly profile")

    @field_validator("weekly")
    @classmethod
    def _week(cls, days: list[list[float]] | None) -> list[list[float]] | None:
        if days is None:
            return None
        if len(days) != 7:
            raise ValueError(f"a weekly profile needs 7 hourly profiles (Monday first), got {len(days)}")
        return [_profile(day, f"day {index} of the weekly profile") for index, day in enumerate(days)]

    @model_validator(mode="after")
    def _one_kind(self) -> Arrivals:
        given = [name for name in ("per_hour", "hourly", "weekly", "times_seconds") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError("arrivals needs exactly one of per_hour, hourly, weekly or times_seconds, got "
                             + (" and ".join(given) if given else "none"))
        return self

    def rate_at_hour(self, hour: int) -> float:
        """Arrivals per hour during hour ``hour`` of the simulation (0 is Monday 00:00-01:00); not for
        ``times_seconds``.

        >>> Arrivals(hourly=[float(h) for h in range(24)]).rate_at_hour(24 + 5)
        5.0
        """
        if self.per_hour is not None:
            return self.per_hour
        if self.hourly is not None:
            return self.hourly[hour % _HOURS_IN_DAY]
        if self.weekly is not None:
            return self.weekly[(hour // _HOURS_IN_DAY) % 7][hour % _HOURS_IN_DAY]
        raise ValueError("arrivals given as times_seconds have no rate")


class Patience(StrictModel):
    """How long a task may wait before its review starts, and what happens then.

    Each task's limit is ``seconds`` (``fixed``) or drawn with mean
    ``seconds`` (``exponential``, Erlang A's patience). A task still waiting
    at its limit either stays in the queue and is reviewed late, counted as a
    breach (``on_expiry: breach``), or leaves the queue unreviewed and is
    auto-accepted as it is, counted as released (``release``).
    """

    seconds: _Seconds
    distribution: Literal["fixed", "exponential"] = "fixed"
    on_expiry: Literal["breach", "release"] = "breach"


class QueueSettings(StrictModel):
    """One simulated review operation.

    ``answer_within_seconds`` is the service level's target wait (arrival to
    the start of review, as Erlang's); ``complete_within_seconds``, when
    given, a turnaround target (arrival to the end of review). Figures cover
    the tasks arriving from ``warmup_hours`` to ``hours``; the reviewers then
    finish the queue, so every task's wait is known.
    """

    arrivals: Arrivals
    handling: Handling
    reviewers: Reviewers
    discipline: Literal["fcfs", "edf", "lowest_confidence"] = "fcfs"
    patience: Patience | None = None
    answer_within_seconds: Annotated[float, Field(ge=0.0, allow_inf_nan=False)]
    complete_within_seconds: _Seconds | None = None
    hours: Annotated[float, Field(gt=0.0, allow_inf_nan=False)]
    warmup_hours: Annotated[float, Field(ge=0.0, allow_inf_nan=False)] = 0.0

    @model_validator(mode="after")
    def _consistent(self) -> QueueSettings:
        if self.warmup_hours >= self.hours:
            raise ValueError(f"warmup_hours {self.warmup_hours:g} leaves nothing of hours {self.hours:g} to measure")
        if self.discipline == "edf" and self.patience is None:
            raise ValueError("discipline edf orders tasks by deadline: it needs patience (the deadlines)")
        late = [t for t in self.arrivals.times_seconds or [] if t >= self.hours * 3600.0]
        if late:
            raise ValueError(f"arrival time {late[0]!r} s is at or after the end of the {self.hours:g} hours "
                             f"simulated ({self.hours * 3600.0:g} s)")
        return self
