"""The DocILE importer on the real sample invoice, splits, canonical predictions and malformed input."""

from __future__ import annotations

import gzip
import json
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rpa_sim.common.errors import InputError
from rpa_sim.records.importers.docile import import_docile
from rpa_sim.records.models import KIERecord
from rpa_sim.records.readers import read_records, write_records
from tests.conftest import shared_path

DOC = "516f2d61ea404b30a9192a72"


def sample() -> Path:
    return shared_path("data", "docile")


def one(source: Path, **options: Any) -> KIERecord:
    records, _ = import_docile(source, **options)
    (record,) = records
    return record


def error_of(source: Path, **options: Any) -> str:
    with pytest.raises(InputError) as info:
        records, _ = import_docile(source, **options)
        list(records)
    return str(info.value)


def pairs(entities) -> list[tuple[str, str]]:
    return [(e.key, e.value) for e in entities]


@pytest.fixture
def copy(tmp_path) -> Callable[..., Path]:
    """A copy of the sample (annotations, OCR, split) whose annotation or OCR ``change`` edits."""
    def make(annotation: Callable[[dict], Any] | None = None, ocr: Callable[[dict], Any] | None = None) -> Path:
        folder = tmp_path / "docile"
        shutil.copytree(sample(), folder, ignore=shutil.ignore_patterns("pdfs"), dirs_exist_ok=True)
        for name, change in (("annotations", annotation), ("ocr", ocr)):
            if change is not None:
                path = folder / name / f"{DOC}.json"
                data = json.loads(path.read_text(encoding="utf-8"))
                change(data)
                path.write_text(json.dumps(data), encoding="utf-8")
        return folder
    return make


# --------------------------------------------------------------------------- the real sample


def test_sample_key_fields_by_hand():
    records, report = import_docile(sample())
    assert report.records == 0
    (record,) = records
    assert report.records == 1 and record.id == DOC and record.prediction is None
    assert pairs(record.ground_truth.entities) == [
        ("document_id", "99999999"),
        ("date_issue", "1 2 02"),
        ("date_due", "1/02/02"),
        ("vendor_name", "PHILIP MORRIS INCORPORATED"),
        ("customer_id", "99999"),
        ("customer_billing_name", "Philip Morris Valued Customer"),
        ("customer_billing_address", "Philip Morris Valued Customer\n999 Ninety Ninth Street\nAnywhere, USA, 99999"),
        ("amount_total_gross", "4,759.20"),
        ("amount_due", "4,585.49"),
        ("payment_reference", "99999999"),
        ("payment_terms", "due immediately"),
    ]
    assert report.unmapped == Counter({"line_item_headers (column titles, not part of the LIR task)": 7})
    assert any("ground truth only" in note for note in report.notes)


def test_sample_line_items_by_hand():
    groups = one(sample()).ground_truth.groups
    # Eight line items: four products, each followed by its "Less Comp Cigs" discount line.
    assert [g.name for g in groups] == ["line_item"] * 8
    assert [len(g.entities) for g in groups] == [7, 3, 7, 3, 7, 3, 7, 3]
    assert pairs(groups[0].entities) == [
        ("line_item_quantity", "4"), ("line_item_code", "42630"),
        ("line_item_description", "MARL FF REG LS HP 6M PROM"), ("line_item_quantity", "6M"),
        ("line_item_quantity", "24,000"), ("line_item_unit_price_gross", "132.20"),
        ("line_item_amount_gross", "3,172.80")]
    assert pairs(groups[1].entities) == [("line_item_code", "1XXXX"), ("line_item_description", "Less Comp Cigs"),
                                         ("line_item_amount_gross", "1,269.12-")]
    assert pairs(groups[7].entities)[-1] == ("line_item_amount_gross", "317.28-")


def test_sample_page_and_word_boxes_by_hand():
    page = one(sample()).document.pages[0]
    # page_sizes_at_200dpi is [1692, 2245] (width, height).
    assert (page.width, page.height, len(page.words)) == (1692, 2245, 256)
    # "PHILIP": geometry [[0.353515625, 0.1171875], [0.4931640625, 0.1484375]]; 0.353515625 * 1692 = 598.1484375,
    # 0.1171875 * 2245 = 263.0859375, 0.4931640625 * 1692 = 834.43359375, 0.1484375 * 2245 = 333.2421875.
    first = page.words[0]
    assert (first.text, first.segment) == ("PHILIP", 0)
    assert first.bbox == (598.1484375, 263.0859375, 834.43359375, 333.2421875)
    # The address is three docTR lines of block 2: one segment, so it can be located whole.
    start = [w.text for w in page.words].index("Philip")
    assert [(w.text, w.segment) for w in page.words[start:start + 4]] == [
        ("Philip", 2), ("Morris", 2), ("Valued", 2), ("Customer", 2)]
    assert {w.segment for w in page.words[start:start + 11]} == {2}


def test_line_segments_number_the_lines_of_a_page():
    words = one(sample(), segment="line").document.pages[0].words
    # Block 0 has three lines: PHILIP MORRIS / INCORPORATED / BENSON. & HEDGES.
    assert [(w.text, w.segment) for w in words[:6]] == [
        ("PHILIP", 0), ("MORRIS", 0), ("INCORPORATED", 1), ("BENSON.", 2), ("&", 2), ("HEDGES", 2)]
    assert words[-1].segment == 94  # 95 lines on the page
    with pytest.raises(ValueError, match="segment must be 'block' or 'line', got 'word'"):
        import_docile(sample(), segment="word")  # type: ignore[arg-type]


def test_annotation_boxes_are_relative_like_the_ocr():
    # The annotated field boxes (not imported) are fractions of the page too: scaled the
    # same way, document_id's box lies on the OCR word "99999999".
    annotation = json.loads((sample() / "annotations" / f"{DOC}.json").read_text(encoding="utf-8"))
    boxes = [f["bbox"] for key in ("field_extractions", "line_item_extractions", "line_item_headers")
             for f in annotation[key]]
    assert all(0 <= v <= 1 for box in boxes for v in box)
    x0, y0, x1, y1 = annotation["field_extractions"][0]["bbox"]
    field = (x0 * 1692, y0 * 2245, x1 * 1692, y1 * 2245)
    (word,) = [w for w in one(sample()).document.pages[0].words
               if w.bbox[0] < field[2] and field[0] < w.bbox[2] and w.bbox[1] < field[3] and field[1] < w.bbox[3]]
    assert word.text == "99999999"
    # docTR's "dimensions" are (height, width) of its own rendering: the same aspect ratio.
    ocr = json.loads((sample() / "ocr" / f"{DOC}.json").read_text(encoding="utf-8"))
    height, width = ocr["pages"][0]["dimensions"]
    assert width / height == pytest.approx(1692 / 2245, rel=1e-4)


def test_round_trip_and_determinism(tmp_path):
    (record,) = import_docile(sample())[0]
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_records([record], first)
    write_records(import_docile(sample())[0], second)
    assert first.read_bytes() == second.read_bytes()
    predictions = tmp_path / "pred.jsonl"
    predictions.write_text(json.dumps({"id": DOC, "prediction": {}}) + "\n")
    (back,) = read_records(first, predictions=predictions)
    assert back.model_copy(update={"prediction": None}) == record


# --------------------------------------------------------------------------- splits


def test_split_file_as_source_and_folder_without_split(copy):
    folder = copy()
    assert one(folder / "dev.json").id == DOC
    (folder / "dev.json").unlink()
    assert one(folder).id == DOC  # every annotation


def test_split_errors(copy):
    folder = copy()
    (folder / "val.json").write_text(json.dumps(["nope"]))
    assert error_of(folder) == (f"{folder}: several split files (dev.json, val.json): give the one to import "
                                f"as SRC, e.g. {folder / 'dev.json'}")
    assert error_of(folder / "val.json") == (
        f"{folder / 'annotations' / 'nope.json'}: no annotation file for document 'nope' of the split")
    (folder / "val.json").write_text(json.dumps({"docs": [DOC]}))
    assert error_of(folder / "val.json") == (
        f'{folder / "val.json"}: expected a list of document ids, got {{"docs": ["{DOC}"]}}')
    (folder / "val.json").write_text(json.dumps([DOC, DOC]))
    assert error_of(folder / "val.json") == f"{folder / 'val.json'}: document '{DOC}' is listed twice"
    assert error_of(folder / "missing") == f"{folder / 'missing'}: no such file or folder"
    shutil.rmtree(folder / "annotations")
    assert error_of(folder / "dev.json") == (
        f"{folder / 'annotations'}: expected a folder annotations/ beside the split files")


# --------------------------------------------------------------------------- predictions


def test_canonical_predictions_joined_by_id(tmp_path):
    predictions = tmp_path / "pred.jsonl.gz"
    lines = [{"id": DOC, "prediction": {"entities": [{"key": "amount_due", "value": "4,585.49", "confidence": 0.8}],
                                        "groups": [[{"key": "line_item_code", "value": "42630", "confidence": 0.5}]]}},
             {"id": "other", "prediction": {}}]
    predictions.write_bytes(gzip.compress("".join(json.dumps(line) + "\n" for line in lines).encode()))
    records, report = import_docile(sample(), predictions=predictions)
    (record,) = records
    assert [(e.key, e.value, e.confidence) for e in record.prediction.entities] == [("amount_due", "4,585.49", 0.8)]
    assert record.prediction.groups[0].entities[0].value == "42630"
    assert report.unmapped["predictions without a document of the split"] == 1
    assert not any("ground truth only" in note for note in report.notes)


def test_document_without_prediction_gets_an_empty_one(tmp_path):
    predictions = tmp_path / "pred.jsonl"
    predictions.write_text(json.dumps({"id": "other", "prediction": {}}) + "\n")
    records, report = import_docile(sample(), predictions=predictions)
    (record,) = records
    assert record.prediction is not None and not record.prediction.entities
    assert any(note == f"1 document has no prediction (scored as predicting nothing): {DOC}" for note in report.notes)


@pytest.mark.parametrize(("line", "message"), [
    ('{"id": "a", "prediction": {"entities": [{"key": "k", "value": "v", "confidence": 1.7}]}}',
     "line 1 (id a): prediction.entities[0].confidence: Input should be less than or equal to 1, got 1.7"),
    ('{"id": "a", "prediction": {"groups": [[{"key": "k", "value": 3, "confidence": 1}]]}}',
     "line 1 (id a): prediction.groups[0][0].value: Input should be a valid string, got 3"),
    ('{"id": "a"}', "line 1 (id a): prediction: missing"),
    ('{"id": 7, "prediction": {}}', 'line 1: expected a record with a string id, got {"id": 7, "prediction": {}}'),
    ('{"id": "a", ', "line 1: invalid JSON: Expecting property name enclosed in double quotes at column 13"),
])
def test_bad_predictions(tmp_path, line, message):
    predictions = tmp_path / "pred.jsonl"
    predictions.write_text(line + "\n")
    assert error_of(sample(), predictions=predictions) == f"{predictions}: {message}"


def test_duplicate_and_missing_prediction_files(tmp_path):
    predictions = tmp_path / "pred.jsonl"
    predictions.write_text('{"id": "a", "prediction": {}}\n\n{"id": "a", "prediction": {}}\n')
    assert error_of(sample(), predictions=predictions) == f"{predictions}: line 3 (id a): duplicate id"
    assert error_of(sample(), predictions=tmp_path / "none.jsonl") == f"{tmp_path / 'none.jsonl'}: no such file"


# --------------------------------------------------------------------------- malformed input


def test_invalid_json_annotation(copy):
    folder = copy()
    path = folder / "annotations" / f"{DOC}.json"
    path.write_text('{"field_extractions": [\n  {"bbox": [0, 0, 1, 1],}', encoding="utf-8")
    assert error_of(folder) == (
        f"{path}: line 2: invalid JSON: Expecting property name enclosed in double quotes at column 25")


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d.pop("field_extractions"), "field_extractions: missing"),
    (lambda d: d.__setitem__("line_item_extractions", {}), "line_item_extractions: expected a list, got {}"),
    (lambda d: d["field_extractions"][2].__setitem__("text", 102),
     "field_extractions[2].text: expected a string, got 102"),
    (lambda d: d["field_extractions"][0].pop("fieldtype"), "field_extractions[0].fieldtype: missing"),
    (lambda d: d["line_item_extractions"][4].__setitem__("line_item_id", "2"),
     'line_item_extractions[4].line_item_id: expected an integer, got "2"'),
    (lambda d: d["metadata"].__setitem__("page_sizes_at_200dpi", [[1692, 0]]),
     "metadata.page_sizes_at_200dpi[0]: expected [width, height] in pixels, got [1692, 0]"),
    (lambda d: d["metadata"].pop("page_sizes_at_200dpi"), "metadata.page_sizes_at_200dpi: missing"),
])
def test_bad_annotations(copy, change, message):
    folder = copy(annotation=change)
    assert error_of(folder) == f"{folder / 'annotations' / f'{DOC}.json'}: {message}"


def test_field_without_text_is_counted_not_imported(copy):
    folder = copy(annotation=lambda d: d["field_extractions"][0].pop("text"))
    records, report = import_docile(folder)
    (record,) = records
    assert len(record.ground_truth.entities) == 10
    assert report.unmapped["field_extractions without text"] == 1


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d["pages"].append(d["pages"][0]), "pages: 2 pages, but the annotation gives 1 page sizes"),
    (lambda d: d["pages"][0]["blocks"][1]["lines"][0]["words"][0].__setitem__("geometry", [[0.5, 0.2], [0.4, 0.3]]),
     ("pages[0].blocks[1].lines[0].words[0].geometry: expected [[x0, y0], [x1, y1]] with x0 <= x1, y0 <= y1, "
      "got [[0.5, 0.2], [0.4, 0.3]]")),
    (lambda d: d["pages"][0]["blocks"][3].pop("lines"),
     ("pages[0].blocks[3]: expected an object with a list 'lines', "
      "got {\"geometry\": [[0.6552734375, 0.18359375], [0.890625, 0.2734375]], \"artefacts\": [...(82 characters)")),
])
def test_bad_ocr(copy, change, message):
    folder = copy(ocr=change)
    assert error_of(folder) == f"{folder / 'ocr' / f'{DOC}.json'}: {message}"


def test_missing_ocr_gives_pages_without_words(copy):
    folder = copy()
    (folder / "ocr" / f"{DOC}.json").unlink()
    records, report = import_docile(folder)
    (record,) = records
    assert [(p.width, p.height, p.words) for p in record.document.pages] == [(1692, 2245, [])]
    assert report.unmapped["documents without an OCR file (pages have no words)"] == 1


def test_fields_and_line_items_on_several_pages_are_all_kept(copy):
    def two_pages(annotation: dict) -> None:
        annotation["metadata"]["page_count"] = 2
        annotation["metadata"]["page_sizes_at_200dpi"].append([1000, 500])
        annotation["field_extractions"].append({"bbox": [0, 0, 0.1, 0.1], "fieldtype": "amount_due", "page": 1,
                                                "text": "4,585.49"})
        # Line item 8 goes on over the page break.
        annotation["line_item_extractions"].append({"bbox": [0, 0, 0.1, 0.1], "fieldtype": "line_item_code",
                                                    "line_item_id": 8, "page": 1, "text": "1XXXXX"})
    folder = copy(annotation=two_pages, ocr=lambda d: d["pages"].append(d["pages"][0]))
    record = one(folder)
    assert pairs(record.ground_truth.entities).count(("amount_due", "4,585.49")) == 2
    assert len(record.ground_truth.groups) == 8
    assert pairs(record.ground_truth.groups[7].entities)[-1] == ("line_item_code", "1XXXXX")
    first, second = record.document.pages
    assert (second.width, second.height, len(second.words)) == (1000, 500, 256)
    # The same relative geometry, scaled by each page's own size.
    assert second.words[0].bbox == (353.515625, 58.59375, 493.1640625, 74.21875)
    assert first.words[0].bbox == (598.1484375, 263.0859375, 834.43359375, 333.2421875)
