"""A study of data whose values carry named signals: ``summary.json``'s ``signals``, the report's "Signals"
section and its figures, all drawn from the same figures as ``rpa-sim signals``."""

from __future__ import annotations

import json
import re

import pytest

from rpa_sim.report.figures import report_figures
from rpa_sim.report.page import render_report
from rpa_sim.report.style import FIGURE_WIDTH_INCHES
from rpa_sim.study.result import StudySummary
from rpa_sim.study.run import run_scenario
from rpa_sim.study.scenario import Scenario
from tests.conftest import run_cli

SCENARIO = {
    "name": "llm-signals", "description": "Receipts read by an LLM with five signals beside its confidence.",
    "data": {"generate": "receipts", "n": 80, "seed": 3, "settings": {"signals": [
        {"kind": "degenerate", "name": "logprob"}, {"kind": "agreement", "name": "agreement"},
        {"kind": "complementary", "name": "ocr"}]}},
    "policies": ["confidence", {"name": "on-fused", "review_if": {"signals": {"fused": "sweep"}}}],
    "costs": {"currency": "EUR", "per_review": 0.05, "per_residual_error": 1.5,
              "per_value_signals": {"agreement": 0.004}},
    "certify": {"max_error": 0.1, "delta": 0.1},
}


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    return run_scenario(Scenario.model_validate(SCENARIO), tmp_path_factory.mktemp("study"))


def test_the_summary_holds_each_signals_figures_and_reads_back(result):
    signals = result.summary.signals
    assert signals is not None and signals.values == len(result.table)
    assert [signal.name for signal in signals.signals] == ["confidence", "logprob", "agreement", "ocr", "fused"]
    assert signals.max_error == 0.1 and signals.delta == 0.1
    assert set(signals.fusion) == {"confidence", "logprob", "agreement", "ocr"}
    # priced as a policy pays: the confidence and logprob free, the fused signal the sum of its parts
    assert [signal.cost for signal in signals.signals] == [0.0, 0.0, 0.004, 0.0, 0.004]
    assert "degenerate" in signals["logprob"].verdicts
    assert all(len(signal.roc_errors) <= 101 and signal.roc_errors[0] == 0.0 for signal in signals.signals)
    text = result.summary.to_json()
    assert StudySummary.from_json(text) == result.summary and StudySummary.from_json(text).to_json() == text


def test_the_figures_are_those_of_rpa_sim_signals(result, tmp_path, capsys):
    table = tmp_path / "table.parquet"
    from rpa_sim.evaluate.tablefile import write_table

    write_table(result.table, table)
    status, out, _ = run_cli(capsys, "signals", table, "--max-error", "0.1", "--delta", "0.1", "--json")
    assert status == 0
    command = {row["signal"]: row for row in json.loads(out)["signals"]}
    for signal in result.summary.signals.signals:
        row = command[signal.name]
        assert (signal.auroc, signal.ece, signal.certified_automation, signal.threshold, signal.verdicts) == (
            row["auroc"], row["ece"], row["certified_automation"], row["threshold"], tuple(row["verdicts"]))


def test_the_report_has_a_signals_section_with_its_figures_fitted_to_a_phone(result):
    figures = report_figures(result)
    for name in ("signals-roc", "signals-reliability", "signals-automation"):
        assert figures[name].get_size_inches()[0] <= FIGURE_WIDTH_INCHES
    html = render_report(result, figures=figures)
    section = html[html.index("<h2>Signals</h2>"):]
    section = section[:section.index("</details>")]
    for name in ("signals-roc", "signals-reliability", "signals-automation"):
        assert f'id="plot-{name}"' in section
    assert '<table id="signals">' in section
    fused = result.summary.signals["fused"]
    assert f"<strong>fused</strong>: {fused.words}" in section
    rows = re.findall(r"<tr><td>(\w+)</td>", section)
    assert rows == ["confidence", "logprob", "agreement", "ocr", "fused"]


def test_a_study_without_named_signals_has_neither_key_nor_section(tmp_path):
    plain = {**SCENARIO, "data": {"generate": "receipts", "n": 20, "seed": 3}, "policies": ["confidence"]}
    plain["costs"] = {"per_review": 0.05}
    result = run_scenario(Scenario.model_validate(plain), tmp_path)
    assert result.summary.signals is None and "signals" not in result.summary.to_dict()
    assert "<h2>Signals</h2>" not in render_report(result)
