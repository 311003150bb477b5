"""A slider: a focusable bar whose knob moves with the arrow keys and clicks (Textual has none built in)."""

from __future__ import annotations

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

from rpa_sim.tui.scale import LinearScale


class Slider(Widget, can_focus=True):
    """A value placed on a bar by its ``scale``: left/right take a step, shift+left/right a coarse one,
    home/end go to the ends, a click jumps to the clicked spot; the scale's ticks are drawn on the bar."""

    BINDINGS = [Binding("left", "step(-1)", "Down", show=False), Binding("right", "step(1)", "Up", show=False),
                Binding("shift+left", "step(-1, True)", show=False),
                Binding("shift+right", "step(1, True)", show=False),
                Binding("home", "end(0)", show=False), Binding("end", "end(1)", show=False)]

    value: reactive[float] = reactive(0.5)

    class Changed(Message):
        def __init__(self, slider: Slider, value: float) -> None:
            super().__init__()
            self.slider = slider
            self.value = value

        @property
        def control(self) -> Slider:
            return self.slider

    def __init__(self, value: float = 0.5, *, scale: LinearScale | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.scale = scale or LinearScale()
        self.set_reactive(Slider.value, value)

    def render(self) -> str:
        width = max(self.size.width - 2, 3)
        knob = round(self.scale.position(self.value) * (width - 1))
        track = ["━"] * knob + ["●"] + ["─"] * (width - 1 - knob)
        for tick in self.scale.ticks:
            at = round(tick * (width - 1))
            if at != knob:
                track[at] = "╋" if at < knob else "┼"
        return "├" + "".join(track) + "┤"

    def action_step(self, direction: int, coarse: bool = False) -> None:
        self.move_to(self.scale.step(self.value, direction, coarse=coarse))

    def action_end(self, position: float) -> None:
        self.move_to(self.scale.value_at(position))

    def move_to(self, value: float) -> None:
        self.value = self.scale.clamp(value)
        self.post_message(self.Changed(self, self.value))

    def on_click(self, event: events.Click) -> None:
        width = max(self.size.width - 2, 3)
        self.move_to(self.scale.value_at(min(max(event.x - 1, 0), width - 1) / (width - 1)))
