"""A text widget that follows a number: a threshold move repaints it without a layout pass."""

from __future__ import annotations

from rich.cells import cell_len
from textual.content import Content
from textual.widgets import Static

__all__ = ["Readout"]


class Readout(Static):
    """A Static whose updates skip the screen's layout pass while the text keeps its shape.

    A threshold move changes numbers, not sizes, so repainting the widget is enough.
    """

    shape: tuple[int, ...] | None = None

    def __init__(self, *, id: str | None = None) -> None:
        # what it shows quotes the data (field names, policy names): brackets are text, not markup
        super().__init__(id=id, markup=False)

    def show_text(self, text: str | Content) -> None:
        self.update(text, layout=False)
        visual = self.visual
        shape = tuple(cell_len(line) for line in visual.plain.split("\n")) if isinstance(visual, Content) else None
        if shape is None or shape != self.shape:
            self.refresh(layout=True)
        self.shape = shape
