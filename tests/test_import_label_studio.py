"""The Label Studio importer on realistic exports (tests/data/label_studio), edge cases, errors and the review log."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from rpa_sim.common.errors import InputError, UsageError
from rpa_sim.records.importers.label_studio import import_label_studio
from rpa_sim.records.importers.label_studio_results import page_box
from rpa_sim.records.models import KIERecord
from rpa_sim.records.readers import write_records
from tests.conftest import run_cli

DATA = Path(__file__).parent / "data" / "label_studio"
RECEIPTS = DATA / "receipts_ocr.json"


def _import(path: Path, **options):
    records, report = import_label_studio(path, **options)
    return list(records), report


def _predicted(record: KIERecord):
    return [(e.key, e.value, e.confidence, None if e.evidence is None else [(b.page, b.bbox) for b in e.evidence])
            for e in record.prediction.entities]


def _truth(record: KIERecord):
    return [(e.key, e.value) for e in record.ground_truth.entities]


def _export(tmp_path: Path, tasks, name: str = "export.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(tasks))
    return path


def _tasks():
    return json.loads(RECEIPTS.read_text())


# --------------------------------------------------------------------------- the OCR receipts export


def test_the_receipts_export_one_record_per_task():
    records, report = _import(RECEIPTS, id_from="data.ocr")
    assert [r.id for r in records] == ["5e1d2c4a-receipt-0001", "0c9b7e31-receipt-0002", "9a8f7e6d-receipt-0003",
                                       "1b2c3d4e-receipt-0004", "2c3d4e5f-receipt-0005"]
    assert report.records == 5
    first = records[0]
    # the cancelled annotation (id 20) is never used: annotation 21 is the ground truth
    assert _truth(first) == [("company", "CAFE NERO"), ("date", "04/03/2024"), ("total", "12.60"), ("tax", "1.14"),
                             ("doc_type", "receipt")]
    # region scores: the text's (0.97 over the label's 0.99); no region score -> the prediction's 0.87;
    # boxes: percent of an 800 x 1200 image -> pixels, e.g. x 10%, y 4%, 50% x 3.5% -> [80, 48, 480, 90]
    assert _predicted(first) == [
        ("company", "CAFE NERO", 0.97, [(0, (80.0, 48.0, 480.0, 90.0))]),
        ("date", "04/03/2024", 0.91, [(0, (440.0, 144.0, 680.0, 174.0))]),
        ("total", "12.50", 0.62, [(0, (480.0, 960.0, 640.0, 996.0))]),
        ("address", "12 High St", 0.87, [(0, (80.0, 96.0, 400.0, 126.0))]),
        ("doc_type", "receipt", 0.99, None)]
    assert first.review_seconds == 42.5
    assert first.received_at == datetime(2024, 3, 4, 7, 58, 12, 301245, tzinfo=timezone.utc)


def test_an_annotation_marked_ground_truth_wins_over_a_later_one():
    second = _import(RECEIPTS)[0][1]
    assert second.id == "102"
    # annotation 22 (ground_truth, 10:00) over 23 (11:00, total 7.70); its lead_time is the review time
    assert _truth(second) == [("company", "BAKERY 21"), ("total", "7.20")]
    assert second.review_seconds == 18.0
    # the total region has a score on its label only (0.55); its box is turned 90 degrees about its top left
    # corner: x 496, y 840, 120 x 36 px -> the box around it [460, 840, 496, 960]
    assert _predicted(second)[1] == ("total", "7.20", 0.55, [(0, (460.0, 840.0, 496.0, 960.0))])


def test_tasks_with_one_side_and_the_report():
    records, report = _import(RECEIPTS)
    without_prediction, without_annotation, cancelled_only = records[2:]
    assert without_prediction.prediction is None and _truth(without_prediction) == [("company", "TEA HOUSE"),
                                                                                    ("total", "3.80")]
    assert without_prediction.review_seconds == 61.0
    assert without_annotation.ground_truth is None and without_annotation.review_seconds is None
    assert [(k, v, c) for k, v, c, _ in _predicted(without_annotation)] == [("company", "GREEN GROCER", 0.74),
                                                                           ("total", "21.05", 0.81)]
    # task 105: its only annotation was cancelled, so it has the prediction only; its blank total is left out
    assert cancelled_only.ground_truth is None
    assert [e.value for e in cancelled_only.prediction.entities] == ["PIZZA PLACE"]
    assert report.unmapped == Counter({"annotated taxonomy results (type not supported)": 1,
                                       "predicted values that are blank (nothing to compare)": 1})
    notes = report.notes
    for line in ("tasks with a prediction and an annotation: 2",
                 "tasks without a usable annotation (records with the prediction only): 2",
                 "tasks without a prediction (records with the ground truth only): 1",
                 "cancelled (skipped) annotations, never used: 2",
                 "tasks with several usable annotations (one chosen): 1",
                 "predicted entities with the region's score as confidence: 9",
                 "predicted entities with the prediction's score as confidence: 1",
                 "records with review_seconds (the annotation's lead_time): 3",
                 "predicted entities with their region's box as evidence, in pixels of the image: 9"):
        assert line in notes


def test_the_imported_receipts_score(tmp_path, capsys):
    status, _, err = run_cli(capsys, "import", "label-studio", RECEIPTS, "--out", tmp_path / "r.jsonl")
    assert status == 0 and "wrote 5 records" in err
    status, out, err = run_cli(capsys, "score", tmp_path / "r.jsonl", "--skip-invalid", "--json")
    assert status == 0 and "skipped 3 records: 2 missing ground_truth, 1 missing prediction" in err
    figures = json.loads(out)
    # receipt 1: 3 right, 12.50 for 12.60, a spurious address, a missed tax; receipt 2: both right
    assert (figures["documents"], figures["tp"], figures["substitutions"], figures["deletions"],
            figures["additions"]) == (2, 5, 1, 1, 1)
    assert figures["kieval_aligned"] == pytest.approx(5 / 8)


# --------------------------------------------------------------------------- the review log


def test_the_review_log_is_read_by_estimate(tmp_path, capsys):
    log = tmp_path / "reviews.jsonl"
    status, _, err = run_cli(capsys, "import", "label-studio", RECEIPTS, "--out", tmp_path / "r.jsonl",
                             "--review-log", log, "--id-from", "data.ocr")
    assert status == 0
    assert "review log" in err and ": 7 rows" in err and "2 found wrong by the reviewers" in err
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["key"], r["value"], r["confidence"], r["correct"], r["corrected_value"]) for r in rows] == [
        ("company", "CAFE NERO", 0.97, True, None), ("date", "04/03/2024", 0.91, True, None),
        ("total", "12.50", 0.62, False, "12.60"), ("address", "12 High St", 0.87, False, ""),
        ("doc_type", "receipt", 0.99, True, None),
        ("company", "BAKERY 21", 0.88, True, None), ("total", "7.20", 0.55, True, None)]
    assert {(r["route"], r["inclusion_probability"]) for r in rows} == {("review", 1.0)}
    assert rows[0]["id"] == "5e1d2c4a-receipt-0001"
    status, out, _ = run_cli(capsys, "estimate", log, "--method", "classical", "--json")
    assert status == 0
    estimate = json.loads(out)
    assert (estimate["rows"], estimate["reviewed"], estimate["auto_accepted"], estimate["reviewed_errors"]) == (
        7, 7, 0, 2)
    assert estimate["naive"] == pytest.approx(2 / 7)
    assert estimate["auto_error"]["estimate"] is None  # nothing was auto-accepted: nothing to estimate


def test_the_review_log_keeps_null_confidences_and_gzip(tmp_path, capsys):
    log = tmp_path / "reviews.jsonl.gz"
    status, _, _ = run_cli(capsys, "import", "label-studio", DATA / "invoice_fields.json", "--out",
                           tmp_path / "i.jsonl", "--review-log", log)
    assert status == 0 and log.read_bytes()[:2] == b"\x1f\x8b"
    status, out, _ = run_cli(capsys, "estimate", log, "--method", "ppi", "--json")
    assert status == 0 and json.loads(out)["reviewed"] == 3


def test_the_review_log_cannot_be_the_records_file(tmp_path, capsys):
    status, _, err = run_cli(capsys, "import", "label-studio", RECEIPTS, "--out", tmp_path / "same.jsonl",
                             "--review-log", tmp_path / "same.jsonl")
    assert status == 2
    assert err.strip().splitlines()[-1].startswith("rpa-sim: error: --review-log")
    assert not (tmp_path / "same.jsonl").exists()


def test_a_bad_task_leaves_neither_file(tmp_path, capsys):
    tasks = _tasks()
    tasks[4]["predictions"][0]["score"] = 66
    status, _, err = run_cli(capsys, "import", "label-studio", _export(tmp_path, tasks), "--out",
                             tmp_path / "r.jsonl", "--review-log", tmp_path / "log.jsonl")
    assert status == 1
    assert err.strip() == (f"rpa-sim: error: {tmp_path / 'export.json'}: id 105: predictions[0].score: 66 is not in "
                           f"[0, 1] (a confidence; a score on another scale must be converted before import)")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export.json"]


# --------------------------------------------------------------------------- other templates


def test_a_form_of_text_areas_keyed_by_name_without_scores():
    records, report = _import(DATA / "invoice_fields.json", id_from="data.image")
    assert [r.id for r in records] == ["inv-0042", "inv-0043"]
    # task 7: the annotation was made from prediction 31 (llm-v1, no score), not from the later llm-v2
    assert _predicted(records[0]) == [("invoice_number", "INV-0042", None, None), ("total", "1,250.00", None, None)]
    assert _truth(records[0]) == [("invoice_number", "INV-0042"), ("total", "1,250.00"), ("due_date", "2024-05-01")]
    assert records[0].received_at == datetime(2024, 4, 2, 14, tzinfo=timezone(timedelta(hours=2)))
    assert records[1].review_seconds is None  # lead_time null
    assert report.unmapped == Counter({"predicted number results (type not supported)": 1,
                                       "predicted relation results (type not supported)": 1})
    assert "tasks with several predictions (one chosen): 1" in report.notes
    assert ("predicted entities without a score: confidence null (a policy must set missing_confidence): 3"
            in report.notes)


def test_null_confidences_are_written_as_null(tmp_path):
    records, _ = _import(DATA / "invoice_fields.json")
    out = tmp_path / "i.jsonl"
    write_records(records, out)
    first = json.loads(out.read_text().splitlines()[0])
    assert first["prediction"]["entities"][0] == {"key": "invoice_number", "value": "INV-0042", "confidence": None}


def test_text_spans_are_keyed_by_their_label():
    (record,), report = _import(DATA / "text_spans.json")
    # the span with two labels (total and tax) is ambiguous and left out
    assert _predicted(record) == [("invoice_number", "INV-7", 0.81, None), ("supplier", "Acme Ltd", 0.5, None)]
    assert _truth(record) == [("invoice_number", "INV-7"), ("supplier", "Acme Ltd"), ("total", "99.00")]
    assert record.review_seconds == 9.75
    assert report.unmapped == Counter({"predicted regions with several labels (which field they are is "
                                       "ambiguous)": 1})


# --------------------------------------------------------------------------- edge cases


def _one_task(result, *, score=None, annotations=None):
    prediction = {"id": 1, "result": result}
    if score is not None:
        prediction["score"] = score
    return [{"id": 1, "data": {"image": "a.png"}, "predictions": [prediction], "annotations": annotations or []}]


def _region(kind, value, **extra):
    return {"id": "r", "from_name": "name" if kind == "textarea" else "label", "to_name": "image", "type": kind,
            "value": value, **extra}


def test_boxes_without_a_page_size_are_in_percent_and_pages_come_from_item_index(tmp_path):
    geometry = {"x": 10, "y": 20, "width": 30, "height": 5}
    result = [_region("rectanglelabels", {**geometry, "rectanglelabels": ["total"]}, item_index=2),
              _region("textarea", {**geometry, "text": ["9.99"]}, item_index=2)]
    (record,), report = _import(_export(tmp_path, _one_task(result)))
    assert _predicted(record) == [("total", "9.99", None, [(2, (10.0, 20.0, 40.0, 25.0))])]
    assert any(note.startswith("predicted entities with their region's box as evidence, in percent of the page")
               and note.endswith(": 1") for note in report.notes)


def test_a_text_area_with_several_lines_and_choices_with_several_values(tmp_path):
    result = [_region("textarea", {"text": ["12 High St", "London"]}),
              {"id": "c", "from_name": "flags", "to_name": "image", "type": "choices",
               "value": {"choices": ["paid", "handwritten"]}, "score": 0.7}]
    (record,), _ = _import(_export(tmp_path, _one_task(result, score=0.4)))
    assert _predicted(record) == [("name", "12 High St London", 0.4, None), ("flags", "handwritten, paid", 0.7, None)]


def test_an_empty_result_list_is_a_prediction_of_nothing(tmp_path):
    annotations = [{"id": 1, "result": [_region("textarea", {"text": ["9.99"]})]}]
    (record,), _ = _import(_export(tmp_path, _one_task([], annotations=annotations)))
    assert record.prediction.entities == [] and _truth(record) == [("name", "9.99")]


def test_results_without_a_value_are_counted(tmp_path):
    """A labelled region without a text, a box alone, choices with nothing chosen: places without a value, not
    values lost; a prediction made of them alone is what the model gave, an empty prediction."""
    result = [{"id": "k", "from_name": "label", "to_name": "image", "type": "rectanglelabels",
               "value": {"x": 1, "y": 1, "width": 1, "height": 1, "rectanglelabels": ["total"]}},
              {"id": "b", "from_name": "bbox", "to_name": "image", "type": "rectangle",
               "value": {"x": 1, "y": 1, "width": 1, "height": 1}},
              {"id": "c", "from_name": "doc", "to_name": "image", "type": "choices", "value": {"choices": []}}]
    (record,), report = _import(_export(tmp_path, _one_task(result)))
    assert record.prediction.entities == []
    assert report.unmapped == Counter({"predicted labelled regions without a text": 1,
                                       "predicted regions with a box alone (no label, no text)": 1,
                                       "predicted choices results with nothing chosen": 1})


POLYGON = {"id": "p", "from_name": "shape", "to_name": "image", "type": "polygonlabels",
           "value": {"points": [[1, 2], [3, 4], [5, 1]], "polygonlabels": ["total"]}}
NUMBER = {"id": "n", "from_name": "total", "to_name": "image", "type": "number", "value": {"number": 12}}


def test_a_side_none_of_whose_results_could_be_mapped_is_an_error(tmp_path, capsys):
    """A prediction (or an annotation) whose results are all of types not read would be written empty: as if the
    model had found nothing, or the reviewer had left nothing. An error naming why, or skipped with
    --skip-invalid; a side with one value read besides is written, the rest counted."""
    text = {"id": "t", "from_name": "total", "to_name": "image", "type": "textarea", "value": {"text": ["9.50"]}}
    tasks = [*_one_task([POLYGON, NUMBER]),
             {"id": 2, "data": {}, "predictions": [{"id": 1, "result": [text]}],
              "annotations": [{"id": 1, "result": [NUMBER]}]},
             {"id": 3, "data": {}, "predictions": [{"id": 1, "result": [text, NUMBER]}],
              "annotations": [{"id": 1, "result": [text]}]}]
    export = _export(tmp_path, tasks)
    with pytest.raises(InputError) as caught:
        _import(export)
    assert str(caught.value) == (
        f"{export}: id 1: none of its values could be mapped (1 predicted number results (type not supported); "
        "1 predicted polygonlabels results (type not supported)): an empty record would read as a document where "
        "the service found nothing")
    records, report = _import(export, skip_invalid=True)
    assert [r.id for r in records] == ["3"]
    assert [str(error).replace(f"{tmp_path}/", "") for error in report.skipped] == [
        "export.json: id 1: none of its values could be mapped (1 predicted number results (type not supported); "
        "1 predicted polygonlabels results (type not supported)): an empty record would read as a document where "
        "the service found nothing",
        "export.json: id 2: none of its ground-truth values could be mapped (1 annotated number results (type not "
        "supported)): an empty ground truth would score every predicted value as an addition"]
    assert report.unmapped == Counter({"predicted number results (type not supported)": 1})
    assert "tasks with a prediction and an annotation: 1" in report.notes and report.records == 1
    out = tmp_path / "out.jsonl"
    status, _, err = run_cli(capsys, "import", "label-studio", export, "--out", out, "--skip-invalid")
    assert status == 0 and "wrote 1 records" in err and "skipped (--skip-invalid): 2, each with its problem:" in err


def test_a_task_with_neither_side_gives_no_record(tmp_path):
    tasks = [{"id": 1, "data": {}, "predictions": [], "annotations": [{"id": 1, "was_cancelled": True}]},
             {"id": 2, "data": {}, "predictions": [{"id": 1, "result": []}], "annotations": []}]
    records, report = _import(_export(tmp_path, tasks))
    assert [r.id for r in records] == ["2"]
    assert "tasks with neither (no record): 1" in report.notes


def test_page_box_rounds_and_turns():
    assert page_box({"x": 33.333333, "y": 0, "width": 33.333333, "height": 100}, 300, 200) == (
        100.0, 0.0, 200.0, 200.0)
    assert page_box({"x": 50, "y": 50, "width": 10, "height": 10, "rotation": 180}, None, None) == (
        40.0, 40.0, 50.0, 50.0)


# --------------------------------------------------------------------------- errors


def _error(tmp_path, tasks, **options) -> str:
    with pytest.raises(InputError) as caught:
        _import(_export(tmp_path, tasks), **options)
    return str(caught.value).removeprefix(f"{tmp_path / 'export.json'}: ")


def _changed(change):
    tasks = _tasks()
    change(tasks)
    return tasks


@pytest.mark.parametrize(("change", "message"), [
    (lambda t: t[0]["predictions"][0]["result"][2].update(score=1.5),
     "id 101: predictions[0].result[2].score: 1.5 is not in [0, 1] (a confidence; a score on another scale must "
     "be converted before import)"),
    (lambda t: t[0]["annotations"][1].update(lead_time=-4),
     "id 101: annotations[1].lead_time: -4 is negative"),
    (lambda t: t[1]["annotations"][0].update(lead_time="18s"),
     "id 102: annotations[0].lead_time: expected a finite number, got \"18s\""),
    (lambda t: t[2]["annotations"][0]["result"][1].pop("type"),
     "id 103: annotations[0].result[1].type: missing"),
    (lambda t: t[3]["predictions"][0]["result"][2].pop("value"),
     "id 104: predictions[0].result[2].value: missing"),
    (lambda t: t[3]["predictions"][0]["result"][2]["value"].update(text=[7]),
     "id 104: predictions[0].result[2].value.text[0]: expected a string, got 7"),
    (lambda t: t[0]["predictions"][0]["result"][0]["value"].update(width=-5),
     "id 101: predictions[0].result[0].value.width: -5 is negative"),
    (lambda t: t[0]["predictions"][0]["result"][0].update(original_width=0),
     "id 101: predictions[0].result[0].original_width: 0 is not a page size (above 0)"),
    (lambda t: t[0]["annotations"][0].update(was_cancelled="yes"),
     "id 101: annotations[0].was_cancelled: expected true or false, got \"yes\""),
    (lambda t: t[0].update(created_at="2024-03-04T07:58:12"),
     "id 101: created_at: '2024-03-04T07:58:12' has no UTC offset: write it as 2024-03-04T09:15:00+01:00 or "
     "2024-03-04T08:15:00Z"),
    (lambda t: t[4].update(id=101),
     "id 101: [4].id: a second task with this id (the first is task [0] of the export); choose another --id-from"),
    (lambda t: t[2].pop("id"), "[2].id: missing: a task has an id once Label Studio holds it (a file of tasks to "
                               "import has none); give --id-from data.KEY, the document the task references (its "
                               "data keys: ocr)"),
    (lambda t: t[1].update(id=[1]), "[1].id: expected a task id (a number or a string), got [1]"),
    (lambda t: t[0].update(predictions={"id": 11}), "id 101: predictions: expected a list, got {\"id\": 11}"),
])
def test_a_bad_task_names_the_task_and_the_field(tmp_path, change, message):
    assert _error(tmp_path, _changed(change)) == message


def test_a_missing_document_reference(tmp_path):
    tasks = _changed(lambda t: t[3]["data"].pop("ocr"))
    assert _error(tmp_path, tasks, id_from="data.ocr") == "[3].data.ocr: missing"


def test_not_an_export(tmp_path):
    assert _error(tmp_path, {"id": 1}) == ('expected a list of tasks or one task (with data, predictions or '
                                          'annotations), got {"id": 1}')
    assert _error(tmp_path, []) == "no tasks: the export is an empty list"
    assert _error(tmp_path, [3]) == "[0]: expected an object, got 3"


def test_bad_json_and_a_folder(tmp_path, capsys):
    path = tmp_path / "export.json"
    path.write_text('[{"id": 1,\n "data": }]')
    status, _, err = run_cli(capsys, "import", "label-studio", path, "--out", tmp_path / "r.jsonl")
    assert status == 1
    assert err.strip() == f"rpa-sim: error: {path}: line 2: invalid JSON: Expecting value at column 10"
    with pytest.raises(InputError, match="is a folder, not a file"):
        import_label_studio(tmp_path)


def test_a_bad_id_option_is_bad_usage(tmp_path, capsys):
    with pytest.raises(UsageError, match=r"--id-from: expected id or data\.KEY"):
        import_label_studio(RECEIPTS, id_from="data.")
    status, _, err = run_cli(capsys, "import", "label-studio", RECEIPTS, "--out", tmp_path / "r.jsonl",
                             "--id-from", "ocr")
    assert status == 2 and err.strip().startswith("rpa-sim: error: --id-from")

