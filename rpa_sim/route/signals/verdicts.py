"""Verdicts on a signal in words: ``degenerate``, ``undiscriminating``, ``miscalibrated``, each by a stated rule.

The rules and their numbers (``docs/signals.md`` repeats them):

- ``degenerate``: the values fill fewer than :data:`FEWEST_BINS` of the
  :data:`BINS` equal-width bins of the reliability table, counted as the
  effective number of bins ``1 / sum(share_b^2)`` (the inverse Simpson index
  of the bins' shares: ``m`` bins equally full count ``m``, one bin holding 90%
  counts about 1.2). Almost everything then sits in one bin (a token
  log-probability piled up near 1): a threshold has little to spread, and the
  few values outside the pile decide every routing.
- ``undiscriminating``: the AUROC's DeLong 95% interval holds 0.5 (or cannot
  be drawn: fewer than two errors or two correct values): the signal is not
  shown to rank errors better than chance.
- ``miscalibrated``: the ECE (the same :data:`BINS` equal-width bins) is above
  :data:`ECE_BOUND`: read as a probability of being right, the signal is off by
  more than five points on average. It may still rank well (route on a
  certified threshold, not on the number).
"""

from __future__ import annotations

import math

import numpy as np

from rpa_sim.evaluate.metrics.calibration import ReliabilityTable
from rpa_sim.route.signals.discrimination import Discrimination

__all__ = ["BINS", "FEWEST_BINS", "ECE_BOUND", "VERDICTS", "verdicts", "effective_bins", "in_words"]

#: Equal-width bins of the reliability table, the ECE and the degenerate rule (the project's default).
BINS = 15
#: Fewer effective bins than this: degenerate.
FEWEST_BINS = 2.0
#: An ECE above this: miscalibrated.
ECE_BOUND = 0.05
#: The verdicts, in the order they are listed.
VERDICTS = ("degenerate", "undiscriminating", "miscalibrated")


def effective_bins(reliability: ReliabilityTable) -> float:
    """How many bins the values fill: ``1 / sum(share_b^2)`` over the bins' shares of the values.

    >>> from rpa_sim.evaluate.metrics.calibration import reliability_table
    >>> round(effective_bins(reliability_table([0.99] * 9 + [0.5], [1] * 10, n_bins=BINS)), 3)
    1.22
    >>> effective_bins(reliability_table([0.1, 0.5, 0.7, 0.99], [1] * 4, n_bins=BINS))
    4.0
    """
    shares = reliability.count / reliability.n
    return float(1.0 / np.sum(shares**2))


def verdicts(found: Discrimination, reliability: ReliabilityTable | None) -> tuple[str, ...]:
    """The verdicts that apply, in the order of :data:`VERDICTS` (none for a signal no value carries).

    >>> from rpa_sim.evaluate.metrics.calibration import reliability_table
    >>> from rpa_sim.route.signals.discrimination import discrimination
    >>> signal, error = [0.99] * 39 + [0.5], [0] * 20 + [1] * 20
    >>> verdicts(discrimination(signal, error), reliability_table(signal, [1 - e for e in error], n_bins=BINS))
    ('degenerate', 'undiscriminating', 'miscalibrated')
    """
    if reliability is None:
        return ()
    found_verdicts = []
    if effective_bins(reliability) < FEWEST_BINS:
        found_verdicts.append("degenerate")
    if found.holds_chance:
        found_verdicts.append("undiscriminating")
    if reliability.ece > ECE_BOUND:
        found_verdicts.append("miscalibrated")
    return tuple(found_verdicts)


def _how_well(found: Discrimination) -> str:
    """How an AUROC whose interval excludes 0.5 ranks, in words: backwards below 0.5, then by 0.6 and 0.9 (of the
    AUROC to two decimals, as the words show it)."""
    if found.high < 0.5:
        return "backwards (higher values are more often wrong)"
    shown = round(found.auroc, 2)  # as the words show it: two signals at "0.90" are said alike
    if shown < 0.6:
        return "only slightly better than chance"
    return "well" if shown >= 0.9 else "better than chance"


def in_words(found: Discrimination, reliability: ReliabilityTable | None, applying: tuple[str, ...]) -> str:
    """What the verdicts mean for routing, in a sentence or two an operations manager reads at once.

    >>> from rpa_sim.evaluate.metrics.calibration import reliability_table
    >>> from rpa_sim.route.signals.discrimination import discrimination
    >>> signal, error = [0.9] * 10 + [0.2] * 10, [0] * 9 + [1] * 9 + [0] * 2
    >>> found, table = discrimination(signal, error), reliability_table(signal, [1 - e for e in error], n_bins=BINS)
    >>> in_words(found, table, verdicts(found, table))
    'ranks errors better than chance: AUROC 0.85 (95% interval 0.69-1.00); calibrated: ECE 0.000.'
    """
    if reliability is None:
        return "carried by no value here."
    parts = []
    if "degenerate" in applying:
        biggest = int(reliability.count.argmax())
        share = reliability.count[biggest] / reliability.n
        parts.append(f"degenerate: {share:.0%} of its values sit in one bin "
                     f"({reliability.lower[biggest]:.2f}-{reliability.upper[biggest]:.2f}), the equivalent of "
                     f"{effective_bins(reliability):.1f} of {BINS} bins filled, too few to route on")
    if found.errors == 0 or found.correct == 0:
        parts.append(f"cannot be judged on ranking: every value here is {'right' if found.errors == 0 else 'wrong'}")
    elif "undiscriminating" in applying:
        if not math.isnan(found.low):
            parts.append(f"undiscriminating: AUROC {found.auroc:.2f} (95% interval {found.low:.2f}-{found.high:.2f}) "
                         f"holds 0.5, no better than chance at ranking errors")
        else:
            parts.append(f"undiscriminating: AUROC {found.auroc:.2f} from {found.errors} error(s) and "
                         f"{found.correct} correct value(s), too few to rule out chance")
    else:
        parts.append(f"ranks errors {_how_well(found)}: AUROC {found.auroc:.2f} "
                     f"(95% interval {found.low:.2f}-{found.high:.2f})")
    if "miscalibrated" in applying:
        parts.append(f"miscalibrated: ECE {reliability.ece:.3f} above {ECE_BOUND:g}, so its numbers are not error "
                     f"rates (route on a certified threshold)")
    else:
        parts.append(f"calibrated: ECE {reliability.ece:.3f}")
    return "; ".join(parts) + "."
