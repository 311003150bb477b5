"""The dashboard's data: one Sweeper per policy over the outcome table, the study's summary once it is in,
and every view's numbers (no Textual here). :mod:`rpa_sim.tui.loading` builds it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from rpa_sim.common.formatting import money
from rpa_sim.evaluate.outcomes import OUTCOME_TABLES, FieldGrouping, OutcomeTable
from rpa_sim.route.costs import CostModel
from rpa_sim.route.policies import Policy
from rpa_sim.route.reviewer import Reviewer
from rpa_sim.route.sweep import Curve, Sweeper
from rpa_sim.tui.stages import Reporter, ignore_progress, stage

if TYPE_CHECKING:
    from rpa_sim.operate.queue.summary import OperationModel
    from rpa_sim.route.signals.results import SignalsResult
    from rpa_sim.study.decision import Decision, Offer, OfferKind
    from rpa_sim.study.result import Calibration, CostOptimum, GroupCalibration, PolicyResult, StudySummary

__all__ = ["COST_PARTS", "PLOT_GRID", "DashboardModel", "FieldEntries", "operation_of", "padded_limits"]

#: thresholds the plotted curves are drawn at, one per fine step of τ (the figures panel and the
#: marked operating points are exact at any threshold)
PLOT_GRID = np.linspace(0.0, 1.0, 101)
#: columns whose values are at most 1, so a plot of them ends at 1
UNIT_COLUMNS = frozenset({"auto_rate"}).union(*(table.fraction_columns for table in OUTCOME_TABLES.values()))
#: points of the fine cost curve drawn in the Costs view's window
COST_POINTS = 401
#: the parts of a cost (``CostBreakdown.by_kind``) the figures panel splits it into, as it names them
COST_PARTS = (("review", "review cost"), ("staffing", "staffing cost"), ("errors", "error cost"),
              ("rejected", "rejection cost"), ("signals", "signal cost"))


def operation_of(summary: StudySummary, table: OutcomeTable) -> OperationModel:
    """The scenario's operation, rebuilt from the summary (its settings, reviewer and costs) on the table; the
    summary must have one (``summary.operations``)."""
    from rpa_sim.operate.queue.summary import OperationModel  # noqa: PLC0415

    if summary.operations is None:
        raise ValueError(f"the study {summary.scenario!r} has no operations section")
    return OperationModel(summary.operations.settings, documents=table.unit_count, reviewer=summary.reviewer,
                          costs=summary.costs, received_at=table.received_at, review_seconds=table.review_seconds,
                          ids=table.unit_ids().tolist())


def _finite(value: float | None) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


@dataclass(frozen=True)
class FieldEntries:
    """A policy's entry thresholds sorted within each field, so per-field auto-rates are binary searches.

    Field ``f``'s entries are ``sorted_entry[bounds[f]:bounds[f + 1]]``.

    >>> entries = FieldEntries.of(np.array([0, 1, 0, 1, 1]), np.array([0.9, 0.2, 0.4, 0.7, 0.5]), 3)
    >>> entries.accepted(0.5).tolist()  # entry >= τ: the policy lets the item through
    [1, 2, 0]
    """

    sorted_entry: np.ndarray
    bounds: np.ndarray

    @classmethod
    def of(cls, field_index: np.ndarray, entry: np.ndarray, n_fields: int) -> FieldEntries:
        order = np.lexsort((entry, field_index))
        bounds = np.searchsorted(field_index[order], np.arange(n_fields + 1), side="left")
        return cls(entry[order], bounds)

    def accepted(self, threshold: float) -> np.ndarray:
        """Items per field that go straight through at τ (a policy reviews an item exactly when τ > its entry)."""
        return np.array([high - low - np.searchsorted(self.sorted_entry[low:high], threshold, side="left")
                         for low, high in zip(self.bounds[:-1].tolist(), self.bounds[1:].tolist())], dtype=np.int64)


@dataclass
class DashboardModel:
    """Everything the views show; threshold moves are :meth:`figures` calls (``Sweeper.at``).

    The summary (comparison, per-field optimum, calibration, baselines, decision: the study's typed
    result) may come after the rest (:meth:`Opened.summary`): until then it is None and
    :attr:`summarised` is False.
    """

    name: str
    table: OutcomeTable
    policies: list[Policy]
    sweepers: list[Sweeper]
    summary: StudySummary | None = None
    costs: CostModel | None = None
    plot_curves: list[Curve] = field(default_factory=list)
    #: per policy, the least and greatest value of each column over every threshold in [0, 1]
    value_ranges: list[dict[str, tuple[float, float]]] = field(default_factory=list)
    #: the scenario's targets of the metric, known before the summary
    target_values: list[float] = field(default_factory=list)
    #: what was opened, as the header names it: a file's name, or a bundled scenario's
    source: str = ""
    #: the records or outcome table file's name when that is what was opened (no scenario around it)
    data_file: str | None = None
    #: the operation rebuilt from the summary it came with (:attr:`operation`)
    _operation: tuple[StudySummary, OperationModel] | None = field(default=None, repr=False)
    #: :meth:`cost_range` by policy and summary
    _cost_ranges: dict[tuple[int, int], dict[str, tuple[float, float]]] = field(default_factory=dict, repr=False)
    #: :meth:`routing_sweeper` by signal
    _routing: dict[str, Sweeper] = field(default_factory=dict, repr=False)

    @classmethod
    def from_table(cls, name: str, table: OutcomeTable, policies: list[Policy], *, reviewer: Reviewer | None = None,
                   costs: CostModel | None = None, summary: StudySummary | None = None,
                   targets: list[float] | None = None, source: str | None = None, data_file: str | None = None,
                   report: Reporter = ignore_progress) -> DashboardModel:
        """Sweep each policy over ``table`` (the stage ``sweeping``, reported per policy).

        ``targets`` default to the summary's; ``source`` to ``name``.
        """
        sweepers = []
        with stage(report, "sweeping", total=len(policies), unit="policies") as advance:
            for policy in policies:
                sweepers.append(Sweeper(table, policy, reviewer=reviewer, costs=costs))
                advance()
        if targets is None:
            targets = [] if summary is None else list(summary.targets)
        return cls(name, table, policies, sweepers, summary, costs, [s.curve(PLOT_GRID) for s in sweepers],
                   [_ranges(s) for s in sweepers], list(targets), source or name, data_file)

    # -- basics -------------------------------------------------------------------------------------

    @property
    def task(self) -> str:
        return self.table.task

    @property
    def metric_name(self) -> str:
        return self.table.metric_name

    @property
    def metric_label(self) -> str:
        return self.table.metric_label

    @property
    def summarised(self) -> bool:
        """Whether the summary is in (it comes after the sweeps when loading in stages)."""
        return self.summary is not None

    @property
    def has_operations(self) -> bool:
        """Whether the summary is in and has the scenario's operations (its ``operations:`` section)."""
        return self.summary is not None and self.summary.operations is not None

    @property
    def has_stream(self) -> bool:
        """Whether the summary is in and has the scenario's stream watched (its ``stream:`` section)."""
        return self.summary is not None and self.summary.stream is not None

    @cached_property
    def groupings(self) -> list[FieldGrouping]:
        """How the Fields view groups predictions (the table's groupings; the first is what the optimizer tunes)."""
        return self.table.field_groupings()

    @cached_property
    def field_entries(self) -> list[list[FieldEntries]]:
        """Per policy and grouping (see :attr:`groupings`), its entry thresholds sorted within each field."""
        return [[FieldEntries.of(g.codes, s.compiled.entry, len(g.names)) for g in self.groupings]
                for s in self.sweepers]

    @property
    def has_smudge(self) -> bool:
        """Whether the table has SMuDGE scores: questions do, KIE entities do not."""
        return self.table.has_smudge

    @property
    def policy_names(self) -> list[str]:
        return [p.name for p in self.policies]

    @property
    def currency(self) -> str | None:
        """The cost model's currency, None without one."""
        return None if self.costs is None else self.costs.currency

    def money(self, value: float | None) -> str:
        """A cost as the dashboard shows it: two decimals, thousands separated, in the currency.

        >>> from rpa_sim.route.costs import CostModel
        >>> DashboardModel("m", None, [], [], costs=CostModel(per_review=1.0)).money(12345.678)
        '12,345.68'
        >>> DashboardModel("m", None, [], [], costs=CostModel(per_review=1.0, currency="EUR")).money(0.5)
        '0.50 EUR'
        """
        return money(value, self.currency)

    # -- trade-off ----------------------------------------------------------------------------------

    def figures(self, policy: int, threshold: float) -> dict[str, float]:
        """Every figure of one policy at one threshold: exactly ``Sweeper.at``."""
        return self.sweepers[policy].at(threshold)

    def points(self, threshold: float) -> list[tuple[float, float]]:
        """Each policy's (auto-rate, metric) at the threshold: the marked operating points."""
        out = []
        for sweeper in self.sweepers:
            at = sweeper.at(threshold)
            out.append((at["auto_rate"], at[self.metric_name]))
        return out

    def plot_limits(self, column: str, policies: list[int] | None = None,
                    extra: tuple[float, ...] = ()) -> tuple[float, float]:
        """Y limits that hold ``column`` at every threshold in [0, 1] for these policies (default all), padded.

        A column that never exceeds 1 (:data:`UNIT_COLUMNS`) ends at 1 when its padded top reaches
        within 3% of the span of 1, rather than just above or just below it.
        """
        chosen = range(len(self.sweepers)) if policies is None else policies
        values = [v for i in chosen for v in self.value_ranges[i].get(column, ())] + list(extra)
        low, high = padded_limits(values)
        if column in UNIT_COLUMNS and high >= 1.0 - 0.03 * (high - low):
            high = 1.0
        return low, high

    def figures_rows(self, policy: int, threshold: float) -> list[dict[str, Any]]:
        """The figures panel's numbers: :meth:`figures`, the cost priced as the study prices it, by kind."""
        at = self.figures(policy, threshold)
        row = {"policy": self.policy_names[policy], "threshold": threshold,
               **{k: _finite(v) for k, v in at.items() if k != "threshold"}}
        parts = self.cost_parts(policy, threshold)
        if parts is not None:
            row["cost"] = _finite(parts["total"])
            row.update({f"{name}_cost": _finite(parts[name]) for name, _ in COST_PARTS if name in parts})
        return [row]

    # -- the decision -------------------------------------------------------------------------------

    @property
    def decision(self) -> Decision | None:
        """The study's decision (``summary.decision``); None before the summary or when it decides nothing."""
        decision = None if self.summary is None else self.summary.decision
        return None if decision is None or decision.policy is None else decision

    def at_decision(self, policy: int, threshold: float) -> bool:
        """Whether the policy and τ are the decision's."""
        decision = self.decision
        return decision is not None and decision.policy == self.policy_names[policy] and \
            decision.threshold == threshold

    def offer(self, policy: int, kind: OfferKind, target: float | None = None) -> Offer | None:
        """The point of ``kind`` the study offers for the policy (``summary.decision.offers``: its best point
        meeting every constraint, its least cost under none, a target's point), with its constraints; None
        when there is none (a policy with no feasible point) or before the summary."""
        decision = self.decision
        offers = () if decision is None or decision.offers is None else decision.offers
        name = self.policy_names[policy]
        return next((o for o in offers if o.policy == name and o.kind == kind
                     and (target is None or o.target == target)), None)

    def offer_at(self, policy: int, threshold: float) -> Offer | None:
        """The offered point at the policy and τ, if the study offers one there (the feasible one first)."""
        decision = self.decision
        offers = () if decision is None or decision.offers is None else decision.offers
        name = self.policy_names[policy]
        there = [o for o in offers if o.policy == name and o.threshold == threshold]
        return min(there, key=lambda o: not o.feasible) if there else None

    def constraint_checks(self, policy: int, threshold: float) -> list[dict[str, Any]]:
        """Each constraint of the decision at the policy and τ: ``name``, ``target``, ``value`` and ``met``
        (None when it cannot be told there) and ``source``: ``decision`` at the decided point (its own
        figures, with its team), ``offer`` at a point the study offers (``o``, ``g``: its figures, with the
        smallest team meeting them), ``curve`` (quality after review; the certified τ), ``grid`` (the service
        level of the scenario's team on the Operations section's τ grid), or ``""`` when not evaluable."""
        decision = self.decision
        if decision is None:
            return []
        offered = self.offer_at(policy, threshold)
        if self.at_decision(policy, threshold) or offered is not None:
            source, constraints = (("decision", decision.constraints) if self.at_decision(policy, threshold)
                                   else ("offer", offered.constraints if offered is not None else ()))
            return [{"name": constraint.name, "target": constraint.target, "value": constraint.value,
                     "met": constraint.met, "source": source} for constraint in constraints]
        checks = []
        for constraint in decision.constraints:
            name, target = constraint.name, constraint.target
            value, met, source = None, None, ""
            if name == "quality":
                value = _finite(self.figures(policy, threshold)[self.metric_name])
                met, source = value is not None and value >= target, "curve"
            elif name == "service_level":
                value = self._grid_service_level(policy, threshold)
                if value is not None:
                    met, source = value >= target, "grid"
            elif name == "reviewers":  # the decided team, whatever τ
                value, met, source = constraint.value, constraint.met, "decision"
            elif name == "certified_error":
                certified = self._policy_summary(policy).certified
                if certified is not None and certified.threshold is not None:
                    met, source = threshold >= certified.threshold, "curve"
            checks.append({"name": name, "target": target, "value": value, "met": met, "source": source})
        return checks

    def _grid_service_level(self, policy: int, threshold: float) -> float | None:
        """The service level of the scenario's team at τ when τ is on the Operations section's grid."""
        operations = None if self.summary is None else self.summary.operations
        entries = () if operations is None else operations.policies
        entry = next((e for e in entries if e.policy == self.policy_names[policy]), None)
        row = None if entry is None else next((r for r in entry.grid if math.isclose(r.threshold, threshold,
                                                                                     abs_tol=1e-12)), None)
        return None if row is None else row.simulated.service_level

    def target_threshold(self, policy: int, target: float) -> float | None:
        """The τ at which the policy reaches ``target`` with the most going straight through (the summary's
        operating point), None when it never does or before the summary."""
        if self.summary is None:
            return None
        point = self._policy_summary(policy).operating_points.get(f"{target:g}")
        return None if point is None else float(point.threshold)

    def _policy_summary(self, policy: int) -> PolicyResult:
        """The summary's entry of the policy (the summary must be in): the study ran every policy of the model."""
        name = self.policy_names[policy]
        return next(p for p in self._summary_in().policies if p.policy == name)

    def _summary_in(self) -> StudySummary:
        """The summary, where the caller has made sure that it is in."""
        if self.summary is None:
            raise RuntimeError("the study's summary is not in yet")
        return self.summary

    # -- compare ------------------------------------------------------------------------------------

    def _summary_targets(self) -> list[str]:
        return [] if self.summary is None else [f"{float(t):g}" for t in self.summary.targets]

    def _summary_costs(self) -> bool:
        """Whether the summary is in and the study priced its points (the scenario's ``costs:``)."""
        return self.summary is not None and self.summary.costs is not None

    def compare_columns(self) -> list[str]:
        """The comparison's columns, as exports name them (:meth:`compare_headers` has them in words)."""
        cols = ["policy", "auc"]
        for target in self._summary_targets():
            cols += [f"auto@{target}", f"threshold@{target}"]
        if self._summary_costs():
            cols += ["cost_optimum", "optimum_threshold", "savings_vs_review_all"]
        return cols + ["certified_threshold", "dominated_by"]

    def compare_headers(self) -> dict[str, str]:
        """Each comparison column in words: ``area``, ``auto-rate at T``, ``τ for T``, ``least cost`` (for
        the data), ``τ of least cost``, ``saves vs review-all``, ``certified τ``, ``dominated by``."""
        words = {"policy": "policy", "auc": "area", "cost_optimum": "least cost",
                 "optimum_threshold": "τ of least cost", "savings_vs_review_all": "saves vs review-all",
                 "certified_threshold": "certified τ", "dominated_by": "dominated by"}
        for target in self._summary_targets():
            words.update({f"auto@{target}": f"auto-rate at {target}", f"threshold@{target}": f"τ for {target}"})
        return {column: words[column] for column in self.compare_columns()}

    def compare_explanation(self) -> str:
        """One line that says what the comparison's columns mean (empty before the summary)."""
        from rpa_sim.study.result import CertifiedThreshold  # noqa: PLC0415
        from rpa_sim.study.run import cost_bases  # noqa: PLC0415

        summary = self.summary
        if summary is None:
            return ""
        label = self.metric_label
        parts = [f"area: under the auto-rate/{label} curve (larger is better)",
                 f"auto-rate at T: the most that goes straight through with {label} ≥ T, at τ for T"]
        if summary.costs is not None:
            least, decided = cost_bases(summary)
            parts.append(f"least cost: {least}, and what it saves against reviewing everything"
                         + ("" if decided is None else f"; the decision (d) {decided}"))
        certify = next((p.certified for p in summary.policies if isinstance(p.certified, CertifiedThreshold)), None)
        if certify is not None:
            parts.append(f"certified τ: auto-accepted error rate ≤ {certify.max_error:g} with probability "
                         f"≥ {1 - certify.delta:g}")
        parts.append("dominated by: policies at least as good at every auto-rate")
        return " · ".join(parts)

    def compare_rows(self) -> list[dict[str, Any]]:
        """One row per policy of the summary, keyed by :meth:`compare_columns` (none before the summary)."""
        if self.summary is None:
            return []
        priced = self.summary.costs is not None
        rows = []
        for p in self.summary.policies:
            row: dict[str, Any] = {"policy": p.policy, "auc": p.auc}
            for target, point in p.operating_points.items():
                name = f"{float(target):g}"
                row[f"auto@{name}"] = None if point is None else point.auto_rate
                row[f"threshold@{name}"] = None if point is None else point.threshold
            best = p.cost_optimum
            if priced and best is not None:
                row.update(cost_optimum=best.cost, optimum_threshold=best.threshold,
                           savings_vs_review_all=best.savings_vs_review_all)
            row["certified_threshold"] = None if p.certified is None else p.certified.threshold
            row["dominated_by"] = ", ".join(p.dominated_by)
            rows.append({c: row.get(c) for c in self.compare_columns()})
        return rows

    # -- fields -------------------------------------------------------------------------------------

    def suggested_target(self) -> str | None:
        """The target the suggested per-field thresholds are optimised for (the first), None before the summary."""
        return None if self.summary is None else next(iter(self.summary.optimized_per_field), None)

    def suggested_thresholds(self) -> dict[str, float | Mapping[str, float | None] | None]:
        """The per-field thresholds for :meth:`suggested_target`; none before the summary or when it is out of
        reach."""
        target = self.suggested_target()
        if target is None:
            return {}
        return dict(self._summary_in().optimized_per_field[target].thresholds or {})

    @cached_property
    def _field_columns(self) -> tuple[list[tuple[str, str]], dict[str, np.ndarray]]:
        """Each field as (grouping, key as the table and the suggested thresholds name it), and the
        per-field figures that do not depend on τ, fields of all groupings in one array per column."""
        labels = [(g.by, key) for g in self.groupings for key in g.names]
        return labels, {name: np.concatenate([g.figures[name] for g in self.groupings])
                        for name in self.groupings[0].figures}

    def field_rows(self, policy: int, threshold: float) -> list[dict[str, Any]]:
        """Per field of each grouping (KIE: key; VQA: question type, then answer type): predictions, the
        table's errors, each with its rate, the auto-rate at τ and the suggested threshold (for the first
        grouping, what the optimizer tunes). A ``by`` column names the grouping when there are several.

        A count's rate (``<count>_rate``) is its share of the field's predictions and missed values
        (KIE: KIEval's denominator, so the rates of a key add up to 1 - its KIEval_Aligned; VQA: of
        its questions). The auto-rates count what the figures panel counts (the budget respected,
        audits in expectation): weighted by the field sizes they average to its auto-rate.
        """
        labels, columns = self._field_columns
        suggested = self.suggested_thresholds()
        count = columns["predictions"]
        denominator = count + columns.get("additions", 0)
        sweeper = self.sweepers[policy]
        if sweeper.policy.budget is None:  # every routed item is reviewed: binary searches suffice
            routed = count - np.concatenate([entries.accepted(threshold) for entries in self.field_entries[policy]])
        else:
            routed = np.concatenate([sweeper.routed_per_group(g.codes, len(g.names), threshold)
                                     for g in self.groupings])
        # audits check a share of what goes straight through, as the figures panel counts them
        straight_through = (1.0 - sweeper.policy.audit) * (count - routed)
        tuned = self.groupings[0].by
        rows = []
        for i, (by, key) in enumerate(labels):
            row: dict[str, Any] = {"by": by} if len(self.groupings) > 1 else {}
            row["field"] = key or "(none)"
            for column, values in columns.items():
                if values.dtype.kind == "f":  # a mean, undefined (NaN) for an empty field
                    row[column] = _finite(float(values[i]))
                    continue
                row[column] = int(values[i])
                if column != "predictions":
                    row[f"{column}_rate"] = float(values[i] / denominator[i]) if denominator[i] else None
            row["auto_rate"] = float(straight_through[i] / count[i]) if count[i] else None
            row["suggested_threshold"] = suggested.get(key) if by == tuned else None
            rows.append(row)
        return rows

    # -- calibration, costs, smudge -----------------------------------------------------------------

    @property
    def calibration(self) -> Calibration | None:
        """The summary's calibration; None before the summary or when no prediction has a confidence."""
        return None if self.summary is None else self.summary.calibration

    def calibration_rows(self) -> list[dict[str, Any]]:
        """The reliability diagram's bins, one row each (what the Calibration view exports)."""
        if self.calibration is None:
            return []
        reliability = self.calibration.reliability
        names = ("lower", "upper", "count", "mean_confidence", "accuracy")
        return [dict(zip(names, values)) for values in zip(*(getattr(reliability, name) for name in names))]

    def calibration_groups(self) -> list[tuple[str, tuple[GroupCalibration, ...]]]:
        """The summary's per-group calibration: (``document type``, groups) when records name one, then
        (``field``, groups)."""
        calibration = self.calibration
        if calibration is None:
            return []
        return [(by, groups) for by, groups in (("document type", calibration.by_document_type),
                                                ("field", calibration.by_field)) if groups]

    @property
    def operation(self) -> OperationModel | None:
        """The scenario's operation once the summary has it (:func:`operation_of`); None without one."""
        summary = self.summary
        if summary is None or summary.operations is None:
            return None
        if self._operation is None or self._operation[0] is not summary:
            self._operation = (summary, operation_of(summary, self.table))
        return self._operation[1]

    @property
    def staffed(self) -> bool:
        """Whether costs price rostered reviewers (an operation with an hourly cost), as the study's curves do."""
        return self._staffing() is not None

    def _staffing(self) -> tuple[OperationModel, CostModel] | None:
        """The operation and the costs that price its roster, when costs are :attr:`staffed`."""
        operation = self.operation
        if self.costs is None or operation is None or operation.hourly_cost is None:
            return None
        return operation, self.costs

    def priced_curve(self, policy: int, thresholds: np.ndarray) -> Curve:
        """The policy's curve at ``thresholds``, priced as the study prices it: with staffing
        (:func:`~rpa_sim.operate.queue.summary.staffed_curve`) once the summary brings a staffed operation, so
        that its costs are ``summary.json``'s (curves, ``cost_optimum``) at the same τ."""
        sweeper = self.sweepers[policy]
        curve = sweeper.curve(thresholds)
        staffing = self._staffing()
        if staffing is None:
            return curve
        from rpa_sim.operate.queue.summary import staffed_curve  # noqa: PLC0415

        return staffed_curve(curve, *staffing, sweeper.reviewer)

    def cost_parts(self, policy: int, threshold: float) -> dict[str, Any] | None:
        """The policy's cost at τ by kind (review, staffing, errors, rejected, total, currency), for the
        scenario's data; None without costs."""
        curve = self.priced_curve(policy, np.array([threshold]))
        return None if curve.breakdown is None else curve.breakdown.at(0).by_kind()

    def cost_range(self, policy: int) -> dict[str, tuple[float, float]]:
        """Each cost part's least and greatest value over a fine grid of τ (the figures panel pads to them)."""
        key = (policy, id(self.summary))
        if key not in self._cost_ranges:
            curve = self.priced_curve(policy, np.linspace(0.0, 1.0, 201))
            parts = {} if curve.breakdown is None else curve.breakdown.by_kind()
            self._cost_ranges[key] = {name: (float(np.min(values)), float(np.max(values)))
                                      for name, values in parts.items() if name != "currency"}
        return self._cost_ranges[key]

    def cost_rows(self, policy: int) -> list[dict[str, Any]]:
        if self.costs is None:
            return []
        curve = self.priced_curve(policy, PLOT_GRID)
        return [{"policy": curve.policy, "threshold": float(t), "cost": float(c)}
                for t, c in zip(curve.threshold, curve.columns["cost"])]

    def cost_optimum(self, policy: int) -> CostOptimum | None:
        """The policy's least cost over the swept τ (the summary's); None before the summary or without costs."""
        return None if self.summary is None else self._policy_summary(policy).cost_optimum

    def review_all_cost(self) -> float | None:
        """What reviewing every prediction costs (the summary's baseline), None before the summary."""
        return None if self.summary is None else self.summary.baselines.review_all.cost

    def cost_window(self, policy: int) -> tuple[float, float]:
        """The τ range the Costs view zooms on: where the policy costs no more than reviewing everything,
        widened by a quarter of its width (at least 0.01) on each side; all of [0, 1] before the summary
        or when no τ is that cheap."""
        reference = self.review_all_cost()
        if self.costs is None or reference is None:
            return 0.0, 1.0
        grid = np.linspace(0.0, 1.0, 2001)
        cheap = grid[self.priced_curve(policy, grid).columns["cost"] <= reference]
        if len(cheap) == 0:
            return 0.0, 1.0
        low, high = float(cheap.min()), float(cheap.max())
        pad = max((high - low) / 4, 0.01)
        return round(max(0.0, low - pad), 3), round(min(1.0, high + pad), 3)

    def cost_curve(self, policy: int, window: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
        """The policy's cost on :data:`COST_POINTS` thresholds spread over ``window``."""
        grid = np.linspace(*window, COST_POINTS)
        return grid, self.priced_curve(policy, grid).columns["cost"]

    # -- signals ------------------------------------------------------------------------------------

    @cached_property
    def signal_names(self) -> list[str]:
        """What ``s`` cycles the trade-off view's extra curve through, when the values carry named signals:
        the confidence (unless no value has one), each named signal, then ``fused``; none without named
        signals."""
        from rpa_sim.route.signals.columns import FUSED, table_signals  # noqa: PLC0415

        return [*table_signals(self.table), FUSED] if self.table.signals else []

    @property
    def signals(self) -> SignalsResult | None:
        """The signals measured by the study (``summary.signals``); None before the summary or without signals."""
        return None if self.summary is None else self.summary.signals

    def routing_sweeper(self, name: str) -> Sweeper:
        """A policy that reviews a value when the signal ``name`` is below τ (one without it reviewed), swept
        with the scenario's reviewer and costs: the curve ``s`` adds to the trade-off view."""
        if name not in self._routing:
            test = {"confidence": "sweep"} if name == "confidence" else {"signals": {name: "sweep"}}
            policy = Policy.model_validate({"name": f"routing on {name}", "review_if": test,
                                            "missing_confidence": "review"})
            reviewer = self.sweepers[0].reviewer if self.sweepers else None
            self._routing[name] = Sweeper(self.table, policy, reviewer=reviewer, costs=self.costs)
        return self._routing[name]

    def smudge_rows(self) -> list[dict[str, Any]]:
        """Mean SMuDGE per alpha over the questions with OCR; none without such questions."""
        curve = self.table.smudge_by_alpha(step=0.05)
        if curve is None:
            return []
        alphas, means = curve
        return [{"alpha": float(a), "mean_smudge": _finite(float(m))} for a, m in zip(alphas, means)]

    def smudge_at(self, alpha: float) -> float | None:
        return self.table.mean_smudge(alpha=alpha)


def _ranges(sweeper: Sweeper) -> dict[str, tuple[float, float]]:
    """Each column's extremes over the exact thresholds in [0, 1], i.e. over every state τ can reach."""
    thresholds = sweeper.thresholds("exact")
    curve = sweeper.curve(np.append(thresholds[thresholds <= 1.0], 1.0))
    ranges = {}
    for name, values in curve.columns.items():
        finite = values[np.isfinite(values)]
        if name != "threshold" and len(finite):
            ranges[name] = (float(finite.min()), float(finite.max()))
    return ranges


def padded_limits(values: list[float], *, pad: float = 0.03) -> tuple[float, float]:
    """Plot limits around ``values``: their span widened by ``pad`` on each side (a flat span gets room too).

    >>> padded_limits([0.5, 1.0])
    (0.485, 1.015)
    >>> padded_limits([2.0])
    (1.9, 2.1)
    >>> padded_limits([])
    (0.0, 1.0)
    """
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return 0.0, 1.0
    low, high = min(finite), max(finite)
    margin = (high - low) * pad if high > low else max(abs(high) * 0.05, 0.05)
    return round(low - margin, 12), round(high + margin, 12)
