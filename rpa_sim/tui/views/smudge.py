"""The SMuDGE view (``s``, questions only): mean SMuDGE against α, the answer's match against its grounding."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Label
from textual_plotext.plot import Plot

from rpa_sim.tui.model import padded_limits
from rpa_sim.tui.scale import LinearScale
from rpa_sim.tui.texts import cell
from rpa_sim.tui.views.base import View
from rpa_sim.tui.widgets.plot import MarkedPlot, Marker
from rpa_sim.tui.widgets.readout import Readout
from rpa_sim.tui.widgets.slider import Slider

__all__ = ["SmudgeView"]

ALPHA = Marker("●", "red+", "α")


class SmudgeView(View):
    """Mean SMuDGE over the questions against α (the slider, ←/→), marked at the current α."""

    stem = "smudge"

    def compose(self) -> ComposeResult:
        yield Readout(id="smudge-note")
        yield MarkedPlot(id="smudge-plot")
        with Horizontal(id="alpha-bar"):
            yield Label("α", id="alpha-label")
            yield Slider(0.25, scale=LinearScale(step=0.05), id="alpha-slider")

    def load(self) -> None:
        model = self.model
        pairs = [(r["alpha"], r["mean_smudge"]) for r in self.rows() if r["mean_smudge"] is not None]

        def alpha_curve(plt: Plot) -> None:
            plt.xlabel("α")
            plt.ylabel("mean SMuDGE")
            if pairs:
                plt.plot([p[0] for p in pairs], [p[1] for p in pairs], marker="braille", color="cyan+")

        if model.has_smudge:
            low, high = padded_limits([p[1] for p in pairs])
            self.query_one("#smudge-plot", MarkedPlot).draw(alpha_curve, xlim=(0.0, 1.0), ylim=(low, min(high, 1.0)))
        self.redraw()

    def redraw(self) -> None:
        model, state = self.state.model, self.state
        if model is None:
            return
        note = self.query_one("#smudge-note", Readout)
        plot = self.query_one("#smudge-plot", MarkedPlot)
        if not model.has_smudge:
            note.show_text("SMuDGE is a VQA metric: open a VQA scenario (e.g. docvqa-demo).")
            plot.display = False
            self.query_one("#alpha-bar").display = False
            return
        value = model.smudge_at(state.alpha)
        note.show_text(f"mean SMuDGE {cell(value)} at α = {state.alpha:.2f} · SMuDGE = α × answer match "
                       "+ (1 − α) × grounding (how near the answer's place in the page is to the truth's) · "
                       "←/→ move α")
        self.query_one("#alpha-slider", Slider).set_reactive(Slider.value, state.alpha)
        self.query_one("#alpha-slider", Slider).refresh()
        plot.mark([] if value is None else [(state.alpha, value, ALPHA)])

    def rows(self) -> list[dict[str, Any]]:
        return self.model.smudge_rows()
