"""Exact sweeps against naive re-evaluation through the metric library, and their invariants."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rpa_sim.evaluate.metrics.kieval import evaluate_document
from rpa_sim.evaluate.outcomes import evaluate_kie, evaluate_vqa
from rpa_sim.records.models import KIERecord, VQARecord
from rpa_sim.records.synthetic import generate_receipts
from rpa_sim.route.costs import CostModel
from rpa_sim.route.policies import Policy, load_policy
from rpa_sim.route.reviewer import Reviewer
from rpa_sim.route.sweep import Sweeper, curves_to_csv, curves_to_json, parse_thresholds, stable_order
from tests.support_records import kie_records, vqa_records

POLICIES = {
    "confidence": {"review_if": {"confidence": "sweep"}},
    "per-field": {"review_if": {"confidence": {"below": "sweep",
                                               "fields": {"menu.price": 0.7, "total.total_price": 0.9}}}},
    "any-grounding": {"review_if": {"any_of": [{"confidence": "sweep"},
                                               {"grounding": {"below": 0.5, "missing": "review"}}]}},
    "all-grounding": {"review_if": {"all_of": [{"confidence": "sweep"},
                                               {"grounding": {"below": 0.8, "missing": "accept"}}]}},
    "grounding-sweep": {"review_if": {"any_of": [{"grounding": "sweep"}, {"confidence": 0.3}]}},
    "escalate": {"review_if": {"confidence": "sweep"}, "escalate": "document"},
    "escalate-fix": {"review_if": {"confidence": "sweep"}, "escalate": "document", "fix_additions": True},
    "budget-share": {"review_if": {"confidence": "sweep"}, "budget": {"share": 0.3}},
    "budget-grounding": {"review_if": {"grounding": "sweep"}, "budget": {"count": 7}},
    "budget-escalate-fix": {"review_if": {"confidence": "sweep"}, "escalate": "document", "fix_additions": True,
                            "budget": {"count": 25}},
}


def policy(name):
    return Policy.model_validate({"name": name, **POLICIES[name]})


# --- the naive reference ---------------------------------------------------------------------------

def naive_routed(p: Policy, threshold, confidence, grounding, field_names, fields, documents):
    """Items routed at one threshold, straight from the policy's definition."""
    def test(spec, scores):
        limit = np.full(len(scores), threshold if spec.below == "sweep" else spec.below)
        for name, value in spec.fields.items():
            limit[fields == field_names.index(name)] = value
        routed = scores < limit
        routed[np.isnan(scores)] = spec.missing == "review"
        return routed

    def holds(condition):
        if condition.confidence is not None:
            return test(condition.confidence, confidence)
        if condition.grounding is not None:
            return test(condition.grounding, grounding)
        parts = [holds(child) for child in (condition.any_of or condition.all_of)]
        return np.logical_or.reduce(parts) if condition.any_of else np.logical_and.reduce(parts)

    routed = holds(p.review_if)
    if p.escalate == "document":
        routed = np.isin(documents, documents[routed])
    return routed


def naive_reviewed(p, thresholds, confidence, grounding, field_names, fields, documents):
    """Per threshold, the reviewed items: routed ones, within the budget the least confident
    first (ties: the one routed at a lower threshold, then the earlier item)."""
    routed = [naive_routed(p, t, confidence, grounding, field_names, fields, documents) for t in thresholds]
    first = np.full(len(confidence), len(thresholds))
    for k in range(len(thresholds) - 1, -1, -1):
        first[routed[k]] = k
    reviewed = []
    for mask in routed:
        if p.budget is not None:
            limit = p.budget.limit(len(confidence))
            chosen = sorted(np.flatnonzero(mask), key=lambda i: (confidence[i], first[i], i))[:limit]
            mask = np.isin(np.arange(len(confidence)), chosen)
        reviewed.append(mask)
    return reviewed


def corrected_record(record: KIERecord, reviewed: np.ndarray, fix_additions: bool) -> KIERecord:
    """The record after a perfect reviewer: substitutions corrected, deletions removed, misses added."""
    outcome = evaluate_document(record.ground_truth, record.prediction)
    data = record.model_dump()
    sides = [data["prediction"]["entities"]] + [g["entities"] for g in data["prediction"]["groups"]]
    row = 0
    kept_sides = []
    for entities in sides:
        kept = []
        for entity in entities:
            if reviewed[row] and outcome.labels[row] == 2:
                pass
            else:
                if reviewed[row] and outcome.labels[row] == 1:
                    entity = {**entity, "value": outcome.corrections[row]}
                kept.append(entity)
            row += 1
        kept_sides.append(kept)
    if fix_additions and reviewed.any():
        paired = dict(outcome.pairs)
        new_groups: dict[int, list] = {}
        for addition in outcome.additions:
            entity = {"key": addition.key, "value": addition.value, "confidence": 1.0}
            if addition.group in paired:
                kept_sides[paired[addition.group]].append(entity)
            else:
                new_groups.setdefault(addition.group, []).append(entity)
        for group, entities in new_groups.items():
            kept_sides.append(entities)
            data["prediction"]["groups"].append({"name": record.ground_truth.groups[group - 1].name})
    data["prediction"]["entities"] = kept_sides[0]
    for group, entities in zip(data["prediction"]["groups"], kept_sides[1:]):
        group["entities"] = entities
    return KIERecord.model_validate(data)


def some(thresholds, most=25):
    return thresholds[np.unique(np.linspace(0, len(thresholds) - 1, most).round().astype(int))]


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_kie_sweep_equals_naive_reevaluation(name):
    records = kie_records()
    table = evaluate_kie(records, grounding="given")
    p = policy(name)
    sweeper = Sweeper(table, p)
    thresholds = some(sweeper.thresholds())
    curve = sweeper.curve(thresholds)
    reviewed = naive_reviewed(p, thresholds, table.confidence, table.grounding, table.keys, table.key,
                              table.document)
    assert any(m.any() for m in reviewed) and any(not m.all() for m in reviewed)
    for k, mask in enumerate(reviewed):
        corrected = [corrected_record(r, mask[table.document == d], p.fix_additions)
                     for d, r in enumerate(records)]
        counts = evaluate_kie(corrected, grounding="given").counts
        assert curve.columns["kieval_aligned"][k] == pytest.approx(counts.kieval_aligned, abs=1e-12)
        assert curve.columns["residual_substitutions"][k] == counts.substitutions
        assert curve.columns["residual_deletions"][k] == counts.deletions
        assert curve.columns["additions"][k] == counts.additions
        assert curve.columns["reviewed"][k] == mask.sum()
        assert curve.columns["auto_rate"][k] == pytest.approx(1 - mask.sum() / len(table), abs=1e-12)
        straight = table.documents - len(np.unique(table.document[mask]))
        assert curve.columns["documents_straight_through"][k] == straight


@pytest.mark.parametrize("name", ["confidence", "any-grounding", "grounding-sweep", "budget-share",
                                  "budget-grounding", "per-field-vqa"])
def test_vqa_sweep_equals_naive_reevaluation(name):
    records = vqa_records()
    table = evaluate_vqa(records, grounding="given")
    p = policy(name) if name != "per-field-vqa" else Policy.model_validate(
        {"name": name, "review_if": {"confidence": {"below": "sweep", "fields": {"table": 0.85}}}})
    sweeper = Sweeper(table, p)
    thresholds = some(sweeper.thresholds())
    curve = sweeper.curve(thresholds)
    reviewed = naive_reviewed(p, thresholds, table.confidence, table.grounding, table.question_types,
                              table.question_type, np.arange(len(table)))
    for k, mask in enumerate(reviewed):
        corrected = [r.model_copy(update={"prediction": r.prediction.model_copy(update={"answer": r.answers[0]})})
                     if mask[i] else r for i, r in enumerate(records)]
        summary = evaluate_vqa(corrected).summary()
        assert curve.columns["anls"][k] == pytest.approx(summary["anls"], abs=1e-12)
        assert curve.columns["accuracy"][k] == pytest.approx(summary["accuracy"], abs=1e-12)
        assert curve.columns["smudge"][k] == pytest.approx(summary["smudge"], abs=1e-12)
        assert curve.columns["reviewed"][k] == mask.sum()


def test_vqa_rejects_document_escalation():
    table = evaluate_vqa(vqa_records(4))
    with pytest.raises(ValueError, match="escalates documents"):
        Sweeper(table, policy("escalate"))


# --- invariants --------------------------------------------------------------------------------------

def test_threshold_zero_equals_score():
    table = evaluate_kie(kie_records(), grounding="given")
    point = Sweeper(table, load_policy("confidence")).at(0.0)
    assert point["kieval_aligned"] == table.counts.kieval_aligned
    assert (point["residual_substitutions"], point["residual_deletions"], point["additions"]) == (
        table.counts.substitutions, table.counts.deletions, table.counts.additions)
    assert point["auto_rate"] == 1.0 and point["documents_straight_through"] == table.documents


@pytest.mark.parametrize("seed", range(5))
def test_perfect_reviewer_curve_is_monotone(seed):
    table = evaluate_kie(generate_receipts(80, seed=seed))
    curve = Sweeper(table, load_policy("confidence")).curve()
    assert np.all(np.diff(curve.metric) >= -1e-15)
    assert np.all(np.diff(curve.auto_rate) <= 0)
    assert curve.auto_rate[-1] == 0.0


def test_expectations_equal_monte_carlo_means():
    table = evaluate_kie(kie_records(40, seed=3), grounding="given")
    p = Policy.model_validate({"name": "mc", "review_if": {"confidence": "sweep"}, "escalate": "document",
                               "fix_additions": True, "audit": 0.1})
    reviewer = Reviewer(miss_rate=0.2, false_correction_rate=0.05)
    sweeper = Sweeper(table, p, reviewer=reviewer)
    grid = some(sweeper.thresholds(), 8)
    expected = sweeper.curve(grid).columns
    spread = sweeper.replicate(4000, seed=11, grid=grid)
    # Counts are sums of independent draws: their means converge at the rate std / sqrt(runs).
    for name in ("reviewed", "residual_substitutions", "residual_deletions", "additions",
                 "documents_straight_through"):
        margin = 5 * spread.std[name] / np.sqrt(spread.replicates) + 1e-9
        assert np.all(np.abs(spread.mean[name] - expected[name]) <= margin), name
    # The reported metric is the ratio of expected counts; the mean ratio differs by far less than 1e-3 here.
    assert np.allclose(spread.mean["kieval_aligned"], expected["kieval_aligned"], atol=1e-3)


def test_replicates_are_deterministic_for_a_seed():
    table = evaluate_kie(kie_records(10), grounding="given")
    sweeper = Sweeper(table, policy("confidence"), reviewer=Reviewer(miss_rate=0.3))
    first, second = sweeper.replicate(20, seed=4), sweeper.replicate(20, seed=4)
    assert all(np.array_equal(first.mean[k], second.mean[k]) for k in first.mean)


def cost_records():
    """Two receipts: A has a substitution (.4), a correct value (.9), a deletion (.2) and misses "name";
    B has one correct value (.95)."""
    a = KIERecord.model_validate({"id": "a",
        "ground_truth": {"entities": [{"key": "total", "value": "10.00"}, {"key": "date", "value": "1.1"},
                                      {"key": "name", "value": "Cafe"}]},
        "prediction": {"entities": [{"key": "total", "value": "10.0", "confidence": 0.4},
                                    {"key": "date", "value": "1.1", "confidence": 0.9},
                                    {"key": "tax", "value": "1", "confidence": 0.2}]}})
    b = KIERecord.model_validate({"id": "b", "ground_truth": {"entities": [{"key": "total", "value": "5"}]},
                                  "prediction": {"entities": [{"key": "total", "value": "5", "confidence": 0.95}]}})
    return [a, b]


# A review costs 0.5, opening a document 2, an error left 10: priced directly, or as 50 s and 200 s of
# review at 36 an hour.
PRICES = [(CostModel(per_review=0.5, per_document=2.0, per_residual_error=10.0), {}),
          (CostModel(hourly_rate=36.0, per_residual_error=10.0), {"seconds_per_item": 50, "seconds_per_document": 200})]


@pytest.mark.parametrize(("costs", "seconds"), PRICES)
def test_cost_column_by_hand(costs, seconds):
    table = evaluate_kie(cost_records())
    assert (table.counts.substitutions, table.counts.deletions, table.counts.additions) == (1, 1, 1)
    perfect, sloppy = Reviewer(**seconds), Reviewer(miss_rate=0.5, false_correction_rate=0.25, **seconds)
    plain = Sweeper(table, policy("confidence"), reviewer=perfect, costs=costs)
    # reviews, documents opened, errors left:
    #   τ=0    0, 0, 3 (all)                          ->  30
    #   τ=.3   1 (tax), 1, 2 (the substitution, the addition) -> .5 + 2 + 20 = 22.5
    #   τ=.5   2 (+ total), 1, 1 (the addition)        ->  1 + 2 + 10 = 13
    #   τ=.95  3 (+ date), 1, 1                        ->  1.5 + 2 + 10 = 13.5 (B's .95 is not below .95)
    #   τ=1    4, 2, 1                                 ->  2 + 4 + 10 = 16
    np.testing.assert_allclose(plain.curve([0.0, 0.3, 0.5, 0.95, 1.0]).columns["cost"],
                               [30.0, 22.5, 13.0, 13.5, 16.0], rtol=0, atol=1e-12)
    # misses 1/2, false corrections 1/4. τ=.5: the substitution and the deletion each stay half the
    # time, the addition stays: 2 errors -> 1 + 2 + 20 = 23. τ=1: also 2 correct values broken a quarter
    # of the time: 2.5 errors -> 2 + 4 + 25 = 31.
    imperfect = Sweeper(table, policy("confidence"), reviewer=sloppy, costs=costs)
    np.testing.assert_allclose(imperfect.curve([0.5, 1.0]).columns["cost"], [23.0, 31.0], rtol=0, atol=1e-12)
    # An audit of 1/2 at τ=.5: date and B's total are reviewed half the time each (3 reviews); B is
    # opened half the time (1.5 documents); the addition stays -> 1.5 + 3 + 10 = 14.5.
    audited = Policy.model_validate({"name": "audited", "review_if": {"confidence": "sweep"}, "audit": 0.5})
    assert Sweeper(table, audited, reviewer=perfect, costs=costs).at(0.5)["cost"] == pytest.approx(14.5, abs=1e-12)
    # Escalation with additions fixed. τ=.3 opens A whole: 3 reviews, 1 document, no error left -> 3.5;
    # τ=1 opens both: 4 reviews, 2 documents -> 6. With the imperfect reviewer at τ=.3 the substitution,
    # the deletion and the addition stay half the time and date breaks a quarter of the time:
    # 1.75 errors -> 1.5 + 2 + 17.5 = 21.
    escalating = Sweeper(table, policy("escalate-fix"), reviewer=perfect, costs=costs)
    np.testing.assert_allclose(escalating.curve([0.0, 0.3, 1.0]).columns["cost"], [30.0, 3.5, 6.0], rtol=0, atol=1e-12)
    sloppy_escalation = Sweeper(table, policy("escalate-fix"), reviewer=sloppy, costs=costs)
    assert sloppy_escalation.at(0.3)["cost"] == pytest.approx(21.0, abs=1e-12)


@pytest.mark.parametrize("name", ["escalate", "escalate-fix", "budget-share", "any-grounding"])
def test_cost_column_replays_the_records(name):
    # Reviews at 10 s, documents at 30 s, 36 an hour: 0.1 and 0.3; an error left costs 2.
    records = kie_records()
    table = evaluate_kie(records, grounding="given")
    p = policy(name)
    reviewer = Reviewer(seconds_per_item=10, seconds_per_document=30)
    sweeper = Sweeper(table, p, reviewer=reviewer, costs=CostModel(hourly_rate=36.0, per_residual_error=2.0))
    thresholds = some(sweeper.thresholds())
    cost = sweeper.curve(thresholds).columns["cost"]
    reviewed = naive_reviewed(p, thresholds, table.confidence, table.grounding, table.keys, table.key,
                              table.document)
    replayed = []
    for mask in reviewed:
        corrected = [corrected_record(r, mask[table.document == d], p.fix_additions)
                     for d, r in enumerate(records)]
        counts = evaluate_kie(corrected, grounding="given").counts
        opened = len(np.unique(table.document[mask]))
        errors = counts.substitutions + counts.deletions + counts.additions
        replayed.append(0.1 * mask.sum() + 0.3 * opened + 2.0 * errors)
    assert len(set(replayed)) > 3  # the costs move along the curve
    np.testing.assert_allclose(cost, replayed, rtol=0, atol=1e-9)


def vqa_cost_records():
    """ANLS 1 (.9), ANLS .8 but not accurate (.6: LATE for LATTE), ANLS 0 (.3)."""
    return [VQARecord.model_validate({"id": f"q{i}", "answers": [answer],
                                      "prediction": {"answer": guess, "confidence": confidence}})
            for i, (answer, guess, confidence) in enumerate([("12", "12", 0.9), ("LATTE", "LATE", 0.6),
                                                             ("cash", "nothing", 0.3)])]


def test_vqa_cost_counts_a_question_below_half_anls_as_an_error():
    table = evaluate_vqa(vqa_cost_records())
    assert table.anls.tolist() == [1.0, 0.8, 0.0] and table.accuracy.tolist() == [1.0, 0.0, 0.0]
    # A review costs 1 and opens its question (0.5: a question is its own document); an error left,
    # a question whose ANLS is below 0.5 (the project's decision), costs 10; LATE (ANLS .8) is no error.
    costs = CostModel(per_review=1.0, per_document=0.5, per_residual_error=10.0)
    sweeper = Sweeper(table, policy("confidence"), costs=costs)
    # τ=0: 1 error ("nothing") -> 10; τ=.5: "nothing" reviewed -> 1.5; τ=.7: "LATE" too -> 3; τ=1: all
    # three -> 4.5
    np.testing.assert_allclose(sweeper.curve([0.0, 0.5, 0.7, 1.0]).columns["cost"], [10.0, 1.5, 3.0, 4.5],
                               rtol=0, atol=1e-12)
    # Misses 1/2, false corrections 1/4, all reviewed: "12" breaks a quarter of the time, "LATE" stays
    # (still no error) or becomes LATTE, "nothing" stays half the time: 0.75 errors -> 4.5 + 7.5 = 12.
    sloppy = Sweeper(table, policy("confidence"), reviewer=Reviewer(miss_rate=0.5, false_correction_rate=0.25),
                     costs=costs)
    assert sloppy.at(1.0)["cost"] == pytest.approx(12.0, abs=1e-12)


def test_exports_follow_formats():
    table = evaluate_kie(kie_records(5), grounding="given")
    curve = Sweeper(table, policy("confidence")).curve("linspace:0:1:3")
    header, *lines = curves_to_csv([curve]).splitlines()
    assert header == ("policy,threshold,auto_rate,reviewed,documents_straight_through,kieval_aligned,"
                      "residual_substitutions,residual_deletions,additions")
    assert len(lines) == 3 and lines[0].startswith("confidence,0.0,1.0,0.0,5.0,")
    import json
    rows = json.loads(curves_to_json([curve]))
    assert [r["threshold"] for r in rows] == [0.0, 0.5, 1.0] and rows[0]["policy"] == "confidence"


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_exact_grid_is_zero_every_distinct_finite_entry_and_one_above(name):
    sweeper = Sweeper(evaluate_kie(kie_records(), grounding="given"), policy(name))
    entry = sweeper.compiled.entry
    finite = entry[np.isfinite(entry)]
    expected = np.unique(np.concatenate([[0.0], finite, [np.nextafter(finite.max(), np.inf)]]))
    assert sweeper.thresholds().tolist() == expected.tolist()


def test_csv_reads_back_as_the_rows():
    import csv
    import io
    table = evaluate_kie(kie_records(8), grounding="given")
    costs = CostModel(per_review=1.0, per_document=0.5, per_residual_error=3.0)
    curves = [Sweeper(table, policy(name), costs=costs).curve() for name in ("confidence", "escalate-fix")]
    curves[0].columns["kieval_aligned"][0] = np.nan  # an undefined ratio: an empty cell
    header, *lines = list(csv.reader(io.StringIO(curves_to_csv(curves))))
    rows = [row for curve in curves for row in curve.rows()]
    assert len(lines) == len(rows) and header == list(rows[0])
    for line, row in zip(lines, rows):
        assert line[0] == row["policy"]
        assert [None if cell == "" else float(cell) for cell in line[1:]] == list(row.values())[1:]
    assert lines[0][header.index("kieval_aligned")] == ""
    # every number as the repr of a float (counts too: "5.0"), so it reads back exactly
    assert all(cell == "" or cell == repr(float(cell)) for line in lines for cell in line[1:])


def test_parse_thresholds_rejects_garbage():
    with pytest.raises(ValueError, match="'linspace:0:1'"):
        parse_thresholds("linspace:0:1")
    with pytest.raises(ValueError, match=r"'0\.5,x'"):
        parse_thresholds("0.5,x")


def test_dataframe_export():
    pd = pytest.importorskip("pandas", reason="pandas is optional: the DataFrame export needs it")
    table = evaluate_kie(kie_records(5), grounding="given")
    frame = Sweeper(table, policy("confidence")).curve("linspace:0:1:3").to_dataframe()
    assert isinstance(frame, pd.DataFrame) and list(frame.columns)[:3] == ["policy", "threshold", "auto_rate"]
    assert frame["threshold"].tolist() == [0.0, 0.5, 1.0]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([0.0, -0.0, 0.1, 0.25, 0.9, 1.0, math.inf, -math.inf, math.nan]), max_size=60))
def test_stable_order_is_numpys_stable_argsort(values):
    entries = np.array(values, dtype=np.float64)
    assert stable_order(entries).tolist() == np.argsort(entries, kind="stable").tolist()
