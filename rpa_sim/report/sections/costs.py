"""The detail "Cost": the cost figure, and a warning per policy whose cheapest point is at the edge of the
thresholds swept (which the comparison repeats)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rpa_sim.report.html import escape
from rpa_sim.report.svg import figure_html
from rpa_sim.report.wording import basis_text, cost_optimum, currency_of
from rpa_sim.route.compare import edge_of_range_text

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from rpa_sim.study.result import StudySummary

__all__ = ["cost_section", "edge_notes"]


def cost_section(summary: StudySummary, figures: dict[str, Figure]) -> list[str]:
    parts = ["<h2>Cost</h2>"]
    if "cost" not in figures:
        parts.append('<p class="explain" id="no-costs">Costs were not set for this scenario, so there is no cost '
                     "curve: add a <code>costs</code> section to see what each threshold costs.</p>")
        return parts
    currency = currency_of(summary)
    parts += [
        '<p class="explain">The total cost (reviews plus the errors left in the output) at each threshold, '
        + ("" if currency is None else f"in {escape(currency)}, ") + f"{escape(basis_text(summary))}. A low "
        "threshold reviews little and pays for errors; a high one pays reviewers. Each policy's cheapest "
        "threshold is marked with the policy's marker (under no constraint: it may miss one), and the decision "
        "with a star (★) when it meets every constraint. The lower panel zooms on "
        "the thresholds around the cheapest points (the grey box of the upper panel).</p>",
        figure_html(figures["cost"], "cost", "Total cost against threshold, per policy; below, the zoom on the "
                                              "cheapest thresholds."),
        *edge_notes(summary, "cost-edge"),
    ]
    return parts


def edge_notes(summary: StudySummary, list_id: str) -> list[str]:
    """A warning per policy whose cheapest point is the lowest or highest threshold swept: what it saves may
    only be what an extreme of the range saves (none without costs or such a policy)."""
    if summary.costs is None:
        return []
    notes = [f"<li><strong>{escape(p.policy)}</strong>: "
             f"{escape(edge_of_range_text(cost_optimum(p)))}.</li>"
             for p in summary.policies if cost_optimum(p).edge_of_range]
    if not notes:
        return []
    return ['<p class="explain">Read these cheapest points with care:</p>',
            f'<ul id="{list_id}">' + "".join(notes) + "</ul>"]

