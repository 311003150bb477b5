"""Where ``rpa-sim watch``'s logs come from (issue 28): replay, Label Studio's review log, a mapping's ``log:``
section; and the worked examples of docs/live.md, reproduced."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rpa_sim.records.synthetic import receipt_dicts, write_generated
from tests.conftest import run_cli, write_lines
from tests.support_live import PLATFORM_MAPPING, platform_export

DATA = Path(__file__).parent / "data"
DOCS = Path(__file__).parent.parent / "docs" / "live.md"


def _docs_block(title: str) -> str:
    """The first fenced block of docs/live.md after the heading ``title``."""
    text = DOCS.read_text(encoding="utf-8")
    after = text[text.index(title):]
    return re.search(r"```\n(.*?)```", after, re.DOTALL).group(1)


def test_replay_writes_the_day_asked_and_the_records_document_types(tmp_path, capsys):
    records = [dict(record, document_type="receipt" if i % 2 else "invoice")
               for i, record in enumerate(receipt_dicts(20, seed=2))]
    data = write_lines(tmp_path / "r.jsonl", *records)
    plain, dated = tmp_path / "plain.jsonl", tmp_path / "dated.jsonl"
    for out, extra in ((plain, ()), (dated, ("--day", "2024-06-03"))):
        status, _, err = run_cli(capsys, "replay", data, "--policy", "confidence", "--threshold", "0.9",
                                 "--audit-rate", "0.3", "--seed", "1", "--out", out, "--workers", "1", *extra)
        assert status == 0, err
    rows = [json.loads(line) for line in dated.read_text().splitlines()]
    assert {row["day"] for row in rows} == {"2024-06-03"} and list(rows[0])[:3] == ["day", "id", "document_type"]
    assert {row["document_type"] for row in rows} == {"invoice", "receipt"}
    assert "source" not in rows[0]  # records carry no source: the column is left out
    assert [{k: v for k, v in row.items() if k != "day"} for row in rows] == [
        json.loads(line) for line in plain.read_text().splitlines()]
    status, out, _ = run_cli(capsys, "watch", dated, "--max-error", "0.1", "--json")
    assert status == 0 and json.loads(out)["days"] == ["2024-06-03"]
    status, _, err = run_cli(capsys, "replay", data, "--policy", "confidence", "--threshold", "0.9", "--day",
                             "03/06/2024", "--out", tmp_path / "x.jsonl")
    assert status == 2 and "--day: expected a date YYYY-MM-DD" in err


def test_without_records_document_types_replay_writes_todays_bytes(tmp_path, capsys):
    data = tmp_path / "r.jsonl"
    write_generated(receipt_dicts(15, seed=5), data)
    out = tmp_path / "day.jsonl"
    assert run_cli(capsys, "replay", data, "--policy", "confidence", "--threshold", "0.9", "--audit-rate", "0.2",
                   "--out", out, "--workers", "1")[0] == 0
    assert list(json.loads(out.read_text().splitlines()[0])) == [
        "id", "key", "value", "confidence", "route", "stratum", "inclusion_probability", "correct", "corrected_value"]


def test_label_studio_review_rows_carry_the_day_of_the_chosen_annotation(tmp_path, capsys):
    log = tmp_path / "reviews.jsonl"
    status, _, _ = run_cli(capsys, "import", "label-studio", DATA / "label_studio" / "receipts_ocr.json", "--out",
                           tmp_path / "r.jsonl", "--review-log", log, "--id-from", "data.ocr")
    assert status == 0
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert {row["day"] for row in rows} == {"2024-03-05"} and next(iter(rows[0])) == "day"
    status, out, _ = run_cli(capsys, "watch", log, "--max-error", "0.05", "--json")
    payload = json.loads(out)
    assert status == 0 and payload["days"] == ["2024-03-05"]
    day = payload["segments"][0]["days"][0]
    assert (day["auto_accepted"], day["audited"], day["estimate"], day["low"]) == (0, 0, None, 0.0)


def _mapping(tmp_path: Path, log: str) -> Path:
    path = tmp_path / "map.yaml"
    path.write_text("id: $.doc\nfields: $.fields.*\nvalue: '@.value'\nconfidence: '@.score'\n" + log)
    return path


@pytest.mark.parametrize("field, log, message", [
    ({"value": "1", "score": 0.9, "how": "robot"}, "log:\n  route: '@.how'\n  correct: '@.ok'\n",
     'log.route found "robot", which log.routes does not name'),
    ({"value": "1", "score": 0.9, "how": "review"}, "log:\n  route: '@.how'\n  correct: '@.ok'\n",
     "log.correct: a review field needs what the person found"),
    ({"value": "1", "score": 0.9, "how": "auto", "ok": True}, "log:\n  route: '@.how'\n  correct: '@.ok'\n",
     "log.correct: an auto field was checked by nobody"),
    ({"value": "1", "score": 0.9, "how": "audit", "ok": "maybe"},
     "log:\n  route: '@.how'\n  correct: '@.ok'\n  inclusion_probability: 0.1\n",
     'log.correct: expected true or false, got "maybe"'),
    ({"value": "1", "score": 0.9, "how": "auto", "rate": "lots"},
     "log:\n  route: '@.how'\n  correct: '@.ok'\n  inclusion_probability: '@.rate'\n",
     'log.inclusion_probability: expected a number in [0, 1], got "lots"'),
    ({"value": "1", "score": 0.9, "how": "review", "ok": 1, "day": "1/2/2024"},
     "log:\n  route: '@.how'\n  correct: '@.ok'\n  day: '@.day'\n",
     'log.day: expected a date YYYY-MM-DD, got "1/2/2024"'),
])
def test_a_mapping_log_that_does_not_fit_is_refused_in_one_line(tmp_path, capsys, field, log, message):
    source = write_lines(tmp_path / "out.jsonl", {"doc": "d-1", "fields": {"total": field}})
    status, _, err = run_cli(capsys, "import", "mapping", source, "--mapping", _mapping(tmp_path, log), "--out",
                             tmp_path / "r.jsonl", "--review-log", tmp_path / "log.jsonl")
    assert status == 1 and message in err and err.strip().count("\n") == 0, err
    assert "out.jsonl: line 1 (id d-1): $.fields.total" in err
    assert not (tmp_path / "log.jsonl").exists() and not (tmp_path / "r.jsonl").exists()


def test_a_review_log_needs_the_mappings_log_section(tmp_path, capsys):
    source = write_lines(tmp_path / "out.jsonl", {"doc": "d-1", "fields": {"total": {"value": "1", "score": 0.9}}})
    status, _, err = run_cli(capsys, "import", "mapping", source, "--mapping", _mapping(tmp_path, ""), "--out",
                             tmp_path / "r.jsonl", "--review-log", tmp_path / "log.jsonl")
    assert status == 2 and "has no log: section" in err


def test_the_platform_example_of_the_docs_reproduces(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    platform_export(tmp_path / "export.jsonl")
    (tmp_path / "platform.yaml").write_text(PLATFORM_MAPPING)
    assert PLATFORM_MAPPING in DOCS.read_text(encoding="utf-8")
    status, _, err = run_cli(capsys, "import", "mapping", "export.jsonl", "--mapping", "platform.yaml", "--out",
                             "records.jsonl", "--review-log", "log.jsonl")
    assert status == 0, err
    first = (tmp_path / "log.jsonl").read_text().splitlines()[:2]
    assert "\n".join(first) in _docs_block("### 2. Import it")
    block = _docs_block("### 3. Watch it")
    command, expected = block.split("\n", 1)
    status, out, _ = run_cli(capsys, *command.removeprefix("$ rpa-sim ").split())
    assert status == 0 and out == expected
