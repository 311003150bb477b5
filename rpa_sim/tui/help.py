"""The help screen (F1 or ?)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

HELP = """\
# rpa-sim dashboard

| Key | Action |
|---|---|
| `t` `c` `f` `l` `$` `s` | Trade-off, Compare, Fields, Calibration, Costs, SMuDGE view |
| `+` / `-` | threshold up / down by 0.01 (fine) |
| `]` / `[` | threshold up / down by 0.05 (coarse) |
| `=` | type a threshold (Enter applies) |
| `1`-`9` | select a policy |
| left / right | move the focused slider |
| `e` / `j` | export the current view as CSV / JSON |
| `p` | save an SVG screenshot |
| `ctrl+p` | command palette |
| `F1` / `?` | this help |
| `q` / `ctrl+q` | quit |

Compare view: select a column header to sort by it (again to reverse).
"""


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,f1,question_mark,q", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"):
            yield Markdown(HELP, id="help-text")
