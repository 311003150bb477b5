"""Sweep speed (issue 3 targets), all measured in this run:

- the exact sweep over 1M entity predictions takes at most 1 s after evaluation,
  and at most 1.5x one ``score`` (read + evaluate) of the same data;
- at least 100x faster than re-evaluating the records at 101 thresholds;
- a point query (every figure at one threshold) answers in under 10 ms.

Usage: ``python benchmarks/bench_sweep.py [ENTITIES]`` (default 1,000,000).
The re-evaluation baseline runs on a 500-document slice (101 full evaluations
of 1M entities would take the better part of an hour); the sweep is timed on
the same slice for that ratio.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from bench_memory import write_data

from rpa_sim.evaluate.outcomes import evaluate_kie
from rpa_sim.records.models import KIERecord
from rpa_sim.records.readers import read_records
from rpa_sim.records.synthetic import generate_receipts
from rpa_sim.route.policies import load_policy
from rpa_sim.route.reviewer import Reviewer
from rpa_sim.route.sweep import Sweeper


def timed(work):
    start = time.perf_counter()
    result = work()
    return result, time.perf_counter() - start


def reevaluate(records: list[KIERecord], thresholds: np.ndarray) -> list[float]:
    """The baseline: at each threshold, correct what is reviewed in the records and evaluate again."""
    figures = []
    for threshold in thresholds:
        corrected = []
        table = evaluate_kie(records)
        for index, record in enumerate(records):
            rows = table.document == index
            reviewed = table.confidence[rows] < threshold
            labels, corrections = table.outcome[rows], table.correction[rows]
            data = record.model_dump()
            row = 0
            for group in [data["prediction"]] + data["prediction"]["groups"]:
                kept = []
                for entity in group["entities"]:
                    if not (reviewed[row] and labels[row] == 2):
                        if reviewed[row] and labels[row] == 1:
                            entity["value"] = str(corrections[row])
                        kept.append(entity)
                    row += 1
                group["entities"] = kept
            corrected.append(KIERecord.model_validate(data))
        figures.append(evaluate_kie(corrected).counts.kieval_aligned)
    return figures


def main() -> None:
    target = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    policy = load_policy("confidence")
    reviewer = Reviewer(miss_rate=0.02, false_correction_rate=0.001)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "receipts.jsonl.gz"
        write_data(path, target)
        table, score_s = timed(lambda: evaluate_kie(read_records(path), grounding="given"))
    sweeper, build_s = timed(lambda: Sweeper(table, policy, reviewer=reviewer))
    curve, curve_s = timed(lambda: sweeper.curve("exact"))
    sweep_s = build_s + curve_s
    rng = np.random.default_rng(0)
    queries = rng.random(200)
    _, query_s = timed(lambda: [sweeper.at(q) for q in queries])

    print(f"{len(table):,} entity predictions in {table.documents:,} documents")
    print(f"  score (read + evaluate)          {score_s:8.2f} s")
    print(f"  exact sweep, {len(curve):,} thresholds  {sweep_s:8.3f} s  (sort {build_s:.3f} s + curve {curve_s:.3f} s; "
          f"target <= 1 s)")
    print(f"  sweep / score                    {sweep_s / score_s:8.3f}x  (target <= 1.5x)")
    print(f"  point query                      {query_s / len(queries) * 1000:8.3f} ms  (target < 10 ms)")

    records = list(generate_receipts(500, seed=5))
    grid = np.linspace(0, 1, 101)
    small = evaluate_kie(records)
    (_, naive_s) = timed(lambda: reevaluate(records, grid))
    (fast, fast_s) = timed(lambda: Sweeper(small, policy).curve(grid))
    check = reevaluate(records, grid[[0, 50, 90]])
    assert np.allclose(fast.metric[[0, 50, 90]], check, atol=1e-12), "sweep and re-evaluation disagree"
    print(f"on 500 documents ({len(small):,} predictions), 101 thresholds:")
    print(f"  re-evaluate at each threshold    {naive_s:8.2f} s")
    print(f"  exact sweep                      {fast_s * 1000:8.2f} ms")
    print(f"  speed-up                         {naive_s / fast_s:8.0f}x  (target >= 100x)")


if __name__ == "__main__":
    main()
