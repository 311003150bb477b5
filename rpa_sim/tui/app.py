"""The dashboard app: loads a scenario in a worker, then serves six views around one threshold."""

from __future__ import annotations

import gc
from collections.abc import Iterable
from pathlib import Path

from textual import work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, LoadingIndicator, OptionList, Static, TabbedContent, TabPane

from rpa_sim.tui.export import write_rows
from rpa_sim.tui.help import HelpScreen
from rpa_sim.tui.model import DashboardModel, load_model
from rpa_sim.tui.slider import Slider
from rpa_sim.tui.views import (CalibrationView, CompareView, CostsView, FieldsView, Readout, SmudgeView,
                               TradeoffView, View)

FINE, COARSE = 0.01, 0.05
VIEWS = [("tradeoff", "Trade-off", "t", TradeoffView), ("compare", "Compare", "c", CompareView),
         ("fields", "Fields", "f", FieldsView), ("calibration", "Calibration", "l", CalibrationView),
         ("costs", "Costs", "dollar_sign", CostsView), ("smudge", "SMuDGE", "s", SmudgeView)]


class DashboardApp(App[int]):
    """``rpa-sim dashboard``: policies' trade-offs around one review threshold."""

    CSS_PATH = "app.tcss"
    TITLE = "rpa-sim dashboard"
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("f1,question_mark", "help", "Help"),
        Binding("plus", "nudge(1)", "τ+0.01"),
        Binding("minus", "nudge(-1)", "τ-0.01"),
        Binding("right_square_bracket", "nudge(5)", "τ+0.05"),
        Binding("left_square_bracket", "nudge(-5)", "τ-0.05"),
        Binding("equals_sign", "type_threshold", "Type τ", show=False),
        *[Binding(key, f"show('{view}')", title, show=False) for view, title, key, _ in VIEWS],
        *[Binding(str(i), f"policy({i - 1})", f"Policy {i}", show=False) for i in range(1, 10)],
        Binding("e", "export('csv')", "CSV"),
        Binding("j", "export('json')", "JSON"),
        Binding("p", "screenshot_svg", "SVG"),
    ]

    def __init__(self, source: str | None = None, *, export_dir: str | Path | None = None,
                 model: DashboardModel | None = None, threshold: float = 0.5) -> None:
        super().__init__()
        self.source = source
        self.export_dir = Path(export_dir) if export_dir is not None else Path.cwd()
        self.model: DashboardModel | None = None
        self._given_model = model
        self.threshold = threshold
        self.policy = 0
        self.alpha = 0.25
        self.error: str | None = None

    # -- layout and loading -----------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header()
        yield LoadingIndicator(id="loading")
        yield Static(id="error-panel")
        with TabbedContent(id="views"):
            for view, title, _key, cls in VIEWS:
                with TabPane(title, id=view):
                    yield cls(id=f"{view}-view")
        yield Readout(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#views").display = False
        self.query_one("#error-panel").display = False
        if self._given_model is not None:
            self._loaded(self._given_model)
        else:
            self.load()

    @work(thread=True, exclusive=True, group="load")
    def load(self) -> None:
        try:
            model = load_model(self.source)
        except Exception as error:  # noqa: BLE001 (every failure is shown in the app)
            self.call_from_thread(self._failed, f"{type(error).__name__}: {error}")
            return
        self.call_from_thread(self._loaded, model)

    def _failed(self, message: str) -> None:
        self.error = message
        self.query_one("#loading").display = False
        panel = self.query_one("#error-panel", Static)
        panel.update(f"Could not open {self.source or 'receipts-demo'!r}\n\n{message}\n\nPress q to quit.")
        panel.display = True
        self.notify(message, title="Cannot load", severity="error", timeout=30)

    def _loaded(self, model: DashboardModel) -> None:
        self.model = model
        self.sub_title = f"{model.name} ({model.task.upper()}, {len(model.table):,} predictions)"
        self.query_one("#loading").display = False
        self.query_one("#views").display = True
        for view in self.query(View):
            view.load()
        self._status()
        self.query_one("#threshold-slider").focus()
        self.call_after_refresh(self._freeze_loaded)

    @staticmethod
    def _freeze_loaded() -> None:
        """Move the loaded model and the drawn views out of the garbage collector's full passes.

        They live as long as the app; scanning them in a full pass during a threshold move stalls
        it by tens of milliseconds on large tables.
        """
        gc.collect()
        gc.freeze()

    # -- state changes ----------------------------------------------------------------------------

    def active_view(self) -> View:
        active = self.query_one(TabbedContent).active or "tradeoff"
        return self.query_one(f"#{active}-view", View)

    def _status(self) -> None:
        if self.model is None:
            return
        self.query_one("#status", Readout).show_text(
            f"τ = {self.threshold:.4f}   policy {self.policy + 1}: {self.model.policy_names[self.policy]}   "
            f"+/- step {FINE}, ]/[ step {COARSE}")

    def set_threshold(self, value: float) -> None:
        if self.model is None:
            return
        self.threshold = round(min(1.0, max(0.0, value)), 6)
        self._status()
        self.active_view().redraw()

    def set_policy(self, index: int) -> None:
        if self.model is None or not 0 <= index < len(self.model.policies):
            return
        self.policy = index
        options = self.query_one("#policy-list", OptionList)
        if options.highlighted != index:
            options.highlighted = index
        self._status()
        self.active_view().redraw()

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if self.model is not None:
            self.active_view().redraw()

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_list.id == "policy-list" and event.option_index != self.policy:
            self.set_policy(event.option_index)

    def on_slider_changed(self, event: Slider.Changed) -> None:
        if event.slider.id == "alpha-slider":
            self.alpha = event.value
            self.active_view().redraw()
        else:
            self.set_threshold(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "threshold-input":
            return
        try:
            value = float(event.value)
            if not 0.0 <= value <= 1.0:
                raise ValueError
        except ValueError:
            self.notify(f"not a threshold in [0, 1]: {event.value!r}", title="Threshold", severity="error")
            return
        event.input.value = ""
        self.set_threshold(value)

    # -- actions ----------------------------------------------------------------------------------

    def action_nudge(self, steps: int) -> None:
        self.set_threshold(self.threshold + steps * FINE)

    def action_policy(self, index: int) -> None:
        self.set_policy(index)

    def action_show(self, view: str) -> None:
        if self.model is not None:
            self.query_one(TabbedContent).active = view
            self.focus_view()

    def focus_view(self) -> None:
        """Focus the active view's first focusable widget, so focus never pulls back to a hidden pane."""
        focusable = [w for w in self.active_view().query("*") if w.can_focus]
        self.set_focus(focusable[0] if focusable else None)

    def action_type_threshold(self) -> None:
        if self.model is not None:
            self.action_show("tradeoff")
            self.query_one("#threshold-input").focus()

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_export(self, kind: str) -> None:
        if self.model is None:
            self.notify("nothing loaded to export", severity="error")
            return
        view = self.active_view()
        try:
            path = write_rows(view.rows(), self.export_dir, f"rpa-sim-{view.stem}", kind)
        except OSError as error:
            self.notify(str(error), title="Export failed", severity="error")
            return
        self.notify(f"wrote {path}", title=f"Exported {kind.upper()}")

    def action_screenshot_svg(self) -> None:
        name = "rpa-sim-" + (self.active_view().stem if self.model is not None else "dashboard") + ".svg"
        try:
            self.export_dir.mkdir(parents=True, exist_ok=True)
            path = self.save_screenshot(name, str(self.export_dir))
        except OSError as error:
            self.notify(str(error), title="Screenshot failed", severity="error")
            return
        self.notify(f"wrote {path}", title="Screenshot")

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for view, title, _key, _cls in VIEWS:
            yield SystemCommand(f"Show {title} view", f"Switch to the {title} view",
                                lambda view=view: self.action_show(view))
        yield SystemCommand("Export CSV", "Write the current view's data as CSV", lambda: self.action_export("csv"))
        yield SystemCommand("Export JSON", "Write the current view's data as JSON",
                            lambda: self.action_export("json"))
        yield SystemCommand("Save SVG screenshot", "Save the screen as SVG", self.action_screenshot_svg)
        yield SystemCommand("Show help", "The keys", self.action_help)
