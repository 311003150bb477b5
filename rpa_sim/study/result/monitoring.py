"""The result's monitoring: production replayed day by day, how each estimation method covered the truth."""

from __future__ import annotations

from dataclasses import dataclass

from rpa_sim.operate.monitoring.audit_plan import AuditPlan
from rpa_sim.route.reviewer import Reviewer
from rpa_sim.study.result.codec import FrozenMap, left_out

__all__ = ["MethodCoverage", "FirstDays", "AuditWidths", "MonitoredPolicy", "Monitoring"]


@dataclass(frozen=True)
class MethodCoverage:
    """How one estimation method did over the replayed days, and whether its intervals can be trusted."""

    coverage: float | None
    coverage_error: float | None
    mean_width: float | None
    bias: float | None
    quality_coverage: float | None
    reliable: bool | None = left_out()
    reason: str | None = left_out()


@dataclass(frozen=True)
class FirstDays:
    """The first replayed days: each day's seed, naive figure, and per method its estimate and interval."""

    seed: tuple[int, ...]
    naive: tuple[float | None, ...]
    estimate: FrozenMap[tuple[float | None, ...]]
    low: FrozenMap[tuple[float | None, ...]]
    high: FrozenMap[tuple[float | None, ...]]


@dataclass(frozen=True)
class AuditWidths:
    """What auditing more buys: per uniform audit rate, the audits a day and each method's mean width."""

    audit_rates: tuple[float, ...]
    expected_audits: tuple[float, ...]
    mean_width: FrozenMap[tuple[float | None, ...]]


@dataclass(frozen=True)
class MonitoredPolicy:
    """One monitored policy at its threshold; every figure None (and ``note`` why) when there is nothing to
    monitor."""

    policy: str
    threshold: float | None
    threshold_from: str
    rows: int | None
    reviewed: int | None
    auto_accepted: int | None
    audit_rate: float | None
    expected_audits: float | None
    true_auto_error: float | None
    naive_mean: float | None
    naive_bias: float | None
    methods: FrozenMap[MethodCoverage] | None
    first_days: FirstDays | None
    widths: AuditWidths | None
    note: str | None


@dataclass(frozen=True)
class Monitoring:
    """Production monitoring replayed (the scenario's ``monitoring:`` section) and its findings per policy."""

    days: int
    seed: int
    confidence_level: float
    methods: tuple[str, ...] | None
    audit_rate: float | None
    audit_plan: AuditPlan | None
    days_shown: int
    audit_rates: tuple[float, ...]
    width_days: int
    reviewer: Reviewer
    assumptions: str
    policies: tuple[MonitoredPolicy, ...]
