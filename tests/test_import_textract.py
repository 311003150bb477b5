"""The AnalyzeExpense importer on the two real Textract responses, synthetic Blocks and bad input."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from rpa_sim.common.errors import InputError
from rpa_sim.evaluate.outcomes import evaluate_kie
from rpa_sim.records.importers.textract import PAGE_SIZE, import_textract_expense, pixel_box
from rpa_sim.records.readers import read_records, write_records
from tests.conftest import shared_path

ROW = "EXPENSE_ROW line item fields (the whole row's text, repeating its fields)"
EMPTY = "line item fields with an empty value"


def _import_one(name: str):
    records, report = import_textract_expense(shared_path("data", "textract", f"analyze_expense_{name}.json"))
    records = list(records)
    assert len(records) == 1 and report.records == 1
    return records[0], report


def _entities(record):
    return [(e.key, e.value, e.confidence) for e in record.prediction.entities]


def test_costco_receipt():
    record, report = _import_one("costco_receipt")
    assert record.id == "analyze_expense_costco_receipt-1"
    assert record.ground_truth is None and record.document is None
    entities = _entities(record)
    assert len(entities) == 13
    assert entities[0] == ("VENDOR_NAME", "costco", 24.31348991394043 / 100)
    assert ("TOTAL", "$38.48", 90.3795166015625 / 100) in entities
    # OTHER fields are keyed by their label; "**** TOTAL" stays apart from Textract's TOTAL.
    assert [key for key, _, _ in entities if key.startswith("OTHER")] == [
        "OTHER.APP", "OTHER.TRAN_ID", "OTHER.MERCHANT_ID", "OTHER.RESP", "OTHER.SEQ", "OTHER.AID",
        "OTHER.TOTAL", "OTHER.APFROVED", "OTHER.COSTCO"]
    assert ("OTHER.TOTAL", "38.48", 59.54383087158203 / 100) in entities
    groups = record.prediction.groups
    assert [g.name for g in groups] == ["line_item"] * 3
    assert [[(e.key, e.value) for e in g.entities] for g in groups] == [
        [("ITEM", "BNLS/SL BRST"), ("PRICE", "22.10")],
        [("ITEM", "GRAPE TOMATO"), ("PRICE", "5.99")],
        [("ITEM", "KS BUTTER"), ("PRICE", "10.39")]]
    assert groups[1].entities[1].confidence == 99.3388442993164 / 100
    assert report.unmapped == Counter({ROW: 3})
    assert any(note.startswith("OTHER fields keyed by their printed label") and note.endswith(": 9")
               for note in report.notes)


def test_invoice():
    record, report = _import_one("invoice")
    entities = _entities(record)
    assert len(entities) == 31
    assert ("TOTAL", "$6231.09", 99.99756622314453 / 100) in entities
    assert ("INVOICE_RECEIPT_ID", "123PQR456", 99.64569854736328 / 100) in entities
    # Multi-line values are kept as written.
    assert entities[0][:2] == ("ADDRESS", "The Receiver\nXZY Company\n789 Another Avenue\nDifferent City, XYZ, USA")
    groups = record.prediction.groups
    assert [len(g.entities) for g in groups] == [4, 3, 4, 4]
    # Line item 2 leaves its Quantity column blank: Textract writes OTHER "" with confidence 0; it is dropped.
    assert [e.key for e in groups[1].entities] == ["ITEM", "UNIT_PRICE", "PRICE"]
    assert [(e.key, e.value) for e in groups[2].entities] == [
        ("ITEM", "Product 2"), ("QUANTITY", "2"), ("UNIT_PRICE", "$106.04"), ("PRICE", "$212.08")]
    assert report.unmapped == Counter({ROW: 4, EMPTY: 1})
    assert not any(note.startswith("OTHER fields") for note in report.notes)


def test_folder_reads_every_response_by_name_and_fills_the_report_lazily():
    records, report = import_textract_expense(shared_path("data", "textract"))
    assert report.records == 0 and not report.unmapped
    ids = [record.id for record in records]
    assert ids == ["analyze_expense_costco_receipt-1", "analyze_expense_invoice-1"]
    assert report.records == 2
    assert report.unmapped == Counter({ROW: 7, EMPTY: 1})
    assert report.notes[0].startswith("AnalyzeExpense has no ground truth")
    assert report.notes[-1] == ("documents without Blocks, so without OCR words: grounding stays unknown (words "
                                "made from the fields' own boxes would locate every value trivially): 2")


def test_imported_predictions_join_a_canonical_ground_truth(tmp_path):
    records, _ = import_textract_expense(shared_path("data", "textract", "analyze_expense_costco_receipt.json"))
    write_records(records, tmp_path / "pred.jsonl")
    butter = [{"key": "ITEM", "value": "KS BUTTER"}, {"key": "PRICE", "value": "10.39"}]
    summary = [{"key": "TOTAL", "value": "$38.48"}, {"key": "VENDOR_NAME", "value": "Costco"}]
    truth = {"id": "analyze_expense_costco_receipt-1",
             "ground_truth": {"entities": summary, "groups": [{"name": "line_item", "entities": butter}]}}
    (tmp_path / "gt.jsonl").write_text(json.dumps(truth) + "\n", encoding="utf-8")
    table = evaluate_kie(read_records(tmp_path / "gt.jsonl", predictions=tmp_path / "pred.jsonl"))
    counts = table.counts
    # TOTAL and the butter line match; "costco" is a substitution of "Costco" (exact comparison);
    # the 11 other summary fields and the 2 other line items are extra predictions.
    assert (counts.tp, counts.substitutions, counts.additions) == (3, 1, 0)
    assert counts.deletions == 11 + 4


def test_confidence_is_scaled_from_percent(tmp_path):
    path = _response(tmp_path, {"ExpenseDocuments": [{"SummaryFields": [_field("TOTAL", "9.50", 99.5),
                                                                         _field("TAX", "0.50", 0)]}]})
    records, _ = import_textract_expense(path)
    entities = next(records).prediction.entities
    assert [e.confidence for e in entities] == [0.995, 0.0]


def test_pixel_box_by_hand():
    # The costco VENDOR_NAME value box: Left 0.26238..., Top 0.12659..., Width 0.45919..., Height 0.09994...
    box = {"Width": 0.4591922461986542, "Height": 0.09994619339704514, "Left": 0.2623853087425232,
           "Top": 0.12659528851509094}
    # x1 = (0.2623853087 + 0.4591922462) * 1000 = 721.5775549; y1 = (0.1265952885 + 0.0999461934) * 1000 = 226.5414819
    assert pixel_box(box) == (262.39, 126.60, 721.58, 226.54)


def test_blocks_become_words_on_a_virtual_page(tmp_path):
    def word(text, page, left, top, width, height):
        return {"BlockType": "WORD", "Text": text, "Page": page, "Confidence": 99.0,
                "Geometry": {"BoundingBox": {"Left": left, "Top": top, "Width": width, "Height": height}}}
    blocks = [{"BlockType": "PAGE", "Page": 1, "Geometry": {}},
              {"BlockType": "LINE", "Text": "TOTAL 9.50", "Page": 1},
              word("TOTAL", 1, 0.1, 0.8, 0.2, 0.05), word("9.50", 1, 0.5, 0.8, 0.125, 0.05),
              word("Thanks", 2, 0.25, 0.5, 0.5, 0.0625)]
    path = _response(tmp_path, {"DocumentMetadata": {"Pages": 2},
                                "ExpenseDocuments": [{"SummaryFields": [_field("TOTAL", "9.50", 98.0)],
                                                      "Blocks": blocks}]})
    records, report = import_textract_expense(path)
    (record,) = records  # exhausted: the counted notes are complete
    document = record.document
    assert [(p.width, p.height) for p in document.pages] == [(PAGE_SIZE, PAGE_SIZE)] * 2
    assert [(w.text, w.bbox) for w in document.pages[0].words] == [
        ("TOTAL", (100.0, 800.0, 300.0, 850.0)), ("9.50", (500.0, 800.0, 625.0, 850.0))]
    assert [(w.text, w.bbox) for w in document.pages[1].words] == [("Thanks", (250.0, 500.0, 750.0, 562.5))]
    assert report.notes[-1].startswith("documents with the OCR words of their Blocks, on a virtual 1000 x 1000 px page")


def test_a_line_item_of_only_an_expense_row_writes_no_group(tmp_path):
    item = {"LineItemExpenseFields": [_field("EXPENSE_ROW", "2 x Tea 3.00", 95.0)]}
    path = _response(tmp_path, {"ExpenseDocuments": [{"LineItemGroups": [{"LineItems": [item]}]}]})
    records, report = import_textract_expense(path)
    assert next(records).prediction.groups == []
    assert report.unmapped == Counter({ROW: 1, "line items with no field left (no group written)": 1})


def _summary(field: dict) -> dict:
    return {"ExpenseDocuments": [{"SummaryFields": [field]}]}


_TOTAL = {"Type": {"Text": "TOTAL"}, "ValueDetection": {"Text": "9.50", "Confidence": 150.5}}
_ITEM = {"Type": {"Text": "ITEM"}, "ValueDetection": {"Text": "Tea", "Confidence": -1}}
_UNTYPED = {"ValueDetection": {"Text": "9.50", "Confidence": 99}}
_TEXT_CONFIDENCE = {"Type": {"Text": "TOTAL"}, "ValueDetection": {"Text": "9.50", "Confidence": "99"}}


@pytest.mark.parametrize("content, message", [
    (json.dumps({"DocumentMetadata": {"Pages": 1}}),
     "{path}: ExpenseDocuments: missing: not an AnalyzeExpense response (top-level keys: ['DocumentMetadata'])"),
    (json.dumps(_summary(_TOTAL)),
     "{path}: ExpenseDocuments[0].SummaryFields[0].ValueDetection.Confidence: 150.5 is not in [0, 100]"),
    (json.dumps({"ExpenseDocuments": [{"LineItemGroups": [{"LineItems": [{"LineItemExpenseFields": [_ITEM]}]}]}]}),
     ("{path}: ExpenseDocuments[0].LineItemGroups[0].LineItems[0].LineItemExpenseFields[0]."
      "ValueDetection.Confidence: -1 is not in [0, 100]")),
    (json.dumps(_summary(_TEXT_CONFIDENCE)),
     '{path}: ExpenseDocuments[0].SummaryFields[0].ValueDetection.Confidence: expected a finite number, got "99"'),
    (json.dumps(_summary(_UNTYPED)), "{path}: ExpenseDocuments[0].SummaryFields[0].Type: missing"),
    (json.dumps({"ExpenseDocuments": {"SummaryFields": []}}),
     '{path}: ExpenseDocuments: expected a list, got {"SummaryFields": []}'),
    ('{"ExpenseDocuments": [\n  {"SummaryFields": [}\n]}',
     "{path}: line 2: invalid JSON: Expecting value at column 22"),
    ("[]", "{path}: expected an object, got []"),
])
def test_malformed_responses(tmp_path, content, message):
    path = tmp_path / "response.json"
    path.write_text(content, encoding="utf-8")
    records, _ = import_textract_expense(path)
    with pytest.raises(InputError) as caught:
        list(records)
    assert str(caught.value) == message.replace("{path}", str(path))


def test_predictions_do_not_apply(tmp_path):
    with pytest.raises(InputError) as caught:
        import_textract_expense(tmp_path, predictions=tmp_path / "gt.jsonl")
    assert str(caught.value) == (
        f"{tmp_path / 'gt.jsonl'}: --predictions does not apply: an AnalyzeExpense response is the prediction "
        "side. Import it alone, then join your ground truth (canonical JSONL) to it with "
        "`rpa-sim score GT.jsonl --predictions IMPORTED.jsonl`")


def test_missing_source_and_empty_folder(tmp_path):
    with pytest.raises(InputError, match="no such file or folder"):
        import_textract_expense(tmp_path / "absent.json")
    with pytest.raises(InputError, match=r"no \.json files \(expected AnalyzeExpense responses\)"):
        import_textract_expense(tmp_path)


def _field(type_text: str, value: str, confidence: float) -> dict:
    return {"Type": {"Text": type_text, "Confidence": 99.0},
            "ValueDetection": {"Text": value, "Confidence": confidence}, "PageNumber": 1}


def _response(folder: Path, response: dict) -> Path:
    path = folder / "response.json"
    path.write_text(json.dumps(response), encoding="utf-8")
    return path
