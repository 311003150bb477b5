"""Validating records: a record's lines to a record through the fast path or its pydantic model, or a Problem.

:class:`RecordBatch` is what a worker process validates and evaluates
(:mod:`rpa_sim.evaluate.local`): records read in the parent, then
:func:`validated` here, with the fast path of
:func:`rpa_sim.records.models.decode_fast` first and the model's exact
message when the fast path declines. A validation error becomes one line,
located in the raw JSON and worded as ``docs/formats.md`` lists it.

The lines of one file are sent as they were read and decoded here, once:
the ids come back with the records (:attr:`Validated.ids`), so that the
reader checks them for duplicates after the batch is evaluated
(:meth:`rpa_sim.records.readers.RecordStream.repeated`), and the rare batch
that repeats an id is validated again with those lines as problems
(:meth:`RecordBatch.repeating`). Two joined files are parsed where they
are read, which joins them on their ids.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from pydantic import ValidationError

from rpa_sim.common.errors import shown
from rpa_sim.records.joining import Pair
from rpa_sim.records.lines import TOO_DEEP, Problem, Task, TaskNote, bad, parse_line
from rpa_sim.records.models import KIERecord, Record, VQARecord, decode_fast, has_missing_confidence

__all__ = ["RecordBatch", "Validated", "validated"]

_MODELS: dict[str, type[KIERecord] | type[VQARecord]] = {"kie": KIERecord, "vqa": VQARecord}
# The field scoring needs from the ground-truth side; the other side is always "prediction".
_TRUTH_SIDE = {"kie": "ground_truth", "vqa": "answers"}
_UNIT_FIELDS = frozenset({"confidence", "grounding", "signal"})


class Validated(NamedTuple):
    """A batch validated: its valid records and its problems, in file order, and the ids of its lines."""

    records: list[Any]
    problems: list[Problem]
    #: ``(line, id)`` of each line of :attr:`RecordBatch.lines` with a string id, in file order, for the
    #: duplicate check that follows (:meth:`rpa_sim.records.readers.RecordStream.repeated`)
    ids: list[tuple[int, str]]


@dataclass(frozen=True)
class RecordBatch:
    """Consecutive records of a stream, read but not yet validated (made by :meth:`RecordStream.batches`).

    Picklable, so that a worker process can validate and evaluate it.

    Attributes
    ----------
    task : {"kie", "vqa"}
        The stream's task.
    items : list
        Records joined from two files, and the problems met while reading
        them (bad lines, duplicate ids, join failures), in file order.
    lines : list of (int, bytes)
        Or the number and bytes of lines of the file :attr:`path`, as read.
    repeated : dict of int to Problem
        The lines among :attr:`lines` whose id an earlier line has, and their problem.
    """

    task: Task
    task_note: TaskNote
    items: list[Pair | Problem] = field(default_factory=list)
    #: whether a null confidence is allowed (a policy of the command maps it)
    missing_confidence: bool = False
    path: str = ""
    lines: list[tuple[int, bytes]] = field(default_factory=list)
    repeated: Mapping[int, Problem] = field(default_factory=dict)

    def __len__(self) -> int:
        """The records (and bad lines) of the batch."""
        return len(self.items) + len(self.lines)

    def repeating(self, repeated: Mapping[int, Problem]) -> RecordBatch:
        """The batch with the lines of ``repeated`` as those problems (their ids are duplicates)."""
        return dataclasses.replace(self, repeated={**self.repeated, **repeated})

    def validate(self) -> Validated:
        """The valid records, read through the fast path (:func:`rpa_sim.records.models.decode_fast`), and the problems.

        A record the fast path declines is validated by its pydantic model,
        which words the problem exactly as iterating the stream would.

        Returns
        -------
        Validated
            The valid records in file order, with the attributes of
            :class:`~rpa_sim.records.models.KIERecord` or :class:`~rpa_sim.records.models.VQARecord`;
            the bad records in file order, for :meth:`RecordStream.tally`; the ids of :attr:`lines`.
        """
        records, problems, ids = [], [], []
        for item in self.items:
            checked = item if isinstance(item, Problem) else validated(
                item, self.task, self.task_note, fast=True, missing_confidence=self.missing_confidence)
            if isinstance(checked, Problem):
                problems.append(checked)
            else:
                records.append(checked)
        truth_side = _TRUTH_SIDE[self.task]
        for number, raw in self.lines:
            if number in self.repeated:
                problems.append(self.repeated[number])
                continue
            record = decode_fast(self.task, raw)
            # the one parse of a valid record; anything else (an empty id, a null confidence that no policy
            # maps, a side missing) is read again below, as iterating reads it, for the same message
            if (record is not None and record.id and getattr(record, truth_side) is not None
                    and record.prediction is not None
                    and (self.missing_confidence or b"null" not in raw or not has_missing_confidence(record))):
                ids.append((number, record.id))
                records.append(record)
                continue
            line = parse_line(self.path, number, raw)
            if isinstance(line, Problem):
                problems.append(line)
                continue
            ids.append((number, line.id))
            checked = validated(Pair(line, None), self.task, self.task_note, fast=False,
                                missing_confidence=self.missing_confidence)
            (problems if isinstance(checked, Problem) else records).append(checked)
        return Validated(records, problems, ids)


def validated(pair: Pair, task: Task, note: TaskNote, *, fast: bool, missing_confidence: bool = False) -> Any:
    """The record of ``pair``, a light one when ``fast`` and the fast path reads it, or its :class:`Problem`.

    A null confidence is the record's problem unless ``missing_confidence`` (a policy maps it).
    """
    for line in pair.lines:
        if line.told is not None and line.told != task:
            problem = f"a {line.told} record, but the task is {task} {note.about(line.path)}"
            return bad(problem, f"{line.told} record in {task} data", line)
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


def _missing_side(record: Record, pair: Pair, task: str) -> Problem | None:
    for key in (_TRUTH_SIDE[task], "prediction"):
        if getattr(record, key) is None:
            line = pair.line_of(key)
            return bad("null" if key in line.keys else "missing", f"missing {key}", line, field=key)
    return None


def _invalid(exc: ValidationError, pair: Pair) -> Problem:
    """The first validation error of a record, located and worded as the raw JSON has it."""
    errors = exc.errors(include_url=False)
    first = _bare_error(errors[0])
    # JSON the validator cannot parse has no location (nor, when nested too deeply, one Python can parse)
    data = pair.data if first["loc"] else None
    steps = _raw_steps(first["loc"], data)
    # A union reports one error per alternative at the same place: word them together.
    alternatives = [error["type"] for error in errors if _raw_steps(error["loc"], data) == steps]
    names = [step for step in steps if isinstance(step, str)]
    # a value's named signal is counted as a signal, whatever its name
    leaf = "signal" if names[-2:-1] == ["signals"] else names[-1] if names else "record"
    problem, kind = _describe(first, leaf, alternatives)
    line = pair.line_of(names[0]) if names else pair.truth
    return bad(problem, kind, line, field=_format_steps(steps) or None)


def _bare_error(error: Mapping[str, Any]) -> dict[str, Any]:
    # A short tuple reports each missing position; say instead that the list is too short.
    loc = error["loc"]
    if error["type"] == "missing" and loc and isinstance(loc[-1], int):
        return {**error, "type": "too_short", "loc": loc[:-1], "ctx": {"min_length": loc[-1] + 1}}
    return dict(error)


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
        reason = ctx["error"].replace(" at line 1 column ", " at column ").replace("recursion limit exceeded",
                                                                                   TOO_DEEP)
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
