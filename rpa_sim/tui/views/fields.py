"""The Fields view (``f``): per field, the predictions, the errors and their rates, the auto-rate at τ and
the suggested per-field threshold."""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from textual.app import ComposeResult

from rpa_sim.common.errors import SHOWN_LIMIT, escaped
from rpa_sim.common.formatting import count
from rpa_sim.tui.export import export_stem
from rpa_sim.tui.texts import cell
from rpa_sim.tui.views.base import View
from rpa_sim.tui.widgets.readout import Readout
from rpa_sim.tui.widgets.text_table import TextTable

__all__ = ["FIELD_HEADERS", "FieldsView"]

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
        model, state = self.state.model, self.state
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
            f"Per {kind}: {model.policy_names[state.policy]} at τ = {state.threshold:.4f} · {source} · {rates}")
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
        return self.model.field_rows(self.state.policy, self.state.threshold)

    def export_name(self) -> str:
        return export_stem(self.stem, policy=self.model.policy_names[self.state.policy],
                           threshold=self.state.threshold)
