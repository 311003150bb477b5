"""Write canonical JSONL records (``docs/formats.md``), atomically and byte for byte the same.

Examples
--------
>>> import tempfile
>>> from rpa_sim.records.models import VQAPrediction, VQARecord
>>> tmp = tempfile.TemporaryDirectory()
>>> path = Path(tmp.name) / "questions.jsonl"
>>> write_records([VQARecord(id="q-1", answers=["12"], prediction=VQAPrediction(answer="12", confidence=None))], path)
1
>>> print(path.read_text(), end="")
{"id":"q-1","answers":["12"],"prediction":{"answer":"12","confidence":null}}
>>> tmp.cleanup()
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rpa_sim.common.files import atomic_output
from rpa_sim.records.models import Record

__all__ = ["write_records"]


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
    """Write unnamed groups as bare lists, the form docs/formats.md shows.

    >>> _bare_groups({"prediction": {"groups": [{"entities": []}, {"name": "menu", "entities": []}]}})
    {'prediction': {'groups': [[], {'name': 'menu', 'entities': []}]}}
    """
    for side in ("ground_truth", "prediction"):
        extraction = data.get(side)
        if isinstance(extraction, dict) and "groups" in extraction:
            extraction["groups"] = [group["entities"] if group.keys() == {"entities"} else group
                                    for group in extraction["groups"]]
    return data
