"""The HTML report: it recommends, every plot and table is there, its numbers are the summary's, costs carry
their currency, it says where it comes from, and the bytes are reproducible."""

from __future__ import annotations

import dataclasses
import hashlib
import html
import json
import re

import numpy as np
import pytest

from rpa_sim.records.readers import write_records
from rpa_sim.records.synthetic import generate_receipts
from rpa_sim.report.page import render_report, write_report
from rpa_sim.study.recommend import decision_of
from rpa_sim.study.run import comparison_table, run_scenario, write_outputs
from rpa_sim.study.scenario import load_scenario
from rpa_sim.version import __version__
from tests.support_report import formatted as _f
from tests.support_report import parse_report as _parse
from tests.support_report import run_yaml as _run

KIE = """
name: small-kie
description: A small <receipts> study & its report.
data: {generate: receipts, n: 80, seed: 5}
policies:
  - confidence
  - document-escalation
  - audited-budget
reviewer: {miss_rate: 0.02, seconds_per_item: 6, seconds_per_document: 15}
costs: {currency: EUR, hourly_rate: 30, per_residual_error: 1.5}
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


def _auc_cells(result):
    """The comparison's AUC column as the curves say it should read: the summary's AUC for a curve whose points
    run from auto-rate 0 to 1, else the range its points cover."""
    cells = []
    for curve, policy in zip(result.curves, result.summary.to_dict()["policies"]):
        rates = curve.auto_rate[~np.isnan(curve.auto_rate)]
        low, high = float(rates.min()), float(rates.max())
        cells.append(_f(policy["auc"]) if (low, high) == (0.0, 1.0) else f"partial ({_f(low)}–{_f(high)})")
    return cells


def test_kie_report_holds_every_plot_and_table(kie):
    _, report, _ = kie
    text = report.read_text(encoding="utf-8")
    assert text.count("<svg") == 4
    parsed = _parse(report)
    for name in ("decision", "tradeoff", "cost", "calibration"):
        assert f"plot-{name}" in parsed.ids and f"svg-{name}" in parsed.ids
    assert "plot-smudge-alpha" not in parsed.ids
    assert {"recommendation", "data", "reviewer", "costs", "comparison", "baselines", "certification", "calibration",
            "optimized", "provenance"} <= set(parsed.tables)
    assert "A small &lt;receipts&gt; study &amp; its report." in text  # the description, escaped
    assert "Costs were not set" not in text
    # the decision opens the report, the recommendation in detail follows, the provenance closes it
    assert text.index('id="decision"') < text.index('id="summary"') < text.index("<h2>The study</h2>")
    assert text.index("<h2>Provenance</h2>") > text.index("<h2>Optimized per-field thresholds</h2>")


def test_kie_comparison_equals_summary_json(kie):
    result, report, tmp = kie
    summary = json.loads((tmp / "out" / "summary.json").read_text())
    table = _parse(report).tables["comparison"]
    assert table["header"] == ["policy", "AUC", "auto-rate at 0.9", "τ at 0.9", "auto-rate at 0.95", "τ at 0.95",
                               "least cost (EUR)", "τ of least cost", "saves vs review-all (EUR)",
                               "saves vs review-none (EUR)", "certified τ", "dominated by"]
    expected = []
    aucs = _auc_cells(result)
    # a review budget caps the reviews: the only curve that cannot reach auto-rate 0
    assert [cell.startswith("partial (") for cell in aucs] == [False, False, True]
    for p, auc in zip(summary["policies"], aucs):
        row = [p["policy"], auc]
        for target in ("0.9", "0.95"):
            point = p["operating_points"][target]
            row += [_f(point and point["auto_rate"]), _f(point and point["threshold"])]
        best = p["cost_optimum"]
        row += [_f(best["cost"], 2), _f(best["threshold"]), _f(best["savings_vs_review_all"], 2),
                _f(best["savings_vs_review_none"], 2), _f(p["certified"]["threshold"]),
                ", ".join(p["dominated_by"]) or "-"]
        expected.append(row)
    assert table["rows"] == expected
    # the budgeted policy cannot reach auto-rate 0: its AUC is replaced by its range
    budget = next(p for p in summary["policies"] if p["policy"] == "audited-budget")
    assert budget["auto_rate_range"][0] > 0.5 and table["rows"][2][1].startswith("partial (")


def test_comparison_marks_the_best_of_each_column_and_flags_losses(kie):
    _, report, tmp = kie
    summary = json.loads((tmp / "out" / "summary.json").read_text())
    table = _parse(report).tables["comparison"]
    header, classes, policies = table["header"], table["classes"], summary["policies"]

    def marked(column, mark):
        return [p["policy"] for p, row in zip(policies, classes) if mark in row[header.index(column)]]

    costs = [p["cost_optimum"]["cost"] for p in policies]
    assert marked("least cost (EUR)", "best") == [policies[int(np.argmin(costs))]["policy"]]
    rates = [(p["operating_points"]["0.9"] or {}).get("auto_rate", -1.0) for p in policies]
    assert marked("auto-rate at 0.9", "best") == [policies[int(np.argmax(rates))]["policy"]]
    saving = [p["cost_optimum"]["savings_vs_review_all"] for p in policies]
    assert marked("saves vs review-all (EUR)", "loss") == [p["policy"] for p, v in zip(policies, saving) if v < 0]
    assert min(saving) < 0  # the scenario has a loss to flag
    # AUC: only full curves compare, and two of the three are full
    aucs = {p["policy"]: p["auc"] for p in policies if p["policy"] != "audited-budget"}
    assert marked("AUC", "best") == [max(aucs, key=aucs.get)]
    assert not marked("τ at 0.9", "best") and not marked("dominated by", "best")
    legend = report.read_text(encoding="utf-8").split('id="comparison-legend"')[1].split("</dl>")[0]
    for term in ("AUC", "auto-rate at 0.9 / 0.95", "τ at 0.9 / 0.95", "least cost",
                 "saves vs review-all / review-none", "certified τ", "dominated by", "◆"):
        assert f"<dt>{term}</dt>" in legend


def test_the_least_cost_is_worded_as_the_run_table_words_it(kie):
    # the comparison's least cost is for the whole data and under no constraint, the decision's kept to the
    # scenario's constraints: the report says so in the words of `rpa-sim run`'s table (and the dashboard's)
    result, report, _ = kie
    legend = html.unescape(report.read_text(encoding="utf-8").split('id="comparison-legend"')[1].split("</dl>")[0])
    least = "each policy's cheapest τ swept, for the whole data (80 documents), under no constraint"
    decided = "keeps to the scenario's constraints, its cost for the same data"
    assert (f'<dt>least cost</dt><dd>the total of review and error costs at {least}; "τ of least cost" is that τ. '
            f"The decision, at the top of the page, {decided}.</dd>") in legend
    run_table = comparison_table(result)
    assert f"least cost = {least}; " in run_table and f"the decision above {decided}" in run_table


def test_certification_is_a_table_with_its_assumptions_stated_once(kie):
    _, report, tmp = kie
    summary = json.loads((tmp / "out" / "summary.json").read_text())
    parsed = _parse(report)
    table = parsed.tables["certification"]
    rows = {row[0]: row for row in table["rows"]}
    assert [row[0] for row in table["rows"]] == [p["policy"] for p in summary["policies"]]
    for p in summary["policies"]:
        found, row = p["certified"], rows[p["policy"]]
        if "max_error" not in found:  # a budget: refused before testing
            assert row[-1] == "not certifiable: a review budget" and set(row[1:-1]) == {"-"}
            continue
        at = found.get("at_threshold") or {}
        assert row[1:] == [_f(found["threshold"]), f"{found['accepted_n']:,}", f"{found['accepted_errors']:,}",
                           _f(found["upper_bound"]), _f(found["holdout_auto_rate"]), _f(found["holdout_error"]),
                           _f(at.get("auto_rate")), _f(at.get("metric")), _f(at.get("cost"), 2),
                           "certified" if found["threshold"] is not None else "nothing passes the test"]
    # the settings and assumptions, once for all policies: the scenario's max_error 0.05 and delta 0.1
    assumptions = parsed.texts["certification-assumptions"]
    assert "with probability at least 90%, the error rate of the auto-accepted predictions is at most 5%" in assumptions
    calibration_n = next(p["certified"]["calibration_n"] for p in summary["policies"] if "max_error" in p["certified"])
    assert f"tested on {calibration_n:,} calibration items" in assumptions
    assert report.read_text(encoding="utf-8").count("exchangeable") == 1


def test_kie_other_tables_equal_summary_json(kie):
    _, report, tmp = kie
    summary = json.loads((tmp / "out" / "summary.json").read_text())
    tables = _parse(report).tables
    data = dict(tables["data"]["rows"])
    assert data["documents"] == f"{summary['data']['documents']:,}"
    assert data["KIEval_Aligned before review"] == _f(summary["data"]["kieval_aligned"])
    calibration = [row[1] for row in tables["calibration"]["rows"]]
    assert calibration == [_f(summary["calibration"][k]) for k in ("ece_equal_width", "ece_equal_mass", "aurc")]
    assert tables["baselines"]["header"][-1] == "cost (EUR)" and tables["costs"]["header"] == ["cost", "amount (EUR)"]
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
        assert rows["cost (EUR), per-field thresholds"][t_index] == _f(entry["cost"], 2)


def test_summary_recommends_a_policy_and_threshold(kie):
    result, report, tmp = kie
    summary = json.loads((tmp / "out" / "summary.json").read_text())
    parsed = _parse(report)
    lead = parsed.texts["recommendation-text"]
    # with costs: the study's decision, the cheapest point meeting the first target and the certified bound
    # (document-escalation costs less, but no threshold of it is certified)
    decision = summary["decision"]
    chosen = next(p for p in summary["policies"] if p["policy"] == decision["policy"])
    best = chosen["cost_optimum"]
    assert (decision["binding"], decision["threshold"]) == ("certified_error", best["threshold"])
    assert lead.startswith(f"We recommend {chosen['policy']} at threshold τ = {_f(best['threshold'])} "
                           "(on confidence)")
    assert f"{best['cost']:,.2f} EUR for the 80 documents of the data" in lead
    everything, nothing = summary["baselines"]["review_all"], summary["baselines"]["review_none"]
    rows = {row[0]: row[1:] for row in parsed.tables["recommendation"]["rows"]}
    assert parsed.tables["recommendation"]["header"] == ["", "recommended", "review everything", "review nothing"]
    assert rows["KIEval_Aligned^τ after review"] == [_f(best["metric"]), _f(everything["metric"]),
                                                     _f(nothing["metric"])]
    assert rows["auto-rate (share not reviewed)"] == [_f(best["auto_rate"]), "0.0000", "1.0000"]
    assert rows["items reviewed"] == [_f(best["reviewed"], 0), _f(everything["reviewed"], 0), "0"]
    assert rows["cost (EUR)"] == [_f(best["cost"], 2), _f(everything["cost"], 2), _f(nothing["cost"], 2)]
    assert rows["saved by the recommendation (EUR)"] == ["-", _f(best["savings_vs_review_all"], 2),
                                                         _f(best["savings_vs_review_none"], 2)]
    share_all = 100 * (everything["cost"] - best["cost"]) / everything["cost"]
    share_none = 100 * (nothing["cost"] - best["cost"]) / nothing["cost"]
    assert rows["saved by the recommendation, %"] == ["-", f"{share_all:.1f}", f"{share_none:.1f}"]
    text = report.read_text(encoding="utf-8")
    summary_html = text.split('id="summary"')[1].split("</details>")[0]
    assert f"{best['savings_vs_review_all']:,.2f} EUR ({share_all:.1f}%) saved" in summary_html
    # reviewing predictions one by one ends below reviewing everything: no missed field is added
    assert best["metric"] < everything["metric"] and "adds the fields the model missed" not in summary_html
    # the certified alternative: the recommended policy's own certified threshold
    assert f"The same policy at τ = {_f(chosen['certified']['threshold'])} (on confidence) comes with a " \
           "guarantee" in summary_html
    # the exposure: a third of the predictions go through on confidence alone, which outweighs the reviewer's misses
    assert 0.3 < best["auto_rate"] < 0.4 and parsed.texts["risk"].startswith("Calibration: ")
    assert decision_of(result.summary).policy == chosen["policy"]


def test_curve_notes_explain_partial_curves_and_review_everything(kie):
    result, report, tmp = kie
    summary = json.loads((tmp / "out" / "summary.json").read_text())
    notes = report.read_text(encoding="utf-8").split('id="curve-notes"')[1].split("</ul>")[0]
    low, high = next(p for p in summary["policies"] if p["policy"] == "audited-budget")["auto_rate_range"]
    assert f"<strong>audited-budget</strong> is a partial curve: it only operates between auto-rates {_f(low)} and " \
           f"{_f(high)}: it never reviews more than {100 * (1 - low):.1f}% of the predictions" in notes
    escalation = next(c for c in result.curves if c.policy == "document-escalation")
    top = float(np.nanmax(escalation.metric))
    assert f"<strong>document-escalation</strong> ends above reviewing everything ({_f(top)} against " \
           f"{_f(summary['baselines']['review_all']['metric'])})" in notes
    assert "<strong>confidence</strong>" not in notes  # a full curve that stays below: nothing to say


def test_plots_zoom_on_the_decisions_and_tell_policies_apart(kie):
    _, report, tmp = kie
    summary = json.loads((tmp / "out" / "summary.json").read_text())
    text = report.read_text(encoding="utf-8")
    tradeoff = text.split('id="svg-tradeoff"')[1].split("</svg>")[0]
    # the zoom spans every target's best operating point, at least 0.1 wide, within [0, 1]
    best = [max(p["operating_points"][t]["auto_rate"] for p in summary["policies"] if p["operating_points"][t])
            for t in ("0.9", "0.95") if any(p["operating_points"][t] for p in summary["policies"])]
    start, end = map(float, re.search(r"Zoom: auto-rate ([\d.]+) to ([\d.]+)", tradeoff).groups())
    assert start <= min(best) - 0.01 and end >= max(best) and end - start >= 0.1 - 0.01 and 0 <= start < end <= 1
    for point in (p["operating_points"][t] for p in summary["policies"] for t in ("0.9", "0.95")):
        if point is not None:
            assert f"τ {point['threshold']:.4f}" in tradeoff  # operating points are labelled
    # Okabe-Ito colours, and line styles beside them; the partial curve says so in the legend
    for colour in ("#0072b2", "#e69f00", "#009e73"):
        assert colour in tradeoff
    assert "stroke-dasharray" in tradeoff and "audited-budget (partial)" in tradeoff
    assert "review everything" in tradeoff and "the decision" in tradeoff
    cost = text.split('id="svg-cost"')[1].split("</svg>")[0]
    assert "total cost (EUR, 80 documents)" in cost and re.search(r"Zoom: τ [\d.]+ to [\d.]+", cost)


def test_report_is_byte_identical_and_self_contained(kie, tmp_path):
    result, report, _ = kie
    again = write_report(result, tmp_path / "again.html")
    assert again.read_bytes() == report.read_bytes()  # another name, another folder, no PNG: the same bytes
    assert render_report(result) == report.read_text(encoding="utf-8")
    text = report.read_text(encoding="utf-8")
    assert "http" not in text  # no external resource, not even a namespace URI
    assert not re.search(r"<(script|link|img)\b", text)
    assert not re.search(r"20\d\d-\d\d-\d\d", text)  # no date
    assert [p.name for p in report.parent.iterdir()] == ["report.html"]  # no temporary file left


def test_provenance_of_a_generated_scenario(kie):
    _, report, _ = kie
    rows = dict(_parse(report).tables["provenance"]["rows"])
    assert rows["rpa-sim version"] == __version__
    assert rows["data"] == "generated: receipts, n = 80, seed = 5, settings the defaults"
    # the tests' scenario file was not named to the report, and is not bundled
    assert rows["scenario"].startswith("small-kie, not recorded")
    assert rows["reproduce with"] == "rpa-sim report SCENARIO --out report.html"


def test_provenance_of_a_data_file_hashes_it(tmp_path):
    data = tmp_path / "my data.jsonl"
    write_records(generate_receipts(12, seed=3), data)
    scenario = tmp_path / "s.yaml"
    scenario.write_text("name: from-file\ndata: {file: my data.jsonl}\npolicies: [confidence]\ntargets: [0.9]\n")
    result = run_scenario(*load_scenario(scenario))
    report = write_report(result, tmp_path / "r.html", scenario_source=str(scenario))
    rows = dict(_parse(report).tables["provenance"]["rows"])
    assert rows["data"] == f"file my data.jsonl, sha256 {hashlib.sha256(data.read_bytes()).hexdigest()}"
    assert rows["scenario"] == f"from-file, file {scenario}"
    assert rows["reproduce with"] == f"rpa-sim report {scenario} --out report.html"
    # the same table given without the file cannot be hashed, and says so
    bare = render_report(dataclasses.replace(result, base=None))
    assert "file my data.jsonl (not hashed: the report was given the evaluated table)" in bare


def test_provenance_recognises_a_bundled_scenario(tmp_path):
    scenario, base = load_scenario("receipts-demo")
    small = scenario.model_copy(update={"data": scenario.data.model_copy(update={"n": 20})})
    report = write_report(run_scenario(small, base), tmp_path / "r.html")
    rows = dict(_parse(report).tables["provenance"]["rows"])
    assert rows["scenario"] == "receipts-demo, bundled with rpa-sim (receipts-demo.yaml)"
    assert rows["reproduce with"] == "rpa-sim report receipts-demo --out report.html"
    assert rows["data"].startswith("generated: receipts, n = 20, seed = 7, settings {")


def test_png_dir_writes_every_plot(kie, vqa):
    for _, _, tmp in (kie, vqa):
        for png in (tmp / "png").iterdir():
            assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in (kie[2] / "png").iterdir()) == ["calibration.png", "cost.png", "decision.png",
                                                                  "tradeoff.png"]
    assert sorted(p.name for p in (vqa[2] / "png").iterdir()) == ["calibration.png", "cost.png", "decision.png",
                                                                  "smudge-alpha.png", "tradeoff.png"]


def test_vqa_report_has_the_alpha_plot(vqa, tmp_path):
    result, report, _ = vqa
    text = report.read_text(encoding="utf-8")
    assert text.count("<svg") == 5
    parsed = _parse(report)
    expected = {"plot-decision", "plot-tradeoff", "plot-cost", "plot-calibration", "plot-smudge-alpha",
                "svg-smudge-alpha"}
    assert expected <= set(parsed.ids)
    assert "scenario alpha 0.3" in text  # the marker's legend (SVG text is kept as text)
    assert "SMuDGE against alpha" in text
    data = dict(parsed.tables["data"]["rows"])
    assert data["ANLS before review"] == _f(result.summary.to_dict()["data"]["anls"])
    rows = parsed.tables["comparison"]["rows"]
    assert [row[0] for row in rows] == ["confidence", "grounding-gate"]
    # grounding-gate reviews whatever is not found on the page, at every τ: 2 of the 60 answers here
    assert [row[1] for row in rows] == _auc_cells(result) == [
        _f(result.summary.to_dict()["policies"][0]["auc"]), f"partial (0.0000–{_f(58 / 60)})"]
    assert "http" not in text
    assert write_report(result, tmp_path / "again.html").read_bytes() == report.read_bytes()


def test_report_without_costs_says_so(tmp_path):
    result = _run(tmp_path, NO_COSTS)
    report = write_report(result, tmp_path / "report.html", png_dir=tmp_path / "png")
    text = report.read_text(encoding="utf-8")
    parsed = _parse(report)
    assert "no-costs" in parsed.ids and "Costs were not set for this scenario" in text
    assert "plot-cost" not in parsed.ids and "costs" not in parsed.tables
    assert text.count("<svg") == 3
    header = parsed.tables["comparison"]["header"]
    assert "least cost" not in header and "certified τ" in header
    assert sorted(p.name for p in (tmp_path / "png").iterdir()) == ["calibration.png", "decision.png", "tradeoff.png"]


def test_costs_without_a_currency_are_plain_numbers(vqa):
    result, report, _ = vqa
    text = report.read_text(encoding="utf-8")
    parsed = _parse(report)
    assert "least cost" in parsed.tables["comparison"]["header"] and "(EUR)" not in text and "None" not in text
    cost = result.summary.decision.point.cost  # the decision's point, which the recommendation follows
    assert f"{cost:,.2f} for the 60 questions of the data." in parsed.texts["recommendation-text"]
    assert "one currency (not named in the scenario)" in parsed.texts["cost-basis"]
    assert "total cost (60 questions)" in text.split('id="svg-cost"')[1]


def test_costs_per_day_when_the_volume_is_known(tmp_path):
    result = _run(tmp_path, KIE.replace("costs: {currency: EUR,", "costs: {currency: EUR, volume_per_day: 1000,"))
    parsed = _parse(write_report(result, tmp_path / "r.html"))
    rows = {row[0]: row[1:] for row in parsed.tables["recommendation"]["rows"]}
    summary = result.summary.to_dict()
    costs = (summary["decision"]["point"]["cost"], summary["baselines"]["review_all"]["cost"],
             summary["baselines"]["review_none"]["cost"])
    assert rows["cost per day (EUR), 1,000 documents a day"] == [_f(c * 1000 / 80, 2) for c in costs]
    # the opening's cost per day is the same figure
    assert summary["decision"]["cost"]["per"] == "day"
    assert rows["cost per day (EUR), 1,000 documents a day"][0] == _f(summary["decision"]["cost"]["total"], 2)
    assert "for the 80 documents of the data and, where said, per day at 1,000 documents a day" in \
        parsed.texts["cost-basis"]


def test_without_costs_the_recommendation_meets_the_first_target(tmp_path):
    result = _run(tmp_path, NO_COSTS.replace("policies: [confidence]", "policies: [confidence, document-escalation]"))
    parsed = _parse(write_report(result, tmp_path / "r.html"))
    # per policy, the curve's point with the most automation whose quality reaches 0.9, and its threshold
    reaching = []
    for curve in result.curves:
        rates = np.where(curve.metric >= 0.9, curve.auto_rate, -1.0)
        reaching.append((float(rates.max()), float(curve.threshold[int(np.argmax(rates))]), curve.policy))
    assert [policy for _, _, policy in sorted(reaching)] == ["document-escalation", "confidence"]
    _, threshold, policy = max(reaching)
    assert parsed.texts["recommendation-text"] == (
        f"We recommend {policy} at threshold τ = {_f(threshold)} (on confidence), the policy that leaves the most "
        "predictions unreviewed while the KIEval_Aligned^τ after review reaches the first target, 0.9.")
    assert [row[0] for row in parsed.tables["recommendation"]["rows"]] == [
        "KIEval_Aligned^τ after review", "auto-rate (share not reviewed)", "items reviewed"]


def test_without_costs_or_targets_there_is_no_recommendation(tmp_path):
    result = _run(tmp_path, NO_COSTS.replace("targets: [0.9]\n", ""))
    parsed = _parse(write_report(result, tmp_path / "r.html"))
    assert parsed.texts["recommendation-text"] == ("No recommendation: the scenario sets neither costs nor a target: "
                                                    "add costs or targets to get a recommendation.")
    assert "recommendation" not in parsed.tables and "plot-tradeoff" in parsed.ids


def test_predictions_without_a_confidence_have_no_calibration_and_no_risk_to_weigh(tmp_path):
    lines = []
    for record in generate_receipts(20, seed=4):
        data = record.model_dump(mode="json", exclude_none=True)
        prediction = data["prediction"]
        for entity in [*prediction["entities"], *(e for g in prediction.get("groups", []) for e in g["entities"])]:
            entity["confidence"] = None
        lines.append(json.dumps(data) + "\n")
    (tmp_path / "records.jsonl").write_text("".join(lines), encoding="utf-8")
    (tmp_path / "s.yaml").write_text("name: unsure\ndata: {file: records.jsonl}\n"
                                     "policies: [missing-confidence-review]\nreviewer: {seconds_per_item: 6}\n"
                                     "costs: {hourly_rate: 30, per_residual_error: 1.5}\ntargets: [0.8]\n")
    result = run_scenario(*load_scenario(tmp_path / "s.yaml"))
    summary = result.summary
    assert summary.calibration is None and summary.data.predictions > 0
    found = decision_of(summary)
    assert (found.basis, found.policy) == ("cost", "missing-confidence-review")
    report = write_report(result, tmp_path / "r.html")
    parsed, text = _parse(report), report.read_text(encoding="utf-8")
    assert parsed.texts["recommendation-text"].startswith("We recommend missing-confidence-review")
    assert "risk" not in parsed.texts and "plot-calibration" not in parsed.ids
    assert "No prediction has a confidence, so no calibration." in text
