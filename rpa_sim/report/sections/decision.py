"""The report's opening: the decision in at most 120 words and one figure.

It lays out what :func:`rpa_sim.study.told.told` says of the study's decision (the
words every page shows): a heading that says whether a plan meets the constraints,
what to run and what the policy does, the share that goes straight through, the team
per shift, the cost (a day, split by kind), each constraint met or not, the
alternatives when nothing is feasible (cheapest feasible first), the main risk and the
next step. Jargon links to the report's glossary (:func:`glossary_section`).
:func:`rpa_sim.report.page.render_report` puts the section first; everything else
follows it as details.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from rpa_sim.common.formatting import money
from rpa_sim.report.html import escape, table
from rpa_sim.report.svg import figure_html
from rpa_sim.study.told import GLOSSARY, Told, told

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from rpa_sim.study.run import ScenarioResult

__all__ = ["decision_section", "glossary_section", "glossary_id", "DECISION_WORDS"]

#: The most words the section's text may hold (its figure aside).
DECISION_WORDS = 120
_JARGON = re.compile("|".join(re.escape(word) for word in sorted(("KIEval_Aligned^τ", "ECE", "binds", "τ"),
                                                                  key=len, reverse=True)))


def glossary_id(term: str) -> str:
    """The id of a term's entry in the glossary.

    >>> glossary_id("KIEval_Aligned^τ"), glossary_id("★")
    ('glossary-kieval-aligned-tau', 'glossary-star')
    """
    named = {"τ": "tau", "★": "star", "✓ / ✗": "marks"}
    words = "".join(named.get(ch, ch) for ch in term.replace("^τ", "-tau"))
    return "glossary-" + re.sub(r"[^a-z0-9]+", "-", words.lower()).strip("-")


def linked(text: str) -> str:
    """``text`` escaped, its jargon linked to the glossary (each term once)."""
    seen: set[str] = set()

    def link(match: re.Match[str]) -> str:
        term = match.group(0)
        if term in seen:
            return term
        seen.add(term)
        return f'<a href="#{glossary_id(term)}">{term}</a>'

    return _JARGON.sub(link, escape(text))


def decision_section(result: ScenarioResult, figures: dict[str, Figure]) -> list[str]:
    """The section's HTML parts (``docs/report.md``, "The decision")."""
    said = told(result.summary)
    feasible = said.feasible
    parts = [f'<section class="decision{"" if feasible is not False else " infeasible"}" id="decision">',
             f"<h2>{escape(said.heading)}</h2>"]
    if said.sample is not None:
        parts.append(f'<p class="warning" id="decision-sample"><strong>{escape(said.sample)}</strong></p>')
    what = " ".join(sentence for sentence in (said.does, said.through) if sentence)
    # the heading already says no plan meets the constraints: the lead goes on with why
    lead = (said.lead + (f" {what}" if what else "")) if feasible else _sentence(said.lead.removeprefix(
        f"{said.heading}: "))
    parts.append(f'<p class="lead" id="decision-text">{linked(lead)}</p>')
    point = _point_parts(said)
    if not feasible:  # the ways out first, then the nearest point, which misses
        parts += _option_parts(said) if said.options else []
        nearest = escape(said.point or "")
        point[:0] = [f'<p id="decision-nearest"><strong>Nearest point</strong> (misses): {nearest}</p>']
    parts += point
    if said.risk is not None:
        parts.append(f'<p id="decision-risk"><strong>Main risk:</strong> {linked(said.risk)}</p>')
    parts.append(f'<p id="decision-next"><strong>Next step:</strong> {linked(said.next_step)}</p>')
    if "decision" in figures:
        caption = ("Quality against automation per policy; the star (★) is the decision." if feasible else
                   "Quality against automation per policy; no point meets every constraint, so none is starred.")
        parts.append(figure_html(figures["decision"], "decision", caption))
    return [*parts, "</section>"]


def _sentence(text: str) -> str:
    """``text`` with its first letter in capitals."""
    return text[:1].upper() + text[1:]


def _point_parts(said: Told) -> list[str]:
    """The decided (or nearest) point's team, cost and constraints."""
    parts = []
    if said.team is not None:
        parts.append(f'<p id="decision-team"><strong>Team:</strong> {escape(said.team)}.</p>')
    if said.cost is not None:
        split = "; ".join(f"{label} {money(value)}" for label, value in said.parts)
        parts.append(f'<p id="decision-cost"><strong>Cost:</strong> {escape(said.cost)}'
                     + (f" ({escape(split)})" if len(said.parts) > 1 and said.feasible else "") + ".</p>")
    if said.rows:
        marks = {}
        for index, row in enumerate(said.rows):
            marks.update({(index, 1): "nowrap", (index, 2): "nowrap", (index, 3): "met" if row.met else "unmet"})
        parts.append(table(["constraint", "needed", "reached", ""],
                           [[row.label, row.needed, row.reached, row.mark] for row in said.rows],
                           table_id="decision-targets", marks=marks))
    return parts


def _option_parts(said: Told) -> list[str]:
    """The alternatives when no plan meets the constraints, cheapest feasible first."""
    parts: list[str] = []
    items = []
    for option in said.options:
        items.append(f'<li class="{"met" if option.feasible else "unmet"}">{escape(option.line)}.</li>')
    parts += ['<p id="decision-options"><strong>Alternatives</strong>, cheapest feasible first:</p>',
              '<ol id="decision-alternatives">' + "".join(items) + "</ol>"]
    return parts


def glossary_section() -> list[str]:
    """The glossary the decision's jargon links to: each term and what it means here."""
    items = "".join(f'<dt id="{glossary_id(term)}">{escape(term)}</dt><dd>{escape(meaning)}</dd>'
                    for term, meaning in GLOSSARY.items())
    return ['<h2 id="glossary">Glossary</h2>', f'<dl class="glossary">{items}</dl>']
