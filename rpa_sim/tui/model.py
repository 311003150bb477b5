"""The dashboard's data: a scenario run, one Sweeper per policy, and every view's numbers (no Textual here)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rpa_sim.costs import CostModel
from rpa_sim.errors import InputError
from rpa_sim.outcomes import KIEOutcomes, VQAOutcomes
from rpa_sim.policies import Policy
from rpa_sim.reviewer import Reviewer
from rpa_sim.sweep import Curve, Sweeper

__all__ = ["DashboardModel", "load_model", "PLOT_GRID", "DATA_TARGETS"]

#: thresholds the plotted curves are drawn at (the figures panel is exact at any threshold); a
#: terminal plot is at most ~100 columns wide, and plotext's redraw time grows with the points
PLOT_GRID = np.linspace(0.0, 1.0, 41)
#: targets and bundled policies used when the dashboard opens a records file instead of a scenario
DATA_TARGETS = [0.9, 0.95]
DATA_POLICIES = {"kie": ("confidence", "document-escalation", "grounding-gate"), "vqa": ("confidence", "grounding-gate")}
_DATA_SUFFIXES = (".jsonl", ".gz", ".json")

Table = KIEOutcomes | VQAOutcomes


def _finite(value: float | None) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


@dataclass
class DashboardModel:
    """Everything the views show; threshold moves are :meth:`figures` calls (``Sweeper.at``)."""

    name: str
    table: Table
    policies: list[Policy]
    sweepers: list[Sweeper]
    summary: dict[str, Any] = field(default_factory=dict)
    costs: CostModel | None = None
    plot_curves: list[Curve] = field(default_factory=list)

    @classmethod
    def from_table(cls, name: str, table: Table, policies: list[Policy], *, reviewer: Reviewer | None = None,
                   costs: CostModel | None = None, summary: dict[str, Any] | None = None) -> DashboardModel:
        sweepers = [Sweeper(table, p, reviewer=reviewer, costs=costs) for p in policies]
        curves = [s.curve(PLOT_GRID) for s in sweepers]
        return cls(name, table, policies, sweepers, summary or {}, costs, curves)

    # -- basics -------------------------------------------------------------------------------------

    @property
    def task(self) -> str:
        return "kie" if isinstance(self.table, KIEOutcomes) else "vqa"

    @property
    def metric_name(self) -> str:
        return "kieval_aligned" if self.task == "kie" else "anls"

    @property
    def metric_label(self) -> str:
        return "KIEval_Aligned^τ" if self.task == "kie" else "ANLS"

    @property
    def policy_names(self) -> list[str]:
        return [p.name for p in self.policies]

    @property
    def targets(self) -> list[str]:
        return list(self.summary.get("optimised_per_field", {}))

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
        for entry in self.summary.get("optimised_per_field", {}).values():
            return dict(entry.get("thresholds") or {})
        return {}

    def field_rows(self, policy: int, threshold: float) -> list[dict[str, Any]]:
        """Per KIE key or VQA question type: predictions, errors by kind, auto-rate at τ, suggested threshold."""
        entry = self.sweepers[policy].compiled.entry
        accepted = entry >= threshold  # a policy reviews an item exactly when τ > its entry threshold
        suggested = self.suggested_thresholds()
        rows = []
        if isinstance(self.table, KIEOutcomes):
            t = self.table
            n_keys = len(t.keys)
            count = np.bincount(t.key, minlength=n_keys)
            subs = np.bincount(t.key, weights=t.outcome == 1, minlength=n_keys)
            dels = np.bincount(t.key, weights=t.outcome == 2, minlength=n_keys)
            adds = np.bincount(t.addition_key, minlength=n_keys) if len(t.addition_key) else np.zeros(n_keys)
            auto = np.bincount(t.key, weights=accepted, minlength=n_keys)
            for i, key in enumerate(t.keys):
                rows.append({"field": key, "predictions": int(count[i]), "substitutions": int(subs[i]),
                             "deletions": int(dels[i]), "additions": int(adds[i]),
                             "auto_rate": float(auto[i] / count[i]) if count[i] else None,
                             "suggested_threshold": suggested.get(key)})
        else:
            t = self.table
            n_types = len(t.question_types)
            count = np.bincount(t.question_type, minlength=n_types)
            wrong = np.bincount(t.question_type, weights=t.accuracy < 1, minlength=n_types)
            anls = np.bincount(t.question_type, weights=t.anls, minlength=n_types)
            auto = np.bincount(t.question_type, weights=accepted, minlength=n_types)
            for i, qtype in enumerate(t.question_types):
                rows.append({"field": qtype or "(none)", "predictions": int(count[i]), "errors": int(wrong[i]),
                             "anls": float(anls[i] / count[i]) if count[i] else None,
                             "auto_rate": float(auto[i] / count[i]) if count[i] else None,
                             "suggested_threshold": suggested.get(qtype)})
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
        if not isinstance(self.table, VQAOutcomes):
            return []
        from rpa_sim.metrics.smudge import alpha_curve  # noqa: PLC0415

        keep = ~np.isnan(self.table.smudge_grounding)
        alphas, means = alpha_curve(self.table.match[keep], self.table.smudge_grounding[keep], step=0.05)
        return [{"alpha": float(a), "mean_smudge": _finite(float(m))} for a, m in zip(alphas, means)]

    def smudge_at(self, alpha: float) -> float | None:
        if not isinstance(self.table, VQAOutcomes):
            return None
        values = self.table.smudge(alpha=alpha)
        values = values[~np.isnan(values)]
        return float(values.mean()) if len(values) else None


def _is_data_file(source: str) -> bool:
    path = Path(source)
    return path.suffix.lower() in _DATA_SUFFIXES or (path.is_file() and path.suffix.lower() not in (".yaml", ".yml"))


def load_model(source: str | None) -> DashboardModel:
    """Load a scenario (bundled name or YAML path) or a records file and run it. Raises InputError."""
    from rpa_sim.readers import read_records  # noqa: PLC0415
    from rpa_sim.scenario import DataSpec, Scenario, load_scenario, run_scenario  # noqa: PLC0415

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
    sweepers = [Sweeper(result.table, p, reviewer=scenario.reviewer, costs=scenario.costs) for p in result.policies]
    curves = [s.curve(PLOT_GRID) for s in sweepers]
    return DashboardModel(scenario.name, result.table, result.policies, sweepers, result.summary,
                          scenario.costs, curves)
