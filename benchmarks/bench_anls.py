"""Throughput of rpa_sim's vectorised ANLS against the ``anls_star`` package, question by question.

100,000 synthetic DocVQA-like questions (amounts, dates, codes, names and short
phrases; a fifth of them with two or three accepted answers) and predictions
that are exact, differently cased or spaced, OCR-garbled, truncated or wrong.
The baseline, timed in the same run, is ``anls_score(tuple(answers), prediction)``
of the package per question. It takes about 0.4 ms a question, so it is run on
a seeded subsample of the questions and its time scaled to the whole corpus;
the scores are compared on that subsample.
Run with ``python benchmarks/bench_anls.py``.
"""

from __future__ import annotations

import bisect
import time

import numpy as np
from anls_star import anls_score

from rpa_sim.evaluate.metrics.anls import anls_scores

QUESTIONS = 100_000
BASELINE_QUESTIONS = 20_000
SEED = 7
WORDS = [
    "total", "amount", "invoice", "date", "st.", "louis", "children's", "hospital", "national", "cancer",
    "institute", "tobacco", "research", "company", "brown", "williamson", "philip", "morris", "report", "page",
    "figure", "table", "annual", "meeting", "board", "directors", "sales", "revenue", "net", "income", "tax",
    "department", "of", "health", "washington", "new", "york", "chicago", "memorandum", "confidential", "budget",
    "project", "marketing", "research", "development", "program", "university", "school", "medicine",
]
MONTHS = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November",
    "December",
]
OCR_CONFUSIONS = {"o": "0", "0": "o", "l": "1", "1": "l", "i": "l", "s": "5", "5": "s", "e": "c", "rn": "m"}


def pick(rng: np.random.Generator, cumulative: tuple[float, ...]) -> int:
    """An index drawn with the given cumulative probabilities (``Generator.choice`` with ``p`` is slow per call)."""
    return bisect.bisect(cumulative, rng.random())


def amount(rng: np.random.Generator) -> str:
    value = rng.integers(1, 10_000_000) / 100
    return f"${value:,.2f}" if rng.random() < 0.5 else f"{value:,.2f}"


def date(rng: np.random.Generator) -> str:
    day, month, year = rng.integers(1, 29), rng.integers(1, 13), rng.integers(1950, 2024)
    return f"{MONTHS[month - 1]} {day}, {year}" if rng.random() < 0.5 else f"{month:02d}/{day:02d}/{year}"


def phrase(rng: np.random.Generator) -> str:
    words = [WORDS[i] for i in rng.integers(len(WORDS), size=rng.integers(1, 6))]
    return " ".join(w.capitalize() if rng.random() < 0.3 else w for w in words)


def code(rng: np.random.Generator) -> str:
    letters = "".join(chr(ord("A") + i) for i in rng.integers(26, size=2))
    return f"{letters}{rng.integers(0, 10_000):04d}"


def answer(rng: np.random.Generator) -> str:
    return (amount, date, phrase, code)[pick(rng, (0.3, 0.5, 0.85))](rng)


def variants(first: str, rng: np.random.Generator) -> list[str]:
    """One to three accepted answers: the first, sometimes with a reworded or reformatted alternative."""
    accepted = [first]
    for _ in range(pick(rng, (0.8, 0.92))):
        accepted.append(first.replace("$", "").replace(",", "") if rng.random() < 0.5 else f"the {first.lower()}")
    return accepted


def garble(text: str, rng: np.random.Generator) -> str:
    characters = list(text)
    for _ in range(rng.integers(1, 4)):
        if not characters:
            break
        i = int(rng.integers(len(characters)))
        characters[i] = OCR_CONFUSIONS.get(characters[i].lower(), "x")
    return "".join(characters)


def prediction(accepted: list[str], rng: np.random.Generator) -> str:
    target = accepted[rng.integers(len(accepted))]
    kind = pick(rng, (0.45, 0.6, 0.8, 0.9))
    if kind == 0:
        return target
    if kind == 1:
        return f"  {target.upper()} " if rng.random() < 0.5 else target.lower().replace(" ", "  ")
    if kind == 2:
        return garble(target, rng)
    if kind == 3:
        return target[: max(1, len(target) // 2)]
    return answer(rng)


def corpus(rng: np.random.Generator) -> tuple[list[list[str]], list[str]]:
    answers = [variants(answer(rng), rng) for _ in range(QUESTIONS)]
    return answers, [prediction(a, rng) for a in answers]


def main() -> None:
    rng = np.random.default_rng(SEED)
    answers, predictions = corpus(rng)
    sample = np.sort(rng.choice(QUESTIONS, size=BASELINE_QUESTIONS, replace=False))

    start = time.perf_counter()
    ours = anls_scores(answers, predictions)
    ours_time = time.perf_counter() - start

    start = time.perf_counter()
    package = np.array([anls_score(tuple(answers[i]), predictions[i]) for i in sample])
    package_time = (time.perf_counter() - start) * QUESTIONS / BASELINE_QUESTIONS

    several = sum(len(a) > 1 for a in answers)
    print(f"ANLS on {QUESTIONS:,} questions ({several:,} with 2-3 accepted answers)")
    print(f"  anls_star package 1.0.1, per question: {package_time:8.3f} s  "
          f"(timed on a seeded subsample of {BASELINE_QUESTIONS:,} questions, scaled to {QUESTIONS:,})")
    print(f"  rpa_sim anls_scores, vectorised:       {ours_time:8.3f} s")
    print(f"  speed-up:                              {package_time / ours_time:8.1f}x   (target: at least 50x)")
    print(f"  ANLS on the subsample: {ours[sample].mean():.6f} (ours)  {package.mean():.6f} (package)")
    print(f"  max |ours - package| per question on the subsample: {np.abs(ours[sample] - package).max():.3g}")


if __name__ == "__main__":
    main()
