"""Pages and documents laid out by hand, for the tests of grounding, SMuDGE and long values."""

from __future__ import annotations

from hypothesis import strategies as st

from rpa_sim.records.models import Document, Page, Word


def page_of(*lines: list[str], segmented: bool = True, width: float = 1000, height: float = 1000) -> Page:
    """Words laid out 100 px apart, 50 px wide, one line of text per 100 px; a segment per line."""
    words = [
        Word(
            text=text,
            bbox=(100 * column, 100 * row, 100 * column + 50, 100 * row + 20),
            segment=row if segmented else None,
        )
        for row, line in enumerate(lines)
        for column, text in enumerate(line)
    ]
    return Page(width=width, height=height, words=words)


#: an invoice of two lines, the second a date
INVOICE = page_of(["Total", "amount:", "12,000", "EUR"], ["Paid", "on", "12", "March", "2024"])

#: the words of one page as (text, segment) pairs over a small alphabet, so that spans repeat and tie
page_words = st.lists(
    st.tuples(st.text(alphabet="ab1 ", max_size=3), st.sampled_from([0, 1, None])), min_size=0, max_size=12
)


def document_of(pages: list[list[tuple[str, int | None]]]) -> Document:
    """A document of (text, segment) words on 50 x 80 pages, boxes along a diagonal."""
    return Document(
        pages=[
            Page(
                width=50,
                height=80,
                words=[Word(text=t, bbox=(3 * i, i, 3 * i + 2, i + 1), segment=s) for i, (t, s) in enumerate(p)],
            )
            for p in pages
        ]
    )
