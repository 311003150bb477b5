"""The error rate of what goes straight through, estimated from a production log with an interval.

The estimand is ``θ``, the share of errors among the auto-accepted rows of
the log (routes ``auto`` and ``audit``). Only audits see accepted rows, each
drawn with a known inclusion probability; reviewed rows are the ones the
model was unsure of, so their error share (the *naive* figure) is biased.

- ``classical``: one audit rate for every accepted row. The audits are then
  a simple random sample of them: Hajek estimate ``k / n`` (``k`` errors in
  ``n`` audits) with the exact Clopper-Pearson interval; the Horvitz-Thompson
  estimate ``k / (π N)`` is reported beside it.
- ``stratified``: a rate per stratum (the log's ``stratum`` column, else the
  rows' inclusion probabilities). Per stratum an exact Clopper-Pearson
  interval at level ``1 - α / H`` (Bonferroni over the ``H`` strata), so that
  all hold together with probability at least ``1 - α``; the bounds are
  weighted by the strata's shares of accepted rows and added.
- ``ppi``: prediction-powered inference with power tuning (PPI++, Angelopoulos,
  Duchi and Zrnic 2023): the model's predicted error ``1 - confidence`` of
  every accepted row is the proxy, the audits the labelled sample (weighted
  by ``1 / π`` when rates differ), ``λ`` tuned to the variance; a normal
  (CLT) interval, clipped to [0, 1].

From ``θ`` follows the post-correction quality a log can tell: the share of
rows right in the output, reviewed rows counted right (the log cannot see a
reviewer's own mistakes), ``Q = 1 - (N_accepted / N) θ`` with the interval
mapped through. ``docs/monitoring.md`` has the worked examples.

Examples
--------
>>> from rpa_sim.operate.monitoring.log import ProductionLog
>>> log = ProductionLog(route=np.array([1, 1, 2, 2, 2, 2, 0, 0, 0, 0], dtype=np.int8),
...                     inclusion_probability=np.array([1, 1] + [0.5] * 8),
...                     correct=np.array([0, 1, 0, 1, 1, 1, -1, -1, -1, -1], dtype=np.int8),
...                     confidence=np.full(10, np.nan))
>>> result = estimate(log, method="classical")
>>> result.auto_error.estimate, result.naive, result.post_correction_quality.estimate
(0.25, 0.5, 0.8)
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from rpa_sim.common.errors import InputError
from rpa_sim.operate.monitoring.log import ProductionLog

__all__ = ["METHODS", "IMPLAUSIBLE", "Interval", "StratumEstimate", "Estimate", "clopper_pearson", "ppi_mean",
           "stratified_bounds", "estimate"]

METHODS = ("classical", "stratified", "ppi")
#: A stratum's audits are refused as impossible when Binomial(accepted rows, inclusion probability) gives a count
#: as far from the expected one, on either side, a chance below this.
IMPLAUSIBLE = 1e-9


@dataclass(frozen=True)
class Interval:
    """A point estimate (None when undefined) and its interval."""

    estimate: float | None
    low: float | None
    high: float | None


@dataclass(frozen=True)
class StratumEstimate:
    """One stratum of a stratified estimate: its rate, rows, audits, errors and its own interval."""

    stratum: str
    inclusion_probability: float
    auto_accepted: int
    audited: int
    errors: int
    estimate: float | None
    low: float
    high: float


@dataclass(frozen=True)
class Estimate:
    """What ``rpa-sim estimate`` reports (``--json`` keys; ``docs/monitoring.md``).

    Attributes
    ----------
    method : str
    confidence_level : float
    rows, reviewed, auto_accepted, audited : int
        Rows of the log, reviewed rows, accepted rows (audited included), audited rows.
    audit_errors, reviewed_errors : int
        Errors found by audits; errors reported by reviewers.
    auto_error : Interval
        The error rate of accepted rows.
    post_correction_quality : Interval
        The share of rows right in the output, reviewed rows counted right.
    naive : float or None
        The error share of reviewed rows: what a team would compute without audits.
    horvitz_thompson : float or None
        The Horvitz-Thompson estimate of ``θ`` (classical, stratified).
    power_tuning : float or None
        PPI++'s ``λ`` (ppi).
    strata : tuple of StratumEstimate, optional
        Per stratum (stratified).
    """

    method: str
    confidence_level: float
    rows: int
    reviewed: int
    auto_accepted: int
    audited: int
    audit_errors: int
    reviewed_errors: int
    auto_error: Interval
    post_correction_quality: Interval
    naive: float | None
    horvitz_thompson: float | None = None
    power_tuning: float | None = None
    strata: tuple[StratumEstimate, ...] | None = None

    def to_dict(self) -> dict:
        """The ``estimate --json`` payload: plain numbers, None for what is undefined."""
        payload = asdict(self)
        payload["strata"] = None if self.strata is None else [asdict(s) for s in self.strata]
        return payload

    def to_row(self) -> dict:
        """One flat row (``estimate --format csv``): each interval in ``_estimate``, ``_low``, ``_high`` columns.

        The strata are left out (``to_dict`` has them).
        """
        row = {}
        for name, value in self.to_dict().items():
            if isinstance(value, dict):
                row.update({f"{name}_{part}": number for part, number in value.items()})
            elif name != "strata":
                row[name] = value
        return row


def _alpha(confidence_level: float) -> float:
    if not 0.0 < confidence_level < 1.0:
        raise ValueError(f"confidence_level must be in (0, 1), got {confidence_level!r}")
    return 1.0 - confidence_level


def clopper_pearson(errors: int, n: int, *, confidence_level: float) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of a proportion: ``errors`` of ``n``; [0, 1] when ``n`` is 0.

    Examples
    --------
    >>> low, high = clopper_pearson(0, 10, confidence_level=0.95)
    >>> low, round(high, 6), round(1 - 0.025 ** (1 / 10), 6)
    (0.0, 0.308497, 0.308497)
    """
    return _exact_interval(errors, n, _alpha(confidence_level))


def _exact_interval(errors: int, n: int, alpha: float) -> tuple[float, float]:
    """:func:`clopper_pearson` at level ``1 - alpha``, given ``alpha`` itself.

    Bonferroni's level ``1 - alpha / H``, written as a level, would round to exactly 1 (or 0) at
    levels a hair from 1 (or 0).
    """
    from scipy.stats import beta  # noqa: PLC0415

    if not 0 <= errors <= n:
        raise ValueError(f"errors must be in [0, n] = [0, {n}], got {errors!r}")
    low = 0.0 if errors == 0 else float(beta.ppf(alpha / 2, errors, n - errors + 1))
    # the upper tail itself: 1 - alpha / 2 rounds to 1 for a level a hair below 1
    high = 1.0 if errors == n else float(beta.isf(alpha / 2, errors + 1, n - errors))
    return low, high


def stratified_bounds(accepted: np.ndarray, audited: np.ndarray, errors: np.ndarray, *,
                      confidence_level: float) -> tuple[float, float]:
    """The exact stratified interval of an error rate from per-stratum counts (``--method stratified``).

    Each stratum's Clopper-Pearson interval at ``1 - alpha / H`` (Bonferroni over the ``H`` strata; [0, 1]
    for a stratum without audits), weighted by its share ``N_h / N`` of the accepted rows and added. One
    stratum: its exact interval at ``confidence_level``.

    >>> low, high = stratified_bounds(np.array([100, 300]), np.array([10, 6]), np.array([1, 0]), confidence_level=0.95)
    >>> round(low, 4), round(high, 4)
    (0.0003, 0.5113)
    """
    alpha = _alpha(confidence_level) / max(len(accepted), 1)
    bounds = np.array([_exact_interval(int(k), int(n), alpha) for k, n in zip(errors, audited)]).reshape(-1, 2)
    share = accepted / accepted.sum()
    return _share(float(share @ bounds[:, 0])), _share(float(share @ bounds[:, 1]))


def ppi_mean(labels: np.ndarray, labelled_proxies: np.ndarray, proxies: np.ndarray, *,
             confidence_level: float, weights: np.ndarray | None = None) -> tuple[float, float, float, float]:
    """PPI++ for a mean: the estimate, its normal interval (not clipped) and the power-tuning ``λ``.

    The computation of ``ppi_py.ppi_mean_ci`` / ``ppi_mean_pointestimate``
    with ``lam=None`` (``tests/test_monitoring_estimators.py`` checks it
    against them): ``λ`` is first tuned at the PPI estimate (``λ = 1``), clipped
    to [0, 1], and set to 0 when the proxies do not vary (where ``ppi_py``
    divides by zero).

    Parameters
    ----------
    labels : ndarray of float
        The labelled sample's true values (``n >= 2`` of them).
    labelled_proxies : ndarray of float
        The proxy of each labelled row.
    proxies : ndarray of float
        The proxy of every row of the population (``N`` of them).
    confidence_level : float
    weights : ndarray of float, optional
        Sample weights of the labelled rows (here ``1 / π``), normalised to mean 1.

    Examples
    --------
    A proxy equal to the labels: the covariance term is ``2 var(labels) = 0.5``,
    the proxies' variance (104 values, half 0 and half 1, ``ddof=1``) is
    ``0.25 * 104 / 103``, so ``λ = 0.5 / (2 (1 + 4 / 100) 0.2524) = 0.9523``:

    >>> labels = np.array([0.0, 1.0, 0.0, 1.0])
    >>> estimate, low, high, lam = ppi_mean(labels, labels, np.array([0.0, 1.0] * 50), confidence_level=0.95)
    >>> estimate, round(lam, 4)
    (0.5, 0.9523)
    """
    from scipy.stats import norm  # noqa: PLC0415

    alpha = _alpha(confidence_level)
    n, total = len(labels), len(proxies)
    if n < 2:
        raise ValueError(f"PPI needs at least 2 labelled rows, got {n}")
    w = np.ones(n) if weights is None else weights / weights.sum() * n
    first = proxies.mean() + (w * (labels - labelled_proxies)).mean()
    gradient = w * (labels - first)
    proxy_gradient = w * (labelled_proxies - first)
    covariance = 2.0 / n * np.dot(gradient - gradient.mean(), proxy_gradient - proxy_gradient.mean())
    variance = float(np.var(np.concatenate([proxy_gradient, proxies - first]), ddof=1))
    lam = 0.0 if variance == 0.0 else float(np.clip(covariance / (2 * (1 + n / total) * variance), 0.0, 1.0))
    rectifier = w * (labels - lam * labelled_proxies)
    estimate = float(lam * proxies.mean() + rectifier.mean())
    std_error = math.sqrt(np.var(lam * proxies) / total + np.var(rectifier) / n)
    half = float(norm.isf(alpha / 2)) * std_error
    return estimate, estimate - half, estimate + half, lam


def _share(value: float) -> float:
    """A rate within [0, 1]: unbiased estimators (Horvitz-Thompson, PPI) can fall outside it, sums of shares round."""
    return min(max(value, 0.0), 1.0)


def _check_audits(log: ProductionLog, accepted: np.ndarray) -> None:
    """Refuse a log whose audit counts cannot come from its inclusion probabilities.

    Per stratum and inclusion probability ``π``, the ``k`` audited rows of ``N``
    accepted ones are a draw from Binomial(N, π); a ``k`` that far from ``N π``
    on either side has a chance below :data:`IMPLAUSIBLE`: the probabilities are
    not the ones the audits were drawn with (10 of 645 at 1e-300 would make an
    error rate of 1.5e297).
    """
    from scipy.stats import binom  # noqa: PLC0415

    names, codes = _strata(log, accepted)
    rows = np.flatnonzero(accepted)
    rates = log.inclusion_probability[rows]
    groups, group = np.unique(np.column_stack([codes.astype(np.float64), rates]), axis=0, return_inverse=True)
    group = group.reshape(-1)
    size = np.bincount(group, minlength=len(groups))
    audited = np.bincount(group, weights=log.audited[rows], minlength=len(groups)).round().astype(np.int64)
    rate = groups[:, 1]
    chance = np.minimum(binom.cdf(audited, size, rate), binom.sf(audited - 1, size, rate))
    if not np.any(chance < IMPLAUSIBLE):
        return
    at = int(np.argmax(chance < IMPLAUSIBLE))
    n, k, p = int(size[at]), int(audited[at]), float(rate[at])
    where = f" of stratum {str(names[int(groups[at, 0])])!r}" if _given_strata(log, accepted) is not None else ""
    raise InputError(f"{n:,} auto-accepted rows{where} at inclusion probability {p!r} have {k:,} audited (about "
                     f"{n * p:.3g} expected), a count this {'high' if k > n * p else 'low'} has a chance below "
                     f"{IMPLAUSIBLE:g} under Binomial({n}, {p!r}): the inclusion probabilities cannot be the ones "
                     f"the audits were drawn with", path=log.path)


def _located(log: ProductionLog, rows: np.ndarray, problem: str) -> InputError:
    return InputError(problem, **log.where(int(rows[0])))


def _classical(log: ProductionLog, accepted: np.ndarray, level: float) -> tuple[Interval, dict]:
    rates = log.inclusion_probability[accepted]
    if len(rates) and rates.min() != rates.max():
        rows = np.flatnonzero(accepted)
        ends = []
        for row in (rows[np.argmin(rates)], rows[np.argmax(rates)]):
            line = log.where(int(row))["line"]
            ends.append(f"{float(log.inclusion_probability[row])!r}" + (f" (line {line})" if line else ""))
        raise InputError(f"classical assumes one audit rate for every auto-accepted row, and they differ from "
                         f"{ends[0]} to {ends[1]}: use --method stratified or ppi", path=log.path)
    audited, errors = _audits(log, accepted)
    bounds = clopper_pearson(errors, audited, confidence_level=level)
    rate = float(rates[0]) if len(rates) else 0.0
    horvitz_thompson = _share(errors / (rate * len(rates))) if rate > 0 else None
    return Interval(errors / audited if audited else None, *bounds), {"horvitz_thompson": horvitz_thompson}


def _audits(log: ProductionLog, rows: np.ndarray) -> tuple[int, int]:
    """Audited rows among ``rows`` (a mask), and the errors they found."""
    audited = rows & log.audited
    return int(np.count_nonzero(audited)), int(np.count_nonzero(log.correct[audited] == 0))


def _given_strata(log: ProductionLog, accepted: np.ndarray) -> np.ndarray | None:
    """The ``stratum`` of each accepted row when the log gives every one of them a stratum, else None."""
    given = None if log.stratum is None else log.stratum[accepted]
    return given if given is not None and not any(name is None for name in given.tolist()) else None


def _strata(log: ProductionLog, accepted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The strata of the accepted rows (names in sorted order) and each accepted row's index among them."""
    given = _given_strata(log, accepted)
    if given is not None:
        names, codes = np.unique(given.astype(str), return_inverse=True)
        return names, codes
    rates, codes = np.unique(log.inclusion_probability[accepted], return_inverse=True)
    return np.array([f"inclusion probability {rate!r}" for rate in rates.tolist()]), codes


def _stratified(log: ProductionLog, accepted: np.ndarray, level: float) -> tuple[Interval, dict]:
    names, codes = _strata(log, accepted)
    rows = np.flatnonzero(accepted)
    rates = log.inclusion_probability[rows]
    total = len(rows)
    strata = []
    # Bonferroni: every stratum's interval at 1 - alpha / H holds together with the others at 1 - alpha or more
    stratum_alpha = _alpha(level) / max(len(names), 1)
    for code, name in enumerate(names.tolist()):
        mine = rows[codes == code]
        rate = rates[codes == code]
        if rate.min() != rate.max():
            raise _located(log, mine, f"stratum {name!r} has several inclusion probabilities "
                                      f"({float(rate.min())!r} to {float(rate.max())!r}); a stratum is audited "
                                      f"at one rate")
        mask = np.zeros(len(log), dtype=bool)
        mask[mine] = True
        audited, errors = _audits(log, mask)
        strata.append(StratumEstimate(name, float(rate[0]), len(mine), audited, errors,
                                      errors / audited if audited else None,
                                      *_exact_interval(errors, audited, stratum_alpha)))
    share = np.array([s.auto_accepted / total for s in strata])
    known = [s.estimate for s in strata if s.estimate is not None]
    point = _share(float(np.dot(share, known))) if strata and len(known) == len(strata) else None
    low: float | None = None
    high: float | None = None
    if strata:
        low, high = stratified_bounds(np.array([s.auto_accepted for s in strata]),
                                      np.array([s.audited for s in strata]), np.array([s.errors for s in strata]),
                                      confidence_level=level)
    horvitz_thompson = (_share(sum(s.errors / s.inclusion_probability for s in strata) / total)
                        if strata and all(s.inclusion_probability > 0 for s in strata) else None)
    return Interval(point, low, high), {"horvitz_thompson": horvitz_thompson, "strata": tuple(strata)}


def _ppi(log: ProductionLog, accepted: np.ndarray, level: float) -> tuple[Interval, dict]:
    rows = np.flatnonzero(accepted)
    unknown = rows[np.isnan(log.confidence[rows])]
    if len(unknown):
        raise _located(log, unknown, "confidence: missing: ppi needs the confidence of every auto-accepted row")
    never = rows[log.inclusion_probability[rows] == 0]
    if len(never):
        raise _located(log, never, f"inclusion_probability: 0 on {len(never):,} auto-accepted rows: ppi weights "
                                   f"audits by 1 / probability, so every accepted row needs a chance to be audited "
                                   f"(use --method stratified)")
    audited = accepted & log.audited
    if np.count_nonzero(audited) < 2:
        return Interval(None, 0.0, 1.0), {"power_tuning": None}
    rates = log.inclusion_probability[audited]
    weights = None if rates.min() == rates.max() else 1.0 / rates
    estimate, low, high, lam = ppi_mean((log.correct[audited] == 0).astype(np.float64),
                                        1.0 - log.confidence[audited], 1.0 - log.confidence[rows],
                                        confidence_level=level, weights=weights)
    return Interval(_share(estimate), max(low, 0.0), min(high, 1.0)), {"power_tuning": lam}


_METHODS = {"classical": _classical, "stratified": _stratified, "ppi": _ppi}


def estimate(log: ProductionLog, *, method: str, confidence_level: float = 0.95) -> Estimate:
    """Estimate the error rate of auto-accepted rows, and the post-correction quality, from ``log``.

    Parameters
    ----------
    log : ProductionLog
    method : {"classical", "stratified", "ppi"}
    confidence_level : float, default=0.95
        The intervals' nominal coverage, in (0, 1).

    Raises
    ------
    InputError
        When the log's audit counts cannot come from its inclusion
        probabilities (:data:`IMPLAUSIBLE`), and when the log does not fit
        the method: several audit rates for ``classical``; a missing
        confidence, or an accepted row that could not be audited, for ``ppi``.
    """
    if method not in _METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    _alpha(confidence_level)
    accepted = log.auto_accepted
    counts = log.counts()
    if counts["auto_accepted"]:
        _check_audits(log, accepted)
        auto_error, extra = _METHODS[method](log, accepted, confidence_level)
    else:
        auto_error, extra = Interval(None, None, None), {}
    reviewed_errors = int(np.count_nonzero(log.correct[log.reviewed] == 0))
    _, audit_errors = _audits(log, accepted)
    return Estimate(method=method, confidence_level=confidence_level, rows=counts["rows"],
                    reviewed=counts["reviewed"], auto_accepted=counts["auto_accepted"], audited=counts["audited"],
                    audit_errors=audit_errors,
                    reviewed_errors=reviewed_errors, auto_error=auto_error,
                    post_correction_quality=_quality(auto_error, counts["auto_accepted"] / counts["rows"]),
                    naive=reviewed_errors / counts["reviewed"] if counts["reviewed"] else None, **extra)


def _quality(auto_error: Interval, accepted_share: float) -> Interval:
    """``1 - share θ``: the share of rows right in the output, reviewed rows counted right."""
    if accepted_share == 0.0:
        return Interval(1.0, 1.0, 1.0)

    def mapped(value: float | None) -> float | None:
        return None if value is None else 1.0 - accepted_share * value

    return Interval(mapped(auto_error.estimate), mapped(auto_error.high), mapped(auto_error.low))
