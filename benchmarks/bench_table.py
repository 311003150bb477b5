"""Outcome tables against records (issue 10, section 1): ``score`` and ``sweep`` end to end from a ``.parquet``
table and from the ``.jsonl`` it was evaluated from, and the read time of a table of a million rows.

Target: from a table, ``score`` and ``sweep --policy confidence`` at least 8x faster end to end than from
the records. Both run as the user runs them, ``rpa-sim ...`` subprocesses (interpreter start, imports,
reading, the command, printing), on generated CORD-like receipts with OCR pages
(``rpa-sim generate receipts --n 20000 --seed 1``), in the same run; each figure is the best of
``--repeat`` runs (a shared machine adds time, never takes it away), as wall-clock seconds and as CPU
seconds (user + system of the command and its worker processes, steadier on a busy machine). The outputs from the
table and from the records are checked to be identical before any figure is printed. The records run
with ``--workers`` at its default (every usable core). Each command runs once untimed first, with Python
free to cache bytecode as an installed package has it: an environment that sets
``PYTHONDONTWRITEBYTECODE`` would otherwise compile rpa-sim's modules at every start of an editable install
(about 60 ms, which the table's commands would feel most).

The million-row figure reads a table made by concatenating copies of the receipts' table
(:func:`rpa_sim.evaluate.outcomes.concat_tables`) until its file has at least 1,000,000 rows: ``read_table`` in
this process (best of ``--repeat``) and ``rpa-sim score`` on it end to end.

    python benchmarks/bench_table.py [--n 20000] [--repeat 3] [--folder DIR]
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rpa_sim.evaluate.outcomes import KIEOutcomes, concat_tables
from rpa_sim.evaluate.tablefile import read_info, read_table, write_table

MILLION = 1_000_000


@dataclass(frozen=True)
class Timing:
    """The best of several runs: wall seconds, and CPU seconds (user + system, worker processes included)."""

    wall: float
    cpu: float


def renamed(table: KIEOutcomes, copy: int) -> KIEOutcomes:
    """``table`` with its documents renamed ``ID~COPY``: a table file holds each document once."""
    ids = [f"{document_id}~{copy}" for document_id in table.document_ids.tolist()]
    return dataclasses.replace(table, document_ids=np.array(ids, dtype=table.document_ids.dtype))


def best_run(argv: list[str], repeat: int) -> tuple[Timing, bytes]:
    """The best times of ``rpa-sim ARGV`` over ``repeat`` runs after an untimed one, and its standard output."""
    environment = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(["rpa-sim", *argv], capture_output=True, check=True, env=environment)
    walls, cpus, output = [], [], b""
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        completed = subprocess.run(["rpa-sim", *argv], capture_output=True, check=True, env=environment)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        output = completed.stdout
    return Timing(min(walls), min(cpus)), output


def best_call(function, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def file_rows(path: Path) -> int:
    return sum(read_info(path).rows.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000, help="receipts to generate (default: 20000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure; the best counts (default: 3)")
    parser.add_argument("--folder", type=Path, help="keep the files here (default: a temporary folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        folder = args.folder or Path(temporary)
        folder.mkdir(parents=True, exist_ok=True)
        records, table = folder / f"receipts-{args.n}.jsonl", folder / f"receipts-{args.n}.parquet"
        if not records.exists():
            subprocess.run(["rpa-sim", "generate", "receipts", "--n", str(args.n), "--seed", "1", "--out",
                            str(records)], check=True, capture_output=True)
        evaluate_time, _ = best_run(["evaluate", str(records), "--out", str(table)], 1)
        print(f"{args.n:,} receipts: records {records.stat().st_size / 1e6:.1f} MB, table "
              f"{table.stat().st_size / 1e6:.1f} MB ({file_rows(table):,} rows); evaluate "
              f"{evaluate_time.wall:.2f} s wall, {evaluate_time.cpu:.2f} s CPU")
        print(f"{'':<26}{'records':>16}{'table':>16}{'ratio':>14}")
        print(f"{'command':<26}{'wall s':>8}{'CPU s':>8}{'wall s':>8}{'CPU s':>8}{'wall':>7}{'CPU':>7}")
        for name, argv in (("score --json", ["score", "--json"]),
                           ("sweep --policy confidence", ["sweep", "--policy", "confidence", "--format", "csv"])):
            slow, expected = best_run([argv[0], str(records), *argv[1:]], args.repeat)
            fast, got = best_run([argv[0], str(table), *argv[1:]], args.repeat)
            if got != expected:
                sys.exit(f"bench_table: {name} prints something else from the table than from the records")
            print(f"{name:<26}{slow.wall:>8.2f}{slow.cpu:>8.2f}{fast.wall:>8.3f}{fast.cpu:>8.3f}"
                  f"{slow.wall / fast.wall:>6.1f}x{slow.cpu / fast.cpu:>6.1f}x")

        small = read_table(table)
        copies = math.ceil(MILLION / file_rows(table))
        big = folder / f"receipts-{args.n}-x{copies}.parquet"
        write_table(concat_tables([renamed(small, copy) for copy in range(copies)]), big)
        rows = file_rows(big)
        read_time = best_call(lambda: read_table(big), args.repeat)
        score_time, _ = best_run(["score", str(big), "--json"], args.repeat)
        print(f"{rows:,} rows ({copies} copies, {big.stat().st_size / 1e6:.1f} MB): read_table {read_time:.3f} s "
              f"({rows / read_time / 1e6:.1f} M rows/s); rpa-sim score end to end {score_time.wall:.2f} s wall, "
              f"{score_time.cpu:.2f} s CPU")


if __name__ == "__main__":
    main()
