"""Generator speed: documents per second written to ``.jsonl.gz``, against writing minimal records.

Target (issue 4): 100,000 receipts to a ``.jsonl.gz`` in well under a minute.

Each generator writes ``N`` records through the dict fast path
(``receipt_dicts`` / ``docvqa_dicts`` + ``write_generated``), then with
``write_dataset`` in ``W`` worker processes (same bytes), and, on a tenth of
``N``, through the validated records (``generate_*`` + ``rpa_sim.records.readers.write_records``).
The baseline, in the same run, writes ``N`` minimal KIE records (an id and one
entity each, no OCR) with ``write_generated``: it measures the machine rather
than the generators. A line on how fast this machine runs plain Python comes
first, for comparing runs on different machines.

    python benchmarks/bench_generate.py [N [W]]   # N defaults to 100000, W to min(4, CPUs)
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from rpa_sim.records.readers import write_records
from rpa_sim.records.synthetic import (
    docvqa_dicts,
    generate_docvqa,
    generate_receipts,
    receipt_dicts,
    write_dataset,
    write_generated,
)


def timed(work: Callable[[Path], int], path: Path) -> tuple[int, float]:
    start = time.perf_counter()
    count = work(path)
    return count, time.perf_counter() - start


def minimal(n: int) -> Iterable[dict]:
    for i in range(n):
        yield {"id": f"r-{i:06d}", "ground_truth": {"entities": [{"key": "total.total_price", "value": "12,000"}],
                                                     "groups": []},
               "prediction": {"entities": [{"key": "total.total_price", "value": "12,000", "confidence": 0.9}],
                              "groups": []}}


def python_speed() -> float:
    """Microseconds for ``sum(range(1000))``: about 8 on an unloaded recent desktop."""
    start = time.perf_counter()
    for _ in range(2000):
        sum(range(1000))
    return (time.perf_counter() - start) / 2000 * 1e6


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    workers = int(sys.argv[2]) if len(sys.argv) > 2 else min(4, os.cpu_count() or 1)
    small = max(1, n // 10)
    print(f"python speed: sum(range(1000)) takes {python_speed():.1f} us")
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder)
        rows = [
            ("baseline: minimal records, write_generated", n, "minimal.jsonl.gz",
             lambda path: write_generated(minimal(n), path)),
            ("receipts: receipt_dicts + write_generated", n, "receipts.jsonl.gz",
             lambda path: write_generated(receipt_dicts(n, seed=0), path)),
            ("docvqa: docvqa_dicts + write_generated", n, "docvqa.jsonl.gz",
             lambda path: write_generated(docvqa_dicts(n, seed=0), path)),
            (f"receipts: write_dataset, {workers} workers", n, "receipts-workers.jsonl.gz",
             lambda path: write_dataset("receipts", path, n=n, seed=0, workers=workers)),
            (f"docvqa: write_dataset, {workers} workers", n, "docvqa-workers.jsonl.gz",
             lambda path: write_dataset("docvqa", path, n=n, seed=0, workers=workers)),
            ("receipts: generate_receipts + write_records", small, "receipts-records.jsonl.gz",
             lambda path: write_records(generate_receipts(small, seed=0), path)),
            ("docvqa: generate_docvqa + write_records", small, "docvqa-records.jsonl.gz",
             lambda path: write_records(generate_docvqa(small, seed=0), path)),
        ]
        for label, count, name, work in rows:
            path = out / name
            written, seconds = timed(work, path)
            assert written == count
            print(f"{label:45s} {count:>8,d} docs {seconds:7.1f} s {count / seconds:9,.0f} docs/s "
                  f"{path.stat().st_size / 1e6:7.1f} MB")


if __name__ == "__main__":
    main()
