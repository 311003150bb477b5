"""KIEval against the paper's worked examples, the official code's vectors and real data."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rpa_sim.evaluate.metrics.kieval import (
    CORRECT,
    DELETION,
    SUBSTITUTION,
    Addition,
    KIEvalCounts,
    evaluate_document,
    kieval,
)
from rpa_sim.records.importers.kieval_csv import import_kieval_csv, parse_kieval_csv, record_from_blocks
from rpa_sim.records.models import Extraction, PredictedExtraction
from tests.conftest import load_vectors, shared_path, vector_cases


def gt_doc(entities=(), groups=()):
    return Extraction.model_validate({
        "entities": [{"key": k, "value": v} for k, v in entities],
        "groups": [[{"key": k, "value": v} for k, v in group] for group in groups],
    })


def pred_doc(entities=(), groups=(), confidence=0.9):
    return PredictedExtraction.model_validate({
        "entities": [{"key": k, "value": v, "confidence": confidence} for k, v in entities],
        "groups": [[{"key": k, "value": v, "confidence": confidence} for k, v in group] for group in groups],
    })


def menu(*rows):
    """Menu groups from (name, price) rows; None leaves a field out."""
    return [[(k, v) for k, v in zip(("menu.nm", "menu.price"), row) if v is not None] for row in rows]


# --- KIEval Fig. 2 -------------------------------------------------------------------------------

FIG2_GT = menu(("CHOCO PUFF", "29,091"), ("CREAMY BEEF CLS FTC", "42,727"), ("NEW ORIENTAL CHK RICE", "34,545"),
               ("LIPTON PITCHER", "54,545"), ("SC/P SUPER SUPREME", "47,273"), ("CB/P BLACK PEPP BEEF", "48,182"))
FIG2_PRED = menu(("CHOCO PUFF", "29,091"), ("CREAMY BEEF CLS FTC", None), ("NEW ORIENTAL CHK RICE", "34,545"),
                 (None, "54,545"), ("LIPTON PITCHER", None), ("SC/P SUPER SUPREME", "47,273"),
                 ("CB/P BLACK PEPP BEEF", "48,182"))


def test_fig2_entity_and_group_level():
    counts = evaluate_document(gt_doc(groups=FIG2_GT), pred_doc(groups=FIG2_PRED)).counts
    # "KIEval Entity-level = 10 / 13" and "Group-level = 4 / 7" are KIEval_Aligned at each level
    assert (counts.tp, counts.errors) == (10, 3)
    assert counts.kieval_aligned == pytest.approx(10 / 13, abs=1e-15)
    assert (counts.groups_tp, counts.groups_paired, counts.groups_gt, counts.groups_pred) == (4, 6, 6, 7)
    assert counts.group_aligned == pytest.approx(4 / 7, abs=1e-15)
    # Recall 11/12, precision 11/11: the grouping-blind entity F1 prints as 95.65%
    assert counts.tp_grouping_blind == 11
    assert round(counts.grouping_blind_entity_f1 * 100, 2) == 95.65
    # KIEval Entity F1 from the group-matched TP: precision 10/11, recall 10/12
    assert counts.entity_f1 == pytest.approx(20 / 23, abs=1e-15)


# --- KIEval Fig. 3 -------------------------------------------------------------------------------

@pytest.mark.parametrize(("gt", "pred", "kind", "f1"), [
    (["Americano", "Latte"], ["Americano"], "additions", 2 / 3),
    (["Americano", "Latte"], ["Americano", "Juice"], "substitutions", 1 / 2),
    (["Americano"], ["Americano", "Juice"], "deletions", 2 / 3),
])
def test_fig3_one_correction_each(gt, pred, kind, f1):
    counts = evaluate_document(gt_doc([("menu.name", v) for v in gt]),
                               pred_doc([("menu.name", v) for v in pred])).counts
    assert counts.errors == getattr(counts, kind) == 1
    assert counts.kieval_aligned == 0.5
    assert counts.entity_f1 == pytest.approx(f1, abs=1e-15)


# --- KIEval Fig. 5 (top) -------------------------------------------------------------------------

FIG5_GT = [[("menu.nm", n), ("menu.cnt", c), ("menu.price", p)] for n, c, p in
           [("SIAO MAI BABI", "4", "80,000"), ("CEKER AYAM", "3", "60,000"), ("BAKPAO BKR C CRISPY", "2", "42,000")]]
FIG5_PRED2 = [[("menu.nm", n), ("menu.cnt", c), ("menu.price", p)] for n, c, p in
              [("SIAO MAI BABI", "2", "60,000"), ("BAKPAO BKR C CRISPY", "3", "80,000"), ("CEKER AYAM", "4", "42,000")]]


def test_fig5_prediction1_is_perfect():
    counts = evaluate_document(gt_doc(groups=FIG5_GT), pred_doc(groups=FIG5_GT[::-1])).counts
    assert (counts.entity_f1, counts.group_f1, counts.grouping_blind_entity_f1) == (1.0, 1.0, 1.0)


def test_fig5_prediction2_grouping_errors():
    counts = evaluate_document(gt_doc(groups=FIG5_GT), pred_doc(groups=FIG5_PRED2)).counts
    assert counts.grouping_blind_entity_f1 == 1.0
    assert counts.entity_f1 == pytest.approx(1 / 3, abs=1e-15)
    assert counts.group_f1 == 0.0


# --- The official code's vectors -----------------------------------------------------------------

def test_vectors_present():
    assert len(load_vectors("vectors_kieval.json")["scenarios"]) == 17


@pytest.mark.parametrize("scenario", vector_cases("vectors_kieval.json", "scenarios"))
def test_official_vectors(scenario):
    params = scenario["params"]
    assert params["grouping_strategy"] in ("hungarian", "max_em_score")
    assert params["include_empty_token_in_score_calculation"] is False
    options = {"shortlist": set(scenario["shortlist"]), "split_values": params["split_merged_value"]}
    total = KIEvalCounts()
    for n, (gold, pred) in enumerate(zip(scenario["gold_csvs"], scenario["pred_csvs"])):
        record = record_from_blocks(str(n), parse_kieval_csv(gold, **options), parse_kieval_csv(pred, **options))
        total = total + evaluate_document(record.ground_truth, record.prediction).counts
    expected = scenario["total_kieval"]["total.kieval"]
    assert total.tp == expected["exact_match"]
    assert total.substitutions == expected["wrong_match"]
    assert total.additions + total.deletions == expected["no_match"]
    assert total.entities_gt == expected["label"]
    for ours, theirs in [("precision", "precision"), ("recall", "recall"), ("entity_f1", "kieval_entity_f1"),
                         ("kieval_aligned", "kieval_aligned")]:
        assert getattr(total, ours) == pytest.approx(expected[theirs], abs=1e-12)
    grouping = scenario["total_kieval"]["total.grouping"]
    if grouping is not None:
        assert total.groups_tp == grouping["exact_match"]
        assert total.groups_paired - total.groups_tp == grouping["wrong_match"]
        assert total.groups_gt + total.groups_pred - 2 * total.groups_paired == grouping["no_match"]
        assert total.group_f1 == pytest.approx(grouping["kieval_entity_f1"], abs=1e-12)
        assert total.group_aligned == pytest.approx(grouping["kieval_aligned"], abs=1e-12)


# --- Real data: Qwen2-VL-72B on 100 CORD receipts ------------------------------------------------

def test_qwen_cord_sample_reproduces_official_result():
    records, report = import_kieval_csv(shared_path("data", "kieval_qwen72b_cord", "csv"))
    total = kieval((r.ground_truth, r.prediction) for r in records)
    assert report.records == 100 and not report.unmapped
    assert (total.tp, total.substitutions, total.additions + total.deletions) == (1020, 167, 273)
    assert round(total.entity_f1, 4) == 0.7707
    assert round(total.kieval_aligned, 4) == 0.6986
    official = load_vectors("vectors_kieval.json")["qwenvl72b_cord_sample"]["total_kieval"]
    assert total.entity_f1 == pytest.approx(official["total.kieval"]["kieval_entity_f1"], abs=1e-12)
    assert total.kieval_aligned == pytest.approx(official["total.kieval"]["kieval_aligned"], abs=1e-12)
    grouping = official["total.grouping"]
    wrong = total.groups_paired - total.groups_tp
    assert (total.groups_tp, wrong) == (grouping["exact_match"], grouping["wrong_match"])
    assert total.groups_gt == grouping["label"]
    assert total.group_f1 == pytest.approx(grouping["kieval_entity_f1"], abs=1e-12)


# --- Outcome labels ------------------------------------------------------------------------------

def test_labels_duplicate_value_most_confident_copy_is_correct():
    gt = gt_doc([("total", "10.00")])
    pred = PredictedExtraction.model_validate({"entities": [
        {"key": "total", "value": "10.00", "confidence": 0.3},
        {"key": "total", "value": "10.00", "confidence": 0.8},
    ]})
    out = evaluate_document(gt, pred)
    assert out.labels.tolist() == [DELETION, CORRECT]
    assert out.corrections == [None, "10.00"]


def test_labels_substitutions_pair_by_similarity_and_leftovers_are_deletions():
    gt = gt_doc([("menu.nm", "LATTE"), ("menu.nm", "AMERICANO")])
    pred = pred_doc([("menu.nm", "AMERICAN0"), ("menu.nm", "LATE"), ("menu.nm", "XYZ")])
    out = evaluate_document(gt, pred)
    assert out.labels.tolist() == [SUBSTITUTION, SUBSTITUTION, DELETION]
    assert out.corrections == ["AMERICANO", "LATTE", None]
    assert (out.counts.substitutions, out.counts.deletions, out.counts.additions) == (2, 1, 0)


def test_labels_additions_list_missed_entities_with_their_group():
    out = evaluate_document(gt_doc(groups=FIG2_GT), pred_doc(groups=FIG2_PRED))
    assert sorted(out.additions, key=lambda a: a.group) == [
        Addition("menu.price", "42,727", 2),
        Addition("menu.nm", "LIPTON PITCHER", 4),
    ]
    assert np.bincount(out.labels, minlength=3).tolist() == [10, 0, 1]
    assert out.groups.tolist() == [1, 1, 2, 3, 3, 4, 5, 6, 6, 7, 7]


def test_unpaired_groups_of_other_categories():
    gt = Extraction.model_validate({"groups": [{"name": "menu", "entities": [{"key": "nm", "value": "A"}]}]})
    pred = PredictedExtraction.model_validate({"groups": [
        {"name": "total", "entities": [{"key": "nm", "value": "A", "confidence": 1}]}]})
    counts = evaluate_document(gt, pred).counts
    assert (counts.tp, counts.additions, counts.deletions, counts.groups_paired) == (0, 1, 1, 0)


def test_empty_values_are_ignored_and_counted():
    gt = gt_doc([("date", "2020"), ("total", "")])
    pred = pred_doc([("date", "2020"), ("store", "  ")])
    counts = evaluate_document(gt, pred).counts
    assert (counts.entities_gt, counts.entities_pred, counts.ignored_empty, counts.tp) == (1, 1, 2, 1)


def test_normalized_value_match_is_an_option():
    gt, pred = gt_doc([("store", "ACME  Inc")]), pred_doc([("store", " acme inc")])
    assert evaluate_document(gt, pred).counts.tp == 0
    assert evaluate_document(gt, pred, value_match="normalized").counts.tp == 1
    with pytest.raises(ValueError, match="'fuzzy'"):
        evaluate_document(gt, pred, value_match="fuzzy")


def test_undefined_ratios_are_none():
    counts = evaluate_document(gt_doc(), pred_doc()).counts
    assert (counts.entity_f1, counts.kieval_aligned, counts.group_f1, counts.group_aligned) == (None,) * 4


# --- Invariants ----------------------------------------------------------------------------------

KEYS = ["a.x", "a.y", "b.x"]
VALUES = ["1", "2", "12", "x"]
entity = st.tuples(st.sampled_from(KEYS), st.sampled_from(VALUES))
group = st.lists(entity, min_size=0, max_size=4)
side = st.tuples(st.lists(entity, max_size=3), st.lists(group, max_size=4))


def _document(gt_side, pred_side, confidences):
    gt = gt_doc(*gt_side)
    pred = PredictedExtraction.model_validate({
        "entities": [{"key": k, "value": v, "confidence": next(confidences)} for k, v in pred_side[0]],
        "groups": [[{"key": k, "value": v, "confidence": next(confidences)} for k, v in g] for g in pred_side[1]],
    })
    return gt, pred


@settings(max_examples=300, deadline=None)
@given(gt_side=side, pred_side=side, seed=st.integers(0, 2**32 - 1))
def test_counts_and_labels_are_consistent(gt_side, pred_side, seed):
    rng = random.Random(seed)
    gt, pred = _document(gt_side, pred_side, iter(lambda: rng.choice([0.1, 0.5, 0.9]), None))
    out = evaluate_document(gt, pred)
    c = out.counts
    assert c.tp + c.substitutions + c.deletions == c.entities_pred
    assert c.tp + c.substitutions + c.additions == c.entities_gt
    assert np.bincount(out.labels, minlength=3).tolist() == [c.tp, c.substitutions, c.deletions]
    assert len(out.additions) == c.additions
    for value in (c.entity_f1, c.kieval_aligned, c.group_f1, c.group_aligned, c.grouping_blind_entity_f1):
        assert value is None or 0.0 <= value <= 1.0
    assert c.tp <= c.tp_grouping_blind


@settings(max_examples=200, deadline=None)
@given(gt_side=side, pred_side=side, seed=st.integers(0, 2**32 - 1))
def test_counts_unchanged_by_shuffling_groups_and_entities(gt_side, pred_side, seed):
    rng = random.Random(seed)

    def shuffled(s):
        groups = [rng.sample(g, len(g)) for g in s[1]]
        return rng.sample(s[0], len(s[0])), rng.sample(groups, len(groups))

    first = evaluate_document(*_document(gt_side, pred_side, itertools.repeat(0.5))).counts
    second = evaluate_document(*_document(shuffled(gt_side), shuffled(pred_side), itertools.repeat(0.5))).counts
    assert first == second


def _brute_force_pairing(gt_groups, pred_groups):
    """Best pairing by exhaustive search with the spec's lexicographic objective."""
    def stats(g, p):
        from collections import Counter
        cg, cp = Counter(g), Counter(p)
        same = sum((cg & cp).values())
        kg, kp = Counter(k for k, _ in g), Counter(k for k, _ in p)
        same_by_key = Counter()
        for (k, _), n in (cg & cp).items():
            same_by_key[k] += n
        subs = sum(min(kg[k], kp[k]) - same_by_key[k] for k in kg.keys() & kp.keys())
        return same, subs, int(cg == cp)

    best = None
    n, m = len(gt_groups), len(pred_groups)
    for size in [min(n, m)]:
        for rows in itertools.combinations(range(n), size):
            for cols in itertools.permutations(range(m), size):
                totals = [sum(x) for x in zip(*(stats(gt_groups[r], pred_groups[c]) for r, c in zip(rows, cols)))]
                key = tuple(totals) if totals else (0, 0, 0)
                best = key if best is None or key > best else best
    return best or (0, 0, 0)


@settings(max_examples=150, deadline=None)
@given(gt_groups=st.lists(group, max_size=4), pred_groups=st.lists(group, max_size=4))
def test_group_pairing_matches_brute_force(gt_groups, pred_groups):
    # One category for every group, so that the search is over all pairings.
    def named(groups):
        return [{"name": "menu", "entities": [{"key": k, "value": v} for k, v in g]} for g in groups]
    gt = Extraction.model_validate({"groups": named(gt_groups)})
    pred = PredictedExtraction.model_validate({"groups": [
        {"name": "menu", "entities": [{"key": k, "value": v, "confidence": 0.5} for k, v in g]} for g in pred_groups]})
    counts = evaluate_document(gt, pred).counts
    assert (counts.tp, counts.substitutions, counts.groups_tp) == _brute_force_pairing(gt_groups, pred_groups)


def test_the_batch_counts_are_kievals_counts_in_order():
    from rpa_sim.evaluate.metrics.kieval_batch import COUNT_NAMES

    assert KIEvalCounts.field_names() == COUNT_NAMES
