"""The typed result (``rpa_sim/study/result/``): the study's ``StudySummary`` written and read back equal,
``summary.json`` read and written back byte for byte, summaries of every schema version read, every problem named by
its key path, and ``docs/summary.md`` in step with the dataclasses (issues 21 and 29)."""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle
import re
import types
import typing
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rpa_sim.common.errors import InputError
from rpa_sim.common.typedjson import given as written_when
from rpa_sim.evaluate.local import evaluate_records, evaluation
from rpa_sim.evaluate.outcomes import evaluate_kie, evaluate_vqa
from rpa_sim.operate.live.result import Segment
from rpa_sim.operate.monitoring.audit_plan import AuditPlan
from rpa_sim.operate.queue.spec import OperationsSpec
from rpa_sim.records.synthetic import generate_receipts
from rpa_sim.route.costs import CostModel
from rpa_sim.route.policies import Policy, load_policy
from rpa_sim.route.reviewer import Reviewer
from rpa_sim.study.result import SCHEMA_VERSION, CertifiedThreshold, FrozenMap, MonteCarlo, StudySummary
from rpa_sim.study.run import run_scenario, run_study, write_outputs
from rpa_sim.study.scenario import Scenario, bundled_scenarios, load_scenario

DOCS = Path(__file__).resolve().parents[1] / "docs" / "summary.md"


def small(scenario: Scenario, **update) -> Scenario:
    """The scenario on fewer items, replays and days (and with ``update``): the same sections, in a second."""
    settings = scenario.model_dump(exclude_none=True)
    settings["data"]["n"] = 120
    if scenario.replicates:
        settings["replicates"] = 20
    if scenario.operations is not None:
        settings["operations"]["days"] = 1
    return Scenario.model_validate({**settings, **update})


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """Per bundled scenario (made small), the result and the text of the summary.json ``run --out-dir`` writes."""
    found = {}
    for name in bundled_scenarios():
        scenario, base = load_scenario(name)
        result = run_scenario(small(scenario), base)
        out = tmp_path_factory.mktemp(name)
        write_outputs(result, out)
        found[name] = result, (out / "summary.json").read_text(encoding="utf-8")
    return found


def round_trips(text: str) -> StudySummary:
    typed = StudySummary.from_json(text)
    assert typed.to_json() == text
    assert StudySummary.from_json(json.loads(text)) == typed
    return typed


@pytest.mark.parametrize("name", list(bundled_scenarios()))
def test_every_bundled_scenario_round_trips_byte_for_byte(written, name):
    result, text = written[name]
    typed = round_trips(text)
    assert typed.schema_version == SCHEMA_VERSION == 4 and text.startswith('{\n  "schema_version": 4,\n')
    # the study's own typed result, written and read back, is the same object
    assert typed == result.summary and typed.to_json() == result.summary.to_json()
    decided = typed.decision
    assert decided.rules == next(policy for policy in result.policies if policy.name == decided.policy)
    assert typed.scenario == name and len(typed.policies) == len(result.policies)
    assert (typed.operations is None) == (name != "operations-day")
    assert all(isinstance(policy.dominated_by, tuple) for policy in typed.policies)


def test_typed_access_reads_the_figures_of_the_file(written):
    result, text = written["imperfect-reviewer"]
    typed, summary = result.summary, json.loads(text)
    first = typed.policies[0]
    assert first.cost_optimum.threshold == summary["policies"][0]["cost_optimum"]["threshold"]
    assert first.operating_points["0.9"].auto_rate == summary["policies"][0]["operating_points"]["0.9"]["auto_rate"]
    assert first.monte_carlo.metric == "kieval_aligned"
    assert list(first.monte_carlo.mean_metric) == summary["policies"][0]["monte_carlo"]["mean_kieval_aligned"]
    assert typed.reviewer == Reviewer(miss_rate=0.1, false_correction_rate=0.02, seconds_per_item=6)
    assert typed.costs.currency == "EUR" and typed.data.documents == 120
    with pytest.raises(dataclasses.FrozenInstanceError):
        typed.scenario = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        first.operating_points["0.9"] = None  # type: ignore[index]
    assert pickle.loads(pickle.dumps(typed)) == typed


@pytest.mark.parametrize("version", [1, 2, 3])
def test_summaries_of_earlier_versions_still_read(written, version):
    """Version 3 is version 4 without the named signals (which these data have not), version 2 version 3 without
    the decided policy's rules; version 1 has no schema_version either."""
    result, text = written["receipts-demo"]
    old = json.loads(text)
    if version < 3:
        del old["decision"]["rules"]
    if version == 1:
        del old["schema_version"]
    else:
        old["schema_version"] = version
    typed = round_trips(json.dumps(old, indent=2) + "\n")
    assert typed.schema_version == (None if version == 1 else version)
    assert (typed.decision.rules is None) == (version < 3)
    assert replace(typed, schema_version=SCHEMA_VERSION, decision=result.summary.decision) == result.summary


def test_a_version_3_summary_without_a_stream_reads(written):
    """Version 3 is version 4 without the stream: a scenario with a stream: section reads without it."""
    result, text = written["live-drift"]
    old = {key: value for key, value in json.loads(text).items() if key != "stream"}
    old["schema_version"] = 3
    typed = round_trips(json.dumps(old, indent=2) + "\n")
    assert typed.stream is None and replace(typed, schema_version=SCHEMA_VERSION, stream=result.summary.stream) == \
        result.summary
    assert result.summary.stream is not None and len(result.summary.stream.changes) == 4


def test_a_version_1_summary_without_a_decision_reads(written):
    """Written before decisions existed: no decision at all (the report and export then read it as such)."""
    _, text = written["cost-benefit"]
    old = {key: value for key, value in json.loads(text).items() if key not in ("schema_version", "decision")}
    typed = round_trips(json.dumps(old, indent=2) + "\n")
    assert typed.schema_version is None and typed.decision is None


def test_monitoring_and_document_types_round_trip(tmp_path):
    scenario, base = load_scenario("receipts-demo")
    monitored = small(scenario, monitoring={"days": 12, "width_days": 4, "days_shown": 3,
                                            "audit_rates": [0.05, 0.2], "seed": 2})
    result = run_scenario(monitored, base)
    write_outputs(result, tmp_path)
    typed = round_trips((tmp_path / "summary.json").read_text(encoding="utf-8"))
    monitored_policy = typed.monitoring.policies[0]
    assert set(monitored_policy.methods) == {"classical", "stratified", "ppi"}
    assert len(monitored_policy.first_days.seed) == 3 and monitored_policy.widths.audit_rates == (0.05, 0.2)

    records = [record.model_copy(update={"document_type": ("receipt", "invoice")[i % 2]})
               for i, record in enumerate(generate_receipts(60, seed=3))]
    table = evaluate_records(records, evaluation("kie"))
    typed_scenario = Scenario.model_validate({"name": "typed", "data": {"generate": "receipts"},
                                              "policies": ["confidence"], "targets": [0.9],
                                              "costs": {"hourly_rate": 30.0}, "reviewer": {"seconds_per_item": 5}})
    result = run_study(typed_scenario, table, [load_policy("confidence")])
    write_outputs(result, tmp_path)
    typed = round_trips((tmp_path / "summary.json").read_text(encoding="utf-8"))
    cells = typed.optimized_per_document_type["0.9"]
    assert cells.feasible and set(cells.thresholds) == {"receipt", "invoice"}
    assert isinstance(cells.thresholds["receipt"], FrozenMap)
    assert [group.name for group in typed.calibration.by_document_type] == ["receipt", "invoice"]


@pytest.mark.parametrize("make", [lambda: evaluate_kie([]), lambda: evaluate_vqa([])], ids=["kie", "vqa"])
def test_a_table_without_rows_round_trips_with_its_nulls(tmp_path, make):
    table = make()
    policies = ["confidence", "audited-budget"]
    scenario = Scenario.model_validate({"name": "empty", "data": {"generate": "receipts"}, "policies": policies,
                                        "costs": {"hourly_rate": 30.0}, "targets": [0.9], "replicates": 5,
                                        "certify": {"max_error": 0.1, "delta": 0.1}})
    write_outputs(run_study(scenario, table, [load_policy(name) for name in policies]), tmp_path)
    typed = round_trips((tmp_path / "summary.json").read_text(encoding="utf-8"))
    assert typed.calibration is None and typed.policies[0].cost_optimum.auto_rate is None
    assert typed.policies[1].certified.threshold is None and "budget" in typed.policies[1].certified.guarantee


# -- the keys other parts of issue 21 add ---------------------------------------------------------

COST = {"review": 123.4, "staffing": 1500.0, "errors": 80.0, "rejected": 0.0, "total": 1703.4, "currency": "EUR",
        "per": "day"}
CONSTRAINTS = [{"name": "quality", "target": 0.95, "value": 0.9612, "met": True},
               {"name": "service_level", "target": 0.9, "value": 0.934, "met": True},
               {"name": "reviewers", "target": 12, "value": 12, "met": True},
               {"name": "cost_per_day", "target": 2000.0, "value": 1820.5, "met": True},
               {"name": "certified_error", "target": 0.02, "value": None, "met": False}]
DECISION = {"policy": "document-escalation", "threshold": 0.93,
            "reviewers": {"extra_per_shift": 2, "shifts": [[7, 13, 6], [13.0, 19.0, 6]], "count": None},
            "feasible": True, "constraints": CONSTRAINTS, "binding": "service_level", "cost": COST,
            "alternatives": [{"kind": "team_for_threshold", "policy": "confidence", "threshold": 0.9,
                              "reviewers": {"extra_per_shift": 0, "shifts": None, "count": 5},
                              "constraints": CONSTRAINTS[:1], "cost": COST, "note": "one more reviewer a shift"}],
            "basis": "cost", "edge_of_range": False, "reason": "",
            "point": {"auto_rate": 0.62, "metric": 0.9612, "reviewed": 1210.0, "cost": 1703.4}}


def with_contract_keys(summary: dict) -> dict:
    """A real summary with the decision, a cost optimum's edge flag and breakdown, and monitoring verdicts."""
    summary = copy.deepcopy(summary)
    optimum = summary["policies"][0]["cost_optimum"]
    optimum.update(breakdown={key: COST[key] for key in COST if key != "per"}, reviews_saved=12.5,
                   savings_by_kind={"review": 1.0, "staffing": 0.0, "errors": -2.5, "rejected": 0.0},
                   edge_of_range=True)
    for policy in summary["monitoring"]["policies"]:
        for method, figures in (policy["methods"] or {}).items():
            reliable = method != "ppi"
            figures.update(reliable=reliable, reason="" if reliable else "covers 24.0% of replayed days")
    return {**summary, "decision": DECISION}


@pytest.fixture(scope="module")
def monitored_summary():
    scenario, base = load_scenario("cost-benefit")
    run = small(scenario, monitoring={"days": 6, "width_days": 2, "days_shown": 2, "audit_rates": [0.1]})
    return run_scenario(run, base).summary.to_dict()


def test_a_summary_with_the_contract_keys_round_trips(monitored_summary):
    summary = with_contract_keys(monitored_summary)
    text = json.dumps(summary, indent=2) + "\n"
    typed = round_trips(text)
    decision = typed.decision
    assert decision.reviewers.shifts == ((7, 13, 6), (13.0, 19.0, 6)) and decision.binding == "service_level"
    assert [c.name for c in decision.constraints if c.met] == ["quality", "service_level", "reviewers", "cost_per_day"]
    assert decision.cost.per == "day" and decision.alternatives[0].reviewers.count == 5
    real_edge = monitored_summary["policies"][1]["cost_optimum"]["edge_of_range"]
    assert typed.policies[0].cost_optimum.edge_of_range is True
    assert typed.policies[1].cost_optimum.edge_of_range is real_edge
    assert typed.policies[0].cost_optimum.breakdown.per is None
    monitored = [policy for policy in typed.monitoring.policies if policy.methods is not None]
    assert monitored and all(policy.note is None for policy in monitored)
    verdicts = {method: (figures.reliable, figures.reason) for method, figures in monitored[0].methods.items()}
    assert verdicts["ppi"] == (False, "covers 24.0% of replayed days") and verdicts["classical"] == (True, "")
    assert StudySummary.from_json(monitored_summary).decision.policy == monitored_summary["decision"]["policy"]


# -- what is refused ------------------------------------------------------------------------------

def refused(summary: dict | str, message: str) -> None:
    with pytest.raises(InputError) as raised:
        StudySummary.from_json(summary)
    assert str(raised.value) == message


def test_unknown_missing_and_misplaced_keys_are_named_by_their_path(monitored_summary):
    summary = with_contract_keys(monitored_summary)
    changed = copy.deepcopy(summary)
    changed["policies"][1]["cost_optimum"]["colour"] = "red"
    refused(changed, "policies[1].cost_optimum.colour: unknown key")
    changed = copy.deepcopy(summary)
    changed["monitoring"]["policies"][0]["methods"]["ppi"]["verdict"] = 1
    refused(changed, 'monitoring.policies[0].methods["ppi"].verdict: unknown key')
    changed = copy.deepcopy(summary)
    changed["decision"]["constraints"][2]["bound"] = 3
    refused(changed, "decision.constraints[2].bound: unknown key")
    changed = {**summary, "new top": 1}
    refused(changed, '["new top"]: unknown key')
    changed = copy.deepcopy(summary)
    del changed["baselines"]["review_all"]["cost"]
    refused(changed, "baselines.review_all.cost: missing key")
    changed = copy.deepcopy(summary)
    changed["optimized_per_field"]["0.9"]["feasible"] = False
    refused(changed, 'optimized_per_field["0.9"].thresholds: present only when feasible is neither null, false nor '
                     'empty')
    changed = copy.deepcopy(summary)
    changed["policies"][0]["rejected"] = None
    refused(changed, "policies[0].rejected: null: a summary leaves this key out when it has no value")
    changed = copy.deepcopy(summary)
    changed["policies"][0]["monte_carlo"] = {"replicates": 1, "seed": 0, "thresholds": [], "mean_auto_rate": []}
    refused(changed, 'policies[0].monte_carlo: expected one mean_<metric> key besides mean_auto_rate, got []')


def test_a_value_of_the_wrong_type_is_named_by_its_path(monitored_summary):
    summary = with_contract_keys(monitored_summary)
    cases = [
        (("policies", 1, "cost_optimum", "threshold"), "0.5",
         'policies[1].cost_optimum.threshold: expected a number, got a string: "0.5"'),
        (("policies", 0, "dominated_by"), "none", 'policies[0].dominated_by: expected a list, got a string: "none"'),
        (("data", "tp"), 14.0, "data.tp: expected an integer, got a number: 14.0"),
        (("targets", 1), None, "targets[1]: expected a number, got null"),
        (("policies", 0, "operating_points", "0.9"), [0.5],
         'policies[0].operating_points["0.9"]: expected an object or null, got a list'),
        (("policies", 0, "auto_rate_range"), [0.1], "policies[0].auto_rate_range: expected a list of 2, got 1 items"),
        (("decision", "basis"), "cheapest", 'decision.basis: expected one of "cost", "target", got "cheapest"'),
        (("decision", "feasible"), 1, "decision.feasible: expected true or false, got an integer: 1"),
        (("monitoring", "policies", 0, "methods", "ppi", "reliable"), "no",
         'monitoring.policies[0].methods["ppi"].reliable: expected true or false, got a string: "no"'),
        (("reviewer", "miss_rate"), "0.02", "reviewer.miss_rate: Input should be a valid number"),
        (("costs",), [], "costs: expected an object or null, got a list"),
    ]
    for keys, value, message in cases:
        changed = copy.deepcopy(summary)
        place = changed
        for key in keys[:-1]:
            place = place[key]
        place[keys[-1]] = value
        refused(changed, message)


def test_a_newer_summary_and_text_that_is_no_summary_are_refused(monitored_summary):
    refused({**monitored_summary, "schema_version": 5, "colour": "red"},
            "summary.json schema_version 5 is newer than this rpa-sim reads (4)")
    refused({**monitored_summary, "schema_version": 1}, "schema_version: 1 is not a schema version: a summary "
            "without the key is version 1, and versions with the key start at 2")
    refused({**monitored_summary, "schema_version": "2"}, 'schema_version: expected an integer, got a string: "2"')
    refused("[1, 2]", "summary.json holds a list, not an object")
    refused('{"scenario": NaN}', "summary.json is not JSON: NaN is not a JSON number")
    refused('{"scenario": ', "summary.json is not JSON: Expecting value: line 1 column 14 (char 13)")
    refused({**monitored_summary, "calibration": None},
            "calibration: expected an object ({} when no prediction has a confidence), got null")


# -- random summaries -----------------------------------------------------------------------------

SECTIONS = {
    Reviewer: [Reviewer(), Reviewer(miss_rate=0.1, seconds_per_item=6.0, seconds_per_document=20.0)],
    CostModel: [CostModel(per_review=0.05), CostModel(currency="EUR", hourly_rate=30.0, per_residual_error=1.5)],
    OperationsSpec: [load_scenario("operations-day")[0].operations],
    AuditPlan: [AuditPlan.model_validate({"strata": [{"confidence": {"below": 0.9}, "rate": 0.2}], "rest_rate": 0.05})],
    Policy: [load_policy("confidence"), load_policy("per-document-type")],
}
TEXT = st.text(max_size=6)
NUMBER = st.floats(allow_nan=False, allow_infinity=False) | st.integers(-10**6, 10**6)


def strategy(kind) -> st.SearchStrategy:
    """Values of a result type: JSON-like leaves, tuples, FrozenMaps and dataclasses, as the schema allows."""
    members = typing.get_args(kind) if typing.get_origin(kind) in (typing.Union, types.UnionType) else (kind,)
    if len(members) > 1:
        return st.one_of(*(strategy(member) for member in members))
    origin = typing.get_origin(kind)
    if kind is type(None):
        return st.none()
    if origin is typing.Literal:
        return st.sampled_from(typing.get_args(kind))
    if origin is tuple:
        items = typing.get_args(kind)
        if len(items) == 2 and items[1] is Ellipsis:
            return st.lists(strategy(items[0]), max_size=2).map(tuple)
        return st.tuples(*(strategy(item) for item in items))
    if origin is FrozenMap:
        return st.dictionaries(TEXT, strategy(typing.get_args(kind)[0]), max_size=2).map(FrozenMap)
    if kind in SECTIONS:
        return st.sampled_from(SECTIONS[kind])
    if dataclasses.is_dataclass(kind):
        return dataclass_strategy(kind)
    return {bool: st.booleans(), int: st.integers(-10**6, 10**6), float: NUMBER, str: TEXT}[kind]


def dataclass_strategy(cls) -> st.SearchStrategy:
    hints = typing.get_type_hints(cls)
    parts = {item.name: strategy(hints[item.name]) for item in dataclasses.fields(cls)
             if not item.metadata.get("unwritten")}
    if cls is StudySummary:
        parts["schema_version"] = st.sampled_from([None, SCHEMA_VERSION])
    if cls is MonteCarlo:
        parts["metric"] = st.sampled_from(["kieval_aligned", "anls", "smudge"])
    if cls is CertifiedThreshold:  # given, as a summary gives it (made from the other fields only when not)
        parts["guarantee"] = st.text(min_size=1, max_size=6)
    if hints.get("segment") == Segment:  # a watched segment names each of its columns once: {column: value}
        parts["segment"] = st.dictionaries(TEXT, TEXT | st.none(), max_size=2).map(lambda values: tuple(values.items()))

    def consistent(found: dict) -> object:
        for item in dataclasses.fields(cls):
            condition = item.metadata.get("present_when")
            if condition is not None and not written_when(found[condition]):
                found[item.name] = item.default
        return cls(**found)

    return st.fixed_dictionaries(parts).map(consistent)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(dataclass_strategy(StudySummary))
def test_random_summaries_round_trip(summary):
    text = summary.to_json()
    again = StudySummary.from_json(text)
    assert again == summary and again.to_json() == text


# -- the schema's documentation -------------------------------------------------------------------

def result_classes(cls=StudySummary, seen=None) -> dict[str, type]:
    """Every dataclass a summary is made of, by name."""
    seen = {} if seen is None else seen
    seen[cls.__name__] = cls
    stack = list(typing.get_type_hints(cls).values())
    while stack:
        kind = stack.pop()
        stack.extend(typing.get_args(kind))
        if dataclasses.is_dataclass(kind) and kind.__name__ not in seen:
            result_classes(kind, seen)
    return seen


def json_keys(cls) -> list[str]:
    names = [item.name for item in dataclasses.fields(cls) if not item.metadata.get("unwritten")]
    if cls is MonteCarlo:  # the metric's keys carry its name
        return [name.replace("_metric", "_<metric>") for name in names if name != "metric"]
    return names


def documented() -> dict[str, list[str]]:
    """Per ``### `Class` `` section of docs/summary.md, the keys its table lists (the first cell of each row)."""
    sections: dict[str, list[str]] = {}
    current = None
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        heading = re.fullmatch(r"### `(\w+)`.*", line)
        if heading:
            current = sections.setdefault(heading.group(1), [])
        elif current is not None and (row := re.match(r"\| `([^`]+)` \|", line)):
            current.append(row.group(1))
    return sections


def test_docs_describe_every_class_and_key_and_nothing_else():
    classes = result_classes()
    sections = documented()
    assert sorted(sections) == sorted(classes)
    for name, cls in classes.items():
        assert sections[name] == json_keys(cls), name
    text = DOCS.read_text(encoding="utf-8")
    assert f"`schema_version` is {SCHEMA_VERSION}" in text
