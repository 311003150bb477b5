"""Throughput of SMuDGE's per-question evaluation on synthetic 300-word pages.

Two layouts are timed: several questions per page (the page's span index is
built once and reused) and one page per question (every question pays for its
page). A straightforward Python-loop span search over the same questions is
timed in the same run as the baseline, and its results are compared with
``evaluate_question``'s. Run with ``python benchmarks/bench_smudge.py``.
"""

from __future__ import annotations

import math
import random
import string
import time

from rapidfuzz.distance import Levenshtein

from rpa_sim.evaluate.grounding import LOCATION_THRESHOLD
from rpa_sim.evaluate.metrics.smudge import evaluate_question, grounding_from_distance
from rpa_sim.evaluate.metrics.text import normalize
from rpa_sim.records.models import Document, Page, Word

WORDS_PER_PAGE = 300
WORDS_PER_LINE = 12
LINES_PER_SEGMENT = 4
PAGES_SHARED = 50
QUESTIONS_PER_PAGE = 20
PAGES_SEPARATE = 1000
BASELINE_QUESTIONS = 200


def synthetic_word(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.6:
        return "".join(rng.choices(string.ascii_letters, k=rng.randint(2, 10)))
    if kind < 0.85:
        return f"{rng.randint(0, 99_999):,}"
    return f"{rng.randint(0, 999)}.{rng.randint(0, 99):02d}"


def synthetic_page(rng: random.Random) -> Page:
    words = []
    for position in range(WORDS_PER_PAGE):
        line, column = divmod(position, WORDS_PER_LINE)
        x0, y0 = 40 + 75 * column, 40 + 50 * line
        words.append(
            Word(
                text=synthetic_word(rng),
                bbox=(x0, y0, x0 + rng.randint(30, 70), y0 + 20),
                segment=line // LINES_PER_SEGMENT,
            )
        )
    return Page(width=1000, height=40 + 50 * (WORDS_PER_PAGE // WORDS_PER_LINE + 1), words=words)


def perturb(text: str, rng: random.Random) -> str:
    characters = list(text)
    for _ in range(max(1, len(characters) // 6)):
        characters[rng.randrange(len(characters))] = rng.choice(string.ascii_lowercase + string.digits)
    return "".join(characters)


def synthetic_question(page: Page, rng: random.Random) -> tuple[list[str], str]:
    """A ground truth taken from the page and a prediction that is right, close, elsewhere or invented."""
    length = rng.randint(1, 4)
    start = rng.randrange(WORDS_PER_PAGE - length)
    truth = " ".join(word.text for word in page.words[start : start + length])
    kind = rng.random()
    if kind < 0.4:
        prediction = truth
    elif kind < 0.7:
        prediction = perturb(truth, rng)
    elif kind < 0.85:
        other = rng.randrange(WORDS_PER_PAGE - length)
        prediction = " ".join(word.text for word in page.words[other : other + length])
    else:
        prediction = "".join(rng.choices(string.ascii_lowercase, k=rng.randint(4, 16)))
    return [truth], prediction


def loop_locate(text: str, document: Document) -> tuple[int, tuple[float, ...], float] | None:
    """Best span by brute force: every run of 1..n+2 words, one rapidfuzz call each."""
    target = normalize(text)
    if not target:
        return None
    longest = len(target.split()) + 2
    best = None
    for page_number, page in enumerate(document.pages):
        words = [(normalize(word.text), word) for word in page.words]
        words = [(text, word) for text, word in words if text]
        for start in range(len(words)):
            for stop in range(start + 1, min(start + longest, len(words)) + 1):
                run = words[start:stop]
                if any(word.segment != run[0][1].segment for _, word in run):
                    break
                score = Levenshtein.normalized_similarity(target, " ".join(text for text, _ in run))
                if best is None or score > best[2]:
                    box = (
                        min(word.bbox[0] for _, word in run),
                        min(word.bbox[1] for _, word in run),
                        max(word.bbox[2] for _, word in run),
                        max(word.bbox[3] for _, word in run),
                    )
                    best = (page_number, box, score)
    return best


def loop_grounding(answers: list[str], prediction: str, document: Document) -> float:
    truth = loop_locate(answers[0], document)
    guess = loop_locate(prediction, document)
    distance = 1.0
    if truth is not None and guess is not None and guess[2] > LOCATION_THRESHOLD and guess[0] == truth[0]:
        page = document.pages[truth[0]]
        (tx0, ty0, tx1, ty1), (px0, py0, px1, py1) = truth[1], guess[1]
        dx = abs((tx0 + tx1) / 2 - (px0 + px1) / 2) / page.width
        dy = abs((ty0 + ty1) / 2 - (py0 + py1) / 2) / page.height
        distance = min(1.0, dx + dy)
    return grounding_from_distance(distance)


def timed(function, questions) -> tuple[tuple[float, float], list[float]]:
    """Wall-clock and CPU seconds of one pass, and its results.

    CPU time is printed beside wall time because the code is single-threaded:
    on a shared machine it is the steadier of the two.
    """
    wall, cpu = time.perf_counter(), time.process_time()
    results = [function(answers, prediction, document) for answers, prediction, document in questions]
    return (time.perf_counter() - wall, time.process_time() - cpu), results


def report(label: str, questions, seconds: tuple[float, float]) -> float:
    wall, cpu = seconds
    rate = len(questions) / wall
    print(
        f"{label:<42} {len(questions):>5} questions {wall:7.3f} s {rate:7.0f} questions/s"
        f" (CPU {cpu:7.3f} s {len(questions) / cpu:7.0f} questions/s)"
    )
    return rate


def main() -> None:
    rng = random.Random(20240917)
    shared_pages = [Document(pages=[synthetic_page(rng)]) for _ in range(PAGES_SHARED)]
    shared = [
        (*synthetic_question(document.pages[0], rng), document)
        for document in shared_pages
        for _ in range(QUESTIONS_PER_PAGE)
    ]
    rng.shuffle(shared)
    separate = []
    for _ in range(PAGES_SEPARATE):
        document = Document(pages=[synthetic_page(rng)])
        separate.append((*synthetic_question(document.pages[0], rng), document))

    print(f"{WORDS_PER_PAGE}-word pages, {WORDS_PER_LINE} words a line, a segment every {LINES_PER_SEGMENT} lines")
    # Each timed pass sees its pages for the first time, so index building is included.
    seconds, _ = timed(lambda a, p, d: evaluate_question(a, p, d).grounding, shared)
    rate_shared = report(f"evaluate_question, {QUESTIONS_PER_PAGE} questions a page", shared, seconds)
    seconds, fast_separate = timed(lambda a, p, d: evaluate_question(a, p, d).grounding, separate)
    rate_separate = report("evaluate_question, one page a question", separate, seconds)

    subset = separate[:BASELINE_QUESTIONS]
    seconds, slow = timed(loop_grounding, subset)
    rate_loop = report("Python-loop span search (baseline)", subset, seconds)
    agree = sum(math.isclose(a, b, rel_tol=0, abs_tol=1e-12) for a, b in zip(fast_separate, slow))
    print(f"baseline grounding agrees on {agree}/{len(subset)} questions")
    print(f"speed-up over the baseline: {rate_shared / rate_loop:.1f}x (shared pages), "
          f"{rate_separate / rate_loop:.1f}x (one page a question); target >= 1,000 questions/s")


if __name__ == "__main__":
    main()
