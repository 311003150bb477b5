"""What rpa_sim's process pools share: how many workers to start, signals held while a pool starts,
how a worker takes them and ends with its parent, whether a process runs, and the garbage collector
paused while a batch of fresh objects is built.

Used by parallel evaluation and by generation, so that Ctrl-C and SIGTERM
leave no worker and no half-written file behind, a parent that is killed
leaves no worker either, and an absurd ``--workers`` starts no more
processes than there are cores and units of work.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from concurrent.futures import Executor

__all__ = ["available_cores", "worker_count", "using_workers", "requested_workers", "signals_held", "shut_down",
           "worker_signals", "process_running", "without_gc"]

_STOPPING = {signal.SIGINT, signal.SIGTERM}
# <linux/prctl.h>: the signal a process gets when its parent ends
_PR_SET_PDEATHSIG = 1
# How often a worker that the kernel cannot tie to its parent looks whether the parent is still there.
_WATCH_SECONDS = 0.5
# The workers a command asked for (its --workers), for the evaluations it starts without saying
_REQUESTED: ContextVar[int | None] = ContextVar("rpa_sim_workers", default=None)


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system tells it).

    >>> available_cores() >= 1
    True
    """
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def worker_count(requested: int, work: int) -> int:
    """The processes to start for ``work`` units of work (batches, blocks, shards): ``requested``, capped.

    No more than the units of work, since a process without any would only
    cost its start, nor than the available cores, since processes that
    share a core finish no sooner; at least one. What is computed does not
    depend on the count.

    >>> worker_count(1_000_000, 10) == min(10, available_cores())
    True
    >>> worker_count(4, 0), worker_count(1, 10)
    (1, 1)
    """
    return max(1, min(requested, work, available_cores()))


@contextlib.contextmanager
def using_workers(count: int | None) -> Iterator[None]:
    """Evaluate with ``count`` worker processes inside, where an evaluation is not given its own number (None:
    every available core): how ``rpa-sim run --workers N`` reaches the evaluation of a scenario's records.

    >>> with using_workers(3):
    ...     requested_workers()
    3
    >>> requested_workers() is None
    True
    """
    token = _REQUESTED.set(count)
    try:
        yield
    finally:
        _REQUESTED.reset(token)


def requested_workers() -> int | None:
    """The worker processes :func:`using_workers` asked for, if any."""
    return _REQUESTED.get()


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM while workers start; one that came meanwhile is raised on leaving.

    Raised while the pool forks, the command line's handler would be lost in
    Python's after-fork hooks; raised between starting the workers and their
    manager thread, it would leave a pool that cannot be shut down; raised
    while a Dask cluster starts, it would leave a cluster that nobody closes.

    Held twice over. Blocked in this thread, and so in the threads started
    meanwhile and in the processes they start, which keep them blocked (Dask's
    worker processes). And, in the main thread, their handlers are replaced
    by one that notes them: the system gives a signal to any thread that does
    not block it (a thread that a library started before, such as a BLAS
    pool's), and Python runs the handler in the main thread whichever got it.
    """
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    noted: list[int] = []
    previous_mask = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPPING)
    previous_handlers = {}
    try:
        # (a handler that C code installed cannot be put back: then only the blocking holds)
        if threading.current_thread() is threading.main_thread() and None not in map(signal.getsignal, _STOPPING):
            previous_handlers = {signum: signal.signal(signum, lambda signum, frame: noted.append(signum))
                                 for signum in _STOPPING}
        yield
    finally:
        for signum, handler in previous_handlers.items():
            signal.signal(signum, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, previous_mask)
        for number in dict.fromkeys(noted):
            signal.raise_signal(number)


def shut_down(pool: Executor) -> None:
    """Shut a pool down, the work not yet started cancelled, and wait for its workers to end, whatever comes.

    Ctrl-C and SIGTERM are held meanwhile (:func:`signals_held`) and raised
    once it is done. Raised inside the shutdown, a second signal (Ctrl-C
    twice, a group's SIGTERM after a parent's) would leave a pool whose work
    is neither cancelled nor done: its manager thread would wait for it, and
    the interpreter, which joins that thread on its way out, would never exit
    (issue 30). The wait is short: a worker ends with the batch it runs.
    """
    with signals_held():
        pool.shutdown(wait=True, cancel_futures=True)


def worker_signals(parent: int) -> None:
    """A worker leaves Ctrl-C and SIGTERM to its parent, the process ``parent``, which stops it; and ends with it.

    A worker that a signal to the whole process group ended could die while
    it sends a result: the pool's manager thread, which reads a result whole,
    would then wait forever for the rest of it, and the command would hang
    (one SIGTERM to the group in four did, while ``generate`` wrote). So the
    worker ignores both; the parent, which gets them too, cancels the work
    not started and shuts the pool down. The signals held while the pool
    started are let through here, and ignored.

    A parent that cannot stop its workers (SIGKILL, the OOM killer) must not
    leave them running: see :func:`_end_with`. Meant as a pool's
    ``initializer``, with ``initargs=(os.getpid(),)``.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPPING)
    _end_with(parent)


def _end_with(parent: int) -> None:
    """End this process when the process ``parent`` ends, however it ends.

    On Linux the kernel kills a process whose parent ends, once asked to
    (``PR_SET_PDEATHSIG``, with SIGKILL, which no worker ignores). A parent
    that ended before the asking has left this process to another parent: it
    ends at once. The kernel follows the direct parent, which is the fork
    server with the "forkserver" start method; that server ends with
    ``parent``, and its workers with it. Elsewhere a daemon thread looks
    every half second whether this process's parent changed (the parent
    ended) or ``parent`` is no longer running, and ends the process then.
    """
    if sys.platform == "linux" and _kill_with_parent():
        if os.getppid() != parent and not process_running(parent):
            os._exit(1)
        return
    watcher = threading.Thread(target=_watch, args=(parent, os.getppid()), name="rpa-sim parent watch", daemon=True)
    watcher.start()


def _kill_with_parent() -> bool:
    """Ask the Linux kernel to send this process SIGKILL when its parent ends; whether it agreed."""
    import ctypes  # noqa: PLC0415 (in workers only, and on Linux only)

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):  # no C library to ask, or one without prctl
        return False


def _watch(parent: int, started_under: int) -> None:
    import multiprocessing  # noqa: PLC0415

    # the sentinel that multiprocessing gives a child tells the parent's end where no other process holds it
    # (spawn; Windows, where a parent's end changes no process's parent id)
    sentinel = multiprocessing.parent_process()
    while os.getppid() == started_under and process_running(parent) and (sentinel is None or sentinel.is_alive()):
        time.sleep(_WATCH_SECONDS)
    os._exit(1)


def process_running(pid: int) -> bool:
    """Whether the process ``pid`` runs; one that ended but that its parent did not collect yet does not.

    Without Linux's ``/proc``, such a process still counts as running, and on
    Windows every process does (there is no harmless way to ask): a caller
    that acts on a process's end acts too late rather than too early.

    >>> process_running(os.getpid())
    True
    """
    if Path("/proc/self/stat").exists():
        try:
            return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
        except (OSError, IndexError):
            return False
    if os.name == "nt":  # os.kill would end the process there
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's
        return True
    return True


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
