"""What the service importers share: the ground truth's forms, the field map, values as text, the joins' counts."""

from __future__ import annotations

import gzip
import json
from collections import Counter

import pytest

from rpa_sim.common.errors import InputError
from rpa_sim.records.importers import ImportReport
from rpa_sim.records.importers.service import FieldMap, joined_records, read_ground_truth, read_joins, value_text
from rpa_sim.records.importers.sources import join_lines
from rpa_sim.records.models import Entity, Group, KIERecord, PredictedExtraction
from tests.conftest import run_cli, shared_path

NULL = "ground-truth fields with a null value (left out)"


def _truth(tmp_path, data, name="truth.json"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    report = ImportReport("test")
    return read_ground_truth(path, report=report), report


def _pairs(extraction):
    return [(e.key, e.value) for e in extraction.entities], [
        (g.name, [(e.key, e.value) for e in g.entities]) for g in extraction.groups]


def test_the_shared_ground_truth_files():
    report = ImportReport("test")
    google = read_ground_truth(shared_path("data", "vendors", "google-docai", "ground_truth.json"), report=report)
    entities, groups = _pairs(google.single)
    assert len(entities) == 15 and ("supplier_address", "111 Main Street\nAnytown, USA") in entities
    assert groups == [("line_items", [("description", d), ("quantity", q), ("unit_price", u), ("amount", a)])
                      for d, q, u, a in [("Tool A", "500", "1.00", "500.00"), ("Service B", "1", "900.00", "900.00"),
                                         ("Resource C", "50", "12.00", "600.00")]]
    azure = read_ground_truth(shared_path("data", "vendors", "azure", "receipt_ground_truth.json"), report=report)
    entities, groups = _pairs(azure.single)
    assert entities[-4:] == [("Subtotal", "11.7"), ("Tax", "1.17"), ("Tip", "1.63"), ("Total", "14.5")]
    assert len(entities) == 10 and groups == [] and not report.unmapped


def test_several_documents_in_either_form(tmp_path):
    truth, report = _truth(tmp_path, {
        "r-1": {"Total": 14.5, "Tip": None, "Emails": ["a@b.c", "d@e.f"], "Items": [{"Name": "Tea", "Qty": 2}]},
        "r-2": {"fields": {"Total": "9.00", "Paid": True}, "line_items": [{"Name": "Cake"}], "note": "a comment",
                "absent": ["Tip"]}})
    assert truth.single is None and list(truth.documents) == ["r-1", "r-2"]
    assert _pairs(truth.documents["r-1"]) == (
        [("Total", "14.5"), ("Emails", "a@b.c"), ("Emails", "d@e.f")], [("Items", [("Name", "Tea"), ("Qty", "2")])])
    assert _pairs(truth.documents["r-2"]) == ([("Total", "9.00"), ("Paid", "true")],
                                              [("line_items", [("Name", "Cake")])])
    assert report.unmapped == Counter({NULL: 1})


def test_canonical_records(tmp_path):
    path = tmp_path / "truth.jsonl.gz"
    lines = [{"id": "a", "ground_truth": {"entities": [{"key": "k", "value": "v"}], "groups": [[{"key": "g",
                                                                                                  "value": "1"}]]},
              "prediction": {"entities": [{"key": "k", "value": "v", "confidence": None}]}},
             {"id": "b", "ground_truth": {}}]
    path.write_bytes(gzip.compress("".join(json.dumps(line) + "\n" for line in lines).encode()))
    truth = read_ground_truth(path, report=ImportReport("test"))
    assert truth.documents["a"].groups == [Group(entities=[Entity(key="g", value="1")])]
    assert truth.documents["b"].entities == []


def test_the_join_counts_both_sides(tmp_path):
    truth, _ = _truth(tmp_path, {"a": {"k": "1"}, "b": {"k": "2"}, "c": {"k": "3"}})
    records = [KIERecord(id=i, prediction=PredictedExtraction()) for i in ("a", "b", "x")]
    report = ImportReport("test")
    joined = list(joined_records(records, ground_truth=truth, fields=FieldMap(), report=report))
    assert [r.ground_truth is not None for r in joined] == [True, True, False] and report.records == 3
    assert report.unmapped == Counter({
        "documents without ground truth in --ground-truth (written with predictions only: score refuses them unless "
        "--skip-invalid)": 1, "ground-truth documents with no imported document of that id": 1})
    assert f"ground truth joined from {tmp_path / 'truth.json'}: 2 documents" in report.notes


def test_one_documents_ground_truth_joins_one_document_only(tmp_path):
    truth, _ = _truth(tmp_path, {"fields": {"k": "v"}})
    assert truth.join(KIERecord(id="a")).ground_truth.entities == [Entity(key="k", value="v")]
    with pytest.raises(InputError, match=r'cannot be joined to a second one \("a", then "b"\): write it as'):
        truth.join(KIERecord(id="b"))


def test_without_ground_truth_the_records_are_predictions_only():
    report = ImportReport("test")
    truth, fields = read_joins(ground_truth=None, fields=None, report=report)
    assert truth is None and fields.path is None and fields.key("Total") == "Total"
    assert report.notes[0].startswith("predictions only: give --ground-truth FILE")


@pytest.mark.parametrize(("data", "message"), [
    ({}, "no documents"),
    ({"source": "hand-typed"}, "no documents"),  # a top-level string is a comment in either form
    ({"r-1": 5}, "r-1: expected a document's fields (an object), got 5"),
    ({"r-1": {"k": {"a": 1}}}, 'r-1.k: expected a value (a string, number or boolean), got {"a": 1}: groups are'),
    ({"r-1": {"g": [{"k": [{"a": 1}]}]}}, "r-1.g[0].k[0]: expected a value"),
    ({"r-1": {"k": [1, {"a": 1}]}}, "r-1.k[1]: expected a value"),
    ({"fields": {"k": "v"}, "absent": ["k"]}, 'absent[0]: "k" is listed as absent but has a value in fields'),
    ({"fields": {"k": "v"}, "extra": 3}, "extra: expected a list of objects (groups) or a comment (a string), got 3"),
    ('{"fields": {"k": 1e400}}', "fields.k: expected a finite number, got Infinity"),
    ("[1]", "expected an object, got [1]"),
])
def test_bad_ground_truth_names_the_field(tmp_path, data, message):
    with pytest.raises(InputError) as caught:
        _truth(tmp_path, data)
    assert str(caught.value).startswith(f"{tmp_path / 'truth.json'}: {message}")


def test_bad_canonical_ground_truth(tmp_path):
    path = tmp_path / "truth.jsonl"
    path.write_text('{"id": "a", "ground_truth": {"entities": [{"key": "k", "value": 5}]}}\n')
    with pytest.raises(InputError) as caught:
        read_ground_truth(path, report=ImportReport("test"))
    assert str(caught.value) == (f"{path}: line 1 (id a): ground_truth.entities[0].value: Input should be a valid "
                                 "string, got 5")
    path.write_text('{"id": "a", "prediction": {}}\n')
    with pytest.raises(InputError, match=r"line 1 \(id a\): ground_truth: missing"):
        read_ground_truth(path, report=ImportReport("test"))
    with pytest.raises(InputError, match="no such file"):
        read_ground_truth(tmp_path / "nope.json", report=ImportReport("test"))


@pytest.mark.parametrize(("text", "message"), [
    ("", "expected a mapping of service field names to ground-truth keys"),
    ("- a\n", "expected a mapping"),
    ("a: b\n1: c\n", "line 2: expected a service field name mapped to a ground-truth key or null, got {1: 'c'}"),
    ("a: [b]\n", "line 1: expected a service field name mapped to a ground-truth key or null"),
    ("a: b\na: c\n", "line 2"),
])
def test_bad_field_maps(tmp_path, text, message):
    path = tmp_path / "fields.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        FieldMap.load(path)
    assert str(caught.value).startswith(f"{path}: {message}") or message in str(caught.value)


def test_values_read_alike_on_both_sides():
    assert [value_text(v) for v in ("01", 2140.0, 2140, 14.5, 1e15, 1e-7, -0.0, False)] == [
        "01", "2140", "2140", "14.5", "1000000000000000", "1e-07", "0", "false"]
    assert value_text(1e16) == "1e+16"  # past 2**53 a float stands for no one integer: written as the float


def test_the_several_documents_form_takes_a_source_note_too(tmp_path):
    truth, _ = _truth(tmp_path, {"source": "typed from the scans, 2024-03", "r-1": {"Total": "9.00"}})
    assert list(truth.documents) == ["r-1"] and _pairs(truth.documents["r-1"]) == ([("Total", "9.00")], [])


def test_join_lines_writes_every_kind_of_line_break_as_one_space():
    assert join_lines("1 Main St\r\nTown\rState\u2028Zip\n") == "1 Main St Town State Zip "
    assert join_lines("no break") == "no break"


def test_a_report_lists_twenty_skipped_and_counts_the_rest():
    report = ImportReport("test", skipped=[InputError("bad", path=f"{n}.json") for n in range(23)])
    lines = report.lines()
    assert lines[0] == "skipped (--skip-invalid): 23, each with its problem:"
    assert lines[1:3] == ["  0.json: bad", "  1.json: bad"] and lines[-1] == "  ... and 3 more" and len(lines) == 22


def _textract_folder(tmp_path):
    folder = tmp_path / "textract"
    folder.mkdir()
    for path in shared_path("data", "textract").glob("*.json"):
        (folder / path.name).write_bytes(path.read_bytes())
    (folder / "z_broken.json").write_text('{"ExpenseDocuments": 3}')
    return folder


@pytest.mark.parametrize("importer", ["textract-expense", "mindee"])
def test_every_importer_over_a_folder_takes_skip_invalid_and_join_lines(capsys, tmp_path, importer):
    if importer == "textract-expense":
        folder = _textract_folder(tmp_path)
    else:
        folder = tmp_path / "mindee"
        folder.mkdir()
        response = {"inference": {"result": {"fields": {"address": {
            "value": "1 Main St\nTown", "confidence": "High", "locations": []}}}}}
        (folder / "a.json").write_text(json.dumps(response))
        (folder / "z_broken.json").write_text('{"inference": 3}')
    out = tmp_path / "out.jsonl"
    status, _, err = run_cli(capsys, "import", importer, folder, "--out", out)
    assert status == 1 and err.startswith(f"rpa-sim: error: {folder / 'z_broken.json'}: ")
    status, _, err = run_cli(capsys, "import", importer, folder, "--skip-invalid", "--join-lines", "--out", out)
    assert status == 0, err
    assert f"skipped (--skip-invalid): 1, each with its problem:\n  {folder / 'z_broken.json'}: " in err
    assert "note: values with line breaks, each break written as a space (--join-lines): " in err
    values = [e["value"] for line in out.read_text().splitlines() for e in json.loads(line)["prediction"]["entities"]]
    assert values and not any("\n" in value for value in values)
