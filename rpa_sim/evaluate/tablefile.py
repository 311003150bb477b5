"""Outcome tables as Parquet files: stage 1's result kept, so that stage 2 never evaluates the records again.

``rpa-sim evaluate DATA --out TABLE.parquet`` writes an outcome table with
:func:`write_table`; every command that takes DATA reads one back with
:func:`read_table` and prints what it prints for the records the table came
from, byte for byte, or refuses. The file is an ordinary Parquet file (one
row per prediction unit, plain columns, the rest in the schema metadata under
the key ``rpa_sim``); ``docs/formats.md`` ("Outcome tables (Parquet)")
describes every column. The same table and source give the same bytes: the
writer's settings are fixed and nothing in the file depends on time or place.

KIE rows come in three kinds, in this order: one ``document`` row per
document (its KIEval counts), one ``predicted`` row per predicted entity, one
``missed`` row per missed ground-truth entity (a KIEval addition). Document
indices are local to a file, so tables of several files concatenate with
:func:`rpa_sim.evaluate.outcomes.concat_tables`, which re-bases them.

Examples
--------
>>> import tempfile
>>> from rpa_sim.evaluate.outcomes import evaluate_kie
>>> from rpa_sim.records.models import KIERecord
>>> record = KIERecord.model_validate({"id": "r1",
...     "ground_truth": {"entities": [{"key": "total", "value": "10.00"}, {"key": "date", "value": "1.1"}]},
...     "prediction": {"entities": [{"key": "total", "value": "10.0", "confidence": 0.4}]}})
>>> folder = tempfile.TemporaryDirectory()
>>> path = Path(folder.name) / "receipts.parquet"
>>> write_table(evaluate_kie([record]), path)
>>> table = read_table(path, expect={"task": "kie", "value_match": "exact"})
>>> table.outcome.tolist(), table.keys, table.counts.additions
([1], ('total', 'date'), 1)
>>> info = read_info(path)
>>> info.task, info.settings, info.rows["missed"]
('kie', {'value_match': 'exact'}, 1)
>>> folder.cleanup()
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import msgspec
import numpy as np

from rpa_sim import __version__
from rpa_sim.common.errors import InputError, escaped, shown
from rpa_sim.common.files import atomic_output
from rpa_sim.evaluate.metrics.kieval import OUTCOME_NAMES, KIEvalCounts
from rpa_sim.evaluate.outcomes import ANSWER_TYPES, KIEOutcomes, VQAOutcomes

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["FORMAT", "FORMAT_VERSION", "TableMetadata", "SourceFile", "is_table_file", "write_table", "read_info",
           "read_table"]

#: The ``format`` of the metadata, which tells an rpa-sim outcome table from any other Parquet file.
FORMAT = "rpa-sim outcome table"
#: The version of the layout below; a file of another version is refused, never guessed at.
FORMAT_VERSION = 1
METADATA_KEY = b"rpa_sim"
PARQUET_MAGIC = b"PAR1"
SUFFIX = ".parquet"
_STRINGS = np.dtypes.StringDType()

#: The kinds of KIE rows, in the order they come in a file.
KIE_KINDS = ("document", "predicted", "missed")
#: A KIE row's ``outcome``: the KIEval label of a predicted entity, ``addition`` for a missed one.
KIE_OUTCOMES = (*OUTCOME_NAMES, "addition")
#: The per-document KIEval counts that are columns; ``documents`` is 1 per document row, so it is the row.
DOCUMENT_COUNTS = tuple(name for name in KIEvalCounts.field_names() if name != "documents")

# Writer settings, fixed so that equal tables give equal bytes (pyarrow's version sets created_by).
_ROW_GROUP_ROWS = 1 << 20
_PARQUET_OPTIONS: dict[str, Any] = {
    "version": "2.6", "data_page_version": "1.0", "compression": "zstd", "compression_level": 3,
    "data_page_size": 1 << 20, "dictionary_pagesize_limit": 1 << 20, "write_statistics": True,
    "use_byte_stream_split": False, "write_page_index": False, "write_page_checksum": False, "store_schema": True}


@dataclass(frozen=True)
class _Column:
    """A column of the file: its Arrow type, the row kinds that have a value, and whether those may be null."""

    name: str
    # as Arrow prints it; :data:`_ARROW_TYPES` names its pyarrow factory
    type: Literal["string", "int32", "int64", "double"]
    kinds: tuple[str, ...]
    nullable: bool = False
    # repeated strings (keys, kinds, labels) are dictionary-encoded in the file
    dictionary: bool = False
    # read as indices into a list of names (the fields, the kinds, the labels), not as strings
    coded: bool = False
    # absent from files written before the column was added: such files still read, with its default
    optional: bool = False
    # the values a number column may hold where it has one (NaN never: "no value" is null)
    bounds: tuple[float, float] = (-sys.float_info.max, sys.float_info.max)

    def expected(self) -> str:
        """What the column's values must be, for a message: ``a number in [0, 1]``, ``a finite number``, ..."""
        low, high = self.bounds
        number = "a whole number" if self.type.startswith("int") else "a number"
        if high == 1.0:
            text = f"{number} in [{low:g}, {high:g}]"
        elif high == math.inf:
            text = f"{number} at least {low:g}"
        else:
            text = f"a finite number{'' if low < 0 else f' at least {low:g}'}"
        return text + (" or null" if self.nullable else "")


_UNIT = (0.0, 1.0)
_AT_LEAST_0 = (0.0, math.inf)
_FINITE_AT_LEAST_0 = (0.0, sys.float_info.max)
_ARROW_TYPES = {"string": "string", "int32": "int32", "int64": "int64", "double": "float64"}
_NUMPY_TYPES = {"int32": np.int32, "int64": np.int64, "double": np.float64}
_ENTITY_ROWS = ("predicted", "missed")
_KIE_COLUMNS = (
    _Column("kind", "string", KIE_KINDS, dictionary=True, coded=True),
    _Column("document", "int32", KIE_KINDS),
    _Column("document_id", "string", KIE_KINDS, dictionary=True, coded=True),
    _Column("key", "string", _ENTITY_ROWS, dictionary=True, coded=True),
    _Column("group", "int32", ("predicted",), bounds=_AT_LEAST_0),
    _Column("confidence", "double", ("predicted",), bounds=_UNIT),
    _Column("grounding", "double", ("predicted",), nullable=True, bounds=_UNIT),
    _Column("outcome", "string", _ENTITY_ROWS, dictionary=True, coded=True),
    _Column("similarity", "double", ("predicted",), bounds=_UNIT),
    _Column("value", "string", ("predicted",), dictionary=True),
    _Column("correction", "string", ("predicted",), dictionary=True),
    *(_Column(name, "int64", ("document",), bounds=_AT_LEAST_0) for name in DOCUMENT_COUNTS),
    _Column("document_type", "string", ("document",), dictionary=True, optional=True),
    _Column("received_at", "double", ("document",), nullable=True, optional=True),
    _Column("review_seconds", "double", ("document",), nullable=True, optional=True, bounds=_FINITE_AT_LEAST_0),
)
_QUESTION = ("question",)
_VQA_COLUMNS = (
    _Column("question_id", "string", _QUESTION),
    _Column("question_type", "string", _QUESTION, dictionary=True, coded=True),
    _Column("answer_type", "string", _QUESTION, dictionary=True, coded=True),
    _Column("confidence", "double", _QUESTION, bounds=_UNIT),
    _Column("grounding", "double", _QUESTION, nullable=True, bounds=_UNIT),
    _Column("anls", "double", _QUESTION, bounds=_UNIT),
    _Column("accuracy", "double", _QUESTION, bounds=_UNIT),
    _Column("match", "double", _QUESTION, bounds=_UNIT),
    _Column("smudge_grounding", "double", _QUESTION, nullable=True, bounds=_UNIT),
    _Column("distance", "double", _QUESTION, nullable=True, bounds=_UNIT),
    _Column("evidence_iou", "double", _QUESTION, nullable=True, bounds=_UNIT),
    # a difference of two huge numbers may overflow to inf
    _Column("absolute_deviation", "double", _QUESTION, nullable=True, bounds=_AT_LEAST_0),
    _Column("prediction", "string", _QUESTION),
    _Column("answer", "string", _QUESTION),
    _Column("document_type", "string", _QUESTION, dictionary=True, optional=True),
    _Column("received_at", "double", _QUESTION, nullable=True, optional=True),
    _Column("review_seconds", "double", _QUESTION, nullable=True, optional=True, bounds=_FINITE_AT_LEAST_0),
)
_COLUMNS = {"kie": _KIE_COLUMNS, "vqa": _VQA_COLUMNS}
_ROW_KINDS = {"kie": KIE_KINDS, "vqa": _QUESTION}
_SETTINGS = {"kie": ("value_match",), "vqa": ("alpha", "weight", "threshold")}
_COUNTS = {"kie": KIEvalCounts.field_names(), "vqa": ("questions",)}
# the evaluate option of each setting a user chooses
_OPTIONS = {"value_match": "--value-match", "alpha": "--alpha"}
# values in messages are quoted as Python writes its strings, as the rest of the messages are
_QUOTE = "'"
# the longest text a message quotes from pyarrow or msgspec
_MESSAGE_LIMIT = 300


# --------------------------------------------------------------------------- metadata


# msgspec structs rather than pydantic models: reading a table (score, sweep) then imports no pydantic
# a count the file's int64 columns can hold
_Count = Annotated[int, msgspec.Meta(ge=0, le=np.iinfo(np.int64).max)]


class SourceFile(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A file a table was evaluated from: its name (without folders), size and SHA-256 of its bytes."""

    name: str
    bytes: _Count
    sha256: Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{64}$")]


class TableMetadata(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What an outcome table file says about itself besides its columns (the ``rpa_sim`` schema metadata).

    Attributes
    ----------
    format, format_version, rpa_sim_version
        What wrote the file; :func:`read_table` refuses other versions.
    task : {"kie", "vqa"}
    settings : dict
        The evaluation settings: KIE ``value_match``; VQA ``alpha``, ``weight``, ``threshold``.
    fields : list of str
        The keys (KIE) or question types (VQA) in the table's order, which
        is the order of first appearance in the records.
    rows : dict of str to int
        The rows of each kind: KIE ``document``, ``predicted``, ``missed``; VQA ``question``.
    counts : dict of str to int
        The corpus counts: KIE the :class:`~rpa_sim.evaluate.metrics.kieval.KIEvalCounts`; VQA ``questions``.
    sources : list of SourceFile
        The records file, then the predictions file when there was one.
    skipped : int
        The records skipped (``--skip-invalid``) when the table was evaluated.
    """

    format: Literal["rpa-sim outcome table"]
    format_version: int
    rpa_sim_version: str
    task: Literal["kie", "vqa"]
    settings: dict[str, str | float]
    fields: tuple[str, ...]
    rows: dict[str, _Count]
    counts: dict[str, _Count]
    sources: tuple[SourceFile, ...]
    skipped: _Count

    def __post_init__(self) -> None:
        for part, wanted in (("settings", _SETTINGS[self.task]), ("rows", _ROW_KINDS[self.task]),
                             ("counts", _COUNTS[self.task])):
            have = tuple(getattr(self, part))
            if sorted(have) != sorted(wanted):
                raise ValueError(f"{part} of a {self.task} table must name {list(wanted)}, got "
                                 f"{shown(list(have), quote=_QUOTE)}")
        if self.task == "kie" and self.settings["value_match"] not in ("exact", "normalized"):
            raise ValueError(f"settings.value_match must be 'exact' or 'normalized', got "
                             f"{shown(self.settings['value_match'], quote=_QUOTE)}")
        if self.task == "vqa" and not all(isinstance(value, float) and math.isfinite(value)
                                          for value in self.settings.values()):
            raise ValueError(f"settings of a vqa table must be finite numbers, got {shown(self.settings, quote=_QUOTE)}")
        if len(set(self.fields)) != len(self.fields):
            repeated = next(name for index, name in enumerate(self.fields) if name in self.fields[:index])
            raise ValueError(f"fields names {shown(repeated, quote=_QUOTE)} twice")

    def check(self, path: str | os.PathLike[str], *, task: str | None = None, **settings: Any) -> None:
        """Refuse the table unless it is of ``task`` (when given) and was evaluated with ``settings``.

        Settings the table's task does not have (``alpha`` for KIE,
        ``value_match`` for VQA) are ignored, as evaluation ignores them.

        Raises
        ------
        InputError
            Naming the file, what it holds, and the ``rpa-sim evaluate``
            option that makes the table asked for.
        """
        if task is not None and task != self.task:
            raise InputError(f"is an outcome table of {self.task.upper()} data, not {task.upper()}", path=str(path))
        for name, wanted in settings.items():
            if name in self.settings and self.settings[name] != wanted:
                raise InputError(f"evaluated with {name} {self.settings[name]}; re-run rpa-sim evaluate with "
                                 f"{_OPTIONS.get(name, name)} {wanted}", path=str(path))


def _source_file(path: str | os.PathLike[str]) -> SourceFile:
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
    return SourceFile(name=Path(path).name, bytes=size, sha256=digest.hexdigest())


def _metadata(table: KIEOutcomes | VQAOutcomes, sources: Iterable[str | os.PathLike[str]],
              skipped: int) -> TableMetadata:
    if isinstance(table, KIEOutcomes):
        settings: dict[str, str | float] = {"value_match": table.value_match}
        rows = {"document": table.documents, "predicted": len(table), "missed": len(table.addition_document)}
        counts = dict(zip(KIEvalCounts.field_names(), table.counts.as_tuple()))
    else:
        settings = {"alpha": float(table.alpha), "weight": float(table.weight), "threshold": float(table.threshold)}
        rows = {"question": len(table)}
        counts = {"questions": len(table)}
    return TableMetadata(format=FORMAT, format_version=FORMAT_VERSION, rpa_sim_version=__version__,
                         task=table.task, settings=settings, fields=table.field_names, rows=rows, counts=counts,
                         sources=tuple(_source_file(source) for source in sources), skipped=skipped)


# --------------------------------------------------------------------------- recognising a table


def is_table_file(path: str | os.PathLike[str]) -> bool:
    """Whether DATA names an outcome table: its name ends in ``.parquet``, or it is a file starting with ``PAR1``.

    The name alone decides for a file that does not exist (so its error is a
    table's), the content for any other name (so a table renamed keeps working).

    Examples
    --------
    >>> is_table_file("missing.parquet"), is_table_file("missing.jsonl")
    (True, False)
    """
    path = Path(path)
    if path.name.lower().endswith(SUFFIX):
        return True
    try:
        if not path.is_file():  # opening a pipe would wait for a writer; the records reader refuses it
            return False
        with open(path, "rb") as handle:
            return handle.read(len(PARQUET_MAGIC)) == PARQUET_MAGIC
    except OSError:
        return False


# --------------------------------------------------------------------------- writing


def write_table(table: KIEOutcomes | VQAOutcomes, path: str | os.PathLike[str], *,
                source: Sequence[str | os.PathLike[str]] = (), skipped: int = 0) -> None:
    """Write an outcome table to ``path`` as Parquet, atomically; equal tables and sources give equal bytes.

    Parameters
    ----------
    table : KIEOutcomes or VQAOutcomes
        The table, with its evaluation settings.
    path : path-like
        The file to write; missing folders are created.
    source : sequence of path-like, default=()
        The files the table was evaluated from (the records, then the
        predictions file when there is one): their names, sizes and SHA-256
        go into the metadata.
    skipped : int, default=0
        How many records evaluation skipped (``--skip-invalid``), for ``score``'s ``skipped``.
    """
    import pyarrow as pa  # noqa: PLC0415
    import pyarrow.parquet as pq  # noqa: PLC0415

    metadata = _metadata(table, source, skipped)
    task = table.task
    arrays = _kie_arrays(table) if isinstance(table, KIEOutcomes) else _vqa_arrays(table)
    columns = _COLUMNS[task]
    schema = pa.schema([pa.field(c.name, getattr(pa, _ARROW_TYPES[c.type])()) for c in columns],
                       metadata={METADATA_KEY: json.dumps(msgspec.to_builtins(metadata), sort_keys=True)})
    data = pa.Table.from_arrays([arrays[c.name] for c in columns], schema=schema)
    with atomic_output(Path(path), compress=False) as out:
        pq.write_table(data, out, row_group_size=_ROW_GROUP_ROWS,
                       use_dictionary=[c.name for c in columns if c.dictionary], **_PARQUET_OPTIONS)


def _strings(values: np.ndarray) -> pa.Array:
    import pyarrow as pa  # noqa: PLC0415

    return pa.array(values.astype(object), type=pa.string())


def _named(codes: np.ndarray, names: Sequence[str]) -> pa.Array:
    """Each code's name as a string column."""
    import pyarrow as pa  # noqa: PLC0415

    return pa.DictionaryArray.from_arrays(pa.array(codes, type=pa.int32()),
                                          pa.array(list(names), type=pa.string())).dictionary_decode()


def _numbers(values: np.ndarray) -> pa.Array:
    """A float column; NaN (unknown, undefined) is written as null, so that SQL aggregates skip it."""
    import pyarrow as pa  # noqa: PLC0415

    return pa.array(values, type=pa.float64(), from_pandas=True)


def _kie_arrays(table: KIEOutcomes) -> dict[str, pa.Array]:
    import pyarrow as pa  # noqa: PLC0415

    documents, predicted, missed = table.documents, len(table), len(table.addition_document)

    def spread(type_name: str, *parts: pa.Array | int) -> pa.Array:
        """One column from its part in each kind of row: values, or a count of null rows."""
        type_ = getattr(pa, _ARROW_TYPES[type_name])()
        return pa.concat_arrays([pa.nulls(part, type_) if isinstance(part, int) else part for part in parts])

    document = np.concatenate([np.arange(documents, dtype=np.int32), table.document, table.addition_document])
    kind = np.repeat(np.arange(len(KIE_KINDS), dtype=np.int32), [documents, predicted, missed])
    outcome = np.concatenate([table.outcome.astype(np.int32),
                              np.full(missed, KIE_OUTCOMES.index("addition"), dtype=np.int32)])
    key = np.concatenate([table.key, table.addition_key])
    arrays = {
        "kind": _named(kind, KIE_KINDS),
        "document": pa.array(document, type=pa.int32()),
        "document_id": _named(document, table.document_ids.tolist()),
        "key": spread("string", documents, _named(key, table.keys)),
        "group": spread("int32", documents, pa.array(table.group, type=pa.int32()), missed),
        "confidence": spread("double", documents, _numbers(table.confidence), missed),
        "grounding": spread("double", documents, _numbers(table.grounding), missed),
        "outcome": spread("string", documents, _named(outcome, KIE_OUTCOMES)),
        "similarity": spread("double", documents, _numbers(table.similarity), missed),
        "value": spread("string", documents, _strings(table.value), missed),
        "correction": spread("string", documents, _strings(table.correction), missed),
    }
    for index, name in enumerate(KIEvalCounts.field_names()):
        if name in DOCUMENT_COUNTS:
            arrays[name] = spread("int64", pa.array(table.document_counts[:, index], type=pa.int64()),
                                  predicted + missed)
    arrays["document_type"] = spread("string", _named(table.document_type, table.document_types), predicted + missed)
    for name in ("received_at", "review_seconds"):
        arrays[name] = spread("double", _numbers(getattr(table, name)), predicted + missed)
    return arrays


def _vqa_arrays(table: VQAOutcomes) -> dict[str, pa.Array]:
    arrays = {"question_id": _strings(table.question_ids),
              "question_type": _named(table.question_type, table.question_types),
              "answer_type": _named(table.answer_type.astype(np.int32), ANSWER_TYPES),
              "prediction": _strings(table.prediction), "answer": _strings(table.answer),
              "document_type": _named(table.document_type, table.document_types)}
    for column in _VQA_COLUMNS:
        if column.type == "double":
            arrays[column.name] = _numbers(getattr(table, column.name))
    return arrays


# --------------------------------------------------------------------------- reading


def _footer(path: Path) -> tuple[pa.Schema, Any]:
    """The Arrow schema and the Parquet metadata of the file ``path``: its footer, read and closed."""
    import pyarrow as pa  # noqa: PLC0415
    import pyarrow.parquet as pq  # noqa: PLC0415

    if path.is_dir():
        raise InputError("is a folder, not an outcome table file", path=str(path))
    if not path.exists():
        raise InputError("no such file", path=str(path))
    if not path.is_file():  # opening a named pipe would wait for a writer
        raise InputError("is not a regular file (a pipe or a device?)", path=str(path))
    try:
        # the file is opened here, so that it is closed even when it is not Parquet
        source = pa.OSFile(str(path))
    except OSError as error:
        raise InputError(f"cannot be read: {error.strerror or _first_line(error)}", path=str(path)) from None
    try:
        with source, pq.ParquetFile(source) as parquet:
            return parquet.schema_arrow, parquet.metadata
    except (pa.ArrowException, OSError, ValueError) as error:
        # a damaged footer fails in pyarrow's Thrift decoder (an OSError) or in decoding its names (a ValueError)
        raise InputError(f"not a Parquet file, or a truncated one ({_first_line(error)})", path=str(path)) from None


def _first_line(error: Exception) -> str:
    """The first line of a library's message, escaped and shortened: it may quote bytes of a damaged file."""
    text = str(error).strip()
    return escaped(text.splitlines()[0], _MESSAGE_LIMIT) if text else type(error).__name__


def _parse_metadata(path: Path, schema_metadata: Mapping[bytes, bytes] | None) -> TableMetadata:
    not_ours = "a Parquet file, but not an rpa-sim outcome table ({}); make one with rpa-sim evaluate"
    raw = (schema_metadata or {}).get(METADATA_KEY)
    if raw is None:
        raise InputError(not_ours.format("no rpa_sim metadata"), path=str(path))
    try:
        # msgspec, not json.loads, which takes NaN and Infinity that no JSON has (nor msgspec's typed decoding)
        data = msgspec.json.decode(raw)
    except msgspec.DecodeError as error:
        raise InputError(f"bad rpa_sim metadata: not JSON ({_first_line(error)})", path=str(path)) from None
    except msgspec.ValidationError as error:  # a number beyond a float's range
        raise InputError(f"bad rpa_sim metadata: {_where_first(str(error))}", path=str(path)) from None
    except RecursionError:
        raise InputError("bad rpa_sim metadata: nested too deeply", path=str(path)) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InputError(not_ours.format(f"its rpa_sim metadata has no format {FORMAT!r}"), path=str(path))
    rerun = "re-run rpa-sim evaluate on its records"
    if data.get("format_version") != FORMAT_VERSION:
        raise InputError(f"outcome table format version {shown(data.get('format_version'), quote=_QUOTE)}, and "
                         f"rpa-sim {__version__} reads version {FORMAT_VERSION}; {rerun}", path=str(path))
    if data.get("rpa_sim_version") != __version__:
        raise InputError(f"written by rpa-sim {shown(data.get('rpa_sim_version'), quote=_QUOTE)}, and this is "
                         f"rpa-sim {__version__}; {rerun}", path=str(path))
    try:
        return msgspec.convert(data, type=TableMetadata)
    except msgspec.ValidationError as error:
        raise InputError(f"bad rpa_sim metadata: {_where_first(str(error))}", path=str(path)) from None


def _where_first(message: str) -> str:
    """msgspec's ``problem - at `$.a.b` `` as ``a.b: problem`` (the form of every other validation message).

    >>> _where_first("Expected `int` >= 0 - at `$.skipped`"), _where_first("settings must name ['alpha']")
    ('skipped: Expected `int` >= 0', "settings must name ['alpha']")
    """
    problem, at, where = message.rpartition(" - at `$")
    if at:
        message = f"{where.rstrip('`').lstrip('.')}: {problem}"
    # msgspec quotes what it found (a key, an enum value) raw and whole
    return escaped(message, _MESSAGE_LIMIT)


def read_info(path: str | os.PathLike[str]) -> TableMetadata:
    """The metadata of the outcome table file ``path``, from its footer alone (quick at any size).

    Raises
    ------
    InputError
        When ``path`` is not a Parquet file, or one without valid rpa-sim
        metadata, or one written by another rpa-sim version or format version.
    """
    path = Path(path)
    schema, _ = _footer(path)
    return _parse_metadata(path, schema.metadata)


def read_table(path: str | os.PathLike[str], *, expect: Mapping[str, Any] | None = None
               ) -> KIEOutcomes | VQAOutcomes:
    """Read an outcome table file written by :func:`write_table`: the table evaluation gave, exactly.

    Parameters
    ----------
    path : path-like
        The ``.parquet`` file.
    expect : mapping, optional
        What the caller needs: ``task`` (None for either) and evaluation
        settings (``value_match``, ``alpha``); a table that differs is
        refused (:meth:`TableMetadata.check`), never silently reused.

    Raises
    ------
    InputError
        Naming the file and the problem: not Parquet or truncated, not an
        rpa-sim table (metadata missing or bad, a column missing or of
        another type, rows that contradict the metadata), another version,
        another task or other settings than expected.
    """
    import pyarrow as pa  # noqa: PLC0415
    import pyarrow.parquet as pq  # noqa: PLC0415

    path = Path(path)
    schema, footer = _footer(path)
    metadata = _parse_metadata(path, schema.metadata)
    metadata.check(path, **dict(expect or {}))
    columns = tuple(column for column in _COLUMNS[metadata.task]
                    if column.name in schema.names or not column.optional)
    for column in columns:
        if column.name not in schema.names:
            raise InputError(f"not an rpa-sim outcome table: no column {column.name!r}", path=str(path))
        if len(schema.get_all_field_indices(column.name)) > 1:
            raise InputError(f"not a valid rpa-sim outcome table: two columns are named {column.name!r}",
                             path=str(path))
        found = str(schema.field(column.name).type)
        if found != column.type:
            raise InputError(f"column {column.name!r} is of type {found}, expected {column.type}", path=str(path))
    try:
        # the columns read as codes come as their dictionary pages and indices, never as a string per row
        with (pa.OSFile(str(path)) as source,
              pq.ParquetFile(source, metadata=footer, read_dictionary=[c.name for c in columns if c.coded]) as reader):
            data = reader.read(columns=[c.name for c in columns], use_threads=True)
    except (pa.ArrowException, OSError, ValueError) as error:
        raise InputError(f"cannot be read: {_first_line(error)}", path=str(path)) from None
    rows = _Rows(path, data, metadata)
    return _kie_table(rows) if metadata.task == "kie" else _vqa_table(rows)


class _Rows:
    """The columns of a file, checked against the metadata, sliced by row kind."""

    def __init__(self, path: Path, data: pa.Table, metadata: TableMetadata) -> None:
        self.path, self.data, self.metadata = path, data, metadata
        present = [column for column in _COLUMNS[metadata.task] if column.name in data.column_names]
        self.spec = {column.name: column for column in present}
        self.types = {column.name: column.type for column in present}
        kinds = _ROW_KINDS[metadata.task]
        counts = [metadata.rows[kind] for kind in kinds]
        if data.num_rows != sum(counts):
            self.refuse(f"has {data.num_rows} rows, and its metadata says {sum(counts)}")
        bounds = np.cumsum([0, *counts])
        self.ranges = {kind: (int(bounds[i]), int(bounds[i + 1])) for i, kind in enumerate(kinds)}
        for column in present:
            for kind, (start, stop) in self.ranges.items():
                nulls = data.column(column.name).slice(start, stop - start).null_count
                if kind in column.kinds and nulls and not column.nullable:
                    self.refuse(f"column {column.name!r} has nulls in {kind} rows")
                if kind not in column.kinds and nulls != stop - start:
                    self.refuse(f"column {column.name!r} has values in {kind} rows, which have none")
        if metadata.task == "kie" and not np.array_equal(self.codes("kind", KIE_KINDS),
                                                        np.repeat(np.arange(len(kinds)), counts)):
            self.refuse(f"column 'kind' is not {metadata.rows['document']} document rows, then "
                        f"{metadata.rows['predicted']} predicted rows, then {metadata.rows['missed']} missed rows")

    def refuse(self, problem: str, *, record_id: str | None = None) -> None:
        raise InputError(f"not a valid rpa-sim outcome table: {problem}", path=str(self.path), record_id=record_id)

    def unique_ids(self, name: str, kind: str) -> np.ndarray:
        """The ids of column ``name`` in the rows of ``kind``, refused when one is given twice."""
        ids = _text_values(self.column(name, kind))
        if len(set(ids)) != len(ids):
            first: dict[str, int] = {}
            for row, unit_id in enumerate(ids):
                if first.setdefault(unit_id, row) != row:
                    start = self.ranges[kind][0]
                    self.refuse(f"column {name!r} repeats this id in rows {start + first[unit_id]} and {start + row} "
                                f"(counting from 0): ids are unique", record_id=unit_id)
        return np.array(ids, dtype=_STRINGS)

    def column(self, name: str, *kinds: str) -> pa.ChunkedArray:
        """The rows of ``kinds`` (consecutive) of column ``name``."""
        start, stop = self.ranges[kinds[0]][0], self.ranges[kinds[-1]][1]
        return self.data.column(name).slice(start, stop - start)

    def numbers(self, name: str, *kinds: str, dtype: type = np.float64) -> np.ndarray:
        """A numeric column's rows of ``kinds`` as a (writable) numpy array of ``dtype``; null is NaN.

        Values outside the column's bounds, infinities and NaN (which the
        file writes as null) are refused, naming the first such row.
        """
        stored = _NUMPY_TYPES[self.types[name]]
        column = self.column(name, *kinds)
        values = np.concatenate([np.zeros(0, stored), *(_values(chunk, stored) for chunk in column.chunks)])
        if column.null_count < len(values):
            self._check_bounds(name, kinds[0], column, values)
        return values.astype(dtype)

    def _check_bounds(self, name: str, kind: str, column: pa.ChunkedArray, values: np.ndarray) -> None:
        """Refuse the first value outside the column's bounds (NaN among them); nulls, read as NaN, pass."""
        spec = self.spec[name]
        low, high = spec.bounds
        if column.null_count:
            # a NaN beyond the nulls was written as a value; fmin and fmax skip the nulls' NaN
            fits = np.count_nonzero(np.isnan(values)) == column.null_count
            lowest, highest = np.fmin.reduce(values), np.fmax.reduce(values)
        else:
            fits, lowest, highest = True, values.min(), values.max()
        if fits and low <= lowest and highest <= high:  # NaN fails both comparisons
            return
        valid = np.array([value is not None for value in column.to_pylist()], dtype=bool)
        with np.errstate(invalid="ignore"):
            row = int(np.flatnonzero(valid & ~((values >= low) & (values <= high)))[0])
        self.refuse(f"column {name!r} holds {shown(values[row].item())} in row {self.ranges[kind][0] + row} "
                    f"(counting from 0); expected {spec.expected()}")

    def codes(self, name: str, names: Sequence[str], *kinds: str) -> np.ndarray:
        """A dictionary column's rows of ``kinds`` (every row without), free of nulls, as indices into ``names``."""
        column = self.column(name, *kinds) if kinds else self.data.column(name)
        position = {value: code for code, value in enumerate(names)}
        parts = [np.zeros(0, dtype=np.int32)]
        for chunk in column.chunks:
            # the chunk's few distinct values mapped to ``names``, then each row's index into them
            distinct = chunk.dictionary.to_pylist()
            unknown = [value for value in distinct if value not in position]
            if unknown:
                self.refuse(f"column {name!r} holds {shown(unknown[0], quote=_QUOTE)}, which is not one of "
                            f"{shown(list(names), quote=_QUOTE)}")
            lookup = np.array([position[value] for value in distinct], dtype=np.int32)
            parts.append(lookup[_values(chunk.indices, np.int32)])
        return np.concatenate(parts)

    def strings(self, name: str, *kinds: str) -> np.ndarray:
        return _Text(self.column(name, *kinds))()

    def deferred_strings(self, name: str, *kinds: str) -> _Text:
        """A text column to convert when first read (:class:`~rpa_sim.evaluate.outcomes.DeferredColumn`)."""
        return _Text(self.column(name, *kinds))


    def optional_numbers(self, name: str, kind: str) -> np.ndarray:
        """:meth:`numbers` of one kind of rows; all NaN for an optional column the file lacks (an older file)."""
        if name not in self.types:
            return np.full(self.metadata.rows[kind], np.nan)
        return self.numbers(name, kind)

    def document_types(self, kind: str) -> tuple[tuple[str, ...], np.ndarray]:
        """The ``document_type`` names in order of first appearance, and each row's code (all ``""`` in older files)."""
        rows = self.metadata.rows[kind]
        if "document_type" not in self.types:
            return ("",) if rows else (), np.zeros(rows, dtype=np.int32)
        names, first, codes = np.unique(self.strings("document_type", kind), return_index=True, return_inverse=True)
        order = np.argsort(first)
        rank = np.empty(len(order), dtype=np.int32)
        rank[order] = np.arange(len(order), dtype=np.int32)
        return tuple(names[order].tolist()), rank[codes]


@dataclass(frozen=True)
class _Text:
    """A text column's Arrow data, as numpy strings when called; picklable, so a table read on a Dask worker
    ships its text unconverted."""

    column: pa.ChunkedArray

    def __call__(self) -> np.ndarray:
        return np.array(_text_values(self.column), dtype=_STRINGS)


def _text_values(column: pa.ChunkedArray) -> list[str | None]:
    """A text column's values; a column read as codes is decoded first (``to_pylist`` of codes is 40 times slower)."""
    return [value for chunk in column.chunks
            for value in (chunk.dictionary_decode() if hasattr(chunk, "dictionary") else chunk).to_pylist()]


def _values(chunk: pa.Array, dtype: type) -> np.ndarray:
    """A numeric Arrow array as numpy, NaN where null: a view of its buffers.

    Not ``to_numpy``, whose conversion imports pandas when it is installed (a
    few tenths of a second, more than reading the table).
    """
    if len(chunk) == 0:
        return np.zeros(0, dtype)
    start, stop = chunk.offset, chunk.offset + len(chunk)
    validity, data = chunk.buffers()[:2]
    values = np.frombuffer(data, dtype=dtype)[start:stop]
    if chunk.null_count:
        valid = np.unpackbits(np.frombuffer(validity, dtype=np.uint8), count=stop, bitorder="little")[start:]
        values = np.where(valid.astype(bool), values, np.nan)
    return values


def _kie_table(rows: _Rows) -> KIEOutcomes:
    metadata = rows.metadata
    documents = metadata.rows["document"]
    counts = np.column_stack([rows.numbers(name, "document", dtype=np.int64) if name in DOCUMENT_COUNTS
                              else np.ones(documents, dtype=np.int64) for name in KIEvalCounts.field_names()])
    totals = dict(zip(KIEvalCounts.field_names(), counts.sum(axis=0).tolist()))
    if totals != metadata.counts:
        rows.refuse(f"the document rows' counts add up to {totals}, and its metadata says {metadata.counts}")
    if not np.array_equal(rows.numbers("document", "document", dtype=np.int32), np.arange(documents)):
        rows.refuse("the document rows' column 'document' is not 0, 1, 2, ...")
    document = rows.numbers("document", "predicted", dtype=np.int32)
    addition_document = rows.numbers("document", "missed", dtype=np.int32)
    for name, values in (("predicted", document), ("missed", addition_document)):
        if len(values) and (values[0] < 0 or values[-1] >= documents or np.any(np.diff(values) < 0)):
            rows.refuse(f"the {name} rows' column 'document' is not ascending within 0..{documents - 1}")
    if not np.array_equal(np.bincount(addition_document, minlength=documents),
                          counts[:, KIEvalCounts.field_names().index("additions")]):
        rows.refuse("the missed rows do not match the document rows' additions")
    document_ids = rows.unique_ids("document_id", "document")
    # an entity row belongs to the document of its index: its document_id must say the same
    of_document = rows.codes("document_id", document_ids.tolist(), "predicted", "missed")
    mismatch = np.flatnonzero(of_document != np.concatenate([document, addition_document]))
    if len(mismatch):
        row = int(mismatch[0])
        index = int(np.concatenate([document, addition_document])[row])
        rows.refuse(f"row {documents + row} (counting from 0) has the document_id of document {of_document[row]}, "
                    f"and its column 'document' says {index}", record_id=str(document_ids[index]))
    key = rows.codes("key", metadata.fields, "predicted", "missed")
    outcome = rows.codes("outcome", KIE_OUTCOMES, "predicted", "missed")
    predicted = len(document)
    addition = KIE_OUTCOMES.index("addition")
    if np.any(outcome[:predicted] == addition) or np.any(outcome[predicted:] != addition):
        rows.refuse("the outcome 'addition' belongs to missed rows, and only to them")
    return KIEOutcomes(
        document_ids=document_ids,
        keys=metadata.fields,
        document=document,
        group=rows.numbers("group", "predicted", dtype=np.int32),
        key=key[:predicted],
        confidence=rows.numbers("confidence", "predicted"),
        grounding=rows.numbers("grounding", "predicted"),
        outcome=outcome[:predicted].astype(np.int8),
        similarity=rows.numbers("similarity", "predicted"),
        value=rows.deferred_strings("value", "predicted"),
        correction=rows.deferred_strings("correction", "predicted"),
        addition_document=addition_document,
        addition_key=key[predicted:],
        document_counts=counts,
        **dict(zip(("document_types", "document_type"), rows.document_types("document"))),
        received_at=rows.optional_numbers("received_at", "document"),
        review_seconds=rows.optional_numbers("review_seconds", "document"),
        counts=KIEvalCounts(**metadata.counts),
        value_match=metadata.settings["value_match"],  # type: ignore[arg-type]
    )


def _vqa_table(rows: _Rows) -> VQAOutcomes:
    settings = rows.metadata.settings
    scores = {column.name: rows.optional_numbers(column.name, "question") for column in _VQA_COLUMNS
              if column.type == "double"}
    return VQAOutcomes(
        question_ids=rows.unique_ids("question_id", "question"),
        question_types=rows.metadata.fields,
        question_type=rows.codes("question_type", rows.metadata.fields),
        answer_type=rows.codes("answer_type", ANSWER_TYPES).astype(np.int8),
        prediction=rows.deferred_strings("prediction", "question"),
        answer=rows.deferred_strings("answer", "question"),
        **dict(zip(("document_types", "document_type"), rows.document_types("question"))),
        alpha=float(settings["alpha"]), weight=float(settings["weight"]), threshold=float(settings["threshold"]),
        **scores,
    )
