"""A field's OCR confidence: the lowest confidence of the OCR words its text spans, the signal ``ocr``.

Azure Document Intelligence (v3 and later) and Google Document AI give each OCR word (token) a confidence and
a span of the document's text, and each field the spans of its text. The field's own ``confidence`` stays its
confidence; the confidence the OCR engine had in the words the value was read from is a second, independent
score, kept as the value's named signal ``ocr`` (docs/signals.md): the weakest word decides, as one misread
character makes the value wrong.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable

__all__ = ["OCR_SIGNAL", "WordConfidences"]

#: The name of the signal.
OCR_SIGNAL = "ocr"


class WordConfidences:
    """The words' text spans and confidences, to find the lowest under a field's spans.

    Words are added in the order of the text, as both services list them, and never overlap.

    >>> words = WordConfidences()
    >>> for start, end, confidence in ((0, 5, 0.99), (6, 10, 0.42), (11, 15, 0.97)):
    ...     words.add(start, end, confidence)
    >>> words.lowest([(6, 15)]), words.lowest([(0, 3)]), words.lowest([(5, 6)])
    (0.42, 0.99, None)
    """

    def __init__(self) -> None:
        self.starts, self.ends, self.confidences = array("q"), array("q"), array("d")
        self.ordered = True

    def add(self, start: int, end: int, confidence: float) -> None:
        """A word spanning ``[start, end)`` of the text, read with ``confidence``."""
        if self.starts and start < self.starts[-1]:
            self.ordered = False
        self.starts.append(start)
        self.ends.append(end)
        self.confidences.append(confidence)

    def lowest(self, spans: Iterable[tuple[int, int]]) -> float | None:
        """The lowest confidence of the words overlapping any of ``spans``; None when no word does."""
        if not self.ordered:
            self._sort()
        found = [self.confidences[i] for start, end in spans
                 for i in range(bisect_right(self.ends, start), bisect_left(self.starts, end))]
        return min(found) if found else None

    def _sort(self) -> None:
        order = sorted(range(len(self.starts)), key=self.starts.__getitem__)
        self.starts = array("q", (self.starts[i] for i in order))
        self.ends = array("q", (self.ends[i] for i in order))
        self.confidences = array("d", (self.confidences[i] for i in order))
        self.ordered = True
