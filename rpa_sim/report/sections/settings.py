"""The detail "The study": the data before review, the reviewer, the costs and their basis, the thresholds and
the targets, as the scenario set them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rpa_sim.common.formatting import count, money, number
from rpa_sim.evaluate.outcomes import table_type
from rpa_sim.report.html import escape, table
from rpa_sim.report.wording import basis_text, cost_basis, unit_suffix

if TYPE_CHECKING:
    from rpa_sim.study.result import StudySummary

__all__ = ["settings_section"]

def settings_section(summary: StudySummary, metric: str, task: str) -> list[str]:
    data = summary.data
    rows = [(label, _data_value(getattr(data, name))) for name, label in table_type(summary.task).summary_labels]
    reviewer = summary.reviewer
    reviewer_rows = [
        ("misses an error with probability", number(reviewer.miss_rate)),
        ("breaks a right prediction with probability", number(reviewer.false_correction_rate)),
        ("seconds per reviewed item", number(reviewer.seconds_per_item, 1)),
        ("seconds per opened document", number(reviewer.seconds_per_document, 1)),
    ]
    parts = [
        "<h2>The study</h2>",
        '<p class="explain">A model reads documents and gives each prediction a confidence. A review policy '
        "decides, from a threshold τ, which predictions a person checks and which go through automatically. "
        f"Checking more raises the {escape(metric)} of the output (its quality after correction) but costs "
        "review time. This report compares the policies over every threshold.</p>",
        "<h3>Data</h3>",
        f'<p class="explain">The predictions as the model made them, before any review ({escape(task)}).</p>',
        table(["figure", "value"], rows, table_id="data"),
        "<h3>Reviewer</h3>",
        '<p class="explain">The simulated person who checks routed predictions: not perfect, and not free.</p>',
        table(["setting", "value"], reviewer_rows, table_id="reviewer"),
        "<h3>Costs</h3>",
    ]
    costs = summary.costs
    if costs is None:
        parts.append('<p class="explain">Costs were not set for this scenario: no money figures.</p>')
    else:
        cost_rows = [(label, money(amount)) for amount, label in (
            (costs.per_review, "per reviewed item"), (costs.per_document, "per opened document"),
            (costs.hourly_rate, "reviewer's hourly rate"), (costs.per_residual_error, "per error left in the output"))
            if amount is not None]
        currency = costs.currency
        unit, _, volume = cost_basis(summary)
        per_day = "" if volume is None else f" and, where said, per day at {volume:,.0f} {unit} a day"
        parts += ['<p class="explain" id="cost-basis">What one review and one error left in the output cost, in '
                  + ("one currency (not named in the scenario)" if currency is None else escape(currency))
                  + "; review prices not given are the reviewer's seconds at the hourly rate. Every total in this "
                  f"report is {escape(basis_text(summary))}{per_day}.</p>",
                  table(["cost", f"amount{unit_suffix(currency)}"], cost_rows, table_id="costs")]
    targets = ", ".join(number(t) for t in summary.targets) or "none"
    parts += [
        "<h3>Thresholds and targets</h3>",
        f'<p class="explain">Thresholds swept: <code>{escape(summary.thresholds)}</code> ("exact" means every '
        "threshold at which any decision changes). Targets, the output quality the business needs "
        f"({escape(metric)} after review): {targets}.</p>",
    ]
    return parts



def _data_value(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return count(value)
    return number(value)
