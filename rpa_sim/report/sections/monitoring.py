"""The report's Monitoring section: what audits tell about the auto-accepted error rate, and how surely.

Drawn from the summary's monitoring (``StudySummary.monitoring``, made by :mod:`rpa_sim.operate.monitoring.summary`):
the intervals of the first replayed days against the true error rate, per policy and method, and the mean
interval width against the audit rate (:mod:`rpa_sim.report.displays.monitoring`); the coverage table; and,
once, what the figures assume about audits and reviewers. :func:`rpa_sim.report.page.render_report` adds it
only when the summary has monitoring, so other reports keep their bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from rpa_sim.common.formatting import count, number, setting_share, signed
from rpa_sim.operate.monitoring.summary import SHORTFALL_ERRORS
from rpa_sim.report.html import escape, table
from rpa_sim.report.svg import figure_html

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from rpa_sim.study.decision import Decision
    from rpa_sim.study.result import MethodCoverage, MonitoredPolicy, Monitoring

__all__ = ["monitoring_section"]

_METHOD_NAMES = {"classical": "classical (exact, one rate)", "stratified": "stratified (exact, Bonferroni)",
                 "ppi": "PPI++ (confidences as proxy)"}


def monitoring_section(monitoring: Monitoring, figures: dict[str, Figure], *,
                       decision: Decision | None = None) -> list[str]:
    """The section's HTML parts: the explanation, whether it replays the decision's τ, the assumptions, both
    plots and the coverage table."""
    level = setting_share(monitoring.confidence_level)
    parts = [
        '<h2 id="monitoring">Monitoring in production</h2>', *_other_threshold(monitoring, decision),
        '<p class="explain">Once a policy is live, nobody sees the errors in what goes straight through. The '
        "items people review are the ones the model doubted, so their error share (the <em>naive</em> figure) "
        "overstates the error rate of the auto-accepted items. A random audit of auto-accepted items, with "
        "estimators that weigh each audit by its probability, gives an honest figure with an interval. Here "
        f"{monitoring.days:,} production days are replayed per policy at one threshold: each day draws the "
        f"audits and the reviewer's mistakes again (seed {monitoring.seed} and on), and each method estimates "
        f"the day's auto-accepted error rate with a {level} interval. The true rate is known, so the share of days "
        "whose interval holds it (the actual coverage) can be compared with the promise.</p>",
        f'<p class="explain" id="monitoring-assumptions"><strong>Assumptions.</strong> '
        f"{escape(monitoring.assumptions)}</p>",
    ]
    if "monitoring-intervals" in figures:
        shown = monitoring.days_shown
        parts.append(figure_html(
            figures["monitoring-intervals"], "monitoring-intervals",
            f"The {level} intervals of the first {shown} days, per policy (rows) and method (columns), with the "
            "estimate as a dot; the black line is the true auto-accepted error rate. Intervals that miss it are "
            "in vermilion."))
    if "monitoring-widths" in figures:
        parts.append(figure_html(
            figures["monitoring-widths"], "monitoring-widths",
            f"Mean interval width against a uniform audit rate, per method and policy, over "
            f"{monitoring.width_days} days a rate: a width shrinks about as one over the square root of the "
            "audits."))
    header = ["policy", "τ", "auto-accepted", "audits a day", "true error rate", "method", "coverage",
              "± (Monte Carlo)", "mean width", "bias", "quality coverage", "naive bias", "reliable"]
    rows: list[list[str]] = []
    notes, unreliable, proposals = [], [], []
    marks: dict[tuple[int, int], str] = {}
    for entry in monitoring.policies:
        if entry.note is not None:
            notes.append(f"<li><strong>{escape(entry.policy)}</strong> {escape(entry.note)}.</li>")
            continue
        methods: Mapping[str, MethodCoverage] = entry.methods or {}  # a policy without a note has its methods
        for method, figures_of in methods.items():
            if not figures_of.reliable:
                marks[(len(rows), len(header) - 1)] = "loss"
                unreliable.append(f"<li><strong>{escape(entry.policy)}</strong>, <code>{escape(method)}</code>: "
                                  f"{escape(figures_of.reason)}.</li>")
            rows.append([entry.policy, number(entry.threshold), count(entry.auto_accepted),
                         number(entry.expected_audits, 1), number(entry.true_auto_error), method,
                         number(figures_of.coverage, 3), number(figures_of.coverage_error, 3),
                         number(figures_of.mean_width), signed(figures_of.bias),
                         number(figures_of.quality_coverage, 3), signed(entry.naive_bias),
                         "yes" if figures_of.reliable else "no"])
        proposals.append(_proposal(entry))
    if rows:
        parts += [
            f'<p class="explain">Per policy and method: the threshold ({escape(_sources(monitoring))}), the '
            f"items auto-accepted and audited a day, the true error rate among them; the share of days whose "
            f"interval holds it (nominal {level}, with its Monte Carlo standard error), the intervals' mean width, "
            "the estimates' mean less the truth (bias), the share of days whose post-correction quality interval "
            "holds the true quality (reviewed items counted right, so reviewer mistakes show here), and the naive "
            "figure's mean less the truth. Methods: "
            + "; ".join(f"<code>{escape(name)}</code>: {escape(text)}" for name, text in _METHOD_NAMES.items())
            + f". A method is reliable unless its coverage falls short of {level} by more than "
            f"{SHORTFALL_ERRORS:g} Monte Carlo standard errors, or its interval has zero width on most days "
            "(docs/monitoring.md).</p>",
            table(header, rows, table_id="monitoring-coverage", marks=marks),
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
    method = entry.proposed_method()
    policy = f"<strong>{escape(entry.policy)}</strong>"
    if method is None:
        return f"{policy}: no method is reliable at this audit rate; audit more"
    methods: Mapping[str, MethodCoverage] = entry.methods or {}  # the method proposed is one of them
    width = methods[method].mean_width
    proposal = (f"{policy} with <code>{escape(method)}</code> (the narrowest reliable interval, mean width "
                f"{number(width)})")
    narrowing = entry.narrowing()
    if narrowing is None:
        return proposal
    words, command = narrowing
    return f"{proposal}, {escape(words)} (<code>{escape(command)}</code>)"


def _other_threshold(monitoring: Monitoring, decision: Decision | None) -> list[str]:
    """A warning when no policy is replayed at the decision's τ: the section's figures are for another one."""
    if decision is None or decision.policy is None or decision.threshold is None or any(
            entry.policy == decision.policy and entry.threshold == decision.threshold
            for entry in monitoring.policies):
        return []
    replayed = "; ".join(f"{entry.policy} at τ = {number(entry.threshold)}" for entry in monitoring.policies
                         if entry.threshold is not None)
    return [f'<p class="warning" id="monitoring-threshold">This section replays {escape(replayed or "no threshold")}, '
            f"not the decision's {escape(decision.policy)} at τ = {number(decision.threshold)}: its figures are for "
            "that threshold, not the one decided.</p>"]


def _sources(monitoring: Monitoring) -> str:
    """Where the thresholds came from, in words (``threshold_from``: ``given``, ``cost optimum``, ``target 0.95``)."""
    words = {"given": "set in the scenario", "cost optimum": "each policy's cost optimum"}
    return "; ".join(dict.fromkeys(words.get(entry.threshold_from, f"each policy's operating point for the "
                                                                   f"{entry.threshold_from}")
                                   for entry in monitoring.policies))
