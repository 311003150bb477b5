"""The fast reading path accepts exactly what the pydantic models accept, and reads the same values.

Two fast paths, each checked against the slow path it stands in for:
:func:`rpa_sim.records.models.decode_fast` (msgspec structs) against the models'
``model_validate_json(strict=True)``, and the readers' quick look at a line's
top-level fields against Python's ``json.loads``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from rpa_sim.common.errors import InputError
from rpa_sim.records import lines as record_lines
from rpa_sim.records.models import KIERecord, VQARecord, decode_fast
from rpa_sim.records.readers import Problem, read_records
from tests.conftest import run_cli

MODELS = {"kie": KIERecord, "vqa": VQARecord}
PROPERTY = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --------------------------------------------------------------------------- valid records

texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6)
# numbers as JSON writes them: integers and floats, small and extreme, signed zeros
numbers = st.one_of(st.integers(-10**6, 10**6), st.floats(allow_nan=False, allow_infinity=False),
                    st.sampled_from([0, 0.0, -0.0, 1, 5e-324, 1.7976931348623157e308, 2**63, 2**64 + 1]))
units = st.one_of(st.floats(0.0, 1.0), st.sampled_from([0, 1, 0.0, 1.0, -0.0, 5e-324]))
positives = st.one_of(st.integers(1, 10**6), st.floats(min_value=5e-324, allow_infinity=False),
                      st.just(2**70))


@st.composite
def boxes(draw: st.DrawFn) -> list[Any]:
    x0, y0 = draw(numbers), draw(numbers)
    x1 = draw(st.one_of(st.just(x0), numbers.filter(lambda v, x0=x0: v >= x0)))
    y1 = draw(st.one_of(st.just(y0), numbers.filter(lambda v, y0=y0: v >= y0)))
    return [x0, y0, x1, y1]


def optional(key: str, values: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """``{key: value}``, ``{key: None}`` or ``{}``."""
    return st.one_of(st.builds(lambda v: {key: v}, values), st.just({key: None}), st.just({}))


def objects(required: dict[str, st.SearchStrategy[Any]], **optional_fields: st.SearchStrategy[dict[str, Any]]):
    return st.builds(lambda req, *opts: {**req, **{k: v for o in opts for k, v in o.items()}},
                     st.fixed_dictionaries(required), *optional_fields.values())


words = objects({"text": texts, "bbox": boxes()},
                segment=optional("segment", st.one_of(st.integers(-2**70, 2**70), texts)))
pages = objects({"width": positives, "height": positives}, words=st.one_of(
    st.builds(lambda w: {"words": w}, st.lists(words, max_size=3)), st.just({})))
documents = st.one_of(st.builds(lambda p: {"pages": p}, st.lists(pages, max_size=2)), st.just({}))
entities = st.fixed_dictionaries({"key": texts, "value": texts})
evidence = st.lists(st.fixed_dictionaries({"page": st.integers(0, 2**70), "bbox": boxes()}), max_size=2)
# named signals: free names (tests/test_signal_records.py checks that both paths refuse the reserved ones)
signals = st.dictionaries(texts.filter(lambda name: name not in ("", "confidence", "fused")),
                          st.one_of(units, st.none()), max_size=3)
predicted_entities = objects({"key": texts, "value": texts, "confidence": units},
                             grounding=optional("grounding", units), evidence=optional("evidence", evidence),
                             signals=optional("signals", signals))


def groups(entity: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[Any]:
    # a bare list of entities, or an object with an optional name
    listed = st.lists(entity, max_size=3)
    return st.one_of(listed, objects({}, name=optional("name", texts),
                                     entities=st.one_of(st.builds(lambda e: {"entities": e}, listed), st.just({}))))


def extractions(entity: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return objects({}, entities=st.one_of(st.builds(lambda e: {"entities": e}, st.lists(entity, max_size=3)),
                                          st.just({})),
                   groups=st.one_of(st.builds(lambda g: {"groups": g}, st.lists(groups(entity), max_size=3)),
                                    st.just({})))

kie_records = objects({"id": texts}, ground_truth=optional("ground_truth", extractions(entities)),
                      prediction=optional("prediction", extractions(predicted_entities)),
                      document=optional("document", documents))
vqa_predictions = objects({"answer": texts, "confidence": units}, grounding=optional("grounding", units),
                          evidence=optional("evidence", evidence), signals=optional("signals", signals))
vqa_records = objects({"id": texts}, question=optional("question", texts),
                      answers=optional("answers", st.lists(texts, min_size=1, max_size=3)),
                      prediction=optional("prediction", vqa_predictions), evidence=optional("evidence", evidence),
                      question_type=optional("question_type", texts), document=optional("document", documents))
records = st.one_of(st.tuples(st.just("kie"), kie_records), st.tuples(st.just("vqa"), vqa_records))

# --------------------------------------------------------------------------- invalid records: one change each

WRONG_VALUES = [None, True, False, "0.5", "", 1.5, -1, -0.5, 2, 0, 10**30, [], {}, [1, 2, 3], [0, 0, 5, 5, 9],
                [3, 0, 1, 1], [0, 3, 1, 1], ["a"], [[]], {"key": "k"}, 1e308, -1e308, 2**64, 5e-324]


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value: object keys and list indices."""
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += paths(item, (*prefix, index))
    return found


def changed(value: Any, path: tuple[Any, ...], change: str, new: Any) -> Any:
    """``value`` with the item at ``path`` replaced, removed, or given an unknown field."""
    if not path:
        return {**value, "extra": new} if change == "add" and isinstance(value, dict) else new
    head, rest = path[0], path[1:]
    copy = dict(value) if isinstance(value, dict) else list(value)
    if not rest and change == "remove":
        del copy[head]
    else:
        copy[head] = changed(copy[head], rest, change, new)
    return copy


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, Any]:
    task, record = draw(records)
    path = draw(st.sampled_from(paths(record)))
    change = draw(st.sampled_from(["replace", "remove", "add"] if path else ["replace", "add"]))
    new = draw(st.sampled_from(WRONG_VALUES))
    return task, changed(record, path, change, new)


# --------------------------------------------------------------------------- the comparison


def slow(task: str, text: str) -> Any:
    """The pydantic model's record, or None when it refuses the text."""
    try:
        return MODELS[task].model_validate_json(text, strict=True)
    except ValidationError:
        return None


def as_json(record: Any) -> str:
    """A record's values (types included: 1 and 1.0 differ) as JSON, whichever path read it."""
    if isinstance(record, msgspec.Struct):
        return json.dumps(msgspec.to_builtins(record))
    return json.dumps(record.model_dump(mode="json"))


def key_paths(value: Any, prefix: tuple[Any, ...] = ()) -> set[tuple[Any, ...]]:
    """The places of the object keys in a JSON value."""
    found = set()
    if isinstance(value, dict):
        for key, item in value.items():
            found |= {(*prefix, key)} | key_paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found |= key_paths(item, (*prefix, index))
    return found


def unknown_fields(record: Any, model_record: Any) -> set[tuple[Any, ...]]:
    """The fields of a raw record that its model ignored (bare-list groups read as ``{"entities": [...]}``)."""
    if isinstance(record, dict):
        record = dict(record)
        for side in ("ground_truth", "prediction"):
            extraction = record.get(side)
            if isinstance(extraction, dict) and isinstance(extraction.get("groups"), list):
                groups = [{"entities": g} if isinstance(g, list) else g for g in extraction["groups"]]
                record[side] = {**extraction, "groups": groups}
    return key_paths(record) - key_paths(model_record.model_dump(mode="json"))


def assert_same_judgement(task: str, record: Any) -> None:
    """The fast path reads what the model accepts, as the model does, except records with fields the model ignores."""
    text = json.dumps(record)
    fast, reference = decode_fast(task, text), slow(task, text)
    if fast is None and reference is not None:
        assert unknown_fields(record, reference), text
    else:
        assert (fast is None) == (reference is None), (text, fast, reference)
    if fast is not None:
        assert as_json(fast) == as_json(reference)


@PROPERTY
@given(records)
def test_valid_records_are_read_alike(case: tuple[str, dict[str, Any]]) -> None:
    task, record = case
    assert decode_fast(task, json.dumps(record)) is not None, record
    assert_same_judgement(task, record)


@PROPERTY
@given(mutated())
def test_changed_records_are_judged_alike(case: tuple[str, Any]) -> None:
    task, record = case
    assert_same_judgement(task, record)


@PROPERTY
@given(records, st.sampled_from(['"x": NaN', '"x": Infinity', '"x": -Infinity', '"x": "\\ud800"', '"x": 1e400',
                                  '"x": ' + "[" * 300 + "]" * 300, '"x": {"deep": ' + "[" * 150 + "]" * 150 + "}"]))
def test_what_the_fast_path_cannot_read_is_left_to_the_model(case: tuple[str, dict[str, Any]], extra: str) -> None:
    task, record = case
    text = json.dumps(record)[:-1] + (", " if len(record) else "") + extra + "}"
    assert decode_fast(task, text) is None


@pytest.mark.parametrize(("task", "text"), [
    ("kie", '{"id": "r", "prediction": {"entities": [{"key": "k", "value": "v", "confidence": NaN}]}}'),
    ("kie", '{"id": "r", "document": {"pages": [{"width": 1e400, "height": 1}]}}'),
    ("kie", '{"id": "r", "document": {"pages": [{"width": 1, "height": 1, "words": [{"text": "a", '
            '"bbox": [0, 0, 1, Infinity]}]}]}}'),
    ("vqa", '{"id": "q", "answers": ["\\ud800"]}'),
])
def test_numbers_and_strings_json_cannot_carry_plainly(task: str, text: str) -> None:
    # The fast path refuses them all, and the model words why.
    assert decode_fast(task, text) is None
    assert slow(task, text) is None


def test_a_number_too_small_for_a_double_is_zero_on_both_paths() -> None:
    text = '{"id": "q", "prediction": {"answer": "a", "confidence": 1e-400}}'
    assert decode_fast("vqa", text).prediction.confidence == slow("vqa", text).prediction.confidence == 0.0


def test_the_last_of_repeated_keys_counts_on_both_paths() -> None:
    text = '{"id": "a", "answers": ["1"], "answers": ["2"], "prediction": {"answer": "x", "confidence": 0.1}}'
    assert decode_fast("vqa", text).answers == slow("vqa", text).answers == ["2"]


def test_groups_are_objects_on_both_paths() -> None:
    record = {"id": "r", "prediction": {"groups": [[{"key": "k", "value": "v", "confidence": 1}], {"name": "menu"}]}}
    fast = decode_fast("kie", json.dumps(record))
    assert [(group.name, len(group.entities)) for group in fast.prediction.groups] == [(None, 1), ("menu", 0)]
    assert_same_judgement("kie", record)


# --------------------------------------------------------------------------- a line's top-level fields

json_values = st.recursive(st.none() | st.booleans() | numbers | texts,
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
                           max_leaves=8)
line_texts = st.one_of(
    st.builds(json.dumps, json_values),
    st.builds(lambda d: json.dumps(d), st.dictionaries(st.sampled_from(
        ["id", "ground_truth", "prediction", "answers", "question", "document", "x"]), json_values, max_size=4)),
    st.builds(lambda r: json.dumps(r[1]), records),
    st.builds(lambda r: json.dumps(r[1]), mutated()),
)


@st.composite
def lines(draw: st.DrawFn) -> str:
    """JSON lines, some cut short, spliced with NaN or bad escapes, or with a character changed."""
    text = draw(line_texts)
    how = draw(st.sampled_from(["as is", "cut", "splice", "change"]))
    if how == "as is" or not text:
        return text
    at = draw(st.integers(0, len(text)))
    if how == "cut":
        return text[:at]
    if how == "splice":
        return text[:at] + draw(st.sampled_from(["NaN", "Infinity", "\\ud800", "\\", '"', ",", "}", " ", "\t", "\x00",
                                                 "\x0c", "1" * 5000, "[" * 1200])) + text[at:]
    return text[:at] + draw(st.characters(codec="utf-8", exclude_categories=("Cs",))) + text[at + 1:]


def outcome(item: Any) -> Any:
    return (str(item.error), item.kind) if isinstance(item, Problem) else item


@PROPERTY
@given(lines())
def test_a_line_is_read_as_pythons_json_reads_it(text: str) -> None:
    assume(text.strip())
    # an integer beyond Python's digits limit inside a field is left to validation by the fast path (below)
    assume("1" * 4301 not in text)
    fast, slow = record_lines.parse_text("f.jsonl", 3, text), record_lines.parse_slowly("f.jsonl", 3, text)
    assert outcome(fast) == outcome(slow)


def test_a_line_with_an_integer_beyond_pythons_digits_limit_is_invalid_json() -> None:
    problem = record_lines.parse_slowly("f.jsonl", 1, '{"id": ' + "1" * 5000 + "}")
    assert outcome(problem) == ("f.jsonl: line 1: invalid JSON: Exceeds the limit (4300 digits) for integer string "
                                "conversion: value has 5000 digits; use sys.set_int_max_str_digits() to increase "
                                "the limit", "invalid JSON")


def test_an_integer_beyond_the_digits_limit_inside_a_field_is_refused_when_validated(tmp_path, capsys) -> None:
    # the fast path reads the top-level fields only; validation then refuses the value, naming line and id
    record = ('{"id": "q0", "answers": ["a"], "prediction": {"answer": "a", "confidence": 0.5}, "evidence": ['
              + "1" * 5000 + "]}")
    path = tmp_path / "big.jsonl"
    path.write_text(record + "\n", encoding="utf-8")
    assert isinstance(record_lines.parse_text(str(path), 1, record), record_lines.Line)
    status, out, err = run_cli(capsys, "score", path)
    assert (status, out) == (1, "")
    assert err.startswith(f"rpa-sim: error: {path}: line 1 (id q0): invalid JSON: number out of range at column ")
    assert err.count("\n") == 1


# --------------------------------------------------------------------------- a whole file


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(lines(), st.builds(lambda r: json.dumps(r[1]), records),
                         # ids that repeat, within a batch and across batches
                         st.builds(lambda r, i: json.dumps({**r[1], "id": i}), records, st.sampled_from("ab"))),
                min_size=1, max_size=12),
       st.sampled_from(["kie", "vqa"]), st.integers(1, 5))
def test_batches_read_what_iterating_reads(tmp_path_factory: pytest.TempPathFactory, texts_: list[str], task: str,
                                           size: int) -> None:
    path = tmp_path_factory.mktemp("data") / "data.jsonl"
    path.write_bytes("".join(text.replace("\n", " ") + "\n" for text in texts_).encode("utf-8", "surrogatepass"))
    try:
        stream = read_records(path, task=task, skip_invalid=True)
    except InputError as exc:
        assume(False)  # no record at all: nothing to compare
        raise AssertionError from exc
    iterated = [as_json(record) for record in _all(stream)]
    iterated_problems = [str(error) for error in stream.skipped]
    batched, problems = [], []
    for batch in stream.batches(size):
        valid, bad, ids = batch.validate()
        repeated = stream.repeated(ids)
        if repeated:  # as evaluation does: the batch again, the lines that repeat an id as their problems
            valid, bad, _ = batch.repeating(repeated).validate()
        stream.tally(bad, len(valid))
        batched += [as_json(record) for record in valid]
        problems += [str(problem.error) for problem in bad]
    assert (batched, problems) == (iterated, iterated_problems)
    assert stream.count == len(iterated)


def _all(stream: Any) -> list[Any]:
    records_read = []
    try:
        for record in stream:
            records_read.append(record)
    except InputError:
        pass  # no valid records: the problems are still compared
    return records_read


def test_a_fast_read_record_is_a_light_struct(tmp_path: Path) -> None:
    # the evaluation path reads valid canonical records without pydantic
    path = tmp_path / "data.jsonl"
    record = {"id": "q", "answers": ["1"], "prediction": {"answer": "1", "confidence": 0.5}}
    path.write_text(json.dumps(record) + "\n" + json.dumps({**record, "id": "p", "source": "x"}) + "\n")
    (batch,) = read_records(path).batches(10)
    valid, problems, _ = batch.validate()
    assert problems == []
    assert [type(r).__name__ for r in valid] == ["_FastVQARecord", "VQARecord"]  # an unknown field: the model
    assert not math.isnan(valid[0].prediction.confidence)
