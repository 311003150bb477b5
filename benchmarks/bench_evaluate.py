"""Evaluation speed on one core (issue 10, section 3): receipts with OCR, grounding, KIEval, long values.

Target: ``evaluate_kie`` with grounding at >= 5,000 receipts/s on one core,
measured on already-parsed records (``generate_receipts(5000)``, generated
before timing). Every figure is printed beside a baseline measured in the same
run: the implementation of commit ``6a80339`` (before this work), read from git
and run in this process. Its grounding locates a document's values one at a
time; its KIEval is the previous ``evaluate_document``; its string similarity
is rapidfuzz's unbounded edit distance. The new results are checked to be
identical to the baseline's before any figure is printed.

Times are CPU seconds of this process (steadier than wall time on a shared
machine; the work is single-threaded), the best of ``--repeat`` runs. The long
values' baselines take minutes (the edit distance is quadratic), so they run
only with ``--long-baseline``.

    python benchmarks/bench_evaluate.py [--receipts 5000] [--repeat 3] [--long-baseline]
"""

from __future__ import annotations

import argparse
import sys
import time
import types
from collections.abc import Callable
from functools import partial
from unittest import mock

import numpy as np
from baseline_source import module_at

import rpa_sim.evaluate.grounding
import rpa_sim.evaluate.outcomes.kie
from rpa_sim.evaluate.grounding import locatability_many
from rpa_sim.evaluate.metrics.anls import anls_question
from rpa_sim.evaluate.metrics.anls_star import anls_star
from rpa_sim.evaluate.metrics.kieval import evaluate_document
from rpa_sim.evaluate.metrics.smudge import evaluate_question
from rpa_sim.evaluate.metrics.text import nls_bounded, nls_pairs
from rpa_sim.evaluate.outcomes import evaluate_kie
from rpa_sim.records.models import Document, KIERecord, Page, Word
from rpa_sim.records.synthetic import generate_receipts

BASELINE_COMMIT = "6a8033999884286b56df244dd2f7e1eb6992cd38"
BASELINES: dict[str, types.ModuleType] = {}
SEED = 11


def cpu_seconds(work: Callable[[], object], repeat: int) -> tuple[float, object]:
    """The fewest CPU seconds of ``repeat`` runs of ``work``, and its result; page indexes are built in each run."""
    best, result = float("inf"), None
    for _ in range(repeat):
        for module in (rpa_sim.evaluate.grounding, *BASELINES.values()):
            if hasattr(module, "_by_content"):
                module._by_content.clear()
                module._by_identity.clear()
        start = time.process_time()
        result = work()
        best = min(best, time.process_time() - start)
    return best, result


def values_of(record: KIERecord) -> list[str]:
    prediction = record.prediction
    return [e.value for e in prediction.entities] + [e.value for g in prediction.groups for e in g.entities]


def report(label: str, count: int, unit: str, new: float, old: float) -> None:
    print(f"  {label:<34} {count / new:>10,.0f} {unit}/s  baseline {count / old:>9,.0f} {unit}/s"
          f"  x{old / new:5.1f}")


def receipts(count: int, repeat: int, old_smudge: types.ModuleType, old_kieval: types.ModuleType) -> None:
    records = list(generate_receipts(count, seed=SEED))
    values = [values_of(record) for record in records]
    print(f"{count:,} generated receipts with OCR pages ({sum(map(len, values)) / count:.1f} predicted values and "
          f"{sum(len(r.document.pages[0].words) for r in records) / count:.1f} OCR words each), one core")

    def old_locatability_many(texts: list[str], document: Document) -> np.ndarray:
        return np.array([old_smudge.locatability(text, document) for text in texts], dtype=np.float64)

    def baseline_table():
        with mock.patch.object(rpa_sim.evaluate.outcomes.kie, "evaluate_document", old_kieval.evaluate_document), \
                mock.patch.object(rpa_sim.evaluate.grounding, "locatability_many", old_locatability_many):
            return evaluate_kie(records)

    new_seconds, table = cpu_seconds(lambda: evaluate_kie(records), repeat)
    old_seconds, old_table = cpu_seconds(baseline_table, repeat)
    for column in ("grounding", "outcome", "similarity", "key", "group", "document_counts"):
        if not np.array_equal(getattr(table, column), getattr(old_table, column)):
            sys.exit(f"bench_evaluate: column {column!r} differs from the baseline's")
    report("evaluate_kie with grounding", count, "receipts", new_seconds, old_seconds)

    new_seconds, located = cpu_seconds(
        lambda: [locatability_many(v, r.document).tolist() for v, r in zip(values, records)], repeat)
    old_seconds, old_located = cpu_seconds(
        lambda: [old_locatability_many(v, r.document).tolist() for v, r in zip(values, records)], repeat)
    if located != old_located:
        sys.exit("bench_evaluate: locatabilities differ from the baseline's")
    report("grounding alone", count, "receipts", new_seconds, old_seconds)

    new_seconds, outcomes = cpu_seconds(
        lambda: [evaluate_document(r.ground_truth, r.prediction) for r in records], repeat)
    old_seconds, old_outcomes = cpu_seconds(
        lambda: [old_kieval.evaluate_document(r.ground_truth, r.prediction) for r in records], repeat)
    if any(a.counts.as_tuple() != b.counts.as_tuple() or a.labels.tolist() != b.labels.tolist()
           or a.corrections != b.corrections for a, b in zip(outcomes, old_outcomes)):
        sys.exit("bench_evaluate: KIEval outcomes differ from the baseline's")
    report("KIEval alone (evaluate_document)", count, "receipts", new_seconds, old_seconds)


def repeat_letters(letters: str, size: int) -> str:
    return (letters * (size // len(letters) + 1))[:size]


def near_copy(original: str, edits: int) -> str:
    characters = list(original)
    for edit in range(edits):
        characters[edit * (len(original) // edits)] = "#"
    return "".join(characters)


def long_values(run_baseline: bool, old: dict[str, types.ModuleType]) -> None:
    print("long values, one run each" + ("" if run_baseline else " (baselines: --long-baseline, minutes)"))
    # 300 words without segments (OCR that gives no lines): every run of words is a candidate span
    page = Page(width=1000, height=1000, words=[
        Word(text=f"word{i % 97}", bbox=(30 * (i % 30), 30 * (i // 30), 30 * (i % 30) + 25, 30 * (i // 30) + 20))
        for i in range(300)])
    document = Document(pages=[page])
    # A runaway answer of words: the previous location searched runs of up to all the page's words.
    # Its baseline is timed on 100 KB only: at 100 KB it already takes minutes.
    for label, size in (("100 KB", 100_000), ("1 MB", 1_000_000), ("2 MB", 2_000_000)):
        answer = repeat_letters("lorem ipsum dolor sit amet ", size)
        baseline = partial(old["smudge"].evaluate_question, ["word5"], answer, document)
        timed(f"{label} VQA answer in words: SMuDGE question", partial(evaluate_question, ["word5"], answer, document),
              baseline if run_baseline and size == 100_000 else None)
    for size in (1_000_000, 2_000_000):
        first, second = repeat_letters("abcdefghijklm", size), repeat_letters("nopqrstuvwxyz", size)
        for name, new, baseline in long_pair_cases(f"{size // 1_000_000} MB", first, second, near_copy(first, 10), old):
            timed(name, new, baseline if run_baseline else None)


def long_pair_cases(label: str, first: str, second: str, copy: str, old: dict[str, types.ModuleType],
                    ) -> list[tuple[str, Callable[[], object], Callable[[], object]]]:
    """Each metric on two long texts (``copy`` is ``first`` 10 edits apart): the name, the new and the baseline."""
    return [
        (f"{label} pair, no common character: NLS", lambda: nls_bounded(first, second),
         lambda: old["text"].nls(first, second)),
        (f"{label} pair, 10 edits apart: NLS", lambda: nls_bounded(first, copy),
         lambda: old["text"].nls(first, copy)),
        (f"{label} pair, no common character: ANLS", lambda: anls_question([first], second),
         lambda: old["anls"].anls_question([first], second)),
        (f"{label} answer, 9-character truth: ANLS", lambda: anls_question(["12.50 eur"], first),
         lambda: old["anls"].anls_question(["12.50 eur"], first)),
        (f"{label} values: substitution similarity", lambda: nls_pairs([first], [second]).tolist(),
         lambda: old["text"].nls_pairs([first], [second]).tolist()),
        (f"{label} list leaves, no common character: ANLS*", lambda: anls_star([first], [second]),
         lambda: old["anls_star"].anls_star([first], [second])),
        (f"{label} leaf, 10 edits apart: ANLS*", lambda: anls_star(first, copy),
         lambda: old["anls_star"].anls_star(first, copy)),
    ]


def timed(name: str, new: Callable[[], object], baseline: Callable[[], object] | None) -> None:
    """One line: the CPU seconds of ``new`` (and of ``baseline`` when given) and the new result."""
    start = time.process_time()
    value = new()
    line = f"  {name:<46} {time.process_time() - start:8.3f} s"
    if baseline is not None:
        start = time.process_time()
        baseline()
        line += f"  baseline {time.process_time() - start:8.1f} s"
    print(line + f"  -> {_short(value)}")


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) < 60 else text[:57] + "..."


def load_baselines() -> None:
    """The metric modules of :data:`BASELINE_COMMIT`, which lived in ``rpa_sim/`` and ``rpa_sim/metrics/``."""
    renamed = {"rpa_sim.text": "rpa_sim.evaluate.metrics.text", "rpa_sim.records": "rpa_sim.records.models",
               "rpa_sim.metrics.anls": "rpa_sim.evaluate.metrics.anls"}
    for name, path in (("text", "rpa_sim/text.py"), ("anls", "rpa_sim/metrics/anls.py"),
                       ("smudge", "rpa_sim/metrics/smudge.py"), ("kieval", "rpa_sim/metrics/kieval.py"),
                       ("anls_star", "rpa_sim/metrics/anls_star.py")):
        BASELINES[name] = module_at(BASELINE_COMMIT, path, renamed=renamed, program="bench_evaluate")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--receipts", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--long-baseline", action="store_true")
    options = parser.parse_args()
    load_baselines()
    receipts(options.receipts, options.repeat, BASELINES["smudge"], BASELINES["kieval"])
    long_values(options.long_baseline, BASELINES)


if __name__ == "__main__":
    main()
