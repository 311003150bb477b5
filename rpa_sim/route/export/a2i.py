"""Amazon Augmented AI (A2I): human loop activation conditions for Textract ``AnalyzeDocument``.

The output is the ``HumanLoopActivationConditions`` JSON of a flow definition (``CreateFlowDefinition``),
as AWS's "JSON Schema for Human Loop Activation Conditions" and its Textract page describe it:

- per field, an ``ImportantFormKeyConfidenceCheck``: the field's form key (``ImportantFormKey``, its
  other spellings in ``ImportantFormKeyAliases``) is reviewed when its confidence, on Textract's 0-100
  scale, is below the policy's threshold times 100 (``KeyValueBlockConfidenceLessThan``, or
  ``WordBlockConfidenceLessThan`` with ``confidence="word"``); a threshold above 1 reviews every value,
  written ``...LessThanEquals: 100``. When the fields are not all named (no DATA, ``--field`` or
  ``--fields``), the policy-wide threshold is one check on the catch-all key ``*``, beside the checks
  of the fields the policy gives thresholds of their own;
- per field, a ``MissingImportantFormKey`` when the policy reviews what has no confidence
  (``missing_confidence: review``): a key Textract did not find has none;
- a ``Sampling`` condition (``RandomSamplingPercentage``) for the policy's audit share;

joined by ``Or`` (one condition stands alone: ``Or`` takes two or more). A2I reads nothing else, so
the notes go to the command's standard error only (``docs/export.md``).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Literal

from rpa_sim.common.errors import InputError
from rpa_sim.route.export.rules import Export, ExportedField, PolicyAt, notes_for

__all__ = ["export_a2i", "percent", "SMALLEST_SAMPLING"]

#: ``RandomSamplingPercentage`` is a number from 0.01 to 100 (AWS's Textract page).
SMALLEST_SAMPLING = 0.01


def percent(share: float) -> float | int:
    """A share on A2I's 0-100 scale: the decimal number the share is written as, times 100 (exactly).

    Multiplying the float by 100 would turn 0.57 into 56.99999999999999, a threshold that lets a
    confidence of 56.999999999999995 pass where rpa-sim reviews it; a whole number comes out as an int.

    >>> percent(0.57), percent(0.8723449230194092), percent(0.02)
    (57, 87.23449230194092, 2)
    """
    scaled = Decimal(repr(share)) * 100
    return int(scaled) if scaled == scaled.to_integral_value() else float(scaled)


def _key(names: tuple[str, ...]) -> dict[str, Any]:
    """A form key and its aliases as condition parameters."""
    name, *aliases = names
    return {"ImportantFormKey": name, "ImportantFormKeyAliases": aliases} if aliases else {"ImportantFormKey": name}


def _check(names: tuple[str, ...], threshold: float, block: str) -> dict[str, Any]:
    parameters = _key(names)
    # above 1 a policy reviews every value it covers: at or below 100, Textract's highest confidence
    if threshold > 1:
        parameters[f"{block}LessThanEquals"] = 100
    else:
        parameters[f"{block}LessThan"] = percent(threshold)
    return {"ConditionType": "ImportantFormKeyConfidenceCheck", "ConditionParameters": parameters}


def export_a2i(at: PolicyAt, fields: list[ExportedField], *, every_field: bool, document_type: str | None = None,
               confidence: Literal["key-value", "word"] = "key-value") -> Export:
    """The policy at ``τ`` as A2I human loop activation conditions for Textract.

    Parameters
    ----------
    at : PolicyAt
    fields : list of ExportedField
        The form keys to name (their first name is ``ImportantFormKey``, the others its aliases).
    every_field : bool
        Whether ``fields`` are every field there is (named by the data, ``--field`` or ``--fields``):
        then each has its own check. Otherwise the policy-wide threshold is a check on the catch-all
        key ``*``, beside the checks of the fields whose thresholds differ.
    document_type : str, optional
        Take the thresholds of this document type (A2I has no document types: one flow definition per type).
    confidence : {"key-value", "word"}, default="key-value"
        Which Textract confidence the policy's confidence stands for: the key-value pair's
        (``KeyValueBlockConfidence...``) or its words' (``WordBlockConfidence...``).

    Raises
    ------
    InputError
        When the policy states nothing A2I can test (its review rule is a grounding gate or a
        document's aggregate alone, and it audits nothing).

    Examples
    --------
    >>> from rpa_sim.route.export.rules import policy_at
    >>> from rpa_sim.route.policies import load_policy
    >>> at = policy_at(load_policy("per-field"), 0.8, source="--threshold")
    >>> export = export_a2i(at, [ExportedField("total.total_price", ("Total", "Amount due")),
    ...                          ExportedField("sub_total.subtotal_price", ("Subtotal",))], every_field=False)
    >>> print(export.summary)
    3 conditions: 3 confidence checks
    """
    block = "KeyValueBlockConfidence" if confidence == "key-value" else "WordBlockConfidence"
    conditions: list[dict[str, Any]] = []
    notes = notes_for("a2i", at, states={"audit", "missing_confidence"}, document_type=document_type,
                      advice={"escalate": "a2i starts one human loop per document, but its default worker template "
                                          "shows only the keys whose condition held: show every key-value pair in a "
                                          "custom template (task.input.selectedAiServiceResponse.blocks)"})
    if at.review is not None:
        default = at.review.of(None, document_type)
        own = [(item, at.review.of(item.key, document_type)) for item in fields]
        if every_field:
            conditions += [_check(item.names, threshold, block) for item, threshold in own]
        else:
            conditions.append(_check(("*",), default, block))
            # a field reviewed below a higher threshold than the catch-all's needs a check of its own
            conditions += [_check(item.names, threshold, block) for item, threshold in own if threshold != default]
            lower = [item.key for item, threshold in own if threshold < default]
            if lower:
                notes.append(f"a2i's catch-all check (key '*') reviews every key below the policy-wide threshold "
                             f"{default:g}, so {', '.join(lower)} (lower thresholds of their own) are reviewed more "
                             f"than the policy says; name every field (DATA, --field or --fields) to state them")
    checks = len(conditions)
    missing = 0
    if at.policy.missing_confidence == "review":
        conditions += [{"ConditionType": "MissingImportantFormKey", "ConditionParameters": _key(item.names)}
                       for item in fields]
        missing = len(fields)
        if not every_field:
            notes.append("a2i states missing_confidence: review as a missing-key check of each named key only "
                         "(MissingImportantFormKey takes no catch-all key); name every field (DATA, --field or "
                         "--fields)")
    sampled = 0
    if at.policy.audit:
        share = percent(at.policy.audit)
        if share < SMALLEST_SAMPLING:
            notes.append(f"a2i cannot state audit: {at.policy.audit:g} (a RandomSamplingPercentage of {share:g} is "
                         f"below the smallest, {SMALLEST_SAMPLING:g})")
        else:
            conditions.append({"ConditionType": "Sampling", "ConditionParameters": {"RandomSamplingPercentage": share}})
            sampled = 1
            notes.append(f"a2i samples documents, not values: Sampling sends {share:g}% of all documents (every "
                         f"key-value pair of each) to review, where the policy audits {at.policy.audit:g} of the "
                         f"auto-accepted values")
    if not conditions:
        raise InputError(f"policy {at.policy.name!r} states nothing a2i can test: {'; '.join(notes)}")
    from rpa_sim.common.jsontext import dumps  # noqa: PLC0415

    document = {"Conditions": [conditions[0]] if len(conditions) == 1 else [{"Or": conditions}]}
    parts = [f"{checks} confidence check{'s' if checks != 1 else ''}"] if checks else []
    parts += [f"{missing} missing-key check{'s' if missing != 1 else ''}"] if missing else []
    parts += ["random sampling"] if sampled else []
    summary = f"{len(conditions)} condition{'s' if len(conditions) != 1 else ''}: {', '.join(parts)}"
    return Export(dumps(document, indent=2) + "\n", tuple(notes), summary)
