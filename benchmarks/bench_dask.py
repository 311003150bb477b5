"""Evaluation on Dask (issue 11): ``local:2`` against ``local:1`` for 6,000 generated receipts in 8 shards.

Target: at least 1.5x faster on 2 workers than on 1 (2 cores). Printed: the
wall time of evaluating the shards on each cluster once it is up (the best of
``--repeat`` runs; starting the cluster is timed apart), the same shards in
this process (``--workers 1``) for reference, the bytes a partition ships to
the driver (its result pickled, as Dask sends it), the driver's merge time
(:func:`rpa_sim.evaluate.sources.merge_shards`, the best of ``--repeat``), and what
per-partition sums over distinct thresholds would hold instead (distinct
confidences against rows). Every cluster's merged table is checked to be the
one-process table, byte for byte, before any figure is printed.

    python benchmarks/bench_dask.py [--receipts 6000] [--shards 8] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from rpa_sim.evaluate import cluster as on_dask
from rpa_sim.evaluate.settings import EvaluationSettings
from rpa_sim.evaluate.sources import (
    evaluate_shards,
    load_shard,
    merge_shards,
    resolve_shards,
    shard_kinds,
    write_partitions,
)
from rpa_sim.records.synthetic import write_dataset

SEED = 7


def make_shards(folder: Path, *, receipts: int, shards: int) -> tuple[Path, ...]:
    """``receipts`` generated receipts cut into ``shards`` files of (nearly) equal size."""
    whole = folder / "all.jsonl"
    write_dataset("receipts", whole, n=receipts, seed=SEED, workers=2)
    lines = whole.read_text().splitlines(keepends=True)
    bounds = np.linspace(0, len(lines), shards + 1).astype(int)
    (folder / "shards").mkdir()
    for index in range(shards):
        (folder / "shards" / f"part-{index:02d}.jsonl").write_text("".join(lines[bounds[index]:bounds[index + 1]]))
    return resolve_shards(folder / "shards")


def same_table(table: Any, reference: Any) -> bool:
    return all((getattr(table, name).tolist() == getattr(reference, name).tolist())
               if getattr(table, name).dtype.kind == "T"
               else getattr(table, name).tobytes() == getattr(reference, name).tobytes()
               for name in ("document_ids", "confidence", "outcome", "similarity", "document", "key", "value",
                            "document_counts", "addition_document"))


def timed_on_cluster(shards: tuple[Path, ...], address: str, repeat: int) -> tuple[float, float, list[Any]]:
    """Seconds to start the cluster, the best seconds to evaluate the shards on it, and the results."""
    started = time.perf_counter()
    with on_dask.connect(address) as client:
        client.wait_for_workers(int(address.split(":")[1]), timeout=120)
        startup = time.perf_counter() - started
        best, results = float("inf"), []
        for attempt in range(repeat):
            for shard in shards:  # a new stamp, so a new task: Dask would hand back the last run's results
                os.utime(shard, ns=(time.time_ns(), time.time_ns() + attempt))
            began = time.perf_counter()
            results = on_dask.evaluate_with_client(client, shards, evaluate_shard=load_shard,
                                                   settings=EvaluationSettings(task="kie"))
            best = min(best, time.perf_counter() - began)
    return startup, best, results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--receipts", type=int, default=6000)
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        shards = make_shards(Path(folder), receipts=args.receipts, shards=args.shards)
        began = time.perf_counter()
        local = evaluate_shards(shard_kinds(shards), EvaluationSettings(task="kie"), workers=1)
        one_process = time.perf_counter() - began
        reference = merge_shards(shard_kinds(shards), local, data=folder).table
        figures = {}
        for address in ("local:1", "local:2"):
            startup, best, results = timed_on_cluster(shards, address, args.repeat)
            if not same_table(merge_shards(shard_kinds(shards), results, data=folder).table, reference):
                sys.exit(f"bench_dask: the table of {address} differs from one process's")
            figures[address] = (startup, best, results)
        record_bytes = sum(shard.stat().st_size for shard in shards)
        write_partitions(figures["local:2"][2], shards, Path(folder) / "tables")
        table_bytes = sum(path.stat().st_size for path in (Path(folder) / "tables").iterdir())
    results = figures["local:2"][2]
    shipped = [len(pickle.dumps(result, protocol=5)) for result in results]
    merges = []
    for _ in range(args.repeat):
        began = time.perf_counter()
        merge_shards(shard_kinds(shards), results, data="shards")
        merges.append(time.perf_counter() - began)
    rows = [len(result.table) for result in results]
    distinct = [len(np.unique(result.table.confidence)) for result in results]
    entities = len(reference)

    print(f"{args.receipts:,} receipts in {args.shards} shards: {entities:,} predicted entities, "
          f"{reference.documents:,} documents")
    print(f"one process (--workers 1, no Dask): {one_process:.2f} s")
    for address, (startup, best, _) in figures.items():
        print(f"{address}: evaluation {best:.2f} s (best of {args.repeat}), cluster start {startup:.2f} s")
    speedup = figures["local:1"][1] / figures["local:2"][1]
    print(f"speedup local:2 / local:1: {speedup:.2f}x (target >= 1.5x)")
    print(f"bytes shipped per partition: mean {np.mean(shipped):,.0f}, min {min(shipped):,}, max {max(shipped):,} "
          f"({np.sum(shipped) / entities:,.0f} bytes per predicted entity)")
    print(f"driver merge of {args.shards} partitions: {min(merges) * 1000:.1f} ms (best of {args.repeat}), "
          f"{min(merges) / entities * 1e9:,.0f} ns per predicted entity")
    print(f"on disk: records {record_bytes / entities:,.0f} bytes per predicted entity (.jsonl with OCR), "
          f"partitioned outcome tables {table_bytes / entities:,.0f} (Parquet)")
    print(f"evaluation per predicted entity, one worker: {figures['local:1'][1] / entities * 1e6:.1f} us")
    print(f"per-threshold sums instead: {sum(distinct):,} distinct confidences for {sum(rows):,} entity rows "
          f"({sum(distinct) / sum(rows):.1%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
