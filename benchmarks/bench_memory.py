"""Peak memory of evaluating 1M KIE entity predictions (target: below 1.5 GB).

Generates CORD-like receipts until they hold at least 1,000,000 predicted
entities, writes them to a temporary ``.jsonl.gz`` file, then measures the
peak resident memory of three fresh processes: one that only imports
rpa-sim (the floor), one that only streams the records, and one that builds
the full outcome table. Usage: ``python benchmarks/bench_memory.py [ENTITIES]``.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from itertools import count
from pathlib import Path

from rpa_sim.readers import write_records
from rpa_sim.generators import generate_receipts

CHILD = """
import resource, sys, time
from rpa_sim.readers import read_records
from rpa_sim.outcomes import evaluate_kie
mode, path = sys.argv[1], sys.argv[2]
start = time.perf_counter()
rows = 0
if mode == "stream":
    rows = sum(1 for _ in read_records(path))
elif mode == "evaluate":
    rows = len(evaluate_kie(read_records(path), grounding="given"))
print(rows, time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def until_entities(target: int):
    """Receipts from the generator until their predicted entities reach ``target``."""
    total = 0
    for start in count(0, 10_000):
        for record in generate_receipts(10_000, seed=start):
            if total >= target:
                return
            total += sum(len(g.entities) for g in record.prediction.groups) + len(record.prediction.entities)
            yield record.model_copy(update={"id": f"{start}-{record.id}"})


def measure(mode: str, path: Path) -> tuple[int, float, float]:
    out = subprocess.run([sys.executable, "-c", CHILD, mode, str(path)], capture_output=True, text=True, check=True)
    rows, seconds, peak_kib = out.stdout.split()
    return int(rows), float(seconds), int(peak_kib) / 1024


def main() -> None:
    target = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "receipts.jsonl.gz"
        start = time.perf_counter()
        documents = write_records(until_entities(target), path)
        print(f"generated {documents:,} receipts ({path.stat().st_size / 2**20:.0f} MiB gzipped) "
              f"in {time.perf_counter() - start:.0f} s")
        _, _, floor = measure("import", path)
        streamed, stream_s, stream_peak = measure("stream", path)
        rows, evaluate_s, peak = measure("evaluate", path)
    print("peak resident memory, one fresh process each (target: evaluate < 1,536 MiB for 1M entities)")
    print(f"  import rpa-sim only            {floor:8.0f} MiB")
    print(f"  stream {streamed:,} records       {stream_peak:8.0f} MiB  ({stream_s:.1f} s)")
    print(f"  evaluate {rows:,} entity rows  {peak:8.0f} MiB  ({evaluate_s:.1f} s, "
          f"{streamed / evaluate_s:,.0f} documents/s)")
    print(f"  evaluate / import-only: {peak / floor:.2f}x; outcome table cost above the floor: "
          f"{(peak - floor) / rows * 2**20:.0f} bytes per entity row")


if __name__ == "__main__":
    main()
