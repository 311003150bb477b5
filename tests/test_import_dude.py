"""The DUDE importer on the demo ground truth and submissions, scored against the official evaluator."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from rpa_sim.common.errors import InputError
from rpa_sim.evaluate.outcomes import evaluate_vqa
from rpa_sim.records.importers.dude import import_dude
from tests.conftest import load_vectors, shared_path

YEAR_QUESTION = "7afe94621751eb3584a4a9962bb7b1f0_4a863bed9b999dec79f6181f7a823e4a"
NARA_QUESTION = "9a2f84b54389aa435486a84c89069942_75bdac76d12afee4a07c2a870dcfbbf5"


def _question(qid: str, answers: list[str], *, answer_type: str | None = "extractive", variants: list[str] = (),
              boxes: list | None = None) -> dict:
    return {"questionId": qid, "question": f"question {qid}?", "answers": answers,
            "answers_page_bounding_boxes": boxes or [], "answers_variants": list(variants),
            "answer_type": answer_type, "docId": "doc", "data_split": "train"}


def _answer(qid: str, answers: list[str], confidences) -> dict:
    return {"questionId": qid, "answers": answers, "answers_confidence": confidences}


def _truth(questions: list[dict]) -> dict:
    return {"dataset_name": "DUDE Dataset", "dataset_version": "0.1", "data": questions}


def _files(folder: Path, truth, submission) -> tuple[Path, Path]:
    truth_path, submission_path = folder / "gt.json", folder / "submission.json"
    truth_path.write_text(json.dumps(truth), encoding="utf-8")
    submission_path.write_text(json.dumps(submission), encoding="utf-8")
    return truth_path, submission_path


def _demo(submission: str | None = None, **options):
    truth = shared_path("data", "dude", "DUDE_demo_gt.json")
    predictions = None if submission is None else shared_path("data", "dude", f"DUDE_demo_submission_{submission}.json")
    records, report = import_dude(truth, predictions=predictions, **options)
    return list(records), report


@pytest.mark.parametrize("submission", ["perfect", "imperfect"])
def test_demo_anls_per_question_matches_the_official_evaluator(submission):
    records, report = _demo(submission)
    expected = load_vectors("vectors_dude.json")["demo_results"][submission]
    table = evaluate_vqa(records)
    per_sample = expected["per_sample"]
    assert table.question_ids.tolist() == list(per_sample)
    # Every question, "manual_test" included: the demo has no list question. manual_test's
    # answer_type is "extractive", so the evaluator reads its two answers as alternatives and keeps
    # the first of the two predicted answers, and so does the importer.
    for qid, score in zip(table.question_ids.tolist(), table.anls.tolist(), strict=True):
        assert score == pytest.approx(per_sample[qid]["anls"], abs=1e-12), qid
    assert table.confidence.tolist() == [per_sample[q]["answer_confidence"][0] for q in table.question_ids.tolist()]
    assert table.summary()["anls"] == pytest.approx(expected["anls"], abs=1e-12)
    assert report.records == 11
    assert report.unmapped == Counter({"extra answers to non-list questions (first answer kept)": 1})


def test_demo_confidences_are_the_ece_inputs():
    records, _ = _demo("imperfect")
    vectors = load_vectors("vectors_dude.json")["ece_inputs_imperfect"]
    assert [r.prediction.confidence for r in records] == vectors["confidences"]


def test_demo_mapping():
    records, report = _demo("imperfect")
    by_id = {r.id: r for r in records}
    year = by_id[YEAR_QUESTION]
    # {left, top, width, height} in page pixels -> [x0, y0, x1, y1]; page 0-based.
    assert [(e.page, e.bbox) for e in year.evidence] == [(0, (185.0, 70.0, 484.0, 144.0)),
                                                          (0, (953.0, 287.0, 1091.0, 356.0))]
    air_france = by_id["95a82e8934b11e4dca41789f4a70caa3_7b58d9ec29ce6f75d82025df8e6aa91d"]
    assert [(e.page, e.bbox) for e in air_france.evidence] == [(4, (962.0, 413.0, 1145.0, 636.0))]
    assert year.question_type == "extractive" and year.prediction.answer == "1894"
    assert by_id[NARA_QUESTION].answers == ["National Archives and Records Administration",
                                            "The National Archives and Records Administration"]
    not_answerable = by_id["ff1549ddf50c82edd169dee714a38339_9dc0d59810e040b8ec7516667aa289a4"]
    assert (not_answerable.answers, not_answerable.prediction.answer) == ([""], "")
    assert not_answerable.question_type == "not-answerable" and not_answerable.evidence is None
    assert by_id["manual_test"].prediction.answer == "AF0055"
    assert [note.rsplit(": ", 1)[-1] for note in report.notes[2:]] == ["2", "1", "5"]
    assert report.notes[-1].startswith("questions with ground-truth evidence boxes, whose evidence_iou is 0")


def test_ground_truth_only():
    records, report = _demo()
    assert len(records) == 11 and all(r.prediction is None for r in records)
    assert report.notes[0].startswith("ground truth only: give a DUDE submission with --predictions")
    assert not report.unmapped


def test_variants_false_reads_answers_only():
    records, report = _demo("imperfect", variants=False)
    assert {r.id: r.answers for r in records}[NARA_QUESTION] == ["National Archives and Records Administration"]
    assert not any(note.startswith("questions with answers_variants") for note in report.notes)
    # The demo's one variant changes no score: the prediction is closer to the answer.
    expected = load_vectors("vectors_dude.json")["demo_results"]["imperfect"]
    assert evaluate_vqa(records).summary()["anls"] == pytest.approx(expected["anls"], abs=1e-12)


def test_list_questions_are_joined_sorted_on_both_sides(tmp_path):
    truth = _truth([_question("q1", ["AF1044", "AF0055"], answer_type="list/extractive", variants=["AF 1044"]),
                    _question("q2", ["Paris"])])
    submission = [_answer("q1", ["AF0055", "af1044"], [0.7, 0.6]), _answer("q2", ["Paris", "Lyon"], [0.9])]
    truth_path, submission_path = _files(tmp_path, truth, submission)
    records, report = import_dude(truth_path, predictions=submission_path)
    first, second = records
    assert first.answers == ["AF0055 | AF1044"] and first.prediction.answer == "AF0055 | af1044"
    assert first.prediction.confidence == 0.7
    assert evaluate_vqa([first]).anls.tolist() == [1.0]
    assert second.prediction.answer == "Paris"
    assert report.unmapped == Counter({"answer variants of list questions (not used)": 1,
                                       "extra answers_confidence values (the first is used)": 1,
                                       "extra answers to non-list questions (first answer kept)": 1})
    assert report.notes[-1].endswith("not by DUDE's Hungarian NLSL: 1")


def test_missing_answers_and_confidences(tmp_path):
    truth = _truth([_question("q1", ["Yes"]), _question("q2", [], answer_type="not-answerable"),
                    _question("q3", ["12"]), _question("q4", ["7"])])
    submission = [{"questionId": "q1", "answers": "Yes"}, _answer("q2", [], 0.25), _answer("q4", ["7"], [])]
    truth_path, submission_path = _files(tmp_path, truth, submission)
    records, report = import_dude(truth_path, predictions=submission_path)
    q1, q2, q3, q4 = records
    # A bare string answer and a bare number confidence are read as the evaluator reads them.
    assert (q1.prediction.answer, q1.prediction.confidence) == ("Yes", 1.0)
    assert (q2.answers, q2.prediction.answer, q2.prediction.confidence) == ([""], "", 0.25)
    assert q3.prediction is None
    assert q4.prediction.confidence == 1.0
    assert report.unmapped == Counter({"answers without answers_confidence (confidence set to 1.0)": 2,
                                       "questions without an answer in the submission (no prediction)": 1})


def test_unknown_question_in_the_submission_is_an_error(tmp_path):
    truth_path, submission_path = _files(tmp_path, _truth([_question("q1", ["Yes"])]),
                                         [_answer("q1", ["Yes"], [1.0]), _answer("q9", ["No"], [0.5])])
    with pytest.raises(InputError) as caught:
        import_dude(truth_path, predictions=submission_path)
    assert str(caught.value) == f"{submission_path}: [1].questionId: 'q9' is not a question of {truth_path}"


@pytest.mark.parametrize("submission, message", [
    ([{"questionId": "q1", "answers": ["Yes"], "answers_confidence": [1.5]}],
     "{sub}: [0].answers_confidence[0]: 1.5 is not in [0, 1]"),
    ([{"questionId": "q1", "answers": ["Yes"], "answers_confidence": "high"}],
     "{sub}: [0].answers_confidence: expected a finite number, got \"high\""),
    ([{"questionId": "q1", "answers_confidence": [0.5]}], "{sub}: [0].answers: missing"),
    ([{"questionId": "q1", "answers": [3], "answers_confidence": [0.5]}],
     "{sub}: [0].answers[0]: expected a string, got 3"),
])
def test_malformed_submission_answers(tmp_path, submission, message):
    truth_path, submission_path = _files(tmp_path, _truth([_question("q1", ["Yes"])]), submission)
    records, _ = import_dude(truth_path, predictions=submission_path)
    with pytest.raises(InputError) as caught:
        list(records)
    assert str(caught.value) == message.replace("{sub}", str(submission_path))


@pytest.mark.parametrize("submission, message", [
    ({"q1": ["Yes"]}, "{sub}: expected a DUDE submission, a list of answers; got {\"q1\": [\"Yes\"]}"),
    ([_answer("q1", ["Yes"], [1.0]), _answer("q1", ["No"], [0.5])], "{sub}: [1].questionId: 'q1' repeats [0]"),
    ([{"answers": ["Yes"]}], "{sub}: [0].questionId: missing"),
])
def test_malformed_submission_files(tmp_path, submission, message):
    truth_path, submission_path = _files(tmp_path, _truth([_question("q1", ["Yes"])]), submission)
    with pytest.raises(InputError) as caught:
        import_dude(truth_path, predictions=submission_path)
    assert str(caught.value) == message.replace("{sub}", str(submission_path))


@pytest.mark.parametrize("question, message", [
    ({"questionId": "q1", "question": "Year?", "answer_type": "extractive"}, "{gt}: data[0].answers: missing"),
    (_question("q1", [], answer_type="extractive"), "{gt}: data[0].answers: empty for a question of type 'extractive'"),
    (_question("q1", ["1894"], boxes=[[{"left": 10, "top": 5, "width": -3, "height": 4, "page": 0}]]),
     "{gt}: data[0].answers_page_bounding_boxes[0][0].width: -3 is negative"),
    (_question("q1", ["1894"], boxes=[[{"left": 10, "top": 5, "width": 3, "height": 4}]]),
     "{gt}: data[0].answers_page_bounding_boxes[0][0].page: missing"),
    (_question("q1", ["1894"], boxes=[{"left": 10, "top": 5, "width": 3, "height": 4, "page": 0}]),
     ('{gt}: data[0].answers_page_bounding_boxes[0]: expected a list, got {"left": 10, "top": 5, "width": 3, '
      '"height": 4, "page": 0}')),
    (_question("q1", ["1894"], answer_type=None), "{gt}: data[0].answer_type: expected a string, got null"),
])
def test_malformed_questions(tmp_path, question, message):
    truth_path, _ = _files(tmp_path, _truth([question]), [])
    records, _ = import_dude(truth_path)
    with pytest.raises(InputError) as caught:
        list(records)
    assert str(caught.value) == message.replace("{gt}", str(truth_path))


def test_repeated_question_in_the_ground_truth(tmp_path):
    truth_path, _ = _files(tmp_path, _truth([_question("q1", ["a"]), _question("q1", ["b"])]), [])
    records, _ = import_dude(truth_path)
    with pytest.raises(InputError, match=r"data\[1\]\.questionId: 'q1' repeats data\[0\]$"):
        list(records)


@pytest.mark.parametrize("content, message", [
    ("{\"dataset_name\": \"DUDE Dataset\"}",
     "{gt}: expected a DUDE ground truth, an object with a 'data' list; got an object with keys ['dataset_name']"),
    ("[]", "{gt}: expected a DUDE ground truth, an object with a 'data' list; got []"),
    ("{\"data\": [\n", "{gt}: line 2: invalid JSON: Expecting value at column 1"),
])
def test_malformed_ground_truth_files(tmp_path, content, message):
    path = tmp_path / "gt.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        import_dude(path)
    assert str(caught.value) == message.replace("{gt}", str(path))


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match=r"absent\.json: no such file$"):
        import_dude(tmp_path / "absent.json")
