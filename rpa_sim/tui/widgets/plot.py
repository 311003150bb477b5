"""A plotext plot drawn once per size and theme, with marks that move over it cell by cell.

Rebuilding a plotext figure costs tens of milliseconds on a terminal-sized plot, too slow to
follow every threshold key. :class:`MarkedPlot` builds the figure (curves, axes) only when
the figure, the widget's size or the theme changes, keeps its lines, and draws the moving points
(operating points, the current threshold) over them. A moved mark repaints only the lines it
leaves and enters. The marks land on the same cells plotext's own scatter would put them in: the
cell comes from plotext's data-to-cell mapping on the limits and canvas of the last build
(plotext 5; a test compares the two drawings cell by cell).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from plotext import _utility as plotext_utility
from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.geometry import Region
from textual.strip import Strip
from textual.visual import Visual, visualize
from textual_plotext import PlotextPlot
from textual_plotext.plot import Plot

__all__ = ["Marker", "MarkedPlot"]


@dataclass(frozen=True)
class Marker:
    """How a mark looks: a one-cell ``symbol`` in a plotext ``color``, in reverse video when ``highlight``
    (the selected policy's point stands out from the others); ``label`` names it in a legend.

    Plotext's colours are names such as ``"red"`` or ``"orange+"`` (bright yellow on most terminals),
    integers 0-255 and RGB triples.
    """

    symbol: str
    color: str | int
    label: str | None = None
    highlight: bool = False

    def __post_init__(self) -> None:
        if cell_len(self.symbol) != 1:
            raise ValueError(f"a marker symbol must be one cell wide, got {self.symbol!r}")
        if not plotext_utility.is_color(self.color):
            raise ValueError(f"not a plotext colour: {self.color!r}")

    @property
    def style(self) -> Style:
        """The colour plotext itself gives this marker, as a Rich style."""
        return _marker_style(self.color, self.symbol, self.highlight)


@lru_cache(maxsize=256)
def _marker_style(color: str | int, symbol: str, highlight: bool) -> Style:
    # views make new markers at every threshold move: the colour is worked out once per look, not per mark
    ansi = plotext_utility.colors_to_ansi(color, plotext_utility.no_color, plotext_utility.no_color)
    spans = Text.from_ansi(ansi + symbol).spans
    style = spans[0].style if spans else Style()
    style = style if isinstance(style, Style) else Style.parse(style)
    return style + Style(reverse=True, bold=True) if highlight else style


class _Canvas(NamedTuple):
    """Where the data area of the last build lies, and the limits it maps."""

    columns: range
    rows: range
    xlim: tuple[float, float]
    ylim: tuple[float, float]
    height: int

    def cell(self, x: float, y: float) -> tuple[int, int] | None:
        """The (column, line) of a data point, or None when plotext would leave it out."""
        if not (math.isfinite(x) and math.isfinite(y)):
            return None
        column = plotext_utility.get_matrix_data([x], self.xlim, len(self.columns))[0]
        row = plotext_utility.get_matrix_data([y], self.ylim, len(self.rows))[0]
        if not (0 <= column < len(self.columns) and 0 <= row < len(self.rows)):
            return None
        return self.columns.start + column, self.height - 1 - (self.rows.start + row)


class MarkedPlot(PlotextPlot):
    """A :class:`PlotextPlot` whose figure is cached and whose marks are drawn over it.

    Call :meth:`draw` when the figure changes and :meth:`mark` when the points move.
    """

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None,
                 disabled: bool = False) -> None:
        super().__init__(name=name, id=id, classes=classes, disabled=disabled)
        self._figure: tuple = (lambda plt: None, (0.0, 1.0), (0.0, 1.0))
        self._version = 0
        self._built_key: tuple | None = None
        self._lines: list[Strip] = []
        self._canvas: _Canvas | None = None
        self._marks: tuple[tuple[float, float, Marker], ...] = ()
        self._cells: dict[int, list[tuple[int, Segment]]] = {}

    # -- the figure -----------------------------------------------------------------------------

    def draw(self, layers: Callable[[Plot], None], *, xlim: tuple[float, float], ylim: tuple[float, float]) -> None:
        """Replace the figure: ``layers(plt)`` draws it, on fixed limits so marks never rescale it.

        The legend belongs outside the plot (a plotext legend covers the curves' top-left corner):
        ``layers`` should not label what it plots.
        """
        if not (xlim[0] < xlim[1] and ylim[0] < ylim[1]):
            raise ValueError(f"plot limits must be increasing, got xlim={xlim!r}, ylim={ylim!r}")
        self._figure = (layers, xlim, ylim)
        self._version += 1
        self.refresh()

    def _draw_figure(self) -> None:
        layers, xlim, ylim = self._figure
        plt = self.plt
        plt.clear_figure()
        layers(plt)
        plt.xlim(*xlim)
        plt.ylim(*ylim)

    def _key(self) -> tuple:
        return self.size, self.app.theme, self.theme, self._version

    def _build(self) -> None:
        """Build the figure for the current size and theme and place the marks on it."""
        width, height = self.size
        self._draw_figure()
        text = self.render()
        # plotext's figure keeps what it drew in its monitor, which textual-plotext's stub leaves out
        monitor = self.plt.monitor  # type: ignore[attr-defined]
        columns, rows = monitor.matrix.Cols_canvas, monitor.matrix.Rows_canvas
        self._lines = Visual.to_strips(self, visualize(self, text, markup=False), width, height, self.visual_style)
        self._canvas = _Canvas(columns, rows, tuple(monitor.xlim[0]), tuple(monitor.ylim[0]), height)
        self._built_key = self._key()
        self._cells = self._place()

    # -- the marks ------------------------------------------------------------------------------

    def mark(self, marks: Sequence[tuple[float, float, Marker]]) -> None:
        """Show these marks (later ones on top) instead of the previous ones, repainting only changed lines."""
        self._marks = tuple(marks)
        if self._built_key != self._key():
            self.refresh()
            return
        before, self._cells = self._cells, self._place()
        width = self.size.width
        for line in sorted(before.keys() | self._cells.keys()):
            if before.get(line) != self._cells.get(line):
                self.refresh(Region(0, line, width, 1))

    def cell(self, x: float, y: float) -> tuple[int, int] | None:
        """The (column, line) a data point is drawn at in the last build, None when it falls outside."""
        return None if self._canvas is None else self._canvas.cell(x, y)

    @property
    def marked_cells(self) -> dict[tuple[int, int], str]:
        """The symbol shown at each marked (column, line) of the last build."""
        return {(column, line): segment.text for line, cells in self._cells.items() for column, segment in cells}

    def _place(self) -> dict[int, list[tuple[int, Segment]]]:
        cells: dict[tuple[int, int], Marker] = {}
        if self._canvas is not None:
            for x, y, marker in self._marks:
                cell = self._canvas.cell(x, y)
                if cell is not None:
                    cells[cell] = marker  # a later mark covers an earlier one on the same cell
        by_line: dict[int, list[tuple[int, Segment]]] = {}
        for (column, line), marker in sorted(cells.items(), key=lambda item: (item[0][1], item[0][0])):
            if line < len(self._lines):
                base = self._lines[line].crop(column, column + 1)
                style = next(iter(base), Segment(" ")).style or Style()
                by_line.setdefault(line, []).append((column, Segment(marker.symbol, style + marker.style)))
        return by_line

    # -- the Line API ---------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        if self._built_key != self._key():
            self._build()
        if y >= len(self._lines):
            return Strip.blank(self.size.width, self.visual_style.rich_style)
        line = self._lines[y]
        cells = self._cells.get(y)
        if not cells:
            return line
        pieces, start = [], 0
        for column, segment in cells:
            pieces += [line.crop(start, column), Strip([segment], 1)]
            start = column + 1
        pieces.append(line.crop(start, line.cell_length))
        return Strip.join(pieces)
