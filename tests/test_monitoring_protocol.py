"""The protocol members replay works through (issue 14): ``Sweeper.reviewed_at`` and ``OutcomeTable.review_values``."""

from __future__ import annotations

import numpy as np
import pytest

from rpa_sim.bundled import bundled_files
from rpa_sim.evaluate.outcomes import evaluate_kie, evaluate_vqa
from rpa_sim.records.synthetic import generate_docvqa, generate_receipts
from rpa_sim.route.policies import load_policy
from rpa_sim.route.sweep import Sweeper

BUNDLED_POLICIES = sorted(bundled_files("policy"))


#: document types for the bundled per-document-type policy (and an untyped share), cycled over the receipts
DOCUMENT_TYPES = ("invoice", "phone-photo", "receipt", None)


@pytest.fixture(scope="module")
def receipts():
    records = generate_receipts(150, seed=11)
    return evaluate_kie([record.model_copy(update={"document_type": DOCUMENT_TYPES[i % len(DOCUMENT_TYPES)]})
                         for i, record in enumerate(records)])


@pytest.fixture(scope="module")
def questions():
    return evaluate_vqa(generate_docvqa(300, seed=11))


def test_there_are_bundled_policies_to_check():
    assert {"confidence", "document-escalation", "audited-budget"} <= set(BUNDLED_POLICIES)


@pytest.mark.parametrize("name", BUNDLED_POLICIES)
def test_reviewed_at_counts_the_curves_reviews_at_every_threshold(receipts, name):
    sweeper = Sweeper(receipts, load_policy(name))
    audit, n = sweeper.policy.audit, len(receipts)
    # every distinct entry threshold and the points between them, beyond the ends too
    exact = sweeper.thresholds("exact")
    finite = exact[np.isfinite(exact)]
    grid = np.unique(np.concatenate([finite, (finite[1:] + finite[:-1]) / 2, [0.0, 0.5, 1.0, 1.5]]))
    reviewed = sweeper.curve(grid).columns["reviewed"]
    routed = np.array([int(sweeper.reviewed_at(t).sum()) for t in grid])
    # the curve's reviews in expectation: the audited share of the rest is reviewed too
    np.testing.assert_allclose(audit * n + (1 - audit) * routed, reviewed, rtol=0, atol=1e-6)
    assert routed.max() > routed.min()  # the threshold moves the reviews


def test_reviewed_at_opens_whole_documents_under_escalation(receipts):
    mask = Sweeper(receipts, load_policy("document-escalation")).reviewed_at(0.85)
    below = np.unique(receipts.document[receipts.confidence < 0.85])
    assert 0 < len(below) < receipts.documents
    assert np.array_equal(mask, np.isin(receipts.document, below))


def test_reviewed_at_with_a_budget_reviews_the_least_confident_up_to_the_limit(receipts):
    policy = load_policy("audited-budget")
    mask = Sweeper(receipts, policy).reviewed_at(1.5)
    assert mask.sum() == policy.budget.limit(len(receipts))
    assert receipts.confidence[mask].max() <= receipts.confidence[~mask].min()


def test_kie_review_values_write_the_truth_and_remove_deleted_values(receipts):
    review = receipts.review_values()
    assert review.ids.tolist() == receipts.document_ids[receipts.document].tolist()
    assert review.values.tolist() == receipts.value.tolist()
    substitution, deletion = receipts.outcome == 1, receipts.outcome == 2
    assert substitution.any() and deletion.any()
    assert review.corrections[substitution].tolist() == receipts.correction[substitution].tolist()
    assert set(review.corrections[deletion].tolist()) == {""}
    assert np.array_equal(review.changed, receipts.errors())
    assert np.array_equal(review.breakable, ~receipts.errors())


def test_vqa_review_values_polish_every_answer_short_of_anls_1(questions):
    review = questions.review_values()
    assert review.ids.tolist() == questions.question_ids.tolist()
    assert review.corrections.tolist() == questions.answer.tolist()
    near = (questions.anls >= 0.5) & (questions.anls < 1)
    assert near.any() and review.changed[near].all()  # right by the error definition, still changed
    assert np.array_equal(review.changed | review.breakable, np.ones(len(questions), dtype=bool))
    assert not (review.changed & review.breakable).any()
