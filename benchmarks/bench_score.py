"""``rpa-sim score`` against decoding and against an earlier commit (issue 32's regression guard).

Every figure is a ratio of two things timed in the same run, on generated receipts with OCR
(``rpa-sim generate receipts --seed 1``):

1. ``score --json`` of ``--n`` receipts (20,000) end to end, a fresh process with its default workers, against a
   ``json.loads`` loop over the same lines in this process: CPU (target at most 2.5x) and wall (at most 1.5x).
2. The same for ``--small-n`` receipts (6,000): wall at most 3x, where start-up weighs.
3. The same ``--n`` receipts as 8 shards (a folder) against the one file: CPU and wall at most 1.1x.
4. ``score --json`` of the Parquet table of the ``--n`` receipts, and of the records, today against the package of
   ``--baseline`` (by default the last commit of issue 15's wave, ``40fefbd``: ``git archive``d to a temporary
   folder, each commit reading the table it wrote itself): no slower.

Commands run as the user runs them (``python -m rpa_sim.cli``), with bytecode cached as an install has it (each
runs once untimed first), interleaved with what they are compared to so that a busy moment weighs on both; each
figure keeps the best of ``--repeat`` runs, the Parquet table's of ``--table-repeat`` (a quarter-second command,
whose best of 5 moved by 4% either way from one run of this script to the next). CPU is user + system of the
command and its worker processes. The outputs compared are checked to be identical first (the folder's and the
file's; today's and the baseline's).

    python benchmarks/bench_score.py [--n 20000] [--small-n 6000] [--repeat 5] [--table-repeat 25]
                                     [--baseline 40fefbd]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from baseline_source import package_at

BASELINE_COMMIT = "40fefbd"
SHARDS = 8


@dataclass(frozen=True)
class Timing:
    """Best wall and best CPU seconds over the runs."""

    wall: float
    cpu: float


def best(runs: list[tuple[float, float]]) -> Timing:
    return Timing(min(wall for wall, _ in runs), min(cpu for _, cpu in runs))


def environment(package: Path | None) -> dict[str, str]:
    """Bytecode cached (as an install has it); ``package`` first on the path when it is an earlier commit's."""
    found = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    if package is not None:
        found["PYTHONPATH"] = str(package)
    return found


def command(argv: list[str], package: Path | None = None) -> Callable[[], tuple[float, float, bytes]]:
    """``rpa-sim ARGV`` as a fresh process (of ``package``, else today's): its wall and CPU seconds, and its output."""
    # run from the package's folder: ``python -m`` looks in the working directory first
    where = package if package is not None else Path.cwd()
    env = environment(package)

    def run() -> tuple[float, float, bytes]:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        began = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "rpa_sim.cli", *argv], capture_output=True, check=True,
                              cwd=where, env=env)
        wall = time.perf_counter() - began
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, done.stdout

    return run


def json_loop(path: Path) -> Callable[[], tuple[float, float, bytes]]:
    def run() -> tuple[float, float, bytes]:
        began, cpu = time.perf_counter(), time.process_time()
        with path.open("rb") as lines:
            for line in lines:
                json.loads(line)
        return time.perf_counter() - began, time.process_time() - cpu, b""

    return run


def same_figures(one: bytes, two: bytes) -> bool:
    """Whether two ``score --json`` outputs give the same figures (an earlier commit may print fewer keys)."""
    first, second = json.loads(one), json.loads(two)
    return all(first[key] == second[key] for key in first.keys() & second.keys())


def paired(first: Callable[[], tuple[float, float, bytes]], second: Callable[[], tuple[float, float, bytes]],
           repeat: int, *, same_output: str | None = None) -> tuple[Timing, Timing]:
    """Both timed ``repeat`` times, interleaved, after a run of each untimed (whose outputs must agree when
    ``same_output`` names what is compared)."""
    one, two = first(), second()
    if same_output is not None and not same_figures(one[2], two[2]):
        sys.exit(f"bench_score: {same_output}: the outputs differ")
    runs: tuple[list[tuple[float, float]], list[tuple[float, float]]] = ([], [])
    for _ in range(repeat):
        for runner, kept in ((first, runs[0]), (second, runs[1])):
            wall, cpu, _ = runner()
            kept.append((wall, cpu))
    return best(runs[0]), best(runs[1])


def line(name: str, slow: Timing, fast: Timing, target: str) -> None:
    print(f"  {name:<58}{slow.wall:8.2f}{slow.cpu:8.2f}{fast.wall:8.2f}{fast.cpu:8.2f}"
          f"{slow.wall / fast.wall:7.2f}x{slow.cpu / fast.cpu:7.2f}x  {target}")


def split(path: Path, folder: Path, parts: int) -> Path:
    lines = path.read_bytes().splitlines(keepends=True)
    folder.mkdir()
    size = -(-len(lines) // parts)
    for part in range(parts):
        (folder / f"part-{part}.jsonl").write_bytes(b"".join(lines[part * size:(part + 1) * size]))
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000, help="receipts (default: 20000)")
    parser.add_argument("--small-n", type=int, default=6_000, help="receipts of the small run (default: 6000)")
    parser.add_argument("--repeat", type=int, default=5, help="runs per figure, the best kept (default: 5)")
    parser.add_argument("--table-repeat", type=int, default=25,
                        help="runs of score of the Parquet table, the best kept (default: 25)")
    parser.add_argument("--baseline", default=BASELINE_COMMIT, help=f"the earlier commit (default: {BASELINE_COMMIT})")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        records, small = folder / "receipts.jsonl", folder / "small.jsonl"
        for path, n in ((records, args.n), (small, args.small_n)):
            command(["generate", "receipts", "--n", str(n), "--seed", "1", "--out", str(path)])()
        shards = split(records, folder / "shards", SHARDS)
        baseline = package_at(args.baseline, folder / "baseline", program="bench_score")
        print(f"{args.n:,} and {args.small_n:,} receipts, {records.stat().st_size / 1e6:.0f} MB; best of "
              f"{args.repeat}; seconds of the first and the second, and their ratio")
        print(f"  {'':<58}{'first':>16}{'second':>16}{'ratio':>16}")
        print(f"  {'':<58}{'wall':>8}{'CPU':>8}{'wall':>8}{'CPU':>8}{'wall':>8}{'CPU':>8}")
        for path, n, target in ((records, args.n, "target <= 1.5x wall, <= 2.5x CPU"),
                                (small, args.small_n, "target <= 3x wall")):
            score, loop = paired(command(["score", str(path), "--json"]), json_loop(path), args.repeat)
            line(f"score of {n:,} receipts / json.loads of their lines", score, loop, target)
        one_file = command(["score", str(records), "--json"])
        folder_score, file_score = paired(command(["score", str(shards), "--json"]), one_file, args.repeat,
                                          same_output="a folder of shards against one file")
        line(f"score of {SHARDS} shards / the same records in one file", folder_score, file_score,
             "target <= 1.1x")
        tables = {}
        for name, package in (("today", None), ("baseline", baseline)):
            tables[name] = folder / f"table-{name}.parquet"
            command(["evaluate", str(records), "--out", str(tables[name])], package)()
        now, before = paired(command(["score", str(tables["today"]), "--json"]),
                             command(["score", str(tables["baseline"]), "--json"], baseline), args.table_repeat,
                             same_output=f"the table's score today and at {args.baseline}")
        line(f"score of its Parquet table, today / at {args.baseline}", now, before, "target <= 1.0x")
        now, before = paired(one_file, command(["score", str(records), "--json"], baseline), args.repeat,
                             same_output=f"score today and at {args.baseline}")
        line(f"score of {args.n:,} receipts, today / at {args.baseline}", now, before, "(no target)")


if __name__ == "__main__":
    main()
