"""Nothing runaway, nothing left behind: workers capped at the work and the cores, workers that end with a killed
parent, temporaries of killed processes removed, and Ctrl-C / SIGTERM on a local Dask cluster in one line."""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from rpa_sim.common import files
from rpa_sim.common.workers import available_cores, process_running, worker_count
from rpa_sim.evaluate import local as parallel
from rpa_sim.records import synthetic as generating
from rpa_sim.records.readers import read_records
from rpa_sim.records.synthetic import receipt_dicts, write_generated
from tests.conftest import alive, children, kill_group, run_cli, send_signal, write_lines
from tests.support_shards import write_shards

LINUX = Path("/proc/self/stat").exists()
needs_proc = pytest.mark.skipif(not LINUX, reason="reads the processes from Linux's /proc")
TWO_CORES = available_cores() >= 2
# How long the processes of a command may take to end once it was killed (generous: the machine may be busy).
SECONDS_TO_END = 30
# How long a command on a local Dask cluster may take to end once signalled: about a second on a quiet 2-core
# machine, up to 7 s measured while other test suites loaded it 10 times over (the cluster's start-up included).
SECONDS_TO_STOP = 15


def command(*argv: Any) -> list[str]:
    return [sys.executable, "-m", "rpa_sim.cli", *map(str, argv)]


def start(*argv: Any) -> subprocess.Popen:
    """``rpa-sim ARGV`` leading its own session, as a terminal's foreground job does."""
    return subprocess.Popen(command(*argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def descendants(pid: int) -> set[int]:
    """Every process below ``pid``: its children, theirs, ..."""
    found, todo = set(), [pid]
    while todo:
        below = children(todo.pop()) - found
        found |= below
        todo.extend(below)
    return found


def wait_for(condition: Any, what: str, process: subprocess.Popen, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert process.poll() is None, f"the command ended before {what}: {process.communicate()}"
        assert time.monotonic() < deadline, (
            f"no {what} within {seconds} s (processes below: {descendants(process.pid)})")
        time.sleep(0.02)


def wait_until_ended(pids: set[int], seconds: float = SECONDS_TO_END) -> set[int]:
    """The processes of ``pids`` still running after up to ``seconds``."""
    deadline = time.monotonic() + seconds
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return {pid for pid in pids if alive(pid)}


def dead_pid() -> int:
    """The id of a process that ended (and was collected) just now."""
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    return ended.pid


class CountedPool(ProcessPoolExecutor):
    """A process pool that notes how many processes it was asked for."""

    sizes: list[int] = []

    def __init__(self, max_workers: int, **options: Any) -> None:
        CountedPool.sizes.append(max_workers)
        super().__init__(max_workers, **options)


@pytest.fixture
def counted_pools(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    CountedPool.sizes = []
    monkeypatch.setattr(parallel, "ProcessPoolExecutor", CountedPool)
    monkeypatch.setattr(generating, "ProcessPoolExecutor", CountedPool)
    return CountedPool.sizes


# --------------------------------------------------------------------------- no more workers than work and cores


def test_worker_count() -> None:
    cores = available_cores()
    assert worker_count(1_000_000, 10) == min(10, cores)
    assert worker_count(1_000_000, 1_000_000) == cores
    assert worker_count(3, 1) == worker_count(1, 5) == worker_count(4, 0) == 1


def test_generate_with_a_million_workers_starts_none_for_one_block(capsys: pytest.CaptureFixture[str],
                                                                    tmp_path: Path,
                                                                    counted_pools: list[int]) -> None:
    # the issue's command: ten receipts are one block, generated in this process
    one, many = tmp_path / "one.jsonl", tmp_path / "many.jsonl"
    assert run_cli(capsys, "generate", "receipts", "--n", 10, "--seed", 1, "--workers", 1, "--out", one)[0] == 0
    assert run_cli(capsys, "generate", "receipts", "--n", 10, "--seed", 1, "--workers", 1_000_000,
                   "--out", many) == (0, "", f"wrote 10 receipts records to {many}\n")
    assert counted_pools == []
    assert many.read_bytes() == one.read_bytes()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["many.jsonl", "one.jsonl"]


def test_generate_starts_a_worker_per_block_at_most(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                    counted_pools: list[int]) -> None:
    one, many = tmp_path / "one.jsonl.gz", tmp_path / "many.jsonl.gz"
    assert run_cli(capsys, "generate", "receipts", "--n", 130, "--seed", 2, "--workers", 1, "--out", one)[0] == 0
    status = run_cli(capsys, "generate", "receipts", "--n", 130, "--seed", 2, "--workers", 1_000_000, "--out", many)
    assert status == (0, "", f"wrote 130 receipts records to {many}\n")
    assert counted_pools == ([min(3, available_cores())] if TWO_CORES else [])
    assert many.read_bytes() == one.read_bytes()  # 130 receipts: 3 blocks of 64


def test_the_issue_command_ends_at_once_in_a_real_process(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    started = time.monotonic()
    done = subprocess.run(command("generate", "receipts", "--n", 10, "--seed", 1, "--workers", 1_000_000, "--out", out),
                          capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", f"wrote 10 receipts records to {out}\n")
    assert time.monotonic() - started < 60
    assert len(out.read_text().splitlines()) == 10
    assert [path.name for path in tmp_path.iterdir()] == ["out.jsonl"]


def test_evaluation_starts_a_worker_per_batch_at_most(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                      counted_pools: list[int]) -> None:
    data = tmp_path / "receipts.jsonl"
    write_generated(receipt_dicts(parallel.BATCH_SIZE + 10, seed=4), data)  # two batches
    before = data.read_bytes()
    one = run_cli(capsys, "score", data, "--json", "--workers", 1)
    assert one[0] == 0
    assert run_cli(capsys, "score", data, "--json", "--workers", 1_000_000) == one
    assert counted_pools == ([2] if TWO_CORES else [])
    assert data.read_bytes() == before


def test_map_in_order_caps_its_pool(counted_pools: list[int]) -> None:
    assert list(parallel.map_in_order(abs, [-1, -2, -3], workers=1_000_000)) == [1, 2, 3]
    assert list(parallel.map_in_order(abs, [-1], workers=1_000_000)) == [1]
    assert counted_pools == ([min(3, available_cores())] if TWO_CORES else [])
    assert multiprocessing.active_children() == []


def failing_items() -> Iterator[int]:
    yield from (-1, -2, -3)
    raise ValueError("unreadable fourth item")


def test_a_problem_while_reading_ahead_comes_after_the_items_before() -> None:
    # with many workers, the items are read ahead before the pool starts: an error among them waits its turn
    results = parallel.map_in_order(abs, failing_items(), workers=1_000_000)
    assert [next(results), next(results), next(results)] == [1, 2, 3]
    with pytest.raises(ValueError, match="unreadable fourth item"):
        next(results)
    assert multiprocessing.active_children() == []


@pytest.mark.slow
@pytest.mark.skipif(not TWO_CORES, reason="a local cluster of two workers needs two cores")
def test_a_local_cluster_has_a_worker_per_shard_at_most(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    distributed = pytest.importorskip("distributed", reason='Dask is optional: pip install "rpa-sim[dask]"')
    sizes = []

    class CountedCluster(distributed.LocalCluster):
        def __init__(self, *args: Any, n_workers: int, **options: Any) -> None:
            sizes.append(n_workers)
            super().__init__(*args, n_workers=n_workers, **options)

    monkeypatch.setattr(distributed, "LocalCluster", CountedCluster)
    lines = [json.dumps(record) for record in receipt_dicts(30, seed=6)]
    write_shards(tmp_path / "shards", lines, [10, 20])
    one = run_cli(capsys, "score", tmp_path / "shards", "--json", "--workers", 1)
    assert one[0] == 0
    assert run_cli(capsys, "score", tmp_path / "shards", "--json", "--scheduler", "local:64") == one
    assert sizes == [2]


# --------------------------------------------------------------------------- workers end with their parent


@pytest.fixture(scope="module")
def receipts_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("receipts") / "receipts.jsonl"
    generating.write_dataset("receipts", path, n=6000, seed=9, workers=2)
    return path


@needs_proc
@pytest.mark.skipif(not TWO_CORES, reason="two workers need two cores")
def test_generate_workers_end_when_their_parent_is_killed(tmp_path: Path) -> None:
    out = tmp_path / "big.jsonl.gz"
    process = start("generate", "receipts", "--n", 2_000_000, "--seed", 1, "--workers", 2, "--out", out)
    try:
        wait_for(lambda: len(children(process.pid)) >= 2, "two workers", process)
        wait_for(lambda: any(path.stat().st_size > 0 for path in tmp_path.glob(".big.jsonl.gz.*.tmp")),
                 "output written", process)
        workers = children(process.pid)
        os.kill(process.pid, signal.SIGKILL)  # the parent only: nothing can stop its workers but themselves
        process.communicate(timeout=60)
        assert wait_until_ended(workers) == set()
        # the killed process's temporary file names it, and the next write to the same target removes it
        (left,) = tmp_path.iterdir()
        assert left.name.startswith(f".big.jsonl.gz.{process.pid}.") and left.name.endswith(".tmp")
        done = subprocess.run(command("generate", "receipts", "--n", 10, "--seed", 1, "--out", out),
                              capture_output=True, text=True, timeout=120)
        assert (done.returncode, done.stderr) == (0, f"wrote 10 receipts records to {out}\n")
        assert [path.name for path in tmp_path.iterdir()] == ["big.jsonl.gz"]
    finally:
        kill_group(process)


@needs_proc
@pytest.mark.skipif(not TWO_CORES, reason="two workers need two cores")
def test_evaluate_workers_end_when_their_parent_is_killed(tmp_path: Path, receipts_file: Path) -> None:
    before = receipts_file.read_bytes()
    process = start("evaluate", receipts_file, "--out", tmp_path / "table.parquet", "--workers", 2)
    try:
        wait_for(lambda: len(children(process.pid)) >= 2, "two workers", process)
        workers = children(process.pid)
        os.kill(process.pid, signal.SIGKILL)
        process.communicate(timeout=60)
        assert wait_until_ended(workers) == set()
        assert receipts_file.read_bytes() == before
    finally:
        kill_group(process)


@pytest.mark.slow
@needs_proc
def test_local_cluster_workers_end_when_their_parent_is_killed(tmp_path: Path, shards: Path) -> None:
    pytest.importorskip("distributed", reason='Dask is optional: pip install "rpa-sim[dask]"')
    process = start("evaluate", shards, "--out", f"{tmp_path / 'tables'}/", "--scheduler", "local:2")
    try:
        # its workers (and multiprocessing's resource tracker) run; Dask's nanny ties each to the command
        wait_for(lambda: len(children(process.pid)) >= 1 + worker_count(2, 8), "Dask workers", process)
        everything = descendants(process.pid)
        os.kill(process.pid, signal.SIGKILL)
        process.communicate(timeout=60)
        assert wait_until_ended(everything) == set()
        assert list(tmp_path.iterdir()) == []
    finally:
        kill_group(process)


def test_workers_started_by_a_fork_server_live_on(monkeypatch: pytest.MonkeyPatch) -> None:
    # their parent is the server, not this process: they must not take that for their parent's end
    if "forkserver" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork server here")
    monkeypatch.setattr(parallel, "_CONTEXT", multiprocessing.get_context("forkserver"))
    assert list(parallel.map_in_order(abs, range(-8, 0), workers=2)) == list(range(8, 0, -1))


@needs_proc
def test_a_worker_whose_parent_ended_before_it_started_ends_at_once() -> None:
    code = f"from rpa_sim.common.workers import worker_signals\nworker_signals({dead_pid()})\nprint('still here')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (1, "")


@needs_proc
def test_where_the_kernel_cannot_help_a_thread_watches_the_parent() -> None:
    # a worker that is told its system is not Linux watches its parent: killed, the parent takes the worker along
    worker = ("import os, sys, time\nsys.platform = 'darwin'\nfrom rpa_sim.common.workers import worker_signals\n"
              "worker_signals(os.getppid())\ntime.sleep(120)")
    starter = f"import subprocess, sys, time\nsubprocess.Popen([sys.executable, '-c', {worker!r}])\ntime.sleep(120)"
    parent = subprocess.Popen([sys.executable, "-c", starter], start_new_session=True)
    try:
        wait_for(lambda: len(children(parent.pid)) == 1, "the worker", parent)
        time.sleep(0.5)  # the worker's watch has started
        (started,) = children(parent.pid)
        assert alive(started)
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(timeout=60)
        assert wait_until_ended({started}) == set()
    finally:
        kill_group(parent)


def test_process_running() -> None:
    assert process_running(os.getpid())
    assert not process_running(dead_pid())


# --------------------------------------------------------------------------- temporaries of killed processes


def test_an_atomic_write_removes_the_temporaries_of_killed_processes_only(tmp_path: Path) -> None:
    gone, mine = dead_pid(), os.getpid()
    names = {
        "abandoned": f".out.jsonl.{gone}.0123456789ab.tmp",
        "another target's, abandoned": f".other.csv.{gone}.ba9876543210.tmp",
        "being written here": f".out.jsonl.{mine}.abcdefabcdef.tmp",
        "not ours (no owner)": ".out.jsonl.0123456789ab.tmp",
        "not ours (no random part)": f".out.jsonl.{gone}.tmp",
        "not hidden": f"out.jsonl.{gone}.0123456789ab.tmp",
    }
    for name in names.values():
        (tmp_path / name).write_text("partial")
    files.atomic_write_text(tmp_path / "out.jsonl", "done\n")
    kept = {key for key, name in names.items() if (tmp_path / name).exists()}
    assert kept == {"being written here", "not ours (no owner)", "not ours (no random part)", "not hidden"}
    assert (tmp_path / "out.jsonl").read_text() == "done\n"


def test_a_temporary_file_names_its_process(tmp_path: Path) -> None:
    with files.atomic_output(tmp_path / "out.txt") as out:
        out.write(b"x")
        (temporary,) = tmp_path.iterdir()
        assert temporary.name.startswith(f".out.txt.{os.getpid()}.") and temporary.name.endswith(".tmp")
    assert [path.name for path in tmp_path.iterdir()] == ["out.txt"]


def test_a_join_index_removes_the_indexes_of_killed_processes_only(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    gone, mine = dead_pid(), os.getpid()
    abandoned, live, other = (tmp_path / "tmp" / name for name in (
        f"rpa-sim-{gone}-abcd_123", f"rpa-sim-{mine}-efgh_456", f"not-rpa-sim-{gone}-abcd_123"))
    for folder in (abandoned, live, other):
        folder.mkdir()
        (folder / "predictions.db").write_bytes(b"SQLite format 3\0")
    receipts = list(receipt_dicts(3, seed=7))
    truths = write_lines(tmp_path / "truth.jsonl", *({"id": r["id"], "ground_truth": r["ground_truth"]}
                                                     for r in receipts))
    predictions = write_lines(tmp_path / "predictions.jsonl", *({"id": r["id"], "prediction": r["prediction"]}
                                                                for r in reversed(receipts)))
    records = iter(read_records(truths, predictions=predictions))
    next(records)  # out of lockstep at once: the predictions are indexed
    made = {path.name for path in (tmp_path / "tmp").iterdir()} - {live.name, other.name}
    assert len(made) == 1 and made.pop().startswith(f"rpa-sim-{mine}-")
    assert len(list(records)) == 2
    assert sorted(path.name for path in (tmp_path / "tmp").iterdir()) == sorted([live.name, other.name])


# --------------------------------------------------------------------------- Ctrl-C and SIGTERM on a local cluster


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory, receipts_file: Path) -> Path:
    folder = tmp_path_factory.mktemp("shards") / "shards"
    write_shards(folder, receipts_file.read_text().splitlines(), [750] * 8)
    return folder


def interrupt_local_cluster(shards: Path, out: Path, how: str, *, delay: float) -> tuple[int, str, str, float]:
    """``evaluate SHARDS --out TABLES/ --scheduler local:2`` sent a signal once its workers run (and ``delay`` s
    later): its status, stdout, stderr and how long it took to end. No process of it may be left."""
    pytest.importorskip("distributed", reason='Dask is optional: pip install "rpa-sim[dask]"')
    process = start("evaluate", shards, "--out", f"{out}/", "--scheduler", "local:2")
    try:
        # its workers (and multiprocessing's resource tracker) run
        wait_for(lambda: len(children(process.pid)) >= 1 + worker_count(2, 8), "Dask workers", process)
        time.sleep(delay)
        everything = descendants(process.pid)
        send_signal(process, how)
        sent = time.monotonic()
        stdout, stderr = process.communicate(timeout=120)
        took = time.monotonic() - sent
        assert wait_until_ended(everything, seconds=10) == set()
        return process.returncode, stdout, stderr, took
    finally:
        kill_group(process)


def whole_local_cluster_run(shards: Path, out: Path) -> float:
    """How long ``evaluate SHARDS --out TABLES/ --scheduler local:2`` runs once its workers run, unsignalled."""
    pytest.importorskip("distributed", reason='Dask is optional: pip install "rpa-sim[dask]"')
    process = start("evaluate", shards, "--out", f"{out}/", "--scheduler", "local:2")
    try:
        wait_for(lambda: len(children(process.pid)) >= 1 + worker_count(2, 8), "Dask workers", process)
        began = time.monotonic()
        _, stderr = process.communicate(timeout=120)
        assert process.returncode == 0, stderr
        shutil.rmtree(out)
        return time.monotonic() - began
    finally:
        kill_group(process)


@pytest.mark.slow
@needs_proc
def test_ctrl_c_on_a_local_cluster_is_one_line(tmp_path: Path, shards: Path) -> None:
    status, stdout, stderr, took = interrupt_local_cluster(shards, tmp_path / "tables", "SIGINT to the process group",
                                                           delay=0.5)
    assert (status, stdout, stderr) == (130, "", "rpa-sim: interrupted\n")
    assert took < SECONDS_TO_STOP
    assert list(tmp_path.iterdir()) == []


@needs_proc
@pytest.mark.slow
@pytest.mark.parametrize(("how", "status", "line"), [
    ("SIGINT to the process group", 130, "rpa-sim: interrupted\n"),
    ("SIGTERM to the process group", 143, "rpa-sim: terminated\n"),
    ("SIGTERM to the process", 143, "rpa-sim: terminated\n"),
])
def test_signals_on_a_local_cluster_every_time(tmp_path: Path, shards: Path, how: str, status: int,
                                               line: str) -> None:
    chance = random.Random(20)
    # the delays span the run on this machine: while it evaluates, while the tables are written, as it ends; a
    # signal that came after the run ended bounds the later ones, so that most attempts test a signal
    latest = whole_local_cluster_run(shards, tmp_path / "whole")
    interrupted = 0
    for attempt in range(12):
        out = tmp_path / f"tables-{attempt}"
        delay = chance.uniform(0, latest)
        result = interrupt_local_cluster(shards, out, how, delay=delay)
        if "wrote 8 outcome tables" in result[2]:
            # the run ended before the signal came, or it came while the cluster closed: the run is whole, and
            # its status says whether the signal ended it, as its last line may (a worker the group's signal
            # reaches may say so too, before)
            assert result[0] in (0, status, 128 - status), (attempt, delay)  # -2: ended by SIGINT itself
            wrote = f"wrote 8 outcome tables into {out}\n"
            assert result[1] == "" and (result[2].endswith(wrote) or (
                result[2].endswith(wrote + line) and result[0] == status)), (attempt, delay)
            assert len(list(out.iterdir())) == 8, (attempt, delay)
            shutil.rmtree(out)
            latest = delay
            continue
        interrupted += 1
        assert result[:3] == (status, "", line), (attempt, delay)
        assert result[3] < SECONDS_TO_STOP, (attempt, delay)
        assert not out.exists()
        if interrupted == 6:
            break
    assert interrupted >= 4, "too few signals came before the run ended to test anything"
    assert list(tmp_path.iterdir()) == []
