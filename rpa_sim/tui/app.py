"""The dashboard app: loads a source in stages on a thread of its own, then serves its views around one threshold."""

from __future__ import annotations

import contextvars
import gc
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Header, Input, OptionList, Static, TabbedContent, TabPane

from rpa_sim.common.errors import InputError, escaped
from rpa_sim.study.told import cost_words, told
from rpa_sim.tui.export import write_rows
from rpa_sim.tui.help import HelpScreen
from rpa_sim.tui.loading import open_source
from rpa_sim.tui.model import DashboardModel
from rpa_sim.tui.scale import ThresholdScale
from rpa_sim.tui.stages import Progress
from rpa_sim.tui.views.base import View
from rpa_sim.tui.views.calibration import CalibrationView
from rpa_sim.tui.views.compare import CompareView
from rpa_sim.tui.views.costs import CostsView, offer_words
from rpa_sim.tui.views.fields import FieldsView
from rpa_sim.tui.views.live import LiveView
from rpa_sim.tui.views.monitoring import MonitoringView
from rpa_sim.tui.views.operations import OperationsView
from rpa_sim.tui.views.signals import SignalsView
from rpa_sim.tui.views.smudge import SmudgeView
from rpa_sim.tui.views.tradeoff import TradeoffView
from rpa_sim.tui.widgets.loading_panel import LoadingPanel
from rpa_sim.tui.widgets.readout import Readout
from rpa_sim.tui.widgets.slider import Slider

if TYPE_CHECKING:
    from rpa_sim.study.result import StudySummary

VIEWS = [("tradeoff", "Trade-off", "t", TradeoffView), ("compare", "Compare", "c", CompareView),
         ("fields", "Fields", "f", FieldsView), ("calibration", "Calibration", "l", CalibrationView),
         ("signals", "Signals", "i", SignalsView), ("costs", "Costs", "dollar_sign", CostsView),
         ("smudge", "SMuDGE", "a", SmudgeView), ("monitoring", "Monitoring", "m", MonitoringView),
         ("operations", "Operations", "w", OperationsView), ("live", "Live", "v", LiveView)]
#: below this many columns the trade-off view's side panel moves under the plot
NARROW_BELOW = 100
#: how often (seconds) the screen shows what the loader has reported since
SHOW_PROGRESS_EVERY = 0.1
SCALE = ThresholdScale()
#: ``+`` and ``-`` share one place in the footer, so that every key that answers a question fits 80 columns
STEP_KEYS = Binding.Group("τ")


# the most characters of a message the app shows (a notification, the error panel)
_MESSAGE_LIMIT = 1_000


class _Closed(Exception):
    """The app is closing: the loader stops at its next report."""


class Jump(NamedTuple):
    """Where ``o`` (kind "optimum"), ``g`` (kind "target", the ``target``-th) or ``d`` (kind "decision") took τ;
    the status line says ``note`` while the policy and τ stay there."""

    kind: str
    target: int
    policy: int
    threshold: float
    note: str


def decision_words(model: DashboardModel) -> str:
    """The decision as every page tells it (:func:`rpa_sim.study.told.told`): feasible or not, policy, τ, the
    team per shift, the cost a day, each constraint met or not; when nothing is feasible, the binding
    constraint and the alternatives, cheapest feasible first."""
    said = told(model._summary_in())
    lines = [said.lead, *([said.through] if said.feasible and said.through else [])]
    if said.sample is not None:
        lines.insert(0, f"⚠ {said.sample}")
    for number, option in enumerate(said.options, 1):
        lines.append(f"{number}. {option.line}")
    if not said.feasible and said.options:
        lines.append(f"The nearest point, which misses: {said.point}")
    point = " · ".join(part for part in (said.team, said.cost) if part)
    if point:
        lines.append(point)
    if said.rows:
        lines.append(", ".join(f"{row.label.split(' (')[0]} {row.reached} {'✓' if row.met else '✗'}"
                               for row in said.rows))
    lines += [*([] if said.risk is None else [f"Main risk: {said.risk}"]), f"Next step: {said.next_step}"]
    return "\n".join(lines)


class DashboardApp(App[int]):
    """``rpa-sim dashboard``: policies' trade-offs around one review threshold.

    The app is the :class:`~rpa_sim.tui.state.DashboardState` its views read: it holds the model, τ, the
    selected policy and α, and gives itself to each view it composes.
    """

    CSS_PATH = "app.tcss"
    TITLE = "rpa-sim dashboard"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (NARROW_BELOW, "-wide")]
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark,f1", "help", "Help", key_display="?"),
        Binding("plus", "nudge(1)", "τ up", group=STEP_KEYS),
        Binding("minus", "nudge(-1)", "τ down", group=STEP_KEYS),
        Binding("right_square_bracket", "nudge(1, True)", "τ up 5 steps", show=False),
        Binding("left_square_bracket", "nudge(-1, True)", "τ down 5 steps", show=False),
        Binding("o", "optimum", "Least cost"),
        Binding("g", "target", "Target"),
        Binding("d", "decision", "Decision"),
        Binding("equals_sign", "type_threshold", "Type τ", show=False),
        Binding("z", "zoom", "Zoom"),
        Binding("s", "next_signal", "Signal", show=False),
        *[Binding(key, f"show('{view}')", title, show=False) for view, title, key, _ in VIEWS],
        *[Binding(str(i), f"policy({i - 1})", f"Policy {i}", show=False) for i in range(1, 10)],
        Binding("e", "export('csv')", "CSV", show=False),
        Binding("j", "export('json')", "JSON", show=False),
        Binding("p", "screenshot_svg", "SVG", show=False),
    ]

    def __init__(self, source: str | None = None, *, export_dir: str | Path | None = None,
                 model: DashboardModel | None = None, threshold: float = 0.5) -> None:
        super().__init__()
        self.source = source
        self.export_dir = Path(export_dir) if export_dir is not None else Path.cwd()
        self.model: DashboardModel | None = None
        #: bumped when the model or its summary arrives; views draw again when they are shown
        self.model_version = 0
        self._given_model = model
        self.threshold = threshold
        self.policy = 0
        self.alpha = 0.25
        #: the signal the trade-off view routes on beside the policies (``s``); None for none
        self.signal: str | None = None
        #: what the load failed with, as the error panel shows it, and the error itself
        self.error: str | None = None
        self.load_error: BaseException | None = None
        #: what the comparison of the policies failed with (the views stay, without it)
        self.summary_error: str | None = None
        #: the last jump (o, g, d), shown in the status line until τ or the policy moves
        self._jump: Jump | None = None
        self._summarising: str | None = None
        self._quitting = threading.Event()
        #: what the loader reported and when, for the screen to show at its next look
        self._reports: deque[tuple[Progress, float]] = deque()
        self._progress_timer: Timer | None = None

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = False) -> None:
        """Textual's notification, taking its message as plain text: it may quote names and ids from the data,
        whose brackets are not markup and whose control characters are shown escaped."""
        super().notify(escaped(message, _MESSAGE_LIMIT), title=escaped(title), severity=severity, timeout=timeout,
                       markup=markup)

    # -- layout and loading -----------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header()
        yield LoadingPanel(id="loading")
        with VerticalScroll(id="error-box"):
            yield Static(id="error-panel", markup=False)
        with TabbedContent(id="views"):
            for view, title, _key, cls in VIEWS:
                with TabPane(title, id=view):
                    yield cls(self, id=f"{view}-view")
        yield Readout(id="status")
        yield Footer()

    def on_mount(self) -> None:
        for waiting in ("#views", "#error-box", "#status"):
            self.query_one(waiting).display = False
        if self._given_model is not None:
            self._loaded(self._given_model)
            self._summarised(self._given_model.summary)
            return
        name = Path(self.source).name if self.source else "receipts-demo"
        self.sub_title = f"opening {name}"
        self.query_one(LoadingPanel).start(name)
        self._progress_timer = self.set_interval(SHOW_PROGRESS_EVERY, self._show_progress)
        # a daemon thread of its own, not a Textual worker: quitting must not wait for a load to finish; it runs in
        # a copy of this context, which holds the command's --workers and --scheduler (a thread starts without it)
        threading.Thread(target=contextvars.copy_context().run, args=(self._load,), name="rpa-sim dashboard loader",
                         daemon=True).start()

    def exit(self, result: int | None = None, return_code: int = 0, message: Any = None) -> None:
        self._quitting.set()  # the loader stops at its next report
        super().exit(result, return_code, message)

    def _to_app(self, callback: Callable[..., Any], *args: Any) -> None:
        """Run ``callback(*args)`` on the app's thread, from the loader's; raises _Closed once the app closes."""
        if self._quitting.is_set():
            raise _Closed
        self.call_from_thread(callback, *args)

    def _report(self, progress: Progress) -> None:
        """The loader's reporter: queues ``progress`` for the screen (never waiting for it); raises _Closed once
        the app closes, which stops the load."""
        if self._quitting.is_set():
            raise _Closed
        self._reports.append((progress, time.monotonic()))

    def _show_progress(self) -> None:
        """Show what the loader reported since the last look (every SHOW_PROGRESS_EVERY seconds)."""
        while self._reports:
            progress, when = self._reports.popleft()
            if self.model is None:
                self.query_one(LoadingPanel).show(progress, when)
            else:  # the summary, while the dashboard is already interactive
                self._summarising = None if progress.finished else progress.text
        self._status()

    def _load(self) -> None:
        """Open the source, sweep it (then the dashboard is interactive), and summarise it: on the loader thread."""
        try:
            opened = open_source(self.source, report=self._report)
            model = opened.model(report=self._report)
            self._to_app(self._loaded, model)
            model.field_entries  # noqa: B018 (the Fields view's binary searches, built before it is opened)
            self._to_app(self._summarised, opened.summary(model, report=self._report))
        except _Closed:
            return
        except Exception as error:
            try:
                self._to_app(self._failed, error)
            except _Closed:
                return

    def _stop_progress(self) -> None:
        if self._progress_timer is not None:
            self._progress_timer.stop()
        self._reports.clear()

    def _failed(self, error: BaseException) -> None:
        message = str(error) if isinstance(error, InputError) else f"{type(error).__name__}: {error}"
        message = escaped(message, _MESSAGE_LIMIT)  # an error quoting the data must not steer the terminal
        if self.model is not None:  # the summary failed: the views stay
            self.summary_error = message
            self._stop_progress()
            self._summarising = None
            self._status()
            self.notify(message, title="Cannot compare the policies", severity="error", timeout=30)
            return
        self.error, self.load_error = message, error
        self._stop_progress()
        self.sub_title = f"cannot open {Path(self.source or 'receipts-demo').name}"
        self.query_one(LoadingPanel).display = False
        self.query_one("#error-panel", Static).update(
            f"Could not open {self.source or 'receipts-demo'!r}\n\n{message}\n\nPress q to quit.")
        self.query_one("#error-box").display = True
        self.refresh_bindings()  # the τ keys leave the footer: nothing to move
        self.notify(message, title="Cannot load", severity="error", timeout=30)

    def _loaded(self, model: DashboardModel) -> None:
        self.model = model
        self.model_version += 1
        self.sub_title = f"{model.source} ({model.task.upper()}, {len(model.table):,} predictions)"
        self.query_one(LoadingPanel).display = False
        self.query_one("#views").display = self.query_one("#status").display = True
        if not model.has_smudge:
            self.query_one(TabbedContent).hide_tab("smudge")
        if not model.has_operations:  # shown with a summary that has the scenario's operations
            self.query_one(TabbedContent).hide_tab("operations")
        if not model.signal_names:  # the values carry no named signal
            self.query_one(TabbedContent).hide_tab("signals")
        if not model.has_stream:  # shown with a summary that has the scenario's stream
            self.query_one(TabbedContent).hide_tab("live")
        self.active_view().ensure_loaded()
        self._status()
        self.refresh_bindings()
        self.query_one("#threshold-slider").focus()
        self.call_after_refresh(self._freeze_loaded)

    def _summarised(self, summary: StudySummary | None) -> None:
        """The study's result has arrived (None: a given model without one); the views draw it."""
        model = self.model
        if model is None:
            return
        model.summary = summary
        self.model_version += 1
        self._summarising = None
        self._stop_progress()
        if model.has_operations:
            self.query_one(TabbedContent).show_tab("operations")
        if model.has_stream:
            self.query_one(TabbedContent).show_tab("live")
        self.active_view().ensure_loaded()
        self._status()
        self.refresh_bindings()
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
        model = self.model
        if model is None:
            return
        parts = [f"τ = {self.threshold:.4f}", model.policy_names[self.policy]]
        jump = self._standing_jump()
        if jump is not None:
            parts.append(jump.note)
        else:
            fine, coarse = SCALE.step_size(self.threshold), SCALE.step_size(self.threshold, coarse=True)
            parts.append(f"step {fine:g} (+ -), {coarse:g} (] [)")
        if self._summarising:
            parts.append(self._summarising + "…")
        self.query_one("#status", Readout).show_text(" · ".join(parts))

    def _standing_jump(self, kind: str | None = None) -> Jump | None:
        """The last jump (of ``kind``, any by default) when τ and the policy are still where it left them."""
        jump = self._jump
        standing = jump is not None and (jump.policy, jump.threshold) == (self.policy, self.threshold) and (
            kind is None or jump.kind == kind)
        return jump if standing else None

    def set_threshold(self, value: float, *, jump: Jump | None = None) -> None:
        """Move τ (clamped to [0, 1]); ``jump`` when ``o`` or ``g`` moved it there."""
        if self.model is None:
            return
        # exact, not rounded: a jump's τ (just above an entry threshold) is where that figure holds
        self.threshold = min(1.0, max(0.0, float(value)))
        self._jump = jump
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
        if self.model is not None and not self.active_view().ensure_loaded():
            self.active_view().redraw()
        self.refresh_bindings()  # z is the Costs view's

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
        self.query_one("#threshold-slider").focus()  # the keys are the dashboard's again

    # -- actions ----------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Hide the SMuDGE view's key for fields read from documents, the Signals view's and ``s`` for values
        without named signals, the Operations and Live views' without their sections; dim what needs a model until
        it loads."""
        if action == "show" and parameters == ("smudge",) and self.model is not None:
            return self.model.has_smudge
        if action == "show" and parameters == ("operations",) and self.model is not None:
            return self.model.has_operations
        if self.model is not None and (action == "next_signal" or (action == "show" and parameters == ("signals",))):
            return bool(self.model.signal_names)  # values without named signals: nothing to show or cycle
        if action == "show" and parameters == ("live",) and self.model is not None:
            return self.model.has_stream
        if action == "zoom":
            return self.model is not None and isinstance(self.active_view(), CostsView)
        needs_model = ("nudge", "optimum", "target", "decision", "type_threshold", "show", "policy", "export")
        if action in needs_model and self.model is None:
            return False if self.error is not None else None  # nothing to act on: hidden, or dimmed
        return True

    def action_nudge(self, steps: int, coarse: bool = False) -> None:
        self.set_threshold(SCALE.step(self.threshold, steps, coarse=coarse))

    def action_optimum(self) -> None:
        """τ to the selected policy's least-cost point meeting every constraint (without costs: its most
        automation meeting them); when none does, to its least cost under no constraint, said so."""
        model = self.model
        if model is None:
            return
        name = model.policy_names[self.policy]
        if model.costs is None and model.decision is None:
            self.notify("no cost model: see the Costs view ($) for how to add one", title="Least cost")
        elif not model.summarised:
            self.notify("still comparing the policies: the least cost comes with them", title="Least cost")
        elif (best := model.offer(self.policy, "best_feasible")) is not None:
            kind = "least cost" if model.costs is not None else "most automation"
            note = f"{kind} meeting every constraint: {offer_words(best)} (o)"
            self.set_threshold(best.threshold, jump=Jump("optimum", 0, self.policy, best.threshold, note))
        elif (least := model.offer(self.policy, "least_cost")) is not None:
            note = f"least cost, no constraint: {offer_words(least)} (o)"
            self.set_threshold(least.threshold, jump=Jump("optimum", 0, self.policy, least.threshold, note))
            self.notify(f"no τ of {name} meets every constraint: this is its least cost under none",
                        title="Least cost", severity="warning")
        elif (best_any := model.cost_optimum(self.policy)) is not None:  # a summary without offers (older)
            note = f"least cost, no constraint, {model.money(best_any.cost)} for the data (o)"
            self.set_threshold(best_any.threshold, jump=Jump("optimum", 0, self.policy, best_any.threshold, note))
        else:
            self.notify(f"no τ of {name} meets every constraint", title="Least cost")

    def action_target(self) -> None:
        """τ to where the selected policy reaches the first target; pressed again there, the next target."""
        model = self.model
        if model is None:
            return
        targets = model.target_values
        if not targets:
            self.notify("the scenario has no targets (targets: in its YAML)", title="Target")
            return
        if not model.summarised:
            self.notify("still comparing the policies: the targets' τ come with them", title="Target")
            return
        jump = self._standing_jump("target")
        index = 0 if jump is None else (jump.target + 1) % len(targets)
        target, name = targets[index], model.policy_names[self.policy]
        threshold = model.target_threshold(self.policy, target)
        if threshold is None:  # τ stays; the next g tries the next target
            self._jump = Jump("target", index, self.policy, self.threshold, f"{name} never reaches {target:g}")
            self._status()
            self.notify(f"{name} never reaches {model.metric_label} {target:g}", title="Target")
            return
        offered = model.offer(self.policy, "target", target)
        note = f"reaches {model.metric_label} {target:g}" + ("" if offered is None else f": {offer_words(offered)}") \
            + (" (g: next target)" if len(targets) > 1 else "")
        self.set_threshold(threshold, jump=Jump("target", index, self.policy, threshold, note))

    def action_decision(self) -> None:
        """τ and the policy to the study's decision (``summary.decision``), the Operations view's team to its."""
        model = self.model
        if model is None:
            return
        if not model.summarised:
            self.notify("still comparing the policies: the decision comes with them", title="Decision")
            return
        decision = model.decision
        if decision is None or decision.policy is None or decision.threshold is None:
            undecided = None if model.summary is None else model.summary.decision
            reason = (None if undecided is None else undecided.reason) or "nothing to decide"
            self.notify(f"no decision: {reason}", title="Decision")
            return
        policy, threshold = model.policy_names.index(decision.policy), decision.threshold
        team = decision.reviewers
        if team is not None:
            self.query_one(OperationsView).extra = team.extra
        words = decision_words(model)
        cost = cost_words(decision.cost)
        note = ("decision" if decision.feasible else "no plan meets the constraints: nearest point") + \
            ("" if cost is None else f", {cost}")
        self.set_policy(policy)
        self.set_threshold(threshold, jump=Jump("decision", 0, policy, threshold, note + " (d)"))
        self.notify(words, title="Decision" if decision.feasible else "No plan meets the constraints",
                    severity="information" if decision.feasible else "warning", timeout=15)

    def action_next_signal(self) -> None:
        """The trade-off view routes on the next signal beside the policies (none after the last), and the
        Signals view shows it."""
        model = self.model
        if model is None or not model.signal_names:
            return
        cycle: list[str | None] = [*model.signal_names, None]
        self.signal = cycle[(cycle.index(self.signal) + 1) % len(cycle)]
        self.notify(f"routing on {self.signal}" if self.signal is not None else "no signal routed on",
                    title="Signal (s)")
        self.active_view().redraw()

    def action_zoom(self) -> None:
        view = self.active_view()
        if isinstance(view, CostsView):
            view.action_zoom()

    def action_policy(self, index: int) -> None:
        self.set_policy(index)

    def action_show(self, view: str) -> None:
        if self.model is not None and (view != "smudge" or self.model.has_smudge) and (
                view != "operations" or self.model.has_operations) and (
                view != "signals" or bool(self.model.signal_names)) and (view != "live" or self.model.has_stream):
            self.query_one(TabbedContent).active = view
            self.focus_view()

    def focus_view(self) -> None:
        """Focus the active view's first focusable widget, so focus never pulls back to a hidden pane."""
        focusable = [w for w in self.active_view().query("*") if w.can_focus and w.display]
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
        view.ensure_loaded()
        try:
            path = write_rows(view.rows(), self.export_dir, view.export_name(), kind)
        except OSError as error:
            self.notify(str(error), title="Export failed", severity="error")
            return
        self.notify(f"wrote {path}", title=f"Exported {kind.upper()}")

    def action_screenshot_svg(self) -> None:
        name = (self.active_view().export_name() if self.model is not None else "rpa-sim-dashboard") + ".svg"
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
            if view != "smudge" or self.model is None or self.model.has_smudge:
                yield SystemCommand(f"Show {title} view", f"Switch to the {title} view",
                                    lambda view=view: self.action_show(view))
        yield SystemCommand("Go to the least cost", "τ to the selected policy's least cost meeting every "
                                                    "constraint (o)",
                            self.action_optimum)
        yield SystemCommand("Go to the first target", "τ to where the selected policy reaches the first target; "
                            "again: the next (g)", self.action_target)
        yield SystemCommand("Go to the decision", "τ, the policy and the team to the study's decision (d)",
                            self.action_decision)
        yield SystemCommand("Type τ", "Type a threshold (=)", self.action_type_threshold)
        yield SystemCommand("Export CSV", "Write the current view's data as CSV (e)", lambda: self.action_export("csv"))
        yield SystemCommand("Export JSON", "Write the current view's data as JSON (j)",
                            lambda: self.action_export("json"))
        yield SystemCommand("Save SVG screenshot", "Save the screen as SVG (p)", self.action_screenshot_svg)
        yield SystemCommand("Show help", "Every key and term (?)", self.action_help)
