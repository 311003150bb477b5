"""What the review operation returns: a team, one simulation of it, the operation at a threshold, per policy and
as a whole (the ``operations`` of ``summary.json``, ``docs/summary.md``).

:class:`~rpa_sim.operate.queue.summary.OperationModel` makes them; the study
composes :class:`Operations` into its summary, and the decision holds its teams.
"""

from __future__ import annotations

from dataclasses import dataclass

from rpa_sim.common.formatting import team
from rpa_sim.common.typedjson import left_out, present_when
from rpa_sim.operate.queue.spec import OperationsSpec

__all__ = ["Team", "Simulation", "OperationAt", "PolicyOperations", "Operations"]


@dataclass(frozen=True, kw_only=True)
class Team:
    """A review team: its shifts ``(start_hour, end_hour, scheduled)``.

    A team the decision weighs is the scenario's with ``extra_per_shift``
    reviewers more on every shift; one given as a ``count`` has ``count``
    and no shifts. The scenario's own team as the operation runs it
    (``Operations.team``) has no ``extra_per_shift`` nor ``count`` (a count
    is one shift round the clock) and carries (empty for the others), per hour of a day, those
    scheduled and those on the floor after shrinkage, and what it costs a
    day (None without an hourly cost).

    >>> Team(extra_per_shift=1, shifts=((7.0, 15.0, 4), (15.0, 23.0, 3)), count=None).reviewers
    7
    """

    extra_per_shift: int | None = left_out()
    shifts: tuple[tuple[float, float, int], ...] | None
    count: int | None = present_when("extra_per_shift")
    scheduled_per_hour: tuple[int, ...] = left_out(empty=True)
    on_floor_per_hour: tuple[int, ...] = left_out(empty=True)
    cost_per_day: float | None = present_when("scheduled_per_hour")

    @property
    def extra(self) -> int:
        """The reviewers added to every shift of the scenario's team (0 for the scenario's own)."""
        return self.extra_per_shift or 0

    @property
    def reviewers(self) -> int:
        """The reviewers the roster schedules in a day: each shift's, summed."""
        if self.shifts is not None:
            return sum(shift[2] for shift in self.shifts)
        assert self.count is not None, "a team has shifts or a count"
        return self.count

    @property
    def words(self) -> str:
        """The team as every page writes it (:func:`~rpa_sim.common.formatting.team`), how it differs from the
        scenario's said when it is a team a decision weighs.

        >>> Team(extra_per_shift=1, shifts=((7.0, 15.0, 4), (15.0, 23.0, 4)), count=None).words
        '4 people a shift, 2 shifts (07–15 h, 15–23 h), 1 more a shift than planned'
        """
        return team(shifts=self.shifts, count=self.count, extra_per_shift=self.extra_per_shift)


@dataclass(frozen=True)
class Simulation:
    """One simulation of a team at a threshold's workload (:meth:`OperationModel.simulated`).

    ``service_level`` is the share of ALL documents completed in time,
    ``service_level_reviewed`` that of the opened ones; turnarounds are of
    the reviewed documents, in seconds; ``backlog_by_hour`` (at operating
    points only; empty elsewhere) is the mean, over the days, of the documents waiting or in
    review at the end of each hour of the day.
    """

    tasks: int
    service_level: float | None
    service_level_reviewed: float | None
    utilisation: float | None
    released: int
    p_breach: float | None
    turnaround_p50_seconds: float | None
    turnaround_p90_seconds: float | None
    turnaround_p99_seconds: float | None
    backlog_at_day_end: tuple[int, ...]
    backlog_by_hour: tuple[float, ...] = left_out(empty=True)


@dataclass(frozen=True, kw_only=True)
class OperationAt:
    """The operation at one threshold (:meth:`OperationModel.at`): its work, the reviewers it needs, their cost,
    the team's simulation and the quality once documents released unreviewed are counted.

    ``point`` names a policy's operating point (``"target 0.95"``, ``"cost optimum"``, ``"certified"``); it
    and the per-hour lists (empty here) are left out along a τ grid, as the simulation's backlog by hour is.
    """

    point: str | None = left_out()
    threshold: float
    opened_share: float
    items_per_document: float
    handle_seconds: float
    documents_opened_per_day: float
    peak_load: float
    peak_reviewers_needed: int
    peak_scheduled_needed: int
    staffing_cost_per_day: float | None
    load_per_hour: tuple[float, ...] = left_out(empty=True)
    reviewers_needed_per_hour: tuple[int, ...] = left_out(empty=True)
    scheduled_needed_per_hour: tuple[int, ...] = left_out(empty=True)
    erlang_service_level_per_hour: tuple[float | None, ...] = left_out(empty=True)
    unstaffed_hours: tuple[int, ...] = present_when("load_per_hour", default=())
    overloaded_hours: tuple[int, ...] = present_when("load_per_hour", default=())
    simulated: Simulation
    quality: float | None
    released_share: float
    quality_with_releases: float | None


@dataclass(frozen=True)
class PolicyOperations:
    """One policy's operation: at its operating points and along a τ grid."""

    policy: str
    points: tuple[OperationAt, ...]
    grid: tuple[OperationAt, ...]


@dataclass(frozen=True)
class Operations:
    """The review operation behind the thresholds (the scenario's ``operations:`` section)."""

    settings: OperationsSpec
    hourly_cost: float | None
    days: int
    documents_per_day: float
    arrivals_per_hour: tuple[float, ...]
    team: Team
    policies: tuple[PolicyOperations, ...]
