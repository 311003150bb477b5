"""Long values (docs/metrics/long-values.md): length bounds, the edit budget, megabyte values in seconds.

No test here asserts a time: each asserts the exact value that a bounded
computation must give, and each would take minutes if the bounds were lost.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rpa_sim.evaluate.grounding import locatability, locate
from rpa_sim.evaluate.metrics import text
from rpa_sim.evaluate.metrics.anls import anls_question, anls_scores
from rpa_sim.evaluate.metrics.anls_star import anls_star
from rpa_sim.evaluate.metrics.kieval import OUTCOME_NAMES, evaluate_document
from rpa_sim.evaluate.metrics.smudge import evaluate_question, match_score
from rpa_sim.evaluate.metrics.text import EDIT_BUDGET, nl, nls, nls_bounded, nls_matrix, nls_pairs, normalize
from rpa_sim.evaluate.outcomes import evaluate_kie
from rpa_sim.records.models import Document, Extraction, KIERecord, PredictedExtraction
from tests.support_pages import page_of

TWO_MB = 2_000_000


def repeat(letters: str, size: int) -> str:
    return (letters * (size // len(letters) + 1))[:size]


# Two texts without a common character: Lev = the longer length, so NLS = 0 exactly.
FIRST_HALF, SECOND_HALF = repeat("abcdefghijklm", TWO_MB), repeat("nopqrstuvwxyz", TWO_MB)


def near_copy(original: str, edits: int) -> str:
    """``original`` with ``edits`` characters replaced by one it lacks: Lev is exactly ``edits``."""
    characters = list(original)
    for edit in range(edits):
        characters[edit * (len(original) // edits)] = "#"
    return "".join(characters)


def test_budget_is_beyond_any_ordinary_value():
    # Two 100,000-character values are still compared exactly; two 2 MB ones are not.
    assert 100_000 * 100_000 <= EDIT_BUDGET < TWO_MB * TWO_MB
    assert EDIT_BUDGET // (2 * TWO_MB) == 10_000  # the band of a 2 MB pair, in edits


def test_2mb_pair_without_common_characters_scores_zero():
    assert nls(FIRST_HALF[:1000], SECOND_HALF[:1000]) == 0.0  # the definition, on a part
    assert nls_bounded(FIRST_HALF, SECOND_HALF) == 0.0
    assert nls_bounded(FIRST_HALF, SECOND_HALF, threshold=0.5) == 0.0
    assert nls_pairs([FIRST_HALF], [SECOND_HALF]).tolist() == [0.0]
    assert anls_question([FIRST_HALF], SECOND_HALF) == 0.0
    assert anls_scores([[FIRST_HALF]], [SECOND_HALF]).tolist() == [0.0]


def test_2mb_near_copy_scores_exactly():
    copy = near_copy(FIRST_HALF, 10)
    expected = 1.0 - 10 / TWO_MB
    assert nls_bounded(FIRST_HALF, copy) == expected
    assert nls_bounded(FIRST_HALF, copy, threshold=0.5) == expected
    assert anls_question([FIRST_HALF], copy) == expected
    assert nls_pairs([FIRST_HALF, "abc"], [copy, "abd"]).tolist() == [expected, 1 - 1 / 3]


def test_length_bound_decides_thresholded_pairs_of_any_size():
    # NL >= (2e6 - 5e5) / 2e6 = 0.75 > 0.5 from the lengths alone.
    assert nls_bounded(FIRST_HALF, FIRST_HALF[:500_000], threshold=0.5) == 0.0
    assert anls_scores([["total"], [FIRST_HALF[:500_000]]], [FIRST_HALF, FIRST_HALF]).tolist() == [0.0, 0.0]
    # A truncated copy: Lev is the length difference, NL = 0.75 exactly, kept at threshold 0.75.
    assert nls_bounded(FIRST_HALF, FIRST_HALF[:500_000], threshold=0.75) == 0.25
    assert nls_bounded(FIRST_HALF[-500_000:], FIRST_HALF) == 0.25
    # A long value against a short one is within the budget: exact, whatever the threshold.
    assert nls_bounded("abc", FIRST_HALF) == 1 - (TWO_MB - 3) / TWO_MB
    assert nls_pairs(["abc"], [FIRST_HALF]).tolist() == [1 - (TWO_MB - 3) / TWO_MB]


def test_smudge_match_of_a_2mb_prediction():
    assert match_score(["Coca Cola"], FIRST_HALF) == 0.0  # textual: ANLS, length bound
    assert match_score(["up to 12 milligrams"], "up to 12 " + FIRST_HALF) == 0.0  # hybrid text part
    assert match_score(["1200"], FIRST_HALF) == 0.0  # numeric: does not parse


def test_beyond_the_budget_pairs_are_exact_within_the_band_and_zero_past_it(monkeypatch):
    # 20 x 20 = 400 cells > 200: the band is 200 // (2 * 20) = 5 edits.
    monkeypatch.setattr(text, "EDIT_BUDGET", 200)
    base = "abcdefghijklmnopqrst"
    five, six = "#####" + base[5:], "######" + base[6:]
    assert nls_bounded(base, five) == nls(base, five) == 0.75
    assert nls(base, six) == 0.7 and nls_bounded(base, six) == 0.0
    assert nls_bounded(base, six, threshold=0.5) == 0.0  # within the threshold, past the band
    assert nls_bounded(base, base[:6], threshold=0.5) == 0.0  # the length bound needs no band
    assert nls_pairs([base, base, "ab"], [five, six, "ac"]).tolist() == [0.75, 0.0, 0.5]
    assert nls_pairs([base, base], [five, six], threshold=0.3).tolist() == [0.75, 0.0]
    assert nls_matrix([base, "ab"], [five, six]).tolist() == [[0.75, 0.0], [0.0, 0.0]]
    assert nls_matrix([base, "ab"], [five, "ac"], threshold=0.5).tolist() == [[0.75, 0.0], [0.0, 0.5]]
    assert anls_star([base, "ab"], [six, five]) == 0.75 / 2  # six is past the band: a leaf of 0
    assert anls_scores([[base], [base, six]], [five, six]).tolist() == [0.75, 1.0]
    # A subsequence (here a truncated copy, then one with characters dropped inside) needs no band.
    # (20 x 11 and 20 x 13 cells exceed the budget, and the length differences the band.)
    assert nls_bounded(base, base[:11]) == nls(base, base[:11]) == 0.55
    dropped = "".join(c for c in base if c not in "bdfhjln")
    assert nls_bounded(base, dropped, threshold=0.5) == nls(base, dropped) == 0.65
    assert nls(base, "#" + base[:11]) == 0.5 and nls_bounded(base, "#" + base[:11]) == 0.0  # not a subsequence
    # 10 x 10 = 100 cells is within the budget: exact far past 5 edits.
    assert nls_bounded("abcdefghij", "##########") == 0.0 and nls_bounded("abcdefghij", "abcdefg###") == 0.7


texts = st.text(alphabet="ab ", max_size=9)
thresholds = st.one_of(st.sampled_from([0.0, 0.3, 1 / 3, 0.5, 2 / 3, 1.0]), st.floats(0, 1))


@settings(max_examples=300, deadline=None)
@given(a=texts, b=texts, threshold=thresholds)
def test_bounded_forms_equal_the_definition_within_the_budget(a, b, threshold):
    exact = nl(a, b)
    assert nls_bounded(a, b) == nls(a, b)
    assert nls_bounded(a, b, threshold=threshold) == (1.0 - exact if exact <= threshold else 0.0)
    assert nls_pairs([a, b], [b, a]).tolist() == [nls(a, b), nls(b, a)]
    assert nls_pairs([a], [b], threshold=threshold).tolist() == [nls_bounded(a, b, threshold=threshold)]
    assert nls_matrix([a, b], [b]).tolist() == [[nls(a, b)], [nls(b, b)]]
    assert nls_matrix([a, b], [b], threshold=threshold).tolist() == [
        [nls_bounded(a, b, threshold=threshold)], [nls_bounded(b, b, threshold=threshold)]]
    assert anls_star(a, b, threshold=threshold) == nls_bounded(normalize(a), normalize(b), threshold=threshold)


def test_anls_star_of_2mb_leaves():
    copy = near_copy(FIRST_HALF, 10)
    assert anls_star(FIRST_HALF, SECOND_HALF) == 0.0
    assert anls_star(FIRST_HALF, copy) == 1.0 - 10 / TWO_MB
    assert anls_star({"notes": (FIRST_HALF, "n/a")}, {"notes": copy}) == 1.0 - 10 / TWO_MB
    # a list: every leaf against every leaf (one matrix), then the matching
    assert anls_star([FIRST_HALF, SECOND_HALF], [SECOND_HALF, copy]) == (1.0 + 1.0 - 10 / TWO_MB) / 2
    assert anls_star(["total", FIRST_HALF[:500_000]], [FIRST_HALF, "total"]) == 0.5  # the length bound


def test_anls_star_refuses_a_threshold_outside_0_1():
    with pytest.raises(ValueError, match=r"threshold must be a normalised distance in \[0, 1\], got 1.5"):
        anls_star("a", "b", threshold=1.5)


# --------------------------------------------------------------------------- evaluation of long values


def test_a_megabyte_vqa_answer():
    document = Document(pages=[page_of(["Total", "12.50", "EUR"])])
    prediction = repeat("lorem ipsum dolor ", 1_000_000)
    result = evaluate_question(["12.50 EUR"], prediction, document)
    assert (result.answer_type, result.match, result.located) == ("hybrid", 0.0, False)
    assert (result.distance, result.grounding, result.locatability) == (1.0, 0.0, 0.0)
    assert locate(prediction, document) is None and locatability(prediction, document) == 0.0


def test_kie_substitution_of_two_2mb_values():
    record = KIERecord.model_validate({
        "id": "long",
        "ground_truth": {"entities": [{"key": "notes", "value": FIRST_HALF}]},
        "prediction": {"entities": [{"key": "notes", "value": SECOND_HALF, "confidence": 0.5}]},
        "document": {"pages": [{"width": 100, "height": 100, "words": [{"text": "notes", "bbox": [0, 0, 9, 9]}]}]},
    })
    table = evaluate_kie([record])
    assert [OUTCOME_NAMES[o] for o in table.outcome] == ["substitution"]
    assert table.similarity.tolist() == [0.0]
    assert table.grounding.tolist() == [0.0]


def test_kie_substitution_pairs_of_long_values():
    # Two leftover values on each side: the pairing compares every long value with every other.
    copy = near_copy(FIRST_HALF, 10)
    truth = Extraction.model_validate({"entities": [{"key": "k", "value": FIRST_HALF},
                                                    {"key": "k", "value": SECOND_HALF}]})
    prediction = PredictedExtraction.model_validate({"entities": [
        {"key": "k", "value": near_copy(SECOND_HALF, 10), "confidence": 0.5},
        {"key": "k", "value": copy, "confidence": 0.5}]})
    outcome = evaluate_document(truth, prediction)
    assert outcome.labels.tolist() == [1, 1]
    assert outcome.corrections == [SECOND_HALF, FIRST_HALF]
    assert np.array_equal(nls_matrix([FIRST_HALF], [copy, SECOND_HALF]), [[1 - 10 / TWO_MB, 0.0]])
    assert math.isclose(nls_bounded(SECOND_HALF, near_copy(SECOND_HALF, 10)), 1 - 10 / TWO_MB)


@pytest.mark.parametrize("size", [10_001, 100_000])
def test_long_values_within_the_budget_are_exact(size):
    # 100,000 x 100,000 cells is within the budget: the exact distance, with the threshold's cut-off.
    copy = near_copy(FIRST_HALF[:size], 7)
    assert nls_bounded(FIRST_HALF[:size], copy, threshold=0.5) == 1 - 7 / size
    assert nls_bounded(FIRST_HALF[:size], SECOND_HALF[:size], threshold=0.5) == 0.0
