"""Label Studio: the values a policy routes to review at ``τ``, as tasks with the model's predictions.

The policy is applied to a data set exactly as the sweep applies it (:meth:`rpa_sim.route.sweep.Sweeper.reviewed_at`:
the routed values within the budget, whole documents for a policy that escalates them), so the tasks
hold exactly the values the sweep counts as reviewed at ``τ`` (audits aside: they are drawn at random).

One task per KIE document that has a routed value, in Label Studio's import format (a JSON list):

- ``data``: ``{"image": URL}``, the record id put into ``--document-url``'s ``{id}`` (the record id
  itself by default), for a labelling config with ``<Image name="image" value="$image"/>``;
- ``predictions``: one prediction (``model_version``; ``score``, the lowest confidence of its values,
  left out when one has none) whose ``result`` holds one ``textarea`` per routed value: ``from_name``
  the field (a ``<TextArea name="FIELD" toName="image"/>`` per field), ``value.text`` the predicted
  value, ``score`` its confidence (left out when unknown);
- ``meta.rpa_sim``: the record id, the task's place in the review order, the policy, ``τ`` and the notes.

Review order: the least confident value first, as a policy's budget orders reviews; a value without
a confidence comes before any other (what cannot be judged is looked at first). A task's place is its
least confident routed value's, ties in the data's order; within a task, values in the same order.
``rpa-sim import label-studio`` reads the tasks back into the same values, with their record ids (``meta.rpa_sim.id``,
or ``--id-from data.image``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from rpa_sim.common.errors import InputError
from rpa_sim.route.export.rules import Export, PolicyAt, metadata

if TYPE_CHECKING:
    from rpa_sim.evaluate.outcomes import OutcomeTable

__all__ = ["export_label_studio", "review_order", "DATA_KEY", "ID_FIELD"]

#: The ``data`` key of a task: the document, for the labelling config's ``<Image value="$image">``.
DATA_KEY = "image"
#: What ``--document-url`` replaces with the record id.
ID_FIELD = "{id}"


def review_order(confidence: np.ndarray, document: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The order of routed values and of their documents: the least confident first, an unknown one before all.

    Parameters
    ----------
    confidence : ndarray of float
        The routed values' confidences (NaN: unknown).
    document : ndarray of int
        Their documents, in the data's order.

    Returns
    -------
    values : ndarray of int
        Positions of the values, in review order (ties: the data's order).
    documents : ndarray of int
        The documents in review order: each at its least confident value's place.

    Examples
    --------
    >>> values, documents = review_order(np.array([0.9, 0.2, np.nan, 0.5]), np.array([0, 0, 1, 2]))
    >>> values.tolist(), documents.tolist()
    ([2, 1, 3, 0], [1, 0, 2])
    """
    key = np.nan_to_num(confidence, nan=-np.inf)
    values = np.lexsort((np.arange(len(key)), key))
    _, first = np.unique(document[values], return_index=True)
    return values, document[values][np.sort(first)]


def export_label_studio(at: PolicyAt, table: OutcomeTable, *, document_url: str = ID_FIELD,
                        model_version: str) -> Export:
    """The values ``at.policy`` routes at ``τ`` on ``table``, as Label Studio tasks in review order.

    Parameters
    ----------
    at : PolicyAt
    table : OutcomeTable
        A KIE outcome table (the data's documents, fields, values and confidences).
    document_url : str, default="{id}"
        The task's ``data.image``; ``{id}`` is replaced by the record id.
    model_version : str
        The predictions' ``model_version``: which model made them.

    Raises
    ------
    InputError
        For VQA data (questions have no fields to pre-annotate), or when the policy does not fit the data
        (a field or document type it names that no record has, a null confidence it says nothing about).

    Examples
    --------
    >>> from rpa_sim.route.export.rules import policy_at
    >>> from rpa_sim.records.synthetic import generate_receipts
    >>> from rpa_sim.evaluate.outcomes import evaluate_kie
    >>> from rpa_sim.route.policies import load_policy
    >>> table = evaluate_kie(generate_receipts(20, seed=1))
    >>> at = policy_at(load_policy("confidence"), 0.5, source="--threshold")
    >>> export_label_studio(at, table, model_version="demo").summary
    '16 tasks, 35 of 305 values; the sweep counts 35 reviewed at τ 0.5'
    """
    from rpa_sim.route.sweep import Sweeper  # noqa: PLC0415

    documents_of = table.review_units  # the document of each value; questions have none
    if documents_of is None:
        raise InputError(f"export-policy label-studio writes the values of KIE documents as tasks; this data is "
                         f"{table.task.upper()} ({table.unit_noun}s, no fields to pre-annotate): export rules instead "
                         f"(thresholds, a2i, rossum)")
    policy = at.policy
    sweeper = Sweeper(table, policy)
    routed = np.flatnonzero(sweeper.reviewed_at(at.threshold))
    notes = []
    if policy.audit:
        notes.append(f"label-studio tasks hold the routed values only: the audit of {policy.audit:g} of the "
                     f"auto-accepted values is drawn at random in production (rpa-sim replay draws one day with a "
                     f"seed)")
    rejected = int(np.count_nonzero(sweeper.compiled.rejected))
    if rejected:
        notes.append(f"label-studio tasks leave out the {rejected:,} values the reject band takes out of the flow "
                     f"(reject_if: neither reviewed nor accepted)")
    values, documents = review_order(table.confidence[routed], documents_of[routed])
    rows = routed[values]
    by_document: dict[int, list[int]] = {}
    for row, document in zip(rows.tolist(), documents_of[rows].tolist()):
        by_document.setdefault(document, []).append(row)
    about = metadata(at, notes)
    ids, predicted = table.unit_ids(), table.review_values().values
    tasks = [_task(table, str(ids[document]), predicted, by_document[document], rank, document_url, model_version,
                   about)
             for rank, document in enumerate(documents.tolist(), start=1)]
    from rpa_sim.common.jsontext import dumps  # noqa: PLC0415

    reviewed = sweeper.at(at.threshold)["reviewed"]
    summary = (f"{len(tasks):,} task{'s' if len(tasks) != 1 else ''}, {len(rows):,} of {len(table):,} values; the "
               f"sweep counts {reviewed:,.6g} reviewed at τ {at.threshold:g}")
    return Export(dumps(tasks, indent=2, ensure_ascii=False) + "\n", tuple(notes), summary)


def _task(table: OutcomeTable, record_id: str, predicted: np.ndarray, rows: list[int], rank: int, document_url: str,
          model_version: str, about: dict[str, Any]) -> dict[str, Any]:
    """The task of one document: its routed ``rows``, each with its field name, predicted value and confidence."""
    results = []
    for number, row in enumerate(rows, start=1):
        result: dict[str, Any] = {"id": f"r{number}", "from_name": table.field_names[table.field_codes[row]],
                                  "to_name": DATA_KEY, "type": "textarea", "value": {"text": [str(predicted[row])]}}
        confidence = float(table.confidence[row])
        if not math.isnan(confidence):
            result["score"] = confidence
        results.append(result)
    prediction: dict[str, Any] = {"model_version": model_version}
    scores = [result["score"] for result in results if "score" in result]
    if len(scores) == len(results):
        # Label Studio sorts tasks by this score; a value without a confidence would take it on import back
        prediction["score"] = min(scores)
    prediction["result"] = results
    return {"data": {DATA_KEY: document_url.replace(ID_FIELD, record_id)}, "predictions": [prediction],
            "meta": {"rpa_sim": {"id": record_id, "review_order": rank, "values": len(rows), **about}}}
