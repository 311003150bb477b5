"""The synthetic data generators: determinism, validity, arithmetic, error kinds, calibration, shares."""

from __future__ import annotations

import collections
import json
import re

import numpy as np
import pytest
import yaml
from pydantic import ValidationError

from rpa_sim.cli.entry import main
from rpa_sim.evaluate.grounding import locatability, locate
from rpa_sim.evaluate.metrics.calibration import ece, generated_ece, is_correct, reliability_table
from rpa_sim.evaluate.metrics.kieval import OUTCOME_NAMES
from rpa_sim.evaluate.metrics.smudge import answer_type
from rpa_sim.evaluate.outcomes import evaluate_kie, evaluate_vqa
from rpa_sim.records.readers import read_records, write_records
from rpa_sim.records.synthetic import (
    DocVQASettings,
    ReceiptSettings,
    docvqa_dicts,
    generate_docvqa,
    generate_receipts,
    receipt_dicts,
    write_dataset,
    write_generated,
)
from rpa_sim.records.synthetic._draws import BLOCK
from rpa_sim.records.synthetic.errors import FIELD_CLASSES, KIE_KINDS, VQA_KINDS, KIEErrorRates
from rpa_sim.records.synthetic.receipt_settings import EXTRA_KEYS, RECEIPT_KEYS

CORRECT, SUBSTITUTION, DELETION = (OUTCOME_NAMES.index(name) for name in ("correct", "substitution", "deletion"))
# Calibration tolerances, on the sample sizes used below (about 21,000 predictions): the construction
# is exact in expectation, so what is left is sampling noise (a bin of 1,000 predictions has a standard
# error of about 0.015) and KIEval's labelling of duplicated values by confidence.
CALIBRATED_ECE = 0.02
CALIBRATED_BIN_GAP = 0.05
MISCALIBRATED_ECE = 0.05


def only_kie(kind: str, rate: float, **settings) -> ReceiptSettings:
    """Receipt settings where every field makes one kind of error (``extra`` included) and no other."""
    rates = {name: 0.0 for name in (*KIE_KINDS, "extra")}
    rates[kind] = rate
    return ReceiptSettings(errors={name: rates for name in FIELD_CLASSES}, **settings)


def only_vqa(kind: str, rate: float) -> DocVQASettings:
    rates = dict.fromkeys(VQA_KINDS, 0.0)
    rates[kind] = rate
    return DocVQASettings(errors={name: rates for name in ("table", "form", "paragraph")})


# --------------------------------------------------------------------------- determinism and validity


@pytest.mark.parametrize("generate", [generate_receipts, generate_docvqa])
def test_same_seed_gives_identical_bytes(tmp_path, generate):
    first, second, other = tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl.gz", tmp_path / "c.jsonl.gz"
    write_records(generate(40, seed=5), first)
    write_records(generate(40, seed=5), second)
    write_records(generate(40, seed=6), other)
    assert first.read_bytes() == second.read_bytes()
    assert first.read_bytes() != other.read_bytes()


@pytest.mark.parametrize("dicts", [receipt_dicts, docvqa_dicts])
def test_record_i_does_not_depend_on_n(dicts):
    many = list(dicts(2 * BLOCK + 10, seed=9))
    assert list(dicts(3, seed=9)) == many[:3]
    # across a block boundary: the records of the block are the same whatever n cuts
    assert list(dicts(BLOCK + 2, seed=9))[BLOCK:] == many[BLOCK:BLOCK + 2]


@pytest.mark.parametrize(("dicts", "generate"), [(receipt_dicts, generate_receipts), (docvqa_dicts, generate_docvqa)])
def test_fast_writer_matches_write_records_byte_for_byte(tmp_path, dicts, generate):
    for name in ("x.jsonl", "x.jsonl.gz"):
        fast, canonical = tmp_path / f"fast-{name}", tmp_path / f"canonical-{name}"
        assert write_generated(dicts(70, seed=3), fast) == 70
        write_records(generate(70, seed=3), canonical)
        assert fast.read_bytes() == canonical.read_bytes()


@pytest.mark.parametrize(("kind", "dicts"), [("receipts", receipt_dicts), ("docvqa", docvqa_dicts)])
def test_write_dataset_gives_the_same_bytes_with_workers(tmp_path, kind, dicts):
    n = BLOCK * 4 + 7  # several blocks and a cut one (a docvqa block holds 4 questions per page)
    reference = tmp_path / "reference.jsonl.gz"
    write_generated(dicts(n, seed=2), reference)
    for workers in (1, 2):
        path = tmp_path / f"workers-{workers}.jsonl.gz"
        assert write_dataset(kind, path, n=n, seed=2, workers=workers) == n
        assert path.read_bytes() == reference.read_bytes()
    with pytest.raises(ValueError, match="workers must be a positive integer, got 0"):
        write_dataset(kind, tmp_path / "x.jsonl", n=1, seed=0, workers=0)
    with pytest.raises(ValueError, match="kind must be 'receipts' or 'docvqa', got 'invoices'"):
        write_dataset("invoices", tmp_path / "x.jsonl", n=1, seed=0)
    with pytest.raises(TypeError, match="take"):
        write_dataset(kind, tmp_path / "x.jsonl", n=1, seed=0,
                      settings=DocVQASettings() if kind == "receipts" else ReceiptSettings())
    assert not list(tmp_path.glob(".*.tmp"))


# --------------------------------------------------------------------------- ids: unique per seed


@pytest.mark.parametrize(("dicts", "kind"), [(receipt_dicts, "receipt"), (docvqa_dicts, "question")])
def test_ids_name_the_seed_and_the_record(dicts, kind):
    ids = [record["id"] for record in dicts(BLOCK + 2, seed=4)]
    assert ids == [f"{kind}-s4-{index:06d}" for index in range(BLOCK + 2)]  # the rule of docs/formats.md


@pytest.mark.parametrize(("kind", "count"), [("receipts", "documents"), ("docvqa", "questions")])
def test_files_of_two_seeds_are_shards_of_one_data_set(tmp_path, capsys, kind, count):
    shards = tmp_path / "shards"
    for seed in (1, 2):
        assert main(["generate", kind, "--n", "50", "--seed", str(seed), "--out", str(shards / f"seed-{seed}.jsonl"),
                     "--workers", "1"]) == 0
    ids = [[json.loads(line)["id"] for line in (shards / f"seed-{seed}.jsonl").read_text().splitlines()]
           for seed in (1, 2)]
    assert len(set(ids[0])) == len(set(ids[1])) == 50
    assert not set(ids[0]) & set(ids[1])
    capsys.readouterr()
    assert main(["score", str(shards), "--json"]) == 0  # read as one data set: no id is in two shards
    assert json.loads(capsys.readouterr().out)[count] == 100


@pytest.mark.parametrize("kind", ["receipts", "docvqa"])
def test_one_seed_gives_the_same_bytes_run_to_run_and_with_workers(tmp_path, kind):
    n = BLOCK * 4 + 7  # several blocks and a cut one
    written = []
    for run, workers in enumerate((1, 1, 2)):
        path = tmp_path / f"run-{run}.jsonl.gz"
        assert main(["generate", kind, "--n", str(n), "--seed", "8", "--out", str(path),
                     "--workers", str(workers)]) == 0
        written.append(path.read_bytes())
    assert written[0] == written[1] == written[2]


@pytest.mark.parametrize(("dicts", "task"), [(receipt_dicts, "kie"), (docvqa_dicts, "vqa")])
def test_written_records_are_all_valid(tmp_path, dicts, task):
    path = tmp_path / "data.jsonl.gz"
    write_generated(dicts(150, seed=1), path)
    stream = read_records(path, skip_invalid=True)
    records = list(stream)
    assert stream.task == task and len(records) == 150 and stream.skipped == []
    assert all(r.document is not None and r.document.pages[0].words for r in records)


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="n must be a non-negative integer, got -1"):
        next(generate_receipts(-1, seed=0))
    with pytest.raises(ValueError, match=r"seed must be a non-negative integer, got 1\.5"):
        next(generate_docvqa(1, seed=1.5))


# --------------------------------------------------------------------------- receipts


def _number(text: str) -> int:
    """The amount of a money value as the generator formats it, or a count's number."""
    text = text.removesuffix(".00")
    return int(re.sub(r"\D", "", text))


def test_receipt_arithmetic_is_consistent():
    checked = collections.Counter()
    for record in generate_receipts(300, seed=4):
        groups = record.ground_truth.groups
        items_total, quantity = 0, 0
        for group in groups:
            values = {e.key: e.value for e in group.entities}
            if group.name != "menu":
                continue
            count = _number(values["menu.cnt"]) if "menu.cnt" in values else 1
            if "menu.unitprice" in values:
                assert _number(values["menu.price"]) == count * _number(values["menu.unitprice"])
                checked["unit"] += 1
            items_total += _number(values["menu.price"]) + _number(values.get("menu.sub_price", "0"))
            quantity += count
        names = [g.name for g in groups]
        sub = {e.key: _number(e.value) for g in groups if g.name == "sub_total" for e in g.entities}
        tot = {e.key: _number(e.value) for g in groups if g.name == "total" for e in g.entities}
        assert names == ["menu"] * names.count("menu") + [n for n in ("sub_total", "total") if n in names]
        total = items_total
        if "sub_total.subtotal_price" in sub:
            assert sub["sub_total.subtotal_price"] == items_total
            total = items_total + sub.get("sub_total.service_price", 0) + sub.get("sub_total.tax_price", 0)
            if "sub_total.tax_price" in sub:
                base = items_total + sub.get("sub_total.service_price", 0)
                assert sub["sub_total.tax_price"] == round(base * 0.1)
                checked["tax"] += 1
        if "total.total_price" in tot:
            assert tot["total.total_price"] == total
            checked["total"] += 1
        if "total.changeprice" in tot:
            assert tot["total.changeprice"] == tot["total.cashprice"] - total >= 0
            checked["change"] += 1
        if "total.creditcardprice" in tot:
            assert tot["total.creditcardprice"] == total
        if "total.menuqty_cnt" in tot:
            assert tot["total.menuqty_cnt"] == quantity
            checked["quantity"] += 1
    assert min(checked.values()) >= 20, checked


def test_receipt_values_are_on_the_page_in_reading_order():
    for record in generate_receipts(60, seed=2):
        page = record.document.pages[0]
        assert page.height > page.width  # a portrait photo of a receipt
        segments = [word.segment for word in page.words]
        assert segments == sorted(segments)
        for word in page.words:
            x0, y0, x1, y1 = word.bbox
            assert 0 <= x0 < x1 <= page.width and 0 <= y0 < y1 <= page.height
        for entity in [*record.ground_truth.entities, *(e for g in record.ground_truth.groups for e in g.entities)]:
            assert locatability(entity.value, record.document) == 1.0, entity


def test_receipt_formats_follow_cord():
    prices, counts = [], []
    for record in generate_receipts(300, seed=8):
        for group in record.ground_truth.groups:
            for entity in group.entities:
                if entity.key == "menu.price":
                    prices.append(entity.value)
                elif entity.key == "menu.cnt":
                    counts.append(entity.value)
    comma = np.mean([bool(re.fullmatch(r"\d{1,3}(,\d{3})+", p)) for p in prices])
    dot = np.mean([bool(re.fullmatch(r"\d{1,3}(\.\d{3})+", p)) for p in prices])
    # per receipt in the generator, per price in the real sample: 0.62 and 0.22
    assert 0.45 < comma < 0.75 and 0.1 < dot < 0.35
    assert {re.sub(r"\d+", "N", c) for c in counts} >= {"N", "x N"}


def test_settings_load_from_yaml_and_quote_bad_values():
    settings = ReceiptSettings.model_validate(yaml.safe_load(
        "error_scale: 0.5\nerrors: {money: {ocr: 0.2}}\nconfidence: {mode: under_confident}\n"
        "presence: {tax: 0.1}\nstore_fields: false\n"))
    assert settings.rates_of("menu.price").ocr == 0.1
    assert settings.rates_of("menu.price").missed == 0.04  # the class default, halved
    assert settings.confidence.link() == (0.6, -0.6)
    assert not next(generate_receipts(1, seed=0, settings=settings)).ground_truth.entities
    with pytest.raises(ValidationError, match=r"error rates add up to 1.24 > 1 \(ocr=0.6, .*missed=0.6"):
        ReceiptSettings(errors={"menu.nm": {"ocr": 0.6, "missed": 0.6}})
    with pytest.raises(ValidationError, match=r"input_value=-0\.5"):
        ReceiptSettings(error_scale=-0.5)
    with pytest.raises(ValidationError, match="error rates add up to"):
        ReceiptSettings(error_scale=5)
    with pytest.raises(ValidationError, match=r"tax=0\.9 exceeds subtotal=0\.65"):
        ReceiptSettings(presence={"tax": 0.9})
    with pytest.raises(ValidationError, match=r"a count format is .* got 'n'"):
        ReceiptSettings(count_formats={"n": 1})
    with pytest.raises(ValidationError, match="unknown error kind 'typo'"):
        ReceiptSettings(confidence={"plausibility": {"typo": 0.5}})
    with pytest.raises(ValidationError, match="unknown question type 'money'"):
        DocVQASettings(confidence={"concentration": {"money": 1.0}})
    with pytest.raises(ValidationError, match=r"page_widths must be \(smallest, largest\), got \[900, 800\]"):
        DocVQASettings(page_widths=(900, 800))


# --------------------------------------------------------------------------- error kinds (KIE)


def _kie_rows(settings: ReceiptSettings, n: int = 60, seed: int = 3):
    records = list(generate_receipts(n, seed=seed, settings=settings))
    return records, evaluate_kie(records, grounding="compute")


def test_perfect_predictions_with_error_scale_zero():
    _, table = _kie_rows(ReceiptSettings(error_scale=0.0), n=20)
    assert table.counts.substitutions == table.counts.additions == table.counts.deletions == 0
    assert table.counts.tp == table.counts.entities_gt


def test_ocr_confusions_are_near_misses():
    _, table = _kie_rows(only_kie("ocr", 0.3))
    subs = table.outcome == SUBSTITUTION
    assert subs.sum() > 50 and table.counts.additions == table.counts.deletions == 0
    long = subs & (np.array([len(c) for c in table.correction.tolist()]) >= 4)
    assert np.all(table.similarity[long] >= 0.5)  # a character or two, or the separators
    assert np.all(table.grounding[subs] < 1.0) and np.mean(table.grounding[subs]) > 0.6
    changed = {(v, c) for v, c in zip(table.value[subs].tolist(), table.correction[subs].tolist())}
    assert any(re.sub(r"[,.]", "", v) == re.sub(r"[,.]", "", c) for v, c in changed)  # a swapped separator
    assert any(set(v) - set(c) & set("OlS5B8") for v, c in changed)  # a look-alike character


def test_neighbour_values_are_grounded_but_wrong():
    _, table = _kie_rows(only_kie("neighbour", 0.3))
    subs = table.outcome == SUBSTITUTION
    # a copied item name can make KIEval pair two menu groups the other way round, rarely
    assert subs.sum() > 50 and table.counts.additions <= 0.01 * table.counts.entities_gt
    assert np.all(table.grounding[subs] == 1.0)


def test_hallucinations_are_not_on_the_page():
    _, table = _kie_rows(only_kie("hallucination", 0.3))
    subs = table.outcome == SUBSTITUTION
    assert subs.sum() > 50 and table.counts.additions == table.counts.deletions == 0
    assert np.all(table.grounding[subs] < 1.0)
    _, ocr = _kie_rows(only_kie("ocr", 0.3))
    assert np.mean(table.grounding[subs]) < np.mean(ocr.grounding[ocr.outcome == SUBSTITUTION]) - 0.15
    assert np.mean(table.grounding[subs]) < 0.6


def test_missed_entities_are_additions():
    _, table = _kie_rows(only_kie("missed", 0.3))
    counts = table.counts
    assert counts.additions > 100 and counts.substitutions == counts.deletions == 0
    assert counts.tp + counts.additions == counts.entities_gt


def test_moved_values_are_group_errors():
    _, table = _kie_rows(only_kie("moved", 0.2))
    counts = table.counts
    assert counts.deletions > 30 and counts.additions > 30
    # grouping-blind matching finds the moved values: only the groups are wrong
    assert counts.tp_grouping_blind - counts.tp > 30
    assert np.all(table.grounding[table.outcome == DELETION] == 1.0)


def test_duplicates_and_extras_are_grounded_deletions():
    _, table = _kie_rows(only_kie("duplicate", 0.2))
    counts = table.counts
    assert counts.deletions > 50 and counts.additions == counts.substitutions == 0
    deleted = table.outcome == DELETION
    assert np.all(table.grounding[deleted] == 1.0)
    assert set(table.value[deleted].tolist()) <= set(table.value[table.outcome == CORRECT].tolist())
    _, table = _kie_rows(only_kie("extra", 0.2))
    deleted = table.outcome == DELETION
    assert table.counts.deletions > 50 and table.counts.additions == 0
    # keys the groups do not annotate, with values read from the page
    assert {table.keys[k] for k in table.key[deleted]} <= {key for keys in EXTRA_KEYS.values() for key in keys}
    assert np.all(table.grounding[deleted] == 1.0)


def test_default_rates_resemble_the_qwen_cord_sample():
    """The defaults come from the real sample: 78% TP, 13% substitutions, 9% additions, 12% deletions."""
    settings = ReceiptSettings(store_fields=False)  # CORD annotates no store fields
    counts = evaluate_kie(generate_receipts(300, seed=12, settings=settings), grounding="given").counts
    assert 0.72 < counts.tp / counts.entities_gt < 0.84
    assert 0.09 < counts.substitutions / counts.entities_gt < 0.17
    assert 0.05 < counts.additions / counts.entities_gt < 0.12
    assert 0.06 < counts.deletions / counts.entities_gt < 0.15
    assert 10 < counts.entities_gt / counts.documents < 16  # 13.0 in the sample
    assert counts.tp_grouping_blind > counts.tp  # some moved values


def test_every_kie_error_kind_occurs_with_defaults():
    _, table = _kie_rows(ReceiptSettings(), n=80, seed=21)
    subs, deleted = table.outcome == SUBSTITUTION, table.outcome == DELETION
    assert (table.grounding[subs] == 1.0).any()  # neighbour
    assert ((table.grounding[subs] < 1.0) & (table.similarity[subs] >= 0.5)).any()  # OCR
    assert (table.grounding[subs] < 0.5).any()  # hallucination
    assert table.counts.additions > 0 and table.counts.tp_grouping_blind > table.counts.tp  # missed, moved
    annotated = set(RECEIPT_KEYS)
    assert any(table.keys[k] not in annotated for k in table.key[deleted])  # extra
    assert deleted.any()


# --------------------------------------------------------------------------- error kinds (VQA)


def _vqa_rows(settings: DocVQASettings, n: int = 240):
    records = list(generate_docvqa(n, seed=4, settings=settings))
    return records, evaluate_vqa(records, grounding="compute")


def test_vqa_error_kinds_are_recognisable():
    _, correct = _vqa_rows(DocVQASettings(error_scale=0.0), n=40)
    assert np.all(correct.anls == 1.0) and np.all(correct.grounding == 1.0)
    assert np.mean(correct.evidence_iou) > 0.5

    _, ocr = _vqa_rows(only_vqa("ocr", 1.0))
    assert np.all(ocr.accuracy == 0.0) and np.mean(ocr.anls >= 0.5) > 0.7
    assert np.all(ocr.grounding < 1.0)

    _, neighbour = _vqa_rows(only_vqa("neighbour", 1.0))
    assert np.all(neighbour.accuracy == 0.0) and np.all(neighbour.grounding == 1.0)
    assert np.mean(neighbour.evidence_iou) < 0.2  # it points at the other cell

    _, span = _vqa_rows(only_vqa("wrong_span", 1.0))
    assert np.all(span.accuracy == 0.0) and np.all(span.grounding == 1.0)
    assert np.mean(span.evidence_iou) > np.mean(neighbour.evidence_iou) + 0.2  # it overlaps the answer

    _, made_up = _vqa_rows(only_vqa("hallucination", 1.0))
    assert np.all(made_up.anls < 0.5) and np.all(made_up.grounding < 1.0)
    assert np.mean(made_up.grounding) < np.mean(ocr.grounding) - 0.15

    records, missed = _vqa_rows(only_vqa("missed", 1.0), n=40)
    assert all(r.prediction.answer == "" and r.prediction.evidence is None for r in records)
    assert np.all(missed.anls == 0.0)


def test_vqa_answer_and_question_types_have_their_shares():
    records = list(docvqa_dicts(1600, seed=7))
    answer_types = collections.Counter(answer_type(r["answers"][0]) for r in records)
    question_types = collections.Counter(r["question_type"] for r in records)
    for name, share in DocVQASettings().answer_types.items():
        assert abs(answer_types[name] / len(records) - share) < 0.04, answer_types
    for name, share in DocVQASettings().question_types.items():
        assert abs(question_types[name] / len(records) - share) < 0.04, question_types
    numeric_only = DocVQASettings(answer_types={"numeric": 1.0, "textual": 0, "hybrid": 0})
    assert {answer_type(r["answers"][0]) for r in docvqa_dicts(400, seed=7, settings=numeric_only)} == {"numeric"}


def test_vqa_evidence_is_the_answer_on_the_page():
    for record in generate_docvqa(60, seed=5):
        assert locate(record.answers[0], record.document).nls == 1.0 and record.question
        (evidence,) = record.evidence
        x0, y0, x1, y1 = evidence.bbox
        inside = [w.text for w in record.document.pages[evidence.page].words
                  if x0 <= w.bbox[0] and w.bbox[2] <= x1 and y0 <= w.bbox[1] and w.bbox[3] <= y1]
        assert " ".join(inside) == record.answers[0]


# --------------------------------------------------------------------------- calibration


def test_calibrated_receipts_are_calibrated():
    settings = ReceiptSettings(confidence={"mode": "calibrated"})
    table = evaluate_kie(generate_receipts(1300, seed=30, settings=settings), grounding="given")
    right = is_correct(table)
    assert len(table) > 15_000
    assert ece(table.confidence, right) < CALIBRATED_ECE
    bins = reliability_table(table.confidence, right, n_bins=10)
    full = bins.count >= 500
    assert full.sum() >= 6
    assert np.all(np.abs(bins.accuracy[full] - bins.mean_confidence[full]) < CALIBRATED_BIN_GAP)


def test_calibrated_questions_are_calibrated():
    settings = DocVQASettings(confidence={"mode": "calibrated"})
    records = list(generate_docvqa(3000, seed=31, settings=settings))
    table = evaluate_vqa(records, grounding="given")
    assert ece(table.confidence, is_correct(table)) < CALIBRATED_ECE
    bins = reliability_table(table.confidence, is_correct(table), n_bins=5)
    full = bins.count >= 300
    assert np.all(np.abs(bins.accuracy[full] - bins.mean_confidence[full]) < CALIBRATED_BIN_GAP)


def test_miscalibrated_modes_have_a_clear_ece_in_their_direction():
    over = evaluate_kie(generate_receipts(400, seed=32), grounding="given")  # the default mode
    under = evaluate_kie(generate_receipts(400, seed=32, settings=ReceiptSettings(
        confidence={"mode": "under_confident"})), grounding="given")
    for table, sign in ((over, 1), (under, -1)):
        assert ece(table.confidence, is_correct(table)) > MISCALIBRATED_ECE
        assert sign * (table.confidence.mean() - is_correct(table).mean()) > MISCALIBRATED_ECE


def test_generated_ece_reports_the_set():
    calibrated = ReceiptSettings(confidence={"mode": "calibrated"})
    over = ReceiptSettings(confidence={"mode": "over_confident", "temperature": 2.0, "shift": 1.5})
    assert generated_ece(generate_receipts(300, seed=3, settings=calibrated)) < generated_ece(
        generate_receipts(300, seed=3, settings=over))
    assert generated_ece(generate_docvqa(200, seed=3)) > 0
    assert np.isnan(generated_ece([]))


def test_money_confidences_are_sharper():
    settings = ReceiptSettings(confidence={"mode": "calibrated"})
    table = evaluate_kie(generate_receipts(400, seed=33, settings=settings), grounding="given")
    keys = np.array(table.keys)[table.key]
    money = np.char.endswith(keys.astype(str), "price")
    text = np.char.endswith(keys.astype(str), "nm")
    spread = {name: np.mean(np.abs(table.confidence[mask] - 0.5)) for name, mask in (("money", money), ("text", text))}
    assert spread["money"] > spread["text"] + 0.02


def test_right_share_matches_the_rates():
    rates = KIEErrorRates(ocr=0.1, missed=0.2, duplicate=0.1, extra=0.1)
    assert rates.right_share() == pytest.approx(0.7 / 1.0)
    assert rates.right_share(extra_possible=False) == pytest.approx(0.7 / 0.9)
