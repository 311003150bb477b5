"""How the report's figures look: the palette, each policy's line style and marker, axes and legends, and the
fitting of a figure to a phone's width.

Figures are :class:`matplotlib.figure.Figure` objects made directly, never
through pyplot: no global figure state, no interactive backend, nothing kept
alive between reports. A policy keeps one colour, line style and marker on every
figure of a page (:func:`style`, by its place in the scenario), so that it is
told apart in grey too. The panels a figure is drawn on are set up by the displays' base
(:mod:`rpa_sim.report.displays.base`).
"""

from __future__ import annotations

import textwrap
from typing import Any

from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.text import Annotation, Text
from matplotlib.ticker import Formatter

from rpa_sim.common.ticks import amount, decimals_of

__all__ = ["PALETTE", "FIGURE_WIDTH_INCHES", "SMALLEST_FONT_POINTS", "style", "label", "star", "label_point",
           "figure_legend", "fit_to_phone", "AmountFormatter", "amounts", "separate_point_labels"]

#: Okabe-Ito, safe for every common colour-blindness; yellow last, as it is faint on white. The last colour
#: marks the decided point (the star).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442")
# Line styles and markers tell the policies apart in black and white too; 8 and 10 styles repeat after 40
_LINE_STYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)), (0, (8, 2)), (0, (3, 1)), (0, (1, 1)))
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "h", "<", ">")
_LABEL_HEIGHTS = (6, -13, 15, -22)  # points above (+) or below (-) a labelled point, by policy
_POINT_LABEL = "point-label"  # the gid of a point's label, which separate_point_labels keeps apart from the others

#: Every figure's width in inches and its smallest text in points. At 390 CSS px a page's figure is about 371 px
#: wide and shows the 360 pt of a 5 in figure at 1.03 px a point, so no text renders below 10.3 px (9.7 px in the
#: decision's box); a desktop shows it at up to 36rem (576 px), 1.6 px a point.
FIGURE_WIDTH_INCHES = 5.0
SMALLEST_FONT_POINTS = 10.0


def style(index: int) -> dict[str, Any]:
    """The colour, line style and marker of the policy at ``index`` in the scenario (keyword arguments of
    :meth:`matplotlib.axes.Axes.plot`).

    >>> style(0), style(9)["marker"]
    ({'color': '#0072B2', 'linestyle': '-', 'marker': 'o'}, '>')
    """
    return {"color": PALETTE[index % len(PALETTE)], "linestyle": _LINE_STYLES[index % len(_LINE_STYLES)],
            "marker": _MARKERS[index % len(_MARKERS)]}


def label(axes: Axes, title: str, xlabel: str, ylabel: str) -> None:
    """The panel's title and axis labels, and a faint grid."""
    axes.set_title(title)
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.grid(True, alpha=0.3)


def star(axes: Axes, point: tuple[float, float] | None, *, size: float = 260) -> None:
    """Mark the decided point with the star the legend explains (nothing without a point)."""
    if point is not None:
        axes.scatter([point[0]], [point[1]], marker="*", s=size, color=PALETTE[-1], edgecolor="black", zorder=5)


def label_point(axes: Axes, text: str, x: float, y: float, *, index: int, between: tuple[float, float]) -> None:
    """Label a marked point towards the middle of the panel (whose x runs ``between``); successive policies
    take turns at four heights, so that the labels of close points do not run into each other."""
    left = x > (between[0] + between[1]) / 2.0
    axes.annotate(text, (x, y), xytext=(-6 if left else 6, _LABEL_HEIGHTS[index % len(_LABEL_HEIGHTS)]),
                  textcoords="offset points", fontsize=7, ha="right" if left else "left", gid=_POINT_LABEL)


class AmountFormatter(Formatter):
    """Tick labels of counts and money: thousands separated, with no more decimals than the ticks need to differ
    (``10,848`` rather than ``10848.1`` when the ticks are whole, ``0.25`` and ``0.50`` for quarters).

    >>> AmountFormatter().format_ticks([10000.0, 10500.0, 11000.0])
    ['10,000', '10,500', '11,000']
    >>> AmountFormatter().format_ticks([10848.0, 10848.1, 10848.2])
    ['10,848.0', '10,848.1', '10,848.2']
    >>> AmountFormatter().format_ticks([-0.0, 0.25, 0.5])
    ['0.00', '0.25', '0.50']
    """

    decimals = 0

    def set_locs(self, locs: Any) -> None:
        """The fewest decimals at which every tick prints as its value (:func:`~rpa_sim.common.ticks.decimals_of`)."""
        self.decimals = decimals_of(list(locs))

    def __call__(self, x: float, pos: int | None = None) -> str:
        return amount(x, self.decimals)


def amounts(axis: Axis) -> None:
    """Label ``axis``'s ticks with :class:`AmountFormatter` (an axis of counts or of money)."""
    axis.set_major_formatter(AmountFormatter())


def separate_point_labels(figure: Figure) -> None:
    """Keep the labels of marked points (:func:`label_point`) apart once the figure is laid out: a label saying
    what another at the same point says is dropped (two points at one τ share a label), and a label that would
    overlap one already placed moves away from it, above or below, until it overlaps none."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: PLC0415

    labels = [text for text in figure.findobj(Annotation) if text.get_gid() == _POINT_LABEL and text.get_visible()]
    if len(labels) < 2:
        return
    renderer = FigureCanvasAgg(figure).get_renderer()
    figure.draw_without_rendering()
    pixels_a_point = figure.dpi / 72.0
    placed: list[Annotation] = []
    for text in labels:
        if any(other.axes is text.axes and other.get_text() == text.get_text() and other.xy == text.xy
               for other in placed):
            text.set_visible(False)
            continue
        below: bool | None = None  # the way it moves, kept once chosen: past each label in its way, never back
        for _ in range(len(placed)):
            box = text.get_window_extent(renderer)
            hit = next((other.get_window_extent(renderer) for other in placed
                        if other.axes is text.axes and other.get_window_extent(renderer).overlaps(box)), None)
            if hit is None:
                break
            if below is None:
                below = box.y0 + box.y1 <= hit.y0 + hit.y1
            shift = (box.y1 - hit.y0 if below else hit.y1 - box.y0) / pixels_a_point + 1.0
            dx, dy = text.xyann
            text.xyann = (dx, dy - shift if below else dy + shift)
        placed.append(text)


def figure_legend(figure: Figure, handles: list[Line2D], *, points: str, targets: bool, baselines: bool,
                  starred: str | None) -> None:
    """One legend under the panels: the policies' lines, then what the marks mean.

    Parameters
    ----------
    figure : Figure
    handles : list of Line2D
        The policies' lines, labelled.
    points : str
        What a policy's filled marker means (an operating point, its cheapest τ).
    targets, baselines : bool
        Whether the targets (dashed grey) and reviewing everything and nothing (black square and triangle)
        are drawn.
    starred : str or None
        What the star means; None when there is none.
    """
    keys = [Line2D([], [], color="grey", marker="o", markerfacecolor="white", markeredgecolor="black",
                   linestyle="none", label=points)]
    if targets:
        keys.append(Line2D([], [], color="grey", linestyle="--", label="target"))
    if baselines:
        keys += [Line2D([], [], color="black", marker="s", linestyle="none", label="review everything"),
                 Line2D([], [], color="black", marker="^", linestyle="none", label="review nothing")]
    if starred is not None:
        keys.append(Line2D([], [], color=PALETTE[-1], marker="*", markersize=13, markeredgecolor="black",
                           linestyle="none", label=starred))
    figure.legend(handles=[*handles, *keys], loc="outside lower center", ncols=2, fontsize=8, frameon=False)


def fit_to_phone(figure: Figure) -> None:
    """Narrow the figure to :data:`FIGURE_WIDTH_INCHES` (its height by half as much, as a narrower figure has
    narrower panels to fill), raise every text below :data:`SMALLEST_FONT_POINTS` to it and break titles and x
    labels into lines that fit their panel, so that the figure scaled to a phone's width stays readable."""
    width, height = figure.get_size_inches()
    if width > FIGURE_WIDTH_INCHES:
        figure.set_size_inches(FIGURE_WIDTH_INCHES, height * (1.0 - 0.5 * (1.0 - FIGURE_WIDTH_INCHES / width)))
    for text in figure.findobj(Text):
        if float(text.get_fontsize()) < SMALLEST_FONT_POINTS:
            text.set_fontsize(SMALLEST_FONT_POINTS)
    for axes in figure.axes:  # tick labels are made at drawing time, from the axes' settings
        axes.tick_params(which="both", labelsize=SMALLEST_FONT_POINTS)
        for title in (axes.title, axes.xaxis.label):
            _wrap(title, axes.get_position().width * FIGURE_WIDTH_INCHES)
    for text in figure.texts:  # the figure's own title
        _wrap(text, FIGURE_WIDTH_INCHES)
    separate_point_labels(figure)


def _wrap(title: Text, inches: float) -> None:
    """Break a title into lines that fit ``inches`` (a character is about 0.6 of the font size wide)."""
    fits = max(12, int(inches * 72 / (0.6 * float(title.get_fontsize()))))
    title.set_text(textwrap.fill(title.get_text(), fits))
