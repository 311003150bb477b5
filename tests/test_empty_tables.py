"""Tables without rows flow through the library: no prediction at all, or KIE documents whose entities were all
missed (additions only). Undefined figures are NaN in curves and null in the summary."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from rpa_sim.evaluate.metrics.calibration import is_correct
from rpa_sim.evaluate.outcomes import evaluate_kie, evaluate_vqa
from rpa_sim.records.models import KIERecord
from rpa_sim.records.readers import write_records
from rpa_sim.report.page import render_report, write_report
from rpa_sim.route.costs import CostModel
from rpa_sim.route.policies import load_policy
from rpa_sim.route.reviewer import Reviewer
from rpa_sim.route.sweep import Sweeper
from rpa_sim.study.run import run_scenario, run_study, write_outputs
from rpa_sim.study.scenario import Scenario, load_scenario
from rpa_sim.tui.model import DashboardModel

REVIEWER = Reviewer(miss_rate=0.1, false_correction_rate=0.05, seconds_per_item=6, seconds_per_document=20)
COSTS = CostModel(hourly_rate=36.0, per_residual_error=2.0)
POLICIES = {"kie": ["confidence", "document-escalation", "grounding-gate", "audited-budget"],
            "vqa": ["confidence", "grounding-gate", "audited-budget"]}


def _missed_only(documents: int = 2):
    """KIE records whose predictions are empty: each ground-truth entity is an addition."""
    return [KIERecord.model_validate({
        "id": f"r{i}", "prediction": {"entities": []},
        "ground_truth": {"entities": [{"key": "total", "value": "10.00"}, {"key": "date", "value": "1.1"}]}})
        for i in range(documents)]


TABLES = {"kie-empty": lambda: evaluate_kie([]), "vqa-empty": lambda: evaluate_vqa([]),
          "kie-additions-only": lambda: evaluate_kie(_missed_only())}


@pytest.fixture(params=sorted(TABLES))
def table(request):
    return TABLES[request.param]()


def _scenario(task: str, **extra) -> Scenario:
    return Scenario.model_validate({
        "name": "empty", "data": {"generate": "receipts"}, "policies": POLICIES[task],
        "reviewer": REVIEWER.model_dump(), "costs": COSTS.model_dump(), "thresholds": "linspace:0:1:5",
        "targets": [0.9], "certify": {"max_error": 0.1, "delta": 0.1}, "replicates": 20, **extra})


def test_sweeps_curves_points_and_replays(table):
    additions = table.counts.additions if table.task == "kie" else 0
    for name in POLICIES[table.task]:
        sweeper = Sweeper(table, load_policy(name), reviewer=REVIEWER, costs=COSTS)
        curve = sweeper.curve()
        assert curve.threshold.tolist() == [0.0, 1.0]  # 0 and one above the (missing) entries
        columns = curve.columns
        assert np.isnan(columns["auto_rate"]).all()  # no prediction: the auto-rate is 0 / 0
        assert columns["reviewed"].tolist() == [0.0, 0.0]
        assert columns["documents_straight_through"].tolist() == [table.unit_count] * 2
        # nothing can be reviewed, so the missed values stay: each costs per_residual_error
        assert columns["cost"].tolist() == [2.0 * additions] * 2
        if table.task == "kie":
            assert columns["additions"].tolist() == [additions] * 2
            # KIEval_Aligned^τ = 1 - Add / (N(PR*) + Add): 0 with additions, undefined without any entity
            np.testing.assert_array_equal(columns["kieval_aligned"], [0.0 if additions else np.nan] * 2)
        else:
            assert np.isnan(columns["anls"]).all() and np.isnan(columns["smudge"]).all()
        point = sweeper.at(0.5)
        assert point["reviewed"] == 0.0 and point["cost"] == 2.0 * additions
        spread = sweeper.replicate(10, seed=3)
        assert spread.mean["reviewed"].tolist() == [0.0, 0.0]
        assert spread.mean["cost"].tolist() == [2.0 * additions] * 2
        assert np.isnan(spread.mean["auto_rate"]).all()


def test_certification_and_calibration_have_nothing_to_count(table):
    assert is_correct(table).tolist() == [] and table.errors().dtype == bool
    result = run_study(_scenario(table.task), table, [load_policy(p) for p in POLICIES[table.task]])
    assert result.summary.to_dict()["calibration"] == {}
    for policy in result.summary.to_dict()["policies"]:
        certified = policy["certified"]
        if policy["policy"] == "audited-budget":
            assert certified["threshold"] is None and "budget" in certified["guarantee"]
            continue
        assert certified["threshold"] is None and certified["calibration_n"] == 0
        assert certified["accepted_n"] == 0 and certified["holdout_auto_rate"] is None
        assert "the calibration data holds 0 values" in certified["guarantee"]


def test_study_summary_is_json_with_nulls(table):
    result = run_study(_scenario(table.task), table, [load_policy(p) for p in POLICIES[table.task]])
    summary = json.loads(result.summary.to_json())
    additions = table.counts.additions if table.task == "kie" else 0
    assert summary["data"]["predictions"] == 0
    metric = 0.0 if additions else None
    assert summary["baselines"]["review_none"] == {"metric": metric, "reviewed": 0.0, "cost": 2.0 * additions}
    for policy in summary["policies"]:
        assert policy["auc"] is None and policy["auto_rate_range"] == [None, None]
        assert policy["operating_points"] == {"0.9": None}
        best = policy["cost_optimum"]
        assert best["auto_rate"] is None and best["cost"] == 2.0 * additions and best["savings_vs_review_all"] == 0.0
        spread = policy["monte_carlo"]
        assert spread["mean_auto_rate"] == [None] and spread["thresholds"] == [0.0]
    optimized = summary["optimized_per_field"]["0.9"]
    # with missed values, entity review can never reach 0.9; without any, there is nothing to tune
    assert optimized["feasible"] is (additions == 0)


def test_scenario_on_a_file_of_missed_entities(tmp_path):
    write_records(_missed_only(3), tmp_path / "missed.jsonl")
    (tmp_path / "s.yaml").write_text("name: missed\ndata: {file: missed.jsonl}\npolicies: [confidence, "
                                     "document-escalation]\ncosts: {per_review: 1, per_residual_error: 1}\n"
                                     "targets: [0.8]\ncertify: {max_error: 0.1, delta: 0.1}\nreplicates: 5\n")
    scenario, base = load_scenario(tmp_path / "s.yaml")
    result = run_scenario(scenario, base)
    written = write_outputs(result, tmp_path / "out")
    summary = json.loads(written[1].read_text())
    assert summary["data"]["documents"] == 3 and summary["data"]["additions"] == 6
    assert summary["baselines"]["review_all"] == {"metric": 0.0, "reviewed": 0.0, "cost": 6.0}
    assert written[0].read_text().splitlines()[1] == "confidence,0.0,,0.0,3.0,0.0,0.0,0.0,6.0,6.0"


def test_report_says_there_are_no_predictions(table, tmp_path):
    result = run_study(_scenario(table.task), table, [load_policy(p) for p in POLICIES[table.task]])
    path = write_report(result, tmp_path / "report.html", png_dir=tmp_path / "png")
    text = path.read_text(encoding="utf-8")
    assert 'id="no-predictions"' in text and "No predictions, so no calibration." in text
    assert "No predictions, so no field has a threshold to optimize." in text
    assert re.findall(r'<figure id="plot-([a-z-]+)"', text) == ["cost"]  # the cost of what is missing
    assert sorted(p.name for p in (tmp_path / "png").iterdir()) == ["cost.png"]
    assert render_report(result) == text


def test_dashboard_model(table):
    result = run_study(_scenario(table.task), table, [load_policy(p) for p in POLICIES[table.task]])
    model = DashboardModel.from_table("empty", table, result.policies, reviewer=REVIEWER, costs=COSTS,
                                      summary=result.summary)
    additions = table.counts.additions if table.task == "kie" else 0
    for policy in range(len(model.policies)):
        assert np.isnan(model.figures(policy, 0.5)["auto_rate"])
        assert model.figures_rows(policy, 0.5)[0]["auto_rate"] is None
        assert model.cost_rows(policy)[0]["cost"] == 2.0 * additions
        rows = model.field_rows(policy, 0.5)
        assert all(row["predictions"] == 0 and row["auto_rate"] is None for row in rows)
        if table.task == "kie":
            assert [(row["field"], row["additions"]) for row in rows] == (
                [("total", 2), ("date", 2)] if additions else [])
    for auto_rate, metric in model.points(0.5):
        assert np.isnan(auto_rate) and (metric == 0.0 if additions else np.isnan(metric))
    assert model.calibration_rows() == [] and model.smudge_rows() == [] and model.smudge_at(0.25) is None
    assert model.plot_limits(model.metric_name) == ((-0.05, 0.05) if additions else (0.0, 1.0))
    assert [row["auc"] for row in model.compare_rows()] == [None] * len(model.policies)
