"""The report's Monitoring section: what audits tell about the auto-accepted error rate, and how surely.

Drawn from the summary's monitoring (``StudySummary.monitoring``, made by :mod:`rpa_sim.operate.monitoring.summary`)
with the report's own style (:mod:`rpa_sim.report.page`): the intervals of the first
replayed days against the true error rate, per policy and method; the mean
interval width against the audit rate; the coverage table; and, once, what the
figures assume about audits and reviewers. :func:`rpa_sim.report.page.render_report`
adds it only when the summary has monitoring, so other reports keep their bytes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from rpa_sim.common.formatting import count
from rpa_sim.operate.monitoring.summary import SHORTFALL_ERRORS, proposed_method
from rpa_sim.report.page import _PALETTE, _esc, _figure_html, _label, _percent_setting, _signed, _style, _table, num
from rpa_sim.study.result import encoded

if TYPE_CHECKING:
    from rpa_sim.study.result import MonitoredPolicy, Monitoring, PolicyResult

__all__ = ["MONITORING_PLOTS", "monitoring_figures", "monitoring_section"]

#: The section's plots, in order: their ids and PNG file stems.
MONITORING_PLOTS = ("monitoring-intervals", "monitoring-widths")
_METHOD_NAMES = {"classical": "classical (exact, one rate)", "stratified": "stratified (exact, Bonferroni)",
                 "ppi": "PPI++ (confidences as proxy)"}
_COVERED, _MISSED = _PALETTE[0], _PALETTE[3]


def _monitored(monitoring: Monitoring, policies: tuple[PolicyResult, ...]) -> list[tuple[int, MonitoredPolicy]]:
    """The policies with figures, each with its place in the scenario (which gives its style)."""
    places = {policy.policy: index for index, policy in enumerate(policies)}
    return [(places[entry.policy], entry) for entry in monitoring.policies if entry.note is None]


def monitoring_figures(monitoring: Monitoring, policies: tuple[PolicyResult, ...]) -> dict[str, Figure]:
    """The section's plots by name (:data:`MONITORING_PLOTS`); none when no policy could be monitored.
    ``policies`` are the study's (``StudySummary.policies``): a policy is drawn in its style there."""
    monitored = _monitored(monitoring, policies)
    if not monitored:
        return {}
    figures = {"monitoring-intervals": _intervals_figure(monitoring, monitored)}
    if any(entry.widths is not None for _, entry in monitored):
        figures["monitoring-widths"] = _widths_figure(monitored)
    return figures


def _intervals_figure(monitoring: Monitoring, monitored: list[tuple[int, MonitoredPolicy]]) -> Figure:
    methods = list(dict.fromkeys(method for _, entry in monitored for method in entry.methods))
    level = monitoring.confidence_level
    figure = Figure(figsize=(7.5, 1.0 + 2.1 * len(monitored)), layout="constrained")
    grid = figure.subplots(len(monitored), len(methods), squeeze=False, sharex=True)
    for row, (_, entry) in enumerate(monitored):
        days = entry.first_days
        truth = entry.true_auto_error
        for column, method in enumerate(methods):
            axes = grid[row, column]
            _label(axes, f"{entry.policy}: {method}",
                   "replayed day" if row == len(monitored) - 1 else "",
                   "auto-accepted error" if column == 0 else "")
            axes.title.set_fontsize(9)
            if method not in entry.methods:
                axes.set_axis_off()
                continue
            low, high = np.array(days.low[method]), np.array(days.high[method])
            estimate = np.array([np.nan if v is None else v for v in days.estimate[method]])
            covered = (low <= truth) & (truth <= high)
            day = np.arange(1, len(low) + 1)
            for mask, color in ((covered, _COVERED), (~covered, _MISSED)):
                axes.vlines(day[mask], low[mask], high[mask], color=color, linewidth=1.6)
                axes.plot(day[mask], estimate[mask], "o", color=color, markersize=2.5)
            axes.axhline(truth, color="black", linewidth=1)
    figure.legend(handles=[Line2D([], [], color=_COVERED, marker="o", markersize=4, label="interval holds the truth"),
                           Line2D([], [], color=_MISSED, marker="o", markersize=4, label="interval misses it"),
                           Line2D([], [], color="black", label="true auto-accepted error rate")],
                  loc="outside lower center", ncols=2, fontsize=8, frameon=False)
    figure.suptitle(f"{_percent_setting(level)} intervals of the first replayed days against the truth", fontsize=11)
    return figure


def _widths_figure(monitored: list[tuple[int, MonitoredPolicy]]) -> Figure:
    methods = list(dict.fromkeys(method for _, entry in monitored for method in entry.methods))
    figure = Figure(figsize=(7.5, 3.8), layout="constrained")
    panels = figure.subplots(1, len(methods), squeeze=False, sharey=True)[0]
    handles = []
    for axes, method in zip(panels, methods):
        _label(axes, method, "audit rate of auto-accepted items", "mean interval width" if axes is panels[0] else "")
        axes.title.set_fontsize(10)
        axes.set_xscale("log")
        rates = sorted({rate for _, entry in monitored if entry.widths is not None
                        for rate in entry.widths.audit_rates})
        axes.set_xticks(rates, [_percent_setting(rate) for rate in rates], minor=False)
        axes.set_xticks([], minor=True)
        for place, entry in monitored:
            widths = entry.widths
            if widths is None or method not in widths.mean_width:
                continue
            line, = axes.plot(widths.audit_rates, widths.mean_width[method], markersize=4, label=entry.policy,
                              **_style(place))
            if axes is panels[0]:
                handles.append(line)
    figure.legend(handles=handles, loc="outside lower center", ncols=min(len(handles), 2), fontsize=8,
                  frameon=False)
    return figure


def monitoring_section(monitoring: Monitoring, figures: dict[str, Figure]) -> list[str]:
    """The section's HTML parts: the explanation, the assumptions, both plots and the coverage table."""
    level = _percent_setting(monitoring.confidence_level)
    parts = [
        '<h2 id="monitoring">Monitoring in production</h2>',
        '<p class="explain">Once a policy is live, nobody sees the errors in what goes straight through. The '
        "items people review are the ones the model doubted, so their error share (the <em>naive</em> figure) "
        "overstates the error rate of the auto-accepted items. A random audit of auto-accepted items, with "
        "estimators that weigh each audit by its probability, gives an honest figure with an interval. Here "
        f"{monitoring.days:,} production days are replayed per policy at one threshold: each day draws the "
        f"audits and the reviewer's mistakes again (seed {monitoring.seed} and on), and each method estimates "
        f"the day's auto-accepted error rate with a {level} interval. The true rate is known, so the share of days "
        "whose interval holds it (the actual coverage) can be compared with the promise.</p>",
        f'<p class="explain" id="monitoring-assumptions"><strong>Assumptions.</strong> '
        f"{_esc(monitoring.assumptions)}</p>",
    ]
    if "monitoring-intervals" in figures:
        shown = monitoring.days_shown
        parts.append(_figure_html(
            figures["monitoring-intervals"], "monitoring-intervals",
            f"The {level} intervals of the first {shown} days, per policy (rows) and method (columns), with the "
            "estimate as a dot; the black line is the true auto-accepted error rate. Intervals that miss it are "
            "in vermilion."))
    if "monitoring-widths" in figures:
        parts.append(_figure_html(
            figures["monitoring-widths"], "monitoring-widths",
            f"Mean interval width against a uniform audit rate, per method and policy, over "
            f"{monitoring.width_days} days a rate: a width shrinks about as one over the square root of the "
            "audits."))
    header = ["policy", "τ", "auto-accepted", "audits a day", "true error rate", "method", "coverage",
              "± (Monte Carlo)", "mean width", "bias", "quality coverage", "naive bias", "reliable"]
    rows, notes, unreliable, proposals = [], [], [], []
    marks: dict[tuple[int, int], str] = {}
    for entry in monitoring.policies:
        if entry.note is not None:
            notes.append(f"<li><strong>{_esc(entry.policy)}</strong> {_esc(entry.note)}.</li>")
            continue
        for method, figures_of in entry.methods.items():
            if not figures_of.reliable:
                marks[(len(rows), len(header) - 1)] = "loss"
                unreliable.append(f"<li><strong>{_esc(entry.policy)}</strong>, <code>{_esc(method)}</code>: "
                                  f"{_esc(figures_of.reason)}.</li>")
            rows.append([entry.policy, num(entry.threshold), count(entry.auto_accepted),
                         num(entry.expected_audits, 1), num(entry.true_auto_error), method,
                         num(figures_of.coverage, 3), num(figures_of.coverage_error, 3),
                         num(figures_of.mean_width), _signed(figures_of.bias),
                         num(figures_of.quality_coverage, 3), _signed(entry.naive_bias),
                         "yes" if figures_of.reliable else "no"])
        proposals.append(_proposal(entry))
    if rows:
        parts += [
            f'<p class="explain">Per policy and method: the threshold ({_esc(_sources(monitoring))}), the '
            f"items auto-accepted and audited a day, the true error rate among them; the share of days whose "
            f"interval holds it (nominal {level}, with its Monte Carlo standard error), the intervals' mean width, "
            "the estimates' mean less the truth (bias), the share of days whose post-correction quality interval "
            "holds the true quality (reviewed items counted right, so reviewer mistakes show here), and the naive "
            "figure's mean less the truth. Methods: "
            + "; ".join(f"<code>{_esc(name)}</code>: {_esc(text)}" for name, text in _METHOD_NAMES.items())
            + f". A method is reliable unless its coverage falls short of {level} by more than "
            f"{SHORTFALL_ERRORS:g} Monte Carlo standard errors, or its interval has zero width on most days "
            "(docs/monitoring.md).</p>",
            _table(header, rows, table_id="monitoring-coverage", marks=marks),
        ]
        if unreliable:
            parts += ['<p class="explain">Unreliable here, whatever their width: never estimate with them.</p>',
                      '<ul id="monitoring-unreliable">' + "".join(unreliable) + "</ul>"]
        parts.append('<p class="explain" id="monitoring-proposal">To estimate the auto-accepted error rate in '
                     "production: " + "; ".join(proposals) + ".</p>")
    if notes:
        parts += ['<p class="explain">Not monitored:</p>', '<ul id="monitoring-notes">' + "".join(notes) + "</ul>"]
    return parts


def _proposal(entry: MonitoredPolicy) -> str:
    """The method proposed for a monitored policy, in words: the narrowest reliable one, never an unreliable one."""
    # proposed_method reads the entry as summary.json holds it (the dashboard calls it so on its own entries)
    method = proposed_method(encoded(entry))
    policy = f"<strong>{_esc(entry.policy)}</strong>"
    if method is None:
        return f"{policy}: no method is reliable at this audit rate; audit more"
    width = num(entry.methods[method].mean_width)
    return f"{policy} with <code>{_esc(method)}</code> (the narrowest reliable interval, mean width {width})"


def _sources(monitoring: Monitoring) -> str:
    """Where the thresholds came from, in words (``threshold_from``: ``given``, ``cost optimum``, ``target 0.95``)."""
    words = {"given": "set in the scenario", "cost optimum": "each policy's cost optimum"}
    return "; ".join(dict.fromkeys(words.get(entry.threshold_from, f"each policy's operating point for the "
                                                                   f"{entry.threshold_from}")
                                   for entry in monitoring.policies))
