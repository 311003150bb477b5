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
    # counted in values: v1 the 3 line items' 4 + 4 + 4, the tax's 3 and the supplier_address field; v2 the
    # supplier_address group's 3, the 3 line items' 4 + 4 + 3 (one has no total) and the tax's 3
    assert report.unmapped[f"fields or groups dropped by --fields {fields} (mapped to null): line_items, "
                           "supplier_address, taxes"] == 16 + 17


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


# -- financial_document v1: boxes without a page ----------------------------------------------------------------
# tests/data/mindee-financial-document-v1.json is a hand-made response in the shape of Mindee's financial_document
# v1 (its client libraries' test data, mindee/client-lib-test-data v1/products/financial_document/response_v1):
# n_pages 1, and the 8 boxes Mindee gives without a page_id (the four addresses, two registrations each of the
# supplier and the customer); the values are invented.
FINANCIAL = DATA.parent / "mindee-financial-document-v1.json"
WITHOUT_PAGE = ("v1 boxes without a page_id on a document of several pages, or of no stated page count (box left "
                "out, value kept)")
PAGELESS = ["billing_address", "customer_address", "shipping_address", "supplier_address"]


def _boxes(record, names):
    found = {e.key: e.evidence for e in record.prediction.entities if e.key in names}
    found.update({g.name: g.entities[0].evidence for g in record.prediction.groups if g.name in names})
    return found


def test_a_box_without_a_page_is_on_the_one_page_of_its_document():
    [record], report = _import(FINANCIAL)
    boxes = _boxes(record, PAGELESS)
    assert boxes["billing_address"] == [Evidence(page=0, bbox=(41.0, 311.0, 228.0, 349.0))]
    assert all(evidence and evidence[0].page == 0 for evidence in boxes.values())
    registrations = [g for g in record.prediction.groups if g.name.endswith("company_registrations")]
    assert [(g.name, [(e.key, e.value, e.evidence[0].page) for e in g.entities]) for g in registrations][:1] == [
        ("customer_company_registrations", [("type", "VAT NUMBER", 0), ("value", "7740192385", 0)])]
    assert "v1 boxes without a page_id, placed on the one page of their document: 8" in report.notes
    assert WITHOUT_PAGE not in report.unmapped


@pytest.mark.parametrize("pages", [{"n_pages": 2}, {}], ids=["two pages", "no page count"])
def test_a_box_without_a_page_on_several_pages_is_left_out_and_counted(tmp_path, pages):
    data = json.loads(FINANCIAL.read_text())
    del data["document"]["n_pages"]
    data["document"].update(pages)
    data["document"]["inference"].pop("pages")
    [record], report = _import(_write(tmp_path, data))
    [one_page], _ = _import(FINANCIAL)
    assert report.unmapped[WITHOUT_PAGE] == 8
    # every value is kept, only the 8 boxes without a page are gone
    assert [(e.key, e.value, e.confidence) for e in record.prediction.entities] == \
        [(e.key, e.value, e.confidence) for e in one_page.prediction.entities]
    assert all(evidence is None for evidence in _boxes(record, PAGELESS).values())
    assert record.prediction.entities[[e.key for e in record.prediction.entities].index("date")].evidence[0].page == 0


def test_fields_dropped_by_the_map_are_not_read(tmp_path):
    """A field mapped to null is not looked at: what would refuse the file (here a confidence of 7 and a page of -1)
    does not matter once it is dropped."""
    data = json.loads(FINANCIAL.read_text())
    prediction = data["document"]["inference"]["prediction"]
    prediction["billing_address"].update(confidence=7, page_id=-1)
    path = _write(tmp_path, data)
    with pytest.raises(InputError, match=r"billing_address\.confidence: 7 is not in"):
        _import(path)
    fields = tmp_path / "fields.yaml"
    fields.write_text("billing_address: null\n")
    [record], report = _import(path, fields=fields)
    assert "billing_address" not in {e.key for e in record.prediction.entities}
    assert report.unmapped[f"fields or groups dropped by --fields {fields} (mapped to null): billing_address"] == 1


# -- the report adds up -----------------------------------------------------------------------------------------


def _financial_v2() -> dict:
    """A v2 financial_document inference in the shape of Mindee's own sample (mindee/client-lib-test-data,
    v2/products/financial_document/complete.json): simple fields, objects (locale, two addresses) and lists of
    objects (taxes, line items, registrations), some values null; values invented."""
    def field(value, confidence="High"):
        return {"value": value, "confidence": confidence, "locations": []}

    def item(**members):
        return {"fields": {name: field(value) for name, value in members.items()}}

    def address(**members):
        return {"fields": {name: field(value) for name, value in members.items()}}

    line = dict(quantity=1.0, tax_rate=None, tax_amount=None, unit_price=25.0, description="Pedal arms",
                total_price=25.0, product_code=None, unit_measure=None)
    return {"inference": {"file": {"name": "complete.jpg", "page_count": 1}, "result": {"fields": {
        "date": field("2019-11-02"), "due_date": field("2019-02-26"), "total_net": field(195.0),
        "total_tax": field(9.75), "total_amount": field(204.75), "customer_name": field("Jessie M Horne"),
        "document_type": field("invoice"), "supplier_name": field("John Smith"), "tips_gratuity": field(None, None),
        "invoice_number": field("INT-001"), "receipt_number": field(None, None), "purchase_category": field("food"),
        "purchase_subcategory": field("restaurant"), "supplier_phone_number": field("01.11.11.11.11"),
        "taxes": {"items": [item(base=31.5, rate=0.05, amount=9.75)]},
        "locale": address(country="FR", currency="EUR", language="fr"),
        "line_items": {"items": [item(**{**line, "tax_rate": 1.0, "tax_amount": 1.4, "product_code": "FC01",
                                         "unit_measure": "liter"}), item(**line), item(**line)]},
        "customer_address": address(city="New York", state="NY", value="4312 Wood Road", po_box="111111",
                                    country="USA", postal_code="10031", street_name="Wood Road", street_number="4312",
                                    address_complement=None),
        "supplier_address": address(city="FakeCity", state="WY", po_box="3814Z", country="USA",
                                    complete="1, Fake Street", postal_code="00001", street_name="Fake Street",
                                    street_number="1", address_complement="On Mars"),
        "supplier_company_registration": {"items": [item(type="VAT", number="FR 11"),
                                                    item(type="SIRET", number="11")]},
        "customer_company_registrations": {"items": [item(type="VAT", number="FR 22"),
                                                     item(type="SIRET", number="22")]},
    }}}}


def _leaves(fields: dict) -> tuple[int, int]:
    """The values of a v2 response, counted independently of the importer: (all, null)."""
    total = empty = 0
    for field in fields.values():
        items = field.get("items", [field])
        for item in items:
            members = item["fields"].values() if "fields" in item else [item]
            for member in members:
                total += 1
                empty += member["value"] is None
    return total, empty


def test_the_import_report_counts_each_value_once(tmp_path):
    """Every value of the response is written, dropped by --fields or without a value: once, and the counts add up
    (with a map, nulls were counted as kept and as without a value, and groups as kept beside their fields)."""
    data = _financial_v2()
    fields = tmp_path / "fields.yaml"
    fields.write_text("total_amount: total\ninvoice_number: invoice_id\nlocale: null\ntips_gratuity: tip\n"
                      "supplier_company_registration: null\nline_items.description: description\n"
                      "line_items.product_code: null\ncustomer_address.address_complement: null\n")
    [record], report = _import(_write(tmp_path, data), fields=fields)
    total, empty = _leaves(data["inference"]["result"]["fields"])
    assert (total, empty) == (70, 11)
    written = len(record.prediction.entities) + sum(len(g.entities) for g in record.prediction.groups)
    counts = {reason.split(" by --fields")[0].split(" that --fields")[0]: count
              for reason, count in report.unmapped.items()}
    # dropped: locale's 3, the supplier's 2 registrations of 2, the one product code with a value (the address
    # complement mapped to null has none: it is counted once, as without a value)
    assert counts == {"fields or groups dropped": 3 + 2 * 2 + 1,
                      "fields or groups": written - 5,  # all but total, invoice_number and the 3 descriptions
                      "fields without a value (not found)": 2,
                      "fields of list items and objects without a value": 9}
    assert written + counts["fields or groups dropped"] + 2 + 9 == total == 51 + 8 + 11
    assert f"groups that --fields {fields} does not name, kept under the service's name: customer_address, " \
           "customer_company_registrations, line_items, supplier_address, taxes" in report.notes
    # a name of the map whose field has no value is in use, not reported as matching nothing
    assert not any(note.startswith("names in --fields") for note in report.notes)
