"""The review operation wired to scenarios (issue 12): figures at τ against direct computation, the cost model,
determinism, the records' ``received_at`` / ``review_seconds`` through every path, ``staff SCENARIO``, ``run``
and bad input."""

from __future__ import annotations

import json
import math

import numpy as np
import pyarrow.parquet as pq
import pytest

from rpa_sim.common.errors import InputError
from rpa_sim.evaluate.outcomes import concat_tables, evaluate_kie, evaluate_vqa
from rpa_sim.evaluate.tablefile import read_table, write_table
from rpa_sim.operate.queue.spec import OperationsSpec
from rpa_sim.operate.queue.staffing import required_reviewers, scheduled_reviewers
from rpa_sim.operate.queue.summary import OperationModel, Workload
from rpa_sim.records.models import KIERecord, VQARecord, decode_fast
from rpa_sim.records.synthetic import generate_receipts
from rpa_sim.route.compare import cost_optimum
from rpa_sim.route.sweep import Sweeper
from rpa_sim.study.run import run_scenario
from rpa_sim.study.scenario import Scenario, load_scenario
from tests.conftest import run_cli

PROFILE = [0] * 8 + [40, 60, 60, 50, 30, 40, 50, 40, 20] + [0] * 7
OPERATIONS = {
    "arrivals": {"hourly": PROFILE},
    "handling": {"per_document": {"kind": "lognormal", "mean_seconds": 20, "cv": 0.5},
                 "per_item": {"kind": "exponential", "mean_seconds": 7}},
    "reviewers": {"shifts": [{"start_hour": 8, "end_hour": 13, "reviewers": 2},
                             {"start_hour": 13, "end_hour": 17, "reviewers": 2}], "shrinkage": 0.2},
    "service_level": {"share": 0.9, "within_hours": 2},
    "days": 3,
}
SCENARIO = {
    "name": "ops", "data": {"generate": "receipts", "n": 300, "seed": 4},
    "policies": ["confidence", "document-escalation"],
    "reviewer": {"seconds_per_item": 7, "seconds_per_document": 20},
    "costs": {"hourly_rate": 30, "per_residual_error": 2.0, "currency": "EUR"},
    "thresholds": "linspace:0:1:41", "targets": [0.95], "operations": OPERATIONS,
}


def scenario(**changes) -> Scenario:
    return Scenario.model_validate({**SCENARIO, **changes})


@pytest.fixture(scope="module")
def result():
    return run_scenario(scenario(), base=None)


def test_load_and_reviewers_needed_are_the_curve_at_tau_by_hand(result):
    operations = result.summary.to_dict()["operations"]
    table = result.table
    for policy, entry in zip(result.policies, operations["policies"]):
        sweeper = Sweeper(table, policy, reviewer=result.scenario.reviewer)
        for point in entry["points"]:
            at = sweeper.at(point["threshold"])
            opened = table.documents - at["documents_straight_through"]
            handle = 20 + at["reviewed"] / opened * 7
            assert point["handle_seconds"] == pytest.approx(handle, rel=1e-12)
            share = opened / table.documents
            assert point["load_per_hour"] == pytest.approx([rate * share * handle / 3600 for rate in PROFILE],
                                                           rel=1e-12)
            target = 1 - 0.1 / share
            expected = [0 if rate == 0 else required_reviewers(
                arrivals_per_hour=rate * share, handle_seconds=handle, answer_within_seconds=7200 - handle,
                service_level=target).reviewers for rate in PROFILE]
            assert point["reviewers_needed_per_hour"] == expected
            scheduled = [scheduled_reviewers(n, shrinkage=0.2) if n else 0 for n in expected]
            assert point["scheduled_needed_per_hour"] == scheduled
            assert point["staffing_cost_per_day"] == pytest.approx(sum(scheduled) * 30, rel=1e-12)
    assert operations["team"]["cost_per_day"] == (5 * 2 + 4 * 2) * 30
    assert operations["documents_per_day"] == sum(PROFILE)


def test_staffing_joins_the_cost_and_the_cost_optimum(result):
    table, model = result.table, OperationModel(result.scenario.operations, documents=result.table.documents,
                                                reviewer=result.scenario.reviewer, costs=result.scenario.costs)
    plain = [Sweeper(table, policy, reviewer=result.scenario.reviewer, costs=result.scenario.costs).curve(
        "linspace:0:1:41") for policy in result.policies]
    for curve, unpriced, summary in zip(result.curves, plain, result.summary.to_dict()["policies"]):
        opened = table.documents - unpriced.columns["documents_straight_through"]
        reviewed = unpriced.columns["reviewed"]
        staffing = np.array([model.staffing_cost_per_day(Workload(opened=o, reviewed=r, documents=table.documents))
                             for o, r in zip(opened, reviewed)]) * table.documents / sum(PROFILE)
        np.testing.assert_allclose(curve.columns["staffing_cost"], staffing, rtol=1e-12)
        # review time priced per second of work leaves; the rostered hours come in
        timed = reviewed * 30 * 7 / 3600 + opened * 30 * 20 / 3600
        np.testing.assert_allclose(curve.columns["cost"], unpriced.columns["cost"] - timed + staffing, rtol=1e-12)
        best = int(np.lexsort((curve.threshold, -curve.auto_rate, curve.columns["cost"]))[0])
        assert summary["cost_optimum"]["threshold"] == curve.threshold[best] == cost_optimum(curve).threshold
    assert any(not np.allclose(curve.columns["cost"], unpriced.columns["cost"])
               for curve, unpriced in zip(result.curves, plain))


def test_the_simulation_sees_the_workload(result):
    point = result.summary.to_dict()["operations"]["policies"][0]["points"][0]
    simulated = point["simulated"]
    expected = sum(PROFILE) * 3 * point["opened_share"]
    assert abs(simulated["tasks"] - expected) < 4 * math.sqrt(expected)  # a Poisson count
    assert 0 <= simulated["service_level"] <= 1 and len(simulated["backlog_at_day_end"]) == 3
    assert simulated["service_level"] == pytest.approx(
        1 - point["opened_share"] * (1 - simulated["service_level_reviewed"]), rel=1e-12)
    by_hour = simulated["backlog_by_hour"]
    assert len(by_hour) == 24 and by_hour[23] == pytest.approx(np.mean(simulated["backlog_at_day_end"]))
    assert len(set(by_hour[:8])) == 1  # nobody arrives or reviews before 08:00
    grid = result.summary.to_dict()["operations"]["policies"][0]["grid"]
    assert [row["threshold"] for row in grid] == pytest.approx(np.linspace(0, 1, 21).tolist())
    assert grid[0]["opened_share"] <= grid[-1]["opened_share"]


def test_same_seed_same_bytes_and_absent_without_the_section(result):
    again = run_scenario(scenario(), base=None)
    assert again.summary.to_json() == result.summary.to_json()
    other = run_scenario(scenario(operations={**OPERATIONS, "seed": 1}), base=None)
    assert other.summary.to_dict()["operations"] != result.summary.to_dict()["operations"]
    plain = run_scenario(scenario(operations=None), base=None)
    assert plain.summary.operations is None and "operations" not in plain.summary.to_dict()
    assert all("staffing_cost" not in curve.columns for curve in plain.curves)


def test_overload_is_reported_not_refused():
    crowded = run_scenario(scenario(operations={**OPERATIONS, "arrivals": {"per_hour": 400},
                                                "reviewers": {"count": 1}}), base=None)
    point = crowded.summary.to_dict()["operations"]["policies"][0]["points"][0]
    assert point["overloaded_hours"] == list(range(24))
    assert point["erlang_service_level_per_hour"] == [None] * 24
    backlog = point["simulated"]["backlog_at_day_end"]
    assert backlog[0] < backlog[1] < backlog[2]


def test_released_documents_go_through_unreviewed_in_the_quality(result):
    # one reviewer, an hour's patience and release: many opened documents leave the queue unreviewed
    short = run_scenario(scenario(operations={**OPERATIONS, "arrivals": {"per_hour": 120},
                                              "reviewers": {"count": 1},
                                              "patience": {"seconds": 3600, "on_expiry": "release"}}), base=None)
    unreviewed = short.table.counts.kieval_aligned
    for policy, sweeper_policy in zip(short.summary.to_dict()["operations"]["policies"], short.policies):
        sweeper = Sweeper(short.table, sweeper_policy, reviewer=short.scenario.reviewer, costs=short.scenario.costs)
        for point in policy["points"] + policy["grid"]:
            simulated = point["simulated"]
            share = simulated["released"] / simulated["tasks"] if simulated["tasks"] else 0.0
            quality = sweeper.at(point["threshold"])["kieval_aligned"]
            assert point["quality"] == pytest.approx(quality, abs=1e-12)
            assert point["released_share"] == share
            assert point["quality_with_releases"] == pytest.approx(quality - share * (quality - unreviewed), abs=1e-12)
        released = [point["released_share"] for point in policy["points"]]
        assert max(released) > 0.3  # the team is far too small: the figure is tested where it matters
    # without patience nothing is released and the quality is the curve's
    for policy in result.summary.to_dict()["operations"]["policies"]:
        for point in policy["points"]:
            assert point["released_share"] == 0.0 and point["quality_with_releases"] == point["quality"]


def _records(n: int, *, times: bool = True, seconds: bool = True) -> list[dict]:
    records = []
    for i, record in enumerate(generate_receipts(n, seed=2)):
        raw = record.model_dump(mode="json", exclude_none=True)
        if times:
            day, minute = divmod(i * 37, 600)
            raw["received_at"] = f"2024-03-0{4 + day}T{8 + minute // 60:02d}:{minute % 60:02d}:00+01:00"
        if seconds:
            raw["review_seconds"] = 30.0 + i % 7
        records.append(raw)
    return records


def test_received_at_and_review_seconds_reach_the_table_and_parquet(tmp_path):
    raws = _records(40)
    raws[3].pop("received_at")
    raws[5]["received_at"] = "2024-03-04T07:00:00Z"
    models = [KIERecord.model_validate(raw) for raw in raws]
    table = evaluate_kie(models)
    assert math.isnan(table.received_at[3]) and table.received_at[5] == 1709535600.0
    assert table.received_at[0] == 1709535600.0 + 0 and table.received_at[1] == 1709535600.0 + 37 * 60  # 08:00+01:00
    assert table.review_seconds.tolist() == [30.0 + i % 7 for i in range(40)]
    fast = [decode_fast("kie", json.dumps(raw)) for raw in raws]
    assert all(f is not None and f.received_at == m.received_at for f, m in zip(fast, models))
    whole = concat_tables([evaluate_kie(fast[:17]), evaluate_kie(fast[17:])])
    np.testing.assert_array_equal(whole.received_at, table.received_at)
    np.testing.assert_array_equal(whole.review_seconds, table.review_seconds)
    path = tmp_path / "t.parquet"
    write_table(table, path)
    back = read_table(path)
    np.testing.assert_array_equal(back.received_at, table.received_at)
    np.testing.assert_array_equal(back.review_seconds, table.review_seconds)
    # a table written before the columns existed still reads, without them
    data = pq.read_table(path).drop_columns(["received_at", "review_seconds"])
    pq.write_table(data, tmp_path / "old.parquet")
    old = read_table(tmp_path / "old.parquet")
    assert np.isnan(old.received_at).all() and np.isnan(old.review_seconds).all() and len(old.received_at) == 40


def test_vqa_questions_carry_them_too(tmp_path):
    raws = [{"id": f"q{i}", "answers": ["12"], "prediction": {"answer": "12", "confidence": 0.5},
             "received_at": "2024-03-04T09:00:00Z", "review_seconds": 12.5} for i in range(3)]
    raws[1].pop("review_seconds")
    table = evaluate_vqa([VQARecord.model_validate(raw) for raw in raws])
    assert table.received_at.tolist() == [1709542800.0] * 3
    assert table.review_seconds[0] == 12.5 and math.isnan(table.review_seconds[1])
    write_table(table, tmp_path / "q.parquet")
    np.testing.assert_array_equal(read_table(tmp_path / "q.parquet").review_seconds, table.review_seconds)


@pytest.mark.parametrize("value", ["2024-03-04 09:15", "2024-03-04", "yesterday", 1709540100, "2024-13-04T09:15:00Z"])
def test_received_at_must_be_iso_8601_with_an_offset(value):
    raw = {"id": "q1", "answers": ["12"], "prediction": {"answer": "12", "confidence": 0.5}, "received_at": value}
    with pytest.raises(ValueError, match="received_at"):
        VQARecord.model_validate(raw)
    assert decode_fast("vqa", json.dumps(raw)) is None


def test_received_at_error_names_file_line_id_and_field(tmp_path, capsys):
    raws = _records(3)
    raws[1]["received_at"] = "2024-03-04 09:15"
    (tmp_path / "r.jsonl").write_text("".join(json.dumps(raw) + "\n" for raw in raws))
    status, out, err = run_cli(capsys, "score", str(tmp_path / "r.jsonl"))
    assert (status, out) == (1, "")
    assert err == (f"rpa-sim: error: {tmp_path / 'r.jsonl'}: line 2 (id receipt-s2-000001): received_at: "
                   f"'2024-03-04 09:15' has no UTC offset: write it as 2024-03-04T09:15:00+01:00 or "
                   f"2024-03-04T08:15:00Z\n")


def _file_scenario(tmp_path, raws, operations):
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(raw) + "\n" for raw in raws))
    text = {**SCENARIO, "data": {"file": "data.jsonl"}, "operations": operations}
    (tmp_path / "s.yaml").write_text(json.dumps(text))  # JSON is YAML
    return tmp_path / "s.yaml"


def test_arrivals_and_handling_from_records(tmp_path):
    raws = _records(40)
    path = _file_scenario(tmp_path, raws, {**OPERATIONS, "arrivals": {"from_records": True, "utc_offset_hours": 1},
                                            "handling": {"from_records": True}})
    loaded, base = load_scenario(path)
    summary = run_scenario(loaded, base).summary.to_dict()["operations"]
    # 40 documents, 37 minutes apart from 08:00 local, 600 minutes a day: days 4 and 5 of March
    minutes = [i * 37 for i in range(40)]
    hours = [8 + (m % 600) // 60 for m in minutes]
    assert summary["days"] == 3
    assert summary["arrivals_per_hour"] == [hours.count(h) / 3 for h in range(24)]
    point = summary["policies"][0]["points"][0]
    assert point["handle_seconds"] == pytest.approx(np.mean([30.0 + i % 7 for i in range(40)]))


@pytest.mark.parametrize(("drop", "operations", "message"), [
    ("received_at", {"arrivals": {"from_records": True}},
     "arrivals from_records needs received_at on every record; 40 of 40 have none (first: 'receipt-s2-000000')"),
    ("review_seconds", {"handling": {"from_records": True}},
     "handling from_records needs review_seconds in the records; none of the 40 has one"),
])
def test_from_records_without_the_field_is_one_line(tmp_path, capsys, drop, operations, message):
    raws = _records(40, times=drop != "received_at", seconds=drop != "review_seconds")
    path = _file_scenario(tmp_path, raws, {**OPERATIONS, **operations})
    status, out, err = run_cli(capsys, "run", str(path))
    assert (status, out, err) == (1, "", f"rpa-sim: error: scenario 'ops': operations: {message}\n")


@pytest.mark.parametrize(("change", "operations", "message"), [
    (lambda raws: raws[0].update(review_seconds=1e15), {"handling": {"from_records": True}},
     "handling from_records: review_seconds 1e+15 (record 'receipt-s2-000000') is more than the 86,400 of a day: a "
     "timer left running, not a review"),
    (lambda raws: raws[0].update(received_at="0001-01-01T00:00:00Z") or
     raws[1].update(received_at="9999-12-31T00:00:00Z"), {"arrivals": {"from_records": True}},
     "arrivals from_records: the records' received_at span 3,652,059 days (first 'receipt-s2-000000', last "
     "'receipt-s2-000001'), more than the 366 an operations simulation covers: give the records of one year at most"),
])
def test_from_records_is_bounded_as_days_are(tmp_path, capsys, change, operations, message):
    """Times that made run walk millions of days for minutes and gigabytes are one line, at once."""
    raws = _records(40)
    change(raws)
    path = _file_scenario(tmp_path, raws, {**OPERATIONS, **operations})
    status, out, err = run_cli(capsys, "run", str(path))
    assert (status, out, err) == (1, "", f"rpa-sim: error: scenario 'ops': operations: {message}\n")


@pytest.mark.parametrize(("change", "message"), [
    ({"arrivals": {"per_hour": -3}}, "operations.arrivals.per_hour: expected a number at least 0, got -3"),
    ({"reviewers": {"count": 0}}, "operations.reviewers.count: expected a number at least 1, got 0"),
    ({"reviewers": {"shifts": [{"start_hour": 8, "end_hour": 13, "reviewers": 2},
                               {"start_hour": 12, "end_hour": 17, "reviewers": 2}]}}, "overlap"),
    ({"arrivals": {"hourly": PROFILE, "from_records": True}},
     "exactly one of per_hour, hourly, weekly or from_records"),
    ({"handling": {"from_records": True, "per_item": {"kind": "deterministic", "mean_seconds": 3}}},
     "it takes no per_document or per_item"),
])
def test_bad_operations_are_one_line(tmp_path, capsys, change, message):
    (tmp_path / "s.yaml").write_text(json.dumps({**SCENARIO, "operations": {**OPERATIONS, **change}}))
    status, out, err = run_cli(capsys, "run", str(tmp_path / "s.yaml"))
    assert (status, out) == (1, "") and err.count("\n") == 1 and message in err, err
    assert err.startswith(f"rpa-sim: error: {tmp_path / 's.yaml'}: "), err


def test_operations_spec_rejects_times_seconds():
    with pytest.raises(ValueError, match="not times_seconds"):
        OperationsSpec.model_validate({**OPERATIONS, "arrivals": {"times_seconds": [1.0]}})


def test_run_prints_the_operations_table(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")  # the tables whole, as a wide terminal shows them
    status, out, err = run_cli(capsys, "run", "operations-day")
    assert status == 0, err
    table = out[out.index("Operations\n"):].splitlines()
    assert table[1].split() == ["policy", "point", "τ", "opened/day", "peak", "need", "staff", "cost/day", "SL",
                                "(team)", "p90", "h", "backlog", "end", "util", "quality"]
    assert [line.split()[0] for line in table[3:9]] == ["confidence", "confidence", "document-escalation",
                                                        "document-escalation", "per-field", "per-field"]
    # counts whole with separators, money with its currency (issue 21)
    escalation = table[6].split()
    assert (escalation[4], escalation[6], escalation[9]) == ("1,260", "2,268.00", "2,226")
    assert "operations: 1,300 arrivals a day" in out and "team costs 1,344.00 EUR a day" in out
    # two costs of one policy, told apart: the least cost for the data under no constraint, the decision's a day
    # the decision first (issue 29), then the comparison
    assert out.startswith("Decision: run document-escalation at τ = 0.6500.\n")
    comparison = out[out.index("\n\n") + 2:].splitlines()
    assert comparison[2].split()[:5] == ["policy", "AUC", "auto@0.95", "least", "cost"]
    assert comparison[5].split()[:4] == ["document-escalation", "0.9328", "0.4065", "3,994.91"]
    metric = next(index for index, line in enumerate(comparison) if line.startswith("metric: "))
    assert comparison[metric + 1:metric + 3] == [
        "least cost = each policy's cheapest τ swept, for the whole data (2,000 documents), under no constraint; "
        "saves vs all = against reviewing everything",
        "the decision above keeps to the scenario's constraints, its cost per day"]
    assert "  team: 4 people a shift, 2 shifts (07–13 h, 13–19 h)" in out
    assert "  cost: 4,230.88 EUR a day (staffing 1,344.00 + errors left 2,886.88)" in out


def test_staff_scenario(capsys):
    status, out, err = run_cli(capsys, "staff", "operations-day", "--json")
    operations = json.loads(out)
    assert status == 0 and [p["policy"] for p in operations["policies"]] == ["confidence", "document-escalation",
                                                                             "per-field"]
    status, text, err = run_cli(capsys, "staff", "operations-day")
    assert status == 0, err
    lines = text.splitlines()
    assert lines[1].split()[3:] == [f"{h:02d}" for h in range(6, 20)] + ["cost/day"]
    assert lines[3].split()[2:] == ["0"] + ["4"] * 12 + ["0", "1,344.00"]
    first = operations["policies"][0]["points"][0]
    assert lines[4].split()[-15:-1] == [str(n) for n in first["scheduled_needed_per_hour"][6:20]]


def test_staff_scenario_without_operations_is_one_line(capsys):
    status, out, err = run_cli(capsys, "staff", "receipts-demo")
    assert (status, out, err) == (1, "", "rpa-sim: error: staff: scenario receipts-demo has no operations: section "
                                         "(arrivals, reviewers, service level); see docs/operations.md\n")
    status, out, err = run_cli(capsys, "staff", "operations-day", "--reviewers", "3")
    assert (status, out) == (2, "") and err.startswith("rpa-sim: error: staff: --reviewers describes a queue")


def test_model_needs_handling_times():
    spec = OperationsSpec.model_validate({**OPERATIONS, "handling": {}})
    with pytest.raises(ValueError, match="operations needs handling times"):
        OperationModel(spec, documents=10)
    with pytest.raises(InputError):
        run_scenario(scenario(operations={**OPERATIONS, "handling": {}}, reviewer={}), base=None)


def test_report_has_the_operations_section_only_with_operations(result):
    from rpa_sim.report.page import render_report

    text = render_report(result)
    assert text == render_report(result)  # the same bytes
    section = text[text.index('<h2 id="operations">'):]
    for plot in ("operations-reviewers", "operations-staffing", "operations-backlog"):
        assert f'<figure id="plot-{plot}">' in section
    table = section[section.index('id="operations-staffing-table"'):section.index("</table>")]
    points = [(entry["policy"], point) for entry in result.summary.to_dict()["operations"]["policies"]
              for point in entry["points"]]
    assert table.count("<tr>") == 1 + len(points)  # the header, then a row per operating point
    first_policy, first = points[0]
    assert f"<td>{first_policy}</td>" in table and f"{first['staffing_cost_per_day']:.2f}" in table
    plain = render_report(run_scenario(scenario(operations=None), base=None))
    assert 'id="operations"' not in plain and "operations-" not in plain


@pytest.mark.parametrize("field", ["received_at", "review_seconds"])
@pytest.mark.parametrize("value", [None, 0, 12.5, -1, "12", True, "2024-03-04T09:15:00.250+05:30", "2024-03-04T09:15Z",
                                   "2024-03-04T09:15:00", "", [1], 1e400])
def test_fast_path_accepts_what_the_models_accept_with_the_same_values(field, value):
    raw = {"id": "q1", "answers": ["12"], "prediction": {"answer": "12", "confidence": 0.5}, field: value}
    text = json.dumps(raw).replace("Infinity", "1e400")
    try:
        model = VQARecord.model_validate_json(text)
    except ValueError:
        model = None
    fast = decode_fast("vqa", text)
    if fast is not None:  # the fast path may decline a valid record, never accept an invalid one
        assert model is not None and getattr(fast, field) == getattr(model, field)
    if model is not None and isinstance(value, (float, str)) and field == "received_at":
        assert model.received_at.tzinfo is not None
