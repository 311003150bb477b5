"""Lines of text under a header that stays at the top: a table that a threshold move repaints cheaply."""

from __future__ import annotations

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

__all__ = ["TextTable"]


class TextTable(ScrollView, can_focus=True):
    """Lines of text under a header that stays at the top: scrolls both ways, and repaints without a layout
    pass while its size stays (a threshold move changes numbers, not widths)."""

    header = ""
    lines: list[str] = []

    def show(self, header: str, lines: list[str]) -> None:
        self.header, self.lines = header, lines
        size = Size(max([cell_len(header), *map(cell_len, lines)]), len(lines) + 1)
        if size != self.virtual_size:
            self.virtual_size = size
        self.refresh()

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        base = self.rich_style
        if y == 0:
            text, style = self.header, base + Style(bold=True, underline=True)
        elif scroll_y + y - 1 < len(self.lines):
            text, style = self.lines[scroll_y + y - 1], base
        else:
            return Strip.blank(self.size.width, base)
        return Strip(Text(text, style=style, no_wrap=True).render(self.app.console)).crop_extend(
            scroll_x, scroll_x + self.size.width, base)
