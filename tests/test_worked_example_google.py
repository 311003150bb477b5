"""docs/worked-example-google.md: a study of the shared Google Document AI invoice, whose certified threshold is
refused because one document is too little to conclude; every figure and message of the page."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli, shared_path

SCENARIO = """name: google-invoice
description: One invoice read by Google Document AI's Invoice Parser.
data:
  file: invoice.jsonl
policies:
  - confidence
  - document-escalation
targets: [0.95]
certify:
  max_error: 0.05
  delta: 0.05
"""
TOO_LITTLE = ("No threshold is certified: there is too little calibration data to conclude. To show that at most "
              "0.05 of the auto-accepted values are wrong (max_error) with probability at least 0.95 (1 - delta), at "
              "least 59 values must be auto-accepted, even if none of them is wrong; the calibration data holds 31 "
              "values from 1 document. Review everything, add calibration documents, or relax max_error or delta. "
              "Assumption: ")
UNCERTIFIED = ("no point meets a certified error bound of 0.05 on its own: no policy has a certified threshold on "
               "this data (each policy's certified.guarantee in summary.json, or rpa-sim certify, says why)")


@pytest.fixture
def study(tmp_path, capsys, monkeypatch):
    """The imported invoice, the scenario and its run, in ``tmp_path``, as a wide terminal shows it."""
    monkeypatch.setenv("COLUMNS", "1000")
    folder = shared_path("data", "vendors", "google-docai")
    (tmp_path / "fields.yaml").write_text("line_item: line_items\n")
    status, _, _ = run_cli(capsys, "import", "google-docai", folder / "invoice_parser_output.json", "--ground-truth",
                           folder / "ground_truth.json", "--fields", tmp_path / "fields.yaml", "--out",
                           tmp_path / "invoice.jsonl")
    assert status == 0
    (tmp_path / "google-invoice.yaml").write_text(SCENARIO)
    status, out, err = run_cli(capsys, "run", tmp_path / "google-invoice.yaml", "--out-dir", tmp_path / "results")
    assert status == 0, err
    return tmp_path, out


def test_the_certified_threshold_is_refused_and_the_page_says_why(study, capsys):
    folder, out = study
    assert "confidence           0.8913     0.0645            -             -" in out
    assert out.startswith(
        "No plan meets the constraints: the certified error target (≤ 5.0%) binds: no point meets it even alone.\n"
        "  ⚠ The sample is too small: 1 document, fewer than 30; no figure here is reliable yet.\n"
        "  the nearest point, which misses: confidence at τ = 0.9931\n"
        "  quality (KIEval_Aligned^τ) 0.9630 ≥ 0.9500 ✓ met\n"
        "  certified error 0.0% measured, not certified ≤ 5.0% ✗ not met\n")
    summary = json.loads((folder / "results" / "summary.json").read_text())
    for policy in summary["policies"]:
        certified = policy["certified"]
        assert certified["guarantee"].startswith(TOO_LITTLE)
        assert (certified["threshold"], certified["calibration_n"], certified["holdout_auto_rate"]) == (None, 31, None)
    decision = summary["decision"]
    assert (decision["feasible"], decision["policy"], decision["threshold"]) == (False, "confidence", 0.99308187)
    assert decision["point"]["reviewed"] == 29.0 and decision["reason"] == UNCERTIFIED
    status, text, _ = run_cli(capsys, "certify", folder / "invoice.jsonl", "--max-error", "0.05", "--delta", "0.05")
    assert status == 0 and text.startswith(TOO_LITTLE)
    status, text, _ = run_cli(capsys, "certify", folder / "invoice.jsonl", "--max-error", "0.2", "--delta", "0.1")
    assert status == 0 and text.startswith(
        "No threshold is certified: even the most confident values are wrong too often. The strictest threshold that "
        "auto-accepts enough values to be tested (at least 11) already lets through too many errors")


def test_the_decision_goes_to_label_studio_with_a_note(study, capsys):
    folder, _ = study
    status, _, err = run_cli(capsys, "export-policy", "label-studio", folder / "invoice.jsonl", "--from",
                             folder / "results" / "summary.json", "--scenario", folder / "google-invoice.yaml",
                             "--out", folder / "tasks.json")
    assert (status, err) == (1, f"rpa-sim: error: {folder / 'results' / 'summary.json'}: its decision is not feasible, "
                                f"no plan meets the constraints ({UNCERTIFIED}): give --allow-infeasible to export "
                                "its nearest point all the same\n")
    assert not (folder / "tasks.json").exists()
    status, _, err = run_cli(capsys, "export-policy", "label-studio", folder / "invoice.jsonl", "--from",
                             folder / "results" / "summary.json", "--scenario", folder / "google-invoice.yaml",
                             "--out", folder / "tasks.json", "--allow-infeasible")
    assert status == 0
    assert err == (f"note: the decision of {folder / 'results' / 'summary.json'} is not feasible: {UNCERTIFIED}\n"
                   f"wrote {folder / 'tasks.json'}: 1 task, 29 of 31 values; the sweep counts 29 reviewed at "
                   f"τ 0.993082\n")
    (task,) = json.loads((folder / "tasks.json").read_text())
    results = task["predictions"][0]["result"]
    assert [result["from_name"] for result in results[:3]] == ["supplier_iban", "receiver_tax_id", "purchase_order"]
    assert len(results) == 29 and results[0]["score"] == 1.51808e-05
