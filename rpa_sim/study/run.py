"""Running a study: evaluate a scenario's data once, then sweep, compare and summarise every policy.

``rpa-sim run`` writes what :func:`run_scenario` returns as ``curves.csv`` and
``summary.json``; the report and the dashboard read the same result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from rpa_sim.common.errors import InputError
from rpa_sim.common.files import atomic_write_files
from rpa_sim.common.jsontext import finite
from rpa_sim.common.progress import stage
from rpa_sim.common.typedjson import FrozenMap
from rpa_sim.common.yamlfile import validated
from rpa_sim.evaluate.load import load_data
from rpa_sim.evaluate.local import evaluate_records, evaluation
from rpa_sim.evaluate.metrics.calibration import aurc, calibration_per_group, is_correct, reliability_table
from rpa_sim.evaluate.outcomes import OutcomeTable
from rpa_sim.evaluate.settings import EvaluationSettings, reads_missing_confidence
from rpa_sim.operate.monitoring.results import Monitoring
from rpa_sim.operate.queue.results import Operations
from rpa_sim.operate.queue.summary import OperationModel, operation_model, operations, priced
from rpa_sim.operate.stream.watched import StreamResult
from rpa_sim.records.synthetic import (
    DocVQASettings,
    ReceiptSettings,
    generate_docvqa,
    generate_receipts,
)
from rpa_sim.route.certify import certify_policy
from rpa_sim.route.compare import (
    area_under_curve,
    cost_optimum,
    operating_point,
    pareto,
)
from rpa_sim.route.costs import CostBreakdown, CostSplit
from rpa_sim.route.grid_edge import at_edge
from rpa_sim.route.per_field.policy import optimized_policy
from rpa_sim.route.policies import Policy, load_policy, policy_from_mapping
from rpa_sim.route.signals.analysis import Certification
from rpa_sim.route.signals.results import SignalsResult, signals_result
from rpa_sim.route.sweep import Curve, Sweeper, curves_to_csv, parse_thresholds
from rpa_sim.study.decision import Decision, OfferKind, decide
from rpa_sim.study.result import (
    SCHEMA_VERSION,
    Baseline,
    Baselines,
    Calibration,
    CostOptimum,
    GroupCalibration,
    KieData,
    MonteCarlo,
    OptimizedThresholds,
    PolicyResult,
    Reliability,
    StudySummary,
    VqaData,
    summary_bytes,
)
from rpa_sim.study.scenario import Scenario

__all__ = ["ScenarioResult", "run_scenario", "run_study", "scenario_policies", "evaluate_scenario_data",
           "write_outputs", "comparison_table", "cost_bases", "OUTPUT_FILES"]

#: The files :func:`write_outputs` writes into its folder (``rpa-sim run --out-dir``).
OUTPUT_FILES = ("curves.csv", "summary.json")


@dataclass(frozen=True)
class ScenarioResult:
    """What a run produced: the outcome table, a curve per policy and the summary (what ``summary.json``
    holds).

    ``base`` is the folder the scenario's data paths start from when the data
    was read by :func:`run_scenario` (None when the table was given to
    :func:`run_study`); the report hashes the data file found there.
    """

    scenario: Scenario
    table: OutcomeTable
    policies: list[Policy]
    curves: list[Curve]
    summary: StudySummary
    base: Path | None = None


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


def _baselines(table: OutcomeTable, scenario: Scenario) -> dict[str, Curve]:
    """Reviewing nothing and reviewing everything, each a one-point curve (priced as the policies' are)."""
    def at(threshold: float, missing: str) -> Curve:
        # predictions without a confidence are left alone when nothing is reviewed, reviewed when everything is
        plain = Policy.model_validate({"name": "baseline", "review_if": {"confidence": "sweep"},
                                       "missing_confidence": missing})
        return Sweeper(table, plain, reviewer=scenario.reviewer, costs=scenario.costs).curve(np.array([threshold]))

    return {"review_none": at(0.0, "accept"), "review_all": at(2.0, "review")}


def _baseline(curve: Curve) -> Baseline:
    """A baseline's quality, reviews and cost (a one-point curve)."""
    cost = curve.columns.get("cost")
    return Baseline(metric=finite(float(curve.metric[0])), reviewed=float(curve.columns["reviewed"][0]),
                    cost=None if cost is None else finite(float(cost[0])))


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
    review_none, review_all = priced(operation, scenario, list(_baselines(table, scenario).values()))
    baselines = Baselines(review_none=_baseline(review_none), review_all=_baseline(review_all))
    review_all_parts = None if review_all.breakdown is None else review_all.breakdown.at(0)
    results = tuple(_policy_result(scenario, sweeper, curve, full, dominated_by[curve.policy], baselines,
                                   review_all_parts) for sweeper, curve, full in zip(sweepers, curves, exact))
    certified = [None if result.certified is None else result.certified.threshold for result in results]
    decision = decide(scenario, sweepers, curves, certified, operation,
                      offered=[_offered(result) for result in results])
    summary = StudySummary(
        schema_version=SCHEMA_VERSION,
        scenario=scenario.name,
        description=scenario.description,
        task=table.task,
        metric=table.metric_name,
        data=_data(table),
        reviewer=scenario.reviewer,
        costs=scenario.costs,
        thresholds=scenario.thresholds,
        targets=tuple(scenario.targets),
        calibration=_calibration(table),
        baselines=baselines,
        policies=results,
        optimized_per_field=_optimized(table, scenario),
        # records that name their document type: thresholds per (type, field) cell too
        optimized_per_document_type=_optimized(table, scenario, by_document_type=True)
        if any(table.document_types) else None,
        operations=None if operation is None else _operations(operation, sweepers, results),
        monitoring=None if scenario.monitoring is None else _monitoring(scenario, table, policies, results),
        decision=decision,
        signals=_signals(table, scenario),
        stream=None if scenario.stream is None else _stream(scenario, table, policies, decision),
    )
    return ScenarioResult(scenario, table, policies, curves, summary)


def _stream(scenario: Scenario, table: OutcomeTable, policies: Sequence[Policy], decision: Decision) -> StreamResult:
    """The scenario's stream (its ``stream:`` section) drawn from the data and watched: the decided policy at its
    threshold unless the section names one (:mod:`rpa_sim.study.stream`)."""
    from rpa_sim.study.stream import scenario_stream, watched_stream  # noqa: PLC0415

    stream = scenario_stream(scenario, table, policies, decided=(decision.policy, decision.threshold))
    with stage(f"watching {len(stream):,} days of the stream", total=len(stream)) as advance:
        return watched_stream(scenario, stream, advance=advance)


def _offered(result: PolicyResult) -> list[tuple[OfferKind, float | None, float]]:
    """The points the pages offer for a policy off the grid: its least cost, each target's operating point."""
    offered: list[tuple[OfferKind, float | None, float]] = []
    if result.cost_optimum is not None:
        offered.append(("least_cost", None, result.cost_optimum.threshold))
    offered += [("target", float(target), point.threshold) for target, point in result.operating_points.items()
                if point is not None]
    return offered


def _operations(operation: OperationModel, sweepers: Sequence[Sweeper],
                results: Sequence[PolicyResult]) -> Operations:
    """The operation at each policy's operating points: each target's threshold, the cost optimum, the
    certified threshold."""
    points = []
    for result in results:
        labelled = [(f"target {target}", point.threshold) for target, point in result.operating_points.items()
                    if point is not None]
        if result.cost_optimum is not None:
            labelled.append(("cost optimum", result.cost_optimum.threshold))
        if result.certified is not None and result.certified.threshold is not None:
            labelled.append(("certified", result.certified.threshold))
        points.append(labelled)
    return operations(operation, sweepers, points)


def _monitoring(scenario: Scenario, table: OutcomeTable, policies: Sequence[Policy],
                results: Sequence[PolicyResult]) -> Monitoring:
    """Production monitoring replayed (the scenario's ``monitoring:`` section), each policy at the threshold
    the section names: a number, its cost optimum or its operating point for the first target."""
    from rpa_sim.operate.monitoring.summary import monitoring  # noqa: PLC0415

    spec = scenario.monitoring
    assert spec is not None, "monitored only with the scenario's section"
    choice = spec.threshold
    if choice is None:
        choice = "cost_optimum" if scenario.costs is not None else "target"

    def threshold(result: PolicyResult) -> tuple[float | None, str]:
        if not isinstance(choice, str):
            return float(choice), "given"
        if choice == "cost_optimum":
            if scenario.costs is None:
                raise InputError("scenario monitoring: threshold: cost_optimum needs the scenario's costs; give a "
                                 "number or 'target'")
            best = result.cost_optimum
            return (None if best is None else best.threshold), "cost optimum"
        if not scenario.targets:
            raise InputError("scenario monitoring: threshold: the scenario has neither costs nor targets to take an "
                             "operating point from; give a number")
        target = f"{scenario.targets[0]:g}"
        point = result.operating_points[target]
        return (None if point is None else point.threshold), f"target {target}"

    # only the monitored policies' thresholds are resolved (a policy the section leaves out needs none)
    thresholds = [threshold(result) if spec.policy in (None, result.policy) else (None, "not monitored")
                  for result in results]
    return monitoring(spec, table, policies, thresholds, reviewer=scenario.reviewer)


def _optimized(table: OutcomeTable, scenario: Scenario, *,
               by_document_type: bool = False) -> FrozenMap[OptimizedThresholds]:
    """Per target: the per-field thresholds (``by_document_type``: per type and field) that automate most,
    measured by the sweep engine."""
    # predictions without a confidence are reviewed, as the optimised policies review them
    plain = Sweeper(table, Policy.model_validate({"name": "confidence", "review_if": {"confidence": "sweep"},
                                                  "missing_confidence": "review"}),
                    reviewer=scenario.reviewer).curve("exact")
    found: dict[str, OptimizedThresholds] = {}
    for target in scenario.targets:
        optimized = optimized_policy(table, target, reviewer=scenario.reviewer, by_document_type=by_document_type)
        entry = OptimizedThresholds(feasible=optimized.result.feasible, optimal=optimized.result.optimal,
                                    best_single_threshold=operating_point(plain, target))
        if optimized.result.feasible:
            point = Sweeper(table, optimized.policy, reviewer=scenario.reviewer, costs=scenario.costs).at(0.0)
            thresholds = FrozenMap({name: FrozenMap(value) if isinstance(value, dict) else value
                                    for name, value in optimized.thresholds().items()})
            entry = replace(entry, thresholds=thresholds, auto_rate=finite(point["auto_rate"]),
                            metric=finite(point[table.metric_name]), cost=finite(point.get("cost")))
        found[f"{target:g}"] = entry
    return FrozenMap(found)


def _signals(table: OutcomeTable, scenario: Scenario) -> SignalsResult | None:
    """The named signals measured (docs/signals.md), certified as the scenario's ``certify:`` says and priced
    as its costs' ``per_value_signals``; None when the values carry no named signal."""
    certify = scenario.certify
    certification = None if certify is None else Certification(
        max_error=certify.max_error, delta=certify.delta, calibration_fraction=certify.calibration_fraction,
        seed=certify.seed)
    # as a policy pays them (CostModel.signal_price): the confidence and a signal not priced cost nothing
    costs = None if scenario.costs is None else {
        "confidence": 0.0, **{name: scenario.costs.per_value_signals.get(name, 0.0) for name in table.signals}}
    return signals_result(table, certification=certification, costs=costs)


def _calibration(table: OutcomeTable) -> Calibration | None:
    """How well the confidences match the share of right predictions (METRICS.md §7); None when no prediction
    has a confidence."""
    # predictions without a confidence (a policy's missing_confidence) have nothing to calibrate
    known = ~np.isnan(table.confidence)
    if not known.any():
        return None
    confidence, correct = table.confidence[known], is_correct(table)[known]
    width = reliability_table(confidence, correct, scheme="equal_width")
    mass = reliability_table(confidence, correct, scheme="equal_mass")
    keep = width.count > 0

    def groups(codes: np.ndarray, names: tuple[str, ...]) -> tuple[GroupCalibration, ...]:
        return tuple(GroupCalibration(**finite(row)) for row in calibration_per_group(confidence, correct, codes,
                                                                                        names))

    return Calibration(
        ece_equal_width=finite(width.ece), ece_equal_mass=finite(mass.ece), aurc=finite(aurc(confidence, correct)),
        reliability=Reliability(**{name: tuple(getattr(width, name)[keep].tolist())
                                   for name in ("lower", "upper", "count", "mean_confidence", "accuracy")}),
        by_field=groups(table.field_codes[known], table.field_names),
        # only when some record names its document type
        by_document_type=groups(table.document_type_codes[known], table.document_types)
        if any(table.document_types) else None,
        without_confidence=None if known.all() else int(np.count_nonzero(~known)))


def _data(table: OutcomeTable) -> KieData | VqaData:
    """The table's corpus figures (``score --json``) and its rows, the predictions a policy routes."""
    figures = finite({"predictions": len(table), **table.summary()})
    return KieData(**figures) if table.task == "kie" else VqaData(**figures)


def _policy_result(scenario: Scenario, sweeper: Sweeper, curve: Curve, exact: Curve, dominated_by: list[str],
                   baselines: Baselines, review_all: CostBreakdown | None) -> PolicyResult:
    """One policy's figures: on its exact curve (area, range, operating points), on the scenario's grid (cost
    optimum), its certification and its Monte Carlo spread."""
    points = FrozenMap({f"{target:g}": operating_point(exact, target) for target in scenario.targets})
    best = None
    if scenario.costs is not None:
        best = _cost_optimum(sweeper, curve, baselines, review_all)
    certify = scenario.certify
    result = PolicyResult(
        policy=curve.policy, description=sweeper.policy.description, knob=sweeper.policy.knob,
        auc=finite(area_under_curve(exact)), auto_rate_range=_range(exact.auto_rate), operating_points=points,
        cost_optimum=best,
        certified=None if certify is None else certify_policy(
            sweeper, max_error=certify.max_error, delta=certify.delta,
            calibration_fraction=certify.calibration_fraction, seed=certify.seed),
        dominated_by=tuple(dominated_by),
        # the items its reject band takes out, the same at every τ
        rejected=None if sweeper.policy.reject_if is None else int(np.count_nonzero(sweeper.compiled.rejected)))
    chosen = [p.threshold for p in points.values() if p is not None] + ([] if best is None else [best.threshold])
    if scenario.replicates and chosen:
        spread = sweeper.replicate(scenario.replicates, seed=scenario.seed, grid=np.unique(chosen))

        def statistic(name: str, of: str) -> tuple[float | None, ...]:
            return tuple(finite(getattr(spread, name)[of].tolist()))

        result = replace(result, monte_carlo=MonteCarlo(
            replicates=scenario.replicates, seed=scenario.seed, thresholds=tuple(spread.threshold.tolist()),
            metric=curve.metric_name,
            **{f"{name}_{of}": statistic(name, column) for name in ("mean", "std", "low", "high")
               for of, column in (("metric", curve.metric_name), ("auto_rate", "auto_rate"))}))
    return result


def _cost_optimum(sweeper: Sweeper, curve: Curve, baselines: Baselines,
                  review_all: CostBreakdown | None) -> CostOptimum:
    """The curve's cheapest threshold, and what it saves against the baselines: in all, in reviews, by kind."""
    best = cost_optimum(curve)
    assert curve.breakdown is not None and review_all is not None, "curves swept with costs have breakdowns"
    parts = curve.breakdown.at(int(np.flatnonzero(curve.threshold == best.threshold)[0]))
    saved = review_all.minus(parts)
    everything, nothing = baselines.review_all, baselines.review_none
    return CostOptimum(
        **vars(best),
        savings_vs_review_all=_less(everything.cost, best.cost),
        savings_vs_review_none=_less(nothing.cost, best.cost),
        breakdown=parts.split(),
        # what the saving comes from: the automation, and each kind of cost it moves
        reviews_saved=everything.reviewed - best.reviewed,
        savings_by_kind=CostSplit(review=float(saved.review), staffing=float(saved.staffing),
                                  errors=float(saved.errors), rejected=float(saved.rejected),
                                  signals=float(saved.signals) if np.any(saved.signals) else None),
        # the cheapest point at the lowest or highest τ swept, where a wider range would route differently
        edge_of_range=at_edge(sweeper, best.threshold, curve.threshold))


def _less(cost: float | None, by: float | None) -> float | None:
    """``cost - by``; None when either is unknown."""
    return None if cost is None or by is None else cost - by


def _range(values: np.ndarray) -> tuple[float | None, float | None]:
    """The least and greatest defined value; None and None when none is (a table without rows)."""
    defined = values[~np.isnan(values)]
    return (float(defined.min()), float(defined.max())) if len(defined) else (None, None)


def write_outputs(result: ScenarioResult, out: Path) -> list[Path]:
    """Write ``curves.csv`` and ``summary.json`` into ``out`` (created if needed), both or neither.

    Both texts are made before either file is written, and the files are
    written together (:func:`rpa_sim.common.files.atomic_write_files`): a failure
    leaves the folder as it was, an earlier run's files untouched.
    """
    curves, summary = (out / name for name in OUTPUT_FILES)
    return atomic_write_files({curves: curves_to_csv(result.curves).encode("utf-8"),
                               summary: summary_bytes(result.summary)})


def comparison_table(result: ScenarioResult) -> str:
    """The policies side by side: AUC, operating points, least cost, certified threshold, dominance; under it,
    what each column is and what to read with care: a cheapest point at the edge of the swept range, a
    monitoring method that is unreliable.

    The least cost is each policy's cheapest τ over the swept grid, for the whole data and under no
    constraint; the decision (:func:`rpa_sim.study.decision_text.decision_text`, printed first) keeps to the
    scenario's constraints and may be priced per day: a note says which is which, so that two costs of one point
    never disagree unexplained.
    """
    from rpa_sim.common.formatting import count, money, number  # noqa: PLC0415
    from rpa_sim.route.compare import edge_of_range_text  # noqa: PLC0415

    summary = result.summary
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
                cautions.append(f"* {p.policy}: {edge_of_range_text(best)}")
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
            notes.append(f"the decision above {decided}")
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
    data = summary.data
    size = f"{count(data.documents)} documents" if isinstance(data, KieData) else f"{count(data.questions)} questions"
    least = f"each policy's cheapest τ swept, for the whole data ({size}), under no constraint"
    decided = summary.decision
    if decided is None or decided.cost is None:
        return least, None
    return least, ("keeps to the scenario's constraints, its cost "
                   + ("per day" if decided.cost.per == "day" else "for the same data"))
