"""Read and write canonical JSONL records (``../shared/spec/FORMATS.md``), streaming.

:func:`read_records` turns a ``.jsonl`` or ``.jsonl.gz`` file, or a ground-truth
file and a predictions file joined on ``id``, into validated
:class:`~rpa_sim.records.models.KIERecord` or :class:`~rpa_sim.records.models.VQARecord`
objects, one at a time, so that a file of any size can be scored. Every bad
line becomes an :class:`~rpa_sim.common.errors.InputError` that says where it is
(``FILE: line N (id ID): FIELD: problem``); with ``skip_invalid=True`` bad
records are collected instead of raised. :func:`write_records` writes records
back canonically and atomically. ``docs/formats.md`` lists every message.

Evaluation reads through :meth:`RecordStream.batches` instead: batches of
records read and joined here, validated where they are evaluated (a worker
process, :mod:`rpa_sim.evaluate.local`) through the fast path of
:func:`rpa_sim.records.models.decode_fast`, with the same messages
(``docs/reading.md``).

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
import json
import os
import re
import sqlite3
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any, Literal, NamedTuple, cast

import msgspec
from pydantic import ValidationError

from rpa_sim.common.errors import InputError, shown
from rpa_sim.common.files import atomic_output, remove_abandoned
from rpa_sim.common.inputs import input_lines
from rpa_sim.records.models import KIERecord, Record, VQARecord, decode_fast, has_missing_confidence, task_of

__all__ = ["RecordStream", "RecordBatch", "Problem", "read_records", "write_records"]

Task = Literal["kie", "vqa"]

_MODELS: dict[str, type[KIERecord] | type[VQARecord]] = {"kie": KIERecord, "vqa": VQARecord}
# The field scoring needs from the ground-truth side; the other side is always "prediction".
_TRUTH_SIDE = {"kie": "ground_truth", "vqa": "answers"}
# Top-level fields that may come from only one of the two files.
_SIDE_FIELDS = (KIERecord.model_fields.keys() | VQARecord.model_fields.keys()) - {"id"}
# The top-level fields of a line, their values left unread; and a string.
_FIELDS = msgspec.json.Decoder(dict[str, msgspec.Raw])
_STRING = msgspec.json.Decoder(str)
_UNIT_FIELDS = frozenset({"confidence", "grounding"})
_TOO_DEEP = "nested too deeply"


# --------------------------------------------------------------------------- public API


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
        for file in self._files:
            _require_records(file)
        if task is None:
            self.task, self._task_note = _infer_task(self._files, skip_invalid=skip_invalid)
        else:
            self.task, self._task_note = task, _TaskNote(None, None)

    @property
    def _files(self) -> tuple[Path, ...]:
        return (self.path,) if self.predictions is None else (self.path, self.predictions)

    def __iter__(self) -> Iterator[Record]:
        self._restart()
        # closing: a raised error releases the files and the join index at once.
        with contextlib.closing(self._items()) as items:
            for item in items:
                checked = item if isinstance(item, Problem) else _validated(
                    item, self.task, self._task_note, fast=False, missing_confidence=self.missing_confidence)
                if isinstance(checked, Problem):
                    self.tally([checked], 0)
                else:
                    self.count += 1
                    yield checked
        self.require_valid()

    def batches(self, size: int) -> Iterator[RecordBatch]:
        """The records in batches of ``size`` (the last may be shorter), read and joined but not yet validated.

        For evaluation in worker processes (:mod:`rpa_sim.evaluate.local`): a batch
        is picklable, :meth:`RecordBatch.validate` validates it wherever it
        runs, and each batch's outcome goes back to :meth:`tally` in file order,
        then :meth:`require_valid` ends the pass. Like iterating, this reads the
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
        with contextlib.closing(self._items()) as items:
            while True:
                chunk: list[_Pair | Problem] = []
                failure = None
                try:
                    for item in items:
                        chunk.append(item)
                        if len(chunk) == size:
                            break
                except InputError as exc:
                    failure = exc
                if chunk:
                    yield RecordBatch(self.task, self._task_note, chunk, self.missing_confidence)
                if failure is not None:
                    raise failure
                if len(chunk) < size:
                    return

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
        self.skipped, self.count, self._kinds = [], 0, Counter()

    def _items(self) -> Iterator[_Pair | Problem]:
        if self.predictions is None:
            return (item if isinstance(item, Problem) else _Pair(item, None) for item in _raw_records(self.path, {}))
        return _join(self.path, self.predictions)

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


def write_records(records: Iterable[Record], path: str | os.PathLike[str]) -> int:
    """Write records as canonical JSONL, atomically; gzip-compressed when ``path`` ends in ``.gz``.

    Keys come in the models' field order, ``None`` fields are left out (but
    a null ``confidence``, which means unknown, is written),
    unnamed groups are written as bare lists, and a gzip header carries no
    file name and a zero time, so identical records give identical bytes.
    The records go to a temporary file beside ``path`` that is renamed over
    it at the end: an interrupted write leaves ``path`` as it was.

    Parameters
    ----------
    records : iterable of KIERecord or VQARecord
        Consumed once, lazily.
    path : path-like
        The output file.

    Returns
    -------
    int
        The number of records written.
    """
    count = 0
    with atomic_output(Path(path)) as out:
        for record in records:
            out.write(_canonical_line(record))
            count += 1
    return count


# --------------------------------------------------------------------------- writing


def _canonical_line(record: Record) -> bytes:
    data = _bare_groups(_null_confidences(record.model_dump(mode="json", exclude_none=True)))
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode() + b"\n"


def _null_confidences(data: dict[str, Any]) -> dict[str, Any]:
    """Put back the null confidences that leaving out ``None`` dropped: a confidence is required, null included.

    >>> _null_confidences({"prediction": {"entities": [{"key": "k", "value": "v"}], "groups": []}})
    {'prediction': {'entities': [{'key': 'k', 'value': 'v', 'confidence': None}], 'groups': []}}
    >>> _null_confidences({"prediction": {"answer": "12"}})
    {'prediction': {'answer': '12', 'confidence': None}}
    """
    prediction = data.get("prediction")
    if not isinstance(prediction, dict):
        return data
    if "answer" in prediction:
        data["prediction"] = _with_confidence(prediction, "answer")
        return data
    prediction["entities"] = [_with_confidence(entity, "value") for entity in prediction.get("entities", [])]
    for group in prediction.get("groups", []):
        group["entities"] = [_with_confidence(entity, "value") for entity in group["entities"]]
    return data


def _with_confidence(item: dict[str, Any], before: str) -> dict[str, Any]:
    """``item`` with a null ``confidence`` right after ``before`` when it has none, in the models' field order."""
    if "confidence" in item:
        return item
    keys = list(item)
    place = keys.index(before) + 1
    return {**{k: item[k] for k in keys[:place]}, "confidence": None, **{k: item[k] for k in keys[place:]}}


def _bare_groups(data: dict[str, Any]) -> dict[str, Any]:
    """Write unnamed groups as bare lists, the form FORMATS.md shows.

    >>> _bare_groups({"prediction": {"groups": [{"entities": []}, {"name": "menu", "entities": []}]}})
    {'prediction': {'groups': [[], {'name': 'menu', 'entities': []}]}}
    """
    for side in ("ground_truth", "prediction"):
        extraction = data.get(side)
        if isinstance(extraction, dict) and "groups" in extraction:
            extraction["groups"] = [group["entities"] if group.keys() == {"entities"} else group
                                    for group in extraction["groups"]]
    return data


# --------------------------------------------------------------------------- reading lines


@dataclass(frozen=True)
class Problem:
    """A bad record on its way to being raised or skipped; ``kind`` groups the summary."""

    error: InputError
    kind: str


class _Line(NamedTuple):
    """One parsed line: a JSON object with a string id (a named tuple: cheap to make and to send to a worker).

    ``keys`` are its top-level fields and ``told`` the task they tell
    (:func:`~rpa_sim.records.models.task_of`); the values stay in ``text`` until the
    record is validated.
    """

    path: str
    number: int
    id: str
    keys: frozenset[str]
    told: Task | None
    text: str

    @property
    def data(self) -> Any:
        """The JSON value, for locating a problem in it; integers are read as floats.

        Only the structure matters there, and a float never exceeds Python's
        limit on the digits of an integer, which a fast-read line may not have
        been checked against.
        """
        return json.loads(self.text, parse_int=float)


def _bad(problem: str, kind: str, line: _Line, field: str | None = None) -> Problem:
    return Problem(InputError(problem, path=line.path, line=line.number, record_id=line.id, field=field), kind)


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """Number and bytes of each non-blank line (:func:`rpa_sim.common.inputs.input_lines`)."""
    return input_lines(path, advice="records are read more than once, so save them to a file first")


def _require_records(path: Path) -> None:
    with contextlib.closing(_raw_records(path, {})) as items:
        if next(items, None) is None:
            raise InputError("no records", path=str(path))


def _parse(path: str, number: int, raw: bytes) -> _Line | Problem:
    """One non-blank line as a :class:`_Line` or a :class:`Problem`."""
    raw = raw.rstrip(b"\r\n")  # so that a line cut short is reported at its end
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        problem = f"not valid UTF-8: byte 0x{raw[exc.start]:02x} at byte {exc.start + 1} of the line"
        return Problem(InputError(problem, path=path, line=number), "not UTF-8")
    return _parse_text(path, number, text)


def _parse_text(path: str, number: int, text: str) -> _Line | Problem:
    """A decoded line: its top-level fields read quickly when it is a JSON object with a string id.

    The values are only skipped over (msgspec checks their syntax); they are
    read when the record is validated. Anything else, and whatever msgspec
    refuses that Python's parser may accept (``NaN``, infinities, escaped lone
    surrogates, very deep nesting), takes :func:`_parse_slowly`, which words
    every message.
    """
    try:
        fields = _FIELDS.decode(text)
        record_id = _STRING.decode(fields["id"])
    except (msgspec.MsgspecError, KeyError, RecursionError):
        return _parse_slowly(path, number, text)
    if not record_id:
        return _parse_slowly(path, number, text)
    shallow: dict[str, Any] = dict.fromkeys(fields)
    told = task_of(shallow)
    if told is None and "prediction" in fields:  # only then do the prediction's own fields tell the task
        try:
            shallow["prediction"] = dict.fromkeys(_FIELDS.decode(fields["prediction"]))
        except msgspec.ValidationError:
            pass  # not an object: it tells no task
        told = task_of(shallow)
    return _Line(path, number, record_id, frozenset(fields), told, text)


def _parse_slowly(path: str, number: int, text: str) -> _Line | Problem:
    """A decoded line through Python's JSON parser, with a message for each way it can be bad."""
    try:
        data = json.loads(text)  # accepts NaN and Infinity: validation rejects them by field
    except json.JSONDecodeError as exc:
        problem = f"invalid JSON: {exc.msg} at column {exc.pos + 1}"
        return Problem(InputError(problem, path=path, line=number), "invalid JSON")
    except RecursionError:
        return Problem(InputError(f"invalid JSON: {_TOO_DEEP}", path=path, line=number), "invalid JSON")
    except ValueError as exc:  # an integer beyond Python's limit on digits
        return Problem(InputError(f"invalid JSON: {exc}", path=path, line=number), "invalid JSON")
    if not isinstance(data, dict):
        return Problem(InputError(f"expected a JSON object, got {shown(data)}", path=path, line=number),
                       "not a JSON object")
    if "id" not in data:
        return Problem(InputError("missing", path=path, line=number, field="id"), "missing id")
    if not isinstance(data["id"], str) or not data["id"]:
        problem = f"expected a non-empty string, got {shown(data['id'])}"
        return Problem(InputError(problem, path=path, line=number, field="id"), "invalid id")
    return _Line(path, number, data["id"], frozenset(data), task_of(data), text)


def _raw_records(path: Path, seen: dict[str, int]) -> Iterator[_Line | Problem]:
    """The non-blank lines of ``path``, parsed; ``seen`` maps ids to their first line."""
    for number, raw in _lines(path):
        item = _parse(str(path), number, raw)
        if isinstance(item, _Line):
            first = seen.setdefault(item.id, number)
            if first != number:
                item = _bad(f"duplicate id (first on line {first})", "duplicate id", item)
        yield item


# --------------------------------------------------------------------------- task


@dataclass(frozen=True)
class _TaskNote:
    """Where the task came from: the line it was inferred from, or neither when given."""

    path: str | None
    line: int | None

    def about(self, path: str) -> str:
        if self.line is None:
            return "(given explicitly)"
        where = f"line {self.line}" if self.path == path else f"{self.path} line {self.line}"
        return f"(inferred from {where})"


def _infer_task(files: tuple[Path, ...], *, skip_invalid: bool) -> tuple[Task, _TaskNote]:
    for path in files:
        with contextlib.closing(_raw_records(path, {})) as items:
            for item in items:
                if isinstance(item, Problem):
                    if skip_invalid:
                        continue
                    raise item.error
                if item.told is not None:
                    return item.told, _TaskNote(item.path, item.number)
    raise InputError("no record tells whether the task is kie or vqa; give the task explicitly",
                     path=str(files[0]))


# --------------------------------------------------------------------------- two files


class _Pair(NamedTuple):
    """A record to validate: one line, or a ground-truth line and its prediction line."""

    truth: _Line
    pred: _Line | None

    @property
    def lines(self) -> tuple[_Line, ...]:
        return (self.truth,) if self.pred is None else (self.truth, self.pred)

    @property
    def data(self) -> dict[str, Any]:
        return self.truth.data if self.pred is None else {**self.truth.data, **self.pred.data}

    @property
    def text(self) -> str:
        if self.pred is None:
            return self.truth.text
        # The members of both objects side by side: cheaper than encoding the merged dict again.
        # Only "id" (the same on both sides) and unknown, ignored fields can appear twice.
        return f"{self.truth.text.rstrip()[:-1]},{self.pred.text.lstrip()[1:]}"

    def line_of(self, key: str) -> _Line:
        """The line a top-level field comes from, or where it was expected when absent."""
        if self.pred is None:
            return self.truth
        if key in self.pred.keys:
            return self.pred
        if key in self.truth.keys:
            return self.truth
        return self.pred if key == "prediction" else self.truth


def _pair(truth: _Line, pred: _Line) -> _Pair | Problem:
    clash = next((key for key in pred.keys if key in _SIDE_FIELDS and key in truth.keys), None)
    if clash is None:
        return _Pair(truth, pred)
    problem = f"also in {truth.path} line {truth.number}; each file holds only its side"
    return _bad(problem, "field in both files", pred, field=clash)


def _join(truth_path: Path, pred_path: Path) -> Iterator[_Pair | Problem]:
    """Join on id: in lockstep while the ids agree, then through an on-disk index."""
    truth_seen: dict[str, int] = {}
    truths, preds = _raw_records(truth_path, truth_seen), _raw_records(pred_path, {})
    truth, pred = next(truths, None), next(preds, None)
    while truth is not None or pred is not None:
        if isinstance(truth, Problem):
            yield truth
            truth = next(truths, None)
        elif isinstance(pred, Problem):
            yield pred
            pred = next(preds, None)
        elif truth is not None and pred is not None and truth.id == pred.id:
            yield _pair(truth, pred)
            truth, pred = next(truths, None), next(preds, None)
        else:
            yield from _join_indexed(_prepend(truth, truths), _prepend(pred, preds),
                                     truth_seen=truth_seen, truth_path=truth_path, pred_path=pred_path)
            return


def _prepend(item: _Line | None, rest: Iterator[_Line | Problem]) -> Iterator[_Line | Problem]:
    return rest if item is None else chain([item], rest)


def _join_indexed(truths: Iterator[_Line | Problem], preds: Iterator[_Line | Problem], *,
                  truth_seen: dict[str, int], truth_path: Path, pred_path: Path) -> Iterator[_Pair | Problem]:
    """Index the remaining predictions on disk, then look each remaining ground truth up.

    Predictions joined in lockstep before are not in the index; their ids are
    in ``truth_seen`` like every ground-truth id, which finds the orphans.
    """
    with _index_folder() as directory, contextlib.closing(sqlite3.connect(Path(directory) / "predictions.db")) as db:
        db.execute("PRAGMA journal_mode = OFF")
        db.execute("CREATE TABLE pred (id TEXT PRIMARY KEY, line INTEGER, text TEXT)")
        for item in preds:
            if isinstance(item, Problem):
                yield item
            else:
                db.execute("INSERT INTO pred VALUES (?, ?, ?)", (item.id, item.number, item.text))
        for item in truths:
            if isinstance(item, Problem):
                yield item
                continue
            row = db.execute("SELECT line, text FROM pred WHERE id = ?", (item.id,)).fetchone()
            if row is None:
                yield _bad(f"no prediction with this id in {pred_path}", "ground truth without prediction", item)
            else:
                # read again as when indexed: a line with a string id
                line = cast(_Line, _parse_text(str(pred_path), row[0], row[1]))
                yield _pair(item, line)
        for record_id, number in db.execute("SELECT id, line FROM pred ORDER BY rowid"):
            if record_id not in truth_seen:
                error = InputError(f"no ground truth with this id in {truth_path}", path=str(pred_path),
                                   line=number, record_id=record_id)
                yield Problem(error, "prediction without ground truth")


# The folder of a join index: "rpa-sim-<pid>-" and tempfile's eight random letters, digits or underscores.
_INDEX_FOLDER = re.compile(r"rpa-sim-(?P<owner>[1-9][0-9]*)-[a-z0-9_]{8}")


def _index_folder() -> tempfile.TemporaryDirectory[str]:
    """A temporary folder for a join index, named after this process; those of killed processes are removed first.

    The folder goes when the index is done with, on an error or an interrupt
    too; a process killed meanwhile (SIGKILL, the OOM killer) leaves it, and
    the next process that makes an index removes it
    (:func:`rpa_sim.common.files.remove_abandoned`).
    """
    remove_abandoned(Path(tempfile.gettempdir()), _INDEX_FOLDER)
    return tempfile.TemporaryDirectory(prefix=f"rpa-sim-{os.getpid()}-")


# --------------------------------------------------------------------------- validation


@dataclass(frozen=True)
class RecordBatch:
    """Consecutive records of a stream, read and joined, to be validated (made by :meth:`RecordStream.batches`).

    Picklable, so that a worker process can validate and evaluate it.

    Attributes
    ----------
    task : {"kie", "vqa"}
        The stream's task.
    items : list
        The records to validate, and the problems met while reading (bad
        lines, duplicate ids, join failures), in file order.
    """

    task: Task
    task_note: _TaskNote
    items: list[_Pair | Problem]
    #: whether a null confidence is allowed (a policy of the command maps it)
    missing_confidence: bool = False

    def validate(self) -> tuple[list[Any], list[Problem]]:
        """The valid records, read through the fast path (:func:`rpa_sim.records.models.decode_fast`), and the problems.

        A record the fast path declines is validated by its pydantic model,
        which words the problem exactly as iterating the stream would.

        Returns
        -------
        records : list
            The valid records in file order, with the attributes of
            :class:`~rpa_sim.records.models.KIERecord` or :class:`~rpa_sim.records.models.VQARecord`.
        problems : list of Problem
            The bad records in file order, for :meth:`RecordStream.tally`.
        """
        records, problems = [], []
        for item in self.items:
            checked = item if isinstance(item, Problem) else _validated(
                item, self.task, self.task_note, fast=True, missing_confidence=self.missing_confidence)
            if isinstance(checked, Problem):
                problems.append(checked)
            else:
                records.append(checked)
        return records, problems


def _validated(pair: _Pair, task: Task, note: _TaskNote, *, fast: bool, missing_confidence: bool = False) -> Any:
    """The record of ``pair``, a light one when ``fast`` and the fast path reads it, or its :class:`Problem`.

    A null confidence is the record's problem unless ``missing_confidence`` (a policy maps it).
    """
    for line in pair.lines:
        if line.told is not None and line.told != task:
            problem = f"a {line.told} record, but the task is {task} {note.about(line.path)}"
            return _bad(problem, f"{line.told} record in {task} data", line)
    text = pair.text
    record = decode_fast(task, text) if fast else None
    # the substring test first: a C-speed scan that spares the walk over entities for almost every record
    if record is not None and not missing_confidence and "null" in text and has_missing_confidence(record):
        record = None  # the model words the problem, with its place in the record
    if record is None:
        try:
            record = _MODELS[task].model_validate_json(text, strict=True,
                                                       context={"missing_confidence": missing_confidence})
        except ValidationError as exc:
            return _invalid(exc, pair)
    return _missing_side(record, pair, task) or record


def _missing_side(record: Record, pair: _Pair, task: str) -> Problem | None:
    for key in (_TRUTH_SIDE[task], "prediction"):
        if getattr(record, key) is None:
            line = pair.line_of(key)
            return _bad("null" if key in line.keys else "missing", f"missing {key}", line, field=key)
    return None


def _invalid(exc: ValidationError, pair: _Pair) -> Problem:
    """The first validation error of a record, located and worded as the raw JSON has it."""
    errors = exc.errors(include_url=False)
    first = _bare_error(errors[0])
    # JSON the validator cannot parse has no location (nor, when nested too deeply, one Python can parse)
    data = pair.data if first["loc"] else None
    steps = _raw_steps(first["loc"], data)
    # A union reports one error per alternative at the same place: word them together.
    alternatives = [error["type"] for error in errors if _raw_steps(error["loc"], data) == steps]
    names = [step for step in steps if isinstance(step, str)]
    leaf = names[-1] if names else "record"
    problem, kind = _describe(first, leaf, alternatives)
    line = pair.line_of(names[0]) if names else pair.truth
    return _bad(problem, kind, line, field=_format_steps(steps) or None)


def _bare_error(error: dict[str, Any]) -> dict[str, Any]:
    # A short tuple reports each missing position; say instead that the list is too short.
    loc = error["loc"]
    if error["type"] == "missing" and loc and isinstance(loc[-1], int):
        return {**error, "type": "too_short", "loc": loc[:-1], "ctx": {"min_length": loc[-1] + 1}}
    return error


def _raw_steps(loc: tuple[str | int, ...], data: Any) -> list[str | int]:
    """The steps of a pydantic location that exist in the raw JSON.

    Dropped: the ``entities`` step a bare-list group gains while validated,
    and the tags pydantic adds under a scalar for each alternative of a union.

    >>> raw = {"prediction": {"groups": [[{"key": "k"}]]}}
    >>> _raw_steps(("prediction", "groups", 0, "entities", 0, "confidence"), raw)
    ['prediction', 'groups', 0, 0, 'confidence']
    >>> _raw_steps(("segment", "int"), {"segment": 1.5})
    ['segment']
    """
    steps: list[str | int] = []
    node = data
    for step in loc:
        if isinstance(step, int):
            steps.append(step)
            node = node[step] if isinstance(node, list) and step < len(node) else None
        elif isinstance(node, dict):
            steps.append(step)
            node = node.get(step)
    return steps


def _format_steps(steps: list[str | int]) -> str:
    """
    >>> _format_steps(["prediction", "groups", 2, 0, "confidence"])
    'prediction.groups[2][0].confidence'
    """
    text = ""
    for step in steps:
        text += f"[{step}]" if isinstance(step, int) else f".{step}" if text else step
    return text


_EXPECTED = {
    "string_type": "a string",
    "float_type": "a number",
    "int_type": "an integer",
    "list_type": "a list",
    "model_type": "an object",
}
_GROUP_MODELS = frozenset({"Group", "PredictedGroup"})
_RANGES = {
    "greater_than": "{value} is not greater than {gt:g}",
    "greater_than_equal": "{value} is less than {ge:g}",
    "finite_number": "{value} is not a finite number",
}


def _describe(error: dict[str, Any], leaf: str, alternatives: list[str]) -> tuple[str, str]:
    """A short problem quoting the bad value, and the kind it is counted under."""
    kind, ctx = error["type"], error.get("ctx", {})
    if kind == "missing":
        return "missing", f"missing {leaf}"
    value = shown(error["input"])
    if leaf in _UNIT_FIELDS and kind in ("less_than_equal", "greater_than_equal", "finite_number"):
        return f"{value} is not in [0, 1]", f"{leaf} not in [0, 1]"
    if leaf == "bbox" and kind in ("tuple_type", "too_short", "too_long"):
        return f"expected [x0, y0, x1, y1], got {value}", "invalid bbox"
    if kind == "model_type" and ctx.get("class_name") in _GROUP_MODELS:
        return f"expected a list of entities or an object, got {value}", f"invalid {leaf}"
    if kind in _EXPECTED:
        expected = " or ".join(dict.fromkeys(_EXPECTED[a] for a in alternatives if a in _EXPECTED))
        return f"expected {expected}, got {value}", f"invalid {leaf}"
    if kind in _RANGES:
        return _RANGES[kind].format(value=value, **ctx), f"{leaf} out of range"
    if kind == "too_short":
        n = ctx["min_length"]
        return f"expected at least {n} item{'' if n == 1 else 's'}, got {value}", f"invalid {leaf}"
    if kind == "value_error":
        return _value_error(str(ctx["error"]), error["input"], leaf)
    if kind == "json_invalid":
        reason = ctx["error"].replace(" at line 1 column ", " at column ").replace("recursion limit exceeded", _TOO_DEEP)
        return f"invalid JSON: {reason}", "invalid JSON"
    return f"{error['msg']}, got {value}", f"invalid {leaf}"


def _value_error(text: str, raw: Any, leaf: str) -> tuple[str, str]:
    # records.py quotes a box after float coercion ([10.0, 0.0, ...]): quote it as the file has it.
    if isinstance(raw, list) and all(isinstance(v, (int, float)) for v in raw):
        coerced = str([float(v) for v in raw])
        if text.startswith(coerced):
            reason = text[len(coerced):].strip()
            return f"{shown(raw)} {reason}", f"{leaf} {reason}"
    return text, f"invalid {leaf}"
