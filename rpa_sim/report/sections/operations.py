"""The report's Operations section: the reviewers a threshold needs, and the queue over the day.

Drawn from the summary's operation (``StudySummary.operations``, made by :mod:`rpa_sim.operate.queue.summary`):
the staffing table of every policy's operating points, and the figures of
:mod:`rpa_sim.report.displays.operations` (the reviewers to schedule against τ, the
reviewers to schedule in each hour beside the team, and the backlog over the
day simulated with the team). :func:`rpa_sim.report.page.render_report` adds it
only when the summary has operations, so other reports keep their bytes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rpa_sim.common.formatting import count, hours, money, number
from rpa_sim.report.html import escape, table
from rpa_sim.report.svg import figure_html
from rpa_sim.report.wording import currency_of

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from rpa_sim.study.result import Operations, StudySummary

__all__ = ["operations_section"]


def operations_section(operations: Operations, summary: StudySummary, figures: dict[str, Figure]) -> list[str]:
    """The section's HTML parts: the explanation, the staffing table and the plots (the summary's
    operation, its metric and currency)."""
    settings = operations.settings
    level = settings.service_level
    currency = currency_of(summary)
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
        + ("" if team_cost is None else f" The team costs {escape(money(team_cost, currency))} a day.") + "</p>",
    ]
    header = ["policy", "point", "τ", "opened a day", "peak load (erlangs)", "peak reviewers to schedule",
              f"staffing cost a day{unit}", "service level (team)", "turnaround p50 h", "p90 h", "p99 h",
              "backlog at last day's end", "utilisation", "released unreviewed",
              f"{summary.metric} with releases"]
    rows = []
    for entry in operations.policies:
        for point in entry.points:
            simulated = point.simulated
            rows.append([entry.policy, point.point or "", number(point.threshold, 3),
                         count(point.documents_opened_per_day), number(point.peak_load, 2),
                         count(point.peak_scheduled_needed), money(point.staffing_cost_per_day),
                         number(simulated.service_level, 3),
                         *(hours(seconds, unit=False) for seconds in (simulated.turnaround_p50_seconds,
                                                                      simulated.turnaround_p90_seconds,
                                                                      simulated.turnaround_p99_seconds)),
                         count(simulated.backlog_at_day_end[-1]), number(simulated.utilisation, 3),
                         number(point.released_share, 3), number(point.quality_with_releases, 4)])
    parts.append(table(header, rows, table_id="operations-staffing-table"))
    overloaded = sorted({f"{entry.policy} ({point.point})" for entry in operations.policies
                         for point in entry.points if point.overloaded_hours})
    if overloaded:
        parts.append('<p class="explain" id="operations-overload">With the team as planned the queue is '
                     f"overloaded in some hours at {escape(', '.join(overloaded))}: the exact models have no steady "
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
    parts += [figure_html(figures[name], name, caption) for name, caption in captions.items() if name in figures]
    return parts
