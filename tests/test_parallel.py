"""Evaluation on several processes gives what one gives: the table, the skipped records, the first error."""

from __future__ import annotations

import dataclasses
import gzip
import json
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rpa_sim.common.errors import InputError
from rpa_sim.evaluate import local as parallel
from rpa_sim.evaluate.load import load_data
from rpa_sim.evaluate.outcomes import evaluate_kie, evaluate_vqa
from rpa_sim.records.readers import read_records
from rpa_sim.records.synthetic import docvqa_dicts, generate_docvqa, generate_receipts, receipt_dicts, write_generated
from tests.conftest import kill_group, send_signal

WORKERS = [1, 2, 3]


def assert_same_table(table: Any, reference: Any) -> None:
    """Every column and setting equal, bytes for the numbers (NaNs included), dtypes too."""
    assert type(table) is type(reference)
    for field in dataclasses.fields(table):
        value, expected = getattr(table, field.name), getattr(reference, field.name)
        if isinstance(value, np.ndarray):
            assert (value.dtype, value.shape) == (expected.dtype, expected.shape), field.name
            if value.dtype.kind == "T":
                assert value.tolist() == expected.tolist(), field.name
            else:
                assert value.tobytes() == expected.tobytes(), field.name
        else:
            assert value == expected, field.name


def lines_of(records: Any) -> list[str]:
    return [json.dumps(record, ensure_ascii=False) for record in records]


@pytest.fixture(scope="module")
def receipts() -> list[str]:
    """Generated receipts with OCR pages, some with bare-list groups and given groundings (valid, all)."""
    lines = []
    for i, record in enumerate(receipt_dicts(60, seed=11)):
        if i % 5 == 0:  # an unnamed group, written as a bare list
            record["prediction"]["groups"][0] = record["prediction"]["groups"][0]["entities"]
        if i % 7 == 0:
            for entity in record["prediction"]["entities"]:
                entity["grounding"] = 0.5
        lines.append(json.dumps(record, ensure_ascii=False))
    return lines


@pytest.fixture(scope="module")
def questions() -> list[str]:
    return lines_of(docvqa_dicts(60, seed=12))


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def reference_table(path: Path, **options: Any) -> Any:
    """Today's one-pass evaluation of what iterating the stream yields (pydantic records)."""
    records = list(read_records(path, **options))
    return evaluate_kie(records) if records and records[0].__class__.__name__ == "KIERecord" else evaluate_vqa(records)


def evaluated(path: Path, *, workers: int, batch_size: int = 7, **options: Any) -> tuple[Any, Any]:
    stream = read_records(path, **options)
    table = parallel.evaluate_stream(stream, parallel.evaluation(stream.task), workers=workers, batch_size=batch_size)
    return table, stream


# --------------------------------------------------------------------------- the table


@pytest.mark.parametrize("workers", WORKERS)
@pytest.mark.parametrize("data", ["receipts", "questions"])
def test_the_table_is_that_of_one_pass(tmp_path: Path, request: pytest.FixtureRequest, data: str,
                                       workers: int) -> None:
    path = write(tmp_path / "data.jsonl", request.getfixturevalue(data))
    table, stream = evaluated(path, workers=workers)
    assert_same_table(table, reference_table(path))
    assert (stream.count, stream.skipped) == (60, [])


@pytest.mark.parametrize("workers", WORKERS)
def test_load_data_with_the_default_batches(tmp_path: Path, workers: int) -> None:
    path = tmp_path / "receipts.jsonl.gz"
    write_generated(receipt_dicts(parallel.BATCH_SIZE + 40, seed=5), path)  # two batches
    loaded = load_data(path, workers=workers)
    assert_same_table(loaded.table, reference_table(path))
    assert (loaded.skipped, loaded.skipped_summary) == ([], "skipped 0 records")


@pytest.mark.parametrize("workers", WORKERS)
@pytest.mark.parametrize("task", ["kie", "vqa"])
def test_records_given_directly(workers: int, task: str) -> None:
    # pydantic records, sent to the workers as JSON and read back by the fast path
    records = list(generate_receipts(30, seed=3) if task == "kie" else generate_docvqa(30, seed=3))
    reference = evaluate_kie(records) if task == "kie" else evaluate_vqa(records)
    table = parallel.evaluate_records(records, parallel.evaluation(task), workers=workers, batch_size=4)
    assert_same_table(table, reference)
    assert_same_table(parallel.evaluate_records(records, parallel.evaluation(task), workers=workers), reference)


def test_fast_path_records_given_directly(tmp_path: Path, questions: list[str]) -> None:
    (batch,) = read_records(write(tmp_path / "data.jsonl", questions)).batches(100)
    records, _, _ = batch.validate()
    table = parallel.evaluate_records(records, parallel.evaluation("vqa"), workers=2, batch_size=7)
    assert_same_table(table, evaluate_vqa(records))


def test_no_records_given_directly() -> None:
    assert_same_table(parallel.evaluate_records([], parallel.evaluation("vqa"), workers=2), evaluate_vqa([]))


# --------------------------------------------------------------------------- bad records

BAD = {
    2: "{not json",
    9: json.dumps({"id": "r-bad-1", "ground_truth": {}, "prediction": {"entities": [
        {"key": "k", "value": "v", "confidence": 1.5}]}}),
    10: json.dumps({"id": "r-bad-2", "ground_truth": {}}),
    23: "[1, 2]",
    30: json.dumps({"id": "q-1", "answers": ["1"], "prediction": {"answer": "1", "confidence": 1}}),
    44: json.dumps({"ground_truth": {}, "prediction": {}}),
    45: json.dumps({"id": "r-nan", "ground_truth": {}, "prediction": {"entities": [
        {"key": "k", "value": "v", "confidence": float("nan")}]}}),
}


def with_bad_lines(lines: list[str]) -> list[str]:
    """Bad lines spread over several batches of 7, a duplicate id, and valid records only the model reads."""
    mixed = list(lines)
    mixed[5] = json.dumps({**json.loads(mixed[5]), "source": "an unknown field"})
    mixed[6] = mixed[6][:-1] + ', "note": NaN}'
    mixed.insert(40, lines[12])  # a duplicate id
    for position, line in sorted(BAD.items()):
        mixed.insert(position, line)
    return mixed


@pytest.mark.parametrize("workers", WORKERS)
def test_skipped_records_are_those_of_one_pass_in_order(tmp_path: Path, receipts: list[str], workers: int) -> None:
    path = write(tmp_path / "data.jsonl", with_bad_lines(receipts))
    table, stream = evaluated(path, workers=workers, skip_invalid=True)
    iterated = read_records(path, skip_invalid=True)
    assert_same_table(table, evaluate_kie(list(iterated)))
    assert [str(e) for e in stream.skipped] == [str(e) for e in iterated.skipped]
    assert len(stream.skipped) == len(BAD) + 1
    assert stream.skipped_summary() == iterated.skipped_summary()
    assert stream.count == iterated.count == 60


@pytest.mark.parametrize("workers", WORKERS)
@pytest.mark.parametrize("first_bad", [2, 9, 45])
def test_the_first_error_is_that_of_one_pass(tmp_path: Path, receipts: list[str], workers: int,
                                             first_bad: int) -> None:
    lines = list(receipts)
    for position in (first_bad, 50):
        lines.insert(position, BAD.get(position, "{}"))
    path = write(tmp_path / "data.jsonl", lines)
    with pytest.raises(InputError) as one_pass:
        list(read_records(path))
    with pytest.raises(InputError) as batched:
        evaluated(path, workers=workers)
    assert str(batched.value) == str(one_pass.value)
    assert f"line {first_bad + 1}" in str(batched.value)
    assert multiprocessing.active_children() == []


@pytest.mark.parametrize("workers", WORKERS)
@pytest.mark.parametrize("skip_invalid", [False, True])
def test_a_truncated_file_after_a_bad_record(tmp_path: Path, receipts: list[str], workers: int,
                                             skip_invalid: bool) -> None:
    lines = list(receipts)
    lines.insert(20, BAD[9])
    packed = gzip.compress("".join(line + "\n" for line in lines).encode())
    path = tmp_path / "data.jsonl.gz"
    path.write_bytes(packed[:int(len(packed) * 0.8)])
    with pytest.raises(InputError) as one_pass:
        list(read_records(path, skip_invalid=skip_invalid))
    with pytest.raises(InputError) as batched:
        evaluated(path, workers=workers, skip_invalid=skip_invalid)
    assert str(batched.value) == str(one_pass.value)
    expected = "truncated gzip file" if skip_invalid else "line 21 (id r-bad-1)"
    assert expected in str(batched.value)


def test_no_valid_record(tmp_path: Path) -> None:
    path = write(tmp_path / "data.jsonl", [BAD[9]] * 3 + [BAD[10]] * 20)
    with pytest.raises(InputError, match="no valid records: 23 skipped"):
        evaluated(path, workers=2, skip_invalid=True)


# --------------------------------------------------------------------------- two files


@pytest.mark.parametrize("workers", WORKERS)
@pytest.mark.parametrize("order", ["same", "shuffled"])
def test_two_files(tmp_path: Path, receipts: list[str], workers: int, order: str) -> None:
    truths, preds = [], []
    for line in receipts:
        record = json.loads(line)
        truths.append(json.dumps({"id": record["id"], "ground_truth": record["ground_truth"],
                                  "document": record["document"]}))
        preds.append(json.dumps({"id": record["id"], "prediction": record["prediction"]}))
    if order == "shuffled":
        random.Random(4).shuffle(preds)
    preds.insert(17, "not json")
    preds.append(json.dumps({"id": "nobody", "prediction": {}}))
    truth, pred = write(tmp_path / "truth.jsonl", truths), write(tmp_path / "preds.jsonl", preds)
    stream = read_records(truth, predictions=pred, skip_invalid=True)
    table = parallel.evaluate_stream(stream, parallel.evaluation("kie"), workers=workers, batch_size=7)
    iterated = read_records(truth, predictions=pred, skip_invalid=True)
    assert_same_table(table, evaluate_kie(list(iterated)))
    assert [str(e) for e in stream.skipped] == [str(e) for e in iterated.skipped]
    assert stream.skipped_summary() == "skipped 2 records: 1 invalid JSON, 1 prediction without ground truth"


# --------------------------------------------------------------------------- processes


class NoPool:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise AssertionError("no process may start")


def test_one_worker_starts_no_process(tmp_path: Path, receipts: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "ProcessPoolExecutor", NoPool)
    path = write(tmp_path / "data.jsonl", receipts)
    table, _ = evaluated(path, workers=1)
    assert len(table.document_ids) == 60


def test_a_single_batch_starts_no_process(tmp_path: Path, receipts: list[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "ProcessPoolExecutor", NoPool)
    path = write(tmp_path / "data.jsonl", receipts)
    table, _ = evaluated(path, workers=3, batch_size=60)
    assert len(table.document_ids) == 60


def test_workers_started_with_spawn(tmp_path: Path, questions: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # what a worker runs is importable and what it gets pickles: no reliance on fork's copy of this process
    monkeypatch.setattr(parallel, "_CONTEXT", multiprocessing.get_context("spawn"))
    path = write(tmp_path / "data.jsonl", questions)
    table, _ = evaluated(path, workers=2, batch_size=20)
    assert_same_table(table, reference_table(path))


def test_an_interrupt_stops_the_workers(tmp_path: Path, receipts: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path / "data.jsonl", receipts)
    stream = read_records(path)
    read_batches = stream.batches

    def interrupted(size: int) -> Any:
        for number, batch in enumerate(read_batches(size)):
            if number == 4:
                raise KeyboardInterrupt
            yield batch

    monkeypatch.setattr(stream, "batches", interrupted)
    with pytest.raises(KeyboardInterrupt):
        parallel.evaluate_stream(stream, parallel.evaluation("kie"), workers=2, batch_size=7)
    assert multiprocessing.active_children() == []


def test_progress_counts_lines_read_and_records_evaluated(tmp_path: Path, receipts: list[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    counted: dict[str, int] = {}

    class Stage:
        def __init__(self, description: str) -> None:
            self.description = description

        def __enter__(self) -> Any:
            counted[self.description] = 0
            return lambda amount=1: counted.__setitem__(self.description, counted[self.description] + amount)

        def __exit__(self, *exc: Any) -> None:
            pass

    monkeypatch.setattr(parallel, "stage", lambda description, total=None: Stage(description))
    path = write(tmp_path / "data.jsonl", with_bad_lines(receipts))
    evaluated(path, workers=2, skip_invalid=True)
    assert counted == {"reading data.jsonl": 60 + len(BAD) + 1, "evaluating": 60}


@pytest.mark.parametrize("workers", [0, -1, 1.5, True, "2"])
def test_workers_must_be_a_positive_integer(workers: Any) -> None:
    with pytest.raises(ValueError) as info:
        parallel.resolve_workers(workers)
    assert str(info.value) == f"workers must be a positive integer or None (every core), got {workers!r}"


def test_every_core_by_default() -> None:
    assert parallel.resolve_workers(None) == parallel.available_cores()


# --------------------------------------------------------------------------- signals, from the command line


def process_group_members(group: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


@pytest.fixture(scope="module")
def many_receipts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("big") / "receipts.jsonl"
    write_generated(receipt_dicts(6000, seed=9), path)
    return path


@pytest.mark.skipif(not Path("/proc").is_dir() or parallel.available_cores() < 2,
                    reason="needs Linux's /proc and two cores")
@pytest.mark.parametrize(("how", "status", "line"), [
    ("SIGINT to the process group", 130, "rpa-sim: interrupted\n"),
    ("SIGTERM to the process", 143, "rpa-sim: terminated\n"),
    ("SIGTERM to the process group", 143, "rpa-sim: terminated\n"),
])
@pytest.mark.slow
def test_a_signal_while_scoring_stops_every_worker(many_receipts: Path, how: str, status: int, line: str) -> None:
    process = subprocess.Popen([sys.executable, "-m", "rpa_sim.cli", "score", str(many_receipts)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while len(process_group_members(process.pid)) < 3:  # the command and its two workers
            assert process.poll() is None and time.monotonic() < deadline, "the workers did not start"
            time.sleep(0.02)
        send_signal(process, how)
        stdout, stderr = process.communicate(timeout=60)
        assert (process.returncode, stdout, stderr) == (status, "", line)
        assert process_group_members(process.pid) == []
    finally:
        kill_group(process)


def terminate_myself(value: int) -> int:
    """Sends SIGTERM to the process that runs it (as a ``kill`` of the whole process group does), then answers."""
    os.kill(os.getpid(), signal.SIGTERM)
    return value


def test_a_worker_leaves_sigterm_to_the_parent() -> None:
    # Ended by the signal, a worker could die while it sends a result, and the pool would wait forever for the rest.
    assert list(parallel.map_in_order(terminate_myself, range(6), workers=2)) == list(range(6))
