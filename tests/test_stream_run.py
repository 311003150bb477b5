"""``rpa-sim run`` on a scenario with a ``stream:`` section (issue 28, item 3): the stream watched, each change
reported with the day it happened and the day it was caught, and the summary that holds it (``live-drift``)."""

from __future__ import annotations

import contextlib
import io

import pytest

from rpa_sim.operate.live.result import ERROR_ABOVE_TARGET
from rpa_sim.study.result import StudySummary
from tests.conftest import run_cli
from tests.support_stream import SCENARIO


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """``rpa-sim run live-drift --out-dir``: what it prints, and its summary.json read back."""
    from rpa_sim.cli.entry import main

    out = tmp_path_factory.mktemp("live-drift")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["run", "live-drift", "--out-dir", str(out)]) == 0
    text = (out / "summary.json").read_text(encoding="utf-8")
    return printed.getvalue(), StudySummary.from_json(text), text


def test_run_reports_each_change_with_the_day_it_happened_and_the_day_it_was_caught(ran):
    printed, _, _ = ran
    stream = printed[printed.index("Stream: "):]
    assert stream.startswith("Stream: confidence at τ 0.98 for 75 days from 2024-01-01 (120 documents a day,\n"
                             "audit 0.25 of auto-accepted units), watched per document_type, source against a\n"
                             "max error of 0.05\n")
    flat = " ".join(stream.split())
    assert ("mix from day 15 (2024-01-15): source shares email 0.5, portal 0.3, scan 0.2 -> email 0.3, portal 0.3, "
            "scan 0.4 -> not an alarm, rightly: each watched segment is one source, whose error rate a mix leaves as "
            "it was") in flat
    assert ("new_template from day 25 (2024-01-25) on invoice / email: auto-accepted error rate 0.003 -> 0.120, "
            "11.7% of its right values turn wrong, its confidences stay -> caught on 2024-01-27 (its day 3) by "
            "calibration_contradicted on invoice / email") in flat
    assert ("degraded_scans from day 40 (2024-02-09) on scan: mean confidence 0.888 -> 0.879, review share 0.431 -> "
            "0.487, auto-accepted error rate 0.003 -> 0.100, 9.8% of its right values turn wrong -> caught on "
            "2024-02-10 (its day 2) by calibration_contradicted on receipt / scan") in flat
    assert ("model_update from day 50 (2024-02-19) on receipt / portal: mean confidence 0.888 -> 0.977, review share "
            "0.431 -> 0.190, auto-accepted error rate 0.003 -> 0.031, what it gets wrong stays -> caught on "
            "2024-02-23 (its day 5) by calibration_contradicted on receipt / portal") in flat
    assert "is at most 0.05; this holds for every day with no horizon" in flat
    assert "invoice / email  above target   0.117 [0.070, 0.137]  2024-01-27  review all" in stream
    assert max(len(line) for line in stream.splitlines()) <= 80


def test_the_summary_holds_the_stream_each_changes_delay_and_the_watch(ran):
    _, summary, text = ran
    assert summary.schema_version == 4 and summary.to_json() == text
    stream = summary.stream
    assert (stream.policy, stream.threshold) == (summary.decision.policy, summary.decision.threshold) == \
        ("confidence", 0.98)
    assert (stream.days, stream.documents_per_day, stream.start, stream.seed) == (75, 120, "2024-01-01", 0)
    changes = {change.planted.kind: change for change in stream.changes}
    assert [change.planted.kind for change in stream.changes] == ["mix", "new_template", "degraded_scans",
                                                                   "model_update"]
    assert changes["mix"].caught is None and changes["mix"].touched == 0 and changes["mix"].days_watched == 61
    caught = {kind: (change.caught.day, change.caught.kind, dict(change.caught.segment), change.caught.delay_days)
              for kind, change in changes.items() if change.caught is not None}
    assert caught == {
        "new_template": ("2024-01-27", "calibration_contradicted", {"document_type": "invoice", "source": "email"}, 3),
        "degraded_scans": ("2024-02-10", "calibration_contradicted", {"document_type": "receipt", "source": "scan"},
                           2),
        "model_update": ("2024-02-23", "calibration_contradicted", {"document_type": "receipt", "source": "portal"},
                         5)}
    template = changes["new_template"].planted
    assert template.after.auto_error == pytest.approx(0.12, abs=1e-12) and template.segment == {
        "document_type": "invoice", "source": "email"}
    assert changes["model_update"].planted.after.auto_error == pytest.approx(0.031, abs=5e-4)
    watch = stream.watch
    assert watch.segments_by == ("document_type", "source") and len(watch.days) == 75 and len(watch.segments) == 6
    # the error alarms follow the calibration's: on day 6 of the template, day 7 of the scans (docs/live.md)
    first_error = {}
    for alarm in watch.alarms:
        if alarm.kind == ERROR_ABOVE_TARGET:
            first_error.setdefault(alarm.segment, alarm.day)
    assert first_error[(("document_type", "invoice"), ("source", "email"))] == "2024-01-30"
    assert first_error[(("document_type", "receipt"), ("source", "scan"))] == "2024-02-15"
    # the model update stays under the target: its segment never raises the error alarm
    assert (("document_type", "receipt"), ("source", "portal")) not in first_error
    # nothing is raised on the segments no change touched
    untouched = {(("document_type", "invoice"), ("source", "portal")), (("document_type", "receipt"),
                                                                      ("source", "email"))}
    assert all(alarm.kind == "room_to_automate" for alarm in watch.alarms if alarm.segment in untouched)


def test_run_names_the_scenario_file_and_line_of_a_stream_setting_refused_once_the_data_is_read(tmp_path, capsys):
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO.replace("n: 150", "n: 30").replace("auto_error: 0.15", "auto_error: 0.001"))
    status, out, err = run_cli(capsys, "run", path)
    assert status == 1 and out == ""
    assert err.startswith(f"rpa-sim: error: {path}: line 19: stream.changes[1].auto_error: 0.001 is below the ")
    assert err.count("\n") == 1
