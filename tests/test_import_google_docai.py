"""The google-docai importer: the real Invoice Parser output, hand-made shards and pages, edge cases, bad input."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from rpa_sim.common.errors import InputError, UsageError
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


# --------------------------------------------------------------------------- snake_case (the Python client)


def _vendor(name):
    return shared_path("data", "vendors", "google-docai", name)


def _snake(data, type_key="type_"):
    """A camelCase Document as the Python client writes it: every key snake_case, ``type`` as ``type_key``."""
    if isinstance(data, list):
        return [_snake(item, type_key) for item in data]
    if not isinstance(data, dict):
        return data
    renamed = {}
    for key, value in data.items():
        snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in key)
        renamed[type_key if snake == "type" else snake] = _snake(value, type_key)
    return renamed


def _values(record):
    prediction = record.prediction
    return ([(e.key, e.value, e.confidence, e.evidence) for e in prediction.entities],
            [(g.name, [(e.key, e.value, e.confidence, e.evidence) for e in g.entities]) for g in prediction.groups])


@pytest.mark.parametrize("type_key", ["type_", "type"])
def test_the_invoice_in_snake_case_imports_as_in_camel_case(tmp_path, type_key):
    # proto-plus's to_dict writes type_, MessageToDict(preserving_proto_field_name=True) type: both read alike
    [camel], _ = _import(_invoice())
    snake_path = _write(tmp_path / "invoice_parser_output.json", _snake(json.loads(_invoice().read_text()), type_key))
    [snake], report = _import(snake_path)
    assert _values(snake) == _values(camel) and snake.document == camel.document
    assert "files with snake_case keys (the Python client's to_dict): 1" in report.notes and not report.unmapped


def test_the_real_snake_case_documents():
    [receipt], report = _import(_vendor("expense_receipt_enrichments_snake.json"))
    entities, groups = _values(receipt)
    assert [(key, value, confidence) for key, value, confidence, _ in entities[:4]] == [
        ("currency", "€", 0.84975004), ("receipt_date", "11/12/2022", 0.8456596), ("total_amount", "9,50", 0.81225735),
        ("purchase_time", "12h42\n", 1.0)]
    assert [(name, [(k, v, c) for k, v, c, _ in members]) for name, members in groups] == [
        ("line_item", [("description", "Entrée plein tarif", 0.3110357), ("amount", "6,00", 0.9703629)]),
        ("line_item", [("description", "Entrée tarif réduit", 0.38252917), ("amount", "3,50", 0.89714617)])]
    # the currency's box: its normalized vertices times the page's 1080 x 423 px dimension
    assert entities[0][3] == [Evidence(page=0, bbox=(686.0, 244.0, 696.0, 258.0))]
    assert [(p.width, p.height, len(p.words)) for p in receipt.document.pages] == [(1080.0, 423.0, 63)]
    assert "entities without a mentionText, whose normalizedValue.text is the value: 3" in report.notes
    [packing], _ = _import(_vendor("invoice_packing_list_snake.json"))
    assert packing.prediction.entities[0].value == "12 Rue de Londres\n75009 Paris\nFRANCE"
    # two pages; page references written "1" (an int64 as a string) are the second page
    [energy], _ = _import(_vendor("energy_invoice_snake.json"))
    values = [e for e in energy.prediction.entities] + [e for g in energy.prediction.groups for e in g.entities]
    assert (len(energy.prediction.entities), len(energy.prediction.groups), len(values)) == (18, 10, 36)
    assert Counter(b.page for e in values for b in e.evidence or []) == {0: 15, 1: 20}
    assert [len(p.words) for p in energy.document.pages] == [331, 328]


# --------------------------------------------------------------------------- a document none of whose values map


def test_a_document_none_of_whose_values_can_be_read_is_an_error(tmp_path, capsys):
    # keys in a spelling no reader knows: every value is lost, which must not read as "nothing found"
    document = {"text": "ab", "entities": [{"type": "total", "mentionTxt": "12"}, {"type": "tax", "mention": "1"}]}
    path = _write(tmp_path / "docs" / "b.json", document)
    _write(tmp_path / "docs" / "a.json", {"text": "ab", "entities": [_entity("total", "9", 0.9)]})
    with pytest.raises(InputError, match=r"b\.json: id b: none of its values could be mapped \(2 entities without a "
                                         r"mentionText or normalizedValue\.text\)"):
        _import(path)
    [kept], report = _import(tmp_path / "docs", skip_invalid=True)
    assert kept.id == "a" and report.records == 1 and not report.unmapped  # the skipped document's counts go too
    [skipped] = report.skipped
    assert str(skipped).startswith(f"{path}: id b: none of its values could be mapped")
    status, _, err = run_cli(capsys, "import", "google-docai", tmp_path / "docs", "--skip-invalid", "--out",
                             tmp_path / "out.jsonl")
    assert status == 0 and "skipped (--skip-invalid): 1, each with its problem:\n  " in err
    # a Document with no entity at all is what the processor found: an empty record
    [empty], _ = _import(_write(tmp_path / "empty.json", {"text": "ab", "entities": []}))
    assert empty.prediction.entities == []


# --------------------------------------------------------------------------- batch outputs


def _shards(name):
    return _vendor("shards") / name


@pytest.fixture(scope="module")
def batch():
    """The real shards folder, laid out as a batch's output (a folder per document), imported skipping the bad."""
    return _import(_vendor("shards"), skip_invalid=True)


def test_the_real_sharded_documents(batch):
    [record, _], report = batch
    prediction = record.prediction
    assert (record.id, len(prediction.entities), len(prediction.groups)) == ("large_invoice_48_pages", 18, 145)
    assert sum(len(g.entities) for g in prediction.groups) == 577
    assert (len(record.document.pages), sum(len(p.words) for p in record.document.pages)) == (48, 4128)
    assert "documents merged from their shards in shardIndex order: 2" in report.notes
    # file names that do not follow shardIndex: merged by shardIndex, the texts' offsets following one another
    unordered = batch[0][1]
    assert unordered.id == "unordered" and unordered.prediction.entities == [] and unordered.document is None


def test_a_missing_shard_is_named_by_its_index(capsys, tmp_path):
    # the file named -2 held shardIndex 0: the index is Document AI's, not the file name's
    with pytest.raises(InputError, match=r"missing_one: shard 0 of the 5 \(shardIndex 0 to 4\) is missing: 4 given"):
        _import(_shards("missing_one"))
    status, _, err = run_cli(capsys, "import", "google-docai", _shards("missing_one"), "--out", tmp_path / "o.jsonl")
    assert status == 1 and err.count("\n") == 1 and not (tmp_path / "o.jsonl").exists()


def test_a_batch_output_folder_gives_one_record_per_document(tmp_path, batch):
    # the real shards folder is laid out as a batch's output: a folder per document (one has a shard missing)
    records, report = batch
    assert [r.id for r in records] == ["large_invoice_48_pages", "unordered"]
    assert [str(error).split(": ")[0] for error in report.skipped] == [str(_shards("missing_one"))]
    # folders named after the inputs' positions come in their order (2 before 10), each one record
    for index in (10, 2, 1):
        _write(tmp_path / "batch" / str(index) / f"doc{index}-0.json",
               {"text": "ab", "entities": [_entity("total", str(index), 0.5)]})
    records, _ = _import(tmp_path / "batch")
    assert [(r.id, r.prediction.entities[0].value) for r in records] == [("1", "1"), ("2", "2"), ("10", "10")]
    # a folder of whole Documents: one record each, named after the files, in the same order
    for name in ("expense_receipt_enrichments_snake.json", "invoice_packing_list_snake.json",
                 "invoice_parser_output.json"):
        (tmp_path / "documents").mkdir(exist_ok=True)
        (tmp_path / "documents" / name).write_bytes(_vendor(name).read_bytes())
    records, report = _import(tmp_path / "documents")
    assert [r.id for r in records] == ["expense_receipt_enrichments_snake", "invoice_packing_list_snake",
                                       "invoice_parser_output"]
    assert report.records == 3 and "files with snake_case keys (the Python client's to_dict): 2" in report.notes
    with pytest.raises(UsageError, match=r"--id \"x\" names the record of one document, and .* holds 3"):
        import_google_docai(tmp_path / "documents", document_id="x")
    (tmp_path / "batch" / "loose.json").write_text("{}")
    with pytest.raises(InputError, match=r"holds both \.json files \(loose\.json\.\.\.\) and folders of them"):
        import_google_docai(tmp_path / "batch")


# --------------------------------------------------------------------------- pages without a dimension


def test_pages_without_a_dimension_take_their_image_size():
    path = _vendor("invoice_process_response.json")
    [record], report = _import(path)
    first = json.loads(path.read_text())["document"]["entities"]
    vertices = next(e for e in first if e["type"] == "invoice_id")["pageAnchor"]["pageRefs"][0]["boundingPoly"][
        "normalizedVertices"]
    xs, ys = [v.get("x", 0) for v in vertices], [v.get("y", 0) for v in vertices]
    expected = (round(min(xs) * 1933, 2), round(min(ys) * 2068, 2), round(max(xs) * 1933, 2), round(max(ys) * 2068, 2))
    invoice_id = next(e for e in record.prediction.entities if e.key == "invoice_id")
    assert invoice_id.evidence == [Evidence(page=0, bbox=expected)] and expected[2] > 1000  # not a 1000 px page
    assert "pages without a dimension, sized by their image (pages[].image.width and height): 1" in report.notes
    assert not any("virtual" in note for note in report.notes)


# --------------------------------------------------------------------------- hostile numbers and ids


@pytest.mark.parametrize("number", ["²", "9" * 5000, "-1", "1e3", "٣"])
def test_numbers_as_strings_that_are_no_int64_are_one_line_errors(tmp_path, capsys, number):
    document = {"text": "ab", "pages": [_page(1, (0, 1))], "entities": [_entity("a", "b", 0.5, page=number)]}
    path = _write(tmp_path / "doc.json", document)
    status, _, err = run_cli(capsys, "import", "google-docai", path, "--out", tmp_path / "out.jsonl")
    assert status == 1 and err.count("\n") == 1
    assert err.startswith(f"rpa-sim: error: {path}: entities[0].pageAnchor.pageRefs[0].page: expected a whole number")
    shard = {"shardInfo": {"shardIndex": number, "shardCount": "2"}, "text": ""}
    with pytest.raises(InputError, match=r"shardInfo\.shardIndex: expected a whole number >= 0"):
        _import(_write(tmp_path / "shards" / "a.json", shard))


def test_an_empty_id_is_refused(capsys, tmp_path):
    status, _, err = run_cli(capsys, "import", "google-docai", _invoice(), "--id", "", "--out", tmp_path / "o.jsonl")
    assert status == 2 and err.startswith('rpa-sim: error: --id "": a record\'s id is a non-empty string')
    assert not (tmp_path / "o.jsonl").exists()


# --------------------------------------------------------------------------- line breaks


def test_join_lines_writes_each_line_break_as_a_space(capsys, tmp_path):
    [kept], report = _import(_invoice())
    assert [e.value for e in kept.prediction.entities if e.key.endswith("_address")] == [
        "222 Main Street\nAnytown, USA", "111 Main Street\nAnytown, USA"]
    assert any(note.startswith("values with line breaks, kept as the service wrote them") and note.endswith(": 2")
               for note in report.notes)
    [joined], report = _import(_invoice(), join_lines=True)
    assert [e.value for e in joined.prediction.entities if e.key.endswith("_address")] == [
        "222 Main Street Anytown, USA", "111 Main Street Anytown, USA"]
    assert "values with line breaks, each break written as a space (--join-lines): 2" in report.notes
    # against a ground truth typed on one line, the address agrees only once joined
    truth = _write(tmp_path / "truth.json", {"fields": {"receiver_address": "222 Main Street Anytown, USA"}})
    fields = tmp_path / "fields.yaml"
    fields.write_text("receiver_address: receiver_address\n" + "".join(
        f"{e.key}: null\n" for e in kept.prediction.entities if e.key != "receiver_address") + "line_item: null\n"
        "vat: null\n")
    for options, correct in (((), 0), (("--join-lines",), 1)):
        out = tmp_path / "joined.jsonl"
        status, _, err = run_cli(capsys, "import", "google-docai", _invoice(), "--ground-truth", truth, "--fields",
                                 fields, "--out", out, *options)
        assert status == 0, err
        status, scores, err = run_cli(capsys, "score", out, "--json")
        assert status == 0, err
        assert (json.loads(scores)["tp"], json.loads(scores)["substitutions"]) == (correct, 1 - correct)
