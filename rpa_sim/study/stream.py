"""A scenario's stream: its ``stream:`` section with the study's decision, drawn, watched and told per change.

``rpa-sim replay SCENARIO --days N`` writes the stream's days as logs;
``rpa-sim run`` watches them (:func:`watched_stream`). The policy and threshold
are the section's, else the study's decision; the audit the section's, else the
scenario's ``monitoring:`` audit, else the policy's ``audit`` share, else
:data:`~rpa_sim.operate.monitoring.summary.DEFAULT_AUDIT_RATE`; the reviewers the
scenario's; ``watch``'s ``max_error`` the section's, else ``certify: max_error``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rpa_sim.common.errors import InputError
from rpa_sim.evaluate.outcomes import OutcomeTable
from rpa_sim.operate.monitoring.audit_plan import AuditPlan
from rpa_sim.operate.monitoring.summary import DEFAULT_AUDIT_RATE
from rpa_sim.operate.stream.generator import Stream
from rpa_sim.operate.stream.spec import StreamSpec
from rpa_sim.operate.stream.watched import StreamResult, outcomes, watch_stream
from rpa_sim.route.policies import Policy
from rpa_sim.study.scenario import Scenario

__all__ = ["scenario_stream", "stream_audit", "watched_stream", "audit_text"]


def _spec(scenario: Scenario) -> StreamSpec:
    if scenario.stream is None:
        raise InputError(f"scenario {scenario.name!r} has no stream: section (docs/live.md, \"Streams to study it "
                         f"on\")")
    return scenario.stream


def stream_audit(scenario: Scenario, policy: Policy) -> float | AuditPlan:
    """The stream's audit (module docstring)."""
    spec, monitoring = _spec(scenario), scenario.monitoring
    for holder in (spec, monitoring):
        if holder is not None and holder.audit_plan is not None:
            return holder.audit_plan
        if holder is not None and holder.audit_rate is not None:
            return holder.audit_rate
    return policy.audit or DEFAULT_AUDIT_RATE


def audit_text(audit: float | AuditPlan) -> str:
    """The audit in words: ``0.2 of auto-accepted units``, or a plan's strata and rates."""
    if isinstance(audit, AuditPlan):
        strata = ", ".join(f"{stratum.label(index)} {stratum.rate:g}" for index, stratum in enumerate(audit.strata))
        return f"a plan: {strata}, the rest {audit.rest_rate:g}"
    return f"{audit:g} of auto-accepted units"


def scenario_stream(scenario: Scenario, table: OutcomeTable, policies: Sequence[Policy], *,
                    decided: tuple[str | None, float | None] = (None, None), days: int | None = None,
                    seed: int | None = None) -> Stream:
    """The scenario's stream on its evaluated ``table``: the section's policy and threshold, else ``decided``
    (the study's decision); ``days`` and ``seed`` in place of the section's.

    Raises
    ------
    InputError
        For a policy the scenario does not have, no decision to take one from, or what
        :class:`~rpa_sim.operate.stream.generator.Stream` refuses.
    """
    spec = _spec(scenario)
    if seed is not None:
        spec = spec.model_copy(update={"seed": seed})
    name, threshold = (spec.policy, spec.threshold) if spec.policy is not None else decided
    if name is None or threshold is None:
        raise InputError("the study decided no policy to run in production: name one with stream: policy and "
                         "threshold", field="stream.policy")
    by_name = {policy.name: policy for policy in policies}
    if name not in by_name:
        raise InputError(f"{name!r} is not one of the scenario's policies ({', '.join(by_name)})",
                         field="stream.policy")
    policy = by_name[name]
    return Stream(table, policy, threshold=threshold, spec=spec, audit=stream_audit(scenario, policy),
                  reviewer=scenario.reviewer, days=days)


def watched_stream(scenario: Scenario, stream: Stream, *,
                   advance: Callable[[int], None] | None = None) -> StreamResult:
    """``watch`` over the stream, with the section's settings, and each change's detection."""
    from rpa_sim.operate.live.watch import WatchSettings  # noqa: PLC0415

    spec = _spec(scenario)
    max_error = spec.watch.max_error if spec.watch.max_error is not None else (
        None if scenario.certify is None else scenario.certify.max_error)
    assert max_error is not None, "the scenario's validation asks for a max_error"
    settings = WatchSettings(max_error=max_error, delta=spec.watch.delta,
                             segments_by=tuple(spec.watch.segments or stream.segments_by),
                             horizon_days=spec.watch.horizon_days)
    result = watch_stream(stream, settings, advance=advance)
    return StreamResult(policy=stream.policy.name, threshold=stream.threshold, audit=audit_text(stream.audit),
                        start=stream.dates[0], days=len(stream), documents_per_day=spec.documents_per_day,
                        seed=spec.seed, changes=outcomes(stream.plan.planted, result), watch=result)

