"""``rpa-sim score`` on predictions without confidences: every figure (none needs one), and how many lack one."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from tests.conftest import run_cli, shared_path

MINDEE = Path(__file__).parent / "data"
NOTE = ("rpa-sim: note: {n} of {m} predicted values have no confidence: no figure of score needs one, so none is left "
        "out; the commands that route (sweep, certify, run, replay, plan-audit, export-policy) need a confidence or "
        "a policy's missing_confidence\n")


def test_mindee_v2_without_its_confidence_option_scores_as_with_it(capsys, tmp_path):
    """The docs' Mindee v2 sample with every level removed (the inference ran without the confidence option):
    the same figures as with the levels, and the 16 values without one counted."""
    response = json.loads((MINDEE / "mindee" / "invoice_v2.json").read_text())
    text = json.dumps(response).replace('"confidence": "Certain"', '"confidence": null')
    for level in ("High", "Medium", "Low"):
        text = text.replace(f'"confidence": "{level}"', '"confidence": null')
    (tmp_path / "invoice_v2.json").write_text(text)
    options = ["--ground-truth", MINDEE / "mindee-ground-truth.json", "--fields", MINDEE / "mindee-fields.yaml"]
    for source, out in ((MINDEE / "mindee" / "invoice_v2.json", "levels.jsonl"), (tmp_path / "invoice_v2.json",
                                                                                 "none.jsonl")):
        status, _, err = run_cli(capsys, "import", "mindee", source, *options, "--out", tmp_path / out)
        assert status == 0, err
    status, with_levels, err = run_cli(capsys, "score", tmp_path / "levels.jsonl", "--json")
    assert (status, err) == (0, "")
    status, without, err = run_cli(capsys, "score", tmp_path / "none.jsonl", "--json")
    assert status == 0 and err == NOTE.format(n=16, m=16)
    with_levels, without = json.loads(with_levels), json.loads(without)
    assert with_levels.pop("without_confidence") == 0 and without.pop("without_confidence") == 16
    assert without == with_levels and without["kieval_aligned"] == 15 / 17
    # the commands that route still refuse them
    status, _, err = run_cli(capsys, "sweep", tmp_path / "none.jsonl", "--policy", "confidence")
    assert status == 1 and "missing_confidence" in err and err.count("\n") == 1


def test_a_label_studio_project_without_scores_scores_in_every_format(capsys, tmp_path):
    """Label Studio's own test tasks (../shared): predictions without a score, two tasks with both sides."""
    status, _, err = run_cli(capsys, "import", "label-studio",
                             shared_path("data", "vendors", "label-studio", "test_tasks_annotations_predictions.json"),
                             "--id-from", "data.text", "--out", tmp_path / "tasks.jsonl")
    assert status == 0, err
    status, table, err = run_cli(capsys, "score", tmp_path / "tasks.jsonl", "--skip-invalid")
    assert status == 0 and err.endswith(NOTE.format(n=2, m=2))
    rows = [line.strip().rsplit(None, 1) for line in table.splitlines()[1:]]
    assert rows[:7] == [["documents", "2"], ["entities (ground truth)", "2"], ["entities (predicted)", "2"],
                        ["correct (TP)", "2"], ["substitutions", "0"], ["additions", "0"], ["deletions", "0"]]
    assert rows[-1] == ["without a confidence", "2"]
    _, as_json, _ = run_cli(capsys, "score", tmp_path / "tasks.jsonl", "--skip-invalid", "--json")
    _, as_csv, _ = run_cli(capsys, "score", tmp_path / "tasks.jsonl", "--skip-invalid", "--format", "csv")
    payload = json.loads(as_json)
    assert (payload["kieval_aligned"], payload["without_confidence"], payload["skipped"]) == (1.0, 2, 2)
    assert list(csv.DictReader(io.StringIO(as_csv))) == [
        {key: "" if value is None else str(value) for key, value in payload.items()}]
