"""The HTML report: every plot and table is there, its numbers are the summary's, the bytes are reproducible."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from rpa_sim.report import write_report
from rpa_sim.scenario import load_scenario
from rpa_sim.study import run_scenario, write_outputs

KIE = """
name: small-kie
description: A small <receipts> study & its report.
data: {generate: receipts, n: 80, seed: 5}
policies:
  - confidence
  - document-escalation
reviewer: {miss_rate: 0.02, seconds_per_item: 6, seconds_per_document: 15}
costs: {hourly_rate: 30, per_residual_error: 1.5}
targets: [0.9, 0.95]
certify: {max_error: 0.05, delta: 0.1}
"""

VQA = """
name: small-vqa
data: {generate: docvqa, n: 60, seed: 1}
policies: [confidence, grounding-gate]
costs: {hourly_rate: 30, per_residual_error: 2}
targets: [0.9]
alpha: 0.3
"""

NO_COSTS = """
name: no-costs
data: {generate: receipts, n: 30, seed: 2}
policies: [confidence]
targets: [0.9]
"""


class _Cells(HTMLParser):
    """Every table's header and body cells by table id, and the ids of the elements."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, dict[str, list]] = {}
        self.ids: list[str] = []
        self._table: str | None = None
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if "id" in attributes:
            self.ids.append(attributes["id"])
        if tag == "table":
            self._table = attributes["id"]
            self.tables[self._table] = {"header": [], "rows": []}
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self._row.append("".join(self._cell))
            self._cell = None
        elif tag == "tr":
            table = self.tables[self._table]
            if table["header"]:
                table["rows"].append(self._row)
            else:
                table["header"] = self._row
        elif tag == "table":
            self._table = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def _f(value, digits=4):
    return "-" if value is None else f"{value:.{digits}f}"


def _run(tmp_path: Path, text: str):
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    scenario, base = load_scenario(path)
    return run_scenario(scenario, base)


def _parse(path: Path) -> _Cells:
    parser = _Cells()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


@pytest.fixture(scope="module")
def kie(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("kie")
    result = _run(tmp, KIE)
    report = write_report(result, tmp / "report" / "report.html", png_dir=tmp / "png")
    write_outputs(result, tmp / "out")
    return result, report, tmp


@pytest.fixture(scope="module")
def vqa(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("vqa")
    result = _run(tmp, VQA)
    return result, write_report(result, tmp / "report.html", png_dir=tmp / "png"), tmp


def test_kie_report_holds_every_plot_and_table(kie):
    _, report, _ = kie
    text = report.read_text(encoding="utf-8")
    assert text.count("<svg") == 3
    parsed = _parse(report)
    for name in ("tradeoff", "cost", "calibration"):
        assert f"plot-{name}" in parsed.ids and f"svg-{name}" in parsed.ids
    assert "plot-smudge-alpha" not in parsed.ids
    assert {"data", "reviewer", "costs", "comparison", "baselines", "calibration", "optimized"} <= set(parsed.tables)
    assert "A small &lt;receipts&gt; study &amp; its report." in text  # the description, escaped
    assert "Costs were not set" not in text


def test_kie_comparison_equals_summary_json(kie):
    _, report, tmp = kie
    summary = json.loads((tmp / "out" / "summary.json").read_text())
    table = _parse(report).tables["comparison"]
    assert table["header"] == ["policy", "AUC", "auto-rate at 0.9", "τ at 0.9", "auto-rate at 0.95", "τ at 0.95",
                               "best cost", "τ at best cost", "saves vs review-all", "saves vs review-none",
                               "certified τ", "dominated by"]
    expected = []
    for p in summary["policies"]:
        row = [p["policy"], _f(p["auc"])]
        for target in ("0.9", "0.95"):
            point = p["operating_points"][target]
            row += [_f(point and point["auto_rate"]), _f(point and point["threshold"])]
        best = p["cost_optimum"]
        row += [_f(best["cost"], 2), _f(best["threshold"]), _f(best["savings_vs_review_all"], 2),
                _f(best["savings_vs_review_none"], 2), _f(p["certified"]["threshold"]),
                ", ".join(p["dominated_by"]) or "-"]
        expected.append(row)
    assert table["rows"] == expected
    text = report.read_text(encoding="utf-8")
    for p in summary["policies"]:
        guarantee = p["certified"]["guarantee"].replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        assert guarantee in text


def test_kie_other_tables_equal_summary_json(kie):
    _, report, tmp = kie
    summary = json.loads((tmp / "out" / "summary.json").read_text())
    tables = _parse(report).tables
    data = dict(tables["data"]["rows"])
    assert data["documents"] == str(summary["data"]["documents"])
    assert data["KIEval_Aligned before review"] == _f(summary["data"]["kieval_aligned"])
    calibration = [row[1] for row in tables["calibration"]["rows"]]
    assert calibration == [_f(summary["calibration"][k]) for k in ("ece_equal_width", "ece_equal_mass", "aurc")]
    baselines = {row[0]: row[1:] for row in tables["baselines"]["rows"]}
    for label, key in (("review nothing", "review_none"), ("review everything", "review_all")):
        b = summary["baselines"][key]
        assert baselines[label] == [_f(b["metric"]), _f(b["reviewed"], 0), _f(b["cost"], 2)]
    optimized = tables["optimized"]
    feasible = [t for t, entry in summary["optimized_per_field"].items() if entry["feasible"]]
    assert feasible and optimized["header"] == ["field", *(f"target {t}" for t in feasible)]
    rows = {row[0]: row[1:] for row in optimized["rows"]}
    for t_index, target in enumerate(feasible):
        entry = summary["optimized_per_field"][target]
        for field, threshold in entry["thresholds"].items():
            assert rows[field][t_index] == _f(threshold)
        assert rows["auto-rate, per-field thresholds"][t_index] == _f(entry["auto_rate"])
        assert rows["cost, per-field thresholds"][t_index] == _f(entry["cost"], 2)


def test_report_is_byte_identical_and_self_contained(kie, tmp_path):
    result, report, _ = kie
    again = write_report(result, tmp_path / "again.html")
    assert again.read_bytes() == report.read_bytes()
    text = report.read_text(encoding="utf-8")
    assert "http" not in text  # no external resource, not even a namespace URI
    assert not re.search(r"<(script|link|img)\b", text)
    assert not re.search(r"20\d\d-\d\d-\d\d", text)  # no date
    assert [p.name for p in report.parent.iterdir()] == ["report.html"]  # no temporary file left


def test_png_dir_writes_every_plot(kie, vqa):
    for _, _, tmp in (kie, vqa):
        for png in (tmp / "png").iterdir():
            assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in (kie[2] / "png").iterdir()) == ["calibration.png", "cost.png", "tradeoff.png"]
    assert sorted(p.name for p in (vqa[2] / "png").iterdir()) == ["calibration.png", "cost.png", "smudge-alpha.png",
                                                                  "tradeoff.png"]


def test_vqa_report_has_the_alpha_plot(vqa, tmp_path):
    result, report, _ = vqa
    text = report.read_text(encoding="utf-8")
    assert text.count("<svg") == 4
    parsed = _parse(report)
    expected = {"plot-tradeoff", "plot-cost", "plot-calibration", "plot-smudge-alpha", "svg-smudge-alpha"}
    assert expected <= set(parsed.ids)
    assert "scenario alpha 0.3" in text  # the marker's legend (SVG text is kept as text)
    assert "SMuDGE against alpha" in text
    data = dict(parsed.tables["data"]["rows"])
    assert data["ANLS before review"] == _f(result.summary["data"]["anls"])
    rows = parsed.tables["comparison"]["rows"]
    assert [row[0] for row in rows] == ["confidence", "grounding-gate"]
    assert [row[1] for row in rows] == [_f(p["auc"]) for p in result.summary["policies"]]
    assert "http" not in text
    assert write_report(result, tmp_path / "again.html").read_bytes() == report.read_bytes()


def test_report_without_costs_says_so(tmp_path):
    result = _run(tmp_path, NO_COSTS)
    report = write_report(result, tmp_path / "report.html", png_dir=tmp_path / "png")
    text = report.read_text(encoding="utf-8")
    parsed = _parse(report)
    assert "no-costs" in parsed.ids and "Costs were not set for this scenario" in text
    assert "plot-cost" not in parsed.ids and "costs" not in parsed.tables
    assert text.count("<svg") == 2
    header = parsed.tables["comparison"]["header"]
    assert "best cost" not in header and "certified τ" in header
    assert sorted(p.name for p in (tmp_path / "png").iterdir()) == ["calibration.png", "tradeoff.png"]
