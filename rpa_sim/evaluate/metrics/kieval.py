"""KIEval: entity- and group-level KIE evaluation with correction counts (seed 002, METRICS.md §3).

A document is a list of groups; group 0 holds the non-grouped entities and is
always paired with the ground truth's group 0. The other groups are paired by
Hungarian matching on the number of identical ``(key, value)`` pairs, within a
category. Every predicted entity then gets exactly one outcome label
(``correct``, ``substitution`` or ``deletion``, with the value a reviewer
would write in its place), and every missed ground-truth entity is an
addition. Those labels are what the replay engine routes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING

import numpy as np

from rpa_sim.evaluate.metrics.kieval_batch import BATCH, evaluate_batch
from rpa_sim.evaluate.metrics.kieval_counts import (
    CORRECT,
    DELETION,
    OUTCOME_NAMES,
    SUBSTITUTION,
    KIEvalCounts,
    ValueMatch,
)

if TYPE_CHECKING:
    # the records' models (pydantic) are only named here: reading an outcome table file never imports them
    from rpa_sim.records.models import Extraction, PredictedExtraction

__all__ = [
    "CORRECT",
    "SUBSTITUTION",
    "DELETION",
    "OUTCOME_NAMES",
    "KIEvalCounts",
    "DocumentOutcome",
    "Addition",
    "evaluate_document",
    "kieval",
    "group_category",
]


@dataclass(frozen=True)
class Addition:
    """A missed ground-truth entity: its key, value and ground-truth group (0 = non-grouped)."""

    key: str
    value: str
    group: int


@dataclass(frozen=True)
class DocumentOutcome:
    """KIEval of one document with a label per predicted entity.

    Predicted entities are numbered in record order: the non-grouped entities
    first, then each group's entities, whose ``keys``, ``values``, ``confidences``
    and ``groundings`` are listed in that order. ``labels[i]`` is :data:`CORRECT`,
    :data:`SUBSTITUTION` or :data:`DELETION`; ``corrections[i]`` is the value
    a reviewer writes (the ground truth's for a substitution, the value itself
    when correct, ``None`` for a deletion). Entities with an empty value are
    left out of the numbering (they are counted in ``counts.ignored_empty``).
    """

    counts: KIEvalCounts
    keys: list[str]
    values: list[str]
    confidences: list[float | None]
    groundings: list[float | None]
    groups: np.ndarray
    labels: np.ndarray
    corrections: list[str | None]
    additions: list[Addition]
    pairs: list[tuple[int, int]]


def group_category(name: str | None, keys: Iterable[str]) -> str | None:
    """A group's category: its explicit name, else the keys' shared prefix before the first ``.``.

    Returns ``None`` (pairs with any group) when the keys disagree or have no prefix.

    Examples
    --------
    >>> group_category(None, ["menu.nm", "menu.price"])
    'menu'
    >>> group_category("1", ["sub_total.tax_price"])
    '1'
    >>> group_category(None, ["menu.nm", "total.total_price"]) is None
    True
    """
    if name is not None:
        return name
    prefixes = {key.split(".", 1)[0] if "." in key else None for key in keys}
    if len(prefixes) == 1:
        return prefixes.pop()
    return None


def evaluate_document(ground_truth: Extraction, prediction: PredictedExtraction, *,
                      value_match: ValueMatch = "exact") -> DocumentOutcome:
    """KIEval of one document, with an outcome label per predicted entity.

    Parameters
    ----------
    ground_truth : Extraction
        The ground-truth entities and groups.
    prediction : PredictedExtraction
        The predicted entities and groups, with confidences.
    value_match : {"exact", "normalized"}, default="exact"
        ``"exact"`` compares values as strings, as the official code does;
        ``"normalized"`` folds whitespace and case first.

    Returns
    -------
    DocumentOutcome

    Examples
    --------
    KIEval Fig. 3, scenario 2: one wrong value is one substitution.

    >>> from rpa_sim.records.models import Extraction, PredictedExtraction
    >>> gt = Extraction.model_validate({"entities": [{"key": "menu.nm", "value": "Americano"},
    ...                                              {"key": "menu.nm", "value": "Latte"}]})
    >>> pr = PredictedExtraction.model_validate({"entities": [
    ...     {"key": "menu.nm", "value": "Americano", "confidence": 0.9},
    ...     {"key": "menu.nm", "value": "Juice", "confidence": 0.4}]})
    >>> out = evaluate_document(gt, pr)
    >>> out.counts.tp, out.counts.substitutions, out.counts.kieval_aligned
    (1, 1, 0.5)
    >>> [OUTCOME_NAMES[label] for label in out.labels], out.corrections
    (['correct', 'substitution'], ['Americano', 'Latte'])
    """
    batch = evaluate_batch([(ground_truth, prediction)], value_match=value_match)
    keys = batch.keys
    additions = [Addition(keys[key], value, group) for key, value, group in
                 zip(batch.addition_key.tolist(), batch.addition_values, batch.addition_group.tolist())]
    return DocumentOutcome(KIEvalCounts(*batch.counts[0].tolist()), [keys[key] for key in batch.key.tolist()],
                           batch.values, batch.confidences, batch.groundings, batch.group, batch.labels,
                           batch.corrections, additions, [(g, p) for _, g, p in batch.pairs.tolist()])


def kieval(documents: Iterable[tuple[Extraction, PredictedExtraction]], *,
           value_match: ValueMatch = "exact") -> KIEvalCounts:
    """Corpus KIEval: the counts of every document summed (micro), as the paper and official code do.

    Parameters
    ----------
    documents : iterable of (Extraction, PredictedExtraction)
        Ground truth and prediction of each document.
    value_match : {"exact", "normalized"}, default="exact"
        See :func:`evaluate_document`.

    Examples
    --------
    >>> from rpa_sim.records.models import Extraction, PredictedExtraction
    >>> gt = Extraction.model_validate({"entities": [{"key": "total", "value": "10.00"}]})
    >>> pr = PredictedExtraction.model_validate({"entities": [{"key": "total", "value": "10.0", "confidence": 1}]})
    >>> kieval([(gt, pr), (gt, pr)]).substitutions
    2
    """
    iterator = iter(documents)
    total = np.zeros(len(KIEvalCounts.field_names()), dtype=np.int64)
    while batch := list(islice(iterator, BATCH)):
        total += evaluate_batch(batch, value_match=value_match).counts.sum(axis=0)
    return KIEvalCounts(*total.tolist())
