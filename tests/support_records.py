"""Records whose predictions carry seeded confidences and groundings with ties, for the sweep and tuning tests."""

from __future__ import annotations

import numpy as np

from rpa_sim.records.models import KIERecord, VQARecord
from rpa_sim.records.synthetic import generate_receipts

CONFIDENCES = [0.1, 0.3, 0.3, 0.5, 0.62, 0.8, 0.8, 0.9, 0.95, 1.0]  # ties on purpose
GROUNDINGS = [None, 0.0, 0.2, 0.45, 0.45, 0.7, 0.9, 1.0]


def kie_records(n: int = 30, seed: int = 0) -> list[KIERecord]:
    """Generated receipts whose predictions get seeded confidences and groundings (some unknown)."""
    rng = np.random.default_rng(seed)
    records = []
    for record in generate_receipts(n, seed=seed):
        data = record.model_dump()
        for group in data["prediction"]["groups"]:
            for entity in group["entities"]:
                entity["confidence"] = float(rng.choice(CONFIDENCES))
                entity["grounding"] = GROUNDINGS[rng.integers(len(GROUNDINGS))]
        records.append(KIERecord.model_validate(data))
    return records


def vqa_records(n: int = 40, seed: int = 0) -> list[VQARecord]:
    """Questions on receipt words whose predicted answers are right, right but for case, near or wrong, with
    seeded confidences and groundings; every fourth question has no document."""
    rng = np.random.default_rng(seed)
    words = ["total", "12", "LATTE", "4,000", "vat", "2019", "cash", "change", "Coca Cola"]
    records = []
    for i in range(n):
        answer = words[rng.integers(len(words))]
        guess = [answer, answer.lower(), "13", "LATE", "nothing here", words[rng.integers(len(words))]][rng.integers(6)]
        page = {"width": 500, "height": 800, "words": [
            {"text": w, "bbox": [20 + 50 * j, 40 * (j % 7) + 10, 60 + 50 * j, 40 * (j % 7) + 30]}
            for j, w in enumerate(" ".join(words).split())]}
        records.append(VQARecord.model_validate({
            "id": f"q{i}", "answers": [answer], "question_type": ["form", "table"][i % 2],
            "prediction": {"answer": guess, "confidence": float(rng.choice(CONFIDENCES)),
                           "grounding": GROUNDINGS[rng.integers(len(GROUNDINGS))]},
            "document": {"pages": [page]} if i % 4 else None}))
    return records
