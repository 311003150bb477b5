"""KIEval in bulk (issue 32): a batch of documents evaluated at once gives, for each, what the per-document
implementation it replaced gave (commit 6292b03, read from git), and what the document alone gives."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rpa_sim.evaluate.metrics.kieval import evaluate_document
from rpa_sim.evaluate.metrics.kieval_batch import BatchOutcome, evaluate_batch
from rpa_sim.records.models import Extraction, PredictedExtraction

PROJECT = Path(__file__).resolve().parents[1]
BEFORE = "6292b03"  # the last commit of the per-document implementation

KEYS = ["menu.nm", "menu.price", "menu.cnt", "total.price", "sub.tax", "x", "date"]
VALUES = ["Latte", "latte", " Latte ", "Americano", "10.00", "10.0", "1", "", "  ", "Jus", "Juice", "abc def"]
NAMES = [None, None, "menu", "sub", "1"]
entity = st.tuples(st.sampled_from(KEYS), st.sampled_from(VALUES), st.sampled_from([0.2, 0.5, 0.9, None]))
group = st.tuples(st.sampled_from(NAMES), st.lists(entity, max_size=4))
side = st.tuples(st.lists(entity, max_size=4), st.lists(group, max_size=5))


def extraction(side_: tuple[list[Any], list[Any]], *, predicted: bool) -> Any:
    def entities(rows: list[Any]) -> list[dict[str, Any]]:
        return [{"key": k, "value": v, **({"confidence": c} if predicted else {})} for k, v, c in rows]

    data = {"entities": entities(side_[0]),
            "groups": [{"entities": entities(rows), **({} if name is None else {"name": name})}
                       for name, rows in side_[1]]}
    model = PredictedExtraction if predicted else Extraction
    return model.model_validate(data, context={"missing_confidence": True})


def document_of(batch: BatchOutcome, index: int) -> tuple[Any, ...]:
    """Document ``index``'s labels, corrections, additions, pairs and counts, as evaluate_document gives them."""
    rows = (batch.document == index).tolist()
    additions = [(batch.keys[k], v, g) for k, v, g, d in zip(batch.addition_key.tolist(), batch.addition_values,
                                                           batch.addition_group.tolist(),
                                                           batch.addition_document.tolist()) if d == index]
    return (batch.labels[rows].tolist(), [c for c, kept in zip(batch.corrections, rows) if kept], additions,
            [(g, p) for d, g, p in batch.pairs.tolist() if d == index], batch.counts[index].tolist())


def as_tuple(outcome: Any) -> tuple[Any, ...]:
    return (outcome.labels.tolist(), outcome.corrections, [(a.key, a.value, a.group) for a in outcome.additions],
            outcome.pairs, list(outcome.counts.as_tuple()))


@pytest.fixture(scope="module")
def before() -> ModuleType:
    sys.path.insert(0, str(PROJECT / "benchmarks"))
    try:
        from baseline_source import module_at

        subprocess.run(["git", "cat-file", "-e", f"{BEFORE}^{{commit}}"], cwd=PROJECT, check=True,
                       capture_output=True)
    except (ImportError, OSError, subprocess.CalledProcessError):
        pytest.skip(f"commit {BEFORE} is not in this clone (shallow?) or git is missing")
    finally:
        sys.path.remove(str(PROJECT / "benchmarks"))
    return module_at(BEFORE, "rpa_sim/evaluate/metrics/kieval.py", renamed={}, program="test_kieval_batch")


@settings(max_examples=60, deadline=None)
@given(documents=st.lists(st.tuples(side, side), min_size=1, max_size=6),
       value_match=st.sampled_from(["exact", "normalized"]))
def test_a_batch_gives_what_the_per_document_implementation_gave(before: ModuleType, documents: list[Any],
                                                                 value_match: str) -> None:
    pairs = [(extraction(gt, predicted=False), extraction(pred, predicted=True)) for gt, pred in documents]
    batch = evaluate_batch(pairs, value_match=value_match)  # type: ignore[arg-type]
    for index, (truth, prediction) in enumerate(pairs):
        expected = as_tuple(before.evaluate_document(truth, prediction, value_match=value_match))
        assert document_of(batch, index) == expected
        assert as_tuple(evaluate_document(truth, prediction, value_match=value_match)) == expected  # type: ignore


def test_an_empty_batch_and_empty_documents() -> None:
    assert evaluate_batch([]).counts.shape == (0, 13)
    empty = (Extraction.model_validate({}), PredictedExtraction.model_validate({}))
    batch = evaluate_batch([empty, empty])
    assert batch.counts[:, 0].tolist() == [1, 1] and batch.counts[:, 1:].sum() == 0
    assert batch.pairs.tolist() == [[0, 0, 0], [1, 0, 0]]


def test_the_assignment_is_scipys_own_function_without_scipy_optimize() -> None:
    # a fresh process: whether scipy.optimize is imported depends on what ran before
    code = ("import sys; from rpa_sim.evaluate.metrics import assignment; "
            "print('scipy.optimize' in sys.modules); "
            "from scipy.optimize import linear_sum_assignment; "
            "print(assignment.linear_sum_assignment is linear_sum_assignment)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True"]
