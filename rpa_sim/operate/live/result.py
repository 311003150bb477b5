"""What ``watch`` found, typed: per segment and day its figures, and every alarm, dated, with its evidence.

A study, the report and the dashboard render these and compute nothing: the
status of a segment, its interval, its alarms and proposals are all here.
:meth:`WatchResult.to_dict` is ``watch --json`` (every key in ``docs/live.md``).

Examples
--------
>>> result = WatchResult(max_error=0.03, delta=0.05, segments_by=("document_type",), horizon_days=365,
...                      days=("2024-05-01",), segments=(), alarms=())
>>> sorted(result.to_dict())
['alarms', 'days', 'delta', 'guarantee', 'horizon_days', 'max_error', 'segments', 'segments_by']
>>> WatchResult.from_dict(result.to_dict()) == result
True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rpa_sim.common.typedjson import decoded, encoded
from rpa_sim.operate.live.proposals import Proposal

__all__ = ["KINDS", "ERROR_ABOVE_TARGET", "CALIBRATION_CONTRADICTED", "ROOM_TO_AUTOMATE", "Segment", "DayFigures",
           "Alarm", "SegmentTimeline", "SegmentKeyed", "WatchResult", "segment_name", "segment_in", "segment_out",
           "day_status"]

ERROR_ABOVE_TARGET = "error_above_target"
CALIBRATION_CONTRADICTED = "calibration_contradicted"
ROOM_TO_AUTOMATE = "room_to_automate"
#: The kinds of alarm, in the order they are listed on one day of one segment.
KINDS = (ERROR_ABOVE_TARGET, CALIBRATION_CONTRADICTED, ROOM_TO_AUTOMATE)

#: A segment: its value of each ``--segments`` column, in their order (None: the row has none).
Segment = tuple[tuple[str, str | None], ...]


def segment_in(value: dict[str, Any]) -> dict[str, Any]:
    """A JSON object's ``segment``, ``{column: value}``, as the pairs a :data:`Segment` is read from."""
    if isinstance(value.get("segment"), Mapping):
        value["segment"] = [[column, name] for column, name in value["segment"].items()]
    return value


def segment_out(value: dict[str, Any]) -> dict[str, Any]:
    """A segment written as ``{column: value}``."""
    return {**value, "segment": {column: name for column, name in value["segment"]}}


class SegmentKeyed:
    """A result holding a ``segment``, written in JSON as ``{column: value}`` (:mod:`rpa_sim.common.typedjson`
    calls these two on reading and writing)."""

    @classmethod
    def _json_in(cls, value: dict[str, Any], path: str) -> dict[str, Any]:
        return segment_in(value)

    def _json_out(self, value: dict[str, Any]) -> dict[str, Any]:
        return segment_out(value)


def segment_name(segment: Segment) -> str:
    """A segment as people read it: its values joined by ``/`` (``(none)`` for a missing one).

    >>> segment_name((("document_type", "invoice"), ("source", None)))
    'invoice / (none)'
    """
    return " / ".join("(none)" if value is None else value for _, value in segment)


def day_status(figures: DayFigures, *, max_error: float) -> str:
    """A segment's status on one day, as its figures that day say it (the dashboard steps through the days):
    ``above target`` once the time-uniform lower bound reaches ``max_error``, ``within target`` while the
    regime has an interval, else ``no audits`` (on the last day :attr:`SegmentTimeline.status` also tells
    ``no auto``).

    >>> day = DayFigures("2024-05-01", 500, 50, 6, 0.12, 0.05, 0.2, None, ())
    >>> day_status(day, max_error=0.05), day_status(day, max_error=0.06)
    ('above target', 'within target')
    """
    if figures.low >= max_error:
        return "above target"
    return "no audits" if figures.high is None else "within target"


@dataclass(frozen=True)
class DayFigures:
    """One segment on one run day (a ``days`` entry of ``--json``).

    Attributes
    ----------
    day : str
        ``YYYY-MM-DD``.
    auto_accepted, audited, errors_found : int
        The segment's auto-accepted rows that day, the audited ones, and the errors audits found.
    estimate : float or None
        The Horvitz-Thompson error rate of the auto-accepted rows of the current regime (since the change
        point when there is evidence of one, else since the segment was last above target); None
        without an audit in it.
    low : float
        The time-uniform lower bound of the error rate (valid on every day at once, at ``delta``).
    high : float or None
        The upper end of the regime's ``1 - delta`` interval (pointwise: for reading, no alarm rests on it).
    label_free : float or None
        The error rate the calibrated confidences predict for the day's auto-accepted rows (assumes
        calibration); None during the reference period and once calibration is contradicted.
    alarm : tuple of str
        The kinds raised on this segment that day, in :data:`KINDS` order.
    """

    day: str
    auto_accepted: int
    audited: int
    errors_found: int
    estimate: float | None
    low: float
    high: float | None
    label_free: float | None
    alarm: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return encoded(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DayFigures:
        return decoded(cls, data, "")


@dataclass(frozen=True)
class Alarm(SegmentKeyed):
    """An alarm (``error_above_target``, ``calibration_contradicted``) or a notice (``room_to_automate``).

    Attributes
    ----------
    day : str
    segment : Segment
    kind : str
        One of :data:`KINDS`.
    since : str
        The first day of the evidence: the estimated change point (``error_above_target``), the first
        day tested against the calibration (``calibration_contradicted``), the start of the calm run
        (``room_to_automate``).
    auto_accepted, audited, errors_found : int
        The segment's auto-accepted rows, audits and errors found from ``since`` to ``day``.
    estimate, low, high : float or None
        The segment's figures that day (:class:`DayFigures`).
    never_audited : int
        Auto-accepted rows since ``since`` at inclusion probability 0: no audit could see them.
    predicted_errors : float or None
        ``calibration_contradicted``: the errors the calibration predicted among the audits since ``since``.
    proposal : Proposal or None
        What to do (``error_above_target``, ``room_to_automate``); None for ``calibration_contradicted``.
    """

    day: str
    segment: Segment
    kind: str
    since: str
    auto_accepted: int
    audited: int
    errors_found: int
    estimate: float | None
    low: float
    high: float | None
    never_audited: int
    predicted_errors: float | None
    proposal: Proposal | None

    def to_dict(self) -> dict[str, Any]:
        return encoded(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Alarm:
        return decoded(cls, data, "")


@dataclass(frozen=True)
class SegmentTimeline(SegmentKeyed):
    """One segment over the run: every run day from its first, and its status on the last.

    Attributes
    ----------
    segment : Segment
    days : tuple of DayFigures
    first_alarm : str or None
        The day of its first ``error_above_target`` or ``calibration_contradicted`` (a notice is not an alarm).
    status : str
        On the last day: ``above target`` (the lower bound has reached ``max_error``), ``within target``,
        ``no audits`` (auto-accepted rows and no audit in the regime) or ``no auto`` (nothing auto-accepted).
    calibration : str
        ``reference`` (being fitted), ``holds`` (not contradicted), ``contradicted``, or ``none`` (no
        confidences to fit it on).
    never_audited : int
        Auto-accepted rows over the whole run at inclusion probability 0.
    proposal : Proposal or None
        What to do now: while the segment is above target, the proposal of its last
        ``error_above_target``; once within target, that of a ``room_to_automate`` raised since its
        last error alarm; else None.
    """

    segment: Segment
    first_alarm: str | None
    status: str
    calibration: str
    never_audited: int
    proposal: Proposal | None
    days: tuple[DayFigures, ...]

    def to_dict(self) -> dict[str, Any]:
        return encoded(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SegmentTimeline:
        return decoded(cls, data, "")


def _guarantee(max_error: float, delta: float, horizon_days: int) -> str:
    return (f"When every segment's auto-accepted error rate stays at or below {max_error:g} on every day, the "
            f"chance that watch ever raises an error_above_target alarm, on any day and any segment, is at most "
            f"{delta:g}; this holds for every day with no horizon (the horizon of {horizon_days:,} days only "
            f"sets where detection is fastest).")


@dataclass(frozen=True)
class WatchResult:
    """Everything ``watch`` says about a run of days (``--json`` is :meth:`to_dict`).

    Attributes
    ----------
    max_error, delta : float
    segments_by : tuple of str
        The ``--segments`` columns.
    horizon_days : int
    days : tuple of str
        The run days read, in order.
    segments : tuple of SegmentTimeline
        In the order of their values (a missing value first).
    alarms : tuple of Alarm
        In day order, then segment order, then :data:`KINDS` order.
    """

    max_error: float
    delta: float
    segments_by: tuple[str, ...]
    horizon_days: int
    days: tuple[str, ...]
    segments: tuple[SegmentTimeline, ...]
    alarms: tuple[Alarm, ...]

    @property
    def guarantee(self) -> str:
        """The guarantee, in one sentence (the ``guarantee`` key)."""
        return _guarantee(self.max_error, self.delta, self.horizon_days)

    def to_dict(self) -> dict[str, Any]:
        """``watch --json``: the result, with the guarantee in words after the days."""
        return encoded(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> WatchResult:
        """The result :meth:`to_dict` gave (the ``guarantee`` is made again from the settings).

        Raises
        ------
        InputError
            Naming the key path of the first value that does not fit.
        """
        return decoded(cls, data, "")

    @classmethod
    def _json_in(cls, value: dict[str, Any], path: str) -> dict[str, Any]:
        value.pop("guarantee", None)
        return value

    def _json_out(self, value: dict[str, Any]) -> dict[str, Any]:
        ordered = {}
        for key, item in value.items():
            ordered[key] = item
            if key == "days":
                ordered["guarantee"] = self.guarantee
        return ordered
