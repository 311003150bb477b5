"""The dashboard's Monitoring view: what audits would tell about the selected policy at the current τ.

Shown for every scenario. With a ``monitoring:`` section its settings are
used, and its policies at their thresholds are shown at once from the summary;
any other policy or τ is computed with those settings (the defaults of
:class:`~rpa_sim.operate.monitoring.summary.MonitoringSpec` without a section) on a
worker thread, after τ has rested for :data:`SETTLE_SECONDS`, while the view
says it is computing: moving τ never waits for it. The content is the report's
(:mod:`rpa_sim.report.sections.monitoring`): the coverage per method, the intervals of
the first replayed days against the truth (``n``: the next method) and the mean
width against the audit rate.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import asdict
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual_plotext import PlotextPlot

from rpa_sim.common.errors import InputError
from rpa_sim.operate.monitoring.summary import MonitoringSpec, nothing_to_monitor, policy_monitoring, spec_of_summary
from rpa_sim.study.result import MethodCoverage, MonitoredPolicy
from rpa_sim.tui.export import export_stem
from rpa_sim.tui.views.base import ComputedView
from rpa_sim.tui.widgets.legend import Legend
from rpa_sim.tui.widgets.plot import Marker
from rpa_sim.tui.widgets.readout import Readout
from rpa_sim.tui.widgets.text_table import TextTable

__all__ = ["MonitoringView", "SETTLE_SECONDS"]

#: how long τ must rest before the view computes for it (seconds)
SETTLE_SECONDS = 0.3
COVERED, MISSED, TRUTH = Marker("│", "cyan+"), Marker("│", "red+"), Marker("─", "gray")
METHOD_MARKERS = {"classical": Marker("●", "cyan+"), "stratified": Marker("■", "orange+"),
                  "ppi": Marker("▲", "magenta+")}
#: the report's statement of the assumptions, in one line
ASSUMPTION = ("audits: a second, careful check (exact); naive: reviewed items as the scenario's reviewer "
              "reports them")


class MonitoringView(ComputedView[tuple[int, float, int], MonitoredPolicy]):
    """Coverage, intervals against the truth and widths against the audit rate, for the policy at τ."""

    stem = "monitoring"
    BINDINGS = [Binding("n", "next_method", "Next method")]
    DEFAULT_CSS = """
    MonitoringView #monitoring-note { height: auto; }
    MonitoringView #monitoring-table { height: 4; }
    MonitoringView #monitoring-plots { height: 1fr; min-height: 8; }
    MonitoringView #monitoring-plots PlotextPlot { width: 1fr; }
    """
    settle_seconds = SETTLE_SECONDS
    #: the entries shown, the summary's or computed (``policy_monitoring``'s, typed), by (policy, τ, model version)
    results: dict[tuple[int, float, int], MonitoredPolicy]
    method_index = 0
    #: the method whose intervals the plot shows
    shown_method: str | None = None

    def compose(self) -> ComposeResult:
        yield Readout(id="monitoring-note")
        yield TextTable(id="monitoring-table")
        with Horizontal(id="monitoring-plots"):
            yield PlotextPlot(id="monitoring-intervals")
            yield PlotextPlot(id="monitoring-widths")
        yield Legend(id="monitoring-legend")

    # -- what to show ---------------------------------------------------------------------------------

    def spec(self) -> MonitoringSpec:
        summary = self.model.summary
        return spec_of_summary(None if summary is None else summary.monitoring)

    def key(self) -> tuple[int, float, int]:
        return self.state.policy, self.state.threshold, self.state.model_version

    def from_summary(self, policy: int, threshold: float) -> MonitoredPolicy | None:
        """The section's entry for the policy when τ is the section's threshold for it."""
        name, summary = self.model.policy_names[policy], self.model.summary
        monitoring = None if summary is None else summary.monitoring
        for entry in () if monitoring is None else monitoring.policies:
            if entry.policy == name and entry.threshold == threshold:
                return entry
        return None

    def redraw(self) -> None:
        model = self.state.model
        if model is None:
            return
        if not model.summarised:
            self.show_note("Monitoring: waiting for the comparison of the policies (it holds the scenario's "
                           "monitoring settings)…")
            return
        key = self.key()
        if key not in self.results and (entry := self.from_summary(key[0], key[1])) is not None:
            self.results[key] = entry
        self.request()

    def calculation(self, key: tuple[int, float, int]) -> Callable[[], MonitoredPolicy]:
        policy, threshold = key[0], key[1]
        model, spec = self.model, self.spec()
        name, sweeper = model.policy_names[policy], model.sweepers[policy]

        def work() -> MonitoredPolicy:
            try:  # τ here is the dashboard's own
                return policy_monitoring(spec, model.table, model.policies[policy], threshold=threshold,
                                         reviewer=sweeper.reviewer)
            except (InputError, ValueError) as problem:  # nothing to monitor: every figure None, and why
                return nothing_to_monitor(name, threshold, "given", str(problem))

        return work

    def show_pending(self, key: tuple[int, float, int]) -> None:
        self.show_note(self.status_text(key, computing=True))

    # -- drawing --------------------------------------------------------------------------------------

    def show_note(self, text: str) -> None:
        self.query_one("#monitoring-note", Readout).show_text(text)

    def status_text(self, key: tuple[int, float, int], *, computing: bool = False) -> str:
        name = self.model.policy_names[key[0]]
        head = f"{name} at τ = {key[1]:.4f}"
        if computing:
            spec = self.spec()
            return (f"{head}: computing {spec.days} replayed production days and the widths at "
                    f"{len(spec.audit_rates)} audit rates…")
        entry = self.results[key]
        if entry.methods is None:
            return f"{head}: {entry.note}"
        spec = self.spec()
        audit = "audit plan" if entry.audit_rate is None else f"audit {entry.audit_rate:.4g}"
        naive = "-" if entry.naive_mean is None else f"{entry.naive_mean:.4f}"
        warnings = [f"\n⚠ {method} is unreliable here: {figures.reason}"
                    for method, figures in entry.methods.items() if not figures.reliable]
        proposed = entry.proposed_method()
        if warnings:
            warnings.append(f" · estimate with {proposed}" if proposed else " · no method is reliable: audit more")
        if (narrowing := entry.narrowing()) is not None:  # the report's words: an interval far too wide to act on
            warnings.append(f"\n⚠ {proposed}'s interval is {narrowing[0]} ({narrowing[1]})")
        return (f"{head} · {entry.auto_accepted:,} auto-accepted · {audit} ({entry.expected_audits:,.1f} a "
                f"day) · true error {entry.true_auto_error:.4f} · naive {naive} · {spec.days} days, "
                f"{spec.confidence_level:.0%}{''.join(warnings)}\n{ASSUMPTION}")

    def show(self, key: tuple[int, float, int]) -> None:
        self.shown_key = key
        entry = self.results[key]
        self.show_note(self.status_text(key))
        table = self.query_one(TextTable)
        plots, legend = self.query_one("#monitoring-plots"), self.query_one("#monitoring-legend", Legend)
        methods = entry.methods
        table.display = plots.display = legend.display = methods is not None
        if methods is None:
            return
        legend.show_entries([(COVERED, "interval holds the truth"), (MISSED, "misses it"),
                             (TRUTH, "true error rate"),
                             *((METHOD_MARKERS[name], f"{name} width") for name in methods)])
        table.show(f"{'method':<12}{'coverage':>10}{'±':>7}{'mean width':>12}{'bias':>9}{'quality cov.':>14}",
                   [f"{name:<12}{row.coverage:>10.3f}{row.coverage_error:>7.3f}{row.mean_width:>12.4f}"
                    f"{row.bias:>+9.4f}{row.quality_coverage:>14.3f}"
                    + ("" if row.reliable else "  ⚠ unreliable") for name, row in methods.items()])
        self.draw_intervals(entry)
        self.draw_widths(entry)

    def method(self, methods: Mapping[str, MethodCoverage]) -> str:
        names = list(methods)
        return names[self.method_index % len(names)]

    def draw_intervals(self, entry: MonitoredPolicy) -> None:
        methods, truth, days = entry.methods, entry.true_auto_error, entry.first_days
        if methods is None or truth is None or days is None:  # nothing monitored: the plots are hidden
            return
        method = self.shown_method = self.method(methods)
        plot = self.query_one("#monitoring-intervals", PlotextPlot)
        plt = plot.plt
        plt.clear_figure()
        low, high = days.low[method], days.high[method]
        estimate = [math.nan if v is None else v for v in days.estimate[method]]
        missed = 0
        for day, (bottom, top, point) in enumerate(zip(low, high, estimate), start=1):
            if bottom is None or top is None:  # no interval that day: nothing to draw
                continue
            shown = COVERED if bottom <= truth <= top else MISSED
            missed += shown is MISSED
            plt.plot([day, day], [bottom, top], color=shown.color, marker=shown.symbol)
            if not math.isnan(point):
                plt.scatter([day], [point], color=shown.color, marker="●")
        plt.hline(truth, TRUTH.color)
        ticks: list[float] = [1, *range(5, len(low) + 1, 5)]
        plt.xticks(ticks)
        plt.title(f"{method}: {len(low)} days, {missed} miss the truth")
        plt.xlabel("replayed day")
        plot.refresh()

    def draw_widths(self, entry: MonitoredPolicy) -> None:
        plot = self.query_one("#monitoring-widths", PlotextPlot)
        plt = plot.plt
        plt.clear_figure()
        widths = entry.widths
        if widths is None:
            plt.title("no audit rates to compare")
            plot.refresh()
            return
        positions: list[float] = list(range(len(widths.audit_rates)))
        for method, values in widths.mean_width.items():
            marker = METHOD_MARKERS[method]
            plt.plot(positions, list(values), color=marker.color, marker="braille")
            plt.scatter(positions, list(values), color=marker.color, marker=marker.symbol)
        plt.xticks(positions, [f"{rate:.0%}" if rate >= 0.01 else f"{rate:.1%}" for rate in widths.audit_rates])
        plt.title(f"width vs audit rate ({self.spec().width_days} days each)")
        plt.xlabel("audit rate")
        plot.refresh()

    def action_next_method(self) -> None:
        self.method_index += 1
        if self.shown_key is not None and self.shown_key in self.results:
            entry = self.results[self.shown_key]
            if entry.methods is not None:
                self.draw_intervals(entry)

    # -- export ---------------------------------------------------------------------------------------

    def rows(self) -> list[dict[str, Any]]:
        """Per method of the shown policy and τ: coverage, its Monte Carlo error, mean width, biases."""
        key = self.shown_key
        entry = None if key is None else self.results.get(key)
        if entry is None or entry.methods is None:
            return []
        return [{"policy": entry.policy, "threshold": entry.threshold, "method": method,
                 "true_auto_error": entry.true_auto_error, **asdict(figures), "naive_bias": entry.naive_bias}
                for method, figures in entry.methods.items()]

    def export_name(self) -> str:
        return export_stem(self.stem, policy=self.model.policy_names[self.state.policy],
                           threshold=self.state.threshold)
