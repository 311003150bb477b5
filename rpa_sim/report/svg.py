"""A figure embedded in the page: inline SVG, the same bytes for the same figure.

The SVG needs nothing beside the page: its text stays text (``svg.fonttype:
none``, smaller and searchable, independent of font files), its ids come from a
fixed salt, and its metadata (date, creator, matplotlib's version) is left out.
The XML prologue and the namespace declarations are dropped: the HTML parser
puts inline SVG and ``xlink:href`` in their namespaces by itself, and without
the declarations the page holds no ``http`` at all.
"""

from __future__ import annotations

import io
import re

import matplotlib
from matplotlib.figure import Figure

from rpa_sim.report.html import escape

__all__ = ["svg", "figure_html"]

_PROLOGUE = re.compile(r"\A.*?(?=<svg\b)", re.DOTALL)
_NAMESPACES = re.compile(r'\s+xmlns(?::xlink)?="[^"]*"')


def svg(figure: Figure, name: str) -> str:
    """The figure as an inline ``<svg id="svg-NAME" role="img">`` element.

    Parameters
    ----------
    figure : Figure
        The figure, drawn.
    name : str
        The plot's name (:data:`rpa_sim.report.figures.PLOT_NAMES`), for the element's id.

    Returns
    -------
    str
    """
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "rpa-sim", "svg.fonttype": "none"}):
        figure.savefig(buffer, format="svg",
                       metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    text = _PROLOGUE.sub("", buffer.getvalue(), count=1)
    root_end = text.index(">")
    # the root id is set here, not through rcParams["svg.id"], which matplotlib 3.7 lacks
    return _NAMESPACES.sub("", text[:root_end]) + f' id="svg-{name}" role="img"' + text[root_end:].rstrip()


def figure_html(figure: Figure, name: str, caption: str) -> str:
    """The figure as ``<figure id="plot-NAME">``: its SVG and its caption (text, escaped here)."""
    return (f'<figure id="plot-{name}">\n{svg(figure, name)}\n'
            f"<figcaption>{escape(caption)}</figcaption>\n</figure>")
