"""Review policies: which predictions a person reviews, as YAML files validated by pydantic.

A policy routes an item to review when its ``review_if`` condition holds. The
condition combines threshold tests on confidence and grounding with
``any_of`` / ``all_of``; exactly one threshold in it is the swept knob ``τ``
(written ``sweep``); every other setting is fixed. Around the condition, a
policy may escalate to whole documents (and let the reviewer add what the
model missed), audit a share of what it auto-accepts, and cap the reviews
with a budget.

Compiling a policy against an outcome table gives each item an *entry
threshold* ``e``: the item is routed exactly when ``τ > e`` (``-inf`` =
always routed, ``+inf`` = never). Every curve over all thresholds then comes
from sorting the entries once (see :mod:`rpa_sim.sweep`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from rpa_sim.bundled import bundled_files, resolve
from rpa_sim.errors import InputError
from rpa_sim.yamlfile import read_yaml, validated

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

__all__ = [
    "SWEEP",
    "Threshold",
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


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Threshold(_Strict):
    """``score < below`` routes an item; ``below: sweep`` makes it the swept knob.

    ``fields`` gives fixed thresholds for some keys (KIE) or question types
    (VQA); items of other fields use ``below``. A field threshold above 1
    (``.inf`` in YAML) reviews every item of the field. ``missing`` says what an item
    without the score (grounding unknown) does: ``review`` (the default: what
    cannot be checked goes to a person) or ``accept``.
    """

    below: Union[_Unit, Literal["sweep"]]
    fields: dict[str, Annotated[float, Field(ge=0.0)]] = {}
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


class Condition(_Strict):
    """One of: ``confidence``, ``grounding`` (a :class:`Threshold`), ``any_of`` or ``all_of`` (conditions)."""

    confidence: Threshold | None = None
    grounding: Threshold | None = None
    any_of: list[Condition] | None = Field(default=None, min_length=1)
    all_of: list[Condition] | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _exactly_one(self) -> Condition:
        given = [name for name in ("confidence", "grounding", "any_of", "all_of") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(f"a condition has exactly one of confidence, grounding, any_of, all_of; got {given or 'none'}")
        return self

    def sweeps(self) -> int:
        """How many thresholds of this condition are swept."""
        if self.confidence is not None:
            return int(self.confidence.swept)
        if self.grounding is not None:
            return int(self.grounding.swept)
        return sum(child.sweeps() for child in (self.any_of or self.all_of))

    def swept_score(self) -> str:
        """``"confidence"`` or ``"grounding"``: what the swept knob thresholds."""
        if self.confidence is not None and self.confidence.swept:
            return "confidence"
        if self.grounding is not None and self.grounding.swept:
            return "grounding"
        for child in self.any_of or self.all_of or ():
            if child.sweeps():
                return child.swept_score()
        raise ValueError("no swept threshold")


class Budget(_Strict):
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
        return self.count if self.count is not None else int(np.floor(self.share * items + 1e-9))


class Policy(_Strict):
    """A review policy (one YAML file of ``policies/``)."""

    name: str = Field(min_length=1)
    description: str = ""
    review_if: Condition
    escalate: Literal["none", "document"] = "none"
    fix_additions: bool = False
    audit: _Unit = 0.0
    budget: Budget | None = None

    @model_validator(mode="after")
    def _one_knob(self) -> Policy:
        knobs = self.review_if.sweeps()
        if knobs != 1:
            raise ValueError(f"a policy sweeps exactly one threshold (written `sweep`), this one has {knobs}")
        if self.fix_additions and self.escalate != "document":
            raise ValueError("fix_additions needs escalate: document (only a whole-document review sees what is missing)")
        return self

    @property
    def knob(self) -> str:
        """What the swept threshold applies to: ``"confidence"`` or ``"grounding"``."""
        return self.review_if.swept_score()


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
        Item ``i`` is routed to review exactly when ``τ > entry[i]``.
    units : ndarray of int or None
        The review unit of each item when whole documents are escalated, else None.
    """

    def __init__(self, policy: Policy, entry: np.ndarray, units: np.ndarray | None) -> None:
        self.policy = policy
        self.entry = entry
        self.units = units

    def routed(self, threshold: float) -> np.ndarray:
        """The items the policy routes at ``threshold`` (before audit and budget)."""
        return self.entry < threshold


def _threshold_entry(test: Threshold, scores: np.ndarray, fields: np.ndarray, field_names: tuple[str, ...]) -> np.ndarray:
    if test.swept:
        entry = scores.astype(np.float64, copy=True)
    else:
        entry = np.where(scores < test.below, -np.inf, np.inf)
    for name, below in test.fields.items():
        if name in field_names:
            mine = fields == field_names.index(name)
            entry[mine] = np.where(scores[mine] < below, -np.inf, np.inf)
    unknown = np.isnan(scores)
    entry[unknown] = -np.inf if test.missing == "review" else np.inf
    return entry


def _entry(condition: Condition, columns: dict[str, np.ndarray], fields: np.ndarray,
           field_names: tuple[str, ...]) -> np.ndarray:
    for score in ("confidence", "grounding"):
        test = getattr(condition, score)
        if test is not None:
            return _threshold_entry(test, columns[score], fields, field_names)
    children = [_entry(child, columns, fields, field_names) for child in (condition.any_of or condition.all_of)]
    # any_of: routed as soon as one child is; all_of: only once every child is
    return np.minimum.reduce(children) if condition.any_of else np.maximum.reduce(children)


def compile_policy(policy: Policy, *, confidence: np.ndarray, grounding: np.ndarray, fields: np.ndarray,
                   field_names: tuple[str, ...], units: np.ndarray | None = None) -> CompiledPolicy:
    """Entry thresholds of every item under ``policy``.

    Parameters
    ----------
    policy : Policy
    confidence, grounding : ndarray of float
        Per-item scores (grounding NaN where unknown).
    fields : ndarray of int
        Per-item field code (KIE key, VQA question type), indexing ``field_names``.
    field_names : tuple of str
    units : ndarray of int, optional
        Per-item document index; needed when the policy escalates documents.

    Examples
    --------
    >>> policy = Policy.model_validate({"name": "p", "review_if": {"any_of": [
    ...     {"confidence": "sweep"}, {"grounding": {"below": 0.5}}]}})
    >>> compiled = compile_policy(policy, confidence=np.array([0.9, 0.4, 0.8]),
    ...     grounding=np.array([0.9, 0.9, 0.1]), fields=np.zeros(3, int), field_names=("k",))
    >>> compiled.entry.tolist()
    [0.9, 0.4, -inf]
    """
    for name in _field_names_used(policy.review_if):
        if name not in field_names:
            raise InputError(f"policy {policy.name!r} sets a threshold for {name!r}, which no item has "
                             f"(fields: {', '.join(field_names) or 'none'})")
    entry = _entry(policy.review_if, {"confidence": confidence, "grounding": grounding}, fields, field_names)
    if policy.escalate == "document":
        if units is None:
            raise InputError(f"policy {policy.name!r} escalates documents, but these items have no documents")
        # a document is routed as soon as any of its items is: every item takes the document's minimum
        lowest = np.full(int(units.max(initial=-1)) + 1, np.inf)
        np.minimum.at(lowest, units, entry)
        entry = lowest[units]
    return CompiledPolicy(policy, entry, units if policy.escalate == "document" else None)


def _field_names_used(condition: Condition) -> list[str]:
    names: list[str] = []
    for test in (condition.confidence, condition.grounding):
        if test is not None:
            names.extend(test.fields)
    for child in condition.any_of or condition.all_of or ():
        names.extend(_field_names_used(child))
    return names
