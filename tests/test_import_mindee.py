"""The mindee importer on hand-made v1 and v2 invoice responses (tests/data/mindee), edge cases and bad input."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from rpa_sim.common.errors import InputError
from rpa_sim.records.importers.mindee import CONFIDENCE_LEVELS, import_mindee
from rpa_sim.records.models import Evidence
from tests.conftest import run_cli

DATA = Path(__file__).parent / "data" / "mindee"
NOT_FOUND = "fields without a value (not found)"
EMPTY_MEMBER = "fields of list items and objects without a value"
PARTS = "parts of v1 fields beside their value (a locale's currency, an address's parts)"
NESTED = "lists and objects inside a group (canonical groups do not nest)"


def _import(path, **options):
    records, report = import_mindee(path, **options)
    return list(records), report


def _write(tmp_path, data, name="response.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def _groups(record):
    return [(g.name, [(e.key, e.value, e.confidence) for e in g.entities]) for g in record.prediction.groups]


def test_a_v1_invoice():
    [record], report = _import(DATA / "invoice_v1.json")
    assert record.id == "invoice_v1"
    assert [(e.key, e.value, e.confidence) for e in record.prediction.entities] == [
        ("locale", "en", 0.94), ("document_type", "INVOICE", None), ("invoice_number", "001", 0.99),
        ("reference_numbers", "PO-001", 0.71), ("reference_numbers", "Q-17", 0.42), ("date", "1970-01-01", 0.99),
        ("supplier_name", "COMPANY ABC", 0.87), ("supplier_address", "111 Main Street Anytown, USA", 0.62),
        ("customer_name", "JOHN DOE", 0.93), ("total_net", "2000", 0.96), ("total_tax", "140", 0.9),
        ("total_amount", "2140", 0.99)]
    # a line item's one confidence and polygon go to each of its fields
    assert _groups(record) == [
        ("line_items", [("description", "Tool A", 0.97), ("quantity", "500", 0.97), ("total_amount", "500", 0.97),
                        ("unit_price", "1", 0.97)]),
        ("line_items", [("description", "Service B", 0.95), ("quantity", "1", 0.95), ("total_amount", "900", 0.95),
                        ("unit_price", "900", 0.95)]),
        ("line_items", [("description", "Resource C", 0.88), ("quantity", "50", 0.88),
                        ("total_amount", "600", 0.88), ("unit_price", "12", 0.88)]),
        ("taxes", [("base", "2000", 0.81), ("rate", "7", 0.81), ("value", "140", 0.81)])]
    # polygons as fractions of the page -> boxes on a virtual 1000 px page; page_id 1 is the second page
    entities = record.prediction.entities
    assert entities[2].evidence == [Evidence(page=0, bbox=(811.0, 161.0, 880.0, 174.0))]
    assert entities[-1].evidence == [Evidence(page=1, bbox=(711.0, 75.0, 774.0, 89.0))]
    assert entities[0].evidence is None and entities[1].evidence is None
    assert record.prediction.groups[3].entities[0].evidence == [Evidence(page=1, bbox=(701.0, 44.0, 762.0, 57.0))]
    boxes = [e.evidence for e in entities if e.evidence] + [e.evidence for g in record.prediction.groups
                                                            for e in g.entities]
    assert len(boxes) == 25 and sum(b[0].page == 1 for b in boxes) == 6
    # due_date not found; 4 empty columns of each line item and the tax's code; the locale's currency, the
    # address's parts
    assert report.unmapped == Counter({NOT_FOUND: 1, EMPTY_MEMBER: 13, PARTS: 2})
    assert "v1 responses: 1" in report.notes


def test_a_v2_invoice_with_confidence_levels():
    [record], report = _import(DATA / "invoice_v2.json")
    assert [(e.key, e.value, e.confidence) for e in record.prediction.entities] == [
        ("invoice_number", "001", 1.0), ("date", "1970-01-01", 0.9), ("purchase_order_number", "PO-001", None),
        ("reference_numbers", "PO-001", 0.6), ("reference_numbers", "Q-17", 0.3), ("supplier_name", "Company ABC", 0.9),
        ("total_net", "2000", 1.0), ("total_amount", "2140", 1.0)]
    assert _groups(record) == [
        ("supplier_address", [("address", "111 Main Street Anytown, USA", 0.6), ("city", "Anytown", 0.9),
                              ("country", "USA", 0.6)]),
        ("line_items", [("description", "Tool A", 0.9), ("quantity", "500", 1.0), ("unit_price", "1", 1.0),
                        ("total_amount", "500", 1.0)]),
        ("line_items", [("description", "Service B", 0.6), ("quantity", "1", 0.9), ("unit_price", "900", 1.0),
                        ("total_amount", "900", 1.0)]),
        ("line_items", [("description", "Resource G", 0.3), ("quantity", "50", 0.9), ("unit_price", "12", 1.0)]),
        ("taxes", [("rate", "7", 0.6), ("base", "2000", 0.9), ("amount", "140", 1.0)])]
    confidences = [e.confidence for e in record.prediction.entities] + [
        e.confidence for g in record.prediction.groups for e in g.entities]
    assert Counter(confidences) == Counter({1.0: 10, 0.9: 7, 0.6: 5, 0.3: 2, None: 1})
    boxes = [e.evidence for e in record.prediction.entities if e.evidence] + [
        e.evidence for g in record.prediction.groups for e in g.entities if e.evidence]
    assert len(boxes) == 21 and sum(b[0].page == 1 for b in boxes) == 3
    assert report.unmapped == Counter({NOT_FOUND: 1, EMPTY_MEMBER: 1})
    assert ("v2 confidence levels read as scores (Certain 1, High 0.9, Medium 0.6, Low 0.3): a threshold acts on "
            "levels") in report.notes
    assert ("fields without a confidence, written with a missing confidence (null; set missing_confidence in the "
            "policy): 1") in report.notes


def test_the_levels_keep_their_order():
    scores = [CONFIDENCE_LEVELS[level] for level in ("Low", "Medium", "High", "Certain")]
    assert scores == sorted(set(scores)) and scores[-1] == 1.0 and scores[0] > 0


def test_a_folder_mixes_both_versions():
    records, report = _import(DATA)
    assert [r.id for r in records] == ["invoice_v1", "invoice_v2"] and report.records == 2
    assert {"v1 responses: 1", "v2 responses: 1"} <= set(report.notes)
    assert report.unmapped == Counter({NOT_FOUND: 2, EMPTY_MEMBER: 14, PARTS: 2})


def test_missing_confidences_are_null(tmp_path):
    v1 = {"document": {"inference": {"prediction": {
        "total_amount": {"value": 5.5, "polygon": [], "page_id": None},
        "line_items": [{"description": "Tea", "polygon": [], "page_id": None}]}}}}
    [record], report = _import(_write(tmp_path, v1))
    assert [(e.key, e.confidence, e.evidence) for e in record.prediction.entities] == [("total_amount", None, None)]
    assert [e.confidence for e in record.prediction.groups[0].entities] == [None]
    assert any(note.endswith(": 2") and "missing confidence" in note for note in report.notes)


def test_an_empty_document(tmp_path):
    records, report = _import(_write(tmp_path, {"inference": {"result": {"fields": {}, "raw_text": None}}}))
    assert records[0].prediction.entities == [] and records[0].prediction.groups == []
    records, _ = _import(_write(tmp_path, {"inference": {"result": {"fields": None}}}))
    assert records[0].prediction.entities == []
    records, _ = _import(_write(tmp_path, {"document": {"inference": {"prediction": {}}}}))
    assert records[0].prediction.entities == [] and not report.unmapped


def test_nested_lists(tmp_path):
    simple = {"value": "x", "confidence": "High", "locations": []}
    v2 = {"inference": {"result": {"fields": {
        "line_items": {"items": [{"fields": {"description": simple, "tags": {"items": [simple, simple]},
                                             "parts": {"items": [{"fields": {"code": simple}}]},
                                             "detail": {"fields": {"code": simple}}}},
                                 {"items": []}, {"fields": {"total": {"value": None, "confidence": None}}}]}}}}}
    [record], report = _import(_write(tmp_path, v2))
    # a list of values inside a group gives one entity per value; lists of objects and objects are counted
    assert _groups(record) == [("line_items", [("description", "x", 0.9), ("tags", "x", 0.9), ("tags", "x", 0.9)])]
    assert report.unmapped == Counter({
        NESTED: 2, "lists directly inside lists (canonical records have no place for them)": 1, EMPTY_MEMBER: 1,
        "list items or objects with no field left (no group written)": 1})
    v1 = {"document": {"inference": {"prediction": {
        "line_items": [{"description": "Tea", "confidence": 0.5, "polygon": [], "sub": [{"value": 1}]}]}}}}
    [record], report = _import(_write(tmp_path, v1))
    assert _groups(record) == [("line_items", [("description", "Tea", 0.5)])]
    assert report.unmapped == Counter({NESTED: 1})


def test_ground_truth_and_field_map(tmp_path):
    truth = _write(tmp_path, {"invoice_v2": {"fields": {"invoice_id": "001", "total_amount": 2140.00}},
                              "invoice_v1": {"invoice_id": "001"}}, "truth.json")
    fields = _write(tmp_path, {}, "unused.json")  # a map must be YAML of names: an empty one is refused
    with pytest.raises(InputError, match="expected a mapping of service field names"):
        _import(DATA, fields=fields)
    fields = tmp_path / "fields.yaml"
    fields.write_text("invoice_number: invoice_id\nline_items: null\ntaxes: null\nsupplier_address: null\n")
    [v1, v2], report = _import(DATA, ground_truth=truth, fields=fields)
    assert [(e.key, e.value) for e in v2.ground_truth.entities] == [("invoice_id", "001"), ("total_amount", "2140")]
    assert [(e.key, e.value) for e in v1.ground_truth.entities] == [("invoice_id", "001")]
    assert v2.prediction.entities[0].key == "invoice_id" and v2.prediction.groups == []
    # v1: 3 line items, 1 tax and the supplier_address field; v2: the supplier_address group, 3 line items, 1 tax
    assert report.unmapped[f"fields or groups dropped by --fields {fields} (mapped to null): line_items, "
                           "supplier_address, taxes"] == 10


@pytest.mark.parametrize(("data", "message"), [
    ({"predictions": []}, "not a Mindee response: no document (v1) or inference (v2); keys: ['predictions']"),
    ({"inference": {"result": {"fields": {"a": {"value": "x", "confidence": "Sure"}}}}},
     'inference.result.fields.a.confidence: "Sure" is not one of Mindee\'s levels Certain, High, Medium, Low'),
    ({"inference": {"result": {"fields": {"a": {"confidence": "High"}}}}},
     "inference.result.fields.a: expected a field with a value, items or fields; keys: ['confidence']"),
    ({"document": {"inference": {"prediction": {"a": {"value": "x", "confidence": 2}}}}},
     "document.inference.prediction.a.confidence: 2 is not in [0, 1]"),
    ({"document": {"inference": {"prediction": {"a": {"value": "x", "polygon": [[0.1, 0.2, 0.3]], "page_id": 0}}}}},
     "document.inference.prediction.a.polygon[0]: expected a point [x, y], got [0.1, 0.2, 0.3]"),
    ({"document": {"inference": {"prediction": {"a": {"value": "x", "polygon": [[0.1, 0.2]], "page_id": -1}}}}},
     "document.inference.prediction.a.page_id: expected a page index from 0, got -1"),
    ({"document": {"inference": {"prediction": {"a": {"value": {"b": 1}}}}}},
     'document.inference.prediction.a.value: expected a string, number or boolean, got {"b": 1}'),
    ({"document": {"inference": {}}}, "document.inference.prediction: missing"),
    ({"document": {"inference": {"prediction": {"a": {"value": "x", "polygon": [[0.1, 1e308]], "page_id": 0}}}}},
     "document.inference.prediction.a.polygon: coordinates too large: the box is beyond any page"),
])
def test_bad_responses_name_the_field(tmp_path, data, message):
    path = _write(tmp_path, data)
    with pytest.raises(InputError) as caught:
        _import(path)
    assert str(caught.value) == f"{path}: {message}"


def test_the_command_line(capsys, tmp_path):
    out = tmp_path / "out.jsonl"
    status, _, err = run_cli(capsys, "import", "mindee", DATA, "--out", out)
    assert status == 0, err
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["invoice_v1", "invoice_v2"]
    # a null confidence is written as null, so that the record reads back
    assert out.read_text().count('"confidence":null') == 2


def test_the_worked_example_of_the_docs(capsys, tmp_path):
    """docs/importers/mindee.md: the v2 sample against its ground truth, and a sweep whose thresholds are the levels."""
    out = tmp_path / "mindee-v2.jsonl"
    status, _, err = run_cli(capsys, "import", "mindee", DATA / "invoice_v2.json", "--ground-truth",
                             DATA.parent / "mindee-ground-truth.json", "--fields", DATA.parent / "mindee-fields.yaml",
                             "--out", out)
    assert status == 0, err
    status, scores, _ = run_cli(capsys, "score", out, "--json")
    scores = json.loads(scores)
    # "Resource G" (Low) for Resource C is the one substitution; Resource C's missing total the one addition
    assert (scores["entities_gt"], scores["entities_pred"], scores["tp"], scores["substitutions"],
            scores["additions"], scores["deletions"]) == (17, 16, 15, 1, 1, 0)
    assert scores["kieval_aligned"] == 15 / 17
    status, rows, _ = run_cli(capsys, "sweep", out, "--policy", "confidence", "--format", "json")
    rows = json.loads(rows)
    assert [(r["threshold"], r["reviewed"], r["kieval_aligned"]) for r in rows[:5]] == [
        (0.0, 0, 15 / 17), (0.3, 0, 15 / 17), (0.6, 1, 16 / 17), (0.9, 2, 16 / 17), (1.0, 7, 16 / 17)]
