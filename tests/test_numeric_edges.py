"""Numbers at their edges (issue 20): tiny and near-1 levels, overflowing products, impossible logs, huge boxes.

Each case runs through the command line: the exit status, the one stderr line or the output, and JSON that
parses strictly (no NaN, no Infinity).
"""

from __future__ import annotations

import hashlib
import json
import math
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rpa_sim.common.jsontext import dumps
from rpa_sim.evaluate.metrics.evidence import box_iou, evidence_iou
from rpa_sim.evaluate.metrics.smudge import centroid_distance
from rpa_sim.records.synthetic import receipt_dicts, write_generated
from rpa_sim.route.certify import minimum_accepted
from tests.conftest import run_cli, write_lines

THRESHOLD = "0.9"
COST_OVERFLOW = ("rpa-sim: error: plan-audit: a cost per audit of 1e+308 makes 3 audits cost more than the largest "
                 "number (about 1.8e+308) (see 'rpa-sim plan-audit --help')\n")


def _refuse_constant(name: str) -> float:
    raise AssertionError(f"JSON output holds {name}")


def strict_json(text: str):
    """``json.loads`` that fails on NaN, Infinity and -Infinity, which JSON does not have."""
    return json.loads(text, parse_constant=_refuse_constant)


def numbers(payload) -> list[float]:
    """Every number in a parsed JSON payload."""
    if isinstance(payload, dict):
        return [n for value in payload.values() for n in numbers(value)]
    if isinstance(payload, list):
        return [n for value in payload for n in numbers(value)]
    return [payload] if isinstance(payload, (int, float)) and not isinstance(payload, bool) else []


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def receipts(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "receipts.jsonl"
    write_generated(receipt_dicts(120, seed=4), path)
    return path


@pytest.fixture(scope="module")
def table(receipts, tmp_path_factory):
    """The receipts' outcome table: each command reads it without evaluating the records again."""
    from rpa_sim.cli.entry import main

    path = tmp_path_factory.mktemp("table") / "receipts.parquet"
    assert main(["evaluate", str(receipts), "--out", str(path), "--workers", "1"]) == 0
    return path


# --------------------------------------------------------------------------- plan-audit


def test_a_budget_below_the_bands_plans_a_band_per_audit(table, capsys):
    status, out, err = run_cli(capsys, "plan-audit", table, "--policy", "confidence", "--threshold", THRESHOLD,
                               "--budget", "3", "--json")
    assert (status, err) == (0, "")
    payload = strict_json(out)
    assert payload["audits"] == 3 and [band["audits"] for band in payload["bands"]] == [1, 1, 1]
    assert 0 < payload["expected_width"] < 1 and 0 < payload["exact_width"] <= 1
    assert all(math.isfinite(n) for n in numbers(payload))
    status, out, _ = run_cli(capsys, "plan-audit", table, "--policy", "confidence", "--threshold", THRESHOLD,
                             "--budget", "1", "--bands", "6", "--json")
    payload = strict_json(out)
    assert status == 0 and [(band["band"], band["audits"]) for band in payload["bands"]] == [("[0, 1]", 1)]


def test_a_budget_of_nothing_is_refused(table, capsys):
    status, out, err = run_cli(capsys, "plan-audit", table, "--policy", "confidence", "--threshold", THRESHOLD,
                               "--budget", "0", "--json")
    assert (status, out) == (2, "")
    assert err == ("rpa-sim: error: plan-audit: argument --budget: expected an integer >= 1, got '0' (see 'rpa-sim "
                   "plan-audit --help')\n")


def test_a_cost_that_overflows_is_refused_and_writes_nothing(table, tmp_path, capsys):
    before = digest(table)
    status, out, err = run_cli(capsys, "plan-audit", table, "--policy", "confidence", "--threshold", THRESHOLD,
                               "--budget", "3", "--cost-per-audit", "1e308", "--json", "--out", tmp_path / "plan.yaml")
    assert (status, out, err) == (2, "", COST_OVERFLOW)
    assert list(tmp_path.iterdir()) == [] and digest(table) == before
    # one audit at the largest cost is still a number
    status, out, _ = run_cli(capsys, "plan-audit", table, "--policy", "confidence", "--threshold", THRESHOLD,
                             "--budget", "1", "--cost-per-audit", "1e308", "--json")
    assert status == 0 and strict_json(out)["cost"] == 1e308


def test_a_level_a_hair_below_1_plans_a_finite_width(table, capsys):
    status, out, err = run_cli(capsys, "plan-audit", table, "--policy", "confidence", "--threshold", THRESHOLD,
                               "--target-width", "1e-9", "--confidence-level", "0.9999999999999999", "--json")
    assert (status, err) == (0, "")
    payload = strict_json(out)
    # only auditing every item reaches 1e-9 (the finite-population correction makes its width 0)
    assert payload["audits"] == payload["auto_accepted"] and payload["expected_width"] == 0.0
    assert all(band["rate"] == 1.0 for band in payload["bands"])
    status, out, _ = run_cli(capsys, "plan-audit", table, "--policy", "confidence", "--threshold", THRESHOLD,
                             "--target-width", "0.05", "--confidence-level", "0.9999999999999999", "--json")
    payload = strict_json(out)
    assert status == 0 and 0 < payload["audits"] < payload["auto_accepted"]
    assert 0.045 < payload["expected_width"] <= 0.05 and 0 < payload["uniform_width"] < 1


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(size=st.one_of(st.tuples(st.just("--budget"), st.integers(1, 5000)),
                      st.tuples(st.just("--target-width"), st.floats(1e-300, 1.0))),
       level=st.one_of(st.sampled_from([1e-300, 0.5, 0.95, 0.9999999999999999]),
                       st.floats(0.0, 1.0, exclude_min=True, exclude_max=True)),
       bands=st.integers(1, 12), threshold=st.floats(0.0, 1.2),
       cost=st.one_of(st.none(), st.floats(0.0, 1.7e308)))
def test_plan_audit_json_never_holds_a_number_that_is_not_finite(table, capsys, size, level, bands, threshold, cost):
    argv = ["plan-audit", table, "--policy", "confidence", "--threshold", repr(threshold), size[0], repr(size[1]),
            "--confidence-level", repr(level), "--bands", str(bands), "--json"]
    status, out, err = run_cli(capsys, *argv, *([] if cost is None else ["--cost-per-audit", repr(cost)]))
    if status == 0:
        assert err == "" and all(math.isfinite(n) for n in numbers(strict_json(out)))
    else:  # nothing auto-accepted at the threshold (1), or a cost past the largest number (2)
        assert out == "" and err.startswith("rpa-sim: error: ") and err.count("\n") == 1
        assert ("auto-accepts nothing" in err) if status == 1 else ("cost more than the largest number" in err)


# --------------------------------------------------------------------------- estimate


def test_an_audit_at_the_smallest_probability_is_refused(tmp_path, capsys):
    log = write_lines(tmp_path / "day.jsonl", {"route": "review", "correct": False},
                      {"route": "audit", "inclusion_probability": 5e-324, "correct": False, "stratum": "low"},
                      *[{"route": "auto", "inclusion_probability": 5e-324, "stratum": "low"}] * 644)
    before = digest(log)
    for method in ("classical", "stratified"):
        status, out, err = run_cli(capsys, "estimate", log, "--method", method, "--json")
        assert (status, out) == (1, "")
        assert err == (f"rpa-sim: error: {log}: 645 auto-accepted rows of stratum 'low' at inclusion probability "
                       f"5e-324 have 1 audited (about 3.19e-321 expected), a count this high has a chance below 1e-09 "
                       f"under Binomial(645, 5e-324): the inclusion probabilities cannot be the ones the audits were "
                       f"drawn with\n")
    assert digest(log) == before and [path.name for path in tmp_path.iterdir()] == ["day.jsonl"]


def test_the_issue_log_of_10_audits_at_1e_300_is_refused(tmp_path, capsys):
    log = write_lines(tmp_path / "day.jsonl", *[{"route": "review", "correct": True}] * 5,
                      *[{"route": "audit", "inclusion_probability": 1e-300, "correct": False}] * 10,
                      *[{"route": "auto", "inclusion_probability": 1e-300}] * 635)
    status, out, err = run_cli(capsys, "estimate", log, "--method", "classical")
    assert (status, out) == (1, "")
    assert err == (f"rpa-sim: error: {log}: 645 auto-accepted rows at inclusion probability 1e-300 have 10 audited "
                   f"(about 6.45e-298 expected), a count this high has a chance below 1e-09 under Binomial(645, "
                   f"1e-300): the inclusion probabilities cannot be the ones the audits were drawn with\n")


def test_too_few_audits_for_their_probability_are_refused(tmp_path, capsys):
    log = write_lines(tmp_path / "day.jsonl", {"route": "review", "correct": True},
                      *[{"route": "auto", "inclusion_probability": 0.5}] * 100)
    status, out, err = run_cli(capsys, "estimate", log, "--method", "stratified", "--json")
    assert (status, out) == (1, "")
    assert err == (f"rpa-sim: error: {log}: 100 auto-accepted rows at inclusion probability 0.5 have 0 audited "
                   f"(about 50 expected), a count this low has a chance below 1e-09 under Binomial(100, 0.5): the "
                   f"inclusion probabilities cannot be the ones the audits were drawn with\n")


def test_no_audit_at_the_smallest_probability_is_an_estimate_in_json(tmp_path, capsys):
    log = write_lines(tmp_path / "day.jsonl", {"route": "review", "correct": False},
                      *[{"route": "auto", "inclusion_probability": 5e-324}] * 645)
    status, out, err = run_cli(capsys, "estimate", log, "--method", "classical", "--json")
    assert (status, err) == (0, "")
    payload = strict_json(out)
    assert payload["auto_error"] == {"estimate": None, "low": 0.0, "high": 1.0}
    assert payload["horvitz_thompson"] == 0.0


def test_a_horvitz_thompson_estimate_above_1_is_capped(tmp_path, capsys):
    # 8 of 20 audited at 0.25 (5 expected; plausible), all wrong: errors / (π N) = 8 / 5
    log = write_lines(tmp_path / "day.jsonl", {"route": "review", "correct": True},
                      *[{"route": "audit", "inclusion_probability": 0.25, "correct": False}] * 8,
                      *[{"route": "auto", "inclusion_probability": 0.25}] * 12)
    for method in ("classical", "stratified"):
        status, out, _ = run_cli(capsys, "estimate", log, "--method", method, "--json")
        payload = strict_json(out)
        assert status == 0 and payload["horvitz_thompson"] == 1.0 and payload["auto_error"]["estimate"] == 1.0


rates = st.one_of(st.sampled_from([5e-324, 1e-300, 1e-9, 0.5, 1.0]), st.floats(0.0, 1.0))


@st.composite
def logs(draw) -> list[dict]:
    """A log of up to 3 strata, each drawn from its rate (or not: implausible counts are refused)."""
    rows = [{"route": "review", "correct": draw(st.booleans())} for _ in range(draw(st.integers(0, 3)))]
    for stratum in range(draw(st.integers(1, 3))):
        rate = draw(rates)
        accepted = draw(st.integers(1, 40))
        audited = draw(st.integers(0 if rate < 1 else accepted, accepted if rate > 0 else 0))
        for row in range(accepted):
            confidence = draw(st.floats(0.0, 1.0))
            if row < audited:
                rows.append({"route": "audit", "inclusion_probability": rate, "correct": draw(st.booleans()),
                             "stratum": f"s{stratum}", "confidence": confidence})
            else:
                rows.append({"route": "auto", "inclusion_probability": rate, "stratum": f"s{stratum}",
                             "confidence": confidence})
    return rows


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=logs(), method=st.sampled_from(["classical", "stratified", "ppi"]),
       level=st.one_of(st.sampled_from([1e-300, 0.95, 0.9999999999999999]),
                       st.floats(0.0, 1.0, exclude_min=True, exclude_max=True)))
def test_estimate_json_never_holds_a_number_that_is_not_finite_nor_a_rate_outside_0_1(tmp_path, capsys, rows,
                                                                                     method, level):
    log = write_lines(tmp_path / "day.jsonl", *rows)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning either
        status, out, err = run_cli(capsys, "estimate", log, "--method", method, "--confidence-level", repr(level),
                                   "--json")
    if status != 0:
        assert (status, out) == (1, "") and err.startswith(f"rpa-sim: error: {log}") and err.count("\n") == 1
        return
    payload = strict_json(out)
    assert err == "" and all(math.isfinite(n) for n in numbers(payload))
    shares = [payload["naive"], payload["horvitz_thompson"], *payload["auto_error"].values(),
              *payload["post_correction_quality"].values()]
    for stratum in payload["strata"] or ():
        shares += [stratum["estimate"], stratum["low"], stratum["high"]]
    assert all(0.0 <= share <= 1.0 for share in shares if share is not None)


# --------------------------------------------------------------------------- sweep


@pytest.mark.parametrize("spec, shown", [("linspace:-1e308:1e308:3", "-1e308"), ("0.5,-0.1", "-0.1")])
@pytest.mark.parametrize("form", ["--json", "--format=csv"])
def test_a_grid_below_0_is_a_usage_error(table, capsys, spec, shown, form):
    status, out, err = run_cli(capsys, "sweep", table, "--policy", "confidence", f"--thresholds={spec}", form)
    assert (status, out) == (2, "")
    assert err == (f"rpa-sim: error: sweep: argument --thresholds: thresholds must be at least 0 (every swept score "
                   f"is in [0, 1]; above 1 reviews everything), got {shown!r} in {spec!r} "
                   f"(see 'rpa-sim sweep --help')\n")


def test_a_grid_up_to_the_largest_number_sweeps_finite_thresholds(table, capsys):
    status, out, _ = run_cli(capsys, "sweep", table, "--policy", "confidence", "--policy", "grounding-sweep",
                             "--thresholds=linspace:0:1.7e308:3", "--json")
    rows = strict_json(out)
    assert status == 0 and [row["threshold"] for row in rows] == [0.0, 8.5e307, 1.7e308] * 2
    assert rows[1]["auto_rate"] == 0.0  # above 1: everything reviewed
    status, out, _ = run_cli(capsys, "sweep", table, "--policy", "confidence", "--thresholds=0,1.7e308",
                             "--format", "csv")
    assert status == 0 and [line.split(",")[1] for line in out.splitlines()] == ["threshold", "0.0", "1.7e+308"]


def test_a_scenario_grid_below_0_is_bad_input(tmp_path, capsys):
    scenario = tmp_path / "s.yaml"
    scenario.write_text("name: s\ndata: {generate: receipts, n: 5, seed: 1}\npolicies: [confidence]\n"
                        "thresholds: '-1,0.5'\n")
    status, out, err = run_cli(capsys, "run", scenario)
    assert (status, out) == (1, "")
    assert err == ("rpa-sim: error: thresholds must be at least 0 (every swept score is in [0, 1]; above 1 reviews "
                   "everything), got '-1' in '-1,0.5'\n")


# --------------------------------------------------------------------------- certify


@pytest.mark.parametrize("max_error, delta", [
    ("1e-20", "0.05"), ("1e-300", "1e-300"), ("1e-300", "0.9999999999999999"), ("0.9999999999999999", "1e-300"),
    ("0.9999999999999999", "0.9999999999999999"), ("0.5", "1e-17"),
])
def test_certify_takes_tiny_and_near_1_levels(table, capsys, max_error, delta):
    argv = ["certify", table, "--max-error", max_error, "--delta", delta, "--calibration-fraction", "1"]
    status, out, err = run_cli(capsys, *argv, "--json")
    assert (status, err) == (0, "")
    payload = strict_json(out)
    if payload["threshold"] is not None:  # the bound of what is certified is within max_error, even at delta 1e-17
        assert payload["upper_bound"] <= float(max_error) and payload["p_value"] <= float(delta)
    status, out, err = run_cli(capsys, *argv)
    assert (status, err) == (0, "") and out.startswith(("Auto-accept iff", "No threshold is certified"))
    status, out, err = run_cli(capsys, *argv, "--by", "field", "--json")
    assert (status, err) == (0, "") and len(strict_json(out)) > 1


def test_certify_with_1e_20_says_how_many_items_it_would_need(table, capsys):
    status, out, _ = run_cli(capsys, "certify", table, "--max-error", "1e-20", "--delta", "0.05")
    assert status == 0
    assert "at least 3e+20 values must be auto-accepted, even if none of them is wrong" in out


def test_certified_at_delta_1e_17_has_its_bound_within_max_error(table, capsys):
    status, out, _ = run_cli(capsys, "certify", table, "--max-error", "0.5", "--delta", "1e-17",
                             "--calibration-fraction", "1", "--json")
    payload = strict_json(out)
    # 1 - 1e-17 rounds to 1, where the old quantile gave an upper bound of 1
    assert status == 0 and payload["threshold"] is not None and payload["upper_bound"] < 0.5


@pytest.mark.parametrize("max_error, delta", [(0.01, 0.05), (0.1, 0.1), (0.3, 1e-12), (1e-6, 0.5), (0.999, 1e-300)])
def test_minimum_accepted_is_the_smallest_n(max_error, delta):
    n = minimum_accepted(max_error, delta)
    assert (1 - max_error) ** n <= delta and (n == 1 or (1 - max_error) ** (n - 1) > delta)


def test_minimum_accepted_of_tiny_errors_is_a_python_integer():
    assert minimum_accepted(1e-20, 0.05) == 299573227355399127040
    assert minimum_accepted(1e-300, 1e-300) == pytest.approx(math.log(1e300) * 1e300, rel=1e-12)


# --------------------------------------------------------------------------- boxes at ±1e308


def test_evidence_iou_of_boxes_at_1e308_through_score(tmp_path, capsys):
    # the prediction is the upper right quarter of the ground truth: IoU 1/4
    question = {"id": "q1", "question": "How many?", "answers": ["12"],
                "evidence": [{"page": 0, "bbox": [-1e308, -1e308, 1e308, 1e308]}],
                "prediction": {"answer": "12", "confidence": 0.9,
                               "evidence": [{"page": 0, "bbox": [0, 0, 1e308, 1e308]}]}}
    data = write_lines(tmp_path / "q.jsonl", question)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        status, out, err = run_cli(capsys, "score", data, "--json", "--workers", "1")
    assert (status, err) == (0, "") and strict_json(out)["evidence_iou"] == 0.25


def test_grounding_of_ocr_boxes_at_1e308_through_score(tmp_path, capsys):
    # the answer's centroid (5e307, 5e307), the prediction's (1e308, 5e307): half the page's width away,
    # d = 0.5 and g = exp(-1); the sums of coordinates overflow unless scaled
    page = {"width": 1e308, "height": 1e308, "words": [{"text": "12", "bbox": [0, 0, 1e308, 1e308]},
                                                        {"text": "8.5", "bbox": [1e308, 0, 1e308, 1e308]}]}
    question = {"id": "q1", "question": "How many?", "answers": ["12"], "document": {"pages": [page]},
                "prediction": {"answer": "8.5", "confidence": 0.9}}
    data = write_lines(tmp_path / "q.jsonl", question)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        status, out, err = run_cli(capsys, "score", data, "--json", "--workers", "1")
    assert (status, err) == (0, "") and strict_json(out)["grounding"] == math.exp(-1)


@pytest.mark.parametrize("a, b, iou", [
    ([-1e308, -1e308, 1e308, 1e308], [0, 0, 1e308, 1e308], 0.25),
    ([0, 0, 1e308, 1e308], [-1e308, -1e308, 1e308, 1e308], 0.25),
    ([-1.7e308, -1.7e308, 1.7e308, 1.7e308], [-1.7e308, -1.7e308, 1.7e308, 1.7e308], 1.0),
    # two boxes 4 units wide sharing 2 (a unit of 2**1021, about 2.2e307, so that the coordinates are exact): 1/3
    ([-3 * 2.0**1021, 0, 2.0**1021, 1e308], [-(2.0**1021), 0, 3 * 2.0**1021, 1e308], 1 / 3),
    ([1e-300, 1e-300, 2e-300, 2e-300], [1e-300, 1e-300, 2e-300, 2e-300], 1.0),
])
def test_box_iou_at_the_edges_of_the_floats(a, b, iou):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert box_iou(a, b) == iou
        assert evidence_iou([(0, a)], [(0, b)]) == iou


def test_centroid_distance_at_the_edges_of_the_floats():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert centroid_distance((0, 0, 1e308, 10), (1e308, 0, 1e308, 10), page_size=(1e308, 1000)) == 0.5
        box = (-1.7e308, -1.7e308, 1.7e308, 1.7e308)
        assert centroid_distance(box, (-1.7e308, 0, 1.7e308, 1.7e308), normalization="gt_box") == 0.25
        assert centroid_distance(box, box, normalization="mean_box") == 0.0


# --------------------------------------------------------------------------- the JSON guard


def test_numeric_answers_near_1e308_score_in_strict_json_and_csv(tmp_path, capsys):
    question = {"id": "q1", "question": "How many?", "answers": ["1.7e308"],
                "prediction": {"answer": "0", "confidence": 0.9}}
    data = write_lines(tmp_path / "q.jsonl", question, {**question, "id": "q2"})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the sum of the deviations overflows, their mean does not
        status, out, err = run_cli(capsys, "score", data, "--json", "--workers", "1")
    assert (status, err) == (0, "") and strict_json(out)["absolute_deviation"] == 1.7e308
    # 1e308 against -1e308 is 2e308 away, more than any float: null in JSON, an empty cell in CSV
    beyond = write_lines(tmp_path / "beyond.jsonl", {**question, "answers": ["1e308"],
                                                     "prediction": {"answer": "-1e308", "confidence": 0.9}})
    status, out, err = run_cli(capsys, "score", beyond, "--json", "--workers", "1")
    payload = strict_json(out)
    assert (status, err) == (0, "") and (payload["absolute_deviation"], payload["absolute_deviation_compared"]) == (
        None, 1)
    status, out, _ = run_cli(capsys, "score", beyond, "--format", "csv", "--workers", "1")
    header, row = out.splitlines()
    assert status == 0 and dict(zip(header.split(","), row.split(",")))["absolute_deviation"] == ""



def test_json_output_writes_a_number_that_is_not_finite_as_null():
    payload = {"width": math.inf, "low": -math.inf, "rows": [0.5, math.nan, (1, math.nan)], "name": "n", "ok": True}
    assert strict_json(dumps(payload)) == {"width": None, "low": None, "rows": [0.5, None, [1, None]], "name": "n",
                                           "ok": True}
