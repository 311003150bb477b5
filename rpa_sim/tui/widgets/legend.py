"""A plot's legend, beside the plot rather than over its curves."""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.content import Content

from rpa_sim.tui.widgets.plot import Marker
from rpa_sim.tui.widgets.readout import Readout

__all__ = ["Legend"]


class Legend(Readout):
    """A plot's legend, beside the plot rather than over its curves: each entry's symbol in its colour, the
    entries packed into lines of the widget's width (an entry is never split)."""

    entries: list[tuple[Marker, str]] = []

    def show_entries(self, entries: Sequence[tuple[Marker, str]]) -> None:
        self.entries = list(entries)
        self.pack()

    def on_resize(self, event: events.Resize) -> None:
        self.call_after_refresh(self.pack)  # a layout asked for while handling a resize would be lost

    def pack(self) -> None:
        width = self.size.width or cell_len(" ".join(label for _, label in self.entries)) * 2
        lines = [Text()]
        for marker, label in self.entries:
            entry = Text.assemble((marker.symbol, marker.style), (f" {label}", "bold" if marker.highlight else ""))
            if lines[-1] and lines[-1].cell_len + 3 + entry.cell_len > width:
                lines.append(Text())
            if lines[-1]:
                lines[-1].append("   ")
            lines[-1].append_text(entry)
        self.show_text(Content.from_rich_text(Text("\n").join(lines)))
