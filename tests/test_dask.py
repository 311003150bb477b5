"""Evaluation on Dask (rpa_sim.evaluate.cluster): the same answers from a cluster, byte for byte.

One LocalCluster (2 worker processes of 1 thread, no dashboard) serves the
module; one test starts ``dask scheduler`` and two ``dask worker`` processes.
"""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("distributed", reason='Dask is optional: pip install "rpa-sim[dask]"')

from distributed import Client, LocalCluster

from rpa_sim.common.errors import InputError
from rpa_sim.common.progress import reporting
from rpa_sim.evaluate import cluster as on_dask
from rpa_sim.evaluate.settings import EvaluationSettings
from rpa_sim.evaluate.sources import load_shard, merge_shards, resolve_shards, shard_kinds
from rpa_sim.records.synthetic import docvqa_dicts, receipt_dicts
from tests.conftest import run_cli
from tests.support_shards import SWEEP, outputs, write_shards

TIMEOUT = 120


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      timeout=TIMEOUT) as local:
        yield local


@pytest.fixture(scope="module")
def client(cluster: LocalCluster) -> Iterator[Client]:
    with Client(cluster, timeout=TIMEOUT) as connected:
        connected.wait_for_workers(2, timeout=TIMEOUT)
        yield connected


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Receipts in one file and in a folder of four shards (one gzip-compressed)."""
    folder = tmp_path_factory.mktemp("data")
    lines = [json.dumps(record) for record in receipt_dicts(80, seed=31)]
    whole = folder / "all.jsonl"
    whole.write_text("".join(line + "\n" for line in lines))
    write_shards(folder / "shards", lines, [25, 20, 20, 15], gzipped=(2,))
    return whole, folder / "shards"


@pytest.mark.slow
def test_score_sweep_certify_on_the_cluster_equal_one_process(capsys: pytest.CaptureFixture[str],
                                                               cluster: LocalCluster, data: tuple[Path, Path]) -> None:
    whole, shards = data
    expected = outputs(capsys, whole, "--workers", "1")
    assert outputs(capsys, shards, "--scheduler", cluster.scheduler_address) == expected
    # one file is one task
    assert outputs(capsys, whole, "--scheduler", cluster.scheduler_address) == expected


@pytest.mark.slow
def test_vqa_on_the_cluster(capsys: pytest.CaptureFixture[str], cluster: LocalCluster, tmp_path: Path) -> None:
    lines = [json.dumps(record) for record in docvqa_dicts(50, seed=32)]
    whole = tmp_path / "all.jsonl"
    whole.write_text("".join(line + "\n" for line in lines))
    write_shards(tmp_path / "shards", lines, [10, 30, 10])
    one = run_cli(capsys, "sweep", whole, *SWEEP, "--json", "--alpha", "0.5")
    assert one[0] == 0
    assert run_cli(capsys, "sweep", tmp_path / "shards", *SWEEP, "--json", "--alpha", "0.5", "--scheduler",
                   cluster.scheduler_address) == one


@pytest.mark.slow
def test_evaluate_into_partitions_on_the_cluster(capsys: pytest.CaptureFixture[str], cluster: LocalCluster,
                                                 data: tuple[Path, Path], tmp_path: Path) -> None:
    whole, shards = data
    local, remote = tmp_path / "local", tmp_path / "remote"
    assert run_cli(capsys, "evaluate", shards, "--out", f"{local}/", "--workers", "1")[0] == 0
    status, _, err = run_cli(capsys, "evaluate", shards, "--out", f"{remote}/", "--scheduler",
                             cluster.scheduler_address)
    assert (status, err) == (0, f"wrote 4 outcome tables into {remote}\n")
    names = sorted(path.name for path in local.iterdir())
    assert names == sorted(path.name for path in remote.iterdir()) and len(names) == 4
    for name in names:
        assert (remote / name).read_bytes() == (local / name).read_bytes()
    # the partitions, read back on the cluster
    assert outputs(capsys, remote, "--scheduler", cluster.scheduler_address) == outputs(capsys, whole)


@pytest.mark.slow
def test_the_first_bad_shard_in_order_is_the_error(capsys: pytest.CaptureFixture[str], cluster: LocalCluster,
                                                   data: tuple[Path, Path], tmp_path: Path) -> None:
    lines = (data[0].read_text().splitlines())[:40]
    lines[12], lines[35] = "not json", "[2]"
    write_shards(tmp_path / "shards", lines, [10, 10, 10, 10])
    status, out, err = run_cli(capsys, "score", tmp_path / "shards", "--scheduler", cluster.scheduler_address)
    assert (status, out) == (1, "")
    assert err.startswith(f"rpa-sim: error: {tmp_path / 'shards' / 'shard-01.jsonl'}: line 3: invalid JSON")
    assert err.count("\n") == 1
    skipped = run_cli(capsys, "score", tmp_path / "shards", "--skip-invalid", "--json", "--scheduler",
                      cluster.scheduler_address)
    assert skipped == run_cli(capsys, "score", tmp_path / "shards", "--skip-invalid", "--json", "--workers", "1")


def _dies_once(stamp: tuple[str, int, int], *, markers: str, **options: Any) -> Any:
    """A shard's task that kills its worker process the first time it runs for a shard."""
    marker = Path(markers) / Path(stamp[0]).name
    if not marker.exists():
        marker.write_text(str(os.getpid()))
        os.kill(os.getpid(), signal.SIGKILL)
    return load_shard(stamp[0], workers=1, **options)


@pytest.mark.slow
def test_a_worker_lost_mid_run_changes_nothing(client: Client, data: tuple[Path, Path], tmp_path: Path) -> None:
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers need not import the tests
    whole, folder = data
    shards = resolve_shards(folder)
    task = partial(_dies_once, markers=str(tmp_path), settings=EvaluationSettings(task="kie"))
    results = on_dask.run_shards(client, task, [on_dask.shard_stamp(shard) for shard in shards])
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(shard.name for shard in shards)
    merged = merge_shards(shard_kinds(shards), results, data=folder)
    reference = load_shard(whole, EvaluationSettings(task="kie"), workers=1).table
    assert merged.table.document_ids.tolist() == reference.document_ids.tolist()
    for column in ("confidence", "outcome", "similarity", "document", "document_counts"):
        assert getattr(merged.table, column).tobytes() == getattr(reference, column).tobytes(), column
    client.wait_for_workers(2, timeout=TIMEOUT)  # the nannies restarted the killed workers


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.slow
def test_progress_counts_the_tasks_on_a_terminal(cluster: LocalCluster, data: tuple[Path, Path]) -> None:
    shards = resolve_shards(data[1])
    screen = _Terminal()
    with reporting(stream=screen):
        results = on_dask.evaluate_on_cluster(shards, scheduler=cluster.scheduler_address, evaluate_shard=load_shard,
                                               settings=EvaluationSettings(task="kie"))
    assert len(results) == 4
    assert "evaluating 4 shards on Dask" in screen.getvalue()


def test_an_unreachable_scheduler_is_named(capsys: pytest.CaptureFixture[str], data: tuple[Path, Path],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(on_dask, "CONNECT_SECONDS", 1.0)
    address = f"tcp://127.0.0.1:{free_port()}"
    started = time.monotonic()
    status, out, err = run_cli(capsys, "score", data[1], "--scheduler", address)
    assert time.monotonic() - started < 30
    assert (status, out) == (1, "")
    assert err.startswith(f"rpa-sim: error: cannot connect to the Dask scheduler at {address} within 1 s (")
    assert err.count("\n") == 1


def test_a_missing_shard_is_named_before_connecting(data: tuple[Path, Path], tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"nothing\.jsonl: no such file"):
        on_dask.evaluate_on_cluster([tmp_path / "nothing.jsonl"], scheduler="tcp://127.0.0.1:1",
                                    evaluate_shard=load_shard, settings=EvaluationSettings(task="kie"))


# --------------------------------------------------------------------------- dask scheduler and dask worker


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.slow
def test_score_and_sweep_through_dask_scheduler_and_workers(capsys: pytest.CaptureFixture[str],
                                                            data: tuple[Path, Path], tmp_path: Path) -> None:
    whole, shards = data
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    dask = [sys.executable, "-m", "distributed.cli.dask_scheduler"]
    logs = [open(tmp_path / f"{name}.log", "w") for name in ("scheduler", "worker-1", "worker-2")]  # noqa: SIM115
    processes = []
    try:
        processes.append(subprocess.Popen([*dask, "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
                                          stdout=logs[0], stderr=subprocess.STDOUT))
        for log in logs[1:]:
            processes.append(subprocess.Popen(
                [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1",
                 "--host", "127.0.0.1", "--no-dashboard", "--death-timeout", str(TIMEOUT)],
                stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path))
        with Client(address, timeout=TIMEOUT) as waiting:
            waiting.wait_for_workers(2, timeout=TIMEOUT)
        for command, extra in (("score", ()), ("sweep", SWEEP)):
            expected = run_cli(capsys, command, whole, *extra, "--json", "--workers", "1")
            assert expected[0] == 0
            through = subprocess.run([sys.executable, "-m", "rpa_sim.cli", command, str(shards), *extra, "--json",
                                      "--scheduler", address], capture_output=True, text=True, timeout=TIMEOUT)
            assert (through.returncode, through.stdout, through.stderr) == expected
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=30)
        for log in logs:
            log.close()
