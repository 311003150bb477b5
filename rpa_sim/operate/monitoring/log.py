"""The production log: one row per prediction unit, with its route and what a person found (``docs/monitoring.md``).

A log is what a team has once a policy is live: every prediction's route
(``auto``: accepted and checked by nobody; ``review``: routed to a person;
``audit``: auto-accepted, then drawn for a check), the probability with which
it was checked, and, where somebody looked, whether it was correct. rpa-sim
writes logs (:mod:`rpa_sim.operate.monitoring.replay`) and reads them, its own and a
team's export alike: only ``route``, ``inclusion_probability`` (on
auto-accepted rows) and ``correct`` (on checked rows) are required. A log
kept over days carries each row's ``day`` (or ``received_at``, whose date as
written is the day) and its segment columns ``document_type`` and
``source``, which ``rpa-sim watch`` follows (``docs/live.md``).

Examples
--------
>>> import tempfile
>>> tmp = tempfile.TemporaryDirectory()
>>> path = Path(tmp.name) / "day.jsonl"
>>> _ = path.write_text('{"route": "review", "correct": false}\\n'
...                     '{"route": "audit", "inclusion_probability": 0.5, "correct": true}\\n'
...                     '{"route": "auto", "inclusion_probability": 0.5}\\n')
>>> log = read_log(path)
>>> len(log), log.counts()
(3, {'rows': 3, 'reviewed': 1, 'auto_accepted': 2, 'audited': 1})
>>> _ = path.write_text('{"route": "audit", "inclusion_probability": 0, "correct": true}\\n')
>>> read_log(path)
Traceback (most recent call last):
...
rpa_sim.common.errors.InputError: ...day.jsonl: line 1: inclusion_probability: an audited row was drawn, so its ...
>>> tmp.cleanup()
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rpa_sim.common.dates import day_of
from rpa_sim.common.errors import InputError, shown
from rpa_sim.common.files import atomic_output
from rpa_sim.common.inputs import input_lines

__all__ = ["ROUTES", "AUTO", "REVIEW", "AUDIT", "UNCHECKED", "SEGMENT_COLUMNS", "ProductionLog", "LogReader",
           "read_log", "write_log", "object_column", "log_lines"]

#: The routes, in the order of their codes in :attr:`ProductionLog.route`.
ROUTES = ("auto", "review", "audit")
AUTO, REVIEW, AUDIT = range(3)
#: :attr:`ProductionLog.correct` of a row nobody checked (``null`` in the file).
UNCHECKED = -1

#: The columns a log's rows may be grouped by into segments (``rpa-sim watch --segments``).
SEGMENT_COLUMNS = ("document_type", "source", "key")

# The columns in the order a row is written; the reader ignores any other column.
_COLUMNS = ("day", "id", "document_type", "source", "key", "value", "confidence", "route", "stratum",
            "inclusion_probability", "correct", "corrected_value")
_TEXT_COLUMNS = ("id", "document_type", "source", "key", "value", "stratum", "corrected_value")
_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
_BATCH = 4096


@dataclass(frozen=True, eq=False)
class ProductionLog:
    """A production log as columns, one row per prediction unit.

    Attributes
    ----------
    route : ndarray of int8
        Index into :data:`ROUTES`: :data:`AUTO`, :data:`REVIEW` or :data:`AUDIT`.
    inclusion_probability : ndarray of float64
        The probability with which the row was checked: 1 for reviewed rows,
        the audit probability of its stratum for auto-accepted ones.
    correct : ndarray of int8
        1 when the person who looked found it correct, 0 when not,
        :data:`UNCHECKED` (-1) when nobody looked.
    confidence : ndarray of float64
        The model's confidence, NaN where the log has none.
    stratum, id, key, value, corrected_value : ndarray of object, optional
        The audit stratum (auto-accepted rows), the document or question id,
        the field or question type, the predicted value and the value a
        reviewer wrote (``""``: removed); each None where not given, and the
        column itself None when no row has it.
    day, document_type, source : ndarray of object, optional
        The row's day (``YYYY-MM-DD``: its ``day``, else the date of its
        ``received_at`` as written), the kind of document and where it came
        from (a vendor, a channel); None where not given, the column None when
        no row has it.
    line : ndarray of int64, optional
        The line of each row in its file, for messages (None for a log made in memory).
    path : str, optional
        The file the log was read from.
    """

    route: np.ndarray
    inclusion_probability: np.ndarray
    correct: np.ndarray
    confidence: np.ndarray
    stratum: np.ndarray | None = None
    id: np.ndarray | None = None
    key: np.ndarray | None = None
    value: np.ndarray | None = None
    corrected_value: np.ndarray | None = None
    day: np.ndarray | None = None
    document_type: np.ndarray | None = None
    source: np.ndarray | None = None
    line: np.ndarray | None = None
    path: str | None = None

    def __len__(self) -> int:
        return len(self.route)

    @property
    def auto_accepted(self) -> np.ndarray:
        """Rows the policy accepted: ``auto`` and ``audit`` (an audit checks an accepted row)."""
        return self.route != REVIEW

    @property
    def audited(self) -> np.ndarray:
        return self.route == AUDIT

    @property
    def reviewed(self) -> np.ndarray:
        return self.route == REVIEW

    def counts(self) -> dict[str, int]:
        """Rows, reviewed, auto-accepted (audited included) and audited rows."""
        return {"rows": len(self), "reviewed": int(np.count_nonzero(self.reviewed)),
                "auto_accepted": int(np.count_nonzero(self.auto_accepted)),
                "audited": int(np.count_nonzero(self.audited))}

    def where(self, row: int) -> dict[str, Any]:
        """Where row ``row`` is, as :class:`~rpa_sim.common.errors.InputError` keywords (file, line, id)."""
        record_id = None if self.id is None else self.id[row]
        return {"path": self.path, "line": None if self.line is None else int(self.line[row]),
                "record_id": record_id if isinstance(record_id, str) else None}


# --------------------------------------------------------------------------- writing


def _rows(log: ProductionLog) -> Iterator[dict[str, Any]]:
    columns: dict[str, list[Any]] = {}
    for name in ("day", "id", "document_type", "source", "key", "value"):
        values = getattr(log, name)
        if values is not None:
            columns[name] = values.tolist()
    columns["confidence"] = [None if math.isnan(c) else c for c in log.confidence.tolist()]
    columns["route"] = [ROUTES[code] for code in log.route.tolist()]
    if log.stratum is not None:
        columns["stratum"] = log.stratum.tolist()
    columns["inclusion_probability"] = log.inclusion_probability.tolist()
    columns["correct"] = [None if code == UNCHECKED else bool(code) for code in log.correct.tolist()]
    if log.corrected_value is not None:
        columns["corrected_value"] = log.corrected_value.tolist()
    names = [name for name in _COLUMNS if name in columns]
    for values in zip(*(columns[name] for name in names)):
        yield dict(zip(names, values))


def write_log(log: ProductionLog, path: str | os.PathLike[str]) -> int:
    """Write ``log`` as JSON Lines (gzip when the name ends in ``.gz``), atomically; the rows written.

    Columns appear in the order of ``docs/monitoring.md``; the same log gives the same bytes.
    """
    written = 0
    with atomic_output(Path(path)) as out:
        batch: list[str] = []
        for row in _rows(log):
            batch.append(_ENCODE(row))
            if len(batch) == _BATCH:
                out.write(("\n".join(batch) + "\n").encode("utf-8"))
                written += len(batch)
                batch = []
        if batch:
            out.write(("\n".join(batch) + "\n").encode("utf-8"))
            written += len(batch)
    return written


# --------------------------------------------------------------------------- reading


def log_lines(path: Path) -> Iterator[tuple[int, str]]:
    """The number and text of each non-blank line; a file that cannot be read is an :class:`InputError`.

    Read by :func:`rpa_sim.common.inputs.input_lines`: a regular file, gzip-compressed
    or not (told by its first bytes), no line longer than ``RPA_SIM_MAX_LINE_BYTES``.
    """
    for number, raw in input_lines(path):
        try:
            yield number, raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise InputError(f"not valid UTF-8: byte 0x{raw[error.start]:02x} at byte {error.start + 1} "
                             f"of the line", path=str(path), line=number) from None


def _probability(row: dict[str, Any], name: str) -> float:
    value = row[name]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise ValueError(f"expected a number in [0, 1], got {shown(value)}")
    return float(value)


def object_column(values: list[Any]) -> np.ndarray:
    """A list as a one-dimensional object array (``np.array`` would nest a list of lists)."""
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array


def _text(row: dict[str, Any], name: str) -> str | None:
    value = row.get(name)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"expected a string, got {shown(value)}")
    return value


class LogReader:
    """A log's columns growing row by row, each row checked as it comes (:func:`read_log` reads a file with it).

    Parameters
    ----------
    path : Path
        The file, for messages.
    need_confidence : bool, default=False
        Require a confidence on every auto-accepted row.
    need_day : bool, default=False
        Require a ``day`` or ``received_at`` on every row (``rpa-sim watch``).
    """

    def __init__(self, path: Path, need_confidence: bool = False, need_day: bool = False) -> None:
        self.path = path
        self.need_confidence = need_confidence
        self.need_day = need_day
        self.days: list[str | None] = []
        self.route: list[int] = []
        self.inclusion: list[float] = []
        self.correct: list[int] = []
        self.confidence: list[float] = []
        self.text: dict[str, list[str | None]] = {name: [] for name in _TEXT_COLUMNS}
        self.lines: list[int] = []
        # the first line of each stratum with its probability, and the first auto-accepted line with and without one
        self.stratum_first: dict[str, tuple[int, float]] = {}
        self.with_stratum: int | None = None
        self.without_stratum: int | None = None

    def add(self, number: int, text: str) -> None:
        """Check the row of line ``number`` and add it; :class:`InputError` names the line and field of a problem."""
        try:
            row = json.loads(text.rstrip("\r\n"))
        except json.JSONDecodeError as error:
            raise InputError(f"invalid JSON: {error.msg} at column {error.pos + 1}", path=str(self.path),
                             line=number) from None
        except RecursionError:
            raise InputError("invalid JSON: nested too deeply", path=str(self.path), line=number) from None
        except ValueError as error:  # an integer beyond Python's limit on digits
            raise InputError(f"invalid JSON: {error}", path=str(self.path), line=number) from None
        if not isinstance(row, dict):
            raise InputError(f"expected a JSON object, got {shown(row)}", path=str(self.path), line=number)
        record_id = row.get("id") if isinstance(row.get("id"), str) else None
        field = None
        try:
            field = "received_at" if row.get("day") is None and row.get("received_at") is not None else "day"
            day = self._day(row, field)
            field = "route"
            route = self._route(row)
            field = "inclusion_probability"
            inclusion = self._inclusion(row, route)
            field = "correct"
            correct = self._correct(row, route)
            field = "confidence"
            confidence = self._confidence(row, route)
            texts = {}
            for field in _TEXT_COLUMNS:
                texts[field] = _text(row, field)
            field = "stratum"
            self._stratum(number, texts["stratum"], route, inclusion)
        except ValueError as error:
            raise InputError(str(error), path=str(self.path), line=number, record_id=record_id, field=field) from None
        self.days.append(day)
        self.route.append(route)
        self.inclusion.append(inclusion)
        self.correct.append(correct)
        self.confidence.append(confidence)
        for name, value in texts.items():
            self.text[name].append(value)
        self.lines.append(number)

    def _day(self, row: dict[str, Any], column: str) -> str | None:
        # a day given wins over received_at; a null is none
        if row.get(column) is None:
            if self.need_day:
                raise ValueError("missing: watch needs the day of every row (a day, or a received_at)")
            return None
        return day_of(row[column], column=column)

    def _route(self, row: dict[str, Any]) -> int:
        if "route" not in row:
            raise ValueError("missing (required)")
        if row["route"] not in ROUTES:
            raise ValueError(f"expected 'auto', 'review' or 'audit', got {shown(row['route'])}")
        return ROUTES.index(row["route"])

    def _inclusion(self, row: dict[str, Any], route: int) -> float:
        given = row.get("inclusion_probability")
        if route == REVIEW:
            if given is not None and given != 1:
                raise ValueError(f"a reviewed row is checked with probability 1, got {shown(given)}")
            return 1.0
        if given is None:
            raise ValueError(f"missing (required on {ROUTES[route]} rows)")
        value = _probability(row, "inclusion_probability")
        if route == AUDIT and value == 0.0:
            raise ValueError(f"an audited row was drawn, so its probability is above 0, got {shown(given)}")
        return value

    def _correct(self, row: dict[str, Any], route: int) -> int:
        given = row.get("correct")
        if route == AUTO:
            if given is not None:
                raise ValueError(f"an auto row was checked by nobody, so it has none (null), got {shown(given)}; "
                                 f"a row drawn for a check has route audit")
            return UNCHECKED
        if not isinstance(given, bool):
            raise ValueError(f"expected true or false on {ROUTES[route]} rows, got "
                             f"{'nothing' if given is None else shown(given)}")
        return int(given)

    def _confidence(self, row: dict[str, Any], route: int) -> float:
        if row.get("confidence") is None:
            if self.need_confidence and route != REVIEW:
                raise ValueError("missing: ppi needs the confidence of every auto-accepted row")
            return math.nan
        return _probability(row, "confidence")

    def _stratum(self, number: int, stratum: str | None, route: int, inclusion: float) -> None:
        if route == REVIEW:
            return
        if stratum is None:
            self.without_stratum = self.without_stratum or number
        else:
            self.with_stratum = self.with_stratum or number
            first = self.stratum_first.setdefault(stratum, (number, inclusion))
            if first[1] != inclusion:
                raise ValueError(f"stratum {stratum!r} has inclusion probability {first[1]!r} on line {first[0]} "
                                 f"and {inclusion!r} here; a stratum is audited at one rate")
        if self.with_stratum is not None and self.without_stratum is not None:
            raise ValueError(f"missing on line {self.without_stratum} and given on line {self.with_stratum}: "
                             f"give every auto-accepted row its stratum, or none")

    def log(self) -> ProductionLog:
        if not self.route:
            raise InputError("no rows: a log has one row per prediction", path=str(self.path))
        columns = {name: None if all(v is None for v in values) else object_column(values)
                   for name, values in [*self.text.items(), ("day", self.days)]}
        return ProductionLog(route=np.array(self.route, dtype=np.int8),
                             inclusion_probability=np.array(self.inclusion, dtype=np.float64),
                             correct=np.array(self.correct, dtype=np.int8),
                             confidence=np.array(self.confidence, dtype=np.float64),
                             line=np.array(self.lines, dtype=np.int64), path=str(self.path), **columns)


def read_log(path: str | os.PathLike[str], *, need_confidence: bool = False) -> ProductionLog:
    """Read and check a production log (JSON Lines, ``.gz`` too): rpa-sim's or a team's export.

    Parameters
    ----------
    path : path-like
    need_confidence : bool, default=False
        Require a confidence on every auto-accepted row (what ``ppi`` needs).

    Raises
    ------
    InputError
        For a file that cannot be read, and for the first row that does not
        fit the format of ``docs/monitoring.md``, naming file, line and field.
    """
    path = Path(path)
    reader = LogReader(path, need_confidence)
    for number, text in log_lines(path):
        reader.add(number, text)
    return reader.log()
