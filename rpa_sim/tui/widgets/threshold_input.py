"""Where τ is typed."""

from __future__ import annotations

from textual import events
from textual.binding import Binding
from textual.widgets import Input

__all__ = ["ThresholdInput"]


class ThresholdInput(Input):
    """Where τ is typed: it takes the characters of a number; any other key stays the app's (q quits, +
    steps τ) and Esc gives the keys back to the slider."""

    BINDINGS = [Binding("escape", "leave", "Back to the slider", show=False)]
    NUMBER = frozenset("0123456789.")

    def check_consume_key(self, key: str, character: str | None) -> bool:
        return character is not None and character in self.NUMBER

    async def _on_key(self, event: events.Key) -> None:
        if event.is_printable and event.character not in self.NUMBER:
            event.prevent_default()  # not typed: the key bubbles on to the app's bindings

    def action_leave(self) -> None:
        self.value = ""
        self.screen.query_one("#threshold-slider").focus()
