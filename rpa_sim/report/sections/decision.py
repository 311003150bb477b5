"""The report's opening: the decision in at most 250 words and one figure.

It formats the study's decision (``StudySummary.decision``, a
:class:`rpa_sim.study.decision.Decision`: the policy, τ and team, the constraints
against their targets, the cost split by kind, the alternatives, the decided
point) and computes nothing: every figure is the decision's. A summary without a decision (written before it
existed) gets the same section from the recommendation rules (:func:`rpa_sim.study.recommend.decision_of`).
:func:`rpa_sim.report.page.render_report` puts the section first; everything else follows it as details.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rpa_sim.common.formatting import money, number, share
from rpa_sim.operate.queue.results import Team  # at run time too: the doctests build one
from rpa_sim.report.decided import chosen_point
from rpa_sim.report.html import escape, table
from rpa_sim.report.svg import figure_html
from rpa_sim.report.wording import basis_text
from rpa_sim.study.recommend import decision_of, main_risk

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from rpa_sim.route.costs import CostSplit
    from rpa_sim.study.decision import Decision
    from rpa_sim.study.result import StudySummary
    from rpa_sim.study.run import ScenarioResult

__all__ = ["DAYS_PER_MONTH", "decision_section"]

#: A month's cost is the day's times this: 365.25 days over 12 months, rounded as a reader can check it.
DAYS_PER_MONTH = 30.4
# what each constraint's target bounds: a floor (at least) or a ceiling (at most)
_FLOORS = {"quality", "service_level"}
_ALTERNATIVES_SHOWN = 3


def decision_section(result: ScenarioResult, figures: dict[str, Figure]) -> list[str]:
    """The section's HTML parts: the decision, its cost, the targets, the main risk, the next step, the figure."""
    summary = result.summary
    decision = decision_of(summary)
    parts = ['<section class="decision" id="decision">', "<h2>Decision</h2>"]
    if decision.policy is None:
        parts += [f'<p class="lead" id="decision-text">No decision: {escape(decision.reason)}.</p>',
                  '<p id="decision-next"><strong>Next step:</strong> give the scenario what it lacks, then run it '
                  "again.</p>"]
    else:
        parts.append(f'<p class="lead" id="decision-text">{_lead(decision, summary)}</p>')
        parts += _cost_parts(decision.cost, summary)
        if decision.constraints:
            parts.append(_constraints_table(decision, result.table.metric_label))
        parts.append(f'<p id="decision-risk"><strong>Main risk:</strong> {_risk_words(result, decision)}</p>')
        parts += _next_step(decision)
    if "decision" in figures:
        parts.append(figure_html(figures["decision"], "decision", "Quality against automation per policy; the "
                                                                   "star is the decision."))
    return [*parts, "</section>"]


def _lead(decision: Decision, summary: StudySummary) -> str:
    """The decision in one sentence: what to run, with whom, and why that point."""
    knob = next((p.knob for p in summary.policies if p.policy == decision.policy), None)
    run = (f"<strong>{escape(decision.policy)}</strong> at <strong>τ = {number(decision.threshold)}</strong>"
           + ("" if knob is None else f" (on {escape(knob)})") + _team(decision.reviewers))
    if not decision.feasible:
        why = decision.reason or "no point meets every target"
        return f"No point meets every target: {escape(why)}. The nearest is {run}."
    missed = [c for c in decision.constraints if not c.met]
    if decision.basis == "target":
        why = "the most automation that meets every target"
    else:
        why = "the cheapest point" + (" that meets every target" if decision.constraints and not missed else "")
    binding = decision.binding
    binds = "" if binding is None else f"; {escape(_constraint_label(binding, None))} binds"
    return f"Run {run}: {why}{binds}."


def _clock(hour: float) -> str:
    """An hour of the day as a shift's bound reads: ``07``, or ``07:30`` for a half hour.

    >>> _clock(7), _clock(13.0), _clock(7.5)
    ('07', '13', '07:30')
    """
    whole, minutes = int(hour), round((hour % 1) * 60)
    return f"{whole:02d}" if not minutes else f"{whole:02d}:{minutes:02d}"


def _team(reviewers: Team | None) -> str:
    """`` with ...``: the team the decision needs, in words (nothing without operations).

    Examples
    --------
    >>> _team(Team(extra_per_shift=2, shifts=((7, 13, 6), (13, 19, 6)), count=None))
    ' with 6 reviewers 07–13 h and 6 reviewers 13–19 h (2 more a shift than planned)'
    >>> _team(Team(extra_per_shift=0, shifts=None, count=1)), _team(None)
    (' with 1 reviewer (the team as planned)', '')
    """
    if reviewers is None:
        return ""
    if reviewers.shifts:
        team = " and ".join(f"{count} reviewer{'' if count == 1 else 's'} {_clock(start)}–{_clock(end)} h"
                            for start, end, count in reviewers.shifts)
    else:
        count = reviewers.count
        team = f"{count} reviewer{'' if count == 1 else 's'}"
    extra = reviewers.extra
    if extra > 0:
        change = f"{extra} more a shift than planned"
    elif extra < 0:
        change = f"{-extra} fewer a shift than planned"
    else:
        change = "the team as planned"
    return f" with {team} ({change})"


def _cost_parts(cost: CostSplit | None, summary: StudySummary) -> list[str]:
    """The cost by kind: per day and per month, or for the data when the scenario gives no daily volume."""
    if cost is None:
        return ['<p id="decision-cost">No costs are set, so the decision is the most automation that meets the '
                "targets.</p>"]
    kinds = [(label, value) for label, value in (("review", cost.review), ("staffing", cost.staffing),
                                                 ("errors left", cost.errors), ("rejected", cost.rejected),
                                                 ("signals computed", cost.signals))
             if value is not None and not (label == "rejected" and value == 0)]
    rows = [*kinds, ("total", cost.total)]
    unit = "" if cost.currency is None else f" ({cost.currency})"
    if cost.per == "day":
        per_day = table([f"cost{unit}", "per day", "per month"],
                        [[label, money(value), money(None if value is None else value * DAYS_PER_MONTH)]
                         for label, value in rows],
                        table_id="decision-cost")
        return [per_day, f'<p class="note">A month is {DAYS_PER_MONTH:g} days: per month = per day × '
                         f"{DAYS_PER_MONTH:g}.</p>"]
    for_data = table([f"cost{unit}", "for the data"], [[label, money(value)] for label, value in rows],
                     table_id="decision-cost")
    return [for_data, f'<p class="note">Costs are {escape(basis_text(summary))}: the scenario sets no daily '
                      "volume (<code>costs.volume_per_day</code>).</p>"]


def _constraint_label(name: str, metric: str | None) -> str:
    """A constraint's name in words; quality names the metric when given."""
    if name == "quality" and metric is not None:
        return f"quality ({metric})"
    return name.replace("_", " ")


def _constraint_value(name: str, value: float | None, currency: str | None) -> str:
    """A constraint's figure as the reader expects it: shares as percentages, money with its currency."""
    if value is None:
        return "-"
    if name in ("service_level", "certified_error"):
        return share(value)
    if name == "reviewers":
        return f"{value:g}"
    if name.startswith("cost"):
        return money(value, currency)
    return number(value)


def _constraints_table(decision: Decision, metric: str) -> str:
    """Each constraint against its target, met or not in words and a mark."""
    currency = None if decision.cost is None else decision.cost.currency
    rows, marks = [], {}
    for index, constraint in enumerate(decision.constraints):
        name = constraint.name
        bound = "≥" if name in _FLOORS else "≤"
        rows.append([_constraint_label(name, metric), f"{bound} {_constraint_value(name, constraint.target, currency)}",
                     _constraint_value(name, constraint.value, currency),
                     "✓ met" if constraint.met else "✗ not met"])
        marks.update({(index, 1): "nowrap", (index, 2): "nowrap", (index, 3): "met" if constraint.met else "unmet"})
    return table(["target", "needed", "reached", ""], rows, table_id="decision-targets", marks=marks)


def _risk_words(result: ScenarioResult, decision: Decision) -> str:
    """The main risk: a target missed (the binding one when nothing meets every target), else τ at the edge of
    the swept range, else the larger exposure of :mod:`rpa_sim.study.recommend` at the chosen auto-rate."""
    metric = result.table.metric_label
    currency = None if decision.cost is None else decision.cost.currency
    missed = [c for c in decision.constraints if not c.met]
    if missed:
        binding = next((c for c in missed if c.name == decision.binding), missed[0])
        name = binding.name
        return (f"{escape(_constraint_label(name, metric))} reaches "
                f"{escape(_constraint_value(name, binding.value, currency))}"
                f" against {escape(_constraint_value(name, binding.target, currency))}: the target is not met.")
    if decision.edge_of_range:
        return ("τ is at the edge of the thresholds swept, so a better point may lie beyond them: widen "
                "<code>thresholds</code> and run again.")
    point = chosen_point(decision)
    summary = result.summary
    if point is None or summary.calibration is None:
        return "every figure rests on the scenario's reviewer and model confidence: check both on live data."
    risk = main_risk(summary.calibration, summary.reviewer, point[0])
    if risk.kind == "calibration":
        return (f"calibration. {share(risk.auto_rate)} of predictions pass on confidence alone, which is off by "
                f"{number(risk.ece)} on average (ECE): if it drifts, more errors pass unseen. Re-check it on fresh "
                "labelled data.")
    return (f"the reviewer. {share(1.0 - risk.auto_rate)} of predictions are reviewed, and every figure assumes "
            f"the reviewer misses {share(risk.miss_rate)} of errors and breaks {share(risk.false_correction_rate)}"
            " of right values. Measure both on an audited sample.")


def _next_step(decision: Decision) -> list[str]:
    """What to do now: pilot a feasible decision; otherwise pick an alternative or relax the target."""
    if decision.feasible:
        team = "" if decision.reviewers is None else " with this team"
        watch = "the quality" + ("" if decision.reviewers is None else " and track the service level")
        return [f'<p id="decision-next"><strong>Next step:</strong> pilot {escape(decision.policy)} at '
                f"τ = {number(decision.threshold)}{team} for two weeks, and audit a random sample of the "
                f"auto-accepted items to confirm {watch}.</p>"]
    binding = decision.binding
    relax = "" if binding is None else f" or relax the {escape(_constraint_label(binding, None))} target"
    alternatives = decision.alternatives[:_ALTERNATIVES_SHOWN]
    if not alternatives:
        return [f'<p id="decision-next"><strong>Next step:</strong> let the scenario vary more (team, thresholds, '
                f"policies){relax}.</p>"]
    items = []
    for alternative in alternatives:
        cost = alternative.cost
        price = "" if cost is None else (f" ({escape(money(cost.total, cost.currency))}"
                                         + (" a day" if cost.per == "day" else " for the data") + ")")
        items.append(f"<li>{escape(alternative.note)}{price}</li>")
    return [f'<p id="decision-next"><strong>Next step:</strong> choose one of these{relax}:</p>',
            '<ul id="decision-alternatives">' + "".join(items) + "</ul>"]
