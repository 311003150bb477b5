"""Every importer through the command line: the imported real samples score and sweep."""

from __future__ import annotations

import json

import pytest

from rpa_sim.cli.entry import main
from rpa_sim.records.models import KIERecord
from rpa_sim.records.readers import write_records
from tests.conftest import shared_path


def run(capsys, *argv):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert status == 0, err
    return out


def predictions_from_truth(truth_file, out, *, change=None):
    """Predictions equal to the ground truth (confidence 0.9), optionally with one value changed."""
    records = []
    for raw in truth_file.read_text().splitlines():
        record = json.loads(raw)
        truth = record["ground_truth"]
        groups = [{"name": g.get("name"), "entities": [{**e, "confidence": 0.9} for e in g["entities"]]}
                  for g in (truth.get("groups") or [])]
        entities = [{**e, "confidence": 0.9} for e in truth.get("entities") or []]
        if change is not None and record["id"] == change:
            target = entities[0] if entities else groups[0]["entities"][0]
            target["value"] += "X"
            target["confidence"] = 0.3
        records.append(KIERecord.model_validate({"id": record["id"], "prediction": {"entities": entities,
                                                                                     "groups": groups}}))
    write_records(records, out)


@pytest.mark.parametrize(("fmt", "source", "changed"), [
    ("cord", ("data", "cord", "json"), "receipt_00003"),
    ("docile", ("data", "docile"), "516f2d61ea404b30a9192a72"),
])
def test_ground_truth_imports_score_and_sweep(tmp_path, capsys, fmt, source, changed):
    truth = tmp_path / "truth.jsonl"
    run(capsys, "import", fmt, shared_path(*source), "--out", truth)
    predictions = tmp_path / "pred.jsonl"
    predictions_from_truth(truth, predictions, change=changed)
    scored = json.loads(run(capsys, "score", truth, "--predictions", predictions, "--json"))
    assert (scored["substitutions"], scored["additions"], scored["deletions"]) == (1, 0, 0)
    assert scored["tp"] == scored["entities_gt"] - 1
    rows = json.loads(run(capsys, "sweep", truth, "--predictions", predictions, "--policy", "confidence",
                          "--thresholds", "0,0.5", "--format", "json"))
    assert rows[0]["kieval_aligned"] < 1.0 and rows[1]["kieval_aligned"] == 1.0 and rows[1]["reviewed"] == 1


def test_textract_predictions_join_a_ground_truth(tmp_path, capsys):
    predictions = tmp_path / "textract.jsonl"
    run(capsys, "import", "textract-expense", shared_path("data", "textract"), "--out", predictions)
    # a ground truth equal to the predictions but for the receipt's total
    truth = tmp_path / "truth.jsonl"
    lines = []
    for raw in predictions.read_text().splitlines():
        record = json.loads(raw)
        prediction = record["prediction"]
        entities = [{"key": e["key"], "value": "$38.50" if e["key"] == "TOTAL" and e["value"] == "$38.48"
                     else e["value"]} for e in prediction.get("entities", [])]
        groups = [[{"key": e["key"], "value": e["value"]} for e in (g["entities"] if isinstance(g, dict) else g)]
                  for g in prediction.get("groups", [])]
        lines.append(json.dumps({"id": record["id"], "ground_truth": {"entities": entities, "groups": groups}}))
    truth.write_text("\n".join(lines) + "\n")
    scored = json.loads(run(capsys, "score", truth, "--predictions", predictions, "--json"))
    assert scored["documents"] == 2 and scored["substitutions"] == 1 and scored["additions"] == 0
    rows = json.loads(run(capsys, "sweep", truth, "--predictions", predictions, "--policy", "confidence",
                          "--thresholds", "0,0.95", "--format", "json"))
    assert rows[1]["residual_substitutions"] == 0  # the total's confidence is 0.9038: reviewed below 0.95


def test_dude_import_scores_as_the_official_evaluator(tmp_path, capsys):
    out = tmp_path / "dude.jsonl"
    run(capsys, "import", "dude", shared_path("data", "dude", "DUDE_demo_gt.json"), "--predictions",
        shared_path("data", "dude", "DUDE_demo_submission_imperfect.json"), "--out", out)
    scored = json.loads(run(capsys, "score", out, "--json"))
    assert scored["questions"] == 11 and scored["anls"] == pytest.approx(0.7659461750370841, abs=1e-12)
    rows = json.loads(run(capsys, "sweep", out, "--policy", "confidence", "--thresholds", "0,1.1", "--format", "json"))
    assert rows[0]["anls"] == pytest.approx(0.7659461750370841, abs=1e-12) and rows[1]["anls"] == 1.0
