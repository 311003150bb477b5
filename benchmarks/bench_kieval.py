"""KIEval speed: documents per second with outcome labels, against the official implementation.

Target (issue 2): at least 5,000 CORD-like documents/s in one process, labels included.

The documents are the 100 real CORD receipts of ``../shared/data/kieval_qwen72b_cord/csv``
(Qwen2-VL-72B predictions), evaluated repeatedly, plus generated CORD-like receipts.
The baseline is the official UpstageAI/KIEval code on the same CSV files, run in
this process when a checkout of it is named by ``KIEVAL_OFFICIAL`` (the folder
holding its ``KIEval/`` package); it is not part of rpa-sim.

    KIEVAL_OFFICIAL=/path/to/KIEval python benchmarks/bench_kieval.py
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import time
from pathlib import Path

from rpa_sim.evaluate.metrics.kieval import evaluate_document
from rpa_sim.evaluate.outcomes import evaluate_kie
from rpa_sim.records.importers.kieval_csv import import_kieval_csv, parse_kieval_csv, record_from_blocks
from rpa_sim.records.synthetic import generate_receipts

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
SAMPLE = SHARED / "data" / "kieval_qwen72b_cord" / "csv"
REPEATS = 50


def best_of(runs: int, work) -> float:
    """The fastest of a few runs, in seconds: the least disturbed by other load."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def official_baseline(gold: list[str], pred: list[str]) -> float | None:
    checkout = os.environ.get("KIEVAL_OFFICIAL")
    if not checkout:
        return None
    sys.path.insert(0, checkout)
    from KIEval.kieval import kieval as official_kieval

    shortlist = sorted({key for path in gold for key in _keys(path)})

    def work() -> None:
        with contextlib.redirect_stdout(io.StringIO()):
            for _ in range(REPEATS // 10):
                official_kieval(gold, pred, shortlist, "<empty>", "hungarian", "||", "\t", True, False,
                                print_score=False)

    return len(gold) * (REPEATS // 10) / best_of(3, work)


def _keys(path: str) -> list[str]:
    blocks = Path(path).read_text(encoding="utf-8").split("\n\n")
    return [key for block in blocks if block and block[0].isdigit() for key in block.split("\n")[1].split("\t")]


def main() -> None:
    if not SAMPLE.is_dir():
        sys.exit(f"{SAMPLE} is absent: this benchmark needs the shared sample beside the project")
    gold = sorted(str(p) for p in (SAMPLE / "gt").glob("*.csv"))
    pred = [str(SAMPLE / "pred" / Path(p).name) for p in gold]
    records = list(import_kieval_csv(SAMPLE)[0])
    documents = len(records)

    def parse_and_evaluate() -> None:
        for _ in range(REPEATS // 10):
            for g, p in zip(gold, pred):
                record = record_from_blocks(Path(g).stem, parse_kieval_csv(Path(g).read_text("utf-8")),
                                            parse_kieval_csv(Path(p).read_text("utf-8")))
                evaluate_document(record.ground_truth, record.prediction)

    def evaluate_only() -> None:
        for _ in range(REPEATS):
            for record in records:
                evaluate_document(record.ground_truth, record.prediction)

    def outcome_table() -> None:
        evaluate_kie(records * REPEATS, grounding="given")

    ours_from_csv = documents * (REPEATS // 10) / best_of(3, parse_and_evaluate)
    ours = documents * REPEATS / best_of(3, evaluate_only)
    table = documents * REPEATS / best_of(3, outcome_table)
    generated = list(generate_receipts(5000, seed=11))
    synthetic = len(generated) / best_of(3, lambda: evaluate_kie(generated, grounding="given"))

    print(f"KIEval on {documents} real CORD receipts (Qwen2-VL-72B), best of 3 runs")
    print(f"  rpa-sim, records -> counts + labels          {ours:>9,.0f} documents/s  (target >= 5,000)")
    print(f"  rpa-sim, records -> outcome table           {table:>9,.0f} documents/s")
    print(f"  rpa-sim, CSV files -> counts + labels       {ours_from_csv:>9,.0f} documents/s")
    print(f"  rpa-sim, generated receipts -> table        {synthetic:>9,.0f} documents/s")
    baseline = official_baseline(gold, pred)
    if baseline is None:
        print("  official KIEval: not measured (set KIEVAL_OFFICIAL to a checkout of UpstageAI/KIEval)")
    else:
        print(f"  official KIEval, CSV files -> counts        {baseline:>9,.0f} documents/s (no labels)")
        print(f"  ratio rpa-sim / official: CSV->counts {ours_from_csv / baseline:.2f}x, "
              f"records->counts {ours / baseline:.2f}x, records->table {table / baseline:.2f}x")


if __name__ == "__main__":
    main()
