"""Every size from an option or a YAML file is range-checked before work starts (exit 2, one line)."""

from __future__ import annotations

import hashlib
import multiprocessing
import subprocess
import sys
import time

import pytest
from pydantic import ValidationError

# imported here, so that the time a refusal takes is the command's, not the first import of these modules
from rpa_sim.cli.parser import build_parser
from rpa_sim.common import limits
from rpa_sim.common.errors import UsageError
from rpa_sim.evaluate.outcomes import evaluate_kie
from rpa_sim.operate.monitoring.summary import MonitoringSpec
from rpa_sim.operate.queue.settings import Reviewers
from rpa_sim.operate.queue.spec import OperationsSpec
from rpa_sim.records.synthetic import generate_receipts
from rpa_sim.route.policies import load_policy
from rpa_sim.route.sweep import Sweeper
from rpa_sim.study.scenario import DataSpec, Scenario
from tests.conftest import run_cli, write_lines

RECORD = {"id": "r-1", "task": "kie", "ground_truth": {"entities": [{"key": "total.total_price", "value": "10"}]},
          "prediction": {"entities": [{"key": "total.total_price", "value": "10", "confidence": 0.9}]}}
FIXED = "a fixed ceiling"
GRID = ("a threshold grid has at most 1,000,000 points (a fixed ceiling; 'exact' has every distinct threshold), got "
        "{count} in '{spec}'")


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def refused(capsys, tmp_path, *argv):
    """Run ``rpa-sim ARGV``: it must fail at once with exit 2 and one line, writing nothing; that line."""
    before = {path: digest(path) for path in tmp_path.rglob("*") if path.is_file()}
    started = time.perf_counter()
    status, out, err = run_cli(capsys, *argv)
    elapsed = time.perf_counter() - started
    assert (status, out) == (2, ""), err
    assert err.startswith("rpa-sim: error: ") and err.endswith("\n") and err.count("\n") == 1, err
    assert elapsed < 2.0, f"took {elapsed:.2f} s: work was started"
    assert {path: digest(path) for path in tmp_path.rglob("*") if path.is_file()} == before
    assert multiprocessing.active_children() == []
    return err.removeprefix("rpa-sim: error: ").removesuffix("\n")


@pytest.fixture
def records(tmp_path):
    return write_lines(tmp_path / "data.jsonl", RECORD)


# --------------------------------------------------------------------------- options


@pytest.mark.parametrize(("argv", "message"), [
    (["generate", "receipts", "--n", "1e20"],
     "generate: argument --n: 1e20 records is more than the 100,000,000 allowed (a fixed ceiling for time)"),
    (["generate", "docvqa", "--n", "100000000000000000000"],
     "generate: argument --n: 100000000000000000000 records is more than the 100,000,000 allowed (a fixed ceiling "
     "for time)"),
    (["generate", "receipts", "--n", "inf"],
     "generate: argument --n: inf records is more than the 100,000,000 allowed (a fixed ceiling for time)"),
    (["generate", "receipts", "--n", "2.5"], "generate: argument --n: expected a whole number of records, got '2.5'"),
    (["generate", "receipts", "--n", "-1"], "generate: argument --n: -1 records is less than the least, 1"),
    (["sweep", "{data}", "--policy", "confidence", "--replicates", "1000000"],
     "sweep: argument --replicates: 1000000 replicates is more than the 100,000 allowed (a fixed ceiling: each "
     "replicate draws every item)"),
    (["plan-audit", "{data}", "--policy", "confidence", "--threshold", "0.5", "--budget", "3", "--bands", "1e9"],
     "plan-audit: argument --bands: 1e9 bands is more than the 1,000,000 allowed (a fixed ceiling)"),
    (["plan-audit", "{data}", "--policy", "confidence", "--threshold", "0.5", "--budget", "3", "--bands", "0"],
     "plan-audit: argument --bands: 0 bands is less than the least, 1"),
    (["staff", "--arrivals-per-hour", "5", "--handle-seconds", "60", "--answer-within", "60", "--reviewers", "3",
      "--simulate", "--hours", "1e9"],
     "staff: argument --hours: 1e9 hours is more than the 8,784 allowed (a year, as a scenario's operations: days)"),
])
def test_an_option_too_large_is_refused_at_once(capsys, tmp_path, records, argv, message):
    argv = [arg.format(data=records) for arg in argv] + (["--seed", 0, "--out", tmp_path / "out.jsonl"]
                                                         if argv[0] == "generate" else [])
    got = refused(capsys, tmp_path, *argv)
    assert got == f"{message} (see 'rpa-sim {argv[0]} --help')"
    assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize(("spec", "count"), [("linspace:0:1:50000000", "50,000,000"),
                                             ("linspace:0:1:1000001", "1,000,001")])
def test_a_grid_of_too_many_points_is_a_usage_error(capsys, tmp_path, records, spec, count):
    got = refused(capsys, tmp_path, "sweep", records, "--policy", "confidence", f"--thresholds={spec}")
    assert got == f"sweep: argument --thresholds: {GRID.format(count=count, spec=spec)} (see 'rpa-sim sweep --help')"


def test_a_simulation_of_too_many_tasks_is_refused(capsys, tmp_path):
    got = refused(capsys, tmp_path, "staff", "--arrivals-per-hour", 1000, "--handle-seconds", 60,
                  "--answer-within", 60, "--reviewers", 30, "--simulate", "--hours", 8000)
    assert got == ("staff: --simulate would draw about 8,000,000 tasks (--arrivals-per-hour x --hours), more than "
                   "5,000,000 (a fixed ceiling for time); shorten --hours")


def test_a_simulation_larger_than_the_memory_is_refused(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "available_memory", lambda: 1_000_000)
    got = refused(capsys, tmp_path, "staff", "--arrivals-per-hour", 100, "--handle-seconds", 60,
                  "--answer-within", 60, "--reviewers", 3, "--simulate", "--hours", 100)
    assert got == ("staff: --simulate's 10,000 tasks (--arrivals-per-hour x --hours) need about 2.56 MB of memory, "
                   "more than the 1 MB this machine has available (the least of MemAvailable, RLIMIT_AS/RLIMIT_DATA "
                   "and the cgroup's memory.max)")


def test_the_options_at_their_limits_are_accepted():
    parse = build_parser().parse_args
    assert parse(["generate", "receipts", "--n", "1e8", "--seed", "0", "--out", "x.jsonl"]).n == 100_000_000
    assert parse(["sweep", "d", "--policy", "p", "--replicates", "100000"]).replicates == 100_000
    assert parse(["plan-audit", "d", "--policy", "p", "--threshold", "0.5", "--budget", "1",
                  "--bands", "1000000"]).bands == 1_000_000
    assert parse(["staff", "--hours", "8784"]).hours == 8784.0


# --------------------------------------------------------------------------- YAML files


@pytest.mark.parametrize(("body", "line", "message"), [
    ("monitoring:\n  days: 3\n  width_days: 1e9\n", 7,
     "monitoring.width_days: 1e9 days is more than the 100,000 allowed (a fixed ceiling: each day replays every item)"),
    ("monitoring:\n  days: 100001\n", 6,
     "monitoring.days: 100001 days is more than the 100,000 allowed (a fixed ceiling: each day replays every item)"),
    ("monitoring: {days_shown: 1.0e+12}\n", 5,
     "monitoring.days_shown: 1000000000000.0 days is more than the 100,000 allowed (a fixed ceiling: each day "
     "replays every item)"),
    ("replicates: 1000000\n", 5,
     "replicates: 1000000 replicates is more than the 100,000 allowed (a fixed ceiling: each replicate draws every "
     "item)"),
    ("thresholds: linspace:0:1:2000000\n", 5,
     "thresholds: " + GRID.format(count="2,000,000", spec="linspace:0:1:2000000")),
    ("operations:\n  arrivals: {per_hour: 1e6}\n  reviewers: {count: 5}\n"
     "  service_level: {share: 0.9, within_hours: 4}\n  days: 366\n", 6,
     "operations.arrivals: 24,000,000 documents a day x 366 days = 8,784,000,000 tasks simulated, more than the "
     "5,000,000 allowed (a fixed ceiling for time)"),
    ("operations:\n  arrivals: {per_hour: 10}\n  reviewers: {shifts: [{start_hour: 8, end_hour: 9, reviewers: 1e7}]}\n"
     "  service_level: {share: 0.9, within_hours: 4}\n", 7,
     "operations.reviewers.shifts[0].reviewers: 1e7 reviewers is more than the 1,000,000 allowed (the Erlang "
     "recursion runs once per reviewer)"),
    ("operations:\n  arrivals: {per_hour: 10}\n  reviewers: {count: 5}\n"
     "  service_level: {share: 0.9, within_hours: 4}\n  days: 367\n", 9,
     "operations.days: 367 days is more than the 366 allowed (a year)"),
])
@pytest.mark.parametrize("command", ["run", "staff"])
def test_a_scenario_size_too_large_names_its_line(capsys, tmp_path, command, body, line, message):
    scenario = tmp_path / "s.yaml"
    scenario.write_text("name: s\ndata: {generate: receipts, n: 20}\npolicies: [confidence]\ntargets: [0.9]\n" + body)
    assert refused(capsys, tmp_path, command, scenario) == f"{scenario}: line {line}: {message}"


def test_generated_data_too_large_names_its_line(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "available_memory", lambda: 10**12)
    scenario = tmp_path / "s.yaml"
    scenario.write_text("name: s\ndata:\n  generate: receipts\n  n: 1e29\npolicies: [confidence]\n")
    assert refused(capsys, tmp_path, "run", scenario) == (
        f"{scenario}: line 4: data.n: 1e29 documents is more than the 62,500,000 allowed (what fits in the 1 TB of "
        f"memory this machine has available, about 16 kB each)")


def test_generator_settings_too_large_name_their_line(capsys, tmp_path):
    settings = tmp_path / "settings.yaml"
    settings.write_text("error_scale: 0.5\nmenu_items: [" + ", ".join(["1"] * 2000) + "]\n")
    got = refused(capsys, tmp_path, "generate", "receipts", "--n", 5, "--seed", 0, "--settings", settings,
                  "--out", tmp_path / "out.jsonl")
    assert got == (f"{settings}: line 2: menu_items: 2000 weights (menu items a receipt may have) is more than the "
                   f"1,000 allowed (a fixed ceiling on the size of a record)")


def test_sizes_at_their_limits_are_accepted(monkeypatch):
    monkeypatch.setattr(limits, "available_memory", lambda: 10**15)
    spec = MonitoringSpec.model_validate({"days": "1e5", "width_days": 100_000, "days_shown": 100_000})
    assert (spec.days, spec.width_days, spec.days_shown) == (100_000, 100_000, 100_000)
    assert Scenario.model_validate({"name": "s", "data": {"generate": "receipts", "n": 100_000_000},
                                    "policies": ["confidence"], "replicates": 100_000}).replicates == 100_000
    assert Reviewers.model_validate({"count": 1_000_000}).count == 1_000_000
    # 100,000 documents an hour for ten hours a day: 1,000,000 a day, 5,000,000 tasks in five days
    operations = {"arrivals": {"hourly": [100_000] * 10 + [0] * 14}, "reviewers": {"count": 5},
                  "service_level": {"share": 0.9, "within_hours": 4}, "days": 5}
    assert OperationsSpec.model_validate(operations).days == 5
    with pytest.raises(ValidationError, match="5,000,005 tasks simulated, more than the 5,000,000"):
        OperationsSpec.model_validate({**operations, "arrivals": {"hourly": [100_001] + [100_000] * 9 + [0] * 14}})
    assert OperationsSpec.model_validate({**operations, "days": 366, "arrivals": {"per_hour": 1}}).days == 366


def small_sweeper() -> Sweeper:
    return Sweeper(evaluate_kie(generate_receipts(5, seed=0)), load_policy("confidence"))


def test_monte_carlo_replays_are_bounded_by_their_draws_then_by_the_memory(monkeypatch):
    sweeper = small_sweeper()
    most = limits.MOST_REPLAYED_ITEMS // sweeper.n  # replicates x items at the ceiling
    # no memory at all: replicates within the ceiling of draws get as far as the memory's check
    monkeypatch.setattr(limits, "available_memory", lambda: 0)
    with pytest.raises(limits.SizeError, match=rf"^{most:,} replicates x 1 thresholds need about "):
        sweeper.replicate(most, seed=0, grid=[0.5])
    with pytest.raises(limits.SizeError, match=rf"^{most + 1:,} replicates x {sweeper.n:,} items = "
                                                rf"{(most + 1) * sweeper.n:,} item draws, more than the "
                                                r"1,000,000,000 allowed \(a fixed ceiling for time"):
        sweeper.replicate(most + 1, seed=0, grid=[0.5])


# --------------------------------------------------------------------------- the machine's memory


def test_the_bound_follows_the_memory_of_the_machine(capsys, tmp_path, monkeypatch):
    def data(n):
        return {"generate": "receipts", "n": n}

    monkeypatch.setattr(limits, "available_memory", lambda: 100 * limits.RUN_BYTES_PER_DOCUMENT)
    assert DataSpec.model_validate(data(100)).n == 100
    with pytest.raises(ValidationError, match=r"101 documents is more than the 100 allowed \(what fits in the 1.6 MB "
                                              r"of memory this machine has available, about 16 kB each\)"):
        DataSpec.model_validate(data(101))
    monkeypatch.setattr(limits, "available_memory", lambda: 1000 * limits.RUN_BYTES_PER_DOCUMENT)
    assert DataSpec.model_validate(data(1000)).n == 1000

    monkeypatch.setattr(limits, "available_memory", lambda: 2_000)
    got = refused(capsys, tmp_path, "generate", "receipts", "--n", 1001, "--seed", 0, "--out", tmp_path / "o.jsonl")
    assert got == ("generate: argument --n: 1001 records is more than the 1,000 allowed (what fits in the 2 kB of "
                   "memory this machine has available, about 2 bytes each) (see 'rpa-sim generate --help')")
    with pytest.raises(limits.SizeError, match=r"^10 replicates x 1,000 thresholds need about 1.6 MB of memory, "):
        small_sweeper().replicate(10, seed=0, grid="linspace:0:1:1000")


def test_available_memory_is_the_least_of_its_sources(monkeypatch):
    monkeypatch.setattr(limits, "system_memory", lambda: 8 * 10**9)
    monkeypatch.setattr(limits, "rlimit_memory", lambda: None)
    monkeypatch.setattr(limits, "cgroup_memory", lambda: 3 * 10**9)
    assert limits.available_memory() == 3 * 10**9
    monkeypatch.setattr(limits, "rlimit_memory", lambda: 10**9)
    assert limits.available_memory() == 10**9


def test_an_address_space_limit_lowers_the_memory_available():
    code = ("import resource\n"
            "resource.setrlimit(resource.RLIMIT_AS, (4 * 2**30, resource.getrlimit(resource.RLIMIT_AS)[1]))\n"
            "from rpa_sim.common.limits import available_memory\n"
            "print(available_memory())\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert 0 < int(done.stdout) < 4 * 2**30


@pytest.mark.parametrize(("membership", "files", "expected"), [
    ("0::/job\n", {"job/memory.max": "1000000\n", "job/memory.current": "250000\n"}, 750_000),
    ("0::/job\n", {"job/memory.max": "max\n", "memory.max": "max\n"}, None),
    ("0::/gone\n", {"memory.max": "500\n", "memory.current": "100\n"}, 400),
    ("4:memory:/job\n1:cpu:/\n", {"memory/job/memory.limit_in_bytes": "2000\n",
                                 "memory/job/memory.usage_in_bytes": "500\n"}, 1500),
    ("4:memory:/job\n", {"memory/job/memory.limit_in_bytes": "9223372036854771712\n"}, None),
])
def test_the_cgroup_limit_is_read(tmp_path, membership, files, expected):
    (tmp_path / "cgroup").write_text(membership)
    for name, text in files.items():
        (tmp_path / "fs" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "fs" / name).write_text(text)
    assert limits.cgroup_memory(tmp_path / "cgroup", tmp_path / "fs") == expected


def test_the_cli_raises_the_one_usage_error():
    import rpa_sim.cli.entry

    assert rpa_sim.cli.entry.UsageError is UsageError and issubclass(limits.SizeError, UsageError)
