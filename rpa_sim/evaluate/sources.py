"""DATA as shards: one file, a folder of shards or a glob, evaluated shard by shard and merged exactly.

:func:`resolve_shards` turns DATA into its files, in order: a file is
itself; a folder is every ``*.jsonl``, ``*.jsonl.gz`` and ``*.parquet`` file
directly inside it (not hidden, not in subfolders) in name order; a glob
(``"data/*.jsonl.gz"``, quoted so that the shell leaves it alone) is every
file it matches, in path order. Each shard is evaluated on its own into an
outcome table: here, every records shard's batches on one pool of processes
(:func:`rpa_sim.evaluate.local.evaluate_streams`) and each outcome table file
read back, or on Dask workers, a task per shard (:mod:`rpa_sim.evaluate.cluster`,
which is given :func:`load_shard` to run), and
:func:`merge_shards` joins the tables with
:func:`rpa_sim.evaluate.outcomes.concat_tables` in shard order: exactly the table of
the same records in one file, so every result is the same, byte for byte
(``docs/scale.md``).

Records shards and outcome table shards may be mixed: a table is refused
unless it was evaluated with the settings asked for, so both give the same
rows. Ids are unique across the shards, as within a file. What goes with
records alone (a predictions file, skipping invalid records) is refused
with tables and shards by :func:`refuse_records_options`. Whether a shard is
records or a table is told once, by its first bytes (:func:`shard_kinds`).

:func:`rpa_sim.evaluate.load.load_data` is the way in: it reads one file
itself and gives anything else to the functions here.

Examples
--------
>>> import tempfile
>>> from rpa_sim.records.readers import write_records
>>> from rpa_sim.records.models import VQAPrediction, VQARecord
>>> folder = Path(tempfile.mkdtemp())
>>> for shard, first in (("b.jsonl", 2), ("a.jsonl", 0)):
...     _ = write_records([VQARecord(id=f"q{i}", answers=["12"], prediction=VQAPrediction(answer="12",
...                        confidence=0.5)) for i in (first, first + 1)], folder / shard)
>>> [path.name for path in resolve_shards(folder)]
['a.jsonl', 'b.jsonl']
>>> shards = shard_kinds(resolve_shards(folder))
>>> settings = EvaluationSettings(task="vqa")
>>> merged = merge_shards(shards, evaluate_shards(shards, settings, workers=1), data=folder)
>>> merged.table.question_ids.tolist(), merged.skipped_summary
(['q0', 'q1', 'q2', 'q3'], 'skipped 0 records')
>>> import shutil; shutil.rmtree(folder)
"""

from __future__ import annotations

import gzip
import json
import os
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from rpa_sim.common.errors import InputError
from rpa_sim.common.inputs import named_files
from rpa_sim.evaluate.outcomes import OutcomeTable, concat_tables
from rpa_sim.evaluate.settings import EvaluationSettings, Task
from rpa_sim.evaluate.tablefile import is_table_file, read_info, read_table

if TYPE_CHECKING:
    from rpa_sim.records.readers import Problem, RecordBatch, RecordStream

__all__ = ["SHARD_SUFFIXES", "RecordsOnlyOption", "Shard", "ShardResult", "Merged", "names_data", "resolve_shards",
           "shard_kinds", "is_one_file", "refuse_records_options", "data_task", "load_shard", "merge_shards",
           "evaluate_shards", "check_partitions_folder", "write_partitions"]

#: The files of a folder that are shards; any other file in it is left alone.
SHARD_SUFFIXES = (".jsonl", ".jsonl.gz", ".parquet")
_GLOB_CHARACTERS = frozenset("*?[")
# The last suffix of a file that is data whatever its content (``.gz`` of ``.jsonl.gz``).
_DATA_SUFFIXES = (".jsonl", ".gz", ".json", ".parquet")
# The files rpa-sim evaluate writes into an --out folder (write_partitions).
_PARTITION = re.compile(r"part-[0-9]+\.parquet")

Table = OutcomeTable


def names_data(source: str) -> bool:
    """Whether a front end's SOURCE names data (a records or table file, a folder of shards, a glob) rather
    than a scenario (a bundled name or a YAML file).

    >>> names_data("receipts.jsonl.gz"), names_data("no/such/shard-*.parquet"), names_data("receipts-demo")
    (True, True, False)
    """
    path = Path(source)
    if path.is_dir() or (not path.exists() and _GLOB_CHARACTERS & set(source)):
        return True
    suffix = path.suffix.lower()
    return suffix in _DATA_SUFFIXES or (path.is_file() and suffix not in (".yaml", ".yml"))


def resolve_shards(data: str | os.PathLike[str]) -> tuple[Path, ...]:
    """The files of DATA in the order they are read: a file, a folder's shards by name, or a glob's matches.

    A path that exists is a file or a folder, never a glob, even with ``*`` in
    its name. A path that does not exist and has no glob character is
    returned as it is, so that reading it says "no such file".

    Raises
    ------
    InputError
        For a folder without a shard, or a glob that matches no file.
    """
    return named_files(data, suffixes=SHARD_SUFFIXES, what="shard")


@dataclass(frozen=True)
class Shard:
    """A file of DATA and its kind: an outcome table (``table``) or records."""

    path: Path
    table: bool


def shard_kinds(paths: Sequence[Path]) -> tuple[Shard, ...]:
    """Each of DATA's files with its kind, told once by its first bytes
    (:func:`rpa_sim.evaluate.tablefile.is_table_file`)."""
    return tuple(Shard(path, is_table_file(path)) for path in paths)


def is_one_file(data: str | os.PathLike[str], shards: Sequence[Shard]) -> bool:
    """Whether DATA is a plain file (or a missing one), rather than a folder or a glob of shards."""
    return len(shards) == 1 and shards[0].path == Path(data) and not Path(data).is_dir()


class RecordsOnlyOption(InputError):
    """A predictions file or skipping invalid records with DATA they do not go with (exit status 1).

    The message names the options as a scenario and the library do (``a
    predictions file``); :attr:`usage` is the same refusal in the command
    line's words (``--predictions``), for the usage error (exit status 2)
    that the command line makes of it.
    """

    def __init__(self, problem: str, *, path: str, usage: str) -> None:
        super().__init__(problem, path=path)
        self.usage = usage


def refuse_records_options(shards: Sequence[Shard], *, data: str | os.PathLike[str],
                           predictions: str | os.PathLike[str] | None, skip_invalid: bool) -> None:
    """Refuse what goes with records alone, before anything is read: a predictions file with DATA that is not one
    file (with shards, each holds both sides), and either option with an outcome table (which holds its
    predictions, and whose invalid records were skipped, or not, when it was made).

    Raises
    ------
    RecordsOnlyOption
        Naming DATA, or its first table.
    """
    if predictions is not None and not is_one_file(data, shards):
        raise RecordsOnlyOption(f"a predictions file goes with one records file, and DATA is {len(shards)} shards "
                                f"(got {str(predictions)!r})", path=str(data),
                                usage=f"--predictions goes with one records file, and {data} is {len(shards)} shards")
    table = next((shard.path for shard in shards if shard.table), None)
    if table is not None and predictions is not None:
        raise RecordsOnlyOption("is an outcome table, which holds its predictions; a predictions file goes with "
                                f"records only, got {str(predictions)!r}", path=str(table),
                                usage=f"--predictions applies to records, and {table} is an outcome table, which "
                                      f"holds its predictions already")
    if table is not None and skip_invalid:
        raise RecordsOnlyOption("is an outcome table: skipping invalid records applies to records, when they are "
                                "evaluated", path=str(table),
                                usage=f"--skip-invalid applies to records, and {table} is an outcome table (rpa-sim "
                                      f"evaluate --skip-invalid skips them when it makes the table)")


def data_task(shards: Sequence[Shard], *, task: Task | None, skip_invalid: bool = False,
              predictions: str | os.PathLike[str] | None = None) -> Task:
    """The task of the shards: ``task`` when given, else the first shard's (its table's, or its records')."""
    if task is not None:
        return task
    from rpa_sim.records.readers import read_records  # noqa: PLC0415 (records only: a table's command starts faster)

    first = shards[0]
    if first.table:
        return read_info(first.path).task
    return read_records(first.path, predictions=predictions, skip_invalid=skip_invalid).task


@dataclass(frozen=True)
class ShardResult:
    """A shard evaluated: its table, the records it skipped (and how many of each kind), its valid records.

    ``skipped_before`` counts the records skipped when an outcome table shard was
    evaluated (its metadata); they are not in ``skipped``, which a table no longer has.
    """

    table: Table
    skipped: tuple[InputError, ...] = ()
    kinds: Counter[str] = field(default_factory=Counter)
    valid: int = 0
    skipped_before: int = 0


class _ShardStream:
    """A shard's record stream as :func:`rpa_sim.evaluate.local.evaluate_stream` reads it, with the skipped records
    counted by kind; whether any record is valid is for the whole DATA to say, not for each shard."""

    def __init__(self, stream: RecordStream) -> None:
        self._stream = stream
        self.kinds: Counter[str] = Counter()
        self.path, self.task = stream.path, stream.task

    def batches(self, size: int) -> Iterator[RecordBatch]:
        self.kinds = Counter()
        return self._stream.batches(size)

    def repeated(self, ids: list[tuple[int, str]]) -> dict[int, Problem]:
        return self._stream.repeated(ids)

    def tally(self, problems: list[Problem], valid: int) -> None:
        self._stream.tally(problems, valid)
        self.kinds.update(problem.kind for problem in problems)

    def require_valid(self) -> None:
        """Nothing: a shard whose records were all skipped is fine when another has valid ones."""

    @property
    def skipped(self) -> list[InputError]:
        return self._stream.skipped

    @property
    def count(self) -> int:
        return self._stream.count


def load_shard(path: str | os.PathLike[str], settings: EvaluationSettings, *, skip_invalid: bool = False,
               workers: int = 1, predictions: str | os.PathLike[str] | None = None) -> ShardResult:
    """Evaluate one shard (records on up to ``workers`` processes), or read it when it is a table.

    Pure: the same file and settings give the same result wherever it runs,
    which is what lets a Dask worker run it again after a failure. The task
    of ``settings`` is known (:func:`data_task`). A table is read as it is:
    ``predictions`` and ``skip_invalid`` with it are refused before
    (:func:`refuse_records_options`).

    Raises
    ------
    InputError
        For bad records (unless skipped), naming the shard, its line and the
        record; for a table of another task or other settings.
    """
    (result,) = _evaluate_here(shard_kinds([Path(path)]), settings, skip_invalid=skip_invalid, workers=workers,
                               predictions=predictions)
    return result


def _evaluate_here(shards: Sequence[Shard], settings: EvaluationSettings, *, skip_invalid: bool, workers: int,
                   predictions: str | os.PathLike[str] | None) -> list[ShardResult]:
    """Each shard's result, in shard order: tables read here, and every records shard evaluated on one pool."""
    from rpa_sim.evaluate import local  # noqa: PLC0415 (records only: a table's command starts faster)
    from rpa_sim.records.readers import read_records  # noqa: PLC0415

    task = settings.task
    if task is None:
        raise ValueError("the task of the shards must be known (data_task)")

    def sources() -> Iterator[_ShardStream | ShardResult]:
        for shard in shards:
            if shard.table:
                table = read_table(shard.path, expect=settings.table_settings())
                yield ShardResult(table, valid=table.unit_count, skipped_before=read_info(shard.path).skipped)
            else:
                yield _ShardStream(read_records(shard.path, predictions=predictions, task=task,
                                                skip_invalid=skip_invalid,
                                                missing_confidence=settings.missing_confidence))

    streams: list[_ShardStream] = []

    def kept(found: Iterator[_ShardStream | ShardResult]) -> Iterator[_ShardStream | ShardResult]:
        for source in found:
            if isinstance(source, _ShardStream):
                streams.append(source)
            yield source

    evaluation = local.evaluation(task, value_match=settings.value_match, alpha=settings.alpha,
                                  grounding=settings.grounding)
    label = shards[0].path.name if len(shards) == 1 else f"{len(shards)} shards"
    results = local.evaluate_streams(kept(sources()), evaluation, label=label, workers=workers)
    stream_of = iter(streams)
    return [result if isinstance(result, ShardResult) else _shard_result(cast(Table, result), next(stream_of))
            for result in results]


def _shard_result(table: Table, stream: _ShardStream) -> ShardResult:
    return ShardResult(table, tuple(stream.skipped), stream.kinds, stream.count)


@dataclass(frozen=True)
class Merged:
    """The shards' tables joined: the table, the records skipped in shard order and their summary.

    ``skipped_count`` adds the records skipped when outcome table shards were evaluated.
    """

    table: Table
    skipped: list[InputError]
    skipped_summary: str
    skipped_count: int


def merge_shards(shards: Sequence[Shard], results: Sequence[ShardResult], *,
                 data: str | os.PathLike[str]) -> Merged:
    """The table of the shards' records in one file, from each shard's result (given in shard order).

    Raises
    ------
    InputError
        For an id in two shards (naming both, and the lines when the shards
        are records); for DATA without a valid record.
    """
    _require_unique_ids(shards, [result.table for result in results])
    skipped = [error for result in results for error in result.skipped]
    if sum(result.valid for result in results) == 0:
        raise InputError(f"no valid records: {len(skipped)} skipped", path=str(data))
    kinds: Counter[str] = Counter()
    for result in results:
        kinds.update(result.kinds)  # in the order first met, as one file counts them
    try:
        table = concat_tables([result.table for result in results])
    except ValueError as problem:
        raise InputError(f"its shards cannot be joined: {problem}", path=str(data)) from None
    return Merged(table, skipped, _summary(len(skipped), kinds),
                  len(skipped) + sum(result.skipped_before for result in results))


def evaluate_shards(shards: Sequence[Shard], settings: EvaluationSettings, *, skip_invalid: bool = False,
                    workers: int | None = None, scheduler: str | None = None,
                    predictions: str | os.PathLike[str] | None = None) -> list[ShardResult]:
    """Each shard's result, in shard order: evaluated in this machine's processes, or on a Dask cluster.

    Parameters
    ----------
    shards : sequence of Shard
        What :func:`shard_kinds` gave.
    settings : EvaluationSettings
        With the task of every shard (:func:`data_task`).
    skip_invalid, predictions
        As in :func:`load_shard`.
    workers : int, optional
        Processes of this machine that evaluate the shards' records, one pool for all (every core by default).
    scheduler : str, optional
        A Dask scheduler (:func:`rpa_sim.evaluate.cluster.parse_scheduler`) whose
        workers evaluate the shards, one task each; ``workers`` is then unused.
    """
    if scheduler is not None:
        from rpa_sim.evaluate.cluster import evaluate_on_cluster  # noqa: PLC0415 (Dask only when asked for)

        return evaluate_on_cluster([shard.path for shard in shards], scheduler=scheduler, evaluate_shard=load_shard,
                                   settings=settings, skip_invalid=skip_invalid, predictions=predictions)
    from rpa_sim.evaluate.local import resolve_workers  # noqa: PLC0415

    return _evaluate_here(shards, settings, skip_invalid=skip_invalid, workers=resolve_workers(workers),
                          predictions=predictions)


def check_partitions_folder(folder: str | os.PathLike[str]) -> Path:
    """Check, before any long work, that :func:`write_partitions` may write into ``folder``; ``folder`` as a Path.

    Raises
    ------
    InputError
        When ``folder`` is a file, cannot be written, or holds other files than partitions.
    """
    from rpa_sim.common.files import check_output_folder  # noqa: PLC0415

    folder = check_output_folder(folder)
    if Path.cwd().is_relative_to(folder.absolute()):  # replaced by a rename, it would leave the shell nowhere
        raise InputError("is the current folder or holds it; name a folder for the outcome tables", path=str(folder))
    if folder.is_dir():
        others = sorted(entry.name for entry in folder.iterdir() if _PARTITION.fullmatch(entry.name) is None)
        if others:
            raise InputError(f"holds other files than partitions ({others[0]!r}, ...); write the outcome tables "
                             f"into a new or empty folder", path=str(folder))
    return folder


def write_partitions(results: Sequence[ShardResult], shards: Sequence[Path], folder: str | os.PathLike[str], *,
                     predictions: str | os.PathLike[str] | None = None) -> list[Path]:
    """Write each shard's table as ``part-00000.parquet``, ... into ``folder``, all at once or none.

    The files are written into a hidden folder beside ``folder``, which is
    renamed into place at the end (:func:`rpa_sim.common.files.all_or_nothing`): an
    interrupted or failed write leaves ``folder`` as it was, and a system
    error names the file in ``folder``, never the hidden one. An existing
    ``folder`` is replaced when it holds partitions alone (an earlier run's),
    and refused when it holds anything else. Each file's metadata names its
    shard (and the predictions file).

    Returns
    -------
    list of Path
        The files written, in shard order (which their names keep).

    Raises
    ------
    InputError
        When ``folder`` is a file, or a folder with other files in it.
    """
    from rpa_sim.common.files import all_or_nothing  # noqa: PLC0415
    from rpa_sim.evaluate.tablefile import write_table  # noqa: PLC0415

    folder = check_partitions_folder(folder)
    width = max(5, len(str(len(results) - 1)))
    names = [f"part-{index:0{width}d}.parquet" for index in range(len(results))]
    with all_or_nothing([folder]) as (staged,):
        staged.mkdir()
        for name, result, shard in zip(names, results, shards):
            sources = [shard] if predictions is None else [shard, predictions]
            write_table(result.table, staged / name, source=sources,
                        skipped=len(result.skipped) + result.skipped_before)
    return [folder / name for name in names]


def _summary(total: int, kinds: Counter[str]) -> str:
    """As :meth:`rpa_sim.records.readers.RecordStream.skipped_summary` words it for one file."""
    if total == 0:
        return "skipped 0 records"
    return f"skipped {total} record{'' if total == 1 else 's'}: " + ", ".join(
        f"{n} {kind}" for kind, n in kinds.most_common())


def _ids(table: Table) -> Any:
    return table.unit_ids()


def _require_unique_ids(shards: Sequence[Shard], tables: Sequence[Table]) -> None:
    if len(tables) < 2:
        return  # within a file, the reader refuses a duplicate id
    first_shard: dict[str, int] = {}
    for index, table in enumerate(tables):
        for record_id in _ids(table).tolist():
            earlier = first_shard.setdefault(record_id, index)
            if earlier != index:
                where = _line_of(shards[earlier], record_id)
                first = str(shards[earlier].path) + ("" if where is None else f" line {where}")
                raise InputError(f"duplicate id (first in {first}); ids are unique across shards",
                                 path=str(shards[index].path), line=_line_of(shards[index], record_id),
                                 record_id=record_id)


def _line_of(shard: Shard, record_id: str) -> int | None:
    """The line of ``record_id`` in the records shard (None for a table), for a message."""
    if shard.table:
        return None
    path = shard.path
    with open(path, "rb") as raw:
        compressed = raw.read(2) == b"\x1f\x8b"
    with (gzip.open(path, "rb") if compressed else open(path, "rb")) as lines:
        for number, line in enumerate(lines, start=1):
            try:
                if json.loads(line).get("id") == record_id:
                    return number
            except (ValueError, AttributeError):
                continue
    return None
