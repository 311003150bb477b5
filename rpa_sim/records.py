"""Canonical records (``../shared/spec/FORMATS.md``) as pydantic v2 models.

A KIE record is one document with a ground-truth side and a prediction side;
a VQA record is one question. In the two-file form each file holds one side,
so both sides are optional here and :mod:`rpa_sim.readers` checks that a joined
record has what scoring needs.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = [
    "Box",
    "Word",
    "Page",
    "Document",
    "Entity",
    "PredictedEntity",
    "Group",
    "PredictedGroup",
    "Extraction",
    "PredictedExtraction",
    "KIERecord",
    "Evidence",
    "VQAPrediction",
    "VQARecord",
    "Record",
    "task_of",
]

UnitInterval = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]


class _Model(BaseModel):
    # Unknown fields are tolerated (FORMATS.md welcomes documented additions)
    # but never kept, so that outputs stay canonical.
    model_config = ConfigDict(extra="ignore", frozen=True)


def _check_box(box: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
    x0, y0, x1, y1 = box
    if not all(math.isfinite(v) for v in box):
        raise ValueError(f"{list(box)} has a non-finite coordinate")
    if x1 < x0:
        raise ValueError(f"{list(box)} has x1 < x0")
    if y1 < y0:
        raise ValueError(f"{list(box)} has y1 < y0")
    return box


Box = tuple[float, float, float, float]


class Word(_Model):
    """An OCR word: its text, its ``[x0, y0, x1, y1]`` box in page pixels, an optional segment."""

    text: str
    bbox: Box
    segment: int | str | None = None

    _box = field_validator("bbox")(_check_box)


class Page(_Model):
    """One page: its size in pixels and its OCR words in reading order."""

    width: float = Field(gt=0, allow_inf_nan=False)
    height: float = Field(gt=0, allow_inf_nan=False)
    words: list[Word] = Field(default_factory=list)


class Document(_Model):
    """The OCR of a document, used to locate (ground) answers and values on the page."""

    pages: list[Page] = Field(default_factory=list)


class Entity(_Model):
    """A ground-truth ``(key, value)`` pair."""

    key: str
    value: str


class PredictedEntity(Entity):
    """A predicted ``(key, value)`` pair with its confidence and optional grounding."""

    confidence: UnitInterval
    grounding: UnitInterval | None = None


def _group_shape(value: Any) -> Any:
    # A group is either a bare list of entities or {"name": ..., "entities": [...]}.
    if isinstance(value, list):
        return {"entities": value}
    return value


class Group(_Model):
    """A ground-truth group; ``name`` is its category when given explicitly."""

    name: str | None = None
    entities: list[Entity] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _accept_bare_list(cls, value: Any) -> Any:
        return _group_shape(value)


class PredictedGroup(_Model):
    """A predicted group; ``name`` is its category when given explicitly."""

    name: str | None = None
    entities: list[PredictedEntity] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _accept_bare_list(cls, value: Any) -> Any:
        return _group_shape(value)


class Extraction(_Model):
    """The ground-truth side of a KIE document: non-grouped entities and groups."""

    entities: list[Entity] = Field(default_factory=list)
    groups: list[Group] = Field(default_factory=list)


class PredictedExtraction(_Model):
    """The predicted side of a KIE document."""

    entities: list[PredictedEntity] = Field(default_factory=list)
    groups: list[PredictedGroup] = Field(default_factory=list)


class KIERecord(_Model):
    """One KIE document (one line of a KIE ``.jsonl`` file)."""

    id: str
    ground_truth: Extraction | None = None
    prediction: PredictedExtraction | None = None
    document: Document | None = None


class Evidence(_Model):
    """An evidence box: a page index and a ``[x0, y0, x1, y1]`` box on it."""

    page: int = Field(ge=0)
    bbox: Box

    _box = field_validator("bbox")(_check_box)


class VQAPrediction(_Model):
    """A predicted answer with its confidence, optional grounding and evidence boxes."""

    answer: str
    confidence: UnitInterval
    grounding: UnitInterval | None = None
    evidence: list[Evidence] | None = None


class VQARecord(_Model):
    """One document question (one line of a VQA ``.jsonl`` file)."""

    id: str
    question: str | None = None
    answers: list[str] | None = Field(default=None, min_length=1)
    prediction: VQAPrediction | None = None
    evidence: list[Evidence] | None = None
    question_type: str | None = None
    document: Document | None = None


Record = Union[KIERecord, VQARecord]

_VQA_FIELDS = frozenset({"question", "answers", "question_type", "evidence"})
_KIE_FIELDS = frozenset({"ground_truth"})


def task_of(raw: dict[str, Any]) -> Literal["kie", "vqa"] | None:
    """Tell a raw record's task from its fields, or ``None`` when it cannot be told.

    Examples
    --------
    >>> task_of({"id": "q", "answers": ["12"]})
    'vqa'
    >>> task_of({"id": "r", "prediction": {"entities": []}})
    'kie'
    >>> task_of({"id": "x"}) is None
    True
    """
    if _VQA_FIELDS & raw.keys():
        return "vqa"
    if _KIE_FIELDS & raw.keys():
        return "kie"
    prediction = raw.get("prediction")
    if isinstance(prediction, dict):
        if "answer" in prediction:
            return "vqa"
        if "entities" in prediction or "groups" in prediction:
            return "kie"
    return None
