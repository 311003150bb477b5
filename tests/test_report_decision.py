"""The report's opening decision: the summary's decision formatted in at most 250 words and one figure, the
recommendation in the same form before decisions existed, and everything else below it as closed details."""

from __future__ import annotations

import dataclasses
import html
import re

import numpy as np
import pytest

from rpa_sim.common.typedjson import decoded
from rpa_sim.report.displays.cost import CostDisplay
from rpa_sim.report.displays.tradeoff import TradeoffDisplay
from rpa_sim.report.page import render_report
from rpa_sim.report.sections.decision import DAYS_PER_MONTH, decision_section
from rpa_sim.study.decision import Decision
from rpa_sim.study.recommend import decision_of, main_risk
from rpa_sim.study.run import run_scenario
from rpa_sim.study.scenario import bundled_scenarios, load_scenario
from tests.support_report import parse_html as _parsed

SCENARIO = """
name: decision-check
data: {generate: receipts, n: 60, seed: 3}
policies: [confidence, document-escalation]
reviewer: {miss_rate: 0.02, seconds_per_item: 6, seconds_per_document: 15}
costs: {currency: EUR, hourly_rate: 30, per_residual_error: 1.5}
targets: [0.95]
"""
QUALITY = {"name": "quality", "target": 0.95, "value": 0.9612, "met": True}
SERVICE = {"name": "service_level", "target": 0.9, "value": 0.934, "met": True}
COST = {"review": 123.4, "staffing": 1500.0, "errors": 80.0, "rejected": 0.0, "total": 1703.4, "currency": "EUR",
        "per": "day"}
TEAM = {"extra_per_shift": 2, "shifts": [[7, 13, 6], [13, 19, 6]], "count": None}


def _decision(threshold: float, **changes) -> dict:
    """A feasible decision of the shared contract, at the confidence policy's ``threshold``."""
    decision = {"policy": "confidence", "threshold": threshold, "reviewers": TEAM, "feasible": True,
                "constraints": [QUALITY, SERVICE,
                                {"name": "reviewers", "target": 12, "value": 12, "met": True},
                                {"name": "cost_per_day", "target": 2000.0, "value": 1820.5, "met": True},
                                {"name": "certified_error", "target": 0.02, "value": 0.013, "met": True}],
                "binding": "service_level", "cost": COST, "alternatives": [], "basis": "cost",
                "edge_of_range": False, "reason": ""}
    return {**decision, **changes}


def _words(fragment: str) -> int:
    """The words a reader reads: the text between tags, the figure's drawing left out (its caption counted)."""
    text = re.sub(r"<svg\b.*?</svg>", " ", fragment, flags=re.DOTALL)
    return len(html.unescape(re.sub(r"<[^>]+>", " ", text)).split())


def _section(result) -> str:
    return "\n".join(decision_section(result, {}))


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    folder = tmp_path_factory.mktemp("decision")
    (folder / "scenario.yaml").write_text(SCENARIO)
    return run_scenario(*load_scenario(folder / "scenario.yaml"))


@pytest.fixture(scope="module")
def tau(result) -> float:
    """A threshold on the confidence curve: its cost optimum."""
    return result.summary.to_dict()["policies"][0]["cost_optimum"]["threshold"]


def _with(result, decision):
    """``result`` with ``decision``; its ``point`` is the decided threshold's point on the decided policy's curve
    (none without a policy)."""
    if "point" not in decision and decision["policy"] is None:
        decision = {**decision, "point": None}
    elif "point" not in decision:
        curve = next(c for c in result.curves if c.policy == decision["policy"])
        index = int(np.flatnonzero(curve.threshold == decision["threshold"])[0])
        columns = curve.columns
        decision = {**decision, "point": {"auto_rate": float(columns["auto_rate"][index]),
                                          "metric": float(columns[result.summary.to_dict()["metric"]][index]),
                                          "reviewed": float(columns["reviewed"][index]),
                                          "cost": float(columns["cost"][index])}}
    return dataclasses.replace(result, summary=dataclasses.replace(result.summary,
                                                                   decision=decoded(Decision, decision, "decision")))


def _without_decision(result):
    """``result`` as a study summarised before decisions were made: no ``decision`` key."""
    return dataclasses.replace(result, summary=dataclasses.replace(result.summary, decision=None))


def test_a_feasible_decision_with_its_team_costs_and_targets(result, tau):
    decided = _with(result, _decision(tau))
    text = _section(decided)
    parsed = _parsed(text)
    assert parsed.texts["decision-text"] == (
        f"Run confidence at τ = {tau:.4f} (on confidence) with 6 reviewers 07–13 h and 6 reviewers 13–19 h (2 more "
        "a shift than planned): the cheapest point that meets every target; service level binds.")
    cost = parsed.tables["decision-cost"]
    assert cost["header"] == ["cost (EUR)", "per day", "per month"]
    # a rejected cost of 0 is left out (only a reject band has one)
    assert cost["rows"] == [[label, f"{value:,.2f}", f"{value * 30.4:,.2f}"] for label, value in (
        ("review", 123.4), ("staffing", 1500.0), ("errors left", 80.0), ("total", 1703.4))]
    assert DAYS_PER_MONTH == 30.4 and "A month is 30.4 days: per month = per day × 30.4." in text
    targets = parsed.tables["decision-targets"]
    assert targets["header"] == ["target", "needed", "reached", ""]
    assert targets["rows"] == [["quality (KIEval_Aligned^τ)", "≥ 0.9500", "0.9612", "✓ met"],
                               ["service level", "≥ 90.0%", "93.4%", "✓ met"],
                               ["reviewers", "≤ 12", "12", "✓ met"],
                               ["cost per day", "≤ 2,000.00 EUR", "1,820.50 EUR", "✓ met"],
                               ["certified error", "≤ 2.0%", "1.3%", "✓ met"]]
    assert all("met" in row[3] for row in targets["classes"])
    assert parsed.texts["decision-risk"].startswith("Main risk: ")
    assert parsed.texts["decision-next"] == (
        f"Next step: pilot confidence at τ = {tau:.4f} with this team for two weeks, and audit a random sample of "
        "the auto-accepted items to confirm the quality and track the service level.")
    assert "plot-decision" not in text and _words(text) <= 250  # no figure was given


def test_an_infeasible_decision_names_the_binding_target_and_the_alternatives(result, tau):
    alternatives = [
        {"kind": "team_for_threshold", "policy": "confidence", "threshold": tau, "reviewers": TEAM, "constraints": [],
         "cost": {**COST, "total": 2100.0}, "note": "add 3 reviewers a shift to meet the service level at this τ"},
        {"kind": "threshold_for_team", "policy": "confidence", "threshold": 0.5, "reviewers": None,
         "constraints": [], "cost": None, "note": "raise τ to 0.5000 with the team as planned"},
    ]
    service = {**SERVICE, "value": 0.115, "met": False}
    decided = _with(result, _decision(tau, feasible=False, constraints=[QUALITY, service], binding="service_level",
                                      alternatives=alternatives,
                                      reason="no point meets the service level with the team as planned"))
    text = _section(decided)
    parsed = _parsed(text)
    assert parsed.texts["decision-text"] == (
        "No point meets every target: no point meets the service level with the team as planned. The nearest is "
        f"confidence at τ = {tau:.4f} (on confidence) with 6 reviewers 07–13 h and 6 reviewers 13–19 h (2 more a "
        "shift than planned).")
    assert parsed.tables["decision-targets"]["rows"][1] == ["service level", "≥ 90.0%", "11.5%", "✗ not met"]
    assert "unmet" in parsed.tables["decision-targets"]["classes"][1][3]
    assert parsed.texts["decision-risk"] == ("Main risk: service level reaches 11.5% against 90.0%: the target is not "
                                             "met.")
    assert parsed.texts["decision-next"] == "Next step: choose one of these or relax the service level target:"
    items = text.split('id="decision-alternatives">')[1].split("</ul>")[0]
    assert items == ("<li>add 3 reviewers a shift to meet the service level at this τ (2,100.00 EUR a day)</li>"
                     "<li>raise τ to 0.5000 with the team as planned</li>")
    assert "pilot" not in text and _words(text) <= 250


def test_a_decision_without_operations_or_without_costs(result, tau):
    # without operations nothing is rostered (staffing 0, shown); without a reject band nothing rejected (0, left out)
    cost = {"review": 40.0, "staffing": 0.0, "errors": 12.5, "rejected": 0.0, "total": 52.5, "currency": None,
            "per": "data"}
    parsed = _parsed(_section(_with(result, _decision(tau, reviewers=None, constraints=[QUALITY], binding=None,
                                                      cost=cost))))
    assert parsed.texts["decision-text"] == (f"Run confidence at τ = {tau:.4f} (on confidence): the cheapest point "
                                             "that meets every target.")
    assert parsed.tables["decision-cost"]["header"] == ["cost", "for the data"]
    assert parsed.tables["decision-cost"]["rows"] == [["review", "40.00"], ["staffing", "0.00"],
                                                      ["errors left", "12.50"], ["total", "52.50"]]
    assert parsed.texts["decision-next"].endswith("to confirm the quality.")
    without_costs = _section(_with(result, _decision(tau, reviewers=None, constraints=[QUALITY], binding=None,
                                                     cost=None, basis="target")))
    parsed = _parsed(without_costs)
    assert "decision-cost" not in parsed.tables
    assert parsed.texts["decision-text"].endswith(": the most automation that meets every target.")
    assert "No costs are set, so the decision is the most automation that meets the targets." in without_costs


def test_the_main_risk_is_the_edge_of_the_range_then_the_larger_exposure(result, tau):
    edge = _parsed(_section(_with(result, _decision(tau, edge_of_range=True))))
    assert edge.texts["decision-risk"].startswith("Main risk: τ is at the edge of the thresholds swept")
    # the recommendation's rule at the decided point: τ is the confidence policy's cost optimum
    typed = result.summary
    risk = main_risk(typed.calibration, typed.reviewer, typed.policies[0].cost_optimum.auto_rate)
    assert risk.kind == "calibration"
    exposure = _parsed(_section(_with(result, _decision(tau))))
    assert exposure.texts["decision-risk"] == (
        f"Main risk: calibration. {100 * risk.auto_rate:.1f}% of predictions pass on confidence alone, which is off "
        f"by {risk.ece:.4f} on average (ECE): if it drifts, more errors pass unseen. Re-check it on fresh labelled "
        "data.")


def test_nothing_to_decide(result):
    parsed = _parsed(_section(_with(result, _decision(None, policy=None, reviewers=None,
                                                      constraints=[], cost=None, feasible=False,
                                                      reason="the data holds no predictions"))))
    assert parsed.texts["decision-text"] == "No decision: the data holds no predictions."
    assert "decision-cost" not in parsed.tables and "decision-risk" not in parsed.texts


def test_without_a_decision_the_recommendation_opens_in_the_same_form(result):
    result = _without_decision(result)
    found = decision_of(result.summary)
    knob = next(p.knob for p in result.summary.policies if p.policy == found.policy)
    text = _section(result)
    parsed = _parsed(text)
    assert parsed.texts["decision-text"] == (f"Run {found.policy} at τ = {found.threshold:.4f} (on {knob}): "
                                             "the cheapest point that meets every target.")
    assert parsed.tables["decision-cost"]["rows"] == [["total", f"{found.cost.total:,.2f}"]]
    assert "for the 60 documents of the data" in text
    assert parsed.tables["decision-targets"]["rows"] == [["quality (KIEval_Aligned^τ)", "≥ 0.9500",
                                                          f"{found.point.metric:.4f}", "✓ met"]]


def test_the_page_opens_with_the_decision_then_closed_details(result, tau):
    text = render_report(result)
    body = text.split("<body>")[1]
    assert body.index('<section class="decision" id="decision">') < body.index("<details>")
    assert "plot-decision" in text.split("</section>")[0]  # the one figure is inside the section
    headings = re.findall(r"<details>\n<summary>(<h2[^>]*>[^<]*</h2>)</summary>", text)
    assert [re.sub(r"<[^>]+>", "", h) for h in headings] == [
        "Against reviewing everything or nothing", "The study", "Trade-off curves", "Comparison of the policies",
        "Cost", "Calibration", "Optimized per-field thresholds", "Provenance"]
    assert text.count("<details>") == text.count("</details>") == len(headings) and "<details open" not in text
    # a decision at another point than the study's own: the recommendation's detail follows the decision, and
    # the detail plots star it
    found = decision_of(result.summary)
    policy = next(p for p in result.summary.to_dict()["policies"] if p["policy"] != found.policy)
    other = policy["cost_optimum"]
    decided = _with(result, _decision(other["threshold"], policy=policy["policy"]))
    follows = decision_of(decided.summary)
    assert (follows.policy, follows.threshold) == (policy["policy"], other["threshold"])
    assert f"We recommend <strong>{policy['policy']}</strong>" in render_report(decided)
    assert TradeoffDisplay.from_result(decided).star == (other["auto_rate"], other["metric"])
    assert CostDisplay.from_result(decided).star == (other["threshold"], other["cost"])
    agreeing = _with(result, _decision(found.threshold, policy=found.policy))
    assert 'id="summary"' in render_report(agreeing)
    # an infeasible decision is not followed by the detail, which would name the point as recommended
    infeasible = _with(result, _decision(found.threshold, policy=found.policy, feasible=False, reason="none meets"))
    assert 'id="summary"' not in render_report(infeasible)


@pytest.mark.parametrize("name", sorted(bundled_scenarios()))
def test_every_bundled_scenario_decides_in_at_most_250_words(name):
    scenario, base = load_scenario(name)
    small = scenario.model_copy(update={"data": scenario.data.model_copy(update={"n": 120})})
    result = run_scenario(small, base)
    text = _section(result)
    assert 'id="decision-text"' in text and _words(text) <= 250, _words(text)


MONITORED = SCENARIO.replace("targets: [0.95]", "targets: [0.95]\nmonitoring: {threshold: 0.9, days: 12, "
                                                 "days_shown: 10, "
                                                 "width_days: 4, audit_rates: [0.05, 0.2]}")


def test_every_figure_is_sized_for_a_phone_and_no_text_is_cut(tmp_path):
    """5 in wide, no text below 10 pt, and every title, label, legend entry and annotation inside the figure."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from rpa_sim.report.figures import report_figures
    from rpa_sim.report.style import FIGURE_WIDTH_INCHES, SMALLEST_FONT_POINTS

    (tmp_path / "monitored.yaml").write_text(MONITORED)
    operations, base = load_scenario("operations-day")
    operations = operations.model_copy(update={"data": operations.data.model_copy(update={"n": 120})})
    figures = {**report_figures(run_scenario(*load_scenario(tmp_path / "monitored.yaml"))),
               **report_figures(run_scenario(operations, base))}
    assert {"decision", "monitoring-intervals", "monitoring-widths", "operations-reviewers"} <= set(figures)
    for name, figure in figures.items():
        assert figure.get_size_inches()[0] <= FIGURE_WIDTH_INCHES, name
        renderer = FigureCanvasAgg(figure).get_renderer()
        figure.draw(renderer)
        texts = [*figure.texts, *(t for legend in figure.legends for t in legend.get_texts())]
        for axes in figure.axes:
            texts += [axes.title, axes.xaxis.label, axes.yaxis.label, *axes.texts,
                      *(axes.get_legend().get_texts() if axes.get_legend() else ())]
        for text in texts:
            if not text.get_text():
                continue
            assert text.get_fontsize() >= SMALLEST_FONT_POINTS, (name, text.get_text())
            box = text.get_window_extent(renderer)
            assert box.x0 >= -1 and box.x1 <= figure.bbox.x1 + 1, (name, text.get_text())
            assert box.y0 >= -1 and box.y1 <= figure.bbox.y1 + 1, (name, text.get_text())
