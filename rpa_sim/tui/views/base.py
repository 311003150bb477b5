"""What every view is: :class:`View`, drawn from the dashboard's state; and :class:`ComputedView`, whose
figures take long to compute (simulations, replays) and are worked out off the event loop.

A :class:`ComputedView` computes for its current key (the policy, τ and any
control of its own) on a worker thread once the key has rested for
``settle_seconds``, says meanwhile that it is computing, and keeps every result
by key: moving τ never waits, and going back to a key shows it at once.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, ClassVar, Generic, TypeVar

from textual.containers import Vertical
from textual.timer import Timer

from rpa_sim.tui.export import export_stem
from rpa_sim.tui.model import DashboardModel
from rpa_sim.tui.state import DashboardState

__all__ = ["ComputedView", "View"]

Key = TypeVar("Key", bound=Hashable)
Result = TypeVar("Result")


class View(Vertical):
    """A view: ``load()`` draws what follows the model, ``redraw()`` what follows the threshold, policy and
    alpha; ``rows()`` is what export writes. It reads :attr:`state`, which the app gives it."""

    stem = "view"
    #: the model version (:attr:`DashboardState.model_version`) the view was drawn for
    loaded_version = -1

    def __init__(self, state: DashboardState, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.state = state

    @property
    def model(self) -> DashboardModel:
        """The state's model, for drawing: a view is loaded and drawn only once there is one."""
        model = self.state.model
        if model is None:
            raise RuntimeError(f"the {self.stem} view is drawn before the dashboard has a model")
        return model

    def ensure_loaded(self) -> bool:
        """Load the view if the model changed since it was drawn (views are drawn when first shown)."""
        if self.state.model is None or self.loaded_version == self.state.model_version:
            return False
        self.loaded_version = self.state.model_version
        self.load()
        return True

    def load(self) -> None:
        self.redraw()

    def redraw(self) -> None:
        pass

    def rows(self) -> list[dict[str, Any]]:
        return []

    def export_name(self) -> str:
        """The export's file name without suffix: the view, with the policy and τ when its rows depend on them."""
        return export_stem(self.stem)


class ComputedView(View, Generic[Key, Result]):
    """A view computed per :meth:`key` on a worker thread; subclasses say what to compute and how to show it."""

    #: how long the key must rest before the view computes for it (seconds)
    settle_seconds: ClassVar[float] = 0.2
    #: the results computed, by key
    results: dict[Key, Result]
    #: the key the view shows, and the key being computed (None: nothing)
    shown_key: Key | None = None
    computing: Key | None = None
    _settle: Timer | None = None

    def __init__(self, state: DashboardState, *, id: str | None = None) -> None:
        super().__init__(state, id=id)
        self.results = {}

    def key(self) -> Key:
        """What the figures depend on now."""
        raise NotImplementedError

    def calculation(self, key: Key) -> Callable[[], Result]:
        """The work for ``key``, bound to the state it needs now; it runs on a worker thread."""
        raise NotImplementedError

    def show(self, key: Key) -> None:
        """Draw the result of ``key`` (it is in :attr:`results`)."""
        raise NotImplementedError

    def show_pending(self, key: Key) -> None:
        """Say that the figures of ``key`` are being computed."""
        raise NotImplementedError

    def request(self) -> None:
        """Show the current key's result, or compute it once the key rests."""
        key = self.key()
        if key in self.results:
            self.show(key)
            return
        if self._settle is not None:
            self._settle.stop()
        self._settle = self.set_timer(self.settle_seconds, self.compute)
        self.show_pending(key)

    def compute(self) -> None:
        """Start computing for the current key on a worker thread (a newer request replaces it)."""
        key = self.key()
        if key in self.results or key == self.computing:
            return
        self.computing = key
        work = self.calculation(key)

        def run() -> None:
            result = work()
            self.app.call_from_thread(self.computed, key, result)

        self.run_worker(run, thread=True, exclusive=True, group=self.stem, name=self.stem)

    def computed(self, key: Key, result: Result) -> None:
        self.results[key] = result
        if self.computing == key:
            self.computing = None
        if key == self.key():
            self.show(key)
        elif self.computing is None:
            self.redraw()  # the key moved while this was computed: compute for where it is now
