"""Grounding: where a text is found among a document's OCR words (METRICS.md §4, "Location").

A text (a KIE value, a VQA answer) is placed on the run of OCR words that
matches it best: runs of 1 to ``n + 2`` consecutive words (``n`` = the text's
word count) in a page's reading order, never across pages nor across a change
of the words' ``segment``, scored by NLS against the normalised text; ties go
to the earlier page, then the earlier first word, then the shorter run. The
best run's NLS is the text's *locatability*; the text is *located* iff it
exceeds :data:`LOCATION_THRESHOLD`. SMuDGE (:mod:`rpa_sim.evaluate.metrics.smudge`)
measures distances between located spans; routing uses locatability as a
grounding gate.

:func:`locate_many` and :func:`locatability_many` place all of a document's
texts at once; their results equal :func:`locate` and :func:`locatability`
called one text at a time. The design (exact-hit lookup, length bounds,
caches) and the rule for very long texts are in ``docs/metrics/grounding.md``.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import extractOne

from rpa_sim.evaluate.metrics.text import normalize_many

if TYPE_CHECKING:
    from rpa_sim.records.models import Document, Page

__all__ = [
    "LOCATION_THRESHOLD",
    "LONG_TEXT",
    "Span",
    "locate",
    "locate_many",
    "locatability",
    "locatability_many",
]

LOCATION_THRESHOLD = 0.3
"""A text is located iff its best span has an NLS strictly above this (appendix B.5)."""

LONG_TEXT = 2_000
"""Normalised length past which a text that cannot be located is not searched for.

A text longer than this, and more than 4 times longer than every span it
could be compared with, has NLS below 1/4 against all of them, so it is not
located; it is then given no span and a locatability of 0 instead of its
exact (small) best NLS, which would cost a full edit distance against every
span of the page (``docs/metrics/grounding.md``, "Long texts").
"""

_UNLOCATABLE_RATIO = 4
_PAGE_CACHE_SIZE = 256
# rapidfuzz may drop a candidate whose score is a rounding error above the
# cut-off, so the cut-off given to it stays this far below the running best;
# every comparison that decides the winner is exact.
_CUTOFF_SLACK = 1e-5
# Word and run separators of a page's lookup text: a normalised text separates its words by
# single spaces, and holds no tab.
_WORD_BREAK, _RUN_BREAK = " ", " \t "


@dataclass(frozen=True)
class Span:
    """A run of OCR words that best matches a text.

    Attributes
    ----------
    page : int
        Index of the page in the document.
    start, stop : int
        The span is ``page.words[start:stop]`` (words whose text normalises to
        the empty string are skipped and never start or end a span).
    text : str
        The span's normalised words joined by single spaces.
    bbox : tuple of float
        ``(x0, y0, x1, y1)``: the merged box of the span's words (appendix B.1).
    nls : float
        NLS between ``text`` and the normalised target.
    """

    page: int
    start: int
    stop: int
    text: str
    bbox: tuple[float, float, float, float]
    nls: float


class _Hit(NamedTuple):
    """The best candidate found so far: its score, page, first kept word and word count.

    ``start`` is None for an exact hit whose place was not asked for (see :func:`_best_hits`).
    """

    score: float
    page: int
    start: int | None
    length: int


class _Block(NamedTuple):
    """The texts of a page's spans of one word count that stay in one segment, by start."""

    texts: list[str]
    starts: list[int]
    shortest: int
    longest: int


class _PageIndex:
    """A page's normalised words, their segment runs and candidate spans, built once per page.

    Words that normalise to the empty string are dropped; ``positions`` maps
    the kept words back to ``page.words``. ``room[i]`` is how many kept words
    from word ``i`` to the end of its segment run, so a span of ``L`` words
    starting at ``i`` stays in one segment iff ``room[i] >= L``. ``lookup`` is
    the page's runs, their words joined by spaces, joined by `` \\t `` and
    with a space around: a normalised text is exactly some span iff it occurs
    in it with a space around. It is None when a word itself holds a space
    (then a text's words are not the span's words), and exact hits are found
    by the general search.
    """

    __slots__ = ("words", "positions", "room", "longest_run", "lookup", "_offsets", "_blocks")

    def __init__(self, texts: Sequence[str], segments: Sequence[Hashable]) -> None:
        normalised = normalize_many(texts)
        if all(normalised):
            self.positions: Sequence[int] = range(len(normalised))
        else:
            self.positions = [i for i, word in enumerate(normalised) if word]
            normalised = [normalised[i] for i in self.positions]
            segments = [segments[i] for i in self.positions]
        self.words = words = normalised
        count = len(words)
        changes = [i for i in range(1, count) if segments[i] != segments[i - 1]]
        room: list[int] = []
        runs = []
        for start, stop in zip([0, *changes], [*changes, count]) if count else ():
            room.extend(range(stop - start, 0, -1))
            runs.append(_WORD_BREAK.join(words[start:stop]))
        self.room = room
        self.longest_run = max(room, default=0)
        self._offsets: list[int] | None = None
        self._blocks: list[_Block] = []
        lookup = _WORD_BREAK + _RUN_BREAK.join(runs) + _WORD_BREAK if runs else ""
        # two spaces around each run and one between its words: any other space is in a word
        self.lookup = lookup if lookup.count(" ") == count + len(runs) else None

    def exact_start(self, pattern: str) -> int:
        """The first kept word of the first span ``pattern`` (a text with a space around) occurs at.

        The pattern must occur in ``lookup``.
        """
        assert self.lookup is not None, "exact hits are looked up on pages with a lookup text"
        offset = self.lookup.find(pattern)
        if self._offsets is None:
            offsets, position = [], 1
            for start in range(len(self.words)):
                offsets.append(position)
                position += len(self.words[start]) + (len(_RUN_BREAK) if self.room[start] == 1 else 1)
            self._offsets = offsets
        return bisect_left(self._offsets, offset + 1)

    def block(self, length: int) -> _Block:
        """The spans of ``length`` words that stay in one segment (``length <= longest_run``)."""
        words, room = self.words, self.room
        while len(self._blocks) < length:
            size = len(self._blocks) + 1
            if size == 1:
                texts, starts = words, list(range(len(words)))
            else:
                previous = self._blocks[-1]
                texts = [
                    text + " " + words[start + size - 1]
                    for text, start in zip(previous.texts, previous.starts)
                    if room[start] >= size
                ]
                starts = [start for start in previous.starts if room[start] >= size]
            lengths = list(map(len, texts))
            self._blocks.append(_Block(texts, starts, min(lengths), max(lengths)))
        return self._blocks[length - 1]

    def longest_candidate(self, length: int) -> int:
        """Characters in the longest span of at most ``length`` words that stays in one segment."""
        # ends[i]: characters of words[:i], one separator after each
        ends = [0, *accumulate(len(word) + 1 for word in self.words)]
        return max(
            (ends[start + min(length, room)] - ends[start] - 1 for start, room in enumerate(self.room)), default=0
        )

    def search(self, target: str, longest: int, best: _Hit | None, page_number: int) -> _Hit | None:
        """The better of ``best`` and the best span of at most ``longest`` words on this page.

        An equal score wins with an earlier page or first word; blocks come by
        increasing word count, so at one first word the shorter span stays. A
        block is skipped when no span in it can reach the running best
        (:func:`_length_bound`).
        """
        size = len(target)
        for length in range(1, min(longest, self.longest_run) + 1):
            block = self.block(length)
            if best is not None:
                bound = _length_bound(size, block.shortest, block.longest)
                if bound < best.score:
                    continue
            cutoff = 0.0 if best is None else max(0.0, best.score - _CUTOFF_SLACK)
            found = extractOne(target, block.texts, scorer=Levenshtein.normalized_similarity, score_cutoff=cutoff)
            if found is None:
                continue
            score, start = found[1], block.starts[found[2]]
            if best is None or score > best.score or (score == best.score and (page_number, start) < best[1:3]):
                best = _Hit(score, page_number, start, length)
        return best

    def span(self, page: Page, page_number: int, hit: _Hit) -> Span:
        """The span of ``hit`` (found on this index), its box merged from ``page``'s own words."""
        start = hit.start
        assert start is not None, "a span is built only for a hit found with its place"
        first, last = self.positions[start], self.positions[start + hit.length - 1]
        boxes = [page.words[i].bbox for i in self.positions[start : start + hit.length]]
        merged = (
            float(min(box[0] for box in boxes)),
            float(min(box[1] for box in boxes)),
            float(max(box[2] for box in boxes)),
            float(max(box[3] for box in boxes)),
        )
        return Span(
            page=page_number,
            start=first,
            stop=last + 1,
            text=" ".join(self.words[start : start + hit.length]),
            bbox=merged,
            nls=float(hit.score),
        )


def _length_bound(size: int, shortest: int, longest: int) -> float:
    """The largest NLS a text of ``size`` characters can reach against texts of ``shortest..longest``.

    ``Lev(a, b) >= |len(a) - len(b)|``; the bound is computed as rapidfuzz
    computes a similarity, ``1 - distance / longer``, so that it is the very
    float a span at the bound would score and ties are not lost to rounding
    (``3 / 7 < 1 - 4 / 7`` in floating point).
    """
    if size > longest:
        return 1.0 - (size - longest) / size
    if size < shortest:
        return 1.0 - (shortest - size) / shortest
    return 1.0


_by_identity: OrderedDict[int, tuple[Page, _PageIndex]] = OrderedDict()
_by_content: OrderedDict[Hashable, _PageIndex] = OrderedDict()


def _remember(cache: OrderedDict, key: Hashable, value: object) -> None:
    cache[key] = value
    if len(cache) > _PAGE_CACHE_SIZE:
        cache.popitem(last=False)


def _page_index(page: Page) -> _PageIndex:
    # Questions on one page usually share the Page object; records read
    # separately from JSON Lines carry equal but distinct copies, hence the
    # content key behind the identity shortcut. The entry keeps the page alive,
    # so its id cannot be reused while cached. Boxes are read from the page
    # itself when a span is built, so they are not part of the key.
    entry = _by_identity.get(id(page))
    if entry is not None and entry[0] is page:
        _by_identity.move_to_end(id(page))
        return entry[1]
    texts = tuple([word.text for word in page.words])
    segments = tuple([word.segment for word in page.words])
    key = (texts, segments)
    index = _by_content.get(key)
    if index is None:
        index = _PageIndex(texts, segments)
        _remember(_by_content, key, index)
    else:
        _by_content.move_to_end(key)
    _remember(_by_identity, id(page), (page, index))
    return index


def _best_hits(targets: Iterable[str], indexes: Sequence[_PageIndex], *, where: bool) -> dict[str, _Hit | None]:
    """The best candidate of each target (distinct, normalised, non-empty) over the pages, in order.

    An exact hit (NLS 1) is the best possible score, so a target found in a
    page's lookup text needs no other search; pages without a lookup text
    before it are searched in full (they may hold an earlier exact hit).
    Targets without any exact hit are searched page by page. Without
    ``where``, only scores are asked for and an exact hit's ``start`` is None.
    """
    hits: dict[str, _Hit | None] = {}
    for target in targets:
        words = target.count(" ") + 1
        longest = words + 2
        if len(target) > LONG_TEXT and all(
            _UNLOCATABLE_RATIO * index.longest_candidate(longest) < len(target) for index in indexes
        ):
            hits[target] = None
            continue
        pattern = _WORD_BREAK + target + _WORD_BREAK
        best: _Hit | None = None
        for page_number, index in enumerate(indexes):
            if index.lookup is None:
                best = index.search(target, longest, best, page_number)
                if best is not None and best.score == 1.0:
                    break
            elif pattern in index.lookup:
                best = _Hit(1.0, page_number, index.exact_start(pattern) if where else None, words)
                break
        else:
            # no exact hit anywhere: the pages without a lookup text are searched already
            for page_number, index in enumerate(indexes):
                if index.lookup is not None:
                    best = index.search(target, longest, best, page_number)
        hits[target] = best
    return hits


def locate_many(texts: Sequence[str], document: Document) -> list[Span | None]:
    """The best span of each text, all placed in one pass over the document (see :func:`locate`).

    Each page's index (normalised words, lookup text, spans by word count) is
    built once for all the texts, equal texts are placed once, and a text
    found verbatim costs one substring search.

    Parameters
    ----------
    texts : sequence of str
        The texts to place (answers or predicted values).
    document : Document
        The OCR words and their boxes.

    Returns
    -------
    list of (Span or None)
        One per text, equal to ``locate(text, document)``.

    Examples
    --------
    >>> from rpa_sim.records.models import Document, Page, Word
    >>> page = Page(width=100, height=100, words=[
    ...     Word(text="Total", bbox=(10, 10, 30, 20)), Word(text="12.50", bbox=(40, 10, 60, 20))])
    >>> [None if s is None else (s.text, s.nls) for s in locate_many(["12.50", "totl", ""], Document(pages=[page]))]
    [('12.50', 1.0), ('total', 0.8), None]
    """
    targets = normalize_many(texts)
    indexes = [_page_index(page) for page in document.pages]
    hits = _best_hits(dict.fromkeys(filter(None, targets)), indexes, where=True)
    spans = []
    for target in targets:
        hit = hits.get(target)  # an empty target has no entry
        spans.append(None if hit is None else indexes[hit.page].span(document.pages[hit.page], hit.page, hit))
    return spans


def locatability_many(values: Sequence[str], document: Document) -> np.ndarray:
    """The locatability of each value (see :func:`locatability`), all placed in one pass.

    Parameters
    ----------
    values : sequence of str
        Predicted values or answers.
    document : Document
        The OCR words.

    Returns
    -------
    numpy.ndarray
        float64, one per value, equal to ``locatability(value, document)``.

    Examples
    --------
    >>> from rpa_sim.records.models import Document, Page, Word
    >>> page = Page(width=100, height=100, words=[Word(text="LATTE", bbox=(0, 0, 10, 10))])
    >>> locatability_many(["latte", "latté", "", "latte"], Document(pages=[page])).tolist()
    [1.0, 0.8, 0.0, 1.0]
    """
    targets = normalize_many(values)
    hits = _best_hits(dict.fromkeys(filter(None, targets)), [_page_index(page) for page in document.pages],
                      where=False)
    # an empty target has no entry, and no hit
    return np.array([0.0 if (hit := hits.get(target)) is None else hit.score for target in targets],
                    dtype=np.float64)


def locate(text: str, document: Document) -> Span | None:
    """The run of OCR words that best matches ``text`` (section 3.1).

    Candidates are runs of 1 to ``n + 2`` consecutive words (``n`` = the
    word count of the normalised text) in each page's reading order, never
    across pages nor across a change of the words' ``segment``. The best
    candidate has the highest NLS to the normalised text; an exact match, when
    there is one, is therefore the answer. Ties go to the first candidate in
    reading order: earlier page, then earlier first word, then fewer words.

    No threshold is applied here: compare ``nls`` with
    :data:`LOCATION_THRESHOLD` to decide whether a text is located.

    Parameters
    ----------
    text : str
        The text to place (an answer or a predicted value).
    document : Document
        The OCR words and their boxes.

    Returns
    -------
    Span or None
        None when the text normalises to the empty string, the document has
        no words, or the text is too long to be located (:data:`LONG_TEXT`).

    Examples
    --------
    >>> from rpa_sim.records.models import Document, Page, Word
    >>> page = Page(width=100, height=100, words=[
    ...     Word(text="Total", bbox=(10, 10, 30, 20)),
    ...     Word(text="12.50", bbox=(40, 10, 60, 20)),
    ...     Word(text="EUR", bbox=(62, 10, 70, 20))])
    >>> span = locate("12.50 eur", Document(pages=[page]))
    >>> span.text, span.start, span.stop, span.bbox, span.nls
    ('12.50 eur', 1, 3, (40.0, 10.0, 70.0, 20.0), 1.0)
    """
    return locate_many([text], document)[0]


def locatability(prediction: str, document: Document) -> float:
    """Best-span NLS of a predicted value anywhere in the document.

    Needs no ground truth, so a routing policy can use it as a grounding gate
    (METRICS.md §4); it serves KIE values as well as VQA answers.

    Parameters
    ----------
    prediction : str
        The predicted answer or value.
    document : Document
        The OCR words.

    Returns
    -------
    float
        In [0, 1]; 0 when the prediction is empty, the document has no words,
        or the prediction is too long to be located (:data:`LONG_TEXT`).

    Examples
    --------
    >>> from rpa_sim.records.models import Document, Page, Word
    >>> page = Page(width=100, height=100, words=[Word(text="LATTE", bbox=(0, 0, 10, 10))])
    >>> locatability("latte", Document(pages=[page])), locatability("latté", Document(pages=[page]))
    (1.0, 0.8)
    """
    return float(locatability_many([prediction], document)[0])
