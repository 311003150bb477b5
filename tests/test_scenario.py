"""Scenarios: the summary agrees with the curves, outputs are byte-identical, bad files fail clearly."""

from __future__ import annotations

import json

import pytest

from rpa_sim.common.errors import InputError
from rpa_sim.evaluate.metrics.calibration import ece, is_correct
from rpa_sim.route.certify import certify_threshold
from rpa_sim.route.compare import area_under_curve
from rpa_sim.route.sweep import Sweeper
from rpa_sim.study.run import run_scenario, run_study, write_outputs
from rpa_sim.study.scenario import bundled_scenarios, load_scenario

TINY = """
name: tiny
data: {generate: receipts, n: 120, seed: 4}
policies:
  - confidence
  - document-escalation
  - name: inline
    review_if: {confidence: {below: sweep, fields: {total.total_price: 0.9}}}
reviewer: {miss_rate: 0.05, seconds_per_item: 6, seconds_per_document: 20}
costs: {hourly_rate: 30, per_residual_error: 1.0}
thresholds: linspace:0:1:51
targets: [0.8, 0.9]
certify: {max_error: 0.05, delta: 0.1}
replicates: 50
seed: 3
"""


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY)
    scenario, base = load_scenario(path)
    return run_scenario(scenario, base)


def test_summary_agrees_with_curves(tiny):
    summary = tiny.summary.to_dict()
    assert [p["policy"] for p in summary["policies"]] == ["confidence", "document-escalation", "inline"]
    for policy, curve, p in zip(summary["policies"], tiny.curves, tiny.policies):
        exact = Sweeper(tiny.table, p, reviewer=tiny.scenario.reviewer).curve("exact")
        assert policy["auc"] == pytest.approx(area_under_curve(exact), abs=1e-12)
        for target, point in policy["operating_points"].items():
            reaching = exact.metric >= float(target)
            if point is None:
                assert not reaching.any()
                continue
            assert point["auto_rate"] == exact.auto_rate[reaching].max()
        best = policy["cost_optimum"]
        assert best["cost"] == curve.columns["cost"].min()
        assert best["savings_vs_review_all"] == pytest.approx(summary["baselines"]["review_all"]["cost"] - best["cost"])
    assert summary["data"]["documents"] == 120
    correct = is_correct(tiny.table)
    assert summary["calibration"]["ece_equal_width"] == ece(tiny.table.confidence, correct)
    spread = summary["policies"][0]["monte_carlo"]
    assert spread["replicates"] == 50 and len(spread["mean_kieval_aligned"]) == len(spread["thresholds"])


def test_a_study_on_sweepers_built_already_is_the_same_study(tiny):
    scenario, table, policies = tiny.scenario, tiny.table, tiny.policies
    sweepers = [Sweeper(table, p, reviewer=scenario.reviewer, costs=scenario.costs) for p in policies]
    assert run_study(scenario, table, policies, sweepers=sweepers).summary == tiny.summary
    other_reviewer = [Sweeper(table, p, costs=scenario.costs) for p in policies]
    for wrong in (sweepers[:2], sweepers[::-1], other_reviewer):
        with pytest.raises(ValueError, match="sweepers must be those of the policies on this table"):
            run_study(scenario, table, policies, sweepers=wrong)


def test_certified_threshold_of_the_plain_policy_equals_certify(tiny):
    certified = tiny.summary.to_dict()["policies"][0]["certified"]
    table = tiny.table
    direct = certify_threshold(table.confidence, ~is_correct(table), max_error=0.05, delta=0.1,
                               groups=table.document)
    assert certified["threshold"] == direct.threshold
    assert certified["accepted_n"] == direct.accepted_n and "exchangeable" in certified["guarantee"]


def test_outputs_are_byte_identical(tmp_path):
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY)
    outputs = []
    for run in ("a", "b"):
        scenario, base = load_scenario(path)
        written = write_outputs(run_scenario(scenario, base), tmp_path / run)
        outputs.append([p.read_bytes() for p in written])
    assert outputs[0] == outputs[1]
    rows = outputs[0][0].decode().splitlines()
    assert len(rows) == 1 + 3 * 51 and rows[0].endswith(",cost")
    json.loads(outputs[0][1])


@pytest.mark.parametrize("name", sorted(bundled_scenarios()))
def test_bundled_scenarios_run(name):
    scenario, base = load_scenario(name)
    summary = run_scenario(scenario, base).summary.to_dict()
    assert len(summary["policies"]) == len(scenario.policies)
    for policy in summary["policies"]:
        assert 0.0 < policy["auc"] <= 1.0
        assert any(point is not None for point in policy["operating_points"].values())
    assert any(best["feasible"] for best in summary["optimized_per_field"].values())


def test_the_six_bundled_scenarios():
    assert {"receipts-demo", "docvqa-demo", "policy-comparison", "cost-benefit", "imperfect-reviewer",
            "certified-threshold"} <= set(bundled_scenarios())


@pytest.mark.parametrize(("text", "message"), [
    ("name: s\npolicies: [confidence]\n", "data: missing (required)"),
    ("name: s\ndata: {generate: receipts, file: x.jsonl}\npolicies: [confidence]\n", "exactly one of file or generate"),
    ("name: s\ndata: {generate: receipts}\npolicies: []\n", "policies"),
    ("name: s\ndata: {generate: receipts}\npolicies: [confidence]\nthresholds: every\n", "'every'"),
    ("name: s\ndata: {generate: receipts}\npolicies: [confidence, confidence]\n", "policy names must differ"),
    ("name: s\ndata: {file: missing.jsonl}\npolicies: [confidence]\n", "missing.jsonl"),
])
def test_bad_scenarios(tmp_path, text, message):
    path = tmp_path / "s.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as error:
        scenario, base = load_scenario(path)
        run_scenario(scenario, base)
    assert message in str(error.value)


def test_optimized_per_field_meets_target_and_beats_one_threshold(tiny):
    for target, best in tiny.summary.to_dict()["optimized_per_field"].items():
        if not best["feasible"]:
            continue
        assert best["metric"] >= float(target) - 1e-9
        single = best["best_single_threshold"]
        if single is not None:
            assert best["auto_rate"] >= single["auto_rate"] - 1e-12
    assert any(best["feasible"] for best in tiny.summary.to_dict()["optimized_per_field"].values())


def test_certified_mode_reports_the_figures_at_its_threshold(tiny):
    certified = tiny.summary.to_dict()["policies"][0]["certified"]
    assert certified["threshold"] is not None
    scenario = tiny.scenario
    point = Sweeper(tiny.table, tiny.policies[0], reviewer=scenario.reviewer,
                    costs=scenario.costs).at(certified["threshold"])
    assert certified["at_threshold"] == {"auto_rate": point["auto_rate"], "metric": point["kieval_aligned"],
                                         "cost": point["cost"]}
