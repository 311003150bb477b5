"""The dashboard's data: a scenario run, one Sweeper per policy, and every view's numbers (no Textual here)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from rpa_sim.costs import CostModel
from rpa_sim.errors import InputError
from rpa_sim.outcomes import FieldGrouping, OutcomeTable, VQAOutcomes
from rpa_sim.policies import Policy
from rpa_sim.reviewer import Reviewer
from rpa_sim.sweep import Curve, Sweeper

__all__ = ["DashboardModel", "FieldEntries", "load_model", "padded_limits", "PLOT_GRID", "DATA_TARGETS"]

#: thresholds the plotted curves are drawn at, one per fine step of τ (the figures panel and the
#: marked operating points are exact at any threshold)
PLOT_GRID = np.linspace(0.0, 1.0, 101)
#: targets and bundled policies used when the dashboard opens a records file instead of a scenario
DATA_TARGETS = [0.9, 0.95]
DATA_POLICIES = {"kie": ("confidence", "document-escalation", "grounding-gate"), "vqa": ("confidence", "grounding-gate")}
_DATA_SUFFIXES = (".jsonl", ".gz", ".json")


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
    """Everything the views show; threshold moves are :meth:`figures` calls (``Sweeper.at``)."""

    name: str
    table: OutcomeTable
    policies: list[Policy]
    sweepers: list[Sweeper]
    summary: dict[str, Any] = field(default_factory=dict)
    costs: CostModel | None = None
    plot_curves: list[Curve] = field(default_factory=list)
    #: per policy, the least and greatest value of each column over every threshold in [0, 1]
    value_ranges: list[dict[str, tuple[float, float]]] = field(default_factory=list)
    #: per policy and grouping (see :attr:`groupings`), its entry thresholds sorted within each field
    field_entries: list[list[FieldEntries]] = field(default_factory=list)

    @classmethod
    def from_table(cls, name: str, table: OutcomeTable, policies: list[Policy], *, reviewer: Reviewer | None = None,
                   costs: CostModel | None = None, summary: dict[str, Any] | None = None) -> DashboardModel:
        sweepers = [Sweeper(table, p, reviewer=reviewer, costs=costs) for p in policies]
        curves = [s.curve(PLOT_GRID) for s in sweepers]
        model = cls(name, table, policies, sweepers, summary or {}, costs, curves, [_ranges(s) for s in sweepers])
        model.field_entries = [[FieldEntries.of(g.codes, s.compiled.entry, len(g.names)) for g in model.groupings]
                               for s in sweepers]
        return model

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

    @cached_property
    def groupings(self) -> list[FieldGrouping]:
        """How the Fields view groups predictions (the table's groupings; the first is what the optimizer tunes)."""
        return self.table.field_groupings()

    @property
    def has_smudge(self) -> bool:
        """Whether the table has SMuDGE scores: questions do, KIE entities do not."""
        return isinstance(self.table, VQAOutcomes)

    @property
    def policy_names(self) -> list[str]:
        return [p.name for p in self.policies]

    @property
    def targets(self) -> list[str]:
        return list(self.summary.get("optimized_per_field", {}))

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
        """Y limits that hold ``column`` at every threshold in [0, 1] for these policies (default all), padded."""
        chosen = range(len(self.sweepers)) if policies is None else policies
        values = [v for i in chosen for v in self.value_ranges[i].get(column, ())] + list(extra)
        return padded_limits(values)

    def figures_rows(self, policy: int, threshold: float) -> list[dict[str, Any]]:
        at = self.figures(policy, threshold)
        return [{"policy": self.policy_names[policy], "threshold": threshold,
                 **{k: _finite(v) for k, v in at.items() if k != "threshold"}}]

    # -- compare ------------------------------------------------------------------------------------

    def compare_columns(self) -> list[str]:
        cols = ["policy", "auc"] + [f"auto@{t}" for t in self.summary.get("targets", [])]
        if self.summary.get("costs") is not None:
            cols += ["cost_optimum", "optimum_threshold", "savings_vs_review_all"]
        return cols + ["certified_threshold", "dominated_by"]

    def compare_rows(self) -> list[dict[str, Any]]:
        rows = []
        for p in self.summary.get("policies", []):
            row: dict[str, Any] = {"policy": p["policy"], "auc": _finite(p.get("auc"))}
            for target, point in p.get("operating_points", {}).items():
                row[f"auto@{float(target):g}"] = None if point is None else point["auto_rate"]
            if self.summary.get("costs") is not None:
                best = p.get("cost_optimum") or {}
                row.update(cost_optimum=best.get("cost"), optimum_threshold=best.get("threshold"),
                           savings_vs_review_all=best.get("savings_vs_review_all"))
            cert = p.get("certified")
            row["certified_threshold"] = None if cert is None else cert.get("threshold")
            row["dominated_by"] = ", ".join(p.get("dominated_by", []))
            rows.append({c: row.get(c) for c in self.compare_columns()})
        return rows

    # -- fields -------------------------------------------------------------------------------------

    def suggested_thresholds(self) -> dict[str, float | None]:
        for entry in self.summary.get("optimized_per_field", {}).values():
            return dict(entry.get("thresholds") or {})
        return {}

    @cached_property
    def _field_columns(self) -> tuple[list[tuple[str, str]], dict[str, np.ndarray]]:
        """Each field as (grouping, key as the table and the suggested thresholds name it), and the
        per-field figures that do not depend on τ, fields of all groupings in one array per column."""
        labels = [(g.by, key) for g in self.groupings for key in g.names]
        return labels, {name: np.concatenate([g.figures[name] for g in self.groupings])
                        for name in self.groupings[0].figures}

    def field_rows(self, policy: int, threshold: float) -> list[dict[str, Any]]:
        """Per field of each grouping (KIE: key; VQA: question type, then answer type): predictions, the
        table's errors, the auto-rate at τ and the suggested threshold (for the first grouping, what the
        optimizer tunes). A ``by`` column names the grouping when there are several.

        The auto-rates count what the figures panel counts (the budget respected, audits in
        expectation): weighted by the field sizes they average to its auto-rate.
        """
        labels, columns = self._field_columns
        suggested = self.suggested_thresholds()
        count = columns["predictions"]
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
                # counts are integers; means are floats, undefined (NaN) for an empty field
                row[column] = _finite(float(values[i])) if values.dtype.kind == "f" else int(values[i])
            row["auto_rate"] = float(straight_through[i] / count[i]) if count[i] else None
            row["suggested_threshold"] = suggested.get(key) if by == tuned else None
            rows.append(row)
        return rows

    # -- calibration, costs, smudge -----------------------------------------------------------------

    def calibration_rows(self) -> list[dict[str, Any]]:
        rel = self.summary.get("calibration", {}).get("reliability", {})
        names = ("lower", "upper", "count", "mean_confidence", "accuracy")
        return [dict(zip(names, values)) for values in zip(*(rel.get(n, []) for n in names))]

    def cost_rows(self, policy: int) -> list[dict[str, Any]]:
        if self.costs is None:
            return []
        curve = self.plot_curves[policy]
        return [{"policy": curve.policy, "threshold": float(t), "cost": float(c)}
                for t, c in zip(curve.threshold, curve.columns["cost"])]

    def cost_optimum(self, policy: int) -> dict[str, Any] | None:
        for p in self.summary.get("policies", []):
            if p["policy"] == self.policy_names[policy]:
                return p.get("cost_optimum")
        return None

    def smudge_rows(self) -> list[dict[str, Any]]:
        """Mean SMuDGE per alpha over the questions with OCR; none without such questions."""
        if not self.has_smudge:
            return []
        from rpa_sim.metrics.smudge import alpha_curve  # noqa: PLC0415

        keep = ~np.isnan(self.table.smudge_grounding)
        if not keep.any():
            return []
        alphas, means = alpha_curve(self.table.match[keep], self.table.smudge_grounding[keep], step=0.05)
        return [{"alpha": float(a), "mean_smudge": _finite(float(m))} for a, m in zip(alphas, means)]

    def smudge_at(self, alpha: float) -> float | None:
        if not self.has_smudge:
            return None
        values = self.table.smudge(alpha=alpha)
        values = values[~np.isnan(values)]
        return float(values.mean()) if len(values) else None


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


def _is_data_file(source: str) -> bool:
    path = Path(source)
    return path.suffix.lower() in _DATA_SUFFIXES or (path.is_file() and path.suffix.lower() not in (".yaml", ".yml"))


def load_model(source: str | None) -> DashboardModel:
    """Load a scenario (bundled name or YAML path) or a records file and run it. Raises InputError."""
    from rpa_sim.readers import read_records  # noqa: PLC0415
    from rpa_sim.scenario import DataSpec, Scenario, load_scenario  # noqa: PLC0415
    from rpa_sim.study import run_scenario  # noqa: PLC0415

    source = source or "receipts-demo"
    if _is_data_file(source):
        path = Path(source).resolve()
        if not path.is_file():
            raise InputError(f"no records file {source!r}")
        task = read_records(path).task
        scenario = Scenario(name=path.name, data=DataSpec(file=path), task=task, policies=list(DATA_POLICIES[task]),
                            targets=DATA_TARGETS)
        base = path.parent
    else:
        scenario, base = load_scenario(source)
    result = run_scenario(scenario, base)
    return DashboardModel.from_table(scenario.name, result.table, result.policies, reviewer=scenario.reviewer,
                                     costs=scenario.costs, summary=result.summary)
