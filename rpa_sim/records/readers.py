"""Read and write canonical JSONL records (``docs/formats.md``), streaming.

:func:`read_records` turns a ``.jsonl`` or ``.jsonl.gz`` file, or a ground-truth
file and a predictions file joined on ``id``, into validated
:class:`~rpa_sim.records.models.KIERecord` or :class:`~rpa_sim.records.models.VQARecord`
objects, one at a time, so that a file of any size can be scored. Every bad
line becomes an :class:`~rpa_sim.common.errors.InputError` that says where it is
(``FILE: line N (id ID): FIELD: problem``); with ``skip_invalid=True`` bad
records are collected instead of raised. :func:`write_records` writes records
back canonically and atomically. ``docs/formats.md`` lists every message.

Evaluation reads through :meth:`RecordStream.batches` instead: batches of
lines read (or records joined) here, parsed and validated where they are
evaluated (a worker process, :mod:`rpa_sim.evaluate.local`) through the fast
path of :func:`rpa_sim.records.models.decode_fast`, their ids checked for
duplicates here afterwards (:meth:`RecordStream.repeated`), with the same
messages (``docs/reading.md``).

Examples
--------
>>> import tempfile
>>> from rpa_sim.records.models import VQAPrediction, VQARecord
>>> tmp = tempfile.TemporaryDirectory()
>>> path = Path(tmp.name) / "questions.jsonl"
>>> question = VQARecord(id="q-1", answers=["12"],
...                      prediction=VQAPrediction(answer="12", confidence=0.9))
>>> write_records([question], path)
1
>>> print(path.read_text(), end="")
{"id":"q-1","answers":["12"],"prediction":{"answer":"12","confidence":0.9}}
>>> stream = read_records(path)
>>> stream.task, [record.id for record in stream], stream.count
('vqa', ['q-1'], 1)
>>> tmp.cleanup()
"""

from __future__ import annotations

import contextlib
import os
from collections import Counter
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

from rpa_sim.common.errors import InputError
from rpa_sim.records.joining import Pair, join
from rpa_sim.records.lines import (
    Problem,
    Task,
    TaskNote,
    duplicate,
    infer_task,
    raw_records,
    record_lines,
    require_records,
)
from rpa_sim.records.models import Record
from rpa_sim.records.validation import RecordBatch, Validated, validated
from rpa_sim.records.writers import write_records

__all__ = ["RecordStream", "RecordBatch", "Validated", "Problem", "read_records", "write_records"]


class RecordStream:
    """The validated records of one data set, read lazily in file order.

    Made by :func:`read_records`. Iterating reads the file(s) again from the
    start each time and resets :attr:`skipped` and :attr:`count`.

    Attributes
    ----------
    path : pathlib.Path
        The records file (the ground-truth file in the two-file form).
    predictions : pathlib.Path or None
        The predictions file of the two-file form.
    task : {"kie", "vqa"}
        The task, as given or inferred from the first record that tells it.
    skip_invalid : bool
        Whether bad records are collected in :attr:`skipped` rather than raised.
    skipped : list of InputError
        The records skipped by the last iteration, in the order met.
    count : int
        The records yielded by the last iteration.
    """

    def __init__(self, path: Path, *, predictions: Path | None, task: Task | None,
                 skip_invalid: bool, missing_confidence: bool = False) -> None:
        self.path = path
        self.predictions = predictions
        self.skip_invalid = skip_invalid
        # whether a policy of the command maps a null confidence (else a null confidence is the record's error)
        self.missing_confidence = missing_confidence
        self.skipped: list[InputError] = []
        self.count = 0
        self._kinds: Counter[str] = Counter()
        self._seen: dict[str, int] = {}  # the ids of the lines of batches, and their first line
        for file in self._files:
            require_records(file)
        if task is None:
            self.task, self._task_note = infer_task(self._files, skip_invalid=skip_invalid)
        else:
            self.task, self._task_note = task, TaskNote(None, None)

    @property
    def _files(self) -> tuple[Path, ...]:
        return (self.path,) if self.predictions is None else (self.path, self.predictions)

    def __iter__(self) -> Iterator[Record]:
        self._restart()
        # closing: a raised error releases the files and the join index at once.
        with contextlib.closing(self._items()) as items:
            for item in items:
                checked = item if isinstance(item, Problem) else validated(
                    item, self.task, self._task_note, fast=False, missing_confidence=self.missing_confidence)
                if isinstance(checked, Problem):
                    self.tally([checked], 0)
                else:
                    self.count += 1
                    yield checked
        self.require_valid()

    def batches(self, size: int) -> Iterator[RecordBatch]:
        """The records in batches of ``size`` (the last may be shorter), read but not yet validated.

        For evaluation in worker processes (:mod:`rpa_sim.evaluate.local`): a batch
        is picklable and :meth:`RecordBatch.validate` parses and validates it
        wherever it runs. The ids it gives back go to :meth:`repeated`, in file
        order, and when some repeat an earlier one the batch is validated again
        with those lines as problems (:meth:`RecordBatch.repeating`); then each
        batch's outcome goes to :meth:`tally`, in file order, and
        :meth:`require_valid` ends the pass. One file's batches hold its lines
        as read, which are parsed once, where they are validated; two joined
        files are parsed here, to join them. Like iterating, this reads the
        file(s) from the start and resets :attr:`skipped` and :attr:`count`.
        A file-level problem met while reading (a truncated gzip file, say) is
        raised after the batch of the lines read before it, so that problems
        are met in file order whatever the batching.

        Parameters
        ----------
        size : int
            Records (and bad lines) per batch, at least 1.

        Yields
        ------
        RecordBatch
        """
        if size < 1:
            raise ValueError(f"size must be at least 1, got {size!r}")
        self._restart()
        one_file = self.predictions is None
        source = record_lines(self.path) if self.predictions is None else join(self.path, self.predictions)
        with contextlib.closing(source) as items:
            while True:
                chunk: list[Any] = []
                failure = None
                try:
                    for item in items:
                        chunk.append(item)
                        if len(chunk) == size:
                            break
                except InputError as exc:
                    failure = exc
                if chunk:
                    yield (RecordBatch(self.task, self._task_note, [], self.missing_confidence, str(self.path), chunk)
                           if one_file else RecordBatch(self.task, self._task_note, chunk, self.missing_confidence))
                if failure is not None:
                    raise failure
                if len(chunk) < size:
                    return

    def repeated(self, ids: list[tuple[int, str]]) -> dict[int, Problem]:
        """The lines whose id an earlier line of the pass has, each with its problem; the ids are remembered.

        Parameters
        ----------
        ids : list of (int, str)
            A batch's :attr:`Validated.ids`: the line and id of each of its
            lines with a string id, in file order (none for joined files, which
            the join checks).

        Returns
        -------
        dict of int to Problem
            ``duplicate id (first on line N)`` for each line that repeats an id.
        """
        seen, path = self._seen, str(self.path)
        found = {}
        for number, record_id in ids:
            first = seen.setdefault(record_id, number)
            if first != number:
                found[number] = duplicate(path, number, record_id, first)
        return found

    def tally(self, problems: list[Problem], valid: int) -> None:
        """Take a batch's outcome: raise its first problem unless skipping, else keep them; count its valid records.

        Parameters
        ----------
        problems : list of Problem
            The batch's bad records, in file order (from :meth:`RecordBatch.validate`).
        valid : int
            How many of its records were valid.
        """
        if problems and not self.skip_invalid:
            raise problems[0].error
        for problem in problems:
            self.skipped.append(problem.error)
            self._kinds[problem.kind] += 1
        self.count += valid

    def require_valid(self) -> None:
        """End a pass: refuse data in which no record was valid."""
        if self.count == 0:
            raise InputError(f"no valid records: {len(self.skipped)} skipped", path=str(self.path))

    def _restart(self) -> None:
        self.skipped, self.count, self._kinds, self._seen = [], 0, Counter(), {}

    def _items(self) -> Generator[Pair | Problem, None, None]:
        if self.predictions is None:
            return (item if isinstance(item, Problem) else Pair(item, None) for item in raw_records(self.path, {}))
        return join(self.path, self.predictions)

    def skipped_summary(self) -> str:
        """What the last iteration skipped, counted by kind of problem, for a one-line report.

        Returns
        -------
        str
            E.g. ``"skipped 3 records: 2 confidence not in [0, 1], 1 duplicate id"``,
            the most frequent kinds first.
        """
        total = len(self.skipped)
        if total == 0:
            return "skipped 0 records"
        kinds = ", ".join(f"{n} {kind}" for kind, n in self._kinds.most_common())
        return f"skipped {total} record{'' if total == 1 else 's'}: {kinds}"


def read_records(path: str | os.PathLike[str], *, predictions: str | os.PathLike[str] | None = None,
                 task: Task | None = None, skip_invalid: bool = False,
                 missing_confidence: bool = False) -> RecordStream:
    """Open a records file (or a ground-truth file and a predictions file) for streaming.

    Parameters
    ----------
    path : path-like
        A ``.jsonl`` file, gzip-compressed or not (told by its first bytes,
        not its name). In the two-file form, the ground-truth side.
    predictions : path-like, optional
        The prediction side, joined to ``path`` on ``id``. Files in the same
        id order are joined in lockstep; otherwise the predictions are indexed
        in a temporary on-disk database, so memory stays bounded.
    task : {"kie", "vqa"}, optional
        The task; by default inferred from the first record whose fields tell it.
    skip_invalid : bool, default=False
        Collect bad records in :attr:`RecordStream.skipped` instead of raising.
        File-level problems (a missing, empty, truncated or corrupt file, or a
        task that no record tells) raise all the same.
    missing_confidence : bool, default=False
        Read a null confidence as unknown (NaN in the outcome table): for a
        command given policies that all set ``missing_confidence``. Otherwise a
        null confidence is a bad record, whose error says which setting allows it.

    Returns
    -------
    RecordStream
        Iterable over the validated records, in file order.

    Raises
    ------
    InputError
        Here for file-level problems and for a bad line met while inferring
        the task; while iterating for every bad record unless ``skip_invalid``.
    """
    if task not in (None, "kie", "vqa"):
        raise ValueError(f"task must be 'kie' or 'vqa', got {task!r}")
    return RecordStream(Path(path), predictions=None if predictions is None else Path(predictions),
                        task=task, skip_invalid=skip_invalid, missing_confidence=missing_confidence)
