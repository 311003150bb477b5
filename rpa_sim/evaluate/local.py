"""Evaluation on every core: records in batches, evaluated in worker processes, tables joined in order.

The parent process reads the lines (and joins two files on their ids).
Worker processes parse, validate and evaluate each batch into a partial
outcome table, and send back its records' ids with it; the parent takes the
batches' outcomes in file order, checks the ids for duplicates (which needs
the whole file in order: a batch that repeats an id is evaluated again here
without those records, as a rare bad file needs), so bad records are met,
raised or skipped in the order one process meets them, and joins the tables
with :func:`rpa_sim.evaluate.outcomes.concat_tables`. Batches have a fixed size whatever the
number of workers, and one worker evaluates the very same batches in this
process: the table, the skipped records and the first error are the same for
any number of workers (``docs/reading.md``).

Workers are started only for data of more than one batch, never more than
the batches nor than the available cores, ignore Ctrl-C (the interrupt
reaches the parent, which stops them), are shut down, with the batches not
yet started cancelled, whenever evaluation stops early, and end with the
parent when it is killed.

Examples
--------
>>> from rpa_sim.evaluate.outcomes import evaluate_vqa
>>> from rpa_sim.records.models import VQAPrediction, VQARecord
>>> questions = [VQARecord(id=f"q{i}", answers=["12"], prediction=VQAPrediction(answer=str(10 + i), confidence=0.5))
...              for i in range(5)]
>>> table = evaluate_records(questions, evaluation("vqa"), workers=2, batch_size=2)
>>> table.anls.tolist() == evaluate_vqa(questions).anls.tolist()
True
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from functools import partial
from itertools import islice
from typing import Any, Literal, TypeVar, cast

from rpa_sim.common.progress import stage
from rpa_sim.common.workers import (
    available_cores,
    requested_workers,
    shut_down,
    signals_held,
    without_gc,
    worker_signals,
)
from rpa_sim.evaluate.metrics.kieval_counts import ValueMatch
from rpa_sim.evaluate.outcomes import GroundingMode, OutcomeTable, concat_tables, table_type
from rpa_sim.records.models import KIERecord, VQARecord, decode_fast
from rpa_sim.records.readers import Problem, RecordBatch, RecordStream

__all__ = ["BATCH_SIZE", "evaluation", "available_cores", "resolve_workers", "map_in_order", "evaluate_stream",
           "evaluate_streams", "evaluate_records"]

Item = TypeVar("Item")
Done = TypeVar("Done")
Result = TypeVar("Result")
Table = OutcomeTable
_Task = Literal["kie", "vqa"]
#: Evaluates records into an outcome table; picklable (a module-level function, or a partial of one).
Evaluation = Callable[[list[Any]], Table]

#: Records per batch: large enough that sending a batch costs little next to evaluating it, small
#: enough to keep every worker busy and the records in flight few (measured in ``docs/reading.md``).
BATCH_SIZE = 256
# Batches in flight per worker: one being evaluated, one waiting, so that no worker waits for the reader.
_AHEAD = 2
# The start method: None is the platform's default. Everything a worker runs is importable and every
# argument pickles, so "spawn" and "forkserver" work too (tests/test_parallel.py runs "spawn").
_CONTEXT: Any = None


def evaluation(task: str, *, value_match: ValueMatch = "exact", alpha: float = 0.25,
               grounding: GroundingMode = "auto") -> Evaluation:
    """The evaluation of ``task`` with its option (``value_match`` for KIE, ``alpha`` for VQA), picklable.

    ``grounding`` is the routing grounding's source (:func:`~rpa_sim.evaluate.outcomes.evaluate_kie`).

    >>> evaluation("vqa", alpha=0.5).keywords
    {'alpha': 0.5, 'grounding': 'auto'}
    """
    table = table_type(task)
    chosen: dict[str, Any] = {"value_match": value_match, "alpha": alpha}
    return partial(table.evaluate, **{option: chosen[option] for option in table.options}, grounding=grounding)


def resolve_workers(workers: int | None) -> int:
    """``workers`` checked; for ``None``, the workers the command asked for
    (:func:`rpa_sim.common.workers.using_workers`), else every available core.

    More than the cores is accepted: :func:`map_in_order` starts no more
    processes than the available cores and the items to compute.

    >>> resolve_workers(3)
    3
    >>> resolve_workers(0)
    Traceback (most recent call last):
    ...
    ValueError: workers must be a positive integer or None (every core), got 0
    """
    if workers is None:
        return requested_workers() or available_cores()
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise ValueError(f"workers must be a positive integer or None (every core), got {workers!r}")
    return workers


def map_in_order(function: Callable[[Item], Result], items: Iterable[Item], *, workers: int,
                 prepare: Callable[[], object] | None = None) -> Generator[Result, None, None]:
    """``function(item)`` for each item, in order, computed by up to ``workers`` processes.

    With one worker, or a single item, everything runs in this process and no
    process is started. Otherwise the processes are capped at the available
    cores (:func:`rpa_sim.common.workers.available_cores`) and at the items: as many
    items are read as there may be processes, and a pool starts with a
    process for each item read, so an absurd ``workers`` costs nothing.
    Items are read at most two per process ahead of the results taken. When
    reading the items raises, the results of the items read before come
    first, then the error, as with one worker. The pool is shut down (the
    items not yet started cancelled) when the results end, are abandoned, or
    an error or an interrupt stops them; its processes end with this one,
    however it ends (:func:`rpa_sim.common.workers.worker_signals`).

    Parameters
    ----------
    function : callable
        Importable by the workers (a module-level function or a partial of one).
    items : iterable
        Picklable items, read lazily.
    workers : int
        The most processes to use.
    prepare : callable, optional
        Called in this process just before the workers start, when they do:
        what it imports, the workers inherit instead of importing it each.

    Yields
    ------
    The results, in the order of the items.
    """
    iterator = iter(items)
    workers = min(workers, available_cores())
    if workers == 1:
        yield from map(function, iterator)
        return
    first, failure = _read(iterator, workers)
    if len(first) < 2:
        yield from map(function, first)
        if failure is not None:
            raise failure
        return
    processes = len(first)
    pool = None
    if prepare is not None:
        prepare()
    try:
        with signals_held(), _heap_frozen():
            pool = ProcessPoolExecutor(max_workers=processes, mp_context=_CONTEXT, initializer=worker_signals,
                                       initargs=(os.getpid(),))
            pending: deque[Future[Result]] = deque(pool.submit(function, item) for item in first)
        while failure is None:
            try:
                item = next(iterator, _END)
            except Exception as exc:  # a problem met while reading: what was read before comes first
                failure = exc
                break
            if item is _END:
                break
            pending.append(pool.submit(function, item))
            if len(pending) > _AHEAD * processes:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
        if failure is not None:
            raise failure
    finally:
        # on an error or an interrupt too: no worker outlives this call, nor runs a batch nobody will take
        if pool is not None:
            shut_down(pool)


def _read(iterator: Iterator[Item], count: int) -> tuple[list[Item], Exception | None]:
    """Up to ``count`` items, and the problem that stopped the reading early, if any."""
    items: list[Item] = []
    try:
        for item in islice(iterator, count):  # one by one: list() would lose the items read before a problem
            items.append(item)
    except Exception as exc:
        return items, exc
    return items, None


_END: Any = object()


@contextlib.contextmanager
def _heap_frozen() -> Iterator[None]:
    """Keep this process's objects out of the workers' garbage collections while they are forked.

    A forked worker inherits every object of this process (the records of a
    scenario, tables, ...); its collector would walk them all, and copy the
    pages it touches, at each full collection. Frozen at the fork, they stay
    out of the workers' collections; here they are collected as before.
    """
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@dataclass(frozen=True)
class _Part:
    """A batch's outcome: its valid records' table, its bad records, how many were valid, the ids of its lines."""

    table: Table
    problems: list[Problem]
    valid: int
    ids: list[tuple[int, str]]


def _evaluate_tagged(item: tuple[int, RecordBatch], *, evaluation: Evaluation) -> tuple[int, _Part]:
    index, batch = item
    with without_gc():
        records, problems, ids = batch.validate()
        part = _Part(evaluation(records), problems, len(records), ids)
        # freed before the collector resumes, which would otherwise walk the records' lists once more
        del records
    return index, part


class _Chunk:
    """Records given directly, sent to a worker as JSON text that the fast path reads back.

    Pickling a pydantic record with its OCR takes several times as long as
    evaluating it; its JSON (written by pydantic, read by
    :func:`~rpa_sim.records.models.decode_fast`) takes a fraction. Evaluated here,
    the records are used as they are. Either way they hold the same values, so
    the table is the same.
    """

    def __init__(self, records: list[Any] | None = None, *, sent: list[tuple[_Task | None, Any]] | None = None) -> None:
        self._records, self._sent = records, sent

    def __reduce__(self) -> tuple[Callable[..., _Chunk], tuple[Any, ...], dict[str, Any]]:
        sent = self._sent if self._records is None else [_sendable(record) for record in self._records]
        return _Chunk, (), {"_records": None, "_sent": sent}

    def records(self) -> list[Any]:
        """The records; read from their JSON where it was sent (in the worker, while collection is paused)."""
        if self._records is None:
            # the fast path reads the JSON of every valid record; the model reads anything else, as it wrote it
            self._records = [record if task is None
                             else decode_fast(task, record) or _MODELS[task].model_validate_json(record)
                             for task, record in self._sent or []]
        return self._records


_TASKS: dict[type[KIERecord | VQARecord], _Task] = {KIERecord: "kie", VQARecord: "vqa"}
_MODELS = {task: model for model, task in _TASKS.items()}


def _sendable(record: Any) -> tuple[_Task | None, Any]:
    """``(task, JSON text)`` for a pydantic record; ``(None, record)`` for another (a fast-path struct) as it is."""
    task = _TASKS.get(type(record))
    return (None, record) if task is None else (task, record.model_dump_json())


def _evaluate_chunk(chunk: _Chunk, *, evaluation: Evaluation) -> Table:
    with without_gc():
        return evaluation(chunk.records())


def evaluate_stream(stream: RecordStream, evaluation: Evaluation, *, workers: int | None = None,
                    batch_size: int = BATCH_SIZE) -> Table:
    """Validate and evaluate a record stream in batches, on up to ``workers`` processes.

    The stream's :attr:`~rpa_sim.records.readers.RecordStream.skipped` and
    :attr:`~rpa_sim.records.readers.RecordStream.count` are those of iterating it, and
    the table is that of evaluating its records in one pass. Progress: lines
    read and records evaluated, as counts.

    Parameters
    ----------
    stream : RecordStream
        What :func:`rpa_sim.records.readers.read_records` opened.
    evaluation : callable
        Records to an outcome table: :func:`evaluation`'s, or e.g.
        ``functools.partial(evaluate_kie, value_match="exact")``.
    workers : int, optional
        The most processes to use (:func:`resolve_workers`): every available
        core by default, 1 none but this one. The table, the skipped records
        and the first error are the same for any number.
    batch_size : int, default=BATCH_SIZE
        Records per batch. The table does not depend on it.

    Raises
    ------
    InputError
        The first bad record unless the stream skips them; a file-level
        problem; no valid record.
    """
    (table,) = evaluate_streams([stream], evaluation, workers=workers, batch_size=batch_size,
                                label=stream.path.name)
    stream.require_valid()
    return table


def evaluate_streams(sources: Iterable[RecordStream | Done], evaluation: Evaluation, *, label: str,
                     workers: int | None = None, batch_size: int = BATCH_SIZE) -> list[Table | Done]:
    """Each record stream's table, every stream's batches evaluated in turn on one pool of processes.

    ``sources`` are read lazily, in order: a stream is opened when its turn
    comes, and anything else (a shard already evaluated, such as an outcome
    table read back) is given back as it is, in its place. Each batch's
    outcome goes back to its own stream (:meth:`~rpa_sim.records.readers.RecordStream.tally`)
    in order, so that the first error is the one a single process meets
    first; a stream whose records were all skipped gives the table of none.
    One pool for all the streams: the workers start, and import what they
    evaluate with, once. ``label`` names what is read in the progress bar.
    """
    results: list[Any] = []
    streams: dict[int, RecordStream] = {}
    sent: deque[RecordBatch] = deque()  # the batches whose outcomes are still to come, in order

    def prepare() -> None:
        for module in table_type(next(iter(streams.values())).task).evaluation_modules:
            importlib.import_module(module)

    with stage(f"reading {label}") as read, stage("evaluating") as evaluated:
        def tagged() -> Iterator[tuple[int, RecordBatch]]:
            for source in sources:
                index = len(results)
                if not isinstance(source, RecordStream) and not hasattr(source, "batches"):
                    results.append(source)
                    continue
                results.append([])
                stream = streams[index] = cast(RecordStream, source)
                for batch in stream.batches(batch_size):
                    read(len(batch))
                    sent.append(batch)
                    yield index, batch

        outcomes = map_in_order(partial(_evaluate_tagged, evaluation=evaluation), tagged(),
                                workers=resolve_workers(workers), prepare=prepare)
        # closing: the first problem raised stops the workers at once
        with contextlib.closing(outcomes):
            for index, part in outcomes:
                batch, stream = sent.popleft(), streams[index]
                repeated = stream.repeated(part.ids)
                if repeated:  # a file that repeats ids: the batch again, here, with those records as problems
                    part = _evaluate_tagged((index, batch.repeating(repeated)), evaluation=evaluation)[1]
                stream.tally(part.problems, part.valid)
                evaluated(part.valid)
                results[index].append(part.table)
    return [(concat_tables(result) if result else evaluation([])) if index in streams else result
            for index, result in enumerate(results)]


def evaluate_records(records: Iterable[Any], evaluation: Evaluation, *, workers: int | None = None,
                     batch_size: int = BATCH_SIZE) -> Table:
    """Evaluate records in batches on up to ``workers`` processes: the table of ``evaluation(records)``.

    For records made in this process (a scenario's generated ones); DATA,
    records in files, is read by :func:`rpa_sim.evaluate.load.load_data`.

    Parameters
    ----------
    records : iterable of records
        Valid records, read lazily (each batch is sent to a worker).
    evaluation : callable
        As in :func:`evaluate_stream`.
    workers : int, optional
        As in :func:`evaluate_stream`.
    batch_size : int, default=BATCH_SIZE
        Records per batch. The table does not depend on it.
    """
    iterator = iter(records)
    chunks = (_Chunk(chunk) for chunk in iter(lambda: list(islice(iterator, batch_size)), []))
    parts = list(map_in_order(partial(_evaluate_chunk, evaluation=evaluation), chunks,
                              workers=resolve_workers(workers)))
    # no record at all: the table of none, as evaluation makes it
    return concat_tables(parts) if parts else evaluation([])
