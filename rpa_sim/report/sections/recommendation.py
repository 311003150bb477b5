"""The detail "Against reviewing everything or nothing": the recommendation against the two extremes.

It formats :func:`rpa_sim.study.recommend.recommend` (read from the typed summary): what the recommended point
buys against reviewing everything and nothing, the targets it reaches, why it may end above reviewing
everything, the certified alternative and the main risk. The page shows it only when the recommendation names
the decision's policy and τ, so that no page names two points.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rpa_sim.common.formatting import money, number, setting_share, share, signed
from rpa_sim.report.html import escape, table
from rpa_sim.report.wording import (
    basis_text,
    cost_basis,
    currency_of,
    per_day_factor,
    shown_above,
    unit_suffix,
    why_above_review_all,
)
from rpa_sim.study.recommend import recommend

if TYPE_CHECKING:
    from rpa_sim.study.recommend import CertifiedAlternative, Recommendation, Risk, Versus
    from rpa_sim.study.result import StudySummary
    from rpa_sim.study.run import ScenarioResult

__all__ = ["recommendation_section"]


def recommendation_section(result: ScenarioResult, metric: str) -> list[str]:
    """The recommendation in detail: what it buys against the two extremes, the certified option, the risk."""
    summary = result.summary
    found = recommend(summary)
    parts = ['<h2 id="summary">Against reviewing everything or nothing</h2>']
    if found.basis is None:
        parts.append(f'<p class="lead" id="recommendation-text">No recommendation: {escape(found.reason)}.</p>')
        if found.certified is not None:
            parts.append(f"<ul><li>{_certified_text(found.certified, found.policy, metric, summary)}</li></ul>")
        return parts
    everything, nothing = found.versus_review_all, found.versus_review_none
    if everything is None or nothing is None:
        raise ValueError("a recommendation is set against both extremes: this one lacks one")
    currency = currency_of(summary)
    where = (f"We recommend <strong>{escape(found.policy)}</strong> at threshold <strong>τ = {number(found.threshold)}"
             f"</strong> (on {escape(found.knob)}), ")
    if found.basis == "cost":
        why = (f"the lowest total cost over every policy and threshold compared: {escape(money(found.cost, currency))} "
               f"{escape(basis_text(summary))}.")
    else:
        why = (f"the policy that leaves the most predictions unreviewed while the {escape(metric)} after review "
               f"reaches the first target, {found.target:g}.")
    parts.append(f'<p class="lead" id="recommendation-text">{where}{why}</p>')
    parts.append(_recommendation_table(found, everything, nothing, summary, metric))
    points = [_versus_text("reviewing everything", everything, found, metric, currency),
              _versus_text("reviewing nothing", nothing, found, metric, currency)]
    if summary.targets:
        points.append(_targets_text(found, metric))
    why = why_above_review_all(next(p for p in result.policies if p.name == found.policy), summary.reviewer)
    if (found.beats_review_all and why and found.metric is not None and everything.metric is not None
            and shown_above(found.metric, everything.metric)):
        points.append(f"It ends above reviewing everything because {why}.")
    if found.certified is not None:
        points.append(_certified_text(found.certified, found.policy, metric, summary))
    elif any(p.certified is not None for p in summary.policies):
        points.append("No threshold could be certified with the scenario's settings (see Certified thresholds).")
    risk = "" if found.risk is None else f'<li id="risk">{_risk_text(found.risk)}</li>'
    parts.append("<ul>" + "".join(f"<li>{point}</li>" for point in points) + f"{risk}</ul>")
    return parts


def _recommendation_table(found: Recommendation, everything: Versus, nothing: Versus, summary: StudySummary,
                          metric: str) -> str:
    """The recommended point against reviewing everything and nothing: quality, automation, reviews and, with
    costs, the cost (per day too when the daily volume is known) and the savings, a loss marked."""
    currency = currency_of(summary)
    rows = [[f"{metric} after review", number(found.metric), number(everything.metric), number(nothing.metric)],
            ["auto-rate (share not reviewed)", number(found.auto_rate), number(everything.auto_rate),
             number(nothing.auto_rate)],
            ["items reviewed", number(found.reviewed, 0), number(everything.reviewed, 0), number(nothing.reviewed, 0)]]
    marks = {}
    if summary.costs is not None:
        rows.append([f"cost{unit_suffix(currency)}", money(found.cost), money(everything.cost), money(nothing.cost)])
        per_day = per_day_factor(summary)
        if per_day is not None:
            unit, _, volume = cost_basis(summary)
            rows.append([f"cost per day{unit_suffix(currency)}, {volume:,.0f} {unit} a day",
                         *(money(None if cost is None else cost * per_day)
                           for cost in (found.cost, everything.cost, nothing.cost))])
        rows.append([f"saved by the recommendation{unit_suffix(currency)}", "-", money(everything.savings),
                     money(nothing.savings)])
        rows.append(["saved by the recommendation, %", "-", number(everything.savings_percent, 1),
                     number(nothing.savings_percent, 1)])
        for column, versus in ((2, everything), (3, nothing)):
            if versus.savings is not None and versus.savings < 0:
                marks[(len(rows) - 2, column)] = marks[(len(rows) - 1, column)] = "loss"
    return table(["", "recommended", "review everything", "review nothing"], rows, table_id="recommendation",
                  marks=marks)


def _versus_text(name: str, versus: Versus, found: Recommendation, metric: str, currency: str | None) -> str:
    said = [f"{escape(metric)} {signed(versus.metric_gain)} ({number(found.metric)} against {number(versus.metric)})"]
    if versus.reviews_saved > 0:
        said.append(f"{versus.reviews_saved:,.0f} fewer reviews")
    elif versus.reviews_saved < 0:
        said.append(f"{-versus.reviews_saved:,.0f} more reviews")
    else:
        said.append("as many reviews")
    if versus.savings is not None:
        percent = "" if versus.savings_percent is None else f" ({abs(versus.savings_percent):.1f}%)"
        said.append(f"{escape(money(versus.savings, currency))}{percent} saved" if versus.savings >= 0
                    else f'<span class="loss">{escape(money(-versus.savings, currency))}{percent} more spent</span>')
    return f"Against {name}: " + ", ".join(said) + "."


def _targets_text(found: Recommendation, metric: str) -> str:
    reached = " and ".join(f"{t:g}" for t in found.reached)
    missed = " and ".join(f"{t:g}" for t in found.missed)
    if not found.missed:
        return f"It reaches every target ({reached})."
    short = f"misses {missed} ({escape(metric)} {number(found.metric)})"
    return f"It reaches {reached} but {short}." if found.reached else f"It {short}."


def _certified_text(certified: CertifiedAlternative, recommended: str | None, metric: str,
                    summary: StudySummary) -> str:
    """The certified alternative and its guarantee in words (``recommended``: the recommended policy, if any)."""
    who = ("The same policy" if certified.policy == recommended
           else f"Certified alternative: <strong>{escape(certified.policy)}</strong>")
    cost = ("" if certified.cost is None
            else f", for {escape(money(certified.cost, currency_of(summary)))} {escape(basis_text(summary))}")
    return (f"{who} at τ = {number(certified.threshold)} (on {escape(certified.knob)}) comes with a guarantee: with "
            f"probability at least {setting_share(certified.confidence)}, at most "
            f"{setting_share(certified.max_error)} of the predictions it lets through are wrong. There it "
            f"leaves {share(certified.auto_rate)} unreviewed at {escape(metric)} {number(certified.metric)}{cost} "
            "(see Certified thresholds).")


def _risk_text(risk: Risk) -> str:
    """One sentence on the larger exposure (rule: :mod:`rpa_sim.study.recommend`)."""
    if risk.kind == "calibration":
        return (f"Main risk, calibration: the model's confidence is off by {number(risk.ece)} on average (ECE) and "
                f"{share(risk.auto_rate)} of predictions go through on confidence alone, so if the confidences "
                "drift, more errors pass than these figures say: re-check calibration on fresh labelled data "
                f"(exposure {number(risk.calibration_exposure)} against {number(risk.reviewer_exposure)} for the "
                "reviewer).")
    return (f"Main risk, the reviewer: {share(1.0 - risk.auto_rate)} of predictions are reviewed and every figure "
            f"assumes the reviewer misses {share(risk.miss_rate)} of errors and breaks "
            f"{share(risk.false_correction_rate)} of right values, so measure these rates on an audited sample "
            f"before relying on the figures (exposure {number(risk.reviewer_exposure)} against "
            f"{number(risk.calibration_exposure)} for calibration).")

