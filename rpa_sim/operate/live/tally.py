"""What a segment's rows of a day, or of a run of days, add up to: counts per audit rate and confidence band.

``watch`` never keeps rows: each day's rows of a segment become a :class:`Tally`, and
everything it says later (the day's e-value, the interval since the change
point, the calibration, the threshold it proposes) is computed from tallies
added over days. A tally counts, per **audit stratum** (each distinct
inclusion probability of the auto-accepted rows: Bernoulli audits at one rate
are a simple random sample of their stratum, whatever day they come from) and
per **confidence band** (between two consecutive :data:`THRESHOLDS`, the
thresholds a proposal may name), the auto-accepted rows, the audited ones and
the errors the audits found; and per band the reviewed rows and the errors
reviewers reported. Rows without a confidence fall in one more band at the end.

Examples
--------
>>> day = Tally.of(route=np.array([0, 2, 2, 1]), inclusion=np.array([0.5, 0.5, 0.5, 1.0]),
...                correct=np.array([-1, 0, 1, 0]), confidence=np.array([0.99, 0.97, np.nan, 0.4]))
>>> day.auto_accepted, day.audited_rows, day.errors_found, day.reviewed_rows
(3, 2, 1, 1)
>>> (day + day).strata()
(array([0.5]), array([6]), array([4]), array([2]))
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["THRESHOLDS", "BANDS", "Tally", "band_of"]

#: The thresholds a proposal may name (auto-accept iff confidence >= threshold), strictest last: coarse where
#: teams rarely set one, to 0.0001 near 1, where they do.
THRESHOLDS = np.unique(np.round(np.concatenate([
    np.arange(0, 86, 5) / 100, np.arange(86, 100) / 100, np.arange(991, 1000) / 1000,
    np.arange(9991, 10000) / 10000, [1.0]]), 10))
#: Confidence bands: band ``b`` holds ``THRESHOLDS[b] <= c < THRESHOLDS[b + 1]`` (the last, ``c = 1``); one band
#: more, at the end, holds the rows without a confidence.
BANDS = len(THRESHOLDS) + 1
_INT = np.int64


def band_of(confidence: np.ndarray) -> np.ndarray:
    """Each confidence's band (NaN: the last band, of rows without one).

    >>> band_of(np.array([0.0, 0.905, 1.0, np.nan])).tolist() == [0, 22, len(THRESHOLDS) - 1, BANDS - 1]
    True
    """
    bands = np.searchsorted(THRESHOLDS, confidence, side="right") - 1
    return np.where(np.isnan(confidence), BANDS - 1, bands)


@dataclass(frozen=True, eq=False)
class Tally:
    """Counts of one segment's rows over a day or a run of days (module docstring).

    Attributes
    ----------
    rates : ndarray of float64, shape (H,)
        The audit strata: the distinct inclusion probabilities of the
        auto-accepted rows, increasing.
    auto, audited, audit_errors : ndarray of int64, shape (H, BANDS)
        Per stratum and band: auto-accepted rows (audited ones included),
        audited rows, errors the audits found.
    reviewed, reviewed_errors : ndarray of int64, shape (BANDS,)
        Per band: reviewed rows, and those the reviewer reported wrong.
    """

    rates: np.ndarray
    auto: np.ndarray
    audited: np.ndarray
    audit_errors: np.ndarray
    reviewed: np.ndarray
    reviewed_errors: np.ndarray

    @classmethod
    def empty(cls) -> Tally:
        """No row."""
        none = np.zeros((0, BANDS), dtype=_INT)
        return cls(np.zeros(0), none, none, none, np.zeros(BANDS, dtype=_INT), np.zeros(BANDS, dtype=_INT))

    @classmethod
    def of(cls, *, route: np.ndarray, inclusion: np.ndarray, correct: np.ndarray, confidence: np.ndarray) -> Tally:
        """The tally of some rows, as :class:`~rpa_sim.operate.monitoring.log.ProductionLog` holds their columns.

        ``route`` codes 0 (auto), 1 (review), 2 (audit); ``correct`` 1, 0 or -1 (unchecked).
        """
        bands = band_of(confidence)
        wrong = correct == 0
        review = route == 1
        reviewed = np.bincount(bands[review], minlength=BANDS).astype(_INT)
        reviewed_errors = np.bincount(bands[review & wrong], minlength=BANDS).astype(_INT)
        accepted = ~review
        rates, stratum = np.unique(inclusion[accepted], return_inverse=True)
        cell = stratum.reshape(-1) * BANDS + bands[accepted]
        size = len(rates) * BANDS
        audit = route[accepted] == 2

        def counted(mask: np.ndarray) -> np.ndarray:
            return np.bincount(cell[mask], minlength=size).astype(_INT).reshape(len(rates), BANDS)

        return cls(rates.astype(np.float64), counted(np.ones(len(cell), dtype=bool)), counted(audit),
                   counted(audit & wrong[accepted]), reviewed, reviewed_errors)

    def __add__(self, other: Tally) -> Tally:
        if not len(other.rates) and not other.reviewed.any():
            return self
        if not len(self.rates) and not self.reviewed.any():
            return other
        if np.array_equal(self.rates, other.rates):  # the usual case: the same audit plan
            return Tally(self.rates, self.auto + other.auto, self.audited + other.audited,
                         self.audit_errors + other.audit_errors, self.reviewed + other.reviewed,
                         self.reviewed_errors + other.reviewed_errors)
        rates = np.union1d(self.rates, other.rates)
        mine, theirs = np.searchsorted(rates, self.rates), np.searchsorted(rates, other.rates)

        def merged(a: np.ndarray, b: np.ndarray) -> np.ndarray:
            total = np.zeros((len(rates), BANDS), dtype=_INT)
            total[mine] += a
            total[theirs] += b
            return total

        return Tally(rates, merged(self.auto, other.auto), merged(self.audited, other.audited),
                     merged(self.audit_errors, other.audit_errors), self.reviewed + other.reviewed,
                     self.reviewed_errors + other.reviewed_errors)

    # -- totals ---------------------------------------------------------------------------------------

    @property
    def auto_accepted(self) -> int:
        return int(self.auto.sum())

    @property
    def audited_rows(self) -> int:
        return int(self.audited.sum())

    @property
    def errors_found(self) -> int:
        """Errors the audits found."""
        return int(self.audit_errors.sum())

    @property
    def reviewed_rows(self) -> int:
        return int(self.reviewed.sum())

    @property
    def never_audited(self) -> int:
        """Auto-accepted rows at inclusion probability 0: no audit could ever see them."""
        return int(self.auto[self.rates == 0.0].sum())

    @property
    def without_confidence(self) -> int:
        """Rows (auto-accepted or reviewed) without a confidence."""
        return int(self.auto[:, -1].sum() + self.reviewed[-1])

    def strata(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per stratum: its inclusion probability, auto-accepted rows, audited rows, errors found."""
        return self.rates, self.auto.sum(axis=1), self.audited.sum(axis=1), self.audit_errors.sum(axis=1)

    def horvitz_thompson(self) -> float | None:
        """The Horvitz-Thompson error rate of the auto-accepted rows, capped at 1; None without an audit.

        Rows at inclusion probability 0 count as right: no audit can see them
        (:attr:`never_audited` says how many there are).
        """
        rates, accepted, audited, errors = self.strata()
        if not audited.sum():
            return None
        seen = rates > 0
        return min(float(np.sum(errors[seen] / rates[seen])) / float(accepted.sum()), 1.0)
