"""Outcome tables as Parquet files: stage 1's result kept, so that stage 2 never evaluates the records again.

``rpa-sim evaluate DATA --out TABLE.parquet`` writes an outcome table with
:func:`write_table`; every command that takes DATA reads one back with
:func:`read_table` and prints what it prints for the records the table came
from, byte for byte, or refuses. The file is an ordinary Parquet file (one
row per prediction unit, plain columns, the rest in the schema metadata under
the key ``rpa_sim``); ``docs/formats.md`` ("Outcome tables (Parquet)")
describes every column. The same table and source give the same bytes: the
writer's settings are fixed and nothing in the file depends on time or place.

This module knows no task: each table type says how it lies in a file (its
``file_layout``: columns, kinds of rows, settings and counts) and turns
itself into Arrow columns and back (``to_arrow``, ``from_arrow``; the
helpers are in :mod:`rpa_sim.evaluate.outcomes.arrow`). KIE rows, for
instance, come in three kinds (:data:`rpa_sim.evaluate.outcomes.kie.KIE_KINDS`).

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

import functools
import json
import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal, cast

import msgspec
import numpy as np

from rpa_sim.common.errors import InputError, escaped, shown
from rpa_sim.common.files import atomic_output
from rpa_sim.evaluate.outcomes.arrow import QUOTE, FileRows, arrow_type
from rpa_sim.evaluate.outcomes.protocol import OutcomeTable
from rpa_sim.evaluate.outcomes.tasks import table_type
from rpa_sim.records.signal_names import check_signal_names
from rpa_sim.version import __version__

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["FORMAT", "FORMAT_VERSION", "TableMetadata", "SourceFile", "is_table_file", "write_table", "read_info",
           "read_table"]

#: The ``format`` of the metadata, which tells an rpa-sim outcome table from any other Parquet file.
FORMAT: Final = "rpa-sim outcome table"
#: The version of the layout below; a file of another version is refused, never guessed at.
FORMAT_VERSION = 1
METADATA_KEY = b"rpa_sim"
PARQUET_MAGIC = b"PAR1"
SUFFIX = ".parquet"
Task = Literal["kie", "vqa"]

# Writer settings, fixed so that equal tables give equal bytes (pyarrow's version sets created_by).
_ROW_GROUP_ROWS = 1 << 20
_PARQUET_OPTIONS: dict[str, Any] = {
    "version": "2.6", "data_page_version": "1.0", "compression": "zstd", "compression_level": 3,
    "data_page_size": 1 << 20, "dictionary_pagesize_limit": 1 << 20, "write_statistics": True,
    "use_byte_stream_split": False, "write_page_index": False, "write_page_checksum": False, "store_schema": True}

# the evaluate option of each setting a user chooses
_OPTIONS = {"value_match": "--value-match", "alpha": "--alpha"}
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


class TableMetadata(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
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
    signals : list of str
        The named signals, each a column ``signal.NAME`` (none in files written before signals).
    """

    format: Literal["rpa-sim outcome table"]
    format_version: int
    rpa_sim_version: str
    task: Task
    settings: dict[str, str | float]
    fields: tuple[str, ...]
    rows: dict[str, _Count]
    counts: dict[str, _Count]
    sources: tuple[SourceFile, ...]
    skipped: _Count
    signals: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        table = table_type(self.task)
        layout = table.file_layout
        for part, wanted in (("settings", layout.settings), ("rows", layout.row_kinds), ("counts", layout.counts)):
            have = tuple(getattr(self, part))
            if sorted(have) != sorted(wanted):
                raise ValueError(f"{part} of a {self.task} table must name {list(wanted)}, got "
                                 f"{shown(list(have), quote=QUOTE)}")
        table.check_settings(self.settings)
        for part in ("fields", "signals"):
            names = getattr(self, part)
            if len(set(names)) != len(names):
                repeated = next(name for index, name in enumerate(names) if name in names[:index])
                raise ValueError(f"{part} names {shown(repeated, quote=QUOTE)} twice")
        check_signal_names(self.signals)

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
    import hashlib  # noqa: PLC0415  (a table's writer needs it, its readers not)

    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
    return SourceFile(name=Path(path).name, bytes=size, sha256=digest.hexdigest())


def _metadata(table: OutcomeTable, sources: Iterable[str | os.PathLike[str]], skipped: int) -> TableMetadata:
    return TableMetadata(format=FORMAT, format_version=FORMAT_VERSION, rpa_sim_version=__version__,
                         task=cast(Task, table.task), settings=table.evaluation_settings(), fields=table.field_names,
                         rows=table.row_counts(), counts=table.corpus_counts(),
                         sources=tuple(_source_file(source) for source in sources), skipped=skipped,
                         signals=tuple(table.signals))


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


def write_table(table: OutcomeTable, path: str | os.PathLike[str], *,
                source: Sequence[str | os.PathLike[str]] = (), skipped: int = 0) -> None:
    """Write an outcome table to ``path`` as Parquet, atomically; equal tables and sources give equal bytes.

    Parameters
    ----------
    table : OutcomeTable
        The table (:class:`~rpa_sim.evaluate.outcomes.KIEOutcomes` or
        :class:`~rpa_sim.evaluate.outcomes.VQAOutcomes`), with its evaluation settings.
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
    arrays = table.to_arrow()
    columns = table.file_layout.with_signals(metadata.signals).columns
    schema = pa.schema([pa.field(c.name, arrow_type(c.type)) for c in columns],
                       metadata={METADATA_KEY: json.dumps(msgspec.to_builtins(metadata), sort_keys=True)})
    data = pa.Table.from_arrays([arrays[c.name] for c in columns], schema=schema)
    with atomic_output(Path(path), compress=False) as out:
        pq.write_table(data, out, row_group_size=_ROW_GROUP_ROWS,
                       use_dictionary=[c.name for c in columns if c.dictionary], **_PARQUET_OPTIONS)


# --------------------------------------------------------------------------- reading


def _footer(path: Path) -> tuple[pa.Schema, Any]:
    """The Arrow schema and the Parquet metadata of the file ``path``: its footer, read and closed.

    Read once per file: a command that asks for its metadata, then its rows, reads the footer once (the file is
    known by its size and modification time, so a file written again meanwhile is read again).
    """
    try:
        status = path.stat()
    except OSError:
        return _read_footer(path)
    if not stat.S_ISREG(status.st_mode):
        return _read_footer(path)
    return _footer_of(path, status.st_size, status.st_mtime_ns, status.st_ino)


@functools.lru_cache(maxsize=16)
def _footer_of(path: Path, size: int, modified: int, inode: int) -> tuple[pa.Schema, Any]:
    return _read_footer(path)


def _read_footer(path: Path) -> tuple[pa.Schema, Any]:
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
        raise InputError(f"outcome table format version {shown(data.get('format_version'), quote=QUOTE)}, and "
                         f"rpa-sim {__version__} reads version {FORMAT_VERSION}; {rerun}", path=str(path))
    if data.get("rpa_sim_version") != __version__:
        raise InputError(f"written by rpa-sim {shown(data.get('rpa_sim_version'), quote=QUOTE)}, and this is "
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
               ) -> OutcomeTable:
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
    table = table_type(metadata.task)
    layout = table.file_layout.with_signals(metadata.signals)
    columns = tuple(column for column in layout.columns if column.name in schema.names or not column.optional)
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
    return table.from_arrow(FileRows(path, data, layout, metadata))

