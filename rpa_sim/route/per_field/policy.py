"""Optimized per-field policies: one threshold per field, automating most while meeting a target.

A target on the post-correction metric is a linear budget on per-item costs
(derivation in ``docs/optimize.md``); :func:`rpa_sim.route.per_field.solver.optimize_thresholds`
picks the thresholds, and the result is returned as an ordinary per-field
policy, so that the sweep engine measures it like any other.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from rpa_sim.evaluate.outcomes import OutcomeTable
from rpa_sim.route.per_field.solver import optimize_thresholds
from rpa_sim.route.per_field.thresholds import PerFieldThresholds
from rpa_sim.route.policies import Policy
from rpa_sim.route.reviewer import Reviewer

__all__ = ["OptimizedPolicy", "target_costs", "optimized_policy"]


def target_costs(table: OutcomeTable, target: float, reviewer: Reviewer) -> tuple[np.ndarray, np.ndarray, float]:
    """Per-item costs when accepted and when reviewed, and the budget that meeting ``target`` allows.

    The table's :meth:`~rpa_sim.evaluate.outcomes.OutcomeTable.target_costs`: KIE,
    KIEval_Aligned^τ >= target; VQA, post-correction mean ANLS >= target, a
    budget on the ANLS shortfall ``1 - ANLS`` (both in expectation over the
    reviewer's misses and false corrections).
    """
    if not 0.0 < target <= 1.0:
        raise ValueError(f"target must be in (0, 1], got {target!r}")
    return table.target_costs(target, miss_rate=reviewer.miss_rate,
                              false_correction_rate=reviewer.false_correction_rate)


@dataclass(frozen=True)
class OptimizedPolicy:
    """The optimizer's answer for one target, and the same thresholds as a policy.

    With ``by_document_type`` the result's keys are cells ``(document type, field)``.
    """

    target: float
    policy: Policy
    result: PerFieldThresholds
    by_document_type: bool = False

    def thresholds(self) -> dict[str, Any]:
        """Per field, the threshold below which it is reviewed (None: the whole field is reviewed);
        by document type, per type and field."""
        def shown(value: float) -> float | None:
            return None if np.isinf(value) else float(value)

        if not self.by_document_type:
            return {key: shown(value) for key, value in self.result.thresholds.items()}
        cells: dict[str, dict[str, float | None]] = {}
        for (kind, field), value in self.result.thresholds.items():
            cells.setdefault(kind, {})[field] = shown(value)
        return cells


def optimized_policy(table: OutcomeTable, target: float, *, reviewer: Reviewer | None = None,
                     by_document_type: bool = False) -> OptimizedPolicy:
    """Per-field thresholds maximising auto-rate subject to the post-correction metric reaching ``target``.

    Fields are KIE keys or VQA question types; with ``by_document_type`` every
    (document type, field) cell gets its own threshold. Entity review never adds what the
    model missed, so a KIE target above what reviewing everything reaches is
    infeasible (``result.feasible`` False). Predictions without a confidence are
    reviewed (the policy sets ``missing_confidence: review``): their review
    comes out of the budget, and the thresholds are fitted to the others.
    """
    reviewer = reviewer or Reviewer()
    accepted, reviewed, budget = target_costs(table, target, reviewer)
    known = ~np.isnan(table.confidence)
    budget -= float(reviewed[~known].sum())
    missing = {} if known.all() else {"missing_confidence": "review"}
    if by_document_type:
        return _optimized_cells(table, target, accepted, reviewed, budget, known, missing)
    names = table.field_names
    # The optimizer orders fields by key. Each field's rank among the sorted names orders them alike,
    # without sorting a string per item (a third of a second on a million).
    by_name = sorted(range(len(names)), key=names.__getitem__)
    rank = np.empty(len(names), dtype=np.int64)
    rank[by_name] = np.arange(len(names))
    found = optimize_thresholds(rank[table.field_codes][known], table.confidence[known], accepted[known],
                                reviewed[known], budget=budget)
    thresholds = {names[by_name[code]]: value for code, value in found.thresholds.items()}
    policy = Policy.model_validate({
        "name": f"per-field-optimized@{target:g}",
        "description": f"Per-field thresholds fitted to reach {target:g} with the most automation.",
        "review_if": {"confidence": {"below": "sweep", "fields": thresholds}}, **missing,
    })
    return OptimizedPolicy(target, policy, replace(found, thresholds=thresholds))


def _optimized_cells(table: OutcomeTable, target: float, accepted: np.ndarray, reviewed: np.ndarray,
                     budget: float, known: np.ndarray, missing: dict[str, str]) -> OptimizedPolicy:
    """The optimizer over (document type, field) cells; the policy sets each cell within its type."""
    fields = len(table.field_names)
    cell = table.document_type_codes.astype(np.int64) * fields + table.field_codes
    found = optimize_thresholds(cell[known], table.confidence[known], accepted[known], reviewed[known], budget=budget)
    thresholds = {(table.document_types[int(code) // fields], table.field_names[int(code) % fields]): value
                  for code, value in found.thresholds.items()}
    by_type: dict[str, dict[str, float]] = {}
    for (kind, field), value in thresholds.items():
        by_type.setdefault(kind, {})[field] = value
    policy = Policy.model_validate({
        "name": f"per-type-field-optimized@{target:g}",
        "description": f"Thresholds per document type and field fitted to reach {target:g} with the most automation.",
        "review_if": {"confidence": {"below": "sweep",
                                     "document_types": {kind: {"fields": cells} for kind, cells in by_type.items()}}},
        **missing,
    })
    return OptimizedPolicy(target, policy, replace(found, thresholds=thresholds), by_document_type=True)
