"""The alarm of ``watch``: a Shiryaev-Roberts e-detector per segment, valid over every day, with no horizon.

The design (``docs/live.md``, "The method"): each segment-day's audits give an
e-value per alternative error rate, a day *factor* ``F`` whose expectation is
at most 1 when the segment's auto-accepted error rate is at most ``eps``:

- one inclusion probability for every auto-accepted row of the segment-day:
  the binomial likelihood ratio of its ``K`` errors in ``n`` audits,
  ``(p/eps)^K ((1-p)/(1-eps))^(n-K)`` (:func:`binomial_log_factors`);
- several: the Horvitz-Thompson betting factor over every auto-accepted row,
  ``(1 - mu eps)^(N-K) prod over wrong audits (1 + mu (1/pi - eps))``
  (:func:`horvitz_thompson_log_factors`).

The alternatives are ``p_j = 1 - (1 - eps)^r_j`` (:data:`ALTERNATIVES`),
mixed with weights :data:`MIXTURE`. Each run day ``t`` brings a start weight
``w_t`` (:func:`log_start_weight`: ``c/H`` for the first ``H`` days, then
``(1-c) H / (t (t-1))``, summing to 1), shared by the segments seen so far.
Per segment and alternative, ``R(t) = (R(t-1) + w_t / S_t) F_t`` (a sum over
every possible start day of the wealth bet since then); the mixture ``M(t)``
plus the weight not yet spent is a nonnegative supermartingale of initial
value 1 under the null, so by Ville's inequality ``M`` reaches ``1/delta`` on
any day of any segment with probability at most ``delta``.

Everything is in log space (factors are 0 or overflow only there), on a grid
of null rates (:func:`null_grid`): the grid's largest rate still rejected is
the time-uniform lower bound of the segment's error rate, and the alarm is
that bound reaching ``eps``. Functions broadcast over leading axes, so that
a simulation can run many streams at once through the very code ``watch`` runs.

Examples
--------
>>> grid = null_grid(0.03)
>>> factors = binomial_log_factors(np.array(50), np.array(6), grid)  # 6 errors in 50 audits
>>> log_r = sr_step(np.full(factors.shape, -np.inf), log_start_weight(1, horizon=365), factors)
>>> low = lower_bound(log_mixture(log_r), grid, delta=0.05)
>>> round(low, 4)  # one day of 12% errors is not yet enough evidence for the rate to exceed 3%
0.0
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import xlogy

__all__ = ["ALTERNATIVES", "MIXTURE", "START_SHARE", "GRID_POINTS", "null_grid", "alternatives",
           "log_start_weight", "binomial_log_factors", "horvitz_thompson_log_factors", "sr_step", "log_mixture",
           "rejected_through", "lower_bound", "log_sum", "first_alarms", "LOG_MIXTURE_WEIGHTS"]

#: The alternatives' ratios ``r_j``: ``p_j = 1 - (1 - eps)^r_j``, about ``r_j eps`` for a small ``eps``.
ALTERNATIVES = np.array([1.6, 2.0, 2.7, 3.7, 6.7])
#: Their mixing weights (they sum to 1).
MIXTURE = np.array([0.25, 0.30, 0.25, 0.12, 0.08])
LOG_MIXTURE_WEIGHTS = np.log(MIXTURE)
#: ``c``: the share of the start weight spread evenly over the first ``--horizon-days`` days.
START_SHARE = 0.95
#: Null rates of the grid the lower bound is read from (``eps`` itself added).
GRID_POINTS = 60
_GRID_LOW, _GRID_HIGH = 1e-4, 0.999


def null_grid(max_error: float) -> np.ndarray:
    """The null error rates tested at once, increasing: 60 log-spaced from 1e-4 to 0.999, and ``max_error``.

    >>> grid = null_grid(0.03)
    >>> len(grid), 0.03 in grid, float(grid[0]), float(grid[-1])
    (61, True, 0.0001, 0.999)
    """
    return np.unique(np.append(np.geomspace(_GRID_LOW, _GRID_HIGH, GRID_POINTS), max_error))


def alternatives(grid: np.ndarray) -> np.ndarray:
    """``p[g, j] = 1 - (1 - grid[g])^r_j``: each alternative rate against each null, in (grid, 1)."""
    return -np.expm1(ALTERNATIVES * np.log1p(-grid)[:, None])


def log_start_weight(day: int, *, horizon: int) -> float:
    """``log w_t`` of run day ``day`` (1, 2, ...): ``c/H`` up to ``H``, then ``(1 - c) H / (t (t - 1))``.

    >>> weights = [math.exp(log_start_weight(t, horizon=10)) for t in range(1, 100_000)]
    >>> round(sum(weights), 4)  # the tail beyond 100,000 days holds 0.05 * 10 / 99,999
    1.0
    """
    if day <= horizon:
        return math.log(START_SHARE / horizon)
    return math.log1p(-START_SHARE) + math.log(horizon) - math.log(day) - math.log(day - 1)


def binomial_log_factors(audited: np.ndarray, errors: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """``log F[..., g, j]`` of ``errors`` in ``audited`` audits drawn at one rate: the binomial likelihood ratio.

    ``log F = K log(p/eps) + (n - K) log((1-p)/(1-eps))``, where ``(1-p)/(1-eps) = (1-eps)^(r-1)``.
    It is the betting martingale ``prod (1 + lambda (x - eps))`` over the audits, with
    ``lambda = (p - eps) / (eps (1 - eps))``; 0 (a factor of 1) without an audit.

    >>> grid = np.array([0.1])
    >>> factor = np.exp(binomial_log_factors(np.array(3), np.array(1), grid))[0, 0]
    >>> p = 1 - 0.9 ** 1.6
    >>> bool(np.isclose(factor, (p / 0.1) * ((1 - p) / 0.9) ** 2))
    True
    """
    n = np.asarray(audited, dtype=np.float64)[..., None, None]
    k = np.asarray(errors, dtype=np.float64)[..., None, None]
    p = alternatives(grid)
    log_right = (ALTERNATIVES - 1.0) * np.log1p(-grid)[:, None]
    return xlogy(k, p / grid[:, None]) + (n - k) * log_right


def horvitz_thompson_log_factors(rates: np.ndarray, accepted: np.ndarray, errors: np.ndarray,
                                 grid: np.ndarray) -> np.ndarray:
    """``log F[g, j]`` of one segment-day audited at several rates: the Horvitz-Thompson betting factor.

    With ``Z_i = B_i e_i / pi_i`` (audited and wrong, over its inclusion probability) for every
    auto-accepted row, ``F = prod (1 + mu (Z_i - eps))`` and ``mu = pibar (p - eps) / (eps (1 - pibar eps))``,
    ``pibar`` the mean inclusion probability of the day's auto-accepted rows: ``E[Z_i] <= e_i`` whatever the
    errors, so ``E[F] <= 1`` when at most ``eps`` of the rows are wrong. Rows at probability 0 contribute
    ``1 - mu eps`` (they can never be seen: conservative).

    Parameters
    ----------
    rates, accepted, errors : ndarray, shape (H,)
        Per stratum: its inclusion probability, its auto-accepted rows and the errors its audits found.
    grid : ndarray, shape (G,)

    Examples
    --------
    Two strata; the factor is the product over the rows, checked one row at a time:

    >>> grid = np.array([0.05])
    >>> got = np.exp(horvitz_thompson_log_factors(np.array([0.5, 0.1]), np.array([4, 10]), np.array([1, 1]), grid))
    >>> pibar = (4 * 0.5 + 10 * 0.1) / 14
    >>> p = 1 - 0.95 ** 2.0
    >>> mu = pibar * (p - 0.05) / (0.05 * (1 - pibar * 0.05))
    >>> rows = [1 + mu * (1 / 0.5 - 0.05), 1 + mu * (1 / 0.1 - 0.05)] + [1 - mu * 0.05] * 12
    >>> bool(np.isclose(got[0, 1], np.prod(rows)))
    True
    """
    total = float(accepted.sum())
    if total == 0:
        return np.zeros((len(grid), len(ALTERNATIVES)))
    pibar = float(np.dot(rates, accepted)) / total
    g = grid[:, None]
    mu = pibar * (alternatives(grid) - g) / (g * (1.0 - pibar * g))
    wrong = float(errors.sum())
    log_factor = (total - wrong) * np.log1p(-mu * g)
    for rate, count in zip(rates.tolist(), errors.tolist()):
        if count:  # only a stratum audited at a rate above 0 finds errors
            log_factor = log_factor + count * np.log1p(mu * (1.0 / rate - g))
    return log_factor


def sr_step(log_r: np.ndarray, log_weight: float | np.ndarray, log_factors: np.ndarray) -> np.ndarray:
    """One day of the Shiryaev-Roberts recursion in logs: ``R(t) = (R(t-1) + w) F``."""
    return np.logaddexp(log_r, log_weight) + log_factors


def log_mixture(log_r: np.ndarray) -> np.ndarray:
    """``log M = log sum_j v_j R_j`` over the last axis (the alternatives).

    >>> round(float(np.exp(log_mixture(np.log(np.array([1.0, 2.0, 3.0, 4.0, 5.0]))))), 12)  # 0.25+0.6+0.75+0.48+0.4
    2.48
    >>> log_mixture(np.full((2, 5), -np.inf)).tolist()
    [-inf, -inf]
    """
    return log_sum(log_r + LOG_MIXTURE_WEIGHTS)


def log_sum(log_values: np.ndarray) -> np.ndarray:
    """``log sum exp`` over the last axis, ``-inf`` where every value is (scipy's ``logsumexp`` is slower per call)."""
    top = np.max(log_values, axis=-1, keepdims=True)
    shift = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.sum(np.exp(log_values - shift), axis=-1)) + shift[..., 0]


def rejected_through(log_m: np.ndarray, delta: float) -> np.ndarray:
    """How many null rates of the grid, counted from the lowest, are all rejected (``M >= 1/delta``).

    A rate is taken as exceeded only when every lower rate of the grid is too: with one audit rate
    ``M`` falls as the null rises, so this changes nothing; with several it can only withdraw a
    rejection, never add one.
    """
    rejected = log_m >= -math.log(delta)
    return np.argmin(np.concatenate([rejected, np.zeros(rejected.shape[:-1] + (1,), dtype=bool)], axis=-1),
                     axis=-1)


def lower_bound(log_m: np.ndarray, grid: np.ndarray, *, delta: float) -> float:
    """The time-uniform lower bound of the error rate: the highest grid rate rejected with all below it; 0 if none."""
    count = int(rejected_through(log_m, delta))
    return float(grid[count - 1]) if count else 0.0


def first_alarms(audited: np.ndarray, errors: np.ndarray, *, max_error: float, delta: float,
                 horizon: int) -> np.ndarray:
    """The day (1, 2, ...; 0 for none) of each segment's first ``error_above_target``, for many streams at once.

    Every segment-day is audited at one rate (the binomial factor), every segment present from day 1:
    what ``watch`` does on such logs, vectorised over any leading axes, for simulations of its guarantee
    and its detection (``tests/test_live_detector.py``, ``benchmarks/bench_live.py``). Only the grid's null
    rates up to ``max_error`` are followed: the alarm depends on them alone.

    Parameters
    ----------
    audited, errors : ndarray of int, shape (..., segments, days)

    Examples
    --------
    >>> errors = np.array([[[1] * 20, [1] * 10 + [8] * 10]])  # two segments, 50 audits a day; a jump on day 11
    >>> first_alarms(np.full(errors.shape, 50), errors, max_error=0.03, delta=0.05, horizon=365).tolist()
    [[0, 12]]
    """
    grid = null_grid(max_error)
    grid = grid[:int(np.searchsorted(grid, max_error)) + 1]
    *streams, segments, days = np.shape(errors)
    log_r = np.full((*streams, segments, len(grid), len(ALTERNATIVES)), -np.inf)
    first = np.zeros((*streams, segments), dtype=np.int64)
    for t in range(1, days + 1):
        log_r = sr_step(log_r, log_start_weight(t, horizon=horizon) - math.log(segments),
                        binomial_log_factors(audited[..., t - 1], errors[..., t - 1], grid))
        alarm = rejected_through(log_mixture(log_r), delta) == len(grid)
        first = np.where((first == 0) & alarm, t, first)
    return first
