"""Any number of signals, at any spacing, end a command and its workers promptly with 130 or 143 (issue 30).

Ctrl-C twice, or SIGTERM twice some 50 ms apart, used to hang ``run``, ``score`` and ``sweep`` with two workers
for good, and ``generate`` one time in three: the second signal cut the pool's shutdown short. The first signal
now stops the command and the others are ignored while it cleans up (``rpa_sim.cli.entry``), and a pool is shut
down whole whatever comes meanwhile (:func:`rpa_sim.common.workers.shut_down`).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from rpa_sim.common.workers import available_cores, shut_down, worker_signals
from rpa_sim.records.synthetic import receipt_dicts, write_generated
from tests.conftest import alive, children, kill_group

pytestmark = [pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the processes from /proc"),
              pytest.mark.skipif(available_cores() < 2, reason="two workers need two cores")]
# How long a command may take to end once the last signal is sent (generous: the machine may be busy; an idle
# 2-core machine takes 0.4-1.1 s).
SECONDS_TO_END = 20


@pytest.fixture(scope="module")
def receipts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("signals") / "receipts.jsonl"
    # enough that score is still at work when the first signal comes (the last wave made 2,500 a matter of 0.3 s)
    write_generated(receipt_dicts(30000, seed=3), path)
    return path


def started_with_workers(argv: list[str]) -> tuple[subprocess.Popen, set[int]]:
    """``rpa-sim ARGV`` leading its own session (a terminal's foreground job), once its two workers run."""
    process = subprocess.Popen([sys.executable, "-m", "rpa_sim.cli", *argv], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 120
    while len(children(process.pid)) < 2:
        if process.poll() is not None or time.monotonic() > deadline:
            kill_group(process)
            pytest.fail(f"the workers of {argv} did not start")
        time.sleep(0.005)
    return process, children(process.pid)


def signalled(process: subprocess.Popen, signum: int, *, count: int, spacing: float, group: bool) -> None:
    for sent in range(count):
        if sent:
            time.sleep(spacing)
        try:
            (os.killpg if group else os.kill)(process.pid, signum)
        except ProcessLookupError:  # ended already: what a later signal would find
            return


def assert_ended(process: subprocess.Popen, workers: set[int], signum: int) -> None:
    """Ended with 128 + the first signal, one line on stderr, nothing on stdout, no worker left."""
    try:
        stdout, stderr = process.communicate(timeout=SECONDS_TO_END)
    except subprocess.TimeoutExpired:
        kill_group(process)
        pytest.fail("the command hung after the signals")
    line = "rpa-sim: interrupted\n" if signum == signal.SIGINT else "rpa-sim: terminated\n"
    assert (process.returncode, stdout, stderr) == (128 + signum, "", line)
    deadline = time.monotonic() + SECONDS_TO_END
    while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not any(alive(pid) for pid in workers)


def test_sigterm_twice_50_ms_apart_ends_score_and_its_workers(receipts: Path) -> None:
    process, workers = started_with_workers(["score", str(receipts), "--workers", "2", "--json"])
    try:
        signalled(process, signal.SIGTERM, count=2, spacing=0.05, group=True)
        assert_ended(process, workers, signal.SIGTERM)
    finally:
        kill_group(process)


def _sleep(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def test_a_signal_during_shut_down_waits_for_the_pool_then_is_raised() -> None:
    pool = ProcessPoolExecutor(max_workers=2, initializer=worker_signals, initargs=(os.getpid(),))
    futures = [pool.submit(_sleep, 0.3) for _ in range(8)]
    futures[0].result()  # the workers run
    processes = list((pool._processes or {}).values())
    timer = threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):  # raised once the pool is down, not inside its shutdown
        shut_down(pool)
    timer.join()
    assert all(future.done() for future in futures)  # run, or cancelled before they started
    assert any(future.cancelled() for future in futures)
    assert not any(process.is_alive() for process in processes)


@pytest.mark.parametrize(("signum", "line"), [(signal.SIGINT, "rpa-sim: interrupted\n"),
                                              (signal.SIGTERM, "rpa-sim: terminated\n")])
def test_a_signal_that_code_wraps_in_another_exception_still_ends_in_one_line(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], signum: int, line: str) -> None:
    # what CI met: Ctrl-C while pyarrow imported pandas, which Python re-raised as a RuntimeError
    # ("Error calling __set_name__") because it came while a class was being made
    from rpa_sim.cli import entry

    def wrapping(args: Any) -> int:
        try:
            os.kill(os.getpid(), signum)
            time.sleep(5)
        except BaseException as error:
            raise RuntimeError("Error calling __set_name__ on 'Field' instance 'kwargs' in 'NamedAgg'") from error
        return 0

    monkeypatch.setitem(entry.COMMANDS, "score", wrapping)
    handlers = {each: signal.getsignal(each) for each in (signal.SIGINT, signal.SIGTERM)}
    try:
        assert entry.main(["score", "receipts.jsonl"]) == 128 + signum
    finally:  # a stopped command leaves the signals ignored, as a process on its way out
        for each, handler in handlers.items():
            signal.signal(each, handler)
    assert capsys.readouterr() == ("", line)


def test_an_error_with_no_signal_is_not_said_to_be_one(monkeypatch: pytest.MonkeyPatch) -> None:
    from rpa_sim.cli import entry

    def failing(args: Any) -> int:
        raise RuntimeError("a bug of ours")

    monkeypatch.setitem(entry.COMMANDS, "score", failing)
    with pytest.raises(RuntimeError, match="a bug of ours"):
        entry.main(["score", "receipts.jsonl"])


# --------------------------------------------------------------------------- the thorough loop

def _cases(count: int) -> list[tuple[str, int, int, float, bool]]:
    """Seeded draws of (command, signal, how many, spacing, to the group or the command alone)."""
    draw = random.Random(30)
    return [(draw.choice(("score", "sweep", "generate", "run")), draw.choice((signal.SIGINT, signal.SIGTERM)),
             draw.choice((2, 2, 3, 5)), draw.choice((0.0, 0.001, 0.01, 0.05, 0.1, 0.2)), draw.random() < 0.7)
            for _ in range(count)]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "signum", "count", "spacing", "group"), _cases(24))
def test_signals_at_any_spacing_end_every_command(receipts: Path, tmp_path: Path, name: str, signum: int,
                                                  count: int, spacing: float, group: bool) -> None:
    scenario = tmp_path / "big.yaml"
    scenario.write_text("name: big\ndata:\n  generate: receipts\n  n: 30000\n  seed: 7\npolicies: [confidence]\n")
    argv: dict[str, list[Any]] = {
        "score": ["score", receipts, "--workers", "2"],
        "sweep": ["sweep", receipts, "--workers", "2", "--policy", "confidence"],
        "generate": ["generate", "receipts", "--n", "40000", "--workers", "2", "--out", tmp_path / "out.jsonl"],
        "run": ["run", scenario, "--workers", "2"],
    }
    process, workers = started_with_workers([str(part) for part in argv[name]])
    try:
        time.sleep(random.Random(count * 1000 + int(spacing * 1000)).uniform(0, 0.3))
        signalled(process, signum, count=count, spacing=spacing, group=group)
        assert_ended(process, workers, signum)
        assert not (tmp_path / "out.jsonl").exists()
        assert [path.name for path in tmp_path.iterdir()] == [scenario.name]  # no temporary left
    finally:
        kill_group(process)
