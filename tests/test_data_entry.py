"""One way in for DATA (rpa_sim.evaluate.load.load_data): the command line, a scenario and the dashboard read the same
DATA the same way, so the same bad DATA gives each the same message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rpa_sim.common.errors import InputError
from rpa_sim.evaluate.load import load_data
from rpa_sim.evaluate.sources import RecordsOnlyOption
from rpa_sim.records.synthetic import receipt_dicts
from rpa_sim.study.run import run_scenario
from rpa_sim.study.scenario import load_scenario
from rpa_sim.tui.loading import open_source
from tests.conftest import run_cli
from tests.support_shards import write_shards


@pytest.fixture(scope="module")
def receipts() -> list[str]:
    return [json.dumps(record) for record in receipt_dicts(24, seed=41)]


def scenario_file(folder: Path, data: Path | str, *, policies: str = "[confidence]", extra: str = "") -> Path:
    path = folder / "study.yaml"
    path.write_text(f"name: study\ndata:\n  file: '{data}'\n{extra}policies: {policies}\ntargets: [0.9]\n")
    return path


def messages(capsys: pytest.CaptureFixture[str], folder: Path, data: Path | str, *,
             policies: str = "[confidence]") -> tuple[str, str, str, str]:
    """The message of each way in on ``data``: ``rpa-sim sweep``, run_scenario, the dashboard on the scenario and
    on the data itself (its policies include confidence, which says nothing of a missing one)."""
    flags = [part for name in policies.strip("[]").split(", ") for part in ("--policy", name)]
    status, out, err = run_cli(capsys, "sweep", data, *flags)
    assert (status, out) == (1, "") and err.count("\n") == 1, err
    scenario = scenario_file(folder, data, policies=policies)
    with pytest.raises(InputError) as study:
        run_scenario(*load_scenario(scenario))
    with pytest.raises(InputError) as dashboard:
        open_source(str(scenario))
    with pytest.raises(InputError) as opened:
        open_source(str(data))
    return err.removeprefix("rpa-sim: error: ").rstrip("\n"), str(study.value), str(dashboard.value), str(opened.value)


def test_a_bad_record_is_the_same_error_everywhere(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                   receipts: list[str]) -> None:
    data = tmp_path / "receipts.jsonl"
    data.write_text("".join(line + "\n" for line in [*receipts[:2], "{not json", *receipts[2:]]))
    expected = f"{data}: line 3: invalid JSON: Expecting property name enclosed in double quotes at column 2"
    assert messages(capsys, tmp_path, data) == (expected,) * 4


def test_an_id_in_two_shards_is_the_same_error_everywhere(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                          receipts: list[str]) -> None:
    lines = list(receipts[:10])
    lines[7] = lines[1]
    folder = tmp_path / "shards"
    first, second = write_shards(folder, lines, [5, 5])
    record_id = json.loads(lines[1])["id"]
    expected = (f"{second}: line 3 (id {record_id}): duplicate id (first in {first} line 2); ids are unique "
                f"across shards")
    assert messages(capsys, tmp_path, folder) == (expected,) * 4


def test_a_glob_without_a_match_is_the_same_error_everywhere(capsys: pytest.CaptureFixture[str],
                                                             tmp_path: Path) -> None:
    pattern = f"{tmp_path}/missing/*.jsonl"
    assert messages(capsys, tmp_path, pattern) == (f"{pattern}: matches no file",) * 4


def test_a_null_confidence_is_read_for_the_same_policies_everywhere(capsys: pytest.CaptureFixture[str],
                                                                    tmp_path: Path, receipts: list[str]) -> None:
    records = [json.loads(line) for line in receipts]
    records[4]["prediction"]["entities"][0]["confidence"] = None
    data = tmp_path / "receipts.jsonl"
    data.write_text("".join(json.dumps(record) + "\n" for record in records))
    record_id = records[4]["id"]
    expected = (f"{data}: line 5 (id {record_id}): prediction.entities[0].confidence: expected a number, got null "
                f"(a null confidence is allowed only when every policy the command is given sets "
                f"missing_confidence: review, accept or a number)")
    # one policy that says nothing of a missing confidence is enough to refuse it
    assert messages(capsys, tmp_path, data, policies="[missing-confidence-review, confidence]") == (expected,) * 4
    # when every policy says, each way in reads it: the same table
    assert run_cli(capsys, "sweep", data, "--policy", "missing-confidence-review", "--json")[::2] == (0, "")
    study = run_scenario(*load_scenario(scenario_file(tmp_path, data, policies="[missing-confidence-review]")))
    assert study.table.confidence.tobytes() == open_source(str(tmp_path / "study.yaml")).table.confidence.tobytes()
    assert sum(value != value for value in study.table.confidence.tolist()) == 1  # the null one, as NaN


def test_a_table_with_a_predictions_file_is_one_refusal_worded_for_each(capsys: pytest.CaptureFixture[str],
                                                                        tmp_path: Path, receipts: list[str]) -> None:
    records = tmp_path / "receipts.jsonl"
    records.write_text("".join(line + "\n" for line in receipts))
    table = tmp_path / "receipts.parquet"
    assert run_cli(capsys, "evaluate", records, "--out", table, "--workers", "1")[0] == 0
    status, _, err = run_cli(capsys, "score", table, "--predictions", records)
    scenario = scenario_file(tmp_path, table, extra=f"  predictions: '{records}'\n")
    with pytest.raises(RecordsOnlyOption) as study:
        run_scenario(*load_scenario(scenario))
    assert (status, err) == (2, f"rpa-sim: error: {study.value.usage}\n")
    assert str(study.value) == (f"{table}: is an outcome table, which holds its predictions; a predictions file "
                                f"goes with records only, got {str(records)!r}")
    assert err == (f"rpa-sim: error: --predictions applies to records, and {table} is an outcome table, which "
                   f"holds its predictions already\n")


def test_the_command_line_reports_the_records_load_data_skipped(capsys: pytest.CaptureFixture[str],
                                                                tmp_path: Path, receipts: list[str]) -> None:
    lines = list(receipts)
    lines[2], lines[9] = "[1]", '{"id": "x"}'
    folder = tmp_path / "shards"
    write_shards(folder, lines, [12, 12])
    loaded = load_data(folder, skip_invalid=True, workers=1)
    status, out, err = run_cli(capsys, "score", folder, "--skip-invalid", "--json")
    assert (status, json.loads(out)["skipped"]) == (0, 2)
    assert err == "".join(f"{line}\n" for line in (f"rpa-sim: {loaded.skipped_summary}",
                                                    *(f"  {error}" for error in loaded.skipped)))
    assert [error.location.line for error in loaded.skipped] == [3, 10]
    assert json.loads(out)["documents"] == loaded.table.documents == 22


def test_the_command_line_checks_its_options_before_anything_is_evaluated(capsys: pytest.CaptureFixture[str],
                                                                          tmp_path: Path,
                                                                          receipts: list[str]) -> None:
    # the record on line 3 is never reached: --alpha is refused as soon as the task is known
    data = tmp_path / "receipts.jsonl"
    data.write_text("".join(line + "\n" for line in [*receipts[:2], "{not json", *receipts[2:]]))
    status, out, err = run_cli(capsys, "score", data, "--alpha", "0.5")
    assert (status, out, err) == (2, "", f"rpa-sim: error: --alpha applies to VQA data only, and the task is KIE "
                                         f"(inferred from {data})\n")
    asked = []
    with pytest.raises(InputError, match="line 3: invalid JSON"):
        load_data(data, workers=1, check_task=lambda task, how: asked.append((task, how)))
    assert asked == [("kie", f"inferred from {data}")]
