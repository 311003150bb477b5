"""The decision told in plain words, decided once for every page (``docs/decision.md``, "Told plainly").

:func:`told` reads a study's result (:class:`~rpa_sim.study.result.StudySummary`)
and says, once, what every page (``rpa-sim run``, the report, the dashboard)
prints about its decision: whether a plan meets the constraints, what the policy
does, the share that goes straight through, the team per shift, the one headline
cost, each constraint met or not, the main risk and the next step, and when
nothing is feasible, the alternatives (cheapest feasible first). The pages lay
these out; none chooses its own figures or words. The rules of the advice:

- **Sample too small** first: fewer than :data:`MIN_DOCUMENTS` documents, or
  a decided policy whose certified threshold rests on at most one document's
  worth of items (its accepted calibration items no more than a document holds
  on average).
- **Main risk**: a constraint not met (the binding one first); else τ at an
  edge of the swept range beyond which another point lies
  (:func:`~rpa_sim.route.grid_edge.at_edge`); else the tightest constraint's
  margin (the binding constraint, which stops a better point, else the smallest
  margin relative to its target); with no constraint, the larger of the
  calibration and reviewer exposures (:func:`~rpa_sim.study.recommend.main_risk`).
- **Next step**: with a sample too small, label more; when infeasible, take an
  alternative or relax the binding constraint; else pilot the decision, and
  audit a random sample of what goes straight through only when at least
  :data:`AUDIT_FLOOR` of the predictions do (below it there is too little to
  audit: watch the quality of the reviewed output instead).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rpa_sim.common.formatting import count, money, number, share
from rpa_sim.common.formatting import team as team_formatted
from rpa_sim.study.recommend import decision_of, main_risk

if TYPE_CHECKING:
    from rpa_sim.operate.queue.results import Team
    from rpa_sim.route.costs import CostSplit
    from rpa_sim.study.decision import Alternative, Constraint, Decision, Offer
    from rpa_sim.study.result import StudySummary

__all__ = ["Told", "Row", "Option", "told", "constraint_label", "constraint_value", "constraint_rows",
           "constraints_words", "team_words", "cost_words", "MIN_DOCUMENTS", "AUDIT_FLOOR", "GLOSSARY",
           "FLOORS"]

#: Fewer documents than this, and a decision says its sample is too small before anything else.
MIN_DOCUMENTS = 30
#: The share of predictions going straight through below which auditing them is not advised.
AUDIT_FLOOR = 0.01
#: The constraints met at or above their target; the others at or below.
FLOORS = frozenset({"quality", "service_level"})
#: The words a page links to its glossary, and what each means (the report's "Glossary").
GLOSSARY = {
    "τ": "the threshold: a prediction whose confidence is below τ goes to a person; the others go straight "
         "through.",
    "auto-rate": "the share of predictions that go straight through, unchecked.",
    "★": "the decision: the one point chosen, which meets every constraint. Nothing else is starred; when no "
         "point meets every constraint, nothing is.",
    "✓ / ✗": "a constraint met, or not met, at that point.",
    "service level": "the share of documents the team finishes within the time the scenario allows.",
    "binds": "a binding constraint is the one that stops a cheaper (or more automated) point.",
    "ECE": "expected calibration error: how far the model's confidence is from how often it is right, on "
           "average.",
    "KIEval_Aligned^τ": "the quality of the extracted fields after review, counting the errors a reviewer fixes "
                        "(0 to 1, higher is better).",
    "ANLS": "average normalised Levenshtein similarity of the answers (0 to 1, higher is better).",
    "least cost": "a policy's cheapest threshold under no constraint; it may fail one.",
}


@dataclass(frozen=True)
class Row:
    """A constraint at a point as a page shows it: its label, the target (``≥ 90.0%``), the value, met."""

    name: str
    label: str
    needed: str
    reached: str
    met: bool

    @property
    def mark(self) -> str:
        return "✓ met" if self.met else "✗ not met"


@dataclass(frozen=True)
class Option:
    """An alternative when no plan meets the constraints: the point in words, its team, its cost, its
    constraints, and what would have to change (the team needed, or the constraints to relax)."""

    words: str
    team: str | None
    cost: str | None
    rows: tuple[Row, ...]
    feasible: bool
    change: str

    @property
    def marks(self) -> str:
        """Each constraint's value there, met (✓) or not (✗)."""
        return ", ".join(f"{row.label} {row.reached} {'✓' if row.met else '✗'}" for row in self.rows)

    @property
    def line(self) -> str:
        """The alternative in one line: the point, its cost a day, its constraints, what would change."""
        cost = "" if self.cost is None else f", {self.cost}"
        return f"{self.words}{cost}: {self.marks}; {self.change}"


@dataclass(frozen=True)
class Told:
    """Everything a page says about a study's decision (:func:`told`); None where it has nothing to say.

    ``feasible`` is None when nothing was decided (``heading`` and ``lead`` say why). ``point`` names the decided
    point, or the nearest one when nothing is feasible (``"confidence at τ = 0.9931"``). ``parts`` split the
    headline cost by kind: those that are not zero, and staffing whenever the scenario prices a team (never
    "staffing 0.00" without a staffing model).
    """

    feasible: bool | None
    heading: str
    sample: str | None
    lead: str
    point: str | None
    does: str | None
    through: str | None
    team: str | None
    cost: str | None
    parts: tuple[tuple[str, float], ...]
    rows: tuple[Row, ...]
    binding: str | None
    risk: str | None
    next_step: str
    options: tuple[Option, ...]


def constraint_label(name: str, metric: str | None = None) -> str:
    """A constraint's name in words (quality names its metric when given).

    >>> constraint_label("service_level"), constraint_label("quality", "KIEval_Aligned^τ")
    ('service level', 'quality (KIEval_Aligned^τ)')
    """
    if name == "quality" and metric is not None:
        return f"quality ({metric})"
    return {"cost_per_day": "cost a day", "certified_error": "certified error"}.get(name, name.replace("_", " "))


def constraint_value(name: str, value: float | None, currency: str | None = None) -> str:
    """A constraint's figure in the one format of every page: shares (service level, error) as percentages,
    money with its currency, reviewers as a count, quality with four decimals.

    >>> constraint_value("service_level", 0.9214), constraint_value("cost_per_day", 4000, "EUR")
    ('92.1%', '4,000.00 EUR')
    """
    if value is None:
        return "-"
    if name in ("service_level", "certified_error"):
        return share(value)
    if name == "reviewers":
        return count(value)
    if name == "cost_per_day":
        return money(value, currency)
    return number(value)


def constraint_rows(constraints: tuple[Constraint, ...], *, metric: str | None = None,
                    currency: str | None = None) -> tuple[Row, ...]:
    """Each constraint as a page shows it."""
    return tuple(Row(c.name, constraint_label(c.name, metric),
                     f"{'≥' if c.name in FLOORS else '≤'} {constraint_value(c.name, c.target, currency)}",
                     _reached(c, currency), c.met) for c in constraints)


def _reached(constraint: Constraint, currency: str | None) -> str:
    """A constraint's value there. A certified error's value is the error measured on the data at τ, not the
    certified bound: said so, with whether τ is certified (the measured error may well be under the bound on
    too few values to certify it)."""
    value = constraint_value(constraint.name, constraint.value, currency)
    if constraint.name == "certified_error":
        return f"{value} measured, {'certified' if constraint.met else 'not certified'}"
    return value


def constraints_words(constraints: tuple[Constraint, ...], *, currency: str | None = None) -> str:
    """Every constraint at a point in one line, each value against its target with ✓ or ✗.

    >>> from rpa_sim.study.decision import Constraint
    >>> constraints_words((Constraint("quality", 0.95, 0.9652, True), Constraint("service_level", 0.9, 0.115,
    ...                                                                           False)))
    'quality 0.9652 ≥ 0.9500 ✓, service level 11.5% ≥ 90.0% ✗'
    """
    return ", ".join(f"{row.label} {row.reached} {row.needed} {'✓' if row.met else '✗'}"
                     for row in constraint_rows(constraints, currency=currency))


def team_words(team: Team | None, *, hours: bool = True) -> str | None:
    """A team as people per shift (``hours``: with each shift's hours), as every page writes a team
    (:func:`rpa_sim.common.formatting.team`).

    >>> from rpa_sim.operate.queue.results import Team
    >>> team_words(Team(extra_per_shift=0, shifts=((7, 13, 4), (13, 19, 4)), count=None))
    '4 people a shift, 2 shifts (07–13 h, 13–19 h)'
    >>> team_words(Team(extra_per_shift=0, shifts=None, count=3))
    '3 people round the clock'
    """
    return None if team is None else team_formatted(shifts=team.shifts, count=team.count, hours=hours)


def cost_words(cost: CostSplit | None) -> str | None:
    """The headline cost: the total a day, or for the data (said so) when the scenario gives no volume.

    >>> from rpa_sim.route.costs import CostSplit
    >>> cost_words(CostSplit(review=1.0, staffing=0.0, errors=3.0, rejected=0.0, total=4.0, currency="EUR",
    ...                      per="day"))
    '4.00 EUR a day'
    """
    if cost is None or cost.total is None:
        return None
    return f"{money(cost.total, cost.currency)} {'a day' if cost.per == 'day' else 'for the data'}"


def told(summary: StudySummary) -> Told:
    """What every page says about the summary's decision (:mod:`rpa_sim.study.told`)."""
    decision = decision_of(summary)
    sample = _sample(summary, decision)
    if decision.policy is None or decision.threshold is None:
        return Told(None, "No decision", sample, f"No decision: {decision.reason}.", None, None, None, None, None,
                    (), (), None, "nothing is decided, so nothing is at risk yet.",
                    "give the scenario what it lacks, then run it again.", ())
    currency = None if decision.cost is None else decision.cost.currency
    metric = _metric_label(summary)
    rows = constraint_rows(decision.constraints, metric=metric, currency=currency)
    binding = None if decision.binding is None else constraint_label(decision.binding)
    policy = next((p for p in summary.policies if p.policy == decision.policy), None)
    does = None if policy is None or not policy.description else policy.description
    through = _through(summary, decision)
    if decision.feasible:
        heading = "Decision"
        lead = f"Run {decision.policy} at τ = {number(decision.threshold)}."
        options: tuple[Option, ...] = ()
    else:
        heading = "No plan meets the constraints"
        lead = f"No plan meets the constraints: {_binding_words(decision, rows)}."
        options = _options(decision, metric, currency)
    point = f"{decision.policy} at τ = {number(decision.threshold)}"
    return Told(decision.feasible, heading, sample, lead, point, does, through, team_words(decision.reviewers),
                cost_words(decision.cost), _parts(summary, decision.cost), rows, binding,
                _risk(summary, decision, rows, sample), _next_step(summary, decision, sample, options), options)


def _parts(summary: StudySummary, cost: CostSplit | None) -> tuple[tuple[str, float], ...]:
    if cost is None:
        return ()
    staffed = summary.operations is not None and summary.operations.hourly_cost is not None
    parts = (("review", cost.review), ("staffing", cost.staffing), ("errors left", cost.errors),
             ("rejected", cost.rejected), ("signals computed", cost.signals))
    return tuple((label, value) for label, value in parts
                 if value is not None and (value != 0 or (label == "staffing" and staffed)))


def _metric_label(summary: StudySummary) -> str:
    return "KIEval_Aligned^τ" if summary.metric == "kieval_aligned" else summary.metric.upper() \
        if summary.metric == "anls" else summary.metric.replace("_", " ")


def _documents(summary: StudySummary) -> int:
    data = summary.data
    return data.documents if hasattr(data, "documents") else data.questions


def _sample(summary: StudySummary, decision: Decision) -> str | None:
    documents = _documents(summary)
    if documents < MIN_DOCUMENTS:
        return (f"The sample is too small: {count(documents)} {'document' if documents == 1 else 'documents'}, "
                f"fewer than {MIN_DOCUMENTS}; no figure here is reliable yet.")
    policy = next((p for p in summary.policies if p.policy == decision.policy), None)
    certified = None if policy is None else policy.certified
    accepted = getattr(certified, "accepted_n", None)
    per_document = summary.data.predictions / documents if documents else 0.0
    if getattr(certified, "threshold", None) is not None and accepted is not None and accepted <= per_document:
        return (f"The sample is too small: the certified threshold rests on {count(accepted)} items, one "
                "document's worth; label more before relying on it.")
    return None


def _through(summary: StudySummary, decision: Decision) -> str | None:
    point = decision.point
    if point is None or point.documents_straight_through is None:
        return None
    documents = _documents(summary)
    through = round(point.documents_straight_through)
    return f"{count(through)} of {count(documents)} documents go straight through."


def _binding_words(decision: Decision, rows: tuple[Row, ...]) -> str:
    """The binding constraint in words, and, when no point meets it even alone, that it is out of reach."""
    row = next((row for row in rows if row.name == decision.binding), None)
    if row is None:
        return decision.reason
    label = row.label.split(" (")[0]
    alone = "no point meets it even alone" if "on its own" in decision.reason else "the others can be met without it"
    return f"the {label} target ({row.needed}) binds: {alone}"


def _options(decision: Decision, metric: str, currency: str | None) -> tuple[Option, ...]:
    """The alternatives, cheapest feasible first, then the others by cost."""

    def option(point: Alternative | Offer) -> Option:
        rows = constraint_rows(point.constraints, currency=currency)
        missed = [row.label for row in rows if not row.met]
        team = team_words(point.reviewers, hours=False)
        change = (f"relax {' and '.join(missed)}" if missed
                  else "needs " + (team if team is not None else "no other change"))
        return Option(f"{point.policy} at τ = {number(point.threshold)}", team, cost_words(point.cost), rows,
                      not missed, change)

    def key(point: Alternative) -> tuple:
        total = None if point.cost is None else point.cost.total
        return (not all(c.met for c in point.constraints), total is None, total or 0.0)

    return tuple(option(point) for point in sorted(decision.alternatives, key=key))


def _margin(row_constraint: Constraint) -> float:
    """How far a met constraint is from its target, relative to it (0 when the target is 0)."""
    value, target = row_constraint.value, row_constraint.target
    if value is None or not target:
        return 0.0
    gap = value - target if row_constraint.name in FLOORS else target - value
    return gap / abs(target)


def _margin_words(constraint: Constraint, currency: str | None) -> str:
    name, value, target = constraint.name, constraint.value, constraint.target
    label = constraint_label(name)
    shown = f"{label} {constraint_value(name, value, currency)} against {constraint_value(name, target, currency)}"
    if value is None:
        return f"{shown}."
    gap = abs(value - target)
    if name in ("service_level", "certified_error"):
        return f"{shown} is {100 * gap:.1f} points of margin."
    if name == "reviewers":
        return f"{shown} leaves {count(gap)} to spare."
    if name == "cost_per_day":
        return f"{shown} leaves {money(gap, currency)} a day to spare."
    return f"{shown} is {number(gap)} of margin."


def _risk(summary: StudySummary, decision: Decision, rows: tuple[Row, ...], sample: str | None) -> str | None:
    currency = None if decision.cost is None else decision.cost.currency
    if sample is not None:
        return sample
    if not decision.feasible:  # no plan to put at risk: the lead names the binding constraint, the table the rest
        return None
    missed = [c for c in decision.constraints if not c.met]
    if missed:  # a decision read from a file may say it is feasible and still miss a constraint
        return (f"{constraint_label(missed[0].name)} {constraint_value(missed[0].name, missed[0].value, currency)} "
                f"against {constraint_value(missed[0].name, missed[0].target, currency)}, not met.")
    if decision.edge_of_range:
        return "τ is at an edge of the thresholds swept, and a better point may lie beyond: widen them."
    # the team's size is chosen, not measured, and the certified error is certified: neither is at risk
    marginal = [c for c in decision.constraints if c.name not in ("certified_error", "reviewers")
                and c.value is not None]
    if marginal:
        return _margin_words(min(marginal, key=_margin), currency)
    point = decision.point
    if point is None or point.auto_rate is None or summary.calibration is None:
        return "every figure rests on the scenario's reviewer and the model's confidence: check both on live data."
    risk = main_risk(summary.calibration, summary.reviewer, point.auto_rate)
    if risk.kind == "calibration":
        return (f"calibration: {share(risk.auto_rate)} of predictions pass on confidence alone, off by "
                f"{number(risk.ece)} on average (ECE).")
    return (f"the reviewer: {share(1.0 - risk.auto_rate)} of predictions are reviewed, assuming the reviewer misses "
            f"{share(risk.miss_rate)} of errors.")


def _next_step(summary: StudySummary, decision: Decision, sample: str | None, options: tuple[Option, ...]) -> str:
    if sample is not None:
        return f"label at least {MIN_DOCUMENTS} documents (more for a certified threshold) and run again."
    if not decision.feasible:
        binding = None if decision.binding is None else constraint_label(decision.binding)
        relax = "" if binding is None else f", or relax the {binding} target"
        return ("take the first alternative" if options else "let the scenario vary more (team, thresholds, "
                "policies)") + relax + "."
    team = "" if decision.reviewers is None else " with this team"
    point = decision.point
    auto = None if point is None else point.auto_rate
    if auto is not None and auto >= AUDIT_FLOOR:
        check = "audit a sample of what goes straight through"
    else:
        check = "check a sample of the reviewed output"
    watch = "" if decision.reviewers is None else "; track the service level"
    return f"pilot it{team} for two weeks; {check}{watch}."
