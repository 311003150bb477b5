"""What rpa_sim's process pools share: signals held while a pool starts, how a worker takes them, and
the garbage collector paused while a batch of fresh objects is built.

Used by parallel evaluation and by generation, so that Ctrl-C and SIGTERM
leave no worker and no half-written file behind.
"""

from __future__ import annotations

import contextlib
import gc
import signal
from collections.abc import Iterator

__all__ = ["signals_held", "worker_signals", "without_gc"]

_STOPPING = {signal.SIGINT, signal.SIGTERM}


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM while the workers start; one that came meanwhile is raised on leaving.

    Raised while the pool forks, the command line's handler would be lost in
    Python's after-fork hooks; raised between starting the workers and their
    manager thread, it would leave a pool that cannot be shut down.
    """
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPPING)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def worker_signals() -> None:
    """A worker leaves Ctrl-C and SIGTERM to the parent, which stops it.

    A worker that a signal to the whole process group ended could die while
    it sends a result: the pool's manager thread, which reads a result whole,
    would then wait forever for the rest of it, and the command would hang
    (one SIGTERM to the group in four did, while ``generate`` wrote). So the
    worker ignores both; the parent, which gets them too, cancels the work
    not started and shuts the pool down. The signals held while the pool
    started are let through here, and ignored.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPPING)


@contextlib.contextmanager
def without_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while a batch or block is built, then restore it as it was.

    A block of records is some ten thousand fresh dicts and lists, all alive
    until the block is handed out: the collector's passes over them cost about
    as much as building them, and find nothing, as a block holds no reference
    cycle (plain dicts, lists and strings). Reference counting still frees
    everything as usual.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
