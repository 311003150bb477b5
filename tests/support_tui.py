"""What the dashboard's Pilot tests share: a small scenario, and waiting for the app and for computed views."""

from __future__ import annotations

import asyncio
import functools
import time
from pathlib import Path

#: a KIE scenario that loads in about a second: two policies, costs, two targets
SCENARIO = """\
name: tui-small
data:
  generate: receipts
  n: 60
  seed: 3
policies: [confidence, document-escalation]
costs:
  hourly_rate: 30
  per_residual_error: 1.5
  currency: EUR
targets: [0.85, 0.9]
"""


def run_async(test):
    """Run an async test with asyncio.run (the project has no async pytest plugin)."""
    @functools.wraps(test)
    def wrapper(*args, **kwargs):
        return asyncio.run(test(*args, **kwargs))
    return wrapper


def scenario_file(folder: Path, text: str, name: str = "scenario.yaml") -> str:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return str(path)


async def loaded(app, pilot, *, timeout: float = 60.0) -> None:
    """Wait until the app has loaded its source and the comparison of its policies, or failed to."""
    start = time.monotonic()
    while app.error is None and app.summary_error is None and not (app.model is not None and app.model.summarised):
        assert time.monotonic() - start < timeout, "the dashboard did not load"
        await pilot.pause(0.02)
    await pilot.pause()


async def ready(app, pilot, *, timeout: float = 60.0) -> None:
    """Wait until the app has loaded its source and the comparison of its policies, without an error."""
    await loaded(app, pilot, timeout=timeout)
    assert app.error is None, app.error
    assert app.summary_error is None, app.summary_error


def notifications(app) -> list[tuple[str, str]]:
    """The notifications the screen shows, oldest first, each as (severity, text: the title's line, then the
    message); the app runs with ``run_test(notifications=True)``, which shows them."""
    severities = ("information", "warning", "error")
    return [(next(severity for severity in severities if toast.has_class(f"-{severity}")), str(toast.render()))
            for toast in app.screen.query("Toast")]


async def shown(view, pilot, *, timeout: float = 60.0) -> None:
    """Wait until a computed view (:class:`rpa_sim.tui.views.base.ComputedView`) shows its current key."""
    start = time.monotonic()
    while view.shown_key != view.key():
        assert time.monotonic() - start < timeout, "the view did not compute"
        await pilot.pause(0.02)
    await pilot.pause()


#: KIE with costs priced by the hour, for the views that price a review team (without its operations: section)
STAFFED_SCENARIO = """\
name: tui-operations
data:
  generate: receipts
  n: 80
  seed: 3
policies: [confidence, document-escalation]
reviewer: {seconds_per_item: 8, seconds_per_document: 25}
costs: {hourly_rate: 30, per_residual_error: 1.5, currency: EUR}
thresholds: linspace:0:1:21
targets: [0.9]
"""
#: The operations: section of STAFFED_SCENARIO: two shifts of two reviewers over a business day
OPERATIONS = """\
operations:
  arrivals: {hourly: [0, 0, 0, 0, 0, 0, 0, 0, 60, 80, 80, 70, 50, 60, 70, 60, 40, 0, 0, 0, 0, 0, 0, 0]}
  reviewers:
    shifts: [{start_hour: 8, end_hour: 12, reviewers: 2}, {start_hour: 12, end_hour: 17, reviewers: 2}]
  service_level: {share: 0.9, within_hours: 2}
  days: 2
"""
