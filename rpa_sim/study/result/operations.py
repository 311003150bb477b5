"""The result's operation: the review team, its workload and staffing at each policy's points, its simulation."""

from __future__ import annotations

from dataclasses import dataclass

from rpa_sim.operate.queue.spec import OperationsSpec
from rpa_sim.study.result.codec import left_out

__all__ = ["OperationsTeam", "Simulation", "OperationsPoint", "OperationsGridRow", "PolicyOperations", "Operations"]


@dataclass(frozen=True)
class OperationsTeam:
    """The scenario's team: its shifts ``(start_hour, end_hour, scheduled)``, per hour of a day those
    scheduled and those on the floor after shrinkage, and what it costs a day."""

    shifts: tuple[tuple[float, float, int], ...]
    scheduled_per_hour: tuple[int, ...]
    on_floor_per_hour: tuple[int, ...]
    cost_per_day: float | None


@dataclass(frozen=True)
class Simulation:
    """One simulation of the team at a threshold's workload; ``backlog_by_hour`` only at operating points."""

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
    backlog_by_hour: tuple[float, ...] | None = left_out()


@dataclass(frozen=True)
class OperationsPoint:
    """The operation at one of a policy's operating points: its work, the reviewers it needs per hour, their
    cost, the team's simulation and the quality once releases are counted."""

    point: str
    threshold: float
    opened_share: float
    items_per_document: float
    handle_seconds: float
    documents_opened_per_day: float
    peak_load: float
    peak_reviewers_needed: int
    peak_scheduled_needed: int
    staffing_cost_per_day: float | None
    load_per_hour: tuple[float, ...]
    reviewers_needed_per_hour: tuple[int, ...]
    scheduled_needed_per_hour: tuple[int, ...]
    erlang_service_level_per_hour: tuple[float | None, ...]
    unstaffed_hours: tuple[int, ...]
    overloaded_hours: tuple[int, ...]
    simulated: Simulation
    quality: float | None
    released_share: float
    quality_with_releases: float | None


@dataclass(frozen=True)
class OperationsGridRow:
    """The operation at one threshold of a fixed grid: an :class:`OperationsPoint` without the per-hour lists."""

    threshold: float
    opened_share: float
    items_per_document: float
    handle_seconds: float
    documents_opened_per_day: float
    peak_load: float
    peak_reviewers_needed: int
    peak_scheduled_needed: int
    staffing_cost_per_day: float | None
    simulated: Simulation
    quality: float | None
    released_share: float
    quality_with_releases: float | None


@dataclass(frozen=True)
class PolicyOperations:
    """One policy's operation: at its operating points and along a τ grid."""

    policy: str
    points: tuple[OperationsPoint, ...]
    grid: tuple[OperationsGridRow, ...]


@dataclass(frozen=True)
class Operations:
    """The review operation behind the thresholds (the scenario's ``operations:`` section)."""

    settings: OperationsSpec
    hourly_cost: float | None
    days: int
    documents_per_day: float
    arrivals_per_hour: tuple[float, ...]
    team: OperationsTeam
    policies: tuple[PolicyOperations, ...]
