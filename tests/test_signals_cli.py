"""``rpa-sim signals DATA``: the figures as certify gives them, the fused signal on the generator's LLM signals,
the cheapest set, and bad input in one line each."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

from rpa_sim.evaluate.outcomes import evaluate_kie
from rpa_sim.records.models import KIERecord
from rpa_sim.records.synthetic import ReceiptSettings, receipt_dicts, write_generated
from rpa_sim.records.synthetic.llm_signals import signal_specs
from rpa_sim.route.signals.analysis import Certification
from rpa_sim.route.signals.table import analyse_table
from tests.conftest import run_cli, write_lines


def _records(n, *, seed=0, signal_names=("agreement",), swap=False):
    """KIE records of one entity each: its confidence and each named signal from one informative draw (the first
    signal's draw is the confidence's when ``swap``), errors 20% of them."""
    rng = np.random.default_rng(seed)
    records = []
    for i in range(n):
        wrong = rng.random() < 0.2
        draws = {name: round(float(np.clip((0.45 if wrong else 0.8) + rng.normal(0, 0.15), 0, 1)), 4)
                 for name in ("confidence", *signal_names)}
        if swap:
            draws["confidence"], draws[signal_names[0]] = draws[signal_names[0]], draws["confidence"]
        confidence = draws.pop("confidence")
        records.append({"id": f"d{i}", "ground_truth": {"entities": [{"key": "total", "value": "10"}]},
                        "prediction": {"entities": [{"key": "total", "value": "11" if wrong else "10",
                                                     "confidence": confidence, "signals": draws}]}})
    return records


def test_a_signals_certified_automation_is_what_certify_gives_with_it_as_the_confidence(tmp_path, capsys):
    plain = write_lines(tmp_path / "plain.jsonl", *_records(3000, seed=1))
    swapped = write_lines(tmp_path / "swapped.jsonl", *_records(3000, seed=1, swap=True))
    options = ("--max-error", "0.05", "--delta", "0.1", "--seed", "3", "--json")
    status, out, _ = run_cli(capsys, "signals", plain, *options)
    assert status == 0
    agreement = next(row for row in json.loads(out)["signals"] if row["signal"] == "agreement")
    status, out, _ = run_cli(capsys, "certify", swapped, *options)
    assert status == 0
    certified = json.loads(out)
    assert certified["threshold"] is not None
    assert agreement["threshold"] == certified["threshold"]
    assert agreement["certified_automation"] == certified["holdout_auto_rate"]


def test_the_fused_signal_certifies_at_least_the_best_single_signal_on_the_llm_signals():
    # the generator's five LLM signals beside the confidence, 1,000 receipts; every figure on held-out documents
    settings = ReceiptSettings(signals=signal_specs("llm"))
    table = evaluate_kie((KIERecord.model_validate(r) for r in receipt_dicts(1000, seed=11, settings=settings)),
                         grounding="given")
    (part,) = analyse_table(table, certification=Certification(max_error=0.05, delta=0.1, seed=4))
    analysis = part.analysis
    best = analysis.best()
    assert best is not None and best.automation > 0.5
    assert analysis["fused"].automation >= best.automation + 0.05
    assert analysis["fused"].discrimination.low > best.discrimination.high
    assert "degenerate" in analysis["logprob"].verdicts
    assert "degenerate" not in analysis["agreement"].verdicts and "degenerate" not in analysis["confidence"].verdicts


def test_table_csv_and_json_say_the_same(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    path = write_lines(tmp_path / "records.jsonl", *_records(600, seed=2, signal_names=("agreement", "ocr")))
    costs = tmp_path / "costs.yaml"
    costs.write_text("agreement: 0.01\nocr: 0.002\nconfidence: 0\n")
    options = ("--max-error", "0.1", "--delta", "0.1", "--costs", costs, "--target-auto-rate", "0.5")
    status, printed, _ = run_cli(capsys, "signals", path, *options)
    assert status == 0
    # printed, fitted to the terminal's 80 columns: every line within them, the same words as the file's text
    assert max(map(len, printed.splitlines())) <= 80
    assert run_cli(capsys, "signals", path, *options, "--out", tmp_path / "signals.txt")[0] == 0
    text = (tmp_path / "signals.txt").read_text()
    assert max(map(len, text.splitlines())) > 80 and printed.split() == text.split()
    assert "Cheapest set that certifies an automation of 50.0% or more" in text
    status, out, _ = run_cli(capsys, "signals", path, *options, "--json")
    payload = json.loads(out)
    assert [row["signal"] for row in payload["signals"]] == ["confidence", "agreement", "ocr", "fused"]
    assert len(payload["subsets"]["rows"]) == 7
    cheapest = payload["subsets"]["cheapest"]
    assert f"{' + '.join(cheapest['signals'].split('+'))}, at {cheapest['cost']:g} per value" in text
    status, out, _ = run_cli(capsys, "signals", path, *options, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [row["signals"] for row in rows if row["row"] == "signal"] == ["confidence", "agreement", "ocr", "fused"]
    assert len([row for row in rows if row["row"] == "subset"]) == 7
    fused = next(row for row in rows if row["signals"] == "fused")
    assert float(fused["auroc"]) == pytest.approx(payload["signals"][3]["auroc"], rel=1e-12)


def test_by_field_measures_each_field_on_its_own(tmp_path, capsys):
    records = _records(400, seed=3)
    for record in records[200:]:
        for entity in record["prediction"]["entities"] + record["ground_truth"]["entities"]:
            entity["key"] = "date"
    path = write_lines(tmp_path / "records.jsonl", *records)
    status, out, _ = run_cli(capsys, "signals", path, "--by", "field", "--json")
    assert status == 0
    parts = json.loads(out)["parts"]
    assert [(part["field"], part["values"]) for part in parts] == [("total", 200), ("date", 200)]


def test_a_parquet_table_gives_the_same_figures(tmp_path, capsys):
    records = tmp_path / "receipts.jsonl"
    settings = ReceiptSettings(signals=signal_specs("agreement,ocr=complementary"))
    write_generated(receipt_dicts(40, seed=1, settings=settings), records)
    table = tmp_path / "table.parquet"
    assert run_cli(capsys, "evaluate", records, "--out", table)[0] == 0
    status, from_records, _ = run_cli(capsys, "signals", records, "--json")
    status, from_table, _ = run_cli(capsys, "signals", table, "--json")
    assert status == 0 and json.loads(from_records) == json.loads(from_table)


# -- bad input and usage ------------------------------------------------------------------------------------------


@pytest.fixture
def records_file(tmp_path):
    return write_lines(tmp_path / "records.jsonl", *_records(50, signal_names=("agreement", "ocr")))


@pytest.mark.parametrize(("costs", "message"), [
    ("gpt4: 0.02\n", "costs name signal 'gpt4', which no value carries (signals: 'confidence', 'agreement', 'ocr')"),
    ("agreement: -1\n", "the cost of signal 'agreement' must be a number of at least 0 per value, got -1"),
    ("- agreement\n", "costs must be a mapping of signal names to a cost per value"),
])
def test_bad_costs_are_one_line_naming_the_file(records_file, tmp_path, capsys, costs, message):
    path = tmp_path / "costs.yaml"
    path.write_text(costs)
    status, _, err = run_cli(capsys, "signals", records_file, "--max-error", "0.1", "--delta", "0.1",
                             "--costs", path)
    assert status == 1 and len(err.strip().splitlines()) == 1
    assert message in err and "costs.yaml" in err


def test_more_than_ten_signals_for_the_subset_search_is_one_line(tmp_path, capsys):
    path = write_lines(tmp_path / "records.jsonl", *_records(20, signal_names=tuple(f"s{i}" for i in range(10))))
    status, _, err = run_cli(capsys, "signals", path, "--max-error", "0.1", "--delta", "0.1",
                             "--target-auto-rate", "0.5")
    assert status == 1 and len(err.strip().splitlines()) == 1
    assert "at most 10 signals, got 11 (confidence, s0, s1" in err


@pytest.mark.parametrize(("options", "message"), [
    (("--max-error", "0.1"), "--max-error and --delta go together"),
    (("--target-auto-rate", "0.5"), "--costs and --target-auto-rate need --max-error and --delta"),
])
def test_usage_errors(records_file, capsys, options, message):
    status, _, err = run_cli(capsys, "signals", records_file, *options)
    assert status == 2 and message in err and len(err.strip().splitlines()) == 1
