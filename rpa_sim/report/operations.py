"""The report's Operations section: the reviewers a threshold needs, and the queue over the day.

Drawn from the summary's operation (``StudySummary.operations``, made by :mod:`rpa_sim.operate.queue.summary`)
with the report's own style (:mod:`rpa_sim.report.page`): the staffing table of
every policy's operating points, the reviewers to schedule against τ, the
reviewers to schedule in each hour beside the team, and the backlog over the
day simulated with the team. :func:`rpa_sim.report.page.render_report` adds it
only when the summary has operations, so other reports keep their bytes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from matplotlib.figure import Figure

from rpa_sim.common.formatting import count, hours, money
from rpa_sim.report.page import _currency, _esc, _figure_html, _label, _new_axes, _style, _table, num

if TYPE_CHECKING:
    from rpa_sim.study.result import Operations, OperationsPoint, PolicyOperations, StudySummary

__all__ = ["OPERATIONS_PLOTS", "operations_figures", "operations_section"]

#: The section's plots, in order: their ids and PNG file stems.
OPERATIONS_PLOTS = ("operations-reviewers", "operations-staffing", "operations-backlog")
_HOURS = np.arange(25)


def _first_points(operations: Operations) -> list[tuple[int, PolicyOperations, OperationsPoint]]:
    """Each policy (with its place, which gives its style) and its first operating point, when it has one."""
    return [(index, entry, entry.points[0]) for index, entry in enumerate(operations.policies) if entry.points]


def operations_figures(operations: Operations) -> dict[str, Figure]:
    """The section's plots by name (:data:`OPERATIONS_PLOTS`)."""
    figures = {"operations-reviewers": _reviewers_figure(operations)}
    if _first_points(operations):
        figures["operations-staffing"] = _staffing_figure(operations)
        figures["operations-backlog"] = _backlog_figure(operations)
    return figures


def _reviewers_figure(operations: Operations) -> Figure:
    figure = Figure(figsize=(7.5, 6.4), layout="constrained")
    top, bottom = figure.subplots(2, 1, sharex=True)
    _label(top, "Reviewers to schedule at the busiest hour, against τ", "", "reviewers")
    _label(bottom, "Share of documents done in time with the team (simulated)", "threshold τ", "service level")
    for index, entry in enumerate(operations.policies):
        style = _style(index)
        tau = [row.threshold for row in entry.grid]
        top.step(tau, [row.peak_scheduled_needed for row in entry.grid], where="mid", label=entry.policy,
                 color=style["color"], linestyle=style["linestyle"])
        bottom.plot(tau, [row.simulated.service_level for row in entry.grid], label=entry.policy,
                    markersize=3, **style)
    team = max(operations.team.scheduled_per_hour)
    top.axhline(team, color="black", linestyle=":", linewidth=1, label=f"the team ({team} at most)")
    bottom.axhline(operations.settings.service_level.share, color="black", linestyle=":", linewidth=1,
                   label="target")
    bottom.set_ylim(-0.02, 1.02)
    top.legend(fontsize=8, loc="upper left")
    bottom.legend(fontsize=8, loc="lower left")
    return figure


def _staffing_figure(operations: Operations) -> Figure:
    figure, axes = _new_axes("Reviewers to schedule in each hour (first operating point)", "hour of the day",
                             "reviewers")
    team = operations.team.scheduled_per_hour
    axes.stairs(team, _HOURS, color="black", linestyle=":", linewidth=1.5, label="the team")
    for index, entry, point in _first_points(operations):
        style = _style(index)
        hours = point.scheduled_needed_per_hour
        if len(hours) > 24:  # a week's profile: its mean day
            hours = np.asarray(hours, dtype=np.float64).reshape(7, 24).mean(axis=0).tolist()
        axes.stairs(hours, _HOURS, color=style["color"], linestyle=style["linestyle"],
                    label=f"{entry.policy} at τ {point.threshold:.3f} ({point.point})")
    axes.set_xlim(0, 24)
    axes.set_xticks(range(0, 25, 3))
    axes.legend(fontsize=8, loc="upper left")
    return figure


def _backlog_figure(operations: Operations) -> Figure:
    figure, axes = _new_axes(f"Documents waiting or in review, mean over {operations.days} simulated days",
                             "hour of the day (end of)", "documents")
    arrivals = axes.twinx()
    arrivals.bar(np.arange(24) + 0.5, np.asarray(operations.arrivals_per_hour[:24]), width=0.9, color="0.85",
                 zorder=0)
    arrivals.set_ylabel("arrivals an hour (grey bars)")
    axes.set_zorder(arrivals.get_zorder() + 1)
    axes.patch.set_visible(False)
    for index, entry, point in _first_points(operations):
        axes.plot(np.arange(1, 25), point.simulated.backlog_by_hour, markersize=3,
                  label=f"{entry.policy} at τ {point.threshold:.3f}", **_style(index))
    axes.set_xlim(0, 24)
    axes.set_xticks(range(0, 25, 3))
    axes.legend(fontsize=8, loc="upper left")
    return figure


def operations_section(summary: StudySummary, figures: dict[str, Figure]) -> list[str]:
    """The section's HTML parts: the explanation, the staffing table and the plots (the summary's
    operation, its metric and currency)."""
    operations = summary.operations
    settings = operations.settings
    level = settings.service_level
    currency = _currency(summary)
    unit = "" if currency is None else f" ({currency})"
    team_cost = operations.team.cost_per_day
    parts = [
        '<h2 id="operations">Operations: reviewers, turnaround and backlog</h2>',
        '<p class="explain">Every threshold sends work to people. Documents arrive '
        f"({operations.documents_per_day:,.0f} a day); a policy at τ opens a share of them for review, each "
        "taking a time to open plus a time per reviewed field. The service level asks that "
        f"{level.share:.0%} of all documents be done within {level.within_hours:g} h of arrival (a document "
        "that is not opened is done at once). For each hour, the exact queue model (Erlang C, or Erlang A with "
        "patience) gives the fewest reviewers meeting it, and the reviewers to schedule once shrinkage "
        f"({settings.reviewers.shrinkage:g}) is taken out; the scenario's own team is then simulated for "
        f"{operations.days} day(s) (seed {settings.seed}) for the service level it reaches, the turnaround "
        "of the reviewed documents and the backlog. A document the team releases unreviewed when its patience "
        "runs out goes through as the model gave it: the last column is the quality after review with those "
        "documents counted so."
        + ("" if team_cost is None else f" The team costs {_esc(money(team_cost, currency))} a day.") + "</p>",
    ]
    header = ["policy", "point", "τ", "opened a day", "peak load (erlangs)", "peak reviewers to schedule",
              f"staffing cost a day{unit}", "service level (team)", "turnaround p50 h", "p90 h", "p99 h",
              "backlog at last day's end", "utilisation", "released unreviewed",
              f"{summary.metric} with releases"]
    rows = []
    for entry in operations.policies:
        for point in entry.points:
            simulated = point.simulated
            rows.append([entry.policy, point.point, num(point.threshold, 3),
                         count(point.documents_opened_per_day), num(point.peak_load, 2),
                         count(point.peak_scheduled_needed), money(point.staffing_cost_per_day),
                         num(simulated.service_level, 3),
                         *(hours(seconds, unit=False) for seconds in (simulated.turnaround_p50_seconds,
                                                                      simulated.turnaround_p90_seconds,
                                                                      simulated.turnaround_p99_seconds)),
                         count(simulated.backlog_at_day_end[-1]), num(simulated.utilisation, 3),
                         num(point.released_share, 3), num(point.quality_with_releases, 4)])
    parts.append(_table(header, rows, table_id="operations-staffing-table"))
    overloaded = sorted({f"{entry.policy} ({point.point})" for entry in operations.policies
                         for point in entry.points if point.overloaded_hours})
    if overloaded:
        parts.append('<p class="explain" id="operations-overload">With the team as planned the queue is '
                     f"overloaded in some hours at {_esc(', '.join(overloaded))}: the exact models have no steady "
                     "state there (undefined, not a negative wait) and the backlog grows until the load falls.</p>")
    captions = {
        "operations-reviewers": "Per policy over a grid of thresholds: above, the reviewers to schedule at the "
                                "busiest hour for the service level (dotted: the team); below, the service level "
                                "the team reaches (dotted: the target).",
        "operations-staffing": "Reviewers to schedule in each hour of the day at each policy's first operating "
                               "point, and the team as planned (dotted).",
        "operations-backlog": "Documents waiting or in review at the end of each hour, with the team as planned, "
                              "at each policy's first operating point; grey bars: arrivals an hour.",
    }
    parts += [_figure_html(figures[name], name, caption) for name, caption in captions.items() if name in figures]
    return parts
