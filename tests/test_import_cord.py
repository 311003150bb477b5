"""The CORD importer on the 30 real receipts, CORD v2 rows, Qwen model outputs and malformed input."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from rpa_sim.common.errors import InputError
from rpa_sim.evaluate.metrics.kieval import kieval
from rpa_sim.records.importers.cord import import_cord
from rpa_sim.records.importers.kieval_csv import parse_kieval_csv
from rpa_sim.records.models import KIERecord
from rpa_sim.records.readers import read_records, write_records
from tests.conftest import shared_path


def receipts_dir() -> Path:
    return shared_path("data", "cord", "json")


def receipt(name: str) -> dict[str, Any]:
    return json.loads((receipts_dir() / f"{name}.json").read_text(encoding="utf-8"))


def one(source: Path, **options: Any) -> KIERecord:
    records, _ = import_cord(source, **options)
    (record,) = records
    return record


def pairs(group) -> list[tuple[str, str]]:
    return [(e.key, e.value) for e in group.entities]


def error_of(source: Path, **options: Any) -> str:
    with pytest.raises(InputError) as info:
        records, _ = import_cord(source, **options)
        list(records)
    return str(info.value)


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def v2_rows(path: Path, documents: list[dict[str, Any]]) -> Path:
    """A .jsonl of CORD v2 rows: each receipt as the JSON string of a ``ground_truth`` field."""
    path.write_text("".join(json.dumps({"ground_truth": json.dumps(d)}) + "\n" for d in documents), encoding="utf-8")
    return path


def leaves(value: Any) -> int:
    """The string values under a gt_parse node, counted independently of the importer."""
    if isinstance(value, str):
        return 1
    if isinstance(value, dict):
        return sum(leaves(v) for v in value.values())
    return sum(leaves(v) for v in value) if isinstance(value, list) else 0


# --------------------------------------------------------------------------- the 30 real receipts


def test_all_receipts_counts_and_no_disagreement_with_valid_line():
    records, report = import_cord(receipts_dir())
    assert report.records == 0  # lazy: nothing read yet
    records = list(records)
    assert report.records == 30
    assert [r.id for r in records] == [f"receipt_{i:05d}" for i in range(30)]
    assert all(r.prediction is None for r in records)
    assert sum(len(r.ground_truth.groups) for r in records) == 154
    assert sum(len(g.entities) for r in records for g in r.ground_truth.groups) == 466
    assert sum(len(r.document.pages[0].words) for r in records) == 846
    assert all(not r.ground_truth.entities for r in records)
    # gt_parse and valid_line (category + group_id, key words left out) agree on every group.
    assert report.unmapped == Counter()
    assert any("ground truth only" in note and "--predictions" in note for note in report.notes)
    # Independent count of the string values of every gt_parse.
    for record in records:
        expected = leaves(receipt(record.id)["gt_parse"])
        assert sum(len(g.entities) for g in record.ground_truth.groups) == expected


def test_receipt_00000_by_hand():
    # 22 menu items of nm, cnt, price; sub_total of 4 values; total of 1.
    record = one(receipts_dir() / "receipt_00000.json")
    groups = record.ground_truth.groups
    assert [g.name for g in groups] == ["menu"] * 22 + ["sub_total", "total"]
    assert sum(len(g.entities) for g in groups) == 71
    assert pairs(groups[0]) == [("menu.nm", "Nasi Campur Bali"), ("menu.cnt", "x 1"), ("menu.price", "75,000")]
    assert pairs(groups[12]) == [("menu.nm", "Tahu Telor Asin"), ("menu.cnt", "x 1"), ("menu.price", "40,000.")]
    assert pairs(groups[22]) == [("sub_total.subtotal_price", "1,346,000"), ("sub_total.service_price", "100,950"),
                                 ("sub_total.tax_price", "144,695"), ("sub_total.etc", "-45")]
    assert pairs(groups[23]) == [("total.total_price", "1,591,600")]
    page = record.document.pages[0]
    assert (page.width, page.height, len(page.words)) == (864, 1296, 135)
    first = page.words[0]
    assert (first.text, first.bbox, first.segment) == ("x", (256, 374, 270, 390), 3)


def test_receipt_00009_by_hand_single_menu_item_boxes_and_segments():
    # gt_parse "menu" is one object here, not a list: still one menu group.
    record = one(receipts_dir() / "receipt_00009.json")
    assert [(g.name, pairs(g)) for g in record.ground_truth.groups] == [
        ("menu", [("menu.nm", "THAI ICED TEA"), ("menu.unitprice", "@20.000"), ("menu.cnt", "2"),
                  ("menu.price", "40.000")]),
        ("sub_total", [("sub_total.subtotal_price", "40.000")]),
        ("total", [("total.total_price", "40.000"), ("total.cashprice", "100.000"), ("total.changeprice", "60.000")]),
    ]
    words = record.document.pages[0].words
    assert [w.text for w in words] == ["SUB-TOTAL", "40.000", "GRANDTOTAL", "40.000", "CASH", "100.000", "CHANGED",
                                       "60.000", "THAI", "ICED", "TEA", "2", "@20.000", "40.000"]
    assert [w.segment for w in words] == [161, 161] + [167] * 6 + [178] * 6
    # CASH is a tilted quad: (220, 874) (289, 871) (291, 904) (222, 907).
    assert words[4].bbox == (220, 871, 291, 907)
    assert words[8].bbox == (226, 570, 292, 604)


def test_receipt_00019_by_hand_sub_items_and_multi_line_values():
    record = one(receipts_dir() / "receipt_00019.json")
    groups = record.ground_truth.groups
    assert [g.name for g in groups] == ["menu"] * 8 + ["sub_total", "total"]
    assert [len(g.entities) for g in groups] == [6, 4, 4, 6, 3, 4, 4, 4, 4, 1]
    assert pairs(groups[0]) == [("menu.nm", "UDANG RE"), ("menu.unitprice", "216,000"), ("menu.cnt", "2"),
                                ("menu.price", "432,000"), ("menu.sub_nm", "=*LARGE*=="), ("menu.sub_cnt", "2")]
    # Three valid_line lines of one category: CORD v1 joins them with spaces in gt_parse.
    assert ("sub_total.etc", "1,213,000 60,000 70,000") in pairs(groups[8])


def test_receipts_also_in_the_qwen_sample_match_the_kieval_ground_truth():
    # Three receipts of this CORD v1 train sample are in the CORD v2 test sample that
    # KIEval scored (other ids, re-annotated): compare the imported values with its CSV.
    csv = shared_path("data", "kieval_qwen72b_cord", "csv", "gt")
    expected = {
        "receipt_00006": ("95", 11, {("menu.unitprice", "13.000"), ("total.changeprice", "201")},
                          {("menu.unitprice", "13,000"), ("total.cashprice", "201")}),
        "receipt_00009": ("52", 6, {("menu.cnt", "2"), ("menu.price", "40.000")},
                          {("menu.cnt", "1"), ("menu.nm", "THAI ICED TEA"), ("menu.price", "20.000"),
                           ("menu.unitprice", "@20.000")}),
        "receipt_00019": ("70", 33,
                          {("menu.nm", "GURAME FILLET M ASAM MANIS"), ("menu.price", "222,000"), ("menu.sub_cnt", "2"),
                           ("menu.sub_nm", "=*LARGE*=="), ("menu.sub_nm", "=*MEDIUM*="),
                           ("sub_total.etc", "1,213,000 60,000 70,000")},
                          {("menu.cnt", "2"), ("menu.nm", "=*LARGE*=="), ("menu.nm", "=*MEDIUM*="),
                           ("menu.nm", "GURAME FILLET M"), ("menu.price", "222.000"), ("menu.sub_nm", "ASAM MANIS"),
                           ("sub_total.etc", "1,213,000"), ("sub_total.etc", "60,000"), ("sub_total.etc", "70,000")}),
    }
    for name, (number, common, only_v1, only_v2) in expected.items():
        record = one(receipts_dir() / f"{name}.json")
        ours = Counter((e.key, e.value) for g in record.ground_truth.groups for e in g.entities)
        blocks = parse_kieval_csv((csv / f"{number}.csv").read_text(encoding="utf-8"))
        theirs = Counter(pair for _, group in blocks.groups for pair in group)
        assert sum((ours & theirs).values()) == common, name
        assert set(ours - theirs) == only_v1, name
        assert set(theirs - ours) == only_v2, name


# --------------------------------------------------------------------------- sources and v2 rows


def test_v2_rows_give_the_same_records_numbered_by_row(tmp_path):
    documents = [receipt(f"receipt_{i:05d}") for i in range(30)]
    rows = v2_rows(tmp_path / "cord-v2.jsonl", documents)
    from_rows = list(import_cord(rows)[0])
    from_files = list(import_cord(receipts_dir())[0])
    assert [r.id for r in from_rows] == [str(i) for i in range(30)]
    assert [r.model_copy(update={"id": "x"}) for r in from_rows] == [
        r.model_copy(update={"id": "x"}) for r in from_files]


def test_v2_nested_sub_items_and_value_lists_flatten_into_the_parent_group(tmp_path):
    document = receipt("receipt_00010")
    document["gt_parse"]["menu"] = {"nm": "Viet Milk Coffee", "cnt": "1", "price": "25.000",
                                    "sub": [{"nm": "+Hot"}, {"nm": "+M"}]}
    document["gt_parse"]["total"]["cashprice"] = ["30.000", None]
    rows = tmp_path / "rows.jsonl"
    rows.write_text("\n" + json.dumps({"ground_truth": document}) + "\n", encoding="utf-8")  # an object, not a string
    records, report = import_cord(rows)
    record = next(records)
    assert record.id == "0"  # blank lines are not rows
    assert pairs(record.ground_truth.groups[0]) == [("menu.nm", "Viet Milk Coffee"), ("menu.cnt", "1"),
                                                    ("menu.price", "25.000"), ("menu.sub_nm", "+Hot"),
                                                    ("menu.sub_nm", "+M")]
    assert ("total.cashprice", "30.000") in pairs(record.ground_truth.groups[-1])
    # "+Hot" and "+M" are two valid_line lines of one group: still the same menu group without spaces.
    assert report.unmapped == Counter({"null values in gt_parse": 1})


def test_disagreement_between_gt_parse_and_valid_line_is_counted(tmp_path):
    document = receipt("receipt_00009")
    document["gt_parse"]["menu"]["price"] = "41.000"
    records, report = import_cord(write_json(tmp_path / "r.json", document))
    record = next(records)
    assert ("menu.price", "41.000") in pairs(record.ground_truth.groups[0])  # gt_parse wins
    assert report.unmapped == Counter({"menu groups of gt_parse that valid_line does not reconstruct (kept)": 1,
                                       "menu groups of valid_line absent from gt_parse (not imported)": 1})


def test_round_trip_through_canonical_jsonl_joined_with_predictions(tmp_path):
    records = list(import_cord(receipts_dir())[0])
    truth = tmp_path / "cord.jsonl"
    assert write_records(records, truth) == 30
    # The way the note says: ground truth and predictions joined on id when scoring.
    predictions = tmp_path / "pred.jsonl"
    predictions.write_text("".join(json.dumps({"id": r.id, "prediction": {}}) + "\n" for r in records))
    back = list(read_records(truth, predictions=predictions))
    assert [r.model_copy(update={"prediction": None}) for r in back] == records


def test_deterministic_output(tmp_path):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_records(import_cord(receipts_dir())[0], first)
    write_records(import_cord(receipts_dir())[0], second)
    assert first.read_bytes() == second.read_bytes()


# --------------------------------------------------------------------------- predictions


def kieval_rows(path: Path) -> Path:
    """The 100 KIEval ground-truth CSVs as CORD v2 rows (values of a block row as gt_parse items)."""
    csv = shared_path("data", "kieval_qwen72b_cord", "csv", "gt")
    categories = {"0": "menu", "1": "sub_total", "2": "total"}
    documents = []
    for n in range(100):
        parse: dict[str, list[dict[str, list[str]]]] = {}
        for block, group in parse_kieval_csv((csv / f"{n}.csv").read_text(encoding="utf-8")).groups:
            item: dict[str, list[str]] = {}
            for key, value in group:
                item.setdefault(key.split(".", 1)[1], []).append(value)
            parse.setdefault(categories[block], []).append(item)
        documents.append({"gt_parse": parse, "meta": {"image_size": {"width": 1, "height": 1}}, "valid_line": []})
    return v2_rows(path, documents)


def test_qwen_model_outputs_reproduce_the_official_kieval_result(tmp_path):
    outputs = shared_path("data", "kieval_qwen72b_cord", "model_output")
    records, report = import_cord(kieval_rows(tmp_path / "test.jsonl"), predictions=outputs)
    records = list(records)
    # Row 0 is 000.json; nested "menu.sub" objects become menu.sub_* entities of the item.
    assert pairs(records[2].prediction.groups[0]) == [
        ("menu.nm", "JASMINE MT (L)"), ("menu.cnt", "1"), ("menu.price", "24,000"),
        ("menu.sub_nm", "COCONUT JELLY (L)"), ("menu.sub_price", "4,000")]
    assert all(e.confidence == 1.0 for r in records for g in r.prediction.groups for e in g.entities)
    total = kieval((r.ground_truth, r.prediction) for r in records)
    assert (total.tp, total.substitutions, total.additions + total.deletions) == (1020, 167, 273)
    assert round(total.entity_f1, 4) == 0.7707 and round(total.kieval_aligned, 4) == 0.6986
    assert any("confidence 1.0" in note for note in report.notes)
    assert not any("no model-output file" in note for note in report.notes)
    assert not any("model-output files" in reason for reason in report.unmapped)


def test_unmatched_receipts_and_model_outputs_are_reported():
    outputs = shared_path("data", "kieval_qwen72b_cord", "model_output")
    records, report = import_cord(receipts_dir(), predictions=outputs)
    records = list(records)
    assert all(r.prediction is not None and not r.prediction.groups for r in records)
    assert report.unmapped[f"model-output files without a receipt of the same id in {outputs}"] == 100
    assert any(note.startswith("30 receipts have no model-output file") for note in report.notes)


def test_model_output_alias_nulls_and_stem_match(tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    write_json(folder / "receipt_00009.json", {"subtotal": {"sub_total.subtotal_price": "40.000"},
                                               "total": {"total.total_price": None}})
    record = one(receipts_dir() / "receipt_00009.json", predictions=folder)
    assert [(g.name, pairs(g)) for g in record.prediction.groups] == [
        ("sub_total", [("sub_total.subtotal_price", "40.000")]), ("total", [])]


def test_model_output_errors(tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    source = receipts_dir() / "receipt_00009.json"
    (folder / "receipt_00009.json").write_text('{"menu": [', encoding="utf-8")
    assert error_of(source, predictions=folder) == (
        f"{folder / 'receipt_00009.json'}: line 1: invalid JSON: Expecting value at column 11")
    write_json(folder / "receipt_00009.json", {"menu": [{"menu.nm": "TEA", "menu.cnt": 2}]})
    assert error_of(source, predictions=folder) == (
        f"{folder / 'receipt_00009.json'}: menu[0].menu.cnt: expected a string, a list or an object, got 2")
    write_json(folder / "7.json", {})
    write_json(folder / "007.json", {})
    assert error_of(source, predictions=folder) == f"{folder}: 007.json and 7.json are the same receipt number"
    assert error_of(source, predictions=tmp_path / "none") == (
        f"{tmp_path / 'none'}: expected a folder of model-output .json files")


# --------------------------------------------------------------------------- malformed input


@pytest.fixture
def broken(tmp_path):
    """Write a copy of receipt_00009 changed by ``change`` and return its path."""
    def make(change) -> Path:
        document = receipt("receipt_00009")
        change(document)
        return write_json(tmp_path / "bad.json", document)
    return make


def test_invalid_json_names_file_line_and_column(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"gt_parse": {\n  "menu": [}', encoding="utf-8")
    assert error_of(path) == f"{path}: line 2: invalid JSON: Expecting value at column 12"


def test_missing_gt_parse(broken):
    path = broken(lambda d: d.pop("gt_parse"))
    assert error_of(path) == f"{path}: gt_parse: missing"


@pytest.mark.parametrize(("size", "message"), [
    ({"width": 0, "height": 1296}, "meta.image_size.width: expected a positive number, got 0"),
    ({"width": 864}, "meta.image_size.height: missing"),
    ({"width": 864, "height": "1296"}, 'meta.image_size.height: expected a positive number, got "1296"'),
    ("864x1296", 'meta.image_size: expected an object with width and height, got "864x1296"'),
])
def test_bad_image_size(broken, size, message):
    path = broken(lambda d: d["meta"].__setitem__("image_size", size))
    assert error_of(path) == f"{path}: {message}"


def test_bad_values_lines_and_quads(broken):
    path = broken(lambda d: d["gt_parse"]["total"].__setitem__("cashprice", 100000))
    assert error_of(path) == f"{path}: gt_parse.total.cashprice: expected a string, a list or an object, got 100000"
    path = broken(lambda d: d["gt_parse"].__setitem__("menu", ["THAI ICED TEA"]))
    assert error_of(path) == f'{path}: gt_parse.menu[0]: expected an object or a list of objects, got "THAI ICED TEA"'
    path = broken(lambda d: d["valid_line"][2]["words"][0]["quad"].pop("y3"))
    assert error_of(path).startswith(f"{path}: valid_line[2].words[0].quad: expected numbers x1..x4 and y1..y4, got {{")
    path = broken(lambda d: d["valid_line"][1].pop("group_id"))
    assert error_of(path) == f"{path}: valid_line[1].group_id: missing"
    path = broken(lambda d: d.pop("valid_line"))
    assert error_of(path) == f"{path}: valid_line: missing"


def test_v2_row_errors_name_line_id_and_field(tmp_path):
    good = receipt("receipt_00009")
    bad = receipt("receipt_00009")
    bad["meta"]["image_size"]["width"] = -1
    rows = v2_rows(tmp_path / "rows.jsonl", [good, bad])
    assert error_of(rows) == (f"{rows}: line 2 (id 1): ground_truth.meta.image_size.width: "
                              "expected a positive number, got -1")
    rows.write_text(json.dumps({"ground_truth": "{not json"}) + "\n", encoding="utf-8")
    assert error_of(rows) == (f"{rows}: line 1 (id 0): ground_truth: invalid JSON in the string: "
                              "Expecting property name enclosed in double quotes at character 2")
    rows.write_text('{"ground_truth": \n', encoding="utf-8")
    assert error_of(rows) == f"{rows}: line 1 (id 0): invalid JSON: Expecting value at column 18"


def test_bad_sources(tmp_path):
    assert error_of(tmp_path / "nothing") == f"{tmp_path / 'nothing'}: no such file or folder"
    assert error_of(tmp_path) == f"{tmp_path}: no .json files"
    other = tmp_path / "receipts.csv"
    other.write_text("x")
    assert error_of(other) == (f"{other}: expected a folder of .json files, a .json file "
                               "or a .jsonl file of CORD v2 rows")


def test_errors_come_while_iterating_after_the_good_receipts(tmp_path):
    for name in ("receipt_00000.json", "receipt_00001.json"):
        shutil.copy(receipts_dir() / name, tmp_path / name)
    (tmp_path / "receipt_00002.json").write_text("[]", encoding="utf-8")
    records, report = import_cord(tmp_path)
    assert [next(records).id, next(records).id] == ["receipt_00000", "receipt_00001"]
    with pytest.raises(InputError, match=r"receipt_00002\.json: expected a JSON object, got \[\]"):
        next(records)
    assert report.records == 2
