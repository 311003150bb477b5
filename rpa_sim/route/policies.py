"""Review policies: which predictions a person reviews, as YAML files validated by pydantic.

A policy routes an item to review when its ``review_if`` condition holds. The
condition combines threshold tests on confidence, grounding, a named signal
(``signals: {agreement: sweep}``, or the ``fused`` signal) and a document's
aggregate confidence with ``any_of`` / ``all_of``; exactly one threshold in it
is the swept knob ``τ`` (written ``sweep``); every other setting is fixed.
An optional ``reject_if`` condition (fixed thresholds only) takes items out of
the automated flow altogether; it is checked first, so reject wins over review.
Around the conditions, a policy may escalate to whole documents (and let the
reviewer add what the model missed), audit a share of what it auto-accepts,
and cap the reviews with a budget.

Compiling a policy against an outcome table gives each item an *entry
threshold* ``e``: the item is routed exactly when ``τ > e`` (``-inf`` =
always routed, ``+inf`` = never, as for a rejected item). Every curve over
all thresholds then comes from sorting the entries once (see :mod:`rpa_sim.route.sweep`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal, cast

import numpy as np
from pydantic import Field, model_validator

from rpa_sim.bundled import bundled_files, resolve
from rpa_sim.common.errors import InputError
from rpa_sim.common.validation import StrictModel
from rpa_sim.common.yamlfile import read_yaml, validated

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

__all__ = [
    "SWEEP",
    "Threshold",
    "TypeThreshold",
    "DocumentConfidence",
    "Condition",
    "Budget",
    "Policy",
    "CompiledPolicy",
    "bundled_policies",
    "load_policy",
    "compile_policy",
]

SWEEP = "sweep"
_Unit = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]


_Fixed = Annotated[float, Field(ge=0.0)]


class TypeThreshold(StrictModel):
    """The thresholds of one document type: ``below`` for its items, ``fields`` for its items of some fields.

    A number is short for ``{below: number}``; without ``below`` the type's other
    items keep the policy-wide thresholds.
    """

    below: _Fixed | None = None
    fields: dict[str, _Fixed] = {}

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return {"below": value}
        return value


class Threshold(StrictModel):
    """``score < below`` routes an item; ``below: sweep`` makes it the swept knob.

    ``fields`` gives fixed thresholds for some keys (KIE) or question types
    (VQA); items of other fields use ``below``. ``document_types`` gives fixed
    thresholds by the records' ``document_type`` (a number, or ``{below, fields}``
    for per-field thresholds within the type). The most specific setting wins:
    a type's field, then the type, then the field, then ``below``. A fixed
    threshold above 1 (``.inf`` in YAML) reviews every item it covers.
    ``missing`` says what an item without the score (grounding unknown) does:
    ``review`` (the default: what cannot be checked goes to a person) or ``accept``;
    for confidence tests the policy's ``missing_confidence`` decides instead.
    """

    below: _Unit | Literal["sweep"]
    fields: dict[str, _Fixed] = {}
    document_types: dict[str, TypeThreshold] = {}
    missing: Literal["review", "accept"] = "review"

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        # `confidence: sweep` and `confidence: 0.8` are short for `{below: ...}`
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            return {"below": value}
        return value

    @property
    def swept(self) -> bool:
        return self.below == SWEEP


class DocumentConfidence(StrictModel):
    """``aggregate(confidences of a document) < below`` sends the whole document; ``below: sweep`` sweeps it.

    ``aggregate`` is ``min`` (exactly ``confidence: sweep`` with ``escalate: document``),
    ``mean`` or ``geometric_mean`` over the confidences of the document's predictions.
    """

    aggregate: Literal["min", "mean", "geometric_mean"]
    below: _Unit | Literal["sweep"]

    @property
    def swept(self) -> bool:
        return self.below == SWEEP


_CONDITIONS = ("confidence", "grounding", "signals", "document_confidence", "any_of", "all_of")
#: The score of a ``signals`` test on the fused signal (docs/signals.md).
FUSED = "fused"


class Condition(StrictModel):
    """One of: ``confidence``, ``grounding`` (a :class:`Threshold`), ``signals`` (one named signal and its
    :class:`Threshold`), ``document_confidence`` (a :class:`DocumentConfidence`), ``any_of`` or ``all_of``
    (conditions)."""

    confidence: Threshold | None = None
    grounding: Threshold | None = None
    signals: dict[str, Threshold] | None = None
    document_confidence: DocumentConfidence | None = None
    any_of: list[Condition] | None = Field(default=None, min_length=1)
    all_of: list[Condition] | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _exactly_one(self) -> Condition:
        given = [name for name in _CONDITIONS if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(f"a condition has exactly one of {', '.join(_CONDITIONS)}; got {given or 'none'}")
        if self.signals is not None:
            if len(self.signals) != 1:
                raise ValueError(f"a signals test names exactly one signal (combine several with any_of or "
                                 f"all_of); got {list(self.signals) or 'none'}")
            if "confidence" in self.signals:
                raise ValueError("the confidence is tested with `confidence:`, not as a signal")
        return self

    @property
    def signal(self) -> tuple[str, Threshold] | None:
        """The named signal this condition tests and its threshold (None unless it is a ``signals`` test)."""
        return None if self.signals is None else next(iter(self.signals.items()))

    def own_test(self) -> Threshold | DocumentConfidence | None:
        """This condition's own threshold test (None for a combinator)."""
        signal = self.signal
        return self.confidence or self.grounding or self.document_confidence or (signal and signal[1])

    def _tests(self) -> list[Threshold | DocumentConfidence]:
        """The threshold tests of this condition and of every condition within it."""
        test = self.own_test()
        if test is not None:
            return [test]
        return [mine for child in self.any_of or self.all_of or () for mine in child._tests()]

    def signal_names(self) -> list[str]:
        """The named signals this condition and every condition within it test, in order, each once."""
        if self.signals is not None:
            return list(self.signals)
        return list(dict.fromkeys(name for child in self.any_of or self.all_of or ()
                                  for name in child.signal_names()))

    def sweeps(self) -> int:
        """How many thresholds of this condition are swept."""
        return sum(test.swept for test in self._tests())

    def uses_documents(self) -> bool:
        """Whether a ``document_confidence`` test is part of the condition: it then acts on whole documents."""
        return any(isinstance(test, DocumentConfidence) for test in self._tests())

    def swept_score(self) -> str:
        """``"confidence"``, ``"grounding"``, ``"document_confidence"`` or ``"signals.NAME"``: what the swept knob
        thresholds."""
        for name in ("confidence", "grounding", "document_confidence"):
            test = getattr(self, name)
            if test is not None and test.swept:
                return name
        signal = self.signal
        if signal is not None and signal[1].swept:
            return f"signals.{signal[0]}"
        for child in self.any_of or self.all_of or ():
            if child.sweeps():
                return child.swept_score()
        raise ValueError("no swept threshold")


class Budget(StrictModel):
    """At most ``share`` of the items, or ``count`` items, are reviewed: the least confident first."""

    share: Annotated[float, Field(gt=0.0, le=1.0)] | None = None
    count: Annotated[int, Field(ge=0)] | None = None

    @model_validator(mode="after")
    def _one(self) -> Budget:
        if (self.share is None) == (self.count is None):
            raise ValueError("a budget has exactly one of share or count")
        return self

    def limit(self, items: int) -> int:
        """The number of reviews allowed among ``items`` predictions."""
        if self.count is not None:
            return self.count
        # exactly one of share and count is set (validated above)
        return int(np.floor(cast(float, self.share) * items + 1e-9))


class Policy(StrictModel):
    """A review policy (one YAML file of ``policies/``).

    ``reject_if`` (optional, fixed thresholds) takes items out of the automated
    flow: neither reviewed nor accepted. ``rejected_quality`` says what the
    output holds for them: ``correct`` (re-keyed from scratch, the default) or
    ``as_predicted`` (the prediction stands, e.g. sent back to the sender).

    ``missing_confidence`` says what a prediction without a confidence (a
    record's ``confidence: null``) does: ``review`` (every confidence test of
    ``review_if`` holds for it, so it goes to a person), ``accept`` (no
    confidence test holds for it) or a number (it is taken as its confidence).
    Without it, a null confidence is an error. Tests on a missing score never
    reject (in ``reject_if``); a document aggregate runs over the known confidences.
    """

    name: str = Field(min_length=1)
    description: str = ""
    review_if: Condition
    reject_if: Condition | None = None
    rejected_quality: Literal["correct", "as_predicted"] = "correct"
    missing_confidence: Literal["review", "accept"] | _Unit | None = None
    escalate: Literal["none", "document"] = "none"
    fix_additions: bool = False
    audit: _Unit = 0.0
    budget: Budget | None = None

    @model_validator(mode="after")
    def _one_knob(self) -> Policy:
        knobs = self.review_if.sweeps()
        if self.reject_if is not None and self.reject_if.sweeps():
            raise ValueError("reject_if takes fixed thresholds only (numbers): the swept knob `sweep` is in review_if")
        if knobs != 1:
            raise ValueError(f"a policy sweeps exactly one threshold (written `sweep`), this one has {knobs}")
        if self.fix_additions and not self.reviews_documents:
            raise ValueError("fix_additions needs escalate: document or a document_confidence rule "
                             "(only a whole-document review sees what is missing)")
        return self

    @property
    def reviews_documents(self) -> bool:
        """Whether review opens whole documents: ``escalate: document``, or ``review_if`` uses
        ``document_confidence``."""
        return self.escalate == "document" or self.review_if.uses_documents()

    @property
    def rejects_documents(self) -> bool:
        """Whether one rejected item rejects its whole document (as :attr:`reviews_documents`, for ``reject_if``)."""
        return self.reject_if is not None and (self.escalate == "document" or self.reject_if.uses_documents())

    @property
    def knob(self) -> str:
        """What the swept threshold applies to: ``"confidence"``, ``"grounding"``, ``"document_confidence"`` or a
        signal, ``"signals.NAME"``."""
        return self.review_if.swept_score()

    def signal_names(self) -> list[str]:
        """The named signals the policy's conditions test (``fused`` included), in order, each once."""
        conditions = (self.review_if, self.reject_if)
        return list(dict.fromkeys(name for condition in conditions if condition is not None
                                  for name in condition.signal_names()))


Condition.model_rebuild()


def bundled_policies() -> dict[str, Traversable]:
    """The policy files bundled with rpa-sim (``policies/``), by name (the file name without ``.yaml``)."""
    return bundled_files("policy")


def policy_from_mapping(data: Any, *, source: str) -> Policy:
    """Validate a policy given as a mapping (from YAML, or inline in a scenario)."""
    return validated(Policy, data, source=source)


def load_policy(name_or_path: str | os.PathLike[str], *, relative_to: os.PathLike[str] | None = None) -> Policy:
    """A policy from a YAML file, or a bundled policy by name (the rule is :func:`rpa_sim.bundled.resolve`'s).

    Parameters
    ----------
    name_or_path : str or PathLike
    relative_to : PathLike, optional
        The folder a relative path starts from (a scenario's folder), instead of the current one.

    Examples
    --------
    >>> load_policy("confidence").knob
    'confidence'
    """
    file = resolve("policy", name_or_path, relative_to=relative_to)
    return policy_from_mapping(read_yaml(file), source=str(file))


class CompiledPolicy:
    """A policy applied to one outcome table: per-item entry thresholds and the fixed settings.

    Attributes
    ----------
    policy : Policy
    entry : ndarray of float64
        Item ``i`` is routed to review exactly when ``τ > entry[i]`` (``+inf`` for a rejected item).
    units : ndarray of int or None
        The review unit of each item when review opens whole documents, else None.
    rejected : ndarray of bool
        The items ``reject_if`` takes out of the flow, at every threshold (all False without it).
    """

    def __init__(self, policy: Policy, entry: np.ndarray, units: np.ndarray | None,
                 rejected: np.ndarray | None = None) -> None:
        self.policy = policy
        self.entry = entry
        self.units = units
        self.rejected = np.zeros(len(entry), dtype=bool) if rejected is None else rejected

    def routed(self, threshold: float) -> np.ndarray:
        """The items the policy routes at ``threshold`` (before audit and budget; never a rejected item)."""
        return self.entry < threshold


class _Items:
    """What conditions test, per item: the scores, the field codes and the documents."""

    def __init__(self, *, confidence: np.ndarray, grounding: np.ndarray, signals: Mapping[str, np.ndarray],
                 fields: np.ndarray, field_names: tuple[str, ...], units: np.ndarray | None,
                 document_types: np.ndarray | None, document_type_names: tuple[str, ...],
                 missing_confidence: str | float | None) -> None:
        if isinstance(missing_confidence, float):
            confidence = np.where(np.isnan(confidence), missing_confidence, confidence)
        self.scores = {"confidence": confidence, "grounding": grounding}
        self.signals = signals
        #: what an unknown confidence does in a review test: "review" (holds) or "accept" (does not)
        self.missing_confidence = missing_confidence
        self.fields = fields
        self.field_names = field_names
        self.units = units
        self.document_types = document_types
        self.document_type_names = document_type_names

    def of_field(self, name: str) -> np.ndarray:
        return np.equal(self.fields, self.field_names.index(name))

    def of_type(self, name: str) -> np.ndarray:
        # compile_policy refuses a document type when the items have none, so they have types here
        return np.equal(cast(np.ndarray, self.document_types), self.document_type_names.index(name))


def _threshold_entry(test: Threshold, scores: np.ndarray, items: _Items, unknown_holds: bool) -> np.ndarray:
    entry = scores.astype(np.float64, copy=True) if test.swept else np.where(scores < test.below, -np.inf, np.inf)

    def fixed(mine: np.ndarray, below: float) -> None:
        entry[mine] = np.where(scores[mine] < below, -np.inf, np.inf)

    # least specific first, so that the most specific setting is the one left
    for name, below in test.fields.items():
        fixed(items.of_field(name), below)
    for type_name, by_type in test.document_types.items():
        of_type = items.of_type(type_name)
        if by_type.below is not None:
            fixed(of_type, by_type.below)
        for name, below in by_type.fields.items():
            fixed(of_type & items.of_field(name), below)
    entry[np.isnan(scores)] = -np.inf if unknown_holds else np.inf
    return entry


def _document_aggregate(confidence: np.ndarray, units: np.ndarray,
                        aggregate: str) -> tuple[np.ndarray, np.ndarray]:
    """Per item, the ``aggregate`` of the known confidences of its document's items (NaN: none known),
    and whether its document has an unknown confidence."""
    unknown = np.isnan(confidence)
    known = units[~unknown]
    documents = int(units.max(initial=-1)) + 1
    confidence = confidence[~unknown]
    count = np.bincount(known, minlength=documents)
    if aggregate == "min":
        per_document = np.full(documents, np.inf)
        np.minimum.at(per_document, known, confidence)
        per_document[count == 0] = np.nan
    else:
        values = confidence
        if aggregate == "geometric_mean":
            with np.errstate(divide="ignore"):
                values = np.log(confidence)  # log 0 = -inf: a zero confidence makes the mean 0
        with np.errstate(invalid="ignore", divide="ignore"):
            per_document = np.bincount(known, weights=values, minlength=documents) / count
        if aggregate == "geometric_mean":
            per_document = np.exp(per_document)
    return per_document[units], np.bincount(units[unknown], minlength=documents)[units] > 0


def _entry(condition: Condition, items: _Items, policy: Policy, *, rejecting: bool = False) -> np.ndarray:
    # a test on an unknown score holds as its setting says when it routes to review; it never rejects
    review_unknown = {"confidence": items.missing_confidence == "review",
                      "grounding": condition.grounding is not None and condition.grounding.missing == "review"}
    for score in ("confidence", "grounding"):
        test = getattr(condition, score)
        if test is not None:
            return _threshold_entry(test, items.scores[score], items, review_unknown[score] and not rejecting)
    signal = condition.signal
    if signal is not None:
        name, threshold = signal
        return _threshold_entry(threshold, items.signals[name], items, threshold.missing == "review" and not rejecting)
    if condition.document_confidence is not None:
        units = items.units
        if units is None:
            raise InputError(f"policy {policy.name!r} has a document_confidence rule, but these items have "
                             "no documents (each question is its own unit)")
        test = condition.document_confidence
        aggregate, has_unknown = _document_aggregate(items.scores["confidence"], units, test.aggregate)
        entry = aggregate if test.swept else np.where(aggregate < test.below, -np.inf, np.inf)
        entry = np.where(np.isnan(aggregate), np.inf, entry)  # no known confidence: the test does not hold
        if review_unknown["confidence"] and not rejecting:
            entry[has_unknown] = -np.inf
        return entry
    children = [_entry(child, items, policy, rejecting=rejecting)
                for child in condition.any_of or condition.all_of or ()]
    # any_of: routed as soon as one child is; all_of: only once every child is
    return np.minimum.reduce(children) if condition.any_of else np.maximum.reduce(children)


def _whole_documents(entry: np.ndarray, units: np.ndarray | None, policy: Policy) -> np.ndarray:
    """Every item takes its document's lowest entry: a document goes as soon as any of its items does."""
    if units is None:
        raise InputError(f"policy {policy.name!r} escalates documents, but these items have no documents")
    lowest = np.full(int(units.max(initial=-1)) + 1, np.inf)
    np.minimum.at(lowest, units, entry)
    return lowest[units]


def compile_policy(policy: Policy, *, confidence: np.ndarray, grounding: np.ndarray, fields: np.ndarray,
                   field_names: tuple[str, ...], units: np.ndarray | None = None,
                   document_types: np.ndarray | None = None, document_type_names: tuple[str, ...] = (),
                   signals: Mapping[str, np.ndarray] | None = None) -> CompiledPolicy:
    """Entry thresholds of every item under ``policy``, and the items it rejects.

    Parameters
    ----------
    policy : Policy
    confidence, grounding : ndarray of float
        Per-item scores (grounding NaN where unknown).
    fields : ndarray of int
        Per-item field code (KIE key, VQA question type), indexing ``field_names``.
    field_names : tuple of str
    units : ndarray of int, optional
        Per-item document index; needed when the policy acts on whole documents.
    document_types : ndarray of int, optional
        Per-item document type code, indexing ``document_type_names``; needed
        when the policy sets thresholds by document type.
    document_type_names : tuple of str, default=()
    signals : mapping of str to ndarray, optional
        Per-item named signals (NaN where an item lacks one), ``fused`` among them when the policy tests it:
        every signal the policy names (:meth:`Policy.signal_names`) must be carried by some item.

    Examples
    --------
    >>> policy = Policy.model_validate({"name": "p", "review_if": {"any_of": [
    ...     {"confidence": "sweep"}, {"grounding": {"below": 0.5}}]}})
    >>> compiled = compile_policy(policy, confidence=np.array([0.9, 0.4, 0.8]),
    ...     grounding=np.array([0.9, 0.9, 0.1]), fields=np.zeros(3, int), field_names=("k",))
    >>> compiled.entry.tolist()
    [0.9, 0.4, -inf]
    >>> mean = Policy.model_validate({"name": "m", "review_if": {"document_confidence": {
    ...     "aggregate": "mean", "below": "sweep"}}, "reject_if": {"confidence": 0.1}})
    >>> compiled = compile_policy(mean, confidence=np.array([0.9, 0.5, 0.05]), grounding=np.full(3, np.nan),
    ...     fields=np.zeros(3, int), field_names=("k",), units=np.array([0, 0, 1]))
    >>> compiled.entry.tolist(), compiled.rejected.tolist()
    ([0.7, 0.7, inf], [False, False, True])
    """
    for condition in (policy.review_if, policy.reject_if):
        if condition is None:
            continue
        for name in _field_names_used(condition):
            if name not in field_names:
                raise InputError(f"policy {policy.name!r} sets a threshold for {name!r}, which no item has "
                                 f"(fields: {', '.join(field_names) or 'none'})")
        for name in _type_names_used(condition):
            if document_types is None or name not in document_type_names:
                known = ", ".join(repr(n) for n in document_type_names if n) or "none"
                raise InputError(f"policy {policy.name!r} sets a threshold for document type {name!r}, which no "
                                 f"record has (document types: {known})")
    carried = {name: column for name, column in (signals or {}).items() if not np.isnan(column).all()}
    for name in policy.signal_names():
        if name not in carried:
            raise InputError(f"policy {policy.name!r} routes on signal {name!r}, which no value carries (signals: "
                             f"{', '.join(repr(known) for known in carried) or 'none'})")
    unknown = int(np.count_nonzero(np.isnan(confidence)))
    if unknown and policy.missing_confidence is None:
        raise InputError(f"{unknown:,} prediction{'s have' if unknown > 1 else ' has'} no confidence, and policy "
                         f"{policy.name!r} does not say what to do with them: set missing_confidence: review, "
                         "accept or a number")
    items = _Items(confidence=confidence, grounding=grounding, signals=carried, fields=fields, field_names=field_names,
                   units=units, document_types=document_types, document_type_names=document_type_names,
                   missing_confidence=policy.missing_confidence)
    rejected = None
    entry = _entry(policy.review_if, items, policy)
    if policy.reject_if is not None:
        reject_entry = _entry(policy.reject_if, items, policy, rejecting=True)
        if policy.rejects_documents:
            reject_entry = _whole_documents(reject_entry, units, policy)
        # reject thresholds are fixed: an item is rejected at every τ or at none; reject wins over review,
        # and a rejected item has left the flow, so it escalates nothing either
        rejected = reject_entry == -np.inf
        entry = np.where(rejected, np.inf, entry)
    if policy.reviews_documents:
        entry = _whole_documents(entry, units, policy)
        if rejected is not None:
            entry = np.where(rejected, np.inf, entry)
    return CompiledPolicy(policy, entry, units if policy.reviews_documents else None, rejected)


def _field_names_used(condition: Condition) -> list[str]:
    return [name for test in condition._tests() if isinstance(test, Threshold)
            for name in [*test.fields, *(f for by_type in test.document_types.values() for f in by_type.fields)]]


def _type_names_used(condition: Condition) -> list[str]:
    return [name for test in condition._tests() if isinstance(test, Threshold) for name in test.document_types]
