"""Production monitoring in a scenario: the ``monitoring:`` section of ``rpa-sim run`` (``docs/monitoring.md``).

Per policy, at one threshold (a number, the policy's cost optimum or its
operating point for the scenario's first target), many production days are
replayed (:mod:`~rpa_sim.operate.monitoring.coverage`) with the scenario's reviewer and
an audit of the auto-accepted items; each day is estimated with every method.
:func:`monitoring` then gives (:class:`~rpa_sim.operate.monitoring.results.Monitoring`, the
``monitoring`` of ``summary.json``), per policy and method, the actual
coverage of the nominal interval, its mean width and bias, the naive figure's
bias and the true auto-accepted error rate; the intervals of the first days
(estimated against true, for the report and the dashboard); and the mean
width at a small grid of uniform audit rates (what auditing more buys).

Examples
--------
>>> spec = MonitoringSpec.model_validate({"threshold": 0.9, "audit_rate": 0.1, "days": 20})
>>> spec.methods_for(uniform=True), spec.shown, spec.audit_rates
(('classical', 'stratified', 'ppi'), 20, [0.01, 0.02, 0.05, 0.1, 0.2])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Annotated, Any, Literal

import numpy as np
from pydantic import BeforeValidator, Field, model_validator

from rpa_sim.common import limits
from rpa_sim.common.errors import InputError
from rpa_sim.common.jsontext import finite
from rpa_sim.common.typedjson import FrozenMap
from rpa_sim.common.validation import StrictModel
from rpa_sim.operate.monitoring.audit_plan import AuditPlan
from rpa_sim.operate.monitoring.results import (
    AuditWidths,
    FirstDays,
    MethodCoverage,
    MonitoredPolicy,
    Monitoring,
    NarrowerAudit,
)

if TYPE_CHECKING:
    from rpa_sim.evaluate.outcomes import OutcomeTable
    from rpa_sim.route.policies import Policy
    from rpa_sim.route.reviewer import Reviewer

__all__ = ["MonitoringSpec", "DEFAULT_AUDIT_RATE", "ASSUMPTIONS", "SHORTFALL_ERRORS", "ZERO_WIDTH",
           "monitoring", "policy_monitoring", "nothing_to_monitor", "reliability", "spec_of_summary"]

Method = Literal["classical", "stratified", "ppi"]
#: The audit rate of a policy without an ``audit`` share of its own, unless the section gives one.
DEFAULT_AUDIT_RATE = 0.05
#: What the figures assume about the people who look, stated once wherever they are shown.
ASSUMPTIONS = ("Audits are a second, careful check of auto-accepted items, drawn at random with a known probability: "
               "they label exactly. Reviewers are the scenario's: the items they review are labelled by what they "
               "report, so their misses and false corrections bias the naive figure and the post-correction quality, "
               "not the audited error rate.")
#: How many Monte Carlo standard errors a method's replayed coverage may fall short of its nominal level before
#: the method is unreliable: a method that keeps its promise falls that far short in about 2% of measurements.
SHORTFALL_ERRORS = 2.0
#: An interval narrower than this is of zero width (PPI's normal interval with no error among the audits is
#: zero up to rounding, e.g. 1e-35).
ZERO_WIDTH = 1e-9
_Share = Annotated[float, Field(gt=0.0, le=1.0, allow_inf_nan=False)]
_Days = BeforeValidator(limits.size_check("days", most=limits.MOST_MONITORED_DAYS,
                                          limited_by="a fixed ceiling: each day replays every item"))


class MonitoringSpec(StrictModel):
    """The ``monitoring:`` section of a scenario; every setting has a default.

    Attributes
    ----------
    policy : str, optional
        The one policy to monitor (by name); every policy of the scenario by default.
    threshold : float or {"cost_optimum", "target"}, optional
        The policy's ``τ``: a number, its cost optimum, or its operating point
        for the scenario's first target. By default the cost optimum when the
        scenario has costs, else the first target's operating point.
    audit_rate : float, optional
        The share of auto-accepted items audited, in (0, 1]; by default the
        policy's own ``audit`` share, or :data:`DEFAULT_AUDIT_RATE` without one.
    audit_plan : AuditPlan, optional
        Per-stratum audit rates instead (the plan file's content, inline).
    days : int, default=200
        Replayed days; day ``i`` is drawn with seed ``seed + i``.
    methods : list of str, optional
        By default every method that fits the audit (``classical`` needs one rate).
    confidence_level : float, default=0.95
    seed : int, default=0
    days_shown : int, default=30
        The first days whose intervals the summary keeps (at most ``days``).
    audit_rates : list of float
        The uniform audit rates of the widths grid (empty: no grid).
    width_days : int, default=50
        Days per audit rate of the grid.
    """

    policy: str | None = Field(default=None, min_length=1)
    threshold: Annotated[float, Field(ge=0.0, allow_inf_nan=False)] | Literal["cost_optimum", "target"] | None = None
    audit_rate: _Share | None = None
    audit_plan: AuditPlan | None = None
    days: Annotated[int, _Days, Field(ge=1)] = 200
    methods: list[Method] | None = Field(default=None, min_length=1)
    confidence_level: Annotated[float, Field(gt=0.0, lt=1.0)] = 0.95
    seed: Annotated[int, Field(ge=0)] = 0
    days_shown: Annotated[int, _Days, Field(ge=0)] = 30
    audit_rates: list[_Share] = [0.01, 0.02, 0.05, 0.1, 0.2]
    width_days: Annotated[int, _Days, Field(ge=1)] = 50

    @model_validator(mode="after")
    def _consistent(self) -> MonitoringSpec:
        if self.audit_rate is not None and self.audit_plan is not None:
            raise ValueError("give audit_rate or audit_plan, not both")
        if self.methods is not None and len(set(self.methods)) != len(self.methods):
            raise ValueError(f"methods must differ, got {self.methods}")
        if self.audit_rates != sorted(set(self.audit_rates)):
            raise ValueError(f"audit_rates must increase, got {self.audit_rates}")
        return self

    @property
    def shown(self) -> int:
        """The days whose intervals the summary keeps: ``days_shown``, at most ``days``."""
        return min(self.days_shown, self.days)

    def methods_for(self, *, uniform: bool) -> tuple[str, ...]:
        """The methods to run: as given, else those that fit (``classical`` only when ``uniform``)."""
        if self.methods is not None:
            return tuple(self.methods)
        return ("classical", "stratified", "ppi") if uniform else ("stratified", "ppi")


#: An interval more than this many times wider than the error rate it estimates says little about it: the
#: section says so and gives the audit that would narrow it.
TOO_WIDE = 10.0
#: The narrowest width the advice asks for, so that a rate near 0 does not ask to audit everything.
NARROW_FLOOR = 0.01

#: A monitored policy's figures when there is nothing to monitor (its ``note`` says why): every one, None.
_NOTHING: dict[str, Any] = dict.fromkeys(
    ("rows", "reviewed", "auto_accepted", "audit_rate", "expected_audits", "true_auto_error", "naive_mean",
     "naive_bias", "methods", "first_days", "widths"))


def nothing_to_monitor(policy: str, threshold: float | None, threshold_from: str, note: str) -> MonitoredPolicy:
    """A monitored policy without figures, and why (``note``)."""
    return MonitoredPolicy(policy=policy, threshold=threshold, threshold_from=threshold_from, **_NOTHING, note=note)


def _first_days(daily: Any, shown: int) -> FirstDays:
    """The first ``shown`` days' intervals, columnar: what the report and the dashboard draw."""
    def listed(values: np.ndarray) -> tuple[float | None, ...]:
        return tuple(None if math.isnan(v) else float(v) for v in values[:shown].tolist())

    parts = {part: FrozenMap({method: listed(getattr(daily, part)[method]) for method in daily.methods})
             for part in ("estimate", "low", "high")}
    return FirstDays(seed=tuple(daily.seeds[:shown].tolist()), naive=listed(daily.naive), **parts)


def policy_monitoring(spec: MonitoringSpec, table: OutcomeTable, policy: Policy, *, threshold: float,
                      reviewer: Reviewer, threshold_from: str = "given") -> MonitoredPolicy:
    """One policy at ``threshold`` (``threshold_from`` says where τ comes from): its coverage figures, its first
    days and its widths grid.

    Raises
    ------
    InputError
        When a method does not fit the audit (``classical`` with several
        rates; ``ppi`` with a rate 0 or a missing confidence).
    """
    from rpa_sim.operate.monitoring.coverage import replay_days  # noqa: PLC0415
    from rpa_sim.operate.monitoring.replay import Replayer  # noqa: PLC0415

    rate = None if spec.audit_plan is not None else (
        spec.audit_rate if spec.audit_rate is not None else (policy.audit or DEFAULT_AUDIT_RATE))
    replayer = Replayer(table, policy, threshold=threshold, audit=spec.audit_plan if rate is None else rate)
    accepted = ~replayer.reviewed
    reviewed, auto_accepted = int(replayer.reviewed.sum()), int(accepted.sum())
    if not accepted.any():
        return replace(nothing_to_monitor(policy.name, threshold, threshold_from, "reviews every item at this "
                                          "threshold: nothing goes straight through to monitor"),
                       rows=len(table), reviewed=reviewed, auto_accepted=auto_accepted, audit_rate=rate)
    rates = replayer.inclusion_probability[accepted]
    methods = spec.methods_for(uniform=bool(rates.min() == rates.max()))
    if "classical" in methods and rates.min() != rates.max():
        raise InputError(f"scenario monitoring: classical assumes one audit rate for every auto-accepted item, and "
                         f"the plan's rates differ from {float(rates.min())!r} to {float(rates.max())!r}: leave "
                         f"classical out of methods")
    daily = replay_days(replayer, days=spec.days, seed=spec.seed, reviewer=reviewer, methods=methods,
                        confidence_level=spec.confidence_level)
    rows = {method: daily.row(method) for method in methods}
    naive = daily.naive[~np.isnan(daily.naive)]
    audits, audit_errors = float(rates.sum()), float(rates @ replayer.errors[accepted])
    verdicts = {method: reliability(method, row.coverage, level=spec.confidence_level, days=spec.days,
                                    zero_width=float(np.mean(daily.high[method] - daily.low[method] < ZERO_WIDTH)),
                                    audits=audits, audit_errors=audit_errors) for method, row in rows.items()}
    coverage = FrozenMap({method: MethodCoverage(
        coverage=finite(row.coverage), coverage_error=finite(row.coverage_error), mean_width=finite(row.mean_width),
        bias=finite(row.bias), quality_coverage=finite(row.quality_coverage), reliable=verdicts[method][0],
        reason=verdicts[method][1]) for method, row in rows.items()})
    monitored = MonitoredPolicy(
        policy=policy.name, threshold=threshold, threshold_from=threshold_from, rows=len(table), reviewed=reviewed,
        auto_accepted=auto_accepted, audit_rate=rate, expected_audits=audits, true_auto_error=finite(daily.truth),
        naive_mean=float(naive.mean()) if len(naive) else None, naive_bias=finite(rows[methods[0]].naive_bias),
        methods=coverage, first_days=_first_days(daily, spec.shown),
        widths=_widths(spec, table, policy, threshold, reviewer, methods) if spec.audit_rates else None,
        note=None)
    return replace(monitored, narrower=_narrower(monitored, table, policy, level=spec.confidence_level))


def _narrower(monitored: MonitoredPolicy, table: OutcomeTable, policy: Policy, *,
              level: float) -> NarrowerAudit | None:
    """The audit that would bring the proposed method's interval to about the width of the rate it estimates
    (at least :data:`NARROW_FLOOR`), when the interval is more than :data:`TOO_WIDE` times wider than that rate;
    None otherwise, or when no method is reliable."""
    from rpa_sim.operate.monitoring.planning import plan_audit  # noqa: PLC0415

    method, rate = monitored.proposed_method(), monitored.true_auto_error
    width = None if method is None or monitored.methods is None else monitored.methods[method].mean_width
    if width is None or rate is None or monitored.threshold is None or width <= TOO_WIDE * rate:
        return None
    target = float(f"{max(rate, NARROW_FLOOR):.2g}")  # a width a reader can say: two significant digits
    if target >= width:
        return None
    plan = plan_audit(table, policy, threshold=monitored.threshold, target_width=target, confidence_level=level)
    return NarrowerAudit(target_width=target, audits=plan.audits, audit_rate=plan.audits / plan.auto_accepted)


def reliability(method: str, coverage: float, *, level: float, days: int, zero_width: float, audits: float,
                audit_errors: float) -> tuple[bool, str]:
    """Whether a method's intervals keep their promise over the replayed days, and if not, why, in words.

    A method is unreliable when its coverage falls short of the nominal
    ``level`` by more than :data:`SHORTFALL_ERRORS` Monte Carlo standard
    errors, the larger of the measured one, ``sqrt(c (1 - c) / days)``, and
    the one a method at its nominal level would have,
    ``sqrt(level (1 - level) / days)`` (the measured one is 0 at a coverage
    of 0 or 1, and small near them); or when its interval has zero width on
    more than half of the days, a certainty no sample of audits gives, even
    where the true rate is 0 and the interval holds it.

    Parameters
    ----------
    method : str
    coverage : float
        The share of days whose interval holds the truth.
    level : float
        The intervals' nominal coverage.
    days : int
        The replayed days.
    zero_width : float
        The share of days whose interval has zero width (:data:`ZERO_WIDTH`).
    audits, audit_errors : float
        The audits a day and the errors among them, expected.

    Returns
    -------
    tuple of (bool, str)
        Reliable, and the reason it is not (empty when it is).

    Examples
    --------
    >>> reliability("ppi", 0.24, level=0.95, days=200, zero_width=0.76, audits=51.8, audit_errors=0.35)
    ... # doctest: +NORMALIZE_WHITESPACE
    (False, "covers 24.0% of replayed days against a nominal 95% (± 3.0%): with about 0.35 errors expected among
    52 audits a day, PPI's normal interval collapses to zero width on 76.0% of the days")
    >>> reliability("classical", 0.94, level=0.95, days=200, zero_width=0.0, audits=51.8, audit_errors=0.35)
    (True, '')
    """
    from rpa_sim.common.formatting import count, setting_share, share  # noqa: PLC0415

    error = max(math.sqrt(coverage * (1.0 - coverage) / days), math.sqrt(level * (1.0 - level) / days))
    short = level - coverage > SHORTFALL_ERRORS * error
    collapsed = zero_width > 0.5
    if not (short or collapsed):
        return True, ""
    found = (f"covers {share(coverage)} of replayed days against a nominal {setting_share(level)} (± {share(error)})"
             if short else "")
    if method != "ppi" and not collapsed:
        return False, found
    errors = f"{audit_errors:.2g}" if audit_errors < 10 else count(audit_errors)  # 0.35, 4.5, 12, 1,234
    expected = f"with about {errors} errors expected among {count(audits)} audits a day, "
    interval = "PPI's normal interval" if method == "ppi" else "its interval"
    cause = (f"{interval} collapses to zero width on {share(zero_width)} of the days" if collapsed
             else f"{interval} is too narrow for so few errors")
    return False, f"{found}: {expected}{cause}" if found else f"{expected}{cause}, a certainty no audit gives"


def _widths(spec: MonitoringSpec, table: OutcomeTable, policy: Policy, threshold: float, reviewer: Reviewer,
            methods: Sequence[str]) -> AuditWidths:
    """Mean width per method at each uniform audit rate of the grid, over the same seeds (common random numbers)."""
    from rpa_sim.operate.monitoring.coverage import replay_days  # noqa: PLC0415
    from rpa_sim.operate.monitoring.replay import Replayer  # noqa: PLC0415

    widths: dict[str, list[float]] = {method: [] for method in methods}
    audits = []
    for rate in spec.audit_rates:
        replayer = Replayer(table, policy, threshold=threshold, audit=rate)
        audits.append(float(rate * np.count_nonzero(~replayer.reviewed)))
        daily = replay_days(replayer, days=spec.width_days, seed=spec.seed, reviewer=reviewer, methods=methods,
                            confidence_level=spec.confidence_level)
        for method in methods:
            widths[method].append(float(np.mean(daily.high[method] - daily.low[method])))
    return AuditWidths(audit_rates=tuple(spec.audit_rates), expected_audits=tuple(audits),
                       mean_width=FrozenMap({method: tuple(map(finite, values)) for method, values in widths.items()}))


def monitoring(spec: MonitoringSpec, table: OutcomeTable, policies: Sequence[Policy],
               thresholds: Sequence[tuple[float | None, str]], *, reviewer: Reviewer) -> Monitoring:
    """Production monitoring replayed: the settings (those of :class:`MonitoringSpec` but the policy and the
    threshold, each policy's own), the assumptions, and each monitored policy at its threshold.

    ``thresholds`` gives, per policy, its τ and where it comes from (``given``, ``cost optimum``, ``target
    0.95``; τ None when the policy has no such point: nothing to monitor).
    """
    names = [policy.name for policy in policies]
    if spec.policy is not None and spec.policy not in names:
        raise InputError(f"scenario monitoring: policy: {spec.policy!r} is not one of the scenario's policies "
                         f"({', '.join(names)})")
    entries = []
    for policy, (threshold, source) in zip(policies, thresholds):
        if spec.policy is not None and policy.name != spec.policy:
            continue
        if threshold is None:
            entries.append(nothing_to_monitor(policy.name, None, source, f"has no {source}: nothing to monitor"))
        else:
            entries.append(policy_monitoring(spec, table, policy, threshold=threshold, reviewer=reviewer,
                                             threshold_from=source))
    return Monitoring(days=spec.days, seed=spec.seed, confidence_level=spec.confidence_level,
                      methods=None if spec.methods is None else tuple(spec.methods), audit_rate=spec.audit_rate,
                      audit_plan=spec.audit_plan, days_shown=spec.shown, audit_rates=tuple(spec.audit_rates),
                      width_days=spec.width_days, reviewer=reviewer, assumptions=ASSUMPTIONS,
                      policies=tuple(entries))


def spec_of_summary(monitoring: Monitoring | None) -> MonitoringSpec:
    """The settings a summary's monitoring (``StudySummary.monitoring``) was made with (the policy and
    threshold left out); the defaults without one. The dashboard monitors any policy at any threshold with them.

    >>> spec_of_summary(None) == MonitoringSpec()
    True
    """
    if monitoring is None:
        return MonitoringSpec()
    settings = set(MonitoringSpec.model_fields) - {"policy", "threshold"}
    return MonitoringSpec.model_validate({name: getattr(monitoring, name) for name in settings})
