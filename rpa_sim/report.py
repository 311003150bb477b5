"""A presentable report of a scenario run: one self-contained HTML file.

The report is written for someone who never ran rpa-sim: each section starts
with a short plain-language explanation. Every number in it comes from the
run's ``summary`` (the same figures as ``summary.json``), formatted with four
decimals, money with two. The plots are drawn by matplotlib and embedded as
inline SVG, so the file needs nothing beside it; the same run always gives the
same bytes (no date, fixed SVG ids, no matplotlib version in the file).
"""

from __future__ import annotations

import html
import io
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from rpa_sim.files import atomic_write_bytes, atomic_write_text, check_output, check_output_folder
from rpa_sim.metrics.smudge import alpha_curve
from rpa_sim.outcomes import VQAOutcomes
from rpa_sim.study import ScenarioResult

__all__ = ["write_report", "render_report", "PLOT_NAMES"]

#: Every plot a report can hold, in the order of the report: its id and PNG file stem.
PLOT_NAMES = ("tradeoff", "cost", "calibration", "smudge-alpha")

# The curated data summary: internal counters (group pairing, deviation sums) would puzzle a reader.
_DATA_LABELS = {
    "documents": "documents", "predictions": "predictions (what a policy routes)",
    "entities_gt": "fields in the ground truth",
    "questions": "questions", "kieval_aligned": "KIEval_Aligned before review", "entity_f1": "entity F1",
    "precision": "precision", "recall": "recall", "anls": "ANLS before review", "accuracy": "exact-match accuracy",
    "smudge": "SMuDGE before review", "grounding": "mean grounding", "alpha": "SMuDGE alpha",
}
_STYLE = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;
color:#222;line-height:1.5}
h1{margin-bottom:.2rem}h2{margin-top:2.2rem;border-bottom:1px solid #ccc}
p.explain{color:#444}
table{border-collapse:collapse;margin:.8rem 0;font-size:.92rem}
th,td{border:1px solid #ccc;padding:.25rem .55rem;vertical-align:top}
th{background:#f3f3f3;text-align:left}td.num{text-align:right;font-variant-numeric:tabular-nums}
figure{margin:1rem 0}figure svg{max-width:100%;height:auto}figcaption{color:#555;font-size:.9rem}
li.guarantee{margin-bottom:.6rem}
"""
_NUMBER = re.compile(r"-?\d+(\.\d+)?|-")
_SVG_PROLOGUE = re.compile(r"\A.*?(?=<svg\b)", re.DOTALL)
# Namespace declarations are URIs, not resources, but the HTML parser does not need them for inline SVG
# (it puts xlink:href in its namespace by itself), and without them the file holds no "http" at all.
_SVG_NAMESPACES = re.compile(r'\s+xmlns(?::xlink)?="[^"]*"')


def num(value: float | None, digits: int = 4) -> str:
    """A figure as the report prints it: ``digits`` decimals, ``-`` when absent.

    Examples
    --------
    >>> num(0.123456), num(12.5, 2), num(None)
    ('0.1235', '12.50', '-')
    """
    return "-" if value is None else f"{value:.{digits}f}"


def money(value: float | None) -> str:
    """An amount of money with two decimals (``-`` when absent)."""
    return num(value, 2)


def write_report(result: ScenarioResult, out: Path, *, png_dir: Path | None = None) -> Path:
    """Write the HTML report of a scenario run, atomically, and optionally each plot as a PNG.

    Everything is drawn and encoded first, then written: a failure or an
    interrupt while drawing leaves no file behind, and each file is written
    atomically (:mod:`rpa_sim.files`).

    Parameters
    ----------
    result : ScenarioResult
        What :func:`~rpa_sim.study.run_scenario` returned.
    out : Path
        The HTML file to write; its folder is created if needed.
    png_dir : Path, optional
        When given, each plot is also written there as ``<plot>.png``
        (see :data:`PLOT_NAMES`); the folder is created if needed.

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
    html_text = render_report(result, figures=figures)
    pngs = {}
    if png_dir is not None:
        for name, figure in figures.items():
            image = io.BytesIO()
            # "Software" would write the matplotlib version into every PNG
            figure.savefig(image, format="png", dpi=150, metadata={"Software": None})
            pngs[png_dir / f"{name}.png"] = image.getvalue()
    atomic_write_text(out, html_text)
    for path, image_bytes in pngs.items():
        atomic_write_bytes(path, image_bytes)
    return out


def render_report(result: ScenarioResult, *, figures: dict[str, Figure] | None = None) -> str:
    """The HTML text of the report (see :func:`write_report`).

    Parameters
    ----------
    result : ScenarioResult
        The scenario run.
    figures : dict of str to Figure, optional
        The plots by name, when already drawn; drawn here otherwise.

    Returns
    -------
    str
        A complete HTML document.
    """
    figures = _figures(result) if figures is None else figures
    summary = result.summary
    metric = result.table.metric_label
    title = f"rpa-sim report: {summary['scenario']}"
    parts = [
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_esc(title)}</title>", f"<style>{_STYLE}</style>", "</head>", "<body>",
        f"<h1>{_esc(title)}</h1>",
    ]
    if summary["description"]:
        parts.append(f'<p class="description">{_esc(summary["description"])}</p>')
    parts += _settings_section(summary, metric, result.table.task_description)
    parts += _tradeoff_section(summary, metric, figures)
    parts += _comparison_section(summary, metric)
    parts += _cost_section(summary, figures)
    parts += _calibration_section(summary, figures)
    if "smudge-alpha" in figures:
        parts += _smudge_section(summary, figures)
    parts += _optimized_section(summary, metric)
    parts += ["</body>", "</html>", ""]
    return "\n".join(parts)


# ---------------------------------------------------------------- sections


def _settings_section(summary: dict[str, Any], metric: str, task: str) -> list[str]:
    data = summary["data"]
    rows = [(label, _data_value(key, data[key])) for key, label in _DATA_LABELS.items() if key in data]
    reviewer = summary["reviewer"]
    reviewer_rows = [
        ("misses an error with probability", num(reviewer["miss_rate"])),
        ("breaks a right prediction with probability", num(reviewer["false_correction_rate"])),
        ("seconds per reviewed item", num(reviewer["seconds_per_item"], 1)),
        ("seconds per opened document", num(reviewer["seconds_per_document"], 1)),
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
    costs = summary["costs"]
    if costs is None:
        parts.append('<p class="explain">Costs were not set for this scenario: no money figures.</p>')
    else:
        cost_rows = [(label, money(costs[key])) for key, label in (
            ("per_review", "per reviewed item"), ("per_document", "per opened document"),
            ("hourly_rate", "reviewer's hourly rate"), ("per_residual_error", "per error left in the output"))
            if costs[key] is not None]
        parts += ['<p class="explain">What one review and one error left in the output cost, in one currency; '
                  "review prices not given are the reviewer's seconds at the hourly rate.</p>",
                  _table(["cost", "amount"], cost_rows, table_id="costs")]
    targets = ", ".join(num(t) for t in summary["targets"]) or "none"
    parts += [
        "<h3>Thresholds and targets</h3>",
        f'<p class="explain">Thresholds swept: <code>{_esc(summary["thresholds"])}</code> ("exact" means every '
        "threshold at which any decision changes). Targets, the output quality the business needs "
        f"({_esc(metric)} after review): {targets}.</p>",
    ]
    return parts


def _tradeoff_section(summary: dict[str, Any], metric: str, figures: dict[str, Figure]) -> list[str]:
    if "tradeoff" not in figures:
        return ["<h2>Trade-off curves</h2>",
                '<p class="explain" id="no-predictions">The data holds no predictions, so no policy has anything '
                "to route: there is no auto-rate and no trade-off to draw. The figures below that do not depend "
                "on predictions (what is missing from the output, its cost) still hold.</p>"]
    return [
        "<h2>Trade-off curves</h2>",
        '<p class="explain">Each line is one policy as its threshold moves: to the right, more predictions go '
        f"through unchecked (auto-rate); upwards, the output is better ({_esc(metric)} after review). A policy "
        "whose line lies above another's is better at every level of automation. Dashed lines are the targets; "
        "the dots are each policy's operating point, the most automation that still meets a target.</p>",
        _figure_html(figures["tradeoff"], "tradeoff", "Auto-rate against quality after review, per policy."),
    ]


def _comparison_section(summary: dict[str, Any], metric: str) -> list[str]:
    targets = [f"{t:g}" for t in summary["targets"]]
    has_costs = summary["costs"] is not None
    header = ["policy", "AUC"]
    for target in targets:
        header += [f"auto-rate at {target}", f"τ at {target}"]
    if has_costs:
        header += ["best cost", "τ at best cost", "saves vs review-all", "saves vs review-none"]
    header += ["certified τ", "dominated by"]
    rows = []
    for policy in summary["policies"]:
        row = [policy["policy"], num(policy["auc"])]
        for target in targets:
            point = policy["operating_points"].get(target)
            row += [num(None if point is None else point[key]) for key in ("auto_rate", "threshold")]
        if has_costs:
            best = policy["cost_optimum"]
            row += [money(best["cost"]), num(best["threshold"]), money(best["savings_vs_review_all"]),
                    money(best["savings_vs_review_none"])]
        certified = policy["certified"]
        row += [num(None if certified is None else certified["threshold"]), ", ".join(policy["dominated_by"]) or "-"]
        rows.append(row)
    baselines = summary["baselines"]
    baseline_rows = [(label, num(baselines[key]["metric"]), num(baselines[key]["reviewed"], 0),
                      money(baselines[key]["cost"]))
                     for key, label in (("review_none", "review nothing"), ("review_all", "review everything"))]
    parts = [
        "<h2>Comparison of the policies</h2>",
        '<p class="explain">AUC is the area under the trade-off curve (higher is better). For each target, the '
        f"auto-rate is the largest share of predictions the policy can leave unchecked while the {_esc(metric)} "
        "after review still reaches the target, at threshold τ (\"-\": never reached)."
        + (" The best cost is the lowest total of review and error costs over all thresholds, and what it saves "
           "against reviewing everything or nothing." if has_costs else "")
        + " A policy is dominated when another one is at least as good at every auto-rate.</p>",
        _table(header, rows, table_id="comparison"),
        "<h3>What each policy does</h3>",
        "<ul>" + "".join(f"<li><strong>{_esc(p['policy'])}</strong>: {_esc(p['description'] or '')}</li>"
                         for p in summary["policies"]) + "</ul>",
        "<h3>The two extremes</h3>",
        '<p class="explain">Reviewing nothing and reviewing everything, for reference.</p>',
        _table(["baseline", f"{metric} after review", "items reviewed", "cost"], baseline_rows, table_id="baselines"),
    ]
    certified = [p for p in summary["policies"] if p["certified"] is not None]
    if certified:
        parts += [
            "<h3>Certified thresholds</h3>",
            '<p class="explain">A certified threshold comes with a statistical guarantee on the error rate of '
            "the predictions it lets through, under the assumptions stated with it.</p>",
            '<ul id="guarantees">' + "".join(
                f'<li class="guarantee"><strong>{_esc(p["policy"])}</strong>: {_esc(p["certified"]["guarantee"])}</li>'
                for p in certified) + "</ul>",
        ]
    return parts


def _cost_section(summary: dict[str, Any], figures: dict[str, Figure]) -> list[str]:
    parts = ["<h2>Cost</h2>"]
    if "cost" not in figures:
        parts.append('<p class="explain" id="no-costs">Costs were not set for this scenario, so there is no cost '
                     "curve: add a <code>costs</code> section to see what each threshold costs.</p>")
        return parts
    parts += [
        '<p class="explain">The total cost (reviews plus the errors left in the output) at each threshold. A low '
        "threshold reviews little and pays for errors; a high one pays reviewers. Each policy's cheapest "
        "threshold is marked.</p>",
        _figure_html(figures["cost"], "cost", "Total cost against threshold, per policy."),
    ]
    return parts


def _calibration_section(summary: dict[str, Any], figures: dict[str, Figure]) -> list[str]:
    calibration = summary["calibration"]
    if not calibration:
        return ["<h2>Calibration</h2>", '<p class="explain">No predictions, so no calibration.</p>']
    rows = [("expected calibration error, equal-width bins", num(calibration["ece_equal_width"])),
            ("expected calibration error, equal-mass bins", num(calibration["ece_equal_mass"])),
            ("area under the risk-coverage curve (AURC)", num(calibration["aurc"]))]
    return [
        "<h2>Calibration</h2>",
        '<p class="explain">Whether the model\'s confidence can be taken at its word: among predictions made with '
        "90% confidence, about 90% should be right. Bars show the share right in each confidence bin; bars below "
        "the diagonal mean an over-confident model. The expected calibration error (ECE) is the average gap, the "
        "AURC the average error rate when predictions are accepted from the most confident down (lower is "
        "better for both).</p>",
        _table(["measure", "value"], rows, table_id="calibration"),
        _figure_html(figures["calibration"], "calibration", "Reliability diagram: confidence against accuracy."),
    ]


def _smudge_section(summary: dict[str, Any], figures: dict[str, Figure]) -> list[str]:
    return [
        "<h2>SMuDGE against alpha</h2>",
        '<p class="explain">SMuDGE scores an answer on two things: whether it matches the right answer, and '
        "whether it is grounded (found on the page). Alpha weighs the two: at 0 only grounding counts, at 1 only "
        "the match. The curve shows the score before review for every alpha; the scenario's alpha is marked. "
        "Questions without OCR are left out.</p>",
        _figure_html(figures["smudge-alpha"], "smudge-alpha", "Mean SMuDGE before review against alpha."),
    ]


def _optimized_section(summary: dict[str, Any], metric: str) -> list[str]:
    parts = [
        "<h2>Optimized per-field thresholds</h2>",
        '<p class="explain">Instead of one threshold for all fields, each field (for questions: each question '
        "type) gets its own, chosen to automate as much as possible while meeting the target. \"-\" means the "
        "field is always reviewed. The last rows compare with the best single threshold.</p>",
    ]
    optimized = summary["optimized_per_field"]
    if not optimized:
        parts.append('<p class="explain">No targets were set, so nothing was optimized.</p>')
        return parts
    if not summary["data"]["predictions"]:
        parts.append('<p class="explain">No predictions, so no field has a threshold to optimize.</p>')
        return parts
    targets = list(optimized)
    feasible = [t for t in targets if optimized[t]["feasible"]]
    for target in targets:
        if not optimized[target]["feasible"]:
            parts.append(f'<p class="explain">{_esc(metric)} {target} cannot be reached by reviewing alone.</p>')
    if not feasible:
        return parts
    fields = sorted({field for t in feasible for field in optimized[t]["thresholds"]})
    rows = [[field, *(num(optimized[t]["thresholds"].get(field)) for t in feasible)] for field in fields]
    rows.append(["auto-rate, per-field thresholds", *(num(optimized[t]["auto_rate"]) for t in feasible)])
    rows.append([f"{metric}, per-field thresholds", *(num(optimized[t]["metric"]) for t in feasible)])
    if summary["costs"] is not None:
        rows.append(["cost, per-field thresholds", *(money(optimized[t]["cost"]) for t in feasible)])
    single = [optimized[t]["best_single_threshold"] for t in feasible]
    rows.append(["auto-rate, best single threshold", *(num(None if s is None else s["auto_rate"]) for s in single)])
    rows.append(["best single threshold", *(num(None if s is None else s["threshold"]) for s in single)])
    parts.append(_table(["field", *(f"target {t}" for t in feasible)], rows, table_id="optimized"))
    return parts


# ---------------------------------------------------------------- plots


def _figures(result: ScenarioResult) -> dict[str, Figure]:
    """Every plot of the report by name: the trade-off plot only with predictions, the cost plot only with
    costs, the calibration plot only with predictions, the alpha plot only for VQA with OCR."""
    summary = result.summary
    figures = {"tradeoff": _tradeoff_figure(result)} if summary["data"]["predictions"] else {}
    if summary["costs"] is not None:
        figures["cost"] = _cost_figure(result)
    if summary["calibration"]:
        figures["calibration"] = _calibration_figure(summary["calibration"])
    if isinstance(result.table, VQAOutcomes):  # SMuDGE scores questions only
        smudge = _smudge_figure(result.table, result.scenario.alpha)
        if smudge is not None:
            figures["smudge-alpha"] = smudge
    return figures


def _colour(index: int) -> str:
    return matplotlib.colormaps["tab10"](index % 10)


def _new_axes(title: str, xlabel: str, ylabel: str) -> tuple[Figure, Axes]:
    # Figure without pyplot: no global state, no interactive backend, nothing kept alive between reports
    figure = Figure(figsize=(7.5, 4.8), layout="constrained")
    axes = figure.subplots()
    axes.set_title(title)
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.grid(True, alpha=0.3)
    return figure, axes


def _tradeoff_figure(result: ScenarioResult) -> Figure:
    summary = result.summary
    metric = result.table.metric_label
    figure, axes = _new_axes("Trade-off: automation against quality", "auto-rate (share not reviewed)",
                             f"{metric} after review")
    for index, (curve, policy) in enumerate(zip(result.curves, summary["policies"], strict=True)):
        order = np.argsort(curve.auto_rate, kind="stable")
        axes.plot(curve.auto_rate[order], curve.metric[order], color=_colour(index), label=curve.policy)
        points = [p for p in policy["operating_points"].values() if p is not None]
        axes.scatter([p["auto_rate"] for p in points], [p["metric"] for p in points], color=_colour(index),
                     edgecolor="black", zorder=3)
    for target in summary["targets"]:
        axes.axhline(target, color="grey", linestyle="--", linewidth=1)
        axes.annotate(f"target {target:g}", (0.0, target), xytext=(2, 2), textcoords="offset points",
                      fontsize=8, color="grey")
    axes.set_xlim(-0.02, 1.02)
    axes.legend(fontsize=8, loc="lower left")
    return figure


def _cost_figure(result: ScenarioResult) -> Figure:
    figure, axes = _new_axes("Total cost against threshold", "threshold τ", "total cost")
    for index, (curve, policy) in enumerate(zip(result.curves, result.summary["policies"], strict=True)):
        finite = np.isfinite(curve.threshold)  # an open-ended grid point has no place on the axis
        axes.plot(curve.threshold[finite], curve.columns["cost"][finite], color=_colour(index), label=curve.policy)
        best = policy["cost_optimum"]
        axes.scatter([best["threshold"]], [best["cost"]], color=_colour(index), edgecolor="black", zorder=3,
                     marker="D")
    axes.legend(fontsize=8)
    return figure


def _calibration_figure(calibration: dict[str, Any]) -> Figure:
    table = calibration["reliability"]
    lower, upper = np.array(table["lower"]), np.array(table["upper"])
    figure, axes = _new_axes(f"Reliability (ECE {calibration['ece_equal_width']:.4f})", "confidence",
                             "accuracy (share right)")
    axes.bar(lower, table["accuracy"], width=upper - lower, align="edge", color="#4c72b0", edgecolor="white",
             label="accuracy in the bin")
    axes.plot(table["mean_confidence"], table["accuracy"], "o", color="#dd8452", label="mean confidence of the bin")
    axes.plot([0, 1], [0, 1], color="black", linestyle="--", linewidth=1, label="perfect calibration")
    axes.set_xlim(0, 1)
    axes.set_ylim(0, 1)
    axes.legend(fontsize=8, loc="upper left")
    return figure


def _smudge_figure(table: VQAOutcomes, alpha: float) -> Figure | None:
    keep = ~(np.isnan(table.match) | np.isnan(table.smudge_grounding))  # questions without OCR have no grounding
    if not keep.any():
        return None
    alphas, means = alpha_curve(table.match[keep], table.smudge_grounding[keep], step=0.05)
    figure, axes = _new_axes("SMuDGE against alpha", "alpha (0: grounding only, 1: match only)", "mean SMuDGE")
    axes.plot(alphas, means, marker="o", markersize=3, color="#4c72b0")
    at = float(np.interp(alpha, alphas, means))
    axes.axvline(alpha, color="grey", linestyle="--", linewidth=1)
    axes.scatter([alpha], [at], color="#dd8452", edgecolor="black", zorder=3, label=f"scenario alpha {alpha:g}")
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


def _data_value(key: str, value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return num(value)


def _table(header: Sequence[str], rows: Iterable[Sequence[str]], *, table_id: str) -> str:
    """An HTML table; cells that look like numbers are right-aligned."""
    head = "".join(f"<th>{_esc(cell)}</th>" for cell in header)
    body = "".join(
        "<tr>" + "".join(f'<td class="num">{_esc(cell)}</td>' if _NUMBER.fullmatch(cell) else f"<td>{_esc(cell)}</td>"
                         for cell in row) + "</tr>\n" for row in rows)
    return f'<table id="{table_id}">\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}</tbody>\n</table>'
