"""Exact sweeps against naive re-evaluation through the metric library, and their invariants."""

from __future__ import annotations

import numpy as np
import pytest

from rpa_sim.costs import CostModel
from rpa_sim.metrics.kieval import evaluate_document
from rpa_sim.outcomes import evaluate_kie, evaluate_vqa
from rpa_sim.policies import Policy, load_policy
from rpa_sim.records import KIERecord, VQARecord
from rpa_sim.reviewer import Reviewer
from rpa_sim.sweep import Sweeper, curves_to_csv, curves_to_json, parse_thresholds
from rpa_sim.generators import generate_receipts

CONFIDENCES = [0.1, 0.3, 0.3, 0.5, 0.62, 0.8, 0.8, 0.9, 0.95, 1.0]  # ties on purpose
GROUNDINGS = [None, 0.0, 0.2, 0.45, 0.45, 0.7, 0.9, 1.0]


def kie_records(n=30, seed=0):
    """Generated receipts whose predictions get seeded confidences and groundings (some unknown)."""
    rng = np.random.default_rng(seed)
    records = []
    for record in generate_receipts(n, seed=seed):
        data = record.model_dump()
        for group in data["prediction"]["groups"]:
            for entity in group["entities"]:
                entity["confidence"] = float(rng.choice(CONFIDENCES))
                entity["grounding"] = GROUNDINGS[rng.integers(len(GROUNDINGS))]
        records.append(KIERecord.model_validate(data))
    return records


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


def vqa_records(n=40, seed=0):
    rng = np.random.default_rng(seed)
    words = ["total", "12", "LATTE", "4,000", "vat", "2019", "cash", "change", "Coca Cola"]
    records = []
    for i in range(n):
        answer = words[rng.integers(len(words))]
        guess = [answer, answer.lower(), "13", "LATE", "nothing here", words[rng.integers(len(words))]][rng.integers(6)]
        page = {"width": 500, "height": 800, "words": [
            {"text": w, "bbox": [20 + 50 * j, 40 * (j % 7) + 10, 60 + 50 * j, 40 * (j % 7) + 30]}
            for j, w in enumerate(" ".join(words).split())]}
        records.append(VQARecord.model_validate({
            "id": f"q{i}", "answers": [answer], "question_type": ["form", "table"][i % 2],
            "prediction": {"answer": guess, "confidence": float(rng.choice(CONFIDENCES)),
                           "grounding": GROUNDINGS[rng.integers(len(GROUNDINGS))]},
            "document": {"pages": [page]} if i % 4 else None}))
    return records


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


def test_cost_column():
    table = evaluate_kie(kie_records(), grounding="given")
    reviewer = Reviewer(seconds_per_item=10, seconds_per_document=30)
    costs = CostModel(hourly_rate=36.0, per_residual_error=2.0)
    curve = Sweeper(table, policy("escalate"), reviewer=reviewer, costs=costs).curve()
    c = curve.columns
    errors = c["residual_substitutions"] + c["residual_deletions"] + c["additions"]
    opened = table.documents - c["documents_straight_through"]
    assert np.allclose(c["cost"], c["reviewed"] * 0.1 + opened * 0.3 + errors * 2.0, rtol=0, atol=1e-12)


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


def test_parse_thresholds_rejects_garbage():
    with pytest.raises(ValueError, match="'linspace:0:1'"):
        parse_thresholds("linspace:0:1")
    with pytest.raises(ValueError, match="'0.5,x'"):
        parse_thresholds("0.5,x")


def test_dataframe_export():
    pd = pytest.importorskip("pandas", reason="pandas is optional: the DataFrame export needs it")
    table = evaluate_kie(kie_records(5), grounding="given")
    frame = Sweeper(table, policy("confidence")).curve("linspace:0:1:3").to_dataframe()
    assert isinstance(frame, pd.DataFrame) and list(frame.columns)[:3] == ["policy", "threshold", "auto_rate"]
    assert frame["threshold"].tolist() == [0.0, 0.5, 1.0]
