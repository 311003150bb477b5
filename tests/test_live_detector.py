"""The detector of ``rpa-sim watch`` (issue 28): its factors, its guarantee measured, its detection, and confseq."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rpa_sim.operate.live.detector import (
    ALTERNATIVES,
    MIXTURE,
    alternatives,
    binomial_log_factors,
    horvitz_thompson_log_factors,
    log_mixture,
    log_start_weight,
    null_grid,
    rejected_through,
    sr_step,
)
from rpa_sim.operate.live.watch import Watcher, WatchSettings
from tests.support_live import day_name, one_rate_tally, simulate_alarms

EPS, DELTA = 0.03, 0.05


def allowed(share: float, runs: int) -> float:
    """D plus two Monte Carlo standard errors (at D)."""
    return DELTA + 2 * math.sqrt(DELTA * (1 - DELTA) / runs)


# --------------------------------------------------------------------------- the day's factor


@given(st.integers(0, 60), st.data(), st.sampled_from([1e-4, 0.01, 0.03, 0.2, 0.9]))
def test_the_binomial_factor_is_the_betting_martingale_over_the_audits(n, data, eps):
    k = data.draw(st.integers(0, n))
    grid = np.array([eps])
    lam = (alternatives(grid)[0] - eps) / (eps * (1 - eps))
    wealth = np.prod([1 + lam * (x - eps) for x in [1] * k + [0] * (n - k)], axis=0) if n else np.ones(5)
    assert np.allclose(np.exp(binomial_log_factors(np.array(n), np.array(k), grid))[0], wealth, rtol=1e-10)


@given(st.lists(st.tuples(st.sampled_from([0.0, 0.02, 0.1, 0.5, 1.0]), st.integers(0, 30)), min_size=1, max_size=4,
                unique_by=lambda s: s[0]), st.data())
def test_the_horvitz_thompson_factor_is_the_product_over_every_row(strata, data):
    rates = np.array([rate for rate, _ in strata])
    accepted = np.array([size for _, size in strata])
    errors = np.array([0 if rate == 0 else data.draw(st.integers(0, size)) for rate, size in strata])
    grid = np.array([0.03, 0.3])
    got = horvitz_thompson_log_factors(rates, accepted, errors, grid)
    if not accepted.sum():
        assert (got == 0).all()
        return
    pibar = float(rates @ accepted) / accepted.sum()
    for g, eps in enumerate(grid):
        mu = pibar * (alternatives(grid)[g] - eps) / (eps * (1 - pibar * eps))
        assert (mu <= 1 / eps + 1e-12).all()
        rows = [1 + mu * (1 / rate - eps) for rate, wrong in zip(rates, errors) for _ in range(wrong)]
        rows += [1 - mu * eps] * int(accepted.sum() - errors.sum())
        assert np.allclose(got[g], np.sum(np.log(rows), axis=0), rtol=1e-9, atol=1e-12)


def test_factors_never_give_nan_even_at_the_ends_of_the_grid():
    grid = null_grid(0.5)
    for n, k in ((0, 0), (1, 1), (10_000, 10_000), (10_000, 0)):
        assert np.isfinite(binomial_log_factors(np.array(n), np.array(k), grid)).all()
    assert np.isfinite(horvitz_thompson_log_factors(np.array([1e-9, 1.0]), np.array([10**6, 10]),
                                                    np.array([10**6, 10]), grid)).all()


def test_one_start_weight_per_day_sums_to_one_and_the_detector_crosses_at_one_over_delta():
    assert math.isclose(sum(math.exp(log_start_weight(t, horizon=7)) for t in range(1, 7)), 0.95 * 6 / 7)
    assert math.isclose(sum(MIXTURE), 1.0) and len(MIXTURE) == len(ALTERNATIVES)
    log_m = np.array([math.log(20) - 1e-9, math.log(20)])
    assert rejected_through(log_m[:1], 0.05) == 0 and rejected_through(log_m[1:], 0.05) == 1


# --------------------------------------------------------------------------- the guarantee, measured


def _null_binomial(n: int, rate: float, segments: int, streams: int):
    def draw(rng, t):
        return np.full((streams, segments), n), rng.binomial(n, rate, size=(streams, segments))
    return draw


def _null_realised(accepted: int, rate: float, pi: float, segments: int, streams: int):
    """Design-based null: exactly ``rate`` of the accepted rows are wrong every day; Bernoulli audits at ``pi``."""
    wrong = round(accepted * rate)

    def draw(rng, t):
        audited = rng.binomial(accepted, pi, size=(streams, segments))
        return audited, rng.hypergeometric(wrong, accepted - wrong, audited)
    return draw


@pytest.mark.parametrize("null", ["binomial at EPS", "realised rate exactly EPS"])
def test_no_change_streams_alarm_at_most_delta_of_the_time(null):
    streams, days, segments = 200, 60, 4
    draw = {"binomial at EPS": _null_binomial(50, EPS, segments, streams),
            "realised rate exactly EPS": _null_realised(1000, EPS, 0.05, segments, streams)}[null]
    first = simulate_alarms(draw, streams=streams, days=days, segments=segments, max_error=EPS, seed=11)
    share = float((first > 0).any(axis=1).mean())
    assert share <= allowed(share, streams), (null, share)


@pytest.mark.slow
@pytest.mark.parametrize("null", ["binomial at EPS", "realised rate exactly EPS"])
def test_the_guarantee_over_a_year_of_many_segments(null):
    streams, days, segments = 1000, 365, 10
    draw = {"binomial at EPS": _null_binomial(50, EPS, segments, streams),
            "realised rate exactly EPS": _null_realised(1000, EPS, 0.05, segments, streams)}[null]
    first = simulate_alarms(draw, streams=streams, days=days, segments=segments, max_error=EPS, seed=5)
    share = float((first > 0).any(axis=1).mean())
    assert share <= allowed(share, streams), (null, share)


def test_the_horvitz_thompson_detector_keeps_the_guarantee_with_errors_where_audits_are_rarest():
    # two strata audited at 0.02 and 0.2; every error of the day sits in the rarely audited one (the worst case
    # for the weights 1/pi), exactly EPS of the day's rows wrong: the design-based null
    streams, days = 200, 60
    rates, sizes = np.array([0.02, 0.2]), np.array([600, 400])
    wrong = round(EPS * sizes.sum())
    grid = null_grid(EPS)
    grid = grid[:int(np.searchsorted(grid, EPS)) + 1]
    rng = np.random.default_rng(3)
    alarms = 0
    for _ in range(streams):
        log_r = np.full((len(grid), 5), -np.inf)
        for t in range(1, days + 1):
            found = np.array([rng.binomial(wrong, rates[0]), 0])
            log_r = sr_step(log_r, log_start_weight(t, horizon=365),
                            horvitz_thompson_log_factors(rates, sizes, found, grid))
            if rejected_through(log_mixture(log_r), DELTA) == len(grid):
                alarms += 1
                break
    assert alarms / streams <= allowed(alarms / streams, streams)


# --------------------------------------------------------------------------- detection


def _jump(after: float, *, streams: int, segments: int = 4, change_day: int = 31):
    def draw(rng, t):
        rate = np.full(segments, 0.02)
        if t >= change_day:
            rate[0] = after
        return np.full((streams, segments), 50), rng.binomial(50, rate, size=(streams, segments))
    return draw


def test_a_jump_to_eight_percent_is_caught_within_twelve_days_in_most_streams():
    streams, change = 100, 31
    first = simulate_alarms(_jump(0.08, streams=streams), streams=streams, days=change + 24, segments=4,
                            max_error=EPS, seed=2)
    delay = first[:, 0] - change + 1  # the day of the jump is day 1
    caught = float(((first[:, 0] >= change) & (delay <= 12)).mean())
    assert caught >= 0.85  # 0.92 over 2,000 streams (benchmarks/bench_live.py)
    assert not (first[:, 1:] > 0).any(axis=1).mean() > allowed(0, streams)


# --------------------------------------------------------------------------- the watcher runs the same detector


def test_the_watcher_alarms_on_the_day_the_vectorised_detector_does():
    streams, days = 3, 40
    rng = np.random.default_rng(8)
    errors = rng.binomial(50, np.where(np.arange(days) >= 15, 0.09, 0.02), size=(streams, 2, days))
    errors[:, 1] = rng.binomial(50, 0.02, size=(streams, days))

    def draw(_, t):
        return np.full((streams, 2), 50), errors[:, :, t - 1]

    expected = simulate_alarms(draw, streams=streams, days=days, segments=2, max_error=EPS)
    for stream in range(streams):
        watcher = Watcher(WatchSettings(max_error=EPS))
        for t in range(days):
            watcher.add_day(day_name(t), {(("document_type", name),): one_rate_tally(500, 50, int(errors[stream, s, t]))
                                          for s, name in enumerate(("a", "b"))})
        result = watcher.result()
        got = [next((i + 1 for i, day in enumerate(timeline.days) if "error_above_target" in day.alarm), 0)
               for timeline in result.segments]
        assert got == expected[stream].tolist()
        assert any(got)
        for timeline in result.segments:  # the bound reaches EPS exactly when the segment is above target
            above = [day.low >= EPS for day in timeline.days]
            raised = [i for i, day in enumerate(timeline.days) if "error_above_target" in day.alarm]
            assert raised == [i for i in range(days) if above[i] and (i == 0 or not above[i - 1])]


# --------------------------------------------------------------------------- confseq, an independent implementation


def _confseq():
    np.float_ = np.float64  # confseq 0.0.11 annotates with np.float_, gone in NumPy 2
    return pytest.importorskip("confseq.betting", reason="confseq is not installed: it needs Boost headers and a "
                               "build without isolation (docs/live.md, .ci/run); the oracle test skips")


def test_the_detector_is_confseqs_betting_martingales_weighted_by_start():
    betting = _confseq()
    # two segments; the second appears on day 3; a day without rows for the first on day 4
    audits = {"a": [[0] * 40 + [1] * 2, [0] * 30 + [1] * 4, [1] * 5 + [0] * 20, [], [1] * 6 + [0] * 30],
              "b": [None, None, [0] * 50, [1, 0, 0, 1] * 10, [0] * 10]}
    grid = np.array([EPS])
    lambdas = (alternatives(grid)[0] - EPS) / (EPS * (1 - EPS))
    log_r = {name: np.full((1, 5), -np.inf) for name in audits}
    for t in range(1, 6):
        seen = [name for name in audits if any(day is not None for day in audits[name][:t])]
        log_w = log_start_weight(t, horizon=3) - math.log(len(seen))
        for name in seen:
            x = audits[name][t - 1] or []
            log_r[name] = sr_step(log_r[name], log_w, binomial_log_factors(np.array(len(x)), np.array(sum(x)), grid))
            # the same wealth from confseq: a betting martingale from each start day, weighted by w_k / S_k
            total = 0.0
            for start in range(1, t + 1):
                if not any(day is not None for day in audits[name][:start]):
                    continue
                starters = [n for n in audits if any(day is not None for day in audits[n][:start])]
                weight = math.exp(log_start_weight(start, horizon=3)) / len(starters)
                x_since = np.array([v for day in audits[name][start - 1:t] for v in (day or [])], dtype=float)
                for lam, v in zip(lambdas, MIXTURE):
                    wealth = 1.0 if not len(x_since) else float(betting.betting_mart(
                        x_since, EPS, lambdas_fn_positive=lambda x, m, lam=lam: np.full(len(x), lam), theta=1,
                        m_trunc=True, trunc_scale=1)[-1])
                    total += weight * v * wealth
            assert math.isclose(float(np.exp(log_mixture(log_r[name]))[0]), total, rel_tol=1e-12), (name, t)
