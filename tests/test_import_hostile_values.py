"""A real service output or dataset file with one value replaced as a hostile file would have it (a number past a
double's range, a list for a confidence level, a task without its data) is refused in one line naming the file,
the record and the field, never with a traceback (issue 30's last re-check of every importer)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli, shared_path

DATA = Path(__file__).parent / "data"


def _set(*path: Any, value: Any) -> Callable[[Any], None]:
    def mutate(data: Any) -> None:
        for key in path[:-1]:
            data = data[key]
        data[path[-1]] = value
    return mutate


def _drop(key: str) -> Callable[[Any], None]:
    return lambda data: data.pop(key)


CASES = {
    "mindee level not a string": (
        "mindee", DATA / "mindee" / "invoice_v2.json", [],
        _set("inference", "result", "fields", "invoice_number", "confidence", value=[]),
        "inference.result.fields.invoice_number.confidence: [] is not one of Mindee's levels Certain, High, Medium, "
        "Low"),
    "label-studio task without data": (
        "label-studio", ("data", "vendors", "label-studio", "docs_ocr_prediction_task.json"), [], _drop("data"),
        "[0].data: missing"),
    "cord quad past a double": (
        "cord", ("data", "cord", "json", "receipt_00000.json"), [],
        _set("valid_line", 0, "words", 0, "quad", "y1", value=10**400),
        "valid_line[0].words[0].quad: expected numbers x1..x4 and y1..y4, got "),
    "mapping confidence past a double": (
        "mapping", DATA / "mapping" / "service_batch.json", ["--mapping", DATA / "mapping" / "service_batch.yaml"],
        _set("results", 1, "extractions", 1, "confidence", value=10**400),
        "id 18: $.results[1].extractions[1].confidence: expected a confidence (a number), got 1000000000"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_hostile_value_is_one_line_naming_file_record_and_field(name, tmp_path, capsys):
    importer, source, options, mutate, problem = CASES[name]
    source = source if isinstance(source, Path) else shared_path(*source)
    data = json.loads(source.read_text())
    mutate(data)
    hostile = tmp_path / source.name
    hostile.write_text(json.dumps(data))
    out = tmp_path / "out.jsonl"
    status, _, err = run_cli(capsys, "import", importer, hostile, *options, "--out", out)
    assert status == 1 and err.startswith(f"rpa-sim: error: {hostile}: {problem}") and err.count("\n") == 1, err
    assert not out.exists()


def test_the_percentage_hint_is_given_only_where_it_fixes_the_confidence(tmp_path, capsys):
    """The batch's confidences are percentages (confidence_scale: 100): 250 is wrong whatever the scale."""
    source = json.loads((DATA / "mapping" / "service_batch.json").read_text())
    source["results"][1]["extractions"][1]["confidence"] = 250
    hostile = tmp_path / "service_batch.json"
    hostile.write_text(json.dumps(source))
    status, _, err = run_cli(capsys, "import", "mapping", hostile, "--mapping", DATA / "mapping" / "service_batch.yaml",
                             "--out", tmp_path / "out.jsonl")
    assert (status, err) == (1, f"rpa-sim: error: {hostile}: id 18: $.results[1].extractions[1].confidence: 250 / "
                                "confidence_scale 100 = 2.5 is not in [0, 1]\n")
