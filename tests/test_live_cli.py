"""``rpa-sim watch`` (issue 28) through the command line: its outputs, the state file, and bad input."""

from __future__ import annotations

import gzip
import json

import pytest

from tests.conftest import run_cli, write_lines
from tests.support_live import day_name, write_stream

DAYS, CHANGE = 40, 20


@pytest.fixture(scope="module")
def stream(tmp_path_factory):
    """Forty days, two segments; from day 20 the invoices' errors are six times as frequent, confidences the same."""
    folder = tmp_path_factory.mktemp("logs")
    write_stream(folder, days=DAYS, rows=300, change=("invoice", CHANGE, 6.0), seed=1, per_day_files=True)
    return folder


@pytest.fixture(scope="module")
def one_pass(stream, tmp_path_factory):
    """``watch --json`` and the table over every day at once."""
    from rpa_sim.cli.entry import main

    out = tmp_path_factory.mktemp("out")
    assert main(["watch", str(stream), "--max-error", "0.05", "--json", "--out", str(out / "all.json")]) == 0
    assert main(["watch", str(stream), "--max-error", "0.05", "--out", str(out / "all.txt")]) == 0
    return json.loads((out / "all.json").read_text()), (out / "all.txt").read_text()


def test_the_json_has_the_keys_of_the_issue_and_the_change_is_caught(one_pass):
    payload, _ = one_pass
    assert list(payload) == ["max_error", "delta", "segments_by", "horizon_days", "days", "guarantee", "segments",
                             "alarms"]
    assert payload["segments_by"] == ["document_type"] and len(payload["days"]) == DAYS
    assert "at most 0.05" in payload["guarantee"] and "no horizon" in payload["guarantee"]
    segments = {s["segment"]["document_type"]: s for s in payload["segments"]}
    assert list(segments) == ["invoice", "receipt"]
    for segment in segments.values():
        assert list(segment) == ["segment", "first_alarm", "status", "calibration", "never_audited", "proposal",
                                 "days"]
        assert [day["day"] for day in segment["days"]] == payload["days"]
        assert list(segment["days"][0]) == ["day", "auto_accepted", "audited", "errors_found", "estimate", "low",
                                            "high", "label_free", "alarm"]
    invoice = segments["invoice"]
    assert invoice["first_alarm"] is not None and invoice["first_alarm"] >= day_name(CHANGE)
    assert invoice["status"] == "above target" and invoice["calibration"] == "contradicted"
    assert invoice["proposal"]["reason"] and segments["receipt"]["status"] == "within target"
    assert segments["receipt"]["first_alarm"] is None
    alarms = payload["alarms"]
    assert [alarm["day"] for alarm in alarms] == sorted(alarm["day"] for alarm in alarms)
    error = next(alarm for alarm in alarms if alarm["kind"] == "error_above_target")
    assert error["segment"] == {"document_type": "invoice"} and error["since"] <= error["day"]
    assert error["low"] >= 0.05 and error["proposal"]["reason"]
    # a confidently wrong template does not hide behind its confidences: the calibration is contradicted
    assert any(alarm["kind"] == "calibration_contradicted" and alarm["segment"]["document_type"] == "invoice"
               for alarm in alarms)
    for day in invoice["days"]:
        assert day["low"] <= (day["estimate"] if day["estimate"] is not None else 1) <= (day["high"] or 1)


def test_the_table_reads_at_80_columns(one_pass):
    _, text = one_pass
    assert max(map(len, text.splitlines())) <= 80
    assert "invoice" in text and "above target" in text and "error above target" in text
    assert "assumes calibration" in text and "at most 0.05" in text


def test_a_state_kept_day_by_day_gives_the_one_pass_output_byte_for_byte(stream, one_pass, tmp_path, capsys):
    state, out = tmp_path / "state.json", tmp_path / "daily.json"
    files = sorted(stream.iterdir())
    for file in files[:-1]:
        status, _, err = run_cli(capsys, "watch", file, "--max-error", "0.05", "--state", state, "--json", "--out", out)
        assert status == 0, err
    before_last = tmp_path / "before_last.json"
    before_last.write_bytes(state.read_bytes())
    assert run_cli(capsys, "watch", files[-1], "--max-error", "0.05", "--state", state, "--json", "--out", out)[0] == 0
    assert json.loads(out.read_text()) == one_pass[0]
    status, table, _ = run_cli(capsys, "watch", files[-1], "--max-error", "0.05", "--state", before_last)
    assert status == 0 and table == one_pass[1]


def test_a_state_is_refused_for_other_settings_truncated_or_another_version(stream, tmp_path, capsys):
    files = sorted(stream.iterdir())
    state = tmp_path / "state.json"
    assert run_cli(capsys, "watch", files[0], "--max-error", "0.05", "--state", state)[0] == 0
    written = state.read_bytes()
    status, out, err = run_cli(capsys, "watch", files[1], "--max-error", "0.03", "--state", state)
    assert status == 1 and out == "" and err.count("\n") == 1
    assert "written for --max-error 0.05, and this run has 0.03" in err
    assert state.read_bytes() == written
    status, _, err = run_cli(capsys, "watch", files[1], "--max-error", "0.05", "--segments", "key", "--state", state)
    assert status == 1 and "--segments document_type, and this run has key" in err
    state.write_bytes(written[: len(written) // 2])
    status, _, err = run_cli(capsys, "watch", files[1], "--max-error", "0.05", "--state", state)
    assert status == 1 and "not a watch state, or cut short" in err and err.count("\n") == 1
    state.write_bytes(written.replace(b'"version":1', b'"version":7', 1))
    status, _, err = run_cli(capsys, "watch", files[1], "--max-error", "0.05", "--state", state)
    assert status == 1 and "version 7" in err
    state.write_bytes(written.replace(b'"first":1', b'"first":2', 1))
    status, _, err = run_cli(capsys, "watch", files[1], "--max-error", "0.05", "--state", state)
    assert status == 1 and "does not match its checksum" in err
    state.write_bytes(written)
    status, _, err = run_cli(capsys, "watch", files[0], "--max-error", "0.05", "--state", state)
    assert status == 1 and "was read already" in err


def _row(day="2024-01-01", **extra):
    return {"day": day, "document_type": "a", "confidence": 0.95, "route": "audit", "inclusion_probability": 0.5,
            "correct": True, **extra}


@pytest.mark.parametrize("rows, message", [
    ([_row("2024-01-02"), _row("2024-01-01")],
     "log.jsonl: line 2: day: 2024-01-01 comes after 2024-01-02 (line 1): a file's rows must be in day order"),
    ([_row(), _row(document_type=3)], "log.jsonl: line 2: document_type: expected a string, got 3"),
    ([_row("2024-02-30")], 'log.jsonl: line 1: day: expected a date YYYY-MM-DD, got "2024-02-30" (day is out of '
                           'range for month)'),
    ([_row("yesterday")], 'log.jsonl: line 1: day: expected a date YYYY-MM-DD, got "yesterday"'),
    ([{k: v for k, v in _row().items() if k != "day"}],
     "log.jsonl: line 1: day: missing: watch needs the day of every row (a day, or a received_at)"),
    ([_row(), _row(route="auto", correct=False)], "log.jsonl: line 2: correct: an auto row was checked by nobody"),
    ([_row(stratum="x"), _row(stratum="x", inclusion_probability=0.2)],
     "log.jsonl: line 2: stratum: stratum 'x' has inclusion probability 0.5 on line 1 and 0.2 here"),
    (["{\"day\": \"2024-01-01\", \"route\": "], "log.jsonl: line 1: invalid JSON"),
])
def test_bad_rows_are_refused_in_one_line_and_nothing_is_written(tmp_path, capsys, rows, message):
    log = write_lines(tmp_path / "log.jsonl", *rows)
    out, state = tmp_path / "out.json", tmp_path / "state.json"
    status, printed, err = run_cli(capsys, "watch", log, "--max-error", "0.05", "--out", out, "--state", state)
    assert status == 1 and printed == "" and err.count("\n") == 1
    assert message in err, err
    assert not out.exists() and not state.exists()


def test_received_at_gives_its_own_date_and_a_day_wins_over_it(tmp_path, capsys):
    rows = [{**_row(), "day": None, "received_at": "2024-03-01T23:30:00-05:00"},
            {**_row(), "day": None, "received_at": "2024-03-02T00:10:00Z"},
            {**_row("2024-03-03"), "received_at": "2024-01-01T00:00:00Z"}]
    log = write_lines(tmp_path / "log.jsonl", *rows)
    status, out, _ = run_cli(capsys, "watch", log, "--max-error", "0.05", "--json")
    assert status == 0 and json.loads(out)["days"] == ["2024-03-01", "2024-03-02", "2024-03-03"]


def test_files_are_read_by_first_day_and_a_day_in_two_files_is_merged(tmp_path, capsys):
    folder = tmp_path / "logs"
    folder.mkdir()
    write_lines(folder / "a.jsonl", _row("2024-01-02"), _row("2024-01-03"))
    write_lines(folder / "b.jsonl", _row("2024-01-01"), _row("2024-01-02", correct=False))
    with gzip.open(folder / "c.jsonl.gz", "wt") as handle:
        handle.write(json.dumps(_row("2024-01-02", document_type="b")) + "\n")
    (folder / "notes.txt").write_text("not a log")
    status, out, _ = run_cli(capsys, "watch", folder, "--max-error", "0.05", "--json")
    payload = json.loads(out)
    assert status == 0 and payload["days"] == ["2024-01-01", "2024-01-02", "2024-01-03"]
    day_two = {s["segment"]["document_type"]: s["days"][1] for s in payload["segments"] if len(s["days"]) == 3}
    assert day_two["a"]["audited"] == 2 and day_two["a"]["errors_found"] == 1
    glob = run_cli(capsys, "watch", str(folder / "*.jsonl*"), "--max-error", "0.05", "--json")
    assert json.loads(glob[1]) == payload


def test_segments_by_several_columns_and_csv(tmp_path, capsys):
    log = write_lines(tmp_path / "log.jsonl", _row(source="mail", key="total"), _row(source=None, key="date"),
                      _row("2024-01-02", source="mail", key="total"))
    status, out, _ = run_cli(capsys, "watch", log, "--max-error", "0.05", "--segments", "source,key",
                             "--format", "csv")
    lines = out.splitlines()
    assert status == 0 and lines[0] == ("source,key,day,auto_accepted,audited,errors_found,estimate,low,high,"
                                        "label_free,alarm")
    # a segment has a row for every day from its first: (none)/date on both days, then mail/total
    assert [line.split(",")[:3] for line in lines[1:]] == [["", "date", "2024-01-01"], ["", "date", "2024-01-02"],
                                                           ["mail", "total", "2024-01-01"],
                                                           ["mail", "total", "2024-01-02"]]
    assert lines[2].split(",")[3:6] == ["0", "0", "0"]


def test_with_a_scenario_a_proposal_says_the_reviewers_it_takes(tmp_path, capsys):
    log = write_stream(tmp_path / "log.jsonl", days=22, rows=1000, change=("invoice", 15, 5.0), seed=3)[0]
    state = tmp_path / "state.json"
    status, out, err = run_cli(capsys, "watch", log, "--max-error", "0.05", "--scenario", "operations-day", "--json",
                               "--state", state)
    assert status == 0, err
    error = next(alarm for alarm in json.loads(out)["alarms"] if alarm["kind"] == "error_above_target")
    proposal = error["proposal"]
    assert proposal["threshold"] is not None and proposal["change_in_reviews_per_day"] > 0
    assert 0 < proposal["reviewers_now"] <= proposal["reviewers_needed"]
    more = write_stream(tmp_path / "more.jsonl", days=1, rows=10, seed=4, first_day=22)[0]
    status, _, err = run_cli(capsys, "watch", more, "--max-error", "0.05", "--state", state)
    assert status == 1 and "--scenario's operations" in err
    status, _, err = run_cli(capsys, "watch", log, "--max-error", "0.05", "--scenario", "receipts-demo")
    assert status == 1 and "has no operations: section" in err
