"""KIEval of a batch of documents at once: every entity of the batch in numpy columns, matched in bulk.

:func:`evaluate_batch` gives what :func:`rpa_sim.evaluate.metrics.kieval.evaluate_document`
gives for each document of a batch (the same counts, labels, corrections,
additions and group pairs), in columns. Entities are read once into flat
columns (documents, groups, key and value codes); what a document's groups and
keys share is counted for the whole batch with sorts and searches; only what must be
decided per document is: the assignment of groups that compete for one another
(scipy's ``linear_sum_assignment``, only where a block's best pairs are not
plain), and the keys whose values repeat within a pair of groups (the most
confident copies are the correct ones, the leftovers paired by similarity).
The similarities those need are computed with one vectorised call for the
whole batch (:func:`rpa_sim.evaluate.metrics.text.nls_pairs`). The rules are
those of METRICS.md §3, as ``docs/metrics/kieval.md`` words them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from operator import attrgetter
from typing import Any, Literal

import numpy as np

from rpa_sim.evaluate.metrics.kieval_counts import CORRECT, DELETION, SUBSTITUTION

__all__ = ["BATCH", "CORRECT", "SUBSTITUTION", "DELETION", "COUNT_NAMES", "BatchOutcome", "evaluate_batch"]

#: Documents evaluated at once by :func:`~rpa_sim.evaluate.metrics.kieval.kieval` and by the KIE outcome table:
#: enough that the per-batch work is small beside the per-entity work.
BATCH = 1024
#: The per-document counts of :attr:`BatchOutcome.counts`, in column order
#: (:class:`rpa_sim.evaluate.metrics.kieval_counts.KIEvalCounts`'s fields, tested).
COUNT_NAMES = ("documents", "entities_gt", "entities_pred", "tp", "substitutions", "additions", "deletions",
               "groups_gt", "groups_pred", "groups_paired", "groups_tp", "tp_grouping_blind", "ignored_empty")

_FIELDS = attrgetter("key", "value")
_PREDICTED_FIELDS = attrgetter("key", "value", "confidence", "grounding")
# Weights of competing groups are exact in float64 (as scipy reads them) below this; past it they are built from
# Python integers and rounded once, as a matrix of Python integers is.
_EXACT = 2**52


@dataclass(frozen=True)
class BatchOutcome:
    """KIEval of a batch of documents, in columns.

    Predicted entities with a non-empty value, in document order and, within
    a document, in record order (the non-grouped first, then each group's):
    ``document`` (index in the batch), ``group`` (0 = non-grouped), ``key``
    (index into ``keys``), ``values`` (as given), ``confidences`` and
    ``groundings`` (as given, None where absent), ``labels`` (:data:`CORRECT`,
    :data:`SUBSTITUTION`, :data:`DELETION`) and ``corrections`` (the value a
    reviewer writes; None for a deletion). Missed ground-truth entities
    (additions), in the order a document lists them: ``addition_document``,
    ``addition_key``, ``addition_group`` (the ground truth's group),
    ``addition_values``. ``counts``: a row per document, columns
    :data:`COUNT_NAMES`. ``pairs``: rows of (document, ground-truth group,
    predicted group), each document's (0, 0) first, then by ground-truth group.
    """

    documents: int
    keys: tuple[str, ...]
    document: np.ndarray
    group: np.ndarray
    key: np.ndarray
    values: list[str]
    confidences: list[float | None]
    groundings: list[float | None]
    labels: np.ndarray
    corrections: list[str | None]
    addition_document: np.ndarray
    addition_key: np.ndarray
    addition_group: np.ndarray
    addition_values: list[str]
    counts: np.ndarray
    pairs: np.ndarray


def _fold(value: str) -> str:
    return " ".join(value.split()).casefold()


class _Codes:
    """Integer codes of the strings of a batch, in order of first appearance."""

    def __init__(self) -> None:
        self.codes: dict[Any, int] = {}

    def of(self, items: Sequence[Any]) -> np.ndarray:
        codes = self.codes
        for item in dict.fromkeys(items):  # the distinct items only, in order of first appearance
            if item not in codes:
                codes[item] = len(codes)
        return np.fromiter(map(codes.__getitem__, items), dtype=np.int64, count=len(items))


class _Flat:
    """One side of every document of a batch: its groups (0 = non-grouped) and its non-empty entities, flat.

    Entities are in document order, then group order, then record order; ``j``
    below is an entity's index in these columns, ``group_id`` a group's index
    among every group of the batch.
    """

    def __init__(self, extractions: Sequence[Any], value_match: str, *, predicted: bool, keys: _Codes,
                 values: _Codes, categories: _Codes) -> None:
        read = _PREDICTED_FIELDS if predicted else _FIELDS
        lists: list[Sequence[Any]] = []
        names: list[str | None] = []
        per_document: list[int] = []
        for extraction in extractions:
            groups = extraction.groups
            per_document.append(len(groups) + 1)
            lists.append(extraction.entities)
            lists.extend(group.entities for group in groups)
            names.append(None)
            names.extend(group.name for group in groups)
        sizes = list(map(len, lists))
        rows = list(map(read, chain.from_iterable(lists)))
        columns = list(zip(*rows)) or [()] * (4 if predicted else 2)
        all_keys = keys.of(columns[0])
        raw: Sequence[str] = columns[1]
        group_count = len(sizes)
        self.groups_per_document = np.array(per_document, dtype=np.int64)
        self.group_document = np.repeat(np.arange(len(per_document)), self.groups_per_document)
        first_group = (np.cumsum(self.groups_per_document) - self.groups_per_document).astype(np.int64)
        self.group_local = np.arange(group_count) - first_group[self.group_document]
        all_sizes = np.array(sizes, dtype=np.int64)
        row_group = np.repeat(np.arange(group_count), all_sizes)
        self.category = self._categories(names, all_keys, row_group, all_sizes, keys, categories)
        kept_rows = np.fromiter(map(bool, map(str.strip, raw)), dtype=bool, count=len(raw))
        every_row_kept = bool(kept_rows.all())
        ignored = np.bincount(self.group_document[row_group[~kept_rows]], minlength=len(per_document))
        self.ignored = ignored.astype(np.int64)
        if every_row_kept:
            self.raw: list[str] = list(raw)
            self.key = all_keys
            self.group_id = row_group
            kept_columns = columns
        else:
            kept_index = np.flatnonzero(kept_rows).tolist()
            kept_columns = [tuple(column[i] for i in kept_index) for column in columns]
            self.raw = list(kept_columns[1])
            self.key = all_keys[kept_rows]
            self.group_id = row_group[kept_rows]
        self.confidences: list[float | None] = list(kept_columns[2]) if predicted else []
        self.groundings: list[float | None] = list(kept_columns[3]) if predicted else []
        compared = [_fold(value) for value in self.raw] if value_match == "normalized" else self.raw
        self.compared: list[str] = compared
        self.value = values.of(compared)
        self.document = self.group_document[self.group_id]
        self.sizes = np.bincount(self.group_id, minlength=group_count).astype(np.int64)
        self.entities_per_document = np.bincount(self.document, minlength=len(per_document)).astype(np.int64)

    @staticmethod
    def _categories(names: list[str | None], all_keys: np.ndarray, row_group: np.ndarray, all_sizes: np.ndarray,
                    keys: _Codes, categories: _Codes) -> np.ndarray:
        """Each group's category code (-1: none): its name, else its keys' shared prefix before the first ``.``
        (:func:`rpa_sim.evaluate.metrics.kieval.group_category`; entities with an empty value count)."""
        named = categories.of(names)
        none_code = categories.codes.get(None)
        if none_code is not None:
            named[named == none_code] = -1
        unnamed = np.flatnonzero(named == -1)
        if not len(unnamed):
            return named
        # the prefix of every key met so far, coded as categories (-1 for a key without a '.')
        key_names = list(keys.codes)
        prefixes = np.array([categories.codes.setdefault(prefix, len(categories.codes)) if "." in key else -1
                             for key in key_names for prefix in (key.split(".", 1)[0],)], dtype=np.int64)
        row_prefix = prefixes[all_keys] if len(all_keys) else np.zeros(0, dtype=np.int64)
        # the smallest and largest prefix of each group: one prefix when they agree
        sentinel = np.iinfo(np.int64).max
        low = np.full(len(names), sentinel, dtype=np.int64)
        high = np.full(len(names), -2, dtype=np.int64)
        np.minimum.at(low, row_group, row_prefix)
        np.maximum.at(high, row_group, row_prefix)
        agreed = np.where((low == high) & (all_sizes > 0), low, -1)
        category = named.copy()
        category[unnamed] = agreed[unnamed]
        return category


def _join_counts(left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct items of ``left`` (int64 codes), their counts there, and their counts in ``right``."""
    items, counts = np.unique(left, return_counts=True)
    other, other_counts = np.unique(right, return_counts=True)
    found = np.searchsorted(other, items)
    found = np.minimum(found, max(len(other) - 1, 0))
    present = (other[found] == items) if len(other) else np.zeros(len(items), dtype=bool)
    return items, counts, np.where(present, other_counts[found] if len(other) else 0, 0)


def _overlaps(gt_groups: np.ndarray, gt_items: np.ndarray, pred_groups: np.ndarray, pred_items: np.ndarray,
              row_group: np.ndarray, col_group: np.ndarray, scale: int) -> np.ndarray:
    """The size of the multiset intersection of the items of each (ground-truth group, predicted group) candidate."""
    if not len(row_group):
        return np.zeros(0, dtype=np.int64)
    gt_code, gt_counts = np.unique(gt_groups * scale + gt_items, return_counts=True)
    pred_code, pred_counts = np.unique(pred_groups * scale + pred_items, return_counts=True)
    gt_of = gt_code // scale
    # each candidate with each distinct item of its ground-truth group
    first = np.searchsorted(gt_of, row_group, side="left")
    last = np.searchsorted(gt_of, row_group, side="right")
    lengths = last - first
    candidate = np.repeat(np.arange(len(row_group)), lengths)
    offsets = np.cumsum(lengths) - lengths
    position = first[candidate] + (np.arange(len(candidate)) - offsets[candidate])
    wanted = col_group[candidate] * scale + gt_code[position] % scale
    found = np.searchsorted(pred_code, wanted)
    if len(pred_code):
        found = np.minimum(found, len(pred_code) - 1)
        there = np.where(pred_code[found] == wanted, pred_counts[found], 0)
    else:
        there = np.zeros(len(wanted), dtype=np.int64)
    common = np.minimum(gt_counts[position], there)
    return np.bincount(candidate, weights=common, minlength=len(row_group)).astype(np.int64)


def _pair_groups(gt: _Flat, pred: _Flat, key_scale: int, pair_scale: int) -> tuple[np.ndarray, np.ndarray]:
    """The group pairs of every document (METRICS.md §3.2) as global group ids, and whether each pair's groups
    hold the same (key, value) pairs; group 0 with group 0 included."""
    documents = len(gt.groups_per_document)
    gt_zero = (np.cumsum(gt.groups_per_document) - gt.groups_per_document).astype(np.int64)
    pred_zero = (np.cumsum(pred.groups_per_document) - pred.groups_per_document).astype(np.int64)
    # every group but 0 is in a block: its category's, or, in a document where a group has none, the document's
    gt_rest = np.flatnonzero(gt.group_local > 0)
    pred_rest = np.flatnonzero(pred.group_local > 0)
    uncategorised = np.zeros(documents, dtype=bool)
    uncategorised[gt.group_document[gt_rest][gt.category[gt_rest] == -1]] = True
    uncategorised[pred.group_document[pred_rest][pred.category[pred_rest] == -1]] = True
    span = int(max(gt.category.max(initial=0), pred.category.max(initial=0))) + 2

    def block_of(flat: _Flat, rest: np.ndarray) -> np.ndarray:
        document = flat.group_document[rest]
        return document * span + np.where(uncategorised[document], 0, flat.category[rest] + 1)

    gt_block, pred_block = block_of(gt, gt_rest), block_of(pred, pred_rest)
    gt_order, pred_order = np.argsort(gt_block, kind="stable"), np.argsort(pred_block, kind="stable")
    gt_rest, gt_block = gt_rest[gt_order], gt_block[gt_order]
    pred_rest, pred_block = pred_rest[pred_order], pred_block[pred_order]
    low = np.searchsorted(pred_block, gt_block, side="left")
    high = np.searchsorted(pred_block, gt_block, side="right")
    lengths = high - low
    candidate_row = np.repeat(np.arange(len(gt_rest)), lengths)
    offsets = (np.cumsum(lengths) - lengths).astype(np.int64)
    candidate_col = low[candidate_row] + (np.arange(len(candidate_row)) - offsets[candidate_row])
    row_group, col_group = gt_rest[candidate_row], pred_rest[candidate_col]
    same = _overlaps(gt.group_id, gt.key * pair_scale + gt.value, pred.group_id, pred.key * pair_scale + pred.value,
                     row_group, col_group, key_scale * pair_scale)
    shared_keys = _overlaps(gt.group_id, gt.key, pred.group_id, pred.key, row_group, col_group, key_scale)
    identical = (same == gt.sizes[row_group]) & (same == pred.sizes[col_group])
    block = gt_block[candidate_row]

    chosen: list[np.ndarray] = []
    if len(block):
        starts = np.flatnonzero(np.concatenate([[True], block[1:] != block[:-1]]))
        stops = np.append(starts[1:], len(block))
        gt_low = np.searchsorted(gt_block, block[starts], side="left")
        gt_high = np.searchsorted(gt_block, block[starts], side="right")
        rows_in_block = gt_high - gt_low
        cols_in_block = (stops - starts) // rows_in_block
        document = block[starts] // span
        plain = (rows_in_block == 1) & (cols_in_block == 1) & ~uncategorised[document]
        chosen.append(starts[plain])
        contested = np.flatnonzero(~plain)
        if len(contested):
            chosen.append(_contested(gt, pred, row_group, col_group, same, shared_keys, identical, starts[contested],
                                     rows_in_block[contested], cols_in_block[contested], document[contested]))
    picked = np.sort(np.concatenate(chosen)) if chosen else np.zeros(0, dtype=np.int64)
    pair_gt = np.concatenate([gt_zero, row_group[picked]])
    pair_pred = np.concatenate([pred_zero, col_group[picked]])
    pair_identical = np.concatenate([np.zeros(documents, dtype=bool), identical[picked]])
    order = np.lexsort((gt.group_local[pair_gt], gt.group_document[pair_gt]))
    return np.column_stack([pair_gt[order], pair_pred[order]]), pair_identical[order]


def _contested(gt: _Flat, pred: _Flat, row_group: np.ndarray, col_group: np.ndarray, same: np.ndarray,
               shared_keys: np.ndarray, identical: np.ndarray, starts: np.ndarray, rows: np.ndarray,
               cols: np.ndarray, document: np.ndarray) -> np.ndarray:
    """The candidates chosen in the blocks where groups compete, by maximum total weight.

    One integer weight orders the criteria lexicographically: first as many
    pairs of one category as possible, then the largest total of identical
    pairs S, then the most substitutions (the spec's tie rule), then the most
    identical groups (so that group-level counts do not depend on order).
    Each scale exceeds the largest total of the criteria below it.
    """
    sizes = rows * cols
    member = np.repeat(np.arange(len(starts)), sizes)
    offsets = (np.cumsum(sizes) - sizes).astype(np.int64)
    index = starts[member] + (np.arange(len(member)) - offsets[member])
    entity_scale = (gt.entities_per_document + pred.entities_per_document + 1)[document]
    identical_scale = np.minimum(rows, cols) + 1
    substitutions = shared_keys[index] - same[index]
    gt_category, pred_category = gt.category[row_group[index]], pred.category[col_group[index]]
    apart = (gt_category != pred_category) & (gt_category != -1) & (pred_category != -1)
    largest = int(entity_scale.max()) ** 2 * int(identical_scale.max()) ** 2 * 4
    if largest < _EXACT:
        es, ids = entity_scale[member], identical_scale[member]
        weight = ((es * es + 1) * ids * ids + (same[index] * es + substitutions) * ids
                  + identical[index]).astype(np.float64)
    else:  # Python integers, rounded to float64 once, for documents too large for exact int64 sums
        es, ids = entity_scale[member].astype(object), identical_scale[member].astype(object)
        exact = ((es * es + 1) * ids * ids + (same[index].astype(object) * es + substitutions.astype(object)) * ids
                 + identical[index].astype(object))
        weight = np.array(exact.tolist(), dtype=np.float64)
    weight[apart] = 0.0
    plain, best = _unique_optima(weight, member, offsets, rows, cols)
    chosen = [index[best[weight[best] > 0]]]
    if not plain.all():
        # scipy only for the blocks whose best pairs collide or tie
        from rpa_sim.evaluate.metrics.assignment import linear_sum_assignment  # noqa: PLC0415

        for block in np.flatnonzero(~plain).tolist():
            start, height, width = int(offsets[block]), int(rows[block]), int(cols[block])
            matrix = weight[start:start + height * width].reshape(height, width)
            row_ind, col_ind = linear_sum_assignment(matrix, maximize=True)
            kept = matrix[row_ind, col_ind] > 0
            chosen.append(starts[block] + row_ind[kept] * width + col_ind[kept])
    return np.concatenate(chosen)


def _unique_optima(weight: np.ndarray, member: np.ndarray, offsets: np.ndarray, rows: np.ndarray,
                   cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which blocks' maximum-weight assignment is plain, and the entries it takes (positions in ``weight``).

    A block's entries lie row by row from ``offsets``. When every row (every column, with more rows than
    columns) has one best entry and no two share their column (row), that assignment is the only optimum,
    scipy's too: each line is matched, and none can do better than its best.
    """
    position = np.arange(len(weight)) - offsets[member]
    width = cols[member]
    row, col = position // width, position % width
    by_rows = rows[member] <= cols[member]
    line = np.where(by_rows, row, col)  # the line each entry is on: its row, or its column
    partner = np.where(by_rows, col, row)
    # the entries grouped by (block, line), the heaviest first, then the earliest
    order = np.lexsort((position, -weight, line, member))
    key = member[order] * (int(max(rows.max(), cols.max())) + 1) + line[order]
    first = np.flatnonzero(np.concatenate([[True], key[1:] != key[:-1]]))
    group = np.cumsum(np.concatenate([[False], key[1:] != key[:-1]]))
    top = weight[order][first]
    ties = np.bincount(group, weights=weight[order] == top[group]).astype(np.int64)
    best = order[first]
    block = member[best]
    # a block is plain when each line's best is strict and no two lines share a partner
    plain = np.ones(len(offsets), dtype=bool)
    plain[block[ties > 1]] = False
    pairs = np.lexsort((partner[best], block))
    shared = (block[pairs][1:] == block[pairs][:-1]) & (partner[best][pairs][1:] == partner[best][pairs][:-1])
    plain[block[pairs][1:][shared]] = False
    return plain, best[plain[block]]


def evaluate_batch(documents: Sequence[tuple[Any, Any]], *,
                   value_match: Literal["exact", "normalized"] = "exact") -> BatchOutcome:
    """KIEval of each (ground truth, prediction) of ``documents``, in columns (:class:`BatchOutcome`).

    The same figures, labels, corrections, additions and pairs as
    :func:`rpa_sim.evaluate.metrics.kieval.evaluate_document` gives for each.

    Examples
    --------
    >>> from rpa_sim.records.models import Extraction, PredictedExtraction
    >>> gt = Extraction.model_validate({"entities": [{"key": "total", "value": "10.00"}]})
    >>> wrong, right = (PredictedExtraction.model_validate({"entities": [{"key": "total", "value": value,
    ...                                                                    "confidence": 0.5}]})
    ...                 for value in ("10.0", "10.00"))
    >>> batch = evaluate_batch([(gt, wrong), (gt, right)])
    >>> batch.labels.tolist(), batch.corrections, batch.counts[:, COUNT_NAMES.index("tp")].tolist()
    ([1, 0], ['10.00', '10.00'], [0, 1])
    """
    if value_match not in ("exact", "normalized"):
        raise ValueError(f"value_match must be 'exact' or 'normalized', got {value_match!r}")
    keys, values, categories = _Codes(), _Codes(), _Codes()
    gt = _Flat([truth for truth, _ in documents], value_match, predicted=False, keys=keys, values=values,
               categories=categories)
    pred = _Flat([prediction for _, prediction in documents], value_match, predicted=True, keys=keys, values=values,
                 categories=categories)
    count = len(documents)
    key_scale, pair_scale = max(len(keys.codes), 1), max(len(values.codes), 1)
    pairs, pair_identical = _pair_groups(gt, pred, key_scale, pair_scale)
    labels, corrections, additions = _label(gt, pred, pairs, key_scale)
    tp = np.bincount(pred.document[labels == CORRECT], minlength=count)
    substitutions = np.bincount(pred.document[labels == SUBSTITUTION], minlength=count)
    paired = np.bincount(gt.group_document[pairs[:, 0]], weights=gt.group_local[pairs[:, 0]] > 0, minlength=count)
    groups_tp = np.bincount(gt.group_document[pairs[:, 0]], weights=pair_identical & (gt.group_local[pairs[:, 0]] > 0),
                            minlength=count)
    counts = np.column_stack([
        np.ones(count, dtype=np.int64), gt.entities_per_document, pred.entities_per_document, tp, substitutions,
        gt.entities_per_document - tp - substitutions, pred.entities_per_document - tp - substitutions,
        gt.groups_per_document - 1, pred.groups_per_document - 1, paired, groups_tp,
        _blind_overlap(gt, pred, count, key_scale * pair_scale, pair_scale), gt.ignored + pred.ignored,
    ]).astype(np.int64).reshape(count, len(COUNT_NAMES))
    key_names = tuple(keys.codes)
    return BatchOutcome(
        documents=count, keys=key_names, document=pred.document.astype(np.int32),
        group=pred.group_local[pred.group_id].astype(np.int32), key=pred.key.astype(np.int32), values=pred.raw,
        confidences=pred.confidences, groundings=pred.groundings, labels=labels, corrections=corrections,
        addition_document=gt.document[additions].astype(np.int32), addition_key=gt.key[additions].astype(np.int32),
        addition_group=gt.group_local[gt.group_id[additions]].astype(np.int32),
        addition_values=[gt.raw[j] for j in additions.tolist()], counts=counts,
        pairs=np.column_stack([gt.group_document[pairs[:, 0]], gt.group_local[pairs[:, 0]],
                               pred.group_local[pairs[:, 1]]]).astype(np.int64))


def _blind_overlap(gt: _Flat, pred: _Flat, documents: int, scale: int, pair_scale: int) -> np.ndarray:
    """Per document, the size of the multiset intersection of its two sides' (key, value) pairs, whatever the
    groups: the grouping-blind true positives."""
    items, counts, other = _join_counts(gt.document * scale + gt.key * pair_scale + gt.value,
                                        pred.document * scale + pred.key * pair_scale + pred.value)
    return np.bincount(items // scale, weights=np.minimum(counts, other), minlength=documents).astype(np.int64)


def _label(gt: _Flat, pred: _Flat, pairs: np.ndarray, key_scale: int) -> tuple[np.ndarray, list[str | None],
                                                                              np.ndarray]:
    """Each predicted entity's label and correction, and the missed ground-truth entities in the order each
    document lists them (METRICS.md §3.3).

    A cell is a paired ground-truth group's key. With one entity on each side, or none on one, its outcome
    is decided for the whole batch at once; a cell with a value repeated is decided on its own (:func:`_cell`).
    """
    paired_with = np.full(len(pred.sizes), -1, dtype=np.int64)
    paired_with[pairs[:, 1]] = pairs[:, 0]
    gt_paired = np.zeros(len(gt.sizes), dtype=bool)
    gt_paired[pairs[:, 0]] = True
    pred_truth = paired_with[pred.group_id]
    pred_cell = np.where(pred_truth >= 0, pred_truth * key_scale + pred.key, -1)
    gt_cell = np.where(gt_paired[gt.group_id], gt.group_id * key_scale + gt.key, -1)
    gt_cells, gt_first, gt_count = np.unique(gt_cell, return_index=True, return_counts=True)
    if len(gt_cells) and gt_cells[0] == -1:
        gt_cells, gt_first, gt_count = gt_cells[1:], gt_first[1:], gt_count[1:]
    pred_cells, pred_count = np.unique(pred_cell[pred_cell >= 0], return_counts=True)

    def lookup(cells: np.ndarray, table: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if not len(table):
            return np.zeros(len(cells), dtype=np.int64), np.zeros(len(cells), dtype=np.int64)
        at = np.minimum(np.searchsorted(table, cells), len(table) - 1)
        return np.where((table[at] == cells) & (cells >= 0), counts[at], 0), at

    truths, truth_at = lookup(pred_cell, gt_cells, gt_count)
    predicted, _ = lookup(gt_cell, pred_cells, pred_count)
    truths_of_gt, first_at = lookup(gt_cell, gt_cells, gt_count)
    labels = np.full(len(pred.key), DELETION, dtype=np.int8)
    corrections: list[str | None] = [None] * len(pred.key)
    # one on each side: correct when the values are the same, else a substitution by the ground truth's value
    predicted_of_pred, _ = lookup(pred_cell, pred_cells, pred_count)
    single = np.flatnonzero((truths == 1) & (predicted_of_pred == 1))
    truth_of_single = gt_first[truth_at[single]]
    same = pred.value[single] == gt.value[truth_of_single]
    labels[single] = np.where(same, CORRECT, SUBSTITUTION)
    raw, gt_raw = pred.raw, gt.raw
    for i, j, correct in zip(single.tolist(), truth_of_single.tolist(), same.tolist()):
        corrections[i] = raw[i] if correct else gt_raw[j]
    # missed: a paired key predicted nowhere, or every entity of an unpaired group
    missed = (truths_of_gt >= 1) & (predicted == 0) | ~gt_paired[gt.group_id]
    # the rest: cells with a value repeated on a side and predictions on both
    crowded = np.flatnonzero((truths_of_gt >= 1) & (predicted >= 1) & ~((truths_of_gt == 1) & (predicted == 1)))
    added = [np.flatnonzero(missed)]
    if len(crowded):
        added.append(_crowded_cells(gt, pred, gt_cell, pred_cell, crowded, labels, corrections))
    additions = np.concatenate(added)
    # the order of a document's list: paired groups' keys in the order met, then unpaired groups' entities
    unpaired = ~gt_paired[gt.group_id[additions]]
    key_position = additions.copy()
    key_position[~unpaired] = gt_first[first_at[additions[~unpaired]]]
    order = np.lexsort((additions, key_position, gt.group_id[additions], unpaired, gt.document[additions]))
    return labels, corrections, additions[order]


def _crowded_cells(gt: _Flat, pred: _Flat, gt_cell: np.ndarray, pred_cell: np.ndarray, crowded: np.ndarray,
                   labels: np.ndarray, corrections: list[str | None]) -> np.ndarray:
    """Label the predictions of the cells where a value repeats; the missed ground-truth entities of those cells.

    In each cell, a value predicted more often than the ground truth has it
    is correct in its most confident copies (ties: the earlier; a copy without
    a confidence last), and copies of a ground-truth value are interchangeable
    (the last ones are the missed ones). The leftovers of both sides are then
    paired by the largest total similarity, whose scores are computed for
    every cell at once.
    """
    cells = gt_cell[crowded]
    gt_order = crowded[np.argsort(cells, kind="stable")]
    gt_cells = gt_cell[gt_order]
    # the distinct cells from the sorted ones, and the predictions in them by a search: np.isin and a plain
    # np.unique import numpy.ma in each worker (a tenth of a second of CPU, for nothing a batch needs)
    cell_ids = gt_cells[np.flatnonzero(np.diff(gt_cells, prepend=gt_cells[:1] - 1))]
    at = np.minimum(np.searchsorted(cell_ids, pred_cell), len(cell_ids) - 1)
    pred_index = np.flatnonzero(cell_ids[at] == pred_cell)
    pred_order = pred_index[np.argsort(pred_cell[pred_index], kind="stable")]
    pred_cells = pred_cell[pred_order]
    truth_bounds = np.searchsorted(gt_cells, cell_ids, side="left"), np.searchsorted(gt_cells, cell_ids, side="right")
    pred_bounds = (np.searchsorted(pred_cells, cell_ids, side="left"),
                   np.searchsorted(pred_cells, cell_ids, side="right"))
    gt_values, pred_values = gt.compared, pred.compared
    confidences = pred.confidences
    missed: list[int] = []
    leftovers: list[tuple[list[int], list[int]]] = []
    gt_list, pred_list = gt_order.tolist(), pred_order.tolist()
    for t0, t1, p0, p1 in zip(*(bound.tolist() for bound in (*truth_bounds, *pred_bounds))):
        truth, predicted = gt_list[t0:t1], pred_list[p0:p1]
        remaining: dict[str, int] = {}
        for j in truth:
            remaining[gt_values[j]] = remaining.get(gt_values[j], 0) + 1
        leftover_pred = []
        for i in sorted(predicted, key=lambda i: (confidences[i] is None, -(confidences[i] or 0.0), i)):
            if remaining.get(pred_values[i], 0) > 0:
                remaining[pred_values[i]] -= 1
                labels[i] = CORRECT
                corrections[i] = pred.raw[i]
            else:
                leftover_pred.append(i)
        leftover_pred.sort()
        leftover_gt = []
        for j in reversed(truth):
            if remaining[gt_values[j]] > 0:
                remaining[gt_values[j]] -= 1
                leftover_gt.append(j)
        leftover_gt.reverse()
        if leftover_pred and leftover_gt:
            leftovers.append((leftover_gt, leftover_pred))
        else:
            missed.extend(leftover_gt)
    missed.extend(_substitute(gt, pred, leftovers, labels, corrections))
    return np.array(missed, dtype=np.int64)


def _substitute(gt: _Flat, pred: _Flat, leftovers: list[tuple[list[int], list[int]]], labels: np.ndarray,
                corrections: list[str | None]) -> list[int]:
    """Pair each cell's leftover ground-truth and predicted values by the largest total similarity (ties: the
    earlier), as substitutions; the ground-truth values left over are missed. Every similarity needed, for all
    the cells, is computed in one call."""
    missed: list[int] = []
    left: list[str] = []
    right: list[str] = []
    for truth, predicted in leftovers:
        if len(truth) > 1 or len(predicted) > 1:
            for j in truth:
                for i in predicted:
                    left.append(gt.raw[j])
                    right.append(pred.raw[i])
    if left:
        # string distances (rapidfuzz) are imported where values are compared: reading a table never compares any
        from rpa_sim.evaluate.metrics.text import nls_pairs  # noqa: PLC0415

        scores = nls_pairs(left, right)
    else:
        scores = np.zeros(0)
    start = 0
    for truth, predicted in leftovers:
        if len(truth) == 1 and len(predicted) == 1:
            chosen = [(0, 0)]
        else:
            similarity = scores[start:start + len(truth) * len(predicted)].reshape(len(truth), len(predicted))
            start += len(truth) * len(predicted)
            if len(truth) == 1:
                chosen = [(0, int(similarity[0].argmax()))]
            elif len(predicted) == 1:
                chosen = [(int(similarity[:, 0].argmax()), 0)]
            else:
                from rpa_sim.evaluate.metrics.assignment import linear_sum_assignment  # noqa: PLC0415

                chosen = list(zip(*(index.tolist() for index in linear_sum_assignment(similarity, maximize=True))))
        matched = set()
        for r, c in chosen:
            i, j = predicted[c], truth[r]
            labels[i] = SUBSTITUTION
            corrections[i] = gt.raw[j]
            matched.add(j)
        missed.extend(j for j in truth if j not in matched)
    return missed
