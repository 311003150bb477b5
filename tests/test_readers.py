"""Reading and writing canonical JSONL: every bad-input message, the two-file join, gzip, streaming."""

from __future__ import annotations

import gzip
import json
import os
import random
import sqlite3
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from rpa_sim.common.errors import InputError
from rpa_sim.records.models import KIERecord, VQARecord
from rpa_sim.records.readers import read_records, write_records


def kie(record_id: str, confidence: Any = 0.9) -> dict[str, Any]:
    """A complete one-file KIE record."""
    return {"id": record_id,
            "ground_truth": {"entities": [{"key": "total", "value": "4,000"}]},
            "prediction": {"entities": [{"key": "total", "value": "4.000", "confidence": confidence}]}}


def vqa(record_id: str) -> dict[str, Any]:
    """A complete one-file VQA record."""
    return {"id": record_id, "question": "How much?", "answers": ["12"],
            "prediction": {"answer": "12", "confidence": 0.8}}


def write(path: Path, *lines: dict[str, Any] | str | bytes) -> Path:
    """A file of the given lines: dicts as JSON, str as written, bytes as they are."""
    data = b"".join(line if isinstance(line, bytes)
                    else (json.dumps(line) if isinstance(line, dict) else line).encode() + b"\n"
                    for line in lines)
    path.write_bytes(data)
    return path


def error_of(path: Path, **options: Any) -> str:
    """The message of the InputError that reading ``path`` raises."""
    with pytest.raises(InputError) as info:
        list(read_records(path, **options))
    return str(info.value)


# --------------------------------------------------------------------------- one bad record
# A good first line fixes the task; the bad one is line 2. Each case: line, problem, summary kind.

BAD_LINES = {
    "invalid JSON": ('{"id": "r-2" "ground_truth": {}}',
                     "line 2: invalid JSON: Expecting ',' delimiter at column 14", "invalid JSON"),
    "cut line": ('{"id": "r-2", "ground_truth": {"entities": [',
                 "line 2: invalid JSON: Expecting value at column 45", "invalid JSON"),
    "not an object": ("[1, 2]", "line 2: expected a JSON object, got [1, 2]", "not a JSON object"),
    "missing id": ({"ground_truth": {}, "prediction": {}}, "line 2: id: missing", "missing id"),
    "numeric id": ({"id": 12, "ground_truth": {}},
                   "line 2: id: expected a non-empty string, got 12", "invalid id"),
    "empty id": ({"id": "", "ground_truth": {}},
                 'line 2: id: expected a non-empty string, got ""', "invalid id"),
    "duplicate id": (kie("r-1"), "line 2 (id r-1): duplicate id (first on line 1)", "duplicate id"),
    "confidence above 1": (kie("r-2", 1.7),
                           "line 2 (id r-2): prediction.entities[0].confidence: 1.7 is not in [0, 1]",
                           "confidence not in [0, 1]"),
    "confidence below 0": (kie("r-2", -0.25),
                           "line 2 (id r-2): prediction.entities[0].confidence: -0.25 is not in [0, 1]",
                           "confidence not in [0, 1]"),
    "confidence NaN": (json.dumps(kie("r-2", float("nan"))),
                       "line 2 (id r-2): prediction.entities[0].confidence: nan is not in [0, 1]",
                       "confidence not in [0, 1]"),
    "confidence Infinity": (json.dumps(kie("r-2", float("inf"))),
                            "line 2 (id r-2): prediction.entities[0].confidence: inf is not in [0, 1]",
                            "confidence not in [0, 1]"),
    "confidence -Infinity": (json.dumps(kie("r-2", float("-inf"))),
                             "line 2 (id r-2): prediction.entities[0].confidence: -inf is not in [0, 1]",
                             "confidence not in [0, 1]"),
    "confidence as a string": (kie("r-2", "0.9"),
                               'line 2 (id r-2): prediction.entities[0].confidence: expected a number, got "0.9"',
                               "invalid confidence"),
    "confidence as a boolean": (kie("r-2", True),
                                "line 2 (id r-2): prediction.entities[0].confidence: expected a number, got true",
                                "invalid confidence"),
    "no prediction": ({"id": "r-2", "ground_truth": {}},
                      "line 2 (id r-2): prediction: missing", "missing prediction"),
    "null prediction": ({"id": "r-2", "ground_truth": {}, "prediction": None},
                        "line 2 (id r-2): prediction: null", "missing prediction"),
    "no ground truth": ({"id": "r-2", "prediction": {"entities": []}},
                        "line 2 (id r-2): ground_truth: missing", "missing ground_truth"),
    "vqa in kie": (vqa("q-2"), "line 2 (id q-2): a vqa record, but the task is kie (inferred from line 1)",
                   "vqa record in kie data"),
    "not UTF-8": (b'{"id": "r-2", "x": "\xff"}\n',
                  "line 2: not valid UTF-8: byte 0xff at byte 21 of the line", "not UTF-8"),
    # deeper than Python's recursion limit: the JSON decoder gives up
    "nested thousands deep": ('{"id": "r-2", "x": ' + "[" * 100_000 + "]" * 100_000 + "}",
                              "line 2: invalid JSON: nested too deeply", "invalid JSON"),
    # deeper than the record validator's limit (200), within Python's
    "nested hundreds deep": ('{"id": "r-2", "x": ' + "[" * 300 + "]" * 300 + "}",
                             "line 2 (id r-2): invalid JSON: nested too deeply at column 220", "invalid JSON"),
    "not an object, nested deep": ("[" * 900 + "]" * 900,
                                   "line 2: expected a JSON object, got " + "[" * 80 + "...(1,800 characters)",
                                   "not a JSON object"),
}


@pytest.mark.parametrize("name", BAD_LINES)
def test_a_bad_record_raises_with_its_place(tmp_path: Path, name: str) -> None:
    line, problem, _ = BAD_LINES[name]
    path = write(tmp_path / "data.jsonl", kie("r-1"), line, kie("r-3"))
    assert error_of(path) == f"{path}: {problem}"


@pytest.mark.parametrize("name", BAD_LINES)
def test_a_bad_record_is_skipped_on_request(tmp_path: Path, name: str) -> None:
    line, problem, kind = BAD_LINES[name]
    path = write(tmp_path / "data.jsonl", kie("r-1"), line, kie("r-3"))
    stream = read_records(path, skip_invalid=True)
    assert [record.id for record in stream] == ["r-1", "r-3"]
    assert [str(error) for error in stream.skipped] == [f"{path}: {problem}"]
    assert stream.count == 2
    assert stream.skipped_summary() == f"skipped 1 record: 1 {kind}"


DIGITS_LIMIT = 4300  # Python's limit on the digits of an integer read from text; the validator's too


@pytest.mark.parametrize(("before", "after"), [
    ('{"id": "r-2", "ground_truth": {}, "prediction": {"entities": [{"key": "k", "value": "v", "confidence": ', "}]}}"),
    ('{"id": "r-2", "ground_truth": {}, "prediction": {}, "note": ', "}"),
    ('{"id": ', "}"),
])
@pytest.mark.parametrize("skip_invalid", [False, True])
def test_a_number_of_thousands_of_digits(tmp_path: Path, before: str, after: str, skip_invalid: bool) -> None:
    path = write(tmp_path / "data.jsonl", kie("r-1"), before + "1" * 5000 + after, kie("r-3"))
    if before.endswith('"id": '):
        problem = (f"line 2: invalid JSON: Exceeds the limit ({DIGITS_LIMIT} digits) for integer string conversion: "
                   "value has 5000 digits; use sys.set_int_max_str_digits() to increase the limit")
    else:  # the validator stops past the first digit beyond the limit
        problem = f"line 2 (id r-2): invalid JSON: number out of range at column {len(before) + DIGITS_LIMIT + 2}"
    if skip_invalid:
        stream = read_records(path, skip_invalid=True)
        assert [record.id for record in stream] == ["r-1", "r-3"]
        assert [str(error) for error in stream.skipped] == [f"{path}: {problem}"]
    else:
        assert error_of(path) == f"{path}: {problem}"


def test_the_field_path_is_the_raw_json_one(tmp_path: Path) -> None:
    # 811 good lines, then a confidence in the third bare-list group: the FORMATS.md example.
    bad = {"id": "r-0231", "ground_truth": {},
           "prediction": {"groups": [[], [], [{"key": "menu.nm", "value": "LATTE", "confidence": 1.7}]]}}
    path = write(tmp_path / "data.jsonl", *(kie(f"ok-{i}") for i in range(811)), bad)
    assert error_of(path) == f"{path}: line 812 (id r-0231): prediction.groups[2][0].confidence: 1.7 is not in [0, 1]"


def test_a_group_given_as_an_object_keeps_its_entities_step(tmp_path: Path) -> None:
    bad = {"id": "r-1", "ground_truth": {},
           "prediction": {"groups": [{"name": "menu", "entities": [{"key": "k", "value": "v",
                                                                   "confidence": float("nan")}]}]}}
    path = write(tmp_path / "data.jsonl", json.dumps(bad))
    assert error_of(path) == (f"{path}: line 1 (id r-1): prediction.groups[0].entities[0].confidence: "
                              "nan is not in [0, 1]")


def document(bbox: Any, **word: Any) -> dict[str, Any]:
    return {"pages": [{"width": 100, "height": 100, "words": [{"text": "12", "bbox": bbox, **word}]}]}


@pytest.mark.parametrize(("bbox", "word", "problem"), [
    ([10, 0, 5, 20], {}, "bbox: [10, 0, 5, 20] has x1 < x0"),
    ([0, 30, 5, 20], {}, "bbox: [0, 30, 5, 20] has y1 < y0"),
    ([0, 0, 5], {}, "bbox: expected [x0, y0, x1, y1], got [0, 0, 5]"),
    ([0, 0, 5, 5, 9], {}, "bbox: expected [x0, y0, x1, y1], got [0, 0, 5, 5, 9]"),
    ("0 0 5 5", {}, 'bbox: expected [x0, y0, x1, y1], got "0 0 5 5"'),
    ([0, "a", 5, 5], {}, 'bbox[1]: expected a number, got "a"'),
    ([0, 0, 5, 5], {"segment": 1.5}, "segment: expected an integer or a string, got 1.5"),
    ([0, 0, 5, 5], {"text": 12}, "text: expected a string, got 12"),
])
def test_document_problems(tmp_path: Path, bbox: Any, word: dict[str, Any], problem: str) -> None:
    path = write(tmp_path / "data.jsonl", {**kie("r-1"), "document": document(bbox, **word)})
    assert error_of(path) == f"{path}: line 1 (id r-1): document.pages[0].words[0].{problem}"


@pytest.mark.parametrize(("record", "problem"), [
    ({"answers": []}, "answers: expected at least 1 item, got []"),
    ({"answers": "12"}, 'answers: expected a list, got "12"'),
    ({"answers": None}, "answers: null"),
    ({"prediction": {"confidence": 0.5}}, "prediction.answer: missing"),
    ({"prediction": ["12"]}, 'prediction: expected an object, got ["12"]'),
    ({"evidence": [{"page": -1, "bbox": [0, 0, 1, 1]}]}, "evidence[0].page: -1 is less than 0"),
    ({"evidence": [{"page": 0, "bbox": [9, 0, 1, 1]}]}, "evidence[0].bbox: [9, 0, 1, 1] has x1 < x0"),
    ({"document": {"pages": [{"width": 0, "height": 10}]}}, "document.pages[0].width: 0 is not greater than 0"),
])
def test_vqa_problems(tmp_path: Path, record: dict[str, Any], problem: str) -> None:
    path = write(tmp_path / "data.jsonl", {**vqa("q-1"), **record})
    assert error_of(path) == f"{path}: line 1 (id q-1): {problem}"


def test_a_group_that_is_neither_list_nor_object(tmp_path: Path) -> None:
    path = write(tmp_path / "data.jsonl", {"id": "r-1", "ground_truth": {"groups": [5]}, "prediction": {}})
    assert error_of(path) == (f"{path}: line 1 (id r-1): ground_truth.groups[0]: "
                              "expected a list of entities or an object, got 5")


def test_long_bad_values_are_cut(tmp_path: Path) -> None:
    path = write(tmp_path / "data.jsonl", {**vqa("q-1"), "question": ["word"] * 40})
    assert error_of(path) == (f'{path}: line 1 (id q-1): question: expected a string, got '
                              f'["word", "word", "word", "word", "word", "word", "word", "word", "word", "word",'
                              f'...(320 characters)')


# --------------------------------------------------------------------------- lines and files


def test_blank_lines_are_skipped_and_counted(tmp_path: Path) -> None:
    path = write(tmp_path / "data.jsonl", "", kie("r-1"), "   ", "\t\r", kie("r-5", 2.0), "")
    assert error_of(path) == f"{path}: line 5 (id r-5): prediction.entities[0].confidence: 2.0 is not in [0, 1]"


def test_crlf_line_ends_and_a_byte_order_mark_are_accepted(tmp_path: Path) -> None:
    path = write(tmp_path / "data.jsonl", b"\xef\xbb\xbf" + json.dumps(kie("r-1")).encode() + b"\r\n",
                 json.dumps(kie("r-2")).encode() + b"\r\n")
    assert [record.id for record in read_records(path)] == ["r-1", "r-2"]


@pytest.mark.parametrize("lines", [(), ("",), ("", "  ", "\t")], ids=["empty", "one blank", "blanks"])
@pytest.mark.parametrize("skip_invalid", [False, True])
def test_a_file_without_records_is_an_error(tmp_path: Path, lines: tuple[str, ...], skip_invalid: bool) -> None:
    path = write(tmp_path / "data.jsonl", *lines)
    assert error_of(path, skip_invalid=skip_invalid) == f"{path}: no records"


def test_a_file_of_bad_records_only_is_an_error_even_when_skipping(tmp_path: Path) -> None:
    path = write(tmp_path / "data.jsonl", kie("r-1", 3.0), kie("r-2", 4.0))
    stream = read_records(path, skip_invalid=True)
    with pytest.raises(InputError) as info:
        list(stream)
    assert str(info.value) == f"{path}: no valid records: 2 skipped"
    assert stream.skipped_summary() == "skipped 2 records: 2 confidence not in [0, 1]"


@pytest.mark.parametrize("skip_invalid", [False, True])
def test_a_missing_file(tmp_path: Path, skip_invalid: bool) -> None:
    path = tmp_path / "nowhere.jsonl"
    assert error_of(path, skip_invalid=skip_invalid) == f"{path}: no such file"


def test_a_directory(tmp_path: Path) -> None:
    assert error_of(tmp_path) == f"{tmp_path}: is a folder, not a file"


def test_a_named_pipe_is_refused_before_it_is_opened(tmp_path: Path) -> None:
    # opening a pipe would wait for a writer, and records are read more than once
    fifo = tmp_path / "records"
    os.mkfifo(fifo)
    assert error_of(fifo) == (f"{fifo}: is not a regular file (a pipe or a device?): records are read more than "
                              "once, so save them to a file first")


def test_gzip_is_told_by_its_bytes_not_its_name(tmp_path: Path) -> None:
    content = (json.dumps(kie("r-1")) + "\n").encode()
    packed = tmp_path / "packed.jsonl"
    packed.write_bytes(gzip.compress(content))
    plain = tmp_path / "plain.jsonl.gz"
    plain.write_bytes(content)
    assert [record.id for record in read_records(packed)] == ["r-1"]
    assert [record.id for record in read_records(plain)] == ["r-1"]


@pytest.mark.parametrize("skip_invalid", [False, True])
def test_a_truncated_gzip_file_names_its_last_complete_line(tmp_path: Path, skip_invalid: bool) -> None:
    content = "".join(json.dumps(kie(f"r-{i}")) + "\n" for i in range(1, 2001)).encode()
    packed = gzip.compress(content)
    path = tmp_path / "data.jsonl.gz"
    path.write_bytes(packed[:len(packed) // 2])
    ids = []
    with pytest.raises(InputError) as info:
        for record in read_records(path, skip_invalid=skip_invalid):
            ids.append(record.id)
    last = len(ids)
    assert ids == [f"r-{i}" for i in range(1, last + 1)] and 0 < last < 2000
    assert str(info.value) == f"{path}: truncated gzip file: the last complete line is {last}"


def test_a_gzip_file_cut_inside_its_header(tmp_path: Path) -> None:
    path = tmp_path / "data.jsonl.gz"
    path.write_bytes(gzip.compress(b"{}\n")[:5])
    assert error_of(path) == f"{path}: truncated gzip file: no line is complete"


def test_a_corrupt_gzip_file(tmp_path: Path) -> None:
    packed = bytearray(gzip.compress((json.dumps(kie("r-1")) + "\n").encode()))
    packed[-5] ^= 0xFF  # the stored CRC
    path = tmp_path / "data.jsonl.gz"
    path.write_bytes(bytes(packed))
    assert error_of(path).startswith(f"{path}: corrupt gzip file after line 1: CRC check failed")


def test_reading_changes_nothing_on_disk(tmp_path: Path) -> None:
    truth = write(tmp_path / "truth.jsonl", {"id": "a", "ground_truth": {}}, {"id": "b", "ground_truth": {}})
    preds = write(tmp_path / "preds.jsonl", {"id": "b", "prediction": {}}, {"id": "a", "prediction": {}})
    before = {path: (path.read_bytes(), path.stat().st_mtime_ns) for path in (truth, preds)}
    assert len(list(read_records(truth, predictions=preds))) == 2
    assert {path: (path.read_bytes(), path.stat().st_mtime_ns) for path in (truth, preds)} == before
    assert sorted(tmp_path.iterdir()) == [preds, truth]


# --------------------------------------------------------------------------- task


def test_the_task_is_inferred_from_the_first_record(tmp_path: Path) -> None:
    assert read_records(write(tmp_path / "k.jsonl", kie("r-1"))).task == "kie"
    assert read_records(write(tmp_path / "v.jsonl", vqa("q-1"))).task == "vqa"


def test_a_record_that_cannot_tell_defers_to_the_next(tmp_path: Path) -> None:
    path = write(tmp_path / "data.jsonl", {"id": "q-0", "document": {"pages": []}}, vqa("q-1"))
    stream = read_records(path, skip_invalid=True)
    assert stream.task == "vqa"
    assert [record.id for record in stream] == ["q-1"]
    assert [str(error) for error in stream.skipped] == [f"{path}: line 1 (id q-0): answers: missing"]


def test_a_bad_first_line_is_raised_while_inferring(tmp_path: Path) -> None:
    path = write(tmp_path / "data.jsonl", "{oops", vqa("q-2"))
    with pytest.raises(InputError) as info:
        read_records(path)
    assert str(info.value) == (f"{path}: line 1: invalid JSON: "
                               "Expecting property name enclosed in double quotes at column 2")
    assert read_records(path, skip_invalid=True).task == "vqa"


def test_no_record_tells_the_task(tmp_path: Path) -> None:
    path = write(tmp_path / "data.jsonl", {"id": "x-1"}, {"id": "x-2", "prediction": {}})
    message = "no record tells whether the task is kie or vqa; give the task explicitly"
    assert error_of(path, skip_invalid=True) == f"{path}: {message}"
    assert error_of(path, task="kie") == f"{path}: line 1 (id x-1): ground_truth: missing"


def test_an_explicit_task_that_contradicts_the_records(tmp_path: Path) -> None:
    path = write(tmp_path / "data.jsonl", kie("r-1"), kie("r-2"))
    assert error_of(path, task="vqa") == (f"{path}: line 1 (id r-1): "
                                          "a kie record, but the task is vqa (given explicitly)")
    stream = read_records(path, task="vqa", skip_invalid=True)
    with pytest.raises(InputError):
        list(stream)
    assert stream.skipped_summary() == "skipped 2 records: 2 kie record in vqa data"


def test_an_unknown_task_is_a_programming_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="task must be 'kie' or 'vqa', got 'ocr'"):
        read_records(write(tmp_path / "data.jsonl", kie("r-1")), task="ocr")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- skipping


def test_skipped_records_are_counted_by_kind(tmp_path: Path) -> None:
    path = write(tmp_path / "data.jsonl", kie("r-1", 1.5), kie("r-2"), kie("r-2"), kie("r-3", -1), kie("r-4"))
    stream = read_records(path, skip_invalid=True)
    assert [record.id for record in stream] == ["r-2", "r-4"]
    assert stream.count == 2
    assert stream.skipped_summary() == "skipped 3 records: 2 confidence not in [0, 1], 1 duplicate id"
    # A second pass reads again from the start instead of adding up.
    assert [record.id for record in stream] == ["r-2", "r-4"]
    assert len(stream.skipped) == 3


def test_nothing_skipped(tmp_path: Path) -> None:
    stream = read_records(write(tmp_path / "data.jsonl", kie("r-1")), skip_invalid=True)
    assert len(list(stream)) == 1
    assert stream.skipped == [] and stream.skipped_summary() == "skipped 0 records"


# --------------------------------------------------------------------------- two files


def kie_sides(record_id: str, confidence: float = 0.9) -> tuple[dict[str, Any], dict[str, Any]]:
    record = kie(record_id, confidence)
    return ({"id": record_id, "ground_truth": record["ground_truth"]},
            {"id": record_id, "prediction": record["prediction"]})


def two_files(tmp_path: Path, truths: list[Any], preds: list[Any]) -> tuple[Path, Path]:
    return write(tmp_path / "truth.jsonl", *truths), write(tmp_path / "preds.jsonl", *preds)


def no_index(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("files in the same order need no index")
    monkeypatch.setattr(sqlite3, "connect", refuse)


def test_files_in_the_same_order_are_joined_in_lockstep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sides = [kie_sides(f"r-{i}", i / 10) for i in range(10)]
    truth, preds = two_files(tmp_path, [t for t, _ in sides], [p for _, p in sides])
    no_index(monkeypatch)
    records = list(read_records(truth, predictions=preds))
    assert records == [KIERecord.model_validate(kie(f"r-{i}", i / 10)) for i in range(10)]


@pytest.mark.parametrize("order", [[0, 1, 9, 8, 7, 6, 5, 4, 3, 2], random.Random(7).sample(range(10), 10)],
                         ids=["breaks after two", "shuffled"])
def test_files_in_other_orders_are_joined_through_the_index(tmp_path: Path, order: list[int]) -> None:
    sides = [kie_sides(f"r-{i}", i / 10) for i in range(10)]
    truth, preds = two_files(tmp_path, [t for t, _ in sides], [sides[i][1] for i in order])
    records = list(read_records(truth, predictions=preds))
    assert records == [KIERecord.model_validate(kie(f"r-{i}", i / 10)) for i in range(10)]


def test_vqa_sides_with_the_document_on_the_prediction_side(tmp_path: Path) -> None:
    record = {**vqa("q-1"), "document": document([0, 0, 5, 5])}
    truth_side = {key: record[key] for key in ("id", "question", "answers")}
    pred_side = {key: record[key] for key in ("id", "prediction", "document")}
    truth, preds = two_files(tmp_path, [truth_side], [pred_side])
    stream = read_records(truth, predictions=preds)
    assert stream.task == "vqa"
    assert list(stream) == [VQARecord.model_validate(record)]


def test_the_task_can_come_from_the_predictions_file(tmp_path: Path) -> None:
    truth, preds = two_files(tmp_path, [{"id": "q-1"}], [{"id": "q-1", "prediction": {"answer": "1", "confidence": 1}}])
    stream = read_records(truth, predictions=preds)
    assert stream.task == "vqa"
    assert error_of(truth, predictions=preds) == f"{truth}: line 1 (id q-1): answers: missing"


TWO_FILE_CASES = {
    "prediction without ground truth": (
        ["r-1", "r-2"], ["r-1", "r-9", "r-2"],
        "preds.jsonl: line 2 (id r-9): no ground truth with this id in {truth}",
        "prediction without ground truth", ["r-1", "r-2"]),
    "ground truth without prediction": (
        ["r-1", "r-2", "r-3"], ["r-1", "r-3"],
        "truth.jsonl: line 2 (id r-2): no prediction with this id in {preds}",
        "ground truth without prediction", ["r-1", "r-3"]),
    "ground truth without prediction at the end": (
        ["r-1", "r-2", "r-3"], ["r-1", "r-2"],
        "truth.jsonl: line 3 (id r-3): no prediction with this id in {preds}",
        "ground truth without prediction", ["r-1", "r-2"]),
    "duplicate prediction id": (
        ["r-1", "r-2"], ["r-1", "r-2", "r-1"],
        "preds.jsonl: line 3 (id r-1): duplicate id (first on line 1)", "duplicate id", ["r-1", "r-2"]),
    "duplicate ground-truth id": (
        ["r-1", "r-1", "r-2"], ["r-1", "r-2"],
        "truth.jsonl: line 2 (id r-1): duplicate id (first on line 1)", "duplicate id", ["r-1", "r-2"]),
}


@pytest.mark.parametrize("name", TWO_FILE_CASES)
def test_join_problems(tmp_path: Path, name: str) -> None:
    truth_ids, pred_ids, problem, kind, kept = TWO_FILE_CASES[name]
    truth, preds = two_files(tmp_path, [kie_sides(i)[0] for i in truth_ids], [kie_sides(i)[1] for i in pred_ids])
    message = f"{tmp_path}/{problem.format(truth=truth, preds=preds)}"
    assert error_of(truth, predictions=preds) == message
    stream = read_records(truth, predictions=preds, skip_invalid=True)
    assert [record.id for record in stream] == kept
    assert [str(error) for error in stream.skipped] == [message]
    assert stream.skipped_summary() == f"skipped 1 record: 1 {kind}"


def test_the_same_side_in_both_files(tmp_path: Path) -> None:
    truth_side, pred_side = kie_sides("r-1")
    truth, preds = two_files(tmp_path, [{**truth_side, **pred_side}], [pred_side])
    assert error_of(truth, predictions=preds) == (
        f"{preds}: line 1 (id r-1): prediction: also in {truth} line 1; each file holds only its side")


def test_unknown_fields_may_be_in_both_files(tmp_path: Path) -> None:
    truth_side, pred_side = kie_sides("r-1")
    truth, preds = two_files(tmp_path, [{**truth_side, "source": "a"}], [{**pred_side, "source": "b"}])
    assert list(read_records(truth, predictions=preds)) == [KIERecord.model_validate(kie("r-1"))]


def test_a_prediction_record_without_its_side(tmp_path: Path) -> None:
    truth, preds = two_files(tmp_path, [kie_sides("r-1")[0]], [{"id": "r-1"}])
    assert error_of(truth, predictions=preds) == f"{preds}: line 1 (id r-1): prediction: missing"


def test_problems_are_placed_in_the_file_that_holds_the_field(tmp_path: Path) -> None:
    truth_side, pred_side = kie_sides("r-1", 1.25)
    truth, preds = two_files(tmp_path, [truth_side], [{"id": "p-0", "prediction": {}}, pred_side])
    assert error_of(truth, predictions=preds) == (
        f"{preds}: line 2 (id r-1): prediction.entities[0].confidence: 1.25 is not in [0, 1]")
    bad_truth = {"id": "r-1", "ground_truth": {"entities": [{"key": "total", "value": 4000}]}}
    truth, preds = two_files(tmp_path, [bad_truth], [kie_sides("r-1")[1]])
    assert error_of(truth, predictions=preds) == (
        f"{truth}: line 1 (id r-1): ground_truth.entities[0].value: expected a string, got 4000")


def test_bad_lines_in_the_predictions_file(tmp_path: Path) -> None:
    truth, preds = two_files(tmp_path, [kie_sides("r-1")[0], kie_sides("r-2")[0]],
                             [kie_sides("r-1")[1], "not json"])
    assert error_of(truth, predictions=preds) == f"{preds}: line 2: invalid JSON: Expecting value at column 1"
    stream = read_records(truth, predictions=preds, skip_invalid=True)
    assert [record.id for record in stream] == ["r-1"]
    assert stream.skipped_summary() == "skipped 2 records: 1 invalid JSON, 1 ground truth without prediction"


def test_an_empty_predictions_file(tmp_path: Path) -> None:
    truth, preds = two_files(tmp_path, [kie_sides("r-1")[0]], [])
    assert error_of(truth, predictions=preds, skip_invalid=True) == f"{preds}: no records"


# --------------------------------------------------------------------------- streaming


def test_reading_streams_in_modest_memory(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    with path.open("w") as handle:
        for i in range(10_000):
            record = kie(f"r-{i:05d}", (i % 100) / 100)
            for side in ("ground_truth", "prediction"):
                record[side]["entities"][0]["value"] = "a long address " * 70
            handle.write(json.dumps(record) + "\n")
    size = path.stat().st_size
    tracemalloc.start()
    try:
        count = sum(1 for _ in read_records(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 10_000
    # What grows is the map of ids to lines (about 150 bytes an id), not the records.
    assert peak < size / 8, (peak, size)


# --------------------------------------------------------------------------- writing


def sample_records() -> list[KIERecord]:
    grouped = {"id": "r-2", "ground_truth": {"groups": [[{"key": "menu.nm", "value": "LATTE"}]]},
               "prediction": {"groups": [{"name": "menu", "entities": [
                   {"key": "menu.nm", "value": "LATTÉ", "confidence": 0.5, "grounding": 0.25}]}]},
               "document": document([1, 2, 3, 4], segment=7)}
    return [KIERecord.model_validate(kie("r-1")), KIERecord.model_validate(grouped)]


@pytest.mark.parametrize("name", ["out.jsonl", "out.jsonl.gz"])
def test_write_then_read_gives_the_same_records(tmp_path: Path, name: str) -> None:
    records = sample_records()
    assert write_records(iter(records), tmp_path / name) == 2
    assert list(read_records(tmp_path / name)) == records


def test_written_records_are_canonical(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    write_records(sample_records(), path)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == ('{"id":"r-1","ground_truth":{"entities":[{"key":"total","value":"4,000"}],"groups":[]},'
                        '"prediction":{"entities":[{"key":"total","value":"4.000","confidence":0.9}],"groups":[]}}')
    assert lines[1] == ('{"id":"r-2","ground_truth":{"entities":[],"groups":[[{"key":"menu.nm","value":"LATTE"}]]},'
                        '"prediction":{"entities":[],"groups":[{"name":"menu","entities":[{"key":"menu.nm",'
                        '"value":"LATTÉ","confidence":0.5,"grounding":0.25}]}]},"document":{"pages":[{"width":100.0,'
                        '"height":100.0,"words":[{"text":"12","bbox":[1.0,2.0,3.0,4.0],"segment":7}]}]}}')


@pytest.mark.parametrize("name", ["out.jsonl", "out.jsonl.gz"])
def test_writing_is_byte_for_byte_reproducible(tmp_path: Path, name: str) -> None:
    first, second = tmp_path / "a" / name, tmp_path / "b" / name
    first.parent.mkdir()
    second.parent.mkdir()
    write_records(sample_records(), first)
    write_records(sample_records(), second)
    assert first.read_bytes() == second.read_bytes()


def test_the_gzip_header_has_no_name_and_no_time(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl.gz"
    write_records(sample_records(), path)
    header = path.read_bytes()[:10]
    assert header[:3] == b"\x1f\x8b\x08"
    assert header[3] & 0x08 == 0  # FNAME
    assert header[4:8] == b"\0\0\0\0"  # MTIME


def test_an_interrupted_write_leaves_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    path.write_text("old\n")

    def failing():
        yield sample_records()[0]
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError, match="interrupted"):
        write_records(failing(), path)
    assert path.read_text() == "old\n"
    assert list(tmp_path.iterdir()) == [path]


def test_a_null_confidence_is_written_and_reads_back(tmp_path: Path) -> None:
    # a null confidence means unknown; dropping it, as other None fields are, would leave "confidence: missing"
    path = tmp_path / "out.jsonl"
    records = [KIERecord.model_validate({"id": "r", "prediction": {
                   "entities": [{"key": "total", "value": "9", "confidence": None, "grounding": None}],
                   "groups": [[{"key": "item", "value": "tea", "confidence": 0.5}]]}}),
               VQARecord.model_validate({"id": "q", "prediction": {"answer": "12", "confidence": None}})]
    assert write_records(records, path) == 2
    assert path.read_text().splitlines() == [
        ('{"id":"r","prediction":{"entities":[{"key":"total","value":"9","confidence":null}],'
         '"groups":[[{"key":"item","value":"tea","confidence":0.5}]]}}'),
        '{"id":"q","prediction":{"answer":"12","confidence":null}}']
    assert [type(r).model_validate_json(line) for r, line in zip(records, path.read_text().splitlines())] == records
