"""The dashboard's model (no Textual): opening a records file instead of a scenario."""

from __future__ import annotations

import pytest

from rpa_sim.errors import InputError
from rpa_sim.generators import generate_docvqa, generate_receipts
from rpa_sim.outcomes import evaluate_kie
from rpa_sim.readers import write_records
from rpa_sim.tui.model import DATA_POLICIES, load_model


def test_records_file_opens_with_the_bundled_policies(tmp_path):
    path = tmp_path / "receipts.jsonl"
    write_records(generate_receipts(30, seed=4), path)
    model = load_model(str(path))
    assert model.name == "receipts.jsonl"
    assert [p.name for p in model.policies] == list(DATA_POLICIES["kie"])
    table = evaluate_kie(generate_receipts(30, seed=4))
    assert model.figures(0, 0.0)["kieval_aligned"] == table.counts.kieval_aligned


def test_vqa_records_file(tmp_path):
    path = tmp_path / "questions.jsonl.gz"
    write_records(generate_docvqa(40, seed=2), path)
    model = load_model(str(path))
    assert [p.name for p in model.policies] == list(DATA_POLICIES["vqa"])
    assert model.figures(0, 2.0)["anls"] == 1.0


def test_missing_records_file(tmp_path):
    with pytest.raises(InputError, match="no records file"):
        load_model(str(tmp_path / "none.jsonl"))
