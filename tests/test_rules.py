"""Routing rules of issue 15 against direct counts on the records (plain loops, written from docs/replay.md).

The reference here never compiles a policy: it walks the records, evaluates each document with the
metric library, decides per item whether it is rejected, reviewed or accepted, and counts. A perfect
reviewer is assumed unless a test says otherwise, so a reviewed (or correctly re-keyed) error is gone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rpa_sim.common.errors import InputError
from rpa_sim.evaluate.metrics.anls import anls_scores
from rpa_sim.evaluate.metrics.kieval import DELETION, SUBSTITUTION, evaluate_document
from rpa_sim.evaluate.outcomes import evaluate_kie, evaluate_vqa
from rpa_sim.records.synthetic import generate_docvqa, generate_receipts
from rpa_sim.route.costs import CostModel
from rpa_sim.route.policies import Policy, load_policy
from rpa_sim.route.sweep import Sweeper, curves_to_csv
from rpa_sim.study.run import scenario_policies
from rpa_sim.study.scenario import Scenario

THRESHOLDS = (0.3, 0.55, 0.7, 0.85, 0.93, 0.97)
RECEIPTS = list(generate_receipts(40, seed=7))
TABLE = evaluate_kie(RECEIPTS)


def policy(**settings) -> Policy:
    return Policy.model_validate({"name": "p", **settings})


@dataclass(frozen=True)
class Document:
    confidence: list[float]
    label: list[int]
    additions: int
    keys: list[str]


DOCUMENTS = [Document(list(result.confidences), result.labels.tolist(), len(result.additions), list(result.keys))
             for result in (evaluate_document(r.ground_truth, r.prediction) for r in RECEIPTS)]


def aggregate(values: list[float], how: str) -> float:
    if how == "min":
        return min(values)
    if how == "mean":
        return sum(values) / len(values)
    return math.exp(sum(math.log(v) if v > 0 else -math.inf for v in values) / len(values))


def direct_kie(states: list[list[str]], *, fix_additions: bool = False, rejected_quality: str = "correct",
               whole_rejected: bool = False, documents: list[Document] | None = None) -> dict[str, float]:
    """Figures from per-item states ("accept", "review", "reject"), one list per document."""
    reviewed = rejected = straight = substitutions = deletions = kept = added = additions = 0
    rejected_documents = 0
    documents = DOCUMENTS if documents is None else documents
    for document, state in zip(documents, states):
        reviewed += state.count("review")
        rejected += state.count("reject")
        straight += not state or all(s == "accept" for s in state)
        rejected_documents += "reject" in state
        for label, s in zip(document.label, state):
            stays = s == "accept" or (s == "reject" and rejected_quality == "as_predicted")
            substitutions += stays and label == SUBSTITUTION
            deletions += stays and label == DELETION
            kept += stays or label != DELETION
        fixed = ("review" in state and fix_additions) or (
            whole_rejected and state and all(s == "reject" for s in state) and rejected_quality == "correct")
        added += document.additions if fixed else 0
        additions += 0 if fixed else document.additions
    errors = substitutions + deletions + additions
    denominator = kept + added + additions
    items = sum(len(d.label) for d in documents)
    return {"reviewed": reviewed, "rejected": rejected, "documents_straight_through": straight,
            "auto_rate": 1 - (reviewed + rejected) / items, "residual_substitutions": substitutions,
            "residual_deletions": deletions, "additions": additions,
            "kieval_aligned": (denominator - errors) / denominator, "rejected_documents": rejected_documents}


def assert_matches(point: dict[str, float], expected: dict[str, float]) -> None:
    for name, value in expected.items():
        if name in point:
            assert point[name] == pytest.approx(value, abs=1e-12), name


# --- 1. document_confidence ---------------------------------------------------------------------

@pytest.mark.parametrize("fix_additions", [False, True])
def test_min_aggregate_is_confidence_with_document_escalation(fix_additions):
    by_min = Sweeper(TABLE, policy(review_if={"document_confidence": {"aggregate": "min", "below": "sweep"}},
                                   fix_additions=fix_additions)).curve("exact")
    escalated = Sweeper(TABLE, policy(review_if={"confidence": "sweep"}, escalate="document",
                                      fix_additions=fix_additions)).curve("exact")
    assert by_min.column_names() == escalated.column_names()
    assert len(by_min) > 30
    for name in by_min.column_names()[1:]:
        np.testing.assert_array_equal(by_min.columns[name], escalated.columns[name], err_msg=name)


@pytest.mark.parametrize("how", ["mean", "geometric_mean", "min"])
@pytest.mark.parametrize("fix_additions", [False, True])
def test_document_aggregate_against_direct_count(how, fix_additions):
    sweeper = Sweeper(TABLE, policy(review_if={"document_confidence": {"aggregate": how, "below": "sweep"}},
                                    fix_additions=fix_additions))
    for tau in THRESHOLDS:
        states = [["review" if d.confidence and aggregate(d.confidence, how) < tau else "accept"] * len(d.label)
                  for d in DOCUMENTS]
        assert_matches(sweeper.at(tau), direct_kie(states, fix_additions=fix_additions))


def test_fixed_document_rule_inside_any_of_against_direct_count():
    # entity review below τ, and every document whose mean confidence is below 0.9 reviewed whole
    sweeper = Sweeper(TABLE, policy(review_if={"any_of": [
        {"confidence": "sweep"}, {"document_confidence": {"aggregate": "mean", "below": 0.9}}]}))
    for tau in THRESHOLDS:
        states = [["review" if aggregate(d.confidence, "mean") < 0.9 or any(c < tau for c in d.confidence)
                   else "accept"] * len(d.label) for d in DOCUMENTS]
        assert_matches(sweeper.at(tau), direct_kie(states))


def test_document_rule_all_of_entity_rule_against_direct_count():
    sweeper = Sweeper(TABLE, policy(review_if={"all_of": [
        {"confidence": 0.8}, {"document_confidence": {"aggregate": "geometric_mean", "below": "sweep"}}]}))
    for tau in THRESHOLDS:
        states = [["review" if any(c < 0.8 and aggregate(d.confidence, "geometric_mean") < tau
                                   for c in d.confidence) else "accept"] * len(d.label) for d in DOCUMENTS]
        assert_matches(sweeper.at(tau), direct_kie(states))


def test_document_rules_need_documents():
    table = evaluate_vqa(generate_docvqa(10, seed=1))
    with pytest.raises(InputError, match="document_confidence rule, but these items have no documents"):
        Sweeper(table, policy(review_if={"document_confidence": {"aggregate": "mean", "below": "sweep"}}))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), how=st.sampled_from(["mean", "geometric_mean"]))
def test_aggregate_sweeps_are_monotone(seed, how):
    table = evaluate_kie(generate_receipts(12, seed=seed))
    curve = Sweeper(table, policy(review_if={"document_confidence": {"aggregate": how, "below": "sweep"}},
                                  fix_additions=True)).curve("exact")
    assert np.all(np.diff(curve.columns["reviewed"]) >= 0)
    assert np.all(np.diff(curve.columns["documents_straight_through"]) <= 0)
    assert np.all(np.diff(curve.metric) >= -1e-12)  # a perfect reviewer only ever fixes


# --- 2. reject_if ---------------------------------------------------------------------------------

@pytest.mark.parametrize("quality", ["correct", "as_predicted"])
def test_entity_reject_band_against_direct_count(quality):
    costs = CostModel(per_review=0.5, per_document=2.0, per_rejected=3.0, per_rejected_document=7.0,
                      per_residual_error=11.0)
    sweeper = Sweeper(TABLE, policy(review_if={"confidence": "sweep"}, reject_if={"confidence": 0.3},
                                    rejected_quality=quality), costs=costs)
    for tau in THRESHOLDS:
        states = [["reject" if c < 0.3 else "review" if c < tau else "accept" for c in d.confidence]
                  for d in DOCUMENTS]
        expected = direct_kie(states, rejected_quality=quality)
        point = sweeper.at(tau)
        assert_matches(point, expected)
        assert expected["rejected"] > 0
        opened = sum("review" in s for s in states)
        errors = expected["residual_substitutions"] + expected["residual_deletions"] + expected["additions"]
        assert point["cost"] == pytest.approx(0.5 * expected["reviewed"] + 2.0 * opened + 3.0 * expected["rejected"]
                                              + 7.0 * expected["rejected_documents"] + 11.0 * errors, abs=1e-9)


@pytest.mark.parametrize("quality", ["correct", "as_predicted"])
def test_document_reject_band_against_direct_count(quality):
    # documents whose mean confidence is below 0.85 are rejected whole; entities below τ reviewed
    sweeper = Sweeper(TABLE, policy(review_if={"confidence": "sweep"}, rejected_quality=quality,
                                    reject_if={"document_confidence": {"aggregate": "mean", "below": 0.85}}))
    for tau in THRESHOLDS:
        states = [["reject"] * len(d.label) if aggregate(d.confidence, "mean") < 0.85 else
                  ["review" if c < tau else "accept" for c in d.confidence] for d in DOCUMENTS]
        assert 0 < sum("reject" in s for s in states) < len(states)
        assert_matches(sweeper.at(tau), direct_kie(states, rejected_quality=quality, whole_rejected=True))


def test_reject_wins_over_review_and_escalates_nothing():
    # escalate: document; an item rejected alone does not send its document's other items to review
    sweeper = Sweeper(TABLE, policy(review_if={"confidence": "sweep"}, escalate="document", fix_additions=True,
                                    reject_if={"confidence": 0.3}))
    for tau in THRESHOLDS:
        states = []
        for d in DOCUMENTS:
            document_rejected = any(c < 0.3 for c in d.confidence)
            reviewed = not document_rejected and any(c < tau for c in d.confidence)
            states.append(["reject" if document_rejected else "review" if reviewed else "accept"] * len(d.label))
        assert_matches(sweeper.at(tau), direct_kie(states, fix_additions=True, whole_rejected=True))


def test_vqa_reject_band_against_direct_count():
    records = list(generate_docvqa(200, seed=3))
    sweeper = Sweeper(evaluate_vqa(records), policy(review_if={"confidence": "sweep"},
                                                    reject_if={"confidence": 0.2}))
    scores = anls_scores([r.answers for r in records], [r.prediction.answer for r in records])
    for tau in THRESHOLDS:
        touched = [r.prediction.confidence < tau for r in records]  # rejected (correct) or reviewed: ANLS 1
        rejected = sum(r.prediction.confidence < 0.2 for r in records)
        point = sweeper.at(tau)
        assert point["rejected"] == rejected > 0
        assert point["reviewed"] == sum(touched) - rejected
        assert point["documents_straight_through"] == len(records) - sum(touched)
        assert point["anls"] == pytest.approx(sum(1.0 if t else s for t, s in zip(touched, scores)) / len(records))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), reject=st.floats(0.0, 1.0), audit=st.sampled_from([0.0, 0.1]),
       escalate=st.sampled_from(["none", "document"]))
def test_rejected_reviewed_and_accepted_partition_the_items(seed, reject, audit, escalate):
    table = evaluate_kie(generate_receipts(10, seed=seed))
    curve = Sweeper(table, policy(review_if={"confidence": "sweep"}, reject_if={"confidence": reject},
                                  audit=audit, escalate=escalate)).curve("exact")
    rejected = curve.columns["rejected"]
    assert np.all(rejected == np.count_nonzero(table.confidence < reject if escalate == "none" else np.isin(
        table.document, table.document[table.confidence < reject])))
    np.testing.assert_allclose(curve.columns["reviewed"] + rejected + curve.auto_rate * len(table), len(table))
    assert np.all(curve.columns["reviewed"] <= len(table) - rejected + 1e-9)


def test_curves_of_rejecting_and_plain_policies_share_one_csv():
    plain = Sweeper(TABLE, load_policy("confidence")).curve("0.5,0.9")
    band = Sweeper(TABLE, policy(review_if={"confidence": "sweep"}, reject_if={"confidence": 0.3})).curve("0.5,0.9")
    lines = curves_to_csv([plain, band]).splitlines()
    assert lines[0].startswith("policy,threshold,auto_rate,reviewed,rejected,documents_straight_through,")
    assert [line.split(",")[4] for line in lines[1:]] == ["0.0", "0.0"] + [repr(float(np.count_nonzero(
        TABLE.confidence < 0.3)))] * 2
    assert "rejected" not in curves_to_csv([plain]).splitlines()[0]


@pytest.mark.parametrize(("settings", "message"), [
    ({"reject_if": {"confidence": "sweep"}, "review_if": {"confidence": 0.5}},
     "reject_if takes fixed thresholds only"),
    ({"reject_if": {"confidence": 0.2}, "rejected_quality": "perfect"}, "rejected_quality"),
])
def test_bad_reject_settings(tmp_path, settings, message):
    import yaml

    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({"name": "p", "review_if": {"confidence": "sweep"}, **settings}))
    with pytest.raises(InputError, match=message):
        load_policy(path)


def test_monte_carlo_replays_agree_with_the_expectation_under_a_reject_band():
    from rpa_sim.route.reviewer import Reviewer

    sweeper = Sweeper(TABLE, policy(review_if={"confidence": "sweep"}, reject_if={"confidence": 0.3}, audit=0.1,
                                    escalate="document", fix_additions=True),
                      reviewer=Reviewer(miss_rate=0.2, false_correction_rate=0.1))
    spread = sweeper.replicate(400, seed=1, grid=[0.7, 0.9])
    for index, tau in enumerate((0.7, 0.9)):
        expected = sweeper.at(tau)
        for name in ("kieval_aligned", "auto_rate"):
            error = spread.std[name][index] / np.sqrt(400)
            assert abs(spread.mean[name][index] - expected[name]) <= 4 * error + 1e-12, (name, tau)


# --- 3. document types -------------------------------------------------------------------------------

TYPES = ("invoice", "receipt", "photo")
TYPED = [record.model_copy(update={"document_type": TYPES[i % 3] if i % 7 else None})
         for i, record in enumerate(RECEIPTS)]
TYPED_TABLE = evaluate_kie(TYPED)


def test_document_types_are_a_table_column():
    assert TYPED_TABLE.document_types == ("", "receipt", "photo", "invoice")  # first appearance
    expected = [TYPES[i % 3] if i % 7 else "" for i in range(len(TYPED))]
    assert [TYPED_TABLE.document_types[c] for c in TYPED_TABLE.document_type] == expected
    assert TYPED_TABLE.document_type_codes.tolist() == TYPED_TABLE.document_type[TYPED_TABLE.document].tolist()
    assert TABLE.document_types == ("",)


def test_per_type_thresholds_against_direct_count():
    settings = {"below": "sweep", "fields": {"total.total_price": 0.97},
                "document_types": {"invoice": 0.9, "photo": {"fields": {"total.total_price": 0.5}},
                                   "receipt": {"below": 0.6, "fields": {"menu.price": 0.99}}}}
    sweeper = Sweeper(TYPED_TABLE, policy(review_if={"confidence": settings}))

    def threshold(kind: str | None, key: str, tau: float) -> float:
        if kind == "photo" and key == "total.total_price":
            return 0.5
        if kind == "receipt":
            return 0.99 if key == "menu.price" else 0.6
        if kind == "invoice":
            return 0.9
        return 0.97 if key == "total.total_price" else tau

    for tau in THRESHOLDS:
        states = [["review" if c < threshold(r.document_type, key, tau) else "accept"
                   for c, key in zip(d.confidence, d.keys)] for r, d in zip(TYPED, DOCUMENTS)]
        assert_matches(sweeper.at(tau), direct_kie(states))


def test_unknown_document_types_fail_fast():
    bad = policy(review_if={"confidence": {"below": "sweep", "document_types": {"invoce": 0.9}}})
    with pytest.raises(InputError, match="document type 'invoce', which no record has "
                                         r"\(document types: 'receipt', 'photo', 'invoice'\)"):
        Sweeper(TYPED_TABLE, bad)


def test_document_types_in_vqa_records_and_the_fast_path():
    from rpa_sim.records.models import VQARecord, decode_fast

    line = '{"id": "q", "answers": ["1"], "document_type": "form", "prediction": {"answer": "1", "confidence": 0.5}}'
    assert decode_fast("vqa", line).document_type == VQARecord.model_validate_json(line).document_type == "form"
    assert decode_fast("kie", '{"id": "r", "document_type": "invoice"}').document_type == "invoice"
    assert decode_fast("kie", '{"id": "r", "document_type": 3}') is None  # the model says why
    records = [r.model_copy(update={"document_type": "form" if i % 2 else None})
               for i, r in enumerate(generate_docvqa(6, seed=2))]
    table = evaluate_vqa(records)
    assert table.document_types == ("", "form") and table.document_type.tolist() == [0, 1] * 3


@pytest.mark.parametrize("task", ["kie", "vqa"])
def test_document_types_survive_tables_files_and_concatenation(tmp_path, task):
    import pyarrow.parquet as pq

    from rpa_sim.evaluate.outcomes import concat_tables
    from rpa_sim.evaluate.tablefile import read_table, write_table

    if task == "kie":
        records, evaluate = TYPED, evaluate_kie
    else:
        records = [r.model_copy(update={"document_type": TYPES[i % 3] if i % 4 else None})
                   for i, r in enumerate(generate_docvqa(30, seed=4))]
        evaluate = evaluate_vqa
    whole = evaluate(records)
    write_table(whole, tmp_path / "whole.parquet")
    write_table(concat_tables([evaluate(records[:9]), evaluate(records[9:])]), tmp_path / "parts.parquet")
    assert (tmp_path / "whole.parquet").read_bytes() == (tmp_path / "parts.parquet").read_bytes()
    again = read_table(tmp_path / "whole.parquet")
    assert again.document_types == whole.document_types
    np.testing.assert_array_equal(again.document_type, whole.document_type)
    # a table written before the column existed still reads: every record without a type
    old = pq.read_table(tmp_path / "whole.parquet")
    pq.write_table(old.drop_columns(["document_type"]), tmp_path / "old.parquet")
    before = read_table(tmp_path / "old.parquet")
    assert before.document_types == ("",) and not before.document_type.any()


@pytest.mark.parametrize("target", [0.85, 0.9])
def test_optimiser_over_field_and_document_type_cells(target):
    from rpa_sim.route.per_field.policy import optimized_policy

    cells = optimized_policy(TYPED_TABLE, target, by_document_type=True)
    fields = optimized_policy(TYPED_TABLE, target)
    assert cells.result.feasible and fields.result.feasible
    # every per-field answer is also a per-cell one, so cells automate at least as much
    assert cells.result.accepted >= fields.result.accepted
    assert set(cells.thresholds()) == set(TYPED_TABLE.document_types)
    point = Sweeper(TYPED_TABLE, cells.policy).at(0.0)
    assert point["auto_rate"] == pytest.approx(cells.result.auto_rate, abs=1e-12)
    assert point["kieval_aligned"] >= target - 1e-12
    # the cells' thresholds, applied by hand
    types = [TYPED_TABLE.document_types[c] for c in TYPED_TABLE.document_type_codes]
    keys = [TYPED_TABLE.keys[k] for k in TYPED_TABLE.key]
    limits = cells.thresholds()
    accepted = sum(c >= (math.inf if limits[t][k] is None else limits[t][k])
                   for c, t, k in zip(TYPED_TABLE.confidence.tolist(), types, keys))
    assert accepted == cells.result.accepted


def test_calibration_per_document_type_and_field_against_direct_count():
    from rpa_sim.evaluate.metrics.calibration import calibration_per_group, ece

    right = ~TYPED_TABLE.errors()
    types = [TYPED_TABLE.document_types[c] for c in TYPED_TABLE.document_type_codes]
    rows = calibration_per_group(TYPED_TABLE.confidence, right, TYPED_TABLE.document_type_codes,
                                 TYPED_TABLE.document_types)
    assert [row["name"] for row in rows] == list(TYPED_TABLE.document_types)
    for row in rows:
        mine = [i for i, t in enumerate(types) if t == row["name"]]
        confidence = [float(TYPED_TABLE.confidence[i]) for i in mine]
        assert row["predictions"] == len(mine)
        assert row["accuracy"] == pytest.approx(sum(bool(right[i]) for i in mine) / len(mine))
        # equal-width ECE written out: per bin of width 1/15 (the last closed), |accuracy - mean confidence| by share
        gap = 0.0
        for b in range(15):
            inside = [i for i, c in zip(mine, confidence) if b / 15 <= c < (b + 1) / 15 or (b == 14 and c == 1.0)]
            if inside:
                accuracy = sum(bool(right[i]) for i in inside) / len(inside)
                mean = sum(float(TYPED_TABLE.confidence[i]) for i in inside) / len(inside)
                gap += len(inside) / len(mine) * abs(accuracy - mean)
        assert row["ece_equal_width"] == pytest.approx(gap, abs=1e-12)
        assert row["ece_equal_mass"] == ece(confidence, right[mine], scheme="equal_mass")


def test_run_summary_report_and_dashboard_show_calibration_per_group(tmp_path):
    from rpa_sim.study.run import run_study
    from rpa_sim.study.scenario import Scenario

    scenario = Scenario.model_validate({"name": "s", "data": {"generate": "receipts", "n": 5},
                                        "policies": ["confidence"], "thresholds": "0.5"})
    calibration = run_study(scenario, TYPED_TABLE, [load_policy("confidence")]).summary.to_dict()["calibration"]
    assert [row["name"] for row in calibration["by_document_type"]] == list(TYPED_TABLE.document_types)
    assert [row["name"] for row in calibration["by_field"]] == list(TYPED_TABLE.keys)
    assert run_study(scenario, TABLE, [load_policy("confidence")]).summary.calibration.by_document_type is None


def test_certify_per_document_type_is_certify_on_each_type_alone(tmp_path, capsys):
    import json

    from rpa_sim.cli.entry import main

    records = tmp_path / "typed.jsonl"
    records.write_text("".join(r.model_dump_json(exclude_none=True) + "\n" for r in TYPED))
    assert main(["certify", str(records), "--max-error", "0.2", "--delta", "0.2", "--by", "document_type",
                 "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [row["document_type"] for row in rows] == list(TYPED_TABLE.document_types)
    for row in rows:
        alone = tmp_path / f"{row['document_type'] or 'none'}.jsonl"
        alone.write_text("".join(r.model_dump_json(exclude_none=True) + "\n" for r in TYPED
                                 if (r.document_type or "") == row["document_type"]))
        assert main(["certify", str(alone), "--max-error", "0.2", "--delta", "0.2", "--format", "json"]) == 0
        assert {"document_type": row["document_type"], **json.loads(capsys.readouterr().out)} == row


# --- 4. missing confidences ---------------------------------------------------------------------------

def _without_some_confidences(records):
    from rpa_sim.records.models import KIERecord

    changed = []
    for i, record in enumerate(records):
        data = record.model_dump(exclude_none=True)
        for j, entity in enumerate(data["prediction"]["entities"]):
            if (i + j) % 5 == 0:
                entity["confidence"] = None
        changed.append(KIERecord.model_validate(data))
    return changed


MISSING = _without_some_confidences(RECEIPTS)
MISSING_TABLE = evaluate_kie(MISSING)
MISSING_RESULTS = [evaluate_document(r.ground_truth, r.prediction) for r in MISSING]
MISSING_DOCUMENTS = [list(result.confidences) for result in MISSING_RESULTS]
MISSING_LABELS = [Document([], result.labels.tolist(), len(result.additions), []) for result in MISSING_RESULTS]


def test_null_confidences_are_nan_in_the_table():
    missing = sum(c is None for document in MISSING_DOCUMENTS for c in document)
    assert np.count_nonzero(np.isnan(MISSING_TABLE.confidence)) == missing > 0


@pytest.mark.parametrize("missing", ["review", "accept", 0.0, 0.95])
def test_missing_confidence_settings_against_direct_count(missing):
    sweeper = Sweeper(MISSING_TABLE, policy(review_if={"confidence": "sweep"}, missing_confidence=missing,
                                            reject_if={"confidence": 0.1}))
    for tau in THRESHOLDS:
        states = []
        for confidences in MISSING_DOCUMENTS:
            state = []
            for c in confidences:
                if c is None and isinstance(missing, float):
                    c = missing
                if c is None:  # never rejected; reviewed at every τ, or never
                    state.append("review" if missing == "review" else "accept")
                else:
                    state.append("reject" if c < 0.1 else "review" if c < tau else "accept")
            states.append(state)
        assert_matches(sweeper.at(tau), direct_kie(states, documents=MISSING_LABELS))


@pytest.mark.parametrize("missing", ["review", "accept"])
def test_missing_confidence_in_document_aggregates_against_direct_count(missing):
    sweeper = Sweeper(MISSING_TABLE, policy(review_if={"document_confidence": {"aggregate": "mean", "below": "sweep"}},
                                            missing_confidence=missing))
    for tau in THRESHOLDS:
        states = []
        for confidences in MISSING_DOCUMENTS:
            known = [c for c in confidences if c is not None]
            routed = ((missing == "review" and len(known) < len(confidences))
                      or (known and aggregate(known, "mean") < tau))
            states.append(["review" if routed else "accept"] * len(confidences))
        assert_matches(sweeper.at(tau), direct_kie(states, documents=MISSING_LABELS))


def test_a_policy_without_the_setting_refuses_unknown_confidences():
    with pytest.raises(InputError, match=r"predictions have no confidence, and policy 'confidence' does not say what "
                                         "to do with them: set missing_confidence: review, accept or a number"):
        Sweeper(MISSING_TABLE, load_policy("confidence"))


def test_a_null_confidence_is_read_only_when_every_policy_maps_it(tmp_path, capsys):
    from rpa_sim.cli.entry import main

    lines = [r.model_dump_json(exclude_none=True) for r in RECEIPTS[:4]]
    lines[2] = lines[2].replace('"confidence":' + repr(RECEIPTS[2].prediction.entities[0].confidence),
                                '"confidence":null', 1)
    data = tmp_path / "records.jsonl"
    data.write_text("\n".join(lines) + "\n")
    mapped = tmp_path / "mapped.yaml"
    mapped.write_text("name: mapped\nreview_if: {confidence: sweep}\nmissing_confidence: review\n")
    expected = (f"rpa-sim: error: {data}: line 3 (id {RECEIPTS[2].id}): prediction.entities[0].confidence: expected "
                "a number, got null (a null confidence is allowed only when every policy the command is given sets "
                "missing_confidence: review, accept or a number)\n")
    # score routes nothing and needs no confidence: it reads the null (tests/test_score_without_confidence.py)
    for command in (["sweep", str(data), "--policy", "confidence"],
                    ["sweep", str(data), "--policy", "confidence", "--policy", str(mapped)]):
        assert main(command) == 1
        assert capsys.readouterr().err == expected
    assert main(["sweep", str(data), "--policy", str(mapped), "--thresholds", "0.5", "--format", "json"]) == 0
    import json

    point = json.loads(capsys.readouterr().out)[0]
    table = evaluate_kie(_without_first(RECEIPTS[:4]))
    assert point["reviewed"] == Sweeper(table, load_policy(mapped)).at(0.5)["reviewed"]


def _without_first(records):
    from rpa_sim.records.models import KIERecord

    data = [r.model_dump(exclude_none=True) for r in records]
    data[2]["prediction"]["entities"][0]["confidence"] = None
    return [KIERecord.model_validate(d) for d in data]


# --- 5. everywhere -------------------------------------------------------------------------------------

def test_bundled_rule_policies_are_the_tested_rules():
    assert load_policy("document-confidence-mean").review_if.document_confidence.aggregate == "mean"
    assert load_policy("reject-band").reject_if.confidence.below == 0.2
    assert load_policy("missing-confidence-review").missing_confidence == "review"
    typed = evaluate_kie([r.model_copy(update={"document_type": ("invoice", "phone-photo", None)[i % 3]})
                          for i, r in enumerate(RECEIPTS)])
    point = Sweeper(typed, load_policy("per-document-type")).at(0.5)
    types = [typed.document_types[c] for c in typed.document_type_codes]
    keys = [typed.keys[k] for k in typed.key]
    limits = [0.9 if t == "invoice" else (0.99 if k == "total.total_price" else 0.95) if t == "phone-photo" else 0.5
              for t, k in zip(types, keys)]
    assert point["reviewed"] == sum(c < limit for c, limit in zip(typed.confidence.tolist(), limits))


def test_run_with_rules_reports_rejections_certifies_what_is_accepted_and_reads_null_confidences(tmp_path, capsys):
    import json

    from rpa_sim.cli.entry import main
    from rpa_sim.route.certify import certify_threshold

    data = tmp_path / "records.jsonl"
    data.write_text("".join(r.model_dump_json() + "\n" for r in MISSING))
    (tmp_path / "study.yaml").write_text(
        "name: rules\ndata: {file: records.jsonl}\nthresholds: exact\ntargets: [0.8]\n"
        "certify: {max_error: 0.2, delta: 0.2}\ncosts: {per_review: 1.0, per_rejected: 4.0}\n"
        "policies:\n  - missing-confidence-review\n"
        "  - {name: band, review_if: {confidence: sweep}, reject_if: {confidence: 0.3}, missing_confidence: accept}\n")
    out = tmp_path / "out"
    assert main(["run", str(tmp_path / "study.yaml"), "--out", str(out)]) == 0
    header = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("policy "))
    assert header.split()[:4] == ["policy", "AUC", "auto@0.8", "rejected"]
    summary = json.loads((out / "summary.json").read_text())
    rejected = np.nan_to_num(MISSING_TABLE.confidence, nan=1.0) < 0.3
    band = summary["policies"][1]
    assert band["rejected"] == int(rejected.sum()) and "rejected" not in summary["policies"][0]
    assert summary["calibration"]["without_confidence"] == int(np.isnan(MISSING_TABLE.confidence).sum())
    # certification counts only what the band can auto-accept: never a rejected prediction
    kept = ~rejected
    entry = np.nan_to_num(MISSING_TABLE.confidence, nan=np.inf)[kept]
    expected = certify_threshold(np.clip(entry, 0, 1), MISSING_TABLE.errors()[kept], max_error=0.2, delta=0.2,
                                 groups=MISSING_TABLE.document[kept], candidates=np.unique(entry[np.isfinite(entry)]))
    assert band["certified"]["threshold"] == expected.threshold is not None
    assert band["certified"]["accepted_n"] == expected.accepted_n
    lines = (out / "curves.csv").read_text().splitlines()
    assert lines[0].startswith("policy,threshold,auto_rate,reviewed,rejected,")
    assert {line.split(",")[4] for line in lines[1:] if line.startswith("band,")} == {repr(float(rejected.sum()))}


def test_report_shows_rejections_and_calibration_per_group():
    import re

    from rpa_sim.report.page import render_report
    from rpa_sim.study.run import run_study
    from rpa_sim.study.scenario import Scenario

    scenario = Scenario.model_validate({"name": "s", "data": {"generate": "receipts", "n": 5},
                                        "policies": ["confidence"], "thresholds": "exact", "targets": [0.8]})
    policies = [load_policy("confidence"), load_policy("reject-band")]
    html = render_report(run_study(scenario, TYPED_TABLE, policies))
    comparison = re.search(r'aria-label="comparison table">(.*?)</table>', html, re.S).group(1)
    headers = re.findall(r"<th>(.*?)</th>", comparison)
    assert headers[:5] == ["policy", "AUC", "auto-rate at 0.8", "τ at 0.8", "rejected"]
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", comparison)[1:]]
    assert [row[4] for row in cells] == ["0", str(int(np.count_nonzero(TYPED_TABLE.confidence < 0.2)))]
    for table_id in ("calibration-by-document-type", "calibration-by-field"):
        assert f'aria-label="{table_id} table"' in html


def test_dashboard_model_shows_rejections_and_calibration_per_group():
    from rpa_sim.study.run import run_study
    from rpa_sim.study.scenario import Scenario
    from rpa_sim.tui.model import DashboardModel

    policies = [load_policy("confidence"), load_policy("reject-band")]
    scenario = Scenario.model_validate({"name": "s", "data": {"generate": "receipts", "n": 5},
                                        "policies": ["confidence"], "thresholds": "0.5"})
    model = DashboardModel.from_table("m", TYPED_TABLE, policies,
                                      summary=run_study(scenario, TYPED_TABLE, policies).summary)
    assert "rejected" not in model.figures(0, 0.5)
    assert model.figures(1, 0.5)["rejected"] == np.count_nonzero(TYPED_TABLE.confidence < 0.2)
    groups = dict(model.calibration_groups())
    assert [row.name for row in groups["document type"]] == list(TYPED_TABLE.document_types)
    assert [row.name for row in groups["field"]] == list(TYPED_TABLE.field_names)


def test_a_scenario_says_what_rejected_items_hold_unless_a_policy_does():
    own = {"name": "own", "review_if": {"confidence": "sweep"}, "reject_if": {"confidence": 0.2},
           "rejected_quality": "correct"}
    scenario = Scenario.model_validate({"name": "s", "data": {"generate": "receipts", "n": 5},
                                        "policies": ["reject-band", own], "rejected_quality": "as_predicted"})
    bundled, kept = scenario_policies(scenario, base=None)
    assert (bundled.rejected_quality, kept.rejected_quality) == ("as_predicted", "correct")
    explicit = load_policy("reject-band").model_copy(update={"rejected_quality": "as_predicted"})
    for tau in (0.0, 0.3, 0.6, 0.9, 1.0):
        assert Sweeper(TABLE, bundled).at(tau) == Sweeper(TABLE, explicit).at(tau)
    assert Sweeper(TABLE, bundled).at(0.5) != Sweeper(TABLE, load_policy("reject-band")).at(0.5)
    assert scenario_policies(scenario.model_copy(update={"rejected_quality": None}), base=None)[0] \
        .rejected_quality == "correct"
