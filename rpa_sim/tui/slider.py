"""A slider: a focusable bar whose knob moves with left/right and clicks (Textual has none built in)."""

from __future__ import annotations

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget


class Slider(Widget, can_focus=True):
    """A value in ``[minimum, maximum]``; left/right step it, a click jumps to the clicked spot."""

    BINDINGS = [Binding("left", "step(-1)", "Down", show=False), Binding("right", "step(1)", "Up", show=False)]

    value: reactive[float] = reactive(0.5)

    class Changed(Message):
        def __init__(self, slider: Slider, value: float) -> None:
            super().__init__()
            self.slider = slider
            self.value = value

        @property
        def control(self) -> Slider:
            return self.slider

    def __init__(self, value: float = 0.5, *, minimum: float = 0.0, maximum: float = 1.0, step: float = 0.01,
                 id: str | None = None, classes: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id, classes=classes)
        self.minimum, self.maximum, self.step = minimum, maximum, step
        self.set_reactive(Slider.value, value)

    def _clamp(self, value: float) -> float:
        return round(min(self.maximum, max(self.minimum, value)), 6)

    def render(self) -> str:
        width = max(self.size.width - 2, 3)
        span = self.maximum - self.minimum or 1.0
        knob = round((self.value - self.minimum) / span * (width - 1))
        return "├" + "━" * knob + "●" + "─" * (width - 1 - knob) + "┤"

    def action_step(self, direction: int) -> None:
        self.move_to(self.value + direction * self.step)

    def move_to(self, value: float) -> None:
        self.value = self._clamp(value)
        self.post_message(self.Changed(self, self.value))

    def on_click(self, event: events.Click) -> None:
        width = max(self.size.width - 2, 3)
        position = min(max(event.x - 1, 0), width - 1) / (width - 1)
        self.move_to(round((self.minimum + position * (self.maximum - self.minimum)) / self.step) * self.step)
