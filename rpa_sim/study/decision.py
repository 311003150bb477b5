"""The one decision of a study: which policy, at which threshold, with which team, at what cost.

:func:`decide` weighs every policy of the scenario, every threshold of its
grid (``thresholds``; ``exact``: the exact curve) and every team the scenario
allows (``operations`` with ``decision.team``), and keeps the points that meet
every constraint the scenario states:

- ``quality``: the post-correction metric reaches the scenario's **first**
  target (as :mod:`rpa_sim.study.recommend` always read the targets); with an
  ``operations`` section, documents the team releases unreviewed count as they
  came (:func:`~rpa_sim.operate.queue.summary.released_quality`);
- ``service_level``: the team, simulated as the Operations section does
  (:meth:`~rpa_sim.operate.queue.summary.OperationModel.simulated`), completes the
  share of documents in time;
- ``reviewers`` and ``cost_per_day``: the budget of ``decision:``;
- ``certified_error``: with a ``certify`` section, τ is at or above the
  policy's certified threshold (the guarantee holds for those thresholds only).

With costs it takes the cheapest feasible point (ties: more automation, fewer
reviewers, the policy listed first, the lower τ); without, the most automation
(ties: fewer reviewers, higher quality, then as before). ``docs/decision.md``
gives the rule, the search and what is reported when nothing is feasible.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal, TypeVar

import numpy as np

from rpa_sim.common.typedjson import left_out
from rpa_sim.operate.queue.results import Simulation, Team
from rpa_sim.route.costs import CostBreakdown, CostSplit
from rpa_sim.route.grid_edge import at_edge
from rpa_sim.route.policies import Policy

if TYPE_CHECKING:
    from rpa_sim.operate.queue.summary import OperationModel
    from rpa_sim.route.sweep import Curve, Sweeper
    from rpa_sim.study.scenario import Scenario

__all__ = ["Decision", "Constraint", "Alternative", "AlternativeKind", "Offer", "OfferKind", "Point", "decide",
           "CONSTRAINTS"]

#: Every constraint a decision may report, in the order it reports them.
CONSTRAINTS = ("quality", "service_level", "reviewers", "cost_per_day", "certified_error")
#: Team sizes beyond the scenario's largest that the "team for threshold" alternative tries.
_MORE_TEAMS = 100
#: How an alternative point was found (docs/decision.md).
AlternativeKind = Literal["team_for_threshold", "threshold_for_team", "best_within_budget"]
#: Which point a page offers (docs/decision.md, "Every point offered"): a policy's best point meeting every
#: constraint (the dashboard's ``o``), its least cost under no constraint, the most automation reaching a target
#: (``g``).
OfferKind = Literal["best_feasible", "least_cost", "target"]
_Setting = TypeVar("_Setting")
#: Simulations a decision runs point by point before it takes the service level to fall as τ rises, and finds
#: where it fails by bisection (docs/decision.md, "The search").
EXACT_SIMULATIONS = 64


@dataclass(frozen=True)
class Constraint:
    """One constraint at a point: ``met`` when ``value`` is on the right side of ``target``.

    ``quality`` and ``service_level`` are met at or above their target,
    ``reviewers`` and ``cost_per_day`` at or below; ``certified_error``
    reports the error rate of the items auto-accepted at τ, measured on the
    data, and is met when τ is at or above the certified threshold.
    """

    name: str
    target: float
    value: float | None
    met: bool


@dataclass(frozen=True)
class Point:
    """The chosen point's figures on its policy's curve, for the scenario's data (as ``cost_optimum`` gives
    them): auto-rate, quality after review (releases aside), items reviewed and cost (None without costs), and
    the documents that go straight through, none of their items reviewed (None before schema version 4)."""

    auto_rate: float | None
    metric: float | None
    reviewed: float
    cost: float | None
    documents_straight_through: float | None = left_out()


@dataclass(frozen=True)
class Alternative:
    """A point near the decision when none is feasible (``kind``: how it was found), with its constraints."""

    kind: AlternativeKind
    policy: str
    threshold: float
    reviewers: Team | None
    constraints: tuple[Constraint, ...]
    cost: CostSplit | None
    note: str


@dataclass(frozen=True)
class Offer:
    """A point a page offers besides the decision, with every constraint there (``docs/decision.md``).

    ``kind`` says which: ``best_feasible``, the policy's best point meeting
    every constraint (cheapest with costs, else the most automation) on the
    scenario's grid; ``least_cost``, its cheapest τ under no constraint (the
    policy's ``cost_optimum``); ``target``, the most automation reaching
    ``target`` (its operating point). ``reviewers`` is the smallest team the
    scenario allows that meets the constraints there, else the team as planned;
    ``cost`` is priced as the decision's (per day when the scenario gives a volume).
    """

    kind: OfferKind
    policy: str
    threshold: float
    target: float | None
    reviewers: Team | None
    constraints: tuple[Constraint, ...]
    cost: CostSplit | None

    @property
    def feasible(self) -> bool:
        """Whether the point meets every constraint."""
        return all(constraint.met for constraint in self.constraints)


@dataclass(frozen=True)
class Decision:
    """The study's decision: the ``decision`` of ``summary.json`` (``docs/decision.md``).

    ``policy`` and ``threshold`` are None only when there is nothing to
    decide (``reason`` says why). ``binding`` names the constraint that stops
    a better point. When no point is feasible (``feasible`` false), it names
    the constraint that cannot be met, the point is the best one meeting the
    others (its ``constraints`` show what it misses), ``reason`` says so in
    words and ``alternatives`` give the nearest feasible points. ``cost`` is
    per day (the scenario gives a volume) or for the scenario's data.
    ``rules`` are the decided policy's (what ``export-policy --from`` writes);
    None in a summary written before they were kept (schema version 2).
    ``offers`` are the other points the pages offer, each with its constraints
    (None before schema version 4).
    """

    policy: str | None
    threshold: float | None
    reviewers: Team | None
    feasible: bool
    constraints: tuple[Constraint, ...]
    binding: str | None
    cost: CostSplit | None
    alternatives: tuple[Alternative, ...]
    basis: Literal["cost", "target"]
    edge_of_range: bool
    reason: str
    point: Point | None = None
    rules: Policy | None = left_out()
    offers: tuple[Offer, ...] | None = left_out()


@dataclass(frozen=True)
class _Point:
    """A (policy, threshold, team) of the search: indices into the policies, their grids and the teams."""

    policy: int
    index: int
    extra: int
    key: tuple = field(compare=False)


def decide(scenario: Scenario, sweepers: Sequence[Sweeper], curves: Sequence[Curve],
           certified: Sequence[float | None], model: OperationModel | None, *,
           offered: Sequence[Sequence[tuple[OfferKind, float | None, float]]] | None = None) -> Decision:
    """The scenario's decision over its policies' curves (:mod:`rpa_sim.study.decision`).

    Parameters
    ----------
    scenario : Scenario
    sweepers : sequence of Sweeper
        The policies' sweepers on the data.
    curves : sequence of Curve
        Their curves on the scenario's grid, in the same order, with their cost basis.
    certified : sequence of float or None
        Each policy's certified threshold (None: not certified); read only with a ``certify`` section.
    model : OperationModel or None
        The scenario's operation (its ``operations`` section).
    offered : sequence of sequences of (kind, target, threshold), optional
        Per policy, the points its pages offer off the grid (its ``least_cost`` and each ``target``'s
        operating point): the decision's ``offers`` gives each with its constraints, and each policy's
        ``best_feasible`` point. Without it, ``offers`` is None.
    """
    basis: Literal["cost", "target"] = "cost" if scenario.costs is not None else "target"
    if not sweepers or not len(sweepers[0].table):
        return _nothing(basis, "the data holds no predictions, so there is nothing to route")
    if scenario.costs is None and not scenario.targets:
        return _nothing(basis, "the scenario sets neither costs nor a target: add costs or targets to get a "
                               "recommendation")
    search = _Search(scenario, sweepers, curves, certified, model)
    decision = search.decision()
    if offered is None:
        return decision
    return replace(decision, offers=search.offers(offered))


def _nothing(basis: Literal["cost", "target"], reason: str) -> Decision:
    return Decision(None, None, None, False, (), None, None, (), basis, False, reason)


class _Search:
    """The points, their constraints and the pruned search (``docs/decision.md``, "The search")."""

    def __init__(self, scenario: Scenario, sweepers: Sequence[Sweeper], curves: Sequence[Curve],
                 certified: Sequence[float | None], model: OperationModel | None) -> None:
        self.scenario, self.sweepers, self.curves, self.model = scenario, sweepers, curves, model
        self.costs = scenario.costs
        self.objective: Literal["cost", "target"] = "cost" if self.costs is not None else "target"
        table = sweepers[0].table
        self.metric = table.metric_name
        self.unreviewed = table.summary()[self.metric]
        self.documents = table.unit_count
        spec = scenario.decision
        self.max_reviewers = None if spec is None else spec.max_reviewers
        self.max_cost = None if spec is None else spec.max_cost_per_day
        self.target = scenario.targets[0] if scenario.targets else None
        self.certified = list(certified) if scenario.certify is not None else None
        self.active = frozenset(name for name, present in zip(CONSTRAINTS, (
            self.target is not None, model is not None, self.max_reviewers is not None, self.max_cost is not None,
            self.certified is not None)) if present)
        per_day = (model.profile.documents_per_day if model is not None
                   else None if self.costs is None else self.costs.volume_per_day)
        self.per: Literal["day", "data"] = "data" if per_day is None else "day"
        self.factor = 1.0 if per_day is None or not self.documents else per_day / self.documents
        self.quality = [np.nan_to_num(curve.metric, nan=-np.inf) for curve in curves]
        self.auto_rate = [np.nan_to_num(curve.auto_rate, nan=-np.inf) for curve in curves]
        self.opened = [self.documents - curve.columns["documents_straight_through"] for curve in curves]
        self.scaled = [_known(curve.basis).scaled(self.factor) for curve in curves]
        if model is None:
            self.extras = [0]
        else:
            bounds = (0, 0) if spec is None or spec.team is None else (spec.team.extra_per_shift.min,
                                                                       spec.team.extra_per_shift.max)
            self.extras = self._distinct(range(bounds[0], bounds[1] + 1))
        self._heads: dict[int, int] = {}
        patience = None if model is None else model.spec.patience
        self.releases = patience is not None and patience.on_expiry == "release"
        # the same documents, more reviewers: under FCFS with late documents still reviewed, none finishes later
        self.monotone = model is not None and model.spec.discipline == "fcfs" and not self.releases
        self._simulated: dict[tuple[float, float, int], Simulation] = {}
        self.exact_simulations: float = EXACT_SIMULATIONS
        self._boundary: dict[tuple[int, int], int] = {}
        self._totals: dict[tuple[int, int], np.ndarray] = {}
        self._floor: dict[int, list[int]] = {}

    # -- teams ------------------------------------------------------------------------------------

    def _distinct(self, extras: Sequence[int]) -> list[int]:
        """The extras giving distinct teams (a shift keeps at least one), the smallest for each."""
        found, seen = [], set()
        for extra in extras:
            plan = tuple(_known(self.model).plan(extra))
            if plan not in seen:
                seen.add(plan)
                found.append(extra)
        return found

    def team(self, extra: int) -> Team | None:
        return None if self.model is None else self.model.team(extra)

    def heads(self, extra: int) -> int:
        if extra not in self._heads:
            self._heads[extra] = 0 if self.model is None else _known(self.team(extra)).reviewers
        return self._heads[extra]

    def staffing(self, extra: int) -> float | None:
        """The team's cost a day, when the operation prices reviewer-hours (it then replaces timed review)."""
        return None if self.model is None else self.model.team_cost_per_day(extra)

    # -- figures at a point -----------------------------------------------------------------------

    def breakdown(self, policy: int, index: int, extra: int) -> CostBreakdown:
        basis = self.scaled[policy].at(index)
        return _known(self.costs).breakdown(self.scenario.reviewer, basis, staffing=self.staffing(extra))

    def total(self, policy: int, index: int, extra: int) -> float:
        """The cost of a point (per day or for the data): the same pricing as :meth:`breakdown`, by policy."""
        if (policy, extra) not in self._totals:
            self._totals[policy, extra] = _known(self.costs).breakdown(self.scenario.reviewer, self.scaled[policy],
                                                                       staffing=self.staffing(extra)).total
        return float(self._totals[policy, extra][index])

    def simulated(self, policy: int, index: int, extra: int) -> Simulation:
        """The team simulated at the point's workload; cached by workload, so equal workloads share a run."""
        from rpa_sim.operate.queue.summary import Workload  # noqa: PLC0415

        opened = float(self.opened[policy][index])
        reviewed = float(self.curves[policy].columns["reviewed"][index])
        key = (opened, reviewed, extra)
        if key not in self._simulated:
            work = Workload(opened=opened, reviewed=reviewed, documents=self.documents)
            self._simulated[key] = _known(self.model).simulated(work, extra=extra)
        return self._simulated[key]

    def service_level(self, policy: int, index: int, extra: int) -> float:
        level = self.simulated(policy, index, extra).service_level
        return 1.0 if level is None else level  # no opened document arrived: every one completed at once

    def quality_at(self, policy: int, index: int, extra: int) -> float:
        """The quality, released documents counted as they came (only a team that releases changes it)."""
        quality = float(self.quality[policy][index])
        if not self.releases:
            return quality
        from rpa_sim.operate.queue.summary import released_quality  # noqa: PLC0415

        # a quality and an unreviewed quality (floats, NaN when undefined) give a quality
        return _known(released_quality(self.simulated(policy, index, extra), quality=quality,
                                       unreviewed=self.unreviewed)[1])

    def certified_error(self, policy: int, index: int) -> float | None:
        """The error rate of the items auto-accepted at τ, measured on the data (None when none is)."""
        sweeper = self.sweepers[policy]
        accepted = ~sweeper.compiled.rejected & (sweeper.compiled.entry >= self.curves[policy].threshold[index])
        return float(sweeper.table.errors()[accepted].mean()) if accepted.any() else None

    def constraints(self, point: _Point) -> tuple[Constraint, ...]:
        """Every constraint of the scenario at a point, in :data:`CONSTRAINTS` order."""
        policy, index, extra = point.policy, point.index, point.extra
        found = []
        if self.target is not None:
            value = self.quality_at(policy, index, extra)
            found.append(Constraint("quality", self.target, _number(value), value >= self.target))
        if self.model is not None:
            share = self.model.spec.service_level.share
            level = self.service_level(policy, index, extra)
            found.append(Constraint("service_level", share, level, level >= share))
        if self.max_reviewers is not None:
            heads = self.heads(extra)
            found.append(Constraint("reviewers", self.max_reviewers, heads, heads <= self.max_reviewers))
        if self.max_cost is not None:
            total = self.total(policy, index, extra)
            found.append(Constraint("cost_per_day", self.max_cost, total, total <= self.max_cost))
        if self.certified is not None:
            found.append(Constraint("certified_error", _known(self.scenario.certify).max_error,
                                    self.certified_error(policy, index), self._certified(policy, index)))
        return tuple(found)

    def _certified(self, policy: int, index: int) -> bool:
        threshold = _known(self.certified)[policy]
        return threshold is not None and bool(self.curves[policy].threshold[index] >= threshold)

    # -- the search -------------------------------------------------------------------------------

    def key(self, policy: int, index: int, extra: int, objective: str, quality: float | None = None) -> tuple:
        """The order of points for ``objective`` (smaller is better); ``quality`` defaults to the curve's."""
        quality = float(self.quality[policy][index]) if quality is None else quality
        auto = float(self.auto_rate[policy][index])
        heads = self.heads(extra)
        if objective == "cost":
            return (self.total(policy, index, extra), -auto, heads, policy, index, extra)
        if objective == "target":
            return (-auto, heads, -quality, policy, index, extra)
        return (-quality, -auto, heads, policy, index, extra)  # "quality": the alternatives' best quality

    def _static(self, policy: int, index: int, active: frozenset[str]) -> bool:
        """The constraints no team changes; quality before releases, which releases only lower."""
        if "quality" in active and not self.quality[policy][index] >= _known(self.target):
            return False
        return "certified_error" not in active or self._certified(policy, index)

    def _teams(self, policy: int, index: int, active: frozenset[str], extras: Sequence[int]) -> list[int]:
        """The teams within the budget at a point: a prefix of ``extras`` (each costs more than the last)."""
        allowed = []
        for extra in extras:
            if "reviewers" in active and self.heads(extra) > _known(self.max_reviewers):
                break
            if "cost_per_day" in active and self.total(policy, index, extra) > _known(self.max_cost):
                break
            allowed.append(extra)
        return allowed

    def _meets(self, policy: int, index: int, extra: int, active: frozenset[str]) -> bool:
        """The constraints that need the team simulated."""
        if "service_level" in active and not self._keeps_level(policy, index, extra):
            return False
        return (not ("quality" in active and self.releases)
                or self.quality_at(policy, index, extra) >= _known(self.target))

    def _keeps_level(self, policy: int, index: int, extra: int) -> bool:
        """Whether the team keeps the service level at the point: simulated there, until
        :data:`EXACT_SIMULATIONS` have run; then, unless that point was simulated already, read from the
        policy's last threshold at which the team keeps it (:meth:`_last_kept`)."""
        opened = float(self.opened[policy][index])
        reviewed = float(self.curves[policy].columns["reviewed"][index])
        if len(self._simulated) < self.exact_simulations or (opened, reviewed, extra) in self._simulated:
            return self.service_level(policy, index, extra) >= _known(self.model).spec.service_level.share
        return index <= self._last_kept(policy, extra)

    def _last_kept(self, policy: int, extra: int) -> int:
        """The last threshold of the policy's grid at which the team keeps the service level (-1: none), by
        bisection, taking the level to fall as τ rises (a higher τ opens and reviews at least as much)."""
        if (policy, extra) not in self._boundary:
            share = _known(self.model).spec.service_level.share
            kept, failed = -1, len(self.curves[policy])
            while failed - kept > 1:
                middle = (kept + failed) // 2
                if self.service_level(policy, middle, extra) >= share:
                    kept = middle
                else:
                    failed = middle
            self._boundary[policy, extra] = kept
        return self._boundary[policy, extra]

    def _smallest_team(self, policy: int, index: int, teams: list[int], active: frozenset[str]) -> int | None:
        """The smallest of ``teams`` meeting the simulated constraints: by bisection from the Erlang estimate
        when more reviewers never hurt, else one team after another."""
        if self.model is None or not ("service_level" in active or ("quality" in active and self.releases)):
            return teams[0]
        if not self.monotone:
            return next((extra for extra in teams if self._meets(policy, index, extra, active)), None)
        low, high = 0, len(teams)  # teams[high] meets the constraints, or high is past the end
        probe = self._erlang_estimate(policy, index, teams)
        while low < high:
            if self._meets(policy, index, teams[probe], active):
                high = probe
            else:
                low = probe + 1
            probe = (low + high) // 2
        return teams[low] if low < len(teams) else None

    def _erlang_estimate(self, policy: int, index: int, teams: list[int]) -> int:
        """The first of ``teams`` with, in every hour, the reviewers Erlang says the service level needs."""
        from rpa_sim.operate.queue.summary import Workload  # noqa: PLC0415

        work = Workload(opened=float(self.opened[policy][index]),
                        reviewed=float(self.curves[policy].columns["reviewed"][index]), documents=self.documents)
        model = _known(self.model)
        needed = model.reviewers_needed(work)
        for position, extra in enumerate(teams):
            if extra not in self._floor:
                self._floor[extra] = model.on_floor_per_hour(extra)
            floor = self._floor[extra]
            if all(floor[hour % 24] >= count for hour, count in enumerate(needed)):
                return position
        return len(teams) - 1

    def search(self, active: frozenset[str], objective: str, extras: Sequence[int] | None = None,
               policies: Sequence[int] | None = None) -> _Point | None:
        """The best point meeting the ``active`` constraints (of ``policies``, default all), best first: points
        in the order of the best key any allowed team could give them, simulated only until no later point can
        beat the best found."""
        extras = self.extras if extras is None else extras
        candidates = []
        for policy in range(len(self.curves)) if policies is None else policies:
            for index in range(len(self.curves[policy])):
                if not self._static(policy, index, active):
                    continue
                teams = self._teams(policy, index, active, extras)
                if teams:
                    candidates.append((self.key(policy, index, teams[0], objective), policy, index, teams))
        candidates.sort(key=lambda candidate: candidate[0])
        best: _Point | None = None
        for bound, policy, index, teams in candidates:
            if best is not None and bound >= best.key:
                break
            extra = self._smallest_team(policy, index, teams, active)
            if extra is None:
                continue
            key = self.key(policy, index, extra, objective,
                           quality=self.quality_at(policy, index, extra) if self.releases else None)
            if best is None or key < best.key:
                best = _Point(policy, index, extra, key)
        return best

    # -- the decision -----------------------------------------------------------------------------

    def decision(self) -> Decision:
        chosen = self.search(self.active, self.objective)
        if chosen is not None:
            return self._decision(chosen, True, self._binding(chosen), (), "")
        binding, reason = self._infeasible()
        # the point the decision would take but for the binding constraint, to show what it misses
        # without constraints every point of a non-empty grid qualifies
        nearest = _known((binding is not None and self.search(self.active - {binding}, self.objective))
                         or self.search(frozenset(), self.objective))
        if binding is None:  # no single relaxation helps: the first constraint the cheapest point misses binds
            binding = next(c.name for c in self.constraints(nearest) if not c.met)
        return self._decision(nearest, False, binding, self._alternatives(nearest), reason)

    def _decision(self, point: _Point, feasible: bool, binding: str | None, alternatives: tuple[Alternative, ...],
                  reason: str) -> Decision:
        curve = self.curves[point.policy]
        cost = curve.columns.get("cost")
        figures = Point(_number(float(curve.auto_rate[point.index])), _number(float(curve.metric[point.index])),
                        float(curve.columns["reviewed"][point.index]),
                        None if cost is None else float(cost[point.index]),
                        float(curve.columns["documents_straight_through"][point.index]))
        policy = self.sweepers[point.policy].policy
        return Decision(policy.name, float(curve.threshold[point.index]), self.team(point.extra), feasible,
                        self.constraints(point), binding, self._cost(point), alternatives, self.objective,
                        self._edge(point), reason, figures, rules=policy)

    def _cost(self, point: _Point) -> CostSplit | None:
        return None if self.costs is None else self.breakdown(point.policy, point.index, point.extra).split(self.per)

    def _edge(self, point: _Point) -> bool:
        grid = self.curves[point.policy].threshold
        return at_edge(self.sweepers[point.policy], float(grid[point.index]), grid)

    def _binding(self, chosen: _Point) -> str | None:
        """The constraint whose relaxation alone gives the best better point; None when none gives any."""
        best: tuple[tuple, str] | None = None
        for name in (name for name in CONSTRAINTS if name in self.active):
            relaxed = self.search(self.active - {name}, self.objective)
            if relaxed is not None and relaxed.key < chosen.key and (best is None or relaxed.key < best[0]):
                best = (relaxed.key, name)
        return None if best is None else best[1]

    def _infeasible(self) -> tuple[str | None, str]:
        """The binding constraint when nothing is feasible, and why in words: one no point meets on its own,
        else the one whose relaxation alone gives the best point; None when no relaxation alone gives any."""
        names = [name for name in CONSTRAINTS if name in self.active]
        for name in names:
            if self.search(frozenset({name}), self.objective) is None:
                # a certified bound no point meets: say when no threshold was certified at all, the plain reason
                uncertified = name == "certified_error" and all(threshold is None
                                                                for threshold in _known(self.certified))
                why = (": no policy has a certified threshold on this data (each policy's certified.guarantee in "
                       "summary.json, or rpa-sim certify, says why)" if uncertified else "")
                return name, f"no point meets {self._words(name)} on its own{why}"
        best: tuple[tuple, str] | None = None
        for name in names:
            relaxed = self.search(self.active - {name}, self.objective)
            if relaxed is not None and (best is None or relaxed.key < best[0]):
                best = (relaxed.key, name)
        if best is None:
            return None, "no point meets every constraint together, nor all but any one of them"
        return best[1], f"no point meets every constraint together; without {self._words(best[1])} some would"

    def _words(self, name: str) -> str:
        if name == "quality":
            return f"the quality target {self.metric} >= {_known(self.target):g}"
        if name == "service_level":
            level = _known(self.model).spec.service_level
            teams = "its team" if len(self.extras) == 1 else "any team the decision allows"
            return f"the service level ({level.share:g} of documents within {level.within_hours:g} h, with {teams})"
        if name == "reviewers":
            return f"the budget of {self.max_reviewers} reviewers"
        if name == "cost_per_day":
            return f"the budget of {_known(self.max_cost):g} a day"
        return f"a certified error bound of {_known(self.scenario.certify).max_error:g}"

    def _alternatives(self, nearest: _Point) -> tuple[Alternative, ...]:
        """The nearest feasible points by kind (``docs/decision.md``), each once and none the decision's own."""
        found: list[Alternative] = []
        seen = {(nearest.policy, nearest.index, nearest.extra)}

        def add(kind: AlternativeKind, point: _Point | None, note: str) -> None:
            if point is not None and (point.policy, point.index, point.extra) not in seen:
                seen.add((point.policy, point.index, point.extra))
                threshold = float(self.curves[point.policy].threshold[point.index])
                found.append(Alternative(kind, self.sweepers[point.policy].policy.name, threshold,
                                         self.team(point.extra), self.constraints(point), self._cost(point),
                                         note.format(policy=self.sweepers[point.policy].policy.name,
                                                     threshold=threshold, team=self._team_words(point.extra))))

        static = self.active & {"quality", "certified_error"}
        if self.model is not None:
            preferred = self.search(static, self.objective)
            if preferred is not None:
                more = self._distinct(range(self.extras[0], self.extras[-1] + _MORE_TEAMS + 1))
                extra = self._smallest_team(preferred.policy, preferred.index, more,
                                            static | {"service_level"})
                add("team_for_threshold", None if extra is None else _Point(preferred.policy, preferred.index, extra,
                                                                            ()),
                    "{policy} at τ {threshold:.4f} meets the service level with {team}")
            budget = self.active & {"reviewers", "cost_per_day"}
            largest = [extra for extra in self.extras
                       if "reviewers" not in budget or self.heads(extra) <= _known(self.max_reviewers)][-1:]
            if largest:
                add("threshold_for_team", self.search(self.active - {"quality"}, "quality", extras=largest),
                    "the best quality {team} can sustain: {policy} at τ {threshold:.4f}")
        if self.max_reviewers is not None or self.max_cost is not None:
            add("best_within_budget", self.search(self.active - {"quality"}, "quality"),
                "the best quality within the budget: {policy} at τ {threshold:.4f} with {team}")
        return tuple(found)

    # -- the points offered -----------------------------------------------------------------------

    def offers(self, offered: Sequence[Sequence[tuple[OfferKind, float | None, float]]]) -> tuple[Offer, ...]:
        """Per policy, its best feasible point on the grid, then the ``offered`` points, each with its
        constraints at the smallest team meeting them (else the team as planned)."""
        from rpa_sim.operate.queue.summary import priced  # noqa: PLC0415

        found: list[Offer] = []
        off_grid = [sorted({threshold for _, _, threshold in points}) for points in offered]
        curves = priced(self.model, self.scenario, [sweeper.curve(np.asarray(thresholds or [1.0]))
                                                    for sweeper, thresholds in zip(self.sweepers, off_grid)])
        there = _Search(self.scenario, self.sweepers, curves, self.certified or [], self.model)
        there._simulated = self._simulated  # the same workloads, the same simulations
        there.exact_simulations = math.inf  # a few points, each simulated where it is
        for policy, points in enumerate(offered):
            best = self.search(self.active, self.objective, policies=(policy,))
            if best is not None:
                found.append(self._offer("best_feasible", None, best))
            for kind, target, threshold in points:
                index = off_grid[policy].index(threshold)
                teams = there._teams(policy, index, there.active, there.extras)
                extra = there._smallest_team(policy, index, teams, there.active) if teams else None
                found.append(there._offer(kind, target, _Point(policy, index, self._planned() if extra is None
                                                               else extra, ())))
        return tuple(found)

    def _planned(self) -> int:
        """The team as planned (no reviewer added), or the allowed team nearest it."""
        return min(self.extras, key=abs)

    def _offer(self, kind: OfferKind, target: float | None, point: _Point) -> Offer:
        return Offer(kind, self.sweepers[point.policy].policy.name, float(self.curves[point.policy].threshold[
            point.index]), target, self.team(point.extra), self.constraints(point), self._cost(point))

    def _team_words(self, extra: int) -> str:
        team = self.team(extra)
        return "no team" if team is None else team.words


def _number(value: float) -> float | None:
    """A figure for JSON: None when undefined."""
    return value if math.isfinite(value) else None


def _known(value: _Setting | None) -> _Setting:
    """``value``, read where the scenario's settings make it present (a constraint is active only when set)."""
    assert value is not None, "a setting read where the scenario does not set it"
    return value
