"""Outcome tables as Parquet files (issue 10, section 1): exact round trips, plain Parquet for other readers,
the same bytes for the same table, concatenation of parts, and one clear error for every file that is not a
table of this rpa-sim."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import pickle

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rpa_sim.common.errors import InputError
from rpa_sim.evaluate.metrics.kieval import KIEvalCounts
from rpa_sim.evaluate.outcomes import KIEOutcomes, VQAOutcomes, concat_tables, evaluate_kie, evaluate_vqa
from rpa_sim.evaluate.outcomes.arrow import FileRows, named, numbers, strings, whole_numbers
from rpa_sim.evaluate.outcomes.kie import DOCUMENT_COUNTS
from rpa_sim.evaluate.tablefile import (
    FORMAT_VERSION,
    METADATA_KEY,
    SourceFile,
    is_table_file,
    read_info,
    read_table,
    write_table,
)
from rpa_sim.records.models import KIERecord, VQARecord
from rpa_sim.records.synthetic import generate_docvqa, generate_receipts
from rpa_sim.route.policies import Policy
from rpa_sim.route.reviewer import Reviewer
from rpa_sim.route.sweep import Sweeper
from rpa_sim.version import __version__

PAGE = {"width": 1000, "height": 1000, "words": [{"text": "CAFÉ", "bbox": [10, 10, 60, 30]},
                                                 {"text": "12.50", "bbox": [400, 500, 460, 520]}]}

# Every shape a KIE document can take: all three outcomes, a given and a computed grounding, non-ASCII
# values, a document with no entity at all, one without OCR (grounding unknown) whose missed entities
# include a key no prediction has, and an empty predicted value.
KIE_RECORDS = [
    {"id": "r-1", "document": {"pages": [PAGE]},
     "ground_truth": {"entities": [{"key": "store", "value": "CAFÉ ☕"}, {"key": "total", "value": "12.50"}],
                      "groups": [[{"key": "menu.nm", "value": "LATTE"}, {"key": "menu.price", "value": "4,000"}]]},
     "prediction": {"entities": [{"key": "store", "value": "CAFE", "confidence": 0.41},
                                 {"key": "total", "value": "12.50", "confidence": 0.97, "grounding": 0.25}],
                    "groups": [[{"key": "menu.nm", "value": "LATTE", "confidence": 0.9},
                                {"key": "menu.price", "value": "4.000", "confidence": 0.42},
                                {"key": "menu.cnt", "value": "1", "confidence": 0.3}]]}},
    {"id": "r-2 empty", "ground_truth": {}, "prediction": {}},
    {"id": "r-3", "ground_truth": {"entities": [{"key": "only.missed", "value": "x"}, {"key": "total", "value": "1"}]},
     "prediction": {"entities": [{"key": "date", "value": "", "confidence": 0.5},
                                 {"key": "total", "value": "7", "confidence": 0.6}]}},
]
VQA_RECORDS = [
    {"id": "q-1", "answers": ["12"], "question_type": "Table/List", "document": {"pages": [PAGE]},
     "evidence": [{"page": 0, "bbox": [400, 500, 460, 520]}],
     "prediction": {"answer": "12.50", "confidence": 0.41, "evidence": [{"page": 0, "bbox": [400, 495, 470, 520]}]}},
    {"id": "q-2", "answers": ["Café ☕", "cafe"],
     "prediction": {"answer": "café", "confidence": 0.8, "grounding": 0.6}},
    {"id": "q-3", "answers": ["Paris"], "question_type": "Table/List",
     "prediction": {"answer": "", "confidence": 0.1}},
]


def kie_table(records=KIE_RECORDS, **options) -> KIEOutcomes:
    return evaluate_kie([KIERecord.model_validate(r) for r in records], **options)


def vqa_table(records=VQA_RECORDS, **options) -> VQAOutcomes:
    return evaluate_vqa([VQARecord.model_validate(r) for r in records], **options)


def assert_same_table(got, want) -> None:
    """Every field equal: arrays of the same dtype and shape, equal values (NaN where NaN), settings equal."""
    assert type(got) is type(want)
    for field in dataclasses.fields(want):
        a, b = getattr(got, field.name), getattr(want, field.name)
        if isinstance(b, np.ndarray):
            assert (a.dtype, a.shape) == (b.dtype, b.shape), field.name
            assert np.array_equal(a, b, equal_nan=b.dtype.kind == "f"), field.name
            assert a.flags.writeable, field.name
        else:
            assert a == b, field.name


@pytest.fixture(scope="module")
def receipts() -> list[KIERecord]:
    return list(generate_receipts(40, seed=5))


@pytest.fixture(scope="module")
def questions() -> list[VQARecord]:
    return list(generate_docvqa(60, seed=5))


# --------------------------------------------------------------------------- exact round trips


@pytest.mark.parametrize("make", [kie_table, lambda: kie_table(value_match="normalized"), vqa_table,
                                  lambda: vqa_table(alpha=0.6)])
def test_hand_made_tables_round_trip_exactly(tmp_path, make):
    table = make()
    write_table(table, tmp_path / "t.parquet")
    assert_same_table(read_table(tmp_path / "t.parquet"), table)


@pytest.mark.parametrize("make", [kie_table, vqa_table])
def test_a_read_table_pickles_before_and_after_its_text_is_read(tmp_path, make):
    # a table read on a Dask worker travels to the driver with its text columns not yet converted
    table = make()
    write_table(table, tmp_path / "t.parquet")
    unread = pickle.loads(pickle.dumps(read_table(tmp_path / "t.parquet")))
    assert_same_table(unread, table)
    read = read_table(tmp_path / "t.parquet")
    assert_same_table(read, table)
    assert_same_table(pickle.loads(pickle.dumps(read)), table)


def test_the_hand_made_kie_table_has_every_kind_of_row():
    table = kie_table()
    assert table.documents == 3 and set(table.outcome.tolist()) == {0, 1, 2}
    assert table.document_count("entities_pred").tolist()[1] == 0 and table.counts.additions == 1
    assert "only.missed" in table.keys and "only.missed" not in {table.keys[k] for k in table.key}
    assert np.isnan(table.grounding).any() and not np.isnan(table.grounding).all()


def test_generated_tables_round_trip_exactly(tmp_path, receipts, questions):
    for table in (evaluate_kie(receipts), evaluate_vqa(questions)):
        write_table(table, tmp_path / f"{table.task}.parquet")
        assert_same_table(read_table(tmp_path / f"{table.task}.parquet"), table)


def test_empty_tables_round_trip(tmp_path):
    for table in (evaluate_kie([]), evaluate_vqa([])):
        write_table(table, tmp_path / f"{table.task}.parquet")
        assert_same_table(read_table(tmp_path / f"{table.task}.parquet"), table)


def test_ids_read_from_one_chunk_or_many_are_the_same(tmp_path, receipts):
    # issue 32: as a file is written (one row group), the document ids are its dictionary, read once, and each
    # entity's code is already its document; a file of many row groups is read chunk by chunk, to the same table
    table = evaluate_kie(receipts)
    write_table(table, tmp_path / "one.parquet")
    with pq.ParquetFile(tmp_path / "one.parquet", read_dictionary=["document_id"]) as file:
        ids = file.read(columns=["document_id"]).column(0)
    documents = len(table.document_ids)  # written as the quick path reads it: codes 0, 1, 2, ... listing every id
    assert ids.num_chunks == 1 and len(ids.chunks[0].dictionary) == documents
    assert ids.chunks[0].indices.to_pylist()[:documents] == list(range(documents))
    pq.write_table(pq.read_table(tmp_path / "one.parquet"), tmp_path / "many.parquet", row_group_size=7)
    assert pq.ParquetFile(tmp_path / "many.parquet").num_row_groups > 10
    for name in ("one.parquet", "many.parquet"):
        assert_same_table(read_table(tmp_path / name), table)


def test_a_dictionary_that_lists_an_id_twice_is_refused(tmp_path):
    # the document rows' codes 0, 1, 2 in order, into a dictionary that names r-1 twice (no writer of pyarrow's
    # makes one, but a file is any bytes): the ids are told from the text, and the repeat named
    write_table(kie_table(), tmp_path / "t.parquet")
    layout = KIEOutcomes.file_layout
    with pq.ParquetFile(tmp_path / "t.parquet", read_dictionary=[c.name for c in layout.columns if c.coded]) as file:
        data = file.read()
    ids = data.column("document_id").chunks[0]
    assert ids.indices.to_pylist()[:3] == [0, 1, 2] and ids.dictionary.to_pylist() == ["r-1", "r-2 empty", "r-3"]
    twice = pa.DictionaryArray.from_arrays(ids.indices, pa.array(["r-1", "r-1", "r-3"]))
    data = data.set_column(data.schema.get_field_index("document_id"), "document_id", twice)
    rows = FileRows(tmp_path / "t.parquet", data, layout, read_info(tmp_path / "t.parquet"))
    with pytest.raises(InputError) as error:
        KIEOutcomes.from_arrow(rows)
    assert str(error.value) == (f"{tmp_path / 't.parquet'}: id r-1: not a valid rpa-sim outcome table: column "
                                f"'document_id' repeats this id in rows 0 and 1 (counting from 0): ids are unique")


def test_a_table_from_a_read_table_is_the_same_file(tmp_path, receipts):
    write_table(evaluate_kie(receipts), tmp_path / "a.parquet")
    write_table(read_table(tmp_path / "a.parquet"), tmp_path / "b.parquet")
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()


# --------------------------------------------------------------------------- the same bytes


def test_equal_tables_and_sources_give_equal_bytes(tmp_path, receipts):
    source = tmp_path / "records.jsonl"
    source.write_bytes(b"any bytes stand for the records\n")
    for name in ("one.parquet", "two.parquet"):
        write_table(evaluate_kie(receipts), tmp_path / "out" / name, source=[source], skipped=2)
    assert (tmp_path / "out" / "one.parquet").read_bytes() == (tmp_path / "out" / "two.parquet").read_bytes()
    info = read_info(tmp_path / "out" / "one.parquet")
    assert info.sources == (SourceFile(name="records.jsonl", bytes=32,
                                       sha256=hashlib.sha256(source.read_bytes()).hexdigest()),)
    assert info.skipped == 2 and info.rpa_sim_version == __version__ and info.format_version == FORMAT_VERSION
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["one.parquet", "two.parquet"]  # no temporaries


def test_the_metadata_describes_the_table(tmp_path):
    table = kie_table()
    write_table(table, tmp_path / "t.parquet")
    info = read_info(tmp_path / "t.parquet")
    assert (info.task, info.settings, info.fields) == ("kie", {"value_match": "exact"}, table.keys)
    assert info.rows == {"document": 3, "predicted": len(table), "missed": table.counts.additions}
    assert info.counts == dict(zip(KIEvalCounts.field_names(), table.counts.as_tuple()))
    write_table(vqa_table(alpha=0.6), tmp_path / "q.parquet")
    info = read_info(tmp_path / "q.parquet")
    assert (info.task, info.settings, info.rows, info.counts) == (
        "vqa", {"alpha": 0.6, "weight": 10.0, "threshold": 0.5}, {"question": 3}, {"questions": 3})


# --------------------------------------------------------------------------- plain Parquet for any reader


def test_kie_file_is_plain_parquet_with_named_values(tmp_path):
    table = kie_table()
    write_table(table, tmp_path / "t.parquet")
    data = pq.read_table(tmp_path / "t.parquet")
    rows = data.to_pylist()
    assert [row["kind"] for row in rows] == ["document"] * 3 + ["predicted"] * len(table) + ["missed"] * (
        table.counts.additions)
    predicted = [row for row in rows if row["kind"] == "predicted"]
    assert [row["outcome"] for row in predicted] == [table.outcome_names[o] for o in table.outcome]
    assert [row["key"] for row in predicted] == [table.keys[k] for k in table.key]
    assert [row["document_id"] for row in predicted] == [table.document_ids[d] for d in table.document]
    assert [row["value"] for row in predicted] == table.value.tolist()
    missed = [row for row in rows if row["kind"] == "missed"]
    assert {row["outcome"] for row in missed} == {"addition"}
    assert {row["key"] for row in missed} >= {"only.missed"}
    # counts on document rows only; summing a count column gives the corpus count
    for name in DOCUMENT_COUNTS:
        assert sum(row[name] for row in rows if row[name] is not None) == getattr(table.counts, name)
        assert all(row[name] is None for row in predicted + missed)
    # an unknown grounding is null, never NaN; so are the columns a kind of row does not have
    groundings = [row["grounding"] for row in predicted]
    assert None in groundings and not any(g is not None and np.isnan(g) for g in groundings)
    assert all(row["confidence"] is None and row["group"] is None for row in rows if row["kind"] != "predicted")
    types = {field.name: str(field.type) for field in data.schema}
    assert (types["kind"], types["document"], types["confidence"], types["entities_gt"]) == (
        "string", "int32", "double", "int64")
    assert all(not np.isnan(x) for name in ("confidence", "grounding", "similarity")
               for x in data.column(name).drop_null().to_pylist())


def test_repeated_strings_are_dictionary_encoded_and_the_writer_settings_fixed(tmp_path, receipts):
    write_table(evaluate_kie(receipts), tmp_path / "t.parquet")
    metadata = pq.ParquetFile(tmp_path / "t.parquet").metadata
    chunks = {metadata.row_group(0).column(i).path_in_schema: metadata.row_group(0).column(i)
              for i in range(metadata.num_columns)}
    for name in ("kind", "document_id", "key", "outcome"):
        assert "RLE_DICTIONARY" in chunks[name].encodings, name
    assert {chunk.compression for chunk in chunks.values()} == {"ZSTD"}
    assert metadata.format_version == "2.6" and metadata.num_row_groups == 1


def test_vqa_file_is_plain_parquet(tmp_path):
    table = vqa_table()
    write_table(table, tmp_path / "q.parquet")
    rows = pq.read_table(tmp_path / "q.parquet").to_pylist()
    assert [row["question_id"] for row in rows] == ["q-1", "q-2", "q-3"]
    assert [row["question_type"] for row in rows] == ["Table/List", "", "Table/List"]
    assert [row["answer_type"] for row in rows] == [table.answer_types[t] for t in table.answer_type]
    assert [row["answer"] for row in rows] == ["12", "Café ☕", "Paris"]
    assert [row["anls"] for row in rows] == table.anls.tolist()
    assert rows[1]["smudge_grounding"] is None and rows[1]["evidence_iou"] is None  # no OCR, no evidence
    assert rows[0]["evidence_iou"] == table.evidence_iou[0]


def test_pandas_reads_the_table_as_it_is(tmp_path):
    pandas = pytest.importorskip("pandas")
    table = kie_table()
    write_table(table, tmp_path / "t.parquet")
    frame = pandas.read_parquet(tmp_path / "t.parquet")
    predicted = frame[frame["kind"] == "predicted"]
    assert predicted["outcome"].tolist() == [table.outcome_names[o] for o in table.outcome]
    assert int(frame["tp"].sum()) == table.counts.tp


@given(st.lists(st.none() | st.text(), max_size=40))
def test_a_text_column_built_from_its_buffers_is_pyarrows_conversion(texts):
    built = strings(np.array(texts, dtype=object))
    assert built.validate(full=True) is None and built.equals(pa.array(texts, type=pa.string()))
    assert strings(texts).equals(built)


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), max_size=40),
       st.lists(st.integers(-2**31, 2**31 - 1), max_size=40))
def test_number_columns_built_from_their_buffers_are_pyarrows_conversion(floats, integers):
    built = numbers(np.array(floats, dtype=np.float64))
    assert built.validate(full=True) is None
    assert built.equals(pa.array(np.array(floats, dtype=np.float64), type=pa.float64(), from_pandas=True))
    for type_name in ("int32", "int64"):
        assert whole_numbers(np.array(integers), type_name).equals(pa.array(integers, type=getattr(pa, type_name)()))
    assert named(np.array([2, 0, 2], dtype=np.int32), ["a", "é", ""]).to_pylist() == ["", "a", ""]


# --------------------------------------------------------------------------- concatenation of parts


def test_kie_parts_concatenate_to_the_whole(receipts):
    whole = evaluate_kie(receipts)
    parts = [evaluate_kie(receipts[:13]), evaluate_kie(receipts[13:14]), evaluate_kie(receipts[14:])]
    joined = concat_tables(parts)
    assert_same_table(joined, whole)
    assert joined.counts == parts[0].counts + parts[1].counts + parts[2].counts


def test_keys_first_seen_in_a_later_part_or_only_missed_keep_evaluation_order():
    records = [KIE_RECORDS[2], KIE_RECORDS[0], KIE_RECORDS[1]]
    assert_same_table(concat_tables([kie_table(records[:1]), kie_table(records[1:])]), kie_table(records))
    assert_same_table(concat_tables([kie_table([]), kie_table(records), kie_table([])]), kie_table(records))


def test_vqa_parts_concatenate_to_the_whole(questions):
    whole = evaluate_vqa(questions, alpha=0.4)
    assert_same_table(concat_tables([evaluate_vqa(questions[:7], alpha=0.4), evaluate_vqa(questions[7:], alpha=0.4)]),
                      whole)


@pytest.mark.parametrize("policy", [
    {"name": "c", "review_if": {"confidence": "sweep"}},
    {"name": "d", "review_if": {"confidence": "sweep"}, "escalate": "document", "fix_additions": True},
])
def test_the_sweep_of_concatenated_files_is_the_sweep_of_the_whole(tmp_path, receipts, policy):
    for i, part in enumerate((receipts[:21], receipts[21:])):
        write_table(evaluate_kie(part), tmp_path / f"part-{i}.parquet")
    joined = concat_tables([read_table(tmp_path / f"part-{i}.parquet") for i in range(2)])
    reviewer = Reviewer(miss_rate=0.1, false_correction_rate=0.02)
    curves = [Sweeper(table, Policy.model_validate(policy), reviewer=reviewer).curve("exact")
              for table in (joined, evaluate_kie(receipts))]
    assert curves[0].rows() == curves[1].rows()


def test_concatenation_refuses_nothing_mixed_tasks_and_other_settings():
    with pytest.raises(ValueError, match="at least one table, got none"):
        concat_tables([])
    with pytest.raises(ValueError, match=r"one task, got \['kie', 'vqa'\]"):
        concat_tables([kie_table(), vqa_table()])
    with pytest.raises(ValueError, match=r"same value_match, got \['exact', 'normalized'\]"):
        concat_tables([kie_table(), kie_table(value_match="normalized")])
    with pytest.raises(ValueError, match=r"same alpha, got \[0.25, 0.5\]"):
        concat_tables([vqa_table(), vqa_table(alpha=0.5)])


# --------------------------------------------------------------------------- recognising a table


def test_a_table_is_recognised_by_its_suffix_or_its_first_bytes(tmp_path):
    write_table(kie_table(), tmp_path / "renamed.data")
    (tmp_path / "records.jsonl").write_text("{}\n")
    assert is_table_file(tmp_path / "renamed.data") and is_table_file(tmp_path / "missing.PARQUET")
    assert not is_table_file(tmp_path / "records.jsonl") and not is_table_file(tmp_path / "missing.jsonl")
    assert not is_table_file(tmp_path)
    assert_same_table(read_table(tmp_path / "renamed.data"), kie_table())


# --------------------------------------------------------------------------- what is refused


def rewritten(source, target, *, metadata=None, columns=None):
    """``source`` written again to ``target`` with its rpa_sim metadata changed and/or columns replaced."""
    data = pq.read_table(source)
    stored = json.loads(data.schema.metadata[METADATA_KEY])
    if metadata is not None:
        stored = metadata(stored)
    for name, column in (columns or {}).items():
        if column is None:
            data = data.drop_columns([name])
        else:
            data = data.set_column(data.schema.get_field_index(name), name, column)
    data = data.replace_schema_metadata(None if stored is None else {METADATA_KEY: json.dumps(stored)})
    pq.write_table(data, target)
    return target


@pytest.fixture
def stored(tmp_path):
    write_table(kie_table(), tmp_path / "t.parquet")
    return tmp_path / "t.parquet"


def refused(path, **expect) -> str:
    with pytest.raises(InputError) as error:
        read_table(path, expect=expect)
    message = str(error.value)
    assert "\n" not in message and message.startswith(str(path))
    return message.removeprefix(f"{path}: ")


def test_other_tasks_and_settings_are_refused_with_the_option_that_makes_them(stored, tmp_path):
    assert refused(stored, task="vqa") == "is an outcome table of KIE data, not VQA"
    assert refused(stored, value_match="normalized") == (
        "evaluated with value_match exact; re-run rpa-sim evaluate with --value-match normalized")
    write_table(vqa_table(alpha=0.6), tmp_path / "q.parquet")
    assert refused(tmp_path / "q.parquet", alpha=0.25) == (
        "evaluated with alpha 0.6; re-run rpa-sim evaluate with --alpha 0.25")
    # settings of the other task are ignored, as evaluation ignores them
    assert len(read_table(stored, expect={"task": "kie", "alpha": 0.9, "value_match": "exact"})) == len(kie_table())


def test_other_versions_are_refused(stored, tmp_path):
    other = rewritten(stored, tmp_path / "v.parquet", metadata=lambda m: {**m, "rpa_sim_version": "0.0.1"})
    assert refused(other) == (f"written by rpa-sim '0.0.1', and this is rpa-sim {__version__}; "
                              "re-run rpa-sim evaluate on its records")
    other = rewritten(stored, tmp_path / "f.parquet", metadata=lambda m: {**m, "format_version": 2})
    assert refused(other) == (f"outcome table format version 2, and rpa-sim {__version__} reads version 1; "
                              "re-run rpa-sim evaluate on its records")


def test_files_that_are_not_tables_are_refused_in_one_line(stored, tmp_path):
    (tmp_path / "text.parquet").write_text("id,value\n1,2\n")
    assert refused(tmp_path / "text.parquet").startswith("not a Parquet file, or a truncated one (")
    (tmp_path / "cut.parquet").write_bytes(stored.read_bytes()[: stored.stat().st_size // 2])
    assert refused(tmp_path / "cut.parquet").startswith("not a Parquet file, or a truncated one (")
    pq.write_table(pa.table({"x": [1, 2]}), tmp_path / "plain.parquet")
    assert refused(tmp_path / "plain.parquet") == (
        "a Parquet file, but not an rpa-sim outcome table (no rpa_sim metadata); make one with rpa-sim evaluate")
    assert refused(tmp_path / "missing.parquet") == "no such file"
    assert refused(tmp_path) == "is a folder, not an outcome table file"


def test_bad_metadata_is_refused(stored, tmp_path):
    pq.write_table(pa.table({"x": [1]}).replace_schema_metadata({METADATA_KEY: b"{not json"}), tmp_path / "j.parquet")
    assert refused(tmp_path / "j.parquet").startswith("bad rpa_sim metadata: not JSON (")
    other = rewritten(stored, tmp_path / "o.parquet", metadata=lambda m: {**m, "format": "something else"})
    assert refused(other) == ("a Parquet file, but not an rpa-sim outcome table (its rpa_sim metadata has no "
                              "format 'rpa-sim outcome table'); make one with rpa-sim evaluate")
    bad = rewritten(stored, tmp_path / "s.parquet", metadata=lambda m: {**m, "settings": {"value_match": "fuzzy"}})
    assert refused(bad) == ("bad rpa_sim metadata: settings.value_match must be 'exact' or "
                            "'normalized', got 'fuzzy'")
    bad = rewritten(stored, tmp_path / "r.parquet", metadata=lambda m: {**m, "rows": {"document": 3}})
    assert refused(bad).startswith("bad rpa_sim metadata: rows of a kie table must name "
                                   "['document', 'predicted', 'missed'], got ['document']")
    bad = rewritten(stored, tmp_path / "k.parquet", metadata=lambda m: {**m, "skipped": -1})
    assert refused(bad).startswith("bad rpa_sim metadata: skipped: ")


def test_missing_columns_wrong_types_and_rows_against_the_metadata_are_refused(stored, tmp_path):
    data = pq.read_table(stored)
    assert refused(rewritten(stored, tmp_path / "a.parquet", columns={"confidence": None})) == (
        "not an rpa-sim outcome table: no column 'confidence'")
    as_text = data.column("confidence").cast(pa.string())
    assert refused(rewritten(stored, tmp_path / "b.parquet", columns={"confidence": as_text})) == (
        "column 'confidence' is of type string, expected double")
    assert refused(rewritten(stored, tmp_path / "c.parquet",
                             metadata=lambda m: {**m, "rows": {**m["rows"], "missed": m["rows"]["missed"] + 1}})
                   ).startswith("not a valid rpa-sim outcome table: has ")
    wrong_key = pa.array([None] * 3 + ["nowhere"] * (data.num_rows - 3), type=pa.string())
    assert refused(rewritten(stored, tmp_path / "d.parquet", columns={"key": wrong_key})) == (
        f"not a valid rpa-sim outcome table: column 'key' holds 'nowhere', which is not one of "
        f"{list(kie_table().keys)}")
    no_confidence = pa.array([None] * data.num_rows, type=pa.float64())
    assert refused(rewritten(stored, tmp_path / "e.parquet", columns={"confidence": no_confidence})) == (
        "not a valid rpa-sim outcome table: column 'confidence' has nulls in predicted rows")
    counts = data.column("tp").to_pylist()
    counts[0] += 1
    assert refused(rewritten(stored, tmp_path / "f.parquet", columns={"tp": pa.array(counts, type=pa.int64())})
                   ).startswith("not a valid rpa-sim outcome table: the document rows' counts add up to ")
    kinds = data.column("kind").to_pylist()
    kinds[0], kinds[3] = kinds[3], kinds[0]
    assert refused(rewritten(stored, tmp_path / "g.parquet", columns={"kind": pa.array(kinds)})).startswith(
        "not a valid rpa-sim outcome table: column ")
