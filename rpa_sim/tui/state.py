"""What the views read of the dashboard: the model and where the user stands in it.

:class:`~rpa_sim.tui.app.DashboardApp` implements :class:`DashboardState` and hands itself to each view it
composes; a view reads the state, never the app, so that it can be shown by anything that keeps one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from rpa_sim.tui.model import DashboardModel

__all__ = ["DashboardState"]


class DashboardState(Protocol):
    """The model the views draw, and the threshold, policy and α every view shares."""

    @property
    def model(self) -> DashboardModel | None:
        """The loaded model; None while loading or after the load failed."""

    @property
    def model_version(self) -> int:
        """Bumped when the model or its summary arrives: a view drawn for an older version draws again."""

    @property
    def threshold(self) -> float:
        """The review threshold τ, in [0, 1]."""

    @property
    def policy(self) -> int:
        """The selected policy's place in :attr:`DashboardModel.policies <rpa_sim.tui.model.DashboardModel>`."""

    @property
    def alpha(self) -> float:
        """SMuDGE's α: the weight of the answer's match against its grounding."""

    @property
    def signal(self) -> str | None:
        """The signal the trade-off view routes on beside the policies, and the Signals view shows (``s`` cycles
        it); None for none."""

    def set_policy(self, index: int) -> None:
        """Select policy ``index`` for every view (nothing happens for an index out of range)."""
