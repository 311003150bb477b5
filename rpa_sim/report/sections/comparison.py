"""The detail "Comparison of the policies": every policy at its best side by side, the best of each column
marked, a legend of the columns, what each policy does, the two extremes and the certified thresholds.

Its least cost is worded as the CLI's run table and the dashboard word it
(:func:`rpa_sim.study.run.cost_bases`), so that the three say the same.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rpa_sim.common.formatting import count, money, number
from rpa_sim.report.html import escape, table
from rpa_sim.report.sections.certification import certification_part
from rpa_sim.report.sections.costs import edge_notes
from rpa_sim.report.wording import basis_text, cost_optimum, currency_of, unit_suffix
from rpa_sim.study.recommend import spans_all_auto_rates
from rpa_sim.study.run import cost_bases

if TYPE_CHECKING:
    from rpa_sim.study.result import StudySummary

__all__ = ["comparison_section"]


def comparison_section(summary: StudySummary, metric: str) -> list[str]:
    targets = [f"{t:g}" for t in summary.targets]
    has_costs = summary.costs is not None
    unit = unit_suffix(currency_of(summary))
    header = ["policy", "AUC"]
    for target in targets:
        header += [f"auto-rate at {target}", f"τ at {target}"]
    rejecting = any(p.rejected is not None for p in summary.policies)  # a policy with a reject band
    if rejecting:
        header.append("rejected")
    if has_costs:
        header += [f"least cost{unit}", "τ of least cost", f"saves vs review-all{unit}", f"saves vs review-none{unit}"]
    header += ["certified τ", "dominated by"]
    rows, values = [], []  # values: the comparable figure behind each cell, None where there is none
    for policy in summary.policies:
        full = spans_all_auto_rates(policy.auto_rate_range)
        low, high = policy.auto_rate_range
        row = [policy.policy,
               number(policy.auc) if full or low is None else f"partial ({number(low)}–{number(high)})"]
        value = [None, policy.auc if full else None]
        for target in targets:
            point = policy.operating_points.get(target)
            row += [number(None if point is None else point.auto_rate),
                    number(None if point is None else point.threshold)]
            value += [None if point is None else point.auto_rate, None]
        if rejecting:
            row.append(count(0 if policy.rejected is None else policy.rejected))
            value.append(None)
        if has_costs:
            best = cost_optimum(policy)
            row += [money(best.cost), number(best.threshold), money(best.savings_vs_review_all),
                    money(best.savings_vs_review_none)]
            value += [best.cost, None, best.savings_vs_review_all, best.savings_vs_review_none]
        certified = policy.certified
        row += [number(None if certified is None else certified.threshold), ", ".join(policy.dominated_by) or "-"]
        rows.append(row)
        values.append([*value, None, None])
    marks = _best_marks(rows, values, lowest={header.index(f"least cost{unit}")} if has_costs else set())
    if has_costs:
        for column in (len(header) - 4, len(header) - 3):
            marks.update({(r, column): "loss" for r, value in enumerate(values)
                          if (figure := value[column]) is not None and figure < 0})
    baselines = summary.baselines
    baseline_rows = [(label, number(baseline.metric), count(baseline.reviewed), money(baseline.cost))
                     for baseline, label in ((baselines.review_none, "review nothing"),
                                             (baselines.review_all, "review everything"))]
    parts = [
        "<h2>Comparison of the policies</h2>",
        '<p class="explain">Every policy at its best: per target, the most automation that still reaches it'
        + ("; the cheapest threshold and what it saves" if has_costs else "")
        + "; whether it has a certified threshold and whether another policy beats it everywhere. Each column is "
        "explained under the table.</p>",
        table(header, rows, table_id="comparison", marks=marks),
        *edge_notes(summary, "comparison-edge"),
        _comparison_legend(summary, metric, targets),
        "<h3>What each policy does</h3>",
        "<ul>" + "".join(f"<li><strong>{escape(p.policy)}</strong>: {escape(p.description)}</li>"
                         for p in summary.policies) + "</ul>",
        "<h3>The two extremes</h3>",
        '<p class="explain">Reviewing nothing and reviewing everything, for reference'
        + (f"; costs {escape(basis_text(summary))}" if has_costs else "") + ".</p>",
        table(["baseline", f"{metric} after review", "items reviewed", f"cost{unit}"], baseline_rows,
               table_id="baselines"),
    ]
    if any(p.certified is not None for p in summary.policies):
        parts += certification_part(summary, metric)
    return parts


def _best_marks(rows: list[list[str]], values: list[list[float | None]], *,
                lowest: set[int]) -> dict[tuple[int, int], str]:
    """The cells holding their column's best value (highest; lowest in ``lowest`` columns), ties included.

    A column is marked only when at least two policies have a comparable value in it.
    """
    marks = {}
    for column in range(len(values[0]) if values else 0):
        present = [(r, figure) for r, value in enumerate(values) if (figure := value[column]) is not None]
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
        least, decided = cost_bases(summary)  # worded as the CLI's run table and the dashboard word them
        entries += [
            ("least cost", f"the total of review and error costs at {least}; \"τ of least cost\" is that τ"
                           + ("" if decided is None else f". The decision, at the top of the page, {decided}") + "."),
            ("saves vs review-all / review-none", "the cost of reviewing everything (nothing) minus the least "
             "cost: what the policy's cheapest threshold saves; negative (▼, in red): it costs more."),
        ]
    entries += [
        ("certified τ", "a threshold with a statistical guarantee on the error rate of what it lets through "
                        "(see Certified thresholds; \"-\": none)."),
        ("dominated by", "the policies at least as good at every auto-rate and better at some (\"-\": none, the "
                         "policy is on the Pareto front)."),
        ("◆", "the best value of its column (highest AUC among full curves, highest auto-rate, lowest cost, "
              "largest saving)."),
    ]
    return ('<dl class="legend" id="comparison-legend">'
            + "".join(f"<dt>{escape(term)}</dt><dd>{escape(text)}</dd>" for term, text in entries) + "</dl>")

