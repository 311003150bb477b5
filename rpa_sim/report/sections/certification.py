"""The certified thresholds (part of the comparison): one table, the guarantee's settings and assumptions stated
once above it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rpa_sim.common.formatting import count, money, number, setting_share
from rpa_sim.report.html import table
from rpa_sim.report.wording import currency_of, unit_suffix
from rpa_sim.study.result import CertifiedThreshold, NotCertifiable

if TYPE_CHECKING:
    from rpa_sim.study.result import StudySummary

__all__ = ["certification_part"]


def certification_part(summary: StudySummary, metric: str) -> list[str]:
    has_costs = summary.costs is not None
    header = ["policy", "certified τ", "accepted calibration items", "errors among them", "upper bound",
              "held-out auto-rate", "held-out error", "auto-rate at τ", f"{metric} at τ"]
    if has_costs:
        header.append(f"cost at τ{unit_suffix(currency_of(summary))}")
    header.append("note")
    rows = []
    for policy in summary.policies:
        found = policy.certified
        if found is None:
            continue
        if isinstance(found, NotCertifiable):  # certify_policy refuses budgeted policies before testing anything
            rows.append([policy.policy, *(["-"] * (len(header) - 2)), "not certifiable: a review budget"])
            continue
        at = found.at_threshold
        row = [policy.policy, number(found.threshold), count(found.accepted_n), count(found.accepted_errors),
               number(found.upper_bound), number(found.holdout_auto_rate), number(found.holdout_error),
               number(None if at is None else at.auto_rate), number(None if at is None else at.metric)]
        if has_costs:
            row.append(money(None if at is None else at.cost))
        row.append("certified" if found.threshold is not None else "nothing passes the test")
        rows.append(row)
    # every policy is certified with the scenario's settings on the same split; a refused policy has neither
    tested = next((p.certified for p in summary.policies if isinstance(p.certified, CertifiedThreshold)), None)
    settings = ("" if tested is None else
                f" with probability at least {setting_share(1.0 - tested.delta)}, the error rate of the "
                f"auto-accepted predictions is at most {setting_share(tested.max_error)} (Learn-then-Test, "
                f"fixed sequence, tested on {tested.calibration_n:,} calibration items; the upper bound is the "
                "one-sided Clopper-Pearson bound from the accepted items and their errors)")
    return [
        "<h3>Certified thresholds</h3>",
        '<p class="explain" id="certification-assumptions">A certified threshold τ auto-accepts what the policy '
        f"would leave unreviewed at τ, and comes with a guarantee:{settings}. Every guarantee rests on the same "
        "assumptions: the calibration items and the items met in deployment are exchangeable (same model, same "
        "kind of documents, same definition of an error); the error rate of auto-accepted items does not rise as "
        "the threshold gets stricter; and auto-accepted items count as independent draws, which fields of one "
        "document are not, so read the guarantee as approximate when errors cluster within documents. The "
        "held-out columns check τ on the rest of the data and are not part of the guarantee; the last columns are "
        "the policy's figures at τ on all the data. A policy with a review budget is not certifiable: the budget "
        "can force predictions through unreviewed, whatever the threshold.</p>",
        table(header, rows, table_id="certification"),
    ]

