"""A scenario's ``operations:`` section: the review operation that a policy's routed work feeds.

It reuses the queue settings (:mod:`rpa_sim.operate.queue.settings`): reviewers
(a count or shifts, with shrinkage), patience, the queue discipline and the
handling-time distributions. What it adds is what ties the queue to the
study: documents (VQA: questions) arrive, a policy at τ opens some of them
for review, and each opened one takes a time per document plus a time per
reviewed item; the service level is a share of all documents completed
within a time. ``docs/operations.md`` says how :mod:`rpa_sim.operate.queue.summary`
computes the figures.

Examples
--------
>>> spec = OperationsSpec.model_validate({
...     "arrivals": {"hourly": [0] * 8 + [60] * 10 + [0] * 6},
...     "reviewers": {"shifts": [{"start_hour": 8, "end_hour": 13, "reviewers": 3},
...                              {"start_hour": 13, "end_hour": 18, "reviewers": 2}]},
...     "service_level": {"share": 0.9, "within_hours": 4}})
>>> spec.days, spec.arrivals.profile().documents_per_day
(5, 600.0)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, model_validator

from rpa_sim.common import limits
from rpa_sim.common.validation import StrictModel
from rpa_sim.operate.queue.settings import Arrivals, Distribution, Patience, Reviewers

__all__ = ["OperationsSpec", "OperationsArrivals", "OperationsHandling", "ServiceLevel", "ArrivalProfile",
           "GRID_POINTS"]

GRID_POINTS = 21
"""Thresholds of the operations grid: 0, 0.05, ..., 1."""

_HOURS_IN_DAY = 24


@dataclass(frozen=True)
class ArrivalProfile:
    """Documents arriving per hour in each hour of a day (24 values) or of a week (168, Monday first)."""

    per_hour: tuple[float, ...]

    @property
    def days(self) -> int:
        """1 for a day's profile, 7 for a week's."""
        return len(self.per_hour) // _HOURS_IN_DAY

    @property
    def documents_per_day(self) -> float:
        """The mean number of documents a day."""
        return sum(self.per_hour) / self.days


class OperationsArrivals(Arrivals):
    """How documents (VQA: questions) arrive: exactly one of ``per_hour``, ``hourly``, ``weekly``
    (as :class:`~rpa_sim.operate.queue.settings.Arrivals`) or ``from_records: true``, the records'
    ``received_at`` times, placed on the clock of ``utc_offset_hours`` (default UTC)."""

    from_records: Literal[True] | None = None
    utc_offset_hours: Annotated[float, Field(ge=-14.0, le=14.0, allow_inf_nan=False)] = 0.0

    @model_validator(mode="after")
    def _one_kind(self) -> OperationsArrivals:
        if self.times_seconds is not None:
            raise ValueError("operations arrivals take per_hour, hourly, weekly or from_records (the records' "
                             "received_at), not times_seconds")
        given = [name for name in ("per_hour", "hourly", "weekly", "from_records") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError("arrivals needs exactly one of per_hour, hourly, weekly or from_records, got "
                             + (" and ".join(given) if given else "none"))
        if self.utc_offset_hours != 0.0 and self.from_records is None:
            raise ValueError(f"utc_offset_hours {self.utc_offset_hours:g} goes with from_records")
        return self

    def profile(self) -> ArrivalProfile:
        """The rates per hour of a day (a week for ``weekly``); not for ``from_records``."""
        hours = 7 * _HOURS_IN_DAY if self.weekly is not None else _HOURS_IN_DAY
        return ArrivalProfile(tuple(float(self.rate_at_hour(hour)) for hour in range(hours)))


class OperationsHandling(StrictModel):
    """How long an opened document takes: ``per_document`` (opening it) plus ``per_item`` for each
    reviewed prediction in it (VQA: a question is both the document and its one item).

    Either defaults to a deterministic time from the scenario's reviewer
    (``seconds_per_document``, ``seconds_per_item``). ``from_records: true``
    instead draws each opened document's whole review time from the records'
    ``review_seconds`` (with replacement), whatever the threshold routes in it.
    """

    per_document: Distribution | None = None
    per_item: Distribution | None = None
    from_records: Literal[True] | None = None

    @model_validator(mode="after")
    def _one_source(self) -> OperationsHandling:
        if self.from_records and (self.per_document is not None or self.per_item is not None):
            raise ValueError("handling from_records draws whole review times from the records' review_seconds: "
                             "it takes no per_document or per_item")
        return self


class ServiceLevel(StrictModel):
    """A share of ALL documents completed within a time, from arrival to the end of review; a document
    the policy does not open completes at once."""

    share: Annotated[float, Field(gt=0.0, lt=1.0)]
    within_hours: Annotated[float, Field(gt=0.0, allow_inf_nan=False)]


class OperationsSpec(StrictModel):
    """A scenario's ``operations:`` section.

    ``days`` are simulated with ``seed`` at each operating point and grid
    threshold; ``hourly_cost`` prices a rostered reviewer-hour (default:
    ``costs.hourly_rate``).
    """

    arrivals: OperationsArrivals
    handling: OperationsHandling = OperationsHandling()
    reviewers: Reviewers
    discipline: Literal["fcfs", "edf", "lowest_confidence"] = "fcfs"
    patience: Patience | None = None
    service_level: ServiceLevel
    days: Annotated[int, BeforeValidator(limits.size_check("days", most=limits.MOST_OPERATIONS_DAYS,
                                                           limited_by="a year")), Field(ge=1)] = 5
    seed: Annotated[int, Field(ge=0)] = 0
    hourly_cost: Annotated[float, Field(ge=0.0, allow_inf_nan=False)] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> OperationsSpec:
        if self.discipline == "edf" and self.patience is None:
            raise ValueError("discipline edf orders documents by deadline: it needs patience (the deadlines)")
        if self.arrivals.from_records is None:
            self._check_tasks()
        return self

    def _check_tasks(self) -> None:
        """Refuse more documents than one simulation takes: every one may be opened for review, and is a task."""
        per_day = self.arrivals.profile().documents_per_day
        tasks = per_day * self.days
        what = (f"{limits.count_text(per_day)} documents a day x {self.days} days = {limits.count_text(tasks)} "
                f"tasks simulated")
        if tasks > limits.MOST_SIMULATED_TASKS:
            raise limits.SizeError(f"{what}, more than the {limits.MOST_SIMULATED_TASKS:,} allowed (a fixed "
                                   f"ceiling for time)", field=("arrivals",))
        limits.require_memory(tasks * limits.SIMULATED_TASK_BYTES, what=what, field=("arrivals",))
