"""export-policy --from: the decision read from summary.json is validated as the options are, and what it says
reaches the terminal escaped."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from rpa_sim.records.readers import read_records, write_records
from tests.conftest import run_cli

DATA = Path(__file__).parent / "data" / "label_studio" / "receipts_ocr.json"


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """A study of the two Label Studio tasks with both sides: its folder, its scenario and its summary."""
    folder = tmp_path_factory.mktemp("study")
    from rpa_sim.cli.entry import main

    assert main(["import", "label-studio", str(DATA), "--out", str(folder / "all.jsonl")]) == 0
    write_records(iter(list(read_records(folder / "all.jsonl", skip_invalid=True))), folder / "both.jsonl")
    (folder / "study.yaml").write_text("name: round-trip\ndata: {file: both.jsonl}\npolicies: [confidence]\n"
                                       "targets: [0.7]\n")
    assert main(["run", str(folder / "study.yaml"), "--out-dir", str(folder / "out")]) == 0
    summary = json.loads((folder / "out" / "summary.json").read_text())
    assert (summary["decision"]["policy"], summary["decision"]["threshold"]) == ("confidence", 0.87)
    return folder, summary


def _tampered(folder: Path, summary: dict, name: str, **decision) -> Path:
    path = folder / name
    path.write_text(json.dumps({**summary, "decision": {**summary["decision"], **decision}}))
    return path


@pytest.mark.parametrize("threshold", [-0.5, -math.inf, math.inf, 2.0, -1e-300])
@pytest.mark.parametrize("platform", ["a2i", "rossum", "thresholds"])
def test_a_threshold_no_study_decides_is_refused_from_a_summary(capsys, study, tmp_path, platform, threshold):
    folder, summary = study
    text = json.dumps({**summary, "decision": {**summary["decision"], "threshold": 0.123456}})
    # JSON has no infinity: a number past a double's range is what a file holds (-1e400 read as -inf)
    written = {-math.inf: "-1e400", math.inf: "1e400"}.get(threshold, repr(threshold))
    path = tmp_path / "summary.json"
    path.write_text(text.replace("0.123456", written))
    out = tmp_path / "out.json"
    status, stdout, err = run_cli(capsys, "export-policy", platform, "--from", path, "--scenario",
                                  folder / "study.yaml", "--out", out)
    shown = {-math.inf: "-inf", math.inf: "inf"}.get(threshold, repr(threshold))
    assert (status, stdout, err) == (1, "", f"rpa-sim: error: {path}: decision.threshold: its decision's threshold "
                                            f"{shown} is not in [0, 1], where a study decides one: the file was "
                                            f"edited or damaged; run the study again, or give --policy and "
                                            f"--threshold\n")
    assert not out.exists()


def test_the_ends_of_the_range_are_exported(capsys, study, tmp_path):
    """0, 1 and the point one step above 1 where an exact grid ends (review everything) are thresholds."""
    folder, summary = study
    for threshold in (0.0, 1.0, math.nextafter(1.0, 2.0)):
        path = _tampered(tmp_path, summary, "summary.json", threshold=threshold)
        status, _, err = run_cli(capsys, "export-policy", "thresholds", "--from", path, "--scenario",
                                 folder / "study.yaml", "--out", tmp_path / "t.json")
        assert status == 0, err
        assert json.loads((tmp_path / "t.json").read_text())["threshold"] == threshold


def test_a_decisions_reason_reaches_the_terminal_escaped(capsys, study, tmp_path):
    folder, summary = study
    path = _tampered(tmp_path, summary, "summary.json", feasible=False, reason="no team\n\x1b[2Jmeets it")
    out = tmp_path / "rules\x1b[31m\n.json"
    status, _, err = run_cli(capsys, "export-policy", "thresholds", "--from", path, "--scenario",
                             folder / "study.yaml", "--out", out, "--allow-infeasible")
    assert status == 0, err
    assert "\x1b" not in err and "is not feasible: no team\\n\\x1b[2Jmeets it\n" in err
    assert f"wrote {tmp_path}/rules\\x1b[31m\\n.json: " in err
    assert all(line.startswith(("note: ", "wrote ")) for line in err.splitlines())
