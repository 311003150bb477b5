"""The command line as one product (issue 22): usage errors that name the command, one rule for --seed,
--workers and --scheduler wherever records are evaluated, certify --policy, and a sweep's table as a summary."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import re

import pytest

import rpa_sim.study.run
from rpa_sim.common.errors import InputError
from rpa_sim.common.workers import requested_workers, using_workers
from rpa_sim.evaluate.cluster import current_scheduler, using_scheduler
from tests.conftest import run_cli as run
from tests.conftest import write_lines


@pytest.fixture(scope="module")
def receipts(tmp_path_factory):
    """300 generated receipts: more than one batch of records, and an exact sweep of hundreds of rows."""
    from rpa_sim.cli.entry import main

    path = tmp_path_factory.mktemp("data") / "receipts.jsonl"
    assert main(["generate", "receipts", "--n", "300", "--seed", "3", "--workers", "1", "--out", str(path)]) == 0
    return path


OPERATIONS = ("operations: {arrivals: {hourly: [" + ", ".join(["10"] * 24) + "]}, "
              "handling: {per_item: {kind: exponential, mean_seconds: 8}}, reviewers: {count: 2}, "
              "service_level: {share: 0.9, within_hours: 4}}\n")


def write_scenario(path, receipts, *, scheduler: str | None = None, operations: bool = False):
    """A scenario on the receipts' file, with its own scheduler and operations when asked."""
    data = f"{{file: {receipts}" + ("" if scheduler is None else f", scheduler: '{scheduler}'") + "}"
    path.write_text(f"name: s\ndata: {data}\npolicies: [confidence]\n" + (OPERATIONS if operations else ""))
    return path


@pytest.fixture
def scenario(tmp_path, receipts):
    return write_scenario(tmp_path / "s.yaml", receipts)


def error_line(err: str) -> str:
    assert err.endswith("\n") and err.count("\n") == 1, err
    return err.removeprefix("rpa-sim: error: ").removesuffix("\n")


# --------------------------------------------------------------------------- usage errors name the command


@pytest.mark.parametrize(("argv", "message"), [
    (["sweep", "d.jsonl", "--policy", "confidence", "--bogus"],
     "sweep: unrecognized arguments: --bogus (see 'rpa-sim sweep --help')"),
    (["score", "d.jsonl", "extra.jsonl"], "score: unrecognized arguments: extra.jsonl (see 'rpa-sim score --help')"),
    (["import", "cord", "src", "--out", "o.jsonl", "--bogus", "1"],
     "import cord: unrecognized arguments: --bogus 1 (see 'rpa-sim import cord --help')"),
    (["--bogus", "score", "d.jsonl"], "unrecognized arguments: --bogus (see 'rpa-sim --help')"),
    (["run", "s.yaml", "--workers", "many"],
     "run: argument --workers: expected an integer >= 1, got 'many' (see 'rpa-sim run --help')"),
    (["report", "s.yaml", "--out", "r.html", "--scheduler", "udp://h:1"],
     "report: argument --scheduler: a scheduler is tcp://HOST:PORT, local or local:N, got 'udp://h:1' "
     "(see 'rpa-sim report --help')"),
])
def test_usage_errors_name_the_command_and_its_help(capsys, argv, message):
    status, out, err = run(capsys, *argv)
    assert (status, out, error_line(err)) == (2, "", message)


@pytest.mark.parametrize("argv", [
    ["generate", "receipts", "--n", "3", "--out", "o.jsonl"],
    ["sweep", "d.jsonl", "--policy", "confidence"],
    ["certify", "d.jsonl", "--max-error", "0.1", "--delta", "0.1"],
    ["replay", "d.jsonl", "--policy", "confidence", "--threshold", "0.5", "--out", "o.jsonl"],
    ["staff", "--arrivals-per-hour", "10", "--handle-seconds", "60", "--answer-within", "20", "--reviewers", "1",
     "--simulate"],
])
def test_a_bad_seed_is_bad_usage_everywhere(capsys, argv):
    status, _, err = run(capsys, *argv, "--seed", "-1")
    assert (status, error_line(err)) == (2, f"{argv[0]}: argument --seed: expected an integer >= 0, got '-1' "
                                            f"(see 'rpa-sim {argv[0]} --help')")


def test_a_bad_option_value_is_usage_and_a_bad_file_is_input(capsys, tmp_path, receipts):
    status, _, err = run(capsys, "sweep", receipts, "--policy", "confidence", "--thresholds", "abc")
    assert status == 2 and error_line(err).startswith("sweep: argument --thresholds: ")
    status, _, err = run(capsys, "sweep", tmp_path / "absent.jsonl", "--policy", "confidence")
    assert (status, error_line(err)) == (1, f"{tmp_path / 'absent.jsonl'}: no such file")


# --------------------------------------------------------------------------- --seed: 0 unless given


@pytest.mark.parametrize("argv", [
    ["sweep", "{data}", "--policy", "audited-budget", "--replicates", "3", "--format", "csv"],
    ["certify", "{data}", "--max-error", "0.2", "--delta", "0.1", "--json"],
    ["staff", "--arrivals-per-hour", "100", "--handle-seconds", "60", "--answer-within", "20", "--reviewers", "2",
     "--simulate", "--hours", "5", "--json"],
])
def test_the_seed_is_0_unless_given(capsys, receipts, argv):
    argv = [arg.format(data=receipts) for arg in argv]
    default, zero, one = (run(capsys, *argv, *seed) for seed in ([], ["--seed", "0"], ["--seed", "1"]))
    assert default == zero and default[0] == 0 and default[1] != one[1]


def test_generate_seeds_0_unless_given(capsys, tmp_path):
    for name, seed in (("default.jsonl", []), ("zero.jsonl", ["--seed", "0"])):
        assert run(capsys, "generate", "docvqa", "--n", "20", *seed, "--out", tmp_path / name)[0] == 0
    assert (tmp_path / "default.jsonl").read_bytes() == (tmp_path / "zero.jsonl").read_bytes()


# --------------------------------------------------------------------------- --workers and --scheduler


def _seen_by_the_study(monkeypatch):
    """run_scenario replaced by one that stops with the workers and scheduler the evaluation would get."""
    def stop(scenario, base):
        raise InputError(f"workers {requested_workers()}, scheduler {current_scheduler()}")

    monkeypatch.setattr(rpa_sim.study.run, "run_scenario", stop)


@pytest.mark.parametrize("command", [["run"], ["report", "--out", "r.html"], ["staff"]])
def test_a_scenario_is_evaluated_with_the_workers_and_scheduler_given(capsys, monkeypatch, tmp_path, receipts,
                                                                      command):
    _seen_by_the_study(monkeypatch)
    name, *rest = command
    scenario = write_scenario(tmp_path / "s.yaml", receipts, operations=name == "staff")
    assert run(capsys, name, scenario, *rest, "--workers", "2", "--scheduler", "local:3") == (
        1, "", "rpa-sim: error: workers 2, scheduler local:3\n")
    assert run(capsys, name, scenario, *rest) == (1, "", "rpa-sim: error: workers None, scheduler None\n")
    # the scenario's own scheduler, unless --scheduler replaces it
    write_scenario(scenario, receipts, scheduler="local:1", operations=name == "staff")
    assert run(capsys, name, scenario, *rest)[2] == "rpa-sim: error: workers None, scheduler local:1\n"
    assert run(capsys, name, scenario, *rest, "--scheduler", "local:2")[2] == ("rpa-sim: error: workers None, "
                                                                               "scheduler local:2\n")


def test_a_scheduler_for_generated_records_is_bad_usage(capsys):
    status, _, err = run(capsys, "run", "receipts-demo", "--scheduler", "local:2")
    assert (status, error_line(err)) == (2, "--scheduler evaluates a scenario's data: file: on Dask, and scenario "
                                            "'receipts-demo' generates its records")


def test_a_scheduler_for_a_dashboard_of_generated_records_is_bad_usage(capsys, monkeypatch, receipts):
    import rpa_sim.cli.scenarios
    import rpa_sim.tui

    started = []
    monkeypatch.setattr(rpa_sim.cli.scenarios, "interactive", lambda: True)
    monkeypatch.setattr(rpa_sim.tui, "run_dashboard", lambda source, **options: started.append(source) or 0)
    status, _, err = run(capsys, "dashboard", "receipts-demo", "--scheduler", "local:2")
    assert (status, error_line(err)) == (2, "--scheduler evaluates a scenario's data: file: on Dask, and scenario "
                                            "'receipts-demo' generates its records")
    assert run(capsys, "dashboard", "--scheduler", "local:2")[0] == 2  # receipts-demo, the default source
    # a records file is evaluated on the scheduler, and a scenario without --scheduler opens as it says
    assert run(capsys, "dashboard", str(receipts), "--scheduler", "local:2")[0] == 0
    assert run(capsys, "dashboard", "receipts-demo")[0] == 0
    assert started == [str(receipts), "receipts-demo"]


def test_the_workers_change_no_result_of_a_run(capsys, scenario):
    outputs = {run(capsys, "run", scenario, "--json", "--workers", workers)[1] for workers in ("1", "2")}
    assert len(outputs) == 1 and json.loads(outputs.pop())["scenario"] == "s"


def test_the_dashboard_loads_with_the_workers_and_scheduler_of_its_command(monkeypatch, receipts):
    from rpa_sim.tui.app import DashboardApp

    seen = []

    def stop(scenario, base, source, **options):
        seen.append((requested_workers(), current_scheduler()))
        raise InputError("stopped")

    monkeypatch.setattr(rpa_sim.study.run, "evaluate_scenario_data", stop)

    async def load() -> str | None:
        app = DashboardApp(str(receipts))
        async with app.run_test() as pilot:
            for _ in range(400):  # the loader runs on a thread of its own
                if app.error is not None:
                    break
                await pilot.pause(0.05)
            return app.error

    with using_workers(3), using_scheduler("local:2"):
        error = asyncio.run(load())
    assert seen == [(3, "local:2")] and error is not None and "stopped" in error


# --------------------------------------------------------------------------- certify --policy


def _documents(count: int) -> list[dict]:
    """``count`` receipts of five values: four right at confidence 0.99, one wrong at 0.1."""
    truth = [{"key": f"k{i}", "value": "v"} for i in range(5)]
    predicted = [{"key": f"k{i}", "value": "v", "confidence": 0.99} for i in range(4)]
    return [{"id": f"r{n}", "ground_truth": {"entities": truth},
             "prediction": {"entities": [*predicted, {"key": "k4", "value": "w", "confidence": 0.1}]}}
            for n in range(count)]


def test_certify_a_policy_leaves_out_what_it_rejects(capsys, tmp_path):
    data = write_lines(tmp_path / "d.jsonl", *_documents(10))
    settings = ["--max-error", "0.1", "--delta", "0.1", "--calibration-fraction", "1", "--json"]
    status, out, _ = run(capsys, "certify", data, *settings)
    plain = json.loads(out)
    # the 40 right values pass at 0.99 (p = 0.9^40); the next threshold adds the 10 wrong ones and fails
    assert (status, plain["threshold"], plain["calibration_n"], plain["accepted_n"]) == (0, 0.99, 50, 40)
    assert plain["p_value"] == pytest.approx(0.9 ** 40)
    status, out, _ = run(capsys, "certify", data, "--policy", "confidence", *settings)
    assert status == 0 and json.loads(out) == {"policy": "confidence", **plain}
    # reject-band rejects the values below 0.2: they leave the flow, and the guarantee is on the other 40
    status, out, _ = run(capsys, "certify", data, "--policy", "reject-band", *settings)
    rejecting = json.loads(out)
    assert (status, rejecting["policy"], rejecting["threshold"]) == (0, "reject-band", 0.99)
    assert (rejecting["calibration_n"], rejecting["accepted_n"], rejecting["accepted_errors"]) == (40, 40, 0)
    status, out, _ = run(capsys, "certify", data, "--policy", "reject-band", *settings[:-1])
    assert status == 0 and out.startswith("policy reject-band: Auto-accept iff confidence >= 0.99. Guaranteed: ")


def test_certify_a_policy_refuses_what_cannot_be_certified(capsys, tmp_path):
    data = write_lines(tmp_path / "d.jsonl", *_documents(3))
    certify = ["certify", data, "--max-error", "0.1", "--delta", "0.1"]
    status, _, err = run(capsys, *certify, "--policy", "confidence", "--by", "field")
    assert (status, error_line(err)) == (2, "certify: --by goes without --policy (a policy is certified on the "
                                            "whole data) (see 'rpa-sim certify --help')")
    status, _, err = run(capsys, *certify, "--policy", "audited-budget")
    assert (status, error_line(err)) == (1, "certify: policy 'audited-budget' has a review budget, which can let "
                                            "values through unreviewed whatever the threshold: no threshold of it "
                                            "can be certified")


# --------------------------------------------------------------------------- a sweep's table is a summary


def _nearest_rows(auto_rates: list[float]) -> list[int]:
    """The rows a summary shows, worked out here: the ends, and the first row nearest each 5% of auto-rate."""
    chosen = {0, len(auto_rates) - 1}
    for step in range(21):
        distances = [abs(rate - step / 20) for rate in auto_rates]
        chosen.add(distances.index(min(distances)))
    return sorted(chosen)


def test_a_sweep_table_shows_a_summary_of_each_curve(capsys, tmp_path, receipts):
    sweep = ["sweep", receipts, "--policy", "confidence", "--policy", "document-escalation"]
    status, out, _ = run(capsys, *sweep, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    status, table, err = run(capsys, *sweep)
    assert (status, err) == (0, "")
    lines = table.splitlines()
    expected = []
    for policy in ("confidence", "document-escalation"):
        curve = [row for row in rows if row["policy"] == policy]
        assert len(curve) > 100
        expected += [(policy, f"{float(curve[index]['auto_rate']):.4f}", f"{float(curve[index]['threshold']):.4f}")
                     for index in _nearest_rows([float(row["auto_rate"]) for row in curve])]
    shown = [tuple(re.split(" {2,}", line.strip())[:3]) for line in lines[1:-1]]
    assert [(policy, rate) for policy, _, rate in shown] == [(policy, rate) for policy, rate, _ in expected]
    # the thresholds as every table shows them; the last row of a curve reviews everything: '>x (all)'
    assert [threshold for _, threshold, _ in shown if not threshold.startswith(">")] == [
        threshold for (_, _, threshold), (_, shown_threshold, _) in zip(expected, shown)
        if not shown_threshold.startswith(">")]
    assert lines[-1] == (f"{len(shown)} of {len(rows):,} rows, spread evenly over the auto-rate; every row: "
                         f"--all-rows, --format csv or --format json")
    assert len(shown) <= 2 * 21


def test_every_row_when_asked_and_in_csv_and_json(capsys, tmp_path, receipts):
    sweep = ["sweep", receipts, "--policy", "confidence"]
    _, out, _ = run(capsys, *sweep, "--format", "csv")
    total = len(out.splitlines()) - 1
    _, out, _ = run(capsys, *sweep, "--json")
    assert len(json.loads(out)) == total
    status, table, _ = run(capsys, *sweep, "--all-rows")
    assert status == 0 and len(table.splitlines()) == 1 + total
    status, _, err = run(capsys, *sweep, "--out", tmp_path / "sweep.txt")
    assert (status, err) == (0, f"wrote {tmp_path / 'sweep.txt'}\n")
    assert (tmp_path / "sweep.txt").read_text().splitlines()[-1].endswith("--format csv or --format json")


def test_a_short_curve_is_shown_whole(capsys, receipts):
    status, table, _ = run(capsys, "sweep", receipts, "--policy", "confidence", "--thresholds", "linspace:0:1:21")
    assert status == 0 and len(table.splitlines()) == 22 and "rows, spread evenly" not in table
