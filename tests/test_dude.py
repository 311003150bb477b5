"""The DUDE demo submission scored through the VQA outcome table, against the official DUDE evaluator."""

from __future__ import annotations

import json

import pytest

from rpa_sim.evaluate.metrics.anls_star import anls_star
from rpa_sim.evaluate.outcomes import evaluate_vqa
from rpa_sim.records.models import VQARecord
from tests.conftest import load_vectors, shared_path


@pytest.mark.parametrize("submission", ["perfect", "imperfect"])
def test_dude_demo_anls_per_question_and_corpus(submission):
    truth = json.loads(shared_path("data", "dude", "DUDE_demo_gt.json").read_text(encoding="utf-8"))["data"]
    predicted = json.loads(shared_path("data", "dude", f"DUDE_demo_submission_{submission}.json")
                           .read_text(encoding="utf-8"))
    expected = load_vectors("vectors_dude.json")["demo_results"][submission]
    by_id = {p["questionId"]: p for p in predicted}
    single, listed = [], []
    for question in truth:
        answer = by_id[question["questionId"]]
        if len(answer["answers"]) == 1:
            single.append(VQARecord.model_validate({
                "id": question["questionId"], "question": question["question"], "answers": question["answers"],
                "question_type": question["answer_type"],
                "prediction": {"answer": answer["answers"][0], "confidence": answer["answers_confidence"][0]}}))
        else:
            # A list answer is scored by DUDE with Hungarian-matched NLS (NLSL), which is ANLS* on lists.
            listed.append(anls_star(question["answers"], answer["answers"]))
    table = evaluate_vqa(single)
    per_sample = expected["per_sample"]
    for qid, score in zip(table.question_ids.tolist(), table.anls.tolist()):
        assert score == pytest.approx(per_sample[qid]["anls"], abs=1e-12), qid
    assert table.confidence.tolist() == [per_sample[q]["answer_confidence"][0] for q in table.question_ids.tolist()]
    corpus = (table.anls.sum() + sum(listed)) / (len(table) + len(listed))
    assert len(table) + len(listed) == 11
    assert corpus == pytest.approx(expected["anls"], abs=1e-12)
