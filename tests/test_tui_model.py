"""The dashboard's model (no Textual): opening a records file instead of a scenario."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from rpa_sim.common.errors import InputError
from rpa_sim.evaluate.outcomes import evaluate_kie
from rpa_sim.records.readers import write_records
from rpa_sim.records.synthetic import generate_docvqa, generate_receipts
from rpa_sim.study.result import StudySummary
from rpa_sim.tui.loading import DATA_POLICIES, load_model


def test_records_file_opens_with_the_bundled_policies(tmp_path):
    path = tmp_path / "receipts.jsonl"
    write_records(generate_receipts(30, seed=4), path)
    model = load_model(str(path))
    assert model.name == "receipts.jsonl"
    assert [p.name for p in model.policies] == list(DATA_POLICIES["kie"])
    table = evaluate_kie(generate_receipts(30, seed=4))
    assert model.figures(0, 0.0)["kieval_aligned"] == table.counts.kieval_aligned


def test_vqa_records_file(tmp_path):
    path = tmp_path / "questions.jsonl.gz"
    write_records(generate_docvqa(40, seed=2), path)
    model = load_model(str(path))
    assert [p.name for p in model.policies] == list(DATA_POLICIES["vqa"])
    assert model.figures(0, 2.0)["anls"] == 1.0


@pytest.mark.parametrize("form", ["folder", "glob"])
def test_a_folder_or_a_glob_of_shards_opens_as_the_one_file_they_split(tmp_path, form):
    records = list(generate_receipts(30, seed=4))
    whole = tmp_path / "receipts.jsonl"
    write_records(records, whole)
    shards = tmp_path / "shards"
    shards.mkdir()
    for index, start in enumerate(range(0, 30, 8)):
        write_records(records[start:start + 8], shards / f"part-{index}.jsonl")
    source = shards if form == "folder" else shards / "part-*.jsonl"
    model, expected = load_model(str(source)), load_model(str(whole))
    assert [p.name for p in model.policies] == list(DATA_POLICIES["kie"])
    for policy in range(len(model.policies)):
        for threshold in (0.0, 0.5, 0.9, 1.0):
            assert model.figures(policy, threshold) == expected.figures(policy, threshold)
    assert model.figures(0, 0.0)["kieval_aligned"] == evaluate_kie(records).counts.kieval_aligned


def test_missing_records_file(tmp_path):
    with pytest.raises(InputError, match="no records file"):
        load_model(str(tmp_path / "none.jsonl"))


# -- the numbers the views show ----------------------------------------------------------------------------

def _model(task: str, policies=("confidence", "document-escalation", "grounding-gate", "per-field",
                                "audited-budget")):
    """A model of every policy with the study's summary, its per-field thresholds for 0.9 set to known ones."""
    from rpa_sim.evaluate.outcomes import evaluate_vqa
    from rpa_sim.route.costs import CostModel
    from rpa_sim.route.policies import load_policy
    from rpa_sim.route.reviewer import Reviewer
    from rpa_sim.study.result import FrozenMap
    from rpa_sim.study.run import run_study
    from rpa_sim.study.scenario import Scenario
    from rpa_sim.tui.model import DashboardModel

    if task == "kie":
        table = evaluate_kie(generate_receipts(120, seed=11))
    else:
        table = evaluate_vqa(generate_docvqa(150, seed=11))
        policies = ("confidence", "grounding-gate", "audited-budget")
    names = table.keys if task == "kie" else table.question_types
    # a budget over a grounding gate: entry order is not confidence order, so the budget swaps items
    gated_budget = load_policy("grounding-gate").model_copy(
        update={"name": "gated-budget", "budget": load_policy("audited-budget").budget})
    reviewer, costs = Reviewer(miss_rate=0.1, false_correction_rate=0.05), CostModel(hourly_rate=30,
                                                                                     per_residual_error=1.5)
    model = DashboardModel.from_table(task, table, [load_policy(p) for p in policies] + [gated_budget],
                                      reviewer=reviewer, costs=costs)
    scenario = Scenario.model_validate({"name": task, "data": {"generate": "receipts" if task == "kie" else "docvqa"},
                                        "policies": list(policies), "reviewer": reviewer.model_dump(),
                                        "costs": costs.model_dump(), "targets": [0.9]})
    summary = run_study(scenario, table, model.policies, sweepers=model.sweepers).summary
    known = replace(summary.optimized_per_field["0.9"], feasible=True,
                    thresholds=FrozenMap({names[0]: 0.7, names[1]: 0.55}))
    model.summary = replace(summary, optimized_per_field=FrozenMap({"0.9": known}))
    return model


@pytest.mark.parametrize("task", ["kie", "vqa"])
def test_field_rows_equal_counting_item_by_item(task):
    model = _model(task)
    t = model.table
    groups = [(g.by, g.codes, i, name) for g in t.field_groupings() for i, name in enumerate(g.names)]
    assert [g[0] for g in groups] == (["key"] * len(t.keys) if task == "kie" else
                                      ["question type"] * len(t.question_types) + ["answer type"] * 3)
    suggested = model.suggested_thresholds()
    assert suggested
    for policy in range(len(model.policies)):
        sweeper = model.sweepers[policy]
        entry, audit, budget = sweeper.compiled.entry, sweeper.policy.audit, sweeper.policy.budget
        for threshold in [0.0, 0.37, 0.5, 0.81, float(np.median(entry[np.isfinite(entry)])), 1.0]:
            rows = model.field_rows(policy, threshold)
            assert len(rows) == len(groups)
            reviewed = entry < threshold  # routed exactly when τ > entry
            if budget is not None:
                # within the budget: the least confident routed items (ties: the lower entry, the earlier item)
                routed = np.flatnonzero(reviewed)
                keep = routed[np.lexsort((routed, entry[routed], t.confidence[routed]))][:budget.limit(len(t))]
                reviewed = np.isin(np.arange(len(t)), keep)
            expected_reviewed = 0.0
            for row, (by, index, i, name) in zip(rows, groups):
                mine = index == i
                assert row["field"] == (name or "(none)") and row.get("by", "key") == by
                assert row["predictions"] == int(mine.sum())
                straight = (1 - audit) * int((mine & ~reviewed).sum())  # audits check a share of the rest
                if mine.any():
                    assert row["auto_rate"] == pytest.approx(straight / mine.sum(), abs=1e-12)
                    if by == groups[0][0]:
                        expected_reviewed += mine.sum() * (1 - row["auto_rate"])
                else:
                    assert row["auto_rate"] is None
                tuned = by in ("key", "question type")
                assert row["suggested_threshold"] == (suggested.get(name) if tuned else None)
                if task == "kie":
                    assert row["substitutions"] == int((t.outcome[mine] == 1).sum())
                    assert row["deletions"] == int((t.outcome[mine] == 2).sum())
                    assert row["additions"] == int((t.addition_key == i).sum())
                else:
                    assert row["errors"] == int((t.anls[mine] < 0.5).sum())  # right iff ANLS >= 0.5
                    if mine.any():
                        assert row["anls"] == pytest.approx(float(t.anls[mine].mean()), abs=1e-12)
                    else:
                        assert row["anls"] is None
            # the fields of a grouping add up to the figures panel's reviews
            assert expected_reviewed == pytest.approx(sweeper.at(threshold)["reviewed"], abs=1e-6)


@pytest.mark.parametrize("task", ["kie", "vqa"])
def test_value_ranges_hold_every_threshold_and_are_reached(task):
    model = _model(task)
    rng = np.random.default_rng(5)
    for policy, sweeper in enumerate(model.sweepers):
        ranges = model.value_ranges[policy]
        entry = sweeper.compiled.entry
        # every state τ in [0, 1] can reach: just above each entry, the ends, and random points
        thresholds = np.concatenate([[0.0, 1.0], np.nextafter(entry[(entry >= 0) & (entry < 1)], 2.0),
                                     rng.random(200)])
        curve = sweeper.curve(thresholds)
        for column in (model.metric_name, "auto_rate", "cost"):
            values = curve.columns[column]
            low, high = ranges[column]
            assert low == values.min() and high == values.max()
        lower, upper = model.plot_limits(model.metric_name)
        assert all(lower < y < upper for _x, y in model.points(0.42))


def test_padded_limits_widen_the_span():
    from rpa_sim.tui.model import padded_limits

    assert padded_limits([0.2, 0.8, float("nan")]) == (0.182, 0.818)
    assert padded_limits([-3.0]) == (-3.15, -2.85)
    assert padded_limits([0.0, 0.0]) == (-0.05, 0.05)


def test_questions_without_ocr_have_no_smudge_curve():
    from rpa_sim.evaluate.outcomes import evaluate_vqa
    from rpa_sim.records.models import VQARecord
    from rpa_sim.route.policies import load_policy
    from rpa_sim.tui.model import DashboardModel

    table = evaluate_vqa([VQARecord.model_validate({"id": f"q{i}", "answers": ["12"],
                                                    "prediction": {"answer": answer, "confidence": 0.5}})
                          for i, answer in enumerate(["12", "13"])])
    model = DashboardModel.from_table("no-ocr", table, [load_policy("confidence")])
    assert model.has_smudge and model.smudge_rows() == [] and model.smudge_at(0.25) is None
    assert model.figures(0, 0.0)["anls"] == 0.75  # 1 and 0.5 (NLS of "13" against "12")


def test_the_rates_of_a_key_are_its_share_of_kievals_denominator():
    model = _model("kie")
    table = model.table
    for row, key in zip(model.field_rows(0, 0.5), range(len(table.keys))):
        mine = table.key == key
        correct, additions = int((table.outcome[mine] == 0).sum()), int((table.addition_key == key).sum())
        denominator = int(mine.sum()) + additions
        for kind in ("substitutions", "deletions", "additions"):
            assert row[f"{kind}_rate"] == (row[kind] / denominator if denominator else None)
        if denominator:  # the three add up to 1 - the key's KIEval_Aligned
            rates = row["substitutions_rate"] + row["deletions_rate"] + row["additions_rate"]
            assert 1 - rates == pytest.approx(correct / denominator, abs=1e-12)
    vqa = _model("vqa")
    for row in vqa.field_rows(0, 0.5):
        assert row["errors_rate"] == (row["errors"] / row["predictions"] if row["predictions"] else None)


def test_staged_loading_reports_records_read_and_evaluated_then_sweeps(tmp_path):
    from rpa_sim.tui.loading import open_source
    from rpa_sim.tui.stages import Progress

    path = tmp_path / "receipts.jsonl"
    write_records(generate_receipts(700, seed=4), path)  # three batches of records
    reports: list[Progress] = []
    opened = open_source(str(path), report=reports.append)
    assert opened.source == opened.data_file == "receipts.jsonl" and len(opened.table) > 700
    stages = {report.stage for report in reports}
    assert stages == {"reading receipts.jsonl", "evaluating"}
    for stage in stages:
        mine = [r for r in reports if r.stage == stage]
        assert mine[0] == Progress(stage, 0, 700, "records")
        assert [r.done for r in mine[1:-1]] == sorted(r.done for r in mine[1:-1]) and len(mine) >= 4
        assert mine[-1] == Progress(stage, 700, 700, "records", finished=True)
    reports.clear()
    model = opened.model(report=reports.append)
    assert [(r.done, r.finished) for r in reports] == [(0, False), (1, False), (2, False), (3, False), (3, True)]
    assert reports[-1].text == "sweeping: 3 policies" and not model.summarised
    reports.clear()
    model.summary = opened.summary(model, report=reports.append)
    assert model.summarised and [r.finished for r in reports] == [False, True]
    assert isinstance(model.summary, StudySummary) and model.summary == load_model(str(path)).summary


def test_a_table_and_a_generated_scenario_report_their_reading(tmp_path):
    from rpa_sim.evaluate.tablefile import write_table
    from rpa_sim.tui.loading import open_source

    path = tmp_path / "receipts.parquet"
    write_table(evaluate_kie(generate_receipts(30, seed=4)), path)
    reports = []
    assert open_source(str(path), report=reports.append).source == "receipts.parquet"
    assert [(r.text, r.finished) for r in reports] == [("reading receipts.parquet", False),
                                                        ("reading receipts.parquet", True)]
    reports.clear()
    opened = open_source("receipts-demo", report=reports.append)
    assert opened.source == "receipts-demo" and opened.data_file is None
    assert reports[0].text == "generating and evaluating 1,000 receipts records"


def test_jumps_and_the_compare_columns_come_from_the_summary():
    model = load_model("receipts-demo")
    assert model.target_values == [0.92, 0.95]
    headers = model.compare_headers()
    assert list(headers.values()) == ["policy", "area", "auto-rate at 0.92", "τ for 0.92", "auto-rate at 0.95",
                                      "τ for 0.95", "least cost", "τ of least cost", "saves vs review-all",
                                      "certified τ", "dominated by"]
    rows = model.compare_rows()
    for policy, summary in enumerate(model.summary.policies):
        for target in model.target_values:
            point = summary.operating_points[f"{target:g}"]
            threshold = model.target_threshold(policy, target)
            assert rows[policy][f"threshold@{target:g}"] == threshold == (None if point is None else point.threshold)
            if threshold is not None:
                at = model.figures(policy, threshold)
                assert at["kieval_aligned"] >= target and at["auto_rate"] == point.auto_rate
        best = model.cost_optimum(policy)
        assert best is summary.cost_optimum
        assert rows[policy]["cost_optimum"] == best.cost and rows[policy]["optimum_threshold"] == best.threshold
        assert model.figures(policy, best.threshold)["cost"] == pytest.approx(best.cost, abs=1e-6)
    assert model.currency == "EUR" and model.money(1234.5) == "1,234.50 EUR"
    # the least cost is for the whole data under no constraint; the decision is priced on its own basis
    explanation = model.compare_explanation()
    assert "least cost: each policy's cheapest τ swept, for the whole data (1,000 documents), under no constraint" \
        in explanation
    assert "the decision (d) keeps to the scenario's constraints, its cost for the same data" in explanation
    assert model.summary.decision.cost.per == "data"


def test_before_the_summary_the_model_answers_without_it():
    from rpa_sim.tui.loading import open_source

    opened = open_source("receipts-demo")
    model = opened.model()
    assert model.summary is None and not model.summarised and not model.has_operations
    assert model.decision is None and model.constraint_checks(0, 0.5) == []
    assert model.cost_optimum(0) is None and model.target_threshold(0, 0.92) is None
    assert model.review_all_cost() is None and model.cost_window(0) == (0.0, 1.0)
    assert model.compare_rows() == [] and model.compare_explanation() == ""
    assert model.suggested_target() is None and model.suggested_thresholds() == {}
    assert model.calibration_rows() == [] and model.calibration_groups() == [] and model.operation is None


@pytest.mark.parametrize("task", ["kie", "vqa"])
def test_metric_limits_end_at_one_and_the_cost_window_holds_the_cheap_thresholds(task):
    model = _model(task)
    from rpa_sim.tui.model import padded_limits

    for column in (model.metric_name, "auto_rate"):
        values = [v for ranges in model.value_ranges for v in ranges[column]]
        low, high = padded_limits(values)
        near_one = high >= 1.0 - 0.03 * (high - low)
        assert model.plot_limits(column) == (low, 1.0 if near_one else high)
        if column == "auto_rate":  # up to 1 (nothing reviewed): the padded axis would pass it
            assert high > 1.0 and model.plot_limits(column)[1] == 1.0
    low, high = model.plot_limits("cost")
    assert high > max(v for ranges in model.value_ranges for v in ranges["cost"])
    baselines = model.summary.baselines
    model.summary = replace(model.summary, baselines=replace(
        baselines, review_all=replace(baselines.review_all, cost=model.figures(0, 2.0)["cost"])))
    grid = np.linspace(0, 1, 2001)
    for policy in range(len(model.policies)):
        window = model.cost_window(policy)
        costs = model.sweepers[policy].curve(grid).columns["cost"]
        cheap = grid[costs <= model.review_all_cost()]
        if len(cheap):
            assert window[0] <= cheap.min() and cheap.max() <= window[1]
            assert window[1] - window[0] >= min(0.02, cheap.max() - cheap.min() + 0.02) - 1e-9
        else:
            assert window == (0.0, 1.0)
        thresholds, values = model.cost_curve(policy, window)
        assert thresholds[0] == window[0] and thresholds[-1] == window[1]
        assert values.tolist() == model.sweepers[policy].curve(thresholds).columns["cost"].tolist()
    # a metric a little short of 1: the axis ends at 1; far from it, where the values end
    model.value_ranges = [{"kieval_aligned": (0.84, 0.994)}, {"kieval_aligned": (0.5, 0.7)}]
    assert padded_limits([0.84, 0.994])[1] < 1.0 and model.plot_limits("kieval_aligned", [0])[1] == 1.0
    assert model.plot_limits("kieval_aligned", [1]) == padded_limits([0.5, 0.7])
