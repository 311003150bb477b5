"""The Label Studio importer on the shapes real exports come in (../shared/data/vendors/label-studio), on what
rpa-sim itself exports, and on values that would make later commands hang."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rpa_sim.common.errors import InputError
from rpa_sim.records.importers.label_studio import RESULTS_EXPORT, import_label_studio
from tests.conftest import run_cli, shared_path

DATA = Path(__file__).parent / "data" / "label_studio"


def _vendor(name: str) -> Path:
    return shared_path("data", "vendors", "label-studio", name)


def _import(path: Path, **options):
    records, report = import_label_studio(path, **options)
    return list(records), report


def _error(path: Path, **options) -> str:
    with pytest.raises(InputError) as caught:
        _import(path, **options)
    return str(caught.value).removeprefix(f"{path}: ")


def _write(tmp_path: Path, tasks, name: str = "export.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(tasks))
    return path


def test_one_task_as_the_docs_write_it():
    """Label Studio's OCR pre-annotation example: one object, no id; labels, box and text on one region."""
    path = _vendor("docs_ocr_prediction_task.json")
    assert _error(path) == ("[0].id: missing: a task has an id once Label Studio holds it (a file of tasks to import "
                            "has none); give --id-from data.KEY, the document the task references (its data keys: "
                            "ocr)")
    [record], report = _import(path, id_from="data.ocr")
    assert record.id == "receipt_00523" and record.ground_truth is None
    [entity] = record.prediction.entities
    # no region score: the prediction's 0.89; x 48.93% y 61.33% 9.73% x 2.84% of 864 x 1296 px
    assert (entity.key, entity.value, entity.confidence) == ("Text", "TOTAL", 0.89)
    assert [(e.page, e.bbox) for e in entity.evidence] == [(0, (422.78, 794.88, 506.88, 831.74))]
    assert "tasks without a usable annotation (records with the prediction only): 1" in report.notes


def test_tasks_to_import_without_ids_and_tasks_without_data(tmp_path):
    """Label Studio's own test tasks: no ids, choices, lead_time, and two tasks that are their own data."""
    path = _vendor("test_tasks_annotations_predictions.json")
    assert _error(path).startswith("[0].id: missing: ") and _error(path).endswith("(its data keys: int_field, text)")
    records, report = _import(path, id_from="data.text")
    sides = [(r.id, r.ground_truth is not None, r.prediction is not None, r.review_seconds) for r in records]
    # task 1 has two annotations (lead_time 3 and 5): the last listed is taken
    assert sides == [("Test example phrase 1", True, True, 3.0), ("x2", True, True, 5.0), ("yoyo", True, False, None),
                     ("opop", False, True, None)]
    assert [(e.key, e.value, e.confidence) for e in records[3].prediction.entities] == [
        ("text_class", "class_PREDICTIONS_TESTING", None)]
    assert {"tasks with neither (no record): 2",
            "tasks without data, read as their own data as Label Studio imports them (no prediction, no annotation): "
            "2"} <= set(report.notes)
    # a number in data is an id too (the tasks without data have no int_field)
    numbered = _write(tmp_path, json.loads(path.read_text())[:3])
    assert [r.id for r in _import(numbered, id_from="data.int_field")[0]] == ["1", "20", "99"]


def test_prediction_ids_without_results_say_which_export_to_use(tmp_path, capsys):
    """What current Label Studio's Export -> JSON writes (its issues #5654, #9709): ids in place of predictions."""
    tasks = json.loads(_vendor("test_tasks_annotations_predictions.json").read_text())
    for number, task in enumerate(tasks[:3], start=17):
        task.update(id=number, predictions=[286 + number] if "predictions" in task else [])
    path = _write(tmp_path, tasks[:3])
    message = _error(path)
    assert message == (f"id 17: predictions[0]: 303 is a prediction's id, not the prediction: this export holds "
                       f"prediction ids only, as Label Studio's Export -> JSON writes them; {RESULTS_EXPORT}")
    assert 'serialization_options": {"predictions": {"only_id": false}}' in message
    status, _, err = run_cli(capsys, "import", "label-studio", path, "--out", tmp_path / "out.json")
    assert status == 1 and err.count("\n") == 1 and not (tmp_path / "out.json").exists()


def test_a_prediction_or_annotation_without_its_result_is_an_error_and_an_empty_one_is_empty(tmp_path):
    task = {"id": 7, "data": {"text": "x"},
            "predictions": [{"id": 1, "score": 0.5, "result": [
                {"id": "r1", "from_name": "label", "to_name": "text", "type": "choices",
                 "value": {"choices": ["paid"]}}]}],
            "annotations": [{"id": 2, "result": [
                {"id": "r1", "from_name": "label", "to_name": "text", "type": "choices",
                 "value": {"choices": ["paid"]}}]}]}
    for side in ("predictions", "annotations"):
        cut = json.loads(json.dumps(task))
        del cut[side][0]["result"]
        assert _error(_write(tmp_path, [cut])) == (
            f"id 7: {side}[0].result: missing: a prediction or annotation lists its regions in 'result' ([] when it "
            f"has none)")
    empty = json.loads(json.dumps(task))
    empty["predictions"][0]["result"] = []
    records, _ = _import(_write(tmp_path, [empty]))
    assert [(r.id, r.prediction.entities, [e.value for e in r.ground_truth.entities]) for r in records] == [
        ("7", [], ["paid"])]


def test_rpa_sims_own_tasks_read_back_without_id_from(capsys, tmp_path):
    """export-policy label-studio writes the record id in meta.rpa_sim.id; import takes it as the task's id."""
    status, _, err = run_cli(capsys, "import", "label-studio", DATA / "receipts_ocr.json", "--out",
                             tmp_path / "all.jsonl")
    assert status == 0, err
    status, _, err = run_cli(capsys, "export-policy", "label-studio", tmp_path / "all.jsonl", "--skip-invalid",
                             "--policy", "confidence", "--threshold", "0.9", "--out", tmp_path / "tasks.json")
    assert status == 0, err
    exported = json.loads((tmp_path / "tasks.json").read_text())
    assert all("id" not in task for task in exported)
    records, _ = _import(tmp_path / "tasks.json")
    assert [record.id for record in records] == [task["meta"]["rpa_sim"]["id"] for task in exported] == ["102", "101"]
    assert [[(e.key, e.value, e.confidence) for e in record.prediction.entities] for record in records] == [
        [(r["from_name"], r["value"]["text"][0], r["score"]) for r in task["predictions"][0]["result"]]
        for task in exported]


@pytest.mark.parametrize(("change", "message"), [
    (lambda t: t[0].update(id=""), '[0].id: "" is empty: it cannot be an id'),
    (lambda t: t[0].update(id="  "), '[0].id: "  " is empty: it cannot be an id'),
    (lambda t: t[0]["annotations"][1].update(lead_time=1e15),
     "id 101: annotations[1].lead_time: 1e+15 seconds is more than the 86,400 of a day: a timer left running, not a "
     "review; correct it or leave lead_time out"),
    (lambda t: t[0].update(created_at="0001-01-01T00:00:00Z"),
     'id 101: created_at: "0001-01-01T00:00:00Z" is not in the years 1970 to 2199'),
    (lambda t: t[0].update(created_at="9999-12-31T00:00:00+01:00"),
     'id 101: created_at: "9999-12-31T00:00:00+01:00" is not in the years 1970 to 2199'),
    # a percent of the image times its size past a double's range
    (lambda t: t[0]["predictions"][0]["result"][0].update(original_width=1e300) or
     t[0]["predictions"][0]["result"][0]["value"].update(x=1e300),
     "id 101: predictions[0].result[0].value: coordinates too large: the box is beyond any page"),
])
def test_values_no_reader_or_simulation_could_use_are_one_line(tmp_path, capsys, change, message):
    tasks = json.loads((DATA / "receipts_ocr.json").read_text())
    change(tasks)
    path = _write(tmp_path, tasks)
    assert _error(path) == message
    status, _, err = run_cli(capsys, "import", "label-studio", path, "--out", tmp_path / "out.jsonl")
    assert (status, err) == (1, f"rpa-sim: error: {path}: {message}\n")
    assert not (tmp_path / "out.jsonl").exists()


def _ocr_task_with_an_address() -> dict:
    """The docs' OCR task (../shared) with a two-line transcription, and an annotation that keeps it as the
    reviewer's text area left it, line break included."""
    task = json.loads(_vendor("docs_ocr_prediction_task.json").read_text())
    result = task["predictions"][0]["result"]
    text = next(item for item in result if item["type"] == "textarea")
    text["value"]["text"] = ["222 Main Street\nAnytown, USA"]
    task["annotations"] = [{"id": 1, "created_at": "2024-03-05T10:00:00Z",
                            "result": [{**item, "value": dict(item["value"])} for item in result]}]
    return task


def test_join_lines_writes_the_line_breaks_of_both_sides_as_spaces(tmp_path, capsys):
    """A textarea keeps a value's line breaks on both sides; --join-lines joins the prediction's and the
    annotation's alike (the reviewer typed it in the same tool), so that a value left as it was stays right."""
    export = _write(tmp_path, _ocr_task_with_an_address())
    [kept], report = _import(export, id_from="data.ocr")
    assert kept.prediction.entities[0].value == kept.ground_truth.entities[0].value == "222 Main Street\nAnytown, USA"
    assert ("values with line breaks, kept as the service wrote them (--join-lines writes each break as a space, as "
            "a ground truth typed on one line has it): 2") in report.notes
    [joined], report = _import(export, id_from="data.ocr", join_lines=True)
    address = "222 Main Street Anytown, USA"
    assert joined.prediction.entities[0].value == joined.ground_truth.entities[0].value == address
    assert "values with line breaks, each break written as a space (--join-lines): 2" in report.notes
    log, out = tmp_path / "log.jsonl", tmp_path / "out.jsonl"
    status, _, err = run_cli(capsys, "import", "label-studio", export, "--id-from", "data.ocr", "--join-lines",
                             "--review-log", log, "--out", out)
    assert status == 0, err
    [row] = [json.loads(line) for line in log.read_text().splitlines()]
    assert (row["value"], row["correct"], row["day"]) == ("222 Main Street Anytown, USA", True, "2024-03-05")
