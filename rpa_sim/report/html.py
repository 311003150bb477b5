"""The report's HTML: escaping, tables, the closed details of a section, and the page around them.

Everything here is markup; no figure is computed or formatted here. A table's
cells arrive as text (formatted by :mod:`rpa_sim.common.formatting`) and are
escaped on the way out; a cell that reads as a number is right-aligned, so a
table can be checked against ``summary.json`` by formatting the JSON value.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence

__all__ = ["STYLE", "escape", "table", "collapsible", "document"]

#: The page's style sheet: one column of reading width, tables in boxes that scroll sideways with a sticky first
#: column, figures scaled to the column, smaller type and padding below 32rem (a phone), where the decision's
#: constraints stack (each constraint's name on a line, then what it needs, what it reaches and ✓/✗), so that
#: "✗ not met" is never scrolled out of sight.
STYLE = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:66rem;margin:2rem auto;padding:0 1rem;
color:#222;line-height:1.5;overflow-wrap:break-word}
h1{margin-bottom:.2rem}h2{margin-top:2.2rem;border-bottom:1px solid #ccc}
p.explain{color:#444}p.note{color:#444;font-size:.9rem;margin-top:0}
section.decision{border:2px solid #0072b2;border-radius:.4rem;padding:.2rem 1rem .6rem;background:#f5f9fc}
section.decision h2{margin-top:.8rem}p.lead{font-size:1.1rem}section.infeasible h2,p.warning{color:#a4161a}
li.unmet{color:#5c1a1b}dl.glossary dt{font-weight:700}dl.glossary dd{margin:0 0 .4rem 1rem}
details{border-bottom:1px solid #ccc}details>summary{cursor:pointer;padding:.1rem 0}
details>summary h2{display:inline;border:0;margin:0;font-size:1.25rem}details[open]>summary{margin-bottom:.6rem}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:separate;border-spacing:0;margin:.8rem 0;font-size:.9rem}
th,td{border:solid #ccc;border-width:0 1px 1px 0;padding:.25rem .5rem;vertical-align:top;background:#fff}
tr>:first-child{border-left-width:1px}thead tr>*,table:not(:has(thead)) tr:first-child>*{border-top-width:1px}
.scroll tr>:first-child{position:sticky;left:0;z-index:1;box-shadow:2px 0 2px -1px rgba(0,0,0,.15)}
th{background:#f3f3f3;text-align:left}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.best{font-weight:700;background:#fff1c2}td.best::after{content:"\\00a0\\25c6"}
td.loss{color:#a4161a;font-weight:700}td.loss::after{content:"\\00a0\\25bc"}
td.met{color:#006442;font-weight:700;white-space:nowrap}td.nowrap{white-space:nowrap}td.unmet{color:#a4161a;font-weight:700;white-space:nowrap}
dl.legend{font-size:.9rem;color:#444}dl.legend dt{font-weight:600;margin-top:.3rem}dl.legend dd{margin-left:1.2rem}
code{overflow-wrap:anywhere}
figure{margin:1rem 0}figure svg{display:block;width:100%;max-width:36rem;height:auto}
figcaption{color:#555;font-size:.9rem}
@media (max-width:32rem){body{padding:0 .6rem}section.decision{padding:.2rem .6rem .5rem}
table{font-size:.8rem}th,td{padding:.2rem .3rem}.scroll tr>:first-child{max-width:40vw}
#decision-targets,#decision-targets tbody{display:block}#decision-targets thead{display:none}
#decision-targets tr{display:block;border-top:1px solid #ccc}
#decision-targets td{display:inline-block;border:0;background:none}
#decision-targets td:first-child{display:block;position:static;max-width:none;box-shadow:none;font-weight:600}
#decision-targets td:nth-child(2)::before{content:"needed "}
#decision-targets td:nth-child(3)::before{content:"reached "}}
"""
# what a formatted figure looks like (rpa_sim.common.formatting): separators, decimals, a sign, a percent, or "-"
_NUMBER = re.compile(r"[-+]?(\d{1,3}(,\d{3})+|\d+)(\.\d+)?%?|-")


def escape(text: object) -> str:
    """``text`` as HTML text or an attribute value: ``&``, ``<``, ``>`` and both quotes escaped.

    >>> escape('A <small> "study" & its report')
    'A &lt;small&gt; &quot;study&quot; &amp; its report'
    """
    return html.escape(str(text), quote=True)


def table(header: Sequence[str], rows: Iterable[Sequence[str]], *, table_id: str,
          marks: dict[tuple[int, int], str] | None = None) -> str:
    """An HTML table in its own horizontally scrolling box; cells that look like numbers are right-aligned.

    Parameters
    ----------
    header : sequence of str
        The column headings.
    rows : iterable of sequences of str
        The body's cells, as text.
    table_id : str
        The table's ``id``; it also names the scrolling box to a screen reader.
    marks : dict of (int, int) to str, optional
        An extra class of a body cell by (row, column): ``best``, ``loss``, ``met``, ``unmet`` or ``nowrap``.

    Returns
    -------
    str

    Examples
    --------
    >>> print(table(["policy", "AUC"], [["confidence", "0.9123"]], table_id="t", marks={(0, 1): "best"}))
    <div class="scroll" role="region" tabindex="0" aria-label="t table">
    <table id="t">
    <thead><tr><th>policy</th><th>AUC</th></tr></thead>
    <tbody>
    <tr><td>confidence</td><td class="num best">0.9123</td></tr>
    </tbody>
    </table>
    </div>
    """
    marks = marks or {}
    head = "".join(f"<th>{escape(cell)}</th>" for cell in header)
    body = "".join(
        "<tr>" + "".join(_cell(cell, marks.get((row_index, column))) for column, cell in enumerate(row))
        + "</tr>\n" for row_index, row in enumerate(rows))
    # a scrolling region takes the keyboard focus so that it can be scrolled without a pointer
    return (f'<div class="scroll" role="region" tabindex="0" aria-label="{table_id} table">\n'
            f'<table id="{table_id}">\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}</tbody>\n</table>\n</div>')


def _cell(cell: str, mark: str | None) -> str:
    classes = " ".join(name for name in ("num" if _NUMBER.fullmatch(cell) else None, mark) if name)
    return f'<td class="{classes}">{escape(cell)}</td>' if classes else f"<td>{escape(cell)}</td>"


def collapsible(section: list[str]) -> list[str]:
    """A section (its ``<h2>`` first) as a ``<details>`` element, closed, its heading the part always shown.

    >>> collapsible(["<h2>Cost</h2>", "<p>text</p>"])
    ['<details>', '<summary><h2>Cost</h2></summary>', '<p>text</p>', '</details>']
    """
    heading, *body = section
    return ["<details>", f"<summary>{heading}</summary>", *body, "</details>"]


def document(title: str, body: list[str]) -> str:
    """A complete HTML page: the head (its title, the viewport, :data:`STYLE`), the title as ``<h1>``, ``body``.

    Parameters
    ----------
    title : str
        The page's title, as text (escaped here).
    body : list of str
        The HTML parts after the ``<h1>``, one a line.

    Returns
    -------
    str
        The page, ending with a newline.
    """
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title>", f"<style>{STYLE}</style>", "</head>", "<body>",
        f"<h1>{escape(title)}</h1>", *body, "</body>", "</html>", ""])
