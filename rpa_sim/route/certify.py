"""A certified auto-accept threshold by Learn-then-Test, fixed sequence (METRICS.md §7).

Auto-accept a prediction iff its confidence is at least the threshold. Part of
the data (the calibration split) tests candidate thresholds from the strictest
to the laxest; the walk stops at the first threshold whose binomial test
fails, and the last one that passed is certified: with probability at least
``1 - delta`` the error rate of auto-accepted items is at most ``max_error``,
provided calibration and deployment items are exchangeable. The rest of the
data (the held-out split) reports the auto-rate and error at that threshold.
Decisions where the spec is silent are listed in ``docs/calibration.md``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import beta, binom

from rpa_sim.common.formatting import counted
from rpa_sim.common.jsontext import finite
from rpa_sim.common.typedjson import present_when, unwritten
from rpa_sim.evaluate.metrics.checks import binary_labels, confidences

if TYPE_CHECKING:
    from rpa_sim.route.sweep import Sweeper

__all__ = ["CertifiedThreshold", "AtThreshold", "NotCertifiable", "certify_threshold", "certify_policy",
           "certify_per_group", "clopper_pearson_upper", "minimum_accepted"]

#: The keys of ``certify --json`` (docs/formats.md), in order.
_CERTIFY_KEYS = ("threshold", "max_error", "delta", "calibration_n", "accepted_n", "accepted_errors", "p_value",
                 "upper_bound", "holdout_auto_rate", "holdout_error")


@dataclass(frozen=True)
class AtThreshold:
    """A policy's figures at its certified threshold: auto-rate, post-correction metric and cost (None where
    undefined, the cost also without costs)."""

    auto_rate: float | None
    metric: float | None
    cost: float | None


@dataclass(frozen=True)
class CertifiedThreshold:
    """The outcome of :func:`certify_threshold`; the fields are the ``certify --json`` keys.

    Attributes
    ----------
    threshold : float or None
        Auto-accept iff ``confidence >= threshold``; None when no candidate passed.
    max_error, delta : float
        The error rate ``eps`` that is certified and the allowed failure probability.
    calibration_n : int
        Items in the calibration split.
    accepted_n, accepted_errors : int
        Calibration items at or above the threshold, and how many of them are
        wrong (0 and 0 when nothing is certified).
    p_value : float or None
        ``BinomCDF(accepted_errors; accepted_n, max_error)`` at the threshold.
    upper_bound : float or None
        One-sided ``1 - delta`` Clopper-Pearson upper bound of the error rate
        of auto-accepted items, from the calibration counts (at most
        ``max_error`` whenever a threshold is certified).
    holdout_auto_rate : float or None
        Share of held-out items auto-accepted (0 when nothing is certified;
        None without held-out items).
    holdout_error : float or None
        Error rate of the auto-accepted held-out items (None when none is).
    guarantee : str
        What is guaranteed, under which assumption, in plain words; made from
        the other fields when not given (a summary read back gives it, since
        it does not keep the documents).
    at_threshold : AtThreshold or None
        A policy's figures at the certified threshold (:func:`certify_policy`);
        None from :func:`certify_threshold`, or when nothing is certified.
    calibration_documents : int or None
        Groups (documents) in the calibration split; None without groups.
    accepted_documents : int or None
        Documents among the auto-accepted calibration items (0 when nothing is
        certified); None without groups. Neither is a ``certify --json`` key
        (docs/formats.md fixes those) nor kept in ``summary.json``: the
        guarantee says them in words.
    score : str
        What the threshold applies to, as the guarantee names it: ``confidence``,
        or a policy's knob such as ``signals.agreement``; kept in memory only
        (the guarantee says it).
    """

    threshold: float | None
    max_error: float
    delta: float
    calibration_n: int
    accepted_n: int
    accepted_errors: int
    p_value: float | None
    upper_bound: float | None
    holdout_auto_rate: float | None
    holdout_error: float | None
    guarantee: str = field(default="", compare=False)  # the figures in words: equal figures, equal results
    at_threshold: AtThreshold | None = present_when("threshold")
    calibration_documents: int | None = unwritten()
    accepted_documents: int | None = unwritten()
    score: str = field(default="confidence", compare=False, metadata={"unwritten": True})

    def __post_init__(self) -> None:
        if not self.guarantee:  # frozen: the one field made here, from the others
            object.__setattr__(self, "guarantee", self._guarantee())

    @property
    def certified(self) -> bool:
        """Whether some threshold passed."""
        return self.threshold is not None

    def to_dict(self) -> dict[str, float | int | None]:
        """The ``certify --json`` object (docs/formats.md): plain Python numbers, None for null."""
        return {key: getattr(self, key) for key in _CERTIFY_KEYS}

    def _guarantee(self) -> str:
        """What is guaranteed, under which assumption, in plain words."""
        eps, delta = self.max_error, self.delta
        assumption = (
            "Assumption: the calibration items and the items met in deployment are exchangeable "
            "(same model, same kind of documents, same definition of an error), and the error rate of "
            "auto-accepted items does not rise as the threshold gets stricter (the walk starts at the "
            "strictest threshold with enough calibration items to be tested). The binomial test "
            "also counts the auto-accepted items as independent draws; entities of one document are "
            "not, so keep documents together (groups) and read the guarantee as approximate when "
            "errors cluster within documents."
        )
        if self.threshold is None:
            return f"{self._refusal()} {assumption}"
        text = (
            f"Auto-accept iff {self.score} >= {self.threshold:g}. Guaranteed: with probability at least "
            f"{1 - delta:g} over the draw of the calibration data, the error rate of auto-accepted items "
            f"is at most {eps:g} (Learn-then-Test, fixed sequence: {counted(self.accepted_errors, 'error')} among "
            f"{counted(self.accepted_n, 'auto-accepted calibration item')}{_from_documents(self.accepted_documents)}, "
            f"p = {self.p_value:.3g} <= delta = "
            f"{delta:g}; {1 - delta:g} Clopper-Pearson upper bound {self.upper_bound:.4g}). {assumption}"
        )
        if self.holdout_auto_rate is not None:
            error = "n/a" if self.holdout_error is None else f"{self.holdout_error:.4g}"
            text += (f" Held-out check (not part of the guarantee): auto-rate {self.holdout_auto_rate:.4g}, "
                     f"error {error}.")
        return text

    def _refusal(self) -> str:
        """Why no threshold is certified, in plain words: too little calibration data to conclude anything at
        ``max_error`` and ``delta``, or too many errors among the most confident values."""
        eps, delta = self.max_error, self.delta
        needed = minimum_accepted(eps, delta)
        # a tiny max_error needs a number of items with hundreds of digits: its magnitude says enough
        count = str(needed) if needed < 10**15 else f"{float(needed):.3g}"
        claim = (f"at most {eps:g} of the auto-accepted values are wrong (max_error) with probability at least "
                 f"{1 - delta:g} (1 - delta)")
        if self.calibration_n < needed:
            held = f"{counted(self.calibration_n, 'value')}{_from_documents(self.calibration_documents)}"
            return (f"No threshold is certified: there is too little calibration data to conclude. To show that "
                    f"{claim}, at least {count} values must be auto-accepted, even if none of them is wrong; the "
                    f"calibration data holds {held}. Review everything, add calibration documents, or relax "
                    f"max_error or delta.")
        return (f"No threshold is certified: even the most confident values are wrong too often. The strictest "
                f"threshold that auto-accepts enough values to be tested (at least {count}) already lets through too "
                f"many errors to show that {claim}, and the test stops at the first threshold that fails. Review "
                f"everything, or relax max_error or delta.")


def _from_documents(documents: int | None) -> str:
    """`` from 3 documents`` (nothing without documents)."""
    return "" if documents is None else f" from {counted(documents, 'document')}"


def certify_threshold(confidence: ArrayLike, error: ArrayLike, *, max_error: float, delta: float,
                      calibration_fraction: float = 0.5, seed: int = 0, groups: ArrayLike | None = None,
                      candidates: ArrayLike | None = None, skip_untestable: bool = True,
                      score: str = "confidence") -> CertifiedThreshold:
    """Certify an auto-accept threshold whose error rate is at most ``max_error`` with probability ``1 - delta``.

    Parameters
    ----------
    confidence : array-like of float, shape (n,)
        One confidence in ``[0, 1]`` per prediction unit.
    error : array-like of bool (or 0/1), shape (n,)
        True when the unit is wrong (a KIE entity whose outcome is not
        ``correct``; a question whose ANLS is below 0.5): an outcome table's
        ``errors()``, ``docs/errors.md``.
    max_error : float
        ``eps``, in (0, 1).
    delta : float
        Allowed probability that the guarantee fails, in (0, 1).
    calibration_fraction : float, default=0.5
        Share of the items (of the groups, with ``groups``) drawn into the
        calibration split, in (0, 1]; rounded half up to a whole number of
        groups. The rest is held out. With 1 there is no held-out check.
    seed : int, default=0
        Seed of :func:`numpy.random.default_rng` for the split; the result is
        a deterministic function of the inputs and the seed.
    groups : array-like of int, shape (n,), optional
        A group per item (e.g. the document index); a group's items all fall in
        the same split. Without it every item is its own group.
    candidates : array-like of float, optional
        Thresholds to test (any order; they are walked from the strictest, the
        largest, down, duplicates once). Default: every distinct calibration
        confidence.
    skip_untestable : bool, default=True
        Start the walk at the strictest candidate that accepts at least
        :func:`minimum_accepted` calibration items. A stricter candidate
        accepts so few that it fails whatever its errors (``p >= (1 - eps) ** n
        > delta``); walked literally, it would end the sequence at once, so
        the default candidates (whose strictest accepts one item) would never
        certify anything. Skipping them keeps the guarantee when the error
        rate of auto-accepted items does not grow as the threshold gets
        stricter (see ``docs/calibration.md``). ``False`` walks every
        candidate as METRICS.md §7 reads literally (valid without that
        assumption, for candidates fixed before seeing the data, but useful
        only with a coarse candidate grid whose strictest point accepts many items).
    score : str, default="confidence"
        What ``confidence`` is, as the guarantee names it (a signal, a policy's knob).

    Returns
    -------
    CertifiedThreshold

    Examples
    --------
    >>> confidence = [0.99] * 40 + [0.5] * 10
    >>> error = [False] * 40 + [True] * 10
    >>> result = certify_threshold(confidence, error, max_error=0.1, delta=0.1, calibration_fraction=1.0)
    >>> result.threshold, result.accepted_n, result.accepted_errors, round(result.p_value, 4)
    (0.99, 40, 0, 0.0148)
    >>> certify_threshold(confidence[:10], error[:10], max_error=0.1, delta=0.1,
    ...                   calibration_fraction=1.0).threshold is None
    True
    """
    conf = confidences(confidence, "confidence")
    wrong = binary_labels(error, "error", len(conf)).astype(bool)
    eps = _open_unit(max_error, "max_error")
    risk = _open_unit(delta, "delta")
    fraction = _fraction(calibration_fraction)
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {_show(seed)}")
    group = _groups(groups, len(conf))
    in_calibration = _split(group, fraction, int(seed), len(conf))

    cal_conf, cal_wrong = conf[in_calibration], wrong[in_calibration]
    grid = np.unique(cal_conf) if candidates is None else _candidates(candidates)
    grid = grid[::-1]  # strictest (largest) first
    accepted, errors = _candidate_counts(cal_conf, cal_wrong, grid)
    if skip_untestable:
        testable = accepted >= minimum_accepted(eps, risk)
        grid, accepted, errors = grid[testable], accepted[testable], errors[testable]
    p_values = binom.cdf(errors, accepted, eps)
    passed = _walk(p_values, risk)

    held_conf, held_wrong = conf[~in_calibration], wrong[~in_calibration]
    cal_group = None if group is None else group[in_calibration]
    documents = None if cal_group is None else len(np.unique(cal_group))
    if passed is None:
        return CertifiedThreshold(
            threshold=None, max_error=eps, delta=risk, calibration_n=len(cal_conf), accepted_n=0,
            accepted_errors=0, p_value=None, upper_bound=None,
            holdout_auto_rate=0.0 if len(held_conf) else None, holdout_error=None,
            calibration_documents=documents, accepted_documents=None if documents is None else 0, score=score)
    threshold = float(grid[passed])
    n, k = int(accepted[passed]), int(errors[passed])
    held_accepted = held_conf >= threshold
    held_n = int(held_accepted.sum())
    return CertifiedThreshold(
        threshold=threshold, max_error=eps, delta=risk, calibration_n=len(cal_conf), accepted_n=n,
        accepted_errors=k, p_value=float(p_values[passed]), upper_bound=clopper_pearson_upper(k, n, risk),
        holdout_auto_rate=held_n / len(held_conf) if len(held_conf) else None,
        holdout_error=int(held_wrong[held_accepted].sum()) / held_n if held_n else None,
        calibration_documents=documents,
        accepted_documents=None if cal_group is None else len(np.unique(cal_group[cal_conf >= threshold])),
        score=score)


def certify_per_group(confidence: ArrayLike, error: ArrayLike, codes: ArrayLike, names: tuple[str, ...], *,
                      groups: ArrayLike | None = None, **settings: Any) -> dict[str, CertifiedThreshold]:
    """A certified threshold for each part of the data (e.g. each document type), certified on that part alone.

    Each part's guarantee holds with probability ``1 - delta`` on its own; all of
    them at once hold with probability at least ``1 - K delta`` for ``K`` parts
    (Bonferroni: pass ``delta / K`` to have ``1 - delta`` jointly).

    Parameters
    ----------
    confidence, error
        As :func:`certify_threshold`.
    codes : array-like of int, shape (n,)
        Each item's part, an index into ``names``.
    names : tuple of str
        The parts' names; a part without items is left out.
    groups : array-like of int, shape (n,), optional
        As :func:`certify_threshold` (kept together within a part).
    **settings
        ``max_error``, ``delta`` and the other keywords of :func:`certify_threshold`.

    Examples
    --------
    >>> confidence = [0.99] * 40 + [0.5] * 10 + [0.9] * 50
    >>> error = [False] * 40 + [True] * 10 + [False] * 25 + [True] * 25
    >>> parts = certify_per_group(confidence, error, [0] * 50 + [1] * 50, ("clean", "photo"),
    ...                           max_error=0.1, delta=0.1, calibration_fraction=1.0)
    >>> {name: result.threshold for name, result in parts.items()}
    {'clean': 0.99, 'photo': None}
    """
    conf = np.asarray(confidence, dtype=np.float64)
    wrong = np.asarray(error)
    part = np.asarray(codes)
    group = None if groups is None else np.asarray(groups)
    found = {}
    for code, name in enumerate(names):
        mine = part == code
        if mine.any():
            found[name] = certify_threshold(conf[mine], wrong[mine], groups=None if group is None else group[mine],
                                            **settings)
    return found


@dataclass(frozen=True)
class NotCertifiable:
    """A policy that cannot be certified (a review budget can force items through): why, in words."""

    threshold: None
    guarantee: str


def certify_policy(sweeper: Sweeper, *, max_error: float, delta: float, calibration_fraction: float = 0.5,
                   seed: int = 0) -> CertifiedThreshold | NotCertifiable:
    """The certified threshold of a policy's swept knob, with the policy's figures there.

    A policy auto-accepts an item exactly when its entry threshold is at least
    ``τ``, so certification runs on the entries. Items the policy always
    reviews never count as accepted, nor do items it rejects (they leave the
    flow: the guarantee is on what is auto-accepted); a budget can force
    acceptance and voids the guarantee, so budgeted policies are not certified.
    The keywords are :func:`certify_threshold`'s (a scenario's ``certify:``).
    """
    if sweeper.policy.budget is not None:
        return NotCertifiable(threshold=None, guarantee="not certified: a review budget can force items through "
                                                       "unreviewed, whatever the threshold")
    kept = ~sweeper.compiled.rejected
    entry = sweeper.compiled.entry[kept]
    bounded = np.isfinite(entry)
    candidates = np.unique(entry[bounded])
    if np.any(entry == -np.inf):
        candidates = candidates[candidates > 0.0]  # at 0 the always-reviewed items would count as accepted
    scores = np.clip(np.where(bounded, entry, np.where(entry > 0, 1.0, 0.0)), 0.0, 1.0)
    table = sweeper.table
    units = table.review_units
    result = certify_threshold(scores, table.errors()[kept], max_error=max_error, delta=delta,
                               calibration_fraction=calibration_fraction, seed=seed,
                               groups=None if units is None else units[kept],
                               candidates=candidates if len(candidates) else None, score=sweeper.policy.knob)
    if result.threshold is None:
        return result
    # the policy run in "certified" mode: its figures at the certified threshold
    point = sweeper.at(result.threshold)
    cost = point.get("cost")
    return replace(result, at_threshold=AtThreshold(auto_rate=finite(point["auto_rate"]),
                                                    metric=finite(point[table.metric_name]),
                                                    cost=None if cost is None else finite(cost)))


def clopper_pearson_upper(errors: int, n: int, delta: float) -> float:
    """One-sided ``1 - delta`` Clopper-Pearson upper bound of an error rate: ``Beta^-1(1 - delta; k + 1, n - k)``.

    1 when every item is wrong (``k == n``), including ``n == 0``.

    Examples
    --------
    >>> round(clopper_pearson_upper(0, 40, 0.1), 6)  # 1 - 0.1 ** (1 / 40)
    0.055939
    >>> clopper_pearson_upper(3, 3, 0.1)
    1.0
    """
    if errors >= n:
        return 1.0
    # the upper tail itself: 1 - delta rounds to 1 for a delta below 1e-16, where ppf would give 1
    return float(beta.isf(delta, errors + 1, n - errors))


def minimum_accepted(max_error: float, delta: float) -> int:
    """The fewest auto-accepted calibration items with which ``max_error`` can be certified at ``delta``.

    That is with no error at all: the smallest ``n`` with ``(1 - max_error) ** n <= delta``, compared
    as logarithms, ``n log(1 - max_error) <= log(delta)``. A tiny ``max_error`` needs more items
    than any data holds (``3e20`` at ``1e-20``): a Python integer, exact up to 2**53 and the
    nearest above.

    Examples
    --------
    >>> minimum_accepted(0.01, 0.05), minimum_accepted(0.1, 0.1)
    (299, 22)
    >>> minimum_accepted(1e-20, 0.05)
    299573227355399127040
    """
    eps = _open_unit(max_error, "max_error")
    risk = _open_unit(delta, "delta")
    log_delta, log_right = math.log(risk), math.log1p(-eps)
    n = max(1, math.ceil(log_delta / log_right))
    if n > 2**53:  # beyond, n - 1 and n are the same float: the division is as exact as it gets
        return n
    # the division rounds: step to the smallest n (once or twice at most)
    while n > 1 and (n - 1) * log_right <= log_delta:
        n -= 1
    while n * log_right > log_delta:
        n += 1
    return n


def _candidate_counts(confidence: np.ndarray, wrong: np.ndarray,
                      thresholds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Items at or above each threshold and the errors among them, from one sort and one cumulative sum."""
    order = np.argsort(confidence, kind="stable")
    ordered = confidence[order]
    errors_below = np.concatenate(([0], np.cumsum(wrong[order], dtype=np.int64)))
    below = np.searchsorted(ordered, thresholds, side="left")
    return len(ordered) - below, errors_below[-1] - errors_below[below]


def _walk(p_values: np.ndarray, delta: float) -> int | None:
    """Index of the last candidate passed before the first failure (p > delta), None if the first fails."""
    failed = p_values > delta
    first_failure = int(np.argmax(failed)) if failed.any() else len(p_values)
    return first_failure - 1 if first_failure > 0 else None


def _split(group: np.ndarray | None, fraction: float, seed: int, n: int) -> np.ndarray:
    """Boolean mask of the calibration items: a seeded random subset of whole groups."""
    rng = np.random.default_rng(seed)
    if group is None:
        labels, inverse = np.arange(n), np.arange(n)
    else:
        labels, inverse = np.unique(group, return_inverse=True)
    chosen = np.zeros(len(labels), dtype=bool)
    chosen[rng.permutation(len(labels))[:math.floor(fraction * len(labels) + 0.5)]] = True
    return chosen[inverse]


def _open_unit(value: object, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not 0 < value < 1:
        raise ValueError(f"{name} must be a number in (0, 1), got {_show(value)}")
    return float(value)


def _fraction(value: object) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not 0 < value <= 1:
        raise ValueError(f"calibration_fraction must be a number in (0, 1], got {_show(value)}")
    return float(value)


def _show(value: object) -> str:
    """``repr`` of a value, numpy scalars shown as the Python number they hold."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def _groups(values: ArrayLike | None, length: int) -> np.ndarray | None:
    if values is None:
        return None
    array = np.asarray(values)
    if array.ndim != 1 or len(array) != length:
        raise ValueError(f"groups must be a one-dimensional array with one group per item ({length}), "
                         f"got shape {array.shape}")
    if len(array) and (array.dtype == bool or not np.issubdtype(array.dtype, np.integer)):
        raise ValueError(f"groups must be integers (e.g. document indices), got dtype {array.dtype}")
    return array


def _candidates(values: ArrayLike) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise ValueError(f"candidates must be one-dimensional, got shape {array.shape}")
    if not np.isfinite(array).all():
        at = int(np.flatnonzero(~np.isfinite(array))[0])
        raise ValueError(f"candidates[{at}] must be a finite number, got {float(array[at])!r}")
    return np.unique(array)
