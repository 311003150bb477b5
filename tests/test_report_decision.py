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
from rpa_sim.report.html import STYLE
from rpa_sim.report.page import render_report
from rpa_sim.report.sections.decision import DECISION_WORDS, decision_section
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
    """The words a reader reads: the text between tags, the figure (its drawing and caption) left out."""
    text = re.sub(r"<figure\b.*?</figure>", " ", fragment, flags=re.DOTALL)
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
                                          "cost": float(columns["cost"][index]),
                                          "documents_straight_through":
                                              float(columns["documents_straight_through"][index])}}
    return dataclasses.replace(result, summary=dataclasses.replace(result.summary,
                                                                   decision=decoded(Decision, decision, "decision")))


def _without_decision(result):
    """``result`` as a study summarised before decisions were made: no ``decision`` key."""
    return dataclasses.replace(result, summary=dataclasses.replace(result.summary, decision=None))


def test_a_feasible_decision_with_its_team_costs_and_targets(result, tau):
    decided = _with(result, _decision(tau))
    text = _section(decided)
    parsed = _parsed(text)
    straight = round(decided.summary.decision.point.documents_straight_through)
    assert parsed.texts["decision-text"] == (
        f"Run confidence at τ = {tau:.4f}. Review a prediction iff its confidence is below τ. {straight} of 60 "
        "documents go straight through.")
    assert parsed.texts["decision-team"] == "Team: 6 people a shift, 2 shifts (07–13 h, 13–19 h)."
    # one headline cost, a day, split by kind (a rejected cost of 0 is left out: only a reject band has one)
    assert parsed.texts["decision-cost"] == (
        "Cost: 1,703.40 EUR a day (review 123.40; staffing 1,500.00; errors left 80.00).")
    targets = parsed.tables["decision-targets"]
    assert targets["header"] == ["constraint", "needed", "reached", ""]
    assert targets["rows"] == [["quality (KIEval_Aligned^τ)", "≥ 0.9500", "0.9612", "✓ met"],
                               ["service level", "≥ 90.0%", "93.4%", "✓ met"],
                               ["reviewers", "≤ 12", "12", "✓ met"],
                               ["cost a day", "≤ 2,000.00 EUR", "1,820.50 EUR", "✓ met"],
                               ["certified error", "≤ 2.0%", "1.3% measured, certified", "✓ met"]]
    assert all("met" in row[3] for row in targets["classes"])
    # the tightest margin, relative to its target, is the main risk: the quality's 0.0112 of 0.95 (1.2%) before
    # the service level's 3.4 points of 90% (3.8%); the team's size is chosen, not at risk
    assert parsed.texts["decision-risk"] == "Main risk: quality 0.9612 against 0.9500 is 0.0112 of margin."
    assert parsed.texts["decision-next"].startswith("Next step: pilot it with this team for two weeks; ")
    assert parsed.texts["decision-next"].endswith("; track the service level.")
    assert "plot-decision" not in text and _words(text) <= DECISION_WORDS  # no figure was given


def test_an_infeasible_decision_names_the_binding_target_and_the_alternatives(result, tau):
    met = [QUALITY, SERVICE]
    alternatives = [
        {"kind": "threshold_for_team", "policy": "confidence", "threshold": 0.5, "reviewers": None,
         "constraints": [{**QUALITY, "value": 0.9, "met": False}, SERVICE], "cost": {**COST, "total": 900.0},
         "note": "raise τ"},
        {"kind": "team_for_threshold", "policy": "confidence", "threshold": tau, "reviewers": TEAM, "constraints": met,
         "cost": {**COST, "total": 2100.0}, "note": "add 3 reviewers a shift"},
    ]
    service = {**SERVICE, "value": 0.115, "met": False}
    decided = _with(result, _decision(tau, feasible=False, constraints=[QUALITY, service], binding="service_level",
                                      alternatives=alternatives,
                                      reason="no point meets the service level on its own"))
    text = _section(decided)
    parsed = _parsed(text)
    assert "<h2>No plan meets the constraints</h2>" in text
    # the heading says no plan meets them; the lead names the binding constraint
    assert parsed.texts["decision-text"] == "The service level target (≥ 90.0%) binds: no point meets it even alone."
    # the alternatives, the feasible one first although it costs more, each constraint met or not
    items = re.findall(r"<li[^>]*>(.*?)</li>", text.split('id="decision-alternatives">')[1].split("</ol>")[0])
    assert [html.unescape(item) for item in items] == [
        f"confidence at τ = {tau:.4f}, 2,100.00 EUR a day: quality 0.9612 ✓, service level 93.4% ✓; needs 6 "
        "people a shift.",
        "confidence at τ = 0.5000, 900.00 EUR a day: quality 0.9000 ✗, service level 93.4% ✓; relax quality."]
    assert text.index('id="decision-alternatives"') < text.index('id="decision-nearest"') < \
        text.index('id="decision-targets"')
    assert parsed.tables["decision-targets"]["rows"][1] == ["service level", "≥ 90.0%", "11.5%", "✗ not met"]
    assert "unmet" in parsed.tables["decision-targets"]["classes"][1][3]
    assert "decision-risk" not in parsed.texts  # no plan, so no risk to it: the table says what misses
    assert parsed.texts["decision-next"] == ("Next step: take the first alternative, or relax the service level "
                                             "target.")
    assert "pilot" not in text and "★" not in text and _words(text) <= DECISION_WORDS


def test_a_decision_without_operations_or_without_costs(result, tau):
    # without operations nothing is rostered: no staffing part (never "staffing 0.00" without a staffing model)
    cost = {"review": 40.0, "staffing": 0.0, "errors": 12.5, "rejected": 0.0, "total": 52.5, "currency": None,
            "per": "data"}
    text = _section(_with(result, _decision(tau, reviewers=None, constraints=[QUALITY], binding=None, cost=cost)))
    parsed = _parsed(text)
    assert parsed.texts["decision-text"].startswith(f"Run confidence at τ = {tau:.4f}.")
    assert parsed.texts["decision-cost"] == "Cost: 52.50 for the data (review 40.00; errors left 12.50)."
    assert "staffing" not in text and "decision-team" not in parsed.texts
    assert parsed.texts["decision-next"].startswith("Next step: pilot it for two weeks; ")
    without_costs = _parsed(_section(_with(result, _decision(tau, reviewers=None, constraints=[QUALITY], binding=None,
                                                             cost=None, basis="target"))))
    assert "decision-cost" not in without_costs.texts


def test_the_main_risk_is_the_edge_of_the_range_then_the_tightest_margin_then_the_larger_exposure(result, tau):
    edge = _parsed(_section(_with(result, _decision(tau, edge_of_range=True))))
    assert edge.texts["decision-risk"].startswith("Main risk: τ is at an edge of the thresholds swept")
    # no binding constraint: the smallest margin relative to its target (the quality's 0.0112 of 0.95)
    tightest = _parsed(_section(_with(result, _decision(tau, binding=None, constraints=[QUALITY, SERVICE]))))
    assert tightest.texts["decision-risk"] == "Main risk: quality 0.9612 against 0.9500 is 0.0112 of margin."
    # no constraint at all: the recommendation's rule at the decided point
    typed = result.summary
    risk = main_risk(typed.calibration, typed.reviewer, typed.policies[0].cost_optimum.auto_rate)
    assert risk.kind == "calibration"
    exposure = _parsed(_section(_with(result, _decision(tau, constraints=[], binding=None))))
    assert exposure.texts["decision-risk"] == (
        f"Main risk: calibration: {100 * risk.auto_rate:.1f}% of predictions pass on confidence alone, off by "
        f"{risk.ece:.4f} on average (ECE).")


def test_nothing_to_decide(result):
    text = _section(_with(result, _decision(None, policy=None, reviewers=None, constraints=[], cost=None,
                                            feasible=False, reason="the data holds no predictions")))
    parsed = _parsed(text)
    assert "<h2>No decision</h2>" in text and parsed.texts["decision-text"] == "The data holds no predictions."
    assert "decision-cost" not in parsed.texts


def test_without_a_decision_the_recommendation_opens_in_the_same_form(result):
    result = _without_decision(result)
    found = decision_of(result.summary)
    text = _section(result)
    parsed = _parsed(text)
    assert parsed.texts["decision-text"].startswith(f"Run {found.policy} at τ = {found.threshold:.4f}.")
    assert parsed.texts["decision-cost"] == f"Cost: {found.cost.total:,.2f} EUR for the data."
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
def test_every_bundled_scenario_decides_in_at_most_120_words(name):
    scenario, base = load_scenario(name)
    small = scenario.model_copy(update={"data": scenario.data.model_copy(update={"n": 120})})
    result = run_scenario(small, base)
    text = _section(result)
    assert 'id="decision-text"' in text and _words(text) <= DECISION_WORDS, _words(text)


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


def test_on_a_phone_the_constraints_stack_so_that_not_met_is_never_clipped():
    # at 390 px the four columns (a long constraint, "≤ 5,000.00 EUR", "4,230.88 EUR", "✗ not met") are wider
    # than the decision's box (about 348 px): under the phone's media query each constraint is a block, its name
    # on a line, then what it needs, what it reaches and the mark, each cell kept whole and the cells wrapping
    phone = STYLE.split("@media (max-width:32rem){", 1)[1]
    rules = dict(re.findall(r"(#decision-targets[^{,]*)\{([^}]*)\}", phone))
    assert "display:none" in rules["#decision-targets thead"]
    assert "display:block" in rules["#decision-targets tr"]
    assert "display:inline-block" in rules["#decision-targets td"]
    assert "display:block" in rules["#decision-targets td:first-child"]
    assert rules["#decision-targets td:nth-child(2)::before"] == 'content:"needed "'
    assert rules["#decision-targets td:nth-child(3)::before"] == 'content:"reached "'
    # the marks keep their own whole cell: "✗ not met" never breaks, and nothing scrolls it out of the box
    assert "white-space:nowrap" in STYLE.split("td.unmet{", 1)[1].split("}", 1)[0]
