"""The day reader: production logs over days, read in day order and streamed, one day in memory at a time.

LOGS is one log file, a folder of them (its ``*.jsonl`` and ``*.jsonl.gz``
files, not hidden, not in subfolders) or a quoted glob (:func:`log_files`).
Every row needs its day: ``day`` (``YYYY-MM-DD``) or ``received_at`` (an ISO
8601 date and time, whose own date as written is the day; ``day`` wins when
both are given). Within a file, rows are in day order (a day going backwards
is an error naming the file and line). Files are read in the order of their
first day (then of their names); a day held by several files is the union of
their rows (one file per channel and day is a common export), so the rows of a
day may come from any number of files, read as each file reaches that day.

A row is decoded by msgspec into a typed struct (the format's columns and
types); whatever msgspec refuses, and every check across rows of a day (the
routes' required columns, the audit strata), is handed to the careful reader
of :mod:`rpa_sim.operate.monitoring.log`, which names the problem exactly as
``rpa-sim estimate`` does. The strata rules of the format hold per file and
day: a team may change its audit plan from one day to the next.

:func:`read_days` yields one :class:`LogDay` a day: its rows as tallies per
segment (:class:`~rpa_sim.operate.live.tally.Tally`) and its volume
(:class:`~rpa_sim.operate.live.proposals.DayVolume`), never the rows themselves.
"""

from __future__ import annotations

import heapq
import math
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import compress
from pathlib import Path
from typing import Annotated, Literal

import msgspec
import numpy as np

from rpa_sim.common.dates import day_of
from rpa_sim.common.errors import InputError
from rpa_sim.common.inputs import input_lines, named_files
from rpa_sim.operate.live.proposals import DayVolume
from rpa_sim.operate.live.result import Segment
from rpa_sim.operate.live.tally import Tally
from rpa_sim.operate.monitoring.log import AUDIT, REVIEW, ROUTES, UNCHECKED, LogReader, ProductionLog

__all__ = ["LOG_SUFFIXES", "MOST_STRATA", "LogDay", "log_files", "log_day", "read_days"]

#: The files of a folder that are logs.
LOG_SUFFIXES = (".jsonl", ".jsonl.gz")
#: The most distinct inclusion probabilities of one segment on one day: an audit plan has a few strata.
MOST_STRATA = 64
_Probability = Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]
_ROUTE_CODES = {name: code for code, name in enumerate(ROUTES)}
_ROUTE_NAMES: tuple[Literal["auto", "review", "audit"], ...] = ("auto", "review", "audit")  # ROUTES, typed


class _Row(msgspec.Struct, gc=False):
    """A log row as the format types it (other columns are ignored)."""

    route: Literal["auto", "review", "audit"]
    inclusion_probability: _Probability | None = None
    correct: bool | None = None
    confidence: _Probability | None = None
    day: str | None = None
    received_at: str | None = None
    id: str | None = None
    document_type: str | None = None
    source: str | None = None
    key: str | None = None
    value: str | None = None
    stratum: str | None = None
    corrected_value: str | None = None


_DECODE = msgspec.json.Decoder(_Row).decode


@dataclass(frozen=True)
class LogDay:
    """One run day of the logs: its tallies per segment and what it sends to review."""

    day: str
    tallies: dict[Segment, Tally]
    volume: DayVolume


def log_files(logs: str | os.PathLike[str]) -> tuple[Path, ...]:
    """LOGS as files: a file, a folder's ``*.jsonl`` and ``*.jsonl.gz`` files (by name), or a glob's matches.

    A path that exists is a file or a folder, never a glob; a missing one without a glob character is
    returned as it is, so that reading it says "no such file".

    Raises
    ------
    InputError
        For a folder without a log, or a glob that matches no file.
    """
    return named_files(logs, suffixes=LOG_SUFFIXES, what="log")


def _careful(path: Path, lines: Sequence[tuple[int, bytes]]) -> LogReader:
    """The careful reader over ``lines``: it raises the format's own message for the first bad one."""
    reader = LogReader(path, need_day=True)
    for number, raw in lines:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise InputError(f"not valid UTF-8: byte 0x{raw[error.start]:02x} at byte {error.start + 1} of the "
                             f"line", path=str(path), line=number) from None
        reader.add(number, text)
    return reader


def _careful_row(path: Path, number: int, raw: bytes) -> tuple[_Row, str]:
    """A line the fast decoder refused: the careful reader words its problem (or, rarely, takes it)."""
    log = _careful(path, [(number, raw)]).log()
    assert log.day is not None, "the careful reader needs a day"
    parsed = _Row(route=_ROUTE_NAMES[int(log.route[0])], inclusion_probability=float(log.inclusion_probability[0]),
                  correct=None if log.correct[0] == UNCHECKED else bool(log.correct[0]),
                  confidence=None if math.isnan(log.confidence[0]) else float(log.confidence[0]),
                  day=str(log.day[0]), **{name: None if getattr(log, name) is None else getattr(log, name)[0]
                                          for name in ("id", "document_type", "source", "key", "stratum")})
    return parsed, str(log.day[0])


class _Days:
    """The day of each row of one file: a ``day`` read once per distinct text, a ``received_at`` per row."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.known: dict[str, str] = {}

    def row(self, number: int, raw: bytes) -> tuple[_Row, str]:
        try:
            row = _DECODE(raw)
        except msgspec.MsgspecError:
            return _careful_row(self.path, number, raw)
        text = row.day
        if text is not None:
            day = self.known.get(text)
            if day is not None:
                return row, day
            try:
                self.known[text] = day = day_of(text)
            except ValueError:
                return _careful_row(self.path, number, raw)
            return row, day
        if row.received_at is None:
            return _careful_row(self.path, number, raw)
        try:
            return row, day_of(row.received_at, column="received_at")
        except ValueError:
            return _careful_row(self.path, number, raw)


@dataclass
class _Chunk:
    """The rows of one day in one file."""

    path: Path
    day: str
    lines: list[tuple[int, bytes]]
    rows: list[_Row]


def _chunks(path: Path, after: str | None) -> Iterator[_Chunk]:
    """A file's rows, a day at a time, in its order (a day going backwards stops it)."""
    days = _Days(path)
    chunk: _Chunk | None = None
    for number, raw in input_lines(path):
        row, day = days.row(number, raw)
        if chunk is None or day != chunk.day:
            field = "day" if row.day is not None else "received_at"
            if chunk is not None:
                if day < chunk.day:
                    raise InputError(f"{day} comes after {chunk.day} (line {chunk.lines[-1][0]}): a file's rows must "
                                     f"be in day order", path=str(path), line=number, record_id=row.id, field=field)
                yield chunk
            if after is not None and day <= after:
                raise InputError(f"{day} was read already (the state ends on {after}): give watch only the days "
                                 f"after it", path=str(path), line=number, record_id=row.id, field=field)
            chunk = _Chunk(path, day, [], [])
        chunk.lines.append((number, raw))
        chunk.rows.append(row)
    if chunk is None:
        raise InputError("no rows: a log has one row per prediction", path=str(path))
    yield chunk


@dataclass
class _Columns:
    """A chunk's rows as arrays (route codes, inclusion probability, correct, confidence) and texts."""

    route: np.ndarray
    inclusion: np.ndarray
    correct: np.ndarray
    confidence: np.ndarray
    segment: list[tuple[str | None, ...]]
    ids: tuple[str | None, ...]


def _numbers(values: tuple[float | bool | None, ...], missing: float) -> tuple[np.ndarray, np.ndarray]:
    """A column of numbers with None as ``missing``, and where it was None."""
    array = np.array(values, dtype=object)
    absent = array == None  # noqa: E711 (element-wise)
    array[absent] = missing
    return array.astype(np.float64), absent


def _columns(chunk: _Chunk, segments_by: Sequence[str]) -> _Columns:
    """The chunk's columns, once every row and the day's strata pass the format's checks."""
    fields = dict(zip(_Row.__struct_fields__, zip(*map(msgspec.structs.astuple, chunk.rows))))
    route = np.fromiter(map(_ROUTE_CODES.__getitem__, fields["route"]), dtype=np.int8, count=len(chunk.rows))
    inclusion, missing = _numbers(fields["inclusion_probability"], 1.0)
    correct, unchecked = _numbers(fields["correct"], UNCHECKED)
    review, audit = route == REVIEW, route == AUDIT
    bad = (review & ~missing & (inclusion != 1.0)) | (~review & missing) | (audit & (inclusion == 0.0)) \
        | (unchecked != (route == 0))
    if bad.any() or not _strata_hold(fields["stratum"], route, inclusion):
        _careful(chunk.path, chunk.lines)  # raises the format's own message for the first bad row
    confidence, _ = _numbers(fields["confidence"], math.nan)
    segment = list(zip(*(fields[name] for name in segments_by)))
    return _Columns(route, inclusion, correct.astype(np.int8), confidence, segment, fields["id"])


def _strata_hold(given: tuple[str | None, ...], route: np.ndarray, inclusion: np.ndarray) -> bool:
    """Whether every auto-accepted row has a stratum or none has, and each stratum has one rate."""
    accepted = np.flatnonzero(route != REVIEW)
    strata = [given[index] for index in accepted.tolist()]
    named = sum(name is not None for name in strata)
    if named == 0:
        return True
    if named < len(strata):
        return False
    pairs = set(zip(strata, inclusion[accepted].tolist()))
    return len(pairs) == len({name for name, _ in pairs})


def _tallies(columns: _Columns, day: str, path: Path | None, segments_by: Sequence[str]) -> dict[Segment, Tally]:
    index: dict[tuple[str | None, ...], int] = {}
    codes = np.fromiter((index.setdefault(key, len(index)) for key in columns.segment), dtype=np.int64,
                        count=len(columns.segment))
    tallies = {}
    for values, code in index.items():
        mine = codes == code
        tally = Tally.of(route=columns.route[mine], inclusion=columns.inclusion[mine], correct=columns.correct[mine],
                         confidence=columns.confidence[mine])
        if len(tally.rates) > MOST_STRATA:
            raise InputError(f"{len(tally.rates):,} distinct inclusion probabilities on {day} in segment "
                             f"{dict(zip(segments_by, values))}: watch takes at most {MOST_STRATA} (the strata of an "
                             f"audit plan)", path=None if path is None else str(path))
        tallies[tuple(zip(segments_by, values))] = tally
    return tallies


def _volume(columns: _Columns) -> tuple[int, int, set[str], set[str], int, int]:
    """Units, reviewed units, the ids and reviewed ids seen, and rows without an id (all, reviewed)."""
    reviewed = (columns.route == REVIEW).tolist()
    ids = set(columns.ids)
    ids.discard(None)
    of_reviewed = list(compress(columns.ids, reviewed))
    opened = set(of_reviewed)
    opened.discard(None)
    return (len(reviewed), len(of_reviewed), ids, opened,  # type: ignore[return-value]  # None discarded
            columns.ids.count(None), of_reviewed.count(None))


def log_day(day: str, log: ProductionLog, *, segments_by: Sequence[str]) -> LogDay:
    """One day's log made in memory (a stream's, :mod:`rpa_sim.operate.stream`) as :func:`read_days` yields it
    from files: the same tallies and volume, so watching the day in memory and from its file agree.

    Raises
    ------
    InputError
        For more than :data:`MOST_STRATA` audit rates in a segment.
    """
    n = len(log)
    values = [[None] * n if getattr(log, name) is None else getattr(log, name).tolist() for name in segments_by]
    columns = _Columns(log.route, log.inclusion_probability, log.correct, log.confidence, list(zip(*values)),
                       tuple([None] * n if log.id is None else log.id.tolist()))
    units, reviewed, ids, opened, anonymous, anonymous_reviewed = _volume(columns)
    return LogDay(day, _tallies(columns, day, None if log.path is None else Path(log.path), segments_by),
                  DayVolume(units=units, reviewed=reviewed, documents=len(ids) + anonymous,
                            opened=len(opened) + anonymous_reviewed))


def _first_day(path: Path) -> str:
    first = next(input_lines(path), None)  # the generator, and the file with it, is closed as it is dropped
    if first is None:
        raise InputError("no rows: a log has one row per prediction", path=str(path))
    return _Days(path).row(*first)[1]


def read_days(files: Sequence[Path], *, segments_by: Sequence[str], after: str | None = None) -> Iterator[LogDay]:
    """The logs' run days in order, each as tallies per segment (module docstring).

    Parameters
    ----------
    files : sequence of Path
        The log files (:func:`log_files`).
    segments_by : sequence of str
        The columns a segment is made of (``document_type``, ``source``, ``key``).
    after : str, optional
        The last day already read (``--state``): an earlier or equal day is an error.

    Raises
    ------
    InputError
        For a row that does not fit the format, a day going backwards within a file, a day at or
        before ``after``, a file without rows.
    """
    starts = sorted((_first_day(path), order, path) for order, path in enumerate(files))
    waiting = list(starts)  # files not yet opened, by first day
    open_files: list[tuple[str, int, Iterator[_Chunk], _Chunk]] = []  # a heap by (day, order)
    while waiting or open_files:
        day = min([first[0] for first in waiting[:1]] + [current[0] for current in open_files[:1]])
        while waiting and waiting[0][0] == day:
            _, order, path = waiting.pop(0)
            chunks = _chunks(path, after)
            heapq.heappush(open_files, (day, order, chunks, next(chunks)))
        tallies: dict[Segment, Tally] = {}
        units = reviewed = anonymous = anonymous_reviewed = 0
        ids: set[str] = set()
        opened: set[str] = set()
        while open_files and open_files[0][0] == day:
            _, order, chunks, chunk = heapq.heappop(open_files)
            columns = _columns(chunk, segments_by)
            for segment, tally in _tallies(columns, day, chunk.path, segments_by).items():
                tallies[segment] = tallies[segment] + tally if segment in tallies else tally
            counted = _volume(columns)
            units, reviewed = units + counted[0], reviewed + counted[1]
            ids |= counted[2]
            opened |= counted[3]
            anonymous, anonymous_reviewed = anonymous + counted[4], anonymous_reviewed + counted[5]
            following = next(chunks, None)
            if following is not None:
                heapq.heappush(open_files, (following.day, order, chunks, following))
        yield LogDay(day, tallies, DayVolume(units=units, reviewed=reviewed, documents=len(ids) + anonymous,
                                             opened=len(opened) + anonymous_reviewed))
