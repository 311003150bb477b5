"""The azure-di importer: the real Form Recognizer v2.1 receipt, hand-made v3 results, edge cases and bad input."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from rpa_sim.common.errors import InputError
from rpa_sim.records.importers.azure_di import import_azure_di
from rpa_sim.records.models import Evidence
from rpa_sim.records.readers import read_records, write_records
from tests.conftest import run_cli, shared_path

NO_VALUE = "fields without a value (neither text nor typed value)"
NESTED = "arrays of objects, and objects, inside a group (canonical groups do not nest)"


def _receipt():
    return shared_path("data", "vendors", "azure", "receipt_v2.1_analyze_result.json")


def _receipt_truth():
    return shared_path("data", "vendors", "azure", "receipt_ground_truth.json")


def _import(path, **options):
    records, report = import_azure_di(path, **options)
    records = list(records)
    return records, report


def _write(tmp_path, data, name="result.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def _entities(record):
    return [(e.key, e.value, e.confidence) for e in record.prediction.entities]


def test_the_real_v21_receipt_as_recognised_text():
    [record], report = _import(_receipt())
    assert record.id == "receipt_v2.1_analyze_result-1" and record.document_type == "prebuilt:receipt"
    assert record.ground_truth is None and record.document is None  # the recording has no readResults lines
    assert _entities(record) == [
        ("ReceiptType", "Itemized", 0.99), ("MerchantName", "Contoso Contoso", 0.716),
        ("MerchantAddress", "123 Main Street Redmond, WA 98052", 0.989),
        ("MerchantPhoneNumber", "987-654-3210", 0.99), ("TransactionDate", "6/10/2019", 0.99),
        ("TransactionTime", "13:59", 0.989), ("Subtotal", "11.70", 0.923), ("Tax", "1.17", 0.979),
        ("Tip", "$463", 0.975), ("Total", "$14.50", 0.987)]
    groups = record.prediction.groups
    assert [g.name for g in groups] == ["Items", "Items"]
    assert [[(e.key, e.value, e.confidence) for e in g.entities] for g in groups] == [
        [("Quantity", "1", 0.919), ("Name", "Cappuccino", 0.959), ("TotalPrice", "$2.20", 0.959)],
        [("Quantity", "1", 0.91), ("Name", "BACON & EGGS", 0.955), ("TotalPrice", "$9.5", 0.958)]]
    # boxes: the axis-aligned box of the 8-number quadrilateral, in the page's pixels, page 1 -> index 0
    entities = record.prediction.entities
    assert entities[0].evidence is None  # ReceiptType is a classification: no box
    assert entities[1].evidence == [Evidence(page=0, bbox=(290.0, 282.9, 1116.0, 824.4))]
    assert entities[9].evidence == [Evidence(page=0, bbox=(1027.0, 2623.0, 1376.0, 2758.0))]
    boxes = [e.evidence for e in entities if e.evidence] + [e.evidence for g in groups for e in g.entities]
    assert len(boxes) == 15 and all(len(b) == 1 and b[0].page == 0 for b in boxes)
    assert report.records == 1 and not report.unmapped
    assert "fields without a recognised text, whose typed value is the value: 1" in report.notes
    assert "evidence boxes and pages in the pages' own unit: pixel" in report.notes


def test_the_real_v21_receipt_as_typed_values_with_its_ground_truth():
    [record], report = _import(_receipt(), value="typed", ground_truth=_receipt_truth())
    assert [v for _, v, _ in _entities(record)] == [
        "Itemized", "Contoso Contoso", "123 Main Street Redmond, WA 98052", "+19876543210", "2019-06-10",
        "13:59:00", "11.7", "1.17", "463", "14.5"]
    assert [e.value for g in record.prediction.groups for e in g.entities] == [
        "1", "Cappuccino", "2.2", "1", "BACON & EGGS", "9.5"]
    truth = record.ground_truth
    assert [(e.key, e.value) for e in truth.entities] == [
        ("ReceiptType", "Itemized"), ("MerchantName", "Contoso Contoso"),
        ("MerchantAddress", "123 Main Street Redmond, WA 98052"), ("MerchantPhoneNumber", "+19876543210"),
        ("TransactionDate", "2019-06-10"), ("TransactionTime", "13:59:00"), ("Subtotal", "11.7"), ("Tax", "1.17"),
        ("Tip", "1.63"), ("Total", "14.5")]
    assert truth.groups == []
    assert f"ground truth joined from {_receipt_truth()}: 1 document" in report.notes


def _score(capsys, tmp_path, *import_options):
    out = tmp_path / "receipt.jsonl"
    status, _, err = run_cli(capsys, "import", "azure-di", _receipt(), "--ground-truth", _receipt_truth(),
                             "--out", out, *import_options)
    assert status == 0, err
    status, scores, err = run_cli(capsys, "score", out, "--json")
    assert status == 0, err
    return json.loads(scores)


def test_kieval_of_the_real_receipt(capsys, tmp_path):
    # recognised text against the SDK's typed expectations: 4 of 10 fields agree ("Itemized", the two names,
    # "1.17"); the 6 Items fields, which the ground truth does not list, are deletions
    text = _score(capsys, tmp_path)
    assert (text["entities_gt"], text["entities_pred"], text["tp"], text["substitutions"], text["additions"],
            text["deletions"]) == (10, 16, 4, 6, 0, 6)
    assert text["kieval_aligned"] == 4 / 16
    typed = _score(capsys, tmp_path, "--value", "typed")
    assert (typed["tp"], typed["substitutions"], typed["additions"], typed["deletions"]) == (9, 1, 0, 6)
    assert typed["kieval_aligned"] == 9 / 16
    # dropping Items (which the ground truth leaves out) leaves Tip's real error: 463 read for 1.63
    fields = tmp_path / "fields.yaml"
    fields.write_text("Items: null\n")
    without_items = _score(capsys, tmp_path, "--value", "typed", "--fields", fields)
    assert (without_items["tp"], without_items["substitutions"], without_items["deletions"]) == (9, 1, 0)
    assert without_items["kieval_aligned"] == 0.9 and without_items["entity_f1"] == 0.9


def _v3_field(content, typed_key, typed, *, confidence=0.9, page=1, polygon=(1, 1, 3, 1, 3, 2, 1, 2), **more):
    field = {"type": typed_key.removeprefix("value").lower(), typed_key: typed, "content": content,
             "boundingRegions": [{"pageNumber": page, "polygon": list(polygon)}], **more}
    if confidence is not None:
        field["confidence"] = confidence
    return field


def _v3_invoice():
    item = {"type": "object", "content": "2 Widget $20.00", "confidence": 0.8, "valueObject": {
        "Description": _v3_field("Widget", "valueString", "Widget", confidence=0.95),
        "Amount": _v3_field("$20.00", "valueCurrency", {"amount": 20, "currencySymbol": "$", "currencyCode": "USD"},
                            confidence=0.93)}}
    return {"status": "succeeded", "analyzeResult": {
        "apiVersion": "2023-07-31", "modelId": "prebuilt-invoice", "content": "...",
        "pages": [{"pageNumber": 1, "width": 8.5, "height": 11, "unit": "inch", "words": [
                      {"content": "INVOICE", "polygon": [1, 0.5, 2, 0.5, 2, 0.8, 1, 0.8], "confidence": 0.99}]},
                  {"pageNumber": 2, "width": 8.5, "height": 11, "unit": "inch", "words": [
                      {"content": "$20.00", "polygon": [6, 9, 7, 9, 7, 9.3, 6, 9.3], "confidence": 0.98}]}],
        "documents": [{"docType": "invoice", "confidence": 1, "fields": {
            "InvoiceTotal": _v3_field("$20.00", "valueCurrency", {"amount": 20, "currencySymbol": "$"}, page=2,
                                      polygon=(6, 9, 7, 9.1, 6.9, 9.3, 6.1, 9.2)),
            "InvoiceDate": _v3_field("March 4, 2024", "valueDate", "2024-03-04", confidence=None),
            "CustomerAddress": {"type": "address", "content": "1 Main St", "confidence": 0.7,
                                "valueAddress": {"houseNumber": "1", "road": "Main St"}},
            "DueDate": {"type": "date"},
            "Items": {"type": "array", "valueArray": [item, item]}}}]}}


def test_a_v3_result_over_two_pages(tmp_path):
    [record], report = _import(_write(tmp_path, _v3_invoice(), "invoice.json"))
    assert record.id == "invoice-1" and record.document_type == "invoice"
    assert _entities(record) == [("InvoiceTotal", "$20.00", 0.9), ("InvoiceDate", "March 4, 2024", None),
                                 ("CustomerAddress", "1 Main St", 0.7)]
    total = record.prediction.entities[0]
    assert total.evidence == [Evidence(page=1, bbox=(6.0, 9.0, 7.0, 9.3))]  # page 2, in inches
    assert [(g.name, [(e.key, e.value, e.confidence) for e in g.entities]) for g in record.prediction.groups] == [
        ("Items", [("Description", "Widget", 0.95), ("Amount", "$20.00", 0.93)])] * 2
    pages = record.document.pages
    assert [(p.width, p.height, [(w.text, w.bbox) for w in p.words]) for p in pages] == [
        (8.5, 11.0, [("INVOICE", (1.0, 0.5, 2.0, 0.8))]), (8.5, 11.0, [("$20.00", (6.0, 9.0, 7.0, 9.3))])]
    assert report.unmapped == Counter({NO_VALUE: 1})  # DueDate: not found on the page
    assert ("fields without a confidence, written with a missing confidence (null, not the SDKs' default of 1.0; "
            "set missing_confidence in the policy): 1") in report.notes
    assert "evidence boxes and pages in the pages' own unit: inch" in report.notes


def test_typed_values_of_a_v3_result(tmp_path):
    [record], report = _import(_write(tmp_path, _v3_invoice()), value="typed")
    # a currency is its amount; an address has no scalar typed value, so its text stands
    assert _entities(record) == [("InvoiceTotal", "20", 0.9), ("InvoiceDate", "2024-03-04", None),
                                 ("CustomerAddress", "1 Main St", 0.7)]
    assert [e.value for e in record.prediction.groups[0].entities] == ["Widget", "20"]
    assert "fields without a typed value, whose recognised text is the value: 1" in report.notes
    assert "currency values written as their amount (symbol and code dropped): 3" in report.notes


def test_the_analyze_result_alone_reads_as_the_whole_response(tmp_path):
    whole = _import(_write(tmp_path, _v3_invoice(), "a.json"))[0]
    alone = _import(_write(tmp_path, _v3_invoice()["analyzeResult"], "a.json"))[0]
    assert whole == alone


def test_a_missing_confidence_is_null_never_one(tmp_path):
    result = {"analyzeResult": {"documentResults": [{"docType": "prebuilt:receipt", "fields": {
        "Total": {"type": "number", "valueNumber": 5, "text": "5.00", "boundingBox": [0, 0, 1, 0, 1, 1, 0, 1],
                  "page": 1}}}], "readResults": [{"page": 1, "width": 10, "height": 20, "unit": "pixel"}]}}
    truth = _write(tmp_path, {"result-1": {"Total": "5.00"}}, "truth.json")
    [record], _ = _import(_write(tmp_path, result), ground_truth=truth)
    assert record.prediction.entities[0].confidence is None
    out = tmp_path / "out.jsonl"
    write_records([record], out)
    assert '"confidence":null' in out.read_text()
    # read only where every policy maps a missing confidence; never made 1.0 on the way
    [read] = list(read_records(out, missing_confidence=True))
    assert read.prediction.entities[0].confidence is None
    with pytest.raises(InputError, match="a null confidence is allowed only when every policy"):
        list(read_records(out))


def test_an_empty_document(tmp_path):
    result = {"analyzeResult": {"version": "2.1.0", "readResults": [],
                                "documentResults": [{"docType": "prebuilt:receipt", "fields": {}}]}}
    [record], report = _import(_write(tmp_path, result))
    assert record.prediction.entities == [] and record.prediction.groups == []
    assert report.records == 1 and not report.unmapped
    no_documents = {"analyzeResult": {"apiVersion": "2023-07-31", "pages": [], "documents": []}}
    records, report = _import(_write(tmp_path, no_documents))
    assert records == [] and report.records == 0


def test_nested_arrays(tmp_path):
    inner = {"type": "object", "valueObject": {"Code": {"type": "string", "valueString": "A1", "content": "A1"}}}
    item = {"type": "object", "valueObject": {
        "Name": {"type": "string", "valueString": "Tea", "content": "Tea", "confidence": 0.9},
        "Tags": {"type": "array", "valueArray": [{"type": "string", "valueString": "hot", "content": "hot"},
                                                 {"type": "string", "valueString": "large", "content": "large"}]},
        "Parts": {"type": "array", "valueArray": [inner, inner]},
        "Detail": inner}}
    result = {"documents": [{"fields": {
        "Items": {"type": "array", "valueArray": [item, {"type": "array", "valueArray": []}]},
        "Emails": {"type": "array", "valueArray": [{"type": "string", "valueString": "a@b.c", "content": "a@b.c",
                                                    "confidence": 0.5}]},
        "Empty": {"type": "array", "valueArray": [{"type": "object", "valueObject": {}}]}}}]}
    [record], report = _import(_write(tmp_path, result))
    [group] = record.prediction.groups
    # an array of values in a group gives one entity per value; arrays of objects and objects are counted
    assert [(e.key, e.value) for e in group.entities] == [("Name", "Tea"), ("Tags", "hot"), ("Tags", "large")]
    assert _entities(record) == [("Emails", "a@b.c", 0.5)]
    assert report.unmapped == Counter({NESTED: 2, "arrays directly inside arrays (canonical records have no place "
                                                  "for them)": 1, "groups with no field left (no group written)": 1})


def test_the_field_map(tmp_path):
    fields = tmp_path / "fields.yaml"
    fields.write_text("Total: total\nItems: line_items\nItems.Name: description\nTip: null\nNope: x\n")
    [record], report = _import(_receipt(), fields=fields)
    keys = [e.key for e in record.prediction.entities]
    assert "total" in keys and "Tip" not in keys and "Total" not in keys
    assert [g.name for g in record.prediction.groups] == ["line_items"] * 2
    assert [e.key for e in record.prediction.groups[0].entities] == ["Quantity", "description", "TotalPrice"]
    assert report.unmapped == Counter({
        f"fields or groups dropped by --fields {fields} (mapped to null): Tip": 1,
        f"fields or groups that --fields {fields} does not name, kept under the service's name: Items.Quantity, "
        "Items.TotalPrice, MerchantAddress, MerchantName, MerchantPhoneNumber and 5 more": 12})
    assert f"names in --fields {fields} that no imported field has (1): Nope" in report.notes


@pytest.mark.parametrize(("data", "message"), [
    ({"status": "failed", "analyzeResult": {}}, 'status: "failed": the analysis did not succeed'),
    ({"analyzeResult": {"pages": []}}, ("analyzeResult: not an analyze result: no documentResults (v2.1) or "
                                        "documents (v3 and later); keys: ['pages']")),
    ({"documents": [{"fields": {"T": {"content": "1", "confidence": 1.5}}}]},
     "documents[0].fields.T.confidence: 1.5 is not in [0, 1]"),
    ({"documents": [{"fields": {"T": {"content": "1", "boundingRegions": [{"pageNumber": 1, "polygon": [1, 2, 3]}]}}}]},
     "documents[0].fields.T.boundingRegions[0].polygon: expected x, y pairs of coordinates, got 3 numbers"),
    ({"documents": [{"fields": {"T": {"content": "1", "boundingRegions": [{"pageNumber": 0, "polygon": [1, 2]}]}}}]},
     "documents[0].fields.T.boundingRegions[0].pageNumber: expected a page number from 1, got 0"),
    ({"pages": [{"pageNumber": 1, "width": 1, "height": 1}], "documents": [{"fields": {"T": {
        "content": "1", "boundingRegions": [{"pageNumber": 2, "polygon": [1, 2]}]}}}]},
     "documents[0].fields.T.boundingRegions[0].pageNumber: page 2, but the result has 1 pages"),
    ({"readResults": [{"page": 2, "width": 1, "height": 1}], "documentResults": []},
     "readResults: pages numbered [2]: expected 1 to 1"),
    ({"documentResults": [{"fields": {"T": {"text": 5}}}]}, "documentResults[0].fields.T.text: expected a string"),
    # an integer past a double's range is no finite number (and no crash)
    ({"documents": [{"fields": {"T": {"content": "1", "confidence": 10**400}}}]},
     "documents[0].fields.T.confidence: expected a finite number, got 1000000000"),
    ([1], "expected an object, got [1]"),
])
def test_bad_results_name_the_field(tmp_path, data, message):
    path = _write(tmp_path, data)
    with pytest.raises(InputError) as caught:
        _import(path)
    assert str(caught.value).startswith(f"{path}: {message}")


def test_an_integer_beyond_pythons_digits_limit_is_invalid_json(tmp_path):
    path = tmp_path / "result.json"
    path.write_text('{"documents": [{"fields": {"T": {"confidence": 1' + "0" * 5000 + "}}}]}")
    with pytest.raises(InputError, match=r"invalid JSON: Exceeds the limit \(4300 digits\)"):
        _import(path)


def test_the_command_line(capsys, tmp_path):
    out = tmp_path / "out.jsonl"
    status, _, err = run_cli(capsys, "import", "azure-di", _receipt(), "--out", out)
    assert status == 0
    assert err.splitlines()[0] == f"wrote 1 records to {out}"
    assert "note: predictions only: give --ground-truth FILE" in err
    [line] = out.read_text().splitlines()
    record = json.loads(line)
    assert "ground_truth" not in record and len(record["prediction"]["entities"]) == 10
    status, _, err = run_cli(capsys, "import", "azure-di", tmp_path / "nope.json", "--out", out)
    assert status == 1 and err == f"rpa-sim: error: {tmp_path / 'nope.json'}: no such file or folder\n"
    status, _, err = run_cli(capsys, "import", "azure-di", _receipt(), "--value", "raw", "--out", out)
    assert status == 2 and "invalid choice: 'raw'" in err


# --------------------------------------------------------------------------- v3 previews, versions


def _vendor(name):
    return shared_path("data", "vendors", "azure", name)


def test_the_real_v3_preview_invoice():
    # api 2022-01-30-preview: words and regions give boundingBox (8 numbers, inches), where v3 GA gives polygon
    [record], report = _import(_vendor("invoice_v3preview_2022-01-30.json"))
    assert (record.id, record.document_type) == ("invoice_v3preview_2022-01-30-1", "invoice")
    assert _entities(record) == [
        ("CustomerAddress", "1020 Enterprise Way Sunnayvale, CA 87659", 0.838), ("CustomerAddressRecipient",
         "Microsoft", 0.986), ("CustomerName", "Microsoft", 0.986), ("DueDate", "6/24/2017", 0.986),
        ("InvoiceDate", "6/18/2017", 0.695), ("InvoiceId", "34278587", 0.986), ("InvoiceTotal", "$56,651.49", 0.484),
        ("VendorAddress", "1 Redmond way Suite 6000 Redmond, WA 99243", 0.856), ("VendorName", "Contoso", 0.986)]
    assert record.prediction.entities[0].evidence == [Evidence(page=0, bbox=(5.196, 1.716, 6.6526, 2.0359))]
    [page] = record.document.pages
    assert (page.width, page.height, len(page.words)) == (8.5, 11.0, 34)
    assert (page.words[0].text, page.words[0].bbox) == ("Contoso", (0.5384, 1.1583, 1.4466, 1.3534))
    assert "files of a 2021 or 2022 preview, whose boundingBox is the polygon: 1" in report.notes


def _preview(tmp_path, change):
    data = json.loads(_vendor("invoice_v3preview_2022-01-30.json").read_text())
    change(data["analyzeResult"])
    return _write(tmp_path, data)


VERSIONS = "the versions read are 2.0.0, 2.1.0 and 2021-09-30-preview to 2024-11-30)"


def test_a_shape_not_recognised_names_the_files_version_and_those_read(tmp_path):
    def no_word_box(result):
        del result["pages"][0]["words"][0]["boundingBox"]

    with pytest.raises(InputError) as caught:
        _import(_preview(tmp_path, no_word_box))
    assert str(caught.value).endswith(
        'analyzeResult.pages[0].words[0].polygon: missing (apiVersion "2022-01-30-preview", a version read, but not '
        f"in its shape; {VERSIONS}")

    def future(result):
        result["apiVersion"] = "2099-01-01"
        result["results"] = result.pop("documents")

    with pytest.raises(InputError) as caught:
        _import(_preview(tmp_path, future))
    assert 'keys: [\'apiVersion\', \'content\', \'modelId\', \'pages\', \'results\', \'stringIndexType\', ' \
           f'\'styles\', \'tables\'] (apiVersion "2099-01-01"; {VERSIONS}' in str(caught.value)
    with pytest.raises(InputError, match=r"documents: expected a list, got 5 \(the file gives no apiVersion;"):
        _import(_write(tmp_path, {"documents": 5}))


# --------------------------------------------------------------------------- memory and size


def _large_result(tmp_path, pages):
    """The real v3.1 receipt with its page of 43 words repeated, as compact JSON: OCR words are most of it."""
    data = json.loads(_vendor("receipt_v3.1_analyze_result.json").read_text())
    page = data["analyzeResult"]["pages"][0]
    data["analyzeResult"]["pages"] = [{**page, "pageNumber": n + 1} for n in range(pages)]
    path = tmp_path / "large.json"
    path.write_text(json.dumps(data, separators=(",", ":")))
    return path


def test_a_large_result_is_imported_in_a_few_times_its_size(tmp_path):
    import tracemalloc

    path = _large_result(tmp_path, 150)
    tracemalloc.start()
    try:
        records, _ = import_azure_di(path)
        write_records(records, tmp_path / "out.jsonl")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # the whole JSON parsed at once held some 13 times the file; a part at a time, the records and their lines
    assert peak < 8 * path.stat().st_size
    record = json.loads((tmp_path / "out.jsonl").read_text())
    assert [len(page["words"]) for page in record["document"]["pages"]] == [43] * 150


def test_a_result_too_large_for_the_memory_is_refused_before_it_is_read(tmp_path, capsys, monkeypatch):
    from rpa_sim.common import limits

    path = _large_result(tmp_path, 3)
    monkeypatch.setattr(limits, "available_memory", lambda: 1000)
    status, _, err = run_cli(capsys, "import", "azure-di", path, "--out", tmp_path / "out.jsonl")
    assert status == 1 and err.count("\n") == 1 and not (tmp_path / "out.jsonl").exists()
    assert err.startswith(f"rpa-sim: error: {path}: too large to import here: its ")
    assert "of memory, more than the 1 kB this machine has available" in err


def test_running_out_of_memory_is_a_one_line_error(tmp_path, capsys, monkeypatch):
    from rpa_sim.records.importers import _json

    def exhausted(path):
        raise MemoryError

    monkeypatch.setattr(_json, "read_input", exhausted)
    status, _, err = run_cli(capsys, "import", "azure-di", _receipt(), "--out", tmp_path / "out.jsonl")
    assert (status, err) == (1, "rpa-sim: error: out of memory: this machine has too little for the input "
                                "(docs/cli.md, Sizes)\n")


@pytest.mark.parametrize(("text", "message"), [
    ('{"documents": [\n  1,,2]}', "line 2: invalid JSON: invalid character at column 5"),
    ('{"documents": []', "invalid JSON: input data was truncated"),
    (b'{"content": "\xff", "documents": []}', "not UTF-8 (byte 13)"),
    ('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", "invalid JSON: nested too deeply"),
], ids=["line and column", "truncated", "not UTF-8", "nested"])
def test_bad_json_is_named_at_its_line_and_column(tmp_path, text, message):
    path = tmp_path / "result.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(InputError) as caught:
        _import(path)
    assert str(caught.value) == f"{path}: {message}"


# --------------------------------------------------------------------------- several files, line breaks


def test_skip_invalid_leaves_out_a_bad_file_and_lists_it(tmp_path, capsys):
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "a.json").write_bytes(_receipt().read_bytes())
    (folder / "b.json").write_text('{"analyzeResult": {"pages": []}}')
    with pytest.raises(InputError, match=r"b\.json: analyzeResult: not an analyze result"):
        _import(folder)
    records, report = _import(folder, skip_invalid=True)
    assert [r.id for r in records] == ["a-1"] and report.records == 1
    assert [str(error).split(": ")[1] for error in report.skipped] == ["analyzeResult"]
    status, _, err = run_cli(capsys, "import", "azure-di", folder, "--skip-invalid", "--out", tmp_path / "o.jsonl")
    assert status == 0 and f"skipped (--skip-invalid): 1, each with its problem:\n  {folder / 'b.json'}: " in err
    (folder / "a.json").unlink()
    status, _, err = run_cli(capsys, "import", "azure-di", folder, "--skip-invalid", "--out", tmp_path / "o.jsonl")
    assert status == 1 and err.startswith("rpa-sim: error: nothing to import: every file or document has a problem")


def test_values_none_of_which_map_are_an_error_and_fields_without_a_value_are_not(tmp_path):
    rows = {"type": "array", "valueArray": [{"type": "array", "valueArray": []}]}
    nested = {"documents": [{"fields": {"Rows": rows}}]}
    with pytest.raises(InputError, match=r"id result-1: none of its values could be mapped \(1 arrays directly inside "
                                         r"arrays"):
        _import(_write(tmp_path, nested))
    # a custom model lists the fields it did not find without a value: that is what it found
    [record], report = _import(_write(tmp_path, {"documents": [{"fields": {"Signature": {"type": "string"}}}]}))
    assert record.prediction.entities == [] and report.unmapped == {NO_VALUE: 1}


def test_join_lines_on_the_real_v31_receipt():
    [kept], _ = _import(_vendor("receipt_v3.1_analyze_result.json"))
    [joined], report = _import(_vendor("receipt_v3.1_analyze_result.json"), join_lines=True)
    assert kept.prediction.entities[0].value == "123 Main Street\nRedmond, WA 98052"
    assert joined.prediction.entities[0].value == "123 Main Street Redmond, WA 98052"
    assert [e.value for e in joined.prediction.entities[1:]] == [e.value for e in kept.prediction.entities[1:]]
    assert "values with line breaks, each break written as a space (--join-lines): 1" in report.notes
