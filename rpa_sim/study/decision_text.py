"""The decision of a study in a few lines of text, as ``rpa-sim run`` prints it (``docs/decision.md``)."""

from __future__ import annotations

from rpa_sim.study.decision import Alternative, Decision

__all__ = ["decision_text"]


def decision_text(decision: Decision) -> str:
    """The decision of a study (``StudySummary.decision``) in a few lines, as ``rpa-sim run`` prints it.

    >>> from rpa_sim.route.costs import CostSplit
    >>> from rpa_sim.study.decision import Constraint
    >>> cost = CostSplit(review=1.0, staffing=0.0, errors=3.0, rejected=0.0, total=4.0, currency="EUR", per="data")
    >>> quality = Constraint("quality", 0.95, 0.96, True)
    >>> print(decision_text(Decision("confidence", 0.9, None, True, (quality,), "quality", cost, (), "cost", False,
    ...                              "")))
    Decision (cost): confidence at τ 0.9000
      cost for the data: 4.00 EUR = review 1.00 + staffing 0.00 + errors 3.00 + rejected 0.00
      quality 0.9600 (>= 0.95): met
      binding: quality
    """
    title = f"Decision ({decision.basis})"
    if decision.policy is None:
        return f"{title}: none; {decision.reason}"
    lines = [f"{title}: {_point_words(decision)}" if decision.feasible else
             f"{title}: no point meets every constraint; {decision.reason}",
             *_point_lines(decision, "  ")]
    if not decision.feasible:
        lines[1:1] = [f"  nearest: {_point_words(decision)}"]
    if decision.binding is not None:
        lines.append(f"  binding: {decision.binding}")
    if decision.edge_of_range:
        lines.append("  τ is at the edge of the swept range: the best may lie beyond it")
    for alternative in decision.alternatives:
        lines.append(f"  alternative ({alternative.kind}): {alternative.note}")
        lines += _point_lines(alternative, "    ")
    return "\n".join(lines)


def _point_words(point: Decision | Alternative) -> str:
    team = point.reviewers
    words = f"{point.policy} at τ {point.threshold:.4f}"
    if team is None:
        return words
    if team.shifts is None:
        return f"{words} with {team.count} reviewers"
    shifts = ", ".join(f"{count} from {start:g} to {end:g} h" for start, end, count in team.shifts)
    return f"{words} with {team.reviewers} reviewers ({shifts}; {team.extra_per_shift:+d} a shift)"


def _point_lines(point: Decision | Alternative, indent: str) -> list[str]:
    lines = []
    cost = point.cost
    if cost is not None:
        unit = f" {cost.currency}" if cost.currency else ""
        parts = (("review", cost.review), ("staffing", cost.staffing), ("errors", cost.errors),
                 ("rejected", cost.rejected), *((("signals", cost.signals),) if cost.signals is not None else ()))
        split = "" if any(value is None for _, value in parts) else " = " + " + ".join(
            f"{kind} {value:,.2f}" for kind, value in parts)
        lines.append(f"{indent}cost {'per day' if cost.per == 'day' else 'for the data'}: {cost.total:,.2f}{unit}"
                     f"{split}")
    for constraint in point.constraints:
        name, value, target = constraint.name, constraint.value, constraint.target
        shown = "-" if value is None else f"{value:,.2f}" if name == "cost_per_day" else f"{value:.4f}" \
            if name != "reviewers" else str(value)
        side = ">=" if name in ("quality", "service_level") else "<="
        lines.append(f"{indent}{name} {shown} ({side} {target:g}): {'met' if constraint.met else 'NOT met'}")
    return lines
