"""The label-free tier: the error rate the confidences predict, and a detector that withdraws it when audits disagree.

Audits see a few auto-accepted rows a day; the confidences cover all of them.
Once a segment's **reference period** is over (its first
:data:`REFERENCE_DAYS` run days), its calibration ``f`` is fitted on the
reference's reviewed and audited rows (:func:`fit_calibration`): per group
of confidence bands (:mod:`~rpa_sim.operate.live.tally`) holding enough
checked rows and errors, the error rate with each row weighted by ``1 / pi`` (its
inclusion probability), made non-increasing in the confidence (pool adjacent
violators, weighted), a group without an error given half an error in one
more row (so that no group is promised to be perfect). From
then on a day's **label-free** figure is the mean ``f(c)`` over its
auto-accepted rows (:func:`predicted_error`): no labels needed, but it
*assumes calibration*.

Whether the audits contradict ``f`` is an e-detector of its own
(:func:`calibration_log_factors`), built as the error detector is: per audited
row, a likelihood ratio that bets on ``e - f(c)`` both ways: ``q = 1 - (1 -
f0)^r`` against ``f0``, where ``r`` above 1 (more errors than predicted) is
tested against ``f0 = f (1 + t)`` and ``r`` below 1 (fewer) against ``f0 = f (1
- t)``; the tolerance ``t`` (:func:`tolerance`) is what the reference could not
tell, two standard errors of its audit errors. The alternatives are
:data:`CALIBRATION_ALTERNATIVES` mixed with :data:`CALIBRATION_MIXTURE`, with
the same start weights and Shiryaev-Roberts recursion. When every segment's
audited rows are wrong with a probability within that tolerance of ``f(c)``
given their confidence, the chance that it ever raises
``calibration_contradicted`` is at most ``delta``. A confidently wrong new
template (errors up, confidences unchanged) makes ``e - f(c)`` positive on the
rows where ``f`` is small, and is caught there.

Examples
--------
Sixty reviewed rows at confidence 0.5, half of them wrong; sixty audits at 0.99, drawn at rate 0.1,
three of them wrong (each audit stands for ten rows: 3 x 10 / (60 x 10)):

>>> from rpa_sim.operate.live.tally import Tally, band_of
>>> reference = Tally.of(route=np.array([1] * 60 + [2] * 60), inclusion=np.array([1.0] * 60 + [0.1] * 60),
...                      correct=np.array([0, 1] * 30 + [0] * 3 + [1] * 57),
...                      confidence=np.array([0.5] * 60 + [0.99] * 60))
>>> f = fit_calibration(reference)
>>> round(float(f[band_of(np.array([0.5]))[0]]), 4), round(float(f[band_of(np.array([0.99]))[0]]), 4)
(0.5, 0.05)
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import xlogy

from rpa_sim.operate.live.tally import BANDS, Tally

__all__ = ["REFERENCE_DAYS", "GROUP_ROWS", "GROUP_ERRORS", "CALIBRATION_ALTERNATIVES", "CALIBRATION_MIXTURE",
           "LOG_CALIBRATION_WEIGHTS", "fit_calibration", "tolerance", "predicted_error", "calibration_log_factors",
           "non_increasing"]

#: Run days, from a segment's first, whose reviewed and audited rows the calibration is fitted on.
REFERENCE_DAYS = 14
#: The checked rows, and the errors among them, a group of confidence bands holds before the calibration gives it
#: a rate of its own: a rate resting on fewer errors is mostly noise, and a group without one would promise none.
GROUP_ROWS = 50
GROUP_ERRORS = 2
#: ``r`` of the alternatives ``q = 1 - (1 - f)^r``: a quarter or half the errors predicted, or twice or four times.
CALIBRATION_ALTERNATIVES = np.array([0.25, 0.5, 2.0, 4.0])
#: Their weights: more on more errors than predicted, the failure that lets errors through.
CALIBRATION_MIXTURE = np.array([0.15, 0.15, 0.35, 0.35])
LOG_CALIBRATION_WEIGHTS = np.log(CALIBRATION_MIXTURE)
# the smallest and largest error rate a band is predicted: a factor stays finite whatever an audit finds
_FLOOR = 1e-6


def non_increasing(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The weighted least-squares non-increasing fit of ``values`` (pool adjacent violators).

    >>> non_increasing(np.array([0.5, 0.125, 0.375, 0.0]), np.array([1.0, 1.0, 3.0, 1.0])).tolist()
    [0.5, 0.3125, 0.3125, 0.0]
    """
    blocks: list[list[float]] = []  # [weighted sum, weight, length]
    for value, weight in zip(values.tolist(), weights.tolist()):
        blocks.append([value * weight, weight, 1])
        while len(blocks) > 1 and blocks[-2][0] * blocks[-1][1] < blocks[-1][0] * blocks[-2][1]:
            total, mass, length = blocks.pop()
            blocks[-1][0] += total
            blocks[-1][1] += mass
            blocks[-1][2] += length
    return np.concatenate([np.full(int(length), total / mass) for total, mass, length in blocks])


def fit_calibration(reference: Tally) -> np.ndarray:
    """``f`` per confidence band: the error rate the reference's checked rows give, non-increasing in confidence.

    Bands are grouped from the most confident down until a group holds :data:`GROUP_ROWS` checked rows
    with :data:`GROUP_ERRORS` errors among them (the least confident group joins the one above when it
    holds fewer), so that no rate rests on a handful of audits or a lucky run without an error. A group's
    rate weighs reviewed rows 1 and audited rows ``1 / pi``; the groups' rates are made non-increasing in
    confidence (weighted pool adjacent violators); a group that found no error (only when the whole
    reference found fewer than two) is given half an error in one more row of its mean weight (no group
    is promised to be perfect), and each band takes its group's. The band of rows without a confidence is
    NaN; every band is NaN without a checked row.
    """
    seen = reference.rates > 0
    inverse = 1.0 / reference.rates[seen]
    weight = reference.reviewed[:-1] + inverse @ reference.audited[seen, :-1]
    errors = reference.reviewed_errors[:-1] + inverse @ reference.audit_errors[seen, :-1]
    rows = reference.reviewed[:-1] + reference.audited[seen, :-1].sum(axis=0)
    fitted = np.full(BANDS, np.nan)
    if not rows.sum():
        return fitted
    wrong = reference.reviewed_errors[:-1] + reference.audit_errors[seen, :-1].sum(axis=0)
    # group ends, from the top: a group closes once it holds GROUP_ROWS checked rows and GROUP_ERRORS errors
    group = np.zeros(BANDS - 1, dtype=np.int64)
    held, found, current = 0, 0, 0
    for band in range(BANDS - 2, -1, -1):
        group[band] = current
        held, found = held + int(rows[band]), found + int(wrong[band])
        if held >= GROUP_ROWS and found >= GROUP_ERRORS:
            held, found, current = 0, 0, current + 1
    groups = int(group.max()) + 1
    group_rows = np.bincount(group, weights=rows, minlength=groups)
    group_wrong = np.bincount(group, weights=wrong, minlength=groups)
    if groups > 1 and (group_rows[-1] < GROUP_ROWS or group_wrong[-1] < GROUP_ERRORS):
        group[group == groups - 1] = groups - 2  # the least confident group, too small: join the one above
        groups -= 1
        group_rows = np.bincount(group, weights=rows, minlength=groups)
    group_weight = np.bincount(group, weights=weight, minlength=groups)
    group_errors = np.bincount(group, weights=errors, minlength=groups)
    checked = group_rows > 0
    weight_checked = group_weight[checked]
    # groups are numbered from the most confident: reversed, they run up the confidence
    pooled = non_increasing((group_errors[checked] / weight_checked)[::-1], weight_checked[::-1])[::-1]
    mean_weight = weight_checked / group_rows[checked]
    floored = np.maximum(pooled, 0.5 * mean_weight / (weight_checked + mean_weight))
    rates = np.full(groups, np.nan)
    rates[checked] = np.maximum.accumulate(floored)  # the floor may not break the order
    fitted[:-1] = np.clip(rates[group], _FLOOR, 1.0 - _FLOOR)
    return fitted


def predicted_error(tally: Tally, calibration: np.ndarray) -> float | None:
    """The label-free error rate of the tally's auto-accepted rows: their mean ``f(c)``.

    None without auto-accepted rows, or when one of them has no confidence (it has no prediction).
    """
    auto = tally.auto.sum(axis=0)
    if not auto.sum() or auto[-1]:
        return None
    return float(np.dot(auto[:-1], calibration[:-1]) / auto.sum())


def tolerance(reference: Tally) -> float:
    """How far the calibration is taken to hold: two standard errors of the reference's audit errors, in (0, 0.9].

    ``f`` rests on the ``k`` errors the reference's audits found, so its level is known to about
    ``1 / sqrt(k)``; the test does not contradict ``f`` for what the reference could not tell:
    ``2 / sqrt(k)`` (``k`` at least 1), at most 0.9.

    >>> from rpa_sim.operate.live.tally import Tally
    >>> tolerance(Tally.of(route=np.array([2] * 100), inclusion=np.full(100, 0.5),
    ...                    correct=np.array([0] * 16 + [1] * 84), confidence=np.full(100, 0.95)))
    0.5
    """
    return min(2.0 / math.sqrt(max(int(reference.audit_errors[:, :-1].sum()), 1)), 0.9)


def calibration_log_factors(tally: Tally, calibration: np.ndarray, *, tolerance: float) -> np.ndarray:
    """``log G[j]``: the day's likelihood ratio over its audited rows, alternative ``j`` against its null.

    For ``r_j > 1`` (more errors than predicted) the null is ``f_up = f (1 + tolerance)``, for ``r_j < 1``
    ``f_down = f (1 - tolerance)``: each factor's expectation is at most 1 when the true rate lies between
    them. Per band ``b``, with ``n`` audits of which ``k`` wrong and ``q = 1 - (1 - f0)^r``:
    ``k log(q / f0) + (n - k) (r - 1) log(1 - f0)``. Audited rows without a confidence are left out (they
    have no prediction to test).
    """
    audited = tally.audited[:, :-1].sum(axis=0).astype(np.float64)
    wrong = tally.audit_errors[:, :-1].sum(axis=0).astype(np.float64)
    used = audited > 0
    if not used.any():
        return np.zeros(len(CALIBRATION_ALTERNATIVES))
    f = calibration[:-1][used][:, None]
    scale = np.where(CALIBRATION_ALTERNATIVES > 1.0, 1.0 + tolerance, 1.0 - tolerance)
    null = np.clip(f * scale, _FLOOR, 1.0 - _FLOOR)
    log_keep = np.log1p(-null)
    q = -np.expm1(CALIBRATION_ALTERNATIVES * log_keep)
    per_band = xlogy(wrong[used][:, None], q / null) + (audited[used] - wrong[used])[:, None] * (
        CALIBRATION_ALTERNATIVES - 1.0) * log_keep
    return np.asarray(per_band.sum(axis=0))
