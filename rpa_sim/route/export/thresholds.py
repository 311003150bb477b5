"""Plain thresholds, YAML or JSON: a policy at ``τ`` for any system that compares a confidence with a number.

Every threshold is written out for every exported field, so a reader needs no precedence rule: a
value of field ``F`` (in a document of type ``T``) goes to review when its confidence is below
``review_below.document_types[T].fields[F]``, or ``review_below.fields[F]`` for a type not listed,
or ``default`` for a field not listed. ``reject_below`` (a reject band) reads the same way. A
threshold above 1, which reviews every value it covers, is written ``all``. The policy's other
settings follow under their own names (``missing_confidence``, ``escalate``, ``fix_additions``,
``audit``, ``budget``); what thresholds cannot state (a grounding gate, a document's aggregate
confidence) is in ``notes``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rpa_sim.common.errors import InputError, UsageError
from rpa_sim.route.export.rules import Export, ExportedField, PolicyAt, Thresholds, metadata, notes_for

__all__ = ["export_thresholds", "SUFFIXES"]

#: The file suffixes the format is chosen by.
SUFFIXES = {".json": "json", ".yaml": "yaml", ".yml": "yaml"}
#: How a threshold above 1 (every value it covers is reviewed) is written.
EVERY_VALUE = "all"


def _written(threshold: float) -> float | str:
    return EVERY_VALUE if threshold > 1 else threshold


def _table(rules: Thresholds, fields: list[ExportedField], document_types: list[str]) -> dict[str, Any]:
    table: dict[str, Any] = {"default": _written(rules.below),
                             "fields": {name: _written(rules.of(item.key)) for item in fields for name in item.names}}
    if document_types:
        table["document_types"] = {
            kind: {"default": _written(rules.of(None, kind)),
                   "fields": {name: _written(rules.of(item.key, kind)) for item in fields for name in item.names}}
            for kind in document_types}
    return table


def export_thresholds(at: PolicyAt, fields: list[ExportedField], *, out: Path,
                      document_type: str | None = None) -> Export:
    """The policy at ``τ`` as plain thresholds, JSON or YAML by the suffix of ``out``.

    Parameters
    ----------
    at : PolicyAt
    fields : list of ExportedField
        The fields to list (each of their names gets the field's threshold).
    out : Path
        The file to be written: ``.json``, ``.yaml`` or ``.yml``.
    document_type : str, optional
        Write the thresholds of this document type only (``default`` and ``fields`` are then the type's).

    Raises
    ------
    UsageError
        For another suffix.
    InputError
        When the policy tests no confidence.

    Examples
    --------
    >>> from rpa_sim.route.export.rules import policy_at
    >>> from rpa_sim.route.policies import load_policy
    >>> at = policy_at(load_policy("audited-budget"), 0.8, source="--threshold")
    >>> print(export_thresholds(at, [], out=Path("t.yaml")).text, end="")
    policy: audited-budget
    threshold: 0.8
    threshold_from: --threshold
    knob: confidence
    review_below:
      default: 0.8
      fields: {}
    audit: 0.02
    budget:
      share: 0.25
    notes: []
    """
    kind = SUFFIXES.get(out.suffix.lower())
    if kind is None:
        raise UsageError(f"export-policy thresholds: --out {out} must end in .json, .yaml or .yml (the format "
                         f"follows the suffix)")
    # a reject band is stated when it tests confidences (its other tests are noted apart)
    band = {"reject_if"} if at.reject is not None else set()
    notes = notes_for("thresholds", at, document_type=document_type,
                      states={"escalate", "fix_additions", "budget", "audit", "missing_confidence", "document_types",
                              *band})
    if at.review is None:
        raise InputError(f"policy {at.policy.name!r} states no confidence threshold: {'; '.join(notes)}")
    types = [] if document_type is not None else at.document_types()
    policy = at.policy

    def table(rules: Thresholds) -> dict[str, Any]:
        if document_type is None:
            return _table(rules, fields, types)
        # one type: its thresholds, without precedence left to the reader
        return _table(Thresholds(rules.of(None, document_type),
                                 {item.key: rules.of(item.key, document_type) for item in fields}), fields, [])

    more = {} if document_type is None else {"document_type": document_type}
    document: dict[str, Any] = {key: value for key, value in metadata(at, notes, **more).items() if key != "notes"}
    document["review_below"] = table(at.review)
    if at.reject is not None:
        document["reject_below"] = table(at.reject)
    if policy.missing_confidence is not None:
        document["missing_confidence"] = policy.missing_confidence
    if policy.escalate != "none":
        document["escalate"] = policy.escalate
    if policy.fix_additions:
        document["fix_additions"] = True
    if policy.audit:
        document["audit"] = policy.audit
    if policy.budget is not None:
        document["budget"] = policy.budget.model_dump(exclude_none=True)
    document["notes"] = list(notes)
    if kind == "json":
        from rpa_sim.common.jsontext import dumps  # noqa: PLC0415

        text = dumps(document, indent=2) + "\n"
    else:
        import yaml  # noqa: PLC0415

        text = yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
    count = len({name for item in fields for name in item.names})
    return Export(text, tuple(notes), f"{kind.upper()}, thresholds of {count} field{'s' if count != 1 else ''} and "
                                      f"the default")
