"""The dashboard's model (no Textual): opening a records file instead of a scenario."""

from __future__ import annotations

import numpy as np
import pytest

from rpa_sim.errors import InputError
from rpa_sim.generators import generate_docvqa, generate_receipts
from rpa_sim.outcomes import evaluate_kie
from rpa_sim.readers import write_records
from rpa_sim.tui.model import DATA_POLICIES, load_model


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


def test_missing_records_file(tmp_path):
    with pytest.raises(InputError, match="no records file"):
        load_model(str(tmp_path / "none.jsonl"))


# -- the numbers the views show ----------------------------------------------------------------------------

def _model(task: str, policies=("confidence", "document-escalation", "grounding-gate", "per-field",
                                "audited-budget")):
    from rpa_sim.costs import CostModel
    from rpa_sim.outcomes import evaluate_vqa
    from rpa_sim.policies import load_policy
    from rpa_sim.reviewer import Reviewer
    from rpa_sim.tui.model import DashboardModel

    if task == "kie":
        table = evaluate_kie(generate_receipts(120, seed=11))
    else:
        table = evaluate_vqa(generate_docvqa(150, seed=11))
        policies = ("confidence", "grounding-gate", "audited-budget")
    names = table.keys if task == "kie" else table.question_types
    summary = {"optimized_per_field": {"0.9": {"thresholds": {names[0]: 0.7, names[1]: 0.55}}}}
    # a budget over a grounding gate: entry order is not confidence order, so the budget swaps items
    gated_budget = load_policy("grounding-gate").model_copy(
        update={"name": "gated-budget", "budget": load_policy("audited-budget").budget})
    return DashboardModel.from_table(task, table, [load_policy(p) for p in policies] + [gated_budget],
                                     reviewer=Reviewer(miss_rate=0.1, false_correction_rate=0.05),
                                     costs=CostModel(hourly_rate=30, per_residual_error=1.5), summary=summary)


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
    from rpa_sim.outcomes import evaluate_vqa
    from rpa_sim.policies import load_policy
    from rpa_sim.records import VQARecord
    from rpa_sim.tui.model import DashboardModel

    table = evaluate_vqa([VQARecord.model_validate({"id": f"q{i}", "answers": ["12"],
                                                    "prediction": {"answer": answer, "confidence": 0.5}})
                          for i, answer in enumerate(["12", "13"])])
    model = DashboardModel.from_table("no-ocr", table, [load_policy("confidence")])
    assert model.has_smudge and model.smudge_rows() == [] and model.smudge_at(0.25) is None
    assert model.figures(0, 0.0)["anls"] == 0.75  # 1 and 0.5 (NLS of "13" against "12")
