"""A presentable report of a scenario run: one self-contained HTML file.

The report is written for someone who never ran rpa-sim: it opens with the
decision (:mod:`rpa_sim.report.decision`, at most 250 words and one figure),
every other section follows as a closed ``<details>`` element that starts with
a short plain-language explanation, and it ends with where its figures come from
(version, scenario, data hash, the command that reproduces it). Every number in
it comes from the run's typed summary (``ScenarioResult.typed_summary``, the
figures of ``summary.json``), formatted by :mod:`rpa_sim.common.formatting`: counts
whole and thousands separated, money with two decimals and the scenario's
currency, measured figures with four decimals. The plots are drawn by
matplotlib and embedded as inline SVG, so the file needs nothing beside it; the
same run always gives the same bytes (no date, fixed SVG ids, no matplotlib
version in the file).
"""

from __future__ import annotations

import hashlib
import html
import io
import json
import re
import shlex
import textwrap
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle
from matplotlib.text import Text

from rpa_sim import __version__
from rpa_sim.bundled import is_path
from rpa_sim.common.files import atomic_write_files, check_output, check_output_folder
from rpa_sim.common.formatting import count, money, number, setting_share, share, signed
from rpa_sim.evaluate.outcomes import OutcomeTable, table_type
from rpa_sim.route.compare import edge_of_range_text
from rpa_sim.study.recommend import TOLERANCE, recommend, spans_all_auto_rates
from rpa_sim.study.result import Certification, NotCertifiable, VqaData, encoded
from rpa_sim.study.scenario import bundled_scenarios

if TYPE_CHECKING:
    from rpa_sim.route.policies import Policy
    from rpa_sim.route.reviewer import Reviewer
    from rpa_sim.study.recommend import Recommendation, Risk, Versus
    from rpa_sim.study.result import Calibration, PolicyResult, Reliability, StudySummary
    from rpa_sim.study.run import ScenarioResult

__all__ = ["write_report", "render_report", "PLOT_NAMES"]

#: Every plot a report can hold, in the order of the report: its id and PNG file stem.
PLOT_NAMES = ("decision", "tradeoff", "cost", "calibration", "smudge-alpha", "monitoring-intervals", "monitoring-widths",
              "operations-reviewers", "operations-staffing", "operations-backlog")

_STYLE = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:66rem;margin:2rem auto;padding:0 1rem;
color:#222;line-height:1.5;overflow-wrap:break-word}
h1{margin-bottom:.2rem}h2{margin-top:2.2rem;border-bottom:1px solid #ccc}
p.explain{color:#444}p.note{color:#444;font-size:.9rem;margin-top:0}
section.decision{border:2px solid #0072b2;border-radius:.4rem;padding:.2rem 1rem .6rem;background:#f5f9fc}
section.decision h2{margin-top:.8rem}p.lead{font-size:1.1rem}
details{border-bottom:1px solid #ccc}details>summary{cursor:pointer;padding:.1rem 0}
details>summary h2{display:inline;border:0;margin:0;font-size:1.25rem}details[open]>summary{margin-bottom:.6rem}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:separate;border-spacing:0;margin:.8rem 0;font-size:.9rem}
th,td{border:solid #ccc;border-width:0 1px 1px 0;padding:.25rem .5rem;vertical-align:top;background:#fff}
tr>:first-child{border-left-width:1px}thead tr>*,table:not(:has(thead)) tr:first-child>*{border-top-width:1px}
.scroll tr>:first-child{position:sticky;left:0;z-index:1;box-shadow:2px 0 2px -1px rgba(0,0,0,.15)}
th{background:#f3f3f3;text-align:left}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.best{font-weight:700;background:#fff1c2}td.best::after{content:"\\00a0\\2605"}
td.loss{color:#a4161a;font-weight:700}td.loss::after{content:"\\00a0\\25bc"}
td.met{color:#006442;font-weight:700;white-space:nowrap}td.nowrap{white-space:nowrap}td.unmet{color:#a4161a;font-weight:700;white-space:nowrap}
dl.legend{font-size:.9rem;color:#444}dl.legend dt{font-weight:600;margin-top:.3rem}dl.legend dd{margin-left:1.2rem}
code{overflow-wrap:anywhere}
figure{margin:1rem 0}figure svg{display:block;width:100%;max-width:36rem;height:auto}
figcaption{color:#555;font-size:.9rem}
@media (max-width:32rem){body{padding:0 .6rem}section.decision{padding:.2rem .6rem .5rem}
table{font-size:.8rem}th,td{padding:.2rem .3rem}.scroll tr>:first-child{max-width:40vw}}
"""
_NUMBER = re.compile(r"[-+]?(\d{1,3}(,\d{3})+|\d+)(\.\d+)?%?|-")
_SVG_PROLOGUE = re.compile(r"\A.*?(?=<svg\b)", re.DOTALL)
# Namespace declarations are URIs, not resources, but the HTML parser does not need them for inline SVG
# (it puts xlink:href in its namespace by itself), and without them the file holds no "http" at all.
_SVG_NAMESPACES = re.compile(r'\s+xmlns(?::xlink)?="[^"]*"')

# The names the sections (and report_monitoring, report_operations) format figures with: rpa_sim.common.formatting's.
num, amount, _share, _signed, _percent_setting = number, money, share, signed, setting_share


def write_report(result: ScenarioResult, out: Path, *, png_dir: Path | None = None,
                 scenario_source: str | None = None) -> Path:
    """Write the HTML report of a scenario run, and optionally each plot as a PNG, all or none.

    Everything is drawn and encoded first, then written: a failure or an
    interrupt while drawing leaves no file behind, and the files are written
    together (:func:`rpa_sim.common.files.atomic_write_files`): a failure while
    writing any of them leaves every one as it was.

    Parameters
    ----------
    result : ScenarioResult
        What :func:`~rpa_sim.study.run.run_scenario` returned.
    out : Path
        The HTML file to write; its folder is created if needed. Its name is
        not part of the report, so the report is the same wherever it goes.
    png_dir : Path, optional
        When given, each plot is also written there as ``<plot>.png``
        (see :data:`PLOT_NAMES`); the folder is created if needed.
    scenario_source : str, optional
        The scenario as it was named on the command line (a bundled name or a
        path), for the provenance and the command that reproduces the report.
        Without it a bundled scenario is recognised by its name and folder; any
        other is reported as not recorded.

    Returns
    -------
    Path
        ``out``.

    Raises
    ------
    InputError
        When ``out`` is a folder or ``png_dir`` a file (checked before drawing).
    """
    out = check_output(out)
    png_dir = None if png_dir is None else check_output_folder(png_dir)
    figures = _figures(result)
    html_text = render_report(result, figures=figures, scenario_source=scenario_source)
    pngs = {}
    if png_dir is not None:
        for name, figure in figures.items():
            image = io.BytesIO()
            # "Software" would write the matplotlib version into every PNG
            figure.savefig(image, format="png", dpi=150, metadata={"Software": None})
            pngs[png_dir / f"{name}.png"] = image.getvalue()
    atomic_write_files({out: html_text.encode("utf-8"), **pngs})
    return out


def render_report(result: ScenarioResult, *, figures: dict[str, Figure] | None = None,
                  scenario_source: str | None = None) -> str:
    """The HTML text of the report (see :func:`write_report`).

    Parameters
    ----------
    result : ScenarioResult
        The scenario run.
    figures : dict of str to Figure, optional
        The plots by name, when already drawn; drawn here otherwise.
    scenario_source : str, optional
        The scenario as named on the command line (see :func:`write_report`).

    Returns
    -------
    str
        A complete HTML document.
    """
    figures = _figures(result) if figures is None else figures
    summary = result.typed_summary
    metric = result.table.metric_label
    title = f"rpa-sim report: {summary.scenario}"
    parts = [
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_esc(title)}</title>", f"<style>{_STYLE}</style>", "</head>", "<body>",
        f"<h1>{_esc(title)}</h1>",
    ]
    if summary.description:
        parts.append(f'<p class="description">{_esc(summary.description)}</p>')
    from rpa_sim.report.decision import decision_section  # noqa: PLC0415

    parts += decision_section(result, figures)
    parts.append('<p class="details-intro" id="details">Details: open a heading for its figures and '
                 "tables.</p>")
    details = []
    if _recommendation_is_the_decision(summary):
        details.append(_summary_section(result, metric))
    details += [_settings_section(summary, metric, result.table.task_description),
                _tradeoff_section(result, metric, figures),
                _comparison_section(summary, metric),
                _cost_section(summary, figures),
                _calibration_section(summary.calibration, summary.data.predictions, figures)]
    if "smudge-alpha" in figures:
        details.append(_smudge_section(figures))
    details.append(_optimized_section(summary, metric))
    if summary.monitoring is not None:  # only with the scenario's monitoring section
        from rpa_sim.report.monitoring import monitoring_section  # noqa: PLC0415

        details.append(monitoring_section(summary.monitoring, figures))
    if summary.operations is not None:  # only with the scenario's operations section
        from rpa_sim.report.operations import operations_section  # noqa: PLC0415

        details.append(operations_section(summary, figures))
    details.append(_provenance_section(result, scenario_source))
    for section in details:
        parts += _collapsible(section)
    parts += ["</body>", "</html>", ""]
    return "\n".join(parts)


def _collapsible(section: list[str]) -> list[str]:
    """A section (its ``<h2>`` first) as a ``<details>`` element, closed, its heading the part always shown."""
    heading, *body = section
    return ["<details>", f"<summary>{heading}</summary>", *body, "</details>"]


def _recommendation_is_the_decision(summary: StudySummary) -> bool:
    """Whether the recommendation names the decision's policy and τ (always so without a decision, which is then
    the recommendation): a detail naming another point would contradict the opening."""
    decision = summary.decision
    if decision is None:
        return True
    found = recommend(summary)
    return (found.policy, found.threshold) == (decision.policy, decision.threshold)


# ---------------------------------------------------------------- sections


def _summary_section(result: ScenarioResult, metric: str) -> list[str]:
    """The recommendation in detail: what it buys against the two extremes, the certified option, the risk."""
    summary = result.typed_summary
    found = recommend(summary)
    parts = ['<h2 id="summary">Against reviewing everything or nothing</h2>']
    if found.basis is None:
        parts.append(f'<p class="lead" id="recommendation-text">No recommendation: {_esc(found.reason)}.</p>')
        if found.certified is not None:
            parts.append(f"<ul><li>{_certified_text(found, metric, summary)}</li></ul>")
        return parts
    currency = _currency(summary)
    where = (f"We recommend <strong>{_esc(found.policy)}</strong> at threshold <strong>τ = {num(found.threshold)}"
             f"</strong> (on {_esc(found.knob)}), ")
    if found.basis == "cost":
        why = (f"the lowest total cost over every policy and threshold compared: {_esc(amount(found.cost, currency))} "
               f"{_esc(_basis_text(summary))}.")
    else:
        why = (f"the policy that leaves the most predictions unreviewed while the {_esc(metric)} after review "
               f"reaches the first target, {found.target:g}.")
    parts.append(f'<p class="lead" id="recommendation-text">{where}{why}</p>')
    parts.append(_recommendation_table(found, summary, metric))
    points = [_versus_text("reviewing everything", found.versus_review_all, found, metric, currency),
              _versus_text("reviewing nothing", found.versus_review_none, found, metric, currency)]
    if summary.targets:
        points.append(_targets_text(found, metric))
    why = _why_above_review_all(next(p for p in result.policies if p.name == found.policy), summary.reviewer)
    if found.beats_review_all and why and _shown_above(found.metric, found.versus_review_all.metric):
        points.append(f"It ends above reviewing everything because {why}.")
    if found.certified is not None:
        points.append(_certified_text(found, metric, summary))
    elif any(p.certified is not None for p in summary.policies):
        points.append("No threshold could be certified with the scenario's settings (see Certified thresholds).")
    risk = "" if found.risk is None else f'<li id="risk">{_risk_text(found.risk)}</li>'
    parts.append("<ul>" + "".join(f"<li>{point}</li>" for point in points) + f"{risk}</ul>")
    return parts


def _recommendation_table(found: Recommendation, summary: StudySummary, metric: str) -> str:
    everything, nothing = found.versus_review_all, found.versus_review_none
    currency = _currency(summary)
    rows = [[f"{metric} after review", num(found.metric), num(everything.metric), num(nothing.metric)],
            ["auto-rate (share not reviewed)", num(found.auto_rate), num(everything.auto_rate), num(nothing.auto_rate)],
            ["items reviewed", num(found.reviewed, 0), num(everything.reviewed, 0), num(nothing.reviewed, 0)]]
    marks = {}
    if summary.costs is not None:
        rows.append([f"cost{_in(currency)}", money(found.cost), money(everything.cost), money(nothing.cost)])
        per_day = _per_day_factor(summary)
        if per_day is not None:
            unit, _, volume = _cost_basis(summary)
            rows.append([f"cost per day{_in(currency)}, {volume:,.0f} {unit} a day",
                         *(money(None if cost is None else cost * per_day)
                           for cost in (found.cost, everything.cost, nothing.cost))])
        rows.append([f"saved by the recommendation{_in(currency)}", "-", money(everything.savings),
                     money(nothing.savings)])
        rows.append(["saved by the recommendation, %", "-", num(everything.savings_percent, 1),
                     num(nothing.savings_percent, 1)])
        for column, versus in ((2, everything), (3, nothing)):
            if versus.savings is not None and versus.savings < 0:
                marks[(len(rows) - 2, column)] = marks[(len(rows) - 1, column)] = "loss"
    return _table(["", "recommended", "review everything", "review nothing"], rows, table_id="recommendation",
                  marks=marks)


def _versus_text(name: str, versus: Versus, found: Recommendation, metric: str, currency: str | None) -> str:
    said = [f"{_esc(metric)} {_signed(versus.metric_gain)} ({num(found.metric)} against {num(versus.metric)})"]
    if versus.reviews_saved > 0:
        said.append(f"{versus.reviews_saved:,.0f} fewer reviews")
    elif versus.reviews_saved < 0:
        said.append(f"{-versus.reviews_saved:,.0f} more reviews")
    else:
        said.append("as many reviews")
    if versus.savings is not None:
        share = "" if versus.savings_percent is None else f" ({abs(versus.savings_percent):.1f}%)"
        said.append(f"{_esc(amount(versus.savings, currency))}{share} saved" if versus.savings >= 0
                    else f'<span class="loss">{_esc(amount(-versus.savings, currency))}{share} more spent</span>')
    return f"Against {name}: " + ", ".join(said) + "."


def _targets_text(found: Recommendation, metric: str) -> str:
    reached = " and ".join(f"{t:g}" for t in found.reached)
    missed = " and ".join(f"{t:g}" for t in found.missed)
    if not found.missed:
        return f"It reaches every target ({reached})."
    short = f"misses {missed} ({_esc(metric)} {num(found.metric)})"
    return f"It reaches {reached} but {short}." if found.reached else f"It {short}."


def _why_above_review_all(policy: Policy, reviewer: Reviewer) -> str:
    """Why a policy's quality can exceed reviewing every prediction: the two mechanisms the replay models
    (empty when neither applies, and then it cannot)."""
    reasons = []
    if policy.fix_additions:
        reasons.append("it reviews whole documents and adds the fields the model missed, which checking each "
                       "prediction cannot")
    broken = reviewer.false_correction_rate
    if broken > 0:
        reasons.append(f"it leaves confident predictions alone, which the reviewer would break at rate {num(broken)}")
    return ", and because ".join(reasons)


def _certified_text(found: Recommendation, metric: str, summary: StudySummary) -> str:
    certified = found.certified
    who = ("The same policy" if certified.policy == found.policy
           else f"Certified alternative: <strong>{_esc(certified.policy)}</strong>")
    cost = ("" if certified.cost is None
            else f", for {_esc(amount(certified.cost, _currency(summary)))} {_esc(_basis_text(summary))}")
    return (f"{who} at τ = {num(certified.threshold)} (on {_esc(certified.knob)}) comes with a guarantee: with "
            f"probability at least {_percent_setting(certified.confidence)}, at most "
            f"{_percent_setting(certified.max_error)} of the predictions it lets through are wrong. There it "
            f"leaves {_share(certified.auto_rate)} unreviewed at {_esc(metric)} {num(certified.metric)}{cost} "
            "(see Certified thresholds).")


def _risk_text(risk: Risk) -> str:
    """One sentence on the larger exposure (rule: :mod:`rpa_sim.study.recommend`)."""
    if risk.kind == "calibration":
        return (f"Main risk, calibration: the model's confidence is off by {num(risk.ece)} on average (ECE) and "
                f"{_share(risk.auto_rate)} of predictions go through on confidence alone, so if the confidences "
                "drift, more errors pass than these figures say: re-check calibration on fresh labelled data "
                f"(exposure {num(risk.calibration_exposure)} against {num(risk.reviewer_exposure)} for the "
                "reviewer).")
    return (f"Main risk, the reviewer: {_share(1.0 - risk.auto_rate)} of predictions are reviewed and every figure "
            f"assumes the reviewer misses {_share(risk.miss_rate)} of errors and breaks "
            f"{_share(risk.false_correction_rate)} of right values, so measure these rates on an audited sample "
            f"before relying on the figures (exposure {num(risk.reviewer_exposure)} against "
            f"{num(risk.calibration_exposure)} for calibration).")


def _settings_section(summary: StudySummary, metric: str, task: str) -> list[str]:
    data = summary.data
    rows = [(label, _data_value(getattr(data, name))) for name, label in table_type(summary.task).summary_labels]
    reviewer = summary.reviewer
    reviewer_rows = [
        ("misses an error with probability", num(reviewer.miss_rate)),
        ("breaks a right prediction with probability", num(reviewer.false_correction_rate)),
        ("seconds per reviewed item", num(reviewer.seconds_per_item, 1)),
        ("seconds per opened document", num(reviewer.seconds_per_document, 1)),
    ]
    parts = [
        "<h2>The study</h2>",
        '<p class="explain">A model reads documents and gives each prediction a confidence. A review policy '
        "decides, from a threshold τ, which predictions a person checks and which go through automatically. "
        f"Checking more raises the {_esc(metric)} of the output (its quality after correction) but costs "
        "review time. This report compares the policies over every threshold.</p>",
        "<h3>Data</h3>",
        f'<p class="explain">The predictions as the model made them, before any review ({_esc(task)}).</p>',
        _table(["figure", "value"], rows, table_id="data"),
        "<h3>Reviewer</h3>",
        '<p class="explain">The simulated person who checks routed predictions: not perfect, and not free.</p>',
        _table(["setting", "value"], reviewer_rows, table_id="reviewer"),
        "<h3>Costs</h3>",
    ]
    costs = summary.costs
    if costs is None:
        parts.append('<p class="explain">Costs were not set for this scenario: no money figures.</p>')
    else:
        cost_rows = [(label, money(amount)) for amount, label in (
            (costs.per_review, "per reviewed item"), (costs.per_document, "per opened document"),
            (costs.hourly_rate, "reviewer's hourly rate"), (costs.per_residual_error, "per error left in the output"))
            if amount is not None]
        currency = costs.currency
        unit, _, volume = _cost_basis(summary)
        per_day = "" if volume is None else f" and, where said, per day at {volume:,.0f} {unit} a day"
        parts += ['<p class="explain" id="cost-basis">What one review and one error left in the output cost, in '
                  + ("one currency (not named in the scenario)" if currency is None else _esc(currency))
                  + "; review prices not given are the reviewer's seconds at the hourly rate. Every total in this "
                  f"report is {_esc(_basis_text(summary))}{per_day}.</p>",
                  _table(["cost", f"amount{_in(currency)}"], cost_rows, table_id="costs")]
    targets = ", ".join(num(t) for t in summary.targets) or "none"
    parts += [
        "<h3>Thresholds and targets</h3>",
        f'<p class="explain">Thresholds swept: <code>{_esc(summary.thresholds)}</code> ("exact" means every '
        "threshold at which any decision changes). Targets, the output quality the business needs "
        f"({_esc(metric)} after review): {targets}.</p>",
    ]
    return parts


def _tradeoff_section(result: ScenarioResult, metric: str, figures: dict[str, Figure]) -> list[str]:
    summary = result.typed_summary
    if "tradeoff" not in figures:
        return ["<h2>Trade-off curves</h2>",
                '<p class="explain" id="no-predictions">The data holds no predictions, so no policy has anything '
                "to route: there is no auto-rate and no trade-off to draw. The figures below that do not depend "
                "on predictions (what is missing from the output, its cost) still hold.</p>"]
    parts = [
        "<h2>Trade-off curves</h2>",
        '<p class="explain">Each line is one policy as its threshold moves: to the right, more predictions go '
        f"through unchecked (auto-rate); upwards, the output is better ({_esc(metric)} after review). A policy "
        "whose line lies above another's is better at every level of automation. Policies differ by colour, line "
        "style and marker. Dashed grey lines are the targets; the filled markers are each policy's operating "
        "points, the most automation that still meets a target, labelled with their τ; the star is the "
        "recommendation; the black square and triangle are reviewing everything (auto-rate 0) and nothing "
        "(auto-rate 1). The lower panel zooms on the range where the operating points lie (the grey box of the "
        "upper panel).</p>",
        _figure_html(figures["tradeoff"], "tradeoff", "Auto-rate against quality after review, per policy; "
                                                      "below, the zoom on the operating points."),
    ]
    notes = [f"<li><strong>{_esc(p.policy)}</strong> is a partial curve: {_partial_text(p)}.</li>"
             for p in summary.policies if not spans_all_auto_rates(p.auto_rate_range)]
    everything = summary.baselines.review_all.metric
    for curve, policy in zip(result.curves, result.policies, strict=True):
        top, why = _top(curve.metric), _why_above_review_all(policy, summary.reviewer)
        if why and everything is not None and top is not None and _shown_above(top, everything):
            notes.append(f"<li><strong>{_esc(policy.name)}</strong> ends above reviewing everything ({num(top)} "
                         f"against {num(everything)}) because {why}.</li>")
    if notes:
        parts += ['<p class="explain">"Review everything" checks every prediction the model made, one by one, '
                  "with the scenario's reviewer. Read the curves with these notes:</p>",
                  '<ul id="curve-notes">' + "".join(notes) + "</ul>"]
    return parts


def _partial_text(policy: PolicyResult) -> str:
    low, high = policy.auto_rate_range
    if low is None:
        return "it has no defined auto-rate"
    limits = []
    if low > 0:
        limits.append(f"never reviews more than {_share(1.0 - low)} of the predictions")
    if high < 1:
        limits.append(f"always reviews at least {_share(1.0 - high)} of the predictions")
    return (f"it only operates between auto-rates {num(low)} and {num(high)}: it {' and '.join(limits)}. An area "
            "under its curve, counted as 0 where it cannot operate, would not compare with a full curve's, so the "
            'comparison shows "partial" instead of its AUC')


def _shown_above(value: float, other: float) -> bool:
    """Whether ``value`` is above ``other`` as the report prints them (a gap below the last decimal is not
    worth a note that would read "0.9593 against 0.9593")."""
    return value > other + TOLERANCE and num(value) != num(other)


def _top(values: np.ndarray) -> float | None:
    defined = values[~np.isnan(values)]
    return float(defined.max()) if len(defined) else None


def _comparison_section(summary: StudySummary, metric: str) -> list[str]:
    targets = [f"{t:g}" for t in summary.targets]
    has_costs = summary.costs is not None
    unit = _in(_currency(summary))
    header = ["policy", "AUC"]
    for target in targets:
        header += [f"auto-rate at {target}", f"τ at {target}"]
    rejecting = any(p.rejected is not None for p in summary.policies)  # a policy with a reject band
    if rejecting:
        header.append("rejected")
    if has_costs:
        header += [f"best cost{unit}", "τ at best cost", f"saves vs review-all{unit}", f"saves vs review-none{unit}"]
    header += ["certified τ", "dominated by"]
    rows, values = [], []  # values: the comparable figure behind each cell, None where there is none
    for policy in summary.policies:
        full = spans_all_auto_rates(policy.auto_rate_range)
        low, high = policy.auto_rate_range
        row = [policy.policy, num(policy.auc) if full or low is None else f"partial ({num(low)}–{num(high)})"]
        value = [None, policy.auc if full else None]
        for target in targets:
            point = policy.operating_points.get(target)
            row += [num(None if point is None else point.auto_rate), num(None if point is None else point.threshold)]
            value += [None if point is None else point.auto_rate, None]
        if rejecting:
            row.append(count(0 if policy.rejected is None else policy.rejected))
            value.append(None)
        if has_costs:
            best = policy.cost_optimum
            row += [money(best.cost), num(best.threshold), money(best.savings_vs_review_all),
                    money(best.savings_vs_review_none)]
            value += [best.cost, None, best.savings_vs_review_all, best.savings_vs_review_none]
        certified = policy.certified
        row += [num(None if certified is None else certified.threshold), ", ".join(policy.dominated_by) or "-"]
        rows.append(row)
        values.append([*value, None, None])
    marks = _best_marks(rows, values, lowest={header.index(f"best cost{unit}")} if has_costs else set())
    if has_costs:
        for column in (len(header) - 4, len(header) - 3):
            marks.update({(r, column): "loss" for r, value in enumerate(values)
                          if value[column] is not None and value[column] < 0})
    baselines = summary.baselines
    baseline_rows = [(label, num(baseline.metric), count(baseline.reviewed), money(baseline.cost))
                     for baseline, label in ((baselines.review_none, "review nothing"),
                                             (baselines.review_all, "review everything"))]
    parts = [
        "<h2>Comparison of the policies</h2>",
        '<p class="explain">Every policy at its best: per target, the most automation that still reaches it'
        + ("; the cheapest threshold and what it saves" if has_costs else "")
        + "; whether it has a certified threshold and whether another policy beats it everywhere. Each column is "
        "explained under the table.</p>",
        _table(header, rows, table_id="comparison", marks=marks),
        *_edge_notes(summary, "comparison-edge"),
        _comparison_legend(summary, metric, targets),
        "<h3>What each policy does</h3>",
        "<ul>" + "".join(f"<li><strong>{_esc(p.policy)}</strong>: {_esc(p.description)}</li>"
                         for p in summary.policies) + "</ul>",
        "<h3>The two extremes</h3>",
        '<p class="explain">Reviewing nothing and reviewing everything, for reference'
        + (f"; costs {_esc(_basis_text(summary))}" if has_costs else "") + ".</p>",
        _table(["baseline", f"{metric} after review", "items reviewed", f"cost{unit}"], baseline_rows,
               table_id="baselines"),
    ]
    if any(p.certified is not None for p in summary.policies):
        parts += _certification_part(summary, metric)
    return parts


def _best_marks(rows: list[list[str]], values: list[list[float | None]], *,
                lowest: set[int]) -> dict[tuple[int, int], str]:
    """The cells holding their column's best value (highest; lowest in ``lowest`` columns), ties included.

    A column is marked only when at least two policies have a comparable value in it.
    """
    marks = {}
    for column in range(len(values[0]) if values else 0):
        present = [(r, value[column]) for r, value in enumerate(values) if value[column] is not None]
        if len(present) < 2:
            continue
        best = (min if column in lowest else max)(value for _, value in present)
        shown = rows[next(r for r, value in present if value == best)][column]
        marks.update({(r, column): "best" for r, _ in present if rows[r][column] == shown})
    return marks


def _comparison_legend(summary: StudySummary, metric: str, targets: list[str]) -> str:
    entries = [
        ("AUC", "area under the trade-off curve over auto-rates 0 to 1 (higher is better). \"partial (a–b)\": the "
                "policy only operates between auto-rates a and b, and an area counting 0 elsewhere would not "
                "compare with a full curve's."),
    ]
    if targets:
        entries += [
            (f"auto-rate at {' / '.join(targets)}", f"the largest share of predictions left unreviewed while the "
             f"{metric} after review still reaches that target (\"-\": never reached)."),
            (f"τ at {' / '.join(targets)}", "the threshold giving that auto-rate, on the quantity the policy "
             "sweeps (confidence, or grounding)."),
        ]
    if any(p.rejected is not None for p in summary.policies):
        entries.append(("rejected", "the predictions the policy's reject band (reject_if) takes out of the automated "
                                    "flow, neither reviewed nor accepted; the same at every threshold."))
    if summary.costs is not None:
        entries += [
            ("best cost", f"the lowest total of review and error costs over the swept thresholds, "
                          f"{_basis_text(summary)}; \"τ at best cost\" is where it is reached."),
            ("saves vs review-all / review-none", "the cost of reviewing everything (nothing) minus the best "
             "cost: what the policy's cheapest threshold saves; negative (▼, in red): it costs more."),
        ]
    entries += [
        ("certified τ", "a threshold with a statistical guarantee on the error rate of what it lets through "
                        "(see Certified thresholds; \"-\": none)."),
        ("dominated by", "the policies at least as good at every auto-rate and better at some (\"-\": none, the "
                         "policy is on the Pareto front)."),
        ("★", "the best value of its column (highest AUC among full curves, highest auto-rate, lowest cost, "
              "largest saving)."),
    ]
    return ('<dl class="legend" id="comparison-legend">'
            + "".join(f"<dt>{_esc(term)}</dt><dd>{_esc(text)}</dd>" for term, text in entries) + "</dl>")


def _certification_part(summary: StudySummary, metric: str) -> list[str]:
    has_costs = summary.costs is not None
    header = ["policy", "certified τ", "accepted calibration items", "errors among them", "upper bound",
              "held-out auto-rate", "held-out error", "auto-rate at τ", f"{metric} at τ"]
    if has_costs:
        header.append(f"cost at τ{_in(_currency(summary))}")
    header.append("note")
    rows = []
    for policy in summary.policies:
        found = policy.certified
        if found is None:
            continue
        if isinstance(found, NotCertifiable):  # certify_policy refuses budgeted policies before testing anything
            rows.append([policy.policy, *(["-"] * (len(header) - 2)), "not certifiable: a review budget"])
            continue
        at = found.at_threshold
        row = [policy.policy, num(found.threshold), count(found.accepted_n), count(found.accepted_errors),
               num(found.upper_bound), num(found.holdout_auto_rate), num(found.holdout_error),
               num(None if at is None else at.auto_rate), num(None if at is None else at.metric)]
        if has_costs:
            row.append(money(None if at is None else at.cost))
        row.append("certified" if found.threshold is not None else "nothing passes the test")
        rows.append(row)
    # every policy is certified with the scenario's settings on the same split; a refused policy has neither
    tested = next((p.certified for p in summary.policies if isinstance(p.certified, Certification)), None)
    settings = ("" if tested is None else
                f" with probability at least {_percent_setting(1.0 - tested.delta)}, the error rate of the "
                f"auto-accepted predictions is at most {_percent_setting(tested.max_error)} (Learn-then-Test, "
                f"fixed sequence, tested on {tested.calibration_n:,} calibration items; the upper bound is the "
                "one-sided Clopper-Pearson bound from the accepted items and their errors)")
    return [
        "<h3>Certified thresholds</h3>",
        '<p class="explain" id="certification-assumptions">A certified threshold τ auto-accepts what the policy '
        f"would leave unreviewed at τ, and comes with a guarantee:{settings}. Every guarantee rests on the same "
        "assumptions: the calibration items and the items met in deployment are exchangeable (same model, same "
        "kind of documents, same definition of an error); the error rate of auto-accepted items does not rise as "
        "the threshold gets stricter; and auto-accepted items count as independent draws, which fields of one "
        "document are not, so read the guarantee as approximate when errors cluster within documents. The "
        "held-out columns check τ on the rest of the data and are not part of the guarantee; the last columns are "
        "the policy's figures at τ on all the data. A policy with a review budget is not certifiable: the budget "
        "can force predictions through unreviewed, whatever the threshold.</p>",
        _table(header, rows, table_id="certification"),
    ]


def _cost_section(summary: StudySummary, figures: dict[str, Figure]) -> list[str]:
    parts = ["<h2>Cost</h2>"]
    if "cost" not in figures:
        parts.append('<p class="explain" id="no-costs">Costs were not set for this scenario, so there is no cost '
                     "curve: add a <code>costs</code> section to see what each threshold costs.</p>")
        return parts
    currency = _currency(summary)
    parts += [
        '<p class="explain">The total cost (reviews plus the errors left in the output) at each threshold, '
        + ("" if currency is None else f"in {_esc(currency)}, ") + f"{_esc(_basis_text(summary))}. A low "
        "threshold reviews little and pays for errors; a high one pays reviewers. Each policy's cheapest "
        "threshold is marked with the policy's marker, the recommendation with a star. The lower panel zooms on "
        "the thresholds around the cheapest points (the grey box of the upper panel).</p>",
        _figure_html(figures["cost"], "cost", "Total cost against threshold, per policy; below, the zoom on the "
                                              "cheapest thresholds."),
        *_edge_notes(summary, "cost-edge"),
    ]
    return parts


def _edge_notes(summary: StudySummary, list_id: str) -> list[str]:
    """A warning per policy whose cheapest point is the lowest or highest threshold swept: what it saves may
    only be what an extreme of the range saves (none without costs or such a policy)."""
    if summary.costs is None:
        return []
    # edge_of_range_text reads the cost optimum as summary.json holds it (the dashboard and run call it so too)
    notes = [f"<li><strong>{_esc(p.policy)}</strong>: "
             f"{_esc(edge_of_range_text(encoded(p.cost_optimum), summary.thresholds))}.</li>"
             for p in summary.policies if p.cost_optimum.edge_of_range]
    if not notes:
        return []
    return ['<p class="explain">Read these cheapest points with care:</p>',
            f'<ul id="{list_id}">' + "".join(notes) + "</ul>"]


def _calibration_section(calibration: Calibration | None, predictions: int, figures: dict[str, Figure]) -> list[str]:
    if calibration is None:
        why = "No prediction has a confidence" if predictions else "No predictions"
        return ["<h2>Calibration</h2>", f'<p class="explain">{why}, so no calibration.</p>']
    rows = [("expected calibration error, equal-width bins", num(calibration.ece_equal_width)),
            ("expected calibration error, equal-mass bins", num(calibration.ece_equal_mass)),
            ("area under the risk-coverage curve (AURC)", num(calibration.aurc))]
    return [
        "<h2>Calibration</h2>",
        '<p class="explain">Whether the model\'s confidence can be taken at its word: among predictions made with '
        "90% confidence, about 90% should be right. Bars show the share right in each confidence bin; bars below "
        "the diagonal mean an over-confident model. The expected calibration error (ECE) is the average gap, the "
        "AURC the average error rate when predictions are accepted from the most confident down (lower is "
        "better for both).</p>",
        _table(["measure", "value"], rows, table_id="calibration"),
        _figure_html(figures["calibration"], "calibration", "Reliability diagram: confidence against accuracy."),
        *_calibration_groups(calibration),
    ]


def _calibration_groups(calibration: Calibration) -> list[str]:
    """The ECE per document type (when records name one) and per field: where the confidence can be trusted."""
    parts = []
    for by, groups in (("document type", calibration.by_document_type), ("field", calibration.by_field)):
        if groups:
            rows = [(group.name or "(none)", f"{group.predictions:,}", num(group.mean_confidence),
                     num(group.accuracy), num(group.ece_equal_width), num(group.ece_equal_mass))
                    for group in groups]
            parts.append(_table([by, "predictions", "mean confidence", "share right", "ECE, equal-width",
                                 "ECE, equal-mass"], rows, table_id=f"calibration-by-{by.replace(' ', '-')}"))
    return parts


def _smudge_section(figures: dict[str, Figure]) -> list[str]:
    return [
        "<h2>SMuDGE against alpha</h2>",
        '<p class="explain">SMuDGE scores an answer on two things: whether it matches the right answer, and '
        "whether it is grounded (found on the page). Alpha weighs the two: at 0 only grounding counts, at 1 only "
        "the match. The curve shows the score before review for every alpha; the scenario's alpha is marked. "
        "Questions without OCR are left out.</p>",
        _figure_html(figures["smudge-alpha"], "smudge-alpha", "Mean SMuDGE before review against alpha."),
    ]


def _optimized_section(summary: StudySummary, metric: str) -> list[str]:
    parts = [
        "<h2>Optimized per-field thresholds</h2>",
        '<p class="explain">Instead of one threshold for all fields, each field (for questions: each question '
        "type) gets its own, chosen to automate as much as possible while meeting the target. \"-\" means the "
        "field is always reviewed. The last rows compare with the best single threshold.</p>",
    ]
    optimized = summary.optimized_per_field
    if not optimized:
        parts.append('<p class="explain">No targets were set, so nothing was optimized.</p>')
        return parts
    if not summary.data.predictions:
        parts.append('<p class="explain">No predictions, so no field has a threshold to optimize.</p>')
        return parts
    feasible = {target: entry for target, entry in optimized.items() if entry.feasible}
    for target, entry in optimized.items():
        if not entry.feasible:
            parts.append(f'<p class="explain">{_esc(metric)} {target} cannot be reached by reviewing alone.</p>')
    if not feasible:
        return parts
    fields = sorted({field for entry in feasible.values() for field in entry.thresholds})
    rows = [[field, *(num(entry.thresholds.get(field)) for entry in feasible.values())] for field in fields]
    rows.append(["auto-rate, per-field thresholds", *(num(entry.auto_rate) for entry in feasible.values())])
    rows.append([f"{metric}, per-field thresholds", *(num(entry.metric) for entry in feasible.values())])
    if summary.costs is not None:
        rows.append([f"cost{_in(_currency(summary))}, per-field thresholds",
                     *(money(entry.cost) for entry in feasible.values())])
    single = [entry.best_single_threshold for entry in feasible.values()]
    rows.append(["auto-rate, best single threshold", *(num(None if s is None else s.auto_rate) for s in single)])
    rows.append(["best single threshold", *(num(None if s is None else s.threshold) for s in single)])
    parts.append(_table(["field", *(f"target {t}" for t in feasible)], rows, table_id="optimized"))
    return parts


def _provenance_section(result: ScenarioResult, scenario_source: str | None) -> list[str]:
    """Where the figures come from: rpa-sim's version, the scenario, the data (hashed) and the command."""
    scenario = result.scenario
    if scenario_source is None and _is_bundled(scenario.name, result.base):
        scenario_source = scenario.name
    if scenario_source is None:
        where = "not recorded: the report was not told which file the scenario came from"
        command = "rpa-sim report SCENARIO --out report.html"
    else:
        where = (f"file {scenario_source}" if is_path(scenario_source)
                 else f"bundled with rpa-sim ({scenario_source}.yaml)")
        command = f"rpa-sim report {shlex.quote(scenario_source)} --out report.html"
    rows = [("rpa-sim version", _esc(__version__)),
            ("scenario", f"{_esc(scenario.name)}, {_esc(where)}"),
            *_data_provenance(result)]
    rows.append(("reproduce with", f"<code>{_esc(command)}</code>"))
    body = "".join(f"<tr><th scope=\"row\">{label}</th><td>{value}</td></tr>\n" for label, value in rows)
    return [
        "<h2>Provenance</h2>",
        '<p class="explain">What this report was made from. It holds no date: the same version, scenario and '
        "data give the same bytes, whatever the output file is called.</p>",
        f'<div class="scroll" role="region" tabindex="0" aria-label="provenance table">\n<table id="provenance">'
        f"\n<tbody>\n{body}</tbody>\n</table>\n</div>",
    ]


def _is_bundled(name: str, base: Path | None) -> bool:
    """Whether a scenario of this name read from ``base`` is the bundled one (its folder is the bundled folder)."""
    bundled = bundled_scenarios().get(name)
    return bundled is not None and base is not None and Path(str(bundled)).parent == base


def _data_provenance(result: ScenarioResult) -> list[tuple[str, str]]:
    """The data's rows of the provenance: the generator and its settings, or each file and its sha256."""
    data = result.scenario.data
    if data.generate is not None:
        settings = json.dumps(data.settings, sort_keys=True) if data.settings else "the defaults"
        return [("data", f"generated: {_esc(data.generate)}, n = {data.n}, seed = {data.seed}, settings "
                         f"{_esc(settings)}")]
    rows = []
    for label, name in (("data", data.file), ("predictions", data.predictions)):
        if name is None:
            continue
        if result.base is None:
            rows.append((label, f"file {_esc(name)} (not hashed: the report was given the evaluated table)"))
            continue
        digest = _sha256(result.base / name)
        rows.append((label, f"file {_esc(name)}, " + ("unreadable now" if digest is None
                                                       else f"sha256 <code>{digest}</code>")))
    return rows


def _sha256(path: Path) -> str | None:
    """The file's sha256 in hex, None when it cannot be read (moved or deleted since the run)."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as stream:
            for block in iter(lambda: stream.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()


# ---------------------------------------------------------------- plots


def _figures(result: ScenarioResult) -> dict[str, Figure]:
    """Every plot of the report by name: the trade-off plot only with predictions, the cost plot only with
    costs, the calibration plot only with predictions, the alpha plot only for VQA with OCR, the monitoring plots
    only with the scenario's monitoring section."""
    from rpa_sim.report.decision import decision_figure, starred  # noqa: PLC0415

    summary = result.typed_summary
    found = starred(result, recommend(summary))
    decided = decision_figure(result)
    figures = {} if decided is None else {"decision": decided}
    if summary.data.predictions:
        figures["tradeoff"] = _tradeoff_figure(result, found)
    if summary.costs is not None:
        figures["cost"] = _cost_figure(result, found)
    if summary.calibration is not None:
        figures["calibration"] = _calibration_figure(summary.calibration)
    smudge = _smudge_figure(result.table, result.scenario.alpha)  # SMuDGE scores questions only
    if smudge is not None:
        figures["smudge-alpha"] = smudge
    if summary.monitoring is not None:
        from rpa_sim.report.monitoring import monitoring_figures  # noqa: PLC0415

        figures.update(monitoring_figures(summary.monitoring, summary.policies))
    if summary.operations is not None:
        from rpa_sim.report.operations import operations_figures  # noqa: PLC0415

        figures.update(operations_figures(summary.operations))
    for figure in figures.values():
        _fit_to_phone(figure)
    return figures


#: Every figure's width in inches and its smallest text in points. At 390 CSS px a page's figure is about 371 px
#: wide and shows the 360 pt of a 5 in figure at 1.03 px a point, so no text renders below 10.3 px (9.7 px in the
#: decision's box); a desktop shows it at up to 36rem (576 px), 1.6 px a point.
FIGURE_WIDTH_INCHES = 5.0
SMALLEST_FONT_POINTS = 10.0


def _fit_to_phone(figure: Figure) -> None:
    """Narrow the figure to :data:`FIGURE_WIDTH_INCHES` (its height by half as much, as a narrower figure has
    narrower panels to fill), raise every text below :data:`SMALLEST_FONT_POINTS` to it and break titles and x
    labels into lines that fit their panel, so that the figure scaled to a phone's width stays readable."""
    width, height = figure.get_size_inches()
    if width > FIGURE_WIDTH_INCHES:
        figure.set_size_inches(FIGURE_WIDTH_INCHES, height * (1.0 - 0.5 * (1.0 - FIGURE_WIDTH_INCHES / width)))
    for text in figure.findobj(Text):
        if text.get_fontsize() < SMALLEST_FONT_POINTS:
            text.set_fontsize(SMALLEST_FONT_POINTS)
    for axes in figure.axes:  # tick labels are made at drawing time, from the axes' settings
        axes.tick_params(which="both", labelsize=SMALLEST_FONT_POINTS)
        for label in (axes.title, axes.xaxis.label):
            _wrap(label, axes.get_position().width * FIGURE_WIDTH_INCHES)
    for text in figure.texts:  # the figure's own title
        _wrap(text, FIGURE_WIDTH_INCHES)


def _wrap(title: Text, inches: float) -> None:
    """Break a title into lines that fit ``inches`` (a character is about 0.6 of the font size wide)."""
    fits = max(12, int(inches * 72 / (0.6 * title.get_fontsize())))
    title.set_text(textwrap.fill(title.get_text(), fits))


# Okabe-Ito, safe for every common colour-blindness; yellow last, as it is faint on white
_PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442")
# Line styles and markers tell the policies apart in black and white too; 8 and 10 styles repeat after 40
_LINE_STYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)), (0, (8, 2)), (0, (3, 1)), (0, (1, 1)))
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "h", "<", ">")
_LABEL_HEIGHTS = (6, -13, 15, -22)  # points above (+) or below (-) a labelled point, by policy


def _style(index: int) -> dict[str, Any]:
    return {"color": _PALETTE[index % len(_PALETTE)], "linestyle": _LINE_STYLES[index % len(_LINE_STYLES)],
            "marker": _MARKERS[index % len(_MARKERS)]}


def _new_axes(title: str, xlabel: str, ylabel: str) -> tuple[Figure, Axes]:
    # Figure without pyplot: no global state, no interactive backend, nothing kept alive between reports
    figure = Figure(figsize=(7.5, 4.8), layout="constrained")
    axes = figure.subplots()
    _label(axes, title, xlabel, ylabel)
    return figure, axes


def _label(axes: Axes, title: str, xlabel: str, ylabel: str) -> None:
    axes.set_title(title)
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.grid(True, alpha=0.3)


def _panels(zoomed: bool) -> tuple[Figure, list[Axes]]:
    """A figure with the full panel, and the zoom panel below it when there is a range to zoom on."""
    figure = Figure(figsize=(7.5, 9.6 if zoomed else 5.6), layout="constrained")
    axes = figure.subplots(2 if zoomed else 1, 1, squeeze=False)[:, 0]
    return figure, list(axes)


def _padded(low: float, high: float, *, lowest: float, highest: float, minimum: float) -> tuple[float, float]:
    """``[low, high]`` widened by a tenth of its span on each side, to at least ``minimum``, kept within
    ``[lowest, highest]`` by shifting before cutting.

    Examples
    --------
    >>> _padded(0.985, 1.0, lowest=0.0, highest=1.0, minimum=0.1)
    (0.9, 1.0)
    """
    span = high - low
    pad = max(0.1 * span, (minimum - span) / 2.0)
    start, end = low - pad, high + pad
    if start < lowest:
        start, end = lowest, end + (lowest - start)
    if end > highest:
        start, end = start - (end - highest), highest
    return max(start, lowest), end


def _window_of(curves: list[tuple[np.ndarray, np.ndarray]], start: float, end: float,
               extra: Iterable[float] = ()) -> tuple[float, float, float, float]:
    """The zoom rectangle ``(x0, x1, y0, y1)``: x from ``start`` to ``end``, y over the points there (and ``extra``)."""
    inside = [y[(x >= start) & (x <= end) & ~np.isnan(y)] for x, y in curves]
    values = np.concatenate([*inside, np.asarray(list(extra), dtype=float)])
    values = values[~np.isnan(values)]
    bottom, top = float(values.min()), float(values.max())
    pad = max(0.05 * (top - bottom), 1e-3 * max(abs(top), 1.0))
    return start, end, bottom - pad, top + pad


def _label_point(axes: Axes, text: str, x: float, y: float, *, index: int, between: tuple[float, float]) -> None:
    """Label a marked point towards the middle of the panel (whose x runs ``between``); successive policies
    take turns at four heights, so that the labels of close points do not run into each other."""
    left = x > (between[0] + between[1]) / 2.0
    axes.annotate(text, (x, y), xytext=(-6 if left else 6, _LABEL_HEIGHTS[index % len(_LABEL_HEIGHTS)]),
                  textcoords="offset points", fontsize=7, ha="right" if left else "left")


def _zoom_to(axes: Axes, window: tuple[float, float, float, float]) -> None:
    """Show the window, with a sliver of margin so that markers on its edges are whole."""
    x0, x1, y0, y1 = window
    margin = 0.02 * (x1 - x0)
    axes.set_xlim(x0 - margin, x1 + margin)
    axes.set_ylim(y0, y1)


def _outline(axes: Axes, window: tuple[float, float, float, float]) -> None:
    x0, x1, y0, y1 = window
    axes.add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, fill=False, edgecolor="grey", linestyle=":", linewidth=1.2))


def _tradeoff_window(result: ScenarioResult, found: Recommendation) -> tuple[float, float, float, float] | None:
    """The range of the zoom panel: around each target's best operating point (the most automation reaching it,
    over all policies), else around the recommendation; None without either."""
    summary = result.typed_summary
    xs = []
    for target in summary.targets:
        reaching = [p.operating_points[f"{target:g}"] for p in summary.policies]
        rates = [point.auto_rate for point in reaching if point is not None and point.auto_rate is not None]
        xs += [max(rates)] if rates else []
    if not xs and found.auto_rate is not None:
        xs = [found.auto_rate]
    if not xs:
        return None
    start, end = _padded(min(xs), max(xs), lowest=0.0, highest=1.0, minimum=0.1)
    marked = [p.metric for policy in summary.policies for p in policy.operating_points.values()
              if p is not None and start <= p.auto_rate <= end]
    return _window_of([(c.auto_rate, c.metric) for c in result.curves], start, end, marked)


def _tradeoff_figure(result: ScenarioResult, found: Recommendation) -> Figure:
    summary = result.typed_summary
    metric = result.table.metric_label
    window = _tradeoff_window(result, found)
    figure, panels = _panels(window is not None)
    everything, nothing = summary.baselines.review_all, summary.baselines.review_none
    handles = []
    for panel_index, axes in enumerate(panels):
        zoomed = panel_index == 1
        for index, (curve, policy) in enumerate(zip(result.curves, summary.policies, strict=True)):
            style = _style(index)
            order = np.argsort(curve.auto_rate, kind="stable")
            label = curve.policy + ("" if spans_all_auto_rates(policy.auto_rate_range) else " (partial)")
            line, = axes.plot(curve.auto_rate[order], curve.metric[order], label=label, markevery=0.12,
                              markersize=5, linewidth=1.6, **style)
            if not zoomed:
                handles.append(line)
            points = [p for p in policy.operating_points.values() if p is not None]
            axes.scatter([p.auto_rate for p in points], [p.metric for p in points], color=style["color"],
                         marker=style["marker"], s=60, edgecolor="black", zorder=3)
            if zoomed or window is None:
                for point in points:
                    _label_point(axes, f"τ {point.threshold:.4f}", point.auto_rate, point.metric,
                                 index=index, between=(0.0, 1.0) if window is None else window[:2])
        for target in summary.targets:
            axes.axhline(target, color="grey", linestyle="--", linewidth=1)
            axes.annotate(f"target {target:g}", (1.0, target), xycoords=("axes fraction", "data"), xytext=(-3, 2),
                          textcoords="offset points", fontsize=8, color="dimgrey", ha="right")
        for point, marker, text in ((everything, "s", "review everything"), (nothing, "^", "review nothing")):
            if point.metric is not None:
                at = 0.0 if marker == "s" else 1.0
                axes.scatter([at], [point.metric], marker=marker, s=70, color="black", zorder=4)
                axes.annotate(text, (at, point.metric), xytext=(6 if at == 0.0 else -6, -12),
                              textcoords="offset points", fontsize=8, ha="left" if at == 0.0 else "right")
        if found.auto_rate is not None and found.metric is not None:
            axes.scatter([found.auto_rate], [found.metric], marker="*", s=260, color=_PALETTE[-1],
                         edgecolor="black", zorder=5)
        if zoomed:
            x0, x1 = window[:2]
            _zoom_to(axes, window)
            _label(axes, f"Zoom: auto-rate {x0:.2f} to {x1:.2f}", "auto-rate (share not reviewed)",
                   f"{metric} after review")
        else:
            axes.set_xlim(-0.02, 1.02)
            _label(axes, "Trade-off: automation against quality", "auto-rate (share not reviewed)",
                   f"{metric} after review")
            if window is not None:
                _outline(axes, window)
    _figure_legend(figure, handles, points="operating point (policy's marker)", targets=bool(summary.targets),
                   baselines=True, recommended=found.basis is not None)
    return figure


def _figure_legend(figure: Figure, handles: list[Line2D], *, points: str, targets: bool, baselines: bool,
                   recommended: bool) -> None:
    """One legend under the panels: the policies, then what the marks mean (``points``: the policies' dots)."""
    keys = [Line2D([], [], color="grey", marker="o", markerfacecolor="white", markeredgecolor="black",
                   linestyle="none", label=points)]
    if targets:
        keys.append(Line2D([], [], color="grey", linestyle="--", label="target"))
    if baselines:
        keys += [Line2D([], [], color="black", marker="s", linestyle="none", label="review everything"),
                 Line2D([], [], color="black", marker="^", linestyle="none", label="review nothing")]
    if recommended:
        keys.append(Line2D([], [], color=_PALETTE[-1], marker="*", markersize=13, markeredgecolor="black",
                           linestyle="none", label="recommended"))
    figure.legend(handles=[*handles, *keys], loc="outside lower center", ncols=2, fontsize=8, frameon=False)


def _cost_window(result: ScenarioResult) -> tuple[float, float, float, float] | None:
    """The range of the cost zoom: the thresholds around the cost optima within 25% of the cheapest, and costs up
    to half again the cheapest (or the dearest optimum shown), so that a steep end does not flatten the rest."""
    optima = [(p.cost_optimum.threshold, p.cost_optimum.cost) for p in result.typed_summary.policies
              if p.cost_optimum.cost is not None and np.isfinite(p.cost_optimum.threshold)]
    thresholds = np.concatenate([c.threshold[np.isfinite(c.threshold)] for c in result.curves])
    if not optima or len(thresholds) == 0:
        return None
    cheapest = min(cost for _, cost in optima)
    near = [threshold for threshold, cost in optima if cost <= cheapest + 0.25 * abs(cheapest)]
    lowest, highest = float(thresholds.min()), float(thresholds.max())
    start, end = _padded(min(near), max(near), lowest=lowest, highest=highest, minimum=0.1 * (highest - lowest))
    shown = [cost for threshold, cost in optima if start <= threshold <= end]
    x0, x1, y0, y1 = _window_of([(c.threshold, c.columns["cost"]) for c in result.curves], start, end, shown)
    ceiling = max(cheapest + 0.5 * abs(cheapest), *shown)
    return x0, x1, y0, min(y1, ceiling + 0.05 * (ceiling - y0))


def _cost_figure(result: ScenarioResult, found: Recommendation) -> Figure:
    summary = result.typed_summary
    window = _cost_window(result)
    figure, panels = _panels(window is not None)
    unit, size, _ = _cost_basis(summary)
    currency = _currency(summary)
    basis = f"{size:,} {unit}"
    ylabel = f"total cost ({basis})" if currency is None else f"total cost ({currency}, {basis})"
    handles = []
    for panel_index, axes in enumerate(panels):
        zoomed = panel_index == 1
        for index, (curve, policy) in enumerate(zip(result.curves, summary.policies, strict=True)):
            style = _style(index)
            finite = np.isfinite(curve.threshold)  # an open-ended grid point has no place on the axis
            line, = axes.plot(curve.threshold[finite], curve.columns["cost"][finite], label=curve.policy,
                              markevery=0.12, markersize=5, linewidth=1.6, **style)
            if not zoomed:
                handles.append(line)
            best = policy.cost_optimum
            axes.scatter([best.threshold], [best.cost], color=style["color"], marker=style["marker"], s=60,
                         edgecolor="black", zorder=3)
            if zoomed or window is None:
                _label_point(axes, f"τ {best.threshold:.4f}", best.threshold, best.cost, index=index,
                             between=(float(np.nanmin(curve.threshold[finite])),
                                      float(np.nanmax(curve.threshold[finite]))) if window is None else window[:2])
        if found.basis == "cost":
            axes.scatter([found.threshold], [found.cost], marker="*", s=260, color=_PALETTE[-1], edgecolor="black",
                         zorder=5)
        if zoomed:
            x0, x1 = window[:2]
            _zoom_to(axes, window)
            _label(axes, f"Zoom: τ {x0:.2f} to {x1:.2f}", "threshold τ", ylabel)
        else:
            _label(axes, "Total cost against threshold", "threshold τ", ylabel)
            if window is not None:
                _outline(axes, window)
    _figure_legend(figure, handles, points="cheapest τ (policy's marker)", targets=False, baselines=False,
                   recommended=found.basis == "cost")
    return figure


def _calibration_figure(calibration: Calibration) -> Figure:
    table: Reliability = calibration.reliability
    lower, upper = np.array(table.lower), np.array(table.upper)
    figure, axes = _new_axes(f"Reliability (ECE {calibration.ece_equal_width:.4f})", "confidence",
                             "accuracy (share right)")
    axes.bar(lower, table.accuracy, width=upper - lower, align="edge", color=_PALETTE[5], edgecolor="white",
             label="accuracy in the bin")
    axes.plot(table.mean_confidence, table.accuracy, "D", color=_PALETTE[3], markeredgecolor="black",
              label="mean confidence of the bin")
    axes.plot([0, 1], [0, 1], color="black", linestyle="--", linewidth=1, label="perfect calibration")
    axes.set_xlim(0, 1)
    axes.set_ylim(0, 1)
    axes.legend(fontsize=8, loc="upper left")
    return figure


def _smudge_figure(table: OutcomeTable, alpha: float) -> Figure | None:
    curve = table.smudge_by_alpha(step=0.05)
    if curve is None:
        return None
    alphas, means = curve
    figure, axes = _new_axes("SMuDGE against alpha", "alpha (0: grounding only, 1: match only)", "mean SMuDGE")
    axes.plot(alphas, means, marker="o", markersize=3, color=_PALETTE[0])
    at = float(np.interp(alpha, alphas, means))
    axes.axvline(alpha, color="grey", linestyle="--", linewidth=1)
    axes.scatter([alpha], [at], color=_PALETTE[3], marker="D", edgecolor="black", zorder=3,
                 label=f"scenario alpha {alpha:g}")
    axes.set_xlim(0, 1)
    axes.legend(fontsize=8)
    return figure


def _svg(figure: Figure, name: str) -> str:
    """The figure as inline SVG, the same bytes for the same figure."""
    buffer = io.StringIO()
    # A fixed salt makes the SVG ids reproducible; text stays text (smaller, searchable).
    with matplotlib.rc_context({"svg.hashsalt": "rpa-sim", "svg.fonttype": "none"}):
        figure.savefig(buffer, format="svg",
                       metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    text = _SVG_PROLOGUE.sub("", buffer.getvalue(), count=1)
    root_end = text.index(">")
    # the root id is set here, not through rcParams["svg.id"], which matplotlib 3.7 lacks
    return _SVG_NAMESPACES.sub("", text[:root_end]) + f' id="svg-{name}" role="img"' + text[root_end:].rstrip()


def _figure_html(figure: Figure, name: str, caption: str) -> str:
    return (f'<figure id="plot-{name}">\n{_svg(figure, name)}\n'
            f"<figcaption>{_esc(caption)}</figcaption>\n</figure>")


# ---------------------------------------------------------------- HTML helpers


def _esc(text: str) -> str:
    return html.escape(str(text), quote=True)


def _data_value(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return count(value)
    return num(value)


def _table(header: Sequence[str], rows: Iterable[Sequence[str]], *, table_id: str,
           marks: dict[tuple[int, int], str] | None = None) -> str:
    """An HTML table in its own horizontally scrolling box; cells that look like numbers are right-aligned.

    ``marks`` maps (row, column) to an extra class of that body cell: ``best`` or ``loss``.
    """
    marks = marks or {}
    head = "".join(f"<th>{_esc(cell)}</th>" for cell in header)
    body = "".join(
        "<tr>" + "".join(_cell_html(cell, marks.get((row_index, column))) for column, cell in enumerate(row))
        + "</tr>\n" for row_index, row in enumerate(rows))
    # a scrolling region takes the keyboard focus so that it can be scrolled without a pointer
    return (f'<div class="scroll" role="region" tabindex="0" aria-label="{table_id} table">\n'
            f'<table id="{table_id}">\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}</tbody>\n</table>\n</div>')


def _cell_html(cell: str, mark: str | None) -> str:
    classes = " ".join(name for name in ("num" if _NUMBER.fullmatch(cell) else None, mark) if name)
    return f'<td class="{classes}">{_esc(cell)}</td>' if classes else f"<td>{_esc(cell)}</td>"


def _currency(summary: StudySummary) -> str | None:
    return None if summary.costs is None else summary.costs.currency


def _in(currency: str | None) -> str:
    """A column or axis label's unit suffix: `` (EUR)``, nothing without a currency."""
    return "" if currency is None else f" ({currency})"


def _cost_basis(summary: StudySummary) -> tuple[str, int, float | None]:
    """What cost totals are for: the data's unit, how many of them, and the volume per day when known."""
    data = summary.data
    unit, size = ("questions", data.questions) if isinstance(data, VqaData) else ("documents", data.documents)
    return unit, size, None if summary.costs is None else summary.costs.volume_per_day


def _basis_text(summary: StudySummary) -> str:
    """The basis of a cost total in words, e.g. ``for the 2,000 documents of the data``."""
    unit, size, _ = _cost_basis(summary)
    return f"for the {size:,} {unit} of the data"


def _per_day_factor(summary: StudySummary) -> float | None:
    """What turns a total for the data into a total per day (None when the daily volume is unknown)."""
    _, size, volume = _cost_basis(summary)
    return None if volume is None or not size else volume / size
