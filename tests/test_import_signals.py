"""The services' other scores per field become named signals: Azure's and Google's OCR word confidences under a
field's text, as the signal ``ocr`` (the lowest), beside the field's own confidence."""

from __future__ import annotations

import json

import pytest

from rpa_sim.common.errors import InputError
from rpa_sim.records.importers.azure_di import import_azure_di
from rpa_sim.records.importers.google_docai import import_google_docai
from tests.conftest import shared_path


def _entities(records):
    return {entity.key: entity for record in records for entity in
            [*record.prediction.entities, *(e for group in record.prediction.groups for e in group.entities)]}


def _azure_v3(tmp_path, word_confidences):
    content = "TOTAL 12.50 DATE 2024-01-02"
    words = [{"content": text, "polygon": [0, 0, 1, 0, 1, 1, 0, 1], "span": {"offset": offset, "length": len(text)},
              **({} if confidence is None else {"confidence": confidence})}
             for (text, offset), confidence in zip((("TOTAL", 0), ("12.50", 6), ("DATE", 12), ("2024-01-02", 17)),
                                                   word_confidences)]
    result = {"status": "succeeded", "analyzeResult": {"apiVersion": "2023-07-31", "content": content,
              "pages": [{"pageNumber": 1, "width": 10, "height": 10, "unit": "pixel", "words": words}],
              "documents": [{"docType": "receipt", "fields": {
                  "Total": {"type": "number", "content": "TOTAL 12.50", "confidence": 0.9,
                            "spans": [{"offset": 0, "length": 11}]},
                  "Date": {"type": "date", "content": "2024-01-02", "confidence": 0.8,
                           "spans": [{"offset": 17, "length": 10}]},
                  "Kind": {"type": "string", "valueString": "Itemized", "confidence": 0.99}}}]}}
    path = tmp_path / "result.json"
    path.write_text(json.dumps(result))
    return path


def test_azure_v3_a_fields_ocr_signal_is_the_lowest_confidence_of_its_words(tmp_path):
    records, report = import_azure_di(_azure_v3(tmp_path, [0.99, 0.42, 0.97, 0.95]))
    found = _entities(list(records))
    assert (found["Total"].confidence, found["Total"].signals) == (0.9, {"ocr": 0.42})
    assert found["Date"].signals == {"ocr": 0.95}
    assert found["Kind"].signals is None  # no text, no words: no signal, never invented
    assert "fields with the signal ocr, the lowest confidence of the OCR words of their text: 2" in report.notes


def test_azure_words_without_a_confidence_give_no_signal_and_a_bad_one_is_an_error(tmp_path):
    records, _ = import_azure_di(_azure_v3(tmp_path, [None, None, 0.97, 0.95]))
    found = _entities(list(records))
    assert found["Total"].signals is None and found["Date"].signals == {"ocr": 0.95}
    with pytest.raises(InputError, match=r"analyzeResult\.pages\[0\]\.words\[1\]\.confidence: 1\.5 is not in \[0, 1\]"):
        list(import_azure_di(_azure_v3(tmp_path, [0.99, 1.5, 0.97, 0.95]))[0])


def test_azure_v2_1_elements_name_the_words(tmp_path):
    words = [{"text": text, "boundingBox": [0, 0, 1, 0, 1, 1, 0, 1], "confidence": confidence}
             for text, confidence in (("TOTAL", 0.98), ("12.50", 0.61))]
    result = {"status": "succeeded", "analyzeResult": {"version": "2.1.0", "readResults": [
        {"page": 1, "width": 10, "height": 10, "unit": "pixel", "lines": [{"text": "TOTAL 12.50", "words": words}]}],
        "documentResults": [{"docType": "prebuilt:receipt", "fields": {"Total": {
            "type": "number", "valueNumber": 12.5, "text": "12.50", "confidence": 0.93, "page": 1,
            "boundingBox": [0, 0, 1, 0, 1, 1, 0, 1], "elements": ["#/readResults/0/lines/0/words/1"]}}}]}}
    path = tmp_path / "v21.json"
    path.write_text(json.dumps(result))
    found = _entities(list(import_azure_di(path)[0]))
    assert (found["Total"].confidence, found["Total"].signals) == (0.93, {"ocr": 0.61})


def test_google_an_entitys_ocr_signal_is_the_lowest_confidence_of_its_tokens():
    records, report = import_google_docai(shared_path("data", "vendors", "google-docai", "invoice_parser_output.json"))
    records = list(records)
    data = json.loads(shared_path("data", "vendors", "google-docai", "invoice_parser_output.json").read_text())
    tokens = [(int(segment.get("startIndex", 0)), int(segment["endIndex"]), token["layout"]["confidence"])
              for page in data["pages"] for token in page["tokens"]
              for segment in token["layout"]["textAnchor"]["textSegments"]]
    due = next(entity for entity in data["entities"] if entity["type"] == "due_date")
    spans = [(int(s.get("startIndex", 0)), int(s["endIndex"])) for s in due["textAnchor"]["textSegments"]]
    expected = min(confidence for start, end, confidence in tokens for s, e in spans if start < e and end > s)
    assert _entities(records)["due_date"].signals == {"ocr": expected}
    assert _entities(records)["due_date"].confidence == due["confidence"]
    assert any(note.startswith("entities with the signal ocr") for note in report.notes)
