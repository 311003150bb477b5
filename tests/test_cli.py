"""The command line: its output contract (FORMATS.md), its errors and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import run_cli as run
from tests.conftest import shared_path

KIE_KEYS = {"documents", "entities_gt", "entities_pred", "tp", "fp", "fn", "substitutions", "additions",
            "deletions", "entity_f1", "group_f1", "kieval_aligned", "group_aligned", "ignored_empty"}
VQA_KEYS = {"questions", "anls", "accuracy", "smudge", "match", "grounding", "alpha", "evidence_iou"}



@pytest.fixture
def qwen_jsonl(tmp_path, capsys):
    out = tmp_path / "qwen.jsonl.gz"
    status, stdout, stderr = run(capsys, "import", "kieval-csv", str(shared_path("data", "kieval_qwen72b_cord", "csv")),
                                 "--out", str(out))
    assert status == 0 and stdout == ""
    assert f"wrote 100 records to {out}\n" in stderr and "confidence 1.0" in stderr
    return out


def test_import_then_score_gives_the_official_kieval_figures(qwen_jsonl, capsys):
    status, out, _ = run(capsys, "score", str(qwen_jsonl), "--json")
    assert status == 0
    result = json.loads(out)
    assert result.keys() >= KIE_KEYS
    assert (result["tp"], result["substitutions"], result["additions"] + result["deletions"]) == (1020, 167, 273)
    assert round(result["entity_f1"], 4) == 0.7707 and round(result["kieval_aligned"], 4) == 0.6986
    assert result["value_match"] == "exact" and result["skipped"] == 0


def test_score_table_is_readable(qwen_jsonl, capsys):
    status, out, _ = run(capsys, "score", str(qwen_jsonl))
    assert status == 0
    assert "KIEval_Aligned" in out and "0.6986" in out and "1,020" in out


def test_score_vqa_json_keys(tmp_path, capsys):
    data = tmp_path / "vqa.jsonl"
    data.write_text(json.dumps({"id": "q1", "answers": ["12"], "prediction": {"answer": "12", "confidence": 0.9}})
                    + "\n" + json.dumps({"id": "q2", "answers": ["Coca Cola"],
                                         "prediction": {"answer": "coca cola", "confidence": 0.7}}) + "\n")
    status, out, _ = run(capsys, "score", str(data), "--json")
    result = json.loads(out)
    assert status == 0 and result.keys() >= VQA_KEYS
    assert (result["questions"], result["anls"], result["accuracy"]) == (2, 1.0, 1.0)
    assert result["smudge"] is None and result["evidence_iou"] is None


def test_bad_record_stops_with_its_location(tmp_path, capsys):
    data = tmp_path / "bad.jsonl"
    good = {"id": "r1", "ground_truth": {"entities": []}, "prediction": {"entities": []}}
    bad = {"id": "r2", "ground_truth": {"entities": []},
           "prediction": {"groups": [[{"key": "a", "value": "b", "confidence": 1.7}]]}}
    data.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    status, out, err = run(capsys, "score", str(data))
    assert status == 1 and out == ""
    assert err.strip() == (f"rpa-sim: error: {data}: line 2 (id r2): prediction.groups[0][0].confidence: "
                           "1.7 is not in [0, 1]")
    status, out, err = run(capsys, "score", str(data), "--skip-invalid", "--json")
    assert status == 0 and json.loads(out)["documents"] == 1 and json.loads(out)["skipped"] == 1
    assert "skipped 1 record" in err and "line 2 (id r2)" in err


def test_missing_file_and_bad_import_source(tmp_path, capsys):
    status, _, err = run(capsys, "score", str(tmp_path / "nope.jsonl"))
    assert status == 1 and "nope.jsonl" in err
    (tmp_path / "src" / "gt").mkdir(parents=True)
    status, _, err = run(capsys, "import", "kieval-csv", str(tmp_path / "src"), "--out", str(tmp_path / "o.jsonl"))
    assert status == 1 and "pred" in err
    assert not (tmp_path / "o.jsonl").exists()


def test_import_prediction_without_ground_truth_is_an_error(tmp_path, capsys):
    for side in ("gt", "pred"):
        (tmp_path / side).mkdir()
    (tmp_path / "gt" / "1.csv").write_text("#h\ndate\t1\n")
    (tmp_path / "pred" / "1.csv").write_text("#h\ndate\t1\n")
    (tmp_path / "pred" / "2.csv").write_text("#h\ndate\t1\n")
    status, _, err = run(capsys, "import", "kieval-csv", str(tmp_path), "--out", str(tmp_path / "o.jsonl"))
    assert status == 1 and "prediction without ground truth: 2.csv" in err


def test_import_malformed_group_block_names_file_and_line(tmp_path, capsys):
    for side in ("gt", "pred"):
        (tmp_path / side).mkdir()
    (tmp_path / "gt" / "7.csv").write_text("0\nmenu.nm\tmenu.price\nLATTE\t4.00\nTEA\n")
    (tmp_path / "pred" / "7.csv").write_text("0\nmenu.nm\tmenu.price\nLATTE\t4.00\n")
    status, _, err = run(capsys, "import", "kieval-csv", str(tmp_path), "--out", str(tmp_path / "o.jsonl"))
    assert status == 1
    assert f"{tmp_path / 'gt' / '7.csv'}: line 4: group block '0' has 2 keys but 1 values" in err


def test_import_shortlist(tmp_path, capsys):
    for side in ("gt", "pred"):
        (tmp_path / side).mkdir()
        (tmp_path / side / "1.csv").write_text("#h\ndate\t1\nfoo\tx\n")
    status, out, err = run(capsys, "import", "kieval-csv", str(tmp_path), "--out", str(tmp_path / "o.jsonl"),
                           "--shortlist", "date")
    assert status == 0 and out == "" and "not mapped: 2 values whose keys are not in the shortlist" in err
    status, out, _ = run(capsys, "score", str(tmp_path / "o.jsonl"), "--json")
    assert json.loads(out)["entities_gt"] == 1


def test_demo_is_deterministic(capsys):
    status, first, _ = run(capsys, "demo", "--json")
    assert status == 0
    _, second, _ = run(capsys, "demo", "--json")
    assert first == second
    summary = json.loads(first)
    assert summary["scenario"] == "receipts-demo" and summary["data"]["documents"] == 1000
    assert len(summary["policies"]) >= 4
    status, text, _ = run(capsys, "demo")
    assert "document-escalation" in text and "AUC" in text and "certified" in text


def test_sweep_formats(qwen_jsonl, tmp_path, capsys):
    status, out, _ = run(capsys, "sweep", str(qwen_jsonl), "--policy", "confidence", "--policy",
                         "document-escalation", "--thresholds", "0,2", "--format", "json")
    rows = json.loads(out)
    assert status == 0 and [(r["policy"], r["threshold"]) for r in rows] == [
        ("confidence", 0.0), ("confidence", 2.0), ("document-escalation", 0.0), ("document-escalation", 2.0)]
    assert rows[0]["kieval_aligned"] == pytest.approx(1020 / 1460) and rows[0]["auto_rate"] == 1.0
    # every prediction reviewed: only the 114 additions stay, and escalation adds them too
    assert rows[1]["residual_substitutions"] == 0 and rows[1]["additions"] == 114 and rows[3]["additions"] == 0
    out_file = tmp_path / "curves.csv"
    status, _, err = run(capsys, "sweep", str(qwen_jsonl), "--policy", "confidence", "--format", "csv",
                         "--out", str(out_file))
    assert status == 0 and "wrote" in err
    assert out_file.read_text().splitlines()[0].startswith("policy,threshold,auto_rate,reviewed,")


def test_sweep_unknown_policy_and_bad_grid(qwen_jsonl, capsys):
    status, _, err = run(capsys, "sweep", str(qwen_jsonl), "--policy", "nope")
    assert status == 1 and "no bundled policy named 'nope'" in err
    status, _, err = run(capsys, "sweep", str(qwen_jsonl), "--policy", "confidence", "--thresholds", "linspace:1")
    assert status == 2 and "'linspace:1'" in err


def test_certify_json_keys(tmp_path, capsys):
    data = tmp_path / "receipts.jsonl"
    from rpa_sim.records.readers import write_records
    from rpa_sim.records.synthetic import generate_receipts
    write_records(generate_receipts(300, seed=2), data)
    status, out, _ = run(capsys, "certify", str(data), "--max-error", "0.05", "--delta", "0.1", "--json")
    result = json.loads(out)
    assert status == 0
    assert set(result) == {"threshold", "max_error", "delta", "calibration_n", "accepted_n", "accepted_errors",
                           "p_value", "upper_bound", "holdout_auto_rate", "holdout_error"}
    assert result["threshold"] is not None and result["upper_bound"] <= 0.05 + 1e-12
    status, text, _ = run(capsys, "certify", str(data), "--max-error", "0.05", "--delta", "0.1")
    assert "exchangeable" in text
    status, _, err = run(capsys, "certify", str(data), "--max-error", "1.5", "--delta", "0.1")
    assert status == 2 and err == ("rpa-sim: error: certify: argument --max-error: expected a number in (0, 1), "
                                   "got '1.5' (see 'rpa-sim certify --help')\n")


def test_run_writes_outputs(tmp_path, capsys):
    scenario = tmp_path / "s.yaml"
    scenario.write_text("name: tiny\ndata: {generate: receipts, n: 40, seed: 1}\npolicies: [confidence]\n"
                        "costs: {per_review: 0.1, per_residual_error: 1}\ntargets: [0.9]\n")
    status, out, _ = run(capsys, "run", str(scenario), "--out-dir", str(tmp_path / "out"))
    assert status == 0 and "confidence" in out
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["policies"][0]["cost_optimum"]["cost"] > 0
    assert (tmp_path / "out" / "curves.csv").read_text().startswith("policy,threshold,")


def test_run_bad_scenario(tmp_path, capsys):
    scenario = tmp_path / "bad.yaml"
    scenario.write_text("name: bad\ndata: {generate: receipts}\npolicies: [confidence]\nreviewer: {miss_rate: 2}\n")
    status, _, err = run(capsys, "run", str(scenario))
    assert status == 1
    assert err == f"rpa-sim: error: {scenario}: line 4: reviewer.miss_rate: expected a number at most 1, got 2\n"


def test_console_script_usage_error_exits_2():
    completed = subprocess.run([sys.executable, "-m", "rpa_sim.cli", "score"], capture_output=True, text=True)
    assert completed.returncode == 2 and "DATA" in completed.stderr


def test_sweep_monte_carlo_columns(tmp_path, capsys):
    from rpa_sim.records.readers import write_records
    from rpa_sim.records.synthetic import generate_receipts
    data = tmp_path / "r.jsonl"
    write_records(generate_receipts(30, seed=1), data)
    argv = ["sweep", str(data), "--policy", "audited-budget", "--thresholds", "0.5,0.9", "--format", "json",
            "--miss-rate", "0.1", "--replicates", "200", "--seed", "3"]
    status, out, _ = run(capsys, *argv)
    rows = json.loads(out)
    assert status == 0 and len(rows) == 2
    for row in rows:
        assert row["kieval_aligned_mc_low"] <= row["kieval_aligned_mc_mean"] <= row["kieval_aligned_mc_high"]
        assert abs(row["kieval_aligned_mc_mean"] - row["kieval_aligned"]) < 0.01
    assert run(capsys, *argv)[1] == out


def test_generate_is_deterministic_and_scores(tmp_path, capsys):
    settings = tmp_path / "settings.yaml"
    settings.write_text("error_scale: 0.5\nconfidence: {mode: calibrated}\n")
    first, second = tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl.gz"
    for out in (first, second):
        status, text, err = run(capsys, "generate", "receipts", "--n", "40", "--seed", "5", "--out", str(out),
                                "--settings", str(settings))
        assert status == 0 and text == "" and err == f"wrote 40 receipts records to {out}\n"
    assert first.read_bytes() == second.read_bytes()
    status, out, _ = run(capsys, "score", str(first), "--json")
    assert status == 0 and json.loads(out)["documents"] == 40
    status, text, _ = run(capsys, "generate", "docvqa", "--n", "30", "--seed", "1", "--out", str(tmp_path / "q.jsonl"))
    status, out, _ = run(capsys, "score", str(tmp_path / "q.jsonl"), "--json")
    assert json.loads(out)["questions"] == 30 and json.loads(out)["smudge"] is not None


def test_generate_bad_settings(tmp_path, capsys):
    settings = tmp_path / "bad.yaml"
    settings.write_text("error_scale: -1\n")
    status, _, err = run(capsys, "generate", "receipts", "--n", "5", "--seed", "1", "--out", str(tmp_path / "o.jsonl"),
                         "--settings", str(settings))
    assert status == 1 and "bad.yaml" in err and "error_scale" in err
    assert not (tmp_path / "o.jsonl").exists()


def test_report_command(tmp_path, capsys):
    status, out, err = run(capsys, "report", "receipts-demo", "--out", str(tmp_path / "r.html"), "--png-dir",
                           str(tmp_path / "png"))
    assert status == 0 and out == "" and err == f"wrote {tmp_path / 'r.html'}\n"
    html = (tmp_path / "r.html").read_text()
    assert html.count("<svg") == 4 and "document-escalation" in html
    assert sorted(p.name for p in (tmp_path / "png").iterdir()) == ["calibration.png", "cost.png", "decision.png",
                                                                    "tradeoff.png"]
