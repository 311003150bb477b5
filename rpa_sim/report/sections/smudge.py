"""The detail "SMuDGE against alpha" (questions with OCR only): what the weight of match against grounding
does to the score."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rpa_sim.report.svg import figure_html

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["smudge_section"]


def smudge_section(figures: dict[str, Figure]) -> list[str]:
    return [
        "<h2>SMuDGE against alpha</h2>",
        '<p class="explain">SMuDGE scores an answer on two things: whether it matches the right answer, and '
        "whether it is grounded (found on the page). Alpha weighs the two: at 0 only grounding counts, at 1 only "
        "the match. The curve shows the score before review for every alpha; the scenario's alpha is marked. "
        "Questions without OCR are left out.</p>",
        figure_html(figures["smudge-alpha"], "smudge-alpha", "Mean SMuDGE before review against alpha."),
    ]

