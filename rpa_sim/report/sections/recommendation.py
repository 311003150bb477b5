"""The detail "Against reviewing everything or nothing": the decided point against the two extremes.

It formats the decision (:func:`rpa_sim.study.recommend.decision_of`) with what :mod:`rpa_sim.study.recommend`
reads beside it: what the decided point buys against reviewing everything and nothing, the targets it reaches,
why it may end above reviewing everything, the certified alternative and the main risk. The page shows it only
for a feasible decision, or when nothing is decided (it then says why), so that no page names two points.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from rpa_sim.common.formatting import money, number, setting_share, share, signed
from rpa_sim.report.html import escape, table
from rpa_sim.report.wording import (
    basis_text,
    cost_basis,
    currency_of,
    shown_above,
    unit_suffix,
    why_above_review_all,
)
from rpa_sim.study.recommend import (
    TOLERANCE,
    certified_alternative,
    decision_of,
    main_risk,
    per_day_factor,
    versus,
)

if TYPE_CHECKING:
    from rpa_sim.study.decision import Decision, Point
    from rpa_sim.study.recommend import CertifiedAlternative, Risk, Versus
    from rpa_sim.study.result import StudySummary
    from rpa_sim.study.run import ScenarioResult

__all__ = ["recommendation_section", "shows_the_decision"]


def shows_the_decision(summary: StudySummary) -> bool:
    """Whether the section is on the page: for a feasible decision (the one the opening names), or when nothing
    is decided (it says why); never for an infeasible point, which the opening shows with what it misses."""
    decision = decision_of(summary)
    return decision.feasible or decision.policy is None


def recommendation_section(result: ScenarioResult, metric: str) -> list[str]:
    """The decided point in detail: what it buys against the two extremes, the certified option, the risk."""
    summary = result.summary
    decision = decision_of(summary)
    parts = ['<h2 id="summary">Against reviewing everything or nothing</h2>']
    point = decision.point
    if decision.policy is None or decision.threshold is None or point is None:
        certified = certified_alternative(summary, None)
        parts.append(f'<p class="lead" id="recommendation-text">No recommendation: {escape(decision.reason)}.</p>')
        if certified is not None:
            parts.append(f"<ul><li>{_certified_text(certified, None, metric, summary)}</li></ul>")
        return parts
    predictions = summary.data.predictions
    everything = versus(point, summary.baselines.review_all, auto_rate=0.0 if predictions else None)
    nothing = versus(point, summary.baselines.review_none, auto_rate=1.0 if predictions else None)
    policy = next(p for p in summary.policies if p.policy == decision.policy)
    currency = currency_of(summary)
    where = (f"We recommend <strong>{escape(decision.policy)}</strong> at threshold <strong>τ = "
             f"{number(decision.threshold)}</strong> (on {escape(policy.knob)}), ")
    priced = _same_basis(decision, per_day_factor(summary))
    if decision.basis == "cost":
        why = ("the cheapest point that meets every constraint" + (
            f": {escape(money(point.cost, currency))} {escape(basis_text(summary))}." if priced else
            " (its cost a day is in the Decision; the figures below are for the data, without costs, since "
            "they are priced with the team each point needs, not the decided team)."))
    else:
        why = (f"the policy that leaves the most predictions unreviewed while the {escape(metric)} after review "
               f"reaches the first target, {summary.targets[0]:g}.")
    parts.append(f'<p class="lead" id="recommendation-text">{where}{why}</p>')
    parts.append(_recommendation_table(point, everything, nothing, summary, metric, priced=priced))
    if not priced:
        everything, nothing = replace(everything, savings=None), replace(nothing, savings=None)
    points = [_versus_text("reviewing everything", everything, point, metric, currency),
              _versus_text("reviewing nothing", nothing, point, metric, currency)]
    if summary.targets:
        points.append(_targets_text(point.metric, summary.targets, metric))
    why = why_above_review_all(next(p for p in result.policies if p.name == decision.policy), summary.reviewer)
    if (why and point.metric is not None and everything.metric is not None
            and point.metric > everything.metric + TOLERANCE and shown_above(point.metric, everything.metric)):
        points.append(f"It ends above reviewing everything because {why}.")
    certified = certified_alternative(summary, decision.policy)
    if certified is not None:
        points.append(_certified_text(certified, decision.policy, metric, summary))
    elif any(p.certified is not None for p in summary.policies):
        points.append("No threshold could be certified with the scenario's settings (see Certified thresholds).")
    # a decided point of data with predictions has its auto-rate
    risk = ("" if summary.calibration is None or point.auto_rate is None else
            f'<li id="risk">{_risk_text(main_risk(summary.calibration, summary.reviewer, point.auto_rate))}</li>')
    parts.append("<ul>" + "".join(f"<li>{item}</li>" for item in points) + f"{risk}</ul>")
    return parts


def _same_basis(decision: Decision, per_day: float | None) -> bool:
    """Whether the decided point's cost on its curve (for the data) reconciles with the decision's headline
    cost: the same parts on the same basis, so that the headline is that cost (for the data), or that cost
    times the documents a day over the data's (per day). Otherwise (staffing by the decided team, not by the
    reviewers each τ needs) the curve's costs are not shown beside it: a reader could not reconcile the two."""
    cost, point = decision.cost, decision.point
    if cost is None or point is None or point.cost is None or cost.total is None:
        return False
    scale = 1.0 if cost.per != "day" else per_day
    return scale is not None and abs(cost.total - point.cost * scale) <= 1e-9 * max(1.0, abs(cost.total))


def _recommendation_table(found: Point, everything: Versus, nothing: Versus, summary: StudySummary,
                          metric: str, *, priced: bool) -> str:
    """The decided point against reviewing everything and nothing: quality, automation, reviews and, with
    costs on the decision's basis (``priced``), the cost and the savings, a loss marked."""
    currency = currency_of(summary)
    rows = [[f"{metric} after review", number(found.metric), number(everything.metric), number(nothing.metric)],
            ["auto-rate (share not reviewed)", number(found.auto_rate), number(everything.auto_rate),
             number(nothing.auto_rate)],
            ["items reviewed", number(found.reviewed, 0), number(everything.reviewed, 0), number(nothing.reviewed, 0)]]
    marks = {}
    if summary.costs is not None and priced:
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
        for column, against in ((2, everything), (3, nothing)):
            if against.savings is not None and against.savings < 0:
                marks[(len(rows) - 2, column)] = marks[(len(rows) - 1, column)] = "loss"
    return table(["", "recommended", "review everything", "review nothing"], rows, table_id="recommendation",
                  marks=marks)


def _versus_text(name: str, against: Versus, found: Point, metric: str, currency: str | None) -> str:
    said = [f"{escape(metric)} {signed(against.metric_gain)} ({number(found.metric)} against {number(against.metric)})"]
    if against.reviews_saved > 0:
        said.append(f"{against.reviews_saved:,.0f} fewer reviews")
    elif against.reviews_saved < 0:
        said.append(f"{-against.reviews_saved:,.0f} more reviews")
    else:
        said.append("as many reviews")
    if against.savings is not None:
        percent = "" if against.savings_percent is None else f" ({abs(against.savings_percent):.1f}%)"
        said.append(f"{escape(money(against.savings, currency))}{percent} saved" if against.savings >= 0
                    else f'<span class="loss">{escape(money(-against.savings, currency))}{percent} more spent</span>')
    return f"Against {name}: " + ", ".join(said) + "."


def _targets_text(quality: float | None, targets: tuple[float, ...], metric: str) -> str:
    """The targets the decided quality reaches, and those it misses."""
    reached = [t for t in targets if quality is not None and quality >= t]
    missed = [t for t in targets if quality is None or quality < t]
    if not missed:
        return f"It reaches every target ({' and '.join(f'{t:g}' for t in reached)})."
    short = f"misses {' and '.join(f'{t:g}' for t in missed)} ({escape(metric)} {number(quality)})"
    return f"It reaches {' and '.join(f'{t:g}' for t in reached)} but {short}." if reached else f"It {short}."


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
        return (f"Calibration: the model's confidence is off by {number(risk.ece)} on average (ECE) and "
                f"{share(risk.auto_rate)} of predictions go through on confidence alone, so if the confidences "
                "drift, more errors pass than these figures say: re-check calibration on fresh labelled data "
                f"(exposure {number(risk.calibration_exposure)} against {number(risk.reviewer_exposure)} for the "
                "reviewer).")
    return (f"The reviewer: {share(1.0 - risk.auto_rate)} of predictions are reviewed and every figure "
            f"assumes the reviewer misses {share(risk.miss_rate)} of errors and breaks "
            f"{share(risk.false_correction_rate)} of right values, so measure these rates on an audited sample "
            f"before relying on the figures (exposure {number(risk.reviewer_exposure)} against "
            f"{number(risk.calibration_exposure)} for calibration).")

