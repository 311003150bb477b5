"""Named signals on records: read by both paths, carried into the outcome tables and their files, generated with
planted properties whose AUROCs follow from the generator's settings."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from pydantic import ValidationError
from scipy.stats import binom, norm

from rpa_sim.evaluate.outcomes import concat_tables, evaluate_kie, evaluate_vqa
from rpa_sim.evaluate.tablefile import read_info, read_table, write_table
from rpa_sim.records.models import KIERecord, VQARecord, decode_fast
from rpa_sim.records.readers import write_records
from rpa_sim.records.synthetic import ReceiptSettings, receipt_dicts, write_generated
from rpa_sim.records.synthetic.llm_signals import signal_specs
from rpa_sim.route.signals.discrimination import discrimination
from tests.conftest import run_cli, write_lines


def _kie(signals_of, *, record_id="r1"):
    """A KIE record: two non-grouped entities and a group of two, one of them with an empty value."""
    return {"id": record_id,
            "ground_truth": {"entities": [{"key": "total", "value": "10"}, {"key": "date", "value": "1.1"}],
                             "groups": [[{"key": "menu.nm", "value": "tea"}]]},
            "prediction": {
                "entities": [{"key": "total", "value": "10", "confidence": 0.9, **signals_of(0)},
                             {"key": "date", "value": "2.2", "confidence": 0.4, **signals_of(1)}],
                "groups": [[{"key": "menu.nm", "value": " ", "confidence": 0.5, **signals_of(2)},
                            {"key": "menu.nm", "value": "tea", "confidence": 0.8, **signals_of(3)}]]}}


def test_signals_are_read_alike_by_the_models_and_the_fast_path():
    record = _kie(lambda i: {"signals": {"agreement": [1.0, 0.2, 0.5, None][i]}} if i != 1 else {})
    model = KIERecord.model_validate(record)
    fast = decode_fast("kie", json.dumps(record))
    assert model.prediction.entities[0].signals == fast.prediction.entities[0].signals == {"agreement": 1.0}
    assert model.prediction.groups[0].entities[1].signals == {"agreement": None}
    assert fast.prediction.entities[1].signals is None
    question = {"id": "q", "answers": ["a"], "prediction": {"answer": "a", "confidence": 0.5,
                                                             "signals": {"second_call": 0.25}}}
    assert VQARecord.model_validate(question).prediction.signals == {"second_call": 0.25}
    assert decode_fast("vqa", json.dumps(question)).prediction.signals == {"second_call": 0.25}


@pytest.mark.parametrize("signals", [{"fused": 0.5}, {"confidence": 0.5}, {"": 0.5}, {"x" * 65: 0.5},
                                     {"agreement": 1.5}, {"agreement": -0.1}, {"agreement": "high"}])
def test_bad_signals_are_refused_by_both_paths(signals):
    question = {"id": "q", "answers": ["a"], "prediction": {"answer": "a", "confidence": 0.5, "signals": signals}}
    assert decode_fast("vqa", json.dumps(question)) is None
    with pytest.raises(ValidationError):
        VQARecord.model_validate(question)


def test_a_signal_outside_the_unit_interval_is_one_line_naming_file_line_record_and_field(tmp_path, capsys):
    path = write_lines(tmp_path / "records.jsonl", _kie(lambda i: {}),
                       _kie(lambda i: {"signals": {"agreement": 1.5}} if i == 1 else {}, record_id="r2"))
    status, _, err = run_cli(capsys, "score", path)
    assert status == 1 and len(err.strip().splitlines()) == 1
    assert "records.jsonl: line 2 (id r2): prediction.entities[1].signals.agreement: 1.5 is not in [0, 1]" in err


# -- the outcome tables -----------------------------------------------------------------------------------------


def test_kie_rows_carry_their_entities_signals_in_row_order_nan_where_missing():
    records = [KIERecord.model_validate(_kie(lambda i: {"signals": {"agreement": [1.0, 0.2, 0.5, None][i]}}
                                             if i != 1 else {"signals": {"logprob": 0.99}})),
               KIERecord.model_validate(_kie(lambda i: {}, record_id="r2"))]
    table = evaluate_kie(records)
    assert len(table) == 6  # the empty value is no row
    assert table.keys == ("total", "date", "menu.nm")
    np.testing.assert_array_equal(table.signals["agreement"], [1.0, np.nan, np.nan, np.nan, np.nan, np.nan])
    np.testing.assert_array_equal(table.signals["logprob"], [np.nan, 0.99, np.nan, np.nan, np.nan, np.nan])
    assert list(table.signals) == ["agreement", "logprob"]
    # the third entity's signal belongs to the empty value: no row carries it
    assert evaluate_kie(records[:1]).signals["agreement"].tolist()[:1] == [1.0]


def test_tables_without_signals_have_none_and_concat_fills_nan():
    plain = evaluate_kie([KIERecord.model_validate(_kie(lambda i: {}))])
    assert plain.signals == {}
    signed = evaluate_kie([KIERecord.model_validate(_kie(lambda i: {"signals": {"ocr": 0.25}}, record_id="r2"))])
    joined = concat_tables([plain, signed])
    np.testing.assert_array_equal(joined.signals["ocr"], [np.nan] * 3 + [0.25] * 3)


def test_signals_round_trip_through_the_parquet_file(tmp_path):
    kie = evaluate_kie([KIERecord.model_validate(_kie(lambda i: {"signals": {"ocr": 0.1 * i, "a.b": None}}))])
    vqa = evaluate_vqa([VQARecord.model_validate({"id": f"q{i}", "answers": ["a"], "prediction": {
        "answer": "a", "confidence": 0.5, **({"signals": {"k_sample": 0.6}} if i else {})}}) for i in range(3)])
    for table, name in ((kie, "kie.parquet"), (vqa, "vqa.parquet")):
        write_table(table, tmp_path / name)
        back = read_table(tmp_path / name)
        assert list(back.signals) == list(table.signals)
        for column in table.signals:
            np.testing.assert_array_equal(back.signals[column], table.signals[column])
        assert read_info(tmp_path / name).signals == tuple(table.signals)
    import pyarrow.parquet as pq

    assert "signal.k_sample" in pq.read_schema(tmp_path / "vqa.parquet").names
    assert pq.read_table(tmp_path / "vqa.parquet").column("signal.k_sample").to_pylist() == [None, 0.6, 0.6]


def test_a_table_without_signals_writes_no_signals_metadata(tmp_path):
    plain = evaluate_kie([KIERecord.model_validate(_kie(lambda i: {}))])
    write_table(plain, tmp_path / "plain.parquet")
    import pyarrow.parquet as pq

    metadata = json.loads(pq.read_schema(tmp_path / "plain.parquet").metadata[b"rpa_sim"])
    assert "signals" not in metadata  # files without signals are as they were before signals
    assert read_table(tmp_path / "plain.parquet").signals == {}


# -- the generator ------------------------------------------------------------------------------------------------


def test_asking_for_signals_changes_nothing_else_and_writes_what_write_records_writes(tmp_path):
    settings = ReceiptSettings(signals=signal_specs("llm"))
    plain = list(receipt_dicts(70, seed=3))
    signed = list(receipt_dicts(70, seed=3, settings=settings))

    def without_signals(record):
        copy = json.loads(json.dumps(record))
        for entity in [*copy["prediction"]["entities"],
                       *(e for group in copy["prediction"]["groups"] for e in group["entities"])]:
            assert sorted(entity.pop("signals")) == ["agreement", "agreement_copy", "logprob", "ocr", "verbalized"]
        return copy

    assert [without_signals(record) for record in signed] == plain
    write_generated(iter(signed), tmp_path / "fast.jsonl")
    write_records((KIERecord.model_validate(record) for record in signed), tmp_path / "slow.jsonl")
    assert (tmp_path / "fast.jsonl").read_bytes() == (tmp_path / "slow.jsonl").read_bytes()


# Receipts whose fields all share one error model: 10% OCR misreadings, 5% hallucinations, 5% missed; so a
# further draw of a field is right with probability r = 0.8, and two thirds of the errors are misreadings.
PLANTED = {"errors": {name: {"ocr": 0.1, "hallucination": 0.05, "missed": 0.05, "neighbour": 0.0, "moved": 0.0,
                             "duplicate": 0.0, "extra": 0.0}
                      for name in ("money", "count", "text")}}


@pytest.fixture(scope="module")
def planted_table():
    settings = ReceiptSettings.model_validate({**PLANTED, "signals": [s.model_dump() for s in signal_specs("llm")]})
    return evaluate_kie((KIERecord.model_validate(record) for record in receipt_dicts(600, seed=5, settings=settings)),
                        grounding="given")


def _agreement_auroc(k, right, repeats):
    """P(Bin(k, right) > Bin(k, w)) + P(=) / 2, averaged over the errors' repeat chances ``repeats``
    (weight, w)."""
    a = binom.pmf(np.arange(k + 1), k, right)
    total = 0.0
    for weight, repeat in repeats:
        b = binom.pmf(np.arange(k + 1), k, repeat)
        total += weight * (np.sum(np.tril(np.outer(a, b), -1)) + 0.5 * np.sum(a * b))
    return total


def test_each_planted_signal_has_the_auroc_its_settings_give(planted_table):
    table = planted_table
    error = table.errors()
    assert 0.14 < error.mean() < 0.18  # the planned share of errors among the predictions: 0.15 / 0.95
    measured = {name: discrimination(column, error).auroc for name, column in table.signals.items()}
    # degenerate: the error's L is 1.1 times longer on average: 1.1 / 2.1
    assert measured["logprob"] == pytest.approx(1.1 / 2.1, abs=0.025)
    # agreement: k = 5 draws; a right value is repeated with r = 0.8, a misreading with 0.5, a hallucination 0.02
    expected = _agreement_auroc(5, 0.8, [(2 / 3, 0.5), (1 / 3, 0.02)])
    assert measured["agreement"] == pytest.approx(expected, abs=0.025)
    # the noisy copy ranks as the original (its noise only breaks ties)
    assert measured["agreement_copy"] == pytest.approx(measured["agreement"], abs=0.01)
    # coarse: latent N(1, 1) right, N(0, 1) wrong, cut at 0, 0.75, 1.5
    cuts = np.array([-np.inf, 0.0, 0.75, 1.5, np.inf])
    right, wrong = np.diff(norm.cdf(cuts - 1.0)), np.diff(norm.cdf(cuts))
    expected = np.sum(np.tril(np.outer(right, wrong), -1)) + 0.5 * np.sum(right * wrong)
    assert measured["verbalized"] == pytest.approx(expected, abs=0.025)
    # complementary: sees the misreadings (two thirds of the errors) at separation 2, blind to the rest
    assert measured["ocr"] == pytest.approx(2 / 3 * norm.cdf(2 / math.sqrt(2)) + 1 / 3 * 0.5, abs=0.025)
    assert np.unique(table.signals["verbalized"]).tolist() == [0.6, 0.8, 0.9, 0.95]


def test_bad_generator_signal_settings_are_one_line_usage_errors(tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    for spec, message in (("magic", "unknown signal kind 'magic'"), ("copy=redundant", "copies 'agreement'"),
                          ("agreement,agreement", "two signals are named 'agreement'")):
        status, _, err = run_cli(capsys, "generate", "receipts", "--n", "2", "--out", out, "--signals", spec)
        assert status == 2 and message in err and len(err.strip().splitlines()) == 1
    status, _, err = run_cli(capsys, "generate", "docvqa", "--n", "2", "--out", out, "--signals", "llm")
    assert status == 2 and "--signals applies to receipts only" in err
    assert not out.exists()
