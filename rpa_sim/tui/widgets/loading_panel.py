"""What loading is doing, while the dashboard opens its source."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import ProgressBar, Static

from rpa_sim.tui.stages import Progress

__all__ = ["LoadingPanel"]


class LoadingPanel(Vertical):
    """What loading is doing: each stage on a line (done, or how far), and a bar for the current one."""

    def compose(self) -> ComposeResult:
        yield Static(id="loading-title", markup=False)
        yield Static(id="loading-stages", markup=False)
        yield ProgressBar(id="loading-bar", show_eta=False)
        yield Static("q quits at any time", id="loading-hint")

    def on_mount(self) -> None:
        self.stages: dict[str, tuple[Progress, float, float | None]] = {}

    def start(self, source: str) -> None:
        self.query_one("#loading-title", Static).update(f"Opening {source}")

    def show(self, progress: Progress, now: float) -> None:
        """Show ``progress``, reported at time ``now`` (``time.monotonic``)."""
        _, started, _ = self.stages.get(progress.stage, (progress, now, None))
        self.stages[progress.stage] = (progress, started, now if progress.finished else None)
        lines = []
        for shown, began, ended in self.stages.values():
            mark = "✓" if ended is not None else "…"
            took = f"  {ended - began:.1f} s" if ended is not None else ""
            lines.append(f"{mark} {shown.text}{took}")
        self.query_one("#loading-stages", Static).update("\n".join(lines))
        # the bar follows the innermost stage under way (evaluating, which trails reading)
        running = [shown for shown, _, ended in self.stages.values() if ended is None]
        if running:
            self.query_one(ProgressBar).update(total=running[-1].total, progress=running[-1].done)
