"""rpa-sim replay, estimate and plan-audit (issue 14), through the command line."""

from __future__ import annotations

import gzip
import json
from collections import Counter

import pytest
import yaml
from scipy.stats import binomtest

from rpa_sim.operate.monitoring.estimators import estimate
from rpa_sim.operate.monitoring.log import read_log
from rpa_sim.records.synthetic import docvqa_dicts, receipt_dicts, write_generated
from tests.conftest import run_cli, write_lines

THRESHOLD = 0.9


@pytest.fixture(scope="module")
def receipts(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "receipts.jsonl"
    write_generated(receipt_dicts(120, seed=4), path)
    return path


def predicted_entities(record: dict) -> list[dict]:
    """The predicted entities of a record, grouped or not, read straight from its JSON."""
    prediction = record["prediction"]
    entities = list(prediction.get("entities", []))
    for group in prediction.get("groups", []):
        entities.extend(group["entities"] if isinstance(group, dict) else group)
    return [entity for entity in entities if entity["value"] != ""]  # KIEval ignores empty values


def test_the_log_has_a_row_per_predicted_entity_and_routes_by_the_threshold(receipts, tmp_path, capsys):
    log = tmp_path / "day.jsonl"
    status, out, err = run_cli(capsys, "replay", receipts, "--policy", "confidence", "--threshold", THRESHOLD,
                               "--audit-rate", "1", "--seed", "3", "--out", log, "--workers", "1")
    assert status == 0 and out == ""
    records = [json.loads(line) for line in receipts.read_text().splitlines()]
    expected_ids = Counter({record["id"]: len(predicted_entities(record)) for record in records})
    confidences = [entity["confidence"] for record in records for entity in predicted_entities(record)]
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert Counter(row["id"] for row in rows) == +expected_ids
    reviewed = sum(c < THRESHOLD for c in confidences)
    assert Counter(row["route"] for row in rows) == Counter({"review": reviewed, "audit": len(rows) - reviewed})
    assert sorted(row["confidence"] for row in rows) == sorted(confidences)
    assert all((row["route"] == "review") == (row["confidence"] < THRESHOLD) for row in rows)
    assert all(row["inclusion_probability"] == (1.0 if row["route"] == "review" else 1) for row in rows)
    assert err == (f"wrote {log}: {len(rows):,} rows, {reviewed:,} reviewed, {len(rows) - reviewed:,} auto-accepted "
                   f"({len(rows) - reviewed:,} audited)\n")


def test_the_same_seed_gives_the_same_bytes(receipts, tmp_path, capsys):
    paths = [tmp_path / name for name in ("a.jsonl.gz", "b.jsonl.gz", "c.jsonl.gz")]
    for path, seed in zip(paths, ("5", "5", "6")):
        status, _, _ = run_cli(capsys, "replay", receipts, "--policy", "audited-budget", "--threshold", "0.95",
                               "--miss-rate", "0.2", "--false-correction-rate", "0.05", "--seed", seed, "--out", path)
        assert status == 0
    assert paths[0].read_bytes() == paths[1].read_bytes()
    assert gzip.decompress(paths[0].read_bytes()) != gzip.decompress(paths[2].read_bytes())


def test_estimate_prints_what_the_library_computes(receipts, tmp_path, capsys):
    log = tmp_path / "day.jsonl"
    run_cli(capsys, "replay", receipts, "--policy", "confidence", "--threshold", THRESHOLD, "--audit-rate", "0.2",
            "--seed", "1", "--out", log)
    for method in ("classical", "stratified", "ppi"):
        status, out, err = run_cli(capsys, "estimate", log, "--method", method, "--json")
        assert status == 0 and err == ""
        payload = json.loads(out)
        assert payload == json.loads(json.dumps(estimate(read_log(log), method=method).to_dict()))
        assert set(payload["auto_error"]) == {"estimate", "low", "high"}
        assert {"method", "audited", "naive", "post_correction_quality"} <= set(payload)


def test_a_foreign_minimal_log_worked_example(tmp_path, capsys):
    # 4 reviewed rows (2 found wrong); 20 accepted at rate 0.25, 5 of them audited with 1 error
    rows = ([{"route": "review", "correct": False}] * 2 + [{"route": "review", "correct": True}] * 2
            + [{"route": "audit", "inclusion_probability": 0.25, "correct": False}]
            + [{"route": "audit", "inclusion_probability": 0.25, "correct": True}] * 4
            + [{"route": "auto", "inclusion_probability": 0.25}] * 15)
    log = write_lines(tmp_path / "export.jsonl", *rows)
    status, out, _ = run_cli(capsys, "estimate", log, "--method", "classical", "--confidence-level", "0.9", "--json")
    assert status == 0
    payload = json.loads(out)
    exact = binomtest(1, 5).proportion_ci(confidence_level=0.9, method="exact")
    assert (payload["rows"], payload["reviewed"], payload["auto_accepted"], payload["audited"]) == (24, 4, 20, 5)
    assert payload["auto_error"] == pytest.approx({"estimate": 0.2, "low": exact.low, "high": exact.high})
    assert payload["horvitz_thompson"] == pytest.approx(1 / (0.25 * 20))
    assert payload["naive"] == 0.5
    share = 20 / 24
    assert payload["post_correction_quality"] == pytest.approx(
        {"estimate": 1 - share * 0.2, "low": 1 - share * exact.high, "high": 1 - share * exact.low})


def test_estimate_table_and_csv(tmp_path, capsys):
    log = write_lines(tmp_path / "export.jsonl", {"route": "review", "correct": False},
                      {"route": "audit", "inclusion_probability": 0.5, "correct": True, "stratum": "s"},
                      {"route": "auto", "inclusion_probability": 0.5, "stratum": "s"})
    status, out, _ = run_cli(capsys, "estimate", log, "--method", "stratified")
    assert status == 0
    assert out.splitlines()[0] == "stratified estimate, 95% intervals"
    assert "  auto-accepted error rate      0.0000  [0.0000, 0.9750]" in out
    assert "stratum s  " in out
    status, out, _ = run_cli(capsys, "estimate", log, "--method", "stratified", "--format", "csv")
    header, row = out.splitlines()
    assert header.split(",")[:3] == ["method", "confidence_level", "rows"] and row.startswith("stratified,0.95,3,")


@pytest.mark.parametrize("lines, method, message", [
    (['{"route": "auto", "inclusion_probability": 0.1, "correct": true}'], "classical",
     "line 1: correct: an auto row was checked by nobody"),
    (['{"route": "audit", "inclusion_probability": 0.1, "correct": true}'], "ppi",
     "line 1: confidence: missing: ppi needs the confidence of every auto-accepted row"),
    (['{"route": "audit", "inclusion_probability": 0.1, "correct": true}',
      '{"route": "audit", "inclusion_probability": 0.2, "correct": true}'], "classical",
     "classical assumes one audit rate for every auto-accepted row"),
    (["not json"], "classical", "line 1: invalid JSON: Expecting value at column 1"),
])
def test_bad_logs_are_one_line_errors(tmp_path, capsys, lines, method, message):
    log = write_lines(tmp_path / "bad.jsonl", *lines)
    status, out, err = run_cli(capsys, "estimate", log, "--method", method)
    assert (status, out) == (1, "")
    assert err.startswith(f"rpa-sim: error: {log}") and message in err and err.count("\n") == 1


def test_a_missing_log_is_a_one_line_error(tmp_path, capsys):
    status, _, err = run_cli(capsys, "estimate", tmp_path / "absent.jsonl", "--method", "ppi")
    assert status == 1 and err == f"rpa-sim: error: {tmp_path / 'absent.jsonl'}: no such file\n"


@pytest.mark.parametrize("argv, message", [
    (["replay", "D", "--policy", "confidence", "--threshold", "0.9", "--seed", "1", "--out", "L", "--audit-rate",
      "0.1", "--audit-plan", "p.yaml"], "argument --audit-plan: not allowed with argument --audit-rate"),
    (["replay", "D", "--policy", "confidence", "--threshold", "-1", "--seed", "1", "--out", "L"],
     "argument --threshold: expected a number >= 0 (scores are in [0, 1]; above 1 reviews everything), got '-1'"),
    (["replay", "D", "--policy", "confidence", "--threshold", "0.9", "--seed", "1"],
     "replay: the following arguments are required: --out (see 'rpa-sim replay --help')"),
    (["replay", "D", "--policy", "confidence", "--threshold", "0.9", "--out", "L", "--log", "M"],
     "replay: argument --log: not allowed with argument --out (see 'rpa-sim replay --help')"),
    (["estimate", "L"], "the following arguments are required: --method"),
    (["estimate", "L", "--method", "ppi", "--confidence-level", "1"],
     "argument --confidence-level: expected a number in (0, 1), got '1'"),
    (["plan-audit", "D", "--policy", "confidence", "--threshold", "0.9"],
     "one of the arguments --target-width --budget is required"),
    (["plan-audit", "D", "--policy", "confidence", "--threshold", "0.9", "--budget", "5", "--target-width", "0.1"],
     "argument --target-width: not allowed with argument --budget"),
])
def test_usage_errors(capsys, argv, message):
    status, out, err = run_cli(capsys, *argv)
    assert (status, out) == (2, "")
    assert message in err and err.count("\n") == 1


def test_a_plan_written_by_plan_audit_drives_replay(receipts, tmp_path, capsys):
    plan = tmp_path / "plans" / "plan.yaml"
    status, out, err = run_cli(capsys, "plan-audit", receipts, "--policy", "confidence", "--threshold", THRESHOLD,
                               "--budget", "60", "--bands", "3", "--cost-per-audit", "1.5", "--out", plan, "--json")
    assert status == 0 and err == f"wrote {plan}\n"
    payload = json.loads(out)
    assert (payload["audits"], payload["cost"]) == (60, 90.0)
    assert sum(band["audits"] for band in payload["bands"]) == 60
    strata = yaml.safe_load(plan.read_text())["strata"]
    assert [stratum["rate"] for stratum in strata] == [band["rate"] for band in payload["bands"]]
    log = tmp_path / "day.jsonl"
    status, _, _ = run_cli(capsys, "replay", receipts, "--policy", "confidence", "--threshold", THRESHOLD,
                           "--audit-plan", plan, "--seed", "2", "--out", log)
    assert status == 0
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    rate_of = {f"confidence {band['band']}": band["rate"] for band in payload["bands"]}
    accepted = [row for row in rows if row["route"] != "review"]
    assert {row["stratum"] for row in accepted} == set(rate_of)
    assert all(row["inclusion_probability"] == rate_of[row["stratum"]] for row in accepted)
    status, out, _ = run_cli(capsys, "estimate", log, "--method", "stratified", "--json")
    assert status == 0 and len(json.loads(out)["strata"]) == 3


def test_plan_audit_table_and_csv(receipts, capsys):
    status, out, _ = run_cli(capsys, "plan-audit", receipts, "--policy", "confidence", "--threshold", THRESHOLD,
                             "--target-width", "0.08", "--bands", "2")
    assert status == 0
    assert out.startswith("audit plan for confidence at threshold 0.9: ")
    assert out.splitlines()[2].split() == ["band", "auto-accepted", "prior", "error", "audits", "rate"]
    status, out, _ = run_cli(capsys, "plan-audit", receipts, "--policy", "confidence", "--threshold", THRESHOLD,
                             "--target-width", "0.08", "--bands", "2", "--format", "csv")
    assert out.splitlines()[0] == "band,at_least,below,auto_accepted,prior_error,audits,rate"
    assert len(out.splitlines()) == 3


def test_input_errors_of_replay_and_plan_audit_are_one_line(receipts, tmp_path, capsys):
    plan = tmp_path / "plan.yaml"
    plan.write_text("strata:\n- fields: [totl]\n  rate: 0.5\n")
    status, _, err = run_cli(capsys, "replay", receipts, "--policy", "confidence", "--threshold", "0.9",
                             "--audit-plan", plan, "--seed", "1", "--out", tmp_path / "day.jsonl")
    assert status == 1 and "audit plan stratum 'fields totl' names 'totl', which no item has" in err
    assert err.count("\n") == 1 and not (tmp_path / "day.jsonl").exists()
    status, _, err = run_cli(capsys, "plan-audit", receipts, "--policy", "confidence", "--threshold", "1.5",
                             "--budget", "10")
    assert status == 1 and err == ("rpa-sim: error: policy 'confidence' auto-accepts nothing at threshold 1.5: "
                                   "there is nothing to audit\n")
    status, _, err = run_cli(capsys, "replay", receipts, "--policy", "confidence", "--threshold", "0.9", "--seed", "1",
                             "--out", tmp_path)
    assert status == 2 and err == (f"rpa-sim: error: replay: argument --out: '{tmp_path}' is a folder, not a file "
                                   f"(see 'rpa-sim replay --help')\n")


def test_vqa_data_replays_and_refuses_document_escalation(tmp_path, capsys):
    questions = tmp_path / "questions.jsonl"
    write_generated(docvqa_dicts(80, seed=2), questions)
    log = tmp_path / "day.jsonl"
    status, _, _ = run_cli(capsys, "replay", questions, "--policy", "confidence", "--threshold", "0.8",
                           "--audit-rate", "0.5", "--seed", "1", "--out", log)
    assert status == 0
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(rows) == 80 and len({row["id"] for row in rows}) == 80
    status, _, err = run_cli(capsys, "replay", questions, "--policy", "document-escalation", "--threshold", "0.8",
                             "--seed", "1", "--out", log)
    assert status == 1 and "escalates documents, but these items have no documents" in err


def test_log_is_a_deprecated_spelling_of_out(receipts, tmp_path, capsys):
    day = ["replay", receipts, "--policy", "confidence", "--threshold", THRESHOLD, "--audit-rate", "0.3", "--seed", "2"]
    status, out, err = run_cli(capsys, *day, "--out", tmp_path / "new.jsonl")
    assert (status, out, err.count("\n")) == (0, "", 1) and err.startswith(f"wrote {tmp_path / 'new.jsonl'}: ")
    status, out, old_err = run_cli(capsys, *day, "--log", tmp_path / "old.jsonl")
    assert (status, out) == (0, "")
    assert old_err.splitlines() == [err.removesuffix("\n").replace("new.jsonl", "old.jsonl"),
                                    "rpa-sim: warning: --log is deprecated and will be removed in the next release; "
                                    "use --out"]
    assert (tmp_path / "old.jsonl").read_bytes() == (tmp_path / "new.jsonl").read_bytes()
    status, _, err = run_cli(capsys, *day, "--log", receipts)
    assert (status, err) == (2, f"rpa-sim: error: --log {receipts} is DATA {receipts}: an output never replaces an "
                                f"input\n")


def test_the_seed_is_0_unless_given(receipts, tmp_path, capsys):
    day = ["replay", receipts, "--policy", "confidence", "--threshold", THRESHOLD, "--audit-rate", "0.5"]
    for name, seed in (("default.jsonl", []), ("zero.jsonl", ["--seed", "0"]), ("one.jsonl", ["--seed", "1"])):
        assert run_cli(capsys, *day, *seed, "--out", tmp_path / name)[0] == 0
    assert (tmp_path / "default.jsonl").read_bytes() == (tmp_path / "zero.jsonl").read_bytes()
    assert (tmp_path / "default.jsonl").read_bytes() != (tmp_path / "one.jsonl").read_bytes()
