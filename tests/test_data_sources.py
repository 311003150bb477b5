"""DATA as a folder or a glob of shards (rpa_sim.evaluate.sources): the results of the same records in one file,
byte for byte."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from rpa_sim.evaluate.load import load_data
from rpa_sim.evaluate.sources import resolve_shards
from rpa_sim.records.synthetic import docvqa_dicts, receipt_dicts
from tests.conftest import run_cli
from tests.support_shards import SWEEP, outputs, write_shards


@pytest.fixture(scope="module")
def receipts() -> list[str]:
    return [json.dumps(record) for record in receipt_dicts(90, seed=21)]


@pytest.fixture(scope="module")
def questions() -> list[str]:
    return [json.dumps(record) for record in docvqa_dicts(80, seed=22)]


@pytest.fixture()
def sharded(tmp_path: Path, receipts: list[str]) -> tuple[Path, Path]:
    """The receipts in one file, and in a folder of five shards (two gzip-compressed, one of a single record)."""
    whole = tmp_path / "all.jsonl"
    whole.write_text("".join(line + "\n" for line in receipts))
    write_shards(tmp_path / "shards", receipts, [30, 1, 25, 20, 14], gzipped=(1, 3))
    return whole, tmp_path / "shards"


# --------------------------------------------------------------------------- what DATA names


def test_a_folder_is_its_shards_in_name_order_and_nothing_else(tmp_path: Path) -> None:
    for name in ("b.jsonl.gz", "a.jsonl", "c.parquet", "B.jsonl", ".hidden.jsonl", "notes.txt", "d.json"):
        (tmp_path / name).write_text("")
    (tmp_path / "sub.jsonl").mkdir()
    assert [path.name for path in resolve_shards(tmp_path)] == ["B.jsonl", "a.jsonl", "b.jsonl.gz", "c.parquet"]


def test_a_glob_is_its_matches_in_path_order(tmp_path: Path) -> None:
    for folder, name in (("y", "1.jsonl"), ("x", "2.jsonl"), ("x", "1.jsonl"), ("x", "1.parquet")):
        (tmp_path / folder).mkdir(exist_ok=True)
        (tmp_path / folder / name).write_text("")
    found = resolve_shards(f"{tmp_path}/*/*.jsonl")
    assert [str(path.relative_to(tmp_path)) for path in found] == ["x/1.jsonl", "x/2.jsonl", "y/1.jsonl"]
    assert resolve_shards(tmp_path / "plain.jsonl") == (tmp_path / "plain.jsonl",)


@pytest.mark.parametrize("data", ["empty", "empty/*.jsonl", "nowhere/*.jsonl.gz"])
def test_nothing_to_read_is_one_line_and_status_1(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                  data: str) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("not a shard")
    status, out, err = run_cli(capsys, "score", tmp_path / data)
    expected = ("a folder without a shard: no *.jsonl, *.jsonl.gz, *.parquet file inside" if data == "empty"
                else "matches no file")
    assert (status, out, err) == (1, "", f"rpa-sim: error: {tmp_path / data}: {expected}\n")


# --------------------------------------------------------------------------- the same results


def test_score_sweep_certify_over_a_folder_and_a_glob_equal_one_file(capsys: pytest.CaptureFixture[str],
                                                                       sharded: tuple[Path, Path]) -> None:
    whole, folder = sharded
    expected = outputs(capsys, whole)
    assert outputs(capsys, folder) == expected
    assert outputs(capsys, f"{folder}/shard-*.jsonl*", "--workers", "2") == expected
    assert json.loads(expected["score"])["documents"] == 90


def test_vqa_shards_equal_one_file(capsys: pytest.CaptureFixture[str], tmp_path: Path, questions: list[str]) -> None:
    whole = tmp_path / "all.jsonl"
    whole.write_text("".join(line + "\n" for line in questions))
    write_shards(tmp_path / "shards", questions, [40, 40], gzipped=(0,))
    for command, extra in (("score", ()), ("sweep", SWEEP)):
        one = run_cli(capsys, command, whole, *extra, "--json", "--alpha", "0.5")
        assert run_cli(capsys, command, tmp_path / "shards", *extra, "--json", "--alpha", "0.5") == one
        assert one[0] == 0


def test_load_data_and_a_scenario_read_a_folder(capsys: pytest.CaptureFixture[str],
                                                 sharded: tuple[Path, Path]) -> None:
    whole, folder = sharded
    one, shards = load_data(whole, workers=1).table, load_data(folder, workers=1).table
    assert shards.document_ids.tolist() == one.document_ids.tolist()
    assert shards.confidence.tobytes() == one.confidence.tobytes()
    assert shards.document_counts.tobytes() == one.document_counts.tobytes()
    runs = []
    for data in (whole.name, folder.name):
        scenario = whole.parent / f"{data}.yaml"
        scenario.write_text(f"name: study\ndata:\n  file: {data}\npolicies: [confidence]\ntargets: [0.9]\n")
        status, out, err = run_cli(capsys, "run", scenario, "--json")
        assert (status, err) == (0, "")
        runs.append(out)
    assert runs[0] == runs[1]


def test_skipped_records_are_named_by_shard_and_counted_as_in_one_file(capsys: pytest.CaptureFixture[str],
                                                                       tmp_path: Path, receipts: list[str]) -> None:
    lines = list(receipts[:40])
    lines[3], lines[25], lines[31] = "not json", '{"id": "x"}', "[1]"
    whole = tmp_path / "all.jsonl"
    whole.write_text("".join(line + "\n" for line in lines))
    write_shards(tmp_path / "shards", lines, [20, 20])
    one = run_cli(capsys, "score", whole, "--skip-invalid", "--json")
    status, out, err = run_cli(capsys, "score", tmp_path / "shards", "--skip-invalid", "--json")
    assert (status, out) == (0, one[1])
    assert json.loads(out)["skipped"] == 3
    assert err.splitlines()[0] == one[2].splitlines()[0]  # the summary, by kind, in the same order
    shards = tmp_path / "shards"
    renamed = (one[2].replace(f"{whole}: line 4", f"{shards / 'shard-00.jsonl'}: line 4")
               .replace(f"{whole}: line 26", f"{shards / 'shard-01.jsonl'}: line 6")
               .replace(f"{whole}: line 32", f"{shards / 'shard-01.jsonl'}: line 12"))
    assert err == renamed and renamed.count(str(shards)) == 3


def test_a_bad_record_stops_at_its_shard_and_line(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                  receipts: list[str]) -> None:
    lines = list(receipts[:30])
    lines[22] = "not json"
    write_shards(tmp_path / "shards", lines, [10, 10, 10])
    status, out, err = run_cli(capsys, "score", tmp_path / "shards")
    assert (status, out) == (1, "")
    assert err.startswith(f"rpa-sim: error: {tmp_path / 'shards' / 'shard-02.jsonl'}: line 3: invalid JSON")
    assert err.count("\n") == 1


def test_an_id_in_two_shards_is_refused_naming_both(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                    receipts: list[str]) -> None:
    lines = list(receipts[:12])
    lines[9] = lines[2]
    write_shards(tmp_path / "shards", lines, [6, 6])
    record_id = json.loads(lines[2])["id"]
    first, second = tmp_path / "shards" / "shard-00.jsonl", tmp_path / "shards" / "shard-01.jsonl"
    status, _, err = run_cli(capsys, "score", tmp_path / "shards")
    assert (status, err) == (1, f"rpa-sim: error: {second}: line 4 (id {record_id}): duplicate id (first in {first} "
                                f"line 3); ids are unique across shards\n")


# --------------------------------------------------------------------------- outcome tables among the shards


def test_tables_and_records_mix_when_their_settings_agree(capsys: pytest.CaptureFixture[str],
                                                          sharded: tuple[Path, Path]) -> None:
    whole, folder = sharded
    expected = outputs(capsys, whole)
    table = folder / "shard-02.parquet"
    assert run_cli(capsys, "evaluate", folder / "shard-02.jsonl", "--out", table)[0] == 0
    (folder / "shard-02.jsonl").unlink()
    assert outputs(capsys, folder) == expected
    status, _, err = run_cli(capsys, "score", folder, "--value-match", "normalized")
    assert (status, err) == (1, f"rpa-sim: error: {table}: evaluated with value_match exact; re-run rpa-sim evaluate "
                                f"with --value-match normalized\n")
    status, _, err = run_cli(capsys, "score", folder, "--skip-invalid")
    assert status == 2 and err.startswith(f"rpa-sim: error: --skip-invalid applies to records, and {table} is an")


def test_evaluate_writes_a_table_per_shard_that_reads_back(capsys: pytest.CaptureFixture[str],
                                                           sharded: tuple[Path, Path]) -> None:
    whole, folder = sharded
    expected = outputs(capsys, whole)
    tables = whole.parent / "tables"
    status, out, err = run_cli(capsys, "evaluate", folder, "--out", f"{tables}/")
    assert (status, out, err) == (0, "", f"wrote 5 outcome tables into {tables}\n")
    assert sorted(path.name for path in tables.iterdir()) == [f"part-0000{i}.parquet" for i in range(5)]
    assert outputs(capsys, tables) == expected
    first = (tables / "part-00000.parquet").read_bytes()
    # again: the partitions are replaced, with the same bytes, and nothing else is left beside them
    assert run_cli(capsys, "evaluate", folder, "--out", f"{tables}/")[0] == 0
    assert (tables / "part-00000.parquet").read_bytes() == first
    assert sorted(path.name for path in whole.parent.iterdir()) == ["all.jsonl", "shards", "tables"]
    # one table of the whole folder: the one of the whole file, sources aside
    assert run_cli(capsys, "evaluate", folder, "--out", whole.parent / "one.parquet")[0] == 0
    assert outputs(capsys, whole.parent / "one.parquet") == expected


def test_evaluate_into_a_folder_leaves_nothing_when_it_fails(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                             receipts: list[str]) -> None:
    lines = list(receipts[:20])
    lines[17] = "not json"
    write_shards(tmp_path / "shards", lines, [10, 10])
    status, _, err = run_cli(capsys, "evaluate", tmp_path / "shards", "--out", f"{tmp_path / 'tables'}/")
    assert status == 1 and "shard-01.jsonl: line 8: invalid JSON" in err
    assert sorted(path.name for path in tmp_path.iterdir()) == ["shards"]
    other = tmp_path / "mine"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    status, _, err = run_cli(capsys, "evaluate", tmp_path / "shards", "--skip-invalid", "--out", f"{other}/")
    assert (status, err) == (1, f"rpa-sim: error: {other}: holds other files than partitions ('keep.txt', ...); "
                                f"write the outcome tables into a new or empty folder\n")
    assert sorted(path.name for path in other.iterdir()) == ["keep.txt"]


# --------------------------------------------------------------------------- usage


def test_predictions_go_with_one_file(capsys: pytest.CaptureFixture[str], sharded: tuple[Path, Path]) -> None:
    whole, folder = sharded
    status, _, err = run_cli(capsys, "score", folder, "--predictions", whole)
    assert (status, err) == (2, f"rpa-sim: error: --predictions goes with one records file, and {folder} is 5 "
                                f"shards\n")


@pytest.mark.parametrize("address", ["10.0.0.1:8786", "tcp://host", "tcp://host:99999", "local:0", "local:x",
                                     "http://host:8786"])
def test_a_bad_scheduler_address_is_a_usage_error(capsys: pytest.CaptureFixture[str], sharded: tuple[Path, Path],
                                                  address: str) -> None:
    status, _, err = run_cli(capsys, "score", sharded[1], "--scheduler", address)
    assert (status, err) == (2, f"rpa-sim: error: score: argument --scheduler: a scheduler is tcp://HOST:PORT, local "
                                f"or local:N, got {address!r} (see 'rpa-sim score --help')\n")


def test_without_dask_the_scheduler_asks_for_it(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                                                sharded: tuple[Path, Path]) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if it were not installed
    status, out, err = run_cli(capsys, "score", sharded[1], "--scheduler", "local:2")
    assert (status, out, err) == (1, "", 'rpa-sim: error: --scheduler needs Dask: pip install "rpa-sim[dask]"\n')


def test_a_scenario_scheduler_goes_with_a_data_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text("name: s\ndata:\n  generate: receipts\n  n: 5\n  scheduler: local:2\npolicies: [confidence]\n")
    status, _, err = run_cli(capsys, "run", scenario)
    assert status == 1 and "scheduler goes with file" in err
    scenario.write_text("name: s\ndata:\n  file: x.jsonl\n  scheduler: nowhere\npolicies: [confidence]\n")
    status, _, err = run_cli(capsys, "run", scenario)
    assert status == 1 and "a scheduler is tcp://HOST:PORT, local or local:N, got 'nowhere'" in err
