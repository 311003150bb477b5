"""The detail "Trade-off curves": the trade-off figure, and notes on the curves that need one (partial curves,
curves that end above reviewing everything)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from rpa_sim.common.formatting import number, share
from rpa_sim.report.html import escape
from rpa_sim.report.svg import figure_html
from rpa_sim.report.wording import shown_above, why_above_review_all
from rpa_sim.study.recommend import spans_all_auto_rates

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from rpa_sim.study.result import PolicyResult
    from rpa_sim.study.run import ScenarioResult

__all__ = ["tradeoff_section"]


def tradeoff_section(result: ScenarioResult, metric: str, figures: dict[str, Figure]) -> list[str]:
    summary = result.summary
    if "tradeoff" not in figures:
        return ["<h2>Trade-off curves</h2>",
                '<p class="explain" id="no-predictions">The data holds no predictions, so no policy has anything '
                "to route: there is no auto-rate and no trade-off to draw. The figures below that do not depend "
                "on predictions (what is missing from the output, its cost) still hold.</p>"]
    parts = [
        "<h2>Trade-off curves</h2>",
        '<p class="explain">Each line is one policy as its threshold moves: to the right, more predictions go '
        f"through unchecked (auto-rate); upwards, the output is better ({escape(metric)} after review). A policy "
        "whose line lies above another's is better at every level of automation. Policies differ by colour, line "
        "style and marker. Dashed grey lines are the targets; the filled markers are each policy's operating "
        "points, the most automation that still meets a target, labelled with their τ; the star "
        "(★) is the decision, shown only when it meets every constraint; the black square and triangle are "
        "reviewing everything (auto-rate 0) and nothing (auto-rate 1). The lower panel zooms on the range where "
        "the operating points lie (the grey box of the upper panel).</p>",
        figure_html(figures["tradeoff"], "tradeoff", "Auto-rate against quality after review, per policy; "
                                                      "below, the zoom on the operating points."),
    ]
    notes = [f"<li><strong>{escape(p.policy)}</strong> is a partial curve: {_partial_text(p)}.</li>"
             for p in summary.policies if not spans_all_auto_rates(p.auto_rate_range)]
    everything = summary.baselines.review_all.metric
    for curve, policy in zip(result.curves, result.policies, strict=True):
        top, why = _top(curve.metric), why_above_review_all(policy, summary.reviewer)
        if why and everything is not None and top is not None and shown_above(top, everything):
            notes.append(f"<li><strong>{escape(policy.name)}</strong> ends above reviewing everything ({number(top)} "
                         f"against {number(everything)}) because {why}.</li>")
    if notes:
        parts += ['<p class="explain">"Review everything" checks every prediction the model made, one by one, '
                  "with the scenario's reviewer. Read the curves with these notes:</p>",
                  '<ul id="curve-notes">' + "".join(notes) + "</ul>"]
    return parts


def _partial_text(policy: PolicyResult) -> str:
    low, high = policy.auto_rate_range
    if low is None or high is None:
        return "it has no defined auto-rate"
    limits = []
    if low > 0:
        limits.append(f"never reviews more than {share(1.0 - low)} of the predictions")
    if high < 1:
        limits.append(f"always reviews at least {share(1.0 - high)} of the predictions")
    return (f"it only operates between auto-rates {number(low)} and {number(high)}: it {' and '.join(limits)}. An area "
            "under its curve, counted as 0 where it cannot operate, would not compare with a full curve's, so the "
            'comparison shows "partial" instead of its AUC')


def _top(values: np.ndarray) -> float | None:
    defined = values[~np.isnan(values)]
    return float(defined.max()) if len(defined) else None

