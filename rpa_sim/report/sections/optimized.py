"""The detail "Optimized per-field thresholds": a threshold per field for each reachable target, against the
best single threshold."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from rpa_sim.common.formatting import money, number
from rpa_sim.report.html import escape, table
from rpa_sim.report.wording import currency_of, unit_suffix

if TYPE_CHECKING:
    from rpa_sim.study.result import OptimizedThresholds, StudySummary

__all__ = ["optimized_section"]


def optimized_section(summary: StudySummary, metric: str) -> list[str]:
    parts = [
        "<h2>Optimized per-field thresholds</h2>",
        '<p class="explain">Instead of one threshold for all fields, each field (for questions: each question '
        "type) gets its own, chosen to automate as much as possible while meeting the target. \"-\" means the "
        "field is always reviewed. The last rows compare with the best single threshold.</p>",
    ]
    optimized = summary.optimized_per_field
    if not optimized:
        parts.append('<p class="explain">No targets were set, so nothing was optimized.</p>')
        return parts
    if not summary.data.predictions:
        parts.append('<p class="explain">No predictions, so no field has a threshold to optimize.</p>')
        return parts
    feasible = {target: entry for target, entry in optimized.items() if entry.feasible}
    for target, entry in optimized.items():
        if not entry.feasible:
            parts.append(f'<p class="explain">{escape(metric)} {target} cannot be reached by reviewing alone.</p>')
    if not feasible:
        return parts
    by_field = [_by_field(entry) for entry in feasible.values()]
    fields = sorted({field for thresholds in by_field for field in thresholds})
    rows = [[field, *(number(thresholds.get(field)) for thresholds in by_field)] for field in fields]
    rows.append(["auto-rate, per-field thresholds", *(number(entry.auto_rate) for entry in feasible.values())])
    rows.append([f"{metric}, per-field thresholds", *(number(entry.metric) for entry in feasible.values())])
    if summary.costs is not None:
        rows.append([f"cost{unit_suffix(currency_of(summary))}, per-field thresholds",
                     *(money(entry.cost) for entry in feasible.values())])
    single = [entry.best_single_threshold for entry in feasible.values()]
    rows.append(["auto-rate, best single threshold", *(number(None if s is None else s.auto_rate) for s in single)])
    rows.append(["best single threshold", *(number(None if s is None else s.threshold) for s in single)])
    parts.append(table(["field", *(f"target {t}" for t in feasible)], rows, table_id="optimized"))
    return parts



def _by_field(entry: OptimizedThresholds) -> dict[str, float | None]:
    """A feasible target's threshold per field. The study optimises per field, not per document type and field
    (:func:`rpa_sim.study.run.run_scenario` never asks for ``by_document_type``), so no value is a map."""
    return {field: threshold for field, threshold in (entry.thresholds or {}).items()
            if not isinstance(threshold, Mapping)}
