"""Reading speed against a plain ``json.loads`` loop over the same lines (issue 10, sections 2-3).

Three parts, every figure a ratio to a ``json.loads`` loop timed in the same run:

1. Candidates for reading and validating one line, on each record shape:
   generated receipts with OCR pages (KIE), generated DocVQA questions with OCR
   (VQA), and the real samples of ``../shared/data`` imported with
   ``rpa-sim import`` (repeated to ``--n`` lines) when that folder is there.
2. Whole readers: the reader of commit ``2220cc9`` (before this work, read
   from git and run in this process) and today's, iterated (pydantic records)
   and in batches (the evaluation path).
3. End to end: ``rpa-sim score FILE`` (a fresh process, start-up included) on
   generated receipts: the package of commit ``2220cc9`` (``git archive``d to
   a temporary folder, one process), and today's with each ``--workers``.

Times are wall-clock seconds, the best of ``--repeat`` runs: the machine is
shared, and the best run is the one least disturbed.

    python benchmarks/bench_reading.py [--n 5000] [--score-n 20000] [--repeat 5] [--workers 1 2]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable
from functools import partial
from pathlib import Path

import msgspec
from baseline_source import module_at, package_at
from pydantic import TypeAdapter

from rpa_sim.records import models as records_module
from rpa_sim.records.models import KIERecord, VQARecord, decode_fast
from rpa_sim.records.readers import read_records
from rpa_sim.records.synthetic import write_dataset

PROJECT = Path(__file__).resolve().parents[1]
SHARED = PROJECT.parent / "shared" / "data"
BASELINE_COMMIT = "2220cc9"
MODELS = {"kie": KIERecord, "vqa": VQARecord}
# the real samples: (name, task, the import command's arguments)
SAMPLES = [
    ("Qwen2-VL CORD predictions (kieval-csv)", "kie", ["kieval-csv", SHARED / "kieval_qwen72b_cord" / "csv"]),
    ("CORD ground truth with OCR", "kie", ["cord", SHARED / "cord" / "json"]),
    ("DocILE invoice with OCR", "kie", ["docile", SHARED / "docile"]),
    ("DUDE questions and answers", "vqa", ["dude", SHARED / "dude" / "DUDE_demo_gt.json", "--predictions",
                                           SHARED / "dude" / "DUDE_demo_submission_imperfect.json"]),
]


def best(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def each(function: Callable[[str], object], lines: list[str]) -> Callable[[], None]:
    # results are dropped as a stream drops them: keeping them would time the garbage collector
    def run() -> None:
        for line in lines:
            function(line)
    return run


def candidates(task: str) -> dict[str, tuple[Callable[[str], object], str]]:
    """Per-line readers and whether they keep today's messages (file, line, id, field path, wording)."""
    model = MODELS[task]
    adapter = TypeAdapter(model)
    struct = records_module._FAST_DECODERS[task].type  # the fast path's struct, for msgspec.convert

    def before(text: str) -> object:
        json.loads(text)
        return model.model_validate_json(text, strict=True)

    found = {
        "json.loads (baseline)": (json.loads, "-"),
        "before: json.loads, then pydantic model_validate_json": (before, "yes (the reference)"),
        "pydantic model_validate_json alone (one parse)": (
            lambda text: model.model_validate_json(text, strict=True),
            "no: JSON errors worded by pydantic, and no id for a line that fails"),
        "pydantic TypeAdapter.validate_json (one parse)": (
            lambda text: adapter.validate_json(text, strict=True), "no: as model_validate_json"),
        "msgspec structs, one parse (decode_fast)": (
            lambda text: decode_fast(task, text), "yes, with pydantic for what it declines"),
    }
    try:
        import orjson
    except ImportError:
        return found
    return {**found,
            "orjson.loads, then pydantic model_validate (lax)": (
                lambda text: model.model_validate(orjson.loads(text)),
                "no: lax mode takes \"0.9\" for a number; strict refuses the box lists"),
            "orjson.loads, then msgspec.convert to the structs": (
                lambda text: msgspec.convert(orjson.loads(text), struct), "as a fast path only")}


def previous_readers() -> types.ModuleType:
    """``rpa_sim/readers.py`` as it was at :data:`BASELINE_COMMIT`."""
    return module_at(BASELINE_COMMIT, "rpa_sim/readers.py", program="bench_reading", renamed={
        "rpa_sim.errors": "rpa_sim.common.errors", "rpa_sim.files": "rpa_sim.common.files",
        "rpa_sim.records": "rpa_sim.records.models"})


def previous_package(folder: Path) -> Path:
    """The ``rpa_sim`` package of :data:`BASELINE_COMMIT`, unpacked under ``folder`` (for ``PYTHONPATH``)."""
    return package_at(BASELINE_COMMIT, folder, program="bench_reading")


def json_loop(path: Path) -> Callable[[], None]:
    def run() -> None:
        with path.open("rb") as handle:
            for line in handle:
                json.loads(line)
    return run


def batches_validated(path: Path) -> Callable[[], None]:
    def run() -> None:
        for batch in read_records(path).batches(256):
            batch.validate()
    return run


def repeated(path: Path, n: int) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return (lines * (n // len(lines) + 1))[:n]


def data_sets(folder: Path, n: int) -> list[tuple[str, str, list[str]]]:
    found = []
    for kind, task, name in (("receipts", "kie", "generated receipts with OCR"),
                             ("docvqa", "vqa", "generated DocVQA questions with OCR")):
        path = folder / f"{kind}.jsonl"
        write_dataset(kind, path, n=n, seed=7)
        found.append((name, task, path.read_text(encoding="utf-8").splitlines()))
    if not SHARED.is_dir():
        print(f"({SHARED} is absent: the real samples are left out)")
        return found
    for number, (name, task, arguments) in enumerate(SAMPLES):
        path = folder / f"sample-{number}.jsonl"
        subprocess.run([sys.executable, "-m", "rpa_sim.cli", "import", *map(str, arguments), "--out", str(path)],
                       check=True, capture_output=True)
        found.append((f"{name} (x{n // len(path.read_text().splitlines())})", task, repeated(path, n)))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=5000, help="lines per data set (default: 5000)")
    parser.add_argument("--score-n", type=int, default=20000, help="receipts for rpa-sim score (default: 20000)")
    parser.add_argument("--repeat", type=int, default=5, help="runs per figure, the best kept (default: 5)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="rpa-sim score --workers (default: 1 2)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        print("1. one line read and validated: records/s, and time / json.loads loop's (same run)")
        for name, task, lines in data_sets(Path(folder), args.n):
            print(f"\n{name}: {len(lines):,} lines, {sum(map(len, lines)) / len(lines) / 1024:.1f} KiB each")
            base = best(each(json.loads, lines), args.repeat)
            for candidate, (function, kept) in candidates(task).items():
                seconds = best(each(function, lines), args.repeat)
                print(f"  {candidate:55s} {len(lines) / seconds:9,.0f}/s  {seconds / base:5.2f}x  messages: {kept}")

        print("\n2. whole readers on the generated receipts (lines, ids, duplicates, validation)")
        path = Path(folder) / "receipts.jsonl"
        lines = len(path.read_text().splitlines())
        base = best(json_loop(path), args.repeat)
        baseline = previous_readers()
        for name, run in (("json.loads loop (baseline)", json_loop(path)),
                          (f"reader of {BASELINE_COMMIT}, iterated",
                           lambda: sum(1 for _ in baseline.read_records(path))),
                          ("reader now, iterated (pydantic records)", lambda: sum(1 for _ in read_records(path))),
                          ("reader now, in batches (evaluation path)", batches_validated(path))):
            seconds = best(run, args.repeat)
            print(f"  {name:55s} {lines / seconds:9,.0f}/s  {seconds / base:5.2f}x")

        print(f"\n3. rpa-sim score end to end (a fresh process) on {args.score_n:,} generated receipts with OCR")
        path = Path(folder) / "score.jsonl"
        write_dataset("receipts", path, n=args.score_n, seed=8)
        base = best(json_loop(path), args.repeat)
        print(f"  json.loads loop over the same lines                      {base:6.2f} s")
        score = [sys.executable, "-m", "rpa_sim.cli", "score", str(path)]
        before = previous_package(Path(folder) / "before")
        # run from that folder: ``python -m`` looks in the working directory first (the project's, here)
        seconds = best(lambda: subprocess.run(score, check=True, capture_output=True, cwd=before,
                                              env={**os.environ, "PYTHONPATH": str(before)}), args.repeat)
        print(f"  rpa-sim score of {BASELINE_COMMIT}                                {seconds:6.2f} s  "
              f"{seconds / base:5.2f}x")
        for workers in args.workers:
            command = [*score, "--workers", str(workers)]
            seconds = best(partial(subprocess.run, command, check=True, capture_output=True), args.repeat)
            print(f"  rpa-sim score --workers {workers:<3d}                              {seconds:6.2f} s  "
                  f"{seconds / base:5.2f}x")


if __name__ == "__main__":
    main()
