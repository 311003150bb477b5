"""Streams of production logs over days for the tests of ``rpa-sim watch``: as tallies in memory, or as log files.

:func:`simulate_alarms` runs many seeded streams at once through the detector
(:func:`rpa_sim.operate.live.detector.first_alarms`), vectorised over streams;
:func:`write_stream` writes a stream of logs (JSON Lines) whose errors follow
the confidences (a calibrated model, ``P(wrong) = scale (1 - c)``), with a
change on a segment from a day on.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from rpa_sim.operate.live.detector import first_alarms
from rpa_sim.operate.live.tally import BANDS, Tally, band_of

START = datetime.date(2024, 1, 1)


def day_name(index: int) -> str:
    """Run day ``index`` (0, 1, ...) as a date from 2024-01-01."""
    return (START + datetime.timedelta(days=index)).isoformat()


def one_rate_tally(accepted: int, audited: int, errors: int, *, rate: float = 0.1, confidence: float = 0.99) -> Tally:
    """A segment-day whose auto-accepted rows are all audited at ``rate`` and sit in one confidence band."""
    band = int(band_of(np.array([confidence]))[0])
    counts = [np.zeros((1, BANDS), dtype=np.int64) for _ in range(3)]
    for array, value in zip(counts, (accepted, audited, errors)):
        array[0, band] = value
    return Tally(np.array([rate]), *counts, np.zeros(BANDS, dtype=np.int64), np.zeros(BANDS, dtype=np.int64))


def simulate_alarms(draw: Callable[[np.random.Generator, int], tuple[np.ndarray, np.ndarray]], *, streams: int,
                    days: int, segments: int, max_error: float, delta: float = 0.05, horizon: int = 365,
                    seed: int = 0) -> np.ndarray:
    """The first alarm day (1, 2, ...; 0 for none) of each stream and segment, shape (streams, segments).

    ``draw(rng, t)`` gives day ``t``'s audits and errors, each of shape (streams, segments), audited at
    one rate; the detector is :func:`rpa_sim.operate.live.detector.first_alarms`.
    """
    rng = np.random.default_rng(seed)
    audited = np.zeros((streams, segments, days), dtype=np.int64)
    errors = np.zeros_like(audited)
    for t in range(1, days + 1):
        audited[..., t - 1], errors[..., t - 1] = draw(rng, t)
    return first_alarms(audited, errors, max_error=max_error, delta=delta, horizon=horizon)


def write_stream(path: Path, *, days: int, segments: tuple[str, ...] = ("invoice", "receipt"), rows: int = 400,
                 threshold: float = 0.9, audit_rate: float = 0.25, scale: float = 0.6,
                 change: tuple[str, int, float] | None = None, seed: int = 0, first_day: int = 0,
                 per_day_files: bool = False, extra: Callable[[dict], dict] | None = None) -> list[Path]:
    """Write ``days`` days of logs of ``rows`` units per segment and day; the files written.

    A unit's confidence is ``1 - Beta(1, 12)``; it is wrong with probability ``scale (1 - c)`` (times
    ``factor`` on segment ``name`` from day ``start`` on, for ``change = (name, start, factor)``: a new
    template, confidently wrong). Units under ``threshold`` are reviewed; the others auto-accepted and
    audited at ``audit_rate``. Ids name documents of five units. One file, or one file a day in the
    folder ``path`` with ``per_day_files``. ``extra`` may change each row before it is written.
    """
    rng = np.random.default_rng(seed)
    written: list[Path] = []
    lines: list[str] = []
    for index in range(first_day, first_day + days):
        day = day_name(index)
        for name in segments:
            confidence = np.round(1.0 - rng.beta(1.0, 12.0, rows), 4)
            factor = change[2] if change is not None and name == change[0] and index >= change[1] else 1.0
            wrong = rng.random(rows) < np.minimum(scale * factor * (1.0 - confidence), 1.0)
            audit = rng.random(rows) < audit_rate
            for unit in range(rows):
                reviewed = confidence[unit] < threshold
                row = {"day": day, "id": f"{name}-{index}-{unit // 5}", "document_type": name, "key": f"f{unit % 5}",
                       "confidence": float(confidence[unit]),
                       "route": "review" if reviewed else "audit" if audit[unit] else "auto",
                       "inclusion_probability": 1 if reviewed else audit_rate,
                       "correct": None if not reviewed and not audit[unit] else not bool(wrong[unit])}
                lines.append(json.dumps(extra(row) if extra else row))
        if per_day_files:
            written.append(_flush(path / f"{day}.jsonl", lines))
    if not per_day_files:
        written.append(_flush(path, lines))
    return written


def _flush(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    lines.clear()
    return path


def platform_export(path: Path, *, days: int = 40, documents: int = 40, seed: int = 7) -> Path:
    """A platform's export as JSON Lines, one line per processed document (the worked example of docs/live.md).

    Each document has a ``type`` (invoice, receipt), a ``channel`` (email, scan), the time it was
    ``processed_at`` (in Paris, UTC+2), the ``qa_rate`` its straight-through fields are sampled at (0.2), and
    four ``fields``, each with its ``value``, ``score``, ``handling`` (``human`` under 0.9, else
    ``straight_through``, or ``qa`` when sampled) and, where a person looked, the ``final`` value they left.
    From day 25 on, invoices that come by email are a new vendor's template: eight times the errors at the
    same scores.
    """
    rng = np.random.default_rng(seed)
    lines = []
    for index in range(days):
        day = START + datetime.timedelta(days=index)
        for kind in ("invoice", "receipt"):
            for number in range(documents):
                channel = "email" if number % 3 else "scan"
                factor = 8.0 if kind == "invoice" and channel == "email" and index >= 25 else 1.0
                fields = {}
                for name in ("total", "date", "vendor", "tax"):
                    score = round(float(1.0 - rng.beta(1.0, 14.0)), 4)
                    value = f"{name}-{index}-{number}"
                    wrong = rng.random() < min(0.5 * factor * (1.0 - score), 1.0)
                    sampled = rng.random() < 0.2
                    handling = "human" if score < 0.9 else "qa" if sampled else "straight_through"
                    field = {"value": value, "score": score, "handling": handling}
                    if handling != "straight_through":
                        field["final"] = f"{value}-fixed" if wrong else value
                    fields[name] = field
                minute = int(rng.integers(8 * 60, 18 * 60))
                lines.append(json.dumps({
                    "doc": f"{kind[:3]}-{index:03d}-{number:03d}", "type": kind, "channel": channel,
                    "processed_at": f"{day.isoformat()}T{minute // 60:02d}:{minute % 60:02d}:00+02:00",
                    "qa_rate": 0.2, "fields": fields}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


#: The mapping of :func:`platform_export` (docs/live.md).
PLATFORM_MAPPING = """\
id: $.doc
fields: $.fields.*
value: '@.value'
confidence: '@.score'
log:
  route: '@.handling'
  routes: {human: review, straight_through: auto, qa: audit}
  checked_value: '@.final'
  inclusion_probability: '$.qa_rate'
  received_at: $.processed_at
  document_type: $.type
  source: $.channel
"""
