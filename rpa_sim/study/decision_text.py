"""The decision of a study in a few lines of text, as ``rpa-sim run`` prints it first (``docs/decision.md``).

Every line is :func:`rpa_sim.study.told.told`'s: the words the report and the dashboard show too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rpa_sim.common.formatting import money
from rpa_sim.study.told import told

if TYPE_CHECKING:
    from rpa_sim.study.result import StudySummary

__all__ = ["decision_text"]


def decision_text(summary: StudySummary) -> str:
    """The decision of a study's result in a few lines, as ``rpa-sim run`` prints it (before the tables)."""
    said = told(summary)
    if said.feasible is None:
        return "\n".join([said.lead, *([] if said.sample is None else [f"  {said.sample}"])])
    lines = [f"Decision: {said.lead[0].lower()}{said.lead[1:]}" if said.feasible else said.lead]
    if said.sample is not None:
        lines.append(f"  ⚠ {said.sample}")
    if said.options:  # nothing feasible: the ways out first, then the nearest point that misses
        lines.append("  alternatives, cheapest feasible first:")
        for number, option in enumerate(said.options, 1):
            lines.append(f"    {number}. {option.line}")
    if not said.feasible:
        lines.append(f"  the nearest point, which misses: {said.point}")
    lines += [f"  {line}" for line in (said.does, said.through) if line and said.feasible]
    if said.team is not None:
        lines.append(f"  team: {said.team}")
    if said.cost is not None:
        split = " + ".join(f"{label} {money(value)}" for label, value in said.parts)
        lines.append(f"  cost: {said.cost}" + (f" ({split})" if len(said.parts) > 1 else ""))
    lines += [f"  {row.label} {row.reached} {row.needed} {row.mark}" for row in said.rows]
    lines += [*([] if said.risk is None else [f"  main risk: {said.risk}"]), f"  next step: {said.next_step}"]
    return "\n".join(lines)
