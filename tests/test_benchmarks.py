"""The benchmarks still run: every script imports, and the baselines of earlier commits load.

Moves of modules once broke them silently (the benchmarks are scripts no test ran): a renamed helper,
baselines read from paths that had moved. Importing and loading are cheap (``git show`` and one ``exec``);
timing stays in the benchmarks. The baselines skip without git or without their commits (a shallow clone).
"""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _have_commit(commit: str) -> bool:
    if shutil.which("git") is None:
        return False
    found = subprocess.run(["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=BENCHMARKS,
                           capture_output=True, check=False)
    return found.returncode == 0


@pytest.fixture
def benchmarks_importable(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    yield
    for path in BENCHMARKS.glob("*.py"):
        sys.modules.pop(path.stem, None)


@pytest.mark.parametrize("script", sorted(path.stem for path in BENCHMARKS.glob("bench_*.py")))
def test_every_benchmark_imports_and_has_a_main(benchmarks_importable, script):
    module = importlib.import_module(script)
    assert callable(module.main)


def test_bench_evaluate_loads_the_metrics_of_its_baseline_commit(benchmarks_importable):
    import bench_evaluate

    if not _have_commit(bench_evaluate.BASELINE_COMMIT):
        pytest.skip(f"commit {bench_evaluate.BASELINE_COMMIT[:7]} is not in this clone (shallow?) or git is missing")
    bench_evaluate.load_baselines()
    baselines = bench_evaluate.BASELINES
    assert sorted(baselines) == ["anls", "anls_star", "kieval", "smudge", "text"]
    # the baseline's own code runs: one edit in five characters, and ANLS's 0.5 cut-off
    assert baselines["text"].nls("hello", "hallo") == pytest.approx(0.8)
    assert baselines["anls"].anls_question(["12.50 eur"], "12.50 eur") == 1.0
    assert baselines["anls"].anls_question(["abcd"], "wxyz") == 0.0
    # the KIEval the benchmark times against gives today's counts (it checks the same before printing)
    from rpa_sim.evaluate.metrics.kieval import evaluate_document
    from rpa_sim.records.synthetic import generate_receipts

    for record in generate_receipts(5, seed=11):
        old = baselines["kieval"].evaluate_document(record.ground_truth, record.prediction)
        new = evaluate_document(record.ground_truth, record.prediction)
        assert old.counts.as_tuple() == new.counts.as_tuple() and old.labels.tolist() == new.labels.tolist()
    # and the names it imported were today's modules only while it loaded
    assert "rpa_sim.text" not in sys.modules
    import rpa_sim.records

    assert sys.modules["rpa_sim.records"] is rpa_sim.records and not hasattr(rpa_sim.records, "Document")


def test_bench_reading_loads_the_reader_of_its_baseline_commit(benchmarks_importable, tmp_path):
    import bench_reading

    from rpa_sim.records.readers import read_records
    from rpa_sim.records.synthetic import write_dataset

    if not _have_commit(bench_reading.BASELINE_COMMIT):
        pytest.skip(f"commit {bench_reading.BASELINE_COMMIT} is not in this clone (shallow?) or git is missing")
    readers = bench_reading.previous_readers()
    path = tmp_path / "receipts.jsonl"
    write_dataset("receipts", path, n=12, seed=4)
    # the old reader reads the same records as today's: the benchmark compares like with like
    old = list(readers.read_records(path))
    assert [r.id for r in old] == [r.id for r in read_records(path)] and len(old) == 12
    assert "rpa_sim.errors" not in sys.modules and "rpa_sim.files" not in sys.modules


def test_bench_mapping_loads_the_importer_of_its_baseline_commit(benchmarks_importable, tmp_path):
    import bench_mapping

    if not _have_commit(bench_mapping.BASELINE_COMMIT):
        pytest.skip(f"commit {bench_mapping.BASELINE_COMMIT[:7]} is not in this clone (shallow?) or git is missing")
    source, mapping = bench_mapping.write_source(tmp_path, 20)
    _, old = bench_mapping.timed(bench_mapping.previous_mapping(), source, mapping, 1)
    _, new = bench_mapping.timed(bench_mapping.import_mapping, source, mapping, 1)
    assert old == new and len(new[0].prediction.entities) == 20
    assert {entity.confidence for entity in new[0].prediction.entities} == {0.87}
