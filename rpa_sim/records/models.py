"""Canonical records (``docs/formats.md``) as pydantic v2 models.

A KIE record is one document with a ground-truth side and a prediction side;
a VQA record is one question. In the two-file form each file holds one side,
so both sides are optional here and :mod:`rpa_sim.records.readers` checks that a joined
record has what scoring needs.

The pydantic models are the reference: what they accept is the format, and
their errors become the readers' messages. :func:`decode_fast` is the fast
path that evaluation reads through: the same records as msgspec structs (no
pydantic model per OCR word, one JSON parse), accepting exactly what the
models accept and declining (``None``) everything else, which the models then
judge (``docs/reading.md``).
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Annotated, Any, Literal

import msgspec
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from rpa_sim.records.signal_names import check_signal_names

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
    "decode_fast",
    "has_missing_confidence",
    "MISSING_CONFIDENCE",
    "instant",
]

UnitInterval = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
Seconds = Annotated[float, Field(ge=0.0, allow_inf_nan=False)]


def instant(value: Any) -> datetime | None:
    """A record's ``received_at``: an ISO 8601 date and time with its UTC offset (``+01:00`` or ``Z``).

    >>> instant("2024-03-04T09:15:00+01:00").timestamp()
    1709540100.0
    >>> instant("2024-03-04T09:15:00")
    Traceback (most recent call last):
    ...
    ValueError: '2024-03-04T09:15:00' has no UTC offset: write it as 2024-03-04T09:15:00+01:00 or 2024-03-04T08:15:00Z
    """
    if value is None or (isinstance(value, datetime) and value.tzinfo is not None):
        return value
    if not isinstance(value, str):
        raise ValueError(f"must be an ISO 8601 date and time with a UTC offset (a string such as "
                         f"2024-03-04T09:15:00+01:00), got {value!r}")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{value!r} is not an ISO 8601 date and time (such as 2024-03-04T09:15:00+01:00 or "
                         f"2024-03-04T08:15:00Z)") from None
    if parsed.tzinfo is None:
        raise ValueError(f"{value!r} has no UTC offset: write it as 2024-03-04T09:15:00+01:00 or "
                         f"2024-03-04T08:15:00Z")
    return parsed


class _Model(BaseModel):
    # Unknown fields are tolerated (docs/formats.md welcomes documented additions)
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


def _listed_box(value: Any) -> Any:
    # A predicted entity's evidence sits inside a group, which a "before" validator reads (a bare list is a
    # group): from there on pydantic validates Python objects, and strict mode takes a tuple only as a tuple.
    return tuple(value) if isinstance(value, list) else value


class Evidence(_Model):
    """An evidence box: a page index and a ``[x0, y0, x1, y1]`` box on it."""

    page: int = Field(ge=0)
    bbox: Box

    _listed = field_validator("bbox", mode="before")(_listed_box)
    _box = field_validator("bbox")(_check_box)


class Entity(_Model):
    """A ground-truth ``(key, value)`` pair."""

    key: str
    value: str


#: Why a null confidence is refused, and what allows it (a policy's ``missing_confidence``, docs/replay.md).
MISSING_CONFIDENCE = ("expected a number, got null (a null confidence is allowed only when every policy the command "
                      "is given sets missing_confidence: review, accept or a number)")


def _confidence_given(value: float | None, info: ValidationInfo) -> float | None:
    # A null confidence is read as unknown (NaN in the outcome table) unless the reader says that no policy
    # of the command maps it (context {"missing_confidence": False}): then it is the record's error.
    if value is None and (info.context or {}).get("missing_confidence") is False:
        raise ValueError(MISSING_CONFIDENCE)
    return value


def _signal_names(signals: dict[str, float | None] | None) -> dict[str, float | None] | None:
    if signals is not None:
        check_signal_names(signals)
    return signals


class PredictedEntity(Entity):
    """A predicted ``(key, value)`` pair with its confidence (null: unknown), optional grounding and evidence,
    and optional named signals.

    ``evidence`` is where the service says it read the value (a service output's field boxes), kept as
    the importers read it; evaluation compares values, not places. ``signals`` are further confidence
    signals by name (``{"agreement": 0.8}``), each in [0, 1] or null (unknown); docs/signals.md.
    """

    confidence: UnitInterval | None

    _confidence = field_validator("confidence")(_confidence_given)
    grounding: UnitInterval | None = None
    evidence: list[Evidence] | None = None
    signals: dict[str, UnitInterval | None] | None = None

    _signals = field_validator("signals")(_signal_names)


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
    #: what kind of document it is (``invoice``, ``receipt``...), for per-type thresholds and calibration
    document_type: str | None = None
    #: when the document arrived (ISO 8601 with its UTC offset), for the review operation's arrivals
    received_at: datetime | None = None
    #: how long its human review took, in seconds, for the operation's handling times
    review_seconds: Seconds | None = None

    _received_at = field_validator("received_at", mode="before")(instant)


class VQAPrediction(_Model):
    """A predicted answer with its confidence (null: unknown), optional grounding, evidence boxes and named
    signals (as :class:`PredictedEntity`'s)."""

    answer: str
    confidence: UnitInterval | None

    _confidence = field_validator("confidence")(_confidence_given)
    grounding: UnitInterval | None = None
    evidence: list[Evidence] | None = None
    signals: dict[str, UnitInterval | None] | None = None

    _signals = field_validator("signals")(_signal_names)


class VQARecord(_Model):
    """One document question (one line of a VQA ``.jsonl`` file)."""

    id: str
    question: str | None = None
    answers: list[str] | None = Field(default=None, min_length=1)
    prediction: VQAPrediction | None = None
    evidence: list[Evidence] | None = None
    question_type: str | None = None
    document: Document | None = None
    #: the kind of document the question is asked on, for per-type thresholds and calibration
    document_type: str | None = None
    #: when the question arrived (ISO 8601 with its UTC offset), for the review operation's arrivals
    received_at: datetime | None = None
    #: how long its human review took, in seconds, for the operation's handling times
    review_seconds: Seconds | None = None

    _received_at = field_validator("received_at", mode="before")(instant)


Record = KIERecord | VQARecord

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


# --------------------------------------------------------------------------- the fast path
# The same shapes as msgspec structs: decoded in one pass over the JSON text, about six times as fast
# as the models' own JSON validation (docs/reading.md). What they accept must be exactly what the models accept:
# tests/test_reading_fastpath.py checks it on generated valid and invalid records. Unknown fields
# are refused here (the models ignore them) so that whatever they hold, nesting too deep for the
# models' parser included, is judged by the models. msgspec refuses NaN, infinities and numbers
# beyond a double, which the models may accept or reject with their own message.

_FastUnit = Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]
_FastPositive = Annotated[float, msgspec.Meta(gt=0.0)]
_FastSeconds = Annotated[float, msgspec.Meta(ge=0.0)]


class _Fast(msgspec.Struct, forbid_unknown_fields=True, frozen=True, gc=False):
    # gc=False: records hold no reference cycles, and untracked objects keep collections short.
    # Subclasses repeat frozen=True, which msgspec inherits anyway, because type checkers do not.
    pass


def _fast_instant(record: Any) -> None:
    # the models' own parser, so that both accept the same texts and give the same instant
    if record.received_at is not None:
        msgspec.structs.force_setattr(record, "received_at", instant(record.received_at))


def _fast_box(box: Box) -> None:
    # msgspec never yields an infinite or NaN float from JSON, so only the order is left to check
    if box[2] < box[0] or box[3] < box[1]:
        raise ValueError("a box with x1 < x0 or y1 < y0")


class _FastWord(_Fast, frozen=True):
    text: str
    bbox: Box
    segment: int | str | None = None


class _FastPage(_Fast, frozen=True):
    width: _FastPositive
    height: _FastPositive
    words: list[_FastWord] = []

    def __post_init__(self) -> None:
        # the words' boxes checked here in one loop: a check per word (its own __post_init__) cost more than
        # decoding the page (issue 32)
        for word in self.words:
            box = word.bbox
            if box[2] < box[0] or box[3] < box[1]:
                raise ValueError("a box with x1 < x0 or y1 < y0")


class _FastDocument(_Fast, frozen=True):
    pages: list[_FastPage] = []


class _FastEntity(_Fast, frozen=True):
    key: str
    value: str


class _FastEvidence(_Fast, frozen=True):
    page: Annotated[int, msgspec.Meta(ge=0)]
    bbox: Box

    def __post_init__(self) -> None:
        _fast_box(self.bbox)


class _FastPredictedEntity(_Fast, frozen=True):
    key: str
    value: str
    confidence: _FastUnit | None
    grounding: _FastUnit | None = None
    evidence: list[_FastEvidence] | None = None
    signals: dict[str, _FastUnit | None] | None = None

    def __post_init__(self) -> None:
        _signal_names(self.signals)


class _FastGroup(_Fast, frozen=True):
    name: str | None = None
    entities: list[_FastEntity] = []


class _FastPredictedGroup(_Fast, frozen=True):
    name: str | None = None
    entities: list[_FastPredictedEntity] = []


def _named_groups(extraction: _FastExtraction | _FastPredictedExtraction, group: type) -> None:
    # a bare list of entities is an unnamed group, as Group reads it
    if any(isinstance(item, list) for item in extraction.groups):
        groups = [group(entities=item) if isinstance(item, list) else item for item in extraction.groups]
        msgspec.structs.force_setattr(extraction, "groups", groups)


class _FastExtraction(_Fast, frozen=True):
    entities: list[_FastEntity] = []
    groups: list[list[_FastEntity] | _FastGroup] = []

    def __post_init__(self) -> None:
        _named_groups(self, _FastGroup)


class _FastPredictedExtraction(_Fast, frozen=True):
    entities: list[_FastPredictedEntity] = []
    groups: list[list[_FastPredictedEntity] | _FastPredictedGroup] = []

    def __post_init__(self) -> None:
        _named_groups(self, _FastPredictedGroup)


class _FastKIERecord(_Fast, frozen=True):
    id: str
    ground_truth: _FastExtraction | None = None
    prediction: _FastPredictedExtraction | None = None
    document: _FastDocument | None = None
    document_type: str | None = None
    received_at: str | None = None
    review_seconds: _FastSeconds | None = None

    def __post_init__(self) -> None:
        _fast_instant(self)


class _FastVQAPrediction(_Fast, frozen=True):
    answer: str
    confidence: _FastUnit | None
    grounding: _FastUnit | None = None
    evidence: list[_FastEvidence] | None = None
    signals: dict[str, _FastUnit | None] | None = None

    def __post_init__(self) -> None:
        _signal_names(self.signals)


class _FastVQARecord(_Fast, frozen=True):
    id: str
    question: str | None = None
    answers: Annotated[list[str], msgspec.Meta(min_length=1)] | None = None
    prediction: _FastVQAPrediction | None = None
    evidence: list[_FastEvidence] | None = None
    question_type: str | None = None
    document: _FastDocument | None = None
    document_type: str | None = None
    received_at: str | None = None
    review_seconds: _FastSeconds | None = None

    def __post_init__(self) -> None:
        _fast_instant(self)


_FAST_DECODERS: dict[str, msgspec.json.Decoder[Any]] = {"kie": msgspec.json.Decoder(_FastKIERecord),
                                                     "vqa": msgspec.json.Decoder(_FastVQARecord)}


def has_missing_confidence(record: Any) -> bool:
    """Whether a record (a model or a fast-path struct) has a prediction with a null confidence.

    Examples
    --------
    >>> has_missing_confidence(decode_fast("vqa", '{"id": "q", "prediction": {"answer": "1", "confidence": null}}'))
    True
    """
    prediction = getattr(record, "prediction", None)
    if prediction is None:
        return False
    if isinstance(record, (VQARecord, _FastVQARecord)):
        return prediction.confidence is None
    return any(entity.confidence is None for entity in prediction.entities) or any(
        entity.confidence is None for group in prediction.groups for entity in group.entities)


def decode_fast(task: Literal["kie", "vqa"], text: str | bytes) -> Any:
    """One JSON line as a record of ``task``, or ``None`` when the fast path declines it.

    The record has the attributes of :class:`KIERecord` or :class:`VQARecord`
    (groups always as objects with ``name`` and ``entities``), which is all
    evaluation reads, but is a lighter msgspec struct. ``None`` means: ask the
    pydantic model, which tells whether the line is valid and why not. It is
    returned for every line the model rejects, and for valid lines the fast
    path does not read: unknown fields, ``NaN`` or infinities, numbers
    beyond a double, escaped lone surrogates.

    Parameters
    ----------
    task : {"kie", "vqa"}
        The record type.
    text : str or bytes
        One JSON object.

    Returns
    -------
    record or None

    Examples
    --------
    >>> record = decode_fast("kie", '{"id": "r1", "ground_truth": {"groups": [[{"key": "k", "value": "v"}]]}}')
    >>> record.id, record.ground_truth.groups[0].name, record.ground_truth.groups[0].entities[0].value
    ('r1', None, 'v')
    >>> decode_fast("vqa", '{"id": "q1", "answers": []}') is None  # the model says why
    True
    """
    try:
        return _FAST_DECODERS[task].decode(text)
    except (msgspec.MsgspecError, RecursionError, UnicodeDecodeError):  # the last for bytes that are not UTF-8
        return None
