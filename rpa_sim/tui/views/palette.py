"""The colours and symbols that tell the policies apart, the same in every plot and legend."""

from __future__ import annotations

from dataclasses import replace

from rpa_sim.tui.widgets.plot import Marker

__all__ = ["POLICY_MARKERS", "TARGET_COLOR", "policy_marker"]

#: each policy's symbol and colour, by its place in the scenario (1-9), in the plot and its legend
POLICY_MARKERS = [Marker(symbol, color) for symbol, color in (
    ("●", "cyan+"), ("■", "orange+"), ("▲", "magenta+"), ("◆", "green+"), ("▼", "blue+"), ("★", "red+"),
    ("✚", "cyan"), ("✖", "magenta"), ("◉", "green"))]
TARGET_COLOR = "gray"


def policy_marker(index: int, *, selected: bool = False) -> Marker:
    """Policy ``index``'s marker (the palette repeats after nine), in reverse video for the selected one."""
    return replace(POLICY_MARKERS[index % len(POLICY_MARKERS)], highlight=selected)
