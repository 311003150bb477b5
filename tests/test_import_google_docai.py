"""The google-docai importer: the real Invoice Parser output, hand-made shards and pages, edge cases, bad input."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from rpa_sim.common.errors import InputError
from rpa_sim.records.importers.google_docai import import_google_docai
from rpa_sim.records.models import Evidence
from tests.conftest import run_cli, shared_path

PARENTS = "parent entities written as groups of their properties (their own text and confidence are not a field): 4"


def _invoice():
    return shared_path("data", "vendors", "google-docai", "invoice_parser_output.json")


def _invoice_truth():
    return shared_path("data", "vendors", "google-docai", "ground_truth.json")


def _import(path, **options):
    records, report = import_google_docai(path, **options)
    return list(records), report


def _write(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def test_the_real_invoice_parser_output():
    [record], report = _import(_invoice())
    assert record.id == "invoice_parser_output" and record.ground_truth is None
    entities = record.prediction.entities
    assert [(e.key, e.value) for e in entities] == [
        ("invoice_date", "01/01/1970"), ("due_date", "01/01/2025"), ("payment_terms", "6 month contract"),
        ("total_tax_amount", "$140.00"), ("net_amount", "2000.00"), ("receiver_name", "John Doe"),
        ("total_amount", "2140.00"), ("supplier_name", "Company ABC"),
        ("receiver_address", "222 Main Street\nAnytown, USA"), ("currency", "$"),
        ("supplier_address", "111 Main Street\nAnytown, USA"), ("receiver_email", "johndoe@email.com"),
        ("invoice_id", "NO. 001"), ("supplier_email", "user@companyabc.com"), ("freight_amount", "$600.00"),
        ("purchase_order", "001"), ("receiver_tax_id", "001"), ("supplier_iban", "50")]
    assert [e.confidence for e in entities] == [
        0.99414569, 0.99308187, 0.9391228, 0.93962258, 0.92609853, 0.92631412, 0.73842067, 0.67992091, 0.6292581,
        0.60170889, 0.56864369, 0.5, 0.38972196, 0.17637831, 0.014726358, 0.0044533103, 0.0016544734, 1.51808e-05]
    groups = record.prediction.groups
    assert [(g.name, [(e.key, e.value, e.confidence) for e in g.entities]) for g in groups] == [
        ("vat", [("tax_amount", "$140.00", 0.0085300114)]),
        ("line_item", [("description", "Tool A", 0.27429417), ("quantity", "500", 0.80564255),
                       ("unit_price", "1.00", 0.91168684), ("amount", "500.00", 0.91477633)]),
        ("line_item", [("description", "Service B", 0.18043423), ("quantity", "1", 0.63845867),
                       ("unit_price", "900.00", 0.91091561), ("amount", "900.00", 0.92630732)]),
        ("line_item", [("description", "Resource C", 0.17639633), ("quantity", "50", 0.77324623),
                       ("unit_price", "12.00", 0.90924191), ("amount", "600.00", 0.92716461)])]
    # every value has one box, in the 1758 x 2275 px page's pixels (normalized vertices times the dimension)
    boxes = [e.evidence for e in entities] + [e.evidence for g in groups for e in g.entities]
    assert len(boxes) == 31 and all(len(b) == 1 and b[0].page == 0 for b in boxes)
    assert entities[0].evidence == [Evidence(page=0, bbox=(1390.0, 322.0, 1544.0, 352.0))]
    assert groups[1].entities[0].evidence == [Evidence(page=0, bbox=(224.0, 1110.0, 302.0, 1138.0))]
    [page] = record.document.pages
    assert (page.width, page.height, len(page.words)) == (1758.0, 2275.0, 86)
    assert [(w.text, w.bbox) for w in page.words[:4]] == [
        ("Invoice", (1310.0, 220.0, 1534.0, 282.0)), ("DATE", (1288.0, 322.0, 1369.0, 350.0)),
        (":", (1374.0, 322.0, 1382.0, 350.0)), ("01/01/1970", (1390.0, 322.0, 1544.0, 352.0))]
    assert report.records == 1 and not report.unmapped
    assert PARENTS in report.notes


def test_normalized_values():
    [record], report = _import(_invoice(), value="normalized")
    assert [e.value for e in record.prediction.entities] == [
        "1970-01-01", "2025-01-01", "6 month contract", "140 USD", "2000", "John Doe", "2140", "Company ABC",
        "222 Main Street\nAnytown, USA", "USD", "111 Main Street\nAnytown, USA", "johndoe@email.com", "NO. 001",
        "user@companyabc.com", "600 USD", "001", "001", "50"]
    assert [[e.value for e in g.entities] for g in record.prediction.groups] == [
        ["140 USD"], ["Tool A", "500", "1", "500"], ["Service B", "1", "900", "900"], ["Resource C", "50", "12", "600"]]
    assert "entities without a normalizedValue.text, whose mentionText is the value: 14" in report.notes


def _score(capsys, tmp_path, *import_options):
    out = tmp_path / "invoice.jsonl"
    status, _, err = run_cli(capsys, "import", "google-docai", _invoice(), "--ground-truth", _invoice_truth(),
                             "--out", out, *import_options)
    assert status == 0, err
    status, scores, err = run_cli(capsys, "score", out, "--json")
    assert status == 0, err
    return json.loads(scores), err


def test_kieval_of_the_real_invoice(capsys, tmp_path):
    # The ground truth names its line items "line_items", Google "line_item": without a map no group pairs
    unmapped, _ = _score(capsys, tmp_path)
    assert (unmapped["entities_gt"], unmapped["entities_pred"], unmapped["tp"], unmapped["substitutions"],
            unmapped["additions"], unmapped["deletions"]) == (27, 31, 11, 3, 13, 17)
    assert unmapped["kieval_aligned"] == 0.25 and unmapped["groups_paired"] == 0
    fields = tmp_path / "fields.yaml"
    fields.write_text("line_item: line_items\n")
    mapped, _ = _score(capsys, tmp_path, "--fields", fields)
    # 11 header fields and the 12 line-item fields agree; invoice_id "NO. 001", total_tax_amount "$140.00" and
    # currency "$" are substitutions; the ground truth's flat vat is an addition; the 4 fields the document does
    # not hold and Google's vat group are deletions
    assert (mapped["tp"], mapped["substitutions"], mapped["additions"], mapped["deletions"]) == (23, 3, 1, 5)
    assert mapped["kieval_aligned"] == 23 / 32
    assert (mapped["groups_paired"], mapped["groups_tp"], mapped["group_aligned"]) == (3, 3, 0.75)
    assert mapped["entity_f1"] == 2 * 23 / (31 + 27)


def _page(number, text_range, box=(0.1, 0.1, 0.2, 0.2), *, width=1000, height=2000):
    x0, y0, x1, y1 = box
    start, end = text_range
    return {"pageNumber": number, "dimension": {"width": width, "height": height, "unit": "pixels"},
            "tokens": [{"layout": {"textAnchor": {"textSegments": [{"startIndex": str(start), "endIndex": str(end)}]},
                                   "boundingPoly": {"normalizedVertices": [{"x": x0, "y": y0}, {"x": x1, "y": y1}]}}}]}


def _entity(kind, mention, confidence=0.5, page=None, **more):
    ref = {"boundingPoly": {"normalizedVertices": [{"x": 0.5, "y": 0.5}, {"x": 0.6, "y": 0.75}]}}
    if page is not None:
        ref["page"] = page
    entity = {"type": kind, "mentionText": mention, "pageAnchor": {"pageRefs": [ref]}, **more}
    if confidence is not None:
        entity["confidence"] = confidence
    return entity


def test_a_sharded_document_is_merged_in_shard_order(tmp_path):
    folder = tmp_path / "invoice-7"
    # the second shard's file comes first by name: the order is shardIndex's
    _write(folder / "a.json", {"shardInfo": {"shardIndex": "1", "shardCount": "2", "textOffset": "12"},
                               "text": "Total $5.00\n", "pages": [_page(2, (6, 12), (0.7, 0.9, 0.8, 0.95))],
                               "entities": [_entity("total_amount", "$5.00", 0.8)]})
    _write(folder / "b.json", {"shardInfo": {"shardCount": "2"}, "text": "Invoice 001\n",
                               "pages": [_page(1, (0, 8))], "entities": [_entity("invoice_id", "001", 0.9)]})
    [record], report = _import(folder)
    assert record.id == "invoice-7"
    assert [(e.key, e.value, e.evidence) for e in record.prediction.entities] == [
        ("invoice_id", "001", [Evidence(page=0, bbox=(500.0, 1000.0, 600.0, 1500.0))]),
        # the second shard's page reference 0 is its own first page: the document's page index 1
        ("total_amount", "$5.00", [Evidence(page=1, bbox=(500.0, 1000.0, 600.0, 1500.0))])]
    assert [[(w.text, w.bbox) for w in p.words] for p in record.document.pages] == [
        [("Invoice", (100.0, 200.0, 200.0, 400.0))], [("$5.00", (700.0, 1800.0, 800.0, 1900.0))]]
    assert "documents merged from their shards in shardIndex order: 1" in report.notes
    [named], _ = _import(folder, document_id="INV-7")
    assert named.id == "INV-7"


def test_a_multi_page_document(tmp_path):
    document = {"text": "Page one\nPage two\n", "pages": [_page(1, (0, 4)), _page(2, (9, 13), width=500)],
                "entities": [_entity("title", "Page one"), _entity("footer", "Page two", page="1"),
                             _entity("total", "5", page=1)]}
    [record], _ = _import(_write(tmp_path / "doc.json", document))
    assert [(e.key, e.evidence[0].page, e.evidence[0].bbox) for e in record.prediction.entities] == [
        ("title", 0, (500.0, 1000.0, 600.0, 1500.0)), ("footer", 1, (250.0, 1000.0, 300.0, 1500.0)),
        ("total", 1, (250.0, 1000.0, 300.0, 1500.0))]
    assert [(p.width, [w.text for w in p.words]) for p in record.document.pages] == [(1000.0, ["Page"]),
                                                                                    (500.0, ["Page"])]


def test_a_missing_confidence_is_null(tmp_path):
    document = {"text": "x", "entities": [_entity("a", "x", confidence=None), _entity("b", "y", 0.0)]}
    [record], report = _import(_write(tmp_path / "doc.json", document))
    assert [(e.key, e.confidence) for e in record.prediction.entities] == [("a", None), ("b", 0.0)]
    # without pages there is no page size: boxes on a virtual 1000 px page, and no document
    assert record.prediction.entities[0].evidence == [Evidence(page=0, bbox=(500.0, 500.0, 600.0, 750.0))]
    assert record.document is None
    assert any(note.startswith("entities without a confidence, written with a missing confidence (null")
               and note.endswith(": 1") for note in report.notes)
    assert ("evidence boxes on a virtual 1000 x 1000 px page (the page has no dimension and no image size): 2"
            in report.notes)


def test_an_empty_document(tmp_path):
    [record], report = _import(_write(tmp_path / "empty.json", {"text": "", "pages": []}))
    assert record.prediction.entities == [] and record.prediction.groups == [] and record.document is None
    assert report.records == 1 and not report.unmapped
    assert "no OCR tokens in the pages: no document, grounding stays unknown" in report.notes


def test_nested_properties_and_values_missing(tmp_path):
    nested = _entity("line_item/detail", "d", properties=[_entity("line_item/detail/code", "c")])
    document = {"text": "x", "entities": [
        _entity("line_item", "row", 1, properties=[_entity("line_item/amount", "5.00", 0.7), nested]),
        _entity("vat", "v", 1, properties=[nested]),
        {"type": "currency", "normalizedValue": {"text": "USD"}, "confidence": 0.6},
        {"type": "nothing", "confidence": 0.6}]}
    [record], report = _import(_write(tmp_path / "doc.json", document))
    assert [(g.name, [(e.key, e.value) for e in g.entities]) for g in record.prediction.groups] == [
        ("line_item", [("amount", "5.00")])]
    assert [(e.key, e.value) for e in record.prediction.entities] == [("currency", "USD")]
    assert report.unmapped == Counter({
        "properties with properties of their own (canonical groups do not nest)": 2,
        "parent entities with no property left (no group written)": 1,
        "entities without a mentionText or normalizedValue.text": 1})
    assert "entities without a mentionText, whose normalizedValue.text is the value: 1" in report.notes


def test_a_process_response_holds_the_document(tmp_path):
    document = {"text": "x", "entities": [_entity("a", "x")]}
    wrapped = _import(_write(tmp_path / "doc.json", {"document": document, "humanReviewStatus": {}}))[0]
    assert wrapped == _import(_write(tmp_path / "doc.json", document))[0]


def test_ground_truth_of_several_documents_and_the_field_map(tmp_path):
    document = {"text": "x", "entities": [_entity("total_amount", "5.00", 0.9),
                                          _entity("line_item", "r", 1, properties=[_entity("line_item/amount", "5")])]}
    path = _write(tmp_path / "doc.json", document)
    truth = _write(tmp_path / "truth.json", {"doc": {"total": "5.00", "line_items": [{"amount": "5"}]},
                                            "other": {"total": "1"}})
    fields = tmp_path / "fields.yaml"
    fields.write_text("total_amount: total\nline_item: line_items\n")
    [record], report = _import(path, ground_truth=truth, fields=fields)
    assert [(e.key, e.value) for e in record.ground_truth.entities] == [("total", "5.00")]
    assert [(g.name, [(e.key, e.value) for e in g.entities]) for g in record.ground_truth.groups] == [
        ("line_items", [("amount", "5")])]
    assert [e.key for e in record.prediction.entities] == ["total"]
    assert [(g.name, [e.key for e in g.entities]) for g in record.prediction.groups] == [("line_items", ["amount"])]
    assert report.unmapped == Counter({
        "ground-truth documents with no imported document of that id": 1,
        f"fields or groups that --fields {fields} does not name, kept under the service's name: "
        "line_item/amount": 1})


def _bad(tmp_path, files):
    for name, data in files.items():
        _write(tmp_path / "src" / name, data)
    source = tmp_path / "src" if len(files) > 1 else tmp_path / "src" / next(iter(files))
    with pytest.raises(InputError) as caught:
        _import(source)
    return str(caught.value).replace(str(tmp_path / "src") + "/", "").replace(str(tmp_path) + "/", "")


@pytest.mark.parametrize(("files", "message"), [
    ({"a.json": {"shardInfo": {"shardIndex": "0", "shardCount": "3"}, "text": ""},
      "b.json": {"shardInfo": {"shardIndex": "1", "shardCount": "3"}, "text": ""}},
     "src: shard 2 of the 3 (shardIndex 0 to 2) is missing: 2 given"),
    ({"a.json": {"shardInfo": {"shardIndex": "1", "shardCount": "2"}, "text": ""},
      "b.json": {"shardInfo": {"shardIndex": "1", "shardCount": "2"}, "text": ""}},
     "src: shard 1 is given twice (a.json, b.json): a folder holds the shards of one document, each once"),
    ({"a.json": {"shardInfo": {"shardIndex": "0", "shardCount": "2"}, "text": ""}},
     "a.json: shard 1 of the 2 (shardIndex 0 to 1) is missing: 1 given"),
    ({"a.json": {"shardInfo": {"shardCount": "2"}, "text": "ab"},
      "b.json": {"shardInfo": {"shardIndex": "1", "shardCount": "2", "textOffset": "3"}, "text": ""}},
     "b.json: shardInfo.textOffset: shard 1 starts at character 3 of the text, but the shards before it hold 2"),
    ({"a.json": {"shardInfo": {"shardCount": "2"}, "text": ""},
      "b.json": {"shardInfo": {"shardIndex": "1", "shardCount": "3"}, "text": ""}},
     "b.json: shardInfo.shardCount: 3, but a.json has 2: the shards of two documents"),
    ({"a.json": {"shardInfo": {"shardCount": "2"}, "text": ""},
      "b.json": {"shardInfo": {"shardIndex": "2", "shardCount": "2"}, "text": ""}},
     "b.json: shardInfo.shardIndex: 2, but the document has shards 0 to 1"),
    ({"a.json": {"shardInfo": {"shardCount": "2"}, "text": ""}, "b.json": {"text": ""}},
     "src: holds both whole Documents (b.json) and shards (a.json, one of 2): give each document's shards a folder"),
    ({"a.json": {"rows": []}}, "a.json: not a Document AI Document"),
    ({"a.json": {"text": "ab", "pages": [_page(1, (0, 5))]}},
     "a.json: pages[0].tokens[0].layout.textAnchor.textSegments[0]: [0, 5) is not within the text's 2 characters"),
    ({"a.json": {"text": "ab", "pages": [_page(1, (0, 1))], "entities": [_entity("a", "b", page=1)]}},
     "a.json: entities[0].pageAnchor.pageRefs[0].page: page 1, but the Document has pages 0 to 0"),
    ({"a.json": {"text": "ab", "entities": [_entity("a", "b", 1.5)]}}, "a.json: entities[0].confidence: 1.5 is not"),
    ({"a.json": {"text": "ab", "entities": [{"mentionText": "b"}]}}, "a.json: entities[0].type: missing"),
    ({"a.json": {"text": "ab", "pages": [{"tokens": [{}]}]}},
     "a.json: pages[0].dimension: missing: the page has tokens but no size"),
    ({"a.json": {"text": "ab", "pages": [_page(1, (0, 1), (0.1, 0.1, 1e308, 0.2))]}},
     "a.json: pages[0].tokens[0].layout.boundingPoly.normalizedVertices: coordinates too large: the box is beyond"),
])
def test_bad_documents_name_the_file_and_field(tmp_path, files, message):
    assert _bad(tmp_path, files).startswith(message)


def test_the_command_line(capsys, tmp_path):
    out = tmp_path / "out.jsonl"
    status, _, err = run_cli(capsys, "import", "google-docai", _invoice(), "--id", "invoice-1", "--value",
                             "normalized", "--out", out)
    assert status == 0, err
    record = json.loads(out.read_text())
    assert record["id"] == "invoice-1" and record["prediction"]["entities"][0]["value"] == "1970-01-01"
    status, _, err = run_cli(capsys, "import", "google-docai", _invoice(), "--out", out, "--ground-truth", out)
    assert status == 2 and err.startswith("rpa-sim: error: ")
