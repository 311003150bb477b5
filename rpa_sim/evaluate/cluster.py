"""Evaluation on a Dask cluster: one pure task per shard, the tables merged in shard order on the driver.

``--scheduler ADDRESS`` (or a scenario's ``data: scheduler:``) sends each
shard of DATA (:mod:`rpa_sim.evaluate.sources`) to a worker of Dask's distributed
scheduler as one task, the shard's evaluation that the caller gives
(:func:`rpa_sim.evaluate.sources.load_shard`) with the shard's path: the
worker reads the file (so every worker must see it at the same path) and
sends back its outcome table. This module knows nothing of shards but their
paths, so that evaluation depends on it and never the other way round. Tasks are pure: the same file and
options give the same table on any worker, so a task that Dask runs again
after losing a worker gives the same answer. The driver merges the tables in
shard order (:func:`rpa_sim.evaluate.sources.merge_shards`), whatever order they came
back in: the result is byte for byte that of one process (``docs/scale.md``).

Dask is optional (``pip install "rpa-sim[dask]"``) and imported only here,
inside the functions that use it.

Examples
--------
>>> parse_scheduler("local:2"), parse_scheduler("tcp://10.0.0.5:8786")
('local:2', 'tcp://10.0.0.5:8786')
>>> parse_scheduler("10.0.0.5")
Traceback (most recent call last):
...
ValueError: a scheduler is tcp://HOST:PORT, local or local:N, got '10.0.0.5'
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from functools import partial
from pathlib import Path
from typing import Any

from rpa_sim.common.errors import InputError
from rpa_sim.common.progress import stage

__all__ = ["CONNECT_SECONDS", "MissingDask", "parse_scheduler", "using_scheduler", "current_scheduler", "connect",
           "evaluate_on_cluster", "evaluate_with_client", "run_shards", "shard_stamp"]

#: How long connecting to a scheduler may take before the command gives up.
CONNECT_SECONDS = 10.0
# How long closing a client, or a local cluster, may take.
_CLOSE_SECONDS = 10.0
# How long a local cluster's worker process has to stop once asked (80% of it, Dask's share), before it is killed.
_STOP_SECONDS = 1.0
_TCP = re.compile(r"tcp://(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(?P<port>[0-9]{1,5})")
_LOCAL = re.compile(r"local(?::(?P<workers>[0-9]+))?")
_INSTALL = 'pip install "rpa-sim[dask]"'
# The scheduler of the running command (``run --scheduler``, a scenario's ``data: scheduler:``), for the
# DATA it reads deep inside (:func:`rpa_sim.evaluate.load.load_data`).
_CURRENT: ContextVar[str | None] = ContextVar("rpa_sim_scheduler", default=None)


class MissingDask(InputError):
    """``--scheduler`` without Dask installed."""


def parse_scheduler(address: str) -> str:
    """``address`` checked: ``tcp://HOST:PORT`` of a running scheduler, ``local`` or ``local:N`` (N >= 1).

    ``local`` starts a cluster of one worker per available core on this machine.

    Raises
    ------
    ValueError
        Quoting ``address``, when it is none of these.
    """
    tcp, local = _TCP.fullmatch(address), _LOCAL.fullmatch(address)
    if tcp is not None and 1 <= int(tcp["port"]) <= 65535:
        return address
    if local is not None and (local["workers"] is None or int(local["workers"]) >= 1):
        return address
    raise ValueError(f"a scheduler is tcp://HOST:PORT, local or local:N, got {address!r}")


@contextlib.contextmanager
def using_scheduler(address: str | None) -> Iterator[None]:
    """Evaluate the DATA read inside on the Dask scheduler ``address`` (None: in this machine's processes).

    >>> with using_scheduler("local:2"):
    ...     current_scheduler()
    'local:2'
    >>> current_scheduler() is None
    True
    """
    token = _CURRENT.set(None if address is None else parse_scheduler(address))
    try:
        yield
    finally:
        _CURRENT.reset(token)


def current_scheduler() -> str | None:
    """The scheduler :func:`using_scheduler` set, if any."""
    return _CURRENT.get()


def _require_dask() -> None:
    if importlib.util.find_spec("distributed") is None:
        raise MissingDask(f"--scheduler needs Dask: {_INSTALL}")


@contextlib.contextmanager
def connect(address: str, *, timeout: float | None = None, work: int | None = None) -> Iterator[Any]:
    """A ``distributed.Client`` of the scheduler at ``address``, or of a local cluster started (and stopped) here.

    A local cluster has ``N`` worker processes of one thread each (one per
    available core for ``local``), never more than the available cores nor
    than ``work`` tasks (:func:`rpa_sim.common.workers.worker_count`). Its
    dashboard runs when Bokeh is installed. Its workers never see Ctrl-C or
    SIGTERM (:func:`_local_client`) and end with this process, however it
    ends (Dask's nanny ties each to it).

    Raises
    ------
    InputError
        When Dask is not installed (:class:`MissingDask`), or the scheduler
        cannot be reached within ``timeout`` seconds (:data:`CONNECT_SECONDS`
        by default), naming the address.
    """
    address = parse_scheduler(address)
    timeout = CONNECT_SECONDS if timeout is None else timeout
    _require_dask()
    from distributed import Client  # noqa: PLC0415

    local = _LOCAL.fullmatch(address)
    if local is not None:
        from rpa_sim.common.workers import available_cores, worker_count  # noqa: PLC0415

        requested = available_cores() if local["workers"] is None else int(local["workers"])
        with _local_client(worker_count(requested, requested if work is None else work), timeout) as client:
            yield client
        return
    try:
        client = Client(address, timeout=timeout)
    except (OSError, TimeoutError) as error:
        raise InputError(f"cannot connect to the Dask scheduler at {address} within {timeout:g} s "
                         f"({_first_line(error)}); is 'dask scheduler' running there?") from None
    with client:
        yield client


@contextlib.contextmanager
def _local_client(workers: int, timeout: float) -> Iterator[Any]:
    """A client of a ``LocalCluster`` of ``workers`` processes, quiet, whose workers leave Ctrl-C and SIGTERM to us.

    Ctrl-C reaches every process of the terminal's process group, the Dask
    workers too, which would die printing tracebacks (and SIGTERM to the
    group likewise). The cluster is started while this thread holds both
    signals (:func:`rpa_sim.common.workers.signals_held`): the threads that Dask
    starts meanwhile (its event loop, which starts the worker processes, now
    and when a worker is restarted) inherit the held signals, and so do the
    processes, for good. This process takes them once the cluster runs (a
    signal that came while it started is raised then), and stops the
    cluster (:func:`_close`). The cluster's and the workers' logs are
    silenced below critical.
    """
    from distributed import Client, LocalCluster  # noqa: PLC0415

    from rpa_sim.common.workers import signals_held  # noqa: PLC0415

    if os.name == "posix":
        from multiprocessing import resource_tracker  # noqa: PLC0415

        # launched by the first worker's start, in Dask's thread, it would let the held signals through there
        resource_tracker.ensure_running()
    cluster = client = None
    try:
        with signals_held():
            # any free port: the scheduler serves HTTP (the dashboard when Bokeh is installed) in any case, and
            # warned on stderr when its usual port was taken
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                                   silence_logs=logging.CRITICAL)
            client = Client(cluster, timeout=timeout)
        yield client
    finally:
        with signals_held():  # a second Ctrl-C must not leave the cluster half closed
            _close(client, cluster)


def _close(client: Any, cluster: Any) -> None:
    """Close a local cluster and its client, the worker processes stopped first (:func:`_stop_workers`).

    Closing that takes longer than :data:`_CLOSE_SECONDS` is given up: the
    error or the interrupt that is on its way out matters more, and the
    worker processes end with this one anyway.
    """
    import asyncio  # noqa: PLC0415

    given_up = (TimeoutError, asyncio.TimeoutError)  # the same class from Python 3.11 on
    try:
        if client is not None:
            with contextlib.suppress(*given_up):
                client.close(timeout=_CLOSE_SECONDS)
    finally:
        if cluster is not None:
            with contextlib.suppress(*given_up):
                try:
                    cluster.sync(_stop_workers, list(cluster.workers.values()))
                finally:
                    cluster.close(timeout=_CLOSE_SECONDS)


async def _stop_workers(nannies: list[Any]) -> None:
    """Stop the worker processes of a local cluster's nannies: asked to, and killed if still busy after a moment.

    Left to the cluster, a worker that runs a task (nothing stops a task that
    runs) would be killed after 4 s, and Ctrl-C would take as long.
    """
    import asyncio  # noqa: PLC0415

    await asyncio.gather(*(nanny.close(timeout=_STOP_SECONDS) for nanny in nannies))


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def shard_stamp(path: Path) -> tuple[str, int, int]:
    """What makes a shard's task differ when its file does: absolute path, size and modification time."""
    status = path.stat()
    return str(path.resolve()), status.st_size, status.st_mtime_ns


def _evaluate_shard(stamp: tuple[str, int, int], *, evaluate_shard: Callable[..., Any], **options: Any) -> Any:
    """A shard's task on a worker: ``evaluate_shard`` on the shard's path, on one process (a worker is one)."""
    return evaluate_shard(stamp[0], workers=1, **options)


def evaluate_on_cluster(shards: Sequence[Path], *, scheduler: str, evaluate_shard: Callable[..., Any],
                        **options: Any) -> list[Any]:
    """``evaluate_shard(path, workers=1, **options)`` for each shard, in shard order, on the Dask cluster ``scheduler``.

    ``evaluate_shard`` is importable by the workers and pure
    (:func:`rpa_sim.evaluate.sources.load_shard`). Paths are made absolute, so a
    worker started in another folder finds them.
    """
    for shard in shards:
        if not shard.is_file():
            # the worker would say so too, but after connecting; and a missing file has no stamp
            raise InputError("no such file" if not shard.exists() else "is not a regular file", path=str(shard))
    with connect(scheduler, work=len(shards)) as client:
        _announce_dashboard(client)
        return evaluate_with_client(client, shards, evaluate_shard=evaluate_shard, **options)


def evaluate_with_client(client: Any, shards: Sequence[Path], *, evaluate_shard: Callable[..., Any],
                         **options: Any) -> list[Any]:
    """As :func:`evaluate_on_cluster`, on the cluster of a ``distributed.Client`` already connected."""
    if options.get("predictions") is not None:
        options["predictions"] = str(Path(options["predictions"]).resolve())
    return run_shards(client, partial(_evaluate_shard, evaluate_shard=evaluate_shard, **options),
                      [shard_stamp(shard) for shard in shards])


def _announce_dashboard(client: Any) -> None:
    """Dask's dashboard link on standard error, when there is one and a person is watching."""
    if not sys.stderr.isatty():
        return
    services = client.scheduler_info().get("services", {})
    if "dashboard" in services:
        print(f"rpa-sim: Dask dashboard: {client.dashboard_link}", file=sys.stderr)


def run_shards(client: Any, task: Any, items: Sequence[Any]) -> list[Any]:
    """``task(item)`` for each item as pure Dask tasks on ``client``'s cluster, the results in the order of the items.

    Progress counts the tasks done. The first task (in the order of the
    items) that fails raises its error here once the tasks before it are
    done, and the others are cancelled: the error one process would meet
    first. A worker lost meanwhile is Dask's business: it runs the task
    again elsewhere (up to its ``allowed-failures``), and the result is the
    same, the task being pure.

    Raises
    ------
    InputError
        The task's own, or when Dask gave up on a task whose workers kept dying.
    """
    from distributed import KilledWorker, as_completed  # noqa: PLC0415

    futures = [client.submit(task, item, pure=True) for item in items]
    position = {future.key: index for index, future in enumerate(futures)}
    done = [False] * len(futures)
    settled = 0  # the futures before this one are done and fine
    try:
        with stage(f"evaluating {len(futures)} shards on Dask", total=len(futures)) as advance:
            for future in as_completed(futures):
                done[position[future.key]] = True
                advance(1)
                while settled < len(futures) and done[settled]:
                    if futures[settled].status == "error":
                        futures[settled].result()  # raises the task's error
                    settled += 1
        return [future.result() for future in futures]
    except BaseException as failure:
        client.cancel(futures)  # an error or an interrupt: the cluster stops working for nobody
        if isinstance(failure, KilledWorker):
            raise InputError(f"Dask gave up on a shard whose workers kept dying ({_first_line(failure)}); see the "
                             f"workers' logs (out of memory?)") from None
        raise
