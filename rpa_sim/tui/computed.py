"""Views whose figures take long to compute (simulations, replays): worked out off the event loop.

A :class:`ComputedView` computes for its current key (the policy, τ and any
control of its own) on a worker thread once the key has rested for
``settle_seconds``, says meanwhile that it is computing, and keeps every result
by key: moving τ never waits, and going back to a key shows it at once.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, ClassVar

from textual.timer import Timer

from rpa_sim.tui.views import View

__all__ = ["ComputedView"]


class ComputedView(View):
    """A view computed per :meth:`key` on a worker thread; subclasses say what to compute and how to show it."""

    #: how long the key must rest before the view computes for it (seconds)
    settle_seconds: ClassVar[float] = 0.2
    #: the results computed, by key
    results: dict[Hashable, Any]
    #: the key the view shows, and the key being computed (None: nothing)
    shown_key: Hashable | None = None
    computing: Hashable | None = None
    _settle: Timer | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.results = {}

    def key(self) -> Hashable:
        """What the figures depend on now."""
        raise NotImplementedError

    def calculation(self, key: Hashable) -> Callable[[], Any]:
        """The work for ``key``, bound to the state it needs now; it runs on a worker thread."""
        raise NotImplementedError

    def show(self, key: Hashable) -> None:
        """Draw the result of ``key`` (it is in :attr:`results`)."""
        raise NotImplementedError

    def show_pending(self, key: Hashable) -> None:
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

    def computed(self, key: Hashable, result: Any) -> None:
        self.results[key] = result
        if self.computing == key:
            self.computing = None
        if key == self.key():
            self.show(key)
        elif self.computing is None:
            self.redraw()  # the key moved while this was computed: compute for where it is now
