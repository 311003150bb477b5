"""The Compare view (``c``): the study's policies side by side, sorted by any column."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Static

from rpa_sim.common.formatting import money
from rpa_sim.tui.texts import cell
from rpa_sim.tui.views.base import View

__all__ = ["CompareView"]


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
        rows, column = self.model.compare_rows(), self.sort_column
        if column is None:
            return rows
        present = [r for r in rows if r.get(column) not in (None, "")]
        absent = [r for r in rows if r.get(column) in (None, "")]
        present.sort(key=lambda r: r[column], reverse=self.reverse)
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
            priced = model.summary is not None and model.summary.costs is not None
            currency = f" (costs in {model.currency})" if model.currency and priced else ""
            title.update(f"Policies side by side{currency} · ←/→ pick a column, r sorts by it "
                         "(again: reverses) · Enter selects the row's policy")
        table = self.query_one(DataTable)
        cursor = table.cursor_coordinate
        table.clear(columns=True)
        for name, words in model.compare_headers().items():
            arrow = "" if name != self.sort_column else (" ▼" if self.reverse else " ▲")
            table.add_column(words + arrow, key=name)
        selected = model.policy_names[self.state.policy]
        for row in self.sorted_rows():
            mark = "▶ " if row["policy"] == selected else "  "
            # a Text, not a str, which DataTable would read as markup
            table.add_row(Text(mark + row["policy"]), *(self.text(k, v) for k, v in list(row.items())[1:]),
                          key=row["policy"])
        if table.row_count:
            table.cursor_coordinate = table.validate_cursor_coordinate(cursor)

    def redraw(self) -> None:
        if self.state.model is not None and self.model.summarised:
            self.fill()  # the selected policy's mark

    def sort_by(self, column: str) -> None:
        if self.sort_column == column:
            self.reverse = not self.reverse
        else:
            self.sort_column, self.reverse = column, False
        self.fill()

    def action_sort(self) -> None:
        table = self.query_one(DataTable)
        if self.state.model is not None and self.model.summarised and table.columns:
            self.sort_by(str(table.coordinate_to_cell_key(table.cursor_coordinate).column_key.value))

    def action_select(self) -> None:
        table = self.query_one(DataTable)
        if self.state.model is None or not table.row_count:
            return
        policy = str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)
        self.state.set_policy(self.model.policy_names.index(policy))
        self.notify(f"{policy} selected for the other views", title="Policy", markup=False)

    def on_data_table_cell_selected(self, event: DataTable.CellSelected) -> None:
        event.stop()
        self.action_select()

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        event.stop()
        self.sort_by(str(event.column_key.value))

    def rows(self) -> list[dict[str, Any]]:
        return self.sorted_rows()
