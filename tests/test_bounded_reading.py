"""Bounded, safe reading of every input file (``rpa_sim.common.inputs``; issue 20 items 3, 14; docs/cli.md Limits).

Every reader holds a line to ``RPA_SIM_MAX_LINE_BYTES`` and a file read whole
to ``RPA_SIM_MAX_FILE_BYTES``, in bounded memory; refuses a device, a named
pipe (without waiting for a writer) and a folder; accepts a byte-order mark;
and skips blank lines a block at a time, numbering them all the same.
"""

from __future__ import annotations

import codecs
import gzip
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from rpa_sim.common import inputs
from rpa_sim.common.errors import InputError
from rpa_sim.common.inputs import input_lines, max_file_bytes, max_line_bytes, read_input
from rpa_sim.operate.monitoring.log import read_log
from rpa_sim.records.importers.cord import import_cord
from rpa_sim.records.importers.docile import import_docile
from rpa_sim.records.readers import read_records
from tests.conftest import run_cli, shared_path, write_lines

LINE = "RPA_SIM_MAX_LINE_BYTES"
FILE = "RPA_SIM_MAX_FILE_BYTES"
BOM = codecs.BOM_UTF8
KIE = {"id": "r1", "ground_truth": {"entities": [{"key": "a", "value": "x"}]},
       "prediction": {"entities": [{"key": "a", "value": "x", "confidence": 0.9}]}}
TRUTH = {"id": "r1", "ground_truth": {"entities": [{"key": "a", "value": "x"}]}}
PREDICTION = {"id": "r1", "prediction": {"entities": [{"key": "a", "value": "x", "confidence": 0.9}]}}
ROW = {"route": "audit", "inclusion_probability": 0.5, "correct": True}
DOCILE_ID = "516f2d61ea404b30a9192a72"
OWN_DATA = Path(__file__).parent / "data"  # the project's own samples (label_studio/, mapping/)
NOT_REGULAR = "is not a regular file (a pipe or a device?): save it to a file first"
NOT_REGULAR_RECORDS = ("is not a regular file (a pipe or a device?): records are read more than once, so save "
                       "them to a file first")


def cord_row() -> dict:
    """A row of the CORD dataset's table: a shared receipt's ground truth as a JSON string."""
    receipt = shared_path("data", "cord", "json", "receipt_00000.json")
    return {"ground_truth": json.dumps(json.loads(receipt.read_text()))}


def docile_sample() -> Path:
    """The shared DocILE sample (the calling test skips when ``../shared`` is absent)."""
    return shared_path("data", "docile")


def one_error(err: str) -> str:
    """The message of the single error line on stderr."""
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith("rpa-sim: error: "), err
    return err.removeprefix("rpa-sim: error: ").removesuffix("\n")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def long_text(size: int) -> str:
    return "x" * size


# --------------------------------------------------------------------------- the line bound, reader by reader


def records_case(tmp: Path) -> tuple[list, Path, int]:
    data = write_lines(tmp / "data.jsonl", KIE, "", {"id": "r2", "note": long_text(2000)})
    return ["score", data], data, 3


def gzip_records_case(tmp: Path) -> tuple[list, Path, int]:
    data = tmp / "data.jsonl.gz"
    data.write_bytes(gzip.compress((json.dumps(KIE) + "\n\n\n" + long_text(5000)).encode()))
    return ["score", data], data, 4


def predictions_case(tmp: Path) -> tuple[list, Path, int]:
    truth = write_lines(tmp / "truth.jsonl", TRUTH, {"id": "r2", "ground_truth": {}})
    predictions = write_lines(tmp / "pred.jsonl", PREDICTION, {"id": "r2", "prediction": {}, "x": long_text(2000)})
    return ["score", truth, "--predictions", predictions], predictions, 2


def log_case(tmp: Path) -> tuple[list, Path, int]:
    log = write_lines(tmp / "day.jsonl", ROW, ROW, "  ", {**ROW, "note": long_text(2000)})
    return ["estimate", "--method", "classical", log], log, 4


def cord_rows_case(tmp: Path) -> tuple[list, Path, int]:
    rows = write_lines(tmp / "rows.jsonl", cord_row(), {"ground_truth": long_text(70_000)})
    return ["import", "cord", rows, "--out", tmp / "out.jsonl"], rows, 2


def docile_predictions_case(tmp: Path) -> tuple[list, Path, int]:
    predictions = write_lines(tmp / "pred.jsonl", {"id": DOCILE_ID, "prediction": {}, "x": long_text(2000)})
    argv = ["import", "docile", docile_sample(), "--predictions", predictions, "--out", tmp / "out.jsonl"]
    return argv, predictions, 1


LINE_CASES = {"records": records_case, "gzip records": gzip_records_case, "predictions": predictions_case,
              "log": log_case, "cord rows": cord_rows_case, "docile predictions": docile_predictions_case}


@pytest.mark.parametrize("case", LINE_CASES)
def test_a_line_over_the_bound_is_one_error_naming_file_and_line(capsys, tmp_path, monkeypatch, case):
    argv, path, line = LINE_CASES[case](tmp_path)
    before = digest(path)
    monkeypatch.setenv(LINE, "1KiB")
    if case == "cord rows":  # the receipt on line 1 is longer than 1 KiB
        monkeypatch.setenv(LINE, "60000")
    bound = "60000 bytes" if case == "cord rows" else "1 KiB"
    status, out, err = run_cli(capsys, *argv)
    assert (status, out) == (1, "")
    assert one_error(err) == f"{path}: line {line} is longer than {bound} (RPA_SIM_MAX_LINE_BYTES)"
    assert digest(path) == before
    assert not (tmp_path / "out.jsonl").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


# with a higher bound the long lines are read, and succeed or fail on their content
WITHIN_THE_BOUND = {"records": (1, "line 3 (id r2): ground_truth: missing"),
                    "gzip records": (1, "line 4: invalid JSON: Expecting value at column 1"),
                    "predictions": (0, ""), "log": (0, ""), "docile predictions": (0, ""),
                    "cord rows": (1, "line 2 (id 1): ground_truth: invalid JSON in the string: Expecting value")}


@pytest.mark.parametrize("case", LINE_CASES)
def test_lines_within_the_bound_are_read(capsys, tmp_path, monkeypatch, case):
    argv, _, _ = LINE_CASES[case](tmp_path)
    monkeypatch.setenv(LINE, "100000")
    status, _, err = run_cli(capsys, *argv)
    expected_status, problem = WITHIN_THE_BOUND[case]
    assert status == expected_status and (problem in one_error(err) if problem else err.count("error") == 0)


def test_the_bound_holds_to_the_byte_and_leaves_out_the_end_of_line(tmp_path, monkeypatch):
    path = tmp_path / "lines.txt"
    path.write_bytes(b"0123456789\r\n" + b"0123456789\n" + b"01234567890\n")
    monkeypatch.setenv(LINE, "11")  # the first line's \r counts, its \n does not
    assert [number for number, _ in input_lines(path)] == [1, 2, 3]
    monkeypatch.setenv(LINE, "10")
    with pytest.raises(InputError, match=r"lines.txt: line 1 is longer than 10 bytes \(RPA_SIM_MAX_LINE_BYTES\)$"):
        list(input_lines(path))


def test_a_long_blank_line_is_held_to_the_bound_too(tmp_path, monkeypatch):
    path = tmp_path / "lines.txt"
    path.write_bytes(b"{}\n\n" + b" " * 50 + b"\n{}\n")
    monkeypatch.setenv(LINE, "49")
    with pytest.raises(InputError, match=r"line 3 is longer than 49 bytes"):
        list(input_lines(path))
    monkeypatch.setenv(LINE, "50")
    assert list(input_lines(path)) == [(1, b"{}"), (4, b"{}")]


def test_the_default_bounds_and_their_spellings(monkeypatch):
    monkeypatch.delenv(LINE, raising=False)
    monkeypatch.delenv(FILE, raising=False)
    assert (max_line_bytes(), max_file_bytes()) == (256 << 20, 1 << 30)
    for text, size in (("4096", 4096), ("1MiB", 1 << 20), (" 2 gib ", 2 << 30), ("3KiB", 3072)):
        monkeypatch.setenv(LINE, text)
        assert max_line_bytes() == size


@pytest.mark.parametrize("variable", [LINE, FILE])
@pytest.mark.parametrize("value", ["lots", "0", "-1", "1.5", "", "10MB"])
def test_a_bad_bound_is_one_usage_error(capsys, tmp_path, monkeypatch, variable, value):
    data = write_lines(tmp_path / "data.jsonl", KIE)
    monkeypatch.setenv(variable, value)
    status, out, err = run_cli(capsys, "score", data)
    example = "268435456 or 256MiB" if variable == LINE else "1073741824 or 1GiB"
    assert (status, out) == (2, "")
    assert one_error(err) == f"{variable}: expected a positive number of bytes (e.g. {example}), got {value!r}"


# --------------------------------------------------------------------------- the file bound, reader by reader


def copy_of(source: Path, target: Path) -> Path:
    shutil.copyfile(source, target)
    return target


def file_cases(tmp: Path) -> dict[str, tuple[list, Path]]:
    out = tmp / "out.jsonl"
    dude = copy_of(shared_path("data", "dude", "DUDE_demo_gt.json"), tmp / "gt.json")
    textract = copy_of(shared_path("data", "textract", "analyze_expense_invoice.json"), tmp / "expense.json")
    cord = copy_of(shared_path("data", "cord", "json", "receipt_00000.json"), tmp / "receipt.json")
    kieval = tmp / "kieval"
    shutil.copytree(shared_path("data", "kieval_qwen72b_cord", "csv"), kieval)
    big_csv = max(kieval.glob("gt/*.csv"), key=lambda p: p.stat().st_size)
    settings = tmp / "settings.yaml"
    settings.write_text("# " + long_text(3000) + "\n")
    docile = tmp / "docile"
    shutil.copytree(docile_sample(), docile)
    return {
        "dude": (["import", "dude", dude, "--out", out], dude),
        "textract": (["import", "textract-expense", textract, "--out", out], textract),
        "cord": (["import", "cord", cord, "--out", out], cord),
        "kieval": (["import", "kieval-csv", kieval, "--out", out], big_csv),
        "yaml": (["generate", "receipts", "--n", "2", "--seed", "1", "--out", out, "--settings", settings], settings),
        "docile": (["import", "docile", docile, "--out", out], docile / "annotations" / f"{DOCILE_ID}.json"),
    }


@pytest.mark.parametrize("case", ["dude", "textract", "cord", "kieval", "yaml", "docile"])
def test_a_file_read_whole_over_its_bound_is_one_error(capsys, tmp_path, monkeypatch, case):
    argv, path = file_cases(tmp_path)[case]
    before = digest(path)
    bound = 2048 if case != "kieval" else path.stat().st_size - 1
    assert path.stat().st_size > bound
    monkeypatch.setenv(FILE, str(bound))
    status, out, err = run_cli(capsys, *argv)
    shown = "2 KiB" if bound == 2048 else f"{bound} bytes"
    assert (status, out) == (1, "")
    assert one_error(err) == f"{path}: is larger than {shown} (RPA_SIM_MAX_FILE_BYTES)"
    assert digest(path) == before and not (tmp_path / "out.jsonl").exists()


def test_read_input_reads_to_the_bound_and_not_past_it(tmp_path, monkeypatch):
    path = tmp_path / "doc.json"
    path.write_bytes(BOM + b"[1, 2]")
    monkeypatch.setenv(FILE, "9")  # the bound is on the file's bytes, the mark included
    assert read_input(path) == b"[1, 2]"
    monkeypatch.setenv(FILE, "8")
    with pytest.raises(InputError, match=r"doc.json: is larger than 8 bytes \(RPA_SIM_MAX_FILE_BYTES\)$"):
        read_input(path)


# --------------------------------------------------------------------------- memory stays near the bound


def peak_while(read: Callable[[], object]) -> int:
    """The peak of Python's allocations while ``read`` runs (it must raise the line bound's error)."""
    tracemalloc.start()
    try:
        with pytest.raises(InputError, match=r"is longer than 1 MiB \(RPA_SIM_MAX_LINE_BYTES\)$"):
            read()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def fifty_megabytes_line(path: Path, start: bytes = b"") -> Path:
    with path.open("wb") as out:
        out.write(start)
        for _ in range(50):
            out.write(b"x" * (1 << 20))
    return path


def test_a_50_mb_line_is_refused_in_bounded_memory_by_every_reader(tmp_path, monkeypatch):
    monkeypatch.setenv(LINE, "1MiB")
    records = fifty_megabytes_line(tmp_path / "data.jsonl", json.dumps(KIE).encode() + b"\n")
    zeros = tmp_path / "zeros.jsonl.gz"
    with gzip.open(zeros, "wb") as out:
        for _ in range(50):
            out.write(bytes(1 << 20))
    log = fifty_megabytes_line(tmp_path / "day.jsonl", json.dumps(ROW).encode() + b"\n")
    rows = fifty_megabytes_line(tmp_path / "rows.jsonl")
    predictions = fifty_megabytes_line(tmp_path / "pred.jsonl")
    readers = {"records": lambda: list(read_records(records)), "gzip records": lambda: list(read_records(zeros)),
               "log": lambda: read_log(log), "cord rows": lambda: list(import_cord(rows)[0]),
               "docile predictions": lambda: import_docile(docile_sample(), predictions=predictions)}
    peaks = {name: peak_while(read) for name, read in readers.items()}
    # the bound (1 MiB), a block read (128 KiB) and a copy of the bound when a line is joined: a few MiB, not 50
    assert all(peak < 8 << 20 for peak in peaks.values()), peaks


def test_the_command_refuses_a_gzip_of_zeros_in_bounded_memory(tmp_path):
    # a gzip of 300 MB of zeros without a newline (the command used to hold it whole, and several copies)
    zeros = tmp_path / "zeros.jsonl.gz"
    with gzip.open(zeros, "wb", compresslevel=1) as out:
        for _ in range(300):
            out.write(bytes(1 << 20))
    # The peak resident memory of the process itself: VmHWM, as getrusage's ru_maxrss would keep the peak of the
    # (large) test process that started it, which Linux carries over the exec.
    probe = ("import re, sys\nfrom pathlib import Path\nfrom rpa_sim.cli.entry import main\n"
             "status = main(['score', sys.argv[1]])\n"
             "print(status, re.search(r'VmHWM:\\s*(\\d+) kB', Path('/proc/self/status').read_text())[1])")
    completed = subprocess.run([sys.executable, "-c", probe, str(zeros)], capture_output=True, text=True,
                               timeout=300, env={**os.environ, LINE: "1MiB"}, check=False)
    status, peak_kib = map(int, completed.stdout.split())
    assert completed.stderr == (f"rpa-sim: error: {zeros}: line 1 is longer than 1 MiB (RPA_SIM_MAX_LINE_BYTES)\n")
    assert status == 1
    assert peak_kib < 250_000, peak_kib  # the interpreter and its imports; the data alone would be 300 MB


# --------------------------------------------------------------------------- devices, pipes and folders


def refusal_cases(tmp: Path) -> dict[str, Callable[[Path], list]]:
    """For each input that is a file, the command line that gives it the path ``bad``."""
    data = write_lines(tmp / "data.jsonl", KIE)
    gt = copy_of(shared_path("data", "dude", "DUDE_demo_gt.json"), tmp / "gt.json")
    out, log = tmp / "out.jsonl", tmp / "log.jsonl"
    return {
        "log": lambda bad: ["estimate", "--method", "classical", bad],
        "settings": lambda bad: ["generate", "receipts", "--n", "2", "--seed", "1", "--out", out, "--settings", bad],
        "policy": lambda bad: ["sweep", data, "--policy", bad, "--thresholds", "0.5"],
        "scenario": lambda bad: ["run", bad],
        "audit plan": lambda bad: ["replay", data, "--policy", "confidence", "--threshold", "0.9", "--seed", "1",
                                   "--out", log, "--audit-plan", bad],
        "dude": lambda bad: ["import", "dude", bad, "--out", out],
        "dude predictions": lambda bad: ["import", "dude", gt, "--predictions", bad, "--out", out],
        "docile predictions": lambda bad: ["import", "docile", docile_sample(), "--predictions", bad, "--out", out],
        "records predictions": lambda bad: ["score", data, "--predictions", bad],
        "label-studio": lambda bad: ["import", "label-studio", bad, "--out", out],
        "mapping file": lambda bad: ["import", "mapping", OWN_DATA / "mapping" / "llm_receipts.jsonl", "--mapping", bad,
                                     "--out", out],
        # sources that may also be folders
        "textract": lambda bad: ["import", "textract-expense", bad, "--out", out],
        "cord": lambda bad: ["import", "cord", bad, "--out", out],
        "docile": lambda bad: ["import", "docile", bad, "--out", out],
        "mapping": lambda bad: ["import", "mapping", bad, "--mapping", OWN_DATA / "mapping" / "llm_receipts.yaml",
                                "--out", out],
    }


def expected_refusal(case: str, bad: Path) -> str:
    if bad.is_dir():
        return f"{bad}: is a folder, not a file"
    return f"{bad}: {NOT_REGULAR_RECORDS if case == 'records predictions' else NOT_REGULAR}"


FILE_ONLY = ["log", "settings", "policy", "scenario", "audit plan", "dude", "dude predictions", "docile predictions",
             "records predictions", "label-studio", "mapping file"]


@pytest.mark.parametrize("case", FILE_ONLY + ["textract", "cord", "docile", "mapping"])
def test_a_device_is_refused_in_one_line(capsys, tmp_path, monkeypatch, case):
    monkeypatch.setenv(LINE, "1KiB")  # should the device ever be read, it is refused at once, not read forever
    monkeypatch.setenv(FILE, "1MiB")
    status, out, err = run_cli(capsys, *refusal_cases(tmp_path)[case](Path("/dev/zero")))
    assert (status, out, one_error(err)) == (1, "", expected_refusal(case, Path("/dev/zero")))
    assert not (tmp_path / "out.jsonl").exists() and not (tmp_path / "log.jsonl").exists()


@pytest.mark.parametrize("case", FILE_ONLY)
def test_a_folder_is_refused_in_one_line(capsys, tmp_path, case):
    folder = tmp_path / "folder.yaml"
    folder.mkdir()
    status, out, err = run_cli(capsys, *refusal_cases(tmp_path)[case](folder))
    assert (status, out, one_error(err)) == (1, "", expected_refusal(case, folder))


KIEVAL_FOLDER = "expected a folder holding gt/ and pred/ folders of CSV files"


def test_the_model_outputs_of_cord_and_the_sources_of_kieval_are_folders(capsys, tmp_path):
    fifo = tmp_path / "outputs"
    os.mkfifo(fifo)
    receipts = shared_path("data", "cord", "json")
    for argv, message in ((["import", "cord", receipts, "--predictions", fifo],
                           f"{fifo}: expected a folder of model-output .json files"),
                          (["import", "kieval-csv", fifo], f"{fifo}: {KIEVAL_FOLDER}"),
                          (["import", "kieval-csv", "/dev/zero"], f"/dev/zero: {KIEVAL_FOLDER}")):
        status, _, err = run_cli(capsys, *argv, "--out", tmp_path / "out.jsonl")
        assert (status, one_error(err)) == (1, message)


PIPE_PROBE = """
import contextlib, io, json, sys
from rpa_sim.cli.entry import main
for argv in json.loads(sys.argv[1]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        status = main(argv)
    print(json.dumps([status, err.getvalue()]), flush=True)
"""


def test_a_named_pipe_is_refused_without_waiting_for_a_writer(tmp_path):
    cases = refusal_cases(tmp_path)
    names = [*FILE_ONLY, "textract", "cord", "docile"]
    fifos = {name: tmp_path / f"pipe-{index}{'.jsonl' if name == 'cord' else '.json'}"
             for index, name in enumerate(names)}
    for fifo in fifos.values():
        os.mkfifo(fifo)
    argvs = [[str(a) for a in cases[name](fifos[name])] for name in names]
    # one process for every case, with a timeout: a command that opened a pipe would wait for a writer forever
    completed = subprocess.run([sys.executable, "-c", PIPE_PROBE, json.dumps(argvs)], capture_output=True,
                               text=True, timeout=120, check=False)
    results = [json.loads(line) for line in completed.stdout.splitlines()]
    assert len(results) == len(names), completed.stderr
    for name, (status, err) in zip(names, results):
        assert (status, one_error(err)) == (1, expected_refusal(name, fifos[name])), name


# --------------------------------------------------------------------------- a byte-order mark anywhere


def with_marks(source: Path, target: Path) -> Path:
    """A copy of the file or folder ``source`` with a byte-order mark at the start of every file."""
    if source.is_dir():
        shutil.copytree(source, target)
        for path in target.rglob("*"):
            if path.is_file() and path.suffix != ".pdf":
                path.write_bytes(BOM + path.read_bytes())
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(BOM + source.read_bytes())
    return target


def imported(capsys, tmp: Path, name: str, *argv) -> bytes:
    out = tmp / name
    status, _, err = run_cli(capsys, "import", *argv, "--out", out)
    assert status == 0, err
    return out.read_bytes()


def test_every_importer_accepts_a_byte_order_mark(capsys, tmp_path):
    data = shared_path("data")
    rows = write_lines(tmp_path / "rows.jsonl", cord_row(), cord_row())
    docile_predictions = write_lines(tmp_path / "docile-pred.jsonl", {"id": DOCILE_ID, "prediction": {}})
    pairs = {
        "kieval-csv": [data / "kieval_qwen72b_cord" / "csv"],
        "cord": [data / "cord" / "json", "--predictions", data / "kieval_qwen72b_cord" / "model_output"],
        "cord rows": [rows],
        "docile": [data / "docile", "--predictions", docile_predictions],
        "textract-expense": [data / "textract"],
        "dude": [data / "dude" / "DUDE_demo_gt.json", "--predictions",
                 data / "dude" / "DUDE_demo_submission_imperfect.json"],
        "label-studio": [OWN_DATA / "label_studio" / "receipts_ocr.json"],
        "mapping": [OWN_DATA / "mapping" / "llm_receipts.jsonl", "--mapping",
                    OWN_DATA / "mapping" / "llm_receipts.yaml"],
    }
    for name, argv in pairs.items():
        fmt = name.split()[0]
        plain = imported(capsys, tmp_path, f"{name}-plain.jsonl", fmt, *argv)
        marked_argv = []
        for index, arg in enumerate(argv):
            if isinstance(arg, Path):
                marked = with_marks(arg, tmp_path / f"{name}-{index}-marked" / arg.name)
                arg = marked
            marked_argv.append(arg)
        assert imported(capsys, tmp_path, f"{name}-marked.jsonl", fmt, *marked_argv) == plain, name


def test_a_log_yaml_files_and_records_accept_a_byte_order_mark(capsys, tmp_path):
    receipts = tmp_path / "receipts.jsonl"
    assert run_cli(capsys, "generate", "receipts", "--n", "30", "--seed", "5", "--out", receipts)[0] == 0
    marked_receipts = with_marks(receipts, tmp_path / "marked-receipts.jsonl")
    plan = tmp_path / "plan.yaml"
    plan.write_text("strata:\n- name: all\n  rate: 0.5\n")
    policy = tmp_path / "policy.yaml"
    policy.write_text("name: mine\nreview_if:\n  confidence: sweep\n")
    outputs = {}
    for label, marked in (("plain", False), ("marked", True)):
        folder = tmp_path / label
        folder.mkdir()
        data = marked_receipts if marked else receipts
        this_plan = with_marks(plan, folder / "plan.yaml") if marked else plan
        this_policy = with_marks(policy, folder / "policy.yaml") if marked else policy
        log = folder / "day.jsonl"
        status, _, err = run_cli(capsys, "replay", data, "--policy", this_policy, "--threshold", "0.9", "--seed", "1",
                                 "--out", log, "--audit-plan", this_plan)
        assert status == 0, err
        read_from = with_marks(log, folder / "marked-day.jsonl") if marked else log
        status, estimated, err = run_cli(capsys, "estimate", "--method", "classical", read_from, "--json")
        assert status == 0, err
        outputs[label] = (log.read_bytes(), estimated)
    assert outputs["marked"] == outputs["plain"]


# --------------------------------------------------------------------------- blank lines


def reference_lines(data: bytes) -> list[tuple[int, bytes]]:
    """The non-blank lines of ``data`` and their numbers, the slow and obvious way."""
    lines = data.removeprefix(BOM).split(b"\n")
    return [(number, line) for number, line in enumerate(lines, 1) if line.strip()]


PIECES = [b"\n", b"\n", b"\n", b" ", b"\t", b"\r\n", b"\x0b", b"x", b"{}", b"\xc3\xa9", b"yyyyyyyyyy"]


def random_data(chance: random.Random, attempt: int) -> bytes:
    return (BOM if attempt % 3 == 0 else b"") + b"".join(chance.choice(PIECES) for _ in range(chance.randrange(400)))


# the two ways of finding lines: memchr for every line (0), split for every line (2**30), or each as it comes
@pytest.mark.parametrize("long_line", [0, 8, 1 << 30])
@pytest.mark.parametrize("block", [1, 2, 7, 64, 1 << 17])
def test_lines_and_their_numbers_whatever_the_blocks(tmp_path, monkeypatch, block, long_line):
    monkeypatch.setattr(inputs, "_BLOCK", block)
    monkeypatch.setattr(inputs, "_LONG_LINE", long_line)
    chance = random.Random(block * 3 + long_line)
    path = tmp_path / "lines.txt"
    for attempt in range(30):
        data = random_data(chance, attempt)
        path.write_bytes(gzip.compress(data) if attempt % 2 else data)
        assert list(input_lines(path)) == reference_lines(data), data


@pytest.mark.parametrize("long_line", [0, 8, 1 << 30])
@pytest.mark.parametrize("block", [1, 7, 64])
def test_the_first_line_over_the_bound_is_named_after_the_lines_before_it(tmp_path, monkeypatch, block, long_line):
    monkeypatch.setattr(inputs, "_BLOCK", block)
    monkeypatch.setattr(inputs, "_LONG_LINE", long_line)
    chance = random.Random(block * 5 + long_line)
    path = tmp_path / "lines.txt"
    for attempt in range(40):
        data = random_data(chance, attempt)
        bound = chance.randrange(1, 30)
        monkeypatch.setenv(LINE, str(bound))
        path.write_bytes(data)
        lines = data.removeprefix(BOM).split(b"\n")
        over = next((number for number, line in enumerate(lines, 1) if len(line) > bound), None)
        expected = [(number, line) for number, line in reference_lines(data) if over is None or number < over]
        read = []
        if over is None:
            read.extend(input_lines(path))
        else:
            with pytest.raises(InputError) as error:
                read.extend(input_lines(path))
            assert str(error.value) == f"{path}: line {over} is longer than {bound} bytes (RPA_SIM_MAX_LINE_BYTES)"
        assert read == expected, (data, bound)


def test_a_mark_alone_or_blank_lines_alone_are_no_lines(tmp_path):
    path = tmp_path / "lines.txt"
    for data in (b"", BOM, BOM + b"\n \n", b" \r\n\t\n   "):
        path.write_bytes(data)
        assert list(input_lines(path)) == []


def test_a_gzip_of_blank_lines_is_read_to_its_end_and_numbered(capsys, tmp_path):
    # Eight million blank lines (the speed is in the report of issue 20: a block costs one match, not a call a line)
    blank = b"\n" * 4_000_000 + b"   \n\t\r\n" * 2_000_000
    data = tmp_path / "blank.jsonl.gz"
    data.write_bytes(gzip.compress(blank, compresslevel=1))
    status, _, err = run_cli(capsys, "score", data)
    assert (status, one_error(err)) == (1, f"{data}: no records")
    data.write_bytes(gzip.compress(blank + b"not json\n" + blank + json.dumps(KIE).encode(), compresslevel=1))
    status, _, err = run_cli(capsys, "score", data)
    assert (status, one_error(err)) == (1, f"{data}: line 8000001: invalid JSON: Expecting value at column 1")
