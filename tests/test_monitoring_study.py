"""The ``monitoring:`` section of a scenario (issue 14): coverage, widths and the first days in the summary."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from rpa_sim.common.errors import InputError
from rpa_sim.evaluate.outcomes import evaluate_kie
from rpa_sim.operate.monitoring.coverage import measure_coverage
from rpa_sim.operate.monitoring.replay import Replayer
from rpa_sim.operate.monitoring.summary import ASSUMPTIONS, DEFAULT_AUDIT_RATE, MonitoringSpec, spec_of_summary
from rpa_sim.records.synthetic import generate_receipts
from rpa_sim.route.policies import load_policy
from rpa_sim.route.reviewer import Reviewer
from rpa_sim.study.result import StudySummary
from rpa_sim.study.run import run_study, write_outputs
from rpa_sim.study.scenario import Scenario, load_scenario

POLICIES = [load_policy(name) for name in ("confidence", "document-escalation", "audited-budget")]
REVIEWER = Reviewer(miss_rate=0.1, false_correction_rate=0.02)


@pytest.fixture(scope="module")
def receipts():
    return evaluate_kie(generate_receipts(300, seed=4))


def scenario(monitoring: dict | None, **extra) -> Scenario:
    return Scenario.model_validate({"name": "monitored", "data": {"generate": "receipts", "n": 300, "seed": 4},
                                    "policies": [p.name for p in POLICIES], "reviewer": REVIEWER.model_dump(),
                                    "monitoring": monitoring, **extra})


@pytest.fixture(scope="module")
def monitored(receipts):
    spec = {"threshold": 0.9, "audit_rate": 0.1, "days": 300, "seed": 5, "width_days": 40}
    return run_study(scenario(spec), receipts, POLICIES).summary.to_dict()


def test_the_section_adds_one_key_and_changes_nothing_else(receipts, monitored):
    plain = run_study(scenario(None), receipts, POLICIES).summary.to_dict()
    assert "monitoring" not in plain
    assert {key: value for key, value in monitored.items() if key != "monitoring"} == plain


def test_the_summary_keys(monitored):
    monitoring = monitored["monitoring"]
    assert set(monitoring) == {"days", "seed", "confidence_level", "methods", "audit_rate", "audit_plan",
                               "days_shown", "audit_rates", "width_days", "reviewer", "assumptions", "policies"}
    assert spec_of_summary(StudySummary.from_json(monitored).monitoring) == MonitoringSpec(
        days=300, seed=5, audit_rate=0.1, width_days=40)
    assert (monitoring["days"], monitoring["seed"], monitoring["days_shown"], monitoring["width_days"]) == (300, 5, 30,
                                                                                                             40)
    assert monitoring["assumptions"] == ASSUMPTIONS and monitoring["reviewer"] == REVIEWER.model_dump()
    assert [entry["policy"] for entry in monitoring["policies"]] == [p.name for p in POLICIES]
    entry = monitoring["policies"][0]
    assert set(entry) == {"policy", "threshold", "threshold_from", "rows", "reviewed", "auto_accepted", "audit_rate",
                          "expected_audits", "true_auto_error", "naive_mean", "naive_bias", "methods", "first_days",
                          "widths", "note"}
    assert list(entry["methods"]) == ["classical", "stratified", "ppi"]
    assert set(entry["methods"]["ppi"]) == {"coverage", "coverage_error", "mean_width", "bias", "quality_coverage",
                                            "reliable", "reason"}
    assert (entry["threshold"], entry["threshold_from"], entry["audit_rate"], entry["note"]) == (0.9, "given", 0.1,
                                                                                                 None)


def test_each_policy_entry_is_what_measure_coverage_gives(receipts, monitored):
    entry = monitored["monitoring"]["policies"][0]
    replayer = Replayer(receipts, POLICIES[0], threshold=0.9, audit=0.1)
    rows = measure_coverage(replayer, days=300, seed=5, reviewers={"scenario's": REVIEWER})
    assert entry["true_auto_error"] == float(receipts.errors()[receipts.confidence >= 0.9].mean())
    assert entry["auto_accepted"] == int((receipts.confidence >= 0.9).sum())
    assert entry["expected_audits"] == pytest.approx(0.1 * entry["auto_accepted"])
    for row in rows:
        figures = entry["methods"][row.method]
        assert (figures["coverage"], figures["mean_width"], figures["bias"], figures["quality_coverage"]) == (
            row.coverage, row.mean_width, row.bias, row.quality_coverage)
        assert entry["naive_bias"] == row.naive_bias
    assert entry["naive_mean"] == pytest.approx(entry["true_auto_error"] + entry["naive_bias"], abs=1e-12)


def test_classical_covers_within_a_binomial_tolerance_of_its_level(monitored):
    for entry in monitored["monitoring"]["policies"]:
        classical = entry["methods"]["classical"]
        tolerance = 3 * math.sqrt(0.95 * 0.05 / 300)
        # exact intervals are conservative: at or above the level, within three Monte Carlo standard errors
        assert 0.95 - tolerance <= classical["coverage"] <= 1.0, entry["policy"]
        assert abs(classical["bias"]) < 0.01
        # the naive figure (reviewed rows only) overstates the auto-accepted error rate
        assert entry["naive_bias"] > 0.1


def test_widths_shrink_as_the_audit_rate_grows(monitored):
    for entry in monitored["monitoring"]["policies"]:
        widths = entry["widths"]
        assert widths["audit_rates"] == [0.01, 0.02, 0.05, 0.1, 0.2]
        assert widths["expected_audits"] == pytest.approx([rate * entry["auto_accepted"] for rate in
                                                           widths["audit_rates"]])
        for method, values in widths["mean_width"].items():
            # PPI's normal interval is erratic on a handful of audits (document-escalation accepts 62 items)
            if method != "ppi" or entry["auto_accepted"] >= 1000:
                assert all(b < a for a, b in itertools.pairwise(values)), (entry["policy"], method, values)
        # the grid's rate of 0.1 is the section's rate over the first 40 of the same days
        assert widths["mean_width"]["classical"][3] == pytest.approx(
            np.mean([high - low for low, high in zip(entry["first_days"]["low"]["classical"],
                                                     entry["first_days"]["high"]["classical"])]), rel=0.15)


def test_the_first_days_are_intervals_around_estimates(monitored):
    days = monitored["monitoring"]["policies"][0]["first_days"]
    assert days["seed"] == list(range(5, 35))
    for method in ("classical", "stratified", "ppi"):
        low, estimate, high = (np.array(days[part][method]) for part in ("low", "estimate", "high"))
        assert len(estimate) == 30
        assert np.all(low <= estimate) and np.all(estimate <= high)
    assert len(days["naive"]) == 30 and all(0.0 <= value <= 1.0 for value in days["naive"])


def test_the_same_scenario_gives_the_same_bytes(receipts, tmp_path):
    spec = {"threshold": 0.9, "days": 20, "width_days": 5, "audit_rates": [0.05, 0.2]}
    for out in ("one", "two"):
        write_outputs(run_study(scenario(spec), receipts, POLICIES), tmp_path / out)
    assert (tmp_path / "one" / "summary.json").read_bytes() == (tmp_path / "two" / "summary.json").read_bytes()
    again = json.loads((tmp_path / "one" / "summary.json").read_text())["monitoring"]
    # without a rate: the policy's own audit share, else the default
    assert [entry["audit_rate"] for entry in again["policies"]] == [DEFAULT_AUDIT_RATE, DEFAULT_AUDIT_RATE, 0.02]


def test_thresholds_come_from_the_cost_optimum_or_the_first_target(receipts):
    costs = {"hourly_rate": 30, "per_residual_error": 1.5}
    quick = {"days": 3, "audit_rates": []}
    optimum = run_study(scenario(quick, costs=costs, targets=[0.8, 0.9]), receipts, POLICIES).summary.to_dict()
    target = run_study(scenario({**quick, "threshold": "target"}, targets=[0.8, 0.9]), receipts,
                       POLICIES).summary.to_dict()
    for entry, policy in zip(optimum["monitoring"]["policies"], optimum["policies"]):
        assert (entry["threshold"], entry["threshold_from"]) == (policy["cost_optimum"]["threshold"], "cost optimum")
    for entry, policy in zip(target["monitoring"]["policies"], target["policies"]):
        assert entry["threshold_from"] == "target 0.8"
        assert entry["threshold"] == policy["operating_points"]["0.8"]["threshold"]


def test_one_policy_and_what_cannot_be_monitored(receipts):
    only = run_study(scenario({"policy": "confidence", "threshold": 2.0, "days": 3}), receipts,
                     POLICIES).summary.to_dict()
    [entry] = only["monitoring"]["policies"]
    assert (entry["policy"], entry["auto_accepted"], entry["methods"]) == ("confidence", 0, None)
    assert "reviews every item" in entry["note"]
    unreachable = run_study(scenario({"threshold": "target", "days": 3}, targets=[1.0]), receipts,
                            POLICIES).summary.to_dict()
    assert all(entry["threshold"] is None and entry["note"] == "has no target 1: nothing to monitor"
               for entry in unreachable["monitoring"]["policies"])


def test_an_audit_plan_leaves_classical_out_and_refuses_it_when_asked(receipts):
    plan = {"strata": [{"confidence": {"below": 0.99}, "rate": 0.3}], "rest_rate": 0.05}
    spec = {"policy": "confidence", "threshold": 0.9, "days": 5, "audit_plan": plan, "audit_rates": [0.1]}
    [entry] = run_study(scenario(spec), receipts, POLICIES).summary.to_dict()["monitoring"]["policies"]
    assert list(entry["methods"]) == ["stratified", "ppi"] and entry["audit_rate"] is None
    with pytest.raises(InputError, match="classical assumes one audit rate"):
        run_study(scenario({**spec, "methods": ["classical"]}), receipts, POLICIES)


@pytest.mark.parametrize(("section", "message"), [
    ({"policy": "nobody"}, "'nobody' is not one of the scenario's policies"),
    ({"threshold": "cost_optimum"}, "cost_optimum needs the scenario's costs"),
    ({}, "neither costs nor targets"),
])
def test_settings_that_do_not_fit_the_scenario_are_one_error(receipts, section, message):
    with pytest.raises(InputError, match=message):
        run_study(scenario({"days": 2, **section}), receipts, POLICIES)


@pytest.mark.parametrize(("section", "message"), [
    ("audit_rate: 0.1\n  audit_plan: {strata: [{rate: 0.1}]}", "audit_rate or audit_plan, not both"),
    ("audit_rate: 0", "greater than 0"),
    ("methods: [classical, classical]", "methods must differ"),
    ("audit_rates: [0.2, 0.1]", "audit_rates must increase"),
    ("dayz: 3", "dayz"),
])
def test_a_bad_section_is_one_error_naming_the_file(tmp_path, section, message):
    path = tmp_path / "s.yaml"
    path.write_text(f"name: s\ndata: {{generate: receipts, n: 5}}\npolicies: [confidence]\nmonitoring:\n  {section}\n")
    with pytest.raises(InputError, match=message) as raised:
        load_scenario(path)
    assert str(path) in str(raised.value)


def test_the_spec_defaults():
    spec = MonitoringSpec()
    assert (spec.days, spec.seed, spec.confidence_level, spec.shown, spec.width_days) == (200, 0, 0.95, 30, 50)
    assert MonitoringSpec(days=10).shown == 10
    assert spec.methods_for(uniform=False) == ("stratified", "ppi")


def test_the_report_has_a_monitoring_section_only_with_the_section(receipts):
    from rpa_sim.report.page import render_report

    spec = {"threshold": 0.9, "days": 12, "days_shown": 10, "width_days": 4, "audit_rates": [0.05, 0.2]}
    monitored = run_study(scenario(spec), receipts, POLICIES)
    html = render_report(monitored)
    assert render_report(monitored) == html  # the same bytes again
    section = html[html.index('<h2 id="monitoring">'):html.index("<h2>Provenance</h2>")]
    for part in ('id="monitoring-assumptions"', 'id="plot-monitoring-intervals"', 'id="plot-monitoring-widths"',
                 'id="monitoring-coverage"', "The 95% intervals of the first 10 days"):
        assert section.count(part) == 1, part
    assert html.count("a second, careful check") == 1  # the assumption is stated once
    entry = monitored.summary.to_dict()["monitoring"]["policies"][0]
    ppi = entry["methods"]["ppi"]
    assert (f"<tr><td>confidence</td><td class=\"num\">0.9000</td><td class=\"num\">{entry['auto_accepted']:,}</td>"
            in section)
    assert f'<td>ppi</td><td class="num">{ppi["coverage"]:.3f}</td>' in section
    assert section.count("<tr><td>") == 9  # three policies, three methods
    plain = render_report(run_study(scenario(None), receipts, POLICIES))
    assert "monitoring" not in plain.lower()


@pytest.fixture(scope="module")
def decided(receipts):
    """A short replay at τ = 0.9 of a study that decides on a quality target: document-escalation audits a
    handful of items a day, so its interval is far wider than its error rate."""
    spec = {"threshold": 0.9, "days": 12, "days_shown": 10, "width_days": 4, "audit_rates": [0.05, 0.2]}
    return run_study(scenario(spec, targets=[0.9]), receipts, POLICIES)


@pytest.fixture(scope="module")
def decided_report(decided):
    """The report's monitoring section (without its figures), as the report lays it out."""
    from rpa_sim.report.sections.monitoring import monitoring_section

    return "".join(monitoring_section(decided.summary.monitoring, {}, decision=decided.summary.decision))


def test_an_interval_far_wider_than_its_rate_gives_the_audit_that_narrows_it(receipts, decided, decided_report):
    from rpa_sim.operate.monitoring.planning import plan_audit
    from rpa_sim.operate.monitoring.summary import NARROW_FLOOR, TOO_WIDE

    entries = {entry.policy: entry for entry in decided.summary.monitoring.policies}
    for entry in entries.values():
        width, rate = entry.methods[entry.proposed_method()].mean_width, entry.true_auto_error
        assert (entry.narrower is not None) == (width > TOO_WIDE * rate), entry.policy
    wide = entries["document-escalation"]
    narrower = wide.narrower
    target = max(wide.true_auto_error, NARROW_FLOOR)
    assert narrower.target_width == pytest.approx(target, rel=0.05)  # two significant digits
    # the planner's fewest audits for that width: one fewer would not reach it
    policy = POLICIES[1]
    plan = plan_audit(receipts, policy, threshold=0.9, target_width=narrower.target_width)
    assert (narrower.audits, narrower.audit_rate) == (plan.audits, plan.audits / wide.auto_accepted)
    assert plan.expected_width <= narrower.target_width
    assert plan_audit(receipts, policy, threshold=0.9, budget=narrower.audits - 1).expected_width > \
        narrower.target_width
    proposal = decided_report.split('id="monitoring-proposal">')[1].split("</p>")[0]
    times = wide.methods[wide.proposed_method()].mean_width / wide.true_auto_error
    assert (f"{times:,.0f} times wider than the error rate it estimates ({wide.true_auto_error:.4f}): auditing "
            f"{100 * narrower.audit_rate:.1f}% of the auto-accepted items ({narrower.audits} a day") in proposal
    assert proposal.count("times wider") == 1  # only the policy whose interval is too wide


def test_the_section_says_when_it_replays_another_threshold_than_the_decisions(decided, decided_report):
    import dataclasses

    from rpa_sim.report.sections.monitoring import monitoring_section

    decision = decided.summary.decision
    assert decision.feasible and decision.threshold != 0.9
    warning = decided_report.split('id="monitoring-threshold">')[1].split("</p>")[0]
    assert warning.startswith("This section replays confidence at τ = 0.9000; document-escalation at τ = 0.9000")
    assert warning.endswith(f"not the decision's {decision.policy} at τ = {decision.threshold:.4f}: its figures are "
                            "for that threshold, not the one decided.")
    monitoring = decided.summary.monitoring
    at_decision = dataclasses.replace(monitoring, policies=tuple(
        dataclasses.replace(entry, threshold=decision.threshold) if entry.policy == decision.policy else entry
        for entry in monitoring.policies))
    assert 'id="monitoring-threshold"' not in "".join(monitoring_section(at_decision, {}, decision=decision))
