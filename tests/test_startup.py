"""The command line starts fast (issue 9, part 3): importing it and building its parser pulls in nothing heavy.

A correctness test of laziness, not a timing: ``benchmarks/bench_startup.py`` measures the time.
"""

from __future__ import annotations

import pytest

from tests.conftest import modules_after

HEAVY = ("numpy", "scipy", "matplotlib", "pydantic", "yaml", "textual", "rich", "rapidfuzz", "rpa_sim.route.sweep",
         "rpa_sim.evaluate.outcomes", "rpa_sim.records.readers", "rpa_sim.report.page", "rpa_sim.study.run",
         "rpa_sim.tui")


def test_building_the_parser_imports_nothing_heavy():
    loaded = modules_after("from rpa_sim.cli.parser import build_parser\nbuild_parser().format_help()")
    assert sorted(name for name in loaded if name.split(".")[0] in HEAVY or name in HEAVY) == []
    assert {"rpa_sim.cli.entry", "rpa_sim.cli.parser"} <= loaded  # the probe did import what it tests


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["score", "--help"], ["sweep"], ["sweep", "--x"],
                                  ["run", "--workers", "0", "s"]])
def test_version_help_and_usage_errors_import_nothing_heavy(argv):
    loaded = modules_after(f"rpa_sim.cli.entry.main({argv!r})")
    assert sorted(name for name in loaded if name.split(".")[0] in HEAVY or name in HEAVY) == []


def test_score_from_a_table_file_never_imports_the_records_or_the_evaluation(tmp_path):
    # issue 10: from a table, score's time is reading the file; the records' models and the worker pools stay out
    from rpa_sim.evaluate.local import evaluate_records, evaluation
    from rpa_sim.evaluate.tablefile import write_table
    from rpa_sim.records.models import KIERecord

    record = KIERecord.model_validate({"id": "r1", "ground_truth": {"entities": [{"key": "total", "value": "9.50"}]},
                                       "prediction": {"entities": [{"key": "total", "value": "9.50",
                                                                    "confidence": 0.9}]}})
    table_file = tmp_path / "table.parquet"
    write_table(evaluate_records([record], evaluation("kie"), workers=1), table_file)
    loaded = modules_after(f"assert rpa_sim.cli.entry.main(['score', {str(table_file)!r}, '--json']) == 0")
    assert {"rpa_sim.evaluate.outcomes", "rpa_sim.evaluate.tablefile"} <= loaded
    # nor the matching of KIEval (a table holds its labels and counts), nor the other task's table (issue 32)
    assert sorted(loaded & {"rpa_sim.records.models", "rpa_sim.records.readers", "rpa_sim.evaluate.local",
                            "rpa_sim.evaluate.metrics.kieval", "rpa_sim.evaluate.metrics.kieval_batch",
                            "rpa_sim.evaluate.outcomes.vqa", "hashlib"}) == []


def test_the_tasks_are_listed_and_looked_for_without_importing_their_tables():
    loaded = modules_after("from rpa_sim.evaluate.outcomes import OUTCOME_TABLES\n"
                           "assert 'vqa' in OUTCOME_TABLES and 'ner' not in OUTCOME_TABLES\n"
                           "assert list(OUTCOME_TABLES) == ['kie', 'vqa'] and len(OUTCOME_TABLES) == 2")
    assert "rpa_sim.evaluate.outcomes.tasks" in loaded  # the probe did import what it tests
    assert "rpa_sim.evaluate.outcomes.vqa" not in loaded
