"""Reading a records file's lines: each a JSON object with a string id, its values left unread, or a Problem.

A line is parsed here (:func:`parse_line`): UTF-8, then a quick look at the
top-level fields with msgspec, which also tells the task; validation happens
later (:mod:`rpa_sim.records.validation`). A line that is not a JSON object
with a non-empty string id becomes a :class:`Problem` with the message of
``docs/formats.md``. :func:`raw_records` parses a file's lines in the
process that reads them, with the duplicate ids (for iterating records and
for the join of two files); evaluation parses each line where it validates
it, once (``docs/reading.md``). :func:`infer_task` finds the task in the
first record that tells it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NamedTuple

import msgspec

from rpa_sim.common.errors import InputError, shown
from rpa_sim.common.inputs import input_lines
from rpa_sim.records.models import task_of

__all__ = ["Task", "Problem", "Line", "TaskNote", "bad", "duplicate", "require_records", "parse_line", "parse_text",
           "parse_slowly", "record_lines", "raw_records", "infer_task", "TOO_DEEP"]

Task = Literal["kie", "vqa"]

# The top-level fields of a line, their values left unread; and a string.
_FIELDS = msgspec.json.Decoder(dict[str, msgspec.Raw])
_STRING = msgspec.json.Decoder(str)
#: How a JSON text nested beyond what a parser takes is worded.
TOO_DEEP = "nested too deeply"


@dataclass(frozen=True)
class Problem:
    """A bad record on its way to being raised or skipped; ``kind`` groups the summary."""

    error: InputError
    kind: str


class Line(NamedTuple):
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


def bad(problem: str, kind: str, line: Line, field: str | None = None) -> Problem:
    return Problem(InputError(problem, path=line.path, line=line.number, record_id=line.id, field=field), kind)


def duplicate(path: str, number: int, record_id: str, first: int) -> Problem:
    """The problem of line ``number``, whose id line ``first`` has already."""
    error = InputError(f"duplicate id (first on line {first})", path=path, line=number, record_id=record_id)
    return Problem(error, "duplicate id")


def record_lines(path: Path) -> Generator[tuple[int, bytes], None, None]:
    """Number and bytes of each non-blank line (:func:`rpa_sim.common.inputs.input_lines`)."""
    yield from input_lines(path, advice="records are read more than once, so save them to a file first")


def require_records(path: Path) -> None:
    with contextlib.closing(raw_records(path, {})) as items:
        if next(items, None) is None:
            raise InputError("no records", path=str(path))


def parse_line(path: str, number: int, raw: bytes) -> Line | Problem:
    """One non-blank line as a :class:`Line` or a :class:`Problem`."""
    raw = raw.rstrip(b"\r\n")  # so that a line cut short is reported at its end
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        problem = f"not valid UTF-8: byte 0x{raw[exc.start]:02x} at byte {exc.start + 1} of the line"
        return Problem(InputError(problem, path=path, line=number), "not UTF-8")
    return parse_text(path, number, text)


def parse_text(path: str, number: int, text: str) -> Line | Problem:
    """A decoded line: its top-level fields read quickly when it is a JSON object with a string id.

    The values are only skipped over (msgspec checks their syntax); they are
    read when the record is validated. Anything else, and whatever msgspec
    refuses that Python's parser may accept (``NaN``, infinities, escaped lone
    surrogates, very deep nesting), takes :func:`parse_slowly`, which words
    every message.
    """
    try:
        fields = _FIELDS.decode(text)
        record_id = _STRING.decode(fields["id"])
    except (msgspec.MsgspecError, KeyError, RecursionError):
        return parse_slowly(path, number, text)
    if not record_id:
        return parse_slowly(path, number, text)
    shallow: dict[str, Any] = dict.fromkeys(fields)
    told = task_of(shallow)
    if told is None and "prediction" in fields:  # only then do the prediction's own fields tell the task
        with contextlib.suppress(msgspec.ValidationError):  # not an object: it tells no task
            shallow["prediction"] = dict.fromkeys(_FIELDS.decode(fields["prediction"]))
        told = task_of(shallow)
    return Line(path, number, record_id, frozenset(fields), told, text)


def parse_slowly(path: str, number: int, text: str) -> Line | Problem:
    """A decoded line through Python's JSON parser, with a message for each way it can be bad."""
    try:
        data = json.loads(text)  # accepts NaN and Infinity: validation rejects them by field
    except json.JSONDecodeError as exc:
        problem = f"invalid JSON: {exc.msg} at column {exc.pos + 1}"
        return Problem(InputError(problem, path=path, line=number), "invalid JSON")
    except RecursionError:
        return Problem(InputError(f"invalid JSON: {TOO_DEEP}", path=path, line=number), "invalid JSON")
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
    return Line(path, number, data["id"], frozenset(data), task_of(data), text)


def raw_records(path: Path, seen: dict[str, int]) -> Generator[Line | Problem, None, None]:
    """The non-blank lines of ``path``, parsed; ``seen`` maps ids to their first line."""
    for number, raw in record_lines(path):
        item = parse_line(str(path), number, raw)
        if isinstance(item, Line):
            first = seen.setdefault(item.id, number)
            if first != number:
                item = duplicate(item.path, number, item.id, first)
        yield item


@dataclass(frozen=True)
class TaskNote:
    """Where the task came from: the line it was inferred from, or neither when given."""

    path: str | None
    line: int | None

    def about(self, path: str) -> str:
        if self.line is None:
            return "(given explicitly)"
        where = f"line {self.line}" if self.path == path else f"{self.path} line {self.line}"
        return f"(inferred from {where})"


def infer_task(files: tuple[Path, ...], *, skip_invalid: bool) -> tuple[Task, TaskNote]:
    for path in files:
        with contextlib.closing(raw_records(path, {})) as items:
            for item in items:
                if isinstance(item, Problem):
                    if skip_invalid:
                        continue
                    raise item.error
                if item.told is not None:
                    return item.told, TaskNote(item.path, item.number)
    raise InputError("no record tells whether the task is kie or vqa; give the task explicitly",
                     path=str(files[0]))
