"""Policies that route on a named signal or on the fused one: sweeps, certification and exports, each the same as
routing on the confidence when the signal stands in for it."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from pydantic import ValidationError

from rpa_sim.evaluate.outcomes import evaluate_kie
from rpa_sim.records.models import KIERecord
from rpa_sim.route.policies import Policy, compile_policy
from rpa_sim.route.signals.columns import fused_signal
from rpa_sim.route.sweep import Sweeper
from tests.conftest import run_cli, write_lines


def _records(n, *, seed=0, swap=False, lacking=0.0):
    """KIE documents of three entities, each with a confidence and an agreement signal drawn alike (swapped when
    ``swap``); a share ``lacking`` of the values has no agreement."""
    rng = np.random.default_rng(seed)
    records = []
    for i in range(n):
        truth, predicted = [], []
        for key in ("total", "date", "name"):
            wrong = rng.random() < 0.2
            confidence, agreement = (round(float(np.clip((0.45 if wrong else 0.8) + rng.normal(0, 0.15), 0, 1)), 4)
                                     for _ in range(2))
            if swap:
                confidence, agreement = agreement, confidence
            signals = {} if rng.random() < lacking else {"signals": {"agreement": agreement}}
            truth.append({"key": key, "value": "v"})
            predicted.append({"key": key, "value": "w" if wrong else "v", "confidence": confidence, **signals})
        records.append({"id": f"d{i}", "ground_truth": {"entities": truth}, "prediction": {"entities": predicted}})
    return records


def _policy(review_if, **more):
    return Policy.model_validate({"name": "p", "review_if": review_if, **more})


def test_a_signals_test_names_one_signal_and_not_the_confidence():
    assert _policy({"signals": {"agreement": "sweep"}}).knob == "signals.agreement"
    assert _policy({"any_of": [{"confidence": 0.3}, {"signals": {"fused": "sweep"}}]}).signal_names() == ["fused"]
    for bad, message in (({"signals": {"a": "sweep", "b": 0.5}}, "names exactly one signal"),
                         ({"signals": {"confidence": "sweep"}}, "tested with `confidence:`"),
                         ({"signals": {}}, "names exactly one signal")):
        with pytest.raises(ValidationError, match=message):
            _policy(bad)


def test_a_value_without_the_signal_is_reviewed_or_accepted_as_the_test_says():
    signals = {"agreement": np.array([0.9, np.nan, 0.2])}
    common = {"confidence": np.array([0.5, 0.5, 0.5]), "grounding": np.full(3, np.nan),
              "fields": np.zeros(3, int), "field_names": ("k",), "signals": signals}
    reviewed = compile_policy(_policy({"signals": {"agreement": "sweep"}}), **common)
    accepted = compile_policy(_policy({"signals": {"agreement": {"below": "sweep", "missing": "accept"}}}), **common)
    assert reviewed.entry.tolist() == [0.9, -np.inf, 0.2]
    assert accepted.entry.tolist() == [0.9, np.inf, 0.2]


def test_sweeping_a_signal_is_sweeping_it_as_the_confidence():
    table = evaluate_kie(KIERecord.model_validate(r) for r in _records(300, seed=1))
    swapped = evaluate_kie(KIERecord.model_validate(r) for r in _records(300, seed=1, swap=True))
    on_signal = Sweeper(table, _policy({"signals": {"agreement": "sweep"}}, escalate="document")).curve()
    on_confidence = Sweeper(swapped, _policy({"confidence": "sweep"}, escalate="document")).curve()
    np.testing.assert_array_equal(on_signal.threshold, on_confidence.threshold)
    for name in ("auto_rate", "reviewed", "kieval_aligned"):
        np.testing.assert_array_equal(on_signal.columns[name], on_confidence.columns[name])


def test_certifying_a_signal_policy_is_certifying_the_signal_as_the_confidence(tmp_path, capsys):
    plain = write_lines(tmp_path / "plain.jsonl", *_records(800, seed=2))
    swapped = write_lines(tmp_path / "swapped.jsonl", *_records(800, seed=2, swap=True))
    (tmp_path / "agreement.yaml").write_text("name: agreement\nreview_if: {signals: {agreement: sweep}}\n")
    options = ("--max-error", "0.05", "--delta", "0.1", "--json")
    status, out, _ = run_cli(capsys, "certify", plain, "--policy", tmp_path / "agreement.yaml", *options)
    assert status == 0
    on_signal = json.loads(out)
    status, out, _ = run_cli(capsys, "certify", swapped, "--policy", "confidence", *options)
    on_confidence = json.loads(out)
    assert on_signal["threshold"] is not None
    assert {k: v for k, v in on_signal.items() if k != "policy"} == \
        {k: v for k, v in on_confidence.items() if k != "policy"}
    status, text, _ = run_cli(capsys, "certify", plain, "--policy", tmp_path / "agreement.yaml", "--max-error",
                              "0.05", "--delta", "0.1")
    assert f"Auto-accept iff signals.agreement >= {on_signal['threshold']:g}" in text


def test_routing_on_the_fused_signal_reads_the_cross_fitted_fusion():
    table = evaluate_kie(KIERecord.model_validate(r) for r in _records(200, seed=3, lacking=0.2))
    sweeper = Sweeper(table, _policy({"signals": {"fused": "sweep"}}))
    fused = fused_signal(table)
    assert not np.isnan(fused).any()  # a value without agreement is scored from its confidence and the absence
    np.testing.assert_array_equal(sweeper.compiled.entry, fused)
    assert fused_signal(table) is fused  # fitted once per table


def test_a_policy_on_a_signal_no_value_carries_is_one_line(tmp_path, capsys):
    data = write_lines(tmp_path / "records.jsonl", *_records(5))
    (tmp_path / "p.yaml").write_text("name: p\nreview_if: {signals: {second_call: sweep}}\n")
    status, _, err = run_cli(capsys, "sweep", data, "--policy", tmp_path / "p.yaml")
    assert status == 1 and len(err.strip().splitlines()) == 1
    assert "policy 'p' routes on signal 'second_call', which no value carries (signals: 'agreement')" in err


def test_an_export_names_the_signal_the_platform_must_be_fed(tmp_path, capsys):
    (tmp_path / "p.yaml").write_text("name: p\nreview_if: {any_of: [{signals: {agreement: sweep}}, "
                                     "{confidence: 0.2}]}\n")
    out = tmp_path / "rules.yaml"
    status, _, err = run_cli(capsys, "export-policy", "thresholds", "--policy", tmp_path / "p.yaml",
                             "--threshold", "0.7", "--out", out)
    assert status == 0 and "note: the thresholds apply to the signal 'agreement'" in err
    written = yaml.safe_load(out.read_text())
    assert written["score"] == "agreement" and written["review_below"]["default"] == 0.7
    assert "the platform must be fed that signal as each value's confidence" in written["notes"][0]
    assert any("confidence below 0.2" in note for note in written["notes"][1:])


# -- the decision weighs what the signals cost ---------------------------------------------------------------------


def _priced_scenario(tmp_path, price):
    """Documents whose agreement ranks errors much better than their confidence; two policies, one on each."""
    rng = np.random.default_rng(12)
    records = []
    for i in range(150):
        truth, predicted = [], []
        for key in ("total", "date"):
            wrong = rng.random() < 0.25
            confidence = round(float(np.clip((0.5 if wrong else 0.7) + rng.normal(0, 0.25), 0, 1)), 4)
            agreement = round(float(np.clip((0.2 if wrong else 0.9) + rng.normal(0, 0.1), 0, 1)), 4)
            truth.append({"key": key, "value": "v"})
            predicted.append({"key": key, "value": "w" if wrong else "v", "confidence": confidence,
                              "signals": {"agreement": agreement}})
        records.append({"id": f"d{i}", "ground_truth": {"entities": truth}, "prediction": {"entities": predicted}})
    write_lines(tmp_path / "records.jsonl", *records)
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(f"""name: priced-signals
data: {{file: records.jsonl}}
policies:
  - {{name: on-confidence, review_if: {{confidence: sweep}}}}
  - {{name: on-agreement, review_if: {{signals: {{agreement: sweep}}}}}}
costs: {{per_review: 1.0, per_residual_error: 20.0, per_value_signals: {{agreement: {price}}}}}
""")
    return scenario


@pytest.mark.parametrize(("price", "decided"), [(0.0, "on-agreement"), (5.0, "on-confidence")])
def test_the_decision_weighs_what_computing_a_signal_costs(tmp_path, capsys, price, decided):
    status, out, _ = run_cli(capsys, "run", _priced_scenario(tmp_path, price), "--format", "json")
    assert status == 0
    summary = json.loads(out)
    decision = summary["decision"]
    assert decision["policy"] == decided
    cost = decision["cost"]
    if decided == "on-agreement":
        assert "signals" not in cost  # priced at 0: nothing to say
    parts = sum(cost[kind] for kind in ("review", "staffing", "errors", "rejected", "signals") if kind in cost)
    assert cost["total"] == pytest.approx(parts)
    # the agreement policy pays for 300 values at the price, whatever its threshold
    optimum = next(p for p in summary["policies"] if p["policy"] == "on-agreement")["cost_optimum"]
    assert optimum["breakdown"].get("signals", 0.0) == pytest.approx(300 * price)


def test_costs_for_a_signal_no_value_carries_are_one_line(tmp_path, capsys):
    scenario = _priced_scenario(tmp_path, 1.0)
    scenario.write_text(scenario.read_text().replace("{agreement: 1.0}", "{second_call: 1.0}"))
    status, _, err = run_cli(capsys, "run", scenario)
    assert status == 1 and len(err.strip().splitlines()) == 1
    assert "the costs price signal 'second_call' (per_value_signals), which no value carries" in err
