"""The state file (``watch --state FILE``): what a :class:`~rpa_sim.operate.live.watch.Watcher` carries to the next run.

A team runs ``watch`` once a day on the day's log; the state holds everything
the next day needs (per segment: the detector's wealth, the CUSUM runs and
their tallies, the calibration and its detector, the figures of every day so
far; the days read and the alarms raised), so that the output of a run a day
is, byte for byte, the output of one run over every day. It is JSON: the
settings it was written for, a format version, the state, and the SHA-256 of
the state's text. Floats are written as Python's shortest repr, which reads
back to the same bits; ``-inf`` (a wealth that never started) and ``NaN`` (a
band without a calibration) are ``null``.

A state is refused in one line when it is not one (or was cut short), of
another version, changed since it was written (its checksum), or written for
other settings (``max_error``, ``delta``, the segment columns, the horizon,
the scenario's operations: each names its option). It is written atomically
(:mod:`rpa_sim.common.files`).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np

from rpa_sim.common.errors import InputError
from rpa_sim.common.inputs import read_input
from rpa_sim.operate.live.result import Alarm, DayFigures, Segment
from rpa_sim.operate.live.tally import Tally
from rpa_sim.operate.live.watch import SegmentTracker, Watcher, WatchSettings

if TYPE_CHECKING:
    from rpa_sim.operate.queue.summary import OperationModel

__all__ = ["STATE_FORMAT", "STATE_VERSION", "state_text", "read_state"]

STATE_FORMAT = "rpa-sim watch state"
STATE_VERSION = 1
_OPTIONS = {"max_error": "--max-error", "delta": "--delta", "segments_by": "--segments",
            "horizon_days": "--horizon-days", "staffing": "--scenario's operations"}


class _File(msgspec.Struct, forbid_unknown_fields=True):
    format: str
    version: int
    settings: dict[str, Any]
    checksum: str
    state: msgspec.Raw


def _floats(values: np.ndarray) -> list[Any]:
    """A float array as nested lists, ``-inf`` and NaN as None (they are the only values that are not finite)."""
    return [None if not np.isfinite(value) else value for value in values.ravel().tolist()]


def _array(values: list[Any], shape: tuple[int, ...], missing: float) -> np.ndarray:
    array = np.array([missing if value is None else value for value in values], dtype=np.float64)
    return array.reshape(shape)


def _tally(tally: Tally) -> dict[str, Any]:
    return {"rates": tally.rates.tolist(), "auto": tally.auto.tolist(), "audited": tally.audited.tolist(),
            "audit_errors": tally.audit_errors.tolist(), "reviewed": tally.reviewed.tolist(),
            "reviewed_errors": tally.reviewed_errors.tolist()}


def _read_tally(data: dict[str, Any]) -> Tally:
    bands = len(Tally.empty().reviewed)

    def counts(name: str) -> np.ndarray:
        return np.array(data[name], dtype=np.int64).reshape(len(data["rates"]), bands)

    return Tally(np.array(data["rates"], dtype=np.float64).reshape(-1), counts("auto"), counts("audited"),
                 counts("audit_errors"), np.array(data["reviewed"], dtype=np.int64).reshape(bands),
                 np.array(data["reviewed_errors"], dtype=np.int64).reshape(bands))


def _tracker(tracker: SegmentTracker) -> dict[str, Any]:
    return {
        "segment": [list(pair) for pair in tracker.segment], "first": tracker.first,
        "log_r": _floats(tracker.log_r), "cusum": _floats(tracker.cusum), "starts": tracker.starts.tolist(),
        "windows": [_tally(window) for window in tracker.windows], "stable_start": tracker.stable_start,
        "stable": _tally(tracker.stable), "above": tracker.above, "first_alarm": tracker.first_alarm,
        "reference": _tally(tracker.reference),
        "calibration": None if tracker.calibration is None else _floats(tracker.calibration),
        "calibration_log_r": _floats(tracker.calibration_log_r), "tolerance": tracker.tolerance,
        "contradicted": tracker.contradicted,
        "tested": _tally(tracker.tested), "predicted": tracker.predicted, "calm": tracker.calm,
        "last_notice": tracker.last_notice, "never_audited": tracker.never_audited,
        "days": [day.to_dict() for day in tracker.days]}


def _read_tracker(data: dict[str, Any], grid_size: int) -> SegmentTracker:
    blank = SegmentTracker.start((), 1, grid_size)
    segment: Segment = tuple((str(column), value) for column, value in data["segment"])
    return SegmentTracker(
        segment=segment, first=int(data["first"]), log_r=_array(data["log_r"], blank.log_r.shape, -np.inf),
        cusum=_array(data["cusum"], blank.cusum.shape, -np.inf),
        starts=np.array(data["starts"], dtype=np.int64).reshape(blank.starts.shape),
        windows=[_read_tally(window) for window in data["windows"]], stable_start=int(data["stable_start"]),
        stable=_read_tally(data["stable"]), above=bool(data["above"]), first_alarm=data["first_alarm"],
        reference=_read_tally(data["reference"]),
        calibration=None if data["calibration"] is None else _array(data["calibration"], (len(Tally.empty().reviewed),),
                                                                    np.nan),
        calibration_log_r=_array(data["calibration_log_r"], blank.calibration_log_r.shape, -np.inf),
        tolerance=float(data["tolerance"]),
        contradicted=bool(data["contradicted"]), tested=_read_tally(data["tested"]), predicted=float(data["predicted"]),
        calm=int(data["calm"]), last_notice=data["last_notice"], never_audited=int(data["never_audited"]),
        days=[DayFigures.from_dict(day) for day in data["days"]])


def _canonical(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), allow_nan=False)


def state_text(watcher: Watcher) -> str:
    """The state file's text for ``watcher`` (deterministic: the same run gives the same bytes)."""
    state = {"days": watcher.days, "alarms": [alarm.to_dict() for alarm in watcher.alarms],
             "segments": [_tracker(tracker) for tracker in watcher.trackers.values()]}
    text = _canonical(state)
    header = {"format": STATE_FORMAT, "version": STATE_VERSION, "settings": watcher.settings.to_dict(),
              "checksum": hashlib.sha256(text.encode("utf-8")).hexdigest()}
    return _canonical(header)[:-1] + ',"state":' + text + "}\n"


def _refused(path: Path, problem: str) -> InputError:
    return InputError(f"{problem}: start a new state file (or remove --state)", path=str(path))


def read_state(path: str | os.PathLike[str], settings: WatchSettings, *,
               operations: OperationModel | None = None) -> Watcher:
    """The watcher a state file holds, continued with ``settings``; :class:`InputError` for a state refused."""
    path = Path(path)
    raw = read_input(path)
    try:
        header = msgspec.json.decode(raw, type=_File)
    except msgspec.DecodeError as error:
        raise _refused(path, f"not a watch state, or cut short ({error})") from None
    except msgspec.ValidationError as error:
        raise _refused(path, f"not a watch state ({error})") from None
    if header.format != STATE_FORMAT:
        raise _refused(path, f"not a watch state (format {header.format!r})")
    if header.version != STATE_VERSION:
        raise _refused(path, f"a watch state of version {header.version}, and this rpa-sim reads version "
                             f"{STATE_VERSION}")
    text = bytes(header.state)
    if hashlib.sha256(text).hexdigest() != header.checksum:
        raise _refused(path, "its content does not match its checksum: it was changed or cut short")
    wanted = settings.to_dict()
    for name, option in _OPTIONS.items():
        if header.settings.get(name) != wanted[name]:
            raise InputError(f"the state was written for {option} {_setting(header.settings.get(name))}, and this "
                             f"run has {_setting(wanted[name])}: run with the settings it was written for, or start "
                             f"a new state file", path=str(path))
    state = json.loads(text)
    watcher = Watcher(settings, operations=operations)
    watcher.days = list(state["days"])
    watcher.alarms = [Alarm.from_dict(alarm) for alarm in state["alarms"]]
    for data in state["segments"]:
        tracker = _read_tracker(data, len(watcher.grid))
        watcher.trackers[tracker.segment] = tracker
    return watcher


def _setting(value: Any) -> str:
    if isinstance(value, list):
        return ",".join(map(str, value))
    return "none" if value is None else str(value)
