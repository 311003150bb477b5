"""What production monitoring returns: per monitored policy, how each estimation method covered the truth over
the replayed days, its first days and what auditing more buys; and the whole (the ``monitoring`` of
``summary.json``, ``docs/summary.md``).

:func:`~rpa_sim.operate.monitoring.summary.monitoring` makes :class:`Monitoring`
and :func:`~rpa_sim.operate.monitoring.summary.policy_monitoring` one
:class:`MonitoredPolicy`; the study composes the first into its summary, the
dashboard shows the second.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from rpa_sim.common.typedjson import FrozenMap, left_out
from rpa_sim.operate.monitoring.audit_plan import AuditPlan
from rpa_sim.route.reviewer import Reviewer

__all__ = ["MethodCoverage", "FirstDays", "AuditWidths", "NarrowerAudit", "MonitoredPolicy", "Monitoring"]


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
class NarrowerAudit:
    """The audit that would narrow an interval far wider than the rate it estimates: the width asked for, and
    the audits a day (and their share of the auto-accepted items) the planner
    (:func:`rpa_sim.operate.monitoring.planning.plan_audit`) gives for it."""

    target_width: float
    audits: int
    audit_rate: float


@dataclass(frozen=True)
class MonitoredPolicy:
    """One monitored policy at its threshold (``threshold_from`` says where τ comes from: ``given``, ``cost
    optimum``, ``target 0.95``); every figure None (and ``note`` why) when there is nothing to monitor.

    :meth:`proposed_method` is the method to estimate with; ``narrower``, when its interval is more than
    ten times wider than the rate it estimates, the audit that would narrow it.
    """

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
    narrower: NarrowerAudit | None = left_out()

    def proposed_method(self) -> str | None:
        """The method to estimate with: the narrowest reliable one (the first of a tie); None when no method
        is reliable or the policy has no figures.

        >>> coverage = {"classical": MethodCoverage(0.95, 0.01, 0.08, 0.0, None, reliable=True),
        ...             "ppi": MethodCoverage(0.24, 0.03, 0.01, 0.0, None, reliable=False)}
        >>> nothing = dict.fromkeys(("rows", "reviewed", "auto_accepted", "audit_rate", "expected_audits",
        ...                          "true_auto_error", "naive_mean", "naive_bias", "first_days", "widths", "note"))
        >>> MonitoredPolicy("confidence", 0.9, "given", methods=FrozenMap(coverage), **nothing).proposed_method()
        'classical'
        """
        # a reliable method whose width is unknown is proposed only when no other is reliable
        reliable = {method: math.inf if figures.mean_width is None else figures.mean_width
                    for method, figures in (self.methods or {}).items() if figures.reliable}
        return min(reliable, key=reliable.__getitem__) if reliable else None

    def narrowing(self) -> tuple[str, str] | None:
        """The proposed method's interval against the rate it estimates and the audit that would narrow it, in
        words, and the ``plan-audit`` command that plans that audit; None when no narrower audit is proposed.
        The report and the dashboard say the same words."""
        from rpa_sim.common.formatting import count, number, share  # noqa: PLC0415

        method, narrower, rate = self.proposed_method(), self.narrower, self.true_auto_error
        width = None if method is None or self.methods is None else self.methods[method].mean_width
        if narrower is None or width is None or rate is None:
            return None
        times = "more than ten" if rate == 0 else f"{width / rate:,.0f}"
        return (f"{times} times wider than the error rate it estimates ({number(rate)}): auditing "
                f"{share(narrower.audit_rate)} of the auto-accepted items ({count(narrower.audits)} a day, Neyman "
                f"allocation over confidence bands) would bring it to about {number(narrower.target_width)} wide",
                f"rpa-sim plan-audit DATA --policy {self.policy} --threshold {self.threshold} "
                f"--target-width {narrower.target_width:g}")


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
