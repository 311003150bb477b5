"""Rossum: score thresholds for confident automation, as a patch of a queue and of its schema.

Rossum automates a field when the AI engine's confidence score (in [0, 1]) passes its score
threshold: the schema datapoint's ``score_threshold``, else the queue's ``default_score_threshold``.
A document that holds a field short of its threshold stops for a person, who validates the whole
document. Rossum's schema has no other key for this, so the export is a patch, not a schema (the
schema's sections, labels and types are the team's own):

.. code-block:: json

    {"queue": {"default_score_threshold": 0.8},
     "schema_datapoints": [{"id": "amount_total", "score_threshold": 0.97}],
     "rpa_sim": {"policy": "per-field", "threshold": 0.8, "notes": []}}

``queue`` is the body of a ``PATCH`` of the queue; each of ``schema_datapoints`` sets the
``score_threshold`` of the datapoint with that ``id`` in the schema's ``content`` (a ``--fields``
map gives the Rossum ids of rpa-sim's keys). ``rpa_sim`` says where the numbers come from and what
Rossum cannot state. A threshold above 1 (review every value) is written 1, which no score passes.
"""

from __future__ import annotations

from rpa_sim.common.errors import InputError
from rpa_sim.route.export.rules import Export, ExportedField, PolicyAt, metadata, notes_for

__all__ = ["export_rossum"]


def _score_threshold(threshold: float) -> float:
    # Rossum's thresholds are in [0, 1]; a policy's above 1 reviews everything, which 1 does (no score passes it)
    return min(threshold, 1.0)


def export_rossum(at: PolicyAt, fields: list[ExportedField], *, document_type: str | None = None) -> Export:
    """The policy at ``τ`` as Rossum score thresholds (a queue's default and its schema datapoints').

    Parameters
    ----------
    at : PolicyAt
    fields : list of ExportedField
        The datapoints to set: every name of a field (a ``--fields`` map may give several) gets the
        field's threshold.
    document_type : str, optional
        Take the thresholds of this document type (in Rossum, a queue of its own).

    Raises
    ------
    InputError
        When the policy tests no confidence (a grounding gate or a document's aggregate alone).

    Examples
    --------
    >>> from rpa_sim.route.export.rules import policy_at
    >>> from rpa_sim.route.policies import load_policy
    >>> at = policy_at(load_policy("per-field"), 0.8, source="--threshold")
    >>> export_rossum(at, [ExportedField("total.total_price", ("amount_total",))]).summary
    'default_score_threshold 0.8, 1 datapoint'
    """
    notes = notes_for("rossum", at, states={"escalate", "fix_additions"}, document_type=document_type,
                      advice={"audit": "audit a share of the automated documents in Rossum's own reports or an "
                                       "extension"})
    if at.review is None:
        raise InputError(f"policy {at.policy.name!r} states nothing rossum can test: {'; '.join(notes)}")
    if not at.policy.reviews_documents:
        notes.append("rossum validates whole documents: a document with one value below its threshold stops for a "
                     "person, who confirms all of it, where the policy reviews that value alone (a study of the "
                     "same thresholds with escalate: document prices whole documents)")
    default = at.review.of(None, document_type)
    datapoints = [{"id": name, "score_threshold": _score_threshold(at.review.of(item.key, document_type))}
                  for item in fields for name in item.names]
    more = {} if document_type is None else {"document_type": document_type}
    document = {"queue": {"default_score_threshold": _score_threshold(default)}, "schema_datapoints": datapoints,
                "rpa_sim": metadata(at, notes, **more)}
    from rpa_sim.common.jsontext import dumps  # noqa: PLC0415

    summary = (f"default_score_threshold {_score_threshold(default):g}, {len(datapoints)} "
               f"datapoint{'s' if len(datapoints) != 1 else ''}")
    return Export(dumps(document, indent=2) + "\n", tuple(notes), summary)
