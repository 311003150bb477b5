"""A scenario's ``stream:`` section: days of production logs drawn from its data, under named changes (docs/live.md).

Every setting has a default but the changes, which say what happens from which
day on to which segment. Validation says, with the file and line, what is
wrong: shares that do not add up to 1, a change on a source the stream does not
draw, two mixes of one column on one day.

Examples
--------
>>> spec = StreamSpec.model_validate({"sources": {"email": 0.7, "scan": 0.3}, "changes": [
...     {"kind": "new_template", "from_day": 20, "segment": {"source": "email"}, "auto_error": 0.08},
...     {"kind": "mix", "from_day": 30, "sources": {"email": 0.4, "scan": 0.6}}]})
>>> spec.days, spec.start.isoformat(), [change.kind for change in spec.changes]
(90, '2024-01-01', ['new_template', 'mix'])
>>> StreamSpec.model_validate({"sources": {"email": 0.7, "scan": 0.2}})
Traceback (most recent call last):
...
pydantic_core._pydantic_core.ValidationError: 1 validation error for StreamSpec
sources
  Value error, shares must add up to 1, got 0.9 (email 0.7, scan 0.2) ...
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Mapping
from typing import Annotated, Literal

from pydantic import AfterValidator, BeforeValidator, Field, ValidationInfo, field_validator, model_validator

from rpa_sim.common import limits
from rpa_sim.common.validation import StrictModel
from rpa_sim.operate.monitoring.audit_plan import AuditPlan

__all__ = ["CHANGE_KINDS", "DEFAULT_START", "MOST_VALUES", "STREAM_COLUMNS", "Shares", "StreamWatch", "Mix",
           "NewTemplate", "DegradedScans", "ModelUpdate", "AnyChange", "Change", "StreamSpec", "shares_text"]

#: The kinds of change, in the order docs/live.md describes them.
CHANGE_KINDS = ("mix", "new_template", "degraded_scans", "model_update")
#: The first day of a stream unless the section says: a fixed date, so that outputs are the same every day.
DEFAULT_START = datetime.date(2024, 1, 1)
#: The columns a stream draws per document, which changes name and watch segments by.
STREAM_COLUMNS = ("document_type", "source")
#: The most values a stream draws for a column: each is a segment that watch tracks every day.
MOST_VALUES = 1_000
#: How far shares may add up from 1 (rounding in a hand-written YAML file).
_SUM_TOLERANCE = 1e-9

_Open = Annotated[float, Field(gt=0.0, lt=1.0, allow_inf_nan=False)]
_Share = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
_Name = Annotated[str, Field(min_length=1)]
Shares = dict[_Name, _Share]
_Day = Annotated[int, BeforeValidator(limits.size_check("days", most=limits.MOST_MONITORED_DAYS,
                                                        limited_by="a fixed ceiling: every day draws its documents")),
                 Field(ge=1)]


def shares_text(shares: Mapping[str, float]) -> str:
    """Shares as people read them: ``email 0.7, scan 0.3``.

    >>> shares_text({"email": 0.7, "scan": 0.3})
    'email 0.7, scan 0.3'
    """
    return ", ".join(f"{name} {share:g}" for name, share in shares.items())


def _checked_shares(shares: dict[str, float]) -> dict[str, float]:
    if len(shares) > MOST_VALUES:
        raise ValueError(f"at most {MOST_VALUES:,} values (each is a segment watch tracks), got {len(shares):,}")
    total = math.fsum(shares.values())
    if shares and abs(total - 1.0) > _SUM_TOLERANCE:
        raise ValueError(f"shares must add up to 1, got {total:g} ({shares_text(shares)})")
    return shares


class StreamWatch(StrictModel):
    """How ``rpa-sim run`` watches the stream: ``rpa-sim watch``'s options (docs/live.md).

    ``max_error`` is the scenario's ``certify: max_error`` unless given; ``segments`` the
    columns the stream draws (``document_type`` when it has types, ``source`` when it has
    sources) unless given.
    """

    max_error: _Open | None = None
    delta: _Open = 0.05
    segments: list[Literal["document_type", "source", "key"]] | None = Field(default=None, min_length=1)
    horizon_days: Annotated[int, Field(ge=1, le=limits.MOST_MONITORED_DAYS)] = 365

    @field_validator("segments")
    @classmethod
    def _distinct(cls, segments: list[str] | None) -> list[str] | None:
        if segments is not None and len(set(segments)) < len(segments):
            raise ValueError(f"a column is named twice in {segments}")
        return segments


class _Change(StrictModel):
    """What every change has: the day of the stream it starts on (day 1 is ``start``)."""

    from_day: _Day


class _SegmentChange(_Change):
    """A change to one segment: the documents whose ``document_type`` and ``source`` are those named."""

    segment: dict[Literal["document_type", "source"], _Name] = Field(min_length=1)


class Mix(_Change):
    """``mix``: from ``from_day`` on, the shares of ``sources`` or ``document_types`` (or both) are these."""

    kind: Literal["mix"]
    sources: Shares | None = None
    document_types: Shares | None = None

    @model_validator(mode="after")
    def _some(self) -> Mix:
        if self.sources is None and self.document_types is None:
            raise ValueError("a mix gives new sources or document_types shares")
        for shares in (self.sources, self.document_types):
            if shares is not None:
                _checked_shares(shares)
        return self


class NewTemplate(_SegmentChange):
    """``new_template``: the segment's auto-accepted error rate becomes ``auto_error``; its confidences stay."""

    kind: Literal["new_template"]
    auto_error: _Open


class DegradedScans(_SegmentChange):
    """``degraded_scans``: the segment's confidences are multiplied by ``confidence_factor``, and its
    auto-accepted error rate becomes ``auto_error`` (at the lowered confidences)."""

    kind: Literal["degraded_scans"]
    auto_error: _Open
    confidence_factor: _Open


class ModelUpdate(_SegmentChange):
    """``model_update``: the segment's confidences move by ``confidence_shift`` on the logit scale (positive:
    more confident); what the model gets right or wrong stays."""

    kind: Literal["model_update"]
    confidence_shift: Annotated[float, Field(ge=-10.0, le=10.0, allow_inf_nan=False)]

    @field_validator("confidence_shift")
    @classmethod
    def _moves(cls, shift: float) -> float:
        if shift == 0:
            raise ValueError("a model update moves the confidences: give a shift other than 0")
        return shift


AnyChange = Mix | NewTemplate | DegradedScans | ModelUpdate


def _in_stream(change: AnyChange, info: ValidationInfo) -> AnyChange:
    """A change names values the stream draws: a mix its shares' values, a segment its source (and its type
    when the section gives types; the records' own types are checked once they are read)."""
    sources, types = info.data.get("sources"), info.data.get("document_types")
    if sources is None or types is None:  # they were refused themselves
        return change
    if isinstance(change, Mix):
        for column, known, shares in (("sources", sources, change.sources),
                                      ("document_types", types, change.document_types)):
            if shares is None:
                continue
            if column == "sources" and not known:
                raise ValueError("a mix of sources needs the stream's sources")
            unknown = [name for name in shares if known and name not in known]
            if unknown:
                raise ValueError(f"{column}: {', '.join(map(repr, unknown))} not among the stream's {column} "
                                 f"({', '.join(known)}); a value that appears later starts at share 0")
        return change
    for column, value in change.segment.items():
        known = sources if column == "source" else types
        if value not in known and (column == "source" or known):
            raise ValueError(f"segment: {column} {value!r} is not among the stream's "
                             f"{'sources' if column == 'source' else 'document_types'} ({', '.join(known) or 'none'})")
    return change


Change = Annotated[AnyChange, Field(discriminator="kind"), AfterValidator(_in_stream)]


class StreamSpec(StrictModel):
    """The ``stream:`` section of a scenario (docs/live.md, "Streams to study it on").

    Attributes
    ----------
    days : int, default=90
        Days ``rpa-sim run`` draws and watches (``replay SCENARIO --days N`` draws ``N``).
    start : date, default=2024-01-01
        The first day.
    documents_per_day : int, default=200
        Documents drawn a day, with replacement, from the data's documents (VQA: its questions)
        that have a prediction.
    sources : dict of str to float
        Each document's ``source`` (a channel, a sender) is drawn with these shares; none: the log
        has no source.
    document_types : dict of str to float
        The shares of the document types. Records that name their types: the types drawn (each
        named type must be the records'; by default each document is as likely as any other).
        Records without types: a type drawn per document, a label (the documents are alike).
    policy : str, optional
        The policy run in production, by name among the scenario's; by default the decided one.
    threshold : float, optional
        Its ``τ``; by default the decided one (with ``policy``, required).
    audit_rate, audit_plan : optional
        The audit; by default the scenario's ``monitoring:`` audit, else the policy's ``audit``
        share, else 0.05.
    seed : int, default=0
        Day ``d`` is drawn with ``numpy.random.default_rng([seed, d])``: a stream of ``N`` days
        starts with the days of any shorter one.
    watch : StreamWatch
    changes : list of Change
        Applied in the order of their ``from_day``, then as listed.
    """

    days: _Day = 90
    start: datetime.date = DEFAULT_START
    documents_per_day: Annotated[int, BeforeValidator(limits.size_check(
        "documents", most=limits.MOST_STREAM_DOCUMENTS, limited_by="a fixed ceiling: a day is held in memory",
        bytes_each=limits.STREAM_BYTES_PER_DOCUMENT)), Field(ge=1)] = 200
    sources: Shares = {}
    document_types: Shares = {}
    policy: _Name | None = None
    threshold: Annotated[float, Field(ge=0.0, allow_inf_nan=False)] | None = None
    audit_rate: Annotated[float, Field(gt=0.0, le=1.0, allow_inf_nan=False)] | None = None
    audit_plan: AuditPlan | None = None
    seed: Annotated[int, Field(ge=0)] = 0
    watch: StreamWatch = StreamWatch()
    changes: list[Change] = []

    @field_validator("sources", "document_types")
    @classmethod
    def _add_up(cls, shares: dict[str, float]) -> dict[str, float]:
        return _checked_shares(shares)

    @field_validator("changes")
    @classmethod
    def _one_mix_a_day(cls, changes: list[AnyChange]) -> list[AnyChange]:
        mixed: set[tuple[int, str]] = set()
        for index, change in enumerate(changes):
            if not isinstance(change, Mix):
                continue
            for column in ("sources", "document_types"):
                if getattr(change, column) is None:
                    continue
                if (change.from_day, column) in mixed:
                    raise ValueError(f"changes[{index}] is a second mix of {column} on day {change.from_day}")
                mixed.add((change.from_day, column))
        return changes

    @model_validator(mode="after")
    def _consistent(self) -> StreamSpec:
        if self.audit_rate is not None and self.audit_plan is not None:
            raise ValueError("give audit_rate or audit_plan, not both")
        if self.policy is not None and self.threshold is None:
            raise ValueError("a stream's policy goes with its threshold")
        return self

    @property
    def ordered_changes(self) -> list[tuple[int, AnyChange]]:
        """The changes with their position in the section, in the order they apply."""
        return sorted(enumerate(self.changes), key=lambda item: (item[1].from_day, item[0]))
