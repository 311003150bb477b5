"""Every page tells the decision as it is (issue 29, items 1-5), checked as properties of the pages themselves.

For the bundled scenarios (slow) and for generated feasible, infeasible and tight studies (quick), the report,
``rpa-sim run``'s text and the dashboard's ``d`` are rendered and read: every point offered carries its
constraints; an infeasible study says so first on every page and stars and recommends nothing; one headline cost
(the decision's, a day) and no money figure in the decision's words that the decision does not hold; no advice
that does not apply (staffing 0.00, an audit of what nothing goes through, an edge of range where widening changes
nothing; a small sample said first); the report's decision in at most 120 words, service levels in one format.
"""

from __future__ import annotations

import html as htmllib
import re
from types import SimpleNamespace

import pytest

from rpa_sim.common.formatting import money
from rpa_sim.report.decided import chosen_point
from rpa_sim.report.page import render_report
from rpa_sim.report.sections.decision import DECISION_WORDS
from rpa_sim.study.decision_text import decision_text
from rpa_sim.study.recommend import decision_of
from rpa_sim.study.run import run_scenario
from rpa_sim.study.scenario import bundled_scenarios, load_scenario
from rpa_sim.study.told import AUDIT_FLOOR, MIN_DOCUMENTS

pytest.importorskip("textual")
from rpa_sim.tui.app import decision_words
from tests.support_tui import OPERATIONS as STAFFED_OPERATIONS

STUDY = """
name: {name}
data: {{generate: receipts, n: {n}, seed: {seed}}}
policies: [confidence, document-escalation]
reviewer: {{seconds_per_item: 8, seconds_per_document: 25}}
costs: {{hourly_rate: 30, per_residual_error: 1.5, currency: EUR}}
thresholds: linspace:0:1:21
targets: [{target}]
"""
#: two shifts of two reviewers over a business day, one day replayed
OPERATIONS = "\n" + STAFFED_OPERATIONS.replace("days: 2", "days: 1")


def _text(fragment: str) -> str:
    """What a reader reads of an HTML fragment: its text, the figures left out."""
    fragment = re.sub(r"<figure\b.*?</figure>", " ", fragment, flags=re.DOTALL)
    return htmllib.unescape(re.sub(r"<[^>]+>", " ", fragment))


def _amounts(text: str) -> set[str]:
    return set(re.findall(r"(?<![\d.,])\d{1,3}(?:,\d{3})*\.\d\d(?!\d)", text))


def check_pages(result) -> None:
    """Items 1-5 of issue 29 on every page of ``result``."""
    summary = result.summary
    decision = decision_of(summary)
    page = render_report(result)
    section = page[page.index('<section class="decision'):]
    section = section[:section.index("</section>")]
    words = _text(section)
    run = decision_text(summary)
    dashboard = decision_words(SimpleNamespace(_summary_in=lambda: summary))
    pages = {"report": words, "run": run, "dashboard": dashboard}

    # 1. every point offered carries each constraint; a ★ is a feasible decision and nothing else
    names = {constraint.name for constraint in decision.constraints}
    for offered in (*(decision.offers or ()), *decision.alternatives):
        assert {constraint.name for constraint in offered.constraints} == names, offered
    if not decision.feasible:
        assert chosen_point(decision) is None
        for name, text in pages.items():
            assert "★" not in text, name
        assert "recommended" not in _text(page)

    # 2. an infeasible study reads as infeasible, first, on every page
    if decision.policy is not None and not decision.feasible:
        assert "<h2>No plan meets the constraints</h2>" in section
        for name in ("run", "dashboard"):
            first = next(line for line in pages[name].splitlines() if not line.startswith("⚠"))
            assert first.startswith("No plan meets the constraints"), (name, first)
        # the alternatives, cheapest feasible first, each with every constraint met or not
        listed = re.findall(r"<li class=\"(met|unmet)\"", section)
        assert listed == sorted(listed, key=lambda kind: kind != "met")
    elif decision.feasible:
        assert "No plan" not in words and "not met" not in words

    # 3. one headline cost, a day where the study prices one, on every page; no other sum in the words
    if decision.cost is not None:
        basis = "a day" if decision.cost.per == "day" else "for the data"
        headline = f"{money(decision.cost.total, decision.cost.currency)} {basis}"
        for name, text in pages.items():
            assert headline in text, (name, headline)
        held = {money(value) for value in (decision.cost.review, decision.cost.staffing, decision.cost.errors,
                                           decision.cost.rejected, decision.cost.total)}
        held |= {money(alternative.cost.total) for alternative in decision.alternatives if alternative.cost}
        held |= {money(value) for constraint in decision.constraints if constraint.name == "cost_per_day"
                 for value in (constraint.target, constraint.value)}
        for name, text in pages.items():
            assert _amounts(text) <= held, (name, _amounts(text) - held)

    # 4. no false alarms
    for name, text in pages.items():
        assert "staffing 0.00" not in text, name
        if decision.point is not None and decision.point.auto_rate is not None and \
                decision.point.auto_rate < AUDIT_FLOOR:
            assert "audit a sample of what goes straight through" not in text, name
        if decision.threshold is not None and decision.threshold >= 1.0:
            assert "edge of" not in text, name
    documents = getattr(summary.data, "documents", None) or getattr(summary.data, "questions", None)
    if documents is not None and documents < MIN_DOCUMENTS:
        assert words.index("too small") < words.index(decision.policy or "No")

    # 5. at most 120 words; a service level in one format everywhere
    assert len(words.split()) <= DECISION_WORDS, len(words.split())
    for text in (*pages.values(), _text(page)):
        for shown in re.findall(r"service level (?:≥ )?(\S+)", text):
            if shown[0].isdigit():
                assert re.fullmatch(r"\d{1,3}\.\d%[,;.]?", shown), shown


def _study(tmp_path, *, target: float, seed: int = 3, n: int = 60, operations: bool = True):
    path = tmp_path / f"study-{seed}-{target}.yaml"
    path.write_text(STUDY.format(name=f"pages-{seed}", n=n, seed=seed, target=target)
                    + (OPERATIONS if operations else ""), encoding="utf-8")
    return run_scenario(*load_scenario(path))


@pytest.fixture(scope="module")
def feasible(tmp_path_factory):
    return _study(tmp_path_factory.mktemp("pages"), target=0.85)


def test_a_feasible_study(feasible):
    assert feasible.summary.decision.feasible
    check_pages(feasible)


def test_an_infeasible_study(tmp_path):
    result = _study(tmp_path, target=0.9999, seed=5)
    assert result.summary.decision.feasible is False and result.summary.decision.alternatives
    check_pages(result)


def test_a_tight_study_whose_target_is_the_decided_quality(feasible, tmp_path):
    """The target set to the quality the decision reaches: met with no margin, and said so."""
    quality = next(c.value for c in feasible.summary.decision.constraints if c.name == "quality")
    result = _study(tmp_path, target=quality)
    decision = result.summary.decision
    assert decision.feasible
    check_pages(result)
    # the quality has no margin left: the tightest constraint is the main risk, though the service level binds
    assert "  main risk: quality 0.9409 against 0.9409 is 0.0000 of margin." in decision_text(result.summary)


def test_a_study_without_a_team_and_on_a_small_sample(tmp_path):
    result = _study(tmp_path, target=0.85, n=12, operations=False)
    check_pages(result)
    assert "too small" in decision_text(result.summary)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(bundled_scenarios()))
def test_every_bundled_scenario(name):
    check_pages(run_scenario(*load_scenario(name)))
