"""Every importer takes --skip-invalid as the records reader does (issue 30, item 7): a document with a problem stops
the import, or, with the option, is left out and listed while the others are written; every document bad is an
error. Each case is a real source of ../shared/data with one bad document beside it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import NamedTuple

import pytest

from tests.conftest import run_cli, shared_path

SKIPPED = "skipped (--skip-invalid): {count}, each with its problem:"


def _copy(source: Path, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(source, target)
    return target


class Case(NamedTuple):
    """An import with bad documents: its command, the error that stops it, what --skip-invalid lists (in order)
    and how many records it then writes."""

    command: list
    stops_at: str
    skipped: list[str]
    written: int


def _cord(tmp_path: Path) -> Case:
    """Two real CORD receipts with model outputs, the second output not JSON, and a third receipt whose gt_parse
    is not an object: the receipt of a bad output is left out whole."""
    folder, outputs = tmp_path / "cord", tmp_path / "outputs"
    for name in ("receipt_00000", "receipt_00001"):
        _copy(shared_path("data", "cord", "json", f"{name}.json"), folder / f"{name}.json")
        (outputs / f"{name}.json").parent.mkdir(exist_ok=True)
        (outputs / f"{name}.json").write_text(json.dumps({"total": {"total_price": "1"}}))
    (folder / "receipt_00002.json").write_text(json.dumps({"gt_parse": 3}))
    (outputs / "receipt_00001.json").write_text("{")
    bad_output = (f"{outputs / 'receipt_00001.json'}: line 1: invalid JSON: Expecting property name enclosed in "
                  "double quotes at column 2")
    return Case(["import", "cord", folder, "--predictions", outputs], bad_output,
                [bad_output, f"{folder / 'receipt_00002.json'}: gt_parse: expected an object of categories, got 3"], 1)


def _cord_rows(tmp_path: Path) -> Case:
    """CORD v2 rows: a real receipt as a row's ground_truth string, and a row that is not JSON."""
    receipt = json.loads(shared_path("data", "cord", "json", "receipt_00000.json").read_text())
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"ground_truth": json.dumps(receipt)}) + "\n{\n")
    problem = f"{rows}: line 2 (id 1): invalid JSON: Expecting property name enclosed in double quotes at column 2"
    return Case(["import", "cord", rows], problem, [problem], 1)


def _docile(tmp_path: Path) -> Case:
    """The real DocILE document, and a second annotation whose field_extractions is not a list."""
    folder = tmp_path / "docile"
    docid = "516f2d61ea404b30a9192a72"
    for part in ("annotations", "ocr"):
        _copy(shared_path("data", "docile", part, f"{docid}.json"), folder / part / f"{docid}.json")
    broken = folder / "annotations" / "zz-broken.json"
    broken.write_text(json.dumps({"field_extractions": 3}))
    problem = f"{broken}: field_extractions: expected a list, got 3"
    return Case(["import", "docile", folder], problem, [problem], 1)


def _kieval_csv(tmp_path: Path) -> Case:
    """A real KIEval CSV document, one whose group block has fewer values than keys, and a prediction alone."""
    folder = tmp_path / "csv"
    csv = shared_path("data", "kieval_qwen72b_cord", "csv")
    for side in ("gt", "pred"):
        _copy(csv / side / "44.csv", folder / side / "44.csv")
    (folder / "gt" / "7.csv").write_text("0\nmenu.nm\tmenu.price\nLATTE\n")
    (folder / "pred" / "9.csv").write_text("0\nmenu.nm\nLATTE\n")
    return Case(["import", "kieval-csv", folder], f"{folder / 'pred'}: prediction without ground truth: 9.csv",
                [f"{folder / 'gt' / '7.csv'}: line 3: group block '0' has 2 keys but 1 values",
                 f"{folder / 'pred' / '9.csv'}: a prediction without ground truth (no file of this name in gt/)"], 1)


def _dude(tmp_path: Path) -> Case:
    """The real DUDE demo (11 questions) and its submission, whose first answer's confidence is 7, with an answer
    to no question: the answer is left out at once, the question with a bad answer whole."""
    truth = shared_path("data", "dude", "DUDE_demo_gt.json")
    answers = json.loads(shared_path("data", "dude", "DUDE_demo_submission_imperfect.json").read_text())
    answers[0]["answers_confidence"] = [7]
    answers.append({"questionId": "not-a-question", "answers": ["x"], "answers_confidence": [0.5]})
    submission = tmp_path / "submission.json"
    submission.write_text(json.dumps(answers))
    unknown = f"{submission}: [11].questionId: 'not-a-question' is not a question of {truth}"
    return Case(["import", "dude", truth, "--predictions", submission], unknown,
                [unknown, f"{submission}: [0].answers_confidence[0]: 7 is not in [0, 1]"], 10)


@pytest.mark.parametrize("case", [_cord, _cord_rows, _docile, _kieval_csv, _dude])
def test_each_importer_skips_and_lists_a_bad_document(tmp_path, capsys, case):
    case = case(tmp_path)
    out = tmp_path / "out.jsonl"
    status, _, err = run_cli(capsys, *case.command, "--out", out)
    assert (status, err) == (1, f"rpa-sim: error: {case.stops_at}\n") and not out.exists()
    status, _, err = run_cli(capsys, *case.command, "--skip-invalid", "--out", out)
    assert status == 0, err
    lines = err.splitlines()
    start = lines.index(SKIPPED.format(count=len(case.skipped)))
    assert lines[start + 1:] == [f"  {problem}" for problem in case.skipped]
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(written) == case.written and lines[0] == f"wrote {case.written} records to {out}"


def test_dude_writes_every_other_question_with_its_prediction(tmp_path, capsys):
    case = _dude(tmp_path)
    out = tmp_path / "out.jsonl"
    run_cli(capsys, *case.command, "--skip-invalid", "--out", out)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    submission = json.loads(shared_path("data", "dude", "DUDE_demo_submission_imperfect.json").read_text())
    assert [r["id"] for r in records] == [a["questionId"] for a in submission[1:]]
    assert [r["prediction"]["confidence"] for r in records] == [a["answers_confidence"][0] for a in submission[1:]]


def test_every_document_bad_is_an_error(tmp_path, capsys):
    folder = tmp_path / "cord"
    folder.mkdir()
    for name in ("a", "b"):
        (folder / f"{name}.json").write_text("[]")
    status, _, err = run_cli(capsys, "import", "cord", folder, "--skip-invalid", "--out", tmp_path / "out.jsonl")
    assert status == 1 and err.startswith("rpa-sim: error: nothing to import: every file or document has a problem "
                                          f"(2 skipped; the first: {folder / 'a.json'}: expected a JSON object")
