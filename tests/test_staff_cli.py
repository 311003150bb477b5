"""``rpa-sim staff`` (issue 12): the worked example through the command line, sizing, overload, Erlang A, the
simulation (same seed, same bytes) and one-line errors."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli

EXAMPLE = ["--arrivals-per-hour", 200, "--handle-seconds", 180, "--answer-within", 20]


def staff(capsys, *argv):
    return run_cli(capsys, "staff", *EXAMPLE, *argv)


def one_error(err):
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith("rpa-sim: error: staff: "), err
    return err.removeprefix("rpa-sim: error: staff: ").removesuffix("\n")


def test_the_worked_example_in_json(capsys):
    status, out, err = staff(capsys, "--reviewers", 14, "--json")
    figures = json.loads(out)
    assert (status, err) == (0, "")
    assert (figures["method"], figures["reviewers"], figures["p_abandon"], figures["stable"]) == ("erlang-c", 14, 0.0,
                                                                                                True)
    assert round(figures["p_wait"], 6) == 0.174132
    assert round(figures["service_level"], 6) == 0.888350
    assert round(figures["mean_wait_seconds"], 3) == 7.836
    assert round(figures["occupancy"], 4) == 0.7143


def test_80_percent_within_20_seconds_needs_14(capsys):
    status, out, _ = staff(capsys, "--service-level", 0.8, "--json")
    figures = json.loads(out)
    assert (status, figures["reviewers"], figures["target_service_level"]) == (0, 14, 0.8)
    assert figures["service_level"] >= 0.8
    assert round(json.loads(staff(capsys, "--reviewers", 13, "--json")[1])["service_level"], 4) == 0.7956


def test_the_table_and_csv(capsys):
    status, out, _ = staff(capsys, "--reviewers", 14)
    assert status == 0
    assert out.splitlines()[:5] == ["Erlang C (M/M/c)", "  reviewers                  14",
                                    "  offered_load          10.0000", "  p_wait                 0.1741",
                                    "  service_level          0.8884"]
    status, out, _ = staff(capsys, "--reviewers", 14, "--format", "csv")
    header, row = out.splitlines()
    assert dict(zip(header.split(","), row.split(",")))["reviewers"] == "14"


def test_overload_is_a_result_not_an_error(capsys):
    status, out, err = staff(capsys, "--reviewers", 9, "--json")
    figures = json.loads(out)
    assert (status, err) == (0, "")
    assert (figures["stable"], figures["p_wait"], figures["service_level"], figures["mean_wait_seconds"]) == \
        (False, 1.0, 0.0, None)
    assert figures["note"].startswith("overloaded: 10 erlangs of work need more than 9 reviewers")
    status, out, _ = staff(capsys, "--reviewers", 9)
    assert "  mean_wait_seconds         n/a" in out.splitlines()
    assert out.splitlines()[-1].startswith("overloaded: ")


def test_overload_simulated_shows_the_growing_backlog(capsys):
    status, out, _ = staff(capsys, "--reviewers", 9, "--simulate", "--hours", 72, "--json")
    figures = json.loads(out)
    backlog = figures["backlog_at_day_end"]
    assert status == 0 and figures["method"] == "simulation" and len(backlog) == 3
    assert backlog[0] < backlog[1] < backlog[2] == figures["backlog_at_end"]
    assert figures["note"].endswith(f"({' '.join(map(str, backlog))} tasks at the end of each day)")


def test_patience_gives_erlang_a(capsys):
    figures = json.loads(staff(capsys, "--reviewers", 14, "--patience", 120, "--json")[1])
    assert (figures["method"], figures["patience_seconds"]) == ("erlang-a", 120.0)
    assert 0 < figures["p_abandon"] < 0.05
    assert figures["service_level"] > 0.888350  # impatient tasks leave, the others wait less


def test_simulation_same_seed_same_bytes(capsys):
    first = staff(capsys, "--reviewers", 14, "--patience", 120, "--simulate", "--hours", 48, "--seed", 4, "--json")
    again = staff(capsys, "--reviewers", 14, "--patience", 120, "--simulate", "--hours", 48, "--seed", 4, "--json")
    assert first == again and first[0] == 0
    figures = json.loads(first[1])
    assert (figures["method"], figures["seed"], figures["hours"]) == ("simulation", 4, 48.0)
    assert 9000 < figures["tasks"] < 10_200
    for name in ("reviewers", "p_wait", "service_level", "mean_wait_seconds", "occupancy", "p_abandon"):
        assert name in figures
    other = staff(capsys, "--reviewers", 14, "--patience", 120, "--simulate", "--hours", 48, "--seed", 5, "--json")
    assert other[1] != first[1]


@pytest.mark.parametrize(("argv", "status", "message"), [
    (["--reviewers", 0], 2, "argument --reviewers: expected an integer >= 1, got '0' (see 'rpa-sim staff --help')"),
    (["--service-level", 1.2], 2,
     "argument --service-level: expected a number in (0, 1), got '1.2' (see 'rpa-sim staff --help')"),
    (["--reviewers", 3, "--service-level", 0.8], 2,
     "argument --service-level: not allowed with argument --reviewers (see 'rpa-sim staff --help')"),
    ([], 2, "one of the arguments --reviewers --service-level is required (see 'rpa-sim staff --help')"),
    (["--reviewers", 3, "--patience", "-5"], 2,
     "argument --patience: expected a number > 0, got '-5' (see 'rpa-sim staff --help')"),
    (["--reviewers", 3, "--hours", 5], 2, "--hours and --seed go with --simulate (see 'rpa-sim staff --help')"),
    (["--reviewers", 3, "--workers", 2], 2,
     "--workers evaluates a SCENARIO's records, and none is given (see 'rpa-sim staff --help')"),
    (["--reviewers", 3, "--simulate", "--hours", 100_000], 2,
     "argument --hours: 100000 hours is more than the 8,784 allowed (a year, as a scenario's operations: days) "
     "(see 'rpa-sim staff --help')"),
    (["--reviewers", 9, "--patience", 1e12], 1,
     "patience_seconds 1e+12 is so long for this load that the Erlang A chain needs more than 4,194,304 states; "
     "with patience that long, Erlang C (no patience) gives the figures"),
])
def test_bad_input_is_one_line(capsys, argv, status, message):
    got, out, err = staff(capsys, *argv)
    assert (got, out, one_error(err)) == (status, "", message)


def test_bad_rates_are_one_line(capsys):
    got, out, err = run_cli(capsys, "staff", "--arrivals-per-hour", "many", "--handle-seconds", 180,
                            "--answer-within", 20, "--reviewers", 3)
    assert (got, out, one_error(err)) == (2, "", "argument --arrivals-per-hour: expected a number > 0, got "
                                                 "'many' (see 'rpa-sim staff --help')")
    got, out, err = run_cli(capsys, "staff", "--arrivals-per-hour", 1e-300, "--handle-seconds", 1e-300,
                            "--answer-within", 20, "--reviewers", 3)
    assert (got, out) == (1, "")
    assert one_error(err).startswith("the offered load (arrivals_per_hour x handle_seconds / 3600) must be a finite "
                                     "number > 0, got 0.0")
