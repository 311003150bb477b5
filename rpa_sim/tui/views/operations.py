"""The dashboard's Operations view: the review team the selected policy at τ needs, and how a team copes.

Shown only for a scenario with an ``operations:`` section (its tab appears
with the summary, which carries the section's settings). τ is the app's
shared threshold; ``r`` adds a reviewer to every shift of the scenario's
team and ``R`` takes one away (at least one stays). For each (policy, τ,
reviewers) the figures of :class:`~rpa_sim.operate.queue.summary.OperationModel`
(the reviewers each hour needs for the service level, then one simulation of
the team: service level, turnaround, backlog over the day, utilisation) are
computed on a worker thread after τ has rested for :data:`SETTLE_SECONDS`,
and kept: moving back is instant, and moving never waits for a computation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual_plotext import PlotextPlot

from rpa_sim.common.formatting import count, hours, money, number
from rpa_sim.common.jsontext import finite
from rpa_sim.common.ticks import amount_labels, round_ticks
from rpa_sim.operate.queue.results import OperationAt
from rpa_sim.operate.queue.summary import OperationModel, Workload
from rpa_sim.tui.export import export_stem
from rpa_sim.tui.texts import figure_columns
from rpa_sim.tui.views.base import ComputedView
from rpa_sim.tui.widgets.legend import Legend
from rpa_sim.tui.widgets.plot import Marker
from rpa_sim.tui.widgets.readout import Readout

__all__ = ["OperationsView", "SETTLE_SECONDS"]

#: how long τ must rest before the view computes for it (seconds)
SETTLE_SECONDS = 0.2
BACKLOG, ARRIVALS = Marker("●", "cyan+"), Marker("▌", "gray")
Key = tuple[int, float, int, int]


class TeamFigures(Readout, can_focus=True):
    """The team's figures at τ; it takes the focus when the view is shown, so that r and R reach the view."""


class OperationsView(ComputedView[Key, OperationAt]):
    """Reviewers needed, service level, turnaround and the backlog over the day, for the policy at τ."""

    stem = "operations"
    #: ``r`` and ``R`` share one place in the footer (as the head line says, "r/R: ±1"), so that ``d`` fits 80 columns
    REVIEWER_KEYS = Binding.Group("±1")
    BINDINGS = [Binding("r", "reviewers(1)", "Reviewer +", group=REVIEWER_KEYS),
                Binding("R", "reviewers(-1)", "Reviewer −", group=REVIEWER_KEYS)]
    DEFAULT_CSS = """
    OperationsView #operations-note { height: auto; }
    OperationsView #operations-figures { height: auto; }
    OperationsView #operations-backlog { height: 1fr; min-height: 8; }
    """
    #: computed figures (``OperationModel.at``) by (policy, τ, extra reviewers, model version)
    results: dict[Key, OperationAt]
    settle_seconds = SETTLE_SECONDS
    #: reviewers added to (or, negative, taken from) every shift of the scenario's team
    extra = 0

    def compose(self) -> ComposeResult:
        yield Readout(id="operations-note")
        yield TeamFigures(id="operations-figures")
        yield PlotextPlot(id="operations-backlog")
        yield Legend(id="operations-legend")

    def operation(self) -> OperationModel:
        """The scenario's operation (the view computes only once the summary has it)."""
        operation = self.model.operation
        if operation is None:
            raise RuntimeError("the Operations view computes without the scenario's operations")
        return operation

    def key(self) -> Key:
        return self.state.policy, self.state.threshold, self.extra, self.state.model_version

    def redraw(self) -> None:
        model = self.state.model
        if model is None:
            return
        if not model.has_operations:
            self.show_note("Operations: waiting for the comparison of the policies (it holds the scenario's "
                           "operations settings)…" if not model.summarised else
                           "This scenario has no operations: section (docs/operations.md).")
            return
        self.request()

    def calculation(self, key: Key) -> Callable[[], OperationAt]:
        operation, sweeper, table = self.operation(), self.model.sweepers[key[0]], self.model.table

        def work() -> OperationAt:
            at = sweeper.at(key[1])
            return operation.at(Workload.from_point(at, documents=operation.documents), threshold=key[1],
                                quality=finite(at[table.metric_name]),
                                unreviewed=finite(table.summary()[table.metric_name]), extra=key[2])

        return work

    def show_pending(self, key: Key) -> None:
        self.show_note(f"{self.head(key)}: computing the reviewers needed and {self.operation().days} simulated "
                       f"day(s)…")

    def action_reviewers(self, change: int) -> None:
        """One reviewer more (or fewer) on every shift; never below one on a shift."""
        if self.state.model is None or not self.model.has_operations:
            return
        smallest = min(count for _, _, count in self.operation().plan())
        self.extra = max(self.extra + change, 1 - smallest)
        self.redraw()

    # -- drawing --------------------------------------------------------------------------------------

    def show_note(self, text: str) -> None:
        self.query_one("#operations-note", Readout).show_text(text)

    def head(self, key: Key) -> str:
        operation = self.operation()
        shifts = ", ".join(f"{start:02g}-{end:02g} h {count}" for start, end, count in operation.plan(key[2]))
        team = "the scenario's team" if key[2] == 0 else f"the team {key[2]:+d} a shift"
        return f"{self.model.policy_names[key[0]]} at τ = {key[1]:.4f} · {team} ({shifts}; r/R: ±1)"

    def show(self, key: Key) -> None:
        self.shown_key = key
        figures = self.results[key]
        operation = self.operation()
        simulated = figures.simulated
        level = operation.spec.service_level
        team_cost = operation.team_cost_per_day(key[2])
        currency = self.model.currency
        cost = "" if team_cost is None else f" · team {money(team_cost, currency)} a day"
        self.show_note(f"{self.head(key)}\nopens {figures.opened_share:.1%} of "
                       f"{count(operation.profile.documents_per_day)} a day · {figures.items_per_document:.2f} "
                       f"items each · {figures.handle_seconds:.0f} s{cost}")
        turnaround = [hours(seconds, unit=False) for seconds in (simulated.turnaround_p50_seconds,
                                                                 simulated.turnaround_p90_seconds,
                                                                 simulated.turnaround_p99_seconds)]
        entries = [("service level", f"{number(simulated.service_level, 3)} (target {level.share:.2f})"),
                   ("turnaround p50/p90/p99", f"{'/'.join(turnaround)} h"),
                   ("utilisation", number(simulated.utilisation, 3)),
                   ("reviewers needed", f"{count(figures.peak_scheduled_needed)} at peak"),
                   ("their cost a day", money(figures.staffing_cost_per_day, currency)),
                   ("released unreviewed", f"{figures.released_share:.1%}"),
                   (f"{self.model.metric_label} then", number(figures.quality_with_releases))]
        for columns in (2, 1):  # side by side where they fit
            lines = figure_columns(entries, columns=columns)
            if max(map(len, lines)) <= self.size.width:
                break
        # the backlog of each day, as long as the days are many, has a line of its own: the other figures then
        # go side by side at 80 columns, leaving the plot its rows
        self.query_one(TeamFigures).show_text("\n".join([
            *lines, f"backlog at day ends: {' · '.join(map(count, simulated.backlog_at_day_end))}",
            f"service level: done within {level.within_hours:g} h of arrival, over all documents · "
                    f"turnaround: of the reviewed · {operation.days} simulated day(s), seed {operation.spec.seed}"]))
        self.draw_backlog(list(simulated.backlog_by_hour), operation)
        self.query_one("#operations-legend", Legend).show_entries(
            [(BACKLOG, "backlog at the hour's end (mean over the days)"), (ARRIVALS, "arrivals an hour, scaled")])

    def draw_backlog(self, backlog: Sequence[float], operation: OperationModel) -> None:
        plot = self.query_one("#operations-backlog", PlotextPlot)
        plt = plot.plt
        plt.clear_figure()
        hours = list(range(1, 25))
        arrivals = list(operation.profile.per_hour[:24])
        top = max(max(backlog), 1.0)
        scale = top / max(max(arrivals), 1.0)
        plt.bar([hour - 0.5 for hour in hours], [rate * scale for rate in arrivals], color=ARRIVALS.color,
                width=0.8, marker="sd")
        plt.plot(hours, backlog, color=BACKLOG.color, marker="braille")
        plt.scatter(hours, backlog, color=BACKLOG.color, marker=BACKLOG.symbol)
        plt.xticks([0, 6, 12, 18, 24])
        plt.xlim(0, 24)
        plt.ylim(0, top * 1.05)
        ticks = round_ticks(0.0, top * 1.05, most=4)
        plt.yticks(ticks, amount_labels(ticks))  # documents: 200, not 215.7
        plt.title("backlog over the day")
        plt.xlabel("hour")
        plot.refresh()

    # -- export ---------------------------------------------------------------------------------------

    def rows(self) -> list[dict[str, Any]]:
        """Per hour of the day: arrivals, reviewers needed and scheduled, the team, and the simulated backlog."""
        key = self.shown_key
        figures = None if key is None else self.results.get(key)
        if key is None or figures is None:
            return []
        policy, threshold, extra, _ = key
        operation = self.operation()
        team = operation.scheduled_per_hour(extra)
        return [{"policy": self.model.policy_names[policy], "threshold": threshold, "extra_reviewers": extra,
                 "hour": hour, "arrivals_per_hour": operation.profile.per_hour[hour],
                 "reviewers_needed": figures.reviewers_needed_per_hour[hour],
                 "scheduled_needed": figures.scheduled_needed_per_hour[hour], "team_scheduled": team[hour],
                 "backlog": figures.simulated.backlog_by_hour[hour]} for hour in range(24)]

    def export_name(self) -> str:
        return export_stem(self.stem, policy=self.model.policy_names[self.state.policy],
                           threshold=self.state.threshold)
