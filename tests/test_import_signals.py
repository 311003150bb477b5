"""The services' other scores per field become named signals: Azure's and Google's OCR word confidences under a
field's text, as the signal ``ocr`` (the lowest), beside the field's own confidence."""

from __future__ import annotations

import json
import re

import pytest

from rpa_sim.common.errors import InputError
from rpa_sim.records.importers.azure_di import import_azure_di
from rpa_sim.records.importers.google_docai import import_google_docai
from rpa_sim.records.importers.mapping import import_mapping
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


# -- a mapping file maps any JSON path to a signal -----------------------------------------------------------------


def _mapped(tmp_path, signals_yaml, fields):
    source = tmp_path / "out.jsonl"
    source.write_text(json.dumps({"doc_id": "r-1", "fields": fields}) + "\n")
    mapping = tmp_path / "map.yaml"
    mapping.write_text("id: $.doc_id\nfields: $.fields.*\nvalue: '@.value'\nconfidence: '@.score'\n"
                       f"signals:\n{signals_yaml}")
    return source, mapping


def test_a_mapping_reads_signals_from_any_path_each_on_its_scale(tmp_path):
    source, mapping = _mapped(tmp_path, "  agreement: '@.votes.share'\n  ocr: {path: '@.ocr', scale: 100}\n"
                                        "  second_call: '$.meta.second'\n",
                              {"total": {"value": "12.00", "score": 0.93, "votes": {"share": 0.8}, "ocr": 97},
                               "date": {"value": "1.1", "score": 0.5, "votes": {"share": None}, "ocr": 42}})
    text = source.read_text().replace('"fields"', '"meta": {"second": 0.25}, "fields"')
    source.write_text(text)
    records, report = import_mapping(source, mapping=mapping)
    found = _entities(list(records))
    assert found["total"].signals == {"agreement": 0.8, "ocr": 0.97, "second_call": 0.25}
    assert found["date"].signals == {"agreement": None, "ocr": 0.42, "second_call": 0.25}
    assert "predicted fields without the signal agreement (missing): 1" in report.notes


@pytest.mark.parametrize(("signals_yaml", "fields", "message"), [
    ("  agreement: '@.agrement'\n", {"total": {"value": "1", "score": 0.9, "agreement": 0.5}},
     "signals.agreement '@.agrement' matches nothing in the first record"),
    ("  agreement: '@.agreement'\n", {"total": {"value": "1", "score": 0.9, "agreement": 80}},
     "80 is not in [0, 1] (signal 'agreement'; give it a scale"),
    ("  fused: '@.agreement'\n", {"total": {"value": "1", "score": 0.9, "agreement": 0.8}},
     "a signal may not be named 'fused'"),
])
def test_bad_mapped_signals_are_one_line(tmp_path, signals_yaml, fields, message):
    source, mapping = _mapped(tmp_path, signals_yaml, fields)
    with pytest.raises(InputError, match=re.escape(message)) as error:
        records, _ = import_mapping(source, mapping=mapping)
        list(records)
    assert "\n" not in str(error.value)
