"""What the report's tests share: reading a report's tables and texts back, and running a small scenario."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

from rpa_sim.study.run import run_scenario
from rpa_sim.study.scenario import load_scenario


class Cells(HTMLParser):
    """Every table's header and body cells (and the classes of body cells) by table id, the ids of the
    elements, and the text of the paragraphs and list items that have an id."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, dict[str, list]] = {}
        self.ids: list[str] = []
        self.texts: dict[str, str] = {}
        self._table: str | None = None
        self._row: list[str] | None = None
        self._row_classes: list[set[str]] | None = None
        self._cell: list[str] | None = None
        self._text: tuple[str, str, list[str]] | None = None

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if "id" in attributes:
            self.ids.append(attributes["id"])
            if tag in ("p", "li") and self._text is None:
                self._text = (tag, attributes["id"], [])
        if tag == "table":
            self._table = attributes["id"]
            self.tables[self._table] = {"header": [], "rows": [], "classes": []}
        elif tag == "tr":
            self._row, self._row_classes = [], []
        elif tag in ("td", "th"):
            self._cell = []
            self._row_classes.append(set((attributes.get("class") or "").split()))

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self._row.append("".join(self._cell))
            self._cell = None
        elif tag == "tr":
            table = self.tables[self._table]
            if table["header"] or self._table == "provenance":  # the provenance table has no header row
                table["rows"].append(self._row)
                table["classes"].append(self._row_classes)
            else:
                table["header"] = self._row
        elif tag == "table":
            self._table = None
        elif self._text is not None and tag == self._text[0]:
            self.texts[self._text[1]] = "".join(self._text[2])
            self._text = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        if self._text is not None:
            self._text[2].append(data)


def parse_html(text: str) -> Cells:
    """The tables, ids and texts of an HTML text (a page or a fragment)."""
    cells = Cells()
    cells.feed(text)
    return cells


def parse_report(path: Path) -> Cells:
    """The tables, ids and texts of a report file."""
    return parse_html(path.read_text(encoding="utf-8"))


def formatted(value: float | None, digits: int = 4) -> str:
    """A figure as docs/report.md says the report prints it: fixed decimals, thousands separated, ``-`` absent."""
    return "-" if value is None else f"{value:,.{digits}f}"


def run_yaml(folder: Path, text: str):
    """Run the scenario written in ``text`` (saved in ``folder``); the run's result."""
    path = folder / "scenario.yaml"
    path.write_text(text)
    return run_scenario(*load_scenario(path))
