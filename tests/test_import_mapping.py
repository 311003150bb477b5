"""The mapping importer: the path syntax, three realistic outputs (tests/data/mapping), joins, edge cases and errors."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from rpa_sim.common.errors import InputError, UsageError
from rpa_sim.records.importers.jsonpath import parse_path
from rpa_sim.records.importers.mapping import import_mapping, load_mapping
from tests.conftest import run_cli, shared_path

DATA = Path(__file__).parent / "data" / "mapping"
LLM = DATA / "llm_receipts.jsonl"
LLM_MAP = DATA / "llm_receipts.yaml"


def _import(source: Path, mapping: Path, **options):
    records, report = import_mapping(source, mapping=mapping, **options)
    return list(records), report


def _predicted(record):
    return [(e.key, e.value, e.confidence, None if e.evidence is None else [(b.page, b.bbox) for b in e.evidence])
            for e in record.prediction.entities]


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _jsonl(path: Path, *values) -> Path:
    return _write(path, "".join(json.dumps(value) + "\n" for value in values))


# --------------------------------------------------------------------------- the path syntax


@pytest.mark.parametrize(("path", "found"), [
    ("$.a.b", [("$.a.b", (), 1)]),
    ("$.list[*]", [("$.list[0]", (), 10), ("$.list[1]", (), 20)]),
    ("$.list[0]", [("$.list[0]", (), 10)]),
    ("$.list[-1]", [("$.list[1]", (), 20)]),
    ("$.list[2]", []),
    ("$['odd key'][\"x.y\"]", [('$["odd key"]["x.y"]', (), 3)]),
    ("$.sections.*.*", [("$.sections.seller.name", ("seller", "name"), "Acme"),
                        ("$.sections.seller.vat", ("seller", "vat"), "GB1"),
                        ("$.sections.buyer.name", ("buyer", "name"), "Bo")]),
    ("$.rows[*][*]", [("$.rows[0][0]", (), 1), ("$.rows[0][1]", (), 2), ("$.rows[1][0]", (), 3)]),
    ("$.a.missing", []),
    ("$.list.b", []),
    ("$", [("$", (), "whole")]),
])
def test_paths_find_values_with_their_place_and_keys(path, found):
    node = {"a": {"b": 1}, "list": [10, 20], "odd key": {"x.y": 3}, "rows": [[1, 2], [3]],
            "sections": {"seller": {"name": "Acme", "vat": "GB1"}, "buyer": {"name": "Bo"}}}
    if path == "$":
        node = "whole"
    assert [(m.where, m.keys, m.value) for m in parse_path(path).matches(node)] == found


@pytest.mark.parametrize(("path", "problem"), [
    ("", "'' at character 1: a path starts with $ (the record) or @ (the field)"),
    ("a.b", "'a.b' at character 1: a path starts with $ (the record) or @ (the field)"),
    ("$.", "'$.' at character 3: expected a name or * after . (quote other names: ['a name'])"),
    ("$.a..b", "'$.a..b' at character 5: expected a name or * after . (quote other names: ['a name'])"),
    ("$[x]", "'$[x]' at character 3: expected an index, * or a quoted name after ["),
    ("$['a]", "\"$['a]\" at character 3: a quoted name needs its closing ']"),
    ("$.a b", "'$.a b' at character 4: expected . or [ between steps"),
])
def test_a_malformed_path_names_the_character(path, problem):
    with pytest.raises(ValueError) as caught:
        parse_path(path)
    assert str(caught.value) == problem


# --------------------------------------------------------------------------- an LLM's JSON Lines


def test_an_llm_output_with_a_score_per_field():
    records, report = _import(LLM, LLM_MAP)
    assert [r.id for r in records] == ["r-0001", "r-0002", "r-0003"]
    assert all(r.ground_truth is None for r in records)
    assert _predicted(records[0]) == [
        ("store.name", "CAFE NERO", 0.97, [(0, (112.0, 40.0, 388.0, 78.0))]),
        ("date", "04/03/2024", 0.91, [(0, (440.0, 144.0, 680.0, 174.0))]),
        ("total", "12.00", 0.93, [(0, (480.0, 960.0, 640.0, 996.0))]),
        ("tax", "1.14", 0.58, [(0, (480.0, 912.0, 640.0, 942.0))])]  # a number, written as text
    # a score written as a string reads as the number; page 2 counted from 1 is index 1; tip is null: dropped
    assert _predicted(records[1]) == [("store.name", "BAKERY 21", 0.88, None),
                                      ("total", "7.20", 0.64, [(1, (496.0, 840.0, 616.0, 876.0))])]
    # no score, or a null one: the confidence is unknown (null), never made up
    assert _predicted(records[2]) == [("store.name", "TEA HOUSE", None, None), ("total", "3.80", None, None)]
    assert report.records == 3
    assert report.unmapped == Counter({"predicted fields with a null value": 1})
    for note in ("predicted fields with a confidence: 6",
                 "predicted fields without a confidence: null (a policy must set missing_confidence): 2",
                 "predicted fields with a box as evidence: 5", "predicted fields without a box: 3"):
        assert note in report.notes


def test_a_ground_truth_and_a_field_map_are_joined(tmp_path):
    truth = _write(tmp_path / "gt.json", json.dumps({
        "r-0001": {"store_name": "CAFE NERO", "date": "04/03/2024", "total": "12.60", "tax": "1.14"},
        "r-0002": {"store_name": "BAKERY 21", "total": "7.20"},
        "r-0009": {"total": "1.00"}}))
    fields = _write(tmp_path / "fields.yaml", "store.name: store_name\ndate: date\ntotal: total\n")
    records, report = _import(LLM, LLM_MAP, ground_truth=truth, fields=fields)
    assert [(e.key, e.value) for e in records[0].ground_truth.entities] == [
        ("store_name", "CAFE NERO"), ("date", "04/03/2024"), ("total", "12.60"), ("tax", "1.14")]
    assert [e.key for e in records[0].prediction.entities] == ["store_name", "date", "total", "tax"]
    assert records[2].ground_truth is None
    assert report.unmapped == Counter({
        # tip has a null value: counted once, as such, not also as a field the map does not name
        "predicted fields with a null value": 1,
        f"fields or groups that --fields {fields} does not name, kept under the service's name: tax": 1,
        "documents without ground truth in --ground-truth (written with predictions only: score refuses them "
        "unless --skip-invalid)": 1,
        "ground-truth documents with no imported document of that id": 1})


# --------------------------------------------------------------------------- an in-house service's batch


def test_a_service_batch_with_percentages_xywh_boxes_and_checked_values():
    records, report = _import(DATA / "service_batch.json", DATA / "service_batch.yaml")
    assert [r.id for r in records] == ["17", "18"]  # integer ids as text
    assert _predicted(records[0]) == [
        ("invoice_number", "INV-0042", 0.975, [(0, (70.0, 52.0, 250.0, 72.0))]),
        ("total", "1,250.00", 0.64, [(1, (410.0, 700.0, 500.0, 718.0))]),
        ("due_date", "2024-05-01", 0.8825, None)]
    assert [(e.key, e.value) for e in records[0].ground_truth.entities] == [
        ("invoice_number", "INV-0042"), ("total", "1,205.00"), ("due_date", "2024-05-01"), ("vat_id", "GB123456789")]
    assert report.unmapped == Counter()
    assert not any(note.startswith("predictions only") for note in report.notes)


def test_a_box_past_a_doubles_range_is_one_line(tmp_path, capsys):
    """The service batch with an xywh box whose x plus width overflows: one line, not a traceback."""
    batch = json.loads((DATA / "service_batch.json").read_text())
    batch["results"][0]["extractions"][1]["location"]["box"] = [1e308, 700, 1e308, 18]
    source = _write(tmp_path / "batch.json", json.dumps(batch))
    message = (f"{source}: id 17: $.results[0].extractions[1].location.box: [1e+308, 700, 1e+308, 18] (xywh): "
               f"coordinates too large: the box is beyond any page")
    with pytest.raises(InputError) as caught:
        _import(source, DATA / "service_batch.yaml")
    assert str(caught.value) == message
    status, _, err = run_cli(capsys, "import", "mapping", source, "--mapping", DATA / "service_batch.yaml", "--out",
                             tmp_path / "out.jsonl")
    assert (status, err) == (1, f"rpa-sim: error: {message}\n")


def test_a_per_field_setting_from_the_record_gives_each_record_its_own(tmp_path):
    """A per-field setting that starts at the record ($) finds the same for every field of the record: it is read
    once per record (it was walked again for every field, 33 s for 5,000 fields) and each record gets its own."""
    def record(number, confidence, fields):
        values = {f"f{i}": {"value": f"{number}-{i}"} for i in range(fields)}
        values[f"f{fields // 2}"]["document_confidence"] = confidence
        return {"id": f"r{number}", "fields": values}

    source = _jsonl(tmp_path / "s.jsonl", record(1, 0.9, 400), record(2, 0.4, 3))
    mapping = _write(tmp_path / "m.yaml", "id: $.id\nfields: $.fields.*\nvalue: '@.value'\n"
                                          "confidence: '$.fields.*.document_confidence'\n")
    first, second = _import(source, mapping)[0]
    assert [(e.key, e.value, e.confidence) for e in first.prediction.entities[:2]] == [("f0", "1-0", 0.9),
                                                                                      ("f1", "1-1", 0.9)]
    assert {e.confidence for e in first.prediction.entities} == {0.9} and len(first.prediction.entities) == 400
    assert [(e.key, e.value, e.confidence) for e in second.prediction.entities] == [
        ("f0", "2-0", 0.4), ("f1", "2-1", 0.4), ("f2", "2-2", 0.4)]


def test_the_service_batch_scores(tmp_path, capsys):
    out = tmp_path / "batch.jsonl"
    status, _, err = run_cli(capsys, "import", "mapping", DATA / "service_batch.json", "--mapping",
                             DATA / "service_batch.yaml", "--out", out)
    assert status == 0 and "wrote 2 records" in err
    status, stdout, _ = run_cli(capsys, "score", out, "--json")
    figures = json.loads(stdout)
    # 17: the total misread (1,250.00 for 1,205.00), vat_id missed; 18: vendor "Acme Ltd" for "ACME Ltd"
    assert (figures["tp"], figures["substitutions"], figures["additions"], figures["deletions"]) == (3, 2, 1, 0)
    status, stdout, _ = run_cli(capsys, "score", out, "--json", "--value-match", "normalized")
    assert json.loads(stdout)["tp"] == 4


def test_nested_arrays_numbers_booleans_and_a_record_without_fields():
    records, report = _import(DATA / "nested_pages.json", DATA / "nested_pages.yaml")
    assert [r.id for r in records] == ["scan-01.pdf", "scan-02.pdf"]
    assert _predicted(records[0]) == [("policy_no", "P-778", 0.9, None), ("holder", "J. Smith", 0.7, None),
                                      ("premium", "312.5", 0.6, None), ("signed", "true", 0.95, None)]
    assert records[1].prediction.entities == []
    assert report.unmapped == Counter({
        "records without predicted fields (the fields path matches nothing): no prediction entity": 1})


# --------------------------------------------------------------------------- edge cases


def test_a_folder_of_files_in_name_order(tmp_path):
    folder = tmp_path / "outputs"
    folder.mkdir()
    _write(folder / "b.json", json.dumps({"doc_id": "b", "fields": {"total": {"value": "2"}}}))
    _jsonl(folder / "a.jsonl", {"doc_id": "a1", "fields": {"total": {"value": "1"}}},
           {"doc_id": "a2", "fields": {}})
    _write(folder / "notes.txt", "not an output")
    mapping = _write(tmp_path / "m.yaml", "id: $.doc_id\nfields: $.fields.*\nvalue: '@.value'\n")
    records, report = _import(folder, mapping)
    assert [(r.id, [e.value for e in r.prediction.entities]) for r in records] == [("a1", ["1"]), ("a2", []),
                                                                                    ("b", ["2"])]
    assert "predicted fields without a confidence: null (a policy must set missing_confidence): 2" in report.notes


def test_a_field_map_that_drops_a_field(tmp_path):
    fields = _write(tmp_path / "fields.yaml", "tax: null\n")
    records, report = _import(LLM, LLM_MAP, fields=fields)
    assert [e.key for e in records[0].prediction.entities] == ["store.name", "date", "total"]
    assert report.unmapped[f"fields or groups dropped by --fields {fields} (mapped to null): tax"] == 1


def test_a_record_level_confidence_and_a_key_from_the_record(tmp_path):
    source = _jsonl(tmp_path / "s.jsonl", {"id": "x", "answer": "42", "field": "total", "confidence": 0.8})
    mapping = _write(tmp_path / "m.yaml", "id: $.id\nfields: $.answer\nkey: $.field\nconfidence: $.confidence\n")
    (record,), _ = _import(source, mapping)
    assert _predicted(record) == [("total", "42", 0.8, None)]


def test_later_records_may_lack_optional_parts(tmp_path):
    source = _jsonl(tmp_path / "s.jsonl", {"id": "1", "f": {"total": {"v": "1", "s": 0.5, "b": [0, 0, 1, 1]}}},
                    {"id": "2", "f": {"total": {"s": 0.5}, "date": {"v": "3.3.", "b": None}}})
    mapping = _write(tmp_path / "m.yaml", "id: $.id\nfields: $.f.*\nvalue: '@.v'\nconfidence: '@.s'\nbox: '@.b'\n")
    records, report = _import(source, mapping)
    assert _predicted(records[1]) == [("date", "3.3.", None, None)]
    assert report.unmapped == Counter({"predicted fields without a value (the value path matches nothing)": 1})


# --------------------------------------------------------------------------- errors


def _error(tmp_path, values, mapping_text: str) -> str:
    source = _jsonl(tmp_path / "s.jsonl", *values)
    mapping = _write(tmp_path / "m.yaml", mapping_text)
    with pytest.raises(InputError) as caught:
        _import(source, mapping)
    return str(caught.value).replace(f"{tmp_path}/", "")


LLM_LINE = {"doc_id": "r-1", "fields": {"total": {"value": "12.00", "score": 0.93}}}
BASE = "id: $.doc_id\nfields: $.fields.*\nvalue: '@.value'\n"


@pytest.mark.parametrize(("mapping_text", "message"), [
    (BASE + "confidence: '@.scores'\n",
     "s.jsonl: line 1 (id r-1): confidence '@.scores' matches nothing in the first record: the first field is an "
     "object with the keys \"value\", \"score\"; fix it in m.yaml, line 4"),
    ("id: $.document.id\nfields: $.fields.*\n",
     "s.jsonl: line 1: id '$.document.id' matches nothing in the first record: the record is an object with the "
     "keys \"doc_id\", \"fields\"; fix it in m.yaml, line 1"),
    ("id: $.doc_id\nfields: $.fields.total.values.*\n",
     "s.jsonl: line 1 (id r-1): fields '$.fields.total.values.*' matches nothing in the first record: "
     "$.fields.total is an object with the keys \"value\", \"score\"; fix it in m.yaml, line 2"),
    ("records: $.results[*]\n" + BASE,
     "s.jsonl: line 1: records '$.results[*]' matches nothing in the first record: the record is an object with "
     "the keys \"doc_id\", \"fields\"; fix it in m.yaml, line 1"),
    (BASE + "box: '@.bbox'\n",
     "s.jsonl: line 1 (id r-1): box '@.bbox' matches nothing in the first record: the first field is an object "
     "with the keys \"value\", \"score\"; fix it in m.yaml, line 4"),
    ("id: $.doc_id\nfields: $.fields.*\n",
     "s.jsonl: line 1 (id r-1): $.fields.total: value '@' found {\"value\": \"12.00\", \"score\": 0.93}, expected "
     "a value (a string, number or boolean); point it inside the field, such as '@.value'"),
    (BASE + "confidence: '@.value'\nconfidence_scale: 10\n",
     "s.jsonl: line 1 (id r-1): $.fields.total.value: \"12.00\" / confidence_scale 10 = 1.2 is not in [0, 1] "
     "(set confidence_scale: 100 for percentages)"),
    ("id: $.fields.*.score\nfields: $.fields.*\nvalue: '@.value'\n",
     "s.jsonl: line 1: $.fields.total.score: expected an id (a string or an integer), got 0.93"),
])
def test_a_mapping_that_does_not_fit_the_first_record(tmp_path, mapping_text, message):
    assert _error(tmp_path, [LLM_LINE], mapping_text) == message


SECOND = {"doc_id": "r-2", "fields": {"total": {"value": "7.20", "score": 0.5, "bbox": [1, 2, 3, 4], "page": 0}}}


@pytest.mark.parametrize(("change", "message"), [
    (lambda r: r.update(doc_id="r-1"),
     "s.jsonl: line 2 (id r-1): $: a second record with this id (the first: s.jsonl, line 1)"),
    (lambda r: r.pop("doc_id"), "s.jsonl: line 2: $: no id: $.doc_id matches nothing"),
    (lambda r: r.update(doc_id=True), "s.jsonl: line 2: $.doc_id: expected an id (a string or an integer), got true"),
    (lambda r: r.update(doc_id=" "), "s.jsonl: line 2: $.doc_id: an empty id"),
    (lambda r: r["fields"]["total"].update(score=1.5),
     "s.jsonl: line 2 (id r-2): $.fields.total.score: 1.5 is not in [0, 1] (set confidence_scale: 100 for "
     "percentages)"),
    (lambda r: r["fields"]["total"].update(score="high"),
     "s.jsonl: line 2 (id r-2): $.fields.total.score: expected a confidence (a number), got \"high\""),
    (lambda r: r["fields"]["total"].update(value=["7", "20"]),
     "s.jsonl: line 2 (id r-2): $.fields.total.value: value '@.value' found [\"7\", \"20\"], expected a value (a "
     "string, number or boolean)"),
    (lambda r: r["fields"]["total"].update(bbox=[1, 2, 3]),
     "s.jsonl: line 2 (id r-2): $.fields.total.bbox: expected a box, four numbers (xyxy), got [1, 2, 3]"),
    (lambda r: r["fields"]["total"].update(bbox=[5, 2, 3, 4]),
     "s.jsonl: line 2 (id r-2): $.fields.total.bbox: [5, 2, 3, 4] is not a box (xyxy): it ends before it starts"),
    (lambda r: r["fields"]["total"].update(page=-1),
     "s.jsonl: line 2 (id r-2): $.fields.total.page: expected a page number from 0 (first_page), got -1"),
    (lambda r: r["fields"]["total"].update(page=1.5),
     "s.jsonl: line 2 (id r-2): $.fields.total.page: expected a page number from 0 (first_page), got 1.5"),
])
def test_a_bad_later_record_names_its_line_id_and_place(tmp_path, change, message):
    second = json.loads(json.dumps(SECOND))
    change(second)
    first = {"doc_id": "r-1", "fields": {"total": {"value": "1", "score": 0.9, "bbox": [0, 0, 1, 1], "page": 0}}}
    mapping = BASE + "confidence: '@.score'\nbox: '@.bbox'\npage: '@.page'\n"
    assert _error(tmp_path, [first, second], mapping) == message


def test_a_key_path_that_matches_several_values(tmp_path):
    record = {"id": "a", "fields": [{"names": ["total", "sum"], "v": "1"}]}
    message = _error(tmp_path, [record], "id: $.id\nfields: $.fields[*]\nkey: '@.names[*]'\nvalue: '@.v'\n")
    assert message == ("s.jsonl: line 1 (id a): $.fields[0].names[1]: key: the path matches 2 values "
                       "($.fields[0].names[0], $.fields[0].names[1], ...), expected one")


def test_a_list_of_fields_without_a_key(tmp_path):
    record = {"id": "a", "fields": [{"v": "1"}]}
    assert _error(tmp_path, [record], "id: $.id\nfields: $.fields[*]\nvalue: '@.v'\n") == (
        "s.jsonl: line 1 (id a): $.fields[0]: fields '$.fields[*]' found a list item, which no object key names: "
        "give key, a path to its name (such as '@.name')")


def test_a_json_file_names_the_record_by_its_path(tmp_path):
    source = _write(tmp_path / "batch.json", json.dumps({"results": [
        {"id": 1, "fields": {"total": {"v": "1", "s": 0.5}}}, {"id": 2, "fields": {"total": {"v": "2", "s": 50}}}]}))
    mapping = _write(tmp_path / "m.yaml", "records: $.results[*]\nid: $.id\nfields: $.fields.*\nvalue: '@.v'\n"
                                          "confidence: '@.s'\n")
    with pytest.raises(InputError) as caught:
        _import(source, mapping)
    assert str(caught.value) == (f"{source}: id 2: $.results[1].fields.total.s: 50 is not in [0, 1] (set "
                                 f"confidence_scale: 100 for percentages)")


@pytest.mark.parametrize(("mapping_text", "message"), [
    (BASE + "score: '@.score'\n", "m.yaml: line 4: score: not a known field (misspelt?)"),
    ("id: $.doc_id\nfields: $.fields[\n",
     "m.yaml: line 2: fields: '$.fields[' at character 10: expected an index, * or a quoted name after ["),
    ("id: '@.doc_id'\nfields: $.fields.*\n",
     "m.yaml: line 1: id: '@.doc_id' starts with @ (a field), but this path is read from the record: start it "
     "with $"),
    (BASE + "box_format: ltrb\n", "m.yaml: line 4: box_format: expected 'xyxy' or 'xywh', got 'ltrb'"),
    (BASE + "confidence_scale: 0\n", "m.yaml: line 4: confidence_scale: expected a number greater than 0, got 0"),
    ("fields: $.fields.*\n", "m.yaml: line 1: id: missing (required)"),
    (BASE + "ground_truth:\n  fields: $.gt\n",
     "m.yaml: line 1: ground_truth.fields '$.gt' binds no key (no * over an object's keys): give ground_truth.key, "
     "a path to each field's name (such as '@.name')"),
])
def test_a_bad_mapping_file_names_its_line_and_setting(tmp_path, mapping_text, message):
    path = _write(tmp_path / "m.yaml", mapping_text)
    with pytest.raises(InputError) as caught:
        load_mapping(path)
    assert str(caught.value).replace(f"{tmp_path}/", "") == message


def test_a_source_without_records(tmp_path):
    empty = _write(tmp_path / "empty.jsonl", "\n\n")
    with pytest.raises(InputError, match=r"empty\.jsonl: no records: the source holds no JSON value"):
        _import(empty, LLM_MAP)
    (tmp_path / "folder").mkdir()
    with pytest.raises(InputError, match=r"folder: no \.json, \.jsonl or \.jsonl\.gz files"):
        _import(tmp_path / "folder", LLM_MAP)


def test_errors_on_the_command_line(tmp_path, capsys):
    mapping = _write(tmp_path / "m.yaml", BASE + "confidence: '@.scor'\n")
    status, _, err = run_cli(capsys, "import", "mapping", LLM, "--mapping", mapping, "--out", tmp_path / "o.jsonl")
    assert status == 1
    assert err == (f"rpa-sim: error: {LLM}: line 1 (id r-0001): confidence '@.scor' matches nothing in the first "
                   f"record: the first field is an object with the keys \"value\", \"score\", \"bbox\", \"page\"; "
                   f"fix it in {mapping}, line 4\n")
    assert not (tmp_path / "o.jsonl").exists()
    truth = _write(tmp_path / "gt.json", json.dumps({"17": {"total": "1"}}))
    status, _, err = run_cli(capsys, "import", "mapping", DATA / "service_batch.json", "--mapping",
                             DATA / "service_batch.yaml", "--ground-truth", truth, "--out", tmp_path / "o.jsonl")
    assert status == 2 and "both give a ground truth: keep one" in err
    with pytest.raises(UsageError, match="both give a ground truth"):
        import_mapping(DATA / "service_batch.json", mapping=DATA / "service_batch.yaml", ground_truth=truth)
    status, _, err = run_cli(capsys, "import", "mapping", LLM, "--out", tmp_path / "o.jsonl")
    assert status == 2 and "--mapping" in err


def test_the_mapping_file_is_never_the_output(tmp_path, capsys):
    mapping = _write(tmp_path / "m.yaml", BASE)
    status, _, err = run_cli(capsys, "import", "mapping", LLM, "--mapping", mapping, "--out", mapping)
    assert status == 2 and "an output never replaces an input" in err
    assert mapping.read_text() == BASE


# --------------------------------------------------------------------------- nothing lost silently; --skip-invalid

AZURE_MAP = ("records: $.analyzeResult.documents[*]\nid: $.docType\nfields: $.fields.*\nvalue: '@.content'\n"
             "confidence: '@.confidence'\n")


def _azure_receipt(tmp_path, change=None) -> Path:
    """The real Azure v3.1 receipt (../shared), read through a mapping; ``change`` edits the fields of a copy of
    its document, added as a second document."""
    data = json.loads(shared_path("data", "vendors", "azure", "receipt_v3.1_analyze_result.json").read_text())
    if change is not None:
        documents = data["analyzeResult"]["documents"]
        copy = {**json.loads(json.dumps(documents[0])), "docType": "receipt.copy"}
        change(copy["fields"])
        documents.append(copy)
    return _write(tmp_path / "receipt.json", json.dumps(data))


def test_a_real_azure_result_through_a_mapping(tmp_path):
    mapping = _write(tmp_path / "m.yaml", AZURE_MAP)
    [record], report = _import(_azure_receipt(tmp_path), mapping)
    assert record.id == "receipt.retailMeal" and len(record.prediction.entities) == 8
    # Items, an array of objects, has no content: counted
    assert report.unmapped == Counter({"predicted fields without a value (the value path matches nothing)": 1})


def test_a_record_none_of_whose_values_the_value_path_finds_is_an_error(tmp_path, capsys):
    """Every field of a copy of the real receipt without its content (a value path that fits no field of this
    record): the record would be empty, as if the service had found nothing; it is an error, or skipped and
    listed."""
    def strip(fields):
        for field in fields.values():
            field.pop("content", None)
    source = _azure_receipt(tmp_path, strip)
    mapping = _write(tmp_path / "m.yaml", "records: $.analyzeResult.documents[*]\nid: $.docType\n"
                                          "fields: $.fields.*\nvalue: '@.content'\n")
    out = tmp_path / "out.jsonl"
    status, _, err = run_cli(capsys, "import", "mapping", source, "--mapping", mapping, "--out", out)
    assert status == 1 and not out.exists()
    assert err == (f"rpa-sim: error: {source}: id receipt.copy: none of its values could be mapped (9 predicted "
                   f"fields without a value (the value path matches nothing)): an empty record would read as a "
                   f"document where the service found nothing\n")
    status, _, err = run_cli(capsys, "import", "mapping", source, "--mapping", mapping, "--skip-invalid",
                             "--out", out)
    assert status == 0 and "wrote 1 records" in err and "skipped (--skip-invalid): 1, each with its problem:" in err
    # null values are what the output found: an empty record made of them is written, and counted
    nulls = _write(tmp_path / "nulls.jsonl", json.dumps({"id": "a", "f": {"total": {"v": None}}}) + "\n")
    [record], report = _import(nulls, _write(tmp_path / "n.yaml", "id: $.id\nfields: $.f.*\nvalue: '@.v'\n"))
    assert record.prediction.entities == [] and report.unmapped == Counter({"predicted fields with a null value": 1})


def test_a_ground_truth_section_none_of_whose_values_could_be_read_is_an_error(tmp_path):
    source = _jsonl(tmp_path / "s.jsonl", {"id": "b", "f": {"total": "2"}, "truth": {"total": {"value": "2"}}},
                    {"id": "a", "f": {"total": "1"}, "truth": {"total": {"text": "1"}}})
    mapping = _write(tmp_path / "m.yaml", "id: $.id\nfields: $.f.*\nground_truth:\n  fields: $.truth.*\n"
                                          "  value: '@.value'\n")
    with pytest.raises(InputError) as caught:
        _import(source, mapping)
    assert str(caught.value) == (
        f"{source}: line 2 (id a): none of its ground-truth values could be mapped (1 ground-truth fields without a "
        "value (the value path matches nothing)): an empty ground truth would score every predicted value as an "
        "addition")


def test_skip_invalid_leaves_out_a_bad_line_or_record_and_lists_it(tmp_path, capsys):
    good = {"doc_id": "r-1", "fields": {"total": {"value": "1", "score": 0.9}}}
    source = _write(tmp_path / "s.jsonl", "".join([
        json.dumps(good) + "\n",
        '{"doc_id": "r-2", "fields": \n',  # invalid JSON
        json.dumps({"doc_id": "r-3", "fields": {"total": {"value": "3", "score": 1.5}}}) + "\n",
        json.dumps({**good, "fields": {"total": {"value": "4", "score": 0.4}}}) + "\n",  # r-1 again
        json.dumps({"doc_id": "r-5", "fields": {"total": {"score": 0.5}}}) + "\n",  # no value: empty
        json.dumps({"doc_id": "r-6", "fields": {"total": {"value": "6\n7", "score": 0.6}}}) + "\n"]))
    mapping = _write(tmp_path / "m.yaml", BASE + "confidence: '@.score'\n")
    records, report = _import(source, mapping, skip_invalid=True, join_lines=True)
    assert [(r.id, _predicted(r)) for r in records] == [("r-1", [("total", "1", 0.9, None)]),
                                                        ("r-6", [("total", "6 7", 0.6, None)])]
    assert [str(error).replace(f"{tmp_path}/", "") for error in report.skipped] == [
        "s.jsonl: line 2: invalid JSON: Expecting value at column 29",
        "s.jsonl: line 3 (id r-3): $.fields.total.score: 1.5 is not in [0, 1] (set confidence_scale: 100 for "
        "percentages)",
        "s.jsonl: line 4 (id r-1): $: a second record with this id (the first: s.jsonl, line 1)",
        "s.jsonl: line 5 (id r-5): none of its values could be mapped (1 predicted fields without a value (the value "
        "path matches nothing)): an empty record would read as a document where the service found nothing"]
    # the skipped records' counts are taken back out; the notes count what was written
    assert report.unmapped == Counter()
    assert "predicted fields with a confidence: 2" in report.notes
    out = tmp_path / "out.jsonl"
    status, _, err = run_cli(capsys, "import", "mapping", source, "--mapping", mapping, "--skip-invalid",
                             "--out", out)
    assert status == 0 and "wrote 2 records" in err and "skipped (--skip-invalid): 4, each with its problem:" in err


def test_skip_invalid_does_not_skip_a_mapping_that_fits_no_record(tmp_path):
    """A path that matches nothing in the first record is the mapping's problem, not the record's: skipping would
    leave out every record that lacks an optional part, or every record."""
    source = _jsonl(tmp_path / "s.jsonl", LLM_LINE, {**LLM_LINE, "doc_id": "r-2"})
    mapping = _write(tmp_path / "m.yaml", BASE + "confidence: '@.scores'\n")
    with pytest.raises(InputError, match=r"confidence '@\.scores' matches nothing in the first record"):
        _import(source, mapping, skip_invalid=True)
    # a first line that cannot be read is skipped, and the next record is the first
    broken = _write(tmp_path / "b.jsonl", "{\n" + json.dumps(LLM_LINE) + "\n")
    records, report = _import(broken, _write(tmp_path / "ok.yaml", BASE), skip_invalid=True)
    assert [r.id for r in records] == ["r-1"] and len(report.skipped) == 1


def test_skip_invalid_with_every_record_bad(tmp_path):
    source = _write(tmp_path / "s.jsonl", "{\n[\n")
    with pytest.raises(InputError, match=r"^nothing to import: every file or document has a problem \(2 skipped; "
                                         r"the first: .*s.jsonl: line 1: invalid JSON"):
        _import(source, _write(tmp_path / "m.yaml", BASE), skip_invalid=True)


def test_a_skipped_record_logs_nothing_and_join_lines_reaches_the_log(tmp_path):
    """The review log holds the rows of the records written only, their values as --join-lines writes them (the
    checked value compared after its line breaks are joined too)."""
    field = {"value": "1 Main St\nTown", "score": 0.9, "route": "review", "checked": "1 Main St\r\nTown"}
    source = _jsonl(tmp_path / "s.jsonl", {"doc_id": "a", "fields": {"address": field}},
                    {"doc_id": "b", "fields": {"address": {**field, "score": 7}}},
                    {"doc_id": "c", "fields": {"address": {**field, "checked": "2 Main St Town"}}})
    mapping = _write(tmp_path / "m.yaml", BASE + "confidence: '@.score'\nlog:\n  route: '@.route'\n"
                                                 "  checked_value: '@.checked'\n")
    log = tmp_path / "log.jsonl"
    records, report = _import(source, mapping, skip_invalid=True, join_lines=True, review_log=log)
    assert [r.id for r in records] == ["a", "c"] and len(report.skipped) == 1
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(row["id"], row["value"], row["correct"], row.get("corrected_value")) for row in rows] == [
        ("a", "1 Main St Town", True, None), ("c", "1 Main St Town", False, "2 Main St Town")]
