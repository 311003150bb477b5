"""Running a study: evaluate a scenario's data once, then sweep, compare and summarise every policy.

``rpa-sim run`` writes what :func:`run_scenario` returns as ``curves.csv`` and
``summary.json``; the report and the dashboard read the same result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from rpa_sim.common import jsontext
from rpa_sim.common.errors import InputError
from rpa_sim.common.files import atomic_write_files
from rpa_sim.common.yamlfile import validated
from rpa_sim.evaluate.load import load_data
from rpa_sim.evaluate.local import evaluate_records, evaluation
from rpa_sim.evaluate.metrics.calibration import aurc, calibration_per_group, is_correct, reliability_table
from rpa_sim.evaluate.outcomes import OutcomeTable
from rpa_sim.evaluate.settings import EvaluationSettings, reads_missing_confidence
from rpa_sim.operate.queue.summary import operation_model, operations_summary, priced
from rpa_sim.records.synthetic import (
    DocVQASettings,
    ReceiptSettings,
    generate_docvqa,
    generate_receipts,
)
from rpa_sim.route.certify import certify_threshold
from rpa_sim.route.compare import (
    area_under_curve,
    cost_optimum,
    operating_point,
    pareto,
)
from rpa_sim.route.costs import CostBreakdown
from rpa_sim.route.per_field.policy import optimized_policy
from rpa_sim.route.policies import Policy, load_policy, policy_from_mapping
from rpa_sim.route.sweep import Curve, Sweeper, curves_to_csv, parse_thresholds
from rpa_sim.study.decision import decide
from rpa_sim.study.result import SCHEMA_VERSION, StudySummary
from rpa_sim.study.scenario import CertifySpec, Scenario

__all__ = ["ScenarioResult", "run_scenario", "run_study", "scenario_policies", "evaluate_scenario_data",
           "write_outputs", "comparison_table", "cost_bases", "certify_policy", "OUTPUT_FILES"]

#: The files :func:`write_outputs` writes into its folder (``rpa-sim run --out-dir``).
OUTPUT_FILES = ("curves.csv", "summary.json")


@dataclass(frozen=True)
class ScenarioResult:
    """What a run produced: the outcome table, a curve per policy and the summary.

    ``base`` is the folder the scenario's data paths start from when the data
    was read by :func:`run_scenario` (None when the table was given to
    :func:`run_study`); the report hashes the data file found there.
    """

    scenario: Scenario
    table: OutcomeTable
    policies: list[Policy]
    curves: list[Curve]
    summary: dict[str, Any]
    base: Path | None = None

    @cached_property
    def typed_summary(self) -> StudySummary:
        """:attr:`summary` as typed, frozen dataclasses (:mod:`rpa_sim.study.result`), read on first use."""
        return StudySummary.from_json(self.summary)


def scenario_policies(scenario: Scenario, base: Path) -> list[Policy]:
    """The scenario's policies, loaded (names relative to ``base``); their names must differ. The scenario's
    ``rejected_quality`` applies to those that do not set their own. Raises InputError."""
    policies = []
    for entry in scenario.policies:
        if isinstance(entry, dict):
            policies.append(policy_from_mapping(entry, source=f"scenario {scenario.name!r}, policies"))
        else:
            policies.append(load_policy(entry, relative_to=base))
    names = [p.name for p in policies]
    if len(set(names)) != len(names):
        raise InputError(f"policy names must differ within a scenario, got {names}")
    if scenario.rejected_quality is None:
        return policies
    # the scenario says what rejected items hold, for every policy that does not say it itself
    return [policy if "rejected_quality" in policy.model_fields_set
            else policy.model_copy(update={"rejected_quality": scenario.rejected_quality}) for policy in policies]


def evaluate_scenario_data(scenario: Scenario, base: Path, source: str, *,
                           policies: Sequence[Policy] = ()) -> OutcomeTable:
    """The scenario's data as an outcome table: generated, or DATA read by :func:`rpa_sim.evaluate.load.load_data`
    (paths relative to ``base``); ``source`` names the scenario in error messages. ``policies`` are those the
    table is for (a null confidence is read only when every one says what to do with it). Raises InputError."""
    data = scenario.data
    if data.file is not None:
        from rpa_sim.evaluate.cluster import current_scheduler  # noqa: PLC0415

        predictions = None if data.predictions is None else base / data.predictions
        # the command's --scheduler, else the scenario's own: the dashboard evaluates a scenario as run does
        settings = EvaluationSettings(task=scenario.task, alpha=scenario.alpha,
                                      missing_confidence=reads_missing_confidence(policies))
        return load_data(base / data.file, settings, predictions=predictions,
                         scheduler=current_scheduler() or data.scheduler).table
    if data.generate == "receipts":
        receipts = validated(ReceiptSettings, data.settings, source=f"{source}: data.settings")
        return evaluate_records(generate_receipts(data.n, seed=data.seed, settings=receipts), evaluation("kie"))
    questions = validated(DocVQASettings, data.settings, source=f"{source}: data.settings")
    return evaluate_records(generate_docvqa(data.n, seed=data.seed, settings=questions),
                            evaluation("vqa", alpha=scenario.alpha))


def certify_policy(sweeper: Sweeper, spec: CertifySpec) -> dict[str, Any]:
    """The certified threshold of a policy's swept knob, with its plain-language guarantee.

    A policy auto-accepts an item exactly when its entry threshold is at least
    ``τ``, so certification runs on the entries. Items the policy always
    reviews never count as accepted, nor do items it rejects (they leave the
    flow: the guarantee is on what is auto-accepted); a budget can force
    acceptance and voids the guarantee, so budgeted policies are not certified.
    """
    if sweeper.policy.budget is not None:
        return {"threshold": None, "guarantee": "not certified: a review budget can force items through "
                                               "unreviewed, whatever the threshold"}
    kept = ~sweeper.compiled.rejected
    entry = sweeper.compiled.entry[kept]
    finite = np.isfinite(entry)
    candidates = np.unique(entry[finite])
    if np.any(entry == -np.inf):
        candidates = candidates[candidates > 0.0]  # at 0 the always-reviewed items would count as accepted
    scores = np.clip(np.where(finite, entry, np.where(entry > 0, 1.0, 0.0)), 0.0, 1.0)
    table = sweeper.table
    units = table.review_units
    result = certify_threshold(scores, table.errors()[kept], max_error=spec.max_error, delta=spec.delta,
                               calibration_fraction=spec.calibration_fraction, seed=spec.seed,
                               groups=None if units is None else units[kept],
                               candidates=candidates if len(candidates) else None)
    certified: dict[str, Any] = {**result.to_dict(), "guarantee": result.guarantee}
    if result.threshold is not None:
        # the policy run in "certified" mode: its figures at the certified threshold
        point = sweeper.at(result.threshold)
        certified["at_threshold"] = {"auto_rate": point["auto_rate"], "metric": point[table.metric_name],
                                     "cost": point.get("cost")}
    return certified


def _baselines(table: OutcomeTable, scenario: Scenario) -> dict[str, Curve]:
    """Reviewing nothing and reviewing everything, each a one-point curve (priced as the policies' are)."""
    def at(threshold: float, missing: str) -> Curve:
        # predictions without a confidence are left alone when nothing is reviewed, reviewed when everything is
        plain = Policy.model_validate({"name": "baseline", "review_if": {"confidence": "sweep"},
                                       "missing_confidence": missing})
        return Sweeper(table, plain, reviewer=scenario.reviewer, costs=scenario.costs).curve(np.array([threshold]))

    return {"review_none": at(0.0, "accept"), "review_all": at(2.0, "review")}


def _first(breakdown: CostBreakdown | None) -> CostBreakdown | None:
    """A one-point curve's breakdown as numbers (None without costs)."""
    return None if breakdown is None else breakdown.at(0)


def _baseline_summary(curve: Curve) -> dict[str, Any]:
    """A baseline's entry in the summary: its quality, reviews and cost."""
    cost = curve.columns.get("cost")
    return {"metric": float(curve.metric[0]), "reviewed": float(curve.columns["reviewed"][0]),
            "cost": None if cost is None else float(cost[0])}


def run_scenario(scenario: Scenario, base: Path) -> ScenarioResult:
    """Evaluate the scenario's data once, then sweep, compare and summarise every policy."""
    policies = scenario_policies(scenario, base)
    table = evaluate_scenario_data(scenario, base, f"scenario {scenario.name!r}", policies=policies)
    result = run_study(scenario, table, policies)
    return replace(result, base=base)


def run_study(scenario: Scenario, table: OutcomeTable, policies: list[Policy], *,
              sweepers: list[Sweeper] | None = None) -> ScenarioResult:
    """Sweep, compare and summarise ``policies`` on an evaluated table, with the scenario's other settings.

    The scenario's data is not read: ``table`` stands for it. Figures that are
    undefined (a ratio over no item, e.g. the auto-rate of a table without
    rows) are None in the summary, which is therefore always valid JSON.

    Parameters
    ----------
    scenario : Scenario
    table : OutcomeTable
    policies : list of Policy
    sweepers : list of Sweeper, optional
        The policies' sweepers on ``table`` with the scenario's reviewer and
        costs, when the caller has built them already (the dashboard has);
        otherwise they are built here.

    Raises
    ------
    ValueError
        When ``sweepers`` are not those of ``policies`` on ``table`` with the scenario's reviewer and costs.
    """
    grid = parse_thresholds(scenario.thresholds)
    if sweepers is None:
        sweepers = [Sweeper(table, policy, reviewer=scenario.reviewer, costs=scenario.costs) for policy in policies]
    elif len(sweepers) != len(policies) or any(
            sweeper.table is not table or sweeper.policy != policy or sweeper.reviewer != scenario.reviewer
            or sweeper.costs != scenario.costs for sweeper, policy in zip(sweepers, policies)):
        raise ValueError("sweepers must be those of the policies on this table, with the scenario's reviewer and "
                         f"costs; got {len(sweepers)} sweepers for {len(policies)} policies")
    curves = [sweeper.curve(grid) for sweeper in sweepers]
    # Area, operating points and dominance are properties of a policy, not of the grid asked
    # for the output: they come from the exact curves (every threshold at which anything changes).
    exact = curves if isinstance(grid, str) else [sweeper.curve("exact") for sweeper in sweepers]
    dominated_by = pareto(exact)
    operation = None if scenario.operations is None else operation_model(scenario, table)
    curves = priced(operation, scenario, curves)  # staffing joins the costs
    baseline_curves = dict(zip(("review_none", "review_all"),
                               priced(operation, scenario, list(_baselines(table, scenario).values()))))
    baselines = {name: _baseline_summary(curve) for name, curve in baseline_curves.items()}
    summaries = []
    for sweeper, curve, full in zip(sweepers, curves, exact):
        summaries.append(_policy_summary(scenario, sweeper, curve, full, dominated_by[curve.policy], baselines,
                                         _first(baseline_curves["review_all"].breakdown)))
    summary = {
        "schema_version": SCHEMA_VERSION,
        "scenario": scenario.name,
        "description": scenario.description,
        "task": table.task,
        "metric": table.metric_name,
        "data": _data_summary(table),
        "reviewer": scenario.reviewer.model_dump(),
        "costs": None if scenario.costs is None else scenario.costs.model_dump(),
        "thresholds": scenario.thresholds,
        "targets": list(scenario.targets),
        "calibration": _calibration(table),
        "baselines": baselines,
        "policies": summaries,
        "optimized_per_field": _optimized(table, scenario),
    }
    if any(table.document_types):  # records name their document type: thresholds per (type, field) cell too
        summary["optimized_per_document_type"] = _optimized(table, scenario, by_document_type=True)
    if operation is not None:  # absent without the section: the summary stays as it was
        summary["operations"] = operations_summary(operation, sweepers, summaries)
    if scenario.monitoring is not None:  # absent without the section: the summary stays as it was
        from rpa_sim.operate.monitoring.summary import monitoring_summary  # noqa: PLC0415

        summary["monitoring"] = monitoring_summary(scenario.monitoring, table, policies, summary,
                                                   reviewer=scenario.reviewer)
    certified = [None if entry["certified"] is None else entry["certified"]["threshold"] for entry in summaries]
    summary["decision"] = decide(scenario, sweepers, curves, certified, operation).to_dict()
    # the summary as summary.json holds it: an undefined figure (NaN, infinity) is None
    return ScenarioResult(scenario, table, policies, curves, jsontext.finite(summary))


def _optimized(table: OutcomeTable, scenario: Scenario, *, by_document_type: bool = False) -> dict[str, Any]:
    """Per target: the per-field thresholds (``by_document_type``: per type and field) that automate most,
    measured by the sweep engine."""
    # predictions without a confidence are reviewed, as the optimised policies review them
    plain = Sweeper(table, Policy.model_validate({"name": "confidence", "review_if": {"confidence": "sweep"},
                                                  "missing_confidence": "review"}),
                    reviewer=scenario.reviewer).curve("exact")
    found: dict[str, Any] = {}
    for target in scenario.targets:
        optimized = optimized_policy(table, target, reviewer=scenario.reviewer, by_document_type=by_document_type)
        single = operating_point(plain, target)
        entry: dict[str, Any] = {"feasible": optimized.result.feasible, "optimal": optimized.result.optimal,
                                 "best_single_threshold": None if single is None else single.to_dict()}
        if optimized.result.feasible:
            point = Sweeper(table, optimized.policy, reviewer=scenario.reviewer, costs=scenario.costs).at(0.0)
            entry.update(thresholds=optimized.thresholds(), auto_rate=point["auto_rate"],
                         metric=point[table.metric_name], cost=point.get("cost"))
        found[f"{target:g}"] = entry
    return found


def _calibration(table: OutcomeTable) -> dict[str, Any]:
    """How well the confidences match the share of right predictions (METRICS.md §7)."""
    # predictions without a confidence (a policy's missing_confidence) have nothing to calibrate
    known = ~np.isnan(table.confidence)
    if not known.any():
        return {}
    confidence, correct = table.confidence[known], is_correct(table)[known]
    width = reliability_table(confidence, correct, scheme="equal_width")
    mass = reliability_table(confidence, correct, scheme="equal_mass")
    keep = width.count > 0
    found = {
        "ece_equal_width": width.ece,
        "ece_equal_mass": mass.ece,
        "aurc": aurc(confidence, correct),
        "reliability": {name: getattr(width, name)[keep].tolist()
                        for name in ("lower", "upper", "count", "mean_confidence", "accuracy")},
        "by_field": calibration_per_group(confidence, correct, table.field_codes[known], table.field_names),
    }
    if any(table.document_types):  # only when some record names its document type
        found["by_document_type"] = calibration_per_group(confidence, correct, table.document_type_codes[known],
                                                          table.document_types)
    if not known.all():
        found["without_confidence"] = int(np.count_nonzero(~known))
    return found


def _data_summary(table: OutcomeTable) -> dict[str, Any]:
    """The table's corpus figures (``score --json``) and its rows, the predictions a policy routes."""
    return {"predictions": len(table), **table.summary()}


def _policy_summary(scenario: Scenario, sweeper: Sweeper, curve: Curve, exact: Curve, dominated_by: list[str],
                    baselines: dict[str, Any], review_all: CostBreakdown | None) -> dict[str, Any]:
    points = {f"{target:g}": operating_point(exact, target) for target in scenario.targets}
    summary: dict[str, Any] = {
        "policy": curve.policy,
        "description": sweeper.policy.description,
        "knob": sweeper.policy.knob,
        "auc": area_under_curve(exact),
        "auto_rate_range": _range(exact.auto_rate),
        "operating_points": {k: None if p is None else p.to_dict() for k, p in points.items()},
        "cost_optimum": None,
        "certified": None if scenario.certify is None else certify_policy(sweeper, scenario.certify),
        "dominated_by": dominated_by,
    }
    if sweeper.policy.reject_if is not None:  # the items its reject band takes out, the same at every τ
        summary["rejected"] = int(np.count_nonzero(sweeper.compiled.rejected))
    if scenario.costs is not None:
        best = cost_optimum(curve)
        assert curve.breakdown is not None and review_all is not None, "curves swept with costs have breakdowns"
        parts = curve.breakdown.at(int(np.flatnonzero(curve.threshold == best.threshold)[0]))
        saved = review_all.minus(parts).by_kind()
        summary["cost_optimum"] = {
            **best.to_dict(),
            "savings_vs_review_all": baselines["review_all"]["cost"] - best.cost,
            "savings_vs_review_none": baselines["review_none"]["cost"] - best.cost,
            "breakdown": parts.by_kind(),
            # what the saving comes from: the automation, and each kind of cost it moves
            "reviews_saved": baselines["review_all"]["reviewed"] - best.reviewed,
            "savings_by_kind": {kind: saved[kind] for kind in ("review", "staffing", "errors", "rejected")},
            # the cheapest point at the lowest or highest τ swept: a wider range might hold a cheaper one
            "edge_of_range": bool(best.threshold in (curve.threshold.min(), curve.threshold.max())),
        }
    if scenario.replicates:
        chosen = [p.threshold for p in points.values() if p is not None]
        if summary["cost_optimum"] is not None:
            chosen.append(summary["cost_optimum"]["threshold"])
        if chosen:
            spread = sweeper.replicate(scenario.replicates, seed=scenario.seed, grid=np.unique(chosen))
            summary["monte_carlo"] = {
                "replicates": scenario.replicates, "seed": scenario.seed,
                "thresholds": spread.threshold.tolist(),
                **{f"{stat}_{name}": getattr(spread, stat)[name].tolist()
                   for stat in ("mean", "std", "low", "high") for name in (curve.metric_name, "auto_rate")},
            }
    return summary


def _range(values: np.ndarray) -> list[float | None]:
    """The least and greatest defined value; None and None when none is (a table without rows)."""
    defined = values[~np.isnan(values)]
    return [float(defined.min()), float(defined.max())] if len(defined) else [None, None]


def write_outputs(result: ScenarioResult, out: Path) -> list[Path]:
    """Write ``curves.csv`` and ``summary.json`` into ``out`` (created if needed), both or neither.

    Both texts are made before either file is written, and the files are
    written together (:func:`rpa_sim.common.files.atomic_write_files`): a failure
    leaves the folder as it was, an earlier run's files untouched.
    """
    curves, summary = (out / name for name in OUTPUT_FILES)
    return atomic_write_files({curves: curves_to_csv(result.curves).encode("utf-8"),
                               summary: (jsontext.dumps(result.summary, indent=2) + "\n").encode("utf-8")})


def comparison_table(result: ScenarioResult) -> str:
    """The policies side by side: AUC, operating points, least cost, certified threshold, dominance; under it,
    what each column is and what to read with care: a cheapest point at the edge of the swept range, a
    monitoring method that is unreliable.

    The least cost is each policy's cheapest τ over the swept grid, for the whole data and under no
    constraint; the decision (:func:`rpa_sim.study.decision.decision_text`) keeps to the scenario's constraints
    and may be priced per day: a note says which is which, so that two costs of one point never disagree
    unexplained.
    """
    from rpa_sim.common.formatting import count, money, number  # noqa: PLC0415
    from rpa_sim.route.compare import edge_of_range_text  # noqa: PLC0415
    from rpa_sim.study.result import encoded  # noqa: PLC0415

    summary = result.typed_summary
    metric = summary.metric
    header = ["policy", "AUC"] + [f"auto@{t}" for t in summary.targets]
    rejecting = any(p.rejected is not None for p in summary.policies)
    if rejecting:
        header.append("rejected")
    if summary.costs is not None:
        currency = summary.costs.currency
        header += ["least cost" + ("" if currency is None else f" ({currency})"), "at τ", "saves vs all"]
    header += ["certified τ", "dominated by"]
    rows, cautions = [], []
    for p in summary.policies:
        row = [p.policy, number(p.auc)]
        row += [number(None if point is None else point.auto_rate) for point in p.operating_points.values()]
        if rejecting:
            row.append(count(p.rejected or 0))
        if p.cost_optimum is not None:  # every policy's, when the scenario has costs
            best = p.cost_optimum
            row += [money(best.cost), number(best.threshold, 3) + (" *" if best.edge_of_range else ""),
                    money(best.savings_vs_review_all)]
            if best.edge_of_range:
                # edge_of_range_text reads the cost optimum as summary.json holds it (the report calls it so too)
                cautions.append(f"* {p.policy}: {edge_of_range_text(encoded(best), summary.thresholds)}")
        row += [number(None if p.certified is None else p.certified.threshold, 3), ", ".join(p.dominated_by) or "-"]
        rows.append(row)
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(cell).ljust(w) if i == 0 else str(cell).rjust(w)
                       for i, (cell, w) in enumerate(zip(row, widths))) for row in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    notes = [f"metric: {metric} after review; auto@t = highest auto-rate whose {metric} reaches t"]
    if summary.costs is not None:
        least, decided = cost_bases(summary)
        notes.append(f"least cost = {least}; saves vs all = against reviewing everything")
        if decided is not None:
            notes.append(f"the decision below {decided}")
    for target, optimized in summary.optimized_per_field.items():
        single = optimized.best_single_threshold
        if optimized.feasible:
            notes.append(f"optimized per-field thresholds reach {target} at auto-rate {number(optimized.auto_rate)} "
                         f"(one threshold for all fields: {number(None if single is None else single.auto_rate)})")
        else:
            notes.append(f"{metric} {target} cannot be reached by reviewing entities alone")
    monitored = () if summary.monitoring is None else summary.monitoring.policies
    for entry in monitored:
        cautions += [f"monitoring: {method} is unreliable for {entry.policy} at τ = {number(entry.threshold)}: "
                     f"{figures.reason}" for method, figures in (entry.methods or {}).items() if not figures.reliable]
    return "\n".join(lines + [""] + notes + cautions)



def cost_bases(summary: StudySummary) -> tuple[str, str | None]:
    """What a comparison's least cost is, and what the decision's cost is beside it, in words: the least
    cost is each policy's cheapest τ swept, for the whole data, under no constraint; the decision keeps to
    the scenario's constraints and is priced per day or for the same data (None: it has no cost)."""
    from rpa_sim.common.formatting import count  # noqa: PLC0415
    from rpa_sim.study.result import KieData  # noqa: PLC0415

    data = summary.data
    size = f"{count(data.documents)} documents" if isinstance(data, KieData) else f"{count(data.questions)} questions"
    least = f"each policy's cheapest τ swept, for the whole data ({size}), under no constraint"
    decided = summary.decision
    if decided is None or decided.cost is None:
        return least, None
    return least, ("keeps to the scenario's constraints, its cost "
                   + ("per day" if decided.cost.per == "day" else "for the same data"))
