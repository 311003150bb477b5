"""Hostile content in what rpa-sim reads (issue 20): damaged outcome tables, ids and values holding control
characters or a megabyte of text, YAML with control characters or a key given twice. Each ends in exactly one
printable line of bounded length on stderr, with the exit status of bad input, and changes no file."""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rpa_sim.common.errors import InputError, escaped, shown
from rpa_sim.evaluate.outcomes import evaluate_kie, evaluate_vqa
from rpa_sim.evaluate.tablefile import METADATA_KEY, write_table
from rpa_sim.records.models import KIERecord, VQARecord
from tests.conftest import run_cli, write_lines

#: a generous bound on one error line: quoted values are cut at 80 characters, the whole line at 2,000
LINE_LIMIT = 600
HOSTILE = "r-1\n\x1b[2J\x1b[31m[bold]red[/]\r"
MEGABYTE_ID = "x" * 1_048_576


def kie(record_id: str, confidence: float = 0.4, key: str = "total") -> dict:
    return {"id": record_id,
            "ground_truth": {"entities": [{"key": key, "value": "10.00"}, {"key": "date", "value": "1.1"}]},
            "prediction": {"entities": [{"key": key, "value": "10.0", "confidence": confidence}]}}


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def one_error_line(capsys, *argv, status: int = 1, limit: int = LINE_LIMIT) -> str:
    """Run the command line; it must fail with ``status`` and exactly one printable, bounded line on stderr."""
    code, out, err = run_cli(capsys, *argv)
    assert code == status, err
    assert out == ""
    assert err.endswith("\n") and err.count("\n") == 1, err[:2000]
    line = err.removesuffix("\n")
    assert line.startswith("rpa-sim: error: ")
    assert line.isprintable(), line  # no ESC, no carriage return, no newline inside, no other control character
    assert len(line) <= limit, len(line)
    return line.removeprefix("rpa-sim: error: ")


def refused_unchanged(capsys, folder: Path, *argv) -> str:
    """:func:`one_error_line`, and every file of ``folder`` is as it was, with no file added."""
    before = {path: digest(path) for path in folder.rglob("*") if path.is_file()}
    message = one_error_line(capsys, *argv)
    assert {path: digest(path) for path in folder.rglob("*") if path.is_file()} == before
    return message


# --------------------------------------------------------------------------- the central helpers


def test_shown_escapes_quotes_and_bounds_any_value():
    assert shown(HOSTILE) == '"r-1\\n\\x1b[2J\\x1b[31m[bold]red[/]\\r"'
    assert shown(MEGABYTE_ID) == '"' + "x" * 80 + "...(1,048,576 characters)"
    assert shown("\x1b" * 1000).endswith("...(1,000 characters)") and len(shown("\x1b" * 1000)) <= 80 + 25
    assert shown('a"b\\c') == '"a\\"b\\\\c"' and shown("it's", quote="'") == "'it\\'s'"
    assert shown([1.5, float("inf"), None, True, {"k": "v"}]) == '[1.5, inf, null, true, {"k": "v"}]'
    deep = json.loads("[" * 900 + "]" * 900)
    assert shown(deep) == "[" * 80 + "...(1,800 characters)"
    assert escaped("\u202eevil\u2028") == "\\u202eevil\\u2028"


def test_a_location_escapes_and_shortens_the_id_and_field():
    error = InputError("bad", path="a\x1b.jsonl", line=3, record_id=MEGABYTE_ID, field="x\ny")
    assert str(error) == f"a\\x1b.jsonl: line 3 (id {'x' * 80}...(1,048,576 characters)): x\\ny: bad"


# --------------------------------------------------------------------------- ids and values in records and logs


def test_an_id_with_control_characters_is_escaped_in_the_one_line(tmp_path, capsys):
    data = write_lines(tmp_path / "data.jsonl", kie("r-0"), kie(HOSTILE, confidence=1.7))
    message = refused_unchanged(capsys, tmp_path, "score", data)
    assert message == (f"{data}: line 2 (id r-1\\n\\x1b[2J\\x1b[31m[bold]red[/]\\r): "
                       "prediction.entities[0].confidence: 1.7 is not in [0, 1]")


def test_a_megabyte_id_is_cut_to_80_characters_and_counted(tmp_path, capsys):
    data = write_lines(tmp_path / "data.jsonl", kie(MEGABYTE_ID, confidence=1.7))
    message = refused_unchanged(capsys, tmp_path, "score", data)
    assert message == (f"{data}: line 1 (id {'x' * 80}...(1,048,576 characters)): "
                       "prediction.entities[0].confidence: 1.7 is not in [0, 1]")


def test_a_hostile_value_is_quoted_escaped_and_cut(tmp_path, capsys):
    data = write_lines(tmp_path / "data.jsonl", {**kie("r-1"), "ground_truth": {"entities": "\x1b[2J" * 100_000}})
    message = refused_unchanged(capsys, tmp_path, "score", data)
    assert message.startswith(f"{data}: line 1 (id r-1): ground_truth.entities: ")
    assert '"\\x1b[2J\\x1b[2J' in message and message.endswith("...(400,000 characters)")


def test_estimate_escapes_the_ids_and_values_of_a_production_log(tmp_path, capsys):
    log = write_lines(tmp_path / "day.jsonl", {"id": HOSTILE, "route": "auto", "inclusion_probability": 1.5})
    assert refused_unchanged(capsys, tmp_path, "estimate", "--method", "classical", log) == (
        f"{log}: line 1 (id r-1\\n\\x1b[2J\\x1b[31m[bold]red[/]\\r): inclusion_probability: "
        "expected a number in [0, 1], got 1.5")
    write_lines(log, {"route": "\x1b[2J" * 1000})
    message = refused_unchanged(capsys, tmp_path, "estimate", "--method", "classical", log)
    assert message.startswith(f"{log}: line 1: route: expected 'auto', 'review' or 'audit', got \"\\x1b[2J")
    assert message.endswith("...(4,000 characters)")


def test_the_last_guard_makes_any_message_one_bounded_line(tmp_path, capsys, monkeypatch):
    from rpa_sim.cli import entry as cli
    from rpa_sim.cli.output import MESSAGE_LIMIT

    def hostile(args):
        raise InputError("a library said:\n\x1b[2J" + "y" * 10_000)

    monkeypatch.setitem(cli.COMMANDS, "score", hostile)
    message = one_error_line(capsys, "score", tmp_path / "data.jsonl", limit=MESSAGE_LIMIT + 50)
    assert message.startswith("a library said:\\n\\x1b[2J" + "y" * 100)
    assert message.endswith("y...(10,027 characters)")


# --------------------------------------------------------------------------- YAML


@pytest.mark.parametrize(("text", "problem"), [
    ("name: a\nmiss_rate: 0.1\nnote: caf\x01e\n",
     "line 3: not valid YAML: the character '\\x01' at column 10 is not allowed in YAML"),
    ("name: a\nnote: \x1b[2J\n", "line 2: not valid YAML: the character '\\x1b' at column 7 is not allowed in YAML"),
    ("name: a\nreview_if:\n  confidence: 0.8\nname: b\n",
     "line 4: not valid YAML: the key 'name' is given twice (first on line 1)"),
    ("name: a\nreview_if: {confidence: 0.8, confidence: 0.9}\n",
     "line 2: not valid YAML: the key 'confidence' is given twice (first on line 2)"),
    ("name: a\nreview_if: {confidence: !!float abc}\n", "line 2: not valid YAML: cannot read 'abc' as float"),
    ("name: a\naudit: 1" + "0" * 5000 + "\n",
     "line 2: not valid YAML: cannot read '1" + "0" * 79 + "...(5,001 characters) as int"),
])
def test_a_bad_policy_file_is_one_line_naming_its_line(tmp_path, capsys, text, problem):
    policy = tmp_path / "policy.yaml"
    policy.write_text(text, encoding="utf-8")
    data = write_lines(tmp_path / "data.jsonl", kie("r-1"))
    assert refused_unchanged(capsys, tmp_path, "sweep", data, "--policy", policy) == f"{policy}: {problem}"


def test_a_merge_may_still_override_a_key(tmp_path):
    from rpa_sim.common.yamlfile import read_yaml

    path = tmp_path / "merged.yaml"
    path.write_text("base: &base {confidence: 0.8, audit: 0.1}\npolicy:\n  <<: *base\n  confidence: 0.9\n")
    assert read_yaml(path)["policy"] == {"confidence": 0.9, "audit": 0.1}


# --------------------------------------------------------------------------- outcome table files


@pytest.fixture
def table(tmp_path) -> Path:
    records = [KIERecord.model_validate(kie(f"r-{i}", confidence=0.1 * (i + 1))) for i in range(3)]
    path = tmp_path / "good.parquet"
    write_table(evaluate_kie(records), path)
    return path


def rewritten(good: Path, name: str, *, metadata=None, raw_metadata: bytes | None = None, columns=None) -> Path:
    """A copy of ``good`` with its metadata (a function of the parsed JSON, or raw bytes) or columns replaced."""
    data = pq.read_table(good)
    for column, values in (columns or {}).items():
        array = pa.array(values) if not isinstance(values, pa.Array) else values
        data = data.set_column(data.schema.get_field_index(column), column, array)
    old = json.loads(data.schema.metadata[METADATA_KEY])
    new = raw_metadata if raw_metadata is not None else json.dumps(metadata(old)).encode() if metadata else None
    if new is not None:
        data = data.replace_schema_metadata({**data.schema.metadata, METADATA_KEY: new})
    path = good.with_name(name)
    pq.write_table(data, path)
    return path


def column(good: Path, name: str) -> list:
    return pq.read_table(good).column(name).to_pylist()


def replaced(values: list, index: int, value) -> list:
    return [value if i == index else v for i, v in enumerate(values)]


def _cut(good: Path, size: int) -> Path:
    path = good.with_name("cut.parquet")
    path.write_bytes(good.read_bytes()[:size])
    return path


def _footer_zeroed(good: Path) -> Path:
    raw = good.read_bytes()
    length = int.from_bytes(raw[-8:-4], "little")
    path = good.with_name("zeroed.parquet")
    path.write_bytes(raw[:-8 - length] + b"\0" * length + raw[-8:])
    return path


def _footer_flipped(good: Path) -> Path:
    raw = bytearray(good.read_bytes())
    length = int.from_bytes(raw[-8:-4], "little")
    raw[-8 - length + 50] ^= 0xFF
    path = good.with_name("flipped.parquet")
    path.write_bytes(bytes(raw))
    return path


def _without(good: Path, name: str) -> Path:
    data = pq.read_table(good)
    path = good.with_name("without.parquet")
    pq.write_table(data.drop_columns([name]), path)
    return path


def _duplicate_column(good: Path) -> Path:
    data = pq.read_table(good)
    path = good.with_name("twice.parquet")
    pq.write_table(data.append_column("confidence", data.column("confidence")), path)
    return path


# each: how to damage the good table (3 documents; rows 0-2 documents, 3-5 predicted, 6-8 missed), and the
# problem the one line gives after the file's name
DAMAGED = {
    "empty file": (lambda g: _cut(g, 0), "not a Parquet file, or a truncated one (Parquet file size is 0 bytes)"),
    "cut in half": (lambda g: _cut(g, g.stat().st_size // 2), "not a Parquet file, or a truncated one (Parquet magic"),
    "footer zeroed": (_footer_zeroed, "not a Parquet file, or a truncated one (Couldn't deserialize thrift"),
    "footer byte flipped": (_footer_flipped, "not a Parquet file, or a truncated one ("),
    "metadata not JSON": (lambda g: rewritten(g, "j.parquet", raw_metadata=b"{not json"),
                          "bad rpa_sim metadata: not JSON (JSON is malformed: object keys must be strings (byte 1))"),
    "metadata not UTF-8": (lambda g: rewritten(g, "u.parquet", raw_metadata=b"\xff\xfe"),
                           "bad rpa_sim metadata: not JSON (JSON is malformed: invalid character (byte 0))"),
    "metadata with NaN": (lambda g: rewritten(g, "n.parquet", raw_metadata=json.dumps(
        {**json.loads(pq.read_schema(g).metadata[METADATA_KEY]), "skipped": float("nan")}).encode()),
        "bad rpa_sim metadata: not JSON (JSON is malformed: invalid character"),
    "metadata nested 3,000 deep": (lambda g: rewritten(g, "d.parquet", raw_metadata=pq.read_schema(g).metadata[
        METADATA_KEY].replace(b'"skipped": 0', b'"skipped": ' + b"[" * 3000 + b"]" * 3000)),
        "bad rpa_sim metadata: nested too deeply"),
    "metadata nested 100,000 deep": (lambda g: rewritten(g, "e.parquet", raw_metadata=pq.read_schema(g).metadata[
        METADATA_KEY].replace(b'"skipped": 0', b'"skipped": ' + b"[" * 100_000 + b"]" * 100_000)),
        "bad rpa_sim metadata: nested too deeply"),
    "metadata a list": (lambda g: rewritten(g, "l.parquet", raw_metadata=b"[1, 2]"),
                        "a Parquet file, but not an rpa-sim outcome table (its rpa_sim metadata has no format"),
    "a huge count": (lambda g: rewritten(g, "h.parquet", metadata=lambda m: {**m, "skipped": 10**40}),
                     "bad rpa_sim metadata: skipped: Expected `int` <= 9223372036854775807"),
    "a float beyond range": (lambda g: rewritten(g, "f.parquet", raw_metadata=pq.read_schema(g).metadata[
        METADATA_KEY].replace(b'"skipped": 0', b'"skipped": 1e400')), "bad rpa_sim metadata: "),
    "a negative count": (lambda g: rewritten(g, "c.parquet", metadata=lambda m: {
        **m, "counts": {**m["counts"], "tp": -1}}), "bad rpa_sim metadata: counts[...]: Expected `int` >= 0"),
    "a field named twice": (lambda g: rewritten(g, "t.parquet", metadata=lambda m: {**m, "fields": ["total"] * 2}),
                            "bad rpa_sim metadata: fields names 'total' twice"),
    "a hostile version": (lambda g: rewritten(g, "v.parquet", metadata=lambda m: {
        **m, "rpa_sim_version": "\x1b[2J" + "v" * 100_000}),
        "written by rpa-sim '\\x1b[2J" + "v" * 73 + "...(100,004 characters), and this is rpa-sim"),
    "a column missing": (lambda g: _without(g, "confidence"), "not an rpa-sim outcome table: no column 'confidence'"),
    "a column twice": (_duplicate_column, "not a valid rpa-sim outcome table: two columns are named 'confidence'"),
    "a column of another type": (lambda g: rewritten(g, "s.parquet", columns={"confidence": pa.array(
        [None] * 3 + ["0.1", "0.2", "0.3"] + [None] * 3)}), "column 'confidence' is of type string, expected double"),
    "rows against the metadata": (lambda g: rewritten(g, "r.parquet", metadata=lambda m: {
        **m, "rows": {**m["rows"], "missed": 4}}), "not a valid rpa-sim outcome table: has 9 rows, and its metadata"),
    "a NaN confidence": (lambda g: rewritten(g, "n1.parquet", columns={"confidence": pa.array(
        replaced(column(g, "confidence"), 4, float("nan")), pa.float64())}),
        "not a valid rpa-sim outcome table: column 'confidence' holds nan in row 4 (counting from 0); expected a "
        "number in [0, 1]"),
    "an infinite grounding": (lambda g: rewritten(g, "n2.parquet", columns={"grounding": pa.array(
        replaced(column(g, "grounding"), 3, float("inf")), pa.float64())}),
        "not a valid rpa-sim outcome table: column 'grounding' holds inf in row 3 (counting from 0); expected a "
        "number in [0, 1] or null"),
    "a confidence above 1": (lambda g: rewritten(g, "n3.parquet", columns={"confidence": pa.array(
        replaced(column(g, "confidence"), 5, 2.0), pa.float64())}),
        "not a valid rpa-sim outcome table: column 'confidence' holds 2.0 in row 5 (counting from 0); expected a "
        "number in [0, 1]"),
    "a negative count column": (lambda g: rewritten(g, "n4.parquet", columns={"tp": pa.array(
        replaced(replaced(column(g, "tp"), 0, -1), 1, column(g, "tp")[1] + 1), pa.int64())}),
        "not a valid rpa-sim outcome table: column 'tp' holds -1 in row 0 (counting from 0); expected a whole "
        "number at least 0"),
    "a document_id twice": (lambda g: rewritten(g, "i1.parquet", columns={"document_id": pa.array(
        replaced(column(g, "document_id"), 2, "r-0"))}),
        "id r-0: not a valid rpa-sim outcome table: column 'document_id' repeats this id in rows 0 and 2"),
    "an entity of another document's id": (lambda g: rewritten(g, "i2.parquet", columns={"document_id": pa.array(
        replaced(column(g, "document_id"), 4, "r-0"))}),
        ("id r-1: not a valid rpa-sim outcome table: row 4 (counting from 0) has the document_id of document 0, "
         "and its column 'document' says 1")),
    "a hostile key": (lambda g: rewritten(g, "k.parquet", columns={"key": pa.array(
        replaced(column(g, "key"), 3, "\x1b[2J" * 1000))}),
        "not a valid rpa-sim outcome table: column 'key' holds '\\x1b[2J\\x1b[2J"),
}


@pytest.mark.parametrize("damage", DAMAGED)
def test_a_damaged_table_is_one_line_naming_the_file(tmp_path, capsys, table, damage):
    make, problem = DAMAGED[damage]
    bad = make(table)
    message = refused_unchanged(capsys, tmp_path, "score", bad)
    assert message.startswith(f"{bad}: {problem}"), message


def test_a_vqa_table_with_a_question_id_twice_is_refused(tmp_path, capsys):
    records = [VQARecord.model_validate({"id": question, "answers": ["1"],
                                         "prediction": {"answer": "1", "confidence": 0.5}})
               for question in ("q-1", "q-2", "q-1\x1b")]
    good = tmp_path / "q.parquet"
    write_table(evaluate_vqa(records), good)
    bad = rewritten(good, "q2.parquet", columns={"question_id": pa.array(["q-1", "q-2", "q-1"])})
    assert refused_unchanged(capsys, tmp_path, "score", bad) == (
        f"{bad}: id q-1: not a valid rpa-sim outcome table: column 'question_id' repeats this id in rows 0 and 2 "
        "(counting from 0): ids are unique")
    assert run_cli(capsys, "score", good)[0] == 0  # an id with a control character is data, not damage


def test_an_extra_column_is_ignored(tmp_path, capsys, table):
    data = pq.read_table(table)
    extra = tmp_path / "extra.parquet"
    pq.write_table(data.append_column("team_note", pa.array(["x"] * data.num_rows)), extra)
    assert run_cli(capsys, "score", extra)[1] == run_cli(capsys, "score", table)[1]


# --------------------------------------------------------------------------- the dashboard


def run_async(test):
    @functools.wraps(test)
    def wrapper(*args, **kwargs):
        return asyncio.run(test(*args, **kwargs))
    return wrapper


@run_async
async def test_the_dashboard_shows_hostile_ids_and_names_as_plain_escaped_text(tmp_path):
    pytest.importorskip("textual")
    from textual.widgets import Static

    from rpa_sim.tui.app import DashboardApp
    from rpa_sim.tui.widgets.text_table import TextTable
    from tests.support_tui import loaded, notifications

    key = "k\x1b[2J[bold red]x[/]\n[/oops]"
    bad = write_lines(tmp_path / "bad.jsonl", kie("r-0"), kie(HOSTILE, confidence=7))
    app = DashboardApp(str(bad))
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await loaded(app, pilot)
        assert app.error == (f"{bad}: line 2 (id r-1\\n\\x1b[2J\\x1b[31m[bold]red[/]\\r): "
                             "prediction.entities[0].confidence: 7 is not in [0, 1]")
        panel = str(app.query_one("#error-panel", Static).visual)  # rendered as text: markup would raise here
        assert app.error in panel and "\x1b" not in panel
        # the notification shows the message as it is: its [bold] and [/] are text, not markup
        [(severity, shown_text)] = notifications(app)
        assert severity == "error" and shown_text.endswith(app.error)
        await pilot.press("q")

    good = write_lines(tmp_path / "good.jsonl", *(kie(f"r-{i}", confidence=0.1 * i, key=key) for i in range(10)))
    app = DashboardApp(str(good))
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(app, pilot)
        await pilot.press("f")
        await pilot.pause(0.3)
        lines = [line for view in app.query(TextTable) for line in view.lines]
        assert any("k\\x1b[2J[bold red]x[/]\\n[/oops]" in line for line in lines)
        assert all(line.isprintable() for line in lines)
        app.save_screenshot(str(tmp_path / "shot.svg"))  # every widget renders
        await pilot.press("q")
