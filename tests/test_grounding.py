"""Grounding (METRICS.md §4, location): spans, exact hits, ties, segments, the bulk path, long texts."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rpa_sim.evaluate import grounding
from rpa_sim.evaluate.grounding import (
    LONG_TEXT,
    locatability,
    locatability_many,
    locate,
    locate_many,
)
from rpa_sim.evaluate.metrics.text import nls, normalize, normalize_many
from rpa_sim.records.models import Document, Page, Word
from rpa_sim.records.synthetic import generate_receipts
from tests.support_pages import INVOICE, document_of, page_of, page_words


def test_locate_exact_normalised_match():
    span = locate("PAID  on", Document(pages=[INVOICE]))
    assert (span.page, span.start, span.stop, span.text, span.nls) == (0, 4, 6, "paid on", 1.0)
    assert span.bbox == (0.0, 100.0, 150.0, 120.0)


def test_locate_fuzzy_match():
    span = locate("12 mrch", Document(pages=[INVOICE]))
    assert (span.start, span.stop, span.text) == (6, 8, "12 march")
    assert span.nls == pytest.approx(1 - 1 / 8)


def test_spans_do_not_cross_segments():
    target = "EUR Paid"  # consecutive in reading order, but the line (segment) changes
    segmented = locate(target, Document(pages=[INVOICE]))
    assert segmented.nls < 1.0
    assert segmented.stop <= 4 or segmented.start >= 4
    plain = page_of(["Total", "amount:", "12,000", "EUR"], ["Paid", "on", "12", "March", "2024"], segmented=False)
    crossing = locate(target, Document(pages=[plain]))
    assert (crossing.start, crossing.stop, crossing.nls) == (3, 5, 1.0)
    # B.1: the merged box of a two-line span covers both lines in full.
    assert crossing.bbox == (0.0, 0.0, 350.0, 120.0)


def test_span_length_is_limited_to_n_plus_2_words():
    page = page_of(["ab", "cd", "ef", "gh"])
    span = locate("abcdefgh", Document(pages=[page]))  # one word: spans of 1 to 3 words
    assert span.stop - span.start == 3
    assert (span.start, span.nls) == (0, 0.5)  # "ab cd ef" and "cd ef gh" tie: the first wins
    assert locate("abcdefgh x", Document(pages=[page])).text == "ab cd ef gh"


def test_ties_go_to_the_first_in_reading_order():
    page = page_of(["12", "x", "12"], ["12"])
    assert locate("12", Document(pages=[page])).start == 0
    assert locate("12", Document(pages=[page_of(["y"]), page_of(["12"]), page_of(["12"])])).page == 1
    # Equal scores at one start: the shorter span.
    assert (locate("ab", Document(pages=[page_of(["ab", "", "zz"])])).stop) == 1


def test_blank_words_are_skipped_and_positions_kept():
    page = page_of(["up", " ", "to", "12"])
    span = locate("up to", Document(pages=[page]))
    assert (span.start, span.stop, span.nls) == (0, 3, 1.0)


@pytest.fixture
def normalised(monkeypatch) -> list[list[str]]:
    """The lists of texts grounding normalises, in order, from now on."""
    calls: list[list[str]] = []

    def counted(texts):
        texts = list(texts)
        calls.append(texts)
        return normalize_many(texts)

    monkeypatch.setattr(grounding, "normalize_many", counted)
    return calls


def test_equal_pages_share_one_index(normalised):
    # A page's words are normalised once, when its index is built; an equal copy (as read from another line
    # of JSON) finds that index, so only the text looked for is normalised again.
    first = page_of(["Total", "equal-pages-share-one-index"])  # words no other test indexes
    second = Page.model_validate(json.loads(first.model_dump_json()))
    assert first is not second
    span = locate("total", Document(pages=[first]))
    assert ["Total", "equal-pages-share-one-index"] in normalised
    normalised.clear()
    assert locate("total", Document(pages=[second])) == span
    assert normalised == [["total"]]


def test_locatability_is_text_nls():
    span = locate("amount 12.000", Document(pages=[INVOICE]))
    assert span.nls == nls("amount 12.000", span.text)


# --------------------------------------------------------------------------- the definition, one text at a time


def brute_force_locate(target: str, document: Document) -> tuple[int, int, int, float] | None:
    """(page, start, stop, nls) by the rule as written: every span, first best in reading order."""
    target = normalize(target)
    if not target:
        return None
    longest = len(target.split()) + 2
    best = None
    for page_number, page in enumerate(document.pages):
        kept = [(i, normalize(w.text), w.segment) for i, w in enumerate(page.words) if normalize(w.text)]
        for first in range(len(kept)):
            for last in range(first, min(first + longest, len(kept))):
                if kept[last][2] != kept[first][2] or any(k[2] != kept[first][2] for k in kept[first:last]):
                    break
                score = nls(target, " ".join(k[1] for k in kept[first : last + 1]))
                if best is None or score > best[3]:
                    best = (page_number, kept[first][0], kept[last][0] + 1, score)
    return best


@settings(max_examples=300, deadline=None)
@given(pages=st.lists(page_words, min_size=1, max_size=3), target=st.text(alphabet="ab1 ", max_size=7))
def test_locate_agrees_with_brute_force(pages, target):
    document = document_of(pages)
    span = locate(target, document)
    expected = brute_force_locate(target, document)
    assert (None if span is None else (span.page, span.start, span.stop, span.nls)) == expected


def expected_span(target: str, document: Document) -> tuple[int, int, int, str, tuple[float, ...], float] | None:
    """The brute-force best span with its text and merged box (appendix B.1)."""
    found = brute_force_locate(target, document)
    if found is None:
        return None
    page_number, start, stop, score = found
    kept = [w for w in document.pages[page_number].words[start:stop] if normalize(w.text)]
    box = tuple(float(f(w.bbox[i] for w in kept)) for i, f in enumerate((min, min, max, max)))
    return page_number, start, stop, " ".join(normalize(w.text) for w in kept), box, score


def as_tuple(span) -> tuple | None:
    return None if span is None else (span.page, span.start, span.stop, span.text, span.bbox, span.nls)


# Words that hold a space more often (pages without a lookup text).
spaced_words = st.lists(
    st.tuples(st.text(alphabet="ab1  ", max_size=4), st.sampled_from([0, 1, None])), min_size=0, max_size=12
)


@st.composite
def document_and_values(draw) -> tuple[Document, list[str]]:
    """Up to 3 pages and up to 8 values: random texts (ties abound in a 4-letter alphabet),
    empty ones, and runs of the pages' own words (exact hits, also across segments)."""
    pages = draw(st.lists(st.one_of(page_words, spaced_words), min_size=0, max_size=3))
    document = document_of(pages)
    texts = [text for page in pages for text, _ in page]
    cut = st.builds(lambda start, length: " ".join(texts[start : start + length]),
                    st.integers(0, max(len(texts) - 1, 0)), st.integers(1, 4)) if texts else st.just("")
    values = draw(st.lists(st.one_of(st.text(alphabet="ab1 ", max_size=7), cut, st.just("")), max_size=8))
    return document, values


@settings(max_examples=400, deadline=None)
@given(document_and_values())
def test_bulk_equals_the_definition_one_text_at_a_time(case):
    document, values = case
    expected = [expected_span(value, document) for value in values]
    assert [as_tuple(span) for span in locate_many(values, document)] == expected
    assert locatability_many(values, document).tolist() == [0.0 if e is None else e[5] for e in expected]
    assert [as_tuple(locate(value, document)) for value in values] == expected


@settings(max_examples=300)
@given(st.lists(st.one_of(st.text(), st.text(alphabet="ΣσςΑα \t\n\x1c\x85\xa0İIi\u0301.B"))))
def test_page_words_are_normalised_as_one_text_is(texts):
    # Lower-casing then folding whitespace equals normalize's strip, lower, fold, final sigmas included.
    assert normalize_many(texts) == [normalize(text) for text in texts]


def test_exact_hit_on_a_page_whose_words_hold_spaces():
    # "12 March" is one OCR word: no lookup text on that page, the full search finds it.
    spaced = Page(width=100, height=100, words=[Word(text="Paid", bbox=(0, 0, 9, 9)),
                                                 Word(text="12  March", bbox=(10, 0, 30, 9))])
    span = locate("12 march", Document(pages=[spaced]))
    assert (span.start, span.stop, span.text, span.nls) == (1, 2, "12 march", 1.0)
    assert locate("march", Document(pages=[spaced])).nls == pytest.approx(1 - 3 / 8)
    # An exact hit on a later page with a lookup text still loses to one on an earlier page without.
    plain = page_of(["12", "March"])
    assert locate("12 march", Document(pages=[spaced, plain])).page == 0
    assert locate("12 march", Document(pages=[plain, spaced])).page == 0


def test_equal_fuzzy_scores_go_to_the_earlier_page_whatever_the_search_order():
    # Page 1 has no lookup text, so it is searched first; page 0's equal score must still win.
    first, second = page_of(["abx"]), page_of(["q  q", "abx"])
    span = locate("aby", Document(pages=[first, second]))
    assert (span.page, span.start, span.nls) == (0, 0, pytest.approx(2 / 3))


def test_length_bound_keeps_float_ties():
    # 3 / 7 < 1 - 4 / 7 in floating point: a bound computed as 3 / 7 would skip "111",
    # which ties with the later "aa b" and comes first.
    page = page_of(["111", "bb", "1", "aa", "b"], segmented=False)
    span = locate("b1aa11b", Document(pages=[page]))
    assert (span.start, span.stop, span.nls) == (0, 1, 1 - 4 / 7)


def test_generated_receipts_match_the_definition():
    for record in generate_receipts(20, seed=3):
        values = [e.value for e in record.prediction.entities]
        values += [e.value for group in record.prediction.groups for e in group.entities]
        expected = [brute_force_locate(value, record.document) for value in values]
        assert locatability_many(values, record.document).tolist() == [0.0 if e is None else e[3] for e in expected]


# --------------------------------------------------------------------------- long texts


def test_a_long_text_that_cannot_be_located_is_not_searched():
    page = page_of(["Total", "xxxx"])
    target = "x" * (LONG_TEXT + 1)
    # Its exact best NLS is 4 / 2001 ("xxxx"): not located, and reported as 0 by the rule.
    assert brute_force_locate(target, Document(pages=[page]))[3] == pytest.approx(4 / (LONG_TEXT + 1))
    assert locate(target, Document(pages=[page])) is None
    assert locatability_many([target, "total"], Document(pages=[page])).tolist() == [0.0, 1.0]


def test_long_texts_that_could_be_located_are_searched_exactly():
    at_the_limit = "x" * LONG_TEXT
    page = page_of(["Total", "xxxx"])
    assert locatability(at_the_limit, Document(pages=[page])) == 1 - (LONG_TEXT - 4) / LONG_TEXT
    # Longer than LONG_TEXT but less than 4 times a span it may be compared with: searched.
    target = "y" * (LONG_TEXT + 1)
    wide = page_of(["y" * 600, "z"])
    span = locate(target, Document(pages=[wide]))
    assert (span.start, span.stop, span.nls) == (0, 1, 1 - (LONG_TEXT + 1 - 600) / (LONG_TEXT + 1))


def test_a_megabyte_value_on_a_receipt():
    record = next(iter(generate_receipts(1, seed=3)))
    value = ("lorem ipsum dolor " * 60_000)[:1_000_000]
    scores = locatability_many([value, record.prediction.entities[0].value], record.document)
    assert scores[0] == 0.0 and scores[1] > 0.0
    assert locate(value, record.document) is None


def test_equal_pages_share_one_index_whatever_their_boxes(normalised):
    first = page_of(["Total", "12", "index-whatever-the-boxes"])  # words no other test indexes
    moved = Page(width=500, height=1000, words=[w.model_copy(update={"bbox": (1, 1, 2, 2)}) for w in first.words])
    locate("12", Document(pages=[first]))
    normalised.clear()
    # Boxes come from the page the span is on.
    assert locate("12", Document(pages=[moved])).bbox == (1.0, 1.0, 2.0, 2.0)
    assert locate("12", Document(pages=[first])).bbox == (100.0, 0.0, 150.0, 20.0)
    assert normalised == [["12"], ["12"]]  # the moved page found the index of the first
