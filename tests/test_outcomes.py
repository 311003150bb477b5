"""The outcome tables: columns that add up to the metrics, on hand-made and real data."""

from __future__ import annotations

import json
import math
from datetime import datetime, timezone

import numpy as np
import pytest

from rpa_sim.evaluate.metrics.anls import anls_question
from rpa_sim.evaluate.metrics.kieval import kieval
from rpa_sim.evaluate.outcomes import (
    ANSWER_TYPES,
    OUTCOME_TABLES,
    KIEOutcomes,
    OutcomeTable,
    VQAOutcomes,
    evaluate_kie,
    evaluate_vqa,
    table_type,
    task_of_option,
)
from rpa_sim.records.importers.kieval_csv import import_kieval_csv
from rpa_sim.records.models import KIERecord, VQARecord
from rpa_sim.records.readers import write_records
from rpa_sim.records.synthetic import generate_docvqa, generate_receipts
from tests.conftest import run_cli, shared_path

PAGE = {"width": 1000, "height": 1000, "words": [
    {"text": "LATTE", "bbox": [100, 100, 160, 120]},
    {"text": "4,000", "bbox": [400, 100, 460, 120]},
    {"text": "TOTAL", "bbox": [100, 500, 160, 520]},
    {"text": "12.", "bbox": [400, 500, 440, 520]},
]}


def kie_record(**overrides):
    data = {
        "id": "r1",
        "ground_truth": {"entities": [{"key": "total", "value": "12"}],
                         "groups": [[{"key": "menu.nm", "value": "LATTE"}, {"key": "menu.price", "value": "4,000"}]]},
        "prediction": {"entities": [{"key": "total", "value": "12", "confidence": 0.95}],
                       "groups": [[{"key": "menu.nm", "value": "LATTE", "confidence": 0.9, "grounding": 0.7},
                                   {"key": "menu.price", "value": "4.000", "confidence": 0.42},
                                   {"key": "menu.cnt", "value": "1", "confidence": 0.3}]]},
    }
    data.update(overrides)
    return KIERecord.model_validate(data)


def test_kie_rows_carry_labels_corrections_and_scores():
    table = evaluate_kie([kie_record()], grounding="given")
    assert len(table) == 4 and table.documents == 1
    assert table.keys == ("total", "menu.nm", "menu.price", "menu.cnt")
    assert table.key.tolist() == [0, 1, 2, 3]
    assert table.group.tolist() == [0, 1, 1, 1]
    assert table.outcome.tolist() == [0, 0, 1, 2]
    assert table.correction.tolist() == ["12", "LATTE", "4,000", ""]
    assert table.similarity.tolist() == [1.0, 1.0, pytest.approx(0.8), 0.0]
    assert table.confidence.tolist() == [0.95, 0.9, 0.42, 0.3]
    assert table.grounding[1] == 0.7 and np.isnan(table.grounding[[0, 2, 3]]).all()
    assert table.document_count("additions").tolist() == [0] and len(table.addition_document) == 0


def test_kie_grounding_computed_from_the_page_when_not_given():
    table = evaluate_kie([kie_record(document={"pages": [PAGE]})])
    assert table.grounding[1] == 0.7  # given values are kept
    assert table.grounding[0] == pytest.approx(2 / 3)  # "12" against the word "12."
    assert table.grounding[2] == pytest.approx(0.8)  # "4.000" against "4,000"
    computed = evaluate_kie([kie_record(document={"pages": [PAGE]})], grounding="compute")
    assert computed.grounding[1] == 1.0


def test_kie_additions_are_rows_of_their_own():
    record = kie_record(prediction={"entities": [], "groups": [[{"key": "menu.nm", "value": "LATTE",
                                                                  "confidence": 0.5}]]})
    table = evaluate_kie([record, record.model_copy(update={"id": "r2"})])
    assert table.addition_document.tolist() == [0, 0, 1, 1]
    assert [table.keys[k] for k in table.addition_key] == ["total", "menu.price"] * 2
    assert table.document_count("additions").tolist() == [2, 2]
    assert table.document_count("entities_gt").tolist() == [3, 3]


def test_kie_table_equals_corpus_counts_on_real_data():
    records, _ = import_kieval_csv(shared_path("data", "kieval_qwen72b_cord", "csv"))
    records = list(records)
    table = evaluate_kie(records)
    assert table.counts == kieval((r.ground_truth, r.prediction) for r in records)
    assert np.bincount(table.outcome, minlength=3).tolist() == [1020, 167, 159]
    assert len(table.addition_key) == table.document_count("additions").sum() == 114
    assert table.document.max() == 99 and np.all(np.diff(table.document) >= 0)


def test_kie_table_is_deterministic():
    first = evaluate_kie(generate_receipts(50, seed=3))
    second = evaluate_kie(generate_receipts(50, seed=3))
    for name in ("document", "key", "confidence", "outcome", "similarity", "value", "correction"):
        assert np.array_equal(getattr(first, name), getattr(second, name)), name
    assert first.counts == second.counts


def test_kie_needs_both_sides():
    with pytest.raises(ValueError, match="'r1' needs both"):
        evaluate_kie([kie_record(prediction=None)])


def vqa_record(qid, answers, prediction, confidence=0.5, **extra):
    return VQARecord.model_validate({"id": qid, "answers": answers,
                                     "prediction": {"answer": prediction, "confidence": confidence,
                                                    **extra.pop("predicted", {})}, **extra})


def test_vqa_rows_and_summary():
    records = [
        vqa_record("q1", ["12"], "12", 0.9, document={"pages": [PAGE]}, question_type="Table/List",
                   evidence=[{"page": 0, "bbox": [400, 500, 440, 520]}],
                   predicted={"evidence": [{"page": 0, "bbox": [400, 500, 440, 520]}]}),
        vqa_record("q2", ["LATTE"], "LATE", 0.4, document={"pages": [PAGE]}, predicted={"grounding": 0.2}),
        vqa_record("q3", ["4,000"], "vanilla", 0.1),
    ]
    table = evaluate_vqa(records)
    assert table.question_ids.tolist() == ["q1", "q2", "q3"]
    assert table.question_types == ("Table/List", "")
    assert [ANSWER_TYPES[t] for t in table.answer_type] == ["numeric", "textual", "hybrid"]
    assert table.anls.tolist() == [1.0, pytest.approx(0.8), 0.0]
    assert table.anls[1] == anls_question(["LATTE"], "LATE")
    assert table.accuracy.tolist() == [1.0, 0.0, 0.0]
    assert table.smudge_grounding[0] == 1.0 and np.isnan(table.smudge_grounding[2])
    assert table.grounding[1] == 0.2  # given grounding wins for routing
    assert table.grounding[0] == pytest.approx(2 / 3)  # otherwise the prediction's locatability ("12" vs "12.")
    assert table.evidence_iou[0] == 1.0 and np.isnan(table.evidence_iou[1:]).all()
    assert table.absolute_deviation[0] == 0.0 and np.isnan(table.absolute_deviation[1])
    summary = table.summary()
    assert summary["questions"] == 3 and summary["alpha"] == 0.25
    assert summary["anls"] == pytest.approx((1 + 0.8) / 3)
    composite = 0.25 * table.match[:2] + 0.75 * table.smudge_grounding[:2]
    assert summary["smudge"] == pytest.approx(composite.mean())
    assert summary["evidence_iou"] == 1.0


def test_vqa_without_documents_has_no_smudge():
    summary = evaluate_vqa([vqa_record("q", ["a b"], "a b")]).summary()
    assert summary["smudge"] is None and summary["grounding"] is None and summary["evidence_iou"] is None
    assert not any(isinstance(v, float) and math.isnan(v) for v in summary.values())


def test_kie_counts_unchanged_when_documents_are_shuffled():
    records = list(generate_receipts(60, seed=5))
    order = np.random.default_rng(0).permutation(len(records))
    table = evaluate_kie(records)
    shuffled = evaluate_kie([records[i] for i in order])
    assert shuffled.counts == table.counts
    # the same rows, in the new document order
    for new_index, old_index in enumerate(order):
        rows_before = table.document == old_index
        rows_after = shuffled.document == new_index
        assert np.array_equal(table.outcome[rows_before], shuffled.outcome[rows_after])
        assert np.array_equal(table.document_counts[old_index], shuffled.document_counts[new_index])


# -- the OutcomeTable protocol ------------------------------------------------------------------------------

def test_both_tables_satisfy_the_protocol():
    kie, vqa = evaluate_kie([kie_record()]), evaluate_vqa([vqa_record("q1", ["12"], "12")])
    assert isinstance(kie, OutcomeTable) and isinstance(vqa, OutcomeTable)
    assert not isinstance(kie.confidence, OutcomeTable)
    assert {task: cls.metric_name for task, cls in OUTCOME_TABLES.items()} == {"kie": "kieval_aligned", "vqa": "anls"}
    assert {task: cls.task for task, cls in OUTCOME_TABLES.items()} == {"kie": "kie", "vqa": "vqa"}
    assert (OUTCOME_TABLES["kie"], OUTCOME_TABLES["vqa"]) == (KIEOutcomes, VQAOutcomes)
    assert (table_type("kie").metric_label, table_type("vqa").metric_label) == ("KIEval_Aligned^τ", "ANLS")
    assert table_type("vqa").sweep_columns == ("anls", "accuracy", "smudge")
    with pytest.raises(ValueError, match="'ner'"):
        table_type("ner")


def test_kie_protocol_members():
    # one document: total correct, LATTE correct, 4.000 a substitution, menu.cnt a deletion; a second document
    # whose "total" was missed (an addition)
    missed = kie_record(id="r2", prediction={"entities": []},
                        ground_truth={"entities": [{"key": "total", "value": "9"}]})
    table = evaluate_kie([kie_record(), missed], grounding="given")
    assert table.field_names == ("total", "menu.nm", "menu.price", "menu.cnt")
    assert table.field_codes.tolist() == [0, 1, 2, 3]
    assert table.review_units.tolist() == [0, 0, 0, 0] and table.unit_count == 2
    assert table.missed_per_unit().tolist() == [0, 1]
    assert table.errors().tolist() == [False, False, True, True]
    (grouping,) = table.field_groupings()
    assert grouping.by == "key" and grouping.names == table.keys
    assert {name: values.tolist() for name, values in grouping.figures.items()} == {
        "predictions": [1, 1, 1, 1], "substitutions": [0, 0, 1, 0], "deletions": [0, 0, 0, 1],
        "additions": [1, 0, 0, 0]}
    assert table.summary() == {**table.counts.to_dict(), "value_match": "exact"}
    assert table.score_title == "KIE, values compared exactly"
    assert dict(table.score_rows())["additions"] == 1
    accepted, reviewed = table.replay_terms(miss=0.25, false_correction=0.5)
    # rows: substitutions left, deletions left, predictions kept
    assert accepted.tolist() == [[0, 0, 1, 0], [0, 0, 0, 1], [1, 1, 1, 1]]
    assert reviewed.tolist() == [[0.5, 0.5, 0.25, 0.0], [0, 0, 0, 0.25], [1, 1, 1, 0.25]]
    figures, errors = table.replay_figures(accepted.sum(axis=1)[None, :], np.zeros(1))
    # nothing reviewed: 1 - (1 + 1 + 1) / (4 + 1), the corpus KIEval_Aligned
    assert figures["kieval_aligned"].tolist() == [pytest.approx(0.4)] == [table.counts.kieval_aligned]
    assert errors.tolist() == [3.0]


def test_vqa_protocol_members():
    records = [vqa_record("q1", ["12"], "12", question_type="form"), vqa_record("q2", ["abcd"], "abxy"),
               vqa_record("q3", ["abcd"], "wxyz", question_type="form")]
    table = evaluate_vqa(records)
    assert table.field_names == ("form", "") and table.field_codes.tolist() == [0, 1, 0]
    assert table.review_units is None and table.unit_count == 3 and table.missed_per_unit().tolist() == []
    assert table.anls.tolist() == [1.0, 0.5, 0.0] and table.errors().tolist() == [False, False, True]
    by_type, by_answer = table.field_groupings()
    assert (by_type.by, by_answer.by) == ("question type", "answer type")
    assert by_type.figures["predictions"].tolist() == [2, 1] and by_type.figures["errors"].tolist() == [1, 0]
    assert by_type.figures["anls"].tolist() == [0.5, 0.5]
    assert table.score_title == "Document VQA" and dict(table.score_rows())["ANLS"] == table.summary()["anls"] == 0.5
    accepted, reviewed = table.replay_terms(miss=0.25, false_correction=0.5)
    # rows: ANLS, accuracy, SMuDGE (0 without OCR), errors
    assert accepted.tolist() == [[1.0, 0.5, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    # reviewed: ANLS 1 is broken with probability 0.5; the others take the truth unless missed (0.25)
    assert reviewed.tolist() == [[0.5, 0.875, 0.75], [0.5, 0.75, 0.75], [0.0, 0.0, 0.0], [0.5, 0.0, 0.25]]


@pytest.mark.parametrize("task", ["kie", "vqa"])
def test_the_corpus_figures_never_read_the_routing_grounding(tmp_path, capsys, task):
    # why score evaluates without locating values: its figures are the same either way, byte for byte
    records = list(generate_receipts(80, seed=9) if task == "kie" else generate_docvqa(80, seed=9))
    evaluate = evaluate_kie if task == "kie" else evaluate_vqa
    located, given = evaluate(records), evaluate(records, grounding="given")
    assert np.isnan(given.grounding).all() and not np.isnan(located.grounding).all()  # nothing was located
    assert given.summary() == located.summary()
    path = tmp_path / "records.jsonl"
    write_records(records, path)
    status, out, _ = run_cli(capsys, "score", str(path), "--json", "--workers", "1")
    assert status == 0
    assert json.loads(out) == {**located.summary(), "without_confidence": 0, "skipped": 0}


def test_the_answer_types_are_smudges():
    # outcomes names them without importing SMuDGE's module (reading a table file never evaluates)
    from typing import get_args

    from rpa_sim.evaluate.metrics.smudge import AnswerType

    assert get_args(AnswerType) == ANSWER_TYPES


# -- the task's facts are members of the table types --------------------------------------------------------

@pytest.mark.parametrize(("task", "noun", "has_units", "options"), [("kie", "document", True, ("value_match",)),
                                                                     ("vqa", "question", False, ("alpha",))])
def test_each_task_states_its_units_options_and_columns(task, noun, has_units, options):
    table = table_type(task)
    assert (table.unit_noun, table.has_review_units, table.options) == (noun, has_units, options)
    assert [task_of_option(option) for option in options] == [task]
    # the column facts describe the task's own sweep columns, the metric among the fractions
    assert table.fraction_columns | table.count_columns <= set(table.sweep_columns)
    assert not table.fraction_columns & table.count_columns and table.metric_name in table.fraction_columns
    with pytest.raises(ValueError, match="'workers'"):
        task_of_option("workers")


def test_the_units_are_the_records_with_their_ids_and_times():
    # r2's only entity was missed: a unit without rows
    missed = kie_record(id="r2", prediction={"entities": []},
                        ground_truth={"entities": [{"key": "total", "value": "9"}]},
                        received_at="2024-01-01T00:00:10Z", review_seconds=30)
    kie = evaluate_kie([kie_record(), missed])
    assert kie.unit_ids().tolist() == ["r1", "r2"] and kie.unit_count == 2 and kie.review_units is not None
    assert np.isnan(kie.received_at[0]) and kie.received_at[1] == datetime(2024, 1, 1, 0, 0, 10, tzinfo=timezone.utc
                                                                           ).timestamp()
    assert np.isnan(kie.review_seconds[0]) and kie.review_seconds[1] == 30
    vqa = evaluate_vqa([vqa_record("q1", ["12"], "12"), vqa_record("q2", ["a"], "b", review_seconds=4)])
    assert vqa.unit_ids().tolist() == ["q1", "q2"] and vqa.unit_count == 2 and vqa.review_units is None
    assert np.isnan(vqa.review_seconds[0]) and vqa.review_seconds[1] == 4
    # tables of parts: the units of each, in order
    assert type(vqa).concat([vqa, evaluate_vqa([vqa_record("q3", ["c"], "c")])]).unit_ids().tolist() == [
        "q1", "q2", "q3"]


def test_the_table_type_evaluates_with_its_options():
    latte = kie_record(prediction={"entities": [{"key": "total", "value": "12", "confidence": 0.9}],
                                   "groups": [[{"key": "menu.nm", "value": "latte", "confidence": 0.8}]]})
    # "latte" against "LATTE": a substitution compared exactly, correct with case folded
    assert table_type("kie").evaluate([latte]).outcome.tolist() == [0, 1]
    normalized = table_type("kie").evaluate([latte], value_match="normalized")
    assert normalized.outcome.tolist() == [0, 0] and normalized.evaluation_settings() == {"value_match": "normalized"}
    questions = [vqa_record("q1", ["12"], "12", document={"pages": [PAGE]}), vqa_record("q2", ["LATTE"], "LATE")]
    at_half = table_type("vqa").evaluate(questions, alpha=0.5)
    assert at_half.evaluation_settings() == {"alpha": 0.5, "weight": 10.0, "threshold": 0.5}
    assert at_half.anls.tolist() == [1.0, pytest.approx(0.8)]


def test_smudge_is_a_member_that_only_questions_fill():
    records = [vqa_record("q1", ["12"], "12", document={"pages": [PAGE]}),
               vqa_record("q2", ["LATTE"], "LATE", document={"pages": [PAGE]}),
               vqa_record("q3", ["x"], "x")]  # no OCR: no grounding, left out of SMuDGE's means
    table = evaluate_vqa(records)
    match, grounding = table.match[:2], table.smudge_grounding[:2]
    assert table.has_smudge and table.mean_smudge(alpha=0.4) == pytest.approx(np.mean(0.4 * match + 0.6 * grounding))
    alphas, means = table.smudge_by_alpha(step=0.5)
    assert alphas.tolist() == [0.0, 0.5, 1.0]
    assert means.tolist() == pytest.approx([grounding.mean(), np.mean((match + grounding) / 2), match.mean()])
    without_ocr = evaluate_vqa(records[2:])
    assert without_ocr.smudge_by_alpha(step=0.5) is None and without_ocr.mean_smudge(alpha=0.25) is None
    kie = evaluate_kie([kie_record()])
    assert not kie.has_smudge and kie.smudge_by_alpha(step=0.5) is None and kie.mean_smudge(alpha=0.25) is None


def test_a_table_names_its_file_rows_counts_and_settings():
    missed = kie_record(id="r2", prediction={"entities": []},
                        ground_truth={"entities": [{"key": "total", "value": "9"}]})
    kie = evaluate_kie([kie_record(), missed], grounding="given")
    # r1: four predicted entities, nothing missed; r2: one missed entity
    assert kie.row_counts() == {"document": 2, "predicted": 4, "missed": 1}
    counts = kie.corpus_counts()
    assert set(counts) == set(kie.file_layout.counts)
    # ground truth: r1's total, menu.nm, menu.price and r2's total; predicted: r1's four entities
    assert {name: counts[name] for name in ("documents", "entities_gt", "entities_pred", "tp", "substitutions",
                                            "deletions", "additions")} == {
        "documents": 2, "entities_gt": 4, "entities_pred": 4, "tp": 2, "substitutions": 1, "deletions": 1,
        "additions": 1}
    arrays = kie.to_arrow()
    assert list(arrays) == [column.name for column in kie.file_layout.columns]
    assert arrays["kind"].to_pylist() == ["document"] * 2 + ["predicted"] * 4 + ["missed"]
    assert arrays["outcome"].to_pylist() == [None, None, "correct", "correct", "substitution", "deletion", "addition"]
    assert arrays["grounding"].to_pylist() == [None, None, None, 0.7, None, None, None]  # NaN is written as null
    vqa = evaluate_vqa([vqa_record("q1", ["12"], "12"), vqa_record("q2", ["a"], "b")])
    assert vqa.row_counts() == {"question": 2} and vqa.corpus_counts() == {"questions": 2}
    assert set(vqa.to_arrow()) == {column.name for column in vqa.file_layout.columns}
    assert vqa.to_arrow()["anls"].to_pylist() == [1.0, 0.0]


def test_the_settings_a_file_may_hold():
    table_type("kie").check_settings({"value_match": "normalized"})
    table_type("vqa").check_settings({"alpha": 0.25, "weight": 10.0, "threshold": 0.5})
    with pytest.raises(ValueError, match="value_match must be 'exact' or 'normalized', got 'fuzzy'"):
        table_type("kie").check_settings({"value_match": "fuzzy"})
    with pytest.raises(ValueError, match="must be finite numbers"):
        table_type("vqa").check_settings({"alpha": math.inf, "weight": 10.0, "threshold": 0.5})


@pytest.mark.parametrize("task", ["kie", "vqa"])
def test_the_reader_labels_name_figures_the_data_summary_has(task):
    records = list(generate_receipts(5, seed=1) if task == "kie" else generate_docvqa(5, seed=1))
    table = table_type(task).evaluate(records)
    labelled = [name for name, _ in table.summary_labels]
    assert set(labelled) <= {"predictions", *table.summary()} and len(set(labelled)) == len(labelled)
    assert f"{table.unit_noun}s" in labelled and table.metric_name in labelled
