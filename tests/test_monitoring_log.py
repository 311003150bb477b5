"""The production log file (issue 14): written by rpa-sim, read back, and a team's export checked line by line."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from rpa_sim.common.errors import InputError
from rpa_sim.operate.monitoring.log import (
    AUDIT,
    AUTO,
    REVIEW,
    UNCHECKED,
    ProductionLog,
    object_column,
    read_log,
    write_log,
)


def sample_log() -> ProductionLog:
    return ProductionLog(
        route=np.array([REVIEW, AUDIT, AUTO, REVIEW], dtype=np.int8),
        inclusion_probability=np.array([1.0, 0.25, 0.25, 1.0]),
        correct=np.array([0, 1, UNCHECKED, 1], dtype=np.int8),
        confidence=np.array([0.3, 0.95, 0.99, 0.5]),
        stratum=object_column([None, "all", "all", None]),
        id=object_column(["r-1", "r-1", "r-2", "r-2"]), key=object_column(["total", "date", "total", "date"]),
        value=object_column(["10.0", "1.1", "7", "2.2"]), corrected_value=object_column(["10.00", None, None, None]))


def test_write_then_read_round_trips(tmp_path):
    log = sample_log()
    path = tmp_path / "day.jsonl"
    assert write_log(log, path) == 4
    first = json.loads(path.read_text().splitlines()[0])
    assert list(first) == ["id", "key", "value", "confidence", "route", "stratum", "inclusion_probability", "correct",
                           "corrected_value"]
    assert first == {"id": "r-1", "key": "total", "value": "10.0", "confidence": 0.3, "route": "review",
                     "stratum": None, "inclusion_probability": 1.0, "correct": False, "corrected_value": "10.00"}
    back = read_log(path)
    for name in ("route", "inclusion_probability", "correct", "confidence"):
        assert np.array_equal(getattr(back, name), getattr(log, name))
    for name in ("stratum", "id", "key", "value", "corrected_value"):
        assert getattr(back, name).tolist() == getattr(log, name).tolist()
    assert back.line.tolist() == [1, 2, 3, 4] and back.path == str(path)


def test_gzip_logs_are_the_same_rows_and_equal_logs_give_equal_bytes(tmp_path):
    plain, packed, again = tmp_path / "a.jsonl", tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl.gz"
    for path in (plain, packed, again):
        write_log(sample_log(), path)
    assert gzip.decompress(packed.read_bytes()) == plain.read_bytes()
    assert packed.read_bytes() == again.read_bytes()
    assert read_log(packed).counts() == read_log(plain).counts() == {"rows": 4, "reviewed": 2, "auto_accepted": 2,
                                                                      "audited": 1}


def test_a_minimal_foreign_log_reads(tmp_path):
    path = tmp_path / "export.jsonl"
    path.write_text('{"route": "review", "correct": true}\n\n'
                    '{"route": "audit", "inclusion_probability": 0.1, "correct": false, "team_note": "x"}\n'
                    '{"route": "auto", "inclusion_probability": 0.1, "correct": null}\n')
    log = read_log(path)
    assert log.route.tolist() == [REVIEW, AUDIT, AUTO]
    assert log.inclusion_probability.tolist() == [1.0, 0.1, 0.1]
    assert log.correct.tolist() == [1, 0, UNCHECKED]
    assert np.isnan(log.confidence).all()
    assert log.stratum is None and log.id is None and log.corrected_value is None
    assert log.line.tolist() == [1, 3, 4]  # the blank line is skipped, yet counted


BAD_ROWS = [
    ('{"route": "auto"', "line 1: invalid JSON: Expecting ',' delimiter at column 17"),
    ('[1, 2]', "line 1: expected a JSON object, got [1, 2]"),
    ('{"correct": true}', "line 1: route: missing (required)"),
    ('{"route": "skipped"}', "line 1: route: expected 'auto', 'review' or 'audit', got \"skipped\""),
    ('{"id": "r-7", "route": "auto"}', "line 1 (id r-7): inclusion_probability: missing (required on auto rows)"),
    ('{"route": "auto", "inclusion_probability": 1.5}', "line 1: inclusion_probability: expected a number in [0, 1], "
                                                         "got 1.5"),
    ('{"route": "auto", "inclusion_probability": "0.1"}', "line 1: inclusion_probability: expected a number in "
                                                           "[0, 1], got \"0.1\""),
    ('{"route": "auto", "inclusion_probability": NaN}', "line 1: inclusion_probability: expected a number in [0, 1], "
                                                         "got nan"),
    ('{"route": "audit", "inclusion_probability": 0, "correct": true}',
     "line 1: inclusion_probability: an audited row was drawn, so its probability is above 0, got 0"),
    ('{"route": "review", "inclusion_probability": 0.5, "correct": true}',
     "line 1: inclusion_probability: a reviewed row is checked with probability 1, got 0.5"),
    ('{"route": "review"}', "line 1: correct: expected true or false on review rows, got nothing"),
    ('{"route": "audit", "inclusion_probability": 0.1, "correct": 1}',
     "line 1: correct: expected true or false on audit rows, got 1"),
    ('{"route": "auto", "inclusion_probability": 0.1, "correct": false}',
     "line 1: correct: an auto row was checked by nobody, so it has none (null), got false; a row drawn for a check "
     "has route audit"),
    ('{"route": "review", "correct": true, "confidence": true}', "line 1: confidence: expected a number in [0, 1], "
                                                                  "got true"),
    ('{"route": "review", "correct": true, "id": 17}', "line 1: id: expected a string, got 17"),
]


@pytest.mark.parametrize("line, message", BAD_ROWS)
def test_a_bad_row_is_one_error_naming_file_line_and_field(tmp_path, line, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(InputError) as caught:
        read_log(path)
    assert str(caught.value) == f"{path}: {message}"


def test_rows_of_a_stratum_share_one_rate(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"route": "auto", "inclusion_probability": 0.1, "stratum": "low"}\n'
                    '{"route": "review", "correct": true}\n'
                    '{"route": "auto", "inclusion_probability": 0.2, "stratum": "low"}\n')
    with pytest.raises(InputError, match=r"bad.jsonl: line 3: stratum: stratum 'low' has inclusion probability 0.1 "
                                         r"on line 1 and 0.2 here; a stratum is audited at one rate"):
        read_log(path)


def test_strata_are_given_to_every_accepted_row_or_to_none(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"route": "auto", "inclusion_probability": 0.1, "stratum": "low"}\n'
                    '{"route": "review", "correct": true}\n'
                    '{"route": "auto", "inclusion_probability": 0.1}\n')
    with pytest.raises(InputError, match=r"line 3: stratum: missing on line 3 and given on line 1: give every "
                                         r"auto-accepted row its stratum, or none"):
        read_log(path)


def test_ppi_asks_every_accepted_row_for_its_confidence(tmp_path):
    path = tmp_path / "day.jsonl"
    path.write_text('{"route": "review", "correct": true}\n{"route": "auto", "inclusion_probability": 0.1}\n')
    assert read_log(path).counts()["rows"] == 2
    with pytest.raises(InputError, match=r"day.jsonl: line 2: confidence: missing: ppi needs the confidence of every "
                                         r"auto-accepted row"):
        read_log(path, need_confidence=True)


@pytest.mark.parametrize("content, message", [
    (b"", "no rows: a log has one row per prediction"),
    (b"\n  \n", "no rows: a log has one row per prediction"),
    (b'{"route": "r\xe9view"}\n', "line 1: not valid UTF-8: byte 0xe9 at byte 13 of the line"),
])
def test_empty_and_undecodable_files(tmp_path, content, message):
    path = tmp_path / "day.jsonl"
    path.write_bytes(content)
    with pytest.raises(InputError) as caught:
        read_log(path)
    assert str(caught.value) == f"{path}: {message}"


def test_missing_files_and_folders(tmp_path):
    with pytest.raises(InputError, match=r"absent\.jsonl: no such file"):
        read_log(tmp_path / "absent.jsonl")
    with pytest.raises(InputError, match="is a folder, not a file"):
        read_log(tmp_path)


def test_a_broken_gzip_stream_names_the_last_line_read(tmp_path):
    path = tmp_path / "day.jsonl.gz"
    whole = gzip.compress(b'{"route": "review", "correct": true}\n' * 2000)
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(InputError, match=r"day.jsonl.gz: truncated gzip file: the last complete line is \d+$"):
        read_log(path)
