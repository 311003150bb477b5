"""Bad input for a scenario's ``stream:`` section and ``replay --days``: one line each, nothing written."""

from __future__ import annotations

import pytest

from tests.conftest import run_cli
from tests.support_stream import SCENARIO

# the planted scenario, small: what is refused is refused before or as the stream is planned
SMALL = SCENARIO.replace("n: 150", "n: 30")

SECTION = [
    ("sources: {a: 0.5, b: 0.5}", "sources: {a: 0.5, b: 0.6}",
     "line 11: stream.sources: shares must add up to 1, got 1.1 (a 0.5, b 0.6)"),
    ("{document_type: x, source: a}, auto_error: 0.15", "{document_type: x, source: c}, auto_error: 0.15",
     "line 19: stream.changes[1]: segment: source 'c' is not among the stream's sources (a, b)"),
    ("sources: {a: 0.3, b: 0.7}", "sources: {a: 0.3, c: 0.7}",
     "line 18: stream.changes[0]: sources: 'c' not among the stream's sources (a, b); a value that appears later "
     "starts at share 0"),
    ("    - {kind: mix, from_day: 16, sources: {a: 0.3, b: 0.7}}",
     "    - {kind: mix, from_day: 16, sources: {a: 0.3, b: 0.7}}\n    - {kind: mix, from_day: 16, sources: {a: 1.0}}",
     "line 18: stream.changes: changes[1] is a second mix of sources on day 16"),
    ("confidence_shift: 1.5", "confidence_shift: 0",
     "line 22: stream.changes[3].confidence_shift: a model update moves the confidences: give a shift other than 0"),
    ("{kind: mix, from_day: 16", "{kind: mix, from_day: 0",
     "line 18: stream.changes[0].from_day: expected a number at least 1, got 0"),
    ("confidence_factor: 0.93", "confidence_factor: 1.2",
     "line 20: stream.changes[2].confidence_factor: expected a number less than 1, got 1.2"),
    ("segment: {document_type: y, source: a}", "segment: {channel: a}",
     "line 22: stream.changes[3].segment.channel: expected 'document_type' or 'source', got 'channel'"),
    ("segment: {document_type: y, source: a}", "segment: {document_type: z, source: a}",
     "line 22: stream.changes[3]: segment: document_type 'z' is not among the stream's document_types (x, y)"),
    ("  audit_rate: 1.0", "  audit_rate: 1.0\n  audit_plan: {strata: [{rate: 0.1}]}",
     "line 9: stream: give audit_rate or audit_plan, not both"),
    ("  threshold: 0.9\n", "", "line 9: stream: a stream's policy goes with its threshold"),
    ("  watch: {max_error: 0.05}\n", "",
     "line 1: stream.watch.max_error is needed: the scenario has no certify: max_error to take it from"),
    ("  days: 30\n", "  days: 30\n  start: '2024-02-30'\n",
     "line 10: stream.start: input should be a valid date or datetime, day value is outside expected range, got "
     "'2024-02-30'"),
    ("documents_per_day: 120", "documents_per_day: 0",
     "line 10: stream.documents_per_day: expected a number at least 1, got 0"),
    ("watch: {max_error: 0.05}", "watch: {max_error: 0.05, segments: [source, source]}",
     "line 16: stream.watch.segments: a column is named twice in ['source', 'source']"),
    # refused as the stream is planned, on the evaluated data
    ("  policy: confidence\n", "  policy: per-field\n",
     "line 13: stream.policy: 'per-field' is not one of the scenario's policies (confidence)"),
    ("policies: [confidence]", "policies: [audited-budget]",
     None),  # the budget's line depends on the policy: checked below
    ("auto_error: 0.15", "auto_error: 0.001", "line 19: stream.changes[1].auto_error: 0.001 is below the "),
]


@pytest.mark.parametrize(("old", "new", "message"), SECTION)
def test_a_bad_stream_section_is_one_line_naming_file_line_and_setting(tmp_path, capsys, old, new, message):
    assert old in SMALL
    text = SMALL.replace(old, new)
    if message is None:  # a budgeted policy: a day is a draw of the data, a budget caps the whole data's reviews
        text = text.replace("  policy: confidence\n", "  policy: audited-budget\n")
        message = "line 13: stream.policy: 'audited-budget' has a review budget, which caps the reviews of the whole "
    path = tmp_path / "s.yaml"
    path.write_text(text)
    status, out, err = run_cli(capsys, "replay", path, "--days", "3", "--out-dir", tmp_path / "logs")
    assert status == 1 and out == "" and err.startswith(f"rpa-sim: error: {path}: {message}"), err
    assert err.count("\n") == 1 and not (tmp_path / "logs").exists()


def test_a_size_out_of_range_is_bad_usage(tmp_path, capsys):
    path = tmp_path / "s.yaml"
    path.write_text(SMALL.replace("  days: 30\n", "  days: 1e9\n"))
    status, _, err = run_cli(capsys, "replay", path, "--days", "3", "--out-dir", tmp_path / "logs")
    assert status == 2 and err == (f"rpa-sim: error: {path}: line 9: stream.days: 1e9 days is more than the 100,000 "
                                   f"allowed (a fixed ceiling: every day draws its documents)\n")


@pytest.mark.parametrize(("argv", "message"), [
    (["--days", "3", "--policy", "confidence", "--out-dir", "logs"],
     "replay: --days replays a scenario's stream, whose stream: section says how: --policy goes with replay DATA"),
    (["--days", "3", "--out", "day.jsonl"],
     "replay: --days replays a scenario's stream, whose stream: section says how: --out goes with replay DATA"),
    (["--days", "3"], "replay: --days writes a log a day into a folder: give --out-dir DIR"),
    (["--days", "0", "--out-dir", "logs"], "replay: argument --days: 0 days is less than the least, 1"),
    (["--out-dir", "logs", "--policy", "confidence", "--threshold", "0.9", "--out", "d.jsonl"],
     "replay: --out-dir goes with --days (a scenario's stream, a log a day); one day of DATA is written to --out FILE"),
    (["--policy", "confidence"], "replay: the following arguments are required: --threshold, --out"),
])
def test_replay_days_options_are_checked_in_one_line(tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.yaml").write_text(SMALL)
    status, out, err = run_cli(capsys, "replay", "s.yaml", *argv)
    assert status == 2 and out == "" and err == f"rpa-sim: error: {message} (see 'rpa-sim replay --help')\n"
    assert not (tmp_path / "logs").exists()


def test_replay_days_needs_a_scenario_with_a_stream_and_an_empty_folder(tmp_path, capsys):
    status, _, err = run_cli(capsys, "replay", "receipts-demo", "--days", "3", "--out-dir", tmp_path / "a")
    assert status == 1 and err == ("rpa-sim: error: receipts-demo: scenario 'receipts-demo' has no stream: section: "
                                   "replay --days draws the days it describes (docs/live.md, \"Streams to study it "
                                   "on\")\n")
    data = tmp_path / "r.jsonl"
    data.write_text("")
    status, _, err = run_cli(capsys, "replay", data, "--days", "3", "--out-dir", tmp_path / "a")
    assert status == 2 and f"and {data} names data: give a scenario with a stream: section" in err
    (tmp_path / "s.yaml").write_text(SMALL)
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "2023-12-31.jsonl").write_text("{}\n")
    status, _, err = run_cli(capsys, "replay", tmp_path / "s.yaml", "--days", "3", "--out-dir", logs)
    assert status == 2 and "holds day logs this stream does not write (2023-12-31.jsonl)" in err
    assert sorted(path.name for path in logs.iterdir()) == ["2023-12-31.jsonl"]
