"""The Textual dashboard (``rpa-sim dashboard``): the only part of rpa_sim that imports Textual."""

from __future__ import annotations

from pathlib import Path

__all__ = ["run_dashboard"]


def run_dashboard(source: str | None = None, *, export_dir: str | Path | None = None) -> int:
    """Run the dashboard on a scenario (bundled name or YAML path) or a records file; None = receipts-demo."""
    from rpa_sim.tui.app import DashboardApp  # noqa: PLC0415 (Textual only when the dashboard runs)

    app = DashboardApp(source, export_dir=export_dir)
    result = app.run()
    return 1 if app.error is not None else int(result or 0)
