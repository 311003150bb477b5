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

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import asdict, dataclass, fields
from operator import attrgetter
from typing import TYPE_CHECKING, Literal

import numpy as np

if TYPE_CHECKING:
    # the records' models (pydantic) are only named here: reading an outcome table file never imports them
    from rpa_sim.records.models import Entity, Extraction, PredictedExtraction

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

CORRECT, SUBSTITUTION, DELETION = 0, 1, 2
OUTCOME_NAMES = ("correct", "substitution", "deletion")

ValueMatch = Literal["exact", "normalized"]


def _ratio(numerator: int, denominator: int) -> float | None:
    # METRICS.md §3.5: an undefined ratio is reported as null, never as 0 or 1.
    return numerator / denominator if denominator else None


def _f1(tp: int, predicted: int, actual: int) -> float | None:
    return _ratio(2 * tp, predicted + actual)


@dataclass(frozen=True)
class KIEvalCounts:
    """Summable KIEval counts of one document or a corpus, with the derived figures.

    ``groups_*`` exclude group 0 (the non-grouped entities), as the paper's
    ``G'`` does. ``tp_grouping_blind`` is the conventional, grouping-blind
    entity TP (multiset intersection over the whole document) behind
    :attr:`grouping_blind_entity_f1`.

    Examples
    --------
    >>> c = KIEvalCounts(documents=1, entities_gt=12, entities_pred=11, tp=10, additions=2, deletions=1)
    >>> round(c.entity_f1, 4), round(c.kieval_aligned, 4)
    (0.8696, 0.7692)
    >>> KIEvalCounts().entity_f1 is None
    True
    """

    documents: int = 0
    entities_gt: int = 0
    entities_pred: int = 0
    tp: int = 0
    substitutions: int = 0
    additions: int = 0
    deletions: int = 0
    groups_gt: int = 0
    groups_pred: int = 0
    groups_paired: int = 0
    groups_tp: int = 0
    tp_grouping_blind: int = 0
    ignored_empty: int = 0

    def __add__(self, other: KIEvalCounts) -> KIEvalCounts:
        return KIEvalCounts(*(a + b for a, b in zip(self.as_tuple(), other.as_tuple())))

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """The count fields, in order (the columns of a per-document counts array)."""
        return tuple(f.name for f in fields(cls))

    def as_tuple(self) -> tuple[int, ...]:
        """The counts in :meth:`field_names` order."""
        return _read_counts(self)

    @property
    def fp(self) -> int:
        """Predicted entities that are not true positives."""
        return self.entities_pred - self.tp

    @property
    def fn(self) -> int:
        """Ground-truth entities that are not true positives."""
        return self.entities_gt - self.tp

    @property
    def precision(self) -> float | None:
        return _ratio(self.tp, self.entities_pred)

    @property
    def recall(self) -> float | None:
        return _ratio(self.tp, self.entities_gt)

    @property
    def entity_f1(self) -> float | None:
        """KIEval Entity F1: F1 of the group-matched TP (eq. 3-5)."""
        return _f1(self.tp, self.entities_pred, self.entities_gt)

    @property
    def errors(self) -> int:
        """Correction count: substitutions + additions + deletions (eq. 11)."""
        return self.substitutions + self.additions + self.deletions

    @property
    def kieval_aligned(self) -> float | None:
        """``TP / (TP + Subs + Add + Del)`` (eq. 12)."""
        return _ratio(self.tp, self.tp + self.errors)

    @property
    def group_f1(self) -> float | None:
        """KIEval Group F1 over the paired groups except group 0 (eq. 6-7)."""
        return _f1(self.groups_tp, self.groups_pred, self.groups_gt)

    @property
    def group_aligned(self) -> float | None:
        """``TP_group / (TP_group + paired-but-different + unpaired groups)`` (Fig. 2's 4/7)."""
        unpaired = self.groups_gt + self.groups_pred - 2 * self.groups_paired
        return _ratio(self.groups_tp, self.groups_paired + unpaired)

    @property
    def grouping_blind_entity_f1(self) -> float | None:
        """The conventional entity F1, blind to grouping (Fig. 2's 95.65%)."""
        return _f1(self.tp_grouping_blind, self.entities_pred, self.entities_gt)

    def to_dict(self) -> dict[str, int | float | None]:
        """The ``score --json`` keys of docs/formats.md plus the extra counts (documented additions)."""
        counts = asdict(self)
        return {
            "documents": self.documents,
            "entities_gt": self.entities_gt,
            "entities_pred": self.entities_pred,
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "substitutions": self.substitutions,
            "additions": self.additions,
            "deletions": self.deletions,
            "entity_f1": self.entity_f1,
            "group_f1": self.group_f1,
            "kieval_aligned": self.kieval_aligned,
            "group_aligned": self.group_aligned,
            "ignored_empty": self.ignored_empty,
            "precision": self.precision,
            "recall": self.recall,
            "grouping_blind_entity_f1": self.grouping_blind_entity_f1,
            **{k: counts[k] for k in ("groups_gt", "groups_pred", "groups_paired", "groups_tp")},
        }


# one C-level read of every count (dataclasses.astuple deep-copies and is slow in a hot loop)
_read_counts = attrgetter(*KIEvalCounts.field_names())


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
    confidences: list[float]
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


_FIELDS = attrgetter("key", "value")
_PREDICTED_FIELDS = attrgetter("key", "value", "confidence", "grounding")


def _fold(value: str) -> str:
    return " ".join(value.split()).casefold()


class _Group:
    """One group as matching needs it: its entity indices, multiset of pairs, and per-key counts.

    ``single_pairs`` says that no ``(key, value)`` pair occurs twice in the
    group; the multiset intersections of group matching are then set
    intersections, computed in C.
    """

    __slots__ = ("category", "members", "keys", "pairs", "single_pairs", "_key_counts")

    def __init__(self, category: str | None, members: range, keys: Sequence[str], values: Sequence[str]) -> None:
        self.category = category
        self.members = members
        self.keys = keys
        self.pairs: dict[tuple[str, str], int] = dict.fromkeys(zip(keys, values), 1)
        self.single_pairs = len(self.pairs) == len(keys)
        if not self.single_pairs:
            self.pairs = _counts(zip(keys, values))
        self._key_counts: tuple[dict[str, int], bool] | None = None

    def key_counts(self) -> tuple[dict[str, int], bool]:
        """Entities per key, and whether no key occurs twice (counted on first use: only matching needs them)."""
        if self._key_counts is None:
            counts = dict.fromkeys(self.keys, 1)
            single = len(counts) == len(self.keys)
            self._key_counts = (counts if single else _counts(self.keys), single)
        return self._key_counts

    def by_key(self) -> dict[str, list[int]]:
        """Entity indices per key, in position order."""
        grouped: dict[str, list[int]] = {}
        for i, key in zip(self.members, self.keys):
            grouped.setdefault(key, []).append(i)
        return grouped


def _counts(items: Iterable[Hashable]) -> dict:
    # a plain dict loop: Counter's construction costs more than it saves on groups this small
    counts: dict = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    return counts


class _Side:
    """One side of a document: its groups (0 = non-grouped) and its non-empty entities, flattened.

    Each entity's fields are read once here (attribute reads on the models are
    the dominant cost on large corpora): ``values`` are the compared form,
    ``raw`` the values as given; the predicted side also keeps confidences and groundings.
    """

    __slots__ = ("groups", "keys", "values", "raw", "confidences", "groundings", "ignored")

    def __init__(self, groups: Sequence[tuple[str | None, Sequence[Entity]]], value_match: ValueMatch, *,
                 predicted: bool) -> None:
        read = _PREDICTED_FIELDS if predicted else _FIELDS
        rows = [list(map(read, entities)) for _, entities in groups]
        all_rows = [row for group_rows in rows for row in group_rows]
        columns = list(zip(*all_rows)) or [()] * (4 if predicted else 2)
        self.ignored = 0
        if not all(map(str.strip, columns[1])):
            kept = [[row for row in group_rows if row[1].strip()] for group_rows in rows]
            self.ignored = len(all_rows) - sum(map(len, kept))
            columns = list(zip(*(row for group_rows in kept for row in group_rows))) or [()] * len(columns)
        else:
            kept = rows
        self.keys: list[str] = list(columns[0])
        self.raw: list[str] = list(columns[1])
        self.values = [_fold(v) for v in self.raw] if value_match == "normalized" else self.raw
        self.confidences: list[float] = list(columns[2]) if predicted else []
        self.groundings: list[float | None] = list(columns[3]) if predicted else []
        self.groups: list[_Group] = []
        start = 0
        for position, ((name, _), group_rows, kept_rows) in enumerate(zip(groups, rows, kept)):
            stop = start + len(kept_rows)
            # group 0 (non-grouped) is paired by rule, not by category; empty values count for the category
            category = None if position == 0 else group_category(name, (row[0] for row in group_rows))
            self.groups.append(_Group(category, range(start, stop), self.keys[start:stop], self.values[start:stop]))
            start = stop

    def common_pairs(self, other: _Side) -> int:
        """Size of the multiset intersection of the two sides' pairs, whatever their groups."""
        available: dict[tuple[str, str], int] = {}
        for pair in zip(self.keys, self.values):
            available[pair] = available.get(pair, 0) + 1
        common = 0
        for pair in zip(other.keys, other.values):
            left = available.get(pair)
            if left:
                available[pair] = left - 1
                common += 1
        return common


def _overlap(a: dict, b: dict) -> int:
    """Size of the intersection of two multisets given as counts."""
    common = 0
    for item, n in a.items():
        m = b.get(item)
        if m:
            common += n if n < m else m
    return common


def _pair_groups(gt: _Side, pred: _Side) -> list[tuple[int, int]]:
    """Pairs of (gt group, predicted group), group 0 first, by the tie rule of METRICS.md §3.2.

    Categories are disjoint blocks, so each is matched on its own; groups
    without a category may pair with any group, which joins every block into one.
    """
    pairs = [(0, 0)]
    blocks: dict[str | None, tuple[list[int], list[int]]] = {}
    for side, groups in enumerate((gt.groups, pred.groups)):
        for index in range(1, len(groups)):
            blocks.setdefault(groups[index].category, ([], []))[side].append(index)
    if None in blocks:
        if len(gt.groups) > 1 and len(pred.groups) > 1:
            pairs.extend(_match_block(gt, pred, list(range(1, len(gt.groups))), list(range(1, len(pred.groups)))))
        return pairs
    for rows, cols in blocks.values():
        if len(rows) == 1 and len(cols) == 1:
            pairs.append((rows[0], cols[0]))
        elif rows and cols:
            pairs.extend(_match_block(gt, pred, rows, cols))
    pairs[1:] = sorted(pairs[1:])
    return pairs


def _match_block(gt: _Side, pred: _Side, rows: list[int], cols: list[int]) -> list[tuple[int, int]]:
    # Lexicographic objective as one integer weight: first as many same-category pairs as
    # possible, then the largest total S, then the most substitutions (the spec's tie rule),
    # then the most identical groups (so that group-level counts are order independent too).
    # Each scale exceeds the largest possible total of the criterion below it.
    entity_scale = len(gt.keys) + len(pred.keys) + 1
    identical_scale = min(len(rows), len(cols)) + 1
    bonus = (entity_scale * entity_scale + 1) * identical_scale * identical_scale
    predicted = [(pred.groups[p], *pred.groups[p].key_counts()) for p in cols]
    weight = []
    for g in rows:
        gt_group = gt.groups[g]
        gt_keys, gt_single = gt_group.key_counts()
        row = []
        for pred_group, pred_keys, pred_single in predicted:
            if gt_group.category != pred_group.category and None not in (gt_group.category, pred_group.category):
                row.append(0)
                continue
            # S (identical pairs), and the substitutions sum_e min(FP^e, FN^e): per key,
            # min(FP, FN) = min(N_gt, N_pred) - S^e, so they are the keys' overlap less S.
            if gt_group.single_pairs and pred_group.single_pairs:
                same = len(gt_group.pairs.keys() & pred_group.pairs.keys())
            else:
                same = _overlap(gt_group.pairs, pred_group.pairs)
            if gt_single and pred_single:
                subs = len(gt_keys.keys() & pred_keys.keys()) - same
            else:
                subs = _overlap(gt_keys, pred_keys) - same
            row.append(bonus + (same * entity_scale + subs) * identical_scale + (gt_group.pairs == pred_group.pairs))
        weight.append(row)
    # scipy only when groups compete: reading an outcome table never pays for its import
    from scipy.optimize import linear_sum_assignment  # noqa: PLC0415

    matrix = np.array(weight, dtype=np.float64)
    row_ind, col_ind = linear_sum_assignment(matrix, maximize=True)
    return [(rows[r], cols[c]) for r, c in zip(row_ind.tolist(), col_ind.tolist()) if weight[r][c]]


class _Labels:
    """The per-document outcome being filled in, pair by pair."""

    __slots__ = ("gt", "pred", "confidences", "labels", "corrections", "additions", "tp", "substitutions")

    def __init__(self, gt: _Side, pred: _Side) -> None:
        self.gt, self.pred = gt, pred
        self.confidences = pred.confidences
        # a bytearray, not an int8 array: item assignment on numpy arrays costs more than the whole label
        self.labels = bytearray([DELETION]) * len(pred.keys)
        self.corrections: list[str | None] = [None] * len(pred.keys)
        self.additions: list[Addition] = []
        self.tp = self.substitutions = 0

    def correct(self, i: int) -> None:
        self.labels[i] = CORRECT
        self.corrections[i] = self.pred.raw[i]
        self.tp += 1

    def add_unpaired(self, g: int) -> None:
        raw = self.gt.raw
        self.additions.extend(Addition(self.gt.keys[j], raw[j], g) for j in self.gt.groups[g].members)

    def pair(self, g: int, p: int) -> None:
        gt_group, pred_group = self.gt.groups[g], self.pred.groups[p]
        if gt_group.pairs == pred_group.pairs:
            for i in pred_group.members:
                self.correct(i)
            return
        predicted = pred_group.by_key()
        for key, truth in gt_group.by_key().items():
            self._key(key, g, truth, predicted.get(key, ()))

    def _key(self, key: str, g: int, truth: list[int], predicted: Sequence[int]) -> None:
        gt_values, pred_values = self.gt.values, self.pred.values
        if len(truth) == 1 and len(predicted) <= 1:
            # The common case, with the same outcome as the general rule below.
            j = truth[0]
            if not predicted:
                self.additions.append(Addition(key, self.gt.raw[j], g))
            elif pred_values[predicted[0]] == gt_values[j]:
                self.correct(predicted[0])
            else:
                self.labels[predicted[0]] = SUBSTITUTION
                self.corrections[predicted[0]] = self.gt.raw[j]
                self.substitutions += 1
            return
        remaining: dict[str, int] = {}
        for j in truth:
            remaining[gt_values[j]] = remaining.get(gt_values[j], 0) + 1
        # When a value is predicted more often than the ground truth has it, the
        # most confident copies are the correct ones (ties: earlier position; a
        # copy without a confidence, allowed by a policy's missing_confidence, comes last).
        leftover_pred = []
        for i in sorted(predicted, key=lambda i: (self.confidences[i] is None, -(self.confidences[i] or 0.0), i)):
            if remaining.get(pred_values[i], 0) > 0:
                remaining[pred_values[i]] -= 1
                self.correct(i)
            else:
                leftover_pred.append(i)
        leftover_pred.sort()
        # Copies of a value are interchangeable: the last ones are the unmatched ones.
        leftover_gt = []
        for j in reversed(truth):
            if remaining[gt_values[j]] > 0:
                remaining[gt_values[j]] -= 1
                leftover_gt.append(j)
        leftover_gt.reverse()
        unmatched_gt = set(leftover_gt)
        if leftover_pred and leftover_gt:
            for j, i in _substitution_pairs([self.gt.raw[j] for j in leftover_gt],
                                            [self.pred.raw[i] for i in leftover_pred]):
                self.labels[leftover_pred[i]] = SUBSTITUTION
                self.corrections[leftover_pred[i]] = self.gt.raw[leftover_gt[j]]
                unmatched_gt.discard(leftover_gt[j])
                self.substitutions += 1
        self.additions.extend(Addition(key, self.gt.raw[j], g) for j in leftover_gt if j in unmatched_gt)


def _substitution_pairs(truth: list[str], predicted: list[str]) -> list[tuple[int, int]]:
    """Pair leftover ground-truth and predicted values of one key by maximum total NLS.

    Ties go to the earlier position; a single value on either side is the
    common case and needs no assignment solver.
    """
    if len(truth) == 1 and len(predicted) == 1:
        return [(0, 0)]
    # string distances (rapidfuzz) are imported where values are compared: reading a table never compares any
    from rpa_sim.evaluate.metrics.text import nls_bounded, nls_matrix  # noqa: PLC0415

    if len(truth) == 1:
        scores = [nls_bounded(truth[0], value) for value in predicted]
        return [(0, scores.index(max(scores)))]
    if len(predicted) == 1:
        scores = [nls_bounded(value, predicted[0]) for value in truth]
        return [(scores.index(max(scores)), 0)]
    from scipy.optimize import linear_sum_assignment  # noqa: PLC0415

    similarity = nls_matrix(truth, predicted)
    return list(zip(*(index.tolist() for index in linear_sum_assignment(similarity, maximize=True))))


def _groups_of(extraction: Extraction | PredictedExtraction) -> list[tuple[str | None, Sequence[Entity]]]:
    return [(None, extraction.entities)] + [(group.name, group.entities) for group in extraction.groups]


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
    if value_match not in ("exact", "normalized"):
        raise ValueError(f"value_match must be 'exact' or 'normalized', got {value_match!r}")
    gt = _Side(_groups_of(ground_truth), value_match, predicted=False)
    pred = _Side(_groups_of(prediction), value_match, predicted=True)
    pairs = _pair_groups(gt, pred)
    outcome = _Labels(gt, pred)
    groups_tp = 0
    for g, p in pairs:
        outcome.pair(g, p)
        if g and gt.groups[g].pairs == pred.groups[p].pairs:
            groups_tp += 1
    paired_gt = {g for g, _ in pairs}
    for g in range(1, len(gt.groups)):
        if g not in paired_gt:
            outcome.add_unpaired(g)

    # each group's entities are numbered consecutively
    groups = np.array([g for g, group in enumerate(pred.groups) for _ in group.members], dtype=np.int32)
    n_gt, n_pred = len(gt.keys), len(pred.keys)
    counts = KIEvalCounts(
        documents=1,
        entities_gt=n_gt,
        entities_pred=n_pred,
        tp=outcome.tp,
        substitutions=outcome.substitutions,
        additions=n_gt - outcome.tp - outcome.substitutions,
        deletions=n_pred - outcome.tp - outcome.substitutions,
        groups_gt=len(gt.groups) - 1,
        groups_pred=len(pred.groups) - 1,
        groups_paired=len(pairs) - 1,
        groups_tp=groups_tp,
        tp_grouping_blind=gt.common_pairs(pred),
        ignored_empty=gt.ignored + pred.ignored,
    )
    labels = np.frombuffer(outcome.labels, dtype=np.int8).copy()
    return DocumentOutcome(counts, pred.keys, pred.raw, pred.confidences, pred.groundings, groups, labels,
                           outcome.corrections, outcome.additions, pairs)


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
    total = KIEvalCounts()
    for ground_truth, prediction in documents:
        total = total + evaluate_document(ground_truth, prediction, value_match=value_match).counts
    return total
