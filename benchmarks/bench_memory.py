"""Peak memory of evaluating KIE entity predictions in a stream (target: 10M entities within 4 GB).

Generates CORD-like receipts with OCR pages until they hold at least
1,000,000 predicted entities (or ENTITIES, if fewer), then writes copies of
them with distinct ids until the file holds ENTITIES predicted entities
(``.jsonl.gz``, in ``--folder`` or a temporary one; a file already there is
reused). Then it measures the peak resident memory of fresh processes: one
that only imports rpa-sim (the floor), one that streams the records, and one
per ``--workers`` that evaluates them as ``rpa-sim score`` does
(:func:`rpa_sim.evaluate.load.load_data`: grounding computed from the OCR). With
several workers, the figures are this process's peak and the largest worker's
peak; their sum bounds the whole.

    python benchmarks/bench_memory.py [ENTITIES] [--workers 1 2] [--folder DIR]
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rpa_sim.records.synthetic import receipt_dicts

# The measured process reports its own peak (VmHWM: this process only, unlike ru_maxrss, which Linux
# keeps across exec from the process that started it) and the peak, sampled every 0.2 s, of the
# proportional set size (Pss) of itself and its workers: their pages shared after fork counted once.
CHILD = """
import os, sys, threading, time
from pathlib import Path
from rpa_sim.evaluate.load import load_data
from rpa_sim.records.readers import read_records

def kib(pid, name, field):
    try:
        text = Path(f"/proc/{pid}/{name}").read_text()
    except OSError:
        return 0
    return next((int(line.split()[1]) for line in text.splitlines() if line.startswith(field)), 0)

def tree(pid):
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [pid] + [p for child in children for p in tree(int(child))]

peak = [0]
def sample():
    while True:
        peak[0] = max(peak[0], sum(kib(p, "smaps_rollup", "Pss:") for p in tree(os.getpid())))
        time.sleep(0.2)

threading.Thread(target=sample, daemon=True).start()
mode, path = sys.argv[1], sys.argv[2]
start = time.perf_counter()
rows = 0
if mode == "stream":
    rows = sum(1 for _ in read_records(path))
elif mode.startswith("evaluate"):
    rows = len(load_data(path, workers=int(mode.split("-")[1])).table)
seconds = time.perf_counter() - start
print(rows, seconds, kib("self", "status", "VmHWM:"), peak[0])
"""
BASE_ENTITIES = 1_000_000


def base_receipts(target: int) -> tuple[list[str], int]:
    """Generated receipts (canonical lines) until their predicted entities reach ``target``."""
    lines, total = [], 0
    for record in receipt_dicts(10 * target, seed=1):
        if total >= target:
            break
        prediction = record["prediction"]
        total += len(prediction["entities"]) + sum(len(group["entities"]) for group in prediction["groups"])
        lines.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
    return lines, total


def write_data(path: Path, target: int) -> tuple[int, int]:
    """Copies of the base receipts with distinct ids until ``target`` entities; (documents, entities)."""
    lines, per_copy = base_receipts(min(target, BASE_ENTITIES))
    documents = entities = copy = 0
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=1) as out:
        while entities < target:
            prefix = f'{{"id":"copy{copy}-'
            out.write("".join(prefix + line[len('{"id":"'):] + "\n" for line in lines))
            documents, entities, copy = documents + len(lines), entities + per_copy, copy + 1
    return documents, entities


def measure(mode: str, path: Path) -> tuple[int, float, float, float]:
    """Rows, seconds, the peak resident memory of the process, and the sampled peak of its tree (MiB)."""
    out = subprocess.run([sys.executable, "-c", CHILD, mode, str(path)], capture_output=True, text=True, check=True)
    rows, seconds, own_kib, tree_kib = out.stdout.split()
    return int(rows), float(seconds), int(own_kib) / 1024, int(tree_kib) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("entities", nargs="?", type=int, default=1_000_000,
                        help="predicted entities to evaluate (default: 1,000,000)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="evaluation processes (default: 1 2)")
    parser.add_argument("--folder", type=Path, help="where the data file goes and stays (default: a temporary folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        folder = args.folder or Path(temporary)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"receipts-{args.entities}.jsonl.gz"
        if not path.exists():
            start = time.perf_counter()
            documents, entities = write_data(path, args.entities)
            print(f"wrote {documents:,} receipts with {entities:,} predicted entities "
                  f"({path.stat().st_size / 2**20:,.0f} MiB gzipped) in {time.perf_counter() - start:.0f} s")
        _, _, floor, _ = measure("import", path)
        print("peak memory, one fresh process each: the process's resident peak; with workers, also the")
        print("sampled peak of the process and its workers together (proportional set sizes)")
        print(f"  import rpa-sim only                               {floor:8,.0f} MiB")
        streamed, seconds, peak, _ = measure("stream", path)
        print(f"  stream {streamed:,} records                       {peak:8,.0f} MiB  ({seconds:.0f} s)")
        for workers in args.workers:
            rows, seconds, peak, together = measure(f"evaluate-{workers}", path)
            with_workers = f", {together:,.0f} MiB with its workers" if workers > 1 else ""
            print(f"  evaluate {rows:,} entity rows, {workers} worker{'s' if workers > 1 else ' '}  {peak:8,.0f} MiB"
                  f"{with_workers}  ({seconds:.0f} s, {streamed / seconds:,.0f} documents/s; "
                  f"{(peak - floor) / rows * 2**20:.0f} bytes per entity row above the floor)")


if __name__ == "__main__":
    main()
