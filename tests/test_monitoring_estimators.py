"""The estimators of rpa_sim.operate.monitoring (issue 14): worked examples by hand, scipy and ppi_py as oracles."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import beta, binomtest

from rpa_sim.common.errors import InputError
from rpa_sim.operate.monitoring.estimators import clopper_pearson, estimate, ppi_mean
from rpa_sim.operate.monitoring.log import AUDIT, AUTO, REVIEW, UNCHECKED, ProductionLog, object_column


def make_log(*, reviewed: list[bool] = (), strata: list[tuple[str | None, float, int, int, int]],
             confidence: np.ndarray | None = None) -> ProductionLog:
    """A log: reviewed rows (True = found correct), then per stratum ``(name, rate, accepted, audited, errors)``."""
    route, rate, correct, names = [], [], [], []
    for found in reviewed:
        route.append(REVIEW), rate.append(1.0), correct.append(int(found)), names.append(None)
    for name, probability, accepted, audited, errors in strata:
        for index in range(accepted):
            checked = index < audited
            route.append(AUDIT if checked else AUTO)
            rate.append(probability)
            correct.append((0 if index < errors else 1) if checked else UNCHECKED)
            names.append(name)
    n = len(route)
    return ProductionLog(route=np.array(route, dtype=np.int8), inclusion_probability=np.array(rate),
                         correct=np.array(correct, dtype=np.int8),
                         confidence=np.full(n, np.nan) if confidence is None else confidence,
                         stratum=None if all(s is None for s in names) else object_column(names),
                         line=np.arange(1, n + 1), path="day.jsonl")


# --------------------------------------------------------------------------- Clopper-Pearson


@pytest.mark.parametrize("errors, n", [(0, 1), (0, 25), (3, 25), (12, 25), (25, 25), (7, 400)])
@pytest.mark.parametrize("level", [0.8, 0.95, 0.99])
def test_clopper_pearson_is_scipys_exact_interval(errors, n, level):
    expected = binomtest(errors, n).proportion_ci(confidence_level=level, method="exact")
    assert clopper_pearson(errors, n, confidence_level=level) == pytest.approx((expected.low, expected.high), abs=1e-12)


def test_clopper_pearson_closed_forms_at_the_edges():
    # no error in n: the upper bound solves (1 - p)^n = alpha / 2; all errors: the lower bound solves p^n = alpha / 2
    assert clopper_pearson(0, 20, confidence_level=0.9) == pytest.approx((0.0, 1 - 0.05 ** (1 / 20)), abs=1e-12)
    assert clopper_pearson(20, 20, confidence_level=0.9) == pytest.approx((0.05 ** (1 / 20), 1.0), abs=1e-12)
    assert clopper_pearson(0, 0, confidence_level=0.95) == (0.0, 1.0)


@pytest.mark.parametrize("errors, n, level", [(-1, 5, 0.95), (6, 5, 0.95), (1, 5, 1.0), (1, 5, 0.0)])
def test_clopper_pearson_refuses_impossible_counts_and_levels(errors, n, level):
    with pytest.raises(ValueError, match="must be in"):
        clopper_pearson(errors, n, confidence_level=level)


# --------------------------------------------------------------------------- classical


def test_classical_worked_example():
    # 50 reviewed rows (20 found wrong); 200 accepted at rate 0.05, 10 of them audited, 2 errors
    log = make_log(reviewed=[False] * 20 + [True] * 30, strata=[(None, 0.05, 200, 10, 2)])
    result = estimate(log, method="classical", confidence_level=0.95)
    assert (result.rows, result.reviewed, result.auto_accepted, result.audited) == (250, 50, 200, 10)
    assert (result.audit_errors, result.reviewed_errors) == (2, 20)
    assert result.auto_error.estimate == pytest.approx(2 / 10)  # Hajek
    assert result.horvitz_thompson == pytest.approx(2 / (0.05 * 200))
    low, high = beta.ppf(0.025, 2, 9), beta.ppf(0.975, 3, 8)
    assert (result.auto_error.low, result.auto_error.high) == pytest.approx((low, high), abs=1e-12)
    # 200 of 250 rows accepted: quality = 1 - 0.8 θ, the bounds swapped
    quality = result.post_correction_quality
    assert (quality.estimate, quality.low, quality.high) == pytest.approx((1 - 0.8 * 0.2, 1 - 0.8 * high,
                                                                           1 - 0.8 * low))
    assert result.naive == pytest.approx(20 / 50)
    assert result.power_tuning is None and result.strata is None


def test_classical_without_audits_knows_nothing():
    result = estimate(make_log(reviewed=[True], strata=[(None, 0.0, 30, 0, 0)]), method="classical")
    assert (result.auto_error.estimate, result.auto_error.low, result.auto_error.high) == (None, 0.0, 1.0)
    assert result.horvitz_thompson is None
    assert result.post_correction_quality.low == pytest.approx(1 - 30 / 31)


def test_classical_refuses_several_audit_rates_naming_the_lines():
    log = make_log(strata=[("a", 0.1, 3, 1, 0), ("b", 0.2, 3, 1, 0)])
    with pytest.raises(InputError) as caught:
        estimate(log, method="classical")
    assert str(caught.value) == ("day.jsonl: classical assumes one audit rate for every auto-accepted row, and they "
                                 "differ from 0.1 (line 1) to 0.2 (line 4): use --method stratified or ppi")


def test_everything_reviewed_leaves_no_error_rate_and_full_quality():
    result = estimate(make_log(reviewed=[True, False], strata=[]), method="ppi")
    assert (result.auto_error.estimate, result.auto_error.low, result.auto_error.high) == (None, None, None)
    assert (result.post_correction_quality.estimate, result.post_correction_quality.low) == (1.0, 1.0)
    assert result.naive == 0.5


def test_no_review_gives_no_naive_figure():
    assert estimate(make_log(strata=[(None, 0.5, 4, 2, 1)]), method="classical").naive is None


# --------------------------------------------------------------------------- stratified


def test_stratified_worked_example_bonferroni_weighted():
    # stratum a: 100 accepted at 0.1, 10 audited, 1 error; stratum b: 300 at 0.02, 6 audited, none wrong
    log = make_log(strata=[("a", 0.1, 100, 10, 1), ("b", 0.02, 300, 6, 0)])
    result = estimate(log, method="stratified", confidence_level=0.95)
    # two strata: each interval at 1 - 0.05 / 2, so each tail 0.0125
    a_low = 1 - (1 - 0.0125) ** (1 / 10)  # one error in 10: Beta(1, 10) quantile in closed form
    a_high = binomtest(1, 10).proportion_ci(confidence_level=0.975, method="exact").high
    b_high = 1 - 0.0125 ** (1 / 6)
    assert result.auto_error.estimate == pytest.approx(0.25 * 0.1 + 0.75 * 0.0)
    assert result.auto_error.low == pytest.approx(0.25 * a_low, abs=1e-12)
    assert result.auto_error.high == pytest.approx(0.25 * a_high + 0.75 * b_high, abs=1e-12)
    assert result.horvitz_thompson == pytest.approx((1 / 0.1 + 0 / 0.02) / 400)
    a, b = result.strata
    assert (a.stratum, a.inclusion_probability, a.auto_accepted, a.audited, a.errors) == ("a", 0.1, 100, 10, 1)
    assert (b.stratum, b.estimate, b.low) == ("b", 0.0, 0.0)
    assert b.high == pytest.approx(b_high)


def test_stratified_without_names_stratifies_by_inclusion_probability():
    named = estimate(make_log(strata=[("a", 0.1, 100, 10, 1), ("b", 0.02, 300, 6, 0)]), method="stratified")
    unnamed = estimate(make_log(strata=[(None, 0.1, 100, 10, 1), (None, 0.02, 300, 6, 0)]), method="stratified")
    assert unnamed.auto_error == named.auto_error
    assert [s.stratum for s in unnamed.strata] == ["inclusion probability 0.02", "inclusion probability 0.1"]


def test_stratified_with_one_stratum_is_classical():
    log = make_log(reviewed=[False, True], strata=[("all", 0.05, 200, 10, 2)])
    stratified, classical = estimate(log, method="stratified"), estimate(log, method="classical")
    assert stratified.auto_error == classical.auto_error
    assert stratified.horvitz_thompson == classical.horvitz_thompson


def test_a_stratum_without_audits_leaves_the_estimate_undefined_and_its_share_unbounded():
    result = estimate(make_log(strata=[("a", 0.5, 10, 4, 2), ("b", 0.0, 30, 0, 0)]), method="stratified")
    assert result.auto_error.estimate is None and result.horvitz_thompson is None
    a_low, a_high = clopper_pearson(2, 4, confidence_level=0.975)
    assert result.auto_error.low == pytest.approx(0.25 * a_low)
    assert result.auto_error.high == pytest.approx(0.25 * a_high + 0.75 * 1.0)


def test_a_stratum_with_several_rates_is_refused():
    log = make_log(strata=[("a", 0.1, 2, 1, 0), ("a", 0.2, 2, 1, 0)])
    with pytest.raises(InputError, match=r"day.jsonl: line 1: stratum 'a' has several inclusion probabilities"):
        estimate(log, method="stratified")


# --------------------------------------------------------------------------- PPI++


def informative_log(rng: np.random.Generator, *, accepted: int, rate: float | np.ndarray) -> ProductionLog:
    """Accepted rows whose error probability is 1 - confidence, audited at ``rate``."""
    confidence = rng.uniform(0.5, 1.0, accepted)
    wrong = rng.random(accepted) < 1 - confidence
    rates = np.broadcast_to(rate, accepted).astype(float)
    audited = rng.random(accepted) < rates
    return ProductionLog(route=np.where(audited, AUDIT, AUTO).astype(np.int8), inclusion_probability=rates,
                         correct=np.where(audited, ~wrong, UNCHECKED).astype(np.int8), confidence=confidence)


def ppi_reference(log: ProductionLog, level: float):
    ppi_py = pytest.importorskip("ppi_py", reason="ppi_py (PyPI ppi_python) is the reference for PPI++; not installed")
    accepted, audited = log.auto_accepted, log.auto_accepted & log.audited
    rates = log.inclusion_probability[audited]
    weights = None if rates.min() == rates.max() else 1 / rates
    args = ((log.correct[audited] == 0).astype(float), 1 - log.confidence[audited], 1 - log.confidence[accepted])
    low, high = ppi_py.ppi_mean_ci(*args, alpha=1 - level, w=weights)
    point = ppi_py.ppi_mean_pointestimate(*args, w=weights)
    return float(np.ravel(point)[0]), float(low[0]), float(high[0])


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("level", [0.9, 0.95])
def test_ppi_agrees_with_ppi_py(seed, level):
    rng = np.random.default_rng(seed)
    # even seeds a uniform audit, odd ones two rates (weights 1 / rate)
    rate = 0.05 if seed % 2 == 0 else np.where(rng.random(3000) < 0.5, 0.02, 0.1)
    log = informative_log(rng, accepted=3000, rate=rate)
    result = estimate(log, method="ppi", confidence_level=level)
    point, low, high = ppi_reference(log, level)
    assert result.auto_error.estimate == pytest.approx(point, abs=1e-12)
    assert (result.auto_error.low, result.auto_error.high) == pytest.approx((max(low, 0), min(high, 1)), abs=1e-12)


def test_ppi_agrees_with_ppi_py_when_lambda_is_inside_0_1():
    # a weak proxy: errors only partly follow the confidences, so the tuned λ is neither clipped to 0 nor to 1
    rng = np.random.default_rng(11)
    confidence = rng.uniform(0.5, 1.0, 4000)
    wrong = rng.random(4000) < 0.5 * (1 - confidence) + 0.1
    audited = rng.random(4000) < 0.05
    log = ProductionLog(route=np.where(audited, AUDIT, AUTO).astype(np.int8), inclusion_probability=np.full(4000, 0.05),
                        correct=np.where(audited, ~wrong, UNCHECKED).astype(np.int8), confidence=confidence)
    result = estimate(log, method="ppi")
    assert 0.05 < result.power_tuning < 0.95
    point, low, high = ppi_reference(log, 0.95)
    assert (result.auto_error.estimate, result.auto_error.low, result.auto_error.high) == pytest.approx(
        (point, low, high), abs=1e-12)


def test_ppi_is_narrower_than_classical_when_confidences_are_informative():
    widths = {"ppi": [], "classical": []}
    for seed in range(20):
        log = informative_log(np.random.default_rng(seed), accepted=5000, rate=0.04)
        for method in widths:
            interval = estimate(log, method=method).auto_error
            widths[method].append(interval.high - interval.low)
    # on every one of 20 days, not only on average
    assert (np.array(widths["ppi"]) < np.array(widths["classical"])).all()


def test_ppi_worked_example_with_an_uninformative_proxy():
    # every confidence 0.9: the proxy does not vary, λ = 0 and PPI is the mean of the audits with a normal interval
    log = make_log(strata=[(None, 0.5, 10, 4, 1)], confidence=np.full(10, 0.9))
    result = estimate(log, method="ppi", confidence_level=0.95)
    half = 1.959963984540054 * math.sqrt(0.25 * 0.75 / 4)
    assert result.power_tuning == 0.0
    assert (result.auto_error.estimate, result.auto_error.low, result.auto_error.high) == pytest.approx(
        (0.25, 0.0, 0.25 + half))  # the low bound clipped at 0


def test_ppi_needs_two_audits():
    result = estimate(make_log(strata=[(None, 0.5, 10, 1, 0)], confidence=np.full(10, 0.9)), method="ppi")
    assert (result.auto_error.estimate, result.auto_error.low, result.auto_error.high) == (None, 0.0, 1.0)


def test_ppi_needs_confidences_and_a_chance_of_audit_for_every_accepted_row():
    with pytest.raises(InputError, match=r"day.jsonl: line 1: confidence: missing: ppi needs the confidence"):
        estimate(make_log(strata=[(None, 0.5, 4, 2, 1)]), method="ppi")
    log = make_log(strata=[("a", 0.5, 4, 2, 1), ("b", 0.0, 3, 0, 0)], confidence=np.full(7, 0.9))
    with pytest.raises(InputError, match=r"line 5: inclusion_probability: 0 on 3 auto-accepted rows"):
        estimate(log, method="ppi")


def test_ppi_mean_refuses_fewer_than_two_labels():
    with pytest.raises(ValueError, match="at least 2 labelled rows, got 1"):
        ppi_mean(np.array([1.0]), np.array([0.5]), np.array([0.5, 0.2]), confidence_level=0.9)


def test_estimate_refuses_unknown_methods_and_levels():
    log = make_log(strata=[(None, 0.5, 4, 2, 1)])
    with pytest.raises(ValueError, match="method must be one of"):
        estimate(log, method="bootstrap")
    with pytest.raises(ValueError, match=r"confidence_level must be in \(0, 1\), got 1.5"):
        estimate(log, method="classical", confidence_level=1.5)


def test_json_payload_and_csv_row():
    result = estimate(make_log(reviewed=[False], strata=[(None, 0.5, 4, 2, 1)]), method="classical")
    payload = result.to_dict()
    assert set(payload["auto_error"]) == {"estimate", "low", "high"}
    assert (payload["method"], payload["audited"], payload["naive"]) == ("classical", 2, 1.0)
    row = result.to_row()
    assert row["auto_error_estimate"] == 0.5 and row["post_correction_quality_high"] == payload[
        "post_correction_quality"]["high"]
    assert "strata" not in row and all(not isinstance(value, dict) for value in row.values())
