"""The Textual dashboard (``rpa-sim dashboard``): the only part of rpa_sim that imports Textual."""

from __future__ import annotations

from pathlib import Path

from rpa_sim.common.errors import InputError

__all__ = ["run_dashboard"]


def run_dashboard(source: str | None = None, *, export_dir: str | Path | None = None) -> int:
    """Run the dashboard on a scenario (bundled name or YAML path), records or an outcome table; None =
    receipts-demo.

    Raises
    ------
    InputError
        What the source could not be opened for, once the app has closed, so that the terminal
        keeps it (the command line prints it as its one error line).
    """
    from rpa_sim.tui.app import DashboardApp  # noqa: PLC0415 (Textual only when the dashboard runs)

    app = DashboardApp(source, export_dir=export_dir)
    result = app.run()
    if app.error is not None:
        raise InputError(f"dashboard: {app.error}") from app.load_error
    return int(result or 0)
