"""DATA to outcome table: the one way in, from a user's DATA to stage 1's result.

Every command that takes DATA, every scenario with ``data: file:`` and the
dashboard read and evaluate it with :func:`load_data`, so that the same
options mean the same thing everywhere. The flow runs one way::

    load_data (this module): DATA's shards, what goes with records alone, the task
      one records file -> rpa_sim.records.readers -> rpa_sim.evaluate.local (this machine's processes)
      one table file   -> rpa_sim.evaluate.tablefile
      shards, Dask     -> rpa_sim.evaluate.sources -> local, or rpa_sim.evaluate.cluster (Dask workers)
                          each shard's table merged in shard order (rpa_sim.evaluate.outcomes)

Examples
--------
>>> import tempfile
>>> from rpa_sim.records.readers import write_records
>>> from rpa_sim.records.models import VQAPrediction, VQARecord
>>> folder = Path(tempfile.mkdtemp())
>>> _ = write_records([VQARecord(id="q0", answers=["12"], prediction=VQAPrediction(answer="12", confidence=0.5)),
...                    VQARecord(id="q1", answers=["7"], prediction=VQAPrediction(answer="1", confidence=0.9))],
...                   folder / "q.jsonl")
>>> loaded = load_data(folder / "q.jsonl", EvaluationSettings(), workers=1)
>>> loaded.table.task, loaded.table.anls.tolist(), loaded.skipped_summary
('vqa', [1.0, 0.0], 'skipped 0 records')
>>> import shutil; shutil.rmtree(folder)
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rpa_sim.common.errors import InputError
from rpa_sim.common.progress import stage
from rpa_sim.evaluate.cluster import current_scheduler
from rpa_sim.evaluate.outcomes import OutcomeTable
from rpa_sim.evaluate.settings import EvaluationSettings, Task
from rpa_sim.evaluate.sources import (
    ShardResult,
    data_task,
    evaluate_shards,
    is_one_file,
    merge_shards,
    refuse_records_options,
    resolve_shards,
    shard_kinds,
)
from rpa_sim.evaluate.tablefile import read_info, read_table

__all__ = ["Loaded", "TaskCheck", "load_data"]

#: A caller's check of its own options once DATA's task is known, before anything is evaluated: called with the
#: task and how it was learnt (``"inferred from PATH"``, ``"read from PATH"`` for a table file; None when the
#: caller's ``task`` gave it).
TaskCheck = Callable[[Task, str | None], None]


@dataclass(frozen=True)
class Loaded:
    """DATA evaluated: its outcome table, and the records skipped on the way (with ``skip_invalid``).

    Attributes
    ----------
    table : OutcomeTable
    skipped : list of InputError
        The records skipped, in the order read.
    skipped_summary : str
        ``"skipped N records: ..."`` by kind, as a command reports it.
    skipped_count : int
        The records skipped, with those skipped when DATA's outcome table files were made (their metadata).
    shards : tuple of Path
        DATA's files, in the order read (:func:`rpa_sim.evaluate.sources.resolve_shards`).
    parts : tuple of ShardResult
        Each shard's result when DATA was evaluated shard by shard (``by_shard``, a folder, a glob or a
        scheduler), else empty.
    """

    table: OutcomeTable
    skipped: list[InputError]
    skipped_summary: str
    skipped_count: int
    shards: tuple[Path, ...]
    parts: tuple[ShardResult, ...] = ()


def load_data(data: str | os.PathLike[str], settings: EvaluationSettings | None = None, *,
              predictions: str | os.PathLike[str] | None = None, skip_invalid: bool = False,
              workers: int | None = None, scheduler: str | None = None, by_shard: bool = False,
              check_task: TaskCheck | None = None) -> Loaded:
    """Read and evaluate DATA into its outcome table, here or on a Dask cluster, or read the outcome table DATA.

    Parameters
    ----------
    data : path-like
        A records file (``.jsonl``, ``.jsonl.gz``), or an outcome table
        written by :func:`rpa_sim.evaluate.tablefile.write_table` (recognised by
        :func:`~rpa_sim.evaluate.tablefile.is_table_file`); or a folder or a glob
        of such shards (:func:`~rpa_sim.evaluate.sources.resolve_shards`), which
        give what their records in one file give.
    settings : EvaluationSettings, optional
        The task (inferred from the records, or read from the table, when not
        set), how KIE values are compared, SMuDGE's alpha, the routing
        grounding's source and whether a null confidence is read
        (:class:`~rpa_sim.evaluate.settings.EvaluationSettings`; its defaults
        when omitted). A table evaluated with other settings (of its task) is
        refused, so that a table gives exactly what its records give.
    predictions : path-like, optional
        Predictions joined to ``data`` on ``id``: with one records file only.
    skip_invalid : bool, default=False
        Skip records that do not fit the format (reported in the result)
        instead of stopping; records only.
    workers : int, optional
        Processes that evaluate the records (:mod:`rpa_sim.evaluate.local`):
        every available core by default, 1 none but this one; the table is
        the same for any number. A table is read, never evaluated.
    scheduler : str, optional
        A Dask scheduler whose workers evaluate the shards, one task each
        (:mod:`rpa_sim.evaluate.cluster`); by default the one the running command
        set (:func:`~rpa_sim.evaluate.cluster.using_scheduler`), else none.
    by_shard : bool, default=False
        Evaluate DATA shard by shard even when it is one file, keeping each
        shard's result in :attr:`Loaded.parts` (a table per shard to write).
    check_task : callable, optional
        Called once the task is known, before anything is evaluated
        (:data:`TaskCheck`): the caller's own checks of its options.

    Raises
    ------
    RecordsOnlyOption
        For ``predictions`` with a folder, a glob or a table, and for
        ``skip_invalid`` with a table (:func:`~rpa_sim.evaluate.sources.refuse_records_options`).
    InputError
        For DATA that is not there; for bad records (unless skipped), naming
        the file, the line and the record; for a table of another task or
        other settings, or a file that is not a valid table of this rpa-sim
        version; for an id in two shards; for DATA without a valid record.
    """
    settings = EvaluationSettings() if settings is None else settings
    shards = shard_kinds(resolve_shards(data))
    refuse_records_options(shards, data=data, predictions=predictions, skip_invalid=skip_invalid)
    scheduler = current_scheduler() if scheduler is None else scheduler
    if by_shard or scheduler is not None or not is_one_file(data, shards):
        how = None if settings.task is not None else f"inferred from {shards[0].path}"
        settings = settings.of_task(data_task(shards, task=settings.task, skip_invalid=skip_invalid,
                                              predictions=predictions))
        if check_task is not None:
            check_task(settings.task, how)  # type: ignore[arg-type]
        results = evaluate_shards(shards, settings, skip_invalid=skip_invalid, workers=workers, scheduler=scheduler,
                                  predictions=predictions)
        merged = merge_shards(shards, results, data=data)
        return Loaded(merged.table, merged.skipped, merged.skipped_summary, merged.skipped_count,
                      tuple(shard.path for shard in shards), tuple(results))
    if shards[0].table:
        return _read_table_file(shards[0].path, settings, check_task=check_task)
    return _evaluate_records_file(shards[0].path, settings, predictions=predictions, skip_invalid=skip_invalid,
                                  workers=workers, check_task=check_task)


def _read_table_file(path: Path, settings: EvaluationSettings, *, check_task: TaskCheck | None) -> Loaded:
    """The outcome table file DATA, refused unless of the settings' task (when set) and evaluated with them."""
    info = read_info(path)
    info.check(path, task=settings.task)
    if check_task is not None:
        check_task(info.task, f"read from {path}")
    with stage(f"reading {path.name}"):
        table = read_table(path, expect=settings.of_task(info.task).table_settings())
    return Loaded(table, [], "skipped 0 records", info.skipped, (path,))


def _evaluate_records_file(path: Path, settings: EvaluationSettings, *, predictions: str | os.PathLike[str] | None,
                           skip_invalid: bool, workers: int | None, check_task: TaskCheck | None) -> Loaded:
    """The records file DATA (with its predictions file) evaluated in this machine's processes."""
    # reading and evaluating records (pydantic, worker pools) is imported only when records are read, not tables
    from rpa_sim.evaluate import local  # noqa: PLC0415
    from rpa_sim.records.readers import read_records  # noqa: PLC0415

    stream = read_records(path, predictions=predictions, task=settings.task, skip_invalid=skip_invalid,
                          missing_confidence=settings.missing_confidence)
    if check_task is not None:
        check_task(stream.task, None if settings.task is not None else f"inferred from {path}")
    evaluation = local.evaluation(stream.task, value_match=settings.value_match, alpha=settings.alpha,
                                  grounding=settings.grounding)
    table = local.evaluate_stream(stream, evaluation, workers=workers)
    return Loaded(table, list(stream.skipped), stream.skipped_summary(), len(stream.skipped), (path,))
