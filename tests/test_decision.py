"""The one decision (issue 21): the cheapest (policy, τ, team) meeting every constraint, equal to a brute-force search
that simulates every point; every bundled scenario's decision meets its constraints or names the binding one; the
round trip through JSON; ``decision_of`` and ``run`` follow it; the ``decision:`` section's errors."""

from __future__ import annotations

import functools
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rpa_sim.bundled import bundled_files
from rpa_sim.common.typedjson import decoded, encoded
from rpa_sim.evaluate.outcomes import evaluate_kie
from rpa_sim.operate.queue.summary import Workload, operation_model, released_quality
from rpa_sim.records.synthetic import generate_receipts
from rpa_sim.route.certify import certify_policy
from rpa_sim.route.costs import CostSplit
from rpa_sim.route.sweep import Sweeper, parse_thresholds
from rpa_sim.study.decision import CONSTRAINTS, Constraint, Decision, decide
from rpa_sim.study.decision_text import decision_text
from rpa_sim.study.recommend import decision_of
from rpa_sim.study.run import run_scenario, scenario_policies
from rpa_sim.study.scenario import Scenario, load_scenario
from tests.conftest import run_cli


@functools.lru_cache(maxsize=8)
def _table(n: int, seed: int):
    return evaluate_kie(generate_receipts(n, seed=seed))


def _inputs(scenario: Scenario):
    """What run_study hands the decision: sweepers, curves on the grid, certified thresholds, the operation."""
    table = _table(scenario.data.n, scenario.data.seed)
    policies = scenario_policies(scenario, None)
    sweepers = [Sweeper(table, policy, reviewer=scenario.reviewer, costs=scenario.costs) for policy in policies]
    curves = [sweeper.curve(parse_thresholds(scenario.thresholds)) for sweeper in sweepers]
    certify = scenario.certify
    certified = [None if certify is None else certify_policy(sweeper, **certify.model_dump()).threshold
                 for sweeper in sweepers]
    model = None if scenario.operations is None else operation_model(scenario, table)
    return table, sweepers, curves, certified, model


def _brute_force(scenario: Scenario):
    """Every (policy, τ, team), each simulated directly: the feasible best, the binding constraint, the constraints."""
    table, sweepers, curves, certified, model = _inputs(scenario)
    decision = scenario.decision
    bounds = (0, 0) if decision is None or decision.team is None else (decision.team.extra_per_shift.min,
                                                                       decision.team.extra_per_shift.max)
    extras = [0] if model is None else list(range(bounds[0], bounds[1] + 1))
    metric = table.metric_name
    unreviewed = table.summary()[metric]
    per_day = model.profile.documents_per_day if model is not None else (
        None if scenario.costs is None else scenario.costs.volume_per_day)
    factor = 1.0 if per_day is None else per_day / table.unit_count
    releases = model is not None and model.spec.patience is not None and model.spec.patience.on_expiry == "release"
    points = []
    for i, (sweeper, curve) in enumerate(zip(sweepers, curves)):
        for j, threshold in enumerate(curve.threshold.tolist()):
            at = sweeper.at(threshold)
            for extra in extras:
                met, heads = {}, 0
                quality = at[metric]
                if model is not None:
                    simulated = model.simulated(Workload.from_point(at, documents=table.unit_count), extra=extra)
                    level = 1.0 if simulated.service_level is None else simulated.service_level
                    met["service_level"] = level >= model.spec.service_level.share
                    if releases:
                        quality = released_quality(simulated, quality=quality, unreviewed=unreviewed)[1]
                    heads = sum(count for _, _, count in model.plan(extra))
                quality = -np.inf if np.isnan(quality) else quality
                if scenario.targets:
                    met["quality"] = quality >= scenario.targets[0]
                if decision is not None and decision.max_reviewers is not None:
                    met["reviewers"] = heads <= decision.max_reviewers
                total = None
                if scenario.costs is not None:
                    staffing = None if model is None else model.team_cost_per_day(extra)
                    total = scenario.costs.breakdown(scenario.reviewer, curve.basis.at(j).scaled(factor),
                                                     staffing=staffing).total
                if decision is not None and decision.max_cost_per_day is not None:
                    met["cost_per_day"] = total <= decision.max_cost_per_day
                if scenario.certify is not None:
                    met["certified_error"] = certified[i] is not None and threshold >= certified[i]
                auto = at["auto_rate"]
                key = ((total, -auto, heads, i, j, extra) if scenario.costs is not None
                       else (-auto, heads, -quality, i, j, extra))
                points.append((key, met, sweeper.policy.name, threshold, extra))
    names = [name for name in CONSTRAINTS if name in points[0][1]]

    def best(active):
        feasible = [point for point in points if all(point[1][name] for name in active)]
        return min(feasible, key=lambda point: point[0]) if feasible else None

    chosen = best(names)
    if chosen is not None:
        relaxed = [(found[0], name) for name in names if (found := best([n for n in names if n != name])) is not None
                   and found[0] < chosen[0]]
        return chosen, min(relaxed)[1] if relaxed else None, names
    alone = [name for name in names if best([name]) is None]
    if alone:
        return None, alone[0], names
    relaxed = [(found[0], name) for name in names if (found := best([n for n in names if n != name])) is not None]
    if relaxed:
        return None, min(relaxed)[1], names
    cheapest = best([])  # no relaxation alone helps: the first constraint the cheapest point misses
    return None, next(name for name in names if not cheapest[1][name]), names


@st.composite
def scenarios(draw):
    """Tiny scenarios: a few receipts, a coarse grid, a day of a small operation, and every kind of constraint."""
    operations = None
    if draw(st.booleans()):
        count = draw(st.integers(1, 3))
        shifts = draw(st.booleans())
        patience = draw(st.sampled_from([None, {"seconds": 3600, "on_expiry": "breach"},
                                         {"seconds": 1800, "on_expiry": "release", "distribution": "exponential"}]))
        operations = {
            "arrivals": {"per_hour": draw(st.sampled_from([4, 10, 25]))},
            "handling": {"per_document": {"kind": "exponential", "mean_seconds": draw(st.sampled_from([60, 300]))}},
            "reviewers": ({"shifts": [{"start_hour": 6, "end_hour": 14, "reviewers": count},
                                      {"start_hour": 14, "end_hour": 22, "reviewers": count}]} if shifts
                          else {"count": count}),
            "discipline": draw(st.sampled_from(["fcfs", "lowest_confidence"] + (["edf"] if patience else []))),
            "patience": patience,
            "service_level": {"share": draw(st.sampled_from([0.5, 0.8, 0.95])), "within_hours": 2},
            "days": 1, "seed": draw(st.integers(0, 3)), "hourly_cost": draw(st.sampled_from([None, 25.0])),
        }
    with_costs = draw(st.booleans())
    decision = {}
    if operations is not None and draw(st.booleans()):
        low = draw(st.integers(-1, 1))
        decision["team"] = {"extra_per_shift": {"min": low, "max": low + draw(st.integers(0, 3))}}
    if operations is not None and draw(st.booleans()):
        decision["max_reviewers"] = draw(st.integers(1, 6))
    if with_costs and operations is not None and draw(st.booleans()):
        decision["max_cost_per_day"] = draw(st.sampled_from([50.0, 300.0, 2000.0]))
    targets = draw(st.sampled_from([[], [0.85], [0.93], [0.999]]))
    if not with_costs and not targets:
        targets = [0.9]
    return Scenario.model_validate({
        "name": "tiny", "data": {"generate": "receipts", "n": draw(st.sampled_from([12, 30])),
                                 "seed": draw(st.integers(0, 2))},
        "policies": draw(st.sampled_from([["confidence"], ["confidence", "document-escalation"],
                                          ["document-escalation", "audited-budget"]])),
        "reviewer": {"seconds_per_item": 8, "seconds_per_document": 20, "miss_rate": 0.05},
        "costs": {"hourly_rate": 30, "per_residual_error": draw(st.sampled_from([0.5, 5.0]))} if with_costs else None,
        "thresholds": draw(st.sampled_from(["linspace:0:1:3", "linspace:0.5:1:5", "0.2,0.8,0.95,1.0"])),
        "targets": targets,
        "certify": {"max_error": 0.1, "delta": 0.2} if draw(st.booleans()) else None,
        "operations": operations,
        "decision": decision or None,
    })


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_the_decision_is_the_brute_force_best(scenario):
    chosen, binding, names = _brute_force(scenario)
    decision = decide(scenario, *_inputs(scenario)[1:])
    assert [c.name for c in decision.constraints] == names
    assert decision.binding == binding
    if chosen is None:
        assert not decision.feasible and decision.reason
        assert decision.binding in names
        # the point shown is the best but for the binding constraint, which it misses
        assert not next(c for c in decision.constraints if c.name == decision.binding).met
        return
    _, _, policy, threshold, extra = chosen
    assert decision.feasible and decision.reason == ""
    assert (decision.policy, decision.threshold) == (policy, threshold)
    assert (decision.reviewers is None) == (scenario.operations is None)
    if decision.reviewers is not None:
        assert decision.reviewers.extra_per_shift == extra
    assert all(constraint.met for constraint in decision.constraints)
    assert decision.alternatives == ()


def test_a_team_too_small_is_infeasible_with_alternatives():
    scenario = Scenario.model_validate({
        "name": "short-handed", "data": {"generate": "receipts", "n": 60, "seed": 1},
        "policies": ["confidence", "document-escalation"],
        "reviewer": {"seconds_per_item": 8, "seconds_per_document": 25},
        "costs": {"hourly_rate": 28, "per_residual_error": 4.0, "currency": "EUR"},
        "thresholds": "linspace:0:1:11", "targets": [0.95],
        "operations": {"arrivals": {"per_hour": 40}, "reviewers": {"count": 1},
                       "handling": {"per_document": {"kind": "exponential", "mean_seconds": 240}},
                       "service_level": {"share": 0.9, "within_hours": 1}, "days": 1},
        "decision": {"max_reviewers": 3},
    })
    decision = decide(scenario, *_inputs(scenario)[1:])
    assert not decision.feasible and decision.binding in ("service_level", "reviewers")
    assert "no point meets" in decision.reason
    kinds = {alternative.kind: alternative for alternative in decision.alternatives}
    more = kinds["team_for_threshold"]
    met = {c.name: c.met for c in more.constraints}
    assert met["quality"] and met["service_level"] and not met["reviewers"] and more.reviewers.count > 3
    for kind in ("threshold_for_team", "best_within_budget"):
        if kind in kinds:
            assert all(c.met for c in kinds[kind].constraints if c.name != "quality")


def _bundled(name: str):
    scenario, base = load_scenario(name)
    return run_scenario(scenario, base)


@pytest.mark.parametrize("name", sorted(bundled_files("scenario")))
def test_every_bundled_decision_meets_its_constraints_or_names_the_binding_one(name):
    result = _bundled(name)
    typed = result.summary.decision
    decision = encoded(typed)
    assert decoded(Decision, json.loads(json.dumps(decision)), "decision") == typed
    assert decision["policy"] is not None
    assert decision["rules"] == encoded(next(p for p in result.policies if p.name == typed.policy))
    met = {c["name"]: c["met"] for c in decision["constraints"]}
    if decision["feasible"]:
        assert all(met.values()) and decision["reason"] == ""
    else:
        assert decision["binding"] in met and not met[decision["binding"]] and decision["reason"]
    assert decision_of(result.summary) is typed
    if name == "operations-day":
        # the point recommended keeps the service level with the team as rostered
        assert decision["feasible"] and met["service_level"] and decision["reviewers"]["extra_per_shift"] == 0
        level = next(c for c in decision["constraints"] if c["name"] == "service_level")
        assert level["value"] >= level["target"] == 0.9
        assert decision["cost"]["per"] == "day" and decision["cost"]["staffing"] == 8 * 6 * 28


def test_round_trip_of_an_infeasible_decision_with_alternatives():
    scenario = Scenario.model_validate({
        "name": "short", "data": {"generate": "receipts", "n": 30, "seed": 2}, "policies": ["confidence"],
        "costs": {"hourly_rate": 30, "per_residual_error": 1.0}, "thresholds": "linspace:0:1:5", "targets": [0.9],
        "operations": {"arrivals": {"per_hour": 30}, "reviewers": {"shifts": [
            {"start_hour": 8, "end_hour": 16, "reviewers": 1}]},
            "handling": {"per_document": {"kind": "deterministic", "mean_seconds": 300}},
            "service_level": {"share": 0.95, "within_hours": 1}, "days": 1},
        "decision": {"team": {"extra_per_shift": {"min": 0, "max": 1}}, "max_cost_per_day": 5000},
    })
    decision = decide(scenario, *_inputs(scenario)[1:])
    assert not decision.feasible and decision.alternatives
    data = json.loads(json.dumps(encoded(decision)))
    assert decoded(Decision, data, "decision") == decision and encoded(decoded(Decision, data, "decision")) == data
    assert data["reviewers"]["shifts"] == [[8.0, 16.0, data["reviewers"]["shifts"][0][2]]]


def test_nothing_to_decide_without_costs_or_targets():
    scenario = Scenario.model_validate({"name": "bare", "data": {"generate": "receipts", "n": 12},
                                        "policies": ["confidence"], "thresholds": "linspace:0:1:3"})
    decision = decide(scenario, *_inputs(scenario)[1:])
    assert (decision.policy, decision.feasible, decision.basis) == (None, False, "target")
    assert "neither costs nor a target" in decision.reason
    assert decoded(Decision, encoded(decision), "decision") == decision


@functools.cache
def _tiny_summary():
    """A study's summary to hang decisions on (the run text reads the summary beside its decision)."""
    scenario = Scenario.model_validate({"name": "tiny", "data": {"generate": "receipts", "n": 40, "seed": 1},
                                        "policies": ["confidence"], "thresholds": "linspace:0:1:3",
                                        "targets": [0.95]})
    return run_scenario(scenario, None).summary


def _text(decision: Decision) -> list[str]:
    from dataclasses import replace

    return decision_text(replace(_tiny_summary(), decision=decision)).splitlines()


def test_the_run_text_states_each_bound_on_its_side():
    decision = Decision(
        policy="confidence", threshold=0.9, reviewers=None, feasible=True, binding=None,
        cost=CostSplit(review=1.0, staffing=2.0, errors=3.0, rejected=0.0, total=6.0, currency="EUR", per="day"),
        constraints=(Constraint("quality", 0.95, 0.96, True), Constraint("service_level", 0.9, 0.8, False),
                     Constraint("reviewers", 12, 12, True), Constraint("cost_per_day", 2000.0, 1820.5, True),
                     Constraint("certified_error", 0.03, 0.01, True)),
        alternatives=(), basis="cost", edge_of_range=False, reason="")
    assert _text(decision) == [
        "Decision: run confidence at τ = 0.9000.",
        "  Review a prediction iff its confidence is below τ.",
        "  cost: 6.00 EUR a day (review 1.00 + staffing 2.00 + errors left 3.00)",
        "  quality (KIEval_Aligned^τ) 0.9600 ≥ 0.9500 ✓ met", "  service level 80.0% ≥ 90.0% ✗ not met",
        "  reviewers 12 ≤ 12 ✓ met", "  cost a day 1,820.50 EUR ≤ 2,000.00 EUR ✓ met",
        "  certified error 1.0% measured, certified ≤ 3.0% ✓ met",
        "  main risk: service level 80.0% against 90.0%, not met.",
        "  next step: pilot it for two weeks; check a sample of the reviewed output."]


def test_a_cost_known_only_in_total_is_printed_as_its_total():
    """The recommended point of a summary written before decisions existed: its cost was not split."""
    decision = Decision(
        policy="confidence", threshold=0.9, reviewers=None, feasible=True, binding=None,
        cost=CostSplit(review=None, staffing=None, errors=None, rejected=None, total=6.0, currency=None, per="data"),
        constraints=(), alternatives=(), basis="cost", edge_of_range=False, reason="")
    assert _text(decision)[:3] == ["Decision: run confidence at τ = 0.9000.",
                                   "  Review a prediction iff its confidence is below τ.",
                                   "  cost: 6.00 for the data"]
    assert decoded(Decision, encoded(decision), "decision") == decision


def test_run_prints_the_decision_and_its_json_holds_it(capsys):
    status, out, err = run_cli(capsys, "run", "cost-benefit")
    assert status == 0, err
    block = out[:out.index("\n\n")]  # the decision first
    assert block.startswith("Decision: run ") and "cost: " in block and " for the data" in block
    assert "✓ met" in block and "edge of the" not in out  # τ = 1 is the grid's end, but nothing lies beyond it
    status, out, _ = run_cli(capsys, "run", "cost-benefit", "--format", "json")
    decision = json.loads(out)["decision"]
    assert decision["policy"] == "document-escalation" and decision["edge_of_range"] is False
    assert decision["cost"]["total"] == pytest.approx(sum(decision["cost"][k] for k in
                                                          ("review", "staffing", "errors", "rejected")))


def test_past_the_exact_budget_the_level_is_found_by_bisection_in_tau(monkeypatch):
    import rpa_sim.study.decision as decision_module

    scenario = Scenario.model_validate({
        "name": "dense", "data": {"generate": "receipts", "n": 200, "seed": 12},
        "policies": ["confidence", "document-escalation"],
        "reviewer": {"seconds_per_item": 8, "seconds_per_document": 25},
        "costs": {"hourly_rate": 28, "per_residual_error": 4.0}, "thresholds": "linspace:0:1:81", "targets": [0.95],
        "operations": {"arrivals": {"hourly": [0] * 7 + [60, 120, 160, 150, 120, 120, 150, 100, 30] + [0] * 8},
                       "reviewers": {"shifts": [{"start_hour": 7, "end_hour": 13, "reviewers": 3},
                                                {"start_hour": 13, "end_hour": 19, "reviewers": 3}]},
                       "service_level": {"share": 0.9, "within_hours": 4}, "days": 2},
    })
    inputs = _inputs(scenario)[1:]
    model = inputs[-1]
    runs = []
    original = model.simulated

    def counted(work, **options):
        runs.append((work, options))
        return original(work, **options)

    # the decision's simulations are those of the operation model it is given
    monkeypatch.setattr(model, "simulated", counted)
    exact = decide(scenario, *inputs)
    every = len(runs)
    runs.clear()
    monkeypatch.setattr(decision_module, "EXACT_SIMULATIONS", 0)
    bisected = decide(scenario, *inputs)
    assert bisected == exact and exact.feasible
    assert 0 < len(runs) < every
