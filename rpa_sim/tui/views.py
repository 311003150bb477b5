"""The views: each a container that draws itself from the model and the app's threshold, policy and alpha."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import DataTable, Input, Label, OptionList, Static
from textual_plotext import PlotextPlot

from rpa_sim.common.errors import SHOWN_LIMIT, escaped
from rpa_sim.common.formatting import count, money, number
from rpa_sim.route.compare import edge_of_range_text
from rpa_sim.study.result import encoded
from rpa_sim.tui.export import export_stem
from rpa_sim.tui.model import COST_PARTS, padded_limits
from rpa_sim.tui.plot import MarkedPlot, Marker
from rpa_sim.tui.scale import LinearScale, ThresholdScale
from rpa_sim.tui.slider import Slider

if TYPE_CHECKING:
    from rpa_sim.study.result import GroupCalibration
    from rpa_sim.tui.app import DashboardApp
    from rpa_sim.tui.model import DashboardModel

#: each policy's symbol and colour, by its place in the scenario (1-9), in the plot and its legend
POLICY_MARKERS = [Marker(symbol, color) for symbol, color in (
    ("●", "cyan+"), ("■", "orange+"), ("▲", "magenta+"), ("◆", "green+"), ("▼", "blue+"), ("★", "red+"),
    ("✚", "cyan"), ("✖", "magenta"), ("◉", "green"))]
TARGET_COLOR = "gray"


def policy_marker(index: int, *, selected: bool = False) -> Marker:
    """Policy ``index``'s marker (the palette repeats after nine), in reverse video for the selected one."""
    return replace(POLICY_MARKERS[index % len(POLICY_MARKERS)], highlight=selected)


def axis_ticks(low: float, high: float, marks: Sequence[float], rows: int) -> list[float]:
    """Ticks for an axis of ``rows`` rows from ``low`` to ``high``: each of ``marks`` (targets) exactly, the
    ends unless a mark would share their row, and evenly spaced ticks between, three rows apart or more.

    >>> axis_ticks(0.7, 1.0, [0.9], 16)
    [0.7, 0.766667, 0.833333, 0.9, 1.0]
    >>> axis_ticks(0.0, 1.0, [], 4)
    [0.0, 1.0]
    """
    per_row = (high - low) / max(rows - 1, 1)
    inside = sorted({m for m in marks if low <= m <= high})
    ends = [end for end in (low, high) if all(abs(end - m) >= per_row for m in inside)]
    anchors = sorted({*inside, *ends})
    ticks = [anchors[0]]
    for a, b in zip(anchors, anchors[1:]):
        between = int((b - a) / per_row // 3)
        ticks += [a + (b - a) * i / between for i in range(1, between)] + [b]
    return [round(t, 6) for t in ticks]


def cell(value: Any, digits: int = 4) -> str:
    """A table's cell: an int is a count, a float a measure with ``digits`` decimals (:mod:`rpa_sim.common.formatting`)."""
    if value is None or isinstance(value, float):
        return number(value, digits)
    if isinstance(value, int) and not isinstance(value, bool):
        return count(value)
    return str(value)


class View(Vertical):
    """A view: ``load()`` draws what follows the model, ``redraw()`` what follows the threshold, policy and
    alpha; ``rows()`` is what export writes."""

    stem = "view"
    #: the model version (:attr:`DashboardApp.model_version`) the view was drawn for
    loaded_version = -1

    @property
    def dash(self) -> DashboardApp:
        return self.app  # type: ignore[return-value]

    @property
    def model(self) -> DashboardModel | None:
        return self.dash.model

    def ensure_loaded(self) -> bool:
        """Load the view if the model changed since it was drawn (views are drawn when first shown)."""
        if self.model is None or self.loaded_version == self.dash.model_version:
            return False
        self.loaded_version = self.dash.model_version
        self.load()
        return True

    def load(self) -> None:
        self.redraw()

    def redraw(self) -> None:
        pass

    def rows(self) -> list[dict[str, Any]]:
        return []

    def export_name(self) -> str:
        """The export's file name without suffix: the view, with the policy and τ when its rows depend on them."""
        return export_stem(self.stem)


def figure_columns(entries: list[tuple[str, str]], *, columns: int) -> list[str]:
    """``(label, value)`` entries in ``columns`` columns, filled column by column, each label padded to its
    column's and each value right-aligned.

    >>> figure_columns([("a", "1"), ("bb", "22"), ("c", "3")], columns=2)
    ['a   1   c 3', 'bb 22']
    """
    rows = -(-len(entries) // columns)
    chunks = [entries[c * rows:(c + 1) * rows] for c in range(columns)]
    labels = [max((cell_len(name) for name, _ in chunk), default=0) for chunk in chunks]
    values = [max((cell_len(value) for _, value in chunk), default=0) for chunk in chunks]
    return ["   ".join(f"{chunk[r][0]:<{labels[c]}} {chunk[r][1]:>{values[c]}}" for c, chunk in enumerate(chunks)
                       if r < len(chunk)) for r in range(rows)]


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


# -- trade-off ------------------------------------------------------------------------------------------

class FiguresPanel(Readout):
    """The selected policy's figures at the threshold (exactly ``Sweeper.at``), each label on one line with
    its value; in as many columns as fit when the screen is narrow (the panel is then below the plot)."""

    # "rejected" is a figure of policies with a reject band only (reject_if)
    LABELS = [("auto_rate", "auto-rate"), ("reviewed", "reviews needed"), ("rejected", "rejected"), ("metric", ""),
              ("documents_straight_through", "documents straight through"),
              ("residual_substitutions", "residual substitutions"), ("residual_deletions", "residual deletions"),
              ("additions", "residual additions"), ("accuracy", "accuracy"), ("smudge", "SMuDGE"), ("cost", "cost")]
    COUNTS = frozenset({"reviewed", "rejected", "documents_straight_through", "residual_substitutions",
                        "residual_deletions", "additions"})
    #: the arguments of the last :meth:`show`, shown again when the panel's width changes
    shown: tuple | None = None

    @staticmethod
    def value_text(key: str, value: float) -> str:
        if key in FiguresPanel.COUNTS:
            return count(value)
        return money(value) if key == "cost" else number(value)

    #: a constraint of the decision as the panel names it
    CONSTRAINT_LABELS = {"quality": "quality ≥", "service_level": "service level ≥", "reviewers": "reviewers ≤",
                         "cost_per_day": "cost/day ≤", "certified_error": "certified error ≤"}
    #: where a constraint's value comes from, when not the decided point itself (there the title says so)
    SOURCES = {"grid": " (grid)"}

    def show(self, model: DashboardModel, policy: int, threshold: float) -> None:
        self.shown = (model, policy, threshold)
        figures = model.figures(policy, threshold)
        entries = []
        for key, name in self.LABELS:
            key = model.metric_name if key == "metric" else key
            if key not in figures:
                continue
            if key == "cost":
                entries += self.cost_entries(model, policy, threshold, rejecting="rejected" in figures)
                continue
            # values padded to the widest over every τ, so a threshold move keeps the panel's shape
            low, high = model.value_ranges[policy].get(key, (0.0, 0.0))
            width = max(len(self.value_text(key, v)) for v in (low, high, float("nan")))
            entries.append((name or model.metric_label, self.value_text(key, figures[key]).rjust(width)))
        entries += self.constraint_entries(model, policy, threshold)
        # narrow screens put the panel below the plot, as wide as the screen: as many columns as fit
        for columns in (3, 2, 1) if self.screen.has_class("-narrow") else (1,):
            lines = figure_columns(entries, columns=columns)
            if max(map(cell_len, lines), default=0) <= self.size.width:
                break
        title = f"{model.policy_names[policy]} at τ = {threshold:.4f}"
        if model.at_decision(policy, threshold):
            title += " ★ decision"
        self.show_text(Content("\n".join([title, *lines])).stylize("bold", 0, len(title)))

    def cost_entries(self, model: DashboardModel, policy: int, threshold: float, *,
                     rejecting: bool) -> list[tuple[str, str]]:
        """The cost at τ as the study prices it (with staffing once the summary has a staffed operation),
        its total then its parts: staffing only when staffed, rejection only for a policy that rejects, and
        no part that is nothing at every τ (e.g. review time a roster pays for)."""
        parts = model.cost_parts(policy, threshold)
        ranges = model.cost_range(policy)
        shown = [("total", f"cost ({model.currency})" if model.currency else "cost")]
        shown += [(name, f" {words}") for name, words in COST_PARTS
                  if (name != "staffing" or model.staffed) and (name != "rejected" or rejecting)
                  and ranges.get(name, (0.0, 0.0)) != (0.0, 0.0)]
        entries = []
        for name, words in shown:
            width = max(len(money(v)) for v in (*ranges.get(name, (0.0, 0.0)), float("nan")))
            entries.append((words, money(parts[name]).rjust(width)))
        return entries

    def constraint_entries(self, model: DashboardModel, policy: int, threshold: float) -> list[tuple[str, str]]:
        """Each constraint of the decision, met (✓) or not (✗) at τ where the curves tell; ``at d`` where only
        the decided point does (the service level off the Operations grid, the cost a day of a team)."""
        entries = []
        decision = model.decision
        if model.at_decision(policy, threshold) and decision.cost is not None:
            # the decision prices its own team (the curve: the reviewers each τ needs), per day when it can
            entries.append((f"team's cost/{decision.cost.per}", money(decision.cost.total)))
        for check in model.constraint_checks(policy, threshold):
            name, target, value = check["name"], check["target"], check["value"]
            label = f"{self.CONSTRAINT_LABELS.get(name, name)} {money(target) if name == 'cost_per_day' else f'{target:g}'}"
            label += self.SOURCES.get(check["source"], "")
            if check["met"] is None:
                text = "at d"
            else:
                # the quality from the curve is the metric shown above: its mark is enough
                shown = "" if value is None or (name == "quality" and check["source"] == "curve") else \
                    count(value) if name == "reviewers" else money(value) if name == "cost_per_day" else number(value)
                text = f"{shown} {'✓' if check['met'] else '✗'}".strip()
            entries.append((label, text.rjust(6)))
        return entries

    def on_resize(self, event: events.Resize) -> None:
        if self.shown is not None:  # after the resize: a layout asked for while handling it would be lost
            self.call_after_refresh(lambda: self.show(*self.shown))


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


class TradeoffView(View):
    stem = "tradeoff"
    #: the policy the legend highlights
    legend_policy: int | None = None

    def compose(self) -> ComposeResult:
        with Horizontal(id="tradeoff-main"):
            with Vertical(id="tradeoff-left"):
                yield MarkedPlot(id="tradeoff-plot")
                yield Legend(id="tradeoff-legend")
            with VerticalScroll(id="tradeoff-side"):
                yield Label("Policies (1-9)", classes="side-title")
                yield OptionList(id="policy-list")
                yield FiguresPanel(id="figures")
        with Horizontal(id="threshold-bar"):
            yield Label("τ", id="threshold-label")
            yield Slider(0.5, scale=ThresholdScale(), id="threshold-slider")
            yield ThresholdInput(placeholder="type τ, Enter", id="threshold-input")

    def load(self) -> None:
        options = self.query_one("#policy-list", OptionList)
        options.clear_options()
        options.add_options([f"{i + 1}  {name}" for i, name in enumerate(self.model.policy_names)])
        options.highlighted = self.dash.policy
        self.draw_curves()
        self.legend_policy = None
        self.redraw()

    def draw_curves(self) -> None:
        model = self.model
        targets = model.target_values
        plot = self.query_one("#tradeoff-plot", MarkedPlot)
        ylim = model.plot_limits(model.metric_name, extra=tuple(targets))

        def curves(plt) -> None:
            plt.xlabel("auto-rate")
            plt.ylabel(model.metric_label)
            # the targets are ticks: a target's line is read against its own value
            ticks = axis_ticks(*ylim, targets, plot.size.height - 4)  # less the frame and the x axis
            plt.yticks(ticks, [f"{tick:.3f}" for tick in ticks])
            for target in targets:  # first, so that the curves are drawn over them
                plt.hline(target, TARGET_COLOR)
            for i, curve in enumerate(model.plot_curves):
                # without predictions there is no auto-rate: nothing to draw (plotext fails on all-NaN lines)
                defined = ~(np.isnan(curve.auto_rate) | np.isnan(curve.metric))
                if defined.any():
                    plt.plot(curve.auto_rate[defined].tolist(), curve.metric[defined].tolist(), marker="braille",
                             color=policy_marker(i).color)

        plot.draw(curves, xlim=(0.0, 1.0), ylim=ylim)

    def draw_legend(self) -> None:
        model, selected = self.model, self.dash.policy
        entries = [(policy_marker(i, selected=i == selected), f"{i + 1} {name}")
                   for i, name in enumerate(model.policy_names)]
        if model.target_values:
            entries.append((Marker("─", TARGET_COLOR),
                            f"target{'s' if len(model.target_values) > 1 else ''} "
                            + ", ".join(f"{t:g}" for t in model.target_values)))
        self.query_one("#tradeoff-legend", Legend).show_entries(entries)
        self.legend_policy = selected

    def redraw(self) -> None:
        model, dash = self.model, self.dash
        if model is None:
            return
        self.query_one(FiguresPanel).show(model, dash.policy, dash.threshold)
        slider = self.query_one("#threshold-slider", Slider)
        slider.set_reactive(Slider.value, dash.threshold)
        slider.refresh()
        if self.legend_policy != dash.policy:
            self.draw_legend()
        points = model.points(dash.threshold)
        marks = [(x, y, policy_marker(i)) for i, (x, y) in enumerate(points)]
        self.query_one("#tradeoff-plot", MarkedPlot).mark(
            marks + [(*points[dash.policy], policy_marker(dash.policy, selected=True))])

    def rows(self) -> list[dict[str, Any]]:
        model = self.model
        return [row for i in range(len(model.policies)) for row in model.figures_rows(i, self.dash.threshold)]

    def export_name(self) -> str:
        return export_stem(self.stem, threshold=self.dash.threshold)


# -- compare --------------------------------------------------------------------------------------------

class CompareView(View):
    """The summary's policies side by side; a column is picked with the cursor and sorted with ``r``, and
    Enter selects the row's policy for the other views."""

    stem = "compare"
    BINDINGS = [Binding("r", "sort", "Sort"), Binding("enter", "select", "Select policy", show=False)]

    def compose(self) -> ComposeResult:
        yield Static(id="compare-title", markup=False)
        yield Static(id="compare-explanation", markup=False)
        yield DataTable(id="compare-table", cursor_type="cell", zebra_stripes=True, fixed_columns=1)

    def on_mount(self) -> None:
        self.sort_column: str | None = None
        self.reverse = False

    def load(self) -> None:
        self.query_one("#compare-explanation", Static).update(
            self.model.compare_explanation() if self.model.summarised else "")
        self.fill()

    def sorted_rows(self) -> list[dict[str, Any]]:
        rows = self.model.compare_rows()
        if self.sort_column is None:
            return rows
        present = [r for r in rows if r.get(self.sort_column) not in (None, "")]
        absent = [r for r in rows if r.get(self.sort_column) in (None, "")]
        present.sort(key=lambda r: r[self.sort_column], reverse=self.reverse)
        return present + absent

    def text(self, column: str, value: Any) -> str:
        if column in ("cost_optimum", "savings_vs_review_all"):
            return money(value)
        return cell(value)

    def fill(self) -> None:
        model = self.model
        title = self.query_one("#compare-title", Static)
        if not model.summarised:
            title.update("Policies side by side: comparing them…")
        else:
            currency = f" (costs in {model.currency})" if model.currency and model.summary.costs is not None else ""
            title.update(f"Policies side by side{currency} · ←/→ pick a column, r sorts by it "
                         "(again: reverses) · Enter selects the row's policy")
        table = self.query_one(DataTable)
        cursor = table.cursor_coordinate
        table.clear(columns=True)
        for name, words in model.compare_headers().items():
            arrow = "" if name != self.sort_column else (" ▼" if self.reverse else " ▲")
            table.add_column(words + arrow, key=name)
        selected = model.policy_names[self.dash.policy]
        for row in self.sorted_rows():
            mark = "▶ " if row["policy"] == selected else "  "
            # a Text, not a str, which DataTable would read as markup
            table.add_row(Text(mark + row["policy"]), *(self.text(k, v) for k, v in list(row.items())[1:]),
                          key=row["policy"])
        if table.row_count:
            table.cursor_coordinate = table.validate_cursor_coordinate(cursor)

    def redraw(self) -> None:
        if self.model is not None and self.model.summarised:
            self.fill()  # the selected policy's mark

    def sort_by(self, column: str) -> None:
        if self.sort_column == column:
            self.reverse = not self.reverse
        else:
            self.sort_column, self.reverse = column, False
        self.fill()

    def action_sort(self) -> None:
        table = self.query_one(DataTable)
        if self.model is not None and self.model.summarised and table.columns:
            self.sort_by(str(table.coordinate_to_cell_key(table.cursor_coordinate).column_key.value))

    def action_select(self) -> None:
        table = self.query_one(DataTable)
        if self.model is None or not table.row_count:
            return
        policy = str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)
        self.dash.set_policy(self.model.policy_names.index(policy))
        self.dash.notify(f"{policy} selected for the other views", title="Policy")

    def on_data_table_cell_selected(self, event: DataTable.CellSelected) -> None:
        event.stop()
        self.action_select()

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        event.stop()
        self.sort_by(str(event.column_key.value))

    def rows(self) -> list[dict[str, Any]]:
        return self.sorted_rows()


# -- fields ---------------------------------------------------------------------------------------------

#: the Fields view's columns in words (others: the name with spaces)
FIELD_HEADERS = {"predictions": "predictions", "anls": "ANLS", "auto_rate": "auto-rate at τ",
                 "suggested_threshold": "suggested τ"}


class FieldsView(View):
    """Per-field figures as a text table whose header stays: a threshold move repaints its text, without a
    DataTable's re-render of every cell. Counts come with their rates."""

    stem = "fields"
    #: each column's width, fixed at load so a threshold move keeps the table's shape
    widths: dict[str, int] = {}

    def compose(self) -> ComposeResult:
        yield Readout(id="fields-title")
        yield TextTable(id="fields-table")

    def columns(self, row: dict[str, Any]) -> list[str]:
        """What is shown: a count's rate goes in the count's cell."""
        return [name for name in row if not name.endswith("_rate") or name == "auto_rate"]

    def texts(self, row: dict[str, Any]) -> dict[str, str]:
        texts = {}
        for name in self.columns(row):
            value, rate = row[name], row.get(f"{name}_rate")
            if isinstance(value, int) and name != "predictions":
                texts[name] = count(value) + ("" if rate is None else f" ({rate:.1%})")
            elif isinstance(value, int):
                texts[name] = count(value)
            else:
                # a field's name comes from the data: its control characters are shown escaped, on one line
                texts[name] = escaped(cell(value), SHOWN_LIMIT)
        return texts

    def headers(self, row: dict[str, Any]) -> dict[str, str]:
        groupings = self.model.groupings
        words = {"by": "by", "field": groupings[0].by if len(groupings) == 1 else "field", **FIELD_HEADERS}
        return {name: words.get(name, name.replace("_", " ")) for name in self.columns(row)}

    def load(self) -> None:
        rows = self.rows()
        headers = self.headers(rows[0]) if rows else {}
        texts = [self.texts(row) for row in rows]
        self.widths = {name: max([cell_len(words), 6] + [cell_len(t[name]) for t in texts])
                       for name, words in headers.items()}
        self.redraw()

    def redraw(self) -> None:
        model, dash = self.model, self.dash
        if model is None:
            return
        kind = " and ".join(grouping.by for grouping in model.groupings)
        target = model.suggested_target()
        if target is not None:
            source = f"suggested τ per {model.groupings[0].by} optimised for {target} {model.metric_label}"
        elif model.summarised or not model.target_values:
            source = "no suggested τ: the scenario has no target"
        else:
            source = "suggested τ: optimising…"
        rates = f"rates: of {model.table.field_rate_basis}"
        self.query_one("#fields-title", Readout).show_text(
            f"Per {kind}: {model.policy_names[dash.policy]} at τ = {dash.threshold:.4f} · {source} · {rates}")
        rows = self.rows()
        header = self.line(self.headers(rows[0]) if rows else {})
        self.query_one(TextTable).show(header, [self.line(self.texts(row)) for row in rows])

    def line(self, values: dict[str, str]) -> str:
        padded = []
        for name, value in values.items():
            gap = " " * (self.widths[name] - cell_len(value))  # names may hold wide characters
            padded.append(value + gap if name in ("by", "field") else gap + value)
        return "  ".join(padded)

    def rows(self) -> list[dict[str, Any]]:
        return self.model.field_rows(self.dash.policy, self.dash.threshold)

    def export_name(self) -> str:
        return export_stem(self.stem, policy=self.model.policy_names[self.dash.policy], threshold=self.dash.threshold)


# -- calibration ----------------------------------------------------------------------------------------

class CalibrationView(View):
    """The reliability diagram: each confidence bin's accuracy against its mean confidence, over the
    predictions per bin (bars, right axis)."""

    stem = "calibration"
    POINTS = Marker("●", "cyan+")
    DIAGONAL = Marker("⠔", TARGET_COLOR)
    COUNTS = Marker("█", "gray")

    def compose(self) -> ComposeResult:
        yield Static(id="calibration-ece", markup=False)
        yield PlotextPlot(id="calibration-plot")
        yield Legend(id="calibration-legend")
        yield TextTable(id="calibration-groups")

    def load(self) -> None:
        model = self.model
        note = self.query_one("#calibration-ece", Static)
        plot, legend = self.query_one(PlotextPlot), self.query_one("#calibration-legend", Legend)
        rows = self.rows()
        plot.display = legend.display = bool(rows)
        if not model.summarised:
            note.update("Calibration: computing…")
            return
        calibration = model.calibration  # None when no prediction has a confidence: nothing is measured
        width, mass, aurc = (None, None, None) if calibration is None else (
            calibration.ece_equal_width, calibration.ece_equal_mass, calibration.aurc)
        note.update(f"ECE {cell(width)} (equal-width bins), {cell(mass)} (equal-mass bins) · AURC {cell(aurc)}"
                    + ("" if rows else " · no predictions to bin"))
        self.show_groups(model.calibration_groups())
        if not rows:
            return
        plt = plot.plt
        plt.clear_figure()
        middles = [(r["lower"] + r["upper"]) / 2 for r in rows]
        counts = [r["count"] for r in rows]
        plt.bar(middles, counts, yside="right", color=self.COUNTS.color, width=0.3 / len(rows))
        most = max(counts)
        plt.yticks([most * i / 4 for i in range(5)], [f"{round(most * i / 4):,}" for i in range(5)], yside="right")
        plt.plot([0, 1], [0, 1], color=self.DIAGONAL.color, marker="braille")
        confidence, accuracy = [r["mean_confidence"] for r in rows], [r["accuracy"] for r in rows]
        plt.plot(confidence, accuracy, color=self.POINTS.color, marker="braille")
        plt.scatter(confidence, accuracy, color=self.POINTS.color, marker=self.POINTS.symbol)
        ticks = [i / 5 for i in range(6)]
        plt.xticks(ticks, [f"{t:.1f}" for t in ticks])
        plt.yticks(ticks, [f"{t:.1f}" for t in ticks])
        plt.xlim(0, 1)
        plt.ylim(0, 1)
        plt.xlabel("mean confidence of the bin")
        plt.ylabel("accuracy")
        plot.refresh()
        legend.show_entries([(self.POINTS, "a bin's accuracy at its mean confidence"),
                             (self.DIAGONAL, "perfect calibration"),
                             (self.COUNTS, "predictions in the bin (right axis)")])

    def show_groups(self, groups: list[tuple[str, tuple[GroupCalibration, ...]]]) -> None:
        """ECE per document type, then per field, the worst first: a few lines under the plot that scroll,
        however many fields there are."""
        table = self.query_one("#calibration-groups", TextTable)
        table.display = bool(groups)
        lines = []
        for by, rows in groups:
            worst_first = sorted(rows, key=lambda row: -math.inf if row.ece_equal_width is None
                                 else -row.ece_equal_width)
            lines.extend(f"{by:<13}  {row.name or '(none)':<28}  {cell(row.ece_equal_width):>7}  "
                         f"{row.predictions:>11,}" for row in worst_first)
        table.show(f"{'ECE by':<13}  {'name':<28}  {'ECE':>7}  {'predictions':>11}", lines)

    def rows(self) -> list[dict[str, Any]]:
        return self.model.calibration_rows()


# -- costs ----------------------------------------------------------------------------------------------

COST_OPTIMUM = Marker("★", "green+", "least cost")
CURRENT_THRESHOLD = Marker("●", "red+", "τ now")
REVIEW_ALL = Marker("─", "gray", "review all")


class CostsView(View):
    """Cost against τ for the selected policy, zoomed on where it beats reviewing everything (z: all of
    [0, 1]), with its optimum, the current τ and the cost of reviewing everything."""

    stem = "costs"
    #: what the drawn figure shows: (policy, zoomed, model version); redrawn when it changes
    drawn: tuple | None = None
    zoomed = True
    #: the τ range of the drawn figure, and whether τ was inside it at the last redraw (the legend says when not)
    drawn_window = (0.0, 1.0)
    inside: bool | None = None

    def compose(self) -> ComposeResult:
        yield Readout(id="costs-note")
        yield MarkedPlot(id="costs-plot")
        yield Legend(id="costs-legend")

    def load(self) -> None:
        self.drawn = None
        self.redraw()

    def window(self) -> tuple[float, float]:
        return self.model.cost_window(self.dash.policy) if self.zoomed else (0.0, 1.0)

    def draw_curve(self) -> None:
        model, policy = self.model, self.dash.policy
        window = self.drawn_window = self.window()
        self.drawn = (policy, self.zoomed, self.dash.model_version)
        thresholds, costs = model.cost_curve(policy, window)
        best = model.cost_optimum(policy)
        review_all = model.review_all_cost()
        extra = tuple(v for v in (review_all, None if best is None else best.cost) if v is not None)

        def cost_curve(plt) -> None:
            plt.xlabel("threshold τ")
            plt.ylabel("cost" + (f" ({model.currency})" if model.currency else ""))
            if review_all is not None:
                plt.hline(review_all, REVIEW_ALL.color)
            plt.plot(thresholds.tolist(), costs.tolist(), marker="braille", color=policy_marker(policy).color)

        self.query_one("#costs-plot", MarkedPlot).draw(
            cost_curve, xlim=window, ylim=padded_limits([float(costs.min()), float(costs.max()), *extra]))
        self.inside = None

    def draw_legend(self, inside: bool) -> None:
        model, policy, window = self.model, self.dash.policy, self.drawn_window
        now = CURRENT_THRESHOLD.label + ("" if inside else " (outside: z shows all)")
        entries = [(policy_marker(policy), model.policy_names[policy]), (CURRENT_THRESHOLD, now)]
        best, review_all = model.cost_optimum(policy), model.review_all_cost()
        if best is not None:
            edge = " (edge of the range swept)" if best.edge_of_range else ""
            entries.append((COST_OPTIMUM, f"least cost {model.money(best.cost)} at τ = {best.threshold:.4f}{edge}"))
        if review_all is not None:
            entries.append((REVIEW_ALL, f"review all {model.money(review_all)}"))
        zoom = "all" if self.zoomed else "zoom"
        entries.append((Marker("↔", "gray"), f"τ from {window[0]:g} to {window[1]:g} (z: {zoom})"))
        self.query_one("#costs-legend", Legend).show_entries(entries)
        self.inside = inside

    def action_zoom(self) -> None:
        self.zoomed = not self.zoomed
        self.redraw()

    def redraw(self) -> None:
        model, dash = self.model, self.dash
        if model is None:
            return
        note = self.query_one("#costs-note", Readout)
        plot, legend = self.query_one("#costs-plot", MarkedPlot), self.query_one("#costs-legend", Legend)
        if model.costs is None:
            note.show_text(self.no_costs())
            plot.display = legend.display = False
            return
        plot.display = legend.display = True
        if self.drawn != (dash.policy, self.zoomed, dash.model_version):
            self.draw_curve()
        inside = self.drawn_window[0] <= dash.threshold <= self.drawn_window[1]
        if inside != self.inside:
            self.draw_legend(inside)
        best = model.cost_optimum(dash.policy)
        now = model.cost_parts(dash.policy, dash.threshold)["total"]  # as the figures panel prices it
        staffing = " (staffing included)" if model.staffed else ""
        text = f"{model.policy_names[dash.policy]}: cost {model.money(now)}{staffing} at τ = {dash.threshold:.4f}"
        if best is not None:
            text += (f" · least {model.money(best.cost)} at τ = {best.threshold:.4f} (o goes there), "
                     f"saving {model.money(best.savings_vs_review_all)} against reviewing everything")
            if best.edge_of_range:
                # edge_of_range_text reads the cost optimum as summary.json holds it (the report calls it so too)
                text += f"\n⚠ {edge_of_range_text(encoded(best), model.summary.thresholds)}"
        elif not model.summarised:
            text += " · finding the least cost…"
        note.show_text(text)
        optimum = [(best.threshold, best.cost, COST_OPTIMUM)] if best is not None else []
        plot.mark([(dash.threshold, now, CURRENT_THRESHOLD), *optimum])  # at the optimum, the star shows

    def no_costs(self) -> str:
        model = self.model
        data = model.data_file
        if data is None:
            return ("This scenario has no costs: add a `costs:` section to it, e.g.\n\n"
                    "costs:\n  hourly_rate: 30         # a reviewer's hour\n"
                    "  per_residual_error: 1.5 # an error left in the output")
        return ("Plain records carry no costs. To see them, write a scenario beside the data, e.g. study.yaml:\n\n"
                f"name: study\ndata:\n  file: {data}\npolicies: [{', '.join(model.policy_names)}]\n"
                "targets: [0.9, 0.95]\ncosts:\n  hourly_rate: 30         # a reviewer's hour\n"
                "  per_residual_error: 1.5 # an error left in the output\n\n"
                "and open it: rpa-sim dashboard study.yaml")

    def rows(self) -> list[dict[str, Any]]:
        return self.model.cost_rows(self.dash.policy)

    def export_name(self) -> str:
        return export_stem(self.stem, policy=self.model.policy_names[self.dash.policy])


# -- SMuDGE ---------------------------------------------------------------------------------------------

ALPHA = Marker("●", "red+", "α")


class SmudgeView(View):
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

        def alpha_curve(plt) -> None:
            plt.xlabel("α")
            plt.ylabel("mean SMuDGE")
            if pairs:
                plt.plot([p[0] for p in pairs], [p[1] for p in pairs], marker="braille", color="cyan+")

        if model.has_smudge:
            low, high = padded_limits([p[1] for p in pairs])
            self.query_one("#smudge-plot", MarkedPlot).draw(alpha_curve, xlim=(0.0, 1.0), ylim=(low, min(high, 1.0)))
        self.redraw()

    def redraw(self) -> None:
        model, dash = self.model, self.dash
        if model is None:
            return
        note = self.query_one("#smudge-note", Readout)
        plot = self.query_one("#smudge-plot", MarkedPlot)
        if not model.has_smudge:
            note.show_text("SMuDGE is a VQA metric: open a VQA scenario (e.g. docvqa-demo).")
            plot.display = False
            self.query_one("#alpha-bar").display = False
            return
        value = model.smudge_at(dash.alpha)
        note.show_text(f"mean SMuDGE {cell(value)} at α = {dash.alpha:.2f} · SMuDGE = α × answer match "
                       "+ (1 − α) × grounding (how near the answer's place in the page is to the truth's) · "
                       "←/→ move α")
        self.query_one("#alpha-slider", Slider).set_reactive(Slider.value, dash.alpha)
        self.query_one("#alpha-slider", Slider).refresh()
        plot.mark([] if value is None else [(dash.alpha, value, ALPHA)])

    def rows(self) -> list[dict[str, Any]]:
        return self.model.smudge_rows()
